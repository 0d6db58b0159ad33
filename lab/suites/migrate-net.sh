# SPDX-License-Identifier: GPL-2.0
# Live migration of valkey on glibc's shadow stacks from machine A to
# machine B over the lab's network (run.py --suites migrate-net
# --peer-suites migrate-net, the valkey overlay on both), the way p.haul
# and CRIU's own page-server flow do it: for each pre-dump (--track-mem)
# and the final dump, B starts `criu page-server` and A's criu sends it the
# pages; then A sends B the other images and the files the server has
# open, and B restores.  A drives, B serves A's requests (port 7101, its
# answers on 7102).  The flows (MIG_FLOWS):
#   pages  pre-dumps and the dump through B's page server
#   lazy   post-copy: B's `criu lazy-pages --page-server` pulls the pages
#          from A's `criu dump --lazy-pages` while the restored server runs
#   tcp    pages, with valkey in a network namespace of its own (a pod:
#          veth, its own address routed to the machine it runs on, as
#          Calico does) and a client on A (steady_client) keeping one
#          connection open through the move (--tcp-established; the netns
#          is the runtime's, external to CRIU, as runc does it)
#   tcp-nopre  tcp without pre-dumps: every page crosses while valkey is
#          frozen, the freeze the pre-dumps save
#   files  no page server: the dump writes its pages on A and they cross
#          in the images' tar, as between CRIUs that share no page server
# What B restored is checked against what A had: data digest, every
# thread's features and locks, the ss mapping count; a smash is still
# caught.  Then migrations that fail on purpose (a_fall_back):
#   dies     B's criu is killed mid-restore (by its own action script)
#   drop     A's network goes down while the dump sends B its pages
#   refused  B has no user shadow stacks (a boot with clearcpuid=user_shstk)
#   lazy-drop  post-copy whose network goes down once valkey runs on B
# and valkey must run on on A, with nothing of it left on B.  And a rolling
# upgrade (a_fleet), fleet-FROM-TO[-plain]: A dumps with one CRIU (cet,
# 4.2.1, stock), B's page server and restore are another's; criu-cet's
# restores are judged, the others' outcome reported as it is.  Stock CRIU
# 4.1.1's outcome on the same flows is reported (INFO migrate.stock.*).
# The kernel command line may name the flows: mig.flows=dies,drop, and
# stock's: mig.stock=tcp.
MIG_KEYS=${MIG_KEYS:-2000}
MIG_PRE=${MIG_PRE:-2}
MIG_FLOWS=${MIG_FLOWS:-$(cmdline_key mig.flows | tr , ' ')}
MIG_FLOWS=${MIG_FLOWS:-pages lazy tcp tcp-nopre dies drop lazy-drop}
# stock 4.1.1 beside criu-cet, but not through the drops (without a bound
# on a silent peer it would only wait out A's deadline) nor the fleet's
# flows (they name their CRIUs); mig.stock=tcp,dies names them,
# mig.stock=none runs none (make test's sample)
MIG_STOCK_FLOWS=${MIG_STOCK_FLOWS:-$(cmdline_key mig.stock | tr , ' ')}
MIG_STOCK_FLOWS=${MIG_STOCK_FLOWS:-$(for f in $MIG_FLOWS; do
	case $f in drop | lazy-drop | fleet-*) ;; *) echo $f ;; esac
done)}
[ "$MIG_STOCK_FLOWS" != none ] || MIG_STOCK_FLOWS=
# how long A's dump may take before A gives up on it (as an orchestrator's
# timeout would), and how long B gets to notice that a migration is over
MIG_DEADLINE=90
# and B's restore: stock 4.1.1's restore on a machine without user shadow
# stacks lost a task to a segfault and waited for good (B answered nothing)
MIG_RESTORE_DEADLINE=180
MIG_LEFT_WAIT=60
CRIU_CET=/lab/criu-cet/criu
CRIU_STOCK=/lab/criu-stock/criu
IP=/usr/sbin/ip		# iproute2 (busybox ip has no netns), from the runtime overlay
D=/tmp/mig/valkey
IMG=/tmp/mig/img
POD=vk
POD_IP=10.76.1.10
POD_PORT=6379
PS_PORT=7100
ASK_PORT=7101
ANSWER_PORT=7102
FILES_PORT=7103

if [ -z "$LAB_PEER" ]; then
	lab_skip migrate-net "not a two-machine boot (run.py --peer-suites)"
	return 0
