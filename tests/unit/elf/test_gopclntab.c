/* test_gopclntab.c - Go's function table read from stripped Go programs (built here by Debian's
 * golang-go), against the unstripped build's oracles: `go tool nm` for the functions, Go's own DWARF
 * and `go tool objdump` for files, lines and inlined calls; position-independent builds too; and
 * tables cut short or corrupted, which must be refused or read within their bounds. */
#include "testutil.h"
#include "elf/dwarfinfo.h"
#include "elf/elffile.h"
#include "elf/goelf.h"
#include "elf/gopclntab.h"
#include "elf/symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUT_LEN (8 << 20)
#define MAXF 16

static const char *fx(const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) % 4;
	return bt_test_fixture(buf[i], sizeof(buf[i]), name);
}

/* A name as .gopclntab gives it: .symtab's names of assembly functions carry their ABI, and Go's
 * linker (1.18 on) writes type arguments, from the first '[' to the last ']', as "[...]". */
static void plain_name(const char *name, char *out, size_t len)
{
	const char *open = strchr(name, '['), *close = strrchr(name, ']');
	if (open && close > open)
		snprintf(out, len, "%.*s[...]%s", (int)(open - name), name, close + 1);
	else
		snprintf(out, len, "%s", name);
	size_t n = strlen(out);
	if (n > 5 && !strcmp(out + n - 5, ".abi0"))
		out[n - 5] = '\0';
}

/* Every function the stripped program's table names is a text symbol of the unstripped build, at the
 * same address, of its size (up to the next one's alignment), under the same name; and they are as
 * many. */
static void gopclntab__stripped_program__functions_as_go_tool_nm(void **state)
{
	char *out = malloc(OUT_LEN);
	assert_non_null(out);
	assert_int_equal(bt_test_run(out, OUT_LEN, "go tool nm -size %s", fx("go/goprog")), 0);
	struct bt_elf *e;
	struct bt_symtab *st;
	assert_int_equal(bt_elf_open_path(fx("go/goprog-stripped"), &e), 0);
	assert_int_equal(bt_goelf_symtab(e, &st), 0);
	bt_elf_close(e);
	size_t n = bt_symtab_count(st), found = 0, text = 0;
	bool main_main = false;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		uint64_t addr, size;
		char type, want[512];
		int at = 0;
		if (sscanf(line, " %" SCNx64 " %" SCNu64 " %c %n", &addr, &size, &type, &at) != 3 || !at ||
		    (type != 'T' && type != 't') || !size)
			continue;
		const char *name = line + at;  /* to the end of the line: names may hold spaces */
		text++;
		plain_name(name, want, sizeof(want));
		uint64_t off;
		const struct bt_sym *s = bt_symtab_lookup(st, addr, &off);
		if (!s || off || s->addr != addr)
			continue;
		/* the table's functions reach the next one, over the padding between them */
		if (strcmp(s->name, want) || s->size < size || s->size - size >= 64)
			fail_msg("0x%" PRIx64 ": go tool nm says %s (%" PRIu64 " bytes), the table %s (%" PRIu64 ")",
				 addr, want, size, s->name, s->size);
		found++;
		main_main |= !strcmp(want, "main.main");
	}
	print_message("%zu of go tool nm's %zu functions found, the table has %zu\n", found, text, n);
	assert_true(main_main);
	assert_int_equal(found, n);
	/* the symbol table has a few labels the runtime does not list (runtime.text, go.buildid...) */
	assert_true(text >= n && text - n <= 8);
	bt_symtab_free(st);
	free(out);
}

struct insn {
	uint64_t addr;
	char file[256];
	unsigned line;
};

/* The instructions `go tool objdump -s PATTERN` lists, with the file:line it gives each. */
static size_t objdump(const char *bin, const char *pattern, struct insn **out)
{
	char *text = malloc(OUT_LEN);
	assert_non_null(text);
	assert_int_equal(bt_test_run(text, OUT_LEN, "go tool objdump -s '%s' %s", pattern, bin), 0);
	size_t n = 0, cap = 1024;
	struct insn *v = malloc(cap * sizeof(*v));
	assert_non_null(v);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		struct insn k;
		char loc[256];
		if (sscanf(line, " %255s 0x%" SCNx64, loc, &k.addr) != 2)
			continue;
		char *colon = strrchr(loc, ':');
		if (!colon)
			continue;
		*colon = '\0';
		snprintf(k.file, sizeof(k.file), "%s", loc);
		k.line = (unsigned)atoi(colon + 1);
		if (n == cap)
			assert_non_null(v = realloc(v, (cap *= 2) * sizeof(*v)));
		v[n++] = k;
	}
	free(text);
	*out = v;
	return n;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The frames the stripped build's table gives every instruction of the functions pattern names are
 * those the unstripped build's DWARF gives (functions inlined there included, innermost first, with
 * files and lines), and the innermost's file:line is go tool objdump's. */
