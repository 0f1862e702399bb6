/* pystack.c - a sample's Python frames placed among its native frames. The interpreter's frame
 * chain says which of its frames each C call of the eval loop ran (is_entry marks the first of
 * each); the native stack says where those calls are. Frames whose C call the native walk did not
 * show prove it did not reach the outermost frame (a frame-pointer walk cut short, a copy of the
 * stack too small, a walk that took a frame for the outermost): they go outer to all of it, and a
 * [truncated] mark stands where the native frames are missing. Nothing is guessed or left out. */
#include "session/pystack.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

bool bt_pystack_plan(struct bt_session *s, const struct bt_rec_sample *r, const struct bt_process *p,
		     const __u64 *uips, const uint8_t *exact, size_t un, enum bt_native_walk native)
{
	int64_t proc;
	if (!s->pystack.n || s->pystack.tid != r->tid || s->pystack.time_ns != r->hdr.time_ns || !p ||
	    un > 2 * BT_MAX_STACK || (proc = bt_pyprocs_find(&s->py, (int)r->pid)) < 0)
		return false;
	const struct bt_pyproc *pp = &s->py.procs[proc];
	size_t cur = 0, pn = s->pystack.n, last = SIZE_MAX;
	for (size_t i = 0; i < un; i++) {
		s->pystack.first[i] = s->pystack.end[i] = 0;
		bool caller = exact ? !exact[i] : i > 0;
		const struct bt_mapping *m = bt_process_lookup(p, uips[i]);
		if (!m || m->file_id != pp->file_id || cur >= pn)
			continue;
		uint64_t off = uips[i] - caller - m->start + m->pgoff;
		if (off < pp->eval_lo || off >= pp->eval_hi)
			continue;
		/* this C call of the eval loop ran the frames up to the first of its own */
		s->pystack.first[i] = (uint16_t)cur;
		while (cur < pn && !s->pystack.frames[cur++].is_entry)
			;
		s->pystack.end[i] = (uint16_t)cur;
		last = i;
	}
	s->pystack.proc = (uint32_t)proc;
	s->pystack.placed = cur;
	/* the Python walk ended before the outermost frame: its outer frames are missing */
	bool py_cut = s->pystack.walk == BT_PY_WALK_TRUNCATED || s->pystack.walk == BT_PY_WALK_FAULT;
	bool rest = cur < pn;
	s->pystack.root = rest;
	s->pystack.mark_gap = rest || native == BT_NATIVE_CUT;
	s->pystack.mark_root = py_cut && s->pystack.root;
	s->pystack.mark_at = py_cut && !rest ? last : SIZE_MAX;
	return true;
}

static int mark(struct bt_session *s, size_t *n)
{
	int64_t id = bt_profile_loc(&s->prof, BT_LOC_MARK, 0, BT_MARK_TRUNCATED, false);
	if (id < 0)
		return (int)id;
	s->scratch[(*n)++] = (uint32_t)id;
	return 0;
}

int bt_pystack_lines(struct bt_session *s, struct bt_profile *prof, uint32_t id)
{
	const struct bt_loc *l = &prof->locs[id];
	const struct bt_pycode *c = l->file_id < s->py.ncodes ? &s->py.codes[l->file_id] : NULL;
	if (!c || !c->ok)
		return bt_profile_set_lines(prof, id, NULL, 0);
	struct bt_srcline_text t = { .function = bt_pyprocs_str(&s->py, c->qualname_id),
				     .file = bt_pyprocs_str(&s->py, c->file_id),
				     .line = bt_pyprocs_line(&s->py, l->file_id, (int64_t)l->addr) };
	return bt_profile_set_lines(prof, id, &t, 1);
}

/* The Python frames [first, end) of the sample's stack into s->scratch at *n, outermost first. */
static int frames(struct bt_session *s, size_t first, size_t end, size_t *n)
{
	uint32_t proc = s->pystack.proc;
	for (size_t k = end; k-- > first;) {
		const struct bt_py_frame *f = &s->pystack.frames[k];
		int64_t code = bt_pyprocs_code(&s->py, proc, f->code, f->tag);
		if (code == -ENOSPC)
			code = BT_NAME_UNSET;  /* a frame no code object names: "[python]" */
		else if (code < 0)
			return (int)code;
		/* the instruction as a byte offset into the code, negative before its first */
		int64_t off = bt_pyprocs_instr(&s->py, proc, f);
		size_t before = s->prof.nlocs;
		int64_t id = bt_profile_loc(&s->prof, BT_LOC_PYTHON, (uint32_t)code, (uint64_t)off, false);
		if (id < 0)
			return (int)id;
		if ((size_t)id == before && bt_pystack_lines(s, &s->prof, (uint32_t)id))
			return -ENOMEM;
		s->scratch[(*n)++] = (uint32_t)id;
	}
	return 0;
}

int bt_pystack_root(struct bt_session *s, size_t *n)
{
	int err = 0;
	if (s->pystack.mark_root)
		err = mark(s, n);
	if (!err && s->pystack.root)
		err = frames(s, s->pystack.placed, s->pystack.n, n);
	if (!err && s->pystack.mark_gap)
		err = mark(s, n);
	return err;
}

int bt_pystack_frame(struct bt_session *s, size_t i, size_t *n)
{
	if (s->pystack.end[i] <= s->pystack.first[i])
		return 0;
	int err = i == s->pystack.mark_at ? mark(s, n) : 0;
	if (!err)
		err = frames(s, s->pystack.first[i], s->pystack.end[i], n);
	return err ? err : 1;
}

void bt_pystack_done(struct bt_session *s, bool planned)
{
	if (planned) {
		struct bt_pyprocs_stats *st = &s->py.stats;
		size_t rest = s->pystack.n - s->pystack.placed;
		st->frames += s->pystack.n;
		st->rooted += rest;
		st->truncated += s->pystack.mark_root || s->pystack.mark_gap || s->pystack.mark_at != SIZE_MAX;
	}
	s->pystack.n = 0;
}
