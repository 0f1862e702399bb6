# prof.py - the profiling part of `make bench`: the fixed workload alone, then under buildtrace, perf
# and bcc at each rate; one row per run with the workload's time, the profiler's CPU, RSS, BPF run
# time, samples expected and delivered, and the time from Ctrl-C to the written profile.
import json
import os
import re
import shutil
import signal
import subprocess
import time

import benchlib as bl

WORKLOAD_COMM = 'bench-work'


class Ctx:
    """Paths and settings of one bench run."""

    def __init__(self, root, work_bin, rounds, ncpu, buildtrace, bpftool, env, log):
        self.root = root              # build/bench/prof
        self.work_bin = work_bin
        self.rounds = rounds
        self.ncpu = ncpu
        self.buildtrace = buildtrace
        self.bpftool = bpftool
        self.env = env                # the profilers' environment
        self.log = log


def calibrate(work_bin, seconds, log):
    """Rounds of bench-work that take about `seconds` here, measured once so that every run of this
    bench does the same work."""
    probe = 10
    walls = []
    for _ in range(3):  # the fastest of three: other work on the machine only slows it down
        r = bl.run([work_bin, '-r', str(probe)], stdout=subprocess.DEVNULL)
        if r.rc != 0:
            raise RuntimeError('bench-work failed (exit %d)' % r.rc)
        walls.append(r.wall)
    rounds = max(1, int(round(probe * seconds / max(min(walls), 1e-3))))
    log('workload: %d rounds take about %.1f s here' % (rounds, min(walls) * rounds / probe))
    return rounds


# ---- the profilers ----------------------------------------------------------------------------

def profiler_cmd(ctx, tool, hz, d):
    if tool in ('buildtrace', 'buildtrace-fp', 'buildtrace-bpfwalk', 'buildtrace-copy'):
        # buildtrace: its default call graph (dwarf); buildtrace-fp: frame pointers only;
        # buildtrace-bpfwalk and buildtrace-copy: the two ways of using call frame information
        graph = {'buildtrace-fp': ['--call-graph', 'fp'],
                 'buildtrace-bpfwalk': ['--call-graph', 'dwarf-bpf'],
                 'buildtrace-copy': ['--call-graph', 'dwarf-copy']}.get(tool, [])
        return [ctx.buildtrace, '-a', '-F', str(hz), '-o', os.path.join(d, 'out.folded'),
                '--no-live'] + graph, None
    if tool == 'perf':
        return ['perf', 'record', '-a', '-g', '-F', str(hz), '-o', os.path.join(d, 'perf.data')], None
    if tool == 'perf-dwarf':
        return ['perf', 'record', '-a', '--call-graph', 'dwarf', '-F', str(hz), '-o',
                os.path.join(d, 'perf.data')], None
    if tool == 'bcc':
        # -a: kernel frames marked _[k], like buildtrace's folded output; -f: folded stacks.
        return [shutil.which('profile-bpfcc') or 'profile-bpfcc', '-af', '-F', str(hz)], \
            os.path.join(d, 'out.folded')
    raise ValueError(tool)


