/* test_pyruntime.c - CPython's own symbols read from Debian's python3.11 and libpython3.11, against
 * nm and readelf; a program that is not Python is told apart. */
#include "testutil.h"
#include "symsrc/pyruntime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PY "/usr/bin/python3.11"
#define LIBPY "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"

static bool have(const char *path)
{
	if (access(path, R_OK) == 0)
		return true;
	if (bt_test_in_ci())
		fail_msg("%s is missing", path);
	return false;
}

/* nm -D's value (and size) of sym in path. */
static uint64_t nm_value(const char *path, const char *sym, uint64_t *size)
{
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "nm -D -S --defined-only %s | awk '$4 == \"%s\" "
				     "{ print $1, $2 }'", path, sym), 0);
	unsigned long long v = 0, s = 0;
	assert_int_equal(sscanf(out, "%llx %llx", &v, &s), 2);
	if (size)
		*size = s;
	return v;
}

static void check_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct bt_pyruntime r;
	assert_int_equal(bt_pyruntime_read(fd, &r), 0);
	close(fd);
	assert_int_equal(r.major, 3);
	assert_int_equal(r.minor, 11);
	char out[64];
	assert_int_equal(bt_test_run(out, sizeof(out), "%s -c 'import sys; print(sys.version_info[2])'", PY), 0);
	assert_int_equal(r.micro, (unsigned)atoi(out));
	assert_int_equal(r.runtime_vaddr, nm_value(path, "_PyRuntime", NULL));
	uint64_t size, ev = nm_value(path, "_PyEval_EvalFrameDefault", &size);
	assert_int_equal(r.eval_size, size);
	/* the executable segment, as readelf lists it: offset and vaddr */
	char seg[256];
	assert_int_equal(bt_test_run(seg, sizeof(seg), "readelf -lW %s | awk '$1 == \"LOAD\" && $8 == \"E\" "
				     "{ print $2, $3 }'", path), 0);
	unsigned long long off, vaddr;
	assert_int_equal(sscanf(seg, "%llx %llx", &off, &vaddr), 2);
	assert_int_equal(r.text_offset, off);
	assert_int_equal(r.text_vaddr, vaddr);
	assert_int_equal(r.eval_offset, ev - vaddr + off);
	/* mapped with a load bias, the text segment's page at bias + its page: _PyRuntime moves with it */
	uint64_t bias = 0x555555554000ULL;
	assert_int_equal(bt_pyruntime_addr(&r, bias + (vaddr & ~0xfffULL), off & ~0xfffULL), bias + r.runtime_vaddr);
}

static void pyruntime__python311__matches_nm_and_readelf(void **state)
{
	if (!have(PY))
		skip();
	check_file(PY);
}

static void pyruntime__libpython311__matches_nm_and_readelf(void **state)
{
	if (!have(LIBPY))
		skip();
	check_file(LIBPY);
}

static void pyruntime__not_python__enoent(void **state)
{
	int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct bt_pyruntime r;
	assert_int_equal(bt_pyruntime_read(fd, &r), -ENOENT);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pyruntime__python311__matches_nm_and_readelf),
		cmocka_unit_test(pyruntime__libpython311__matches_nm_and_readelf),
		cmocka_unit_test(pyruntime__not_python__enoent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
