/* test_relabel.c - relabeling rule by rule as Prometheus documents and tests relabel_config
 * (prometheus/model/relabel): each action's result on a label set, the defaults (separator ';',
 * regex '(.*)', replacement '$1', action replace), anchored regexes, an empty value meaning no
 * label, what a rule refuses, and hashmod's shard numbers (MD5, as Python computes them). */
#include "testutil.h"
#include "session/relabel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXL 16

struct rcase {
	const char *what;
	const char *in[MAXL];     /* name, value, name, value ..., NULL */
	const char *rules[6];
	const char *out[MAXL];    /* the labels after, or ... */
	bool drop;                /* ... dropped */
};

static const struct rcase cases[] = {
	{ "replace with a template, twice the same group",
	  { "a", "foo", "b", "bar", "c", "baz" },
	  { "source_labels=a regex=f(.*) target_label=d separator=; replacement=ch${1}-ch${1}" },
	  { "a", "foo", "b", "bar", "c", "baz", "d", "choo-choo" } },
	{ "two sources joined by the separator; a later rule reads what an earlier one set",
	  { "a", "foo", "b", "bar", "c", "baz" },
	  { "source_labels=a,b regex=f(.*);(.*)r target_label=a replacement=b${1}${2}m",
	    "source_labels=c,a regex=(b).*b(.*)ba(.*) target_label=d replacement=$1$2$2$3" },
	  { "a", "boobam", "b", "bar", "c", "baz", "d", "boooom" } },
	{ "drop stops the rules at once",
	  { "a", "foo" },
	  { "action=drop source_labels=a regex=.*o.*", "source_labels=a regex=f(.*) target_label=d" },
	  { NULL }, true },
	{ "a group in the middle", { "a", "abc" },
	  { "source_labels=a regex=.*(b).* target_label=d replacement=$1" },
	  { "a", "abc", "d", "b" } },
	{ "drop: no match, kept", { "a", "foo" }, { "action=drop source_labels=a regex=no-match" }, { "a", "foo" } },
	{ "drop: the regex is anchored (f|o is not foo)", { "a", "foo" }, { "action=drop source_labels=a regex=f|o" },
	  { "a", "foo" } },
	{ "keep: no match, dropped", { "a", "foo" }, { "action=keep source_labels=a regex=no-match" }, { NULL }, true },
	{ "keep: a match, kept", { "a", "foo" }, { "action=KEEP source_labels=a regex=f.*" }, { "a", "foo" } },
	{ "replace: no match, no replacement", { "a", "boo" },
	  { "source_labels=a regex=f target_label=b replacement=bar" }, { "a", "boo" } },
	{ "hashmod of one value", { "a", "foo", "b", "bar", "c", "baz" },
	  { "action=hashmod source_labels=c target_label=d modulus=1000" },
	  { "a", "foo", "b", "bar", "c", "baz", "d", "976" } },
	{ "hashmod of a value with a newline", { "a", "foo\nbar" },
	  { "action=hashmod source_labels=a target_label=b modulus=1000" }, { "a", "foo\nbar", "b", "734" } },
	{ "labelmap copies matching names", { "a", "foo", "b1", "bar", "b2", "baz" },
	  { "action=labelmap regex=(b.*) replacement=bar_${1}" },
	  { "a", "foo", "b1", "bar", "b2", "baz", "bar_b1", "bar", "bar_b2", "baz" } },
	{ "labelmap out of meta labels", { "a", "foo", "__meta_my_bar", "aaa", "__meta_my_baz", "bbb", "__meta_other", "ccc" },
	  { "action=labelmap regex=__meta_(my.*) replacement=${1}" },
	  { "a", "foo", "__meta_my_bar", "aaa", "__meta_my_baz", "bbb", "__meta_other", "ccc", "my_bar", "aaa",
	    "my_baz", "bbb" } },
	{ "a target label made of a group", { "a", "some-name-value" },
	  { "source_labels=a regex=some-([^-]+)-([^,]+) replacement=${2} target_label=${1}" },
	  { "a", "some-name-value", "name", "value" } },
	{ "an empty replacement sets nothing", { "a", "some-name-value" },
	  { "source_labels=a regex=some-([^-]+)-([^,]+) replacement=${3} target_label=${1}" },
	  { "a", "some-name-value" } },
	{ "a target that expands to no valid name is skipped", { "a", "some-name-0" },
	  { "source_labels=a regex=some-([^-]+)-([^,]+) replacement=${1} target_label=${3}",
	    "source_labels=a regex=some-([^-]+)(-[^,]+) replacement=${1} target_label=${3}" },
	  { "a", "some-name-0" } },
	{ "tags in one label, picked apart", { "__meta_sd_tags", "path:/secret,job:some-job,label:foo=bar" },
	  { "source_labels=__meta_sd_tags regex=(?:.+,|^)path:(/[^,]+).* replacement=${1} target_label=__metrics_path__",
	    "source_labels=__meta_sd_tags regex=(?:.+,|^)job:([^,]+).* replacement=${1} target_label=job",
	    "source_labels=__meta_sd_tags regex=(?:.+,|^)label:([^=]+)=([^,]+).* replacement=${2} target_label=${1}" },
	  { "__meta_sd_tags", "path:/secret,job:some-job,label:foo=bar", "__metrics_path__", "/secret", "foo", "bar",
	    "job", "some-job" } },
	{ "labeldrop, then a replace setting the dropped name again, then keep on it",
	  { "__meta_kubernetes_pod_container_port_name", "foo", "__meta_kubernetes_pod_annotation_XXX_metrics_port", "9091" },
	  { "action=labeldrop regex=^__meta_kubernetes_pod_container_port_name$",
	    "source_labels=__meta_kubernetes_pod_annotation_XXX_metrics_port regex=(.+) replacement=metrics "
	    "target_label=__meta_kubernetes_pod_container_port_name",
	    "action=keep source_labels=__meta_kubernetes_pod_container_port_name regex=^metrics$" },
	  { "__meta_kubernetes_pod_annotation_XXX_metrics_port", "9091", "__meta_kubernetes_pod_container_port_name", "metrics" } },
	{ "labelkeep", { "a", "foo", "b1", "bar", "b2", "baz" }, { "action=labelkeep regex=(b.*)" },
	  { "b1", "bar", "b2", "baz" } },
	{ "labeldrop", { "a", "foo", "b1", "bar", "b2", "baz" }, { "action=labeldrop regex=(b.*)" }, { "a", "foo" } },
	{ "upper and lower case", { "foo", "bAr123Foo" },
	  { "action=uppercase source_labels=foo target_label=foo_uppercase",
	    "action=lowercase source_labels=foo target_label=foo_lowercase" },
	  { "foo", "bAr123Foo", "foo_lowercase", "bar123foo", "foo_uppercase", "BAR123FOO" } },
	{ "keepequal: equal, kept", { "__tmp_port", "1234", "__port1", "1234", "__port2", "5678" },
	  { "action=keepequal source_labels=__tmp_port target_label=__port1" },
	  { "__port1", "1234", "__port2", "5678", "__tmp_port", "1234" } },
	{ "dropequal: equal, dropped", { "__tmp_port", "1234", "__port1", "1234", "__port2", "5678" },
	  { "action=dropequal source_labels=__tmp_port target_label=__port1" }, { NULL }, true },
	{ "dropequal: not equal, kept", { "__tmp_port", "1234", "__port1", "1234", "__port2", "5678" },
	  { "action=dropequal source_labels=__tmp_port target_label=__port2" },
	  { "__port1", "1234", "__port2", "5678", "__tmp_port", "1234" } },
	{ "keepequal: not equal, dropped", { "__tmp_port", "1234", "__port1", "1234", "__port2", "5678" },
	  { "action=keepequal source_labels=__tmp_port target_label=__port2" }, { NULL }, true },
	/* the defaults, as Prometheus fills them in */
	{ "no source labels: the value is empty, (.*) matches it, $1 is empty: nothing set",
	  { "a", "x" }, { "target_label=b" }, { "a", "x" } },
	{ "a constant replacement with no source labels sets a label",
	  { "a", "x" }, { "target_label=env replacement=prod" }, { "a", "x", "env", "prod" } },
	{ "replace with an empty replacement removes the target",
	  { "a", "x", "b", "y" }, { "source_labels=a target_label=b replacement=" }, { "a", "x" } },
	{ "an absent source is an empty value, joined with the default ';'",
	  { "a", "x" }, { "source_labels=a,missing,a target_label=j" }, { "a", "x", "j", "x;;x" } },
	{ "separator and a quoted regex with a blank",
	  { "a", "x", "b", "y z" }, { "source_labels=a,b separator=| regex=\"(x)\\|y (z)\" target_label=c replacement=$1$2" },
	  { "a", "x", "b", "y z", "c", "xz" } },
	{ "(.*) does not match across a newline (RE2's '.'): no replacement",
	  { "a", "foo\nbar" }, { "source_labels=a target_label=b" }, { "a", "foo\nbar" } },
	{ "the drop of a process's shell, as the README writes it",
	  { "__meta_process_comm", "sh", "__meta_process_pid", "12" },
	  { "action=drop source_labels=__meta_process_comm regex=sh|bash" }, { NULL }, true },
	{ "a service per cgroup, as the README writes it",
	  { "__meta_cgroup_path", "/bt.slice/svc-alpha" },
	  { "action=replace source_labels=__meta_cgroup_path regex=.*/(svc-[a-z]+) target_label=service_name replacement=$1" },
	  { "__meta_cgroup_path", "/bt.slice/svc-alpha", "service_name", "svc-alpha" } },
};

