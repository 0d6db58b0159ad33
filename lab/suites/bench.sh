# SPDX-License-Identifier: GPL-2.0
# make bench: dump and restore time (guest time), image size and CRIU's peak
# RSS, criu-cet, stock CRIU 4.1.1 and (when make bench put it in the guest)
# CRIU 4.2.1, on bench_target (lab/guest/bench_target.c):
#   plain    no shadow stack
#   shstk    the same process on a shadow stack
#   deep     on a shadow stack, 131072 frames deep (1 MiB of entries)
#   threads  16 threads on shadow stacks
# and for criu-cet alone, the cost of a byte and of a thread:
#   ss-N       N MiB of used shadow stack (N * 131072 flat frames: on the
#              shadow stack only, the stack itself does not grow)
#   anon-N     the shstk process with N MiB more of dirty heap instead
#   sparse     one shadow stack of 384 MiB (RLIMIT_STACK), hardly used
#   threads-N  N threads on shadow stacks
# Every measurement is one line for lab/reports/bench.py, which takes the medians:
#   @@LAB INFO bench.<scenario>.<criu>.<rep> key=value ... [why=text]
# Rep 0 is a warm-up and is not counted.  These are figures, not tests: the
# suite reports no PASS/FAIL.

BENCH_REPS=${BENCH_REPS:-3}
BENCH_HEAP_KB=${BENCH_HEAP_KB:-1024}
BENCH_DEEP=131072
BENCH_THREADS=16
BENCH_SIZES=${BENCH_SIZES:-"1 8 64"}
BENCH_THREAD_COUNTS=${BENCH_THREAD_COUNTS:-"10 100 1000"}
# stack limit (KiB) of the size scenarios: room for 64 MiB of frames; the
# kernel sizes the main thread's shadow stack by it too
BENCH_BIG_STACK_KB=131072
# (the guest has 512 MiB: a bigger mapping fails the kernel's overcommit check)
BENCH_SPARSE_STACK_KB=393216
BENCH_CRIUS="criu-cet stock"
[ -x /lab/criu-4.2.1/criu ] && BENCH_CRIUS="$BENCH_CRIUS criu-4.2.1"

# Each CRIU build caches its kernel probes in /run/criu.kdat under its own
# build-time magic, so every switch between the two would find the other's
# cache stale, delete it and probe again (0.1-0.2 s of guest time).  Keep one
# cache per CRIU, as when it is installed alone.
bench_kdat_in() {
	rm -f /run/criu.kdat
	if [ -f "/tmp/bench/kdat.$1" ]; then cp "/tmp/bench/kdat.$1" /run/criu.kdat; fi
}
bench_kdat_out() {
	if [ -f /run/criu.kdat ]; then cp /run/criu.kdat "/tmp/bench/kdat.$1"; fi
}

# bench_fields PREFIX FILE: the "k=v ..." line in FILE with PREFIX on each key
bench_fields() {
	sed -n '1s/\([a-z_]*=\)/'"$1"'\1/gp' "$2"
}

# bench_settled PID RESULT: the task wrote its result, or is gone
bench_settled() {
	[ -s "$2" ] || ! alive "$1"
}

