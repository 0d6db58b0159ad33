# SPDX-License-Identifier: GPL-2.0
"""The ZDTM CET tests (test/zdtm/cet) in the emulated CET lab, driven by the
guest runner (lab/guest/zdtm_cet_run.c): every test without C/R (the tests
themselves are sound), and with criu-cet the tests whose checks zdtm.py
cannot make (suite zdtm-cet-runner: five cycles with SIGUSR2 between, the
dump log of the owned-stack tests).  Every test C/R'd by criu-cet and by
stock 4.1.1 under CRIU's own zdtm.py: tests/test_zdtm_upstream.py."""

import os

import pytest

from conftest import TOP, Boot, fields, lab_results, zdtm_cet_list, zdtm_cet_runner_tests

pytestmark = pytest.mark.lab


TESTS = [(name, "plain" in opts) for name, opts in zdtm_cet_list("lab.list")]
OPTS = dict(zdtm_cet_list("lab.list"))
NAMES = [name for name, _ in TESTS]
SHSTK = [name for name, plain in TESTS if not plain]
RUNNER = zdtm_cet_runner_tests()
LAB_BOOTS = {"stock": Boot("zdtm-cet-nocr,zdtm-cet-runner")}


@pytest.fixture(scope="session")
def zdtm_lab():
    return lab_results(LAB_BOOTS["stock"])


def test_every_scenario_is_listed():
    """Issue 3's eleven scenarios and issue 5's four extras all exist."""
    for name in ("recursion", "threads", "fork_tree", "fibers", "sighandler", "wrss", "wrss_off",
                 "locked", "mixed_threads", "smash", "plain", "cycles",
                 "sigaltstack", "vfork_exec", "stopped", "deep"):
        assert name in NAMES, name
        assert os.path.exists(os.path.join(TOP, "test", "zdtm", "cet", name + ".c")), name


def test_lab_run_complete(zdtm_lab):
    run = zdtm_lab.data
    assert run["done"] and not run["stopped"] and not run["panic"], run["serial_tail"][-20:]
    assert not run["malformed"], run["malformed"]
    for name in NAMES:
        zdtm_lab.get(f"zdtm.cet.{name}.nocr")
    for name in RUNNER:
        zdtm_lab.get(f"zdtm.cet.{name}.criu-cet")


@pytest.mark.parametrize("name", NAMES)
def test_nocr(zdtm_lab, name):
    """Started, left to reach its checkpoint point, signalled: the test passes without CRIU."""
    zdtm_lab.expect_pass(f"zdtm.cet.{name}.nocr")


@pytest.mark.parametrize("name", RUNNER)
def test_criu_cet(zdtm_lab, name):
    """Dumped and restored by criu-cet (cycles: five times), state kept, test passes."""
    r = zdtm_lab.expect_pass(f"zdtm.cet.{name}.criu-cet")
    want = dict(o.split("=") for o in OPTS[name] if "=" in o).get("cycles", "1")
    assert fields(r)["outcome"] == "kept" and fields(r)["cycles"] == want, r


def test_runner_runs_only_what_zdtm_py_cannot(zdtm_lab):
    """The rest of our tests are zdtm.py's to C/R (tests/test_zdtm_upstream.py): the runner
    does not repeat them."""
    extra = [r["name"] for r in zdtm_lab.data["results"]
             if r["name"].endswith(".criu-cet") and r["name"].split(".")[2] not in RUNNER]
    assert not extra, extra


def test_owned_stack_from_probe_on_stock_kernel(zdtm_lab):
    """fiber_thread is dumped on a fiber's stack: a stock kernel does not say which stack it
    owns for the thread, the parasite's fork probe finds it."""
    assert fields(zdtm_lab.expect_pass("cet.owned-stack"))["told_by"] == "fork-probe"


def test_unknown_owner_gets_new_stacks_on_stock_kernel(zdtm_lab):
    """fiber_thread_unknown refuses clone, so the probe cannot run on a stock kernel: the restore
    gives each thread a new stack (2 new ss mappings) and frees no memory the thread does not own."""
    f = fields(zdtm_lab.expect_pass("zdtm.cet.fiber_thread_unknown.criu-cet"))
    assert (f["ss"], f["ss_after_join"]) == ("5", "3"), f
