# SPDX-License-Identifier: GPL-2.0
"""A real CET userland in the emulated CET machine: the CET glibc
(lab/build/glibc.sh; suite cet-glibc) and valkey 8.1.1 built on it (suite
valkey): glibc turns shadow stacks on and locks them in every thread; the
service is checkpointed and restored by criu-cet five times in a row with its
data, its threads' CET state and its protection intact; stock CRIU 4.1.1's
outcome on the same steps is reported.  make demo's suite runs in the stock
kernel's boot.  One boot per kernel, with the overlay lab/overlays/valkey.sh."""

import pytest

from conftest import Boot, build_overlay, lab_results

pytestmark = pytest.mark.lab

CYCLES = 5
# make demo's suite runs in the stock kernel's boot
LAB_BOOTS = {"stock": Boot("cet-glibc,valkey,demo", "stock", "valkey.sh"),
             "patched": Boot("cet-glibc,valkey", "patched", "valkey.sh")}


def overlay():
    """The overlay, or a skip that says why it cannot be built."""
    folder, error = build_overlay("valkey.sh")
    if error:
        pytest.skip(f"the CET glibc / valkey overlay cannot be built: {error}")
    return folder


@pytest.fixture(scope="module", params=list(LAB_BOOTS))
def lab(request):
    overlay()
    return lab_results(LAB_BOOTS[request.param])


def test_glibc_turns_shadow_stacks_on_and_locks_them(lab):
    r = lab.expect_pass("cet-glibc.shstk")
    assert "features=shstk locked=shstk,wrss" in r["detail"], r
    lab.expect_pass("cet-glibc.off")


def test_glibc_program_smash_caught_only_with_shadow_stack(lab):
    r = lab.expect_pass("cet-glibc.smash")
    assert "control protection" in r["detail"], r
    lab.expect_pass("cet-glibc.smash-off")


def test_valkey_runs_on_locked_shadow_stacks(lab):
    r = lab.expect_pass("valkey.start")
    assert "shstk/shstk,wrss" in r["detail"] and "valkey" in r["detail"].lower(), r
    r = lab.expect_pass("valkey.fill")
    assert "errors: 0" in r["detail"], r


def test_smash_caught_before_any_dump(lab):
    r = lab.expect_pass("valkey.smash-before")
    assert "SEGV_CPERR" in r["detail"], r


@pytest.mark.parametrize("n", range(1, CYCLES + 1))
def test_checkpoint_restore_cycle(lab, n):
    for step in ("dump", "restore", "data", "cet", "service"):
        lab.expect_pass(f"valkey.cycle{n}.{step}")
    assert "all 64 lock bits" in lab.get(f"valkey.cycle{n}.dump")["detail"]
    if n % 2 == 0:      # the --leave-running cycles
        lab.expect_pass(f"valkey.cycle{n}.left-running")


def test_smash_caught_after_restores(lab):
    r = lab.expect_pass("valkey.smash-after")
    assert "SEGV_CPERR" in r["detail"], r


def test_stock_outcome_is_reported(lab):
    """Stock 4.1.1 is the baseline, not judged: its dump fails, or its
    restore says ok and the server then dies (control-protection fault)."""
    info = lab.data["info"]
    assert "valkey.stock.dump" in info, info
    if info["valkey.stock.dump"].startswith("ok"):
        assert "valkey.stock.restore" in info, info


def test_demo(lab):
    if "demo" not in lab.data.get("suites", ["demo"]):
        pytest.skip("make demo's suite runs in the stock kernel's boot")
    lab.expect_pass("demo.resume")
    r = lab.expect_pass("demo.protected")
    assert "SEGV_CPERR" in r["detail"], r


def test_no_failures(lab):
    bad = [r for r in lab.data["results"] if r["status"] == "FAIL"]
    assert not bad, bad
