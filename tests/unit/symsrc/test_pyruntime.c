/* test_pyruntime.c - CPython's own symbols read from Debian's python3.11 and libpython3.11 and from
 * pyenv's libpython3.8 to 3.13, against nm, readelf and the interpreter's own sys.version_info;
 * versions before 3.11 taken from the file's name only when its PY_VERSION says the same; a
 * program that is not Python told apart from an interpreter of a version that is not read. */
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

static const char *base(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* The file at path, an interpreter of 3.minor run by python. */
static void check_file(const char *path, const char *python, unsigned minor)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct bt_pyruntime r;
	assert_int_equal(bt_pyruntime_read(fd, base(path), &r), 0);
	close(fd);
	assert_int_equal(r.major, 3);
	assert_int_equal(r.minor, minor);
	char out[64];
	assert_int_equal(bt_test_run(out, sizeof(out), "%s -c 'import sys; print(sys.version_info[2])'", python), 0);
	assert_int_equal(r.micro, (unsigned)atoi(out));
	assert_non_null(bt_pyruntime_offsets(&r));
	assert_int_equal(r.have_debug, minor >= 13);
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
	check_file(PY, PY, 11);
}

static void pyruntime__libpython311__matches_nm_and_readelf(void **state)
{
	if (!have(LIBPY))
		skip();
	check_file(LIBPY, PY, 11);
}

static void pyruntime__pyenv_libpythons__match_nm_readelf_and_themselves(void **state)
{
	for (unsigned minor = 8; minor <= 13; minor++) {
		char prefix[512], lib[700], py[700];
		if (!bt_test_pyenv(minor, prefix, sizeof(prefix))) {
			if (bt_test_in_ci())
				fail_msg("pyenv's CPython 3.%u is missing", minor);
			continue;
		}
		snprintf(lib, sizeof(lib), "%s/lib/libpython3.%u.so.1.0", prefix, minor);
		snprintf(py, sizeof(py), "%s/bin/python3.%u", prefix, minor);
		check_file(lib, py, minor);
		/* the program itself takes everything from the library: no interpreter */
		int fd = open(py, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		struct bt_pyruntime r;
		assert_int_equal(bt_pyruntime_read(fd, base(py), &r), -ENOENT);
		close(fd);
	}
}

/* Before 3.11 the name says the version, and the file's PY_VERSION must say the same. */
static void pyruntime__name_without_its_version__not_read(void **state)
{
	char prefix[512], lib[700];
	if (!bt_test_pyenv(9, prefix, sizeof(prefix))) {
		if (bt_test_in_ci())
			fail_msg("pyenv's CPython 3.9 is missing");
		skip();
	}
	snprintf(lib, sizeof(lib), "%s/lib/libpython3.9.so.1.0", prefix);
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct bt_pyruntime r;
	assert_int_equal(bt_pyruntime_read(fd, "libpython3.8.so.1.0", &r), -ENOTSUP);
	assert_int_equal(bt_pyruntime_read(fd, "libpython.so", &r), -ENOTSUP);
	assert_int_equal(r.minor, 0);
	assert_int_equal(bt_pyruntime_read(fd, "libpython3.11.so", &r), -ENOTSUP);
	assert_int_equal(bt_pyruntime_read(fd, NULL, &r), -ENOTSUP);
	assert_int_equal(bt_pyruntime_read(fd, "python3.9", &r), 0);
	assert_int_equal(r.minor, 9);
	close(fd);
	unsigned ma, mi;
	assert_int_equal(bt_pyruntime_name_version("libpython3.10d.so.1.0", &ma, &mi), 0);
	assert_int_equal(ma * 100 + mi, 310);
	assert_int_equal(bt_pyruntime_name_version("python2.7", &ma, &mi), 0);
	assert_int_equal(ma * 100 + mi, 207);
	assert_int_equal(bt_pyruntime_name_version("python3", &ma, &mi), -ENOENT);
	assert_int_equal(bt_pyruntime_name_version("pythonx3.9", &ma, &mi), -ENOENT);
}

/* An interpreter of a version without a table: told apart, its version given. */
static void pyruntime__python37__not_read_version_named(void **state)
{
	char prefix[512], lib[700];
	if (!bt_test_pyenv(7, prefix, sizeof(prefix))) {
		if (bt_test_in_ci())
			fail_msg("pyenv's CPython 3.7 is missing");
		skip();
	}
	snprintf(lib, sizeof(lib), "%s/lib/libpython3.7m.so.1.0", prefix);
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct bt_pyruntime r;
	assert_int_equal(bt_pyruntime_read(fd, base(lib), &r), -ENOTSUP);
	close(fd);
	assert_int_equal(r.major, 3);
	assert_int_equal(r.minor, 7);
}

/* A 3.13 whose own description of its layout says free-threaded: no table fits it, not read. */
static void pyruntime__python313_free_threaded_description__not_read(void **state)
{
	char prefix[512], lib[700], out[64];
	if (!bt_test_pyenv(13, prefix, sizeof(prefix))) {
		if (bt_test_in_ci())
			fail_msg("pyenv's CPython 3.13 is missing");
		skip();
	}
	snprintf(lib, sizeof(lib), "%s/lib/libpython3.13.so.1.0", prefix);
	char tmp[] = "/tmp/bt-libpython3.13-XXXXXX";
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	/* _Py_DebugOffsets.free_threaded, 16 bytes into _PyRuntime, the start of its section */
	assert_int_equal(bt_test_run(out, sizeof(out), "off=$(readelf -SW %s | awk '$2 == \".PyRuntime\" "
				     "{ print $5 }') && [ -n \"$off\" ] && cp %s %s && printf '\\001' | dd of=%s "
				     "bs=1 seek=$((0x$off + 16)) conv=notrunc 2>/dev/null", lib, lib, tmp, tmp), 0);
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct bt_pyruntime r;
	assert_int_equal(bt_pyruntime_read(fd, "libpython3.13.so.1.0", &r), -ENOTSUP);
	assert_int_equal(r.minor, 13);
	close(fd);
	unlink(tmp);
	/* the file as it is: its description taken */
	fd = open(lib, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(bt_pyruntime_read(fd, "libpython3.13.so.1.0", &r), 0);
	assert_true(r.have_debug);
	close(fd);
}

static void pyruntime__not_python__enoent(void **state)
{
	int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct bt_pyruntime r;
	assert_int_equal(bt_pyruntime_read(fd, "python3.9", &r), -ENOENT);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pyruntime__python311__matches_nm_and_readelf),
		cmocka_unit_test(pyruntime__libpython311__matches_nm_and_readelf),
		cmocka_unit_test(pyruntime__pyenv_libpythons__match_nm_readelf_and_themselves),
		cmocka_unit_test(pyruntime__name_without_its_version__not_read),
		cmocka_unit_test(pyruntime__python37__not_read_version_named),
		cmocka_unit_test(pyruntime__python313_free_threaded_description__not_read),
		cmocka_unit_test(pyruntime__not_python__enoent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
