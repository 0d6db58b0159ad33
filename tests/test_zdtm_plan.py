# SPDX-License-Identifier: GPL-2.0
"""Host-only: the pieces around CRIU's zdtm.py in the lab.  zdtm_results.py
reads zdtm.py's own output (the lines below are in the formats zdtm.py 4.1.1
prints: print_sep, its progress line, grep_errors' bytes repr, a test's
FAIL line); zdtm_plan.py puts each test in one flavour and names the runs;
zdtm_matrix.py judges the targets."""

import os
import subprocess
import sys

from conftest import TOP

sys.path.insert(0, os.path.join(TOP, "test", "zdtm", "upstream"))
import zdtm_results  # noqa: E402
import zdtm_plan  # noqa: E402
import zdtm_matrix  # noqa: E402

OUTPUT = """\
=== Run 1/4 ====---------------- zdtm/static/env00
========================== Run zdtm/static/env00 in ns =========================
Start test
shstk-state: 1 thread(s) on a shadow stack
Run criu dump
Run criu restore
=========================== Test zdtm/static/env00 PASS ==========================
=== Run 2/4 ========------------ zdtm/static/maps02
========================== Run zdtm/static/maps02 in ns ========================
shstk-state: 1 thread(s) on a shadow stack
########################## Test zdtm/static/maps02 FAIL at maps compare ###########
Test output: ================================
12:00:01.123:    34: FAIL: maps02.c:88: Madvs are changed (errno = 0 (Success))
 <<< ================================
Skipping zdtm/static/rtc (no rtc feature)
=== Run 4/4 ================ zdtm/transition/file_aio
===================== Run zdtm/transition/file_aio in ns =======================
shstk-state: 1 thread(s) on a shadow stack
=[log]=> dump/zdtm/transition/file_aio/55/1/restore.log
------------------------ grep Error ------------------------
b'Error (criu/util.c:641): execvp("iptables-legacy-restore", ...) failed: No such file or directory'
b'(00.512345) Error (criu/pie/cet-restorer.c:330): cet: the kernel put the shadow stack at top 0x7f, not 0x7f+0x1000'
########### Test zdtm/transition/file_aio FAIL at CRIU restore ###########
======================== Run zdtm/static/sem in ns ========================
Test zdtm/static/sem FAIL at ['make', '--no-print-directory', '-C', 'zdtm/static', 'sem.pid']
Test output: ================================
12:00:02.000:     4: FAIL: sem.c:10: semget (errno = 38 (Function not implemented))
=== Run 5/5 ================ zdtm/static/pthread00
======================== Run zdtm/static/pthread00 in ns =======================
shstk-state: 3 thread(s) on a shadow stack
shstk-state: thread 12: locked 'shstk wrss' -> 'shstk'
############# Test zdtm/static/pthread00 FAIL at shadow stack compare ##############
======================== Run zdtm/static/pipe00 in ns =======================
shstk-state: 1 thread(s) on a shadow stack
shstk-state: lazy-pages copied 7 page run(s)
=========================== Test zdtm/static/pipe00 PASS ==========================
======================== Run zdtm/static/pipe01 in ns =======================
shstk-state: 1 thread(s) on a shadow stack
shstk-state: lazy-pages copied 3 page run(s)
shstk-state: process 1: lazy-pages copied 0x7f0000205000/4096 into the shadow stack 7f0000200000-7f0000206000
############# Test zdtm/static/pipe01 FAIL at shadow stack lazy pages ##############
"""


