/* debuginfod_client.c - one worker thread runs libdebuginfod lookups from a queue; a progress
 * callback enforces the per-lookup deadline and lets the owner abandon a lookup; finished lookups
 * wait in the table until polled, and failures stay there as the session's negative cache. */
#include "symsrc/debuginfod_client.h"
#include "base/trustdir.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_MS 10000

enum req_state { REQ_QUEUED, REQ_RUNNING, REQ_DONE, REQ_DELIVERED };

struct req {
	struct bt_build_id id;
	enum req_state state;
	int fd;        /* the result until delivered, then -1 */
	char *path;
	int err;
};

struct bt_debuginfod {
	pthread_mutex_t lock;
	pthread_cond_t work;     /* a request was queued, or stop */
	pthread_cond_t done;     /* a lookup finished */
	pthread_t thread;
	bool stop;               /* under lock; read without it by the progress callback via abort_now */
	int abort_now;           /* atomic copy of stop for the callback */
	struct req *reqs;
	size_t n, cap;
	unsigned pending;
	unsigned timeout_ms;
	struct bt_debuginfod_stats stats;
	debuginfod_client *dc;   /* used by the worker only */
	struct timespec deadline;  /* of the lookup in flight; worker only */
	bool timed_out;            /* worker only */
};

bool bt_debuginfod_configured(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls)
		return false;
	for (; *urls; urls++)
		if (*urls != ' ' && *urls != '\t')
			return true;
	return false;
}

