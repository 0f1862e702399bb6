#!/usr/bin/env python3
"""pull_checks.py - what `buildtrace agent --listen` answers besides profiles, checked with a real
Prometheus parser and raw sockets. Prints each finding; exits 1 at the first wrong one.

Usage: pull_checks.py PORT TOKEN

/metrics: Prometheus text that prometheus_client's parser reads, with the agent's families and
samples counted; /healthz 200; other methods 405; unknown paths (a path that would climb out of any
directory among them) 404; bad seconds 400; a request head past 8 KiB 431; a fifth connection while
four are open 503, answered at once. As a local user who may be hostile tries them: no token or a
wrong one 401 (but /healthz); a Host header a DNS-rebinding page would send 421; a third profile
request while two are being answered 429, at once; four clients that send their heads a byte at a
time hold their slots no longer than the head's time limit, after which /healthz answers again."""
import concurrent.futures
import socket
import sys
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

PORT = int(sys.argv[1])
TOKEN = sys.argv[2]
BASE = "http://127.0.0.1:%d" % PORT


def die(msg):
    print("pull_checks: " + msg)
    sys.exit(1)


def status(path, method="GET", data=None, token=TOKEN, host=None):
    req = urllib.request.Request(BASE + path, method=method, data=data)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if host:
        req.add_header("Host", host)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def raw(data):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
    s.sendall(data)
    out = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
    s.close()
    return out


# the metrics are refreshed once a second: wait for some samples to be counted
for _ in range(100):
    code, body = status("/metrics")
    if code != 200:
        die("/metrics: %d" % code)
    fams = {f.name: f for f in text_string_to_metric_families(body.decode())}
    if "buildtrace_samples" in fams and fams["buildtrace_samples"].samples[0].value > 0:
        break
    time.sleep(0.1)
want = ["buildtrace_samples", "buildtrace_lost_samples", "buildtrace_unresolved_frames", "buildtrace_processes",
        "buildtrace_build_ids", "buildtrace_resident_memory_bytes", "buildtrace_intervals",
        "buildtrace_push_sent", "buildtrace_push_errors", "buildtrace_push_dropped", "buildtrace_push_spool_files"]
for w in want:
    if w not in fams:
        die("/metrics lacks %s (has %s)" % (w, sorted(fams)))
samples = fams["buildtrace_samples"].samples[0].value
if fams["buildtrace_samples"].type != "counter" or samples <= 0:
    die("buildtrace_samples: %s %s" % (fams["buildtrace_samples"].type, samples))
if fams["buildtrace_resident_memory_bytes"].samples[0].value <= 0:
    die("no resident memory")
print("metrics: %d families, %d samples" % (len(fams), samples))

checks = [
    ("/healthz", "GET", None, 200),
    ("/metrics", "POST", b"x", 405),
    ("/debug/pprof/latest", "DELETE", None, 405),
    ("/../../../etc/passwd", "GET", None, 404),
    ("/debug/pprof/../../etc/passwd", "GET", None, 404),
    ("/etc/passwd", "GET", None, 404),
    ("/debug/pprof/profile?seconds=0", "GET", None, 400),
    ("/debug/pprof/profile?seconds=abc", "GET", None, 400),
    ("/debug/pprof/profile?seconds=100000", "GET", None, 400),
]
for path, method, data, want_code in checks:
    code, _ = status(path, method, data)
    if code != want_code:
        die("%s %s: %d, expected %d" % (method, path, code, want_code))
    print("%s %s: %d" % (method, path, code))

big = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 10000 + b"\r\n\r\n"
ans = raw(big)
if not ans.startswith(b"HTTP/1.1 431"):
    die("a 10 kB request head: %r" % ans[:40])
print("10 kB head: 431")
if not raw(b"NONSENSE\r\n\r\n").startswith(b"HTTP/1.1 400"):
    die("a request line without a version is not answered 400")

# four connections that say nothing hold every slot; the fifth is turned away at once
held = [socket.create_connection(("127.0.0.1", PORT), timeout=30) for _ in range(4)]
fifth = socket.create_connection(("127.0.0.1", PORT), timeout=30)
fifth.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
ans = fifth.recv(100)
if not ans.startswith(b"HTTP/1.1 503"):
    die("fifth connection: %r" % ans[:40])
print("fifth connection: 503")
for s in held + [fifth]:
    s.close()
# the slots are free once the agent has seen those connections end
for _ in range(300):
    if status("/healthz", token=None)[0] == 200:
        break
    time.sleep(0.1)

# who may ask, and for which name
for path, token, host, want_code in [("/metrics", None, None, 401), ("/metrics", "x" * len(TOKEN), None, 401),
                                     ("/debug/pprof/latest", TOKEN[:-1], None, 401), ("/healthz", None, None, 200),
                                     ("/metrics", TOKEN, "rebind.evil.example:%d" % PORT, 421),
                                     ("/metrics", TOKEN, "localhost:%d" % PORT, 200)]:
    code, _ = status(path, token=token, host=host)
    if code != want_code:
        die("%s with token %r, Host %r: %d, expected %d" % (path, token and token[:4], host, code, want_code))
    print("%s, token %s, Host %s: %d" % (path, "right" if token == TOKEN else "wrong" if token else "none",
                                         host, code))

# three profile requests at once: two are answered, the third refused at once rather than queued
with concurrent.futures.ThreadPoolExecutor(3) as ex:
    codes = sorted(ex.map(lambda _: status("/debug/pprof/profile?seconds=3")[0], range(3)))
if codes != [200, 200, 429]:
    die("three profile requests at once: %s" % codes)
print("three profile requests at once: %s" % codes)

# four clients that send their heads a byte at a time: each is cut off once its head's time is up,
# however steadily it sends, and /healthz is answered again
slow = [socket.create_connection(("127.0.0.1", PORT), timeout=30) for _ in range(4)]
start = time.monotonic()
cut = set()
head = b"GET /metrics HTTP/1.1\r\nX-Slow: " + b"a" * 4000
i = 0
while len(cut) < 4 and time.monotonic() - start < 60:
    for k, s in enumerate(slow):
        if k in cut:
            continue
        try:
            s.sendall(head[i % len(head):i % len(head) + 1])
        except OSError:
            cut.add(k)
            continue
        s.setblocking(False)
        try:
            if s.recv(100) == b"":
                cut.add(k)
        except BlockingIOError:
            pass
        except OSError:
            cut.add(k)
        s.setblocking(True)
    i += 1
    time.sleep(0.2)
if len(cut) < 4:
    die("clients sending a byte every 0.2 s still held %d slots after 60 s" % (4 - len(cut)))
print("slow heads cut off: %d" % len(cut))
for s in slow:
    s.close()
code, _ = status("/healthz", token=None)
if code != 200:
    die("/healthz after the slow heads: %d" % code)
print("ok")