def test_results_one_verdict_a_test():
    r = zdtm_results.parse(OUTPUT)
    assert r["zdtm/static/env00"] == ("PASS", "", "shstk=1")
    assert r["zdtm/static/maps02"][0] == "FAIL"
    assert r["zdtm/static/maps02"][1].startswith("test: FAIL: maps02.c:88: Madvs are changed")
    assert r["zdtm/static/rtc"] == ("SKIP", "no rtc feature", "")
    status, why, shstk = r["zdtm/transition/file_aio"]
    assert status == "FAIL" and why.startswith("CRIU restore: criu/pie/cet-restorer.c:330: cet: the kernel put")
    assert why.endswith("0x7f+0x1000"), why
    assert r["zdtm/static/sem"][1] == "test: FAIL: sem.c:10: semget (errno = 38 (Function not implemented))"
    assert r["zdtm/static/pthread00"] == ("FAIL", "shadow stack: thread 12: locked 'shstk wrss' -> 'shstk'",
                                          "shstk=3")
    assert r["zdtm/static/pipe00"] == ("PASS", "", "shstk=1 lazy=7")
    assert r["zdtm/static/pipe01"] == ("FAIL", "shadow stack: process 1: lazy-pages copied 0x7f0000205000/4096 "
                                       "into the shadow stack 7f0000200000-7f0000206000", "shstk=1 lazy=3")


def test_results_lines_and_no_verdict(tmp_path):
    out, tests = tmp_path / "out", tmp_path / "list"
    out.write_text(OUTPUT + "zdtm.py was killed after its time limit of 300 s\n")
    tests.write_text("zdtm/static/env00\nzdtm/static/maps02\nzdtm/static/never\n")
    p = subprocess.run([sys.executable, os.path.join(TOP, "test", "zdtm", "upstream", "zdtm_results.py"),
                        "shstk.criu-cet.ns", str(out), str(tests)], capture_output=True, text=True, check=True)
    log = [ln for ln in p.stdout.splitlines() if ln.startswith("zdtm-log ")]
    assert "zdtm-log shstk.criu-cet.ns zdtm/static/maps02: shstk-state: 1 thread(s) on a shadow stack" in log
    lines = [ln for ln in p.stdout.splitlines() if not ln.startswith("zdtm-log ")]
    assert lines[0] == "@@LAB PASS zdtm.shstk.criu-cet.ns.zdtm/static/env00 shstk=1"
    assert lines[1].startswith("@@LAB FAIL zdtm.shstk.criu-cet.ns.zdtm/static/maps02 test: FAIL:")
    assert lines[2] == ("@@LAB FAIL zdtm.shstk.criu-cet.ns.zdtm/static/never no verdict: zdtm.py never ran it "
                        "(zdtm.py was killed after its time limit of 300 s)")
    assert lines[3] == "@@LAB INFO zdtm.shstk.criu-cet.ns passed=1 failed=2 skipped=0 total=3"


def test_plan_flavours_and_labels(tmp_path):
    tree = tmp_path / "test"
    for name, desc in (("a", None), ("b", "{'flavor': 'h'}"), ("c", "{'flavor': 'ns uns', 'flags': 'suid'}"),
                       ("d", "# a comment\n{'flavor': 'uns'}")):
        os.makedirs(tree / "zdtm" / "static", exist_ok=True)
        if desc:
            (tree / "zdtm" / "static" / f"{name}.desc").write_text(desc)
    tests = [f"zdtm/static/{n}" for n in "abcd"]
    plan = zdtm_plan.write(str(tree), tests, ["shstk:criu-cet", "shstk:criu-4.2.1:pre2"], str(tmp_path / "o"), "s")
    assert (tmp_path / "o" / "lists" / "s.ns").read_text() == "zdtm/static/a\nzdtm/static/c\n"
    assert (tmp_path / "o" / "lists" / "s.h").read_text() == "zdtm/static/b\n"
    assert (tmp_path / "o" / "lists" / "s.uns").read_text() == "zdtm/static/d\n"
    assert plan[0] == "shstk.criu-cet.ns shstk /lab/criu-cet/criu s.ns -f ns"
    assert "shstk.criu-4.2.1.pre2.h shstk /lab/criu-4.2.1/criu s.h -f h --pre 2" in plan
    runs = ["shstk:criu-4.2.1", "shstk:criu-4.2.1:pre2"]
    assert zdtm_plan.run_of("shstk.criu-4.2.1.pre2.ns", runs) == "shstk:criu-4.2.1:pre2"
    assert zdtm_plan.run_of("shstk.criu-4.2.1.ns", runs) == "shstk:criu-4.2.1"


