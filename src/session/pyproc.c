/* pyproc.c - interpreters found by their files' symbols, and code objects read with
 * process_vm_readv (the frames name them by address; their names, file and line table are read
 * once). */
#include "session/pyproc.h"
#include "base/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "capture/procmaps.h"
#include "symsrc/pycode.h"

#define LINETABLE_MAX (1u << 20)  /* a location table larger than this is not read */
#define NAME_MAX_BYTES 1024
#define CODES_MAX (1u << 20)      /* code objects read in a session, at most */
/* Bytes of names and location tables kept, at most: the processes choose them. */
#define KEPT_MAX (256ULL << 20)

void bt_pyprocs_init(struct bt_pyprocs *py, const char *proc_root)
{
	memset(py, 0, sizeof(*py));
	py->proc_root = proc_root ? proc_root : "";
	bt_htab_init(&py->proc_index);
	bt_htab_init(&py->code_index);
	bt_strtab_init(&py->strs);
}

void bt_pyprocs_free(struct bt_pyprocs *py)
{
	for (size_t i = 0; i < py->ncodes; i++)
		free(py->codes[i].linetable);
	free(py->codes);
	free(py->procs);
	free(py->layouts);
	free(py->files);
	free(py->updates);
	bt_htab_free(&py->proc_index);
	bt_htab_free(&py->code_index);
	bt_strtab_free(&py->strs);
	memset(py, 0, sizeof(*py));
}

static bool proc_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_pyprocs *py = ctx;
	return py->procs[val].pid == *(const int *)key;
}

int64_t bt_pyprocs_find(const struct bt_pyprocs *py, int pid)
{
	uint64_t *v = bt_htab_find(&py->proc_index, bt_hash_u64((uint64_t)pid), proc_eq, (void *)py, &pid);
	return v ? (int64_t)*v : -ENOENT;
}

static int queue(struct bt_pyprocs *py, int pid, const struct bt_py_proc *bpf)
{
	if (bt_grow((void **)&py->updates, &py->updates_cap, py->nupdates + 1, sizeof(*py->updates), 16))
		return -ENOMEM;
	struct bt_py_update *u = &py->updates[py->nupdates++];
	memset(u, 0, sizeof(*u));
	u->pid = pid;
	u->add = bpf != NULL;
	if (bpf)
		u->bpf = *bpf;
	return 0;
}

size_t bt_pyprocs_take(struct bt_pyprocs *py, struct bt_py_update *out, size_t max)
{
	size_t n = py->nupdates < max ? py->nupdates : max;
	memcpy(out, py->updates, n * sizeof(*out));
	memmove(py->updates, py->updates + n, (py->nupdates - n) * sizeof(*out));
	py->nupdates -= n;
	return n;
}

/* A new live incarnation of pid, a copy of e. Its id or -ENOMEM. */
static int64_t add_proc(struct bt_pyprocs *py, const struct bt_pyproc *e)
{
	if (bt_grow((void **)&py->procs, &py->procs_cap, py->nprocs + 1, sizeof(*py->procs), 16))
		return -ENOMEM;
	py->procs[py->nprocs] = *e;
	py->procs[py->nprocs].gone = false;
	if (bt_htab_insert(&py->proc_index, bt_hash_u64((uint64_t)e->pid), py->nprocs) ||
	    queue(py, e->pid, &e->bpf))
		return -ENOMEM;
	py->stats.procs++;
	return (int64_t)py->nprocs++;
}

/* What the sampler is told of an interpreter of layout o whose _PyRuntime is at runtime. */
static struct bt_py_proc bpf_view(const struct bt_py_offsets *o, uint64_t runtime)
{
	struct bt_py_proc b = {
		.interp_head = runtime + o->runtime_interp_head,
		.interp_next = o->interp_next, .interp_threads_head = o->interp_threads_head,
		.ts_next = o->ts_next, .ts_tid = o->ts_tid, .ts_frame = o->ts_frame,
		.cframe_current = o->cframe_current == BT_PY_NO_FIELD ? 0 : o->cframe_current,
		.frame_code = o->frame_code, .frame_previous = o->frame_previous, .frame_instr = o->frame_instr,
		.frame_entry = o->frame_entry == BT_PY_NO_FIELD ? 0 : o->frame_entry,
		.code_tag = o->code_firstlineno,
		.code_adaptive = o->code_adaptive == BT_PY_NO_FIELD ? 0 : o->code_adaptive,
		.entry_owner = BT_PY_OWNED_BY_CSTACK,
	};
	if (o->tid == BT_PY_TID_PTHREAD)
		b.flags |= BT_PY_F_PTHREAD_TID;
	if (o->cframe_current != BT_PY_NO_FIELD)
		b.flags |= BT_PY_F_CFRAME;
	if (o->instr == BT_PY_INSTR_POINTER)
		b.flags |= BT_PY_F_INSTR_PTR;
	b.entry = o->chain == BT_PY_CHAIN_OBJECTS ? BT_PY_ENTRY_EVERY
		  : o->chain == BT_PY_CHAIN_FLAG ? BT_PY_ENTRY_FLAG : BT_PY_ENTRY_OWNER;
	/* the bytes of a frame holding every field read: 8 of each pointer, 1 of the entry's */
	unsigned end = 0;
	const unsigned ends[] = { o->frame_code + 8u, o->frame_previous + 8u, o->frame_instr + 8u,
				  b.entry == BT_PY_ENTRY_EVERY ? 0 : o->frame_entry + 1u };
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		end = ends[i] > end ? ends[i] : end;
	b.frame_bytes = (uint16_t)end;
	return b;
}

