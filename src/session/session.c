/* session.c - record handling: every frame is turned into a (file version, offset) location at the
 * moment its sample arrives, so later mapping changes never rename it. */
#include "session/session.h"
#include "session/pystack.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "base/demangle.h"
#include "base/safeopen.h"
#include "capture/records.h"
#include "elf/dwarfinfo.h"
#include "elf/elffile.h"
#include "kernel/cgroup.h"
#include "kernel/kframe.h"
#include "capture/procmaps.h"
#include "elf/unwind.h"

dev_t bt_kdev_to_dev(uint32_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

int bt_session_init(struct bt_session *s, const struct bt_session_opts *opts)
{
	memset(s, 0, sizeof(*s));
	s->opts = *opts;
	if (!s->opts.proc_root)
		s->opts.proc_root = "";
	bt_proctable_init(&s->procs);
	struct bt_symsrc_opts so = { .root = NULL, .cache_dir = opts->cache_dir };
	bt_dso_registry_init(&s->dsos, s->opts.proc_root, &so, opts->cache_store);
	bt_jitmaps_init(&s->jit, s->opts.proc_root);
	bt_pyprocs_init(&s->py, s->opts.proc_root);
	/* the processes choose how much their maps and code objects hold: bounded for all together */
	s->proc_mem.max = opts->proc_mem_max ? opts->proc_mem_max : BT_SESSION_PROC_MEM;
	s->jit.budget = &s->proc_mem;
	s->py.budget = &s->proc_mem;
	s->dsos.cache_budget.max_file = opts->cache_max_file;
	s->dsos.cache_budget.max_total = opts->cache_max_size;
	bt_profile_init(&s->prof);
	s->prof.per_pid = opts->per_pid || opts->per_tid || opts->labels;
	s->prof.per_tid = opts->per_tid;
	s->prof.labels = opts->labels;
	if (opts->sample_log) {
		s->log = malloc(sizeof(*s->log));
		if (!s->log || bt_samplelog_init(s->log, opts->scratch_dir, 0)) {
			free(s->log);
			s->log = NULL;
			return -ENOMEM;
		}
	}
	bt_htab_init(&s->cgroups.index);
	bt_strtab_init(&s->cgroups.paths);
	bt_offstacks_init(&s->offstacks);
	/* for the labels, and for targets named by their cgroup */
	if (bt_cgroup_mount(s->opts.proc_root, s->cgroups.mount, sizeof(s->cgroups.mount)))
		s->cgroups.mount[0] = '\0';
	if (opts->kernel) {
		s->ksyms_err = opts->kernel_later ? -EAGAIN : bt_kallsyms_load(s->opts.proc_root, &s->ksyms);
		s->kmods_err = bt_kmods_init(&s->kmods, s->opts.proc_root);
	}
	return 0;
}

void bt_session_free(struct bt_session *s)
{
	bt_proctable_free(&s->procs);
	bt_dso_registry_free(&s->dsos);
	bt_jitmaps_free(&s->jit);
	bt_pyprocs_free(&s->py);
	bt_profile_free(&s->prof);
	if (s->log)
		bt_samplelog_free(s->log);
	free(s->log);
	bt_kallsyms_free(s->ksyms);
	bt_kmods_free(&s->kmods);
	bt_kdyn_free(&s->kdyn);
	bt_htab_free(&s->cgroups.index);
	bt_strtab_free(&s->cgroups.paths);
	free(s->cgroups.v);
	bt_offstacks_free(&s->offstacks);
	memset(s, 0, sizeof(*s));
}

#define CGROUPS_KEPT 4096

static bool cgroup_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_session *s = ctx;
	return s->cgroups.v[val].id == *(const uint64_t *)key;
}

/* The path of cgroup id (read once, then remembered; "" when it cannot be read), or NULL on ENOMEM. */
static const char *cgroup_path(struct bt_session *s, uint64_t id)
{
	uint32_t h = bt_hash_u64(id);
	uint64_t *v = bt_htab_find(&s->cgroups.index, h, cgroup_eq, s, &id);
	if (v)
		return bt_strtab_get(&s->cgroups.paths, s->cgroups.v[*v].path);
	if (s->cgroups.n == CGROUPS_KEPT) {  /* bounded: an agent sees containers come and go */
		bt_htab_free(&s->cgroups.index);
		bt_strtab_free(&s->cgroups.paths);
		bt_htab_init(&s->cgroups.index);
		bt_strtab_init(&s->cgroups.paths);
		s->cgroups.n = 0;
	}
	char path[1024] = "";
	if (!s->cgroups.mount[0] || bt_cgroup_path(s->cgroups.mount, id, path, sizeof(path)) != 0) {
		path[0] = '\0';
		s->cgroup_misses++;
	}
	if (s->cgroups.n == s->cgroups.cap) {
		size_t cap = s->cgroups.cap ? 2 * s->cgroups.cap : 64;
		void *nv = realloc(s->cgroups.v, cap * sizeof(*s->cgroups.v));
		if (!nv)
			return NULL;
		s->cgroups.v = nv;
		s->cgroups.cap = cap;
	}
	int64_t pid = bt_strtab_add(&s->cgroups.paths, path);
	if (pid < 0 || bt_htab_insert(&s->cgroups.index, h, s->cgroups.n))
		return NULL;
	s->cgroups.v[s->cgroups.n].id = id;
	s->cgroups.v[s->cgroups.n].path = (uint32_t)pid;
	s->cgroups.n++;
	return bt_strtab_get(&s->cgroups.paths, (uint32_t)pid);
}

/* The stack ids[0..n) (locations of s->prof) with its count into s->also, its strings and
 * locations interned there, in series (NULL: none). 0 or -ENOMEM. */
static int add_also(struct bt_session *s, const struct bt_sample_key *k, const uint32_t *ids, size_t n,
		    uint64_t count, const char *series)
{
	struct bt_profile *a = s->also;
	for (size_t i = 0; i < n; i++) {
		const struct bt_loc *l = &s->prof.locs[ids[i]];
		int64_t id = l->file_id == BT_LOC_NAMED ?
			bt_profile_named_loc(a, (enum bt_loc_kind)l->kind, bt_strtab_get(&s->prof.names, l->name_id),
					     strlen(bt_strtab_get(&s->prof.names, l->name_id))) :
			bt_profile_loc(a, (enum bt_loc_kind)l->kind, l->file_id, l->addr, l->is_caller);
		if (id < 0)
			return (int)id;
		if (l->kind == BT_LOC_PYTHON && !a->locs[id].lines_tried && bt_pystack_lines(s, a, (uint32_t)id))
			return -ENOMEM;
		s->also_scratch[i] = (uint32_t)id;
	}
	struct bt_sample_key ak = *k;
	int64_t comm = bt_strtab_add(&a->names, bt_strtab_get(&s->prof.names, k->comm_id));
	if (comm < 0)
		return (int)comm;
	ak.comm_id = (uint32_t)comm;
	if (k->cgroup_id != BT_NAME_UNSET) {
		int64_t cg = bt_strtab_add(&a->names, bt_strtab_get(&s->prof.names, k->cgroup_id));
		if (cg < 0)
			return (int)cg;
		ak.cgroup_id = (uint32_t)cg;
	}
	if (series) {
		int64_t id = bt_profile_series(a, series, bt_targets_other(s->targets));
		if (id < 0)
			return (int)id;
		ak.series_id = (uint32_t)id;
	}
	return bt_profile_add_key(a, &ak, s->also_scratch, n, count);
}

