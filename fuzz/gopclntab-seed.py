#!/usr/bin/env python3
"""Writes small, valid Go function tables (.gopclntab) of each layout buildtrace reads (Go 1.16,
1.18, 1.20) as fuzz seeds: two functions, two files, a line table, and a call inlined into the
first, whose inline tree lies in the table itself (the fuzz harness reads the program's memory,
and counts funcdata offsets, from the table's own start at 0x1000000; Go's code at 0x400000).
usage: gopclntab-seed.py OUTDIR"""
import os
import struct
import sys

ADDR, TEXT = 0x1000000, 0x400000


def uvarint(v):
    out = b''
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def pcvalue(pairs):
    """(value, length in bytes) runs, from the value -1 before the function's first byte."""
    out, prev = b'', -1
    for val, n in pairs:
        d = val - prev
        zigzag = d << 1 if d >= 0 else (-d << 1) - 1
        out += uvarint(zigzag) + uvarint(n)
        prev = val
    return out + b'\0'


def table(ver):
    names = b'main.f\0main.g\0main.inl\0'
    name_off = {'main.f': 0, 'main.g': 7, 'main.inl': 14}
    files = b'a.go\0b.go\0'
    cutab = struct.pack('<2I', 0, 5)
    pctab = b'\0'                       # offset 0 means "no table"
    pcfile = len(pctab); pctab += pcvalue([(0, 8), (1, 8)])
    pcln = len(pctab); pctab += pcvalue([(10, 4), (11, 4), (12, 8)])
    pcinl = len(pctab); pctab += pcvalue([(-1, 4), (0, 4), (-1, 8)])
    sizes = [16, 16]
    hdr_words = 7 if ver == 116 else 8
    hdr = 8 + 8 * hdr_words
    o_names = hdr
    o_cu = o_names + len(names)
    o_files = o_cu + len(cutab)
    o_pc = o_files + len(files)
    o_funcs = o_pc + len(pctab)
    nfunc = 2
    if ver == 116:
        ftab_len = (2 * nfunc + 1) * 8
        fixed = 8 + 36
    else:
        ftab_len = nfunc * 8 + 4
        fixed = 40 if ver == 118 else 44
    ftab_len = (ftab_len + 7) & ~7
    recs, rec_offs = b'', []
    inline_at = None
    for i, name in enumerate(['main.f', 'main.g']):
        rec_offs.append(ftab_len + len(recs))
        entry = TEXT + 16 * i
        inl = i == 0
        npc, nfd = (3, 4) if inl else (0, 0)
        if ver == 116:
            r = struct.pack('<QiiIIIIII', entry, name_off[name], 0, 0, 0, pcfile, pcln, npc, 0)
            r += bytes([0, 0, 0, nfd])
        else:
            r = struct.pack('<IiiIIIIII', entry - TEXT, name_off[name], 0, 0, 0, pcfile, pcln, npc, 0)
            if ver == 120:
                r += struct.pack('<i', 1)
            r += bytes([0, 0, 0, nfd])
        assert len(r) == fixed
        if inl:
            r += struct.pack('<3I', 0, 0, pcinl)
            inline_at = len(recs) + len(r)   # patched below, once the tree's place is known
            r += b'\0' * (4 * 8 if ver == 116 else 4 * 4)
        recs += r + b'\0' * (-len(r) % 8)
    tree_off = o_funcs + ftab_len + len(recs)
    if ver == 120:
        tree = struct.pack('<B3xiii', 0, name_off['main.inl'], 2, 3)
    else:
        tree = struct.pack('<hBxiiii', -1, 0, 0, 5, name_off['main.inl'], 2)
    if ver == 116:
        pos = ftab_len + inline_at
        if (ADDR + o_funcs + pos) & 4:
            pos += 4
        fd = struct.pack('<4Q', 0, 0, 0, ADDR + tree_off)
    else:
        pos = ftab_len + inline_at
        fd = struct.pack('<4I', 0xffffffff, 0xffffffff, 0xffffffff, tree_off)
    body = bytearray(b'\0' * ftab_len + recs)
    body[pos:pos + len(fd)] = fd
    for i in range(nfunc):
        if ver == 116:
            struct.pack_into('<QQ', body, 16 * i, TEXT + 16 * i, rec_offs[i])
        else:
            struct.pack_into('<II', body, 8 * i, 16 * i, rec_offs[i])
    if ver == 116:
        struct.pack_into('<Q', body, 16 * nfunc, TEXT + sum(sizes))
    else:
        struct.pack_into('<I', body, 8 * nfunc, sum(sizes))
    magic = {116: 0xfffffffa, 118: 0xfffffff0, 120: 0xfffffff1}[ver]
    words = [nfunc, 2] + ([] if ver == 116 else [TEXT]) + [o_names, o_cu, o_files, o_pc, o_funcs]
    head = struct.pack('<IBBBB', magic, 0, 0, 1, 8) + b''.join(struct.pack('<Q', w) for w in words)
    return head + names + cutab + files + pctab + bytes(body) + tree


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for ver in (116, 118, 120):
        with open(os.path.join(out, 'small-go%d' % ver), 'wb') as f:
            f.write(table(ver))


if __name__ == '__main__':
    main()
