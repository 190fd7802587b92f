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
 * 128-bit compare-and-swap: ik_atomic_cas128() is lock-free where the target
 * has a 16-byte CAS (x86-64 built with -mcx16, AArch64): IK_CAS128_LOCK_FREE
 * is then 1.  Elsewhere it falls back to a small table of spinlocks hashed by
 * address (IK_CAS128_LOCK_FREE is 0): still correct, provided every access to
 * such a location goes through ik_atomic_load128()/ik_atomic_cas128().
 * Neither exists on targets without a 128-bit integer type (IK_HAVE_U128 0).
 *
 * Pointer arguments: these primitives are exempt from the NULL rule of
 * <iommukit/env.h> ("Conventions: pointer arguments"); as in the C library,
 * valid pointers are a precondition and nothing checks them.
 */
#ifndef IOMMUKIT_ATOMIC_H
#define IOMMUKIT_ATOMIC_H

#include <iommukit/env.h>

#define IK_MO_RELAXED __ATOMIC_RELAXED
#define IK_MO_ACQUIRE __ATOMIC_ACQUIRE
#define IK_MO_RELEASE __ATOMIC_RELEASE
#define IK_MO_ACQ_REL __ATOMIC_ACQ_REL
#define IK_MO_SEQ_CST __ATOMIC_SEQ_CST

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

/* ---- 128-bit compare-and-swap ---- */
#if defined(__SIZEOF_INT128__)
#define IK_HAVE_U128 1
__extension__ typedef unsigned __int128 ik_u128;

IK_BEGIN_DECLS
/* Lock-based fallbacks, in src/env/env.c; not API, use ik_atomic_*128(). */
IK_API bool _ik_cas128_locked(ik_u128 *p, ik_u128 *expected, ik_u128 desired);
IK_API ik_u128 _ik_load128_locked(ik_u128 *p);
IK_END_DECLS

#if defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16)
#define IK_CAS128_LOCK_FREE 1
#else
#define IK_CAS128_LOCK_FREE 0
#endif

/*
 * ik_atomic_cas128 - if *p equals *expected, store `desired` and return true;
 * otherwise copy *p to *expected and return false.  Full barrier.  `p` must be
 * 16-byte aligned.
 */
IK_ALWAYS_INLINE bool ik_atomic_cas128(ik_u128 *p, ik_u128 *expected, ik_u128 desired)
{
#if IK_CAS128_LOCK_FREE
	ik_u128 want = *expected;
	ik_u128 old = __sync_val_compare_and_swap(p, want, desired);

	if (old == want)
		return true;
	*expected = old;
	return false;
#else
	return _ik_cas128_locked(p, expected, desired);
#endif
}

/* ik_atomic_load128 - an atomic 16-byte load (may write the same value back). */
IK_ALWAYS_INLINE ik_u128 ik_atomic_load128(ik_u128 *p)
{
#if IK_CAS128_LOCK_FREE
	return __sync_val_compare_and_swap(p, (ik_u128)0, (ik_u128)0);
#else
	return _ik_load128_locked(p);
#endif
}
#else
#define IK_HAVE_U128 0
#define IK_CAS128_LOCK_FREE 0
#endif

#endif /* IOMMUKIT_ATOMIC_H */
