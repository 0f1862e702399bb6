#!/usr/bin/env python3
"""json_fold.py - reads a buildtrace JSON profile the way a consumer would: checks it against the
schema of docs/json-format.md (exit 1 with the first violation), then prints either the folded stacks
it stands for ("fold", the default: the rules of docs/json-format.md; "fold-off-cpu": the folded off-CPU
time in microseconds) or one tab-separated line per frame ("frames": index, kind, name, file, build_id,
offset or address, return_address, resolved).

Usage: json_fold.py FILE [fold|fold-off-cpu|frames|header]"""
import json
import re
import sys

HEX = re.compile(r"^0x[0-9a-f]+$")
BID = re.compile(r"^([0-9a-f]{2})+$")


def fail(msg):
    print("json_fold: " + msg, file=sys.stderr)
    sys.exit(1)


def need(obj, key, types, where):
    if key not in obj:
        fail("%s: missing %r" % (where, key))
    if not isinstance(obj[key], types) or (isinstance(obj[key], bool) and bool not in types):
        fail("%s: %r has the wrong type" % (where, key))
    return obj[key]


def main():
    with open(sys.argv[1], "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))  # strict: the file must be UTF-8
    mode = sys.argv[2] if len(sys.argv) > 2 else "fold"
    if need(doc, "format", (str,), "document") != "buildtrace-profile":
        fail("not a buildtrace profile")
    if need(doc, "version", (int,), "document") != 1:
        fail("unknown version")
    if need(doc, "source", (str,), "document") not in ("session", "folded", "pprof"):
        fail("bad source")
    need(doc, "unit", (str,), "document")
    for k in ("period_ns", "duration_ns"):
        if doc.get(k, 0) is not None:
            need(doc, k, (int,), "document")
    if doc.get("start_time") is not None and not re.match(
            r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$", need(doc, "start_time", (str,), "document")):
        fail("bad start_time")
    per_pid = need(doc, "per_pid", (bool,), "document")
    total = need(doc, "total", (int,), "document")
    frames = need(doc, "frames", (list,), "document")
    stacks = need(doc, "stacks", (list,), "document")
    for i, fr in enumerate(frames):
        w = "frame %d" % i
        need(fr, "name", (str,), w)
        kind = need(fr, "kind", (str,), w)
        if kind not in ("user", "kernel", "jit", "unmapped", "python", "truncated", "off_cpu"):
            fail(w + ": bad kind")
        if kind == "truncated" and (fr["name"] != "[truncated]" or fr.get("file") is not None or
                                    fr.get("resolved") is not True):
            fail(w + ": a [truncated] mark is named so, has no file and is resolved")
        if kind == "jit":
            need(fr, "pid", (int,), w)
            if fr.get("name_from") not in ("perf-map", "jitdump", None) or "name_from" not in fr:
                fail(w + ": bad name_from")
            if (fr["name_from"] is None) == fr["resolved"]:
                fail(w + ": name_from and resolved disagree")
        if fr.get("file") is not None:
            need(fr, "file", (str,), w)
        elif "file" not in fr:
            fail(w + ": missing 'file'")
        if fr.get("build_id") is not None and not BID.match(need(fr, "build_id", (str,), w)):
            fail(w + ": bad build_id")
        elif "build_id" not in fr:
            fail(w + ": missing 'build_id'")
        need(fr, "resolved", (bool,), w)
        if doc["source"] != "session" and "return_address" in fr:
            fail(w + ": a converted frame has no return_address")
        for k in ("offset", "address"):
            if k in fr and not HEX.match(need(fr, k, (str,), w)):
                fail(w + ": bad " + k)
        if doc["source"] == "session" and kind != "off_cpu":
            if kind == "user" and "offset" not in fr:
                fail(w + ": a user frame needs its offset")
            if kind == "user" and doc["source"] == "session":
                v = need(fr, "symbol_version", (str, type(None)), w)
                if v is not None and ("@" in v or not v):
                    fail(w + ": a bad symbol_version")
            if kind in ("kernel", "jit", "unmapped") and "address" not in fr:
                fail(w + ": needs its address")
            if kind == "python":
                need(fr, "pid", (int,), w)
                need(fr, "instruction", (int,), w)
                if not HEX.match(need(fr, "code", (str,), w)):
                    fail(w + ": bad code")
            need(fr, "return_address", (bool,), w)
    off_total = need(doc, "off_cpu_ns", (int,), "document") if "off_cpu_ns" in doc else None
    if off_total is not None and need(doc, "view", (str,), "document") not in ("cpu", "off_cpu", "wall"):
        fail("bad view")
    counted = off_counted = 0
    lines, off_lines = {}, {}
    for i, st in enumerate(stacks):
        w = "stack %d" % i
        comm = need(st, "comm", (str,), w)
        count = need(st, "count", (int,), w)
        off = 0
        if off_total is not None:
            if need(st, "kind", (str,), w) not in ("cpu", "off_cpu"):
                fail(w + ": bad kind")
            off = need(st, "off_cpu_ns", (int,), w)
            if (st["kind"] == "off_cpu") != (off > 0) or (st["kind"] == "off_cpu" and count):
                fail(w + ": an off-CPU stack has time and no samples, a CPU stack the reverse")
        if per_pid:
            need(st, "pid", (int,), w)
        ids = need(st, "frames", (list,), w)
        names = [comm or "[unknown]"]
        for fid in ids:
            if not isinstance(fid, int) or isinstance(fid, bool) or not 0 <= fid < len(frames):
                fail(w + ": frame index out of range")
            fr = frames[fid]
            name = fr["name"] + ("_[k]" if fr["kind"] == "kernel" else "")
            if fr["kind"] == "python" and fr["resolved"] and fr.get("lines"):
                # as folded stacks spell a Python frame: its file's base name and its line
                name += " (%s:%d)" % (fr["file"].rsplit("/", 1)[-1], fr["lines"][0]["line"])
            names.append(name)
        text = ";".join(re.sub(r"[;\r\n]", ":", n) for n in names)
        if off:
            off_lines[text] = off_lines.get(text, 0) + off
            off_counted += off
        else:
            lines[text] = lines.get(text, 0) + count
        counted += count
    if counted != total:
        fail("total %d, stacks count %d" % (total, counted))
    if off_total is not None and off_counted != off_total:
        fail("off_cpu_ns %d, stacks hold %d" % (off_total, off_counted))
    if mode == "fold":
        for text, n in lines.items():
            print("%s %d" % (text, n))
    elif mode == "fold-off-cpu":
        for text, ns in off_lines.items():
            us = (ns + 500) // 1000
            if us:
                print("%s %d" % (text, us))
    elif mode == "frames":
        for i, fr in enumerate(frames):
            where = fr.get("offset", fr.get("address", "-"))
            print("\t".join(str(x) for x in (i, fr["kind"], fr["name"], fr["file"], fr["build_id"], where,
                                              str(fr.get("return_address", "-")).lower(),
                                              str(fr["resolved"]).lower())))
    elif mode == "header":
        for k in ("source", "unit", "period_ns", "start_time", "duration_ns", "per_pid", "total", "view",
                  "off_cpu_ns"):
            if k in doc or k not in ("view", "off_cpu_ns"):
                print("%s\t%s" % (k, json.dumps(doc.get(k))))
    else:
        fail("unknown mode " + mode)


main()
