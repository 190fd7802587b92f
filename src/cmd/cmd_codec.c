/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The table-driven field codec behind the SMMUv3 and VT-d encoders (see
 * src/cmd/cmd_codec.h).  Pure functions.
 */
#include <iommukit/env.h>
#include <iommukit/atomic.h>
#include "cmd_codec.h"

int ik_codec_encode_table(const struct ik_field *tab, unsigned n, unsigned op,
			  const void *base, ik_u64 *w)
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

int ik_codec_decode_table(const struct ik_field *tab, unsigned n, unsigned op,
			  const ik_u64 *w, unsigned nw, const ik_u64 *opmask, void *base)
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

/* ---- the plan ---- */

/* OR `v` into member f of the struct image `img` (IK_CODEC_MAX_SIZE bytes
 * kept as 64-bit words), in the member's own type and byte order.  Through
 * memcpy: the image's words are not of the member's type. */
static void image_or(ik_u64 *img, const struct ik_field *f, ik_u64 v)
{
	char *p = (char *)img + f->off;
	ik_u8 b;
	ik_u16 h;
	ik_u32 s;
	ik_u64 d;

	switch (f->sz) {
	case 1: IK_ENV_MEMCPY(&b, p, 1); b = (ik_u8)(b | v); IK_ENV_MEMCPY(p, &b, 1); break;
	case 2: IK_ENV_MEMCPY(&h, p, 2); h = (ik_u16)(h | v); IK_ENV_MEMCPY(p, &h, 2); break;
	case 4: IK_ENV_MEMCPY(&s, p, 4); s = (ik_u32)(s | v); IK_ENV_MEMCPY(p, &s, 4); break;
	default: IK_ENV_MEMCPY(&d, p, 8); d |= v; IK_ENV_MEMCPY(p, &d, 8); break;
	}
}

/* Where field f's bits lie in the struct's 64-bit words (see struct
 * ik_codec_piece).  -ENOSPC for a member that straddles two words. */
static int piece_place(struct ik_codec_piece *p, const struct ik_field *f)
{
	ik_u64 img[IK_CODEC_MAX_SIZE / 8];
	unsigned bits = 8u * f->sz, k = f->off / 8u, pos;

	IK_ENV_MEMSET(img, 0, sizeof(img));
	image_or(img, f, IK_FMASK(bits));
	if (!img[k] || (k + 1 < IK_CODEC_MAX_SIZE / 8 && img[k + 1]))
		return -ENOSPC;
	pos = (unsigned)ik_ctz64(img[k]);
	if (pos + bits > 64 || img[k] != IK_FMASK(bits) << pos)
		return -ENOSPC;
	p->f = *f;
	p->word = (ik_u8)k;
	p->dst = f->lsb;
	if (f->shift >= bits) {
		p->src = 0;
		p->mask = 0;	/* nothing of the member reaches this piece */
	} else {
		p->src = (ik_u8)(pos + f->shift);
		p->mask = IK_FMASK(f->width) & IK_FMASK(bits - f->shift);
	}
	return 0;
}

