/* test_pyoffsets.c - every figure of the CPython offsets table against the DWARF of the interpreter
 * it describes: Debian's python3.11 and the debug file python3.11-dbg installs for its build-id. */
#include "testutil.h"
#include "symsrc/pyoffsets.h"

#include <dwarf.h>
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
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	size_t n;
	const struct bt_py_field *f = bt_pyoffsets_fields(&n);
	assert_true(n >= 20);
	for (size_t i = 0; i < n; i++) {
		long want = dwarf_figure(dw, &f[i]);
		if (want != (long)bt_pyoffsets_value(o, &f[i]))
			fail_msg("%s %s: the table says %u, DWARF %ld", f[i].type, f[i].member,
				 bt_pyoffsets_value(o, &f[i]), want);
	}
	dwarf_end(dw);
	close(fd);
}

static void pyoffsets__unknown_versions__no_table(void **state)
{
	assert_null(bt_pyoffsets_get(3, 9));
	assert_null(bt_pyoffsets_get(2, 11));
	assert_non_null(bt_pyoffsets_get(3, 11));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pyoffsets__python311__every_figure_matches_dwarf),
		cmocka_unit_test(pyoffsets__unknown_versions__no_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