fi
if [ ! -x /lab/valkey/valkey-server ]; then
	lab_skip migrate-net "valkey is not in the guest (the overlay lab/overlays/migrate.sh)"
	return 0
fi
. /lab/valkey/lib.sh
# CRIU runs iptables-restore (its network lock under --tcp-established)
# from PATH; the overlay's is in /usr/sbin, after busybox's applets
PATH=$PATH:/usr/sbin

# ---- both machines: the pod's network (pod_up, pod_down: peer.sh) ----

# ---- B: what A asks for ----
# page-server CRIU DIR [PREV]: a page server for one dump into IMG/DIR, in
#   the background (it ends with the dump); "ready" once it listens.  With
#   PREV, IMG/DIR's parent is IMG/PREV: the server tells the dump which pages
#   B has already, and only the changed ones cross (CRIU's pre-dump chain)
# lazy-pages CRIU DIR: the lazy-pages daemon for IMG/DIR, pulling from A
# files: the other images and the server's files, as a tar on FILES_PORT
# restore CRIU DIR KEYS [lazy|tcp]: restore IMG/DIR, then the server's state
# smash: the restored server's return address overwritten
# clean: the restored server gone, the pod too
# end: the migration is over
b_page_server() {
	mkdir -p "$IMG/$2"
	if $1 page-server -D "$IMG/$2" --port $PS_PORT -o page-server.log -v4 --daemon \
		--pidfile "/tmp/mig/ps.$2.pid" ${3:+--prev-images-dir ../$3}; then
		echo ready
	else
		echo "failed: $(last_error "$IMG/$2/page-server.log")"
	fi
}

b_lazy_pages() {
	mkdir -p "$IMG/$2"
	if $1 lazy-pages -D "$IMG/$2" --page-server --address "$LAB_PEER" --port $PS_PORT \
		-o lazy-pages.log -v4 --daemon; then
		echo ready
	else
		echo "failed: $(last_error "$IMG/$2/lazy-pages.log")"
	fi
}

b_files() {
	if peer_recv $FILES_PORT /tmp/mig.tar && tar -C / -xf /tmp/mig.tar; then
		echo "ok bytes=$(wc -c < /tmp/mig.tar)"
	else
		echo "failed: no tar from A"
	fi
	rm -f /tmp/mig.tar
}

# b_state PID KEYS: digest, CET state and a write, as fields
b_state() {
	local w
	w=$(vcli $D SET migrated yes && vcli $D GET migrated && vcli $D DEL migrated)
	echo "digest=$(vk_digest $D "$2") cet=$(thread_cet "$1" | tr ' ' '+') write=$(echo $w | tr ' ' '+')"
}

b_restore() {
	local criu=$1 dir=$IMG/$2 pid t0 t1 rc opts=
	pid=$(cat $D/pid)
	case $4 in
	lazy | lazy-drop) opts=--lazy-pages ;;
	dies)
		# criu killed once every task is restored, before its last stages
		die_at_script /tmp/mig/die.sh post-restore
		opts="--action-script /tmp/mig/die.sh" ;;
	tcp)
		pod_up $POD $POD_IP || { echo "failed: the pod's network on B"; return; }
		exec 9< /run/netns/$POD
		opts="--tcp-established --inherit-fd fd[9]:$POD" ;;
	esac
	t0=$(lab_now)
	timeout -s KILL $MIG_RESTORE_DEADLINE $criu restore -D "$dir" -d -o restore.log -v4 $opts
	rc=$?
	[ $rc = 137 ] && [ "$4" != dies ] && rc="137 (killed at B's ${MIG_RESTORE_DEADLINE} s deadline)"
	if [ "$rc" != 0 ]; then
		# the whole story on B's console, the first error for A's line
		grep -a -B2 -E 'Error|error|fail' "$dir/restore.log" | head -20 | sed 's/^/restore.log: /' >&2
		ls -la $IMG/* | sed 's/^/images: /' >&2
		echo "failed: rc=$rc $(last_error "$dir/restore.log")"
		return
	fi
	t1=$(lab_now)
	exec 9<&-
	# lazy-drop: A cuts the network now, pages still to come
	[ "$4" = lazy-drop ] && { echo "restored restore_secs=$(secs "$t0" "$t1")"; return; }
	if ! WAIT_TENTHS=300 wait_for vk_answers $D; then
		echo "failed: restored, no answer: $(cp_fault_of "$pid")"
		return
	fi
	echo "restored restore_secs=$(secs "$t0" "$t1") pages_bytes=$(cat $IMG/*/pages-*.img 2>/dev/null | wc -c) $(b_state "$pid" "$3")"
}

