# sysheavy.py - the syscall-heavy part of `make bench`: what a system-wide profile at 99 Hz costs a
# workload made of system calls (dd copying one byte at a time, and getppid() in a loop), beside
# perf record -a -g. A profiler that hooks every system call taxes exactly these; one that learns of
# mappings from the mmap path or the kernel's own mmap records does not. Runs alternate: the
# workload alone, then under each profiler, in an order that rotates from repeat to repeat.
import os
import re
import shutil
import signal
import subprocess
import time

import benchlib as bl
import prof

HZ = 99
TOOLS = ['buildtrace', 'buildtrace-fp', 'perf']
# buildtrace's programs that run on system calls, as kallsyms names them (bpf_prog_TAG_NAME): the
# fallback hooks, which the share below should find empty when they are not used.
SYSCALL_PROGS_RE = re.compile(r'bpf_prog_[0-9a-f]+_(on_sys_enter|on_sys_exit|on_mmap|on_munmap)\b')


class Workload:
    def __init__(self, key, comm, what, cmd_for):
        self.key = key
        self.comm = comm        # its comm in folded stacks
        self.what = what
        self.cmd_for = cmd_for  # size -> argv
        self.size = None


def workloads(work):
    calls = os.path.join(work, 'bench-syscalls')
    return [
        Workload('dd', 'dd', '`dd if=/dev/zero of=/dev/null bs=1 count=N`: two system calls a byte',
                 lambda n: ['dd', 'if=/dev/zero', 'of=/dev/null', 'bs=1', 'count=%d' % n]),
        Workload('getppid', 'bench-syscalls', 'getppid() N times in a loop',
                 lambda n: [calls, str(n)]),
    ]


def calibrate(w, seconds, log):
    """The size that takes about `seconds` alone here (the fastest of three probes)."""
    probe = 2000000
    walls = []
    for _ in range(3):
        r = bl.run(w.cmd_for(probe), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.rc != 0:
            raise RuntimeError('%s failed (exit %d)' % (w.key, r.rc))
        walls.append(r.wall)
    w.size = max(1, int(probe * seconds / max(min(walls), 1e-3)))
    log('syscalls: %s: N = %d takes about %.1f s here' % (w.key, w.size, min(walls) * w.size / probe))


def folded_share(path, comm):
    """(the workload's samples, those with a buildtrace program of the system call path in their
    stack) in a folded file."""
    work = hooked = 0
    try:
        with open(path, errors='replace') as f:
            for line in f:
                stack, _, count = line.rstrip('\n').rpartition(' ')
                if not count.isdigit() or stack.split(';', 1)[0] != comm:
                    continue
                work += int(count)
                if SYSCALL_PROGS_RE.search(stack):
                    hooked += int(count)
    except OSError:
        return None, None
    return work, hooked


def run_one(ctx, w, tool, rep, settle):
    row = {'part': 'syscalls', 'workload': w.key, 'tool': tool, 'hz': HZ, 'rep': rep, 'ok': False,
           'error': ''}
    cmd = w.cmd_for(w.size)
    if tool == 'none':
        r = bl.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        row.update(work_wall=r.wall, work_cpu=r.cpu, ok=r.rc == 0)
        return row
    d = os.path.join(ctx.root, 'sys-%s-%s' % (w.key, tool))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    pcmd, _ = prof.profiler_cmd(ctx, tool, HZ, d)
    if tool.startswith('buildtrace'):
        pcmd.append('-v')  # names how it learns of mappings
    err_path = os.path.join(d, 'stderr')
    with open(err_path, 'wb') as err:
        p = bl.Proc(pcmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=ctx.env,
                    cwd=d)
        if prof.wait_ready(ctx, p) is None:
            p.signal(signal.SIGKILL)
            p.wait()
            row['error'] = 'did not start: ' + prof.tail(err_path)
            return row
        time.sleep(settle)
        r = bl.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        p.signal(signal.SIGINT)
        pr = p.wait(timeout=300)
    row.update(work_wall=r.wall, work_cpu=r.cpu, prof_cpu=pr.cpu)
    if r.rc != 0 or pr.rc not in (0, 128 + signal.SIGINT):
        row['error'] = 'exit %d/%d: %s' % (r.rc, pr.rc, prof.tail(err_path))
        return row
    if tool.startswith('buildtrace'):
        row['work_samples'], row['hooked_samples'] = folded_share(os.path.join(d, 'out.folded'), w.comm)
        m = re.search(r'new mappings: ([^\n]*)', bl.read(err_path))
        row['mapsrc'] = m.group(1) if m else ''
    row['ok'] = True
    shutil.rmtree(d, ignore_errors=True)
    return row


def run_all(ctx, work, repeats, seconds, settle):
    ws = workloads(work)
    for w in ws:
        calibrate(w, seconds, ctx.log)
    rows = []
    for rep in range(repeats):
        tt = TOOLS[rep % len(TOOLS):] + TOOLS[:rep % len(TOOLS)]
        for w in ws:
            for tool in ['none'] + tt:
                ctx.log('syscalls: repeat %d/%d: %s %s' % (rep + 1, repeats, w.key,
                                                            'alone' if tool == 'none' else 'under ' + tool))
                row = run_one(ctx, w, tool, rep, settle)
                row['size'] = w.size
                if row.get('error'):
                    ctx.log('syscalls:   failed: ' + row['error'])
                rows.append(row)
    return rows, {w.key: {'what': w.what, 'size': w.size} for w in ws}
