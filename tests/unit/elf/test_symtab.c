/* test_symtab.c - function symbol tables against nm (both tables, sysv format) on the fixtures,
 * the system's libraries and every /usr/bin program; the lookup rules on symbols laid out by hand in
 * fx_syms.S; file-offset lookups in this very process; hostile and truncated symbol tables. */
#include "testutil.h"
#include "elf/symtab.h"
#include "elf/elffile.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *fx(char *buf, const char *name)
{
	return bt_test_fixture(buf, 512, name);
}

static struct bt_symtab *load_or_fail(const char *path)
{
	struct bt_symtab *st = NULL;
	int err = bt_symtab_load_path(path, &st);
	if (err)
		fail_msg("%s: %d", path, err);
	return st;
}

/* ---- nm as the oracle ------------------------------------------------------------------------ */

struct nm_sym {
	uint64_t addr, size;
	char *name;
	bool func;   /* FUNC or IFUNC, or an untyped label that counts as one (see label_counts) */
	bool label;  /* NOTYPE in a text section (nm's class T or t), not a .name or $name */
};

/* nm's defined symbols of one file, from both tables, sorted by address. */
struct nm_file {
	char *path;
	struct nm_sym *v;
	size_t n, cap;
	char bid[2 * BT_BUILD_ID_MAXLEN + 1];  /* readelf's build-id, "" for none */
};

static void nm_file_add(struct nm_file *f, uint64_t addr, uint64_t size, const char *name, bool func,
			bool label)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 256;
		f->v = realloc(f->v, f->cap * sizeof(*f->v));
		assert_non_null(f->v);
	}
	f->v[f->n].addr = addr;
	f->v[f->n].name = strdup(name);
	assert_non_null(f->v[f->n].name);
	f->v[f->n].func = func;
	f->v[f->n].size = size;
	f->v[f->n].label = label;
	f->n++;
}

static void nm_file_free(struct nm_file *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].name);
	free(f->v);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

static int nm_sym_cmp(const void *pa, const void *pb)
{
	const struct nm_sym *a = pa, *b = pb;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static char *trim(char *s)
{
	while (*s == ' ')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

static struct nm_file *find_file(struct nm_file *files, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(files[i].path, path) == 0)
			return &files[i];
	return NULL;
}

/* Appends ' path' for each file, single-quoted. */
static char *file_args(struct nm_file *files, size_t n)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(files[i].path) + 4;
	char *s = malloc(len);
	assert_non_null(s);
	s[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		strcat(s, " '");
		strcat(s, files[i].path);
		strcat(s, "'");
	}
	return s;
}

/* The rule for untyped labels in code: each counts as a function unless a sized function holds
 * its address (the function names it) or a function starts there. f is sorted. */
static void label_counts(struct nm_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		struct nm_sym *l = &f->v[i];
		if (!l->label || l->addr == 0)
			continue;
		bool held = false;
		for (size_t j = 0; j < f->n && !held; j++) {
			const struct nm_sym *x = &f->v[j];
			held = x->func && !x->label &&
			       (x->addr == l->addr || (x->addr < l->addr && l->addr < x->addr + x->size));
		}
		l->func = !held;
	}
}

/* A PLT entry objdump names: NAME@plt; *ABS*+0xADDR@plt for an ifunc's, pending until nm's names
 * of ADDR are known; the lazy-binding header, objdump's FIRST@plt-0x10, is perf's ".plt". objdump
 * labels the start of .plt ".plt" when it names no entry there: the header (an IBT .plt) unless its
 * first instruction is an entry's jump, or the section holds no bytes (a debug file). */
struct plt_pending {
	struct nm_file *f;
	uint64_t addr, ifunc;
};

static void plt_line(struct nm_file *cur, char *line, struct plt_pending **pend, size_t *npend,
		     uint64_t *section_label)
{
	if (*section_label) {
		if (!strstr(line, "jmp") && !strstr(line, "..."))
			nm_file_add(cur, *section_label, 0, ".plt", true, false);
		*section_label = 0;
	}
	char *lt = strchr(line, '<'), *gt = lt ? strstr(lt, ">:") : NULL;
	if (!gt)
		return;
	*gt = '\0';
	char *name = lt + 1;
	uint64_t addr = strtoull(line, NULL, 16);
	size_t l = strlen(name);
	if (strcmp(name, ".plt") == 0) {
		*section_label = addr;
	} else if (strstr(name, "@plt-0x")) {
		nm_file_add(cur, addr, 0, ".plt", true, false);
	} else if (strncmp(name, "*ABS*+0x", 8) == 0 && l > 4 && strcmp(name + l - 4, "@plt") == 0) {
		*pend = realloc(*pend, (*npend + 1) * sizeof(**pend));
		assert_non_null(*pend);
		(*pend)[(*npend)++] = (struct plt_pending){ cur, addr, strtoull(name + 8, NULL, 16) };
	} else if (l > 4 && strcmp(name + l - 4, "@plt") == 0) {
		nm_file_add(cur, addr, 0, name, true, false);
	}
}

/* Adds the PLT entries objdump -d names in each x86_64 file (the oracle for elf/plt.c). An ifunc's
 * entry is listed under every name nm gives the ifunc, followed by @plt. */
