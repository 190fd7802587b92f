/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ik_env_linux.h - the iommukit env contract (<iommukit/env.h>) mapped onto
 * Linux kernel APIs.  Select it with -DIK_ENV_HEADER='"ik_env_linux.h"' (see
 * Kbuild); the library's sources (src/, .c) then compile unchanged inside the kernel.
 *
 *   contract              kernel API
 *   types, bool, NULL     u8..u64, s32, s64, uintptr_t, size_t; the kernel's
 *                         bool/true/false (IK_ENV_HAVE_BOOL); linux/stddef.h
 *   errno values          linux/errno.h (same numbers as env.h's defaults)
 *   IK_ENV_ALLOC/FREE     kmalloc/kfree; an alignment above the slab minimum
 *                         is met by asking for a power-of-two size >= the
 *                         alignment (kmalloc aligns those naturally).  Flags:
 *                         IK_LINUX_GFP, default GFP_ATOMIC, because units may
 *                         allocate while holding an ik_lock_t (a spinlock);
 *                         a port whose callers always may sleep can define
 *                         IK_LINUX_GFP as GFP_KERNEL.
 *   IK_ENV_CPU_ID         raw_smp_processor_id() (a hint, as the contract says)
 *   IK_ENV_NR_CPUS        nr_cpu_ids (possible CPUs, fixed after boot)
 *   IK_ENV_TIME_NS        ktime_get_ns() (CLOCK_MONOTONIC)
 *   IK_ENV_YIELD          cond_resched() where preemptible, else cpu_relax()
 *   IK_ENV_CPU_RELAX      cpu_relax()
 *   IK_ENV_IRQ_SAVE/      local_irq_save()/local_irq_restore() (flags:
 *     _RESTORE            unsigned long): the command queue turns local
 *                         interrupts off around each insertion, so an
 *                         interrupt handler may issue (with IK_CMDQ_SYNC)
 *                         without waiting behind the entries of the thread
 *                         it interrupted; see <iommukit/cmdq.h>,
 *                         "Interrupts"
 *   IK_ENV_ASSERT         WARN_ON_ONCE() (define IK_LINUX_NO_ASSERT to drop)
 *   IK_ENV_MEMSET/MEMCPY  memset/memcpy
 *   locks                 spinlock_t (spin_lock: not IRQ-safe by itself;
 *                         the command queue holds its locks with interrupts
 *                         off through the hooks above, but a port that calls
 *                         other units from interrupts maps to the _irqsave
 *                         variants instead)
 *   ik_dma_wmb/rmb        dma_wmb()/dma_rmb()
 *   atomics               the compiler's __atomic builtins (the defaults of
 *                         <iommukit/atomic.h>), which the kernel's own atomics
 *                         also build on for C11-ordered operations
 * Table pages for page tables are a per-instance hook, not part of the env:
 * the self-test module uses alloc_pages/page_address/virt_to_phys.
 */
#ifndef IK_ENV_LINUX_H
#define IK_ENV_LINUX_H

#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/errno.h>
#include <linux/bug.h>
#include <linux/string.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/cpumask.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>
#include <linux/irqflags.h>
#include <asm/barrier.h>
#include <asm/processor.h>

#define IK_ENV_NAME "linux"

#define IK_ENV_U8 u8
#define IK_ENV_U16 u16
#define IK_ENV_U32 u32
#define IK_ENV_U64 u64
#define IK_ENV_S32 s32
#define IK_ENV_S64 s64
#define IK_ENV_UPTR uintptr_t
#define IK_ENV_SIZE size_t
#define IK_ENV_HAVE_BOOL 1

#ifndef IK_LINUX_GFP
#define IK_LINUX_GFP GFP_ATOMIC
#endif

static inline void *ik_linux_alloc(size_t size, size_t align)
{
	if (align > ARCH_KMALLOC_MINALIGN)
		size = roundup_pow_of_two(max(size, align));
	return kmalloc(size ? size : 1, IK_LINUX_GFP | __GFP_NOWARN);
}

static inline void ik_linux_yield(void)
{
	if (preemptible())
		cond_resched();
	else
		cpu_relax();
}

#define IK_ENV_ALLOC(size, align) ik_linux_alloc((size), (align))
#define IK_ENV_FREE(ptr, size) do { (void)(size); kfree(ptr); } while (0)
#define IK_ENV_CPU_ID() ((unsigned)raw_smp_processor_id())
#define IK_ENV_NR_CPUS() ((unsigned)nr_cpu_ids)
#define IK_ENV_TIME_NS() ((u64)ktime_get_ns())
#define IK_ENV_YIELD() ik_linux_yield()
#define IK_ENV_CPU_RELAX() cpu_relax()
#define IK_ENV_IRQ_FLAGS unsigned long
#define IK_ENV_IRQ_SAVE(flags) local_irq_save(flags)
#define IK_ENV_IRQ_RESTORE(flags) local_irq_restore(flags)
#define IK_ENV_MEMSET(p, c, n) memset((p), (c), (n))
#define IK_ENV_MEMCPY(d, s, n) memcpy((d), (s), (n))
#ifdef IK_LINUX_NO_ASSERT
#define IK_ENV_ASSERT(cond) do { (void)sizeof(!(cond)); } while (0)
#else
#define IK_ENV_ASSERT(cond) do { WARN_ON_ONCE(!(cond)); } while (0)
#endif

#define IK_ENV_LOCK_T spinlock_t
#define IK_ENV_LOCK_INIT(l) spin_lock_init(l)
#define IK_ENV_LOCK(l) spin_lock(l)
#define IK_ENV_TRYLOCK(l) (spin_trylock(l) != 0)
#define IK_ENV_UNLOCK(l) spin_unlock(l)
#define IK_ENV_LOCK_DESTROY(l) do { (void)(l); } while (0)

#define ik_dma_wmb() dma_wmb()
#define ik_dma_rmb() dma_rmb()

#endif /* IK_ENV_LINUX_H */
