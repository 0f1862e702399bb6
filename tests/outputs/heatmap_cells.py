#!/usr/bin/python3
# heatmap_cells.py SVG START_NS END_NS - reads a buildtrace heat map's data (the root's data-start-ns,
# data-bucket-ns and data-total, each cell's data-c, data-r and data-n) and prints three numbers:
# the samples of the cells whose time span meets [START_NS, END_NS) (CLOCK_MONOTONIC), those of the
# other cells, data-total, and the samples of the cells from 1 s after the map's start to START_NS.
import re
import sys

svg = open(sys.argv[1], encoding='utf-8').read()
start, end = int(sys.argv[2]), int(sys.argv[3])
root = re.search(r'<svg[^>]*>', svg).group(0)
attr = lambda name: int(re.search(name + r'="(\d+)"', root).group(1))
t0, bucket, total = attr('data-start-ns'), attr('data-bucket-ns'), attr('data-total')
inside = outside = before = 0
for c, r, n in re.findall(r'<rect class="c" data-c="(\d+)" data-r="(\d+)" data-n="(\d+)"', svg):
    lo = t0 + int(c) * 1000000000 + int(r) * bucket
    if lo < end and lo + bucket > start:
        inside += int(n)
    else:
        outside += int(n)
    if lo >= t0 + 1000000000 and lo + bucket <= start:
        before += int(n)
print(inside, outside, total, before)
