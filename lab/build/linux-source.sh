#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A pristine Linux tree, unpacked once from its pinned linux-source .deb:
#   linux-source.sh [lts]  Linux 6.12 LTS into build/linux-src (the lab's
#                          kernels, the selftests, checkpatch, the series check)
#   linux-source.sh new    the newest Linux in Debian's archive into
#                          build/linux-src-new (the series on it: issue 24)
# Prints nothing on success but its progress.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

case ${1:-lts} in
lts) pin=linux src=$BUILD/linux-src ;;
new) pin=linuxnew src=$BUILD/linux-src-new ;;
*) die "unknown base '$1' (lts or new)" ;;
esac
[ -f "$src/.unpacked-$(pin_sha $pin)" ] && exit 0
deb=$(fetch $pin)
say "unpacking $(basename "$deb")"
rm -rf "$src" && mkdir -p "$src"
# the package holds one /usr/src/linux-source-X.Y.tar.xz
dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
	tar -xJ -C "$src" --strip-components=1 || die "cannot unpack $deb"
touch "$src/.unpacked-$(pin_sha $pin)"
