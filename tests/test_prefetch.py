# SPDX-License-Identifier: GPL-2.0
"""conftest's boots and host jobs started ahead: which boots a selection
plans and in what order, and how a test gets a result started early.  No lab."""

import concurrent.futures
import types

import conftest


class Item:
    """What _planned_runs reads of a pytest item."""

    def __init__(self, module, fixtures=(), lab=True):
        self.module = module
        self.fixturenames = list(fixtures)
        self.lab = lab

    def get_closest_marker(self, name):
        return name == "lab" and self.lab or None


A = types.SimpleNamespace(LAB_RUNS=[("a", "stock", None), ("a", "patched", "x-overlay.sh")])
B = types.SimpleNamespace(LAB_RUNS=[("b", "stock", None), ("a", "stock", None)])
HOST = types.SimpleNamespace(LAB_RUNS=[("never", "stock", None)])


def test_plan_follows_the_tests_once_each():
    items = [Item(A), Item(A), Item(B, ["lab_kselftest_patched"]), Item(HOST, lab=False)]
    assert conftest._planned_runs(items) == [
        ("a", "stock", None), ("a", "patched", "x-overlay.sh"),
        ("b", "stock", None), ("kselftest", "patched", None)]


def test_no_lab_test_no_boot():
    assert conftest._planned_runs([Item(HOST, lab=False)]) == []


def test_early_result_takes_the_started_run_once(monkeypatch):
    calls = []

    def job():
        calls.append(1)
        return len(calls)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        monkeypatch.setitem(conftest._early, "job", pool.submit(job))
        assert conftest.early_result("job", job) == 1
    # not started ahead (or taken already): run now
    assert conftest.early_result("job", job) == 2
    assert "job" not in conftest._early
