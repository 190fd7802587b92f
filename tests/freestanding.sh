#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Freestanding check: every core source (src/*/*.c but the hosted env) and every
# public header compiles with -ffreestanding -nostdlib against a test env
# header that includes nothing; the dependency output must name no libc header
# (nothing under /usr/include), and a partial link of all objects may leave
# undefined only the env's functions and memset/memcpy.  The test env also
# defines the function-like macros kernels define (nop(), min(), ...), so a
# unit that would be rewritten by one of them fails here.  Last, where a RISC-V
# cross compiler is installed ($RISCV_CC, default riscv64-linux-gnu-gcc), the
# same partial link for rv64gc (no Zbb: no bit-scan instructions) must need
# nothing from libgcc either (no __clzdi2 / __ctzdi2).  Prints TAP.
set -u
: "${top_srcdir:=.}"
. "$top_srcdir/tests/sh-lib.sh"
# <iommukit/version.h> as a vendored copy gets it: from scripts/gen-version.sh.
mkdir -p "$tmp/gen/iommukit"
"$top_srcdir/scripts/gen-version.sh" "$tmp/gen/iommukit/version.h" || exit 1
flags="-std=c11 -O2 -ffreestanding -nostdlib -Wall -Wextra -Wundef -Werror -I$tmp/gen -I$top_srcdir/include -I$top_srcdir/tests/freestanding -DIK_ENV_HEADER=\"ik_env_test.h\""

srcs=$(cd "$top_srcdir" && find src -name '*.c' ! -name env_hosted.c | sort)
{
	echo '/* generated: every public header */'
	{ (cd "$top_srcdir/include" && find iommukit -name '*.h' ! -name env-hosted.h ! -name version.h)
	  echo iommukit/version.h; } | sort | sed 's|.*|#include <&>|'
	echo 'int ik_all_headers_marker;'
} > "$tmp/all_headers.c"

n=0; fails=0
count=$(echo "$srcs" | wc -w)
echo "1..$((count + 3))"
objs=
for s in $srcs all_headers.c; do
	n=$((n + 1))
	case $s in all_headers.c) path=$tmp/all_headers.c ;; *) path=$top_srcdir/$s ;; esac
	o=$tmp/$(basename "$s" .c).o
	if ! $CC $flags -MD -MF "$o.d" -c "$path" -o "$o" 2> "$tmp/err"; then
		echo "not ok $n - $s compiles freestanding"; sed 's/^/# /' "$tmp/err"; fails=$((fails + 1)); continue
	fi
	libc=$(tr ' \\' '\n\n' < "$o.d" | grep -E '^/usr/(local/)?include/' | sort -u)
	if [ -n "$libc" ]; then
		echo "not ok $n - $s pulls in libc headers:"; echo "$libc" | sed 's/^/#   /'; fails=$((fails + 1)); continue
	fi
	echo "ok $n - $s compiles freestanding, no libc header"
	objs="$objs $o"
done

n=$((n + 1))
if $CC -nostdlib -r -o "$tmp/core.o" $objs 2> "$tmp/err"; then
	undef=$(nm -u "$tmp/core.o" | awk '{print $2}' | grep -v -E '^(fw_alloc|fw_free|fw_time_ns|memset|memcpy)$' || true)
	if [ -z "$undef" ]; then
		echo "ok $n - core links with only env symbols undefined"
	else
		echo "not ok $n - undefined symbols beyond the env:"; echo "$undef" | sed 's/^/#   /'; fails=$((fails + 1))
	fi
else
	echo "not ok $n - partial link of the core"; sed 's/^/# /' "$tmp/err"; fails=$((fails + 1))
fi
n=$((n + 1))
: "${RISCV_CC:=riscv64-linux-gnu-gcc}"
if ! command -v "$RISCV_CC" > /dev/null 2>&1; then
	echo "ok $n - rv64gc core links with only env symbols undefined # SKIP no $RISCV_CC"
else
	rvfail=
	mkdir -p "$tmp/rv"
	for s in $srcs; do
		if ! $RISCV_CC -march=rv64gc -mabi=lp64d $flags -c "$top_srcdir/$s" \
			-o "$tmp/rv/$(basename "$s" .c).o" 2> "$tmp/err"; then
			rvfail="$s does not compile"; break
		fi
	done
	if [ -z "$rvfail" ] && $RISCV_CC -nostdlib -r -o "$tmp/rv/core.o" "$tmp"/rv/*.o 2> "$tmp/err"; then
		undef=$(nm -u "$tmp/rv/core.o" | awk '{print $2}' |
			grep -v -E '^(fw_alloc|fw_free|fw_time_ns|memset|memcpy)$' || true)
		[ -z "$undef" ] || rvfail="undefined beyond the env: $(echo $undef)"
	else
		rvfail=${rvfail:-partial link failed}
	fi
	if [ -z "$rvfail" ]; then
		echo "ok $n - rv64gc (no Zbb) core links with only env symbols undefined"
	else
		echo "not ok $n - rv64gc core: $rvfail"; sed 's/^/# /' "$tmp/err"; fails=$((fails + 1))
	fi
fi
[ "$fails" -eq 0 ]
