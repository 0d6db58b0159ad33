#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Boot the emulated CET machine, run guest suites, report their results.

    run.py --suites basics,criu-baseline [--kernel stock|patched|stock-new|patched-new] [--json FILE]
    run.py --suites net-a --peer-suites net-b [--peer-kernel K]    (two machines, one network)

Bochs 3.0 (tigerlake model, our XRSTORS fix) boots the lab kernel from an
ISO with our initramfs.  The guest's serial console goes to a file that is
streamed and parsed (lab/protocol.py).  The runner owns its Bochs: it kills
it by PID on a watchdog timeout, a kernel panic, or when the guest is done,
so nothing is left running.  Exit status 0 only when the guest reached DONE
without a panic and no scenario failed.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import protocol  # noqa: E402

LAB = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(LAB)
BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
IPS = 100_000_000
# seconds without a tick of Bochs CPU time before a boot counts as stalled:
# even niced on a busy host, an emulating Bochs gets some every second
STALL = 120
ISOLINUX = "/usr/lib/ISOLINUX/isolinux.bin"
LDLINUX = "/usr/lib/syslinux/modules/bios/ldlinux.c32"
BIOS = "/usr/share/bochs/BIOS-bochs-latest"
VGABIOS = "/usr/share/vgabios/vgabios.bin"


class LabError(Exception):
    pass


def need(path, hint):
    if not os.path.exists(path):
        raise LabError(f"{path} is missing ({hint})")
    return path


def kernel_cmdline(suites, extra=""):
    return ("console=ttyS0,115200 rdinit=/init mitigations=off "
            f"tsc_early_khz={IPS // 1000} tsc=reliable no_timer_check "
            f"lab.suites={','.join(suites)}" + (f" {extra}" if extra else ""))


def make_iso(workdir, bzimage, initrd, cmdline):
    tree = os.path.join(workdir, "iso")
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(os.path.join(tree, "isolinux"))
    shutil.copy(need(ISOLINUX, "apt install isolinux"), os.path.join(tree, "isolinux"))
    shutil.copy(need(LDLINUX, "apt install syslinux-common"), os.path.join(tree, "isolinux"))
    shutil.copy(bzimage, os.path.join(tree, "bzImage"))
    shutil.copy(initrd, os.path.join(tree, "initrd.img"))
    with open(os.path.join(tree, "isolinux", "isolinux.cfg"), "w") as f:
        f.write(f"DEFAULT lab\nPROMPT 0\nTIMEOUT 0\nLABEL lab\n  KERNEL /bzImage\n"
                f"  APPEND initrd=/initrd.img {cmdline}\n")
    iso = os.path.join(workdir, "lab.iso")
    subprocess.run(["xorriso", "-as", "mkisofs", "-quiet", "-o", iso,
                    "-b", "isolinux/isolinux.bin", "-c", "isolinux/boot.cat",
                    "-no-emul-boot", "-boot-load-size", "4", "-boot-info-table", tree],
                   check=True, stderr=subprocess.DEVNULL)
    shutil.rmtree(tree, ignore_errors=True)
    return iso


# a boot's media, no use once it ran: a kept folder holds its serial log and
# bochsrc (build/lab-results keeps one per boot; a ZDTM matrix has dozens)
BOOT_MEDIA = ("lab.iso", "initrd-overlay.cpio")


def drop_boot_media(workdir):
    for name in BOOT_MEDIA:
        try:
            os.unlink(os.path.join(workdir, name))
        except FileNotFoundError:
            pass


