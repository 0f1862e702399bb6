/* serve.c - the pull endpoint: an accept thread, one thread per connection up to
 * BT_SERVE_MAX_CONN, one request per connection (Connection: close), answers from memory only. */
#include "cmd/net/serve.h"
#include "cmd/net/httpreq.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct job {
	unsigned seconds;
	const char *query;
	bool off_cpu;              /* a profile of off-CPU time */
	int state;                 /* 0 queued, 1 taken by the loop, 2 done, 3 failed */
	void *buf;
	size_t len;
	struct job *next;
};

struct bt_serve {
	int fd;
	uint16_t port;
	bool unix_sock;            /* a Unix socket: peers are checked, not hosts */
	char path[108];            /* its path */
	char *token;               /* what every request but /healthz must carry; NULL: none */
	char host[256];            /* a host name the Host header may give besides literals and localhost */
	unsigned profiles;         /* profile requests queued or taken */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* jobs completed, connections ended */
	bool stop, running;
	unsigned conns;            /* connection threads running */
	struct job *head, *tail;   /* queued profile requests, oldest first */
	struct job *taken;         /* the one the loop works on */
	void *latest;
	size_t latest_len;
	bool off_cpu;              /* the agent counts off-CPU time: its paths answer */
	void *latest_off;
	size_t latest_off_len;
	char *metrics;
};

int bt_serve_parse_addr(const char *spec, uint32_t *addr_be, uint16_t *port)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(spec, ':'), *p = colon ? colon + 1 : spec;
	if (colon) {
		size_t n = (size_t)(colon - spec);
		if (n >= sizeof(host))
			return -EINVAL;
		if (n) {
			memcpy(host, spec, n);
			host[n] = '\0';
		}
	}
	char *end;
	errno = 0;
	unsigned long v = strtoul(p, &end, 10);
	struct in_addr a;
	if (!*p || *end || errno || v > 65535 || *p == '-' || *p == '+' || inet_pton(AF_INET, host, &a) != 1)
		return -EINVAL;
	*addr_be = a.s_addr;
	*port = (uint16_t)v;
	return 0;
}

static void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

/* An answer; extra: more header lines, each ending in CRLF (may be ""). */
static void respond_with(int fd, int code, const char *reason, const char *ctype, const char *extra,
			 const void *body, size_t len)
{
	char head[768];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n%s%s\r\n",
			 code, reason, ctype, len, extra,
			 !strcmp(ctype, "application/octet-stream") ?
				 "Content-Disposition: attachment; filename=\"profile\"\r\n" : "");
	send_all(fd, head, (size_t)n);
	send_all(fd, body, len);
}

static void respond(int fd, int code, const char *reason, const char *ctype, const void *body, size_t len)
{
	respond_with(fd, code, reason, ctype, "", body, len);
}

static void respond_text(int fd, int code, const char *reason, const char *text)
{
	respond(fd, code, reason, "text/plain; charset=utf-8", text, strlen(text));
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads the request head (up to the blank line) into buf and parses it, all of it within
 * BT_SERVE_HEAD_S seconds however the client paces its bytes: the bytes read, -E2BIG past
 * BT_SERVE_MAX_REQ, -EINVAL (not an HTTP/1 request) or -EIO (closed, timed out). */
static int read_head(int fd, char *buf, size_t cap, struct bt_http_req *req)
{
	size_t got = 0;
	double deadline = mono_s() + BT_SERVE_HEAD_S;
	while (got < cap - 1) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = deadline - mono_s();
		if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			return -EIO;
		ssize_t n = recv(fd, buf + got, cap - 1 - got, MSG_DONTWAIT);
		if (n <= 0)
			return -EIO;
		got += (size_t)n;
		buf[got] = '\0';
		int e = bt_http_parse(buf, got, req);
		if (e != -EAGAIN)
			return e ? e : (int)got;
	}
	return -E2BIG;
}

/* Queues a profile request of seconds and waits for the loop to complete it (or for the stop); past
 * BT_SERVE_MAX_PROFILES at once, refused (429) rather than queued behind the others. */
