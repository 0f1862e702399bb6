/* test_agentconf.c - the agent's settings: defaults, every key from a file and from options, and bad
 * values refused with a message naming the key (and the file's line). */
#include "testutil.h"
#include "cmd/agent/agentconf.h"
#include "cmd/net/serve.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_conf(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A config file's path in a directory of the test's own (a file directly in /tmp, which anyone may
 * write, would be refused); remove_conf removes both. */
static void new_conf(char *path)
{
	char dir[] = "/tmp/bt-agentconf-XXXXXX";
	assert_non_null(mkdtemp(dir));
	sprintf(path, "%s/agent.conf", dir);
}

static void remove_conf(const char *path)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "%s", path);
	unlink(path);
	*strrchr(dir, '/') = '\0';
	rmdir(dir);
}

static void agentconf__defaults__documented_values(void **state)
{
	struct bt_agent_conf c;
	char err[256];
	bt_agent_conf_defaults(&c);
	assert_int_equal(bt_agent_conf_finish(&c, err, sizeof(err)), 0);
	assert_string_equal(c.output_dir, "/var/lib/buildtrace/profiles");
	assert_true(c.interval_s == 60);
	assert_int_equal(c.freq_hz, 19);
	assert_true(c.fmt_pprof && c.fmt_folded);
	assert_string_equal(c.spool_dir, "/var/lib/buildtrace/profiles/spool");
	assert_string_equal(c.status_file, "/var/lib/buildtrace/profiles/status.json");
	assert_string_equal(c.push_url, "");
	/* call frame information, walked in BPF */
	assert_true(c.bpf_unwind && !c.dwarf);
	assert_false(c.lines);
	assert_false(c.push_folded);
	assert_false(c.push_empty);
	assert_true(c.tls_verify);
	assert_true(c.drain_s == 10);
	assert_int_equal(c.nheaders, 0);
}

static void agentconf__file__every_key_read(void **state)
{
	char path[64];
	new_conf(path);
	write_conf(path, "# comment\n\noutput-dir = /srv/prof   # trailing comment\ninterval=30\n"
		   "frequency = 49\nformat = pprof\nmax-files = 7\npush = http://pyro:4040\n"
		   "app-name = web.api\nlabel = env=prod\nlabel = region=eu-1\nuser = nobody\n"
		   "spool-max-files = 5\nspool-max-bytes = 2M\nevict-after = 120\nringbuf-size = 8M\ncall-graph = fp\n"
		   "lines = yes\n");
	struct bt_agent_conf c;
	char err[256] = "";
	bt_agent_conf_defaults(&c);
	assert_int_equal(bt_agent_conf_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_finish(&c, err, sizeof(err)), 0);
	assert_string_equal(c.output_dir, "/srv/prof");
	assert_true(c.interval_s == 30);
	assert_int_equal(c.freq_hz, 49);
	assert_true(c.fmt_pprof && !c.fmt_folded);
	assert_int_equal(c.max_files, 7);
	assert_string_equal(c.push_url, "http://pyro:4040");
	assert_string_equal(c.app_name, "web.api");
	assert_int_equal(c.nlabels, 2);
	assert_string_equal(c.labels[1].key, "region");
	assert_string_equal(c.labels[1].value, "eu-1");
	assert_string_equal(c.user, "nobody");
	assert_int_equal(c.spool_max_files, 5);
	assert_int_equal(c.spool_max_bytes, 2 << 20);
	assert_true(c.evict_s == 120);
	assert_int_equal(c.ringbuf_bytes, 8 << 20);
	assert_false(c.dwarf || c.bpf_unwind);
	assert_true(c.lines);
	assert_string_equal(c.spool_dir, "/srv/prof/spool");
	assert_int_equal(bt_agent_conf_set(&c, "call-graph", "dwarf,32768", err, sizeof(err)), 0);
	assert_true(c.dwarf && !c.bpf_unwind);
	assert_int_equal(c.ustack_bytes, 32768);
	assert_int_equal(bt_agent_conf_set(&c, "call-graph", "dwarf-bpf", err, sizeof(err)), 0);
	assert_true(c.bpf_unwind && !c.dwarf);
	/* an option given after the file wins */
	assert_int_equal(bt_agent_conf_set(&c, "interval", "5", err, sizeof(err)), 0);
	assert_true(c.interval_s == 5);
	remove_conf(path);
}

