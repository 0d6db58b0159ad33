# SPDX-License-Identifier: GPL-2.0
# A real service on glibc's shadow stacks: valkey 8.1.1 built against the
# CET glibc (lab/build/valkey.sh; in the guest through the overlay
# lab/overlays/valkey.sh), started with GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK
# and 2 I/O threads, filled through valkey-cli, then checkpointed and
# restored by criu-cet five times in a row (plain dumps and --leave-running
# ones).  After each restore: the client's digest of every key and value,
# new writes, BGSAVE (a fork), each thread's features and locks and the
# shadow-stack mapping count exactly as before.  A smashed return address is
# a control-protection fault before (a second server) and after (the
# restored one).  Then stock CRIU 4.1.1 on the same steps: its outcome is
# reported (INFO valkey.stock.*), not judged.
VALKEY_KEYS=${VALKEY_KEYS:-5000}
VALKEY_CYCLES=${VALKEY_CYCLES:-5}
CRIU_CET=/lab/criu-cet/criu
CRIU_STOCK=/lab/criu-stock/criu

if [ ! -x /lab/valkey/valkey-server ]; then
	lab_skip valkey.setup "valkey is not in the guest (run.py --overlay build/overlay-valkey, from lab/overlays/valkey.sh)"
	return 0
fi
. /lab/valkey/lib.sh

D=/tmp/valkey
rm -rf $D.*

# ---- the service ----
if ! vk_start $D; then
	lab_fail valkey.start "valkey-server did not answer: $(tail -3 $D/out $D/server.log 2>/dev/null | tr '\n' ' ')"
	return 0
fi
pid=$(cat $D/pid)
cet0=$(thread_cet "$pid")
if all_locked "$cet0" && [ "$(nthreads "$cet0")" -ge 5 ]; then
	lab_pass valkey.start "pid $pid, $($VK/valkey-server --version | cut -d' ' -f1-3), threads on locked shadow stacks: server=valkey threads=$(nthreads "$cet0") cet=$(echo $cet0 | tr " " +)"
else
	lab_fail valkey.start "not every thread on a locked shadow stack (or too few threads): $cet0"
fi

t0=$(lab_now)
piped=$(vk_fill $D "$VALKEY_KEYS")
t1=$(lab_now)
digest0=$(vk_digest $D "$VALKEY_KEYS")
dd0=$(vcli $D DEBUG DIGEST)
keys0=$(vcli $D DBSIZE)
case "$piped" in
*"errors: 0"*) lab_pass valkey.fill "$VALKEY_KEYS strings of 10 B to 64 KiB, a hash, a list in $(secs "$t0" "$t1") s: $piped; used_memory $(vcli $D INFO memory | sed -n 's/^used_memory_human://p' | tr -d '\r'); client digest $digest0, DEBUG DIGEST $dd0 keys=$keys0 errors=0" ;;
*) lab_fail valkey.fill "valkey-cli --pipe: $piped" ;;
esac
lab_line INFO valkey.figures "keys=$keys0 fill=$(secs "$t0" "$t1")"

# ---- before any dump: the protection works (a second server, smashed) ----
if vk_start $D.smash; then
	spid=$(cat $D.smash/pid)
	st=$(vcli $D.smash MODULE LOAD $VK/vk_cetsmash.so && vcli $D.smash CETSMASH.STATUS)
	got=$(vk_smash $D.smash "$spid")
	case "$got" in
	cp-fault:*) lab_pass valkey.smash-before "module loaded ($(echo $st | tr '\n' ' ')); smashed return: $got fault=SEGV_CPERR" ;;
	*) lab_fail valkey.smash-before "smashed return: $got (module: $st)" ;;
	esac
	vk_kill "$spid"
else
	lab_fail valkey.smash-before "the second server did not start"
fi

