# SPDX-License-Identifier: GPL-2.0
"""podman in the emulated CET machine (lab/suites/podman.sh): Debian 12's
podman 4.3.1 (conmon 2.1.6, runc 1.1.5, vfs storage, cgroupfs) checkpoints
valkey on the CET glibc with `podman container checkpoint --export` and
restores it with `podman container restore --import`, criu-cet as runc's
criu: on one machine (plain, --tcp-established with a client on one
connection, --pre-checkpoint then --with-previous), and from machine A to
machine B over the lab network.  The restored valkey has the same data,
every thread the shadow-stack features and locks it had, the same count of
shadow-stack mappings, and a smashed return is still caught.  Stock CRIU
4.1.1 on the same steps is reported, not judged.

Not in make test yet: its boots run with LAB_MIGRATE_ALL=1 (make
migrate-net) until a sample is chosen."""

import os
import re

import pytest

from conftest import Boot, fields, lab_fixture

ALL = os.environ.get("LAB_MIGRATE_ALL") == "1"
ONLY_ALL = pytest.mark.skipif(not ALL, reason="make migrate-net's (LAB_MIGRATE_ALL=1); "
                              "podman's boots are not in make test's sample")
pytestmark = [pytest.mark.lab, ONLY_ALL]

# migrate, runc and podman overlays in one folder (lab/overlays/podman.sh)
OVERLAY = "podman.sh guest"
LOCAL_ROWS = ("local", "local-tcp", "local-pre")
MIGRATE_ROWS = ("migrate", "migrate-tcp", "migrate-pre")
# one machine on either kernel (criu-cet reads the shadow-stack state
# through the patched kernel's regset there), two on the stock one
BOOTS = {**{f"local-{k}": Boot("podman", k, OVERLAY, tag="local", timeout=1800,
                               cmdline="pm.rows=" + ",".join(LOCAL_ROWS)) for k in ("stock", "patched")},
         "migrate": Boot("podman", "stock", OVERLAY, tag="migrate", peer="podman", timeout=2400,
                         cmdline="pm.rows=" + ",".join(MIGRATE_ROWS))}
LAB_BOOTS = BOOTS if ALL else {}

one = lab_fixture({k: BOOTS[k] for k in ("local-stock", "local-patched")})
pair = lab_fixture({"migrate": BOOTS["migrate"]})

# a thread of ctr_cet's list: its pid in the container, features, locks
THREAD = re.compile(r"(\d+):([a-z,-]+)/([a-z,-]+)")


def threads(cet):
    """{pid: (features, locked)} of a cet= field, and its ss= count."""
    body, _, ss = cet.rpartition("+ss=")
    return {int(p): (f, l) for p, f, l in THREAD.findall(body)}, int(ss)


def check_row(lab, row):
    """One row's verdicts on criu-cet: started on locked shadow stacks,
    checkpointed (every thread's full lock mask in criu-cet's log),
    restored with the same digest, per-thread CET state and mapping count,
    and a smash caught."""
    run = fields(lab.expect_pass(f"podman.cet.{row}.run"))
    before, ss = threads(run["cet"])
    assert len(before) >= 5 and ss >= len(before), run
    assert all(v == ("shstk", "shstk,wrss") for v in before.values()), run
    ckpt = fields(lab.expect_pass(f"podman.cet.{row}.checkpoint"))
    assert ckpt["criu"].startswith("4.2.1") and int(ckpt["full_locks"]) == len(before), ckpt
    assert int(ckpt["tar_bytes"]) > 0, ckpt
    if "pre" in row:
        # the final checkpoint writes only what changed since the pre one
        assert 0 < int(ckpt["pages"]) < int(ckpt["pre_pages"]), ckpt
    rst = fields(lab.expect_pass(f"podman.cet.{row}.restore"))
    assert rst["criu"].startswith("4.2.1"), rst
    data = fields(lab.expect_pass(f"podman.cet.{row}.data"))
    # the data at the checkpoint (a pre row rewrites keys after its
    # pre-checkpoint: a digest of its own)
    assert data["digest"] == ckpt["digest"] == rst["digest"] and data["write"] == "OK+yes+1", data
    assert ("pre" in row) != (ckpt["digest"] == run["digest"]), (run, ckpt)
    cet = fields(lab.expect_pass(f"podman.cet.{row}.cet"))
    assert threads(cet["cet"]) == (before, ss), (cet, run)
    if "tcp" in row:
        client = fields(lab.expect_pass(f"podman.cet.{row}.client"))
        assert client["lost"] == "0" and client["mismatched"] == "0" and int(client["acked"]) > 0, client
    assert fields(lab.expect_pass(f"podman.cet.{row}.smash"))["smash"] == "cp-fault"


def test_setup(one):
    r = one.expect_pass("podman.setup")
    assert "podman version 4.3.1" in r["detail"]
    # cgroup v2 through cgroupfs, vfs storage, the lab's runc and conmon
    assert "v2 cgroupfs vfs /lab/runc/runc /lab/podman/conmon" in r["detail"], r
    assert re.fullmatch(r"[0-9a-f]{64}", fields(one.expect_pass("podman.load"))["image"])


@pytest.mark.parametrize("row", LOCAL_ROWS)
def test_one_machine(one, row):
    check_row(one, row)


@pytest.mark.parametrize("row", LOCAL_ROWS)
def test_stock_reported(one, row):
    """Stock 4.1.1's outcome on the same steps is an INFO line, whatever it
    is (it does not keep the locks: reported, not judged)."""
    assert one.data["info"].get(f"podman.stock.{row}.checkpoint") or \
        one.data["info"].get(f"podman.stock.{row}.run"), one.data["info"]


def test_cost_reported(one):
    """Every podman command's guest seconds: run, checkpoint, restore."""
    cost = fields({"detail": one.data["info"]["podman.cost"]})
    for row in LOCAL_ROWS:
        for what in ("run", "checkpoint", "restore"):
            assert float(cost[f"{what}-cet-{row}"]) > 0, cost


def test_same_image_on_both_machines(pair):
    pair.expect_pass("podman.image")
    assert not [r for r in pair.data["peer"]["results"] if r["status"] == "FAIL"], pair.data["peer"]


@pytest.mark.parametrize("row", MIGRATE_ROWS)
def test_two_machines(pair, row):
    check_row(pair, row)
