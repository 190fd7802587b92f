#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# make check's entry to examples/linux-iommu/smmuv3/guest.sh (iks_smmuv3.ko,
# the SMMUv3 Linux driver over iommukit, in Debian 6.12 arm64 guests under
# QEMU; IK_HIL=0 skips it).  guest.sh exits 77 when it skips; automake's TAP
# driver counts its "1..0 # SKIP" line instead and takes any other non-zero
# status for an error, so 77 becomes 0.  Its build output and downloads go to
# _lsmmu in the build directory.
: "${top_srcdir:=.}"
# One package cache for the three guest scripts (guest-lib.sh): each
# package is downloaded once per build directory.
IK_GUEST_CACHE=${IK_GUEST_CACHE:-$PWD/_guest-cache}
export IK_GUEST_CACHE
IK_LSMMU_OUT=${IK_LSMMU_OUT:-$PWD/_lsmmu} bash "$top_srcdir/examples/linux-iommu/smmuv3/guest.sh"
rc=$?
[ "$rc" -eq 77 ] && exit 0
exit "$rc"
