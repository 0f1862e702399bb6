#!/usr/bin/env python3
"""check_series.py - checks the series `buildtrace agent` pushed (what ingest_server.py recorded in
RECV_DIR) when its relabel rules name processes: one request per series and window, each series' name
carrying its labels, the samples of each expected series coming only from its own processes, no sample
of a forbidden comm anywhere, no request with nothing of its type in it, at most a number of series
per window, and (with --status) every sample the agent kept acknowledged in exactly one series.
Prints what it found; exits 1 with a reason at the first thing that is wrong.

Usage: check_series.py RECV_DIR|--profile FILE [--expect SERVICE=PID,PID...:FORBIDDEN,...]... [--forbid-comm C,C...]
                       [--max-series N] [--want-other] [--status FILE] [--type cpu|off_cpu] [--min SERVICE=N]...
                       [--threads SERVICE=N]...
  --expect   a series whose service_name is SERVICE must exist; its samples all carry one of those
             pids and its profile none of the FORBIDDEN strings (another workload's functions or files,
             each the whole of a string of the profile)
  --forbid-comm  no sample anywhere has one of these comms (off_cpu: thread names)
  --max-series   no window has more than N series (besides service_name=other)
  --want-other   some window has the service_name=other series
  --status       status.json: the samples acknowledged are those the agent took less those its rules
                 dropped
  --profile FILE one gzip pprof (a pull request's answer) instead of what the server received: the
                 same checks of its samples (their series from their service_name label)
  --type         the profile type checked, the other's requests left aside: cpu (the default, samples)
                 or off_cpu (SERVICE.off_cpu requests, their values nanoseconds; --status then compares
                 them with the off-CPU nanoseconds the agent counted)
  --min          the series of SERVICE holds at least N over all windows (samples, or nanoseconds):
                 its processes were not left out for a time
  --threads      (off_cpu) the series of SERVICE holds at most the time of N threads over the
                 profiles' durations, summed over its windows (5% and 250 ms more, for the cuts' own
                 delays on a busy machine, which may move time from one window to the next): none
                 of its time counted twice"""
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


def bodies(recv, profile, ptype):
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
        if app.rsplit(".", 1)[-1] not in ("cpu", "off_cpu"):
            die("%s: name %s: no profile type" % (name, q["name"]))
        if app.rsplit(".", 1)[-1] != ptype:
            continue
        if not svc or app != re.sub(r"[^A-Za-z0-9._/-]", "_", svc) + "." + ptype:
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
    expect, forbid, max_series, want_other, status, ptype, mins = [], set(), None, False, None, "cpu", {}
    threads = {}
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
        elif o == "--type":
            ptype = opts.pop(0)
        elif o == "--min":
            svc, _, n = opts.pop(0).partition("=")
            mins[svc] = int(n)
        elif o == "--threads":
            svc, _, n = opts.pop(0).partition("=")
            threads[svc] = int(n)
        else:
            die("unknown option " + o)
    windows, seen, total, spans = {}, {}, 0, {}
    for name, labels, key, body in bodies(recv, profile, ptype):
        svc = labels["service_name"]
        if svc in windows.setdefault(key, set()):
            die("%s: service %s twice in window %s" % (name, svc, key))
        windows[key].add(svc)
        n, _, duration = pprof_summary(body)
        if not n:
            die("%s: series %s sent with nothing of its type in it" % (name, svc))
        spans[svc] = spans.get(svc, 0) + duration
        total += n
        # off-CPU time is kept or dropped under the name its thread had when it left the CPU (its
        # "thread" label); "comm" is the process's name when the profile was written, maybe an exec on
        for d in sample_labels(body):
            for k in ("comm", "thread") if ptype == "cpu" else ("thread",):
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
    unit = "samples" if ptype == "cpu" else "off-CPU ns"
    print("windows %d, series per window at most %d, %s %d" %
          (len(windows), max(len(v) for v in windows.values()) if windows else 0, unit, total))
    for svc, pids, bad in expect:
        if not seen.get(svc):
            die("no %s in series %s" % (unit, svc))
        print("series %s: %s %d, all of pids %s" % (svc, unit, seen[svc], sorted(pids)))
    for svc, n in threads.items():
        got = sum(v for k, v in seen.items() if k == svc)
        if got > n * (1.05 * spans.get(svc, 0) + 250000000):
            die("series %s holds %d off-CPU ns, more than %d threads over its windows' %d ns" %
                (svc, got, n, spans.get(svc, 0)))
        print("series %s: %.3f s off a CPU over %.3f s of windows, at most %d threads" %
              (svc, got / 1e9, spans.get(svc, 0) / 1e9, n))
    for svc, n in mins.items():
        if seen.get(svc, 0) < n:
            die("series %s: %s %d, fewer than %d" % (svc, unit, seen.get(svc, 0), n))
    if max_series is not None:
        for key, v in windows.items():
            if len(v - {"other"}) > max_series:
                die("window %s: %d series" % (key, len(v)))
    if want_other and not any("other" in v for v in windows.values()):
        die("no window has the other series")
    if status and ptype == "off_cpu":
        root = json.load(open(status))
        if total != root["off_cpu"]["ns"]:
            die("acknowledged %d off-CPU ns, the agent counted %d" % (total, root["off_cpu"]["ns"]))
        print("off-CPU ns acknowledged %d = counted" % total)
    elif status:
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
