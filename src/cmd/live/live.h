/* live.h - a live session from open to finish: the loop `record` and `agent` share. It prints
 * nothing: what it has to say goes to the command's log callback, and errors come back as -errno. */
#ifndef BT_LIVE_H
#define BT_LIVE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "session/session.h"
#include "symsrc/unwcache.h"

struct bt_live;
struct bt_debuginfod;

/* A command's hook into the loop; elapsed: seconds since the loop began. */
typedef void (*bt_live_hook_fn)(void *ctx, struct bt_live *l, double elapsed);
/* Whether the loop should end now: NULL to go on, else why (it becomes l->why). */
typedef const char *(*bt_live_done_fn)(void *ctx, struct bt_live *l);

struct bt_live_opts {
	const int *pids;          /* processes to profile (and the children they start) */
	size_t npids;
	bool all;                 /* every process instead; else the loop ends when they have all exited */
	const int *tids;          /* keep only the samples of these threads; NULL: of every thread */
	size_t ntids;
	const bool *cpus;         /* sample only these CPUs (bt_capture_opts.cpus); NULL: every one */
	size_t ncpus;
	bool user, kernel;        /* which stacks */
	bool per_pid;             /* keep the stacks of different processes apart */
	bool per_tid;             /* and of different threads */
	bool sample_log;          /* keep every sample in time order too (per-sample outputs) */
	const char *scratch_dir;  /* where older samples of that log go; NULL: /var/tmp */
	bool labels;              /* and of threads, executables and cgroups: pprof sample labels */
	bool idle;                /* with all: the idle tasks' samples too (swapper) */
	unsigned freq_hz;
	bool no_sampler;          /* no cpu-clock sampler: the samples come from probes (trace) */
	size_t ringbuf_bytes;     /* 0: the capture's default */
	bool dwarf;               /* user stacks unwound with call frame information from a copy */
	bool bpf_unwind;          /* user stacks walked in BPF with compiled unwind tables */
	unsigned ustack_bytes;    /* stack bytes copied per sample; 0: the default */
	bool skip;                /* the sampler can be told to skip processes (bt_capture_skip) */
	bool off_cpu;             /* off-CPU time too, counted from bt_live_attach on (bt_capture_opts) */
	unsigned offcpu_states;   /* 1 << enum bt_offcpu_state; 0: all */
	uint64_t offcpu_min_ns;
	unsigned offcpu_rate;     /* stacks per second per CPU at most; 0: no bound */
	const char *cache_dir;    /* build-id cache; NULL: ~/.debug */
	bool cache_store;         /* store sampled binaries in the cache */
	bool tables_store;        /* store the BPF walker's compiled tables in it (they are read from
				   * it either way) */
	uint64_t cache_max_file;  /* bt_session_opts' limits of those stores; 0: the defaults */
	uint64_t cache_max_size;
	uint64_t proc_mem_max;    /* bt_session_opts.proc_mem_max; 0: its default */
	bool debuginfod;          /* ask debuginfod for missing symbols when one is configured */
	double duration;          /* seconds; 0: until *stop */
	/* Set by the command's signal handler to the signal that ends the session; a handler cannot
	 * be given a context, so the flag is the command's, and the loop only reads it. */
	volatile sig_atomic_t *stop;
	bt_log_fn log;            /* the capture's messages and the driver's own; may be NULL */
	bt_live_hook_fn on_tick;  /* once a second, after the frames sampled so far are named; may be NULL */
	bt_live_hook_fn on_turn;  /* after every poll of the ring buffer; may be NULL */
	bt_live_done_fn done;     /* asked after every poll; may be NULL */
	void *ctx;                /* passed to log, on_tick, on_turn and done */
};

