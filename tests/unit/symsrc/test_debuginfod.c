/* test_debuginfod.c - debug files from a real debuginfod server on loopback serving a temporary
 * directory: a stripped binary whose debug file only the server has is symbolized (API and CLI);
 * with the server stopped the build-id cache alone symbolizes it; a server that is down or never
 * answers costs one bounded lookup per build-id, and lookups never block the caller. */
#include "testutil.h"
#include "symsrc/bidcache.h"
#include "symsrc/debuginfod_client.h"
#include "symsrc/symsrc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct fx {
	char dir[64];
	char root[128], cache[128], clicache[128];
	char stripped[PATH_MAX], inl[PATH_MAX], dbg[PATH_MAX];
	struct bt_build_id id;
	char hex[2 * BT_BUILD_ID_MAXLEN + 1];
	int port;
	pid_t server;
	bool isolated;          /* in a private network namespace */
	uint64_t addr;          /* an address inside fx_outer with inlined frames */
	char expect[2048];      /* symbolize's output for addr, from llvm-symbolizer on the original */
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fixture_path(const char *name, char *out)
{
	char rel[256];
	bt_test_fixture(rel, sizeof(rel), name);
	assert_non_null(realpath(rel, out));
}

static void stop_server(struct fx *f)
{
	if (f->server <= 0)
		return;
	kill(f->server, SIGTERM);
	waitpid(f->server, NULL, 0);
	f->server = 0;
}

static int group_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/bt-debuginfod-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->root, sizeof(f->root), "%s/root", f->dir);
	snprintf(f->cache, sizeof(f->cache), "%s/cache", f->dir);
	snprintf(f->clicache, sizeof(f->clicache), "%s/clicache", f->dir);
	fixture_path("symsrc/inl.stripped", f->stripped);
	fixture_path("symsrc/inl", f->inl);
	fixture_path("symsrc/inl.debug", f->dbg);
	if (bt_buildid_from_path(f->inl, &f->id) != 0)
		return -1;
	bt_buildid_hex(&f->id, f->hex, sizeof(f->hex));
	/* The debug file exists only in the server's directory. */
	if (bt_test_run(NULL, 0, "mkdir -p '%s' '%s/srv' && cp '%s' '%s/srv/'", f->root, f->dir, f->dbg,
			f->dir) != 0)
		return -1;
	f->isolated = bt_test_isolate_network();
	f->port = bt_test_free_port();
	if (f->port <= 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* Never outlive the test, whatever happens to it. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		char port[16], db[128], log[128], srv[128];
		snprintf(port, sizeof(port), "%d", f->port);
		snprintf(db, sizeof(db), "%s/db.sqlite", f->dir);
		snprintf(log, sizeof(log), "%s/server.log", f->dir);
		snprintf(srv, sizeof(srv), "%s/srv", f->dir);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("debuginfod", "debuginfod", "-F", "-p", port, "-d", db, "-t", "0", "-g", "0",
		       "-c", "1", srv, (char *)NULL);
		_exit(127);
	}
	f->server = pid;
	/* Ready once the scan has indexed the file. */
	char path[256];
	snprintf(path, sizeof(path), "/buildid/%s/debuginfo", f->hex);
	double deadline = now() + 20;
	while (bt_test_http_status(f->port, path) != 200) {
		if (now() > deadline || waitpid(pid, NULL, WNOHANG) == pid) {
			fprintf(stderr, "debuginfod did not come up; see %s/server.log\n", f->dir);
			stop_server(f);
			return -1;
		}
		usleep(100 * 1000);
	}
	char url[64], dcache[128];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", f->port);
	snprintf(dcache, sizeof(dcache), "%s/dcache", f->dir);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", dcache, 1);
	unsetenv("DEBUGINFOD_PROGRESS");
	unsetenv("DEBUGINFOD_VERBOSE");

	/* The oracle output for one inlined address, from the unstripped original. */
	char out[2048];
	if (bt_test_run(out, sizeof(out), "nm '%s' | awk '$3 == \"fx_outer\" { print $1 }'", f->inl) != 0) {
		stop_server(f);
		return -1;
	}
	uint64_t start = strtoull(out, NULL, 16);
	/* The first address with three frames (two inlined): the oracle's answers for a range of
	 * addresses are blocks of NAME / LOCATION lines separated by empty lines. */
	static char all[1 << 16];
	if (bt_test_run(all, sizeof(all), "for i in $(seq 0 95); do printf '0x%%x\\n' $((0x%" PRIx64 " + i)); "
			"done | llvm-symbolizer --obj='%s'", start, f->inl) != 0) {
		stop_server(f);
		return -1;
	}
	uint64_t a = start;
	for (char *p = all; *p && !f->addr; a++) {
		char *end = strstr(p, "\n\n");
		size_t lines = 0;
		for (char *q = p; q < (end ? end : p + strlen(p)); q++)
			lines += *q == '\n';
		if (lines + 1 >= 6)
			f->addr = a;
		p = end ? end + 2 : p + strlen(p);
	}
	if (!f->addr ||
	    bt_test_run(out, sizeof(out), "llvm-symbolizer --obj='%s' 0x%" PRIx64, f->inl, f->addr) != 0) {
		stop_server(f);
		return -1;
	}
	/* FUNCTION / FILE:LINE:COL pairs -> ADDR<TAB>FUNCTION[+0xOFF]<TAB>FILE:LINE; the outermost
	 * function carries its offset. */
	char *save = NULL, *fn, *loc;
	size_t used = 0;
	for (fn = strtok_r(out, "\n", &save); fn && (loc = strtok_r(NULL, "\n", &save));
	     fn = strtok_r(NULL, "\n", &save)) {
		char *col = strrchr(loc, ':');
		if (col)
			*col = '\0';
		char offs[32] = "";
		if (!strcmp(fn, "fx_outer"))
			snprintf(offs, sizeof(offs), "+0x%" PRIx64, f->addr - start);
		used += (size_t)snprintf(f->expect + used, sizeof(f->expect) - used, "0x%" PRIx64 "\t%s%s\t%s\n",
					 f->addr, fn, offs, loc);
	}
	*state = f;
	return 0;
}

