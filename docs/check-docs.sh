#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# check-docs.sh DOXYFILE LOG: run Doxygen on the public headers and fail on
# any warning (an undocumented public symbol, a comment Doxygen cannot
# read), naming the file, line and symbol of each; then fail on what the
# generated man pages and HTML get wrong without a warning:
#   - a run of three dashes outside a preformatted block: a section ruler
#     ("/* ---- name ---- */") leaking into a declaration's text, or a table
#     (its "-----   -----" underline) reflowed into a paragraph;
#   - a struct page whose name line says "not API" (internal structs stay
#     out of the reference);
#   - an HTML main page (index.html) that does not link every header's page;
#   - a header page without a link page for its functions (man ik_iova_alloc),
#     a link page that shows a page that is not there, or a struct whose man
#     page is a link page of the same name.
# docs/api-docs.md says how to fix each.
set -u
doxyfile=$1 log=$2
: "${DOXYGEN:=doxygen}"
: "${top_srcdir:=.}"
abs_src=$(cd "$top_srcdir" && pwd)
api=$(dirname "$log")
rm -rf "$log" "$api/man" "$api/html"
mkdir -p "$api"
"$DOXYGEN" "$doxyfile" > "$log.out" 2>&1 || { cat "$log.out"; echo "check-docs: doxygen failed"; exit 1; }
[ -f "$log" ] || { echo "check-docs: doxygen wrote no warning log ($log)"; exit 1; }
n=$(grep -c ': warning: ' "$log")
if [ "$n" -ne 0 ]; then
	echo "# PASS: 0"
	echo "# FAIL: 1"
	echo "check-docs: $n Doxygen warning(s); document these (docs/api-docs.md):"
	grep ': warning: ' "$log" | sed -e "s|^$abs_src/||" -e "s|^$PWD/||" -e 's/^/  /' | LC_ALL=C sort -u
	exit 1
fi

man3=$api/man/man3 html=$api/html
defects=$api/defects.txt
: > "$defects"
[ -d "$man3" ] && [ -d "$html" ] || { echo "check-docs: no $man3 or $html"; exit 1; }
# The pages themselves (link pages are one ".so" line).
pages=$(grep -L '^\.so ' "$man3"/*.3)
# Dashes outside .nf/.fi (man) and <pre>...</pre> (HTML).
# shellcheck disable=SC2086
awk 'FNR == 1 { pre = 0 }
	/^\.nf/ { pre = 1 } /^\.fi/ { pre = 0 }
	!pre { l = $0; gsub(/\\-/, "-", l); if (l ~ /---/) print FILENAME ":" FNR ": ruler or reflowed table: " $0 }' \
	$pages >> "$defects"
awk 'FNR == 1 { pre = 0 }
	{
		l = $0
		while (l != "") {
			if (pre) {
				if (!(i = index(l, "</pre>")))
					break
				l = substr(l, i + 6)
				pre = 0
				continue
			}
			i = index(l, "<pre")
			seg = i ? substr(l, 1, i - 1) : l
			if (seg ~ /---/) {
				print FILENAME ":" FNR ": ruler or reflowed table: " substr(seg, 1, 160)
				break
			}
			if (!i)
				break
			l = substr(l, i + 4)
			pre = 1
		}
	}' "$html"/*.html >> "$defects"
# Internal structs: "struct ik_x - not API: ..." on the name line.
# shellcheck disable=SC2086
awk '/^\.SH NAME/ { name = 1; next } name { if ($0 ~ /not API/) print FILENAME ": not-API struct in the reference: " $0; name = 0 }' \
	$pages >> "$defects"
# The main page: a link to every header's page.
groups=0
for g in "$html"/group__*.html; do
	[ -f "$g" ] || continue
	groups=$((groups + 1))
	grep -q "href=\"${g##*/}\"" "$html/index.html" 2>/dev/null ||
		echo "$html/index.html: the main page (docs/mainpage.dox) does not link ${g##*/}" >> "$defects"
done
[ "$groups" -gt 0 ] || echo "$html: no header pages (group__*.html)" >> "$defects"
# Link pages: every function of a header page has its man page, and every
# link page that make install installs (ik_*, IK_*) shows a page that is
# there.
for f in $(sed -n 's/^\.RI "[^"]* \\fB\([a-z_0-9]*\)\\fP (.*/\1/p' "$man3"/iommukit_*.3 | LC_ALL=C sort -u); do
	[ -f "$man3/$f.3" ] || echo "$man3: no man page for $f (MAN_LINKS)" >> "$defects"
done
for f in "$man3"/ik_*.3 "$man3"/IK_*.3; do
	so=$(sed -n '1s/^\.so man3\///p' "$f")
	[ -z "$so" ] || [ -f "$man3/$so" ] || echo "$f: shows man3/$so, which is not made" >> "$defects"
done
# Every struct a header defines has a page, unless the filter's markers
# leave it out ("struct name - not API", a "(not API)" ruler right above).
for n in $(awk '/^[ \t]*$/ { last = "" } /^\/\*|^ \*/ { last = last " " $0 }
		/^struct ik_[a-z0-9_]+ \{/ { if (last !~ /struct ik_[a-z0-9_]+ - not API|\(not API\)/) print $2; last = "" }' \
		"$abs_src"/include/iommukit/*.h "$abs_src"/include/iommukit/*/*.h | LC_ALL=C sort -u); do
	[ -f "$html/struct$(echo "$n" | sed 's/_/__/g').html" ] ||
		echo "$html: no page for struct $n (hidden by a not-API marker meant for another?)" >> "$defects"
done
# A struct's own page, not a link page of the same name written over it.
for h in "$html"/struct*.html; do
	[ -f "$h" ] || continue
	n=$(sed -n 's/.*<title>[^:]*: \(.*\) Struct Reference<\/title>.*/\1/p' "$h")
	[ -n "$n" ] && grep -q '^\.TH ' "$man3/$n.3" 2>/dev/null ||
		echo "$man3/$n.3: not the page of struct $n (${h##*/})" >> "$defects"
done

d=$(wc -l < "$defects")
echo "# PASS: $((d == 0))"
echo "# FAIL: $((d != 0))"
if [ "$d" -ne 0 ]; then
	echo "check-docs: $d defect(s) in the generated reference (docs/api-docs.md):"
	sed -e "s|^$abs_src/||" -e "s|^$PWD/||" -e 's/^/  /' "$defects" | head -40
	exit 1
fi
echo "check-docs: no Doxygen warnings or defects; man pages and HTML in $api"
exit 0
