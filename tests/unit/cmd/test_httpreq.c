/* test_httpreq.c - HTTP/1 request heads as the pull endpoint reads them: well-formed heads split
 * into method, target, query and Content-Length; incomplete heads wait for more; malformed ones are
 * refused; the seconds parameter. */
#include "testutil.h"
#include "cmd/net/httpreq.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int parse(const char *text, struct bt_http_req *r, char *buf, size_t cap)
{
	size_t n = strlen(text);
	assert_true(n < cap);
	memcpy(buf, text, n + 1);
	return bt_http_parse(buf, n, r);
}

static void httpreq__good_heads__split(void **state)
{
	char buf[512];
	struct bt_http_req r;
	assert_int_equal(parse("GET /debug/pprof/profile?seconds=2&x=1 HTTP/1.1\r\nHost: a\r\n\r\n", &r, buf,
			       sizeof(buf)), 0);
	assert_string_equal(r.method, "GET");
	assert_string_equal(r.target, "/debug/pprof/profile");
	assert_string_equal(r.query, "seconds=2&x=1");
	assert_int_equal(r.content_length, -1);
	assert_int_equal(r.head_len, strlen("GET /debug/pprof/profile?seconds=2&x=1 HTTP/1.1\r\nHost: a\r\n\r\n"));
	const char *post = "POST /debug/pprof/symbol HTTP/1.0\r\ncontent-length:  12 \r\n\r\n0x1+0x2";
	assert_int_equal(parse(post, &r, buf, sizeof(buf)), 0);
	assert_string_equal(r.method, "POST");
	assert_string_equal(r.query, "");
	assert_int_equal(r.content_length, 12);
	assert_int_equal(r.head_len, strlen(post) - 7);
	assert_int_equal(parse("GET /healthz HTTP/1.1\n\n", &r, buf, sizeof(buf)), 0);
	assert_string_equal(r.target, "/healthz");
}

