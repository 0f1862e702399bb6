# symb.py - the symbolization part of `make bench`: the same random .text addresses of a library named
# by buildtrace, llvm-symbolizer, eu-addr2line and addr2line, with a cold and a warm page cache; one
# row per run, and how often the tools name each address the same way.
import os
import random
import re
import shutil
import subprocess

import benchlib as bl

TOOLS = ['buildtrace', 'llvm-symbolizer', 'eu-addr2line', 'addr2line']


class Lib:
    def __init__(self, key, path, mode, what):
        self.key = key      # short name in tables and file names
        self.path = path
        self.mode = mode    # 'names': symbol names only; 'lines': with file:line and inlined frames
        self.what = what
        self.debug = None   # the separate debug file with DWARF and .symtab, when there is one
        self.text = None    # (start, size) of .text
        self.missing = None  # why it cannot be measured here
        self.coverage = None  # share of .text inside a function symbol with a size


def build_id(path):
    out = bl.output(['readelf', '-n', path])
    m = re.search(r'Build ID: ([0-9a-f]+)', out)
    return m.group(1) if m else None


def text_range(path):
    for line in bl.output(['readelf', '-SW', path]).splitlines():
        f = line.replace('[ ', '[').split()
        # [Nr] Name Type Address Off Size ...
        if len(f) > 5 and f[1] == '.text':
            return int(f[3], 16), int(f[5], 16)
    return None


def libraries():
    llvm = Lib('libLLVM-14', '/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1', 'names',
               'libLLVM-14.so.1: symbol table (.dynsym) only, names only')
    libc = Lib('libc', os.path.realpath('/lib/x86_64-linux-gnu/libc.so.6'), 'lines',
               'libc.so.6 with libc6-dbg\'s debug file: names, file:line and inlined frames')
    for lib in (llvm, libc):
        if not os.path.exists(lib.path):
            lib.missing = '%s is not installed' % lib.path
            continue
        lib.text = text_range(lib.path)
        if not lib.text:
            lib.missing = 'no .text section in %s' % lib.path
    if not libc.missing:
        bid = build_id(libc.path)
        dbg = '/usr/lib/debug/.build-id/%s/%s.debug' % (bid[:2], bid[2:]) if bid else None
        if dbg and os.path.exists(dbg):
            libc.debug = dbg
        else:
            libc.missing = 'no debug file for libc (libc6-dbg is not installed)'
    return [llvm, libc]


def addresses(lib, n, seed):
    """n distinct addresses in .text from a fixed seed; a smaller n gives a prefix of a larger one."""
    start, size = lib.text
    rng = random.Random('%s/%d' % (lib.key, seed))
    return rng.sample(range(start, start + size), n)


def tool_cmd(tool, lib):
    inl = lib.mode == 'lines'
    if tool == 'buildtrace':
        return [BUILDTRACE, 'symbolize', '--elf', lib.path, '--no-debuginfod']
    if tool == 'llvm-symbolizer':
        return ['llvm-symbolizer', '--obj=' + lib.path, '--output-style=GNU', '--print-address',
                '--demangle', '--inlines' if inl else '--no-inlines']
    if tool == 'eu-addr2line':
        return ['eu-addr2line', '-a', '-f', '-C'] + (['-i'] if inl else []) + ['-e', lib.path]
    if tool == 'addr2line':
        return ['addr2line', '-a', '-f', '-C'] + (['-i'] if inl else []) + ['-e', lib.path]
    raise ValueError(tool)


BUILDTRACE = './buildtrace'


# ---- reading the outputs ----------------------------------------------------------------------
# Each parser gives {address: [(function or None, (file, line) or None), ...]}, frames innermost
# first, the last one the function that holds the address.

OFFSET_RE = re.compile(r'\+0x[0-9a-fA-F]+$')
LINE_RE = re.compile(r'^(.*?):(\d+)(?::\d+)?(?: \(discriminator \d+\))?$')


def norm_name(s):
    s = s.strip()
    if not s or s == '??' or s.startswith('[') and s.endswith(']'):
        return None
    return s


def norm_line(s):
    m = LINE_RE.match(s.strip())
    if not m or m.group(1) in ('??', '') or m.group(2) == '0':
        return None
    return (m.group(1), int(m.group(2)))


def parse_buildtrace(path):
    out = {}
    with open(path, errors='replace') as f:
        for line in f:
            parts = line.rstrip('\n').split('\t')
            if len(parts) < 2:
                continue
            try:
                addr = int(parts[0], 16)
            except ValueError:
                continue
            name = norm_name(OFFSET_RE.sub('', parts[1]))
            out.setdefault(addr, []).append((name, norm_line(parts[2]) if len(parts) > 2 else None))
    return out


def parse_pairs(path, inlined_at):
    """addr2line-style output: an address line (-a), then a function line and a file:line line per
    frame. eu-addr2line writes inlined frames as `NAME inlined at FILE:LINE in CALLER`."""
    out = {}
    cur = None
    pending = None
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if pending is None and re.match(r'^0x[0-9a-fA-F]+$', line):
                cur = out.setdefault(int(line, 16), [])
                continue
            if cur is None:
                continue
            if pending is None:
                pending = line.split(' inlined at ')[0] if inlined_at else line
            else:
                cur.append((norm_name(pending), norm_line(line)))
                pending = None
    return out