static void objdump_plt_oracle(struct nm_file *files, size_t n, const char *args)
{
	size_t clen = strlen(args) + 256;
	char *cmd = malloc(clen), line[8192];
	assert_non_null(cmd);
	snprintf(cmd, clen, "LC_ALL=C objdump -d --no-show-raw-insn -j .plt -j .plt.sec -j .plt.got %s "
			    "2>/dev/null | grep -A1 -E 'file format|>:$'", args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	struct nm_file *cur = NULL;
	struct plt_pending *pend = NULL;
	size_t npend = 0;
	uint64_t section_label = 0;
	while (fgets(line, sizeof(line), p)) {
		char *fmt = strstr(line, ":     file format ");
		if (fmt) {
			*fmt = '\0';
			cur = strstr(fmt + 1, "elf64-x86-64") ? find_file(files, n, trim(line)) : NULL;
			section_label = 0;
		} else if (cur) {
			plt_line(cur, line, &pend, &npend, &section_label);
		}
	}
	pclose(p);
	for (size_t i = 0; i < npend; i++) {
		struct nm_file *f = pend[i].f;
		size_t had = f->n;
		for (size_t j = 0; j < had; j++) {
			if (!f->v[j].func || f->v[j].label || f->v[j].addr != pend[i].ifunc)
				continue;
			char name[4096];
			snprintf(name, sizeof(name), "%s@plt", f->v[j].name);
			nm_file_add(f, pend[i].addr, 0, name, true, false);
		}
	}
	free(pend);
	free(cmd);
}

/* Fills each file's build-id (readelf -n) and defined symbols (nm, nm -D) with two commands for the
 * whole batch: headers ("File: ", "Symbols from ") tell the files apart; a lone file has none. */
static void nm_oracle(struct nm_file *files, size_t n)
{
	char *args = file_args(files, n);
	size_t clen = strlen(args) * 2 + 512;
	char *cmd = malloc(clen);
	assert_non_null(cmd);
	char line[8192];

	snprintf(cmd, clen, "LC_ALL=C readelf -nW %s 2>/dev/null | grep -E '^File: |Build ID: '", args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	struct nm_file *cur = n == 1 ? &files[0] : NULL;
	while (fgets(line, sizeof(line), p)) {
		char *s = trim(line), *b;
		if (strncmp(s, "File: ", 6) == 0)
			cur = find_file(files, n, s + 6);
		else if (cur && (b = strstr(s, "Build ID: ")) != NULL && !cur->bid[0])
			snprintf(cur->bid, sizeof(cur->bid), "%s", trim(b + 10));
	}
	pclose(p);

	snprintf(cmd, clen, "LC_ALL=C nm -D --defined-only -f sysv --without-symbol-versions %s 2>/dev/null;"
			    "LC_ALL=C nm --defined-only -f sysv %s 2>/dev/null", args, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	cur = n == 1 ? &files[0] : NULL;
	while (fgets(line, sizeof(line), p)) {
		if (strncmp(line, "Symbols from ", 13) == 0) {
			char *s = trim(line + 13);
			size_t l = strlen(s);
			if (l && s[l - 1] == ':')
				s[l - 1] = '\0';
			cur = find_file(files, n, s);
			continue;
		}
		/* name|value|class|type|size|line|section */
		char *fields[7];
		size_t nf = 0;
		char *save = NULL;
		for (char *t = strtok_r(line, "|", &save); t && nf < 7; t = strtok_r(NULL, "|", &save))
			fields[nf++] = t;
		if (!cur || nf < 5)
			continue;
		char *name = trim(fields[0]), *class = trim(fields[2]), *type = trim(fields[3]);
		uint64_t addr = strtoull(trim(fields[1]), NULL, 16);
		uint64_t size = strtoull(trim(fields[4]), NULL, 16);
		bool func = strcmp(type, "FUNC") == 0 || strstr(type, ": 10") != NULL;  /* STT_GNU_IFUNC */
		bool label = strcmp(type, "NOTYPE") == 0 && (!strcmp(class, "T") || !strcmp(class, "t")) &&
			     name[0] != '.' && name[0] != '$';
		nm_file_add(cur, addr, func ? size : 0, name, func, label);
	}
	pclose(p);
	objdump_plt_oracle(files, n, args);
	for (size_t i = 0; i < n; i++)
		if (files[i].n) {
			qsort(files[i].v, files[i].n, sizeof(*files[i].v), nm_sym_cmp);
			label_counts(&files[i]);
		}
	free(cmd);
	free(args);
}

static size_t nm_funcs(const struct nm_file *f)
{
	size_t k = 0;
	for (size_t i = 0; i < f->n; i++)
		k += f->v[i].func && f->v[i].addr != 0;
	return k;
}

/* nm lists name as a function at addr. */
static bool nm_has(const struct nm_file *f, uint64_t addr, const char *name)
{
	size_t lo = 0, hi = f->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < f->n && f->v[i].addr == addr; i++)
		if (f->v[i].func && strcmp(f->v[i].name, name) == 0)
			return true;
	return false;
}

/* Every defined function nm lists is found starting at its exact address under one of the names
 * nm gives there, and every symbol of ours is a function nm lists at that address. */
static void check_against_nm(const struct bt_symtab *st, const struct nm_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct nm_sym *s = &f->v[i];
		if (!s->func || s->addr == 0)
			continue;
		uint64_t off = 1;
		const struct bt_sym *got = bt_symtab_lookup(st, s->addr, &off);
		if (!got || got->addr != s->addr || off != 0)
			fail_msg("%s: %s at %#" PRIx64 ": got %s at %#" PRIx64, f->path, s->name, s->addr,
				 got ? got->name : "nothing", got ? got->addr : 0);
		if (!nm_has(f, s->addr, got->name))
			fail_msg("%s: %#" PRIx64 " named %s, which nm does not list there (e.g. %s)", f->path,
				 s->addr, got->name, s->name);
	}
	for (size_t i = 0; i < bt_symtab_count(st); i++) {
		const struct bt_sym *s = bt_symtab_at(st, i);
		if (!nm_has(f, s->addr, s->name))
			fail_msg("%s: our %s at %#" PRIx64 " is not a function nm lists", f->path, s->name, s->addr);
	}
}

static void check_file_against_nm(const char *path)
{
	struct nm_file f = { .path = strdup(path) };
	assert_non_null(f.path);
	nm_oracle(&f, 1);
	assert_true(nm_funcs(&f) > 0);
	struct bt_symtab *st = load_or_fail(path);
	check_against_nm(st, &f);
	bt_symtab_free(st);
	nm_file_free(&f);
}

/* The address nm gives name in path (any symbol type). */
static uint64_t nm_addr(const char *path, const char *name)
{
	char out[128];
	bt_test_run(out, sizeof(out), "nm '%s' | awk '$3==\"%s\"{print $1; exit}'", path, name);
	if (!out[0])
		fail_msg("nm: no %s in %s", name, path);
	return strtoull(out, NULL, 16);
}

static const struct bt_sym *lookup_name(const struct bt_symtab *st, uint64_t addr, uint64_t *off)
{
	*off = UINT64_MAX;
	return bt_symtab_lookup(st, addr, off);
}

/* ---- fixtures against nm ------------------------------------------------------------------------ */

static void symtab__fixtures__agree_with_nm(void **state)
{
	static const char *const names[] = { "fx-sha1", "fx-nopie", "libfx.so", "fx-cxx", "fx-sha1.debug", "fx-ibtplt",
					     "fx-i386", "fx-mips", "fx-mips64", "fx-note8" };
	char p[512];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_file_against_nm(fx(p, names[i]));
}

static void symtab__system_libraries__agree_with_nm(void **state)
{
	char out[4096];
	/* every library this process maps: libc, cmocka, libelf, compression libraries ... */
	bt_test_run(out, sizeof(out), "awk '$6 ~ /^\\/.*\\.so/ {print $6}' /proc/%d/maps | sort -u", (int)getpid());
	size_t n = 0;
	for (char *line = out, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		*nl = '\0';
		check_file_against_nm(line);
		n++;
	}
	assert_true(n >= 3);
}

/* ---- the lookup rules, on symbols laid out by hand -------------------------------------------- */

struct fx_case {
	char path[512];
	struct bt_symtab *st;
};

static int fx_setup(void **state)
{
	struct fx_case *c = calloc(1, sizeof(*c));
	if (!c)
		return -1;
	fx(c->path, "fx-sha1");
	if (bt_symtab_load_path(c->path, &c->st) != 0) {
		free(c);
		return -1;
	}
	*state = c;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx_case *c = *state;
	bt_symtab_free(c->st);
	free(c);
	return 0;
}

static void symtab__sized_symbol__no_symbol_past_its_end(void **state)
{
	struct fx_case *c = *state;
	uint64_t a = nm_addr(c->path, "fxs_sized"), off;
	const struct bt_sym *s = lookup_name(c->st, a + 15, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "fxs_sized");
	assert_int_equal(s->size, 16);
	assert_int_equal(off, 15);
	/* an untyped label inside it does not split it */
	assert_int_equal(nm_addr(c->path, "fxs_inner_notype"), a + 8);
	s = lookup_name(c->st, a + 8, &off);
	assert_string_equal(s->name, "fxs_sized");
	assert_int_equal(off, 8);
	/* the gap holds only an untyped label, which names it up to the next symbol, as perf,
	 * addr2line and eu-addr2line do */
	assert_int_equal(nm_addr(c->path, "fxs_gap_notype"), a + 16);
	s = lookup_name(c->st, a + 31, &off);
	assert_string_equal(s->name, "fxs_gap_notype");
	assert_int_equal(off, 15);
	assert_int_equal(s->size, 0);
}

static void symtab__zero_size_symbol__extends_to_next(void **state)
{
	struct fx_case *c = *state;
	uint64_t a = nm_addr(c->path, "fxs_zero"), next = nm_addr(c->path, "fxs_after_zero"), off;
	assert_true(next > a);
	const struct bt_sym *s = lookup_name(c->st, next - 1, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "fxs_zero");
	assert_int_equal(s->size, 0);
	assert_int_equal(off, next - 1 - a);
	s = lookup_name(c->st, next, &off);
	assert_string_equal(s->name, "fxs_after_zero");
	assert_int_equal(off, 0);
}

/* fxs_tail has no size and is the last symbol of its own section: it ends where readelf says the
 * section ends, even though the next symbol is further on. */
static void symtab__zero_size_symbol__stops_at_section_end(void **state)
{
	struct fx_case *c = *state;
	char out[128];
	bt_test_run(out, sizeof(out), "LC_ALL=C readelf -SW '%s' | sed 's/\\[ */[/' | awk '$2==\"fx_tail\"{print $4, $6}'",
		    c->path);
	uint64_t sec_addr, sec_size, off;
	assert_int_equal(sscanf(out, "%" SCNx64 " %" SCNx64, &sec_addr, &sec_size), 2);
	uint64_t a = nm_addr(c->path, "fxs_tail");
	assert_int_equal(a, sec_addr);
	const struct bt_sym *s = lookup_name(c->st, sec_addr + sec_size - 1, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "fxs_tail");
	assert_int_equal(off, sec_size - 1);
	s = bt_symtab_lookup(c->st, sec_addr + sec_size, &off);
	assert_true(s == NULL || s->addr == sec_addr + sec_size);
	/* and something does follow, so the section end, not the table's end, stopped it */
	size_t i = 0;
	while (i < bt_symtab_count(c->st) && bt_symtab_at(c->st, i)->addr <= a)
		i++;
	assert_true(i < bt_symtab_count(c->st));
	assert_true(bt_symtab_at(c->st, i)->addr > sec_addr + sec_size);
}

static void expect_name_at(struct fx_case *c, const char *any_alias, const char *want)
{
	uint64_t off;
	const struct bt_sym *s = lookup_name(c->st, nm_addr(c->path, any_alias), &off);
	assert_non_null(s);
	assert_string_equal(s->name, want);
	assert_int_equal(off, 0);
}

static void symtab__aliases__global_over_weak_over_local(void **state)
{
	struct fx_case *c = *state;
	expect_name_at(c, "fxs_l1", "fxs_g1");
	expect_name_at(c, "fxs_w1", "fxs_g1");
	/* the C weak function has no alias; the C alias pair is two globals */
	expect_name_at(c, "fx_weak", "fx_weak");
}

/* The first of two names at addr in the file's symbol table, by readelf -s. */
static void first_in_table(const char *path, const char *a, const char *b, char *out, size_t len)
{
	bt_test_run(out, len, "LC_ALL=C readelf -sW '%s' | awk '$8==\"%s\" || $8==\"%s\" {print $8; exit}'", path, a, b);
	out[strcspn(out, "\n")] = '\0';
}

/* perf's tie-breaks: fewer leading underscores, then the longer name, then the first in the file. */
static void symtab__aliases__fewer_underscores_then_longest_then_first(void **state)
{
	struct fx_case *c = *state;
	char first[64];
	expect_name_at(c, "_fxs_wa", "fxs_wb");
	first_in_table(c->path, "fxs_ga", "fxs_gb", first, sizeof(first));
	assert_true(first[0]);
	expect_name_at(c, "fxs_gb", first);
	expect_name_at(c, "__fxs_lx", "_fxs_ly");
	expect_name_at(c, "fx_global", "fx_alias_of_global");
}

/* One entry per address whatever the number of aliases, in increasing address order. */
static void symtab__table__sorted_one_entry_per_address(void **state)
{
	struct fx_case *c = *state;
	size_t n = bt_symtab_count(c->st);
	assert_true(n > 10);
	for (size_t i = 1; i < n; i++)
		assert_true(bt_symtab_at(c->st, i - 1)->addr < bt_symtab_at(c->st, i)->addr);
	assert_null(bt_symtab_at(c->st, n));
	/* nm's distinct function addresses (untyped labels by the rule): exactly our count */
	struct nm_file f = { .path = strdup(c->path) };
	assert_non_null(f.path);
	nm_oracle(&f, 1);
	size_t distinct = 0;
	uint64_t last = 0;
	for (size_t i = 0; i < f.n; i++)
		if (f.v[i].func && f.v[i].addr != 0 && f.v[i].addr != last) {
			distinct++;
			last = f.v[i].addr;
		}
	nm_file_free(&f);
	assert_int_equal(distinct, n);
}

/* A sized weak alias names the address before an unsized global (perf prefers a size first), and
 * its size holds. */
static void symtab__unsized_global_with_sized_alias__sized_names_it(void **state)
{
	struct fx_case *c = *state;
	uint64_t a = nm_addr(c->path, "fxs_z5"), off;
	const struct bt_sym *s = lookup_name(c->st, a + 7, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "fxs_s5");
	assert_int_equal(s->size, 8);
	assert_null(bt_symtab_lookup(c->st, a + 8, &off));
	assert_true(nm_addr(c->path, "fxs_after_z5") > a + 8);
}

static void symtab__nested_symbol__outer_covers_past_inner(void **state)
{
	struct fx_case *c = *state;
	uint64_t outer = nm_addr(c->path, "fxs_outer"), inner = nm_addr(c->path, "fxs_inner"), off;
	assert_int_equal(inner, outer + 16);
	const struct bt_sym *s = lookup_name(c->st, inner + 3, &off);
	assert_string_equal(s->name, "fxs_inner");
	assert_int_equal(off, 3);
	s = lookup_name(c->st, inner + 8, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "fxs_outer");
	assert_int_equal(off, 24);
	s = lookup_name(c->st, outer + 63, &off);
	assert_string_equal(s->name, "fxs_outer");
	assert_true(bt_symtab_lookup(c->st, outer + 64, &off) == NULL ||
		    bt_symtab_lookup(c->st, outer + 64, &off)->addr == outer + 64);
}

static void symtab__ifunc_kept_object_and_notype_skipped(void **state)
{
	struct fx_case *c = *state;
	uint64_t off;
	expect_name_at(c, "fxs_ifunc", "fxs_ifunc");
	uint64_t obj = nm_addr(c->path, "fxs_object");
	const struct bt_sym *s = bt_symtab_lookup(c->st, obj, &off);
	assert_true(s == NULL || strcmp(s->name, "fxs_object") != 0);
	for (size_t i = 0; i < bt_symtab_count(c->st); i++) {
		assert_string_not_equal(bt_symtab_at(c->st, i)->name, "fxs_object");
		assert_string_not_equal(bt_symtab_at(c->st, i)->name, "fxs_inner_notype");
	}
	/* in the shared object, the IFUNC and its local resolver share an address: the global wins */
	char p[512];
	struct bt_symtab *so = load_or_fail(fx(p, "libfx.so"));
	s = bt_symtab_lookup(so, nm_addr(p, "fxl_resolve"), &off);
	assert_non_null(s);
	assert_string_equal(s->name, "fxl_ifunc");
	bt_symtab_free(so);
}

static void symtab__before_first_symbol__null(void **state)
{
	struct fx_case *c = *state;
	uint64_t off;
	const struct bt_sym *first = bt_symtab_at(c->st, 0);
	assert_non_null(first);
	assert_true(first->addr > 0);
	assert_null(bt_symtab_lookup(c->st, first->addr - 1, &off));
	assert_null(bt_symtab_lookup(c->st, 0, &off));
	assert_null(bt_symtab_lookup(NULL, first->addr, &off));
	/* nor anything at the top of the address space */
	assert_null(bt_symtab_lookup(c->st, UINT64_MAX, &off));
}

/* All names live in one block, each followed by its version (empty when none): their extent is
 * exactly the sum of their sizes. */
static void symtab__names__stored_in_one_arena(void **state)
{
	struct fx_case *c = *state;
	const char *lo = NULL, *hi = NULL;
	size_t total = 0;
	for (size_t i = 0; i < bt_symtab_count(c->st); i++) {
		const struct bt_sym *sym = bt_symtab_at(c->st, i);
		const char *n = sym->name, *v = bt_symtab_version(c->st, sym);
		size_t l = strlen(n) + 1 + (v ? strlen(v) : 0) + 1;
		total += l;
		if (!lo || n < lo)
			lo = n;
		if (!hi || n + l > hi)
			hi = n + l;
	}
	assert_int_equal((size_t)(hi - lo), total);
}

/* The layout is the file's: a file offset inside a function finds that function. Section headers
 * (readelf -S) give the offsets, independently of the program headers used for the translation. */
static void symtab__lookup_offset__matches_section_offsets(void **state)
{
	static const char *const names[] = { "fx-sha1", "fx-nopie", "libfx.so", "fx-i386", "fx-mips64" };
	for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		char p[512], out[128];
		struct bt_symtab *st = load_or_fail(fx(p, names[f]));
		bt_test_run(out, sizeof(out), "LC_ALL=C readelf -SW '%s' | sed 's/\\[ */[/' | awk '$2==\".text\"{print $4, $5}'", p);
		uint64_t taddr, toff;
		assert_int_equal(sscanf(out, "%" SCNx64 " %" SCNx64, &taddr, &toff), 2);
		size_t checked = 0;
		for (size_t i = 0; i < bt_symtab_count(st); i++) {
			const struct bt_sym *s = bt_symtab_at(st, i), *got;
			if (s->addr < taddr || s->size < 2)
				continue;
			uint64_t off;
			got = bt_symtab_lookup_offset(st, s->addr - taddr + toff + 1, &off);
			if (got != s)
				fail_msg("%s: %s", p, s->name);
			assert_int_equal(off, 1);
			checked++;
		}
		assert_true(checked >= 2);
		/* and nothing for an offset past the file's loaded bytes */
		uint64_t off;
		assert_null(bt_symtab_lookup_offset(st, UINT64_MAX - 1, &off));
		bt_symtab_free(st);
	}
}

