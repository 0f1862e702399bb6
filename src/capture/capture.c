/* capture.c - loads bpf/buildtrace.bpf.c, attaches its tracepoints and per-CPU cpu-clock samplers,
 * drives the snapshot iterators, and hands ring buffer records to the caller in order. */
#include "capture/capture.h"
#include "capture/callgraph.h"
#include "capture/kbtf.h"
#include "capture/mapsrc.h"
#include "capture/offcpu.h"
#include "capture/records.h"
#include "capture/sideband.h"
#include "capture/procmaps.h"
#include "base/htab.h"
#include "base/recqueue.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <linux/btf.h>
#include <bpf/libbpf.h>

#include "buildtrace.skel.h"
#include "../../bpf/bt_maps.h"

#define SAMPLE_BYTES 400      /* a sample record of about forty frames */
/* The BPF walk's: stacks may be deeper (room for a hundred frames), and a walk the kernel leaves to
 * userspace (a process or a file it has no table for yet) copies up to BT_UCONT_BYTES of stack:
 * under a build's churn a sixth of the samples do, 5.5 KiB each on average (measured). */
#define SAMPLE_BYTES_WALKED 8192
#define DEFAULT_FREQ 99
#define PENDING_MAX 128       /* processes queued for an iterator run; more means "run for all" */
#define PER_PID_ITER_MAX 64   /* above this many watched processes one unfiltered run is cheaper */
#define VERIFIER_LOG_SIZE (256 * 1024)
#define SIDEBAND_PAGES 64     /* per CPU: 256 KiB of mmap records between two drains (a build
			       * maps 2,000 files a second: a tenth of a second holds 24 KiB,
			       * when the reader runs that often) */
#define LDSO_MAX 64           /* watched processes whose dlopen and dlclose are seen */
#define QUEUE_MIN (32u << 20) /* samples read and not yet delivered, at least (see queue_bytes) */
#define DRAIN_NS (50 * 1000000ULL)  /* a poll delivers for at most this long, then lets its caller
				     * look at the time and its signals */
#define READ_EVERY_MS 50      /* the reader empties the ring buffer at least this often */
/* Off-CPU time: threads and sums (per cut) the kernel keeps at most, stack keys it remembers (a
 * stack forgotten is written again); after this many stacks written, or a while after a watched
 * process changed its mappings, every key is forgotten (and its stack written again when met), so
 * neither side's table grows without end and no key outlives the code it named. */
#define OFFCPU_THREADS (1u << 16)
#define OFFCPU_SUMS (1u << 14)
#define OFFCPU_KNOWN_PIDS (1u << 14)
#define OFFCPU_KNOWN_ALL (1u << 15)
#define OFFCPU_FORGET_STACKS (1u << 17)
#define OFFCPU_RING_PIDS (256u << 10)  /* ring buffer room for off-CPU stacks, beyond the samples' */
#define OFFCPU_RING_ALL (2u << 20)
#define OFFCPU_FORGET_REMAP_NS (30ULL * 1000000000)

/* Options a caller may leave out: present only when opts->sz covers the field. */
#define OPT_GIVEN(opts, field) \
	((opts)->sz >= offsetof(struct bt_capture_opts, field) + sizeof((opts)->field))

struct bt_capture {
	struct buildtrace_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **perf_links;
	unsigned nperf;
	bt_record_fn on_record;
	void *ctx;
	bt_log_fn log;
	bool all;
	bool follow_forks;
	int possible_cpus;
	uint64_t skip_full;      /* processes bt_capture_skip had no room for */
	uint32_t sample_insns;   /* the verifier's count for the sampling program, read once loaded */
	uint32_t load_insns;     /* and for all the programs loaded */
	uint32_t load_progs;
	uint64_t iter_runs;
	uint64_t malformed;
	uint64_t ring_bytes[BT_REC_TYPE_MAX];
	int pending[PENDING_MAX];
	size_t npending;
	bool pending_all;
	bool stopped;   /* on_record asked to stop; stop_rc is what it returned */
	int stop_rc;
	libbpf_print_fn_t old_print;
	enum bt_mapsrc mapsrc;         /* how new mappings are learnt */
	struct bt_sideband *sb;        /* with BT_MAPSRC_SIDEBAND */
	bool sb_mmaps;                 /* it gives mmap records (with BT_MAPSRC_SIDEBAND) */
	uint64_t sb_drained_ns;        /* every mmap record up to this time has been drained */
	uint64_t sb_lost_seen;
	int epfd;                      /* the ring buffer and the sideband rings, waited on together */
	struct bpf_link *ldso_links[LDSO_MAX];  /* uprobes on ld.so's _dl_debug_state, one per process */
	unsigned nldso;
	bool python;                   /* the sampler walks the Python frames of py_procs */
	/* The watched processes in the ring buffer's order: added when watched or forked, removed when
	 * their exit record is read. The kernel's set forgets a process at its exit, before the mmap
	 * records it made just before are read: those are judged by this one. */
	struct bt_htab seen_watched;
	struct bt_unwtables *unw;      /* with bpf_unwind: the walker's tables and mappings */
	struct bt_offcpu *offcpu;      /* with off_cpu: the sums and their cuts */
	uint64_t offcpu_stacks;        /* stacks delivered since the kernel last forgot the keys */
	bool offcpu_remapped;          /* a watched process changed its mappings since then */
	uint64_t offcpu_forgot_ns;     /* when it did */
	/* The ring buffer (and the sideband rings) are read by a thread of their own into q, in
	 * order, so that nothing the delivery does (compiling tables, reading symbols) leaves them
	 * unread; records are delivered from q. Until the thread runs (the initial snapshot), reads
	 * happen in the calling thread. */
	struct bt_recq *q;
	pthread_t reader;
	bool reader_running;
	bool reader_ended;             /* stopped for the end of the session: reads are the caller's */
	bool reader_stop;              /* (atomic) */
	pthread_mutex_t mu;            /* seen_watched, kicks and passes */
	pthread_cond_t cv;
	uint64_t kicks, passes;        /* reads asked of the reader, and done */
	int kick_fd;                   /* eventfd in the reader's epoll set: read now */
	int wake_fd;                   /* eventfd: the reader queued records */
	int main_epfd;                 /* wake_fd and the table worker's results */
	bool sb_lost;                  /* (atomic) the reader saw sideband records lost */
	uint64_t qdrops[BT_REC_TYPE_MAX];  /* (atomic) records the full queue refused, per type */
	uint64_t qdrops_tag[BT_REC_TAGS];  /* (atomic) and the samples among them, per tag */
	/* Records the walker's tables have followed, waiting behind a sample whose stack waits for
	 * a table (a BT_REC_LATER in its place): delivered in order once it is finished. */
	struct bt_recq *later;
	bool held;                     /* the oldest of those waits */
	uint64_t reader_gap_ns;        /* (atomic) the longest the ring buffer went unread */
};

/* In the delivery queue only: the place of a sample the walker's tables keep until it is finished. */
#define BT_REC_LATER 0xfffe
struct rec_later {
	struct bt_rec_hdr hdr;
	uint64_t ticket;
};

