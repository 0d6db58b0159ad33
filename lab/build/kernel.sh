#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build a lab kernel into build/kernel/<flavour>/bzImage, from a pristine
# tree and kernel/lab.config (on a tinyconfig; the newest kernel also
# kernel/lab-new.config):
#   "stock", "patched":         Linux 6.12 LTS (build/linux-src); patched adds
#                               kernel/patches-6.12, the series' backport
#   "stock-new", "patched-new": the newest Linux in Debian's archive
#                               (build/linux-src-new); patched-new adds
#                               kernel/patches, the series as posted
# A patched kernel is built incrementally on a copy of its stock object tree
# when that is there (make builds the stock 6.12 one first), else whole.
# bzImages are cached under $CRIU_CET_CACHE/kernel/<key>.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

flavour=${1:-stock}
case $flavour in
stock | patched) base=lts stock=stock pin=linux src=$BUILD/linux-src configs=(lab.config) ;;
stock-new | patched-new)
	base=new stock=stock-new pin=linuxnew src=$BUILD/linux-src-new configs=(lab.config lab-new.config) ;;
*) die "unknown flavour '$flavour' (stock, patched, stock-new or patched-new)" ;;
esac
patches=()
[ "$flavour" = "$stock" ] || mapfile -t patches < <(kernel_series $base)

out=$BUILD/kernel/$flavour
# one kernel build at a time: the patched one starts from the stock objects
mkdir -p "$BUILD/kernel"
exec 9> "$BUILD/kernel/.lock-$flavour"
flock 9
# kernel_key FLAVOUR [PATCHES]: the cache key of a flavour's kernel
configs=("${configs[@]/#/$TOP/kernel/}")
kernel_key() { key -s "$(pin_sha $pin)" -s "$1" "${configs[@]}" "$0" "${@:2}"; }
k=$(kernel_key "$flavour" ${patches[@]+"${patches[@]}"})
cached=$CACHE/kernel/$k
# CRIU_CET_OBJECTS=1: build the object tree even when the bzImage is cached
# (make kernel-series starts from a copy of the stock objects)
if [ -z "${CRIU_CET_OBJECTS:-}" ] && [ -f "$cached/bzImage" ]; then
	install_file "$cached/bzImage" "$out/bzImage"
	install_file "$cached/config" "$out/config"
	say "$flavour kernel from cache ($k)"
	exit 0
fi

bash "$TOP/lab/build/linux-source.sh" $base

objdir=$BUILD/kernel/obj-$flavour
tree=$src
if [ "$flavour" != "$stock" ]; then
	tree=$BUILD/linux-$flavour
	rm -rf "$tree" "$objdir"
	cp -al "$src" "$tree"
	# reuse the stock objects when they are there and of this very
	# configuration (their key, written by the stock build): only what the
	# patches touch is rebuilt.  Objects of an older lab.config would give a
	# patched kernel without the options added since.
	[ -f "$BUILD/kernel/obj-$stock/arch/x86/boot/bzImage" ] &&
		[ "$(cat "$BUILD/kernel/obj-$stock/.lab-key" 2>/dev/null)" = "$(kernel_key $stock)" ] &&
		reuse_objects "$BUILD/kernel/obj-$stock" "$objdir" "$src" "$tree"
	apply_series "$tree" $base
fi
if [ ! -f "$objdir/.config" ]; then
	mkdir -p "$objdir"
	make -C "$tree" O="$objdir" -s tinyconfig
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$objdir" "$objdir/.config" "${configs[@]}" > /dev/null
	make -C "$tree" O="$objdir" -s olddefconfig
fi
# every option we asked for must have survived olddefconfig (and be in the
# stock objects a patched build starts from)
lost=$(cat "${configs[@]}" | grep -E '^CONFIG_[A-Z0-9_]+=y' | grep -vxFf "$objdir/.config" || true)
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