# b_left WAIT: what of a migration is still on B, once nothing more
# should be: criu processes (a page server, a lazy-pages daemon, a
# restore) and valkey servers, after up to WAIT seconds for them to end
b_left() {
	local t=0 n
	while n=$(b_count) && [ "$n" != "0 0" ] && [ $t -lt "$1" ]; do
		sleep 1
		t=$((t + 1))
	done
	set -- $n
	# lazy_killed: tasks the lazy-pages daemon killed, their pages lost
	echo "criu=$1 valkey=$2 waited=$t lazy_killed=$(cat $IMG/*/lazy-pages.log 2>/dev/null |
		grep -ac 'lazy pages cannot come')"
}

b_count() {
	local c=0 v=0 f
	for f in /proc/[0-9]*/comm; do
		case $(cat "$f" 2>/dev/null) in
		criu) c=$((c + 1)) ;;
		valkey-server) v=$((v + 1)) ;;
		esac
	done
	echo "$c $v"
}

# b_clean: nothing of a migration left on B: the server, a page server
# that never got its dump, the pod
b_clean() {
	local pid
	for pid in $(cat /tmp/mig/ps.*.pid 2>/dev/null); do
		[ "$(cat /proc/$pid/comm 2>/dev/null)" = criu ] && vk_kill "$pid"
	done
	pid=$(cat $D/pid 2>/dev/null)
	[ -n "$pid" ] && vk_kill "$pid"
	pod_down $POD
	rm -rf /tmp/mig
}

b_serve() {
	local req
	while req=$(peer_hear $ASK_PORT 1200); do
		set -- $req
		case $1 in
		page-server) peer_say $ANSWER_PORT "$(b_page_server "$2" "$3" "$4")" ;;
		lazy-pages) peer_say $ANSWER_PORT "$(b_lazy_pages "$2" "$3")" ;;
		files) peer_say $ANSWER_PORT "$(b_files)" ;;
		restore) peer_say $ANSWER_PORT "$(b_restore "$2" "$3" "$4" "$5")" ;;
		left) peer_say $ANSWER_PORT "$(b_left "$2")" ;;
		smash) peer_say $ANSWER_PORT "$(vk_smash $D "$(cat $D/pid)" | tr ' ' '+')" ;;
		clean) b_clean; peer_say $ANSWER_PORT done ;;
		end) return 0 ;;
		*) peer_say $ANSWER_PORT "failed: unknown request $1" ;;
		esac
	done
	lab_fail migrate.b "no request from A for 1200 s"
}

# ---- A: the migrations ----
# mig_pass/mig_fail NAME DETAIL: a verdict on criu-cet's migration; with
# MIG_REPORT_ONLY (another CRIU's run) only reported, as INFO lines
mig_pass() {
	if [ -n "${MIG_REPORT_ONLY:-}" ]; then lab_line INFO "$1" "ok: $2"; else lab_pass "$1" "$2"; fi
}
mig_fail() {
	if [ -n "${MIG_REPORT_ONLY:-}" ]; then lab_line INFO "$1" "failed: $2"; else lab_fail "$1" "$2"; fi
}
mig_info() { lab_line INFO "$1" "$2"; }

# ask WORDS: a request to B, its answer printed
ask() {
	peer_say $ASK_PORT "$*" && peer_hear $ANSWER_PORT 1200
}

# field LINE KEY: KEY's value in a "key=value ..." line
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# a_send_files PATH...: A's images and the server's files (the pages are
# on B already, or come from A later); B's answer
a_send_files() {
	tar -C / -cf /tmp/mig.tar "${@#/}" || { echo "failed: tar on A"; return; }
	ask files > /tmp/mig.answer &
	peer_send $FILES_PORT /tmp/mig.tar
	wait
	cat /tmp/mig.answer
	rm -f /tmp/mig.tar /tmp/mig.answer
}