def missed_targets(passing, runs, tests):
    """zdtm_matrix.targets() on the stock kernel, where only the (run, test)
    pairs of passing passed: (number missed, what it printed)."""
    cells = {("stock", run, test): ("PASS", "") for run, test in passing}
    lines = []

    class Out:
        def write(self, s):
            lines.append(s)
    return zdtm_matrix.targets(cells, ["stock"], runs, tests, Out()), "".join(lines), cells


def test_matrix_targets():
    tests = ["zdtm/static/a", "zdtm/static/b", "zdtm/static/c"]
    runs = ["plain:criu-cet", "plain:stock", "shstk:criu-cet", "shstk:stock"]
    # b: plain stock only; c: shstk stock passes, criu-cet does not
    missed, text, cells = missed_targets([("plain:criu-cet", "zdtm/static/a"), ("plain:stock", "zdtm/static/a"),
                                          ("plain:stock", "zdtm/static/b"), ("shstk:stock", "zdtm/static/c"),
                                          ("shstk:criu-cet", "zdtm/static/a")], runs, tests)
    assert missed == 2
    assert "zdtm/static/b passes with stock only" in text
    assert "zdtm/static/c fails with criu-cet, passes with shstk:stock" in text
    assert zdtm_matrix.summary_line(cells, "stock", runs, tests, 120) == \
        "zdtm: stock plain: criu-cet 1/3 criu-4.2.1 - stock 2/3; shstk: criu-cet 1/3 stock 1/3 criu-4.2.1 -; wall 2 min"
    assert zdtm_matrix.verdict([("PASS", ""), ("FAIL", "x")]) == ("FAIL", "x (1/2 passed)")


def test_matrix_plain_target_is_the_base_with_stock_beside():
    """criu-cet plain equals its base 4.2.1 both ways, and loses nothing
    stock 4.1.1 passes unless 4.2.1 loses it too (upstream's own change)."""
    tests = ["zdtm/static/a", "zdtm/static/b", "zdtm/static/c", "zdtm/static/d"]
    runs = ["plain:criu-cet", "plain:criu-4.2.1", "plain:stock"]
    # b: 4.2.1 only; c: stock only (4.2.1 fails it too: still a miss of criu-cet's)
    missed, text, _ = missed_targets([("plain:criu-cet", "zdtm/static/a"), ("plain:criu-4.2.1", "zdtm/static/a"),
                                      ("plain:criu-4.2.1", "zdtm/static/b"), ("plain:stock", "zdtm/static/c"),
                                      ("plain:criu-cet", "zdtm/static/d"), ("plain:criu-4.2.1", "zdtm/static/d"),
                                      ("plain:stock", "zdtm/static/d")], runs, tests)
    assert missed == 2
    assert "zdtm/static/b passes with criu-4.2.1 only" in text
    assert "zdtm/static/c passes with stock, not with criu-cet" in text


import shstk_state  # noqa: E402


def _proc(ss, locked="shstk wrss"):
    return {"1": {"threads": {"1": ("1", "shstk", locked, "S")}, "ss": ss, "ssp": {}}}


def test_shstk_state_sees_an_extra_or_lost_mapping():
    before = _proc(["7f0000-7f8000"])
    assert shstk_state.compare(before, _proc(["7f0000-7f8000"])) == []
    extra = shstk_state.compare(before, _proc(["7f0000-7f8000", "6f0000-6f8000"]))
    assert extra and "ss mappings 1 -> 2" in extra[0]
    assert shstk_state.compare(before, _proc([]))
    assert shstk_state.compare(before, _proc(["7f0000-7f8000"], locked="shstk")) == \
        ["thread 1: locked 'shstk wrss' -> 'shstk'"]


