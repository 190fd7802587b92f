/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/vtd.h - the Intel VT-d formats' side of the format contract (see
 * src/pgtable/pgtable_internal.h): second-level tables and first-level (x86-64
 * paging) tables.  Not API.  The entry layouts are described in
 * include/iommukit/fmt/vtd.h.
 *
 * The including file defines VTD_FL to 0 (second-level, IK_PT_VTD_SL) or 1
 * (first-level, IK_PT_VTD_FL) before including this header, and VTD_AMD_V2
 * to 1 for the AMD v2 variant of first-level (IK_PT_AMD_V2: same layout, 1G
 * pages without IK_VTD_FLAG_SP_1G, no fmt_flags); every test of VTD_FL and
 * VTD_AMD_V2 below is a compile-time constant, so each instantiation of the
 * engine carries only its own format's code.
 *
 * attrs (the level-independent leaf encoding the engine carries around):
 *   second-level  the leaf minus its address and PS: R, W, SNP, A, D and any
 *                 ignored bits;
 *   first-level   the leaf minus its address, PS and PAT, with the PAT flag
 *                 carried in bit 7 (where a 4K PTE holds it); vtd_mk_leaf
 *                 moves it to bit 12 in 2M/1G leaves.
 */
#ifndef IK_SRC_FMT_VTD_H
#define IK_SRC_FMT_VTD_H

#include "../pgtable/pgtable_internal.h"
#include <iommukit/fmt/vtd.h>

#ifndef VTD_FL
#error "define VTD_FL to 0 (second-level) or 1 (first-level) before including src/fmt/vtd.h"
#endif
/* AMD v2 (guest) tables: the first-level layout, with 2M and 1G pages
 * always available (no capability flags). */
#ifndef VTD_AMD_V2
#define VTD_AMD_V2 0
#endif
#if VTD_AMD_V2 && !VTD_FL
#error "VTD_AMD_V2 is a first-level variant"
#endif

/* ---- the facts (ik_pt_fmt_info) ---- */
#define FMT_QUIRKS (IK_PT_QUIRK_DIRTY | IK_PT_QUIRK_DEFER_LEAF_CLEAN)
#define FMT_HAS_DIRTY 1
#if VTD_AMD_V2
#define FMT_FLAGS 0
#define FMT_IAS_WIDTHS IK_PT_WIDTHS(32, 56)	/* 4 levels to 47, 5 to 56 */
#elif VTD_FL
#define FMT_FLAGS (IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G)
#define FMT_IAS_WIDTHS IK_PT_WIDTHS(32, 56)	/* 4 levels to 47, 5 to 56 */
#else
#define FMT_FLAGS (IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G | IK_VTD_FLAG_SC | IK_VTD_FLAG_FORCE_SNP)
#define FMT_IAS_WIDTHS IK_PT_WIDTHS(32, 57)	/* 3 levels to 39, 4 to 48, 5 to 57 */
#endif
#define FMT_OAS_WIDTHS IK_PT_WIDTHS(32, 52)	/* HAW */
/* 4 KiB only; 2M and 1G as the fmt_flags allow (first-level: 2M always) */
#define FMT_GRANULES { { 1ull << 12, (1ull << 12) | (1ull << 21) | (1ull << 30) } }
#define FMT_HW_LEVELS_UP 1

/* Address bits 51:12, the widest an entry holds. */
#define VTD_ADDR_BITS IK_VTD_ADDR_MASK

IK_ALWAYS_INLINE ik_u64 vtd_lvl_size(unsigned lvl)
{
	return (ik_u64)1 << (12 + 9 * lvl);
}

/* Levels a table set of `ias` input bits needs: SL 3..5 (39/48/57-bit AGAW);
 * FL 4..5 (the lower canonical half: 47 or 56 bits). */
IK_INLINE unsigned vtd_levels_for_ias(unsigned ias)
{
	if (VTD_FL)
		return ias <= 47 ? 4 : 5;
	return ias <= 39 ? 3 : ias <= 48 ? 4 : 5;
}

/* Does the hardware (per fmt_flags) accept a leaf at this level? */
IK_ALWAYS_INLINE bool vtd_hw_leaf_level(const struct ik_pt_geometry *g, unsigned lvl)
{
	if (lvl == 0)
		return true;
	if (lvl == 1)
		return VTD_FL || (g->fmt_flags & IK_VTD_FLAG_SP_2M);
	if (lvl == 2)
		return VTD_AMD_V2 || (g->fmt_flags & IK_VTD_FLAG_SP_1G) != 0;
	return false;
}