static void logf_(struct bt_capture *c, enum bt_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void logf_(struct bt_capture *c, enum bt_log_level lvl, const char *fmt, ...)
{
	if (!c->log)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->log(c->ctx, lvl, msg);
}

static int fail(char *errbuf, size_t errlen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Writes "STEP: strerror(err)" into errbuf and returns err (negative). */
static int fail(char *errbuf, size_t errlen, int err, const char *fmt, ...)
{
	if (err >= 0)
		err = -EINVAL;
	if (errbuf && errlen) {
		char step[384];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(step, sizeof(step), fmt, ap);
		va_end(ap);
		snprintf(errbuf, errlen, "%s: %s", step, strerror(-err));
	}
	return err;
}

/* libbpf's own messages would go to stderr; errors reach the caller through errbuf instead. */
static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* ---- ring buffer ------------------------------------------------------------------------- */

static void queue_snapshot(struct bt_capture *c, int pid)
{
	if (pid <= 0 || c->pending_all)
		return;
	for (size_t i = 0; i < c->npending; i++)
		if (c->pending[i] == pid)
			return;
	if (c->npending == PENDING_MAX) {
		c->pending_all = true;
		c->npending = 0;
		return;
	}
	c->pending[c->npending++] = pid;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool pid_eq(void *ctx, uint64_t val, const void *key)
{
	return val == *(const uint32_t *)key;
}

static bool seen_watched(struct bt_capture *c, uint32_t pid)
{
	pthread_mutex_lock(&c->mu);
	bool seen = bt_htab_find(&c->seen_watched, bt_hash_u64(pid), pid_eq, NULL, &pid) != NULL;
	pthread_mutex_unlock(&c->mu);
	return seen;
}

static void seen_watch(struct bt_capture *c, uint32_t pid)
{
	if (c->all || seen_watched(c, pid))
		return;
	pthread_mutex_lock(&c->mu);
	if (c->seen_watched.count < (1u << 20))
		bt_htab_insert(&c->seen_watched, bt_hash_u64(pid), pid);
	pthread_mutex_unlock(&c->mu);
}

static void seen_unwatch(struct bt_capture *c, uint32_t pid)
{
	pthread_mutex_lock(&c->mu);
	bt_htab_remove(&c->seen_watched, bt_hash_u64(pid), pid_eq, NULL, &pid);
	pthread_mutex_unlock(&c->mu);
}

static bool watched(struct bt_capture *c, uint32_t pid)
{
	if (seen_watched(c, pid))
		return true;
	uint8_t v;
	return c->all || bpf_map__lookup_elem(c->skel->maps.watched, &pid, sizeof(pid), &v, sizeof(v), 0) == 0;
}

/* A record a full queue refused: counted by type, and a sample by its tag (a trace hit's probe). */
static void count_qdrop(struct bt_capture *c, const struct bt_rec_hdr *h)
{
	if (h->type < BT_REC_TYPE_MAX)
		__atomic_add_fetch(&c->qdrops[h->type], 1, __ATOMIC_RELAXED);
	if (h->type == BT_REC_SAMPLE && h->tag < BT_REC_TAGS)
		__atomic_add_fetch(&c->qdrops_tag[h->tag], 1, __ATOMIC_RELAXED);
}

/* A record read, into the queue in the order read. Samples and what goes with them are refused
 * once the queue holds its most (counted as lost); the rest is never dropped. */
static int enqueue(struct bt_capture *c, const struct bt_rec_hdr *h)
{
	bool droppable = h->type == BT_REC_SAMPLE || h->type == BT_REC_UCONT || h->type == BT_REC_USTACK ||
			 h->type == BT_REC_PYSTACK;
	if (bt_recq_push(c->q, h, h->size, droppable) == -ENOSPC)
		count_qdrop(c, h);
	return 0;
}

/* One record to the caller. */
static int deliver(struct bt_capture *c, const struct bt_rec_hdr *h)
{
	int r = c->on_record(c->ctx, h);
	if (r) {
		c->stopped = true;
		c->stop_rc = r;
	}
	return r;
}

/* A kernel mmap record of a watched process, delivered as the ring buffer's records are. */
static bool same_file(const struct statx *sx, const struct bt_rec_mapping *r)
{
	return sx->stx_ino == r->ino && ((sx->stx_dev_major << 20) | sx->stx_dev_minor) == r->dev;
}

/* A mapping the kernel named by device and inode only: its file's modification time through
 * /proc/PID/map_files (the mapped file itself; by its path when the process is already gone and
 * the path still names that device and inode), then the build-id the iterator read for that
 * version of it, if it did. Whether the record has it now. */
static bool known_build_id(struct bt_capture *c, struct bt_rec_mapping *r)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", r->pid, (unsigned long long)r->start,
		 (unsigned long long)r->end);
	struct statx sx;
	unsigned want = STATX_MTIME | STATX_INO;
	if (statx(AT_FDCWD, path, AT_STATX_SYNC_AS_STAT, want, &sx) != 0 || !same_file(&sx, r)) {
		if (r->path[0] != '/' || (r->flags & BT_MAP_F_DELETED) ||
		    statx(AT_FDCWD, r->path, AT_STATX_SYNC_AS_STAT | AT_SYMLINK_NOFOLLOW, want, &sx) != 0 ||
		    !same_file(&sx, r))
			return false;
	}
	r->mtime_ns = (uint64_t)sx.stx_mtime.tv_sec * 1000000000ULL + sx.stx_mtime.tv_nsec;
	struct bt_file_key key = { .ino = r->ino, .mtime_ns = r->mtime_ns, .dev = r->dev };
	struct bt_bid b;
	if (bpf_map__lookup_elem(c->skel->maps.bid_cache, &key, sizeof(key), &b, sizeof(b), 0) != 0 ||
	    b.status != BT_BID_OK || b.len > BT_BUILD_ID_MAX)
		return false;
	r->build_id_status = BT_BID_OK;
	r->build_id_len = b.len;
	memcpy(r->build_id, b.id, BT_BUILD_ID_MAX);
	return true;
}

/* Kernel code that came or went, for every process: it names kernel frames. */
static int on_ksymbol(struct bt_capture *c, const struct bt_sb_rec *m)
{
	struct bt_rec_ksym k = { .hdr = { .type = BT_REC_KSYM, .version = BT_PROTO_VERSION,
					  .size = sizeof(k), .time_ns = m->time_ns },
				 .addr = m->start, .len = (uint32_t)m->len, .ksym_type = m->ksym_type,
				 .flags = m->unregister ? BT_KSYM_F_UNREGISTER : 0 };
	snprintf(k.name, sizeof(k.name), "%s", m->path);
	return enqueue(c, &k.hdr);
}

static int on_sideband(void *ctx, const struct bt_sb_rec *m)
{
	struct bt_capture *c = ctx;
	if (m->kind == BT_SB_REC_KSYMBOL)
		return on_ksymbol(c, m);
	if (!watched(c, m->pid))
		return 0;
	/* Its build-id is looked for when it is delivered: the lookup goes through the process's
	 * map_files, which waits for the process's mmap lock, and this thread must never wait. */
	union bt_mapsrc_rec rec;
	bt_mapsrc_from_sideband(m, &rec);
	return enqueue(c, &rec.hdr);
}

/* Kernel mmap records up to time t, before the ring buffer record of time t: any made before t
 * sits in a ring already when the ring buffer record is read, so draining then finds it. A lost
 * record means mappings are missing: the watched processes are read again. */
static int sideband_until(struct bt_capture *c, uint64_t t)
{
	if (!c->sb)
		return 0;
	if (t > c->sb_drained_ns) {
		uint64_t now = mono_ns();
		if (bt_sideband_drain(c->sb) >= 0)
			c->sb_drained_ns = now;
		uint64_t lost = bt_sideband_lost(c->sb);
		if (lost != c->sb_lost_seen) {
			logf_(c, BT_LOG_WARN, "%llu kernel mmap records lost: reading the mappings again",
			      (unsigned long long)(lost - c->sb_lost_seen));
			c->sb_lost_seen = lost;
			__atomic_store_n(&c->sb_lost, true, __ATOMIC_RELAXED);
		}
	}
	int r = bt_sideband_deliver(c->sb, t, on_sideband, c);
	return r < 0 ? r : 0;
}

static int keep_ksymbols(void *ctx, const struct bt_sb_rec *m)
{
	return m->kind == BT_SB_REC_KSYMBOL ? on_ksymbol(ctx, m) : 0;
}

/* Before the initial snapshot, which reports every mapping there is: the mmap records made while
 * the programs were loaded (and any lost then) tell nothing more. Kernel code announced meanwhile
 * (buildtrace's own programs among it) is passed on. */
static void forget_sideband(struct bt_capture *c)
{
	c->sb_drained_ns = mono_ns();
	bt_sideband_drain(c->sb);
	bt_sideband_deliver(c->sb, c->sb_drained_ns, keep_ksymbols, c);
	c->sb_lost_seen = bt_sideband_lost(c->sb);
}

struct gaps_ctx {
	struct bt_capture *c;
	struct bt_rec_munmap rec;  /* hdr, pid and the start of the next gap filled in */
	unsigned files;            /* executable file mappings listed */
	int err;
};

static int emit_gap(struct gaps_ctx *g, uint64_t end)
{
	if (end <= g->rec.start)
		return 0;
	g->rec.end = end;
	return enqueue(g->c, &g->rec.hdr);
}

static int gap_before(void *ctx, const struct bt_procmap *m)
{
	struct gaps_ctx *g = ctx;
	if (m->perms[2] != 'x' || m->path[0] != '/')
		return 0;
	int r = emit_gap(g, m->start);
	g->rec.start = m->end;
	g->files++;
	return r;
}

/* ld.so changed its list of objects (a dlopen or a dlclose): what the process still maps is read
 * from /proc/PID/maps, and everything between its executable file mappings is reported unmapped,
 * so a library a dlclose removed is forgotten without a hook on munmap. */
static int on_dlstate(struct bt_capture *c, const struct bt_rec_exit *d)
{
	struct gaps_ctx g = { .c = c };
	g.rec.hdr = (struct bt_rec_hdr){ .type = BT_REC_MUNMAP, .version = BT_PROTO_VERSION,
					 .size = sizeof(g.rec), .time_ns = d->hdr.time_ns };
	g.rec.pid = d->pid;
	int r = bt_procmaps_foreach("", (int)d->pid, gap_before, &g);
	if (r < 0)
		return 0;  /* gone, or unreadable: its exit record follows or nothing can be known */
	/* No file mapped at all: the process has exited since (a zombie lists nothing), and what it
	 * mapped when it called ld.so still names its last samples. */
	if (!r && !g.files)
		return 0;
	return r ? r : emit_gap(&g, UINT64_MAX >> 1);
}

/* A record read from the ring buffer (by the reader thread, once it runs): checked, preceded by
 * the kernel's mmap records made before it, queued. What must follow the ring's order at once is
 * done here: the watched set of the sideband's filter, a dlopen's unmapped libraries. */
static int on_ring_record(void *ctx, void *data, size_t len)
{
	struct bt_capture *c = ctx;
	const struct bt_rec_hdr *h = data;
	if (!bt_rec_valid(h, len)) {
		if (__atomic_fetch_add(&c->malformed, 1, __ATOMIC_RELAXED) == 0)
			logf_(c, BT_LOG_WARN, "ignoring a malformed ring buffer record (%zu bytes)", len);
		return 0;
	}
	/* what the record took in the ring: its length rounded to 8 and the ring's own header */
	if (h->type < BT_REC_TYPE_MAX)
		__atomic_add_fetch(&c->ring_bytes[h->type], ((len + 7) & ~(size_t)7) + 8, __ATOMIC_RELAXED);
	sideband_until(c, h->time_ns);
	switch (h->type) {
	case BT_REC_DLSTATE:
		on_dlstate(c, (const void *)h);
		return 0;
	case BT_REC_FORK: {
		const struct bt_rec_fork *f = (const void *)h;
		/* A followed child inherits its parent's mappings without any mmap call. */
		if (c->follow_forks && !c->all)
			seen_watch(c, f->child_pid);
		break;
	}
	case BT_REC_EXIT:
		seen_unwatch(c, ((const struct bt_rec_exit *)h)->pid);
		break;
	}
	return enqueue(c, h);
}

/* What a record asks of the capture before it is delivered: a snapshot of a process that was
 * replaced or forked, or whose mapping's build-id could not be read at once. */
static void snapshot_asked(struct bt_capture *c, const struct bt_rec_hdr *h)
{
	switch (h->type) {
	case BT_REC_EXEC:
		queue_snapshot(c, ((const struct bt_rec_exec *)h)->pid);
		break;
	case BT_REC_FORK:
		if (c->follow_forks && !c->all)
			queue_snapshot(c, ((const struct bt_rec_fork *)h)->child_pid);
		break;
	case BT_REC_MMAP: {
		const struct bt_rec_mapping *m = (const void *)h;
		if (m->build_id_status == BT_BID_PENDING)
			queue_snapshot(c, m->pid);
		break;
	}
	}
}

/* What a delivered record tells the off-CPU stack keys: one more stack the session keeps, or code
 * the keys named that may be gone (the kernel forgets them a while after). */
static void offcpu_note(struct bt_capture *c, const struct bt_rec_hdr *h)
{
	if (h->type == BT_REC_OFFCPU_STACK)
		c->offcpu_stacks++;
	else if (h->type == BT_REC_EXEC || h->type == BT_REC_MUNMAP || h->type == BT_REC_DLSTATE)
		c->offcpu_remapped = true;
}

/* A record through the walker's tables (which move on at once, and may finish or keep a sample),
 * then to the caller, unless records wait before it. A kernel mmap record gets its build-id here
 * when the iterator read the file before; else it asks a snapshot. */
static void follow(struct bt_capture *c, const struct bt_rec_hdr *h)
{
	struct bt_rec_mapping known;
	if (h->type == BT_REC_MMAP && c->sb && ((const struct bt_rec_mapping *)h)->build_id_status == BT_BID_PENDING &&
	    h->size == sizeof(known)) {
		memcpy(&known, h, sizeof(known));
		if (known_build_id(c, &known))
			h = &known.hdr;
	}
	snapshot_asked(c, h);
	if (c->offcpu)
		offcpu_note(c, h);
	struct rec_later l = { .hdr = { .type = BT_REC_LATER, .size = sizeof(l) } };
	if (c->unw) {
		const struct bt_rec_hdr *out = h;
		if (bt_unwtables_record(c->unw, h, &out, &l.ticket) == BT_UNWTABLES_LATER)
			out = &l.hdr;
		if (!out)
			return;
		h = out;
	}
	if (h->type != BT_REC_LATER && !bt_recq_bytes(c->later)) {
		deliver(c, h);
		return;
	}
	bool droppable = h->type == BT_REC_SAMPLE || h->type == BT_REC_PYSTACK || h->type == BT_REC_USTACK;
	if (bt_recq_push(c->later, h, h->size, droppable) == -ENOSPC)
		count_qdrop(c, h);
}

/* The records waiting behind samples being finished, delivered up to the first that still waits
 * (all of them when give_up: the end of a session). The count delivered. */
static int deliver_later(struct bt_capture *c, bool give_up)
{
	int n = 0;
	size_t len;
	const struct bt_rec_hdr *h;
	while (!c->stopped && (h = bt_recq_peek(c->later, &len)) != NULL) {
		uint64_t ticket = 0;
		if (h->type == BT_REC_LATER) {
			ticket = ((const struct rec_later *)h)->ticket;
			h = give_up ? bt_unwtables_give_up(c->unw, ticket) : bt_unwtables_finished(c->unw, ticket);
			if (!h && !give_up) {
				c->held = true;
				break;
			}
		}
		if (h)
			deliver(c, h);
		if (ticket)
			bt_unwtables_release(c->unw, ticket);
		bt_recq_pop(c->later);
		n += n < INT_MAX;
	}
	return n;
}

/* Delivers the queued records in order: every record read goes through the walker's tables now;
 * those behind a sample waiting for a table wait with it. The count delivered or queued behind. */
static int drain(struct bt_capture *c)
{
	int n = 0;
	size_t len;
	const struct bt_rec_hdr *h;
	c->held = false;
	if (c->unw)
		bt_unwtables_collect(c->unw);
	n += deliver_later(c, false);
	uint64_t t0 = mono_ns();
	while (!c->stopped && (h = bt_recq_peek(c->q, &len)) != NULL) {
		follow(c, h);
		bt_recq_pop(c->q);
		n += n < INT_MAX;
		if (n & 63)
			continue;
		/* the walker learns of new processes and mappings while a backlog is delivered */
		bt_unwtables_flush(c->unw);
		if (mono_ns() - t0 > DRAIN_NS)
			break;
	}
	/* what follow() kept aside just now waits too, not only what deliver_later could not give */
	c->held = bt_recq_bytes(c->later) != 0;
	return n;
}

/* Reads what the ring buffer and the sideband rings hold into the queue. */
static int read_rings(struct bt_capture *c)
{
	int n = ring_buffer__consume(c->rb);
	sideband_until(c, UINT64_MAX);
	return n;
}

static void *reader_main(void *arg)
{
	struct bt_capture *c = arg;
	struct epoll_event ev[8];
	uint64_t last = mono_ns();
	while (!__atomic_load_n(&c->reader_stop, __ATOMIC_RELAXED)) {
		epoll_wait(c->epfd, ev, 8, READ_EVERY_MS);
		/* beyond the wait asked for: how long the machine kept this thread from the CPU */
		uint64_t now = mono_ns(), gap = now - last;
		if (gap > __atomic_load_n(&c->reader_gap_ns, __ATOMIC_RELAXED))
			__atomic_store_n(&c->reader_gap_ns, gap, __ATOMIC_RELAXED);
		uint64_t v;
		ssize_t r = read(c->kick_fd, &v, sizeof(v));
		(void)r;
		pthread_mutex_lock(&c->mu);
		uint64_t want = c->kicks;
		pthread_mutex_unlock(&c->mu);
		size_t before = bt_recq_bytes(c->q);
		read_rings(c);
		pthread_mutex_lock(&c->mu);
		c->passes = want;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		last = mono_ns();
		if (bt_recq_bytes(c->q) != before) {
			uint64_t one = 1;
			r = write(c->wake_fd, &one, sizeof(one));
		}
	}
	return NULL;
}

/* The reader thread stopped and joined, for good: from now on the rings are read in the calling
 * thread. */
static void stop_reader(struct bt_capture *c)
{
	c->reader_ended = true;
	if (!c->reader_running)
		return;
	__atomic_store_n(&c->reader_stop, true, __ATOMIC_RELAXED);
	uint64_t one = 1;
	ssize_t w = write(c->kick_fd, &one, sizeof(one));
	(void)w;
	pthread_join(c->reader, NULL);
	c->reader_running = false;
}

/* Reads the rings now: by the reader thread (waiting up to a second for it), or here. Whether a
 * read begun after this call has ended (false: the reader was kept from the CPU that long). */
static bool read_now(struct bt_capture *c)
{
	if (!c->reader_running) {
		read_rings(c);
		return true;
	}
	pthread_mutex_lock(&c->mu);
	uint64_t want = ++c->kicks;
	uint64_t one = 1;
	ssize_t w = write(c->kick_fd, &one, sizeof(one));
	(void)w;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	while (c->passes < want && pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
		;
	bool done = c->passes >= want;
	pthread_mutex_unlock(&c->mu);
	return done;
}

/* The reader thread and the table worker, started at the first poll: after the caller dropped the
 * capabilities it no longer needs (a thread keeps those it starts with). */
static int start_threads(struct bt_capture *c)
{
	if (c->reader_running || c->reader_ended)
		return 0;
	int err = bt_unwtables_start(c->unw);
	if (!err && (err = -pthread_create(&c->reader, NULL, reader_main, c)) == 0)
		c->reader_running = true;
	return err;
}

/* ---- iterators --------------------------------------------------------------------------- */

/* One pass of an iterator program over one process (pid > 0) or every process. Its output goes
 * into maps and the ring buffer; nothing is written to the iterator's own file. */
static int run_iter(struct bt_capture *c, struct bpf_program *prog, int pid)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, o);
	union bpf_iter_link_info li;
	memset(&li, 0, sizeof(li));
	if (pid > 0) {
		li.task.pid = pid;
		o.link_info = &li;
		o.link_info_len = sizeof(li);
	}
	struct bpf_link *link = bpf_program__attach_iter(prog, &o);
	if (!link)
		return -errno;
	int err = 0;
	int fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
	} else {
		/* vma_snap writes a byte per record: each read returns after at most this many, and
		 * what they put in the ring buffer is delivered before the walk goes on. */
		char buf[256];
		for (;;) {
			ssize_t n = read(fd, buf, sizeof(buf));
			if (n > 0 && c->rb && !c->stopped && !c->reader_running) {
				read_rings(c);
				drain(c);
			} else if (n > 0 && c->rb) {
				read_now(c);   /* the ring buffer emptied before more is written */
			}
			if (n == 0)
				break;
			/* EAGAIN: the kernel paused a very long walk; reading again resumes it. */
			if (n < 0 && errno != EINTR && errno != EAGAIN) {
				err = -errno;
				break;
			}
		}
		close(fd);
	}
	bpf_link__destroy(link);
	c->iter_runs++;
	return err;
}

