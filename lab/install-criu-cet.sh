#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install criu-cet (built by `make criu-cet`) the way a distribution installs
# criu: criu and criu-ns, libcriu (.so, .a, headers, pkg-config), the
# plugin headers, pycriu (with criu-cet's images/cet.proto) and crit.
#   lab/install-criu-cet.sh [PREFIX] [DESTDIR]       (default /usr/local, /)
# CRIU's own install rules put the C parts in place; they hand pycriu and
# crit to pip, which Debian 12's externally managed Python (and a machine
# without PyPI) refuses: those are copied where Debian's python3 finds them
# (PREFIX /usr: lib/python3/dist-packages, else lib/python3.X/dist-packages).
# No man page: it needs asciidoc and xmlto, a large build for one page.
set -euo pipefail
. "$(dirname "$0")/common.sh"

prefix=${1:-/usr/local}
dest=${2:-}
tree=$BUILD/criu-cet/src
[ -x "$tree/criu/criu" ] || die "criu-cet is not built (make criu-cet)"
case $prefix in /*) ;; *) die "PREFIX must be absolute: $prefix" ;; esac

make -C "$tree" -s NO_GNUTLS=1 PREFIX="$prefix" DESTDIR="$dest" SKIP_PIP_INSTALL=1 \
	install-criu install-lib > "$BUILD/criu-cet/install.log" 2>&1 ||
	{ tail -20 "$BUILD/criu-cet/install.log"; die "CRIU's install rules failed"; }

if [ "$prefix" = /usr ]; then
	pydir=$prefix/lib/python3/dist-packages
else
	pydir=$prefix/lib/$(python3 -c 'import sys; print("python%d.%d" % sys.version_info[:2])')/dist-packages
fi
mkdir -p "$dest$pydir" "$dest$prefix/bin"
rm -rf "$dest$pydir/pycriu" "$dest$pydir/crit"
# the package as CRIU's build left it: generated *_pb2.py included, no caches
rsync -r --exclude=__pycache__ --exclude=Makefile --exclude=.gitignore "$tree/lib/pycriu/" "$dest$pydir/pycriu/"
rsync -r --exclude=__pycache__ "$tree/crit/crit/" "$dest$pydir/crit/"
# what pip's console_scripts entry (setup.cfg: crit = crit.__main__:main) would write
cat > "$dest$prefix/bin/crit" <<EOS
#!/usr/bin/python3
import sys
from crit.__main__ import main

sys.exit(main())
EOS
chmod 755 "$dest$prefix/bin/crit"
say "installed criu-cet into ${dest:-/}${dest:+ }(PREFIX $prefix): $("$tree/criu/criu" --version | tr '\n' ' ')"
