/* test_jit.c - JIT code named from the perf maps and jitdumps runtimes write: Node (--perf-basic-prof)
 * profiled by pid on both call graphs, a function compiled after attach, Node in a mount and pid
 * namespace of its own writing the map in its own /tmp, Node's jitdump (--perf-prof), and the JVM's
 * map (jcmd Compiler.perfmap). The runtime's own file is the oracle for the names. */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMP "build/tests/tmp-jit"

/* Spends its time in btHotLoop until the file argv[2] appears, then in btLateLoop, which is not
 * called (so not compiled) before; exits (flushing what it buffered) when argv[2].exit appears. */
static const char script[] =
	"const fs = require('fs');\n"
	"function btHotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s = (s * 31 + i) % 1000003; return s; }\n"
	"function btLateLoop(n) { let s = 1; for (let i = 0; i < n; i++) s = (s * 17 + i) % 999983; return s; }\n"
	"let t = 0, late = false;\n"
	"for (;;) {\n"
	"  if (fs.existsSync(process.argv[2] + '.exit')) process.exit(0);\n"
	"  if (!late && fs.existsSync(process.argv[2])) late = true;\n"
	"  t += late ? btLateLoop(2e6) : btHotLoop(2e6);\n"
	"}\n";

static char dir[PATH_MAX];
/* What a test started, killed by its teardown when an assertion cut it short. */
static pid_t started[4];

static void track(pid_t pid)
{
	for (size_t i = 0; i < 4; i++)
		if (!started[i]) {
			started[i] = pid;
			return;
		}
}

/* pid was waited for: it is not ours to kill any more. */
static void untrack(pid_t pid)
{
	for (size_t i = 0; i < 4; i++)
		if (started[i] == pid)
			started[i] = 0;
}

static int kill_started(void **state)
{
	for (size_t i = 0; i < 4; i++)
		if (started[i] > 0) {
			kill(started[i], SIGKILL);
			waitpid(started[i], NULL, 0);
			started[i] = 0;
		}
	return 0;
}

static int setup(void **state)
{
	if (bt_test_run(NULL, 0, "mkdir -p " TMP) != 0 || !realpath(TMP, dir))
		return -1;
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/work.js", dir);
	FILE *f = fopen(path, "we");
	if (!f)
		return -1;
	fputs(script, f);
	return fclose(f) ? -1 : 0;
}

static void need_node(void)
{
	if (access("/usr/bin/node", X_OK) != 0) {
		if (bt_test_in_ci())
			fail_msg("node is missing (tools/deps.sh installs nodejs)");
		skip();
	}
}

/* Whether the file at path holds needle: waited for as long as process pid lives, and, when
 * max_cpu > 0, has used less than max_cpu CPU seconds (a runtime that never writes it). */
static bool wait_for(const char *path, const char *needle, pid_t pid, double max_cpu)
{
	for (;;) {
		size_t len = 0;
		FILE *f = fopen(path, "re");
		if (f) {
			char *buf = NULL;
			size_t cap = 0;
			ssize_t n;
			bool found = false;
			while (!found && (n = getline(&buf, &cap, f)) > 0)
				found = strstr(buf, needle) != NULL;
			len = found;
			free(buf);
			fclose(f);
		}
		if (len)
			return true;
		if (kill(pid, 0) != 0 || (max_cpu > 0 && bt_test_proc_cpu(pid) > max_cpu))
			return false;
		usleep(50000);
	}
}

static bool wait_for_text(const char *path, const char *needle, pid_t pid)
{
	return wait_for(path, needle, pid, 0);
}

/* node writes it within a few CPU seconds; a minute is a margin, not a measure */
static bool wait_for_map(const char *path, const char *needle, pid_t node)
{
	return wait_for(path, needle, node, bt_test_proc_cpu(node) + 60);
}

/* Waits until process pid has used secs more CPU time, however long that takes. */
static void wait_cpu(pid_t pid, double secs)
{
	double end = bt_test_proc_cpu(pid) + secs;
	while (kill(pid, 0) == 0 && bt_test_proc_cpu(pid) < end)
		usleep(50000);
}

