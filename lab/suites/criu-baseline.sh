# SPDX-License-Identifier: GPL-2.0
# Stock CRIU 4.1.1 in the lab: a plain process survives dump + restore; a
# shadow-stack one is the known-failing baseline this project exists to fix.

count_of() { cut -d' ' -f1 "$1" 2>/dev/null; }

# counter_cycle NAME CRIU [shstk]: start counter, dump, restore, check it counts on
counter_cycle() {
	local name=$1 criu=$2 mode=$3 dir=/tmp/$1 pid c0 c1 c2 why
	rm -rf "$dir" && mkdir -p "$dir/img"
	setsid counter "$dir/count" $mode > "$dir/out" 2>&1 &
	pid=$!
	if ! wait_for test -s "$dir/count"; then
		lab_fail "$name" "counter did not start"; return
	fi
	c0=$(count_of "$dir/count")
	if ! "$criu" dump -t "$pid" -D "$dir/img" -o dump.log -v4; then
		lab_fail "$name" "dump failed: $(last_error "$dir/img/dump.log")"
		kill -9 "$pid"; wait "$pid"; return
	fi
	wait "$pid" 2>/dev/null	# reap it: restore needs the pid back
	if ! "$criu" restore -D "$dir/img" -d -o restore.log -v4; then
		lab_fail "$name" "restore failed: $(last_error "$dir/img/restore.log")"; return
	fi
	c1=$(count_of "$dir/count")
	sleep 1
	c2=$(count_of "$dir/count")
	if alive "$pid" && [ "$c2" -gt "$c1" ]; then
		lab_pass "$name" "pid $pid counting on after restore ($c0 at dump, $c1 -> $c2; $(cut -d' ' -f2- "$dir/count"))"
		kill -9 "$pid"
	else
		why=$(cp_fault_of "$pid")
		lab_fail "$name" "restore reported success, then the task died (count stuck at $c2): ${why:-no kernel report}"
	fi
}

counter_cycle stock.plain /lab/criu-stock/criu
counter_cycle stock.shstk /lab/criu-stock/criu shstk
