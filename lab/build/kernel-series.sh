#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Is the kernel series buildable, bisectable and working on both kernels it
# is for: kernel/patches-6.12 on Linux 6.12 LTS, kernel/patches (the series
# as posted) on the newest Linux in Debian's archive?  For each:
#  - after each patch (1, 1-2, ...), a whole bzImage of the lab config,
#    built incrementally from the stock objects (not after a patch that only
#    touches tools/ and Documentation/: that is said);
#  - the whole series with CONFIG_X86_USER_SHADOW_STACK=n (a full build:
#    the regset code compiled out);
#  - the selftest against the series' headers, with -Wall -Werror;
#  - checkpatch.pl --strict of that tree on each patch.
# Then the newest kernel boots in the lab with and without the series and
# runs the kselftest suite (the 6.12 ones are in make test).
# One line per step ("series: <base>: ... ok|FAILED") and a summary; exit 1
# if a step failed.  Nothing is cached but the kernels kernel.sh builds.
# About 45 min on 2 cores from nothing:
#   make kernel-series
set -euo pipefail
. "$(dirname "$0")/../common.sh"

failed=0
fail() { echo "series: $*: FAILED"; failed=1; }

# build NAME TREE OBJDIR: a bzImage, its log kept in OBJDIR/build.log
build() {
	local t0=$SECONDS
	if make -C "$2" O="$3" -j"$(nproc)" -s bzImage > "$3/build.log" 2>&1; then
		echo "series: $1: bzImage ok ($((SECONDS - t0)) s, $(grep -c 'warning:' "$3/build.log") warnings)"
	else
		fail "$1: bzImage ($((SECONDS - t0)) s)"
		grep -E 'error|warning' "$3/build.log" | head -10
	fi
}

# check_base BASE STOCK-FLAVOUR SRC: every step above on one base
check_base() {
	local base=$1 stock=$2 src=$3 work=$BUILD/kernel-series/$1 p i
	local -a patches
	mapfile -t patches < <(kernel_series "$base")
	local tree=$work/linux nocfg=$work/obj-noshstk x86

	bash "$TOP/lab/build/linux-source.sh" "$base"
	[ -f "$BUILD/kernel/obj-$stock/arch/x86/boot/bzImage" ] ||
		CRIU_CET_OBJECTS=1 bash "$TOP/lab/build/kernel.sh" "$stock"
	rm -rf "$work" && mkdir -p "$work"
	cp -al "$src" "$tree"
	echo "series: $base: $(make -s -C "$src" kernelversion), ${#patches[@]} patches"

	reuse_objects "$BUILD/kernel/obj-$stock" "$work/obj" "$src" "$tree"
	for i in "${!patches[@]}"; do
		p=${patches[$i]}
		apply_series "$tree" "$base" "$p"
		# a patch that only touches tools/ and Documentation/ leaves the
		# bzImage as it was: said, not rebuilt
		if ! grep '^+++ b/' "$p" | grep -qv '^+++ b/\(tools\|Documentation\)/'; then
			echo "series: $base: patch $((i + 1))/${#patches[@]} $(basename "$p" .patch | cut -c6-60): only tools/ and Documentation/, bzImage as before"
			continue
		fi
		build "$base: patch $((i + 1))/${#patches[@]} $(basename "$p" .patch | cut -c6-60)" "$tree" "$work/obj"
	done

	mkdir -p "$nocfg"
	cp "$BUILD/kernel/obj-$stock/.config" "$nocfg/.config"
	"$tree/scripts/config" --file "$nocfg/.config" -d X86_USER_SHADOW_STACK
	make -C "$tree" O="$nocfg" -s olddefconfig
	if grep -q '^CONFIG_X86_USER_SHADOW_STACK=y' "$nocfg/.config"; then
		fail "$base: CONFIG_X86_USER_SHADOW_STACK=n could not be set"
	else
		build "$base: whole series, CONFIG_X86_USER_SHADOW_STACK=n" "$tree" "$nocfg"
	fi

	make -C "$tree" O="$work/hdrobj" -s headers_install INSTALL_HDR_PATH="$work/hdr" > "$work/hdr.log" 2>&1 ||
		die "$base: headers_install failed"
	x86=$tree/tools/testing/selftests/x86
	if (cd "$x86" && gcc -m64 -O2 -g -std=gnu99 -pthread -Wall -Werror -static -isystem "$work/hdr/include" \
		-o "$work/test_shstk_status" test_shstk_status.c -lrt -ldl) > "$work/selftest.log" 2>&1; then
		echo "series: $base: selftest test_shstk_status builds with -Wall -Werror: ok"
	else
		fail "$base: selftest test_shstk_status build"
		head -10 "$work/selftest.log"
	fi

	bash "$TOP/lab/build/checkpatch.sh" "$src" "${patches[@]}" | sed "s/^/series: $base: /" ||
		fail "$base: checkpatch"
}