static int group_teardown(void **state)
{
	struct fx *f = *state;
	if (!f)
		return 0;
	stop_server(f);
	bt_test_run(NULL, 0, "rm -rf '%s'", f->dir);
	free(f);
	return 0;
}

struct got {
	int calls;
	int err;
	struct fx *f;
	struct bt_symtab *st;
	int adopt_err;
};

static void on_result(void *ctx, const struct bt_build_id *id, int fd, const char *path, int err)
{
	struct got *g = ctx;
	g->calls++;
	g->err = err;
	if (err)
		return;
	assert_true(bt_buildid_eq(id, &g->f->id));
	assert_non_null(path);
	struct bt_symsrc_opts o = { .root = g->f->root, .cache_dir = g->f->cache };
	int bfd = open(g->f->stripped, O_RDONLY);
	g->adopt_err = bt_symsrc_adopt_debug_fd(&o, id, fd, bfd, "/usr/bin/inl", &g->st);
	close(bfd);
}

static void debuginfod__server__debug_file_fetched_and_adopted(void **state)
{
	struct fx *f = *state;
	struct bt_symsrc_opts o = { .root = f->root, .cache_dir = f->cache };
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	int bfd = open(f->stripped, O_RDONLY);
	struct bt_symsrc_req req = { .id = &f->id, .mapped_fd = bfd, .path = "/usr/bin/inl" };
	/* Nothing local knows the stripped binary's functions: at most its PLT entries, from the
	 * binary itself. */
	int lerr = bt_symsrc_load(&o, &req, &st, origin, sizeof(origin));
	close(bfd);
	if (lerr == 0) {
		assert_string_equal(origin, "dynsym");
		uint64_t loff;
		const struct bt_sym *ls = bt_symtab_lookup(st, f->addr, &loff);
		assert_true(!ls || strcmp(ls->name, "fx_outer") != 0);
		bt_symtab_free(st);
		st = NULL;
	} else {
		assert_int_equal(lerr, -ENODATA);
	}
	assert_true(bt_debuginfod_configured());
	struct bt_debuginfod *c = NULL;
	assert_int_equal(bt_debuginfod_new(NULL, &c), 0);
	assert_int_equal(bt_debuginfod_request(c, &f->id), 0);
	assert_int_equal(bt_debuginfod_request(c, &f->id), -EALREADY);
	struct got g = { .f = f };
	assert_int_equal(bt_debuginfod_poll(c, on_result, &g, -1), 1);
	assert_int_equal(g.calls, 1);
	assert_int_equal(g.err, 0);
	assert_int_equal(g.adopt_err, 0);
	char out[256];
	assert_int_equal(bt_test_run(out, sizeof(out), "nm '%s' | awk '$3 == \"fx_caller\" { print $1 }'",
				     f->inl), 0);
	uint64_t addr = strtoull(out, NULL, 16), off;
	const struct bt_sym *s = bt_symtab_lookup(g.st, addr + 3, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "fx_caller");
	assert_int_equal(off, 3);
	bt_symtab_free(g.st);
	/* Answered once; asking again is not a new lookup. */
	assert_int_equal(bt_debuginfod_request(c, &f->id), -EALREADY);
	assert_int_equal(bt_debuginfod_poll(c, on_result, &g, 0), 0);
	struct bt_debuginfod_stats stats;
	bt_debuginfod_get_stats(c, &stats);
	assert_int_equal(stats.requests, 1);
	assert_int_equal(stats.found, 1);
	bt_debuginfod_free(c);
	/* The adopted file went to the build-id cache. */
	int fd = bt_bidcache_open(f->cache, &f->id, BT_BIDCACHE_DEBUG, NULL, 0);
	assert_true(fd >= 0);
	close(fd);
}

