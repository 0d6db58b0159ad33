# SPDX-License-Identifier: GPL-2.0
"""runc in the emulated CET machine (lab/suites/runc.sh): Debian 12's runc
1.1.5 checkpoints and restores a container whose init runs on a shadow stack
(SHSTK and WRSS on and locked) with criu-cet and with stock CRIU 4.1.1 as its
criu, under a seccomp profile that allows map_shadow_stack and an older one
that does not; images of the other CRIU, a checkpoint that fails and one with
--leave-running.  One boot per kernel."""

import re

import pytest

from conftest import Boot, fields, lab_fixture

pytestmark = pytest.mark.lab

PROFILES = ["new", "old"]
# what map_shadow_stack answers in the container, before and after restore:
# runc answers ENOSYS for a syscall newer than any the profile names
MSS = {"new": "mss=ok", "old": "mss=ENOSYS"}
LAB_BOOTS = {k: Boot("runc", k, "runc.sh", cost=50) for k in ("stock", "patched")}
lab = lab_fixture(LAB_BOOTS)


def snapshot_fields(detail):
    """key=value words of a snapshot (the last occurrence of each key wins)."""
    return dict(w.split("=", 1) for w in detail.replace("[", " ").replace("]", " ").split() if "=" in w)


def test_setup(lab):
    f = fields(lab.expect_pass("runc.setup"))
    assert f["runc"].split("+")[0] == "1.1.5", f     # Debian's 1.1.5+ds1
    assert {"memory", "pids"} <= set(f["controllers"].split(",")), f


def test_criu_check_is_content(lab):
    """The kernel options asked by `criu check` are in; --all may still miss
    only what no container here uses (overlayfs, autofs, loginuid)."""
    r = lab.expect_pass("runc.criu-check")
    assert "userns" not in r["detail"], r


@pytest.mark.parametrize("prof", PROFILES)
def test_container_runs_on_a_shadow_stack(lab, prof):
    r = lab.expect_pass(f"runc.cet.{prof}.run")
    f = snapshot_fields(r["detail"])
    assert f["features"] == "shstk,wrss" and f["locked"] == "shstk,wrss", r
    assert f["seccomp"].startswith("2/"), r     # a filter, runc's profile
    assert MSS[prof] in r["detail"], r
    # the pid namespace: the host's pid is not the task's own
    host, own = f["nspid"].split(",")
    assert host == f["host"] and own == f["self"] and host != own, r


@pytest.mark.parametrize("prof", PROFILES)
def test_criu_cet_checkpoint_restore(lab, prof):
    lab.expect_pass(f"runc.cet.{prof}.checkpoint")
    lab.expect_pass(f"runc.cet.{prof}.restore")
    r = lab.expect_pass(f"runc.cet.{prof}.state")
    before, after = r["detail"].split(" after ")
    b, a = snapshot_fields(before), snapshot_fields(after)
    for k in ("self", "ssp", "features", "locked", "self_features", "self_locked", "seccomp", "mss", "ss"):
        assert b[k] == a[k], (k, r)
    assert a["features"] == "shstk,wrss" and a["locked"] == "shstk,wrss", r
    assert MSS[prof] in after, r
    assert lab.data["info"][f"runc.row.cet.{prof}"] == "checkpoint=ok restore=ok state=kept"
    assert a["ss"] == "1", r     # no shadow-stack mapping more than it had
    r = lab.expect_pass(f"runc.cet.{prof}.again")
    assert fields(r)["state"] == "kept" and snapshot_fields(r["detail"])["ss"] == "1", r
    # and still enforced: a smashed return address is a control-protection fault
    assert fields(lab.expect_pass(f"runc.cet.{prof}.protected"))["fault"] == "control-protection"


@pytest.mark.parametrize("prof", PROFILES)
def test_stock_loses_the_cet_state(lab, prof):
    """The baseline: stock 4.1.1 checkpoints and 'restores', and the task dies."""
    lab.expect_pass(f"runc.stock.{prof}.checkpoint")
    r = lab.get(f"runc.stock.{prof}.state")
    assert r["status"] == "FAIL", r
    assert "state=lost" in lab.data["info"][f"runc.row.stock.{prof}"]


def test_container_with_its_own_network_namespace(lab):
    """--empty-ns network and network-lock nftables from runc's CRIU config
    file: criu-cet restores it exactly; stock 4.1.1 dies reading that option
    (CRIU 4.2.1, criu-cet's base, has the fix) and the container runs on."""
    for step in ("run", "checkpoint", "restore"):
        lab.expect_pass(f"runc.cet.netns.{step}")
    assert fields(lab.expect_pass("runc.cet.netns.state"))["state"] == "kept"
    assert lab.data["info"]["runc.row.cet.netns"] == "checkpoint=ok restore=ok state=kept"
    r = lab.get("runc.stock.netns.checkpoint")
    assert r["status"] == "FAIL" and "unixpacket" in r["detail"], r
    lab.expect_pass("runc.stock.netns.kept-running")


@pytest.mark.parametrize("prof", PROFILES)
def test_stock_image_restored_by_criu_cet(lab, prof):
    """Stock 4.1.1's checkpoint of the CET container, restored by criu-cet:
    running, shadow stack on, every lock bit (the image has no lock mask),
    said in the log."""
    r = lab.expect_pass(f"runc.bad.stock-image-by-cet.{prof}")
    f = fields(r)
    assert f["state"] == "running" and "all bits are locked" in f["why"], f     # criu-cet's log
    # the features and locks the container had when stock checkpointed it
    run = lab.expect_pass(f"runc.stock.{prof}.run")["detail"]
    had = re.search(r"features=\S+ locked=\S+", run).group(0)
    assert had == "features=shstk,wrss locked=shstk,wrss" and had in r["detail"], (had, r["detail"])


@pytest.mark.parametrize("prof", PROFILES)
def test_cet_image_restored_by_stock_is_reported(lab, prof):
    """Stock 4.1.1 cannot know criu-cet's entry: what it does is the table's."""
    lab.expect_pass(f"runc.bad.cet-image-by-stock.{prof}")
    assert f"runc.row.stock-on-cet-image.{prof}" in lab.data["info"]


def test_failed_checkpoint_leaves_container_running(lab):
    f = fields(lab.expect_pass("runc.bad.dump-fail"))
    assert (f["outcome"], f["dump"]) == ("ran-on", "failed"), f


def test_leave_running(lab):
    lab.expect_pass("runc.cet.leave-running")


def test_no_pivot_container(lab):
    """runc run/restore --no-pivot: restored exactly, or the checkpoint refused
    with the container running on."""
    assert fields(lab.expect_pass("runc.cet.no-pivot"))["outcome"] in ("kept", "ran-on")


def test_no_strays(lab):
    assert "runc.strays" not in lab.by_name
