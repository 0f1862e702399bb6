# guestcost.py - the guest part of `make bench`: the syscall-heavy workloads of sysheavy.py measured
# again inside Debian's 6.1 kernel under qemu (tools/vmtest/run.sh with its syscost measurement),
# where buildtrace learns of mappings from a BPF program on the mmap path instead of this kernel's
# mmap records. Emulation slows everything alike; only ratios measured in the guest are compared.
import os
import subprocess

import benchlib as bl

FIELDS = ['workload', 'tool', 'rep', 'ok', 'error', 'work_wall', 'work_samples', 'hooked_samples', 'mapsrc', 'kernel']


def run(root, log):
    """Boots the guest once; returns its rows (walls in seconds), or one row saying why none came."""
    env = dict(os.environ, VMTEST_CHECKS='syscost', VMTEST_TIMEOUT=os.environ.get('BENCH_GUEST_TIMEOUT', '2400'))
    log('guest: booting Debian\'s 6.1 kernel under qemu for the syscall workloads (slow: emulated)')
    r = subprocess.run(['tools/vmtest/run.sh'], cwd=root, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    console = bl.read(os.path.join(root, 'build', 'vmtest', 'console.log'))
    kernel = ''
    rows = []
    for line in console.splitlines():
        f = line.split()
        if line.startswith('VMTEST BOOTED') and len(f) >= 3:
            kernel = f[2]
        if len(f) == 9 and f[0] == 'VMBENCH' and f[1] == 'syscost':
            rows.append({'part': 'guest', 'workload': f[2], 'tool': f[3], 'rep': int(f[4]), 'ok': True, 'error': '',
                         'work_wall': int(f[5]) / 100.0, 'work_samples': int(f[6]), 'hooked_samples': int(f[7]),
                         'mapsrc': f[8].replace('_', ' ') if f[8] != '-' else ''})
    for row in rows:
        row['kernel'] = kernel
    if not rows:
        tail = ' | '.join(r.stdout.strip().splitlines()[-3:])
        rows.append({'part': 'guest', 'ok': False, 'error': 'no measurement from the guest (exit %d): %s' % (
            r.returncode, tail), 'kernel': kernel})
        log('guest:   failed: ' + rows[0]['error'])
    return rows
