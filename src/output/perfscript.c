/* perfscript.c - each location's frame line is made once, when a sample first needs it; samples
 * come from the session's log in time order and only point at their stack. */
#include "output/perfscript.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/esc.h"
#include "session/session.h"

/* perf's name for the event buildtrace samples on. */
#define EVENT "cpu-clock"

/* s as text on a line of its own field, escaped as every text buildtrace writes (base/esc.h): a
 * newline would end the record, an escape sequence would reach the terminal. */
static void put_text(FILE *out, const char *s)
{
	bt_esc_write(out, s, strlen(s));
}

/* The frame line of location id: "\t%16lx NAME[+0xOFF] (FILE)\n" as perf script prints it. A Python
 * frame is named as folded stacks name it, "FUNCTION (FILE.py:LINE)". NULL on ENOMEM. */
static char *frame_line(const struct bt_session *s, uint32_t id)
{
	const struct bt_profile *p = &s->prof;
	const struct bt_loc *l = &p->locs[id];
	struct bt_frame_place pl;
	bt_session_frame_place(s, l, &pl);
	const char *name = bt_strtab_get(&p->names, l->name_id);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "\t%16llx ", (unsigned long long)pl.addr);
	put_text(f, name ? name : "[unknown]");
	if (l->kind == BT_LOC_PYTHON && l->nlines) {
		const struct bt_srcline *sl = &p->srclines[l->lines_first];
		const char *file = bt_strtab_get(&p->names, sl->file_id);
		const char *base = file ? strrchr(file, '/') : NULL;
		fputs(" (", f);
		put_text(f, base ? base + 1 : file ? file : "?");
		fprintf(f, ":%u)", sl->line);
	}
	if (pl.has_off && name)
		fprintf(f, "+0x%llx", (unsigned long long)pl.off);
	fputs(" (", f);
	put_text(f, pl.file ? pl.file : "[unknown]");
	fputs(")\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

struct writer {
	const struct bt_session *s;
	const struct bt_perfscript_opts *o;
	FILE *out;
	char **lines;        /* per location, made on first use */
};

static int put_sample(void *ctx, const struct bt_sample_rec *r)
{
	struct writer *w = ctx;
	const struct bt_profile *p = &w->s->prof;
	if (r->stack >= p->nstacks)
		return -EINVAL;
	const struct bt_stack *st = &p->stacks[r->stack];
	const char *comm = bt_strtab_get(&p->names, st->comm_id);
	put_text(w->out, comm && *comm ? comm : ":-1");
	fprintf(w->out, " %5u/%-5u [%03u] %5llu.%06llu: %10llu " EVENT ": \n", r->pid, r->tid, r->cpu,
		(unsigned long long)(r->time_ns / 1000000000ULL),
		(unsigned long long)(r->time_ns % 1000000000ULL / 1000), (unsigned long long)w->o->period_ns);
	for (uint32_t j = st->nframes; j-- > 0;) {
		uint32_t id = p->frames[st->first + j];
		if (!w->lines[id] && !(w->lines[id] = frame_line(w->s, id)))
			return -ENOMEM;
		fputs(w->lines[id], w->out);
	}
	fputc('\n', w->out);
	return ferror(w->out) ? -EIO : 0;
}

/* The header perf script --header begins with ("# ========" lines), with the session's start on
 * the samples' clock and by the wall clock. */
static void header(const struct bt_session *s, const struct bt_perfscript_opts *o, FILE *out)
{
	char date[64] = "", iso[64] = "";
	time_t t = (time_t)(o->time_ns / 1000000000);
	struct tm tm;
	if (o->time_ns && localtime_r(&t, &tm))
		strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y", &tm);
	if (o->time_ns && gmtime_r(&t, &tm))
		strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
	struct utsname u;
	bool uts = uname(&u) == 0;
	fputs("# ========\n", out);
	if (*date)
		fprintf(out, "# captured on    : %s\n", date);
	if (uts) {
		fputs("# hostname : ", out);
		put_text(out, u.nodename);
		fprintf(out, "\n# os release : %s\n# arch : %s\n", u.release, u.machine);
	}
	fprintf(out, "# nrcpus online : %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(out, "# event : name = " EVENT ", sample_period = %llu ns\n", (unsigned long long)o->period_ns);
	if (o->mono_ns)
		fprintf(out, "# session start : %llu.%06llu (CLOCK_MONOTONIC, the clock of every sample's time)\n",
			(unsigned long long)(o->mono_ns / 1000000000ULL),
			(unsigned long long)(o->mono_ns % 1000000000ULL / 1000));
	if (*iso)
		fprintf(out, "# session start (wall clock) : %s.%06lluZ\n", iso,
			(unsigned long long)(o->time_ns % 1000000000 / 1000));
	if (o->duration_ns)
		fprintf(out, "# session duration : %.3f ms\n", (double)o->duration_ns / 1e6);
	fprintf(out, "# samples : %llu\n", (unsigned long long)bt_samplelog_count(s->log));
	fputs("# ========\n#\n", out);
}

int bt_perfscript_write(const struct bt_session *s, const struct bt_perfscript_opts *o, FILE *out)
{
	if (!s->log)
		return -EOPNOTSUPP;
	struct writer w = { .s = s, .o = o, .out = out, .lines = calloc(s->prof.nlocs + 1, sizeof(char *)) };
	if (!w.lines)
		return -ENOMEM;
	header(s, o, out);
	int err = bt_samplelog_each(s->log, put_sample, &w);
	for (size_t i = 0; i < s->prof.nlocs; i++)
		free(w.lines[i]);
	free(w.lines);
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return err ? err : errno ? -errno : -EIO;
	return err;
}