/* A process may be gone by the time its turn comes; that is not an error. */
static bool gone(int err)
{
	return err == -ESRCH || err == -ENOENT;
}

/* Runs vma_snap with the given pass over pids (n == 0: every process). */
static int vma_pass(struct bt_capture *c, unsigned pass, const int *pids, size_t n)
{
	c->skel->bss->snap_pass = pass;
	if (!n)
		return run_iter(c, c->skel->progs.vma_snap, 0);
	int err = 0;
	for (size_t i = 0; i < n; i++) {
		int e = run_iter(c, c->skel->progs.vma_snap, pids[i]);
		if (e && !gone(e) && !err)
			err = e;
	}
	return err;
}

struct elf_job {
	struct bt_file_key key;
	struct bt_elf_job job;
};

/* Pass 2: each build-id read vma_snap queued, one elf_read run each, results tagged with round.
 * Returns the number of jobs done or -errno. */
static int read_queued_build_ids(struct bt_capture *c, uint32_t round)
{
	int jfd = bpf_map__fd(c->skel->maps.snap_jobs);
	size_t n = 0, cap = 0;
	struct elf_job *jobs = NULL;
	struct bt_file_key cur, next;
	bool first = true;
	int err = 0;
	while (bpf_map_get_next_key(jfd, first ? NULL : &cur, &next) == 0) {
		first = false;
		cur = next;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct elf_job *nj = realloc(jobs, ncap * sizeof(*nj));
			if (!nj) {
				err = -ENOMEM;
				break;
			}
			jobs = nj;
			cap = ncap;
		}
		if (bpf_map_lookup_elem(jfd, &cur, &jobs[n].job) == 0)
			jobs[n++].key = cur;
	}
	int rfd = bpf_map__fd(c->skel->maps.elf_req), ffd = bpf_map__fd(c->skel->maps.snap_fresh);
	for (size_t i = 0; i < n; i++) {
		uint32_t zero = 0;
		struct bt_elf_req req = { .job = jobs[i].job, .key = jobs[i].key, .round = round };
		bpf_map_delete_elem(jfd, &jobs[i].key);
		if (bpf_map_update_elem(rfd, &zero, &req, BPF_ANY)) {
			err = -errno;
			break;
		}
		int e = run_iter(c, c->skel->progs.elf_read, (int)req.job.tgid);
		if (e && !gone(e))
			logf_(c, BT_LOG_DEBUG, "reading a build-id in pid %u failed: %s", req.job.tgid,
			      strerror(-e));
		if (bpf_map_lookup_elem(rfd, &zero, &req) == 0 && !req.done) {
			/* The process was gone: the next pass picks another one that maps the file. */
			struct bt_fresh gone_ = { .bid.status = BT_BID_PENDING, .round = round };
			bpf_map_update_elem(ffd, &jobs[i].key, &gone_, BPF_ANY);
		}
	}
	free(jobs);
	return err ? err : (int)(n > INT_MAX ? INT_MAX : n);
}

