# SPDX-License-Identifier: GPL-2.0
# criu-cet leaves a dumped task as it found it: after a --leave-running
# dump, and after a dump that fails half-way (out of image space).
zdtm_cet_run --flavour leave-running --mode leave-running --criu /lab/criu-cet/criu --dir /lab/zdtm/cet \
	--only recursion,threads,fibers,wrss,wrss_off,locked,mixed_threads,sighandler
zdtm_cet_run --flavour dump-fail --mode dump-fail --criu /lab/criu-cet/criu --dir /lab/zdtm/cet \
	--only recursion,threads,wrss,wrss_off,locked
