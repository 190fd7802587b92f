/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ik_version(): the library's version string, IK_VERSION_STRING of the
 * generated <iommukit/version.h> (configure, or scripts/vendor.sh for a
 * vendored copy: there is no fallback, so a build that lacks the header
 * fails instead of reporting a wrong version).
 */
#include <iommukit/env.h>
#include <iommukit/version.h>

IK_API const char *ik_version(void)
{
	return IK_VERSION_STRING;
}
