#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Build and run iommukit's libFuzzer harnesses (tests/fuzz/fuzz_*.c).
#
#   tests/fuzz/run.sh [--time S] [--out DIR] [--build-only] [--replay-only]
#                     [--jobs N] [--parallel N] [HARNESS...]
#
# For each harness (default: every tests/fuzz/fuzz_*.c; a name like "iova"
# or "fuzz_iova" picks one):
#   1. build DIR/fuzz_NAME with clang -fsanitize=fuzzer,address,undefined
#      from the library's sources (IK_DEBUG on, so internal assertions fire);
#   2. replay every file of the seed corpus tests/fuzz/corpus/NAME/ once;
#   3. fuzz for S seconds (default 20) from a working corpus DIR/corpus/NAME
#      (seeded from the repo's corpus; kept between runs), writing any
#      crashing input to DIR/artifacts/NAME/.
# --jobs N gives each harness N fuzzing processes; --parallel N runs N
# harnesses at the same time (each still fuzzes S seconds; results are
# printed in harness order).
# Prints "# PASS: N" / "# FAIL: N" (automake style) at the end; exits 1 if a
# build, a replay or a fuzz run failed.  `make fuzz-smoke` runs it with the
# defaults; a long run is e.g. `tests/fuzz/run.sh --time 1800 pgtable`.
# Reproduce a finding: DIR/fuzz_NAME DIR/artifacts/NAME/crash-... (see
# tests/fuzz/README.md).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${FUZZ_OUT:-$PWD/_fuzz}
secs=20 build_only=0 replay_only=0 jobs=1 par=1
names=()
while [ $# -gt 0 ]; do
	case $1 in
	--time) secs=$2; shift 2 ;;
	--time=*) secs=${1#*=}; shift ;;
	--out) out=$2; shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	--jobs) jobs=$2; shift 2 ;;
	--jobs=*) jobs=${1#*=}; shift ;;
	--parallel) par=$2; shift 2 ;;
	--parallel=*) par=${1#*=}; shift ;;
	--build-only) build_only=1; shift ;;
	--replay-only) replay_only=1; shift ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) n=${1#fuzz_}; names+=("${n%.c}"); shift ;;
	esac
done
if [ ${#names[@]} -eq 0 ]; then
	for f in "$here"/fuzz_*.c; do
		n=$(basename "$f" .c); names+=("${n#fuzz_}")
	done
fi
CLANG=${FUZZ_CC:-clang}
if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "run.sh: $CLANG not found (apt-get install clang)" >&2
	echo "# PASS: 0"; echo "# FAIL: ${#names[@]}"; exit 1
fi
mkdir -p "$out" && out=$(cd "$out" && pwd)	# absolute: the fuzzers run in $out/run/NAME
srcs=$(find "$top/src" -name '*.c' | sort)
# src/env_hosted.c (the hosted env, which the harnesses use) includes
# configure's "config.h": take the one of the build tree we are run from
# (make fuzz-smoke runs in the build directory; FUZZ_CONFIG_DIR overrides),
# else an in-tree configure's, else an empty one (the env's portable
# fallbacks: CPU hint 0).
cfgdir=${FUZZ_CONFIG_DIR:-}
if [ -z "$cfgdir" ]; then
	if [ -f "$PWD/config.h" ] && [ -f "$PWD/config.status" ]; then cfgdir=$PWD
	elif [ -f "$top/config.h" ]; then cfgdir=$top
	else cfgdir=$out/config; mkdir -p "$cfgdir"; [ -f "$cfgdir/config.h" ] || : > "$cfgdir/config.h"
	fi
fi
# <iommukit/version.h>, as a vendored copy gets it.
mkdir -p "$out/gen/iommukit"
"$top/scripts/gen-version.sh" "$out/gen/iommukit/version.h"
common="-std=c11 -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=all -DIK_DEBUG=1
 -DIK_FUZZ=1 -I$out/gen -I$top/include -I$here -I$cfgdir -Wall -Wextra -Werror"
flags="$common -fsanitize=fuzzer,address,undefined"

# The library's sources, compiled once for every harness (instrumented for
# coverage and the sanitizers: -fsanitize=fuzzer-no-link), into $out/lib;
# rebuilt when a source or header is newer than the last build.
lib=$out/lib
libobjs=
build_lib() {
	local s o
	if [ -f "$lib/.stamp" ] &&
		[ -z "$(find "$top/src" "$top/include" -newer "$lib/.stamp" -name '*.[ch]' | head -1)" ]; then
		libobjs=$(ls "$lib"/*.o)
		return 0
	fi
	rm -rf "$lib" && mkdir -p "$lib" || return 1
	# shellcheck disable=SC2086
	printf '%s\n' $srcs | IK_FZ_CC=$CLANG IK_FZ_FLAGS="$common -fsanitize=fuzzer-no-link,address,undefined" \
		xargs -P "${FUZZ_BUILD_JOBS:-2}" -I{} sh -c \
		'$IK_FZ_CC $IK_FZ_FLAGS -c "$2" -o "$1/$(basename "$2" .c).o"' sh "$lib" {} \
		> "$out/build_lib.log" 2>&1 || return 1
	for s in $srcs; do
		o=$lib/$(basename "$s" .c).o
		[ -f "$o" ] || return 1
		libobjs="$libobjs $o"
	done
	touch "$lib/.stamp"
}
if ! build_lib; then
	echo "FAIL: the library's sources do not build for fuzzing"; sed 's/^/  | /' "$out/build_lib.log" | head -40
	echo "# PASS: 0"; echo "# FAIL: ${#names[@]}"; exit 1
fi

case $par in ''|*[!0-9]*|0) echo "run.sh: --parallel wants a positive number" >&2; exit 2 ;; esac
# One harness: build, replay, fuzz.  Prints one PASS:/FAIL: line (and the
# lines that explain a failure); returns 0 on PASS.
run_one() {
	local n=$1 h bin seeds art work execs cov
	local args
	h=$here/fuzz_$n.c bin=$out/fuzz_$n
	if [ ! -f "$h" ]; then
		echo "FAIL: fuzz_$n: no such harness ($h)"; return 1
	fi
	# Build: the harness, linked with the library's instrumented objects.
	if [ ! -x "$bin" ] || [ -n "$(find "$top/src" "$top/include" "$here" -newer "$bin" -name '*.[ch]' | head -1)" ]; then
		# shellcheck disable=SC2086
		if ! "$CLANG" $flags -o "$bin" "$h" $libobjs -lpthread -lm > "$out/build_$n.log" 2>&1; then
			echo "FAIL: fuzz_$n: build failed"; sed 's/^/  | /' "$out/build_$n.log" | head -40
			return 1
		fi
	fi
	[ "$build_only" = 1 ] && { echo "PASS: fuzz_$n (built)"; return 0; }
	seeds=$top/tests/fuzz/corpus/$n
	art=$out/artifacts/$n
	mkdir -p "$art"
	# Replay the seed corpus: every input once.
	if [ -d "$seeds" ] && [ -n "$(ls -A "$seeds")" ]; then
		if ! "$bin" -runs=1 -error_exitcode=77 "$seeds"/* > "$out/replay_$n.log" 2>&1; then
			echo "FAIL: fuzz_$n: seed corpus replay"; tail -n 30 "$out/replay_$n.log" | sed 's/^/  | /'
			return 1
		fi
	fi
	[ "$replay_only" = 1 ] && { echo "PASS: fuzz_$n (replayed)"; return 0; }
	work=$out/corpus/$n
	mkdir -p "$work"
	args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
	      -artifact_prefix="$art/" "$work")
	[ -d "$seeds" ] && args+=("$seeds")
	[ "$jobs" -gt 1 ] && args=(-jobs="$jobs" -workers="$jobs" "${args[@]}")
	# In a directory of its own: with -jobs, libFuzzer writes each worker's
	# output to ./fuzz-JOB.log and copies it into its own when the worker
	# ends; harnesses run side by side (--parallel) must not share those.
	mkdir -p "$out/run/$n"
	if (cd "$out/run/$n" && exec "$bin" "${args[@]}") > "$out/fuzz_$n.log" 2>&1; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz_$n.log" | tail -1)
		cov=$(grep -Eo 'cov: [0-9]+' "$out/fuzz_$n.log" | tail -1)
		echo "PASS: fuzz_$n (${secs} s, ${execs:-?} execs, ${cov:-cov: ?})"
	else
		echo "FAIL: fuzz_$n: finding in $art:"; ls "$art" | sed 's/^/  | /'
		grep -E 'ERROR|check failed|runtime error|SUMMARY' "$out/fuzz_$n.log" | head -10 | sed 's/^/  | /'
		return 1
	fi
}

# Run the harnesses, $par at a time; each one's report goes to a file and is
# printed in harness order once it is done.
pass=0 fail=0
rep=$out/reports
mkdir -p "$rep"
i=0
for n in "${names[@]}"; do
	rm -f "$rep/$n.out" "$rep/$n.rc"
	(run_one "$n" > "$rep/$n.out" 2>&1; echo $? > "$rep/$n.rc") &
	i=$((i + 1))
	if [ $((i % par)) -eq 0 ]; then wait; fi
done
wait
for n in "${names[@]}"; do
	cat "$rep/$n.out"
	if [ "$(cat "$rep/$n.rc" 2>/dev/null)" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "# PASS: $pass"
echo "# FAIL: $fail"
[ "$fail" -eq 0 ]
