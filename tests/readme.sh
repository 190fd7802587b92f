#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# README.md checks, run from the build tree by make check.  Prints TAP.
#  1. Markdown structure: code fences balanced; every table row ("|" at the
#     start of a line, outside code) belongs to a table that a header row and
#     a delimiter row open, with the header's number of cells, and the line
#     after a table is blank or a table row (a paragraph line there would
#     render as one more row).
#  2. Rendered by cmark-gfm (GitHub's renderer; SKIP where it is not
#     installed): as many tables, rows and code blocks as check 1 counted
#     (rows: every line that starts with "|" outside code, but delimiters).
#  3. The program shown after <!-- examples/iova-map.c --> is
#     examples/iova-map.c from its first #include on, and the output shown
#     after <!-- examples/iova-map output --> is what the built program prints.
#  4. The table of page-table formats (the one whose header begins
#     "| format") lists exactly the formats the library has (tests/fmt-list:
#     ik_pt_fmt_count() and ik_pt_fmt_name()), each beside its enumerator,
#     whose value in <iommukit/pgtable.h> is the format's.
#  5. The sample after <!-- iommukit-bench dma sample --> has the column
#     heads and the rows (format, size, mode, in order) that `iommukit-bench
#     dma` prints with its default configurations; the times are not checked.
#  6. The table of headers (the one whose header begins "| header") names
#     every public header, by its path under include/iommukit/ or its folder.
set -u
: "${top_srcdir:=.}"
readme=$top_srcdir/README.md
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
show() { sed 's/^/# /' "$1"; }
echo "1..6"

# The fenced block after the line "<!-- NAME -->", without its fences.
block() {
	awk -v mark="<!-- $1 -->" '
		$0 == mark { want = 1; next }
		want == 1 && /^```/ { want = 2; next }
		want == 2 && /^```/ { exit }
		want == 2 { print }' "$readme"
}

# ---- 1. structure
awk '
function cells(s,   t) {
	t = s; gsub(/\\\|/, "", t); sub(/^ *\|/, "", t); sub(/\| *$/, "", t)
	return gsub(/\|/, "|", t) + 1
}
function bad(msg) { printf "README.md:%d: %s\n", at, msg; errs++ }
{ line[NR] = $0; last = NR }
END {
	fence = ""; intable = 0
	for (i = 1; i <= last; i++) {
		at = i; l = line[i]
		if (fence != "") {
			if (l ~ "^ ? ? ?" fence "+ *$") fence = ""
			continue
		}
		if (l ~ /^ ? ? ?(```|~~~)/) {
			if (intable) bad("code fence right after a table row")
			intable = 0; fence = substr(l, match(l, /[`~]/), 3); blocks++; open = i
			continue
		}
		if (l ~ /^ *\|/) {
			if (intable) {
				if (cells(l) != cols) bad("table row with " cells(l) " cells, the header has " cols)
				rows++
			} else if (i < last && line[i + 1] ~ /^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$/ &&
				   line[i + 1] ~ /\|/) {
				cols = cells(l)
				if (cells(line[i + 1]) != cols) { at = i + 1; bad("delimiter row does not match the header") }
				intable = 1; tables++; rows++; i++
			} else {
				bad("table row outside a table (a paragraph or blank line above it?)")
				rows++
			}
			continue
		}
		if (intable && l !~ /^ *$/)
			bad("text right after a table row (renders as another row)")
		intable = 0
	}
	if (fence != "") { at = open; bad("code fence opened here is never closed") }
	printf "%d %d %d\n", tables + 0, rows + 0, blocks + 0 > "/dev/stderr"
	exit errs > 0
}' "$readme" > "$tmp/struct" 2> "$tmp/counts"
if [ $? -eq 0 ]; then
	ok "README.md: fences balanced, every table row in a well-formed table ($(cat "$tmp/counts") tables/rows/blocks)"
else
	no "README.md structure"; show "$tmp/struct"
fi

# ---- 2. rendered
if command -v cmark-gfm > /dev/null 2>&1; then
	cmark-gfm -e table "$readme" > "$tmp/html"
	set -- $(cat "$tmp/counts")
	t=$(grep -c '<table>' "$tmp/html")
	r=$(grep -c '<tr>' "$tmp/html")
	b=$(grep -c '<pre>' "$tmp/html")
	if [ "$t" -eq "$1" ] && [ "$r" -eq "$2" ] && [ "$b" -eq "$3" ]; then
		ok "cmark-gfm renders $t tables, $r rows, $b code blocks"
	else
		no "cmark-gfm renders $t tables, $r rows, $b code blocks; the source has $1, $2, $3"
	fi
