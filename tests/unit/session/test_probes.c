/* test_probes.c - probe specs parsed (every form, and what is refused), and resolved in the test
 * program against nm (functions, addresses) and readelf (the code sections): a function's address
 * and file offset, an address outside the code refused, a missing function named in the message,
 * and the mappings of this very process found by path and by build-id. */
#include "testutil.h"
#include "session/probes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACEE "build/tests/progs/tracee"

static void spec__every_form__parsed(void **state)
{
	struct bt_probe_spec s;
	assert_int_equal(bt_probe_spec_parse("/usr/lib/libc.so.6:malloc", &s), 0);
	assert_int_equal(s.kind, BT_PROBE_FUNC);
	assert_string_equal(s.file, "/usr/lib/libc.so.6");
	assert_string_equal(s.name, "malloc");
	assert_int_equal(s.id.len, 0);
	assert_int_equal(bt_probe_spec_parse("./app:0x1139", &s), 0);
	assert_int_equal(s.kind, BT_PROBE_ADDR);
	assert_int_equal(s.addr, 0x1139);
	assert_int_equal(bt_probe_spec_parse("c561f3aa7232f2bd6ac6d56bd475f1c154a00486:PyList_New", &s), 0);
	assert_int_equal(s.kind, BT_PROBE_FUNC);
	assert_int_equal(s.id.len, 20);
	assert_string_equal(s.file, "");
	assert_int_equal(bt_probe_spec_parse("sdt:/usr/bin/python3.11:python:function__entry", &s), 0);
	assert_int_equal(s.kind, BT_PROBE_SDT);
	assert_string_equal(s.file, "/usr/bin/python3.11");
	assert_string_equal(s.provider, "python");
	assert_string_equal(s.name, "function__entry");
	/* a marker without its file: in whichever file has it */
	assert_int_equal(bt_probe_spec_parse("sdt:python:function__entry", &s), 0);
	assert_int_equal(s.kind, BT_PROBE_SDT);
	assert_string_equal(s.file, "");
	assert_string_equal(s.provider, "python");
	assert_int_equal(bt_probe_spec_parse("cache:sdt_python:function__entry", &s), 0);
	assert_int_equal(s.kind, BT_PROBE_CACHED);
	assert_string_equal(s.provider, "sdt_python");
	assert_string_equal(s.name, "function__entry");
}

