# SPDX-License-Identifier: GPL-2.0
"""Without CET nothing regresses: CRIU's own ZDTM tests, on the host (no CET
there), with stock CRIU 4.1.1 and with criu-cet (lab/reports/zdtm-host.sh).  criu-cet
must give stock's result for every listed test, and pass every one stock
passes.  Where stock 4.1.1 itself fails on this host's kernel (seen on a
6.18 host: every dump hangs at the parasite's rt_sigreturn until zdtm.py's
60 s timeout), criu-cet's result is still compared with it, and the pass
check says SKIP and why."""

import os
import re
import subprocess
import sys
import time

import pytest

from conftest import LAB_ENV, TOP, early_result

pytestmark = pytest.mark.host_zdtm

SCRIPT = os.path.join(TOP, "lab", "reports", "zdtm-host.sh")
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
FLAVOURS = ("stock", "cet")
# issue 3, "Also": the same list lab/reports/zdtm-host.sh runs by default
TESTS = [
    "zdtm/static/env00",
    "zdtm/static/maps00",
    "zdtm/static/sigaltstack",
    "zdtm/static/pthread00",
    "zdtm/transition/fork",
    "zdtm/static/vdso00",
    "zdtm/static/pipe00",
    "zdtm/static/sockets00",
]
LINE = re.compile(r"^zdtm-host (\S+) (\S+) (PASS|FAIL|SKIP)\b ?(.*)$")
SUMMARY = re.compile(r"^zdtm-host (\S+) summary: (\d+) PASS, (\d+) FAIL, (\d+) SKIP of (\d+)")

_results = {}


def cannot_run():
    """Why the ZDTM runs cannot happen here, or None."""
    if os.geteuid() != 0:
        return "ZDTM checkpoints its test programs: needs root"
    for f in FLAVOURS:
        criu = os.path.join(BUILD, f"criu-{f}", "criu")
        if not os.access(criu, os.X_OK):
            return f"{criu} is not built (make criu-stock criu-cet)"
    return None


def run_script(flavour):
    """lab/reports/zdtm-host.sh for one flavour, its lines parsed."""
    t0 = time.monotonic()
    p = subprocess.run(["bash", SCRIPT, flavour] + TESTS, capture_output=True, text=True,
                       timeout=30 * 60, env=LAB_ENV, cwd=TOP)
    took = time.monotonic() - t0
    lines, summary = {}, None
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if m and m.group(1) == flavour:
            lines[m.group(2)] = (m.group(3), m.group(4))
        m = SUMMARY.match(line)
        if m and m.group(1) == flavour:
            summary = tuple(int(x) for x in m.group(2, 3, 4, 5))
    return {"rc": p.returncode, "lines": lines, "summary": summary,
            "stdout": p.stdout, "stderr": p.stderr, "took": took}


def run_both():
    """Stock, then criu-cet (one at a time: they share the host), or None."""
    if cannot_run():
        return None
    return {f: run_script(f) for f in FLAVOURS}


# the session starts both runs ahead (conftest): they are mostly waits
EARLY_JOBS = {"zdtm-host": run_both}


def run_flavour(flavour):
    """The session's run of lab/reports/zdtm-host.sh for a flavour."""
    why = cannot_run()
    if why:
        pytest.skip(why)
    if not _results:
        _results.update(early_result("zdtm-host", run_both) or run_both())
        for f, r in _results.items():
            sys.stderr.write(r["stdout"] + f"[{f}: {r['took']:.1f}s wall]\n")
    return _results[flavour]


@pytest.fixture(scope="module")
def stock():
    return run_flavour("stock")


@pytest.fixture(scope="module")
def cet():
    return run_flavour("cet")


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_every_test_reported(flavour, stock, cet):
    r = {"stock": stock, "cet": cet}[flavour]
    missing = [t for t in TESTS if t not in r["lines"]]
    assert not missing, f"{flavour}: no result for {missing}\n{r['stdout']}\n{r['stderr'][-3000:]}"
    assert r["summary"] is not None, f"{flavour}: no summary line\n{r['stderr'][-3000:]}"
    npass, nfail, nskip, total = r["summary"]
    assert total == len(TESTS) and npass + nfail + nskip == total, r["summary"]
    assert (r["rc"] == 0) == (nfail == 0), f"{flavour}: exit {r['rc']} with {nfail} failure(s)"


@pytest.mark.parametrize("test", TESTS)
def test_cet_same_as_stock(test, stock, cet):
    s = stock["lines"].get(test, ("none", ""))
    c = cet["lines"].get(test, ("none", ""))
    assert c[0] == s[0], f"{test}: stock {s[0]} {s[1]} / criu-cet {c[0]} {c[1]}"


@pytest.mark.parametrize("test", TESTS)
def test_cet_passes(test, stock, cet):
    status, detail = cet["lines"].get(test, ("none", "no result line"))
    s_status, s_detail = stock["lines"].get(test, ("none", "no result line"))
    if status != "PASS" and s_status == "FAIL":
        pytest.skip(f"stock CRIU 4.1.1 fails it too on this host (kernel {os.uname().release}): {s_detail}")
    assert status == "PASS", f"{test} with criu-cet: {status} {detail}"
