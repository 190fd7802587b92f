/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The M-mode trap vector of the rv64 hardware-in-the-loop image
 * (board_qemu_riscv_virt.c points mtvec here, direct mode; the entry point
 * is start.S's _start, which QEMU's reset vector enters in M-mode).  The
 * harness takes no trap on purpose (no interrupt is enabled), so any trap
 * is a bug worth a readable report: hil_board_trap(mcause, mepc, mtval)
 * prints it and stops the machine.  The stack is whatever sp held.
 */
	.text
	.balign	4
	.globl	hil_trap_vector
hil_trap_vector:
	csrr	a0, mcause
	csrr	a1, mepc
	csrr	a2, mtval
	call	hil_board_trap
1:	wfi
	j	1b

	.section .note.GNU-stack, "", %progbits
