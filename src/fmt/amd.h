/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/amd.h - the AMD IOMMU v1 (host) format's side of the format
 * contract (see src/pgtable/pgtable_internal.h).  Not API.  The entry layout
 * is described in include/iommukit/fmt/amd.h.  (The v2 format is the x86-64
 * layout of src/fmt/vtd.h; see src/fmt/amd_v2.c.)
 *
 * Engine level L is AMD level L + 1, so a table entry at engine level L has
 * NextLevel = L (the AMD level of the table below).
 *
 * attrs: the leaf minus its address: PR, IR, IW, FC, U, and A/D as read
 * back from a leaf.  NextLevel is 0 in every leaf the engine writes.
 *
 * This format uses the two optional walker hooks of the contract:
 * amd_leaf_size() (next-level-7 pages are larger than their entry) and
 * amd_table_level() (PDEs may skip levels).
 */
#ifndef IK_SRC_FMT_AMD_H
#define IK_SRC_FMT_AMD_H

#include "../pgtable/pgtable_internal.h"
#include <iommukit/fmt/amd.h>

/* ---- the facts (ik_pt_fmt_info) ---- */
#define FMT_QUIRKS (IK_PT_QUIRK_DIRTY | IK_PT_QUIRK_DEFER_LEAF_CLEAN)
#define FMT_HAS_DIRTY 1
#define FMT_HAS_LEAF_SIZE 1
#define FMT_HAS_SKIP 1
#define FMT_FLAGS (IK_AMD_FLAG_FORCE_FC | IK_AMD_FLAG_U)
#define FMT_IAS_WIDTHS IK_PT_WIDTHS(21, 63)	/* Mode 1..6 */
#define FMT_OAS_WIDTHS IK_PT_WIDTHS(32, 52)
/* The natural sizes the engine writes; next-level-7 sizes are read only. */
#define FMT_GRANULES { { 1ull << 12, (1ull << 12) | (1ull << 21) | (1ull << 30) } }
#define FMT_HW_LEVELS_UP 1

/* The highest engine level, AMD level 6, can hold no page. */
#define AMD_TOP_LEVEL 5u

IK_ALWAYS_INLINE ik_u64 amd_lvl_size(unsigned lvl)
{
	return (ik_u64)1 << (12 + 9 * lvl);
}

IK_ALWAYS_INLINE unsigned amd_nl(ik_u64 pte)
{
	return (unsigned)((pte & IK_AMD_PTE_NL_MASK) >> IK_AMD_PTE_NL_SHIFT);
}

/* Size of a next-level-7 page at engine level lvl, or 0 if the encoding is
 * not one the level can hold (a size not strictly between the level's
 * entry size and the span of the level above, or no zero in bits 51:12). */
IK_INLINE ik_u64 amd_nl7_size(ik_u64 pte, unsigned lvl)
{
	ik_u64 field = (pte & IK_AMD_ADDR_MASK) >> 12;
	unsigned ones = (unsigned)ik_ctz64(~field | (1ull << 40));
	unsigned lg = 13 + ones;

	if (ones >= 40 || lg <= 12 + 9 * lvl || lg >= 12 + 9 * (lvl + 1))
		return 0;
	return (ik_u64)1 << lg;
}

IK_INLINE int amd_geometry(struct ik_pt_geometry *g, const struct ik_pgtable_cfg *cfg)
{
	/* quirks, fmt_flags, ias, oas and the granule are checked (FMT_*) */
	unsigned n = (cfg->ias - 12 + 8) / 9, l;

	ik_pt_geometry_from_cfg(g, cfg);
	g->nlevels = (ik_u8)n;
	g->lg2_granule = 12;
	g->bits = 9;
	/* The DTE's root pointer names a whole 4 KiB table. */
	g->top_bits = 9;
	g->root_size = 4096;
	g->hw_start_level = n;	/* the DTE's Mode */
	g->concat = 1;
	g->leaf_levels = 1;
	g->pgsize_bitmap = 4096;
	for (l = 1; l <= 2 && l < n && l < AMD_TOP_LEVEL; l++) {
		if (cfg->pgsize_bitmap & amd_lvl_size(l)) {
			g->leaf_levels |= 1u << l;
			g->pgsize_bitmap |= amd_lvl_size(l);
		}
	}
	return 0;
}

