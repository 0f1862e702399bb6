# churn.py - the churn part of `make bench`: what a build machine does to a profiler. The project's
# own build loops in a copy of its source (make -j4 from clean, then clean, again: cc1, as, ld, sh
# and make start and exit hundreds of times), and each profiler samples the whole machine at 499 Hz
# for 20 s while it does: buildtrace's default call graph, dwarf-copy, and perf record --call-graph
# dwarf. For each: samples taken and lost, user stacks that reach the outermost frame (the same rule
# for every tool: the outermost user frame is _start, the C library's start of main or of a thread),
# samples with a frame of no mapping, the profiler's CPU (perf: record and script) and peak RSS.
# Then a library dlopen'ed and dlclose'd in a loop (stacks complete in its first samples after each
# dlopen), and the agent under the same build for longer: intervals on time, samples lost, resident
# memory over the whole run.
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import time

import agentidle
import benchlib as bl
import prof

HZ = 499
SECONDS = 20
WARMUP_S = 5          # the build loops this long before a profiler starts
AGENT_INTERVAL = 5

# Frames a complete user stack starts with, as the C library and the dynamic loader name them.
OUTERMOST = {'_start', '__libc_start_main', '__libc_start_call_main', '__libc_start_main_impl',
             'clone', 'clone3', '__clone', '__clone3', '__GI___clone', '__GI___clone3', 'start_thread',
             '_dl_start_user', '_dl_start'}
STARTS_MAIN = {'__libc_start_main', '__libc_start_call_main', '__libc_start_main_impl', '_dl_start'}


# ---- the build that loops ------------------------------------------------------------------------

