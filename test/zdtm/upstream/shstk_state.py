# SPDX-License-Identifier: GPL-2.0
"""The shadow-stack state of a ZDTM test, compared before the dump and after
the restore: what zdtm.py's own checks (fds, maps, mounts) do not look at.

zdtm.py (patched by zdtm.py-shstk-state.patch) calls snapshot(test) where it
takes its visible state and compare(before, snapshot(test)) where it checks
it.  A restore that loses any of these fails the test:

  - every thread's x86_Thread_features and x86_Thread_features_locked
    (/proc status: shadow stack and WRSS on, and their locks), zombies
    aside;
  - every process's shadow-stack mappings (VmFlags "ss" in smaps): their
    ranges, so an extra stack left behind or one missing is seen;
  - the SSP of every thread with a shadow stack that sleeps in a system
    call at both points (read through ptrace by the guest's shstk_ssp):
    a sleeping thread of a static test returns to the same call site, so
    its SSP must be the same; a running one has no stable SSP.

With --lazy-pages (and --remote-lazy-pages) no page may come into a
shadow stack through userfaultfd: criu-cet restores shadow stacks eagerly,
and the restored task's first return would find a missing one.  zdtm.py
calls lazy_into_ss(after, images) once criu lazy-pages has ended: its log
names every page it copied (the verdict line counts them: lazy=N).

Processes and threads are named by their pid in the test's own pid
namespace (the last NSpid field): zdtm.py's ns flavour restores those, not
the host's.  Transition tests change their task tree while they run, so
only their first process's main thread is compared.  Our own tests
(test/zdtm/cet) are compared whole, as the static ones; a .desc's
'shstk_new_ss': N lets the restore add N shadow-stack mappings (compare's
new_ss).
"""

import os
import re
import subprocess
import time

SSP_TOOL = os.environ.get("ZDTM_SHSTK_SSP", "shstk_ssp")
# how long a shadow-stack mapping no thread runs on must stay to count
SETTLE_S = 0.2


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _status_fields(text):
    fields = {}
    for line in (text or "").splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def _ns_id(fields):
    return int(fields["NSpid"].split()[-1])


def _ss_ranges(pid):
    """The ranges of the process's shadow-stack mappings."""
    ranges, current = [], None
    for line in (_read(f"/proc/{pid}/smaps") or "").splitlines():
        head = line.split()[0] if line else ""
        if "-" in head and not head.endswith(":"):
            current = head
        elif line.startswith("VmFlags:") and "ss" in line.split()[1:]:
            ranges.append(current)
    return sorted(ranges)


def _settled_ss(pid, ss, threads):
    """The ss mappings of a process that are not a thread's coming or
    going.  A thread's shadow stack is mapped before it shows in
    /proc/PID/task and unmapped after it is gone (glibc's SIGEV_THREAD
    timers start and end threads all along: static/pthread_timers_h), so
    a read can hold a stack no live thread runs on.  When there are more
    mappings than threads on a shadow stack, read again a moment later
    and keep those in both reads; a stack nobody runs on that stays (an
    orphan, a fiber's) is kept."""
    if len(ss) <= sum(1 for v in threads.values() if "shstk" in v[1].split()):
        return ss
    time.sleep(SETTLE_S)
    again = set(_ss_ranges(pid))
    return [r for r in ss if r in again]


def _children(pid):
    kids = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        kids += (_read(f"/proc/{pid}/task/{tid}/children") or "").split()
    return kids


def _tree(root):
    """Host pids of root and its descendants."""
    seen, todo = [], [str(root)]
    while todo:
        pid = todo.pop(0)
        if pid in seen or not os.path.isdir(f"/proc/{pid}"):
            continue
        seen.append(pid)
        try:
            todo += _children(pid)
        except OSError:
            pass
    return seen


