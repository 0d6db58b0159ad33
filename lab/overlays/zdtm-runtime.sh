#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What CRIU's own test driver, test/zdtm.py, needs to run inside the lab guest
# (busybox only), from this Debian 12 host's packages: Debian's python3.11
# with the part of its standard library zdtm.py, its zdtm/ package, pycriu and
# crit import, python3-yaml and python3-protobuf, GNU make, bash, ldd, and the
# commands zdtm.py, the tests' Makefiles, test/zdtm_{mount,umount}_cgroups and
# CRIU itself run where busybox has no applet or one without the options
# used; each with the shared libraries ldd names, at the host's paths.
# Staged into OUT laid out as the guest's root (an overlay for run.py
# --overlay, or LAB_EXTRA's source).
#
#   usage: lab/overlays/zdtm-runtime.sh OUT [CRIU_TREE]
#
# CRIU_TREE (default build/criu-cet/src: CRIU 4.2.1 with the series, whose
# test/ is 4.2.1's; any CRIU source tree of that version) is
# only read: zdtm.py, pycriu and crit are run from a scratch copy of it on the
# host (python3 -v) to learn which modules they import.  pycriu and the
# ZDTM tests themselves are not staged: they are part of the test tree.
#
# In the guest, zdtm.py runs with /usr/sbin and /usr/bin before busybox's
# /bin (whose mount, ip, rm and tar are the incompatible ones below) and
# with make variables in MAKEFLAGS: lab/suites/zdtm-upstream.sh says which
# and why.  zdtm.py's own commands and CRIU's (execvp) follow PATH; CRIU's
# iptables runs through sh -c, but busybox has no iptables applet.
#
# command (who runs it)                              provider
# python3 (zdtm.py's '#!/usr/bin/env python3';       python3.11 (+ python3-yaml,
#   zdtm_ct re-executes ./zdtm.py)                     python3-protobuf, C++ impl.)
# env (that shebang)                                 busybox, linked at /usr/bin/env
# make --no-print-directory -C DIR T.pid|-n|clean    make (busybox has no make)
# sh -c, uname, sed, echo (Makefiles, shell=True)    busybox
# bash -c 'set -o pipefail; ...' (--stream)          bash
# ldd BINARY (ns/uns flavours copy libraries)        libc-bin's ldd (a bash script)
# flock F ./zdtm_mount_cgroups (every run)           util-linux (busybox: no flock)
# mount --make-private --bind . ROOT (ns/uns)        mount (util-linux; busybox
#                                                      mount has no --make-*)
# mount -t tmpfs|cgroup -o ..., umount -l,           busybox
#   cat grep mktemp rmdir (cgroup scripts)
# tail -n1, mkdir -p, ps axf | grep (shell)          busybox
# ps -p PID, ps axf --width 160                      busybox: "invalid option",
#   (diagnostics of a hung test only)                  exit status ignored; procps
#                                                      would be 3.8 MB of libraries
# rm -f --one-file-system (Makefile.inc's $(RM):     coreutils rm (busybox rm has
#   groups' T.cleanout, make clean)                    no --one-file-system)
# ip netns add|exec (--join-ns)                      iproute2 (busybox ip: no netns)
# criu: ip addr|route|rule save|restore (netns)      iproute2 (busybox ip: no save)
# criu: iptables-save/-restore, ip6tables-* (netns   iptables (nft backend: the lab
#   dump/restore, the default network lock)            kernel has NF_TABLES, no
#                                                      ip_tables), libxt_{standard,mark}
# criu: tar --create --gzip --no-unquote ...         tar (GNU; busybox tar lacks
#   (tmpfs mounts: the ns flavours' /dev)              these options)
# sort, diff, nft (tests' .desc 'deps': copied      coreutils, diffutils,
#   into the ns root from these paths: bridge,         nftables
#   cr_veth*, netns*, sit, macvlan, ...)
# strace (--strace), criu-image-streamer (--stream), not staged (options the
#   junit_xml (--junit), pkg-config (Makefiles'       lab does not use; pkg-config's
#   bpf test check)                                    absence only drops bpf tests)
set -euo pipefail
. "$(dirname "$0")/../common.sh"

