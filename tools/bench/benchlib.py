# benchlib.py - what every part of `make bench` shares: running a command and reading its CPU time and
# peak RSS from the kernel, medians, the machine's description, the page cache, sysctls.
import datetime
import os
import platform
import signal
import subprocess
import tempfile
import threading
import time


class Result:
    """One finished process: wall seconds, CPU seconds and peak RSS (kB) as wait4() reports them."""

    def __init__(self, wall, user, sys, maxrss_kb, rc, timed_out=False):
        self.wall = wall
        self.user = user
        self.sys = sys
        self.maxrss_kb = maxrss_kb
        self.rc = rc
        self.timed_out = timed_out

    @property
    def cpu(self):
        return self.user + self.sys


TIME = '/usr/bin/time'


def default_sigint():
    """In the child before exec: SIGINT back to its default. A bench started in the background
    (`make bench &`, nohup) inherits SIGINT ignored, and a tool that only installs its handler when
    SIGINT is not ignored (bcc's Python tools) would then never stop on the SIGINT that ends a run."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Proc:
    """A started command. wait() reaps it with wait4() for its wall and CPU time (with its
    children's). Peak RSS comes from GNU time, which the command runs under: a process forked from
    this Python interpreter would count the interpreter's own pages before exec as its peak."""

    def __init__(self, cmd, stdin=None, stdout=None, stderr=None, env=None, cwd=None):
        self.cmd = cmd
        self.rss_file = None
        if os.access(TIME, os.X_OK):
            fd, self.rss_file = tempfile.mkstemp(prefix='bench-rss.')
            os.close(fd)
            cmd = [TIME, '-f', '%M', '-o', self.rss_file] + list(cmd)
        self.t0 = time.monotonic()
        self.popen = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=stderr, env=env,
                                      cwd=cwd, close_fds=True, preexec_fn=default_sigint)
        self.pid = self.popen.pid
        self._target = None if self.rss_file else self.pid
        self.result = None

    def target(self):
        """The command's own pid (GNU time's child), or None until it has been forked."""
        if self._target is None:
            kids = read('/proc/%d/task/%d/children' % (self.pid, self.pid)).split()
            if kids:
                self._target = int(kids[0])
        return self._target

    def poll_exited(self):
        if self.result is not None:
            return True
        pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        if pid == 0:
            return False
        self._done(status, ru, False)
        return True

    def signal(self, sig):
        """Signals the command itself: GNU time ignores SIGINT while it waits."""
        if self.result is not None:
            return
        pid = self.target()
        if pid is None and sig == signal.SIGKILL:
            pid = self.pid
        if pid is None:
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass

    def wait(self, timeout=None):
        if self.result is not None:
            return self.result
        fired = []
        timer = None
        if timeout is not None:
            def kill():
                fired.append(True)
                self.signal(signal.SIGKILL)
            timer = threading.Timer(timeout, kill)
            timer.start()
        while True:
            try:
                _, status, ru = os.wait4(self.pid, 0)
                break
            except InterruptedError:
                continue
        if timer:
            timer.cancel()
        self._done(status, ru, bool(fired))
        return self.result

    def _done(self, status, ru, timed_out):
        wall = time.monotonic() - self.t0
        rc = os.waitstatus_to_exitcode(status)
        self.popen.returncode = rc  # reaped here, not by Popen
        rss = ru.ru_maxrss
        if self.rss_file:
            lines = [x for x in read(self.rss_file).split() if x.isdigit()]
            rss = int(lines[-1]) if lines else None
            os.unlink(self.rss_file)
        self.result = Result(wall, ru.ru_utime, ru.ru_stime, rss, rc, timed_out)


def run(cmd, stdin=None, stdout=None, stderr=None, env=None, timeout=None):
    """Runs cmd to its end; file names for stdin/stdout/stderr are opened here."""
    files = []

    def opened(x, mode):
        if isinstance(x, str):
            f = open(x, mode)
            files.append(f)
            return f
        return x

    try:
        p = Proc(cmd, stdin=opened(stdin, 'rb'), stdout=opened(stdout, 'wb'),
                 stderr=opened(stderr, 'wb'), env=env)
        return p.wait(timeout)
    finally:
        for f in files:
            f.close()


def output(cmd, default=''):
    """The stripped standard output of a short command, or default when it cannot run."""
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return default


# ---- statistics -------------------------------------------------------------------------------

def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def summary(xs):
    """(median, min, max, count) of the values that exist."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return (median(xs), min(xs), max(xs), len(xs))


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


# ---- the machine ------------------------------------------------------------------------------

def read(path, default=''):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def cpu_model():
    for line in read('/proc/cpuinfo').splitlines():
        if line.startswith('model name'):
            return line.split(':', 1)[1].strip()
    return platform.processor() or 'unknown'


def mem_total_gib():
    for line in read('/proc/meminfo').splitlines():
        if line.startswith('MemTotal:'):
            return int(line.split()[1]) / (1024 * 1024)
    return None


def loadavg():
    return read('/proc/loadavg').split()[:3]


def machine():
    return {
        'nproc': os.cpu_count(),
        'cpu': cpu_model(),
        'kernel': platform.release(),
        'kernel_version': platform.version(),
        'memory_gib': round(mem_total_gib() or 0, 1),
        'date': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'),
        'os': output(['sh', '-c', '. /etc/os-release && echo "$PRETTY_NAME"'], 'unknown'),
        'loadavg_at_start': loadavg(),
    }


# ---- system settings --------------------------------------------------------------------------

def sysctl_path(name):
    return '/proc/sys/' + name.replace('.', '/')


def sysctl_get(name):
    v = read(sysctl_path(name)).strip()
    return v or None


def drop_caches():
    """Empties the page cache, so the next run reads every file from the disk."""
    os.sync()
    with open('/proc/sys/vm/drop_caches', 'w') as f:
        f.write('3\n')


def perf_event_fds(pid):
    """How many perf events the process has open: a profiler is sampling once it has one per CPU."""
    n = 0
    try:
        for fd in os.listdir('/proc/%d/fd' % pid):
            try:
                if os.readlink('/proc/%d/fd/%s' % (pid, fd)) == 'anon_inode:[perf_event]':
                    n += 1
            except OSError:
                pass
    except OSError:
        return -1
    return n


def bpf_prog_ids(pid):
    """The ids of the BPF programs the process holds, from /proc/PID/fdinfo."""
    ids = set()
    try:
        fds = os.listdir('/proc/%d/fdinfo' % pid)
    except OSError:
        return ids
    for fd in fds:
        for line in read('/proc/%d/fdinfo/%s' % (pid, fd)).splitlines():
            if line.startswith('prog_id:'):
                ids.add(int(line.split()[1]))
    return ids


def voluntary_switches(pid):
    """How often the process's threads have gone to sleep and been woken, summed; None if gone."""
    total = 0
    try:
        tasks = os.listdir('/proc/%d/task' % pid)
    except OSError:
        return None
    for t in tasks:
        for line in read('/proc/%d/task/%s/status' % (pid, t)).splitlines():
            if line.startswith('voluntary_ctxt_switches:'):
                total += int(line.split()[1])
    return total