/* What a sample is labelled with besides its frames: its thread, its process's executable (the
 * lowest-mapped executable file: the program, below its libraries) and its cgroup's path. */
static int sample_key(struct bt_session *s, const struct bt_rec_sample *r, const struct bt_process *p,
		      uint32_t comm, struct bt_sample_key *k)
{
	*k = (struct bt_sample_key){ .comm_id = comm, .pid = r->pid, .tid = r->tid, .exe_file = BT_NAME_UNSET,
				     .cgroup_id = BT_NAME_UNSET, .series_id = BT_NAME_UNSET };
	if (!s->prof.labels)
		return 0;
	if (p && p->nmaps)
		k->exe_file = p->maps[0].file_id;
	const char *cg = cgroup_path(s, r->cgroup_id);
	if (!cg)
		return -ENOMEM;
	if (*cg) {
		int64_t id = bt_strtab_add(&s->prof.names, cg);
		if (id < 0)
			return (int)id;
		k->cgroup_id = (uint32_t)id;
	}
	return 0;
}

static int on_mapping(struct bt_session *s, const struct bt_rec_mapping *m)
{
	char path[BT_PATH_MAX];
	size_t plen = m->path_len && m->path_len <= BT_PATH_MAX ? m->path_len : 0;
	memcpy(path, m->path, plen);
	path[plen ? plen - 1 : 0] = '\0';

	s->stats.mappings++;
	/* The kernel's mmap records reach us beside the ring buffer: one may come after the exit of
	 * its process, which must not bring it back. */
	const struct bt_process *p = bt_proctable_find(&s->procs, (int)m->pid);
	if (p && p->dead && m->hdr.time_ns <= p->dead_ns)
		return 0;
	int64_t fid = bt_dso_file(&s->dsos, bt_kdev_to_dev(m->dev), m->ino, m->mtime_ns, path);
	if (fid < 0)
		return (int)fid;
	struct bt_file *f = bt_dso_file_get(&s->dsos, (uint32_t)fid);
	if (f->dso_id == BT_NO_ID) {
		struct bt_build_id id = { 0 };
		struct bt_dso_mapping where = { .pid = (int)m->pid, .start = m->start, .end = m->end };
		int64_t r = 0;
		switch (m->build_id_status) {
		case BT_BID_OK:
			id.len = m->build_id_len <= BT_BUILD_ID_MAX ? m->build_id_len : BT_BUILD_ID_MAX;
			memcpy(id.data, m->build_id, id.len);
			r = bt_dso_set_build_id(&s->dsos, (uint32_t)fid, &id, BT_ORIGIN_BPF, &where);
			s->stats.bid_bpf++;
			break;
		case BT_BID_NONE:
			r = bt_dso_set_no_build_id(&s->dsos, (uint32_t)fid, &where);
			break;
		case BT_BID_PENDING:
			break;  /* an iterator record with the build-id follows */
		default:
			/* The kernel could not read it: the mapped file itself, through map_files. */
			if (bt_procmaps_buildid(s->opts.proc_root, (int)m->pid, m->start, m->end, &id) == 0) {
				r = bt_dso_set_build_id(&s->dsos, (uint32_t)fid, &id, BT_ORIGIN_USERSPACE, &where);
				s->stats.bid_userspace++;
			} else {
				s->stats.bid_missing++;
			}
		}
		if (r < 0 && r != -EINVAL)
			return (int)r;
	}
	struct bt_mapping map = { .start = m->start, .end = m->end, .pgoff = m->pgoff,
				  .file_id = (uint32_t)fid };
	int err = bt_proctable_map(&s->procs, (int)m->pid, &map);
	return err ? err : bt_pyprocs_mapping(&s->py, &s->dsos, (int)m->pid, &map, path);
}

/* Kernel code came or went: frames there are named by it from now on. */
static int on_ksym(struct bt_session *s, const struct bt_rec_ksym *k)
{
	if (!s->opts.kernel)
		return 0;
	if (k->flags & BT_KSYM_F_UNREGISTER) {
		bt_kdyn_remove(&s->kdyn, k->addr);
		return 0;
	}
	int err = bt_kdyn_add(&s->kdyn, k->addr, k->len, k->name);
	return err == -EINVAL ? 0 : err;
}

static int on_module(struct bt_session *s, const struct bt_rec_module *r)
{
	s->stats.modules_loaded++;
	if (!s->opts.kernel)
		return 0;
	struct bt_kmodule m = { .base = r->base, .size = r->size };
	size_t nlen = strnlen(r->name, sizeof(r->name));
	if (nlen >= sizeof(m.name))
		nlen = sizeof(m.name) - 1;
	memcpy(m.name, r->name, nlen);
	if (r->build_id_status == BT_BID_OK && r->build_id_len && r->build_id_len <= BT_BUILD_ID_MAX) {
		m.build_id.len = r->build_id_len;
		memcpy(m.build_id.data, r->build_id, r->build_id_len);
	} else {
		m.build_id_err = -ENODATA;
	}
	int64_t id = bt_kmods_add(&s->kmods, &m);
	return id == -EINVAL ? 0 : (id < 0 ? (int)id : 0);
}

/* The mapping of p at ip, its vDSO included: the process's [vdso] is read once per address space
 * while the process lives (bt_dso_vdso: a file of its own), and stands as a mapping of that file
 * (written into *tmp), so that its frames are named, unwound and written as any file's. NULL when
 * nothing known is mapped there. */
static const struct bt_mapping *mapping_at(struct bt_session *s, struct bt_process *p, uint64_t ip,
					   struct bt_mapping *tmp)
{
	const struct bt_mapping *m = p ? bt_process_lookup(p, ip) : NULL;
	if (m || !p)
		return m;
	if (!p->vdso_known && !p->dead) {
		p->vdso_known = true;
		uint64_t start, end;
		int fd = bt_procmaps_open_vdso(s->opts.proc_root, p->pid, &start, &end);
		bool kept = false;
		int64_t fid = fd >= 0 ? bt_dso_vdso(&s->dsos, fd, &kept) : fd;
		if (fd >= 0 && !kept)
			close(fd);
		if (fid >= 0) {
			p->vdso_start = start;
			p->vdso_end = end;
			p->vdso_file = (uint32_t)fid;
		}
	}
	if (ip < p->vdso_start || ip >= p->vdso_end)
		return NULL;
	*tmp = (struct bt_mapping){ .start = p->vdso_start, .end = p->vdso_end, .file_id = p->vdso_file };
	return tmp;
}

