/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The table-driven field codec behind the SMMUv3 and VT-d encoders (see
 * src/cmd/cmd_codec.h).  Pure functions.
 */
#include <iommukit/env.h>
#include "cmd_codec.h"

int ik_codec_encode(const struct ik_field *tab, unsigned n, unsigned op, const void *base,
		     ik_u64 *w)
{
	unsigned i, j;

	for (i = 0; i < n; i++) {
		const struct ik_field *f = &tab[i];
		ik_u64 v = ik_member_get(base, f), covered = 0;
		bool used = false;

		/* First piece of this member in the table decides once. */
		for (j = 0; j < i; j++)
			if (tab[j].off == f->off)
				break;
		if (j < i)
			continue;
		for (j = i; j < n; j++) {
			if (tab[j].off != f->off || tab[j].op != op)
				continue;
			used = true;
			covered |= IK_FMASK(tab[j].width) << tab[j].shift;
			ik_bits_set(w, tab[j].lsb, tab[j].width, v >> tab[j].shift);
		}
		if (!used)
			covered = 0;
		if (v & ~covered)
			return -EINVAL;
	}
	return 0;
}

int ik_codec_decode(const struct ik_field *tab, unsigned n, unsigned op, const ik_u64 *w,
		     unsigned nw, const ik_u64 *opmask, void *base)
{
	ik_u64 defined[4] = { 0, 0, 0, 0 };
	unsigned i;

	for (i = 0; i < nw && i < 4; i++)
		defined[i] = opmask[i];
	for (i = 0; i < n; i++) {
		const struct ik_field *f = &tab[i];

		if (f->op != op)
			continue;
		defined[f->lsb / 64] |= IK_FMASK(f->width) << (f->lsb % 64);
		ik_member_or(base, f, ik_bits_get(w, f->lsb, f->width) << f->shift);
	}
	for (i = 0; i < nw; i++)
		if (w[i] & ~defined[i])
			return -EINVAL;
	return 0;
}
