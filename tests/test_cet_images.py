# SPDX-License-Identifier: GPL-2.0
"""criu-cet's images: decodable with crit, and refused with a clear error
when damaged.  One boot dumps a CET-protected service and sends the images
to the host; crit reads them; a second boot restores the intact copy and a
set of damaged ones (lab/images.py says how each is damaged and what
criu-cet must say)."""

import os
import subprocess
import sys

import pytest

import images
from conftest import TOP, LabResults, lab_run

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    run = lab_run("cet-images-export")
    LabResults(run).expect_pass("images.export")
    with open(os.path.join(run["folder"], "serial.log"), errors="replace") as f:
        serial = f.read()
    return images.extract_blob(serial, "demo-images", str(tmp_path_factory.mktemp("images")))


def test_crit_decodes_the_cet_entry(exported):
    core = images.leader_core_path(exported)
    env = dict(os.environ, PYTHONPATH=os.path.join(images.CRIU_TREE, "lib") + ":" +
               os.path.join(images.CRIU_TREE, "crit"))
    out = subprocess.run([sys.executable, "-m", "crit", "decode", "-i", core, "--pretty"], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert '"cet"' in out and '"stacks"' in out
    cet = images.leader_cet(exported)
    assert cet["version"] == 1
    # demo_service: shadow stack on, SHSTK|WRSS locked the glibc way
    assert images.num(cet["features"]) == 0x1 and images.num(cet["locked"]) == 0x3
    (stack,) = cet["stacks"]
    start, end, data_start = (images.num(stack[k]) for k in ("start", "end", "data_start"))
    ssp = images.num(cet["ssp"])
    assert start < data_start <= ssp < end, "SSP inside the saved, used part of its stack"
    # only the used part is saved, not the whole 8 MiB mapping
    assert end - start >= 1 << 20 and end - data_start <= 4 * 4096


def test_shadow_stack_mapping_left_crius_memory_handling(exported):
    pid = open(os.path.join(exported, "pid")).read().strip()
    mm = images.load(os.path.join(exported, f"mm-{pid}.img"), pretty=True)["entries"][0]
    ss = [v for v in mm["vmas"] if "VMA_AREA_SHSTK" in v["status"]]
    assert len(ss) == 1 and "VMA_AREA_REGULAR" not in ss[0]["status"]


@pytest.fixture(scope="module")
def restored(exported, tmp_path_factory):
    overlay = str(tmp_path_factory.mktemp("overlay"))
    images.make_variants(exported, overlay)
    return LabResults(lab_run("cet-images-restore", overlay=overlay))


def test_intact_images_restore(restored):
    r = restored.expect_pass("images.zz-intact")
    assert "running" in r["detail"]


@pytest.mark.parametrize("variant", sorted(images.DAMAGE))
def test_damaged_image_is_refused(restored, variant):
    r = restored.expect_pass(f"images.{variant}")
    assert images.DAMAGE[variant][1] in r["detail"] and "no task left" in r["detail"]
