/* bt_proto.h - the records the BPF programs write into the ring buffer, as userspace reads them.
 * Shared by bpf/ and src/: fixed-width types only, every size pinned by _Static_assert. */
#ifndef BT_PROTO_H
#define BT_PROTO_H

#ifdef __BPF__
/* vmlinux.h provides __u8 .. __u64 */
#else
#include <linux/types.h>
#endif

#define BT_PROTO_VERSION 1

#define BT_MAX_STACK 127        /* frames per stack, the kernel's perf_event_max_stack default */
#define BT_BUILD_ID_MAX 20      /* what the kernel's BUILD_ID_SIZE_MAX allows */
#define BT_PATH_MAX 256         /* path bytes carried in a record, NUL included */
#define BT_COMM_LEN 16
#define BT_MODNAME_LEN 56
#define BT_KSYM_NAME_LEN 128    /* a BPF program's kallsyms name: bpf_prog_TAG_NAME */
#define BT_REC_TAGS 65          /* record tags: 0, and a trace probe's index + 1 */

enum bt_rec_type {
	BT_REC_SAMPLE = 1,  /* struct bt_rec_sample */
	BT_REC_EXEC = 2,    /* struct bt_rec_exec */
	BT_REC_FORK = 3,    /* struct bt_rec_fork */
	BT_REC_EXIT = 4,    /* struct bt_rec_exit */
	BT_REC_MMAP = 5,    /* struct bt_rec_mapping: an executable file mapping just made by mmap */
	BT_REC_MUNMAP = 6,  /* struct bt_rec_munmap */
	BT_REC_VMA = 7,     /* struct bt_rec_mapping: an executable file mapping read by the task_vma iterator */
	BT_REC_MODULE = 8,  /* struct bt_rec_module */
	BT_REC_USTACK = 9,  /* struct bt_rec_ustack: the user registers and stack of the sample after it */
	BT_REC_DLSTATE = 10, /* struct bt_rec_exit: ld.so announced a change of its loaded objects */
	BT_REC_KSYM = 11,   /* struct bt_rec_ksym: kernel code came or went (BPF programs, trampolines) */
	BT_REC_PYSTACK = 12, /* struct bt_rec_pystack: the Python frames of the sample after it */
	BT_REC_UCONT = 13,  /* struct bt_rec_ucont: what the sample after it needs to finish its user stack */
	BT_REC_OFFCPU_STACK = 14, /* struct bt_rec_offcpu_stack: the frames of an off-CPU stack key */
	BT_REC_OFFCPU = 15, /* struct bt_rec_offcpu: off-CPU time of a thread in one stack and state
			     * (written by the loader from the kernel's sums, not by BPF) */
	BT_REC_TYPE_MAX = 16,
};

/* Every record starts with this; size is the whole record's size in bytes. */
struct bt_rec_hdr {
	__u16 type;
	__u8 version;
	__u8 tag;       /* which of its program's sources wrote it: a trace hit's probe + 1 (below
			 * BT_REC_TAGS); an off-CPU stack's BT_OFFCPU_STACK_* flags; 0 for the rest */
	__u32 size;
	__u64 time_ns;  /* bpf_ktime_get_ns() */
};

/* Sample: kernel frames first (ips[0 .. kern_n)), then user frames (ips[kern_n .. kern_n+user_n)),
 * each innermost first. A negative *_err is the -errno bpf_get_stack returned. */
struct bt_rec_sample {
	struct bt_rec_hdr hdr;
	__u32 pid;      /* thread group id */
	__u32 tid;
	__u32 cpu;
	__u16 kern_n;
	__u16 user_n;
	__s32 kern_err;
	__s32 user_err;
	char comm[BT_COMM_LEN];
	__u64 cgroup_id;  /* the thread's cgroup (v2) when it was sampled: bpf_get_current_cgroup_id() */
	__u64 ips[2 * BT_MAX_STACK];
};

struct bt_rec_exec {
	struct bt_rec_hdr hdr;
	__u32 pid;
	__u32 old_tid;  /* the thread that called execve */
	char comm[BT_COMM_LEN];
	char filename[BT_PATH_MAX];
};

struct bt_rec_fork {
	struct bt_rec_hdr hdr;
	__u32 parent_pid;
	__u32 child_pid;
	char comm[BT_COMM_LEN];
};

