#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Header self-containment: every public header compiles on its own as C11 and
# as C++11, with warnings as errors.  Prints TAP.
set -u
: "${top_srcdir:=.}"
. "$top_srcdir/tests/sh-lib.sh"
# The generated <iommukit/version.h> is in the build tree's include/.
gen=include; [ -f "$gen/iommukit/version.h" ] || gen="$top_srcdir/include"
hdrs=$({ (cd "$top_srcdir/include" && find iommukit -name '*.h' ! -name env-hosted.h ! -name version.h)
	[ -f "$gen/iommukit/version.h" ] && echo iommukit/version.h; } | sort)
count=$(echo "$hdrs" | wc -w)
echo "1..$((count * 2 + 1))"
n=0; fails=0
for h in $hdrs; do
	printf '#include <%s>\n#include <%s>\nint ik_hdr_test;\n' "$h" "$h" > "$tmp/t.c"
	n=$((n + 1))
	if $CC -std=c11 -Wall -Wextra -Werror -I"$gen" -I"$top_srcdir/include" -c "$tmp/t.c" -o "$tmp/t.o" 2> "$tmp/err"; then
		echo "ok $n - $h is self-contained (C11)"
	else
		echo "not ok $n - $h is self-contained (C11)"; sed 's/^/# /' "$tmp/err"; fails=$((fails + 1))
	fi
	n=$((n + 1))
	cp "$tmp/t.c" "$tmp/t.cc"
	if $CXX -std=c++11 -Wall -Wextra -Werror -I"$gen" -I"$top_srcdir/include" -c "$tmp/t.cc" -o "$tmp/t.o" 2> "$tmp/err"; then
		echo "ok $n - $h is self-contained (C++11)"
	else
		echo "not ok $n - $h is self-contained (C++11)"; sed 's/^/# /' "$tmp/err"; fails=$((fails + 1))
	fi
done
# env-hosted.h must refuse direct inclusion.
n=$((n + 1))
printf '#include <iommukit/env-hosted.h>\n' > "$tmp/d.c"
if $CC -std=c11 -I"$top_srcdir/include" -c "$tmp/d.c" -o "$tmp/d.o" 2>/dev/null; then
	echo "not ok $n - env-hosted.h refuses direct inclusion"; fails=$((fails + 1))
else
	echo "ok $n - env-hosted.h refuses direct inclusion"
fi
[ "$fails" -eq 0 ]
