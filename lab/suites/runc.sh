# SPDX-License-Identifier: GPL-2.0
# runc (Debian 12's 1.1.5, in the guest through the overlay
# lab/overlays/runc.sh builds) checkpoints and restores a container whose init
# runs on a shadow stack (ctr_worker shstk wrss lock), with criu-cet and with
# stock CRIU 4.1.1 as its criu (runc --criu), under two seccomp profiles (one
# allows map_shadow_stack, an older one does not).  Then bad input: images of
# the other CRIU, a checkpoint that fails, one with --leave-running.
#
# runc and CRIU both pivot_root into the container's root, which the kernel
# refuses while the caller's root is the initramfs (rootfs): the suite runs
# in a tmpfs root (in_tmpfs_root, lib.sh).
RUNC=/lab/runc/runc
CTR_ROOT=/ctr
CTR_MODE="shstk wrss lock"

if [ -z "${RUNC_CHROOTED:-}" ]; then
	if [ ! -x $RUNC ]; then
		lab_skip runc.setup "runc is not in the guest (the suite needs run.py --overlay build/overlay-runc, from lab/overlays/runc.sh)"
		return 0
	fi
	mkdir -p /sys/fs/cgroup
	grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts || mount -t cgroup2 cgroup2 /sys/fs/cgroup ||
		{ lab_fail runc.setup "cannot mount cgroup2 on /sys/fs/cgroup"; return 0; }
	version=$($RUNC --version | sed -n 's/^runc version //p')
	controllers=$(tr ' ' , < /sys/fs/cgroup/cgroup.controllers)
	lab_pass runc.setup "cgroup2, suite in a tmpfs root: runc=$version controllers=$controllers"
	# what CRIU's own check asks of the kernel: `criu check` must be content;
	# `criu check --all` names what is still missing (none of it used here)
	out=$(/lab/criu-cet/criu check 2>&1 | tail -1)
	all=$(/lab/criu-cet/criu check --all 2>&1 | grep -E '^(Error|Warn)' | sed 's/^[A-Za-z]* *([^)]*): //' | tr '\n' ';')
	if [ "$out" = "Looks good." ]; then
		lab_pass runc.criu-check "criu check: $out criu check --all still misses: $all"
	else
		lab_fail runc.criu-check "criu check: $out; --all: $all"
	fi
	in_tmpfs_root $CTR_ROOT RUNC_CHROOTED runc || lab_fail runc.tmpfs-root "cannot make a tmpfs root at $CTR_ROOT"
	return 0
fi

# ---- helpers (inside the chroot) ----

# wait_long CMD...: up to ~60 s for CMD to succeed
wait_long() { WAIT_TENTHS=600 wait_for "$@"; }

# field NAME LINE: the value of NAME=... in a ctr_worker line
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# status_of PID FIELD: a /proc status field, blanks as commas, "-" if empty
status_of() {
	local v
	v=$(status_field "$1" "$2" ,)
	echo "${v:--}"
}

# host_pid ID: the container init's pid as the host sees it (runc state)
host_pid() { $RUNC state "$1" 2>/dev/null | sed -n 's/^[[:space:]]*"pid": *\([0-9]*\),*/\1/p'; }

# ctr_status ID: the container's status word (running, stopped, ...) or "none"
ctr_status() {
	local s
	s=$($RUNC state "$1" 2>/dev/null | sed -n 's/^[[:space:]]*"status": *"\([a-z]*\)".*/\1/p')
	echo "${s:-none}"
}

# bundle DIR PROFILE MODE: busybox root + ctr_worker, config from runc spec
bundle() {
	local args
	rm -rf "$1" && mkdir -p "$1/rootfs/bin" "$1/rootfs/proc" "$1/rootfs/sys" "$1/rootfs/dev" "$1/rootfs/tmp"
	cp /bin/busybox "$1/rootfs/bin/busybox" && ln -s busybox "$1/rootfs/bin/sh"
	cp /lab/bin/ctr_worker "$1/rootfs/ctr_worker"
	args=$(echo "$3" | sed 's/\([a-z][a-z]*\)/"\1"/g; s/" "/", "/g')
	sed "s/\"@MODE@\"/$args/" "/lab/runc/config-$2.json" > "$1/config.json"
}

