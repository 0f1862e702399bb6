# report.py - turns one `make bench` run's rows into bench/RESULTS.md: markdown tables of medians with
# min-max, ratios against the other tools of the same run, the goals met or not, and what this
# machine could not measure.
import benchlib as bl

PROFILERS = ['buildtrace', 'buildtrace-fp', 'buildtrace-bpfwalk', 'buildtrace-copy', 'perf', 'perf-dwarf',
             'bcc']
# Each profiler beside perf with the same kind of call graph: buildtrace's default (dwarf, call
# frame information) and its two forms (walked in BPF, a stack copy unwound in userspace) beside
# perf --call-graph dwarf, frame-pointer stacks beside perf -g.
COUNTERPART = {'buildtrace': 'perf-dwarf', 'buildtrace-fp': 'perf', 'buildtrace-bpfwalk': 'perf-dwarf',
               'buildtrace-copy': 'perf-dwarf', 'bcc': 'perf'}
SYM_TOOLS = ['buildtrace', 'llvm-symbolizer', 'eu-addr2line', 'addr2line']


def num(v, digits=2):
    if v is None:
        return '—'
    if abs(v) >= 100:
        return '%.0f' % v
    return ('%.' + str(digits) + 'f') % v


def spread(xs, unit='', digits=2, scale=1.0, prefix=''):
    """median (min–max) of the values, or — when there are none."""
    s = bl.summary([x * scale if x is not None else None for x in xs])
    if not s:
        return '—'
    med, lo, hi, n = s
    if n == 1:
        return '%s%s%s' % (prefix, num(med, digits), unit)
    return '%s%s%s (%s–%s)' % (prefix, num(med, digits), unit, num(lo, digits), num(hi, digits))


def times(r):
    return '—' if r is None else '×%.2f' % r


def pct(v):
    return '—' if v is None else '%.1f%%' % (100 * v)


def med(rows, key):
    return bl.median([r.get(key) for r in rows])


def table(head, rows):
    out = ['| ' + ' | '.join(head) + ' |', '|' + '|'.join('---' for _ in head) + '|']
    out += ['| ' + ' | '.join(str(c) for c in r) + ' |' for r in rows]
    return '\n'.join(out) + '\n'


# ---- machine ----------------------------------------------------------------------------------

def machine_section(info):
    m, v, s = info['machine'], info['versions'], info['settings']
    rows = [
        ['CPUs (nproc)', m['nproc']], ['CPU model', m['cpu']], ['memory', '%s GiB' % m['memory_gib']],
        ['kernel', '%s (%s)' % (m['kernel'], m['kernel_version'])], ['OS', m['os']],
        ['date', m['date']],
        ['load average at start / end', '%s / %s' % (' '.join(m['loadavg_at_start']),
                                                     ' '.join(info.get('loadavg_at_end', [])))],
        ['bench run time', '%s s' % info.get('bench_seconds', '?')],
    ]
    rows += [[k, v[k]] for k in ['buildtrace', 'perf', 'bcc', 'llvm-symbolizer', 'eu-addr2line',
                                 'addr2line', 'libLLVM-14', 'libc6-dbg'] if v.get(k)]
    settings = ('repeats: %d%s; rates: %s Hz; symbolization sizes: %s; address seed: %d; '
                'cold runs: %s' % (s['repeats'], ' (BENCH_QUICK)' if s['quick'] else '',
                                   ', '.join(map(str, s['rates'])),
                                   ', '.join(map(str, s['sizes'])), s['seed'],
                                   'yes' if s['cold'] else 'no'))
    runs = info.get('part_runs') or {}
    by = {}
    for part, r in runs.items():
        by.setdefault((r.get('commit', '?'), r.get('date', '?')), []).append(part)
    origin = ''
    if len(by) > 1:
        origin = '\nThe parts come from more than one run (`BENCH_KEEP=1` keeps the parts not run again): %s.\n' % (
            '; '.join('%s at %s, %s' % (', '.join(sorted(p)), c, d) for (c, d), p in sorted(by.items(), key=lambda x: x[0][1])))
    return '## Machine\n\n' + table(['', ''], rows) + '\nSettings: ' + settings + '.\n' + origin


# ---- profiling --------------------------------------------------------------------------------

def by_config(rows):
    groups = {}
    for r in rows:
        if r.get('ok'):
            groups.setdefault((r['tool'], r['hz']), []).append(r)
    return groups


def failures(rows):
    out = {}
    for r in rows:
        if not r.get('ok'):
            out.setdefault((r['tool'], r['hz']), []).append(r.get('error', '?'))
    return out


def paired_slowdowns(rows):
    """Each profiled run's workload wall time over that of the baseline run just before it, in the
    same group: load from other work on the machine changes slowly, so pairs cancel most of it."""
    base = {r['group']: r['work_wall'] for r in rows
            if r.get('ok') and r['tool'] == 'none' and r.get('group') is not None}
    for r in rows:
        if r.get('ok') and r['tool'] != 'none' and base.get(r.get('group')):
            r['slowdown'] = r['work_wall'] / base[r['group']]
    return rows