def wait_ready(ctx, p, timeout=120.0):
    """Waits until the profiler holds one perf event per CPU; returns seconds taken, or None if it
    exited or never got there."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if p.poll_exited():
            return None
        pid = p.target()
        if pid is not None and bl.perf_event_fds(pid) >= ctx.ncpu:
            return time.monotonic() - p.t0
        time.sleep(0.02)
    return None


def bpf_stats(ctx, pid):
    """run_time_ns and run_cnt of the process's BPF programs, as bpftool shows them (counted while
    kernel.bpf_stats_enabled=1)."""
    ids = bl.bpf_prog_ids(pid)
    if not ids:
        return []
    try:
        progs = json.loads(bl.output([ctx.bpftool, 'prog', 'show', '--json'], '[]') or '[]')
    except ValueError:
        progs = []
    out = []
    for p in progs:
        if p.get('id') in ids:
            out.append({'id': p['id'], 'name': p.get('name', '?'), 'type': p.get('type', '?'),
                        'run_time_ns': p.get('run_time_ns', 0), 'run_cnt': p.get('run_cnt', 0)})
    return sorted(out, key=lambda x: x['id'])


# ---- reading what each profiler wrote ---------------------------------------------------------

SUMMARY_RE = re.compile(r'(\d+) samples, (\d+) lost, (\d+) unresolved frames')


IRQ_ENTRY_RE = re.compile(r'(^|[;\s])(asm_sysvec_|asm_common_interrupt)')


def folded_counts(path):
    """(all samples, workload samples, workload samples taken in an interrupt's entry code) in a
    folded-stacks file."""
    total = work = irq = 0
    try:
        with open(path, errors='replace') as f:
            for line in f:
                stack, _, count = line.rstrip('\n').rpartition(' ')
                if not stack or not count.isdigit():
                    continue
                n = int(count)
                total += n
                if stack.split(';', 1)[0] == WORKLOAD_COMM:
                    work += n
                    if IRQ_ENTRY_RE.search(stack):
                        irq += n
    except OSError:
        return None, None, None
    return total, work, irq


PERF_HEADER_RE = re.compile(r'^(.*?)\s+\d+(?:/\d+)?\s+\[\d+\]\s')
PERF_LOST_RE = re.compile(r'PERF_RECORD_LOST lost (\d+)')


def perf_script_counts(path):
    """(all samples, workload samples, of those in an interrupt's entry code, lost samples) in
    `perf script --show-lost-events` output."""
    total = work = irq = lost = 0
    in_work = in_irq = False
    try:
        with open(path, errors='replace') as f:
            for line in f:
                if not line.strip():
                    continue
                if line[0] in ' \t':
                    if in_work and not in_irq and IRQ_ENTRY_RE.search(line):
                        in_irq = True
                        irq += 1
                    continue
                in_work = in_irq = False
                if 'PERF_RECORD_' in line:
                    m = PERF_LOST_RE.search(line)
                    if m:
                        lost += int(m.group(1))
                    continue
                m = PERF_HEADER_RE.match(line)
                if m:
                    total += 1
                    if m.group(1) == WORKLOAD_COMM:
                        work += 1
                        in_work = True
    except OSError:
        return None, None, None, None
    return total, work, irq, lost


# ---- one run ----------------------------------------------------------------------------------

def run_workload(ctx):
    return bl.run([ctx.work_bin, '-r', str(ctx.rounds)], stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL)


def run_one(ctx, tool, hz, rep, settle):
    row = {'tool': tool, 'hz': hz, 'rep': rep, 'ok': False, 'error': ''}
    d = os.path.join(ctx.root, '%s-%d' % (tool, hz))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    if tool == 'none':
        w = run_workload(ctx)
        row.update(work_wall=w.wall, work_cpu=w.cpu, ok=w.rc == 0)
        if w.rc:
            row['error'] = 'workload exit %d' % w.rc
        return row

    cmd, stdout_path = profiler_cmd(ctx, tool, hz, d)
    err_path = os.path.join(d, 'stderr')
    with open(err_path, 'wb') as err, open(stdout_path or os.devnull, 'wb') as out:
        p = bl.Proc(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=ctx.env, cwd=d)
        ready = wait_ready(ctx, p)
        if ready is None:
            p.signal(signal.SIGKILL)
            p.wait()
            row['error'] = 'did not start: ' + tail(err_path)
            return row
        row['startup_s'] = ready
        time.sleep(settle)
        sw0 = bl.voluntary_switches(p.target())
        w = run_workload(ctx)
        sw1 = bl.voluntary_switches(p.target())
        row.update(work_wall=w.wall, work_cpu=w.cpu)
        if sw0 is not None and sw1 is not None:
            row['wakeups_per_s'] = (sw1 - sw0) / w.wall
        progs = bpf_stats(ctx, p.target()) if not tool.startswith('perf') else []
        t_int = time.monotonic()
        p.signal(signal.SIGINT)
        r = p.wait(timeout=300)
        t_done = time.monotonic()
    row.update(prof_cpu=r.cpu, prof_rss_kb=r.maxrss_kb, ttfg_s=t_done - t_int)
    # perf ends itself with the SIGINT it caught, once its file is complete: GNU time reports 130.
    if r.rc not in (0, 128 + signal.SIGINT) or w.rc != 0:
        row['error'] = 'exit %d%s: %s' % (r.rc, ' (killed after 300 s)' if r.timed_out else '',
                                          tail(err_path))
        return row

    row['expected'] = hz * w.cpu
    if tool.startswith('perf'):
        script_out = os.path.join(d, 'script.txt')
        s = bl.run(['perf', 'script', '-i', os.path.join(d, 'perf.data'), '--show-lost-events'],
                   stdin=subprocess.DEVNULL, stdout=script_out, stderr=os.path.join(d, 'script.err'),
                   env=ctx.env, timeout=600)
        row['ttfg_s'] += s.wall
        row['prof_cpu'] += s.cpu
        row['record_cpu'] = r.cpu
        row['script_cpu'] = s.cpu
        row['prof_rss_kb'] = max((x for x in (r.maxrss_kb, s.maxrss_kb) if x is not None), default=None)
        if s.rc != 0:
            row['error'] = 'perf script exit %d' % s.rc
            return row
        row['samples'], row['delivered'], row['irq'], row['lost'] = perf_script_counts(script_out)
    else:
        row['samples'], row['delivered'], row['irq'] = folded_counts(os.path.join(d, 'out.folded'))
        if tool.startswith('buildtrace'):
            m = SUMMARY_RE.search(bl.read(err_path))
            if m:
                row['reported_samples'] = int(m.group(1))
                row['lost'] = int(m.group(2))
                row['unresolved'] = int(m.group(3))
        m = re.search(r'(\d+) stack traces could not be displayed', bl.read(err_path))
        if tool == 'bcc':
            row['missing_stacks'] = int(m.group(1)) if m else 0
    if progs:
        row['bpf_progs'] = progs
        row['bpf_total_s'] = sum(x['run_time_ns'] for x in progs) / 1e9
        smp = [x for x in progs if x['type'] == 'perf_event']
        cnt = sum(x['run_cnt'] for x in smp)
        if cnt:
            row['bpf_sample_ns'] = sum(x['run_time_ns'] for x in smp) / cnt
            row['bpf_sample_runs'] = cnt
    row['ok'] = True
    shutil.rmtree(d, ignore_errors=True)  # perf.data and the outputs can be large
    return row


def tail(path, n=300):
    s = bl.read(path).strip().replace('\n', ' | ')
    return s[-n:]


def run_all(ctx, tools, rates, repeats, settle):
    """Per repeat and rate: the workload alone, then under each profiler. The order of rates and of
    profilers rotates from repeat to repeat, and the baseline is measured next to every group, so
    that a slow spell on the shared machine does not fall on one configuration only."""
    rows = []
    broken = set()      # a profiler that could not start once is not tried again
    for rep in range(repeats):
        rr = rates[rep % len(rates):] + rates[:rep % len(rates)]
        tt = tools[rep % len(tools):] + tools[:rep % len(tools)]
        for hz in rr:
            for tool in ['none'] + tt:
                if tool in broken:
                    continue
                # perf's DWARF mode writes 8 KiB per sample and unwinds it all in perf script:
                # above 999 Hz a run takes minutes and gigabytes
                if tool == 'perf-dwarf' and hz > 999:
                    continue
                what = ' at %d Hz' % hz if tool != 'none' else ' (no profiler)'
                ctx.log('profile: repeat %d/%d: %s%s' % (rep + 1, repeats, tool, what))
                row = run_one(ctx, tool, hz if tool != 'none' else 0, rep, settle)
                row['group'] = '%d/%d' % (rep, hz)  # pairs each run with the baseline before it
                if row.get('error'):
                    ctx.log('profile:   failed: ' + row['error'])
                    if row['error'].startswith('did not start'):
                        broken.add(tool)
                rows.append(row)
    return rows
