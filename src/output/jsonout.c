/* jsonout.c - the JSON profile writer: one frame table (a frame per sampled location, or per name for
 * folded input) and the stacks as lists of frame indices, one object per line. */
#include "output/jsonout.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "base/utf8.h"
#include "elf/buildid.h"
#include "kernel/kframe.h"
#include "kernel/kident.h"
#include "session/session.h"

void bt_json_put_string(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	fputc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc(c, out);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': fputs("\\n", out); break;
			case '\t': fputs("\\t", out); break;
			case '\r': fputs("\\r", out); break;
			default: fprintf(out, "\\u%04x", c);
			}
			i++;
		} else {
			size_t k = bt_utf8_len(s + i, n - i);
			if (k) {
				fwrite(s + i, 1, k, out);
				i += k;
			} else {
				fputs("\\ufffd", out);
				i++;
			}
		}
	}
	fputc('"', out);
}

static void put_str(FILE *out, const char *s)
{
	if (s)
		bt_json_put_string(out, s, strlen(s));
	else
		fputs("null", out);
}

/* The document's opening members, up to the frame table. */
static void put_header(FILE *out, const char *source, const struct bt_json_opts *o, bool per_pid,
		       uint64_t total)
{
	fprintf(out, "{\n\"format\": \"buildtrace-profile\",\n\"version\": %d,\n\"source\": \"%s\",\n"
		"\"unit\": \"samples\",\n", BT_JSON_FORMAT_VERSION, source);
	if (o && o->period_ns)
		fprintf(out, "\"period_ns\": %llu,\n", (unsigned long long)o->period_ns);
	else
		fputs("\"period_ns\": null,\n", out);
	struct tm tm;
	time_t sec = o ? (time_t)(o->time_ns / 1000000000) : 0;
	char when[64];
	if (o && o->time_ns > 0 && gmtime_r(&sec, &tm) && strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm))
		fprintf(out, "\"start_time\": \"%s.%09lldZ\",\n", when, (long long)(o->time_ns % 1000000000));
	else
		fputs("\"start_time\": null,\n", out);
	if (o && o->duration_ns > 0)
		fprintf(out, "\"duration_ns\": %lld,\n", (long long)o->duration_ns);
	else
		fputs("\"duration_ns\": null,\n", out);
	fprintf(out, "\"per_pid\": %s,\n\"total\": %llu,\n", per_pid ? "true" : "false",
		(unsigned long long)total);
}

