#!/usr/bin/env python3
"""check_targets.py - runs `buildtrace agent targets --json` and compares its listing with /proc, read
here before and after it: every process alive and unchanged over the listing is listed, with the comm,
executable, command line, uid and cgroup /proc gives, and the systemd unit and container id its cgroup
path names; with --expect, given processes have exactly the labels wanted (or are dropped by a rule).
Prints what it found; exits 1 with a reason at the first thing that is wrong.

Usage: check_targets.py BUILDTRACE [--config FILE] [--expect PID=JSON]...
  JSON: {"service_name": "x", ...} for the labels, or a number: the rule that drops it"""
import json
import os
import re
import subprocess
import sys


def die(msg):
    print("check_targets: " + msg)
    sys.exit(1)


# A workqueue worker: the kernel names it after the work it runs at the moment
# ("kworker/0:1-events", then "kworker/0:1-events_power_efficient"): only the part before '-' is its own.
PF_WQ_WORKER = 0x20


def read(pid, name, binary=False):
    try:
        with open("/proc/%d/%s" % (pid, name), "rb") as f:
            data = f.read()
        return data if binary else data.decode("utf-8", "surrogateescape")
    except OSError:
        return None


def wq_name(comm):
    """A workqueue worker's name without what the kernel appends while it works: "-WQ" for the
    workqueue it last ran, "+WQ" for the one it runs now (kworker/u8:0+flush)."""
    return re.split(r"[-+]", comm, maxsplit=1)[0]


def proc(pid):
    """What /proc says of pid, as the listing's labels would; None when it is gone."""
    status = read(pid, "status")
    if status is None:
        return None
    uid = re.search(r"^Uid:\s+(\d+)", status, re.M)
    cmd = read(pid, "cmdline", True) or b""
    cmd = cmd[:4096].rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "surrogateescape")
    try:
        exe = os.readlink("/proc/%d/exe" % pid)
    except OSError:
        exe = ""
    cg = ""
    for line in (read(pid, "cgroup") or "").splitlines():
        if line.startswith("0::"):
            cg = line[3:]
    comm = (read(pid, "comm") or "").rstrip("\n")
    stat = (read(pid, "stat") or "").rsplit(")", 1)[-1].split()
    flags = int(stat[6]) if len(stat) > 6 else 0
    if flags & PF_WQ_WORKER:
        comm = wq_name(comm)
    return {"comm": comm, "exe": exe, "cmd": cmd, "uid": uid.group(1) if uid else None, "cgroup": cg,
            "start": stat[19] if len(stat) > 19 else None, "wq": bool(flags & PF_WQ_WORKER)}


def snapshot():
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            p = proc(int(d))
            if p:
                out[int(d)] = p
    return out


def unit_of(cg):
    """systemd's reading: the first component after the slices, when it is a unit."""
    for c in cg.strip("/").split("/"):
        if c.endswith(".slice"):
            continue
        if re.fullmatch(r"[A-Za-z0-9:_.\\@-]+\.(service|scope|socket|mount|swap|device|automount|target|path|timer)", c) \
                and not c.startswith("@") and not c.startswith("."):
            return c
        return None
    return None


def check_one(pid, entry, p):
    meta = entry["meta"]
    want = {"__meta_process_pid": str(pid), "__meta_process_comm": p["comm"], "__meta_process_exe": p["exe"],
            "__meta_process_commandline": p["cmd"], "__meta_process_uid": p["uid"], "__meta_cgroup_path": p["cgroup"]}
    unit = unit_of(p["cgroup"]) if p["cgroup"] else None
    if unit:
        want["__meta_systemd_unit"] = unit
    m = re.search(r"(?:^|/)(?:docker-|cri-containerd-|crio-|libpod-)?([0-9a-f]{64})(?:\.scope)?(?:/|$)", p["cgroup"])
    if m:
        want["__meta_container_id"] = m.group(1)
    for k, v in want.items():
        got = meta.get(k, "")
        if k == "__meta_process_comm" and p["wq"]:
            got = wq_name(got)
        if (v or "") != got:
            die("pid %d: %s is '%s' in the listing, /proc says '%s'" % (pid, k, got, v))


def main():
    bt = sys.argv[1]
    args = sys.argv[2:]
    cmd = [bt, "agent", "targets", "--json"]
    expect = {}
    while args:
        a = args.pop(0)
        if a == "--config":
            cmd += ["--config", args.pop(0)]
        elif a == "--expect":
            pid, _, j = args.pop(0).partition("=")
            expect[int(pid)] = json.loads(j)
        else:
            die("unknown option " + a)
    before = snapshot()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    after = snapshot()
    if r.returncode != 0:
        die("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.decode()))
    listing = {e["pid"]: e for e in json.loads(r.stdout.decode("utf-8", "surrogateescape"))}
    stable = [pid for pid in before if pid in after and before[pid] == after[pid]]
    for pid in stable:
        if pid not in listing:
            die("pid %d (%s) is alive throughout, not listed" % (pid, before[pid]["comm"]))
        check_one(pid, listing[pid], before[pid])
    for pid, want in expect.items():
        e = listing.get(pid)
        if e is None:
            die("pid %d not listed" % pid)
        if isinstance(want, int):
            if e["labels"] is not None or e["dropped_by"] != want:
                die("pid %d: %s, want dropped by rule %d" % (pid, e["labels"], want))
        elif e["labels"] != want:
            die("pid %d: labels %s, want %s" % (pid, e["labels"], want))
        elif e["series"] != ",".join("%s=%s" % kv for kv in sorted(want.items())):
            die("pid %d: series %s" % (pid, e["series"]))
    print("listed %d processes, %d alive throughout all as /proc says; %d expectations met" %
          (len(listing), len(stable), len(expect)))
    print("ok")


if __name__ == "__main__":
    main()
