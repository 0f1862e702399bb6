/* capture.h - the kernel side as userspace sees it: loads and attaches the BPF programs, feeds the
 * watched-pid filter, runs the task_vma iterator that reads build-ids in the kernel, and hands every
 * ring buffer record, in order, to a callback. */
#ifndef BT_CAPTURE_H
#define BT_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bt_proto.h"
#include "capture/unwtables.h"

struct bt_capture;

/* The ring buffer's size: what may be asked for (--ringbuf-size), and the bounds of the size made
 * from the rate, the CPUs and the stack copy when none is asked for. */
#define BT_RINGBUF_SIZE_MIN ((size_t)4 << 10)
#define BT_RINGBUF_SIZE_MAX ((size_t)1 << 30)
#define BT_RINGBUF_AUTO_MIN ((size_t)256 << 10)
#define BT_RINGBUF_AUTO_MAX ((size_t)64 << 20)

enum bt_log_level { BT_LOG_ERROR, BT_LOG_WARN, BT_LOG_INFO, BT_LOG_DEBUG };
typedef void (*bt_log_fn)(void *ctx, enum bt_log_level level, const char *msg);

/* Called once per record; rec->size bytes are valid and were checked against the record type.
 * A non-zero return stops bt_capture_poll, which returns it. */
typedef int (*bt_record_fn)(void *ctx, const struct bt_rec_hdr *rec);

struct bt_capture_opts {
	size_t sz;              /* sizeof(struct bt_capture_opts) */
	const int *pids;        /* processes to watch (thread group ids) */
	size_t npids;
	bool all;               /* watch every process instead */
	bool samples;           /* attach the cpu-clock sampler (false: mappings only) */
	bool user_stacks;
	bool kernel_stacks;
	bool follow_forks;      /* children of watched processes are watched too */
	unsigned freq_hz;       /* samples per second per CPU */
	size_t ringbuf_bytes;   /* 0: sized from the rate, the CPUs and the stack copy (a quarter
				 * second's worth, 256 KiB to 64 MiB); rounded up to a power of two pages */
	bt_record_fn on_record;
	void *ctx;              /* passed to on_record and log */
	bt_log_fn log;          /* what could not attach and why; may be NULL */
	bool dwarf;             /* also copy user registers and stack (BT_REC_USTACK) per sample */
	unsigned ustack_bytes;  /* stack bytes per BT_REC_USTACK, 0: BT_USTACK_BYTES; else a multiple
				 * of 8 in BT_USTACK_MIN..BT_USTACK_MAX (-EINVAL otherwise) */
	int mapsrc;             /* enum bt_mapsrc: how new mappings are learnt; 0: the best the
				 * kernel allows (another that it refuses: -EOPNOTSUPP) */
	const bool *cpus;       /* sample only the online CPUs c with c < ncpus and cpus[c];
				 * NULL: every online CPU */
	size_t ncpus;
	bool idle;              /* with all: samples of the idle tasks too (pid 0, swapper/N), so
				 * that the shares of every CPU's time add up */
	bool python;            /* with user stacks: the Python frames of the processes given to
				 * bt_capture_python (BT_REC_PYSTACK) */
	bool bpf_unwind;        /* walk user stacks in BPF with unwind tables compiled per build-id
				 * (capture/unwtables.h) instead of the kernel's frame-pointer walk;
				 * not with dwarf */
	bool skip;              /* the sampler can be told to skip processes (bt_capture_skip) */
	const struct bt_unwtables_store *unw_store;  /* with bpf_unwind: where compiled tables are
				 * kept between sessions; NULL: nowhere */
	bool off_cpu;           /* off-CPU time of the watched threads: counted from
				 * bt_capture_offcpu_begin, cut at each bt_capture_offcpu_cut
				 * (BT_REC_OFFCPU_STACK and BT_REC_OFFCPU records, delivered by the
				 * polls). User stacks are walked as samples walk them (the BPF walk
				 * not finished in userspace), by frame pointers with dwarf */
	unsigned offcpu_states; /* 1 << enum bt_offcpu_state: the states counted; 0: all */
	uint64_t offcpu_min_ns; /* times off a CPU shorter than this are not counted */
	unsigned offcpu_rate;   /* stacks taken per second per CPU at most (beyond: counted without
				 * a stack); 0: no bound */
};

/* Loads and attaches everything, then takes the initial snapshot of the watched processes'
 * executable mappings (BT_REC_VMA records, delivered by the first polls). Returns 0 or -errno;
 * errbuf receives a message a user can act on. */
int bt_capture_open(const struct bt_capture_opts *opts, struct bt_capture **out,
		    char *errbuf, size_t errlen);

/* Delivers pending records to on_record, waiting up to timeout_ms for the first one (0: what the
 * kernel has written so far, without waiting for more). The ring buffer is read by a thread of its
 * own (started at the first poll: after the caller dropped its capabilities) into memory, so that
 * a slow delivery loses nothing; a sample whose user stack needs a table being made waits for it,
 * with every record after it. Exec events and mmaps whose build-id could not be read at once cause
 * an iterator run for that process, whose BT_REC_VMA records (with build-ids) follow. Returns
 * records delivered, or -errno (-EINTR when a signal interrupted the wait), or on_record's
 * non-zero return. */
int bt_capture_poll(struct bt_capture *c, int timeout_ms);

/* Delivers everything the kernel has written so far, waiting for the tables the stacks among it
 * need (up to timeout_ms): the end of a session (the rings are read in the caller's thread from
 * then on). 0, -ETIMEDOUT (what still waits stays queued),
 * or what bt_capture_poll returns. */
int bt_capture_settle(struct bt_capture *c, int timeout_ms);

