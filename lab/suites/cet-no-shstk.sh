# SPDX-License-Identifier: GPL-2.0
# A kernel whose user shadow stacks are off (booted with
# clearcpuid=user_shstk: the CPU has CET, the kernel does not offer it):
# criu check says no and why; the CET service's images (/lab/images/demo,
# dumped in another boot) are refused with the reason, through the CLI and
# through the RPC, leaving no task; a task without shadow stacks is still
# dumped and restored, through both.
criu=/lab/criu-cet/criu
why="this host has no user shadow stacks"

out=$($criu check --feature shadow_stack 2>&1)
rc=$?
if [ $rc != 0 ] && echo "$out" | grep -q "(user_shstk in /proc/cpuinfo): no" &&
	echo "$out" | grep -q "cannot checkpoint or restore shadow-stack tasks (the kernel has user shadow stacks turned off)"; then
	lab_pass noshstk.check "exit $rc: user_shstk=no why=$(echo "$out" | grep -o 'cannot checkpoint.*')"
else
	lab_fail noshstk.check "exit $rc: $(echo "$out" | tr '\n' '|' | cut -c1-200)"
fi

mkdir -p /tmp/export	# the service's status file lived there
pid=$(cat /lab/images/demo/pid)
rm -rf /tmp/noshstk && cp -a /lab/images/demo /tmp/noshstk
$criu restore -D /tmp/noshstk -d -o restore.log -v4
rc=$?
said=$(grep -a -m1 "$why" /tmp/noshstk/restore.log | sed 's/^([ 0-9.]*) *//' | cut -c1-200)
if [ $rc != 0 ] && [ -n "$said" ] && ! alive "$pid"; then
	lab_pass noshstk.cli-refused "exit $rc, no task left: left=0 why=$said"
else
	lab_fail noshstk.cli-refused "exit $rc, task $(alive "$pid" && echo running || echo gone): $(last_error /tmp/noshstk/restore.log)"
fi
rm -rf /tmp/noshstk && cp -a /lab/images/demo /tmp/noshstk
said=$(rpc_cet --criu $criu refuse /tmp/noshstk)
if [ $? = 0 ] && echo "$said" | grep -q "$why" && ! alive "$pid"; then
	lab_pass noshstk.rpc-refused "no task left: left=0 why=$said"
else
	lab_fail noshstk.rpc-refused "${said:-no answer}; task $(alive "$pid" && echo running || echo gone)"
fi

zdtm_cet_run --dir /lab/zdtm/cet --only plain --flavour criu-cet.noshstk --criu $criu
zdtm_cet_run --dir /lab/zdtm/cet --only plain --flavour criu-cet.noshstk-rpc --criu $criu --rpc swrk