# a_predumps NAME CRIU N: N pre-dumps (--track-mem) through B's page server
# into IMG/1..N
a_predumps() {
	local i=1 prev= ans
	while [ $i -le "$3" ]; do
		mkdir -p $IMG/$i
		ans=$(ask page-server "${MIG_B_CRIU:-$2}" $i $prev)
		[ "$ans" = ready ] || { mig_fail $1.pre$i "B's page server: $ans"; return 1; }
		if ! $2 pre-dump -t "$pid" -D $IMG/$i -o pre-dump.log -v4 --track-mem \
			--page-server --address "$LAB_PEER" --port $PS_PORT ${prev:+--prev-images-dir ../$prev}; then
			mig_fail $1.pre$i "$(last_error $IMG/$i/pre-dump.log)"
			return 1
		fi
		prev=$i
		i=$((i + 1))
	done
}

# a_dump NAME CRIU FLOW DIR: the final dump of the flow into IMG/DIR
a_dump() {
	local name=$1 criu=$2 flow=$3 n=$4 dir=$IMG/$4 prev= ans st
	[ "$n" -gt 1 ] && prev=$((n - 1))
	case $flow in
	lazy)
		# the dump serves the pages from A until B took them all: in the
		# background; its status fd says when the images are written
		mkdir -p $dir && rm -f /tmp/mig.st && mkfifo /tmp/mig.st
		$criu dump -t "$pid" -D $dir -o dump.log -v4 --lazy-pages --address 0.0.0.0 \
			--port $PS_PORT --status-fd 3 3> /tmp/mig.st &
		lazy_dump=$!
		st=$(dd if=/tmp/mig.st bs=1 count=1 2>/dev/null | od -An -tx1 | tr -d ' ')
		[ "$st" = 00 ] && return 0
		wait $lazy_dump
		mig_fail $name.dump "$(last_error $dir/dump.log)"
		return 1 ;;
	tcp) mkdir -p $dir; set -- --tcp-established --external "net[$(stat -L -c %i /run/netns/$POD)]:$POD" ;;
	files)
		mkdir -p $dir
		$criu dump -t "$pid" -D $dir -o dump.log -v4 && return 0
		mig_fail $name.dump "$(last_error $dir/dump.log)"
		return 1 ;;
	*) mkdir -p $dir; set -- ;;
	esac
	ans=$(ask page-server "${MIG_B_CRIU:-$criu}" $n $prev)
	[ "$ans" = ready ] || { mig_fail $name.dump "B's page server: $ans"; return 1; }
	if ! $criu dump -t "$pid" -D $dir -o dump.log -v4 --track-mem ${prev:+--prev-images-dir ../$prev} \
		--page-server --address "$LAB_PEER" --port $PS_PORT "$@"; then
		mig_fail $name.dump "$(last_error $dir/dump.log)"
		return 1
	fi
}

# a_migrate NAME CRIU FLOW: valkey moved from A to B by FLOW (pages, lazy
# or tcp); PASS/FAIL lines NAME.*.  Then nothing of it is left on either
# machine, whatever failed.
a_migrate() {
	pid= client= lazy_dump=
	a_move "$@"
	[ -n "$client" ] && alive "$client" && { touch /tmp/mig/stop; wait $client; }
	[ -n "$lazy_dump" ] && kill -9 $lazy_dump 2>/dev/null
	[ -n "$pid" ] && vk_kill "$pid"
	pod_down $POD
	$IP route del $POD_IP/32 2>/dev/null
	ask clean > /dev/null
}

