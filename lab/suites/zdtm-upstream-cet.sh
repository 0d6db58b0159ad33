# SPDX-License-Identifier: GPL-2.0
# CRIU's own ZDTM suite (zdtm-upstream.sh), the plan's runs with criu-cet
# only: make test gives each CRIU a boot of its own.  (LAB_: zdtm.py and
# its tests read ZDTM_* variables of their own.)
export LAB_ZDTM_SUITE=zdtm-upstream-cet LAB_ZDTM_CRIU=/lab/criu-cet/criu
. /lab/suites/zdtm-upstream.sh
