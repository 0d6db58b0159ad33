# SPDX-License-Identifier: GPL-2.0
"""criu-cet in the emulated CET machine: the demo, the counter service, and
what a dump leaves behind when it runs with --leave-running or fails
half-way.  (The eleven-plus scenarios are the ZDTM CET tests:
tests/test_zdtm_cet.py.)"""

import pytest

from conftest import Boot, fields, lab_results, zdtm_cet_runner_tests

pytestmark = pytest.mark.lab

LAB_BOOTS = {
    "stock": Boot("demo-service,criu-cet-smoke,criu-cet-faults,criu-limits"),
    "patched": Boot("criu-cet-smoke,zdtm-cet-runner,criu-cet-faults,criu-limits", "patched"),
}


@pytest.fixture(scope="module")
def lab():
    return lab_results(LAB_BOOTS["stock"])


def test_demo_resumes_where_it_was(lab):
    f = fields(lab.expect_pass("demo-service.resume"))
    assert (f["features"], f["locked"]) == ("shstk", "shstk,wrss"), f


def test_demo_is_still_protected_after_restore(lab):
    assert fields(lab.expect_pass("demo-service.protected"))["si_code"] == "10"    # SEGV_CPERR


@pytest.mark.parametrize("name", ["cet.plain", "cet.shstk"])
def test_counter_service(lab, name):
    f = fields(lab.expect_pass(name))
    assert f["outcome"] == "counting" and int(f["count"]) > int(f["restored_at"]) >= int(f["dumped_at"]), f


@pytest.mark.parametrize("test", ["recursion", "threads", "fibers", "wrss", "wrss_off", "locked",
                                  "mixed_threads", "sighandler"])
def test_leave_running_keeps_cet_state(lab, test):
    r = lab.expect_pass(f"zdtm.cet.{test}.leave-running")
    assert fields(r)["outcome"] == "ran-on" and fields(r)["dump"] == "leave-running", r


@pytest.mark.parametrize("test", ["recursion", "threads", "wrss", "wrss_off", "locked"])
def test_failed_dump_keeps_cet_state(lab, test):
    r = lab.expect_pass(f"zdtm.cet.{test}.dump-fail")
    assert fields(r)["outcome"] == "ran-on" and fields(r)["dump"] == "failed", r
    assert "No space left" in r["detail"]     # criu's own reason


# ---- criu restoring as in a user namespace (no CAP_SYS_RESOURCE), both kernels ----

NOCAP_TESTS = ["recursion", "threads", "limits", "orphan", "fibers", "locked"]


def _limits_checks(res):
    for test in NOCAP_TESTS:
        res.expect_pass(f"zdtm.cet.{test}.nocap")
    res.expect_pass("zdtm.cet.threads.hard-stack")
    r = res.expect_pass("zdtm.cet.threads.nocap-hard-stack")
    assert fields(r)["outcome"] == "refused" and fields(r)["task"] == "none", r
    assert "criu may not raise it" in r["detail"], r


def test_restore_without_cap_sys_resource(lab):
    _limits_checks(lab)


def test_restore_without_cap_sys_resource_patched_kernel(patched):
    _limits_checks(patched)


# ---- with criu-cet's kernel patches (issue 4): the regset is found and used ----

# every ZDTM CET test runs under zdtm.py on the patched kernel too
# (tests/test_zdtm_upstream.py); the runner's share here
ZDTM_TESTS = zdtm_cet_runner_tests()


@pytest.fixture(scope="module")
def patched():
    return lab_results(LAB_BOOTS["patched"])


def test_stock_kernel_uses_stock_interfaces(lab):
    r = lab.get("cet.kernel-regset")
    assert r["status"] == "SKIP" and fields(r)["interface"] == "stock", r


def test_patched_kernel_regset_is_used(patched):
    r = patched.expect_pass("cet.kernel-regset")
    assert fields(r)["interface"] == "NT_X86_SHSTK_STATUS" and fields(r)["tokens"] == "1", r


@pytest.mark.parametrize("test", ZDTM_TESTS)
def test_zdtm_cet_on_patched_kernel(patched, test):
    patched.expect_pass(f"zdtm.cet.{test}.criu-cet")


@pytest.mark.parametrize("test", ["recursion", "threads", "wrss", "wrss_off", "locked"])
def test_patched_kernel_failed_dump_keeps_cet_state(patched, test):
    patched.expect_pass(f"zdtm.cet.{test}.dump-fail")


@pytest.mark.parametrize("test", ["recursion", "wrss_off", "locked", "mixed_threads"])
def test_patched_kernel_leave_running_keeps_cet_state(patched, test):
    patched.expect_pass(f"zdtm.cet.{test}.leave-running")


def test_owned_stack_from_regset_on_patched_kernel(patched):
    """With the series, NT_X86_SHSTK_STATUS names the stack the kernel owns: no probe."""
    assert fields(patched.expect_pass("cet.owned-stack"))["told_by"] == "NT_X86_SHSTK_STATUS"


def test_owner_known_without_probe_on_patched_kernel(patched):
    """The same task on the patched kernel: the regset names the owned stacks, the restore is
    exact (no new mapping) although the probe could not have run."""
    f = fields(patched.expect_pass("zdtm.cet.fiber_thread_unknown.criu-cet"))
    assert (f["ss"], f["ss_after_join"]) == ("3", "1"), f


def test_probe_hang_is_bounded_on_stock_kernel(lab):
    """A seccomp supervisor that never answers parks the ownership probe's child: criu kills it
    after its timeout, probes no other thread, and the task runs on with its state."""
    lab.expect_pass("zdtm.cet.fiber_thread_hang.probe-hang")
    f = fields(lab.expect_pass("cet.probe-hang"))
    assert (f["hung"], f["skipped"]) == ("1", "1") and "the probe hung" in f["why"], f


def test_no_probe_on_patched_kernel(patched):
    patched.expect_pass("zdtm.cet.fiber_thread_hang.probe-hang")
    r = patched.get("cet.probe-hang")
    assert r["status"] == "SKIP" and fields(r)["probes"] == "0", r


def test_check_feature_says_yes_in_the_lab(lab):
    r = lab.expect_pass("cet.check-feature")
    assert fields(r)["regset"] == "no", r
    assert lab.expect_pass("cet.version")["detail"].startswith("Version: 4.2.1|Flavour: criu-cet (CRIU 4.2.1")


def test_check_feature_sees_the_regset_on_the_patched_kernel(patched):
    assert fields(patched.expect_pass("cet.check-feature"))["regset"] == "yes"
