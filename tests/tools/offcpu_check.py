#!/usr/bin/env python3
"""Checks buildtrace's off-CPU and wall-clock time against the kernel's own accounting.

  offcpu_check.py off-cpu PROG BUILDTRACE TMPDIR   --off-cpu -p PID -d 4 against schedstat and perf
  offcpu_check.py wall PROG BUILDTRACE TMPDIR      --wall -p PID -d 4 against each thread's wall time
  offcpu_check.py formats PROG BUILDTRACE TMPDIR   one --off-cpu session in every format: folded in
                                                   microseconds, pprof (read by go tool pprof) with
                                                   its own sample type, svg titled by it, json

PROG is tests/progs/offcpu: threads "sleeper" (nanosleep) and "reader" (read on a pipe) alternate
100 ms of computing with 100 ms blocked. They start once buildtrace has attached, run for THREAD_S
seconds inside its 4-second session (buildtrace -v says its CLOCK_MONOTONIC window, which must hold
their whole lives) and end; each reads its own /proc/thread-self/schedstat at its start and at its
end, so the kernel's accounting is exact over the thread's life, which is all buildtrace can have
counted of it. The comparison is of one thread's own accounting: a busy machine slows the threads,
but both sides see the same slowness. Prints what it measured; exits 1 with the reasons when a check
fails.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

SECONDS = 4
THREAD_S = 2.5
WORKERS = ("sleeper", "reader")
STATE_S = "off-CPU: sleeping (S)"
STATE_D = "off-CPU: uninterruptible (D)"
STATE_R = "off-CPU: runnable (R)"
# The program's own functions: with the kernel's frames, what both profilers name alike (libc's
# wrappers are named by symbol here and by DWARF's inline records by perf).
PROG_FUNCS = {"sleeper", "reader", "waker", "compute_phase", "sleep_phase", "read_phase", "wake_phase",
              "cpu_ns", "start_thread", "clone3"}

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def schedstat(pid, tid):
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
            run, wait, _ = f.read().split()
        return int(run), int(wait)
    except OSError:
        return None


def steal_ns():
    """Time the hypervisor took from every CPU of this machine, in all (/proc/stat: clock ticks)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) * 1000000000 // os.sysconf("SC_CLK_TCK")


class Thread:
    """A worker's own accounting of its life: times and the kernel's run and run-queue ns."""

    def __init__(self, line):
        f = line.split()
        self.name, self.tid = f[0], int(f[1])
        self.t0, self.t1, self.run0, self.run1, self.wait0, self.wait1 = (int(x) for x in f[2:8])

    def wall(self):
        return self.t1 - self.t0

    def blocked(self):
        """Its wall time less its time on a CPU and waiting on a run queue."""
        return self.wall() - (self.run1 - self.run0) - (self.wait1 - self.wait0)


def window(log):
    m = re.search(r"off-CPU window: (\d+) to (\d+)", log)
    if not m:
        raise SystemExit("buildtrace -v did not say its off-CPU window:\n" + log)
    return int(m.group(1)), int(m.group(2))


def load_json(path):
    doc = json.load(open(path))
    names = [f["name"] for f in doc["frames"]]
    kinds = [f["kind"] for f in doc["frames"]]
    stacks = []
    for s in doc["stacks"]:
        stacks.append((s["comm"], s.get("kind", "cpu"), s["count"], s.get("off_cpu_ns", 0),
                       [(names[i], kinds[i]) for i in s["frames"]]))
    return doc, stacks