check_base lts stock "$BUILD/linux-src"
check_base new stock-new "$BUILD/linux-src-new"

# the newest kernel with and without the series, booted: the kselftest
# suite.  With it every test_shstk_status case passes, without it every one
# reports SKIP, and the kernel's own test_shadow_stack gives the same
# results on both (what it says about this kernel is not the series' doing).
for k in stock-new patched-new; do
	bash "$TOP/lab/build/kernel.sh" $k
	# run.py exits 1 when a result failed: the results are judged below
	rm -f "$BUILD/kernel-series/kselftest-$k.json"
	"$PY" "$TOP/lab/run.py" --suites kselftest --kernel $k --json "$BUILD/kernel-series/kselftest-$k.json" \
		> "$BUILD/kernel-series/boot-$k.log" 2>&1 || true
	echo "series: new: $k booted: $(tail -1 "$BUILD/kernel-series/boot-$k.log" | sed 's/^lab: //')"
done
"$PY" - "$BUILD/kernel-series" <<'PYEOF' || failed=1
import json, os, sys
d = sys.argv[1]
docs = {}
for k in ("stock-new", "patched-new"):
    path = os.path.join(d, f"kselftest-{k}.json")
    docs[k] = json.load(open(path)) if os.path.exists(path) else None
    if not docs[k] or docs[k]["stopped"] or not docs[k]["done"]:
        print(f"series: new: the lab boot of {k} did not finish "
              f"({docs[k]['stopped'] if docs[k] else 'no results'}): FAILED")
        sys.exit(1)
runs = {k: {r["name"]: r for r in doc["results"]} for k, doc in docs.items()}
ok = True
for k, want in (("patched-new", "PASS"), ("stock-new", "SKIP")):
    cases = {n: r for n, r in runs[k].items() if n.startswith("kselftest.shstk-status.")}
    good = sum(r["status"] == want for r in cases.values())
    print(f"series: new: {k}: test_shstk_status {good} of {len(cases)} {want}")
    for r in cases.values():
        if r["status"] != want:
            print(f"series: new:   {r['status']} {r['name']} {r['detail']}")
    ok &= bool(cases) and good == len(cases)
shstk = {k: {n: r["status"] for n, r in run.items() if n.startswith("kselftest.shadow-stack.")}
         for k, run in runs.items()}
same = shstk["stock-new"] == shstk["patched-new"]
counts = {s: sum(v == s for v in shstk["patched-new"].values()) for s in ("PASS", "FAIL", "SKIP")}
print(f"series: new: test_shadow_stack {'the same' if same else 'NOT the same'} with and without the "
      f"series: {counts['PASS']} pass, {counts['FAIL']} fail, {counts['SKIP']} skip")
for n, st in sorted(shstk["patched-new"].items()):
    if st != "PASS":
        print(f"series: new:   {st} {n} {runs['patched-new'][n]['detail']}")
sys.exit(0 if ok and same and shstk["patched-new"] else 1)
PYEOF

[ "$failed" = 0 ] && echo "series: all steps ok" || echo "series: some steps FAILED"
exit "$failed"
