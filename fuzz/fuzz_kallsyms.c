/* fuzz_kallsyms.c - libFuzzer target: /proc/kallsyms-format buffers, parsed and looked up. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_kallsyms(data, len))
		abort();
	return 0;
}
