# SPDX-License-Identifier: GPL-2.0
"""Hostile images, fuzzed (lab/reports/fuzz.py): the judge on made-up reports, and a
fixed-seed sample of damaged images restored in the lab (make fuzz runs 600).
Every copy must be refused with a message or restored to the state its image
describes: no crash, no hang, no task left behind."""

import io
import os

import pytest

import fuzz
from conftest import Boot, LabResults, lab_run

SAMPLE = int(os.environ.get("FUZZ_SAMPLE", "96"))
SEED = 12
EXPECT = {"features": "shstk", "locked": "shstk wrss", "ss": "7f00-8000", "extra_ok": False}


def rep(text):
    return fuzz.parse_report(text)


def test_parse_report_msg_takes_the_rest():
    r = rep("rc=1 secs=0.40 alive=- features=shstk+wrss ss=1-2 stray= msg=Error (cet: x) a=b")
    assert r["rc"] == "1" and r["features"] == "shstk wrss" and r["stray"] == ""
    assert r["msg"] == "Error (cet: x) a=b"


@pytest.mark.parametrize("text,cls", [
    ("rc=1 secs=0.4 alive=- stray= msg=Error (cet-restore-args.c:12): cet: bad SSP", "refused"),
    ("rc=1 secs=0.4 alive=- stray= msg=", "unclear"),
    ("rc=139 secs=0.4 alive=- stray= msg=", "crash"),
    ("rc=137 secs=30.0 alive=- stray= msg=", "hang"),
    ("rc=1 secs=0.4 alive=- stray=77:criu msg=Error x", "stray"),
    ("rc=0 secs=0.4 alive=yes features=shstk locked=shstk+wrss ss=7f00-8000 stray= msg=", "restored"),
    ("rc=0 secs=0.4 alive=yes features= locked=shstk+wrss ss=7f00-8000 stray= msg=", "differs"),
    ("rc=0 secs=0.4 alive=yes features=shstk locked=shstk+wrss ss= stray= msg=", "differs"),
    ("rc=0 secs=0.4 alive=no stray= msg=demo_service[39] control protection", "described"),
])
def test_judge(text, cls):
    assert fuzz.judge(rep(text), EXPECT)[0] == cls


def test_judge_missing_report_and_a_new_kernel_stack_for_own_unknown():
    assert fuzz.judge(None, EXPECT)[0] == "missing"
    two = "rc=0 secs=0.4 alive=yes features=shstk locked=shstk+wrss ss=7f00-8000,9000-a000 stray= msg="
    assert fuzz.judge(rep(two), EXPECT)[0] == "differs"
    assert fuzz.judge(rep(two), dict(EXPECT, extra_ok=True))[0] == "restored"


def test_report_counts_and_fails_on_any_failure():
    v = [fuzz.Variant("0000"), fuzz.Variant("0001")]
    out = io.StringIO()
    assert fuzz.report({"0000": ("refused", "x"), "0001": ("restored", "y")}, v, out=out) == 0
    assert out.getvalue().splitlines()[-1] == ("fuzz: refused 1, restored 1, described 0, crash 0, "
                                                "hang 0, stray 0, unclear 0, differs 0, missing 0, control 0; "
                                                "2 images, 0 failures")
    assert fuzz.report({"0000": ("hang", "x"), "0001": ("restored", "y")}, v, out=io.StringIO()) == 1


@pytest.mark.lab
def test_variants_are_fixed_by_the_seed_and_damage_something(exported):
    a = fuzz.make_variants(exported, 30, SEED)
    b = fuzz.make_variants(exported, 30, SEED)
    assert [(v.what, v.files) for v in a] == [(v.what, v.files) for v in b]
    assert all(v.files for v in a)
    kinds = {w.split("=")[0].split("[")[0] for v in a for w in v.what}
    assert any(k.startswith("cet.") for k in kinds) and any(k.startswith("vma") for k in kinds)
    assert any(k.endswith(".img") for k in kinds)


@pytest.mark.lab
def test_damaged_images_sample(exported, tmp_path_factory):
    variants = fuzz.make_variants(exported, SAMPLE, SEED)
    expects = {v.ident: fuzz.expected_state(exported, v) for v in variants}
    overlay = str(tmp_path_factory.mktemp("fuzz-overlay"))
    fuzz.write_overlay(exported, variants, overlay)
    run = lab_run(Boot("cet-fuzz", overlay=overlay, prefetch=False))
    LabResults(run).expect_pass("fuzz.ran")
    verdicts = fuzz.tally(run["info"], variants, expects)
    out = io.StringIO()
    rc = fuzz.report(verdicts, variants, out=out)
    print(out.getvalue())
    assert rc == 0, out.getvalue()
    counts = {c: sum(1 for k, _ in verdicts.values() if k == c) for c in fuzz.GOOD}
    # the sample really exercises both ways out
    assert counts["refused"] >= SAMPLE // 4 and counts["restored"] >= 1, counts


def test_the_intact_control_must_come_back():
    v = [fuzz.Variant("0000")]
    ok = "rc=0 secs=0.4 alive=yes features=shstk locked=shstk+wrss ss=7f00-8000 stray= msg="
    verdicts = fuzz.tally({"fuzz.0000": "rc=1 secs=0.1 stray= msg=Error x", "fuzz.ctl": ok},
                          v, {"0000": EXPECT})
    assert verdicts == {"0000": ("refused", "Error x")}
    verdicts = fuzz.tally({"fuzz.0000": "rc=1 secs=0.1 stray= msg=Error x",
                           "fuzz.ctl": "rc=1 secs=0.1 stray= msg=Error pid busy"}, v, {"0000": EXPECT})
    assert verdicts["ctl"][0] == "control"
    assert fuzz.report(verdicts, v, out=io.StringIO()) == 1
