# check_folded.py - reads a folded profile of the workload (pyhot_main.py) and counts, over the
# samples of its python3* processes, those that hold what they should; test_python asserts on the
# counts. The oracle of every line number is the "bt:" marker in the scripts themselves.
#   check_folded.py FOLDED mixed QUALIFIED  the chain of the main thread or one of the two threads,
#                                           in order, with the marked lines: "total N hits H
#                                           placed P chain C spin_a A spin_b B both X"
#   check_folded.py FOLDED rec QUALIFIED DEPTH  "total N full F marked M short_unmarked S"
# QUALIFIED is 1 when the interpreter names functions by their qualified name (3.11 on).
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FRAME = re.compile(r'^(.*) \((.*):(\d+)\)$')


def marker(file, name):
    with open(os.path.join(HERE, file)) as f:
        for n, line in enumerate(f, 1):
            if line.rstrip().endswith('# bt:' + name):
                return n
    raise SystemExit('no marker bt:%s in %s' % (name, file))


def python_frames(frames):
    """(index, name, base name of the file, line) of each Python frame."""
    out = []
    for i, f in enumerate(frames):
        m = FRAME.match(f)
        if m:
            out.append((i, m.group(1), os.path.basename(m.group(2)), int(m.group(3))))
        elif f == '[python]':
            out.append((i, f, '', 0))
    return out


def samples(path):
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip('\n').rpartition(' ')
            frames = stack.split(';')
            if frames[0].startswith('python3'):
                yield frames[1:], int(count)


def mixed(path, qualified):
    main, lib = 'pyhot_main.py', 'pyhot_lib.py'
    step = 'Worker.step' if qualified else 'step'
    chain = [('<module>', main, marker(main, 'mixed')), ('outer', main, marker(main, 'outer')),
             (step, lib, marker(lib, 'step')), ('inner', lib, marker(lib, 'inner'))]
    run = ('run_thread', main, marker(main, 'run_thread'))
    spins = {s: [run, (s, lib, marker(lib, s))] for s in ('spin_a', 'spin_b')}
    boot = 'Thread._bootstrap' if qualified else '_bootstrap'
    n = {k: 0 for k in ('total', 'hits', 'placed', 'chain', 'spin_a', 'spin_b', 'both')}
    for frames, count in samples(path):
        n['total'] += count
        py = python_frames(frames)
        got = [(name, file, line) for _, name, file, line in py]
        kind = None
        if got == chain:
            kind = 'chain'
        for s, tail in spins.items():
            # the thread's own frames under threading's, which start with its _bootstrap
            if got[-2:] == tail and got[0][0] == boot and all(f == 'threading.py' for _, f, _ in got[:-2]):
                kind = s
        if sum(1 for _, name, _, _ in py if name in ('inner', 'spin_a', 'spin_b')) > 1:
            n['both'] += count
        if not kind:
            continue
        n['hits'] += count
        n[kind] += count
        # in place: every eval-loop frame from the outermost Python frame on replaced, no cut
        inside = frames[py[0][0]:]
        if '_PyEval_EvalFrameDefault' not in inside and '[truncated]' not in frames:
            n['placed'] += count
    return n


def rec(path, depth):
    n = {k: 0 for k in ('total', 'full', 'marked', 'short_unmarked')}
    for frames, count in samples(path):
        n['total'] += count
        recs = sum(1 for f in frames if f.startswith('rec ('))
        marked = '[truncated]' in frames
        n['full'] += count if recs == depth else 0
        n['marked'] += count if marked else 0
        n['short_unmarked'] += count if 0 < recs < depth and not marked else 0
    return n


def main():
    path, mode, qualified = sys.argv[1], sys.argv[2], sys.argv[3] == '1'
    n = mixed(path, qualified) if mode == 'mixed' else rec(path, int(sys.argv[4]))
    print(' '.join('%s %d' % kv for kv in n.items()))


main()
