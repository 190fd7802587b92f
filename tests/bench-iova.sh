#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Smoke test of `iommukit-bench iova` (a benchmark, so times are not
# checked): the per-call summary-update counts are printed and in the JSON,
# and --baseline runs this build against a second copy of itself loaded
# with dlopen(), printing both means and their ratio; a library that cannot
# be loaded is a one-line error with exit 2.  Prints TAP.
set -u
. "${top_srcdir:-..}/tests/bench-lib.sh"
echo "1..6"

out=$($bench --json --quick iova --only W3 2>&1)
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q '"op":"alloc".*"summary_updates_mean":[0-9]' &&
   printf '%s\n' "$out" | grep -q '"op":"free".*"summary_updates_mean":[0-9]'; then
	ok "W3 --json: summary_updates_mean on the free and alloc rows"
else
	no "W3 --json"; printf '%s\n' "$out" | sed 's/^/# /'
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
