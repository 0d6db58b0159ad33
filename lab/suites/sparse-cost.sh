# SPDX-License-Identifier: GPL-2.0
# What a hostile-looking dumpee costs criu: the sparse ZDTM CET test (three
# 160 MiB map_shadow_stack mappings, a token page each, the lowest page only
# read) dumped and restored once by each CRIU, with criu's peak RSS and the
# image size.  Figures, not a test: lines "@@LAB INFO sparse-cost.<criu> ...".
sparse_cost() {	# NAME CRIU
	local d=/tmp/sparse-cost/$1 pid dump restore
	rm -rf "$d" && mkdir -p "$d/img" && cd "$d" || return
	/lab/zdtm/cet/sparse --pidfile=sparse.pid --outfile=sparse.out
	pid=$(cat sparse.pid)
	dump=$(bench_run -- "$2" dump --no-default-config -D img -o dump.log -t "$pid")
	restore=$(bench_run -- "$2" restore --no-default-config -D img -o restore.log -d)
	sleep 1
	kill -TERM "$pid" 2>/dev/null
	sleep 1
	lab_line INFO "sparse-cost.$1" "dump: $dump; image_kb=$(du -sk img | cut -f1); restore: $restore; test: $(tail -n1 sparse.out | cut -c1-80)"
	cd /
}
sparse_cost criu-cet /lab/criu-cet/criu
sparse_cost stock-4.1.1 /lab/criu-stock/criu
