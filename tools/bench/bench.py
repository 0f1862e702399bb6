# bench.py - `make bench`: runs the profiling and symbolization benchmarks, writes the raw numbers to
# bench/raw/ and the tables to bench/RESULTS.md. tools/bench/run.sh prepares the machine and calls it.
import csv
import json
import os
import shutil
import signal
import sys
import time

import benchlib as bl
import prof
import report
import symb
import longrun
import pybench
import sysheavy
import agentidle
import guestcost
import churn
import offcpubench


def env_int(name, default):
    v = os.environ.get(name, '')
    return int(v) if v.strip() else default


def env_list(name, default):
    v = os.environ.get(name, '')
    return [int(x) for x in v.replace(',', ' ').split()] if v.strip() else default


def settings():
    quick = os.environ.get('BENCH_QUICK', '') not in ('', '0')
    return {
        'quick': quick,
        'repeats': env_int('BENCH_REPEATS', 1 if quick else 3),
        'rates': env_list('BENCH_RATES', [99, 999, 4999]),
        'work_seconds': env_int('BENCH_WORK_SECONDS', 2 if quick else 5),
        'settle_s': 1.0,
        'sizes': env_list('BENCH_SIZES', [1000, 10000] if quick else [1000, 10000, 100000]),
        'seed': env_int('BENCH_SEED', 1),
        'cold': env_int('BENCH_COLD', 1) != 0,
        'sym_budget_s': env_int('BENCH_SYM_BUDGET', 10 if quick else 30),
        'sym_slow_s': env_int('BENCH_SYM_SLOW', 5 if quick else 10),
        'sym_timeout_s': env_int('BENCH_SYM_TIMEOUT', 120),
        'parts': os.environ.get('BENCH_PARTS', 'profile,syscalls,guest,long,agent,symbolize,python,churn,offcpu').replace(',', ' ').split(),
        'long_seconds': env_int('BENCH_LONG_SECONDS', 15 if quick else 60),
        'agent_seconds': env_int('BENCH_AGENT_SECONDS', 15 if quick else 60),
        'churn_agent_seconds': env_int('BENCH_CHURN_AGENT_SECONDS', 60 if quick else 600),
    }


def log(msg):
    print('bench: ' + msg, file=sys.stderr, flush=True)


def write_csv(path, rows, fields):
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction='ignore')
        w.writeheader()
        for r in rows:
            w.writerow({k: fmt_cell(r.get(k)) for k in fields})


def fmt_cell(v):
    if isinstance(v, float):
        return '%.6g' % v
    return '' if v is None else v


def versions():
    def first(cmd):
        out = bl.output(cmd)
        return out.splitlines()[0] if out else 'not installed'

    return {
        'buildtrace': 'git ' + (bl.output(['git', 'rev-parse', '--short', 'HEAD'], '?') +
                                (' + uncommitted changes'
                                 if bl.output(['git', 'status', '--porcelain', '--untracked-files=no'])
                                 else '')),
        'perf': first(['perf', '--version']),
        'bcc': 'bpfcc-tools ' + (bl.output(['dpkg-query', '-W', '-f=${Version}', 'bpfcc-tools'])
                                 or 'not installed'),
        'llvm-symbolizer': ' '.join(bl.output(['llvm-symbolizer', '--version']).split('\n')[1:2]).strip()
        or 'not installed',
        'eu-addr2line': first(['eu-addr2line', '--version']),
        'addr2line': first(['addr2line', '--version']),
        'libLLVM-14': bl.output(['dpkg-query', '-W', '-f=libllvm14 ${Version}', 'libllvm14']),
        'libc6-dbg': bl.output(['dpkg-query', '-W', '-f=libc6-dbg ${Version}', 'libc6-dbg']),
    }


def bcc_status():
    """Whether bcc's profile tool can compile its program here, and with which kernel headers."""
    if not shutil.which('profile-bpfcc'):
        return False, 'bcc is not installed (bpfcc-tools)'
    src = os.environ.get('BCC_KERNEL_SOURCE')
    if src:
        return True, 'kernel headers from %s' % os.environ.get('BENCH_BCC_HEADERS', src)
    rel = os.uname().release
    if os.path.exists('/lib/modules/%s/build' % rel) or os.path.exists('/sys/kernel/kheaders.tar.xz'):
        return True, 'the running kernel\'s headers'
    return False, 'no kernel headers for this kernel, which bcc compiles its program against'


