# SPDX-License-Identifier: GPL-2.0
# criu-cet leaves a dumped task as it found it: after a --leave-running
# dump, and after a dump that fails half-way (out of image space).
zdtm_cet_run --flavour leave-running --mode leave-running --criu /lab/criu-cet/criu --dir /lab/zdtm/cet \
	--only recursion,threads,fibers,wrss,wrss_off,locked,mixed_threads,sighandler
zdtm_cet_run --flavour dump-fail --mode dump-fail --criu /lab/criu-cet/criu --dir /lab/zdtm/cet \
	--only recursion,threads,wrss,wrss_off,locked
# The ownership probe meets a seccomp supervisor that never answers: criu
# kills the probe after its timeout and goes on; the task runs on as it was.
zdtm_cet_run --flavour probe-hang --mode leave-running --criu /lab/criu-cet/criu --dir /lab/zdtm/cet \
	--list /lab/zdtm/cet/extra.list --only fiber_thread_hang
log=/tmp/zdtm-cet/probe-hang/fiber_thread_hang/img1/dump.log
hung=$(grep -a -c 'the probe hung' "$log" 2>/dev/null)
skipped=$(grep -a -c 'an earlier probe in this task failed' "$log" 2>/dev/null)
if grep -q "NT_X86_SHSTK_STATUS regset: yes" "$log" 2>/dev/null; then
	lab_skip cet.probe-hang "NT_X86_SHSTK_STATUS names the owned stacks, no probe ran: probes=0"
elif [ "${hung:-0}" = 1 ] && [ "${skipped:-0}" = 1 ]; then
	lab_pass cet.probe-hang "one probe killed after its timeout, the other thread not probed: hung=1 skipped=1 why=$(grep -a -m1 'the probe hung' "$log" | sed 's/.*cet: //')"
else
	lab_fail cet.probe-hang "probe hung ${hung:-0} time(s), skipped ${skipped:-0} (want 1 and 1) in $log"
fi
