# SPDX-License-Identifier: GPL-2.0
# The small demo: demo_service, a static program that turns its own shadow
# stack on and locks it as glibc does, is checkpointed with criu-cet, killed,
# restored, and shown to resume where it was, still protected.  (make demo is
# valkey on the CET glibc: lab/suites/demo.sh.)
say() { echo "demo-service: $*"; }
status() { cat /tmp/demo/status 2>/dev/null; }
field() { status | tr ' ' '\n' | sed -n "s/^$1=//p"; }
criu=/lab/criu-cet/criu

rm -rf /tmp/demo && mkdir -p /tmp/demo/img
say "CPU:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), kernel $(uname -r), $(grep -ow user_shstk /proc/cpuinfo | head -1) on"
say "starting demo_service: shadow stack on and locked as glibc does, serving 512 frames deep"
setsid demo_service /tmp/demo/status > /dev/null 2>&1 &
pid=$!
wait_for test -s /tmp/demo/status
sleep 1
say "service pid $pid:   $(status)"
before_ssp=$(field ssp) before_depth=$(field depth) before_count=$(field count)
before_cet=$(status | sed 's/.*features=//')

t0=$(lab_now)
if ! $criu dump -t "$pid" -D /tmp/demo/img -o dump.log -v4; then
	lab_fail demo-service.checkpoint "$(last_error /tmp/demo/img/dump.log)"; return
fi
t1=$(lab_now)
wait "$pid" 2>/dev/null
say "checkpointed with criu-cet in $(awk "BEGIN{print $t1 - $t0}") s (guest time), images $(du -sh /tmp/demo/img | cut -f1); the service is gone: $(alive "$pid" && echo still there || echo no pid $pid)"
dumped_count=$(field count)

if ! $criu restore -D /tmp/demo/img -d -o restore.log -v4; then
	lab_fail demo-service.restore "$(last_error /tmp/demo/img/restore.log)"; return
fi
t2=$(lab_now)
say "restored in $(awk "BEGIN{print $t2 - $t1}") s (guest time)"
sleep 1
say "service pid $pid:   $(status)"
after_cet=$(status | sed 's/.*features=//')
if alive "$pid" && [ "$(field count)" -gt "$dumped_count" ] && [ "$(field ssp)" = "$before_ssp" ] &&
	[ "$(field depth)" = "$before_depth" ] && [ "$after_cet" = "$before_cet" ]; then
	say "resumed where it was: count went on from $dumped_count, same SSP $before_ssp, same depth $before_depth, same features and locks"
	cet_fields="features=$(status_field $pid x86_Thread_features ,) locked=$(status_field $pid x86_Thread_features_locked ,)"
	lab_pass demo-service.resume "count $before_count -> $dumped_count at dump -> $(field count); ssp $before_ssp depth $before_depth; $after_cet: $cet_fields"
else
	lab_fail demo-service.resume "after restore: $(status) (before: ssp $before_ssp depth $before_depth $before_cet)"
fi

say "now the attack: SIGUSR2 makes the service overwrite one of its return addresses"
kill -USR2 "$pid"
sleep 1
say "service says:   $(status)"
kern=$(cp_fault_of "$pid")
[ -n "$kern" ] && say "kernel says:    $kern"
if status | grep -q 'SEGV_CPERR'; then
	say "the restored service is still protected by its shadow stack"
	lab_pass demo-service.protected "$(status)"
else
	lab_fail demo-service.protected "$(status)"
fi