IK_ALWAYS_INLINE bool amd_is_table(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	unsigned nl = amd_nl(pte);

	(void)g;
	return lvl > 0 && nl != 0 && nl != IK_AMD_PTE_NL_SIZE;
}

IK_ALWAYS_INLINE bool amd_is_valid(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return (pte & IK_AMD_PTE_PR) != 0;
}

IK_ALWAYS_INLINE ik_u64 amd_table_addr(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return pte & IK_AMD_ADDR_MASK;
}

/* The size of the page a leaf maps (walker hook, FMT_HAS_LEAF_SIZE): a
 * next-level-7 page's encoded size, else the level's.  A malformed
 * encoding reports the level's size (amd_walk_leaf faults it). */
IK_ALWAYS_INLINE ik_u64 amd_leaf_size(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	ik_u64 sz;

	(void)g;
	if (amd_nl(pte) != IK_AMD_PTE_NL_SIZE)
		return amd_lvl_size(lvl);
	sz = amd_nl7_size(pte, lvl);
	return sz ? sz : amd_lvl_size(lvl);
}

IK_ALWAYS_INLINE ik_u64 amd_leaf_addr(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	/* Address bits below the page size are ignored (next-level-7: they
	 * hold the size). */
	return pte & IK_AMD_ADDR_MASK & ~(amd_leaf_size(g, pte, lvl) - 1);
}

/* The engine level of the table a table entry points to (walker hook,
 * FMT_HAS_SKIP); amd_walk_table() has checked it is below lvl. */
IK_ALWAYS_INLINE unsigned amd_table_level(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return amd_nl(pte) - 1;
}

IK_ALWAYS_INLINE ik_u64 amd_mk_table(const struct ik_pt_geometry *g, ik_u64 table_iommu,
				     unsigned lvl)
{
	(void)g;
	/* IR and IW are ANDed down the walk: tables grant both, leaves
	 * restrict. */
	return table_iommu | IK_AMD_PTE_PR | IK_AMD_PTE_IR | IK_AMD_PTE_IW | IK_AMD_PTE_NL(lvl);
}

IK_INLINE int amd_prot_attrs(const struct ik_pt_geometry *g, unsigned prot, ik_u64 *attrs)
{
	ik_u64 a = IK_AMD_PTE_PR;

	if (prot & IK_PROT_READ)
		a |= IK_AMD_PTE_IR;
	if (prot & IK_PROT_WRITE)
		a |= IK_AMD_PTE_IW;
	/* No execute, privilege or memory-type bits: NOEXEC, PRIV and MMIO
	 * need nothing.  CACHE asks for coherent (snooped) accesses. */
	if ((prot & IK_PROT_CACHE) || (g->fmt_flags & IK_AMD_FLAG_FORCE_FC))
		a |= IK_AMD_PTE_FC;
	if (g->fmt_flags & IK_AMD_FLAG_U)
		a |= IK_AMD_PTE_U;
	/* A and D start clear: with host A/D (DIRTY) the IOMMU sets them. */
	*attrs = a;
	return 0;
}

IK_ALWAYS_INLINE ik_u64 amd_mk_leaf(const struct ik_pt_geometry *g, ik_u64 attrs, ik_u64 oa,
				    unsigned lvl)
{
	(void)g;
	(void)lvl;
	return attrs | oa;	/* NextLevel 0: a page of the level's size */
}

IK_ALWAYS_INLINE ik_u64 amd_leaf_attrs(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	return pte & ~(IK_AMD_ADDR_MASK & ~(amd_lvl_size(lvl) - 1)) & ~IK_AMD_PTE_NL_MASK;
}

/* ---- hardware view ---- */

struct amd_walk_state {
	ik_u64 and_bits;	/* IR, IW of the entries above */
};

IK_ALWAYS_INLINE void amd_walk_init(const struct ik_pt_geometry *g, struct amd_walk_state *st)
{
	(void)g;
	st->and_bits = ~(ik_u64)0;
}

