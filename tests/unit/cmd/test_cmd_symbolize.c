/* test_cmd_symbolize.c - `buildtrace symbolize` output (FUNCTION+0xOFF and FILE:LINE per frame,
 * inlined frames innermost first) against llvm-symbolizer and nm, for a file, its stripped copy
 * with a debuglink, a running process, and bad input. */
#include "testutil.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char inl[PATH_MAX], stripped[PATH_MAX];

static int group_setup(void **state)
{
	char rel[256];
	if (!realpath(bt_test_fixture(rel, sizeof(rel), "symsrc/inl"), inl) ||
	    !realpath(bt_test_fixture(rel, sizeof(rel), "symsrc/inl.stripped"), stripped))
		return -1;
	return 0;
}

/* A function's address as nm shows it; nm runs once per file. */
static uint64_t nm_addr(const char *file, const char *name)
{
	static char cached_file[PATH_MAX], list[1 << 16];
	if (strcmp(cached_file, file) != 0) {
		assert_int_equal(bt_test_run(list, sizeof(list), "nm '%s' | awk '{ print \"\\n\" $3, $1 }'",
					     file), 0);
		snprintf(cached_file, sizeof(cached_file), "%s", file);
	}
	char key[256];
	snprintf(key, sizeof(key), "\n%s ", name);
	const char *at = strstr(list, key);
	assert_non_null(at);
	return strtoull(at + strlen(key), NULL, 16);
}

/* The expected output for addresses, built from llvm-symbolizer's frames: every frame but the
 * outermost is inlined and printed bare; the outermost gets its offset from nm's start. */
static void expected(const uint64_t *a, size_t n, char *out, size_t len)
{
	static char buf[1 << 17];
	char list[8192];
	size_t used = 0;
	for (size_t i = 0; i < n; i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "0x%" PRIx64 " ", a[i]);
	assert_int_equal(bt_test_run(buf, sizeof(buf), "llvm-symbolizer --obj='%s' %s", inl, list), 0);
	used = 0;
	out[0] = '\0';
	char *p = buf;
	for (size_t i = 0; i < n; i++) {
		char *end = strstr(p, "\n\n");
		assert_non_null(end);
		*end = '\0';
		char *save = NULL, *fn, *loc, *names[32], *locs[32];
		int k = 0;
		for (fn = strtok_r(p, "\n", &save); fn && (loc = strtok_r(NULL, "\n", &save)) && k < 32;
		     fn = strtok_r(NULL, "\n", &save), k++) {
			names[k] = fn;
			locs[k] = loc;
			char *col = strrchr(loc, ':');
			*col = '\0';
		}
		for (int j = 0; j < k; j++) {
			char offs[32] = "";
			if (j == k - 1)
				snprintf(offs, sizeof(offs), "+0x%" PRIx64, a[i] - nm_addr(inl, names[j]));
			used += (size_t)snprintf(out + used, len - used, "0x%" PRIx64 "\t%s%s\t%s\n", a[i],
						 names[j], offs, locs[j]);
		}
		p = end + 2;
	}
}

static size_t sample(uint64_t *a, size_t max)
{
	static const char *const funcs[] = { "fx_outer", "fx_caller", "fx_local" };
	size_t n = 0;
	for (size_t f = 0; f < 3; f++) {
		uint64_t start = nm_addr(inl, funcs[f]);
		for (uint64_t x = 0; x < 0x18 && n < max; x += 3)
			a[n++] = start + x;
	}
	return n;
}

static void symbolize__elf__frames_match_llvm_symbolizer(void **state)
{
	uint64_t a[32];
	size_t n = sample(a, 32);
	static char want[1 << 15], got[1 << 15];
	expected(a, n, want, sizeof(want));
	char args[1024];
	size_t used = 0;
	for (size_t i = 0; i < n; i++)
		used += (size_t)snprintf(args + used, sizeof(args) - used, "%" PRIx64 " ", a[i]);
	assert_int_equal(bt_test_run(got, sizeof(got), "./buildtrace symbolize --no-debuginfod --elf '%s' %s",
				     inl, args), 0);
	assert_string_equal(got, want);
	/* The stripped copy reaches the same through its .gnu_debuglink, reading stdin. */
	assert_int_equal(bt_test_run(got, sizeof(got), "echo '%s' | tr ' ' '\\n' | ./buildtrace symbolize "
				     "--no-debuginfod --cache-dir /nonexistent --elf '%s'", args, stripped), 0);
	assert_string_equal(got, want);
}

