/* test_session.c - the record consumer fed synthetic ring buffer records (bt_proto.h): exec, mmap
 * with the build-id of a fixture file, fork, munmap, exit and samples, the frames named against nm
 * and readelf of the same file; kernel frames against a fake kallsyms; malformed records counted. */
#include "testutil.h"
#include "output/folded.h"
#include "session/session.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define PROG "build/fixtures/fx-sha1"
#define NOBID "build/fixtures/fx-none"
#define TMP "build/tests/tmp-session"
#define BASE 0x555500000000ULL      /* where the synthetic processes map the program */
#define KSYM_ADDR 0xffffffff81001000ULL
#define KSCHED_ADDR 0xffffffff81100000ULL   /* __schedule */
#define KTRACE_ADDR 0xffffffff81200000ULL   /* bpf_trace_run4: the tracepoint's, before __schedule */

struct fx {
	struct bt_session s;
	char root[128];                 /* a fake root: kallsyms, and no /proc/PID of the pids used */
	char prog[PATH_MAX];
	uint64_t off_main, off_helper;  /* file offsets of main and fx_static_helper */
	uint64_t t;                     /* the records' clock */
};

/* A function's file offset: its address from nm, translated through readelf's PT_LOADs. */
static uint64_t oracle_offset(const char *file, const char *sym)
{
	char out[64] = "";
	assert_int_equal(bt_test_run(out, sizeof(out),
				     "v=0x$(nm --defined-only %s | awk '$3 == \"%s\" { print $1; exit }'); "
				     "readelf -lW %s | while read t o a p fs rest; do [ \"$t\" = LOAD ] || continue; "
				     "if [ $((v)) -ge $((a)) ] && [ $((v)) -lt $((a + fs)) ]; then "
				     "echo $((v - a + o)); break; fi; done", file, sym, file), 0);
	assert_true(out[0] >= '0' && out[0] <= '9');
	return strtoull(out, NULL, 10);
}

static struct fx *setup(bool kernel)
{
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p " TMP), 0);
	snprintf(x->root, sizeof(x->root), TMP "/root-XXXXXX");
	assert_non_null(mkdtemp(x->root));
	char ks[256];
	snprintf(ks, sizeof(ks), "ffffffff81000000 T _stext\n%llx T do_syscall_64\n%llx T __schedule\n"
		 "%llx T bpf_trace_run4\n", (unsigned long long)KSYM_ADDR, (unsigned long long)KSCHED_ADDR,
		 (unsigned long long)KTRACE_ADDR);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/proc && printf '%s' > %s/proc/kallsyms", x->root,
				     ks, x->root), 0);
	assert_non_null(realpath(PROG, x->prog));
	x->off_main = oracle_offset(x->prog, "main");
	x->off_helper = oracle_offset(x->prog, "fx_static_helper");
	struct bt_session_opts so = { .proc_root = x->root, .kernel = kernel, .cache_dir = x->root };
	assert_int_equal(bt_session_init(&x->s, &so), 0);
	return x;
}

static void teardown(struct fx *x)
{
	bt_session_free(&x->s);
	bt_test_run(NULL, 0, "rm -rf %s", x->root);
	free(x);
}

static void hdr(struct fx *x, struct bt_rec_hdr *h, enum bt_rec_type type, size_t size)
{
	h->type = (uint16_t)type;
	h->version = BT_PROTO_VERSION;
	h->size = (uint32_t)size;
	h->time_ns = ++x->t;
}

static void exec_rec(struct fx *x, uint32_t pid)
{
	struct bt_rec_exec e = { .pid = pid };
	hdr(x, &e.hdr, BT_REC_EXEC, sizeof(e));
	assert_int_equal(bt_session_record(&x->s, &e.hdr), 0);
}

/* An mmap record of the whole file at BASE, its build-id read by the kernel side (status OK), or
 * the status given. */
static void mmap_rec_at(struct fx *x, uint32_t pid, const char *path, uint8_t status, uint64_t time_ns)
{
	struct bt_rec_mapping m = { .pid = pid, .start = BASE, .end = BASE + 0x10000, .build_id_status = status };
	hdr(x, &m.hdr, BT_REC_MMAP, sizeof(m));
	if (time_ns)
		m.hdr.time_ns = time_ns;
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	m.ino = st.st_ino;
	m.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000 + (uint64_t)st.st_mtim.tv_nsec;
	m.dev = major(st.st_dev) << 20 | minor(st.st_dev);
	if (status == BT_BID_OK) {
		struct bt_build_id id;
		assert_int_equal(bt_buildid_from_path(path, &id), 0);
		m.build_id_len = id.len;
		memcpy(m.build_id, id.data, id.len);
	}
	m.path_len = (uint16_t)(strlen(path) + 1);
	memcpy(m.path, path, m.path_len);
	assert_int_equal(bt_session_record(&x->s, &m.hdr), 0);
}

static void mmap_rec(struct fx *x, uint32_t pid, const char *path, uint8_t status)
{
	mmap_rec_at(x, pid, path, status, 0);
}

/* A sample of user frames at these file offsets of the mapping at BASE (innermost first: callers
 * are return addresses, one byte into the call's function) after kn kernel frames. */
