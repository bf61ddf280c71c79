#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Run rdma-core's own test suite (Debian's python3-pyverbs ships it in
/usr/share/doc/rdma-core/tests) against one RDMA device, one test module
per python process, each under a time limit, and judge the result:

  * every test is PASS, FAIL, ERROR or SKIP; a module that overruns its
    time limit fails the test it was in (ERROR) and every test it had not
    started yet (ERROR, "not run");
  * every skip reason is printed and classified: a skip for a feature the
    device claims in its attributes counts as a failure, and so does a
    reason this runner does not know (so a new one gets looked at);
  * the modules for another vendor's devices (mlx5's and EFA's on a
    device whose driver is neither) are loaded, in one process, and
    their tests listed as skipped without running them: each would only
    skip, after a set-up that took half of the whole run under TCG;
  * exit status 0 only with zero failures and zero errors.

Nothing of rdma-core lives here: the tests are copied from the installed
package into a scratch directory (gunzipping the .gz files Debian
compresses) and run from there.

usage: rdmacore_suite.py --dev DEV [--gid N] [--module-timeout S]
                         [--budget S] [--src DIR] [MODULE...]
       (internal) rdmacore_suite.py --child MODULE[,MODULE...] [--list-only WHY]
                         --tree DIR --results FILE
                         -- RDMA-CORE-ARGS...