IK_INLINE int vtd_geometry(struct ik_pt_geometry *g, const struct ik_pgtable_cfg *cfg)
{
	/* quirks, fmt_flags, ias, oas and the granule are checked (FMT_*) */
	ik_u64 sizes;

	if ((cfg->fmt_flags & IK_VTD_FLAG_FORCE_SNP) && !(cfg->fmt_flags & IK_VTD_FLAG_SC))
		return -EINVAL;	/* SNP means nothing without snoop control */

	ik_pt_geometry_from_cfg(g, cfg);
	g->nlevels = (ik_u8)vtd_levels_for_ias(cfg->ias);
	g->lg2_granule = 12;
	g->bits = 9;
	/* The root is always a whole 4 KiB page: the unit indexes it with the
	 * full 9 bits of its address width, whatever ias the driver uses. */
	g->top_bits = 9;
	g->root_size = 4096;
	g->hw_start_level = g->nlevels;
	g->concat = 1;
	sizes = 4096;
	g->leaf_levels = 1;
	if (vtd_hw_leaf_level(g, 1) && (cfg->pgsize_bitmap & vtd_lvl_size(1))) {
		sizes |= vtd_lvl_size(1);
		g->leaf_levels |= 2;
	}
	if (vtd_hw_leaf_level(g, 2) && (cfg->pgsize_bitmap & vtd_lvl_size(2))) {
		sizes |= vtd_lvl_size(2);
		g->leaf_levels |= 4;
	}
	g->pgsize_bitmap = sizes;
	return 0;
}

IK_ALWAYS_INLINE bool vtd_is_table(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	/* PS above the directory-pointer level is not a leaf marker but a
	 * reserved bit: such an entry is a (faulting) table entry. */
	return lvl > 0 && (lvl > 2 || !(pte & (VTD_FL ? IK_VTD_FL_PS : IK_VTD_SL_PS)));
}

IK_ALWAYS_INLINE bool vtd_is_valid(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	if (VTD_FL)
		return (pte & IK_VTD_FL_P) != 0;
	return (pte & (IK_VTD_SL_R | IK_VTD_SL_W)) != 0;	/* no present bit */
}

IK_ALWAYS_INLINE ik_u64 vtd_table_addr(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return pte & VTD_ADDR_BITS;
}

IK_ALWAYS_INLINE ik_u64 vtd_leaf_addr(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	/* Bits below the leaf size are reserved (or PAT) in 2M/1G leaves. */
	return pte & VTD_ADDR_BITS & ~(vtd_lvl_size(lvl) - 1);
}

IK_ALWAYS_INLINE ik_u64 vtd_mk_table(const struct ik_pt_geometry *g, ik_u64 table_iommu,
				     unsigned lvl)
{
	(void)g;
	(void)lvl;
	if (VTD_FL)	/* A preset so that the unit never has to set it */
		return table_iommu | IK_VTD_FL_P | IK_VTD_FL_RW | IK_VTD_FL_US | IK_VTD_FL_A;
	return table_iommu | IK_VTD_SL_R | IK_VTD_SL_W;
}

IK_INLINE int vtd_prot_attrs(const struct ik_pt_geometry *g, unsigned prot, ik_u64 *attrs)
{
	ik_u64 a = 0;

	if (VTD_FL) {
		/* x86 paging cannot deny reads: P grants them. */
		a = IK_VTD_FL_P | IK_VTD_FL_A;
		if (prot & IK_PROT_WRITE) {
			a |= IK_VTD_FL_RW;
			/* D preset unless tracking: the unit would set it on the
			 * first write with an atomic update of the entry. */
			if (!(g->quirks & IK_PT_QUIRK_DIRTY))
				a |= IK_VTD_FL_D;
		}
		if (!(prot & IK_PROT_PRIV))
			a |= IK_VTD_FL_US;
		if (prot & IK_PROT_NOEXEC)
			a |= IK_VTD_FL_XD;
		/* Memory type through PAT index PWT | PCD << 1 (PAT = 0) with
		 * the power-on PAT: 0 = WB, 2 = UC-, 3 = UC. */
		if (prot & IK_PROT_MMIO)
			a |= IK_VTD_FL_PWT | IK_VTD_FL_PCD;
		else if (!(prot & IK_PROT_CACHE))
			a |= IK_VTD_FL_PCD;
	} else {
		if (prot & IK_PROT_READ)
			a |= IK_VTD_SL_R;
		if (prot & IK_PROT_WRITE)
			a |= IK_VTD_SL_W;
		/* Second-level tables never grant execute (X needs SLEE),
		 * and have no privilege or memory-type bits: NOEXEC, PRIV and
		 * MMIO need nothing.  CACHE asks for snooped accesses. */
		if ((g->fmt_flags & IK_VTD_FLAG_FORCE_SNP) ||
		    ((prot & IK_PROT_CACHE) && (g->fmt_flags & IK_VTD_FLAG_SC)))
			a |= IK_VTD_SL_SNP;
		/* A and D start clear: with SSADS the unit sets them. */
	}
	*attrs = a;
	return 0;
}

