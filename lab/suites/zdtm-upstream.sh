# SPDX-License-Identifier: GPL-2.0
# CRIU's own ZDTM suite, run by CRIU's own zdtm.py in the guest
# (lab/overlays/zdtm.sh): the base CRIU's ZDTM tests built twice, plain
# (Debian 12's glibc) and as shadow-stack tests the way upstream's
# SHSTK_ENABLE=1 builds them, against the CET glibc; those run with
# GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK, so glibc turns shadow stacks on and
# locks them in every process and thread of every test.  zdtm.py carries
# one more check (test/zdtm/upstream/zdtm.py-shstk-state.patch): features,
# locks, shadow-stack mappings and SSP before the dump and after the restore.
#
# What runs is the plan, /lab/zdtm-upstream/plan (a second overlay may put
# another there: make zdtm hands each boot its share), or the part of it
# for one CRIU (suites zdtm-upstream-cet, zdtm-upstream-stock).  A plan line:
#	LABEL BUILD CRIU LIST [zdtm.py run options, --manual...]
# runs `zdtm.py run -T <the tests of lists/LIST> --keep-going` in the tree
# of BUILD (plain or shstk) with CRIU; every test gets a verdict line
# "zdtm.LABEL.<test>" (test/zdtm/upstream/zdtm_results.py).  --manual
# names each test with -t instead: zdtm.py's "manual run only" (noauto)
# tests run only so.
top=/lab/zdtm-upstream
plan=$top/plan
if [ ! -f "$plan" ]; then
	lab_skip zdtm.upstream "no ZDTM overlay in this guest (lab/overlays/zdtm.sh)"
	return 0
fi
# zdtm.py's ns flavour pivot_roots into the test's root: the suite runs in
# a tmpfs root (in_tmpfs_root, lib.sh)
if [ -z "${LAB_ZDTM_CHROOTED:-}" ]; then
	in_tmpfs_root /zdtm-root LAB_ZDTM_CHROOTED "${LAB_ZDTM_SUITE:-zdtm-upstream}" ||
		lab_fail zdtm.tmpfs-root "cannot make a tmpfs root at /zdtm-root"
	return 0
fi

# zdtm.py, make and the Debian tools the overlay brings (lab/overlays/zdtm-runtime.sh)
# before busybox's: zdtm.py and CRIU want util-linux's mount, iproute2's
# ip, GNU tar.  make's variables on its command line, for every make zdtm.py
# starts (two a test): busybox sh runs its own applets before PATH, so
# Makefile.inc's rm --one-file-system is coreutils' by path; the
# architecture that Makefile.inc asks uname and sed for, three times a make
# (in the emulator every process costs); no pkg-config in the guest.
export PATH=/lab/bin:/usr/sbin:/usr/bin:/sbin:/bin
export MAKEFLAGS='RM=/usr/bin/rm\ -f\ --one-file-system SUBARCH=x86_64 ARCH=x86 PKG_CONFIG=false'

# zdtm_probe: the shadow-stack build really runs on glibc's locked shadow
# stacks here (or every shstk verdict below would be about nothing)
zdtm_probe() {
	local dir=$top/shstk/test/zdtm/static st
	[ -x $dir/env00 ] || { lab_fail zdtm.shstk-probe "no shstk build of env00"; return; }
	(cd $dir && rm -f probe.pid && GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK ./env00 --pidfile=probe.pid \
		--outfile=probe.out --envname=ENV_00_TEST) > /dev/null 2>&1
	WAIT_TENTHS=50 wait_for test -s $dir/probe.pid
	st=$(grep -E '^x86_Thread_features(_locked)?:' "/proc/$(cat $dir/probe.pid 2>/dev/null)/status" 2>/dev/null |
		sed 's/^x86_Thread_//' | tr '\n\t' '  ')
	kill -9 "$(cat $dir/probe.pid 2>/dev/null)" 2>/dev/null
	rm -f $dir/probe.pid $dir/probe.out
	case $st in
	*"features: shstk"*"locked: shstk wrss"*) lab_pass zdtm.shstk-probe "env00 (shstk build): $st" ;;
	*) lab_fail zdtm.shstk-probe "env00 (shstk build) is not on a locked shadow stack: ${st:-not started}" ;;
	esac
}
zdtm_probe

