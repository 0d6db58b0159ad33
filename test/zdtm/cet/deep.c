// SPDX-License-Identifier: GPL-2.0
/*
 * A task whose shadow stack is deeper than 256 KiB: 49152 frames, 384 KiB of
 * shadow-stack entries (96 pages), checkpointed at the bottom; see recursion.c.
 */
#define REC_DEPTH 49152
#define REC_NAME  "deep"
#include "recursion.c"
