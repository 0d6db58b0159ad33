# SPDX-License-Identifier: GPL-2.0
"""A real CET userland in the emulated CET machine: the lab's glibc 2.41
built with --enable-cet (the glibc overlay, lab/overlays/cet-glibc.sh).

- Suite zdtm-cet-glibc: the ZDTM tests of test/zdtm/cet/glibc, linked against it
  and run with GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK, so that glibc's own
  code turns their shadow stacks on, locks them and moves SSP: contexts,
  longjmp, threads, dlopen, fork and exec, siglongjmp.  Without C/R, with
  criu-cet, and with stock CRIU 4.1.1 (whose results are the baseline).
- Suite criu-on-shstk: criu itself on glibc's locked shadow stack (criu
  relinked against the CET glibc), dumping and restoring every ZDTM CET
  test, also through criu swrk; stock 4.1.1 the same way beside it.
One boot per kernel runs both suites (the suite cet-glibc, glibc itself on
and off, is test_valkey.py's)."""

import pytest

from conftest import Boot, build_overlay, fields, lab_results, zdtm_cet_list

pytestmark = pytest.mark.lab


GLIBC_TESTS = [name for name, _ in zdtm_cet_list("glibc/glibc.list")]
STATIC_TESTS = [name for name, _ in zdtm_cet_list("lab.list")]
RPC_TESTS = ["plain", "locked", "churn"]
STOCK_ON_SHSTK = ["plain", "recursion", "threads", "locked", "fibers"]
LAB_BOOTS = {k: Boot("zdtm-cet-glibc,criu-on-shstk", k, "cet-glibc.sh") for k in ("stock", "patched")}


def overlay():
    """The glibc overlay; a host that cannot build the CET glibc skips, saying why."""
    folder, err = build_overlay("cet-glibc.sh")
    if err:
        pytest.skip(f"no CET glibc overlay: {err}")
    return folder


@pytest.fixture(scope="module", params=list(LAB_BOOTS))
def lab(request):
    overlay()
    return lab_results(LAB_BOOTS[request.param])


@pytest.mark.parametrize("test", GLIBC_TESTS)
def test_glibc_test_passes_without_cr(lab, test):
    lab.expect_pass(f"zdtm.cet.{test}.nocr")


@pytest.mark.parametrize("test", GLIBC_TESTS)
def test_glibc_mechanism_survives_criu_cet(lab, test):
    r = lab.expect_pass(f"zdtm.cet.{test}.criu-cet")
    assert fields(r)["outcome"] == "kept", r


@pytest.mark.parametrize("test", GLIBC_TESTS)
def test_stock_criu_glibc_baseline(lab, test):
    """Stock 4.1.1 loses glibc's lock (all 64 bits become SHSTK alone) in
    every one of them; a lost lock is a weaker task, never a pass."""
    r = lab.get(f"zdtm.cet.{test}.stock-4.1.1")
    assert r["status"] == "FAIL", r
    assert "'shstk wrss' -> 'shstk'" in r["detail"], r


def test_dlopen_refusal_is_glibcs(lab):
    r = lab.expect_pass("zdtm.cet.glibc_dlopen.criu-cet")
    assert "rebuild shared object with SHSTK support enabled" in r["detail"], r


@pytest.mark.parametrize("who", ["criu-cet", "criu-stock"])
def test_criu_runs_on_a_locked_shadow_stack(lab, who):
    f = fields(lab.expect_pass(f"criu-on-shstk.{who}.self"))
    assert (f["features"], f["locked"]) == ("shstk", "shstk,wrss"), f


@pytest.mark.parametrize("test", STATIC_TESTS + GLIBC_TESTS)
def test_criu_cet_on_a_shadow_stack(lab, test):
    r = lab.expect_pass(f"zdtm.cet.{test}.criu-cet.on-shstk")
    assert fields(r)["outcome"] == "kept", r


@pytest.mark.parametrize("test", RPC_TESTS)
def test_criu_cet_on_a_shadow_stack_through_swrk(lab, test):
    r = lab.expect_pass(f"zdtm.cet.{test}.criu-cet.on-shstk.rpc-swrk")
    assert fields(r)["outcome"] == "kept" and fields(r)["via"] == "swrk", r


@pytest.mark.parametrize("test", STOCK_ON_SHSTK)
def test_stock_criu_on_a_shadow_stack_baseline(lab, test):
    """Stock 4.1.1 on a shadow stack: a task without one comes back with
    criu's lock on it; a task with one is never restored (the restore
    hangs until the runner's limit in the lab runs so far)."""
    r = lab.get(f"zdtm.cet.{test}.stock-4.1.1.on-shstk")
    assert r["status"] == "FAIL", r
    if test == "plain":
        assert "locked: '' -> 'shstk wrss'" in r["detail"], r