def copy_source(root, dest):
    """The committed source, as a fresh clone has it: `git archive HEAD`, else a copy without the
    build outputs."""
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    tar = subprocess.run('git archive HEAD | tar -x -C %s' % dest, shell=True, cwd=root,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if tar.returncode != 0 or not os.path.exists(os.path.join(dest, 'Makefile')):
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(root, dest, ignore=shutil.ignore_patterns('build', 'build-*', '.git', 'buildtrace'))


class Loop:
    """make -j4 buildtrace, then make clean, again, in the copy; in a process group of its own."""

    def __init__(self, src):
        self.p = subprocess.Popen(['sh', '-c', 'while :; do make -j4 buildtrace >/dev/null 2>&1; '
                                   'make clean >/dev/null 2>&1; done'], cwd=src, start_new_session=True,
                                  stdin=subprocess.DEVNULL)

    def stop(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()


# ---- reading the profiles -------------------------------------------------------------------------

def complete(user):
    """Whether a user stack (outermost first) reaches the outermost frame: it starts where the C
    library or the loader starts a program or a thread, _start included when it has no name."""
    if not user:
        return False
    if user[0] in OUTERMOST:
        return True
    return user[0].startswith('[') and len(user) > 1 and user[1] in STARTS_MAIN


def fold_metrics(path, comm_filter=None):
    """From a folded file: samples, samples with a user stack, of those complete, frames of no
    mapping ([unknown]) and samples with one."""
    m = {'samples': 0, 'user_stacks': 0, 'complete': 0, 'unknown_frames': 0, 'with_unknown': 0}
    try:
        f = open(path, errors='replace')
    except OSError:
        return None
    with f:
        for line in f:
            stack, _, count = line.rstrip('\n').rpartition(' ')
            if not stack or not count.isdigit():
                continue
            frames = stack.split(';')
            if comm_filter and not comm_filter(frames[0]):
                continue
            n = int(count)
            user = [x for x in frames[1:] if not x.endswith('_[k]')]
            unknown = sum(1 for x in frames[1:] if x == '[unknown]')
            m['samples'] += n
            if user:
                m['user_stacks'] += n
                m['complete'] += n if complete(user) else 0
            m['unknown_frames'] += n * unknown
            m['with_unknown'] += n if unknown else 0
    return m


def fix_perf_data(path):
    """perf 6.1 stops reading a system-wide recording of a newer kernel at its first KSYMBOL record
    ("Bad address"), dropping the rest silently: those records become FINISHED_ROUND ones, which
    perf skips, in place."""
    with open(path, 'r+b') as f:
        hdr = f.read(104)
        if len(hdr) < 56 or hdr[:8] != b'PERFILE2':
            return 0
        data_off, data_size = struct.unpack('<QQ', hdr[40:56])
        pos, end, n = data_off, data_off + data_size, 0
        while pos + 8 <= end:
            f.seek(pos)
            t, _, size = struct.unpack('<IHH', f.read(8))
            if size < 8:
                break
            if t == 17:   # PERF_RECORD_KSYMBOL
                f.seek(pos)
                f.write(struct.pack('<I', 68))   # PERF_RECORD_FINISHED_ROUND
                n += 1
            pos += size
        return n


PERF_LOST_RE = re.compile(r'PERF_RECORD_LOST lost (\d+)')


def perf_fold(script_path, folded_path):
    """`perf script -F comm,ip,sym,dso --show-lost-events` folded as buildtrace folds: a frame of no
    mapping is [unknown], an unnamed frame of a file [file]. The samples lost."""
    stacks, lost = {}, 0
    comm, frames = None, []

    def flush():
        if comm is not None:
            k = ';'.join([comm] + frames[::-1])
            stacks[k] = stacks.get(k, 0) + 1

    with open(script_path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if 'PERF_RECORD_LOST' in line:
                m = PERF_LOST_RE.search(line)
                lost += int(m.group(1)) if m else 0
                continue
            if not line.strip():
                flush()
                comm, frames = None, []
                continue
            if not line[0].isspace():
                flush()
                comm, frames = line.split()[0] if line.split() else '?', []
                continue
            parts = line.split(None, 1)
            rest = parts[1] if len(parts) > 1 else '[unknown] ([unknown])'
            dso = ''
            if rest.endswith(')') and ' (' in rest:
                rest, dso = rest.rsplit(' (', 1)
                dso = dso[:-1]
            sym = rest.strip().split('+0x')[0] or '[unknown]'
            if 'kernel.kallsyms' in dso or dso.startswith('[kernel'):
                sym += '_[k]'
            elif sym == '[unknown]' and dso not in ('', '[unknown]'):
                sym = '[%s]' % os.path.basename(dso)
            frames.append(sym)
    flush()
    with open(folded_path, 'w') as out:
        for k, v in sorted(stacks.items()):
            out.write('%s %d\n' % (k, v))
    return lost


SUMMARY_RE = re.compile(r'(\d+) samples, (\d+) lost, (\d+) unresolved frames')
TAKEN_RE = re.compile(r'(\d+) samples taken')
WALK_RE = re.compile(r'(\d+) finished in buildtrace.*?tables: (\d+) loaded \((\d+) from the cache, (\d+) compiled')
GAP_RE = re.compile(r'read every (\d+) ms at worst, (\d+) KiB most waiting')


def buildtrace_summary(text, row):
    m = SUMMARY_RE.search(text)
    if m:
        row['samples'], row['lost'] = int(m.group(1)), int(m.group(2))
    m = TAKEN_RE.search(text)
    if m:
        row['taken'] = int(m.group(1))
    m = WALK_RE.search(text)
    if m:
        row['finished_in_buildtrace'] = int(m.group(1))
        row['tables_loaded'], row['tables_from_cache'], row['tables_compiled'] = \
            int(m.group(2)), int(m.group(3)), int(m.group(4))
    m = GAP_RE.search(text)
    if m:
        row['reader_gap_ms'], row['queue_peak_kb'] = int(m.group(1)), int(m.group(2))


def add_fold(row, folded):
    fm = fold_metrics(folded)
    if not fm:
        return False
    row.update(fm)
    if fm['user_stacks']:
        row['complete_pct'] = 100.0 * fm['complete'] / fm['user_stacks']
    if fm['samples']:
        row['unknown_per_sample'] = fm['unknown_frames'] / fm['samples']
        row['with_unknown_pct'] = 100.0 * fm['with_unknown'] / fm['samples']
    taken = row.get('taken') or (fm['samples'] + (row.get('lost') or 0))
    row['taken'] = taken
    if taken:
        row['lost_pct'] = 100.0 * (row.get('lost') or 0) / taken
    return True


# ---- one profiler over the churn ------------------------------------------------------------------

def profiler(ctx, tool, d, seconds):
    if tool == 'perf-dwarf':
        return ['perf', 'record', '-a', '--call-graph', 'dwarf', '-F', str(HZ), '-o',
                os.path.join(d, 'perf.data'), '--', 'sleep', str(seconds)]
    graph = {'buildtrace-copy': ['--call-graph', 'dwarf-copy']}.get(tool, [])
    return [ctx.buildtrace, '-a', '-F', str(HZ), '-d', str(seconds), '-v', '--no-live', '-o',
            os.path.join(d, 'out.folded')] + graph


def run_one(ctx, part, tool, rep, seconds, d, during=None):
    """tool for `seconds` while the build loops (started by the caller); `during`, a command run
    meanwhile (the dlopen loop), its samples measured on their own."""
    row = {'part': part, 'tool': tool, 'hz': HZ, 'rep': rep, 'seconds': seconds, 'ok': False, 'error': ''}
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    err_path = os.path.join(d, 'stderr')
    with open(err_path, 'wb') as err:
        p = bl.Proc(profiler(ctx, tool, d, seconds), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=err, env=ctx.env, cwd=d)
        if prof.wait_ready(ctx, p) is None:
            p.signal(signal.SIGKILL)
            p.wait()
            row['error'] = 'did not start: ' + prof.tail(err_path)
            return row
        w = subprocess.Popen(during, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if during else None
        r = p.wait(timeout=seconds + 600)
        if w:
            w.kill()
            w.wait()
    row.update(prof_cpu=r.cpu, prof_rss_kb=r.maxrss_kb)
    if r.rc != 0:
        row['error'] = 'exit %d: %s' % (r.rc, prof.tail(err_path))
        return row
    folded = os.path.join(d, 'out.folded')
    if tool == 'perf-dwarf':
        data = os.path.join(d, 'perf.data')
        fix_perf_data(data)
        script = os.path.join(d, 'script.txt')
        s = bl.run(['perf', 'script', '-F', 'comm,ip,sym,dso', '--show-lost-events', '-i', data],
                   stdin=subprocess.DEVNULL, stdout=script, stderr=os.path.join(d, 'script.err'), env=ctx.env,
                   timeout=1800)
        row['prof_cpu'] = r.cpu + s.cpu
        row['prof_rss_kb'] = max(x for x in (r.maxrss_kb, s.maxrss_kb, 0) if x is not None)
        if s.rc != 0:
            row['error'] = 'perf script exit %d' % s.rc
            return row
        row['lost'] = perf_fold(script, folded)
    else:
        buildtrace_summary(bl.read(err_path), row)
    if not add_fold(row, folded):
        row['error'] = 'no profile written'
        return row
    if part == 'dlopen':
        row['dlopen_samples'], row['dlopen_complete'] = lib_leaf(folded)
    row['ok'] = True
    shutil.rmtree(d, ignore_errors=True)
    return row


def lib_leaf(folded):
    """Samples in the dlopen'ed library's hot function, and those whose stack goes from _start
    through main and dl_round to it."""
    hot = whole = 0
    with open(folded, errors='replace') as f:
        for line in f:
            stack, _, count = line.rstrip('\n').rpartition(' ')
            frames = stack.split(';')
            if frames[0] != 'churnkid' or 'lib_leaf' not in frames:
                continue
            n = int(count)
            hot += n
            user = [x for x in frames[1:] if not x.endswith('_[k]')]
            chain = ';'.join(user)
            if complete(user) and 'main;dl_round;lib_burn;lib_mid;lib_leaf' in chain:
                whole += n
    return hot, whole


# ---- the agent over the churn ---------------------------------------------------------------------

def run_agent(ctx, seconds, d):
    """`buildtrace agent` at its default rate, an interval every AGENT_INTERVAL s, while the build
    loops: its RSS every second, what status.json says at the end."""
    row = {'part': 'agent', 'tool': 'buildtrace-agent', 'hz': 19, 'rep': 0, 'seconds': seconds, 'ok': False,
           'error': ''}
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out = os.path.join(d, 'profiles')
    err_path = os.path.join(d, 'stderr')
    cmd = [ctx.buildtrace, 'agent', '--output-dir', out, '--interval', str(AGENT_INTERVAL)]
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
            v = agentidle.status_kb(pid, 'VmRSS')
            if v is not None:
                series.append(v)
            time.sleep(1.0)
        hwm = agentidle.status_kb(pid, 'VmHWM')
        p.signal(signal.SIGTERM)
        r = p.wait(timeout=120)
    try:
        st = json.loads(bl.read(os.path.join(out, 'status.json')) or '{}')
    except ValueError:
        st = {}
    if r.rc != 0 or not series or not st:
        row['error'] = 'exit %d: %s' % (r.rc, prof.tail(err_path))
        return row
    third = max(1, len(series) // 3)
    first, last = sorted(series[:third]), sorted(series[-third:])
    taken = st.get('samples_taken') or 0
    row.update(ok=True, cpu=r.cpu, peak_kb=max(hwm or 0, max(series)), first_third_kb=first[len(first) // 2],
               last_third_kb=last[len(last) // 2], samples=st.get('samples'), lost=st.get('lost_samples'),
               taken=taken, lost_pct=100.0 * (st.get('lost_samples') or 0) / taken if taken else None,
               late_max_ms=st.get('interval_late_max_ms'), intervals=st.get('intervals'))
    u = st.get('bpf_unwind') or {}
    if u.get('walks'):
        row['complete_pct'] = 100.0 * u.get('reached_outermost', 0) / u['walks']
    shutil.rmtree(d, ignore_errors=True)
    return row


# ---- the part -------------------------------------------------------------------------------------

def run_all(ctx, root, repeats, agent_seconds, kid, lib):
    """Every profiler `repeats` times in rotating order while the build loops, the dlopen loop under
    buildtrace and perf, then the agent for agent_seconds."""
    src = os.path.join(tempfile.gettempdir(), 'buildtrace-bench-churn')
    copy_source(root, src)
    rows = []
    tools = ['buildtrace', 'buildtrace-copy'] + (['perf-dwarf'] if shutil.which('perf') else [])
    loop = Loop(src)
    try:
        time.sleep(WARMUP_S)
        # the build's tables compiled once, as on any machine after its first session: the runs
        # below measure a warm build-id cache (each row says how many tables it compiled)
        ctx.log('churn: warming the tables\' cache')
        run_one(ctx, 'warmup', 'buildtrace', 0, 10, os.path.join(ctx.root, 'churn-warmup'))
        for rep in range(repeats):
            for tool in tools[rep % len(tools):] + tools[:rep % len(tools)]:
                ctx.log('churn: repeat %d/%d: %s, %d s at %d Hz' % (rep + 1, repeats, tool, SECONDS, HZ))
                row = run_one(ctx, 'churn', tool, rep, SECONDS, os.path.join(ctx.root, 'churn-' + tool))
                if row.get('error'):
                    ctx.log('churn:   failed: ' + row['error'])
                rows.append(row)
        if kid and lib:
            for tool in ['buildtrace'] + (['perf-dwarf'] if 'perf-dwarf' in tools else []):
                ctx.log('churn: dlopen loop under %s' % tool)
                row = run_one(ctx, 'dlopen', tool, 0, SECONDS, os.path.join(ctx.root, 'dlopen-' + tool),
                              during=[kid, 'dlopen', lib, '1', '100000'])
                if row.get('error'):
                    ctx.log('churn:   failed: ' + row['error'])
                rows.append(row)
        ctx.log('churn: the agent for %d s' % agent_seconds)
        row = run_agent(ctx, agent_seconds, os.path.join(ctx.root, 'churn-agent'))
        if row.get('error'):
            ctx.log('churn:   failed: ' + row['error'])
        rows.append(row)
    finally:
        loop.stop()
        shutil.rmtree(src, ignore_errors=True)
    return rows
