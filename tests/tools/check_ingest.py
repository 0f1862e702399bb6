#!/usr/bin/env python3
"""check_ingest.py - checks what ingest_server.py received from `buildtrace agent` against the
profiles the agent wrote into its output directory (the same intervals, kept with a large
--max-files). Prints what it found; exits 1 with a reason at the first thing that is wrong.

Usage: check_ingest.py RECV_DIR OUTPUT_DIR [--auth VALUE] [--tenant VALUE] [--status FILE]
                       [--min-acked N] [--min-failed N] [--labels KEY=VALUE,...] [--off-cpu N]

Checked: every request is POST /ingest in pprof, of the series APP.cpu (or, with --off-cpu, also
APP.off_cpu: the agent's off-CPU profiles, units=nanoseconds, aggregationType=sum, their one sample
type off_cpu/nanoseconds, at least N of them acknowledged); in each series windows (from, until,
whole seconds) never overlap and tile, a gap only where an interval had nothing to send; each
acknowledged body is exactly one non-empty interval profile the agent wrote of that series (byte for
byte), each of those was acknowledged once, and its own start and duration lie in its window;
headers; status.json's push counters equal what the server acknowledged, the samples (and the
off-CPU nanoseconds) acknowledged are all the agent counted, and the spool is empty; with --labels,
samples of the process those labels name (by pid) all carry exactly them, and there are some."""
import gzip
import hashlib
import json
import os
import re
import sys
import urllib.parse
from datetime import datetime, timezone


def die(msg):
    print("check_ingest: " + msg)
    sys.exit(1)


def varint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of a protobuf message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            die("bad wire type %d" % wt)
        yield num, wt, v


def sample_types(data):
    """The (type, unit) pairs of a gzip pprof's sample types."""
    b = gzip.decompress(data)
    strings, types = [], []
    for num, wt, v in fields(b):
        if num == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 1:
            vt = dict((n, x) for n, _, x in fields(v))
            types.append((vt.get(1, 0), vt.get(2, 0)))
    return [(strings[t], strings[u]) for t, u in types]


def pprof_summary(data):
    """(samples counted by the first sample type, time_nanos, duration_nanos) of a gzip pprof."""
    b = gzip.decompress(data)
    total, t, d = 0, 0, 0
    for num, wt, v in fields(b):
        if num == 2:  # Sample
            for sn, swt, sv in fields(v):
                if sn == 2:  # value: packed, or one varint
                    if swt == 2:
                        first, _ = varint(sv, 0)
                    else:
                        first = sv
                    total += first
                    break
        elif num == 9:
            t = v
        elif num == 10:
            d = v
    return total, t, d


def sample_labels(data):
    """Each sample's labels of a gzip pprof, as dicts of key to string or number."""
    b = gzip.decompress(data)
    strings, samples = [], []
    for num, wt, v in fields(b):
        if num == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 2:
            labels = []
            for sn, swt, sv in fields(v):
                if sn == 3:
                    lab = dict((ln, lv) for ln, lwt, lv in fields(sv))
                    labels.append(lab)
            samples.append(labels)
    out = []
    for labels in samples:
        d = {}
        for lab in labels:
            k = strings[lab.get(1, 0)]
            d[k] = strings[lab[2]] if lab.get(2) else lab.get(3, 0)
        out.append(d)
    return out


def check_labels(acked, want):
    """Some sample of the acknowledged bodies has exactly the labels wanted (key=value,...), and
    every sample of that pid has them, but for exe and build_id, which may be missing."""
    want = dict(kv.split("=", 1) for kv in want.split(","))
    seen = 0
    for r in acked:
        for d in sample_labels(r[4]):
            if all(str(d.get(k, "")) == v for k, v in want.items()):
                seen += 1
            elif str(d.get("pid")) == want.get("pid") and any(
                    str(d.get(k, "")) != v for k, v in want.items() if k in d or k not in ("exe", "build_id")):
                # (the executable is unknown for a sample taken before its process's mappings were
                # read: those lack exe and build_id, and nothing else may differ)
                print("a sample of pid %s labelled %s" % (want["pid"], d))
                die("labels differ from %s" % want)
    if not seen:
        die("no sample labelled %s" % want)
    print("%d samples labelled %s" % (seen, want))


def interval_files(outdir, prefix):
    """The agent's non-empty interval profiles of one series, by their bytes' hash; and how many
    were empty."""
    files = {}
    empty_files = 0
    for name in sorted(os.listdir(outdir)):
        m = re.match(prefix + r"-(\d{8}T\d{6})\.(\d{3})Z\.pb\.gz$", name)
        if not m:
            continue
        data = open(os.path.join(outdir, name), "rb").read()
        total, _, _ = pprof_summary(data)
        if total == 0:
            empty_files += 1
            continue
        when = datetime.strptime(m.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=timezone.utc)
        files[hashlib.sha256(data).hexdigest()] = (name, when.timestamp() + int(m.group(2)) / 1000)
    return files, empty_files


