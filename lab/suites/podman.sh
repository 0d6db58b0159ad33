# SPDX-License-Identifier: GPL-2.0
# podman (Debian 12's 4.3.1, conmon 2.1.6, runc 1.1.5) checkpoints and
# restores a container of valkey on the CET glibc (every thread on a
# shadow stack glibc turned on and locked: GLIBC_TUNABLES in the image's
# environment), on one machine: `podman container checkpoint --export`,
# `podman rm`, `podman container restore --import`.  The restored valkey
# must answer with the same data digest, every thread (by its pid in the
# container) with the features and locks it had, the same count of
# shadow-stack mappings, and a smashed return address must still be a
# control-protection fault.  criu-cet is judged; stock CRIU 4.1.1 on the same
# steps is reported (INFO podman.stock.*).  What each podman command costs
# in guest seconds is reported too (INFO podman.cost).
#
# Overlays: build/overlay-migrate (valkey, CET glibc, iproute2, iptables),
# build/overlay-runc (runc, GNU tar), build/overlay-podman
# (lab/overlays/podman.sh):
#   run.py --suites podman --overlay ... (the three) --megs 1024
#
# runc and CRIU pivot_root into the container's root, which the kernel
# refuses while the caller's root is the initramfs; c/storage's layer
# extraction also wants / to be a mount point: the suite runs in a tmpfs
# root (in_tmpfs_root, lib.sh), like lab/suites/runc.sh.
PODMAN=/lab/podman/podman
IP=/usr/sbin/ip		# iproute2: busybox's ip applet has no netns
GNUTAR=/lab/bin/tar	# busybox sh runs its tar applet for a plain "tar"
POD=vk
POD_IP=10.76.1.10
POD_PORT=6379
PM_KEYS=${PM_KEYS:-500}
PM_ROWS=${PM_ROWS:-local}
PM_FLAVOURS=${PM_FLAVOURS:-cet stock}
# deadline of one podman command, guest seconds: stock CRIU's restore of a
# shadow-stack task may never end (lab/suites/migrate-net.sh)
PM_DEADLINE=${PM_DEADLINE:-600}
IMAGE=localhost/valkey-cet:8.1.1
W=/tmp/pod

if [ -z "${PODMAN_CHROOTED:-}" ]; then
	for f in $PODMAN /lab/runc/runc /lab/valkey/valkey-server /lab/valkey/lib.sh $IP $GNUTAR; do
		[ -x $f ] || [ -f $f ] && continue
		lab_skip podman.setup "$f is not in the guest (overlays: migrate, runc, podman; lab/overlays/podman.sh)"
		return 0
	done
	# before any podman command: c/common decides cgroup v1 or v2 by a
	# statfs of /sys/fs/cgroup, once per process
	mkdir -p /sys/fs/cgroup
	grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts || mount -t cgroup2 cgroup2 /sys/fs/cgroup ||
		{ lab_fail podman.setup "cannot mount cgroup2 on /sys/fs/cgroup"; return 0; }
	in_tmpfs_root /ctr PODMAN_CHROOTED podman || lab_fail podman.tmpfs-root "cannot make a tmpfs root at /ctr"
	return 0
fi

# ---- inside the tmpfs root ----
. /lab/valkey/lib.sh
# /usr/sbin before /sbin: CRIU's iptables-restore and iproute2's ip, not
# busybox's; /lab/bin for GNU tar (CRIU saves the container's tmpfs /dev)
BASEPATH=/lab/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/
# the tmpfs root has no /var: graphroot, image_copy_tmp_dir (podman load)
mkdir -p /var/tmp /var/lib/containers $W

# pm FLAVOUR ARGS...: podman with FLAVOUR's CRIU (cet or stock), under the
# deadline: the criu podman checks itself (go-criu runs "criu" from PATH)
# and the one runc runs (runc's global --criu, which podman hands runc
# directly for a checkpoint and through conmon's --runtime-arg for a
# restore); podman's PATH reaches runc and so CRIU
pm() {
	local fl=$1
	shift
	PATH=/lab/podman/$fl:$BASEPATH timeout "$PM_DEADLINE" $PODMAN --runtime-flag "criu=/lab/criu-$fl/criu" "$@"
}