# in_bg DIR NAME CMD...: CMD with its stdio on pipes (as a container runtime
# gives them; CRIU restores them through runc's inherit-fd), its exit status
# in DIR/NAME.rc once it ends; the container's output goes to DIR/ctr.log
in_bg() {
	local dir=$1 name=$2
	shift 2
	rm -f "$dir/$name.rc"
	( true | "$@"; echo $? > "$dir/$name.rc" ) 2>&1 | cat >> "$dir/ctr.log" &
	wait_long test -s "$dir/$name.rc" || echo 124 > "$dir/$name.rc"
	cat "$dir/$name.rc"
}

# runc_err DIR: runc's last error
runc_err() { grep -a 'level=error' "$1/runc.log" 2>/dev/null | tail -1 | sed 's/.*msg="//; s/"$//' | cut -c1-200; }

# snapshot ID DIR: "host=HPID nspid=... ssp=... features=... locked=... seccomp=... mss=... ss=... count=..."
# (ss: how many shadow-stack mappings the task has)
# from the task's own line and the host's /proc/HPID/status
snapshot() {
	local hp line
	hp=$(host_pid "$1")
	line=$(cat "$2/rootfs/count" 2>/dev/null)
	[ "${hp:-0}" != 0 ] && [ -n "$line" ] || { echo "none"; return; }
	echo "host=$hp nspid=$(status_of "$hp" NSpid) self=$(field pid "$line") ssp=$(field ssp "$line")" \
		"features=$(status_of "$hp" x86_Thread_features) locked=$(status_of "$hp" x86_Thread_features_locked)" \
		"self_features=$(field features "$line") self_locked=$(field locked "$line")" \
		"seccomp=$(status_of "$hp" Seccomp)/$(status_of "$hp" Seccomp_filters) mss=$(field mss "$line")" \
		"ss=$(ss_count "$hp") count=$(field count "$line")"
}

# counting ID DIR: the container's init is alive and its count moves on
counting() {
	local hp c1 c2
	hp=$(host_pid "$1")
	[ "${hp:-0}" != 0 ] && alive "$hp" || return 1
	c1=$(field count "$(cat "$2/rootfs/count")")
	sleep 0.5
	c2=$(field count "$(cat "$2/rootfs/count")")
	alive "$hp" && [ "${c2:-0}" -gt "${c1:-0}" ]
}

# same_cet A B: two snapshots agree on the CET state and on the pid namespace
same_cet() {
	local k
	for k in self ssp features locked self_features self_locked seccomp mss ss; do
		[ "$(field $k "$1")" = "$(field $k "$2")" ] || return 1
	done
}

# coherent SNAP: the host's view and the task's own agree; the pids differ
# (host pid vs namespace pid) and NSpid names both
coherent() {
	local hp ns self
	hp=$(field host "$1") ns=$(field nspid "$1") self=$(field self "$1")
	[ "$ns" = "$hp,$self" ] && [ "$hp" != "$self" ] &&
		[ "$(field features "$1")" = "$(field self_features "$1")" ] &&
		[ "$(field locked "$1")" = "$(field self_locked "$1")" ]
}

# start_ctr ID DIR PROFILE MODE: bundle + runc run -d; 0 when it counts
start_ctr() {
	bundle "$2" "$3" "$4"
	rm -f "$2/runc.log" "$2/ctr.log"
	[ "$(in_bg "$2" run $RUNC --log "$2/runc.log" run -d -b "$2" "$1")" = 0 ] &&
		wait_long test -s "$2/rootfs/count" && counting "$1" "$2"
}

