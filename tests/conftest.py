# SPDX-License-Identifier: GPL-2.0
"""Shared pytest fixtures: the lab runs once per session per (suites, kernel)."""

import concurrent.futures
import json
import os
import subprocess
import sys
import threading

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the runner (lab/) and the groups whose modules the tests import
for _folder in ("lab", "lab/build", "lab/overlays", "lab/reports"):
    sys.path.insert(0, os.path.join(TOP, _folder))

import images  # noqa: E402

_runs = {}
# The environment of the session as it started: boots and overlay builds
# run in threads while tests monkeypatch os.environ (BUILD, CRIU_CET_CACHE)
LAB_ENV = dict(os.environ)


def pytest_configure(config):
    config.addinivalue_line("markers", "lab: needs the emulated CET lab (Bochs)")


def _boot(key):
    """One lab boot (run.py) for @key: (its parsed report or None, what
    run.py printed, why it did not start or None).  Thread-safe: every
    boot has its own folder."""
    suites, kernel, overlay, tag, cmdline = key
    name = f"{suites.replace(',', '+')}-{kernel}{'-' + tag if tag else ''}"
    out = os.path.join(TOP, "build", "lab-results", name)
    os.makedirs(out, exist_ok=True)
    js = os.path.join(out, "results.json")
    if os.path.exists(js):
        os.unlink(js)   # never read an older run's results
    cmd = [sys.executable, os.path.join(TOP, "lab", "run.py"), "--suites", suites,
           "--kernel", kernel, "--json", js, "--keep", out]
    if overlay:
        cmd += ["--overlay", overlay]
    if cmdline:
        cmd += ["--cmdline", cmdline]
    if suites in _timeouts:
        cmd += ["--timeout", str(_timeouts[suites])]
    p = subprocess.run(cmd, capture_output=True, text=True, env=LAB_ENV, cwd=TOP)
    if not os.path.exists(js):
        return None, p.stdout[-4000:], p.stderr.strip()[-2000:]
    with open(js) as f:
        run = json.load(f)
    run["folder"] = out
    return run, p.stdout[-4000:], None


def lab_run(suites, kernel="stock", overlay=None, tag="", cmdline=""):
    """Boot the lab once for these suites (cmdline: more kernel command
    line); cache the parsed report.  The run's folder (serial.log, ...) is
    in the result as "folder".  A boot the session prefetched is waited for."""
    key = (suites, kernel, overlay, tag, cmdline)
    if key not in _runs:
        pending = None
        if not tag and not cmdline:
            script = [s for s, (folder, _) in _overlays.items() if folder == overlay]
            if not overlay or script:
                pending = _prefetched.pop((suites, kernel, script[0] if overlay else None), None)
        run, printed, error = pending.result() if pending else _boot(key)
        sys.stderr.write(printed)
        if run is None:
            pytest.fail(f"lab run failed to start: {error}")
        _runs[key] = run
    return _runs[key]


# Lab boots run in Bochs, one core each, and most do not depend on each
# other: the session starts them up front, as many at once as the host has
# cores, in the order the tests will want them (guest time does not depend
# on host load: clock sync=none).  A test module names its independent boots
# in LAB_RUNS as (suites, kernel, overlay script or None); the boots that
# need another boot's output (its images) stay in the test, in line.
_prefetched = {}
_overlay_lock = threading.Lock()
# Boots that run longer than run.py's watchdog (15 minutes of wall time):
# a module names them in LAB_TIMEOUTS {suites: seconds}
_timeouts = {}
_pool = None

# the session fixtures below: their boots, for the modules that use them
FIXTURE_RUNS = {
    "lab_basics": [("basics,criu-baseline", "stock", None)],
    "lab_kselftest_patched": [("kselftest", "patched", None)],
    "lab_kselftest_stock": [("kselftest", "stock", None)],
    "exported": [("cet-images-export", "stock", None)],
}


def _prefetch(suites, kernel, script):
    overlay = None
    if script:
        overlay, error = build_overlay(script)
        if error:
            return None, "", error
    return _boot((suites, kernel, overlay, "", ""))


def _planned_runs(items):
    """The LAB_RUNS of the selected lab tests' modules and fixtures, in
    the order the tests come."""
    plan, seen = [], set()
    for item in items:
        if not item.get_closest_marker("lab"):
            continue
        wanted = list(getattr(item.module, "LAB_RUNS", []))
        for fixture in item.fixturenames:
            wanted += FIXTURE_RUNS.get(fixture, [])
        for run in wanted:
            if run not in seen:
                seen.add(run)
                plan.append(run)
    return plan


# Host jobs that mostly wait (CRIU's ZDTM on the host: 15 minutes, most of
# them zdtm.py timeouts) start with the session too, beside the boots: a
# module names them in EARLY_JOBS {name: function}; its fixture takes the
# result with early_result(name, function).  The functions only run
# commands and parse them (no pytest calls: they run in a thread).
_early = {}
_side_pool = None


def early_result(name, job):
    """What job() returns: the run the session started ahead, or one now."""
    pending = _early.pop(name, None)
    return pending.result() if pending else job()


def _early_jobs(items):
    jobs = {}
    for item in items:
        jobs.update(getattr(item.module, "EARLY_JOBS", {}))
    return jobs


def pytest_collection_finish(session):
    global _pool, _side_pool
    if session.config.option.collectonly:
        return
    for item in session.items:
        _timeouts.update(getattr(item.module, "LAB_TIMEOUTS", {}))
    jobs = _early_jobs(session.items)
    if jobs:
        _side_pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(jobs))
        for name, job in jobs.items():
            _early[name] = _side_pool.submit(job)
    plan = _planned_runs(session.items)
    if plan:
        _pool = concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
        for suites, kernel, script in plan:
            _prefetched[(suites, kernel, script)] = _pool.submit(_prefetch, suites, kernel, script)


