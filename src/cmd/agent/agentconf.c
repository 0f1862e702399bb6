/* agentconf.c - the agent's settings: one table of keys, used by the config file and the command
 * line alike, each value checked where it is read. */
#include "cmd/agent/agentconf.h"
#include "cmd/net/serve.h"
#include "capture/callgraph.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/types.h>

#include "bt_proto.h"

void bt_agent_conf_defaults(struct bt_agent_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->output_dir, sizeof(c->output_dir), "/var/lib/buildtrace/profiles");
	c->interval_s = 60;
	c->freq_hz = 19;
	c->fmt_pprof = c->fmt_folded = true;
	c->max_files = 60;
	snprintf(c->app_name, sizeof(c->app_name), "buildtrace");
	c->spool_max_files = 100;
	c->spool_max_bytes = 64ULL << 20;
	c->evict_s = 600;
	c->ringbuf_bytes = 0;  /* sized from the rate and the CPUs */
	c->dwarf = !BT_CALL_GRAPH_DWARF_IS_BPF;
	c->bpf_unwind = BT_CALL_GRAPH_DWARF_IS_BPF;
	c->tls_verify = true;
	c->drain_s = 10;
	c->sample_labels = true;
}

static int say(char *err, size_t len, int code, const char *fmt, ...)
{
	if (err && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

static int copy(char *dst, size_t len, const char *key, const char *v, char *err, size_t errlen)
{
	if (strlen(v) >= len)
		return say(err, errlen, -ENAMETOOLONG, "%s: '%s' is too long (at most %zu bytes)", key, v, len - 1);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int parse_double(const char *v, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= lo && d <= hi))
		return -EINVAL;
	*out = d;
	return 0;
}

static int parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	uint64_t mult = 1;
	if (*end == 'K' || *end == 'k')
		mult = 1ULL << 10;
	else if (*end == 'M' || *end == 'm')
		mult = 1ULL << 20;
	else if (*end == 'G' || *end == 'g')
		mult = 1ULL << 30;
	if (mult != 1)
		end++;
	if (errno || *end || n > hi / mult || n * mult < lo || n * mult > hi)
		return -EINVAL;
	*out = n * mult;
	return 0;
}

/* Pyroscope's label and app names: letters, digits, '_', '-', '.' only (they go into a query). */
static bool name_ok(const char *s, bool dots)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && !(dots && *s == '.'))
			return false;
	return true;
}

/* The settings' parsers: key is the name the setting was given by (messages repeat it), v its
 * value; 0, or -errno with a message in err. */
static int set_output_dir(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return copy(c->output_dir, sizeof(c->output_dir), key, v, err, errlen);
}

static int set_interval(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (parse_double(v, 0.5, 86400, &c->interval_s))
		return say(err, errlen, -EINVAL, "interval: '%s' is not a number of seconds in 0.5..86400", v);
	return 0;
}

static int set_freq(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	uint64_t n;
	if (parse_u64(v, 1, 100000, &n))
		return say(err, errlen, -EINVAL, "frequency: '%s' is not 1..100000 Hz", v);
	c->freq_hz = (unsigned)n;
	return 0;
}

static int set_format(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	bool pp = false, fo = false;
	char buf[128];
	if (strlen(v) >= sizeof(buf))
		return say(err, errlen, -EINVAL, "format: '%s' is too long", v);
	strcpy(buf, v);
	char *save = NULL;
	for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		if (!strcmp(t, "pprof"))
			pp = true;
		else if (!strcmp(t, "folded"))
			fo = true;
		else
			return say(err, errlen, -EINVAL, "format: unknown format '%s' (pprof, folded)", t);
	}
	if (!pp && !fo)
		return say(err, errlen, -EINVAL, "format: none given (pprof, folded)");
	c->fmt_pprof = pp;
	c->fmt_folded = fo;
	return 0;
}

static int set_max_files(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	uint64_t n;
	if (parse_u64(v, 1, 1000000, &n))
		return say(err, errlen, -EINVAL, "max-files: '%s' is not 1..1000000", v);
	c->max_files = (unsigned)n;
	return 0;
}