# stop_ctr ID: the container and its state gone
stop_ctr() {
	$RUNC kill "$1" KILL 2>/dev/null
	sleep 0.2
	$RUNC delete -f "$1" 2>/dev/null
	return 0
}

# strays: ctr_worker processes no container owns
strays() { ps -o pid,args 2>/dev/null | grep '[c]tr_worker' | awk '{print $1}' | tr '\n' ' '; }

# checkpoint ID DIR CRIU [EXTRA...]: runc checkpoint into DIR/img, its status
checkpoint() {
	local id=$1 dir=$2 criu=$3
	shift 3
	rm -rf "$dir/img" "$dir/work" && mkdir -p "$dir/work"
	$RUNC --log "$dir/runc.log" --criu "$criu" checkpoint --image-path "$dir/img" --work-path "$dir/work" \
		"$@" "$id" > "$dir/checkpoint.out" 2>&1
}

# restore ID DIR CRIU [EXTRA...]: runc restore -d from DIR/img, its status
restore() {
	local id=$1 dir=$2 criu=$3 rc
	shift 3
	mkdir -p "$dir/work"
	rc=$(in_bg "$dir" restore $RUNC --log "$dir/runc.log" --criu "$criu" restore -d -b "$dir" --image-path "$dir/img" \
		--work-path "$dir/work" "$@" "$id")
	return "$rc"
}

# the log lines that say why a restore failed or what the task died of
restore_why() {
	local l
	l=$(grep -a -m1 -E 'Error|error' "$1/work/restore.log" 2>/dev/null | cut -c1-200)
	echo "${l:-$(runc_err "$1")}"
}

# dmesg_mark: where the kernel log is now; cp_fault_since MARK: the first
# control-protection fault reported after MARK (the task that died may have
# left runc's state already, so no pid to look for)
dmesg_mark() { dmesg | wc -l; }
cp_fault_since() {
	dmesg | tail -n +$(($1 + 1)) | grep -m1 'control protection' | sed 's/^\[[^]]*\] //' | cut -c1-160
}

# show_logs DIR LOG: the end of CRIU's LOG and of runc's log on the console
show_logs() {
	tail -15 "$1/work/$2" 2>/dev/null | cut -c1-200 | sed "s|^|  $2: |"
	tail -5 "$1/runc.log" 2>/dev/null | cut -c1-300 | sed "s|^|  runc.log: |"
	tail -5 "$1/ctr.log" 2>/dev/null | cut -c1-300 | sed "s|^|  ctr.log: |"
}

# ---- the cycle: run, checkpoint, restore, compare ----

