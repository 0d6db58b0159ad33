# SPDX-License-Identifier: GPL-2.0
"""Images out of and back into the lab, and damaged copies of them.

The guest sends a dump's image folder on the console as base64 lines
"@@BLOB <name> <data>" ending with "@@BLOB <name> END" (lab/suites/
cet-images-export.sh).  Here we unpack it, read and alter it with CRIU's own
pycriu (the library under crit), and lay out variants that a second boot
restores (lab/suites/cet-images-restore.sh): every damaged one must be
refused with the message given in its "expect" file.
"""

import base64
import io
import os
import shutil
import subprocess
import sys
import tarfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRIU_TREE = os.path.join(os.environ.get("BUILD", os.path.join(TOP, "build")), "criu-cet", "src")
PAGE = 4096


def pycriu():
    """CRIU's image library from the criu-cet tree (images/cet.proto included)."""
    lib = os.path.join(CRIU_TREE, "lib")
    if lib not in sys.path:
        sys.path.insert(0, lib)
    import pycriu as mod  # noqa: E402
    return mod


def read_blob(serial_text, name):
    """The tar.gz blob name from a serial log, its members checked: plain
    files and folders of one tree, nothing outside it."""
    data, ended = [], False
    for line in serial_text.splitlines():
        fields = line.strip().split(" ")
        if len(fields) == 3 and fields[0] == "@@BLOB" and fields[1] == name:
            if fields[2] == "END":
                ended = True
                break
            data.append(fields[2])
    if not ended:
        raise ValueError(f"blob {name} is missing or cut short in the serial log")
    raw = base64.b64decode("".join(data), validate=True)
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
        for m in tar.getmembers():
            # plain files of one folder, nothing else (Debian 12's tarfile has no filter=)
            if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in m.name.split("/"):
                raise ValueError(f"blob {name}: unexpected member {m.name}")
    return raw


def extract_blob(serial_text, name, dest):
    """Unpack blob name from a serial log into folder dest."""
    raw = read_blob(serial_text, name)
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
        tar.extractall(dest)
    return dest


def extract_exported(run_folder, dest):
    """The images the suite cet-images-export sent, from the serial log a
    lab run kept in run_folder, unpacked in dest."""
    with open(os.path.join(run_folder, "serial.log"), errors="replace") as f:
        return extract_blob(f.read(), "demo-images", dest)


def load(path, pretty=False):
    """pretty: flags and hex fields as text, as crit decode --pretty shows them."""
    with open(path, "rb") as f:
        return pycriu().images.load(f, pretty)


def save(img, path):
    with open(path, "wb") as f:
        pycriu().images.dump(img, f)


def task_image(folder, kind):
    """The leader's KIND image (core, mm, pagemap) in a dump whose "pid"
    file names the leader."""
    with open(os.path.join(folder, "pid")) as f:
        return os.path.join(folder, f"{kind}-{f.read().strip()}.img")


def leader_core_path(folder):
    return task_image(folder, "core")


def crit(*args):
    """criu-cet's crit (its tree's lib and crit), as run in the tests."""
    env = dict(os.environ, PYTHONPATH=os.path.join(CRIU_TREE, "lib") + ":" + os.path.join(CRIU_TREE, "crit"))
    return subprocess.run([sys.executable, "-m", "crit", *args], env=env, capture_output=True, text=True)


def leader_cet(folder):
    return load(leader_core_path(folder))["entries"][0]["cet"]


def num(v):
    """A number from pycriu, which gives hex fields as strings when pretty."""
    return int(v, 16) if isinstance(v, str) else v


VMA_AREA_SHSTK = 1 << 15
PE_LAZY = 1 << 1       # criu/include/pagemap.h
PE_PRESENT = 1 << 2


def mm_path(folder):
    return task_image(folder, "mm")


def shstk_vmas(folder):
    """The shadow-stack mappings of mm.img (entries as pycriu gives them)."""
    mm = load(mm_path(folder))["entries"][0]
    return [v for v in mm["vmas"] if num(v["status"]) & VMA_AREA_SHSTK]


def _edit_leader_cet(folder, fn):
    path = leader_core_path(folder)
    img = load(path)
    fn(folder, img["entries"][0])
    save(img, path)


def _set(field, value):
    def fn(folder, core):
        core["cet"][field] = value
    return fn


def _ssp_outside(folder, core):
    core["cet"]["ssp"] = num(shstk_vmas(folder)[0]["start"]) - 8 * PAGE


def _ssp_misaligned(folder, core):
    core["cet"]["ssp"] = num(core["cet"]["ssp"]) + 4


def _unmark_stack(folder, core):
    """mm.img loses the shadow-stack mark of the stack SSP is on."""
    path = mm_path(folder)
    img = load(path)
    for v in img["entries"][0]["vmas"]:
        if num(v["status"]) & VMA_AREA_SHSTK:
            v["status"] = num(v["status"]) & ~VMA_AREA_SHSTK
    save(img, path)


