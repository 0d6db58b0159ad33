# SPDX-License-Identifier: GPL-2.0
"""Two lab machines on one emulated Ethernet (run.py --peer-suites: e1000
cards on Bochs' socket back end, joined by bxhub): the network itself
(suite net), and valkey on glibc's shadow stacks migrated from machine A to
machine B over it (suite migrate-net): pre-dumps and the dump through B's
page server, post-copy through B's lazy-pages daemon, and with
--tcp-established while a client on A keeps one connection open.  On each
kernel, and from the stock kernel to the patched one."""

import pytest

from conftest import Boot, fields, lab_fixture

pytestmark = pytest.mark.lab

OVERLAY = "migrate.sh"
SUITES = "net,migrate-net"
PAIRS = {"stock": ("stock", "stock"), "patched": ("patched", "patched"),
         "stock-to-patched": ("stock", "patched")}
# two machines at once take both cores; a migration boot is some minutes
LAB_BOOTS = {name: Boot(SUITES, a, OVERLAY, peer=SUITES, peer_kernel=b, timeout=2400)
             for name, (a, b) in PAIRS.items()}
FLOWS = ("pages", "lazy", "tcp", "tcp-nopre")

pair = lab_fixture(LAB_BOOTS)


class Machine:
    """One machine's results in a pair boot's document."""

    def __init__(self, doc):
        self.doc = doc
        self.by_name = {r["name"]: r for r in doc["results"]}

    def passed(self, name):
        if self.doc["stopped"] or not self.doc["done"]:
            tail = "\n".join(self.doc["serial_tail"][-30:])
            pytest.fail(f"the machine did not finish ({self.doc['stopped']}); serial tail:\n{tail}")
        r = self.by_name.get(name)
        assert r, f"no result for {name}"
        assert r["status"] == "PASS", f"{name}: {r['status']} {r['detail']}"
        return fields(r)


def machines(lab):
    return Machine(lab.data), Machine(lab.data["peer"])


def test_network(pair):
    """A reaches B, and 4 MiB cross intact in both machines' eyes."""
    a, b = machines(pair)
    a.passed("net.ping")
    sent = a.passed("net.transfer")
    got = b.passed("net.receive")
    assert sent["md5"] == got["md5"] and int(got["bytes"]) == int(sent["bytes"]) == 4 << 20
    assert float(sent["secs"]) > 0


@pytest.mark.parametrize("flow", FLOWS)
def test_migration(pair, flow):
    """valkey restored on B with its data, every thread's features and
    locks and its shadow-stack mappings as on A; a smash is still caught."""
    a, _ = machines(pair)
    done = a.passed(f"migrate.{flow}.restore")
    assert done["flow"] == flow
    # the pre-dumps' pages and the dump's crossed to B; post-copy and
    # tcp-nopre have no pre-dump
    assert int(done["pre_dumps"]) == (0 if flow in ("lazy", "tcp-nopre") else 2)
    assert int(done["pages_bytes"]) > 0 and int(done["files_bytes"]) > 0
    state = a.passed(f"migrate.{flow}.state")
    assert state["cet"].count("shstk/shstk,wrss") >= 5 and state["cet"].endswith("ss=5")
    a.passed(f"migrate.{flow}.smash")


@pytest.mark.parametrize("flow", ("tcp", "tcp-nopre"))
def test_tcp_client_kept_its_connection(pair, flow):
    """The client on A wrote and read through the move on one connection,
    with pre-dumps and without: nothing acknowledged lost, the same CLIENT
    ID before and after."""
    a, _ = machines(pair)
    c = a.passed(f"migrate.{flow}.client")
    assert int(c["lost"]) == 0 and int(c["mismatched"]) == 0
    first, last = c["client_id"].split("/")
    assert first == last
    assert int(c["acked"]) > int(c["gap_after"]) > 0


def test_no_page_server_leaves_the_task_running(pair):
    """A dump whose page server is not there fails, and valkey runs on on
    A with its data and CET state."""
    a, _ = machines(pair)
    a.passed("migrate.no-page-server")
