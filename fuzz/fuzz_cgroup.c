/* fuzz_cgroup.c - libFuzzer target: bt_check_cgroup (see checks.h). */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (bt_check_cgroup(data, len))
		abort();
	return 0;
}
