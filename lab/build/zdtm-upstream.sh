#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The base CRIU's own ZDTM tests (pin criu42, CRIU 4.2.1, criu-cet's base;
# its test/ tree unmodified), built twice and staged as trees that CRIU's test/zdtm.py runs from inside the
# lab guest, which has GNU make but no compiler:
#
#   bash lab/build/zdtm-upstream.sh OUT [LIST]
#
# LIST (a file, one zdtm/static|transition/NAME a line, '#' comments): only
# these tests and ZDTM's lib, for a run of a few (make test's sample: a
# minute instead of five, and a smaller guest overlay); without it, every
# test the Makefiles name.
#
#   OUT/plain/test/      gcc against Debian 12's glibc, dynamically linked,
#                        as CRIU's CI builds them
#   OUT/shstk/test/      by upstream's own SHSTK_ENABLE=1 build (Makefile.inc:
#                        -mshstk, -Wl,-z,shstk), with lab/build/cet-cc against the
#                        lab's CET glibc: every test SHSTK-marked, loaded by
#                        /opt/cet-glibc/lib/ld-linux-x86-64.so.2, so that
#                        GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK runs it on a
#                        locked shadow stack
#   OUT/libgcc_s.so.1    a SHSTK-marked libgcc_s for the CET glibc (see
#                        build_libgcc_s), for the guest's /opt/cet-glibc/lib
#   OUT/build-failures.txt   "<flavour> <zdtm/static/NAME> <reason>" a line
#   OUT/shstk-unmarked.txt   the objects built without CET that shstk tests
#                        link (Debian's static libraries), as ld named them
#   OUT/runtime-needs.txt    "<flavour> <library> <tests>": what the guest
#                        must have besides glibc (Debian's libaio.so.1 and
#                        the like for plain; libgcc_s.so.1 for both)
#
# Each test/ is what zdtm.py expects as its working directory: zdtm.py,
# the .desc files, zdtm/{lib,static,transition} with their Makefiles,
# sources, .d files and binaries, zdtm_ct and umount2 (tools zdtm.py runs,
# plain gcc in both trees), the cgroup helpers, plugins/ (zdtm.py runs
# "make -C plugins clean" at every start).  No object files: the binaries
# are newer than everything make compares them with, so "make NAME.pid"
# only starts the test.  The pycriu link (../lib/pycriu) is left for the
# caller, who has a built CRIU.  The mtimes matter: pack the trees with a
# tool that keeps them (cpio, tar).  The result is cached under
# $CRIU_CET_CACHE/zdtm-upstream/<key>.
set -euo pipefail
. "$(dirname "$0")/../common.sh"

