# SPDX-License-Identifier: GPL-2.0
"""The lab boots of a test session, beside the runner (run.py) that makes
them: what a test module declares, the overlays the boots need, and the
planner that starts them ahead.

A test module declares each of its boots once, as a Boot in LAB_BOOTS (a
dict whose keys name the boots in test ids); its fixtures come from that
declaration (conftest's lab_fixture).  Lab boots run in Bochs, one core
each, and most do not depend on each other: the session starts every
declared boot of the selected tests up front, as many at once as the host
has cores (the pairs of two machines beside them, one at a time), in the
order the tests will want them (guest time does not depend on host load:
clock sync=none), and a test that asks for one waits for it.  A boot that needs another boot's output (its images) is declared
with prefetch=False and boots when a test asks for it.

Host jobs that mostly wait (CRIU's ZDTM on the host) start with the
session too, beside the boots: a module names them in EARLY_JOBS
{name: function}, and takes the result with Session.early_result().
"""

import concurrent.futures
import os
import subprocess
import threading
from typing import NamedTuple

from run import boot_json

LAB = os.path.dirname(os.path.abspath(__file__))


class Boot(NamedTuple):
    """One boot of the lab."""
    suites: str                 # the guest suites, comma-separated
    kernel: str = "stock"
    overlay: str = None         # a script of lab/overlays (and its arguments), or a folder
    tag: str = ""               # tells apart boots of the same suites and kernel
    cmdline: str = ""           # more kernel command line
    timeout: int = None         # a watchdog longer than run.py's 15 minutes of wall time
    prefetch: bool = True       # False: it needs another boot's output
    peer: str = None            # two machines: machine B's suites (this one is A)
    peer_kernel: str = None     # machine B's kernel (default: A's)
    peer_cmdline: str = ""      # more of machine B's kernel command line
    cost: int = 0               # a rough guess of its wall seconds: the dearest boot first

    @property
    def name(self):
        """Its folder under build/lab-results."""
        two = f"--{self.peer.replace(',', '+')}-{self.peer_kernel or self.kernel}" if self.peer else ""
        return f"{self.suites.replace(',', '+')}-{self.kernel}{two}{'-' + self.tag if self.tag else ''}"


def declared(module):
    """The boots a test module declares (LAB_BOOTS: a dict or a list)."""
    boots = getattr(module, "LAB_BOOTS", {})
    return list(boots.values()) if isinstance(boots, dict) else list(boots)


class Session:
    """The boots, overlays and early host jobs of one test session.  Boots
    run in threads while tests monkeypatch os.environ: each runs with the
    environment the session started with."""

    def __init__(self, env):
        self.env = dict(env)
        self._overlays = {}
        self._overlay_lock = threading.Lock()
        self._results = {}
        self._started = {}
        self._early = {}
        self._pools = []

    def overlay(self, script):
        """Run lab/overlays/<script> (with its arguments), which prints the
        folder of a guest overlay last: (folder, None), or (None, the tail
        of its error output).  Once a session: the boots on either kernel
        use the same folder."""
        with self._overlay_lock:     # a prefetch thread may be building it
            if script not in self._overlays:
                self._overlays[script] = self._build_overlay(script)
        return self._overlays[script]

    def _build_overlay(self, script):
        name, *args = script.split()     # "zdtm.sh sample": a script and its arguments
        p = subprocess.run(["bash", os.path.join(LAB, "overlays", name)] + args, capture_output=True,
                           text=True, env=self.env, cwd=os.path.dirname(LAB))
        if p.returncode or not p.stdout.strip():
            return None, f"lab/overlays/{script}: {p.stderr.strip()[-1000:]}"
        return p.stdout.strip().splitlines()[-1], None

    def _boot(self, boot):
        """(its parsed results or None, what run.py printed, why it gave none)."""
        overlay = boot.overlay
        if overlay and not os.path.isabs(overlay):
            overlay, error = self.overlay(overlay)
            if error:
                return None, "", error
        return boot_json(boot.suites, boot.kernel, boot.name, overlay=overlay, timeout=boot.timeout,
                         cmdline=boot.cmdline, env=self.env, peer=boot.peer, peer_kernel=boot.peer_kernel,
                         peer_cmdline=boot.peer_cmdline)

    def result(self, boot):
        """The boot's (results, printed, error): the one the session started
        ahead, or one now; once a session."""
        if boot not in self._results:
            pending = self._started.pop(boot, None)
            self._results[boot] = pending.result() if pending else self._boot(boot)
        return self._results[boot]

    def start(self, plan):
        """Start the boots of @plan, in its order: one machine's boots as
        many at once as the host has cores, and beside them the pairs, one
        at a time.  A pair's machines run under sync=slowdown and wait on
        each other and on real time most of it (109 s of Bochs CPU in a
        174 s pair): in a core's place they would leave it idle."""
        for boots, workers in (([b for b in plan if not b.peer], os.cpu_count() or 1),
                               ([b for b in plan if b.peer], 1)):
            if not boots:
                continue
            pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
            self._pools.append(pool)
            for boot in boots:
                self._started[boot] = pool.submit(self._boot, boot)

    def walls(self):
        """[(wall seconds, seconds from Bochs' start to init, boot name)] of
        the boots that gave results, longest first: where a session's time
        went."""
        out = [(doc.get("wall", 0), doc.get("boot_wall"), boot.name)
               for boot, (doc, _, _) in self._results.items() if doc]
        return sorted(out, key=lambda w: -w[0])

    def unused(self):
        """Boots started ahead that no test asked for: a declaration no
        fixture uses."""
        return list(self._started)

    def start_early(self, jobs):
        if not jobs:
            return
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(jobs))
        self._pools.append(pool)
        for name, job in jobs.items():
            self._early[name] = pool.submit(job)

    def early_result(self, name, job):
        """What job() returns: the run the session started ahead, or one now."""
        pending = self._early.pop(name, None)
        return pending.result() if pending else job()

    def shutdown(self):
        for pool in self._pools:
            pool.shutdown(wait=False, cancel_futures=True)


def plan(wanted):
    """The boots to start ahead, from the boots each selected test wants:
    each once, and none that must wait for another boot's output; the
    dearest first (Boot.cost), the rest in the order the tests come.  Two
    cores and CRIU's ZDTM sample's boots of four minutes and more: started
    last, the session waited for them alone at its end."""
    out, seen = [], set()
    for boot in wanted:
        if boot.prefetch and boot not in seen:
            seen.add(boot)
            out.append(boot)
    return sorted(out, key=lambda b: -b.cost)