static void clear_map(int fd, size_t key_size)
{
	unsigned char key[64];
	if (key_size > sizeof(key))
		return;
	/* Deleting the first key each time never depends on a deleted key's successor. */
	while (bpf_map_get_next_key(fd, NULL, key) == 0)
		if (bpf_map_delete_elem(fd, key))
			break;
}

#define SNAP_ROUNDS 3  /* read rounds per snapshot: retries when a chosen process vanished */

/* The passes described in buildtrace.bpf.c, over pids (n == 0: every process). */
static int snapshot(struct bt_capture *c, const int *pids, size_t n)
{
	int err = vma_pass(c, 0, pids, n);
	for (uint32_t round = 1; round <= SNAP_ROUNDS; round++) {
		int jobs = read_queued_build_ids(c, round);
		if (jobs < 0 && !err)
			err = jobs;
		if (jobs <= 0)
			break;
		c->skel->bss->snap_round = round;
		int e = vma_pass(c, 1, pids, n);
		if (e && !err)
			err = e;
	}
	clear_map(bpf_map__fd(c->skel->maps.snap_fresh), sizeof(struct bt_file_key));
	clear_map(bpf_map__fd(c->skel->maps.snap_jobs), sizeof(struct bt_file_key));
	return err;
}

static int run_pending(struct bt_capture *c)
{
	if (c->pending_all) {
		c->pending_all = false;
		c->npending = 0;
		return bt_capture_snapshot(c, 0);
	}
	/* Records delivered during the snapshot may queue more processes for the next one. */
	int pids[PENDING_MAX];
	size_t n = c->npending;
	memcpy(pids, c->pending, n * sizeof(*pids));
	c->npending = 0;
	return snapshot(c, pids, n);
}

int bt_capture_snapshot(struct bt_capture *c, int pid)
{
	if (!c || pid < 0)
		return -EINVAL;
	if (pid > 0)
		return snapshot(c, &pid, 1);
	if (c->all)
		return snapshot(c, NULL, 0);
	int pids[PER_PID_ITER_MAX];
	size_t n = 0;
	uint32_t key, next;
	uint32_t *prev = NULL;
	int fd = bpf_map__fd(c->skel->maps.watched);
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (n == PER_PID_ITER_MAX)
			return snapshot(c, NULL, 0);  /* the BPF side filters by the watched map */
		pids[n++] = (int)next;
		key = next;
		prev = &key;
	}
	return n ? snapshot(c, pids, n) : 0;
}

/* ---- polling ----------------------------------------------------------------------------- */

int bt_capture_poll(struct bt_capture *c, int timeout_ms)
{
	if (!c)
		return -EINVAL;
	c->stopped = false;
	int err = start_threads(c);
	if (err)
		return err;
	/* The reader queues what the rings hold at least every READ_EVERY_MS (samples wake nobody),
	 * other records at once; this waits for either, or for a table being made. A wait of 0
	 * means: what the kernel has written so far, now. */
	struct epoll_event ev[4];
	if (timeout_ms == 0)
		read_now(c);
	else if (!bt_recq_bytes(c->q) || c->held)
		if (epoll_wait(c->main_epfd, ev, 4, timeout_ms) < 0 && errno == EINTR)
			return -EINTR;
	uint64_t v;
	ssize_t r = read(c->wake_fd, &v, sizeof(v));
	(void)r;
	int n = drain(c);
	if (c->stopped)
		return c->stop_rc;
	if (__atomic_exchange_n(&c->sb_lost, false, __ATOMIC_RELAXED))
		c->pending_all = true;
	if (c->npending || c->pending_all) {
		err = run_pending(c);
		if (err)
			logf_(c, BT_LOG_DEBUG, "iterator run failed: %s", strerror(-err));
		/* Deliver what the iterator wrote now, so the build-ids follow their triggers closely. */
		read_now(c);
		int m = drain(c);
		if (c->stopped)
			return c->stop_rc;
		n = n > INT_MAX - m ? INT_MAX : n + m;
	}
	err = bt_unwtables_flush(c->unw);
	if (err)
		logf_(c, BT_LOG_DEBUG, "updating the unwind tables' process map: %s", strerror(-err));
	return n;
}

int bt_capture_settle(struct bt_capture *c, int timeout_ms)
{
	if (!c)
		return -EINVAL;
	/* Read here, to the end of what was written: a reader thread kept from the CPU on a loaded
	 * machine could still be reading when the queue looks empty (read_now waits a second). */
	stop_reader(c);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = bt_capture_poll(c, 0);
		if (n < 0)
			return n;
		if (!c->held && !bt_recq_bytes(c->q))
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left = timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			break;
		if (c->held)
			bt_unwtables_wait(c->unw, left < 100 ? (int)left : 100);
	}
	/* what still waits goes as it is */
	deliver_later(c, true);
	return c->stopped ? c->stop_rc : -ETIMEDOUT;
}

/* ---- open / close ------------------------------------------------------------------------ */

/* Calls fn for each CPU listed in /sys/devices/system/cpu/online ("0-3,5"). */
static int for_each_online_cpu(int (*fn)(void *ctx, int cpu), void *ctx)
{
	char buf[4096];
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int e = errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? -e : -ENODATA;
	buf[n] = '\0';
	char *p = buf;
	while (*p && *p != '\n') {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10), b;
		if (end == p || a < 0 || a > 65535 || errno)
			return -EINVAL;
		p = end;
		b = a;
		if (*p == '-') {
			p++;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b > 65535)
				return -EINVAL;
			p = end;
		}
		for (long cpu = a; cpu <= b; cpu++) {
			int r = fn(ctx, (int)cpu);
			if (r)
				return r;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

struct perf_attach_ctx {
	struct bt_capture *c;
	unsigned freq;
	int first_err;
	unsigned cap;
	const bool *cpus;  /* bt_capture_opts.cpus */
	size_t ncpus;
};

static int attach_cpu(void *ctx, int cpu)
{
	struct perf_attach_ctx *pa = ctx;
	struct bt_capture *c = pa->c;
	if (pa->cpus && ((size_t)cpu >= pa->ncpus || !pa->cpus[cpu]))
		return 0;
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = pa->freq;
	int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int e = -errno;
		if (e != -ENODEV) {  /* ENODEV: the CPU went offline meanwhile */
			logf_(c, BT_LOG_WARN, "cpu %d: perf_event_open(cpu-clock, %u Hz) failed: %s", cpu,
			      pa->freq, strerror(-e));
			if (!pa->first_err)
				pa->first_err = e;
		}
		return 0;
	}
	if (c->nperf == pa->cap) {
		unsigned ncap = pa->cap ? 2 * pa->cap : 16;
		struct bpf_link **nl = realloc(c->perf_links, ncap * sizeof(*nl));
		if (!nl) {
			close(fd);
			return -ENOMEM;
		}
		c->perf_links = nl;
		pa->cap = ncap;
	}
	struct bpf_link *l = bpf_program__attach_perf_event(c->skel->progs.sample, fd);
	if (!l) {
		int e = -errno;
		close(fd);
		logf_(c, BT_LOG_WARN, "cpu %d: attaching the sampler failed: %s", cpu, strerror(-e));
		if (!pa->first_err)
			pa->first_err = e;
		return 0;
	}
	c->perf_links[c->nperf++] = l;  /* the link owns fd now */
	return 0;
}


/* The reason for a rejection: the last line of the verifier log that is not its closing statistics
 * ("processed N insns ...", "verification time ...", "stack depth ..."). */
static const char *log_tail(char *log, size_t len)
{
	log[len - 1] = '\0';
	for (;;) {
		size_t n = strlen(log);
		while (n && (log[n - 1] == '\n' || log[n - 1] == ' '))
			log[--n] = '\0';
		char *nl = strrchr(log, '\n');
		char *last = nl ? nl + 1 : log;
		if (!nl || (strncmp(last, "processed ", 10) && strncmp(last, "verification time", 17) &&
			    strncmp(last, "stack depth", 11)))
			return last;
		*nl = '\0';
	}
}

/* The ring buffer holds what the samplers write in a quarter of a second with every CPU busy (the
 * reader drains it ten times a second; snapshots are drained as they run), within 256 KiB and
 * 64 MiB, unless the caller names a size; a power of two pages either way. Its pages are resident
 * twice over (mapped twice for wrap-around): a fixed size of 16 MiB was 33 MB of a 19 Hz agent. */
