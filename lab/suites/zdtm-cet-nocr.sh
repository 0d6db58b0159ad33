# SPDX-License-Identifier: GPL-2.0
# The ZDTM CET tests without CRIU: start, wait for the daemon, SIGTERM.
# Proves the tests themselves pass, so a failure elsewhere is CRIU's.
zdtm_cet_run --flavour nocr --nocr --dir /lab/zdtm/cet