IK_ALWAYS_INLINE ik_u64 vtd_mk_leaf(const struct ik_pt_geometry *g, ik_u64 attrs, ik_u64 oa,
				    unsigned lvl)
{
	(void)g;
	/* Branch-free in the address, so that the engine's per-PTE loop keeps
	 * only an OR: the level-dependent part is loop-invariant. */
	if (VTD_FL) {	/* PAT moves from bit 7 (4K) to bit 12 (2M/1G) */
		ik_u64 pat = attrs & IK_VTD_FL_PAT_4K;

		return (lvl ? (attrs ^ pat) | (pat << 5) | IK_VTD_FL_PS : attrs) | oa;
	}
	return (lvl ? attrs | IK_VTD_SL_PS : attrs) | oa;
}

IK_ALWAYS_INLINE ik_u64 vtd_leaf_attrs(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	ik_u64 a = pte & ~(VTD_ADDR_BITS & ~(vtd_lvl_size(lvl) - 1));

	(void)g;
	if (!lvl)
		return a;
	if (VTD_FL)
		return (a & ~(IK_VTD_FL_PS | IK_VTD_FL_PAT_LARGE)) |
		       ((pte & IK_VTD_FL_PAT_LARGE) >> 5);
	return a & ~IK_VTD_SL_PS;
}

/* ---- hardware view ---- */

/* Limits accumulated from the table entries above the leaf. */
struct vtd_walk_state {
	ik_u64 and_bits;	/* SL: R, W; FL: R/W, U/S */
	ik_u64 or_bits;		/* FL: XD */
};

IK_ALWAYS_INLINE void vtd_walk_init(const struct ik_pt_geometry *g, struct vtd_walk_state *st)
{
	(void)g;
	st->and_bits = ~(ik_u64)0;
	st->or_bits = 0;
}

IK_INLINE enum ik_pt_fault vtd_walk_table(const struct ik_pt_geometry *g,
					  struct vtd_walk_state *st, ik_u64 pte, unsigned lvl)
{
	(void)g;
	/* PS in a PML4E/PML5E (or an unsupported place) is a reserved bit. */
	if (lvl > 2 && (pte & (VTD_FL ? IK_VTD_FL_PS : IK_VTD_SL_PS)))
		return IK_PT_FAULT_RESERVED;
	if (!VTD_FL && (pte & IK_VTD_SL_RSVD62))
		return IK_PT_FAULT_RESERVED;
	st->and_bits &= pte;
	st->or_bits |= pte;
	return IK_PT_FAULT_NONE;
}

IK_INLINE enum ik_pt_fault vtd_walk_leaf(const struct ik_pt_geometry *g,
					 const struct vtd_walk_state *st, ik_u64 pte,
					 unsigned lvl, unsigned access,
					 struct ik_pt_walk_result *res, ik_u64 *hw_new)
{
	ik_u64 eff = pte & st->and_bits;
	unsigned prot;
	bool dirty;

