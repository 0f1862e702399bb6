#!/usr/bin/env python3
"""Test helper: what a folded profile names, for the tests of names perf lacks or has.

  stacknames.py leaf-share FOLDED NAME       the share (0..1) of samples whose innermost user frame
                                             is NAME (kernel frames, suffixed _[k], left aside)
  stacknames.py frame-share FOLDED REGEX [ROOT]
                                             the share of samples with a user frame matching REGEX,
                                             among those whose outermost frame matches ROOT
  stacknames.py names FOLDED REGEX           the distinct user frames matching REGEX, one a line
  stacknames.py unnamed FOLDED               the lines with an unnamed user frame ([unknown],
                                             [FILE+0xOFF]), or whose outermost frame is one
  stacknames.py perf-leaves PERF_SCRIPT      from `perf script -F ip,sym` output: the share of
                                             samples by innermost frame name, "SHARE NAME" lines
"""
import re
import sys
from collections import Counter


def stacks(path):
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line:
            continue
        frames, _, count = line.rpartition(" ")
        user = [f for f in frames.split(";")[1:] if not f.endswith("_[k]")]
        yield user, int(count)


def unnamed(frame):
    return frame == "[unknown]" or re.match(r"^\[.*\+0x[0-9a-f]+\]$", frame) is not None


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "perf-leaves":
        leaves, first = Counter(), True
        for line in open(path, errors="replace"):
            if not line.strip():
                first = True
                continue
            if line[0].isspace() and first:
                parts = line.split()
                name = parts[1] if len(parts) > 1 else "[unknown]"
                leaves[re.sub(r"@.*$", "", name)] += 1
                first = False
        total = sum(leaves.values()) or 1
        for name, n in leaves.most_common():
            print("%.4f %s" % (n / total, name))
        return
    total = 0
    hits = Counter()
    names = set()
    root = sys.argv[4] if cmd == "frame-share" and len(sys.argv) > 4 else None
    for user, n in stacks(path):
        if root and not (user and re.search(root, user[0])):
            continue
        total += n
        if cmd == "leaf-share" and user and user[-1] == sys.argv[3]:
            hits["x"] += n
        elif cmd == "frame-share" and any(re.search(sys.argv[3], f) for f in user):
            hits["x"] += n
        elif cmd == "names":
            names.update(f for f in user if re.search(sys.argv[3], f))
        elif cmd == "unnamed" and any(unnamed(f) for f in user):
            print(" ".join(user), n)
    if cmd == "names":
        print("\n".join(sorted(names)))
    elif cmd in ("leaf-share", "frame-share"):
        print("%.4f" % (hits["x"] / total if total else 0))


if __name__ == "__main__":
    main()
