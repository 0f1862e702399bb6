/* push.c - the push worker: sends the spool's profiles oldest first with libcurl, removes each once
 * the server took it, and backs off (1 s doubling up to 60 s) while the server fails. Spool files are
 * named FROM-UNTIL.FORMAT, so their names sort by time and carry what the request needs. Credentials
 * are read from their files once, when the worker starts. */
#include "cmd/net/push.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/safeopen.h"
#include "base/trustdir.h"
#include "output/profdir.h"

#define BACKOFF_MAX_S 60
#define REQUEST_TIMEOUT_S 20
#define BT_SECRET_MAX 4096

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What each request carries besides the profile. */
struct push_auth {
	char userpwd[BT_SECRET_MAX];  /* basic auth USER:PASSWORD; "" none */
	struct curl_slist *headers;   /* the configured ones and a bearer token's Authorization */
};

struct bt_push {
	char url[BT_PUSH_STR];
	struct push_auth *auth;       /* the worker's, read by post() without the lock */
	struct push_auth *auth_next;  /* set under the lock by bt_push_set_auth, taken up by the worker */
	char ca_file[BT_PUSH_STR];
	bool tls_verify;
	char fallback[1024];         /* the series of a profile spooled without one */
	unsigned rate;
	char spool[BT_PUSH_STR];
	unsigned max_files;
	uint64_t max_bytes;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, started;
	_Atomic bool draining;             /* stopping: send what is spooled until drain_until, then end */
	_Atomic double drain_until;  /* CLOCK_MONOTONIC seconds */
	_Atomic bool quit;           /* read by curl's progress callback without the lock */
	struct bt_push_stats st;
};

static void free_auth(struct push_auth *au)
{
	if (!au)
		return;
	curl_slist_free_all(au->headers);
	explicit_bzero(au->userpwd, sizeof(au->userpwd));
	free(au);
}

struct spooled {
	char name[96];
	uint64_t size;
};

static int spooled_cmp(const void *a, const void *b)
{
	return strcmp(((const struct spooled *)a)->name, ((const struct spooled *)b)->name);
}

/* A spooled profile's format, "pprof" or "folded", after "off_cpu." for the off-CPU profile type. */
static bool spool_format_ok(const char *fmt)
{
	if (!strncmp(fmt, "off_cpu.", 8))
		fmt += 8;
	return !strcmp(fmt, "pprof") || !strcmp(fmt, "folded");
}

/* A spool entry's name: FROM-UNTIL[-SEQ].FORMAT (SEQ tells the series of one window apart). */
static bool spool_parse(const char *n, int64_t *from, int64_t *until, char fmt[24])
{
	unsigned seq;
	int used = 0;
	if (sscanf(n, "%" SCNd64 "-%" SCNd64 "-%u.%23s%n", from, until, &seq, fmt, &used) != 4 &&
	    sscanf(n, "%" SCNd64 "-%" SCNd64 ".%23s%n", from, until, fmt, &used) != 3)
		return false;
	return !n[used] && spool_format_ok(fmt);
}

static bool spool_name_ok(const char *n)
{
	int64_t from, until;
	char fmt[24];
	return spool_parse(n, &from, &until, fmt);
}

/* A spooled profile begins with its series: SERIES_MAGIC, the labels, a newline. */
#define SERIES_MAGIC "\0BTSERIES "
#define SERIES_MAGIC_LEN 10
#define SERIES_MAX 8192

/* The spool's profiles, oldest first (*out malloc'ed). Count or -errno. */
static int spool_list(const char *dir, struct spooled **out, uint64_t *bytes)
{
	*out = NULL;
	*bytes = 0;
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	struct spooled *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (!spool_name_ok(de->d_name) || strlen(de->d_name) >= sizeof(v->name) || strstr(de->d_name, ".tmp."))
			continue;
		struct stat st;
		/* only what the agent spooled: a file another user planted is neither sent nor counted */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 32;
			struct spooled *nv = realloc(v, ncap * sizeof(*nv));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n].size = (uint64_t)st.st_size;
		*bytes += v[n].size;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), spooled_cmp);
	*out = v;
	return (int)n;
}

