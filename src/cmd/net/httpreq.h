/* httpreq.h - the head of an HTTP/1 request as the agent's pull endpoint reads it: request line,
 * target split from its query, Content-Length; and the one query parameter it takes. Untrusted
 * input: every byte is checked, nothing is read past the buffer. */
#ifndef BT_HTTPREQ_H
#define BT_HTTPREQ_H

#include <stdbool.h>
#include <stddef.h>

struct bt_http_req {
	const char *method;     /* "GET", "POST" ... (letters only) */
	const char *target;     /* the path, starting with '/' */
	const char *query;      /* after '?', "" when none */
	long content_length;    /* -1 when absent */
	size_t head_len;        /* bytes up to and including the blank line */
	char host[256];         /* the Host header's value, "" when absent */
	char auth[512];         /* the Authorization header's value, "" when absent */
};

/* Parses the head in buf[0..len) (buf[len] must be NUL; the head is cut into strings in place).
 * 0; -EAGAIN when the blank line that ends the head has not come yet; -EINVAL when it is not an
 * HTTP/1 request (a request line other than METHOD SP /TARGET SP HTTP/1.x, a control character in
 * the target, a Content-Length that is not a number, a Host or Authorization header given twice or
 * too long for its field). */
int bt_http_parse(char *buf, size_t len, struct bt_http_req *out);

/* Whether an Authorization value carries token: "Bearer TOKEN", or "Basic" with TOKEN as the password
 * (what a URL's user:password@ makes clients such as go tool pprof send). Compared in constant
 * time. */
bool bt_http_auth_ok(const char *auth, const char *token);

/* Whether a Host value names this server as a browser could not be made to by DNS rebinding: an IP
 * literal (IPv4, or IPv6 in brackets), "localhost", or extra (may be NULL; case ignored), with a
 * port or without. */
bool bt_http_host_ok(const char *host, const char *extra);

/* The value of "seconds=N" in query: dflt when absent, 0 when it is not a number in 1..max. */
unsigned bt_http_query_seconds(const char *query, unsigned dflt, unsigned max);

/* The parameters of query one by one: *pos (0 at first) moves past each. Its name and value,
 * percent-decoded ('+' as a blank), into name and value: 1; 0 when there are no more; -EINVAL when
 * one is malformed (a bad escape, a NUL or control byte decoded, longer than its buffer). */
int bt_http_query_next(const char *query, size_t *pos, char *name, size_t nl, char *value, size_t vl);

#endif
