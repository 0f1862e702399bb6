#!/usr/bin/env python3
"""Test helper: the Go runtime's own traceback as the oracle of `buildtrace symbolize --elf` on a
Go program, stripped or not, of any Go version.

  gotraceback.py BUILDTRACE BIN [ARGS...]

runs BIN ARGS with GOTRACEBACK=system and its standard input held open, sends it SIGQUIT after a
second and a half, reads the goroutines' frames it prints (each physical frame's pc, and the
functions inlined there, innermost first, with their files and lines), and symbolizes the same pcs
(a return address at its call, as the runtime does). Prints one line per frame that differs, then
"FRAMES agree DIFFER differ INLINED inlined". Exit status 0 when it could compare at all.
"""
import re
import signal
import subprocess
import sys
import time


def traceback(cmd):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env={"GOTRACEBACK": "system", "PATH": "/usr/bin:/bin"})
    time.sleep(1.5)
    p.send_signal(signal.SIGQUIT)
    try:
        _, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    return err.decode(errors="replace").splitlines()


def frames_of(lines):
    """[(pc to look up, [(function, file, line) innermost first])]"""
    trap = None
    out, pending = [], []
    i = 0
    while i < len(lines):
        l = lines[i]
        m = re.match(r"^PC=(0x[0-9a-f]+)", l)
        if m:
            trap = int(m.group(1), 16)
        if l.startswith("goroutine "):
            pending = []
        m = re.match(r"^(\S.*)\((.*)\)$", l)
        if m and i + 1 < len(lines) and lines[i + 1].startswith("\t"):
            loc = re.match(r"^\t(\S+):(\d+)(?: \+0x[0-9a-f]+)?(?: fp=\S+ sp=\S+ pc=(0x[0-9a-f]+))?",
                           lines[i + 1])
            if loc:
                pending.append((m.group(1), loc.group(1), int(loc.group(2))))
                if loc.group(3):
                    pc = int(loc.group(3), 16)
                    out.append((pc if pc == trap else pc - 1, pending))
                    pending = []
            i += 2
            continue
        i += 1
    return out


def norm(name):
    # generic type arguments as Go prints them
    return re.sub(r"\[[^\]]*\]", "[...]", name)


def main():
    buildtrace, cmd = sys.argv[1], sys.argv[2:]
    frames = frames_of(traceback(cmd))
    if not frames:
        sys.exit("no frames in %s's traceback" % cmd[0])
    pcs = sorted({pc for pc, _ in frames})
    out = subprocess.run([buildtrace, "symbolize", "--elf", cmd[0]] + ["%x" % pc for pc in pcs],
                         capture_output=True, text=True).stdout.splitlines()
    got = {}
    for o in out:
        addr, name, fileline = (o.split("\t") + ["", ""])[:3]
        name = re.sub(r"\+0x[0-9a-f]+$", "", name)
        f, _, ln = fileline.rpartition(":")
        got.setdefault(int(addr, 16), []).append((norm(name), f, int(ln) if ln.isdigit() else 0))
    agree = differ = inlined = 0
    for pc, want in frames:
        w = [(norm(n), f, ln) for n, f, ln in want]
        inlined += len(w) - 1
        if got.get(pc) == w:
            agree += 1
        else:
            differ += 1
            print("pc %x: the runtime %s, buildtrace %s" % (pc, w, got.get(pc)))
    print("%d agree %d differ %d inlined" % (agree, differ, inlined))


if __name__ == "__main__":
    main()
