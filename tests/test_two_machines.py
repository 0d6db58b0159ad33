# SPDX-License-Identifier: GPL-2.0
"""Two lab machines on one emulated Ethernet (run.py --peer-suites: e1000
cards on Bochs' socket back end, joined by bxhub): the network itself
(suite net), and valkey on glibc's shadow stacks migrated from machine A to
machine B over it (suite migrate-net): pre-dumps and the dump through B's
page server, post-copy through B's lazy-pages daemon, and with
--tcp-established while a client on A keeps one connection open.  On each
kernel, and from the stock kernel to the patched one."""

import os

import pytest

from conftest import Boot, fields, lab_fixture, lab_results

pytestmark = pytest.mark.lab

OVERLAY = "migrate.sh"
SUITES = "net,migrate-net"
# make test boots one pair (SAMPLE); make migrate-net every one
# (LAB_MIGRATE_ALL=1): each pair of kernels through every flow with stock
# 4.1.1 beside, the failures, the refused destination and the fleet
ALL = os.environ.get("LAB_MIGRATE_ALL") == "1"
PAIRS = {"stock": ("stock", "stock"), "patched": ("patched", "patched"),
         "stock-to-patched": ("stock", "patched")}
FLOWS = ("pages", "lazy", "tcp", "tcp-nopre")
# migrations that fail on purpose (migrate-net.sh's a_fall_back and
# a_lazy_drop): B's criu killed mid-restore, A's network cut while the dump
# sends its pages and during post-copy; and a destination whose kernel has
# no user shadow stacks
FAILED = ("dies", "drop", "lazy-drop")
# the sample: from the stock kernel to the patched one, the flows that
# carry the most (pre-dumps through B's page server, post-copy,
# --tcp-established, B's criu killed mid-restore), without stock 4.1.1's
# runs beside them; a destination without user shadow stacks is suite
# cet-no-shstk's (test_rpc.py) on one machine
SAMPLE_FLOWS, SAMPLE_FAILED = ("pages", "lazy", "tcp"), ("dies",)
SAMPLE = Boot(SUITES, "stock", OVERLAY, peer=SUITES, peer_kernel="patched", timeout=2400,
              cmdline="mig.flows=" + ",".join(SAMPLE_FLOWS + SAMPLE_FAILED) + " mig.stock=none")
# two machines at once take both cores; a migration boot is some minutes
MIGRATIONS = {name: Boot(SUITES, a, OVERLAY, peer=SUITES, peer_kernel=b, timeout=2400,
                         cmdline="mig.flows=" + ",".join(FLOWS))
              for name, (a, b) in PAIRS.items()} if ALL else {"stock-to-patched": SAMPLE}
FAILURES = {"failures": Boot("migrate-net", "stock", OVERLAY, tag="failures", peer="migrate-net", timeout=2400,
                             cmdline="mig.flows=" + ",".join(FAILED)),
            "refused": Boot("migrate-net", "stock", OVERLAY, tag="refused", peer="migrate-net", timeout=1800,
                            cmdline="mig.flows=refused", peer_cmdline="clearcpuid=user_shstk")} if ALL else \
    {"failures": SAMPLE}
# a rolling upgrade: A dumps with one CRIU, B restores with another
# (migrate-net.sh's a_fleet), for valkey on shadow stacks and without.
# Stock 4.1.1's directions take the files flow (no page server): CRIU 4.2
# widened the page-server command (struct page_server_iov's nr_pages, u32
# to u64) with no version check, so a 4.1.1 pre-dump and a 4.2-based page
# server (criu-cet's, or 4.2.1's) each wait for the rest of a command the
# other never sends
FLEET = tuple(f"fleet-{a}-{b}{plain}" for a, b in (("4.2.1", "cet"), ("cet", "4.2.1"), ("stock", "cet"),
                                                   ("cet", "stock")) for plain in ("", "-plain"))
FLEET_BOOT = Boot("migrate-net", "stock", OVERLAY, tag="fleet", peer="migrate-net", timeout=2400,
                  cmdline="mig.flows=" + ",".join(FLEET))
LAB_BOOTS = {**MIGRATIONS, **FAILURES, "fleet": FLEET_BOOT} if ALL else {"sample": SAMPLE}
# what make test leaves to make migrate-net, said in its skips
ONLY_ALL = pytest.mark.skipif(not ALL, reason="make migrate-net's (LAB_MIGRATE_ALL=1); make test boots one pair")


def sampled(values, sample):
    """@values, those outside make test's @sample skipped with ONLY_ALL."""
    return [v if ALL or v in sample else pytest.param(v, marks=ONLY_ALL) for v in values]


pair = lab_fixture(MIGRATIONS)


class Machine:
    """One machine's results in a pair boot's document."""

    def __init__(self, doc):
        self.doc = doc
        self.by_name = {r["name"]: r for r in doc["results"]}

    def reported(self, name):
        """An INFO line's detail (another CRIU's outcome, reported, not
        judged), or None."""
        return self.doc["info"].get(name)

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


@pytest.mark.parametrize("flow", sampled(FLOWS, SAMPLE_FLOWS))
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


