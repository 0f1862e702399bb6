/* outputs_session.h - a session built by hand for the output format tests (test_pprof, test_jsonout):
 * two real fixture files known by their build-ids, a fake root with kallsyms and kernel notes, and
 * stacks made of named, unnamed, kernel and unmapped frames. Offsets come from nm and readelf. */
#ifndef BT_OUTPUTS_SESSION_H
#define BT_OUTPUTS_SESSION_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/buildid.h"
#include "output/folded.h"
#include "session/session.h"
#include "testutil.h"

#define OS_PROG "build/fixtures/fx-sha1"
#define OS_LIB "build/fixtures/libfx.so"
#define OS_TMP "build/tests/tmp-outputs"
/* The fake running kernel: its build-id (written into ROOT/sys/kernel/notes) and symbols. */
#define OS_KERNEL_BID "00112233445566778899aabbccddeeff01234567"
#define OS_KSYM_ADDR 0xffffffff81001000ULL
#define OS_KSYM_NAME "do_syscall_64"
/* An offset of the program that no function covers: it lies in the ELF header. */
#define OS_NOSYM_OFF 0x40ULL
#define OS_UNMAPPED_ADDR 0x7ffdeadbe000ULL

struct os_fixture {
	struct bt_session s;
	char root[128];
	char prog[PATH_MAX], lib[PATH_MAX];      /* absolute paths, as mappings carry them */
	char prog_bid[2 * BT_BUILD_ID_MAXLEN + 1], lib_bid[2 * BT_BUILD_ID_MAXLEN + 1];  /* readelf's */
	uint64_t off_main, off_helper, off_lib;  /* file offsets of main, fx_static_helper, fxl_exported */
	uint64_t total;
};

/* The file offset of a function: its address from nm, translated through readelf's PT_LOADs. */
static uint64_t os_oracle_offset(const char *file, const char *sym)
{
	char out[64] = "";
	int rc = bt_test_run(out, sizeof(out),
			     "v=0x$(nm --defined-only %s | awk '$3 == \"%s\" { print $1; exit }'); "
			     "readelf -lW %s | while read t o a p fs rest; do [ \"$t\" = LOAD ] || continue; "
			     "if [ $((v)) -ge $((a)) ] && [ $((v)) -lt $((a + fs)) ]; then "
			     "echo $((v - a + o)); break; fi; done", file, sym, file);
	assert_int_equal(rc, 0);
	assert_true(out[0] >= '0' && out[0] <= '9');
	return strtoull(out, NULL, 10);
}

static void os_oracle_build_id(const char *file, char *hex, size_t len)
{
	char out[256] = "";
	bt_test_run(out, sizeof(out), "readelf -n %s | awk '/Build ID/ { printf \"%%s\", $3 }'", file);
	assert_true(strlen(out) >= 32);
	snprintf(hex, len, "%s", out);
}