static void sample_rec(struct fx *x, uint32_t pid, const uint64_t *kips, size_t kn, const uint64_t *offs,
		       size_t un)
{
	struct bt_rec_sample r = { .pid = pid, .tid = pid, .kern_n = (uint16_t)kn, .user_n = (uint16_t)un };
	hdr(x, &r.hdr, BT_REC_SAMPLE, sizeof(r));
	snprintf(r.comm, sizeof(r.comm), "fx");
	for (size_t i = 0; i < kn; i++)
		r.ips[i] = kips[i];
	for (size_t i = 0; i < un; i++)
		r.ips[kn + i] = BASE + offs[i];
	assert_int_equal(bt_session_record(&x->s, &r.hdr), 0);
}

/* The session's folded stacks. */
static char *folded(struct fx *x)
{
	assert_int_equal(bt_session_resolve(&x->s), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(bt_profile_write_folded(&x->s.prof, f), 0);
	fclose(f);
	return buf;
}

static void session__exec_mmap_sample__names_of_nm(void **state)
{
	struct fx *x = setup(false);
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	uint64_t offs[] = { x->off_helper + 2, x->off_main + 1 };
	sample_rec(x, 500, NULL, 0, offs, 2);
	sample_rec(x, 500, NULL, 0, offs, 2);
	char *out = folded(x);
	assert_string_equal(out, "fx;main;fx_static_helper 2\n");
	free(out);
	assert_int_equal(x->s.stats.samples, 2);
	assert_int_equal(x->s.stats.mappings, 1);
	assert_int_equal(x->s.stats.bid_bpf, 1);
	assert_int_equal(x->s.stats.unmapped_frames, 0);
	assert_int_equal(bt_session_build_ids(&x->s), 1);
	assert_int_equal(bt_profile_unresolved_frames(&x->s.prof), 0);
	teardown(x);
}

/* Samples still in flight after the exit record are read against the old mappings, until reaped. */
static void session__exit__mappings_kept_until_reaped(void **state)
{
	struct fx *x = setup(false);
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	struct bt_rec_exit e = { .pid = 500 };
	hdr(x, &e.hdr, BT_REC_EXIT, sizeof(e));
	assert_int_equal(bt_session_record(&x->s, &e.hdr), 0);
	uint64_t offs[] = { x->off_main };
	sample_rec(x, 500, NULL, 0, offs, 1);
	assert_int_equal(x->s.stats.exits, 1);
	assert_int_equal(x->s.stats.unmapped_frames, 0);
	bt_session_reap(&x->s, 0);
	sample_rec(x, 500, NULL, 0, offs, 1);
	assert_int_equal(x->s.stats.unmapped_frames, 1);
	char *out = folded(x);
	assert_string_equal(out, "fx;[unknown] 1\nfx;main 1\n");
	free(out);
	teardown(x);
}

/* The kernel's mmap records are read beside the ring buffer: one made before its process exited
 * may be handed over after the exit record. It does not bring the process back (which would never
 * be reaped); a mapping after the exit does (a reused pid). */
static void session__mmap_record_after_exit__process_stays_dead(void **state)
{
	struct fx *x = setup(false);
	exec_rec(x, 600);
	uint64_t before_exit = ++x->t;
	struct bt_rec_exit e = { .pid = 600 };
	hdr(x, &e.hdr, BT_REC_EXIT, sizeof(e));
	assert_int_equal(bt_session_record(&x->s, &e.hdr), 0);
	mmap_rec_at(x, 600, x->prog, BT_BID_OK, before_exit);
	const struct bt_process *p = bt_proctable_find(&x->s.procs, 600);
	assert_non_null(p);
	assert_true(p->dead);
	bt_session_reap(&x->s, 0);
	assert_int_equal(x->s.procs.nprocs, 0);
	mmap_rec(x, 600, x->prog, BT_BID_OK);
	p = bt_proctable_find(&x->s.procs, 600);
	assert_non_null(p);
	assert_false(p->dead);
	teardown(x);
}

static void session__munmap_then_sample__frame_unmapped(void **state)
{
	struct fx *x = setup(false);
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	/* the page holding main goes */
	uint64_t page = (BASE + x->off_main) & ~0xfffULL;
	struct bt_rec_munmap u = { .pid = 500, .start = page, .end = page + 0x1000 };
	hdr(x, &u.hdr, BT_REC_MUNMAP, sizeof(u));
	assert_int_equal(bt_session_record(&x->s, &u.hdr), 0);
	uint64_t offs[] = { x->off_main };
	sample_rec(x, 500, NULL, 0, offs, 1);
	assert_int_equal(x->s.stats.unmapped_frames, 1);
	char *out = folded(x);
	assert_string_equal(out, "fx;[unknown] 1\n");
	free(out);
	assert_int_equal(bt_profile_unresolved_frames(&x->s.prof), 1);
	teardown(x);
}

/* A process writing a perf map: an address outside its files is JIT code, named from the map,
 * but an address no user code can have (0, or one above user space that a walk gone astray
 * read) is unmapped, not JIT code the map does not name. */
static void session__perf_map__jit_named_impossible_addresses_unmapped(void **state)
{
	struct fx *x = setup(false);
	/* the process's status (its users this test's, who write its map) and its root, with the map
	 * in its /tmp (the fake root's own) */
	unsigned u = (unsigned)geteuid(), g = (unsigned)getegid();
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/proc/500/root/tmp && printf 'Name:\tfx\nUid:\t%u\t%u\t%u\t%u\n"
				     "Gid:\t%u\t%u\t%u\t%u\nNSpid:\t500\n' > %s/proc/500/status && printf '7f0000001000 "
				     "100 jitted_fn\n' > %s/proc/500/root/tmp/perf-500.map", x->root, u, u, u, u, g, g, g, g,
				     x->root, x->root), 0);
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	const uint64_t addrs[] = { 0x7f0000001010ULL, 0, 0xffff800000001000ULL, 0x0100000000000000ULL };
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct bt_rec_sample r = { .pid = 500, .tid = 500, .user_n = 2 };
		hdr(x, &r.hdr, BT_REC_SAMPLE, sizeof(r));
		snprintf(r.comm, sizeof(r.comm), "fx");
		r.ips[0] = addrs[i];
		r.ips[1] = BASE + x->off_main + 1;
		assert_int_equal(bt_session_record(&x->s, &r.hdr), 0);
	}
	assert_int_equal(x->s.stats.unmapped_frames, 3);
	char *out = folded(x);
	assert_string_equal(out, "fx;main;[unknown] 3\nfx;main;jitted_fn 1\n");
	free(out);
	teardown(x);
}