def _own_elsewhere(folder, core):
    """The owned stack named where no shadow-stack mapping is."""
    start = num(shstk_vmas(folder)[0]["start"]) - 64 * PAGE
    core["cet"]["own_start"] = start
    core["cet"]["own_end"] = start + 16 * PAGE


def _upstream(folder, core, features=1, ssp=None):
    """What an image of a CRIU without criu-cet looks like (4.1.1, 4.2.1):
    upstream's features and SSP only, in xsave's cet entry.  criu-cet
    restores such images, so they are damaged beyond that to be refused."""
    ssp = num(core["cet"].get("ssp", 0)) if ssp is None else ssp
    del core["cet"]
    fp = core["thread_info"]["fpregs"]
    fp.setdefault("xsave", {})["cet"] = {"cet": features, "ssp": ssp}


def _upstream_ssp_outside(folder, core):
    _upstream(folder, core, ssp=num(shstk_vmas(folder)[0]["start"]) - 8 * PAGE)


def _upstream_unknown_feature(folder, core):
    _upstream(folder, core, features=5)


def _mark_shstk_pages_lazy(folder, present):
    """The shadow stacks' pagemap entries PE_LAZY, as CRIU 4.2.1 leaves
    them: with PE_PRESENT in any dump of its own, without it (and their
    pages left out of the image) in a dump --lazy-pages.  Restored with
    --lazy-pages (the options file): a restore that leaves them to uffd
    never gets them."""
    stacks = [(num(v["start"]), num(v["end"])) for v in shstk_vmas(folder)]
    path = task_image(folder, "pagemap")
    img = load(path)
    marked = 0
    for pe in img["entries"][1:]:
        start = num(pe["vaddr"])
        end = start + num(pe.get("nr_pages", pe.get("compat_nr_pages", 0))) * PAGE
        flags = num(pe.get("flags", 0))
        if any(s < end and start < e for s, e in stacks) and not flags & PE_LAZY:
            pe["flags"] = (flags | PE_LAZY) if present else (flags | PE_LAZY) & ~PE_PRESENT
            marked += 1
    assert marked, "no pagemap entry in a shadow stack"
    save(img, path)
    with open(os.path.join(folder, "options"), "w") as f:
        f.write("--lazy-pages\n")


def _lazy_shstk_pages_absent(folder, core):
    _mark_shstk_pages_lazy(folder, present=False)


def _lazy_shstk_pages_present(folder, core):
    _mark_shstk_pages_lazy(folder, present=True)


# variant -> (how to damage the images, what criu-cet must say)
DAMAGE = {
    "version": (_set("version", 99), "CET image version 99"),
    "version-1": (_set("version", 1), "dumped by an older criu-cet"),
    "wrss-without-shstk": (_set("features", 2), "WRSS without a shadow stack"),
    "unknown-feature": (_set("features", 5), "unknown CET features"),
    "ssp-outside": (_ssp_outside, "is not on a shadow stack in the image"),
    "ssp-misaligned": (_ssp_misaligned, "bad or missing SSP"),
    "stack-unmarked": (_unmark_stack, "is not on a shadow stack in the image"),
    "own-half": (_set("own_start", 0x7f0000000000), "half described"),
    "own-elsewhere": (_own_elsewhere, "is not a shadow stack of its own in the image"),
    "upstream-ssp-outside": (_upstream_ssp_outside, "is not on a shadow stack in the image"),
    "upstream-unknown-feature": (_upstream_unknown_feature, "unknown CET features"),
    "lazy-shstk-pages-absent": (_lazy_shstk_pages_absent, "shadow-stack pages dumped lazy are not in the image"),
}

# variant -> how to change the images; each must restore and run like the
# intact one (named to restore after every refusal, before the intact one)
RESTORABLE = {
    "zy-lazy-shstk-pages-present": _lazy_shstk_pages_present,
}


def make_variants(src, root):
    """root/images/<variant>/: the intact dump and each damaged copy, with
    an "expect" file (empty for the intact one, which must restore)."""
    base = os.path.join(root, "lab", "images")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    # the intact one restores last: its task keeps the pid afterwards
    shutil.copytree(src, os.path.join(base, "zz-intact"))
    open(os.path.join(base, "zz-intact", "expect"), "w").close()
    for name, (damage, expect) in DAMAGE.items():
        dest = os.path.join(base, name)
        shutil.copytree(src, dest)
        _edit_leader_cet(dest, damage)
        with open(os.path.join(dest, "expect"), "w") as f:
            f.write(expect + "\n")
    for name, change in RESTORABLE.items():
        dest = os.path.join(base, name)
        shutil.copytree(src, dest)
        _edit_leader_cet(dest, change)
        open(os.path.join(dest, "expect"), "w").close()
    return sorted(os.listdir(base))
