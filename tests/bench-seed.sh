#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Smoke test of `iommukit-bench seed` (a benchmark, so the figures are not
# checked): a short run prints a row per mode and batch, --json rows carry
# exactly mode, batch, threads, requests, requests_per_thread, and a bad
# option exits 2 with one line.  Prints TAP.
set -u
bench=./iommukit-bench
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
echo "1..4"

out=$($bench --quick --threads 2 seed --time 30 --batches 1,32 2>&1)
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -Eq '^shared +32 +2 +[1-9][0-9]* ' &&
   printf '%s\n' "$out" | grep -Eq '^ecmdq +1 +2 +[1-9][0-9]* ' &&
   printf '%s\n' "$out" | grep -q '^ratio ecmdq / best shared'; then
	ok "seed table: shared and ecmdq rows, the ratio"
else
	no "seed table"; printf '%s\n' "$out" | sed 's/^/# /'
fi

out=$($bench --json --quick --threads 2 seed --time 30 --batches 1,64 2>&1)
rows=$(printf '%s\n' "$out" | grep -Ec '^\{"mode":"(shared|ecmdq)","batch":(1|64),"threads":2,"requests":[1-9][0-9]*,"requests_per_thread":[0-9]+\}$')
if [ $? -eq 0 ] && [ "$rows" -eq 4 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 4 ]; then
	ok "seed --json: four rows with exactly the five fields"
else
	no "seed --json"; printf '%s\n' "$out" | sed 's/^/# /'
fi

rc2=0
for bad in "--batches 0" "--batches 257" "--time 0" "--threads 300" "--bogus" "--seed 3"; do
	# shellcheck disable=SC2086
	err=$($bench seed $bad 2>&1 >/dev/null)
	rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	[ $rc -eq 2 ] && [ "$lines" -eq 1 ] || { rc2=1; echo "# seed $bad: exit $rc, $lines lines: $err"; }
done
if [ $rc2 -eq 0 ]; then ok "bad seed options: one line, exit 2"; else no "bad seed options"; fi

out=$($bench seed --help 2>&1)
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q -- '--batches'; then
	ok "seed --help documents the options"
else
	no "seed --help"
fi
[ "$fails" -eq 0 ]
