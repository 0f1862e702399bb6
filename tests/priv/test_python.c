/* test_python.c - Python frames from CPython's own frame chain, with Debian's python3: a chain of
 * three functions in two files (one a method) named with the right file:line in the right place of
 * the native stack, in folded, JSON and pprof output; two threads each with its own chain (attached
 * by pid); a python in a mount and pid namespace of its own; a forked child; a program that is not
 * Python unaffected. Then with each CPython 3.8 to 3.13 (pyenv's, a shared libpython) and Debian's
 * 3.11 (static): the chain and two threads' chains in the default call graph and with frame
 * pointers, and a recursion 200 deep. The oracle of every line number is the "bt:" marker in the
 * scripts themselves (tests/python/check_folded.py counts what the profiles hold). */
#include "testutil.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMP "build/tests/tmp-python"
#define PY "/usr/bin/python3"

static char dir[PATH_MAX], src[PATH_MAX];
static pid_t started[2];

static int setup(void **state)
{
	if (bt_test_run(NULL, 0, "mkdir -p " TMP) != 0 || !realpath(TMP, dir) || !realpath("tests/python", src))
		return -1;
	return 0;
}

static int kill_started(void **state)
{
	for (size_t i = 0; i < 2; i++)
		if (started[i] > 0) {
			kill(started[i], SIGKILL);
			waitpid(started[i], NULL, 0);
			started[i] = 0;
		}
	return 0;
}

static void need_python(void)
{
	if (access(PY, X_OK) != 0) {
		if (bt_test_in_ci())
			fail_msg(PY " is missing");
		skip();
	}
}

/* The line of tests/python/file holding marker "bt:name". */
static unsigned marker_line(const char *file, const char *name)
{
	char path[PATH_MAX + 64], want[64], buf[512];
	snprintf(path, sizeof(path), "%s/%s", src, file);
	snprintf(want, sizeof(want), "# bt:%s", name);
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	unsigned n = 0, found = 0;
	while (!found && fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, want))
			found = n;
	}
	fclose(f);
	assert_true(found > 0);
	return found;
}

/* "name (file:line)" as folded stacks spell a Python frame. */
static void pyframe(char *buf, size_t len, const char *name, const char *file, const char *marker)
{
	snprintf(buf, len, "%s (%s:%u)", name, file, marker_line(file, marker));
}

struct tally {
	unsigned long long total;      /* samples of the python processes */
	unsigned long long hits;       /* those holding the chain */
	unsigned long long placed;     /* of those, with it in place in a complete native stack */
	unsigned long long misplaced;  /* of those, with a complete native stack but it not in place */
	unsigned long long with_other; /* those holding the chain and also the frame 'other' */
	char example[1024];
};

/* Reads a folded profile: of the samples of comm python3*, those whose stack holds chain (frames
 * ';'-joined) as whole frames; placed: the native stack before it goes down to root and holds
 * before (Py_RunMain, or for a thread Thread._bootstrap's own Python frames), and no eval-loop
 * frame is left among or after it. A native stack not reaching root was cut short by its unwinder:
 * then the Python frames come first, with the gap after them. */
static void tally(const char *folded, const char *chain, const char *root, const char *before, const char *other,
		  struct tally *t)
{
	memset(t, 0, sizeof(*t));
	FILE *f = fopen(folded, "re");
	assert_non_null(f);
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		char *sp = strrchr(line, ' ');
		if (!sp || strncmp(line, "python3", 7) != 0)
			continue;
		*sp = '\0';
		unsigned long long count = strtoull(sp + 1, NULL, 10);
		t->total += count;
		char *c = strstr(line, chain);
		size_t n = strlen(chain);
		if (!c || c[-1] != ';' || (c[n] != ';' && c[n] != '\0'))
			continue;
		t->hits += count;
		if (other && strstr(line, other))
			t->with_other += count;
		c[-1] = '\0';
		bool complete = strstr(line, root) != NULL;
		bool placed = complete && strstr(line, before) != NULL && !strstr(c, "_PyEval_EvalFrameDefault");
		c[-1] = ';';
		t->placed += placed ? count : 0;
		t->misplaced += complete && !placed ? count : 0;
		if (!t->example[0] && placed)
			snprintf(t->example, sizeof(t->example), "%s", line);
	}
	free(line);
	fclose(f);
}