a_move() {
	local name=$1 criu=$2 flow=${3%-nopre} pre=$MIG_PRE cet0 digest0 t0 t1 got sent
	local bcriu=${MIG_B_CRIU:-$2} shstk=$VK_SHSTK
	[ -n "${MIG_PLAIN:-}" ] && shstk=
	# post-copy and files have no pre-dump; a -nopre flow is its flow
	# without them
	case $3 in lazy | files | *-nopre) pre=0 ;; esac
	rm -rf /tmp/mig && mkdir -p $IMG
	local VK_NETNS= VK_TCP=
	if [ "$flow" = tcp ]; then
		pod_up $POD $POD_IP || { mig_fail $name.pod "the pod's network on A"; return 1; }
		VK_NETNS=/run/netns/$POD VK_TCP=$POD_IP:$POD_PORT
	fi
	if ! VK_SHSTK=$shstk VK_NETNS=$VK_NETNS VK_TCP=$VK_TCP vk_start $D; then
		mig_fail $name.start "valkey-server did not answer"
		return 1
	fi
	pid=$(cat $D/pid)
	vk_fill $D "$MIG_KEYS" > /dev/null
	digest0=$(vk_digest $D "$MIG_KEYS")
	cet0=$(thread_cet "$pid" | tr ' ' '+')
	if [ "$flow" = tcp ]; then
		steady_client $POD_IP $POD_PORT /tmp/mig/stop > /tmp/mig/client.out 2>&1 &
		client=$!
		sleep 2
	fi
	a_predumps "$name" "$criu" "$pre" || return 1
	t0=$(lab_now)
	if ! a_dump "$name" "$criu" "$flow" $((pre + 1)); then
		alive "$pid" && mig_info $name.after-failed-dump "valkey runs on on A: $(thread_cet "$pid")"
		return 1
	fi
	t1=$(lab_now)
	[ "$flow" = tcp ] && { $IP route replace $POD_IP/32 via "$LAB_PEER"; pod_down $POD; }
	[ "$flow" = lazy ] || wait "$pid" 2>/dev/null
	sent=$(a_send_files $IMG $D)
	case "$sent" in ok*) ;; *) mig_fail $name.files "$sent"; return 1 ;; esac
	if [ "$flow" = lazy ]; then
		got=$(ask lazy-pages "$bcriu" $((pre + 1)))
		[ "$got" = ready ] || { mig_fail $name.lazy-pages "on B: $got"; return 1; }
	fi
	got=$(ask restore "$bcriu" $((pre + 1)) "$MIG_KEYS" "$flow")
	case "$got" in
	restored*) ;;
	*) mig_fail $name.restore "on B: $got"; return 1 ;;
	esac
	if [ "$flow" = lazy ]; then
		wait $lazy_dump || mig_fail $name.lazy "A's dump (its page server) ended with an error: $(last_error $IMG/1/dump.log)"
		wait "$pid" 2>/dev/null
	fi
	mig_pass $name.restore "flow=$3 pre_dumps=$pre dump_secs=$(secs "$t0" "$t1") restore_secs=$(field "$got" restore_secs) pages_bytes=$(field "$got" pages_bytes) files_bytes=$(field "$sent" bytes)"
	if [ "$(field "$got" digest)" = "$digest0" ] && [ "$(field "$got" cet)" = "$cet0" ] &&
		[ "$(field "$got" write)" = "OK+yes+1" ]; then
		mig_pass $name.state "digest=$digest0 cet=$cet0"
	else
		mig_fail $name.state "on B: $got; on A before: digest=$digest0 cet=$cet0"
	fi
	[ "$flow" = tcp ] && a_client "$name"
	# a task without shadow stacks has none to catch a smash
	[ -n "${MIG_PLAIN:-}" ] && return 0
	got=$(ask smash)
	case "$got" in
	cp-fault:*) mig_pass $name.smash "on B: $got" ;;
	*) mig_fail $name.smash "on B: $got" ;;
	esac
}

# a_client NAME: the client on A, stopped after a second more of traffic
# through B; its connection must have held
a_client() {
	sleep 1
	touch /tmp/mig/stop
	if wait $client; then
		mig_pass $1.client "$(cat /tmp/mig/client.out)"
	else
		mig_fail $1.client "$(cat /tmp/mig/client.out)"
	fi
}

# a_valkey_up NAME: valkey started on A and filled; pid, digest0 (its
# data) and cet0 (every thread's CET state, thread_cet with + for blanks)
# set for the checks after
a_valkey_up() {
	rm -rf /tmp/mig && mkdir -p $IMG/1
	vk_start $D || { mig_fail $1 "valkey-server did not answer"; return 1; }
	pid=$(cat $D/pid)
	vk_fill $D "$MIG_KEYS" > /dev/null
	digest0=$(vk_digest $D "$MIG_KEYS")
	cet0=$(thread_cet "$pid" | tr ' ' '+')
}

# a_ran_on NAME WHY FIELDS [EXTRA_TEST]: the verdict on a migration that
# failed: valkey runs on on A with digest0 and cet0, and B, asked what is
# left of it, has nothing (after MIG_LEFT_WAIT to notice).  FIELDS end the
# detail (a why= last); EXTRA_TEST, a command, must succeed too.  valkey is
# killed after.
a_ran_on() {
	local left
	left=$(ask left $MIG_LEFT_WAIT)
	kill -CONT "$pid" 2>/dev/null
	set -- "$1" "$2" "b_$(echo $left | sed 's/ / b_/g') $3" "${4:-true}"
	if alive "$pid" && [ "$(vk_digest $D "$MIG_KEYS")" = "$digest0" ] &&
		[ "$(thread_cet "$pid" | tr ' ' '+')" = "$cet0" ] &&
		[ "$(field "$left" criu)$(field "$left" valkey)" = 00 ] && $4; then
		mig_pass $1 "$2; valkey runs on on A as before cet=$cet0 $3"
	else
		mig_fail $1 "$2; on A alive=$(alive "$pid" && echo yes || echo no) cet=$(thread_cet "$pid" | tr ' ' '+') (was $cet0) $3"
	fi
	vk_kill "$pid"
}