# cycle WHO CRIU PROFILE [EXTRA...]: one row of the runc table.  WHO is cet
# or stock; EXTRA: options for both runc checkpoint and runc restore.
cycle() {
	local who=$1 criu=$2 prof=$3 id=ctr-$1-$3 dir=/tmp/runc/ctr-$1-$3 before after t0 t1 t2 why row mark
	local name=runc.$who.$prof
	shift 3
	if ! start_ctr "$id" "$dir" "$prof" "$CTR_MODE"; then
		lab_fail "$name.run" "runc run failed: $(runc_err "$dir")"
		stop_ctr "$id"
		return
	fi
	before=$(snapshot "$id" "$dir")
	if coherent "$before"; then
		lab_pass "$name.run" "$before"
	else
		lab_fail "$name.run" "host and task views differ: $before"
	fi
	t0=$(lab_now)
	if ! checkpoint "$id" "$dir" "$criu" "$@"; then
		why="$(runc_err "$dir") / $(grep -a -m1 Error "$dir/work/dump.log" | cut -c1-160)"
		lab_fail "$name.checkpoint" "runc checkpoint failed: $why"
		show_logs "$dir" dump.log
		lab_line INFO "runc.row.$who.$prof" "checkpoint=failed($(runc_err "$dir")) restore=- state=-"
		keeps_running "$name.kept-running" "$id" "$dir" "$before" "checkpoint failed"
		stop_ctr "$id"
		return
	fi
	t1=$(lab_now)
	if [ "$(ctr_status "$id")" != none ] || alive "$(field host "$before")"; then
		lab_fail "$name.checkpoint" "the container is still there after its checkpoint: $(ctr_status "$id")"
	else
		lab_pass "$name.checkpoint" "checkpointed in $(echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}') s guest, container gone"
	fi

	# bad input: the other CRIU's images (before the real restore: the
	# checkpoint stays as it is)
	[ $# = 0 ] && other_criu_restore "$who" "$id" "$dir" "$prof"

	t1=$(lab_now)
	mark=$(dmesg_mark)
	if ! restore "$id" "$dir" "$criu" "$@"; then
		why=$(restore_why "$dir")
		lab_fail "$name.restore" "runc restore failed: $why"
		show_logs "$dir" restore.log
		lab_line INFO "runc.row.$who.$prof" "checkpoint=ok restore=failed state=-"
		stop_ctr "$id"
		return
	fi
	t2=$(lab_now)
	sleep 0.5
	after=$(snapshot "$id" "$dir")
	if counting "$id" "$dir" && same_cet "$before" "$after" && coherent "$after"; then
		lab_pass "$name.restore" "restored in $(echo "$t1 $t2" | awk '{printf "%.2f", $2 - $1}') s guest"
		lab_pass "$name.state" "exactly its CET state: before [$before] after [$after] state=kept"
		row="checkpoint=ok restore=ok state=kept"
		[ "$who" = cet ] && [ $# = 0 ] && again "$name" "$id" "$dir" "$criu" "$before" &&
			protected "$name" "$id"
	else
		why=$(cp_fault_since "$mark")
		lab_pass "$name.restore" "runc restore reported success in $(echo "$t1 $t2" | awk '{printf "%.2f", $2 - $1}') s guest"
		lab_fail "$name.state" "after restore: ${why:-state differs} before [$before] after [${after}] status $(ctr_status "$id")"
		row="checkpoint=ok restore=ok state=lost(${why:-differs})"
	fi
	lab_line INFO "runc.row.$who.$prof" "$row"
	stop_ctr "$id"
}

# again NAME ID DIR CRIU BEFORE: a second checkpoint and restore of the
# restored container: the same state again, no shadow-stack mapping more
again() {
	local after
	if ! checkpoint "$2" "$3" "$4"; then
		lab_fail "$1.again" "second checkpoint failed: $(runc_err "$3")"
	elif ! restore "$2" "$3" "$4"; then
		lab_fail "$1.again" "second restore failed: $(restore_why "$3")"
	elif sleep 0.5 && after=$(snapshot "$2" "$3") && counting "$2" "$3" && same_cet "$5" "$after"; then
		lab_pass "$1.again" "second checkpoint and restore, the CET state and ss mappings as at first: [$after] state=kept"
		return 0
	else
		lab_fail "$1.again" "after a second cycle: [$after] (first [$5])"
	fi
	return 1
}

# protected NAME ID: the restored container's init still has its shadow
# stack enforced: a smashed return address (ctr_worker on SIGUSR1) kills it
# with a control-protection fault
protected() {
	local mark why
	mark=$(dmesg_mark)
	$RUNC kill "$2" USR1
	WAIT_TENTHS=100 wait_for ctr_stopped "$2"
	why=$(cp_fault_since "$mark")
	case $why in
	*"control protection"*) lab_pass "$1.protected" "a smashed return after restore: fault=control-protection why=$why" ;;
	*) lab_fail "$1.protected" "status $(ctr_status "$2") after SIGUSR1, no control-protection fault reported" ;;
	esac
}
ctr_stopped() { [ "$(ctr_status "$1")" = stopped ]; }

