/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/lpae_regs.c - ARM LPAE register values (TTBR/TCR/MAIR, VTTBR/VTCR) for a table set, and
 * the reverse: a walker from register values, as an emulated SMMU receives
 * them.  Field positions from the Arm ARM (TCR_EL1, VTCR_EL2, TTBR0_EL1,
 * VTTBR_EL2) and the SMMUv3 context descriptor / STE, which use the same
 * encodings.
 */
#include <iommukit/fmt/lpae.h>
#include "../pgtable/pgtable_internal.h"
#include "lpae_common.h"

#define LPAE_TCR_T0SZ_MASK 0x3full
#define LPAE_TCR_IRGN0_SHIFT 8
#define LPAE_TCR_ORGN0_SHIFT 10
#define LPAE_TCR_SH0_SHIFT 12
#define LPAE_TCR_TG0_SHIFT 14
#define LPAE_TCR_EPD1 (1ull << 23)
#define LPAE_TCR_IPS_SHIFT 32
#define LPAE_TCR_HA (1ull << 39)
#define LPAE_TCR_HD (1ull << 40)
#define LPAE_TCR_DS (1ull << 59)
#define LPAE_VTCR_SL0_SHIFT 6
#define LPAE_VTCR_PS_SHIFT 16
#define LPAE_VTCR_HA (1ull << 21)
#define LPAE_VTCR_HD (1ull << 22)
#define LPAE_VTCR_DS (1ull << 32)
#define LPAE_VTCR_SL2 (1ull << 33)
/* TTBR/VTTBR BADDR: [47:1] (bits [5:2] = BADDR[51:48] for 52 bits). */
#define LPAE_TTBR_BADDR_LO 0x0000fffffffffffeull

#define RGN_NC 0ull
#define RGN_WBWA 1ull
#define SH_OS 2ull
#define SH_IS 3ull

static const ik_u32 lpae_pa_bits[7] = { 32, 36, 40, 42, 44, 48, 52 };

static ik_u64 lpae_pa_enc(ik_u32 oas)
{
	ik_u64 v = 0;

	while (v < 6 && lpae_pa_bits[v] < oas)
		v++;
	return v;
}

static int lpae_pa_dec(ik_u64 v, ik_u32 *oas)
{
	if (v > 6)
		return -EINVAL;
	*oas = lpae_pa_bits[v];
	return 0;
}

static ik_u64 lpae_tg0_enc(unsigned lg2)
{
	return lg2 == 12 ? 0 : lg2 == 16 ? 1 : 2;
}

static ik_u64 lpae_ttbr_dec(ik_u64 ttbr, bool pa52, ik_u64 root_size)
{
	ik_u64 a = ttbr & LPAE_TTBR_BADDR_LO & ~0x3full;

	if (pa52)
		a |= ((ttbr >> IK_LPAE_TTBR_BADDR_HI_SHIFT) & 0xf) << 48;
	return a & ~(root_size - 1);
}

int ik_lpae_get_regs(const struct ik_pgtable *pt, struct ik_lpae_regs *r)
{
	const struct ik_pt_geometry *g;
	ik_u64 tcr;
	bool ds;

	if (!pt || !r)
		return -EINVAL;
	g = &pt->geom;
	if (g->fmt != IK_PT_LPAE_S1 && g->fmt != IK_PT_LPAE_S2)
		return -EINVAL;
	ds = lpae_ds(g->lg2_granule, g->fmt_flags);
	IK_ENV_MEMSET(r, 0, sizeof(*r));
	tcr = (64ull - g->ias) & LPAE_TCR_T0SZ_MASK;
	if (pt->cfg.coherent)
		tcr |= RGN_WBWA << LPAE_TCR_IRGN0_SHIFT | RGN_WBWA << LPAE_TCR_ORGN0_SHIFT |
		       SH_IS << LPAE_TCR_SH0_SHIFT;
	else
		tcr |= RGN_NC << LPAE_TCR_IRGN0_SHIFT | RGN_NC << LPAE_TCR_ORGN0_SHIFT |
		       SH_OS << LPAE_TCR_SH0_SHIFT;
	tcr |= lpae_tg0_enc(g->lg2_granule) << LPAE_TCR_TG0_SHIFT;
	if (g->fmt == IK_PT_LPAE_S1) {
		tcr |= LPAE_TCR_EPD1 | lpae_pa_enc(g->oas) << LPAE_TCR_IPS_SHIFT;
		if (g->quirks & IK_PT_QUIRK_DIRTY)
			tcr |= LPAE_TCR_HA | LPAE_TCR_HD;
		if (ds)
			tcr |= LPAE_TCR_DS;
		r->tcr = tcr;
		r->ttbr = ik_lpae_ttbr_from_addr(pt->root->iommu);
		r->mair = IK_LPAE_MAIR_VALUE;
	} else {
		ik_u64 sl0;
		unsigned start = g->hw_start_level;

		/* SL0: 4K: 0 = level 2, 1 = level 1, 2 = level 0;
		 * 16K/64K: 0 = level 3, 1 = level 2, 2 = level 1, 16K with
		 * DS: 3 = level 0.  (The library never starts at level -1.) */
		sl0 = g->lg2_granule == 12 ? 2u - start : 3u - start;
		tcr |= sl0 << LPAE_VTCR_SL0_SHIFT | lpae_pa_enc(g->oas) << LPAE_VTCR_PS_SHIFT;
		if (g->quirks & IK_PT_QUIRK_DIRTY)
			tcr |= LPAE_VTCR_HA | LPAE_VTCR_HD;
		if (ds)
			tcr |= LPAE_VTCR_DS;
		r->vtcr = tcr;
		r->vttbr = ik_lpae_ttbr_from_addr(pt->root->iommu);
	}
	return 0;
}

