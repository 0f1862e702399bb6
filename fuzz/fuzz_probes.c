/* fuzz_probes.c - libFuzzer target: what trace and probe read from files others wrote. The first
 * byte picks the input: an ELF file whose SDT notes are walked (each marker's argument spec
 * parsed), an argument spec alone, or a probe cache file whose lines are parsed. Every result must
 * hold together: registers of pt_regs, sizes of 1 to 8 bytes, strings terminated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elffile.h"
#include "elf/sdt.h"
#include "symsrc/probecache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static void check_args(const char *spec)
{
	struct bt_sdt_arg a[BT_SDT_MAX_ARGS];
	size_t n = 99;
	if (bt_sdt_parse_args(spec, a, BT_SDT_MAX_ARGS, &n) != 0)
		return;
	CHECK(n <= BT_SDT_MAX_ARGS);
	for (size_t i = 0; i < n; i++) {
		CHECK(a[i].loc >= BT_SDT_REG && a[i].loc <= BT_SDT_CONST);
		CHECK(a[i].size == 1 || a[i].size == 2 || a[i].size == 4 || a[i].size == 8);
		CHECK(a[i].loc == BT_SDT_CONST || a[i].reg < 21);
	}
}

static int on_marker(void *ctx, const struct bt_sdt_marker *m)
{
	CHECK(memchr(m->provider, '\0', sizeof(m->provider)) && memchr(m->name, '\0', sizeof(m->name)) &&
	      memchr(m->args, '\0', sizeof(m->args)));
	check_args(m->args);
	(*(int *)ctx)++;
	return 0;
}

static void check_elf(const uint8_t *data, size_t len)
{
	struct bt_elf *e;
	if (bt_elf_open_mem(data, len, &e) != 0)
		return;
	int n = 0;
	bt_sdt_foreach(e, on_marker, &n);
	bt_elf_close(e);
}

static void check_cache(const char *text)
{
	char *copy = strdup(text), *save = NULL;
	CHECK(copy);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct bt_pcache_probe p;
		if (bt_pcache_parse_line(line, &p) != 0)
			continue;
		CHECK(p.group[0] && p.event[0] && p.path[0]);
		CHECK(!strchr(p.group, '/') && !strchr(p.event, ' '));
		CHECK(strlen(p.args) < sizeof(p.args));
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len < 1)
		return 0;
	uint8_t mode = data[0] % 3;
	data++;
	len--;
	if (mode == 0) {
		check_elf(data, len);
		return 0;
	}
	char *text = malloc(len + 1);
	CHECK(text);
	memcpy(text, data, len);
	text[len] = '\0';
	if (mode == 1)
		check_args(text);
	else
		check_cache(text);
	free(text);
	return 0;
}