# other_criu_restore WHO ID DIR: the checkpoint WHO's criu made, restored by
# the other CRIU under another container id.  criu-cet restores a stock
# image of a shadow-stack task with what the image has (features, SSP) and
# every lock bit, and says so in its log.  Stock restoring criu-cet's
# image: what it does is reported (its table row).
other_criu_restore() {
	local who=$1 id=$2-x dir=$3 prof=$4 criu name rc st why row mark said
	if [ "$who" = stock ]; then criu=/lab/criu-cet/criu name=runc.bad.stock-image-by-cet.$prof
	else criu=/lab/criu-stock/criu name=runc.bad.cet-image-by-stock.$prof; fi
	# the checkpoint and the files it names as they were: a container the
	# other CRIU restored runs and writes its count file, whose size CRIU
	# checks when this checkpoint is restored again
	cp -a "$dir/img" "$dir/img.keep"
	cp -p "$dir/rootfs/count" "$dir/count.keep"
	mark=$(dmesg_mark)
	restore "$id" "$dir" "$criu"
	rc=$?
	st=$(ctr_status "$id")
	why=$(restore_why "$dir")
	if [ "$who" = stock ]; then
		said=$(grep -a -m1 -o "[0-9]* thread(s) on shadow stacks dumped by a CRIU without criu-cet.*" \
			"$dir/work/restore.log" | cut -c1-200)
		if [ $rc = 0 ] && counting "$id" "$dir" && [ -n "$said" ]; then
			lab_pass "$name" "restored, running: [$(snapshot "$id" "$dir")] state=running why=$said"
		else
			lab_fail "$name" "rc $rc, container '$st': $why; log: ${said:-no word of the stock image}"
		fi
	else
		sleep 0.5
		if [ $rc = 0 ] && counting "$id" "$dir"; then
			row="restore=ok state=running $(snapshot "$id" "$dir")"
		elif [ $rc = 0 ]; then
			row="restore=ok state=lost($(cp_fault_since "$mark"))"
		else
			row="restore=failed($why) state=$(ctr_status "$id")"
		fi
		lab_line INFO "runc.row.stock-on-cet-image.$prof" "$row"
		lab_pass "$name" "stock 4.1.1 on criu-cet's image: $row"
	fi
	stop_ctr "$id"
	for p in $(strays); do kill -9 "$p"; done
	rm -rf "$dir/img" && mv "$dir/img.keep" "$dir/img"
	cp -p "$dir/count.keep" "$dir/rootfs/count" && rm -f "$dir/count.keep"
}

# ---- a checkpoint that fails, one that leaves the container running ----

# keeps_running NAME ID DIR BEFORE WHAT: after WHAT the container runs on
# with the CET state it had
keeps_running() {
	local after
	sleep 0.3
	after=$(snapshot "$2" "$3")
	if [ "$(ctr_status "$2")" = running ] && counting "$2" "$3" && same_cet "$4" "$after" &&
		[ "$(field host "$4")" = "$(field host "$after")" ]; then
		lab_pass "$1" "the container runs on with its CET state [$after] after: $5 outcome=ran-on"
	else
		lab_fail "$1" "$5; then: status $(ctr_status "$2"), [$after] (before [$4])"
	fi
}

