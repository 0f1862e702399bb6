/* session.h - a profiling session's userspace state: it consumes the kernel's records in order
 * (process table, file versions and build-ids, samples) and names each frame against the symbols of
 * the build-id that was mapped when the sample was taken. */
#ifndef BT_SESSION_H
#define BT_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include "bt_proto.h"
#include "session/dso.h"
#include "session/jitmap.h"
#include "kernel/kallsyms.h"
#include "kernel/kdyn.h"
#include "kernel/kmods.h"
#include "session/offstacks.h"
#include "session/proctable.h"
#include "session/profile.h"
#include "session/pyproc.h"
#include "session/samplelog.h"
#include "session/targets.h"

struct bt_session_opts {
	const char *proc_root;   /* "" for the real /proc */
	bool bpf_walk;           /* the sampler walks user stacks (dwarf-bpf): a sample's user_err says
				  * whether its walk reached the outermost frame */
	bool kernel;             /* kernel stacks are wanted: load kallsyms */
	bool kernel_later;       /* with kernel: kallsyms is read by bt_session_load_kallsyms, not by
				  * bt_session_init (once the BPF programs are loaded: their frames are
				  * named, and the loader's transient memory is gone before this table
				  * of several MB is built) */
	bool per_pid;            /* keep stacks of different pids apart */
	bool per_tid;            /* and of different threads */
	bool sample_log;         /* keep every sample in time order as well (log), for per-sample outputs */
	const char *scratch_dir; /* where the log's older samples go; NULL: /var/tmp */
	const char *cache_dir;   /* build-id cache; NULL: ~/.debug */
	bool cache_store;        /* store binaries with samples in the cache */
	bool labels;             /* keep stacks apart by pid, tid, executable and cgroup (pprof labels) */
	uint64_t cache_max_file; /* larger files are not stored; 0: BT_BIDCACHE_MAX_FILE */
	uint64_t cache_max_size; /* stores stop when the cache holds this much; 0: BT_BIDCACHE_MAX_TOTAL */
	uint64_t proc_mem_max;   /* what the profiled processes' perf maps, jitdumps and Python code
				  * objects may make the session hold, all of them together; 0:
				  * BT_SESSION_PROC_MEM */
};

/* Frames of one sample in the profile, at most: user and kernel frames, Python frames in place of
 * eval-loop frames, and up to three [truncated] marks. */
#define BT_SESSION_MAX_FRAMES (2 * BT_MAX_STACK + BT_PY_MAX_FRAMES + 3)

/* The default of bt_session_opts.proc_mem_max. */
#define BT_SESSION_PROC_MEM (256ULL << 20)

struct bt_session_stats {
	uint64_t samples;
	uint64_t records;
	uint64_t bad_records;          /* not well-formed (bt_rec_valid): size, version, contents */
	uint64_t mappings;             /* executable file mappings reported */
	uint64_t bid_bpf;              /* build-ids read by the kernel side */
	uint64_t bid_userspace;        /* build-ids read by the /proc/PID/map_files fallback */
	uint64_t bid_missing;          /* mappings whose build-id could not be read at all */
	uint64_t unmapped_frames;      /* user addresses outside every known mapping */
	uint64_t exits;
	uint64_t modules_loaded;       /* module-load events */
	uint64_t kallsyms_reloads;     /* times kallsyms was read again after the start */
	uint64_t dwarf_stacks;         /* user stacks unwound with call frame information */
	uint64_t dwarf_frames;         /* frames those gave */
	uint64_t dwarf_stops[5];       /* by enum bt_unwind_stop: why each walk ended */
	uint64_t dwarf_unwind_ns;      /* time spent unwinding */
	uint64_t dwarf_fallback;       /* samples whose user stack came from the frame-pointer walk */
	uint64_t samples_dropped;      /* samples of processes the targets' rules drop */
	uint64_t offcpu_stacks;        /* off-CPU stacks given (BT_REC_OFFCPU_STACK) */
	uint64_t offcpu_ns;            /* off-CPU time added, all states */
	uint64_t offcpu_state_ns[BT_OFFCPU_NSTATES];
	uint64_t offcpu_blocks;        /* times off a CPU that ended */
	uint64_t offcpu_nostack_ns;    /* of the time, in no stack: blocked since before the session,
					* stack not taken (rate bound), or its stack lost */
	uint64_t offcpu_lost_ns;       /* ... its stack lost (its frames never arrived) */
	uint64_t offcpu_dropped;       /* stacks forgotten at the end of an epoch */
	uint64_t offcpu_rule_ns;       /* off-CPU time of processes the targets' rules drop */
};