static void symbolize__pid__same_as_the_file(void **state)
{
	char libc[PATH_MAX];
	assert_non_null(realpath("/lib/x86_64-linux-gnu/libc.so.6", libc));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	/* The running process maps libc; its executable mapping and the file's executable load. */
	char out[512];
	int tries = 0;
	do {
		usleep(20000);
		bt_test_run(out, sizeof(out), "awk '$2 ~ /x/ && $6 == \"%s\" { print $1, $3; exit }' "
			    "/proc/%d/maps", libc, (int)pid);
	} while (!out[0] && ++tries < 100);
	uint64_t start, end, moff, loff, lvaddr;
	assert_int_equal(sscanf(out, "%" SCNx64 "-%" SCNx64 " %" SCNx64, &start, &end, &moff), 3);
	assert_int_equal(bt_test_run(out, sizeof(out), "readelf -lW '%s' | awk '$1 == \"LOAD\" && / R?W?E / "
				     "{ print $2, $3; exit }'", libc), 0);
	assert_int_equal(sscanf(out, "%" SCNx64 " %" SCNx64, &loff, &lvaddr), 2);
	assert_int_equal(bt_test_run(out, sizeof(out), "nm -D '%s' | awk '$3 ~ /^qsort(@|$)/ { print $1; exit }'",
				     libc), 0);
	uint64_t vaddr = strtoull(out, NULL, 16) + 5;
	uint64_t runtime = start + (vaddr - lvaddr + loff - moff);
	char want[4096], got[4096];
	assert_int_equal(bt_test_run(want, sizeof(want), "./buildtrace symbolize --no-debuginfod --cache-dir "
				     "/nonexistent --elf '%s' %" PRIx64 " | cut -f2-", libc, vaddr), 0);
	assert_int_equal(bt_test_run(got, sizeof(got), "./buildtrace symbolize --no-debuginfod --cache-dir "
				     "/nonexistent --pid %d %" PRIx64, (int)pid, runtime), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Same frames; the address column is the process's. */
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "0x%" PRIx64 "\t", runtime);
	assert_int_equal(strncmp(got, prefix, strlen(prefix)), 0);
	assert_non_null(strstr(want, "qsort"));
	assert_string_equal(got + strlen(prefix), want);
}

static void symbolize__bad_input__errors(void **state)
{
	char out[1024];
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --elf '%s' zz 2>/dev/null", inl), 2);
	assert_string_equal(out, "zz\t??\t\n");
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --elf '%s' 0 2>/dev/null", inl), 0);
	assert_string_equal(out, "0x0\t??\t\n");
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace symbolize --no-debuginfod --cache-dir /nonexistent "
				     "--build-id 0123456789abcdef 10 2>/dev/null"), 1);
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace symbolize --build-id xyz 10 2>/dev/null"), 2);
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace symbolize --elf /etc/hostname 10 2>/dev/null"), 1);
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace symbolize 10 2>/dev/null"), 2);
}

/* The system call a process is blocked in, from /proc/PID/syscall; -1 when it is running or gone. */
static long blocked_in(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long nr = fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
	fclose(f);
	return nr;
}

/* --elf names what is wrong with a file that is not ELF or not a regular file, exit 1; a FIFO is
 * never opened: a writer blocked in opening it stays blocked. */
