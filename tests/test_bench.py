# SPDX-License-Identifier: GPL-2.0
"""lab/reports/bench.py on made-up measurements: parsing, medians, ratios, verdict.  No lab."""

import io

import pytest

import bench


def line(dump_s, restore_s, live=True, check="ok", frames=0, threads=0, shstk=0, img=1000,
         rss=4000, ss="ss_vmas=0 ss_kb=0 ss_own_kb=0", got_ss=None, why=None):
    text = (f"frames={frames} threads={threads} shstk={shstk} heap_kb=1024 "
            + " ".join("pre_" + f for f in ss.split())
            + f" dump_rc=0 dump_ns={int(dump_s * 1e9)} dump_rss_kb={rss} img_kb={img} "
            f"restore_rc=0 restore_ns={int(restore_s * 1e9)} restore_rss_kb={rss - 100}")
    if live:
        text += f" restore_live_ns={int(restore_s * 1e9)}"
    text += f" check={check}"
    if check == "ok":
        text += f" got_frames={frames} got_threads={threads} got_status=0x{shstk} " + \
            " ".join("got_" + f for f in (got_ss or ss).split())
    if why:
        text += f" why={why}"
    return text


SS = "ss_vmas=1 ss_kb=8192 ss_own_kb=8192"


def info(**extra):
    """Three reps of plain and shstk with both CRIUs, plus a warm-up and a meta line."""
    doc = {"bench.meta": "reps=3 heap_kb=1024 deep=131072 threads=16 depths=16384"}
    doc["bench.plain.criu-cet.0"] = line(9.0, 9.0)        # warm-up: must not count
    for rep, (a, b) in enumerate([(0.100, 0.200), (0.110, 0.210), (0.300, 0.900)], 1):
        doc[f"bench.plain.criu-cet.{rep}"] = line(a, b)
        doc[f"bench.shstk.criu-cet.{rep}"] = line(a * 1.02, b * 1.04, shstk=1, ss=SS)
        doc[f"bench.plain.stock.{rep}"] = line(a * 1.1, b * 1.25)
        doc[f"bench.shstk.stock.{rep}"] = line(a, b, live=False, check="died", shstk=1, ss=SS,
                                               why="bench_target[7] control protection ip:1")
    doc.update(extra)
    return doc


def run_doc(infos, **kw):
    doc = {"stopped": None, "done": True, "panic": None, "results": [], "info": infos}
    doc.update(kw)
    return doc


def render(doc):
    out = io.StringIO()
    rc = bench.report(doc, out=out)
    return rc, out.getvalue().splitlines()


def test_split_key():
    assert bench.split_key("bench.plain.criu-cet.2") == ("plain", "criu-cet", 2)
    assert bench.split_key("bench.depth-16384.stock.0") == ("depth-16384", "stock", 0)
    assert bench.split_key("bench.meta") is None
    assert bench.split_key("bench.plain.criu-cet.x") is None
    assert bench.split_key("zdtm.cet.plain.criu-cet") is None
    assert bench.split_key("bench.deep.criu-4.2.1.3") == ("deep", "criu-4.2.1", 3)


def test_parse_fields_why_takes_the_rest():
    f = bench.parse_fields("dump_rc=0 dump_ns=12 check=died why=bench_target[3] control x=1 y")
    assert f == {"dump_rc": "0", "dump_ns": "12", "check": "died",
                 "why": "bench_target[3] control x=1 y"}
    assert bench.parse_fields("") == {}
    assert bench.parse_fields("a=1  junk b=") == {"a": "1", "b": ""}


def test_median():
    assert bench.median([3, 1, 2]) == 2
    assert bench.median([4, 1, 3, 2]) == 2.5
    assert bench.median([]) is None


def test_medians_drop_warmup_and_ignore_outlier():
    summ = bench.summarize(bench.parse_info(info()))
    s = summ[("plain", "criu-cet")]
    assert s.n == 3 and s.ok == 3
    assert s.dump_s == pytest.approx(0.110)
    assert s.live_s == pytest.approx(0.210)
    assert s.maps_before == "0"
    sh = summ[("shstk", "criu-cet")]
    assert sh.maps_before == "1x8192K" and sh.maps_after == "1x8192K" and sh.ss_kb == 8192


def test_died_restores_count_for_restore_time_not_for_restore_plus_run():
    s = bench.summarize(bench.parse_info(info()))[("shstk", "stock")]
    assert s.ok == 0 and s.restore_ok == 3
    assert s.restore_s == pytest.approx(0.210)
    assert s.live_s is None
    assert s.checks == {"died": 3}
    assert "control protection" in s.why


