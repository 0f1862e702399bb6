/* fuzz_buildid.c - libFuzzer target: ELF images through the GNU build-id note reader,
 * and the same bytes read as a hex build-id string. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_buildid(data, len) || bt_check_buildid_hex(data, len))
		abort();
	return 0;
}
