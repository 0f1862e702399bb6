#!/usr/bin/env python3
"""check_series.py - checks the series `buildtrace agent` pushed (what ingest_server.py recorded in
RECV_DIR) when its relabel rules name processes: one request per series and window, each series' name
carrying its labels, the samples of each expected series coming only from its own processes, no sample
of a forbidden comm anywhere, at most a number of series per window, and (with --status) every sample
the agent kept acknowledged in exactly one series. Prints what it found; exits 1 with a reason at the
first thing that is wrong.

Usage: check_series.py RECV_DIR|--profile FILE [--expect SERVICE=PID,PID...:FORBIDDEN,...]... [--forbid-comm C,C...]
                       [--max-series N] [--want-other] [--status FILE]
  --expect   a series whose service_name is SERVICE must exist; its samples all carry one of those
             pids and its profile none of the FORBIDDEN strings (another workload's functions or files,
             each the whole of a string of the profile)
  --forbid-comm  no sample anywhere has one of these comms
  --max-series   no window has more than N series (besides service_name=other)
  --want-other   some window has the service_name=other series
  --status       status.json: the samples acknowledged are those the agent took less those its rules
                 dropped
  --profile FILE one gzip pprof (a pull request's answer) instead of what the server received: the
                 same checks of its samples (their series from their service_name label)"""
import gzip
import json
import os
import re
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_ingest import fields, pprof_summary, sample_labels  # noqa: E402


def die(msg):
    print("check_series: " + msg)
    sys.exit(1)


def strings(data):
    return [v.decode("utf-8", "replace") for num, wt, v in fields(gzip.decompress(data)) if num == 6]


def series_of(name):
    """The labels of an ingest name APP.cpu{k=v,...}."""
    app, _, rest = name.partition("{")
    if not rest.endswith("}"):
        die("name %s: no label set" % name)
    labels = dict(kv.split("=", 1) for kv in rest[:-1].split(",") if kv)
    return app, labels


def bodies(recv, profile):
    """(request name, labels, window, body) of every acknowledged request, or of the one profile."""
    if profile:
        data = open(profile, "rb").read()
        svcs = set(d.get("service_name") for d in sample_labels(data))
        if len(svcs) != 1:
            die("%s: samples of services %s, not one" % (profile, svcs))
        return [(profile, {"service_name": svcs.pop()}, ("0", "0"), data)]
    out = []
    for name in sorted(os.listdir(recv)):
        if not name.endswith(".meta"):
            continue
        meta = open(os.path.join(recv, name)).read().split("\n")
        if meta[6] != "200":
            continue
        body = open(os.path.join(recv, name[:-5] + ".body"), "rb").read()
        q = dict(urllib.parse.parse_qsl(meta[2]))
        app, labels = series_of(q["name"])
        svc = labels.get("service_name")
        if not svc or app != re.sub(r"[^A-Za-z0-9._/-]", "_", svc) + ".cpu":
            die("%s: name %s: application and service_name differ" % (name, q["name"]))
        out.append((name, labels, (q["from"], q["until"]), body))
    return out


def main():
    recv, profile = None, None
    opts = sys.argv[1:]
    if opts[0] == "--profile":
        opts.pop(0)
        profile = opts.pop(0)
    else:
        recv = opts.pop(0)
    expect, forbid, max_series, want_other, status = [], set(), None, False, None
    while opts:
        o = opts.pop(0)
        if o == "--expect":
            svc, _, rest = opts.pop(0).partition("=")
            pids, _, bad = rest.partition(":")
            expect.append((svc, set(int(p) for p in pids.split(",")), [b for b in bad.split(",") if b]))
        elif o == "--forbid-comm":
            forbid = set(opts.pop(0).split(","))
        elif o == "--max-series":
            max_series = int(opts.pop(0))
        elif o == "--want-other":
            want_other = True
        elif o == "--status":
            status = opts.pop(0)
        else:
            die("unknown option " + o)
    windows, seen, total = {}, {}, 0
    for name, labels, key, body in bodies(recv, profile):
        svc = labels["service_name"]
        if svc in windows.setdefault(key, set()):
            die("%s: service %s twice in window %s" % (name, svc, key))
        windows[key].add(svc)
        n, _, _ = pprof_summary(body)
        total += n
        for d in sample_labels(body):
            for k in ("comm", "thread"):
                if d.get(k) in forbid:
                    die("%s: a sample of %s %s in series %s" % (name, k, d.get(k), labels))
            if d.get("service_name") != svc:
                die("%s: a sample labelled service_name=%s in series %s" % (name, d.get("service_name"), svc))
        for svc_want, pids, bad in expect:
            if svc != svc_want:
                continue
            pid_seen = set(d.get("pid") for d in sample_labels(body))
            if not pid_seen <= pids:
                die("%s: series %s holds samples of pids %s, not only %s" % (name, svc, pid_seen - pids, pids))
            strs = set(strings(body))
            for b in bad:
                if b in strs:
                    die("%s: series %s holds '%s'" % (name, svc, b))
            seen[svc] = seen.get(svc, 0) + n
    print("windows %d, series per window at most %d, samples %d" %
          (len(windows), max(len(v) for v in windows.values()) if windows else 0, total))
    for svc, pids, bad in expect:
        if not seen.get(svc):
            die("no samples in series %s" % svc)
        print("series %s: %d samples, all of pids %s" % (svc, seen[svc], sorted(pids)))
    if max_series is not None:
        for key, v in windows.items():
            if len(v - {"other"}) > max_series:
                die("window %s: %d series" % (key, len(v)))
    if want_other and not any("other" in v for v in windows.values()):
        die("no window has the other series")
    if status:
        root = json.load(open(status))
        kept = root["samples"] - root["targets"]["samples_dropped"]
        if total != kept:
            die("acknowledged %d samples, the agent kept %d (took %d, dropped %d)" %
                (total, kept, root["samples"], root["targets"]["samples_dropped"]))
        print("samples acknowledged %d = taken %d - dropped %d" % (total, root["samples"],
                                                                  root["targets"]["samples_dropped"]))
    print("ok")


if __name__ == "__main__":
    main()