static int set_push(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (*v && strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
		return say(err, errlen, -EINVAL, "push: '%s' is not an http:// or https:// URL", v);
	return copy(c->push_url, sizeof(c->push_url), key, v, err, errlen);
}

static int set_app_name(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (!name_ok(v, true))
		return say(err, errlen, -EINVAL, "app-name: '%s' may hold only letters, digits, '_', '-', '.'", v);
	return copy(c->app_name, sizeof(c->app_name), key, v, err, errlen);
}

static int set_label(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	const char *eq = strchr(v, '=');
	if (!eq || eq == v || !eq[1])
		return say(err, errlen, -EINVAL, "label: '%s' is not KEY=VALUE", v);
	if (c->nlabels == BT_AGENT_MAX_LABELS)
		return say(err, errlen, -E2BIG, "label: at most %d labels", BT_AGENT_MAX_LABELS);
	struct bt_push_label *l = &c->labels[c->nlabels];
	size_t kl = (size_t)(eq - v);
	if (kl >= sizeof(l->key) || strlen(eq + 1) >= sizeof(l->value))
		return say(err, errlen, -ENAMETOOLONG, "label: '%s' is too long", v);
	memcpy(l->key, v, kl);
	l->key[kl] = '\0';
	strcpy(l->value, eq + 1);
	if (!name_ok(l->key, false) || !name_ok(l->value, true))
		return say(err, errlen, -EINVAL, "label: '%s': names and values may hold only letters, "
			   "digits, '_', '-' (and '.' in values)", v);
	c->nlabels++;
	return 0;
}

static int set_call_graph(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (bt_call_graph_parse(v, &c->dwarf, &c->ustack_bytes, &c->bpf_unwind))
		return say(err, errlen, -EINVAL, "call-graph: '%s' is not dwarf, dwarf-bpf, dwarf-copy, "
			   "dwarf-copy,SIZE (bytes of stack per sample, a multiple of 8 from %d to %d) or fp", v, BT_USTACK_MIN,
			   BT_USTACK_MAX);
	return 0;
}

static int parse_bool(const char *key, const char *v, bool *out, char *err, size_t errlen)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return say(err, errlen, -EINVAL, "%s: '%s' is not yes or no", key, v);
	return 0;
}

static int set_lines(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return parse_bool(key, v, &c->lines, err, errlen);
}

static int set_push_format(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "pprof") && strcmp(v, "folded"))
		return say(err, errlen, -EINVAL, "push-format: '%s' is not pprof or folded", v);
	c->push_folded = !strcmp(v, "folded");
	return 0;
}

static int set_push_empty(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return parse_bool(key, v, &c->push_empty, err, errlen);
}

static int set_basic_auth_file(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return copy(c->basic_auth_file, sizeof(c->basic_auth_file), key, v, err, errlen);
}

static int set_bearer_token_file(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return copy(c->bearer_token_file, sizeof(c->bearer_token_file), key, v, err, errlen);
}

/* "Name: value": an HTTP token as the name, no control characters in the value (a CR or LF would
 * start another header). Authorization is refused: credentials come from files. */
