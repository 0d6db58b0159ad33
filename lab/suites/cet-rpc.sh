# SPDX-License-Identifier: GPL-2.0
# CET tasks checkpointed and restored through CRIU's RPC, as container
# runtimes do: `criu swrk` (runc, libcriu) and `criu service`, driven by
# rpc_cet (criu-cet's libcriu).  The ZDTM CET tests in both ways, a dump
# with --leave-running, a dump that fails; images made by another CRIU,
# restored; and an error that comes back through the RPC with its reason.
tests=plain,churn,threads,fibers,fiber_thread,locked,wrss,sighandler
criu=/lab/criu-cet/criu
zdtm_cet_run --dir /lab/zdtm/cet --only "$tests" --flavour criu-cet.rpc-swrk --criu $criu --rpc swrk
zdtm_cet_run --dir /lab/zdtm/cet --only churn,locked --flavour criu-cet.rpc-swrk-leave-running --criu $criu \
	--rpc swrk --mode leave-running
zdtm_cet_run --dir /lab/zdtm/cet --only churn,locked --flavour criu-cet.rpc-swrk-dump-fail --criu $criu \
	--rpc swrk --mode dump-fail
zdtm_cet_run --dir /lab/zdtm/cet --only plain,locked --flavour stock-4.1.1.rpc-swrk --criu /lab/criu-stock/criu \
	--rpc swrk

zdtm_cet_run --dir /lab/zdtm/cet --only "$tests" --flavour criu-cet.rpc-service --criu $criu --rpc service

# A CET task dumped by stock CRIU 4.1.1 (upstream's xsave entry only: features
# and SSP, no lock mask, no owned stack): criu-cet restores it through the
# RPC and on the CLI with what the image has, every lock bit (as glibc
# locks), and says so in its log.  The task serves on, its stack intact.
# adopt HOW DIR: one restore of DIR's images, checked; 0 when it passed
adopt() {
	local how=$1 dir=$2 log=$2/run/restore.log pid= said before after feat cet warned
	rm -rf $dir/run $dir/pid && cp -a $dir/img $dir/run
	if [ $how = rpc ]; then
		said=$(rpc_cet --criu $criu --pidfile $dir/pid restore $dir/run)
	else
		$criu restore -D $dir/run -d --pidfile $dir/pid -o restore.log -v4
		said="exit $?"
	fi
	[ -s $dir/pid ] && pid=$(cat $dir/pid)
	if [ -z "$pid" ] || ! alive $pid; then
		lab_fail $how.adopt-other-criu "$said: $(last_error $log)"
		return 1
	fi
	before=$(service_count $dir/status)
	sleep 0.5
	after=$(service_count $dir/status)
	feat="$(status_field $pid x86_Thread_features) locked: $(status_field $pid x86_Thread_features_locked)"
	cet="features=$(status_field $pid x86_Thread_features ,) locked=$(status_field $pid x86_Thread_features_locked ,)"
	warned=$(grep -a -m1 -o "[0-9]* thread(s) on shadow stacks dumped by a CRIU without criu-cet.*" $log)
	smash=$(smash_service $pid $dir/status)
	if [ "$after" -gt "$before" ] 2>/dev/null && [ "$feat" = "shstk locked: shstk wrss" ] && [ -n "$warned" ] &&
		echo "$smash" | grep -q SEGV_CPERR; then
		lab_pass $how.adopt-other-criu "serving (count $before -> $after), smash $smash: $cet fault=SEGV_CPERR why=$warned"
	else
		lab_fail $how.adopt-other-criu "count $before -> $after, $feat, smash $smash; log: ${warned:-no warning}"
	fi
	kill -9 $pid 2>/dev/null
	wait_for test ! -d /proc/$pid
}
dir=/tmp/rpc-other && rm -rf $dir && mkdir -p $dir/img
setsid demo_service $dir/status > /dev/null 2>&1 &
pid=$!
wait_for test -s $dir/status
if /lab/criu-stock/criu dump -t $pid -D $dir/img -o dump.log -v4; then
	wait $pid 2>/dev/null
	adopt rpc $dir
	adopt cli $dir
else
	lab_fail rpc.adopt-other-criu "stock 4.1.1 could not dump: $(last_error $dir/img/dump.log)"
	kill -9 $pid
fi

# A restore criu must refuse (the dumped task still runs, so its pid is
# taken): the reason comes back in the RPC response, and nothing is left.
dir=/tmp/rpc-refuse && rm -rf $dir && mkdir -p $dir/img
setsid demo_service $dir/status > /dev/null 2>&1 &
pid=$!
wait_for test -s $dir/status
if rpc_cet --criu $criu dump $pid $dir/img leave-running > /dev/null; then
	tasks=$(ls /proc | grep -c '^[0-9]')
	said=$(rpc_cet --criu $criu refuse $dir/img)
	if [ $? = 0 ] && alive $pid && [ "$(ls /proc | grep -c '^[0-9]')" -le "$tasks" ]; then
		lab_pass rpc.refuse "the dumped task runs on, no task left: task=running left=0 why=$said"
	else
		lab_fail rpc.refuse "${said:-no answer}; dumped task $(alive $pid && echo running || echo gone)"
	fi
else
	lab_fail rpc.refuse "criu-cet could not dump: $(last_error $dir/img/dump.log)"
fi
kill -9 $pid