/* Removes the oldest profiles until the spool is within its bounds; the caller holds mu. */
static void spool_bound(struct bt_push *p)
{
	struct spooled *v;
	uint64_t bytes;
	int n = spool_list(p->spool, &v, &bytes);
	if (n < 0)
		return;
	int i = 0;
	while (i < n && ((unsigned)(n - i) > p->max_files || bytes > p->max_bytes)) {
		char path[BT_PUSH_STR + 128];
		snprintf(path, sizeof(path), "%s/%s", p->spool, v[i].name);
		if (unlink(path) == 0) {
			p->st.dropped++;
			bytes -= v[i].size;
		}
		i++;
	}
	p->st.spool_files = (uint64_t)(n - i);
	p->st.spool_bytes = bytes;
	free(v);
}

static size_t discard_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
	return size * nmemb;
}

/* Ends a transfer in flight once the agent is stopping. */
static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct bt_push *p = ud;
	return p->quit || (p->draining && mono_s() >= p->drain_until) ? 1 : 0;
}

static void series_name(char *out, size_t len, const char *series, const char *type);

/* One POST /ingest of the profile buf of series; 0 when the server answered 2xx, else -EIO with
 * the reason in why. */
static int post(struct bt_push *p, const struct push_auth *au, CURL *h, const char *file, const char *series,
		const void *buf, size_t len, char *why, size_t wl)
{
	int64_t from = 0, until = 0;
	char type[24] = "";
	spool_parse(file, &from, &until, type);
	/* the off-CPU profile type: a series of its own, its values nanoseconds to be summed */
	bool off = !strncmp(type, "off_cpu.", 8);
	const char *fmt = off ? type + 8 : type;
	static char name[3 * SERIES_MAX + 1024], url[sizeof(name) + BT_PUSH_STR + 256];  /* the worker's */
	series_name(name, sizeof(name), series, off ? "off_cpu" : "cpu");
	const char *slash = p->url[0] && p->url[strlen(p->url) - 1] == '/' ? "" : "/";
	snprintf(url, sizeof(url), "%s%singest?name=%s&from=%" PRId64 "&until=%" PRId64 "&format=%s"
		 "&sampleRate=%u&spyName=ebpfspy%s",
		 p->url, slash, name, from, until, fmt, p->rate,
		 off ? "&units=nanoseconds&aggregationType=sum" :
		 strcmp(fmt, "folded") ? "" : "&units=samples&aggregationType=sum");
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, p->tls_verify ? 1L : 0L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, p->tls_verify ? 2L : 0L);
	if (p->ca_file[0])
		curl_easy_setopt(h, CURLOPT_CAINFO, p->ca_file);
	if (au->userpwd[0]) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERPWD, au->userpwd);
	}
	curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)REQUEST_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard_body);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "buildtrace");
	/* The configured headers, then the body's own. */
	struct curl_slist *hdrs = NULL;
	for (const struct curl_slist *l = au->headers; l; l = l->next)
		hdrs = curl_slist_append(hdrs, l->data);
	curl_mime *mime = NULL;
	if (!strcmp(fmt, "pprof")) {
		/* Pyroscope reads a pprof profile from the multipart field "profile". */
		mime = curl_mime_init(h);
		curl_mimepart *part = curl_mime_addpart(mime);
		curl_mime_name(part, "profile");
		curl_mime_filename(part, "profile.pb.gz");
		curl_mime_type(part, "application/octet-stream");
		curl_mime_data(part, buf, len);
		curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
	} else {
		hdrs = curl_slist_append(hdrs, "Content-Type: text/plain");
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, buf);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	if (p->draining) {
		/* at stop, no attempt outlives the drain */
		double left = p->drain_until - mono_s();
		long ms = left <= 0 ? 1 : (long)(left * 1000) + 1;
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms < REQUEST_TIMEOUT_S * 1000L ? ms : REQUEST_TIMEOUT_S * 1000L);
	}
	CURLcode rc = curl_easy_perform(h);
	long status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdrs);
	curl_mime_free(mime);
	if (rc != CURLE_OK) {
		if (p->draining && (rc == CURLE_ABORTED_BY_CALLBACK || rc == CURLE_OPERATION_TIMEDOUT))
			snprintf(why, wl, "no answer before the end of push-drain");
		else
			snprintf(why, wl, "%s", curl_easy_strerror(rc));
		return -EIO;
	}
	if (status < 200 || status > 299) {
		snprintf(why, wl, "HTTP %ld", status);
		return -EIO;
	}
	return 0;
}

