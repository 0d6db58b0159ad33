#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# CRIU's own ZDTM suite for the guest, as a folder run.py --overlay adds to
# it (suite zdtm-upstream, make zdtm):
#   /usr, /lib...                 Debian's python3 with what zdtm.py, pycriu
#                                 and its tests' Makefiles need (lab/overlays/zdtm-runtime.sh)
#   /opt/cet-glibc/lib            the CET glibc's runtime and a SHSTK-marked
#                                 libgcc_s.so.1 (pthread_exit, cancellation)
#   /lab/zdtm-upstream/plain/test the base CRIU's test/ tree, ZDTM tests as
#                                 they are (lab/build/zdtm-upstream.sh)
#   /lab/zdtm-upstream/shstk/test the same tests built as shadow-stack tests
#   both with test/zdtm/upstream/zdtm.py-*.patch applied (the shadow-stack
#   check, zdtm/shstk_state.py; a test's own ELF loader in the ns root) and
#   pycriu generated from criu-cet's images
#   /lab/zdtm-upstream/lists/     the make test sample (and ours, lists/cet) by
#                                 flavour, and plan: what the suite runs (those
#                                 on shadow stacks with criu-cet and stock
#                                 4.1.1; lab/reports/zdtm_plan.py)
# An overlay, not the initramfs: only the ZDTM boots pay for Python and
# two builds of the tests.  Prints the folder.
#
#   lab/overlays/zdtm.sh [all|sample|migrate]
set -euo pipefail
. "$(dirname "$0")/../common.sh"

UPSTREAM=$TOP/test/zdtm/upstream
# "sample": only make test's sample built and staged (build/overlay-zdtm-sample);
# "migrate": the same tests, and the plan of the migration boot (our tests
# through zdtm.py's migration flows: lab/reports/zdtm_plan.py MIGRATE_FLOWS);
# default: every test (build/overlay-zdtm, for make zdtm)
variant=${1:-all}
case $variant in
all) list= link=$BUILD/overlay-zdtm tests=$BUILD/zdtm-upstream/stage ;;
sample) list=$UPSTREAM/sample.list link=$BUILD/overlay-zdtm-sample tests=$BUILD/zdtm-upstream-sample/stage ;;
migrate) list=$UPSTREAM/sample.list link=$BUILD/overlay-zdtm-migrate tests=$BUILD/zdtm-upstream-sample/stage ;;
*) die "usage: $0 [all|sample|migrate]" ;;
esac
out=$link.$$
dest=$out/lab/zdtm-upstream
rm -rf "$out"
bash "$TOP/lab/overlays/zdtm-runtime.sh" "$out" >&2 || die "the guest's Python runtime failed"
mkdir -p "$dest/lists"
bash "$TOP/lab/build/zdtm-upstream.sh" "$tests" $list >&2 || die "the ZDTM tests failed to build"
glibc=$(bash "$TOP/lab/overlays/cet-glibc.sh") || die "no CET glibc overlay"
cp -a "$glibc/opt" "$out/"
cp "$tests/libgcc_s.so.1" "$out/opt/cet-glibc/lib/" || die "no SHSTK-marked libgcc_s.so.1"
# the Debian libraries plain tests load beyond glibc (libaio, libcap,
# libgcc_s, libnl: runtime-needs.txt), where the guest has none yet
awk '$1 == "plain" { for (i = 3; i <= NF; i++) print $i }' "$tests/runtime-needs.txt" | sort -u |
	while read -r t; do
		shared_libs "$tests/plain/test/$t" | while read -r lib; do
			[ -e "$out$lib" ] || { mkdir -p "$out$(dirname "$lib")" && cp -L "$lib" "$out$lib"; }
		done
	done

# stage_cet_tests TREE: our shadow-stack tests (test/zdtm/cet, built by
# make zdtm-cet) as TREE/zdtm/cet/NAME, run by zdtm.py like the base CRIU's,
# with their .desc and .checkskip files and cet-abi.h where their Makefile
# looks; the binaries newer than ZDTM's library, so that make starts them
# and builds nothing (the guest has no compiler).  lists/cet names them:
# lab.list's (extra.list's run only in the special modes of
# lab/guest/zdtm_cet_run.c, such as leave-running).
cet_built=$BUILD/zdtm-cet/tree
[ -d "$cet_built/test/zdtm/cet" ] || die "no ZDTM CET tests built (make zdtm-cet)"
cet_tests=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/test/zdtm/cet/lab.list" | awk '{ print $1 }')
# Make needs no objects or sources for that; the plain tree gets hard links
# to the shstk tree's (one copy in the cpio).
stage_cet_tests() {
	local dir=$1/zdtm/cet t
	if [ -n "${2:-}" ]; then
		cp -al "$2/zdtm/cet" "$dir" && cp -al "$2/../criu" "$1/../criu"
		return
	fi
	mkdir -p "$dir" "$1/../criu/arch/x86/cet"
	cp -a "$cet_built/test/zdtm/cet/Makefile" "$cet_built/test/zdtm/cet/cetlib.h" \
		"$TOP"/test/zdtm/cet/*.checkskip "$TOP"/test/zdtm/cet/*.desc "$dir/"
	cp -a "$cet_built/criu/arch/x86/cet/cet-abi.h" "$1/../criu/arch/x86/cet/"
	for t in $cet_tests; do
		[ -x "$cet_built/test/zdtm/cet/$t" ] || die "ZDTM CET test $t was not built"
		cp "$cet_built/test/zdtm/cet/$t" "$dir/$t"
	done
}
for t in $cet_tests; do echo "zdtm/cet/$t"; done > "$dest/lists/cet"

# pycriu as zdtm.py imports it (test/pycriu), with criu-cet's images
criu_tree_lock cet
build_pycriu "$BUILD/criu-cet/src"
criu_tree_unlock
for build in shstk plain; do
	tree=$dest/$build/test
	cp -a "$tests/$build" "$dest/$build"
	rm -rf "$tree/pycriu" && cp -rL "$BUILD/criu-cet/src/lib/pycriu" "$tree/pycriu"
	# the tests' hooks import it from ../lib, as in CRIU's source tree
	mkdir -p "$dest/$build/lib" && ln -s ../test/pycriu "$dest/$build/lib/pycriu"
	for p in "$UPSTREAM"/zdtm.py-*.patch; do
		patch -d "$dest/$build" -p1 --quiet < "$p" || die "$(basename "$p") does not apply to the $build tree"
	done
	cp "$UPSTREAM/shstk_state.py" "$tree/zdtm/"
	stage_cet_tests "$tree" $([ $build = plain ] && echo "$dest/shstk/test")
done
cp "$UPSTREAM/zdtm_results.py" "$dest/"
cp "$tests/build-failures.txt" "$dest/"
# the sample and our own tests on shadow stacks with criu-cet, stock 4.1.1
# beside it, each test in one flavour (lab/reports/zdtm_plan.py)
if [ "$variant" = migrate ]; then
	set -- --migrate
else
	set -- --sample "$UPSTREAM/sample.list" --ours "$dest/lists/cet"
fi
"$PY" "$TOP/lab/reports/zdtm_plan.py" write --tree "$dest/plain/test" --out "$dest" "$@" > /dev/null || die "no plan"
publish_overlay "$link" "$out"
say "zdtm overlay $(du -sh "$out" | cut -f1) -> $link" >&2
echo "$link"