def test_shstk_state_new_ss_allows_exactly_n_new_or_none():
    """A .desc 'shstk_new_ss': N test: N new stacks by design on a stock
    kernel, none on one that says which stacks it owns; nothing lost."""
    before = _proc(["a-b", "c-d"])
    assert shstk_state.compare(before, _proc(["a-b", "c-d", "e-f", "g-h"]), new_ss=2) == []
    assert shstk_state.compare(before, _proc(["a-b", "c-d"]), new_ss=2) == []
    assert shstk_state.compare(before, _proc(["a-b", "c-d", "e-f"]), new_ss=2)
    assert shstk_state.compare(before, _proc(["a-b", "e-f", "g-h"]), new_ss=2)


def test_our_tests_must_pass_with_criu_cet_in_every_run():
    class Out:
        lines = []

        def write(self, s):
            self.lines.append(s)
    runs = ["plain:criu-cet", "plain:stock", "shstk:criu-cet"]
    ours = ["zdtm/cet/recursion", "zdtm/cet/plain"]
    cells = {("stock", "plain:criu-cet", "zdtm/cet/recursion"): ("PASS", ""),
             ("stock", "plain:criu-cet", "zdtm/cet/plain"): ("SKIP", "checkskip"),
             ("stock", "plain:stock", "zdtm/cet/recursion"): ("FAIL", "shadow stack: x"),
             ("stock", "shstk:criu-cet", "zdtm/cet/recursion"): ("FAIL", "CRIU dump: y")}
    assert zdtm_matrix.ours_targets(cells, ["stock"], runs, ours, Out()) == 2   # a FAIL, a missing result
    assert zdtm_matrix.ours_line(cells, "stock", runs, ours) == \
        "zdtm: stock ours (test/zdtm/cet): plain:criu-cet 1/2 plain:stock 0/2 shstk:criu-cet 0/2"


def test_shstk_state_leaves_out_a_stack_of_a_thread_coming_or_going(monkeypatch):
    """A mapping no live thread runs on counts only if it is still there a
    moment later (a timer thread that was ending: pthread_timers_h); one
    that stays (an orphan, a fiber's) counts."""
    reads = iter([["a-b", "c-d"], ["a-b", "c-d"]])
    monkeypatch.setattr(shstk_state, "_ss_ranges", lambda pid: next(reads))
    monkeypatch.setattr(shstk_state, "SETTLE_S", 0)
    one = {"1": ("10", "shstk", "shstk wrss", "S")}
    assert shstk_state._settled_ss("10", ["a-b", "c-d", "e-f"], one) == ["a-b", "c-d"]
    assert shstk_state._settled_ss("10", ["a-b", "c-d"], one) == ["a-b", "c-d"]
    assert shstk_state._settled_ss("10", ["a-b"], one) == ["a-b"]


def test_shstk_state_compares_our_tests_whole():
    class T:
        def __init__(self, name, static):
            self.name, self.st = name, static

        def static(self):
            return self.st

        def getname(self):
            return self.name
    assert shstk_state._holds_still(T("zdtm/static/env00", True))
    assert shstk_state._holds_still(T("zdtm/cet/recursion", False))
    assert not shstk_state._holds_still(T("zdtm/transition/fork", False))


def test_resume_keeps_tests_every_run_covered_however_chunked(tmp_path, monkeypatch):
    """--resume keeps a test only if a finished boot ran it through every run;
    a stopped boot counts for nothing, and new chunks do not reuse a number."""
    import json
    runs = ["plain:criu-cet", "shstk:criu-cet"]

    def boot(name, results, stopped=None):
        d = tmp_path / "lab-results" / f"zdtm-{name}"
        d.mkdir(parents=True)
        doc = {"results": [{"name": f"zdtm.{label}.{t}", "status": "PASS"} for label, t in results],
               "wall": 60}
        if stopped:
            doc["stopped"] = stopped
        (d / "results.json").write_text(json.dumps(doc))
    boot("stock-0-0", [("plain.criu-cet.h", "zdtm/static/env00"), ("shstk.criu-cet.ns", "zdtm/static/env00"),
                       ("plain.criu-cet.h", "zdtm/static/pipe00")])
    boot("stock-0-3", [("plain.criu-cet.h", "zdtm/static/fifo"), ("shstk.criu-cet.ns", "zdtm/static/fifo")],
         stopped="timeout")
    boot("flows-stock-0-7", [("shstk.criu-cet.pre2.h", "zdtm/static/env00")])
    monkeypatch.setattr(zdtm_matrix, "BUILD", str(tmp_path))
    monkeypatch.setattr(zdtm_matrix, "RECORD", str(tmp_path / "record"))
    kept, done, first = zdtm_matrix.earlier_boots("stock-0-", runs)
    assert [d["boot_name"] for d in kept] == ["stock-0-0"]
    assert done == {"zdtm/static/env00"}
    assert first == 4