def run_profile(args, prog, bt, tmp, perf_data=None):
    """buildtrace ARGS -p PID -d 4 over the program, whose threads start once it has attached.
    Returns the workers' accounting (by name), buildtrace's stderr, the JSON profile's path and the
    machine's stolen time over the session."""
    go = os.path.join(tmp, "go")
    if os.path.exists(go):
        os.unlink(go)
    child = subprocess.Popen([prog, go, str(THREAD_S)], stdout=subprocess.PIPE, text=True)
    out, err = os.path.join(tmp, "offcpu.json"), os.path.join(tmp, "offcpu.err")
    with open(err, "w") as ef:
        b = subprocess.Popen([bt] + args + ["-p", str(child.pid), "-d", str(SECONDS), "-v", "-f", "json", "-o", out],
                             stdout=subprocess.DEVNULL, stderr=ef)
    while "sampling at" not in open(err).read() and b.poll() is None:
        time.sleep(0.02)
    steal0 = steal_ns()
    open(go, "w").close()
    # perf -p follows the threads there are when it starts: once they run
    first = child.stdout.readline()
    perf = None
    if perf_data:
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "sched:sched_switch", "--call-graph", "dwarf",
                                 "-p", str(child.pid), "-o", perf_data, "--", "sleep", str(THREAD_S - 0.5)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rc = b.wait()
    steal1 = steal_ns()
    if perf:
        perf.wait()
    child.kill()
    lines = [first] + child.stdout.read().splitlines()
    child.wait()
    log = open(err).read()
    print(log.strip())
    if rc:
        raise SystemExit("buildtrace failed: %d" % rc)
    threads = {t.name: t for t in (Thread(l) for l in lines[1:] if len(l.split()) == 8)}
    t0, t1 = window(log)
    for name in WORKERS:
        t = threads.get(name)
        if not t:
            raise SystemExit("the %s thread did not report its accounting: %s" % (name, lines))
        check(t0 <= t.t0 and t.t1 <= t1, "%s lived inside the session's window (%.3f..%.3f s of %.3f s)" %
              (name, (t.t0 - t0) / 1e9, (t.t1 - t0) / 1e9, (t1 - t0) / 1e9))
    return threads, log, out, steal1 - steal0


def perf_chains(data):
    """The blocking (S) stacks of the worker threads perf recorded: kernel frames from __schedule
    and the program's own frames, outermost first, with how many switches each had."""
    out = subprocess.run(["perf", "script", "-F", "comm,tid,ip,sym,dso,trace", "-i", data],
                         capture_output=True, text=True).stdout
    chains = {}
    for block in out.split("\n\n"):
        lines = block.strip("\n").split("\n")
        if not lines or "prev_state=S " not in lines[0]:
            continue
        comm = lines[0].split()[0]
        if comm not in WORKERS:
            continue
        frames = []
        for l in lines[1:]:
            parts = l.split(None, 1)
            if len(parts) < 2:
                continue
            sym, _, dso = parts[1].rpartition(" (")
            sym = sym.split("+0x")[0]
            if "kernel.kallsyms" in dso:
                frames.append(sym + "_[k]")
            elif sym in PROG_FUNCS:
                frames.append(sym)
        # the tracepoint's own frames (as other tracers attach) before the scheduler's are not the stack's
        while frames and frames[0] != "__schedule_[k]" and "__schedule_[k]" in frames:
            frames.pop(0)
        key = (comm, ";".join(frames[::-1]))
        chains[key] = chains.get(key, 0) + 1
    return chains


def bt_chains(stacks):
    """The same of buildtrace's sleeping stacks, with the time each holds."""
    chains = {}
    for comm, kind, _, ns, frames in stacks:
        if kind != "off_cpu" or comm not in WORKERS or not frames or frames[-1][0] != STATE_S:
            continue
        # a block already going on at the start: its kernel frames only (the kernel's own view of a
        # task that is not running, without its scheduler's), which perf never saw switch
        if any(k == "off_cpu" for _, k in frames[:-1]):
            continue
        kept = [n + "_[k]" if k == "kernel" else n for n, k in frames[:-1] if k == "kernel" or n in PROG_FUNCS]
        key = (comm, ";".join(kept))
        chains[key] = chains.get(key, 0) + ns
    return chains


def major(chains, share):
    """The chains holding at least share of their thread's total."""
    totals = {}
    for (comm, _), v in chains.items():
        totals[comm] = totals.get(comm, 0) + v
    return {k for k, v in chains.items() if v >= share * totals[k[0]]}