/* Runs buildtrace (options opts) until it ends; its stderr in DIR/tag.err. */
static void record(const char *tag, const char *opts)
{
	char out[256];
	int rc = bt_test_run(out, sizeof(out), "./buildtrace -F 999 -o %s/%s.folded --also-write json:%s/%s.json "
			     "--also-write pprof:%s/%s.pb.gz %s 2>%s/%s.err; s=$?; cat %s/%s.err >&2; exit $s",
			     dir, tag, dir, tag, dir, tag, opts, dir, tag, dir, tag);
	assert_int_equal(rc, 0);
}

/* The JSON frames named name are Python frames of file (base name) at line, and pprof's Lines say
 * the same (go tool pprof is the oracle). */
static void check_outputs(const char *tag, const char *name, const char *file, unsigned line)
{
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), PY " -c '"
			     "import json, sys; d = json.load(open(sys.argv[1])); "
			     "f = [x for x in d[\"frames\"] if x[\"name\"] == sys.argv[2] and x[\"kind\"] == \"python\"]; "
			     "ok = [x for x in f if x[\"file\"].endswith(\"/\" + sys.argv[3]) and x[\"resolved\"] and "
			     "x[\"lines\"][0][\"line\"] == int(sys.argv[4]) and x[\"lines\"][0][\"function\"] == sys.argv[2]]; "
			     "assert ok, f; print(len(ok))' %s/%s.json '%s' '%s' %u 2>&1", dir, tag, name, file, line);
	print_message("json: %s", out);
	assert_int_equal(rc, 0);
	if (access("/usr/bin/go", X_OK) != 0) {
		if (bt_test_in_ci())
			fail_msg("go is missing: go tool pprof is the oracle of the pprof output");
		return;
	}
	rc = bt_test_run(out, sizeof(out), "cd %s && HOME=%s GOFLAGS=-mod=mod go tool pprof -raw %s.pb.gz 2>&1 | "
			 "grep -c -F ' %s %s/%s:%u'", dir, dir, tag, name, src, file, line);
	print_message("pprof: %s", out);
	assert_int_equal(rc, 0);
}

static void python__chain_in_two_files__named_in_place(void **state)
{
	bt_test_require_priv();
	need_python();
	char opts[PATH_MAX + 128], chain[1024], f[4][256];
	snprintf(opts, sizeof(opts), "-- " PY " %s/pyhot_main.py chain 5", src);
	record("chain", opts);
	pyframe(f[0], sizeof(f[0]), "<module>", "pyhot_main.py", "module");
	pyframe(f[1], sizeof(f[1]), "outer", "pyhot_main.py", "outer");
	pyframe(f[2], sizeof(f[2]), "Worker.step", "pyhot_lib.py", "step");
	pyframe(f[3], sizeof(f[3]), "inner", "pyhot_lib.py", "inner");
	snprintf(chain, sizeof(chain), "%s;%s;%s;%s", f[0], f[1], f[2], f[3]);
	char folded[PATH_MAX + 32];
	snprintf(folded, sizeof(folded), "%s/chain.folded", dir);
	struct tally t;
	tally(folded, chain, "python3;_start;", ";Py_RunMain;", NULL, &t);
	print_message("chain: %llu of %llu python3 samples hold %s, %llu in place, e.g. %s\n", t.hits, t.total,
		      chain, t.placed, t.example);
	assert_true(t.total >= 300);
	assert_true(t.hits >= t.total * 95 / 100);
	/* where the native stack is whole, always in place; it is whole for most */
	assert_int_equal(t.misplaced, 0);
	assert_true(t.placed >= t.total * 85 / 100);
	/* the pprof read back: the same frames, placed by their lines */
	char back[PATH_MAX + 32];
	snprintf(back, sizeof(back), "%s/chain.back.folded", dir);
	assert_int_equal(bt_test_run(NULL, 0, "./buildtrace report -f folded -o %s %s/chain.pb.gz", back, dir), 0);
	struct tally tb;
	tally(back, chain, "python3;_start;", ";Py_RunMain;", NULL, &tb);
	assert_int_equal(tb.hits, t.hits);
	assert_int_equal(tb.placed, t.placed);
	check_outputs("chain", "inner", "pyhot_lib.py", marker_line("pyhot_lib.py", "inner"));
	check_outputs("chain", "Worker.step", "pyhot_lib.py", marker_line("pyhot_lib.py", "step"));
	/* the summary says what was walked */
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c 'python: 1 interpreters' %s/chain.err", dir), 0);
}

