# SPDX-License-Identifier: GPL-2.0
# Live migration of shadow-stack tasks by CRIU's own zdtm.py
# (zdtm-upstream.sh with the plan of lab/overlays/zdtm.sh migrate): our
# tests through zdtm.py's --pre, --page-server, --lazy-pages and
# --remote-lazy-pages, with the shadow-stack compare and the check that
# lazy-pages copied no page into a shadow stack; stock 4.1.1 beside it.
export LAB_ZDTM_SUITE=zdtm-upstream-migrate
. /lab/suites/zdtm-upstream.sh
