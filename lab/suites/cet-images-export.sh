# SPDX-License-Identifier: GPL-2.0
# Dump a CET-protected service with criu-cet and send the images to the host
# (base64 of a tar.gz, lines "@@BLOB <name> <data>"), for crit and for the
# damaged-image tests that boot the lab again with altered copies.
rm -rf /tmp/export && mkdir -p /tmp/export/img
setsid demo_service /tmp/export/status > /dev/null 2>&1 &
pid=$!
wait_for test -s /tmp/export/status
if /lab/criu-cet/criu dump -t "$pid" -D /tmp/export/img -o dump.log -v4; then
	wait "$pid" 2>/dev/null
	echo "$pid" > /tmp/export/img/pid
	tar -C /tmp/export/img -cz . | base64 | sed 's/^/@@BLOB demo-images /'
	echo "@@BLOB demo-images END"
	lab_pass images.export "pid $pid, $(du -sh /tmp/export/img | cut -f1) of images"
else
	lab_fail images.export "dump failed: $(last_error /tmp/export/img/dump.log)"
	kill -9 "$pid"
fi
