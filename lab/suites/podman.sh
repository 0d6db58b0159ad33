# SPDX-License-Identifier: GPL-2.0
# podman (Debian 12's 4.3.1, conmon 2.1.6, runc 1.1.5) checkpoints and
# restores a container of valkey on the CET glibc (every thread on a
# shadow stack glibc turned on and locked: GLIBC_TUNABLES in the image's
# environment): `podman container checkpoint --export`, then `podman
# container restore --import`.  Rows (pm.rows= on the command line):
#   local        checkpoint, podman rm, restore, on this machine
#   local-tcp    the same with --tcp-established, a client on one
#                connection all along (steady_client)
#   local-pre    --pre-checkpoint --export pre.tar, keys rewritten, then
#                --with-previous; restore --import-previous pre.tar
#   migrate*     the same three from machine A to machine B (run.py
#                --peer-suites podman): A checkpoints and sends the tars,
#                B restores; the pod's address moves with it
# The restored valkey must answer with the same data digest, every thread
# (by its pid in the container) with the features and locks it had, the
# same count of shadow-stack mappings, and a smashed return address must
# still be a control-protection fault.  criu-cet is judged; stock CRIU
# 4.1.1 on the same steps is reported (INFO podman.stock.*).  What each
# podman command costs in guest seconds is reported (INFO podman.cost).
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

# pmt WHAT FLAVOUR ARGS...: pm, its output in $W/WHAT.out, its guest
# seconds in $W/WHAT.secs and, as "WHAT=SECONDS", in $W/cost (every podman
# command's, in order; a file: rows run some in subshells); its status
pmt() {
	local what=$1 t0 rc
	shift
	t0=$(lab_now)
	pm "$@" > "$W/$what.out" 2>&1
	rc=$?
	secs "$t0" "$(lab_now)" > "$W/$what.secs"
	echo "$what=$(cat "$W/$what.secs")" >> $W/cost
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

# pod_up / pod_down (peer.sh, sourced below): the container's network
# namespace, as migrate-net.sh's pod has it (veth, the pod's /32 routed to
# this machine); the container joins it (--network ns:/run/netns/vk), so
# podman runs no network plugin and the namespace outlives the container.
# pod_new: a fresh one, whatever a row left
pod_new() {
	pod_down $POD
	pod_up $POD $POD_IP
}

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

# stat_of FILE KEY: a number from podman's --print-stats JSON in FILE
stat_of() { tr -d ' \n' < "$1" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }
# criu_of LOG: the CRIU version a dump or restore log names
criu_of() { sed -n 's/.*Version: \([^ ]*\).*/\1/p' "$1" 2>/dev/null | head -1; }
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# smash_here: the container's valkey made to smash its own return address;
# how it ended, from its log (valkey handles SIGSEGV itself and logs the
# signal and si_code, 10 being SEGV_CPERR; its stdout is conmon's k8s-file
# log, ctr.log in the container's folder): smash=cp-fault|died:...|alive
smash_here() {
	local pid why
	pid=$(vk_pid)
	vcli $D MODULE LOAD /lab/valkey/vk_cetsmash.so > /dev/null 2>&1
	vcli $D CETSMASH.SMASH > /dev/null 2>&1
	WAIT_TENTHS=300 wait_for sh -c "! grep -q '^State:.*[RS]' /proc/$pid/status 2>/dev/null"
	why=$(grep -a -m1 'crashed by signal' "$(userdata)/ctr.log" | sed 's/^[^#]*# //')
	case "$why" in
	*"signal: 11, si_code: 10") echo "smash=cp-fault" ;;
	?*) echo "smash=died:$(echo "$why" | tr ' ' '_')" ;;
	*) if alive "$pid"; then echo smash=alive; else echo smash=died:no-crash-log; fi ;;
	esac
}