/* The CFI of the file mapped at pc in the process being unwound, and its load bias. */
static int find_cfi(void *ctx, uint64_t pc, struct bt_cfi **cfi, uint64_t *bias)
{
	struct bt_session *s = ctx;
	/* find, not get: get would take a process that exited (its samples still arriving) for a new
	 * one under a reused pid. */
	struct bt_process *p = bt_proctable_find(&s->procs, s->unwind_pid);
	if (!p)
		return -ENOENT;
	struct bt_mapping vdso;
	const struct bt_mapping *m = mapping_at(s, p, pc, &vdso);
	if (!m)
		return -ENOENT;
	struct bt_file *f = bt_dso_file_get(&s->dsos, m->file_id);
	if (!f || f->dso_id == BT_NO_ID)
		return -EAGAIN;  /* its build-id is still to come */
	struct bt_cfi *c = bt_dso_cfi(&s->dsos, f->dso_id);
	uint64_t vaddr;
	if (!c || bt_cfi_offset_to_vaddr(c, pc - m->start + m->pgoff, &vaddr) != 0)
		return -ENOENT;
	*cfi = c;
	*bias = pc - vaddr;
	return 0;
}

static double mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* Where user space can have code on x86-64: above the first page, below the top of a 57-bit
 * address space (5-level paging; 47 bits with 4 levels, a subset). */
#define USER_CODE_MIN 0x1000ULL
#define USER_CODE_END 0x00fffffffffff000ULL

/* A user address outside every file mapping: JIT code when the process writes a perf map (its
 * table id in *jit, looked for once per sample: -2 not yet), else unmapped. An address no user
 * code can have (0, a kernel address a walk read as a return address) is unmapped whatever the
 * process writes. */
static int64_t outside_loc(struct bt_session *s, int pid, uint64_t ip, bool caller, int64_t *jit)
{
	if (ip < USER_CODE_MIN || ip >= USER_CODE_END)
		goto unmapped;
	if (*jit == -2)
		*jit = bt_jitmaps_proc(&s->jit, pid, now_ns());
	if (*jit == -ENOMEM)
		return -ENOMEM;
	if (*jit >= 0)
		return bt_profile_loc(&s->prof, BT_LOC_JIT, (uint32_t)*jit, ip, caller);
unmapped:
	s->stats.unmapped_frames++;
	return bt_profile_loc(&s->prof, BT_LOC_UNMAPPED, 0, ip, caller);
}

/* Unwound now, while the process's mappings are those of the sample that follows it. */
static void on_ustack(struct bt_session *s, const struct bt_rec_ustack *u, size_t size)
{
	double t0 = mono_ns();
	struct bt_unwind_in in = { .regs = { .ip = u->ip, .sp = u->sp, .bp = u->bp, .bx = u->bx, .r12 = u->r12,
					      .r13 = u->r13, .r14 = u->r14, .r15 = u->r15, .have_saved = true },
				   .stack = u->data,
				   .len = u->len <= size - sizeof(*u) ? u->len : 0, .find = find_cfi, .ctx = s };
	struct bt_unwind_out out = { .ips = s->ustack.ips, .exact = s->ustack.exact, .max = BT_MAX_STACK };
	s->unwind_pid = (int)u->pid;
	bt_unwind(&in, &out);
	s->ustack.n = out.n;
	enum bt_unwind_stop why = out.why;
	s->ustack.why = why;
	s->ustack.tid = u->tid;
	s->ustack.time_ns = u->hdr.time_ns;
	s->stats.dwarf_stacks++;
	s->stats.dwarf_frames += s->ustack.n;
	s->stats.dwarf_stops[why < 5 ? why : 4]++;
	s->stats.dwarf_unwind_ns += (uint64_t)(mono_ns() - t0);
}

/* Kept for the sample of the same thread and time that follows. */
static void on_pystack(struct bt_session *s, const struct bt_rec_pystack *r)
{
	s->py.stats.stacks++;
	s->py.stats.walks[r->walk < BT_PY_WALK_MAX ? r->walk : BT_PY_WALK_FAULT]++;
	s->pystack.tid = r->tid;
	s->pystack.time_ns = r->hdr.time_ns;
	s->pystack.n = r->n <= BT_PY_MAX_FRAMES ? r->n : 0;
	s->pystack.walk = r->walk;
	memcpy(s->pystack.frames, r->frames, s->pystack.n * sizeof(r->frames[0]));
}

/* A Go program's stacks begin in one of its runtime's outermost functions, or where it switched
 * stacks; what a walk found beyond (the thread's start, or words left on a stack taken for return
 * addresses, as many as a frame-pointer chain through them gives) is no frame of its
 * (bt_dso_outermost). exact is given for a stack unwound with call frame information in userspace
 * (dwarf-copy). The innermost such frame of uips[0..*un) ends the stack: *un is cut there. Returns
 * whether one was found. */
static bool outermost_at(struct bt_session *s, const struct bt_process *p, const __u64 *uips,
			 const uint8_t *exact, size_t *un)
{
	for (size_t i = 0; i < *un; i++) {
		const struct bt_mapping *m = bt_process_lookup(p, uips[i]);
		const struct bt_file *f = m ? bt_dso_file_get(&s->dsos, m->file_id) : NULL;
		bool caller = exact ? !exact[i] : i > 0;
		uint64_t off = m ? uips[i] - m->start + m->pgoff : 0;
		if (f && f->dso_id != BT_NO_ID && off >= caller &&
		    bt_dso_outermost(&s->dsos, f->dso_id, off - caller, caller, exact != NULL)) {
			*un = i + 1;
			return true;
		}
	}
	return false;
}

/* The series of a sample's process (1, its labels in *series), or 0 when the rules drop it. What
 * the session knows of the process goes with the question: the sample's comm and cgroup, and the
 * executable it has mapped. */
static int sample_target(struct bt_session *s, const struct bt_rec_sample *r, const struct bt_process *p,
			 const char **series)
{
	char comm[BT_COMM_LEN + 1];
	size_t clen = strnlen(r->comm, BT_COMM_LEN);
	memcpy(comm, r->comm, clen);
	comm[clen] = '\0';
	const struct bt_file *f = p && p->nmaps ? bt_dso_file_get(&s->dsos, p->maps[0].file_id) : NULL;
	const char *cg = cgroup_path(s, r->cgroup_id);
	if (!cg)
		return -ENOMEM;
	struct bt_target_hint h = { .pid = (int)r->pid, .tid = (int)r->tid, .cgroup_id = r->cgroup_id, .cgroup = *cg ? cg : NULL,
				    .comm = comm, .exe = f ? bt_strtab_get(&s->dsos.paths, f->path_id) : NULL };
	int k = bt_targets_lookup(s->targets, &h, series);
	if (k == 0) {
		s->stats.samples_dropped++;
		if (s->on_drop)
			s->on_drop(s->drop_ctx, (int)r->pid, r->cgroup_id, r->hdr.time_ns);
	}
	return k;
}