static size_t ringbuf_size(const struct bt_capture_opts *o)
{
	size_t want = o->ringbuf_bytes;
	if (!want) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned hz = o->freq_hz ? o->freq_hz : DEFAULT_FREQ;
		unsigned ub = OPT_GIVEN(o, ustack_bytes) && o->ustack_bytes ? o->ustack_bytes : BT_USTACK_BYTES;
		double per = SAMPLE_BYTES;
		if (OPT_GIVEN(o, dwarf) && o->dwarf && o->user_stacks)
			per += sizeof(struct bt_rec_ustack) + ub;
		else if (OPT_GIVEN(o, bpf_unwind) && o->bpf_unwind && o->user_stacks)
			per = SAMPLE_BYTES_WALKED;
		double quarter = (double)hz * (double)(cpus > 0 ? cpus : 1) * per / 4;
		want = o->samples ? (quarter > BT_RINGBUF_AUTO_MAX ? BT_RINGBUF_AUTO_MAX : (size_t)quarter) : 0;
		if (want < BT_RINGBUF_AUTO_MIN)
			want = BT_RINGBUF_AUTO_MIN;
		/* off-CPU stacks come in a burst when counting starts: every thread's, at once */
		if (OPT_GIVEN(o, off_cpu) && o->off_cpu)
			want += o->all ? OFFCPU_RING_ALL : OFFCPU_RING_PIDS;
	}
	size_t sz = (size_t)sysconf(_SC_PAGESIZE);
	while (sz < want && sz < ((size_t)1 << 30))
		sz <<= 1;
	return sz;
}

/* The records read may wait in memory for as long as the ring buffer's time at the rate asked for,
 * 16 times over (4 s of samples), and at least QUEUE_MIN: what a slow delivery (symbols read, a
 * burst of stacks to finish) leaves unread costs memory while it lasts, not samples. */
static size_t queue_bytes(const struct bt_capture *c)
{
	size_t rb = bpf_map__max_entries(c->skel->maps.events);
	return rb < QUEUE_MIN / 16 ? QUEUE_MIN : 16 * rb;
}

/* The per-syscall tracepoints are attached through tracefs; without it mounted, the raw syscall
 * tracepoints (attached by BTF id) stand in for them. */
static bool have_syscall_tracepoints(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/syscalls/sys_exit_mmap/id", dirs[i]);
		if (access(path, R_OK) == 0) {
			snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_munmap/id", dirs[i]);
			return access(path, R_OK) == 0;
		}
	}
	return false;
}

static int watch_pid(struct bt_capture *c, int pid)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;
	seen_watch(c, key);
	return bpf_map__update_elem(c->skel->maps.watched, &key, sizeof(key), &one, sizeof(one),
				    BPF_ANY) ? -errno : 0;
}

/* A zombie has exited already, and so did its exit record, if any. */
static bool pid_alive(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? false : kill(pid, 0) == 0 || errno == EPERM;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "PID (COMM) STATE ...": COMM may hold spaces and parentheses, so look from the end. */
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return true;
	return p[2] != 'Z' && p[2] != 'X';
}

static int attach_tracepoints(struct bt_capture *c, char *errbuf, size_t errlen)
{
	struct buildtrace_bpf *s = c->skel;
	struct {
		struct bpf_program *prog;
		struct bpf_link **link;
		const char *what;
	} tps[] = {
		{ s->progs.on_exec, &s->links.on_exec, "sched:sched_process_exec" },
		{ s->progs.on_fork, &s->links.on_fork, "sched:sched_process_fork" },
		{ s->progs.on_exit, &s->links.on_exit, "sched:sched_process_exit" },
		{ s->progs.on_vm_mmap, &s->links.on_vm_mmap, "fexit/vm_mmap_pgoff" },
		{ s->progs.on_mmap, &s->links.on_mmap, "syscalls:sys_exit_mmap" },
		{ s->progs.on_munmap, &s->links.on_munmap, "syscalls:sys_enter_munmap" },
		{ s->progs.on_sys_exit, &s->links.on_sys_exit, "raw_syscalls:sys_exit" },
		{ s->progs.on_sys_enter, &s->links.on_sys_enter, "raw_syscalls:sys_enter" },
		{ s->progs.on_module_load, &s->links.on_module_load, "module:module_load" },
	};
	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		if (!bpf_program__autoload(tps[i].prog))
			continue;
		*tps[i].link = bpf_program__attach(tps[i].prog);
		if (!*tps[i].link)
			return fail(errbuf, errlen, -errno, "attaching to the tracepoint %s failed",
				    tps[i].what);
	}
	return 0;
}


static int check_opts(const struct bt_capture_opts *opts, char *errbuf, size_t errlen)
{
	if (!opts || opts->sz < sizeof(*opts) || !opts->on_record)
		return fail(errbuf, errlen, -EINVAL, "invalid capture options");
	if (!opts->all && (!opts->pids || !opts->npids))
		return fail(errbuf, errlen, -EINVAL, "no process to watch");
	for (size_t i = 0; !opts->all && i < opts->npids; i++) {
		if (opts->pids[i] <= 0)
			return fail(errbuf, errlen, -EINVAL, "invalid pid %d", opts->pids[i]);
		/* A zombie is accepted: it is simply never alive (bt_capture_watched_alive). */
		if (kill(opts->pids[i], 0) != 0 && errno == ESRCH)
			return fail(errbuf, errlen, -ESRCH, "process %d", opts->pids[i]);
	}
	return 0;
}

struct cpu_list {
	int cpus[1024];
	size_t n;
};

static int add_cpu(void *ctx, int cpu)
{
	struct cpu_list *l = ctx;
	if (l->n == sizeof(l->cpus) / sizeof(l->cpus[0]))
		return -E2BIG;
	l->cpus[l->n++] = cpu;
	return 0;
}

/* The kernel's own records: mappings and kernel code, else (mmaps false, or a kernel without
 * mmap2 records) kernel code alone. Kernels older than 5.1 have none of it. */
static int open_sideband(struct bt_capture *c, bool mmaps)
{
	struct cpu_list *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	int err = for_each_online_cpu(add_cpu, l);
	if (!err && mmaps) {
		err = bt_sideband_open(l->cpus, l->n, SIDEBAND_PAGES, BT_SB_MMAP | BT_SB_KSYMBOL, &c->sb);
		c->sb_mmaps = !err;
	}
	if (!c->sb && (!err || err == -EOPNOTSUPP))
		err = bt_sideband_open(l->cpus, l->n, SIDEBAND_PAGES, BT_SB_KSYMBOL, &c->sb);
	free(l);
	return err;
}

/* Best first (mapsrc.h), unless the caller asked for one; only the chosen source's programs are
 * loaded. The syscall tracepoints need tracefs, mounted here when it is not. */
static int choose_mapsrc(struct bt_capture *c, const struct bt_capture_opts *opts, int vm_mmap_id)
{
	enum bt_mapsrc want = OPT_GIVEN(opts, mapsrc) ? opts->mapsrc : 0;
	c->mapsrc = BT_MAPSRC_SYSCALLS;
	if ((!want || want == BT_MAPSRC_FEXIT) && bt_mapsrc_fexit_works(vm_mmap_id)) {
		c->mapsrc = BT_MAPSRC_FEXIT;
	} else if (!want || want == BT_MAPSRC_SIDEBAND) {
		int err = open_sideband(c, true);
		if (!err && c->sb_mmaps)
			c->mapsrc = BT_MAPSRC_SIDEBAND;
		else
			logf_(c, BT_LOG_INFO, "the kernel's mmap records are unavailable: %s",
			      strerror(err ? -err : EOPNOTSUPP));
	}
	if (want && c->mapsrc != want)
		return -EOPNOTSUPP;
	/* Kernel code coming and going is worth the kernel's records whatever the mapping source. */
	if (!c->sb && open_sideband(c, false) != 0)
		logf_(c, BT_LOG_INFO, "the kernel's BPF program announcements are unavailable: kallsyms "
		      "is read again for programs loaded later");
	bool sys = c->mapsrc == BT_MAPSRC_SYSCALLS;
	if (sys && bt_mapsrc_mount_tracefs() != 0)
		logf_(c, BT_LOG_DEBUG, "tracefs could not be mounted");
	bool per_syscall = sys && have_syscall_tracepoints();
	bpf_program__set_autoload(c->skel->progs.on_vm_mmap, c->mapsrc == BT_MAPSRC_FEXIT);
	bpf_program__set_autoload(c->skel->progs.on_dl_state, !sys);
	bpf_program__set_autoload(c->skel->progs.on_mmap, per_syscall);
	bpf_program__set_autoload(c->skel->progs.on_munmap, per_syscall);
	bpf_program__set_autoload(c->skel->progs.on_sys_exit, sys && !per_syscall);
	bpf_program__set_autoload(c->skel->progs.on_sys_enter, sys && !per_syscall);
	logf_(c, BT_LOG_INFO, "new mappings: %s%s", bt_mapsrc_name(c->mapsrc),
	      sys && !per_syscall ? " (raw_syscalls: tracefs has no syscall tracepoints)" : "");
	if (sys)
		logf_(c, BT_LOG_WARN, "learning of mappings through system call tracepoints: every system "
		      "call of every process pays for them");
	return 0;
}

/* Off-CPU time's settings, and its maps' sizes: only with it do they take memory, and only with it
 * are its programs loaded. */
static int configure_offcpu(struct bt_capture *c, const struct bt_capture_opts *opts)
{
	struct buildtrace_bpf *s = c->skel;
	bool on = s->rodata->cfg_flags & BT_CFG_OFFCPU;
	bpf_program__set_autoload(s->progs.on_switch, on);
	bpf_program__set_autoload(s->progs.on_wakeup, on);
	bpf_program__set_autoload(s->progs.offcpu_seed, on);
	uint32_t known = opts->all ? OFFCPU_KNOWN_ALL : OFFCPU_KNOWN_PIDS;
	if (bpf_map__set_max_entries(s->maps.offcpu_threads, on ? OFFCPU_THREADS : 1) ||
	    bpf_map__set_max_entries(s->maps.offcpu_sums_a, on ? OFFCPU_SUMS : 1) ||
	    bpf_map__set_max_entries(s->maps.offcpu_sums_b, on ? OFFCPU_SUMS : 1) ||
	    bpf_map__set_max_entries(s->maps.offcpu_known, on ? known : 1))
		return -EINVAL;
	if (!on)
		return 0;
	s->rodata->offcpu_states = opts->offcpu_states ? opts->offcpu_states & BT_OFFCPU_ALL_STATES
						      : BT_OFFCPU_ALL_STATES;
	s->rodata->offcpu_min_ns = opts->offcpu_min_ns;
	/* stacks per CPU per window of 2^24 ns, at least one */
	uint64_t per = (uint64_t)opts->offcpu_rate * (1ULL << 24) / 1000000000ULL;
	s->rodata->offcpu_walks_per_window = opts->offcpu_rate ? (per ? (uint32_t)per : 1) : 0;
	return 0;
}

