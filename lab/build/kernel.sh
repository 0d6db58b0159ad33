#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the lab kernel from linux-source-6.12 into build/kernel/<flavour>/bzImage.
#   flavour "stock":   Debian's tree + kernel/lab.config
#   flavour "patched": the same plus kernel/patches/*.patch, built incrementally
#                      on a copy of the stock object tree.
# bzImages are cached under $CRIU_CET_CACHE/kernel/<key>.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

flavour=${1:-stock}
case $flavour in
stock) patches=() ;;
patched) mapfile -t patches < <(ls "$TOP"/kernel/patches/*.patch 2>/dev/null | grep -v '/0000-cover-letter.patch$' | sort) ;;
*) die "unknown flavour '$flavour' (stock or patched)" ;;
esac

out=$BUILD/kernel/$flavour
# one kernel build at a time: the patched one starts from the stock objects
mkdir -p "$BUILD/kernel"
exec 9> "$BUILD/kernel/.lock-$flavour"
flock 9
# kernel_key FLAVOUR [PATCHES]: the cache key of a flavour's kernel
kernel_key() { key -s "$(pin_sha linux)" -s "$1" "$TOP/kernel/lab.config" "$0" "${@:2}"; }
k=$(kernel_key "$flavour" ${patches[@]+"${patches[@]}"})
cached=$CACHE/kernel/$k
# CRIU_CET_OBJECTS=1: build the object tree even when the bzImage is cached
# (the patched build starts from a copy of the stock objects)
if [ -z "${CRIU_CET_OBJECTS:-}" ] && [ -f "$cached/bzImage" ]; then
	install_file "$cached/bzImage" "$out/bzImage"
	install_file "$cached/config" "$out/config"
	say "$flavour kernel from cache ($k)"
	exit 0
fi

bash "$TOP/lab/build/linux-source.sh"
src=$BUILD/linux-src

objdir=$BUILD/kernel/obj-$flavour
tree=$src
if [ "$flavour" = patched ]; then
	# the stock objects of this very configuration (their key, written by
	# the stock build): objects of an older lab.config would give a patched
	# kernel without the options added since
	[ -f "$BUILD/kernel/obj-stock/arch/x86/boot/bzImage" ] &&
		[ "$(cat "$BUILD/kernel/obj-stock/.lab-key" 2>/dev/null)" = "$(kernel_key stock)" ] ||
		CRIU_CET_OBJECTS=1 "$0" stock
	tree=$BUILD/linux-patched
	rm -rf "$tree" "$objdir"
	cp -al "$src" "$tree"
	# reuse the stock objects: only what the patches touch is rebuilt
	reuse_objects "$BUILD/kernel/obj-stock" "$objdir" "$src" "$tree"
	for p in ${patches[@]+"${patches[@]}"}; do
		# patch(1) writes new files, so the hard-linked pristine tree stays intact
		patch -d "$tree" -p1 --forward --quiet < "$p" || die "$(basename "$p") does not apply"
	done
else
	mkdir -p "$objdir"
	make -C "$tree" O="$objdir" -s tinyconfig
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$objdir" "$objdir/.config" "$TOP/kernel/lab.config" > /dev/null
	make -C "$tree" O="$objdir" -s olddefconfig
fi
# every option we asked for must have survived olddefconfig (and be in the
# stock objects a patched build starts from)
lost=$(grep -E '^CONFIG_[A-Z0-9_]+=y' "$TOP/kernel/lab.config" | grep -vxFf "$objdir/.config" || true)
[ -z "$lost" ] || die "kernel config lost (unmet dependencies?): $(echo $lost)"
say "building $flavour kernel (key $k)"
make -C "$tree" O="$objdir" -j"$(nproc)" -s bzImage > "$objdir/build.log" 2>&1 ||
	{ tail -30 "$objdir/build.log"; die "$flavour kernel build failed"; }
mkdir -p "$out"
cp "$objdir/arch/x86/boot/bzImage" "$out/bzImage"
cp "$objdir/.config" "$out/config"
echo "$k" > "$objdir/.lab-key"
cache_store "$cached" "$out/bzImage" "$out/config"
say "$flavour kernel built and cached ($k)"
