# SPDX-License-Identifier: GPL-2.0
# CET tasks checkpointed and restored through CRIU's RPC, as container
# runtimes do: `criu swrk` (runc, libcriu) and `criu service`, driven by
# rpc_cet (criu-cet's libcriu).  The ZDTM CET tests in both ways, a dump
# with --leave-running, a dump that fails; and errors that come back through
# the RPC with their reason: images made by another CRIU, refused.
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

# A CET task dumped by stock CRIU 4.1.1 (its images have no criu-cet entry):
# criu-cet refuses them, with the reason in the RPC response and on the CLI.
dir=/tmp/rpc-other && rm -rf $dir && mkdir -p $dir/img
setsid demo_service $dir/status > /dev/null 2>&1 &
pid=$!
wait_for test -s $dir/status
if /lab/criu-stock/criu dump -t $pid -D $dir/img -o dump.log -v4; then
	wait $pid 2>/dev/null
	said=$(rpc_cet --criu $criu refuse $dir/img)
	if [ $? = 0 ] && ! alive $pid; then
		lab_pass rpc.refuse-other-criu "$said; no task left"
	else
		lab_fail rpc.refuse-other-criu "${said:-no answer}; task $(alive $pid && echo running || echo gone)"
		kill -9 $pid 2>/dev/null
	fi
	$criu restore -D $dir/img -d -o restore-cli.log -v4
	rc=$?
	said=$(grep -a -m1 "Error" $dir/img/restore-cli.log | sed 's/^([ 0-9.]*) *//' | cut -c1-160)
	if [ $rc != 0 ] && echo "$said" | grep -q "criu-cet entry" && ! alive $pid; then
		lab_pass cli.refuse-other-criu "exit $rc: $said; no task left"
	else
		lab_fail cli.refuse-other-criu "exit $rc: $said; task $(alive $pid && echo running || echo gone)"
		kill -9 $pid 2>/dev/null
	fi
else
	lab_fail rpc.refuse-other-criu "stock 4.1.1 could not dump: $(last_error $dir/img/dump.log)"
	kill -9 $pid
fi
