/* test_record_liveview.c - the live view in a real terminal: buildtrace runs in a tmux pane (its
 * own tmux server), the test reads the screen with capture-pane and types keys with send-keys: the
 * library column, sorting, one side only, a filter, a resize (and the plain summary on a screen too
 * small), and q writing the profile. Also the plain summary when stderr is not a terminal (for a
 * command too), and Ctrl-C typed in the terminal while a command runs. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMP "build/tests/tmp-liveview"
#define EXITWITH "build/tests/progs/exitwith"

static char sock[64];
static int spawned;  /* a workload to kill however the test ends */

static int setup(void **state)
{
	snprintf(sock, sizeof(sock), "bt-liveview-%d", (int)getpid());
	return bt_test_run(NULL, 0, "mkdir -p " TMP) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	bt_test_run(NULL, 0, "tmux -L %s kill-server 2>/dev/null; true", sock);
	return 0;
}

static int kill_spawned(void **state)
{
	if (spawned > 0) {
		kill(spawned, SIGKILL);
		waitpid(spawned, NULL, 0);
	}
	spawned = 0;
	bt_test_run(NULL, 0, "tmux -L %s kill-session -t lv 2>/dev/null; true", sock);
	return 0;
}

static void screen(char *out, size_t len)
{
	bt_test_run(out, len, "tmux -L %s capture-pane -p -t lv 2>/dev/null", sock);
}

/* Waits (up to a minute, in tenths of a second) until the screen holds what; the screen then. */
static bool wait_for(const char *what, char *out, size_t len)
{
	for (int i = 0; i < 600; i++) {
		screen(out, len);
		if (strstr(out, what))
			return true;
		usleep(100000);
	}
	print_message("screen without '%s':\n%s\n", what, out);
	return false;
}

static void keys(const char *k)
{
	assert_int_equal(bt_test_run(NULL, 0, "tmux -L %s send-keys -t lv %s", sock, k), 0);
}

/* The screen's line holding what, in line (len bytes); false when none does. */
static bool line_with(const char *scr, const char *what, char *line, size_t len)
{
	const char *p = strstr(scr, what);
	if (!p)
		return false;
	const char *b = p, *e = strchr(p, '\n');
	while (b > scr && b[-1] != '\n')
		b--;
	size_t n = e ? (size_t)(e - b) : strlen(b);
	snprintf(line, len, "%.*s", (int)(n < len ? n : len - 1), b);
	return true;
}

/* The function rows: the lines after the column headings. */
static const char *rows_of(const char *scr)
{
	const char *h = strstr(scr, "function");
	const char *nl = h ? strchr(h, '\n') : NULL;
	return nl ? nl + 1 : "";
}

static void last_word(const char *line, char *out, size_t len)
{
	size_t n = strlen(line);
	while (n && line[n - 1] == ' ')
		n--;
	size_t b = n;
	while (b && line[b - 1] != ' ')
		b--;
	snprintf(out, len, "%.*s", (int)(n - b), line + b);
}