static void python__two_threads__each_its_own_chain(void **state)
{
	bt_test_require_priv();
	need_python();
	char cmd[3 * PATH_MAX], err[PATH_MAX + 32];
	/* running before buildtrace attaches: found from its mappings, not its exec */
	snprintf(cmd, sizeof(cmd), "exec " PY " %s/pyhot_main.py threads 600", src);
	pid_t py = bt_test_spawn(cmd);
	started[0] = py;
	while (bt_test_proc_cpu(py) < 0.5 && kill(py, 0) == 0)
		usleep(50000);
	snprintf(err, sizeof(err), "%s/threads.err", dir);
	unlink(err);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace -v -F 999 -p %d -o %s/threads.folded 2>%s", (int)py, dir, err);
	pid_t bt = bt_test_spawn(cmd);
	started[1] = bt;
	assert_true(bt_test_wait_for_text(err, "sampling at", bt));
	double end = bt_test_proc_cpu(py) + 4.0;
	while (bt_test_proc_cpu(py) < end && kill(py, 0) == 0)
		usleep(50000);
	kill(bt, SIGINT);
	int st = 0;
	waitpid(bt, &st, 0);
	started[1] = 0;
	bt_test_run(NULL, 0, "cat %s >&2", err);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	char folded[PATH_MAX + 32], a[1024], b[1024], fa[256], fb[256], run[256];
	snprintf(folded, sizeof(folded), "%s/threads.folded", dir);
	pyframe(run, sizeof(run), "run_thread", "pyhot_main.py", "run_thread");
	pyframe(fa, sizeof(fa), "spin_a", "pyhot_lib.py", "spin_a");
	pyframe(fb, sizeof(fb), "spin_b", "pyhot_lib.py", "spin_b");
	snprintf(a, sizeof(a), "%s;%s", run, fa);
	snprintf(b, sizeof(b), "%s;%s", run, fb);
	struct tally ta, tb;
	tally(folded, a, ";start_thread;", "Thread._bootstrap (threading.py:", "spin_b (", &ta);
	tally(folded, b, ";start_thread;", "Thread._bootstrap (threading.py:", "spin_a (", &tb);
	print_message("threads: %llu samples, %llu in spin_a (%s), %llu in spin_b (%s)\n", ta.total, ta.hits,
		      ta.example, tb.hits, tb.example);
	assert_true(ta.total >= 300);
	assert_true(ta.hits + tb.hits >= ta.total * 95 / 100);
	assert_int_equal(ta.misplaced + tb.misplaced, 0);
	/* each thread got its share, and never the other's frames */
	assert_true(ta.hits >= ta.total / 4 && tb.hits >= ta.total / 4);
	assert_int_equal(ta.with_other, 0);
	assert_int_equal(tb.with_other, 0);
}

static void python__own_mount_and_pid_namespace__named(void **state)
{
	bt_test_require_priv();
	need_python();
	char opts[6 * PATH_MAX], chain[1024], f1[256], f2[256];
	/* the scripts exist only in the namespace's own tmpfs; in a pid namespace of its own, python
	 * knows its thread by another id than the host does. Six seconds: a process's first tenth of
	 * a second after its exec (unshare, sh, then python) is walked before its new mappings are
	 * known, a few percent of a short run on a loaded machine (6.7% of two seconds was seen) */
	bt_test_run(NULL, 0, "mkdir -p %s/ns", dir);
	snprintf(opts, sizeof(opts), "-- unshare -m -p -f --propagation private sh -c 'mount -t tmpfs none %s/ns && "
		 "cp %s/pyhot_main.py %s/pyhot_lib.py %s/ns/ && exec " PY " %s/ns/pyhot_main.py chain 6'",
		 dir, src, src, dir, dir);
	record("ns", opts);
	pyframe(f1, sizeof(f1), "Worker.step", "pyhot_lib.py", "step");
	pyframe(f2, sizeof(f2), "inner", "pyhot_lib.py", "inner");
	snprintf(chain, sizeof(chain), "%s;%s", f1, f2);
	char folded[PATH_MAX + 32];
	snprintf(folded, sizeof(folded), "%s/ns.folded", dir);
	struct tally t;
	tally(folded, chain, "python3;_start;", ";Py_RunMain;", NULL, &t);
	print_message("namespace: %llu of %llu python3 samples hold %s, e.g. %s\n", t.hits, t.total, chain, t.example);
	assert_true(t.total >= 200);
	assert_true(t.hits >= t.total * 95 / 100);
	assert_int_equal(t.misplaced, 0);
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c 'pyhot_main.py:' %s/ns.folded", dir), 0);
}