def parse(tool, path):
    if tool == 'buildtrace':
        return parse_buildtrace(path)
    return parse_pairs(path, tool == 'eu-addr2line')


# ---- comparing names --------------------------------------------------------------------------
# Two names are the same function when they are equal once demangler spacing ("> >" or ">>") and
# symbol versions (@@GLIBC_2.34) are set aside, when they are symbols at the same address (glibc's
# malloc, __libc_malloc and __GI___libc_malloc), or when one is a part GCC split off the other
# (foo.cold, foo.isra.0, foo.part.0).

VERSION_RE = re.compile(r'@@?[A-Za-z0-9_.]+$')
CLONE_RE = re.compile(r'(\.(cold|part|isra|constprop|lto_priv|clone|localalias)(\.\d+)*)+$')


def squeeze(name):
    return VERSION_RE.sub('', name).replace(' ', '')


def base(name):
    return CLONE_RE.sub('', name)


class Names:
    """Addresses of every symbol name in a file's symbol tables, to tell aliases apart from
    disagreements."""

    def __init__(self, files):
        self.addrs = {}
        self.extents = []   # (start, end) of every function symbol with a size
        for path, dynamic in files:
            cmd = ['nm', '--defined-only', '-S', '-C'] + (['-D'] if dynamic else []) + [path]
            for line in bl.output(cmd).splitlines():
                f = line.split(' ', 2)
                if len(f) == 3 and len(f[1]) == 1:
                    f = [f[0], None, f[1], f[2]]   # no size
                elif len(f) == 3:
                    f = f[:2] + f[2].split(' ', 1)
                if len(f) != 4 or len(f[2]) != 1 or f[2] not in 'TtWwiu':
                    continue
                try:
                    a = int(f[0], 16)
                    size = int(f[1], 16) if f[1] else 0
                except ValueError:
                    continue
                if size:
                    self.extents.append((a, a + size))
                self.addrs.setdefault(squeeze(f[3]), set()).add(a)
                self.addrs.setdefault(base(squeeze(f[3])), set()).add(a)

    def coverage(self, start, size):
        """The share of [start, start+size) inside some function symbol: what a symbolizer that
        trusts symbol sizes can name at all."""
        covered, end_so_far = 0, start
        for a, b in sorted(self.extents):
            a, b = max(a, end_so_far), min(b, start + size)
            if b > a:
                covered += b - a
                end_so_far = b
        return covered / size if size else 0.0

    def same(self, a, b):
        if a is None or b is None:
            return a is None and b is None
        a, b = squeeze(a), squeeze(b)
        if a == b or base(a) == base(b):
            return True
        sa, sb = self.addrs.get(a), self.addrs.get(b)
        return bool(sa and sb and sa & sb)


def outer(frames):
    return frames[-1][0] if frames else None


def agreement(lib, names, outs, addrs):
    """Per tool: how often it names an address, agrees with llvm-symbolizer, with buildtrace, with
    most other tools, and (lines mode) gives llvm-symbolizer's file:line and inline chain."""
    tools = [t for t in TOOLS if t in outs]
    res = {}
    for t in tools:
        o = outs[t]
        named = exact_llvm = same_llvm = same_bt = major = line_llvm = chain_llvm = 0
        frames = 0
        for a in addrs:
            fr = o.get(a, [])
            frames += len(fr)
            mine = outer(fr)
            if mine:
                named += 1
            others = [u for u in tools if u != t]
            agree = 0
            for u in others:
                s = names.same(mine, outer(outs[u].get(a, [])))
                agree += s
                if u == 'llvm-symbolizer':
                    same_llvm += s
                    theirs = outer(outs[u].get(a, []))
                    exact_llvm += (mine is None and theirs is None) or (
                        mine is not None and theirs is not None and squeeze(mine) == squeeze(theirs))
                if u == 'buildtrace':
                    same_bt += s
            if others and agree * 2 > len(others):
                major += 1
            if lib.mode == 'lines' and 'llvm-symbolizer' in outs:
                ref = outs['llvm-symbolizer'].get(a, [])
                if (fr[0][1] if fr else None) == (ref[0][1] if ref else None):
                    line_llvm += 1
                if [x[1] for x in fr] == [x[1] for x in ref]:
                    chain_llvm += 1
        n = len(addrs)
        if t == 'llvm-symbolizer':
            exact_llvm = same_llvm = line_llvm = chain_llvm = None
        if t == 'buildtrace':
            same_bt = None
        frac = lambda x: None if x is None else x / n
        r = {'n': n, 'named': named / n, 'frames_per_addr': frames / n,
             'exact_llvm': frac(exact_llvm) if 'llvm-symbolizer' in outs else None,
             'same_llvm': frac(same_llvm) if 'llvm-symbolizer' in outs else None,
             'same_buildtrace': frac(same_bt) if 'buildtrace' in outs else None,
             'majority': major / n if len(tools) >= 3 else None}
        if lib.mode == 'lines' and 'llvm-symbolizer' in outs:
            r['line_llvm'] = frac(line_llvm)
            r['chain_llvm'] = frac(chain_llvm)
        res[t] = r
    return res


