#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Does the CRIU series in patches/criu apply as upstream would take it, and
# is it bisectable?
#  - a git tree of the pinned CRIU 4.2.1 (the series' base, v4.2.1);
#  - our overlay's files beside it, untracked: they are new files (the CET
#    subsystem, cet.proto) that no patch touches and the series builds;
#  - `git am` of each patch in turn, and CRIU built after each (incrementally).
# One line per step ("criu-series: ... ok|FAILED") and a summary; exit 1 if a
# step failed.  Nothing is cached.  About 10 min on 2 cores:
#   make criu-series
# With --apply-only, git am and the checks without the builds (seconds).
set -euo pipefail
. "$(dirname "$0")/../common.sh"
build=1
[ "${1:-}" = --apply-only ] && build=

mapfile -t patches < <(ls "$TOP"/patches/criu/*.patch | sort)
work=$BUILD/criu-series
tree=$work/criu
rm -rf "$work"
unpack_pin criu42 "$tree"
# git am takes each patch's author; the commits of the base need one too
export GIT_AUTHOR_NAME="criu-series" GIT_AUTHOR_EMAIL="criu-series@localhost"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
git -C "$tree" init -q
git -C "$tree" add -A
git -C "$tree" commit -q -m "CRIU 4.2.1"
git -C "$tree" tag v4.2.1
for d in criu images; do
	rsync -r --exclude=.gitkeep "$TOP/$d/" "$tree/$d/"
done
tracked=$(cd "$TOP" && find criu images -type f ! -name .gitkeep | while read -r f; do
	git -C "$tree" ls-files --error-unmatch "$f" 2>/dev/null || true; done)
[ -z "$tracked" ] || die "overlay files that replace upstream's (make them patches): $tracked"

failed=0
for i in "${!patches[@]}"; do
	p=${patches[$i]}
	step="patch $((i + 1))/${#patches[@]} $(basename "$p" .patch | cut -c6-60)"
	if ! git -C "$tree" am -q "$p" > "$work/am.log" 2>&1; then
		echo "criu-series: $step: git am FAILED"
		head -5 "$work/am.log"
		exit 1
	fi
	grep -q '^Signed-off-by: ' <(git -C "$tree" log -1 --format=%B) ||
		{ echo "criu-series: $step: no Signed-off-by FAILED"; failed=1; }
	t0=$SECONDS
	if [ -z "$build" ]; then
		echo "criu-series: $step: applied"
	elif make -C "$tree" -j"$(nproc)" NO_GNUTLS=1 criu > "$work/build-$((i + 1)).log" 2>&1; then
		echo "criu-series: $step: ok ($((SECONDS - t0)) s)"
	else
		echo "criu-series: $step: build FAILED ($((SECONDS - t0)) s)"
		grep -E 'error' "$work/build-$((i + 1)).log" | head -10
		failed=1
	fi
done
files=$(git -C "$tree" diff --stat v4.2.1 | tail -1 | sed "s/^ *//")
echo "criu-series: ${#patches[@]} patches on v4.2.1 ($files)"
[ $failed = 0 ] && echo "criu-series: every step applies with git am${build:+ and builds}" ||
	echo "criu-series: FAILED"
exit $failed
