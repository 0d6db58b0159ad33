# SPDX-License-Identifier: GPL-2.0
"""criu-cet's images: decodable with crit, and refused with a clear error
when damaged.  One boot dumps a CET-protected service and sends the images
to the host; crit reads them; a second boot restores the intact copy and a
set of damaged ones (lab/images.py says how each is damaged and what
criu-cet must say)."""

import os

import pytest

import images
from conftest import Boot, fields, lab_results

pytestmark = pytest.mark.lab


def test_crit_decodes_the_cet_entry(exported):
    p = images.crit("decode", "-i", images.leader_core_path(exported), "--pretty")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert '"cet"' in out and '"locked"' in out
    cet = images.leader_cet(exported)
    assert cet["version"] == 2 and "stacks" not in cet
    # demo_service: shadow stack on, locked the way glibc locks: ARCH_SHSTK_LOCK(-1), all 64 bits
    assert images.num(cet["features"]) == 0x1 and images.num(cet["locked"]) == (1 << 64) - 1
    (vma,) = images.shstk_vmas(exported)
    start, end = images.num(vma["start"]), images.num(vma["end"])
    assert start < images.num(cet["ssp"]) <= end


def test_shadow_stack_pages_are_in_the_page_images(exported):
    """Private memory for CRIU: the pages the task has, no more (the mapping is 8 MiB)."""
    (vma,) = images.shstk_vmas(exported)
    start, end = images.num(vma["start"]), images.num(vma["end"])
    assert images.num(vma["status"]) & 1, "VMA_AREA_REGULAR"
    assert end - start >= 1 << 20
    pid = open(os.path.join(exported, "pid")).read().strip()
    pagemap = images.load(os.path.join(exported, f"pagemap-{pid}.img"))["entries"][1:]
    pages = sum(e["nr_pages"] for e in pagemap if start <= images.num(e["vaddr"]) < end)
    assert 1 <= pages <= 4, f"{pages} shadow-stack pages in the page images"


@pytest.fixture(scope="module")
def restored(exported, tmp_path_factory):
    overlay = str(tmp_path_factory.mktemp("overlay"))
    images.make_variants(exported, overlay)
    # after the export boot: not started ahead
    return lab_results(Boot("cet-images-restore", overlay=overlay, prefetch=False))


def test_intact_images_restore(restored):
    """It runs, and returns through every frame it was dumped in."""
    r = restored.expect_pass("images.zz-intact")
    assert fields(r)["outcome"] == "restored" and fields(r)["unwound"] == "yes", r


@pytest.mark.parametrize("variant", sorted(images.RESTORABLE))
def test_changed_images_still_restore(restored, variant):
    """Shadow-stack pages another CRIU marked lazy, restored with
    --lazy-pages and criu-cet's lazy-pages daemon: the restore reads them,
    the daemon leaves them out (patches/criu/0004), the service runs on."""
    r = restored.expect_pass(f"images.{variant}")
    assert fields(r)["outcome"] == "restored" and fields(r)["unwound"] == "yes", r


@pytest.mark.parametrize("variant", sorted(images.DAMAGE))
def test_damaged_image_is_refused(restored, variant):
    r = restored.expect_pass(f"images.{variant}")
    assert images.DAMAGE[variant][1] in r["detail"], r      # criu-cet's own words
    assert fields(r)["outcome"] == "refused" and fields(r)["task"] == "none", r
