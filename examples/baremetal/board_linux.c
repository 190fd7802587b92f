/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A board for running a bare-metal image as a static Linux process (natively
 * on x86-64, under qemu-aarch64 on arm64): the console is file descriptor 1,
 * exit is exit_group(2), time is clock_gettime(CLOCK_MONOTONIC), all through
 * raw system calls, so nothing but this file knows there is an OS.
 */
#include <iommukit/env.h>

#if defined(__x86_64__)
#define SYS_WRITE 1
#define SYS_CLOCK_GETTIME 228
#define SYS_EXIT_GROUP 231
static long bm_syscall3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ __volatile__("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
			     : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define SYS_WRITE 64
#define SYS_CLOCK_GETTIME 113
#define SYS_EXIT_GROUP 94
static long bm_syscall3(long nr, long a, long b, long c)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;

	__asm__ __volatile__("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
}
#else
#error "board_linux.c: x86-64 and aarch64 only"
#endif

void bm_board_write(const char *s, ik_size n)
{
	while (n) {
		long w = bm_syscall3(SYS_WRITE, 1, (long)s, (long)n);

		if (w <= 0)
			return;
		s += w;
		n -= (ik_size)w;
	}
}

void bm_board_exit(int status)
{
	for (;;)
		bm_syscall3(SYS_EXIT_GROUP, status, 0, 0);
}

ik_u64 bm_board_time_ns(void)
{
	struct {
		long sec, nsec;
	} ts = { 0, 0 };

	bm_syscall3(SYS_CLOCK_GETTIME, 1 /* CLOCK_MONOTONIC */, (long)&ts, 0);
	return (ik_u64)ts.sec * 1000000000u + (ik_u64)ts.nsec;
}

unsigned bm_board_cpu_id(void)
{
	return 0;	/* a process is not pinned: 0 is a valid hint */
}
