#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian binary package of criu-cet, which installs on Debian 12 in
# place of criu:
#   lab/packaging/deb.sh    -> build/deb/criu-cet_<CRIU version>+cet<N>_<arch>.deb
# Its files are what `make install PREFIX=/usr` puts in a staging DESTDIR
# (lab/packaging/install.sh); its library dependencies are computed by
# dpkg-shlibdeps from the binaries in it.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

# criu-cet's own revision of the CRIU release: raise it for every package
# that ships different bits
revision=1
out=$BUILD/deb
stage=$out/stage
tree=$BUILD/criu-cet/src

rm -rf "$stage" && mkdir -p "$stage/DEBIAN"
bash "$TOP/lab/packaging/install.sh" /usr "$stage" > /dev/null
base=$(criu_version "$tree")
version=$base+cet$revision
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
libdir=usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# dpkg-shlibdeps works in a source tree: a throwaway debian/control will do.
# -l: libcompel.so.1, which criu links, is in this package, not the system.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/debian"
printf 'Source: criu-cet\n\nPackage: criu-cet\nArchitecture: any\n' > "$tmp/debian/control"
elves=$(cd "$stage" && find usr -type f -perm -u+x | while read -r f; do
	file -b "$f" | grep -q '^ELF .* dynamically linked' && echo "$stage/$f"; done)
shlibs=$(cd "$tmp" && dpkg-shlibdeps -O -l"$stage/$libdir" $elves 2> "$out/shlibdeps.log") ||
	{ cat "$out/shlibdeps.log"; die "dpkg-shlibdeps failed"; }
shlibs=${shlibs#shlibs:Depends=}

# Debian's criu 4.1.1 comes as criu, libcriu2, libcriu-dev, libcompel1,
# libcompel-dev and python3-pycriu (crit is in it); Debian 12's 3.17.1 is
# all in criu.  criu-cet ships all of it, so it stands for each of them.
replaced="criu python3-pycriu libcriu2 libcriu-dev libcompel1 libcompel-dev"
provides=$(for p in $replaced; do printf '%s (= %s), ' "$p" "$base"; done)
cat > "$stage/DEBIAN/control" <<EOF
Package: criu-cet
Version: $version
Architecture: $arch
Maintainer: Seed f7eb1814 maintainers <maintainers@users.noreply.a-seed-f7eb1814.example>
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $shlibs, python3:any, python3-protobuf
Provides: ${provides%, }
Conflicts: $(echo $replaced | sed 's/ /, /g')
Replaces: $(echo $replaced | sed 's/ /, /g')
Section: admin
Priority: optional
Homepage: https://criu.org
Description: checkpoint/restore in userspace, with x86 CET shadow stacks
 CRIU $base with criu-cet's CET subsystem: processes protected by x86 CET
 user shadow stacks are checkpointed and restored with every shadow stack,
 its pages, each thread's SSP, WRSS and lock mask as they were dumped.
 .
 A drop-in replacement of Debian's criu: criu and criu-ns, libcriu, compel,
 the Python bindings (pycriu, which reads criu-cet's CET image entry) and
 crit.  "criu check --feature shadow_stack" says whether this host can
 checkpoint and restore shadow-stack tasks.
EOF
# the libraries it ships, for packages built against them, and ld.so's cache
cat > "$stage/DEBIAN/shlibs" <<EOF
libcriu 2 criu-cet (>= $version)
libcompel 1 criu-cet (>= $version)
EOF
echo 'activate-noawait ldconfig' > "$stage/DEBIAN/triggers"
# pycriu's and crit's byte code, made and removed with the package as
# dh_python3 does it: Python writes __pycache__ in them otherwise, and a
# purge would leave that behind
for s in postinst:py3compile prerm:py3clean; do
	cat > "$stage/DEBIAN/${s%%:*}" <<EOF
#!/bin/sh
set -e
if command -v ${s#*:} >/dev/null 2>&1; then
	${s#*:} -p criu-cet
fi
EOF
	chmod 755 "$stage/DEBIAN/${s%%:*}"
done

mkdir -p "$stage/usr/share/doc/criu-cet"
cat > "$stage/usr/share/doc/criu-cet/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: criu-cet
Source: https://criu.org (CRIU $base) with the criu-cet overlay and patches

Files: *
Copyright: the CRIU authors; the criu-cet maintainers (the CET subsystem)
License: GPL-2.0
 This program is free software; you can redistribute it and/or modify it
 under the terms of the GNU General Public License version 2 as published
 by the Free Software Foundation.
 .
 On Debian systems, the full text of the GNU General Public License
 version 2 is in /usr/share/common-licenses/GPL-2.
EOF
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum > DEBIAN/md5sums)

deb=$out/criu-cet_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" > /dev/null || die "dpkg-deb failed"
say "$(basename "$deb") ($(du -h "$deb" | cut -f1)), Depends: $shlibs"
