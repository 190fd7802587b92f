#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# check-abi.sh LIB BASELINE HEADERS-DIR... [--suppressions FILE] [--update]:
# compare the ABI of the built shared library LIB (with its debug
# information) against the committed baseline BASELINE (abigail XML, the
# last release's abi/libiommukit-RELEASE.abi) with abidiff, looking only at
# what the public headers in HEADERS-DIR declare, less the changes FILE
# (abi/accepted.abignore: abidiff suppressions) accepts on purpose.
# Fails on an incompatible change (abidiff's ABIDIFF_ABI_INCOMPATIBLE_CHANGE
# bit, 8: a symbol removed), on any change to an existing function's or
# type's ABI (bit 4 once added symbols are left out: a type changed in size
# or layout, a parameter changed), or an abidiff error; new functions pass
# and are listed.  With --update, write BASELINE from LIB (make
# update-abi-baseline, at a release only; docs/versioning.md).
set -u
: "${ABIDW:=abidw}" "${ABIDIFF:=abidiff}"
lib=$1 baseline=$2; shift 2
hdirs= update=0 supp= next=
for a in "$@"; do
	if [ "$next" = supp ]; then supp="--suppressions $a"; next=; continue; fi
	case $a in
	--update) update=1 ;;
	--suppressions) next=supp ;;
	*) hdirs="$hdirs --headers-dir $a" ;;
	esac
done
command -v "$ABIDIFF" > /dev/null 2>&1 && command -v "$ABIDW" > /dev/null 2>&1 ||
	{ echo "check-abi: abidw/abidiff not found (apt-get install abigail-tools)"; exit 1; }
[ -f "$lib" ] || { echo "check-abi: no $lib (a shared build is needed)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# shellcheck disable=SC2086
"$ABIDW" $hdirs --drop-private-types --no-corpus-path --no-comp-dir-path --no-show-locs \
	"$lib" > "$tmp/raw.abi" || { echo "check-abi: abidw failed"; exit 1; }
# Translation units by their path in the tree, not where it was checked out.
sed "s|path='[^']*/src/|path='src/|" "$tmp/raw.abi" > "$tmp/now.abi"
if [ "$update" -eq 1 ]; then
	cp "$tmp/now.abi" "$baseline"
	echo "check-abi: baseline $baseline rewritten ($(grep -c '<elf-symbol' "$baseline") symbols)"
	exit 0
fi
# shellcheck disable=SC2086
"$ABIDIFF" --no-added-syms $supp "$baseline" "$tmp/now.abi" > "$tmp/diff" 2>&1
rc=$?
# shellcheck disable=SC2086
"$ABIDIFF" $supp "$baseline" "$tmp/now.abi" > "$tmp/full" 2>&1
# With added symbols left out, any change is a failure: bit 8 (a symbol
# removed), and bit 4 too, which abidiff also sets for a changed type (a
# field added to a struct the caller allocates changes its size).
if [ "$rc" -ne 0 ]; then
	echo "# PASS: 0"
	echo "# FAIL: 1"
	echo "check-abi: incompatible ABI change against $baseline (abidiff exit $rc):"
	sed 's/^/  /' "$tmp/diff"
	echo "check-abi: a break on purpose (a new minor release, in 0.x) is accepted in abi/accepted.abignore; see docs/versioning.md"
	exit 1
fi
echo "# PASS: 1"
echo "# FAIL: 0"
added=$(grep -cE "^[[:space:]]+\[A\]" "$tmp/full")
echo "check-abi: compatible with $baseline ($(grep -c '<elf-symbol' "$tmp/now.abi") symbols, $added added)${supp:+, less what ${supp#--suppressions } accepts}"
grep -E "^[[:space:]]+\[A\]" "$tmp/full" | sed 's/^/  added:/'
exit 0