# restore_here FLAVOUR ROW KEYS: restore --import of $W/ckpt.tar (and
# $W/pre.tar for a pre row) on this machine; "restored secs=... pid=...
# digest=... cet=... write=... criu=..." or "failed: ..."
restore_here() {
	local fl=$1 tag=$1-$2 keys=$3 pid ud w
	set -- --import $W/ckpt.tar --keep --print-stats
	case $tag in *pre*) set -- "$@" --import-previous $W/pre.tar ;; esac
	case $tag in *tcp*) set -- "$@" --tcp-established ;; esac
	pmt restore-$tag "$fl" container restore "$@"
	ud=$(userdata)
	pid=$(vk_pid)
	if [ -z "$pid" ] || ! WAIT_TENTHS=300 wait_for vk_answers $D; then
		echo "failed: $(why restore-$tag); $(last_error "$ud/restore.log" | cut -c1-160) secs=$(took restore-$tag)"
		return
	fi
	w=$(vcli $D SET restored yes && vcli $D GET restored && vcli $D DEL restored)
	echo "restored secs=$(took restore-$tag) pid=$pid digest=$(vk_digest $D "$keys") cet=$(ctr_cet "$pid")" \
		"write=$(echo $w | tr ' ' '+') criu=$(criu_of "$ud/restore.log")" \
		"restore_us=$(stat_of $W/restore-$tag.out runtime_restore_duration)"
}