struct bt_live {
	struct bt_live_opts opts;
	struct bt_session session;
	struct bt_capture *cap;
	struct bt_debuginfod *dbgd;
	int64_t start_ns;                /* wall clock, ns since the epoch, when the loop began */
	uint64_t start_mono_ns;          /* the same moment on the records' clock, CLOCK_MONOTONIC */
	double t0;                       /* monotonic seconds when the loop began */
	const char *why;                 /* why the loop ended: "interrupted", "duration reached" ... */
	struct bt_capture_stats stats;   /* as the last bt_live_collect found them */
	double kallsyms_at;              /* monotonic seconds of the last kallsyms read, 0: none since start */
	uint64_t python_refused;         /* interpreters the sampler could not be told of */
	bool ended;                      /* bt_live_run returned: what waits is collected whole */
	bool cache_ok;                   /* the cache may be written after the drop (cache_usable) */
	struct bt_unwcache tables;       /* the walker's compiled tables kept between sessions */
	struct bt_unwtables_store store;
	uint64_t offcpu_from, offcpu_until; /* off-CPU time is counted over [from, until) (CLOCK_MONOTONIC
					     * ns): from bt_live_attach to the last cut */
};

/* Off-CPU stacks taken per second per CPU at most, unless a command says otherwise: a stack costs a
 * few microseconds, so this bounds what counting off-CPU time costs a CPU to a few percent. */
#define BT_LIVE_OFFCPU_RATE 20000

/* Kernel frames no announcement, module or kallsyms read names make kallsyms be read again, at
 * most once per this many seconds (the first time at once): each read is the kernel printing
 * some 200,000 lines. */
#define BT_LIVE_KALLSYMS_GAP_S 30.0
/* At the end of a session, how long the stacks that wait for a table being made are waited for. */
#define BT_LIVE_SETTLE_MS 20000

/* The session, and a debuginfod client when asked for and configured (said at BT_LOG_INFO when
 * configured but unusable). Also raises the open-file limit: the session keeps one descriptor per
 * build-id it has seen. 0 or -errno; bt_live_close frees what was made either way. */
int bt_live_init(struct bt_live *l, const struct bt_live_opts *opts);

/* Loads and attaches the kernel side, feeding its records to the session; where the kernel does
 * not announce BPF programs, reads its symbols again so the programs' own frames are named. 0 or
 * -errno with a message in msg. */
int bt_live_attach(struct bt_live *l, char *msg, size_t len);

/* Once everything is attached: keeps only the capabilities the session still needs (see
 * bt_caps_keep_after_attach). 0 or -errno. */
int bt_live_drop_privileges(void);

/* Sends SIGINT and SIGTERM to handler, which should set the flag given as opts.stop. */
void bt_live_catch_stop(void (*handler)(int));

/* The loop: polls the ring buffer and, once a second, forgets processes gone for a while, reads the
 * kernel's symbols again when kernel frames went unnamed (BT_LIVE_KALLSYMS_GAP_S apart), takes in
 * what debuginfod delivered and
 * names the new frames. Ends on *opts.stop, after opts.duration, when every watched process has
 * exited, or when opts.done says so, with l->why saying which. 0, or -errno when reading the ring buffer failed. */
int bt_live_run(struct bt_live *l);

/* With off_cpu: the off-CPU time counted since the last cut into the profile (at most once a second
 * unless now); the loop cuts once a second, bt_live_collect at its end. 0 or -errno. */
int bt_live_offcpu_cut(struct bt_live *l, bool now);

/* Everything sampled so far into the profile and named: the records still in the ring buffer, the
 * kernel's symbols read again if frames missed them (as the loop does), debuginfod's pending lookups awaited (each has
 * its timeout), source lines when asked for. Fills l->stats. 0, or -errno from naming lines. */
int bt_live_collect(struct bt_live *l, bool lines);

/* Seconds since the loop began. */
double bt_live_elapsed(const struct bt_live *l);

/* The capture's losses: samples, and records of every other type. */
uint64_t bt_live_lost_samples(const struct bt_capture_stats *st);
uint64_t bt_live_lost_other(const struct bt_capture_stats *st);

/* Detaches and frees everything bt_live_init and bt_live_attach made. */
void bt_live_close(struct bt_live *l);

#endif
