#!/usr/bin/env python3
"""check-docs.py - holds what users read about buildtrace's options to the option tables they are
parsed from. tools/gendoc.c writes the tables as JSON (build/docs.json); this checks against it:

- each command's --help (run from the binary): the same options, values and defaults;
- the man pages (build/man): the same options, and the agent's settings in buildtrace-agent.conf(5);
- the README: each table after a line <!-- options: COMMAND --> lists the same options with the
  same values, mentions each default, and the -f row every output format; every option of a
  `buildtrace ...` example exists (in the README, the man pages' examples and the systemd unit);
- tools/agent.conf.example: every setting, and no other key; what it sets is the default;
- documented limits (LIMITS below): wherever a text states one, it states the same value, and
  --help and the README state it.

usage: tools/check-docs.py [--root DIR] [--json FILE] [--bin FILE] [--man DIR] [--print-limits]
exit 0 when everything agrees, 1 with one line per difference on stderr, 2 on bad usage.
--print-limits prints "NAME VALUE" for each limit (tests compare them with the code's constants).
"""
import json
import os
import re
import shlex
import subprocess
import sys

# The README must have a table of these commands' options.
README_TABLES = ('record', 'trace', 'agent')

# Limits the documents state: (name, pattern with the value in its groups, texts that must state
# it). Texts: help (every command's --help), readme, man (the man pages), example (the config).
LIMITS = [
    ('bpf-walk-frames', r'(\d+) (?:frames )?less the kernel', ('help', 'readme', 'man')),
    ('stack-copy-default', r'(?:the top (\d+) KiB|\b(\d+) KiB of stack copied)', ('help', 'readme', 'man')),
    ('stack-copy-max', r'multiple of 8 up to (\d+)', ('help', 'readme', 'man')),
    ('ringbuf-auto', r'\b(\d+) ?Ki?B? to (\d+) ?Mi?B?\b', ('help', 'readme')),
    ('ringbuf-range', r'\b(\d+)K to (\d+)G\b', ('help', 'readme')),
    ('report-input', r'at most (\d+) MiB of input', ('help', 'readme')),
    ('report-pprof', r'at most (\d+) MiB once decompressed', ('help', 'readme')),
    ('agent-labels', r'label of the pushed series \(repeatable, up to (\d+)\)', ('help', 'readme', 'man')),
    ('agent-headers', r'repeatable, up to (\d+); never', ('help', 'readme', 'man')),
    ('agent-interval', r'every this long, ([\d.]+) to (\d+)', ('help', 'readme', 'man')),
    ('agent-push-drain', r'goes on being sent, (\d+) to (\d+)', ('help', 'readme', 'man')),
]

TERM = re.compile(r'^(?:-(\w)(?:, |$| )|    )?(?:--([\w-]+))?(?: (.+))?$')


class Doc:
    def __init__(self, data):
        self.data = data
        self.commands = {c['name']: c for c in data['commands']}
        self.formats = [f.strip() for f in data['formats'].split(',')]
        self.per_sample = set(data['per_sample_formats'])
        self.settings = data['settings']

    def formats_of(self, values):
        """The formats an option whose completion is values must name in its help: all of them for
        @format, those of totals for @format-totals; none for other values."""
        if values == '@format':
            return self.formats
        if values == '@format-totals':
            return [f for f in self.formats if f not in self.per_sample]
        return []

    def options(self, cmd):
        return [o for o in self.commands[cmd]['options'] if o['kind'] == 'option']

    def spelling(self, cmd):
        """{'-p': opt, '--pid': opt} for every option of cmd."""
        out = {}
        for o in self.options(cmd):
            if o['short']:
                out['-' + o['short']] = o
            if o['long']:
                out['--' + o['long']] = o
        return out


def term_of(o):
    """(short, long, arg) of a JSON option."""
    return (o['short'], o['long'], o['arg'])


def parse_term(text):
    """(short, long, arg) of a term as --help or a man page writes it, or None."""
    m = TERM.match(text)
    if not m or not (m.group(1) or m.group(2)):
        return None
    return (m.group(1), m.group(2), m.group(3))


