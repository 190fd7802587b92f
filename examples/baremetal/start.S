/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * _start for the bare-metal image: switch to a stack of our own (in .bss),
 * call bm_main(), and hand its result to bm_board_exit(), which does not
 * return.  The same entry works when a loader jumps here with no stack and
 * when Linux starts the image as a static process (board_linux.c).
 */
	.section .bss
	.balign 16
bm_stack:
	.skip 65536
bm_stack_top:

	.text
	.globl _start
#if defined(__x86_64__)
_start:
	leaq	bm_stack_top(%rip), %rsp
	xorl	%ebp, %ebp
	call	bm_main
	movl	%eax, %edi
	call	bm_board_exit
1:	jmp	1b
#elif defined(__aarch64__)
_start:
	adrp	x0, bm_stack_top
	add	x0, x0, :lo12:bm_stack_top
	mov	sp, x0
	mov	x29, #0
	mov	x30, #0
	bl	bm_main
	bl	bm_board_exit
1:	b	1b
#else
#error "start.S: x86-64 and aarch64 only"
#endif

	.section .note.GNU-stack, "", %progbits