def test_resume_goes_on_from_the_record_of_another_machine(tmp_path, monkeypatch):
    """Each finished boot goes into the record (verdicts and commit, not the
    console); a stopped one does not; --resume on a machine without the
    boots' build folders keeps what the record holds."""
    runs = ["plain:criu-cet", "shstk:criu-cet"]
    monkeypatch.setattr(zdtm_matrix, "BUILD", str(tmp_path / "build"))
    monkeypatch.setattr(zdtm_matrix, "RECORD", str(tmp_path / "record"))
    results = [{"name": f"zdtm.{label}.zdtm/static/env00", "status": "PASS", "serial": "x" * 100}
               for label in ("plain.criu-cet.h", "shstk.criu-cet.ns")]
    zdtm_matrix.record_boot({"boot_name": "patched-0-2", "kernel": "patched", "results": results, "wall": 9.6},
                            "abc")
    zdtm_matrix.record_boot({"boot_name": "patched-0-3", "kernel": "patched", "results": results,
                             "stopped": "timeout"}, "abc")
    assert sorted(os.listdir(tmp_path / "record")) == ["patched-0-2.json"]
    kept, done, first = zdtm_matrix.earlier_boots("patched-0-", runs)
    assert [(d["boot_name"], d["commit"], d["wall"]) for d in kept] == [("patched-0-2", "abc", 10)]
    assert "serial" not in kept[0]["results"][0]
    assert done == {"zdtm/static/env00"}
    assert first == 3


def test_flows_keep_what_criu_cet_passes_without_them():
    runs = ["shstk:criu-cet:pre2", "shstk:criu-cet:rpc"]
    tests = ["zdtm/static/env00", "zdtm/static/maps00", "zdtm/static/uffd-events"]
    base = {("stock", "shstk:criu-cet", t): ("PASS", "") for t in tests[:2]}
    cells = {("stock", "shstk:criu-cet:pre2", "zdtm/static/env00"): ("PASS", ""),
             ("stock", "shstk:criu-cet:pre2", "zdtm/static/maps00"): ("FAIL", "x"),
             ("stock", "shstk:criu-cet:rpc", "zdtm/static/env00"): ("SKIP", "nolazy"),
             ("stock", "shstk:criu-cet:rpc", "zdtm/static/maps00"): ("PASS", ""),
             ("stock", "shstk:criu-cet:rpc", "zdtm/static/uffd-events"): ("FAIL", "not judged")}

    class Out:
        def write(self, s):
            pass
    assert zdtm_matrix.flow_targets(cells, ["stock"], runs, tests, base, Out()) == 1
    assert zdtm_matrix.flows_line(cells, "stock", runs, tests, 600) == \
        "zdtm-flows: stock shstk criu-cet: pre2 1/3 rpc 1/3; wall 10 min"


RPC_LIMIT = """\
======================== Run zdtm/static/file_locks00 in ns =======================
shstk-state: 3 thread(s) on a shadow stack
############# Test zdtm/static/file_locks00 FAIL at RPC for --file-locks(--pidfile) required ##############
======================== Run zdtm/static/env00 in ns =======================
########### Test zdtm/static/env00 FAIL at RPC restore ###########
"""


