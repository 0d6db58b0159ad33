# SPDX-License-Identifier: GPL-2.0
# Helpers for the lab's guest suites (sourced by busybox sh).
# The host parses lines "@@LAB <KIND> <name> <detail>" from the serial log.

lab_line() { echo "@@LAB $*"; }
lab_pass() { lab_line PASS "$1" "$2"; }
lab_fail() { lab_line FAIL "$1" "$2"; }
lab_skip() { lab_line SKIP "$1" "$2"; }

# guest time in seconds (monotonic; repeatable under clock: sync=none)
lab_now() { cut -d' ' -f1 /proc/uptime; }

# alive PID: the task exists and is not a zombie
alive() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# wait_for CMD...: up to ~10 s for CMD to succeed
wait_for() {
	local i=0
	while ! "$@"; do
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		sleep 0.1
	done
}

# last_error LOG: the first error line of a CRIU log, for a one-line detail
last_error() {
	grep -m1 -E 'Error|error|fail' "$1" 2>/dev/null | cut -c1-160
}

# cp_fault_of PID: the kernel's control-protection report for PID, if any
cp_fault_of() {
	dmesg | grep -m1 "\[$1\] control protection" | sed 's/^\[[^]]*\] //' | cut -c1-160
}
