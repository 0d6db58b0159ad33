#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Is the kernel series in kernel/patches bisectable and buildable?
#  - after each patch (1, 1-2, ...), a whole bzImage of the lab config,
#    built incrementally from the stock objects;
#  - the whole series with CONFIG_X86_USER_SHADOW_STACK=n (a full build:
#    the regset code compiled out);
#  - the selftests against the series' headers.
# One line per step ("series: ... ok|FAILED") and a summary; exit 1 if a step
# failed.  Nothing is cached.  About 15 min on 2 cores:
#   make kernel-series
set -euo pipefail
. "$(dirname "$0")/../common.sh"

mapfile -t patches < <(ls "$TOP"/kernel/patches/*.patch | grep -v '/0000-cover-letter.patch$' | sort)
bash "$TOP/lab/build/linux-source.sh"
src=$BUILD/linux-src
[ -f "$BUILD/kernel/obj-stock/arch/x86/boot/bzImage" ] || CRIU_CET_OBJECTS=1 bash "$TOP/lab/build/kernel.sh" stock

work=$BUILD/kernel-series
rm -rf "$work" && mkdir -p "$work"
tree=$work/linux
cp -al "$src" "$tree"
failed=0

# STEP-NAME OBJDIR: a bzImage, its log kept in OBJDIR/build.log
build() {
	local t0=$SECONDS
	if make -C "$tree" O="$2" -j"$(nproc)" -s bzImage > "$2/build.log" 2>&1; then
		echo "series: $1: bzImage ok ($((SECONDS - t0)) s, $(grep -c 'warning:' "$2/build.log") warnings)"
	else
		echo "series: $1: bzImage FAILED ($((SECONDS - t0)) s)"
		grep -E 'error|warning' "$2/build.log" | head -10
		failed=1
	fi
}

reuse_objects "$BUILD/kernel/obj-stock" "$work/obj" "$src" "$tree"
for i in "${!patches[@]}"; do
	p=${patches[$i]}
	# patch(1) writes new files, so the hard-linked pristine tree stays intact
	patch -d "$tree" -p1 --forward --quiet < "$p" || die "$(basename "$p") does not apply"
	build "patch $((i + 1))/${#patches[@]} $(basename "$p" .patch | cut -c6-60)" "$work/obj"
done

nocfg=$work/obj-noshstk
mkdir -p "$nocfg"
cp "$BUILD/kernel/obj-stock/.config" "$nocfg/.config"
"$tree/scripts/config" --file "$nocfg/.config" -d X86_USER_SHADOW_STACK
make -C "$tree" O="$nocfg" -s olddefconfig
if grep -q '^CONFIG_X86_USER_SHADOW_STACK=y' "$nocfg/.config"; then
	echo "series: CONFIG_X86_USER_SHADOW_STACK=n: could not be set FAILED"
	failed=1
else
	build "whole series, CONFIG_X86_USER_SHADOW_STACK=n" "$nocfg"
fi

make -C "$tree" O="$work/hdrobj" -s headers_install INSTALL_HDR_PATH="$work/hdr" > "$work/hdr.log" 2>&1 ||
	die "headers_install failed"
x86=$tree/tools/testing/selftests/x86
if (cd "$x86" && gcc -m64 -O2 -g -std=gnu99 -pthread -Wall -Werror -static -isystem "$work/hdr/include" \
	-o "$work/test_shstk_ptrace_cet" test_shstk_ptrace_cet.c -lrt -ldl) > "$work/selftest.log" 2>&1; then
	echo "series: selftest test_shstk_ptrace_cet: builds with -Wall -Werror ok"
else
	echo "series: selftest test_shstk_ptrace_cet: build FAILED"
	head -10 "$work/selftest.log"
	failed=1
fi
[ "$failed" = 0 ] && echo "series: all steps ok" || echo "series: some steps FAILED"
exit "$failed"
