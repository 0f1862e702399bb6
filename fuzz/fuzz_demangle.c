/* fuzz_demangle.c - libFuzzer target: symbol names, as hostile ELF files may carry them, through
 * the C++ and Rust demanglers. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_demangle(data, len))
		abort();
	return 0;
}
