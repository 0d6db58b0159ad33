#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench: checkpoint/restore cost of shadow stacks, in guest time.

    bench.py --run              build CRIU 4.2.1 if it can be had, boot the lab
                                (suite bench) and report
    bench.py RESULTS.json       report on what run.py --json already wrote

The guest suite (lab/suites/bench.sh) prints one line per measurement,
"@@LAB INFO bench.<scenario>.<criu>.<rep> key=value ... [why=text]"; rep 0
is a warm-up.  This takes the median over the reps of each figure and prints
a table (scenario x CRIU: criu-cet, stock 4.1.1, CRIU 4.2.1), the cost of a
MiB of shadow stack next to a MiB of ordinary memory (time and criu's peak
RSS), the growth with the used depth and with the number of threads (and
verdicts on their linearity), and last the line

    bench: cet-overhead dump X restore Y; vs-stock dump A restore B; vs-4.2.1 restore C; ss-per-byte D (dump Dd restore Dr); rss-overhead E MiB

cet-overhead: shstk / plain with criu-cet.  vs-stock: criu-cet / stock 4.1.1
on plain.  vs-4.2.1: criu-cet / CRIU 4.2.1 on the shadow-stack scenarios
(geometric mean).  ss-per-byte: what a MiB of used shadow stack adds to dump
+ restore time over what a MiB of dirty heap adds, then the same for dump
and for restore on their own.  rss-overhead: the most a
shadow stack (1, 8, 64 MiB used, or a sparse 384 MiB one) adds to criu's peak
RSS over the same process with ordinary memory instead.  "restore" is
restore+run: until `criu restore -d` has returned and the restored task has
run again.  The targets are figures, not tests: missing them does not change
the exit status, which is non-zero only when the lab run broke or a criu-cet
measurement failed (dump, restore, or the task's check after restore).
"""

import argparse
import json
import os
import sys
from collections import namedtuple

# the runner (lab/run.py, protocol.py, images.py) is one folder up
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import protocol  # noqa: E402
from compare import upstream_overlay  # noqa: E402
from run import lab_to_json  # noqa: E402

PREFIX = "bench."
OURS = "criu-cet"
STOCK = "stock"
UPSTREAM = "criu-4.2.1"
CRIUS = (OURS, STOCK, UPSTREAM)
CRIU_LABEL = {OURS: "criu-cet", STOCK: "stock-4.1.1", UPSTREAM: "criu-4.2.1"}
SCENARIOS = ("plain", "shstk", "deep", "threads")
SS_SCENARIOS = ("shstk", "deep", "threads")
SCENARIO_LABEL = {
    "plain": "(a) plain",
    "shstk": "(b) shstk",
    "deep": "(c) deep",
    "threads": "(d) 16 threads",
}
TARGET_OVERHEAD = 1.02
TARGET_VS_STOCK = 1.00
TARGET_VS_UPSTREAM = 0.60
TARGET_SS_PER_BYTE = 1.00
TARGET_RSS_MIB = 1.0
# linearity verdict: how well a line must fit, and how small the depth-0
# shadow-stack cost must stay next to copying the whole mapping
MIN_R2 = 0.98
MAX_FIXED_SHARE = 0.25

Sample = namedtuple("Sample", "scenario criu rep fields")


def split_key(key):
    """'bench.<scenario>.<criu>.<rep>' -> (scenario, criu, rep); None otherwise."""
    if not key.startswith(PREFIX):
        return None
    scen, _, rest = key[len(PREFIX):].partition(".")
    criu, _, rep = rest.rpartition(".")     # a CRIU's name may have dots (criu-4.2.1)
    if not scen or not criu or not rep.isdigit():
        return None
    return scen, criu, int(rep)


def parse_fields(text):
    """'k=v k=v why=free text' -> dict; why= takes the rest of the line."""
    return protocol.parse_fields(text, "why")


def parse_info(info):
    """run.py's report.info dict -> measured samples (warm-ups dropped), in key order."""
    samples = []
    for key in sorted(info):
        parts = split_key(key)
        if parts is None or parts[2] == 0:
            continue
        samples.append(Sample(*parts, parse_fields(info[key])))
    return samples


def median(values):
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    if len(values) % 2:
        return values[mid]
    return (values[mid - 1] + values[mid]) / 2


def as_number(fields, key):
    try:
        return float(fields[key])
    except (KeyError, ValueError):
        return None


def dumped(f):
    return f.get("dump_rc") == "0"


def restored(f):
    return dumped(f) and f.get("restore_rc") == "0"


def verified(f):
    return restored(f) and f.get("check") == "ok"


Summary = namedtuple("Summary", "n dump_ok restore_ok ok dump_s restore_s live_s img_kb "
                                "dump_rss_kb restore_rss_kb frames got_frames ss_kb "
                                "maps_before maps_after checks why")


def maps_text(fields, prefix):
    """Shadow-stack mappings as 'NxK KiB' ('-' when unknown, '0' for none)."""
    nr, kb = fields.get(prefix + "ss_vmas"), fields.get(prefix + "ss_kb")
    if nr is None or kb is None:
        return "-"
    if nr == "0":
        return "0"
    try:
        each = int(kb) // int(nr)
    except ValueError:
        return "-"
    return f"{nr}x{each}K" if each * int(nr) == int(kb) else f"{nr}/{kb}K"


def first_or_mixed(texts):
    texts = [t for t in texts if t != "-"]
    if not texts:
        return "-"
    return texts[0] if len(set(texts)) == 1 else "/".join(sorted(set(texts)))


def summarize(samples):
    """{(scenario, criu): Summary} with the median of every figure over the reps
    where it means something: dump figures where the dump worked, restore time
    where criu restore returned 0, restore+run only where the task checked ok."""
    groups = {}
    for s in samples:
        groups.setdefault((s.scenario, s.criu), []).append(s.fields)
    out = {}
    for key, fl in groups.items():
        def med(pred, name, scale=1.0):
            vals = [as_number(f, name) for f in fl if pred(f)]
            vals = [v * scale for v in vals if v is not None]
            return median(vals)

        checks = {}
        for f in fl:
            checks[f.get("check", "?")] = checks.get(f.get("check", "?"), 0) + 1
        whys = [f["why"] for f in fl if f.get("why")]
        out[key] = Summary(
            n=len(fl),
            dump_ok=sum(1 for f in fl if dumped(f)),
            restore_ok=sum(1 for f in fl if restored(f)),
            ok=sum(1 for f in fl if verified(f)),
            dump_s=med(dumped, "dump_ns", 1e-9),
            restore_s=med(restored, "restore_ns", 1e-9),
            live_s=med(verified, "restore_live_ns", 1e-9),
            img_kb=med(dumped, "img_kb"),
            dump_rss_kb=med(dumped, "dump_rss_kb"),
            restore_rss_kb=med(restored, "restore_rss_kb"),
            frames=med(lambda f: True, "frames"),
            got_frames=med(verified, "got_frames"),
            ss_kb=med(lambda f: True, "pre_ss_own_kb"),
            maps_before=first_or_mixed([maps_text(f, "pre_") for f in fl]),
            maps_after=first_or_mixed([maps_text(f, "got_") for f in fl if verified(f)]),
            checks=checks,
            why=whys[0] if whys else "")
    return out


def ratio(num, den):
    if num is None or not den:
        return None
    return num / den


def upstream_ratios(summ):
    """{scenario: criu-cet / CRIU 4.2.1 restore+run} on the shadow-stack
    scenarios where both tasks ran again after the restore."""
    out = {}
    for scen in SS_SCENARIOS:
        ours, up = summ.get((scen, OURS)), summ.get((scen, UPSTREAM))
        if ours and up:
            r = ratio(ours.live_s, up.live_s)
            if r is not None:
                out[scen] = r
    return out


def geomean(values):
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    prod = 1.0
    for v in values:
        prod *= v
    return prod ** (1.0 / len(values))


def ratios(summ):
    """The ratios of the last line (None where a figure is missing)."""
    def get(scen, criu, attr):
        s = summ.get((scen, criu))
        return getattr(s, attr) if s else None

    cost = byte_costs(summ)
    return {
        "overhead_dump": ratio(get("shstk", OURS, "dump_s"), get("plain", OURS, "dump_s")),
        "overhead_restore": ratio(get("shstk", OURS, "live_s"), get("plain", OURS, "live_s")),
        "vs_stock_dump": ratio(get("plain", OURS, "dump_s"), get("plain", STOCK, "dump_s")),
        "vs_stock_restore": ratio(get("plain", OURS, "live_s"), get("plain", STOCK, "live_s")),
        "vs_upstream_restore": geomean(upstream_ratios(summ).values()),
        "ss_per_byte": cost["ratio"],
        "ss_per_byte_dump": cost["dump_ratio"],
        "ss_per_byte_restore": cost["restore_ratio"],
        "rss_overhead_mib": rss_overhead_mib(summ),
    }


# --- the cost of a byte: ss-N (N MiB of used shadow stack) and anon-N (N MiB
# more dirty heap) of the same process, ss-0 the common base

def series(summ, name, base=None):
    """[(N, Summary)] of criu-cet's scenarios "<name>-N", by N; base, when
    given, is a scenario of another series that counts as this one's too."""
    pts = []
    for (scen, criu), s in summ.items():
        prefix, dash, n = scen.partition("-")
        if criu == OURS and dash and n.isdigit() and (prefix == name or scen == base):
            pts.append((int(n), s))
    return sorted(pts, key=lambda p: p[0])


def size_points(summ, kind):
    """[(MiB, Summary)] of criu-cet for kind "ss" or "anon", ss-0 as 0 MiB of both."""
    return series(summ, kind, base="ss-0")


def slope(points, attr):
    """Seconds per MiB of one figure (least squares), None under 2 sizes."""
    pts = [(n, getattr(s, attr)) for n, s in points if getattr(s, attr) is not None]
    if len(pts) < 2 or len({n for n, _ in pts}) < 2:
        return None
    return linear_fit([p[0] for p in pts], [p[1] for p in pts])[1]


def byte_costs(summ):
    """Per-MiB dump and restore+run cost of each kind, and the ratio of the
    shadow stack's dump + restore cost to ordinary memory's."""
    ss, anon = size_points(summ, "ss"), size_points(summ, "anon")
    c = {"ss_dump": slope(ss, "dump_s"), "ss_restore": slope(ss, "live_s"),
         "anon_dump": slope(anon, "dump_s"), "anon_restore": slope(anon, "live_s")}
    known = None not in c.values()
    c["ratio"] = ratio(c["ss_dump"] + c["ss_restore"],
                       c["anon_dump"] + c["anon_restore"]) if known else None
    c["dump_ratio"] = ratio(c["ss_dump"], c["anon_dump"]) if known else None
    c["restore_ratio"] = ratio(c["ss_restore"], c["anon_restore"]) if known else None
    return c


def rss_overhead_mib(summ):
    """The most a shadow stack adds to criu's peak RSS (dump or restore): each
    ss-N against anon-N, the sparse stack against ss-0."""
    pairs = [(s, a) for (n, s) in size_points(summ, "ss") if n
             for (m, a) in size_points(summ, "anon") if m == n]
    sparse, base = summ.get(("sparse", OURS)), summ.get(("ss-0", OURS))
    if sparse and base:
        pairs.append((sparse, base))
    diffs = []
    for s, a in pairs:
        for attr in ("dump_rss_kb", "restore_rss_kb"):
            x, y = getattr(s, attr), getattr(a, attr)
            if x is not None and y is not None:
                diffs.append((x - y) / 1024)
    return max(diffs) if diffs else None


def byte_table(summ):
    header = ["MiB", "ss dump s", "anon dump s", "ss restore+run s", "anon restore+run s",
              "ss dump RSS MiB", "anon dump RSS MiB", "ss restore RSS MiB", "anon restore RSS MiB"]
    ss, anon = dict(size_points(summ, "ss")), dict(size_points(summ, "anon"))
    rows = []
    for n in sorted(set(ss) | set(anon)):
        a, b = ss.get(n), anon.get(n)
        g = lambda x, attr: None if x is None else getattr(x, attr)    # noqa: E731
        rows.append([str(n), fmt_s(g(a, "dump_s")), fmt_s(g(b, "dump_s")),
                     fmt_s(g(a, "live_s")), fmt_s(g(b, "live_s")),
                     fmt_mib(g(a, "dump_rss_kb")), fmt_mib(g(b, "dump_rss_kb")),
                     fmt_mib(g(a, "restore_rss_kb")), fmt_mib(g(b, "restore_rss_kb"))])
    sp = summ.get(("sparse", OURS))
    if sp:
        rows.append(["sparse", fmt_s(sp.dump_s), "", fmt_s(sp.live_s), "",
                     fmt_mib(sp.dump_rss_kb), "", fmt_mib(sp.restore_rss_kb), ""])
    return render(rows, header, left=(0,))


def fmt_ms(v):
    return "n/a" if v is None else f"{v * 1e3:.1f} ms"


# --- the cost of a thread: threads-N, N threads on shadow stacks

def thread_points(summ):
    return series(summ, "threads")


def thread_verdict(points):
    """One line per figure: is criu-cet's time linear in the number of threads?"""
    lines = []
    for attr, what in (("dump_s", "dump"), ("live_s", "restore+run")):
        pts = [(n, getattr(s, attr)) for n, s in points if getattr(s, attr) is not None]
        if len(pts) < 3:
            lines.append(f"threads: {what} verdict n/a (fewer than 3 thread counts measured)")
            continue
        a, b, r2 = linear_fit([p[0] for p in pts], [p[1] for p in pts])
        text = (f"threads: {what} = {a:.3f} s + {b * 1e3:.2f} ms per thread "
                f"(R^2 {r2:.3f}, {len(pts)} counts {pts[0][0]}..{pts[-1][0]})")
        lines.append(text + ("; verdict: linear in threads" if b > 0 and r2 >= MIN_R2
                             else "; verdict: NOT linear in threads"))
    return lines


def thread_table(points):
    header = ["threads", "dump s", "restore s", "restore+run s", "dump RSS MiB", "after restore"]
    rows = [[str(n), fmt_s(s.dump_s), fmt_s(s.restore_s), fmt_s(s.live_s),
             fmt_mib(s.dump_rss_kb), status_text(s)] for n, s in points]
    return render(rows, header, left=())


def target_state(v, target):
    """Judged at the precision the ratios are printed with (two decimals)."""
    if v is None:
        return "n/a"
    return "met" if round(v, 2) <= target else "MISSED"


def fmt_ratio(r):
    return "n/a" if r is None else f"{r:.2f}"


def last_line(r):
    rss = r.get("rss_overhead_mib")
    return (f"bench: cet-overhead dump {fmt_ratio(r['overhead_dump'])} "
            f"restore {fmt_ratio(r['overhead_restore'])}; "
            f"vs-stock dump {fmt_ratio(r['vs_stock_dump'])} "
            f"restore {fmt_ratio(r['vs_stock_restore'])}; "
            f"vs-4.2.1 restore {fmt_ratio(r.get('vs_upstream_restore'))}; "
            f"ss-per-byte {fmt_ratio(r.get('ss_per_byte'))} (dump {fmt_ratio(r.get('ss_per_byte_dump'))} "
            f"restore {fmt_ratio(r.get('ss_per_byte_restore'))}); "
            f"rss-overhead {'n/a' if rss is None else f'{rss:.2f}'} MiB")


def fmt_s(v, mark=""):
    return "-" if v is None else f"{v:.3f}{mark}"


def fmt_kb(v):
    return "-" if v is None else f"{v:.0f}"


def fmt_mib(v):
    return "-" if v is None else f"{v / 1024:.1f}"


def status_text(s):
    if s.ok == s.n:
        return f"{s.ok}/{s.n} ok"
    bad = ", ".join(f"{k} x{v}" for k, v in sorted(s.checks.items()) if k != "ok")
    text = f"{s.ok}/{s.n} ok; {bad}"
    if s.why:
        text += f": {s.why}"
    return text


def render(rows, header, left=(0, 1)):
    """Aligned columns; those in left (and the last) left-aligned, the rest right."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = []
    for r in [header, ["-" * w for w in widths]] + rows:
        cells = [str(c).ljust(w) if i in left or i == len(r) - 1 else str(c).rjust(w)
                 for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
    return lines


def maps_cell(s):
    """Shadow-stack mappings before the dump -> after the restore."""
    if s.maps_before in ("-", "0") and s.maps_after in ("-", "0"):
        return s.maps_before if s.maps_after == "-" else s.maps_after
    return f"{s.maps_before}->{s.maps_after}"


def table(summ, note_width=70):
    """Main table, scenario x CRIU, as lines."""
    header = ["scenario", "criu", "dump s", "restore s", "restore+run s", "image KiB",
              "dump RSS MiB", "restore RSS MiB", "shstk maps", "after restore"]
    rows = []
    for scen in SCENARIOS:
        for criu in CRIUS:
            s = summ.get((scen, criu))
            if s is None:
                continue
            mark = "" if s.ok == s.restore_ok else "*"
            note = status_text(s)
            if len(note) > note_width:
                note = note[:note_width - 3] + "..."
            rows.append([SCENARIO_LABEL[scen], CRIU_LABEL[criu], fmt_s(s.dump_s),
                         fmt_s(s.restore_s, mark), fmt_s(s.live_s), fmt_kb(s.img_kb),
                         fmt_mib(s.dump_rss_kb), fmt_mib(s.restore_rss_kb),
                         maps_cell(s), note])
    return render(rows, header)


def depth_points(summ):
    """criu-cet, one shadow stack at several depths: [(frames, Summary)] by
    depth; the ss-N series (one stack limit for all) when there is one."""
    series = [k for k in summ if k[1] == OURS and k[0].startswith("ss-")]
    pts = []
    for (scen, criu), s in summ.items():
        if criu != OURS or s.frames is None:
            continue
        if (scen.startswith("ss-") if series else
                scen in ("shstk", "deep") or scen.startswith("depth-")):
            pts.append((int(s.frames), s))
    return sorted(pts, key=lambda p: p[0])


def linear_fit(xs, ys):
    """Least squares y = a + b x -> (a, b, r2)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx if sxx else 0.0
    a = my - b * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    r2 = 1.0 - ss_res / ss_tot if ss_tot else 1.0
    return a, b, r2


def depth_verdict(points, plain_live_s):
    """One line: is criu-cet's restore+run time linear in the used depth?

    Linear in the used depth means: the times lie on a rising line (R^2 >=
    MIN_R2) and the shadow-stack cost at depth ~0 (shstk - plain) is small next
    to what the whole mapping would cost at the measured per-frame rate (a
    restore that copies the whole mapping pays that at every depth)."""
    pts = [(f, s.live_s, s.ss_kb) for f, s in points if s.live_s is not None]
    if len(pts) < 3:
        return "depth: verdict n/a (fewer than 3 depths restored and verified)"
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    a, b, r2 = linear_fit(xs, ys)
    ss_kb = max((p[2] for p in pts if p[2]), default=None)
    per_64k_ms = b * 65536 * 1e3
    text = (f"depth: restore+run = {a:.3f} s + {per_64k_ms:.1f} ms per 64K frames "
            f"(R^2 {r2:.3f}, {len(pts)} depths {xs[0]}..{xs[-1]})")
    if b <= 0 or r2 < MIN_R2:
        return text + "; verdict: NOT linear in the used depth"
    if ss_kb and plain_live_s is not None:
        full = b * ss_kb * 1024 / 8
        fixed = ys[0] - plain_live_s if xs[0] == min(xs) else None
        if fixed is not None:
            text += (f"; shadow-stack cost at depth {xs[0]}: {fixed * 1e3:.1f} ms vs "
                     f"{full * 1e3:.1f} ms for the whole {ss_kb:.0f} KiB mapping at that rate")
            if fixed > MAX_FIXED_SHARE * full:
                return text + "; verdict: grows with the MAPPING size, not only the used depth"
    return text + "; verdict: linear in the used depth, not the mapping size"


def depth_table(points, plain_live_s):
    header = ["frames", "shstk used KiB", "image KiB", "dump s", "restore s", "restore+run s",
              "+ vs plain ms", "after restore"]
    rows = []
    for frames, s in points:
        extra = (s.live_s - plain_live_s) * 1e3 if s.live_s is not None and \
            plain_live_s is not None else None
        rows.append([str(frames), fmt_kb(frames * 8 / 1024), fmt_kb(s.img_kb),
                     fmt_s(s.dump_s), fmt_s(s.restore_s), fmt_s(s.live_s),
                     "-" if extra is None else f"{extra:.1f}", status_text(s)])
    return render(rows, header, left=())


def failures(samples):
    """criu-cet measurements that did not end in a verified, running task."""
    return [s for s in samples if s.criu == OURS and not verified(s.fields)]


def report(run, out=sys.stdout):
    """Print the whole report for one parsed run.py JSON document; return the exit code."""
    samples = parse_info(run.get("info", {}))
    summ = summarize(samples)
    meta = parse_fields(run.get("info", {}).get("bench.meta", ""))
    broken = run.get("stopped") or run.get("panic") or \
        (None if run.get("done", False) else "the guest did not finish")

    p = lambda s="": print(s, file=out)    # noqa: E731
    p(f"bench: guest time (Bochs clock: sync=none), median of {meta.get('reps', '?')} reps; "
      f"bench_target with {meta.get('heap_kb', '?')} KiB of dirty heap, ticking every 1 ms")
    for line in table(summ):
        p(line)
    p("  restore s: until criu restore -d returned; restore+run s: until it had returned "
      "and the task ran again")
    p("  (verified tasks only); * criu returned 0 but the restored task did not survive")
    p()
    points = depth_points(summ)
    plain = summ.get(("plain", OURS))
    plain_live = plain.live_s if plain else None
    if points:
        ss = max((s.ss_kb for _, s in points if s.ss_kb), default=None)
        flat = any(k[1] == OURS and k[0].startswith("ss-") for k in summ)
        p(f"criu-cet restore vs shadow-stack depth (one shadow stack, "
          f"{'%.0f KiB' % ss if ss else 'its'} mapping; a frame is 8 B of shadow stack"
          f"{' only (flat frames)' if flat else ' + 8 B of stack'}):")
        for line in depth_table(points, plain_live):
            p(line)
    p(depth_verdict(points, plain_live))
    p()
    cost = byte_costs(summ)
    if size_points(summ, "ss") or size_points(summ, "anon"):
        p("criu-cet: a MiB of used shadow stack (ss) against a MiB of dirty heap (anon), "
          "same process and stack limit:")
        for line in byte_table(summ):
            p(line)
        p(f"per MiB: shadow stack dump {fmt_ms(cost['ss_dump'])}, restore+run "
          f"{fmt_ms(cost['ss_restore'])}; ordinary memory dump {fmt_ms(cost['anon_dump'])}, "
          f"restore+run {fmt_ms(cost['anon_restore'])}; dump ratio "
          f"{fmt_ratio(ratio(cost['ss_dump'], cost['anon_dump']))}, restore ratio "
          f"{fmt_ratio(ratio(cost['ss_restore'], cost['anon_restore']))}")
        p()
    threads = thread_points(summ)
    if threads:
        p("criu-cet against the number of threads (each on its own shadow stack):")
        for line in thread_table(threads):
            p(line)
        for line in thread_verdict(threads):
            p(line)
        p()
    up = upstream_ratios(summ)
    if any(k[1] == UPSTREAM for k in summ):
        p("criu-cet / CRIU 4.2.1, restore+run: " + (", ".join(
            f"{scen} {v:.2f}" for scen, v in up.items()) or
            "n/a (no shadow-stack scenario ran again after both restores)"))
    else:
        p(f"CRIU 4.2.1: {meta.get('upstream', 'not in this run')}")
    p()
    bad = failures(samples)
    for s in bad:
        f = s.fields
        p(f"bench: criu-cet FAILED {s.scenario} rep {s.rep}: check={f.get('check', '?')} "
          f"dump_rc={f.get('dump_rc', '-')} restore_rc={f.get('restore_rc', '-')} "
          f"{f.get('why', '')}".rstrip())
    if broken:
        p(f"bench: the lab run broke: {broken}")
    if not samples:
        p("bench: no measurements at all")
    r = ratios(summ)
    for name, key, target in (("cet-overhead dump", "overhead_dump", TARGET_OVERHEAD),
                              ("cet-overhead restore", "overhead_restore", TARGET_OVERHEAD),
                              ("vs-stock dump", "vs_stock_dump", TARGET_VS_STOCK),
                              ("vs-stock restore", "vs_stock_restore", TARGET_VS_STOCK),
                              ("vs-4.2.1 restore", "vs_upstream_restore", TARGET_VS_UPSTREAM),
                              ("ss-per-byte", "ss_per_byte", TARGET_SS_PER_BYTE),
                              ("ss-per-byte restore", "ss_per_byte_restore", TARGET_SS_PER_BYTE),
                              ("rss-overhead MiB", "rss_overhead_mib", TARGET_RSS_MIB)):
        v = r[key]
        p(f"target: {name} {fmt_ratio(v)}{'' if v is None else f' ({v:.3f})'} "
          f"<= {target:.2f}: {target_state(v, target)}")
    p(last_line(r))
    return 1 if broken or bad or not samples else 0


def run_lab(kernel, upstream=True):
    overlay, why = upstream_overlay() if upstream else (None, "left out (--no-upstream)")
    run = lab_to_json("bench", "bench", kernel, overlay=overlay, timeout=3000)
    if why:
        run.setdefault("info", {})["bench.meta"] = \
            run.get("info", {}).get("bench.meta", "") + f" upstream=unavailable: {why}"
    return run


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="?", help="results written by run.py --json")
    ap.add_argument("--run", action="store_true", help="boot the lab and run the bench suite")
    ap.add_argument("--kernel", default="stock", choices=["stock", "patched"])
    ap.add_argument("--no-upstream", action="store_true", help="leave CRIU 4.2.1 out")
    args = ap.parse_args(argv)
    if args.run == bool(args.json):
        ap.error("give --run or one results file")
    if args.run:
        run = run_lab(args.kernel, not args.no_upstream)
    else:
        with open(args.json) as f:
            run = json.load(f)
    return report(run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
