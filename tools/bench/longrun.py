# longrun.py - the long part of `make bench`: a system-wide profile of a minute at 999 Hz with both
# CPUs busy, beside perf with the same kind of call graph, for what a long session costs once the
# start is paid for: the profiler's CPU seconds (perf: record plus script), and how often buildtrace
# read kallsyms again.
import os
import re
import shutil
import signal
import subprocess
import time

import benchlib as bl
import prof

HZ = 999
TOOLS = ['buildtrace-fp', 'perf', 'buildtrace', 'perf-dwarf']
RELOADS_RE = re.compile(r'(\d+) kallsyms reloads')


def run_one(ctx, tool, seconds, settle):
    row = {'part': 'long', 'tool': tool, 'hz': HZ, 'seconds': seconds, 'ok': False, 'error': ''}
    d = os.path.join(ctx.root, 'long-%s' % tool)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    cmd, _ = prof.profiler_cmd(ctx, tool, HZ, d)
    err_path = os.path.join(d, 'stderr')
    with open(err_path, 'wb') as err:
        p = bl.Proc(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=ctx.env, cwd=d)
        if prof.wait_ready(ctx, p) is None:
            p.signal(signal.SIGKILL)
            p.wait()
            row['error'] = 'did not start: ' + prof.tail(err_path)
            return row
        time.sleep(settle)
        w = prof.run_workload(ctx)
        p.signal(signal.SIGINT)
        r = p.wait(timeout=600)
    row.update(work_wall=w.wall, record_cpu=r.cpu, prof_cpu=r.cpu, prof_rss_kb=r.maxrss_kb)
    if r.rc not in (0, 128 + signal.SIGINT) or w.rc != 0:
        row['error'] = 'exit %d: %s' % (r.rc, prof.tail(err_path))
        return row
    if tool.startswith('perf'):
        s = bl.run(['perf', 'script', '-i', os.path.join(d, 'perf.data')], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=os.path.join(d, 'script.err'), env=ctx.env, timeout=1800)
        row['script_cpu'] = s.cpu
        row['prof_cpu'] = r.cpu + s.cpu
        row['data_mb'] = os.path.getsize(os.path.join(d, 'perf.data')) / 1e6
        if s.rc != 0:
            row['error'] = 'perf script exit %d' % s.rc
            return row
    else:
        text = bl.read(err_path)
        m = prof.SUMMARY_RE.search(text)
        if m:
            row['samples'] = int(m.group(1))
            row['lost'] = int(m.group(2))
        m = RELOADS_RE.search(text)
        row['kallsyms_reloads'] = int(m.group(1)) if m else None
    row['ok'] = True
    shutil.rmtree(d, ignore_errors=True)
    return row


def run_all(ctx, seconds, settle):
    """Each profiler once over the same workload of about `seconds` (calibrated by the caller)."""
    rows = []
    for tool in TOOLS:
        ctx.log('long: %s, %d s at %d Hz' % (tool, seconds, HZ))
        row = run_one(ctx, tool, seconds, settle)
        if row.get('error'):
            ctx.log('long:   failed: ' + row['error'])
        rows.append(row)
    return rows