def write_bochsrc(workdir, iso, serial, megs=512, nic=None, clock="none"):
    """The machine: @nic (MAC, UDP port) adds an e1000 card on Bochs'
    socket network, joined to the other machine by bxhub (class Hub)."""
    # info/error logging is ignored: Bochs 3.0 can deadlock when its SIGALRM
    # handler logs while the CPU loop holds the log lock.
    rc = os.path.join(workdir, "bochsrc")
    with open(rc, "w") as f:
        f.write(f"""megs: {megs}
cpu: model=tigerlake, count=1, ips={IPS}, ignore_bad_msrs=1
romimage: file={need(BIOS, "apt install bochsbios")}
vgaromimage: file={need(VGABIOS, "apt install vgabios")}
ata0-master: type=cdrom, path={iso}, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev={serial}
display_library: nogui
clock: sync={clock}, time0=1
mouse: enabled=0
log: {os.path.join(workdir, "bochs.log")}
debug: action=ignore
info: action=ignore
error: action=ignore
panic: action=fatal
""")
        if nic:
            f.write(f"e1000: enabled=1, mac={nic[0]}, ethmod=socket, ethdev={nic[1]}\n")
    return rc


class Boot:
    """One Bochs run, streamed until done, panic or timeout."""

    def __init__(self, bochs, rc, serial, echo, label=""):
        self.serial, self.echo = serial, echo   # echo: False, True (all) or a line prefix
        self.label = label                      # before each echoed line: which machine
        if os.path.exists(serial):
            os.unlink(serial)   # an earlier boot's log (--keep): never read as this one's
        self.report = protocol.Report()
        self.start = time.monotonic()
        self.last_output = self.start
        self.boot_wall = None
        self.proc = subprocess.Popen([bochs, "-q", "-f", rc], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        self.lines = []
        self._partial = ""
        self._pos = 0
        self._cpu, self._cpu_at = None, self.start

    def poll_serial(self):
        try:
            with open(self.serial, "rb") as f:
                f.seek(self._pos)
                data = f.read()
        except FileNotFoundError:
            return
        self._pos += len(data)
        if data:
            self.last_output = time.monotonic()
        text = self._partial + data.decode("utf-8", "replace")
        *complete, self._partial = text.split("\n")
        for line in complete:
            self.lines.append(line)
            protocol.feed(self.report, line)
            if self.report.boot is not None and self.boot_wall is None:
                self.boot_wall = time.monotonic() - self.start
            if self.echo is True:
                print(f"{self.label}  | {line.rstrip()}", flush=True)
            elif self.echo and line.startswith(self.echo):
                print(f"{self.label}{line.rstrip()}", flush=True)

    def flush_partial(self):
        if self._partial:
            self.lines.append(self._partial)
            protocol.feed(self.report, self._partial)
            self._partial = ""

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def cpu_seconds(self):
        """Bochs's CPU time so far: it spins as long as it emulates, the
        guest busy or idle; None once it is gone."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return None

    def stalled(self, stall):
        """True when Bochs has used no CPU for @stall seconds: an emulating
        Bochs always spins, so it is deadlocked and nothing will move again
        (Bochs 3.0's SIGALRM handler waiting for the log lock the CPU loop
        holds is one known way; a guest kernel that hangs keeps it busy)."""
        now, cpu = time.monotonic(), self.cpu_seconds()
        if cpu is None or cpu != self._cpu:
            self._cpu, self._cpu_at = cpu, now
        return now - self._cpu_at > stall

    def step(self, timeout, boot_timeout, stall=STALL):
        """One look at the machine: None while it runs on, else why it
        ended ("" when the guest finished)."""
        self.poll_serial()
        elapsed = time.monotonic() - self.start
        if self.report.panic:
            return "kernel panic"
        if self.proc.poll() is not None:
            self.poll_serial()
            self.flush_partial()
            if self.report.done:
                return ""
            return f"bochs exited (status {self.proc.returncode}) before the guest was done"
        if self.report.done:
            # the guest powers off right after DONE; give it a moment
            deadline = time.monotonic() + 10
            while self.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            self.poll_serial()
            self.flush_partial()
            return ""
        if self.report.boot is None and elapsed > boot_timeout:
            return "boot hang"
        if self.stalled(stall):
            return f"bochs stalled: no CPU time for {stall} s (deadlocked)"
        if elapsed > timeout:
            # init prints lab-alive every two minutes of guest time:
            # a long silence is a guest (or emulator) that hung
            silent = time.monotonic() - self.last_output
            return f"watchdog: no end after {timeout} s (the console silent for the last {silent:.0f} s)"
        return None

    def run(self, timeout, boot_timeout, stall=STALL):
        """Return None when finished, or the reason it was stopped."""
        try:
            while True:
                time.sleep(0.2)
                why = self.step(timeout, boot_timeout, stall)
                if why is not None:
                    return why or None
        finally:
            self.kill()


def append_overlays(initrd, overlays, workdir):
    """The initramfs plus the files of each folder in overlays, as one more
    cpio each that the kernel unpacks over the ones before.  Uncompressed,
    as the initramfs: the emulated CPU inflates gzip at about 4 MB of output
    per guest second, which was most of a boot (a 48 MB initramfs reached
    init at 11.4 s gzipped, 2.2 s plain); the ISO reads at host speed."""
    out = os.path.join(workdir, "initrd-overlay.cpio")
    with open(out, "wb") as f, open(initrd, "rb") as base:
        shutil.copyfileobj(base, f)
        for overlay in overlays:
            # not "." itself: its mode would replace the guest's root folder's
            files = subprocess.run(["find", ".", "-mindepth", "1"], cwd=overlay, check=True,
                                   capture_output=True).stdout
            # the kernel skips zeros between archives; it wants each to start aligned
            f.write(b"\0" * (-f.tell() % 512))
            f.flush()
            subprocess.run(["cpio", "-o", "-H", "newc", "--quiet", "-R", "0:0"], cwd=overlay,
                           input=files, stdout=f, check=True)
            f.seek(0, os.SEEK_END)
    return out


def overlay_list(overlay):
    """None, one folder or several: a list of folders."""
    if not overlay:
        return []
    return [overlay] if isinstance(overlay, str) else list(overlay)


def prepare_machine(workdir, suites, kernel, overlay=None, cmdline="", megs=512, nic=None, clock="none"):
    """One machine's boot in @workdir: the ISO (its kernel, the initramfs
    with @overlay appended, the command line) and the bochsrc (@nic: its
    e1000 card, write_bochsrc).  (bochsrc, serial log)."""
    bzimage = need(os.path.join(BUILD, "kernel", kernel, "bzImage"), f"make kernel-{kernel}")
    initrd = need(os.path.join(BUILD, "initramfs.cpio"), "make initramfs")
    os.makedirs(workdir, exist_ok=True)
    if overlay_list(overlay):
        initrd = append_overlays(initrd, overlay_list(overlay), workdir)
    iso = make_iso(workdir, bzimage, initrd, kernel_cmdline(suites, cmdline))
    serial = os.path.join(workdir, "serial.log")
    return write_bochsrc(workdir, iso, serial, megs, nic, clock), serial


def run_lab(suites, kernel="stock", timeout=900, boot_timeout=180, echo=False, keep=None, overlay=None,
            cmdline="", megs=512):
    bochs = need(os.path.join(BUILD, "bochs", "bochs"), "make bochs")
    workdir = keep or tempfile.mkdtemp(prefix="criu-cet-lab.")
    rc, serial = prepare_machine(workdir, suites, kernel, overlay, cmdline, megs)
    for attempt in (1, 2):
        boot = Boot(bochs, rc, serial, echo)
        stopped = boot.run(timeout, boot_timeout)
        if (stopped == "boot hang" or (stopped or "").startswith("bochs stalled")) and attempt == 1:
            print(f"lab: {stopped}: the emulator deadlocked, retrying once", file=sys.stderr)
            continue
        break
    wall = time.monotonic() - boot.start
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        drop_boot_media(workdir)
    return boot, stopped, wall


# the two-machine lab: machine A and machine B on one emulated Ethernet
# (e1000 cards, Bochs' socket back end, joined by bxhub), static IPv4 from
# the kernel command line (lab.ip=, lab.peer=, read by init).  IPv4 only:
# the socket back end and bxhub drop multicast, so IPv6 neighbour discovery
# cannot work.
PAIR = ({"name": "a", "mac": "52:54:00:76:00:01", "ip": "192.168.76.1"},
        {"name": "b", "mac": "52:54:00:76:00:02", "ip": "192.168.76.2"})
# a machine whose peer stopped early waits for it in vain (its suites time
# out in guest time): this long in wall seconds, then it is stopped too
PEER_GRACE = 120


def free_udp_base(first=40000, last=60000):
    """A base port with base..base+3 free for UDP: bxhub listens on base+1
    and base+3, machine A's card on base, B's on base+2.  Tried from a
    point that depends on our pid, so that boots at once rarely collide."""
    import socket
    span = (last - first) // 4
    for i in range(span):
        base = first + 4 * ((os.getpid() + i) % span)
        socks = []
        try:
            for port in range(base, base + 4):
                sk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                socks.append(sk)
                sk.bind(("0.0.0.0", port))
            return base
        except OSError:
            continue
        finally:
            for sk in socks:
                sk.close()
    raise LabError("no four free UDP ports for bxhub")


class Hub:
    """bxhub (Bochs' misc/bxhub.cc) for two machines, on free ports; it
    runs until killed, so the runner owns it by PID like its Bochs."""

    def __init__(self, workdir):
        hub = need(os.path.join(BUILD, "bochs", "bxhub"), "make bochs")
        self.base = free_udp_base()
        self.log = open(os.path.join(workdir, "bxhub.log"), "w")
        self.proc = subprocess.Popen([hub, f"-base={self.base}", "-ports=2"], stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def port(self, i):
        """Machine i's card receives on base+2i (and sends to base+2i+1)."""
        return self.base + 2 * i

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.log.close()


def pair_cmdline(i, cmdline=""):
    me, peer = PAIR[i], PAIR[1 - i]
    return (f"lab.host={me['name']} lab.ip={me['ip']}/24 lab.peer={peer['ip']}" +
            (f" {cmdline}" if cmdline else ""))


# Bochs' clock of a pair: slowdown keeps each guest's time within about a
# second of the host's.  Under sync=none an idle guest's clock races ahead
# (a CPU that halts skips to its next timer), tens of times faster than a
# busy one's: a ping timed out in guest time before the busy peer had
# answered, TCP retransmitted into the one-frame-a-millisecond receiver
# (4 MiB at 100 KiB/s, 110 segments again; with slowdown 970 KiB/s, 8), and
# a client's freeze was counted in the racing clock.  Idle time is real
# time then, and guest timings do not repeat exactly.
PAIR_CLOCK = "slowdown"


def run_pair(machines, timeout=900, boot_timeout=180, echo=False, keep=None, megs=512, clock=PAIR_CLOCK):
    """Boot machines A and B at once on one network.  @machines: two dicts
    with suites, kernel, overlay, cmdline.  Returns ([Boot A, Boot B],
    [why each stopped or None], wall)."""
    bochs = need(os.path.join(BUILD, "bochs", "bochs"), "make bochs")
    workdir = keep or tempfile.mkdtemp(prefix="criu-cet-pair.")
    os.makedirs(workdir, exist_ok=True)
    hub = Hub(workdir)
    rcs, serials = [], []
    for i, m in enumerate(machines):
        rc, serial = prepare_machine(os.path.join(workdir, PAIR[i]["name"]), m["suites"], m.get("kernel", "stock"),
                                     m.get("overlay"), pair_cmdline(i, m.get("cmdline", "")), megs,
                                     (PAIR[i]["mac"], hub.port(i)), clock)
        rcs.append(rc)
        serials.append(serial)
    boots = [Boot(bochs, rcs[i], serials[i], echo, label=PAIR[i]["name"].upper())
             for i in range(2)]
    stopped, ended = [None, None], [None, None]
    try:
        while None in ended:
            time.sleep(0.2)
            for i, boot in enumerate(boots):
                if ended[i] is not None:
                    continue
                why = boot.step(timeout, boot_timeout)
                other = ended[1 - i]
                if why is None and other is not None and stopped[1 - i] and \
                        time.monotonic() - other > PEER_GRACE:
                    why = f"its peer stopped ({stopped[1 - i]}) and it did not end within {PEER_GRACE} s"
                if why is not None:
                    boot.kill()
                    stopped[i], ended[i] = why or None, time.monotonic()
                    print(f"lab: machine {PAIR[i]['name'].upper()} ended: {why or 'done'}", file=sys.stderr, flush=True)
    finally:
        for boot in boots:
            boot.kill()
        hub.stop()
    wall = max(ended) - min(b.start for b in boots)
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        for machine in PAIR:
            drop_boot_media(os.path.join(workdir, machine["name"]))
    return boots, stopped, wall


def boot_json(suites, kernel, name, overlay=None, timeout=None, megs=None, cmdline=None, env=None,
              peer=None, peer_kernel=None, peer_cmdline=None):
    """Boot the lab in a run.py of its own for @suites (with @peer, two
    machines: machine B runs the suites @peer on @peer_kernel with
    @peer_cmdline, its results under "peer"), its serial log and
    results kept in build/lab-results/<name>: (its parsed results (run.py
    --json) with "folder" added, or None; the tail of what run.py printed;
    why it gave no results, or None).  Any number may run at once: each
    boot has its own folder.  The one way Python boots the lab: the
    reports (lab_to_json) and the test session (lab/boots.py)."""
    out = os.path.join(BUILD, "lab-results", name)
    os.makedirs(out, exist_ok=True)
    js = os.path.join(out, "results.json")
    if os.path.exists(js):
        os.unlink(js)   # never read an older run's results
    cmd = [sys.executable, os.path.abspath(__file__), "--suites", suites, "--kernel", kernel,
           "--json", js, "--keep", out]
    for folder in overlay_list(overlay):
        cmd += ["--overlay", folder]
    if timeout:
        cmd += ["--timeout", str(timeout)]
    if megs:
        cmd += ["--megs", str(megs)]
    if cmdline:
        cmd += ["--cmdline", cmdline]
    if peer:
        cmd += ["--peer-suites", peer, "--peer-kernel", peer_kernel or kernel]
        if peer_cmdline:
            cmd += ["--peer-cmdline", peer_cmdline]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=TOP)
    printed = p.stdout[-4000:]
    if not os.path.exists(js):
        return None, printed, (p.stderr.strip()[-2000:] or "no results")
    with open(js) as f:
        doc = json.load(f)
    doc["folder"] = out
    return doc, printed, None


