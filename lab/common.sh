# SPDX-License-Identifier: GPL-2.0
# Shared shell helpers for the lab's build scripts (sourced, not run).

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
CACHE=${CRIU_CET_CACHE:-/var/cache/criu-cet}
PY=/usr/bin/python3

die() { echo "$(basename "$0"): error: $*" >&2; exit 1; }
say() { echo "[$(basename "$0" .sh)] $*"; }

# criu_tree_lock FLAVOUR / criu_tree_unlock: hold build/criu-FLAVOUR/src
# (fd 8).  Its build, the install rules, the relink for the CET glibc (which
# moves criu/criu away for a while) and the host ZDTM builds all run make in
# that tree, and the test session runs some of them at the same time.
criu_tree_lock() {
	mkdir -p "$BUILD/criu-$1"
	exec 8> "$BUILD/criu-$1/.tree.lock"
	flock 8
}
criu_tree_unlock() { exec 8>&-; }

# fetch NAME: print the verified path of a pinned source (lab/build/sources.lock)
fetch() { "$PY" "$TOP/lab/build/sources.py" fetch --dest "$CACHE/downloads" "$1" || die "cannot fetch $1"; }

# unpack_pin NAME DIR: the pinned source NAME, fetched and verified, unpacked
# into DIR (emptied first) without the tarball's top folder
unpack_pin() {
	local tarball
	tarball=$(fetch "$1") || exit 1
	rm -rf "$2" && mkdir -p "$2" && tar -xf "$tarball" -C "$2" --strip-components=1 ||
		die "cannot unpack $tarball"
}

# pin_sha NAME: the pinned sha256 of a source, part of every cache key using it
pin_sha() { awk -v n="$1" '$1 == n { print $6 }' "$TOP/lab/build/sources.lock"; }

# key ARGS...: cache key of input files and -s strings
key() { "$PY" "$TOP/lab/build/cachekey.py" "$@" || die "cache key"; }

# cache_store DIR SRC...: atomically publish files into the cache folder DIR
cache_store() {
	local dir=$1; shift
	local tmp="$dir.tmp.$$"
	mkdir -p "$tmp" && cp -a "$@" "$tmp"/ && rm -rf "$dir" && mv "$tmp" "$dir" ||
		die "cannot write cache $dir"
}

# install_file SRC DEST: put SRC at DEST unless it is already there.  A new
# name then a rename: DEST may be a binary that is running (Bochs in a lab
# run), which cannot be written in place.
install_file() {
	cmp -s "$1" "$2" && return 0
	mkdir -p "$(dirname "$2")" && cp "$1" "$2.tmp.$$" && mv -f "$2.tmp.$$" "$2" || die "cannot install $2"
}

# A copy of a kernel object tree built from OLD_TREE, for NEW_TREE: only
# what differs between the trees is rebuilt.  kbuild's saved commands name
# the source tree; without the rewrite every object would look out of date.
reuse_objects() {	# FROM_OBJ TO_OBJ OLD_TREE NEW_TREE
	cp -a "$1" "$2"
	grep -rlZ --include='.*.cmd' -F "$3" "$2" | xargs -0r sed -i "s|$3|$4|g"
	sed -i "s|$3|$4|g" "$2/Makefile" 2>/dev/null || true
	[ -L "$2/source" ] && ln -sfn "$4" "$2/source"
	return 0
}

