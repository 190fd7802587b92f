#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# check-docs.sh DOXYFILE LOG: run Doxygen on the public headers and fail on
# any warning (an undocumented public symbol, a comment Doxygen cannot
# read), naming the file, line and symbol of each.  docs/api-docs.md says
# how to fix a warning.
set -u
doxyfile=$1 log=$2
: "${DOXYGEN:=doxygen}"
: "${top_srcdir:=.}"
abs_src=$(cd "$top_srcdir" && pwd)
rm -f "$log"
mkdir -p "$(dirname "$log")"
"$DOXYGEN" "$doxyfile" > "$log.out" 2>&1 || { cat "$log.out"; echo "check-docs: doxygen failed"; exit 1; }
[ -f "$log" ] || { echo "check-docs: doxygen wrote no warning log ($log)"; exit 1; }
n=$(grep -c ': warning: ' "$log")
echo "# PASS: $((n == 0))"
echo "# FAIL: $((n != 0))"
if [ "$n" -ne 0 ]; then
	echo "check-docs: $n Doxygen warning(s); document these (docs/api-docs.md):"
	grep ': warning: ' "$log" | sed -e "s|^$abs_src/||" -e "s|^$PWD/||" -e 's/^/  /' | LC_ALL=C sort -u
	exit 1
fi
echo "check-docs: no Doxygen warnings; man pages and HTML in $(dirname "$log")"
exit 0