static void serve_profile(struct bt_serve *s, int fd, unsigned seconds, const char *query, bool off_cpu)
{
	struct job j = { .seconds = seconds, .query = query, .off_cpu = off_cpu };
	pthread_mutex_lock(&s->mu);
	if (s->profiles >= BT_SERVE_MAX_PROFILES) {
		pthread_mutex_unlock(&s->mu);
		char body[128];
		snprintf(body, sizeof(body), "%d profile requests are being answered already: try again later\n",
			 BT_SERVE_MAX_PROFILES);
		respond_with(fd, 429, "Too Many Requests", "text/plain; charset=utf-8", "Retry-After: 10\r\n", body,
			     strlen(body));
		return;
	}
	s->profiles++;
	if (s->tail)
		s->tail->next = &j;
	else
		s->head = &j;
	s->tail = &j;
	while (j.state < 2)
		pthread_cond_wait(&s->cv, &s->mu);
	s->profiles--;
	pthread_mutex_unlock(&s->mu);
	if (j.state == 2)
		respond(fd, 200, "OK", "application/octet-stream", j.buf, j.len);
	else
		respond_text(fd, s->stop ? 503 : 500, s->stop ? "Service Unavailable" : "Internal Server Error",
			     "no profile\n");
	free(j.buf);
}

enum copy_what { COPY_METRICS, COPY_LATEST, COPY_LATEST_OFF };

/* Answers from memory copied under the lock: the latest interval's profile (CPU or off-CPU) or the
 * metrics. */
static void serve_copy(struct bt_serve *s, int fd, enum copy_what what)
{
	bool latest = what != COPY_METRICS;
	pthread_mutex_lock(&s->mu);
	size_t len = what == COPY_LATEST ? s->latest_len : what == COPY_LATEST_OFF ? s->latest_off_len :
		     s->metrics ? strlen(s->metrics) : 0;
	const void *src = what == COPY_LATEST ? s->latest : what == COPY_LATEST_OFF ? s->latest_off : s->metrics;
	void *copy = src ? malloc(len ? len : 1) : NULL;
	if (copy)
		memcpy(copy, src, len);
	pthread_mutex_unlock(&s->mu);
	if (!copy)
		respond_text(fd, 404, "Not Found", latest ? "no interval ended yet\n" : "no metrics yet\n");
	else if (latest)
		respond(fd, 200, "OK", "application/octet-stream", copy, len);
	else
		respond(fd, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", copy, len);
	free(copy);
}

/* The body of a request, read and dropped (up to 1 MiB beyond the n bytes read with the head), so
 * that closing the connection does not reset it before the client reads the answer. */
static void discard_body(int fd, const struct bt_http_req *r, int n)
{
	long want = r->content_length - (n - (long)r->head_len);
	char buf[4096];
	for (long left = want < (1L << 20) ? want : (1L << 20); left > 0;) {
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r <= 0)
			return;
		left -= r;
	}
}

/* Go's symbol protocol, which pprof asks for frames a profile left without names: buildtrace named
 * every frame it could from the build-id's own symbols, so it has no more to give. */
static void serve_symbol(int fd, const struct bt_http_req *r, int n)
{
	bool post = !strcmp(r->method, "POST");
	if (post)
		discard_body(fd, r, n);
	respond_text(fd, 200, "OK", post ? "" : "num_symbols: 0\n");
}

/* One request; stranger: a peer of the Unix socket other than root and the agent's user, answered
 * 403 whatever it asks (once its head is read, so that it reads the answer rather than a reset). */
static void handle(struct bt_serve *s, int fd, bool stranger)
{
	char buf[BT_SERVE_MAX_REQ];
	struct bt_http_req r;
	int n = read_head(fd, buf, sizeof(buf), &r);
	if (n == -E2BIG)
		respond_text(fd, 431, "Request Header Fields Too Large", "request too large\n");
	else if (n == -EINVAL)
		respond_text(fd, 400, "Bad Request", "not an HTTP/1 request\n");
	if (n < 0)
		return;
	if (stranger) {
		respond_text(fd, 403, "Forbidden", "only root and the agent's user may ask here\n");
		return;
	}
	/* a name a browser was made to resolve here (DNS rebinding) is not ours */
	if (!s->unix_sock && !bt_http_host_ok(r.host, s->host)) {
		respond_text(fd, 421, "Misdirected Request", "not a host name of this server\n");
		return;
	}
	/* the profiles name every process and path: only for those who hold the token */
	if (s->token && strcmp(r.target, "/healthz") && !bt_http_auth_ok(r.auth, s->token)) {
		static const char no[] = "a token is needed (Authorization: Bearer TOKEN)\n";
		respond_with(fd, 401, "Unauthorized", "text/plain; charset=utf-8",
			     "WWW-Authenticate: Bearer realm=\"buildtrace\", Basic realm=\"buildtrace\"\r\n", no,
			     sizeof(no) - 1);
		return;
	}
	bool get = !strcmp(r.method, "GET");
	if (!strcmp(r.target, "/debug/pprof/symbol") && (get || !strcmp(r.method, "POST"))) {
		serve_symbol(fd, &r, n);
	} else if (!get) {
		respond_text(fd, 405, "Method Not Allowed", "only GET\n");
	} else if (!strcmp(r.target, "/healthz")) {
		respond_text(fd, 200, "OK", "ok\n");
	} else if (!strcmp(r.target, "/metrics")) {
		serve_copy(s, fd, COPY_METRICS);
	} else if (!strcmp(r.target, "/debug/pprof/latest")) {
		serve_copy(s, fd, COPY_LATEST);
	} else if (!strcmp(r.target, "/debug/pprof/profile") || !strcmp(r.target, "/debug/pprof/off_cpu")) {
		bool off = !strcmp(r.target, "/debug/pprof/off_cpu");
		unsigned secs = bt_http_query_seconds(r.query, 30, BT_SERVE_MAX_SECONDS);
		if (off && !s->off_cpu)
			respond_text(fd, 404, "Not Found", "off-CPU time is not counted (the agent's off-cpu setting)\n");
		else if (!secs)
			respond_text(fd, 400, "Bad Request", "seconds: expected 1..300\n");
		else if (strlen(r.query) >= BT_SERVE_MAX_QUERY)
			respond_text(fd, 414, "URI Too Long", "query too long\n");
		else
			serve_profile(s, fd, secs, r.query, off);
	} else if (!strcmp(r.target, "/debug/pprof/latest_off_cpu")) {
		if (s->off_cpu)
			serve_copy(s, fd, COPY_LATEST_OFF);
		else
			respond_text(fd, 404, "Not Found", "off-CPU time is not counted (the agent's off-cpu setting)\n");
	} else {
		respond_text(fd, 404, "Not Found", "not found: /debug/pprof/profile?seconds=N, "
			     "/debug/pprof/latest, /debug/pprof/off_cpu?seconds=N, /debug/pprof/latest_off_cpu, "
			     "/metrics, /healthz\n");
	}
}