static void *read_all(const char *path, size_t *len)
{
	/* a spool entry that is a symlink, a FIFO or a device is not opened */
	struct stat st;
	int fd = bt_open_regular(AT_FDCWD, path, BT_OPEN_NOFOLLOW, &st);
	if (fd < 0)
		return NULL;
	char *buf = NULL;
	if ((buf = malloc((size_t)st.st_size + 1))) {
		size_t got = 0;
		while (got < (size_t)st.st_size) {
			ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		*len = got;
	}
	close(fd);
	return buf;
}

/* Waits up to s seconds (when draining, no later than its end), or until stopped or woken; the
 * caller holds mu. */
static void wait_s(struct bt_push *p, double s)
{
	if (p->draining && p->drain_until - mono_s() < s)
		s = p->drain_until - mono_s();
	if (s <= 0 || p->stop)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t ns = ts.tv_nsec + (int64_t)((s - (int64_t)s) * 1e9);
	ts.tv_sec += (time_t)s + ns / 1000000000;
	ts.tv_nsec = ns % 1000000000;
	pthread_cond_timedwait(&p->cv, &p->mu, &ts);
}

/* The pause after a failure: new profiles do not cut it short (the server would be asked again at
 * every interval), a stop does, and so does the start of the drain (one more try before the end). */
static void backoff_wait(struct bt_push *p, double s)
{
	bool was_draining = p->draining;
	double until = mono_s() + s;
	while (!p->stop && p->draining == was_draining && mono_s() < until &&
	       !(p->draining && mono_s() >= p->drain_until))
		wait_s(p, until - mono_s());
}

/* Stopping: the worker ends once the spool is empty or the drain's time is up. */
static bool drain_over(const struct bt_push *p, int spooled)
{
	return p->draining && (spooled == 0 || mono_s() >= p->drain_until);
}

static void *worker(void *arg)
{
	struct bt_push *p = arg;
	CURL *h = curl_easy_init();
	unsigned backoff = 0;
	pthread_mutex_lock(&p->mu);
	while (!p->stop && !drain_over(p, -1)) {
		if (backoff) {
			backoff_wait(p, backoff);
			if (p->stop || drain_over(p, -1))
				break;
		}
		struct spooled *v;
		uint64_t bytes;
		int n = spool_list(p->spool, &v, &bytes);
		if (n <= 0) {
			free(v);
			p->st.spool_files = 0;
			p->st.spool_bytes = 0;
			backoff = 0;
			if (drain_over(p, 0))
				break;
			wait_s(p, 5);
			continue;
		}
		char file[96], path[BT_PUSH_STR + 128];
		snprintf(file, sizeof(file), "%s", v[0].name);
		free(v);
		snprintf(path, sizeof(path), "%s/%s", p->spool, file);
		if (p->auth_next) {  /* credentials read again (SIGHUP) */
			free_auth(p->auth);
			p->auth = p->auth_next;
			p->auth_next = NULL;
		}
		pthread_mutex_unlock(&p->mu);
		size_t len = 0;
		char *buf = read_all(path, &len), *body = buf;
		const char *series = p->fallback;
		if (buf && len > SERIES_MAGIC_LEN && !memcmp(buf, SERIES_MAGIC, SERIES_MAGIC_LEN)) {
			char *nl = memchr(buf + SERIES_MAGIC_LEN, '\n', len - SERIES_MAGIC_LEN);
			if (nl) {
				*nl = '\0';
				series = buf + SERIES_MAGIC_LEN;
				len -= (size_t)(nl + 1 - buf);
				body = nl + 1;
			}
		}
		char why[160] = "";
		int err = !h ? -ENOMEM : buf ? post(p, p->auth, h, file, series, body, len, why, sizeof(why)) : -ENOENT;
		free(buf);
		pthread_mutex_lock(&p->mu);
		if (err == 0) {
			unlink(path);
			p->st.sent++;
			p->st.last_error[0] = '\0';
			backoff = 0;
		} else if (err == -ENOENT) {
			continue;  /* dropped from the spool meanwhile */
		} else {
			p->st.errors++;
			snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", why[0] ? why : strerror(-err));
			backoff = backoff ? (backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : backoff * 2) : 1;
		}
		spool_bound(p);
	}
	pthread_mutex_unlock(&p->mu);
	if (h)
		curl_easy_cleanup(h);
	return NULL;
}

/* The machine's name as a label value: bytes a label may not hold become '_'. */
static void host_label(char *out, size_t len)
{
	if (gethostname(out, len) != 0 || !out[0])
		snprintf(out, len, "unknown");
	out[len - 1] = '\0';
	for (char *s = out; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '.' || *s == '_' || *s == '-'))
			*s = '_';
}

