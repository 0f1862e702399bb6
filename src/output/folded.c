/* folded.c - folded text: profile -> lines (names escaped, kernel frames suffixed, lines merged and
 * sorted frame by frame), text -> lines, and lines -> profile. */
#include "output/folded.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/esc.h"
#include "base/grow.h"
#include "base/htab.h"


static bool line_eq(void *ctx, uint64_t val, const void *key)
{
	const struct bt_folded *f = ctx;
	return strcmp(f->v[val].text, key) == 0;
}

/* Frame by frame: ';' sorts below every other byte, so all lines sharing a prefix of frames are
 * adjacent (which flame graph layout relies on), whatever characters the names contain. */
static int cmp_line(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const struct bt_folded_line *)a)->text;
	const unsigned char *y = (const unsigned char *)((const struct bt_folded_line *)b)->text;
	for (;; x++, y++) {
		unsigned cx = *x == ';' ? 1 : *x ? *x + 1u : 0;
		unsigned cy = *y == ';' ? 1 : *y ? *y + 1u : 0;
		if (cx != cy)
			return cx < cy ? -1 : 1;
		if (!cx)
			return 0;
	}
}

/* Adds count to the line text (len bytes, NUL-terminated), creating it when new. */
static int fold_add(struct bt_folded *f, struct bt_htab *index, const char *text, size_t len,
		    uint64_t count, uint32_t *at)
{
	uint32_t h = bt_hash_bytes(text, len, 0);
	uint64_t *v = bt_htab_find(index, h, line_eq, f, text);
	f->total += count;
	if (v) {
		f->v[*v].count += count;
		if (at)
			*at = (uint32_t)*v;
		return 0;
	}
	if (bt_grow((void **)&f->v, &f->cap, f->n + 1, sizeof(*f->v), 256))
		return -ENOMEM;
	f->v[f->n].text = strdup(text);
	f->v[f->n].count = count;
	if (!f->v[f->n].text || bt_htab_insert(index, h, f->n)) {
		free(f->v[f->n].text);
		return -ENOMEM;
	}
	if (at)
		*at = (uint32_t)f->n;
	f->n++;
	return 0;
}

/* Appends s to buf, a ';' (the frame separator) as ':'. Control characters stay as they are here:
 * bt_folded_write escapes them. */
static int append(char **buf, size_t *len, size_t *cap, const char *s, char sep)
{
	size_t n = strlen(s);
	if (bt_grow((void **)buf, cap, *len + n + 2, 1, 256))
		return -ENOMEM;
	if (sep)
		(*buf)[(*len)++] = sep;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		(*buf)[(*len)++] = c == ';' ? ':' : c;
	}
	(*buf)[*len] = '\0';
	return 0;
}

/* " (file.py:LINE)" after a Python frame's name: the base name of its file. */
static int append_py_place(const struct bt_profile *p, const struct bt_srcline *sl, char **buf, size_t *len,
			   size_t *cap)
{
	const char *file = bt_strtab_get(&p->names, sl->file_id);
	const char *base = file ? strrchr(file, '/') : NULL;
	char place[256];
	snprintf(place, sizeof(place), " (%s:%u)", base ? base + 1 : file ? file : "?", sl->line);
	return append(buf, len, cap, place, 0);
}

bool bt_folded_is_kernel(const char *name, size_t len)
{
	return len > BT_FOLDED_KERNEL_SUFFIX_LEN &&
	       !memcmp(name + len - BT_FOLDED_KERNEL_SUFFIX_LEN, BT_FOLDED_KERNEL_SUFFIX,
		       BT_FOLDED_KERNEL_SUFFIX_LEN);
}

void bt_folded_free(struct bt_folded *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].text);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

