# SPDX-License-Identifier: GPL-2.0
# criu-cet on the counter service, plain and on a shadow stack.
counter_cycle cet.plain /lab/criu-cet/criu
counter_cycle cet.shstk /lab/criu-cet/criu shstk
