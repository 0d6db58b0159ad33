#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A Debian 12 binary package of criu-cet that installs in place of criu:
# criu, criu-ns, libcriu, pycriu, crit (what lab/install-criu-cet.sh puts
# under /usr), its shared-library dependencies computed by dpkg-shlibdeps.
#   lab/build-deb.sh        -> build/deb/criu-cet_<version>_amd64.deb
set -euo pipefail
. "$(dirname "$0")/common.sh"

# CRIU's version, then criu-cet's package revision of it
version=4.1.1+cet1
out=$BUILD/deb
stage=$out/stage
rm -rf "$stage" && mkdir -p "$stage/DEBIAN"
bash "$TOP/lab/install-criu-cet.sh" /usr "$stage" > /dev/null
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# dpkg-shlibdeps wants a source tree: a throwaway debian/control is enough
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debian"
printf 'Source: criu-cet\n\nPackage: criu-cet\nArchitecture: any\n' > "$tmp/debian/control"
shlibs=$(cd "$tmp" && dpkg-shlibdeps -O -l"$stage/usr/lib/$multiarch" \
	"$stage/usr/sbin/criu" "$stage/usr/lib/$multiarch/libcriu.so.2.0" 2> "$out/shlibdeps.log") ||
	{ cat "$out/shlibdeps.log"; die "dpkg-shlibdeps failed"; }
shlibs=${shlibs#shlibs:Depends=}

mkdir -p "$stage/usr/share/doc/criu-cet"
cat > "$stage/usr/share/doc/criu-cet/copyright" <<EOS
criu-cet: CRIU $version with checkpoint/restore of x86 CET shadow-stack processes.
CRIU is Copyright the CRIU authors; criu-cet's additions are Copyright the
criu-cet maintainers.  Both are distributed under the GNU General Public
License version 2 (GPL-2.0); on Debian systems its text is in
/usr/share/common-licenses/GPL-2.
EOS
# the same names Debian's criu packages use, so that it takes their place
others="criu, python3-pycriu, crit, libcriu2, libcriu-dev"
cat > "$stage/DEBIAN/control" <<EOS
Package: criu-cet
Version: $version
Architecture: $arch
Maintainer: criu-cet maintainers <maintainers@users.noreply.a-seed-f7eb1814.example>
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $shlibs, python3:any, python3-protobuf
Provides: criu (= 4.1.1), python3-pycriu (= 4.1.1), crit (= 4.1.1)
Conflicts: $others
Replaces: $others
Section: admin
Priority: optional
Homepage: https://criu.org
Description: checkpoint/restore in userspace, with x86 CET shadow stacks
 CRIU 4.1.1 with criu-cet: processes protected by x86 CET user shadow
 stacks are checkpointed and restored with every shadow stack, SSP, WRSS
 and lock mask as they were.  A drop-in criu for container runtimes (runc,
 crun, podman), with libcriu, pycriu and crit; "criu check --feature
 shadow_stack" says whether this host can do it.
EOS
mkdir -p "$out"
deb=$out/criu-cet_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" > /dev/null
say "$(basename "$deb"): $(du -h "$deb" | cut -f1), Depends: $shlibs"
echo "$deb"
