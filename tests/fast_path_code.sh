#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The exported IOVA fast path as the compilers build it (issue 25): the hit
# of ik_iova_alloc_fast() and ik_iova_free_fast() in RSEQ mode should cost
# little more than the call itself.  src/iova/iova_rcache.c is compiled as
# the shared library compiles it (-O2 -fPIC -fvisibility=hidden, the hosted
# env), with gcc and with clang, and the hot part of each function (its own
# symbol; gcc moves what it deems cold to a .cold part) is checked for:
#   - no push and no call: the hit saves no callee-saved register and makes
#     no call (the misses are tail calls);
#   - no relocation against glibc's __rseq_offset or __rseq_size: the hit
#     reads no GOT entry to find the thread's rseq area (the library keeps
#     the offset in a variable of its own, set at init);
#   - a %fs-relative access: the code checked is the RSEQ sequence.
# Independent of how the build itself was configured (sanitizers, coverage,
# -O0 builds would change the code, not the promise).  Skipped off x86-64,
# without objdump, for a compiler that is not installed, and where the
# hosted env has no rseq (glibc before 2.35).  Prints TAP.
set -u
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
: "${OBJDUMP:=objdump}"
. "$top_srcdir/tests/sh-lib.sh"
echo "1..2"
skip_all() {
	echo "ok 1 # SKIP $1"
	echo "ok 2 # SKIP $1"
	exit 0
}
case $(uname -m) in
x86_64 | amd64) ;;
*) skip_all "not x86-64: the RSEQ sequence is x86-64 only" ;;
esac
command -v "$OBJDUMP" > /dev/null 2>&1 || skip_all "no objdump"
gen_headers
flags="-std=c11 -O2 -fPIC -fvisibility=hidden -DHAVE_CONFIG_H -I$tmp/gen -I$top_srcdir/include"

n=0
for cc in gcc clang; do
	n=$((n + 1))
	what="$cc -O2 -fPIC: the exported fast path's RSEQ hit saves no register, calls nothing, reads no GOT"
	skip_without_cc "$cc" "$n" "$what" && continue
	# Does this env give the range caches rseq?  (The macro is internal.)
	printf '#include "config.h"\n#define IK_INLINE_FAST 1\n#include <iommukit/iova.h>\n#ifndef IK_IOVA_HAVE_RSEQ_\n#error no rseq\n#endif\n' > "$tmp/probe.c"
	if ! $cc $flags -c "$tmp/probe.c" -o "$tmp/probe.o" 2> /dev/null; then
		echo "ok $n - $what # SKIP the hosted env has no rseq here (glibc 2.35 or later)"
		continue
	fi
	if ! $cc $flags -c "$top_srcdir/src/iova/iova_rcache.c" -o "$tmp/rc.o" 2> "$tmp/err"; then
		echo "not ok $n - $what: src/iova/iova_rcache.c does not compile"
		sed 's/^/# /' "$tmp/err" | head -n 20
		continue
	fi
	"$OBJDUMP" -dr --no-show-raw-insn "$tmp/rc.o" > "$tmp/dis" || exit 1
	bad=0
	for f in ik_iova_alloc_fast ik_iova_free_fast; do
		# The function's own symbol up to the next one (a .cold part has its own).
		awk -v f="<$f>:" '$2 == f { on = 1; next } /^[0-9a-f]+ <.*>:$/ { on = 0 } on' \
			"$tmp/dis" > "$tmp/$f"
		if ! grep -q . "$tmp/$f"; then
			echo "# $f: not found in the object"
			bad=1
			continue
		fi
		if grep -E '[[:space:]](push|call)[a-z]*[[:space:]]' "$tmp/$f" > "$tmp/hits"; then
			echo "# $f saves a register or calls:"
			sed 's/^/#   /' "$tmp/hits"
			bad=1
		fi
		if grep -E '__rseq_(offset|size)' "$tmp/$f" > "$tmp/hits"; then
			echo "# $f reads glibc's rseq facts through the GOT:"
			sed 's/^/#   /' "$tmp/hits"
			bad=1
		fi
		if ! grep -q '%fs:' "$tmp/$f"; then
			echo "# $f: no %fs access: not the RSEQ sequence?"
			bad=1
		fi
	done
	if [ "$bad" -eq 0 ]; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
	fi
done
