/* push.h - sending profiles to a Pyroscope-compatible server (POST /ingest) from a worker thread,
 * through a spool directory: the profile is written there first, so a server that is down or slow
 * never blocks sampling, and what was not sent survives a restart. The spool is bounded; the
 * oldest profiles are dropped, and counted, first. */
#ifndef BT_PUSH_H
#define BT_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BT_PUSH_STR 512

struct bt_push;

/* A label of the series name: key=value. */
struct bt_push_label {
	char key[64], value[192];
};

/* What the worker needs to know; the strings are copied (or read) by bt_push_open. */
struct bt_push_conf {
	const char *url;                      /* the server: http(s)://HOST[:PORT][/PREFIX] */
	const char *app_name;                 /* service_name of a profile spooled without a series
					       * (by an older version); "": "unspecified" */
	const struct bt_push_label *labels;   /* the labels of such a profile */
	size_t nlabels;
	const char *basic_auth_file;          /* a file holding USER:PASSWORD; "" none */
	const char *bearer_token_file;        /* a file holding the token; "" none */
	const char (*headers)[256];           /* "Name: value" */
	size_t nheaders;
	const char *ca_file;                  /* "" the system's certificates */
	bool tls_verify;
	const char *spool_dir;
	unsigned spool_max_files;
	uint64_t spool_max_bytes;
	unsigned freq_hz;                     /* the sampling rate the server is told */
};

struct bt_push_stats {
	uint64_t sent;           /* profiles the server acknowledged (2xx) */
	uint64_t errors;         /* attempts that failed (no connection, timeout, non-2xx) */
	uint64_t dropped;        /* spooled profiles removed to keep the spool within its bounds */
	uint64_t spool_files, spool_bytes;
	char last_error[160];    /* "" when the last attempt succeeded */
};

/* Starts the worker for c's push URL, app name, labels, credentials, headers, TLS and spool
 * settings; profiles already in the spool (from an earlier run) are sent first. The credential files
 * are read now. 0 or -errno with what failed in err (a credential file, the spool directory). */
int bt_push_start(const struct bt_push_conf *c, struct bt_push **out, char *err, size_t errlen);

/* bt_push_start in two steps: everything but the worker (credentials read while the agent may still
 * read any file), then the worker (once the agent's capabilities are dropped: a thread keeps those
 * it was created with). */
int bt_push_open(const struct bt_push_conf *c, struct bt_push **out, char *err, size_t errlen);
int bt_push_run(struct bt_push *p, char *err, size_t errlen);

/* Reads c's credential files again and uses them, with c's headers, from the next request on
 * (SIGHUP: a rotated token). 0, or -errno with the file named in err (the old ones stay). */
int bt_push_set_auth(struct bt_push *p, const struct bt_push_conf *c, char *err, size_t errlen);

/* Spools one profile (format "pprof" or "folded", covering [from_s, until_s] in UNIX seconds) of
 * the series labelled series ("name=value,...", values without ',', '=' or braces; it is sent as
 * SERVICE.cpu{host=HOST,name=value,...}, host unless the series has its own, SERVICE its
 * service_name). seq tells apart the series of one window. 0 or -errno (the spool cannot be
 * written). format "off_cpu.pprof" or "off_cpu.folded" is the off-CPU profile type,
 * sent as SERVICE.off_cpu{...}, its values nanoseconds summed. */
int bt_push_enqueue(struct bt_push *p, const void *buf, size_t len, const char *format, int64_t from_s,
		    int64_t until_s, const char *series, unsigned seq);

void bt_push_get_stats(struct bt_push *p, struct bt_push_stats *out);

/* Sends what the spool holds for up to secs seconds (no attempt outlives them), then ends the
 * worker; the stats then count what the server acknowledged and what is left. */
void bt_push_drain(struct bt_push *p, double secs);

/* Stops the worker (an attempt in flight is cut short by its timeout); the spool stays on disk. */
void bt_push_stop(struct bt_push *p);

/* A secret (a token, USER:PASSWORD) from path: one line of a regular file that no one but root and
 * us may read or change, as ssh takes a private key (base/trustdir.h). 0, or -errno with what is
 * wrong in err (-EPERM: refused, -EINVAL: not a regular file of one line, -ENODATA: empty). */
int bt_push_read_secret(const char *path, char *out, size_t len, char *err, size_t errlen);

/* url with the password of its user information (scheme://USER:PASSWORD@host) replaced by ***, for
 * messages. */
void bt_push_redact_url(const char *url, char *out, size_t len);

#endif
