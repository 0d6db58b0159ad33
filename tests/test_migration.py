# SPDX-License-Identifier: GPL-2.0
"""Live migration of shadow-stack tasks in the lab, on both kernels: the
ZDTM CET tests (one thread, threads, fibers, a 384 KiB deep stack, and
churn, whose shadow stacks change all the time) through iterative pre-dumps
with memory tracking, a dump through the page server, a lazy-pages restore
(no page of a shadow stack served lazily), locally and over TCP from a page
server (post-copy), all of them in one flow; stock
4.1.1 beside the last.  Then images taken in one boot restored in another:
on the same kernel, and from the stock kernel on the patched one and back."""

import os

import pytest

import images
from conftest import LabResults, lab_run

pytestmark = pytest.mark.lab

KERNELS = ("stock", "patched")
TESTS = ("plain", "churn", "threads", "fibers", "fiber_thread", "deep")
FLOWS = ("predump", "page-server", "lazy", "migrate", "remote-lazy", "postcopy")
CROSS_TESTS = ("plain", "churn", "threads", "fibers", "fiber_thread", "locked")
LAB_RUNS = [(suite, k, None) for suite in ("cet-migrate", "cet-migrate-export") for k in KERNELS]


@pytest.fixture(scope="session")
def migrate():
    return {k: LabResults(lab_run("cet-migrate", k)) for k in KERNELS}


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("flow", FLOWS)
@pytest.mark.parametrize("test", TESTS)
def test_migration_flow(migrate, kernel, flow, test):
    r = migrate[kernel].expect_pass(f"zdtm.cet.{test}.criu-cet.{flow}")
    assert "state kept" in r["detail"]
    if flow in ("predump", "migrate", "postcopy"):
        assert "pre-dumps" in r["detail"]
    if flow in ("lazy", "migrate", "remote-lazy", "postcopy"):
        # the daemon served pages, and none into a shadow stack
        assert "lazy copies" in r["detail"] and "none into a shadow stack" in r["detail"]
    if flow in ("remote-lazy", "postcopy"):
        assert "over TCP" in r["detail"]
    if test == "churn":
        assert "every return intact" in r["detail"]


@pytest.mark.parametrize("kernel", KERNELS)
def test_stock_migration_baseline(migrate, kernel):
    """Stock 4.1.1 migrates the task without shadow stacks and loses churn's."""
    migrate[kernel].expect_pass("zdtm.cet.plain.stock-4.1.1.migrate")
    r = migrate[kernel].get("zdtm.cet.churn.stock-4.1.1.migrate")
    assert r["status"] == "FAIL", f"stock CRIU now migrates churn: {r['detail']}"


@pytest.fixture(scope="session")
def exports(tmp_path_factory):
    """Each kernel's boot dumps the tests; their archives go in one overlay."""
    overlay = tmp_path_factory.mktemp("migrate-overlay")
    dest = overlay / "lab" / "migrate"
    dest.mkdir(parents=True)
    runs = {}
    for k in KERNELS:
        run = lab_run("cet-migrate-export", k)
        runs[k] = LabResults(run)
        with open(os.path.join(run["folder"], "serial.log"), errors="replace") as f:
            raw = images.read_blob(f.read(), f"zdtm-from-{k}")
        (dest / f"zdtm-from-{k}.tar.gz").write_bytes(raw)
    return str(overlay), runs


@pytest.fixture(scope="session")
def imports(exports):
    overlay, _ = exports
    return {k: LabResults(lab_run("cet-migrate-import", k, overlay=overlay, tag="import")) for k in KERNELS}


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("test", CROSS_TESTS)
def test_dumped_for_another_boot(exports, kernel, test):
    _, runs = exports
    r = runs[kernel].expect_pass(f"zdtm.cet.{test}.from-{kernel}")
    assert "dumped for another boot" in r["detail"]


@pytest.mark.parametrize("source", KERNELS)
@pytest.mark.parametrize("target", KERNELS)
@pytest.mark.parametrize("test", CROSS_TESTS)
def test_restored_in_another_boot(imports, source, target, test):
    """source == target: another boot of the same kernel; else across kernels."""
    r = imports[target].expect_pass(f"zdtm.cet.{test}.from-{source}")
    assert "restored from another boot's images, state kept" in r["detail"]
