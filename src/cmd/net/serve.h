/* serve.h - the agent's pull endpoint: a small HTTP/1.1 server on its own threads answering
 * /debug/pprof/profile?seconds=N (a fresh profile of the next N seconds, as Go's net/http/pprof serves
 * it), /debug/pprof/latest (the last interval's profile), when the agent counts off-CPU time the same
 * of it on /debug/pprof/off_cpu?seconds=N and /debug/pprof/latest_off_cpu, /metrics (Prometheus text)
 * and /healthz.
 * Requests never reach the filesystem: every answer is built from memory the agent hands over. The
 * session belongs to the agent's loop, so a profile request becomes a job the loop takes up
 * (bt_serve_next_job) and completes (bt_serve_job_done). Bounded: BT_SERVE_MAX_CONN connections at
 * once (more are answered 503), request heads of at most BT_SERVE_MAX_REQ bytes sent within
 * BT_SERVE_HEAD_S seconds, BT_SERVE_MAX_PROFILES profile requests at once (more are answered 429).
 * Guarded: on TCP, a Host header must be an IP literal, localhost or the configured name (no DNS
 * rebinding), and with a token every request but /healthz must carry it; on a Unix socket (0600),
 * only root and the agent's own user are answered (their peer credentials). */
#ifndef BT_SERVE_H
#define BT_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BT_SERVE_MAX_CONN 4
#define BT_SERVE_MAX_REQ 8192
#define BT_SERVE_MAX_SECONDS 300
#define BT_SERVE_MAX_QUERY 1024
#define BT_SERVE_HEAD_S 5
#define BT_SERVE_MAX_PROFILES 2

struct bt_serve;

struct bt_serve_opts {
	const char *listen;   /* "ADDR:PORT", "PORT" (on 127.0.0.1) or "unix:PATH" */
	const char *token;    /* Authorization: Bearer TOKEN (or Basic with it as the password); NULL: none */
	const char *host;     /* a host name the Host header may name besides IP literals and localhost; NULL */
};

/* "ADDR:PORT" or "PORT" (ADDR 127.0.0.1): an IPv4 address and a port. 0 or -EINVAL. */
int bt_serve_parse_addr(const char *spec, uint32_t *addr_be, uint16_t *port);

/* Listens as o says (a port below 1024, or a socket in root's directory, needs root, so before it
 * is left). 0 or -errno with a message in err. */
int bt_serve_open(const struct bt_serve_opts *o, struct bt_serve **out, char *err, size_t errlen);

/* Starts answering, on threads that have the capabilities the caller has now: call it once they
 * are dropped. 0 or -errno with a message in err. */
int bt_serve_run(struct bt_serve *s, char *err, size_t errlen);

/* The port it listens on (the one asked for, or the kernel's choice for port 0). */
uint16_t bt_serve_port(const struct bt_serve *s);

/* Stops accepting, answers waiting profile requests 503, joins the threads and frees s. */
void bt_serve_stop(struct bt_serve *s);

/* The agent counts off-CPU time: its paths answer (before bt_serve_run). */
void bt_serve_set_off_cpu(struct bt_serve *s);

/* The profile /debug/pprof/latest (latest_off_cpu when off_cpu) serves from now on (a copy of buf is
 * kept). */
void bt_serve_set_latest(struct bt_serve *s, bool off_cpu, const void *buf, size_t len);

/* The Prometheus text /metrics serves from now on (copied). */
void bt_serve_set_metrics(struct bt_serve *s, const char *text);

/* The loop's side of profile requests: the seconds of the oldest request not yet taken up (and
 * marks it taken), or 0 when there is none; its query string (what besides seconds= selects) into
 * query, and whether it asks for off-CPU time into *off_cpu. */
unsigned bt_serve_next_job(struct bt_serve *s, char *query, size_t len, bool *off_cpu);

/* Completes the request taken up last with this gzip pprof (copied), or with none (buf NULL: the
 * client gets 500). */
void bt_serve_job_done(struct bt_serve *s, const void *buf, size_t len);

#endif
