#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# runc for the lab's runc suite: Debian 12's runc (pin runc, the binary
# package) and the host's GNU tar, with the shared libraries they load that
# the initramfs lacks (libseccomp, libacl, ...), and the suite's OCI configs
# (lab/overlays/runc_bundle.py on runc's own `runc spec`), staged as a folder run.py
# --overlay adds to the guest (/lab/runc/, /lab/bin/tar).  An overlay, not
# the initramfs: it is 9.9 MiB (2.1 s of guest boot) that every other boot
# would unpack.  Prints the folder.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

out=$BUILD/overlay-runc
deb=$(fetch runc)
work=$(mktemp -d "$BUILD/runc.XXXXXX")
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work/deb"
runc=$work/deb/usr/sbin/runc
[ -x "$runc" ] || die "$(basename "$deb") has no usr/sbin/runc"
rm -rf "$out" && mkdir -p "$out/lab/runc" "$out/lab/bin"
# stage BINARY DEST: BINARY at $out/DEST with the libraries the guest lacks
stage() {
	cp "$1" "$out$2"
	stage_missing_libs "$out" "$1"
}
stage "$runc" /lab/runc/runc
# CRIU saves a container's tmpfs mounts (/dev, /dev/shm) with GNU tar's
# options, which busybox's tar lacks: the host's (Debian 12) tar, first on
# the guest's PATH
stage "$(command -v tar)" /lab/bin/tar
(cd "$work" && "$runc" spec) || die "runc spec failed"
"$PY" "$TOP/lab/overlays/runc_bundle.py" "$work/config.json" "$out/lab/runc" || die "runc_bundle.py failed"
strip_guest "$out" || true	# find complains of the missing lib64
say "runc overlay $(du -sh "$out" | cut -f1) ($("$runc" --version | head -1)) -> $out" >&2
echo "$out"
