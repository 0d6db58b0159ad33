# SPDX-License-Identifier: GPL-2.0
# The ZDTM CET tests dumped and restored by criu-cet (CRIU 4.2.1 + our CET
# subsystem), by the lab's runner; LAB_ZDTM_CET_ONLY=TEST,... narrows it
# (suite zdtm-cet-runner).
zdtm_cet_run --flavour criu-cet --criu /lab/criu-cet/criu --dir /lab/zdtm/cet \
	${LAB_ZDTM_CET_ONLY:+--only "$LAB_ZDTM_CET_ONLY"}

# How criu-cet learned which shadow stack the kernel owns for the thread
# fiber_thread dumps on a fiber's stack: NT_X86_SHSTK_STATUS, else the probe.
log=/tmp/zdtm-cet/criu-cet/fiber_thread/img1/dump.log
told=$(grep -a -m1 'the thread runs on another one (told by' "$log" 2>/dev/null | sed 's/.*cet: //')
if [ -n "$told" ]; then
	case $told in
	*"told by NT_X86_SHSTK_STATUS"*) by=NT_X86_SHSTK_STATUS ;;
	*"told by the parasite's fork probe"*) by=fork-probe ;;
	*) by=unknown ;;
	esac
	lab_pass cet.owned-stack "$told told_by=$by"
else
	lab_fail cet.owned-stack "no owned stack found in $log"
fi