static int path_fmt2(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s%s", a, b);
	return n < 0 ? -EINVAL : (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* DEBUGINFOD_CACHE_PATH may be relative: to the working directory, which the library shares. */
static int absolute(char *buf, size_t len, const char *path)
{
	char cwd[PATH_MAX];
	if (path[0] == '/')
		return path_fmt2(buf, len, path, "");
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	int n = snprintf(buf, len, "%s/%s", cwd, path);
	return n < 0 ? -EINVAL : (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int bt_debuginfod_cache_dir(char *buf, size_t len)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH");
	if (env && *env)
		return absolute(buf, len, env);
	const char *home = getenv("HOME");
	if (!home || !*home) {
		const struct passwd *pw = getpwuid(geteuid());
		home = pw ? pw->pw_dir : NULL;
	}
	struct stat st;
	if (home && path_fmt2(buf, len, home, "/.debuginfod_client_cache") == 0 && stat(buf, &st) == 0)
		return 0;  /* the old place, used while it exists */
	const char *xdg = getenv("XDG_CACHE_HOME");
	if (xdg && *xdg)
		return path_fmt2(buf, len, xdg, "/debuginfod_client");
	return home ? path_fmt2(buf, len, home, "/.cache/debuginfod_client") : -ENOENT;
}

int bt_debuginfod_cache_check(char *why, size_t whylen)
{
	char dir[PATH_MAX];
	int err = bt_debuginfod_cache_dir(dir, sizeof(dir));
	if (err)
		return err;
	return bt_dir_trusted(dir, why, whylen);
}

static int64_t ms_until(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(t->tv_sec - now.tv_sec) * 1000 + (t->tv_nsec - now.tv_nsec) / 1000000;
}

static void deadline_in(struct timespec *t, clockid_t clock, unsigned ms)
{
	clock_gettime(clock, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

/* libdebuginfod calls this while a transfer runs (connecting included); non-zero aborts it. */
static int progress(debuginfod_client *dc, long a, long b)
{
	struct bt_debuginfod *c = debuginfod_get_user_data(dc);
	if (!c)
		return 0;
	if (__atomic_load_n(&c->abort_now, __ATOMIC_RELAXED))
		return 1;
	if (ms_until(&c->deadline) <= 0) {
		c->timed_out = true;
		return 1;
	}
	return 0;
}

static void *worker(void *arg)
{
	struct bt_debuginfod *c = arg;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		size_t i = 0;
		while (!c->stop) {
			for (i = 0; i < c->n && c->reqs[i].state != REQ_QUEUED; i++)
				;
			if (i < c->n)
				break;
			pthread_cond_wait(&c->work, &c->lock);
		}
		if (c->stop)
			break;
		c->reqs[i].state = REQ_RUNNING;
		struct bt_build_id id = c->reqs[i].id;
		c->stats.requests++;
		pthread_mutex_unlock(&c->lock);

		deadline_in(&c->deadline, CLOCK_MONOTONIC, c->timeout_ms);
		c->timed_out = false;
		char *path = NULL;
		int fd = debuginfod_find_debuginfo(c->dc, id.data, id.len, &path);
		/* The library opens its cache entry itself; what it hands back is used only if it is a
		 * regular file. */
		struct stat st;
		if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
			close(fd);
			fd = -EINVAL;
		}

		pthread_mutex_lock(&c->lock);
		/* The table may have moved while unlocked; find the request again by index, which
		 * never changes (requests are only appended). */
		struct req *r = &c->reqs[i];
		r->state = REQ_DONE;
		r->fd = fd >= 0 ? fd : -1;
		r->path = fd >= 0 ? path : NULL;
		if (fd < 0)
			free(path);
		r->err = fd >= 0 ? 0 : c->timed_out ? -ETIMEDOUT : fd;
		if (fd >= 0)
			c->stats.found++;
		else
			c->stats.failed++;
		c->stats.timeouts += c->timed_out;
		c->pending--;
		pthread_cond_broadcast(&c->done);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int bt_debuginfod_new(const struct bt_debuginfod_opts *o, struct bt_debuginfod **out)
{
	if (!out)
		return -EINVAL;
	/* libdebuginfod opens, creates and deletes files in its cache by path, a FIFO there would
	 * block it forever: a cache someone else can change is not used. */
	int err = bt_debuginfod_cache_check(NULL, 0);
	if (err)
		return err == -EPERM ? -EPERM : -ENOSYS;
	struct bt_debuginfod *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->timeout_ms = o && o->timeout_ms ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	c->dc = debuginfod_begin();
	if (!c->dc) {
		free(c);
		return -ENOSYS;
	}
	debuginfod_set_user_data(c->dc, c);
	debuginfod_set_progressfn(c->dc, progress);
	pthread_condattr_t ca;
	err = pthread_condattr_init(&ca);
	if (!err)
		err = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_mutex_init(&c->lock, NULL);
	if (!err && (err = pthread_cond_init(&c->work, &ca)) != 0)
		pthread_mutex_destroy(&c->lock);
	if (!err && (err = pthread_cond_init(&c->done, &ca)) != 0) {
		pthread_cond_destroy(&c->work);
		pthread_mutex_destroy(&c->lock);
	}
	pthread_condattr_destroy(&ca);
	if (!err && (err = pthread_create(&c->thread, NULL, worker, c)) != 0) {
		pthread_cond_destroy(&c->done);
		pthread_cond_destroy(&c->work);
		pthread_mutex_destroy(&c->lock);
	}
	if (err) {
		debuginfod_end(c->dc);
		free(c);
		return -err;
	}
	*out = c;
	return 0;
}

int bt_debuginfod_request(struct bt_debuginfod *c, const struct bt_build_id *id)
{
	if (!c || !id || !id->len || id->len > BT_BUILD_ID_MAXLEN)
		return -EINVAL;
	int ret = 0;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n; i++) {
		if (!bt_buildid_eq(&c->reqs[i].id, id))
			continue;
		bool failed = c->reqs[i].state >= REQ_DONE && c->reqs[i].err;
		pthread_mutex_unlock(&c->lock);
		return failed ? -ENOENT : -EALREADY;
	}
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 32;
		struct req *nr = realloc(c->reqs, ncap * sizeof(*nr));
		if (!nr) {
			ret = -ENOMEM;
			goto out;
		}
		c->reqs = nr;
		c->cap = ncap;
	}
	c->reqs[c->n++] = (struct req){ .id = *id, .state = REQ_QUEUED, .fd = -1 };
	c->pending++;
	pthread_cond_signal(&c->work);
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

unsigned bt_debuginfod_pending(struct bt_debuginfod *c)
{
	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	unsigned n = c->pending;
	pthread_mutex_unlock(&c->lock);
	return n;
}

void bt_debuginfod_get_stats(struct bt_debuginfod *c, struct bt_debuginfod_stats *out)
{
	if (!c || !out)
		return;
	pthread_mutex_lock(&c->lock);
	*out = c->stats;
	pthread_mutex_unlock(&c->lock);
}

static bool any_done(const struct bt_debuginfod *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->reqs[i].state == REQ_DONE)
			return true;
	return false;
}

int bt_debuginfod_poll(struct bt_debuginfod *c, bt_debuginfod_fn fn, void *ctx, int timeout_ms)
{
	if (!c || !fn)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	if (timeout_ms < 0) {
		while (c->pending)
			pthread_cond_wait(&c->done, &c->lock);
	} else if (timeout_ms > 0 && !any_done(c) && c->pending) {
		struct timespec t;
		deadline_in(&t, CLOCK_MONOTONIC, (unsigned)timeout_ms);
		while (!any_done(c) && c->pending)
			if (pthread_cond_timedwait(&c->done, &c->lock, &t) == ETIMEDOUT)
				break;
	}
	int delivered = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (c->reqs[i].state != REQ_DONE)
			continue;
		struct req r = c->reqs[i];
		c->reqs[i].state = REQ_DELIVERED;
		c->reqs[i].fd = -1;
		c->reqs[i].path = NULL;
		/* The callback runs unlocked so that it may queue further requests. */
		pthread_mutex_unlock(&c->lock);
		fn(ctx, &r.id, r.fd, r.path, r.err);
		if (r.fd >= 0)
			close(r.fd);
		free(r.path);
		delivered++;
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return delivered;
}

void bt_debuginfod_free(struct bt_debuginfod *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	__atomic_store_n(&c->abort_now, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	for (size_t i = 0; i < c->n; i++) {
		if (c->reqs[i].fd >= 0)
			close(c->reqs[i].fd);
		free(c->reqs[i].path);
	}
	debuginfod_end(c->dc);
	pthread_cond_destroy(&c->done);
	pthread_cond_destroy(&c->work);
	pthread_mutex_destroy(&c->lock);
	free(c->reqs);
	free(c);
}