# a_fall_back NAME CRIU FLOW: a migration that fails on purpose (dies,
# drop, refused: above).  A's dump leaves valkey stopped (--leave-stopped),
# as a migration that can fall back does: had B restored it, A would kill
# its copy; B did not, and A lets it run on.  PASS NAME when valkey runs on
# on A with its data and CET state as before and nothing of the migration
# is left on B (B's answer to "left", after its time to notice).
a_fall_back() {
	local name=$1 criu=$2 flow=$3 dir=$IMG/1 cet0 digest0 got why rc
	a_valkey_up $name || return
	got=$(ask page-server "$criu" 1)
	[ "$got" = ready ] || { mig_fail $name "B's page server: $got"; vk_kill "$pid"; return; }
	local dropper=
	if [ "$flow" = drop ]; then
		a_drop_when_sending $dir/dump.log &
		dropper=$!
	fi
	timeout -s KILL $MIG_DEADLINE $criu dump -t "$pid" -D $dir -o dump.log -v4 --leave-stopped \
		--page-server --address "$LAB_PEER" --port $PS_PORT
	rc=$?
	[ -n "$dropper" ] && { wait $dropper; a_net_back; }
	if [ $rc = 0 ]; then
		got=$(a_send_files $IMG $D)
		case "$got" in ok*) got=$(ask restore "$criu" 1 "$MIG_KEYS" "$flow") ;; esac
		why="on B: $got"
	else
		why="dump rc=$rc ($([ $rc = 137 ] && echo "killed at A's ${MIG_DEADLINE} s deadline" ||
			last_error $dir/dump.log))"
	fi
	case "$got" in
	restored*)
		mig_fail $name "B restored valkey: the failure did not happen ($got)"
		vk_kill "$pid"
		return ;;
	esac
	a_ran_on $name "$why" "dump_rc=$rc"
}

# a_fleet NAME CRIU FLOW: FLOW fleet-FROM-TO[-plain], the pages flow with
# A's pre-dumps and dump by FROM, B's page server and restore by TO (cet,
# 4.2.1, stock), valkey on shadow stacks or, -plain, without.  Stock 4.1.1
# cannot talk to a 4.2-based page server (4.2 widened its command, with no
# version check: both ends wait for good): its directions take the files
# flow.  Judged when criu-cet restores; another CRIU's outcome is reported
# (INFO), with what it lost.  NAME.restore/state/smash as a_move's.
a_fleet() {
	local spec=${3#fleet-} plain= from to flow=pages
	case $spec in *-plain) plain=1 spec=${spec%-plain} ;; esac
	case $spec in stock-* | *-stock) flow=files ;; esac
	from=$(criu_of "${spec%%-*}") && to=$(criu_of "${spec#*-}") ||
		{ lab_skip "$1" "no CRIU ${spec%%-*} or ${spec#*-} in the guest (overlay lab/overlays/upstream.sh)"; return; }
	if [ "${spec#*-}" = cet ]; then
		MIG_PLAIN=$plain MIG_B_CRIU=$to a_migrate "$1" "$from" $flow
	else
		MIG_PLAIN=$plain MIG_B_CRIU=$to MIG_REPORT_ONLY=1 a_migrate "$1" "$from" $flow
	fi
}

# criu_of NAME: the guest's CRIU of that name (cet, 4.2.1, stock)
criu_of() {
	case $1 in
	cet) echo $CRIU_CET ;;
	stock) echo $CRIU_STOCK ;;
	4.2.1) [ -x /lab/criu-4.2.1/criu ] && echo /lab/criu-4.2.1/criu ;;
	*) return 1 ;;
	esac
}