/* What stack s weighs in lines of t (NULL: CPU samples), 0 when it is left out. */
static uint64_t weight(const struct bt_stack *s, const struct bt_fold_time *t)
{
	if (!t)
		return s->kind == BT_VALUE_SAMPLES ? s->count : 0;
	if (s->kind == BT_VALUE_OFFCPU)
		return s->count;
	if (!t->wall || !t->period_ns)
		return 0;
	return s->count > UINT64_MAX / t->period_ns ? UINT64_MAX : s->count * t->period_ns;
}

/* Time lines counted in units: rounded, those under half a unit gone, the total summed again. */
static void to_units(struct bt_folded *f, uint64_t unit)
{
	size_t k = 0;
	f->total = 0;
	for (size_t i = 0; i < f->n; i++) {
		uint64_t c = f->v[i].count / unit + (f->v[i].count % unit >= (unit + 1) / 2);
		if (!c) {
			free(f->v[i].text);
			continue;
		}
		f->v[k] = f->v[i];
		f->v[k++].count = c;
		f->total += c;
	}
	f->n = k;
}

/* Sorts f's lines as cmp_line does, and turns line_of[0 .. nstacks), indices of lines in the
 * order they were made, into indices of the sorted lines. */
static int sort_mapped(struct bt_folded *f, uint32_t *line_of, size_t nstacks)
{
	struct tagged {
		struct bt_folded_line line;  /* first: cmp_line reads a tagged line as a line */
		uint32_t id;
	} *t = malloc(f->n * sizeof(*t));
	uint32_t *pos = malloc(f->n * sizeof(*pos));
	if (!t || !pos) {
		free(t);
		free(pos);
		return -ENOMEM;
	}
	for (size_t k = 0; k < f->n; k++)
		t[k] = (struct tagged){ f->v[k], (uint32_t)k };
	qsort(t, f->n, sizeof(*t), cmp_line);
	for (size_t j = 0; j < f->n; j++) {
		f->v[j] = t[j].line;
		pos[t[j].id] = (uint32_t)j;
	}
	for (size_t i = 0; i < nstacks; i++)
		if (line_of[i] != UINT32_MAX)
			line_of[i] = pos[line_of[i]];
	free(t);
	free(pos);
	return 0;
}

/* The lines of p's CPU samples (t NULL; line_of as bt_folded_from_profile_map says), or of time. */
static int fold_profile(const struct bt_profile *p, const struct bt_fold_time *t, struct bt_folded *f,
			uint32_t *line_of)
{
	struct bt_htab index;
	char *buf = NULL;
	size_t cap = 0;
	int err = 0;
	memset(f, 0, sizeof(*f));
	bt_htab_init(&index);
	/* comm-PID when stacks are kept per process because that was asked for (--per-pid); stacks
	 * kept apart only for pprof's sample labels fold into one line per comm and stack. */
	bool with_pid = p->per_pid && !p->labels, with_tid = p->per_tid && !p->labels;
	for (size_t i = 0; i < p->nstacks && !err; i++) {
		const struct bt_stack *s = &p->stacks[i];
		uint64_t w = weight(s, t);
		if (line_of)
			line_of[i] = UINT32_MAX;
		if (!w)
			continue;
		size_t len = 0;
		const char *comm = bt_strtab_get(&p->names, s->comm_id);
		err = append(&buf, &len, &cap, comm && *comm ? comm : "[unknown]", 0);
		if (!err && with_pid) {
			char pid[32];
			if (with_tid)
				snprintf(pid, sizeof(pid), "-%u/%u", s->pid, s->tid);
			else
				snprintf(pid, sizeof(pid), "-%u", s->pid);
			err = append(&buf, &len, &cap, pid, 0);
		}
		for (uint32_t j = 0; j < s->nframes && !err; j++) {
			const struct bt_loc *l = &p->locs[p->frames[s->first + j]];
			const char *name = bt_strtab_get(&p->names, l->name_id);
			err = append(&buf, &len, &cap, name ? name : "[unknown]", ';');
			if (!err && name && l->kind == BT_LOC_KERNEL)
				err = append(&buf, &len, &cap, BT_FOLDED_KERNEL_SUFFIX, 0);
			if (!err && l->kind == BT_LOC_PYTHON && l->nlines)
				err = append_py_place(p, &p->srclines[l->lines_first], &buf, &len, &cap);
		}
		if (!err)
			err = fold_add(f, &index, buf, len, w, line_of ? &line_of[i] : NULL);
	}
	free(buf);
	bt_htab_free(&index);
	if (err) {
		bt_folded_free(f);
		return err;
	}
	if (t)   /* time: no line_of (lines go when rounded away) */
		to_units(f, t->unit_ns ? t->unit_ns : 1);
	if (f->n && line_of) {
		if ((err = sort_mapped(f, line_of, p->nstacks))) {
			bt_folded_free(f);
			return err;
		}
	} else if (f->n) {  /* f->v is NULL when empty, which qsort must not be given */
		qsort(f->v, f->n, sizeof(*f->v), cmp_line);
	}
	f->per_pid = with_pid;
	f->per_tid = with_tid;
	return 0;
}

