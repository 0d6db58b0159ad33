#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Side by side: every ZDTM CET test with criu-cet, stock CRIU 4.1.1 and CRIU 4.2.1.

    compare.py --run            build CRIU 4.2.1 if it can be had, boot the lab
                                (suites zdtm-cet-ours,zdtm-cet-stock,zdtm-cet-4.2.1)
    compare.py RESULTS.json...  tabulate results run.py --json already wrote

The guest runner prints one line per test and CRIU,
"@@LAB PASS|FAIL|SKIP zdtm.cet.<test>.<flavour> <detail>".  This prints a row
per test and a column per CRIU (PASS, FAIL: first error, SKIP: why), then
"compare: criu-cet N/M, stock-4.1.1 K/M, criu-4.2.1 J/M", and exits non-zero
when a test does not pass with criu-cet (FAIL, or no result at all) or the lab
run broke.  CRIU 4.2.1 is optional: when its pin cannot be fetched or built
its column says "unavailable" and why, and nothing else changes.
"""

import argparse
import json
import os
import subprocess
import sys

# the runner (lab/run.py, protocol.py, images.py) is one folder up
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from run import LAB, lab_to_json  # noqa: E402

PREFIX = "zdtm.cet."
OURS = "criu-cet"
STOCK = "stock-4.1.1"
UPSTREAM = "criu-4.2.1"
COLUMNS = (OURS, STOCK)
SUITES = "zdtm-cet-ours,zdtm-cet-stock"
UPSTREAM_SUITE = "zdtm-cet-4.2.1"


def split_name(name):
    """'zdtm.cet.<test>.<flavour>' -> (test, flavour); None for other names.
    Test names have no dot; flavours may ('stock-4.1.1')."""
    if not name.startswith(PREFIX):
        return None
    test, dot, flavour = name[len(PREFIX):].partition(".")
    if not dot or not test or not flavour:
        return None
    return test, flavour


def collect(results):
    """Results (dicts with status, name, detail) -> (tests in first-seen order,
    {(test, flavour): (status, detail)})."""
    order, cells = [], {}
    for r in results:
        parts = split_name(r["name"])
        if parts is None:
            continue
        if parts[0] not in order:
            order.append(parts[0])
        cells[parts] = (r["status"], r.get("detail", ""))
    return order, cells


def cell_text(cell, width):
    if cell is None:
        text = "-- no result"
    else:
        status, detail = cell
        text = status if status == "PASS" or not detail else f"{status}: {detail}"
    if len(text) > width:
        text = text[:width - 3] + "..."
    return text


def table(order, cells, columns=COLUMNS, width=70):
    """The table as a list of lines."""
    name_w = max([len("test")] + [len(t) for t in order])
    rows = [["test"] + list(columns), ["-" * name_w] + ["-" * width for _ in columns]]
    for t in order:
        rows.append([t] + [cell_text(cells.get((t, c)), width) for c in columns])
    lines = []
    for row in rows:
        parts = [row[0].ljust(name_w)] + [c.ljust(width) for c in row[1:-1]] + [row[-1]]
        lines.append("  ".join(parts).rstrip())
    return lines


def passed(order, cells, flavour):
    return sum(1 for t in order if (cells.get((t, flavour)) or ("",))[0] == "PASS")


def summary(order, cells, columns=COLUMNS, unavailable=None):
    m = len(order)
    parts = []
    for c in columns:
        if c == UPSTREAM and unavailable:
            parts.append(f"{c} unavailable")
        else:
            parts.append(f"{c} {passed(order, cells, c)}/{m}")
    return "compare: " + ", ".join(parts)


def columns_for(order, cells, unavailable=None):
    """criu-cet and stock always; 4.2.1 when it ran or was asked for and missing."""
    if unavailable or any(f == UPSTREAM for (_, f) in cells):
        return COLUMNS + (UPSTREAM,)
    return COLUMNS


def ours_failures(order, cells):
    """Tests that fail with criu-cet or have no criu-cet result (SKIP is not a failure)."""
    return [t for t in order if (cells.get((t, OURS)) or ("FAIL",))[0] == "FAIL"]


def report(runs, width=70, out=sys.stdout, unavailable=None):
    """Print the table for one or more parsed run.py JSON documents; return the
    exit code.  unavailable: why CRIU 4.2.1 could not be had (its column says so)."""
    results, broken = [], []
    for run in runs:
        results += run.get("results", [])
        if run.get("stopped") or not run.get("done", False) or run.get("panic"):
            broken.append(run.get("stopped") or run.get("panic") or "the guest did not finish")
    order, cells = collect(results)
    columns = columns_for(order, cells, unavailable)
    if unavailable:
        for t in order:
            cells[(t, UPSTREAM)] = ("unavailable", unavailable)
    for line in table(order, cells, columns=columns, width=width):
        print(line, file=out)
    print("", file=out)
    for why in broken:
        print(f"compare: the lab run broke: {why}", file=out)
    if not order:
        print("compare: no ZDTM CET results at all", file=out)
    if unavailable:
        print(f"compare: {UPSTREAM} unavailable: {unavailable}", file=out)
    print(summary(order, cells, columns, unavailable), file=out)
    return 1 if broken or not order or ours_failures(order, cells) else 0


def upstream_overlay():
    """(overlay folder with CRIU 4.2.1 for the guest, None) or (None, why not)."""
    p = subprocess.run(["bash", os.path.join(LAB, "overlays", "upstream.sh")],
                       capture_output=True, text=True)
    if p.returncode == 0 and p.stdout.strip():
        return p.stdout.strip().splitlines()[-1], None
    lines = [ln.strip() for ln in (p.stderr + p.stdout).splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    why = errors[0] if errors else (lines[-1] if lines else f"its build exited with {p.returncode}")
    return None, why[:200]


def run_lab(kernel, overlay=None):
    suites = SUITES + ("," + UPSTREAM_SUITE if overlay else "")
    return lab_to_json("compare", suites, kernel, overlay=overlay)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="*", help="results written by run.py --json")
    ap.add_argument("--run", action="store_true", help="boot the lab and run both suites first")
    ap.add_argument("--kernel", default="stock", choices=["stock", "patched"])
    ap.add_argument("--width", type=int, default=48, help="width of a result column")
    ap.add_argument("--no-upstream", action="store_true", help="leave CRIU 4.2.1 out")
    args = ap.parse_args(argv)
    if not args.run and not args.json:
        ap.error("give --run or results files")
    runs, unavailable = [], None
    if args.run:
        overlay = None
        if not args.no_upstream:
            overlay, unavailable = upstream_overlay()
        runs.append(run_lab(args.kernel, overlay))
    for path in args.json:
        with open(path) as f:
            runs.append(json.load(f))
    return report(runs, width=args.width, unavailable=unavailable)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