static void symbolize__elf_not_elf_or_not_regular__says_what(void **state)
{
	char dir[] = "/tmp/bt-symbolize-XXXXXX", out[1024], want[1024];
	assert_non_null(mkdtemp(dir));
	assert_int_equal(bt_test_run(NULL, 0, "cd %s && head -c 4096 /dev/urandom > garbage && : > empty && "
				     "mkfifo fifo && ln -s fifo link", dir), 0);
	struct { const char *file, *msg; } cases[] = {
		{ "/etc/passwd", "cannot read /etc/passwd: not an ELF file" },
		{ "garbage", "cannot read DIR/garbage: not an ELF file" },
		{ "empty", "cannot read DIR/empty: not an ELF file" },
		{ "/dev/zero", "cannot open /dev/zero: not a regular file" },
		{ "", "cannot open DIR/: not a regular file" },
		{ "fifo", "cannot open DIR/fifo: not a regular file" },
		{ "link", "cannot open DIR/link: not a regular file" },
		{ "none", "cannot open DIR/none: No such file or directory" },
	};
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "exec 3> %s/fifo", dir);
	pid_t writer = bt_test_spawn(cmd);
	while (blocked_in(writer) != SYS_openat)
		assert_int_equal(waitpid(writer, NULL, WNOHANG), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[256];
		if (cases[i].file[0] == '/')
			snprintf(path, sizeof(path), "%s", cases[i].file);
		else
			snprintf(path, sizeof(path), "%s/%s", dir, cases[i].file);
		assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --no-debuginfod --elf '%s' "
					     "10 2>&1 >/dev/null", path), 1);
		const char *d = strstr(cases[i].msg, "DIR");
		if (d)
			snprintf(want, sizeof(want), "buildtrace: %.*s%s%s\n", (int)(d - cases[i].msg),
				 cases[i].msg, dir, d + 3);
		else
			snprintf(want, sizeof(want), "buildtrace: %s\n", cases[i].msg);
		assert_string_equal(out, want);
	}
	/* still waiting for a reader: nothing opened the FIFO */
	assert_int_equal(blocked_in(writer), SYS_openat);
	assert_int_equal(waitpid(writer, NULL, WNOHANG), 0);
	snprintf(cmd, sizeof(cmd), "%s/fifo", dir);
	int rfd = open(cmd, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	int status;
	assert_int_equal(waitpid(writer, &status, 0), writer);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(rfd);
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s", dir), 0);
}

/* A copy whose .debug_line_str lost its final NUL: symbols still, no lines, and a message naming
 * the section (libdw would read the last string past the section's end). */
static void symbolize__debug_line_str_without_nul__lines_refused(void **state)
{
	char copy[] = "/tmp/bt-symbolize-nonul-XXXXXX", out[1024], want[1024], msg[1024];
	int fd = mkstemp(copy);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(bt_test_run(out, sizeof(out), "cp '%s' %s && readelf -SW %s | awk '{ for (i = 1; "
				     "i < NF; i++) if ($i == \".debug_line_str\") print $(i+3), $(i+4) }'", inl,
				     copy, copy), 0);
	uint64_t off, size;
	assert_int_equal(sscanf(out, "%" SCNx64 " %" SCNx64, &off, &size), 2);
	assert_int_equal(bt_test_run(NULL, 0, "printf A | dd of=%s bs=1 seek=%" PRIu64 " conv=notrunc "
				     "2>/dev/null", copy, off + size - 1), 0);
	uint64_t main_addr = nm_addr(inl, "main");
	assert_int_equal(bt_test_run(want, sizeof(want), "./buildtrace symbolize --no-debuginfod --elf '%s' "
				     "%" PRIx64 " | cut -f1,2", inl, main_addr), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --no-debuginfod --cache-dir "
				     "/nonexistent --elf %s %" PRIx64 " 2>%s.err", copy, main_addr, copy), 0);
	char *nl = strchr(want, '\n');
	assert_non_null(nl);
	snprintf(nl, sizeof(want) - (size_t)(nl - want), "\t\n");  /* no FILE:LINE */
	assert_string_equal(out, want);
	assert_int_equal(bt_test_run(out, sizeof(out), "cat %s.err", copy), 0);
	snprintf(msg, sizeof(msg), "buildtrace: no line info for %s: .debug_line_str does not end with a "
		 "NUL (corrupt DWARF strings)\n", copy);
	assert_string_equal(out, msg);
	assert_int_equal(bt_test_run(NULL, 0, "rm -f %s %s.err", copy, copy), 0);
}

/* Split DWARF: the skeleton names its .dwo by a path the binary chose (DW_AT_comp_dir and
 * DW_AT_dwo_name). A FIFO planted there, with a writer blocked on it, is never opened; lines still
 * come from the skeleton's line table. */
