// SPDX-License-Identifier: GPL-2.0
/*
 * vk_cetsmash: a valkey module (MODULE LOAD) for the valkey suite, built
 * with lab/build/cet-cc like the server (SHSTK-marked, or glibc refuses to load it
 * into a shadow-stack process).
 *
 *   CETSMASH.STATUS   "status=<ARCH_SHSTK_STATUS> ssp=<SSP>" of the thread
 *                     that runs commands
 *   CETSMASH.SMASH    overwrites its own return address on the normal stack
 *                     and returns through it: a server on a shadow stack dies
 *                     of a control-protection fault (SIGSEGV, SEGV_CPERR);
 *                     one without writes "cetsmash: smash followed" to its
 *                     stderr and exits 3
 */
#include "valkeymodule.h"
#include "cet-abi.h"
#include "smash.h"

void smash_followed(void)
{
	static const char msg[] = "cetsmash: smash followed\n";

	write(2, msg, sizeof(msg) - 1);
	_exit(3);
}

static int smash_cmd(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
	smash_and_return();
	return ValkeyModule_ReplyWithError(ctx, "ERR the smashed return came back");
}

static int status_cmd(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "status=%#lx ssp=%#lx", cet_status(), cet_rdssp());
	return ValkeyModule_ReplyWithSimpleString(ctx, buf);
}

int ValkeyModule_OnLoad(ValkeyModuleCtx *ctx, ValkeyModuleString **argv, int argc)
{
	if (ValkeyModule_Init(ctx, "cetsmash", 1, VALKEYMODULE_APIVER_1) == VALKEYMODULE_ERR)
		return VALKEYMODULE_ERR;
	if (ValkeyModule_CreateCommand(ctx, "cetsmash.smash", smash_cmd, "fast", 0, 0, 0) == VALKEYMODULE_ERR ||
	    ValkeyModule_CreateCommand(ctx, "cetsmash.status", status_cmd, "fast", 0, 0, 0) == VALKEYMODULE_ERR)
		return VALKEYMODULE_ERR;
	return VALKEYMODULE_OK;
}