static void compare_lines(const char *unstripped, const char *stripped, const char *pattern)
{
	struct insn *in;
	size_t n = objdump(fx(unstripped), pattern, &in);
	assert_true(n > 20);
	int fd = open(fx(unstripped), O_RDONLY | O_CLOEXEC);
	int sfd = open(fx(stripped), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0 && sfd >= 0);
	struct bt_dwarf *d;
	struct bt_golines *g;
	assert_int_equal(bt_dwarf_open_fd(fd, &d), 0);
	assert_int_equal(bt_golines_open(sfd, &g), 0);
	assert_true(bt_golines_inlines(g));
	size_t inlined = 0;
	for (size_t i = 0; i < n; i++) {
		struct bt_dwarf_frame want[MAXF], got[MAXF];
		int nw = bt_dwarf_lookup(d, in[i].addr, want, MAXF);
		int ng = bt_golines_lookup(g, in[i].addr, got, MAXF);
		assert_true(ng > 0);
		if (ng != nw)
			fail_msg("0x%" PRIx64 ": DWARF gives %d frames, the table %d (%s)", in[i].addr, nw, ng,
				 got[0].function);
		for (int k = 0; k < ng; k++)
			if (!same_str(want[k].function, got[k].function) || !same_str(want[k].file, got[k].file) ||
			    want[k].line != got[k].line)
				fail_msg("0x%" PRIx64 " frame %d: DWARF %s %s:%u, the table %s %s:%u", in[i].addr, k,
					 want[k].function, want[k].file, want[k].line, got[k].function, got[k].file,
					 got[k].line);
		/* (go tool objdump of Go 1.19 gives no lines for a position-independent build) */
		const char *base = strrchr(got[0].file, '/');
		base = base ? base + 1 : got[0].file;
		if (in[i].file[0] && (strcmp(base, in[i].file) || got[0].line != in[i].line))
			fail_msg("0x%" PRIx64 ": objdump says %s:%u, the table %s:%u", in[i].addr, in[i].file,
				 in[i].line, got[0].file, got[0].line);
		inlined += ng > 1;
	}
	print_message("%s: %zu instructions, %zu of them in inlined calls\n", stripped, n, inlined);
	assert_true(inlined > 0);
	bt_golines_close(g);
	bt_dwarf_close(d);
	close(fd);
	close(sfd);
	free(in);
}

static void gopclntab__stripped_program__lines_and_inlines_as_dwarf(void **state)
{
	compare_lines("go/goprog", "go/goprog-stripped", "^(main\\.|fmt\\.Fprintln$|runtime\\.mallocgc$)");
}

/* A position-independent build keeps the start of Go's code and the moduledata's pointers as
 * relocations: read from those, the same frames. */
static void gopclntab__position_independent__lines_and_inlines_as_dwarf(void **state)
{
	compare_lines("go/goprog-pie", "go/goprog-pie-stripped", "^(main\\.|fmt\\.Fprintln$)");
	struct bt_elf *e;
	struct bt_symtab *st;
	assert_int_equal(bt_elf_open_path(fx("go/goprog-pie-stripped"), &e), 0);
	assert_int_equal(bt_goelf_symtab(e, &st), 0);
	bt_elf_close(e);
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "go tool nm %s | awk '$3 == \"main.sum\" { print $1 }'",
				     fx("go/goprog-pie")), 0);
	uint64_t off, addr = strtoull(out, NULL, 16);
	const struct bt_sym *s = bt_symtab_lookup(st, addr, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "main.sum");
	assert_int_equal(off, 0);
	bt_symtab_free(st);
}

/* Files that are not Go programs have no table. */
static void gopclntab__not_go__no_table(void **state)
{
	struct bt_elf *e;
	struct bt_symtab *st = NULL;
	assert_int_equal(bt_elf_open_path(fx("fx-sha1"), &e), 0);
	assert_false(bt_goelf_is_go(e));
	assert_int_equal(bt_goelf_symtab(e, &st), -ENODATA);
	assert_null(st);
	bt_elf_close(e);
	int fd = open(fx("fx-sha1"), O_RDONLY | O_CLOEXEC);
	struct bt_golines *g = NULL;
	assert_int_equal(bt_golines_open(fd, &g), -ENODATA);
	assert_null(g);
	close(fd);
}

