# SPDX-License-Identifier: GPL-2.0
# make demo: a real service on glibc's shadow stacks.  valkey 8.1.1, built
# against the CET glibc (overlay lab/overlays/valkey.sh), runs with every
# thread on a shadow stack that glibc turned on and locked; it is filled,
# checkpointed with criu-cet, killed, restored, and shown to hold the same
# data, to work (writes, BGSAVE) and to be still protected.
say() { echo "demo: $*"; }
criu=/lab/criu-cet/criu
KEYS=2000

if [ ! -x /lab/valkey/valkey-server ]; then
	lab_skip demo.setup "valkey is not in the guest (run.py --overlay build/overlay-valkey)"
	return 0
fi
. /lab/valkey/lib.sh
D=/tmp/demo-vk

say "CPU:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), kernel $(uname -r), $(grep -ow user_shstk /proc/cpuinfo | head -1) on"
if ! vk_start $D; then
	lab_fail demo.start "valkey-server did not answer"
	return 0
fi
pid=$(cat $D/pid)
mkdir -p $D/img
cet0=$(thread_cet "$pid")
say "started $($VK/valkey-server --version | cut -d' ' -f1-3) with GLIBC_TUNABLES=$VK_SHSTK, pid $pid"
say "$(nthreads "$cet0") threads, each with x86_Thread_features: shstk, locked: shstk wrss (glibc's lock)"
vk_fill $D $KEYS > /dev/null
digest0=$(vk_digest $D $KEYS)
say "filled through valkey-cli --pipe: $(vcli $D DBSIZE) keys (10 B to 64 KiB, a hash, a list), digest $digest0"

t0=$(lab_now)
if ! $criu dump -t "$pid" -D $D/img -o dump.log -v4; then
	lab_fail demo.checkpoint "$(last_error $D/img/dump.log)"
	return 0
fi
t1=$(lab_now)
vk_kill "$pid"
say "checkpointed with criu-cet in $(secs "$t0" "$t1") s (guest time), images $(du -sh $D/img | cut -f1); killed: $(alive "$pid" && echo still there || echo no pid $pid)"
t1=$(lab_now)
if ! $criu restore -D $D/img -d -o restore.log -v4; then
	lab_fail demo.restore "$(last_error $D/img/restore.log)"
	return 0
fi
t2=$(lab_now)
say "restored in $(secs "$t1" "$t2") s, pid $pid answers: $(vcli $D PING)"
digest1=$(vk_digest $D $KEYS)
cet1=$(thread_cet "$pid")
say "digest $digest1: $([ "$digest1" = "$digest0" ] && echo equal || echo DIFFERENT)"
say "threads: $([ "$cet1" = "$cet0" ] && echo "the same $(nthreads "$cet1"), shadow stacks on and locked as before" || echo "CHANGED: $cet1")"
bg=$(vk_bgsave $D)
say "BGSAVE (a fork of the restored server): $bg"
if [ "$digest1" = "$digest0" ] && [ "$cet1" = "$cet0" ] && [ "${bg%% *}" = ok ]; then
	lab_pass demo.resume "digest $digest1 equal, $cet1, BGSAVE $bg"
else
	lab_fail demo.resume "digest $digest1 (was $digest0), cet $cet1 (was $cet0), BGSAVE $bg"
fi

say "now the attack: a module command overwrites its own return address"
got=$(vk_smash $D "$pid")
say "valkey's crash log says: ${got#cp-fault: }"
case "$got" in
cp-fault:*)
	say "the restored service is still protected by its shadow stack"
	lab_pass demo.protected "$got fault=SEGV_CPERR" ;;
*) lab_fail demo.protected "$got" ;;
esac
vk_kill "$pid"
