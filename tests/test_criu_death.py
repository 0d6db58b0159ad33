# SPDX-License-Identifier: GPL-2.0
"""criu dies during a dump (lab suites criu-death, criu-death-stock):
CRIU's own fault injection (CRIU_FAULT=1 right after infection, 5: the
parasite's connect fails) and criu SIGKILLed at points spread over the dump.
The dumped task must run on with its CET state exactly as before, on the
stock and on the patched kernel.  Stock CRIU 4.1.1 runs the same cases on the
stock kernel: wherever it keeps the task alive, criu-cet must too.

Then criu dies during a restore, killed by its action script: at
post-restore (every task restored, criu's last stages to come) no task of
the tree may stay behind, where stock CRIU leaves them asleep forever; at
pre-resume (the restore complete) they run on."""

import pytest

from conftest import Boot, fields, lab_results

pytestmark = pytest.mark.lab

CASES = ["fault1", "fault5", "daemon", "pages", "mm"]
TESTS = ["recursion", "threads", "wrss", "wrss_off", "locked", "mixed_threads"]
LAB_BOOTS = {"stock": Boot("criu-death,criu-death-stock"), "patched": Boot("criu-death", "patched")}


@pytest.fixture(scope="module")
def stock_kernel():
    return lab_results(LAB_BOOTS["stock"])


@pytest.fixture(scope="module")
def patched_kernel():
    return lab_results(LAB_BOOTS["patched"])


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("test", TESTS)
def test_task_survives_criu_death_stock_kernel(stock_kernel, test, case):
    r = stock_kernel.expect_pass(f"zdtm.cet.{test}.death-{case}")
    assert fields(r)["outcome"] == "ran-on", r


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("test", TESTS)
def test_task_survives_criu_death_patched_kernel(patched_kernel, test, case):
    r = patched_kernel.expect_pass(f"zdtm.cet.{test}.death-{case}")
    assert fields(r)["outcome"] == "ran-on", r


RESTORE_POINTS = {"post-restore": "gone", "pre-resume": "ran-on"}


@pytest.mark.parametrize("point", RESTORE_POINTS)
def test_criu_dying_mid_restore_leaves_no_half_restored_task(stock_kernel, patched_kernel, point):
    for kernel in (stock_kernel, patched_kernel):
        r = fields(kernel.expect_pass(f"restore-death.{point}"))
        assert r["outcome"] == RESTORE_POINTS[point], r
        assert int(r["left"]) == (0 if point == "post-restore" else 3), r


def test_restore_death_stock_beside(stock_kernel):
    """Stock 4.1.1 killed at the same points (its tree plain: it loses
    shadow stacks anyway), printed; wherever it gets the outcome right,
    criu-cet does too."""
    print("\nrestore-death (stock kernel)   criu-cet on shadow stacks / stock 4.1.1 plain")
    for point in RESTORE_POINTS:
        ours, stock = (stock_kernel.get(f"restore-death.{point}{s}") for s in ("", "-stock"))
        print(f"  {point:13} outcome={fields(ours).get('outcome')}/{fields(stock).get('outcome')} "
              f"left={fields(ours).get('left')}/{fields(stock).get('left')}")
        if stock["status"] == "PASS":
            assert ours["status"] == "PASS", (point, ours, stock)


def test_never_worse_than_stock(stock_kernel):
    """The table, and no case where stock 4.1.1 keeps the task and criu-cet does not."""
    worse = []
    print("\ncriu-death (stock kernel)   criu-cet / stock 4.1.1")
    for case in CASES:
        row = []
        for test in TESTS:
            ours = stock_kernel.get(f"zdtm.cet.{test}.death-{case}")["status"]
            stock = stock_kernel.get(f"zdtm.cet.{test}.death-{case}-stock")["status"]
            row.append(f"{test}={ours}/{stock}")
            if stock == "PASS" and ours != "PASS":
                worse.append(f"{test}/{case}")
        print(f"  {case:8} " + " ".join(row))
    assert not worse, f"stock CRIU keeps the task alive, criu-cet does not: {worse}"
