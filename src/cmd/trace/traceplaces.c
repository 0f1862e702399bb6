/* traceplaces.c - the probes of `buildtrace trace` resolved into the places they are attached:
 * the files processes map (or paths name), each checked for a build-id and resolved against it.
 * Declared in traceopts.h. */
#include "cmd/trace/traceopts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cli/cli.h"
#include "elf/sdt.h"
#include "symsrc/bidcache.h"
#include "symsrc/probecache.h"

/* The probe cache's definitions of one GROUP:EVENT: one per build it was resolved for. */
struct cached {
	const struct bt_probe_spec *spec;
	struct bt_pcache_probe *v;
	size_t n;
};

struct resolve_ctx {
	const struct bt_trace_args *a;
	unsigned probe;
	struct bt_trace_places *out;
	struct bt_symsrc_opts so;
	struct cached *cached;  /* for a cache:GROUP:EVENT spec */
	int rc;                 /* the exit code a callback failed with */
};

static int add_place(struct bt_trace_places *p, const struct bt_trace_place *pl)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 8;
		struct bt_trace_place *v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = *pl;
	return 0;
}

/* How the BPF side reads the key argument of a marker, from the argument spec of its note. */
static int key_cfg(const struct bt_trace_args *a, const struct bt_probe_spec *spec, struct bt_trace_place *pl)
{
	struct bt_sdt_arg args[BT_SDT_MAX_ARGS];
	size_t n;
	int err = bt_sdt_parse_args(pl->site.args, args, BT_SDT_MAX_ARGS, &n);
	if (err)
		return bt_cli_error(1, "%s: the argument spec '%s' of %s %s", spec->text, pl->site.args,
				    pl->site.what, err == -ENOTSUP ? "reads some argument at no fixed place" :
				    "is not understood");
	if (a->key_arg > n)
		return bt_cli_error(1, "%s: --key arg%u: %s has %zu argument%s ('%s')", spec->text, a->key_arg,
				    pl->site.what, n, n == 1 ? "" : "s", pl->site.args);
	const struct bt_sdt_arg *g = &args[a->key_arg - 1];
	if (a->key_str && g->size != 8)
		return bt_cli_error(1, "%s: --key arg%u:str: the argument is %u bytes, not a pointer", spec->text,
				    a->key_arg, g->size);
	pl->cfg.kind = g->loc == BT_SDT_REG ? BT_TARG_REG : g->loc == BT_SDT_MEM ? BT_TARG_MEM : BT_TARG_CONST;
	pl->cfg.reg = g->reg;
	pl->cfg.size = g->size;
	pl->cfg.off = g->off;
	pl->cfg.flags |= (g->is_signed ? BT_TPROBE_SIGNED : 0) | (a->key_str ? BT_TPROBE_STR : 0);
	return 0;
}

