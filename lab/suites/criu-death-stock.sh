# SPDX-License-Identifier: GPL-2.0
# The criu-death cases with stock CRIU 4.1.1: the comparison.
death_cases /lab/criu-stock/criu -stock
restore_death_cases /lab/criu-stock/criu -stock plain