struct conn {
	struct bt_serve *s;
	int fd;
	bool stranger;  /* see handle */
};

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct timeval tv = { .tv_sec = 5 };
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	tv.tv_sec = 30;
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	handle(c->s, c->fd, c->stranger);
	/* the slot is free before the client sees the end of the answer: a client that asks again
	 * at once finds it free */
	pthread_mutex_lock(&c->s->mu);
	c->s->conns--;
	pthread_cond_broadcast(&c->s->cv);
	pthread_mutex_unlock(&c->s->mu);
	/* What the client sent beyond what was read (a head too large, a body) is drained a little
	 * while: closing on unread bytes would reset the connection and lose the answer. */
	shutdown(c->fd, SHUT_WR);
	struct timeval drain = { .tv_sec = 1 };
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &drain, sizeof(drain));
	char sink[4096];
	for (int i = 0; i < 16 && recv(c->fd, sink, sizeof(sink), 0) > 0; i++)
		;
	close(c->fd);
	free(c);
	return NULL;
}

/* A connection beyond the bound is told so at once, without reading its request. */
static void take(struct bt_serve *s, int fd)
{
	/* on the Unix socket, root and the agent's own user only, known from its peer credentials */
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	bool stranger = s->unix_sock && (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 ||
					 (cr.uid != 0 && cr.uid != geteuid()));
	pthread_mutex_lock(&s->mu);
	bool room = s->conns < BT_SERVE_MAX_CONN;
	if (room)
		s->conns++;
	pthread_mutex_unlock(&s->mu);
	struct conn *c = room ? malloc(sizeof(*c)) : NULL;
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (c) {
		*c = (struct conn){ s, fd, stranger };
		if (pthread_create(&t, &attr, conn_thread, c) == 0) {
			pthread_attr_destroy(&attr);
			return;
		}
		free(c);
	}
	pthread_attr_destroy(&attr);
	if (room) {
		pthread_mutex_lock(&s->mu);
		s->conns--;
		pthread_mutex_unlock(&s->mu);
	}
	respond_text(fd, 503, "Service Unavailable", "busy\n");
	close(fd);
}

static void *accept_thread(void *arg)
{
	struct bt_serve *s = arg;
	for (;;) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		int r = poll(&pfd, 1, 200);
		pthread_mutex_lock(&s->mu);
		bool stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			break;
		if (r <= 0)
			continue;
		int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			take(s, fd);
	}
	return NULL;
}

/* A Unix socket at path, 0600: a socket left by an earlier run (ours or root's) is replaced, anything
 * else there is refused. fd or -errno. */
static int listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()))
			return -EEXIST;
		unlink(path);
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	mode_t old = umask(0177);  /* the socket is 0600 from the start */
	int e = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16) ? -errno : 0;
	umask(old);
	if (e)
		close(fd);
	return e ? e : fd;
}