def test_ratios_and_last_line():
    r = bench.ratios(bench.summarize(bench.parse_info(info())))
    assert r["overhead_dump"] == pytest.approx(1.02)
    assert r["overhead_restore"] == pytest.approx(1.04)
    assert r["vs_stock_dump"] == pytest.approx(1 / 1.1)
    assert r["vs_stock_restore"] == pytest.approx(1 / 1.25)
    assert bench.last_line(r) == \
        "bench: cet-overhead dump 1.02 restore 1.04; vs-stock dump 0.91 restore 0.80; " \
        "vs-4.2.1 restore n/a; ss-per-byte n/a (dump n/a restore n/a); rss-overhead n/a MiB"


def test_last_line_with_missing_figures():
    r = bench.ratios({})
    assert bench.last_line(r) == \
        "bench: cet-overhead dump n/a restore n/a; vs-stock dump n/a restore n/a; " \
        "vs-4.2.1 restore n/a; ss-per-byte n/a (dump n/a restore n/a); rss-overhead n/a MiB"


def test_target_state_at_printed_precision():
    assert bench.target_state(1.004, 1.00) == "met"
    assert bench.target_state(1.006, 1.00) == "MISSED"
    assert bench.target_state(None, 1.05) == "n/a"


def test_report_prints_table_and_ends_with_the_bench_line():
    rc, lines = render(run_doc(info()))
    assert rc == 0
    assert lines[-1].startswith("bench: cet-overhead dump ")
    assert any(l.startswith("(a) plain") and "criu-cet" in l for l in lines)
    stock_shstk = [l for l in lines if l.startswith("(b) shstk") and "stock-4.1.1" in l][0]
    assert "0.210*" in stock_shstk and "died x3" in stock_shstk
    assert any(l.startswith("target: cet-overhead dump 1.02") and l.endswith("met")
               for l in lines)
    assert any(l.startswith("target: cet-overhead restore 1.04") and l.endswith("MISSED")
               for l in lines)


def test_criu_cet_failure_or_broken_run_is_non_zero_but_missed_targets_are_not():
    slow = {f"bench.shstk.criu-cet.{rep}": line(0.5, 0.5, shstk=1, ss=SS) for rep in (1, 2, 3)}
    rc, lines = render(run_doc(info(**slow)))
    assert rc == 0 and any("MISSED" in l for l in lines)
    bad = {"bench.deep.criu-cet.2": line(0.1, 0.1, live=False, check="died", shstk=1,
                                         frames=131072, why="cp fault")}
    rc, lines = render(run_doc(info(**bad)))
    assert rc == 1
    assert any("criu-cet FAILED deep rep 2: check=died" in l for l in lines)
    assert lines[-1].startswith("bench: ")
    rc, lines = render(run_doc(info(), stopped="watchdog"))
    assert rc == 1 and any("lab run broke: watchdog" in l for l in lines)
    rc, _ = render(run_doc({}))
    assert rc == 1


def test_linear_fit():
    a, b, r2 = bench.linear_fit([0, 1, 2, 4], [1.0, 3.0, 5.0, 9.0])
    assert a == pytest.approx(1.0) and b == pytest.approx(2.0) and r2 == pytest.approx(1.0)


def depth_info(times, base_plain=0.100):
    """criu-cet at several depths: {frames: restore seconds}; plain at base_plain."""
    doc = {f"bench.plain.criu-cet.{rep}": line(0.1, base_plain) for rep in (1, 2, 3)}
    for frames, t in times.items():
        scen = "shstk" if frames == 0 else f"depth-{frames}"
        for rep in (1, 2, 3):
            doc[f"bench.{scen}.criu-cet.{rep}"] = line(0.1, t, shstk=1, frames=frames, ss=SS)
    return doc


def verdict(times, base_plain=0.100):
    summ = bench.summarize(bench.parse_info(depth_info(times, base_plain)))
    plain = summ[("plain", "criu-cet")].live_s
    return bench.depth_verdict(bench.depth_points(summ), plain)


def test_verdict_linear_in_used_depth():
    # 1 ms per 16K frames on top of a plain restore: linear, tiny fixed cost
    v = verdict({0: 0.101, 16384: 0.102, 65536: 0.105, 262144: 0.117})
    assert "verdict: linear in the used depth" in v
    assert "4 depths 0..262144" in v


def test_verdict_flags_a_cost_in_the_mapping_size():
    # linear in depth, but already ~1 full-mapping copy at depth 0
    v = verdict({0: 0.165, 16384: 0.166, 65536: 0.169, 262144: 0.181})
    assert "grows with the MAPPING size" in v


def test_verdict_not_linear():
    v = verdict({0: 0.101, 16384: 0.300, 65536: 0.105, 262144: 0.110})
    assert "NOT linear" in v


