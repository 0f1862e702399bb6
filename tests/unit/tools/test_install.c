/* test_install.c - `make install` into a temporary DESTDIR: with PREFIX=/usr every file lands where
 * Debian puts such files (the binary, a man page per subcommand and buildtrace-agent.conf(5),
 * `mandoc -T lint` clean and found by man, the unit naming the installed binary and config, the
 * config, the bash completion, which completes subcommands, options and their values when bash
 * drives it); the default PREFIX and each directory variable move them; `make uninstall` removes
 * every file again but a config file that was changed, which install then keeps too. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP "build/tests/tmp-install"

/* make TARGET ARGS in the tree, with nothing of an enclosing make's flags; its status. */
static int make(char *out, size_t len, const char *args)
{
	return bt_test_run(out, len, "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory %s 2>&1",
			   args);
}

/* The files under TMP, one per line, sorted, as "./usr/bin/buildtrace". */
static void files(char *out, size_t len)
{
	assert_int_equal(bt_test_run(out, len, "cd " TMP " && find . -type f | LC_ALL=C sort"), 0);
}

/* Where systemd.pc says units go (Debian 12: /lib/systemd/system), else /lib/systemd/system. */
static void unit_dir(char *out, size_t len)
{
	if (bt_test_run(out, len, "pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null") || !out[0])
		snprintf(out, len, "/lib/systemd/system\n");
	out[strcspn(out, "\n")] = '\0';
}

/* The files install puts under prefix, as files() lists them: a man page per subcommand that
 * `buildtrace --help` lists. */
static void expected(char *out, size_t len, const char *etc, const char *prefix, const char *units)
{
	char subs[1024], cmd[4096];
	assert_int_equal(bt_test_run(subs, sizeof(subs), "./buildtrace --help | sed -n '/^Subcommands:/,$p' | "
				     "awk 'NR > 1 && $1 != \"record\" { print $1 }'"), 0);
	assert_non_null(strstr(subs, "agent\n"));
	snprintf(cmd, sizeof(cmd), "{ echo .%s/buildtrace/agent.conf; echo .%s/buildtrace-agent.service; "
		 "echo .%s/bin/buildtrace; echo .%s/share/bash-completion/completions/buildtrace; "
		 "echo .%s/share/man/man1/buildtrace.1; for s in %s; do echo .%s/share/man/man1/buildtrace-$s.1; done; "
		 "echo .%s/share/man/man5/buildtrace-agent.conf.5; } | LC_ALL=C sort",
		 etc, units, prefix, prefix, prefix, subs, prefix, prefix);
	for (char *p = cmd; *p; p++)
		if (*p == '\n')
			*p = ' ';
	assert_int_equal(bt_test_run(out, len, "%s", cmd), 0);
}

