/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A board for a real bare-metal boot: console on a 16550 UART at I/O port
 * 0x3f8 (x86 COM1) or a PL011 at 0x09000000 (arm64, QEMU's virt machine;
 * change BM_PL011_BASE for another board); exit parks the CPU; time comes
 * from the generic timer on arm64 and counts polls on x86 (no calibrated
 * clock before an OS; iommukit only uses time to bound waits).
 */
#include <iommukit/env.h>
#include <iommukit/atomic.h>

#if defined(__x86_64__)
static void outb(ik_u16 port, ik_u8 v)
{
	__asm__ __volatile__("outb %0, %1" : : "a"(v), "Nd"(port));
}

static ik_u8 inb(ik_u16 port)
{
	ik_u8 v;

	__asm__ __volatile__("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

void bm_board_write(const char *s, ik_size n)
{
	for (; n; n--, s++) {
		while (!(inb(0x3f8 + 5) & 0x20))	/* LSR.THRE */
			;
		outb(0x3f8, (ik_u8)*s);
	}
}

void bm_board_exit(int status)
{
	(void)status;
	for (;;)
		__asm__ __volatile__("cli; hlt");
}

ik_u64 bm_board_time_ns(void)
{
	static ik_u64 polls;

	return ik_atomic_fetch_add(&polls, 1000, IK_MO_RELAXED);
}

unsigned bm_board_cpu_id(void)
{
	return 0;
}
#elif defined(__aarch64__)
#ifndef BM_PL011_BASE
#define BM_PL011_BASE 0x09000000ul
#endif

void bm_board_write(const char *s, ik_size n)
{
	volatile ik_u32 *uart = (volatile ik_u32 *)BM_PL011_BASE;

	for (; n; n--, s++) {
		while (uart[0x18 / 4] & (1u << 5))	/* UARTFR.TXFF */
			;
		uart[0] = (ik_u8)*s;			/* UARTDR */
	}
}

void bm_board_exit(int status)
{
	(void)status;
	for (;;)
		__asm__ __volatile__("wfi");
}

ik_u64 bm_board_time_ns(void)
{
	ik_u64 cnt, frq;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(cnt) : : "memory");
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
	if (!frq)
		return cnt;
	return (cnt / frq) * 1000000000u + (cnt % frq) * 1000000000u / frq;
}

unsigned bm_board_cpu_id(void)
{
	ik_u64 mpidr;

	__asm__ __volatile__("mrs %0, mpidr_el1" : "=r"(mpidr));
	return (unsigned)(mpidr & 0xff) % IK_BM_NR_CPUS;
}
#else
#error "board_uart.c: x86-64 and aarch64 only"
#endif