static void liveview__tmux__library_sort_filter_side_resize_quit(void **state)
{
	bt_test_require_priv();
	char scr[16384], line[512], word[128];
	int w = spawned = bt_test_spawn("exec " EXITWITH " 600 0");
	assert_int_equal(bt_test_run(NULL, 0, "rm -f " TMP "/lv.folded " TMP "/lv.rc; tmux -L %s new-session -d "
				     "-s lv -x 150 -y 40 -c $PWD 'TERM=xterm ./buildtrace -p %d -F 499 -o " TMP
				     "/lv.folded; echo rc=$? > " TMP "/lv.rc'", sock, w), 0);
	/* the header, then the busy function with its library in the last column */
	assert_true(wait_for("exitwith_work", scr, sizeof(scr)));
	assert_non_null(strstr(scr, "buildtrace "));
	assert_non_null(strstr(scr, "samples"));
	assert_non_null(strstr(scr, "lost "));
	assert_non_null(strstr(scr, "unresolved "));
	assert_non_null(strstr(scr, "processes "));
	assert_true(line_with(scr, "  self%  total% function", line, sizeof(line)));
	last_word(line, word, sizeof(word));
	assert_string_equal(word, "library");
	assert_true(line_with(scr, "exitwith_work", line, sizeof(line)));
	last_word(line, word, sizeof(word));
	assert_string_equal(word, "exitwith");
	/* s: the next sort */
	assert_non_null(strstr(scr, "sort: self"));
	keys("s");
	assert_true(wait_for("sort: total", scr, sizeof(scr)));
	/* k: kernel functions only; each row's library is the kernel's, a module's or [jit] */
	keys("k");
	assert_true(wait_for("kernel only", scr, sizeof(scr)));
	assert_true(wait_for("[kernel]", scr, sizeof(scr)));
	screen(scr, sizeof(scr));
	for (const char *r = rows_of(scr); *r; r = strchr(r, '\n') ? strchr(r, '\n') + 1 : "") {
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(r, "\n"), r);
		last_word(line, word, sizeof(word));
		if (*word)
			assert_true(word[0] == '[');
	}
	keys("k");
	assert_true(wait_for("kernel and user", scr, sizeof(scr)));
	/* / NAME Enter: only matching functions */
	keys("/ e x i t w i t h _ w Enter");
	assert_true(wait_for("filter: exitwith_w", scr, sizeof(scr)));
	screen(scr, sizeof(scr));
	int nrows = 0;
	for (const char *r = rows_of(scr); *r; r = strchr(r, '\n') ? strchr(r, '\n') + 1 : "") {
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(r, "\n"), r);
		if (strspn(line, " ") == strlen(line))
			continue;
		nrows++;
		assert_non_null(strcasestr(line, "exitwith_w"));
	}
	assert_true(nrows >= 1);
	/* a smaller terminal: the columns follow */
	assert_int_equal(bt_test_run(NULL, 0, "tmux -L %s resize-window -t lv -x 90 -y 20", sock), 0);
	for (int i = 0; i < 600; i++) {
		screen(scr, sizeof(scr));
		if (line_with(scr, "  self%  total% function", line, sizeof(line)) && strlen(line) <= 90 &&
		    strstr(line, "library"))
			break;
		usleep(100000);
	}
	assert_true(strlen(line) <= 90);
	assert_non_null(strstr(line, "library"));
	/* too small for the table: the plain summary (no status line, the busy function listed) */
	assert_int_equal(bt_test_run(NULL, 0, "tmux -L %s resize-window -t lv -x 45 -y 6", sock), 0);
	bool plain = false;
	for (int i = 0; i < 600 && !plain; i++) {
		screen(scr, sizeof(scr));
		plain = !strstr(scr, "sort: ") && strstr(scr, "exitwith_w") && strstr(scr, "samples");
		if (!plain)
			usleep(100000);
	}
	if (!plain)
		print_message("screen:\n%s\n", scr);
	assert_true(plain);
	/* q: the session ends and the profile is written */
	keys("q");
	for (int i = 0; i < 600 && bt_test_run(NULL, 0, "test -s " TMP "/lv.rc") != 0; i++)
		usleep(100000);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	spawned = 0;
	char out[256];
	bt_test_run(out, sizeof(out), "cat " TMP "/lv.rc");
	assert_string_equal(out, "rc=0\n");
	bt_test_run(out, sizeof(out), "grep -c 'main;exitwith_work ' " TMP "/lv.folded");
	assert_true(atoi(out) > 0);
}

static void liveview__not_a_terminal__plain_summary(void **state)
{
	bt_test_require_priv();
	char out[8192];
	int w = spawned = bt_test_spawn("exec " EXITWITH " 600 0");
	int rc = bt_test_run(out, sizeof(out), "./buildtrace --live -p %d -F 499 -d 3 -o /dev/null 2>&1", w);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	spawned = 0;
	print_message("%s", out);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "buildtrace  0:0"));
	assert_non_null(strstr(out, "exitwith_work"));
	/* no control sequences in a log */
	assert_null(strchr(out, '\033'));
}

/* Ctrl-C in the terminal reaches buildtrace and the command it started, as with perf: the profile
 * is written and buildtrace exits with the command's status, killed by SIGINT. */
static void terminal__ctrl_c__reaches_the_command(void **state)
{
	bt_test_require_priv();
	char scr[16384], out[256];
	assert_int_equal(bt_test_run(NULL, 0, "rm -f " TMP "/cc.folded " TMP "/cc.rc; tmux -L %s new-session -d "
				     "-s lv -x 120 -y 30 -c $PWD './buildtrace -v -o " TMP "/cc.folded -- " EXITWITH
				     " 599 0; echo rc=$? > " TMP "/cc.rc'", sock), 0);
	assert_true(wait_for("sampling at", scr, sizeof(scr)));
	keys("C-c");
	for (int i = 0; i < 600 && bt_test_run(NULL, 0, "test -s " TMP "/cc.rc") != 0; i++)
		usleep(100000);
	bt_test_run(out, sizeof(out), "cat " TMP "/cc.rc");
	assert_string_equal(out, "rc=130\n");
	assert_int_equal(bt_test_run(NULL, 0, "test -f " TMP "/cc.folded"), 0);
	/* no exitwith is left running */
	assert_int_not_equal(bt_test_run(NULL, 0, "pgrep -f '^" EXITWITH " 599 0$' >/dev/null"), 0);
}

static void command__live_view__plain_summary_of_the_command(void **state)
{
	bt_test_require_priv();
	char out[8192];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace --live -F 499 -o /dev/null -- " EXITWITH
			     " 1.5 4 2>&1");
	print_message("%s", out);
	assert_int_equal(rc, 4);
	assert_non_null(strstr(out, "buildtrace  0:0"));
	assert_non_null(strstr(out, "exitwith_work"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(liveview__tmux__library_sort_filter_side_resize_quit, kill_spawned),
		cmocka_unit_test_teardown(liveview__not_a_terminal__plain_summary, kill_spawned),
		cmocka_unit_test_teardown(terminal__ctrl_c__reaches_the_command, kill_spawned),
		cmocka_unit_test(command__live_view__plain_summary_of_the_command),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