def test_verdict_needs_three_depths():
    assert "n/a" in verdict({0: 0.101, 16384: 0.102})


def sized_info(ss_ms_per_mib, anon_ms_per_mib, ss_rss_extra_kb=0, sparse_rss_extra_kb=0):
    """criu-cet's ss-N and anon-N series (0, 1, 8, 64 MiB) and a sparse stack."""
    doc = {}
    for n in (0, 1, 8, 64):
        for kind, per in (("ss", ss_ms_per_mib), ("anon", anon_ms_per_mib)):
            if kind == "anon" and n == 0:
                continue
            t = 0.2 + n * per / 1e3
            extra = ss_rss_extra_kb if kind == "ss" and n else 0
            for rep in (1, 2, 3):
                doc[f"bench.{kind}-{n}.criu-cet.{rep}"] = line(t, t, shstk=1, frames=n * 131072,
                                                               rss=4000 + n * 10 + extra, ss=SS)
    for rep in (1, 2, 3):
        doc[f"bench.sparse.criu-cet.{rep}"] = line(0.2, 0.2, shstk=1, ss=SS,
                                                   rss=4000 + sparse_rss_extra_kb)
    return doc


def test_byte_cost_ratio_and_rss_overhead():
    summ = bench.summarize(bench.parse_info(sized_info(4.0, 5.0, ss_rss_extra_kb=512)))
    c = bench.byte_costs(summ)
    assert c["ss_dump"] == pytest.approx(0.004) and c["anon_restore"] == pytest.approx(0.005)
    assert c["ratio"] == pytest.approx(0.8)
    assert bench.rss_overhead_mib(summ) == pytest.approx(0.5)
    # a sparse 4 GiB stack that costs criu 2 MiB more than ss-0 is the worst case
    summ = bench.summarize(bench.parse_info(sized_info(4.0, 5.0, sparse_rss_extra_kb=2048)))
    assert bench.rss_overhead_mib(summ) == pytest.approx(2.0)
    r = bench.ratios(summ)
    assert bench.last_line(r).endswith("ss-per-byte 0.80 (dump 0.80 restore 0.80); rss-overhead 2.00 MiB")


def test_depth_points_prefer_the_ss_series():
    doc = sized_info(4.0, 5.0)
    doc.update(info())
    pts = bench.depth_points(bench.summarize(bench.parse_info(doc)))
    assert [f for f, _ in pts] == [0, 131072, 1048576, 8388608]


def test_thread_counts_linear_and_not():
    doc = {}
    for n, t in ((10, 0.1), (100, 0.6), (1000, 5.6)):
        for rep in (1, 2, 3):
            doc[f"bench.threads-{n}.criu-cet.{rep}"] = line(t, t, shstk=1, threads=n, ss=SS)
    lines = bench.thread_verdict(bench.thread_points(bench.summarize(bench.parse_info(doc))))
    assert all("verdict: linear in threads" in l for l in lines)
    assert "5.56 ms per thread" in lines[0]
    doc["bench.threads-100.criu-cet.2"] = doc["bench.threads-100.criu-cet.1"] = line(4.0, 4.0)
    lines = bench.thread_verdict(bench.thread_points(bench.summarize(bench.parse_info(doc))))
    assert "NOT linear" in lines[0]


def test_vs_upstream_is_a_geometric_mean_over_runs_that_lived():
    doc = info()
    for rep in (1, 2, 3):
        doc[f"bench.shstk.criu-4.2.1.{rep}"] = line(0.2, 0.4, shstk=1, ss=SS)
        doc[f"bench.deep.criu-cet.{rep}"] = line(0.1, 0.1, shstk=1, ss=SS)
        doc[f"bench.deep.criu-4.2.1.{rep}"] = line(0.2, 0.1 / 0.5 * 0.5 * 2, shstk=1, ss=SS)
        doc[f"bench.threads.criu-cet.{rep}"] = line(0.1, 0.1, shstk=1, ss=SS)
        doc[f"bench.threads.criu-4.2.1.{rep}"] = line(0.2, 0.2, live=False, check="died",
                                                      shstk=1, ss=SS, why="cp fault")
    summ = bench.summarize(bench.parse_info(doc))
    up = bench.upstream_ratios(summ)
    assert set(up) == {"shstk", "deep"}          # threads: 4.2.1's task died
    assert up["deep"] == pytest.approx(0.5)
    assert bench.ratios(summ)["vs_upstream_restore"] == pytest.approx((up["shstk"] * 0.5) ** 0.5)
    rc, lines = render(run_doc(doc))
    assert rc == 0 and any(l.startswith("criu-cet / CRIU 4.2.1") for l in lines)
    assert any("criu-4.2.1" in l and l.startswith("(b) shstk") for l in lines)