struct bt_rec_exit {
	struct bt_rec_hdr hdr;
	__u32 pid;
	__u32 pad;
};

struct bt_rec_munmap {
	struct bt_rec_hdr hdr;
	__u32 pid;
	__u32 pad;
	__u64 start;
	__u64 end;
};

/* build_id_status values */
enum bt_bid_status {
	BT_BID_OK = 0,
	BT_BID_PENDING = 1,   /* not readable yet (pages not faulted in); a VMA record will follow */
	BT_BID_NONE = 2,      /* an ELF file without a GNU build-id note */
	BT_BID_NOT_ELF = 3,
	BT_BID_FAULT = 4,     /* memory could not be read */
};

/* mapping flags */
#define BT_MAP_F_DELETED 0x1   /* the file was unlinked (nlink == 0) */
#define BT_MAP_F_SNAPSHOT 0x2  /* the record comes from an iterator run */

struct bt_rec_mapping {
	struct bt_rec_hdr hdr;
	__u32 pid;
	__u32 flags;
	__u64 start;
	__u64 end;
	__u64 pgoff;      /* file offset of start, in bytes */
	__u64 ino;
	__u64 mtime_ns;
	__u64 file_size;
	__u32 dev;        /* the kernel's internal form, (major << 20) | minor; userspace makedev() differs */
	__u8 build_id_status;
	__u8 build_id_len;
	__u16 path_len;   /* bytes in path, NUL included; 0 when unknown */
	__u8 build_id[BT_BUILD_ID_MAX];
	__u32 pad;
	char path[BT_PATH_MAX];
};

struct bt_rec_module {
	struct bt_rec_hdr hdr;
	__u64 base;
	__u64 size;
	__u8 build_id_status;
	__u8 build_id_len;
	__u8 pad[6];
	__u8 build_id[BT_BUILD_ID_MAX];
	__u32 pad2;
	char name[BT_MODNAME_LEN];
};

/* Kernel code registered or unregistered, as the kernel announces it to perf (PERF_RECORD_KSYMBOL):
 * BPF programs and trampolines, named as kallsyms names them. Written by the loader, not by BPF. */
#define BT_KSYM_F_UNREGISTER 0x1
struct bt_rec_ksym {
	struct bt_rec_hdr hdr;
	__u64 addr;
	__u32 len;
	__u16 ksym_type;  /* PERF_RECORD_KSYMBOL_TYPE_* */
	__u16 flags;      /* BT_KSYM_F_* */
	char name[BT_KSYM_NAME_LEN];
};

/* Bytes of user stack copied per sample for unwinding with call frame information: the default,
 * and the bounds of what --call-graph dwarf,SIZE may ask for (a multiple of 8). */
#define BT_USTACK_BYTES 8192
#define BT_USTACK_MIN 256
#define BT_USTACK_MAX 65536

/* The user-mode registers unwinding starts from and the top of the user stack, copied by the
 * sampler just before the BT_REC_SAMPLE record of the same tid and time. data follows the fixed
 * part, as many bytes as the sampler was configured to copy (hdr.size tells); len is how many of
 * them were copied from address sp upwards (0 when none could be read). */
struct bt_rec_ustack {
	struct bt_rec_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u64 ip, sp, bp;
	__u64 bx, r12, r13, r14, r15;  /* the callee-saved registers CFI rules may be based on */
	__u32 len;
	__u32 pad;
	__u8 data[];
};

_Static_assert(sizeof(struct bt_rec_hdr) == 16, "bt_rec_hdr size");
_Static_assert(sizeof(struct bt_rec_ustack) == 16 + 8 + 24 + 40 + 8, "bt_rec_ustack size");
_Static_assert(sizeof(struct bt_rec_sample) == 16 + 48 + 16 * BT_MAX_STACK, "bt_rec_sample size");
_Static_assert(sizeof(struct bt_rec_exec) == 16 + 8 + BT_COMM_LEN + BT_PATH_MAX, "bt_rec_exec size");
_Static_assert(sizeof(struct bt_rec_fork) == 16 + 8 + BT_COMM_LEN, "bt_rec_fork size");
_Static_assert(sizeof(struct bt_rec_exit) == 24, "bt_rec_exit size");
_Static_assert(sizeof(struct bt_rec_munmap) == 40, "bt_rec_munmap size");
_Static_assert(sizeof(struct bt_rec_mapping) == 16 + 8 + 48 + 8 + 20 + 4 + BT_PATH_MAX, "bt_rec_mapping size");
_Static_assert(sizeof(struct bt_rec_module) == 16 + 16 + 8 + 20 + 4 + BT_MODNAME_LEN, "bt_rec_module size");
_Static_assert(sizeof(struct bt_rec_ksym) == 16 + 16 + BT_KSYM_NAME_LEN, "bt_rec_ksym size");

