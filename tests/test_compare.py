# SPDX-License-Identifier: GPL-2.0
"""lab/reports/compare.py on made-up results: no lab needed."""

import io
import os
import subprocess

import compare


def res(status, test, flavour, detail=""):
    return {"status": status, "name": f"zdtm.cet.{test}.{flavour}", "detail": detail}


def run_doc(results, **kw):
    doc = {"stopped": None, "done": True, "panic": None, "results": results}
    doc.update(kw)
    return doc


def render(runs, width=40):
    out = io.StringIO()
    rc = compare.report(runs, width=width, out=out)
    return rc, out.getvalue().splitlines()


def test_split_name():
    assert compare.split_name("zdtm.cet.recursion.criu-cet") == ("recursion", "criu-cet")
    assert compare.split_name("zdtm.cet.plain.stock-4.1.1") == ("plain", "stock-4.1.1")
    assert compare.split_name("cet.enable") is None
    assert compare.split_name("zdtm.cet.nodot") is None


def test_table_rows_columns_and_summary():
    rc, lines = render([run_doc([
        res("PASS", "plain", "criu-cet"), res("PASS", "plain", "stock-4.1.1"),
        res("PASS", "recursion", "criu-cet", "1 C/R cycle, state kept"),
        res("FAIL", "recursion", "stock-4.1.1", "cycle 1: died after restore: killed by SIGSEGV"),
        res("PASS", "wrss", "criu-cet"), res("SKIP", "wrss", "stock-4.1.1", "no user_shstk"),
        res("PASS", "plain", "nocr"),       # other flavours are not columns
        {"status": "PASS", "name": "cet.enable", "detail": ""},   # not a ZDTM CET line
    ])])
    assert rc == 0
    assert lines[0].split() == ["test", "criu-cet", "stock-4.1.1"]
    rows = {ln.split()[0]: ln for ln in lines[2:] if ln and not ln.startswith("compare")}
    assert list(rows) == ["plain", "recursion", "wrss"]
    assert "FAIL: cycle 1: died after restore" in rows["recursion"]
    assert "SKIP: no user_shstk" in rows["wrss"]
    # a PASS cell is the bare word, details only for FAIL/SKIP
    assert rows["recursion"].split()[1] == "PASS" and "state kept" not in rows["recursion"]
    assert lines[-1] == "compare: criu-cet 3/3, stock-4.1.1 1/3"


def test_long_details_are_cut_to_the_column():
    rc, lines = render([run_doc([res("FAIL", "t", "criu-cet", "x" * 200),
                                 res("PASS", "t", "stock-4.1.1")])], width=30)
    row = [ln for ln in lines if ln.startswith("t ")][0]
    cell = row[len("test") + 2:][:30]
    assert cell.endswith("...") and len(cell) == 30
    assert row.rstrip().endswith("PASS")
    assert rc == 1


def test_exit_status_follows_criu_cet_only():
    stock_fails = [res("PASS", "a", "criu-cet"), res("FAIL", "a", "stock-4.1.1", "died")]
    assert render([run_doc(stock_fails)])[0] == 0
    ours_fails = [res("FAIL", "a", "criu-cet", "x"), res("PASS", "a", "stock-4.1.1")]
    assert render([run_doc(ours_fails)])[0] == 1
    ours_skips = [res("SKIP", "a", "criu-cet", "why"), res("PASS", "a", "stock-4.1.1")]
    assert render([run_doc(ours_skips)])[0] == 0


def test_missing_criu_cet_result_fails():
    rc, lines = render([run_doc([res("PASS", "a", "stock-4.1.1")])])
    assert rc == 1
    assert "-- no result" in [ln for ln in lines if ln.startswith("a ")][0]
    assert lines[-1] == "compare: criu-cet 0/1, stock-4.1.1 1/1"


def test_broken_or_empty_run_fails():
    ok = [res("PASS", "a", "criu-cet"), res("PASS", "a", "stock-4.1.1")]
    rc, lines = render([run_doc(ok, stopped="watchdog: no end after 900 s", done=False)])
    assert rc == 1 and any("lab run broke: watchdog" in ln for ln in lines)
    rc, lines = render([run_doc([])])
    assert rc == 1 and lines[-1] == "compare: criu-cet 0/0, stock-4.1.1 0/0"


def test_results_from_two_runs_merge():
    rc, lines = render([run_doc([res("PASS", "a", "criu-cet")]),
                        run_doc([res("FAIL", "a", "stock-4.1.1", "died")])])
    assert rc == 0 and lines[-1] == "compare: criu-cet 1/1, stock-4.1.1 0/1"


def test_upstream_column_when_it_ran():
    rc, lines = render([run_doc([res("PASS", "a", "criu-cet"), res("FAIL", "a", "stock-4.1.1", "died"),
                                 res("FAIL", "a", "criu-4.2.1", "restore: no shstk")])])
    assert rc == 0
    assert lines[0].split() == ["test", "criu-cet", "stock-4.1.1", "criu-4.2.1"]
    assert compare.split_name("zdtm.cet.a.criu-4.2.1") == ("a", "criu-4.2.1")
    assert "FAIL: restore: no shstk" in [ln for ln in lines if ln.startswith("a ")][0]
    assert lines[-1] == "compare: criu-cet 1/1, stock-4.1.1 0/1, criu-4.2.1 0/1"


def test_upstream_unavailable_changes_nothing_else():
    doc = run_doc([res("PASS", "a", "criu-cet"), res("PASS", "a", "stock-4.1.1")])
    out = io.StringIO()
    rc = compare.report([doc], width=40, out=out, unavailable="the pin left the archive")
    lines = out.getvalue().splitlines()
    assert rc == 0
    assert "unavailable: the pin left the archive" in [ln for ln in lines if ln.startswith("a ")][0]
    assert "compare: criu-4.2.1 unavailable: the pin left the archive" in lines
    assert lines[-1] == "compare: criu-cet 1/1, stock-4.1.1 1/1, criu-4.2.1 unavailable"


def test_upstream_overlay_says_why_when_4_2_1_cannot_be_had(tmp_path, monkeypatch):
    """The archive is unreachable (a mirror nobody serves): the column's reason
    comes back, exit 3, nothing built."""
    monkeypatch.setenv("BUILD", str(tmp_path / "build"))
    monkeypatch.setenv("CRIU_CET_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CRIU_CET_MIRROR", "http://127.0.0.1:9/debian")
    p = subprocess.run(["bash", os.path.join(compare.LAB, "overlays", "upstream.sh")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 3 and p.stdout == ""
    assert p.stderr.strip().splitlines()[-1] == \
        "CRIU 4.2.1 could not be fetched or built (lab/build/criu.sh 4.2.1)"
    assert not os.path.exists(tmp_path / "build" / "criu-4.2.1" / "criu")
    overlay, why = compare.upstream_overlay()
    assert overlay is None and "criu42" in why and "error" in why, why
