# SPDX-License-Identifier: GPL-2.0
"""One verdict line a test from what CRIU's zdtm.py printed.

    zdtm_results.py LABEL ZDTM_OUTPUT [TEST_LIST]
    zdtm_results.py --unreached ZDTM_OUTPUT TEST_LIST

reads zdtm.py's standard output (a `run -F TEST_LIST --keep-going` run)
and prints, for each test, a lab protocol line

    @@LAB PASS|FAIL|SKIP zdtm.LABEL.<test> <why> shstk=<threads> [lazy=<copies>]

<why> is, for a failure, the first thing that names the cause: the test's
own FAIL/ERR line, the first error CRIU logged, the shadow-stack check's
first difference, or the step zdtm.py failed at; for a skip, zdtm.py's
reason.  shstk= is how many threads of the test ran on a shadow stack when
zdtm.py took its state before the dump (zdtm.py-shstk-state.patch prints
it); lazy=, in the lazy-pages flows, how many page runs criu lazy-pages
copied (none may land in a shadow stack).  A test of TEST_LIST that
zdtm.py never reported fails with "no verdict": nothing is skipped
silently.  The last line is a summary:

    @@LAB INFO zdtm.LABEL passed=P failed=F skipped=S total=N

With --unreached it prints the tests of TEST_LIST that zdtm.py never
started nor skipped, one a line: after a zdtm.py killed in a test that
hung, the suite runs those in a new one.

Before it, for each failed test, the last LOG_LINES lines zdtm.py printed
for it, as "zdtm-log LABEL TEST: <line>", for whoever reads the console.
"""

import re
import sys

# the test's own zdtm.py process prints it, in order with the rest of its
# output (the launcher's "=== Run i/N" progress line may come out of order:
# its stdout is buffered when it is a file)
RUN = re.compile(r"^=+ Run (\S+) in (\S+) =+$")
SKIP = re.compile(r"^Skipping (\S+) \((.*)\)$")
# print_sep: the title centred in '=' or '#', or alone when it is longer
VERDICT = re.compile(r"^[=#]* ?Test (\S+) (PASS|FAIL)(?: at (.*?))? ?[=#]*$")
TEST_FAIL = re.compile(r"^(?:.*\s)?(FAIL|ERR): (.*)$")
CRIU_ERROR = re.compile(r"Error \((\S+)\): (.*?)['\"]?$")
SHSTK_COUNT = re.compile(r"^shstk-state: (\d+) thread")
SHSTK_LAZY = re.compile(r"^shstk-state: lazy-pages copied (\d+) ")
SHSTK_DIFF = re.compile(r"^shstk-state: (?!\d+ thread|lazy-pages copied \d+ )(.*)$")


# zdtm.py's --rpc runner (criu_rpc.__set_opts) has no request field for
# some CRIU options (--manage-cgroups, --file-locks, --ghost-limit, ...) and
# fails the test before any CRIU is asked: a limit of zdtm.py, the same for
# every CRIU, so the test is skipped in that flow with the option named
RPC_CANNOT = re.compile(r"^RPC for (\S+?)(?:\(.*\))? required$")


def runner_limit(step):
    """The skip reason when zdtm.py failed at STEP before asking CRIU, or None."""
    m = RPC_CANNOT.match(step or "")
    return f"zdtm.py's --rpc runner cannot pass {m.group(1)}" if m else None


def clean(text, width=200):
    """One line of plain text, as the protocol wants it."""
    return re.sub(r"[^ -~]", "?", " ".join(text.split()))[:width]


# CRIU error lines of passing runs too: CRIU 4.1.1 asks for the legacy
# iptables tools (iptables-legacy-restore -V), which a system with the nft
# backend alone (the lab) lacks, and logs that at error level
BENIGN = re.compile(r"-legacy")


