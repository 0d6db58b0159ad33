# SPDX-License-Identifier: GPL-2.0
# criu-cet on the counter service, plain and on a shadow stack.
counter_cycle cet.plain /lab/criu-cet/criu
counter_cycle cet.shstk /lab/criu-cet/criu shstk

# Which kernel interface criu-cet used for the shadow-stack dump above.
log=/tmp/cet.shstk/img/dump.log
if grep -q "NT_X86_CET_USER regset: yes" "$log"; then
	lab_pass cet.kernel-regset "NT_X86_CET_USER used: $(grep -a -m1 '(NT_X86_CET_USER)' "$log" | sed 's/.*cet: //'); $(grep -a -c 'written by the tracer' "$log") sigreturn token(s) written by the tracer"
elif grep -q "NT_X86_CET_USER regset: no" "$log"; then
	lab_skip cet.kernel-regset "no NT_X86_CET_USER in this kernel: stock interfaces used ($(grep -a -c 'written by the tracer' "$log") sigreturn token(s) written by the tracer)"
else
	lab_fail cet.kernel-regset "no probe result in $log"
fi