[ $# -eq 1 ] || [ $# -eq 2 ] || die "usage: $0 OUT [LIST]"
OUT=$(realpath -m "$1")
LIST=${2:+$(realpath "$2")}
# the tests of LIST by folder (static, transition), or none: all
list_tests() { [ -z "$LIST" ] || sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$LIST" | awk -v d="zdtm/$1/" 'index($1, d) == 1 { print substr($1, length(d) + 1) }'; }
PREFIX=/opt/cet-glibc
GCCLIB=$(dirname "$(gcc -print-libgcc-file-name)")
# Debian's libraries some tests link (-laio, -lcap, libnl): none of them is
# SHSTK-marked, neither their .so (glibc refuses to load it once the shadow
# stack is locked) nor their .a.  The shstk tests link the archives (only
# these in a -L folder of their own, which ld searches first), and
# -z shstk marks the result, as upstream's SHSTK_ENABLE=1 does: this code
# is plain C and system calls, it keeps to call/ret
STATIC_LIBS="libaio.a libcap.a libnl-3.a libnl-route-3.a"
# the parts of test/ that zdtm.py uses; javaTests, others, exhaustive,
# compel, libfault, cuda-checkpoint, jenkins are other harnesses
KEEP="zdtm.py zdtm zdtm.desc groups.desc inhfd.desc inhfd zdtm_ct.c umount2.c
 zdtm_mount_cgroups zdtm_umount_cgroups empty-netns-prep.sh pki plugins Makefile
 abrt.sh crit-recode.py pycriu"
# every shstk test must load only these, from the CET glibc (checked)
CET_RUNTIME="ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 libresolv.so.2"

bash "$TOP/lab/build/glibc.sh" >&2 || die "no CET glibc"
sysroot=${CET_GLIBC_SYSROOT:-$BUILD/cet-glibc}
cetlib=$sysroot$PREFIX/lib
[ -e "$cetlib/libc.so.6" ] || die "no CET glibc at $sysroot"

sums() { sha256sum "$@" | awk '{ print $1 }'; }
# the CET glibc by its libc (its key's inputs decide it); Debian's compiler,
# glibc and the libraries linked in by what is installed
k=$(key -s "$(pin_sha criu42)" -s "$(sums "$cetlib/libc.so.6" "$cetlib/libc.so")" \
	-s "$(dpkg-query -W gcc-12 libc6-dev binutils libgcc-12-dev libgcc-s1 libaio-dev libcap-dev libnl-3-dev \
		libnl-route-3-dev libprotobuf-c-dev protobuf-c-compiler make)" \
	"$0" "$TOP/lab/build/cet-cc" ${LIST:+"$LIST"})
cached=$CACHE/zdtm-upstream/$k

publish() {	# copy the cached result to OUT, print the sizes
	rm -rf "$OUT" && mkdir -p "$OUT"
	cp -a "$cached"/* "$OUT/"
	say "plain $(du -sh "$OUT/plain" | cut -f1), shstk $(du -sh "$OUT/shstk" | cut -f1)," \
		"$(wc -l < "$OUT/build-failures.txt") build failures -> $OUT"
}
if [ -e "$cached/build-failures.txt" ]; then
	publish
	say "from cache ($k)"
	exit 0
fi

# scratch: the two builds, libgcc_s and the result before it is cached
# (not the whole folder: the caller's OUT may be in it)
work=$BUILD/zdtm-upstream${LIST:+-$(basename "$LIST" .list)}
res=$work/result
rm -rf "$work/plain" "$work/shstk" "$work/libgcc_s" "$work/static-libs" "$res"
mkdir -p "$work/static-libs" "$res"
tarball=$(fetch criu42)
top=$(basename "$tarball" .orig.tar.xz | tr _ -)	# criu_4.2.1 -> criu-4.2.1
for a in $STATIC_LIBS; do
	f=/usr/lib/x86_64-linux-gnu/$a
	[ -e "$f" ] || die "$f is missing (lab/build/deps.sh)"
	ln -s "$f" "$work/static-libs/$a"
done

# build_libgcc_s OUT_FILE: glibc dlopens libgcc_s.so.1 for pthread_exit,
# thread cancellation and backtrace() (misc/unwind-link.c: _Unwind_Backtrace,
# _Unwind_ForcedUnwind, _Unwind_GetCFA, _Unwind_GetIP, _Unwind_Resume,
# __gcc_personality_v0) and, with the shadow stack locked, refuses Debian
# 12's, which is not SHSTK-marked.  Debian's libgcc_eh.a (the unwinder for
# static links) is marked, but its symbols are hidden: a copy of its objects
# with them made default, linked as a shared object against the CET glibc
# with -z cet-report=error, exports them under Debian's libgcc_s versions
# (GCC_3.0, ...), so it also stands in for programs that name it.
build_libgcc_s() {
	local out=$1 d=$work/libgcc_s
	mkdir -p "$d/obj" && (cd "$d/obj" && ar x "$GCCLIB/libgcc_eh.a") || die "cannot unpack libgcc_eh.a"
	# what Debian's libgcc_s.so.1 exports by default ("(VER)" is a hidden
	# version, "VER" the default one): name and version
	objdump -T /lib/x86_64-linux-gnu/libgcc_s.so.1 |
		awk '$2 == "g" && $0 !~ /\*UND\*/ && $(NF-1) !~ /^\(/ { print $NF, $(NF-1) }' |
		sort > "$d/debian.syms"
	[ -s "$d/debian.syms" ] || die "cannot read Debian's libgcc_s.so.1"
	# an ELF symbol's visibility (st_other) is beyond objcopy: set it here
	"$PY" - "$d/debian.syms" "$d"/obj/*.o > "$d/unhidden" <<-'EOF' || die "cannot unhide libgcc_eh's symbols"
	import struct, sys
	wanted = {l.split()[0] for l in open(sys.argv[1])}
	for path in sys.argv[2:]:
	    data = bytearray(open(path, "rb").read())
	    assert data[:5] == b"\x7fELF\x02" and data[5] == 1, path  # ELF64 LE
	    shoff, = struct.unpack_from("<Q", data, 0x28)
	    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
	    shdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
	    for sh in shdrs:
	        if sh[1] != 2:  # SHT_SYMTAB
	            continue
	        off, size, entsize = sh[4], sh[5], sh[9]
	        stroff = shdrs[sh[6]][4]
	        for s in range(off, off + size, entsize):
	            name, info, other, shndx = struct.unpack_from("<IBBH", data, s)
	            end = data.index(b"\0", stroff + name)
	            sym = data[stroff + name:end].decode()
	            # defined, global or weak, hidden, and exported by Debian's
	            if shndx != 0 and info >> 4 in (1, 2) and other & 3 == 2 and sym in wanted:
	                data[s + 5] = other & ~3
	                print(sym)
	    open(path, "wb").write(data)
	EOF
	sort -u "$d/unhidden" -o "$d/unhidden"
	for n in _Unwind_Backtrace _Unwind_ForcedUnwind _Unwind_GetCFA _Unwind_GetIP _Unwind_Resume __gcc_personality_v0; do
		grep -qx "$n" "$d/unhidden" || die "libgcc_eh.a has no hidden $n to export"
	done
	# a version script: each exported name under its Debian version
	join "$d/unhidden" "$d/debian.syms" | awk '{ v[$2] = v[$2] "\t" $1 ";\n" }
		END { n = 0; for (x in v) { printf "%s {\n global:\n%s%s};\n", x, v[x], n++ ? "" : " local: *;\n" } }' \
		> "$d/libgcc_s.map"
	# -nostdlib: no crt files, no libgcc_s of Debian's; libgcc.a for any
	# helper the unwinder calls, the CET glibc for dl_iterate_phdr and co
	gcc -shared -nostdlib -o "$out" "$d"/obj/*.o "$GCCLIB/libgcc.a" \
		-L"$cetlib" -lc -Wl,-soname,libgcc_s.so.1 -Wl,--version-script="$d/libgcc_s.map" \
		-Wl,-z,defs -Wl,-z,shstk -Wl,-z,cet-report=error -Wl,-z,noexecstack \
		2> "$d/link.log" || { cat "$d/link.log" >&2; die "libgcc_s.so.1 failed to link"; }
	strip --strip-debug "$out"
	readelf -n "$out" | grep -q 'x86 feature: IBT, SHSTK' || die "libgcc_s.so.1 is not SHSTK-marked"
	for n in _Unwind_Backtrace _Unwind_ForcedUnwind _Unwind_GetCFA _Unwind_GetIP _Unwind_Resume __gcc_personality_v0; do
		readelf --dyn-syms -W "$out" | awk -v n="$n" '$7 != "UND" && $8 ~ "^" n "@@"' | grep -q . ||
			die "libgcc_s.so.1 does not export $n"
	done
	say "libgcc_s.so.1: $(wc -l < "$d/unhidden") symbols, $(stat -c %s "$out") bytes, $(readelf -n "$out" | grep -o 'x86 feature: .*')"
}

# build_flavour NAME [MAKE ARGS]: the source's test/ in $work/NAME/src,
# "make -k" over zdtm/ (lib, static, transition); zdtm_ct and umount2 by
# Debian's gcc whatever the flavour: they are zdtm.py's tools, not tests
build_flavour() {
	local name=$1 src=$work/$1/src; shift
	mkdir -p "$src"
	# criu/include: the rtc test's CRIU plugin (criu-rtc.so) includes criu-plugin.h
	tar -xf "$tarball" -C "$src" --strip-components=1 "$top/test" "$top/criu/include" ||
		die "cannot unpack $tarball"
	say "building the $name tests"
	# -O: one target's messages together, for the failure reasons
	if [ -z "$LIST" ]; then
		make -k -O -j2 -C "$src/test/zdtm" "$@" all > "$work/$name/make.log" 2>&1 || true
	else
		{ make -k -O -j2 -C "$src/test/zdtm/lib" "$@" all &&
			make -k -O -j2 -C "$src/test/zdtm/static" "$@" $(list_tests static) &&
			make -k -O -j2 -C "$src/test/zdtm/transition" "$@" $(list_tests transition); } \
			> "$work/$name/make.log" 2>&1 || true
	fi
	make -C "$src/test" CC=gcc umount2 zdtm_ct > "$work/$name/tools.log" 2>&1 ||
		{ cat "$work/$name/tools.log" >&2; die "zdtm_ct or umount2 failed ($name)"; }
}

# failures NAME [MAKE ARGS]: every test the Makefiles name (TST) that has
# no binary, with the compiler's first complaint about it
failures() {
	local name=$1 src=$work/$1/src/test t dir reason; shift
	for dir in zdtm/static zdtm/transition; do
		for t in $( [ -n "$LIST" ] && list_tests "${dir#zdtm/}" ||
			make -s -C "$src/$dir" "$@" --eval 'print-tst: ; @echo $(TST)' print-tst 2>/dev/null); do
			[ -x "$src/$dir/$t" ] && continue
			reason=$(make -C "$src/$dir" "$@" "$t" 2>&1 | grep -m1 -iE 'error|undefined|cannot|no rule' ||
				echo "not built, make names no error")
			echo "$name $dir/$t $reason" | tr -s ' \t' ' '
		done
	done
	[ -n "$LIST" ] || [ -x "$src/zdtm/lib/groups" ] || echo "$name zdtm/lib/groups not built"
}

# stage NAME: $res/NAME/test, the parts zdtm.py uses, no objects,
# no debug info, mtimes so that make finds every binary up to date
stage() {
	local src=$work/$1/src/test dst=$res/$1/test f
	mkdir -p "$dst"
	for f in $KEEP zdtm_ct umount2; do
		[ -e "$src/$f" ] || [ -L "$src/$f" ] || die "$1: test/$f is missing"
		cp -a "$src/$f" "$dst/"
	done
	find "$dst" -name '*.o' -delete
	# debug info is of no use in the guest, and every MiB costs boot time and RAM
	find "$dst" -type f -perm -u+x | while read -r f; do
		if file -b "$f" | grep -q '^ELF'; then strip --strip-debug "$f"; fi
	done
	find "$dst" -type f \( -name '*.so' -o -name '*.a' \) -exec strip --strip-debug {} +
	# make's view, oldest first: the sources (and the rest); the generated
	# protobuf-c sources; libzdtmtst.a and criu-rtc.so; rtc.c (the static
	# Makefile has "rtc.c: criu-rtc.so"); the .d files (made from the .c
	# files, included by every make run); the executables.  Fixed times,
	# older than any guest clock: the trees are the same from every build.
	local t0=1735689600	# 2025-01-01
	find "$dst" -exec touch -h -d @$t0 {} +
	find "$dst" -name '*.pb-c.[ch]' -exec touch -d @$((t0 + 60)) {} +
	find "$dst" -type f \( -name '*.a' -o -name '*.so' \) -exec touch -d @$((t0 + 120)) {} +
	touch -d @$((t0 + 180)) "$dst/zdtm/static/rtc.c"
	find "$dst" -name '*.d' -exec touch -d @$((t0 + 240)) {} +
	find "$dst" -type f -perm -u+x ! -name '*.so' -exec touch -d @$((t0 + 300)) {} +
}

# needs NAME: "NAME LIBRARY TEST..." for every library a test of the tree
# loads besides glibc's own: the NEEDED ones, and libgcc_s.so.1, which
# glibc dlopens for pthread_exit and thread cancellation (no ldd shows it)
needs() {
	local dst=$res/$1/test f lib
	find "$dst/zdtm" -type f -perm -u+x ! -name '*.so' | sort | while read -r f; do
		file -b "$f" | grep -q '^ELF' || continue
		for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			case " $CET_RUNTIME " in *" $lib "*) ;; *) echo "$lib ${f#"$dst/"}" ;; esac
		done
		if readelf --dyn-syms -W "$f" | grep -qE ' UND (pthread_exit|pthread_cancel)(@|$)'; then
			echo "libgcc_s.so.1 ${f#"$dst/"}"
		fi
	done | awk -v n="$1" '{ t[$1] = t[$1] " " $2 } END { for (l in t) print n, l t[l] }' | sort
}

# check_shstk: every shstk test binary SHSTK-marked, loaded by the CET
# glibc's ld.so, and needing only the CET glibc's libraries (marked)
check_shstk() {
	local dst=$res/shstk/test f lib bad=0 n=0
	while read -r f; do
		file -b "$f" | grep -q '^ELF' || continue
		case $f in */zdtm_ct | */umount2) continue ;; esac
		n=$((n + 1))
		readelf -n "$f" | grep -q 'x86 feature:.*SHSTK' || { echo "not SHSTK-marked: $f" >&2; bad=1; }
		# criu-rtc.so is the rtc test's CRIU plugin: no interpreter
		case $f in *.so) ;; *) readelf -lW "$f" | grep -q "interpreter: $PREFIX/lib/ld-linux-x86-64.so.2" ||
			{ echo "not loaded by the CET glibc: $f" >&2; bad=1; } ;; esac
		for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			case " $CET_RUNTIME " in *" $lib "*) ;; *) echo "$f needs $lib, not the CET glibc's" >&2; bad=1 ;; esac
		done
	done < <(find "$dst/zdtm" -type f -perm -u+x)
	for lib in $CET_RUNTIME; do
		readelf -n "$cetlib/$lib" | grep -q 'x86 feature:.*SHSTK' || { echo "$lib is not SHSTK-marked" >&2; bad=1; }
	done
	[ $bad = 0 ] || die "shstk tests that glibc would not run on a shadow stack (above)"
	say "shstk: $n ELF files under zdtm/, each SHSTK-marked, on the CET glibc"
}

