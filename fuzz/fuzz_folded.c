/* fuzz_folded.c - libFuzzer target: folded stack files, parsed, written and parsed again. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_folded(data, len))
		abort();
	return 0;
}
