#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install criu-cet (built by `make criu-cet`) the way a distribution installs
# criu:
#   lab/packaging/install.sh PREFIX [DESTDIR]
#     PREFIX/sbin/criu, criu-ns         the binary with the CET subsystem and
#                                       `criu check --feature shadow_stack`
#     PREFIX/lib/<triplet>/libcriu.*    libcriu, its headers in
#     PREFIX/include/criu/, criu.pc     PREFIX/include/criu and pkg-config file
#     PREFIX/bin/compel, libcompel.*    compel (criu-cet's compel writes the
#                                       parasite's sigreturn token; criu links
#                                       it in, so its tool and shared library
#                                       are only built here)
#     PYTHONDIR/pycriu, crit            pycriu (with images/cet.proto) and crit
#     PREFIX/bin/crit
# PYTHONDIR is where Debian's /usr/bin/python3 looks: PREFIX/lib/python3/
# dist-packages for PREFIX /usr, PREFIX/lib/python3.X/dist-packages for
# any other (/usr/local is on the path; elsewhere set PYTHONPATH), unless
# PYTHONDIR is set.
#
# CRIU's own install rules (Makefile.install) put the C parts in place.
# They hand pycriu and crit to pip, which Debian 12's externally managed
# python refuses and which would want PyPI for setuptools: we copy the two
# packages as CRIU's build generated them instead, with the egg-info a
# Debian package of them carries, and write the crit command pip would.
# No man page: building it needs asciidoc, xmlto and the DocBook
# stylesheets, a toolchain far bigger than criu-cet itself, for one page
# that criu-cet does not change.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

prefix=${1:-/usr/local}
dest=${2:-}
tree=$BUILD/criu-cet/src
criu_tree_lock cet
case $prefix in /*) ;; *) die "PREFIX must be an absolute path: $prefix" ;; esac
for f in criu/criu lib/c/libcriu.so lib/pycriu/images/cet_pb2.py crit/crit/version.py; do
	[ -e "$tree/$f" ] || die "$f is not built (make criu-cet)"
done

# the same NO_GNUTLS as the build, or CRIU's feature detection differs and
# make rebuilds; SKIP_PIP_INSTALL: see above
make -C "$tree" NO_GNUTLS=1 PREFIX="$prefix" DESTDIR="$dest" SKIP_PIP_INSTALL=1 \
	install-criu install-lib install-compel > "$BUILD/criu-cet/install.log" 2>&1 ||
	{ tail -20 "$BUILD/criu-cet/install.log"; die "CRIU's install rules failed"; }

if [ -z "${PYTHONDIR:-}" ]; then
	if [ "$prefix" = /usr ]; then
		PYTHONDIR=/usr/lib/python3/dist-packages
	else
		PYTHONDIR=$prefix/lib/$("$PY" -c 'import sys; print("python%d.%d" % sys.version_info[:2])')/dist-packages
	fi
fi
pydir=$dest$PYTHONDIR
version=$(criu_version "$tree")
mkdir -p "$pydir" "$dest$prefix/bin"
rm -rf "$pydir/pycriu" "$pydir/crit"
rsync -r --exclude=__pycache__ --exclude=Makefile --exclude=.gitignore "$tree/lib/pycriu/" "$pydir/pycriu/"
rsync -r --exclude=__pycache__ "$tree/crit/crit/" "$pydir/crit/"
for pkg in pycriu crit; do
	printf 'Metadata-Version: 1.0\nName: %s\nVersion: %s\nLicense: GPLv2\n' "$pkg" "$version" \
		> "$pydir/$pkg-$version.egg-info"
done
# what pip writes for crit's console_scripts entry (crit = crit.__main__:main)
cat > "$dest$prefix/bin/crit" <<'EOF'
#!/usr/bin/python3
import sys

from crit.__main__ import main

sys.exit(main())
EOF
chmod 755 "$dest$prefix/bin/crit"

# a real install: the dynamic linker learns of libcriu.so.2 and libcompel.so.1
[ -z "$dest" ] && [ "$(id -u)" = 0 ] && ldconfig
say "criu-cet installed in ${dest:-/} (PREFIX $prefix, python packages in $PYTHONDIR)"
