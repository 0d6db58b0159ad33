# SPDX-License-Identifier: GPL-2.0
# Helpers for the lab's guest suites (sourced by busybox sh).
# The host parses lines "@@LAB <KIND> <name> <detail>" from the serial log.

lab_line() { echo "@@LAB $*"; }
lab_pass() { lab_line PASS "$1" "$2"; }
lab_fail() { lab_line FAIL "$1" "$2"; }
lab_skip() { lab_line SKIP "$1" "$2"; }

# guest time in seconds (monotonic; repeatable under clock: sync=none)
lab_now() { cut -d' ' -f1 /proc/uptime; }

# secs T0 T1: T1 - T0 in seconds, 2 decimals
secs() { awk "BEGIN{printf \"%.2f\", $2 - $1}"; }

# alive PID: the task exists and is not a zombie
alive() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# wait_for CMD...: up to ~10 s (WAIT_TENTHS tenths) for CMD to succeed
wait_for() {
	local i=0
	while ! "$@"; do
		i=$((i + 1))
		[ $i -gt "${WAIT_TENTHS:-100}" ] && return 1
		sleep 0.1
	done
}

# last_error LOG: the first error line of a CRIU log, for a one-line detail
last_error() {
	grep -m1 -E 'Error|error|fail' "$1" 2>/dev/null | cut -c1-160
}

# cp_fault_of PID: the kernel's control-protection report for PID, if any
cp_fault_of() {
	dmesg | grep -m1 "\[$1\] control protection" | sed 's/^\[[^]]*\] //' | cut -c1-160
}

# status_field PID FIELD [SEP]: a field of /proc/PID/status without its
# name, inner blanks as SEP (default one blank), empty when there is none
status_field() {
	sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" 2>/dev/null |
		sed "s/[[:space:]]*\$//; s/[[:space:]][[:space:]]*/${3:- }/g"
}

# count_of FILE: the counter value counter(1) last wrote
count_of() { cut -d' ' -f1 "$1" 2>/dev/null; }

# service_count FILE: the count demo_service last wrote ("count=N ...")
service_count() { sed -n 's/^count=\([0-9]*\).*/\1/p' "$1" 2>/dev/null; }

# smash_service PID FILE: demo_service overwrites one of its return
# addresses (SIGUSR2), the attack shadow stacks stop; its status after
smash_service() {
	kill -USR2 "$1"
	wait_for grep -q '^stopped' "$2"
	cat "$2"
}

# ss_count PID: the shadow-stack mappings of PID (smaps' "ss" flag)
ss_count() { grep -c '^VmFlags:.* ss' "/proc/$1/smaps" 2>/dev/null; }

# counter_cycle NAME CRIU [shstk]: start counter, dump, restore, check it counts on
counter_cycle() {
	local name=$1 criu=$2 mode=$3 dir=/tmp/$1 pid c0 c1 c2 why
	rm -rf "$dir" && mkdir -p "$dir/img"
	setsid counter "$dir/count" $mode > "$dir/out" 2>&1 &
	pid=$!
	if ! wait_for test -s "$dir/count"; then
		lab_fail "$name" "counter did not start"; return
	fi
	c0=$(count_of "$dir/count")
	if ! "$criu" dump -t "$pid" -D "$dir/img" -o dump.log -v4; then
		lab_fail "$name" "dump failed: $(last_error "$dir/img/dump.log")"
		kill -9 "$pid"; wait "$pid"; return
	fi
	wait "$pid" 2>/dev/null	# reap it: restore needs the pid back
	if ! "$criu" restore -D "$dir/img" -d -o restore.log -v4; then
		lab_fail "$name" "restore failed: $(last_error "$dir/img/restore.log")"
		grep -a "cet:" "$dir/img/restore.log" | sed 's/^/  restore.log: /' | tail -20
		return
	fi
	c1=$(count_of "$dir/count")
	sleep 1
	c2=$(count_of "$dir/count")
	if alive "$pid" && [ "$c2" -gt "$c1" ]; then
		lab_pass "$name" "pid $pid counting on after restore ($(cut -d' ' -f2- "$dir/count")) outcome=counting dumped_at=$c0 restored_at=$c1 count=$c2"
		kill -9 "$pid"
	else
		why=$(cp_fault_of "$pid")
		lab_fail "$name" "restore reported success, then the task died (count stuck at $c2): ${why:-no kernel report}"
	fi
}