	*hw_new = pte;
	if (!vtd_hw_leaf_level(g, lvl))
		return IK_PT_FAULT_RESERVED;	/* PS where the unit has no superpage */
	if (lvl) {
		/* Address bits below the superpage size are reserved (FL: but
		 * bit 12, PAT). */
		ik_u64 low = (vtd_lvl_size(lvl) - 1) & ~(ik_u64)(VTD_FL ? 0x1fff : 0xfff);

		if (pte & low)
			return IK_PT_FAULT_RESERVED;
	}
	if (VTD_FL) {
		ik_u64 pat = lvl ? (pte & IK_VTD_FL_PAT_LARGE) >> 12 : (pte & IK_VTD_FL_PAT_4K) >> 7;
		ik_u64 idx = ((pte >> 3) & 1) | (((pte >> 4) & 1) << 1) | (pat << 2);

		prot = IK_PROT_READ;
		if (eff & IK_VTD_FL_RW)
			prot |= IK_PROT_WRITE;
		if (!(eff & IK_VTD_FL_US))
			prot |= IK_PROT_PRIV;
		if ((pte | st->or_bits) & IK_VTD_FL_XD)
			prot |= IK_PROT_NOEXEC;
		/* power-on PAT: 0, 4 WB; 3, 7 UC; the others UC- / WT / WP as
		 * "non-cacheable" */
		if (idx == 0 || idx == 4)
			prot |= IK_PROT_CACHE;
		else if (idx == 3 || idx == 7)
			prot |= IK_PROT_MMIO;
		res->attr = idx;
		dirty = (pte & IK_VTD_FL_D) != 0;
	} else {
		if (pte & IK_VTD_SL_RSVD62)
			return IK_PT_FAULT_RESERVED;
		prot = IK_PROT_NOEXEC;
		if (eff & IK_VTD_SL_R)
			prot |= IK_PROT_READ;
		if (eff & IK_VTD_SL_W)
			prot |= IK_PROT_WRITE;
		if (pte & IK_VTD_SL_SNP)
			prot |= IK_PROT_CACHE;
		res->attr = (pte & IK_VTD_SL_SNP) ? 1 : 0;
		dirty = (pte & IK_VTD_SL_D) != 0;
	}
	res->prot = prot;
	res->dirty = dirty;
	if (access) {
		if (((access & IK_ACCESS_READ) && !(prot & IK_PROT_READ)) ||
		    ((access & IK_ACCESS_WRITE) && !(prot & IK_PROT_WRITE)) ||
		    ((access & IK_ACCESS_EXEC) && (prot & IK_PROT_NOEXEC)) ||
		    (!(access & IK_ACCESS_PRIV) && (prot & IK_PROT_PRIV)))
			return IK_PT_FAULT_PERMISSION;
		/* The unit's own updates: FL always keeps A/D; SL only with
		 * SSADS enabled (the PASID entry's SLADE, i.e. the DIRTY quirk). */
		if (VTD_FL) {
			*hw_new = pte | IK_VTD_FL_A | ((access & IK_ACCESS_WRITE) ? IK_VTD_FL_D : 0);
		} else if (g->quirks & IK_PT_QUIRK_DIRTY) {
			*hw_new = pte | IK_VTD_SL_A | ((access & IK_ACCESS_WRITE) ? IK_VTD_SL_D : 0);
		}
		if (*hw_new != pte && (access & IK_ACCESS_WRITE))
			res->dirty = true;
	}
	return IK_PT_FAULT_NONE;
}

/* ---- dirty tracking (IK_PT_QUIRK_DIRTY) ---- */

IK_ALWAYS_INLINE bool vtd_leaf_dirty(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return (pte & (VTD_FL ? IK_VTD_FL_D : IK_VTD_SL_D)) != 0;
}

IK_ALWAYS_INLINE ik_u64 vtd_leaf_mkclean(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return pte & ~(VTD_FL ? IK_VTD_FL_D : IK_VTD_SL_D);
}

/*
 * The format contract's names (src/pgtable/pgtable_internal.h): the engine
 * template calls fmt_*; this format defines vtd_*, so each definition has
 * one name of its own (ctags, cscope and backtraces find it).
 */
#define fmt_geometry vtd_geometry
#define fmt_is_table vtd_is_table
#define fmt_is_valid vtd_is_valid
#define fmt_leaf_addr vtd_leaf_addr
#define fmt_leaf_attrs vtd_leaf_attrs
#define fmt_leaf_dirty vtd_leaf_dirty
#define fmt_leaf_mkclean vtd_leaf_mkclean
#define fmt_mk_leaf vtd_mk_leaf
#define fmt_mk_table vtd_mk_table
#define fmt_prot_attrs vtd_prot_attrs
#define fmt_table_addr vtd_table_addr
#define fmt_walk_init vtd_walk_init
#define fmt_walk_leaf vtd_walk_leaf
#define fmt_walk_state vtd_walk_state
#define fmt_walk_table vtd_walk_table

#endif /* IK_SRC_FMT_VTD_H */