def off_cpu(prog, bt, tmp):
    data = os.path.join(tmp, "sched.data")
    threads, log, out, stolen = run_profile(["--off-cpu"], prog, bt, tmp, data)
    doc, stacks = load_json(out)
    check(doc.get("view") == "off_cpu", "the JSON profile says its view is off_cpu")
    blocking = {"sleeper": "sleep_phase", "reader": "read_phase"}
    # A thread's run time leaves out what the hypervisor stole while it ran, which the kernel
    # counts neither as running nor as waiting: wall - run - wait holds it besides the time blocked.
    print("stolen from the machine's CPUs meanwhile: %.3f s" % (stolen / 1e9))
    for comm in WORKERS:
        t = threads[comm]
        wall, kernel_blocked = t.wall(), t.blocked()
        wait0, wait1 = t.wait0, t.wait1
        mine = [s for s in stacks if s[0] == comm and s[1] == "off_cpu"]
        blocked = sum(s[3] for s in mine if s[4] and s[4][-1][0] in (STATE_S, STATE_D))
        runq = sum(s[3] for s in mine if s[4] and s[4][-1][0] == STATE_R)
        in_call = sum(s[3] for s in mine if s[4] and s[4][-1][0] in (STATE_S, STATE_D) and
                      any(n == blocking[comm] for n, _ in s[4]))
        print("%s: life %.3f s, kernel: blocked %.3f s, on a run queue %.3f s; buildtrace: blocked %.3f s "
              "(in %s %.3f s), runnable %.3f s" % (comm, wall / 1e9, kernel_blocked / 1e9, (wait1 - wait0) / 1e9,
                                                   blocked / 1e9, blocking[comm], in_call / 1e9, runq / 1e9))
        check(0.95 * (kernel_blocked - stolen) <= blocked <= 1.05 * kernel_blocked,
              "%s: off-CPU time blocked within 5%% of the kernel's (%.3f s against %.3f s, less up to %.3f s "
              "stolen)" % (comm, blocked / 1e9, kernel_blocked / 1e9, stolen / 1e9))
        check(in_call <= kernel_blocked + 0.10 * wall and in_call >= kernel_blocked - stolen - 0.10 * wall,
              "%s: the %s stack holds its expected share of the thread's wall time within 10 points "
              "(%.1f%% against %.1f%%)" % (comm, blocking[comm], 100 * in_call / wall, 100 * kernel_blocked / wall))
        check(abs(runq - (wait1 - wait0)) <= 0.10 * (wait1 - wait0) + 5e6,
              "%s: runnable time within 10%% (and 5 ms) of the kernel's run-queue time (%.3f s against %.3f s)" %
              (comm, runq / 1e9, (wait1 - wait0) / 1e9))
    mine, theirs = bt_chains(stacks), perf_chains(data)
    for k in sorted(major(mine, 0.05)):
        print("buildtrace: %s %s" % k)
    for k in sorted(major(theirs, 0.05)):
        print("perf:       %s %s" % k)
    check(major(mine, 0.05) == major(theirs, 0.05) and major(mine, 0.05),
          "the blocking stacks holding 5% of a thread's sleep or more are perf's sched:sched_switch ones")


def wall(prog, bt, tmp):
    threads, log, out, stolen = run_profile(["--wall"], prog, bt, tmp)
    doc, stacks = load_json(out)
    check(doc.get("view") == "wall", "the JSON profile says its view is wall")
    period = doc["period_ns"]
    for comm in WORKERS:
        cpu = sum(s[2] for s in stacks if s[0] == comm and s[1] == "cpu") * period
        off = sum(s[3] for s in stacks if s[0] == comm and s[1] == "off_cpu")
        w = threads[comm].wall()
        check(abs(cpu + off - w) <= 0.05 * w,
              "%s: on-CPU %.3f s (samples x period) + off-CPU %.3f s = %.3f s, within 5%% of its wall time %.3f s" %
              (comm, cpu / 1e9, off / 1e9, (cpu + off) / 1e9, w / 1e9))


