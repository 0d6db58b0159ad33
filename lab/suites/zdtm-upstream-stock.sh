# SPDX-License-Identifier: GPL-2.0
# CRIU's own ZDTM suite (zdtm-upstream.sh), the plan's runs with stock CRIU 4.1.1
# only: make test gives each CRIU a boot of its own.  (LAB_: zdtm.py and
# its tests read ZDTM_* variables of their own.)
export LAB_ZDTM_SUITE=zdtm-upstream-stock LAB_ZDTM_CRIU=/lab/criu-stock/criu
. /lab/suites/zdtm-upstream.sh
