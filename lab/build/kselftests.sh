#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the kernel selftests the lab runs in the guest, static, into
# build/guest/kbin/ (lab/build/initramfs.sh puts them into /lab/bin):
#   test_shstk_status      the NT_X86_SHSTK_STATUS regset tests (kernel/patches-6.12)
#   test_shadow_stack      the kernel's own shadow stack selftest
#   uffd-helper            kernel/lab/uffd-helper.c, for test_shadow_stack's
#                          userfaultfd part
# Both selftests are built from the patched tree against its uapi headers;
# the same binaries run on the stock and the patched kernel.
# Results are cached under $CRIU_CET_CACHE/kselftests/<key>.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

out=$BUILD/guest/kbin
mapfile -t patches < <(kernel_series lts)
k=$(key -s "$(pin_sha linux)" -s "$(gcc --version | head -1)" "$0" "$TOP/kernel/lab/uffd-helper.c" \
	${patches[@]+"${patches[@]}"})
cached=$CACHE/kselftests/$k
bins=(test_shstk_status test_shadow_stack uffd-helper)
if [ -f "$cached/test_shadow_stack" ]; then
	mkdir -p "$out" && for b in "${bins[@]}"; do cp "$cached/$b" "$out/"; done
	say "kernel selftests from cache ($k)"
	exit 0
fi

src=$BUILD/linux-src
bash "$TOP/lab/build/linux-source.sh"
work=$(mktemp -d "$BUILD/kselftests.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The patched sources: a hard-linked copy, patch(1) writes new files
tree=$work/linux
cp -al "$src" "$tree"
apply_series "$tree" lts
make -C "$tree" O="$work/obj" -s headers_install INSTALL_HDR_PATH="$work/hdr" > "$work/hdr.log" 2>&1 ||
	{ tail -20 "$work/hdr.log"; die "headers_install failed"; }

# As tools/testing/selftests/x86/Makefile builds them, plus -static
cflags=(-O2 -g -std=gnu99 -pthread -Wall -static -isystem "$work/hdr/include")
x86=$tree/tools/testing/selftests/x86
mkdir -p "$work/bin"
[ -f "$x86/test_shstk_status.c" ] || die "no test_shstk_status.c: is the series in kernel/patches-6.12?"
for t in test_shstk_status test_shadow_stack; do
	(cd "$x86" && gcc -m64 "${cflags[@]}" -o "$work/bin/$t" "$t.c" -lrt -ldl) ||
		die "cannot build $t"
done
gcc -O2 -Wall -static -isystem "$work/hdr/include" -o "$work/bin/uffd-helper" "$TOP/kernel/lab/uffd-helper.c" ||
	die "cannot build uffd-helper"

mkdir -p "$out"
for b in "${bins[@]}"; do cp "$work/bin/$b" "$out/"; done
cache_store "$cached" "${bins[@]/#/$work/bin/}"
say "kernel selftests built and cached ($k) -> $out"