static int plan_build(struct ik_codec *c)
{
	ik_u64 all[IK_CODEC_MAX_SIZE / 8];
	unsigned i, j, k, nops = 1, used = 0;

	/* The decoded structs all hold a 64-bit member, so their size is a
	 * multiple of 8: the hot path compares whole words. */
	if (c->n > IK_CODEC_MAX_FIELDS || c->size > IK_CODEC_MAX_SIZE || c->size % 8 ||
	    c->words > 4)
		return -ENOSPC;
	/* Every member byte of the table; then ops[0], the opcodes without
	 * fields: all of it forbidden. */
	IK_ENV_MEMSET(all, 0, sizeof(all));
	for (i = 0; i < c->n; i++) {
		if (c->tab[i].off + c->tab[i].sz > c->size)
			return -ENOSPC;
		image_or(all, &c->tab[i], IK_FMASK(8u * c->tab[i].sz));
	}
	IK_ENV_MEMSET(c->slot, 0, sizeof(c->slot));
	IK_ENV_MEMSET(c->ops, 0, sizeof(c->ops));
	for (k = 0; k < IK_CODEC_MAX_SIZE / 8; k++)
		c->ops[0].forbid[k] = all[k];
	for (k = 0; k < 4; k++)
		c->ops[0].defined[k] = c->opmask[k];
	for (i = 0; i < c->n; i++) {
		unsigned op = c->tab[i].op;
		struct ik_codec_op *o;
		ik_u64 allow[IK_CODEC_MAX_SIZE / 8];

		if (c->slot[op])
			continue;
		if (nops > IK_CODEC_MAX_OPS)
			return -ENOSPC;
		o = &c->ops[nops];
		o->first = (ik_u8)used;
		IK_ENV_MEMSET(allow, 0, sizeof(allow));
		for (k = 0; k < 4; k++)
			o->defined[k] = c->opmask[k];
		for (j = i; j < c->n; j++) {
			const struct ik_field *f = &c->tab[j];

			if (f->op != op)
				continue;
			if (piece_place(&c->piece[used++], f))
				return -ENOSPC;
			image_or(allow, f, IK_FMASK(f->width) << f->shift);
			o->defined[f->lsb / 64] |= IK_FMASK(f->width) << (f->lsb % 64);
		}
		o->count = (ik_u8)(used - o->first);
		for (k = 0; k < IK_CODEC_MAX_SIZE / 8; k++)
			o->forbid[k] = all[k] & ~allow[k];
		c->slot[op] = (ik_u8)nops++;
	}
	c->nops = (ik_u8)nops;
	return 0;
}

bool ik_codec_build(struct ik_codec *c)
{
	int st = ik_load_acquire(&c->state), exp = 0;

	if (st == 2)
		return true;
	if (st != 0 || !ik_atomic_cas(&c->state, &exp, 1, IK_MO_ACQUIRE, IK_MO_RELAXED))
		return false;	/* being built (use the table meanwhile), or never */
	st = plan_build(c) ? 3 : 2;
	ik_store_release(&c->state, st);
	return st == 2;
}

int ik_codec_encode(struct ik_codec *c, unsigned op, const void *base, ik_u64 *w)
{
	const struct ik_codec_op *o;
	const struct ik_codec_piece *p, *end;
	ik_u64 img[IK_CODEC_MAX_SIZE / 8], bad = 0, a0 = 0, a1 = 0, a2 = 0, a3 = 0;
	unsigned k;

	if (IK_UNLIKELY(!ik_codec_ready(c)))
		return ik_codec_encode_table(c->tab, c->n, op, base, w);
	o = &c->ops[op < 256 ? c->slot[op] : 0];
	/* The struct's bytes, padding included: forbid is clear over padding,
	 * so whatever it holds is masked away unread by the decision. */
	IK_ENV_MEMCPY(img, base, c->size);
	for (k = 0; k < c->size / 8u; k++)
		bad |= img[k] & o->forbid[k];
	/* Each piece a shift and a mask of a word, ORed into registers. */
	for (p = &c->piece[o->first], end = p + o->count; p < end; p++) {
		ik_u64 x = ((img[p->word] >> p->src) & p->mask) << (p->dst % 64);
		unsigned q = p->dst / 64;

		a0 |= q == 0 ? x : 0;
		a1 |= q == 1 ? x : 0;
		a2 |= q == 2 ? x : 0;
		a3 |= q == 3 ? x : 0;
	}
	if (bad)
		return -EINVAL;
	w[0] |= a0;
	w[1] |= a1;
	if (c->words > 2) {
		w[2] |= a2;
		w[3] |= a3;
	}
	return 0;
}

int ik_codec_decode(struct ik_codec *c, unsigned op, const ik_u64 *w, unsigned nw, void *base)
{
	const struct ik_codec_op *o;
	unsigned i;

	if (IK_UNLIKELY(!ik_codec_ready(c)))
		return ik_codec_decode_table(c->tab, c->n, op, w, nw, c->opmask, base);
	o = &c->ops[op < 256 ? c->slot[op] : 0];
	for (i = o->first; i < (unsigned)o->first + o->count; i++) {
		const struct ik_field *f = &c->piece[i].f;

		ik_member_or(base, f, ik_bits_get(w, f->lsb, f->width) << f->shift);
	}
	for (i = 0; i < nw && i < 4; i++)
		if (w[i] & ~o->defined[i])
			return -EINVAL;
	return 0;
}
