#!/usr/bin/env python3
"""idle_check.py - checks a gzip pprof of `buildtrace agent` with idle = yes: the samples cover every
CPU's time (samples >= 85% of rate x CPUs x duration, and not above 110%), and every sample of an idle
task (comm swapper/N) has pid 0 and an idle function of the kernel in its stack.

With PERF_SAMPLES, the samples `perf record -a -e cpu-clock` took at the same rate over the same
seconds, swapper's included, are what is expected instead (with PERF_SECONDS, the span of
perf's samples, their rate over the profile's duration): a kernel whose idle CPUs stop their
timers (as on some virtual machines) gives perf no more samples than it gives buildtrace.

Usage: idle_check.py FILE NCPUS HZ [PERF_SAMPLES [PERF_SECONDS]]"""
import gzip
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_ingest import fields, varint  # noqa: E402


def die(msg):
    print("idle_check: " + msg)
    sys.exit(1)


def packed(v, wt):
    if wt != 2:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def main():
    path, ncpus, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    b = gzip.decompress(open(path, "rb").read())
    strings, funcs, locs, samples, duration = [], {}, {}, [], 0
    for num, wt, v in fields(b):
        if num == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 5:
            f = dict((n, x) for n, _, x in fields(v))
            funcs[f.get(1)] = f.get(2, 0)
        elif num == 4:
            loc_id, fids = 0, []
            for n, _, x in fields(v):
                if n == 1:
                    loc_id = x
                elif n == 4:
                    fids.append(dict((ln, lx) for ln, _, lx in fields(x)).get(1))
            locs[loc_id] = fids
        elif num == 2:
            ids, count, labels = [], 0, {}
            for n, swt, x in fields(v):
                if n == 1:
                    ids += packed(x, swt)
                elif n == 2 and not count:
                    count = packed(x, swt)[0]
                elif n == 3:
                    lab = dict((ln, lx) for ln, _, lx in fields(x))
                    labels[lab.get(1)] = ("s", lab[2]) if lab.get(2) else ("n", lab.get(3, 0))
            samples.append((ids, count, labels))
        elif num == 10:
            duration = v
    key = {s: i for i, s in enumerate(strings)}
    total = sum(c for _, c, _ in samples)
    expected = hz * ncpus * duration / 1e9
    oracle = "%d Hz x %d CPUs x %.2f s" % (hz, ncpus, duration / 1e9)
    if len(sys.argv) > 5:
        # perf's rate over the span of its samples (one period more than first to last), over
        # the profile's own duration
        span = float(sys.argv[5]) + 1.0 / hz
        expected = float(sys.argv[4]) / span * duration / 1e9
        oracle = "perf record -a: %s samples in %.2f s" % (sys.argv[4], span)
    elif len(sys.argv) > 4:
        expected = float(sys.argv[4])
        oracle = "perf record -a over the same seconds"
    idle = 0
    for ids, count, labels in samples:
        comm = labels.get(key.get("comm"), labels.get(key.get("thread"), ("s", 0)))
        if comm[0] != "s" or not strings[comm[1]].startswith("swapper/"):
            continue
        idle += count
        pid = labels.get(key.get("pid"), ("n", -1))[1]
        names = [strings[funcs.get(f, 0)] for i in ids for f in locs.get(i, [])]
        if pid != 0 or not any(re.search(r"idle|cpu_startup_entry|mwait|poll_idle", n) for n in names):
            die("an idle sample with pid %s and frames %s" % (pid, names))
    print("samples %d (idle %d), expected %.0f from %s" % (total, idle, expected, oracle))
    if not (0.85 * expected <= total <= 1.15 * expected):
        die("the samples do not cover every CPU's time")
    print("ok")


main()