static void agentconf__bad_values__named_errors(void **state)
{
	static const struct { const char *key, *value, *says; int code; } bad[] = {
		{ "interval", "0", "interval", -EINVAL },
		{ "interval", "soon", "interval", -EINVAL },
		{ "freq", "0", "freq: '0'", -EINVAL },
		{ "frequency", "0", "frequency: '0'", -EINVAL },
		{ "format", "svg", "unknown format 'svg'", -EINVAL },
		{ "max-files", "-1", "max-files", -EINVAL },
		{ "push", "ftp://x", "not an http", -EINVAL },
		{ "label", "novalue", "KEY=VALUE", -EINVAL },
		{ "label", "a b=c", "letters", -EINVAL },
		{ "app-name", "a{b}", "letters", -EINVAL },
		{ "spool-max-bytes", "12Q", "spool-max-bytes", -EINVAL },
		{ "call-graph", "lbr", "call-graph", -EINVAL },
		{ "call-graph", "dwarf,100", "call-graph: 'dwarf,100'", -EINVAL },
		{ "call-graph", "dwarf,16385", "multiple of 8", -EINVAL },
		{ "call-graph", "dwarf,", "call-graph", -EINVAL },
		{ "lines", "maybe", "lines: 'maybe' is not yes or no", -EINVAL },
		{ "colour", "blue", "unknown setting 'colour'", -ENOENT },
		{ "push-format", "json", "push-format: 'json'", -EINVAL },
		{ "push-empty", "sometimes", "push-empty", -EINVAL },
		{ "tls-verify", "off-ish", "tls-verify", -EINVAL },
		{ "push-drain", "-1", "push-drain", -EINVAL },
		{ "header", "X-Scope-OrgID", "'Name: value'", -EINVAL },
		{ "header", "X Scope: a", "not a header name", -EINVAL },
		{ "header", "X-A: b\r\nX-Evil: c", "control character", -EINVAL },
		{ "header", "authorization: Bearer x", "basic-auth-file", -EINVAL },
		{ "listen", "localhost:80", "listen: 'localhost:80'", -EINVAL },
		{ "listen", "127.0.0.1:70000", "listen", -EINVAL },
		{ "listen", "127.0.0.1:", "listen", -EINVAL },
		{ "listen", "1.2.3:80", "listen", -EINVAL },
		{ "idle", "sometimes", "idle", -EINVAL },
		{ "off-cpu", "maybe", "off-cpu", -EINVAL },
		{ "sample-labels", "all", "sample-labels", -EINVAL },
		{ "label", "a-b=c", "names may hold only", -EINVAL },
		{ "relabel", "action=explode", "relabel: unknown action 'explode'", -EINVAL },
		{ "relabel", "regex=a*? target_label=x", "relabel: regex 'a*?'", -EINVAL },
		{ "relabel", "action=replace", "relabel: replace needs a target_label", -EINVAL },
		{ "target-env", "OTEL-NAME", "target-env: 'OTEL-NAME'", -EINVAL },
		{ "max-series", "0", "max-series", -EINVAL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bt_agent_conf c;
		char err[256] = "";
		bt_agent_conf_defaults(&c);
		assert_int_equal(bt_agent_conf_set(&c, bad[i].key, bad[i].value, err, sizeof(err)), bad[i].code);
		if (!strstr(err, bad[i].says))
			fail_msg("%s = %s: message '%s' lacks '%s'", bad[i].key, bad[i].value, err, bad[i].says);
	}
	struct bt_agent_conf c;
	char err[256];
	bt_agent_conf_defaults(&c);
	for (int i = 0; i < BT_AGENT_MAX_LABELS; i++)
		assert_int_equal(bt_agent_conf_set(&c, "label", "k=v", err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_set(&c, "label", "k=v", err, sizeof(err)), -E2BIG);
	bt_agent_conf_defaults(&c);
	assert_int_equal(bt_agent_conf_set(&c, "output-dir", "relative/dir", err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "absolute"));
	/* one kind of credentials; whole-second intervals when pushing */
	bt_agent_conf_defaults(&c);
	assert_int_equal(bt_agent_conf_set(&c, "basic-auth-file", "/etc/a", err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_set(&c, "bearer-token-file", "/etc/b", err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not both"));
	bt_agent_conf_defaults(&c);
	assert_int_equal(bt_agent_conf_set(&c, "interval", "0.5", err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_finish(&c, err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_set(&c, "push", "http://x:4040", err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "whole seconds"));
	bt_agent_conf_defaults(&c);
	for (int i = 0; i < BT_AGENT_MAX_HEADERS; i++)
		assert_int_equal(bt_agent_conf_set(&c, "header", "X-A: b", err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_set(&c, "header", "X-A: b", err, sizeof(err)), -E2BIG);
}

static void agentconf__push_keys__read(void **state)
{
	char path[64];
	new_conf(path);
	write_conf(path, "push = https://pyro:4040\npush-format = folded\npush-empty = yes\n"
		   "bearer-token-file = /etc/buildtrace/token\nheader = X-Scope-OrgID: team-a\n"
		   "header = X-Other:\tv 1\nca-file = /etc/ssl/ca.pem\ntls-verify = no\npush-drain = 2.5\n");
	struct bt_agent_conf c;
	char err[256] = "";
	bt_agent_conf_defaults(&c);
	assert_int_equal(bt_agent_conf_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_finish(&c, err, sizeof(err)), 0);
	remove_conf(path);
	assert_true(c.push_folded && c.push_empty && !c.tls_verify);
	assert_true(c.drain_s == 2.5);
	assert_string_equal(c.bearer_token_file, "/etc/buildtrace/token");
	assert_string_equal(c.basic_auth_file, "");
	assert_int_equal(c.nheaders, 2);
	assert_string_equal(c.headers[0], "X-Scope-OrgID: team-a");
	assert_string_equal(c.headers[1], "X-Other:\tv 1");
	assert_string_equal(c.ca_file, "/etc/ssl/ca.pem");
	/* the pull endpoint and the other sampling keys */
	assert_true(c.sample_labels && !c.idle && !c.listen[0] && !c.off_cpu);
	assert_int_equal(bt_agent_conf_set(&c, "listen", "9000", err, sizeof(err)), 0);
	assert_string_equal(c.listen, "9000");
	assert_int_equal(bt_agent_conf_set(&c, "listen", "0.0.0.0:4242", err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_set(&c, "idle", "yes", err, sizeof(err)), 0);
	assert_int_equal(bt_agent_conf_set(&c, "off-cpu", "yes", err, sizeof(err)), 0);
	assert_true(c.off_cpu);
	assert_int_equal(bt_agent_conf_set(&c, "sample-labels", "no", err, sizeof(err)), 0);
	assert_true(c.idle && !c.sample_labels);
	uint32_t a;
	uint16_t port;
	assert_int_equal(bt_serve_parse_addr("9000", &a, &port), 0);
	assert_int_equal(port, 9000);
	assert_int_equal(a, htonl(INADDR_LOOPBACK));
	assert_int_equal(bt_serve_parse_addr("10.1.2.3:80", &a, &port), 0);
	assert_int_equal(a, htonl(0x0a010203));
	assert_int_equal(bt_serve_parse_addr(":-1", &a, &port), -EINVAL);
}

/* The targets' settings: rules in order (a '#' inside a quoted value is no comment), environment
 * names, the series bound; defaults. */
static void agentconf__targets_keys__read(void **state)
{
	char path[64];
	new_conf(path);
	write_conf(path, "relabel = action=drop source_labels=__meta_process_comm regex=sh|bash  # shells\n"
		   "relabel = source_labels=__meta_process_commandline regex=\".*#(\\w+)\" target_label=tag\n"
		   "target-env = OTEL_SERVICE_NAME, DEPLOY_ENV\ntarget-env = OTEL_SERVICE_NAME\nmax-series = 7\n");
	struct bt_agent_conf c;
	char err[256] = "";
	bt_agent_conf_defaults(&c);
	assert_string_equal(c.app_name, "");
	assert_int_equal(c.max_series, 100);
	assert_int_equal(c.nrelabel, 0);
	if (bt_agent_conf_load(&c, path, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(c.nrelabel, 2);
	assert_string_equal(c.relabel[0], "action=drop source_labels=__meta_process_comm regex=sh|bash");
	assert_string_equal(c.relabel[1], "source_labels=__meta_process_commandline regex=\".*#(\\w+)\" target_label=tag");
	assert_int_equal(c.ntarget_env, 2);
	assert_string_equal(c.target_env[1], "DEPLOY_ENV");
	assert_int_equal(c.max_series, 7);
	/* a bad rule is named with its line */
	write_conf(path, "interval = 5\nrelabel = action=keep regex=(\n");
	bt_agent_conf_defaults(&c);
	assert_int_equal(bt_agent_conf_load(&c, path, err, sizeof(err)), -EINVAL);
	if (!strstr(err, ":2: relabel: regex '('"))
		fail_msg("'%s'", err);
	remove_conf(path);
}

/* The example config file reads as it is, and with its commented rules and settings turned on. */
static void agentconf__example_file__reads(void **state)
{
	struct bt_agent_conf c;
	char err[256] = "";
	bt_agent_conf_defaults(&c);
	if (bt_agent_conf_load(&c, "tools/agent.conf.example", err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(bt_test_run(NULL, 0, "sed 's/^#\\(relabel\\|target-env\\|app-name\\|label\\) =/\\1 =/' "
				     "tools/agent.conf.example > build/tests/agent.conf.on"), 0);
	bt_agent_conf_defaults(&c);
	if (bt_agent_conf_load(&c, "build/tests/agent.conf.on", err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(c.nrelabel >= 6);
	assert_int_equal(c.ntarget_env, 1);
	assert_string_equal(c.app_name, "web");
}

static void agentconf__bad_file__line_named(void **state)
{
	char path[64];
	new_conf(path);
	struct bt_agent_conf c;
	char err[256];
	write_conf(path, "interval = 5\nthis line has no equals sign\n");
	bt_agent_conf_defaults(&c);
	assert_int_equal(bt_agent_conf_load(&c, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: expected 'key = value'"));
	write_conf(path, "\n\nfrequency = lots\n");
	assert_int_equal(bt_agent_conf_load(&c, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":3: frequency"));
	remove_conf(path);
	assert_int_equal(bt_agent_conf_load(&c, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot read"));
}

/* Each setting is an option with a value and a help text, and the default its table documents
 * (what --help, the man page and the example config say) is the default the agent starts with:
 * setting it changes nothing. */
static void agentconf__documented_defaults__are_the_defaults(void **state)
{
	struct bt_opt opts[BT_OPTS_MAX];
	size_t n = bt_agent_conf_options(opts, BT_OPTS_MAX, 1000), with_def = 0;
	assert_true(n >= 28);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(opts[i].name);
		assert_non_null(opts[i].arg);
		assert_non_null(opts[i].help);
		assert_true(opts[i].id == 'F' || opts[i].id == 1000 + (int)i);
		if (!opts[i].def)
			continue;
		struct bt_agent_conf def, set;
		char err[256] = "";
		bt_agent_conf_defaults(&def);
		bt_agent_conf_defaults(&set);
		if (bt_agent_conf_set(&set, opts[i].name, opts[i].def, err, sizeof(err)))
			fail_msg("%s = %s: %s", opts[i].name, opts[i].def, err);
		if (memcmp(&def, &set, sizeof(def)))
			fail_msg("%s = %s is documented as the default, but is not", opts[i].name, opts[i].def);
		with_def++;
		const char *alias = bt_agent_conf_alias(opts[i].name);
		if (alias)
			assert_int_equal(bt_agent_conf_set(&set, alias, opts[i].def, err, sizeof(err)), 0);
	}
	assert_true(with_def >= 15);
	/* one that is not the default is seen */
	struct bt_agent_conf def, set;
	char err[256];
	bt_agent_conf_defaults(&def);
	bt_agent_conf_defaults(&set);
	assert_int_equal(bt_agent_conf_set(&set, "max-files", "61", err, sizeof(err)), 0);
	assert_true(memcmp(&def, &set, sizeof(def)) != 0);
}

/* Where a setting's help states a range ("0.5 to 86400", "4K to 1G"), both ends are accepted and,
 * for plain numbers, what lies just outside is refused. */
static void agentconf__documented_ranges__are_the_ranges(void **state)
{
	struct bt_opt opts[BT_OPTS_MAX];
	size_t n = bt_agent_conf_options(opts, BT_OPTS_MAX, 1000), ranges = 0;
	for (size_t i = 0; i < n; i++) {
		const char *to = strstr(opts[i].help, " to ");
		if (!to)
			continue;
		const char *a = to;
		while (a > opts[i].help && a[-1] != ' ')
			a--;
		char lo[32], hi[32], err[256];
		if (sscanf(a, "%31[0-9.KMG] to %31[0-9.KMG]", lo, hi) != 2)
			continue;
		struct bt_agent_conf c;
		bt_agent_conf_defaults(&c);
		if (bt_agent_conf_set(&c, opts[i].name, lo, err, sizeof(err)) ||
		    bt_agent_conf_set(&c, opts[i].name, hi, err, sizeof(err)))
			fail_msg("%s: %s to %s documented, refused: %s", opts[i].name, lo, hi, err);
		ranges++;
		if (strpbrk(lo, "KMG") || strpbrk(hi, "KMG"))
			continue;
		char below[48], above[48];
		snprintf(below, sizeof(below), "%g", atof(lo) - (strchr(lo, '.') ? 0.1 : 1));
		snprintf(above, sizeof(above), "%g", atof(hi) + 1);
		if (!bt_agent_conf_set(&c, opts[i].name, below, err, sizeof(err)) ||
		    !bt_agent_conf_set(&c, opts[i].name, above, err, sizeof(err)))
			fail_msg("%s: %s to %s documented, %s or %s accepted", opts[i].name, lo, hi, below, above);
	}
	assert_true(ranges >= 4);  /* interval, freq, push-drain, ringbuf-size */
}

/* A config file someone else may change is refused, with why; a push URL's password is not for
 * messages. */
static void agentconf__writable_config_refused_url_redacted(void **state)
{
	char path[64], err[512] = "", want[512];
	new_conf(path);
	write_conf(path, "push = http://alice:s3cret@pyro:4040/\n");
	assert_int_equal(chmod(path, 0666), 0);
	struct bt_agent_conf c;
	bt_agent_conf_defaults(&c);
	assert_int_equal(bt_agent_conf_load(&c, path, err, sizeof(err)), -EPERM);
	snprintf(want, sizeof(want), "config file %s refused: %s may be written by others (mode 0666)", path, path);
	assert_non_null(strstr(err, want));
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(bt_agent_conf_load(&c, path, err, sizeof(err)), 0);
	remove_conf(path);
	char out[256];
	static const char *const urls[][2] = {
		{ "http://alice:s3cret@pyro:4040/", "http://alice:***@pyro:4040/" },
		{ "https://u:p:q@h/x@y", "https://u:***@h/x@y" },
		{ "http://alice@pyro:4040", "http://alice@pyro:4040" },
		{ "http://pyro:4040/a@b", "http://pyro:4040/a@b" },
		{ "pyro:4040", "pyro:4040" },
	};
	for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		bt_push_redact_url(urls[i][0], out, sizeof(out));
		assert_string_equal(out, urls[i][1]);
	}
	assert_int_equal(bt_agent_conf_set(&c, "push", "ftp://bob:hunter2@x", err, sizeof(err)), -EINVAL);
	assert_null(strstr(err, "hunter2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(agentconf__writable_config_refused_url_redacted),
		cmocka_unit_test(agentconf__defaults__documented_values),
		cmocka_unit_test(agentconf__file__every_key_read),
		cmocka_unit_test(agentconf__bad_values__named_errors),
		cmocka_unit_test(agentconf__bad_file__line_named),
		cmocka_unit_test(agentconf__push_keys__read),
		cmocka_unit_test(agentconf__documented_defaults__are_the_defaults),
		cmocka_unit_test(agentconf__documented_ranges__are_the_ranges),
		cmocka_unit_test(agentconf__targets_keys__read),
		cmocka_unit_test(agentconf__example_file__reads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
