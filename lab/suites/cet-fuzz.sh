# SPDX-License-Identifier: GPL-2.0
# Restore every damaged copy of a CET dump that lab/reports/fuzz.py put under
# /lab/fuzz (base/: the intact dump, v/<id>/: the files a copy changes) with
# criu-cet under a time limit, and report what happened, one line a copy:
#   @@LAB INFO fuzz.<id> rc=R secs=S alive=yes|no|- features=F locked=L ss=RANGES stray=PIDS msg=TEXT
# (spaces inside a value are "+").  lab/reports/fuzz.py judges the lines.
FUZZ_TIME_LIMIT=30
base=/lab/fuzz/base
pid=$(cat "$base/pid" 2>/dev/null)
mkdir -p /tmp/export	# where the dumped service keeps its status file

# the user tasks there are now, but for the shell's own helpers and the
# watcher busybox timeout leaves for up to a second
fuzz_tasks() {
	local p comm ppid
	for p in /proc/[0-9]*; do
		comm=$(cat "$p/comm" 2>/dev/null) || continue
		ppid=$(sed -n 's/^PPid:[[:space:]]*//p' "$p/status" 2>/dev/null)
		[ "${p#/proc/}" = 2 ] || [ "$ppid" = 2 ] && continue	# kernel threads
		case $comm in ls | cat | sed | sort | grep | sh | timeout) continue ;; esac
		echo "${p#/proc/}"
	done | sort
}

# fuzz_strays: kill the tasks that were not there before the restore and
# list them in $stray as pid:comm,...
fuzz_strays() {
	local p
	sleep 0.1
	fuzz_tasks > /tmp/fz.after
	for p in $(grep -vxF -f /tmp/fz.before /tmp/fz.after); do
		[ -d "/proc/$p" ] || continue
		stray="$stray${stray:+,}$p:$(cat /proc/$p/comm 2>/dev/null)"
		kill -9 "$p" 2>/dev/null
	done
}

# fuzz_ss PID: the task's shadow-stack mappings as "start-end,..."
fuzz_ss() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { r = $1 } /^VmFlags:.* ss/ { printf "%s%s", s, r; s = "," }' \
		"/proc/$1/smaps" 2>/dev/null
}

if [ ! -d "$base" ] || [ -z "$pid" ]; then
	lab_fail fuzz.setup "no base image under $base"
else
	n=0
	echo "cet-fuzz: start uptime=$(lab_now) copies=$(ls /lab/fuzz/v | wc -l)"
	for v in /lab/fuzz/v/*/; do
		id=$(basename "$v")
		dir=/tmp/fz
		rm -rf "$dir" && cp -a "$base" "$dir" && cp -a "$v". "$dir/"
		fuzz_tasks > /tmp/fz.before
		t0=$(lab_now)
		timeout -s KILL $FUZZ_TIME_LIMIT /lab/criu-cet/criu restore -D "$dir" -d -o restore.log -v4 \
			> /dev/null 2>&1
		rc=$?
		secs=$(echo "$t0 $(lab_now)" | awk '{ printf "%.2f", $2 - $1 }')
		alive=- features= locked= ss= msg= stray=
		if [ $rc != 0 ]; then
			# a refused (or killed) restore leaves nothing: whatever is new is
			# stray, killed at once (a looping one would fill /tmp with its log)
			fuzz_strays
			msg=$(head -c 1000000 "$dir/restore.log" | grep -a -m1 'Error' |
				sed 's/^([ 0-9.]*) *//' | cut -c1-160)
		else
			sleep 0.3
			if alive "$pid"; then
				alive=yes
				features=$(status_field "$pid" x86_Thread_features +)
				locked=$(status_field "$pid" x86_Thread_features_locked +)
				ss=$(fuzz_ss "$pid")
			else
				alive=no
				msg=$(cp_fault_of "$pid")
			fi
			kill -9 "$pid" 2>/dev/null
			# PID 1 reaps it; the next copy needs the pid back
			wait_for sh -c "! [ -d /proc/$pid ]"
			fuzz_strays
		fi
		lab_line INFO "fuzz.$id" "rc=$rc secs=$secs alive=$alive features=$features locked=$locked ss=$ss stray=$stray msg=$msg"
		n=$((n + 1))
	done
	dmesg -c > /dev/null
	echo "cet-fuzz: done uptime=$(lab_now) copies=$n"
	lab_pass fuzz.ran "$n copies restored or refused (lab/reports/fuzz.py judges them)"
fi
