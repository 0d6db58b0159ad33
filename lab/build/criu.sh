#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build CRIU from Debian's orig tarballs, in three flavours:
#   stock:    4.1.1 unmodified (pin criu), the CRIU Debian 13 ships, a column
#             of every comparison
#   cet:      CRIU 4.2.1 (pin criu42) plus the patch series in patches/criu/
#             and our overlay (criu/, images/: the files the series builds)
#   4.2.1:    CRIU 4.2.1 unmodified, the best upstream and criu-cet's base:
#             the plain comparisons are made against it
# Result: build/criu-<flavour>/criu (and the tree it was built in).
# A tree built from scratch is cached (the whole tree, objects and all:
# later steps run make in it) under $CRIU_CET_CACHE/criu/<flavour>-<key>,
# keyed by the pinned source, the patches, the overlay's files and this
# script; a fresh clone unpacks it instead of building (2 min on 2 cores).
set -euo pipefail
. "$(dirname "$0")/../common.sh"

flavour=${1:-stock}
case $flavour in
stock) pin=criu ;;
cet | 4.2.1) pin=criu42 ;;
*) die "unknown flavour '$flavour' (stock, cet or 4.2.1)" ;;
esac
tree=$BUILD/criu-$flavour/src
stamp=$BUILD/criu-$flavour/.stamp
criu_tree_lock "$flavour"
# Inputs that require a fresh tree (the overlay is re-synced on every build).
inputs=$(key -s "$(pin_sha $pin)" -s "$flavour" "$0" $( [ "$flavour" = cet ] && ls "$TOP"/patches/criu/*.patch 2>/dev/null))

# the tree as built: the inputs above and the overlay's contents
overlay=()
[ "$flavour" = cet ] && mapfile -t overlay < <(cd "$TOP" && find criu compel images -type f ! -name .gitkeep 2>/dev/null | LC_ALL=C sort)
built=$(cd "$TOP" && key -s "$inputs" "${overlay[@]}")
cached=$CACHE/criu/$flavour-$built.tar
fresh= restored= stale=
[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$inputs" ] || stale=1
if [ -n "$stale" ] && [ -f "$cached" ]; then
	rm -rf "$tree" && mkdir -p "$tree"
	tar -xf "$cached" -C "$tree" || die "cannot unpack $cached"
	echo "$inputs" > "$stamp"
	restored=1
	say "criu ($flavour) tree from cache ($built)"
elif [ -n "$stale" ]; then
	fresh=1
	say "unpacking pin $pin ($flavour)"
	unpack_pin $pin "$tree"
	if [ "$flavour" = cet ]; then
		for p in $(ls "$TOP"/patches/criu/*.patch 2>/dev/null | sort); do
			patch -d "$tree" -p1 --forward --quiet < "$p" || die "$(basename "$p") does not apply"
		done
	fi
	echo "$inputs" > "$stamp"
fi
if [ "$flavour" = cet ]; then
	# our subsystem lives in the repo and is copied over the tree (rsync -c only
	# touches files whose content changed, so make rebuilds just those)
	for d in criu compel images; do
		[ -d "$TOP/$d" ] && rsync -rc --exclude=.gitkeep "$TOP/$d/" "$tree/$d/"
	done
fi
# a tree from the cache is built already (CRIU's make takes 10 s to say so)
if [ -z "$restored" ]; then
	say "building criu ($flavour)"
	make -C "$tree" -j"$(nproc)" NO_GNUTLS=1 criu > "$BUILD/criu-$flavour/build.log" 2>&1 ||
		{ grep -E 'error|Error' "$BUILD/criu-$flavour/build.log" | head -20; die "criu ($flavour) build failed"; }
	# crit and pycriu (with our images/cet.proto): the host reads lab images with them
	make -C "$tree" -j"$(nproc)" NO_GNUTLS=1 crit > "$BUILD/criu-$flavour/build-crit.log" 2>&1 ||
		{ tail -20 "$BUILD/criu-$flavour/build-crit.log"; die "crit ($flavour) build failed"; }
fi
install_file "$tree/criu/criu" "$BUILD/criu-$flavour/criu"
# only a tree built from scratch: an incremental build may hold objects of
# files since changed back, which the key would not tell apart
if [ -n "$fresh" ]; then
	mkdir -p "$CACHE/criu"
	tar -cf "$cached.$$" -C "$tree" . && mv "$cached.$$" "$cached" || die "cannot write $cached"
	# the newest four trees of a flavour are kept
	ls -t "$CACHE/criu/$flavour"-*.tar | tail -n +5 | xargs -r rm -f
fi
say "criu ($flavour) ready: $("$BUILD/criu-$flavour/criu" --version | head -1)"