/* CPython's frames of a sampled thread, read by the sampler from the interpreter's own frame chain
 * (bpf/bt_python.h) just before the BT_REC_SAMPLE record of the same tid and time, for a process
 * whose interpreter userspace found (the py_procs map). Only the n frames read are in the record. */
#define BT_PY_MAX_FRAMES 256

enum bt_py_walk {
	BT_PY_WALK_DONE = 0,       /* every frame, to the outermost */
	BT_PY_WALK_TRUNCATED = 1,  /* more than BT_PY_MAX_FRAMES frames: the outer ones are left out */
	BT_PY_WALK_FAULT = 2,      /* a read failed (a page not resident): the walk ends there */
	BT_PY_WALK_NO_THREAD = 3,  /* the thread has no thread state (it never ran Python) */
	BT_PY_WALK_IDLE = 4,       /* a thread state without a current frame */
	BT_PY_WALK_MAX = 5,
};

struct bt_py_frame {
	__u64 code;       /* the frame's code object (f_code, f_executable) */
	__u64 tag;        /* 8 bytes of the code object (at co_firstlineno): its address is reused */
	__s32 instr;      /* f_lasti as the frame holds it (3.8-3.10); from 3.11 on, the byte offset of
			   * the frame's instruction pointer into co_code_adaptive */
	__u8 is_entry;    /* the first frame a C call of the eval loop runs */
	__u8 pad[3];
};

struct bt_rec_pystack {
	struct bt_rec_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u16 n;          /* frames, innermost first */
	__u16 walk;       /* enum bt_py_walk */
	__u32 pad;
	struct bt_py_frame frames[BT_PY_MAX_FRAMES];
};

/* A CPython process whose frames the sampler walks (the value of the py_procs map, keyed by thread
 * group id, written by the loader): where its runtime keeps its list of interpreters, and the
 * offsets of the fields the walk reads (symsrc/pyoffsets.h), the frame's within frame_bytes, at most
 * BT_PY_FRAME_BYTES. */
#define BT_PY_FRAME_BYTES 128  /* bytes of a frame read at once, at most */

#define BT_PY_F_PTHREAD_TID 0x1  /* ts_tid is thread_id, pthread_self(): the thread pointer (fsbase) */
#define BT_PY_F_CFRAME 0x2       /* ts_frame is a _PyCFrame: its current frame at cframe_current */
#define BT_PY_F_INSTR_PTR 0x4    /* frame_instr is a pointer into the code at code_adaptive */

enum bt_py_entry {
	BT_PY_ENTRY_EVERY = 0,   /* every frame is run by a C call of its own (frame objects) */
	BT_PY_ENTRY_FLAG = 1,    /* a byte at frame_entry is non-zero in the first frame of a C call */
	BT_PY_ENTRY_OWNER = 2,   /* a frame whose byte at frame_entry is entry_owner is no Python
				  * frame: each C call pushes one, outer to its first frame */
};

struct bt_py_proc {
	__u64 interp_head;         /* the address of _PyRuntime.interpreters.head */
	__u16 interp_next;
	__u16 interp_threads_head;
	__u16 ts_next;
	__u16 ts_tid;
	__u16 ts_frame;
	__u16 cframe_current;
	__u16 frame_code;
	__u16 frame_previous;
	__u16 frame_instr;
	__u16 frame_entry;
	__u16 frame_bytes;         /* read at once: every field above within it */
	__u16 code_tag;            /* the 8 bytes of a code object sent with each frame */
	__u16 code_adaptive;       /* with BT_PY_F_INSTR_PTR: where the instructions start */
	__u8 flags;                /* BT_PY_F_* */
	__u8 entry;                /* enum bt_py_entry */
	__u8 entry_owner;
	__u8 pad[3];
};

