#!/usr/bin/env python3
"""Test helper for comparing profiles.

  foldtool.py perf-fold < perf-script-output > folded   fold `perf script -F comm,ip,sym,dso` output
  foldtool.py overlap A.folded B.folded [--user]          print the overlap (0..1) of two stack
                                                           distributions; --user drops kernel frames
  foldtool.py total A.folded                               print the sample total
  foldtool.py chain-match BT.folded PERF.folded ROOT       the share (0..1) of BT's samples whose
                                                           chain from ROOT to the leaf (user frames,
                                                           names normalized) PERF has too
"""
import sys
from collections import Counter


def perf_fold(inp, out):
    stacks = Counter()
    comm, frames = None, []

    def flush():
        if comm is not None:
            stacks[";".join([comm] + frames[::-1])] += 1

    for line in inp:
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        if not line[0].isspace():
            flush()
            comm, frames = line.split()[0], []
            continue
        parts = line.split(None, 1)
        rest = parts[1] if len(parts) > 1 else "[unknown]"
        dso = ""
        if rest.endswith(")") and " (" in rest:
            rest, dso = rest.rsplit(" (", 1)
            dso = dso[:-1]
        sym = rest.strip() or "[unknown]"
        if "+0x" in sym:
            sym = sym.split("+0x")[0]
        if "kernel.kallsyms" in dso or dso.startswith("[kernel"):
            sym += "_[k]"
        frames.append(sym)
    flush()
    for k, v in sorted(stacks.items()):
        out.write("%s %d\n" % (k, v))


def load(path, user_only):
    c = Counter()
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        if user_only:
            frames = [f for f in frames if not f.endswith("_[k]")]
        frames = ["[unknown]" if f.startswith("[") else f for f in frames]
        c[";".join(frames)] += int(n)
    return c


def overlap(a, b):
    ta, tb = sum(a.values()), sum(b.values())
    if not ta or not tb:
        return 0.0
    return sum(min(a[k] / ta, b[k] / tb) for k in set(a) | set(b))


def norm(name):
    """One spelling for the names two tools may give one function: symbol versions, glibc's
    internal aliases (__GI_ ...), GCC's split parts (.part.N, .isra.N, .constprop.N, .cold) and
    _impl variants set aside."""
    import re
    name = name.split("@")[0]
    name = re.sub(r"\.(part|isra|constprop|cold|lto_priv)(\.\d+)*", "", name)
    name = re.sub(r"^__GI_", "", name)
    name = re.sub(r"_impl$", "", name)
    return name.lstrip("_")


def chains(path, root):
    c = Counter()
    for stack, n in load(path, True).items():
        frames = [norm(f) for f in stack.split(";")[1:]]
        if root in frames:
            c[";".join(frames[frames.index(root):])] += n
        else:
            c[None] += n
    return c


def chain_match(bt, perf, root):
    a, b = chains(bt, root), chains(perf, root)
    total = sum(a.values())
    if not total:
        return 0.0
    return sum(n for k, n in a.items() if k is not None and k in b) / total


def main():
    cmd = sys.argv[1]
    if cmd == "perf-fold":
        perf_fold(sys.stdin, sys.stdout)
    elif cmd == "overlap":
        user = "--user" in sys.argv
        files = [x for x in sys.argv[2:] if not x.startswith("--")]
        a, b = load(files[0], user), load(files[1], user)
        print("%.3f" % overlap(a, b))
    elif cmd == "chain-match":
        print("%.3f" % chain_match(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif cmd == "total":
        print(sum(load(sys.argv[2], False).values()))
    else:
        sys.exit("unknown command " + cmd)


main()