"""
import argparse
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
import unittest

SRC = '/usr/share/doc/rdma-core/tests'

# ------------------------------------------------------------------ child


class _Result(unittest.TestResult):
    """Reports each test's outcome as one JSON line, flushed at once, so
    that a module killed half-way still leaves what it finished."""

    def __init__(self, out):
        super().__init__()
        self.out = out

    def _emit(self, **kw):
        self.out.write(json.dumps(kw) + '\n')
        self.out.flush()

    def startTest(self, test):
        super().startTest(test)
        self._emit(ev='start', id=test.id())

    def addSuccess(self, test):
        super().addSuccess(test)
        self._emit(ev='end', id=test.id(), status='pass')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._emit(ev='end', id=test.id(), status='fail',
                   detail=self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        # setUpClass / module fixtures report errors on a _ErrorHolder
        self._emit(ev='end', id=test.id(), status='error',
                   detail=self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._emit(ev='end', id=test.id(), status='skip', detail=reason)

    def addExpectedFailure(self, test, err):
        # Nothing may be excused as "expected": a failure is a failure.
        super().addExpectedFailure(test, err)
        self._emit(ev='end', id=test.id(), status='fail',
                   detail='expected failure (counted as a failure):\n' +
                   self._exc_info_to_string(err, test))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._emit(ev='end', id=test.id(), status='fail',
                   detail='unexpected success of a test marked as an '
                   'expected failure')

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            status = 'fail' if issubclass(err[0], test.failureException) \
                else 'error'
            self._emit(ev='end', id=subtest.id(), status=status,
                       detail=self._exc_info_to_string(err, test))


def _iter_tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _iter_tests(t)
        else:
            yield t


def child(modules, tree, results, rc_args, list_only=None):
    """Load rdma-core test modules (a comma-separated list) and run them,
    or with LIST_ONLY report each test skipped for that reason."""
    # rdma-core's files import both "tests.X" and, for the argument parser,
    # the bare "args_parser": the tree and its parent go on sys.path.  The
    # package "tests" is set up empty, so that importing one module does
    # not import all of them (tests/__init__.py would, for run_tests.py).
    sys.path[:0] = [tree, os.path.dirname(tree)]
    pkg = types.ModuleType('tests')
    pkg.__path__ = [tree]
    sys.modules['tests'] = pkg
    from args_parser import parser  # rdma-core's
    sys.argv = ['run_tests.py'] + rc_args
    parser.parse_args()
    rc = 0
    with open(results, 'a', buffering=1) as out:
        res = _Result(out)
        suites = []
        for module in modules.split(','):
            try:
                # The helpers first, as run_tests.py's alphabetical import
                # of every module does (test_addr's imports reach
                # tests.utils first): imported from a vendor module first,
                # tests.mlx5_base (or efa_base) and tests.utils import each
                # other circularly and fail.
                __import__('tests.utils')
                mod = __import__('tests.' + module, fromlist=['*'])
                suites.append(unittest.defaultTestLoader.loadTestsFromModule(mod))
            except Exception:
                import traceback
                res._emit(ev='end', id='tests.' + module, status='error',
                          detail='cannot load the module:\n' +
                          traceback.format_exc())
                rc = 1
        for suite in suites:
            for t in _iter_tests(suite):
                res._emit(ev='list', id=t.id())
                if list_only:
                    res._emit(ev='end', id=t.id(), status='skip', detail=list_only)
        if not list_only:
            for suite in suites:
                suite.run(res)
    return rc


# ---------------------------------------------------------- classification

# Skip reasons, each with what it means.  A "claims" entry names the
# device attribute that would advertise the feature: the skip is a failure
# if the device advertises it.  An entry without one is a skip no device
# attribute can contradict (an environment limit, or a verb no attribute
# advertises, such as parent domains); those are listed, not failed.
# Reasons not matched here fail: a new reason needs a decision.


def _flag(name):
    def check(a):
        import pyverbs.enums as e
        on = bool(a['attr'].device_cap_flags & getattr(e, name))
        return on, f'device_cap_flags {"has" if on else "lacks"} {name}'
    return check


def _nonzero(*path):
    def check(a):
        v = a[path[0]]
        for p in path[1:]:
            v = getattr(v, p)
        return v != 0, f'{".".join(path[1:])} = {v}'
    return check


def _atomic(a):
    import pyverbs.enums as e
    v = a['attr'].atomic_caps
    return v != e.IBV_ATOMIC_NONE, f'atomic_caps = {v}'


def _odp(a):
    import pyverbs.enums as e
    v = a['attr_ex'].odp_caps.general_caps
    return bool(v & e.IBV_ODP_SUPPORT), f'odp_caps.general_caps = {v:#x}'


def _raw(a):
    n = a['attr'].max_raw_ethy_qp
    c = a['attr_ex'].raw_packet_caps
    return n != 0 or c != 0, f'max_raw_ethy_qp = {n}, raw_packet_caps = {c:#x}'


SKIP_RULES = [
    # features device attributes advertise
    (r'XRCD|XRC', 'XRC', _flag('IBV_DEVICE_XRC')),
    (r'QP(Ex)? type 8 |Raw Packet QP|RAW (Packet )?QP', 'raw packet QPs', _raw),
    (r'\bODP\b', 'on-demand paging', _odp),
    (r'Device memory|DMMR|\bMEMIC\b', 'device memory',
     _nonzero('attr_ex', 'max_dm_size')),
    (r'Atomic operations are not supported', 'atomics', _atomic),
    (r'Create MW|[Mm]emory window|MW access', 'memory windows',
     _nonzero('attr', 'max_mw')),
    (r'^Extended CQ is not supported$', 'tag matching (TM_INFO CQs)',
     _nonzero('attr_ex', 'tm_caps', 'max_num_tags')),
    (r'Multicast is not supported', 'multicast',
     _nonzero('attr', 'max_mcast_grp')),
    (r'Create SRQ is not supported', 'SRQs', _nonzero('attr', 'max_srq')),
    (r'Create AH is not supported', 'address handles',
     _nonzero('attr', 'max_ah')),
    # verbs no device attribute advertises: the device refusing them
    # (EOPNOTSUPP) is the only statement it makes
    (r'Parent Domain', 'parent domains (no attribute)', None),
    (r'Importing a device', 'ibv_import_device (no attribute)', None),
    (r'Create UC QP|QP(Ex)? type 2 ', 'UC QPs (no attribute)', None),
    (r'QP(Ex)? type 4 |Create UD QP', 'UD QPs (no attribute)', None),
    (r'Rereg MR is not supported', 'ibv_rereg_mr (no attribute)', None),
    (r'Reg dma-buf MR is not supported by the RDMA driver',
     'dma-buf MRs (no attribute)', None),
    # the test environment
    (r"doesn't have net interface",
     'environment: the netdev has no parent device, so '
     '/sys/class/infiniband/DEV/device/net/ does not exist (any device on '
     'a veth, rdma_rxe too); rdma-core only looks there', None),
    (r'huge pages', 'environment: no 2 MiB huge pages', None),
    (r'dmabuf|/dev/dri|renderD', 'environment: no GPU (DRM) for dma-buf', None),
    (r'[Cc]uda|GPU', 'environment: no CUDA', None),
    (r'PCI device must be passed', 'environment: no --pci-dev (VFIO)', None),
]

# Modules for one vendor's devices: their skips say "not that device".
VENDOR_MODULE = re.compile(r'^test_(mlx5|efa)')


def classify(module, reason, attrs, driver):
    """-> (ok, what, evidence)"""
    m = VENDOR_MODULE.match(module)
    if m:
        vendor = m.group(1)
        if vendor in driver:
            return False, f'{vendor}-only test on a {driver} device', ''
        return True, f'{vendor}-only test', f'device driver is {driver}'
    for pat, what, claims in SKIP_RULES:
        if re.search(pat, reason):
            if claims is None:
                return True, what, ''
            if attrs is None:
                return False, what, 'device attributes unavailable'
            on, evidence = claims(attrs)
            return not on, what, evidence
    return False, 'unclassified skip reason', ''


def device_facts(dev):
    """query_device(_ex) of DEV, and the name of its kernel driver."""
    attrs = None
    try:
        import pyverbs.device as d
        with d.Context(name=dev) as ctx:
            attrs = {'attr': ctx.query_device(), 'attr_ex': ctx.query_device_ex()}
    except Exception as ex:
        print(f'cannot query {dev}: {ex}', file=sys.stderr)
    # mlx5 and EFA devices are PCI functions bound to their driver; a
    # software device has no parent device at all.
    link = f'/sys/class/infiniband/{dev}/device/driver'
    driver = os.path.basename(os.path.realpath(link)) if os.path.exists(link) \
        else 'none (no parent device)'
    return attrs, driver


# ------------------------------------------------------------------ parent


def copy_tree(src, dst):
    """rdma-core's tests, with Debian's .py.gz files uncompressed."""
    os.makedirs(dst)
    for name in os.listdir(src):
        s = os.path.join(src, name)
        if not os.path.isfile(s):
            continue
        if name.endswith('.gz'):
            with gzip.open(s, 'rb') as i, open(os.path.join(dst, name[:-3]), 'wb') as o:
                shutil.copyfileobj(i, o)
        else:
            shutil.copy(s, dst)


def short(test_id):
    return test_id[len('tests.'):] if test_id.startswith('tests.') else test_id


def run_module(module, tree, rc_args, limit, logdir, list_only=None):
    """MODULE: one module, or several joined by commas (one process)."""
    name = module.split(',')[0] + ('-etc' if ',' in module else '')
    results = os.path.join(logdir, name + '.jsonl')
    log = os.path.join(logdir, name + '.log')
    cmd = [sys.executable, os.path.abspath(__file__), '--child', module,
           '--tree', tree, '--results', results]
    if list_only:
        cmd += ['--list-only', list_only]
    cmd += ['--'] + rc_args
    if os.path.exists(results):
        os.unlink(results)
    t0 = time.monotonic()
    timed_out = False
    with open(log, 'wb') as lf:
        # Own session: on a timeout the whole group goes, including the
        # processes rdma-core's RDMA-CM tests fork.
        p = subprocess.Popen(cmd, stdout=lf, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True,
                             cwd=tree)
        try:
            rc = p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
            rc = p.wait()
        try:
            os.killpg(p.pid, signal.SIGKILL)  # leftovers of a finished one
        except ProcessLookupError:
            pass
    elapsed = time.monotonic() - t0
    listed, ended, running = [], {}, None
    if os.path.exists(results):
        with open(results) as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue  # a line cut short by the kill
                if ev['ev'] == 'list':
                    listed.append(ev['id'])
                elif ev['ev'] == 'start':
                    running = ev['id']
                elif ev['ev'] == 'end':
                    ended[ev['id']] = (ev['status'], ev.get('detail', ''))
                    if ev['id'] == running:
                        running = None
    outcome = []  # (id, status, detail)
    for tid in listed:
        if tid in ended:
            outcome.append((tid,) + ended.pop(tid))
        elif timed_out and tid == running:
            outcome.append((tid, 'error', f'timed out: still running when the '
                            f'module\'s {limit:.0f} s limit expired'))
        elif timed_out:
            outcome.append((tid, 'error', f'not run: the module\'s {limit:.0f} s '
                            'limit expired first'))
        else:
            outcome.append((tid, 'error', f'not run: the module\'s process '
                            f'ended (status {rc})'))
    # fixture errors (setUpClass, module load) are not in the list
    for tid, (st, det) in ended.items():
        outcome.append((tid, st, det))
    if not outcome:
        outcome.append(('tests.' + module, 'error',
                        f'no result (process status {rc}{", timed out" if timed_out else ""})'))
    return outcome, elapsed, timed_out, log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--dev')
    ap.add_argument('--gid', type=int)
    ap.add_argument('--port', type=int, default=1)
    ap.add_argument('--module-timeout', type=float, default=120)
    ap.add_argument('--budget', type=float, default=0,
                    help='seconds for the whole run; modules that would '
                    'start later fail as not run (0: no limit)')
    ap.add_argument('--src', default=SRC)
    ap.add_argument('--keep', metavar='DIR', help='logs and results here')
    ap.add_argument('--child')
    ap.add_argument('--tree')
    ap.add_argument('--results')
    ap.add_argument('--list-only')
    ap.add_argument('modules', nargs='*')
    args, rest = ap.parse_known_args()
    rest = [a for a in rest if a != '--']
    if args.child:
        return child(args.child, args.tree, args.results, rest + args.modules,
                     args.list_only)

    if not args.dev:
        ap.error('--dev is required')
    if not os.path.isdir(args.src):
        print(f'{args.src}: not found (python3-pyverbs installs it)')
        return 2
    work = args.keep or tempfile.mkdtemp(prefix='rdmacore-')
    tree = os.path.join(work, 'tests')
    if os.path.exists(tree):
        shutil.rmtree(tree)
    copy_tree(args.src, tree)
    logdir = os.path.join(work, 'logs')
    os.makedirs(logdir, exist_ok=True)

    modules = args.modules or sorted(
        n[:-3] for n in os.listdir(tree) if n.startswith('test_') and n.endswith('.py'))
    rc_args = ['--dev', args.dev, '--port', str(args.port)]
    if args.gid is not None:
        rc_args += ['--gid', str(args.gid)]
    attrs, driver = device_facts(args.dev)

    counts = {'pass': 0, 'fail': 0, 'error': 0, 'skip': 0}
    skips = {}  # reason -> [test ids]
    problems = []  # (id, status, detail)
    t_start = time.monotonic()
    # Another vendor's modules (e.g. test_mlx5_* on softrnic): listed in
    # one process, not run (see the top).
    vendor_of = {m: VENDOR_MODULE.match(m).group(1) for m in modules if VENDOR_MODULE.match(m)}
    foreign = [m for m, v in vendor_of.items() if v not in driver]
    groups = [m for m in modules if m not in foreign]
    foreign_group = ','.join(foreign)
    if foreign:
        groups.insert(modules.index(foreign[0]), foreign_group)
    why = (f'not run: for {"/".join(sorted({vendor_of[m] for m in foreign}))} '
           f'devices only; the driver is {driver}')
    for mod in groups:
        list_only = why if foreign and mod == foreign_group else None
        if args.budget and time.monotonic() - t_start > args.budget:
            outcome, el, to, log = [('tests.' + mod, 'error',
                                     f'not run: the {args.budget:.0f} s budget '
                                     'of the whole run was spent')], 0, False, None
        else:
            outcome, el, to, log = run_module(mod, tree, rc_args, args.module_timeout,
                                              logdir, list_only)
        n = {k: 0 for k in counts}
        for tid, st, det in outcome:
            n[st] += 1
            print(f'{st.upper()}: {short(tid)}' +
                  (f' ({det})' if st == 'skip' else ''), flush=True)
            if st == 'skip':
                skips.setdefault((tid.split('.')[1], det), []).append(tid)
            elif st != 'pass':
                problems.append((tid, st, det))
        for k in counts:
            counts[k] += n[k]
        print(f'== {mod.replace(",", " ")}: {n["pass"]} pass, {n["fail"]} fail, {n["error"]} '
              f'error, {n["skip"]} skip in {el:.1f} s' +
              (' (TIMED OUT)' if to else ''), flush=True)
        if (n['fail'] or n['error']) and log:
            with open(log, errors='replace') as f:
                tail = f.read()[-3000:]
            if tail.strip():
                print('   | ' + '\n   | '.join(tail.rstrip().split('\n')))

    bad_skips = 0
    print('\n== failures and errors')
    for tid, st, det in problems:
        print(f'{st.upper()}: {short(tid)}')
        print('    ' + '\n    '.join(det.rstrip().split('\n')))
    print(f'\n== skip reasons on {args.dev} (driver {driver})')
    by_reason = {}
    for (mod, reason), ids in skips.items():
        ok, what, evidence = classify(mod, reason, attrs, driver)
        key = (ok, what, evidence, reason if not VENDOR_MODULE.match(mod) else None)
        by_reason.setdefault(key, []).extend(ids)
    for (ok, what, evidence, reason), ids in sorted(by_reason.items(), key=lambda x: (x[0][0], x[0][1])):
        verdict = 'ok' if ok else 'FAIL'
        if not ok:
            bad_skips += len(ids)
        shown = f'"{reason}"' if reason is not None else 'skipped'
        print(f'{verdict}: {len(ids):3d} x {shown}: {what}' +
              (f' [{evidence}]' if evidence else ''))
        if reason is None:
            mods = sorted({i.split('.')[1] for i in ids})
            print('        modules: ' + ' '.join(mods))
        else:
            for tid in ids:
                print('        ' + short(tid))
    total = sum(counts.values())
    print(f'\nrdma-core tests on {args.dev}: {total} tests, {counts["pass"]} pass, '
          f'{counts["fail"]} fail, {counts["error"]} error, {counts["skip"]} skip '
          f'({bad_skips} of the skips count as failures) in '
          f'{time.monotonic() - t_start:.0f} s')
    return 0 if counts['fail'] == 0 and counts['error'] == 0 and bad_skips == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
