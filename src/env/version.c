/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ik_version(): the library's version string.  The build passes the
 * package version as IK_VERSION_STRING; a vendored build that does not gets
 * the default below.
 */
#include <iommukit/env.h>

#ifndef IK_VERSION_STRING
#define IK_VERSION_STRING "0.1.0"
#endif

IK_API const char *ik_version(void)
{
	return IK_VERSION_STRING;
}
