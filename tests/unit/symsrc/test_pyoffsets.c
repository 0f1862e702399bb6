/* test_pyoffsets.c - every figure of the CPython offsets tables against the DWARF of the
 * interpreters they describe: Debian's python3.11 (the debug file python3.11-dbg installs for its
 * build-id) and pyenv's libpython3.8 to 3.13 (built with debug information); and 3.13's own
 * description of its layout (_Py_DebugOffsets), read from its file, against the same. */
#include "testutil.h"
#include "symsrc/pyoffsets.h"
#include "symsrc/pyruntime.h"

#include <dwarf.h>
#include <errno.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The debug file of /usr/bin/python3.X by its build-id (readelf is the oracle), or NULL. */
static const char *debug_file(unsigned minor, char *buf, size_t len)
{
	char id[128];
	if (bt_test_run(id, sizeof(id), "readelf -n /usr/bin/python3.%u 2>/dev/null | "
			"awk '/Build ID/ { print $3 }'", minor) != 0 || strlen(id) < 4)
		return NULL;
	id[strcspn(id, "\n")] = '\0';
	snprintf(buf, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	return access(buf, R_OK) == 0 ? buf : NULL;
}

static bool die_named(Dwarf_Die *d, const char *name)
{
	const char *n = dwarf_diename(d);
	return n && strcmp(n, name) == 0;
}

/* The die d's DW_AT_type refers to, through typedefs and qualifiers. */
static bool peel_type(Dwarf_Die *d, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	Dwarf_Die t = *d;
	for (int i = 0; i < 16; i++) {
		if (!dwarf_attr_integrate(&t, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
			return false;
		int tag = dwarf_tag(&t);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type) {
			*out = t;
			return true;
		}
	}
	return false;
}

/* A complete definition of struct or typedef name in the file. */
static bool find_type(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
			do {
				int tag = dwarf_tag(&child);
				Dwarf_Die t;
				if (!die_named(&child, name))
					continue;
				if (tag == DW_TAG_structure_type && dwarf_hasattr(&child, DW_AT_byte_size)) {
					*out = child;
					return true;
				}
				if (tag == DW_TAG_typedef && peel_type(&child, &t) &&
				    dwarf_tag(&t) == DW_TAG_structure_type && dwarf_hasattr(&t, DW_AT_byte_size)) {
					*out = t;
					return true;
				}
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	return false;
}

static bool find_member(Dwarf_Die *st, const char *name, size_t len, Dwarf_Die *out)
{
	Dwarf_Die m;
	if (dwarf_child(st, &m) != 0)
		return false;
	do {
		const char *n = dwarf_diename(&m);
		if (dwarf_tag(&m) == DW_TAG_member && n && strlen(n) == len && !memcmp(n, name, len)) {
			*out = m;
			return true;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

/* The figure DWARF gives for a field of the table (see struct bt_py_field); -1 when not found. */
static long dwarf_figure(Dwarf *dw, const struct bt_py_field *f)
{
	Dwarf_Die st;
	if (!find_type(dw, f->type, &st))
		return -1;
	if (!strcmp(f->member, "sizeof"))
		return dwarf_bytesize(&st);
	long total = 0;
	for (const char *p = f->member; *p;) {
		size_t len = strcspn(p, ".");
		Dwarf_Die m;
		Dwarf_Attribute a;
		Dwarf_Word v;
		if (!find_member(&st, p, len, &m))
			return -1;
		p += len + (p[len] == '.');
		if (dwarf_attr(&m, DW_AT_data_bit_offset, &a) && dwarf_formudata(&a, &v) == 0)
			return *p ? -1 : (long)v;  /* a bit-field: its bit number in the unit */
		if (!dwarf_attr(&m, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &v) != 0)
			return -1;
		total += (long)v;
		if (*p && !peel_type(&m, &st))
			return -1;
	}
	return total;
}

/* Every figure of table o against the DWARF of file path. */
static void check_dwarf(const char *path, const struct bt_py_offsets *o)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	size_t n;
	const struct bt_py_field *f = bt_pyoffsets_fields(o, &n);
	assert_true(n >= 20);
	for (size_t i = 0; i < n; i++) {
		long want = dwarf_figure(dw, &f[i]);
		if (want != (long)bt_pyoffsets_value(o, &f[i]))
			fail_msg("%s, %s %s: the table of 3.%u says %u, DWARF %ld", path, f[i].type, f[i].member,
				 o->minor, bt_pyoffsets_value(o, &f[i]), want);
	}
	print_message("%s: %zu figures of 3.%u as DWARF gives them\n", path, n, o->minor);
	dwarf_end(dw);
	close(fd);
}

static void pyoffsets__python311__every_figure_matches_dwarf(void **state)
{
	char path[512];
	if (!debug_file(11, path, sizeof(path))) {
		if (bt_test_in_ci())
			fail_msg("python3.11 or the debug file of python3.11-dbg is missing");
		skip();
	}
	const struct bt_py_offsets *o = bt_pyoffsets_get(3, 11);
	assert_non_null(o);
	check_dwarf(path, o);
}

/* pyenv's libpython3.minor, or NULL (a failure under CI) */
static const char *pyenv_lib(unsigned minor, char *buf, size_t len)
{
	char prefix[512];
	if (!bt_test_pyenv(minor, prefix, sizeof(prefix))) {
		if (bt_test_in_ci())
			fail_msg("pyenv's CPython 3.%u is missing", minor);
		print_message("pyenv's CPython 3.%u is missing: not checked\n", minor);
		return NULL;
	}
	snprintf(buf, len, "%s/lib/libpython3.%u.so.1.0", prefix, minor);
	return buf;
}

static void pyoffsets__pyenv_38_to_313__every_figure_matches_dwarf(void **state)
{
	for (unsigned minor = 8; minor <= 13; minor++) {
		char lib[700];
		if (!pyenv_lib(minor, lib, sizeof(lib)))
			continue;
		const struct bt_py_offsets *o = bt_pyoffsets_get(3, minor);
		assert_non_null(o);
		assert_int_equal(o->minor, minor);
		check_dwarf(lib, o);
	}
}

/* 3.13's own description: read where DWARF says each figure is, and giving the table's figures. */
static void pyoffsets__python313_debug_offsets__match_dwarf_and_table(void **state)
{
	char lib[700];
	if (!pyenv_lib(13, lib, sizeof(lib)))
		skip();
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	size_t n;
	const struct bt_py_debug_field *d = bt_pyoffsets_debug_fields(&n);
	assert_true(n >= 20);
	for (size_t i = 0; i < n; i++) {
		long want = dwarf_figure(dw, &d[i].f);
		if (want != (long)d[i].at)
			fail_msg("_Py_DebugOffsets %s: read at %u, DWARF says %ld", d[i].f.member, d[i].at, want);
	}
	struct bt_py_field size = { "_Py_DebugOffsets", "sizeof", 0 };
	assert_int_equal(dwarf_figure(dw, &size), BT_PY_DEBUG_OFFSETS_BYTES);
	dwarf_end(dw);
	/* read from the file as a session reads it: every figure the same as the table's */
	struct bt_pyruntime r;
	assert_int_equal(bt_pyruntime_read(fd, "libpython3.13.so.1.0", &r), 0);
	close(fd);
	assert_true(r.have_debug);
	const struct bt_py_offsets *o = bt_pyoffsets_get(3, 13);
	assert_memory_equal(&r.debug, o, sizeof(*o));
	assert_ptr_equal(bt_pyruntime_offsets(&r), &r.debug);
}

/* A description laid out as 3.13's: the table's figures where the reader finds them. */
static void describe(uint8_t *d, const struct bt_py_offsets *o)
{
	memset(d, 0, BT_PY_DEBUG_OFFSETS_BYTES);
	memcpy(d, "xdebugpy", 8);
	uint64_t v = 0x030d00f0;   /* 3.13.0 */
	memcpy(d + 8, &v, 8);
	size_t n;
	const struct bt_py_debug_field *f = bt_pyoffsets_debug_fields(&n);
	for (size_t i = 0; i < n; i++) {
		uint64_t fig = bt_pyoffsets_value(o, &f[i].f);
		memcpy(d + f[i].at, &fig, 8);
	}
}

static void pyoffsets__debug_offsets__taken_or_refused(void **state)
{
	const struct bt_py_offsets *t = bt_pyoffsets_get(3, 13);
	uint8_t d[BT_PY_DEBUG_OFFSETS_BYTES];
	struct bt_py_offsets o;
	describe(d, t);
	assert_int_equal(bt_pyoffsets_from_debug(d, sizeof(d), &o), 0);
	assert_memory_equal(&o, t, sizeof(o));
	/* a figure that moved is taken as the interpreter says */
	uint64_t moved = 7360;
	memcpy(d + 72, &moved, 8);   /* interpreter_state.threads_head */
	assert_int_equal(bt_pyoffsets_from_debug(d, sizeof(d), &o), 0);
	assert_int_equal(o.interp_threads_head, 7360);
	assert_int_equal(bt_pyoffsets_from_debug(d, sizeof(d) - 1, &o), -ENOENT);
	/* free-threaded: objects laid out otherwise */
	describe(d, t);
	d[16] = 1;
	assert_int_equal(bt_pyoffsets_from_debug(d, sizeof(d), &o), -ENOTSUP);
	/* 3.14: a description laid out otherwise */
	describe(d, t);
	uint64_t v = 0x030e00f0;
	memcpy(d + 8, &v, 8);
	assert_int_equal(bt_pyoffsets_from_debug(d, sizeof(d), &o), -ENOTSUP);
	/* out of range, or an object larger than it is read in */
	describe(d, t);
	uint64_t big = 70000;
	memcpy(d + 40, &big, 8);
	assert_int_equal(bt_pyoffsets_from_debug(d, sizeof(d), &o), -EINVAL);
	describe(d, t);
	uint64_t far = 400;
	memcpy(d + 288, &far, 8);    /* code_object.name */
	assert_int_equal(bt_pyoffsets_from_debug(d, sizeof(d), &o), -EINVAL);
	describe(d, t);
	uint64_t zero = 0;
	memcpy(d + 528, &zero, 8);   /* bytes_object.ob_sval before ob_size ends */
	assert_int_equal(bt_pyoffsets_from_debug(d, sizeof(d), &o), -EINVAL);
	describe(d, t);
	d[0] = 'y';
	assert_int_equal(bt_pyoffsets_from_debug(d, sizeof(d), &o), -ENOENT);
}

static void pyoffsets__unknown_versions__no_table(void **state)
{
	assert_null(bt_pyoffsets_get(3, 7));
	assert_null(bt_pyoffsets_get(3, 14));
	assert_null(bt_pyoffsets_get(2, 11));
	for (unsigned minor = 8; minor <= 13; minor++)
		assert_non_null(bt_pyoffsets_get(3, minor));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pyoffsets__python311__every_figure_matches_dwarf),
		cmocka_unit_test(pyoffsets__pyenv_38_to_313__every_figure_matches_dwarf),
		cmocka_unit_test(pyoffsets__python313_debug_offsets__match_dwarf_and_table),
		cmocka_unit_test(pyoffsets__debug_offsets__taken_or_refused),
		cmocka_unit_test(pyoffsets__unknown_versions__no_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
