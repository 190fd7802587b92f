# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Sourced by the compile-checking test scripts (headers.sh, freestanding.sh,
# env_contract.sh, batch_frame.sh) after `set -u` and top_srcdir: the
# compilers as make check exports them (else cc and c++), and a temporary
# directory $tmp, removed when the script exits or is interrupted.
: "${CC:=cc}"
: "${CXX:=c++}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
