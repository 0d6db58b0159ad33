#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build valkey 8.1.1 (pin valkey, Debian trixie's orig tarball) against the
# CET glibc with lab/build/cet-cc, with the valkey suite's own pieces: the module
# vk_cetsmash.so and the data-set generator vk_fill.  Every object is
# SHSTK-marked (cet-cc links with -z cet-report=error; checked again here
# with readelf on each output and the CET glibc libraries it needs).
# Output in build/valkey/, cached under $CRIU_CET_CACHE/valkey/<key>.
#
# MALLOC=libc: valkey's bundled jemalloc would add its own configure and
# about a minute of build to every cold make test, and nothing here needs
# it; glibc's malloc is the allocator that is CET-built.  No TLS, no systemd.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

MAKEFLAGS_VK="MALLOC=libc BUILD_TLS=no USE_SYSTEMD=no OPTIMIZATION=-O2"
BINS=(valkey-server valkey-cli vk_cetsmash.so vk_fill)
PREFIX=/opt/cet-glibc

bash "$TOP/lab/build/glibc.sh" || die "no CET glibc"
sysroot=$BUILD/cet-glibc
out=$BUILD/valkey
# the CET glibc's own inputs (its key's) are part of this key
k=$(key -s "$(pin_sha valkey)" -s "$MAKEFLAGS_VK" -s "$(pin_sha glibc)" "$TOP/lab/build/glibc.sh" \
	"$0" "$TOP/lab/build/cet-cc" "$TOP"/lab/cet-userland/vk_*.c "$TOP/criu/arch/x86/cet/cet-abi.h" "$TOP/lab/guest/smash.h")
cached=$CACHE/valkey/$k

# check_marked ELF: "x86 feature: IBT, SHSTK", and so for every library it needs
check_marked() {
	local lib
	readelf -n "$1" | grep -q 'x86 feature: IBT, SHSTK' || die "$(basename "$1") is not SHSTK-marked"
	for lib in $(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ -e "$sysroot$PREFIX/lib/$lib" ] || die "$(basename "$1") needs $lib, which the CET glibc lacks"
		readelf -n "$sysroot$PREFIX/lib/$lib" | grep -q 'x86 feature: IBT, SHSTK' ||
			die "$lib (needed by $(basename "$1")) is not SHSTK-marked"
	done
}

if [ -e "$cached/valkey-server" ]; then
	rm -rf "$out" && mkdir -p "$out"
	for b in "${BINS[@]}"; do cp "$cached/$b" "$out/"; done
	say "valkey from cache ($k)"
	exit 0
fi

src=$BUILD/valkey-src
unpack_pin valkey "$src"
say "building valkey 8.1.1 against the CET glibc (key $k)"
# in src/ itself: valkey's top Makefile hands each goal to a make of its
# own, and with -j2 the two ran side by side, each cleaning the deps
# (persist-settings) while the other linked against them
make -C "$src/src" -j2 CC="$TOP/lab/build/cet-cc" $MAKEFLAGS_VK valkey-server valkey-cli > "$src/make.log" 2>&1 ||
	{ tail -20 "$src/make.log"; die "valkey build failed: see $src/make.log"; }
rm -rf "$out" && mkdir -p "$out"
cp "$src/src/valkey-server" "$src/src/valkey-cli" "$out/"
"$TOP/lab/build/cet-cc" -O2 -Wall -shared -fPIC -I"$src/src" -I"$TOP/criu/arch/x86/cet" -I"$TOP/lab/guest" \
	-o "$out/vk_cetsmash.so" "$TOP/lab/cet-userland/vk_cetsmash.c" || die "vk_cetsmash.so failed"
"$TOP/lab/build/cet-cc" -O2 -Wall -o "$out/vk_fill" "$TOP/lab/cet-userland/vk_fill.c" || die "vk_fill failed"
for b in "${BINS[@]}"; do check_marked "$out/$b"; done
cache_store "$cached" "${BINS[@]/#/$out/}"
rm -rf "$src"
say "valkey built and cached ($k)"
