# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Doxygen INPUT_FILTER for iommukit's public headers: the headers keep their
# plain kernel-doc-like comments, and Doxygen reads them as documentation.
#   - the first block comment after the SPDX line documents the header, as
#     a Doxygen group named for its path (iommukit/cmd/vtd.h: group
#     iommukit_cmd_vtd, man page iommukit_cmd_vtd(3)) that holds everything
#     the header declares: one page per header, per function family;
#   - any other comment that starts a line documents what follows it; when
#     several declarations (#define, IK_API, IK_INLINE at the start of a
#     line) follow one comment without a blank line or another comment
#     between them, the comment documents each of them (a Doxygen member
#     group, with DISTRIBUTE_GROUP_DOC);
#   - a comment after code on the same line documents that line's member
#     (/**< ... */);
#   - section rulers ("/* ----- name */") and "not API" notes stay comments.
# One output line per input line, so Doxygen's warnings name real lines.
function is_decl(l) { return l ~ /^(#[ \t]*define[ \t]|IK_API[ \t]|IK_INLINE[ \t])/ }
function is_comment_start(l) { return l ~ /^[ \t]*\/\*/ }
# Print the span buffered after a doc comment; wrap it in a group when it
# holds more than one declaration.  The group closes on the line that ended
# the span (term; "" at the end of the file), which flush returns.
function flush(term,   i, n, grp) {
	n = 0
	for (i = 1; i <= nbuf; i++)
		if (is_decl(buf[i]))
			n++
	grp = n > 1 && closer ~ /\*\/[ \t]*$/
	if (grp)
		sub(/\*\/[ \t]*$/, "*/ /** @{ */", closer)
	print closer
	for (i = 1; i <= nbuf; i++)
		print member(buf[i])
	nbuf = 0
	closer = ""
	grouping = 0
	if (!grp)
		return term
	if (term ~ /^[ \t]*#/)
		return term " /** @} */"
	return "/** @} */ " term
}
# A comment after code on the same line documents that line.
function member(l) {
	if (l ~ /[^ \t\/][ \t]*\/\*[^*]/ && l !~ /^[ \t]*#[ \t]*(if|endif|else|elif)/)
		sub(/\/\*/, "/**<", l)
	return l
}
BEGIN { seen_file = 0; in_comment = 0; nbuf = 0; grouping = 0; closer = ""; plain = 0; file_cmt = 0 }
function group_name(   p) {
	p = FILENAME
	sub(/.*\/include\//, "", p)
	hdr = p
	sub(/\.h$/, "", p)
	gsub(/[\/.-]/, "_", p)
	return p
}
{
	line = $0
	if (in_comment) {
		if (line ~ /\*\//) {
			in_comment = 0
			if (file_cmt) { file_cmt = 0; print line " /** @{ */"; next }
			if (!plain) { closer = line; grouping = 1; next }
		}
		print line
		next
	}
	if (grouping) {
		if (line ~ /^[ \t]*$/ || is_comment_start(line) || line ~ /^[ \t]*#[ \t]*(if|endif|else|elif)/) {
			line = flush(line)
		} else {
			buf[++nbuf] = line
			next
		}
	}
	if (line ~ /SPDX-License-Identifier/ || line ~ /^[ \t]*\/\*[ \t]*-----/) { print line; next }
	if (line ~ /^[ \t]*\/\*[^*]/ || line ~ /^[ \t]*\/\*$/) {
		plain = (line ~ /^[ \t]*\/\*[ \t]*[Nn]ot API/)
		if (!plain) {
			if (!seen_file) {
				seen_file = 1
				file_cmt = 1
				sub(/\/\*/, "/** \\defgroup " group_name() " " hdr "\n", line)
				sub(/\n/, "", line)
			} else sub(/\/\*/, "/**", line)
		}
		if (line !~ /\*\//) { in_comment = 1; print line; next }
		if (file_cmt) { file_cmt = 0; print line " /** @{ */"; next }
		if (plain) { print line; next }
		closer = line; grouping = 1
		next
	}
	if (line ~ /\/\*/ && line !~ /\*\// && line !~ /[^ \t\/][ \t]*\/\*[^*]/)
		in_comment = 1
	else if (line ~ /\/\*/ && line !~ /\*\//) {
		in_comment = 1; plain = 1
	}
	print member(line)
}
END {
	if (grouping) { t = flush(""); if (t != "") print t }
	if (seen_file) print "/** @} */"
}