/* What can only be set between opening the object and loading it: the read-only configuration,
 * the ring buffer's size, and which programs are loaded at all. */
static int configure(struct bt_capture *c, const struct bt_capture_opts *opts, char *errbuf,
		     size_t errlen)
{
	uint32_t cfg = 0;
	if (opts->all)
		cfg |= BT_CFG_ALL;
	if (opts->user_stacks)
		cfg |= BT_CFG_USER;
	if (opts->kernel_stacks)
		cfg |= BT_CFG_KERNEL;
	if (opts->follow_forks)
		cfg |= BT_CFG_FOLLOW_FORK;
	if (opts->dwarf && opts->user_stacks && OPT_GIVEN(opts, dwarf))
		cfg |= BT_CFG_DWARF;
	if (OPT_GIVEN(opts, idle) && opts->idle && opts->all)
		cfg |= BT_CFG_IDLE;
	if (OPT_GIVEN(opts, python) && opts->python && opts->user_stacks) {
		cfg |= BT_CFG_PYTHON;
		c->python = true;
	}
	bool unwind = OPT_GIVEN(opts, bpf_unwind) && opts->bpf_unwind && opts->user_stacks && !(cfg & BT_CFG_DWARF);
	if (unwind)
		cfg |= BT_CFG_UNWIND;
	if (OPT_GIVEN(opts, skip) && opts->skip && opts->samples)
		cfg |= BT_CFG_SKIP;
	if (OPT_GIVEN(opts, offcpu_rate) && opts->off_cpu)
		cfg |= BT_CFG_OFFCPU;
	c->skel->rodata->cfg_flags = cfg;
	/* the skipping maps take memory only when skipping is asked for */
	if (!(cfg & BT_CFG_SKIP) && (bpf_map__set_max_entries(c->skel->maps.skipped, 1) ||
				     bpf_map__set_max_entries(c->skel->maps.exec_at, 1)))
		return fail(errbuf, errlen, -EINVAL, "sizing the skip maps");
	if (configure_offcpu(c, opts))
		return fail(errbuf, errlen, -EINVAL, "sizing the off-CPU maps");
	/* the walker's maps take memory only when it is used */
	uint32_t rows = unwind ? (opts->all ? BT_UNW_ROWS_ALL : BT_UNW_ROWS_PIDS) : 1;
	if (bpf_map__set_max_entries(c->skel->maps.unw_rows, rows) ||
	    bpf_map__set_max_entries(c->skel->maps.unw_cont, unwind ? (uint32_t)c->possible_cpus : 1) ||
	    (!unwind && bpf_map__set_max_entries(c->skel->maps.unw_procs, 1)))
		return fail(errbuf, errlen, -EINVAL, "sizing the unwind table maps");
	unsigned ub = OPT_GIVEN(opts, ustack_bytes) ? opts->ustack_bytes : 0;
	if (ub && !bt_call_graph_size_ok(ub))
		return fail(errbuf, errlen, -EINVAL, "user stack size %u: expected a multiple of 8 from %d to %d",
			    ub, BT_USTACK_MIN, BT_USTACK_MAX);
	c->skel->rodata->ustack_bytes = ub ? ub : BT_USTACK_BYTES;
	size_t rbsz = ringbuf_size(opts);
	int err = bpf_map__set_max_entries(c->skel->maps.events, (uint32_t)rbsz);
	if (err)
		return fail(errbuf, errlen, err, "setting the ring buffer size to %zu bytes", rbsz);
	logf_(c, BT_LOG_INFO, "ring buffer: %zu KiB", rbsz >> 10);
	if (!opts->samples)
		bpf_program__set_autoload(c->skel->progs.sample, false);
	/* What the checks below ask of the kernel's types, found in one walk over them: libbpf
	 * parses the 6 MB again to load the programs, and a parse here as well cost as much CPU as
	 * verifying the sampler. Kernels without module support have neither the module tracepoint
	 * nor struct module's notes. */
	struct bt_kbtf_query kq[] = {
		{ .name = "btf_trace_module_load", .kind = BTF_KIND_TYPEDEF },
		{ .name = "vm_mmap_pgoff", .kind = BTF_KIND_FUNC },
	};
	if ((err = bt_kbtf_find("/sys/kernel/btf/vmlinux", kq, 2)))
		logf_(c, BT_LOG_DEBUG, "the kernel's BTF: %s", strerror(-err));
	bool has_module_load = !err && kq[0].id > 0;
	int vm_mmap_id = !err && kq[1].id > 0 ? kq[1].id : -1;
	if (!has_module_load) {
		bpf_program__set_autoload(c->skel->progs.on_module_load, false);
		logf_(c, BT_LOG_DEBUG, "module_load tracepoint absent: module loads are not captured");
	}
	if ((err = choose_mapsrc(c, opts, vm_mmap_id)))
		return fail(errbuf, errlen, err, "learning of mappings through %s",
			    bt_mapsrc_name(opts->mapsrc));
	return 0;
}

/* The instructions the verifier checked to load the program open as fd; 0 when the kernel does
 * not say (before 5.16) or the program is not loaded. */
static uint32_t verified_insns(int fd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	memset(&info, 0, sizeof(info));
	return fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0 ? info.verified_insns : 0;
}

/* Opens the BPF object, configures it and loads it into the kernel; when the verifier refuses a
 * program, errbuf says why in its own words. */
static int load(struct bt_capture *c, const struct bt_capture_opts *opts, char *errbuf, size_t errlen)
{
	char *vlog = malloc(VERIFIER_LOG_SIZE);
	if (!vlog)
		return fail(errbuf, errlen, -ENOMEM, "allocating the verifier log");
	vlog[0] = '\0';
	/* Level 0: libbpf asks for the verifier log only when a program is rejected, whose tail then
	 * says why (a full log of a successful load would not fit and turn it into ENOSPC). */
	LIBBPF_OPTS(bpf_object_open_opts, oo, .kernel_log_buf = vlog,
		    .kernel_log_size = VERIFIER_LOG_SIZE, .kernel_log_level = 0);
	int err;
	c->skel = buildtrace_bpf__open_opts(&oo);
	if (!c->skel)
		err = fail(errbuf, errlen, -errno, "opening the BPF object");
	else
		err = configure(c, opts, errbuf, errlen);
	if (!err && (err = buildtrace_bpf__load(c->skel))) {
		const char *why = log_tail(vlog, VERIFIER_LOG_SIZE);
		fail(errbuf, errlen, err, "loading the BPF programs failed%s%s%s",
		     *why ? " (verifier: " : "", why, *why ? ")" : "");
	}
	if (!err) {
		struct bpf_program *p;
		bpf_object__for_each_program(p, c->skel->obj) {
			if (bpf_program__fd(p) < 0)
				continue;
			uint32_t n = verified_insns(bpf_program__fd(p));
			c->load_progs++;
			c->load_insns += n;
			if (p == c->skel->progs.sample)
				c->sample_insns = n;
		}
	}
	free(vlog);
	return err;
}

/* Loads the programs; when the BPF stack walk is what the verifier refuses (an older kernel), user
 * stacks are copied for unwinding in userspace instead, with a warning saying why. */
static int load_or_copy(struct bt_capture *c, const struct bt_capture_opts *opts, char *errbuf,
			size_t errlen)
{
	int err = load(c, opts, errbuf, errlen);
	if (!err || !c->skel || !(c->skel->rodata->cfg_flags & BT_CFG_UNWIND))
		return err;
	logf_(c, BT_LOG_WARN, "the BPF stack walk could not be loaded, user stacks are copied instead: %s",
	      errbuf && errlen ? errbuf : strerror(-err));
	buildtrace_bpf__destroy(c->skel);
	c->skel = NULL;
	bt_sideband_close(c->sb);   /* configure opens it again */
	c->sb = NULL;
	c->sb_mmaps = false;
	struct bt_capture_opts copy = *opts;
	copy.sz = sizeof(copy);
	copy.bpf_unwind = false;
	copy.dwarf = true;
	copy.ustack_bytes = 0;
	if (errbuf && errlen)
		errbuf[0] = '\0';
	return load(c, &copy, errbuf, errlen);
}

/* A uprobe on _dl_debug_state in the ld.so open at fd, for process pid only: the kernel installs
 * the breakpoint in that process's memory alone, so no other process traps (or gets the
 * "[uprobes]" page a probe hit maps, which perf 6.1 cannot read a profile with). */
static void probe_ldso(struct bt_capture *c, int pid, int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || c->nldso == LDSO_MAX)
		return;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "_dl_debug_state");
	struct bpf_link *l = bpf_program__attach_uprobe_opts(c->skel->progs.on_dl_state, pid, path, 0, &uo);
	if (!l) {
		logf_(c, BT_LOG_WARN, "process %d: no uprobe on ld.so's _dl_debug_state (%s): libraries a "
		      "dlclose unmaps stay known until something else is mapped there", pid, strerror(errno));
		return;
	}
	c->ldso_links[c->nldso++] = l;
	logf_(c, BT_LOG_DEBUG, "process %d: dlopen and dlclose seen through _dl_debug_state", pid);
}

/* Each watched process's ld.so, found inside that process's root. System-wide, none: a probe in
 * every process would cost each one a trap at every start; a library a dlclose unmapped is then
 * forgotten when something else is mapped there, as perf does. */
static void attach_ldso(struct bt_capture *c, const struct bt_capture_opts *opts)
{
	char interp[4096];
	for (size_t i = 0; !opts->all && i < opts->npids; i++) {
		char exe[64];
		snprintf(exe, sizeof(exe), "/proc/%d/exe", opts->pids[i]);
		if (bt_mapsrc_interp(exe, "", interp, sizeof(interp)) != 0)
			continue;
		int fd = bt_procmaps_open_in_root("", opts->pids[i], interp);
		if (fd >= 0) {
			probe_ldso(c, opts->pids[i], fd);
			close(fd);
		}
	}
}