/* A running function, found from its address through /proc/self/maps and the file offset. */
static const struct bt_sym *lookup_running(uintptr_t addr, char *path, size_t plen, struct bt_symtab **out)
{
	char line[1024];
	FILE *m = fopen("/proc/self/maps", "r");
	assert_non_null(m);
	const struct bt_sym *s = NULL;
	while (fgets(line, sizeof(line), m)) {
		uint64_t start, end, moff;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms, &moff, &pos) < 4)
			continue;
		if (addr < start || addr >= end || !pos)
			continue;
		snprintf(path, plen, "%s", trim(line + pos));
		*out = load_or_fail(path);
		uint64_t off;
		s = bt_symtab_lookup_offset(*out, addr - start + moff, &off);
		break;
	}
	fclose(m);
	return s;
}

static void symtab__running_code__found_by_file_offset(void **state)
{
	char path[1024];
	struct bt_symtab *st = NULL;
	const struct bt_sym *s = lookup_running((uintptr_t)&symtab__running_code__found_by_file_offset, path,
						sizeof(path), &st);
	assert_non_null(s);
	assert_string_equal(s->name, "symtab__running_code__found_by_file_offset");
	bt_symtab_free(st);
	/* a C library function: one of the names nm gives its address */
	s = lookup_running((uintptr_t)&getpid, path, sizeof(path), &st);
	assert_non_null(s);
	struct nm_file f = { .path = strdup(path) };
	nm_oracle(&f, 1);
	assert_true(nm_has(&f, s->addr, s->name));
	assert_true(nm_has(&f, s->addr, "getpid"));
	nm_file_free(&f);
	bt_symtab_free(st);
}