# The plain build: Debian's gcc and glibc, as CRIU's CI does it
build_flavour plain
# The shstk build: upstream's SHSTK_ENABLE=1 (Makefile.inc adds -mshstk to
# CFLAGS and -Wl,-z,shstk to LDFLAGS), by cet-cc against the CET glibc.
# The static libraries above come in through LDFLAGS from the environment
# (a command-line LDFLAGS would override the Makefiles' "LDFLAGS += ...").
# CET_CC_REPORT=warning: cet-cc's default -z cet-report=error would fail
# the links that take those unmarked libraries; -z shstk sets the mark
# instead, and ld's warnings name the objects compiled without CET (kept
# in OUT/shstk-unmarked.txt).
SHSTK_MAKE=(CC="$TOP/lab/build/cet-cc" SHSTK_ENABLE=1)
export CET_GLIBC_SYSROOT=$sysroot
CET_CC_REPORT=warning LDFLAGS="-L$work/static-libs" build_flavour shstk "${SHSTK_MAKE[@]}"

{ failures plain; CET_CC_REPORT=warning LDFLAGS="-L$work/static-libs" failures shstk "${SHSTK_MAKE[@]}"; } \
	> "$res/build-failures.txt"
stage plain
stage shstk
build_libgcc_s "$res/libgcc_s.so.1"
check_shstk
{ needs plain; needs shstk; } > "$res/runtime-needs.txt"
# which shstk tests hold code built without CET: ld's "missing IBT
# property" warnings, in the block make -O printed for the test's link
# (after its directory and its LINK line)
awk -v top="$work/shstk/src/test/" '
	/Entering directory/ { d = $NF; gsub(/\047/, "", d); sub(top, "", d) }
	/^ LINK / { t = d "/" $2 }
	/warning: missing (IBT|SHSTK) property/ { o = $2; sub(/:$/, "", o); sub(/.*\//, "", o); print t, o }
' "$work/shstk/make.log" | sort -u > "$res/shstk-unmarked.txt"

cache_store "$cached" "$res"/*
rm -rf "$work/plain/src" "$work/shstk/src" "$res"
publish
for f in plain shstk; do
	say "$f: $(find "$OUT/$f/test/zdtm" -type f -perm -u+x ! -name "*.so" -exec file {} + | grep -c ': *ELF') test binaries," \
		"$(grep -c "^$f " "$OUT/build-failures.txt" || true) did not build"
done
say "built and cached ($k)"