def lab_to_json(who, suites, kernel, name=None, overlay=None, timeout=None, megs=None):
    """boot_json() for a report: @who names the caller in what it prints;
    a boot that gave no results ends the report."""
    name = name or who
    print(f"{who}: booting the lab for {suites} (serial log in {os.path.join(BUILD, 'lab-results', name)})",
          flush=True)
    doc, printed, error = boot_json(suites, kernel, name, overlay, timeout, megs)
    if doc is None:
        sys.stderr.write(printed[-3000:] + error[-3000:])
        raise SystemExit(f"{who}: the lab run for {suites} produced no results")
    return doc


def report_of(boot, stopped, wall, kernel, suites, label=""):
    """Print a machine's results; its JSON document."""
    rep = boot.report
    for r in rep.results:
        print(f"{label}{r.status:4} {r.name} {r.detail}")
    for m in rep.malformed:
        print(f"{label}lab: malformed protocol line: {m}")
    if stopped:
        print(f"{label}lab: stopped: {stopped}; serial tail:")
        for line in boot.lines[-40:]:
            print(f"{label}  | {line.rstrip()}")
    boot_s = f"{boot.boot_wall:.1f}" if boot.boot_wall is not None else "n/a"
    print(f"{label}lab: kernel={kernel} suites={suites}: {rep.summary()} "
          f"(wall {wall:.1f} s, Bochs start to init {boot_s} s)")
    return {"stopped": stopped, "done": rep.done, "panic": rep.panic,
            "boot": rep.boot, "boot_wall": boot.boot_wall, "wall": wall,
            "suites": rep.suites, "info": rep.info, "malformed": rep.malformed,
            "results": [r._asdict() for r in rep.results],
            "serial_tail": boot.lines[-60:]}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kernels = ["stock", "patched", "stock-new", "patched-new"]
    ap.add_argument("--suites", required=True, help="comma-separated guest suites")
    ap.add_argument("--kernel", default="stock", choices=kernels)
    ap.add_argument("--timeout", type=int, default=900, help="watchdog, seconds of wall time")
    ap.add_argument("--json", help="write the parsed results here")
    ap.add_argument("--keep", help="keep ISO, bochsrc and serial log in this folder")
    ap.add_argument("--echo", action="store_true", help="stream the serial console")
    ap.add_argument("--show", metavar="PREFIX", help="stream only console lines starting with PREFIX")
    ap.add_argument("--overlay", metavar="DIR", action="append",
                    help="add the files of DIR to the guest's root (again for more folders)")
    ap.add_argument("--cmdline", default="", metavar="ARGS", help="more kernel command line")
    ap.add_argument("--megs", type=int, default=512,
                    help="guest RAM in MiB (its initramfs, and all it writes, live in half of it)")
    pair = ap.add_argument_group("two machines", "with --peer-suites, a second machine B boots beside "
                                 "this one (A) on one network; the JSON holds B's results under \"peer\"")
    pair.add_argument("--peer-suites", help="machine B's suites")
    pair.add_argument("--peer-kernel", choices=kernels, help="machine B's kernel (default --kernel)")
    pair.add_argument("--peer-overlay", metavar="DIR", action="append", help="machine B's overlays "
                      "(default --overlay)")
    pair.add_argument("--peer-cmdline", default="", metavar="ARGS", help="machine B's command line")
    pair.add_argument("--clock", default=PAIR_CLOCK, choices=["none", "slowdown"],
                      help=f"Bochs' clock sync of both machines (default {PAIR_CLOCK})")
    args = ap.parse_args(argv)
    # killed (a test session's timeout, make's ^C): the finally clauses
    # still stop this run's Bochs and bxhub, which no one else would
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    echo = args.show or args.echo
    try:
        if args.peer_suites:
            machines = [{"suites": args.suites.split(","), "kernel": args.kernel,
                         "overlay": args.overlay, "cmdline": args.cmdline},
                        {"suites": args.peer_suites.split(","), "kernel": args.peer_kernel or args.kernel,
                         "overlay": args.peer_overlay or args.overlay, "cmdline": args.peer_cmdline}]
            boots, stopped, wall = run_pair(machines, args.timeout, echo=echo, keep=args.keep,
                                            megs=args.megs, clock=args.clock)
        else:
            boot, why, wall = run_lab(args.suites.split(","), args.kernel, args.timeout, echo=echo,
                                      keep=args.keep, overlay=args.overlay, cmdline=args.cmdline,
                                      megs=args.megs)
            boots, stopped = [boot], [why]
    except (LabError, subprocess.CalledProcessError) as e:
        print(f"lab: error: {e}", file=sys.stderr)
        return 2
    if len(boots) == 1:
        doc = report_of(boots[0], stopped[0], wall, args.kernel, args.suites)
    else:
        doc = report_of(boots[0], stopped[0], wall, args.kernel, args.suites, "A: ")
        doc["peer"] = report_of(boots[1], stopped[1], wall, args.peer_kernel or args.kernel,
                                args.peer_suites, "B: ")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    ok = all(b.report.ok for b in boots) and not any(stopped)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
