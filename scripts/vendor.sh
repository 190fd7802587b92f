#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# vendor.sh - copy exactly the files a kernel or firmware tree needs from
# iommukit into DEST, and keep that copy in sync.
#
#   scripts/vendor.sh [--selftest] DEST        copy (or update) the vendored files
#   scripts/vendor.sh [--selftest] --check DEST  report differences, change nothing
#   scripts/vendor.sh [--selftest] --list      print the files that would be copied
#                                              (version.h.in: generated as version.h)
#
# DEST receives:
#   include/iommukit/**.h  every public header except env-hosted.h (the libc env),
#                          and version.h generated from version.h.in with the
#                          version of configure.ac (scripts/gen-version.sh)
#   src/UNIT/*.[ch]        every library source except env/env_hosted.c
#   selftest/              with --selftest: the freestanding self-test library
#                          (examples/selftest/ik_selftest.[ch], st_*.[ch]; not
#                          the hosted main.c)
#   IOMMUKIT-VENDOR        a manifest: iommukit version, git commit, and a
#                          sha256 of every file copied
# The host tree supplies its env header (see docs/vendoring.md).  Files that
# an earlier run copied but upstream no longer has are removed (they are
# named in the old manifest); files DEST has that no manifest names are never
# touched.  --check exits 1 if a vendored file differs from upstream, was
# edited locally (its sha256 is not the manifest's), is missing, or is stale.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
selftest=0 check=0 list=0 dest=
while [ $# -gt 0 ]; do
	case $1 in
	--selftest) selftest=1 ;;
	--check) check=1 ;;
	--list) list=1 ;;
	# The comment block at the top, up to the first line of code.
	-h|--help) awk 'NR > 2 { if (!/^#/) exit; sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	-*) echo "vendor.sh: unknown option $1" >&2; exit 2 ;;
	*) [ -z "$dest" ] || { echo "vendor.sh: one DEST only" >&2; exit 2; }; dest=$1 ;;
	esac
	shift
done
if [ "$list" -eq 0 ] && [ -z "$dest" ]; then
	echo "usage: vendor.sh [--selftest] [--check] DEST | vendor.sh [--selftest] --list" >&2
	exit 2
fi

# The generated <iommukit/version.h>, made once per run in a scratch folder;
# files() names it "@gen/..." and up() maps that name to the file.
gen=$(mktemp -d "${TMPDIR:-/tmp}/ik-vendor-gen.XXXXXX")
trap 'rm -rf "$gen"' EXIT INT TERM
mkdir -p "$gen/include/iommukit"
"$top/scripts/gen-version.sh" "$gen/include/iommukit/version.h"
up() { case $1 in @gen/*) echo "$gen/${1#@gen/}" ;; *) echo "$top/$1" ;; esac; }

# "upstream-path vendored-path" pairs, sorted.
files() {
	{ (cd "$top" && find include/iommukit -name '*.h' ! -name env-hosted.h ! -name version.h) |
		awk '{print $1, $1}'; echo "@gen/include/iommukit/version.h include/iommukit/version.h"; } |
		sort -k2
	(cd "$top" && find src -name '*.[ch]' ! -name env_hosted.c) |
		sort | awk '{print $1, $1}'
	if [ "$selftest" -eq 1 ]; then
		(cd "$top" && ls examples/selftest/ik_selftest.[ch] examples/selftest/st_*.[ch]) |
			sort | awk '{f = $1; sub(/^examples\//, "", f); print $1, f}'
	fi
}

if [ "$list" -eq 1 ]; then
	files | awk '{sub(/^@gen\/.*/, "include/iommukit/version.h.in"); print $1}'
	exit 0
fi

sum() { sha256sum "$1" | awk '{print $1}'; }
manifest=$dest/IOMMUKIT-VENDOR
version=$(sed -n 's/^m4_define(\[ik_version_\(major\|minor\|micro\)\], \[\([0-9]*\)\]).*/\2/p' \
	"$top/configure.ac" | paste -sd. -)
commit=$(git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$top" status --porcelain -- include src examples/selftest 2>/dev/null | head -1)
[ -z "$dirty" ] || commit="$commit+local-changes"

if [ "$check" -eq 1 ]; then
	bad=0
	[ -f "$manifest" ] || { echo "no manifest: $manifest"; exit 1; }
	files > "${TMPDIR:-/tmp}/ik-vendor.$$"
	while read -r up v; do
		if [ ! -f "$dest/$v" ]; then
			echo "missing:          $v"; bad=1
		elif ! cmp -s "$(up "$up")" "$dest/$v"; then
			m=$(awk -v f="$v" '$2 == f {print $1}' "$manifest")
			if [ -n "$m" ] && [ "$m" != "$(sum "$dest/$v")" ]; then
				echo "edited locally:   $v"
			else
				echo "out of date:      $v"
			fi
			bad=1
		fi
	done < "${TMPDIR:-/tmp}/ik-vendor.$$"
	awk '/^[0-9a-f]+ / {print $2}' "$manifest" | while read -r v; do
		awk -v f="$v" '$2 == f {found = 1} END {exit !found}' "${TMPDIR:-/tmp}/ik-vendor.$$" ||
			echo "stale (removed upstream): $v"
	done | grep . && bad=1
	rm -f "${TMPDIR:-/tmp}/ik-vendor.$$"
	[ "$bad" -eq 0 ] && echo "in sync with iommukit $version ($commit)"
	exit "$bad"
fi

mkdir -p "$dest"
# Remove what the previous copy had and upstream no longer has.
if [ -f "$manifest" ]; then
	files > "$dest/.ik-vendor-new"
	awk '/^[0-9a-f]+ / {print $2}' "$manifest" | while read -r v; do
		awk -v f="$v" '$2 == f {found = 1} END {exit !found}' "$dest/.ik-vendor-new" || {
			echo "removing stale $v"; rm -f "$dest/$v"; }
	done
	rm -f "$dest/.ik-vendor-new"
fi
{
	echo "# iommukit $version, commit $commit, copied by scripts/vendor.sh"
	echo "# Do not edit the files below here: change iommukit and re-run vendor.sh;"
	echo "# 'vendor.sh --check DEST' lists differences.  sha256 and path:"
} > "$manifest.tmp"
files | while read -r up v; do
	mkdir -p "$dest/$(dirname "$v")"
	cmp -s "$(up "$up")" "$dest/$v" 2>/dev/null || cp "$(up "$up")" "$dest/$v"
	echo "$(sum "$dest/$v") $v" >> "$manifest.tmp"
done
mv "$manifest.tmp" "$manifest"
echo "vendored $(grep -c '^[0-9a-f]' "$manifest") files of iommukit $version into $dest"