_Static_assert(sizeof(struct bt_py_proc) == 40, "bt_py_proc size");
_Static_assert(sizeof(struct bt_py_frame) == 24, "bt_py_frame size");
_Static_assert(sizeof(struct bt_rec_pystack) == 32 + 24 * BT_PY_MAX_FRAMES, "bt_rec_pystack size");

/* Configuration the loader writes into the BPF object's read-only data before load. */
#define BT_CFG_ALL 0x1          /* sample every process, not only the watched ones */
#define BT_CFG_USER 0x2         /* collect user stacks */
#define BT_CFG_KERNEL 0x4       /* collect kernel stacks */
#define BT_CFG_FOLLOW_FORK 0x8  /* children of watched processes are watched too */
#define BT_CFG_DWARF 0x10       /* copy user registers and stack for unwinding in userspace */
#define BT_CFG_IDLE 0x20        /* sample the idle tasks too (pid 0, comm swapper/N), with BT_CFG_ALL */
#define BT_CFG_PYTHON 0x100     /* walk the Python frames of the processes in py_procs */
#define BT_CFG_SKIP 0x200       /* no samples of the processes in skipped (see struct bt_skip) */
#define BT_CFG_OFFCPU 0x400     /* off-CPU time of the watched threads (bt_offcpu.h) */

/* Index of the per-CPU counters map (bt_counters) besides the per-type drop counts. */
enum bt_counter {
	BT_CNT_DROP_BASE = 0,              /* + enum bt_rec_type: ring buffer reservation failed */
	BT_CNT_SAMPLES = BT_REC_TYPE_MAX,  /* samples taken for watched processes */
	BT_CNT_BID_FAULT,                  /* build-id reads that failed in the iterator */
	BT_CNT_SKIPPED,                    /* samples not taken: their process is in skipped */
	BT_CNT_OFFCPU_BLOCKS,              /* off-CPU: times a watched thread left a CPU */
	BT_CNT_OFFCPU_UNWALKED,            /* of those, stacks not taken: over the rate bound */
	BT_CNT_OFFCPU_NO_THREAD,           /* threads not tracked: the thread table was full */
	BT_CNT_OFFCPU_LOST,                /* time sums lost: the sum table was full ... */
	BT_CNT_OFFCPU_LOST_NS,             /* ... and the nanoseconds they held */
	BT_CNT_OFFCPU_STACKS,              /* stack keys whose frames were written */
	BT_CNT_MAX,
};


/* A process userspace takes no samples of (the agent's rules drop it): the sampler skips it while
 * it runs in this cgroup and has not exec'd since the sample that decided it (at since_ns, the
 * clock of bpf_ktime_get_ns; exec_at holds each process's last exec). */
struct bt_skip {
	__u64 cgroup_id;
	__u64 since_ns;
};
_Static_assert(sizeof(struct bt_skip) == 16, "bt_skip size");

/* ---- user stacks walked in BPF from compiled unwind tables (--call-graph dwarf-bpf) -------- */

/* Set with BT_CFG_USER: the sampler walks user stacks itself with the tables below instead of
 * the kernel's frame-pointer walk; the sample's ips are the same pcs, symbolized alike. */
#define BT_CFG_UNWIND 0x40

/* How one row finds the caller's frame (bt_unw_row.cfa). The return address is always at
 * CFA - 8 (a row whose CFI says otherwise is BT_UNW_BAD). */
enum bt_unw_cfa {
	BT_UNW_NONE = 0,       /* no CFI covers these pcs: frame pointers */
	BT_UNW_CFA_RSP = 1,    /* CFA = rsp + cfa_off */
	BT_UNW_CFA_RBP = 2,    /* CFA = rbp + cfa_off */
	BT_UNW_CFA_PLT = 3,    /* a PLT entry: CFA = rsp + cfa_off, + 8 when (rip & 15) >= rbp_off */
	BT_UNW_CFA_DEREF = 4,  /* a realigned frame: CFA = *(rbp + cfa_off) */
	BT_UNW_END = 5,        /* the return address is undefined: the outermost frame */
	BT_UNW_BAD = 6,        /* a rule the walker does not evaluate: frame pointers */
	BT_UNW_CFA_RBX = 7,    /* CFA = rbx + cfa_off (a frame that realigns its stack) */
	BT_UNW_SIGNAL = 8,     /* a signal trampoline: the interrupted rsp at rsp + cfa_off, its pc
				* 8 bytes above, rbp at rsp + rbp_off, rbx at rsp + rbx_off */
};

