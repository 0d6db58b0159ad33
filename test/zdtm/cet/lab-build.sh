# SPDX-License-Identifier: GPL-2.0
# Build the ZDTM CET tests for the lab, the way an operator would: this
# directory copied into a CRIU 4.2.1 tree's test/zdtm/ next to its lib/.
#   bash test/zdtm/cet/lab-build.sh CRIU_SRC OUT
#     the tests of lab.list and extra.list, static, for /lab/zdtm/cet
#   bash test/zdtm/cet/lab-build.sh CRIU_SRC OUT glibc CC
#     the tests of glibc/glibc.list built by CC against a CET glibc
#     (criu-cet's lab/build/cet-cc), with their libraries, for /lab/zdtm/cet-glibc
# OUT/stage/ receives the test binaries and the list.  Not executable on
# purpose: zdtm.py treats every executable file under zdtm/ as a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
criu_src=$1 out=$2 flavour=${3:-static} cc=${4:-}
[ -f "$criu_src/test/zdtm/lib/test.c" ] || { echo "lab-build: no ZDTM lib in $criu_src" >&2; exit 1; }
zdtm=$out/tree/test/zdtm
mkdir -p "$zdtm/cet" "$out/stage"
# rsync -c: only changed files are touched, so make rebuilds only those
rsync -rc "$criu_src/test/zdtm/lib" "$criu_src/test/zdtm/Makefile.inc" "$zdtm/"
rsync -rc --exclude='*.o' --exclude='*.d' --exclude='*.pid' --exclude='*.out*' --exclude='*.so' \
	--exclude='.gitignore' --exclude='*.checkskip' "$here/" "$zdtm/cet/"
# cet-abi.h where a CRIU tree with criu-cet over it has it (the Makefile's CET_ABI_DIR)
mkdir -p "$out/tree/criu/arch/x86/cet"
rsync -c "$here/../../../criu/arch/x86/cet/cet-abi.h" "$out/tree/criu/arch/x86/cet/"
case $flavour in
static)	dir=$zdtm/cet; lists="$here/lab.list $here/extra.list"; extra=
	set -- CET_STATIC=1 ;;
glibc)	[ -n "$cc" ] || { echo "lab-build: glibc needs the CET glibc's compiler" >&2; exit 1; }
	dir=$zdtm/cet/glibc; lists=$here/glibc/glibc.list; extra="libcet_marked.so libcet_unmarked.so"
	# ZDTM's lib is rebuilt by CC (marked); not mixed with the static build's objects
	make -C "$zdtm/lib" clean > /dev/null
	set -- CC="$cc" ;;
*)	echo "lab-build: unknown flavour $flavour" >&2; exit 1 ;;
esac
make -C "$dir" -j2 "$@" all > "$out/build.log" 2>&1 ||
	{ grep -E 'error|Error|warning' "$out/build.log" | head -20; echo "lab-build: tests failed to build ($out/build.log)" >&2; exit 1; }
rm -rf "$out/stage" && mkdir -p "$out/stage"
tests=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' $lists | awk '{ print $1 }')
for t in $tests; do
	[ -x "$dir/$t" ] || { echo "lab-build: $t is listed in $lists but was not built" >&2; exit 1; }
	cp "$dir/$t" "$out/stage/"
done
for f in $extra; do cp "$dir/$f" "$out/stage/"; done
cp $lists "$out/stage/"
echo "[lab-build] $(echo $tests | wc -w) ZDTM CET tests ($flavour) -> $out/stage"
