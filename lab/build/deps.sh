#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian 12 packages the lab needs, only those that are missing.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

PACKAGES=(
	# fetching and unpacking sources
	ca-certificates xz-utils dpkg-dev rsync file patch
	# kernel
	build-essential flex bison libelf-dev libssl-dev bc cpio
	# CRIU (and ZDTM)
	pkg-config protobuf-c-compiler libprotobuf-c-dev libprotobuf-dev protobuf-compiler
	libnl-3-dev libnl-route-3-dev libcap-dev libnet1-dev libbsd-dev uuid-dev libaio-dev
	libnftables-dev iptables python3-protobuf python3-yaml
	# runc in the guest (lab/overlays/runc.sh) loads the host's libseccomp
	libseccomp2
	# the emulated machine and its boot medium
	bochsbios vgabios isolinux syslinux-common xorriso busybox-static
	# the CET glibc (lab/build/glibc.sh): its configure and scripts want GNU awk
	gawk
	# zdtm.py in the guest (lab/overlays/zdtm-runtime.sh): Debian's python3.11 and the
	# tools busybox lacks (bash, tar, coreutils, diffutils, util-linux and
	# libc-bin's ldd are Essential; nft for the tests whose .desc needs it)
	python3.11 make iproute2 mount nftables
	# tests
	python3-pytest
)

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
[ "$(id -u)" = 0 ] || die "missing packages (run as root or install them): ${missing[*]}"
say "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q > /dev/null || die "apt-get update failed (is Debian's archive reachable?)"
apt-get install -y -q --no-install-recommends "${missing[@]}" > /tmp/criu-cet-apt.log 2>&1 ||
	{ tail -5 /tmp/criu-cet-apt.log; die "apt-get install failed: ${missing[*]}"; }
