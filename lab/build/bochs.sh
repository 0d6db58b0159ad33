#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build Bochs 3.0 headless with CET, carrying our XRSTORS fix, into build/bochs/,
# with its e1000 card and bxhub, the hub that joins two lab machines' cards
# (misc/bxhub.cc, built with any card).  Both binaries are cached under $CRIU_CET_CACHE/bochs/<key>.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

CONFIGURE="--with-nogui --without-x11 --without-x --without-sdl2 --without-wx
 --without-term --without-rfb --without-vncsrv --enable-x86-64 --enable-cpu-level=6
 --enable-cet --enable-avx --enable-evex --enable-all-optimizations --disable-debugger
 --disable-debugger-gui --disable-plugins --enable-pci --enable-cdrom --enable-a20-pin
 --enable-fpu --disable-docbook --disable-sb16 --disable-es1370 --disable-gameport
 --disable-usb --disable-ne2000 --enable-e1000 --disable-voodoo --disable-clgd54xx"
# The emulator is the lab's bottleneck: -O3 and link-time optimisation (its
# CPU loop calls across files) take 20% less CPU than configure's -O2 for
# the same guest work (a ZDTM boot: 47 s of user time against 59 s).  No
# -march=native: the cached binary may run on another x86-64.
OPTFLAGS="-O3 -flto=auto"

out=$BUILD/bochs
k=$(key -s "$(pin_sha bochs)" -s "$CONFIGURE" -s "$OPTFLAGS" "$TOP"/lab/bochs/*.patch "$0")
cached=$CACHE/bochs/$k
if [ -x "$cached/bochs" ] && [ -x "$cached/bxhub" ]; then
	install_file "$cached/bochs" "$out/bochs"
	install_file "$cached/bxhub" "$out/bxhub"
	say "bochs from cache ($k)"
	exit 0
fi

src=$BUILD/bochs-src
unpack_pin bochs "$src"
for p in "$TOP"/lab/bochs/*.patch; do
	patch -d "$src" -p1 --forward --quiet < "$p" || die "patch $(basename "$p") does not apply"
done
say "configuring and building Bochs 3.0 (key $k)"
(cd "$src" && CFLAGS="$OPTFLAGS" CXXFLAGS="$OPTFLAGS" LDFLAGS="$OPTFLAGS" ./configure $CONFIGURE > configure.log 2>&1) ||
	die "configure failed: see $src/configure.log"
make -C "$src" -j"$(nproc)" > "$src/make.log" 2>&1 || { tail -20 "$src/make.log"; die "bochs build failed"; }
install_file "$src/bochs" "$out/bochs"
install_file "$src/bxhub" "$out/bxhub"
cache_store "$cached" "$src/bochs" "$src/bxhub"
say "bochs built and cached ($k)"
