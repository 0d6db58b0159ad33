#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# valkey on the CET glibc for the valkey suite and make demo: the CET glibc
# overlay (lab/overlays/cet-glibc.sh) plus /lab/valkey/ (valkey-server,
# valkey-cli, the module vk_cetsmash.so and vk_fill, from
# lab/build/valkey.sh) and the guest helpers of its suites
# (lab/cet-userland/valkey-lib.sh as /lab/valkey/lib.sh), as a folder run.py --overlay adds to the guest.
# Prints the folder.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

base=$(bash "$TOP/lab/overlays/cet-glibc.sh") || die "no CET glibc overlay"
bash "$TOP/lab/build/valkey.sh" >&2 || die "no valkey"
out=$BUILD/overlay-valkey
rm -rf "$out" && mkdir -p "$out" && cp -a "$base/." "$out/"
mkdir -p "$out/lab/valkey"
cp "$BUILD"/valkey/* "$out/lab/valkey/"
find "$out/lab/valkey" -type f -exec strip --strip-debug {} +
install -m 0644 "$TOP/lab/cet-userland/valkey-lib.sh" "$out/lab/valkey/lib.sh"
say "valkey overlay $(du -sh "$out" | cut -f1) -> $out" >&2
echo "$out"
