#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""CRIU's own ZDTM suite in the lab: the whole default set, criu-cet beside
its base CRIU 4.2.1 and stock 4.1.1 (the CRIU Debian 13 ships), plain and on
shadow stacks, on both kernels (make zdtm).

    zdtm_matrix.py --run [--kernels stock,patched] [--runs RUNS] [--tests LIST]
                   [--chunk N] [--repeat K]
    zdtm_matrix.py --report RESULTS.json...   tabulate runs already made

The default set is what `zdtm.py run -a` selects from the tests built for
the guest (lab/build/zdtm-upstream.sh; zdtm.py's own all_tests(); its
.desc flags such as noauto and arch are zdtm.py's to apply in the guest),
less test/zdtm/upstream/exclude.list
(each exclusion with its reason).  The set is cut into chunks of --chunk
tests; each chunk is one lab boot (suite zdtm-upstream) that runs every
entry of RUNS on it, as many boots at once as the host has cores.  RUNS is
BUILD:CRIU[:FLOW],... (builds plain, shstk; CRIUs criu-cet, stock,
criu-4.2.1; flows pre2, page-server, lazy-pages, rpc).  --repeat K runs the
whole set K times: a test passes a run only if it passed every time.
Each boot that finishes goes into test/zdtm/upstream/record/ (its verdicts
and the commit it ran), so that --resume goes on from there on another
machine; the report says which commits the boots ran.

Our own shadow-stack tests (test/zdtm/cet) run beside the default set and
are judged apart: criu-cet passes each in every run (a line per kernel
counts them).  It prints a row per test (PASS, FAIL and why, SKIP and why),
the tests in which criu-cet and stock differ, and last, one line per kernel:

    zdtm: <kernel> plain: criu-cet P/N criu-4.2.1 U/N stock Q/N; shstk: criu-cet R/N stock S/N criu-4.2.1 T/N; wall M min

and exits non-zero when a target is missed: plain, criu-cet passes exactly
the tests its base 4.2.1 passes (without 4.2.1 in the runs: stock), and
every test stock passes; on shadow stacks, every test that criu-cet passes
plain or that stock or 4.2.1 pass on shadow stacks.
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import time

# the runner (lab/run.py, protocol.py, images.py) is one folder up
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from compare import upstream_overlay  # noqa: E402
from run import BUILD, LAB, TOP, lab_to_json  # noqa: E402
import zdtm_plan  # noqa: E402

UPSTREAM = os.path.join(TOP, "test", "zdtm", "upstream")
sys.path.insert(0, UPSTREAM)
import zdtm_results  # noqa: E402

OUT = os.path.join(BUILD, "zdtm")
# every boot that finished, as it finished, kept in the tree: the whole set
# takes longer than a working session (26 boots of about 20 minutes on two
# cores), and --resume goes on from here on another machine
RECORD = os.path.join(UPSTREAM, "record")
DEFAULT_RUNS = "plain:criu-cet,plain:criu-4.2.1,plain:stock,shstk:criu-cet,shstk:stock,shstk:criu-4.2.1"
FLOW_RUNS = ",".join(f"shstk:criu-cet:{f}" for f in ("pre2", "page-server", "lazy-pages", "rpc"))
# steadiness: each test C/R'd three times in a row by criu-cet on shadow
# stacks (zdtm.py --iters 3); a test that passes once and fails the next
# time fails the run
STEADY_RUNS = "shstk:criu-cet:iters3"
# the boots of each kind of run under a name of their own in the record
KIND_TAGS = {"flows": "flows-", "steady": "steady-", "default": ""}
KIND_OUT = {"flows": "flows.json", "steady": "steady.json", "default": "results.json"}
# guest RAM of a matrix boot: zdtm.py keeps the images of every failed test
# (stock and 4.2.1 fail most on shadow stacks) in the guest's rootfs, half of
# its RAM; with 512 MiB a boot ran out of space at its 13th test of 40.
# static/maps01 (1 GiB of shared memory) and maps04 (512 MiB) need it too
MEGS = 2048


def overlay_folder():
    p = subprocess.run(["bash", os.path.join(LAB, "overlays", "zdtm.sh")], capture_output=True, text=True)
    if p.returncode or not p.stdout.strip():
        raise SystemExit(f"zdtm: the ZDTM overlay failed: {p.stderr.strip()[-1500:]}")
    return p.stdout.strip().splitlines()[-1]


# zdtm.py's own selection of `run -a` (all_tests), without its main: that
# would mount ZDTM's cgroup hierarchies and set nr_hugepages on this host
ALL_TESTS = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("zdtm_main", "zdtm.py")
zdtm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(zdtm)
print("\\n".join(zdtm.all_tests({"set": "zdtm"})))
"""


def default_set(tree):
    """What `zdtm.py run -a` would pick from this tree."""
    p = subprocess.run(["/usr/bin/python3", "-c", ALL_TESTS], cwd=tree, capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"zdtm: zdtm.py's all_tests failed: {p.stderr.strip()[-1000:]}")
    # zdtm/cet/ is ours (the overlay stages it in the tree): judged apart
    return [t for t in p.stdout.split() if t.startswith("zdtm/") and not t.startswith("zdtm/cet/")]


def build_failures(path):
    """{(build, test): reason} from lab/build/zdtm-upstream.sh's list."""
    failed = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split(None, 2)
                if len(parts) >= 2:
                    failed[(parts[0], parts[1])] = parts[2].strip() if len(parts) > 2 else "did not build"
    return failed


def chunks(tests, size):
    return [tests[i:i + size] for i in range(0, len(tests), size)]


def plan_overlay(name, tree, tests, runs):
    """A folder whose plan and lists replace the ZDTM overlay's: one boot's share."""
    folder = os.path.join(OUT, "plans", name)
    shutil.rmtree(folder, ignore_errors=True)
    zdtm_plan.write(tree, tests, runs, os.path.join(folder, "lab", "zdtm-upstream"), name)
    return folder


def read_boot(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return None if doc.get("stopped") or not doc.get("results") else doc


def finished_boot(name):
    """The results of a boot of an earlier run that finished, or None: the
    record's (which names the commit the boot ran), else this build's."""
    return (read_boot(os.path.join(RECORD, f"{name}.json")) or
            read_boot(os.path.join(BUILD, "lab-results", f"zdtm-{name}", "results.json")))


def tree_commit():
    p = subprocess.run(["git", "-C", TOP, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", TOP, "diff", "--quiet", "HEAD", "--", "criu", "patches", "lab",
                            "test", ":(exclude)test/zdtm/upstream/record"], capture_output=True).returncode
    return (p.stdout.strip() or "unknown") + ("+changes" if dirty else "")


def record_boot(doc, commit):
    """A finished boot into the record: its verdicts (not its console), and
    the commit of criu-cet's tree it ran."""
    if doc.get("stopped") or not doc.get("results"):
        return
    os.makedirs(RECORD, exist_ok=True)
    keep = {"boot_name": doc["boot_name"], "kernel": doc["kernel"], "commit": commit,
            "wall": round(doc.get("wall", 0)),
            "results": [{k: r[k] for k in ("name", "status", "detail") if r.get(k)} for r in doc["results"]]}
    with open(os.path.join(RECORD, f"{doc['boot_name']}.json"), "w") as f:
        json.dump(keep, f, indent=0)
        f.write("\n")


def earlier_boots(prefix, runs):
    """--resume: the boots an earlier run finished under prefix (however its
    set was cut into chunks), the tests they ran through every run, and the
    next free chunk number."""
    names = set()
    for folder, lead, tail in ((os.path.join(BUILD, "lab-results"), "zdtm-", ""), (RECORD, "", ".json")):
        for entry in os.listdir(folder) if os.path.isdir(folder) else []:
            if entry.startswith(lead + prefix) and entry.endswith(tail):
                names.add(entry[len(lead):len(entry) - len(tail)])
    kept, done, last = [], set(), -1
    for name in sorted(names):
        index = name[len(prefix):]
        if not index.isdigit():
            continue
        last = max(last, int(index))
        doc = finished_boot(name)
        if not doc:
            continue
        covered = {}
        for r in doc["results"]:
            key = zdtm_plan.verdict_key(r["name"], runs)
            if key:
                covered.setdefault(key[1], set()).add(key[0])
        doc["boot_name"] = name
        kept.append(doc)
        done |= {t for t, have in covered.items() if have == set(runs)}
    return kept, done, last + 1


def boot(name, kernel, overlays, ntests, nruns):
    # a C/R of a ZDTM test takes seconds of wall time in the lab; be generous
    timeout = 600 + 60 * ntests * nruns
    try:
        return lab_to_json("zdtm", "zdtm-upstream", kernel, name=f"zdtm-{name}", overlay=overlays,
                           timeout=timeout, megs=MEGS)
    except SystemExit as e:
        return {"stopped": str(e), "results": [], "wall": 0}


def run_matrix(args):
    overlay = overlay_folder()
    tree = os.path.join(overlay, "lab", "zdtm-upstream", "plain", "test")
    runs = args.runs.split(",")
    extra = []
    if any(r.split(":")[1] == "criu-4.2.1" for r in runs):
        upstream, why = upstream_overlay()
        if upstream:
            extra.append(upstream)
        else:
            print(f"zdtm: CRIU 4.2.1 unavailable: {why}")
            runs = [r for r in runs if r.split(":")[1] != "criu-4.2.1"]
    excluded = zdtm_plan.read_exclusions(os.path.join(UPSTREAM, "exclude.list"))
    tests = zdtm_plan.read_list(args.tests) if args.tests else default_set(tree)
    tests = [t for t in tests if t not in excluded]
    # our own shadow-stack tests (test/zdtm/cet) beside the default set,
    # judged apart: they turn shadow stacks on themselves, in either build
    ours = [] if args.tests or args.no_ours else zdtm_plan.read_list(
        os.path.join(overlay, "lab", "zdtm-upstream", "lists", "cet"))
    # flows, steadiness and the default runs keep their boots' results apart
    tag = KIND_TAGS[args.kind]
    jobs, docs, resumed_wall = [], [], 0
    for rep in range(args.repeat):
        for kernel in args.kernels.split(","):
            prefix = f"{tag}{kernel}-{rep}-"
            todo, first = tests + ours, 0
            if args.resume:
                kept, done, first = earlier_boots(prefix, runs)
                todo = [t for t in todo if t not in done]
                for doc in kept:
                    doc["kernel"] = kernel
                    resumed_wall += doc.get("wall", 0)
                docs += kept
                print(f"zdtm: {prefix}*: {len(done)} tests kept from {len(kept)} earlier boots", flush=True)
            for i, part in enumerate(chunks(todo, args.chunk), start=first):
                name = f"{prefix}{i}"
                plan = plan_overlay(name, tree, part, runs)
                jobs.append((name, kernel, [overlay, plan] + extra, len(part), len(runs)))
    print(f"zdtm: {len(tests)} tests ({len(excluded)} excluded) and {len(ours)} of ours, {len(runs)} runs, "
          f"{len(jobs)} boots, {os.cpu_count()} at a time", flush=True)
    t0, commit = time.monotonic(), tree_commit()
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures = {pool.submit(boot, *job): job for job in jobs}
        for fut in concurrent.futures.as_completed(futures):
            name, kernel = futures[fut][:2]
            doc = fut.result()
            doc["kernel"], doc["boot_name"], doc["commit"] = kernel, name, commit
            docs.append(doc)
            record_boot(doc, commit)
            print(f"zdtm: boot {name} done: {len(doc['results'])} results, "
                  f"wall {doc.get('wall', 0) / 60:.1f} min{', stopped: ' + doc['stopped'] if doc.get('stopped') else ''}",
                  flush=True)
    # boots kept by --resume ran as many at a time as this run's
    wall = time.monotonic() - t0 + resumed_wall / (os.cpu_count() or 1)
    os.makedirs(OUT, exist_ok=True)
    # the flows' and steadiness matrices beside the default runs', not over it
    path = os.path.join(OUT, KIND_OUT[args.kind])
    with open(path, "w") as f:
        json.dump({"tests": tests, "ours": ours, "runs": runs, "wall": wall, "excluded": excluded,
                   "failures": {f"{b} {t}": r for (b, t), r in build_failures(
                       os.path.join(overlay, "lab", "zdtm-upstream", "build-failures.txt")).items()},
                   "boots": docs}, f, indent=1)
    return report(path)


ZDTM_FAILED_AT = "zdtm.py: FAIL at "


def as_judged(status, detail):
    """A verdict as the guest's zdtm_results.py judges it today: boots
    recorded before it knew a zdtm.py limit (runner_limit) failed such a
    test; it is a skip, with the limit named."""
    step = detail[len(ZDTM_FAILED_AT):].rsplit(" shstk=", 1)[0] if detail.startswith(ZDTM_FAILED_AT) else ""
    limit = status == "FAIL" and zdtm_results.runner_limit(step)
    return ("SKIP", limit) if limit else (status, detail)


def collect(doc):
    """{(kernel, run, test): [(status, detail), ...]} over every boot."""
    cells = {}
    for b in doc["boots"]:
        for r in b["results"]:
            key = zdtm_plan.verdict_key(r["name"], doc["runs"])
            if key:
                cells.setdefault((b["kernel"],) + key, []).append(as_judged(r["status"], r.get("detail", "")))
    return cells


def verdict(results):
    """One verdict of several tries: PASS only if every try passed."""
    if not results:
        return "none", "no result (the boot broke?)"
    for status, detail in results:
        if status == "FAIL":
            tries = f" ({sum(s == 'PASS' for s, _ in results)}/{len(results)} passed)" if len(results) > 1 else ""
            return "FAIL", detail + tries
    if all(s == "SKIP" for s, _ in results):
        return "SKIP", results[0][1]
    return "PASS", ""


def report(path, out=sys.stdout):
    with open(path) as f:
        doc = json.load(f)
    cells = {k: verdict(v) for k, v in collect(doc).items()}
    kernels = sorted({b["kernel"] for b in doc["boots"]}, key=lambda k: k != "stock")
    runs, tests, ours = doc["runs"], doc["tests"], doc.get("ours", [])
    short = {"PASS": "ok", "FAIL": "FAIL", "SKIP": "skip", "none": "none"}
    print("zdtm: " + "test".ljust(44) + " ".join(f"{k[:3]}:{r}".ljust(22) for k in kernels for r in runs), file=out)
    for t in tests + ours:
        row = [short[cells.get((k, r, t), ("none", ""))[0]].ljust(22) for k in kernels for r in runs]
        print("zdtm: " + t.ljust(44) + " ".join(row), file=out)
    commits = {}
    for b in doc["boots"]:
        commits.setdefault(b.get("commit", "unknown"), []).append(b["boot_name"])
    for c, names in sorted(commits.items()):
        print(f"zdtm: {len(names)} boots ran the tree of commit {c}", file=out)
    print("zdtm: why, for every test that did not pass:", file=out)
    for t in tests + ours:
        for k in kernels:
            for r in runs:
                status, why = cells.get((k, r, t), ("none", "no result"))
                if status != "PASS":
                    print(f"zdtm:   {t} {k} {r}: {status} {why}", file=out)
    missed = targets(cells, kernels, runs, tests, out) + ours_targets(cells, kernels, runs, ours, out)
    flows = [r for r in runs if len(r.split(":")) > 2]
    if flows:
        missed += flow_targets(cells, kernels, flows, tests, base_cells(), out)
    for k in kernels:
        if ours:
            print(ours_line(cells, k, runs, ours), file=out)
        if flows:
            print(flows_line(cells, k, flows, tests, doc.get("wall", 0)), file=out)
        else:
            print(summary_line(cells, k, runs, tests, doc.get("wall", 0)), file=out)
    broken = [b["boot_name"] for b in doc["boots"] if b.get("stopped")]
    if broken:
        print(f"zdtm: boots that did not finish: {' '.join(broken)}", file=out)
    return 1 if missed or broken else 0


def passes(cells, kernel, run, tests):
    return {t for t in tests if cells.get((kernel, run, t), ("none",))[0] == "PASS"}


def targets(cells, kernels, runs, tests, out):
    """Print every missed target; the number missed."""
    missed = 0
    for k in kernels:
        want = {}
        missed += plain_targets(cells, k, runs, tests, out)
        if "shstk:criu-cet" in runs:
            for other in ("plain:criu-cet", "shstk:stock", "shstk:criu-4.2.1"):
                if other in runs:
                    for t in passes(cells, k, other, tests):
                        want.setdefault(t, []).append(other)
            ours = passes(cells, k, "shstk:criu-cet", tests)
            for t in sorted(set(want) - ours):
                print(f"zdtm: TARGET {k} shstk: {t} fails with criu-cet, passes with {', '.join(want[t])}",
                      file=out)
                missed += 1
    return missed


def plain_targets(cells, kernel, runs, tests, out):
    """Plain, criu-cet is its base: the same passes as the base (4.2.1, or
    stock when 4.2.1 is not in the runs), and none fewer than stock."""
    if "plain:criu-cet" not in runs:
        return 0
    cet = passes(cells, kernel, "plain:criu-cet", tests)
    base = "plain:criu-4.2.1" if "plain:criu-4.2.1" in runs else "plain:stock"
    name = base.split(":")[1]
    missed = 0
    if base in runs:
        other = passes(cells, kernel, base, tests)
        for t in sorted(other ^ cet):
            print(f"zdtm: TARGET {kernel} plain: {t} passes with {name + ' only' if t in other else 'criu-cet only'}",
                  file=out)
            missed += 1
    if base != "plain:stock" and "plain:stock" in runs:
        for t in sorted(passes(cells, kernel, "plain:stock", tests) - cet - passes(cells, kernel, base, tests)):
            print(f"zdtm: TARGET {kernel} plain: {t} passes with stock, not with criu-cet", file=out)
            missed += 1
    return missed


def ours_targets(cells, kernels, runs, ours, out):
    """criu-cet passes each of our tests in every run (or zdtm.py skips it:
    its .checkskip found no shadow stacks); the number missed."""
    missed = 0
    for k in kernels:
        for r in (r for r in runs if r.split(":")[1] == "criu-cet"):
            for t in ours:
                status, why = cells.get((k, r, t), ("none", "no result"))
                if status not in ("PASS", "SKIP"):
                    print(f"zdtm: TARGET {k} {r}: {t} (ours) {status} {why}", file=out)
                    missed += 1
    return missed


def ours_line(cells, kernel, runs, ours):
    return (f"zdtm: {kernel} ours (test/zdtm/cet): " +
            " ".join(f"{r} {len(passes(cells, kernel, r, ours))}/{len(ours)}" for r in runs))


def base_cells():
    """The default runs' verdicts (make zdtm's results.json), {} when not run."""
    try:
        with open(os.path.join(OUT, "results.json")) as f:
            return {k: verdict(v) for k, v in collect(json.load(f)).items()}
    except (OSError, ValueError):
        return {}


def flow_targets(cells, kernels, flows, tests, base, out):
    """A flow keeps every test criu-cet passes on shadow stacks without it
    (make zdtm's own run) unless zdtm.py skips it in that flow (its .desc:
    nolazy, ...); the number missed.  Without that run, the flows are only
    tabulated."""
    missed = 0
    for k in kernels:
        plain_cr = passes(base, k, "shstk:criu-cet", tests)
        for r in flows:
            for t in sorted(plain_cr):
                status, why = cells.get((k, r, t), ("none", "no result"))
                if status not in ("PASS", "SKIP"):
                    print(f"zdtm: TARGET {k} {r}: {t} passes without the flow, here {status} {why}", file=out)
                    missed += 1
    return missed


def flows_line(cells, kernel, flows, tests, wall):
    n = len(tests)
    return (f"zdtm-flows: {kernel} shstk criu-cet: " +
            " ".join(f"{r.split(':', 2)[2]} {len(passes(cells, kernel, r, tests))}/{n}" for r in flows) +
            f"; wall {wall / 60:.0f} min")


def summary_line(cells, kernel, runs, tests, wall):
    n = len(tests)

    def score(run):
        return f"{len(passes(cells, kernel, run, tests))}/{n}" if run in runs else "-"
    return (f"zdtm: {kernel} plain: criu-cet {score('plain:criu-cet')} criu-4.2.1 {score('plain:criu-4.2.1')} "
            f"stock {score('plain:stock')}; "
            f"shstk: criu-cet {score('shstk:criu-cet')} stock {score('shstk:stock')} "
            f"criu-4.2.1 {score('shstk:criu-4.2.1')}; wall {wall / 60:.0f} min")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="store_true", help="boot the lab and run the matrix")
    ap.add_argument("--report", nargs="*", help="results.json of an earlier run")
    ap.add_argument("--kernels", default="stock,patched")
    ap.add_argument("--runs", default=DEFAULT_RUNS, help=f"default {DEFAULT_RUNS}; flows: {FLOW_RUNS}")
    ap.add_argument("--flows", action="store_true", help="the shadow-stack flows instead: " + FLOW_RUNS)
    ap.add_argument("--steady", action="store_true", help="steadiness instead: " + STEADY_RUNS)
    ap.add_argument("--tests", help="a list file instead of the whole default set (and ours)")
    ap.add_argument("--no-ours", action="store_true", help="without our own tests (test/zdtm/cet)")
    ap.add_argument("--resume", action="store_true",
                    help="keep every test an earlier run's finished boots ran through all RUNS; run the rest")
    ap.add_argument("--chunk", type=int, default=40, help="tests a boot")
    ap.add_argument("--repeat", type=int, default=1, help="runs of the whole set (a test must pass each)")
    args = ap.parse_args(argv)
    args.kind = "flows" if args.flows else "steady" if args.steady else "default"
    if args.flows:
        args.runs = FLOW_RUNS
    if args.steady:
        args.runs = STEADY_RUNS
    if args.run:
        return run_matrix(args)
    if args.report:
        return max(report(p) for p in args.report)
    ap.error("give --run or --report")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
