# SPDX-License-Identifier: GPL-2.0
# Build the ZDTM CET tests for the lab, the way an operator would: this
# directory copied into a CRIU 4.1.1 tree's test/zdtm/ next to its lib/.
#   bash test/zdtm/cet/lab-build.sh CRIU_SRC OUT
# OUT/stage/ receives the static test binaries and lab.list (the initramfs
# puts them in /lab/zdtm/cet).  Not executable on purpose: zdtm.py treats
# every executable file under zdtm/ as a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
criu_src=$1 out=$2
[ -f "$criu_src/test/zdtm/lib/test.c" ] || { echo "lab-build: no ZDTM lib in $criu_src" >&2; exit 1; }
zdtm=$out/tree/test/zdtm
mkdir -p "$zdtm/cet" "$out/stage"
# rsync -c: only changed files are touched, so make rebuilds only those
rsync -rc "$criu_src/test/zdtm/lib" "$criu_src/test/zdtm/Makefile.inc" "$zdtm/"
rsync -rc --exclude='*.o' --exclude='*.d' --exclude='*.pid' --exclude='*.out*' \
	--exclude='.gitignore' --exclude='*.checkskip' "$here/" "$zdtm/cet/"
# cet-abi.h where a CRIU tree with criu-cet over it has it (the Makefile's CET_ABI_DIR)
mkdir -p "$out/tree/criu/arch/x86/cet"
rsync -c "$here/../../../criu/arch/x86/cet/cet-abi.h" "$out/tree/criu/arch/x86/cet/"
make -C "$zdtm/cet" -j2 CET_STATIC=1 all > "$out/build.log" 2>&1 ||
	{ grep -E 'error|Error|warning' "$out/build.log" | head -20; echo "lab-build: tests failed to build ($out/build.log)" >&2; exit 1; }
rm -rf "$out/stage" && mkdir -p "$out/stage"
tests=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/lab.list" "$here/extra.list" | awk '{ print $1 }')
for t in $tests; do
	[ -x "$zdtm/cet/$t" ] || { echo "lab-build: $t is listed in lab.list or extra.list but was not built" >&2; exit 1; }
	cp "$zdtm/cet/$t" "$out/stage/"
done
cp "$here/lab.list" "$here/extra.list" "$out/stage/"
echo "[lab-build] $(echo $tests | wc -w) ZDTM CET tests -> $out/stage"
