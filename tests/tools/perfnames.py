#!/usr/bin/python3
"""perfnames.py - compares the function names perf script gave the frames of one file with the names
`buildtrace symbolize --elf FILE` gives the same functions, under buildtrace's naming rule (a symbol
version is not part of a name).

usage: perfnames.py PERF_SCRIPT_TEXT FILE BUILDTRACE
PERF_SCRIPT_TEXT is `perf script -F ip,sym,symoff,dso` output, whose frame addresses are the file's.
Prints one line per function named differently, then "functions N same M".
"""
import os
import re
import subprocess
import sys


def unversioned(name):
    at = name.find('@', 1)
    return name if at < 0 or name.endswith('@plt') else name[:at]


def main():
    text, path, bt = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]
    frame = re.compile(r'^\s*([0-9a-f]+) (\S+)\+0x([0-9a-f]+) \((\S+)\)$')
    perf = {}
    with open(text, errors='replace') as f:
        for line in f:
            m = frame.match(line)
            # perf before 6.3 names an ifunc's PLT entry "@plt" and unknown entries "offset_..."
            if not m or os.path.realpath(m.group(4)) != path or m.group(2).startswith(('@plt', 'offset_')):
                continue
            perf[int(m.group(1), 16) - int(m.group(3), 16)] = m.group(2)
    starts = sorted(perf)
    out = subprocess.run([bt, 'symbolize', '--elf', path] + ['%x' % a for a in starts],
                         capture_output=True, text=True, check=True).stdout
    ours = {}
    for line in out.splitlines():
        f = line.split('\t')
        if len(f) >= 2 and '+0x' in f[1]:
            name, off = f[1].rsplit('+0x', 1)
            if int(off, 16) == 0:
                ours[int(f[0], 16)] = name
    same = 0
    for a in starts:
        if ours.get(a) == unversioned(perf[a]):
            same += 1
        else:
            print('%x perf %s buildtrace %s' % (a, perf[a], ours.get(a)))
    print('functions %d same %d' % (len(starts), same))


main()