# kernel_series [lts|new]: the kernel series' patches, in order, one a line,
# without the cover letter: kernel/patches-6.12 (its backport to the LTS
# kernel the lab runs) or kernel/patches (the series as posted, on the
# newest kernel)
kernel_series() {
	local dir=$TOP/kernel/patches
	[ "${1:-lts}" = new ] || dir=$TOP/kernel/patches-6.12
	ls "$dir"/*.patch 2>/dev/null | grep -v '/0000-cover-letter.patch$' | sort
}

# apply_series TREE BASE [PATCH...]: apply the series for BASE (lts or new),
# or the PATCHes given, to TREE, a hard-linked copy of a pristine tree:
# patch(1) writes new files, so the pristine one stays intact
apply_series() {
	local tree=$1 base=$2 p
	shift 2
	[ $# -gt 0 ] || set -- $(kernel_series "$base")
	for p; do
		patch -d "$tree" -p1 --forward --quiet < "$p" || die "$(basename "$p") does not apply to $tree"
	done
}

# criu_version TREE: the CRIU release a built tree is (4.1.1), as pycriu and crit say
criu_version() {
	sed -n "s/^__version__ = '\(.*\)'$/\1/p" "$1/crit/crit/version.py"
}

# shared_libs BINARY: the path of every shared library ldd names for it
shared_libs() {
	ldd "$1" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }'
}

# stage_missing_libs ROOT FILE...: the shared libraries the FILEs load that
# the initramfs lacks, at the host's paths under ROOT.  The initramfs has
# those either CRIU build loads (none while no CRIU is built: then ROOT
# gets them all, the dynamic loader too, and stands alone)
stage_missing_libs() {
	local root=$1 have f
	shift
	have=$(for f in "$BUILD"/criu-stock/criu "$BUILD"/criu-cet/criu; do [ ! -x "$f" ] || shared_libs "$f"; done | sort -u)
	for f in "$@"; do
		! ldd "$f" | grep 'not found' || die "$f lacks shared libraries on this host"
		shared_libs "$f"
	done | sort -u | while read -r f; do
		grep -qxF "$f" <<< "$have" && continue
		[ -e "$root$f" ] && continue
		mkdir -p "$root$(dirname "$f")"
		cp -Ln "$f" "$root$f"
	done
}

# stage_net_tools ROOT: iproute2's ip (busybox ip has no netns, no save)
# and iptables (nft back end: the lab kernel has NF_TABLES, no ip_tables)
# under ROOT, with the xtables modules CRIU's network locks load (-j CRIU,
# -m mark, ACCEPT, DROP; a connection's --sport/--dport under
# --tcp-established), dlopen()ed so ldd does not name them.  Their shared
# libraries are the caller's to stage.
stage_net_tools() {
	local root=$1 ip=/usr/sbin/ip t c xt=/usr/lib/x86_64-linux-gnu/xtables
	[ -x $ip ] || ip=/sbin/ip
	[ -x /usr/sbin/xtables-nft-multi ] && [ -x $ip ] || die "iptables or iproute2 is missing (lab/build/deps.sh)"
	install -D "$ip" "$root/usr/sbin/ip"
	install -D /usr/sbin/xtables-nft-multi "$root/usr/sbin/xtables-nft-multi"
	for t in iptables ip6tables; do
		for c in "$t" "$t-save" "$t-restore"; do
			ln -sf xtables-nft-multi "$root/usr/sbin/$c"
		done
	done
	mkdir -p "$root$xt"
	cp "$xt/libxt_standard.so" "$xt/libxt_mark.so" "$xt/libxt_tcp.so" "$root$xt/"
}

# stage_criu ROOT FLAVOUR_DIR: put FLAVOUR_DIR/criu at ROOT/lab/<flavour>/criu
# with every shared library ldd names, as the guest loads them
stage_criu() {
	local root=$1 dir=$2 flavour lib
	flavour=$(basename "$dir")
	[ -x "$dir/criu" ] || die "$dir/criu is missing"
	mkdir -p "$root/lab/$flavour"
	cp "$dir/criu" "$root/lab/$flavour/criu"
	shared_libs "$dir/criu" | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -Ln "$lib" "$root$lib"
	done
}

# strip_guest ROOT: debug info is of no use in the guest and every MiB costs
# boot time in the emulator (the kernel unpacks the initramfs instruction by
# instruction)
strip_guest() {
	find "$1/lab" "$1/lib" "$1/lib64" -type f 2>/dev/null | while read -r f; do
		file -b "$f" | grep -q '^ELF' && strip --strip-debug "$f"
	done
	return 0
}

# build_pycriu TREE: the python protobuf modules zdtm.py imports (lib/pycriu),
# generated as lib/pycriu's Makefile does, but without 'make lib', whose
# dependency on the criu target would rebuild criu in the tree.
build_pycriu() {
	local tree=$1 d=$1/lib/pycriu
	local protos=() p m
	for p in "$tree"/images/*.proto; do
		[ "$(basename "$p")" = rpc.proto ] || protos+=("$p")
	done
	if [ -f "$d/images/pb.py" ] && [ -f "$d/rpc_pb2.py" ] && [ -f "$d/version.py" ] &&
		[ -z "$(find "$tree/images" "$tree/criu/include/magic.h" -newer "$d/images/pb.py" \
			\( -name '*.proto' -o -name magic.h \) 2>/dev/null)" ]; then
		return 0
	fi
	protoc -I="$tree/images" -I=/usr/include --python_out="$d/images" "${protos[@]}" &&
		protoc -I="$tree/images" --python_out="$d" "$tree/images/rpc.proto" &&
		"$PY" "$tree/scripts/magic-gen.py" "$tree/criu/include/magic.h" "$d/images/magic.py" ||
		die "generating pycriu's protobuf modules in $tree failed"
	{
		echo "# Autogenerated. Do not edit!"
		for p in "${protos[@]}"; do
			m=$(basename "$p" .proto | tr - _)_pb2
			[ "$m" = opts_pb2 ] || echo "from .$m import *"
		done
	} > "$d/images/pb.py.tmp" && mv "$d/images/pb.py.tmp" "$d/images/pb.py"
	echo "__version__ = '$("$tree/../criu" --version | awk '/^Version:/ { print $2 }')'" > "$d/version.py"
}

# publish_overlay LINK DIR: make LINK (build/overlay-NAME) point at DIR,
# the overlay just built beside it as LINK.<pid>, in one rename: a lab boot
# may be packing the overlay while it is built again.  The build it replaced
# is kept one round (a boot's cpio may still read it); older ones go.
publish_overlay() {
	local link=$1 out=$2 prev d
	prev=$(readlink "$link" || true)
	[ -L "$link" ] || rm -rf "$link"	# a folder, from before the link
	ln -sfn "$(basename "$out")" "$link.new.$$" && mv -T "$link.new.$$" "$link" || die "cannot publish $link"
	for d in "$link".[0-9]*; do
		case $(basename "$d") in "$(basename "$out")" | "$prev") ;; *) rm -rf "$d" ;; esac
	done
}