@pytest.mark.parametrize("flow", sampled(("tcp", "tcp-nopre"), SAMPLE_FLOWS))
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


@pytest.mark.parametrize("case, error", (("no-page-server", "Connection refused"),
                                         ("no-address", "No route to host")))
def test_no_page_server_leaves_the_task_running(pair, case, error):
    """A dump whose page server is not there (a wrong port, a wrong
    address) fails with criu's error, and valkey runs on on A with its
    data and CET state."""
    a, _ = machines(pair)
    f = a.passed(f"migrate.{case}")
    assert error in f["why"], f


def failed_pair(name):
    return Machine(lab_results(FAILURES[name]).data)


@pytest.fixture(scope="module")
def failures():
    return failed_pair("failures")


@pytest.fixture(scope="module")
def refused():
    return failed_pair("refused")


def assert_ran_on_and_nothing_left(r):
    """valkey runs on on A with every thread's shadow stack and locks, and
    no criu process nor valkey is left on B."""
    assert r["cet"].count("shstk/shstk,wrss") >= 5 and r["cet"].endswith("ss=5"), r
    assert (r["b_criu"], r["b_valkey"]) == ("0", "0"), r


@pytest.mark.parametrize("flow", sampled(FAILED, SAMPLE_FAILED))
def test_failed_migration_leaves_the_task_running_on_a(failures, flow):
    """The migration fails, valkey runs on on A as before, and nothing of it
    stays on B: no half-restored valkey, no page server or lazy-pages
    daemon waiting for a peer that is gone."""
    r = failures.passed(f"migrate.{flow}")
    assert_ran_on_and_nothing_left(r)
    if flow == "dies":
        # A's dump went through; B's restore was killed (SIGKILL)
        assert r["dump_rc"] == "0", r
    if flow == "drop":
        # the dump gave up on its silent page server itself, before A's deadline
        assert r["dump_rc"] == "1", r
    if flow == "lazy-drop":
        # A's dump gave up on B, and B's lazy-pages daemon killed the
        # valkey whose pages could no longer come
        assert int(r["gave_up_secs"]) < 90 and r["b_lazy_killed"] == "1", r


@ONLY_ALL
def test_failed_migration_stock_beside(failures):
    """Stock 4.1.1 whose criu dies on B mid-restore: what it leaves on B,
    printed beside criu-cet's."""
    ours = failures.passed("migrate.dies")
    stock = failures.reported("migrate.stock.dies")
    assert stock, "no stock line"
    s = fields({"detail": stock})
    print(f"\nB's criu killed mid-restore, left on B: criu-cet criu={ours['b_criu']} valkey={ours['b_valkey']}; "
          f"stock 4.1.1 criu={s.get('b_criu')} valkey={s.get('b_valkey')}")


@ONLY_ALL
def test_destination_without_shadow_stacks_refuses(refused):
    """B's kernel has no user shadow stacks: criu-cet's restore refuses,
    naming why, before anything is restored; valkey runs on on A."""
    r = refused.passed("migrate.refused")
    assert_ran_on_and_nothing_left(r)
    detail = refused.by_name["migrate.refused"]["detail"]
    assert "shadow stack" in detail, detail


@pytest.fixture(scope="module")
def fleet():
    return Machine(lab_results(FLEET_BOOT).data)


@ONLY_ALL
@pytest.mark.parametrize("flow", [f for f in FLEET if f.split("-")[2] == "cet"])
def test_fleet_criu_cet_restores_what_another_criu_dumped(fleet, flow):
    """B runs criu-cet, A CRIU 4.2.1 or stock 4.1.1: valkey restored on B
    with its data, and on shadow stacks every thread's features and locks
    (4.2.1 and 4.1.1 record no lock mask: criu-cet restores glibc's, all
    bits) and its shadow-stack mappings; a smash is still caught."""
    done = fleet.passed(f"migrate.{flow}.restore")
    assert int(done["pages_bytes"]) > 0
    state = fleet.passed(f"migrate.{flow}.state")
    if flow.endswith("-plain"):
        assert "shstk" not in state["cet"] and state["cet"].endswith("ss=0"), state
    else:
        assert state["cet"].count("shstk/shstk,wrss") >= 5 and state["cet"].endswith("ss=5"), state
        fleet.passed(f"migrate.{flow}.smash")


@ONLY_ALL
def test_fleet_directions_table(fleet):
    """The table of a rolling upgrade's directions: each one's restore and
    state as B saw them (criu-cet's judged above, the others' as they are)."""
    print("\nrolling upgrade (A dumps, B restores): restore / state")
    for flow in FLEET:
        cells = []
        for step in ("restore", "state"):
            name = f"migrate.{flow}.{step}"
            r, info = fleet.by_name.get(name), fleet.reported(name)
            cells.append(r["status"] if r else info.split(":")[0] if info else "-")
        print(f"  {flow[len('fleet-'):]:22} " + " / ".join(cells))
    assert fleet.by_name.get("migrate.fleet-4.2.1-cet.restore"), "no fleet result"
