/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ik_strerror(): a short English name for each negative errno value the
 * library returns (the values <iommukit/env.h> defines where the env does
 * not).  Independent of the env: a switch over constants.
 */
#include <iommukit/env.h>

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
