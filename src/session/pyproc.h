/* pyproc.h - CPython in the session's processes: which processes run an interpreter (found from the
 * symbols of the python3.X or libpython3.X.so file they map, read once per build-id), what the
 * sampler needs to walk their frames, and the code objects those frames name, read from the process
 * once per address and tag (a code object freed and another made at its address differ in tag). */
#ifndef BT_PYPROC_H
#define BT_PYPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bt_proto.h"
#include "base/htab.h"
#include "base/membudget.h"
#include "base/strtab.h"
#include "session/dso.h"
#include "session/proctable.h"
#include "symsrc/pyoffsets.h"
#include "symsrc/pyruntime.h"

/* A code object as read from its process. */
struct bt_pycode {
	uint32_t proc;                /* the process incarnation it was read from */
	uint64_t addr, tag;
	bool ok;                      /* read; else it names nothing */
	int firstlineno;
	uint32_t name_id, qualname_id, file_id;   /* in the table's strings */
	uint8_t *linetable;
	size_t linelen;
};

/* One process incarnation running an interpreter (until its exec or exit). */
struct bt_pyproc {
	int pid;
	bool gone;
	uint32_t layout;              /* its offsets: the table's layouts[layout] (its version's, or as
				       * the interpreter describes itself) */
	uint32_t file_id;             /* the interpreter's file (in the dso registry) */
	uint64_t eval_lo, eval_hi;    /* _PyEval_EvalFrameDefault in it, as file offsets */
	struct bt_py_proc bpf;        /* what the sampler is given */
};

/* What the interpreter file of one build-id is: state 0 untried, 1 an interpreter with an offsets
 * table, -errno not (-ENOENT: no interpreter; -ENOTSUP: one this cannot read, rt says which). */
struct bt_pyfile {
	int state;
	struct bt_pyruntime rt;
};

/* A change for the sampler: process pid's frames are walked as bpf says (add), or no more. */
struct bt_py_update {
	int pid;
	bool add;
	struct bt_py_proc bpf;
};

#define BT_PY_UNSUPPORTED_KEPT 8

struct bt_pyprocs_stats {
	uint64_t procs;               /* interpreters found */
	uint64_t unsupported;         /* interpreter files of a version this cannot read */
	/* their versions, the first few distinct ones (major << 8 | minor; 0: unknown) */
	uint16_t unsupported_versions[BT_PY_UNSUPPORTED_KEPT];
	size_t nunsupported_versions;
	uint64_t stacks;              /* Python stacks received */
	uint64_t walks[BT_PY_WALK_MAX];  /* by how each walk ended */
	uint64_t frames;              /* Python frames placed in stacks */
	uint64_t rooted;              /* of those, placed outer to a native stack cut short */
	uint64_t truncated;           /* stacks given a [truncated] mark where they were cut */
	uint64_t code_reads, code_failed;  /* code objects read, and those that could not be */
	uint64_t code_refused;        /* of those, not read: past the session's bounds */
};

struct bt_pyprocs {
	const char *proc_root;
	struct bt_pyfile *files;      /* by dso id */
	size_t nfiles;
	struct bt_py_offsets *layouts; /* the distinct offsets of the interpreters found, a few */
	size_t nlayouts, layouts_cap;
	struct bt_pyproc *procs;      /* ids never reused: code objects name them */
	size_t nprocs, procs_cap;
	struct bt_htab proc_index;    /* pid -> its live incarnation */
	struct bt_pycode *codes;
	size_t ncodes, codes_cap;
	struct bt_htab code_index;
	struct bt_strtab strs;
	struct bt_py_update *updates;
	size_t nupdates, updates_cap;
	uint64_t kept_bytes;          /* of names and location tables read */
	struct bt_membudget *budget;  /* what code objects, with perf maps, may hold in all; NULL: none */
	struct bt_pyprocs_stats stats;
};

void bt_pyprocs_init(struct bt_pyprocs *py, const char *proc_root);
void bt_pyprocs_free(struct bt_pyprocs *py);

/* Process pid mapped m of the file at path: when the file is an interpreter (looked at when its name
 * says python and its build-id is known), the process is one from now on. 0 or -ENOMEM. */
int bt_pyprocs_mapping(struct bt_pyprocs *py, struct bt_dso_registry *dsos, int pid,
		       const struct bt_mapping *m, const char *path);
/* Makes pid an interpreter of rt whose file's executable segment is mapped as m: its id, -ENOTSUP
 * (no offsets for its version) or -ENOMEM. */
int64_t bt_pyprocs_adopt(struct bt_pyprocs *py, int pid, const struct bt_pyruntime *rt,
			 const struct bt_mapping *m);
/* pid forked child: a copy of an interpreter is one too. 0 or -ENOMEM. */
int bt_pyprocs_fork(struct bt_pyprocs *py, int parent, int child);
/* pid exec'ed or exited: its interpreter is gone. */
void bt_pyprocs_gone(struct bt_pyprocs *py, int pid);

/* The offsets interpreter proc (an id) is read with. */
static inline const struct bt_py_offsets *bt_pyprocs_offsets(const struct bt_pyprocs *py, uint32_t proc)
{
	return &py->layouts[py->procs[proc].layout];
}

/* The live interpreter of pid: its id, or -ENOENT. */
int64_t bt_pyprocs_find(const struct bt_pyprocs *py, int pid);

/* The code object at addr with tag in process incarnation proc: its id, read now when new (an
 * entry that could not be read is kept, not ok). -ENOSPC once a session has read 2^20 of them or
 * kept 256 MiB of their names and location tables (counted as unreadable), -ENOMEM. */
int64_t bt_pyprocs_code(struct bt_pyprocs *py, uint32_t proc, uint64_t addr, uint64_t tag);
/* The source line of the code unit at byte offset off of code id (0: unknown). */
unsigned bt_pyprocs_line(const struct bt_pyprocs *py, uint32_t id, int64_t off);
/* The byte offset into its code of the instruction frame f of process incarnation proc names,
 * negative before the first. */
int64_t bt_pyprocs_instr(const struct bt_pyprocs *py, uint32_t proc, const struct bt_py_frame *f);

static inline const char *bt_pyprocs_str(const struct bt_pyprocs *py, uint32_t id)
{
	return bt_strtab_get(&py->strs, id);
}

/* Moves up to max pending changes for the sampler into out; how many. */
size_t bt_pyprocs_take(struct bt_pyprocs *py, struct bt_py_update *out, size_t max);

#endif
