#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""layers.py - check that the modules' files only call down.

Usage: layers.py OBJDIR

OBJDIR holds the object files of a build of net/rds (build-modules.sh
prints it).  For every object file of each module, rds_zc, rds_zc_ib
and rds_zc_tcp, the symbols it defines and those it uses are read with nm, and
every use of another file's symbol of the same module, function or data,
is checked against its module's layers: a file may use its own layer and those below,
never one above.  A layer of several files is one component, whose
private header they share (conn_internal.h, mr.h, rdma_op.h).
Tracepoint symbols are left out: trace.c defines them for everyone.
Between the modules, each transport uses what rds_zc exports and rds_zc
cannot link to a transport at all.

Exits 1, naming each upward use, if there is one, or if a file of a
module is in no layer (a new file must be placed), or if a layer names a
file that was not built.  Documentation/networking/rds_zc.rst describes
the layers.
"""
import os
import subprocess
import sys

# Per module, bottom first.
CORE_LAYERS = [
    ('base', ['stats', 'sysctl', 'trace']),
    ('message', ['message']),
    ('cong', ['cong']),
    ('defer', ['defer']),
    ('recv_hold', ['recv_hold']),
    ('rdma', ['rdma', 'mr', 'rdma_op', 'op_barrier']),
    ('zcopy', ['zcopy']),
    ('connection', ['connection', 'conn_state', 'conn_send', 'conn_recv',
                    'conn_info']),
    ('transport', ['transport']),
    ('bind', ['bind']),
    ('recv', ['recv']),
    ('loop', ['loop']),
    ('send', ['send']),
    ('socket', ['socket', 'sockopt', 'info']),
    ('module', ['module']),
]

IB_LAYERS = [
    ('ib_stats', ['ib_stats']),
    ('ib_device', ['ib_device']),
    ('ib_mr_pool', ['ib_mr_pool', 'ib_reg_qp']),
    ('ib_mr_reg', ['ib_mr_reg']),
    ('ib_mr_release', ['ib_mr_release']),
    ('ib_credit', ['ib_credit']),
    ('ib_send', ['ib_send']),
    ('ib_recv', ['ib_recv']),
    ('ib_handshake', ['ib_handshake']),
    ('ib_conn', ['ib_conn']),
    ('ib_cm', ['ib_cm']),
    ('ib', ['ib']),
]

TCP_LAYERS = [
    ('tcp_net', ['tcp_net']),
    ('tcp_send', ['tcp_send']),
    ('tcp_recv', ['tcp_recv']),
    ('tcp_connect', ['tcp_connect']),
    ('tcp_listen', ['tcp_listen']),
    ('tcp', ['tcp']),
]

MODULES = [('rds_zc', CORE_LAYERS), ('rds_zc_ib', IB_LAYERS),
           ('rds_zc_tcp', TCP_LAYERS)]

TRACE_PREFIXES = ('__tracepoint_', '__traceiter_', '__SCT__tp_func_',
                  '__SCK__tp_func_', '__bpf_trace_tp_map_')


def symbols(path):
    """(defined, used) symbol sets of one object file."""
    out = subprocess.run(['nm', path], capture_output=True, text=True,
                         check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in 'TDBRG':
            defined.add(fields[2])
        elif len(fields) == 2 and fields[0] == 'U':
            used.add(fields[1])
    return defined, used


def module_objects(objdir, module):
    """The object files linked into MODULE.ko, from the build's .mod."""
    mod = os.path.join(objdir, module + '.mod')
    with open(mod, encoding='utf-8') as f:
        names = f.read().split()
    return [os.path.splitext(os.path.basename(n))[0] for n in names]


def check(objdir, module, layers):
    """Print each problem of one module; return how many, and the uses."""
    level = {}
    for i, (_, files) in enumerate(layers):
        for name in files:
            level[name] = i
    objs = module_objects(objdir, module)
    bad = 0
    for name in objs:
        if name not in level:
            print(f'{name}.o: in no layer of {module} in {sys.argv[0]}')
            bad += 1
    for name in level:
        if name not in objs:
            print(f'{name}: a layer names it, {module}.mod does not')
            bad += 1
    owner, uses = {}, {}
    for name in objs:
        defined, used = symbols(os.path.join(objdir, name + '.o'))
        for sym in defined:
            owner[sym] = name
        uses[name] = used
    edges = 0
    for name in objs:
        for sym in sorted(uses[name]):
            to = owner.get(sym)
            if to is None or to == name or sym.startswith(TRACE_PREFIXES):
                continue
            edges += 1
            if level.get(to, -1) > level.get(name, -1):
                print(f'{name}.o ({layers[level[name]][0]}) uses {sym} '
                      f'of {to}.o ({layers[level[to]][0]}), a layer above')
                bad += 1
    return len(objs), len(layers), edges, bad


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    files = nlayers = edges = bad = 0
    for module, layers in MODULES:
        f, n, e, b = check(sys.argv[1], module, layers)
        files, nlayers, edges, bad = files + f, nlayers + n, edges + e, bad + b
    print(f'{files} files in {nlayers} layers of {len(MODULES)} modules, '
          f'{edges} uses between files, {bad} problems')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
