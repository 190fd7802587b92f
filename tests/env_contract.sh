#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The env contract is checked at compile time: an env header that leaves out
# a required definition must stop the build with an #error that names it
# (the first error the compiler prints), not a failure deep inside a unit.
# For every required macro (each `#ifndef X` / `#error "iommukit env: ..."`
# pair in env.h, which must include the seven the contract documents) and
# for every group that must be overridden whole (locks, integer types, DMA
# barriers, interrupt save/restore), compile a file that includes
# <iommukit/env.h>, <iommukit/atomic.h> and <iommukit/lock.h> against an env
# header lacking exactly that macro.
# A complete env header must compile (C and C++).  Prints TAP.
set -u
: "${top_srcdir:=.}"
. "$top_srcdir/tests/sh-lib.sh"

required=$(grep -B1 '^#error "iommukit env: ' "$top_srcdir/include/iommukit/env.h" |
	sed -n 's/^#ifndef \(IK_ENV_[A-Z0-9_]*\).*/\1/p')
documented="IK_ENV_NAME IK_ENV_ALLOC IK_ENV_FREE IK_ENV_CPU_ID IK_ENV_NR_CPUS IK_ENV_TIME_NS IK_ENV_YIELD"

# A complete env, one definition per line, so that one can be left out.
full() {
	cat <<'EOH'
#define IK_ENV_NAME "contract-test"
void *t_alloc(__SIZE_TYPE__ size, __SIZE_TYPE__ align);
void t_free(void *p, __SIZE_TYPE__ size);
__UINT64_TYPE__ t_time(void);
#define IK_ENV_ALLOC(size, align) t_alloc((size), (align))
#define IK_ENV_FREE(ptr, size) t_free((ptr), (size))
#define IK_ENV_CPU_ID() 0u
#define IK_ENV_NR_CPUS() 1u
#define IK_ENV_TIME_NS() t_time()
#define IK_ENV_YIELD() do { } while (0)
EOH
}
# Optional groups, complete.
locks() {
	cat <<'EOH'
typedef struct { int v; } t_lock;
#define IK_ENV_LOCK_T t_lock
#define IK_ENV_LOCK_INIT(l) ((l)->v = 0)
#define IK_ENV_LOCK(l) ((l)->v = 1)
#define IK_ENV_TRYLOCK(l) ((l)->v ? false : ((l)->v = 1, true))
#define IK_ENV_UNLOCK(l) ((l)->v = 0)
#define IK_ENV_LOCK_DESTROY(l) ((void)(l))
EOH
}
types() {
	cat <<'EOH'
#define IK_ENV_U8 unsigned char
#define IK_ENV_U16 unsigned short
#define IK_ENV_U32 unsigned int
#define IK_ENV_U64 unsigned long long
#define IK_ENV_S32 int
#define IK_ENV_S64 long long
#define IK_ENV_UPTR __UINTPTR_TYPE__
#define IK_ENV_SIZE __SIZE_TYPE__
EOH
}
irq() {
	cat <<'EOH'
typedef unsigned long t_irqflags;
t_irqflags t_irq_save(void);
void t_irq_restore(t_irqflags f);
#define IK_ENV_IRQ_FLAGS t_irqflags
#define IK_ENV_IRQ_SAVE(f) ((f) = t_irq_save())
#define IK_ENV_IRQ_RESTORE(f) t_irq_restore(f)
EOH
}
barriers() {
	cat <<'EOH'
#define ik_dma_wmb() __asm__ __volatile__("" ::: "memory")
#define ik_dma_rmb() __asm__ __volatile__("" ::: "memory")
EOH
}

cat > "$tmp/use.c" <<'EOF2'
#include <iommukit/env.h>
#include <iommukit/atomic.h>
#include <iommukit/lock.h>
int t_use(void);
int t_use(void) {
	ik_lock_t l; ik_irqflags f;
	IK_ENV_IRQ_SAVE(f); ik_lock_init(&l); ik_lock(&l); ik_unlock(&l); IK_ENV_IRQ_RESTORE(f);
	return 0;
}
EOF2
cp "$tmp/use.c" "$tmp/use.cc"

compile() { # compile ENVFILE [c|c++]
	if [ "${2:-c}" = c++ ]; then
		$CXX -std=c++11 -fsyntax-only -I"$top_srcdir/include" -I"$tmp" \
			-DIK_ENV_HEADER="\"$1\"" "$tmp/use.cc" > "$tmp/err" 2>&1
	else
		$CC -std=c11 -fsyntax-only -I"$top_srcdir/include" -I"$tmp" \
			-DIK_ENV_HEADER="\"$1\"" "$tmp/use.c" > "$tmp/err" 2>&1
	fi
}

# cases: "NAME GROUP": leave macro NAME out of the env made of GROUP(s).
cases=
for m in $required; do cases="$cases $m:full"; done
for m in IK_ENV_LOCK_T IK_ENV_LOCK_INIT IK_ENV_LOCK IK_ENV_TRYLOCK IK_ENV_UNLOCK IK_ENV_LOCK_DESTROY; do
	cases="$cases $m:locks"
done
for m in IK_ENV_U8 IK_ENV_U16 IK_ENV_U32 IK_ENV_U64 IK_ENV_S32 IK_ENV_S64 IK_ENV_UPTR IK_ENV_SIZE; do
	cases="$cases $m:types"
done
cases="$cases ik_dma_wmb:barriers ik_dma_rmb:barriers"
cases="$cases IK_ENV_IRQ_SAVE:irq IK_ENV_IRQ_RESTORE:irq"

n=0 fails=0
plan=$(($(echo $cases | wc -w) + 4))
echo "1..$plan"

n=$((n + 1))
missing_doc=
for m in $documented; do
	echo "$required" | grep -qx "$m" || missing_doc="$missing_doc $m"
done
if [ -z "$missing_doc" ]; then
	echo "ok $n - env.h has an #error for each of the $(echo $documented | wc -w) documented required macros"
else
	echo "not ok $n - env.h has no #error for:$missing_doc"; fails=$((fails + 1))
fi

{ full; locks; types; barriers; irq; } > "$tmp/env_full.h"
for lang in c c++; do
	n=$((n + 1))
	if compile env_full.h $lang; then
		echo "ok $n - a complete env header compiles ($lang)"
	else
		echo "not ok $n - a complete env header compiles ($lang)"; sed 's/^/# /' "$tmp/err"
		fails=$((fails + 1))
	fi
done
full > "$tmp/env_min.h"
n=$((n + 1))
if compile env_min.h; then
	echo "ok $n - the required macros alone are enough"
else
	echo "not ok $n - the required macros alone are enough"; sed 's/^/# /' "$tmp/err"
	fails=$((fails + 1))
fi

for c in $cases; do
	m=${c%%:*} g=${c#*:}
	n=$((n + 1))
	f=env_no_$m.h
	{
		full
		[ "$g" = full ] || $g
	} | grep -v -E "^#define $m[ (]" > "$tmp/$f"
	if compile "$f"; then
		echo "not ok $n - env without $m is rejected (it compiled)"; fails=$((fails + 1))
		continue
	fi
	# GCC prints `error: #error "iommukit env..."`, Clang `error: "iommukit env..."`.
	first=$(grep -m1 -E 'error' "$tmp/err")
	if echo "$first" | grep -q '"iommukit env' && echo "$first" | grep -qw "$m"; then
		echo "ok $n - env without $m stops at an #error naming it"
	else
		echo "not ok $n - env without $m: first error does not name it"
		sed 's/^/# /' "$tmp/err" | head -5; fails=$((fails + 1))
	fi
done
[ "$fails" -eq 0 ]
