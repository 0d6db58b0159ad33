# SPDX-License-Identifier: GPL-2.0
"""CRIU's own ZDTM suite on shadow stacks, judged by CRIU's own zdtm.py in
the lab (suite zdtm-upstream, overlay lab/zdtm-overlay.sh): a fixed sample
of the base CRIU's ZDTM tests (test/zdtm/upstream/sample.list), built as
shadow-stack tests against the CET glibc and run with glibc's shadow
stacks on and locked, checkpointed and restored by criu-cet and by stock
4.1.1, on both kernels.  zdtm.py compares what it always compares (fds,
maps, mounts) and, with our patch, every thread's features, locks and SSP
and every shadow-stack mapping.

criu-cet must pass every test of the sample that is not in
exclude.list; stock's verdicts are beside it (and where stock passes a
test, criu-cet must too).  make zdtm runs the whole default set."""

import os
import sys

import pytest

from conftest import TOP, LabResults, build_overlay, lab_run

sys.path.insert(0, os.path.join(TOP, "lab"))
import zdtm_plan  # noqa: E402

pytestmark = pytest.mark.lab

UPSTREAM = os.path.join(TOP, "test", "zdtm", "upstream")
SAMPLE = zdtm_plan.read_list(os.path.join(UPSTREAM, "sample.list"))
EXCLUDED = zdtm_plan.read_exclusions(os.path.join(UPSTREAM, "exclude.list"))
KERNELS = ("stock", "patched")
LAB_RUNS = [("zdtm-upstream", k, "zdtm-overlay.sh") for k in KERNELS]


def overlay():
    folder, error = build_overlay("zdtm-overlay.sh")
    if error:
        pytest.fail(f"the ZDTM overlay cannot be built: {error}")
    return folder


@pytest.fixture(scope="module", params=KERNELS)
def lab(request):
    return LabResults(lab_run("zdtm-upstream", kernel=request.param, overlay=overlay()))


def verdicts(lab, criu):
    """{test: (status, detail)} of one CRIU's shstk runs (every flavour)."""
    lab.get("zdtm.shstk-probe")     # the run finished
    out = {}
    for r in lab.data["results"]:
        name = r["name"]
        for flavour in zdtm_plan.FLAVOUR_ORDER:
            prefix = f"zdtm.{zdtm_plan.label_of('shstk:' + criu, flavour)}."
            if name.startswith(prefix):
                out[name[len(prefix):]] = (r["status"], r["detail"])
    return out


def test_sample_size():
    assert len(SAMPLE) >= 60 and len(set(SAMPLE)) == len(SAMPLE)


def test_every_exclusion_has_a_reason():
    for test, reason in EXCLUDED.items():
        assert test.startswith("zdtm/") and len(reason) > 10, (test, reason)


def test_tests_run_on_locked_shadow_stacks(lab):
    lab.expect_pass("zdtm.shstk-probe")


@pytest.mark.parametrize("criu", ["criu-cet", "stock"])
def test_every_test_has_a_verdict(lab, criu):
    got = verdicts(lab, criu)
    missing = [t for t in SAMPLE if t not in got]
    assert not missing, f"{criu}: no verdict for {missing}"


@pytest.mark.parametrize("test", SAMPLE)
def test_criu_cet_passes(lab, test):
    status, detail = verdicts(lab, "criu-cet").get(test, ("none", "no verdict"))
    stock = verdicts(lab, "stock").get(test, ("none", "no verdict"))
    if test in EXCLUDED:
        pytest.skip(f"excluded: {EXCLUDED[test]} (criu-cet {status}, stock {stock[0]})")
    if status == "SKIP":
        pytest.skip(f"zdtm.py skipped it: {detail}")
    assert status == "PASS", f"criu-cet: {status} {detail}; stock 4.1.1: {stock[0]} {stock[1]}"
    # a test that ran with no thread on a shadow stack tested nothing here
    if "shstk=0" in detail:
        pytest.fail(f"{test} passed with no thread on a shadow stack: {detail}")


def test_criu_cet_passes_what_stock_passes(lab):
    cet, stock = verdicts(lab, "criu-cet"), verdicts(lab, "stock")
    worse = [f"{t}: {cet.get(t, ('none', ''))}" for t, (s, _) in stock.items()
             if s == "PASS" and cet.get(t, ("none",))[0] != "PASS"]
    assert not worse, f"stock 4.1.1 passes, criu-cet does not: {worse}"