/* The names the map at path gives code of function fn ("JS:*fn ...", "JS:~fn ..."), '\n'-joined. */
static char *map_names(const char *path, const char *fn)
{
	char cmd[PATH_MAX + 256];
	static char out[1 << 16];
	snprintf(cmd, sizeof(cmd), "cut -d' ' -f3- '%s' | grep -F '%s' | sort -u", path, fn);
	bt_test_run(out, sizeof(out), "%s", cmd);
	return out;
}

struct share {
	unsigned long long total, hits;   /* node's samples; those whose innermost user frame is fn */
	unsigned long long called;        /* of those, the ones whose frame outside fn's has a name */
	char leaf[512];                   /* the name of one such frame */
};

/* Reads a folded profile: of the samples of threads named comm, those whose innermost frame that is
 * not the kernel's names fn. */
static void leaf_share_of(const char *folded, const char *comm, const char *fn, struct share *sh)
{
	memset(sh, 0, sizeof(*sh));
	FILE *f = fopen(folded, "re");
	assert_non_null(f);
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		char *sp = strrchr(line, ' ');
		size_t clen = strlen(comm);
		if (!sp || strncmp(line, comm, clen) != 0 || line[clen] != ';')
			continue;
		*sp = '\0';
		unsigned long long count = strtoull(sp + 1, NULL, 10);
		sh->total += count;
		char *leaf = NULL, *caller = NULL;
		for (char *t = strtok(line, ";"); t; t = strtok(NULL, ";")) {
			size_t n = strlen(t);
			if (n < 4 || strcmp(t + n - 4, "_[k]") != 0) {
				caller = leaf;
				leaf = t;
			}
		}
		if (leaf && strstr(leaf, fn)) {
			sh->hits += count;
			/* the stack goes on past the JIT frame: its caller (an interpreter trampoline or
			 * the script's code) is named, not a guess or a gap */
			if (caller && strcmp(caller, "[unknown]") && !strstr(caller, fn))
				sh->called += count;
			snprintf(sh->leaf, sizeof(sh->leaf), "%s", leaf);
		}
	}
	free(line);
	fclose(f);
}

static void leaf_share(const char *folded, const char *fn, struct share *sh)
{
	leaf_share_of(folded, "node", fn, sh);
}