def pytest_terminal_summary(terminalreporter):
    # a boot no test asked for: its LAB_RUNS entry and its fixture disagree
    for suites, kernel, script in _prefetched:
        terminalreporter.write_line(f"lab: prefetched {suites} ({kernel}) was not used")


def pytest_sessionfinish(session):
    for pool in (_pool, _side_pool):
        if pool:
            pool.shutdown(wait=False, cancel_futures=True)


def zdtm_cet_list(name):
    """A test list of test/zdtm/cet (lab.list, glibc/glibc.list):
    (test, [its options]) for each line."""
    tests = []
    with open(os.path.join(TOP, "test", "zdtm", "cet", name)) as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if fields:
                tests.append((fields[0], fields[1:]))
    return tests


def zdtm_cet_runner_tests():
    """The ZDTM CET tests suite zdtm-cet-runner C/Rs with criu-cet (its
    LAB_ZDTM_CET_ONLY): those zdtm.py cannot judge."""
    with open(os.path.join(TOP, "lab", "suites", "zdtm-cet-runner.sh")) as f:
        for line in f:
            if line.startswith("export LAB_ZDTM_CET_ONLY="):
                return tuple(line.split("=", 1)[1].strip().split(","))
    raise AssertionError("lab/suites/zdtm-cet-runner.sh sets no LAB_ZDTM_CET_ONLY")


_overlays = {}


def build_overlay(script):
    """Run lab/overlays/<script>, which prints the folder of a guest overlay last:
    (folder, None), or (None, the tail of its error output).  Once a
    session: the boots on either kernel use the same folder."""
    with _overlay_lock:     # a prefetch thread may be building it
        if script not in _overlays:
            _overlays[script] = _build_overlay(script)
    return _overlays[script]


def _build_overlay(script):
    name, *args = script.split()     # "zdtm.sh sample": a script and its arguments
    p = subprocess.run(["bash", os.path.join(TOP, "lab", "overlays", name)] + args, capture_output=True, text=True,
                       env=LAB_ENV, cwd=TOP)
    if p.returncode or not p.stdout.strip():
        return None, f"lab/overlays/{script}: {p.stderr.strip()[-1000:]}"
    return p.stdout.strip().splitlines()[-1], None


class LabResults:
    def __init__(self, data):
        self.data = data
        self.by_name = {r["name"]: r for r in data["results"]}

    def get(self, name):
        run = self.data
        if run["stopped"] or not run["done"]:
            tail = "\n".join(run["serial_tail"][-30:])
            pytest.fail(f"lab run did not finish ({run['stopped']}); serial tail:\n{tail}")
        if name not in self.by_name:
            pytest.fail(f"the guest reported no result for {name}")
        return self.by_name[name]

    def expect_pass(self, name):
        r = self.get(name)
        if r["status"] == "SKIP":
            pytest.skip(f"{name}: {r['detail']}")
        assert r["status"] == "PASS", f"{name}: {r['status']} {r['detail']}"
        return r


def host_has_user_shstk():
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and " user_shstk" in line for line in f)


def assert_shadow_stack_verdict(p):
    """`criu check --feature shadow_stack` (run as p) names each part it
    checks and gives this host's verdict: yes with user_shstk, else no,
    with a non-zero exit."""
    lines = p.stdout.splitlines()
    assert any(line.startswith("shadow_stack: CPU shadow stacks (CPUID CET_SS): ") for line in lines)
    assert any(line.startswith("shadow_stack: NT_X86_CET_USER regset") for line in lines)
    if host_has_user_shstk():
        assert p.returncode == 0 and "shadow_stack is supported" in p.stdout
    else:
        assert p.returncode != 0
        assert "shadow_stack: enabled for user space (user_shstk in /proc/cpuinfo): no" in lines
        assert "this host cannot checkpoint or restore shadow-stack tasks" in p.stderr + p.stdout
        if "shadow_stack: CPU shadow stacks (CPUID CET_SS): no" in lines:
            assert "(the CPU has no CET shadow stacks)" in p.stderr + p.stdout


@pytest.fixture(scope="session")
def lab_basics():
    return LabResults(lab_run("basics,criu-baseline"))


@pytest.fixture(scope="session")
def lab_kselftest_patched():
    return LabResults(lab_run("kselftest", "patched"))


@pytest.fixture(scope="session")
def lab_kselftest_stock():
    return LabResults(lab_run("kselftest", "stock"))


@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """A CET-protected service dumped in the lab (suite cet-images-export),
    its images unpacked here: read, and copied before any damage."""
    run = lab_run("cet-images-export")
    LabResults(run).expect_pass("images.export")
    return images.extract_exported(run["folder"], str(tmp_path_factory.mktemp("images")))


def criu_rpc(binary, req_type, **opts):
    """One request to `binary swrk` through pycriu (criu-cet's tree), the
    way go-criu and libcriu talk to criu: req_type is a name of
    pycriu.rpc (VERSION, RESTORE, ...), opts go into req.opts.  The
    response, failed or not."""
    lib = os.path.join(os.environ.get("BUILD", os.path.join(TOP, "build")), "criu-cet", "src", "lib")
    if lib not in sys.path:
        sys.path.insert(0, lib)
    import pycriu
    c = pycriu.criu()
    c.use_binary(binary)
    req = pycriu.rpc.criu_req()
    req.type = getattr(pycriu.rpc, req_type)
    for k, v in opts.items():
        setattr(req.opts, k, v)
    return c._send_req_and_recv_resp(req)