# COST: "what=seconds" of every podman command, in order
COST=
# pmt WHAT FLAVOUR ARGS...: pm, its output in $W/WHAT.out, its guest
# seconds in $W/WHAT.secs and COST; its status
pmt() {
	local what=$1 t0 rc
	shift
	t0=$(lab_now)
	pm "$@" > "$W/$what.out" 2>&1
	rc=$?
	secs "$t0" "$(lab_now)" > "$W/$what.secs"
	COST="$COST $what=$(cat "$W/$what.secs")"
	return $rc
}
took() { cat "$W/$1.secs"; }
# why WHAT: the last line of a podman command's output that is not JSON
why() { grep -v '^ *[]{}["]' "$W/$1.out" | tail -1 | cut -c1-200; }

# valkey at the pod's address: valkey-lib.sh's helpers take a folder (a
# unix socket's); here it only holds the digest's keys ($D.get)
vcli() {
	shift
	/lab/valkey/valkey-cli -h $POD_IP -p $POD_PORT "$@"
}
D=$W/vk

# pod_up / pod_down: the container's network namespace, one veth to this
# machine; the container joins it (--network ns:/run/netns/vk), so podman
# runs no network plugin and the namespace outlives the container
pod_up() {
	$IP netns add $POD &&
		$IP link add vk0 type veth peer name eth0 netns $POD &&
		$IP -n $POD link set lo up && $IP -n $POD link set eth0 up &&
		$IP -n $POD addr add $POD_IP/24 dev eth0 &&
		$IP addr add ${POD_IP%.*}.1/24 dev vk0 && $IP link set vk0 up
}
pod_down() { $IP netns del $POD 2>/dev/null; }

# image_archive OUT: a docker-archive of valkey on the CET glibc, byte for
# byte the same on every machine (GNU tar, fixed order, owners and times),
# so that its image ID, the sha256 of its config (printed), is too:
# restore --import finds the container's image by that ID
image_archive() {
	local out=$1 w lsum csum
	w=$(mktemp -d) || return 1
	mkdir -p "$w/root/lab/valkey" "$w/root/opt/cet-glibc/lib" "$w/root/data" "$w/root/tmp" "$w/root/etc" &&
		cp -p /opt/cet-glibc/lib/* "$w/root/opt/cet-glibc/lib/" &&
		cp -p /lab/valkey/valkey-server /lab/valkey/valkey-cli /lab/valkey/vk_cetsmash.so "$w/root/lab/valkey/" &&
		echo 'root:x:0:0:root:/root:/bin/sh' > "$w/root/etc/passwd" &&
		echo 'root:x:0:' > "$w/root/etc/group" &&
		chmod 0644 "$w/root/etc/passwd" "$w/root/etc/group" &&
		find "$w/root" -type d -exec chmod 0755 {} + && chmod 1777 "$w/root/tmp" || { rm -rf "$w"; return 1; }
	$GNUTAR --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
		-C "$w/root" -cf "$w/layer.tar" . || { rm -rf "$w"; return 1; }
	lsum=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
	mkdir "$w/arch" "$w/arch/$lsum" && mv "$w/layer.tar" "$w/arch/$lsum/layer.tar"
	printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Env":["PATH=/lab/valkey:/usr/bin:/bin","GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK"],"Entrypoint":["/lab/valkey/valkey-server"],"WorkingDir":"/data"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"criu-cet lab: valkey 8.1.1 on glibc 2.41 --enable-cet"}]}' \
		"$lsum" > "$w/cfg.json"
	csum=$(sha256sum "$w/cfg.json" | cut -d' ' -f1)
	mv "$w/cfg.json" "$w/arch/$csum.json"
	printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$csum" "$IMAGE" "$lsum" > "$w/arch/manifest.json"
	$GNUTAR --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
		-C "$w/arch" -cf "$out" . || { rm -rf "$w"; return 1; }
	rm -rf "$w"
	echo "$csum"
}

# vk_pid: valkey-server's pid (the container's init; one container at a
# time), without a podman command
vk_pid() { pidof valkey-server | cut -d' ' -f1; }
# userdata: the container's bundle and CRIU work folder (dump.log,
# restore.log, ctr.log, checkpoint/), found without a podman command
userdata() { ls -d /var/lib/containers/storage/vfs-containers/*/userdata 2>/dev/null | head -1; }

