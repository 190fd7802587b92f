# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Sourced by the compile-checking test scripts (headers.sh, freestanding.sh,
# env_contract.sh, batch_frame.sh, frame_size.sh, fast_path_code.sh) after
# `set -u` and top_srcdir: the compilers as make check exports them (else cc
# and c++), a temporary directory $tmp, removed when the script exits or is
# interrupted, and the helpers below.
: "${CC:=cc}"
: "${CXX:=c++}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# gen_headers: $tmp/gen holds <iommukit/version.h> and a "config.h" (the
# build tree's, $top_builddir, else a stand-in), as a vendored build or the
# hosted env (env_hosted.c includes "config.h") needs them; add -I$tmp/gen.
gen_headers() {
	mkdir -p "$tmp/gen/iommukit" &&
		"$top_srcdir/scripts/gen-version.sh" "$tmp/gen/iommukit/version.h" || exit 1
	if [ -f "${top_builddir:-.}/config.h" ]; then
		cp "${top_builddir:-.}/config.h" "$tmp/gen/config.h"
	else
		echo '#define HAVE_SCHED_GETCPU 1' > "$tmp/gen/config.h"
	fi
}

# skip_without_cc CC N WHAT: where compiler CC is not installed, print TAP
# test N (WHAT) as skipped and return 0; else print nothing and return 1.
skip_without_cc() {
	command -v "$1" > /dev/null 2>&1 && return 1
	echo "ok $2 - $3 # SKIP $1 is not installed"
}