static int set_header(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	const char *colon = strchr(v, ':');
	if (!colon || colon == v)
		return say(err, errlen, -EINVAL, "header: '%s' is not 'Name: value'", v);
	for (const char *s = v; s < colon; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return say(err, errlen, -EINVAL, "header: '%.*s' is not a header name", (int)(colon - v), v);
	for (const char *s = colon + 1; *s; s++)
		if ((unsigned char)*s < 0x20 && *s != '\t')
			return say(err, errlen, -EINVAL, "header: the value of '%.*s' holds a control character",
				   (int)(colon - v), v);
	if ((size_t)(colon - v) == 13 && !strncasecmp(v, "Authorization", 13))
		return say(err, errlen, -EINVAL, "header: Authorization comes from basic-auth-file or "
			   "bearer-token-file, not from a header setting");
	if (c->nheaders == BT_AGENT_MAX_HEADERS)
		return say(err, errlen, -E2BIG, "header: at most %d headers", BT_AGENT_MAX_HEADERS);
	int e = copy(c->headers[c->nheaders], sizeof(c->headers[0]), key, v, err, errlen);
	if (!e)
		c->nheaders++;
	return e;
}

static int set_ca_file(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return copy(c->ca_file, sizeof(c->ca_file), key, v, err, errlen);
}

static int set_tls_verify(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return parse_bool(key, v, &c->tls_verify, err, errlen);
}

static int set_sample_labels(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return parse_bool(key, v, &c->sample_labels, err, errlen);
}

static int set_idle(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return parse_bool(key, v, &c->idle, err, errlen);
}

static int set_listen(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	uint32_t a;
	uint16_t port;
	if (*v && bt_serve_parse_addr(v, &a, &port))
		return say(err, errlen, -EINVAL, "listen: '%s' is not ADDR:PORT (an IPv4 address) or PORT", v);
	return copy(c->listen, sizeof(c->listen), key, v, err, errlen);
}

static int set_push_drain(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (parse_double(v, 0, 3600, &c->drain_s))
		return say(err, errlen, -EINVAL, "push-drain: '%s' is not a number of seconds in 0..3600", v);
	return 0;
}

static int set_user(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return copy(c->user, sizeof(c->user), key, v, err, errlen);
}

static int set_spool_dir(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return copy(c->spool_dir, sizeof(c->spool_dir), key, v, err, errlen);
}

static int set_spool_max_files(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	uint64_t n;
	if (parse_u64(v, 1, 1000000, &n))
		return say(err, errlen, -EINVAL, "spool-max-files: '%s' is not 1..1000000", v);
	c->spool_max_files = (unsigned)n;
	return 0;
}

static int set_spool_max_bytes(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (parse_u64(v, 4096, 1ULL << 40, &c->spool_max_bytes))
		return say(err, errlen, -EINVAL, "spool-max-bytes: '%s' is not a size from 4K (K, M, G)", v);
	return 0;
}

static int set_status_file(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return copy(c->status_file, sizeof(c->status_file), key, v, err, errlen);
}

static int set_evict_after(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (parse_double(v, 1, 1e7, &c->evict_s))
		return say(err, errlen, -EINVAL, "evict-after: '%s' is not a number of seconds >= 1", v);
	return 0;
}

static int set_ringbuf_size(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	uint64_t n;
	if (parse_u64(v, 4096, 1ULL << 30, &n))
		return say(err, errlen, -EINVAL, "ringbuf-size: '%s' is not 4K..1G", v);
	c->ringbuf_bytes = (size_t)n;
	return 0;
}

/* Every setting: its name (the long option's), the other spelling config files may use, and its
 * parser. */
static const struct setting {
	const char *key, *alias;
	int (*set)(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen);
} settings[] = {
	{ "output-dir", "output_dir", set_output_dir },
	{ "interval", NULL, set_interval },
	{ "freq", "frequency", set_freq },
	{ "format", NULL, set_format },
	{ "max-files", "max_files", set_max_files },
	{ "push", NULL, set_push },
	{ "app-name", "app_name", set_app_name },
	{ "label", NULL, set_label },
	{ "call-graph", "call_graph", set_call_graph },
	{ "lines", NULL, set_lines },
	{ "user", NULL, set_user },
	{ "spool-dir", "spool_dir", set_spool_dir },
	{ "spool-max-files", "spool_max_files", set_spool_max_files },
	{ "spool-max-bytes", "spool_max_bytes", set_spool_max_bytes },
	{ "status-file", "status_file", set_status_file },
	{ "evict-after", "evict_after", set_evict_after },
	{ "ringbuf-size", "ringbuf_size", set_ringbuf_size },
	{ "push-format", "push_format", set_push_format },
	{ "push-empty", "push_empty", set_push_empty },
	{ "basic-auth-file", "basic_auth_file", set_basic_auth_file },
	{ "bearer-token-file", "bearer_token_file", set_bearer_token_file },
	{ "header", NULL, set_header },
	{ "ca-file", "ca_file", set_ca_file },
	{ "tls-verify", "tls_verify", set_tls_verify },
	{ "push-drain", "push_drain", set_push_drain },
	{ "sample-labels", "sample_labels", set_sample_labels },
	{ "idle", NULL, set_idle },
	{ "listen", NULL, set_listen },
};

int bt_agent_conf_set(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		const struct setting *st = &settings[i];
		if (!strcmp(key, st->key) || (st->alias && !strcmp(key, st->alias)))
			return st->set(c, key, v, err, errlen);
	}
	return say(err, errlen, -ENOENT, "unknown setting '%s'", key);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

int bt_agent_conf_load(struct bt_agent_conf *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return say(err, errlen, -errno, "cannot read %s: %s", path, strerror(errno));
	char line[2048], msg[512];
	unsigned lineno = 0;
	int rc = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			rc = say(err, errlen, -EINVAL, "%s:%u: line too long", path, lineno);
			break;
		}
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s = trim(line);
		if (!*s)
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			rc = say(err, errlen, -EINVAL, "%s:%u: expected 'key = value'", path, lineno);
			break;
		}
		*eq = '\0';
		char *key = trim(s), *val = trim(eq + 1);
		int e = bt_agent_conf_set(c, key, val, msg, sizeof(msg));
		if (e)
			rc = say(err, errlen, e == -ENOENT ? -EINVAL : e, "%s:%u: %s", path, lineno, msg);
	}
	if (!rc && ferror(f))
		rc = say(err, errlen, -EIO, "cannot read %s", path);
	fclose(f);
	return rc;
}

int bt_agent_conf_finish(struct bt_agent_conf *c, char *err, size_t errlen)
{
	if (!c->output_dir[0] || c->output_dir[0] != '/')
		return say(err, errlen, -EINVAL, "output-dir: '%s' is not an absolute path", c->output_dir);
	if (!c->spool_dir[0] &&
	    snprintf(c->spool_dir, sizeof(c->spool_dir), "%s/spool", c->output_dir) >= (int)sizeof(c->spool_dir))
		return say(err, errlen, -EINVAL, "output-dir: too long");
	if (!c->status_file[0] &&
	    snprintf(c->status_file, sizeof(c->status_file), "%s/status.json", c->output_dir) >=
		    (int)sizeof(c->status_file))
		return say(err, errlen, -EINVAL, "output-dir: too long");
	if (c->basic_auth_file[0] && c->bearer_token_file[0])
		return say(err, errlen, -EINVAL, "basic-auth-file and bearer-token-file: set one, not both");
	/* Pyroscope reads from and until in whole seconds: shorter intervals could not tile. */
	if (c->push_url[0] && c->interval_s < 1)
		return say(err, errlen, -EINVAL, "interval: at least 1 s when pushing (the server reads "
			   "whole seconds)");
	return 0;
}
