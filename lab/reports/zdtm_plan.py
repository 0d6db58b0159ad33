#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Which CRIU ZDTM tests a lab boot runs, in which zdtm.py flavour, with
which CRIU: the lists and the plan of the guest suite zdtm-upstream.

    zdtm_plan.py write --tree TEST_TREE --tests LIST --runs RUNS --out DIR [--name NAME] [--manual]
    zdtm_plan.py write --tree TEST_TREE --sample LIST --ours LIST --out DIR
    zdtm_plan.py write --tree TEST_TREE --migrate --out DIR

writes DIR/lists/NAME.<flavour> (one test a line) and DIR/plan (one line a
run and flavour: "LABEL BUILD CRIU NAME.<flavour> -f <flavour>"), where
RUNS is a comma-separated list of BUILD:CRIU[:FLOW] (shstk:criu-cet,
shstk:stock, plain:criu-cet, shstk:criu-4.2.1, shstk:criu-cet:pre2, ...;
FLOWS names zdtm.py's flows).

A test runs in one flavour: ns where its .desc allows it (zdtm.py compares
fds, maps and mounts only there), else h, else uns, as the .desc lists them.
"""

import argparse
import ast
import os
import sys

FLAVOUR_ORDER = ("ns", "h", "uns")
# zdtm.py's own migration and RPC flows, by the name a run gives them
FLOWS = {"pre1": "--pre 1", "pre2": "--pre 2", "pre3": "--pre 3", "page-server": "--page-server",
         "lazy-pages": "--lazy-pages", "remote-lazy-pages": "--remote-lazy-pages", "rpc": "--rpc",
         "snaps": "--snaps --pre 2", "iters3": "--iters 3",
         # the suite names each test with -t: zdtm.py's "manual run only"
         # (noauto) tests run only so (lab/suites/zdtm-upstream.sh)
         "manual": "--manual"}
# how a list's "manual run only" tests (.desc noauto, which zdtm.py skips
# in a -T run) run by name: make test's sample holds thread-bomb, threads
# that each make the next one and exit while criu seizes them, through
# three C/Rs in a row by criu-cet and once by stock 4.1.1, beside it
MANUAL_RUNS = ["shstk:criu-cet:manual:iters3", "shstk:stock:manual"]
# live migration of our shadow-stack tests (tests/test_migration.py), by
# the name its verdicts go by: iterative pre-dumps with memory tracking, a
# dump through the page server, a lazy restore (no page of a shadow stack
# served lazily: shstk_state.lazy_into_ss), post-copy over TCP, and all in
# one flow
MIGRATE_FLOWS = {"predump": "shstk:criu-cet:pre3", "page-server": "shstk:criu-cet:pre1:page-server",
                 "lazy": "shstk:criu-cet:lazy-pages", "migrate": "shstk:criu-cet:pre2:page-server:lazy-pages",
                 "remote-lazy": "shstk:criu-cet:remote-lazy-pages",
                 "postcopy": "shstk:criu-cet:pre2:page-server:remote-lazy-pages"}
MIGRATE_TESTS = ["zdtm/cet/" + t for t in ("plain", "churn", "threads", "fibers", "fiber_thread", "deep")]
# stock 4.1.1 beside the whole flow: the task without shadow stacks, and churn
MIGRATE_STOCK = ("shstk:stock:pre2:page-server:lazy-pages", ["zdtm/cet/plain", "zdtm/cet/churn"])
# make test's plan (write_sample): the sample and our tests on shadow
# stacks by criu-cet; stock 4.1.1 beside it on the sample and two of ours,
# the one without shadow stacks it restores and one it fails (the gap
# criu-cet closes, test by test, is make compare's)
SAMPLE_RUNS = ("shstk:criu-cet", "shstk:stock")
STOCK_OURS = ["zdtm/cet/plain", "zdtm/cet/recursion"]
CRIU_PATHS = {"criu-cet": "/lab/criu-cet/criu", "stock": "/lab/criu-stock/criu",
              "criu-4.2.1": "/lab/criu-4.2.1/criu"}


def read_list(path):
    """Tests of a list file: one a line, '#' comments."""
    with open(path) as f:
        return [line.split("#", 1)[0].strip() for line in f if line.split("#", 1)[0].strip()]


def read_exclusions(path):
    """{test: reason} of an exclusion file: 'TEST  REASON' a line."""
    excl = {}
    with open(path) as f:
        for line in f:
            if line.strip() and not line.lstrip().startswith("#"):
                test, _, reason = line.strip().partition(" ")
                excl[test] = reason.strip()
    return excl


def desc_of(tree, test):
    """A test's .desc as zdtm.py reads it (a Python dict literal), or {}."""
    try:
        with open(os.path.join(tree, test + ".desc")) as f:
            return ast.literal_eval(f.read())
    except (OSError, ValueError, SyntaxError):
        return {}


def flavour_of(tree, test):
    allowed = desc_of(tree, test).get("flavor", "h ns uns").split()
    for f in FLAVOUR_ORDER:
        if f in allowed:
            return f
    return allowed[0] if allowed else "h"


def by_flavour(tree, tests):
    """{flavour: [tests]} in the order of FLAVOUR_ORDER, the tests kept in order."""
    groups = {}
    for t in tests:
        groups.setdefault(flavour_of(tree, t), []).append(t)
    return {f: groups[f] for f in sorted(groups, key=lambda f: FLAVOUR_ORDER.index(f)
                                         if f in FLAVOUR_ORDER else 9)}


def label_of(run, flavour):
    """The label of a run (BUILD:CRIU[:FLOW]) in one flavour, as verdict
    lines name it: 'shstk.criu-cet.pre2.ns'."""
    return run.replace(":", ".") + "." + flavour


def run_of(label, runs):
    """The run of runs a label belongs to, or None."""
    for run in runs:
        prefix = run.replace(":", ".") + "."
        if label.startswith(prefix) and "." not in label[len(prefix):]:
            return run
    return None


def verdict_key(name, runs):
    """(run, test) of a verdict line's name, 'zdtm.<label>.zdtm/<test>'
    (zdtm_results.py), when its label is one of runs'; else None."""
    if not name.startswith("zdtm."):
        return None
    label, dot, test = name[len("zdtm."):].partition(".zdtm/")
    run = dot and run_of(label, runs)
    return (run, "zdtm/" + test) if run else None


def write(tree, tests, runs, out, name, append=False):
    os.makedirs(os.path.join(out, "lists"), exist_ok=True)
    plan = []
    groups = by_flavour(tree, tests)
    for flavour, group in groups.items():
        with open(os.path.join(out, "lists", f"{name}.{flavour}"), "w") as f:
            f.write("".join(t + "\n" for t in group))
    for run in runs:
        build, criu, *flow = run.split(":")
        opts = " ".join(FLOWS[f] for f in flow)
        for flavour in groups:
            plan.append(f"{label_of(run, flavour)} {build} {CRIU_PATHS[criu]} {name}.{flavour} "
                        f"-f {flavour} {opts}".rstrip())
    with open(os.path.join(out, "plan"), "a" if append else "w") as f:
        f.write("".join(line + "\n" for line in plan))
    return plan


def manual_tests(tree, tests):
    """The tests zdtm.py runs only when named: .desc flags noauto."""
    return [t for t in tests if "noauto" in str(desc_of(tree, t).get("flags", "")).split()]


def write_manual(tree, tests, out):
    """MANUAL_RUNS of the manual-only tests of tests, appended to the plan."""
    manual = manual_tests(tree, tests)
    return write(tree, manual, MANUAL_RUNS, out, "manual", append=True) if manual else []


def write_sample(tree, sample, ours, out):
    """make test's plan: SAMPLE_RUNS, each test in one flavour, and
    MANUAL_RUNS of the sample's manual-only tests."""
    plan = write(tree, sample + ours, [SAMPLE_RUNS[0]], out, "sample")
    plan += write(tree, sample + STOCK_OURS, [SAMPLE_RUNS[1]], out, "sample-stock", append=True)
    return plan + write_manual(tree, sample, out)


def write_migrate(tree, out):
    """The plan of the migration boot: MIGRATE_FLOWS on MIGRATE_TESTS, and stock beside."""
    plan = write(tree, MIGRATE_TESTS, list(MIGRATE_FLOWS.values()), out, "migrate")
    return plan + write(tree, MIGRATE_STOCK[1], [MIGRATE_STOCK[0]], out, "migrate-stock", append=True)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("--tree", required=True, help="a staged ZDTM test/ tree")
    w.add_argument("--tests", help="a list file")
    w.add_argument("--runs", help="BUILD:CRIU,...")
    w.add_argument("--migrate", action="store_true", help="the migration boot's plan instead")
    w.add_argument("--sample", help="make test's plan instead: its sample (a list file) ...")
    w.add_argument("--ours", help="... and our tests (a list file)")
    w.add_argument("--out", required=True)
    w.add_argument("--name", default="sample")
    w.add_argument("--manual", action="store_true", help="and MANUAL_RUNS of the manual-only tests after them")
    args = ap.parse_args(argv)
    if args.migrate:
        plan = write_migrate(args.tree, args.out)
    elif args.sample and args.ours:
        plan = write_sample(args.tree, read_list(args.sample), read_list(args.ours), args.out)
    elif args.tests and args.runs:
        plan = write(args.tree, read_list(args.tests), args.runs.split(","), args.out, args.name)
        if args.manual:
            plan += write_manual(args.tree, read_list(args.tests), args.out)
    else:
        ap.error("give --tests and --runs, --sample and --ours, or --migrate")
    for line in plan:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