/* The name must be one the map gives, as it gives it. */
static void assert_from_map(const char *name, const char *names)
{
	const char *p = names;
	size_t n = strlen(name);
	while ((p = strstr(p, name)) != NULL) {
		if ((p == names || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return;
		p += n;
	}
	fail_msg("'%s' is not a name of the map:\n%s", name, names);
}

/* The same session's JSON (read by Python's json) and pprof (read by go tool pprof): the frames
 * named leaf are JIT frames of process node, named from its perf map, in a mapping "[jit] PID". */
static void check_outputs(pid_t node, const char *tag, const char *leaf)
{
	char out[4096];
	int rc = bt_test_run(out, sizeof(out), "/usr/bin/python3 -c '"
			     "import json, sys; d = json.load(open(sys.argv[1])); "
			     "f = [x for x in d[\"frames\"] if x[\"name\"] == sys.argv[2]]; "
			     "assert f and all(x[\"kind\"] == \"jit\" and x[\"name_from\"] == \"perf-map\" and "
			     "x[\"pid\"] == int(sys.argv[3]) and x[\"resolved\"] for x in f), f; "
			     "print(len(f))' %s/%s.json '%s' %d 2>&1", dir, tag, leaf, (int)node);
	print_message("json: %s", out);
	assert_int_equal(rc, 0);
	if (access("/usr/bin/go", X_OK) != 0) {
		if (bt_test_in_ci())
			fail_msg("go is missing: go tool pprof is the oracle of the pprof output");
		return;
	}
	/* -raw lists mappings as "N: START/LIMIT/OFFSET FILE BUILDID" and locations as
	 * "N: ADDRESS M=MAPPING NAME ..." */
	rc = bt_test_run(out, sizeof(out), "cd %s && HOME=%s GOFLAGS=-mod=mod go tool pprof -raw %s.pb.gz 2>&1 | "
			 "awk -v want='[jit] %d' -v leaf='%s' '"
			 "/^Mappings/ { m = 1; next } "
			 "m && index($0, want) { split($1, a, \":\"); jit = a[1] } "
			 "!m && index($0, leaf) { split($3, b, \"=\"); locs[b[2]]++ } "
			 "END { n = 0; for (k in locs) { n++; if (k != jit) { print \"bad mapping \" k; exit 1 } } "
			 "if (!n || jit == \"\") { print \"none\"; exit 1 } print n \" mapping(s) ok\" }'",
			 dir, dir, tag, (int)node, leaf);
	print_message("pprof: %s", out);
	assert_int_equal(rc, 0);
}

/* Profiles node (host pid `node`, its map at `map`) with callgraph until btLateLoop, started
 * after attach, has run a CPU second; checks btHotLoop's share and btLateLoop's name. */
static void profile_node(pid_t node, const char *map, const char *callgraph, const char *tag)
{
	char folded[PATH_MAX + 64], err[PATH_MAX + 64], trig[PATH_MAX + 64], cmd[8 * PATH_MAX];
	snprintf(folded, sizeof(folded), "%s/%s.folded", dir, tag);
	snprintf(err, sizeof(err), "%s/%s.err", dir, tag);
	snprintf(trig, sizeof(trig), "%s/%s.go", dir, tag);
	/* its hot function compiled and optimized before the session, as a running service's is */
	assert_true(wait_for_map(map, "JS:*btHotLoop", node));
	unlink(err);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace -p %d -v --call-graph %s -o %s --also-write json:%s/%s.json "
		 "--also-write pprof:%s/%s.pb.gz 2>%s", (int)node, callgraph, folded, dir, tag, dir, tag, err);
	pid_t bt = bt_test_spawn(cmd);
	track(bt);
	assert_true(wait_for_text(err, "sampling at", bt));
	wait_cpu(node, 2.0);
	/* then a function node compiles only now */
	FILE *t = fopen(trig, "we");
	assert_non_null(t);
	fclose(t);
	assert_true(wait_for_map(map, "JS:*btLateLoop", node));
	wait_cpu(node, 1.0);
	kill(bt, SIGINT);
	int st = 0;
	waitpid(bt, &st, 0);
	untrack(bt);
	bt_test_run(NULL, 0, "cat %s >&2", err);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	struct share hot, late;
	leaf_share(folded, "btHotLoop", &hot);
	leaf_share(folded, "btLateLoop", &late);
	print_message("%s: %llu node samples, %llu in btHotLoop (%s; %llu with a named caller), %llu in "
		      "btLateLoop (%s; %llu)\n", tag, hot.total, hot.hits, hot.leaf, hot.called, late.hits, late.leaf,
		      late.called);
	assert_true(hot.total >= 50);
	/* before the trigger, all but the calls to existsSync is btHotLoop; after it, btLateLoop */
	assert_true(hot.hits + late.hits >= hot.total * 95 / 100);
	assert_true(hot.hits > 0 && late.hits > 0);
	assert_true(hot.called >= hot.hits * 95 / 100 && late.called >= late.hits * 95 / 100);
	assert_from_map(hot.leaf, map_names(map, "btHotLoop"));
	assert_from_map(late.leaf, map_names(map, "btLateLoop"));
	check_outputs(node, tag, hot.leaf);
}

/* The trigger of btLateLoop, absent until the test makes it. */
static void untrigger(const char *tag)
{
	char trig[PATH_MAX + 64];
	snprintf(trig, sizeof(trig), "%s/%s.go", dir, tag);
	unlink(trig);
	snprintf(trig, sizeof(trig), "%s/%s.go.exit", dir, tag);
	unlink(trig);
}

static pid_t start_node(const char *tag)
{
	char cmd[3 * PATH_MAX];
	untrigger(tag);
	/* without inlining, so that the functions keep frames of their own whatever V8 decides */
	/* in the test's directory: node writes a log of its own (isolate-*.log) where it runs */
	snprintf(cmd, sizeof(cmd), "cd %s && exec node --perf-basic-prof --no-turbo-inlining work.js %s/%s.go",
		 dir, dir, tag);
	pid_t pid = bt_test_spawn(cmd);
	track(pid);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	untrack(pid);
}

/* buildtrace symbolize --pid on an address inside the code of a map line: its name and offset, as
 * the map's last line for btHotLoop gives them. */
static void check_symbolize(pid_t node, const char *map)
{
	char line[1024], out[2048];
	assert_int_equal(bt_test_run(line, sizeof(line), "grep -F '*btHotLoop' %s | tail -n1", map), 0);
	unsigned long long start = 0, size = 0;
	int pos = 0;
	assert_int_equal(sscanf(line, "%llx %llx %n", &start, &size, &pos), 2);
	line[strcspn(line, "\n")] = '\0';
	unsigned long long off = size > 5 ? 5 : 0;
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --pid %d %llx 2>&1", (int)node,
				     start + off), 0);
	char want[1200];
	snprintf(want, sizeof(want), "0x%llx\t%s+0x%llx\t\n", start + off, line + pos, off);
	assert_string_equal(out, want);
}

