/* fuzz_symtab.c - libFuzzer target: ELF images opened from memory: layout, debuglink, sections,
 * build-id, the function symbol table with its lookups, and MiniDebugInfo. */
#include "checks.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	/* Broken properties abort inside the checks; an error here is the harness failing. */
	if (bt_check_symtab(data, len))
		abort();
	return 0;
}