/* The sample whose frames are s->scratch[0..n) into the profile (and the second one, and the
 * sample log), under its comm, labels and series. 0 or -ENOMEM. */
static int add_sample(struct bt_session *s, const struct bt_rec_sample *r, const struct bt_process *p, size_t n,
		      const char *series)
{
	size_t clen = strnlen(r->comm, BT_COMM_LEN);
	int64_t comm = bt_strtab_intern(&s->prof.names, r->comm, clen);
	if (comm < 0)
		return (int)comm;
	struct bt_sample_key key;
	int err = sample_key(s, r, p, (uint32_t)comm, &key);
	if (!err && series) {
		int64_t id = bt_profile_series(&s->prof, series, bt_targets_other(s->targets));
		err = id < 0 ? (int)id : 0;
		key.series_id = (uint32_t)id;
	}
	uint64_t t = r->hdr.time_ns;
	if (!err && s->also && t >= s->also_from_ns && (!s->also_until_ns || t < s->also_until_ns))
		err = add_also(s, &key, s->scratch, n, 1, series);
	if (!err)
		err = bt_profile_add_key(&s->prof, &key, s->scratch, n, 1);
	if (err || !s->log)
		return err;
	struct bt_sample_rec rec = { .time_ns = r->hdr.time_ns, .stack = s->prof.last_stack, .pid = r->pid,
				     .tid = r->tid, .cpu = r->cpu };
	return bt_samplelog_add(s->log, &rec);
}

/* The frames of sample r, of process p (NULL: unknown), into s->scratch as locations of s->prof,
 * outermost first: user frames from the bottom of the stack, then kernel frames but the kskip
 * innermost; *out of them. A CPU sample (cpu) counts in the stats of user stacks unwound from a
 * copy. 0 or -ENOMEM. */
static int sample_frames(struct bt_session *s, const struct bt_rec_sample *r, struct bt_process *p,
			 bool cpu, size_t kskip, size_t *out)
{
	size_t kn = r->kern_n, un = r->user_n, n = 0;
	/* The unwound stack of this very sample replaces the frame-pointer walk. */
	const __u64 *uips = &r->ips[kn];
	const uint8_t *exact = NULL;   /* frame pointers: every frame but the first is a return address */
	bool cut = false;              /* the user stack is known to end short of the outermost frame */
	if (s->ustack.n && s->ustack.tid == r->tid && s->ustack.time_ns == r->hdr.time_ns) {
		uips = (const __u64 *)s->ustack.ips;
		exact = s->ustack.exact;
		un = s->ustack.n;
		cut = s->ustack.why != BT_UNWIND_END;
	} else if (s->stats.dwarf_stacks && un && cpu) {
		s->stats.dwarf_fallback++;
	}
	s->ustack.n = 0;
	if (p && un && outermost_at(s, p, uips, exact, &un))
		cut = false;
	/* The Python frames of this very sample replace the eval-loop frames that ran them. */
	enum bt_native_walk native = exact ? (cut ? BT_NATIVE_CUT : BT_NATIVE_COMPLETE)
				     : s->opts.bpf_walk ? (r->user_err >= 0 && (r->user_err & BT_UWALK_DONE)
							   ? BT_NATIVE_COMPLETE : BT_NATIVE_CUT)
				     : BT_NATIVE_UNKNOWN;
	bool py = bt_pystack_plan(s, r, p, uips, exact, un, native);
	int err = py ? bt_pystack_root(s, &n) : 0;
	int64_t jit = -2;
	for (size_t i = un; !err && i-- > 0;) {
		int took = py ? bt_pystack_frame(s, i, &n) : 0;
		if (took) {
			err = took < 0 ? took : 0;
			continue;
		}
		uint64_t ip = uips[i];
		bool caller = exact ? !exact[i] : i > 0;
		struct bt_mapping vdso;
		const struct bt_mapping *m = mapping_at(s, p, ip, &vdso);
		int64_t id;
		if (m) {
			id = bt_profile_loc(&s->prof, BT_LOC_USER, m->file_id, ip - m->start + m->pgoff, caller);
		} else {
			id = outside_loc(s, (int)r->pid, ip, caller, &jit);
		}
		if (id < 0)
			err = (int)id;
		else
			s->scratch[n++] = (uint32_t)id;
	}
	bt_pystack_done(s, py);
	if (err)
		return err;
	for (size_t i = kn; i-- > kskip;) {
		/* The module version loaded there now: a later reload is another version. */
		int64_t mod = bt_kmods_at(&s->kmods, r->ips[i]);
		int64_t id = bt_profile_loc(&s->prof, BT_LOC_KERNEL, mod >= 0 ? (uint32_t)mod + 1 : 0,
					    r->ips[i], false);
		if (id < 0)
			return (int)id;
		s->scratch[n++] = (uint32_t)id;
	}
	*out = n;
	return 0;
}

/* Whether the frame counts of sample r stay within its size bytes. */
static bool sample_fits(const struct bt_rec_sample *r, size_t size)
{
	size_t kn = r->kern_n, un = r->user_n;
	return size >= offsetof(struct bt_rec_sample, ips) && kn + un <= 2 * BT_MAX_STACK &&
	       offsetof(struct bt_rec_sample, ips) + (kn + un) * sizeof(__u64) <= size;
}

static int on_sample(struct bt_session *s, const struct bt_rec_sample *r, size_t size)
{
	if (!sample_fits(r, size)) {
		s->stats.bad_records++;
		return 0;
	}
	s->stats.samples++;
	struct bt_process *p = bt_proctable_find(&s->procs, (int)r->pid);
	if (p)
		p->cgroup_id = r->cgroup_id;
	const char *series = NULL;
	int tk = s->targets ? sample_target(s, r, p, &series) : 1;
	if (tk <= 0) {
		/* nothing of it is named or kept; its stack records were for it alone */
		s->ustack.n = 0;
		bt_pystack_done(s, false);
		return tk;
	}
	size_t n = 0;
	int err = sample_frames(s, r, p, true, 0, &n);
	return err ? err : add_sample(s, r, p, n, series);
}

/* ---- off-CPU time ------------------------------------------------------------------------- */

/* The leaf of an off-CPU stack: the state its time was spent in. */
static const char *const offcpu_state_names[BT_OFFCPU_NSTATES] = {
	[BT_OFFCPU_SLEEP] = "off-CPU: sleeping (S)",
	[BT_OFFCPU_UNINT] = "off-CPU: uninterruptible (D)",
	[BT_OFFCPU_RUNQ] = "off-CPU: runnable (R)",
};