def why_failed(lines, step):
    """The first line that says why: for a failed shadow-stack check its
    first difference; for a failed CRIU step CRIU's first error; else the
    test's own FAIL/ERR line; then whichever of those there is."""
    def first(pattern):
        for line in lines:
            m = pattern.search(line)
            if m and not (pattern is CRIU_ERROR and BENIGN.search(line)):
                return m
        return None

    order = [TEST_FAIL, CRIU_ERROR, SHSTK_DIFF]
    if step in ("shadow stack compare", "shadow stack lazy pages"):
        order = [SHSTK_DIFF, CRIU_ERROR, TEST_FAIL]
    elif (step or "").startswith("CRIU"):
        order = [CRIU_ERROR, TEST_FAIL, SHSTK_DIFF]
    for pattern in order:
        m = first(pattern)
        if m and pattern is TEST_FAIL:
            return f"test: {m.group(1)}: {m.group(2)}"
        if m and pattern is CRIU_ERROR:
            return f"{step or 'criu'}: {m.group(1)}: {m.group(2)}"
        if m:
            return f"shadow stack: {m.group(1)}"
    return f"zdtm.py: FAIL at {step}" if step else "zdtm.py: failed"


LOG_LINES = 30


def parse_blocks(text):
    """({test: its lines}, {test: skip reason})."""
    blocks, skipped, current = {}, {}, None
    for line in text.splitlines():
        m = RUN.match(line)
        if m:
            current = m.group(1)
            blocks.setdefault(current, [])
            continue
        m = SKIP.match(line)
        if m:
            skipped[m.group(1)] = m.group(2)
        elif current:
            blocks[current].append(line)
    return blocks, skipped


def parse(text):
    """{test: (status, why, extra words of the verdict)} in the order seen:
    shstk=<threads on a shadow stack>, lazy=<page runs lazy-pages copied>.
    A test's block runs from its "Run <test> in <flavour>" line to the
    next one: zdtm.py prints the test's own output after the FAIL verdict."""
    blocks, skipped = parse_blocks(text)
    results = {t: ("SKIP", why, "") for t, why in skipped.items()}
    for test, lines in blocks.items():
        shstk, lazy, verdict = None, None, None
        for line in lines:
            m = SHSTK_COUNT.match(line)
            if m:
                shstk = int(m.group(1))
            m = SHSTK_LAZY.match(line)
            if m:
                lazy = int(m.group(1))
            m = VERDICT.match(line)
            if m and m.group(1) == test and verdict is None:
                verdict = m.groups()[1:]
        extra = " ".join(f"{k}={v}" for k, v in (("shstk", shstk), ("lazy", lazy)) if v is not None)
        if verdict is None:
            results[test] = ("FAIL", "no verdict: zdtm.py printed none for it (it died, or was killed, mid-test)",
                             extra)
        elif verdict[0] == "PASS":
            results[test] = ("PASS", "", extra)
        elif runner_limit(verdict[1]):
            results[test] = ("SKIP", runner_limit(verdict[1]), extra)
        else:
            results[test] = ("FAIL", why_failed(lines, verdict[1]), extra)
    return results


def read_list(path):
    """The tests of a list file: one a line, '#' comments."""
    with open(path) as f:
        return [t for t in (line.split("#", 1)[0].strip() for line in f) if t]


def unreached(text, tests):
    """The tests zdtm.py neither started (no "Run" line) nor skipped."""
    blocks, skipped = parse_blocks(text)
    return [t for t in tests if t not in blocks and t not in skipped]


def main(argv):
    if argv[:1] == ["--unreached"] and len(argv) == 3:
        with open(argv[1], errors="replace") as f:
            print("\n".join(unreached(f.read(), read_list(argv[2]))))
        return 0
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    label, output = argv[0], argv[1]
    with open(output, errors="replace") as f:
        text = f.read()
    results, blocks = parse(text), parse_blocks(text)[0]
    tests = list(results)
    if len(argv) > 2:
        tests = read_list(argv[2])
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    # how zdtm.py ended, when the suite had to stop it
    killed = [ln for ln in text.splitlines() if ln.startswith("zdtm.py was killed")]
    ended = f" ({killed[0]})" if killed else ""
    for test in tests:
        status, why, extra = results.get(test, ("FAIL", f"no verdict: zdtm.py never ran it{ended}", ""))
        counts[status] += 1
        if status == "FAIL":
            for line in blocks.get(test, [])[-LOG_LINES:]:
                print(f"zdtm-log {label} {test}: {clean(line, 300)}")
        detail = " ".join(w for w in (clean(why), extra) if w)
        print(f"@@LAB {status} zdtm.{label}.{test} {detail}".rstrip())
    print(f"@@LAB INFO zdtm.{label} passed={counts['PASS']} failed={counts['FAIL']} "
          f"skipped={counts['SKIP']} total={len(tests)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
