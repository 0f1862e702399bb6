/* test_ehtable.c - the compiled unwind tables against readelf --debug-dump=frames-interp, row by
 * row, on the libc and ld.so this test runs with, the test program itself, a fixture whose CFI is
 * in .debug_frame only, and a PLT: at the first and last address of every row readelf prints, the
 * CFA rule (register and offset), the return address (at CFA - 8, or undefined: the outermost
 * frame) and rbp (unchanged, or saved at CFA + N) agree; the FDE count agrees; addresses between
 * FDEs have no CFI. Prints each table's size. */
#include "testutil.h"
#include "elf/ehtable.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_COLS 24

struct fde {
	uint64_t lo, hi;
};

struct oracle {
	const struct bt_ehtable *t;
	const char *path;
	size_t rows_checked, fdes, plt_rows, saved_rbp, saved_rbx, signal_rows;
	struct fde *fdes_seen;
	size_t nfdes_seen, capfdes;
	/* the FDE being read */
	uint64_t lo, hi;
	bool in_fde, have_rows;
	char cols[MAX_COLS][16];
	size_t ncols;
	/* the previous row of that FDE, checked once its end is known */
	bool pending;
	uint64_t ploc;
	char pcfa[32], pra[16], prbp[16], prbx[16];
	/* the CIEs' initial rows, for FDEs readelf prints no rows for */
	struct cie_row {
		uint64_t off;
		char cfa[32], ra[16], rbp[16], rbx[16];
	} cies[64];
	size_t ncies;
	uint64_t cur_cie;
	bool in_cie;
};

/* A callee-saved register's column against its kind and offset in the row. */
static void check_saved(const char *where, const char *col, const char *name, uint8_t kind, int16_t off,
			size_t *saved)
{
	long v;
	int n = 0;
	if (!*col || !strcmp(col, "u")) {
		/* readelf's "u" is also a register not yet saved in this FDE: the caller's value */
		if (kind != BT_UNW_RBP_SAME)
			fail_msg("%s: %s is not saved here", where, name);
	} else if (sscanf(col, "c%ld%n", &v, &n) == 1 && !col[n]) {
		if (kind != BT_UNW_RBP_CFA || off != v)
			fail_msg("%s: the saved %s differs", where, name);
		(*saved)++;
	} else if (kind != BT_UNW_RBP_LOST) {
		fail_msg("%s: a %s rule the walker cannot follow must say so", where, name);
	}
}

static void check_one(struct oracle *o, uint64_t pc, const char *cfa, const char *ra, const char *rbp,
		      const char *rbx)
{
	const struct bt_unw_rule *r = bt_ehtable_lookup(o->t, pc);
	if (!r)
		fail_msg("%s: no row at %#" PRIx64, o->path, pc);
	char where[256];
	snprintf(where, sizeof(where), "%s at %#" PRIx64 " (readelf: CFA %s, ra %s, rbp %s, rbx %s; ours: cfa "
		 "%u%+d rbp %u%+d rbx %u%+d)", o->path, pc, cfa, ra, rbp, rbx, r->cfa, r->cfa_off, r->rbp,
		 r->rbp_off, r->rbx, r->rbx_off);
	o->rows_checked++;
	if (!strcmp(ra, "u")) {
		if (r->cfa != BT_UNW_END)
			fail_msg("%s: expected the outermost frame", where);
		return;
	}
	int n = 0;
	long off = 0;
	if (!strcmp(cfa, "exp") && r->cfa == BT_UNW_SIGNAL) {
		o->signal_rows++;   /* a signal trampoline: its rules are all expressions */
		return;
	}
	if (strcmp(ra, "c-8")) {
		if (r->cfa != BT_UNW_BAD && r->cfa != BT_UNW_SIGNAL)
			fail_msg("%s: a return address not at CFA - 8 must be refused", where);
		o->signal_rows += r->cfa == BT_UNW_SIGNAL;
		return;
	}
	if (!strcmp(cfa, "exp")) {
		if (r->cfa != BT_UNW_CFA_PLT && r->cfa != BT_UNW_CFA_DEREF && r->cfa != BT_UNW_SIGNAL &&
		    r->cfa != BT_UNW_BAD)
			fail_msg("%s: an expression taken for a register rule", where);
		o->plt_rows += r->cfa == BT_UNW_CFA_PLT;
		return;
	}
	if (sscanf(cfa, "rsp%ld%n", &off, &n) == 1 && !cfa[n]) {
		if (r->cfa != BT_UNW_CFA_RSP || r->cfa_off != off)
			fail_msg("%s: CFA differs", where);
	} else if (sscanf(cfa, "rbp%ld%n", &off, &n) == 1 && !cfa[n]) {
		if (r->cfa != BT_UNW_CFA_RBP || r->cfa_off != off)
			fail_msg("%s: CFA differs", where);
	} else if (sscanf(cfa, "rbx%ld%n", &off, &n) == 1 && !cfa[n]) {
		if (r->cfa != BT_UNW_CFA_RBX || r->cfa_off != off)
			fail_msg("%s: CFA differs", where);
	} else {
		if (r->cfa != BT_UNW_BAD)
			fail_msg("%s: a CFA on another register must be refused", where);
		return;
	}
	check_saved(where, rbp, "rbp", r->rbp, r->rbp_off, &o->saved_rbp);
	check_saved(where, rbx, "rbx", r->rbx, r->rbx_off, &o->saved_rbx);
}

