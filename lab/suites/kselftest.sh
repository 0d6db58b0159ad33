# SPDX-License-Identifier: GPL-2.0
# Kernel selftests in the guest (built by lab/build/kselftests.sh):
#   kselftest.shstk-status.<case>    test_shstk_status, the NT_X86_SHSTK_STATUS
#                                  regset tests: ksft ok/not ok/skip lines
#   kselftest.shadow-stack.<case>  the kernel's own test_shadow_stack:
#                                  [OK]/[FAIL]/[SKIP] lines
# Every line of both programs is echoed ("  | ...") for the serial log.

# slug TEXT: a result name from a test_shadow_stack message
slug() {
	echo "$1" | tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//'
}

# ksft_to_lab PREFIX: ksft (TAP) lines on stdin -> lab lines
ksft_to_lab() {
	local prefix=$1 line name detail
	while IFS= read -r line; do
		echo "  | $line"
		case $line in
		"ok "[0-9]*|"not ok "[0-9]*) ;;
		*) continue ;;
		esac
		name=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ ([^ #]+).*/\2/')
		detail=$(echo "$line" | sed -n -E 's/^[^#]*# *(SKIP)? *//p')
		case $line in
		"not ok "*) lab_fail "$prefix.$name" "${detail:-not ok}" ;;
		*"# SKIP"*) lab_skip "$prefix.$name" "${detail:-skipped}" ;;
		*) lab_pass "$prefix.$name" "${detail:-ok}" ;;
		esac
	done
}

# ---- the regset tests ----
if [ -x /lab/bin/test_shstk_status ]; then
	test_shstk_status > /tmp/shstk-status.out 2>&1
	rc=$?
	ksft_to_lab kselftest.shstk-status < /tmp/shstk-status.out
	if grep -q '^ok\|^not ok' /tmp/shstk-status.out; then
		lab_line INFO kselftest.shstk-status.exit "$rc"
	else
		lab_fail kselftest.shstk-status.run "no ksft result lines (exit $rc)"
	fi
else
	lab_fail kselftest.shstk-status.run "test_shstk_status is not in the initramfs"
fi

# ---- the kernel's own test_shadow_stack ----
# shstk_to_lab PREFIX: [OK]/[FAIL]/[SKIP] lines on stdin -> lab lines.
# On 6.12 its userfaultfd part fails (the kernel refuses userfaultfd on
# shadow stack mappings with EINVAL) and the program stops there: that FAIL
# is reported as a SKIP naming the known cause, but only when uffd-helper
# shows that cause on this kernel.
# test_shadow_stack forks with its stdout buffer unflushed, so a line can
# come twice when stdout is a file: the same result line is counted once.
shstk_to_lab() {
	local prefix=$1 line kind text name seen=" "
	while IFS= read -r line; do
		echo "  | $line"
		kind=$(echo "$line" | sed -n 's/^\[\([A-Z]*\)\].*/\1/p')
		text=$(echo "$line" | sed 's/^\[[A-Z]*\][[:space:]]*//')
		case $kind in
		OK|SKIP|FAIL) ;;
		*) continue ;;
		esac
		name=$(slug "$text")
		case $seen in
		*" $kind:$name "*) continue ;;
		esac
		seen="$seen$kind:$name "
		case $kind in
		OK) lab_pass "$prefix.$name" "$text" ;;
		SKIP)
			if [ "$text" = "Userfaultfd unavailable." ] && [ "$uffd_blocked" = 1 ]; then
				lab_skip "$prefix.$name" "userfaultfd(2) blocked on purpose in this run (uffd-helper block)"
			else
				lab_skip "$prefix.$name" "$text"
			fi ;;
		FAIL)
			if [ "$text" = "Userfaultfd test" ] && [ "$uffd_known" = EINVAL ]; then
				lab_skip "$prefix.$name" "known 6.12 result, not a pass: $uffd_probe; test_shadow_stack stops after it, the no-uffd run covers the rest"
			else
				lab_fail "$prefix.$name" "$text"
			fi ;;
		esac
	done
}

if [ -x /lab/bin/test_shadow_stack ]; then
	uffd_probe=$(uffd-helper probe 2>&1)
	case $uffd_probe in
	*": EINVAL") uffd_known=EINVAL ;;
	*) uffd_known= ;;
	esac
	lab_line INFO kselftest.shadow-stack.uffd-probe "$(echo "$uffd_probe" | tr ' ' '_')"

	# 1. as it is
	test_shadow_stack > /tmp/shstk.out 2>&1
	rc=$?
	uffd_blocked=0
	shstk_to_lab kselftest.shadow-stack < /tmp/shstk.out
	if [ $rc -eq 0 ]; then
		lab_pass kselftest.shadow-stack.exit "exit 0"
	elif [ $rc -eq 1 ] && [ "$uffd_known" = EINVAL ] &&
	     grep -q '^\[FAIL\].Userfaultfd test$' /tmp/shstk.out &&
	     [ "$(grep -c '^\[FAIL\]' /tmp/shstk.out)" -eq 1 ]; then
		lab_skip kselftest.shadow-stack.exit "exit 1 from the known userfaultfd EINVAL only"
	else
		lab_fail kselftest.shadow-stack.exit "exit $rc"
	fi

	# 2. with userfaultfd(2) answering ENOSYS, to run the parts after it
	uffd-helper block test_shadow_stack > /tmp/shstk-nouffd.out 2>&1
	rc=$?
	uffd_blocked=1
	shstk_to_lab kselftest.shadow-stack.no-uffd < /tmp/shstk-nouffd.out
	if [ $rc -eq 0 ]; then
		lab_pass kselftest.shadow-stack.no-uffd.exit "exit 0"
	else
		lab_fail kselftest.shadow-stack.no-uffd.exit "exit $rc"
	fi
else
	lab_fail kselftest.shadow-stack.run "test_shadow_stack is not in the initramfs"
fi