# a_lazy_drop NAME CRIU: post-copy, and A's network goes down as soon as
# B runs valkey with pages still on A.  A's dump (the pages' server) must
# give up on B and let valkey run on; B's lazy-pages daemon must give up on
# A and kill the valkey whose pages cannot come (not leave it to zeroes).
# PASS NAME as a_fall_back's.
a_lazy_drop() {
	local name=$1 criu=$2 dir=$IMG/1 cet0 digest0 got st t=0
	a_valkey_up $name || return
	rm -f /tmp/mig.st && mkfifo /tmp/mig.st
	$criu dump -t "$pid" -D $dir -o dump.log -v4 --lazy-pages --address 0.0.0.0 \
		--port $PS_PORT --status-fd 3 3> /tmp/mig.st &
	lazy_dump=$!
	st=$(dd if=/tmp/mig.st bs=1 count=1 2>/dev/null | od -An -tx1 | tr -d ' ')
	[ "$st" = 00 ] || { mig_fail $name "dump: $(last_error $dir/dump.log)"; vk_kill "$pid"; return; }
	got=$(a_send_files $IMG $D)
	case "$got" in ok*) got=$(ask lazy-pages "$criu" 1) ;; esac
	[ "$got" = ready ] && got=$(ask restore "$criu" 1 "$MIG_KEYS" lazy-drop)
	case "$got" in
	restored*) ip link set eth0 down ;;
	*) mig_fail $name "on B: $got"; kill -9 $lazy_dump; vk_kill "$pid"; return ;;
	esac
	while alive $lazy_dump && [ $t -lt $MIG_DEADLINE ]; do
		sleep 1
		t=$((t + 1))
	done
	alive $lazy_dump && { got="the dump still served after ${t} s: killed"; kill -9 $lazy_dump; } ||
		got="the dump gave up after ${t} s: $(grep -a -m1 'Error' $dir/dump.log | cut -c1-100)"
	wait $lazy_dump 2>/dev/null
	lazy_dump=
	a_net_back
	# the dump must have given up by itself, before A's deadline
	a_ran_on $name "$got" "gave_up_secs=$t" "test $t -lt $MIG_DEADLINE"
}

# a_drop_when_sending LOG: A's network down once the dump in LOG sends its
# pages (the page server on B cut off mid-transfer)
a_drop_when_sending() {
	WAIT_TENTHS=300 wait_for grep -aqs "Dumping pages (type" "$1" && ip link set eth0 down
}

# a_net_back: A's network up again, B reachable
a_net_back() {
	ip link set eth0 up
	arping -q -U -c 1 -I eth0 "${LAB_IP%/*}"
	peer_up 120 || lab_fail migrate.net-back "B unreachable after the drop"
}

# a_no_server NAME CRIU ADDRESS PORT: the dump's page server is not there
# (a wrong port: nothing listens; a wrong address: nobody answers ARP): the
# dump fails with criu's error and valkey runs on on A, its data and CET
# state as before
a_no_server() {
	local name=$1 criu=$2 cet0 digest0
	a_valkey_up $name || return
	if $criu dump -t "$pid" -D $IMG/1 -o dump.log -v4 --page-server --address "$3" --port "$4"; then
		lab_fail $name "the dump succeeded with no page server at $3:$4"
	else
		a_ran_on $name "dump refused, no page server at $3:$4" "why=$(last_error $IMG/1/dump.log)"
		return
	fi
	vk_kill "$pid"
}

# a_flow NAME CRIU FLOW: one migration, or one that fails on purpose
a_flow() {
	case $3 in
	dies | drop | refused) a_fall_back "$@"; ask clean > /dev/null ;;
	lazy-drop) a_lazy_drop "$@"; ask clean > /dev/null ;;
	fleet-*) a_fleet "$@" ;;
	*) a_migrate "$@" ;;
	esac
}

case $LAB_HOST in
a)
	echo 30000 > /proc/sys/kernel/ns_last_pid	# B's own tasks keep the low pids
	for flow in $MIG_FLOWS; do
		a_flow migrate.$flow $CRIU_CET "$flow"
	done
	a_no_server migrate.no-page-server $CRIU_CET "$LAB_PEER" $((PS_PORT + 99))
	a_no_server migrate.no-address $CRIU_CET "${LAB_PEER%.*}.99" $PS_PORT
	# stock CRIU 4.1.1 on the same network and steps: reported, not judged
	for flow in $MIG_STOCK_FLOWS; do
		MIG_REPORT_ONLY=1 a_flow migrate.stock.$flow $CRIU_STOCK "$flow"
	done
	peer_say $ASK_PORT end
	;;
b)
	b_serve
	;;
esac