# ---- the runs ---------------------------------------------------------------------------------

class Ctx:
    def __init__(self, root, sizes, repeats, seed, cold, budget_s, slow_s, timeout_s, log):
        self.root = root
        self.sizes = sizes
        self.repeats = repeats
        self.seed = seed
        self.cold = cold
        self.budget_s = budget_s    # skip a size a tool would take longer than this for
        self.slow_s = slow_s        # a run slower than this is not repeated
        self.timeout_s = timeout_s
        self.log = log


def run_lib(ctx, lib, tools):
    """Rows of timings, notes on what was skipped, and agreement results per size."""
    rows, notes, agree = [], [], {}
    d = os.path.join(ctx.root, lib.key)
    os.makedirs(d, exist_ok=True)
    all_addrs = addresses(lib, max(ctx.sizes), ctx.seed)
    files = [(lib.path, True), (lib.path, False)] + ([(lib.debug, False)] if lib.debug else [])
    names = Names(files)
    lib.coverage = names.coverage(*lib.text)
    last_wall = {}          # tool -> (n, median warm wall) at the last size it ran
    for n in sorted(ctx.sizes):
        addr_file = os.path.join(d, 'addrs.%d' % n)
        with open(addr_file, 'w') as f:
            f.write(''.join('0x%x\n' % a for a in all_addrs[:n]))
        active = []
        for t in tools:
            prev = last_wall.get(t)
            if prev is None and n != min(ctx.sizes):
                continue    # it failed or was skipped at a smaller size
            if prev and prev[1] * n / prev[0] > ctx.budget_s:
                est = prev[1] * n / prev[0]
                notes.append('%s, %s at N=%s: not run; %.1f s at N=%s means about %.0f s' % (
                    lib.key, t, fmt_n(n), prev[1], fmt_n(prev[0]), est))
                last_wall.pop(t, None)
                continue
            active.append(t)
        reps = {t: ctx.repeats for t in active}
        walls = {t: [] for t in active}
        for rep in range(ctx.repeats):
            order = active[rep % max(1, len(active)):] + active[:rep % max(1, len(active))]
            for t in order:
                if rep >= reps[t]:
                    continue
                out = os.path.join(d, 'out.%d.%s' % (n, t))
                states = ['cold', 'warm'] if ctx.cold else ['warm']
                if not ctx.cold:
                    # one unmeasured run first, so "warm" means the same here as with cold runs
                    bl.run(tool_cmd(t, lib), stdin=addr_file, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=ctx.timeout_s)
                for state in states:
                    if state == 'cold':
                        bl.drop_caches()
                    r = bl.run(tool_cmd(t, lib), stdin=addr_file, stdout=out,
                               stderr=out + '.err', timeout=ctx.timeout_s)
                    ok = r.rc == 0 and not r.timed_out
                    rows.append({'lib': lib.key, 'mode': lib.mode, 'n': n, 'tool': t, 'rep': rep,
                                 'cache': state, 'wall': r.wall, 'cpu': r.cpu,
                                 'rss_kb': r.maxrss_kb, 'ok': ok,
                                 'error': '' if ok else ('timed out after %d s' % ctx.timeout_s
                                                         if r.timed_out else 'exit %d' % r.rc)})
                    if not ok:
                        reps[t] = 0
                        notes.append('%s, %s at N=%s: %s' % (lib.key, t, fmt_n(n), rows[-1]['error']))
                        break
                    if state == 'warm':
                        walls[t].append(r.wall)
                    if r.wall > ctx.slow_s and reps[t] > 1:
                        reps[t] = 1
                        notes.append('%s, %s at N=%s: run once, as one run took %.0f s' % (
                            lib.key, t, fmt_n(n), r.wall))
            ctx.log('symbolize: %s N=%s repeat %d/%d done' % (lib.key, fmt_n(n), rep + 1, ctx.repeats))
        done = {}
        for t in active:
            if walls[t] and not any(not x['ok'] for x in rows
                                    if x['lib'] == lib.key and x['n'] == n and x['tool'] == t):
                last_wall[t] = (n, bl.median(walls[t]))
                done[t] = parse(t, os.path.join(d, 'out.%d.%s' % (n, t)))
            else:
                last_wall.pop(t, None)
        if len(done) >= 2:
            agree[n] = agreement(lib, names, done, all_addrs[:n])
    return rows, notes, agree


def fmt_n(n):
    return '%dk' % (n // 1000) if n % 1000 == 0 else str(n)


def available_tools():
    have, missing = [], []
    for t in TOOLS:
        exe = BUILDTRACE if t == 'buildtrace' else t
        (have if shutil.which(exe) or os.access(exe, os.X_OK) else missing).append(t)
    return have, missing