def compare_terms(where, want, got, out):
    """want, got: lists of (short, long, arg)."""
    def key(t):
        return t[1] or t[0]
    w = {key(t): t for t in want}
    g = {key(t): t for t in got}
    for k in sorted(set(w) - set(g)):
        out.append('%s: %s is missing' % (where, show(w[k])))
    for k in sorted(set(g) - set(w)):
        out.append('%s: %s is not an option of the table' % (where, show(g[k])))
    for k in sorted(set(w) & set(g)):
        if w[k] != g[k]:
            out.append('%s: %s, the table says %s' % (where, show(g[k]), show(w[k])))


def show(t):
    s = ', '.join(x for x in ('-' + t[0] if t[0] else None, '--' + t[1] if t[1] else None) if x)
    return s + (' ' + t[2] if t[2] else '')


# ---- --help ------------------------------------------------------------------------------------

def help_text(binary, cmd):
    argv = [binary, '--help'] if cmd == 'record' else [binary, cmd, '--help']
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    return r.returncode, r.stdout.decode('utf-8', 'replace')


def help_terms(text):
    """(terms, {term: its help text}) of the option lines of a --help."""
    terms, texts, cur = [], {}, None
    for line in text.split('\n'):
        if line.startswith('  ') and not line.startswith('   ') or line.startswith('      --'):
            body = line[2:]
            if body.startswith('    --'):
                body = body[4:]
            head = re.split(r'  +', body, maxsplit=1)
            t = parse_term(head[0]) if head[0].startswith('-') and not head[0].startswith('-- ') else None
            if t:
                terms.append(t)
                cur = t
                texts[t] = head[1] if len(head) > 1 else ''
                continue
            cur = None
        elif cur and line.startswith(' ' * 27):
            texts[cur] += ' ' + line.strip()
        else:
            cur = None
    return terms, texts


def check_help(doc, binary, out):
    texts = []
    for cmd in doc.commands:
        rc, text = help_text(binary, cmd)
        texts.append(text)
        where = '%s%s --help' % (os.path.basename(binary), '' if cmd == 'record' else ' ' + cmd)
        if rc != 0:
            out.append('%s: exit status %d' % (where, rc))
            continue
        terms, helps = help_terms(text)
        compare_terms(where, [term_of(o) for o in doc.options(cmd)], terms, out)
        for o in doc.options(cmd):
            h = helps.get(term_of(o), '')
            if o['default'] and '(default %s)' % o['default'] not in h:
                out.append('%s: %s does not say (default %s)' % (where, show(term_of(o)), o['default']))
            for f in doc.formats_of(o['values']):
                if not re.search(r'(?<![\w-])%s(?![\w-])' % re.escape(f), h):
                    out.append('%s: %s does not name the format %s' % (where, show(term_of(o)), f))
    return '\n'.join(texts)


# ---- man pages ---------------------------------------------------------------------------------

def roff_plain(s):
    s = re.sub(r'\\f[BIRP]', '', s)
    s = s.replace('\\-', '-').replace('\\e', '\\').replace('\\&', '').replace("\\(aq", "'")
    return s