static void fill(struct bt_labels *l, const char *const *kv)
{
	bt_labels_init(l);
	for (size_t i = 0; i + 1 < MAXL && kv[i]; i += 2)
		assert_int_equal(bt_labels_set(l, kv[i], kv[i + 1]), 0);
}

static void relabel__prometheus_cases__same_results(void **state)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct rcase *k = &cases[c];
		struct bt_relabel r;
		bt_relabel_init(&r);
		char err[256];
		for (size_t i = 0; i < 6 && k->rules[i]; i++)
			if (bt_relabel_add(&r, k->rules[i], err, sizeof(err)))
				fail_msg("%s: rule '%s': %s", k->what, k->rules[i], err);
		struct bt_labels l, want;
		fill(&l, k->in);
		fill(&want, k->out);
		size_t by = 99;
		int rc = bt_relabel_apply(&r, &l, &by);
		if (rc != (k->drop ? 0 : 1))
			fail_msg("%s: %s", k->what, rc ? "kept" : "dropped");
		if (!k->drop) {
			if (l.n != want.n)
				fail_msg("%s: %zu labels, want %zu", k->what, l.n, want.n);
			for (size_t i = 0; i < l.n; i++)
				if (strcmp(l.v[i].name, want.v[i].name) || strcmp(l.v[i].value, want.v[i].value))
					fail_msg("%s: %s=%s, want %s=%s", k->what, l.v[i].name, l.v[i].value,
						 want.v[i].name, want.v[i].value);
		} else {
			assert_true(by < r.n);
		}
		bt_labels_free(&l);
		bt_labels_free(&want);
		bt_relabel_free(&r);
	}
}