/* What stands for the frames of off-CPU time without a stack. */
static const char *offcpu_placeholder(uint64_t key)
{
	switch (key) {
	case BT_OFFCPU_KEY_EARLY: return "[off-CPU since before the session]";
	case BT_OFFCPU_KEY_UNWALKED: return "[stack not taken: rate bound]";
	default: return "[stack lost]";
	}
}

/* The kernel frames of an off-CPU stack before the scheduler's own, __schedule (the scheduler's
 * tracepoint and buildtrace's program on it, more or fewer as other tracers attach), left out. */
static size_t sched_skip(struct bt_session *s, const struct bt_rec_sample *r)
{
	if (!s->ksyms)
		return 0;
	if (s->sched_ksyms != s->ksyms) {
		s->sched_ksyms = s->ksyms;
		s->sched_addr = bt_kallsyms_addr(s->ksyms, "__schedule");
	}
	for (size_t i = 0; s->sched_addr && i < r->kern_n && i < BT_MAX_STACK; i++) {
		uint64_t off;
		const struct bt_ksym *k = bt_kallsyms_lookup(s->ksyms, r->ips[i], &off);
		if (k && k->addr == s->sched_addr)
			return i;
	}
	return 0;
}

/* The frames of an off-CPU stack key, kept by that key for the time the kernel sums under it. */
static int on_offcpu_stack(struct bt_session *s, const struct bt_rec_offcpu_stack *d, size_t size)
{
	const struct bt_rec_sample *r = &d->s;
	size_t off = offsetof(struct bt_rec_offcpu_stack, s);
	if (size < off || !sample_fits(r, size - off) || d->key < BT_OFFCPU_KEY_FIRST) {
		s->stats.bad_records++;
		return 0;
	}
	struct bt_process *p = bt_proctable_find(&s->procs, (int)r->pid);
	if (p && r->cgroup_id)
		p->cgroup_id = r->cgroup_id;
	size_t n = 0;
	int err = sample_frames(s, r, p, false, sched_skip(s, r), &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		const struct bt_loc *l = &s->prof.locs[s->scratch[i]];
		s->off_frames[i] = (struct bt_offframe){ .addr = l->addr, .file_id = l->file_id, .kind = l->kind,
							 .is_caller = l->is_caller };
	}
	struct bt_offstack st = { .key = d->key, .frames = s->off_frames, .n = (uint32_t)n, .pid = r->pid,
				  .exe_file = p && p->nmaps ? p->maps[0].file_id : BT_NAME_UNSET,
				  .cgroup_id = r->cgroup_id, .time_ns = r->hdr.time_ns,
				  .early = d->hdr.tag & BT_OFFCPU_STACK_EARLY };
	memcpy(st.comm, r->comm, BT_COMM_LEN);
	s->stats.offcpu_stacks++;
	return bt_offstacks_put(&s->offstacks, &st);
}