def go_pprof(tmp, *args):
    env = dict(os.environ, HOME=tmp, GOFLAGS="-mod=mod")
    r = subprocess.run(["go", "tool", "pprof"] + list(args), capture_output=True, text=True, env=env)
    if r.returncode:
        raise SystemExit("go tool pprof %s failed: %s" % (" ".join(args), r.stderr))
    return r.stdout


def formats(prog, bt, tmp):
    base = os.path.join(tmp, "fmt")
    extra = ["--also-write", "folded:%s.folded" % base, "--also-write", "svg:%s.svg" % base,
             "--also-write", "pprof:%s.pb.gz" % base]
    threads, log, out, stolen = run_profile(["--off-cpu"] + extra, prog, bt, tmp)
    doc, stacks = load_json(out)
    off = [s for s in stacks if s[1] == "off_cpu"]
    check(bool(off) and all(s[2] == 0 and s[3] > 0 and s[4] and s[4][-1][1] == "off_cpu" for s in off),
          "json: every off-CPU stack has time, no samples, and its state as its leaf frame")
    check(doc["off_cpu_ns"] == sum(s[3] for s in off), "json: off_cpu_ns is the sum of the stacks' times")
    check(doc["total"] == sum(s[2] for s in stacks if s[1] == "cpu"), "json: total is the CPU samples'")
    # folded: the off-CPU stacks only, in microseconds, each line rounded (lines under half a
    # microsecond left out)
    lines = [l.rstrip("\n").rsplit(" ", 1) for l in open(base + ".folded")]
    total_us = sum(int(n) for _, n in lines)
    check(all(st.split(";")[-1].startswith("off-CPU: ") for st, _ in lines),
          "folded: every line ends in its state")
    check(abs(total_us - doc["off_cpu_ns"] / 1000) <= len(lines),
          "folded: the counts are microseconds (%d us, json %.0f us)" % (total_us, doc["off_cpu_ns"] / 1000))
    # the JSON profile stands for the same folded time, by the rules of docs/json-format.md
    r = subprocess.run([sys.executable, "tests/outputs/json_fold.py", out, "fold-off-cpu"], capture_output=True,
                       text=True)
    check(r.returncode == 0 and sorted(r.stdout.splitlines()) == sorted(l.rstrip("\n") for l in open(base + ".folded")),
          "json: valid by docs/json-format.md, and folds to the folded output " + r.stderr.strip())
    svg = open(base + ".svg").read()
    check("buildtrace off-CPU time</text>" in svg and " us, " in svg, "svg: titled off-CPU time, counted in us")
    if not shutil.which("go"):
        if os.environ.get("CI") == "true":
            check(False, "go is missing: go tool pprof is the oracle of the pprof output")
        return
    raw = go_pprof(tmp, "-raw", base + ".pb.gz")
    check(re.search(r"samples/count cpu/nanoseconds off_cpu/nanoseconds\[dflt\]", raw) is not None,
          "pprof: sample types samples/count, cpu/nanoseconds and off_cpu/nanoseconds, the last the default")
    top = go_pprof(tmp, "-top", "-cum", "-sample_index=off_cpu", "-nodecount=400", base + ".pb.gz")
    m = re.search(r"of ([0-9.]+)(s|ms) total", top)
    total = float(m.group(1)) * (1 if m.group(2) == "s" else 1e-3) if m else -1
    check(abs(total - doc["off_cpu_ns"] / 1e9) <= 0.01 + 0.01 * total,
          "pprof: go tool pprof's off_cpu total is the json's (%.3f s, %.3f s)" % (total, doc["off_cpu_ns"] / 1e9))
    check("sleep_phase" in top and "read_phase" in top and "off-CPU: sleeping (S)" in top,
          "pprof: the blocking functions and the state frames are in go tool pprof's off_cpu top list")


def main():
    mode, prog, bt, tmp = sys.argv[1:5]
    os.makedirs(tmp, exist_ok=True)
    {"off-cpu": off_cpu, "wall": wall, "formats": formats}[mode](prog, bt, tmp)
    if failures:
        sys.exit(1)


main()
