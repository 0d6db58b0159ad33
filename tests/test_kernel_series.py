# SPDX-License-Identifier: GPL-2.0
"""The kernel series in kernel/patches as a reviewer gets it: `make checkpatch`
works from a fresh checkout (the kernel tree is unpacked for it even when the
kernels come from the cache), every patch is clean under checkpatch.pl
--strict but for the one justified warning, and each is signed off.
(Per-patch bzImage builds: `make kernel-series`, by hand: about 15 min.)"""

import glob
import os
import re
import subprocess

import pytest

from conftest import TOP

PATCHES = sorted(p for p in glob.glob(os.path.join(TOP, "kernel", "patches", "*.patch"))
                 if not p.endswith("0000-cover-letter.patch"))
# the selftest adds a file under tools/testing/selftests/x86/, which the X86
# ARCHITECTURE entry of MAINTAINERS already covers (said in the cover letter)
ALLOWED_WARNINGS = {"added, moved or deleted file(s), does MAINTAINERS need updating?"}


@pytest.fixture(scope="module")
def checkpatch():
    out = subprocess.run(["make", "-s", "checkpatch"], cwd=TOP, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    per_patch, name = {}, None
    for line in out.stdout.splitlines():
        m = re.match(r"== (.*\.patch)", line)
        if m:
            name = m.group(1)
            per_patch[name] = []
        elif name:
            per_patch[name].append(line)
    return per_patch


def test_series_is_v2_with_cover_letter():
    assert len(PATCHES) == 4
    with open(os.path.join(TOP, "kernel", "patches", "0000-cover-letter.patch")) as f:
        cover = f.read()
    assert "[PATCH v2 0/4]" in cover and "emulated CET CPU" in cover and "Changes since v1" in cover


@pytest.mark.parametrize("patch", [os.path.basename(p) for p in PATCHES])
def test_patch_signed_off(patch):
    with open(os.path.join(TOP, "kernel", "patches", patch)) as f:
        text = f.read()
    assert re.search(r"^Signed-off-by: .+ <.+@.+>$", text, re.M), patch
    assert "[PATCH v2 " in text, patch


@pytest.mark.parametrize("patch", [os.path.basename(p) for p in PATCHES])
def test_checkpatch_clean(checkpatch, patch):
    lines = checkpatch.get(patch)
    assert lines is not None, f"checkpatch did not run on {patch}"
    totals = [l for l in lines if l.startswith("total:")]
    assert totals and totals[0].startswith("total: 0 errors"), lines
    warnings = {l.split(":", 1)[1].strip() for l in lines if l.startswith(("WARNING", "CHECK"))}
    assert warnings <= ALLOWED_WARNINGS, warnings