/* A stripped executable that exports nothing keeps only its PLT entries, named as objdump names
 * them; without them it has no function symbols left. */
static void symtab__stripped_executable__plt_entries_only(void **state)
{
	char p[512], out[64];
	fx(p, "fx-stripped");
	bt_test_run(out, sizeof(out), "LC_ALL=C nm -D --defined-only -f sysv '%s' 2>/dev/null | grep -c FUNC", p);
	assert_int_equal(strtoul(out, NULL, 10), 0);
	struct bt_symtab *st = load_or_fail(p);
	struct nm_file f = { .path = strdup(p) };
	assert_non_null(f.path);
	nm_oracle(&f, 1);
	assert_true(nm_funcs(&f) >= 2);  /* the header and at least one libc function */
	check_against_nm(st, &f);
	for (size_t i = 0; i < bt_symtab_count(st); i++) {
		const char *name = bt_symtab_at(st, i)->name;
		size_t l = strlen(name);
		assert_true(strcmp(name, ".plt") == 0 || (l > 4 && strcmp(name + l - 4, "@plt") == 0));
	}
	nm_file_free(&f);
	bt_symtab_free(st);
	struct bt_elf *e;
	assert_int_equal(bt_elf_open_path(p, &e), 0);
	st = (void *)1;
	assert_int_equal(bt_symtab_load_with_plt(e, NULL, &st), -ENODATA);
	assert_null(st);
	bt_elf_close(e);
}

