# SPDX-License-Identifier: GPL-2.0
"""The CRIU series in patches/criu as upstream would review it: it applies
with `git am` on v4.2.1 (CRIU 4.2.1's pinned tarball), the overlay only adds
files (none replaces one of upstream's), each patch says why in CRIU's
subject style and is signed off, and the cover letter names every patch.
(CRIU built at every patch: `make criu-series`, by hand: about 10 min.)"""

import glob
import os
import re
import subprocess

from conftest import TOP

PATCHES = sorted(glob.glob(os.path.join(TOP, "patches", "criu", "*.patch")))
# CRIU's subjects: "area: what", the area a subsystem or path (x86/shstk, compel/x86)
SUBJECT = re.compile(r"^Subject: \[PATCH \d+/\d+\] [a-z0-9_/.-]+(, [a-z0-9_/.-]+)*: \S")


def header(path):
    with open(path) as f:
        text = f.read()
    head = text[:text.index("\n---\n")]
    subject = re.search(r"^Subject: .*(\n .*)*", head, re.M).group(0).replace("\n ", " ")
    body = head[head.index("\n\n", head.index("Subject: ")) + 2:]
    return subject, body


def test_series_applies_with_git_am_on_v4_2_1():
    out = subprocess.run(["bash", os.path.join(TOP, "lab", "build", "criu-series.sh"), "--apply-only"],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert sum(line.endswith(": applied") for line in lines) == len(PATCHES), lines
    assert lines[-1] == "criu-series: every step applies with git am", lines


def test_each_patch_has_a_subject_a_reason_and_a_sign_off():
    assert len(PATCHES) >= 10
    for p in PATCHES:
        subject, body = header(p)
        assert SUBJECT.match(subject), (p, subject)
        assert "criu-cet" not in subject, (p, subject)
        reason = body.split("Signed-off-by:")[0].strip()
        assert len(reason.split()) >= 20, (p, "the body says too little of why")
        assert re.search(r"^Signed-off-by: .+ <.+@.+>$", body, re.M), p


def test_cover_letter_names_every_patch():
    with open(os.path.join(TOP, "patches", "criu", "README.md")) as f:
        cover = f.read()
    for p in PATCHES:
        subject, _ = header(p)
        title = re.sub(r"^Subject: \[PATCH \d+/\d+\] ", "", subject)
        assert title in cover, (p, title)
    for part in ("kept", "changed", "removed"):
        assert f"**{part}**" in cover
