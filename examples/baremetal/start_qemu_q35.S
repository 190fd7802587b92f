/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Entry of the x86-64 hardware-in-the-loop image on QEMU's q35 (see
 * docs/hil.md): a Multiboot (version 1) header, so that `qemu-system-x86_64
 * -kernel` loads it, and the 32-bit trampoline from the Multiboot entry
 * state into long mode; then start.S's _start.  Also the exception stubs
 * the board's IDT points to.
 *
 * Multiboot hands over in 32-bit protected mode, paging off, interrupts
 * off, EAX = 0x2BADB002, EBX = the physical address of the Multiboot
 * information.  QEMU refuses an x86-64 ELF without the header's address
 * fields (flags bit 16): with them it loads the file's bytes from the
 * header's file offset to load_addr..load_end_addr, zeroes up to
 * bss_end_addr, and jumps to entry_addr.  hil_qemu_q35.ld lays the image out
 * as one contiguous segment starting with this header, so that the file is
 * the memory image.
 *
 * Long mode needs paging: the trampoline identity-maps the low 4 GiB with
 * 2 MiB pages (PML4[0] -> one PDPT -> four page directories), the top GiB
 * (PCI windows, ECAM, LAPIC, IOAPIC, HPET, VT-d) uncached (PCD | PWT).
 */
#define MB_MAGIC 0x1BADB002
#define MB_FLAGS 0x00010000	/* bit 16: the address fields are valid */
#define PTE_P 0x001
#define PTE_RW 0x002
#define PTE_PWT 0x008
#define PTE_PCD 0x010
#define PTE_PS 0x080
#define CR0_PG 0x80000000
#define CR4_PAE 0x20
#define MSR_EFER 0xc0000080
#define EFER_LME 0x100

	.section .multiboot, "a"
	.balign 4
mb_header:
	.long	MB_MAGIC
	.long	MB_FLAGS
	.long	-(MB_MAGIC + MB_FLAGS)
	.long	mb_header		/* header_addr */
	.long	hil_image_start		/* load_addr */
	.long	hil_image_data_end	/* load_end_addr */
	.long	hil_image_end		/* bss_end_addr */
	.long	mb_entry		/* entry_addr */

	.section .bss
	.balign 4096
pml4:	.skip 4096
pdpt:	.skip 4096
pd:	.skip 4 * 4096
	.balign 8
	.globl hil_mb_magic, hil_mb_info
hil_mb_magic:	.skip 4
hil_mb_info:	.skip 4

	.section .data
	.balign 16
gdt:
	.quad	0
	.quad	0x00af9a000000ffff	/* 0x08: 64-bit code, DPL 0 */
	.quad	0x00cf92000000ffff	/* 0x10: data */
gdt_end:
gdt_ptr:
	.word	gdt_end - gdt - 1
	.quad	gdt			/* lgdt in 32-bit mode reads the low 4 bytes */

	.text
	.code32
	.globl mb_entry
mb_entry:
	cli
	movl	%eax, hil_mb_magic
	movl	%ebx, hil_mb_info
	/* Page directories: entry i maps i * 2 MiB; the fourth GiB uncached. */
	xorl	%ecx, %ecx
1:	movl	%ecx, %eax
	shll	$21, %eax
	orl	$(PTE_P | PTE_RW | PTE_PS), %eax
	cmpl	$1536, %ecx
	jb	2f
	orl	$(PTE_PCD | PTE_PWT), %eax
2:	movl	%eax, pd(, %ecx, 8)
	movl	$0, pd + 4(, %ecx, 8)
	incl	%ecx
	cmpl	$2048, %ecx
	jb	1b
	/* The PDPT's four entries, the PML4's first. */
	xorl	%ecx, %ecx
3:	movl	%ecx, %eax
	shll	$12, %eax
	addl	$pd, %eax
	orl	$(PTE_P | PTE_RW), %eax
	movl	%eax, pdpt(, %ecx, 8)
	movl	$0, pdpt + 4(, %ecx, 8)
	incl	%ecx
	cmpl	$4, %ecx
	jb	3b
	movl	$pdpt, %eax
	orl	$(PTE_P | PTE_RW), %eax
	movl	%eax, pml4
	movl	$0, pml4 + 4
	/* PAE, the tables, EFER.LME, paging: long mode (compatibility mode
	 * until the far jump loads a 64-bit code segment). */
	lgdt	gdt_ptr
	movl	%cr4, %eax
	orl	$CR4_PAE, %eax
	movl	%eax, %cr4
	movl	$pml4, %eax
	movl	%eax, %cr3
	movl	$MSR_EFER, %ecx
	rdmsr
	orl	$EFER_LME, %eax
	wrmsr
	movl	%cr0, %eax
	orl	$CR0_PG, %eax
	movl	%eax, %cr0
	ljmp	$0x08, $long_entry

	.code64
long_entry:
	movl	$0x10, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%eax, %fs
	movl	%eax, %gs
	jmp	_start

/*
 * Exception stubs for vectors 0..31: push a zero where the CPU pushes no
 * error code, push the vector, and call hil_board_trap(vector, error, rip,
 * cr2), which prints and stops the machine.
 */
	.macro	isr vec, has_error
	.balign 16
isr_\vec:
	.if !\has_error
	pushq	$0
	.endif
	pushq	$\vec
	jmp	isr_common
	.endm

	.balign 16
isr_common:
	popq	%rdi			/* vector */
	popq	%rsi			/* error code */
	movq	(%rsp), %rdx		/* RIP the CPU pushed */
	movq	%cr2, %rcx
	andq	$-16, %rsp
	call	hil_board_trap
4:	hlt
	jmp	4b

	isr 0, 0
	isr 1, 0
	isr 2, 0
	isr 3, 0
	isr 4, 0
	isr 5, 0
	isr 6, 0
	isr 7, 0
	isr 8, 1
	isr 9, 0
	isr 10, 1
	isr 11, 1
	isr 12, 1
	isr 13, 1
	isr 14, 1
	isr 15, 0
	isr 16, 0
	isr 17, 1
	isr 18, 0
	isr 19, 0
	isr 20, 0
	isr 21, 1
	isr 22, 0
	isr 23, 0
	isr 24, 0
	isr 25, 0
	isr 26, 0
	isr 27, 0
	isr 28, 0
	isr 29, 1
	isr 30, 1
	isr 31, 0

	.section .rodata
	.balign 8
	.globl hil_isr_stubs
hil_isr_stubs:
	.irp v, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	.quad	isr_\v
	.endr

	.section .note.GNU-stack, "", %progbits
