#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Smoke test of `iommukit-bench map --baseline` (a benchmark, so times are
# not checked): this build against a second copy of itself loaded with
# dlopen() prints both times, their ratio and both builds' counts, which
# agree (same library); the JSON has one row per op and measurement; a
# library that cannot be loaded is a one-line error with exit 2, and
# --candidate or --rounds without --baseline a usage error.  Prints TAP.
set -u
. "${top_srcdir:-..}/tests/bench-lib.sh"
echo "1..5"

if baseline_usable map --size 2M; then
	# the 2 MiB rows: a block, and 4K pages whose unmap releases one table
	out=$($bench --quick map --size 2M --baseline "$lib" --rounds 2 2>&1)
	if [ $? -eq 0 ] &&
	   printf '%s\n' "$out" | grep -q '^lpae-s1 .*2048K *2048K nc *count *unmap .*[0-9]\.[0-9][0-9][0-9] *1\.00 *1\.00 *0\.00 *0\.00$' &&
	   printf '%s\n' "$out" | grep -q '^lpae-s1 .*2048K *4K nc *count *unmap .*[0-9]\.[0-9][0-9][0-9] *1\.00 *1\.00 *1\.00 *1\.00$'; then
		ok "--baseline table: block and 2M-of-4K unmap rows, ratio and equal counts"
	else
		no "--baseline table"; printf '%s\n' "$out" | sed 's/^/# /'
	fi
	out=$($bench --json --quick map --size 4K --baseline "$lib" --candidate "$lib" --rounds 2 2>&1)
	rc=$?
	rows=$(printf '%s\n' "$out" | grep -c '"mode":"baseline".*"base_ns":.*"ns":.*"ratio":.*"base_cleans":.*"cleans":')
	# 4K: coherent and the non-coherent modes, map and unmap; the scatter list twice
	if [ $rc -eq 0 ] && [ "$rows" -ge 8 ] &&
	   [ "$rows" -eq "$(printf '%s\n' "$out" | grep -c .)" ]; then
		ok "--baseline --candidate --json: $rows rows, all with both times and counts"
	else
		no "--baseline --json ($rows rows)"; printf '%s\n' "$out" | sed 's/^/# /'
	fi
fi

needs_baseline map --candidate "$lib"
needs_baseline map --rounds 3
missing_baseline map
[ $fails -eq 0 ]
