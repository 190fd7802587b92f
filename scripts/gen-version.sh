#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# gen-version.sh OUT - write <iommukit/version.h> to OUT from
# include/iommukit/version.h.in and the version numbers of configure.ac,
# for builds that do not run configure (scripts/vendor.sh, the freestanding
# check, the fuzz harnesses).  configure makes the same file from the same
# template and numbers.  OUT is rewritten only when its text changes.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: gen-version.sh OUT" >&2; exit 2; }
num() {
	v=$(sed -n "s/^m4_define(\[ik_version_$1\], \[\([0-9]*\)\]).*/\1/p" "$top/configure.ac")
	[ -n "$v" ] || { echo "gen-version.sh: no ik_version_$1 in configure.ac" >&2; exit 1; }
	echo "$v"
}
major=$(num major) minor=$(num minor) micro=$(num micro)
tmp=$1.tmp.$$
sed -e "s/@IK_VERSION_MAJOR@/$major/g" -e "s/@IK_VERSION_MINOR@/$minor/g" \
	-e "s/@IK_VERSION_MICRO@/$micro/g" "$top/include/iommukit/version.h.in" > "$tmp"
if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