# row FLAVOUR ROW: valkey in a container, filled; for a *pre* ROW a
# pre-checkpoint (--export pre.tar) then keys rewritten; a checkpoint
# (--with-previous after a pre-checkpoint, --tcp-established for a *tcp*
# ROW, with a client on one connection all along) --export ckpt.tar;
# restore --import here (local*: after podman rm) or on B (migrate*: the
# tars sent); the same data, CET state, a write, the client's connection,
# and a smash caught
row() {
	local fl=$1 r=$2 n=podman.$1.$2 tag=$1-$2 tcp= pre= pid digest0 cet0 ud got client= pre_pages=
	case $r in *tcp*) tcp=1 ;; esac
	case $r in *pre*) pre=1 ;; esac
	rm -f $D.get $W/ckpt.tar $W/pre.tar $W/stop
	if ! pmt run-$tag "$fl" run -d --name vk --pull never --network ns:/run/netns/$POD ${PM_RUN_OPTS:-} $IMAGE \
		--bind $POD_IP --port $POD_PORT --protected-mode no --save '' --appendonly no \
		--io-threads 2 --enable-module-command yes --enable-debug-command yes \
		--crash-memcheck-enabled no || ! WAIT_TENTHS=600 wait_for vk_answers $D; then
		verdict FAIL $n.run "podman run: $(why run-$tag) secs=$(took run-$tag)"
		return 1
	fi
	pid=$(vk_pid)
	vk_fill $D "$PM_KEYS" > /dev/null
	digest0=$(vk_digest $D "$PM_KEYS")
	cet0=$(ctr_cet "$pid")
	if all_locked "$(echo "$cet0" | tr '+' ' ')" && [ "$(nthreads "$(echo "$cet0" | tr '+' ' ')")" -ge 5 ]; then
		verdict PASS $n.run "pid $pid, $PM_KEYS keys, digest=$digest0 cet=$cet0 secs=$(took run-$tag)"
	else
		verdict FAIL $n.run "not every thread on a locked shadow stack: cet=$cet0 secs=$(took run-$tag)"
	fi
	if [ -n "$tcp" ]; then
		/lab/bin/steady_client $POD_IP $POD_PORT $W/stop > $W/client.out 2>&1 &
		client=$!
		sleep 2
	fi
	if [ -n "$pre" ]; then
		pmt pre-$tag "$fl" container checkpoint --pre-checkpoint --export $W/pre.tar --compress none --keep --print-stats vk
		if [ ! -s $W/pre.tar ] || ! alive "$pid"; then
			verdict FAIL $n.pre-checkpoint "$(why pre-$tag); $(last_error "$(userdata)/dump.log" | cut -c1-160) secs=$(took pre-$tag)"
			return 1
		fi
		pre_pages=$(stat_of $W/pre-$tag.out pages_written)
		# keys 1..50 written again, the hash and the list made anew
		# (vk_fill for 50 keys): pages dirtied after the pre-checkpoint,
		# and the data the final checkpoint must carry (a new digest)
		vk_fill $D 50 > /dev/null
		digest0=$(vk_digest $D "$PM_KEYS")
	fi
	# --keep: dump.log and stats-dump stay in the container's folder
	pmt checkpoint-$tag "$fl" container checkpoint ${pre:+--with-previous} ${tcp:+--tcp-established} \
		--export $W/ckpt.tar --compress none --keep --print-stats vk
	ud=$(userdata)
	if [ ! -s $W/ckpt.tar ] || alive "$pid"; then
		verdict FAIL $n.checkpoint "$(why checkpoint-$tag); $(last_error "$ud/dump.log" | cut -c1-160) secs=$(took checkpoint-$tag)"
		return 1
	fi
	got="tar_bytes=$(wc -c < $W/ckpt.tar) full_locks=$(full_locks "$ud/dump.log")"
	got="$got frozen_us=$(stat_of $W/checkpoint-$tag.out frozen_time) pages=$(stat_of $W/checkpoint-$tag.out pages_written)"
	[ -z "$pre" ] || got="$got pre_tar_bytes=$(wc -c < $W/pre.tar) pre_pages=$pre_pages pre_secs=$(took pre-$tag)"
	verdict PASS $n.checkpoint "$got digest=$digest0 criu=$(criu_of "$ud/dump.log") secs=$(took checkpoint-$tag)"
	case $r in
	local*)
		if ! pmt rm-$tag "$fl" rm -f vk; then
			verdict FAIL $n.rm "$(why rm-$tag) secs=$(took rm-$tag)"
			return 1
		fi
		got=$(restore_here "$fl" "$r" "$PM_KEYS")
		;;
	migrate*)
		# the pod's address now routed to B, where it is restored
		[ -n "$tcp" ] && $IP route replace $POD_IP/32 via "$LAB_PEER"
		pmt rm-$tag "$fl" rm -f vk
		pod_down $POD
		for f in ${pre:+pre.tar} ckpt.tar; do
			got=$(a_send $W/$f)
			case $got in ok*) ;; *) verdict FAIL $n.send "$f: $got"; return 1 ;; esac
		done
		got=$(ask restore "$fl" "$r" "$PM_KEYS")
		;;
	esac
	case $got in
	restored*) verdict PASS $n.restore "$got" ;;
	*) verdict FAIL $n.restore "$got"; return 1 ;;
	esac
	if [ "$(field "$got" digest)" = "$digest0" ] && [ "$(field "$got" write)" = "OK+yes+1" ]; then
		verdict PASS $n.data "digest=$digest0 write=OK+yes+1"
	else
		verdict FAIL $n.data "digest=$(field "$got" digest) before=$digest0 write=$(field "$got" write)"
	fi
	got=$(field "$got" cet)
	if [ "$got" = "$cet0" ]; then
		verdict PASS $n.cet "cet=$got ss=${got##*ss=}"
	else
		verdict FAIL $n.cet "cet=$got before=$cet0 ss=${got##*ss=}"
	fi
	if [ -n "$client" ]; then
		sleep 1
		touch $W/stop
		if wait $client; then verdict PASS $n.client "$(cat $W/client.out)"
		else verdict FAIL $n.client "$(cat $W/client.out)"; fi
	fi
	case $r in
	local*) got=$(smash_here) ;;
	migrate*) got=$(ask smash) ;;
	esac
	if [ "$got" = smash=cp-fault ]; then
		verdict PASS $n.smash "$got"
	else
		verdict FAIL $n.smash "$got"
	fi
}

