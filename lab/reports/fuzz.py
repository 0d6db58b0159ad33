#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile images, fuzzed: damaged copies of a CET dump restored in the lab.

    fuzz.py --run [--count N] [--seed S] [--kernel K]   export, damage, restore, count
    fuzz.py --overlay SRC OUT [--count N] [--seed S]    only lay out the variants
    fuzz.py --judge RESULTS.json OUT                    count what a run reported

One boot dumps a CET-protected service (lab/suites/cet-images-export.sh)
and sends the images here.  From them this makes damaged copies, the same
ones for the same seed (a smaller count takes an evenly spread sample of the
full 600):
  - systematic, through pycriu (CRIU's image library): every field of the
    leader's CET entry and of its shadow-stack VMA in mm.img set to each edge
    (0, 1, -1, 2^47, 2^63, misaligned, ...) and to each other field's value
    (SSP to the stack's start, own_end to SSP, ...), each optional field
    dropped, another VMA marked as a shadow stack, the shadow-stack VMA
    duplicated or removed;
  - random combinations of 2 or 3 such edits;
  - random byte flips in the leader's core and mm images.
An intact copy ("ctl") is restored last and must come back: it proves the
pid and the system were still usable after all the others.
A second boot restores every copy with criu-cet under a time limit
(lab/suites/cet-fuzz.sh) and reports what happened; this judges each one:

  refused    criu exited non-zero, said why (an Error line), left no task
  restored   criu restored it and the task runs with the CET state (features,
             lock, shadow-stack mappings) its image describes
  described  criu restored it as described and the task then died of what
             its image said (a return that no longer matches its shadow
             stack, a register the flip broke): not criu's doing

and the failures, which must be 0: crash (criu killed by a signal), hang
(the time limit), stray (a task left after a refused restore), unclear (a
refusal without a message), differs (a running task whose CET state is not
its image's), missing (no report for a copy).
"""

import argparse
import copy
import os
import random
import shutil
import sys

# the runner (lab/run.py, protocol.py, images.py) is one folder up
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import images  # noqa: E402
import protocol  # noqa: E402
from run import BUILD, lab_to_json  # noqa: E402

U32, U64 = (1 << 32) - 1, (1 << 64) - 1
GOOD = ("refused", "restored", "described")
BAD = ("crash", "hang", "stray", "unclear", "differs", "missing", "control")
TIME_LIMIT = 30      # guest seconds a restore may take (a good one takes < 2)

# edges every number is pushed to, masked to the field's width
EDGES = (0, 1, 2, 3, 4, 7, 8, 0xfff, 0x1000, 0x1001, 1 << 31, U32, 1 << 32, (1 << 47) - 0x1000,
         (1 << 47) - 8, 1 << 47, 1 << 56, 1 << 63, U64 - 7, U64)
CET_FIELDS = {"version": U32, "features": U64, "locked": U64, "ssp": U64,
              "own_start": U64, "own_end": U64}
CET_OPTIONAL = ("ssp", "own_start", "own_end", "own_unknown")
VMA_FIELDS = {"start": U64, "end": U64, "pgoff": U64, "prot": U32, "flags": U32, "status": U32,
              "shmid": U64}


TOTAL = 600
CONTROL = "ctl"


class Variant:
    """One damaged copy: which files changed, and what was done to them."""

    def __init__(self, ident):
        self.ident, self.what, self.files = ident, [], {}


def _paths(src):
    return images.leader_core_path(src), images.mm_path(src)


def _interesting(core, mm):
    """Values the image itself holds: an edited field gets one of these too."""
    vals = set()
    for k in ("ssp", "own_start", "own_end", "features", "locked"):
        if k in core["cet"]:
            vals.add(images.num(core["cet"][k]))
    for v in mm["vmas"]:
        vals.update((images.num(v["start"]), images.num(v["end"]), images.num(v["end"]) - 8))
    return sorted(vals)


def _ss_indices(mm):
    """Indices of mm.img's shadow-stack VMAs."""
    return [i for i, v in enumerate(mm["vmas"]) if images.num(v["status"]) & images.VMA_AREA_SHSTK]


def _own_values(core, mm):
    """{name: value} of the CET entry's numbers and the shadow-stack VMA's
    bounds: what "each other's values" means for a systematic edit."""
    cet = core["cet"]
    out = {f"cet.{k}": images.num(cet[k]) for k in CET_FIELDS if k in cet}
    ss = _ss_indices(mm)
    if ss:
        first = mm["vmas"][ss[0]]
        out["ss.start"], out["ss.end"] = images.num(first["start"]), images.num(first["end"])
    return out


def _value(rng, width, pool):
    kind = rng.random()
    if kind < 0.4:
        return rng.choice(EDGES) & width
    if kind < 0.8 and pool:
        return (rng.choice(pool) + rng.choice((0, 0, 8, -8, 1, 4, 0x1000, -0x1000))) & width
    return rng.getrandbits(64) & width


def _edit_cet(rng, core, mm, pool):
    cet = core["cet"]
    field = rng.choice(sorted(CET_FIELDS) + ["own_unknown", "drop"])
    if field == "drop":
        gone = rng.choice(CET_OPTIONAL)
        cet.pop(gone, None)
        return f"cet.{gone} dropped"
    if field == "own_unknown":
        cet["own_unknown"] = not cet.get("own_unknown", False)
        return f"cet.own_unknown={cet['own_unknown']}"
    cet[field] = _value(rng, CET_FIELDS[field], pool)
    return f"cet.{field}={cet[field]:#x}"


def _ss_index(mm, rng):
    ss = _ss_indices(mm)
    return rng.choice(ss) if ss else rng.randrange(len(mm["vmas"]))


# The VMA-list edits both the systematic and the random copies make
def _mark_shstk(mm, j):
    mm["vmas"][j]["status"] = images.num(mm["vmas"][j]["status"]) | images.VMA_AREA_SHSTK
    return f"vma[{j}] marked as a shadow stack"


def _twice(mm, i):
    mm["vmas"].insert(i, dict(mm["vmas"][i]))
    return f"vma[{i}] (the shadow stack) twice"


def _removed(mm, i):
    del mm["vmas"][i]
    return f"vma[{i}] (the shadow stack) removed"


def _edit_vma(rng, core, mm, pool):
    vmas = mm["vmas"]
    i = _ss_index(mm, rng)
    op = rng.random()
    if op < 0.1:
        return _mark_shstk(mm, rng.randrange(len(vmas)))
    if op < 0.15:
        return _twice(mm, i)
    if op < 0.2:
        return _removed(mm, i)
    field = rng.choice(sorted(VMA_FIELDS))
    vmas[i][field] = _value(rng, VMA_FIELDS[field], pool)
    return f"vma[{i}].{field}={vmas[i][field]:#x}"


def _saved(v, core_path, core_img, mm_path, mm_img):
    """Keep the files the edits changed, as pycriu writes them."""
    for path, img in ((core_path, core_img), (mm_path, mm_img)):
        out = os.path.join(os.path.dirname(path), ".fuzz.img")
        images.save(img, out)
        with open(out, "rb") as f:
            data = f.read()
        os.unlink(out)
        with open(path, "rb") as f:
            if f.read() != data:
                v.files[os.path.basename(path)] = data
    return v


def _images(src):
    core_path, mm_path = _paths(src)
    return core_path, images.load(core_path), mm_path, images.load(mm_path)


def structured(rng, src, ident):
    """2 or 3 random edits of the CET entry and the VMA list, saved through pycriu."""
    core_path, core_img, mm_path, mm_img = _images(src)
    core, mm = core_img["entries"][0], mm_img["entries"][0]
    pool = _interesting(core, mm)
    v = Variant(ident)
    for _ in range(rng.choice((2, 2, 3))):
        edit = _edit_cet if rng.random() < 0.55 else _edit_vma
        v.what.append(edit(rng, core, mm, pool))
    return _saved(v, core_path, core_img, mm_path, mm_img)


def systematic_edits(src):
    """Every single edit: (what, fn(core, mm)) for each field x each edge and
    each other field's value, drops, marks, the VMA twice or gone."""
    _, core_img, _, mm_img = _images(src)
    core, mm = core_img["entries"][0], mm_img["entries"][0]
    own = _own_values(core, mm)
    ss_i = _ss_indices(mm)
    edits = []

    def cet_set(field, val):
        return lambda c, m: c["cet"].__setitem__(field, val)

    def vma_set(i, field, val):
        return lambda c, m: m["vmas"][i].__setitem__(field, val)

    for field, width in CET_FIELDS.items():
        for val in sorted({e & width for e in EDGES} | {x & width for x in own.values()}):
            edits.append((f"cet.{field}={val:#x}", cet_set(field, val)))
    edits.append(("cet.own_unknown=True", cet_set("own_unknown", True)))
    for field in CET_OPTIONAL:
        edits.append((f"cet.{field} dropped", lambda c, m, f=field: c["cet"].pop(f, None)))
    for i in ss_i:
        for field, width in VMA_FIELDS.items():
            for val in sorted({e & width for e in EDGES} | {x & width for x in own.values()}):
                edits.append((f"vma[{i}].{field}={val:#x}", vma_set(i, field, val)))
        for op in (_twice, _removed):
            edits.append((op(copy.deepcopy(mm), i), lambda c, m, op=op, i=i: op(m, i)))
    for j in range(len(mm["vmas"])):
        if j not in ss_i:
            edits.append((f"vma[{j}] marked as a shadow stack", lambda c, m, j=j: _mark_shstk(m, j)))
    return edits


def systematic(src, ident, what, fn):
    core_path, core_img, mm_path, mm_img = _images(src)
    fn(core_img["entries"][0], mm_img["entries"][0])
    v = Variant(ident)
    v.what.append(what)
    return _saved(v, core_path, core_img, mm_path, mm_img)


def flipped(rng, src, ident):
    """1 to 8 random bytes of the leader's core or mm image changed."""
    path = rng.choice(_paths(src))
    with open(path, "rb") as f:
        data = bytearray(f.read())
    v = Variant(ident)
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(data))
        data[at] ^= rng.randint(1, 255)
        v.what.append(f"{os.path.basename(path)}[{at}]^")
    v.files[os.path.basename(path)] = bytes(data)
    return v


def make_variants(src, count, seed, total=TOTAL):
    """The full set (at least total copies: every systematic edit, then random
    combinations and byte flips half and half), the same for the same seed;
    count < total takes count of them evenly spread over the set."""
    rng = random.Random(seed)
    out = []
    for what, fn in systematic_edits(src):
        v = systematic(src, f"{len(out):04d}", what, fn)
        if v.files:          # not a value set to itself
            out.append(v)
    while len(out) < max(total, count):
        ident = f"{len(out):04d}"
        v = structured(rng, src, ident) if rng.random() < 0.5 else flipped(rng, src, ident)
        if v.files:
            out.append(v)
    if count < len(out):
        step = len(out) / count
        out = [out[int(i * step)] for i in range(count)]
    return out


def expected_state(src, v):
    """What a restored task must show if its damaged image parses: features,
    lock bits /proc names, shadow-stack ranges, and whether the kernel may
    add a stack (own_unknown).  None when pycriu cannot read the image."""
    work = os.path.join(os.path.dirname(src.rstrip("/")), ".fuzz-expect")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(src, work)
    try:
        for name, data in v.files.items():
            with open(os.path.join(work, name), "wb") as f:
                f.write(data)
        try:
            cet = images.leader_cet(work)
            vmas = images.load(images.mm_path(work))["entries"][0]["vmas"]
        except Exception:
            return None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    names = lambda bits: " ".join(n for b, n in ((1, "shstk"), (2, "wrss")) if bits & b)  # noqa: E731
    ss = sorted((images.num(x["start"]), images.num(x["end"])) for x in vmas
                if images.num(x["status"]) & images.VMA_AREA_SHSTK)
    return {"features": names(images.num(cet.get("features", 0))),
            "locked": names(images.num(cet.get("locked", 0))),
            "ss": ",".join(f"{a:x}-{b:x}" for a, b in ss),
            "extra_ok": bool(cet.get("own_unknown"))}


def write_overlay(src, variants, out):
    """out/lab/fuzz/base: the intact dump; out/lab/fuzz/v/<id>/: the changed
    files of each copy.  The guest lays each over a copy of the base."""
    root = os.path.join(out, "lab", "fuzz")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(src, os.path.join(root, "base"))
    os.makedirs(os.path.join(root, "v", CONTROL))     # intact, restored last ("ctl" > digits)
    for v in variants:
        d = os.path.join(root, "v", v.ident)
        os.makedirs(d)
        for name, data in v.files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    return root


def parse_report(detail):
    """'rc=1 secs=0.4 alive=- ... msg=free text' -> dict (msg takes the rest;
    spaces in the other values come as "+")."""
    fields = protocol.parse_fields(detail, "msg")
    return {k: v if k == "msg" else v.replace("+", " ") for k, v in fields.items()}


def judge(rep, expect):
    """(class, why) for one copy's guest report and its expected state."""
    if rep is None:
        return "missing", "no report from the guest"
    rc = int(rep.get("rc", "-1"))
    if rep.get("stray"):
        return "stray", f"tasks left: {rep['stray']}"
    if rc == 137 or float(rep.get("secs", 0)) >= TIME_LIMIT - 1:
        return "hang", f"no end within {TIME_LIMIT} s (rc {rc})"
    if rc > 128 or rc < 0:
        return "crash", f"criu died of signal {rc - 128}"
    if rc != 0:
        if not rep.get("msg"):
            return "unclear", f"exit {rc} without an Error line"
        return "refused", rep["msg"]
    if rep.get("alive") != "yes":
        return "described", rep.get("msg") or "the task died after the restore"
    if expect is None:
        return "restored", "runs (pycriu cannot read the image to compare)"
    got = {k: rep.get(k, "") for k in ("features", "locked", "ss")}
    for k in ("features", "locked"):
        if got[k] != expect[k]:
            return "differs", f"{k} '{got[k]}', its image says '{expect[k]}'"
    want = set(filter(None, expect["ss"].split(",")))
    have = set(filter(None, got["ss"].split(",")))
    extra = have - want
    if want - have or (extra and not (expect["extra_ok"] and len(extra) == 1)):
        return "differs", f"shadow stacks {sorted(have)}, its image says {sorted(want)}"
    return "restored", "runs with the CET state of its image"


def tally(results, variants, expects):
    """{id: (class, why)} for every variant, from run.py's parsed results."""
    reps = {}
    for key, text in results.items():
        if key.startswith("fuzz.") and (key[5:].isdigit() or key[5:] == CONTROL):
            reps[key[5:]] = parse_report(text)
    verdicts = {v.ident: judge(reps.get(v.ident), expects[v.ident]) for v in variants}
    cls, why = judge(reps.get(CONTROL), None)
    if cls != "restored":
        verdicts[CONTROL] = ("control", f"the intact copy, restored last: {cls}: {why}")
    return verdicts


def report(verdicts, variants, out=sys.stdout, show=8):
    p = lambda s="": print(s, file=out)    # noqa: E731
    what = {v.ident: "; ".join(v.what) for v in variants}
    what[CONTROL] = "intact"
    counts = {c: 0 for c in GOOD + BAD}
    for cls, _ in verdicts.values():
        counts[cls] += 1
    for cls in GOOD + BAD:
        items = [(i, w) for i, (c, w) in sorted(verdicts.items()) if c == cls]
        if not items:
            continue
        p(f"{cls}: {len(items)}")
        for i, why in items[:show if cls in GOOD else len(items)]:
            p(f"  {i} {what[i][:90]}: {why[:140]}")
    bad = sum(counts[c] for c in BAD)
    p("fuzz: " + ", ".join(f"{c} {counts[c]}" for c in GOOD + BAD) +
      f"; {len(verdicts)} images, {bad} failures")
    return 1 if bad or not verdicts else 0


def export(kernel, dest):
    doc = lab_to_json("fuzz", "cet-images-export", kernel, name="fuzz-export")
    return images.extract_exported(doc["folder"], dest)


def run(count, seed, kernel, work):
    src = export(kernel, os.path.join(work, "images"))
    variants = make_variants(src, count, seed)
    expects = {v.ident: expected_state(src, v) for v in variants}
    write_overlay(src, variants, os.path.join(work, "overlay"))
    doc = lab_to_json("fuzz", "cet-fuzz", kernel, overlay=os.path.join(work, "overlay"), timeout=5400)
    broken = doc.get("stopped") or doc.get("panic") or \
        (None if doc.get("done") else "the guest did not finish")
    return tally(doc.get("info", {}), variants, expects), variants, broken


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="store_true", help="export, damage, restore in the lab")
    ap.add_argument("--overlay", nargs=2, metavar=("SRC", "OUT"), help="only write the variants")
    ap.add_argument("--count", type=int, default=600)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--kernel", default="stock", choices=["stock", "patched"])
    args = ap.parse_args(argv)
    if args.overlay:
        src, out = args.overlay
        variants = make_variants(src, args.count, args.seed)
        print(write_overlay(src, variants, out))
        return 0
    if not args.run:
        ap.error("give --run or --overlay")
    work = os.path.join(BUILD, "fuzz")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    print(f"fuzz: {args.count} damaged images, seed {args.seed}, kernel {args.kernel}", flush=True)
    verdicts, variants, broken = run(args.count, args.seed, args.kernel, work)
    rc = report(verdicts, variants)
    if broken:
        print(f"fuzz: the lab run broke: {broken}")
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
