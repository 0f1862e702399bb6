#!/usr/bin/env python3
"""ingest_server.py - a stand-in for a Pyroscope server's POST /ingest, for the agent tests. Each
request is recorded under DIR as N.meta (method, path, query, content type, one per line) and N.body
(the profile: the multipart field "profile" for pprof, else the raw body), then answered 200.
GET /ready answers 200 once listening.

Usage: ingest_server.py PORT DIR"""
import http.server
import os
import sys

PORT, DIR = int(sys.argv[1]), sys.argv[2]
os.makedirs(DIR, exist_ok=True)
count = [0]


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
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        ctype = self.headers.get("Content-Type", "")
        path, _, query = self.path.partition("?")
        if ctype.startswith("multipart/form-data"):
            field = multipart_field(body, ctype, "profile")
            body = field if field is not None else b""
        count[0] += 1
        base = os.path.join(DIR, "%04d" % count[0])
        with open(base + ".body.tmp", "wb") as f:
            f.write(body)
        with open(base + ".meta.tmp", "w") as f:
            f.write("%s\n%s\n%s\n%s\n" % (self.command, path, query, ctype.split(";")[0]))
        os.rename(base + ".body.tmp", base + ".body")
        os.rename(base + ".meta.tmp", base + ".meta")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


http.server.HTTPServer(("127.0.0.1", PORT), H).serve_forever()
