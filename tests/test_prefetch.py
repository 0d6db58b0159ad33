# SPDX-License-Identifier: GPL-2.0
"""The session's boots and host jobs started ahead (lab/boots.py): which
boots a selection plans and in what order, one boot a session however
many tests ask, and how a test gets a result started early.  No lab."""

import threading
import types

import boots
import conftest
from boots import Boot


class Item:
    """What the planner reads of a pytest item."""

    def __init__(self, module, fixtures=(), lab=True):
        self.module = module
        self.fixturenames = list(fixtures)
        self.lab = lab

    def get_closest_marker(self, name):
        return name == "lab" and self.lab or None


A = types.SimpleNamespace(LAB_BOOTS={"s": Boot("a"), "p": Boot("a", "patched", "x.sh")})
B = types.SimpleNamespace(LAB_BOOTS=[Boot("b"), Boot("a"), Boot("c", overlay="/tmp/x", prefetch=False)])
HOST = types.SimpleNamespace(LAB_BOOTS={"s": Boot("never")})


def planned(items):
    return boots.plan(conftest._wanted_boots(items))


def test_plan_follows_the_tests_once_each():
    items = [Item(A), Item(A), Item(B, ["lab_kselftest_patched"]), Item(HOST, lab=False)]
    assert planned(items) == [Boot("a"), Boot("a", "patched", "x.sh"), Boot("b"),
                              Boot("kselftest", "patched")]


def test_the_dearest_boots_start_first():
    """Boots with a cost start before the rest, dearest first; the others
    keep the tests' order."""
    dear = types.SimpleNamespace(LAB_BOOTS={"z": Boot("zdtm", cost=270), "y": Boot("runc", cost=50)})
    items = [Item(A), Item(B), Item(dear)]
    assert planned(items) == [Boot("zdtm", cost=270), Boot("runc", cost=50), Boot("a"),
                              Boot("a", "patched", "x.sh"), Boot("b")]


def test_no_lab_test_no_boot():
    assert planned([Item(HOST, lab=False)]) == []


def test_a_boot_is_named_by_suites_kernel_and_tag():
    assert Boot("basics,criu-baseline").name == "basics+criu-baseline-stock"
    assert Boot("cet-migrate-import", "patched", tag="import").name == "cet-migrate-import-patched-import"


def test_one_boot_a_session_started_ahead_or_not(monkeypatch):
    calls = []
    monkeypatch.setattr(boots, "boot_json", lambda suites, kernel, name, **kw: calls.append(name) or
                        ({"results": [], "name": name}, "", None))
    session = boots.Session({})
    session.start([Boot("a")])
    assert session.result(Boot("a"))[0]["name"] == "a-stock"
    assert session.result(Boot("a"))[0]["name"] == "a-stock"
    session.result(Boot("b", prefetch=False))
    assert sorted(calls) == ["a-stock", "b-stock"] and session.unused() == []
    assert [w[2] for w in session.walls()] == ["a-stock", "b-stock"]
    session.shutdown()


def test_a_pair_boots_beside_the_single_machines(monkeypatch):
    """A pair of machines does not wait for a core's turn: with one core,
    the pair and a one-machine boot run at once."""
    running, both = set(), threading.Event()

    def fake(suites, kernel, name, **kw):
        running.add(name)
        if len(running) == 2:
            both.set()
        both.wait(5)
        return {"results": [], "name": name}, "", None

    monkeypatch.setattr(boots, "boot_json", fake)
    monkeypatch.setattr(boots.os, "cpu_count", lambda: 1)
    session = boots.Session({})
    session.start([Boot("a"), Boot("m", peer="m")])
    assert session.result(Boot("a"))[0] and both.is_set()
    session.shutdown()


def test_an_overlay_that_cannot_be_built_is_the_boots_error(monkeypatch):
    monkeypatch.setattr(boots, "boot_json", lambda *a, **kw: (_ for _ in ()).throw(AssertionError("booted")))
    session = boots.Session({})
    session._overlays["broken.sh"] = (None, "lab/overlays/broken.sh: no CET glibc")
    assert session.result(Boot("a", overlay="broken.sh")) == (None, "", "lab/overlays/broken.sh: no CET glibc")


def test_early_result_takes_the_started_run_once():
    calls = []

    def job():
        calls.append(1)
        return len(calls)

    session = boots.Session({})
    session.start_early({"job": job})
    assert session.early_result("job", job) == 1
    # not started ahead (or taken already): run now
    assert session.early_result("job", job) == 2
    session.shutdown()
