# SPDX-License-Identifier: GPL-2.0
# Helpers for the guest's valkey runs (suite valkey, make demo's suite
# demo), sourced after /lab/lib.sh.  In the guest as /lab/valkey/lib.sh,
# with valkey, through the overlay lab/overlays/valkey.sh.
VK=/lab/valkey
VK_SHSTK=glibc.cpu.hwcaps=SHSTK

# vcli DIR ARGS...: valkey-cli on the server of DIR (its unix socket)
vcli() {
	local d=$1
	shift
	$VK/valkey-cli -s "$d/sock" "$@"
}

# vk_start DIR: a valkey-server on DIR/sock, on a shadow stack (glibc's,
# asked for by the tunable), in its own session, with 2 I/O threads (3 bio
# threads besides); its pid in DIR/pid once it answers PING.  With VK_TCP
# (ADDRESS:PORT) it listens there too, and with VK_NETNS (a netns file) it
# runs in that network namespace.
vk_start() {
	local d=$1 pid tcp="--port 0"
	rm -rf "$d" && mkdir -p "$d"
	[ -n "${VK_TCP:-}" ] && tcp="--bind ${VK_TCP%:*} --port ${VK_TCP##*:} --protected-mode no"
	GLIBC_TUNABLES=$VK_SHSTK setsid ${VK_NETNS:+nsenter --net=$VK_NETNS} $VK/valkey-server $tcp --unixsocket "$d/sock" \
		--unixsocketperm 700 --dir "$d" --save "" --appendonly no --io-threads 2 \
		--enable-module-command yes --enable-debug-command yes --logfile "$d/server.log" \
		--crash-memcheck-enabled no \
		< /dev/null > "$d/out" 2>&1 &
	pid=$!
	echo "$pid" > "$d/pid"
	WAIT_TENTHS=300 wait_for vk_answers "$d"
}

vk_answers() { [ "$(vcli "$1" PING 2>/dev/null)" = PONG ]; }

# pid_free PID: no task, not even a zombie, holds PID (a restore needs it)
pid_free() { [ ! -e "/proc/$1" ]; }

# vk_kill PID: SIGKILL, then wait until the pid is free (PID 1 reaps
# restored servers, whose parent criu was)
vk_kill() {
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	WAIT_TENTHS=300 wait_for pid_free "$1"
}

# vk_fill DIR N: N keys (10 B to 64 KiB), a hash and a list through
# valkey-cli --pipe; prints valkey-cli's summary line
vk_fill() {
	$VK/vk_fill set "$2" | vcli "$1" --pipe 2>&1 | tail -1
}

# vk_digest DIR N: md5 of every value read back through valkey-cli, in a
# fixed order (vk_fill get), and of DBSIZE
vk_digest() {
	[ -s "$1.get" ] || $VK/vk_fill get "$2" > "$1.get"
	vcli "$1" < "$1.get" | md5sum | cut -c1-32
}

# status_list TASKDIR FIELD: a list field of TASKDIR/status, commas between
status_list() {
	sed -n "s/^$2:[[:space:]]*//p" "$1/status" | sed 's/[[:space:]]*$//; s/[[:space:]][[:space:]]*/,/g'
}

# thread_cet PID: "tid:features/locked" for every thread, sorted, then the
# process's shadow-stack mapping count ("ss" in VmFlags)
thread_cet() {
	local t f l
	for t in /proc/$1/task/*; do
		f=$(status_list "$t" x86_Thread_features)
		l=$(status_list "$t" x86_Thread_features_locked)
		echo "${t##*/}:${f:--}/${l:--}"
	done | sort -n | tr '\n' ' '
	echo "ss=$(grep -c '^VmFlags:.* ss' "/proc/$1/smaps")"
}

# all_locked STATE: every thread of a thread_cet line on a shadow stack,
# SHSTK and WRSS locked as glibc locks them
all_locked() {
	local w
	for w in $1; do
		case "$w" in
		ss=*) ;;
		*:shstk/shstk,wrss) ;;
		*) return 1 ;;
		esac
	done
}

# nthreads STATE: the threads of a thread_cet line
nthreads() { echo "$1" | tr ' ' '\n' | grep -c ':'; }

# full_locks LOG: the threads criu-cet's dump log found with every lock bit
# set (the mask /proc cannot show: glibc's ARCH_SHSTK_LOCK of all 64)
full_locks() { grep -c 'locked 0xffffffffffffffff' "$1" 2>/dev/null; }

# vk_smash DIR PID: load the module, have a command smash its return
# address; prints how the server ended: "cp-fault: <valkey's crash log>"
# (valkey handles SIGSEGV itself, so the kernel does not report it; its
# handler logs the signal and si_code, 10 being SEGV_CPERR), "followed",
# "alive" or "died: ..."
vk_smash() {
	local d=$1 pid=$2 why
	vcli "$d" MODULE LIST | grep -q cetsmash || vcli "$d" MODULE LOAD $VK/vk_cetsmash.so > /dev/null
	vcli "$d" CETSMASH.SMASH > /dev/null 2>&1
	WAIT_TENTHS=300 wait_for sh -c "! grep -q '^State:.*[RS]' /proc/$pid/status 2>/dev/null"
	why=$(grep -m1 'crashed by signal' "$d/server.log" | sed 's/^[^#]*# //')
	case "$why" in
	*"signal: 11, si_code: 10") echo "cp-fault: SIGSEGV SEGV_CPERR ($why)" ;;
	?*) echo "died: $why" ;;
	*)
		if grep -q 'smash followed' "$d/out"; then
			echo followed
		elif alive "$pid"; then
			echo alive
		else
			echo "died: no crash log"
		fi ;;
	esac
}

# vk_bgsave DIR: BGSAVE, wait for it, check the rdb and LASTSAVE; prints
# "ok <rdb bytes> lastsave A -> B" or what failed
vk_bgsave() {
	local d=$1 before after
	before=$(vcli "$d" LASTSAVE)
	sleep 1	# LASTSAVE counts seconds
	rm -f "$d/dump.rdb"
	vcli "$d" BGSAVE > /dev/null
	WAIT_TENTHS=600 wait_for sh -c "$VK/valkey-cli -s $d/sock INFO persistence | grep -q 'rdb_bgsave_in_progress:0'"
	after=$(vcli "$d" LASTSAVE)
	if vcli "$d" INFO persistence | grep -q 'rdb_last_bgsave_status:ok' && [ -s "$d/dump.rdb" ] &&
		[ "$after" -gt "$before" ]; then
		echo "ok $(wc -c < "$d/dump.rdb") B, lastsave $before -> $after"
	else
		echo "failed: lastsave $before -> $after, rdb $(wc -c < "$d/dump.rdb" 2>/dev/null || echo none), $(vcli "$d" INFO persistence | grep bgsave_status | tr -d '\r')"
	fi
}
