// SPDX-License-Identifier: GPL-2.0
/* WRSS off at the dump: wrssq raises SIGILL after restore; see wrss.c */
#define CET_WRSS_OFF
#include "wrss.c"
