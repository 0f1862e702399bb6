/* agentconf.c - the agent's settings: one table of keys, used by the config file and the command
 * line alike, each value checked where it is read. */
#include "cmd/agent/agentconf.h"
#include "cmd/net/serve.h"
#include "capture/callgraph.h"
#include "capture/capture.h"
#include "session/relabel.h"
#include "base/safeopen.h"
#include "base/trustdir.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
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
	c->spool_max_files = 100;
	c->spool_max_bytes = 64ULL << 20;
	c->process_data_max = BT_AGENT_PROCESS_DATA;
	c->evict_s = 600;
	c->ringbuf_bytes = 0;  /* sized from the rate and the CPUs */
	c->dwarf = !BT_CALL_GRAPH_DWARF_IS_BPF;
	c->bpf_unwind = BT_CALL_GRAPH_DWARF_IS_BPF;
	c->tls_verify = true;
	c->drain_s = 10;
	c->sample_labels = true;
	c->max_series = 100;
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
		return say(err, errlen, -EINVAL, "%s: '%s' is not 1..100000 Hz", key, v);
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
	char shown[BT_AGENT_STR];
	bt_push_redact_url(v, shown, sizeof(shown));
	if (*v && strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
		return say(err, errlen, -EINVAL, "push: '%s' is not an http:// or https:// URL", shown);
	return copy(c->push_url, sizeof(c->push_url), key, v, err, errlen);
}