static void debuginfod__cli__symbolizes_through_server(void **state)
{
	struct fx *f = *state;
	char out[2048];
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --build-id %s --cache-dir '%s' "
				     "--root '%s' 0x%" PRIx64, f->hex, f->clicache, f->root, f->addr), 0);
	assert_string_equal(out, f->expect);
}

static void debuginfod__server_stopped__cache_alone_symbolizes(void **state)
{
	struct fx *f = *state;
	stop_server(f);
	char out[2048], dcache[192];
	assert_int_equal(bt_test_http_status(f->port, "/metrics"), -1);
	/* A fresh libdebuginfod cache too: nothing but buildtrace's cache can answer. */
	snprintf(dcache, sizeof(dcache), "%s/dcache-after", f->dir);
	setenv("DEBUGINFOD_CACHE_PATH", dcache, 1);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --no-debuginfod --build-id %s "
				     "--cache-dir '%s' --root '%s' 0x%" PRIx64, f->hex, f->clicache, f->root,
				     f->addr), 0);
	assert_string_equal(out, f->expect);
	assert_int_equal(bt_test_run(out, sizeof(out), "./buildtrace symbolize --no-debuginfod --build-id %s "
				     "--cache-dir '%s/none' --root '%s' 0x%" PRIx64 " 2>&1", f->hex, f->dir,
				     f->root, f->addr), 1);
	/* The session's path: the mapped binary plus the cache. */
	struct bt_symsrc_opts o = { .root = f->root, .cache_dir = f->cache };
	struct bt_symtab *st = NULL;
	char origin[BT_SYMSRC_ORIGIN_LEN];
	int bfd = open(f->stripped, O_RDONLY);
	struct bt_symsrc_req req = { .id = &f->id, .mapped_fd = bfd, .path = "/usr/bin/inl" };
	assert_int_equal(bt_symsrc_load(&o, &req, &st, origin, sizeof(origin)), 0);
	close(bfd);
	assert_string_equal(origin, "cache");
	uint64_t off;
	const struct bt_sym *s = bt_symtab_lookup(st, f->addr, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "fx_outer");
	bt_symtab_free(st);
	/* Asking the stopped server fails fast, once. */
	struct bt_debuginfod *c = NULL;
	assert_int_equal(bt_debuginfod_new(NULL, &c), 0);
	double t0 = now();
	assert_int_equal(bt_debuginfod_request(c, &f->id), 0);
	struct got g = { .f = f };
	assert_int_equal(bt_debuginfod_poll(c, on_result, &g, -1), 1);
	assert_true(g.err < 0);
	assert_true(now() - t0 < 5);
	assert_int_equal(bt_debuginfod_request(c, &f->id), -ENOENT);
	struct bt_debuginfod_stats stats;
	bt_debuginfod_get_stats(c, &stats);
	assert_int_equal(stats.requests, 1);
	assert_int_equal(stats.failed, 1);
	bt_debuginfod_free(c);
}