struct bt_session {
	struct bt_session_opts opts;
	struct bt_proctable procs;
	struct bt_dso_registry dsos;
	struct bt_jitmaps jit;         /* perf maps of the processes that write one */
	struct bt_membudget proc_mem;  /* what perf maps, jitdumps and code objects hold, in all */
	struct bt_profile prof;
	struct bt_samplelog *log;      /* every sample in time order (opts.sample_log), else NULL */
	struct bt_kallsyms *ksyms;
	int ksyms_err;                 /* why kernel symbols are missing, when they are */
	struct bt_kmods kmods;         /* kernel modules; a kernel frame's file_id is its module's id + 1 */
	struct bt_kdyn kdyn;           /* kernel code announced during the session (BPF programs) */
	int kmods_err;                 /* why the modules loaded at start are unknown, when they are */
	uint64_t ksyms_misses;         /* kernel frames that found no symbol since the last load */
	struct bt_session_stats stats;
	uint64_t last_ns;              /* time of the newest record */
	uint32_t scratch[BT_SESSION_MAX_FRAMES];
	struct {                       /* the user stack unwound from the last BT_REC_USTACK */
		uint32_t tid;
		uint64_t time_ns;
		size_t n;
		uint64_t ips[BT_MAX_STACK];
		uint8_t exact[BT_MAX_STACK];   /* see bt_unwind */
		int why;                       /* enum bt_unwind_stop: what ended the walk */
	} ustack;
	int unwind_pid;                /* the process being unwound, for the CFI lookup */
	struct bt_pyprocs py;          /* CPython interpreters and the code objects of their frames */
	struct {                       /* the Python frames of the last BT_REC_PYSTACK */
		uint32_t tid;
		uint64_t time_ns;
		size_t n;
		int walk;                      /* enum bt_py_walk: how the walk ended */
		struct bt_py_frame frames[BT_PY_MAX_FRAMES];
		/* the sample's plan (pystack.c): per user frame, the Python frames [first, end) its
		 * eval loop ran */
		uint16_t first[2 * BT_MAX_STACK], end[2 * BT_MAX_STACK];
		uint32_t proc;                 /* the interpreter's process incarnation */
		size_t placed;                 /* frames [0, placed) have an eval-loop frame */
		bool root;                     /* frames [placed, n) go first, outer to the native stack */
		bool mark_root, mark_gap;      /* a [truncated] mark before them, after them */
		size_t mark_at;                /* the user frame whose frames a mark precedes, or SIZE_MAX */
	} pystack;
	char namebuf[1024];
	/* cgroup ids of samples and their paths (kernfs ids are never reused), for labels */
	struct {
		char mount[512];         /* the cgroup2 mount; "" when there is none */
		struct bt_htab index;    /* id -> entry */
		struct { uint64_t id; uint32_t path; } *v;
		size_t n, cap;
		struct bt_strtab paths;
	} cgroups;
	uint64_t cgroup_misses;        /* cgroup ids whose path could not be read */
	/* A second profile every sample also goes to while it is set (a profile of a few seconds asked
	 * for over HTTP, beside the interval's), with the same keeping apart as prof. */
	struct bt_profile *also;
	/* The samples also goes to: those taken from also_from_ns on and, when also_until_ns is set,
	 * before it (the records' clock, CLOCK_MONOTONIC). Samples are delivered some time after they
	 * are taken (read by a thread of their own, some waiting for an unwind table): their own time
	 * says whether they belong to the few seconds asked for. Off-CPU time goes to also when its
	 * cut (the record's time, the end of the time it counts) is after also_from_ns and, when
	 * also_until_ns is set, not after it. */
	uint64_t also_from_ns, also_until_ns;
	uint32_t also_scratch[BT_SESSION_MAX_FRAMES];
	/* The agent's targets (NULL: none): every sample's process is named by labels and its series
	 * kept apart (bt_profile_series, in prof and also alike). A sample of a process the rules drop
	 * is counted and goes no further, and on_drop (when set) is told, so that the kernel side
	 * stops sampling that process. */
	struct bt_targets *targets;
	void (*on_drop)(void *ctx, int pid, uint64_t cgroup_id, uint64_t time_ns);
	void *drop_ctx;
	/* Off-CPU stacks by their kernel key, and the locations of one going into a profile. */
	struct bt_offstacks offstacks;
	uint32_t off_scratch[BT_SESSION_MAX_FRAMES + 1];
	struct bt_offframe off_frames[BT_SESSION_MAX_FRAMES];
	const struct bt_kallsyms *sched_ksyms;  /* the table sched_addr was found in */
	uint64_t sched_addr;           /* __schedule, where an off-CPU stack's kernel frames begin */
};