int bt_folded_from_profile_map(const struct bt_profile *p, struct bt_folded *f, uint32_t *line_of)
{
	return fold_profile(p, NULL, f, line_of);
}

int bt_folded_from_profile(const struct bt_profile *p, struct bt_folded *f)
{
	return fold_profile(p, NULL, f, NULL);
}

int bt_folded_time_from_profile(const struct bt_profile *p, const struct bt_fold_time *t, struct bt_folded *f)
{
	return fold_profile(p, t, f, NULL);
}

bool bt_folded_comm_pid(const char *text, size_t *comm_len, uint32_t *pid)
{
	const char *e = strchr(text, ';');
	size_t len = e ? (size_t)(e - text) : strlen(text), d = len;
	while (d > 0 && text[d - 1] >= '0' && text[d - 1] <= '9')
		d--;
	/* a pid of 1 to 10 digits after the '-', a comm of at least one character before it */
	if (d == len || len - d > 10 || d < 2 || text[d - 1] != '-')
		return false;
	uint64_t v = 0;
	for (size_t i = d; i < len; i++)
		v = v * 10 + (uint64_t)(text[i] - '0');
	if (v > UINT32_MAX)
		return false;
	*comm_len = d - 1;
	*pid = (uint32_t)v;
	return true;
}

bool bt_folded_comm_tid(const char *text, size_t *comm_len, uint32_t *pid, uint32_t *tid)
{
	const char *e = strchr(text, ';');
	size_t len = e ? (size_t)(e - text) : strlen(text), d = len;
	while (d > 0 && text[d - 1] >= '0' && text[d - 1] <= '9')
		d--;
	if (d == len || len - d > 10 || d < 2 || text[d - 1] != '/')
		return false;
	uint64_t v = 0;
	for (size_t i = d; i < len; i++)
		v = v * 10 + (uint64_t)(text[i] - '0');
	/* what comes before the '/' is comm-PID, ending where the thread id begins */
	char head[64];
	if (v > UINT32_MAX || d - 1 >= sizeof(head))
		return false;
	memcpy(head, text, d - 1);
	head[d - 1] = '\0';
	if (!bt_folded_comm_pid(head, comm_len, pid))
		return false;
	*tid = (uint32_t)v;
	return true;
}