static void jit__node_perf_basic_prof__functions_named_on_both_call_graphs(void **state)
{
	bt_test_require_priv();
	need_node();
	static const char *const graphs[] = { "fp", "dwarf" };
	for (size_t i = 0; i < 2; i++) {
		char tag[32], map[64];
		snprintf(tag, sizeof(tag), "host-%s", graphs[i]);
		pid_t node = start_node(tag);
		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)node);
		profile_node(node, map, graphs[i], tag);
		check_symbolize(node, map);
		stop(node);
		unlink(map);
	}
}

/* The names of the code loads of the jitdump at path that name fn, '\n'-joined (Python reads it). */
static char *dump_names(const char *path, const char *fn)
{
	static char out[1 << 16];
	bt_test_run(out, sizeof(out), "/usr/bin/python3 -c '"
		    "import struct, sys\n"
		    "b = open(sys.argv[1], \"rb\").read(); pos = struct.unpack_from(\"<I\", b, 8)[0]; names = set()\n"
		    "while pos + 16 <= len(b):\n"
		    "    i, sz = struct.unpack_from(\"<II\", b, pos)\n"
		    "    if i == 0: names.add(b[pos + 56:b.index(b\"\\0\", pos + 56)].decode())\n"
		    "    pos += sz\n"
		    "print(\"\\n\".join(sorted(n for n in names if sys.argv[2] in n)))' %s %s", path, fn);
	return out;
}

/* Whether process pid maps a file whose name ends in suffix. */
static bool maps_file(pid_t pid, const char *suffix)
{
	char out[256];
	return bt_test_run(out, sizeof(out), "grep -q -- '%s$' /proc/%d/maps", suffix, (int)pid) == 0;
}