static void debuginfod__silent_server__one_timeout_per_build_id(void **state)
{
	struct fx *f = *state;
	/* Accepts connections (the kernel completes them) and never answers. */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s, 16), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
	char url[64], dcache[192];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	snprintf(dcache, sizeof(dcache), "%s/dcache-silent", f->dir);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", dcache, 1);
	struct bt_debuginfod *c = NULL;
	struct bt_debuginfod_opts o = { .timeout_ms = 1000 };
	assert_int_equal(bt_debuginfod_new(&o, &c), 0);
	double t0 = now();
	assert_int_equal(bt_debuginfod_request(c, &f->id), 0);
	/* Queuing and polling never wait on the network. */
	struct got g = { .f = f };
	assert_int_equal(bt_debuginfod_poll(c, on_result, &g, 0), 0);
	assert_true(now() - t0 < 0.5);
	assert_int_equal(bt_debuginfod_pending(c), 1);
	assert_int_equal(bt_debuginfod_poll(c, on_result, &g, -1), 1);
	double took = now() - t0;
	assert_int_equal(g.err, -ETIMEDOUT);
	assert_true(took >= 0.9 && took < 6);
	/* The failure is remembered: no second wait for the same build-id. */
	t0 = now();
	assert_int_equal(bt_debuginfod_request(c, &f->id), -ENOENT);
	assert_int_equal(bt_debuginfod_poll(c, on_result, &g, 0), 0);
	assert_true(now() - t0 < 0.5);
	struct bt_debuginfod_stats stats;
	bt_debuginfod_get_stats(c, &stats);
	assert_int_equal(stats.requests, 1);
	assert_int_equal(stats.timeouts, 1);
	/* Freeing abandons a lookup in flight promptly. */
	struct bt_build_id other = f->id;
	other.data[0] ^= 0xff;
	assert_int_equal(bt_debuginfod_request(c, &other), 0);
	usleep(100 * 1000);
	t0 = now();
	bt_debuginfod_free(c);
	assert_true(now() - t0 < 2.5);
	close(s);
}

/* libdebuginfod opens its own cache entries (O_RDONLY, no check of the type) and hands back any
 * that is not empty: one planted there that is not a regular file (a symlink to a directory) is
 * refused before anything reads it. (An empty one, like a device's, it takes for a cached miss.) */
static void debuginfod__cache_entry_not_regular__refused(void **state)
{
	struct fx *f = *state;
	char dcache[192], *saved = strdup(getenv("DEBUGINFOD_URLS"));
	snprintf(dcache, sizeof(dcache), "%s/dcache-dir", f->dir);
	assert_int_equal(bt_test_run(NULL, 0, "mkdir -p %s/%s && ln -s /usr %s/%s/debuginfo", dcache, f->hex,
				     dcache, f->hex), 0);
	setenv("DEBUGINFOD_CACHE_PATH", dcache, 1);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);  /* nothing listens: only the cache answers */
	struct bt_debuginfod *c = NULL;
	assert_int_equal(bt_debuginfod_new(NULL, &c), 0);
	assert_int_equal(bt_debuginfod_request(c, &f->id), 0);
	struct got g = { .f = f };
	assert_int_equal(bt_debuginfod_poll(c, on_result, &g, -1), 1);
	assert_int_equal(g.err, -EINVAL);
	struct bt_debuginfod_stats stats;
	bt_debuginfod_get_stats(c, &stats);
	assert_int_equal(stats.found, 0);
	assert_int_equal(stats.failed, 1);
	bt_debuginfod_free(c);
	setenv("DEBUGINFOD_URLS", saved, 1);
	free(saved);
}