def test_a_flag_zdtm_py_cannot_pass_over_rpc_is_a_skip_that_names_it():
    r = zdtm_results.parse(RPC_LIMIT)
    assert r["zdtm/static/file_locks00"] == ("SKIP", "zdtm.py's --rpc runner cannot pass --file-locks", "shstk=3")
    # any other failure at an RPC step is CRIU's and stays one
    assert r["zdtm/static/env00"][0] == "FAIL"
    # boots recorded before the rule are judged by it too
    doc = {"runs": ["shstk:criu-cet:rpc"], "boots": [{"kernel": "stock", "results": [
        {"name": "zdtm.shstk.criu-cet.rpc.ns.zdtm/static/cgroup00", "status": "FAIL",
         "detail": "zdtm.py: FAIL at RPC for --manage-cgroups(--pidfile) required shstk=3"},
        {"name": "zdtm.shstk.criu-cet.rpc.ns.zdtm/static/env00", "status": "FAIL",
         "detail": "zdtm.py: FAIL at RPC restore shstk=1"}]}]}
    cells = zdtm_matrix.collect(doc)
    assert cells[("stock", "shstk:criu-cet:rpc", "zdtm/static/cgroup00")] == \
        [("SKIP", "zdtm.py's --rpc runner cannot pass --manage-cgroups")]
    assert cells[("stock", "shstk:criu-cet:rpc", "zdtm/static/env00")][0][0] == "FAIL"


def test_shstk_state_sees_a_lazy_page_copied_into_a_shadow_stack(tmp_path):
    (tmp_path / "lazy-pages.log").write_text(
        "(00.100000) uffd: 41-5: Found 12 pages to be handled by UFFD\n"
        "(00.200000) uffd: 41-5: uffd_copy: 0x7f0000000000/4096\n"
        "(00.300000) uffd: 41-5: uffd_copy: 0x7f0000205000/8192\n"
        "(00.400000) uffd: 42-6: uffd_copy: 0x7f0000206000/4096\n")
    after = {41: {"ss": ["7f0000200000-7f0000206000"]}, 42: {"ss": []}}
    copies, wrong = shstk_state.lazy_into_ss(after, str(tmp_path))
    assert copies == 3 and wrong == ["process 41: lazy-pages copied 0x7f0000205000/8192 into the shadow stack "
                                     "7f0000200000-7f0000206000"]
    # zdtm.py names the test's dump folder: the log is in its last iteration's
    (tmp_path / "2").mkdir()
    (tmp_path / "10").mkdir()
    (tmp_path / "lazy-pages.log").rename(tmp_path / "10" / "lazy-pages.log")
    assert shstk_state.lazy_into_ss(after, str(tmp_path)) == (copies, wrong)
    copies, wrong = shstk_state.lazy_into_ss(after, str(tmp_path / "none"))
    assert copies == 0 and len(wrong) == 1 and wrong[0].startswith("no lazy-pages.log")


def test_suite_regex_selects_exactly_the_listed_tests(tmp_path):
    """zdtm-upstream.sh hands zdtm.py -T a regex of its list: names with . or +
    (zdtm/static/unlink_fstat01+) match themselves only."""
    import re
    src = open(os.path.join(TOP, "lab", "suites", "zdtm-upstream.sh")).read()
    fn = src[src.index("list_tests() {"):]
    fn = fn[:fn.index("\n}\n", fn.index("zdtm_regex() {")) + 3]
    lst = tmp_path / "list"
    lst.write_text("# a comment\nzdtm/static/unlink_fstat01+\n\nzdtm/static/env00  # why\n")
    for shell in ("bash", "busybox"):
        cmd = [shell] + (["sh"] if shell == "busybox" else []) + ["-c", fn + f'zdtm_regex "{lst}"']
        regex = re.compile(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip())
        assert regex.match("zdtm/static/unlink_fstat01+") and regex.match("zdtm/static/env00"), shell
        assert not regex.match("zdtm/static/unlink_fstat01") and not regex.match("zdtm/static/env000"), shell