/* The previous row holds up to end (exclusive): its first and last address. */
static void flush(struct oracle *o, uint64_t end)
{
	if (!o->pending)
		return;
	o->pending = false;
	check_one(o, o->ploc, o->pcfa, o->pra, o->prbp, o->prbx);
	if (end - 1 != o->ploc)
		check_one(o, end - 1, o->pcfa, o->pra, o->prbp, o->prbx);
}

static void end_fde(struct oracle *o)
{
	if (!o->in_fde)
		return;
	flush(o, o->hi);
	if (!o->have_rows) {
		/* readelf prints no rows when the FDE adds none to its CIE's */
		for (size_t i = 0; i < o->ncies; i++) {
			if (o->cies[i].off != o->cur_cie)
				continue;
			const struct cie_row *c = &o->cies[i];
			check_one(o, o->lo, c->cfa, c->ra, c->rbp, c->rbx);
			check_one(o, o->hi - 1, c->cfa, c->ra, c->rbp, c->rbx);
		}
	}
	o->in_fde = false;
}

static void read_row(struct oracle *o, const char *line)
{
	char tok[MAX_COLS + 2][32];
	size_t nt = 0;
	const char *p = line;
	int n;
	char word[32];
	while (nt < MAX_COLS + 2 && sscanf(p, "%31s%n", word, &n) == 1) {
		p += n;
		/* "r9 (r9)": a register rule, one column */
		if (word[0] == '(' && nt)
			continue;
		snprintf(tok[nt++], sizeof(tok[0]), "%s", word);
	}
	/* a row begins with its 16-digit address (the "ZERO terminator" line does not) */
	if (nt < 2 || nt - 2 != o->ncols || strlen(tok[0]) != 16)
		return;
	const char *ra = "", *rbp = "", *rbx = "";
	for (size_t i = 0; i < o->ncols; i++) {
		if (!strcmp(o->cols[i], "ra"))
			ra = tok[2 + i];
		else if (!strcmp(o->cols[i], "rbp"))
			rbp = tok[2 + i];
		else if (!strcmp(o->cols[i], "rbx"))
			rbx = tok[2 + i];
	}
	if (o->in_cie) {
		if (o->ncies < 64 && (o->ncies == 0 || o->cies[o->ncies - 1].off != o->cur_cie)) {
			struct cie_row *c = &o->cies[o->ncies++];
			c->off = o->cur_cie;
			snprintf(c->cfa, sizeof(c->cfa), "%s", tok[1]);
			snprintf(c->ra, sizeof(c->ra), "%s", ra);
			snprintf(c->rbp, sizeof(c->rbp), "%s", rbp);
			snprintf(c->rbx, sizeof(c->rbx), "%s", rbx);
		}
		return;
	}
	if (!o->in_fde)
		return;
	uint64_t loc = strtoull(tok[0], NULL, 16);
	flush(o, loc);
	o->pending = true;
	o->have_rows = true;
	o->ploc = loc;
	snprintf(o->pcfa, sizeof(o->pcfa), "%s", tok[1]);
	snprintf(o->pra, sizeof(o->pra), "%s", ra);
	snprintf(o->prbp, sizeof(o->prbp), "%s", rbp);
	snprintf(o->prbx, sizeof(o->prbx), "%s", rbx);
}

