/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The EL1 exception vector table of the aarch64 hardware-in-the-loop image
 * (board_qemu_virt.c points VBAR_EL1 here; the entry point is start.S's
 * _start, which QEMU enters at EL1 with the MMU off).  Every one of the 16
 * vectors calls hil_board_trap(kind, ESR_EL1, ELR_EL1, FAR_EL1), which prints
 * the syndrome and stops the machine: the harness takes no exception on
 * purpose, so any exception is a bug worth a readable report.
 * kind = vector index: bits 1:0 synchronous/IRQ/FIQ/SError, bits 3:2 from
 * current EL with SP_EL0, current EL with SP_ELx, lower EL AArch64, AArch32.
 */
	.macro	vector kind
	.balign	0x80
	mov	x0, #\kind
	b	vector_common
	.endm

	.text
	.balign	2048
	.globl	hil_vectors
hil_vectors:
	vector 0
	vector 1
	vector 2
	vector 3
	vector 4
	vector 5
	vector 6
	vector 7
	vector 8
	vector 9
	vector 10
	vector 11
	vector 12
	vector 13
	vector 14
	vector 15

vector_common:
	mrs	x1, esr_el1
	mrs	x2, elr_el1
	mrs	x3, far_el1
	bl	hil_board_trap
1:	wfi
	b	1b

	.section .note.GNU-stack, "", %progbits
