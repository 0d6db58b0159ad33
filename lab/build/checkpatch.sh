#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The kernel's own scripts/checkpatch.pl --strict on patches, by the
# checkpatch of the tree they are for:
#   lab/build/checkpatch.sh LINUX_TREE PATCH...
# One line a patch, named by its folder and file: "checkpatch --strict
# patches/0001-x.patch: clean", "...: the
# MAINTAINERS warning only" (a new selftest file: MAINTAINERS' X86 entry
# covers the folder, as the cover letter says), or "...: FAILED" and the
# patch's ERROR/WARNING/CHECK lines; exit 1 if one failed.  make checkpatch
# and lab/build/kernel-series.sh run it.
set -euo pipefail
tree=$1
shift
failed=0
for p in "$@"; do
	# by its absolute path: checkpatch takes a relative kernel/... for a
	# source file of the tree, not a patch
	p=$(realpath "$p")
	name=$(basename "$(dirname "$p")")/$(basename "$p")
	if out=$(perl "$tree/scripts/checkpatch.pl" --strict --no-tree --color=never "$p"); then
		echo "checkpatch --strict $name: clean"
	elif ! grep -E '^(ERROR|WARNING|CHECK)' <<< "$out" |
		grep -vF 'added, moved or deleted file(s), does MAINTAINERS need updating?' | grep -q .; then
		echo "checkpatch --strict $name: the MAINTAINERS warning only"
	else
		echo "checkpatch --strict $name: FAILED"
		grep -E '^(ERROR|WARNING|CHECK)' -A3 <<< "$out" | head -40
		failed=1
	fi
done
exit $failed
