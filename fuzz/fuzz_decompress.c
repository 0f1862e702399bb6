/* fuzz_decompress.c - libFuzzer target: xz, zstd and gzip streams, decompressed under a cap. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_decompress(data, len))
		abort();
	return 0;
}
