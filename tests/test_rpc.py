# SPDX-License-Identifier: GPL-2.0
"""CET tasks through CRIU's RPC, the way container runtimes call criu: the
ZDTM CET tests dumped and restored by `criu swrk` and by `criu service`
(lab/guest/rpc_cet.c, criu-cet's libcriu), a dump with --leave-running and
one that fails through the RPC, stock 4.1.1 beside; images made by another
CRIU restored through the RPC and the CLI, and a refused restore's reason
coming back through the RPC.  On this host
(no CET), shadow-stack images are refused before anything is forked, with
the reason, through the CLI and through `criu swrk` (pycriu)."""

import os
import subprocess

import pytest

from conftest import TOP, Boot, criu_rpc, fields, host_has_user_shstk, lab_results

BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
CRIU_CET = os.path.join(BUILD, "criu-cet", "criu")
KERNELS = ("stock", "patched")
TESTS = ("plain", "churn", "threads", "fibers", "fiber_thread", "locked", "wrss", "sighandler")
NO_SHSTK_HOST = "this host has no user shadow stacks"
LAB_BOOTS = {k: Boot("cet-rpc", k) for k in KERNELS}


@pytest.fixture(scope="session")
def rpc_lab():
    return {k: lab_results(LAB_BOOTS[k]) for k in KERNELS}


@pytest.mark.lab
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("way", ("swrk", "service"))
@pytest.mark.parametrize("test", TESTS)
def test_rpc_dump_restore(rpc_lab, kernel, way, test):
    r = rpc_lab[kernel].expect_pass(f"zdtm.cet.{test}.criu-cet.rpc-{way}")
    assert fields(r)["outcome"] == "kept" and fields(r)["via"] == way, r


@pytest.mark.lab
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("test", ("churn", "locked"))
def test_rpc_leave_running_and_failed_dump_keep_the_task(rpc_lab, kernel, test):
    r = rpc_lab[kernel].expect_pass(f"zdtm.cet.{test}.criu-cet.rpc-swrk-leave-running")
    assert fields(r)["outcome"] == "ran-on" and fields(r)["via"] == "swrk", r
    r = rpc_lab[kernel].expect_pass(f"zdtm.cet.{test}.criu-cet.rpc-swrk-dump-fail")
    assert fields(r)["outcome"] == "ran-on" and fields(r)["dump"] == "failed", r


@pytest.mark.lab
@pytest.mark.parametrize("kernel", KERNELS)
def test_stock_rpc_baseline(rpc_lab, kernel):
    rpc_lab[kernel].expect_pass("zdtm.cet.plain.stock-4.1.1.rpc-swrk")
    r = rpc_lab[kernel].get("zdtm.cet.locked.stock-4.1.1.rpc-swrk")
    assert r["status"] == "FAIL", f"stock CRIU now keeps the locked task: {r['detail']}"


@pytest.mark.lab
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("how", ("rpc", "cli"))
def test_images_of_another_criu_are_restored(rpc_lab, kernel, how):
    """Stock 4.1.1's images of the locked demo service (no criu-cet entry):
    restored with the image's features and SSP and every lock bit, said in
    the log; the service serves on."""
    f = fields(rpc_lab[kernel].expect_pass(f"{how}.adopt-other-criu"))
    assert (f["features"], f["locked"]) == ("shstk", "shstk,wrss"), f
    assert "all bits are locked" in f["why"], f     # criu-cet's log says what it did
    assert f["fault"] == "SEGV_CPERR", f            # a smash is still caught


@pytest.mark.lab
@pytest.mark.parametrize("kernel", KERNELS)
def test_a_refused_restore_says_why_through_rpc(rpc_lab, kernel):
    f = fields(rpc_lab[kernel].expect_pass("rpc.refuse"))
    assert f["why"].startswith("refused: ") and (f["task"], f["left"]) == ("running", "0"), f


# ---- this host, which has no CET ----

@pytest.fixture
def cet_images(exported, tmp_path):
    """A copy of the lab's CET service images; skipped on a CET host."""
    if host_has_user_shstk():
        pytest.skip("this host has user shadow stacks: nothing to refuse")
    dest = tmp_path / "img"
    subprocess.run(["cp", "-a", exported, str(dest)], check=True)
    return str(dest)


def demo_services():
    return subprocess.run(["pgrep", "-x", "demo_service"], capture_output=True, text=True).stdout.split()


def the_refusal(log):
    with open(log, errors="replace") as f:
        return [line for line in f if "Error" in line and NO_SHSTK_HOST in line]


@pytest.mark.lab
def test_host_without_cet_refuses_on_the_cli(cet_images):
    p = subprocess.run([CRIU_CET, "restore", "-D", cet_images, "-d", "-o", "restore.log", "-v4"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    assert the_refusal(os.path.join(cet_images, "restore.log"))
    assert not demo_services()


@pytest.mark.lab
def test_host_without_cet_refuses_through_rpc(cet_images):
    fd = os.open(cet_images, os.O_DIRECTORY)
    try:
        resp = criu_rpc(CRIU_CET, "RESTORE", images_dir_fd=fd, log_file="restore-rpc.log", log_level=4,
                        rst_sibling=True)
    finally:
        os.close(fd)
    assert not resp.success
    assert the_refusal(os.path.join(cet_images, "restore-rpc.log"))
    # cr_errmsg is the log's first error: ours, unless the host said something first
    # (root without CAP_SYS_RESOURCE: CRIU's RLIMIT_NOFILE error comes before it)
    assert resp.cr_errmsg
    if "RLIMIT_NOFILE" not in resp.cr_errmsg:
        assert NO_SHSTK_HOST in resp.cr_errmsg
    assert not demo_services()


# ---- a kernel with user shadow stacks off (clearcpuid=user_shstk) ----

@pytest.fixture(scope="session")
def no_shstk_lab(exported, tmp_path_factory):
    overlay = tmp_path_factory.mktemp("noshstk")
    dest = overlay / "lab" / "images" / "demo"
    dest.parent.mkdir(parents=True)
    subprocess.run(["cp", "-a", exported, str(dest)], check=True)
    return lab_results(Boot("cet-no-shstk", overlay=str(overlay), cmdline="clearcpuid=user_shstk", prefetch=False))


@pytest.mark.lab
def test_kernel_without_shstk_check_says_no(no_shstk_lab):
    f = fields(no_shstk_lab.expect_pass("noshstk.check"))
    assert f["user_shstk"] == "no" and "the kernel has user shadow stacks turned off" in f["why"], f


@pytest.mark.lab
@pytest.mark.parametrize("how", ("cli", "rpc"))
def test_kernel_without_shstk_refuses_cet_images(no_shstk_lab, how):
    f = fields(no_shstk_lab.expect_pass(f"noshstk.{how}-refused"))
    assert NO_SHSTK_HOST in f["why"] and f["left"] == "0", f


@pytest.mark.lab
@pytest.mark.parametrize("flavour", ("noshstk", "noshstk-rpc"))
def test_kernel_without_shstk_still_restores_plain_tasks(no_shstk_lab, flavour):
    r = no_shstk_lab.expect_pass(f"zdtm.cet.plain.criu-cet.{flavour}")
    assert fields(r)["outcome"] == "kept", r