static void python__forked_child__named_too(void **state)
{
	bt_test_require_priv();
	need_python();
	char opts[PATH_MAX + 128], chain[1024], f[4][256];
	snprintf(opts, sizeof(opts), "-- " PY " %s/pyhot_main.py fork 5", src);
	record("fork", opts);
	pyframe(f[0], sizeof(f[0]), "<module>", "pyhot_main.py", "fork");
	pyframe(f[1], sizeof(f[1]), "outer", "pyhot_main.py", "outer");
	pyframe(f[2], sizeof(f[2]), "Worker.step", "pyhot_lib.py", "step");
	pyframe(f[3], sizeof(f[3]), "inner", "pyhot_lib.py", "inner");
	snprintf(chain, sizeof(chain), "%s;%s;%s;%s", f[0], f[1], f[2], f[3]);
	char folded[PATH_MAX + 32];
	snprintf(folded, sizeof(folded), "%s/fork.folded", dir);
	struct tally t;
	tally(folded, chain, "python3;_start;", ";Py_RunMain;", NULL, &t);
	print_message("fork: %llu of %llu python3 samples hold %s\n", t.hits, t.total, chain);
	/* the parent waits: nearly every sample is the child's */
	assert_true(t.total >= 200);
	assert_true(t.hits >= t.total * 95 / 100);
	assert_int_equal(t.misplaced, 0);
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c 'python: 2 interpreters' %s/fork.err", dir), 0);
}