# cycle N MODE: checkpoint (MODE plain or leave-running), kill, restore, check
cycle() {
	local n=$1 mode=$2 img=$D.img$1 name=valkey.cycle$1 extra= t0 t1 t2 t3 cet dig dd w bg st locks
	mkdir -p "$img"
	[ "$mode" = leave-running ] && extra=--leave-running
	t0=$(lab_now)
	if ! $CRIU_CET dump -t "$pid" -D "$img" -o dump.log -v4 $extra; then
		lab_fail $name.dump "$mode: $(last_error "$img/dump.log")"
		return 1
	fi
	t1=$(lab_now)
	locks=$(full_locks "$img/dump.log")
	if [ "$mode" = leave-running ]; then
		dig=$(vk_digest $D "$VALKEY_KEYS")
		if alive "$pid" && [ "$dig" = "$digest0" ] && [ "$(thread_cet "$pid")" = "$cet0" ]; then
			lab_pass $name.left-running "after --leave-running: pid $pid serves on, digest equal, CET state as before"
		else
			lab_fail $name.left-running "after --leave-running: alive=$(alive "$pid" && echo yes || echo no) digest $dig (was $digest0) cet $(thread_cet "$pid")"
		fi
	fi
	vk_kill "$pid" || { lab_fail $name.dump "pid $pid still taken after SIGKILL"; return 1; }
	t2=$(lab_now)
	if ! $CRIU_CET restore -D "$img" -d -o restore.log -v4; then
		lab_fail $name.restore "$(last_error "$img/restore.log")"
		return 1
	fi
	t3=$(lab_now)
	lab_pass $name.dump "criu-cet dump ($mode) in $(secs "$t0" "$t1") s, images $(du -sh "$img" | cut -f1), threads with all 64 lock bits in criu-cet's log: all_locks=$locks threads=$(nthreads "$cet0")"
	lab_line INFO $name.times "dump=$(secs "$t0" "$t1") restore=$(secs "$t2" "$t3") mode=$mode"
	if ! WAIT_TENTHS=100 wait_for vk_answers $D; then
		lab_fail $name.restore "restore said ok, the server does not answer: $(cp_fault_of "$pid")"
		return 1
	fi
	lab_pass $name.restore "restored in $(secs "$t2" "$t3") s, pid $pid answers"
	dig=$(vk_digest $D "$VALKEY_KEYS")
	dd=$(vcli $D DEBUG DIGEST)
	if [ "$dig" = "$digest0" ] && [ "$dd" = "$dd0" ]; then
		lab_pass $name.data "$(vcli $D DBSIZE) keys, client digest $dig and DEBUG DIGEST equal"
	else
		lab_fail $name.data "client digest $dig (was $digest0), DEBUG DIGEST $dd (was $dd0), $(vcli $D DBSIZE) keys (was $keys0)"
	fi
	cet=$(thread_cet "$pid")
	if [ "$cet" = "$cet0" ] && [ "$locks" = "$(nthreads "$cet0")" ]; then
		lab_pass $name.cet "every thread's features and locks and the ss mapping count as before: $cet"
	else
		lab_fail $name.cet "after: $cet; before: $cet0; all-ones lock masks at dump: $locks"
	fi
	vcli $D MODULE LIST | grep -q cetsmash || vcli $D MODULE LOAD $VK/vk_cetsmash.so > /dev/null
	st=$(vcli $D CETSMASH.STATUS)
	w=$(vcli $D SET "new:$n" "written after restore $n" && vcli $D GET "new:$n" && vcli $D DEL "new:$n")
	w=$(echo $w)	# one line
	bg=$(vk_bgsave $D)
	case "$st / $w / $bg" in
	"status=0x1 "*" / OK written after restore $n 1 / ok "*)
		lab_pass $name.service "the module (loaded after the first restore) runs on the shadow stack ($st); SET/GET/DEL ok; BGSAVE $bg" ;;
	*) lab_fail $name.service "module: $st; write: $w; BGSAVE $bg" ;;
	esac
	rm -rf "$D.img$((n - 1))"	# the guest's memory is its disk
}

i=1
while [ $i -le "$VALKEY_CYCLES" ]; do
	mode=plain
	[ $((i % 2)) = 0 ] && mode=leave-running
	cycle $i $mode || break
	i=$((i + 1))
done
if [ $i -gt "$VALKEY_CYCLES" ]; then
	got=$(vk_smash $D "$pid")
	case "$got" in
	cp-fault:*) lab_pass valkey.smash-after "after $VALKEY_CYCLES restores: $got fault=SEGV_CPERR" ;;
	*) lab_fail valkey.smash-after "after $VALKEY_CYCLES restores: $got" ;;
	esac
fi
vk_kill "$pid"
rm -rf $D.img*

# ---- stock CRIU 4.1.1 on the same steps: what it does, reported ----
# stock_after PID CET-BEFORE DIGEST: how the server stock restored fares
stock_after() {
	local why cet
	sleep 1
	if ! vk_answers $S; then
		why=$(grep -m1 'crashed by signal' $S/server.log | sed 's/^[^#]*# //')
		echo "dead: ${why:-no answer, no crash log} $(cp_fault_of "$1")"
		return
	fi
	cet=$(thread_cet "$1")
	echo "serving; digest $([ "$(vk_digest $S "$VALKEY_KEYS")" = "$3" ] && echo equal || echo DIFFERS);" \
		"CET state $([ "$cet" = "$2" ] && echo "as before" || echo "changed: $2 -> $cet");" \
		"BGSAVE $(vk_bgsave $S | cut -d, -f1); smash: $(vk_smash $S "$1")"
}

S=$D.stock
if vk_start $S; then
	spid=$(cat $S/pid)
	vk_fill $S "$VALKEY_KEYS" > /dev/null
	sdig=$(vk_digest $S "$VALKEY_KEYS")
	scet=$(thread_cet "$spid")
	mkdir -p $S/img
	if ! $CRIU_STOCK dump -t "$spid" -D $S/img -o dump.log -v4; then
		lab_line INFO valkey.stock.dump "failed: $(last_error $S/img/dump.log)"
		alive "$spid" && lab_line INFO valkey.stock.after "the server runs on after the failed dump"
	else
		lab_line INFO valkey.stock.dump "ok"
		vk_kill "$spid"
		if ! $CRIU_STOCK restore -D $S/img -d -o restore.log -v4; then
			lab_line INFO valkey.stock.restore "failed: $(last_error $S/img/restore.log)"
		else
			lab_line INFO valkey.stock.restore "ok"
			lab_line INFO valkey.stock.after "$(stock_after "$spid" "$scet" "$sdig")"
		fi
	fi
	vk_kill "$spid"
else
	lab_skip valkey.stock "the server for stock CRIU did not start"
fi