def main():
    root = os.getcwd()
    s = settings()
    work = os.path.join(root, 'build', 'bench')
    raw = os.path.join(root, 'bench', 'raw')
    os.makedirs(raw, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    info = {'machine': bl.machine(), 'versions': versions(), 'settings': s, 'notes': []}
    started = time.monotonic()
    t_stats = 'kernel/bpf_stats_enabled'
    old_stats = bl.sysctl_get('kernel.bpf_stats_enabled')
    info['max_sample_rate_before'] = bl.sysctl_get('kernel.perf_event_max_sample_rate')
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    prof_rows, sym_rows, agree, sys_rows, long_rows, agent_rows, guest_rows, py_rows = [], [], {}, [], [], [], [], []
    churn_rows = []
    off_rows = []
    try:
        if 'profile' in s['parts']:
            with open('/proc/sys/' + t_stats, 'w') as f:
                f.write('1\n')
            prof_rows = profile_part(root, work, s, info)
        if 'syscalls' in s['parts']:
            sys_rows = syscalls_part(root, work, s, info)
        if 'guest' in s['parts']:
            guest_rows = guestcost.run(root, log)
        if 'long' in s['parts']:
            long_rows = long_part(root, work, s, info)
        if 'agent' in s['parts']:
            agent_rows = agent_part(root, work, s, info)
        if 'symbolize' in s['parts']:
            sym_rows, agree = symbolize_part(work, s, info)
        if 'python' in s['parts']:
            with open('/proc/sys/' + t_stats, 'w') as f:
                f.write('1\n')
            py_rows = python_part(root, work, s)
        if 'churn' in s['parts']:
            churn_rows = churn_part(root, work, s)
        if 'offcpu' in s['parts']:
            off_rows = offcpu_part(root, work, s)
    finally:
        if old_stats is not None:
            with open('/proc/sys/' + t_stats, 'w') as f:
                f.write(old_stats + '\n')
    info['max_sample_rate_after'] = bl.sysctl_get('kernel.perf_event_max_sample_rate')
    info['loadavg_at_end'] = bl.loadavg()
    info['bench_seconds'] = round(time.monotonic() - started)
    info['part_runs'] = {p: {'commit': info['versions'].get('buildtrace', '?'), 'date': info['machine']['date']}
                         for p in s['parts']}
    if os.environ.get('BENCH_KEEP', '') not in ('', '0') and os.path.exists(os.path.join(raw, 'run.json')):
        # the parts not run now keep their rows from the previous run, which says where they came from
        o_info, o_prof, o_sym, o_agree, o_sys, o_long, o_agent, o_guest, o_py, o_churn, o_off = load_raw(raw)
        o_runs = o_info.get('part_runs') or {p: {'commit': o_info['versions'].get('buildtrace', '?'),
                                                 'date': o_info['machine']['date']}
                                             for p in o_info['settings'].get('parts', [])}
        kept = {'profile': lambda: (o_prof, 'prof_rows'), 'symbolize': lambda: (o_sym, 'sym_rows'),
                'syscalls': lambda: (o_sys, 'sys_rows'), 'long': lambda: (o_long, 'long_rows'),
                'agent': lambda: (o_agent, 'agent_rows'), 'guest': lambda: (o_guest, 'guest_rows'),
                'python': lambda: (o_py, 'py_rows'), 'churn': lambda: (o_churn, 'churn_rows'),
                'offcpu': lambda: (o_off, 'off_rows')}
        for part, get in kept.items():
            if part in s['parts'] or part not in o_runs:
                continue
            rows, name = get()
            if name == 'prof_rows':
                prof_rows = rows
                s['rates'] = o_info['settings']['rates']
                for k in ('workload', 'bcc', 'bpf_programs'):
                    if k in o_info:
                        info[k] = o_info[k]
            elif name == 'sym_rows':
                sym_rows, agree = rows, o_agree
                if 'libraries' in o_info:
                    info['libraries'] = o_info['libraries']
            elif name == 'sys_rows':
                sys_rows = rows
                info['syscall_workloads'] = o_info.get('syscall_workloads', {})
            elif name == 'long_rows':
                long_rows = rows
            elif name == 'agent_rows':
                agent_rows = rows
            elif name == 'guest_rows':
                guest_rows = rows
            elif name == 'py_rows':
                py_rows = rows
            elif name == 'churn_rows':
                churn_rows = rows
            elif name == 'off_rows':
                off_rows = rows
            info['part_runs'][part] = o_runs[part]

    write_csv(os.path.join(raw, 'profile.csv'), prof_rows, PROFILE_FIELDS)
    write_csv(os.path.join(raw, 'symbolize.csv'), sym_rows, SYMBOLIZE_FIELDS)
    write_csv(os.path.join(raw, 'syscalls.csv'), sys_rows, SYSCALLS_FIELDS)
    write_csv(os.path.join(raw, 'long.csv'), long_rows, LONG_FIELDS)
    write_csv(os.path.join(raw, 'agent.csv'), agent_rows, AGENT_FIELDS)
    write_csv(os.path.join(raw, 'guest.csv'), guest_rows, guestcost.FIELDS)
    write_csv(os.path.join(raw, 'python.csv'), py_rows, PYTHON_FIELDS)
    write_csv(os.path.join(raw, 'churn.csv'), churn_rows, CHURN_FIELDS)
    write_csv(os.path.join(raw, 'offcpu.csv'), off_rows, OFFCPU_FIELDS)
    agree_rows = [dict(v, lib=lib, tool=t) for lib, per_n in agree.items()
                  for n, per_tool in per_n.items() for t, v in per_tool.items()]
    write_csv(os.path.join(raw, 'agreement.csv'), agree_rows, AGREE_FIELDS)
    if 'profile' in s['parts']:
        info['bpf_programs'] = [{'tool': r['tool'], 'hz': r['hz'], 'rep': r['rep'], 'progs': r['bpf_progs']}
                                for r in prof_rows if r.get('bpf_progs')]
    with open(os.path.join(raw, 'run.json'), 'w') as f:
        json.dump(info, f, indent=1, sort_keys=True)
        f.write('\n')
    md = report.render(info, prof_rows, sym_rows, agree, sys_rows, long_rows, agent_rows, guest_rows, py_rows,
                       churn_rows, off_rows)
    with open(os.path.join(root, 'bench', 'RESULTS.md'), 'w') as f:
        f.write(md)
    log('wrote bench/RESULTS.md and bench/raw/ in %d s' % info['bench_seconds'])


PROFILE_FIELDS = ['tool', 'hz', 'rep', 'group', 'ok', 'error', 'work_wall', 'work_cpu', 'startup_s', 'prof_cpu',
                  'record_cpu', 'script_cpu', 'prof_rss_kb', 'wakeups_per_s', 'ttfg_s', 'expected', 'delivered',
                  'irq', 'samples', 'reported_samples', 'lost', 'unresolved', 'missing_stacks',
                  'bpf_sample_ns', 'bpf_sample_runs', 'bpf_total_s']
SYMBOLIZE_FIELDS = ['lib', 'mode', 'n', 'tool', 'rep', 'cache', 'ok', 'error', 'wall', 'cpu', 'rss_kb']
SYSCALLS_FIELDS = ['workload', 'size', 'tool', 'hz', 'rep', 'ok', 'error', 'work_wall', 'work_cpu', 'prof_cpu',
                   'work_samples', 'hooked_samples', 'mapsrc']
LONG_FIELDS = ['tool', 'hz', 'seconds', 'ok', 'error', 'work_wall', 'record_cpu', 'script_cpu', 'prof_cpu',
               'prof_rss_kb', 'samples', 'lost', 'kallsyms_reloads', 'data_mb']
AGENT_FIELDS = ['tool', 'hz', 'seconds', 'ok', 'error', 'cpu', 'peak_kb', 'steady_kb', 'max_seen_kb']
PYTHON_FIELDS = ['target', 'hz', 'rep', 'ok', 'error', 'samples', 'lost', 'bpf_sample_ns', 'bpf_sample_runs',
                 'python_stacks', 'python_complete']
CHURN_FIELDS = ['part', 'tool', 'hz', 'rep', 'seconds', 'ok', 'error', 'taken', 'samples', 'lost', 'lost_pct',
                'user_stacks', 'complete', 'complete_pct', 'unknown_frames', 'unknown_per_sample', 'with_unknown',
                'with_unknown_pct', 'prof_cpu', 'prof_rss_kb', 'finished_in_buildtrace', 'tables_loaded',
                'tables_from_cache', 'tables_compiled', 'reader_gap_ms', 'queue_peak_kb', 'dlopen_samples',
                'dlopen_complete', 'cpu', 'peak_kb', 'first_third_kb', 'last_third_kb', 'late_max_ms', 'intervals']
OFFCPU_FIELDS = ['tool', 'rep', 'rounds', 'ok', 'error', 'work_wall', 'work_cpu', 'prof_cpu', 'script_cpu',
                 'data_mb', 'switches', 'not_taken']
AGREE_FIELDS = ['lib', 'n', 'tool', 'named', 'exact_llvm', 'same_llvm', 'same_buildtrace', 'majority',
                'line_llvm', 'chain_llvm', 'frames_per_addr']


def part_ctx(root, work, work_bin=None, rounds=0):
    """The context every part measures in: the tools' environment without debuginfod (no network
    here: the tools would wait on it) and with its own HOME (their build-id caches stay out of the
    user's ~/.debug), and the profilers' working directory."""
    env = dict(os.environ)
    env.pop('DEBUGINFOD_URLS', None)
    env['HOME'] = os.path.join(work, 'home')
    os.makedirs(env['HOME'], exist_ok=True)
    ctx = prof.Ctx(os.path.join(work, 'prof'), work_bin, rounds, os.cpu_count(), os.path.join(root, 'buildtrace'),
                   os.environ.get('BPFTOOL', 'bpftool'), env, log)
    os.makedirs(ctx.root, exist_ok=True)
    return ctx


def profile_part(root, work, s, info):
    work_bin = os.path.join(work, 'bench-work')
    rounds = prof.calibrate(work_bin, s['work_seconds'], log)
    info['workload'] = {'rounds': rounds, 'threads': os.cpu_count(),
                        'per_thread': '1 MiB buffer compressed, expanded and checked per round'}
    tools = ['buildtrace', 'buildtrace-fp', 'buildtrace-bpfwalk', 'buildtrace-copy', 'perf', 'perf-dwarf']
    ok, why = bcc_status()
    info['bcc'] = why
    if ok:
        tools.append('bcc')
    else:
        info['notes'].append('bcc\'s profile was not run: ' + why)
    if not shutil.which('perf'):
        tools.remove('perf')
        tools.remove('perf-dwarf')
        info['notes'].append('perf is not installed (linux-perf): no perf columns')
    ctx = part_ctx(root, work, work_bin, rounds)
    return prof.run_all(ctx, tools, s['rates'], s['repeats'], s['settle_s'])


def syscalls_part(root, work, s, info):
    ctx = part_ctx(root, work)
    rows, info['syscall_workloads'] = sysheavy.run_all(ctx, work, s['repeats'], s['work_seconds'],
                                                       s['settle_s'])
    return rows


def long_part(root, work, s, info):
    work_bin = os.path.join(work, 'bench-work')
    rounds = prof.calibrate(work_bin, s['long_seconds'], log)
    ctx = part_ctx(root, work, work_bin, rounds)
    return longrun.run_all(ctx, s['long_seconds'], s['settle_s'])


def agent_part(root, work, s, info):
    ctx = part_ctx(root, work)
    return agentidle.run_all(ctx, s['agent_seconds'])


def python_part(root, work, s):
    ctx = part_ctx(root, work)
    return pybench.run_all(ctx, root, s['repeats'], s['work_seconds'], s['settle_s'], log)


def churn_part(root, work, s):
    ctx = part_ctx(root, work)
    kid, lib = os.path.join(work, 'churnkid'), os.path.join(work, 'libchurn.so')
    return churn.run_all(ctx, root, s['repeats'], s['churn_agent_seconds'],
                         kid if os.access(kid, os.X_OK) else None, lib if os.path.exists(lib) else None)
def offcpu_part(root, work, s):
    ctx = part_ctx(root, work)
    return offcpubench.run_all(ctx, os.path.join(work, 'bench-pingpong'), s['repeats'], s['work_seconds'])


def symbolize_part(work, s, info):
    have, missing = symb.available_tools()
    for t in missing:
        info['notes'].append('%s is not installed: no %s rows' % (t, t))
    ctx = symb.Ctx(os.path.join(work, 'sym'), s['sizes'], s['repeats'], s['seed'], s['cold'],
                   s['sym_budget_s'], s['sym_slow_s'], s['sym_timeout_s'], log)
    rows, agree = [], {}
    info['libraries'] = {}
    for lib in symb.libraries():
        info['libraries'][lib.key] = {'path': lib.path, 'what': lib.what, 'debug': lib.debug,
                                      'text': ['0x%x' % lib.text[0], lib.text[1]] if lib.text else None,
                                      'missing': lib.missing}
        if lib.missing:
            info['notes'].append('%s not measured: %s' % (lib.key, lib.missing))
            continue
        r, notes, a = symb.run_lib(ctx, lib, have)
        info['libraries'][lib.key]['symbol_coverage'] = lib.coverage
        rows += r
        info['notes'] += notes
        agree[lib.key] = a
    return rows, agree


def load_raw(raw):
    """The rows of an earlier run, back from bench/raw/, to render RESULTS.md again."""
    def typed(v):
        if v in ('True', 'False'):
            return v == 'True'
        for conv in (int, float):
            try:
                return conv(v)
            except ValueError:
                pass
        return None if v == '' else v

    def rows(name):
        with open(os.path.join(raw, name), newline='') as f:
            return [{k: (v if k in ('group', 'error') else typed(v)) for k, v in r.items()}
                    for r in csv.DictReader(f)]

    with open(os.path.join(raw, 'run.json')) as f:
        info = json.load(f)
    prof_rows = rows('profile.csv')
    sys_rows = rows('syscalls.csv') if os.path.exists(os.path.join(raw, 'syscalls.csv')) else []
    long_rows = rows('long.csv') if os.path.exists(os.path.join(raw, 'long.csv')) else []
    agent_rows = rows('agent.csv') if os.path.exists(os.path.join(raw, 'agent.csv')) else []
    guest_rows = rows('guest.csv') if os.path.exists(os.path.join(raw, 'guest.csv')) else []
    py_rows = rows('python.csv') if os.path.exists(os.path.join(raw, 'python.csv')) else []
    churn_rows = rows('churn.csv') if os.path.exists(os.path.join(raw, 'churn.csv')) else []
    off_rows = rows('offcpu.csv') if os.path.exists(os.path.join(raw, 'offcpu.csv')) else []
    progs = {(p['tool'], p['hz'], p['rep']): p['progs'] for p in info.get('bpf_programs', [])}
    for r in prof_rows:
        r['bpf_progs'] = progs.get((r['tool'], r['hz'], r['rep']))
    agree = {}
    for r in rows('agreement.csv'):
        agree.setdefault(r['lib'], {}).setdefault(r['n'], {})[r['tool']] = r
    return (info, prof_rows, rows('symbolize.csv'), agree, sys_rows, long_rows, agent_rows, guest_rows, py_rows,
            churn_rows, off_rows)


if __name__ == '__main__':
    if sys.argv[1:] == ['--report-only']:
        # Renders bench/RESULTS.md again from bench/raw/, without measuring anything.
        info, p_rows, s_rows, ag, y_rows, l_rows, a_rows, g_rows, py_rows, c_rows, o_rows = load_raw(
            os.path.join(os.getcwd(), 'bench', 'raw'))
        with open(os.path.join(os.getcwd(), 'bench', 'RESULTS.md'), 'w') as f:
            f.write(report.render(info, p_rows, s_rows, ag, y_rows, l_rows, a_rows, g_rows, py_rows, c_rows, o_rows))
        sys.exit(0)
    if os.geteuid() != 0:
        sys.exit('bench: needs root (the profilers load BPF programs; cold runs drop the page cache)')
    main()