static int set_app_name(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (*v && !name_ok(v, true))
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
	if (!bt_label_name_ok(l->key) || !name_ok(l->value, true))
		return say(err, errlen, -EINVAL, "label: '%s': names may hold only letters, digits and '_' (not "
			   "first), values letters, digits, '_', '-' and '.'", v);
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

static int set_off_cpu(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return parse_bool(key, v, &c->off_cpu, err, errlen);
}

static int set_idle(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return parse_bool(key, v, &c->idle, err, errlen);
}

static int set_listen(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	uint32_t a;
	uint16_t port;
	bool unix_path = !strncmp(v, "unix:/", 6) && strlen(v + 5) < 108;
	if (*v && !unix_path && bt_serve_parse_addr(v, &a, &port))
		return say(err, errlen, -EINVAL, "listen: '%s' is not ADDR:PORT (an IPv4 address), PORT or "
			   "unix:/ABSOLUTE/PATH", v);
	return copy(c->listen, sizeof(c->listen), key, v, err, errlen);
}

static int set_listen_token_file(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	return copy(c->listen_token_file, sizeof(c->listen_token_file), key, v, err, errlen);
}

static int set_listen_host(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-')
			return say(err, errlen, -EINVAL, "listen-host: '%s' is not a host name", v);
	return copy(c->listen_host, sizeof(c->listen_host), key, v, err, errlen);
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

static int set_process_data_max(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (parse_u64(v, 1ULL << 20, 1ULL << 40, &c->process_data_max))
		return say(err, errlen, -EINVAL, "process-data-max: '%s' is not a size from 1M (K, M, G)", v);
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
	if (parse_u64(v, BT_RINGBUF_SIZE_MIN, BT_RINGBUF_SIZE_MAX, &n))
		return say(err, errlen, -EINVAL, "ringbuf-size: '%s' is not 4K..1G", v);
	c->ringbuf_bytes = (size_t)n;
	return 0;
}

/* A rule is checked as it is read (its line named if it is wrong); the agent compiles them again. */
static int set_relabel(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	if (c->nrelabel == BT_AGENT_MAX_RULES)
		return say(err, errlen, -E2BIG, "relabel: at most %d rules", BT_AGENT_MAX_RULES);
	struct bt_relabel r;
	bt_relabel_init(&r);
	char msg[384];
	int e = bt_relabel_add(&r, v, msg, sizeof(msg));
	bt_relabel_free(&r);
	if (e)
		return say(err, errlen, e, "relabel: %s", msg);
	e = copy(c->relabel[c->nrelabel], sizeof(c->relabel[0]), key, v, err, errlen);
	if (!e)
		c->nrelabel++;
	return e;
}

/* Names of environment variables, joined by commas. */
static int set_target_env(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	char buf[1024], *save = NULL;
	if (strlen(v) >= sizeof(buf))
		return say(err, errlen, -EINVAL, "target-env: too long");
	strcpy(buf, v);
	for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		if (!bt_label_name_ok(t) || strlen(t) >= sizeof(c->target_env[0]))
			return say(err, errlen, -EINVAL, "target-env: '%s' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", t);
		bool dup = false;
		for (size_t i = 0; i < c->ntarget_env; i++)
			dup |= !strcmp(c->target_env[i], t);
		if (dup)
			continue;
		if (c->ntarget_env == BT_AGENT_MAX_ENV)
			return say(err, errlen, -E2BIG, "target-env: at most %d variables", BT_AGENT_MAX_ENV);
		strcpy(c->target_env[c->ntarget_env++], t);
	}
	return 0;
}

static int set_max_series(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	uint64_t n;
	if (parse_u64(v, 1, 100000, &n))
		return say(err, errlen, -EINVAL, "max-series: '%s' is not 1..100000", v);
	c->max_series = (unsigned)n;
	return 0;
}

/* Every setting, in the order --help and buildtrace-agent.conf(5) list them: its key (also its long
 * option, --KEY VALUE), what --help says of it, the other spelling config files may use, and its
 * parser. A setting added here is read from config files and the command line, listed by --help
 * and the man pages, completed by the shell; tools/check-docs.py then wants it in
 * tools/agent.conf.example and in the README's table of the agent's options. */
typedef int (*setter)(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen);
static const struct setting {
	struct bt_opt opt;
	const char *alias;
	setter set;
} settings[] = {
	{ { .name = "output-dir", .arg = "DIR", .help = "where each interval's profiles (timestamped names), "
	    "status.json and the spool go", .def = "/var/lib/buildtrace/profiles", .values = "@dir" },
	  "output_dir", set_output_dir },
	{ { .name = "interval", .arg = "SECONDS", .help = "one profile per format every this long, 0.5 to "
	    "86400 (at least 1 when pushing)", .def = "60" }, NULL, set_interval },
	{ { 'F', "freq", "HZ", "samples per second per CPU, 1 to 100000 (and at most "
	    "kernel.perf_event_max_sample_rate)", .def = "19" }, "frequency", set_freq },
	{ { .name = "format", .arg = "LIST", .help = "the formats written every interval: pprof, folded or "
	    "both", .def = "pprof,folded", .values = "pprof,folded pprof folded" }, NULL, set_format },
	{ { .name = "max-files", .arg = "N", .help = "profiles kept per format, the oldest removed",
	    .def = "60" }, "max_files", set_max_files },
	{ { .name = "push", .arg = "URL", .help = "also send each interval's profile to this "
	    "Pyroscope-compatible server (POST /ingest), such as http://pyroscope:4040" }, NULL, set_push },
	{ { .name = "app-name", .arg = "NAME", .help = "the service_name of processes no relabel rule "
	    "names (default: inferred as Grafana Alloy does, else unspecified)" }, "app_name", set_app_name },
	{ { .name = "label", .arg = "KEY=VALUE", .help = "a label of the pushed series (repeatable, up to "
	    "16): every target starts with it, and rules may change it" }, NULL, set_label },
	{ { .name = "push-format", .arg = "pprof|folded", .help = "what is pushed", .def = "pprof",
	    .values = "pprof folded" }, "push_format", set_push_format },
	{ { .name = "push-empty", .arg = "yes|no", .help = "push intervals without samples too",
	    .def = "no", .values = "yes no" }, "push_empty", set_push_empty },
	{ { .name = "spool-dir", .arg = "DIR", .help = "where profiles wait to be pushed, across restarts "
	    "(default OUTPUT-DIR/spool)", .values = "@dir" }, "spool_dir", set_spool_dir },
	{ { .name = "spool-max-files", .arg = "N", .help = "profiles the spool holds at most, the oldest "
	    "dropped and counted", .def = "100" }, "spool_max_files", set_spool_max_files },
	{ { .name = "spool-max-bytes", .arg = "SIZE", .help = "bytes the spool holds at most (K, M, G)",
	    .def = "64M" }, "spool_max_bytes", set_spool_max_bytes },
	{ { .name = "push-drain", .arg = "SECONDS", .help = "at SIGTERM, how long the spool goes on being "
	    "sent, 0 to 3600", .def = "10" }, "push_drain", set_push_drain },
	{ { .name = "basic-auth-file", .arg = "FILE", .help = "a file holding USER:PASSWORD for the server, "
	    "read at start and on SIGHUP", .values = "@file" }, "basic_auth_file", set_basic_auth_file },
	{ { .name = "bearer-token-file", .arg = "FILE", .help = "a file holding a bearer token for the "
	    "server, read at start and on SIGHUP", .values = "@file" }, "bearer_token_file",
	  set_bearer_token_file },
	{ { .name = "header", .arg = "'NAME: VALUE'", .help = "an HTTP header for the server, such as "
	    "'X-Scope-OrgID: team-a' (repeatable, up to 8; never Authorization)" }, NULL, set_header },
	{ { .name = "ca-file", .arg = "FILE", .help = "the certificates to verify the server's with "
	    "(default: the system's)", .values = "@file" }, "ca_file", set_ca_file },
	{ { .name = "tls-verify", .arg = "yes|no", .help = "verify the server's certificate", .def = "yes",
	    .values = "yes no" }, "tls_verify", set_tls_verify },
	{ { .name = "listen", .arg = "ADDR:PORT", .help = "serve /debug/pprof/profile?seconds=N, "
	    "/debug/pprof/latest, /metrics and /healthz over HTTP (PORT alone: on 127.0.0.1), which needs "
	    "listen-token-file; unix:PATH: on a socket of mode 0600 that answers root and the agent's user "
	    "only" }, NULL, set_listen },
	{ { .name = "listen-token-file", .arg = "FILE", .help = "a file holding the token every pull request "
	    "but /healthz carries (Authorization: Bearer TOKEN), 16 characters at least, mode 0600",
	    .values = "@file" }, "listen_token_file", set_listen_token_file },
	{ { .name = "listen-host", .arg = "NAME", .help = "a host name the Host header of pull requests may "
	    "give besides IP addresses and localhost (no other, against DNS rebinding)" }, "listen_host",
	  set_listen_host },
	{ { .name = "call-graph", .arg = "dwarf|dwarf-bpf|dwarf-copy[,SIZE]|fp", .help = "how user stacks "
	    "are walked, as buildtrace --call-graph says", .def = "dwarf",
	    .values = "dwarf dwarf-bpf dwarf-copy fp" }, "call_graph", set_call_graph },
	{ { .name = "lines", .arg = "yes|no", .help = "source lines and inlined functions in pprof "
	    "profiles, from the DWARF of each build-id", .def = "no", .values = "yes no" }, NULL, set_lines },
	{ { .name = "sample-labels", .arg = "yes|no", .help = "label each sample with pid, tid, comm, "
	    "thread, exe, build_id, cgroup and container_id", .def = "yes", .values = "yes no" },
	  "sample_labels", set_sample_labels },
	{ { .name = "idle", .arg = "yes|no", .help = "count the samples of idle CPUs too, as swapper/N",
	    .def = "no", .values = "yes no" }, NULL, set_idle },
	{ { .name = "off-cpu", .arg = "yes|no", .help = "also where threads wait: off-CPU time in "
	    "nanoseconds, a profile type of its own (files buildtrace-off_cpu-TIME, pushed as APP.off_cpu, "
	    "served on /debug/pprof/off_cpu?seconds=N and /debug/pprof/latest_off_cpu)", .def = "no",
	    .values = "yes no" }, "off_cpu", set_off_cpu },
	{ { .name = "process-data-max", .arg = "SIZE", .help = "what the profiled processes' perf maps, "
	    "jitdumps and Python code objects may make the agent hold, all of them together, 1M to 1024G "
	    "(no one process's map more than a quarter; what is refused is counted)", .def = "64M" },
	  "process_data_max", set_process_data_max },
	{ { .name = "evict-after", .arg = "SECONDS", .help = "free the symbol tables no interval used for "
	    "this long", .def = "600" }, "evict_after", set_evict_after },
	{ { .name = "ringbuf-size", .arg = "SIZE", .help = "the BPF ring buffer, 4K to 1G (by default sized "
	    "from the rate and the CPUs)" }, "ringbuf_size", set_ringbuf_size },
	{ { .name = "status-file", .arg = "FILE", .help = "where the agent's health is written (default "
	    "OUTPUT-DIR/status.json)", .values = "@file" }, "status_file", set_status_file },
	{ { .name = "user", .arg = "USER", .help = "run as this user once the BPF programs are attached",
	    .values = "@user" }, NULL, set_user },
	{ { .name = "relabel", .arg = "RULE", .help = "a relabeling rule over each process's __meta_* "
	    "labels, as Prometheus' relabel_config: key=value fields action, source_labels, separator, "
	    "regex, modulus, target_label, replacement (repeatable, up to 64, applied in order)" },
	  NULL, set_relabel },
	{ { .name = "target-env", .arg = "NAMES", .help = "environment variables read as "
	    "__meta_process_env_NAME, from processes whose owner could read them (names joined by commas; "
	    "up to 16)" }, "target_env", set_target_env },
	{ { .name = "max-series", .arg = "N", .help = "series per interval, 1 to 100000; the label sets "
	    "beyond fold into one with service_name=other", .def = "100" }, "max_series", set_max_series },
};

#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

size_t bt_agent_conf_options(struct bt_opt *out, size_t max, int first)
{
	size_t n = 0;
	for (size_t i = 0; i < NSETTINGS && n < max; i++, n++) {
		out[n] = settings[i].opt;
		if (!out[n].id)
			out[n].id = first + (int)i;
	}
	return n;
}

const char *bt_agent_conf_alias(const char *key)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		if (!strcmp(settings[i].opt.name, key))
			return settings[i].alias;
	return NULL;
}

