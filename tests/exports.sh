#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Names: the shared library exports exactly what the public headers declare
# with IK_API (the API, and the helpers public inline functions call, whose
# names end in an underscore), the explicit export list src/libiommukit.sym
# names exactly those, and no library source or public header
# declares a name that C reserves (a leading underscore before an upper-case
# letter or an underscore, or `_ik_` at file scope).  Prints TAP.
set -u
: "${top_srcdir:=.}"
: "${NM:=nm}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "1..3"

# The IK_API declarations of include/iommukit/.
find "$top_srcdir/include/iommukit" -name '*.h' ! -name compiler.h | sort |
	xargs cat | tr '\n' ' ' | sed -E 's:/\*([^*]|\*+[^*/])*\*+/: :g' |
	grep -oE 'IK_API[^;{(]*[(;]' |
	sed -E 's/[[:space:]]*[(;]$//; s/.*[^A-Za-z0-9_]//' | sort -u > "$tmp/declared"

# 1. IK_API declarations against the dynamic symbols.
so=.libs/libiommukit.so
if [ ! -f "$so" ]; then
	echo "ok 1 # SKIP no shared library built"
else
	$NM -D --defined-only "$so" | awk '$3 != "" { sub(/@.*/, "", $3); print $3 }' |
		grep -v '^IOMMUKIT_' | sort -u > "$tmp/exported"
	if cmp -s "$tmp/declared" "$tmp/exported"; then
		echo "ok 1 - libiommukit.so exports exactly the IK_API names of the public headers ($(wc -l < "$tmp/exported"))"
	else
		echo "not ok 1 - exports differ from the public headers' IK_API declarations"
		diff "$tmp/declared" "$tmp/exported" | sed -n 's/^</# declared, not exported:/p; s/^>/# exported, not declared:/p'
	fi
fi

# 2. Reserved identifiers (feature-test macros such as _GNU_SOURCE aside).
if grep -rnE '\b_(ik|IK)_|#[[:space:]]*define[[:space:]]+_[_A-Z]|(struct|union|enum)[[:space:]]+_|(->|\.)_[_A-Z]' \
	"$top_srcdir/include" "$top_srcdir/src" | grep -vE '#[[:space:]]*define[[:space:]]+_(GNU|POSIX_C|DEFAULT|XOPEN)_SOURCE' > "$tmp/reserved"; then
	echo "not ok 2 - reserved identifiers in include/ or src/"
	sed 's/^/# /' "$tmp/reserved"
else
	echo "ok 2 - no reserved identifiers in include/ or src/"
fi

# 3. The export list: the names between "global:" and "local:".
sed -n '/^[[:space:]]*global:/,/^[[:space:]]*local:/p' "$top_srcdir/src/libiommukit.sym" |
	sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' | sort -u > "$tmp/listed"
if sed -n '/global:/,/local:/p' "$top_srcdir/src/libiommukit.sym" | grep -v '^[[:space:]]*local:' | grep -q '[*?[]'; then
	echo "not ok 3 - src/libiommukit.sym exports a glob; list every name"
elif cmp -s "$tmp/declared" "$tmp/listed"; then
	echo "ok 3 - src/libiommukit.sym lists exactly the IK_API names ($(wc -l < "$tmp/listed"))"
else
	echo "not ok 3 - src/libiommukit.sym and the public headers' IK_API declarations differ"
	diff "$tmp/declared" "$tmp/listed" | sed -n 's/^</# declared, not in src\/libiommukit.sym (add it):/p; s/^>/# in src\/libiommukit.sym, not declared:/p'
fi