/* A thread's name as /proc says it now ("" when it cannot be read), for time without a stack. */
static void thread_comm(const struct bt_session *s, uint32_t pid, uint32_t tid, char *comm)
{
	char path[PATH_MAX];
	comm[0] = '\0';
	snprintf(path, sizeof(path), "%s/proc/%u/task/%u/comm", s->opts.proc_root, pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, comm, BT_COMM_LEN - 1);
	close(fd);
	comm[n > 0 ? n : 0] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

/* The locations of off-CPU stack st (NULL: it has none) in profile p into s->off_scratch, then its
 * state's; *n of them. 0 or -ENOMEM. */
static int offcpu_locs(struct bt_session *s, struct bt_profile *p, const struct bt_offstack *st,
		       const struct bt_rec_offcpu *v, size_t *n)
{
	uint32_t *ids = s->off_scratch;
	int64_t id;
	*n = 0;
	if (!st || st->early) {   /* frames not taken stand first, where they were */
		const char *ph = offcpu_placeholder(st ? BT_OFFCPU_KEY_EARLY : v->key);
		if ((id = bt_profile_named_loc(p, BT_LOC_OFFCPU, ph, strlen(ph))) < 0)
			return (int)id;
		ids[(*n)++] = (uint32_t)id;
	}
	for (uint32_t i = 0; st && i < st->n; i++) {
		const struct bt_offframe *f = &st->frames[i];
		if ((id = bt_profile_loc(p, (enum bt_loc_kind)f->kind, f->file_id, f->addr, f->is_caller)) < 0)
			return (int)id;
		if (f->kind == BT_LOC_PYTHON && !p->locs[id].lines_tried && bt_pystack_lines(s, p, (uint32_t)id))
			return -ENOMEM;
		ids[(*n)++] = (uint32_t)id;
	}
	const char *sn = offcpu_state_names[v->state];
	if ((id = bt_profile_named_loc(p, BT_LOC_OFFCPU, sn, strlen(sn))) < 0)
		return (int)id;
	ids[(*n)++] = (uint32_t)id;
	return 0;
}

/* Off-CPU time v of stack st (NULL: none) into profile p, under its thread's labels. 0 or -ENOMEM. */
static int offcpu_into(struct bt_session *s, struct bt_profile *p, const struct bt_offstack *st,
		       const struct bt_rec_offcpu *v, const char *comm, const char *series)
{
	size_t n;
	int err = offcpu_locs(s, p, st, v, &n);
	if (err)
		return err;
	int64_t c = bt_strtab_intern(&p->names, comm, strnlen(comm, BT_COMM_LEN));
	if (c < 0)
		return (int)c;
	struct bt_sample_key k = { .comm_id = (uint32_t)c, .pid = v->pid, .tid = v->tid, .exe_file = BT_NAME_UNSET,
				   .cgroup_id = BT_NAME_UNSET, .series_id = BT_NAME_UNSET, .kind = BT_VALUE_OFFCPU };
	if (p->labels) {
		const struct bt_process *proc = st ? NULL : bt_proctable_find(&s->procs, (int)v->pid);
		k.exe_file = st ? st->exe_file : proc && proc->nmaps ? proc->maps[0].file_id : BT_NAME_UNSET;
		const char *cg = st ? cgroup_path(s, st->cgroup_id) : "";
		int64_t id = cg && *cg ? bt_strtab_add(&p->names, cg) : 0;
		if (!cg || id < 0)
			return -ENOMEM;
		if (*cg)
			k.cgroup_id = (uint32_t)id;
	}
	if (series) {
		/* folded into other like a sample's, but time: not counted as a sample folded */
		uint64_t folded = p->series_folded_samples;
		int64_t id = bt_profile_series(p, series, bt_targets_other(s->targets));
		if (id < 0)
			return (int)id;
		p->series_folded_samples = folded;
		k.series_id = (uint32_t)id;
	}
	return bt_profile_add_key(p, &k, s->off_scratch, n, v->ns);
}

/* The series of off-CPU time v (1, its labels in *series), or 0 when the rules drop its process;
 * asked as a sample's: with its stack's comm and cgroup, else with the thread's comm now and the
 * cgroup its process last ran in. Off-CPU time arrives at a cut, long after its thread blocked and
 * maybe after an exec: on_drop is told only of a stack's, with the time the stack was taken (the
 * kernel side then skips the process until an exec after it, not the program it exec'd since). */
static int offcpu_target(struct bt_session *s, const struct bt_offstack *st, const struct bt_rec_offcpu *v,
			 const char *comm, const char **series)
{
	const struct bt_process *p = bt_proctable_find(&s->procs, (int)v->pid);
	uint64_t cgroup_id = st ? st->cgroup_id : p ? p->cgroup_id : 0;
	const char *cg = cgroup_id ? cgroup_path(s, cgroup_id) : "";
	if (!cg)
		return -ENOMEM;
	uint32_t exe = st ? st->exe_file : p && p->nmaps ? p->maps[0].file_id : BT_NAME_UNSET;
	const struct bt_file *f = exe != BT_NAME_UNSET ? bt_dso_file_get(&s->dsos, exe) : NULL;
	char c[BT_COMM_LEN + 1];
	snprintf(c, sizeof(c), "%.*s", BT_COMM_LEN, comm);
	struct bt_target_hint h = { .pid = (int)v->pid, .tid = (int)v->tid, .cgroup_id = cgroup_id,
				    .cgroup = *cg ? cg : NULL, .comm = c[0] ? c : NULL,
				    .exe = f ? bt_strtab_get(&s->dsos.paths, f->path_id) : NULL };
	int k = bt_targets_lookup(s->targets, &h, series);
	if (k == 0 && s->on_drop && st && st->cgroup_id)
		s->on_drop(s->drop_ctx, (int)v->pid, st->cgroup_id, st->time_ns);
	return k;
}

/* Off-CPU time of a thread in a stack and state (key 0: an epoch of stack keys ended). */
static int on_offcpu(struct bt_session *s, const struct bt_rec_offcpu *v)
{
	if (!v->key) {
		s->stats.offcpu_dropped += bt_offstacks_next_epoch(&s->offstacks);
		return 0;
	}
	s->stats.offcpu_blocks += v->blocks;
	if (!v->ns)   /* blocks whose time a cut counted already */
		return 0;
	const struct bt_offstack *st = v->key >= BT_OFFCPU_KEY_FIRST ? bt_offstacks_get(&s->offstacks, v->key) : NULL;
	char comm[BT_COMM_LEN];
	if (st)
		memcpy(comm, st->comm, BT_COMM_LEN);
	else
		thread_comm(s, v->pid, v->tid, comm);
	const char *series = NULL;
	int tk = s->targets ? offcpu_target(s, st, v, comm, &series) : 1;
	if (tk <= 0) {
		s->stats.offcpu_rule_ns += tk ? 0 : v->ns;
		return tk;
	}
	s->stats.offcpu_ns += v->ns;
	s->stats.offcpu_state_ns[v->state] += v->ns;
	if (!st || st->early) {
		s->stats.offcpu_nostack_ns += v->ns;
		if (v->key >= BT_OFFCPU_KEY_FIRST && !st)
			s->stats.offcpu_lost_ns += v->ns;
	}
	int err = offcpu_into(s, &s->prof, st, v, comm, series);
	/* a cut's time is up to the cut: those after the few seconds began and up to their end */
	uint64_t t = v->hdr.time_ns;
	if (!err && s->also && t > s->also_from_ns && (!s->also_until_ns || t <= s->also_until_ns))
		err = offcpu_into(s, s->also, st, v, comm, series);
	return err;
}

/* A process gone before a snapshot read the build-ids of files it mapped (a short command): each
 * is read from the file at its path, when that path still holds the very version that was mapped
 * (device, inode and modification time). */
static void settle_pending(struct bt_session *s, int pid)
{
	const struct bt_process *p = bt_proctable_find(&s->procs, pid);
	for (size_t i = 0; p && i < p->nmaps; i++) {
		uint32_t fid = p->maps[i].file_id;
		const struct bt_file *f = bt_dso_file_get(&s->dsos, fid);
		const char *path = f ? bt_strtab_get(&s->dsos.paths, f->path_id) : NULL;
		if (!f || f->dso_id != BT_NO_ID || f->no_build_id || !path || path[0] != '/')
			continue;
		struct stat st;
		struct bt_build_id id;
		int fd = bt_open_regular(AT_FDCWD, path, 0, &st);
		if (fd < 0)
			continue;
		bool same = st.st_dev == f->dev && (uint64_t)st.st_ino == f->ino &&
			    (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec == f->mtime_ns;
		if (same && bt_buildid_from_fd(fd, &id) == 0) {
			struct bt_dso_mapping nowhere = { .pid = 0 };
			if (bt_dso_set_build_id(&s->dsos, fid, &id, BT_ORIGIN_USERSPACE, &nowhere) >= 0)
				s->stats.bid_userspace++;
		}
		close(fd);
	}
}

int bt_session_record(void *ctx, const struct bt_rec_hdr *rec)
{
	struct bt_session *s = ctx;
	s->stats.records++;
	if (!bt_rec_valid(rec, rec->size)) {
		s->stats.bad_records++;
		return 0;
	}
	if (rec->time_ns > s->last_ns)
		s->last_ns = rec->time_ns;
	switch (rec->type) {
	case BT_REC_SAMPLE:
		return on_sample(s, (const struct bt_rec_sample *)rec, rec->size);
	case BT_REC_EXEC: {
		const struct bt_rec_exec *e = (const void *)rec;
		bt_jitmaps_gone(&s->jit, (int)e->pid, now_ns());
		bt_pyprocs_gone(&s->py, (int)e->pid);
		if (s->targets)
			bt_targets_forget(s->targets, (int)e->pid);
		return bt_proctable_exec(&s->procs, (int)e->pid, 0);
	}
	case BT_REC_FORK: {
		const struct bt_rec_fork *f = (const void *)rec;
		int err = bt_pyprocs_fork(&s->py, (int)f->parent_pid, (int)f->child_pid);
		return err ? err : bt_proctable_fork(&s->procs, (int)f->parent_pid, (int)f->child_pid, 0);
	}
	case BT_REC_EXIT: {
		const struct bt_rec_exit *e = (const void *)rec;
		s->stats.exits++;
		settle_pending(s, (int)e->pid);
		bt_jitmaps_gone(&s->jit, (int)e->pid, now_ns());
		bt_pyprocs_gone(&s->py, (int)e->pid);
		if (s->targets)
			bt_targets_forget(s->targets, (int)e->pid);
		bt_proctable_exit(&s->procs, (int)e->pid, rec->time_ns);
		return 0;
	}
	case BT_REC_MMAP:
	case BT_REC_VMA:
		return on_mapping(s, (const struct bt_rec_mapping *)rec);
	case BT_REC_MUNMAP: {
		const struct bt_rec_munmap *u = (const void *)rec;
		return bt_proctable_unmap(&s->procs, (int)u->pid, u->start, u->end);
	}
	case BT_REC_MODULE:
		return on_module(s, (const struct bt_rec_module *)rec);
	case BT_REC_USTACK:
		on_ustack(s, (const struct bt_rec_ustack *)rec, rec->size);
		return 0;
	case BT_REC_KSYM:
		return on_ksym(s, (const struct bt_rec_ksym *)rec);
	case BT_REC_PYSTACK:
		on_pystack(s, (const struct bt_rec_pystack *)rec);
		return 0;
	case BT_REC_OFFCPU_STACK:
		return on_offcpu_stack(s, (const struct bt_rec_offcpu_stack *)rec, rec->size);
	case BT_REC_OFFCPU:
		return on_offcpu(s, (const struct bt_rec_offcpu *)rec);
	default:
		return 0;
	}
}

static const char *placeholder(struct bt_session *s, const struct bt_loc *l)
{
	snprintf(s->namebuf, sizeof(s->namebuf), "[%s+0x%llx]", bt_dso_file_basename(&s->dsos, l->file_id),
		 (unsigned long long)l->addr);
	return s->namebuf;
}

/* The symbol of st naming user location l: a return address is looked up at its call, except one at
 * the very start of a function after a byte no function holds (a signal handler returning into the
 * trampoline the kernel made it call, glibc's __restore_rt, which no call instruction precedes). */
static const struct bt_sym *loc_symbol(const struct bt_symtab *st, const struct bt_loc *l)
{
	uint64_t off;
	if (!st)
		return NULL;
	const struct bt_sym *sym = bt_symtab_lookup_offset(st, l->addr - l->is_caller, &off);
	if (!sym && l->is_caller) {
		sym = bt_symtab_lookup_offset(st, l->addr, &off);
		if (sym && off)
			sym = NULL;
	}
	return sym;
}

static const char *resolve(void *ctx, const struct bt_loc *l, bool *final, bool *unresolved)
{
	struct bt_session *s = ctx;
	switch (l->kind) {
	case BT_LOC_KERNEL: {
		/* file_id: the module version loaded there when the sample was taken, its id + 1 */
		struct bt_kframe kf;
		if (bt_kframe_name(&s->kdyn, s->ksyms, &s->kmods, (int64_t)l->file_id - 1, l->addr, &kf) != 0) {
			*unresolved = true;
			if (l->name_id == BT_NAME_UNSET)  /* new frames only: a retry never asks again */
				s->ksyms_misses++;
			snprintf(s->namebuf, sizeof(s->namebuf), "%s", kf.placeholder);
			return s->namebuf;
		}
		/* A BPF program's name stays provisional, and a new frame there asks for kallsyms to be
		 * read again, as a miss does. */
		if (kf.provisional) {
			*final = false;
			if (l->name_id == BT_NAME_UNSET)
				s->ksyms_misses++;
		}
		return kf.name;
	}
	case BT_LOC_USER: {
		struct bt_file *f = bt_dso_file_get(&s->dsos, l->file_id);
		if (!f || f->dso_id == BT_NO_ID) {
			*final = false;  /* its build-id may still arrive */
			*unresolved = true;
			return placeholder(s, l);
		}
		const struct bt_sym *sym = loc_symbol(bt_dso_symtab(&s->dsos, f->dso_id), l);
		if (!sym) {
			*unresolved = true;
			return placeholder(s, l);
		}
		char *dm = bt_demangle(sym->name);
		snprintf(s->namebuf, sizeof(s->namebuf), "%s", dm ? dm : sym->name);
		free(dm);
		return s->namebuf;
	}
	case BT_LOC_PYTHON: {
		const struct bt_pycode *c = l->file_id < s->py.ncodes ? &s->py.codes[l->file_id] : NULL;
		if (c && c->ok)
			return bt_pyprocs_str(&s->py, c->qualname_id);
		*unresolved = true;
		return "[python]";
	}
	case BT_LOC_MARK:
		return BT_MARK_TRUNCATED_NAME;
	case BT_LOC_JIT: {
		/* a return address is looked up at its call, as in a file */
		const char *name = bt_jitmaps_name(&s->jit, l->file_id, l->addr - l->is_caller, now_ns(), final, NULL);
		if (name)
			return name;
		*unresolved = true;
		return "[unknown]";
	}
	default:
		*unresolved = true;
		return "[unknown]";
	}
}

/* Frames named as unknown so far may have a name now. */
static void kernel_frames_again(struct bt_session *s)
{
	for (size_t i = 0; i < s->prof.nlocs; i++)
		if (s->prof.locs[i].kind == BT_LOC_KERNEL && s->prof.locs[i].unresolved)
			s->prof.locs[i].resolved = 0;
}

int bt_session_load_kallsyms(struct bt_session *s)
{
	struct bt_kallsyms *k = NULL;
	int err = bt_kallsyms_load(s->opts.proc_root, &k);
	if (err) {
		if (!s->ksyms)
			s->ksyms_err = err;
		return err;
	}
	bt_kallsyms_free(s->ksyms);
	s->ksyms = k;
	s->ksyms_err = 0;
	s->ksyms_misses = 0;
	kernel_frames_again(s);
	return 0;
}

int bt_session_reload_kallsyms(struct bt_session *s)
{
	struct bt_kallsyms *k = NULL;
	int err = bt_kallsyms_load(s->opts.proc_root, &k);
	if (err)
		return err;  /* keep what was loaded before */
	bt_kallsyms_free(s->ksyms);
	s->ksyms = k;
	s->ksyms_err = 0;
	s->ksyms_misses = 0;
	s->stats.kallsyms_reloads++;
	kernel_frames_again(s);
	return 0;
}

static void renamed(void *ctx, uint32_t dso_id)
{
	struct bt_session *s = ctx;
	for (size_t i = 0; i < s->prof.nlocs; i++) {
		struct bt_loc *l = &s->prof.locs[i];
		if (l->kind != BT_LOC_USER)
			continue;
		struct bt_file *f = bt_dso_file_get(&s->dsos, l->file_id);
		if (f && f->dso_id == dso_id)
			l->resolved = 0;
	}
}

int bt_session_poll_debuginfod(struct bt_session *s, int timeout_ms)
{
	return bt_dso_poll_debuginfod(&s->dsos, timeout_ms, renamed, s);
}

int bt_session_resolve(struct bt_session *s)
{
	return bt_profile_resolve(&s->prof, resolve, s);
}

#define LINES_MAX 32

/* The source lines of one user location: 0 frames when its file, build-id or DWARF is unknown. */
static size_t loc_lines(struct bt_session *s, const struct bt_loc *l, struct bt_dwarf_frame *fr, size_t max)
{
	if (l->kind != BT_LOC_USER)
		return 0;
	struct bt_file *f = bt_dso_file_get(&s->dsos, l->file_id);
	if (!f || f->dso_id == BT_NO_ID)
		return 0;
	const struct bt_symtab *st = bt_dso_symtab(&s->dsos, f->dso_id);
	uint64_t vaddr;
	if (!st || l->addr < l->is_caller ||
	    bt_elf_offset_to_vaddr(bt_symtab_layout(st), l->addr - l->is_caller, &vaddr) != 0)
		return 0;
	/* DWARF, else a Go program's own table */
	struct bt_dwarf *dw = bt_dso_dwarf(&s->dsos, f->dso_id);
	struct bt_golines *gl = dw ? NULL : bt_dso_golines(&s->dsos, f->dso_id);
	int n = dw ? bt_dwarf_lookup(dw, vaddr, fr, max) : gl ? bt_golines_lookup(gl, vaddr, fr, max) : 0;
	return n > 0 ? (size_t)n : 0;
}

int bt_session_resolve_lines(struct bt_session *s)
{
	struct bt_dwarf_frame fr[LINES_MAX];
	struct bt_srcline_text t[LINES_MAX];
	char *names[LINES_MAX];
	for (size_t i = 0; i < s->prof.nlocs; i++) {
		const struct bt_loc *l = &s->prof.locs[i];
		if (l->lines_tried)
			continue;
		size_t n = loc_lines(s, l, fr, LINES_MAX);
		for (size_t k = 0; k < n; k++) {
			names[k] = fr[k].function ? bt_demangle(fr[k].function) : NULL;
			t[k] = (struct bt_srcline_text){ .function = names[k] ? names[k] : fr[k].function,
							 .file = fr[k].file, .line = fr[k].line };
		}
		int err = bt_profile_set_lines(&s->prof, (uint32_t)i, t, n);
		for (size_t k = 0; k < n; k++)
			free(names[k]);
		if (err)
			return err;
	}
	return 0;
}

void bt_session_reap(struct bt_session *s, uint64_t grace_ns)
{
	/* Time goes on when no record arrives (a quiet machine): the records' clock,
	 * bpf_ktime_get_ns, is CLOCK_MONOTONIC. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
	bt_proctable_reap(&s->procs, now > s->last_ns ? now : s->last_ns, grace_ns);
	bt_jitmaps_reap(&s->jit, now, grace_ns);
}

size_t bt_session_build_ids(const struct bt_session *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->dsos.ndsos; i++)
		n += s->dsos.dsos[i].build_id.len > 0;
	return n;
}

const char *bt_session_symbol_version(const struct bt_session *s, const struct bt_loc *l)
{
	if (!s || !l || l->kind != BT_LOC_USER || l->unresolved)
		return NULL;
	const struct bt_file *f = l->file_id < s->dsos.nfiles ? &s->dsos.files[l->file_id] : NULL;
	if (!f || f->dso_id >= s->dsos.ndsos)
		return NULL;
	const struct bt_dso *d = &s->dsos.dsos[f->dso_id];
	if (d->sym_state != BT_SYMS_LOADED || !d->symtab)
		return NULL;
	const struct bt_sym *sym = loc_symbol(d->symtab, l);
	return sym ? bt_symtab_version(d->symtab, sym) : NULL;
}

const struct bt_elf_layout *bt_session_file_layout(const struct bt_session *cs, uint32_t file_id)
{
	struct bt_session *s = (struct bt_session *)cs;  /* a symbol table loads on first use */
	const struct bt_file *f = bt_dso_file_get(&s->dsos, file_id);
	const struct bt_symtab *st = f && f->dso_id != BT_NO_ID ? bt_dso_symtab(&s->dsos, f->dso_id) : NULL;
	return st ? bt_symtab_layout(st) : NULL;
}

static void user_place(struct bt_session *s, const struct bt_loc *l, struct bt_frame_place *out)
{
	const struct bt_file *f = bt_dso_file_get(&s->dsos, l->file_id);
	if (!f)
		return;
	out->file = bt_strtab_get(&s->dsos.paths, f->path_id);
	const struct bt_symtab *st = f->dso_id != BT_NO_ID ? bt_dso_symtab(&s->dsos, f->dso_id) : NULL;
	uint64_t vaddr;
	if (!st || bt_elf_offset_to_vaddr(bt_symtab_layout(st), l->addr, &vaddr) != 0)
		return;
	out->addr = vaddr;
	const struct bt_sym *sym = l->unresolved ? NULL : loc_symbol(st, l);
	if (sym && sym->addr <= vaddr) {
		out->has_off = true;
		out->off = vaddr - sym->addr;
	}
}

void bt_session_frame_place(const struct bt_session *cs, const struct bt_loc *l, struct bt_frame_place *out)
{
	struct bt_session *s = (struct bt_session *)cs;
	*out = (struct bt_frame_place){ .addr = l->addr };
	if (l->file_id == BT_LOC_NAMED) {  /* known by its name only: addr is the name's id */
		out->addr = 0;
		out->file = l->kind == BT_LOC_KERNEL ? BT_KFRAME_IMAGE : NULL;
		return;
	}
	switch (l->kind) {
	case BT_LOC_USER:
		user_place(s, l, out);
		return;
	case BT_LOC_KERNEL: {
		struct bt_kframe kf;
		if (bt_kframe_name(&s->kdyn, s->ksyms, &s->kmods, (int64_t)l->file_id - 1, l->addr, &kf) != 0)
			snprintf(out->buf, sizeof(out->buf), "%s", kf.placeholder);
		else if (kf.mod)
			snprintf(out->buf, sizeof(out->buf), "[%s]", kf.mod->mod.name);
		else if (kf.ksym && kf.ksym->module)
			snprintf(out->buf, sizeof(out->buf), "[%s]", kf.ksym->module);
		else
			snprintf(out->buf, sizeof(out->buf), "%s", BT_KFRAME_IMAGE);
		out->has_off = kf.name != NULL;
		out->off = kf.off;
		out->file = out->buf;
		return;
	}
	case BT_LOC_JIT: {
		uint64_t off;
		bool final;
		if (bt_jitmaps_name(&s->jit, l->file_id, l->addr - l->is_caller, now_ns(), &final, &off)) {
			out->has_off = true;
			out->off = off + l->is_caller;
		}
		snprintf(out->buf, sizeof(out->buf), "/tmp/perf-%d.map", bt_jitmaps_pid(&s->jit, l->file_id));
		out->file = out->buf;
		return;
	}
	case BT_LOC_PYTHON:
		out->addr = 0;
		if (l->nlines)
			out->file = bt_strtab_get(&s->prof.names, s->prof.srclines[l->lines_first].file_id);
		return;
	default:
		return;
	}
}
