#!/usr/bin/env python3
"""syscallfilter.py - checks the system calls of a traced run (strace -f -o output) against the
SystemCallFilter= lines of a systemd unit, its groups expanded by `systemd-analyze syscall-filter`:
allow lists add up, `~` lists deny. Prints each call the unit would refuse; exits 1 if there is one,
2 if the trace holds no calls.

Usage: syscallfilter.py UNIT STRACE_OUTPUT"""
import re
import subprocess
import sys


def groups():
    out = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True,
                         check=True).stdout
    g, cur = {}, None
    for line in out.splitlines():
        if line.startswith("@"):
            cur = line.strip()
            g[cur] = []
        elif cur and line.strip() and not line.strip().startswith("#"):
            g[cur].append(line.strip())
    return g


def expand(names, g):
    out = set()
    for n in names:
        out |= expand(g.get(n, []), g) if n.startswith("@") else {n}
    return out


def main():
    unit, trace = sys.argv[1], sys.argv[2]
    g = groups()
    allow, deny = set(), set()
    for line in open(unit):
        m = re.match(r"^SystemCallFilter=(~?)(.*)$", line.strip())
        if m:
            (deny if m.group(1) else allow).update(expand(m.group(2).split(), g))
    used = set()
    for line in open(trace):
        m = re.match(r"^(?:\d+\s+)?([a-z0-9_]+)\(", line)
        if m:
            used.add(m.group(1))
    if not used:
        print("no system calls in %s" % trace)
        return 2
    refused = sorted(c for c in used if (allow and c not in allow) or c in deny)
    for c in refused:
        print("refused: %s" % c)
    print("%d calls checked" % len(used))
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
