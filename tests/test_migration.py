# SPDX-License-Identifier: GPL-2.0
"""Live migration of shadow-stack tasks in the lab, on both kernels, by
CRIU's own zdtm.py (suite zdtm-upstream-migrate): the ZDTM CET tests (one
thread, threads, fibers, a 384 KiB deep stack, and churn, whose shadow
stacks change all the time) through iterative pre-dumps with memory
tracking, a dump through the page server, a lazy-pages restore (no page of
a shadow stack served lazily), locally and over TCP from a page server
(post-copy), all of them in one flow; stock 4.1.1 beside the last.  Then
images taken in one boot restored in another, by the lab's runner (zdtm.py
has no such flow): on the same kernel, and from the stock kernel on the
patched one and back."""

import os
import re

import pytest

import images
import zdtm_plan  # conftest puts lab/reports on the path
from conftest import Boot, LabResults, build_overlay, fields, lab_run

pytestmark = pytest.mark.lab

KERNELS = ("stock", "patched")
# zdtm.py's migration flows: make test on the stock kernel (machine B of
# test_two_machines.py's pair migrates onto the patched one), make
# migrate-net (LAB_MIGRATE_ALL=1) on both
FLOW_KERNELS = KERNELS if os.environ.get("LAB_MIGRATE_ALL") == "1" else ("stock",)
# the flows and tests of the migration boot (zdtm.py's own flows)
FLOWS = zdtm_plan.MIGRATE_FLOWS
TESTS = zdtm_plan.MIGRATE_TESTS
STOCK_RUN, STOCK_TESTS = zdtm_plan.MIGRATE_STOCK
CROSS_TESTS = ("plain", "churn", "threads", "fibers", "fiber_thread", "locked")
MIGRATE_OVERLAY = "zdtm.sh migrate"
# the migration boot: 38 C/Rs, most through pre-dumps and lazy pages: 4
# minutes alone, twice that on a busy host, and the suite kills a zdtm.py
# that hangs after 8
LAB_BOOTS = {f"migrate-{k}": Boot("zdtm-upstream-migrate", k, MIGRATE_OVERLAY, timeout=1800, cost=190) for k in FLOW_KERNELS}
LAB_BOOTS.update({f"export-{k}": Boot("cet-migrate-export", k) for k in KERNELS})


def verdicts(lab):
    """{(run, test): (status, detail)} of the migration boot's zdtm.py runs."""
    runs = list(FLOWS.values()) + [STOCK_RUN]
    keys = ((zdtm_plan.verdict_key(r["name"], runs), r) for r in lab.data["results"])
    return {key: (r["status"], r["detail"]) for key, r in keys if key}


@pytest.fixture(scope="session")
def migrate():
    out = {}
    for k in FLOW_KERNELS:
        error = build_overlay(MIGRATE_OVERLAY)[1]
        if error:
            pytest.fail(f"the migration overlay cannot be built: {error}")
        lab = LabResults(lab_run(LAB_BOOTS[f"migrate-{k}"]))
        lab.expect_pass("zdtm.shstk-probe")     # the run finished, on shadow stacks
        out[k] = verdicts(lab)
    return out


@pytest.mark.parametrize("kernel", FLOW_KERNELS)
@pytest.mark.parametrize("flow", FLOWS)
@pytest.mark.parametrize("test", TESTS)
def test_migration_flow(migrate, kernel, flow, test):
    """zdtm.py's flow with criu-cet: its checks, the shadow-stack compare and, in the
    lazy flows, no page of a shadow stack served lazily (shstk_state.lazy_into_ss)."""
    status, detail = migrate[kernel].get((FLOWS[flow], test), ("none", "no verdict"))
    assert status == "PASS", f"{FLOWS[flow]}: {status} {detail}"
    if test != "zdtm/cet/plain":
        assert "shstk=0" not in detail, f"{test} ran with no thread on a shadow stack: {detail}"
    if "lazy-pages" in FLOWS[flow]:
        # the check read lazy-pages.log; without pre-dumps every written page is lazy
        m = re.search(r"\blazy=(\d+)", detail)
        assert m, f"no count of lazy copies: {detail}"
        assert ":pre" in FLOWS[flow] or int(m.group(1)) > 0, f"the restore served no lazy page: {detail}"


@pytest.mark.parametrize("kernel", FLOW_KERNELS)
def test_stock_migration_baseline(migrate, kernel):
    """Stock 4.1.1 migrates the task without shadow stacks and loses churn's."""
    status, detail = migrate[kernel].get((STOCK_RUN, "zdtm/cet/plain"), ("none", "no verdict"))
    assert status == "PASS", f"stock 4.1.1: {status} {detail}"
    status, detail = migrate[kernel].get((STOCK_RUN, "zdtm/cet/churn"), ("none", "no verdict"))
    assert status == "FAIL", f"stock CRIU now migrates churn: {status} {detail}"


@pytest.fixture(scope="session")
def exports(tmp_path_factory):
    """Each kernel's boot dumps the tests; their archives go in one overlay."""
    overlay = tmp_path_factory.mktemp("migrate-overlay")
    dest = overlay / "lab" / "migrate"
    dest.mkdir(parents=True)
    runs = {}
    for k in KERNELS:
        run = lab_run(LAB_BOOTS[f"export-{k}"])
        runs[k] = LabResults(run)
        with open(os.path.join(run["folder"], "serial.log"), errors="replace") as f:
            raw = images.read_blob(f.read(), f"zdtm-from-{k}")
        (dest / f"zdtm-from-{k}.tar.gz").write_bytes(raw)
    return str(overlay), runs


@pytest.fixture(scope="session")
def imports(exports):
    overlay, _ = exports
    return {k: LabResults(lab_run(Boot("cet-migrate-import", k, overlay, tag="import", prefetch=False)))
            for k in KERNELS}


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("test", CROSS_TESTS)
def test_dumped_for_another_boot(exports, kernel, test):
    _, runs = exports
    r = runs[kernel].expect_pass(f"zdtm.cet.{test}.from-{kernel}")
    assert fields(r)["outcome"] == "exported" and int(fields(r)["processes"]) >= 1, r


@pytest.mark.parametrize("source", KERNELS)
@pytest.mark.parametrize("target", KERNELS)
@pytest.mark.parametrize("test", CROSS_TESTS)
def test_restored_in_another_boot(imports, source, target, test):
    """source == target: another boot of the same kernel; else across kernels."""
    r = imports[target].expect_pass(f"zdtm.cet.{test}.from-{source}")
    assert fields(r)["outcome"] == "kept" and fields(r)["restore"] == "imported", r
