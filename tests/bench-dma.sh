#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Smoke test of `iommukit-bench dma` and `reproduce` (a benchmark, so times
# are not checked): a short run of each mode exits 0 with its table or JSON,
# a bad option exits 2 with a one-line message.  Prints TAP.
set -u
. "${top_srcdir:-..}/tests/bench-lib.sh"
echo "1..8"

out=$($bench --quick dma --time 0.05 --size 4k,64k 2>&1)
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q 'lpae-s1 .*64K .*deferred'; then
	ok "dma table: strict and deferred rows"
else
	no "dma table"; printf '%s\n' "$out" | sed 's/^/# /'
fi

out=$($bench --quick dma --time 0.05 --size 4k,2m --mode strict --format lpae-s1/s2,vtd-fl/sl --check 2>&1)
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q 'lpae-s1/s2 .*2M .*strict' &&
   printf '%s\n' "$out" | grep -q 'vtd-fl/sl .*4K .*strict'; then
	ok "dma nested rows (stage 1 over stage 2), checking mode"
else
	no "dma nested rows"; printf '%s\n' "$out" | sed 's/^/# /'
fi

# RISC-V: the invalidations come from ik_riscv_plan_range() (AV = 1 per page,
# AV = 0 past 16 pages or when tables were freed); the checker finds no stale
# translation.
out=$($bench --json --quick dma --time 0.05 --size 4k,64k,2m --mode strict --format riscv-s1,riscv-s2 --check 2>&1)
if [ $? -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c '"fmt":"riscv-s[12]".*"faults":0,"stale":0}')" -eq 6 ]; then
	ok "dma riscv-s1 and riscv-s2 rows (the RISC-V planner), checking mode"
else
	no "dma riscv rows"; printf '%s\n' "$out" | sed 's/^/# /'
fi

out=$($bench --json --quick dma --time 0.05 --size 16k --segments 4 --non-coherent --check --mode strict 2>&1)
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q '"bench":"dma".*"segments":4.*"faults":0,"stale":0}'; then
	ok "dma --json, scatterlist, non-coherent, checking mode"
else
	no "dma --json"; printf '%s\n' "$out" | sed 's/^/# /'
fi

out=$($bench --quick --threads 2 dma --time 0.05 --size 8k --queues percpu --consumer thread 2>&1)
if [ $? -eq 0 ]; then ok "dma on two threads, per-CPU queues, consumer thread"; else
	no "dma on two threads"; printf '%s\n' "$out" | sed 's/^/# /'; fi

rc2=0
for bad in "--size 5000" "--mode lazy" "--bogus" "--iotlb 3" "--segments 0" "--time"; do
	# shellcheck disable=SC2086
	err=$($bench dma $bad 2>&1 >/dev/null)
	rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	[ $rc -eq 2 ] && [ "$lines" -eq 1 ] || { rc2=1; echo "# dma $bad: exit $rc, $lines lines: $err"; }
done
if [ $rc2 -eq 0 ]; then ok "bad dma options: one line, exit 2"; else no "bad dma options"; fi

out=$($bench dma --help 2>&1)
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q -- '--segments' && printf '%s\n' "$out" | grep -q -- '--mode'; then
	ok "dma --help documents the options"
else
	no "dma --help"
fi

out=$($bench --json --quick reproduce 2>&1)
if [ $? -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c '"bench":"reproduce"')" -ge 10 ]; then
	ok "reproduce --json: all four comparisons"
else
	no "reproduce"; printf '%s\n' "$out" | sed 's/^/# /'
fi
[ $fails -eq 0 ]