IK_INLINE enum ik_pt_fault amd_walk_table(const struct ik_pt_geometry *g,
					  struct amd_walk_state *st, ik_u64 pte, unsigned lvl)
{
	(void)g;
	/* NextLevel must name a lower level (1..lvl in AMD numbering). */
	if (amd_nl(pte) > lvl)
		return IK_PT_FAULT_RESERVED;
	st->and_bits &= pte;
	return IK_PT_FAULT_NONE;
}

IK_INLINE enum ik_pt_fault amd_walk_leaf(const struct ik_pt_geometry *g,
					 const struct amd_walk_state *st, ik_u64 pte,
					 unsigned lvl, unsigned access,
					 struct ik_pt_walk_result *res, ik_u64 *hw_new)
{
	ik_u64 eff = pte & st->and_bits;
	unsigned prot = IK_PROT_NOEXEC;

	*hw_new = pte;
	if (lvl >= AMD_TOP_LEVEL ||
	    (amd_nl(pte) == IK_AMD_PTE_NL_SIZE && !amd_nl7_size(pte, lvl)))
		return IK_PT_FAULT_RESERVED;
	if (eff & IK_AMD_PTE_IR)
		prot |= IK_PROT_READ;
	if (eff & IK_AMD_PTE_IW)
		prot |= IK_PROT_WRITE;
	if (pte & IK_AMD_PTE_FC)
		prot |= IK_PROT_CACHE;
	res->attr = ((pte & IK_AMD_PTE_FC) ? 1u : 0u) | ((pte & IK_AMD_PTE_U) ? 2u : 0u);
	res->prot = prot;
	res->dirty = (pte & IK_AMD_PTE_D) != 0;
	if (access) {
		if (((access & IK_ACCESS_READ) && !(prot & IK_PROT_READ)) ||
		    ((access & IK_ACCESS_WRITE) && !(prot & IK_PROT_WRITE)) ||
		    (access & IK_ACCESS_EXEC))
			return IK_PT_FAULT_PERMISSION;
		/* Host A/D (DTE.HAD, the DIRTY quirk): the IOMMU sets them. */
		if (g->quirks & IK_PT_QUIRK_DIRTY)
			*hw_new = pte | IK_AMD_PTE_A |
				  ((access & IK_ACCESS_WRITE) ? IK_AMD_PTE_D : 0);
		if (*hw_new != pte && (access & IK_ACCESS_WRITE))
			res->dirty = true;
	}
	return IK_PT_FAULT_NONE;
}

/* ---- dirty tracking (IK_PT_QUIRK_DIRTY) ---- */

IK_ALWAYS_INLINE bool amd_leaf_dirty(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return (pte & IK_AMD_PTE_D) != 0;
}

IK_ALWAYS_INLINE ik_u64 amd_leaf_mkclean(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return pte & ~IK_AMD_PTE_D;
}

/*
 * The format contract's names (src/pgtable/pgtable_internal.h): the engine
 * template calls fmt_*; this format defines amd_*, so each definition has
 * one name of its own (ctags, cscope and backtraces find it).
 */
#define fmt_geometry amd_geometry
#define fmt_is_table amd_is_table
#define fmt_is_valid amd_is_valid
#define fmt_leaf_addr amd_leaf_addr
#define fmt_leaf_attrs amd_leaf_attrs
#define fmt_leaf_dirty amd_leaf_dirty
#define fmt_leaf_mkclean amd_leaf_mkclean
#define fmt_leaf_size amd_leaf_size
#define fmt_mk_leaf amd_mk_leaf
#define fmt_mk_table amd_mk_table
#define fmt_prot_attrs amd_prot_attrs
#define fmt_table_addr amd_table_addr
#define fmt_table_level amd_table_level
#define fmt_walk_init amd_walk_init
#define fmt_walk_leaf amd_walk_leaf
#define fmt_walk_state amd_walk_state
#define fmt_walk_table amd_walk_table

#endif /* IK_SRC_FMT_AMD_H */
