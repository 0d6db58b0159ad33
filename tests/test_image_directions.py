# SPDX-License-Identifier: GPL-2.0
"""Images from one CRIU restored by another (lab/suites/image-directions.sh),
on both kernels: criu-cet, its base CRIU 4.2.1 and stock 4.1.1, each way,
for a CET task and a plain one; crit (criu-cet's) decodes every dumper's
images.  What the table must show:

- criu-cet restores every CRIU's images, exactly as dumped (features, locks,
  shadow-stack mappings; an overwritten return address still stops the task);
- CRIU 4.2.1 restores criu-cet's images as well as its own (criu-cet fills
  upstream's xsave cet/ssp fields too), and stock 4.1.1 takes them as it
  takes 4.2.1's;
- a plain task goes from every CRIU to criu-cet and to 4.2.1.
"""

import os

import pytest

import images
from conftest import Boot, LabResults, build_overlay, lab_run
from protocol import parse_fields

pytestmark = pytest.mark.lab

KERNELS = ("stock", "patched")
CRIUS = ("criu-cet", "criu-4.2.1", "stock")
LAB_BOOTS = {k: Boot("image-directions", k, "upstream.sh") for k in KERNELS}


@pytest.fixture(scope="module", params=KERNELS)
def table(request):
    overlay, error = build_overlay("upstream.sh")
    if error:
        pytest.skip(f"no CRIU 4.2.1 for the guest: {error}")
    run = lab_run(LAB_BOOTS[request.param])
    return request.param, LabResults(run), run


def cell(table, task, dumper, restorer):
    r = table[1].get(f"dirs.{task}.{dumper}.{restorer}")
    if r["status"] == "SKIP":
        pytest.skip(r["detail"])
    return r["status"], parse_fields(r["detail"], "why")


@pytest.mark.parametrize("dumper", CRIUS)
@pytest.mark.parametrize("task", ("cet", "plain"))
def test_criu_cet_restores_every_criu_s_images_as_dumped(table, task, dumper):
    status, f = cell(table, task, dumper, "criu-cet")
    assert status == "PASS", f
    if task == "cet":
        assert f["features"] == "shstk" and f["locked"] == "shstk+wrss" and f["ss"] == "1", f
        assert f["smash"] == "caught", f


KEYS = ("restored", "features", "locked", "ss", "smash")


def same_outcome(table, task, dumper, other, restorer):
    """The restorer's result from dumper's images and from other's, field by field."""
    _, mine = cell(table, task, dumper, restorer)
    _, theirs = cell(table, task, other, restorer)
    return {k: mine.get(k) for k in KEYS}, {k: theirs.get(k) for k in KEYS}


@pytest.mark.parametrize("task", ("cet", "plain"))
def test_criu_4_2_1_restores_criu_cet_s_images_as_well_as_its_own(table, task):
    ours, own = same_outcome(table, task, "criu-cet", "criu-4.2.1", "criu-4.2.1")
    assert ours["restored"] == "yes" and ours == own, (ours, own)


@pytest.mark.parametrize("task", ("cet", "plain"))
def test_stock_takes_criu_cet_s_images_as_it_takes_4_2_1_s(table, task):
    """Stock 4.1.1 fails on 4.2.1's images (its vdso check, "ELF header
    magic mismatch"): criu-cet's must fare no worse than its base's."""
    ours, base = same_outcome(table, task, "criu-cet", "criu-4.2.1", "stock")
    assert ours == base, (ours, base)


@pytest.mark.parametrize("restorer", ("criu-cet", "criu-4.2.1"))
@pytest.mark.parametrize("dumper", CRIUS)
def test_a_plain_task_goes_from_every_criu_to_criu_cet_and_4_2_1(table, dumper, restorer):
    status, f = cell(table, "plain", dumper, restorer)
    assert status == "PASS", f
    assert f["features"] == "" and f["ss"] == "0", f


@pytest.mark.parametrize("dumper", CRIUS)
def test_crit_decodes_every_criu_s_images(table, dumper, tmp_path):
    kernel, _, run = table
    with open(os.path.join(run["folder"], "serial.log"), errors="replace") as f:
        folder = images.extract_blob(f.read(), f"dirs-{dumper}", str(tmp_path / dumper))
    names = sorted(n for n in os.listdir(folder) if n.endswith(".img"))
    assert any(n.startswith("core-") for n in names) and any(n.startswith("mm-") for n in names)
    for name in names:
        if name.startswith("pages-"):   # raw page data, no protobuf
            continue
        p = images.crit("decode", "-i", os.path.join(folder, name))
        assert p.returncode == 0, f"{dumper} {name}: {p.stderr.strip()[-300:]}"
    # every dumper writes upstream's xsave cet entry; criu-cet also its own
    core = images.load(images.leader_core_path(folder))["entries"][0]
    xsave = core["thread_info"]["fpregs"]["xsave"]
    assert images.num(xsave["cet"]["cet"]) & 1, xsave.get("cet")
    assert ("cet" in core) == (dumper == "criu-cet")