static void symbolize__split_dwarf_dwo_fifo__not_opened(void **state)
{
	char dir[] = "/tmp/bt-symbolize-dwo-XXXXXX", out[1024], want[1024], cmd[512];
	assert_non_null(mkdtemp(dir));
	assert_int_equal(bt_test_run(out, sizeof(out), "cd %s && printf 'static int __attribute__((noinline)) "
				     "f(int x) { return x * 3 + 1; }\\nint main(int c, char **v) { return f(c); }\\n' "
				     "> s.c && gcc -O1 -g -gsplit-dwarf -o s s.c && test -f s.dwo && rm s.dwo && "
				     "mkfifo s.dwo && nm s | awk '$3 == \"f\" { printf $1 }'", dir), 0);
	uint64_t f = strtoull(out, NULL, 16);
	assert_true(f > 0);
	snprintf(cmd, sizeof(cmd), "exec 3> %s/s.dwo", dir);
	pid_t writer = bt_test_spawn(cmd);
	while (blocked_in(writer) != SYS_openat)
		assert_int_equal(waitpid(writer, NULL, WNOHANG), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --no-debuginfod --cache-dir "
				     "/nonexistent --elf %s/s %" PRIx64 " 2>/dev/null", dir, f), 0);
	snprintf(want, sizeof(want), "0x%" PRIx64 "\tf+0x0\t%s/s.c:1\n", f, dir);
	assert_string_equal(out, want);
	assert_int_equal(blocked_in(writer), SYS_openat);
	assert_int_equal(waitpid(writer, NULL, WNOHANG), 0);
	snprintf(cmd, sizeof(cmd), "%s/s.dwo", dir);
	int rfd = open(cmd, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(waitpid(writer, NULL, 0), writer);
	close(rfd);
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf %s", dir), 0);
}

/* A fake running kernel under ROOT: the stand-in vmlinux's text symbols moved by KSLIDE in
 * proc/kallsyms (as KASLR moves them), its build-id note as sys/kernel/notes, its release, and the
 * file itself as boot/vmlinux-REL where buildtrace looks for one. */
#define KSLIDE 0x2a400000ULL
#define KREL "6.1.0-fake-amd64"

static void make_kernel_root(char *root, const char *vmlinux)
{
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p build/tests"), 0);
	assert_non_null(mkdtemp(root));
	assert_int_equal(bt_test_run(NULL, 0,
		"mkdir -p %s/proc/sys/kernel %s/sys/kernel %s/boot && "
		"nm '%s' | /usr/bin/python3 -c 'import sys\n"
		"for l in sys.stdin:\n a, t, n = l.split()\n"
		" if t in \"Tt\": print(\"%%x T %%s\" %% (int(a, 16) + %llu, n))' > %s/proc/kallsyms && "
		"objcopy -O binary --only-section=.note.gnu.build-id '%s' %s/sys/kernel/notes && "
		"echo " KREL " > %s/proc/sys/kernel/osrelease && cp '%s' %s/boot/vmlinux-" KREL,
		root, root, root, vmlinux, (unsigned long long)KSLIDE, root, vmlinux, root, root, vmlinux,
		root), 0);
}

/* Every byte of the stand-in's functions, given as running addresses: names from kallsyms, and
 * file:line for each frame (inlined ones too) from the vmlinux found by build-id, at the KASLR
 * offset, exactly as eu-addr2line reads the file at the unmoved addresses. */
