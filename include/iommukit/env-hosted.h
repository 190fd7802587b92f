/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/env-hosted.h - the default environment: a POSIX process.
 *
 * Do not include this directly; include <iommukit/env.h>.  It implements the
 * contract documented there with libc: posix_memalign for memory,
 * sched_getcpu() as the CPU hint (sampled and cached per thread, since it is a
 * hint anyway), clock_gettime(CLOCK_MONOTONIC) for time, sched_yield() for
 * waits, and glibc's rseq registration with membarrier() for the per-CPU
 * exclusion of the IOVA range caches where the platform has them.  The functions behind these macros live in src/env/env_hosted.c, the only
 * library source that uses libc.
 */
#ifndef IOMMUKIT_ENV_HOSTED_H
#define IOMMUKIT_ENV_HOSTED_H

#ifndef IOMMUKIT_ENV_H
#error "include <iommukit/env.h>, not <iommukit/env-hosted.h>"
#endif

#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#define IK_ENV_NAME "hosted"

#ifdef __cplusplus
extern "C" {
#endif
IK_API void *ik_hosted_alloc(size_t size, size_t align);
IK_API void ik_hosted_free(void *ptr, size_t size);
IK_API unsigned ik_hosted_cpu_id_slow(void);
IK_API unsigned ik_hosted_nr_cpus(void);
IK_API uint64_t ik_hosted_time_ns(void);
IK_API void ik_hosted_yield(void);

/*
 * The CPU hint: sched_getcpu() costs a few nanoseconds even through the vDSO,
 * more than an rcache hit, so each thread re-reads it every 64 calls.  A stale
 * hint is harmless: where it is used (the range caches' LOCK mode) per-CPU
 * state is also protected by a per-CPU lock; the lockless RSEQ mode reads
 * the exact CPU from the rseq area instead.
 */
#if defined(__GNUC__) && defined(__ELF__)
/* initial-exec: a library that inlines this reads its copy at a fixed
 * offset from the thread pointer, where the default model for a shared
 * object calls __tls_get_addr() (more than the rcache hit it serves). */
#define IK_HOSTED_TLS_IE_ __attribute__((__tls_model__("initial-exec")))
#else
#define IK_HOSTED_TLS_IE_
#endif
static inline unsigned ik_hosted_cpu_id(void)
{
	static __thread unsigned cpu IK_HOSTED_TLS_IE_, calls IK_HOSTED_TLS_IE_;

	if ((calls++ & 63) == 0)
		cpu = ik_hosted_cpu_id_slow();
	return cpu;
}

/*
 * Restartable sequences (see "per-CPU exclusion" in <iommukit/env.h>): on
 * Linux with glibc 2.35 or later, which registers an rseq area for every
 * thread, on x86-64 and AArch64.  IK_HOSTED_NO_RSEQ, defined before the
 * first iommukit header, leaves them out (the range caches then use their
 * per-CPU locks).  The area is NULL when glibc did not register one (a
 * kernel without rseq, valgrind, GLIBC_TUNABLES=glibc.pthread.rseq=0).
 */
#if !defined(IK_HOSTED_NO_RSEQ) && defined(__linux__) && defined(__GLIBC__) && \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)) && \
	(defined(__x86_64__) || defined(__aarch64__)) && defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#ifdef RSEQ_SIG
#define IK_HOSTED_HAVE_RSEQ 1
#endif
#endif
#endif

/* membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ): 0, or a
 * negative errno (-ENOSYS where the build or the kernel lacks it). */
IK_API int ik_hosted_rseq_register(void);
/* membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) aimed at `cpu`, or at
 * every CPU for (unsigned)-1: 0, or a negative errno. */
IK_API int ik_hosted_rseq_fence(unsigned cpu);
#ifdef __cplusplus
}
#endif

#ifdef IK_HOSTED_HAVE_RSEQ

/* The calling thread's rseq area (glibc's), or NULL. */
static inline void *ik_hosted_rseq_area(void)
{
	char *tp;

	if (!__rseq_size)
		return NULL;
#if defined(__x86_64__)
	__asm__("movq %%fs:0, %0" : "=r"(tp));
#else
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#endif
	return tp + __rseq_offset;
}

#define IK_ENV_RSEQ_AREA() ik_hosted_rseq_area()
#define IK_ENV_RSEQ_SIG RSEQ_SIG
#define IK_ENV_RSEQ_REGISTER() ik_hosted_rseq_register()
#define IK_ENV_RSEQ_FENCE(cpu) ik_hosted_rseq_fence(cpu)
/* glibc sets __rseq_offset once, at startup, for every thread. */
#define IK_ENV_RSEQ_TP_OFFSET() ((long)__rseq_offset)
#endif /* IK_HOSTED_HAVE_RSEQ */

#define IK_ENV_ALLOC(size, align) ik_hosted_alloc((size), (align))
#define IK_ENV_FREE(ptr, size) ik_hosted_free((ptr), (size))
#define IK_ENV_CPU_ID() ik_hosted_cpu_id()
#define IK_ENV_NR_CPUS() ik_hosted_nr_cpus()
#define IK_ENV_TIME_NS() ik_hosted_time_ns()
#define IK_ENV_YIELD() ik_hosted_yield()

#endif /* IOMMUKIT_ENV_HOSTED_H */