/* The stripped program's table, copied. */
static uint8_t *table_copy(size_t *len, uint64_t *addr, uint64_t *text)
{
	struct bt_elf *e;
	const void *d;
	assert_int_equal(bt_elf_open_path(fx("go/goprog-stripped"), &e), 0);
	assert_int_equal(bt_elf_section_at(e, ".gopclntab", &d, len, addr), 0);
	uint8_t *copy = malloc(*len);
	assert_non_null(copy);
	memcpy(copy, d, *len);
	assert_int_equal(bt_elf_section_at(e, ".text", &d, &(size_t){ 0 }, text), 0);
	bt_elf_close(e);
	return copy;
}

/* Lookups over the whole table: each frame's strings lie in it. */
static void lookups_stay_inside(const struct bt_gopcln *g, const uint8_t *tab, size_t len)
{
	size_t n = bt_gopcln_count(g);
	for (size_t i = 0; i < n; i += 1 + n / 300) {
		uint64_t entry, end;
		const char *name;
		if (bt_gopcln_func(g, i, &entry, &end, &name) != 0)
			continue;
		assert_true(entry < end);
		assert_true((const uint8_t *)name >= tab && (const uint8_t *)name < tab + len);
		struct bt_dwarf_frame fr[MAXF];
		uint64_t pcs[] = { entry, entry + (end - entry) / 2, end - 1 };
		for (size_t k = 0; k < 3; k++) {
			int nf = bt_gopcln_lookup(g, pcs[k], fr, MAXF);
			assert_true(nf >= 0 && nf <= MAXF);
			for (int j = 0; j < nf; j++) {
				const uint8_t *f = (const uint8_t *)fr[j].file, *fn = (const uint8_t *)fr[j].function;
				assert_true(!f || (f >= tab && f < tab + len));
				assert_true(!fn || (fn >= tab && fn < tab + len));
			}
		}
	}
}

/* A table cut short anywhere is refused or read within what is left; a header that names another
 * version, a pointer size Go never had, regions out of order or more functions than fit is refused. */
static void gopclntab__cut_or_corrupt__refused_or_bounded(void **state)
{
	size_t len;
	uint64_t addr, text;
	uint8_t *tab = table_copy(&len, &addr, &text);
	struct bt_gopcln_src src = { .tab = tab, .len = len, .addr = addr, .text = text };
	struct bt_gopcln *g;
	assert_int_equal(bt_gopcln_open(&src, &g), 0);
	assert_int_equal(bt_gopcln_version(g), 118);  /* Go 1.19 writes the layout of 1.18 */
	lookups_stay_inside(g, tab, len);
	bt_gopcln_free(g);
	for (size_t cut = 0; cut < len; cut += len / 61 + 1) {
		uint8_t *part = malloc(cut ? cut : 1);  /* its own allocation: a read past it is caught */
		assert_non_null(part);
		memcpy(part, tab, cut);
		struct bt_gopcln_src s = src;
		s.tab = part;
		s.len = cut;
		int err = bt_gopcln_open(&s, &g);
		assert_true(err == 0 || err == -EINVAL || err == -ENODATA);
		if (!err) {
			lookups_stay_inside(g, part, cut);
			bt_gopcln_free(g);
		}
		free(part);
	}
	uint8_t saved[16];
	memcpy(saved, tab, sizeof(saved));
	tab[0] = 0xfb;  /* Go 1.2's magic: not read here */
	assert_int_equal(bt_gopcln_open(&src, &g), -ENODATA);
	memcpy(tab, saved, sizeof(saved));
	tab[7] = 3;
	assert_int_equal(bt_gopcln_open(&src, &g), -ENODATA);
	memcpy(tab, saved, sizeof(saved));
	memset(tab + 8, 0xff, 8);  /* nfunc */
	assert_int_equal(bt_gopcln_open(&src, &g), -EINVAL);
	memcpy(tab, saved, sizeof(saved));
	uint64_t names;
	memcpy(&names, tab + 8 + 3 * 8, 8);
	uint64_t late = len + 1;
	memcpy(tab + 8 + 3 * 8, &late, 8);
	assert_int_equal(bt_gopcln_open(&src, &g), -EINVAL);
	memcpy(tab + 8 + 3 * 8, &names, 8);
	/* every byte past the header flipped in turn, a stride apart: whatever the records say, lookups
	 * stay inside the table */
	for (size_t i = 64; i < len; i += 4093) {
		tab[i] ^= 0xa5;
		if (bt_gopcln_open(&src, &g) == 0) {
			lookups_stay_inside(g, tab, len);
			bt_gopcln_free(g);
		}
		tab[i] ^= 0xa5;
	}
	free(tab);
}

