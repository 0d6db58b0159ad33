# SPDX-License-Identifier: GPL-2.0
# The other half of cet-migrate-export: restore, in this boot, the tests
# another boot dumped (on this kernel or the other one), from the archives
# the host put in /lab/migrate; each must come back with its CET state and pass.
mkdir -p /tmp/zdtm-cet
for a in /lab/migrate/*.tar.gz; do
	[ -e "$a" ] || { lab_fail migrate.import "no archive in /lab/migrate"; break; }
	tar -C /tmp/zdtm-cet -xzf "$a"
done
for d in /tmp/zdtm-cet/from-*; do
	[ -d "$d" ] || continue
	zdtm_cet_run --dir /lab/zdtm/cet --only plain,churn,threads,fibers,fiber_thread,locked \
		--flavour "$(basename "$d")" --criu /lab/criu-cet/criu --mode restore-only
done
