# SPDX-License-Identifier: GPL-2.0
"""Host-only: the lab runner stops a guest that panics or hangs, by PID,
and leaves nothing running.  A stand-in for Bochs writes the serial log."""

import os
import re
import stat
import textwrap
import time

import pytest

import run

FAKE = textwrap.dedent("""\
    #!/usr/bin/python3
    import re, sys, time
    rcpath = sys.argv[-1]
    serial = re.search(r"com1: .*dev=(\\S+)", open(rcpath).read()).group(1)
    script = open(rcpath + ".script").read().splitlines()
    with open(serial, "a") as f:
        for line in script:
            if line.startswith("sleep "):
                time.sleep(float(line.split()[1]))
            elif line.startswith("spin "):         # emulating: CPU time, no output
                end = time.monotonic() + float(line.split()[1])
                while time.monotonic() < end:
                    pass
            elif line == "exit":
                sys.exit(0)
            else:
                f.write(line + "\\n"); f.flush()
    time.sleep(3600)
""")


def boot(tmp_path, script, timeout=30, boot_timeout=30, stall=run.STALL):
    bochs = tmp_path / "bochs"
    bochs.write_text(FAKE)
    bochs.chmod(bochs.stat().st_mode | stat.S_IEXEC)
    serial = tmp_path / "serial.log"
    rc = tmp_path / "bochsrc"
    rc.write_text(f"com1: enabled=1, mode=file, dev={serial}\n")
    (tmp_path / "bochsrc.script").write_text("\n".join(script) + "\n")
    b = run.Boot(str(bochs), str(rc), str(serial), echo=False)
    stopped = b.run(timeout, boot_timeout, stall)
    return b, stopped


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_clean_run(tmp_path):
    b, stopped = boot(tmp_path, ["@@LAB BOOT k", "@@LAB PASS a fine", "@@LAB DONE", "exit"])
    assert stopped is None and b.report.ok and b.boot_wall is not None
    assert gone(b.proc.pid)


def test_kernel_panic_stops_the_emulator(tmp_path):
    start = time.monotonic()
    b, stopped = boot(tmp_path, ["@@LAB BOOT k", "Kernel panic - not syncing: test", "sleep 60"])
    assert stopped == "kernel panic"
    assert time.monotonic() - start < 20
    assert gone(b.proc.pid)


def test_watchdog_stops_a_hung_guest(tmp_path):
    b, stopped = boot(tmp_path, ["@@LAB BOOT k", "@@LAB PASS a", "sleep 60"], timeout=3)
    assert stopped.startswith("watchdog")
    silent = int(re.search(r"console silent for the last (\d+) s", stopped).group(1))
    assert 1 <= silent <= 5, stopped     # since its last line, not since the start
    assert gone(b.proc.pid)
    assert b.report.results[0].name == "a"   # what came before is kept for the report


def test_stalled_emulator_is_stopped(tmp_path):
    """A Bochs that uses no CPU (deadlocked) is stopped long
    before the watchdog, and said so; one that spins in silence is not."""
    b, stopped = boot(tmp_path, ["@@LAB BOOT k", "@@LAB PASS a", "sleep 60"], stall=2)
    assert stopped.startswith("bochs stalled") and gone(b.proc.pid)
    b, stopped = boot(tmp_path, ["@@LAB BOOT k", "spin 4", "@@LAB DONE", "exit"], stall=2)
    assert stopped is None, stopped


def test_boot_hang_is_reported(tmp_path):
    b, stopped = boot(tmp_path, ["sleep 60"], boot_timeout=2)
    assert stopped == "boot hang" and gone(b.proc.pid)


def test_emulator_exit_before_done_fails(tmp_path):
    b, stopped = boot(tmp_path, ["@@LAB BOOT k", "@@LAB PASS a", "exit"])
    assert stopped.startswith("bochs exited") and not b.report.done


@pytest.mark.parametrize("missing", ["bochs", "kernel", "initramfs"])
def test_missing_artefact_is_a_clear_error(tmp_path, monkeypatch, missing):
    monkeypatch.setattr(run, "BUILD", str(tmp_path))
    with pytest.raises(run.LabError, match="is missing"):
        run.run_lab(["basics"])