/* Fills the watched set, attaches the tracepoints and the samplers, and opens the ring buffer. */
/* The cpu-clock sampler on every online CPU asked for. */
static int attach_sampler(struct bt_capture *c, const struct bt_capture_opts *opts, char *errbuf,
			  size_t errlen)
{
	struct perf_attach_ctx pa = { .c = c, .freq = opts->freq_hz ? opts->freq_hz : DEFAULT_FREQ,
				      .cpus = opts->cpus, .ncpus = opts->ncpus };
	int err = for_each_online_cpu(attach_cpu, &pa);
	if (err)
		return fail(errbuf, errlen, err, "attaching the cpu-clock sampler");
	if (!c->nperf && opts->cpus && !pa.first_err)
		return fail(errbuf, errlen, -ENODEV, "none of the CPUs asked for is online");
	if (!c->nperf)
		return fail(errbuf, errlen, pa.first_err ? pa.first_err : -ENODEV,
			    "no CPU could be sampled (perf_event_open cpu-clock at %u Hz)", pa.freq);
	return 0;
}

/* Off-CPU time's hooks on the scheduler: once the snapshot has named what the watched processes
 * map, like the sampler. Counting starts at bt_capture_offcpu_begin. */
static int attach_offcpu(struct bt_capture *c, char *errbuf, size_t errlen)
{
	struct buildtrace_bpf *s = c->skel;
	if (!(s->rodata->cfg_flags & BT_CFG_OFFCPU))
		return 0;
	if (!(s->links.on_wakeup = bpf_program__attach(s->progs.on_wakeup)))
		return fail(errbuf, errlen, -errno, "attaching to the tracepoint sched:sched_wakeup failed");
	if (!(s->links.on_switch = bpf_program__attach(s->progs.on_switch)))
		return fail(errbuf, errlen, -errno, "attaching to the tracepoint sched:sched_switch failed");
	return 0;
}

/* The off-CPU sums' reader, on the loaded maps. */
static int open_offcpu(struct bt_capture *c, const struct bt_capture_opts *opts, char *errbuf, size_t errlen)
{
	struct buildtrace_bpf *s = c->skel;
	if (!(s->rodata->cfg_flags & BT_CFG_OFFCPU))
		return 0;
	struct bt_offcpu_maps m = {
		.threads_fd = bpf_map__fd(s->maps.offcpu_threads), .sums_fd = bpf_map__fd(s->maps.offcpu_sums),
		.sums_a_fd = bpf_map__fd(s->maps.offcpu_sums_a), .sums_b_fd = bpf_map__fd(s->maps.offcpu_sums_b),
		.known_fd = bpf_map__fd(s->maps.offcpu_known), .t0 = (volatile uint64_t *)&s->bss->offcpu_t0,
		.states = s->rodata->offcpu_states, .min_ns = opts->offcpu_min_ns,
	};
	int err = bt_offcpu_new(&m, &c->offcpu);
	return err ? fail(errbuf, errlen, err, "setting up the off-CPU sums") : 0;
}

/* Everything but the sampler: the watched set, the hooks that report processes and mappings, the
 * ring buffers. */
static int attach(struct bt_capture *c, const struct bt_capture_opts *opts, char *errbuf, size_t errlen)
{
	int err;
	for (size_t i = 0; !opts->all && i < opts->npids; i++) {
		if ((err = watch_pid(c, opts->pids[i]))) {
			fail(errbuf, errlen, err, "adding pid %d to the watched set", opts->pids[i]);
			return err;
		}
	}
	if ((err = attach_tracepoints(c, errbuf, errlen)) || (err = open_offcpu(c, opts, errbuf, errlen)))
		return err;
	if (c->mapsrc != BT_MAPSRC_SYSCALLS)
		attach_ldso(c, opts);
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_ring_record, c, NULL);
	if (!c->rb)
		return fail(errbuf, errlen, -errno, "opening the ring buffer");
	if ((err = bt_recq_new(queue_bytes(c), &c->q)) || (err = bt_recq_new(queue_bytes(c), &c->later)))
		return fail(errbuf, errlen, err, "allocating the record queue");
	struct epoll_event kev = { .events = EPOLLIN };
	if ((c->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (c->main_epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(c->main_epfd, EPOLL_CTL_ADD, c->wake_fd, &kev) != 0)
		return fail(errbuf, errlen, -errno, "waiting on the record queue");
	struct epoll_event ev = { .events = EPOLLIN };
	if ((c->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(c->rb), &ev) != 0 ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->kick_fd, &kev) != 0 ||
	    (c->sb && (err = bt_sideband_add_to_epoll(c->sb, c->epfd, 1))))
		return fail(errbuf, errlen, err ? err : -errno, "waiting on the ring buffers");
	return 0;
}

/* The BPF walker's tables and the processes' mappings it reads, tables kept in opts' store. */
static int open_unwtables(struct bt_capture *c, const struct bt_capture_opts *opts, char *errbuf,
			  size_t errlen)
{
	struct bt_unwtables_opts uo = {
		.rows_fd = bpf_map__fd(c->skel->maps.unw_rows), .rules_fd = bpf_map__fd(c->skel->maps.unw_rules),
		.procs_fd = bpf_map__fd(c->skel->maps.unw_procs),
		.rows_max = bpf_map__max_entries(c->skel->maps.unw_rows), .proc_root = "", .eager = !opts->all,
		.store = OPT_GIVEN(opts, unw_store) ? opts->unw_store : NULL,
	};
	int err = bt_unwtables_new(&uo, &c->unw);
	if (err)
		return fail(errbuf, errlen, err, "allocating the unwind tables");
	struct epoll_event ev = { .events = EPOLLIN };
	if (epoll_ctl(c->main_epfd, EPOLL_CTL_ADD, bt_unwtables_fd(c->unw), &ev) != 0)
		return fail(errbuf, errlen, -errno, "waiting on the unwind tables");
	return 0;
}

int bt_capture_open(const struct bt_capture_opts *opts, struct bt_capture **out, char *errbuf,
		    size_t errlen)
{
	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!out)
		return fail(errbuf, errlen, -EINVAL, "bt_capture_open");
	*out = NULL;
	int err = check_opts(opts, errbuf, errlen);
	if (err)
		return err;
	struct bt_capture *c = calloc(1, sizeof(*c));
	if (!c)
		return fail(errbuf, errlen, -ENOMEM, "allocating the capture");
	c->epfd = c->kick_fd = c->wake_fd = c->main_epfd = -1;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	bt_htab_init(&c->seen_watched);
	c->on_record = opts->on_record;
	c->ctx = opts->ctx;
	c->log = opts->log;
	c->all = opts->all;
	c->follow_forks = opts->follow_forks;
	c->old_print = libbpf_set_print(quiet_print);
	c->possible_cpus = libbpf_num_possible_cpus();
	if (c->possible_cpus <= 0)
		err = fail(errbuf, errlen, c->possible_cpus ? c->possible_cpus : -EINVAL,
			   "counting the possible CPUs");
	if (!err)
		err = load_or_copy(c, opts, errbuf, errlen);
	if (!err)
		err = attach(c, opts, errbuf, errlen);
	if (!err && (c->skel->rodata->cfg_flags & BT_CFG_UNWIND))
		err = open_unwtables(c, opts, errbuf, errlen);
	if (!err && c->sb)
		forget_sideband(c);
	if (!err && (err = bt_capture_snapshot(c, 0)))
		fail(errbuf, errlen, err, "running the task_vma iterator for the initial snapshot");
	/* The walker's tables of what the snapshot delivered, before the first sample. */
	if (!err && c->unw) {
		/* tables the snapshot asked for (eager): made before the first sample where they
		 * can be quickly (the store has them), else by the worker once it runs */
		while (bt_unwtables_pending(c->unw) && bt_unwtables_wait(c->unw, 0))
			bt_unwtables_collect(c->unw);
		if ((err = bt_unwtables_flush(c->unw)))
			fail(errbuf, errlen, err, "writing the processes' mappings for the BPF stack walk");
	}
	/* Sampling starts once the processes' mappings are in the ring: no sample comes before the
	 * snapshot that names its frames. What is mapped meanwhile, the hooks report. */
	if (!err && opts->samples)
		err = attach_sampler(c, opts, errbuf, errlen);
	if (!err)
		err = attach_offcpu(c, errbuf, errlen);
	if (err) {
		bt_capture_close(c);
		return err;
	}
	if (opts->samples)
		logf_(c, BT_LOG_INFO, "sampling at %u Hz", opts->freq_hz ? opts->freq_hz : DEFAULT_FREQ);
	*out = c;
	return 0;
}

int bt_capture_watch(struct bt_capture *c, int pid)
{
	if (!c || pid <= 0)
		return -EINVAL;
	if (c->all)
		return 0;
	int err = watch_pid(c, pid);
	if (err)
		return err;
	return snapshot(c, &pid, 1);
}

int bt_capture_python(struct bt_capture *c, int pid, const struct bt_py_proc *p)
{
	if (!c || pid <= 0)
		return -EINVAL;
	if (!c->python)
		return -EOPNOTSUPP;
	uint32_t key = (uint32_t)pid;
	if (!p)
		return bpf_map__delete_elem(c->skel->maps.py_procs, &key, sizeof(key), 0) ? -errno : 0;
	if (p->frame_code > BT_PY_FRAME_BYTES - 8 || p->frame_previous > BT_PY_FRAME_BYTES - 8 ||
	    p->frame_instr > BT_PY_FRAME_BYTES - 8 || p->frame_entry > BT_PY_FRAME_BYTES - 1 ||
	    p->frame_bytes > BT_PY_FRAME_BYTES || p->entry > BT_PY_ENTRY_OWNER)
		return -EINVAL;
	return bpf_map__update_elem(c->skel->maps.py_procs, &key, sizeof(key), p, sizeof(*p), BPF_ANY) ? -errno : 0;
}

