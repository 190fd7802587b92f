#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Stack frames of the library for kernels: every library source (src/**/*.c)
# compiles at -O2 with -Wframe-larger-than=1024 and no such warning (32-bit
# kernels warn at 1024 bytes, 64-bit Linux at 2048, and a kernel built with
# clang has no -fconserve-stack), with gcc and with clang, 64-bit and -m32,
# with the hosted env (as the library is built here; config.h from the build
# tree) and with the freestanding env as tests/freestanding.sh builds it (a
# test env header that includes nothing; every source but the hosted env's).
# The hosted -m32 configuration needs 32-bit libc headers (libc6-dev-i386):
# where they are missing it is skipped, and the freestanding -m32 one, which
# needs no libc, still covers every source but env_hosted.c (userspace only).
# A compiler that is not installed, or cannot build for -m32, is skipped and
# says so.  Only the frame warning fails a test: the other warnings of these
# configurations are the build's and tests/freestanding.sh's business.
# Prints TAP, one test per compiler and configuration.
set -u
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
: "${IK_FRAME_LIMIT:=1024}"
. "$top_srcdir/tests/sh-lib.sh"
# env_hosted.c includes "config.h": the build tree's, or a stand-in.
gen_headers
srcs=$(cd "$top_srcdir" && find src -name '*.c' | sort)
base="-std=c11 -O2 -Wframe-larger-than=$IK_FRAME_LIMIT -I$tmp/gen -I$top_srcdir/include"
free="-ffreestanding -I$top_srcdir/tests/freestanding -DIK_ENV_HEADER=\"ik_env_test.h\""

echo "1..8"
n=0
fails=0
for cc in gcc clang; do
	for bits in 64 32; do
		m=; [ "$bits" = 32 ] && m=-m32
		for env in hosted freestanding; do
			n=$((n + 1))
			what="$cc -O2 $bits-bit $env: every frame <= $IK_FRAME_LIMIT bytes"
			skip_without_cc "$cc" "$n" "$what" && continue
			echo 'int ik_probe;' > "$tmp/probe.c"
			if ! $cc $m -c "$tmp/probe.c" -o "$tmp/probe.o" 2> /dev/null; then
				echo "ok $n - $what # SKIP $cc cannot build for $m"
				continue
			fi
			flags="$base $m"
			if [ "$env" = hosted ]; then
				printf '#include <errno.h>\n#include <stdlib.h>\n#include <pthread.h>\n' > "$tmp/probe.c"
				if ! $cc $m -c "$tmp/probe.c" -o "$tmp/probe.o" 2> /dev/null; then
					echo "ok $n - $what # SKIP no $bits-bit libc and kernel headers for $cc (libc6-dev-i386, asm/ from gcc-multilib); the freestanding $bits-bit check covers the core"
					continue
				fi
			else
				flags="$flags $free"
			fi
			bad=0 nsrc=0
			: > "$tmp/report"
			for s in $srcs; do
				[ "$env" = freestanding ] && [ "${s##*/}" = env_hosted.c ] && continue
				nsrc=$((nsrc + 1))
				if ! $cc $flags -c "$top_srcdir/$s" -o "$tmp/o.o" 2> "$tmp/err"; then
					echo "$s does not compile:" >> "$tmp/report"
					head -n 20 "$tmp/err" >> "$tmp/report"
					bad=$((bad + 1))
				elif grep -q -e '-Wframe-larger-than' "$tmp/err"; then
					grep -e '-Wframe-larger-than' "$tmp/err" >> "$tmp/report"
					bad=$((bad + 1))
				fi
			done
			if [ "$bad" -eq 0 ]; then
				echo "ok $n - $what ($nsrc sources)"
			else
				echo "not ok $n - $what: $bad of $nsrc sources"
				sed 's/^/# /' "$tmp/report"
				fails=$((fails + 1))
			fi
		done
	done
done
[ "$fails" -eq 0 ]