# death_cases CRIU SUFFIX: criu dies during a dump of each death test
# (suites criu-death and criu-death-stock).  The kill points are lines of
# criu's own log, in dump order: the parasite is in (daemon mode), the
# parasite sends the pages, the parasite is gone (memory map; the dumps run
# with --leave-running, so criu never kills the task itself).  Not later:
# the rest of a dump is shorter than the runner takes to see a log line.
# Not near the parasite's cure or the threads' dump: there compel
# briefly runs injected code that stops on int3, and any CRIU (stock too)
# that dies then leaves a task to die of SIGTRAP.
death_cases() {
	local name spec
	while read -r name spec; do
		zdtm_cet_run --flavour "death-$name$2" --mode criu-death --death "$spec" --criu "$1" \
			--dir /lab/zdtm/cet --only recursion,threads,wrss,wrss_off,locked,mixed_threads
	done <<-CASES
	fault1 fault=1
	fault5 fault=5
	daemon kill-at=has been switched to daemon mode
	pages kill-at=Dumping pages (type
	mm kill-at=Dumping mm (pid
	CASES
}

# die_at_script FILE ACTION: a CRIU action script (--action-script) that
# kills its criu (the script's parent) at ACTION (post-restore, ...)
die_at_script() {
	printf '#!/bin/sh\n[ "$CRTOOLS_SCRIPT_ACTION" = %s ] && kill -9 $PPID\nexit 0\n' "$2" > "$1"
	chmod +x "$1"
}

# restore_death_cases CRIU SUFFIX: criu dies during a restore (suites
# criu-death and criu-death-stock), killed by its own action script (its
# parent is criu) at post-restore, every task restored and waiting for
# criu's last stages, and at pre-resume, the restore complete and the tasks
# not yet let go.  Before the end nothing restored may stay behind: a task
# left waiting for a stage that never comes is a half-restored task nobody
# sees.  After it, the tasks run on.  The tree: busybox sh and two counters,
# on shadow stacks unless MODE (third argument) is "plain": stock 4.1.1
# loses the shadow stacks of any restore, so its comparison runs plain.
restore_death_cases() {
	local point
	for point in post-restore pre-resume; do
		restore_death "restore-death.$point$2" "$1" $point "${3:-shstk}"
	done
}

# restore_death NAME CRIU POINT MODE: one case; PASS when the outcome is the
# one POINT calls for (gone before the end, ran-on after), with fields
# outcome= (gone, ran-on, stuck) and left= (tasks of the tree alive)
restore_death() {
	local name=$1 criu=$2 point=$3 mode=$4 dir=/tmp/$1 pid pids p left=0 c0 outcome want=gone
	[ "$mode" = plain ] && mode=
	[ "$point" = pre-resume ] && want=ran-on
	rm -rf "$dir" && mkdir -p "$dir/img"
	setsid sh -c "counter $dir/c1 $mode & counter $dir/c2 $mode & wait" > /dev/null 2>&1 &
	pid=$!
	if ! wait_for test -s "$dir/c1" || ! wait_for test -s "$dir/c2"; then
		lab_fail "$name" "the counters did not start"; kill -9 $pid; return
	fi
	pids="$pid $(cat /proc/$pid/task/$pid/children)"
	if ! "$criu" dump -t $pid -D "$dir/img" -o dump.log -v4; then
		lab_fail "$name" "dump failed: $(last_error "$dir/img/dump.log")"; kill -9 $pids; return
	fi
	wait $pid 2>/dev/null
	die_at_script /tmp/die-at.sh $point
	if "$criu" restore -D "$dir/img" -d -o restore.log -v4 --action-script /tmp/die-at.sh; then
		lab_fail "$name" "criu restore ended well: its action script was to kill it at $point"
		kill -9 $pids; return
	fi
	sleep 1
	for p in $pids; do alive $p && left=$((left + 1)); done
	c0=$(count_of "$dir/c1")
	sleep 1
	if [ $left = 0 ]; then
		outcome=gone
	elif [ "$(count_of "$dir/c1")" -gt "$c0" ]; then
		outcome=ran-on
	else
		outcome=stuck
	fi
	if [ $outcome = $want ]; then
		lab_pass "$name" "criu killed at $point ${mode:-plain} outcome=$outcome left=$left"
	else
		lab_fail "$name" "criu killed at $point ${mode:-plain}: $left of the tree's 3 tasks $([ $outcome = stuck ] && echo "left asleep forever" || echo "alive") outcome=$outcome left=$left"
	fi
	kill -9 $pids 2>/dev/null
}

# in_tmpfs_root ROOT FLAG SUITE: run SUITE again (FLAG=1 in its environment)
# in a mount namespace of its own whose root is a tmpfs at ROOT moved over
# rootfs, switch_root style, with the guest's own folders bound in: the
# layout of a system booted from a disk.  pivot_root, which runc, CRIU and
# zdtm.py's ns flavour use, is refused while the caller's root is the
# initramfs itself.  (A plain chroot into a tmpfs is not enough: CRIU then
# finds a container's root at ROOT of its mount namespace, not at /.)
in_tmpfs_root() {
	local root=$1 flag=$2 suite=$3 d
	mkdir -p "$root" && mount -t tmpfs -o mode=0755 tmpfs-root "$root" || return 1
	for d in bin sbin usr lib lib64 lab etc opt; do
		[ -d /$d ] || continue
		mkdir -p "$root/$d" && mount -o bind /$d "$root/$d"
	done
	for d in proc sys dev tmp run; do
		mkdir -p "$root/$d" && mount -o rbind /$d "$root/$d"
	done
	env "$flag=1" unshare -m /bin/sh -c \
		"cd $root && mount --move . / && exec chroot . /bin/sh -c '. /lab/lib.sh; . /lab/suites/$suite.sh'"
}