int bt_session_init(struct bt_session *s, const struct bt_session_opts *opts);
void bt_session_free(struct bt_session *s);

/* A bt_record_fn (see capture.h): ctx is the session. Returns 0, or -errno on ENOMEM. */
int bt_session_record(void *ctx, const struct bt_rec_hdr *rec);

/* Reads /proc/kallsyms for the first time (opts.kernel_later), setting ksyms_err: 0 or -errno.
 * Kernel frames that found no name before have their names asked again. */
int bt_session_load_kallsyms(struct bt_session *s);

/* Reads /proc/kallsyms again: after the BPF programs are loaded (so their frames have names) and
 * when kernel frames fail to resolve (programs or modules loaded since). 0 or -errno. */
int bt_session_reload_kallsyms(struct bt_session *s);

/* Takes in debug files debuginfod has delivered (waiting up to timeout_ms; negative: until no lookup
 * is pending) and marks the frames of those build-ids for naming again. Returns how many arrived. */
int bt_session_poll_debuginfod(struct bt_session *s, int timeout_ms);

/* The version of the symbol naming user location l (GLIBC_2.14; see bt_symtab_version), or NULL:
 * none, not a named user frame, or its symbol table is not loaded now. */
const char *bt_session_symbol_version(const struct bt_session *s, const struct bt_loc *l);

/* How a per-sample output shows a frame besides its name, as perf script does: the address in its
 * file (a file's ELF virtual address, the file offset when the file's layout is unknown; a kernel,
 * JIT or unmapped frame's own address), its offset from the start of the symbol naming it (when
 * one does), and its file: a path, "[kernel.kallsyms]", "[MODULE]", a JIT's "/tmp/perf-PID.map",
 * or NULL when unknown (Python frames: their source file). */
struct bt_frame_place {
	uint64_t addr;
	bool has_off;
	uint64_t off;
	const char *file;
	char buf[64];        /* file, when it is made here */
};
void bt_session_frame_place(const struct bt_session *s, const struct bt_loc *l, struct bt_frame_place *out);

/* The PT_LOAD layout of the file of user file id file_id (from its build-id's symbol source), or
 * NULL when unknown. */
const struct bt_elf_layout *bt_session_file_layout(const struct bt_session *s, uint32_t file_id);

/* Names every frame that has no final name yet. */
int bt_session_resolve(struct bt_session *s);
/* Gives every user location not asked before its source lines from the DWARF of its build-id
 * (inlined functions included, innermost first; a return address is looked up at the call).
 * Kernel and unmapped locations get none. 0 or -ENOMEM. */
int bt_session_resolve_lines(struct bt_session *s);

/* Forgets processes that exited more than grace_ns ago (by the records' clock, CLOCK_MONOTONIC, or
 * the newest record's time if that is later). */
void bt_session_reap(struct bt_session *s, uint64_t grace_ns);

/* Distinct build-ids seen. */
size_t bt_session_build_ids(const struct bt_session *s);

/* Kernel device number as carried in records to dev_t. */
dev_t bt_kdev_to_dev(uint32_t kdev);

#endif