static int listen_inet(const char *spec, uint16_t *port)
{
	uint32_t addr;
	if (bt_serve_parse_addr(spec, &addr, port))
		return -EINVAL;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, e = 0;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(*port), .sin_addr.s_addr = addr };
	socklen_t sl = sizeof(sa);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl))
		e = -errno;
	*port = ntohs(sa.sin_port);
	if (e && fd >= 0)
		close(fd);
	return e ? e : fd;
}

int bt_serve_open(const struct bt_serve_opts *o, struct bt_serve **out, char *err, size_t errlen)
{
	struct bt_serve *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	const char *spec = o->listen;
	s->unix_sock = !strncmp(spec, "unix:", 5);
	if (s->unix_sock)
		snprintf(s->path, sizeof(s->path), "%s", spec + 5);
	if (o->token && !(s->token = strdup(o->token))) {
		free(s);
		return -ENOMEM;
	}
	snprintf(s->host, sizeof(s->host), "%s", o->host ? o->host : "");
	s->fd = s->unix_sock ? listen_unix(s->path) : listen_inet(spec, &s->port);
	if (s->fd < 0) {
		int e = s->fd;
		if (e == -EINVAL)
			snprintf(err, errlen, "listen: '%s' is not ADDR:PORT (an IPv4 address), PORT or unix:PATH", spec);
		else if (e == -EEXIST)
			snprintf(err, errlen, "cannot listen on %s: something other than a socket of ours is there", spec);
		else
			snprintf(err, errlen, "cannot listen on %s: %s", spec, strerror(-e));
		free(s->token);
		free(s);
		return e;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	*out = s;
	return 0;
}

int bt_serve_run(struct bt_serve *s, char *err, size_t errlen)
{
	int e = pthread_create(&s->thread, NULL, accept_thread, s);
	if (e) {
		snprintf(err, errlen, "cannot start serving: %s", strerror(e));
		return -e;
	}
	s->running = true;
	return 0;
}

uint16_t bt_serve_port(const struct bt_serve *s)
{
	return s->port;
}

void bt_serve_stop(struct bt_serve *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	for (struct job *j = s->head; j; j = j->next)
		j->state = 3;
	if (s->taken)
		s->taken->state = 3;
	s->head = s->tail = s->taken = NULL;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->running)
		pthread_join(s->thread, NULL);
	close(s->fd);
	/* connections still reading time out within their 5 s */
	pthread_mutex_lock(&s->mu);
	while (s->conns)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s->latest);
	free(s->latest_off);
	free(s->metrics);
	if (s->token)
		explicit_bzero(s->token, strlen(s->token));
	free(s->token);
	if (s->unix_sock)
		unlink(s->path);  /* when it still may: a user the agent became may not */
	free(s);
}

void bt_serve_set_off_cpu(struct bt_serve *s)
{
	s->off_cpu = true;
}

void bt_serve_set_latest(struct bt_serve *s, bool off_cpu, const void *buf, size_t len)
{
	void *copy = malloc(len ? len : 1);
	if (!copy)
		return;
	memcpy(copy, buf, len);
	pthread_mutex_lock(&s->mu);
	void **dst = off_cpu ? &s->latest_off : &s->latest;
	free(*dst);
	*dst = copy;
	*(off_cpu ? &s->latest_off_len : &s->latest_len) = len;
	pthread_mutex_unlock(&s->mu);
}

void bt_serve_set_metrics(struct bt_serve *s, const char *text)
{
	char *copy = strdup(text);
	if (!copy)
		return;
	pthread_mutex_lock(&s->mu);
	free(s->metrics);
	s->metrics = copy;
	pthread_mutex_unlock(&s->mu);
}

unsigned bt_serve_next_job(struct bt_serve *s, char *query, size_t len, bool *off_cpu)
{
	unsigned secs = 0;
	query[0] = '\0';
	*off_cpu = false;
	pthread_mutex_lock(&s->mu);
	if (!s->taken && s->head) {
		s->taken = s->head;
		s->head = s->head->next;
		if (!s->head)
			s->tail = NULL;
		s->taken->state = 1;
		secs = s->taken->seconds;
		snprintf(query, len, "%s", s->taken->query);
		*off_cpu = s->taken->off_cpu;
	}
	pthread_mutex_unlock(&s->mu);
	return secs;
}

void bt_serve_job_done(struct bt_serve *s, const void *buf, size_t len)
{
	void *copy = buf ? malloc(len ? len : 1) : NULL;
	if (copy)
		memcpy(copy, buf, len);
	pthread_mutex_lock(&s->mu);
	if (s->taken) {
		s->taken->buf = copy;
		s->taken->len = len;
		s->taken->state = copy ? 2 : 3;
		s->taken = NULL;
		copy = NULL;
	}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	free(copy);
}
