#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The two-machine migration suite's guest (lab/suites/migrate-net.sh):
# valkey on the CET glibc (lab/overlays/valkey.sh) plus what CRIU and the
# pod's network need beside busybox: iproute2 (ip netns, CRIU's ip
# save/restore) and iptables (CRIU's network lock under --tcp-established),
# with their shared libraries, and CRIU 4.2.1 (lab/overlays/upstream.sh)
# for the rolling upgrade's flows when it can be had; as a folder run.py
# --overlay adds.  Prints the folder.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

base=$(bash "$TOP/lab/overlays/valkey.sh") || die "no valkey overlay"
out=$BUILD/overlay-migrate
rm -rf "$out" && mkdir -p "$out" && cp -a "$base/." "$out/"
stage_net_tools "$out"
if up=$(bash "$TOP/lab/overlays/upstream.sh"); then
	cp -a "$up/." "$out/"
else
	say "no CRIU 4.2.1 for the fleet's flows: they will say skipped" >&2
fi
stage_missing_libs "$out" "$out/usr/sbin/ip" "$out/usr/sbin/xtables-nft-multi" \
	"$out"/usr/lib/x86_64-linux-gnu/xtables/*.so
say "migrate overlay $(du -sh "$out" | cut -f1) -> $out" >&2
echo "$out"