[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 OUT [CRIU_TREE]" >&2; exit 2; }
out=$1
tree=${2:-$BUILD/criu-cet/src}
P=/usr/bin/python3.11	# Debian's, not a pyenv python earlier on PATH
V=3.11
STDLIB=/usr/lib/python$V
DIST=/usr/lib/python3/dist-packages
[ -x "$P" ] || die "$P is missing (apt-get install python3.11)"
[ -f "$tree/test/zdtm.py" ] && [ -d "$tree/lib/pycriu" ] || die "$tree is not a CRIU source tree"
"$P" -c 'import yaml, google.protobuf' 2>/dev/null || die "python3-yaml or python3-protobuf is missing"
for c in make bash ldd flock mount rm tar sort diff nft protoc; do
	command -v "$c" > /dev/null || die "$c is missing (lab/build/deps.sh)"
done

work=$(mktemp -d /tmp/zdtm-runtime.XXXXXX)
trap 'rm -rf "$work"' EXIT

# --- which modules: a scratch copy of the python parts of the tree, with
# pycriu's *_pb2.py generated as lab/reports/zdtm-host.sh's build_pycriu does
s=$work/criu
# (test/zdtm/: its python package only; a built tree holds every test binary)
mkdir -p "$s/test/zdtm" "$s/lib"
cp -a "$tree/test/zdtm.py" "$tree/test/zdtm.desc" "$s/test/"
cp -a "$tree"/test/zdtm/*.py "$TOP/test/zdtm/upstream/shstk_state.py" "$s/test/zdtm/"
# zdtm.py as the guest runs it: with our patches (test/zdtm/upstream)
for p in "$TOP"/test/zdtm/upstream/zdtm.py-*.patch; do
	patch -d "$s" -p1 --quiet < "$p" || die "$(basename "$p") does not apply to $tree"
done
cp -a "$tree/lib/pycriu" "$s/lib/" && ln -s ../lib/pycriu "$s/test/pycriu"
cp -a "$tree/crit" "$tree/images" "$s/"
protos=()
for p in "$s"/images/*.proto; do
	[ "$(basename "$p")" = rpc.proto ] || protos+=("$p")
done
protoc -I="$s/images" -I=/usr/include --python_out="$s/lib/pycriu/images" "${protos[@]}" &&
	protoc -I="$s/images" --python_out="$s/lib/pycriu" "$s/images/rpc.proto" &&
	"$P" "$tree/scripts/magic-gen.py" "$tree/criu/include/magic.h" "$s/lib/pycriu/images/magic.py" ||
	die "generating pycriu's protobuf modules failed"
for p in "${protos[@]}"; do
	m=$(basename "$p" .proto | tr - _)_pb2
	[ "$m" = opts_pb2 ] || echo "from .$m import *"
done > "$s/lib/pycriu/images/pb.py"
echo "__version__ = '0'" > "$s/lib/pycriu/version.py"
echo "__version__ = '0'" > "$s/crit/crit/version.py"

# zdtm.py's own main is no tracer: every action, 'list' too, first makes
# and mounts what a run needs (umount2, zdtm_ct, the ZDTM library, cgroup
# hierarchies, hugepages).  So its code is executed under another __name__
# (all its imports, no main), then its argument parser is run for 'run
# --help' and its 'list' on the scratch tree.  -S: none of this host's
# site-packages .pth files (distutils-precedence.pth's hack, ...), which the
# guest will not have; dist-packages by PYTHONPATH instead.  -v names the file of every
# module loaded (the frozen ones, os, site, codecs, ..., are inside the
# interpreter).  The last trace exercises messages and YAML as a run does
# (pb2dict, serialisation), so modules imported on first use are seen too;
# traceback is what a crashing run prints with.  A real run's path (test
# start, criu dump, its failure; 'zdtm.py run -f h' on the host) imports
# nothing the list and help paths do not.
driver='import sys
g = {"__name__": "zdtm_trace", "__file__": "zdtm.py"}
exec(compile(open("zdtm.py").read(), "zdtm.py", "exec"), g)
for argv in (["list"], ["run", "--help"]):
    sys.argv = ["zdtm.py"] + argv
    try:
        g["list_tests"](g["get_cli_args"]())
    except SystemExit:
        pass'
exercise='import pycriu, yaml, google.protobuf, traceback, importlib.util, json
from pycriu.images import pb, pb2dict
r = pycriu.rpc.criu_req(type=pycriu.rpc.DUMP); r.opts.pid = 1; r.opts.images_dir_fd = 3
q = pycriu.rpc.criu_req(); q.ParseFromString(r.SerializeToString())
pb2dict.dict2pb(pb2dict.pb2dict(q), pycriu.rpc.criu_req())
yaml.safe_load(yaml.safe_dump({"a": [1, "b"]}))'
# the tests' Python hooks (zdtm.py runs them: socket-tcp-*, net_lock_*):
# what each imports, and the IDNA codec socket.create_connection asks for
# (a hook died on "unknown encoding: idna" in the guest)
hooks='import ast, glob, importlib
for h in sorted(glob.glob("zdtm/*/*.hook")):
    src = open(h, errors="replace").read()
    if not src.startswith("#!/usr/bin/env python"):
        continue
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        for name in names:
            try:
                importlib.import_module(name)
            except ImportError:
                pass
"zdtm.example".encode("idna")'
trace() { (cd "$1" && shift && PYTHONPATH=$DIST:$s/lib "$P" -S -v "$@" 2>&1 > /dev/null) || die "trace: $*"; }
{
	trace "$s/test" -c "$driver"
	trace "$s/crit" -m crit --help
	trace "$s/test" -c "$exercise"
	trace "$tree/test" -c "$hooks"
} > "$work/trace"
"$P" - "$work/trace" > "$work/modules" <<-'EOF'
	import re, sys
	found = set()
	for line in open(sys.argv[1], errors="replace"):
	    m = (re.match(r"# code object from '?([^']*)'?$", line.strip()) or
	         re.match(r"# extension module '[^']*' loaded from '([^']*)'", line.strip()))
	    if not m:
	        continue
	    p = m.group(1)
	    if "/__pycache__/" in p:	# the source of a cached module
	        d, f = p.split("/__pycache__/")
	        p = d + "/" + f.split(".")[0] + ".py"
	    found.add(p)
	print("\n".join(sorted(found)))
EOF
grep -E "^($STDLIB|$DIST)/" "$work/modules" > "$work/stage" || die "no module traced"
# os.py: the landmark by which python finds its prefix (os itself is frozen)
echo "$STDLIB/os.py" >> "$work/stage"

# --- python: modules as sourceless byte code (x.pyc where x.py was): no
# compile in the guest.  Measured in a chroot of this folder on the host:
# 'import yaml, pycriu' costs 0.16 s of CPU from these, 0.33 s from the .py
# files with nothing compiled yet (each boot's first python start, 10-20x
# longer in the guest); the byte code is 0.44 MB more in the cpio.gz
# (1.16 MB against 0.72), about 0.1 s of guest boot.
# google.protobuf: python3-protobuf's C++ implementation (its default when
# present), which loads libprotobuf.so.32 and libstdc++: 5.5 MB, 1.9 MB in the
# cpio.gz (about 1 s of guest boot).  Measured on the host, 'import yaml,
# pycriu' costs 0.11 s of CPU with it, 0.22 s with the pure-python one
# (PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python), and each test starts
# python at least twice (zdtm.py, then ./zdtm.py again inside zdtm_ct): the
# C++ one pays for itself from the first test.  Only the modules it traces
# are staged, so the pure-python implementation is not there to select.
rm -rf "$out" && mkdir -p "$out"
install -D "$P" "$out/usr/bin/python$V"
ln -s "python$V" "$out/usr/bin/python3"
mkdir -p "$out$STDLIB/lib-dynload"	# exec_prefix's landmark
while read -r f; do
	mkdir -p "$out$(dirname "$f")"
	cp -L "$f" "$out$f"
done < "$work/stage"
"$P" -m compileall -q -b -s "$out" -p / "$out$STDLIB" "$out$DIST" > /dev/null || die "compileall failed"
find "$out$STDLIB" "$out$DIST" -name '*.py' -delete

# --- commands
install -D "$(command -v make)" "$out/usr/bin/make"
install -D /usr/bin/bash "$out/usr/bin/bash"
# /bin/bash: ldd's '#!/bin/bash'; busybox has no bash applet, nothing is shadowed
mkdir -p "$out/bin" && ln -s ../usr/bin/bash "$out/bin/bash"
install -D -m 0755 /usr/bin/ldd "$out/usr/bin/ldd"
ln -s ../../bin/busybox "$out/usr/bin/env"
install -D /usr/bin/flock "$out/usr/bin/flock"
install -D /usr/bin/mount "$out/usr/bin/mount"
install -D /usr/bin/rm "$out/usr/bin/rm"
install -D /usr/bin/tar "$out/usr/bin/tar"
install -D /usr/bin/sort "$out/usr/bin/sort"
install -D /usr/bin/diff "$out/usr/bin/diff"
install -D /usr/sbin/nft "$out/usr/sbin/nft"
stage_net_tools "$out"

# --- every shared library of every ELF staged, at the host's paths, but
# those the initramfs has already (common.sh: stage_missing_libs)
mapfile -t elves < <(find "$out" -type f ! -name '*.pyc' | while read -r f; do
	file -b "$f" | grep -q '^ELF' && echo "$f"
done)
stage_missing_libs "$out" "${elves[@]}"
find "$out" -type f ! -name '*.pyc' | while read -r f; do
	if file -b "$f" | grep -q '^ELF.*not stripped'; then strip --strip-debug "$f"; fi
done
[ -x "$out/lib64/ld-linux-x86-64.so.2" ] || [ -x "$BUILD/criu-stock/criu" ] || [ -x "$BUILD/criu-cet/criu" ] ||
	die "no dynamic loader staged"

size=$(du -sh --apparent-size "$out" | cut -f1)
gz=$( (cd "$out" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -6 | wc -c)
say "zdtm runtime: $(wc -l < "$work/stage") python modules, $size, cpio.gz $((gz / 1024)) KiB -> $out" >&2
echo "$out"
