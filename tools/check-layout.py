#!/usr/bin/env python3
"""check-layout.py - keeps the tree telling the design: src/ is grouped by layer, and a layer
includes only from the layers below it (never from one above or beside it); only the loader
(src/capture/) includes libbpf; no function in src/ is longer than MAX_FUNCTION_LINES lines.

The layer order is read from the README's layout section, from its one line of the form
    cmd > output > session > capture | kernel | symsrc > elf > base
(highest first; '|' separates layers of one level, which must not include each other). A layer may
be split into folders, ordered the same way by a line naming it:
    cmd/: record | agent > live | net > cli
Such a layer's files live in those folders (src/cmd/live/live.c), a folder includes only from the
folders below it, and the files directly in src/LAYER/ (the entry point) are above all of them.

usage: tools/check-layout.py [--root DIR]    exit 0 when the tree keeps every rule, else 1 with one
line per breach on stderr, 2 when the README gives no order.
"""
import os
import re
import sys

MAX_FUNCTION_LINES = 100
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
ORDER = re.compile(r'^\s+([a-z_]+(\s*[>|]\s*[a-z_]+)+)\s*$')
SUB_ORDER = re.compile(r'^\s+([a-z_]+)/:\s+([a-z_]+(\s*[>|]\s*[a-z_]+)*)\s*$')


def parse_levels(text):
    """{name: level}, level 0 the lowest, from 'a > b | c > d'."""
    levels = [lvl.split('|') for lvl in text.replace(' ', '').split('>')]
    return {name: len(levels) - 1 - i for i, lvl in enumerate(levels) for name in lvl}


def read_order(root):
    """({layer: level}, {layer: {folder: level}}) from the README's layout section; the first is
    None when the section gives no order."""
    in_layout = False
    order, subs = None, {}
    with open(os.path.join(root, 'README.md'), encoding='utf-8') as f:
        for line in f:
            if line.startswith('#'):
                in_layout = line.strip().lower() == '## layout'
                continue
            if not in_layout:
                continue
            m = SUB_ORDER.match(line)
            if m:
                subs[m.group(1)] = parse_levels(m.group(2))
                continue
            m = ORDER.match(line)
            if m and order is None:
                order = parse_levels(m.group(1))
    return order, subs


def sources(root):
    for dirpath, _, files in os.walk(os.path.join(root, 'src')):
        for name in sorted(files):
            if name.endswith(('.c', '.h')):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def check_includes(path, layer, sub, order, subs, text, out):
    """sub: the file's folder inside a split layer; '' directly in src/LAYER/, None when the layer
    is not split."""
    for n, line in enumerate(text.split('\n'), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        kind, target = m.groups()
        if kind == '<':
            if target.startswith('bpf/') and layer != 'capture':
                out.append('%s:%d: includes <%s>: only the loader (src/capture/) uses libbpf'
                           % (path, n, target))
            continue
        parts = target.split('/')
        first = parts[0]
        if first in order and first != layer and order[first] >= order[layer]:
            rel = 'above' if order[first] > order[layer] else 'beside'
            out.append('%s:%d: includes %s: %s is %s %s' % (path, n, target, first, rel, layer))
        if first == layer and sub is not None and sub != '':
            levels = subs[layer]
            other = parts[1] if len(parts) > 2 else ''
            if other == sub:
                continue
            if other == '':
                out.append('%s:%d: includes %s: the files in src/%s/ are above its folders'
                           % (path, n, target, layer))
            elif other not in levels:
                out.append('%s:%d: includes %s: %s/%s is not a folder of the README\'s order'
                           % (path, n, target, layer, other))
            elif levels[other] >= levels[sub]:
                rel = 'above' if levels[other] > levels[sub] else 'beside'
                out.append('%s:%d: includes %s: %s/%s is %s %s/%s'
                           % (path, n, target, layer, other, rel, layer, sub))


def check_functions(path, text, out):
    """Top-level function bodies: a line '{' at column 0 to the next '}' at column 0, counted from
    the first line of the function's signature."""
    lines = text.split('\n')
    for i, line in enumerate(lines):
        if line != '{':
            continue
        start = i
        while start > 0 and lines[start - 1].strip() and not lines[start - 1].startswith(('}', '#', '/*', ' *')):
            start -= 1
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith('}')), len(lines) - 1)
        if end - start + 1 > MAX_FUNCTION_LINES:
            out.append('%s:%d: %s is %d lines long (at most %d)'
                       % (path, start + 1, lines[start].strip()[:60], end - start + 1, MAX_FUNCTION_LINES))


def main(argv):
    root = '.'
    if len(argv) == 3 and argv[1] == '--root':
        root = argv[2]
    elif len(argv) != 1:
        sys.stderr.write('usage: check-layout.py [--root DIR]\n')
        return 2
    order, subs = read_order(root)
    if not order:
        sys.stderr.write('check-layout: README.md has no layer order in its "## Layout" section\n')
        return 2
    out = []
    for layer in order:
        if not os.path.isdir(os.path.join(root, 'src', layer)):
            out.append('src/%s/: a layer of the README with no folder' % layer)
    for layer, levels in sorted(subs.items()):
        for folder in levels:
            if not os.path.isdir(os.path.join(root, 'src', layer, folder)):
                out.append('src/%s/%s/: a folder of the README with no folder' % (layer, folder))
    for path in sources(root):
        parts = path.split(os.sep)
        layer = parts[1] if len(parts) >= 3 else None
        sub = None
        if layer in subs and len(parts) == 4 and parts[2] in subs[layer]:
            sub = parts[2]
        elif layer in subs and len(parts) == 3:
            sub = ''
        elif layer in subs:
            out.append('%s: not in a folder of src/%s/ (%s)' % (path, layer, ', '.join(sorted(subs[layer]))))
            continue
        elif len(parts) != 3 or layer not in order:
            out.append('%s: not in a layer folder (%s)' % (path, ', '.join(sorted(order))))
            continue
        with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
            text = f.read()
        check_includes(path, layer, sub, order, subs, text, out)
        if path.endswith('.c'):
            check_functions(path, text, out)
    for line in out:
        sys.stderr.write('check-layout: %s\n' % line)
    return 1 if out else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