static void session__fork__child_inherits_mappings(void **state)
{
	struct fx *x = setup(false);
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	struct bt_rec_fork f = { .parent_pid = 500, .child_pid = 501 };
	hdr(x, &f.hdr, BT_REC_FORK, sizeof(f));
	assert_int_equal(bt_session_record(&x->s, &f.hdr), 0);
	uint64_t offs[] = { x->off_helper };
	sample_rec(x, 501, NULL, 0, offs, 1);
	/* a process the session never heard of maps nothing */
	sample_rec(x, 502, NULL, 0, offs, 1);
	assert_int_equal(x->s.stats.unmapped_frames, 1);
	char *out = folded(x);
	assert_string_equal(out, "fx;[unknown] 1\nfx;fx_static_helper 1\n");
	free(out);
	teardown(x);
}

/* A build-id the kernel could not read yet: a placeholder that is not final, named once the
 * iterator's record brings the build-id. */
static void session__pending_build_id__placeholder_then_named(void **state)
{
	struct fx *x = setup(false);
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_PENDING);
	uint64_t offs[] = { x->off_main };
	sample_rec(x, 500, NULL, 0, offs, 1);
	char *out = folded(x), want[128];
	snprintf(want, sizeof(want), "fx;[fx-sha1+0x%llx] 1\n", (unsigned long long)x->off_main);
	assert_string_equal(out, want);
	free(out);
	assert_int_equal(bt_profile_unresolved_frames(&x->s.prof), 1);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	out = folded(x);
	assert_string_equal(out, "fx;main 1\n");
	free(out);
	teardown(x);
}

/* A file without a build-id is named from itself, once its device and inode are those mapped. */
static void session__no_build_id__named_from_the_file(void **state)
{
	struct fx *x = setup(false);
	char path[PATH_MAX];
	assert_non_null(realpath(NOBID, path));
	exec_rec(x, 500);
	mmap_rec(x, 500, path, BT_BID_NONE);
	uint64_t offs[] = { oracle_offset(path, "main") };
	sample_rec(x, 500, NULL, 0, offs, 1);
	char *out = folded(x);
	assert_string_equal(out, "fx;main 1\n");
	free(out);
	assert_int_equal(bt_session_build_ids(&x->s), 0);
	teardown(x);
}

/* Kernel frames: kallsyms' names, kept plain with a kernel kind (the folded writer marks them), and
 * an address kallsyms does not cover named after the kernel image and counted as a miss. */
static void session__kernel_frames__plain_names_marked_when_folded(void **state)
{
	struct fx *x = setup(true);
	assert_int_equal(x->s.ksyms_err, 0);
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	uint64_t kips[] = { KSYM_ADDR + 0x10, 0xffffffff80000000ULL };
	uint64_t offs[] = { x->off_main };
	sample_rec(x, 500, kips, 2, offs, 1);
	char *out = folded(x);
	assert_string_equal(out, "fx;main;[kernel.kallsyms]_[k];do_syscall_64_[k] 1\n");
	free(out);
	const struct bt_stack *st = &x->s.prof.stacks[0];
	const struct bt_loc *inner = &x->s.prof.locs[x->s.prof.frames[st->first + st->nframes - 1]];
	assert_int_equal(inner->kind, BT_LOC_KERNEL);
	assert_string_equal(bt_strtab_get(&x->s.prof.names, inner->name_id), "do_syscall_64");
	assert_int_equal(x->s.ksyms_misses, 1);
	assert_int_equal(bt_profile_unresolved_frames(&x->s.prof), 1);
	teardown(x);
}