int bt_folded_parse(FILE *in, struct bt_folded *f, size_t *bad_line)
{
	struct bt_htab index;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int err = 0;
	memset(f, 0, sizeof(*f));
	bt_htab_init(&index);
	while (!err && (len = getline(&line, &cap, in)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		char *sp = strrchr(line, ' ');
		char *end;
		if (!sp || sp == line || sp[1] < '0' || sp[1] > '9') {
			err = -EINVAL;
			break;
		}
		errno = 0;
		unsigned long long n = strtoull(sp + 1, &end, 10);
		if (errno || *end) {
			err = -EINVAL;
			break;
		}
		*sp = '\0';
		/* written escaped (bt_folded_write): the bytes they stand for */
		err = fold_add(f, &index, line, bt_unesc(line), n, NULL);
	}
	if (!err && ferror(in))
		err = -EIO;
	if (bad_line)
		*bad_line = err == -EINVAL ? lineno : 0;
	free(line);
	bt_htab_free(&index);
	if (err) {
		bt_folded_free(f);
		return err;
	}
	if (f->n)  /* f->v is NULL when empty, which qsort must not be given */
		qsort(f->v, f->n, sizeof(*f->v), cmp_line);
	f->per_pid = f->per_tid = f->n > 0;
	for (size_t i = 0; i < f->n && f->per_tid; i++) {
		size_t cl;
		uint32_t pid, tid;
		f->per_tid = bt_folded_comm_tid(f->v[i].text, &cl, &pid, &tid);
	}
	for (size_t i = 0; i < f->n && f->per_pid && !f->per_tid; i++) {
		size_t cl;
		uint32_t pid;
		f->per_pid = bt_folded_comm_pid(f->v[i].text, &cl, &pid);
	}
	return 0;
}

int bt_folded_to_profile(const struct bt_folded *f, struct bt_profile *p)
{
	uint32_t *ids = NULL;
	size_t cap = 0;
	int err = 0;
	p->per_pid = f->per_pid;
	p->per_tid = f->per_tid;
	for (size_t i = 0; i < f->n && !err; i++) {
		const char *text = f->v[i].text, *e = strchr(text, ';');
		size_t comm_len = e ? (size_t)(e - text) : strlen(text), n = 0;
		uint32_t pid = 0, tid = 0;
		if (f->per_tid)
			bt_folded_comm_tid(text, &comm_len, &pid, &tid);
		else if (f->per_pid)
			bt_folded_comm_pid(text, &comm_len, &pid);
		int64_t comm = bt_strtab_intern(&p->names, text, comm_len);
		if (comm < 0)
			err = (int)comm;
		while (e && !err) {
			const char *name = e + 1;
			e = strchr(name, ';');
			size_t len = e ? (size_t)(e - name) : strlen(name);
			bool kernel = bt_folded_is_kernel(name, len);
			int64_t id = bt_profile_named_loc(p, kernel ? BT_LOC_KERNEL : BT_LOC_USER, name,
							  kernel ? len - BT_FOLDED_KERNEL_SUFFIX_LEN : len);
			if (id < 0 || bt_grow((void **)&ids, &cap, n + 1, sizeof(*ids), 64))
				err = id < 0 ? (int)id : -ENOMEM;
			else
				ids[n++] = (uint32_t)id;
		}
		uint32_t none = 0;
		struct bt_sample_key k = { .comm_id = (uint32_t)comm, .pid = pid, .tid = tid, .exe_file = BT_NAME_UNSET,
					   .cgroup_id = BT_NAME_UNSET, .series_id = BT_NAME_UNSET };
		if (!err)
			err = bt_profile_add_key(p, &k, ids ? ids : &none, n, f->v[i].count);
	}
	free(ids);
	return err;
}

int bt_folded_write(const struct bt_folded *f, FILE *out)
{
	for (size_t i = 0; i < f->n; i++) {
		/* names are the profiled programs' choice: no byte of theirs reaches a terminal as a
		 * control, no newline of theirs forges a line */
		bt_esc_write(out, f->v[i].text, strlen(f->v[i].text));
		if (fprintf(out, " %llu\n", (unsigned long long)f->v[i].count) < 0)
			return errno ? -errno : -EIO;
	}
	return fflush(out) == 0 ? 0 : -errno;
}

int bt_profile_write_folded(const struct bt_profile *p, FILE *out)
{
	struct bt_folded f;
	int err = bt_folded_from_profile(p, &f);
	if (err)
		return err;
	err = bt_folded_write(&f, out);
	bt_folded_free(&f);
	return err;
}

