/* fuzz_bidcache.c - libFuzzer target: build-id cache entries (a link target and the stored ELF
 * file) opened, listed and removed. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_bidcache(data, len))
		abort();
	return 0;
}
