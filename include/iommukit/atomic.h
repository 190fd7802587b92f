/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/atomic.h - atomics, fences and spin hints.
 *
 * A thin layer over the GCC/Clang __atomic builtins.  Every operation is a
 * macro guarded by #ifndef, so an environment header (see <iommukit/env.h>)
 * may replace any one of them - a kernel with its own primitives, a firmware
 * with a compiler that lacks some builtin - and keep the defaults for the
 * rest.  The operations work on any naturally aligned 1, 2, 4 or 8 byte
 * integer or pointer; `mo` is one of the IK_MO_* orders.
 *
 * Glossary of orders, as in C11: RELAXED orders nothing; ACQUIRE (loads)
 * keeps later accesses after it; RELEASE (stores) keeps earlier accesses
 * before it; ACQ_REL both, for read-modify-writes; SEQ_CST is a total order.
 * Every acquire in iommukit names the release it pairs with in a comment.
 *
 * Pointer arguments: these primitives are exempt from the NULL rule of
 * <iommukit/env.h> ("Conventions: pointer arguments"); as in the C library,
 * valid pointers are a precondition and nothing checks them.
 */
#ifndef IOMMUKIT_ATOMIC_H
#define IOMMUKIT_ATOMIC_H

#include <iommukit/env.h>

/* Memory orders for the `mo` arguments (see the glossary above). */
#define IK_MO_RELAXED __ATOMIC_RELAXED
#define IK_MO_ACQUIRE __ATOMIC_ACQUIRE
#define IK_MO_RELEASE __ATOMIC_RELEASE
#define IK_MO_ACQ_REL __ATOMIC_ACQ_REL
#define IK_MO_SEQ_CST __ATOMIC_SEQ_CST

/* Atomic load, store and exchange of *p; exchange returns the old value. */
#ifndef ik_atomic_load
#define ik_atomic_load(p, mo) __atomic_load_n((p), (mo))
#endif
#ifndef ik_atomic_store
#define ik_atomic_store(p, v, mo) __atomic_store_n((p), (v), (mo))
#endif
#ifndef ik_atomic_xchg
#define ik_atomic_xchg(p, v, mo) __atomic_exchange_n((p), (v), (mo))
#endif
/* Strong CAS: true if *p was *expp and is now `v`; else *expp = *p. */
#ifndef ik_atomic_cas
#define ik_atomic_cas(p, expp, v, mo_ok, mo_fail) \
	__atomic_compare_exchange_n((p), (expp), (v), 0, (mo_ok), (mo_fail))
#endif
/* Weak CAS: may fail spuriously; for retry loops. */
#ifndef ik_atomic_cas_weak
#define ik_atomic_cas_weak(p, expp, v, mo_ok, mo_fail) \
	__atomic_compare_exchange_n((p), (expp), (v), 1, (mo_ok), (mo_fail))
#endif
/* fetch_op: returns the old value. */
#ifndef ik_atomic_fetch_add
#define ik_atomic_fetch_add(p, v, mo) __atomic_fetch_add((p), (v), (mo))
#endif
#ifndef ik_atomic_fetch_sub
#define ik_atomic_fetch_sub(p, v, mo) __atomic_fetch_sub((p), (v), (mo))
#endif
#ifndef ik_atomic_fetch_or
#define ik_atomic_fetch_or(p, v, mo) __atomic_fetch_or((p), (v), (mo))
#endif
#ifndef ik_atomic_fetch_and
#define ik_atomic_fetch_and(p, v, mo) __atomic_fetch_and((p), (v), (mo))
#endif
#ifndef ik_atomic_fence
#define ik_atomic_fence(mo) __atomic_thread_fence(mo)
#endif

/* Shorthands for the common cases. */
#define ik_load_relaxed(p) ik_atomic_load((p), IK_MO_RELAXED)
#define ik_load_acquire(p) ik_atomic_load((p), IK_MO_ACQUIRE)
#define ik_store_relaxed(p, v) ik_atomic_store((p), (v), IK_MO_RELAXED)
#define ik_store_release(p, v) ik_atomic_store((p), (v), IK_MO_RELEASE)
#define ik_smp_mb() ik_atomic_fence(IK_MO_SEQ_CST)
#define ik_smp_rmb() ik_atomic_fence(IK_MO_ACQUIRE)
#define ik_smp_wmb() ik_atomic_fence(IK_MO_RELEASE)

/* Compiler-only barrier. */
#ifndef ik_barrier
#define ik_barrier() __asm__ __volatile__("" ::: "memory")
#endif

/*
 * Barriers between CPU writes to memory and a device (an IOMMU walking page
 * tables, consuming a command queue) that reads it: ik_dma_wmb() orders
 * earlier stores before later ones as seen by the device; ik_dma_rmb() orders
 * loads of device-written memory.  x86 stores are not reordered with stores,
 * so a compiler barrier is enough there; AArch64 needs outer-shareable DMBs.
 */
#if defined(ik_dma_wmb) != defined(ik_dma_rmb)
#error "iommukit env (barriers): define both ik_dma_wmb and ik_dma_rmb, or neither"
#endif
#ifndef ik_dma_wmb
#if defined(__x86_64__) || defined(__i386__)
#define ik_dma_wmb() ik_barrier()
#define ik_dma_rmb() ik_barrier()
#elif defined(__aarch64__)
#define ik_dma_wmb() __asm__ __volatile__("dmb oshst" ::: "memory")
#define ik_dma_rmb() __asm__ __volatile__("dmb oshld" ::: "memory")
#else
#define ik_dma_wmb() ik_smp_mb()
#define ik_dma_rmb() ik_smp_mb()
#endif
#endif

/* A hint inside spin-wait loops. */
#ifndef IK_ENV_CPU_RELAX
#if defined(__x86_64__) || defined(__i386__)
#define IK_ENV_CPU_RELAX() __asm__ __volatile__("pause" ::: "memory")
#elif defined(__aarch64__) || defined(__arm__)
#define IK_ENV_CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define IK_ENV_CPU_RELAX() ik_barrier()
#endif
#endif
#define ik_cpu_relax() IK_ENV_CPU_RELAX()

#endif /* IOMMUKIT_ATOMIC_H */