/* Where the caller's rbp (and rbx) is (bt_unw_row.rbp, .rbx). */
enum bt_unw_rbp {
	BT_UNW_RBP_SAME = 0,   /* unchanged */
	BT_UNW_RBP_CFA = 1,    /* saved at CFA + rbp_off (rbx_off) */
	BT_UNW_RBP_LOST = 2,   /* not recoverable: the caller's value is unknown (0) */
};

/* How the caller's frame is found over a range of pcs (struct bt_unw_row.rule): rules are few (a
 * few thousand distinct ones over all the libraries of a machine), rows many, so rows name them. */
struct bt_unw_rule {
	__s32 cfa_off;
	__s16 rbp_off;
	__s16 rbx_off;
	__u8 cfa;   /* enum bt_unw_cfa */
	__u8 rbp;   /* enum bt_unw_rbp */
	__u8 rbx;   /* enum bt_unw_rbp */
	__u8 pad;
};
_Static_assert(sizeof(struct bt_unw_rule) == 12, "bt_unw_rule size");

/* One row of a compiled table: rule holds from pc up to the next row's pc. pc is relative to the
 * table's base address (the lowest address its CFI covers, as the file's symbols express it). In a
 * compiled table rule indexes the table's own rules; in unw_rows, the shared unw_rules. */
struct bt_unw_row {
	__u32 pc;
	__u32 rule;
};
_Static_assert(sizeof(struct bt_unw_row) == 8, "bt_unw_row size");

/* Rules of every loaded table, one array shared by all (BPF map unw_rules); rule 0 is BT_UNW_NONE. */
#define BT_UNW_RULES_MAX (1u << 14)

/* Rows of every loaded table, one array shared by all (BPF map unw_rows); a table is a range of it.
 * The most it may hold; the loader sizes it: BT_UNW_ROWS_PIDS for given processes (16 MiB: libc
 * takes 28,000 rows, libLLVM 950,000), BT_UNW_ROWS_ALL for the whole machine (32 MiB: a build with
 * clang loads libLLVM, libclang-cpp and cc1, 2.4 million rows). */
#define BT_UNW_ROWS_MAX (1u << 22)
#define BT_UNW_ROWS_PIDS (1u << 21)
#define BT_UNW_ROWS_ALL (1u << 22)
/* Executable mappings per process the walker knows (BPF map unw_procs); more are walked by frame
 * pointers. */
#define BT_UNW_MAPS_MAX 128
/* The binary-search steps of one lookup (2^23 > BT_UNW_ROWS_MAX). */
#define BT_UNW_SEARCH_STEPS 23

/* One executable mapping of a process: pcs in [start, end) are looked up as pc - adj (relative to
 * the table's base) in rows [row_lo, row_hi); row_hi == row_lo: no table loaded yet, or with
 * row_lo BT_UNW_NO_CFI none to be had (no CFI, no build-id, unreadable): frame pointers. */
#define BT_UNW_NO_CFI 0xffffffffu
struct bt_unw_map {
	__u64 start, end;
	__u64 adj;
	__u32 row_lo, row_hi;
};

/* A process's executable mappings, sorted by start, not overlapping (key: its tgid). */
struct bt_unw_proc {
	__u32 n;
	__u32 pad;
	struct bt_unw_map maps[BT_UNW_MAPS_MAX];
};
_Static_assert(sizeof(struct bt_unw_map) == 32, "bt_unw_map size");

/* With BT_CFG_UNWIND, a sample's user_err is not an errno but these bits (>= 0) saying how the
 * walk went; frames are in ips as always. */
#define BT_UWALK_DONE       0x01  /* reached the outermost frame (its CFI says it has no caller, or
                                   * it has none and its rbp is 0) */