/* The cache directory, picked as libdebuginfod picks it; restores the environment it changes. */
static void debuginfod__cache_dir__as_the_library_picks_it(void **state)
{
	struct fx *f = *state;
	static const char *const vars[] = { "DEBUGINFOD_CACHE_PATH", "HOME", "XDG_CACHE_HOME" };
	char *saved[3], dir[PATH_MAX], want[PATH_MAX], home[192];
	for (int i = 0; i < 3; i++)
		saved[i] = getenv(vars[i]) ? strdup(getenv(vars[i])) : NULL;
	snprintf(home, sizeof(home), "%s/home", f->dir);
	assert_int_equal(mkdir(home, 0700), 0);
	setenv("HOME", home, 1);
	unsetenv("DEBUGINFOD_CACHE_PATH");
	unsetenv("XDG_CACHE_HOME");
	assert_int_equal(bt_debuginfod_cache_dir(dir, sizeof(dir)), 0);
	snprintf(want, sizeof(want), "%s/.cache/debuginfod_client", home);
	assert_string_equal(dir, want);
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	assert_int_equal(bt_debuginfod_cache_dir(dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/xdg/debuginfod_client");
	snprintf(want, sizeof(want), "%s/.debuginfod_client_cache", home);
	assert_int_equal(mkdir(want, 0700), 0);  /* the old place wins while it exists */
	assert_int_equal(bt_debuginfod_cache_dir(dir, sizeof(dir)), 0);
	assert_string_equal(dir, want);
	setenv("DEBUGINFOD_CACHE_PATH", "/explicit", 1);
	assert_int_equal(bt_debuginfod_cache_dir(dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/explicit");
	/* a home others may write: neither its cache nor the client is used */
	unsetenv("DEBUGINFOD_CACHE_PATH");
	assert_int_equal(chmod(home, 0777), 0);
	char why[PATH_MAX + 64];
	assert_int_equal(bt_debuginfod_cache_check(why, sizeof(why)), -EPERM);
	snprintf(want, sizeof(want), "%s may be written by others (mode 0777)", home);
	assert_string_equal(why, want);
	struct bt_debuginfod *c = NULL;
	assert_int_equal(bt_debuginfod_new(NULL, &c), -EPERM);
	assert_null(c);
	assert_int_equal(chmod(home, 0700), 0);
	assert_int_equal(bt_debuginfod_cache_check(NULL, 0), 0);
	for (int i = 0; i < 3; i++) {
		if (saved[i])
			setenv(vars[i], saved[i], 1);
		else
			unsetenv(vars[i]);
		free(saved[i]);
	}
}

static void debuginfod__no_urls__not_configured(void **state)
{
	(void)state;
	char *saved = getenv("DEBUGINFOD_URLS") ? strdup(getenv("DEBUGINFOD_URLS")) : NULL;
	setenv("DEBUGINFOD_URLS", "  ", 1);
	assert_false(bt_debuginfod_configured());
	unsetenv("DEBUGINFOD_URLS");
	assert_false(bt_debuginfod_configured());
	if (saved)
		setenv("DEBUGINFOD_URLS", saved, 1);
	free(saved);
	struct bt_debuginfod *c = NULL;
	assert_int_equal(bt_debuginfod_new(NULL, &c), 0);
	struct bt_build_id none = { 0 };
	assert_int_equal(bt_debuginfod_request(c, &none), -EINVAL);
	assert_int_equal(bt_debuginfod_poll(c, NULL, NULL, 0), -EINVAL);
	bt_debuginfod_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debuginfod__server__debug_file_fetched_and_adopted),
		cmocka_unit_test(debuginfod__cli__symbolizes_through_server),
		cmocka_unit_test(debuginfod__server_stopped__cache_alone_symbolizes),
		cmocka_unit_test(debuginfod__silent_server__one_timeout_per_build_id),
		cmocka_unit_test(debuginfod__cache_entry_not_regular__refused),
		cmocka_unit_test(debuginfod__cache_dir__as_the_library_picks_it),
		cmocka_unit_test(debuginfod__no_urls__not_configured),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