def read_requests(recv, want):
    """The requests received, by series type (cpu, off_cpu), each (from, until, status, hash, body, name)."""
    reqs = {}
    for name in sorted(os.listdir(recv)):
        if not name.endswith(".meta"):
            continue
        meta = open(os.path.join(recv, name)).read().split("\n")
        body = open(os.path.join(recv, name[:-5] + ".body"), "rb").read()
        q = dict(urllib.parse.parse_qsl(meta[2]))
        if meta[0] != "POST" or meta[1] != "/ingest":
            die("%s: %s %s" % (name, meta[0], meta[1]))
        if q.get("format") != "pprof" or meta[3] != "multipart/form-data":
            die("%s: format %s, content type %s" % (name, q.get("format"), meta[3]))
        if q.get("spyName") != "ebpfspy" or not q.get("sampleRate", "").isdigit():
            die("%s: spyName %s sampleRate %s" % (name, q.get("spyName"), q.get("sampleRate")))
        if "--auth" in want and meta[4] != want["--auth"]:
            die("%s: Authorization '%s'" % (name, meta[4]))
        if "--tenant" in want and meta[5] != want["--tenant"]:
            die("%s: X-Scope-OrgID '%s'" % (name, meta[5]))
        frm, until = int(q["from"]), int(q["until"])
        if frm >= until:
            die("%s: from %d until %d" % (name, frm, until))
        series = re.match(r"^[^{]*\.(cpu|off_cpu)\{", q.get("name", ""))
        if not series:
            die("%s: series name %r" % (name, q.get("name")))
        if series.group(1) == "off_cpu" and (q.get("units") != "nanoseconds" or q.get("aggregationType") != "sum"):
            die("%s: the off-CPU series with units %s aggregationType %s" % (name, q.get("units"),
                                                                           q.get("aggregationType")))
        reqs.setdefault(series.group(1), []).append(
            (frm, until, int(meta[6]), hashlib.sha256(body).hexdigest(), body, name))
    return reqs


def check_series(kind, reqs, files, empty_files, want):
    """One series' requests against the agent's files of it; its acknowledged requests."""
    acked = [r for r in reqs if r[2] == 200]
    print("%s: requests %d, acknowledged %d, profiles with samples %d, empty %d" %
          (kind, len(reqs), len(acked), len(files), empty_files))
    windows = sorted(set((r[0], r[1]) for r in reqs))
    gaps = 0
    for a, b in zip(windows, windows[1:]):
        if a[1] > b[0]:
            die("windows overlap: %s %s" % (a, b))
        gaps += a[1] != b[0]
    if gaps > empty_files:
        die("%d gaps between windows, %d intervals without samples" % (gaps, empty_files))
    seen = set()
    for frm, until, _, h, body, name in acked:
        if h in seen:
            die("%s: a profile acknowledged twice" % name)
        seen.add(h)
        if h not in files:
            die("%s: not one of the agent's interval profiles" % name)
        total, t, d = pprof_summary(body)
        fname, fend = files[h]
        if not (frm - 1 <= t / 1e9 and (t + d) / 1e9 <= until + 1 and abs(fend - until) <= 1):
            die("%s (%s): profile %.3f..%.3f outside window %d..%d" % (name, fname, t / 1e9, (t + d) / 1e9,
                                                                       frm, until))
        if kind == "off_cpu" and sample_types(body) != [("off_cpu", "nanoseconds")]:
            die("%s: an off-CPU profile of sample types %s" % (name, sample_types(body)))
    missing = [files[h][0] for h in files if h not in seen]
    if missing:
        die("profiles never acknowledged: %s" % missing)
    return acked


def main():
    recv, outdir = sys.argv[1], sys.argv[2]
    opts = sys.argv[3:]
    want = {}
    while opts:
        key = opts.pop(0)
        want[key] = opts.pop(0)
    reqs = read_requests(recv, want)
    if set(reqs) - ({"cpu", "off_cpu"} if "--off-cpu" in want else {"cpu"}):
        die("series sent: %s" % sorted(reqs))
    acked, all_reqs = {}, []
    for kind, prefix in (("cpu", "buildtrace"), ("off_cpu", "buildtrace-off_cpu")):
        files, empty = interval_files(outdir, prefix)
        acked[kind] = check_series(kind, reqs.get(kind, []), files, empty, want)
        all_reqs += reqs.get(kind, [])
    both = acked["cpu"] + acked["off_cpu"]
    if len(acked["cpu"]) < int(want.get("--min-acked", "1")):
        die("only %d acknowledged" % len(acked["cpu"]))
    if len(acked["off_cpu"]) < int(want.get("--off-cpu", "0")):
        die("only %d off-CPU profiles acknowledged" % len(acked["off_cpu"]))
    if len(all_reqs) - len(both) < int(want.get("--min-failed", "0")):
        die("only %d failed attempts" % (len(all_reqs) - len(both)))
    if "--labels" in want:
        check_labels(acked["cpu"], want["--labels"])
    if "--status" in want:
        root = json.load(open(want["--status"]))
        # every sample the agent took reached the server, in exactly one acknowledged profile
        got = sum(pprof_summary(r[4])[0] for r in acked["cpu"])
        if got != root["samples"]:
            die("the server acknowledged %d samples, the agent took %d" % (got, root["samples"]))
        print("samples acknowledged: %d, taken: %d" % (got, root["samples"]))
        if "--off-cpu" in want:
            ns = sum(pprof_summary(r[4])[0] for r in acked["off_cpu"])
            if ns != root["off_cpu"]["ns"]:
                die("the server acknowledged %d off-CPU ns, the agent counted %d" % (ns, root["off_cpu"]["ns"]))
            print("off-CPU nanoseconds acknowledged: %d, counted: %d" % (ns, root["off_cpu"]["ns"]))
        st = root["push"]
        if st["sent"] != len(both) or st["spool_files"] != 0:
            die("status.json push %s, server acknowledged %d" % (st, len(both)))
        if st["errors"] != len(all_reqs) - len(both):
            die("status.json push errors %d, server failed %d" % (st["errors"], len(all_reqs) - len(both)))
    print("ok")


if __name__ == "__main__":
    main()