struct seed_mem {
	const uint8_t *data;
	size_t len;
};

/* The program's memory of fuzz/gopclntab-seed.py's tables: the table itself, from 0x1000000. */
static int seed_read(void *ctx, uint64_t vaddr, void *buf, size_t len)
{
	const struct seed_mem *m = ctx;
	if (vaddr < 0x1000000 || vaddr - 0x1000000 > m->len || m->len - (vaddr - 0x1000000) < len)
		return -ERANGE;
	memcpy(buf, m->data + (vaddr - 0x1000000), len);
	return 0;
}

/* The layouts Debian's Go does not write (1.16 and 1.17's, with pointers for funcdata; 1.20's, with
 * its shorter inline tree entries), in the small tables fuzz/gopclntab-seed.py writes from the Go
 * runtime's own structures: a call inlined into main.f at +4, lines 10, 11, 12, files a.go, b.go. */
static void gopclntab__each_layout__functions_files_lines_inlines(void **state)
{
	char dir[] = "/tmp/bt-goseed-XXXXXX", out[256];
	assert_non_null(mkdtemp(dir));
	assert_int_equal(bt_test_run(out, sizeof(out), "python3 fuzz/gopclntab-seed.py %s", dir), 0);
	static const unsigned versions[] = { 116, 118, 120 };
	for (size_t v = 0; v < 3; v++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/small-go%u", dir, versions[v]);
		size_t len;
		uint8_t *tab = bt_test_read_file(path, &len);
		assert_non_null(tab);
		struct seed_mem mem = { tab, len };
		struct bt_gopcln_src src = { .tab = tab, .len = len, .addr = 0x1000000, .text = 0x400000,
					     .read = seed_read, .ctx = &mem, .gofunc = 0x1000000 };
		struct bt_gopcln *g;
		assert_int_equal(bt_gopcln_open(&src, &g), 0);
		assert_int_equal(bt_gopcln_version(g), versions[v]);
		assert_int_equal(bt_gopcln_count(g), 2);
		uint64_t entry, end;
		const char *name;
		assert_int_equal(bt_gopcln_func(g, 1, &entry, &end, &name), 0);
		assert_string_equal(name, "main.g");
		assert_true(entry == 0x400010 && end == 0x400020);
		struct bt_dwarf_frame fr[MAXF];
		assert_int_equal(bt_gopcln_lookup(g, 0x400005, fr, MAXF), 2);
		assert_string_equal(fr[0].function, "main.inl");
		assert_string_equal(fr[0].file, "a.go");
		assert_int_equal(fr[0].line, 11);
		assert_string_equal(fr[1].function, "main.f");  /* at its call, +2 */
		assert_int_equal(fr[1].line, 10);
		assert_int_equal(bt_gopcln_lookup(g, 0x400005, fr, 1), 1);  /* the innermost kept */
		assert_string_equal(fr[0].function, "main.inl");
		assert_int_equal(bt_gopcln_lookup(g, 0x40000c, fr, MAXF), 1);
		assert_string_equal(fr[0].function, "main.f");
		assert_string_equal(fr[0].file, "b.go");
		assert_int_equal(fr[0].line, 12);
		assert_int_equal(bt_gopcln_lookup(g, 0x400020, fr, MAXF), 0);  /* past the last */
		assert_int_equal(bt_gopcln_lookup(g, 0x3fffff, fr, MAXF), 0);
		/* without the inline tree: the function itself, at the inlined call's line */
		src.gofunc = 0;
		bt_gopcln_free(g);
		assert_int_equal(bt_gopcln_open(&src, &g), 0);
		int n = bt_gopcln_lookup(g, 0x400005, fr, MAXF);
		assert_int_equal(n, versions[v] == 116 ? 2 : 1);  /* 1.16's trees are addresses */
		assert_string_equal(fr[n - 1].function, "main.f");
		bt_gopcln_free(g);
		free(tab);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gopclntab__stripped_program__functions_as_go_tool_nm),
		cmocka_unit_test(gopclntab__stripped_program__lines_and_inlines_as_dwarf),
		cmocka_unit_test(gopclntab__position_independent__lines_and_inlines_as_dwarf),
		cmocka_unit_test(gopclntab__not_go__no_table),
		cmocka_unit_test(gopclntab__each_layout__functions_files_lines_inlines),
		cmocka_unit_test(gopclntab__cut_or_corrupt__refused_or_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