FAKE_ZDTM = r'''
import os, re, sys, time
tests = ["zdtm/static/a", "zdtm/static/hangs", "zdtm/static/c"]
regex = re.compile(sys.argv[sys.argv.index("-T") + 1])
for t in filter(regex.match, tests):
    print("=" * 10 + f" Run {t} in ns " + "=" * 10, flush=True)
    if t.endswith("hangs"):
        if os.fork() == 0:          # a daemon of the run, out of zdtm.py's tree
            os.setsid()
            if os.fork() == 0:
                time.sleep(600)
            os._exit(0)
        time.sleep(600)
    print("=" * 10 + f" Test {t} PASS " + "=" * 10, flush=True)
'''


def run_processes(label):
    """The pids whose environment holds the mark of the suite's run LABEL."""
    pids = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if f"LAB_ZDTM_RUN={label}".encode() in f.read().split(b"\0"):
                    pids.append(int(d))
        except OSError:
            pass
    return pids


def test_suite_kills_a_hung_zdtm_py_and_runs_the_rest(tmp_path):
    """zdtm-upstream.sh bounds each zdtm.py: one that hangs in a test is
    killed with every process of its run (a daemon that left its tree too),
    says where each one waited, and the tests after it run in a new
    zdtm.py; the one that hung fails with no verdict."""
    src = open(os.path.join(TOP, "lab", "suites", "zdtm-upstream.sh")).read()
    fns = src[src.index("list_tests() {"):src.index("while read -r label")]
    (tmp_path / "zdtm.py").write_text(FAKE_ZDTM)
    lst = tmp_path / "list"
    lst.write_text("zdtm/static/a\nzdtm/static/hangs\nzdtm/static/c\n")
    out = tmp_path / "out"
    top = os.path.join(TOP, "test", "zdtm", "upstream")
    script = fns + f'top={top}; zdtm_run_all probe{os.getpid()} {tmp_path} /bin/true "" {lst} {out}; echo rc=$?'
    env = dict(os.environ, LAB_ZDTM_LIMIT_BASE="3", LAB_ZDTM_LIMIT_EACH="0")
    try:
        p = subprocess.run(["busybox", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=60)
    except subprocess.TimeoutExpired:
        p = None
    left = run_processes(f"probe{os.getpid()}")
    for pid in left:
        os.kill(pid, 9)
    assert p, "the suite did not end: its hung zdtm.py was not killed"
    assert p.stdout.strip().endswith("rc=0"), p.stdout + p.stderr
    assert f"zdtm-hang probe{os.getpid()}: zdtm.py: " in p.stdout
    assert "zdtm-leftover" in p.stdout
    assert not left, "processes of the run outlived it"
    text = out.read_text()
    assert "zdtm.py was killed after its time limit of 3 s" in text
    results = zdtm_results.parse(text)
    assert results["zdtm/static/a"][0] == results["zdtm/static/c"][0] == "PASS"
    assert results["zdtm/static/hangs"][0] == "FAIL" and "no verdict" in results["zdtm/static/hangs"][1]
    assert zdtm_results.unreached(text, ["zdtm/static/a", "zdtm/static/hangs", "zdtm/static/c"]) == []


def test_suite_runs_manual_tests_by_name(tmp_path):
    """--manual in a plan line's options: zdtm.py gets each test of the list
    with -t (its noauto tests run only so), no -T, and not --manual."""
    src = open(os.path.join(TOP, "lab", "suites", "zdtm-upstream.sh")).read()
    fns = src[src.index("list_tests() {"):src.index("while read -r label")]
    (tmp_path / "zdtm.py").write_text("import sys\nprint(' '.join(sys.argv[1:]))\n")
    lst = tmp_path / "list"
    lst.write_text("zdtm/transition/thread-bomb  # why\nzdtm/static/env00\n")
    out = tmp_path / "out"
    for manual, expect in ((True, "-f ns --iters 3 -t zdtm/transition/thread-bomb -t zdtm/static/env00"),
                           (False, "-f ns --iters 3 -T ^(zdtm/transition/thread-bomb|zdtm/static/env00)$")):
        out.unlink(missing_ok=True)
        opts = "-f ns --manual --iters 3" if manual else "-f ns --iters 3"
        script = fns + f"zdtm_run probe {tmp_path} /bin/true '' {lst} {out} {opts}"
        subprocess.run(["busybox", "sh", "-c", script], check=True, timeout=60)
        assert out.read_text().strip() == "run --keep-going --fork-ct --criu-bin /bin/true " + expect


def test_plan_runs_a_lists_manual_tests_by_name(tmp_path):
    """zdtm_plan write --manual: the list's noauto tests get MANUAL_RUNS
    (run by name), after the list's own runs, which zdtm.py skips them in."""
    tree = tmp_path / "test"
    for t, desc in (("zdtm/static/env00", "{}"), ("zdtm/transition/thread-bomb", "{'flags': 'noauto'}")):
        (tree / t).parent.mkdir(parents=True, exist_ok=True)
        (tree / (t + ".desc")).write_text(desc)
    lst = tmp_path / "list"
    lst.write_text("zdtm/static/env00\nzdtm/transition/thread-bomb\n")
    out = tmp_path / "plan"
    zdtm_plan.main(["write", "--tree", str(tree), "--tests", str(lst), "--runs", "shstk:criu-cet",
                    "--manual", "--out", str(out)])
    plan = (out / "plan").read_text().splitlines()
    assert plan[0] == "shstk.criu-cet.ns shstk /lab/criu-cet/criu sample.ns -f ns"
    assert plan[1:] == ["shstk.criu-cet.manual.iters3.ns shstk /lab/criu-cet/criu manual.ns -f ns --manual --iters 3",
                        "shstk.stock.manual.ns shstk /lab/criu-stock/criu manual.ns -f ns --manual"]
    assert (out / "lists" / "manual.ns").read_text() == "zdtm/transition/thread-bomb\n"
    key = zdtm_plan.verdict_key("zdtm.shstk.criu-cet.manual.iters3.ns.zdtm/transition/thread-bomb",
                                zdtm_plan.MANUAL_RUNS)
    assert key == ("shstk:criu-cet:manual:iters3", "zdtm/transition/thread-bomb")


def test_sample_plan_gives_stock_two_of_ours(tmp_path):
    """make test's plan (zdtm_plan write --sample --ours): criu-cet runs the
    sample and all our tests, stock 4.1.1 the sample and STOCK_OURS, then
    the manual-only tests by name."""
    tree = tmp_path / "test"
    ours = ["zdtm/cet/plain", "zdtm/cet/recursion", "zdtm/cet/threads"]
    for t, desc in [("zdtm/static/env00", "{}"), ("zdtm/transition/thread-bomb", "{'flags': 'noauto'}")] + \
            [(t, "{}") for t in ours]:
        (tree / t).parent.mkdir(parents=True, exist_ok=True)
        (tree / (t + ".desc")).write_text(desc)
    sample, our_list = tmp_path / "sample", tmp_path / "ours"
    sample.write_text("zdtm/static/env00\nzdtm/transition/thread-bomb\n")
    our_list.write_text("".join(t + "\n" for t in ours))
    out = tmp_path / "plan"
    zdtm_plan.main(["write", "--tree", str(tree), "--sample", str(sample), "--ours", str(our_list),
                    "--out", str(out)])
    plan = (out / "plan").read_text().splitlines()
    assert plan[:2] == ["shstk.criu-cet.ns shstk /lab/criu-cet/criu sample.ns -f ns",
                        "shstk.stock.ns shstk /lab/criu-stock/criu sample-stock.ns -f ns"]
    assert [line.split()[0] for line in plan[2:]] == ["shstk.criu-cet.manual.iters3.ns", "shstk.stock.manual.ns"]
    assert (out / "lists" / "sample.ns").read_text().split() == \
        ["zdtm/static/env00", "zdtm/transition/thread-bomb"] + ours
    assert (out / "lists" / "sample-stock.ns").read_text().split() == \
        ["zdtm/static/env00", "zdtm/transition/thread-bomb"] + zdtm_plan.STOCK_OURS
