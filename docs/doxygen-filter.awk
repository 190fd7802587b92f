# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Doxygen INPUT_FILTER for iommukit's public headers: the headers keep their
# plain kernel-doc-like comments, and Doxygen reads them as documentation.
#   - the first block comment after the SPDX line documents the header, as
#     a Doxygen group named for its path (iommukit/cmd/vtd.h: group
#     iommukit_cmd_vtd, man page iommukit_cmd_vtd(3)) that holds everything
#     the header declares: one page per header, per function family;
#   - any other comment that starts a line documents what follows it; when
#     several declarations (#define, IK_API, IK_INLINE, typedef at the start of a
#     line) follow one comment without a blank line or another comment
#     between them, the comment documents each of them (its text is repeated
#     before each declaration after the first that has no comment of its
#     own); conditionals ("#ifndef name" around a default) do not end the
#     span;
#   - a comment after code on the same line documents that line's member
#     (/**< ... */); a line that declares several names ("ik_u32 a, b;")
#     documents each of them with that comment, or with the comment above
#     it when it has none;
#   - section rulers ("/* ---- name ---- */", "/* ------- name */") and
#     "not API" notes stay comments; a one-line ruler right above a
#     declaration documents it (without the dashes); a ruler that says
#     "not API" hides the block right below it, up to a blank line (\cond), and so does
#     "struct name - not API" the struct it documents;
#   - a run of indented lines in a doc comment (tables, aligned lists) is
#     preformatted (<pre>) unless it starts with "- " (a list); a "- " that
#     starts a line that is not indented is a dash ("\-"), not a list item.
# One output line per input line, so Doxygen's warnings name real lines.
function is_decl(l) { return l ~ /^(#[ \t]*define[ \t]|IK_API[ \t]|IK_INLINE[ \t]|typedef[ \t])/ }
function is_comment_start(l) { return l ~ /^[ \t]*\/\*/ }
# A struct member line: "type name[, name...];" indented, no initialiser
# and no statement (inline function bodies are never fields).
function is_field(l) {
	return l ~ /^[ \t]+(const[ \t]+)?(struct|union|enum|unsigned|signed|bool|char|int|long|short|void|ik_[a-z0-9_]+)[ \t*]/ &&
		l ~ /;/ && l !~ /=|^[ \t]+return[ \t;]/
}
# A struct's comment that lists its fields ("  name, name2   what it is",
# continued on deeper-indented lines; or "  name(args)" with the text on
# the lines below) gives each of those fields its text: fdesc[name].
function field_table(   i, l, ind, cur, k, n, names, key, body, m) {
	split("", fdesc)
	cur = ""
	for (i = 1; i <= ncraw; i++) {
		l = craw[i]
		if (l !~ /^[ \t]*\*[ \t]/ || l ~ /^[ \t]*\*\/?[ \t]*$/) {
			cur = ""
			continue
		}
		sub(/^[ \t]*\*/, "", l)
		sub(/\*\/[ \t]*$/, "", l)
		match(l, /^[ \t]*/)
		ind = RLENGTH
		body = substr(l, ind + 1)
		if (match(body, /^[a-z_][a-z0-9_]*(, *[a-z_][a-z0-9_]*)*[ \t][ \t]+[^ \t]/) ||
		    match(body, /^[a-z_][a-z0-9_]*\([^)]*\)((:[ \t]|[ \t][ \t]).*)?$/) ||
		    match(body, /^[a-z_][a-z0-9_]*:[ \t]+[^ \t]/) || match(body, /^[a-z_][a-z0-9_]*[ \t]*$/)) {
			key = body
			sub(/[( \t].*$/, "", key)
			if (body ~ /^[a-z_][a-z0-9_]*:/) {
				sub(/:.*$/, "", key)
				sub(/^[^:]*:[ \t]+/, "", body)
			} else if (body ~ /^[a-z_][a-z0-9_]*\(/) {
				if (!sub(/^[^)]*\):?[ \t]+/, "", body))
					body = ""
			} else {
				m = body
				sub(/[ \t][ \t].*$/, "", m)
				key = m
				body = substr(body, length(m) + 1)
				sub(/^[ \t]+/, "", body)
			}
			gsub(/ /, "", key)
			cur = key
			cind = ind
			ftext[cur] = body
			continue
		}
		if (cur != "" && ind > cind) {
			sub(/[ \t]+$/, "", body)
			ftext[cur] = ftext[cur] == "" ? body : ftext[cur] " " body
			continue
		}
		cur = ""
	}
	for (key in ftext) {
		sub(/[;,][ \t]*$/, "", ftext[key])
		n = split(key, names, ",")
		for (k = 1; k <= n; k++)
			fdesc[names[k]] = ftext[key]
	}
	split("", ftext)
}
# A field line of a struct whose comment has a field table: each name gets
# its entry's text (fields with a comment of their own keep it).
function table_field(l,   semi, n, names, docs, i, nm, any) {
	if (l ~ /\/\*/)
		return l
	if (l ~ /^[ \t]+[^\/=]*\(\*[ \t]*[a-z_]/) {
		nm = l
		sub(/^[^(]*\(\*[ \t]*/, "", nm)
		sub(/[^a-z0-9_].*$/, "", nm)
		return nm in fdesc ? "/** " fdesc[nm] " */ " l : l
	}
	semi = index(l, ";")
	if (!is_field(l) || !(n = decl_names(substr(l, 1, semi - 1), names)))
		return l
	any = 0
	for (i = 1; i <= n; i++) {
		nm = names[i]
		sub(/^\**/, "", nm)
		sub(/\[.*$/, "", nm)
		docs[i] = nm in fdesc ? fdesc[nm] : ""
		any = any || docs[i] != ""
	}
	return any ? rejoin(n, names, docs) substr(l, semi + 1) : l
}
# Print the span buffered after a doc comment (text: ctext): each
# declaration after the first without a comment of its own gets the
# comment's text: #define/IK_API/IK_INLINE at brace depth 0 after a
# comment at the start of a line, struct fields after a comment inside a
# struct.  Returns term, the line that ended the span.
function flush(term,   i, l, n, depth, inner, fld) {
	print closer
	inner = opener ~ /^[ \t]/
	n = 0
	depth = 0
	if (!inner)
		field_table()
	for (i = 1; i <= nbuf; i++) {
		fld = inner && depth == 0 && is_field(buf[i])
		l = member(buf[i], fld ? ctext : "")
		if (!inner && depth == 1 && l == buf[i])
			l = table_field(buf[i])
		if (depth == 0 && (fld || !inner && is_decl(buf[i])) && ++n > 1 && ctext != "" && buf[i] !~ /\/\*/)
			l = "/** " ctext " */ " l
		depth += gsub(/\{/, "{", buf[i]) - gsub(/\}/, "}", buf[i])
		print l
	}
	nbuf = 0
	closer = ""
	grouping = 0
	ctext = ""
	return term
}
# A field list continued on the next line ("bool a, b,\n\tc, d;"): the
# first line ends with ';' and the next gets the type, so that each line
# declares its own names.
function continue_fields(l,   t) {
	if (cont_type != "") {
		t = l
		sub(/^[ \t]+/, "", t)
		l = cont_ind cont_type " " t
		cont_type = ""
	}
	if (l ~ /^[ \t]+(bool|unsigned|ik_u[0-9]+)[ \t][^(){}=;\/]*,[ \t]*(\/\*.*\*\/[ \t]*)?$/) {
		cont_ind = l
		sub(/[^ \t].*$/, "", cont_ind)
		t = l
		sub(/^[ \t]+/, "", t)
		match(t, /^(unsigned|bool|ik_u[0-9]+)/)
		cont_type = substr(t, 1, RLENGTH)
		t = index(l, "/*") ? substr(l, index(l, "/*")) : ""
		l = t == "" ? l : substr(l, 1, index(l, "/*") - 1)
		sub(/,[ \t]*$/, ";", l)
		l = t == "" ? l : l " " t
	}
	return l
}
# The text of a comment line, without its delimiters and leading stars.
function comment_text(l) {
	sub(/^[ \t]*\/\*+/, "", l)
	sub(/\*\/.*$/, "", l)
	sub(/^[ \t]*\*+[ \t]?/, "", l)
	gsub(/^[ \t]+|[ \t]+$/, "", l)
	return l
}
function add_text(l,   t) {
	craw[++ncraw] = l
	t = comment_text(l)
	if (t != "")
		ctext = ctext == "" ? t : ctext " " t
}
# Split the declaration "type a, *b, c[4]" (no ';') into names[1..n]
# (pointer stars and array bounds kept); dind and dtype get its indentation
# and its type.  Returns n, or 0 when the type cannot be told apart.
function decl_names(decl, names,   n, i, t) {
	n = split(decl, names, ",")
	dind = names[1]
	sub(/[^ \t].*$/, "", dind)
	t = names[1]
	sub(/^[ \t]+/, "", t)
	if (!match(t, /[* \t]*[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?[ \t]*$/))
		return 0
	names[1] = substr(t, RSTART)
	dtype = substr(t, 1, RSTART - 1)
	sub(/[ \t]+$/, "", dtype)
	for (i = 1; i <= n; i++) {
		sub(/^[ \t]+/, "", names[i])
		sub(/[ \t]+$/, "", names[i])
	}
	return n
}
# One declaration per name on one line: "type a; /**< docs[1] */ type *b; ...".
function rejoin(n, names, docs,   i, out) {
	out = dind
	for (i = 1; i <= n; i++)
		out = out (i > 1 ? " " : "") dtype " " names[i] ";" (docs[i] == "" ? "" : " /**< " docs[i] " */")
	return out
}
# "type a, *b, c[4]; /* text */" -> "type a; /**< text */ type *b; ..."
# (one line still); txt documents the names when the line has no comment of
# its own (except the first, which the comment above documents).  Lines with
# parentheses, braces or initialisers are left alone.
function split_names(l, txt,   semi, decl, rest, own, n, names, docs, i) {
	semi = index(l, ";")
	if (!semi)
		return l
	decl = substr(l, 1, semi - 1)
	rest = substr(l, semi + 1)
	if (decl !~ /,/ || decl ~ /[(){}=]/ || decl ~ /^[ \t]*(#|\/\*|\*)/ || rest ~ /[^ \t]/ && rest !~ /^[ \t]*\/\*/)
		return l
	own = rest ~ /\/\*.*\*\// ? comment_text(rest) : ""
	if (rest ~ /\/\*/ && own == "")
		return l	# multi-line trailing comment: left to the author
	if (own != "")
		txt = own
	if (txt == "" || !(n = decl_names(decl, names)))
		return l
	for (i = 1; i <= n; i++)
		docs[i] = i > 1 || own != "" ? txt : ""
	return rejoin(n, names, docs)
}
# A comment after code on the same line documents that line.
function member(l, txt,   s) {
	s = split_names(l, txt)
	if (s != l)
		return s
	# (not on a forward declaration, which Doxygen would pass it on from)
	if (l ~ /[^ \t\/][ \t]*\/\*[^*]/ && l !~ /^[ \t]*#[ \t]*(if|endif|else|elif)/ &&
	    l !~ /^[ \t]*(struct|union)[ \t]+[A-Za-z_0-9]+[ \t]*;/)
		sub(/\/\*/, "/**<", l)
	return l
}
# A comment line's text after its star prefix, or "\n" when it is not a
# " * text" line (code, the closing " */", a continuation without a star).
function star_body(l) {
	if (l !~ /^[ \t]*\*([ \t]|$)/ || l ~ /^[ \t]*\*\//)
		return "\n"
	sub(/^[ \t]*\*/, "", l)
	return l
}
# An indented line (" *   text"): part of a table, a list or a layout the
# author aligned by hand.
function is_indented(l,   t) {
	t = star_body(l)
	return t != "\n" && t ~ /^[ \t][ \t]+[^ \t]/
}
# The layout of a doc comment's line l (input line FNR), which Doxygen
# would otherwise reflow: a run of indented lines is preformatted
# ("<pre>" after the first line's star, "</pre>" at the end of the last)
# unless it starts with "- " (an indented list, which Doxygen renders as
# one); "- " at the start of a line that is not indented is a dash in a
# sentence, not a list item ("\-").
function layout(l,   i, last) {
	if (!is_indented(all[FNR])) {
		run = 0
		if (star_body(all[FNR]) ~ /^ - / && (i = index(l, "* - ")))
			l = substr(l, 1, i + 1) "\\" substr(l, i + 2)
		return l
	}
	if (!run) {
		run = star_body(all[FNR]) ~ /^[ \t]+- / ? 2 : 1
		if (run == 1)
			sub(/\*/, "*<pre>", l)
	} else if (run == 1 && match(l, /^[ \t]*\*[ \t]+- /)) {
		# (Doxygen reads lists inside <pre> too.)
		i = RSTART + RLENGTH - 2
		l = substr(l, 1, i - 1) "\\" substr(l, i)
	}
	last = l ~ /\*\// || !is_indented(all[FNR + 1])
	if (last && run == 1) {
		if (!sub(/\*\//, "</pre> */", l))
			l = l "</pre>"
	}
	if (last)
		run = 0
	return l
}
# The text of the comment that starts at input line n, on one line.
function comment_at(n,   t, i) {
	t = ""
	for (i = n; i <= nall; i++) {
		t = t " " comment_text(all[i])
		if (all[i] ~ /\*\// && (i > n || all[i] ~ /\/\*.*\*\//))
			break
	}
	gsub(/[ \t]+/, " ", t)
	sub(/^ /, "", t)
	return t
}
BEGIN { seen_file = 0; in_comment = 0; nbuf = 0; grouping = 0; closer = ""; ctext = ""; plain = 0; file_cmt = 0
	run = 0; hide_section = 0; hide_struct = 0; cond = "/** \\cond IK_INTERNAL */"; endcond = "/** \\endcond */" }
# The whole file, for looking ahead (Doxygen runs "awk -f filter.awk FILE").
FNR == 1 { nall = 0; while ((getline all_line < FILENAME) > 0) all[++nall] = all_line; close(FILENAME) }
function group_name(   p) {
	p = FILENAME
	sub(/.*\/include\//, "", p)
	hdr = p
	sub(/\.h$/, "", p)
	gsub(/[\/.-]/, "_", p)
	return p
}
{
	line = in_comment ? $0 : continue_fields($0)
	# "#if", "#error", "name##_x" in prose are words, not Doxygen links.
	if ((in_comment || line ~ /^[ \t]*\/\*/) && line !~ /SPDX-License-Identifier/)
		gsub(/#/, "\\#", line)
	if (in_comment) {
		if (!plain && !file_cmt)
			add_text(line)
		if (!plain)
			line = layout(line)
		if (line ~ /\*\//) {
			in_comment = 0
			run = 0
			if (file_cmt) { file_cmt = 0; print line " /** @{ */"; next }
			if (!plain) { closer = line; grouping = 1; next }
		}
		print line
		next
	}
	if (grouping) {
		if (line ~ /^[ \t]*$/ || is_comment_start(line)) {
			line = flush(line)
		} else {
			buf[++nbuf] = line
			next
		}
	}
	if (line ~ /SPDX-License-Identifier/) { print line; next }
	# A section ruler ("/* ---- name ---- */", "/* ------- name */") is a
	# plain comment; one that says "not API" hides the block right below it
	# (up to the next blank line) from the reference.
	if (line ~ /^\/\*[ \t]*---/) {
		t = hide_section ? endcond " " : ""
		hide_section = comment_at(FNR) ~ /not API/
		# A one-line ruler right above a declaration or a conditional
		# ("/* ---- second-level entry bits ---- */" over its #defines)
		# documents that block, with its dashes removed.
		if (!hide_section && line ~ /\*\/[ \t]*$/ && (is_decl(all[FNR + 1]) || all[FNR + 1] ~ /^#/)) {
			sub(/^\/\*[ \t]*-+[ \t]*/, "/** ", line)
			sub(/[ \t]*-*[ \t]*\*\/[ \t]*$/, " */", line)
			opener = line
			ctext = ""
			ncraw = 0
			add_text(line)
			closer = t line
			grouping = 1
			next
		}
		line = t (hide_section ? cond " " : "") line
		if (line !~ /\*\//) { in_comment = 1; plain = 1 }
		print line
		next
	}
	# A "not API" ruler hides the block right below it, up to a blank line.
	if (hide_section && line ~ /^[ \t]*$/) {
		hide_section = 0
		print endcond
		next
	}
	# The end of a struct hidden below.
	if (hide_struct && line ~ /^\}/) {
		hide_struct = 0
		print line " " endcond
		next
	}
	if (line ~ /^[ \t]*\/\*[^*]/ || line ~ /^[ \t]*\/\*$/) {
		plain = (line ~ /^[ \t]*\/\*[ \t]*[Nn]ot API/)
		# "struct name - not API: ...": that struct is not in the reference.
		if (line ~ /^\/\*/ && comment_at(FNR) ~ /^struct [A-Za-z_0-9]+ - not API/) {
			plain = 1
			if (!hide_section) {
				hide_struct = 1
				line = cond " " line
			}
		}
		if (!plain) {
			if (!seen_file) {
				seen_file = 1
				file_cmt = 1
				sub(/\/\*/, "/** \\defgroup " group_name() " " hdr "\n", line)
				sub(/\n/, "", line)
			} else {
				sub(/\/\*/, "/**", line)
				opener = line
				ctext = ""
				ncraw = 0
				add_text(line)
			}
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
	print member(line, "")
}
END {
	if (grouping) { t = flush(""); if (t != "") print t }
	if (hide_section) print endcond
	if (seen_file) print "/** @} */"
}