/* The debug-only file names the same functions at the same places as the original, the PLT
 * entries read from the original (the debug file's PLT holds no bytes). */
static void symtab__debug_file__same_symbols_as_original(void **state)
{
	char a[512], b[512];
	struct bt_symtab *x = load_or_fail(fx(a, "fx-sha1")), *y = NULL, *z = load_or_fail(fx(b, "fx-sha1.debug"));
	struct bt_elf *orig, *dbg;
	assert_int_equal(bt_elf_open_path(a, &orig), 0);
	assert_int_equal(bt_elf_open_path(b, &dbg), 0);
	assert_int_equal(bt_symtab_load_with_plt(dbg, orig, &y), 0);
	bt_elf_close(orig);
	bt_elf_close(dbg);
	assert_int_equal(bt_symtab_count(x), bt_symtab_count(y));
	size_t plt = 0;
	for (size_t i = 0; i < bt_symtab_count(x); i++) {
		assert_int_equal(bt_symtab_at(x, i)->addr, bt_symtab_at(y, i)->addr);
		assert_int_equal(bt_symtab_at(x, i)->size, bt_symtab_at(y, i)->size);
		assert_string_equal(bt_symtab_at(x, i)->name, bt_symtab_at(y, i)->name);
		plt += strstr(bt_symtab_at(x, i)->name, "@plt") != NULL;
	}
	/* alone, the debug file names all but the PLT */
	assert_true(plt > 0);
	assert_int_equal(bt_symtab_count(z) + plt + 1, bt_symtab_count(x));
	bt_symtab_free(x);
	bt_symtab_free(y);
	bt_symtab_free(z);
}

/* The section holding addr, by readelf -S. */
static void section_of(const char *path, uint64_t addr, char *name, size_t len)
{
	static char out[32768];
	bt_test_run(out, sizeof(out), "LC_ALL=C readelf -SW '%s' | sed -n 's/^ *\\[ *[0-9]*\\] //p'", path);
	name[0] = '\0';
	for (char *line = out, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		*nl = '\0';
		char sec[64];
		unsigned long a, size;
		if (sscanf(line, "%63s %*s %lx %*s %lx", sec, &a, &size) == 3 && a && addr >= a && addr < a + size) {
			snprintf(name, len, "%s", sec);
			return;
		}
	}
}

/* Each kind of PLT entry: .plt.sec's (IBT), with the whole pushing .plt named ".plt"; .plt.got's
 * (GLOB_DAT); and libc's ifunc entries (IRELATIVE), named after the ifunc nm lists at the
 * relocation's addend. */
static void symtab__plt_kinds__named_from_relocations(void **state)
{
	char p[512], sec[64];
	struct bt_symtab *st = load_or_fail(fx(p, "fx-ibtplt"));
	bool in_sec = false, in_got = false;
	for (size_t i = 0; i < bt_symtab_count(st); i++) {
		const struct bt_sym *s = bt_symtab_at(st, i);
		if (!strstr(s->name, "@plt") && strcmp(s->name, ".plt") != 0)
			continue;
		section_of(p, s->addr, sec, sizeof(sec));
		if (strcmp(s->name, ".plt") == 0) {
			assert_string_equal(sec, ".plt");
			char out[64];
			bt_test_run(out, sizeof(out), "LC_ALL=C readelf -SW '%s' | awk '$2==\".plt\"{print $6}'", p);
			assert_int_equal(s->size, strtoull(out, NULL, 16));
		}
		in_sec |= strcmp(sec, ".plt.sec") == 0;
		in_got |= strcmp(sec, ".plt.got") == 0 && strcmp(s->name, "__cxa_finalize@plt") == 0;
	}
	assert_true(in_sec);
	assert_true(in_got);
	bt_symtab_free(st);

	/* libc: every IRELATIVE entry of .rela.plt is named NAME@plt, NAME an ifunc at its addend */
	char libc[512], out[16384];
	bt_test_run(libc, sizeof(libc), "awk '$6 ~ /\\/libc\\.so/ {print $6; exit}' /proc/%d/maps", (int)getpid());
	libc[strcspn(libc, "\n")] = '\0';
	st = load_or_fail(libc);
	bt_test_run(out, sizeof(out), "LC_ALL=C objdump -d -j .plt '%s' | grep -o '^[0-9a-f]* <\\*ABS\\*+0x[0-9a-f]*@plt>' "
		    "| sed 's/ <\\*ABS\\*+/ /; s/@plt>//'", libc);
	size_t n = 0;
	for (char *line = out, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1, n++) {
		*nl = '\0';
		char *sp = strchr(line, ' ');
		assert_non_null(sp);
		uint64_t entry = strtoull(line, NULL, 16), ifunc = strtoull(sp + 1, NULL, 16), off;
		const struct bt_sym *e = bt_symtab_lookup(st, entry, &off), *f = bt_symtab_lookup(st, ifunc, &off);
		assert_non_null(e);
		assert_non_null(f);
		assert_int_equal(f->addr, ifunc);
		char want[512], type[16];
		snprintf(want, sizeof(want), "%s@plt", f->name);
		assert_string_equal(e->name, want);
		bt_test_run(type, sizeof(type), "nm -D --defined-only '%s' | awk '$3==\"%s\" || $3 ~ /^%s@/ {print $2; exit}'",
			    libc, f->name, f->name);
		assert_true(type[0] == 'i' || type[0] == 'T' || type[0] == 't');
	}
	assert_true(n >= 10);
	bt_symtab_free(st);
}

