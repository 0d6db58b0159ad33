# SPDX-License-Identifier: GPL-2.0
# Stock CRIU 4.1.1 in the lab: a plain process survives dump + restore; a
# shadow-stack one is the known-failing baseline this project exists to fix.

counter_cycle stock.plain /lab/criu-stock/criu
counter_cycle stock.shstk /lab/criu-stock/criu shstk
