/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A board for a real bare-metal boot: console on a 16550 UART at I/O port
 * 0x3f8 (x86 COM1) or a PL011 at 0x09000000 (arm64, QEMU's virt machine;
 * change BM_PL011_BASE for another board); exit parks the CPU; time comes
 * from the generic timer on arm64 and counts polls on x86 (no calibrated
 * clock before an OS; iommukit only uses time to bound waits).  The QEMU
 * boards of the hardware-in-the-loop harness (board_qemu_*.c, docs/hil.md)
 * add a clean exit, a calibrated clock and the machines' memory maps.
 */
#include <iommukit/env.h>
#include <iommukit/atomic.h>
#include "bm_hw.h"

#if defined(__x86_64__)
void bm_board_write(const char *s, ik_size n)
{
	bm_16550_write(0x3f8, s, n);
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
	bm_pl011_write(BM_PL011_BASE, s, n);
}

void bm_board_exit(int status)
{
	(void)status;
	for (;;)
		__asm__ __volatile__("wfi");
}

ik_u64 bm_board_time_ns(void)
{
	return bm_cntvct_ns();
}

unsigned bm_board_cpu_id(void)
{
	return bm_mpidr_aff0() % IK_BM_NR_CPUS;
}
#else
#error "board_uart.c: x86-64 and aarch64 only"
#endif
