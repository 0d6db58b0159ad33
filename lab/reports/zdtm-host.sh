#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# CRIU's own ZDTM tests on the host (no CET involved), with one of our two
# CRIU 4.1.1 builds: nothing that is not about CET may regress in criu-cet.
#
#   lab/reports/zdtm-host.sh stock|cet [TEST...]   one build; one line per test:
#       zdtm-host <flavour> <test> PASS|FAIL|SKIP <detail>
#     then a summary line; exit 1 if any test fails.
#   lab/reports/zdtm-host.sh both [TEST...]        stock, then cet, then a side-by-side
#     table; exit 1 if any test fails with either build or the results differ.
#
# Each flavour uses zdtm.py, the test programs and the criu binary of its own
# tree (build/criu-<flavour>/); the trees come from lab/build/criu.sh.  Only the
# ZDTM objects the listed tests need are built there (never a source edit).
#
# Running as root: zdtm.py starts every non-'suid' test under uid 18943, and
# root CRIU cannot dump another uid's task without CAP_SYS_RESOURCE (missing in
# this sandbox).  ZDTM's test library skips its setgroups/setgid/setuid step
# when ZDTM_ROOTLESS is set, and zdtm.py passes its own environment on to the
# tests, so ZDTM_ROOTLESS=1 in zdtm.py's environment keeps the tests root while
# CRIU still runs as root ('--rootless' is not used: it would make CRIU drop to
# another uid).  Flavour 'h' (host): no namespaces of ZDTM's own.
set -uo pipefail
. "$(dirname "$0")/../common.sh"

DEFAULT_TESTS=(
	zdtm/static/env00
	zdtm/static/maps00
	zdtm/static/sigaltstack
	zdtm/static/pthread00
	zdtm/transition/fork
	zdtm/static/vdso00
	zdtm/static/pipe00
	zdtm/static/sockets00
)
TEST_TIMEOUT=${ZDTM_HOST_TIMEOUT:-300}
# Debian's python3 (python3-yaml, python3-protobuf), also for zdtm.py's
# '#!/usr/bin/env python3' when zdtm_ct re-executes it.
SYS_PATH=/usr/sbin:/usr/bin:/sbin:/bin

usage() { echo "usage: $0 stock|cet|both [zdtm/static/NAME ...]" >&2; exit 2; }

