#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Smoke test of `iommukit-bench iova` (a benchmark, so times are not
# checked): the per-call summary-update counts are printed and in the JSON,
# and --baseline runs this build against a second copy of itself loaded
# with dlopen(), printing both means and their ratio; a library that cannot
# be loaded is a one-line error with exit 2.  Prints TAP.
set -u
bench=./iommukit-bench
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
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

lib=.libs/libiommukit.so
if [ ! -f "$lib" ]; then
	skip "--baseline table" "no shared library in this build"
	skip "--baseline --json" "no shared library in this build"
elif $bench --quick iova --baseline "$lib" 2>&1 | grep -q 'not available in this build'; then
	skip "--baseline table" "not available in this build (sanitizers or no RTLD_DEEPBIND)"
	skip "--baseline --json" "not available in this build"
else
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

err=$($bench iova --candidate "$lib" 2>&1 >/dev/null)
rc=$?
if [ $rc -eq 2 ] && printf '%s\n' "$err" | grep -q -- '--candidate needs --baseline'; then
	ok "--candidate without --baseline: usage error, exit 2"
else
	no "--candidate without --baseline: exit $rc: $err"
fi

err=$($bench iova --baseline ./no-such-library.so 2>&1 >/dev/null)
rc=$?
lines=$(printf '%s\n' "$err" | wc -l)
if [ $rc -eq 2 ] && [ "$lines" -eq 1 ]; then
	ok "--baseline with a missing library: one line, exit 2"
else
	no "--baseline with a missing library: exit $rc, $lines lines: $err"
fi
[ $fails -eq 0 ]