static void jit__node_perf_prof__named_from_its_jitdump(void **state)
{
	bt_test_require_priv();
	need_node();
	char cmd[8 * PATH_MAX], err[PATH_MAX + 64], folded[PATH_MAX + 64], trig[PATH_MAX + 64];
	untrigger("dump");
	/* node writes jit-PID.dump in its working directory, and maps it so that profilers find it */
	snprintf(cmd, sizeof(cmd), "cd %s && exec node --perf-prof --no-turbo-inlining work.js %s/dump.go", dir, dir);
	pid_t node = bt_test_spawn(cmd);
	track(node);
	char suffix[64], dump[PATH_MAX + 64];
	snprintf(suffix, sizeof(suffix), "/jit-%d.dump", (int)node);
	snprintf(dump, sizeof(dump), "%s%s", dir, suffix);
	for (double end = bt_test_proc_cpu(node) + 60; !maps_file(node, suffix);) {
		assert_true(kill(node, 0) == 0 && bt_test_proc_cpu(node) < end);
		usleep(50000);
	}
	snprintf(err, sizeof(err), "%s/dump.err", dir);
	snprintf(folded, sizeof(folded), "%s/dump.folded", dir);
	unlink(err);
	snprintf(cmd, sizeof(cmd), "exec ./buildtrace -p %d -v -o %s --also-write json:%s/dump.json 2>%s", (int)node,
		 folded, dir, err);
	pid_t bt = bt_test_spawn(cmd);
	track(bt);
	assert_true(wait_for_text(err, "sampling at", bt));
	wait_cpu(node, 2.0);
	snprintf(trig, sizeof(trig), "%s/dump.go", dir);
	fclose(fopen(trig, "we"));
	wait_cpu(node, 1.0);
	/* node exits, flushing the records it buffered; the session ends with it */
	snprintf(trig, sizeof(trig), "%s/dump.go.exit", dir);
	fclose(fopen(trig, "we"));
	int st = 0;
	waitpid(node, &st, 0);
	untrack(node);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	waitpid(bt, &st, 0);
	untrack(bt);
	bt_test_run(NULL, 0, "cat %s >&2", err);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	struct share hot, late;
	leaf_share(folded, "btHotLoop", &hot);
	leaf_share(folded, "btLateLoop", &late);
	print_message("dump: %llu node samples, %llu in btHotLoop (%s), %llu in btLateLoop (%s)\n", hot.total,
		      hot.hits, hot.leaf, late.hits, late.leaf);
	assert_true(hot.total >= 50);
	assert_true(hot.hits + late.hits >= hot.total * 95 / 100);
	assert_true(hot.hits > 0 && late.hits > 0);
	assert_true(hot.called >= hot.hits * 95 / 100 && late.called >= late.hits * 95 / 100);
	assert_from_map(hot.leaf, dump_names(dump, "btHotLoop"));
	assert_from_map(late.leaf, dump_names(dump, "btLateLoop"));
	char out[1024];
	int rc = bt_test_run(out, sizeof(out), "/usr/bin/python3 -c '"
			     "import json, sys; d = json.load(open(sys.argv[1])); "
			     "f = [x for x in d[\"frames\"] if x[\"name\"] == sys.argv[2]]; "
			     "assert f and all(x[\"kind\"] == \"jit\" and x[\"name_from\"] == \"jitdump\" for x in f), f' "
			     "%s/dump.json '%s' 2>&1", dir, hot.leaf);
	print_message("json: %s\n", out);
	assert_int_equal(rc, 0);
	unlink(dump);
}

#define JDK "/usr/lib/jvm/java-17-openjdk-amd64/bin"

static const char java_src[] =
	"public class BtWork {\n"
	"    static int btHot(int n) { int s = 0; for (int i = 0; i < n; i++) s = (s * 31 + i) % 1000003; return s; }\n"
	"    public static void main(String[] a) { long t = 0; for (;;) t += btHot(1000000); }\n"
	"}\n";

