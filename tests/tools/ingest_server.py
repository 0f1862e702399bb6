#!/usr/bin/env python3
"""ingest_server.py - a stand-in for a Pyroscope server's POST /ingest, for the agent tests. Each
request is recorded under DIR as N.meta and N.body (the profile: the multipart field "profile" for
pprof, else the raw body). N.meta has one item per line: method, path, query, content type, the
Authorization header, the X-Scope-OrgID header, and the status it was answered with.
GET /ready answers 200 once listening.

Usage: ingest_server.py PORT DIR [--fail N] [--delay SECONDS] [--tls CERT KEY]
  --fail N       answer the first N requests 500 (recorded too, with their status)
  --delay S      wait S seconds before answering each request
  --tls CERT KEY serve HTTPS with this certificate and key"""
import http.server
import os
import ssl
import sys
import threading
import time

PORT, DIR = int(sys.argv[1]), sys.argv[2]
opts = sys.argv[3:]
FAIL, DELAY, TLS = 0, 0.0, None
while opts:
    o = opts.pop(0)
    if o == "--fail":
        FAIL = int(opts.pop(0))
    elif o == "--delay":
        DELAY = float(opts.pop(0))
    elif o == "--tls":
        TLS = (opts.pop(0), opts.pop(0))
    else:
        sys.exit("unknown option " + o)
os.makedirs(DIR, exist_ok=True)
count = [0]
lock = threading.Lock()


def multipart_field(body, ctype, name):
    b = None
    for p in ctype.split(";"):
        p = p.strip()
        if p.startswith("boundary="):
            b = p[len("boundary="):].strip('"')
    if not b:
        return None
    for part in body.split(b"--" + b.encode()):
        head, _, data = part.partition(b"\r\n\r\n")
        if ('name="%s"' % name).encode() in head:
            return data[:-2] if data.endswith(b"\r\n") else data
    return None


class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        self.send_response(200 if self.path == "/ready" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        ctype = self.headers.get("Content-Type", "")
        path, _, query = self.path.partition("?")
        if ctype.startswith("multipart/form-data"):
            field = multipart_field(body, ctype, "profile")
            body = field if field is not None else b""
        if DELAY:
            time.sleep(DELAY)
        with lock:
            count[0] += 1
            seq = count[0]
        status = 500 if seq <= FAIL else 200
        base = os.path.join(DIR, "%04d" % seq)
        with open(base + ".body.tmp", "wb") as f:
            f.write(body)
        with open(base + ".meta.tmp", "w") as f:
            f.write("%s\n%s\n%s\n%s\n%s\n%s\n%d\n" % (
                self.command, path, query, ctype.split(";")[0],
                self.headers.get("Authorization", ""), self.headers.get("X-Scope-OrgID", ""), status))
        os.rename(base + ".body.tmp", base + ".body")
        os.rename(base + ".meta.tmp", base + ".meta")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


srv = http.server.HTTPServer(("127.0.0.1", PORT), H)
if TLS:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(TLS[0], TLS[1])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
