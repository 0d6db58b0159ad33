#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build glibc 2.41 (pin glibc, Debian trixie's orig tarball) with --enable-cet
# for the guest: a real CET userland, whose ld.so enables and locks shadow
# stacks for SHSTK-marked programs when GLIBC_TUNABLES asks it to.  Debian's
# own glibc is built without it.  Installed for the guest path
# /opt/cet-glibc into the sysroot build/cet-glibc (build/cet-glibc/opt/cet-glibc/
# {lib,include,...}); lab/build/cet-cc compiles guest programs against it.  The
# install tree is cached under $CRIU_CET_CACHE/glibc/<key>.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

PREFIX=/opt/cet-glibc
# CET on.  Less to build, none of it used by the guest's programs: no nscd,
# no profiling libraries, no libmvec (vectorised math for -ffast-math
# loops), no debug info (-O2 without -g), and no iconvdata (the ~250 gconv
# charset modules: iconv() keeps the charsets built into libc, UTF-8 and
# the like); about a third of the build time
CONFIGURE="--prefix=$PREFIX --enable-cet --disable-werror --disable-profile
 --disable-nscd --without-selinux --disable-timezone-tools --disable-mathvec CFLAGS=-O2"
SKIP_SUBDIRS="manual iconvdata"

out=$BUILD/cet-glibc
k=$(key -s "$(pin_sha glibc)" -s "$CONFIGURE" -s "$SKIP_SUBDIRS" "$0")
cached=$CACHE/glibc/$k
if [ -e "$cached/root$PREFIX/lib/libc.so.6" ]; then
	rsync -a --delete "$cached/root/" "$out/" || die "cannot copy $cached"
	say "cet glibc from cache ($k)"
	exit 0
fi

src=$BUILD/glibc-src
obj=$BUILD/glibc-obj
rm -rf "$obj" && mkdir -p "$obj"
unpack_pin glibc "$src"
# Debian's orig tarball has no manual/ (its texinfo is non-free for Debian):
# make would stop there.  iconvdata: see CONFIGURE.
for d in $SKIP_SUBDIRS; do
	sed -i "/^all-subdirs = /,/^\$/s/ $d / /" "$src/Makeconfig"
	! sed -n '/^all-subdirs = /,/^$/p' "$src/Makeconfig" | grep -qw "$d" || die "Makeconfig: $d still in all-subdirs"
done

say "configuring and building glibc 2.41 --enable-cet (key $k)"
(cd "$obj" && "$src/configure" $CONFIGURE > configure.log 2>&1) ||
	{ tail -5 "$obj/configure.log"; die "glibc configure failed: see $obj/configure.log"; }
grep -q '^enable-cet = yes' "$obj/config.make" || die "configure did not enable CET (see $obj/config.make)"
make -C "$obj" -j2 > "$obj/make.log" 2>&1 || { tail -20 "$obj/make.log"; die "glibc build failed: see $obj/make.log"; }
root=$obj/root
make -C "$obj" install DESTDIR="$root" > "$obj/install.log" 2>&1 ||
	{ tail -20 "$obj/install.log"; die "glibc install failed: see $obj/install.log"; }

# The linker scripts libc.so and libm.so name their libraries by guest path
# (/opt/cet-glibc/lib/libc.so.6), which does not exist on the host: bare
# names, found through cet-cc's -L, serve both.
for s in "$root$PREFIX"/lib/libc.so "$root$PREFIX"/lib/libm.so; do
	sed -i "s|$PREFIX/lib/||g" "$s"
done
readelf -n "$root$PREFIX/lib/libc.so.6" | grep -q 'x86 feature: IBT, SHSTK' || die "libc.so.6 is not SHSTK-marked"
cache_store "$cached" "$root"
rsync -a --delete "$cached/root/" "$out/" || die "cannot copy $cached"
rm -rf "$src" "$obj"
say "cet glibc built and cached ($k)"
