# SPDX-License-Identifier: GPL-2.0
# Images from one CRIU restored by another: every pair of criu-cet, CRIU
# 4.2.1 (criu-cet's base; the criu-4.2.1 overlay) and stock 4.1.1, for a
# CET task (demo_service: shadow stack on, locked as glibc locks it, with
# ARCH_SHSTK_LOCK(-1)) and a plain one (counter).  A line a direction:
#
#   @@LAB PASS|FAIL|SKIP dirs.<task>.<dumper>.<restorer> restored=yes|no
#       features=F locked=L ss=N smash=caught|missed|- before=<the same, dumped> why=<text>
#
# PASS: the restored task runs on (its counter moves) with the features and
# locks it had and as many shadow-stack mappings, and an overwritten return
# address still stops it (CET task).  Each dumper's images of the CET task
# go to the host too (@@BLOB dirs-<dumper>), for crit.
CRIU_DIRS="criu-cet:/lab/criu-cet/criu criu-4.2.1:/lab/criu-4.2.1/criu stock:/lab/criu-stock/criu"

criu_of() { echo "$CRIU_DIRS" | tr ' ' '\n' | sed -n "s|^$1:||p"; }

# task_state PID: features, locks and shadow-stack mappings, as fields
task_state() {
	echo "features=$(status_field "$1" x86_Thread_features +) locked=$(status_field "$1" x86_Thread_features_locked +)" \
		"ss=$(ss_count "$1")"
}

# start_task TASK DIR: the task in the background, its pid on stdout
start_task() {
	case $1 in
	cet) setsid demo_service "$2/status" > /dev/null 2>&1 & ;;
	plain) setsid counter "$2/status" > /dev/null 2>&1 & ;;
	esac
	echo $!
}

# count_now TASK DIR: the task's count; counter rewrites its file in
# place, so an empty read is retried
count_now() {
	local i=0 c
	while [ $i -lt 20 ]; do
		case $1 in
		cet) c=$(service_count "$2/status") ;;
		plain) c=$(count_of "$2/status") ;;
		esac
		[ -n "$c" ] && { echo "$c"; return; }
		sleep 0.05
		i=$((i + 1))
	done
}

# direction TASK DUMPER RESTORER
direction() {
	local task=$1 from=$2 to=$3 dir=/tmp/dirs/$1.$2.$3 name=dirs.$1.$2.$3 pid before after was c1 c2 sm=-
	rm -rf "$dir" && mkdir -p "$dir/img"
	pid=$(start_task "$task" "$dir")
	if ! wait_for test -s "$dir/status"; then
		lab_fail "$name" "restored=no why=the task did not start"
		return
	fi
	before=$(task_state "$pid" | tr ' ' ,)
	if ! "$(criu_of "$from")" dump -t "$pid" -D "$dir/img" -o dump.log -v4; then
		lab_fail "$name" "restored=no before=$before why=$from's dump failed: $(last_error "$dir/img/dump.log")"
		kill -9 "$pid" 2>/dev/null
		return
	fi
	wait_for test ! -d "/proc/$pid"
	if [ "$task" = cet ] && [ ! -e "/tmp/dirs/blob-$from" ]; then
		touch "/tmp/dirs/blob-$from"
		echo "$pid" > "$dir/img/pid"
		tar -C "$dir/img" -cz . | base64 | sed "s/^/@@BLOB dirs-$from /"
		echo "@@BLOB dirs-$from END"
		rm "$dir/img/pid"
	fi
	if ! "$(criu_of "$to")" restore -D "$dir/img" -d -o restore.log -v4; then
		lab_fail "$name" "restored=no before=$before why=$to's restore failed, task $(alive "$pid" &&
			echo left running || echo gone): $(last_error "$dir/img/restore.log")"
		kill -9 "$pid" 2>/dev/null
		return
	fi
	c1=$(count_now "$task" "$dir")
	sleep 0.5
	c2=$(count_now "$task" "$dir")
	if ! alive "$pid"; then
		lab_fail "$name" "restored=no before=$before why=restored, then died: $(cp_fault_of "$pid")"
		return
	fi
	after=$(task_state "$pid")
	if [ "$task" = cet ]; then
		smash_service "$pid" "$dir/status" | grep -q SEGV_CPERR && sm=caught || sm=missed
	fi
	kill -9 "$pid" 2>/dev/null
	wait_for test ! -d "/proc/$pid"
	if [ "$c2" -gt "$c1" ] 2>/dev/null && [ "$(echo "$after" | tr ' ' ,)" = "$before" ] && [ "$sm" != missed ]; then
		lab_pass "$name" "restored=yes $after smash=$sm before=$before why=as dumped"
	else
		was=$(echo "$before" | tr , ' ')
		lab_fail "$name" "restored=yes $after smash=$sm before=$before why=not as dumped: $was -> $after, count $c1 -> $c2"
	fi
}

mkdir -p /tmp/dirs
for from in criu-cet criu-4.2.1 stock; do
	for to in criu-cet criu-4.2.1 stock; do
		for task in cet plain; do
			if [ ! -x "$(criu_of "$from")" ] || [ ! -x "$(criu_of "$to")" ]; then
				lab_skip "dirs.$task.$from.$to" "why=no CRIU 4.2.1 in this guest (the criu-4.2.1 overlay)"
				continue
			fi
			direction "$task" "$from" "$to"
		done
	done
done
rm -rf /tmp/dirs
