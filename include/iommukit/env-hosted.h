/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/env-hosted.h - the default environment: a POSIX process.
 *
 * Do not include this directly; include <iommukit/env.h>.  It implements the
 * contract documented there with libc: posix_memalign for memory,
 * sched_getcpu() as the CPU hint (sampled and cached per thread, since it is a
 * hint anyway), clock_gettime(CLOCK_MONOTONIC) for time, sched_yield() for
 * waits.  The functions behind these macros live in src/env/env_hosted.c, the only
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
#ifdef __cplusplus
}
#endif

/*
 * The CPU hint: sched_getcpu() costs a few nanoseconds even through the vDSO,
 * more than an rcache hit, so each thread re-reads it every 64 calls.  A stale
 * hint is harmless: per-CPU state is also protected by a per-CPU lock.
 */
static inline unsigned ik_hosted_cpu_id(void)
{
	static __thread unsigned cpu, calls;

	if ((calls++ & 63) == 0)
		cpu = ik_hosted_cpu_id_slow();
	return cpu;
}

#define IK_ENV_ALLOC(size, align) ik_hosted_alloc((size), (align))
#define IK_ENV_FREE(ptr, size) ik_hosted_free((ptr), (size))
#define IK_ENV_CPU_ID() ik_hosted_cpu_id()
#define IK_ENV_NR_CPUS() ik_hosted_nr_cpus()
#define IK_ENV_TIME_NS() ik_hosted_time_ns()
#define IK_ENV_YIELD() ik_hosted_yield()

#endif /* IOMMUKIT_ENV_HOSTED_H */