#define BT_UWALK_FP         0x02  /* some frame was walked by frame pointer */
#define BT_UWALK_NO_TABLE   0x04  /* some pc lay in a mapping whose table is not loaded yet */
#define BT_UWALK_NO_MAP     0x08  /* some pc lay in no known executable mapping */
#define BT_UWALK_READ       0x10  /* the walk ended on a stack read that failed */
#define BT_UWALK_MAX        0x20  /* the walk ended at BT_MAX_STACK frames */
#define BT_UWALK_NO_PROC    0x40  /* the process had no entry in unw_procs at all */
#define BT_UWALK_CONT       0x80  /* the walk stopped at a pc whose table (or whose process's or
				   * mapping's entry) was not loaded yet: a BT_REC_UCONT before the
				   * sample carries what userspace needs to walk on from there */
#define BT_UWALK_USER       0x100 /* (set by userspace) the walk was finished there */

/* The rest of a user stack the sampler could not walk (BT_UWALK_CONT), written just before the
 * BT_REC_SAMPLE of the same tid and time: the registers the walk has at its last frame (that
 * sample's last user frame, pc), and the stack from sp upwards, len bytes of it (data follows, the
 * record's size tells how many bytes it has room for). */
#define BT_UCONT_BYTES 32768
struct bt_rec_ucont {
	struct bt_rec_hdr hdr;
	__u32 pid;
	__u32 tid;
	__u64 pc, sp, bp, bx;
	__u32 exact;   /* pc is where the thread was (the first frame, or one a signal interrupted) */
	__u32 len;
	__u8 data[];
};
_Static_assert(sizeof(struct bt_rec_ucont) == 16 + 8 + 32 + 8, "bt_rec_ucont size");


/* ---- off-CPU time (--off-cpu, --wall) ------------------------------------------------------ */

/* Why a watched thread was off a CPU: it slept (TASK_INTERRUPTIBLE, and stopped, traced or idle
 * kernel threads), it waited uninterruptibly (TASK_UNINTERRUPTIBLE: disk and other IO), or it was
 * runnable but not running (preempted, or woken and waiting for a CPU). */
enum bt_offcpu_state {
	BT_OFFCPU_SLEEP = 0,
	BT_OFFCPU_UNINT = 1,
	BT_OFFCPU_RUNQ = 2,
	BT_OFFCPU_NSTATES = 3,
};
#define BT_OFFCPU_ALL_STATES 0x7   /* 1 << each state */

/* Stack keys that name no frames: time a thread was off a CPU since before the session began (its
 * stack was not seen), or when its stack was not taken (over the rate bound). Stack keys proper are
 * hashes from BT_OFFCPU_KEY_FIRST on. */
#define BT_OFFCPU_KEY_EARLY 1
#define BT_OFFCPU_KEY_UNWALKED 2
#define BT_OFFCPU_KEY_FIRST 16

/* The frames of an off-CPU stack key, written the first time the key is met (and again when the
 * kernel's set of known keys forgot it): s is a sample record in all but its type (and is preceded,
 * like a sample, by the Python frames of the same thread and time). hdr.pad holds flags:
 * BT_OFFCPU_STACK_EARLY, the kernel frames only of a thread off a CPU since before counting began. */
#define BT_OFFCPU_STACK_EARLY 0x1
struct bt_rec_offcpu_stack {
	struct bt_rec_hdr hdr;
	__u64 key;
	struct bt_rec_sample s;
};

/* Off-CPU time of thread tid of process pid in the stack of key, in state, since the last such
 * record for the same (key, tid, state): ns nanoseconds over blocks times it left a CPU (0 when the
 * time is the part up to a cut of a block still going on). */
struct bt_rec_offcpu {
	struct bt_rec_hdr hdr;
	__u64 key;
	__u32 pid;
	__u32 tid;
	__u64 ns;
	__u32 blocks;
	__u8 state;       /* enum bt_offcpu_state */
	__u8 pad[3];
};

_Static_assert(sizeof(struct bt_rec_offcpu_stack) == 24 + sizeof(struct bt_rec_sample), "bt_rec_offcpu_stack size");
_Static_assert(sizeof(struct bt_rec_offcpu) == 16 + 8 + 8 + 8 + 8, "bt_rec_offcpu size");

#endif