# list_tests LIST: the tests of a list, one a line (comments, spaces and
# empty lines aside)
list_tests() {
	sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$1"
}

# zdtm_regex LIST: zdtm.py's -T for the tests of a list; -F would do, but
# it turns --keep-going off.  Names are escaped (the . and + test names
# hold: zdtm/static/unlink_fstat01+)
zdtm_regex() {
	echo "^($(list_tests "$1" | sed 's/[.+]/\\&/g' | tr '\n' '|' | sed 's/|$//'))\$"
}

# criu_logs TREE LABEL: the CET and error lines of the CRIU logs zdtm.py
# kept (it keeps the images of a failed test), for whoever reads the console
criu_logs() {
	find "$1/dump" -name '*.log' 2>/dev/null | while read -r log; do
		grep -q 'Error' "$log" || continue
		grep -E 'cet: |Error' "$log" | grep -v -e '-legacy' | head -40 |
			sed "s|^|zdtm-criu-log $2 ${log#"$1"/dump/}: |"
	done
}

# run_marked LABEL: the processes of zdtm.py's run LABEL, by the mark in
# their environment (zdtm.py's tests and CRIUs inherit it, a restored task
# gets its own back from the images): daemons that left zdtm.py's tree
# (lazy-pages, page server, restored trees) included
run_marked() {
	grep -lsz "^LAB_ZDTM_RUN=$1\$" /proc/[0-9]*/environ | cut -d/ -f3
}

# proc_state PID: the state letter of PID (R, S, D, Z...), none when gone
proc_state() {
	sed -n 's/^.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null
}

# hang_report LABEL OUT: what each process of the run was waiting in, and
# zdtm.py's last lines, for whoever reads the console of a run that hung
hang_report() {
	local p
	for p in $(run_marked "$1"); do
		echo "zdtm-hang $1: $p $(proc_state "$p") wchan=$(cat "/proc/$p/wchan" 2>/dev/null)" \
			"$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-160)"
		head -8 "/proc/$p/stack" 2>/dev/null | sed "s/^/zdtm-hang $1: $p /"
	done
	tail -n 20 "$2" | sed "s/^/zdtm-hang $1: zdtm.py: /"
}

# end_run LABEL: kill what is left of the run (none is, when zdtm.py ended
# well), so that nothing of it weighs on the next run
end_run() {
	local left round
	for round in 1 2 3 4 5; do
		left=$(run_marked "$1")
		[ -n "$left" ] || return 0
		# shellcheck disable=SC2086 # pids, one word each
		[ $round = 1 ] && echo "zdtm-leftover $1: killing" $left
		kill -9 $left 2>/dev/null
		sleep 1
	done
	echo "zdtm-leftover $1: still there after SIGKILL:" $left
}