static void read_line(struct oracle *o, const char *line)
{
	unsigned long long off, len, id, lo, hi, cie;
	int n = 0;
	if (sscanf(line, "%llx %llx %llx CIE%n", &off, &len, &id, &n) == 3 && n) {
		end_fde(o);
		o->in_cie = true;
		o->cur_cie = off;
		return;
	}
	if (sscanf(line, "%llx %llx %llx FDE cie=%llx pc=%llx..%llx", &off, &len, &id, &cie, &lo, &hi) == 6) {
		end_fde(o);
		o->in_cie = false;
		if (hi <= lo)
			return;
		o->in_fde = true;
		o->have_rows = false;
		o->lo = lo;
		o->hi = hi;
		o->cur_cie = cie;
		o->fdes++;
		if (o->nfdes_seen == o->capfdes) {
			o->capfdes = o->capfdes ? 2 * o->capfdes : 1024;
			o->fdes_seen = realloc(o->fdes_seen, o->capfdes * sizeof(*o->fdes_seen));
			assert_non_null(o->fdes_seen);
		}
		o->fdes_seen[o->nfdes_seen++] = (struct fde){ lo, hi };
		return;
	}
	if (sscanf(line, " LOC %n", &n) == 0 && n) {
		o->ncols = 0;
		const char *p = line + n;
		int m;
		char name[16];
		while (o->ncols < MAX_COLS && sscanf(p, "%15s%n", name, &m) == 1) {
			if (strcmp(name, "CFA"))
				snprintf(o->cols[o->ncols++], sizeof(o->cols[0]), "%s", name);
			p += m;
		}
		return;
	}
	if (sscanf(line, "%llx", &off) == 1)
		read_row(o, line);
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Addresses after an FDE that no other FDE covers have no CFI. */
static void check_gaps(struct oracle *o)
{
	qsort(o->fdes_seen, o->nfdes_seen, sizeof(*o->fdes_seen), cmp_fde);
	uint64_t covered = 0;
	for (size_t i = 0; i < o->nfdes_seen; i++) {
		if (i && o->fdes_seen[i].lo > covered) {
			const struct bt_unw_rule *r = bt_ehtable_lookup(o->t, covered);
			assert_non_null(r);
			if (r->cfa != BT_UNW_NONE)
				fail_msg("%s: %#" PRIx64 " lies between FDEs but has a rule", o->path, covered);
		}
		if (o->fdes_seen[i].hi > covered)
			covered = o->fdes_seen[i].hi;
	}
	const struct bt_unw_rule *r = bt_ehtable_lookup(o->t, covered);
	assert_non_null(r);
	assert_int_equal(r->cfa, BT_UNW_NONE);
}

/* Compiles path and compares it with readelf; the oracle's counts. */
static struct oracle compare(const char *path, struct bt_ehtable *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	int err = bt_ehtable_compile(fd, t);
	close(fd);
	if (err)
		fail_msg("%s: compiling its CFI: %s", path, strerror(-err));
	struct oracle o = { .t = t, .path = path };
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	char line[1024];
	while (fgets(line, sizeof(line), f))
		read_line(&o, line);
	end_fde(&o);
	/* readelf exits 1 on some files (ld.so) after printing all of it: its output is checked */
	pclose(f);
	assert_true(o.rows_checked > 0);
	assert_int_equal(o.fdes, t->fdes);
	check_gaps(&o);
	printf("# %s: %zu FDEs, %zu rows (%zu KiB), %zu refused, %zu addresses checked against readelf\n",
	       path, t->fdes, t->n, bt_ehtable_bytes(t) >> 10, t->bad, o.rows_checked);
	free(o.fdes_seen);
	return o;
}

/* The path of a file this process maps whose name contains needle. */
static void mapped(const char *needle, char *buf, size_t len)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "awk '$6 ~ /%s/ {print $6; exit}' /proc/%d/maps", needle, (int)getpid());
	assert_int_equal(bt_test_run(buf, len, "%s", cmd), 0);
	buf[strcspn(buf, "\n")] = '\0';
	assert_true(buf[0] == '/');
}

