# SPDX-License-Identifier: GPL-2.0
# Restore the image folders the host put under /lab/images (lab/images.py):
# a damaged one must be refused with the message in its "expect" file and
# leave no task behind; the intact one (and any other whose "expect" is
# empty) must come back and run.  A folder's "options" file holds restore
# options it needs: with --lazy-pages, criu-cet's lazy-pages daemon serves
# the restore, as `criu lazy-pages` does beside any lazy restore.
mkdir -p /tmp/export	# where the dumped service keeps its status file
for src in /lab/images/*/; do
	name=images.$(basename "$src")
	dir=/tmp/restore-$(basename "$src")
	rm -rf "$dir" && cp -a "$src" "$dir"
	pid=$(cat "$dir/pid")
	expect=$(cat "$dir/expect")
	options=$(cat "$dir/options" 2>/dev/null)
	lazy=
	case " $options " in
	*" --lazy-pages "*)
		/lab/criu-cet/criu lazy-pages -D "$dir" -o lazy-pages.log -v4 &
		lazy=$!
		wait_for test -S "$dir/lazy-pages.socket" ;;
	esac
	# shellcheck disable=SC2086 # one option a word
	/lab/criu-cet/criu restore -D "$dir" -d -o restore.log -v4 $options
	rc=$?
	if [ -z "$expect" ]; then
		sleep 1
		if [ $rc != 0 ] || ! alive "$pid" || ! grep -q "count=" /tmp/export/status 2>/dev/null; then
			lab_fail "$name" "rc $rc: $(last_error "$dir/restore.log")"
		else
			# back through all 512 frames: the shadow stack's contents came back
			running=$(cat /tmp/export/status)
			kill -USR1 "$pid"
			if wait_for grep -q "^unwound" /tmp/export/status; then
				lab_pass "$name" "restored, pid $pid running: $running; then unwound outcome=restored unwound=yes"
			else
				lab_fail "$name" "restored, pid $pid running: $running; asked to unwind: $(cat /tmp/export/status)"
			fi
		fi
		kill -9 "$pid" 2>/dev/null
		# the next restore wants the pid back
		wait_for test ! -e "/proc/$pid"
	fi
	if [ -n "$lazy" ]; then
		kill "$lazy" 2>/dev/null
		wait "$lazy" 2>/dev/null
	fi
	[ -z "$expect" ] && continue
	said=$(grep -a -m1 -F "$expect" "$dir/restore.log" | sed 's/^([ 0-9.]*) *//' | cut -c1-160)
	if [ $rc != 0 ] && [ -n "$said" ] && ! alive "$pid"; then
		lab_pass "$name" "refused (exit $rc), no task left: $said outcome=refused task=none"
	else
		lab_fail "$name" "rc $rc, task $(alive "$pid" && echo left running || echo gone), expected '$expect', got: $(last_error "$dir/restore.log")"
	fi
done
