/* fuzz_gopclntab.c - libFuzzer target: Go's function table (.gopclntab), every function read and
 * looked up, inline trees read from the input itself. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_gopclntab(data, len))
		abort();
	return 0;
}