static void symbolize__kernel__vmlinux_lines_at_the_kaslr_offset(void **state)
{
	char rel[256], vml[PATH_MAX], root[] = "build/tests/tmp-ksym-XXXXXX", out[4096];
	assert_non_null(realpath(bt_test_fixture(rel, sizeof(rel), "symsrc/vmlinux"), vml));
	make_kernel_root(root, vml);
	int rc = bt_test_run(out, sizeof(out),
		"nm -S '%s' | /usr/bin/python3 -c 'import sys\n"
		"for l in sys.stdin:\n f = l.split()\n"
		" if len(f) == 4 and f[2] in \"Tt\":\n"
		"  for i in range(int(f[1], 16)): print(\"%%x\" %% (int(f[0], 16) + i))' > %s/addrs && "
		"/usr/bin/python3 -c 'import sys\nfor l in sys.stdin: print(\"%%x\" %% (int(l, 16) + %llu))' "
		"< %s/addrs > %s/kaddrs && "
		"./buildtrace symbolize --kernel --root %s -v < %s/kaddrs > %s/bt.out 2> %s/bt.err && "
		"sed 's/^/0x/' %s/addrs | eu-addr2line -a -i -e '%s' > %s/eu.out && "
		"tests/tools/linecmp.py %s/bt.out %s/eu.out %llx && "
		"cut -f2 %s/bt.out | sed 's/+0x.*//' | sort -u | tr '\\n' ' ' && cat %s/bt.err",
		vml, root, (unsigned long long)KSLIDE, root, root, root, root, root, root, root, vml, root,
		root, root, (unsigned long long)KSLIDE, root, root);
	print_message("%s\n", out);
	assert_int_equal(rc, 0);
	/* named from kallsyms; the vmlinux found at boot/, at the offset KASLR applied */
	assert_non_null(strstr(out, "fxk_irq fxk_syscall"));
	assert_non_null(strstr(out, "line info from"));
	assert_non_null(strstr(out, "KASLR offset 0x2a400000"));
	bt_test_run(NULL, 0, "rm -rf %s", root);
}

/* A vmlinux of another build, named on the command line or found where one is looked for, is
 * refused with both build-ids named; names still come from kallsyms, lines from nowhere. */
static void symbolize__kernel__vmlinux_of_another_build__refused(void **state)
{
	char rel[256], vml[PATH_MAX], other[PATH_MAX], root[] = "build/tests/tmp-ksym-XXXXXX", out[4096];
	assert_non_null(realpath(bt_test_fixture(rel, sizeof(rel), "symsrc/vmlinux"), vml));
	assert_non_null(realpath(bt_test_fixture(rel, sizeof(rel), "symsrc/inl"), other));
	make_kernel_root(root, vml);
	char want_run[64], want_other[64];
	assert_int_equal(bt_test_run(want_run, sizeof(want_run), "readelf -n '%s' | awk '/Build ID/ "
				     "{ printf \"%%s\", $3 }'", vml), 0);
	assert_int_equal(bt_test_run(want_other, sizeof(want_other), "readelf -n '%s' | awk '/Build ID/ "
				     "{ printf \"%%s\", $3 }'", other), 0);
	uint64_t a = nm_addr(vml, "fxk_irq") + KSLIDE;
	int rc = bt_test_run(out, sizeof(out), "./buildtrace symbolize --kernel --root %s --vmlinux '%s' "
			     "%" PRIx64 " 2>&1", root, other, a);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, want_run));
	assert_non_null(strstr(out, want_other));
	assert_non_null(strstr(out, "not used for line info"));
	char want[128];
	snprintf(want, sizeof(want), "0x%" PRIx64 "\tfxk_irq+0x0\t\n", a);
	assert_non_null(strstr(out, want));
	/* the same when the file at boot/ is the other build */
	assert_int_equal(bt_test_run(NULL, 0, "cp '%s' %s/boot/vmlinux-" KREL, other, root), 0);
	rc = bt_test_run(out, sizeof(out), "./buildtrace symbolize --kernel --root %s --no-debuginfod "
			 "%" PRIx64 " 2>&1", root, a);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "no vmlinux with the running kernel's build-id"));
	assert_non_null(strstr(out, want_run));
	assert_non_null(strstr(out, want));
	bt_test_run(NULL, 0, "rm -rf %s", root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbolize__elf__frames_match_llvm_symbolizer),
		cmocka_unit_test(symbolize__pid__same_as_the_file),
		cmocka_unit_test(symbolize__bad_input__errors),
		cmocka_unit_test(symbolize__elf_not_elf_or_not_regular__says_what),
		cmocka_unit_test(symbolize__debug_line_str_without_nul__lines_refused),
		cmocka_unit_test(symbolize__split_dwarf_dwo_fifo__not_opened),
		cmocka_unit_test(symbolize__kernel__vmlinux_lines_at_the_kaslr_offset),
		cmocka_unit_test(symbolize__kernel__vmlinux_of_another_build__refused),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
