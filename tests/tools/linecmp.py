#!/usr/bin/env python3
"""linecmp.py - compares `buildtrace symbolize` output with `eu-addr2line -a -i` output for the same
addresses, shifted by SLIDE (buildtrace was given address + SLIDE): the FILE:LINE of every frame,
inlined ones included, innermost first. Prints the differences; exits 1 if any, 2 if nothing compared.

Usage: linecmp.py BUILDTRACE_OUT EU_ADDR2LINE_OUT SLIDE_HEX"""
import re
import sys


def strip_col(loc):
    m = re.match(r"^(.*?):(\d+)(:\d+)?$", loc)
    return "%s:%s" % (m.group(1), m.group(2)) if m else ""


def main():
    bt_path, eu_path, slide = sys.argv[1], sys.argv[2], int(sys.argv[3], 16)
    bt = {}
    for line in open(bt_path):
        f = line.rstrip("\n").split("\t")
        if len(f) != 3:
            continue
        bt.setdefault(int(f[0], 16) - slide, []).append(f[2])
    eu, cur = {}, None
    for line in open(eu_path):
        line = line.rstrip("\n")
        if line.startswith("0x"):
            cur = int(line, 16)
            eu[cur] = []
        elif cur is not None:
            loc = line.split(" (inlined")[0]
            eu[cur].append("" if loc.startswith("??") else strip_col(loc))
    bad = 0
    for a, want in sorted(eu.items()):
        got = bt.get(a)
        if got != want:
            bad += 1
            if bad <= 10:
                print("0x%x: buildtrace %s, eu-addr2line %s" % (a, got, want))
    if not eu:
        sys.exit(2)
    print("linecmp: %d addresses, %d differ" % (len(eu), bad))
    sys.exit(1 if bad else 0)


main()
