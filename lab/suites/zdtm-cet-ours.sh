# SPDX-License-Identifier: GPL-2.0
# The ZDTM CET tests dumped and restored by criu-cet (CRIU 4.1.1 + our CET subsystem).
zdtm_cet_run --flavour criu-cet --criu /lab/criu-cet/criu --dir /lab/zdtm/cet