/* Takes no more samples (the session ends): what is read afterwards is all that was taken. */
void bt_capture_stop_sampling(struct bt_capture *c);

/* Runs the task_vma iterator for one process now (pid 0: every watched process, or all). */
int bt_capture_snapshot(struct bt_capture *c, int pid);

/* Adds a process to the watched set after open. */
int bt_capture_watch(struct bt_capture *c, int pid);

/* The sampler walks process pid's Python frames as p describes them (its offsets within the frame
 * bytes the sampler reads, else -EINVAL), or no more when p is NULL (-ENOENT: it did not). A
 * capture opened without opts.python: -EOPNOTSUPP. */
int bt_capture_python(struct bt_capture *c, int pid, const struct bt_py_proc *p);

/* Off-CPU time counts from now on (CLOCK_MONOTONIC ns in *t0 when not NULL); the watched threads
 * off a CPU already count from now too, without a stack. -EOPNOTSUPP without opts.off_cpu. */
int bt_capture_offcpu_begin(struct bt_capture *c, uint64_t *t0);

/* Cuts the off-CPU time counted up to now (the time of the cut in *t when not NULL): a
 * BT_REC_OFFCPU record per (thread, stack, state) with the time since the last cut, blocks still
 * going on included up to now, timed at the cut. They are queued behind every record the kernel
 * wrote before the cut (the stacks they name among them) and delivered in that order by the polls
 * that follow. Returns records queued, or -errno; 0 before bt_capture_offcpu_begin. */
int bt_capture_offcpu_cut(struct bt_capture *c, uint64_t *t);

struct bt_capture_stats {
	uint64_t drops[BT_REC_TYPE_MAX];  /* ring buffer reservations that failed, per record type */
	uint64_t queue_drops[BT_REC_TYPE_MAX];  /* records read that the full queue refused, per type */
	uint64_t queue_drops_tag[BT_REC_TAGS];  /* the samples among them, per tag (a trace hit's
						 * probe + 1) */
	uint64_t queue_peak;              /* the most bytes read and waiting for delivery at once */
	uint64_t queue_max;               /* what they may take */
	uint64_t reader_gap_ns;           /* the longest the ring buffer went unread (its reader
					   * waits up to 50 ms, more when kept from the CPU) */
	uint64_t samples;                 /* samples taken in BPF for watched processes */
	uint64_t bid_faults;              /* build-id reads that failed in the iterator */
	uint64_t iter_runs;               /* iterator runs made */
	unsigned cpus_attached;
	uint64_t ringbuf_bytes;           /* the ring buffer's size */
	int mapsrc;                       /* enum bt_mapsrc in use */
	uint64_t sideband_lost;           /* kernel mmap records lost (a re-read followed) */
	unsigned dlopen_probes;           /* ld.so files whose dlopen and dlclose are seen */
	bool ksym_records;                /* kernel code that comes and goes is reported (BT_REC_KSYM) */
	struct bt_unwtables_stats unw;    /* with bpf_unwind: the tables and the walks */
	uint64_t ring_bytes[BT_REC_TYPE_MAX];  /* ring buffer bytes read, per record type (headers in) */
	uint32_t sample_insns;            /* instructions the verifier checked to load the sampling
	                                   * program (0: the kernel does not say) */
	uint32_t load_insns;              /* and for all the programs loaded, load_progs of them */
	uint32_t load_progs;
	uint64_t skipped;                 /* samples not taken: their process was to be skipped */
	uint64_t skip_full;               /* processes to skip that the kernel side had no room for */
	struct {                          /* with off_cpu */
		uint64_t blocks;          /* times a watched thread left a CPU */
		uint64_t unwalked;        /* of those, without their stack (over the rate bound) */
		uint64_t no_thread;       /* ... not counted at all: the thread table was full */
		uint64_t lost, lost_ns;   /* sums lost (the sum table was full) and the time in them */
		uint64_t stacks;          /* stack keys whose frames were written */
		uint64_t cuts, forgets;   /* cuts made; times the kernel forgot the stack keys */
	} offcpu;
};
int bt_capture_stats(struct bt_capture *c, struct bt_capture_stats *out);

/* The number of watched processes still alive (in the BPF filter); with opts.all, -1. */
int bt_capture_watched_alive(struct bt_capture *c);

/* The descriptors of the ring buffer and of the watched set, for another BPF object of the same
 * session to write into and filter by (uprobes.h). Owned by the capture. 0 or -EINVAL. */
int bt_capture_shared_fds(struct bt_capture *c, int *events_fd, int *watched_fd);

/* Tells the kernel side the build-id of the file open as fd (checked by the caller; at most
 * BT_BUILD_ID_MAX bytes), as if it had read it: mappings of that file version are then reported
 * with it at once, even for a process gone before its snapshot could read it (a short command
 * traced from its start). 0 or -errno. */
int bt_capture_add_build_id(struct bt_capture *c, int fd, const uint8_t *id, size_t len);

/* With opts.skip: the sampler takes no more samples of process pid while it runs in cgroup
 * cgroup_id and until it exec's after time_ns (the time, in the records' clock, of the sample that
 * decided it). 0, -EOPNOTSUPP without opts.skip, -E2BIG when the kernel side has no room left (the
 * process is then only dropped in userspace; counted in skip_full), or -errno. */
int bt_capture_skip(struct bt_capture *c, int pid, uint64_t cgroup_id, uint64_t time_ns);

/* Every process sampled again (the rules that skipped them changed). 0 or -errno. */
int bt_capture_skip_clear(struct bt_capture *c);

void bt_capture_close(struct bt_capture *c);

#endif
