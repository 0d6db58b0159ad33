# SPDX-License-Identifier: GPL-2.0
"""The kernel series as a reviewer gets it, in both forms: kernel/patches (as
posted, on the newest kernel) and kernel/patches-6.12 (its LTS backport, what
the lab's patched kernel runs).  `make checkpatch` works from a fresh checkout
(the kernel trees are unpacked for it even when the kernels come from the
cache), every patch is clean under its kernel's checkpatch.pl --strict but for
the one justified warning, each is signed off, and both forms are the same
commits.  (Per-patch bzImage builds and the newest kernel's lab boot:
`make kernel-series`, by hand.)"""

import glob
import os
import re
import subprocess

import pytest

from conftest import TOP

SERIES = {d: sorted(p for p in glob.glob(os.path.join(TOP, "kernel", d, "*.patch"))
                   if not p.endswith("0000-cover-letter.patch"))
          for d in ("patches", "patches-6.12")}
PATCHES = [f"{d}/{os.path.basename(p)}" for d, ps in SERIES.items() for p in ps]
# the selftest adds a file under tools/testing/selftests/x86/, which the X86
# ARCHITECTURE entry of MAINTAINERS already covers (said in the cover letter):
# lab/build/checkpatch.sh's "the MAINTAINERS warning only"
ALLOWED = {"clean", "the MAINTAINERS warning only"}


@pytest.fixture(scope="module")
def checkpatch():
    """{patch: checkpatch.sh's verdict} of `make checkpatch`."""
    out = subprocess.run(["make", "-s", "checkpatch"], cwd=TOP, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return dict(re.findall(r"^checkpatch --strict (\S+\.patch): (.*)$", out.stdout, re.M))


def subject(path):
    with open(path) as f:
        return re.search(r"^Subject: \[PATCH v3 \d+/\d+\] (.*(?:\n .*)*)", f.read(), re.M).group(1)


def test_series_is_v3_with_cover_letter():
    assert len(SERIES["patches"]) == 3
    with open(os.path.join(TOP, "kernel", "patches", "0000-cover-letter.patch")) as f:
        cover = f.read()
    assert "[PATCH v3 0/3]" in cover and "emulated CET CPU" in cover and "Changes since v2" in cover
    # every review point is answered, each with where it was raised
    for who in ("Peter Zijlstra", "Andy Lutomirski", "Jann Horn", "Kees Cook", "Rick Edgecombe"):
        assert who in cover, who


def test_backport_is_the_same_series():
    """kernel/patches-6.12 holds the same commits as kernel/patches, in order."""
    assert [subject(p) for p in SERIES["patches-6.12"]] == [subject(p) for p in SERIES["patches"]]


@pytest.mark.parametrize("patch", PATCHES)
def test_patch_signed_off(patch):
    with open(os.path.join(TOP, "kernel", patch)) as f:
        text = f.read()
    assert re.search(r"^Signed-off-by: .+ <.+@.+>$", text, re.M), patch
    assert "[PATCH v3 " in text, patch


@pytest.mark.parametrize("patch", PATCHES)
def test_checkpatch_clean(checkpatch, patch):
    verdict = checkpatch.get(patch)
    assert verdict is not None, f"checkpatch did not run on {patch}"
    assert verdict in ALLOWED, (patch, verdict)