/* The sampler reads frames BT_PY_FRAME_BYTES at most, and code objects by their tag. */
static bool bpf_fits(const struct bt_py_proc *b)
{
	return b->frame_bytes <= BT_PY_FRAME_BYTES && b->frame_code <= BT_PY_FRAME_BYTES - 8 &&
	       b->frame_previous <= BT_PY_FRAME_BYTES - 8 && b->frame_instr <= BT_PY_FRAME_BYTES - 8 &&
	       b->frame_entry <= BT_PY_FRAME_BYTES - 1;
}

static void note_unsupported(struct bt_pyprocs *py, const struct bt_pyruntime *rt)
{
	struct bt_pyprocs_stats *st = &py->stats;
	uint16_t v = (uint16_t)((rt->major & 0xff) << 8 | (rt->minor & 0xff));
	st->unsupported++;
	for (size_t i = 0; i < st->nunsupported_versions; i++)
		if (st->unsupported_versions[i] == v)
			return;
	if (st->nunsupported_versions < BT_PY_UNSUPPORTED_KEPT)
		st->unsupported_versions[st->nunsupported_versions++] = v;
}

/* What the file of dso_id is, looked at through pid's mapping m when not known yet. */
static const struct bt_pyfile *file_info(struct bt_pyprocs *py, struct bt_dso_registry *dsos, uint32_t dso_id,
					 int pid, const struct bt_mapping *m, const char *name)
{
	if (dso_id >= py->nfiles) {
		size_t n = py->nfiles ? py->nfiles : 16;
		while (n <= dso_id)
			n *= 2;
		struct bt_pyfile *nf = realloc(py->files, n * sizeof(*nf));
		if (!nf)
			return NULL;
		memset(nf + py->nfiles, 0, (n - py->nfiles) * sizeof(*nf));
		py->files = nf;
		py->nfiles = n;
	}
	struct bt_pyfile *pf = &py->files[dso_id];
	if (pf->state)
		return pf;
	const struct bt_dso *d = bt_dso_get(dsos, dso_id);
	int fd = bt_procmaps_open_mapped(py->proc_root, pid, m->start, m->end);
	if (fd < 0) {
		pf->state = fd == -ENOENT || fd == -ESRCH ? 0 : fd;  /* a mapping gone: another may do */
		return pf;
	}
	struct bt_build_id got;
	if (d && d->build_id.len && (bt_buildid_from_fd(fd, &got) != 0 || !bt_buildid_eq(&got, &d->build_id))) {
		close(fd);
		return pf;  /* not the version the kernel saw: ask again through a later mapping */
	}
	int err = bt_pyruntime_read(fd, name, &pf->rt);
	close(fd);
	struct bt_py_proc view;
	if (!err && (view = bpf_view(bt_pyruntime_offsets(&pf->rt), 0), !bpf_fits(&view)))
		err = -ENOTSUP;  /* a layout the sampler's reads do not reach */
	if (err == -ENOTSUP)
		note_unsupported(py, &pf->rt);
	pf->state = err ? err : 1;
	return pf;
}

/* The index of layout o in the table, added when new: a process keeps an index, not a copy. */
static int64_t layout_id(struct bt_pyprocs *py, const struct bt_py_offsets *o)
{
	for (size_t i = 0; i < py->nlayouts; i++)
		if (!memcmp(&py->layouts[i], o, sizeof(*o)))
			return (int64_t)i;
	if (bt_grow((void **)&py->layouts, &py->layouts_cap, py->nlayouts + 1, sizeof(*py->layouts), 4))
		return -ENOMEM;
	py->layouts[py->nlayouts] = *o;
	return (int64_t)py->nlayouts++;
}

