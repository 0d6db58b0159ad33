#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# podman for the lab's podman suite (lab/suites/podman.sh): Debian 12's
# podman 4.3.1 and conmon 2.1.6 (pins podman, conmon), the shared libraries
# they load that the initramfs lacks (podman's cgo ones: libsubid, libgpgme,
# libassuan from their pins, since the host has none of them; libdevmapper,
# libselinux, ... and conmon's glib and libsystemd from the host, Debian 12
# too), Debian's seccomp profile and policy.json (pin ctrcommon), and the
# suite's configuration: vfs storage (the lab kernel has neither overlayfs
# nor FUSE), cgroupfs and file events (no systemd), runc from the runc
# overlay, the CNI back end with no plugin at all (the suite's containers
# join a network namespace the suite makes, --network ns:PATH, or none).
# A folder run.py --overlay adds to the guest (41 MiB, for the podman boots
# only), beside build/overlay-runc (runc, GNU tar) and build/overlay-migrate
# (valkey on the CET glibc, iproute2, iptables).  With the argument
# "guest", all three in one folder (build/overlay-podman-guest, hard links:
# a test's Boot takes one overlay).  Prints the folder.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

out=$BUILD/overlay-podman
if [ "${1:-}" = guest ]; then
	migrate=$(bash "$TOP/lab/overlays/migrate.sh") || die "no migrate overlay"
	runc=$(bash "$TOP/lab/overlays/runc.sh") || die "no runc overlay"
	podman=$(bash "$0") || die "no podman overlay"
	out=$BUILD/overlay-podman-guest
	rm -rf "$out" && mkdir -p "$out"
	for d in "$migrate" "$runc" "$podman"; do
		cp -alf "$d/." "$out/" || die "cannot merge $d"
	done
	say "podman guest overlay $(du -sh "$out" | cut -f1) -> $out" >&2
	echo "$out"
	exit 0
fi
work=$(mktemp -d "$BUILD/podman.XXXXXX")
trap 'rm -rf "$work"' EXIT
for p in podman conmon libsubid libgpgme libassuan ctrcommon; do
	dpkg-deb -x "$(fetch $p)" "$work/deb" || die "cannot unpack pin $p"
done
podman=$work/deb/usr/bin/podman
conmon=$work/deb/usr/bin/conmon
[ -x "$podman" ] && [ -x "$conmon" ] || die "the podman or conmon package has no binary"
# ldd finds the pinned libraries (libsubid.so.4, libgpgme.so.11,
# libassuan.so.0) in the unpacked packages
export LD_LIBRARY_PATH=$work/deb/usr/lib/x86_64-linux-gnu
rm -rf "$out" && mkdir -p "$out/lab/podman" "$out/lib/x86_64-linux-gnu"
cp "$podman" "$conmon" "$out/lab/podman/"
# the libraries of both binaries in one pass, those of either CRIU left out
# (the initramfs has them), all in /lib/x86_64-linux-gnu: the pinned ones
# live under $work here, and the guest's ld.so searches that folder without
# a cache
have=$(for c in "$BUILD"/criu-stock/criu "$BUILD"/criu-cet/criu; do [ ! -x "$c" ] || shared_libs "$c"; done | sort -u)
for f in "$podman" "$conmon"; do
	! ldd "$f" | grep 'not found' || die "$f lacks shared libraries on this host"
	shared_libs "$f"
done | sort -u | while read -r lib; do
	grep -qxF "$lib" <<< "$have" && continue
	case $lib in */ld-linux-x86-64.so.2) continue ;; esac
	cp -L "$lib" "$out/lib/x86_64-linux-gnu/$(basename "$lib")"
done
version=$("$podman" --version)
unset LD_LIBRARY_PATH
# the criu podman's own checks run is "criu" on PATH (go-criu's swrkPath),
# whatever runc is told: the suite puts /lab/podman/cet or /lab/podman/stock
# first on PATH, beside --runtime-flag criu=/lab/criu-FLAVOUR/criu for runc
mkdir -p "$out/lab/podman/cet" "$out/lab/podman/stock"
ln -s /lab/criu-cet/criu "$out/lab/podman/cet/criu"
ln -s /lab/criu-stock/criu "$out/lab/podman/stock/criu"
install -D -m 0644 "$work/deb/usr/share/containers/seccomp.json" "$out/usr/share/containers/seccomp.json"
install -D -m 0644 "$work/deb/etc/containers/policy.json" "$out/etc/containers/policy.json"
mkdir -p "$out/etc/cni/net.d"
cat > "$out/etc/containers/storage.conf" <<'EOF'
# the lab's podman suite: the guest's kernel has no overlayfs nor FUSE, so
# vfs (a full copy per layer and per container, a few MiB here) on the
# suite's tmpfs root
[storage]
driver = "vfs"
runroot = "/run/containers/storage"
graphroot = "/var/lib/containers/storage"
EOF
cat > "$out/etc/containers/registries.conf" <<'EOF'
# no registry: the suite's image comes from `podman load`
unqualified-search-registries = []
short-name-mode = "disabled"
EOF
cat > "$out/etc/containers/containers.conf" <<'EOF'
# the lab's podman suite: root, no systemd (cgroupfs, file events), no
# journald, no registry
[containers]
log_driver = "k8s-file"
[network]
# CNI without a plugin: the suite's containers use --network ns:PATH or
# none, which call no plugin; netavark 1.4 would want iptables NAT, which
# the lab kernel lacks
network_backend = "cni"
network_config_dir = "/etc/cni/net.d"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
conmon_path = ["/lab/podman/conmon"]
helper_binaries_dir = ["/lab/podman"]
tmp_dir = "/run/libpod"
[engine.runtimes]
runc = ["/lab/runc/runc"]
EOF
strip_guest "$out" || true	# find complains of the missing lib64
say "podman overlay $(du -sh "$out" | cut -f1) ($version, $("$conmon" --version | head -1)) -> $out" >&2
echo "$out"
