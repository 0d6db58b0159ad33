# SPDX-License-Identifier: GPL-2.0
"""Host-only: the lab's result-line parser."""

import pytest

import protocol


def test_result_lines_anywhere_in_a_line():
    rep = protocol.parse(
        "[    1.0] random kernel text\n"
        "@@LAB BOOT kernel=6.12 uptime=1.2\n"
        "@@LAB SUITE basics\n"
        "@@LAB PASS cet.enable status=0x1 ssp=0x7ff\n"
        "[    2.0] audit: noise@@LAB FAIL cet.smash returned normally\n"
        "@@LAB SKIP cet.wrss no WRSS here\n"
        "@@LAB INFO boot-time 3.1\n"
        "@@LAB DONE uptime=9\n")
    assert rep.boot == "kernel=6.12 uptime=1.2"
    assert rep.suites == ["basics"]
    assert [(r.status, r.name) for r in rep.results] == [
        ("PASS", "cet.enable"), ("FAIL", "cet.smash"), ("SKIP", "cet.wrss")]
    assert rep.by_name()["cet.smash"].detail == "returned normally"
    assert rep.info == {"boot-time": "3.1"}
    assert rep.done and not rep.ok  # a FAIL makes the run not ok
    assert rep.summary() == "1 passed, 1 failed, 1 skipped"


def test_all_pass_is_ok_only_when_done():
    rep = protocol.parse("@@LAB PASS a x\n")
    assert not rep.ok
    protocol.feed(rep, "@@LAB DONE\n")
    assert rep.ok


def test_panic_is_recorded():
    rep = protocol.parse("@@LAB PASS a\n[ 3.2] Kernel panic - not syncing: Attempted to kill init!\n"
                         "@@LAB DONE\n")
    assert rep.panic.startswith("[ 3.2] Kernel panic")
    assert not rep.ok


@pytest.mark.parametrize("line", [
    "@@LAB BOGUS x y",
    "@@LAB PASS",
    "@@LAB FAIL -leading-dash detail",
    "@@LAB ",
])
def test_malformed_lines(line):
    with pytest.raises(ValueError):
        protocol.parse_line(line)
    rep = protocol.parse(line + "\n@@LAB DONE\n")
    assert rep.malformed and not rep.ok


def test_duplicate_results_are_malformed():
    rep = protocol.parse("@@LAB PASS a\n@@LAB PASS a\n@@LAB DONE\n")
    assert rep.malformed == ["duplicate result for a"]


def test_other_text_is_ignored():
    assert protocol.parse_line("LAB PASS a b") is None
    assert protocol.parse_line("") is None
