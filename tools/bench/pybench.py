# pybench.py - the python part of `make bench`: the sampling program's run time per sample
# (kernel.bpf_stats_enabled) when the target is a CPython process, whose frames it walks, and when it
# is not, at 999 Hz with the default call graph: Debian's python3 (3.11, static), each of pyenv's
# CPython 3.8 to 3.13 that is installed (a shared libpython), and a recursion 200 frames deep. Each
# target runs before buildtrace attaches to it by pid and is killed after.
import glob
import os
import re
import signal
import subprocess
import time

import benchlib as bl
import prof

PYENV = os.environ.get('PYENV_ROOT') or '/root/.pyenv'


def workload(python, *args):
    # tests/python/pyhot_main.py chain: <module> -> outer -> Worker.step -> inner, CPU-bound
    return lambda root: [python, os.path.join(root, 'tests', 'python', 'pyhot_main.py')] + list(args)


def pyenv_python(minor):
    """pyenv's CPython 3.minor (the newest micro), or None."""
    found = []
    for d in glob.glob(os.path.join(PYENV, 'versions', '3.%d.*' % minor)):
        m = re.match(r'3\.%d\.(\d+)$' % minor, os.path.basename(d))
        py = os.path.join(d, 'bin', 'python3.%d' % minor)
        if m and os.access(py, os.X_OK):
            found.append((int(m.group(1)), py))
    return max(found)[1] if found else None


def targets():
    """(name, argv maker) of every target there is, and notes on those that are not."""
    t = [('native', lambda root: ['/bin/sh', '-c', 'while :; do :; done'])]
    notes = []
    if os.access('/usr/bin/python3', os.X_OK):
        t.append(('python', workload('/usr/bin/python3', 'chain', '3600')))
        t.append(('python, 200 deep', workload('/usr/bin/python3', 'rec', '200', '3600')))
    else:
        notes.append('/usr/bin/python3 is missing')
    for minor in range(8, 14):
        py = pyenv_python(minor)
        if py:
            t.append(('pyenv 3.%d' % minor, workload(py, 'chain', '3600')))
        else:
            notes.append("pyenv's CPython 3.%d is missing" % minor)
    return t, notes

PY_RE = re.compile(r'python: (\d+) interpreters, (\d+) stacks walked: complete (\d+)')
SUMMARY_RE = re.compile(r'(\d+) samples, (\d+) lost')


def sampler_stats(ctx, pid):
    """run_time_ns and run_cnt of the perf_event program of buildtrace process pid, or None."""
    for p in prof.bpf_stats(ctx, pid):
        if p['type'] == 'perf_event' and p['run_cnt']:
            return p['run_time_ns'], p['run_cnt']
    return None


def one(ctx, root, target, argv, hz, seconds, settle_s):
    row = {'target': target, 'hz': hz, 'ok': False, 'error': ''}
    t = subprocess.Popen(argv(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    err = os.path.join(ctx.root, 'py-%s.err' % re.sub(r'[^a-z0-9.]+', '-', target))
    bt = None
    try:
        time.sleep(settle_s)
        with open(err, 'w') as ef:
            bt = subprocess.Popen([ctx.buildtrace, '-F', str(hz), '-p', str(t.pid), '-o', os.devnull],
                                  stdout=subprocess.DEVNULL, stderr=ef, env=ctx.env)
            stats, t0 = None, time.monotonic()
            # the last reading before it stops: its programs go with it
            while time.monotonic() - t0 < seconds and bt.poll() is None:
                time.sleep(0.25)
                stats = sampler_stats(ctx, bt.pid) or stats
            bt.send_signal(signal.SIGINT)
            bt.wait(timeout=120)
        text = bl.read(err)
        m, py = SUMMARY_RE.search(text), PY_RE.search(text)
        if bt.returncode != 0 or not m or not stats:
            row['error'] = 'buildtrace exited %s' % bt.returncode if bt.returncode else 'no summary or stats'
            return row
        row.update(ok=True, samples=int(m.group(1)), lost=int(m.group(2)), bpf_sample_ns=stats[0] / stats[1],
                   bpf_sample_runs=stats[1], python_stacks=int(py.group(2)) if py else 0,
                   python_complete=int(py.group(3)) if py else 0)
        return row
    finally:
        if bt and bt.poll() is None:
            bt.kill()
            bt.wait()
        os.killpg(t.pid, signal.SIGKILL)
        t.wait()


def run_all(ctx, root, repeats, seconds, settle_s, log):
    rows = []
    os.makedirs(ctx.root, exist_ok=True)
    ts, notes = targets()
    for n in notes:
        log('python part: %s' % n)
    for rep in range(repeats):
        for target, argv in ts:
            log('python part: %s target, repeat %d' % (target, rep + 1))
            r = one(ctx, root, target, argv, 999, seconds, settle_s)
            r['rep'] = rep
            rows.append(r)
    return rows