int64_t bt_pyprocs_adopt(struct bt_pyprocs *py, int pid, const struct bt_pyruntime *rt, const struct bt_mapping *m)
{
	const struct bt_py_offsets *o = bt_pyruntime_offsets(rt);
	if (!o)
		return -ENOTSUP;
	int64_t layout = layout_id(py, o);
	if (layout < 0)
		return layout;
	struct bt_pyproc e = {
		.pid = pid, .layout = (uint32_t)layout, .file_id = m->file_id, .eval_lo = rt->eval_offset,
		.eval_hi = rt->eval_offset + rt->eval_size,
		.bpf = bpf_view(o, bt_pyruntime_addr(rt, m->start, m->pgoff)),
	};
	if (!bpf_fits(&e.bpf))
		return -ENOTSUP;
	return add_proc(py, &e);
}

static const char *base_name(const char *path)
{
	const char *base = strrchr(path, '/');
	return base ? base + 1 : path;
}

int bt_pyprocs_mapping(struct bt_pyprocs *py, struct bt_dso_registry *dsos, int pid,
		       const struct bt_mapping *m, const char *path)
{
	if (!path || !strstr(base_name(path), "python") || bt_pyprocs_find(py, pid) >= 0)
		return 0;
	struct bt_file *f = bt_dso_file_get(dsos, m->file_id);
	if (!f || f->dso_id == BT_NO_ID)
		return 0;  /* its build-id comes with a later record */
	const struct bt_pyfile *pf = file_info(py, dsos, f->dso_id, pid, m, base_name(path));
	if (!pf)
		return -ENOMEM;
	if (pf->state != 1)
		return 0;
	int64_t r = bt_pyprocs_adopt(py, pid, &pf->rt, m);
	return r == -ENOMEM ? -ENOMEM : 0;
}

int bt_pyprocs_fork(struct bt_pyprocs *py, int parent, int child)
{
	int64_t p = bt_pyprocs_find(py, parent);
	if (p < 0 || bt_pyprocs_find(py, child) >= 0)
		return 0;
	struct bt_pyproc e = py->procs[p];
	e.pid = child;
	int64_t r = add_proc(py, &e);
	return r < 0 ? (int)r : 0;
}

void bt_pyprocs_gone(struct bt_pyprocs *py, int pid)
{
	int64_t p = bt_pyprocs_find(py, pid);
	if (p < 0)
		return;
	py->procs[p].gone = true;
	bt_htab_remove(&py->proc_index, bt_hash_u64((uint64_t)pid), proc_eq, py, &pid);
	queue(py, pid, NULL);  /* without memory the entry stays: the pid's next program is not walked
				* unless it is an interpreter, whose entry replaces it */
}

/* ---- code objects ------------------------------------------------------------------------- */

static int read_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* The string object at addr as UTF-8, interned: its id, or -errno. */
static int64_t read_str(struct bt_pyprocs *py, int pid, const struct bt_py_offsets *o, uint64_t addr)
{
	uint8_t hdr[128], data[4 * 1024];
	char utf8[NAME_MAX_BYTES];
	uint64_t off;
	size_t n;
	unsigned kind;
	if (!addr || o->compact_data > sizeof(hdr))
		return -EINVAL;
	/* a short ASCII string ends before a compact string's header would */
	int err = read_mem(pid, addr, hdr, o->compact_data);
	if (err && read_mem(pid, addr, hdr, o->ascii_data) == 0) {
		memset(hdr + o->ascii_data, 0, o->compact_data - o->ascii_data);
		err = 0;
	}
	if (err || (err = bt_pystr_layout(hdr, o->compact_data, o, &off, &n, &kind)))
		return err;
	if (n * kind > sizeof(data))
		n = sizeof(data) / kind;
	if (n && (err = read_mem(pid, addr + off, data, n * kind)))
		return err;
	size_t len = bt_pystr_utf8(data, n, kind, utf8, sizeof(utf8));
	py->kept_bytes += len;
	return bt_strtab_intern(&py->strs, utf8, len);
}