/* The frames of off-CPU stack key, as the kernel writes them the first time it meets the key: the
 * tracepoint's frame and __schedule's, then a system call's, then user frames at these offsets. */
static void offstack_rec(struct fx *x, uint32_t pid, uint32_t tid, uint64_t key, const uint64_t *offs, size_t un)
{
	struct bt_rec_offcpu_stack d = { .key = key };
	hdr(x, &d.hdr, BT_REC_OFFCPU_STACK, sizeof(d));
	d.hdr.tag = key == 4343 ? BT_OFFCPU_STACK_EARLY : 0;   /* the test of a stack taken at the start */
	struct bt_rec_sample *r = &d.s;
	hdr(x, &r->hdr, BT_REC_OFFCPU_STACK, sizeof(*r));
	r->pid = pid;
	r->tid = tid;
	snprintf(r->comm, sizeof(r->comm), "fx");
	uint64_t kips[] = { KTRACE_ADDR + 0x20, KSCHED_ADDR + 0x40, KSYM_ADDR + 0x10 };
	r->kern_n = 3;
	r->user_n = (uint16_t)un;
	memcpy(r->ips, kips, sizeof(kips));
	for (size_t i = 0; i < un; i++)
		r->ips[3 + i] = BASE + offs[i];
	assert_int_equal(bt_session_record(&x->s, &d.hdr), 0);
}

/* ns of off-CPU time of thread tid in the stack of key, in state. */
static void offtime_rec(struct fx *x, uint32_t pid, uint32_t tid, uint64_t key, uint8_t state, uint64_t ns,
			uint32_t blocks)
{
	struct bt_rec_offcpu v = { .key = key, .pid = pid, .tid = tid, .ns = ns, .blocks = blocks, .state = state };
	hdr(x, &v.hdr, BT_REC_OFFCPU, sizeof(v));
	assert_int_equal(bt_session_record(&x->s, &v.hdr), 0);
}

/* The session's off-CPU stacks as folded time, in microseconds. */
static char *folded_time(struct fx *x, bool wall)
{
	assert_int_equal(bt_session_resolve(&x->s), 0);
	struct bt_fold_time t = { .wall = wall, .period_ns = 1000, .unit_ns = 1000 };
	struct bt_folded f;
	assert_int_equal(bt_folded_time_from_profile(&x->s.prof, &t, &f), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_non_null(out);
	assert_int_equal(bt_folded_write(&f, out), 0);
	fclose(out);
	bt_folded_free(&f);
	return buf;
}

/* A stack's frames once, its time many times: summed per state, each state the stack's leaf, the
 * scheduler's tracepoint frames before __schedule left out; kept apart from the CPU samples. */
static void session__offcpu_stack_then_times__summed_with_state_leaf(void **state)
{
	struct fx *x = setup(true);
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	uint64_t offs[] = { x->off_helper + 2, x->off_main + 1 };
	offstack_rec(x, 500, 501, 1000, offs, 2);
	offtime_rec(x, 500, 501, 1000, BT_OFFCPU_SLEEP, 4000, 2);
	offtime_rec(x, 500, 501, 1000, BT_OFFCPU_SLEEP, 6000, 1);
	offtime_rec(x, 500, 501, 1000, BT_OFFCPU_RUNQ, 3000, 0);
	sample_rec(x, 500, NULL, 0, offs, 2);
	char *out = folded_time(x, false);
	assert_string_equal(out, "fx;main;fx_static_helper;do_syscall_64_[k];__schedule_[k];off-CPU: runnable (R) 3\n"
				 "fx;main;fx_static_helper;do_syscall_64_[k];__schedule_[k];off-CPU: sleeping (S) 10\n");
	free(out);
	/* wall: the sample too, as its period (1 us here) */
	out = folded_time(x, true);
	assert_non_null(strstr(out, "fx;main;fx_static_helper 1\n"));
	free(out);
	/* the CPU view has the sample only */
	out = folded(x);
	assert_string_equal(out, "fx;main;fx_static_helper 1\n");
	free(out);
	assert_int_equal(x->s.prof.total, 1);
	assert_int_equal(x->s.prof.offcpu_ns, 13000);
	assert_int_equal(x->s.stats.offcpu_ns, 13000);
	assert_int_equal(x->s.stats.offcpu_state_ns[BT_OFFCPU_SLEEP], 10000);
	assert_int_equal(x->s.stats.offcpu_blocks, 3);
	assert_int_equal(x->s.stats.offcpu_stacks, 1);
	assert_int_equal(x->s.stats.samples, 1);   /* the stack's frames are no sample */
	assert_int_equal(bt_profile_unresolved_ns(&x->s.prof), 0);
	teardown(x);
}

/* Time without a stack: blocked since before the session (named as /proc names the thread), over
 * the rate bound, or of a key whose frames never came; each its own placeholder, counted. */
static void session__offcpu_without_stack__placeholders_counted(void **state)
{
	struct fx *x = setup(true);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/proc/500/task/501 && echo worker > "
				     "%s/proc/500/task/501/comm", x->root, x->root), 0);
	exec_rec(x, 500);
	offtime_rec(x, 500, 501, BT_OFFCPU_KEY_EARLY, BT_OFFCPU_UNINT, 2000, 0);
	offtime_rec(x, 500, 501, BT_OFFCPU_KEY_UNWALKED, BT_OFFCPU_SLEEP, 3000, 1);
	offtime_rec(x, 500, 502, 4242, BT_OFFCPU_SLEEP, 5000, 1);
	/* a thread off a CPU at the start whose kernel stack the kernel took: those frames, first the
	 * placeholder of what it could not take */
	offstack_rec(x, 500, 503, 4343, NULL, 0);
	offtime_rec(x, 500, 503, 4343, BT_OFFCPU_SLEEP, 7000, 0);
	char *out = folded_time(x, false);
	assert_string_equal(out, "[unknown];[stack lost];off-CPU: sleeping (S) 5\n"
				 "fx;[off-CPU since before the session];do_syscall_64_[k];__schedule_[k];"
				 "off-CPU: sleeping (S) 7\n"
				 "worker;[off-CPU since before the session];off-CPU: uninterruptible (D) 2\n"
				 "worker;[stack not taken: rate bound];off-CPU: sleeping (S) 3\n");
	free(out);
	assert_int_equal(x->s.stats.offcpu_nostack_ns, 17000);
	assert_int_equal(x->s.stats.offcpu_lost_ns, 5000);
	assert_int_equal(bt_profile_unresolved_ns(&x->s.prof), 17000);
	assert_int_equal(bt_profile_unresolved_frames(&x->s.prof), 0);  /* samples only */
	teardown(x);
}

