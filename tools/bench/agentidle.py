# agentidle.py - the agent part of `make bench`: `buildtrace agent` at its default rate on a machine
# with nothing else to do, its resident memory read from /proc every half second (VmRSS, and the
# kernel's own high-water mark VmHWM at the end), and its CPU time, beside a `perf record -a -g` at
# the same rate over the same seconds.
import os
import shutil
import signal
import subprocess
import time

import benchlib as bl
import prof

HZ = 19  # the agent's default rate; perf is run at the same


def status_kb(pid, field):
    for line in bl.read('/proc/%d/status' % pid).splitlines():
        if line.startswith(field + ':'):
            return int(line.split()[1])
    return None


def run_one(ctx, tool, seconds):
    row = {'part': 'agent', 'tool': tool, 'hz': HZ, 'seconds': seconds, 'ok': False, 'error': ''}
    d = os.path.join(ctx.root, 'agent-%s' % tool)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    if tool == 'buildtrace-agent':
        cmd = [ctx.buildtrace, 'agent', '--output-dir', os.path.join(d, 'profiles'), '--interval', '10']
    else:
        cmd = ['perf', 'record', '-a', '-g', '-F', str(HZ), '-o', os.path.join(d, 'perf.data')]
    err_path = os.path.join(d, 'stderr')
    with open(err_path, 'wb') as err:
        p = bl.Proc(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=ctx.env, cwd=d)
        if prof.wait_ready(ctx, p) is None:
            p.signal(signal.SIGKILL)
            p.wait()
            row['error'] = 'did not start: ' + prof.tail(err_path)
            return row
        pid = p.target()
        series = []
        t_end = time.monotonic() + seconds
        while time.monotonic() < t_end and not p.poll_exited():
            v = status_kb(pid, 'VmRSS')
            if v is not None:
                series.append(v)
            time.sleep(0.5)
        hwm = status_kb(pid, 'VmHWM')
        p.signal(signal.SIGTERM if tool == 'buildtrace-agent' else signal.SIGINT)
        r = p.wait(timeout=120)
    if r.rc not in (0, 128 + signal.SIGINT, 128 + signal.SIGTERM):
        row['error'] = 'exit %d: %s' % (r.rc, prof.tail(err_path))
        return row
    if not series:
        row['error'] = 'no memory figures read'
        return row
    tail = sorted(series[len(series) // 2:])
    row.update(ok=True, cpu=r.cpu, peak_kb=max(hwm or 0, max(series)), steady_kb=tail[len(tail) // 2],
               max_seen_kb=max(series))
    shutil.rmtree(d, ignore_errors=True)
    return row


def run_all(ctx, seconds):
    rows = []
    tools = ['buildtrace-agent'] + (['perf'] if shutil.which('perf') else [])
    for tool in tools:
        ctx.log('agent: %s, %d s idle at %d Hz' % (tool, seconds, HZ))
        row = run_one(ctx, tool, seconds)
        if row.get('error'):
            ctx.log('agent:   failed: ' + row['error'])
        rows.append(row)
    return rows