/* Prometheus' Validate and its relabelTarget, rule by rule; and the text's own form. */
static void relabel__bad_rules__refused_with_reason(void **state)
{
	static const struct { const char *rule, *says; } bad[] = {
		{ "action=replace", "needs a target_label" },
		{ "action=lowercase", "needs a target_label" },
		{ "action=lowercase target_label=${3}", "not a valid target_label" },
		{ "source_labels=a regex=some-([^-]+)-([^,]+) replacement=${1} target_label=0${3}", "not a valid target_label" },
		{ "source_labels=a regex=some-([^-]+)-([^,]+) replacement=${1} target_label=-${3}", "not a valid target_label" },
		{ "target_label=-label", "not a valid target_label" }, { "target_label=${", "not a valid target_label" },
		{ "target_label=$", "not a valid target_label" }, { "target_label=${}", "not a valid target_label" },
		{ "target_label=foo${", "not a valid target_label" }, { "target_label=-foo${1}bar-", "not a valid" },
		{ "action=hashmod target_label=x", "non-zero modulus" },
		{ "action=hashmod target_label=x-y modulus=2", "not a valid target_label" },
		{ "action=uppercase target_label=x replacement=y", "replacement cannot be set" },
		{ "action=labelmap replacement=-x", "not a valid replacement" },
		{ "action=keepequal source_labels=a target_label=b regex=x", "only source_labels and target_label" },
		{ "action=dropequal source_labels=a target_label=b separator=,", "only source_labels and target_label" },
		{ "action=labeldrop source_labels=a regex=x", "only a regex" },
		{ "action=labelkeep regex=x target_label=y", "only a regex" },
		{ "action=labelkeep regex=x replacement=y", "only a regex" },
		{ "action=explode", "unknown action" }, { "colour=blue", "unknown field" },
		{ "target_label=a target_label=b", "given twice" }, { "source_labels=a-b target_label=c", "not a label name" },
		{ "modulus=-1 action=hashmod target_label=x", "not a number" }, { "regex", "not key=value" },
		{ "regex=\"a b target_label=x", "closing" }, { "regex=a*? target_label=x", "lazy" },
		{ "regex=(a target_label=x", "regex" }, { "", "empty rule" },
	};
	static const char *const good_targets[] = { "label", "label${1}", "${1}label", "${1}", "$1", "asd$2asd",
						    "_${1}_", "foo${bar}foo" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bt_relabel r;
		bt_relabel_init(&r);
		char err[256] = "";
		assert_int_equal(bt_relabel_add(&r, bad[i].rule, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("'%s': '%s' lacks '%s'", bad[i].rule, err, bad[i].says);
		assert_int_equal(r.n, 0);
		bt_relabel_free(&r);
	}
	for (size_t i = 0; i < sizeof(good_targets) / sizeof(good_targets[0]); i++) {
		struct bt_relabel r;
		bt_relabel_init(&r);
		char rule[128], err[256] = "";
		snprintf(rule, sizeof(rule), "target_label=%s", good_targets[i]);
		if (bt_relabel_add(&r, rule, err, sizeof(err)))
			fail_msg("'%s': %s", rule, err);
		bt_relabel_free(&r);
	}
}

/* hashmod's shard of many values, against Python's MD5 with Prometheus' reading of it (the last 8
 * digest bytes as a big-endian integer, modulo). */
static void relabel__hashmod__shards_as_python_computes(void **state)
{
	char out[1 << 14];
	assert_int_equal(bt_test_run(out, sizeof(out), "/usr/bin/python3 -c '\n"
				     "import hashlib\n"
				     "for i in range(300):\n"
				     "    v = (\"svc-%%d;host-%%d\" %% (i, i * 7)).encode()\n"
				     "    print(int.from_bytes(hashlib.md5(v).digest()[8:], \"big\") %% (i + 1))\n'"), 0);
	const char *line = out;
	for (int i = 0; i < 300; i++) {
		struct bt_relabel r;
		bt_relabel_init(&r);
		char rule[128], err[256], a[32], b[32];
		snprintf(rule, sizeof(rule), "action=hashmod source_labels=a,b target_label=shard modulus=%d", i + 1);
		assert_int_equal(bt_relabel_add(&r, rule, err, sizeof(err)), 0);
		struct bt_labels l;
		bt_labels_init(&l);
		snprintf(a, sizeof(a), "svc-%d", i);
		snprintf(b, sizeof(b), "host-%d", i * 7);
		bt_labels_set(&l, "a", a);
		bt_labels_set(&l, "b", b);
		assert_int_equal(bt_relabel_apply(&r, &l, NULL), 1);
		assert_int_equal(strtol(bt_labels_get(&l, "shard"), NULL, 10), strtol(line, NULL, 10));
		line = strchr(line, '\n') + 1;
		bt_labels_free(&l);
		bt_relabel_free(&r);
	}
}

/* Label sets: sorted, unique, an empty value removes. */
static void labels__set_get_remove__sorted(void **state)
{
	struct bt_labels l, c;
	bt_labels_init(&l);
	bt_labels_init(&c);
	assert_int_equal(bt_labels_set(&l, "b", "2"), 0);
	assert_int_equal(bt_labels_set(&l, "a", "1"), 0);
	assert_int_equal(bt_labels_set(&l, "c", "3"), 0);
	assert_int_equal(bt_labels_set(&l, "b", "two"), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0].name, "a");
	assert_string_equal(l.v[1].value, "two");
	assert_int_equal(bt_labels_set(&l, "a", ""), 0);
	assert_null(bt_labels_get(&l, "a"));
	assert_int_equal(bt_labels_set(&l, "zz", NULL), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(bt_labels_copy(&c, &l), 0);
	assert_string_equal(bt_labels_get(&c, "c"), "3");
	assert_true(bt_label_name_ok("_a9"));
	assert_false(bt_label_name_ok("9a"));
	assert_false(bt_label_name_ok("a-b"));
	assert_false(bt_label_name_ok(""));
	bt_labels_free(&l);
	bt_labels_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(relabel__prometheus_cases__same_results),
		cmocka_unit_test(relabel__bad_rules__refused_with_reason),
		cmocka_unit_test(relabel__hashmod__shards_as_python_computes),
		cmocka_unit_test(labels__set_get_remove__sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