/* The value of label key in series ("name=value,..."), into out: whether there is one. */
static bool series_get(const char *series, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	for (const char *s = series; *s;) {
		const char *end = strchrnul(s, ',');
		if ((size_t)(end - s) > kl && !strncmp(s, key, kl) && s[kl] == '=') {
			snprintf(out, len, "%.*s", (int)(end - s - kl - 1), s + kl + 1);
			return true;
		}
		s = *end ? end + 1 : end;
	}
	return false;
}

/* SERVICE.TYPE{host=H,name=value,...} with every byte outside [A-Za-z0-9._-] percent-encoded:
 * SERVICE the series' service_name in the letters Pyroscope allows in an application's name, TYPE
 * the profile type (cpu, off_cpu), host the machine unless the series names its own. */
static void series_name(char *out, size_t len, const char *series, const char *type)
{
	static char raw[SERIES_MAX + 1024];  /* the worker's */
	char host[256], app[256];
	if (!series_get(series, "service_name", app, sizeof(app)) || !app[0])
		snprintf(app, sizeof(app), "unspecified");
	for (char *c = app; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '_' || *c == '-' || *c == '/'))
			*c = '_';
	host_label(host, sizeof(host));
	bool own_host = series_get(series, "host", raw, sizeof(raw));
	snprintf(raw, sizeof(raw), "%s.%s{%s%s%s%.*s}", app, type, own_host ? "" : "host=", own_host ? "" : host,
		 !own_host && *series ? "," : "", SERIES_MAX, series);
	size_t o = 0;
	for (const unsigned char *s = (const unsigned char *)raw; *s && o + 4 < len; s++) {
		if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		    *s == '.' || *s == '_' || *s == '-')
			out[o++] = (char)*s;
		else
			o += (size_t)snprintf(out + o, len - o, "%%%02X", *s);
	}
	out[o] = '\0';
}

/* The series of a profile spooled without one (by an older version): the configured labels, and
 * service_name the app name unless a label sets it. */
static void fallback_series(char *out, size_t len, const struct bt_push_conf *c)
{
	size_t w = 0;
	bool svc = false;
	for (size_t i = 0; i < c->nlabels && w < len; i++) {
		w += (size_t)snprintf(out + w, len - w, "%s%s=%s", w ? "," : "", c->labels[i].key, c->labels[i].value);
		svc |= !strcmp(c->labels[i].key, "service_name");
	}
	if (!svc && w < len)
		snprintf(out + w, len - w, "%sservice_name=%s", w ? "," : "",
			 c->app_name && *c->app_name ? c->app_name : "unspecified");
}

/* A credential file's content without its final line end: a regular file (not followed through a
 * link, never a FIFO or device) of at most BT_SECRET_MAX - 1 bytes, one line, that no one but root
 * and us may read or change (bt_file_trusted; why says what is wrong). 0 or -errno (-EPERM). */
