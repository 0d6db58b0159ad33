#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# criu relinked for the lab's CET glibc, so that criu itself runs on a
# shadow stack as on a distribution whose glibc is built with CET:
#   lab/build/relink-criu-cet-glibc.sh FLAVOUR OUT     (FLAVOUR: cet or stock)
# The objects of build/criu-FLAVOUR are linked again against the CET
# glibc (its crt files and libc, its loader as interpreter; lab/build/cet-cc's
# link flags) with an RPATH that adds Debian's library folders, where the
# guest has the libraries criu loads (libprotobuf-c, libnl, ...).  glibc
# 2.41 turns its shadow stack on only for an executable marked SHSTK, and
# CRIU's assembly files carry no property note, so the link marks it with
# ld's -z shstk (the code is ordinary compiled C: calls and returns pair).
# Debian's libraries are not marked either: the guest runs it with
# glibc.cpu.x86_shstk=on, which keeps the shadow stack on regardless.
# The tree's own criu is left as it was.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

flavour=$1 out=$2
tree=$BUILD/criu-$flavour/src
criu_tree_lock "$flavour"
[ -x "$tree/criu/criu" ] || die "criu-$flavour is not built"
ldflags="$("$TOP/lab/build/cet-cc" --print-ldflags | sed 's/ -Wl,-z,cet-report=error//')"
ldflags+=" -Wl,-z,shstk -Wl,--disable-new-dtags"
ldflags+=" -Wl,-rpath=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu"
mv "$tree/criu/criu" "$tree/criu/criu.orig"
trap 'mv "$tree/criu/criu.orig" "$tree/criu/criu"' EXIT
make -C "$tree" NO_GNUTLS=1 LDFLAGS="$ldflags" criu > "$BUILD/criu-$flavour/relink-cet-glibc.log" 2>&1 ||
	{ tail -5 "$BUILD/criu-$flavour/relink-cet-glibc.log"; die "relinking criu-$flavour for the CET glibc failed"; }
readelf -n "$tree/criu/criu" | grep -q 'x86 feature:.*SHSTK' || die "the relinked criu-$flavour is not SHSTK-marked"
mkdir -p "$(dirname "$out")"
mv "$tree/criu/criu" "$out"
say "criu-$flavour for the CET glibc ($(readelf -n "$out" | sed -n 's/.*x86 feature: //p')) -> $out"