/* The kernel forgets its keys (a record of key 0): a stack neither given nor used for two epochs
 * goes, one used meanwhile stays; time going to a second profile (also) gets the same stacks. */
static void session__offcpu_epochs__unused_stacks_forgotten(void **state)
{
	struct fx *x = setup(false);
	struct bt_profile also;
	bt_profile_init(&also);
	x->s.also = &also;
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	uint64_t offs[] = { x->off_main };
	offstack_rec(x, 500, 500, 100, offs, 1);
	offstack_rec(x, 500, 500, 200, offs, 0);
	for (int i = 0; i < 3; i++) {
		offtime_rec(x, 500, 500, 0, 0, 0, 0);
		if (i == 0)
			offtime_rec(x, 500, 500, 100, BT_OFFCPU_SLEEP, 1000, 1);
	}
	assert_int_equal(x->s.stats.offcpu_dropped, 1);
	offtime_rec(x, 500, 500, 100, BT_OFFCPU_SLEEP, 1000, 1);
	offtime_rec(x, 500, 500, 200, BT_OFFCPU_SLEEP, 1000, 1);
	assert_int_equal(x->s.stats.offcpu_lost_ns, 1000);
	assert_int_equal(also.offcpu_ns, 3000);
	assert_int_equal(x->s.prof.offcpu_ns, 3000);
	x->s.also = NULL;
	bt_profile_free(&also);
	teardown(x);
}

/* With labels: samples of two threads are two stacks, each with the process's executable; a cgroup
 * whose path cannot be read (no cgroup2 mount under the root) leaves no label and is counted once;
 * a second profile set as also gets the same samples. */
static void session__labels__apart_by_thread_with_executable(void **state)
{
	struct fx *x = setup(false);
	bt_session_free(&x->s);
	struct bt_session_opts so = { .proc_root = x->root, .cache_dir = x->root, .labels = true };
	assert_int_equal(bt_session_init(&x->s, &so), 0);
	assert_true(x->s.prof.labels && x->s.prof.per_pid);
	struct bt_profile also;
	bt_profile_init(&also);
	also.labels = true;
	x->s.also = &also;
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	uint64_t offs[] = { x->off_main };
	sample_rec(x, 500, NULL, 0, offs, 1);
	sample_rec(x, 500, NULL, 0, offs, 1);
	struct bt_rec_sample r = { .pid = 500, .tid = 501, .user_n = 1, .cgroup_id = 77 };
	hdr(x, &r.hdr, BT_REC_SAMPLE, sizeof(r));
	snprintf(r.comm, sizeof(r.comm), "fx");
	r.ips[0] = BASE + x->off_main;
	assert_int_equal(bt_session_record(&x->s, &r.hdr), 0);
	const struct bt_process *p = bt_proctable_find(&x->s.procs, 500);
	assert_non_null(p);
	assert_int_equal(x->s.prof.nstacks, 2);
	assert_int_equal(x->s.prof.stacks[0].tid, 500);
	assert_int_equal(x->s.prof.stacks[0].count, 2);
	assert_int_equal(x->s.prof.stacks[1].tid, 501);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(x->s.prof.stacks[i].exe_file, p->maps[0].file_id);
		assert_int_equal(x->s.prof.stacks[i].cgroup_id, BT_NAME_UNSET);
	}
	assert_int_equal(x->s.cgroup_misses, 2);  /* ids 0 and 77, each once */
	assert_int_equal(also.nstacks, 2);
	assert_int_equal(also.total, 3);
	assert_int_equal(also.stacks[1].tid, 501);
	x->s.also = NULL;
	bt_profile_free(&also);
	teardown(x);
}

/* A second profile set as also takes the samples taken in its window, by their own time, whenever
 * they are delivered: not one taken before it began (delivered late), nor one taken after its end. */