static int finish(FILE *out)
{
	fputs("]\n}\n", out);
	/* A failed write left its errno (ENOSPC, EIO ...); stdio keeps only the error flag. */
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* A Python frame: its code object's file and address, and its instruction; its line is in lines. */
static void put_python_frame(FILE *out, const struct bt_session *s, const struct bt_loc *l, const char *name)
{
	const struct bt_pycode *c = l->file_id < s->py.ncodes ? &s->py.codes[l->file_id] : NULL;
	const struct bt_pyproc *pp = c ? &s->py.procs[c->proc] : NULL;
	put_str(out, name);
	fputs(", \"kind\": \"python\", \"file\": ", out);
	put_str(out, c && c->ok ? bt_pyprocs_str(&s->py, c->file_id) : NULL);
	fprintf(out, ", \"build_id\": null, \"pid\": %d, \"code\": \"0x%llx\", \"instruction\": %lld",
		pp ? pp->pid : 0, c ? (unsigned long long)c->addr : 0ULL, (long long)l->addr);
}

/* A frame of a file: its name, file, build-id, offset and the symbol's version. */
static void put_user_frame(FILE *out, const struct bt_session *s, const struct bt_loc *l, const char *name)
{
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	const struct bt_file *f = l->file_id < s->dsos.nfiles ? &s->dsos.files[l->file_id] : NULL;
	const struct bt_dso *d = f && f->dso_id < s->dsos.ndsos ? &s->dsos.dsos[f->dso_id] : NULL;
	put_str(out, name);
	fputs(", \"kind\": \"user\", \"file\": ", out);
	put_str(out, f ? bt_strtab_get(&s->dsos.paths, f->path_id) : NULL);
	fputs(", \"build_id\": ", out);
	put_str(out, d && d->build_id.len ? bt_buildid_hex(&d->build_id, hex, sizeof(hex)) : NULL);
	fprintf(out, ", \"offset\": \"0x%llx\", \"symbol_version\": ", (unsigned long long)l->addr);
	put_str(out, bt_session_symbol_version(s, l));
}

/* A kernel frame: the kernel image's or a module's, with its build-id. */
static void put_kernel_frame(FILE *out, const struct bt_session *s, const struct bt_loc *l, const char *name,
			     const char *kernel_hex)
{
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	/* a module's frame: the module as perf names it, and its own build-id */
	const struct bt_kmod_ver *mv = l->file_id ? bt_kmods_get(&s->kmods, l->file_id - 1) : NULL;
	char modfile[BT_KMOD_NAME_LEN + 3];
	if (mv)
		snprintf(modfile, sizeof(modfile), "[%s]", mv->mod.name);
	put_str(out, name);
	fputs(", \"kind\": \"kernel\", \"file\": ", out);
	put_str(out, mv ? modfile : BT_KFRAME_IMAGE);
	fputs(", \"build_id\": ", out);
	if (mv)
		put_str(out, mv->mod.build_id.len ? bt_buildid_hex(&mv->mod.build_id, hex, sizeof(hex)) : NULL);
	else
		put_str(out, kernel_hex[0] ? kernel_hex : NULL);
	fprintf(out, ", \"address\": \"0x%llx\"", (unsigned long long)l->addr);
}

static const char *const kind_names[] = {
	[BT_LOC_USER] = "user", [BT_LOC_KERNEL] = "kernel", [BT_LOC_UNMAPPED] = "unmapped",
	[BT_LOC_JIT] = "jit", [BT_LOC_PYTHON] = "python", [BT_LOC_MARK] = "truncated", [BT_LOC_OFFCPU] = "off_cpu",
};

/* One frame's members after "name": what the session knows of its location, or, for a location
 * known by name only (a profile read from text, or no session), its kind. */
static void put_frame(FILE *out, const struct bt_session *s, const struct bt_loc *l, const char *name,
		      const char *kernel_hex)
{
	if (!s || l->file_id == BT_LOC_NAMED) {
		put_str(out, name);
		fprintf(out, ", \"kind\": \"%s\", \"file\": null, \"build_id\": null",
			l->kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[l->kind] : "user");
		return;
	}
	switch (l->kind) {
	case BT_LOC_USER:
		put_user_frame(out, s, l, name);
		break;
	case BT_LOC_KERNEL:
		put_kernel_frame(out, s, l, name, kernel_hex);
		break;
	case BT_LOC_JIT:
		/* JIT code: its name (when it has one) from the process's perf map */
		put_str(out, name);
		fprintf(out, ", \"kind\": \"jit\", \"file\": null, \"build_id\": null, \"pid\": %d, "
			"\"address\": \"0x%llx\", \"name_from\": ", bt_jitmaps_pid(&s->jit, l->file_id),
			(unsigned long long)l->addr);
		put_str(out, l->unresolved ? NULL : bt_jitmaps_source(&s->jit, l->file_id, l->addr - l->is_caller));
		break;
	case BT_LOC_PYTHON:
		put_python_frame(out, s, l, name);
		break;
	case BT_LOC_MARK:
		put_str(out, name);
		fputs(", \"kind\": \"truncated\", \"file\": null, \"build_id\": null", out);
		break;
	default:
		put_str(out, name);
		fprintf(out, ", \"kind\": \"unmapped\", \"file\": null, \"build_id\": null, "
			"\"address\": \"0x%llx\"", (unsigned long long)l->addr);
	}
}

/* A frame's source lines, innermost first. */
static void put_lines(FILE *out, const struct bt_profile *p, const struct bt_loc *l, const char *name)
{
	fputs(", \"lines\": [", out);
	for (uint32_t k = 0; k < l->nlines; k++) {
		const struct bt_srcline *sl = &p->srclines[l->lines_first + k];
		fputs(k ? ", {\"function\": " : "{\"function\": ", out);
		/* the outermost is the frame's own function: named as the frame is */
		put_str(out, k + 1 < l->nlines || name[0] == '[' ? bt_strtab_get(&p->names, sl->func_id) : name);
		fputs(", \"file\": ", out);
		put_str(out, bt_strtab_get(&p->names, sl->file_id));
		fprintf(out, ", \"line\": %u}", sl->line);
	}
	fputc(']', out);
}

/* The running kernel's build-id in hex when p has a kernel frame the session placed, else "". */
static void kernel_id(const struct bt_profile *p, const struct bt_session *s, const struct bt_json_opts *o,
		      char *hex, size_t len)
{
	hex[0] = '\0';
	for (size_t i = 0; s && i < p->nlocs; i++)
		if (p->locs[i].kind == BT_LOC_KERNEL && p->locs[i].file_id != BT_LOC_NAMED) {
			struct bt_build_id id;
			if (bt_kident_kernel_build_id(o && o->kernel_root ? o->kernel_root : "", &id) == 0)
				bt_buildid_hex(&id, hex, len);
			return;
		}
}

static int write_profile(const struct bt_profile *p, const struct bt_session *s, const struct bt_json_opts *o,
			 FILE *out)
{
	char kernel_hex[2 * BT_BUILD_ID_MAXLEN + 1];
	kernel_id(p, s, o, kernel_hex, sizeof(kernel_hex));
	put_header(out, s ? "session" : o && o->source ? o->source : "profile", o, p->per_pid, p->total);
	/* off-CPU time: its total, and each stack's kind and time */
	bool off = p->offcpu_ns || (o && o->view != BT_VIEW_CPU);
	static const char *const views[] = { "cpu", "off_cpu", "wall" };
	if (off)
		fprintf(out, "\"view\": \"%s\",\n\"off_cpu_ns\": %llu,\n",
			o && o->view > 0 && o->view <= BT_VIEW_WALL ? views[o->view] : "cpu",
			(unsigned long long)p->offcpu_ns);
	fputs("\"frames\": [\n", out);
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct bt_loc *l = &p->locs[i];
		const char *name = bt_strtab_get(&p->names, l->name_id);
		if (!name)
			name = "[unknown]";
		fputs(i ? ",\n{\"name\": " : "{\"name\": ", out);
		put_frame(out, s, l, name, kernel_hex);
		if (s && l->file_id != BT_LOC_NAMED)
			fprintf(out, ", \"return_address\": %s", l->is_caller ? "true" : "false");
		fprintf(out, ", \"resolved\": %s", l->unresolved || l->name_id == BT_NAME_UNSET ? "false" : "true");
		if (l->nlines)
			put_lines(out, p, l, name);
		fputc('}', out);
	}
	fputs("\n],\n\"stacks\": [\n", out);
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct bt_stack *st = &p->stacks[i];
		fputs(i ? ",\n{\"comm\": " : "{\"comm\": ", out);
		put_str(out, bt_strtab_get(&p->names, st->comm_id));
		if (p->per_pid)
			fprintf(out, ", \"pid\": %u", st->pid);
		if (p->per_tid)
			fprintf(out, ", \"tid\": %u", st->tid);
		bool st_off = st->kind == BT_VALUE_OFFCPU;
		if (off)
			fprintf(out, ", \"kind\": \"%s\", \"count\": %llu, \"off_cpu_ns\": %llu, \"frames\": [",
				st_off ? "off_cpu" : "cpu", st_off ? 0ULL : (unsigned long long)st->count,
				st_off ? (unsigned long long)st->count : 0ULL);
		else
			fprintf(out, ", \"count\": %llu, \"frames\": [", (unsigned long long)st->count);
		for (uint32_t j = 0; j < st->nframes; j++)
			fprintf(out, j ? ", %u" : "%u", p->frames[st->first + j]);
		fputs("]}", out);
	}
	fputs("\n", out);
	return finish(out);
}

int bt_json_write_session(const struct bt_session *s, const struct bt_json_opts *o, FILE *out)
{
	return write_profile(&s->prof, s, o, out);
}

int bt_json_write_profile(const struct bt_profile *p, const struct bt_json_opts *o, FILE *out)
{
	return write_profile(p, NULL, o, out);
}