static int read_secret(const char *path, char *out, size_t len, char *why, size_t whylen)
{
	struct stat st;
	int fd = bt_open_regular(AT_FDCWD, path, BT_OPEN_NOFOLLOW, &st);
	if (fd < 0)
		return fd == -ELOOP || fd == -EINVAL ? -EINVAL : fd;
	int err = bt_file_trusted(fd, path, true, why, whylen);
	if (!err && (size_t)st.st_size >= len)
		err = -EFBIG;
	size_t got = 0;
	while (!err && got < len - 1) {
		ssize_t n = read(fd, out + got, len - 1 - got);
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (err)
		return err;
	out[got] = '\0';
	while (got && (out[got - 1] == '\n' || out[got - 1] == '\r'))
		out[--got] = '\0';
	for (size_t i = 0; i < got; i++)
		if ((unsigned char)out[i] < 0x20)
			return -EINVAL;  /* more than one line, or control characters */
	return got ? 0 : -ENODATA;
}

int bt_push_read_secret(const char *path, char *out, size_t len, char *err, size_t errlen)
{
	char why[PATH_MAX + 64] = "";
	int e = read_secret(path, out, len, why, sizeof(why));
	if (e == -EPERM)
		snprintf(err, errlen, "%s refused: %s (a secret must be root's or ours, and readable by no one "
			 "else)", path, why);
	else if (e)
		snprintf(err, errlen, "cannot read the secret in %s: %s", path,
			 e == -EINVAL ? "not a regular file of one line" : e == -ENODATA ? "empty" : strerror(-e));
	return e;
}

void bt_push_redact_url(const char *url, char *out, size_t len)
{
	/* scheme://USER:PASSWORD@host...: the password is not for logs */
	const char *s = strstr(url, "://");
	const char *host = s ? s + 3 : url;
	const char *at = strchr(host, '@'), *slash = strchr(host, '/');
	const char *colon = at ? memchr(host, ':', (size_t)(at - host)) : NULL;
	if (!at || (slash && slash < at) || !colon)
		snprintf(out, len, "%s", url);
	else
		snprintf(out, len, "%.*s:***%s", (int)(colon - url), url, at);
}

/* The credentials and headers of c into p: 0, or -errno with the file named in err. */
static int load_auth(struct push_auth *p, const struct bt_push_conf *c, char *err, size_t errlen)
{
	char secret[BT_SECRET_MAX];
	const char *file = c->basic_auth_file[0] ? c->basic_auth_file : c->bearer_token_file;
	if (file[0]) {
		int e = bt_push_read_secret(file, secret, sizeof(secret), err, errlen);
		if (e)
			return e;
		if (c->basic_auth_file[0] && !strchr(secret, ':')) {
			snprintf(err, errlen, "%s: expected USER:PASSWORD", file);
			explicit_bzero(secret, sizeof(secret));
			return -EINVAL;
		}
	}
	if (c->basic_auth_file[0])
		memcpy(p->userpwd, secret, sizeof(p->userpwd));
	for (size_t i = 0; i < c->nheaders; i++)
		p->headers = curl_slist_append(p->headers, c->headers[i]);
	if (c->bearer_token_file[0]) {
		char h[BT_SECRET_MAX + 32];
		snprintf(h, sizeof(h), "Authorization: Bearer %s", secret);
		p->headers = curl_slist_append(p->headers, h);
		explicit_bzero(h, sizeof(h));
	}
	explicit_bzero(secret, sizeof(secret));
	return 0;
}

/* A fresh push_auth from c (malloc'ed), or NULL with errno and a message in err. */
static struct push_auth *new_auth(const struct bt_push_conf *c, char *err, size_t errlen)
{
	struct push_auth *au = calloc(1, sizeof(*au));
	if (!au) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	int e = load_auth(au, c, err, errlen);
	if (e) {
		free_auth(au);
		errno = -e;
		return NULL;
	}
	return au;
}

static void free_push(struct bt_push *p)
{
	free_auth(p->auth);
	free_auth(p->auth_next);
	free(p);
}

int bt_push_set_auth(struct bt_push *p, const struct bt_push_conf *c, char *err, size_t errlen)
{
	struct push_auth *au = new_auth(c, err, errlen);
	if (!au)
		return -errno;
	pthread_mutex_lock(&p->mu);
	free_auth(p->auth_next);
	p->auth_next = au;
	pthread_mutex_unlock(&p->mu);
	return 0;
}

int bt_push_start(const struct bt_push_conf *c, struct bt_push **out, char *err, size_t errlen)
{
	int e = bt_push_open(c, out, err, errlen);
	if (!e && (e = bt_push_run(*out, err, errlen))) {
		bt_push_stop(*out);
		*out = NULL;
	}
	return e;
}

int bt_push_open(const struct bt_push_conf *c, struct bt_push **out, char *err, size_t errlen)
{
	struct bt_push *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	int e = 0;
	if (!(p->auth = new_auth(c, err, errlen))) {
		e = -errno;
		free_push(p);
		return e;
	}
	/* the certificates the server is verified with: no one but root and us may change them */
	if (c->ca_file[0]) {
		char why[PATH_MAX + 64] = "";
		int fd = bt_open_regular(AT_FDCWD, c->ca_file, 0, NULL);
		e = fd < 0 ? fd : bt_file_trusted(fd, c->ca_file, false, why, sizeof(why));
		if (fd >= 0)
			close(fd);
		if (e) {
			if (e == -EPERM)
				snprintf(err, errlen, "ca-file %s refused: %s", c->ca_file, why);
			else
				snprintf(err, errlen, "cannot read ca-file %s: %s", c->ca_file, strerror(-e));
			free_push(p);
			return e;
		}
	}
	snprintf(p->ca_file, sizeof(p->ca_file), "%s", c->ca_file);
	p->tls_verify = c->tls_verify;
	snprintf(p->url, sizeof(p->url), "%s", c->url);
	snprintf(p->spool, sizeof(p->spool), "%s", c->spool_dir);
	fallback_series(p->fallback, sizeof(p->fallback), c);
	p->rate = c->freq_hz;
	p->max_files = c->spool_max_files;
	p->max_bytes = c->spool_max_bytes;
	struct stat st;
	if (mkdir(p->spool, 0700) != 0 && errno != EEXIST)
		e = -errno;
	else if (lstat(p->spool, &st) != 0)
		e = -errno;
	else if (!S_ISDIR(st.st_mode))
		e = S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;  /* a link is not followed to anywhere */
	if (e) {
		snprintf(err, errlen, "cannot use the spool %s: %s", p->spool,
			 e == -ELOOP ? "it is a symbolic link" : strerror(-e));
		free_push(p);
		return e;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	pthread_mutex_lock(&p->mu);
	spool_bound(p);
	pthread_mutex_unlock(&p->mu);
	*out = p;
	return 0;
}

int bt_push_run(struct bt_push *p, char *err, size_t errlen)
{
	int e = pthread_create(&p->thread, NULL, worker, p);
	if (e) {
		snprintf(err, errlen, "cannot start the push worker: %s", strerror(e));
		return -e;
	}
	p->started = true;
	return 0;
}

struct bufw {
	const void *buf;
	size_t len;
	const char *series;
};

static int write_buf(void *ctx, FILE *f)
{
	const struct bufw *b = ctx;
	if (b->series && (fwrite(SERIES_MAGIC, 1, SERIES_MAGIC_LEN, f) != SERIES_MAGIC_LEN ||
			  fprintf(f, "%.*s\n", SERIES_MAX, b->series) < 0))
		return -EIO;
	return fwrite(b->buf, 1, b->len, f) == b->len ? 0 : -EIO;
}

int bt_push_enqueue(struct bt_push *p, const void *buf, size_t len, const char *format, int64_t from_s,
		    int64_t until_s, const char *series, unsigned seq)
{
	char path[BT_PUSH_STR + 128];
	snprintf(path, sizeof(path), "%s/%020" PRId64 "-%020" PRId64 "-%05u.%s", p->spool, from_s, until_s, seq, format);
	if (series && strchr(series, '\n'))
		return -EINVAL;
	struct bufw b = { buf, len, series };
	pthread_mutex_lock(&p->mu);
	int err = bt_atomic_write(path, write_buf, &b);
	spool_bound(p);
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return err;
}

void bt_push_get_stats(struct bt_push *p, struct bt_push_stats *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->st;
	pthread_mutex_unlock(&p->mu);
}

void bt_push_drain(struct bt_push *p, double secs)
{
	if (!p || !p->started)
		return;
	pthread_mutex_lock(&p->mu);
	p->drain_until = mono_s() + secs;
	p->draining = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	p->started = false;
	pthread_mutex_lock(&p->mu);
	spool_bound(p);  /* the counts status.json shows: what is left */
	pthread_mutex_unlock(&p->mu);
}

void bt_push_stop(struct bt_push *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	p->quit = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (p->started)
		pthread_join(p->thread, NULL);  /* a transfer in flight ends at its next progress call */
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free_push(p);
	curl_global_cleanup();
}