def overhead_section(info, rows, rates):
    g = by_config(rows)
    base = g.get(('none', 0), [])
    w = info.get('workload', {})
    out = ['## 1. Overhead\n',
           'The workload (`tools/bench/workload.c`, %s threads, one per CPU, each: %s; %s rounds) '
           'is timed alone and under each profiler sampling every CPU (`buildtrace -a -F HZ`, '
           '`perf record -a -g -F HZ`, bcc\'s `profile -af -F HZ`). Slowdown: the workload\'s '
           'wall time over that of the run alone just before it (each repeat and rate starts with '
           'one), median (min–max) over the repeats; "vs perf" divides the medians. Profiler CPU: user+system seconds of the '
           'profiler\'s own processes from start to written output (for perf: `perf record` plus '
           'the `perf script` that symbolizes). BPF: the programs\' run time as '
           '`kernel.bpf_stats_enabled` counts it, which the kernel charges to the interrupted '
           'tasks, not to the profiler; ns/sample is the perf_event program\'s run_time_ns / '
           'run_cnt. Wakeups: the profiler\'s voluntary context switches per second while the '
           'workload runs (each is a sleep ended by a wakeup, often an interrupt on a CPU the '
           'workload runs on).\n' % (w.get('threads', '?'), w.get('per_thread', '?'),
                                       w.get('rounds', '?'))]
    head = ['profiler', 'Hz', 'workload wall s', 'slowdown', 'slowdown vs perf', 'workload CPU s',
            'profiler CPU s', 'CPU vs perf', 'profiler wakeups/s', 'peak RSS MB', 'BPF ns/sample',
            'BPF CPU s']
    body = [['none', '—', spread([r['work_wall'] for r in base]), '—', '—',
             spread([r['work_cpu'] for r in base]), '—', '—', '—', '—', '—', '—']]
    fails = failures(rows)
    for hz in rates:
        for t in PROFILERS:
            perf = g.get((COUNTERPART.get(t, 'perf'), hz), [])
            rs = g.get((t, hz), [])
            if not rs:
                if (t, hz) in fails:
                    body.append([t, hz, 'failed: ' + fails[(t, hz)][0][:120]] + [''] * 9)
                continue
            body.append([
                t, hz, spread([r['work_wall'] for r in rs]),
                spread([r.get('slowdown') for r in rs], prefix='×'),
                times(bl.ratio(med(rs, 'slowdown'), med(perf, 'slowdown'))) if t in COUNTERPART else '—',
                spread([r['work_cpu'] for r in rs]),
                spread([r.get('prof_cpu') for r in rs]),
                times(bl.ratio(med(rs, 'prof_cpu'), med(perf, 'prof_cpu'))) if t in COUNTERPART else '—',
                spread([r.get('wakeups_per_s') for r in rs], digits=0),
                spread([r.get('prof_rss_kb') for r in rs], scale=1 / 1024, digits=1),
                spread([r.get('bpf_sample_ns') for r in rs], digits=0),
                spread([r.get('bpf_total_s') for r in rs], digits=3),
            ])
    out.append(table(head, body))
    perf_split = []
    for hz in rates:
        rs = g.get(('perf', hz), [])
        if rs:
            perf_split.append('%d Hz: record %s s + script %s s' % (
                hz, num(med(rs, 'record_cpu')), num(med(rs, 'script_cpu'))))
    if perf_split:
        out.append('\nperf\'s CPU, split (medians): ' + '; '.join(perf_split) + '.\n')
    progs = bpf_breakdown(rows)
    if progs:
        out.append('\nEvery BPF program of each tool, medians over all its runs (ns per run, runs '
                   'per profile):\n\n' + progs)
    return '\n'.join(out)


def bpf_breakdown(rows):
    per = {}
    for r in rows:
        for p in r.get('bpf_progs') or []:
            per.setdefault((r['tool'], r['hz'], p['name']), []).append(p)
    if not per:
        return ''
    body = []
    for (t, hz, name), ps in sorted(per.items()):
        ns = [p['run_time_ns'] / p['run_cnt'] for p in ps if p['run_cnt']]
        body.append([t, hz, '`%s`' % name, ps[0]['type'], spread(ns, digits=0),
                     spread([p['run_cnt'] for p in ps], digits=0),
                     spread([p['run_time_ns'] / 1e9 for p in ps], digits=4)])
    return table(['profiler', 'Hz', 'program', 'type', 'ns/run', 'runs', 'total s'], body)


def loss_section(rows, rates):
    g = by_config(rows)
    out = ['## 3. Loss\n',
           'Expected: the rate times the workload\'s CPU seconds (user+system, from wait4). '
           'Delivered: samples of the workload (`bench-work`) in the written profile. Lost: as the '
           'tool counts them (buildtrace: its BPF side, samples that found the ring buffer full; '
           'perf: PERF_RECORD_LOST; bcc aggregates in the kernel and counts none, but says how '
           'many stacks it could not store). In IRQ entry: delivered samples whose kernel stack '
           'is in an interrupt\'s entry code (`asm_sysvec_*`, `asm_common_interrupt`), such as '
           'the reschedule IPIs that wake a profiler\'s reader on another CPU; the kernel does not '
           'count all of that time as the workload\'s CPU time, which is how delivered can exceed '
           'expected.\n']
    head = ['profiler', 'Hz', 'expected', 'delivered', 'delivered / expected', 'in IRQ entry', 'lost',
            'all samples (every process)']
    body = []
    for hz in rates:
        for t in PROFILERS:
            rs = g.get((t, hz), [])
            if not rs:
                continue
            fr = [bl.ratio(r.get('delivered'), r.get('expected')) for r in rs]
            if t == 'bcc':
                lost = 'not counted; stacks not stored: %s' % spread(
                    [r.get('missing_stacks') for r in rs], digits=0)
            else:
                lost = spread([r.get('lost') for r in rs], digits=0)
            body.append([t, hz, spread([r.get('expected') for r in rs], digits=0),
                         spread([r.get('delivered') for r in rs], digits=0),
                         spread(fr, scale=100, digits=1, unit='%'),
                         spread([r.get('irq') for r in rs], digits=0), lost,
                         spread([r.get('samples') for r in rs], digits=0)])
    out.append(table(head, body))
    return '\n'.join(out)


def ttfg_section(rows, rates):
    g = by_config(rows)
    out = ['## 4. Time to first flame graph\n',
           'From SIGINT (Ctrl-C) to the profile on disk: buildtrace and bcc write folded stacks '
           'when they stop; perf needs `perf record` to finish and then `perf script` to write '
           'symbolized samples (which still are not folded stacks: perf is timed to its text '
           'output only). Measured at the end of each overhead run, so each profile holds the '
           'whole workload.\n']
    head = ['profiler', 'Hz', 'seconds', 'vs perf']
    body = []
    for hz in rates:
        for t in PROFILERS:
            perf = g.get((COUNTERPART.get(t, 'perf'), hz), [])
            rs = g.get((t, hz), [])
            if rs:
                body.append([t, hz, spread([r.get('ttfg_s') for r in rs], digits=3),
                             times(bl.ratio(med(rs, 'ttfg_s'), med(perf, 'ttfg_s')))
                             if t in COUNTERPART else '—'])
    out.append(table(head, body))
    return '\n'.join(out)