static void os_write(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* ROOT/proc/kallsyms and ROOT/sys/kernel/notes of a fake running kernel. */
static void os_make_root(struct os_fixture *x)
{
	char path[256];
	snprintf(x->root, sizeof(x->root), OS_TMP "/root-XXXXXX");
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p " OS_TMP), 0);
	assert_non_null(mkdtemp(x->root));
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/proc %s/sys/kernel", x->root, x->root), 0);
	char ks[256];
	int n = snprintf(ks, sizeof(ks), "ffffffff81000000 T _stext\n%llx T " OS_KSYM_NAME "\n"
			 "ffffffff81002000 t irq_handler\n", (unsigned long long)OS_KSYM_ADDR);
	snprintf(path, sizeof(path), "%s/proc/kallsyms", x->root);
	os_write(path, ks, (size_t)n);
	/* one ELF note: namesz, descsz, type 3 (GNU build-id), "GNU\0", the id */
	unsigned char note[12 + 4 + 20] = { 4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0 };
	struct bt_build_id id;
	assert_int_equal(bt_buildid_parse_hex(OS_KERNEL_BID, &id), 0);
	memcpy(note + 16, id.data, 20);
	snprintf(path, sizeof(path), "%s/sys/kernel/notes", x->root);
	os_write(path, note, sizeof(note));
}

/* A mapped file, known to the session by its build-id as the kernel side reports it. */
static uint32_t os_add_file(struct os_fixture *x, const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	int64_t fid = bt_dso_file(&x->s.dsos, st.st_dev, st.st_ino,
				  (uint64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, path);
	assert_true(fid >= 0);
	struct bt_build_id id;
	assert_int_equal(bt_buildid_from_path(path, &id), 0);
	struct bt_dso_mapping none = { .pid = -1 };
	assert_true(bt_dso_set_build_id(&x->s.dsos, (uint32_t)fid, &id, BT_ORIGIN_BPF, &none) >= 0);
	return (uint32_t)fid;
}

static uint32_t os_loc(struct os_fixture *x, enum bt_loc_kind kind, uint32_t fid, uint64_t addr, bool caller)
{
	int64_t id = bt_profile_loc(&x->s.prof, kind, fid, addr, caller);
	assert_true(id >= 0);
	return (uint32_t)id;
}

static void os_add(struct os_fixture *x, const char *comm, uint32_t pid, const uint32_t *ids, size_t n,
		   uint64_t count)
{
	int64_t c = bt_strtab_add(&x->s.prof.names, comm);
	assert_true(c >= 0);
	assert_int_equal(bt_profile_add(&x->s.prof, (uint32_t)c, pid, ids, n, count), 0);
	x->total += count;
}

/* The session: "prog" (two pids) in main -> fx_static_helper, main -> an offset no function covers,
 * main -> a library function -> a kernel function; "worker" in the library -> an unknown kernel
 * address, and at an address outside every mapping; a stack of no frames and no comm. */
static struct os_fixture *os_setup(bool per_pid)
{
	struct os_fixture *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	os_make_root(x);
	assert_non_null(realpath(OS_PROG, x->prog));
	assert_non_null(realpath(OS_LIB, x->lib));
	os_oracle_build_id(x->prog, x->prog_bid, sizeof(x->prog_bid));
	os_oracle_build_id(x->lib, x->lib_bid, sizeof(x->lib_bid));
	x->off_main = os_oracle_offset(x->prog, "main");
	x->off_helper = os_oracle_offset(x->prog, "fx_static_helper");
	x->off_lib = os_oracle_offset(x->lib, "fxl_exported");

	struct bt_session_opts so = { .proc_root = x->root, .kernel = true, .per_pid = per_pid,
				      .cache_dir = x->root, .cache_store = false };
	assert_int_equal(bt_session_init(&x->s, &so), 0);
	assert_int_equal(x->s.ksyms_err, 0);
	uint32_t prog = os_add_file(x, x->prog), lib = os_add_file(x, x->lib);

	/* callers are return addresses: one byte into the function is still the function */
	uint32_t main_c = os_loc(x, BT_LOC_USER, prog, x->off_main + 1, true);
	uint32_t helper = os_loc(x, BT_LOC_USER, prog, x->off_helper + 2, false);
	uint32_t nosym = os_loc(x, BT_LOC_USER, prog, OS_NOSYM_OFF, false);
	uint32_t libf = os_loc(x, BT_LOC_USER, lib, x->off_lib + 1, true);
	uint32_t ksym = os_loc(x, BT_LOC_KERNEL, 0, OS_KSYM_ADDR + 0x10, false);
	uint32_t kunk = os_loc(x, BT_LOC_KERNEL, 0, 0xffffffff80000000ULL, false);
	uint32_t unm = os_loc(x, BT_LOC_UNMAPPED, 0, OS_UNMAPPED_ADDR, false);

	os_add(x, "prog", 100, (uint32_t[]){ main_c, helper }, 2, 7);
	os_add(x, "prog", 101, (uint32_t[]){ main_c, helper }, 2, 5);
	os_add(x, "prog", 100, (uint32_t[]){ main_c, nosym }, 2, 3);
	os_add(x, "prog", 100, (uint32_t[]){ main_c, libf, ksym }, 3, 4);
	os_add(x, "worker", 102, (uint32_t[]){ libf, kunk }, 2, 2);
	os_add(x, "worker", 102, (uint32_t[]){ unm }, 1, 1);
	os_add(x, "", 103, (uint32_t[]){ 0 }, 0, 1);
	assert_int_equal(bt_session_resolve(&x->s), 0);
	return x;
}

/* Kernel module fx_mod (the fx-mod.ko fixture, found under ROOT/lib/modules/REL), loaded while the
 * session runs at OS_MOD_BASE, as a module-load record reports it; then one sample in the module's
 * main and one in a part of it no symbol covers. */
#define OS_MOD_BASE 0xffffffffc0a01000ULL
#define OS_MOD_REL "6.1.0-fake-amd64"

static void os_add_module(struct os_fixture *x, char *mod_bid, size_t len)
{
	os_oracle_build_id("build/fixtures/fx-mod.ko", mod_bid, len);
	char path[256];
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/proc/sys/kernel %s/sys/module/fx_mod/sections "
				     "%s/lib/modules/" OS_MOD_REL " && cp build/fixtures/fx-mod.ko %s/lib/modules/"
				     OS_MOD_REL "/", x->root, x->root, x->root, x->root), 0);
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/osrelease", x->root);
	os_write(path, OS_MOD_REL "\n", strlen(OS_MOD_REL) + 1);
	char base[64];
	int n = snprintf(base, sizeof(base), "0x%llx\n", (unsigned long long)OS_MOD_BASE);
	snprintf(path, sizeof(path), "%s/sys/module/fx_mod/sections/.text", x->root);
	os_write(path, base, (size_t)n);
	/* the table as a session started now would have it: the release is read at start */
	bt_kmods_free(&x->s.kmods);
	assert_int_equal(bt_kmods_init(&x->s.kmods, x->root), 0);

	struct bt_rec_module m = { .hdr = { .type = BT_REC_MODULE, .version = BT_PROTO_VERSION,
					    .size = sizeof(m) },
				   .base = OS_MOD_BASE, .size = 16384, .build_id_status = BT_BID_OK };
	struct bt_build_id id;
	assert_int_equal(bt_buildid_parse_hex(mod_bid, &id), 0);
	m.build_id_len = id.len;
	memcpy(m.build_id, id.data, id.len);
	snprintf(m.name, sizeof(m.name), "fx_mod");
	assert_int_equal(bt_session_record(&x->s, &m.hdr), 0);
	char out[64];
	assert_int_equal(bt_test_run(out, sizeof(out), "nm build/fixtures/fx-mod.ko | awk '$3 == \"main\" "
				     "{ print $1 }'"), 0);
	uint64_t main_off = strtoull(out, NULL, 16);
	static const uint64_t hot[2] = { 0x4, 0x1000 };
	for (int i = 0; i < 2; i++) {
		struct bt_rec_sample smp = { .hdr = { .type = BT_REC_SAMPLE, .version = BT_PROTO_VERSION,
						      .size = sizeof(smp) },
					     .pid = 104, .tid = 104, .kern_n = 1 };
		snprintf(smp.comm, sizeof(smp.comm), "modprobe");
		smp.ips[0] = OS_MOD_BASE + (i == 0 ? main_off + hot[0] : hot[1]);
		assert_int_equal(bt_session_record(&x->s, &smp.hdr), 0);
		x->total++;
	}
	assert_int_equal(bt_session_resolve(&x->s), 0);
}