static void python__not_python__unaffected(void **state)
{
	bt_test_require_priv();
	char opts[PATH_MAX + 64], fix[PATH_MAX];
	snprintf(opts, sizeof(opts), "-- %s 0 1", bt_test_fixture(fix, sizeof(fix), "../tests/session/spin"));
	record("spin", opts);
	char out[4096];
	/* every sample of spin named as before: burn under main, no Python frame, no Python summary */
	int rc = bt_test_run(out, sizeof(out), PY " -c '"
			     "import json, sys; d = json.load(open(sys.argv[1])); "
			     "assert not [x for x in d[\"frames\"] if x[\"kind\"] == \"python\"]; "
			     "burn = [i for i, x in enumerate(d[\"frames\"]) if x[\"name\"] == \"burn\"]; "
			     "n = sum(s[\"count\"] for s in d[\"stacks\"] if s[\"comm\"] == \"spin\"); "
			     "b = sum(s[\"count\"] for s in d[\"stacks\"] if s[\"comm\"] == \"spin\" and set(burn) & set(s[\"frames\"])); "
			     "print(b, n); assert n >= 300 and b >= n * 95 // 100' %s/spin.json 2>&1", dir);
	print_message("spin: %s", out);
	assert_int_equal(rc, 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c 'python:' %s/spin.err", dir), 1);
}

/* ---- every version ------------------------------------------------------------------------ */

struct interp {
	const char *label;
	unsigned minor;
	bool pyenv;       /* pyenv's 3.minor, else Debian's /usr/bin/python3 */
};

static const struct interp interps[] = {
	{ "Debian's python3", 11, false }, { "pyenv 3.8", 8, true },   { "pyenv 3.9", 9, true },
	{ "pyenv 3.10", 10, true },        { "pyenv 3.11", 11, true }, { "pyenv 3.12", 12, true },
	{ "pyenv 3.13", 13, true },
};

/* The interpreter's program into buf; false (a failure under CI) when it is not installed. */
static bool interp_path(const struct interp *in, char *buf, size_t len)
{
	char prefix[PATH_MAX - 64];
	if (!in->pyenv) {
		snprintf(buf, len, "%s", PY);
		if (access(PY, X_OK) == 0)
			return true;
	} else if (bt_test_pyenv(in->minor, prefix, sizeof(prefix))) {
		snprintf(buf, len, "%s/bin/python3.%u", prefix, in->minor);
		return true;
	}
	if (bt_test_in_ci())
		fail_msg("%s is missing", in->label);
	return false;
}

/* Starts python on the workload args, attaches buildtrace (with opts) by pid once it has used half
 * a second of CPU (its interpreter found from its mappings), and stops it once the workload has
 * used cpu seconds more: DIR/tag.folded, its stderr in DIR/tag.err. */
static void attach_record(const char *python, const char *args, const char *tag, const char *opts, double cpu)
{
	char cmd[3 * PATH_MAX], err[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "exec %s %s/pyhot_main.py %s", python, src, args);
	pid_t py = bt_test_spawn(cmd);
	started[0] = py;
	while (bt_test_proc_cpu(py) < 0.5 && kill(py, 0) == 0)
		usleep(50000);
	snprintf(err, sizeof(err), "%s/%s.err", dir, tag);
	unlink(err);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace -v -F 999 %s -p %d -o %s/%s.folded 2>%s", opts, (int)py, dir,
		 tag, err);
	pid_t bt = bt_test_spawn(cmd);
	started[1] = bt;
	assert_true(bt_test_wait_for_text(err, "sampling at", bt));
	double end = bt_test_proc_cpu(py) + cpu;
	while (bt_test_proc_cpu(py) < end && kill(py, 0) == 0)
		usleep(50000);
	kill(bt, SIGINT);
	int st = 0;
	waitpid(bt, &st, 0);
	started[1] = 0;
	kill_started(NULL);
	bt_test_run(NULL, 0, "grep -E 'python:|lost' %s >&2", err);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

struct counts {
	unsigned long long total, hits, placed, chain, spin_a, spin_b, both;
	unsigned long long full, marked, short_unmarked;
};

/* What tests/python/check_folded.py counts in DIR/tag.folded (a recursion depth frames deep). */
static struct counts check_folded_depth(const char *tag, const char *mode, bool qualified, unsigned depth)
{
	char out[512];
	struct counts c = { 0 };
	int rc = bt_test_run(out, sizeof(out), PY " %s/check_folded.py %s/%s.folded %s %d %u 2>&1", src, dir, tag,
			     mode, qualified, depth);
	print_message("%s: %s", tag, out);
	assert_int_equal(rc, 0);
	if (!strcmp(mode, "mixed"))
		assert_int_equal(sscanf(out, "total %llu hits %llu placed %llu chain %llu spin_a %llu spin_b %llu both %llu",
					&c.total, &c.hits, &c.placed, &c.chain, &c.spin_a, &c.spin_b, &c.both), 7);
	else
		assert_int_equal(sscanf(out, "total %llu full %llu marked %llu short_unmarked %llu", &c.total, &c.full,
					&c.marked, &c.short_unmarked), 4);
	return c;
}

static struct counts check_folded(const char *tag, const char *mode, bool qualified)
{
	return check_folded_depth(tag, mode, qualified, 200);
}

/* The main thread's chain (three functions and a method, in two files) and two threads' chains:
 * each in order with its lines, in its place, in the default call graph; with frame pointers, the
 * Python frames of nearly every sample still there, outer to where the walk was cut when it was. */
static void python__each_version__chains_in_place_any_call_graph(void **state)
{
	const struct interp *in = *state;
	bt_test_require_priv();
	char py[PATH_MAX], tag[64];
	if (!interp_path(in, py, sizeof(py)))
		skip();
	bool qualified = in->minor >= 11;
	print_message("%s: %s\n", in->label, py);
	snprintf(tag, sizeof(tag), "mixed-%s3.%u", in->pyenv ? "" : "deb-", in->minor);
	attach_record(py, "mixed 600", tag, "", 2.5);
	struct counts c = check_folded(tag, "mixed", qualified);
	assert_true(c.total >= 300);
	assert_true(c.hits >= c.total * 95 / 100);
	assert_true(c.placed >= c.total * 90 / 100);
	/* each thread got its share, and no sample holds two threads' frames */
	assert_true(c.chain >= c.total / 6 && c.spin_a >= c.total / 6 && c.spin_b >= c.total / 6);
	assert_int_equal(c.both, 0);

	snprintf(tag, sizeof(tag), "fp-%s3.%u", in->pyenv ? "" : "deb-", in->minor);
	attach_record(py, "mixed 600", tag, "--call-graph fp", 2.5);
	c = check_folded(tag, "mixed", qualified);
	assert_true(c.total >= 300);
	assert_true(c.hits >= c.total * 90 / 100);
	assert_int_equal(c.both, 0);
}

/* A recursion 200 deep: every sample holds its 200 frames, or says where it was cut. */
static void python__each_version__recursion_200_deep_whole_or_marked(void **state)
{
	const struct interp *in = *state;
	bt_test_require_priv();
	char py[PATH_MAX], tag[64];
	if (!interp_path(in, py, sizeof(py)))
		skip();
	snprintf(tag, sizeof(tag), "rec-%s3.%u", in->pyenv ? "" : "deb-", in->minor);
	attach_record(py, "rec 200 600", tag, "", 2.0);
	struct counts c = check_folded(tag, "rec", in->minor >= 11);
	assert_true(c.total >= 300);
	assert_int_equal(c.short_unmarked, 0);
	assert_true(c.full >= c.total * 95 / 100);
}

/* A chain deeper than the sampler reads (256 frames): its innermost frames, under a [truncated]
 * mark, never shown as if whole. */
static void python__deeper_than_the_walk__marked(void **state)
{
	bt_test_require_priv();
	need_python();
	attach_record(PY, "rec 300 600", "rec300", "", 2.0);
	struct counts c = check_folded_depth("rec300", "rec", true, 300);
	assert_true(c.total >= 200);
	assert_int_equal(c.full, 0);
	assert_int_equal(c.short_unmarked, 0);
	assert_true(c.marked >= c.total * 95 / 100);
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c 'stacks walked: complete [0-9]*, cut at 256 "
				     "frames [1-9]' %s/rec300.err", dir), 0);
}

