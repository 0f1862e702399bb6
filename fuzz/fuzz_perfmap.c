/* fuzz_perfmap.c - libFuzzer target: perf map (/tmp/perf-PID.map) buffers, parsed whole and in pieces, looked up. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_perfmap(data, len))
		abort();
	return 0;
}
