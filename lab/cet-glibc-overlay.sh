#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The CET glibc's runtime for the guest, as a folder run.py --overlay adds
# to it: /opt/cet-glibc/lib (the loader and the libraries a program links
# by default, stripped) and /lab/cet-glibc/cet_probe (lab/cet-userland,
# built with lab/cet-cc), which the cet-glibc suite runs.  An overlay, not
# the initramfs: only the boots that use it pay for it.  Prints the folder.
set -euo pipefail
. "$(dirname "$0")/common.sh"

PREFIX=/opt/cet-glibc
# ld.so, libc and libm; the rest are the stubs of libraries merged into libc
# since 2.34, which older link lines still name
RUNTIME="ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 libresolv.so.2"

bash "$TOP/lab/build-glibc.sh" >&2 || die "no CET glibc"
lib=$BUILD/cet-glibc$PREFIX/lib
out=$BUILD/overlay-cet-glibc
rm -rf "$out" && mkdir -p "$out$PREFIX/lib" "$out/lab/cet-glibc"
for l in $RUNTIME; do
	cp -L "$lib/$l" "$out$PREFIX/lib/$l" || die "the CET glibc has no $l"
done
"$TOP/lab/cet-cc" -O2 -g -Wall -Wextra -Wno-unused-parameter -I"$TOP/criu/arch/x86/cet" -I"$TOP/lab/guest" -pthread \
	-o "$out/lab/cet-glibc/cet_probe" "$TOP/lab/cet-userland/cet_probe.c" || die "cet_probe failed"
find "$out" -type f -exec strip --strip-debug {} +
say "cet glibc overlay $(du -sh "$out" | cut -f1) -> $out" >&2
echo "$out"
