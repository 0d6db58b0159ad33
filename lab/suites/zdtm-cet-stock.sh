# SPDX-License-Identifier: GPL-2.0
# The ZDTM CET tests dumped and restored by stock CRIU 4.1.1: the baseline.
zdtm_cet_run --flavour stock-4.1.1 --criu /lab/criu-stock/criu --dir /lab/zdtm/cet
