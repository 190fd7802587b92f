# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Sourced by the iommukit-bench smoke tests (bench-iova.sh, bench-map.sh,
# bench-dma.sh), which run in the build directory: TAP output and the
# checks of --baseline's errors that every subcommand shares.
#   ok MSG, no MSG, skip MSG WHY   one TAP result each (fails counts no)
#   lib                            the shared library --baseline loads
#   baseline_usable SUB ARGS...    true if `SUB ARGS --baseline $lib` can
#                                  run; else two skips (the table and the
#                                  JSON checks: no .so in this build, or
#                                  sanitizers, or no RTLD_DEEPBIND), false
#   needs_baseline SUB OPT...      OPT without --baseline: exit 2, usage
#   missing_baseline SUB           --baseline with a library that cannot be
#                                  loaded: one line, exit 2
bench=./iommukit-bench
n=0 fails=0
lib=.libs/libiommukit.so
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

baseline_usable() {
	_sub=$1
	shift
	if [ ! -f "$lib" ]; then
		skip "--baseline table" "no shared library in this build"
		skip "--baseline --json" "no shared library in this build"
		return 1
	fi
	if $bench --quick "$_sub" "$@" --baseline "$lib" 2>&1 | grep -q 'not available in this build'; then
		skip "--baseline table" "not available in this build (sanitizers or no RTLD_DEEPBIND)"
		skip "--baseline --json" "not available in this build"
		return 1
	fi
}

needs_baseline() {
	_sub=$1
	shift
	_err=$($bench "$_sub" "$@" 2>&1 >/dev/null)
	_rc=$?
	if [ $_rc -eq 2 ] && printf '%s\n' "$_err" | grep -q -- "$1 needs --baseline"; then
		ok "$1 without --baseline: usage error, exit 2"
	else
		no "$1 without --baseline: exit $_rc: $_err"
	fi
}

missing_baseline() {
	_err=$($bench "$1" --baseline ./no-such-library.so 2>&1 >/dev/null)
	_rc=$?
	_lines=$(printf '%s\n' "$_err" | wc -l)
	if [ $_rc -eq 2 ] && [ "$_lines" -eq 1 ]; then
		ok "--baseline with a missing library: one line, exit 2"
	else
		no "--baseline with a missing library: exit $_rc, $_lines lines: $_err"
	fi
}
