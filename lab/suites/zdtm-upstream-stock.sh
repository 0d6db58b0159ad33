# SPDX-License-Identifier: GPL-2.0
# CRIU's own ZDTM suite (zdtm-upstream.sh), the plan's runs with stock CRIU 4.1.1
# only: make test gives each CRIU a boot of its own.
export ZDTM_SUITE=zdtm-upstream-stock ZDTM_CRIU=/lab/criu-stock/criu
. /lab/suites/zdtm-upstream.sh