# zdtm_run LABEL TREE CRIU TUNABLES LIST OUT [zdtm.py run options and
# --manual...]: one zdtm.py over the tests of LIST, bounded (a test takes
# ten seconds or so): a zdtm.py that hangs is killed with all it started,
# and costs the test it hung in its verdict, said so, not the boot.
# Returns zdtm.py's exit status, 137 when it was killed.
zdtm_run() {
	local label=$1 tree=$2 criu=$3 tunables=$4 list=$5 out=$6 limit pid rc waited=0 manual n a t
	shift 6
	limit=$((${LAB_ZDTM_LIMIT_BASE:-120} + ${LAB_ZDTM_LIMIT_EACH:-60} * $(list_tests "$list" | wc -l)))
	# --manual: zdtm.py runs a noauto test (transition/thread-bomb) only
	# when it is named with -t, never from a -T regex
	manual= n=$#
	for a in "$@"; do
		if [ "$a" = --manual ]; then manual=1; else set -- "$@" "$a"; fi
	done
	shift $n
	if [ -n "$manual" ]; then
		for t in $(list_tests "$list"); do set -- "$@" -t "$t"; done
	else
		set -- "$@" -T "$(zdtm_regex "$list")"
	fi
	# --fork-ct (test/zdtm/upstream/zdtm.py-fork-ct.patch): each test in a
	# fork of this zdtm.py, in zdtm_ct's namespaces, not in a new python
	# that imports yaml and pycriu again: that was 5 of a test's 10 s here
	(cd "$tree" && LAB_ZDTM_RUN=$label GLIBC_TUNABLES=$tunables PYTHONUNBUFFERED=1 exec \
		python3 zdtm.py run --keep-going --fork-ct --criu-bin "$criu" "$@") \
		>> "$out" 2>&1 < /dev/null &
	pid=$!
	while [ $waited -lt $limit ]; do
		case $(proc_state $pid) in '' | Z) break ;; esac
		sleep 2
		waited=$((waited + 2))
	done
	if [ $waited -ge $limit ]; then
		echo "zdtm.py was killed after its time limit of $limit s" >> "$out"
		hang_report "$label" "$out"
	fi
	end_run "$label"
	wait $pid
	rc=$?
	[ $waited -lt $limit ] || rc=137
	return $rc
}

# zdtm_run_all LABEL TREE CRIU TUNABLES LIST OUT [options...]: zdtm_run,
# then the tests after one that hung in a new zdtm.py, as long as each
# round reaches one more (the one that hung has its verdict: none)
zdtm_run_all() {
	local label=$1 tree=$2 criu=$3 tunables=$4 list=$5 out=$6 rc left rest=/tmp/zdtm-$1.rest
	shift 6
	zdtm_run "$label" "$tree" "$criu" "$tunables" "$list" "$out" "$@"
	rc=$?
	left=$(list_tests "$list" | wc -l)
	while [ $rc = 137 ] && python3 "$top/zdtm_results.py" --unreached "$out" "$list" > "$rest" &&
		[ -s "$rest" ] && [ "$(list_tests "$rest" | wc -l)" -lt "$left" ]; do
		left=$(list_tests "$rest" | wc -l)
		zdtm_run "$label" "$tree" "$criu" "$tunables" "$rest" "$out" "$@"
		rc=$?
	done
	rm -f "$rest"
	return $rc
}

while read -r label build criu list opts; do
	case $label in '' | '#'*) continue ;; esac
	# zdtm-upstream-cet and -stock: one CRIU's share of the plan a boot
	[ -z "${LAB_ZDTM_CRIU:-}" ] || [ "$criu" = "$LAB_ZDTM_CRIU" ] || continue
	tree=$top/$build/test
	if [ ! -x "$criu" ]; then
		lab_skip "zdtm.$label" "no $criu in this guest"
		continue
	fi
	if [ ! -f "$tree/zdtm.py" ]; then
		lab_fail "zdtm.$label" "no ZDTM build '$build' in the overlay"
		continue
	fi
	tunables=
	[ "$build" = shstk ] && tunables=glibc.cpu.hwcaps=SHSTK
	out=/tmp/zdtm-$label.out
	t0=$(lab_now)
	rm -f "$out"
	# shellcheck disable=SC2086 # opts are zdtm.py options, one word each
	zdtm_run_all "$label" "$tree" "$criu" "$tunables" "$top/lists/$list" "$out" $opts
	rc=$?
	python3 $top/zdtm_results.py "$label" "$out" "$top/lists/$list" ||
		lab_fail "zdtm.$label" "zdtm_results.py could not read zdtm.py's output"
	lab_line INFO "zdtm.$label.run" "rc=$rc seconds=$(echo "$(lab_now) - $t0" | bc)"
	# zdtm.py's own closing lines, for whoever reads the serial log
	tail -n 3 "$out" | sed "s/^/zdtm.$label: /"
	criu_logs "$tree" "$label"
	rm -rf "$tree/dump"
done < "$plan"