# build_zdtm TREE TEST...: what zdtm.py needs in TREE to run these tests
build_zdtm() {
	local tree=$1; shift
	local t=$tree/test log=$LOGDIR/build.log
	local static=() transition=() name
	for name in "$@"; do
		case $name in
		zdtm/static/*) static+=("${name#zdtm/static/}") ;;
		zdtm/transition/*) transition+=("${name#zdtm/transition/}") ;;
		*) die "$name: only zdtm/static and zdtm/transition tests are supported" ;;
		esac
	done
	: > "$log"
	# without libzdtmtst.a zdtm.py would build every ZDTM test; umount2 and
	# zdtm_ct are checked for (and built) by zdtm.py on each start
	make -C "$t/zdtm/lib" -j2 >> "$log" 2>&1 &&
		{ [ ${#static[@]} -eq 0 ] || make -C "$t/zdtm/static" -j2 "${static[@]}" >> "$log" 2>&1; } &&
		{ [ ${#transition[@]} -eq 0 ] || make -C "$t/zdtm/transition" -j2 "${transition[@]}" >> "$log" 2>&1; } &&
		make -C "$t" umount2 zdtm_ct >> "$log" 2>&1 ||
		{ tail -20 "$log" >&2; die "building ZDTM tests in $tree failed (log: $log)"; }
	build_pycriu "$tree"
}

# verdict LOG RC: "PASS|FAIL|SKIP detail" from one zdtm.py run
verdict() {
	local log=$1 rc=$2 why err
	if grep -q '^Skipping ' "$log"; then
		echo "SKIP $(grep -m1 '^Skipping ' "$log" | sed 's/^Skipping [^ ]* //')"
	elif [ "$rc" = 0 ] && grep -q "Test .* PASS" "$log"; then
		echo PASS
	else
		if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			why="timeout after ${TEST_TIMEOUT}s"
		else
			why=$(grep -m1 -o 'FAIL at .*[^ #]' "$log" | sed -e 's/^FAIL //' -e 's/ *#*$//')
			[ -n "$why" ] || why="zdtm.py exit $rc"
		fi
		# the first CRIU error, not the harmless RLIMIT_NOFILE one that
		# passing runs print too (no CAP_SYS_RESOURCE here)
		err=$(grep -h 'Error (' "$log" | grep -v 'RLIMIT_NOFILE for self' | head -1 |
			sed -e "s/^b[\"']//" -e "s/[\"']\$//" -e 's/^([0-9. ]*) //')
		echo "FAIL $why${err:+: $err}"
	fi
}

# run_flavour FLAVOUR TEST...: the per-test lines and the summary; 1 if a test fails
run_flavour() {
	local f=$1; shift
	local tree=$BUILD/criu-$f/src criu=$BUILD/criu-$f/criu
	[ -x "$criu" ] && [ -f "$tree/test/zdtm.py" ] ||
		die "no $f CRIU in $BUILD/criu-$f (run: bash lab/build/criu.sh $f)"
	LOGDIR=$BUILD/zdtm-host/$f
	mkdir -p "$LOGDIR"
	# one run per tree at a time (dump/ and the pid files live in the tree)
	exec 9> "$BUILD/criu-$f/.zdtm-host.lock"
	flock 9
	say "building the ZDTM tests in $tree" >&2
	criu_tree_lock "$f"
	build_zdtm "$tree" "$@"
	criu_tree_unlock
	local sha ver
	sha=$(sha256sum "$criu" | cut -c1-12)
	ver=$("$criu" --version | awk '/^Version:/ { print $2 }')
	local npass=0 nfail=0 nskip=0 t0 t1 s0 s1 log rc v test
	t0=$(date +%s.%N)
	for test in "$@"; do
		log=$LOGDIR/$(echo "$test" | tr / _).log
		s0=$(date +%s.%N)
		(
			cd "$tree/test" &&
				unset MAKEFLAGS MFLAGS MAKELEVEL &&
				exec env PATH="$SYS_PATH" ZDTM_ROOTLESS=1 \
					timeout -k 10 "$TEST_TIMEOUT" "$PY" zdtm.py run -t "$test" -f h \
					--criu-bin "$criu"
		) > "$log" 2>&1 < /dev/null
		rc=$?
		s1=$(date +%s.%N)
		v=$(verdict "$log" "$rc")
		case $v in
		PASS*) npass=$((npass + 1)) ;;
		SKIP*) nskip=$((nskip + 1)) ;;
		*) nfail=$((nfail + 1)); v="$v (log: ${log#"$TOP"/})" ;;
		esac
		printf 'zdtm-host %s %s %s (%.1fs)\n' "$f" "$test" "$v" "$(echo "$s1 - $s0" | bc)"
	done
	t1=$(date +%s.%N)
	printf 'zdtm-host %s summary: %d PASS, %d FAIL, %d SKIP of %d in %.1fs (criu %s, sha256 %s)\n' \
		"$f" "$npass" "$nfail" "$nskip" "$#" "$(echo "$t1 - $t0" | bc)" "$ver" "$sha"
	exec 9>&-
	[ "$nfail" = 0 ]
}

# both TEST...: stock and cet, then the side-by-side table
both() {
	local out=$BUILD/zdtm-host rc=0 t s c same
	mkdir -p "$out"
	run_flavour stock "$@" | tee "$out/stock.txt" || rc=1
	run_flavour cet "$@" | tee "$out/cet.txt" || rc=1
	echo
	printf '%-26s %-6s %-8s %s\n' test stock criu-cet same
	for t in "$@"; do
		s=$(awk -v t="$t" '$1 == "zdtm-host" && $3 == t { print $4 }' "$out/stock.txt")
		c=$(awk -v t="$t" '$1 == "zdtm-host" && $3 == t { print $4 }' "$out/cet.txt")
		same=yes
		[ -n "$s" ] && [ "$s" = "$c" ] || { same=NO; rc=1; }
		printf '%-26s %-6s %-8s %s\n' "$t" "${s:-none}" "${c:-none}" "$same"
	done
	verdict_line "$out/stock.txt" "$out/cet.txt"
	return $rc
}

# verdict_line STOCK_OUT CET_OUT: one line that says what the run shows.
# Where stock 4.1.1 fails too (a host kernel that hangs its dumps), the
# comparison says nothing about criu-cet, and the line says so.
verdict_line() {
	local sfail
	sfail=$(grep -c "^zdtm-host stock .* FAIL" "$1")
	if ! diff -q <(awk '/^zdtm-host / && !/summary/ { print $3, $4 }' "$1") \
		<(awk '/^zdtm-host / && !/summary/ { print $3, $4 }' "$2") > /dev/null; then
		echo "zdtm-host: verdict: criu-cet differs from stock 4.1.1 (the table above)"
	elif [ "$sfail" -gt 0 ]; then
		echo "zdtm-host: verdict: none on this host: stock 4.1.1 itself fails $sfail test(s) on kernel" \
			"$(uname -r), criu-cet the same; make zdtm runs CRIU's ZDTM suite in the lab"
	else
		echo "zdtm-host: verdict: criu-cet equals stock 4.1.1, every test passes"
	fi
}

[ $# -ge 1 ] || usage
mode=$1; shift
[ $# -gt 0 ] || set -- "${DEFAULT_TESTS[@]}"
[ "$(id -u)" = 0 ] || die "ZDTM needs root"
[ -x "$PY" ] || die "$PY (Debian's python3) is missing"
case $mode in
stock | cet) run_flavour "$mode" "$@" ;;
both) both "$@" ;;
*) usage ;;
esac
