# SPDX-License-Identifier: GPL-2.0
# What criu pays for a task: a ZDTM CET test dumped and restored once by
# each CRIU, with criu's peak RSS, times (guest) and the image size.  Figures,
# not tests: lines "@@LAB INFO cost.<test>.<criu> ...".
#   sparse        three 160 MiB map_shadow_stack mappings, a page used in each
#   many_threads  300 threads, each on its own shadow stack
cost_of() {	# TEST NAME CRIU
	local d=/tmp/cost/$1-$2 pid dump restore
	rm -rf "$d" && mkdir -p "$d/img" && cd "$d" || return
	"/lab/zdtm/cet/$1" --pidfile=t.pid --outfile=t.out
	pid=$(cat t.pid)
	dump=$(bench_run -- "$3" dump --no-default-config -D img -o dump.log -t "$pid")
	restore=$(bench_run -- "$3" restore --no-default-config -D img -o restore.log -d)
	sleep 1
	kill -TERM "$pid" 2>/dev/null
	sleep 5
	lab_line INFO "cost.$1.$2" "dump: $dump; image_kb=$(du -sk img | cut -f1); restore: $restore; test: $(tail -n1 t.out | sed 's/.*: *//' | cut -c1-60)"
	cd /
}
for t in sparse many_threads; do
	cost_of $t criu-cet /lab/criu-cet/criu
	cost_of $t stock-4.1.1 /lab/criu-stock/criu
done
