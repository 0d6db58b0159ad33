# SPDX-License-Identifier: GPL-2.0
# The CET glibc (lab/build/glibc.sh, in the guest through the overlay
# lab/overlays/cet-glibc.sh or lab/overlays/valkey.sh): a program built with
# lab/build/cet-cc and no shadow-stack code of its own runs on a shadow stack,
# locked by glibc, in every thread and makecontext context, when
# GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK asks for it; without the tunable it
# runs with shadow stacks off.  A smashed return is caught only with it.
PROBE=/lab/cet-glibc/cet_probe
SHSTK=glibc.cpu.hwcaps=SHSTK

if [ ! -x $PROBE ]; then
	lab_skip cet-glibc.setup "the CET glibc is not in the guest (run.py --overlay build/overlay-cet-glibc or build/overlay-valkey)"
	return 0
fi

# probe_field LINES WHO FIELD: FIELD=... of cet_probe's line for WHO
probe_field() { echo "$1" | grep "^cet_probe $2 " | tr ' ' '\n' | sed -n "s/^$3=//p"; }

out=$(GLIBC_TUNABLES=$SHSTK $PROBE 2>&1)
echo "$out" | sed 's/^/  /'
bad=
for who in main thread context end; do
	[ "$(probe_field "$out" $who features)" = shstk ] || bad="$bad $who:features"
	[ "$(probe_field "$out" $who locked)" = shstk,wrss ] || bad="$bad $who:locked"
	[ "$(probe_field "$out" $who status)" = 0x1 ] || bad="$bad $who:status"
done
main_ssp=$(probe_field "$out" main ssp) ctx_ssp=$(probe_field "$out" context ssp)
[ "$main_ssp" != 0 ] && [ -n "$main_ssp" ] && [ "$ctx_ssp" != "$main_ssp" ] || bad="$bad ssp"
ss=$(echo "$out" | sed -n 's/^cet_probe ss mappings=\([0-9]*\) before makecontext=\([0-9]*\)/\1 \2/p')
set -- $ss
[ "${1:-0}" -gt "${2:-0}" ] || bad="$bad makecontext-ss"
if [ -z "$bad" ]; then
	lab_pass cet-glibc.shstk "with $SHSTK: main, pthread and makecontext context on shadow stacks, ARCH_SHSTK_STATUS 0x1; the context's own stack (ssp $ctx_ssp, main $main_ssp; ss mappings $2 -> $1) features=$(probe_field "$out" main features) locked=$(probe_field "$out" main locked)"
else
	lab_fail cet-glibc.shstk "wrong:$bad; $(echo "$out" | tr '\n' ';')"
fi

out=$($PROBE 2>&1)
if [ "$(probe_field "$out" main features)" = - ] && [ "$(probe_field "$out" thread status)" = 0 ] &&
	[ "$(probe_field "$out" context locked)" = - ]; then
	lab_pass cet-glibc.off "without the tunable: shadow stacks off, nothing locked ($(echo "$out" | head -1))"
else
	lab_fail cet-glibc.off "$(echo "$out" | tr '\n' ';')"
fi

# smash [TUNABLES]: the probe's exit status and the kernel's report
smash() {
	local mark rc
	mark=$(dmesg | wc -l)
	GLIBC_TUNABLES=$1 $PROBE smash > /tmp/cet-probe.out 2>&1
	rc=$?
	echo "rc=$rc $(tail -1 /tmp/cet-probe.out) $(dmesg | tail -n +$((mark + 1)) | grep -m1 'control protection' | sed 's/^\[[^]]*\] //' | cut -c1-120)"
}
got=$(smash $SHSTK)
case "$got" in
"rc=139 "*"control protection"*) lab_pass cet-glibc.smash "with $SHSTK: SIGSEGV, $got fault=control-protection" ;;
*) lab_fail cet-glibc.smash "with $SHSTK: $got" ;;
esac
got=$(smash "")
case "$got" in
"rc=3 "*followed*) lab_pass cet-glibc.smash-off "without the tunable the smash is followed: $got" ;;
*) lab_fail cet-glibc.smash-off "without the tunable: $got" ;;
esac
