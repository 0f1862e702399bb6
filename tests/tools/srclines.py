#!/usr/bin/env python3
"""srclines.py - checks the source lines of a `buildtrace record --lines` profile against
llvm-symbolizer, an implementation independent of buildtrace's (libdw): for every user frame of the
JSON profile whose file path contains FILTER and that has "lines", llvm-symbolizer --inlines is
asked about the same instruction (the file offset turned into an address through the file's
PT_LOAD headers, minus one for a return address) in the same file, and the two chains must agree
frame by frame: function name and line number. llvm-symbolizer names the outermost function by its
symbol, buildtrace by its DWARF name: there, two names of one address (nm of the file and of its
debug file) agree. With PPROF_DUMP (tests/outputs/pprof_dump.cjs output
of the same session's pprof), every location's lines must also be the JSON frame's.

Prints "compared N differ D pprof_checked P pprof_differ Q", then the differences.
Usage: srclines.py PROFILE.json FILTER [PPROF_DUMP]"""
import json
import re
import subprocess
import sys


def loads(path):
    """(offset, vaddr, filesz) of each PT_LOAD of an ELF file."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True, check=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    return segs


def to_vaddr(segs, off):
    for o, v, n in segs:
        if o <= off < o + n:
            return off - o + v
    return None


def symbolize(path, addrs):
    """llvm-symbolizer --inlines: per address, [(function, line)] innermost first."""
    inp = "".join("0x%x\n" % a for a in addrs)
    out = subprocess.run(["llvm-symbolizer", "--inlines", "--obj=" + path], input=inp,
                         capture_output=True, text=True, check=True).stdout
    res = []
    for block in out.strip("\n").split("\n\n"):
        ls = block.split("\n")
        chain = []
        for fn, loc in zip(ls[0::2], ls[1::2]):
            m = re.match(r"^(.*):(\d+):(\d+)$", loc)
            chain.append((fn, int(m.group(2)) if m else 0))
        res.append(chain)
    return res


def symbol_addrs(path):
    """name -> address of the symbols of a file and of its debug file (by build-id), if any."""
    files = [path]
    out = subprocess.run(["readelf", "-nW", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    if m:
        files.append("/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2], m.group(1)[2:]))
    addrs = {}
    for f in files:
        for opt in ([], ["-D"]):
            r = subprocess.run(["nm", "--defined-only"] + opt + [f], capture_output=True, text=True)
            for line in r.stdout.splitlines():
                p = line.split()
                if len(p) == 3:
                    addrs.setdefault(p[2].split("@")[0], int(p[0], 16))
    return addrs


def same_function(a, b, syms):
    return a == b or (a in syms and syms.get(a) == syms.get(b))


def main():
    prof = json.load(open(sys.argv[1]))
    filt = sys.argv[2]
    by_file = {}
    for fr in prof["frames"]:
        if fr.get("kind") != "user" or "lines" not in fr or filt not in (fr.get("file") or ""):
            continue
        by_file.setdefault(fr["file"], []).append(fr)
    compared = differ = 0
    notes = []
    for path, frames in by_file.items():
        segs = loads(path)
        addrs = []
        for fr in frames:
            v = to_vaddr(segs, int(fr["offset"], 16))
            addrs.append(v - (1 if fr["return_address"] else 0) if v is not None else 0)
        want = symbolize(path, addrs)
        syms = symbol_addrs(path)
        for fr, a, w in zip(frames, addrs, want):
            got = [(ln["function"] or "??", ln["line"]) for ln in fr["lines"]]
            compared += 1
            same = len(got) == len(w) and all(
                g[1] == x[1] and (g[0] == x[0] or (k == len(w) - 1 and same_function(g[0], x[0], syms)))
                for k, (g, x) in enumerate(zip(got, w)))
            if not same:
                differ += 1
                notes.append("%s+%s (0x%x): buildtrace %s, llvm-symbolizer %s" % (
                    path, fr["offset"], a, got, w))
    pchecked = pdiffer = 0
    if len(sys.argv) > 3:
        # location ID MAPPING_ID ADDRESS FILE_OFFSET NAMES; mapping ID FILE ...; srcline LOC IDX FN FILE LINE
        maps, locs, src = {}, {}, {}
        for line in open(sys.argv[3]):
            f = line.rstrip("\n").split("\t")
            if f[0] == "mapping":
                maps[f[1]] = f[2]
            elif f[0] == "location":
                locs[f[1]] = (maps.get(f[2]), f[4])
            elif f[0] == "srcline":
                src.setdefault(f[1], []).append((f[3], f[4], int(f[5])))
        json_lines = {}
        for fr in prof["frames"]:
            if fr.get("kind") == "user" and "lines" in fr:
                key = (fr["file"], int(fr["offset"], 16))
                json_lines.setdefault(key, []).append(
                    [(ln["function"] or "", ln["file"] or "", ln["line"]) for ln in fr["lines"]])
        for lid, lines in src.items():
            path, off = locs.get(lid, (None, None))
            if path is None or off in (None, "-"):
                continue
            pchecked += 1
            cands = json_lines.get((path, int(off, 16)), [])
            if not any(len(lines) == len(c) and
                       all((fl, ln) == (cfl, cln) and (not cfn or fn == cfn)
                           for (fn, fl, ln), (cfn, cfl, cln) in zip(lines, c)) for c in cands):
                pdiffer += 1
                notes.append("pprof location %s (%s+%s): %s, json %s" % (lid, path, off, lines, cands))
    print("compared %d differ %d pprof_checked %d pprof_differ %d" % (compared, differ, pchecked, pdiffer))
    for n in notes[:20]:
        print(n)


if __name__ == "__main__":
    main()