# row_end FLAVOUR: nothing of a row left here (or on B), whatever failed
row_end() {
	local pid
	[ -e $W/stop ] || touch $W/stop
	wait 2>/dev/null
	pm "$1" rm -f vk > /dev/null 2>&1
	pid=$(vk_pid)
	[ -z "$pid" ] || kill -9 "$pid"
	rm -f $W/*.tar
	# a fresh network namespace: no socket, route or CRIU lock of the row's
	if [ -n "$LAB_PEER" ]; then
		pod_down $POD
		$IP route del $POD_IP/32 2>/dev/null
		ask clean > /dev/null
	fi
	pod_new
}

# ---- two machines: A asks, B answers (migrate-net's protocol) ----
ASK_PORT=7101
ANSWER_PORT=7102
FILES_PORT=7103
ask() { peer_say $ASK_PORT "$*" && peer_hear $ANSWER_PORT 1200; }

# a_send FILE: FILE to B (W/basename there)
a_send() {
	ask recv "$(basename "$1")" > $W/answer &
	peer_send $FILES_PORT "$1"
	wait $!
	cat $W/answer
}

b_recv() {
	if peer_recv $FILES_PORT "$W/$1"; then echo "ok bytes=$(wc -c < "$W/$1")"; else echo "failed: no $1 from A"; fi
}

b_serve() {
	local req
	while req=$(peer_hear $ASK_PORT 1800); do
		set -- $req
		case $1 in
		image) peer_say $ANSWER_PORT "$image_id" ;;
		recv) peer_say $ANSWER_PORT "$(b_recv "$2")" ;;
		restore) pod_new; peer_say $ANSWER_PORT "$(restore_here "$2" "$3" "$4")" ;;
		smash) peer_say $ANSWER_PORT "$(smash_here)" ;;
		clean) pm cet rm -f vk > /dev/null 2>&1; pod_down $POD; rm -f $W/*.tar; peer_say $ANSWER_PORT done ;;
		end) return 0 ;;
		*) peer_say $ANSWER_PORT "failed: unknown request $1" ;;
		esac
	done
	lab_fail podman.b "no request from A for 1800 s"
}

# ---- setup: the image, loaded; the network namespace ----
# in_tmpfs_root sources lib.sh only: the peer's variables and helpers again
. /lab/peer.sh
if [ -n "$LAB_PEER" ]; then
	PM_ROWS=${PM_ROWS:-$(cmdline_key pm.rows | tr , ' ')}
	PM_ROWS=${PM_ROWS:-migrate migrate-tcp migrate-pre}
else
	PM_ROWS=${PM_ROWS:-$(cmdline_key pm.rows | tr , ' ')}
	PM_ROWS=${PM_ROWS:-local local-tcp local-pre}
fi
rm -f $W/cost
if [ "$LAB_HOST" != b ] && ! pod_new; then
	lab_fail podman.setup "cannot make the network namespace $POD"
	return 0
fi
t0=$(lab_now)
image_id=$(image_archive $W/valkey-cet.tar) || { lab_fail podman.image "cannot build the image archive"; return 0; }
lab_line INFO podman.image "archive_bytes=$(wc -c < $W/valkey-cet.tar) secs=$(secs "$t0" "$(lab_now)") image=$image_id"
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

# rows ROW...: each row with criu-cet (judged), then with stock CRIU (INFO)
rows() {
	local r fl
	for r in "$@"; do
		for fl in $PM_FLAVOURS; do
			if [ "$fl" = cet ]; then row "$fl" "$r"; else PM_INFO=1 row "$fl" "$r"; fi
			row_end "$fl"
		done
	done
}

case $LAB_HOST in
a)
	got=$(ask image)
	if [ "$got" != "$image_id" ]; then
		lab_fail podman.image "A has image $image_id, B ${got:-none}: restore --import would not find it on B"
	else
		lab_pass podman.image "the same image on both machines: image=$image_id"
		rows $PM_ROWS
	fi
	peer_say $ASK_PORT end
	;;
b)
	b_serve
	;;
*)
	rows $PM_ROWS
	;;
esac
lab_line INFO podman.cost "guest seconds per podman command: $(tr '\n' ' ' < $W/cost)"
# the guest's RAM at the end (the initramfs and the tmpfs root live in it)
lab_line INFO podman.memory "$(awk '/^(MemTotal|MemFree|Shmem):/ { printf "%s_kb=%s ", $1, $2 }' /proc/meminfo | tr -d :)" \
	"tmpfs_root_kb=$(df -k / | awk 'NR == 2 { print $3 }')"
pod_down $POD
# the status in_tmpfs_root returns: the suite's results are its lines
return 0
