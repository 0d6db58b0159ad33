#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The pristine Linux 6.12 tree, unpacked once from the pinned
# linux-source-6.12 .deb into build/linux-src (the kernel builds, the
# selftests, checkpatch and the series check all start from it).
set -euo pipefail
. "$(dirname "$0")/../common.sh"

src=$BUILD/linux-src
[ -f "$src/.unpacked-$(pin_sha linux)" ] && exit 0
deb=$(fetch linux)
say "unpacking linux-source-6.12"
rm -rf "$src" && mkdir -p "$src"
dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards './usr/src/linux-source-6.12.tar.xz' |
	tar -xJ -C "$src" --strip-components=1 || die "cannot unpack $deb"
touch "$src/.unpacked-$(pin_sha linux)"
