/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/lock.h - the lock iommukit's units use for short critical sections.
 *
 * The default is a test-and-test-and-set spinlock over <iommukit/atomic.h>
 * that spins briefly, then calls IK_ENV_YIELD() between attempts, so that a
 * waiter does not burn a CPU that the holder (preempted, in userspace) needs.
 * An environment replaces it by defining all of:
 *
 *   IK_ENV_LOCK_T            the lock type
 *   IK_ENV_LOCK_INIT(l)      initialise *l (unlocked)
 *   IK_ENV_LOCK(l)           acquire; may spin, never fails
 *   IK_ENV_TRYLOCK(l)        acquire if free -> true, else false at once
 *   IK_ENV_UNLOCK(l)         release
 *   IK_ENV_LOCK_DESTROY(l)   release resources of an unlocked lock
 *
 * (a kernel maps them to spinlock_t; interrupt safety is the env's choice).
 * Units never sleep while holding an ik_lock_t and never take two at once
 * unless their header says in which order.
 *
 * Cost: one atomic exchange to acquire, one release store to release, when
 * uncontended.  Acquire pairs with release: what a holder wrote before
 * ik_unlock() is visible to the next holder after ik_lock().
 *
 * The built-in spinlock itself, ik_spinlock_t with ik_spin_lock(),
 * ik_spin_trylock() and ik_spin_unlock(), exists whatever the env: it needs
 * no initialisation call (all zero is unlocked), so it serves static locks
 * that nothing could initialise first, around a few instructions.
 * Everything else uses ik_lock_t, which an env lock may need (lockdep,
 * interrupt masking).
 *
 * Pointer arguments: these primitives are exempt from the NULL rule of
 * <iommukit/env.h> ("Conventions: pointer arguments"); as in the C library,
 * valid pointers are a precondition and nothing checks them.
 */
#ifndef IOMMUKIT_LOCK_H
#define IOMMUKIT_LOCK_H

#include <iommukit/env.h>
#include <iommukit/atomic.h>

/* The built-in spinlock (see above).  Zero is unlocked. */
typedef struct ik_spinlock {
	ik_u32 locked;	/* 0 unlocked, 1 locked */
} ik_spinlock_t;

/* Spins of ik_cpu_relax() before each IK_ENV_YIELD() while waiting. */
#ifndef IK_LOCK_SPINS
#define IK_LOCK_SPINS 128
#endif

IK_INLINE bool ik_spin_trylock(ik_spinlock_t *l)
{
	/* Acquire: pairs with the release in ik_spin_unlock(). */
	return ik_load_relaxed(&l->locked) == 0 &&
	       ik_atomic_xchg(&l->locked, 1, IK_MO_ACQUIRE) == 0;
}

IK_INLINE void ik_spin_lock(ik_spinlock_t *l)
{
	unsigned spins = 0;

	/* Acquire: pairs with the release in ik_spin_unlock(). */
	while (ik_atomic_xchg(&l->locked, 1, IK_MO_ACQUIRE) != 0) {
		while (ik_load_relaxed(&l->locked) != 0) {
			if (++spins < IK_LOCK_SPINS) {
				ik_cpu_relax();
			} else {
				spins = 0;
				IK_ENV_YIELD();
			}
		}
	}
}

IK_INLINE void ik_spin_unlock(ik_spinlock_t *l)
{
	/* Release: pairs with the acquire in ik_spin_lock()/ik_spin_trylock(). */
	ik_store_release(&l->locked, 0);
}

#ifdef IK_ENV_LOCK_T
/* An env lock is all six macros or none. */
#ifndef IK_ENV_LOCK_INIT
#error "iommukit env (locks): IK_ENV_LOCK_T is defined but IK_ENV_LOCK_INIT is not"
#endif
#ifndef IK_ENV_LOCK
#error "iommukit env (locks): IK_ENV_LOCK_T is defined but IK_ENV_LOCK is not"
#endif
#ifndef IK_ENV_TRYLOCK
#error "iommukit env (locks): IK_ENV_LOCK_T is defined but IK_ENV_TRYLOCK is not"
#endif
#ifndef IK_ENV_UNLOCK
#error "iommukit env (locks): IK_ENV_LOCK_T is defined but IK_ENV_UNLOCK is not"
#endif
#ifndef IK_ENV_LOCK_DESTROY
#error "iommukit env (locks): IK_ENV_LOCK_T is defined but IK_ENV_LOCK_DESTROY is not"
#endif
typedef IK_ENV_LOCK_T ik_lock_t;
#define ik_lock_init(l) IK_ENV_LOCK_INIT(l)
#define ik_lock(l) IK_ENV_LOCK(l)
#define ik_trylock(l) IK_ENV_TRYLOCK(l)
#define ik_unlock(l) IK_ENV_UNLOCK(l)
#define ik_lock_destroy(l) IK_ENV_LOCK_DESTROY(l)
#else
#if defined(IK_ENV_LOCK_INIT) || defined(IK_ENV_LOCK) || defined(IK_ENV_TRYLOCK) || \
	defined(IK_ENV_UNLOCK) || defined(IK_ENV_LOCK_DESTROY)
#error "iommukit env (locks): IK_ENV_LOCK_T is not defined but other IK_ENV_LOCK macros are"
#endif
typedef ik_spinlock_t ik_lock_t;

/* Initialise an unlocked lock. */
IK_INLINE void ik_lock_init(ik_lock_t *l)
{
	ik_store_relaxed(&l->locked, 0);
}

/* Take the lock if it is free; true if taken.  Never waits. */
IK_INLINE bool ik_trylock(ik_lock_t *l)
{
	return ik_spin_trylock(l);
}

/* Take the lock, spinning while another holder has it. */
IK_INLINE void ik_lock(ik_lock_t *l)
{
	ik_spin_lock(l);
}

/* Release the lock (release semantics). */
IK_INLINE void ik_unlock(ik_lock_t *l)
{
	ik_spin_unlock(l);
}

/* Retire a lock (nothing for the spinlock). */
IK_INLINE void ik_lock_destroy(ik_lock_t *l)
{
	(void)l;
}
#endif

#endif /* IOMMUKIT_LOCK_H */