# ctr_cet PID: "nspid:features/locked" for every thread, by its pid in the
# container (which a restore keeps; the host's changes), sorted, then the
# shadow-stack mapping count ("ss=N")
ctr_cet() {
	local t f l n
	for t in /proc/$1/task/*; do
		f=$(status_list "$t" x86_Thread_features)
		l=$(status_list "$t" x86_Thread_features_locked)
		n=$(sed -n 's/^NSpid:.*[[:space:]]\([0-9]*\)$/\1/p' "$t/status")
		echo "$n:${f:--}/${l:--}"
	done | sort -n | tr '\n' '+'
	echo "ss=$(ss_count "$1")"
}

# verdict PASS|FAIL NAME DETAIL: a result line; for stock CRIU (PM_INFO) an
# INFO line, reported, not judged
verdict() {
	if [ -n "${PM_INFO:-}" ]; then lab_line INFO "$2" "$1: $3"
	elif [ "$1" = PASS ]; then lab_pass "$2" "$3"; else lab_fail "$2" "$3"; fi
}

# smashed LOG: how the container's valkey ended after CETSMASH.SMASH, from
# its log (valkey handles SIGSEGV itself and logs signal and si_code, 10
# being SEGV_CPERR; stdout is conmon's k8s-file log)
smashed() {
	local pid=$1 log=$2 why
	vcli $D MODULE LOAD /lab/valkey/vk_cetsmash.so > /dev/null 2>&1
	vcli $D CETSMASH.SMASH > /dev/null 2>&1
	WAIT_TENTHS=300 wait_for sh -c "! grep -q '^State:.*[RS]' /proc/$pid/status 2>/dev/null"
	why=$(grep -a -m1 'crashed by signal' "$log" | sed 's/^[^#]*# //')
	case "$why" in
	*"signal: 11, si_code: 10") echo "cp-fault" ;;
	?*) echo "died:$(echo "$why" | tr ' ' '_')" ;;
	*) if alive "$pid"; then echo alive; else echo "died:no-crash-log"; fi ;;
	esac
}

# local_row FLAVOUR: run, fill, checkpoint --export, rm, restore --import,
# compare, smash; all on this machine
local_row() {
	local fl=$1 n=podman.$1.local pid digest0 cet0 ud locks pid2 got w stats
	rm -f $D.get $W/ckpt.tar
	if ! pmt run-$fl "$fl" run -d --name vk --pull never --network ns:/run/netns/$POD ${PM_RUN_OPTS:-} $IMAGE \
		--bind $POD_IP --port $POD_PORT --protected-mode no --save '' --appendonly no \
		--io-threads 2 --enable-module-command yes --enable-debug-command yes \
		--crash-memcheck-enabled no || ! WAIT_TENTHS=600 wait_for vk_answers $D; then
		verdict FAIL $n.run "podman run: $(why run-$fl) secs=$(took run-$fl)"
		return 1
	fi
	pid=$(vk_pid)
	vk_fill $D "$PM_KEYS" > /dev/null
	digest0=$(vk_digest $D "$PM_KEYS")
	cet0=$(ctr_cet "$pid")
	if all_locked "$(echo "$cet0" | tr '+' ' ')" && [ "$(nthreads "$(echo "$cet0" | tr '+' ' ')")" -ge 5 ]; then
		verdict PASS $n.run "pid $pid, $PM_KEYS keys, digest=$digest0 cet=$cet0 secs=$(took run-$fl)"
	else
		verdict FAIL $n.run "not every thread on a locked shadow stack: cet=$cet0 secs=$(took run-$fl)"
	fi
	# --keep: dump.log and stats-dump stay in the container's folder
	pmt checkpoint-$fl "$fl" container checkpoint --export $W/ckpt.tar --compress none --keep --print-stats vk
	ud=$(userdata)
	if [ ! -s $W/ckpt.tar ] || alive "$pid"; then
		verdict FAIL $n.checkpoint "$(why checkpoint-$fl); $(last_error "$ud/dump.log" | cut -c1-160) secs=$(took checkpoint-$fl)"
		return 1
	fi
	locks=$(full_locks "$ud/dump.log")
	stats=$(tr -d ' \n' < $W/checkpoint-$fl.out)
	verdict PASS $n.checkpoint "tar_bytes=$(wc -c < $W/ckpt.tar) full_locks=$locks \
frozen_us=$(echo "$stats" | sed -n 's/.*"frozen_time":\([0-9]*\).*/\1/p') secs=$(took checkpoint-$fl)"
	cp "$ud/dump.log" $W/dump-$fl.log 2>/dev/null
	if ! pmt rm-$fl "$fl" rm -f vk; then
		verdict FAIL $n.rm "$(why rm-$fl) secs=$(took rm-$fl)"
		return 1
	fi
	pmt restore-$fl "$fl" container restore --import $W/ckpt.tar --keep --print-stats
	ud=$(userdata)
	cp "$ud/restore.log" $W/restore-$fl.log 2>/dev/null
	pid2=$(vk_pid)
	if [ -z "$pid2" ] || ! WAIT_TENTHS=300 wait_for vk_answers $D; then
		verdict FAIL $n.restore "$(why restore-$fl); $(last_error "$ud/restore.log" | cut -c1-160) secs=$(took restore-$fl)"
		return 1
	fi
	verdict PASS $n.restore "pid $pid -> $pid2 answers secs=$(took restore-$fl)"
	got=$(vk_digest $D "$PM_KEYS")
	w=$(vcli $D SET restored yes && vcli $D GET restored && vcli $D DEL restored)
	w=$(echo $w | tr ' ' '+')
	if [ "$got" = "$digest0" ] && [ "$w" = "OK+yes+1" ]; then
		verdict PASS $n.data "digest=$got write=$w"
	else
		verdict FAIL $n.data "digest=$got before=$digest0 write=$w"
	fi
	got=$(ctr_cet "$pid2")
	if [ "$got" = "$cet0" ]; then
		verdict PASS $n.cet "cet=$got ss=${got##*ss=}"
	else
		verdict FAIL $n.cet "cet=$got before=$cet0 ss=${got##*ss=}"
	fi
	got=$(smashed "$pid2" "$ud/ctr.log")
	if [ "$got" = cp-fault ]; then
		verdict PASS $n.smash "smash=$got"
	else
		verdict FAIL $n.smash "smash=$got"
	fi
}

