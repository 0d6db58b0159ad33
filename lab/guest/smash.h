/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smash_and_return(): overwrite our own return address on the normal stack
 * with smash_landing and return through it.  On a shadow stack the ret is a
 * control-protection fault (SIGSEGV, si_code SEGV_CPERR); without one it
 * lands on smash_landing, which realigns the stack and calls
 * smash_followed(), which the includer defines (it must not return).
 * Written in assembly: a compiler may keep the return address anywhere.
 */
#ifndef LAB_GUEST_SMASH_H
#define LAB_GUEST_SMASH_H

asm(".text\n"
    ".type smash_and_return, @function\n"
    "smash_and_return:\n"
    "	leaq smash_landing(%rip), %rax\n"
    "	movq %rax, (%rsp)\n"
    "	ret\n"
    "smash_landing:\n"
    "	andq $-16, %rsp\n"
    "	call smash_followed\n"
    "	ud2\n");
void smash_and_return(void);
void smash_followed(void);

#endif