static void jit__jvm_compiler_perfmap__hot_method_named_on_both_call_graphs(void **state)
{
	bt_test_require_priv();
	if (access(JDK "/jcmd", X_OK) != 0) {
		if (bt_test_in_ci())
			fail_msg("jcmd is missing (tools/deps.sh installs openjdk-17-jdk-headless)");
		skip();
	}
	char path[PATH_MAX + 64], cmd[8 * PATH_MAX], out[4096];
	snprintf(path, sizeof(path), "%s/BtWork.java", dir);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	fputs(java_src, f);
	fclose(f);
	/* its own frame whatever C2 decides: not inlined into main's loop */
	snprintf(cmd, sizeof(cmd), "exec " JDK "/java -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,BtWork::btHot "
		 "%s >/dev/null", path);
	pid_t java = bt_test_spawn(cmd);
	track(java);
	/* compiled by C2 (tier 4), as jcmd lists it */
	for (double end = bt_test_proc_cpu(java) + 120;;) {
		if (bt_test_run(out, sizeof(out), JDK "/jcmd %d Compiler.codelist 2>/dev/null | "
				"grep -q ' 4 0 BtWork.btHot'", (int)java) == 0)
			break;
		assert_true(kill(java, 0) == 0 && bt_test_proc_cpu(java) < end);
		usleep(100000);
	}
	assert_int_equal(bt_test_run(out, sizeof(out), JDK "/jcmd %d Compiler.perfmap", (int)java), 0);
	char map[64];
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)java);
	assert_true(wait_for_map(map, "BtWork.btHot", java));
	static const char *const graphs[] = { "fp", "dwarf" };
	for (size_t i = 0; i < 2; i++) {
		char folded[PATH_MAX + 64], err[PATH_MAX + 64];
		snprintf(folded, sizeof(folded), "%s/java-%s.folded", dir, graphs[i]);
		snprintf(err, sizeof(err), "%s/java-%s.err", dir, graphs[i]);
		unlink(err);
		snprintf(cmd, sizeof(cmd), "exec ./buildtrace -p %d -v --call-graph %s -o %s 2>%s", (int)java,
			 graphs[i], folded, err);
		pid_t bt = bt_test_spawn(cmd);
		track(bt);
		assert_true(wait_for_text(err, "sampling at", bt));
		wait_cpu(java, 2.0);
		kill(bt, SIGINT);
		int st = 0;
		waitpid(bt, &st, 0);
		untrack(bt);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		struct share hot;
		/* the main thread, which does nothing else (the compiler and GC threads have names of
		 * their own) */
		leaf_share_of(folded, "java", "btHot", &hot);
		print_message("java %s: %llu main thread samples, %llu in btHot (%s)\n", graphs[i], hot.total,
			      hot.hits, hot.leaf);
		assert_true(hot.total >= 50);
		assert_true(hot.hits >= hot.total * 95 / 100);
		assert_from_map(hot.leaf, map_names(map, "BtWork.btHot"));
	}
	stop(java);
	unlink(map);
}

/* The host pid of the only child of process parent, once it has one. */
static pid_t child_of(pid_t parent)
{
	for (;;) {
		char out[64];
		if (bt_test_run(out, sizeof(out), "pgrep -P %d", (int)parent) == 0 && atoi(out) > 0)
			return atoi(out);
		if (kill(parent, 0) != 0)
			return -1;
		usleep(50000);
	}
}

static void jit__node_in_own_mount_and_pid_namespace__named_from_its_tmp(void **state)
{
	bt_test_require_priv();
	need_node();
	char cmd[3 * PATH_MAX];
	/* its own /tmp (a tmpfs in its mount namespace) and pid 1 of its own pid namespace: the map
	 * is /tmp/perf-1.map there, seen from here only through its root. Its directory is bound at
	 * /mnt inside the namespace first: the tree may itself be under /tmp, which the tmpfs hides. */
	snprintf(cmd, sizeof(cmd), "exec unshare -mpf --kill-child --mount-proc sh -c 'mount --bind %s /mnt && "
		 "mount -t tmpfs tmpfs /tmp && cd /mnt && exec node --perf-basic-prof --no-turbo-inlining "
		 "work.js ns.go'", dir);
	untrigger("ns");
	pid_t us = bt_test_spawn(cmd);
	track(us);
	pid_t node = child_of(us);
	assert_true(node > 0);
	track(node);
	char map[64];
	snprintf(map, sizeof(map), "/proc/%d/root/tmp/perf-1.map", (int)node);
	assert_true(wait_for_map(map, "JS:*btHotLoop", node));
	/* not where a process of this namespace would write it */
	char host_map[64];
	snprintf(host_map, sizeof(host_map), "/tmp/perf-%d.map", (int)node);
	assert_int_not_equal(access(host_map, F_OK), 0);
	profile_node(node, map, "dwarf", "ns");
	kill(node, SIGKILL);
	untrack(node);
	stop(us);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(jit__node_perf_basic_prof__functions_named_on_both_call_graphs, kill_started),
		cmocka_unit_test_teardown(jit__node_in_own_mount_and_pid_namespace__named_from_its_tmp, kill_started),
		cmocka_unit_test_teardown(jit__node_perf_prof__named_from_its_jitdump, kill_started),
		cmocka_unit_test_teardown(jit__jvm_compiler_perfmap__hot_method_named_on_both_call_graphs, kill_started),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