static void session__also_window__samples_by_their_time(void **state)
{
	struct fx *x = setup(false);
	struct bt_profile also;
	bt_profile_init(&also);
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	uint64_t offs[] = { x->off_main };
	x->s.also = &also;
	x->s.also_from_ns = x->t + 2;   /* the next sample is taken before the window */
	sample_rec(x, 500, NULL, 0, offs, 1);
	assert_int_equal(also.total, 0);
	sample_rec(x, 500, NULL, 0, offs, 1);
	sample_rec(x, 500, NULL, 0, offs, 1);
	x->s.also_until_ns = x->t + 2;   /* the next is the last in it */
	sample_rec(x, 500, NULL, 0, offs, 1);
	sample_rec(x, 500, NULL, 0, offs, 1);
	assert_int_equal(also.total, 3);
	assert_int_equal(x->s.prof.total, 5);
	x->s.also = NULL;
	bt_profile_free(&also);
	teardown(x);
}

/* Off-CPU time goes to also by its cut's time (the end of the time it counts), whenever it is
 * delivered: not a cut made at or before the window's start (queued, delivered after it began), one
 * at its end (made before the end's clock is read) and those between. */
static void session__also_window__offcpu_by_its_cut(void **state)
{
	struct fx *x = setup(false);
	struct bt_profile also;
	bt_profile_init(&also);
	exec_rec(x, 500);
	mmap_rec(x, 500, x->prog, BT_BID_OK);
	uint64_t offs[] = { x->off_main };
	offstack_rec(x, 500, 501, 1000, offs, 1);
	x->s.also = &also;
	x->s.also_from_ns = x->t + 1;   /* the next record is the start's cut */
	offtime_rec(x, 500, 501, 1000, BT_OFFCPU_SLEEP, 1000, 1);
	assert_int_equal(also.offcpu_ns, 0);
	offtime_rec(x, 500, 501, 1000, BT_OFFCPU_SLEEP, 2000, 1);
	x->s.also_until_ns = x->t + 1;  /* the next is the end's cut */
	offtime_rec(x, 500, 501, 1000, BT_OFFCPU_SLEEP, 4000, 1);
	offtime_rec(x, 500, 501, 1000, BT_OFFCPU_SLEEP, 8000, 1);
	assert_int_equal(also.offcpu_ns, 6000);
	assert_int_equal(x->s.prof.offcpu_ns, 15000);
	x->s.also = NULL;
	bt_profile_free(&also);
	teardown(x);
}

/* A code object of CPython 3.11 in this process's memory: qualified name q, file, first line. */
struct fake_code {
	uint8_t code[256], name[128], file[128];
};

static void fake_str(uint8_t *obj, const struct bt_py_offsets *o, const char *s)
{
	uint64_t len = strlen(s);
	uint32_t st = 1u << o->state_kind | 1u << o->state_compact | 1u << o->state_ascii;
	memcpy(obj + o->str_length, &len, 8);
	memcpy(obj + o->str_state, &st, 4);
	memcpy(obj + o->ascii_data, s, len + 1);
}

