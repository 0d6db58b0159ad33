#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# CRIU 4.2.1 (unmodified, pin criu42) for make compare and make bench: built
# like stock 4.1.1 and staged as a folder run.py --overlay adds to the guest
# (/lab/criu-4.2.1/criu).  Prints the folder; when 4.2.1 cannot be had (the
# pin left the archive, the build broke) exits 3 with the reason as the last
# line on stderr.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

out=$BUILD/overlay-criu-4.2.1
if ! bash "$TOP/lab/build/criu.sh" 4.2.1 >&2; then
	echo "CRIU 4.2.1 could not be fetched or built (lab/build/criu.sh 4.2.1)" >&2
	exit 3
fi
rm -rf "$out" && mkdir -p "$out"
stage_criu "$out" "$BUILD/criu-4.2.1"
# the libraries stock 4.1.1 loads are in the initramfs already
if [ -x "$BUILD/criu-stock/criu" ]; then
	shared_libs "$BUILD/criu-stock/criu" | while read -r lib; do rm -f "$out$lib"; done
fi
strip_guest "$out"
echo "$out"
