# SPDX-License-Identifier: GPL-2.0
# The emulated CPU and the kernel give real shadow stacks.
if grep -qw user_shstk /proc/cpuinfo; then
	lab_pass cet.cpuinfo "user_shstk in /proc/cpuinfo flags"
else
	lab_fail cet.cpuinfo "no user_shstk in /proc/cpuinfo"
fi
cet_basics
ptrace_sigreturn
