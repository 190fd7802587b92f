/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * bm_hw.h - the few machine primitives the bare-metal boards share: x86 port
 * I/O and the time-stamp counter, a 16550 UART and a PL011 UART transmitter,
 * and the Arm generic timer.  Static inline, no state; included by the board
 * files only (board_uart.c, board_qemu_q35.c, board_qemu_virt.c), never by
 * the library.
 *
 * Each UART writer polls the transmitter for room before every byte, with no
 * bound: a UART that never drains hangs the caller, as on a real console.
 */
#ifndef BM_HW_H
#define BM_HW_H

#include <iommukit/env.h>

#if defined(__x86_64__)
static inline void bm_outb(ik_u16 port, ik_u8 v)
{
	__asm__ __volatile__("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline ik_u8 bm_inb(ik_u16 port)
{
	ik_u8 v;

	__asm__ __volatile__("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline void bm_outl(ik_u16 port, ik_u32 v)
{
	__asm__ __volatile__("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline ik_u32 bm_inl(ik_u16 port)
{
	ik_u32 v;

	__asm__ __volatile__("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline ik_u64 bm_rdtsc(void)
{
	ik_u32 lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (ik_u64)hi << 32 | lo;
}

/* 16550 at I/O port `base` (COM1: 0x3f8): wait for LSR.THRE, write THR. */
static inline void bm_16550_write(ik_u16 base, const char *s, ik_size n)
{
	for (; n; n--, s++) {
		while (!(bm_inb((ik_u16)(base + 5)) & 0x20))
			;
		bm_outb(base, (ik_u8)*s);
	}
}
#endif /* __x86_64__ */

#if defined(__aarch64__)
/* PL011 at `base`: wait while UARTFR.TXFF (bit 5) is set, write UARTDR. */
static inline void bm_pl011_write(ik_uptr base, const char *s, ik_size n)
{
	volatile ik_u32 *uart = (volatile ik_u32 *)base;

	for (; n; n--, s++) {
		while (uart[0x18 / 4] & (1u << 5))
			;
		uart[0] = (ik_u8)*s;
	}
}

/* The generic timer's virtual count in nanoseconds (CNTVCT_EL0 scaled by
 * CNTFRQ_EL0; the raw count where firmware left CNTFRQ at 0). */
static inline ik_u64 bm_cntvct_ns(void)
{
	ik_u64 cnt, frq;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(cnt) : : "memory");
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
	if (!frq)
		return cnt;
	return (cnt / frq) * 1000000000u + (cnt % frq) * 1000000000u / frq;
}

static inline ik_u64 bm_cntfrq(void)
{
	ik_u64 frq;

	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
	return frq;
}

/* MPIDR_EL1.Aff0, the CPU's index within its cluster. */
static inline unsigned bm_mpidr_aff0(void)
{
	ik_u64 mpidr;

	__asm__ __volatile__("mrs %0, mpidr_el1" : "=r"(mpidr));
	return (unsigned)(mpidr & 0xff);
}
#endif /* __aarch64__ */

#endif /* BM_HW_H */