static struct bt_py_frame fake_frame(struct fake_code *c, const char *q, int first, bool entry)
{
	const struct bt_py_offsets *o = bt_pyoffsets_get(3, 11);
	memset(c, 0, sizeof(*c));
	fake_str(c->name, o, q);
	fake_str(c->file, o, "/srv/app.py");
	uint64_t name = (uint64_t)(uintptr_t)c->name, file = (uint64_t)(uintptr_t)c->file;
	memcpy(c->code + o->code_name, &name, 8);
	memcpy(c->code + o->code_qualname, &name, 8);
	memcpy(c->code + o->code_filename, &file, 8);
	memcpy(c->code + o->code_firstlineno, &first, 4);
	struct bt_py_frame f = { .code = (uint64_t)(uintptr_t)c->code, .is_entry = entry };
	/* a frame not started yet: its instruction before the first, on its first line */
	f.instr = -2;
	memcpy(&f.tag, c->code + o->code_firstlineno, 8);
	return f;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The folded text's lines sorted, in place order-free: what the profile holds, not how it is kept. */
static void assert_same_lines(char *got, const char *want)
{
	char *w = strdup(want), *lines[2][16];
	size_t n[2] = { 0, 0 };
	char *texts[2] = { got, w };
	for (int k = 0; k < 2; k++) {
		char *save = NULL;
		for (char *l = strtok_r(texts[k], "\n", &save); l && n[k] < 16; l = strtok_r(NULL, "\n", &save))
			lines[k][n[k]++] = l;
		qsort(lines[k], n[k], sizeof(char *), cmp_line);
	}
	assert_int_equal(n[0], n[1]);
	for (size_t i = 0; i < n[0]; i++)
		assert_string_equal(lines[0][i], lines[1][i]);
	free(w);
}

/* A sample of this very process (its memory holds the code objects) with user frames at offs and
 * the Python frames fr (innermost first) before it, their walk ended as walk; user_err as the
 * sampler's BPF walk gives it. */
static void py_sample_walk(struct fx *x, uint32_t pid, const uint64_t *offs, size_t un, const struct bt_py_frame *fr,
			   size_t n, int walk, int32_t user_err)
{
	struct bt_rec_pystack p = { .pid = pid, .tid = pid, .n = (uint16_t)n, .walk = (uint16_t)walk };
	hdr(x, &p.hdr, BT_REC_PYSTACK, offsetof(struct bt_rec_pystack, frames) + n * sizeof(fr[0]));
	memcpy(p.frames, fr, n * sizeof(fr[0]));
	assert_int_equal(bt_session_record(&x->s, &p.hdr), 0);
	x->t--;  /* the sample has the same time */
	struct bt_rec_sample r = { .pid = pid, .tid = pid, .user_n = (uint16_t)un, .user_err = user_err };
	hdr(x, &r.hdr, BT_REC_SAMPLE, sizeof(r));
	snprintf(r.comm, sizeof(r.comm), "fx");
	for (size_t i = 0; i < un; i++)
		r.ips[i] = BASE + offs[i];
	assert_int_equal(bt_session_record(&x->s, &r.hdr), 0);
}

static void py_sample(struct fx *x, uint32_t pid, const uint64_t *offs, size_t un, const struct bt_py_frame *fr,
		      size_t n)
{
	py_sample_walk(x, pid, offs, un, fr, n, BT_PY_WALK_DONE, 0);
}

/* A session whose process pid runs an interpreter (main standing in for _PyEval_EvalFrameDefault),
 * its Python frames in fr: Sieve.check and count run by one C call of the eval loop, <module> by
 * another. */
static struct fx *py_setup(bool bpf_walk, uint32_t *pid, struct bt_py_frame *fr)
{
	struct fx *x = setup(false);
	x->s.opts.bpf_walk = bpf_walk;
	*pid = (uint32_t)getpid();
	exec_rec(x, *pid);
	mmap_rec(x, *pid, x->prog, BT_BID_OK);
	const struct bt_process *p = bt_proctable_find(&x->s.procs, (int)*pid);
	assert_non_null(p);
	struct bt_pyruntime rt = { .major = 3, .minor = 11, .eval_offset = x->off_main, .eval_size = 1 };
	struct bt_mapping m = p->maps[0];
	assert_true(bt_pyprocs_adopt(&x->s.py, (int)*pid, &rt, &m) >= 0);
	static struct fake_code ca, cb, cc;
	fr[0] = fake_frame(&ca, "Sieve.check", 30, false);
	fr[1] = fake_frame(&cb, "count", 20, true);
	fr[2] = fake_frame(&cc, "<module>", 1, true);
	return x;
}

/* Each eval-loop frame of the native stack takes the Python frames up to the next is_entry,
 * innermost first; with frame pointers, frames no eval-loop frame took show the native stack was
 * cut: they go first, a [truncated] mark after them. */
static void session__python_frames__replace_eval_loop_frames(void **state)
{
	uint32_t pid;
	struct bt_py_frame fr[3];
	struct fx *x = py_setup(false, &pid, fr);
	/* the leaf, then two calls of the eval loop */
	uint64_t offs[] = { x->off_helper + 2, x->off_main + 1, x->off_main + 1 };
	py_sample(x, pid, offs, 3, fr, 3);
	/* one eval-loop frame only: <module>'s was not reached */
	py_sample(x, pid, offs, 2, fr, 3);
	char *out = folded(x);
	assert_same_lines(out, "fx;<module> (app.py:1);count (app.py:20);Sieve.check (app.py:30);fx_static_helper 1\n"
				 "fx;<module> (app.py:1);[truncated];count (app.py:20);Sieve.check (app.py:30);"
				 "fx_static_helper 1\n");
	free(out);
	assert_int_equal(x->s.py.stats.stacks, 2);
	assert_int_equal(x->s.py.stats.frames, 6);
	assert_int_equal(x->s.py.stats.rooted, 1);
	assert_int_equal(x->s.py.stats.truncated, 1);
	assert_int_equal(x->s.py.stats.code_reads, 3);
	/* a mark is no unnamed frame */
	assert_int_equal(bt_profile_unresolved_frames(&x->s.prof), 0);
	/* a sample without its Python frames keeps the eval loop's frame */
	sample_rec(x, pid, NULL, 0, offs, 2);
	out = folded(x);
	assert_non_null(strstr(out, "fx;main;fx_static_helper 1\n"));
	free(out);
	teardown(x);
}

/* With the BPF walk's word on where the native walk ended: a stack cut short is marked at its
 * root; a walk that took a frame for the outermost without reaching <module>'s C call of the eval
 * loop was cut all the same. */
static void session__python_frames__native_walk_said_whole_or_cut(void **state)
{
	uint32_t pid;
	struct bt_py_frame fr[3];
	struct fx *x = py_setup(true, &pid, fr);
	uint64_t offs[] = { x->off_helper + 2, x->off_main + 1, x->off_main + 1 };
	py_sample_walk(x, pid, offs, 2, fr, 3, BT_PY_WALK_DONE, BT_UWALK_DONE);
	py_sample_walk(x, pid, offs, 3, fr, 3, BT_PY_WALK_DONE, BT_UWALK_READ);
	py_sample_walk(x, pid, offs, 2, fr, 3, BT_PY_WALK_DONE, BT_UWALK_MAX);
	char *out = folded(x);
	assert_same_lines(out, "fx;[truncated];<module> (app.py:1);count (app.py:20);Sieve.check (app.py:30);"
				 "fx_static_helper 1\n"
				 "fx;<module> (app.py:1);[truncated];count (app.py:20);Sieve.check (app.py:30);"
				 "fx_static_helper 2\n");
	free(out);
	assert_int_equal(x->s.py.stats.rooted, 2);
	assert_int_equal(x->s.py.stats.truncated, 3);
	/* a whole stack that holds every C call: no mark */
	py_sample_walk(x, pid, offs, 3, fr, 3, BT_PY_WALK_DONE, BT_UWALK_DONE);
	out = folded(x);
	assert_non_null(strstr(out, "fx;<module> (app.py:1);count (app.py:20);Sieve.check (app.py:30);"
				    "fx_static_helper 1\n"));
	free(out);
	assert_int_equal(x->s.py.stats.truncated, 3);
	teardown(x);
}

/* A Python walk cut short (frames past BT_PY_MAX_FRAMES, a page not resident) is marked where its
 * outermost frame read ends. */
static void session__python_walk_cut__marked(void **state)
{
	uint32_t pid;
	struct bt_py_frame fr[3];
	struct fx *x = py_setup(false, &pid, fr);
	/* the walk ended in count's C call, before <module> */
	uint64_t offs[] = { x->off_helper + 2, x->off_main + 1, x->off_main + 1 };
	py_sample_walk(x, pid, offs, 3, fr, 2, BT_PY_WALK_TRUNCATED, 0);
	/* and with <module> outer to a cut native stack */
	py_sample_walk(x, pid, offs, 2, fr, 3, BT_PY_WALK_FAULT, 0);
	char *out = folded(x);
	assert_same_lines(out, "fx;main;[truncated];count (app.py:20);Sieve.check (app.py:30);fx_static_helper 1\n"
				 "fx;[truncated];<module> (app.py:1);[truncated];count (app.py:20);"
				 "Sieve.check (app.py:30);fx_static_helper 1\n");
	free(out);
	assert_int_equal(x->s.py.stats.truncated, 2);
	teardown(x);
}

static void session__malformed_records__counted_bad(void **state)
{
	struct fx *x = setup(false);
	/* shorter than its type */
	struct bt_rec_mapping m = { 0 };
	hdr(x, &m.hdr, BT_REC_MMAP, sizeof(m.hdr));
	assert_int_equal(bt_session_record(&x->s, &m.hdr), 0);
	/* another protocol version */
	struct bt_rec_exit e = { .pid = 1 };
	hdr(x, &e.hdr, BT_REC_EXIT, sizeof(e));
	e.hdr.version = BT_PROTO_VERSION + 1;
	assert_int_equal(bt_session_record(&x->s, &e.hdr), 0);
	/* more frames than its size holds */
	struct bt_rec_sample r = { .pid = 500, .tid = 500, .user_n = 4 };
	hdr(x, &r.hdr, BT_REC_SAMPLE, offsetof(struct bt_rec_sample, ips) + 2 * sizeof(r.ips[0]));
	assert_int_equal(bt_session_record(&x->s, &r.hdr), 0);
	assert_int_equal(x->s.stats.records, 3);
	assert_int_equal(x->s.stats.bad_records, 3);
	assert_int_equal(x->s.stats.samples, 0);
	assert_int_equal(x->s.stats.mappings, 0);
	assert_int_equal(x->s.stats.exits, 0);
	assert_int_equal(x->s.prof.nstacks, 0);
	teardown(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(session__exec_mmap_sample__names_of_nm),
		cmocka_unit_test(session__exit__mappings_kept_until_reaped),
		cmocka_unit_test(session__perf_map__jit_named_impossible_addresses_unmapped),
		cmocka_unit_test(session__mmap_record_after_exit__process_stays_dead),
		cmocka_unit_test(session__munmap_then_sample__frame_unmapped),
		cmocka_unit_test(session__fork__child_inherits_mappings),
		cmocka_unit_test(session__pending_build_id__placeholder_then_named),
		cmocka_unit_test(session__no_build_id__named_from_the_file),
		cmocka_unit_test(session__kernel_frames__plain_names_marked_when_folded),
		cmocka_unit_test(session__labels__apart_by_thread_with_executable),
		cmocka_unit_test(session__also_window__samples_by_their_time),
		cmocka_unit_test(session__also_window__offcpu_by_its_cut),
		cmocka_unit_test(session__python_frames__replace_eval_loop_frames),
		cmocka_unit_test(session__python_frames__native_walk_said_whole_or_cut),
		cmocka_unit_test(session__python_walk_cut__marked),
		cmocka_unit_test(session__malformed_records__counted_bad),
		cmocka_unit_test(session__offcpu_stack_then_times__summed_with_state_leaf),
		cmocka_unit_test(session__offcpu_without_stack__placeholders_counted),
		cmocka_unit_test(session__offcpu_epochs__unused_stacks_forgotten),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
