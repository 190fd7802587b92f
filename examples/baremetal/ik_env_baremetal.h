/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ik_env_baremetal.h - the iommukit env contract for firmware with no OS.
 *
 * Select it with -DIK_ENV_HEADER='"ik_env_baremetal.h"'.  It includes no
 * header at all.  The firmware gets:
 *   - memory from a static page pool (bm_env.c): IK_BM_POOL_PAGES pages of
 *     4 KiB in .bss; objects up to 2 KiB from per-size free lists carved out
 *     of pool pages, larger ones as runs of whole pages (page-aligned, which
 *     meets every alignment the contract allows);
 *   - a fixed CPU count, IK_BM_NR_CPUS (default 4), and the CPU index from the
 *     board (bm_board_cpu_id(), which must be < IK_BM_NR_CPUS);
 *   - time from the board (bm_board_time_ns()); a board without a clock may
 *     count polls;
 *   - polling waits: IK_ENV_YIELD() is a spin hint (pause / yield), since
 *     there is no scheduler to yield to;
 *   - no interrupt hooks: IK_ENV_IRQ_SAVE/_RESTORE keep env.h's no-op
 *     defaults, because these images run with interrupts masked (the
 *     start files enable none) and poll.  A firmware that calls iommukit
 *     from an interrupt handler defines them to mask its CPU's interrupts
 *     (x86: pushf and cli, then popf; arm64: DAIF saved, then daifset #2,
 *     then DAIF restored), so that the command queue's insertions cannot
 *     be interrupted (<iommukit/cmdq.h>, "Interrupts");
 *   - iommukit's default spinlock (<iommukit/lock.h>) and the compiler's
 *     atomics;
 *   - memset, memcpy, memmove and memcmp (bm_env.c), which GCC may call even
 *     in -ffreestanding code;
 *   - assertions that print through the board and stop (bm_assert_fail()).
 *
 * The board supplies exactly the functions declared under "board" below;
 * they are the only symbols a linked image may leave to the board
 * (examples/baremetal/Makefile checks this with nm).  board_linux.c
 * implements them with raw Linux system calls, so an image runs as a static
 * process (under qemu-aarch64 for arm64); board_uart.c drives a 16550 UART
 * (x86 COM1) or a PL011 (arm64, QEMU virt) for a real bare-metal boot.
 */
#ifndef IK_ENV_BAREMETAL_H
#define IK_ENV_BAREMETAL_H

#define IK_ENV_NAME "baremetal"

#ifndef IK_BM_NR_CPUS
#define IK_BM_NR_CPUS 4u
#endif
#ifndef IK_BM_POOL_PAGES
#define IK_BM_POOL_PAGES 2048u
#endif
#define IK_BM_PAGE_SIZE 4096u

#ifdef __cplusplus
extern "C" {
#endif
/* ---- board: supplied by the firmware's board file ---- */
void bm_board_write(const char *s, __SIZE_TYPE__ n);	/* console output */
void bm_board_exit(int status) __attribute__((noreturn));	/* stop the machine */
__UINT64_TYPE__ bm_board_time_ns(void);			/* monotonic */
unsigned bm_board_cpu_id(void);				/* < IK_BM_NR_CPUS */

/* ---- env: bm_env.c ---- */
void *bm_alloc(__SIZE_TYPE__ size, __SIZE_TYPE__ align);
void bm_free(void *ptr, __SIZE_TYPE__ size);
/* Whole zeroed pages, aligned to `size` rounded up to a power of two. */
void *bm_alloc_pages(__SIZE_TYPE__ size);
void bm_free_pages(void *ptr);
/* Pool pages in use (small-object pages included), and live allocations. */
unsigned bm_pool_pages_used(void);
long bm_pool_live(void);
/* Write back the data cache over [p, p + len) to the point of coherency. */
void bm_clean_dcache(const void *p, __SIZE_TYPE__ len);
void bm_puts(const char *s);
void bm_put_uint(unsigned long long v);
void bm_assert_fail(const char *file, int line, const char *expr) __attribute__((noreturn));
#ifdef __cplusplus
}
#endif

#define IK_ENV_ALLOC(size, align) bm_alloc((size), (align))
#define IK_ENV_FREE(ptr, size) bm_free((ptr), (size))
#if IK_BM_NR_CPUS > 1
#define IK_ENV_CPU_ID() bm_board_cpu_id()
#else
#define IK_ENV_CPU_ID() 0u
#endif
#define IK_ENV_NR_CPUS() IK_BM_NR_CPUS
#define IK_ENV_TIME_NS() bm_board_time_ns()
#if defined(__x86_64__) || defined(__i386__)
#define IK_ENV_YIELD() __asm__ __volatile__("pause" ::: "memory")
#elif defined(__aarch64__) || defined(__arm__)
#define IK_ENV_YIELD() __asm__ __volatile__("yield" ::: "memory")
#else
#define IK_ENV_YIELD() __asm__ __volatile__("" ::: "memory")
#endif
#define IK_ENV_ASSERT(cond)							\
	do {									\
		if (__builtin_expect(!(cond), 0))				\
			bm_assert_fail(__FILE__, __LINE__, #cond);		\
	} while (0)

#endif /* IK_ENV_BAREMETAL_H */