else
	skip "README.md rendered by cmark-gfm" "cmark-gfm not installed (apt-get install cmark-gfm)"
fi

# ---- 3. the example program and its output
block examples/iova-map.c > "$tmp/shown.c"
sed -n '/^#include/,$p' "$top_srcdir/examples/iova-map.c" > "$tmp/file.c"
block "examples/iova-map output" > "$tmp/shown.out"
if ./examples/iova-map > "$tmp/run.out" 2>&1 && [ -s "$tmp/shown.c" ] &&
   cmp -s "$tmp/shown.c" "$tmp/file.c" && cmp -s "$tmp/shown.out" "$tmp/run.out"; then
	ok "README.md shows examples/iova-map.c as it is, and what it prints"
else
	no "README.md's examples/iova-map.c and its output"
	diff -u "$tmp/file.c" "$tmp/shown.c" | sed 's/^/# /'
	diff -u "$tmp/run.out" "$tmp/shown.out" | sed 's/^/# /'
fi

# ---- 4. the formats
awk -F'|' '/^\| *format/ { t = 1; next } t && /^\|/ { if ($2 !~ /---/) print $2, $3; next } t { exit }' \
	"$readme" | tr -d '`' | awk '{ print $1, $2 }' > "$tmp/fmt.readme"
./tests/fmt-list > "$tmp/fmt.lib" 2>&1
: > "$tmp/fmt.err"
while read -r val name; do
	grep -q "^$name " "$tmp/fmt.readme" || echo "format $name ($val) is not in the table" >> "$tmp/fmt.err"
done < "$tmp/fmt.lib"
while read -r name enum; do
	val=$(sed -n "s/^[[:space:]]*$enum = \([0-9]*\),.*/\1/p" "$top_srcdir/include/iommukit/pgtable.h")
	grep -qx "$val $name" "$tmp/fmt.lib" ||
		echo "row $name $enum: $enum is ${val:-not in pgtable.h}, the library has no format $name there" \
			>> "$tmp/fmt.err"
done < "$tmp/fmt.readme"
if [ -s "$tmp/fmt.lib" ] && [ ! -s "$tmp/fmt.err" ]; then
	ok "the table of formats lists the library's $(wc -l < "$tmp/fmt.lib") formats"
else
	no "the table of formats"; show "$tmp/fmt.err"
fi

# ---- 5. the dma sample's configurations
rows() { awk '/^[a-z0-9\/-]+ +[0-9]+[KMG] +(strict|deferred) / { print $1, $2, $3; next }
	      /^ *\|/ || /^format / { print }' "$1"; }
block "iommukit-bench dma sample" > "$tmp/dma.readme"
if ./iommukit-bench dma --iterations 3 > "$tmp/dma.run" 2>&1; then
	rows "$tmp/dma.readme" > "$tmp/dma.a"
	rows "$tmp/dma.run" > "$tmp/dma.b"
	if [ -s "$tmp/dma.a" ] && cmp -s "$tmp/dma.a" "$tmp/dma.b"; then
		ok "the dma sample has the tool's $(grep -c ' \(strict\|deferred\)$' "$tmp/dma.b") rows and column heads"
	else
		no "the dma sample differs from what iommukit-bench dma prints (rows, heads)"
		diff -u "$tmp/dma.b" "$tmp/dma.a" | sed 's/^/# /'
	fi
else
	no "iommukit-bench dma --iterations 3"; show "$tmp/dma.run"
fi

# ---- 6. the headers
awk -F'|' '/^\| *header/ { t = 1; next } t && /^\|/ { print $2; next } t { exit }' "$readme" \
	> "$tmp/hdr.readme"
: > "$tmp/hdr.err"
for h in $(cd "$top_srcdir/include/iommukit" && find . -name '*.h' -o -name '*.h.in' | sed 's|^\./||; s|\.in$||' | sort); do
	d=${h%/*}
	grep -q "\`$h\`" "$tmp/hdr.readme" || { [ "$d" != "$h" ] && grep -q "\`$d/\`" "$tmp/hdr.readme"; } ||
		echo "include/iommukit/$h is not in the table of headers" >> "$tmp/hdr.err"
done
if [ ! -s "$tmp/hdr.err" ]; then ok "the table of headers names every public header"; else
	no "the table of headers"; show "$tmp/hdr.err"; fi

[ "$fails" -eq 0 ]
