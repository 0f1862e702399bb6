# pybench.py - the python part of `make bench`: the sampling program's run time per sample
# (kernel.bpf_stats_enabled) when the target is a CPython process, whose frames it walks, and when it
# is not, at 999 Hz with the default call graph. Each target runs before buildtrace attaches to it by
# pid and is killed after.
import os
import re
import signal
import subprocess
import time

import benchlib as bl
import prof

TARGETS = {
    # tests/python/pyhot_main.py: <module> -> outer -> Worker.step -> inner, CPU-bound
    'python': lambda root: ['/usr/bin/python3', os.path.join(root, 'tests', 'python', 'pyhot_main.py'),
                            'chain', '3600'],
    # a shell loop: CPU-bound native code, no interpreter the sampler knows
    'native': lambda root: ['/bin/sh', '-c', 'while :; do :; done'],
}

PY_RE = re.compile(r'python: (\d+) interpreters, (\d+) stacks walked: complete (\d+)')
SUMMARY_RE = re.compile(r'(\d+) samples, (\d+) lost')


def sampler_stats(ctx, pid):
    """run_time_ns and run_cnt of the perf_event program of buildtrace process pid, or None."""
    for p in prof.bpf_stats(ctx, pid):
        if p['type'] == 'perf_event' and p['run_cnt']:
            return p['run_time_ns'], p['run_cnt']
    return None


def one(ctx, root, target, hz, seconds, settle_s):
    row = {'target': target, 'hz': hz, 'ok': False, 'error': ''}
    t = subprocess.Popen(TARGETS[target](root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    err = os.path.join(ctx.root, 'py-%s.err' % target)
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
    if not os.access('/usr/bin/python3', os.X_OK):
        log('python part: /usr/bin/python3 is missing')
        return rows
    for rep in range(repeats):
        for target in ('native', 'python'):
            log('python part: %s target, repeat %d' % (target, rep + 1))
            r = one(ctx, root, target, 999, seconds, settle_s)
            r['rep'] = rep
            rows.append(r)
    return rows