/* A compressed module loads as its uncompressed self. */
static void symtab__compressed_module__same_as_plain(void **state)
{
	static const char *const names[] = { "fx-mod.ko.xz", "fx-mod.ko.zst", "fx-mod.ko.gz" };
	char p[512];
	struct bt_symtab *plain = load_or_fail(fx(p, "fx-mod.ko"));
	bool has_global = false;
	for (size_t i = 0; i < bt_symtab_count(plain); i++)
		has_global |= strcmp(bt_symtab_at(plain, i)->name, "fx_alias_of_global") == 0;
	assert_true(has_global);
	assert_int_equal(bt_symtab_layout(plain)->type, ET_REL);
	assert_int_equal(bt_symtab_layout(plain)->nload, 0);
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct bt_symtab *st = load_or_fail(fx(p, names[k]));
		assert_int_equal(bt_symtab_count(st), bt_symtab_count(plain));
		for (size_t i = 0; i < bt_symtab_count(st); i++)
			assert_string_equal(bt_symtab_at(st, i)->name, bt_symtab_at(plain, i)->name);
		bt_symtab_free(st);
	}
	bt_symtab_free(plain);
}

/* C++ names stay mangled, exactly as nm prints them without -C. */
static void symtab__cxx__names_stay_mangled(void **state)
{
	char p[512], out[256];
	struct bt_symtab *st = load_or_fail(fx(p, "fx-cxx"));
	bt_test_run(out, sizeof(out), "nm '%s' | awk '$3 ~ /^_ZN2fx8overloadEd/ {print $1, $3}'", p);
	char want[200];
	uint64_t addr;
	assert_int_equal(sscanf(out, "%" SCNx64 " %199s", &addr, want), 2);
	uint64_t off;
	const struct bt_sym *s = bt_symtab_lookup(st, addr, &off);
	assert_non_null(s);
	assert_string_equal(s->name, want);
	bt_symtab_free(st);
}

/* The table is shared between threads without locking; lookups agree with a single thread's. */
struct thread_arg {
	const struct bt_symtab *st;
	uint64_t lo, hi;
	const struct bt_sym **expect;
	size_t n;
	int mismatches;
};

static void *lookup_thread(void *p)
{
	struct thread_arg *a = p;
	for (int round = 0; round < 20; round++)
		for (size_t i = 0; i < a->n; i++) {
			uint64_t off;
			if (bt_symtab_lookup(a->st, a->lo + (a->hi - a->lo) * i / a->n, &off) != a->expect[i])
				a->mismatches++;
		}
	return NULL;
}

static void symtab__concurrent_lookups__agree(void **state)
{
	char p[512];
	struct bt_symtab *st = NULL;
	char libc[512];
	bt_test_run(libc, sizeof(libc), "sed -n 's,^.* \\(/.*/libc\\.so\\.6\\)$,\\1,p' /proc/%d/maps | head -n1", (int)getpid());
	libc[strcspn(libc, "\n")] = '\0';
	st = load_or_fail(libc[0] ? libc : fx(p, "fx-sha1"));
	size_t cnt = bt_symtab_count(st);
	enum { N = 20000 };
	struct thread_arg a = { .st = st, .lo = bt_symtab_at(st, 0)->addr, .hi = bt_symtab_at(st, cnt - 1)->addr, .n = N };
	a.expect = malloc(N * sizeof(*a.expect));
	assert_non_null(a.expect);
	size_t found = 0;
	for (size_t i = 0; i < N; i++) {
		uint64_t off;
		a.expect[i] = bt_symtab_lookup(st, a.lo + (a.hi - a.lo) * i / N, &off);
		found += a.expect[i] != NULL;
	}
	/* probes fall both inside symbols and in the gaps between them */
	assert_true(found > N / 10 && found < N);
	struct thread_arg b = a;
	pthread_t t1, t2;
	assert_int_equal(pthread_create(&t1, NULL, lookup_thread, &a), 0);
	assert_int_equal(pthread_create(&t2, NULL, lookup_thread, &b), 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	assert_int_equal(a.mismatches, 0);
	assert_int_equal(b.mismatches, 0);
	free(a.expect);
	bt_symtab_free(st);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A 100 MB library loads well within a second, and agrees with nm. */
static void symtab__large_library__loads_fast_and_agrees_with_nm(void **state)
{
	char path[512];
	bt_test_run(path, sizeof(path), "ls /usr/lib/*/libLLVM-1[0-9].so.1 /usr/lib/*/libLLVM-1[0-9]*.so 2>/dev/null | head -n1");
	path[strcspn(path, "\n")] = '\0';
	if (!path[0])
		fail_msg("no libLLVM found: it comes with clang (package libllvm14)");
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_true(sb.st_size > 50 * 1000 * 1000);
	double t0 = now();
	struct bt_symtab *st = load_or_fail(path);
	double took = now() - t0;
	print_message("loaded %zu symbols of %s (%lld MB) in %.3f s\n", bt_symtab_count(st), path,
		      (long long)sb.st_size >> 20, took);
	assert_true(took < 1.0);
	assert_true(bt_symtab_count(st) > 10000);
	struct nm_file f = { .path = strdup(path) };
	nm_oracle(&f, 1);
	check_against_nm(st, &f);
	nm_file_free(&f);
	bt_symtab_free(st);
}

/* ---- /usr/bin: every program with a build-id -------------------------------------------------- */

static void symtab__usr_bin__buildids_and_symbols_agree_with_readelf_and_nm(void **state)
{
	DIR *d = opendir("/usr/bin");
	assert_non_null(d);
	struct nm_file *files = NULL;
	size_t n = 0, cap = 0;
	struct { dev_t dev; ino_t ino; } *seen = NULL;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char p[600];
		struct stat sb;
		snprintf(p, sizeof(p), "/usr/bin/%s", de->d_name);
		if (strchr(de->d_name, '\'') || stat(p, &sb) != 0 || !S_ISREG(sb.st_mode) || access(p, R_OK) != 0)
			continue;
		bool dup = false;  /* hard links and symlinks to one file: check it once */
		for (size_t i = 0; i < n && !dup; i++)
			dup = seen[i].dev == sb.st_dev && seen[i].ino == sb.st_ino;
		if (dup)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			files = realloc(files, cap * sizeof(*files));
			seen = realloc(seen, cap * sizeof(*seen));
			assert_non_null(files);
			assert_non_null(seen);
		}
		memset(&files[n], 0, sizeof(files[n]));
		files[n].path = strdup(p);
		seen[n].dev = sb.st_dev;
		seen[n].ino = sb.st_ino;
		n++;
	}
	closedir(d);
	size_t with_id = 0, with_funcs = 0, lookups = 0;
	enum { BATCH = 64 };
	for (size_t b = 0; b < n; b += BATCH) {
		size_t k = n - b < BATCH ? n - b : BATCH;
		nm_oracle(&files[b], k);
		for (size_t i = b; i < b + k; i++) {
			struct nm_file *f = &files[i];
			struct bt_build_id id;
			char hex[2 * BT_BUILD_ID_MAXLEN + 1];
			int err = bt_buildid_from_path(f->path, &id);
			if (!f->bid[0]) {
				if (err == 0)
					fail_msg("%s: readelf shows no build-id, we read %s", f->path,
						 bt_buildid_hex(&id, hex, sizeof(hex)));
				assert_true(err == -ENODATA || err == -ENOEXEC);
				nm_file_free(f);
				continue;
			}
			with_id++;
			if (err)
				fail_msg("%s: %d", f->path, err);
			assert_string_equal(bt_buildid_hex(&id, hex, sizeof(hex)), f->bid);
			struct bt_symtab *st = NULL;
			err = bt_symtab_load_path(f->path, &st);
			if (nm_funcs(f) == 0) {
				assert_int_equal(err, -ENODATA);
			} else {
				if (err)
					fail_msg("%s: %d", f->path, err);
				check_against_nm(st, f);
				with_funcs++;
				lookups += nm_funcs(f);
			}
			bt_symtab_free(st);
			nm_file_free(f);
		}
	}
	print_message("/usr/bin: %zu files, %zu with a build-id, %zu with functions, %zu lookups checked\n", n,
		      with_id, with_funcs, lookups);
	assert_true(with_id > 20);
	assert_true(with_funcs > 5);
	free(files);
	free(seen);
}

