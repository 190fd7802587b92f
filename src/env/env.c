/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Environment-independent helpers: error strings, the version, and the
 * lock-based fallback for 128-bit atomics on targets without a 16-byte CAS.
 */
#include <iommukit/env.h>
#include <iommukit/atomic.h>
#include <iommukit/lock.h>

#ifndef IK_VERSION_STRING
#define IK_VERSION_STRING "0.1.0"
#endif

IK_API const char *ik_version(void)
{
	return IK_VERSION_STRING;
}

IK_API const char *ik_strerror(int err)
{
	switch (-err) {
	case 0: return "success";
	case EPERM: return "operation not permitted";
	case ENOENT: return "no such entry";
	case EIO: return "I/O error";
	case EAGAIN: return "try again";
	case ENOMEM: return "out of memory";
	case EFAULT: return "bad address or translation fault";
	case EBUSY: return "busy";
	case EEXIST: return "already exists";
	case ENODEV: return "no such device";
	case EINVAL: return "invalid argument";
	case ENOSPC: return "no space left";
	case ERANGE: return "out of range";
	case EOVERFLOW: return "value too large";
	case EOPNOTSUPP: return "operation not supported";
	case ETIMEDOUT: return "timed out";
	case ECANCELED: return "cancelled";
	default: return "unknown error";
	}
}

#if IK_HAVE_U128
/*
 * 64 built-in spinlocks hashed by the 16-byte block's address.  Not
 * ik_lock_t: an env lock (a kernel spinlock_t under lockdep, say) may need
 * run-time initialisation, and nothing here runs before the first call; a
 * zeroed ik_spinlock_t is unlocked from the start.  Each is held for one
 * 16-byte compare and copy.
 */
static ik_spinlock_t cas128_locks[64];

static ik_spinlock_t *cas128_lock(const void *p)
{
	ik_uptr a = (ik_uptr)p >> 4;

	return &cas128_locks[(a ^ (a >> 6) ^ (a >> 12)) & 63];
}

IK_API bool _ik_cas128_locked(ik_u128 *p, ik_u128 *expected, ik_u128 desired)
{
	ik_spinlock_t *l = cas128_lock(p);
	bool ok;

	ik_spin_lock(l);
	ok = *p == *expected;
	if (ok)
		*p = desired;
	else
		*expected = *p;
	ik_spin_unlock(l);
	return ok;
}

IK_API ik_u128 _ik_load128_locked(ik_u128 *p)
{
	ik_spinlock_t *l = cas128_lock(p);
	ik_u128 v;

	ik_spin_lock(l);
	v = *p;
	ik_spin_unlock(l);
	return v;
}
#endif