def man_terms(path):
    """The .TP terms of a page, as plain text."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    return [roff_plain(lines[i + 1]) for i, l in enumerate(lines[:-1]) if l == '.TP']


def man_page(cmd):
    return 'buildtrace.1' if cmd == 'record' else 'buildtrace-%s.1' % cmd


def check_man(doc, mandir, out):
    texts = []
    for cmd in doc.commands:
        path = os.path.join(mandir, man_page(cmd))
        if not os.path.exists(path):
            out.append('%s: missing' % path)
            continue
        terms = [parse_term(t) for t in man_terms(path) if t.startswith('-') and not t.startswith('-- ')]
        compare_terms(path, [term_of(o) for o in doc.options(cmd)], [t for t in terms if t], out)
        with open(path, encoding='utf-8') as f:
            texts.append(f.read())
    path = os.path.join(mandir, 'buildtrace-agent.conf.5')
    if not os.path.exists(path):
        out.append('%s: missing' % path)
    else:
        got = []
        for t in man_terms(path):
            m = re.match(r'^([\w-]+) = (.+)$', t)
            if m:
                got.append((None, m.group(1), m.group(2)))
        compare_terms(path, [(None, s['long'], s['arg']) for s in doc.settings], got, out)
        with open(path, encoding='utf-8') as f:
            texts.append(f.read())
    return roff_plain('\n'.join(texts)).replace('\n', ' ')


# ---- README ------------------------------------------------------------------------------------

def readme_tables(text):
    """{command: [(first cell, whole row)]} of the tables after <!-- options: COMMAND -->."""
    tables, cmd, started = {}, None, False
    for line in text.split('\n'):
        m = re.match(r'^<!-- options: ([\w-]+) -->\s*$', line)
        if m:
            cmd, started = m.group(1), False
            tables[cmd] = []
            continue
        if cmd is None:
            continue
        if line.startswith('|'):
            started = True
            cells = re.split(r'(?<!\\)\|', line)
            if len(cells) > 2 and not re.match(r'^[\s:-]+$', cells[1]):
                tables[cmd].append((cells[1], line))
        elif started or line.strip():
            cmd = None
    return tables


def readme_terms(cell):
    """The options a README table's first cell names, as (short, long, arg) once paired: "`-p`,
    `--pid PID`" is one option."""
    spans = [s.replace('\\|', '|') for s in re.findall(r'`([^`]+)`', cell)]
    out = []
    for s in spans:
        if not s.startswith('-') or s.startswith('-- '):
            continue
        m = re.match(r'^(-\w|--[\w-]+)(?: (.+))?$', s)
        if not m:
            out.append((None, s, None))
            continue
        name, arg = m.group(1), m.group(2)
        if name.startswith('--'):
            out.append((None, name[2:], arg))
        else:
            out.append((name[1], None, arg))
    return out


def pair(doc, cmd, terms):
    """README terms paired into the table's options: a short form and its long form are one."""
    spell = doc.spelling(cmd)
    got = {}
    for t in terms:
        o = spell.get('-' + t[0] if t[0] else '--' + t[1])
        if not o:
            got[t] = t
            continue
        k = term_of(o)
        prev = got.get(k, (o['short'] if t[0] else None, o['long'] if t[1] else None, None))
        got[k] = (prev[0] or (t[0] if t[0] else None), prev[1] or t[1], prev[2] or t[2])
    return list(got.values())


def check_readme_tables(doc, text, out):
    tables = readme_tables(text)
    for cmd in README_TABLES:
        if cmd not in tables:
            out.append('README.md: no table of the options of %s (a line <!-- options: %s --> before it)'
                       % (cmd, cmd))
    for cmd, rows in sorted(tables.items()):
        where = 'README.md: table of %s' % cmd
        if cmd not in doc.commands:
            out.append('%s: no such command' % where)
            continue
        terms, row_of = [], {}
        for cell, row in rows:
            for t in readme_terms(cell):
                terms.append(t)
                row_of[t[1] or t[0]] = row
        compare_terms(where, [term_of(o) for o in doc.options(cmd)], pair(doc, cmd, terms), out)
        for o in doc.options(cmd):
            row = row_of.get(o['long']) or row_of.get(o['short'])
            if not row:
                continue
            if o['default'] and not re.search(r'(?<![\w.~/-])%s(?![\w-])' % re.escape(o['default']), row):
                out.append('%s: the row of %s does not say its default, %s' % (where, show(term_of(o)),
                                                                               o['default']))
            for f in doc.formats_of(o['values']):
                if not re.search(r'(?<![\w-])%s(?![\w-])' % re.escape(f), row):
                    out.append('%s: the row of %s does not name the format %s' % (where, show(term_of(o)), f))


def example_lines(text, source):
    """Command lines running buildtrace: code lines, `spans` and roff example lines."""
    for line in text.split('\n'):
        if source == 'roff':
            line = roff_plain(line)
        for m in re.finditer(r'(?:^\s*|`)(?:sudo )?(buildtrace(?: [^`#|]*)?)', line):
            yield m.group(1)


def check_examples(doc, text, where, source, out):
    for cmdline in example_lines(text, source):
        try:
            words = shlex.split(cmdline)
        except ValueError:
            continue
        cmd, i = 'record', 1
        if len(words) > 1 and words[1] in doc.commands:
            cmd, i = words[1], 2
        spell = doc.spelling(cmd)
        while i < len(words):
            w = words[i]
            i += 1
            if w == '--':
                break
            if not w.startswith('-') or w == '-':
                if cmd == 'record' and re.match(r'^[./\w]', w):
                    break  # the command's own words follow
                continue
            name = w.split('=', 1)[0]
            if name not in spell:
                if re.match(r'^(--?[\w-]+)$', name):
                    out.append('%s: `%s`: %s is not an option of %s' % (where, cmdline.strip(), name,
                               'buildtrace' if cmd == 'record' else 'buildtrace ' + cmd))
                continue
            if spell[name]['arg'] and '=' not in w:
                i += 1


