# SPDX-License-Identifier: GPL-2.0
# criu-cet on the counter service, plain and on a shadow stack.
counter_cycle cet.plain /lab/criu-cet/criu
counter_cycle cet.shstk /lab/criu-cet/criu shstk

# Which kernel interface criu-cet used for the shadow-stack dump above.
log=/tmp/cet.shstk/img/dump.log
tokens=$(grep -a -c 'written by the tracer' "$log")
if grep -q "NT_X86_SHSTK_STATUS regset: yes" "$log"; then
	lab_pass cet.kernel-regset "NT_X86_SHSTK_STATUS used: $(grep -a -m1 '(NT_X86_SHSTK_STATUS)' "$log" | sed 's/.*cet: //'); sigreturn tokens written by the tracer interface=NT_X86_SHSTK_STATUS tokens=$tokens"
elif grep -q "NT_X86_SHSTK_STATUS regset: no" "$log"; then
	lab_skip cet.kernel-regset "no NT_X86_SHSTK_STATUS in this kernel: stock interfaces used interface=stock tokens=$tokens"
else
	lab_fail cet.kernel-regset "no probe result in $log"
fi

# criu check --feature shadow_stack: this lab CPU and kernel can; the regset
# line tells the patched kernel from the stock one.  criu --version names us.
out=$(/lab/criu-cet/criu check --feature shadow_stack 2>&1)
rc=$?
regset=$(echo "$out" | sed -n 's/^shadow_stack: NT_X86_SHSTK_STATUS regset[^:]*: //p')
if [ $rc = 0 ] && echo "$out" | grep -q "shadow_stack is supported" &&
	echo "$out" | grep -q "CPU shadow stacks (CPUID CET_SS): yes" &&
	echo "$out" | grep -q "(user_shstk in /proc/cpuinfo): yes"; then
	lab_pass cet.check-feature "supported; NT_X86_SHSTK_STATUS: $regset regset=${regset%%,*}"
else
	lab_fail cet.check-feature "rc $rc: $(echo "$out" | tr '\n' '|' | cut -c1-200)"
fi
ver=$(/lab/criu-cet/criu --version | tr '\n' '|')
case $ver in
"Version: 4.2.1|Flavour: criu-cet "*) lab_pass cet.version "$ver" ;;
*) lab_fail cet.version "$ver" ;;
esac
