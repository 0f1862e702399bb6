/* fuzz_ehtable.c - libFuzzer target: ELF images whose call frame information is compiled into the
 * BPF walker's unwind table (the files of any process buildtrace samples). */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_ehtable(data, len))
		abort();
	return 0;
}
