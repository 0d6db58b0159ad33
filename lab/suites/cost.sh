# SPDX-License-Identifier: GPL-2.0
# What criu pays for a task: a ZDTM CET test dumped and restored once by
# each CRIU, with criu's peak RSS, times (guest) and the image size.  Figures,
# not tests: lines "@@LAB INFO cost.<case>.<criu> ...".
#   sparse            three 160 MiB map_shadow_stack mappings, a page used in each
#   many_threads-N    N threads, each on its own shadow stack (100, 300, 1000:
#                     restore time against the thread count)
cost_of() {	# CASE CRIU-NAME CRIU TEST [TEST-ARGS...]
	local case=$1 name=$2 criu=$3 test=$4 d=/tmp/cost/$1-$2 pid dump restore
	shift 4
	rm -rf "$d" && mkdir -p "$d/img" && cd "$d" || return
	"/lab/zdtm/cet/$test" --pidfile=t.pid --outfile=t.out "$@"
	pid=$(cat t.pid)
	dump=$(bench_run -- "$criu" dump --no-default-config -D img -o dump.log -t "$pid")
	restore=$(bench_run -- "$criu" restore --no-default-config -D img -o restore.log -d)
	sleep 1
	kill -TERM "$pid" 2>/dev/null
	sleep 5
	lab_line INFO "cost.$case.$name" "dump: $dump; image_kb=$(du -sk img | cut -f1); restore: $restore; test: $(tail -n1 t.out | sed 's/.*: *//' | cut -c1-60)"
	cd /
}
cost_of sparse criu-cet /lab/criu-cet/criu sparse
cost_of sparse stock-4.1.1 /lab/criu-stock/criu sparse
for n in 100 300 1000; do
	cost_of "many_threads-$n" criu-cet /lab/criu-cet/criu many_threads --threads=$n
	cost_of "many_threads-$n" stock-4.1.1 /lab/criu-stock/criu many_threads --threads=$n
done