# bench_one SCENARIO CRIU-NAME REP SHSTK FRAMES THREADS [HEAP_KB [STACK_KB]]
bench_one() {
	local scen=$1 cname=$2 rep=$3 shstk=$4 frames=$5 threads=$6
	local heap=${7:-$BENCH_HEAP_KB} stack=${8:-}
	local criu dir pid opts line img check why=
	case $cname in
	criu-cet) criu=/lab/criu-cet/criu ;;
	stock) criu=/lab/criu-stock/criu ;;
	criu-4.2.1) criu=/lab/criu-4.2.1/criu ;;
	esac
	dir=/tmp/bench/$scen.$cname.$rep
	rm -rf "$dir" && mkdir -p "$dir/img"
	bench_kdat_in $cname
	opts="-d $frames -t $threads -m $heap"
	[ "$shstk" = 1 ] && opts="-s $opts"
	[ "$shstk" = flat ] && opts="-s -f $opts"
	line="frames=$frames threads=$threads shstk=$shstk heap_kb=$heap"

	if [ -n "$stack" ]; then
		(ulimit -s "$stack" && exec setsid bench_target $opts "$dir") > "$dir/out" 2>&1 &
	else
		setsid bench_target $opts "$dir" > "$dir/out" 2>&1 &
	fi
	pid=$!
	if ! wait_for test -s "$dir/hb"; then
		lab_line INFO "bench.$scen.$cname.$rep" "$line check=nostart why=$(head -c 120 "$dir/out")"
		kill -9 "$pid"; wait "$pid"; return
	fi

	line="$line $(bench_fields pre_ "$dir/setup")"

	bench_run -- "$criu" dump -t "$pid" -D "$dir/img" -o "$dir/dump.log" > "$dir/dump.t"
	line="$line $(bench_fields dump_ "$dir/dump.t")"
	if ! grep -q '^rc=0 ' "$dir/dump.t"; then
		why=$(last_error "$dir/dump.log")
		bench_kdat_out $cname
		lab_line INFO "bench.$scen.$cname.$rep" "$line check=dumpfail why=$why"
		kill -9 "$pid"; wait "$pid"; return
	fi
	wait "$pid" 2>/dev/null	# reap it: restore needs the pid back
	img=$(du -sk "$dir/img" | cut -f1)
	line="$line img_kb=$img"

	bench_run -p "$pid" -b "$dir/hb" -- "$criu" restore -D "$dir/img" -d -o "$dir/restore.log" \
		> "$dir/restore.t"
	line="$line $(bench_fields restore_ "$dir/restore.t")"
	if ! grep -q '^rc=0 ' "$dir/restore.t"; then
		check=restorefail
		why=$(last_error "$dir/restore.log")
	elif grep -q 'live=died' "$dir/restore.t"; then
		check=died
		sleep 0.2	# let the kernel's report reach dmesg
		why=$(cp_fault_of "$pid")
		why=${why:-no kernel report}
	elif grep -q 'live=timeout' "$dir/restore.t"; then
		check=timeout
		why="no heartbeat within 5 s of the restore"
		kill -9 "$pid"
	else
		# it runs: make it return through all its frames and threads
		kill -USR1 "$pid"
		wait_for bench_settled "$pid" "$dir/result"
		if [ -s "$dir/result" ]; then
			check=$(sed -n '1{s/^\([a-z]*\) */check=\1 /;s/ \([a-z_]*=\)/ got_\1/gp}' "$dir/result")
			case $check in
			check=ok*) ;;
			*) why=${check#check=* }; check=bad ;;
			esac
		else
			check=died
			why=$(cp_fault_of "$pid")
			why="no result after SIGUSR1: ${why:-no kernel report}"
			kill -9 "$pid"
		fi
	fi
	bench_kdat_out $cname
	lab_line INFO "bench.$scen.$cname.$rep" "$line check=${check#check=}${why:+ why=$why}"
	if [ "$cname" = criu-cet ] && [ -n "$why" ]; then
		grep -a -h -E 'Error|cet:' "$dir/dump.log" "$dir/restore.log" 2>/dev/null |
			tail -20 | sed "s|^|bench: $scen.$cname.$rep: |"
	fi
	rm -rf "$dir"
}

echo "bench: start uptime=$(lab_now) reps=$BENCH_REPS heap_kb=$BENCH_HEAP_KB crius=$BENCH_CRIUS"
lab_line INFO bench.meta "reps=$BENCH_REPS heap_kb=$BENCH_HEAP_KB deep=$BENCH_DEEP threads=$BENCH_THREADS sizes=$(echo $BENCH_SIZES | tr ' ' ,) thread_counts=$(echo $BENCH_THREAD_COUNTS | tr ' ' ,) crius=$(echo $BENCH_CRIUS | tr ' ' ,)"
for c in $BENCH_CRIUS; do
	bench_one plain $c 0 0 0 0
done
rep=1
while [ $rep -le "$BENCH_REPS" ]; do
	for c in $BENCH_CRIUS; do
		bench_one plain $c $rep 0 0 0
		bench_one shstk $c $rep 1 0 0
		bench_one deep $c $rep 1 $BENCH_DEEP 0
		bench_one threads $c $rep 1 0 $BENCH_THREADS
	done
	# the same process with the same stack limit: only the kind of memory differs
	bench_one ss-0 criu-cet $rep 1 0 0 "" $BENCH_BIG_STACK_KB
	for n in $BENCH_SIZES; do
		bench_one ss-$n criu-cet $rep flat $((n * 131072)) 0 "" $BENCH_BIG_STACK_KB
		bench_one anon-$n criu-cet $rep 1 0 0 $((BENCH_HEAP_KB + n * 1024)) $BENCH_BIG_STACK_KB
	done
	bench_one sparse criu-cet $rep 1 0 0 "" $BENCH_SPARSE_STACK_KB
	for n in $BENCH_THREAD_COUNTS; do
		bench_one threads-$n criu-cet $rep 1 0 $n
	done
	echo "bench: rep $rep done uptime=$(lab_now)"
	rep=$((rep + 1))
done
