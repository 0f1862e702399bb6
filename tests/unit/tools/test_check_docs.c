/* test_check_docs.c - tools/check-docs.py passes on the tree as it is: --help, the man pages, the
 * README's option tables and examples and the example config say what the option tables say, and
 * the limits they state are the code's. It fails, naming the difference, on copies with one drift
 * each: an option missing from the README, another value name, a wrong default, a config key that
 * is no setting or a setting left out, a limit stated otherwise, an example with an option that
 * does not exist, a --help or a man page that lost an option. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bt_proto.h"
#include "capture/capture.h"
#include "cmd/agent/agentconf.h"
#include "output/pprof.h"

#define TMP "build/tests/tmp-docs"

static const char *python(void)
{
	return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* Runs the check on TMP's copy (or the tree when root is "."), with extra arguments; its status,
 * and what it said in out. */
static int check(const char *root, const char *extra, char *out, size_t len)
{
	return bt_test_run(out, len, "%s tools/check-docs.py --root %s --man %s %s 2>&1", python(), root,
			   !strcmp(root, ".") ? "build/man" : TMP "/man", extra);
}

/* A fresh copy of what the check reads in TMP (the README, tools/, docs/, the man pages), then cmd
 * (a shell command run inside it). */
static void copy_and(const char *cmd)
{
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf " TMP " && mkdir -p " TMP " && cp -r README.md tools docs "
				     TMP " && cp -r build/man " TMP "/man && cd " TMP " && %s", cmd), 0);
}

/* The check on a copy changed by cmd fails, and says what. */
static void drift_fails(const char *cmd, const char *extra, const char *says)
{
	char out[16384];
	copy_and(cmd);
	int rc = check(TMP, extra, out, sizeof(out));
	if (rc != 1 || !strstr(out, says))
		fail_msg("after `%s`: status %d, said:\n%s\nexpected: %s", cmd, rc, out, says);
}

static void docs__tree_as_it_is__passes(void **state)
{
	char out[16384];
	int rc = check(".", "", out, sizeof(out));
	if (rc)
		print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
}

static void docs__option_missing_from_readme__fails(void **state)
{
	drift_fails("sed -i '/^| `--idle yes\\\\|no`/d' README.md", "",
		    "README.md: table of agent: --idle yes|no is missing");
	drift_fails("sed -i '/^| `--per-pid`/d' README.md", "", "README.md: table of record: --per-pid is missing");
}

static void docs__other_value_name__fails(void **state)
{
	drift_fails("sed -i 's/`--pid PID\\[,PID...\\]` | these processes, and/`--pid PIDS` | these processes, and/' "
		    "README.md", "", "README.md: table of record: -p, --pid PIDS, the table says -p, --pid PID[,PID...]");
}

static void docs__wrong_default__fails(void **state)
{
	drift_fails("sed -i 's/per second per CPU (default 99)/per second per CPU (default 49)/' README.md", "",
		    "the row of -F, --freq HZ|max does not say its default, 99");
	drift_fails("sed -i 's/^interval = 60/interval = 30/' tools/agent.conf.example", "",
		    "interval = 30, but its default is 60");
}

static void docs__config_keys__every_setting_and_no_other(void **state)
{
	drift_fails("sed -i 's/^freq = /frequency = /' tools/agent.conf.example", "", "frequency is written freq");
	drift_fails("sed -i '/^idle = /d' tools/agent.conf.example", "", "the setting idle is missing");
	drift_fails("echo 'colour = blue' >> tools/agent.conf.example", "", "colour is not a setting");
}

static void docs__limit_stated_otherwise__fails(void **state)
{
	/* the help said 127 frames once, where the walk holds 254 less the kernel's */
	drift_fails("sed -i '0,/254 less the kernel/s//127 less the kernel/' README.md", "",
		    "limit bpf-walk-frames differs: 127 in readme; 254 in help, man, readme");
	drift_fails("sed -i 's/a multiple of 8 up to 65536/a multiple of 8 up to 32768/' tools/agent.conf.example", "",
		    "limit stack-copy-max differs");
}

static void docs__example_with_unknown_option__fails(void **state)
{
	drift_fails("printf '\\n    sudo buildtrace agent --frequency 5\\n' >> README.md", "",
		    "`buildtrace agent --frequency 5`: --frequency is not an option of buildtrace agent");
	drift_fails("sed -i 's/^sudo buildtrace buildid\\\\-list \\\\-p 1234/sudo buildtrace buildid\\\\-list \\\\-\\\\-pids 1234/' "
		    "docs/man/buildtrace-buildid-list.1.in", "", "--pids is not an option of buildtrace buildid-list");
}

static void docs__help_or_man_page_drifts__fails(void **state)
{
	/* a --help that lost an option (the binary stood in for by a script that edits its help) */
	drift_fails("printf '#!/bin/sh\\n\"$(dirname \"$0\")\"/../../../buildtrace \"$@\" | "
		    "sed \"/--no-debuginfod /d\"\\n' > fakebin && chmod +x fakebin", "--bin " TMP "/fakebin",
		    "fakebin --help: --no-debuginfod is missing");
	drift_fails("sed -i '/^\\\\fB\\\\-\\\\-latency\\\\fR$/,+1d' man/buildtrace-trace.1", "",
		    "man/buildtrace-trace.1: --latency is missing");
}

/* What the documents agree on is what the code does. */
static void docs__limits__the_code_constants(void **state)
{
	char out[4096], want[1024];
	assert_int_equal(bt_test_run(out, sizeof(out), "%s tools/check-docs.py --print-limits", python()), 0);
	snprintf(want, sizeof(want),
		 "agent-headers %d\n"
		 "agent-interval 0.5 86400\n"
		 "agent-labels %d\n"
		 "agent-push-drain 0 3600\n"
		 "bpf-walk-frames %d\n"
		 "report-input 256\n"
		 "report-pprof %zu\n"
		 "ringbuf-auto %zu %zu\n"
		 "ringbuf-range %zu %zu\n"
		 "stack-copy-default %d\n"
		 "stack-copy-max %d\n",
		 BT_AGENT_MAX_HEADERS, BT_AGENT_MAX_LABELS, 2 * BT_MAX_STACK, BT_PPROF_MAX_BYTES >> 20, BT_RINGBUF_AUTO_MIN >> 10, BT_RINGBUF_AUTO_MAX >> 20,
		 BT_RINGBUF_SIZE_MIN >> 10, BT_RINGBUF_SIZE_MAX >> 30, BT_USTACK_BYTES / 1024, BT_USTACK_MAX);
	assert_string_equal(out, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(docs__tree_as_it_is__passes),
		cmocka_unit_test(docs__option_missing_from_readme__fails),
		cmocka_unit_test(docs__other_value_name__fails),
		cmocka_unit_test(docs__wrong_default__fails),
		cmocka_unit_test(docs__config_keys__every_setting_and_no_other),
		cmocka_unit_test(docs__limit_stated_otherwise__fails),
		cmocka_unit_test(docs__example_with_unknown_option__fails),
		cmocka_unit_test(docs__help_or_man_page_drifts__fails),
		cmocka_unit_test(docs__limits__the_code_constants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