int bt_capture_offcpu_begin(struct bt_capture *c, uint64_t *t0)
{
	if (!c || !c->offcpu)
		return -EOPNOTSUPP;
	uint64_t now = mono_ns();
	bt_offcpu_begin(c->offcpu, now);
	c->offcpu_forgot_ns = now;
	if (t0)
		*t0 = now;
	/* the threads off a CPU now: one pass over the watched processes' threads */
	if (c->all)
		return run_iter(c, c->skel->progs.offcpu_seed, 0);
	int fd = bpf_map__fd(c->skel->maps.watched), err = 0;
	uint32_t key, next, *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		int e = run_iter(c, c->skel->progs.offcpu_seed, (int)next);
		if (e && !gone(e) && !err)
			err = e;
		key = next;
		prev = &key;
	}
	return err;
}

/* A record of a cut, queued behind every record read before it (the reader thread may queue more
 * meanwhile: those were written after the swap, and belong after the cut or to no sum of it). */
static int offcpu_record(void *ctx, const struct bt_rec_hdr *rec)
{
	struct bt_capture *c = ctx;
	return bt_recq_push(c->q, rec, rec->size, false);
}

int bt_capture_offcpu_cut(struct bt_capture *c, uint64_t *t)
{
	if (!c || !c->offcpu)
		return -EOPNOTSUPP;
	if (!bt_offcpu_started(c->offcpu))
		return 0;
	uint64_t now = mono_ns();
	int err = bt_offcpu_swap(c->offcpu, now);
	if (err)
		return err;
	if (t)
		*t = now;
	/* The stacks of the keys in the sums swapped out are in the ring buffer now: read into the
	 * queue whole before the sums go in behind them, so that every record is delivered in the
	 * order it was read, a stack before the time counted in it (and, like the rest, after any
	 * sample before it that waits for a table). */
	while (!read_now(c))
		;
	bool forget = c->offcpu_stacks > OFFCPU_FORGET_STACKS ||
		      (c->offcpu_remapped && now - c->offcpu_forgot_ns > OFFCPU_FORGET_REMAP_NS);
	int m = bt_offcpu_read(c->offcpu, forget, offcpu_record, c);
	if (m < 0)
		return m;
	if (forget) {
		c->offcpu_stacks = 0;
		c->offcpu_remapped = false;
		c->offcpu_forgot_ns = now;
	}
	return m;
}

int bt_capture_stats(struct bt_capture *c, struct bt_capture_stats *out)
{
	if (!c || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	uint64_t *vals = calloc((size_t)c->possible_cpus, sizeof(uint64_t));
	if (!vals)
		return -ENOMEM;
	uint64_t sums[BT_CNT_MAX] = { 0 };
	int err = 0;
	for (uint32_t k = 0; k < BT_CNT_MAX; k++) {
		if (bpf_map__lookup_elem(c->skel->maps.counters, &k, sizeof(k), vals,
					 (size_t)c->possible_cpus * sizeof(uint64_t), 0)) {
			err = -errno;
			break;
		}
		for (int i = 0; i < c->possible_cpus; i++)
			sums[k] += vals[i];
	}
	free(vals);
	for (int t = 0; t < BT_REC_TYPE_MAX; t++)
		out->drops[t] = sums[BT_CNT_DROP_BASE + t];
	out->samples = sums[BT_CNT_SAMPLES];
	for (int t = 0; t < BT_REC_TYPE_MAX; t++)
		out->queue_drops[t] = __atomic_load_n(&c->qdrops[t], __ATOMIC_RELAXED);
	for (unsigned t = 0; t < BT_REC_TAGS; t++)
		out->queue_drops_tag[t] = __atomic_load_n(&c->qdrops_tag[t], __ATOMIC_RELAXED);
	out->queue_peak = bt_recq_peak(c->q) + bt_recq_peak(c->later);
	out->reader_gap_ns = __atomic_load_n(&c->reader_gap_ns, __ATOMIC_RELAXED);
	out->queue_max = bt_recq_bytes(c->q) > queue_bytes(c) ? bt_recq_bytes(c->q) : queue_bytes(c);
	out->bid_faults = sums[BT_CNT_BID_FAULT];
	out->skipped = sums[BT_CNT_SKIPPED];
	out->skip_full = c->skip_full;
	out->iter_runs = c->iter_runs;
	out->cpus_attached = c->nperf;
	out->ringbuf_bytes = bpf_map__max_entries(c->skel->maps.events);
	out->mapsrc = c->mapsrc;
	out->ksym_records = c->sb != NULL;
	out->sideband_lost = bt_sideband_lost(c->sb);
	out->dlopen_probes = c->nldso;
	bt_unwtables_stats(c->unw, &out->unw);
	for (int t = 0; t < BT_REC_TYPE_MAX; t++)
		out->ring_bytes[t] = __atomic_load_n(&c->ring_bytes[t], __ATOMIC_RELAXED);
	out->sample_insns = c->sample_insns;
	out->load_insns = c->load_insns;
	out->load_progs = c->load_progs;
	out->offcpu.blocks = sums[BT_CNT_OFFCPU_BLOCKS];
	out->offcpu.unwalked = sums[BT_CNT_OFFCPU_UNWALKED];
	out->offcpu.no_thread = sums[BT_CNT_OFFCPU_NO_THREAD];
	out->offcpu.lost = sums[BT_CNT_OFFCPU_LOST];
	out->offcpu.lost_ns = sums[BT_CNT_OFFCPU_LOST_NS];
	out->offcpu.stacks = sums[BT_CNT_OFFCPU_STACKS];
	struct bt_offcpu_stats os;
	bt_offcpu_stats(c->offcpu, &os);
	out->offcpu.cuts = os.cuts;
	out->offcpu.forgets = os.forgets;
	return err;
}

int bt_capture_skip(struct bt_capture *c, int pid, uint64_t cgroup_id, uint64_t time_ns)
{
	if (!c || pid <= 0)
		return -EINVAL;
	if (!(c->skel->rodata->cfg_flags & BT_CFG_SKIP))
		return -EOPNOTSUPP;
	uint32_t key = (uint32_t)pid;
	struct bt_skip v = { .cgroup_id = cgroup_id, .since_ns = time_ns };
	if (bpf_map__update_elem(c->skel->maps.skipped, &key, sizeof(key), &v, sizeof(v), BPF_ANY) == 0)
		return 0;
	int err = -errno;
	if (err == -E2BIG) {
		c->skip_full++;
		return -E2BIG;
	}
	return err;
}

int bt_capture_skip_clear(struct bt_capture *c)
{
	if (!c || !(c->skel->rodata->cfg_flags & BT_CFG_SKIP))
		return 0;
	int fd = bpf_map__fd(c->skel->maps.skipped);
	uint32_t key;
	/* deleting the first key each time: iterating while deleting could skip keys */
	while (bpf_map_get_next_key(fd, NULL, &key) == 0)
		if (bpf_map_delete_elem(fd, &key) != 0)
			return -errno;
	return 0;
}

void bt_capture_stop_sampling(struct bt_capture *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nperf; i++) {
		bpf_link__destroy(c->perf_links[i]);
		c->perf_links[i] = NULL;
	}
}

int bt_capture_watched_alive(struct bt_capture *c)
{
	if (!c)
		return -EINVAL;
	if (c->all)
		return -1;
	int fd = bpf_map__fd(c->skel->maps.watched);
	uint32_t key, next, stale[64];
	uint32_t *prev = NULL;
	size_t nstale = 0;
	int alive = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		/* The exit tracepoint removes processes; this catches one that died before it was
		 * attached. */
		if (pid_alive((int)next))
			alive++;
		else if (nstale < sizeof(stale) / sizeof(stale[0]))
			stale[nstale++] = next;
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < nstale; i++)
		bpf_map_delete_elem(fd, &stale[i]);
	return alive;
}

int bt_capture_shared_fds(struct bt_capture *c, int *events_fd, int *watched_fd)
{
	if (!c || !c->skel)
		return -EINVAL;
	*events_fd = bpf_map__fd(c->skel->maps.events);
	*watched_fd = bpf_map__fd(c->skel->maps.watched);
	return *events_fd >= 0 && *watched_fd >= 0 ? 0 : -EINVAL;
}

int bt_capture_add_build_id(struct bt_capture *c, int fd, const uint8_t *id, size_t len)
{
	struct stat st;
	if (!c || !c->skel || !id || !len || len > BT_BUILD_ID_MAX)
		return -EINVAL;
	if (fstat(fd, &st) != 0)
		return -errno;
	/* the key the kernel side makes: its own device number form, mtime in ns */
	struct bt_file_key key = { .ino = st.st_ino,
				   .mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec,
				   .dev = (uint32_t)(major(st.st_dev) << 20 | minor(st.st_dev)) };
	struct bt_bid b = { .status = BT_BID_OK, .len = (uint8_t)len };
	memcpy(b.id, id, len);
	return bpf_map__update_elem(c->skel->maps.bid_cache, &key, sizeof(key), &b, sizeof(b), 0) ? -errno : 0;
}

void bt_capture_close(struct bt_capture *c)
{
	if (!c)
		return;
	if (c->malformed)
		logf_(c, BT_LOG_WARN, "%llu malformed ring buffer records were ignored",
		      (unsigned long long)c->malformed);
	stop_reader(c);
	ring_buffer__free(c->rb);
	bt_recq_free(c->q);
	bt_recq_free(c->later);
	int fds[] = { c->epfd, c->kick_fd, c->wake_fd, c->main_epfd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	bt_sideband_close(c->sb);
	for (unsigned i = 0; i < c->nldso; i++)
		bpf_link__destroy(c->ldso_links[i]);
	for (unsigned i = 0; i < c->nperf; i++)
		bpf_link__destroy(c->perf_links[i]);
	free(c->perf_links);
	buildtrace_bpf__destroy(c->skel);
	bt_htab_free(&c->seen_watched);
	bt_unwtables_free(c->unw);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	bt_offcpu_free(c->offcpu);
	libbpf_set_print(c->old_print);
	free(c);
}