bad_checkpoints() {
	local id=ctr-fail dir=/tmp/runc/ctr-fail before why
	if ! start_ctr "$id" "$dir" new "$CTR_MODE"; then
		lab_fail runc.bad.dump-fail "runc run failed: $(runc_err "$dir")"
		stop_ctr "$id"
		return
	fi
	before=$(snapshot "$id" "$dir")
	# the images go to a 16 KiB tmpfs: CRIU runs out of space mid-dump
	mkdir -p "$dir/full" && mount -t tmpfs -o size=16k full "$dir/full"
	if $RUNC --log "$dir/runc.log" --criu /lab/criu-cet/criu checkpoint --image-path "$dir/full/img" \
		--work-path "$dir/work" "$id" > "$dir/checkpoint.out" 2>&1; then
		lab_fail runc.bad.dump-fail "the checkpoint into 16 KiB succeeded"
	else
		why=$(grep -a -m1 -E 'No space|Error' "$dir/work/dump.log" | sed 's/^([^)]*) //' | cut -c1-120)
		keeps_running runc.bad.dump-fail "$id" "$dir" "$before" "checkpoint failed as meant ($why) dump=failed"
	fi
	umount "$dir/full"
	before=$(snapshot "$id" "$dir")
	if checkpoint "$id" "$dir" /lab/criu-cet/criu --leave-running; then
		keeps_running runc.cet.leave-running "$id" "$dir" "$before" "checkpoint --leave-running done"
	else
		lab_fail runc.cet.leave-running "runc checkpoint --leave-running failed: $(runc_err "$dir")"
	fi
	stop_ctr "$id"
}

# no_pivot: runc run --no-pivot and restore --no-pivot (what runc offers for
# a ramdisk root: the container's root moved over the namespace's / and
# chrooted, no pivot_root).  Should CRIU refuse the checkpoint, the
# container must run on with its CET state.
no_pivot() {
	local id=ctr-nopivot dir=/tmp/runc/ctr-nopivot before why
	bundle "$dir" new "$CTR_MODE"
	if [ "$(in_bg "$dir" run $RUNC --log "$dir/runc.log" run --no-pivot -d -b "$dir" "$id")" != 0 ] ||
		! wait_long test -s "$dir/rootfs/count" || ! counting "$id" "$dir"; then
		lab_fail runc.cet.no-pivot "runc run --no-pivot failed: $(runc_err "$dir")"
		stop_ctr "$id"
		return
	fi
	before=$(snapshot "$id" "$dir")
	if checkpoint "$id" "$dir" /lab/criu-cet/criu; then
		if restore "$id" "$dir" /lab/criu-cet/criu --no-pivot && sleep 0.5 && counting "$id" "$dir" &&
			same_cet "$before" "$(snapshot "$id" "$dir")" && coherent "$(snapshot "$id" "$dir")"; then
			lab_line INFO runc.row.cet.no-pivot "checkpoint=ok restore=ok state=kept"
			lab_pass runc.cet.no-pivot "run --no-pivot, checkpoint, restore --no-pivot: exactly its CET state [$(snapshot "$id" "$dir")] outcome=kept"
		else
			lab_line INFO runc.row.cet.no-pivot "checkpoint=ok restore=failed"
			lab_fail runc.cet.no-pivot "restore --no-pivot: $(restore_why "$dir") [$(snapshot "$id" "$dir")]"
			show_logs "$dir" restore.log
		fi
	else
		why=$(grep -a -m1 Error "$dir/work/dump.log" | sed 's/^([^)]*) //' | cut -c1-140)
		lab_line INFO runc.row.cet.no-pivot "checkpoint=refused($why)"
		keeps_running runc.cet.no-pivot "$id" "$dir" "$before" "checkpoint refused ($why)"
	fi
	stop_ctr "$id"
}

mkdir -p /tmp/runc
cycle cet /lab/criu-cet/criu new
cycle cet /lab/criu-cet/criu old
cycle stock /lab/criu-stock/criu new
cycle stock /lab/criu-stock/criu old
# a container with its own (empty) network namespace: runc's --empty-ns
# network, and CRIU's network lock from the configuration file runc hands it
# (network-lock nftables: the lab has no iptables-restore, CRIU's default)
cycle cet /lab/criu-cet/criu netns --empty-ns network
cycle stock /lab/criu-stock/criu netns --empty-ns network
bad_checkpoints
no_pivot
for p in $(strays); do
	lab_fail runc.strays "ctr_worker $p left running"
	kill -9 "$p"
done
