# SPDX-License-Identifier: GPL-2.0
"""criu-cet's `criu check --feature shadow_stack` and `criu --version` on this
host (no lab): the verdict follows /proc/cpuinfo's user_shstk, and a host
without it is told no, clearly, with a non-zero exit."""

import os
import subprocess

import pytest

from conftest import TOP, assert_shadow_stack_verdict, criu_rpc

BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
CRIU_CET = os.path.join(BUILD, "criu-cet", "criu")
CRIU_STOCK = os.path.join(BUILD, "criu-stock", "criu")


def run(*args):
    if not os.path.exists(args[0]):
        pytest.skip(f"{args[0]} is not built (make criu-cet criu-stock)")
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def test_version_names_criu_cet_and_keeps_the_base_version():
    ours = run(CRIU_CET, "--version").stdout.splitlines()
    stock = run(CRIU_STOCK, "--version").stdout.splitlines()
    assert ours[0] == "Version: 4.2.1"   # criu-cet's base; tools compare this line
    assert stock[0] == "Version: 4.1.1"
    assert ours[1].startswith("Flavour: criu-cet (CRIU 4.2.1 with x86 shadow-stack support")
    assert not any("criu-cet" in line for line in stock)


def test_check_feature_shadow_stack_on_this_host():
    assert_shadow_stack_verdict(run(CRIU_CET, "check", "--feature", "shadow_stack"))


def test_check_feature_is_unknown_to_stock_criu():
    p = run(CRIU_STOCK, "check", "--feature", "shadow_stack")
    assert p.returncode != 0 and "Unknown feature shadow_stack" in p.stderr + p.stdout


def test_check_all_reports_shadow_stack():
    p = run(CRIU_CET, "check", "--all")
    assert "shadow_stack: enabled for user space" in p.stdout


def rpc_version(binary):
    """The RPC version request through `criu swrk`, as go-criu asks it."""
    resp = criu_rpc(binary, "VERSION")
    assert resp.success
    return resp.version


def test_rpc_version_names_criu_cet():
    if not os.path.exists(CRIU_CET):
        pytest.skip("criu-cet is not built")
    v = rpc_version(CRIU_CET)
    assert (v.major_number, v.minor_number, v.sublevel) == (4, 2, 1) and v.name == "criu-cet"
    assert rpc_version(CRIU_STOCK).name != "criu-cet"
