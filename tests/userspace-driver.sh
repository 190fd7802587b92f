#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Runs examples/userspace-driver (the commented walk-through of a VFIO-style
# driver on iova + pgtable + cmdq against the soft IOMMU), so that it cannot
# rot: it must exit 0 and print its final "ok".  Prints TAP.
set -u
echo "1..1"
out=$(./examples/userspace-driver 2>&1)
rc=$?
if [ $rc -eq 0 ] && printf '%s\n' "$out" | tail -n 1 | grep -qx ok; then
	echo "ok 1 - examples/userspace-driver runs end to end"
else
	echo "not ok 1 - examples/userspace-driver (exit $rc)"
	printf '%s\n' "$out" | sed 's/^/# /'
	exit 1
fi