/* ---- hostile and truncated files -------------------------------------------------------------- */

/* What any table must satisfy, however odd the file it came from. */
static void check_invariants(const struct bt_symtab *st)
{
	size_t n = bt_symtab_count(st);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		const struct bt_sym *s = bt_symtab_at(st, i);
		assert_non_null(s->name);
		assert_true(s->name[0] != '\0');
		assert_true(s->addr != 0);
		if (i)
			assert_true(bt_symtab_at(st, i - 1)->addr < s->addr);
		uint64_t off;
		const struct bt_sym *got = bt_symtab_lookup(st, s->addr, &off);
		/* a symbol's own address is its own, unless its extent is empty (a hostile section end) */
		if (got)
			assert_true(got->addr <= s->addr);
	}
}

/* Prefixes lose the section headers at the end, so they fail cleanly; zeroed windows anywhere else
 * leave loadable tables that must still be consistent. */
static void symtab__truncated_or_zeroed__error_or_consistent(void **state)
{
	static const char *const names[] = { "libfx.so", "fx-mips", "fx-i386" };
	char p[512];
	for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		size_t len;
		unsigned char *full = bt_test_read_file(fx(p, names[f]), &len);
		size_t loaded = 0;
		for (size_t cut = 0; cut < len; cut += 3) {
			unsigned char *copy = malloc(cut ? cut : 1);
			assert_non_null(copy);
			memcpy(copy, full, cut);
			struct bt_elf *e;
			if (bt_elf_open_mem(copy, cut, &e) == 0) {
				struct bt_symtab *st = NULL;
				int err = bt_symtab_load(e, &st);
				bt_elf_close(e);
				if (err == 0) {
					check_invariants(st);  /* after the close: the table owns its names */
					bt_symtab_free(st);
				} else {
					assert_true(err == -ENODATA || err == -ENOEXEC);
				}
			}
			free(copy);
		}
		for (size_t at = 0; at < len; at += 16) {
			unsigned char *copy = malloc(len);
			assert_non_null(copy);
			memcpy(copy, full, len);
			memset(copy + at, 0, len - at < 64 ? len - at : 64);
			struct bt_elf *e;
			if (bt_elf_open_mem(copy, len, &e) == 0) {
				struct bt_symtab *st = NULL;
				int err = bt_symtab_load(e, &st);
				bt_elf_close(e);
				if (err == 0) {
					loaded++;
					check_invariants(st);
					bt_symtab_free(st);
				} else {
					assert_true(err == -ENODATA || err == -ENOEXEC);
				}
			}
			free(copy);
		}
		assert_true(loaded > len / 16 / 2);
		free(full);
	}
}

/* Symbol table sections and symbols rewritten with values far out of range. */
static void symtab__hostile_symbol_tables__no_crash(void **state)
{
	char p[512];
	size_t len;
	unsigned char *orig = bt_test_read_file(fx(p, "fx-sha1"), &len);
	const Elf64_Ehdr *oeh = (const Elf64_Ehdr *)orig;
	assert_int_equal(oeh->e_ident[EI_CLASS], ELFCLASS64);
	static const uint64_t nasty[] = { 0, 1, 7, 0x7fffffff, 0xffffffff, UINT64_MAX, UINT64_MAX - 7, 1ull << 40 };
	size_t nn = sizeof(nasty) / sizeof(nasty[0]);
	srand(4242);
	int loaded = 0;
	for (int round = 0; round < 3000; round++) {
		unsigned char *b = malloc(len);
		assert_non_null(b);
		memcpy(b, orig, len);
		Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
		Elf64_Shdr *sh = (Elf64_Shdr *)(b + eh->e_shoff);
		/* pick a symbol table, and damage it or one of its symbols */
		Elf64_Shdr *tab = NULL;
		for (unsigned i = 0; i < eh->e_shnum; i++)
			if ((sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM) && (!tab || rand() % 2))
				tab = &sh[i];
		assert_non_null(tab);
		Elf64_Sym *syms = (Elf64_Sym *)(b + tab->sh_offset);
		Elf64_Sym *s = &syms[(size_t)rand() % (tab->sh_size / sizeof(Elf64_Sym))];
		uint64_t v = nasty[(size_t)rand() % nn];
		switch (rand() % 10) {
		case 0: tab->sh_link = (uint32_t)v; break;
		case 1: tab->sh_entsize = v; break;
		case 2: tab->sh_size = v; break;
		case 3: tab->sh_offset = v; break;
		case 4: s->st_name = (uint32_t)v; break;
		case 5: s->st_shndx = (uint16_t)v; break;
		case 6: s->st_size = v; break;
		case 7: s->st_value = v; break;
		case 8: s->st_info = (unsigned char)rand(); break;
		default: sh[tab->sh_link].sh_size = v; break;  /* its string table */
		}
		struct bt_elf *e;
		if (bt_elf_open_mem(b, len, &e) == 0) {
			struct bt_symtab *st = NULL;
			int err = bt_symtab_load(e, &st);
			bt_elf_close(e);
			if (err == 0) {
				loaded++;
				check_invariants(st);
				bt_symtab_free(st);
			} else if (err != -ENODATA && err != -ENOEXEC) {
				fail_msg("round %d: %d", round, err);
			}
		}
		free(b);
	}
	assert_true(loaded > 1000);
	free(orig);
}