static void ehtable__libc__every_row_agrees_with_readelf(void **state)
{
	char path[4096];
	mapped("libc\\.so", path, sizeof(path));
	struct bt_ehtable t;
	struct oracle o = compare(path, &t);
	/* libc saves rbp and rbx at offsets from the CFA in many functions; __restore_rt is the signal
	 * trampoline */
	assert_true(o.saved_rbp > 0 && o.saved_rbx > 0);
	assert_true(o.signal_rows > 0);
	assert_false(t.debug_frame);
	bt_ehtable_free(&t);
}

static void ehtable__ldso_and_this_program__agree_with_readelf(void **state)
{
	char path[4096];
	struct bt_ehtable t;
	mapped("ld-linux", path, sizeof(path));
	compare(path, &t);
	bt_ehtable_free(&t);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	struct oracle o = compare(self, &t);
	/* the program's _start (from crt1.o) has an undefined return address; its PLT an expression */
	const struct bt_unw_row *end = NULL;
	for (size_t i = 0; i < t.n; i++)
		if (t.rules[t.rows[i].rule].cfa == BT_UNW_END)
			end = &t.rows[i];
	assert_non_null(end);
	assert_true(o.plt_rows > 0);
	bt_ehtable_free(&t);
}

static void ehtable__debug_frame_only__compiled_from_it(void **state)
{
	char path[4096];
	bt_test_fixture(path, sizeof(path), "fx-dbgframe");
	struct bt_ehtable t;
	compare(path, &t);
	assert_true(t.debug_frame);
	bt_ehtable_free(&t);
}

static void ehtable__no_cfi_or_not_elf__refused(void **state)
{
	struct bt_ehtable t;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(bt_ehtable_compile(fd, &t), -ENOEXEC);
	close(fd);
	static const char junk[64] = "\177ELF";
	assert_true(bt_ehtable_compile_mem(junk, sizeof(junk), &t) < 0);
}

/* A file found by fuzzing: its CFI names register 134,000,000, for which libdw grows a frame's
 * register array to 2 GB. Refused as malformed before libdw runs its instructions. */
static void ehtable__crafted_register_number__refused(void **state)
{
	int fd = open("fuzz/regress/ehtable/register-number-134m", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct bt_ehtable t;
	assert_int_equal(bt_ehtable_compile(fd, &t), -ENOEXEC);
	close(fd);
}

/* One FDE of 80,000 rows would cost libdw 6.4e9 steps (minutes) for one file: refused at once. A
 * real file's largest (cc1's, 6,678 rows) stays well inside the bound. */
static void ehtable__fde_of_too_many_rows__refused(void **state)
{
	char path[4096];
	bt_test_fixture(path, sizeof(path), "fx-longfde");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct bt_ehtable t;
	assert_int_equal(bt_ehtable_compile(fd, &t), -E2BIG);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ehtable__libc__every_row_agrees_with_readelf),
		cmocka_unit_test(ehtable__ldso_and_this_program__agree_with_readelf),
		cmocka_unit_test(ehtable__debug_frame_only__compiled_from_it),
		cmocka_unit_test(ehtable__no_cfi_or_not_elf__refused),
		cmocka_unit_test(ehtable__crafted_register_number__refused),
		cmocka_unit_test(ehtable__fde_of_too_many_rows__refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
