# SPDX-License-Identifier: GPL-2.0
# criu itself on a shadow stack, as on a distribution whose glibc is built
# with CET: the glibc overlay holds each criu relinked against the CET
# glibc and SHSTK-marked (lab/build/relink-criu-cet-glibc.sh).  glibc.cpu.hwcaps=
# SHSTK lets glibc use shadow stacks, glibc.cpu.x86_shstk=on keeps it on
# although Debian's libraries criu loads are not marked; glibc locks it.  First proof that criu really runs so (its own
# /proc/PID/status), then the ZDTM CET tests (hand-enabled and glibc's)
# dumped and restored by it: criu-cet, and stock CRIU 4.1.1 beside.
bin=/lab/cet-glibc/bin
if [ ! -x $bin/criu-cet ]; then
	lab_skip criu-on-shstk "no CET glibc criu in this guest (the glibc overlay: make glibc-overlay)"
	return 0
fi

# criu_on_shstk NAME: a wrapper that runs $bin/NAME with glibc's shadow stack on
criu_on_shstk() {
	printf '#!/bin/sh\nGLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK:glibc.cpu.x86_shstk=on exec %s/%s "$@"\n' \
		$bin "$1" > /tmp/$1-shstk
	chmod 755 /tmp/$1-shstk
	echo /tmp/$1-shstk
}

# criu's own CET state, from a criu service left waiting on its socket
own_state() {
	local name=$1 criu=$2 pid st cet
	rm -f /tmp/$name.sock
	$criu service --address /tmp/$name.sock -o /tmp/$name-service.log -v4 &
	pid=$!
	if ! wait_for test -S /tmp/$name.sock; then
		lab_fail criu-on-shstk.$name.self "criu service did not start: $(last_error /tmp/$name-service.log)"
		kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; return 1
	fi
	st="$(grep -E '^x86_Thread_features(_locked)?:' /proc/$pid/status | tr -s '\t ' ' ' | tr '\n' ';')"
	cet="features=$(status_field $pid x86_Thread_features ,) locked=$(status_field $pid x86_Thread_features_locked ,)"
	kill $pid; wait $pid 2>/dev/null
	case $st in
	"x86_Thread_features: shstk ;x86_Thread_features_locked: shstk wrss ;")
		lab_pass criu-on-shstk.$name.self "criu runs on glibc's shadow stack: $st $cet" ;;
	*)	lab_fail criu-on-shstk.$name.self "criu's own state is not glibc's shadow stack: $st"; return 1 ;;
	esac
}

ours=$(criu_on_shstk criu-cet)
stock=$(criu_on_shstk criu-stock)
if own_state criu-cet $ours; then
	zdtm_cet_run --flavour criu-cet.on-shstk --criu $ours --dir /lab/zdtm/cet
	if [ -f /lab/zdtm/cet-glibc/glibc.list ]; then
		GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK zdtm_cet_run --flavour criu-cet.on-shstk --criu $ours \
			--dir /lab/zdtm/cet-glibc --list /lab/zdtm/cet-glibc/glibc.list
	fi
	zdtm_cet_run --dir /lab/zdtm/cet --only plain,churn,locked --flavour criu-cet.on-shstk.rpc-swrk \
		--criu $ours --rpc swrk
fi
if own_state criu-stock $stock; then
	zdtm_cet_run --flavour stock-4.1.1.on-shstk --criu $stock --dir /lab/zdtm/cet --only plain,recursion,threads,locked,fibers
fi