/* Fills c from its process: names, file, first line and location table. 0 or -errno. */
static int read_code(struct bt_pyprocs *py, const struct bt_pyproc *p, struct bt_pycode *c)
{
	const struct bt_py_offsets *o = &py->layouts[p->layout];
	uint8_t obj[256];
	unsigned want = bt_pyoffsets_code_bytes(o);
	if (want > sizeof(obj))
		return -EINVAL;
	int err = read_mem(p->pid, c->addr, obj, want);
	if (err)
		return err;
	/* the bytes the sampler saw are still there: the same code object */
	if (u64_at(obj + o->code_firstlineno) != c->tag)
		return -ESTALE;
	int32_t first;
	memcpy(&first, obj + o->code_firstlineno, sizeof(first));
	c->firstlineno = first;
	int64_t name = read_str(py, p->pid, o, u64_at(obj + o->code_name));
	/* before 3.11 a code object has no qualified name: its name stands in */
	int64_t qual = o->code_qualname == BT_PY_NO_FIELD ? -ENOENT
		       : read_str(py, p->pid, o, u64_at(obj + o->code_qualname));
	int64_t file = read_str(py, p->pid, o, u64_at(obj + o->code_filename));
	if (name == -ENOMEM || qual == -ENOMEM || file == -ENOMEM)
		return -ENOMEM;
	if (name < 0 || file < 0)
		return name < 0 ? (int)name : (int)file;
	c->name_id = (uint32_t)name;
	c->qualname_id = qual >= 0 ? (uint32_t)qual : (uint32_t)name;
	c->file_id = (uint32_t)file;
	uint64_t lt = u64_at(obj + o->code_linetable);
	uint8_t bh[64];
	if (!lt || o->bytes_data > sizeof(bh) || o->var_size + 8u > o->bytes_data ||
	    read_mem(p->pid, lt, bh, o->bytes_data))
		return 0;  /* names without lines */
	uint64_t size = u64_at(bh + o->var_size);
	if (!size || size > LINETABLE_MAX)
		return 0;
	c->linetable = malloc(size);
	if (!c->linetable)
		return -ENOMEM;
	py->kept_bytes += size;
	if (read_mem(p->pid, lt + o->bytes_data, c->linetable, size)) {
		free(c->linetable);
		c->linetable = NULL;
		return 0;
	}
	c->linelen = size;
	return 0;
}

static bool code_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_pyprocs *py = ctx;
	const struct bt_pycode *a = &py->codes[val], *b = key;
	return a->addr == b->addr && a->tag == b->tag && a->proc == b->proc;
}

int64_t bt_pyprocs_code(struct bt_pyprocs *py, uint32_t proc, uint64_t addr, uint64_t tag)
{
	struct bt_pycode key = { .proc = proc, .addr = addr, .tag = tag };
	uint32_t h = bt_hash_u64(addr ^ tag * 0x9e3779b97f4a7c15ULL ^ (uint64_t)proc << 48);
	uint64_t *v = bt_htab_find(&py->code_index, h, code_eq, py, &key);
	if (v)
		return (int64_t)*v;
	if (proc >= py->nprocs)
		return -EINVAL;
	/* within the session's bounds, and what every process together may make it hold */
	if (py->ncodes >= CODES_MAX || py->kept_bytes >= KEPT_MAX ||
	    !bt_membudget_take(py->budget, sizeof(struct bt_pycode))) {
		py->stats.code_failed++;
		py->stats.code_refused++;
		return -ENOSPC;
	}
	if (bt_grow((void **)&py->codes, &py->codes_cap, py->ncodes + 1, sizeof(*py->codes), 16))
		return -ENOMEM;
	struct bt_pycode *c = &py->codes[py->ncodes];
	*c = key;
	uint64_t kept = py->kept_bytes;
	int err = read_code(py, &py->procs[proc], c);
	bt_membudget_charge(py->budget, py->kept_bytes - kept);
	if (err == -ENOMEM)
		return -ENOMEM;
	c->ok = err == 0;
	py->stats.code_reads++;
	py->stats.code_failed += !c->ok;
	if (bt_htab_insert(&py->code_index, h, py->ncodes))
		return -ENOMEM;
	return (int64_t)py->ncodes++;
}

unsigned bt_pyprocs_line(const struct bt_pyprocs *py, uint32_t id, int64_t off)
{
	if (id >= py->ncodes || !py->codes[id].ok)
		return 0;
	const struct bt_pycode *c = &py->codes[id];
	return bt_pycode_line(bt_pyprocs_offsets(py, c->proc)->lines, c->linetable, c->linelen, c->firstlineno, off);
}

int64_t bt_pyprocs_instr(const struct bt_pyprocs *py, uint32_t proc, const struct bt_py_frame *f)
{
	/* the sampler sends f_lasti as it is, and a pointer as its offset into the instructions */
	return proc < py->nprocs && bt_pyprocs_offsets(py, proc)->instr == BT_PY_INSTR_LASTI_UNITS
		       ? 2 * (int64_t)f->instr : f->instr;
}