static void symtab__not_elf_or_bad_args__errors(void **state)
{
	struct bt_symtab *st = NULL;
	assert_int_equal(bt_symtab_load_path("/etc/hostname-does-not-exist", &st), -ENOENT);
	assert_int_equal(bt_symtab_load_path("/dev/null", &st), -EINVAL);
	assert_int_equal(bt_symtab_load(NULL, &st), -EINVAL);
	assert_int_equal(bt_symtab_count(NULL), 0);
	assert_null(bt_symtab_at(NULL, 0));
	assert_null(bt_symtab_layout(NULL));
	assert_int_equal(bt_symtab_load_with_plt(NULL, NULL, &st), -EINVAL);
	bt_symtab_free(NULL);
}

/* A file another process truncates in place after buildtrace opened it: reading the symbols then
 * must fail with an error, not kill the process with SIGBUS (as reading a mapping past the new end
 * of the file would). Run in a child so that a SIGBUS shows as a failure, not a crashed binary. */
/* Versions are kept beside the names: for every function of libc's dynamic symbol table whose name
 * is the one kept at its address, the default version readelf prints (name@@VER) is the table's
 * (older ones, name@VER at the same address, are not); and no name carries an @. */
static void symtab__versions__kept_beside_names_as_readelf_prints_them(void **state)
{
	char libc[512];
	bt_test_run(libc, sizeof(libc), "awk '$6 ~ /\\/libc\\.so/ {print $6; exit}' /proc/%d/maps", (int)getpid());
	libc[strcspn(libc, "\n")] = '\0';
	struct bt_elf *e = NULL;
	assert_int_equal(bt_elf_open_path(libc, &e), 0);
	struct bt_symtab *st = NULL;
	assert_int_equal(bt_symtab_load(e, &st), 0);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "readelf -W --dyn-syms %s | awk '$4 == \"FUNC\" && $7 != \"UND\" && $8 ~ /@@/ "
		 "{ print $2, $8 }'", libc);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[1024];
	size_t checked = 0, wrong = 0;
	while (fgets(line, sizeof(line), p)) {
		char name[512];
		unsigned long long addr;
		if (sscanf(line, "%llx %511s", &addr, name) != 2)
			continue;
		char *at = strstr(name, "@@");
		const char *ver = at + 2;
		*at = '\0';
		uint64_t off;
		const struct bt_sym *sym = bt_symtab_lookup(st, addr, &off);
		if (!sym || off || strcmp(sym->name, name))
			continue;  /* another alias names this address */
		const char *got = bt_symtab_version(st, sym);
		checked++;
		if (!got || strcmp(got, ver)) {
			if (wrong++ < 5)
				print_message("%s: readelf %s, table %s\n", name, ver, got ? got : "(none)");
		}
	}
	pclose(p);
	/* the only @ in a name is a PLT entry's FUNC@plt */
	for (size_t i = 0; i < bt_symtab_count(st); i++) {
		const char *n = bt_symtab_at(st, i)->name, *at = strchr(n, '@');
		if (at && strcmp(at, "@plt"))
			fail_msg("a version in the name %s", n);
	}
	bt_symtab_free(st);
	bt_elf_close(e);
	print_message("%zu versions compared\n", checked);
	assert_true(checked > 500);
	assert_int_equal(wrong, 0);
}

static void symtab__file_truncated_after_open__error_not_sigbus(void **state)
{
	char tmp[] = "/tmp/bt-trunc-XXXXXX";
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "cp \"$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)\" '%s'", tmp);
	assert_int_equal(system(cmd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct bt_elf *e = NULL;
		if (bt_elf_open_fd(fd, &e) != 0)
			_exit(10);
		if (ftruncate(fd, 64 * 1024) != 0)
			_exit(11);
		struct bt_symtab *t = NULL;
		int err = bt_symtab_load(e, &t);
		const void *data;
		size_t len;
		int serr = bt_elf_section(e, ".gnu_debuglink", &data, &len);
		bt_symtab_free(t);
		bt_elf_close(e);
		/* the symbol tables and the debuglink lie past 64 KiB: both must be errors */
		_exit(err < 0 && serr < 0 ? 0 : 12);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(fd);
	unlink(tmp);
	if (WIFSIGNALED(st))
		fail_msg("reading a truncated file killed the reader with signal %d", WTERMSIG(st));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symtab__file_truncated_after_open__error_not_sigbus),
		cmocka_unit_test(symtab__versions__kept_beside_names_as_readelf_prints_them),
		cmocka_unit_test(symtab__fixtures__agree_with_nm),
		cmocka_unit_test(symtab__system_libraries__agree_with_nm),
		cmocka_unit_test_setup_teardown(symtab__sized_symbol__no_symbol_past_its_end, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(symtab__zero_size_symbol__extends_to_next, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(symtab__zero_size_symbol__stops_at_section_end, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(symtab__aliases__global_over_weak_over_local, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(symtab__aliases__fewer_underscores_then_longest_then_first, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(symtab__table__sorted_one_entry_per_address, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(symtab__unsized_global_with_sized_alias__sized_names_it, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(symtab__nested_symbol__outer_covers_past_inner, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(symtab__ifunc_kept_object_and_notype_skipped, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(symtab__before_first_symbol__null, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(symtab__names__stored_in_one_arena, fx_setup, fx_teardown),
		cmocka_unit_test(symtab__lookup_offset__matches_section_offsets),
		cmocka_unit_test(symtab__running_code__found_by_file_offset),
		cmocka_unit_test(symtab__stripped_executable__plt_entries_only),
		cmocka_unit_test(symtab__debug_file__same_symbols_as_original),
		cmocka_unit_test(symtab__plt_kinds__named_from_relocations),
		cmocka_unit_test(symtab__compressed_module__same_as_plain),
		cmocka_unit_test(symtab__cxx__names_stay_mangled),
		cmocka_unit_test(symtab__concurrent_lookups__agree),
		cmocka_unit_test(symtab__large_library__loads_fast_and_agrees_with_nm),
		cmocka_unit_test(symtab__usr_bin__buildids_and_symbols_agree_with_readelf_and_nm),
		cmocka_unit_test(symtab__truncated_or_zeroed__error_or_consistent),
		cmocka_unit_test(symtab__hostile_symbol_tables__no_crash),
		cmocka_unit_test(symtab__not_elf_or_bad_args__errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
