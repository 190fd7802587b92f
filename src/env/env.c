/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Environment-independent helpers: error strings and the version.
 */
#include <iommukit/env.h>

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
