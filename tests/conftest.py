# SPDX-License-Identifier: GPL-2.0
"""Shared pytest fixtures: the lab boots a module declares (lab/boots.py), once a session."""

import os
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the runner (lab/) and the groups whose modules the tests import
for _folder in ("lab", "lab/build", "lab/overlays", "lab/reports"):
    sys.path.insert(0, os.path.join(TOP, _folder))

import boots  # noqa: E402
import images  # noqa: E402
from protocol import parse_fields  # noqa: E402

# The environment of the session as it started: boots and overlay builds
# run in threads while tests monkeypatch os.environ (BUILD, CRIU_CET_CACHE)
LAB_ENV = dict(os.environ)
SESSION = boots.Session(LAB_ENV)
Boot = boots.Boot


def pytest_configure(config):
    config.addinivalue_line("markers", "lab: needs the emulated CET lab (Bochs)")


def lab_run(boot):
    """The parsed report of @boot (a Boot), booted once a session (or
    started ahead by the session); its folder (serial.log, ...) is in the
    result as "folder"."""
    run, printed, error = SESSION.result(boot)
    sys.stderr.write(printed)
    if run is None:
        pytest.fail(f"lab run failed to start: {error}")
    return run


def lab_results(boot):
    return LabResults(lab_run(boot))


def lab_fixture(boots, scope="module"):
    """A fixture over the boots a module declares (LAB_BOOTS), one param
    each, named by its key: the module's tests run once per boot."""
    @pytest.fixture(scope=scope, params=list(boots), ids=list(boots))
    def lab(request):
        return lab_results(boots[request.param])
    return lab


def build_overlay(script):
    """(folder, None) of lab/overlays/<script>, or (None, why)."""
    return SESSION.overlay(script)


def early_result(name, job):
    return SESSION.early_result(name, job)


# the session fixtures below: their boots, for the modules that use them
FIXTURE_BOOTS = {
    "lab_basics": Boot("basics,criu-baseline"),
    "lab_kselftest_patched": Boot("kselftest", "patched"),
    "lab_kselftest_stock": Boot("kselftest", "stock"),
    "exported": Boot("cet-images-export"),
}


def _wanted_boots(items):
    """The boots the selected lab tests' modules and fixtures declare, in
    the order the tests come."""
    wanted = []
    for item in items:
        if not item.get_closest_marker("lab"):
            continue
        wanted += boots.declared(item.module)
        wanted += [FIXTURE_BOOTS[f] for f in item.fixturenames if f in FIXTURE_BOOTS]
    return wanted


def _early_jobs(items):
    jobs = {}
    for item in items:
        jobs.update(getattr(item.module, "EARLY_JOBS", {}))
    return jobs


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    SESSION.start_early(_early_jobs(session.items))
    SESSION.start(boots.plan(_wanted_boots(session.items)))


def pytest_terminal_summary(terminalreporter):
    # a boot no test asked for: its declaration and its fixture disagree
    for boot in SESSION.unused():
        terminalreporter.write_line(f"lab: prefetched {boot.suites} ({boot.kernel}) was not used")
    # where the time went: each boot's wall time (they run as many at once
    # as the host has cores), and how long Bochs took to reach init
    walls = SESSION.walls()
    for wall, to_init, name in walls:
        init = "n/a" if to_init is None else f"{to_init:.1f} s"
        terminalreporter.write_line(f"lab: boot {name}: {wall:.0f} s, to init {init}")
    if walls:
        terminalreporter.write_line(f"lab: {len(walls)} boots, {sum(w[0] for w in walls):.0f} s of Bochs "
                                    f"in all on {os.cpu_count()} cores")


def pytest_sessionfinish(session):
    SESSION.shutdown()


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


def fields(r):
    """The key=value fields a result's detail ends with (why= takes the rest
    of the line): what tests assert on, not the prose before them."""
    return parse_fields(r["detail"], "why")


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
    assert any(line.startswith("shadow_stack: NT_X86_SHSTK_STATUS regset") for line in lines)
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
    return lab_results(FIXTURE_BOOTS["lab_basics"])


@pytest.fixture(scope="session")
def lab_kselftest_patched():
    return lab_results(FIXTURE_BOOTS["lab_kselftest_patched"])


@pytest.fixture(scope="session")
def lab_kselftest_stock():
    return lab_results(FIXTURE_BOOTS["lab_kselftest_stock"])


@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """A CET-protected service dumped in the lab (suite cet-images-export),
    its images unpacked here: read, and copied before any damage."""
    run = lab_run(FIXTURE_BOOTS["exported"])
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
