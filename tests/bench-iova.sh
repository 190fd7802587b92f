#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Smoke test of `iommukit-bench iova` (a benchmark, so times are not
# checked): the per-call summary-update counts are printed and in the JSON,
# and so are the hint's probe hits and misses and the bytes per live range,
# and --baseline runs this build against a second copy of itself loaded
# with dlopen(), printing both means and their ratio; a library that cannot
# be loaded is a one-line error with exit 2.  Prints TAP.
set -u
. "${top_srcdir:-..}/tests/bench-lib.sh"
echo "1..7"

out=$($bench --json --quick iova --only W3 2>&1)
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q '"op":"alloc".*"summary_updates_mean":[0-9]' &&
   printf '%s\n' "$out" | grep -q '"op":"free".*"summary_updates_mean":[0-9]'; then
	ok "W3 --json: summary_updates_mean on the free and alloc rows"
else
	no "W3 --json"; printf '%s\n' "$out" | sed 's/^/# /'
fi

# The hint's probes on the allocation rows; a node of 56 bytes on 64-bit
# hosts, and the library's bytes per live range printed.
if printf '%s\n' "$out" | grep -q '"op":"alloc".*"probe_hits":[0-9][0-9]*,"probe_misses":[0-9]' &&
   printf '%s\n' "$out" | grep -q '"op":"free".*"bytes_per_range":[0-9]' &&
   { [ "$(getconf LONG_BIT 2>/dev/null)" != 64 ] ||
     printf '%s\n' "$out" | grep -q '"op":"alloc".*"node_bytes":56,'; }; then
	ok "W3 --json: probe_hits, probe_misses; bytes_per_range; node_bytes 56"
else
	no "W3 --json probes and bytes"; printf '%s\n' "$out" | sed 's/^/# /'
fi

out=$($bench --quick iova --only W2 2>&1)
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q ' upd$' &&
   printf '%s\n' "$out" | grep -q '^W2 .*alloc_fail .* 0\.0$'; then
	ok "W2 table: the upd column, 0 for a failing allocation"
else
	no "W2 table"; printf '%s\n' "$out" | sed 's/^/# /'
fi

if baseline_usable iova; then
	out=$($bench --quick iova --baseline "$lib" 2>&1)
	if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q '^W1 .*alloc .*[0-9]\.[0-9][0-9][0-9]$' &&
	   printf '%s\n' "$out" | grep -q '^W3 .*free .*[0-9]\.[0-9][0-9][0-9]$'; then
		ok "--baseline table: W1 and W3 rows with a ratio"
	else
		no "--baseline table"; printf '%s\n' "$out" | sed 's/^/# /'
	fi
	out=$($bench --json --quick iova --baseline "$lib" --candidate "$lib" 2>&1)
	if [ $? -eq 0 ] &&
	   [ "$(printf '%s\n' "$out" | grep -c '"mode":"baseline".*"base_mean_ns":.*"mean_ns":.*"ratio":')" -eq 4 ]; then
		ok "--baseline --candidate --json: four rows"
	else
		no "--baseline --json"; printf '%s\n' "$out" | sed 's/^/# /'
	fi
fi

needs_baseline iova --candidate "$lib"
missing_baseline iova
[ $fails -eq 0 ]