# ---- the example config ------------------------------------------------------------------------

def check_example_config(doc, path, out):
    keys = {s['long']: s for s in doc.settings}
    aliases = {s['alias']: s['long'] for s in doc.settings if s['alias']}
    seen = set()
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    for n, line in enumerate(lines, 1):
        m = re.match(r'^(#?)([a-z][a-z0-9_-]*)\s*=\s*(.*?)\s*$', line)
        if not m:
            continue
        commented, key, value = m.groups()
        where = '%s:%d' % (path, n)
        if key in aliases:
            out.append('%s: %s is written %s' % (where, key, aliases[key]))
            continue
        if key not in keys:
            out.append('%s: %s is not a setting' % (where, key))
            continue
        seen.add(key)
        d = keys[key]['default']
        if not commented and d is not None and value != d:
            out.append('%s: %s = %s, but its default is %s' % (where, key, value, d))
    for k in keys:
        if k not in seen:
            out.append('%s: the setting %s is missing' % (path, k))


# ---- limits ------------------------------------------------------------------------------------

def check_limits(texts, out):
    found = {}
    for name, pattern, required in LIMITS:
        values = {}
        for where, text in texts.items():
            for m in re.finditer(pattern, text):
                values.setdefault(tuple(g for g in m.groups() if g is not None), []).append(where)
        for where in required:
            if not any(where in ws for ws in values.values()):
                out.append('limit %s: %s states none (/%s/)' % (name, where, pattern))
        if len(values) > 1:
            said = '; '.join('%s in %s' % (' '.join(v), ', '.join(sorted(set(ws))))
                             for v, ws in sorted(values.items()))
            out.append('limit %s differs: %s' % (name, said))
        if len(values) == 1:
            found[name] = ' '.join(next(iter(values)))
    return found


def main(argv):
    args = {'--root': '.', '--json': 'build/docs.json', '--bin': './buildtrace', '--man': 'build/man'}
    print_limits = False
    i = 1
    while i < len(argv):
        if argv[i] == '--print-limits':
            print_limits = True
            i += 1
        elif argv[i] in args and i + 1 < len(argv):
            args[argv[i]] = argv[i + 1]
            i += 2
        else:
            sys.stderr.write(__doc__.split('\n\n')[-2] + '\n')
            return 2
    root = args['--root']
    with open(args['--json'], encoding='utf-8') as f:
        doc = Doc(json.load(f))
    with open(os.path.join(root, 'README.md'), encoding='utf-8') as f:
        readme = f.read()
    out = []
    texts = {'help': check_help(doc, args['--bin'], out)}
    texts['man'] = check_man(doc, args['--man'], out)
    check_readme_tables(doc, readme, out)
    texts['readme'] = readme
    check_examples(doc, readme, 'README.md', 'markdown', out)
    mandir = os.path.join(root, 'docs', 'man')
    for name in sorted(os.listdir(mandir)) if os.path.isdir(mandir) else []:
        with open(os.path.join(mandir, name), encoding='utf-8') as f:
            check_examples(doc, f.read(), 'docs/man/' + name, 'roff', out)
    unit = os.path.join(root, 'tools', 'buildtrace-agent.service')
    with open(unit, encoding='utf-8') as f:
        check_examples(doc, '\n'.join(re.sub(r'^ExecStart=\S*/', '', l) for l in f.read().split('\n')
                                      if l.startswith('ExecStart=')), 'tools/buildtrace-agent.service', 'text', out)
    example = os.path.join(root, 'tools', 'agent.conf.example')
    check_example_config(doc, example, out)
    with open(example, encoding='utf-8') as f:
        texts['example'] = f.read()
    texts = {k: re.sub(r'\s+', ' ', v) for k, v in texts.items()}
    found = check_limits(texts, out)
    for line in out:
        sys.stderr.write('check-docs: %s\n' % line)
    if print_limits:
        for name, value in sorted(found.items()):
            print(name, value)
    return 1 if out else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
