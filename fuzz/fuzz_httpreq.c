/* fuzz_httpreq.c - libFuzzer target: bt_check_httpreq (see checks.h). */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (bt_check_httpreq(data, len))
		abort();
	return 0;
}