@pytest.mark.parametrize("first", ["boot hang", "bochs stalled: no CPU time for 120 s"])
@pytest.mark.parametrize("second", [None, "again"])
def test_emulator_deadlock_is_retried_once(tmp_path, monkeypatch, first, second):
    """A boot an emulator deadlock stopped (at boot or mid-run) is run again,
    once: the second run's end is the verdict."""
    for f in ("bochs/bochs", "kernel/stock/bzImage", "initramfs.cpio"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    monkeypatch.setattr(run, "BUILD", str(tmp_path))
    monkeypatch.setattr(run, "make_iso", lambda *a: str(tmp_path / "lab.iso"))
    ends = [first, first if second else None]
    started = []

    class Fake:
        def __init__(self, *a):
            self.start = time.monotonic()

        def run(self, *a):
            started.append(1)
            return ends[len(started) - 1]

    monkeypatch.setattr(run, "Boot", Fake)
    _, stopped, _ = run.run_lab(["basics"], keep=str(tmp_path / "keep"))
    assert len(started) == 2 and stopped == ends[1]


def test_a_kept_boot_keeps_its_log_not_its_media(tmp_path, monkeypatch):
    """A kept folder (build/lab-results, one per boot) ends with its serial
    log and bochsrc, without the ISO and the overlaid initramfs (some
    hundred MB a boot: a ZDTM matrix filled the disk)."""
    for f in ("bochs/bochs", "kernel/stock/bzImage", "initramfs.cpio"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    keep = tmp_path / "keep"
    monkeypatch.setattr(run, "BUILD", str(tmp_path))
    monkeypatch.setattr(run, "make_iso", lambda d, *a: (keep / "lab.iso").write_text("iso") or str(keep / "lab.iso"))

    class Fake:
        def __init__(self, bochs, rc, serial, echo):
            self.start = time.monotonic()
            (keep / "initrd-overlay.cpio").write_text("cpio")
            open(serial, "w").write("@@LAB DONE\n")

        def run(self, *a):
            return None

    monkeypatch.setattr(run, "Boot", Fake)
    run.run_lab(["basics"], keep=str(keep))
    assert sorted(p.name for p in keep.iterdir()) == ["bochsrc", "serial.log"]


def test_an_earlier_boots_serial_log_is_not_read(tmp_path):
    """--keep reuses a folder: the last boot's log (which ended in DONE)
    must not make this boot look finished."""
    (tmp_path / "serial.log").write_text("@@LAB BOOT k\n@@LAB DONE\n")
    b, stopped = boot(tmp_path, ["@@LAB BOOT k", "@@LAB PASS a", "exit"])
    assert stopped.startswith("bochs exited") and not b.report.done


# ---- two machines (run.py --peer-suites) ----
FAKE_HUB = "#!/bin/sh\nexec sleep 3600\n"


def pair(tmp_path, monkeypatch, scripts, grace=run.PEER_GRACE):
    """run_pair() with stand-ins for Bochs and bxhub: each machine's
    bochsrc.script is scripts[i]; (boots, stopped, bochsrcs, cmdlines)."""
    for f, text in (("bochs/bochs", FAKE), ("bochs/bxhub", FAKE_HUB)):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text(text)
        (tmp_path / f).chmod(0o755)
    for f in ("kernel/stock/bzImage", "initramfs.cpio"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    monkeypatch.setattr(run, "BUILD", str(tmp_path))
    monkeypatch.setattr(run, "PEER_GRACE", grace)
    cmdlines = []
    monkeypatch.setattr(run, "make_iso", lambda d, k, i, cmdline: cmdlines.append(cmdline) or d + "/lab.iso")
    keep = tmp_path / "keep"
    for i, name in enumerate(("a", "b")):
        (keep / name).mkdir(parents=True)
        (keep / name / "bochsrc.script").write_text("\n".join(scripts[i]) + "\n")
    hubs_before = hubs()
    boots, stopped, _ = run.run_pair([{"suites": ["x"]}, {"suites": ["y"]}], timeout=30, keep=str(keep))
    assert hubs() == hubs_before     # its bxhub is stopped too
    rcs = [(keep / name / "bochsrc").read_text() for name in ("a", "b")]
    return boots, stopped, rcs, cmdlines


def hubs():
    return {p for p in os.listdir("/proc") if p.isdigit() and
            "bochs/bxhub" in open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")} \
        if os.path.isdir("/proc") else set()


def test_pair_one_network_two_addresses(tmp_path, monkeypatch):
    done = ["@@LAB BOOT k", "@@LAB PASS a", "@@LAB DONE", "exit"]
    boots, stopped, rcs, cmdlines = pair(tmp_path, monkeypatch, [done, done])
    assert stopped == [None, None] and all(b.report.ok for b in boots)
    cards = [re.search(r"e1000: enabled=1, mac=(\S+), ethmod=socket, ethdev=(\d+)", rc).groups() for rc in rcs]
    assert cards[0][0] != cards[1][0]                       # two MACs
    assert int(cards[1][1]) == int(cards[0][1]) + 2         # bxhub's ports: base, base + 2
    assert "lab.host=a lab.ip=192.168.76.1/24 lab.peer=192.168.76.2" in cmdlines[0]
    assert "lab.host=b lab.ip=192.168.76.2/24 lab.peer=192.168.76.1" in cmdlines[1]
    assert all(gone(b.proc.pid) for b in boots)


def test_pair_a_machine_whose_peer_died_is_stopped(tmp_path, monkeypatch):
    """B waits for A in vain once A's emulator is gone: it is stopped
    PEER_GRACE later, and says why."""
    start = time.monotonic()
    boots, stopped, _, _ = pair(tmp_path, monkeypatch,
                                [["@@LAB BOOT k", "exit"], ["@@LAB BOOT k", "spin 60"]], grace=2)
    assert stopped[0].startswith("bochs exited")
    assert stopped[1].startswith("its peer stopped (bochs exited")
    assert time.monotonic() - start < 30
    assert all(gone(b.proc.pid) for b in boots)


def test_free_udp_base_is_free():
    import socket
    base = run.free_udp_base()
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(4)]
    for i, s in enumerate(socks):
        s.bind(("0.0.0.0", base + i))     # all four can be had
    for s in socks:
        s.close()
