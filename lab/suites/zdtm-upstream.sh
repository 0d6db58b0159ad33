# SPDX-License-Identifier: GPL-2.0
# CRIU's own ZDTM suite, run by CRIU's own zdtm.py in the guest
# (lab/zdtm-overlay.sh): the base CRIU's ZDTM tests built twice, plain
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
#	LABEL BUILD CRIU LIST [zdtm.py run options...]
# runs `zdtm.py run -T <the tests of lists/LIST> --keep-going` in the tree
# of BUILD (plain or shstk) with CRIU; every test gets a verdict line
# "zdtm.LABEL.<test>" (test/zdtm/upstream/zdtm_results.py).
top=/lab/zdtm-upstream
plan=$top/plan
if [ ! -f "$plan" ]; then
	lab_skip zdtm.upstream "no ZDTM overlay in this guest (lab/zdtm-overlay.sh)"
	return 0
fi
# zdtm.py's ns flavour pivot_roots into the test's root: the suite runs in
# a tmpfs root (in_tmpfs_root, lib.sh)
if [ -z "${LAB_ZDTM_CHROOTED:-}" ]; then
	in_tmpfs_root /zdtm-root LAB_ZDTM_CHROOTED "${LAB_ZDTM_SUITE:-zdtm-upstream}" ||
		lab_fail zdtm.tmpfs-root "cannot make a tmpfs root at /zdtm-root"
	return 0
fi

# zdtm.py, make and the Debian tools the overlay brings (lab/zdtm-runtime.sh)
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

# zdtm_regex LIST: zdtm.py's -T for the tests of a list (comments and
# blank lines aside); -F would do, but it turns --keep-going off.  Names
# are escaped (the . and + test names hold: zdtm/static/unlink_fstat01+)
zdtm_regex() {
	echo "^($(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$1" | tr -d ' \t' |
		sed 's/[.+]/\\&/g' | tr '\n' '|' | sed 's/|$//'))\$"
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
	# a bound on the whole run (a test takes ten seconds or so): a zdtm.py
	# that hangs costs its tests their verdicts, said so, not the boot
	limit=$((120 + 60 * $(grep -c . "$top/lists/$list")))
	# --fork-ct (test/zdtm/upstream/zdtm.py-fork-ct.patch): each test in a
	# fork of this zdtm.py, in zdtm_ct's namespaces, not in a new python
	# that imports yaml and pycriu again: that was 5 of a test's 10 s here
	# shellcheck disable=SC2086 # opts are zdtm.py options, one word each
	(cd "$tree" && GLIBC_TUNABLES=$tunables PYTHONUNBUFFERED=1 exec timeout -s KILL $limit \
		python3 zdtm.py run -T "$(zdtm_regex $top/lists/$list)" \
		--keep-going --fork-ct --criu-bin "$criu" $opts) > "$out" 2>&1 < /dev/null
	rc=$?
	[ $rc = 137 ] && echo "zdtm.py was killed after its time limit of $limit s" >> "$out"
	python3 $top/zdtm_results.py "$label" "$out" "$top/lists/$list" ||
		lab_fail "zdtm.$label" "zdtm_results.py could not read zdtm.py's output"
	lab_line INFO "zdtm.$label.run" "rc=$rc seconds=$(echo "$(lab_now) - $t0" | bc)"
	# zdtm.py's own closing lines, for whoever reads the serial log
	tail -n 3 "$out" | sed "s/^/zdtm.$label: /"
	criu_logs "$tree" "$label"
	rm -rf "$tree/dump"
done < "$plan"