static void spec__malformed__refused(void **state)
{
	struct bt_probe_spec s;
	const char *bad[] = { "", "nocolon", "file:", ":func", "sdt:/f:p", "sdt::p:n", "sdt:/f::n", "cache:g",
			      "app:0x", "app:0x12zz", "c561f3aa7232f2bd6ac6d56bd475f1c154a00486:0x10" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (bt_probe_spec_parse(bad[i], &s) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
}

/* nm's address of a symbol of TRACEE. */
static unsigned long long nm_addr(const char *sym)
{
	char out[64];
	bt_test_run(out, sizeof(out), "nm " TRACEE " | awk '$3 == \"%s\" { print $1 }'", sym);
	return strtoull(out, NULL, 16);
}

static void resolve__function_and_address__as_nm_says(void **state)
{
	struct bt_probe_spec s;
	struct bt_probe_file f;
	struct bt_probe_site site;
	struct bt_symsrc_opts so = { .cache_dir = "/nonexistent" };
	char msg[1024];
	assert_int_equal(bt_probe_spec_parse(TRACEE ":tracee_hit", &s), 0);
	assert_int_equal(bt_probe_open_path(&s, "/nonexistent", &f, msg, sizeof(msg)), 0);
	assert_int_equal(f.id.len, 20);
	assert_int_equal(bt_probe_resolve(&s, &f, &so, &site, msg, sizeof(msg)), 0);
	assert_int_equal(site.vaddr, nm_addr("tracee_hit"));
	assert_string_equal(site.section, ".text");
	/* a PIE: the text segment's file offsets are its addresses */
	char out[128];
	bt_test_run(out, sizeof(out), "LC_ALL=C readelf -lW " TRACEE " | awk '$1 == \"LOAD\" && / R E / "
		    "{ print $2, $3 }'");
	char *end;
	unsigned long long seg_off = strtoull(out, &end, 16), seg_vaddr = strtoull(end, NULL, 16);
	assert_true(seg_vaddr > 0);
	assert_int_equal(site.off, site.vaddr - seg_vaddr + seg_off);
	/* the same address given as such */
	char spec[128];
	snprintf(spec, sizeof(spec), TRACEE ":0x%llx", nm_addr("tracee_outer"));
	assert_int_equal(bt_probe_spec_parse(spec, &s), 0);
	assert_int_equal(bt_probe_resolve(&s, &f, &so, &site, msg, sizeof(msg)), 0);
	assert_int_equal(site.vaddr, nm_addr("tracee_outer"));
	assert_false(site.insn_unchecked);  /* a function begins there */
	/* one byte into a function: nothing shows it begins an instruction (and here it does not:
	 * the entry's push is one byte, the next instruction's second byte follows) */
	snprintf(spec, sizeof(spec), TRACEE ":0x%llx", nm_addr("tracee_outer") + 2);
	assert_int_equal(bt_probe_spec_parse(spec, &s), 0);
	assert_int_equal(bt_probe_resolve(&s, &f, &so, &site, msg, sizeof(msg)), 0);
	assert_true(site.insn_unchecked);
	/* data is not code; the ELF header neither */
	snprintf(spec, sizeof(spec), TRACEE ":0x%llx", nm_addr("sink"));
	assert_int_equal(bt_probe_spec_parse(spec, &s), 0);
	assert_int_equal(bt_probe_resolve(&s, &f, &so, &site, msg, sizeof(msg)), -ERANGE);
	assert_non_null(strstr(msg, "outside .text"));
	assert_int_equal(bt_probe_spec_parse(TRACEE ":0x0", &s), 0);
	assert_int_equal(bt_probe_resolve(&s, &f, &so, &site, msg, sizeof(msg)), -ERANGE);
	/* a name it does not have */
	assert_int_equal(bt_probe_spec_parse(TRACEE ":tracee_nothing", &s), 0);
	assert_int_equal(bt_probe_resolve(&s, &f, &so, &site, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "no function tracee_nothing in " TRACEE " (build-id "));
	/* a marker it does not have */
	assert_int_equal(bt_probe_spec_parse("sdt:" TRACEE ":p:n", &s), 0);
	assert_int_equal(bt_probe_resolve(&s, &f, &so, &site, msg, sizeof(msg)), -ENOENT);
	close(f.fd);
}

static void open_path__by_build_id__unknown_build_said(void **state)
{
	struct bt_probe_spec s;
	struct bt_probe_file f;
	char msg[1024];
	assert_int_equal(bt_probe_spec_parse("00112233445566778899aabbccddeeff00112233:f", &s), 0);
	assert_int_equal(bt_probe_open_path(&s, "/nonexistent", &f, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "no path is known for build-id 00112233445566778899aabbccddeeff00112233"));
	assert_int_equal(bt_probe_spec_parse("/nonexistent/file:f", &s), 0);
	assert_int_equal(bt_probe_open_path(&s, NULL, &f, msg, sizeof(msg)), -ENOENT);
	assert_int_equal(bt_probe_spec_parse("/dev/null:f", &s), 0);
	assert_int_equal(bt_probe_open_path(&s, NULL, &f, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "not a regular file"));
}

struct found {
	int n;
	char path[4096];
	struct bt_build_id id;
};

static int on_found(void *ctx, struct bt_probe_file *f)
{
	struct found *fd = ctx;
	fd->n++;
	snprintf(fd->path, sizeof(fd->path), "%s", f->path);
	fd->id = f->id;
	close(f->fd);
	return 0;
}

static void find_mapped__own_process__by_path_base_name_and_build_id(void **state)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	struct bt_probe_spec s;
	char spec[4200];
	snprintf(spec, sizeof(spec), "%s:main", exe);
	assert_int_equal(bt_probe_spec_parse(spec, &s), 0);
	struct found f = { 0 };
	assert_int_equal(bt_probe_find_mapped("", getpid(), &s, on_found, &f), 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.path, exe);
	/* the base name alone */
	assert_int_equal(bt_probe_spec_parse("test_probes:main", &s), 0);
	memset(&f, 0, sizeof(f));
	assert_int_equal(bt_probe_find_mapped("", getpid(), &s, on_found, &f), 0);
	assert_int_equal(f.n, 1);
	/* by its build-id */
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	struct bt_build_id id = f.id;
	snprintf(spec, sizeof(spec), "%s:main", bt_buildid_hex(&id, hex, sizeof(hex)));
	assert_int_equal(bt_probe_spec_parse(spec, &s), 0);
	memset(&f, 0, sizeof(f));
	assert_int_equal(bt_probe_find_mapped("", getpid(), &s, on_found, &f), 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.path, exe);
	/* a file it does not map */
	assert_int_equal(bt_probe_spec_parse(TRACEE ":main", &s), 0);
	memset(&f, 0, sizeof(f));
	assert_int_equal(bt_probe_find_mapped("", getpid(), &s, on_found, &f), 0);
	assert_int_equal(f.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spec__every_form__parsed),
		cmocka_unit_test(spec__malformed__refused),
		cmocka_unit_test(resolve__function_and_address__as_nm_says),
		cmocka_unit_test(open_path__by_build_id__unknown_build_said),
		cmocka_unit_test(find_mapped__own_process__by_path_base_name_and_build_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
