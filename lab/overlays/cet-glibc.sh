#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The CET glibc's runtime for the guest, as a folder run.py --overlay adds
# to it: /opt/cet-glibc/lib (the loader and the libraries a program links
# by default, stripped), /lab/cet-glibc/cet_probe (lab/cet-userland,
# built with lab/build/cet-cc), which the cet-glibc suite runs, the ZDTM CET
# tests of glibc's own code in /lab/zdtm/cet-glibc (test/zdtm/cet/glibc,
# suite zdtm-cet-glibc) and both criu relinked against the CET glibc in
# /lab/cet-glibc/bin (suite criu-on-shstk).  An overlay, not
# the initramfs: only the boots that use it pay for it.  Prints the folder.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

PREFIX=/opt/cet-glibc
# ld.so, libc and libm; the rest are the stubs of libraries merged into libc
# since 2.34, which older link lines still name
RUNTIME="ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 libresolv.so.2"

bash "$TOP/lab/build/glibc.sh" >&2 || die "no CET glibc"
lib=$BUILD/cet-glibc$PREFIX/lib
# built aside and published as the link build/overlay-cet-glibc: a lab
# boot may be packing the overlay while it is built again (overlays/valkey.sh
# does)
link=$BUILD/overlay-cet-glibc
out=$link.$$
rm -rf "$out" && mkdir -p "$out$PREFIX/lib" "$out/lab/cet-glibc"
for l in $RUNTIME; do
	cp -L "$lib/$l" "$out$PREFIX/lib/$l" || die "the CET glibc has no $l"
done
"$TOP/lab/build/cet-cc" -O2 -g -Wall -Wextra -Wno-unused-parameter -I"$TOP/criu/arch/x86/cet" -I"$TOP/lab/guest" -pthread \
	-o "$out/lab/cet-glibc/cet_probe" "$TOP/lab/cet-userland/cet_probe.c" || die "cet_probe failed"
bash "$TOP/test/zdtm/cet/lab-build.sh" "$BUILD/criu-cet/src" "$BUILD/zdtm-cet-glibc" glibc "$TOP/lab/build/cet-cc" >&2 ||
	die "the ZDTM CET glibc tests failed to build"
mkdir -p "$out/lab/zdtm/cet-glibc" "$out/lab/cet-glibc/bin"
cp "$BUILD/zdtm-cet-glibc/stage/"* "$out/lab/zdtm/cet-glibc/"
for flavour in cet stock; do
	bash "$TOP/lab/build/relink-criu-cet-glibc.sh" $flavour "$out/lab/cet-glibc/bin/criu-$flavour" >&2 ||
		die "criu-$flavour for the CET glibc failed"
done
# the ELF files only: the test list is text
find "$out" -type f \( -perm -u+x -o -name "*.so*" \) -exec strip --strip-debug {} +
publish_overlay "$link" "$out"
say "cet glibc overlay $(du -sh "$out" | cut -f1) -> $link" >&2
echo "$link"