int bt_agent_conf_set(struct bt_agent_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	for (size_t i = 0; i < NSETTINGS; i++) {
		const struct setting *st = &settings[i];
		if (!strcmp(key, st->opt.name) || (st->alias && !strcmp(key, st->alias)))
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

/* The config file, opened only as a regular file and taken only when no one but root and us may
 * change it (as sshd takes its own): a file someone else could write would decide where profiles
 * go and which server receives them. */
static int open_config(const char *path, FILE **out, char *err, size_t errlen)
{
	char why[PATH_MAX + 64];
	int fd = bt_open_regular(AT_FDCWD, path, 0, NULL);
	if (fd < 0)
		return say(err, errlen, fd, "cannot read %s: %s", path,
			   fd == -EINVAL ? "not a regular file" : strerror(-fd));
	int e = bt_file_trusted(fd, path, false, why, sizeof(why));
	if (e == -EPERM)
		say(err, errlen, e, "config file %s refused: %s (it must be root's or ours, and writable by no "
		    "one else)", path, why);
	else if (e)
		say(err, errlen, e, "cannot read %s: %s", path, strerror(-e));
	else if (!(*out = fdopen(fd, "re")))
		e = say(err, errlen, -errno, "cannot read %s: %s", path, strerror(errno));
	if (e)
		close(fd);
	return e;
}

int bt_agent_conf_load(struct bt_agent_conf *c, const char *path, char *err, size_t errlen)
{
	FILE *f = NULL;
	int oe = open_config(path, &f, err, errlen);
	if (oe)
		return oe;
	char line[2048], msg[512];
	unsigned lineno = 0;
	int rc = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			rc = say(err, errlen, -EINVAL, "%s:%u: line too long", path, lineno);
			break;
		}
		/* a comment starts at '#', but not inside double quotes (a rule's quoted regex) */
		bool quoted = false;
		for (char *h = line; *h; h++) {
			if (*h == '"' && (h == line || h[-1] != '\\'))
				quoted = !quoted;
			else if (*h == '#' && !quoted) {
				*h = '\0';
				break;
			}
		}
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
	/* the profiles name every process and path on the machine: on TCP, which every local user
	 * reaches, only for those who hold the token */
	if (c->listen[0] && strncmp(c->listen, "unix:", 5) && !c->listen_token_file[0])
		return say(err, errlen, -EINVAL, "listen on %s needs listen-token-file (a token clients send), "
			   "or listen on unix:PATH (root and the agent's user only)", c->listen);
	/* Pyroscope reads from and until in whole seconds: shorter intervals could not tile. */
	if (c->push_url[0] && c->interval_s < 1)
		return say(err, errlen, -EINVAL, "interval: at least 1 s when pushing (the server reads "
			   "whole seconds)");
	return 0;
}
