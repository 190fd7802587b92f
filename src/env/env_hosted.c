/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The hosted environment's functions (see <iommukit/env-hosted.h>).  This is
 * the only library source that uses libc; a kernel or firmware build leaves it
 * out and supplies its own env header.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include "config.h"
#include <iommukit/env.h>

IK_API void *ik_hosted_alloc(size_t size, size_t align)
{
	void *p;

	if (align < sizeof(void *))
		align = sizeof(void *);
	if (posix_memalign(&p, align, size ? size : 1) != 0)
		return NULL;
	return p;
}

IK_API void ik_hosted_free(void *ptr, size_t size)
{
	(void)size;
	free(ptr);
}

IK_API unsigned ik_hosted_nr_cpus(void)
{
	static unsigned n;
	unsigned v = __atomic_load_n(&n, __ATOMIC_RELAXED);

	if (!v) {
		long c = sysconf(_SC_NPROCESSORS_CONF);

		v = c > 0 ? (unsigned)c : 1;
		__atomic_store_n(&n, v, __ATOMIC_RELAXED);
	}
	return v;
}

IK_API unsigned ik_hosted_cpu_id_slow(void)
{
#ifdef HAVE_SCHED_GETCPU
	int c = sched_getcpu();

	if (c >= 0)
		return (unsigned)c % ik_hosted_nr_cpus();
#endif
	return 0;
}

IK_API uint64_t ik_hosted_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

IK_API void ik_hosted_yield(void)
{
	sched_yield();
}

/*
 * membarrier(2) with the rseq commands (Linux 5.10).  The command numbers are
 * the kernel's ABI (<linux/membarrier.h> has them as enum constants only).
 */
#define IK_MB_PRIVATE_EXPEDITED_RSEQ (1 << 7)
#define IK_MB_REGISTER_PRIVATE_EXPEDITED_RSEQ (1 << 8)
#define IK_MB_FLAG_CPU (1 << 0)

IK_API int ik_hosted_rseq_register(void)
{
#ifdef SYS_membarrier
	if (syscall(SYS_membarrier, IK_MB_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0)
		return 0;
	return errno > 0 ? -errno : -ENOSYS;
#else
	return -ENOSYS;
#endif
}

IK_API int ik_hosted_rseq_fence(unsigned cpu)
{
#ifdef SYS_membarrier
	long r;

	if (cpu == (unsigned)-1)
		r = syscall(SYS_membarrier, IK_MB_PRIVATE_EXPEDITED_RSEQ, 0, 0);
	else
		r = syscall(SYS_membarrier, IK_MB_PRIVATE_EXPEDITED_RSEQ, IK_MB_FLAG_CPU, (int)cpu);
	return r == 0 ? 0 : (errno > 0 ? -errno : -EIO);
#else
	(void)cpu;
	return -ENOSYS;
#endif
}