/* The register fields the walker needs, decoded and checked. */
struct lpae_regs_dec {
	unsigned glg2, nlevels;
	ik_u32 ias, oas;
	bool ds;
};

static int lpae_regs_decode(unsigned stage, ik_u64 tcr, struct lpae_regs_dec *d)
{
	unsigned tg0 = (unsigned)(tcr >> LPAE_TCR_TG0_SHIFT) & 3, bits, va_bits;

	d->ias = 64u - (ik_u32)(tcr & LPAE_TCR_T0SZ_MASK);
	d->glg2 = tg0 == 0 ? 12 : tg0 == 1 ? 16 : tg0 == 2 ? 14 : 0;
	if (!d->glg2)
		return -EINVAL;
	d->ds = d->glg2 != 16 && (tcr & (stage == 1 ? LPAE_TCR_DS : LPAE_VTCR_DS));
	if (d->ias < 32 || d->ias > (d->glg2 == 16 || d->ds ? 52u : 48u))
		return -EINVAL;
	if (lpae_pa_dec((tcr >> (stage == 1 ? LPAE_TCR_IPS_SHIFT : LPAE_VTCR_PS_SHIFT)) & 7,
			&d->oas))
		return -EINVAL;
	if (d->oas == 52 && d->glg2 != 16 && !d->ds)
		d->oas = 48;	/* 0b110 without DS means 48 bits at 4K/16K */
	bits = d->glg2 - 3;
	va_bits = d->ias - d->glg2;
	if (stage == 1) {
		d->nlevels = (va_bits + bits - 1) / bits;
	} else {
		unsigned sl0 = (unsigned)(tcr >> LPAE_VTCR_SL0_SHIFT) & 3;
		bool sl2 = d->ds && d->glg2 == 12 && (tcr & LPAE_VTCR_SL2);

		if (sl2)
			d->nlevels = sl0 == 0 ? 5 : 0;	/* level -1; SL0 != 0 reserved */
		else if (d->glg2 == 12)
			d->nlevels = sl0 == 3 ? 0 : 2 + sl0;
		else
			d->nlevels = sl0 == 3 ? (d->ds && d->glg2 == 14 ? 4 : 0) : 1 + sl0;
	}
	if (d->nlevels < 1 || d->nlevels > 5 || va_bits <= (d->nlevels - 1) * bits)
		return -EINVAL;
	return 0;
}

int ik_lpae_walker_from_regs(struct ik_pt_walker *w, unsigned stage, ik_u64 tcr, ik_u64 ttbr,
			     ik_u32 quirks)
{
	struct ik_pt_geometry *g;
	struct lpae_regs_dec d;
	unsigned lvl, bits;

	if (!w || (stage != 1 && stage != 2))
		return -EINVAL;
	if (quirks & ~(ik_u32)IK_PT_QUIRK_DIRTY)
		return -EINVAL;
	if (lpae_regs_decode(stage, tcr, &d))
		return -EINVAL;
	bits = d.glg2 - 3;
	g = &w->geom;
	IK_ENV_MEMSET(g, 0, sizeof(*g));
	g->fmt = stage == 1 ? IK_PT_LPAE_S1 : IK_PT_LPAE_S2;
	g->ias = d.ias;
	g->oas = d.oas;
	g->quirks = quirks;
	g->fmt_flags = d.ds ? IK_LPAE_FLAG_LPA2 : 0;
	g->nlevels = (ik_u8)d.nlevels;
	g->lg2_granule = (ik_u8)d.glg2;
	g->bits = (ik_u8)bits;
	g->top_bits = (ik_u8)(d.ias - d.glg2 - (d.nlevels - 1) * bits);
	/* Stage 2 may concatenate up to 16 tables at the start level. */
	if (g->top_bits > bits + (stage == 2 ? 4u : 0u))
		return -EINVAL;
	g->concat = g->top_bits > bits ? 1u << (g->top_bits - bits) : 1u;
	g->hw_start_level = 4u - d.nlevels;
	g->root_size = 8ull << g->top_bits;
	if (g->root_size < 64)
		g->root_size = 64;
	g->leaf_levels = 1;
	g->pgsize_bitmap = 1ull << d.glg2;
	for (lvl = 1; lvl < d.nlevels; lvl++) {
		if (lpae_leaf_level(d.glg2, d.ds, d.oas, lvl)) {
			g->leaf_levels |= 1u << lvl;
			g->pgsize_bitmap |= 1ull << (d.glg2 + lvl * bits);
		}
	}
	w->root = lpae_ttbr_dec(ttbr, d.oas == 52, g->root_size);
	return 0;
}