def _threads(pid):
    """{ns tid: (host tid, features, locked, state)} of one process."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        fields = _status_fields(_read(f"/proc/{pid}/task/{tid}/status"))
        if "NSpid" not in fields:
            continue        # gone meanwhile
        state = fields.get("State", "?").split()[0]
        threads[_ns_id(fields)] = (tid, fields.get("x86_Thread_features", "n/a"),
                                   fields.get("x86_Thread_features_locked", "n/a"), state)
    return threads


def _ssp(tids):
    """{host tid: SSP} for the threads that have one."""
    if not tids:
        return {}
    try:
        out = subprocess.run([SSP_TOOL] + tids, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    ssp = {}
    for line in out.splitlines():
        tid, _, value = line.partition(" ")
        if value.startswith("0x"):
            ssp[tid] = value
    return ssp


def _holds_still(test):
    """Whether the test's task tree stays as it is while it waits for the
    dump: ZDTM's static tests and ours (zdtm/cet; zdtm.py counts only
    zdtm/static as static).  In the ns flavour the first process is the
    ZDTM library's namespace init, the test its child: only a whole tree
    shows the test."""
    if getattr(test, "static", lambda: False)():
        return True
    return getattr(test, "getname", lambda: "")().startswith("zdtm/cet/")


def snapshot(test):
    """The shadow-stack state of the test's task tree, or None when the
    test has no process to look at."""
    try:
        root = int(test.getpid())
    except (TypeError, ValueError, OSError):
        return None
    static = _holds_still(test)
    procs = {}
    for pid in _tree(root) if static else [str(root)]:
        fields = _status_fields(_read(f"/proc/{pid}/status"))
        if "NSpid" not in fields:
            continue
        threads = _threads(pid)
        if not static:
            threads = {t: v for t, v in threads.items() if t == _ns_id(fields)}
        ss = _settled_ss(pid, _ss_ranges(pid), threads) if static else None
        procs[_ns_id(fields)] = {"threads": threads, "ss": ss}
    sleeping = [v[0] for p in procs.values() for v in p["threads"].values()
                if static and "shstk" in v[1].split() and v[3] == "S"]
    ssp = _ssp(sleeping)
    for p in procs.values():
        p["ssp"] = {t: ssp.get(v[0]) for t, v in p["threads"].items()}
    return procs


def _ss_differ(old, new, new_ss):
    """Whether a process's ss mappings changed.  A test whose .desc says
    'shstk_new_ss': N (its owned stacks cannot be told apart from the
    kernel's on a stock kernel, so criu-cet maps N new ones by design)
    may have exactly N new ones, or none (a kernel that says which stacks
    it owns), and no lost one."""
    if old == new or old is None or new is None:
        return old != new
    added = set(new) - set(old)
    return bool(set(old) - set(new)) or len(added) not in (0, new_ss)


def compare(before, after, new_ss=0):
    """What differs, one line a difference ([] when equal)."""
    if before is None or after is None:
        return []
    diffs = []
    for pid in sorted(set(before) | set(after)):
        if pid not in after or pid not in before:
            diffs.append(f"process {pid}: {'gone' if pid not in after else 'new'} after restore")
            continue
        old, new = before[pid], after[pid]
        if _ss_differ(old["ss"], new["ss"], new_ss):
            diffs.append(f"process {pid}: ss mappings {len(old['ss'])} -> {len(new['ss'])} "
                         f"(lost {sorted(set(old['ss']) - set(new['ss']))}, "
                         f"new {sorted(set(new['ss']) - set(old['ss']))})")
        for tid in sorted(set(old["threads"]) & set(new["threads"])):
            _, feat0, lock0, state0 = old["threads"][tid]
            _, feat1, lock1, state1 = new["threads"][tid]
            if "Z" in (state0, state1):
                continue    # a zombie runs nothing: CRIU restores it as a bare exit
            if feat0 != feat1:
                diffs.append(f"thread {tid}: features '{feat0}' -> '{feat1}'")
            if lock0 != lock1:
                diffs.append(f"thread {tid}: locked '{lock0}' -> '{lock1}'")
            ssp0, ssp1 = old["ssp"].get(tid), new["ssp"].get(tid)
            if ssp0 and ssp1 and ssp0 != ssp1:
                diffs.append(f"thread {tid}: SSP {ssp0} -> {ssp1}")
    return diffs


def shadow_stacks_in_use(state):
    """How many threads of the snapshot run on a shadow stack (for the
    report: a shstk run whose tests had none has tested nothing)."""
    return sum(1 for p in (state or {}).values() for v in p["threads"].values()
               if "shstk" in v[1].split())


# criu/uffd.c: "uffd: <pid>-<fd>: uffd_copy: 0x<address>/<length>", the pid
# the images' (the test's own namespace's, as snapshot names processes)
UFFD_COPY = re.compile(r"uffd: (\d+)-\d+: uffd_copy: 0x([0-9a-f]+)/(\d+)")


def _last_iteration(images):
    """zdtm.py's logs() is the test's dump folder: its images (and the
    lazy-pages log of the last restore) are in one subfolder an iteration,
    1, 2, ..."""
    try:
        iters = [int(d) for d in os.listdir(images) if d.isdigit()]
    except OSError:
        return images
    return os.path.join(images, str(max(iters))) if iters else images


def lazy_into_ss(after, images):
    """(how many page runs criu lazy-pages copied, its log's uffd_copy lines
    in @images; one line for each copy into a shadow stack of the restored
    tree @after).  No log is a failure too: the check could not be made."""
    log = _read(os.path.join(_last_iteration(images), "lazy-pages.log"))
    if log is None:
        return 0, [f"no lazy-pages.log in {images}: nothing says where the lazy pages went"]
    stacks = {pid: [(r, *(int(x, 16) for x in r.split("-"))) for r in p["ss"] or []]
              for pid, p in (after or {}).items()}
    copies, wrong = 0, []
    for m in UFFD_COPY.finditer(log):
        pid, addr, length = int(m.group(1)), int(m.group(2), 16), int(m.group(3))
        copies += 1
        for r, start, end in stacks.get(pid, []):
            if addr < end and addr + length > start:
                wrong.append(f"process {pid}: lazy-pages copied {addr:#x}/{length} into the shadow stack {r}")
    return copies, wrong
