// SPDX-License-Identifier: GPL-2.0
/* A handler running on a sigaltstack, checkpointed inside it: see sighandler.c */
#define CET_SIGALTSTACK
#include "sighandler.c"
