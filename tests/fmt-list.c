/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fmt-list: one line per page-table format built into the library, "VALUE
 * NAME" (1 lpae-s1), from ik_pt_fmt_count() and ik_pt_fmt_name().
 * tests/readme.sh checks README.md's table of formats against it.
 */
#include <stdio.h>
#include <iommukit/pgtable.h>

int main(void)
{
	for (unsigned f = 1; f <= ik_pt_fmt_count(); f++)
		if (ik_pt_fmt_name((enum ik_pt_fmt)f))
			printf("%u %s\n", f, ik_pt_fmt_name((enum ik_pt_fmt)f));
	return 0;
}
