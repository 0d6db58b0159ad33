# SPDX-License-Identifier: GPL-2.0
# criu-cet restoring under the limits of a user namespace: criu without
# CAP_SYS_RESOURCE (dropped from its bounding set), so it may not raise a
# hard rlimit.  ARCH_SHSTK_ENABLE sizes a new shadow stack by RLIMIT_STACK:
#   nocap            hard RLIMIT_STACK unlimited (the usual case): restores
#   hard-stack       hard RLIMIT_STACK 256 KiB, below the stacks' size, with
#                    the capability: criu raises it, restores
#   nocap-hard-stack both: refused before any of the task is restored, with
#                    what to do, and no task left
zdtm_cet_run --flavour nocap --restore-nocap-sys-resource --criu /lab/criu-cet/criu --dir /lab/zdtm/cet \
	--only recursion,threads,limits,orphan,fibers,locked
zdtm_cet_run --flavour hard-stack --restore-stack-hard 256 --criu /lab/criu-cet/criu --dir /lab/zdtm/cet \
	--only threads
zdtm_cet_run --flavour nocap-hard-stack --restore-nocap-sys-resource --restore-stack-hard 256 \
	--expect-restore-error "criu may not raise it" --criu /lab/criu-cet/criu --dir /lab/zdtm/cet --only threads
