#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Pack the lab guest's initramfs: static busybox, our static guest programs,
# the suites, and both CRIU builds with the shared libraries they load.
#   usage: [LAB_EXTRA="SRC:GUEST_DIR ..."] initramfs.sh OUT.cpio GUEST_BIN_DIR [CRIU_FLAVOUR_DIR...]
set -euo pipefail
. "$(dirname "$0")/../common.sh"

out=$1 bindir=$2
shift 2
root=$(mktemp -d "$BUILD/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root"	# mktemp's 0700 would become the guest's /, closed to non-root tests

mkdir -p "$root"/{bin,sbin,usr/bin,dev,proc,sys,tmp,run,etc,lab/bin,lab/suites}
bb=/bin/busybox
[ -x "$bb" ] && file -L "$bb" | grep -q 'statically linked' || die "busybox-static is not installed"
cp "$bb" "$root/bin/busybox"
for applet in $("$bb" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
echo 'root:x:0:0:root:/:/bin/sh' > "$root/etc/passwd"
echo 'root:x:0:' > "$root/etc/group"

install -m 0755 "$TOP/lab/guest/init" "$root/init"
install -m 0644 "$TOP/lab/guest/lib.sh" "$root/lab/lib.sh"
install -m 0644 "$TOP/lab/guest/peer.sh" "$root/lab/peer.sh"
install -m 0644 "$TOP"/lab/suites/*.sh "$root/lab/suites/"
cp -a "$bindir"/. "$root/lab/bin/"
# extra trees: LAB_EXTRA="SRC:GUEST_DIR ..." copies SRC's contents to GUEST_DIR
for pair in ${LAB_EXTRA:-}; do
	[ -d "${pair%%:*}" ] || die "LAB_EXTRA: ${pair%%:*} is missing"
	mkdir -p "$root${pair#*:}"
	cp -a "${pair%%:*}"/. "$root${pair#*:}/"
done

# CRIU builds: lab/criu-<flavour>/criu plus every library ldd names
for dir in "$@"; do
	stage_criu "$root" "$dir"
done
[ -d "$root/lib64" ] && [ ! -e "$root/lib" ] && mkdir -p "$root/lib"
strip_guest "$root"

# uncompressed: the emulated CPU inflates gzip at about 4 MB per guest second
# (the kernel reached init at 11.4 s with this gzipped, 2.2 s without)
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) > "$out.tmp"
mv "$out.tmp" "$out"
say "initramfs $(du -h "$out" | cut -f1) -> $out"