# ---- setup: the image, loaded; the network namespace ----
if ! pod_up; then
	lab_fail podman.setup "cannot make the network namespace $POD"
	return 0
fi
t0=$(lab_now)
image_id=$(image_archive $W/valkey-cet.tar) || { lab_fail podman.image "cannot build the image archive"; return 0; }
lab_line INFO podman.image "archive of $(wc -c < $W/valkey-cet.tar) B in $(secs "$t0" "$(lab_now)") s: image $image_id"
pmt version cet --version
if ! pmt info cet info --format '{{.Host.CgroupsVersion}} {{.Host.CgroupManager}} {{.Store.GraphDriverName}} {{.Host.OCIRuntime.Path}} {{.Host.Conmon.Path}}'; then
	lab_fail podman.setup "podman info: $(why info) secs=$(took info)"
	return 0
fi
lab_pass podman.setup "$(cat $W/version.out): $(cat $W/info.out) secs=$(took info)"
if ! pmt load cet load -i $W/valkey-cet.tar; then
	lab_fail podman.load "$(why load) secs=$(took load)"
	return 0
fi
lab_pass podman.load "$(why load) image=$image_id secs=$(took load)"
rm -f $W/valkey-cet.tar

for row in $PM_ROWS; do
	for fl in $PM_FLAVOURS; do
		[ "$fl" = cet ] && info= || info=1
		PM_INFO=$info ${row}_row "$fl"
		PM_INFO=$info pm "$fl" rm -f vk > /dev/null 2>&1
		pid=$(vk_pid)
		[ -z "$pid" ] || kill -9 "$pid"
	done
done
lab_line INFO podman.cost "guest seconds per podman command:$COST"
pod_down
