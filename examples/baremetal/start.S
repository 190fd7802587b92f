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
#elif defined(__riscv) && __riscv_xlen == 64
/* Entered in M-mode (QEMU's riscv virt with -bios none) or as a Linux
 * process.  mstatus.FS = Initial first, when in M-mode: -march=rv64gc code
 * may use the FP registers, which trap while FS is Off.  A Linux process
 * has FS on already; there the csrs would trap, so board_linux.c builds
 * without it (BM_START_MMODE is set for the bare-metal boards only).  The
 * device tree's address (a1, from QEMU's reset vector) is kept in
 * bm_boot_fdt, which the board defines. */
	.section .text.entry, "ax", %progbits	/* first in the image: QEMU's -bios none
						   jumps to the RAM base */
	.option	push
	.option	norelax
_start:
#ifdef BM_START_MMODE
	li	t0, 0x2000		/* mstatus.FS = 01 (Initial) */
	csrs	mstatus, t0
	csrw	fcsr, zero
	la	t0, bm_boot_fdt		/* QEMU passes the device tree in a1 */
	sd	a1, 0(t0)
#endif
	la	sp, bm_stack_top
	li	ra, 0
	li	s0, 0
	call	bm_main
	call	bm_board_exit
1:	j	1b
	.option	pop
#else
#error "start.S: x86-64, aarch64 and rv64 only"
#endif

	.section .note.GNU-stack, "", %progbits
