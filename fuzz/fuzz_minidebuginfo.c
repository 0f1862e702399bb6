/* fuzz_minidebuginfo.c - libFuzzer target: ELF files embedded as MiniDebugInfo (compressed here,
 * so that mutations reach the embedded file), merged with the binary's .dynsym and loaded. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_minidebuginfo(data, len))
		abort();
	return 0;
}
