# SPDX-License-Identifier: GPL-2.0
"""A real CET userland in the emulated CET machine: the CET glibc
(lab/build/glibc.sh; suite cet-glibc) and valkey 8.1.1 built on it (suite
valkey): glibc turns shadow stacks on and locks them in every thread; the
service is checkpointed and restored by criu-cet five times in a row with its
data, its threads' CET state and its protection intact; stock CRIU 4.1.1's
outcome on the same steps is reported.  make demo's suite runs in the stock
kernel's boot.  One boot per kernel, with the overlay lab/overlays/valkey.sh."""

import pytest

from conftest import Boot, build_overlay, fields, lab_results

pytestmark = pytest.mark.lab

CYCLES = 5
# make demo's suite runs in the stock kernel's boot
LAB_BOOTS = {"stock": Boot("cet-glibc,valkey,demo", "stock", "valkey.sh", cost=90),
             "patched": Boot("cet-glibc,valkey", "patched", "valkey.sh", cost=90)}


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
    f = fields(lab.expect_pass("cet-glibc.shstk"))
    assert (f["features"], f["locked"]) == ("shstk", "shstk,wrss"), f
    lab.expect_pass("cet-glibc.off")


def test_glibc_program_smash_caught_only_with_shadow_stack(lab):
    assert fields(lab.expect_pass("cet-glibc.smash"))["fault"] == "control-protection"
    lab.expect_pass("cet-glibc.smash-off")


def test_valkey_runs_on_locked_shadow_stacks(lab):
    f = fields(lab.expect_pass("valkey.start"))
    assert f["server"] == "valkey" and int(f["threads"]) >= 5, f
    assert f["cet"].count("shstk/shstk,wrss") == int(f["threads"]), f
    f = fields(lab.expect_pass("valkey.fill"))
    assert f["errors"] == "0" and int(f["keys"]) > 0, f


def test_smash_caught_before_any_dump(lab):
    assert fields(lab.expect_pass("valkey.smash-before"))["fault"] == "SEGV_CPERR"


@pytest.mark.parametrize("n", range(1, CYCLES + 1))
def test_checkpoint_restore_cycle(lab, n):
    for step in ("dump", "restore", "data", "cet", "service"):
        lab.expect_pass(f"valkey.cycle{n}.{step}")
    f = fields(lab.get(f"valkey.cycle{n}.dump"))
    assert f["all_locks"] == f["threads"], f     # criu-cet's log: every thread's 64 lock bits
    if n % 2 == 0:      # the --leave-running cycles
        lab.expect_pass(f"valkey.cycle{n}.left-running")


def test_smash_caught_after_restores(lab):
    assert fields(lab.expect_pass("valkey.smash-after"))["fault"] == "SEGV_CPERR"


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
    assert fields(lab.expect_pass("demo.protected"))["fault"] == "SEGV_CPERR"


def test_no_failures(lab):
    bad = [r for r in lab.data["results"] if r["status"] == "FAIL"]
    assert not bad, bad