# ---- symbolization ----------------------------------------------------------------------------

def fmt_n(n):
    return '%dk' % (n // 1000) if n % 1000 == 0 else str(n)


def symbolize_section(info, rows, agree):
    out = ['## 2. Symbolization\n',
           'N distinct addresses drawn from `.text` with a fixed seed (a smaller N is a prefix of a '
           'larger one), on standard input, one tool process per run: `buildtrace symbolize --elf`, '
           '`llvm-symbolizer --output-style=GNU`, `eu-addr2line -f -C`, `addr2line -f -C` (with '
           'inlined frames: `--inlines`/`-i`). Cold: after `echo 3 > /proc/sys/vm/drop_caches` '
           '(the tool\'s own binary and libraries are cold too); warm: the same run again right '
           'after. Wall seconds median (min–max); ratio against llvm-symbolizer in the same run; '
           'peak RSS is the warm runs\' median.\n']
    libs = info.get('libraries', {})
    for key, lib in libs.items():
        out.append('### %s\n\n%s (`%s`%s).\n' % (key, lib['what'], lib['path'],
                                                 ', debug file `%s`' % lib['debug'] if lib['debug'] else ''))
        if lib.get('missing'):
            out.append('Not measured here: %s.\n' % lib['missing'])
            continue
        if lib.get('symbol_coverage') is not None:
            out.append('%s of its `.text` lies inside a function symbol with a size (`nm -S` over '
                       'its symbol tables): an address elsewhere has no symbol that holds it, so '
                       '"named" above that share is a nearest-symbol-below guess.\n'
                       % pct(lib['symbol_coverage']))
        lr = [r for r in rows if r['lib'] == key]
        sizes = sorted({r['n'] for r in lr})
        head = ['N', 'tool', 'cold s', 'cold vs llvm-symbolizer', 'warm s', 'warm vs llvm-symbolizer',
                'peak RSS MB', 'runs']
        body = []
        for n in sizes:
            for t in SYM_TOOLS:
                rs = [r for r in lr if r['n'] == n and r['tool'] == t]
                if not rs:
                    continue
                bad = [r for r in rs if not r['ok']]
                if bad:
                    body.append([fmt_n(n), t, bad[0]['error'], '', '', '', '', ''])
                    continue
                cells = [fmt_n(n), t]
                for cache in ('cold', 'warm'):
                    cr = [r['wall'] for r in rs if r['cache'] == cache]
                    ref = [r['wall'] for r in lr if r['n'] == n and r['tool'] == 'llvm-symbolizer'
                           and r['cache'] == cache and r['ok']]
                    cells += [spread(cr, digits=3), times(bl.ratio(bl.median(cr), bl.median(ref)))
                              if t != 'llvm-symbolizer' else '—']
                cells += [spread([r['rss_kb'] for r in rs if r['cache'] == 'warm'], scale=1 / 1024,
                                 digits=1),
                          len([r for r in rs if r['cache'] == 'warm'])]
                body.append(cells)
        out.append(table(head, body))
        a = agree.get(key, {})
        if a:
            out.append(agreement_tables(lib, a))
    return '\n'.join(out)


def agree_size(a):
    """The largest N at which the most tools finished."""
    most = max(len(v) for v in a.values())
    return max(n for n, v in a.items() if len(v) == most)


def agreement_tables(lib, a):
    """At the largest N every tool finished, and at the largest N of all when that is larger."""
    n_all = agree_size(a)
    ns = [n_all] + ([max(a)] if max(a) != n_all else [])
    out = []
    lines = lib['what'].find('file:line') >= 0
    for n in ns:
        res = a[n]
        head = ['tool', 'named', 'same function as llvm-symbolizer', 'same name, spelled alike',
                'same function as buildtrace', 'same function as most others']
        if lines:
            head += ['innermost file:line as llvm-symbolizer', 'whole inline chain as llvm-symbolizer',
                     'frames per address']
        body = []
        for t in SYM_TOOLS:
            if t not in res:
                continue
            r = res[t]
            row = [t, pct(r['named']), pct(r['same_llvm']), pct(r['exact_llvm']),
                   pct(r['same_buildtrace']), pct(r['majority'])]
            if lines:
                row += [pct(r.get('line_llvm')), pct(r.get('chain_llvm')),
                        num(r['frames_per_addr'], 3)]
            body.append(row)
        out.append('Agreement over N=%s addresses (%s):\n\n' % (
            fmt_n(n), ', '.join(t for t in SYM_TOOLS if t in res)) + table(head, body))
    out.append('"Same function": equal names once demangler spacing ("> >" or ">>") and symbol '
               'versions (`@@GLIBC_2.34`) are set aside, or two symbols at one address (glibc\'s '
               '`getnameinfo` and `__GI_getnameinfo`), or a part GCC split off a function '
               '(`foo.cold`, `foo.isra.0`). "Spelled alike": only spacing and versions set aside. '
               'Two tools that both name nothing agree. "Most others": more than half of the other '
               'tools that ran at this N.\n')
    return '\n'.join(out)


# ---- goals ------------------------------------------------------------------------------------

def noise(a, b, key):
    """A remark when the two sets of runs overlap, so their medians' order may be chance."""
    xa = [r.get(key) for r in a if r.get(key) is not None]
    xb = [r.get(key) for r in b if r.get(key) is not None]
    if len(xa) > 1 and len(xb) > 1 and min(xa) <= max(xb) and min(xb) <= max(xa):
        return ' (ranges overlap)'
    return ''


def goals_section(info, prof_rows, sym_rows, agree, rates, more=()):
    g = by_config(prof_rows)
    lines = ['## Goals\n']

    def verdict(ok):
        return '**met**' if ok else '**not met**'

    def verdict3(outcomes):
        """met: buildtrace's median at most perf's everywhere; not met: worse somewhere with runs
        that do not overlap perf's; else the medians' order is within this run's noise."""
        if all(o == 'ok' for o in outcomes):
            return '**met**'
        if any(o == 'worse' for o in outcomes):
            return '**not met**'
        return ('**met within noise** (where buildtrace\'s median is the higher, its runs and '
                'perf\'s overlap: this run does not tell them apart)')

    def outcome(b, p, bt, pf, key):
        if b <= p:
            return 'ok'
        return 'tie' if noise(bt, pf, key) else 'worse'

    if prof_rows:
        cpu, slow = [], []
        cpu_out, slow_out = [], []
        for mine, theirs, how in (('buildtrace', 'perf-dwarf', 'dwarf'), ('buildtrace-fp', 'perf', 'fp')):
            for hz in rates:
                bt, pf = g.get((mine, hz), []), g.get((theirs, hz), [])
                if not bt or not pf:
                    continue
                b, p = med(bt, 'prof_cpu'), med(pf, 'prof_cpu')
                cpu_out.append(outcome(b, p, bt, pf, 'prof_cpu'))
                cpu.append('%s %d Hz: %s s vs %s s%s' % (how, hz, num(b), num(p), noise(bt, pf, 'prof_cpu')))
                b, p = med(bt, 'slowdown'), med(pf, 'slowdown')
                if b is not None and p is not None:
                    slow_out.append(outcome(b, p, bt, pf, 'slowdown'))
                    slow.append('%s %d Hz: ×%s vs ×%s%s' % (how, hz, num(b), num(p), noise(bt, pf, 'slowdown')))
        if cpu:
            lines.append('- buildtrace\'s CPU per profile at most perf\'s (record + script) with the same kind '
                         'of call graph: %s (medians, buildtrace vs perf: %s).' % (verdict3(cpu_out), '; '.join(cpu)))
        if slow:
            lines.append('- workload slowdown no worse than under perf with the same kind of call graph: %s '
                         '(median slowdowns, buildtrace vs perf: %s; the spread of each is in table 1).' % (
                             verdict3(slow_out), '; '.join(slow)))
        bt = g.get(('buildtrace', 999), [])
        if bt:
            lost = [r.get('lost') for r in bt]
            ns = med(bt, 'bpf_sample_ns')
            share = ns * 999 / 1e9 if ns is not None else None
            ok = all(x == 0 for x in lost)
            lines.append('- BPF cost per sample low enough for 999 Hz on every CPU with no loss: %s '
                         '(lost samples per run: %s; the sampling program takes %s ns per sample, '
                         '%s of each CPU at 999 Hz).' % (
                             verdict(ok), ', '.join(str(x) for x in lost), num(ns, 0), pct(share)))
        walk, fp = g.get(('buildtrace-bpfwalk', 999), []), g.get(('buildtrace-fp', 999), [])
        if walk and fp and med(walk, 'bpf_sample_ns') is not None and med(fp, 'bpf_sample_ns') is not None:
            w, f = med(walk, 'bpf_sample_ns'), med(fp, 'bpf_sample_ns')
            lines.append('- the stack walk in BPF (dwarf-bpf) at most 1 us per sample above the frame-pointer '
                         'walk: %s (%s ns vs %s ns at 999 Hz).' % (verdict(w <= f + 1000), num(w, 0), num(f, 0)))
    if sym_rows:
        fast, right = [], []
        fast_ok = right_ok = True
        for key in sorted({r['lib'] for r in sym_rows}):
            for n in sorted({r['n'] for r in sym_rows if r['lib'] == key}):
                for cache in ('cold', 'warm'):
                    walls = {t: bl.median([r['wall'] for r in sym_rows if r['lib'] == key
                                           and r['n'] == n and r['tool'] == t and r['cache'] == cache
                                           and r['ok']]) for t in ('buildtrace', 'llvm-symbolizer')}
                    if None in walls.values():
                        continue
                    ok = walls['buildtrace'] <= walls['llvm-symbolizer']
                    fast_ok &= ok
                    if not ok:
                        fast.append('%s N=%s %s: %s s vs %s s' % (
                            key, fmt_n(n), cache, num(walls['buildtrace'], 3),
                            num(walls['llvm-symbolizer'], 3)))
            a = agree.get(key, {})
            if a:
                n = agree_size(a)
                res = a[n]
                if 'buildtrace' in res and 'llvm-symbolizer' in res:
                    b, l = res['buildtrace'], res['llvm-symbolizer']
                    key_b = b['majority'] if b['majority'] is not None else b['named']
                    key_l = l['majority'] if l['majority'] is not None else l['named']
                    ok = key_b >= key_l and b['named'] >= l['named']
                    right_ok &= ok
                    right.append('%s N=%s: named %s vs %s, same as most tools %s vs %s' % (
                        key, fmt_n(n), pct(b['named']), pct(l['named']), pct(b['majority']),
                        pct(l['majority'])))
        lines.append('- symbolization at least as fast as llvm-symbolizer: %s%s.' % (
            verdict(fast_ok), ' (slower: ' + '; '.join(fast) + ')' if fast else
            ' at every N, cold and warm, in both libraries'))
        if right:
            lines.append('- and at least as often right: %s (buildtrace vs llvm-symbolizer: %s).' % (
                verdict(right_ok), '; '.join(right)))
    lines += list(more)
    if len(lines) == 1:
        lines.append('Nothing was measured.')
    return '\n'.join(lines) + '\n'


# ---- what could not be measured ---------------------------------------------------------------

def limits_section(info, prof_rows):
    notes = list(info.get('notes', []))
    if info.get('bcc') and 'bcc\'s profile was not run' not in ' '.join(notes):
        notes.append('bcc\'s profile compiled its program with %s; the program reads only the '
                     'sampled registers and stacks, no kernel structure, so the headers\' version '
                     'does not change what it does.' % info['bcc'])
    for (t, hz), errs in sorted(failures(prof_rows).items()):
        notes.append('%s at %s Hz failed in %d run(s): %s' % (t, hz or '-', len(errs), errs[0][:200]))
    b, a = info.get('max_sample_rate_before'), info.get('max_sample_rate_after')
    if b and a and b != a:
        notes.append('the kernel lowered kernel.perf_event_max_sample_rate from %s to %s during the '
                     'run (sampling interrupts took too long)' % (b, a))
    notes += [
        'perf\'s own kernel-side cost per sample (the sampling interrupt, copying the stack, writing '
        'its ring buffer) has no counter like kernel.bpf_stats_enabled; it shows only in the '
        'workload\'s slowdown and CPU time.',
        'This machine is shared and has %s CPUs: other work runs beside the benchmark, so wall '
        'times are noisy; the spread (min–max) shows how much.' % info['machine']['nproc'],
        'libLLVM-14 has no DWARF here (Debian ships its debug symbols in a separate archive), so it '
        'is measured for names only; libc carries file:line and inlined frames through libc6-dbg.',
    ]
    return '## Not measured here, and caveats\n\n' + '\n'.join('- ' + n for n in notes) + '\n'


def syscalls_table(rows, key, cpu):
    """One workload's runs alone and under each profiler: wall time, CPU time (when measured),
    slowdown against the median alone, and the share of its samples in a syscall hook."""
    wr = [r for r in rows if r.get('workload') == key and r.get('ok')]
    alone = med([r for r in wr if r['tool'] == 'none'], 'work_wall')
    body = []
    for tool in ['none', 'buildtrace', 'buildtrace-fp', 'perf']:
        tr = [r for r in wr if r['tool'] == tool]
        if not tr:
            continue
        m = med(tr, 'work_wall')
        work = sum(r.get('work_samples') or 0 for r in tr)
        hooked = sum(r.get('hooked_samples') or 0 for r in tr)
        body.append([tool if tool != 'none' else 'alone', spread([r['work_wall'] for r in tr], ' s')] +
                    ([spread([r['work_cpu'] for r in tr], ' s')] if cpu else []) +
                    ['—' if tool == 'none' or not alone else '%+.1f%%' % (100 * (m / alone - 1)),
                     pct(hooked / work) if work else '—'])
    return table(['run', 'wall'] + (['CPU'] if cpu else []) + ['slowdown', 'hooked'], body)


def mapsrc_line(rows):
    src = sorted({r.get('mapsrc') for r in rows if r.get('ok', True) and r.get('mapsrc')})
    return ['buildtrace learnt of mappings through: %s.\n' % '; '.join(src)] if src else []


def syscalls_section(info, rows):
    """The syscall-heavy workloads alone and under each profiler at 99 Hz, system-wide."""
    out = ['## Syscall-heavy workloads\n',
           'Each workload alone, then under a system-wide profile at 99 Hz (`buildtrace -a`, its default '
           'call graph and `--call-graph fp`, and `perf record -a -g`), in an order that rotates per '
           'repeat. Slowdown: the median wall time against the median alone. Hooked: the share of '
           'the workload\'s own samples (in buildtrace\'s profile) with one of buildtrace\'s '
           'programs of the system call path in the stack.\n']
    for key, w in sorted(info.get('syscall_workloads', {}).items()):
        out.append('%s (N = %s)\n' % (w['what'], w['size']))
        out.append(syscalls_table(rows, key, cpu=True))
    out += mapsrc_line(rows)
    return '\n'.join(out)


def syscalls_goal(rows):
    """Per workload: buildtrace's slowdown in points against perf's, and whether its samples ever
    land in its own syscall-path programs."""
    lines = []
    for key in sorted({r.get('workload') for r in rows if r.get('workload')}):
        wr = [r for r in rows if r.get('workload') == key and r.get('ok')]
        alone = med([r for r in wr if r['tool'] == 'none'], 'work_wall')
        perf = med([r for r in wr if r['tool'] == 'perf'], 'work_wall')
        for tool in ['buildtrace', 'buildtrace-fp']:
            tr = [r for r in wr if r['tool'] == tool]
            bt = med(tr, 'work_wall')
            if not (alone and perf and bt):
                continue
            pts = 100 * (bt - perf) / alone
            hooked = sum(r.get('hooked_samples') or 0 for r in tr)
            pr = [r for r in wr if r['tool'] == 'perf']
            # the runs overlap: this run cannot tell the two slowdowns apart
            overlap = min(r['work_wall'] for r in tr) <= max(r['work_wall'] for r in pr)
            verdict = ('**met**' if pts <= 2 else '**met within noise** (the runs overlap perf\'s)'
                       if overlap else '**not met**') if hooked == 0 else '**not met**'
            lines.append('- %s under %s at 99 Hz slowed down at most 2 points more than under perf, no sample '
                         'in a syscall hook: %s (%+.1f points against perf, %d hooked samples).' % (
                             key, tool, verdict, pts, hooked))
    return lines


def long_section(rows):
    """A minute at 999 Hz, system-wide, each profiler once."""
    out = ['## A long session\n',
           'One system-wide profile at 999 Hz while the workload keeps every CPU busy for about a minute, '
           'each profiler once: its CPU seconds (perf: `perf record` plus `perf script`), peak RSS, and for '
           'buildtrace the times it read kallsyms again.\n']
    body = []
    for r in rows:
        body.append([r['tool'], '%s s' % num(r.get('prof_cpu')) if r.get('ok') else 'failed: %s' % r.get('error', ''),
                     num(r.get('record_cpu')), num(r.get('script_cpu')),
                     '%s MB' % num((r.get('prof_rss_kb') or 0) / 1024, 0) if r.get('prof_rss_kb') else '—',
                     '—' if r.get('kallsyms_reloads') is None else r['kallsyms_reloads'],
                     '%s MB' % num(r['data_mb'], 0) if r.get('data_mb') else '—'])
    out.append(table(['profiler', 'CPU', 'record', 'script', 'peak RSS', 'kallsyms reloads', 'perf.data'], body))
    return '\n'.join(out)


def long_goal(rows):
    by = {r['tool']: r for r in rows if r.get('ok')}
    lines = []
    for mine, theirs, share, how in (('buildtrace-fp', 'perf', 0.5, 'half'), ('buildtrace', 'perf-dwarf', 0.25, 'a quarter')):
        if mine in by and theirs in by:
            b, p = by[mine]['prof_cpu'], by[theirs]['prof_cpu']
            lines.append('- a long session (%d s, 999 Hz) under %s costs at most %s of %s\'s CPU: %s (%s s vs %s s, '
                         '%s kallsyms reloads).' % (by[mine].get('seconds', 0), mine, how, theirs,
                                                     '**met**' if b <= share * p else '**not met**', num(b), num(p),
                                                     by[mine].get('kallsyms_reloads')))
    return lines


def guest_section(rows):
    """The syscall-heavy workloads inside Debian's 6.1 kernel under qemu."""
    ok = [r for r in rows if r.get('ok')]
    kernel = next((r.get('kernel') for r in rows if r.get('kernel')), '?')
    out = ['## Syscall-heavy workloads in the 6.1 guest\n',
           'The same two workloads (busybox\'s dd) inside Debian\'s %s kernel booted under qemu with '
           'TCG (`make vmtest`\'s guest, 2 vCPUs), alone and under each profiler at 99 Hz system-wide, '
           'three repeats; each profiler is started once for both workloads. Emulation makes every '
           'run slower alike: compare within this table only.\n' % kernel]
    if not ok:
        out.append('Not measured: %s\n' % (rows[0].get('error') if rows else 'no rows'))
        return '\n'.join(out)
    for key in sorted({r['workload'] for r in ok}):
        out.append('%s\n' % key)
        out.append(syscalls_table(ok, key, cpu=False))
    out += mapsrc_line(ok)
    return '\n'.join(out)


def guest_goal(rows):
    return [l.replace('- ', '- in the 6.1 guest: ', 1) for l in syscalls_goal([r for r in rows if r.get('ok')])]


def agent_section(rows):
    """The agent at its default rate on an idle machine, beside perf record at the same rate."""
    out = ['## The agent, idle\n',
           '`buildtrace agent` at its default rate (%d Hz, every CPU) with nothing else running, beside '
           '`perf record -a -g` at the same rate, for the same seconds: resident memory read from '
           '/proc/PID/status every half second (peak: the most seen, or the kernel\'s VmHWM if higher; '
           'steady: the median of the second half) and CPU seconds.\n' % (rows[0].get('hz') or 19)]
    body = []
    for r in rows:
        if not r.get('ok'):
            body.append([r['tool'], 'failed: %s' % r.get('error', ''), '', '', ''])
            continue
        body.append([r['tool'], '%s s' % num(r.get('seconds')), '%s MB' % num(r['peak_kb'] / 1024, 1),
                     '%s MB' % num(r['steady_kb'] / 1024, 1), '%s s' % num(r.get('cpu'))])
    out.append(table(['profiler', 'time', 'peak RSS', 'steady RSS', 'CPU'], body))
    return '\n'.join(out)


def agent_goal(rows):
    lines = []
    for r in rows:
        if r.get('tool') == 'buildtrace-agent' and r.get('ok'):
            lines.append('- `buildtrace agent` at its default rate stays under 25 MB RSS on an idle machine: %s '
                         '(peak %s MB, steady %s MB over %d s).' % (
                             '**met**' if r['peak_kb'] < 25 * 1024 else '**not met**',
                             num(r['peak_kb'] / 1024, 1), num(r['steady_kb'] / 1024, 1), r['seconds']))
    return lines


def short_goal(prof_rows):
    """A 5 s system-wide profile at 99 Hz: buildtrace's CPU against half of perf record + script."""
    lines = []
    ok = [r for r in prof_rows if r.get('ok') and r.get('hz') == 99]
    perf = med([r for r in ok if r['tool'] == 'perf'], 'prof_cpu')
    for tool in ('buildtrace', 'buildtrace-fp'):
        bt = med([r for r in ok if r['tool'] == tool], 'prof_cpu')
        if perf and bt:
            lines.append('- a short system-wide profile at 99 Hz under %s costs at most half of perf record + '
                         'script\'s CPU: %s (medians %s s vs %s s, ×%s).' % (
                             tool, '**met**' if bt <= 0.5 * perf else '**not met**', num(bt), num(perf),
                             num(bt / perf)))
    return lines


OFFCPU_NAMES = {'none': 'alone', 'buildtrace': 'buildtrace --off-cpu',
                'buildtrace-every-stack': 'buildtrace --off-cpu --off-cpu-rate 0',
                'buildtrace-fp-every-stack': 'buildtrace --off-cpu --off-cpu-rate 0 --call-graph fp',
                'perf': 'perf record -e sched:sched_switch -g'}


def offcpu_section(rows):
    """The pipe ping-pong alone and under each way of counting its time off a CPU."""
    out = ['## Off-CPU time on a context-switch-heavy workload\n',
           'Two threads pass a byte back and forth over two pipes (tools/bench/pingpong.c: every round trip '
           'two switches off a CPU and two wakeups), alone and as the command of each profiler, in an '
           'order that rotates per repeat. The workload times its own round trips. Slowdown: its median '
           'wall time against the median alone. Profiler CPU: the run\'s CPU less the workload\'s own '
           '(perf: plus `perf script` reading its recording, which is what makes it a profile). Stacks '
           'not taken: the times off a CPU buildtrace counted without a stack, over its bound of stacks '
           'per second per CPU (`--off-cpu-rate`, 20000 by default).\n']
    alone = med([r for r in rows if r.get('tool') == 'none' and r.get('ok')], 'work_wall')
    body = []
    for tool in ['none', 'buildtrace', 'buildtrace-every-stack', 'buildtrace-fp-every-stack', 'perf']:
        rs = [r for r in rows if r.get('tool') == tool and r.get('ok')]
        if not rs:
            continue
        wall = med(rs, 'work_wall')
        switches = sum(r.get('switches') or 0 for r in rs)
        not_taken = sum(r.get('not_taken') or 0 for r in rs)
        body.append([OFFCPU_NAMES[tool], spread([r['work_wall'] for r in rs]), spread([r['work_cpu'] for r in rs]),
                     '×%s' % num(wall / alone) if alone and tool != 'none' else '—',
                     spread([r['prof_cpu'] for r in rs]) if tool != 'none' else '—',
                     '%.0f%% of %d' % (100.0 * not_taken / switches, switches) if switches else '—'])
    out.append(table(['run', 'wall', 'workload CPU', 'slowdown', 'profiler CPU', 'stacks not taken'], body))
    failed = [r for r in rows if not r.get('ok')]
    if failed:
        out.append('Failed runs: %s\n' % '; '.join('%s: %s' % (r['tool'], r.get('error', '')) for r in failed))
    return '\n'.join(out)


def offcpu_goal(rows):
    """The ping-pong slowed down no more under --off-cpu than under perf recording sched_switch -g."""
    ok = [r for r in rows if r.get('ok')]
    alone = med([r for r in ok if r['tool'] == 'none'], 'work_wall')
    perf = med([r for r in ok if r['tool'] == 'perf'], 'work_wall')
    lines = []
    for tool in ['buildtrace', 'buildtrace-every-stack', 'buildtrace-fp-every-stack']:
        bt = med([r for r in ok if r['tool'] == tool], 'work_wall')
        if not (alone and perf and bt):
            continue
        lines.append('- the pipe ping-pong slowed down no more under `%s` than under `%s`: %s (×%s against '
                     '×%s).' % (OFFCPU_NAMES[tool], OFFCPU_NAMES['perf'], '**met**' if bt <= perf else '**not met**',
                                num(bt / alone), num(perf / alone)))
    return lines


def python_section(rows):
    lines = ['## Python frames: the sampler\'s cost per sample\n',
             'buildtrace attached by pid at 999 Hz with the default call graph, to CPython processes '
             '(tests/python/pyhot_main.py: the sampler finds its thread state and walks its frames): '
             'Debian\'s python3 (3.11, static; `python`, and `python, 200 deep` in a recursion 200 '
             'frames deep), each of pyenv\'s 3.8 to 3.13 (a shared libpython; `pyenv 3.X`), and to a '
             'process that is not Python (a shell loop: one map lookup finds nothing). ns/sample is '
             'the perf_event program\'s run_time_ns / run_cnt (`kernel.bpf_stats_enabled`), which '
             'includes walking the native stack.\n']
    body = []
    targets = []
    for r in rows:
        if r.get('target') and r['target'] not in targets:
            targets.append(r['target'])
    for target in targets:
        rs = [r for r in rows if r.get('target') == target and r.get('ok')]
        if not rs:
            body.append([target, 'failed', '', ''])
            continue
        walked = sum(r.get('python_stacks') or 0 for r in rs)
        complete = sum(r.get('python_complete') or 0 for r in rs)
        body.append([target, spread([r['bpf_sample_ns'] for r in rs], digits=0),
                     spread([r['samples'] for r in rs], digits=0),
                     '%d of %d' % (complete, walked) if walked else '-'])
    lines.append(table(['target', 'ns/sample', 'samples', 'Python stacks complete'], body))
    return '\n'.join(lines)


def churn_section(rows):
    """The project's own build looping, system-wide at 499 Hz, each profiler 20 s; the dlopen loop;
    the agent over the same build."""
    out = ['## A build machine\'s churn\n',
           'The project\'s own build loops in a copy of its source (`make -j4` from clean, then `make '
           'clean`, again) while each profiler samples the whole machine at 499 Hz for 20 s, after a first '
           'session warmed buildtrace\'s build-id cache (its compiled tables). Complete: the outermost user '
           'frame is `_start`, the C library\'s start of `main` or of a thread (the same rule for every '
           'tool). No mapping: `[unknown]` frames, at no file or JIT map (perf: of no DSO). perf\'s CPU is '
           '`perf record` plus `perf script`. Medians (min-max) over the repeats.\n']
    churn_rows = [r for r in rows if r.get('part') == 'churn']
    body = []
    for tool in ('buildtrace', 'buildtrace-copy', 'perf-dwarf'):
        rs = [r for r in churn_rows if r['tool'] == tool and r.get('ok')]
        failed = [r for r in churn_rows if r['tool'] == tool and not r.get('ok')]
        if not rs:
            if failed:
                body.append([tool, 'failed: %s' % failed[0].get('error', ''), '', '', '', '', '', ''])
            continue
        body.append([tool, spread([r['taken'] for r in rs], digits=0),
                     spread([r.get('lost_pct') or 0 for r in rs], '%', 2),
                     spread([r.get('complete_pct') or 0 for r in rs], '%', 1),
                     spread([r.get('with_unknown_pct') or 0 for r in rs], '%', 1),
                     spread([r.get('unknown_per_sample') or 0 for r in rs], digits=2),
                     spread([r['prof_cpu'] for r in rs], ' s', 2),
                     spread([(r.get('prof_rss_kb') or 0) / 1024 for r in rs], ' MB', 0)])
    out.append(table(['profiler', 'samples taken', 'lost', 'user stacks complete', 'samples with a frame of '
                      'no mapping', '[unknown] frames per sample', 'CPU', 'peak RSS'], body))
    bt = [r for r in churn_rows if r['tool'] == 'buildtrace' and r.get('ok')]
    if bt:
        out.append('buildtrace finished %s stacks a run in userspace (the kernel met a process or a file '
                   'whose table it did not have yet), took %s tables from the cache and compiled %s; its '
                   'ring buffer went unread %s ms at worst.\n' % (
                       spread([r.get('finished_in_buildtrace') or 0 for r in bt], digits=0),
                       spread([r.get('tables_from_cache') or 0 for r in bt], digits=0),
                       spread([r.get('tables_compiled') or 0 for r in bt], digits=0),
                       spread([r.get('reader_gap_ms') or 0 for r in bt], digits=0)))
    dl = [r for r in rows if r.get('part') == 'dlopen']
    if dl:
        out.append('A library dlopen\'ed and dlclose\'d in a loop (1 ms of CPU in it per dlopen: '
                   'tests/session/churnkid.c) while the build loops, 20 s at 499 Hz: its hot function\'s '
                   'samples whose stack is complete through `main` and `dl_round`.\n')
        out.append(table(['profiler', 'samples in the library', 'complete'],
                         [[r['tool'], r.get('dlopen_samples'), '%s (%s)' % (r.get('dlopen_complete'), pct(
                             r['dlopen_complete'] / r['dlopen_samples'] if r.get('dlopen_samples') else None))]
                          if r.get('ok') else [r['tool'], 'failed: %s' % r.get('error', ''), '']
                          for r in dl]))
    ag = [r for r in rows if r.get('part') == 'agent']
    for r in ag:
        if not r.get('ok'):
            out.append('The agent under the churn failed: %s\n' % r.get('error', ''))
            continue
        out.append('`buildtrace agent` (19 Hz, an interval every %d s) for %d s over the same build: %s '
                   'intervals, each written at most %s ms after its end; %s of %s samples lost (%s); peak '
                   'RSS %s MB, median RSS %s MB over the first third of the run and %s MB over the last; '
                   '%s s of CPU.\n' % (
                       churn_interval(), r['seconds'], r.get('intervals'), num(r.get('late_max_ms'), 0),
                       r.get('lost'), r.get('taken'), pct((r.get('lost_pct') or 0) / 100),
                       num(r['peak_kb'] / 1024, 1), num(r['first_third_kb'] / 1024, 1),
                       num(r['last_third_kb'] / 1024, 1), num(r.get('cpu'))))
    return '\n'.join(out)


def churn_interval():
    return 5


def churn_goal(rows):
    lines = []
    bt = [r for r in rows if r.get('part') == 'churn' and r['tool'] == 'buildtrace' and r.get('ok')]
    perf = [r for r in rows if r.get('part') == 'churn' and r['tool'] == 'perf-dwarf' and r.get('ok')]
    if bt:
        lost = max(r.get('lost_pct') or 0 for r in bt)
        comp = min(r.get('complete_pct') or 0 for r in bt)
        unk = max(r.get('with_unknown_pct') or 0 for r in bt)
        lines.append('- under a build\'s churn (499 Hz, system-wide), at most 0.5%% of samples lost: %s (%s at '
                     'worst).' % ('**met**' if lost <= 0.5 else '**not met**', num(lost) + '%'))
        lines.append('- under a build\'s churn, at least 95%% of user stacks reach the outermost frame: %s (%s at '
                     'worst).' % ('**met**' if comp >= 95 else '**not met**', num(comp, 1) + '%'))
        pf = med(perf, 'with_unknown_pct') if perf else None
        lines.append('- under a build\'s churn, at most 5%% of samples carry a frame of no mapping%s: %s (%s at '
                     'worst%s).' % (' (fewer than perf)' if pf is not None else '',
                                    '**met**' if unk <= 5 and (pf is None or unk < pf) else '**not met**',
                                    num(unk, 1) + '%', ', perf %s%%' % num(pf, 1) if pf is not None else ''))
    for r in rows:
        if r.get('part') != 'agent' or not r.get('ok'):
            continue
        flat = r['last_third_kb'] <= 1.1 * r['first_third_kb'] + 2048
        ok = (r.get('late_max_ms') or 0) <= 1000 and (r.get('lost_pct') or 0) <= 1 and r['peak_kb'] < 50 * 1024
        lines.append('- the agent under a build\'s churn keeps every interval within 1 s, loses at most 1%%, peaks '
                     'under 50 MB RSS and stays flat over %d s: %s (%s ms late at worst, %s lost, peak %s MB, %s '
                     'then %s MB).' % (r['seconds'], '**met**' if ok and flat else '**not met**',
                                       num(r.get('late_max_ms'), 0), pct((r.get('lost_pct') or 0) / 100),
                                       num(r['peak_kb'] / 1024, 1), num(r['first_third_kb'] / 1024, 1),
                                       num(r['last_third_kb'] / 1024, 1)))
    return lines


def render(info, prof_rows, sym_rows, agree, sys_rows=(), long_rows=(), agent_rows=(), guest_rows=(), py_rows=(),
           churn_rows=(), off_rows=()):
    rates = info['settings']['rates']
    prof_rows = paired_slowdowns(prof_rows)
    parts = [
        '# buildtrace benchmarks\n',
        'Written by `make bench` (tools/bench/); do not edit by hand. Raw numbers: bench/raw/ '
        '(profile.csv, symbolize.csv, agreement.csv, run.json). Every ratio compares tools '
        'measured in this same run, on this machine.\n',
        machine_section(info),
        goals_section(info, prof_rows, sym_rows, agree, rates, short_goal(prof_rows) + syscalls_goal(sys_rows) + long_goal(long_rows) +
                      guest_goal(guest_rows) + agent_goal(agent_rows) + churn_goal(churn_rows) +
                      offcpu_goal(off_rows)),
    ]
    if prof_rows:
        parts.append(overhead_section(info, prof_rows, rates))
    if sys_rows:
        parts.append(syscalls_section(info, sys_rows))
    if guest_rows:
        parts.append(guest_section(guest_rows))
    if long_rows:
        parts.append(long_section(long_rows))
    if agent_rows:
        parts.append(agent_section(agent_rows))
    if sym_rows:
        parts.append(symbolize_section(info, sym_rows, agree))
    if py_rows:
        parts.append(python_section(py_rows))
    if churn_rows:
        parts.append(churn_section(churn_rows))
    if off_rows:
        parts.append(offcpu_section(off_rows))
    if prof_rows:
        parts.append(loss_section(prof_rows, rates))
        parts.append(ttfg_section(prof_rows, rates))
    parts.append(limits_section(info, prof_rows))
    return '\n'.join(parts)
