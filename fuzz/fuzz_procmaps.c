/* fuzz_procmaps.c - libFuzzer target: single /proc/PID/maps lines, parsed and round-tripped. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_procmap(data, len))
		abort();
	return 0;
}