static void httpreq__bad_heads__refused_or_waiting(void **state)
{
	char buf[512];
	struct bt_http_req r;
	assert_int_equal(parse("GET /healthz HTTP/1.1\r\nHost: a\r\n", &r, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(parse("", &r, buf, sizeof(buf)), -EAGAIN);
	static const char *const bad[] = {
		"NONSENSE\r\n\r\n",
		"GET /healthz\r\n\r\n",
		"GET /healthz HTTP/2.0\r\n\r\n",
		"GET healthz HTTP/1.1\r\n\r\n",
		"get /healthz HTTP/1.1\r\n\r\n",
		" /healthz HTTP/1.1\r\n\r\n",
		"GET /a\tb HTTP/1.1\r\n\r\n",
		"GET /healthz HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
		"GET /healthz HTTP/1.1\r\nContent-Length: 12x\r\n\r\n",
		"GET /healthz HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
		"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET /healthz HTTP/1.1\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &r, buf, sizeof(buf)) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
	/* a NUL inside the head */
	memcpy(buf, "GET /a\0b HTTP/1.1\r\n\r\n", 22);
	assert_int_equal(bt_http_parse(buf, 21, &r), -EINVAL);
}

static void httpreq__seconds__range_and_default(void **state)
{
	assert_int_equal(bt_http_query_seconds("", 30, 300), 30);
	assert_int_equal(bt_http_query_seconds("debug=1", 30, 300), 30);
	assert_int_equal(bt_http_query_seconds("seconds=2", 30, 300), 2);
	assert_int_equal(bt_http_query_seconds("a=b&seconds=300&c", 30, 300), 300);
	assert_int_equal(bt_http_query_seconds("seconds=301", 30, 300), 0);
	assert_int_equal(bt_http_query_seconds("seconds=0", 30, 300), 0);
	assert_int_equal(bt_http_query_seconds("seconds=", 30, 300), 0);
	assert_int_equal(bt_http_query_seconds("seconds=2x", 30, 300), 0);
	assert_int_equal(bt_http_query_seconds("seconds=-1", 30, 300), 0);
	assert_int_equal(bt_http_query_seconds("seconds=99999999999999999999", 30, 300), 0);
}

/* Query parameters one by one, percent-decoded; what cannot be a label refused. */
static void httpreq__query_params__decoded_in_turn(void **state)
{
	const char *q = "seconds=2&service_name=svc%2Dalpha&&env=a+b&flag&x=%41%42";
	char n[32], v[32];
	size_t pos = 0;
	static const char *const want[][2] = { { "seconds", "2" }, { "service_name", "svc-alpha" }, { "env", "a b" },
					       { "flag", "" }, { "x", "AB" } };
	for (int i = 0; i < 5; i++) {
		assert_int_equal(bt_http_query_next(q, &pos, n, sizeof(n), v, sizeof(v)), 1);
		assert_string_equal(n, want[i][0]);
		assert_string_equal(v, want[i][1]);
	}
	assert_int_equal(bt_http_query_next(q, &pos, n, sizeof(n), v, sizeof(v)), 0);
	static const char *const bad[] = { "a=%4", "a=%zz", "a=%0a", "a=%00", "%=1", "a=0123456789012345678901234567890123" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pos = 0;
		assert_int_equal(bt_http_query_next(bad[i], &pos, n, sizeof(n), v, sizeof(v)), -EINVAL);
	}
	pos = 0;
	assert_int_equal(bt_http_query_next("", &pos, n, sizeof(n), v, sizeof(v)), 0);
}

/* Host and Authorization as the pull endpoint judges them: who may ask, and for which name. */
static void httpreq__host_and_token__judged(void **state)
{
	char buf[512];
	struct bt_http_req r;
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost:  127.0.0.1:6060 \r\nAuthorization: Bearer "
			       "0123456789abcdef\r\n\r\n", &r, buf, sizeof(buf)), 0);
	assert_string_equal(r.host, "127.0.0.1:6060");
	assert_string_equal(r.auth, "Bearer 0123456789abcdef");
	assert_true(bt_http_auth_ok(r.auth, "0123456789abcdef"));
	assert_false(bt_http_auth_ok(r.auth, "0123456789abcdeg"));
	assert_false(bt_http_auth_ok(r.auth, "0123456789abcdef0"));
	assert_false(bt_http_auth_ok(r.auth, ""));
	assert_false(bt_http_auth_ok("", "0123456789abcdef"));
	assert_false(bt_http_auth_ok("Bearer ", "0123456789abcdef"));
	/* Basic with the token as the password (go tool pprof with http://bt:TOKEN@host/): base64 of
	 * "bt:0123456789abcdef" as Python's base64 module gives it */
	char b64[128];
	assert_int_equal(bt_test_run(b64, sizeof(b64), "/usr/bin/python3 -c 'import base64; print(base64.b64encode("
				     "b\"bt:0123456789abcdef\").decode(), end=\"\")'"), 0);
	char basic[160];
	snprintf(basic, sizeof(basic), "Basic %s", b64);
	assert_true(bt_http_auth_ok(basic, "0123456789abcdef"));
	assert_false(bt_http_auth_ok(basic, "0123456789abcdeX"));
	assert_false(bt_http_auth_ok("Basic !!!!", "0123456789abcdef"));
	assert_false(bt_http_auth_ok("Basic YnQ=", "0123456789abcdef"));  /* "bt", no password */
	static const char *const ok[] = { "127.0.0.1", "127.0.0.1:6060", "10.1.2.3:80", "[::1]:6060", "[::1]",
					  "localhost", "LOCALHOST:6060", "prof.example:6060" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!bt_http_host_ok(ok[i], "prof.example"))
			fail_msg("refused: %s", ok[i]);
	static const char *const bad[] = { "", "evil.example", "evil.example:6060", "127.0.0.1.evil.example",
					   "localhost.evil.example", "[::1", "[evil]:1", "prof.example.evil" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (bt_http_host_ok(bad[i], "prof.example"))
			fail_msg("accepted: %s", bad[i]);
	assert_false(bt_http_host_ok("prof.example", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(httpreq__host_and_token__judged),
		cmocka_unit_test(httpreq__good_heads__split),
		cmocka_unit_test(httpreq__bad_heads__refused_or_waiting),
		cmocka_unit_test(httpreq__seconds__range_and_default),
		cmocka_unit_test(httpreq__query_params__decoded_in_turn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
