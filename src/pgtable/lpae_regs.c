/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ARM LPAE register values (TTBR/TCR/MAIR, VTTBR/VTCR) for a table set, and
 * the reverse: a walker from register values, as an emulated SMMU receives
 * them.  Field positions from the Arm ARM (TCR_EL1, VTCR_EL2) and the SMMUv3
 * context descriptor / STE, which use the same encodings.
 */
#include <iommukit/fmt/lpae.h>
#include "pgtable_internal.h"

#define TCR_T0SZ_MASK 0x3full
#define TCR_IRGN0_SHIFT 8
#define TCR_ORGN0_SHIFT 10
#define TCR_SH0_SHIFT 12
#define TCR_TG0_SHIFT 14
#define TCR_EPD1 (1ull << 23)
#define TCR_IPS_SHIFT 32
#define TCR_HA (1ull << 39)
#define TCR_HD (1ull << 40)
#define VTCR_SL0_SHIFT 6
#define VTCR_PS_SHIFT 16

#define RGN_NC 0ull
#define RGN_WBWA 1ull
#define SH_OS 2ull
#define SH_IS 3ull

static ik_u64 lpae_pa_enc(ik_u32 oas)
{
	switch (oas) {
	case 32: return 0;
	case 36: return 1;
	case 40: return 2;
	case 42: return 3;
	case 44: return 4;
	default: return 5;	/* 48 */
	}
}

static int lpae_pa_dec(ik_u64 v, ik_u32 *oas)
{
	static const ik_u32 tab[6] = { 32, 36, 40, 42, 44, 48 };

	if (v > 5)
		return -EINVAL;
	*oas = tab[v];
	return 0;
}

static ik_u64 lpae_tg0_enc(unsigned lg2)
{
	return lg2 == 12 ? 0 : lg2 == 16 ? 1 : 2;
}

int ik_lpae_get_regs(const struct ik_pgtable *pt, struct ik_lpae_regs *r)
{
	const struct ik_pt_geometry *g;
	ik_u64 tcr;

	if (!pt || !r)
		return -EINVAL;
	g = &pt->geom;
	if (g->fmt != IK_PT_LPAE_S1 && g->fmt != IK_PT_LPAE_S2)
		return -EINVAL;
	IK_ENV_MEMSET(r, 0, sizeof(*r));
	tcr = (64ull - g->ias) & TCR_T0SZ_MASK;
	if (pt->cfg.coherent)
		tcr |= RGN_WBWA << TCR_IRGN0_SHIFT | RGN_WBWA << TCR_ORGN0_SHIFT |
		       SH_IS << TCR_SH0_SHIFT;
	else
		tcr |= RGN_NC << TCR_IRGN0_SHIFT | RGN_NC << TCR_ORGN0_SHIFT |
		       SH_OS << TCR_SH0_SHIFT;
	tcr |= lpae_tg0_enc(g->lg2_granule) << TCR_TG0_SHIFT;
	if (g->fmt == IK_PT_LPAE_S1) {
		tcr |= TCR_EPD1 | lpae_pa_enc(g->oas) << TCR_IPS_SHIFT;
		if (g->quirks & IK_PT_QUIRK_DIRTY)
			tcr |= TCR_HA | TCR_HD;
		r->tcr = tcr;
		r->ttbr = pt->root->iommu;
		r->mair = IK_LPAE_MAIR_VALUE;
	} else {
		ik_u64 sl0;
		unsigned start = g->hw_start_level;

		/* SL0: 4K: 0 = level 2, 1 = level 1, 2 = level 0;
		 * 16K/64K: 0 = level 3, 1 = level 2, 2 = level 1. */
		sl0 = g->lg2_granule == 12 ? 2u - start : 3u - start;
		tcr |= sl0 << VTCR_SL0_SHIFT | lpae_pa_enc(g->oas) << VTCR_PS_SHIFT;
		r->vtcr = tcr;
		r->vttbr = pt->root->iommu;
	}
	return 0;
}

int ik_lpae_walker_from_regs(struct ik_pt_walker *w, unsigned stage, ik_u64 tcr, ik_u64 ttbr,
			     ik_u32 quirks)
{
	struct ik_pt_geometry *g;
	unsigned tg0 = (unsigned)(tcr >> TCR_TG0_SHIFT) & 3, glg2, bits, va_bits, nlevels, start;
	unsigned lvl;
	ik_u32 ias = 64u - (ik_u32)(tcr & TCR_T0SZ_MASK), oas;

	if (!w || (stage != 1 && stage != 2))
		return -EINVAL;
	if (quirks & ~(ik_u32)IK_PT_QUIRK_DIRTY || (stage == 2 && quirks))
		return -EINVAL;
	glg2 = tg0 == 0 ? 12 : tg0 == 1 ? 16 : tg0 == 2 ? 14 : 0;
	if (!glg2 || ias < 32 || ias > 48)
		return -EINVAL;
	if (lpae_pa_dec((tcr >> (stage == 1 ? TCR_IPS_SHIFT : VTCR_PS_SHIFT)) & 7, &oas))
		return -EINVAL;
	bits = glg2 - 3;
	va_bits = ias - glg2;
	if (stage == 1) {
		nlevels = (va_bits + bits - 1) / bits;
	} else {
		unsigned sl0 = (unsigned)(tcr >> VTCR_SL0_SHIFT) & 3;

		if (sl0 > 2)
			return -EINVAL;
		start = glg2 == 12 ? 2 - sl0 : 3 - sl0;
		nlevels = 4 - start;
	}
	if (nlevels < 1 || nlevels > 4 || va_bits <= (nlevels - 1) * bits)
		return -EINVAL;
	g = &w->geom;
	IK_ENV_MEMSET(g, 0, sizeof(*g));
	g->fmt = stage == 1 ? IK_PT_LPAE_S1 : IK_PT_LPAE_S2;
	g->ias = ias;
	g->oas = oas;
	g->quirks = quirks;
	g->nlevels = (ik_u8)nlevels;
	g->lg2_granule = (ik_u8)glg2;
	g->bits = (ik_u8)bits;
	g->top_bits = (ik_u8)(va_bits - (nlevels - 1) * bits);
	/* Stage 2 may concatenate up to 16 tables at the start level. */
	if (g->top_bits > bits + (stage == 2 ? 4u : 0u))
		return -EINVAL;
	g->concat = g->top_bits > bits ? 1u << (g->top_bits - bits) : 1u;
	g->hw_start_level = 4 - nlevels;
	g->root_size = 8ull << g->top_bits;
	if (g->root_size < 64)
		g->root_size = 64;
	g->leaf_levels = 1;
	g->pgsize_bitmap = 1ull << glg2;
	for (lvl = 1; lvl < nlevels; lvl++) {
		if (glg2 == 12 ? (lvl == 1 || lvl == 2) : lvl == 1) {
			g->leaf_levels |= 1u << lvl;
			g->pgsize_bitmap |= 1ull << (glg2 + lvl * bits);
		}
	}
	w->root = ttbr & 0x0000ffffffffffffull & ~(g->root_size - 1);
	return 0;
}