/* An interpreter of a version buildtrace does not read (pyenv's 3.7): named in the summary,
 * profiled natively. */
static void python__version_not_read__named_and_native(void **state)
{
	bt_test_require_priv();
	char prefix[PATH_MAX - 64], opts[2 * PATH_MAX + 128];
	if (!bt_test_pyenv(7, prefix, sizeof(prefix))) {
		if (bt_test_in_ci())
			fail_msg("pyenv's CPython 3.7 is missing");
		skip();
	}
	snprintf(opts, sizeof(opts), "-- %s/bin/python3.7 %s/pyhot_main.py chain 2", prefix, src);
	record("py37", opts);
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c 'python: 0 interpreters.*1 interpreters of a "
				     "version profiled natively (3.7;' %s/py37.err", dir), 0);
	/* its eval loop's frames, no Python frame */
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c '_PyEval_EvalFrameDefault' %s/py37.folded", dir), 0);
	assert_int_equal(bt_test_run(out, sizeof(out), "grep -c '\\.py:' %s/py37.folded", dir), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(python__chain_in_two_files__named_in_place, kill_started),
		cmocka_unit_test_teardown(python__two_threads__each_its_own_chain, kill_started),
		cmocka_unit_test_teardown(python__own_mount_and_pid_namespace__named, kill_started),
		cmocka_unit_test_teardown(python__forked_child__named_too, kill_started),
		cmocka_unit_test_teardown(python__not_python__unaffected, kill_started),
		cmocka_unit_test_teardown(python__deeper_than_the_walk__marked, kill_started),
		cmocka_unit_test_teardown(python__version_not_read__named_and_native, kill_started),
#define EACH(i, v) \
	{ "python__" v "__chains_in_place_any_call_graph", python__each_version__chains_in_place_any_call_graph, \
	  NULL, kill_started, (void *)&interps[i] }, \
	{ "python__" v "__recursion_200_deep_whole_or_marked", python__each_version__recursion_200_deep_whole_or_marked, \
	  NULL, kill_started, (void *)&interps[i] }
		EACH(0, "debian_311"), EACH(1, "pyenv_38"), EACH(2, "pyenv_39"), EACH(3, "pyenv_310"),
		EACH(4, "pyenv_311"), EACH(5, "pyenv_312"), EACH(6, "pyenv_313"),
#undef EACH
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