static int add_cached(void *ctx, const struct bt_pcache_probe *p)
{
	struct cached *cd = ctx;
	if (strcmp(p->group, cd->spec->provider) || strcmp(p->event, cd->spec->name) || p->ret)
		return 0;
	struct bt_pcache_probe *v = realloc(cd->v, (cd->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	cd->v = v;
	cd->v[cd->n++] = *p;
	return 0;
}

/* What the cached entry says it was: a marker, or a function (perf's header is the probe command,
 * which names the function first). */
static int spec_from_cache(const struct bt_pcache_probe *p, const struct bt_probe_file *f, struct bt_probe_spec *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->text, sizeof(s->text), "cache:%s:%s", p->group, p->event);
	snprintf(s->file, sizeof(s->file), "%s", f->path);
	if (p->sdt && !strncmp(p->group, "sdt_", 4)) {
		s->kind = BT_PROBE_SDT;
		snprintf(s->provider, sizeof(s->provider), "%s", p->group + 4);
		snprintf(s->name, sizeof(s->name), "%s", p->event);
		return 0;
	}
	const char *h = strchr(p->header, '=');
	h = h ? h + 1 : p->header;
	size_t n = strcspn(h, " @:+%;");
	if (!n || n >= sizeof(s->name))
		return -EINVAL;
	s->kind = BT_PROBE_FUNC;
	snprintf(s->name, sizeof(s->name), "%.*s", (int)n, h);
	return 0;
}

/* A cached probe in f: used as cached only when f is the build it was resolved for; --force
 * resolves it again in f. For a marker, the note (of that very build) gives the argument spec. */
static int place_cached(struct resolve_ctx *c, const struct bt_probe_file *f, struct bt_trace_place *pl)
{
	const struct bt_probe_spec *spec = &c->a->specs[c->probe];
	const struct bt_pcache_probe *hit = NULL;
	char msg[1536], hex[2 * BT_BUILD_ID_MAXLEN + 1], hex2[2 * BT_BUILD_ID_MAXLEN + 1];
	for (size_t i = 0; i < c->cached->n; i++)
		if (f->id.len && bt_buildid_eq(&c->cached->v[i].id, &f->id))
			hit = &c->cached->v[i];
	struct bt_probe_spec again;
	if (!hit && !c->a->force) {
		if (f->pid > 0)
			snprintf(msg, sizeof(msg), "process %d maps", f->pid);
		else
			snprintf(msg, sizeof(msg), "the file at");
		return bt_cli_error(1, "%s: %s %s of build-id %s, but the cached probe was resolved for build-id "
				    "%s: refused (--force resolves it again for this build)", spec->text, msg, f->path,
				    bt_probe_id_hex(&f->id, hex, sizeof(hex)),
				    bt_buildid_hex(&c->cached->v[0].id, hex2, sizeof(hex2)));
	}
	const struct bt_pcache_probe *p = hit ? hit : &c->cached->v[0];
	if (spec_from_cache(p, f, &again))
		return bt_cli_error(1, "%s: the cached entry '%s' names no function to resolve again", spec->text,
				    p->header);
	if ((!hit || again.kind == BT_PROBE_SDT) && bt_probe_resolve(&again, f, &c->so, &pl->site, msg, sizeof(msg)))
		return bt_cli_error(1, "%s", msg);
	if (hit) {
		pl->site.off = hit->off;
		pl->site.ref_ctr_off = hit->ref_ctr_off;
		pl->from_cache = true;
		if (again.kind != BT_PROBE_SDT)
			snprintf(pl->site.what, sizeof(pl->site.what), "%s", again.name);
		snprintf(pl->site.origin, sizeof(pl->site.origin), "probe cache");
	}
	return 0;
}

/* One file the spec names: the build-id rule, the resolution, the BPF side's configuration. Takes
 * f->fd. 0 or the exit code. */
static int place_in(struct resolve_ctx *c, struct bt_probe_file *f)
{
	const struct bt_probe_spec *spec = &c->a->specs[c->probe];
	char msg[1536];
	struct bt_trace_place pl = { .probe = c->probe, .file = *f };
	int rc = 0;
	if (!f->id.len && !c->a->no_bid_check) {
		rc = bt_cli_error(1, "%s: %s has no GNU build-id, so nothing proves which build a probe is "
				  "resolved against (--no-build-id-check places it anyway)", spec->text, f->path);
		goto fail;
	}
	if (!f->id.len && !c->out->warned_no_bid) {
		fprintf(stderr, "buildtrace: warning: %s has no GNU build-id: its probe is placed by what the "
			"file holds now, unchecked\n", f->path);
		c->out->warned_no_bid = true;
	}
	if (c->cached)
		rc = place_cached(c, f, &pl);
	else if (bt_probe_resolve(spec, f, &c->so, &pl.site, msg, sizeof(msg)))
		rc = bt_cli_error(1, "%s", msg);
	if (rc)
		goto fail;
	if (pl.site.insn_unchecked)
		fprintf(stderr, "buildtrace: warning: %s: no function and no source line begins at %s, so "
			"nothing here shows that it is an instruction's first byte (a probe inside an instruction "
			"corrupts the program)\n", spec->text, pl.site.what);
	if (c->a->key_arg && (rc = key_cfg(c->a, spec, &pl)))
		goto fail;
	if (c->a->latency)
		pl.cfg.flags |= BT_TPROBE_LATENCY;
	if (add_place(c->out, &pl)) {
		rc = bt_cli_error(1, "out of memory");
		goto fail;
	}
	return 0;
fail:
	close(f->fd);
	return rc;
}

static int on_file(void *ctx, struct bt_probe_file *f)
{
	struct resolve_ctx *c = ctx;
	c->rc = place_in(c, f);
	return c->rc ? 1 : 0;
}

/* The spec in each process of -p that maps its file. */
static int resolve_mapped(struct resolve_ctx *c)
{
	const struct bt_probe_spec *spec = &c->a->specs[c->probe];
	size_t before = c->out->n;
	for (size_t i = 0; i < c->a->npids; i++) {
		int pid = c->a->pids[i];
		int r = bt_probe_find_mapped("", pid, spec, on_file, c);
		if (r == 1)
			return c->rc;
		if (r == -ESRCH || r == -ENOENT)
			return bt_cli_error(1, "%s: process %d exited", spec->text, pid);
		if (r < 0)
			return bt_cli_error(1, "%s: reading the mappings of process %d: %s", spec->text, pid,
					    strerror(-r));
	}
	if (c->out->n == before) {
		char hex[2 * BT_BUILD_ID_MAXLEN + 1];
		if (spec->id.len)
			return bt_cli_error(1, "%s: no process given with -p maps a file of build-id %s", spec->text,
					    bt_buildid_hex(&spec->id, hex, sizeof(hex)));
		return bt_cli_error(1, "%s: no process given with -p maps %s (as executable code)", spec->text,
				    spec->file);
	}
	return 0;
}

/* The file execvp would run for cmd: as given when it has a '/', else the first executable match in
 * PATH. 0 or -ENOENT. */
static int command_path(const char *cmd, char *out, size_t len)
{
	if (strchr(cmd, '/')) {
		snprintf(out, len, "%s", cmd);
		return 0;
	}
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(out, len, "%.*s%s%s", (int)n, p, n ? "/" : "", cmd);
		if (access(out, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return -ENOENT;
}

/* A cache:GROUP:EVENT spec: its definitions, then the file each names (the path they were resolved
 * at, or the processes' mappings of it). */
static int resolve_cached(struct resolve_ctx *c)
{
	const struct bt_probe_spec *spec = &c->a->specs[c->probe];
	struct cached cd = { .spec = spec };
	char dir[PATH_MAX];
	size_t before = c->out->n;
	int rc = 0, err = 0;
	if (c->a->cache_dir)
		snprintf(dir, sizeof(dir), "%s", c->a->cache_dir);
	else
		err = bt_bidcache_default_dir(dir, sizeof(dir));
	if (!err)
		err = bt_pcache_foreach(dir, add_cached, &cd);
	if (err)
		rc = bt_cli_error(1, "%s: reading the probe cache: %s", spec->text, strerror(-err));
	else if (!cd.n)
		rc = bt_cli_error(1, "%s: no probe %s:%s in the probe cache of %s (buildtrace probe list)", spec->text,
				  spec->provider, spec->name, dir);
	c->cached = &cd;
	for (size_t i = 0; !rc && i < c->a->npids; i++) {
		struct bt_probe_spec byname = *spec;
		snprintf(byname.file, sizeof(byname.file), "%s", cd.v[0].path);
		int r = bt_probe_find_mapped("", c->a->pids[i], &byname, on_file, c);
		if (r == 1)
			rc = c->rc;
		else if (r < 0)
			rc = bt_cli_error(1, "%s: process %d: %s", spec->text, c->a->pids[i], strerror(-r));
	}
	if (!rc && c->a->npids && c->out->n == before)
		rc = bt_cli_error(1, "%s: no process given with -p maps %s", spec->text, cd.v[0].path);
	if (!rc && !c->a->npids) {
		struct bt_probe_spec byname = *spec;
		struct bt_probe_file f;
		char msg[1536];
		snprintf(byname.file, sizeof(byname.file), "%s", cd.v[0].path);
		byname.id.len = 0;
		rc = bt_probe_open_path(&byname, NULL, &f, msg, sizeof(msg)) ? bt_cli_error(1, "%s", msg) :
			place_in(c, &f);
	}
	c->cached = NULL;
	free(cd.v);
	return rc;
}

int bt_trace_resolve(const struct bt_trace_args *a, struct bt_trace_places *out)
{
	struct resolve_ctx c = { .a = a, .out = out, .so = { .cache_dir = a->cache_dir } };
	for (c.probe = 0; c.probe < a->nspecs; c.probe++) {
		const struct bt_probe_spec *spec = &a->specs[c.probe];
		int rc;
		if (spec->kind == BT_PROBE_CACHED) {
			if ((rc = resolve_cached(&c)))
				return rc;
			continue;
		}
		if (a->npids) {
			if ((rc = resolve_mapped(&c)))
				return rc;
			continue;
		}
		struct bt_probe_file f;
		struct bt_probe_spec in_cmd;
		char msg[1536];
		/* a marker without its file, for a command: the command's own file */
		if (spec->kind == BT_PROBE_SDT && !spec->file[0] && !spec->id.len && a->cmd && !a->all) {
			in_cmd = *spec;
			if (command_path(a->cmd[0], in_cmd.file, sizeof(in_cmd.file)))
				return bt_cli_error(127, "%s: command not found", a->cmd[0]);
			spec = &in_cmd;
		}
		if (bt_probe_open_path(spec, a->cache_dir, &f, msg, sizeof(msg)))
			return bt_cli_error(1, "%s", msg);
		if ((rc = place_in(&c, &f)))
			return rc;
	}
	return 0;
}

void bt_trace_places_free(struct bt_trace_places *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].file.fd >= 0)
			close(p->v[i].file.fd);
	free(p->v);
	p->v = NULL;
	p->n = p->cap = 0;
}