static void os_teardown(struct os_fixture *x)
{
	bt_session_free(&x->s);
	bt_test_run(NULL, 0, "rm -rf %s", x->root);
	free(x);
}

/* The session's folded stacks, as buildtrace writes them, into path. */
static void os_write_folded(struct os_fixture *x, const char *path)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(bt_profile_write_folded(&x->s.prof, f), 0);
	assert_int_equal(fclose(f), 0);
}

/* Process 200 writing a perf map in its own /tmp (its root under the fake /proc) as pid 9 of its
 * namespace, with one line, JS:*hot at OS_JIT_ADDR; its JIT table's id. */
#define OS_JIT_ADDR 0x7f0000001000ULL
static uint32_t os_add_jit(struct os_fixture *x)
{
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/proc/200 %s/ctr/tmp && ln -s \"$PWD/%s/ctr\" %s/proc/200/root && "
				     "printf 'Uid:\\t%u\\t%u\\t%u\\t%u\\nGid:\\t0\\t0\\t0\\t0\\nNSpid:\\t200\\t9\\n' > "
				     "%s/proc/200/status && "
				     "printf '%llx 100 JS:*hot /srv/x.js:1:1\\n' > %s/ctr/tmp/perf-9.map",
				     x->root, x->root, x->root, x->root, (unsigned)geteuid(), (unsigned)geteuid(),
				     (unsigned)geteuid(), (unsigned)geteuid(), x->root, OS_JIT_ADDR, x->root), 0);
	int64_t jit = bt_jitmaps_proc(&x->s.jit, 200, 1);
	assert_true(jit >= 0);
	return (uint32_t)jit;
}

#endif
