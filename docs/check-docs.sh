#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# check-docs.sh DOXYFILE LOG BASELINE [--update]: run Doxygen on the public
# headers and fail on every warning that docs/doxygen-baseline.txt does not
# list (a new public symbol, header or comment must document itself without
# warnings); name the file, line and symbol of each.  Baseline entries are
# "path: text", without line numbers; with --update, rewrite the baseline
# from this run.  docs/api-docs.md says how to fix a warning.
set -u
doxyfile=$1 log=$2 baseline=$3 update=${4:-}
: "${DOXYGEN:=doxygen}"
: "${top_srcdir:=.}"
abs_src=$(cd "$top_srcdir" && pwd)
rm -f "$log"
mkdir -p "$(dirname "$log")"
"$DOXYGEN" "$doxyfile" > "$log.out" 2>&1 || { cat "$log.out"; echo "check-docs: doxygen failed"; exit 1; }
# "path:line: warning: text" -> "path: text", paths relative to include/.
norm() {
	grep ': warning: ' "$1" | sed -e "s|^$abs_src/include/||" -e "s|^$PWD/include/||" \
		-e 's|^.*/include/iommukit/|iommukit/|' -e 's|:[0-9]*: warning: |: |' | LC_ALL=C sort -u
}
norm "$log" > "$log.now"
if [ "$update" = --update ]; then
	{ echo "# Known Doxygen warnings (docs/api-docs.md); regenerate with make update-docs-baseline."
	  cat "$log.now"; } > "$baseline"
	echo "check-docs: baseline $baseline: $(wc -l < "$log.now") warnings"
	exit 0
fi
grep -v '^#' "$baseline" | LC_ALL=C sort -u > "$log.base"
new=$(LC_ALL=C comm -23 "$log.now" "$log.base" | wc -l)
gone=$(LC_ALL=C comm -13 "$log.now" "$log.base" | wc -l)
echo "# PASS: $((new == 0))"
echo "# FAIL: $((new != 0))"
if [ "$new" -ne 0 ]; then
	echo "check-docs: $new new Doxygen warning(s); document these (docs/api-docs.md):"
	LC_ALL=C comm -23 "$log.now" "$log.base" | while IFS= read -r w; do
		f=${w%%: *} t=${w#*: }
		grep ': warning: ' "$log" | grep -F "$f:" | grep -F -- "$t" | head -1 |
			sed -e "s|^$abs_src/||" -e 's/^/  /'
	done
	exit 1
fi
echo "check-docs: no new Doxygen warnings ($(wc -l < "$log.now") known, in the baseline);" \
	"man pages and HTML in $(dirname "$log")"
[ "$gone" -eq 0 ] || echo "check-docs: $gone baseline warning(s) fixed: run make update-docs-baseline"
exit 0
