# offcpubench.py - the off-CPU part of `make bench`: what counting off-CPU time costs a
# context-switch-heavy workload (two threads passing a byte back and forth over two pipes, each
# blocking in read() until the other writes: every round trip two switches off a CPU and two
# wakeups), alone, under `buildtrace --off-cpu` (its default bound on stacks taken; no bound; no
# bound with frame-pointer user stacks, as perf -g walks them), and under
# `perf record -e sched:sched_switch -g`, the closest perf offers here (Debian's perf has
# no --off-cpu). Each profiler starts the workload as its command; the workload times its own round
# trips, so neither profiler's start or end is in its time. Runs rotate their order per repeat.
import os
import re
import shutil
import subprocess

import benchlib as bl

TOOLS = ['buildtrace', 'buildtrace-every-stack', 'buildtrace-fp-every-stack', 'perf']


def calibrate(work_bin, seconds, log):
    """Round trips that take about `seconds` alone here (the fastest of three probes)."""
    probe = 50000
    walls = []
    for _ in range(3):
        out = bl.output([work_bin, str(probe)])
        try:
            walls.append(float(out.split()[0]))
        except (ValueError, IndexError):
            raise RuntimeError('bench-pingpong failed: %r' % out)
    rounds = max(1000, int(probe * seconds / max(min(walls), 1e-3)))
    log('offcpu: %d round trips take about %.1f s here' % (rounds, min(walls) * rounds / probe))
    return rounds


def command(ctx, tool, work, d):
    if tool == 'none':
        return work
    if tool.startswith('buildtrace'):
        # every stack, and every stack by frame pointers as perf -g walks them
        bound = ['--off-cpu-rate', '0'] if tool.endswith('every-stack') else []
        graph = ['--call-graph', 'fp'] if tool == 'buildtrace-fp-every-stack' else []
        return [ctx.buildtrace, '--off-cpu', '--no-live', '-o', os.path.join(d, 'out.folded')] + bound + graph + \
            ['--'] + work
    return ['perf', 'record', '-q', '-e', 'sched:sched_switch', '-g', '-o', os.path.join(d, 'perf.data'), '--'] + work


def run_one(ctx, tool, work, rep):
    row = {'part': 'offcpu', 'tool': tool, 'rep': rep, 'ok': False, 'error': ''}
    d = os.path.join(ctx.root, 'offcpu-%s' % tool)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out_path, err_path = os.path.join(d, 'stdout'), os.path.join(d, 'stderr')
    r = bl.run(command(ctx, tool, work, d), stdout=out_path, stderr=err_path, env=ctx.env, timeout=600)
    try:
        wall, cpu = (float(x) for x in bl.read(out_path).split()[:2])
    except ValueError:
        row['error'] = 'exit %d: %s' % (r.rc, bl.read(err_path)[-300:])
        return row
    # the profiler's CPU: what the run used less the workload's own
    row.update(work_wall=wall, work_cpu=cpu, prof_cpu=max(r.cpu - cpu, 0.0) if tool != 'none' else 0.0)
    if r.rc != 0:
        row['error'] = 'exit %d: %s' % (r.rc, bl.read(err_path)[-300:])
        return row
    if tool == 'perf':
        # perf's stacks are a profile once perf script has read them, as buildtrace's are at its end
        s = bl.run(['perf', 'script', '-i', os.path.join(d, 'perf.data')], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=600)
        row['script_cpu'] = s.cpu
        row['prof_cpu'] += s.cpu
        row['data_mb'] = os.path.getsize(os.path.join(d, 'perf.data')) / 1e6
    elif tool.startswith('buildtrace'):
        m = re.search(r'(\d+) times off a CPU; .* (\d+) stacks not taken', bl.read(err_path))
        if m:
            row['switches'], row['not_taken'] = int(m.group(1)), int(m.group(2))
    row['ok'] = True
    shutil.rmtree(d, ignore_errors=True)
    return row


def run_all(ctx, work_bin, repeats, seconds):
    rounds = calibrate(work_bin, seconds, ctx.log)
    work = [work_bin, str(rounds)]
    tools = [t for t in TOOLS if t != 'perf' or shutil.which('perf')]
    rows = []
    for rep in range(repeats):
        tt = tools[rep % len(tools):] + tools[:rep % len(tools)]
        for tool in ['none'] + tt:
            ctx.log('offcpu: repeat %d/%d: pipe ping-pong %s' % (rep + 1, repeats,
                                                               'alone' if tool == 'none' else 'under ' + tool))
            row = run_one(ctx, tool, work, rep)
            row['rounds'] = rounds
            if row.get('error'):
                ctx.log('offcpu:   failed: ' + row['error'])
            rows.append(row)
    return rows