static void install__usr_prefix__where_debian_puts_them(void **state)
{
	char out[16384], want[4096], units[256];
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf " TMP), 0);
	int rc = make(out, sizeof(out), "install DESTDIR=$(pwd)/" TMP " PREFIX=/usr");
	if (rc)
		fail_msg("make install: %s", out);
	unit_dir(units, sizeof(units));
	files(out, sizeof(out));
	expected(want, sizeof(want), "/etc", "/usr", units);
	assert_string_equal(out, want);
	/* the binary runs; the others are plain files */
	struct stat st;
	assert_int_equal(stat(TMP "/usr/bin/buildtrace", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(TMP "/etc/buildtrace/agent.conf", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	char v1[128], v2[128];
	assert_int_equal(bt_test_run(v1, sizeof(v1), TMP "/usr/bin/buildtrace --version"), 0);
	assert_int_equal(bt_test_run(v2, sizeof(v2), "./buildtrace --version"), 0);
	assert_string_equal(v1, v2);
	assert_int_equal(bt_test_run(NULL, 0, "cmp -s tools/agent.conf.example " TMP "/etc/buildtrace/agent.conf"), 0);
	/* the unit starts the installed binary with the installed config */
	snprintf(want, sizeof(want), "grep -qx 'ExecStart=/usr/bin/buildtrace agent --config /etc/buildtrace/agent.conf' "
		 TMP "%s/buildtrace-agent.service", units);
	assert_int_equal(bt_test_run(NULL, 0, "%s", want), 0);
	/* the man pages: lint clean, found by man, saying what --help says */
	rc = bt_test_run(out, sizeof(out), "mandoc -T lint -W all " TMP "/usr/share/man/man*/* 2>&1");
	if (rc || out[0])
		fail_msg("mandoc -T lint: %s", out);
	assert_int_equal(bt_test_run(out, sizeof(out), "MANPATH=$(pwd)/" TMP "/usr/share/man MANWIDTH=100 "
				     "man -P cat buildtrace-agent 2>&1"), 0);
	assert_non_null(strstr(out, "buildtrace-agent - sample the whole machine"));
	assert_non_null(strstr(out, "--sample-labels yes|no"));
	assert_non_null(strstr(out, "buildtrace-agent.conf(5)"));
	assert_int_equal(bt_test_run(out, sizeof(out), "MANPATH=$(pwd)/" TMP "/usr/share/man MANWIDTH=100 "
				     "man -P cat 5 buildtrace-agent.conf 2>&1"), 0);
	assert_non_null(strstr(out, "idle = yes|no"));
}

/* What the completion installed in TMP offers for the words given (the last one being completed),
 * bash calling it as it does on a Tab: COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT. */
static void complete(char *out, size_t len, const char *words)
{
	assert_int_equal(bt_test_run(out, len, "cd " TMP " && bash --norc --noprofile -c '"
				     "source usr/share/bash-completion/completions/buildtrace; "
				     "COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
				     "COMP_LINE=\"${COMP_WORDS[*]}\"; COMP_POINT=${#COMP_LINE}; "
				     "_buildtrace buildtrace \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD - 1]}\"; "
				     "printf \"%%s\\n\" \"${COMPREPLY[@]}\" | LC_ALL=C sort' 2>&1", words), 0);
}

static void completion__subcommands_options_and_values(void **state)
{
	char out[65536];
	if (access(TMP "/usr/share/bash-completion/completions/buildtrace", R_OK))
		assert_int_equal(make(out, sizeof(out), "install DESTDIR=$(pwd)/" TMP " PREFIX=/usr"), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "bash --norc -c 'source " TMP
				     "/usr/share/bash-completion/completions/buildtrace; complete -p buildtrace'"), 0);
	assert_string_equal(out, "complete -F _buildtrace buildtrace\n");
	complete(out, sizeof(out), "buildtrace tr");
	assert_string_equal(out, "trace\n");
	complete(out, sizeof(out), "buildtrace agent --sample-");
	assert_string_equal(out, "--sample-labels\n");
	complete(out, sizeof(out), "buildtrace agent --idle \"\"");
	assert_string_equal(out, "no\nyes\n");
	complete(out, sizeof(out), "buildtrace -a -f \"\"");
	assert_string_equal(out, "folded\nheatmap\njson\nperf-script\npprof\nsvg\n");
	complete(out, sizeof(out), "buildtrace report x.folded -f \"\"");
	assert_string_equal(out, "folded\njson\npprof\nsvg\n");  /* a saved profile holds totals only */
	complete(out, sizeof(out), "buildtrace -a --call-graph dwarf-");
	assert_string_equal(out, "dwarf-bpf\ndwarf-copy\n");
	complete(out, sizeof(out), "buildtrace cache \"\"");
	assert_string_equal(out, "add\nlist\nprune\nremove\n");
	/* pids: this one's among them, and the last of a list is what is completed */
	char words[128], want[64];
	snprintf(words, sizeof(words), "buildtrace -p 1,%d", (int)getpid());
	snprintf(want, sizeof(want), "1,%d\n", (int)getpid());
	complete(out, sizeof(out), words);
	assert_non_null(strstr(out, want));
	/* files, for -o; after --also-write FORMAT and the colon bash splits off */
	complete(out, sizeof(out), "buildtrace -a -o usr/b");
	assert_string_equal(out, "usr/bin\n");
	complete(out, sizeof(out), "buildtrace -a --also-write sv");
	assert_string_equal(out, "svg:\n");
	complete(out, sizeof(out), "buildtrace -a --also-write svg : usr/b");
	assert_string_equal(out, "usr/bin\n");
	/* options end at a command's name, which is completed as one */
	complete(out, sizeof(out), "buildtrace -F 99 -- bas");
	assert_non_null(strstr(out, "bash\n"));
	complete(out, sizeof(out), "buildtrace trace --lat");
	assert_string_equal(out, "--latency\n");
}

static void install__default_prefix_and_variables__move_files(void **state)
{
	char out[16384], want[4096];
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf " TMP), 0);
	assert_int_equal(make(out, sizeof(out), "install DESTDIR=$(pwd)/" TMP), 0);
	files(out, sizeof(out));
	expected(want, sizeof(want), "/usr/local/etc", "/usr/local", "/usr/local/lib/systemd/system");
	assert_string_equal(out, want);
	assert_int_equal(bt_test_run(NULL, 0, "grep -qx 'ExecStart=/usr/local/bin/buildtrace agent --config "
				     "/usr/local/etc/buildtrace/agent.conf' " TMP
				     "/usr/local/lib/systemd/system/buildtrace-agent.service"), 0);
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf " TMP), 0);
	assert_int_equal(make(out, sizeof(out), "install DESTDIR=$(pwd)/" TMP " PREFIX=/usr BINDIR=/opt/bt/bin "
			      "MANDIR=/opt/bt/man SYSCONFDIR=/etc/opt UNITDIR=/etc/systemd/system "
			      "BASHCOMPDIR=/opt/bt/completion"), 0);
	files(out, sizeof(out));
	assert_non_null(strstr(out, "./opt/bt/bin/buildtrace\n"));
	assert_non_null(strstr(out, "./opt/bt/man/man1/buildtrace-trace.1\n"));
	assert_non_null(strstr(out, "./opt/bt/man/man5/buildtrace-agent.conf.5\n"));
	assert_non_null(strstr(out, "./etc/opt/buildtrace/agent.conf\n"));
	assert_non_null(strstr(out, "./etc/systemd/system/buildtrace-agent.service\n"));
	assert_non_null(strstr(out, "./opt/bt/completion/buildtrace\n"));
	assert_null(strstr(out, "./usr/"));
	assert_int_equal(bt_test_run(NULL, 0, "grep -qx 'ExecStart=/opt/bt/bin/buildtrace agent --config "
				     "/etc/opt/buildtrace/agent.conf' " TMP "/etc/systemd/system/buildtrace-agent.service"), 0);
}

static void uninstall__every_file__but_a_changed_config(void **state)
{
	char out[16384];
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf " TMP), 0);
	assert_int_equal(make(out, sizeof(out), "install DESTDIR=$(pwd)/" TMP " PREFIX=/usr"), 0);
	assert_int_equal(make(out, sizeof(out), "uninstall DESTDIR=$(pwd)/" TMP " PREFIX=/usr"), 0);
	files(out, sizeof(out));
	assert_string_equal(out, "");
	assert_int_equal(access(TMP "/etc/buildtrace", F_OK), -1);
	/* a config its administrator changed stays, through uninstall and install */
	assert_int_equal(make(out, sizeof(out), "install DESTDIR=$(pwd)/" TMP " PREFIX=/usr"), 0);
	assert_int_equal(bt_test_run(NULL, 0, "echo 'interval = 10' >> " TMP "/etc/buildtrace/agent.conf"), 0);
	assert_int_equal(make(out, sizeof(out), "install DESTDIR=$(pwd)/" TMP " PREFIX=/usr"), 0);
	assert_non_null(strstr(out, "install: keeping "));
	assert_int_equal(make(out, sizeof(out), "uninstall DESTDIR=$(pwd)/" TMP " PREFIX=/usr"), 0);
	assert_non_null(strstr(out, "which was changed"));
	files(out, sizeof(out));
	assert_string_equal(out, "./etc/buildtrace/agent.conf\n");
	assert_int_equal(bt_test_run(NULL, 0, "tail -n1 " TMP "/etc/buildtrace/agent.conf | grep -qx 'interval = 10'"), 0);
	assert_int_equal(bt_test_run(NULL, 0, "rm -rf " TMP), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(install__usr_prefix__where_debian_puts_them),
		cmocka_unit_test(completion__subcommands_options_and_values),
		cmocka_unit_test(install__default_prefix_and_variables__move_files),
		cmocka_unit_test(uninstall__every_file__but_a_changed_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
