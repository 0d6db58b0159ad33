# SPDX-License-Identifier: GPL-2.0
# glibc's own shadow-stack code across checkpoint/restore: the ZDTM CET
# tests of test/zdtm/cet/glibc, linked against the CET glibc (the glibc
# overlay), run with GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK so that glibc's
# loader turns their shadow stacks on and locks them: makecontext and
# swapcontext, longjmp, threads, dlopen, fork and exec, siglongjmp out of
# a handler.  Without C/R first (the tests themselves pass), then with
# criu-cet and with stock CRIU 4.1.1.
dir=/lab/zdtm/cet-glibc
if [ ! -f $dir/glibc.list ]; then
	lab_skip zdtm.cet.glibc "no CET glibc tests in this guest (the glibc overlay: make glibc-overlay)"
	return 0
fi
export GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK
zdtm_cet_run --flavour nocr --nocr --dir $dir --list $dir/glibc.list
zdtm_cet_run --flavour criu-cet --criu /lab/criu-cet/criu --dir $dir --list $dir/glibc.list
zdtm_cet_run --flavour stock-4.1.1 --criu /lab/criu-stock/criu --dir $dir --list $dir/glibc.list
unset GLIBC_TUNABLES
