/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/lpae.h - the ARM LPAE formats' side of the format contract (see
 * src/pgtable/pgtable_internal.h).  Not API.  Included by src/fmt/lpae_s1.c
 * and src/fmt/lpae_s2.c with LPAE_STAGE defined to 1 or 2, so that the
 * stage is a compile-time constant in every encoder.
 *
 * Level mapping: engine level L is ARM lookup level 3 - L.  Block levels
 * and the 52-bit layouts (FEAT_LPA for 64K, FEAT_LPA2 / DS for 4K and 16K):
 * lpae_common.h and <iommukit/fmt/lpae.h>.  Bits of the formats from the
 * Arm ARM (VMSAv8-64 translation table descriptor formats).
 */
#ifndef IK_SRC_FMT_LPAE_H
#define IK_SRC_FMT_LPAE_H

#include <iommukit/fmt/lpae.h>
#include "../pgtable/pgtable_internal.h"
#include "lpae_common.h"

#ifndef LPAE_STAGE
#error "define LPAE_STAGE (1 or 2) before including lpae.h"
#endif

/* ---- the facts (ik_pt_fmt_info) ---- */
#if LPAE_STAGE == 1
#define FMT_QUIRKS (IK_PT_QUIRK_DIRTY | IK_PT_QUIRK_ARM_NS | IK_PT_QUIRK_DEFER_LEAF_CLEAN)
#else
#define FMT_QUIRKS (IK_PT_QUIRK_DIRTY | IK_PT_QUIRK_DEFER_LEAF_CLEAN)
#endif
#define FMT_HAS_DIRTY 1
#define FMT_FLAGS IK_LPAE_FLAG_LPA2
/* 49..52 need the 64K granule or LPA2 (lpae_geometry checks) */
#define FMT_IAS_WIDTHS IK_PT_WIDTHS(32, 52)
/* PARange: 32, 36, 40, 42, 44, 48 or 52 bits */
#define FMT_OAS_WIDTHS ((1ull << 32) | (1ull << 36) | (1ull << 40) | (1ull << 42) | \
			(1ull << 44) | (1ull << 48) | (1ull << 52))
/* Every block the architecture allows (the 52-bit ones need LPA2 / oas 52). */
#define FMT_GRANULES                                                             \
	{ { 1ull << 12, (1ull << 12) | (1ull << 21) | (1ull << 30) | (1ull << 39) }, \
	  { 1ull << 14, (1ull << 14) | (1ull << 25) | (1ull << 36) },                \
	  { 1ull << 16, (1ull << 16) | (1ull << 29) | (1ull << 42) } }
#define FMT_HW_LEVELS_UP 0
/* OA[51:48] (64K) or OA[51:50] (LPA2) sit below the rest of the address. */
#define FMT_LEAF_LINEAR_LG2 48

/* Is an engine level an architectural block level for this geometry? */
static inline bool lpae_block_level(const struct ik_pt_geometry *g, unsigned lvl)
{
	return lvl > 0 &&
	       lpae_leaf_level(g->lg2_granule, lpae_ds(g->lg2_granule, g->fmt_flags), g->oas, lvl);
}

/* Descriptor address field <-> address (tables and leaves alike); the
 * level's low bits are the caller's to mask. */
static inline ik_u64 lpae_pte_to_addr(const struct ik_pt_geometry *g, ik_u64 pte)
{
	if (g->lg2_granule == 16)
		return (pte & 0x0000ffffffff0000ull) |
		       ((pte >> IK_LPAE_PTE_LPA_OA_HI_SHIFT) & 0xf) << 48;
	if (g->fmt_flags & IK_LPAE_FLAG_LPA2)
		return (pte & IK_LPAE_PTE_LPA2_ADDR_MASK) |
		       ((pte >> IK_LPAE_PTE_LPA2_OA_HI_SHIFT) & 0x3) << 50;
	return pte & IK_LPAE_PTE_ADDR_MASK;
}

/* addr < 2^oas; 52-bit addresses only where the geometry has them. */
static inline ik_u64 lpae_addr_to_pte(const struct ik_pt_geometry *g, ik_u64 addr)
{
	ik_u64 hi = addr >> 48;

	if (IK_LIKELY(!hi))
		return addr;
	if (g->lg2_granule == 16)
		return (addr & 0x0000ffffffffffffull) | hi << IK_LPAE_PTE_LPA_OA_HI_SHIFT;
	return (addr & 0x0003ffffffffffffull) | (addr >> 50) << IK_LPAE_PTE_LPA2_OA_HI_SHIFT;
}

/* Every descriptor bit that holds address. */
static inline ik_u64 lpae_addr_bits(const struct ik_pt_geometry *g)
{
	if (g->lg2_granule != 16 && (g->fmt_flags & IK_LPAE_FLAG_LPA2))
		return IK_LPAE_PTE_LPA2_ADDR_MASK | 0x3ull << IK_LPAE_PTE_LPA2_OA_HI_SHIFT;
	return IK_LPAE_PTE_ADDR_MASK;	/* 64K: [47:16] and [15:12] */
}

static int lpae_geometry(struct ik_pt_geometry *g, const struct ik_pgtable_cfg *cfg)
{
	/* quirks, fmt_flags, ias, oas and the granule are checked (FMT_*) */
	unsigned glg2 = (unsigned)ik_ctz64(cfg->pgsize_bitmap);
	unsigned bits, va_bits, nlevels, top_bits, concat = 1, lvl;
	bool ds = lpae_ds(glg2, cfg->fmt_flags);
	ik_u64 bitmap;

	/* 52-bit input or output addresses: 64K, or 4K/16K with DS. */
	if (glg2 != 16 && !ds && (cfg->ias > 48 || cfg->oas > 48))
		return -EINVAL;
	bits = glg2 - 3;
	va_bits = cfg->ias - glg2;
	nlevels = (va_bits + bits - 1) / bits;
	top_bits = va_bits - (nlevels - 1) * bits;
	if (LPAE_STAGE == 2 && nlevels > 1 && top_bits <= 4) {
		/* Start one level lower with 2^top_bits concatenated tables. */
		concat = 1u << top_bits;
		nlevels--;
		top_bits += bits;
	}
	/* Start levels: stage 1 any of -1..3 (level -1 only for a 4K LPA2
	 * table over 48 bits, which is what the arithmetic gives); stage 2 as
	 * SL0 encodes them (lpae_s2_start_ok). */
	if (nlevels > 5 || nlevels < 1)
		return -EINVAL;
	if (LPAE_STAGE == 2 && !lpae_s2_start_ok(glg2, ds, nlevels))
		return -EINVAL;
	ik_pt_geometry_from_cfg(g, cfg);
	g->nlevels = (ik_u8)nlevels;
	g->lg2_granule = (ik_u8)glg2;
	g->bits = (ik_u8)bits;
	g->top_bits = (ik_u8)top_bits;
	g->hw_start_level = 4u - nlevels;	/* level -1: (ik_u32)-1 */
	g->concat = concat;
	g->root_size = 8ull << top_bits;
	if (g->root_size < 64)
		g->root_size = 64;
	bitmap = 1ull << glg2;
	g->leaf_levels = 1;
	for (lvl = 1; lvl < nlevels; lvl++) {
		unsigned shift = glg2 + lvl * bits;

		if (lpae_block_level(g, lvl) && (cfg->pgsize_bitmap & (1ull << shift))) {
			g->leaf_levels |= 1u << lvl;
			bitmap |= 1ull << shift;
		}
	}
	g->pgsize_bitmap = bitmap;
	return 0;
}

static inline bool lpae_is_table(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	return lvl > 0 && (pte & IK_LPAE_PTE_TYPE_MASK) == IK_LPAE_PTE_TYPE_TABLE;
}

static inline bool lpae_is_valid(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	ik_u64 type = pte & IK_LPAE_PTE_TYPE_MASK;

	if (!(pte & 1))
		return false;
	if (lvl == 0)
		return type == IK_LPAE_PTE_TYPE_PAGE;
	if (type == IK_LPAE_PTE_TYPE_TABLE)
		return true;
	return lpae_block_level(g, lvl);
}

static inline ik_u64 lpae_table_addr(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)lvl;
	return lpae_pte_to_addr(g, pte) & ~((1ull << g->lg2_granule) - 1);
}

static inline ik_u64 lpae_leaf_addr(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	unsigned shift = g->lg2_granule + lvl * g->bits;

	return lpae_pte_to_addr(g, pte) & ~((1ull << shift) - 1);
}

static inline ik_u64 lpae_mk_table(const struct ik_pt_geometry *g, ik_u64 table_iommu, unsigned lvl)
{
	ik_u64 pte = lpae_addr_to_pte(g, table_iommu) | IK_LPAE_PTE_TYPE_TABLE;

	(void)lvl;
	if (LPAE_STAGE == 1 && (g->quirks & IK_PT_QUIRK_ARM_NS))
		pte |= IK_LPAE_PTE_NSTABLE;
	return pte;
}

static inline int lpae_prot_attrs(const struct ik_pt_geometry *g, unsigned prot, ik_u64 *attrs)
{
	ik_u64 a = IK_LPAE_PTE_AF;

	/* With DS, bits [9:8] hold OA[51:50]: shareability is TCR.SH0's. */
	if (lpae_ds(g->lg2_granule, g->fmt_flags))
		;
	else if (prot & IK_PROT_CACHE)
		a |= IK_LPAE_PTE_SH_IS;
	else
		a |= IK_LPAE_PTE_SH_OS;
	if (LPAE_STAGE == 1) {
		a |= IK_LPAE_PTE_NG;
		if (!(prot & IK_PROT_PRIV))
			a |= IK_LPAE_PTE_AP_UNPRIV;
		if (!(prot & IK_PROT_WRITE))
			a |= IK_LPAE_PTE_AP_RDONLY;
		else if (g->quirks & IK_PT_QUIRK_DIRTY)
			a |= IK_LPAE_PTE_DBM | IK_LPAE_PTE_AP_RDONLY; /* writable-clean */
		if (prot & (IK_PROT_NOEXEC | IK_PROT_MMIO))
			a |= IK_LPAE_PTE_UXN | IK_LPAE_PTE_PXN;
		if (prot & IK_PROT_CACHE)
			a |= (ik_u64)IK_LPAE_MAIR_IDX_WBRWA << IK_LPAE_PTE_ATTRINDX_SHIFT;
		else if (prot & IK_PROT_MMIO)
			a |= (ik_u64)IK_LPAE_MAIR_IDX_DEV << IK_LPAE_PTE_ATTRINDX_SHIFT;
		else
			a |= (ik_u64)IK_LPAE_MAIR_IDX_NC << IK_LPAE_PTE_ATTRINDX_SHIFT;
		if (g->quirks & IK_PT_QUIRK_ARM_NS)
			a |= IK_LPAE_PTE_NS;
	} else {
		if (prot & IK_PROT_READ)
			a |= IK_LPAE_PTE_S2AP_READ;
		if (!(prot & IK_PROT_WRITE))
			;
		else if (g->quirks & IK_PT_QUIRK_DIRTY)
			a |= IK_LPAE_PTE_DBM;	/* writable-clean: S2AP[1] = 0 */
		else
			a |= IK_LPAE_PTE_S2AP_WRITE;
		if (prot & (IK_PROT_NOEXEC | IK_PROT_MMIO))
			a |= IK_LPAE_PTE_UXN;
		if (prot & IK_PROT_CACHE)
			a |= IK_LPAE_S2_MEMATTR_WB << IK_LPAE_PTE_S2_MEMATTR_SHIFT;
		else if (prot & IK_PROT_MMIO)
			a |= IK_LPAE_S2_MEMATTR_DEV << IK_LPAE_PTE_S2_MEMATTR_SHIFT;
		else
			a |= IK_LPAE_S2_MEMATTR_NC << IK_LPAE_PTE_S2_MEMATTR_SHIFT;
	}
	*attrs = a;
	return 0;
}

static inline ik_u64 lpae_mk_leaf(const struct ik_pt_geometry *g, ik_u64 attrs, ik_u64 oa,
				 unsigned lvl)
{
	return attrs | lpae_addr_to_pte(g, oa) |
	       (lvl ? IK_LPAE_PTE_TYPE_BLOCK : IK_LPAE_PTE_TYPE_PAGE);
}

static inline ik_u64 lpae_leaf_attrs(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)lvl;
	return pte & ~(lpae_addr_bits(g) | IK_LPAE_PTE_TYPE_MASK);
}

/* Hierarchical limits from table descriptors (stage 1 only). */
struct lpae_walk_state {
	bool ro;	/* APTable[1]: no writes below */
	bool nounpriv;	/* APTable[0]: no unprivileged access below */
	bool xn;	/* XNTable (UXNTable) */
	bool pxn;	/* PXNTable */
};

static inline void lpae_walk_init(const struct ik_pt_geometry *g, struct lpae_walk_state *st)
{
	(void)g;
	st->ro = st->nounpriv = st->xn = st->pxn = false;
}

static inline enum ik_pt_fault lpae_walk_table(const struct ik_pt_geometry *g,
					      struct lpae_walk_state *st, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	if (LPAE_STAGE == 1) {
		if (pte & (2ull << IK_LPAE_PTE_APTABLE_SHIFT))
			st->ro = true;
		if (pte & (1ull << IK_LPAE_PTE_APTABLE_SHIFT))
			st->nounpriv = true;
		if (pte & IK_LPAE_PTE_XNTABLE)
			st->xn = true;
		if (pte & IK_LPAE_PTE_PXNTABLE)
			st->pxn = true;
	}
	return IK_PT_FAULT_NONE;
}

/* Stage 1 leaf: AP, APTable/XNTable limits, AttrIndx; HA/HD with
 * IK_PT_QUIRK_DIRTY (AP[2] is the dirty bit of a DBM leaf). */
static inline enum ik_pt_fault lpae_walk_leaf_s1(const struct ik_pt_geometry *g,
						 const struct lpae_walk_state *st, ik_u64 pte,
						 unsigned access, struct ik_pt_walk_result *res,
						 ik_u64 *hw_new)
{
	unsigned prot = 0;
	bool hw_dirty = (g->quirks & IK_PT_QUIRK_DIRTY) != 0;
	ik_u64 nv = pte;
	bool dbm = hw_dirty && (pte & IK_LPAE_PTE_DBM);
	bool wr = !(pte & IK_LPAE_PTE_AP_RDONLY) || dbm;
	unsigned idx = (unsigned)(pte >> IK_LPAE_PTE_ATTRINDX_SHIFT) & 7;
	bool unpriv = (pte & IK_LPAE_PTE_AP_UNPRIV) && !st->nounpriv;
	bool priv_access = (access & IK_ACCESS_PRIV) != 0;
	bool xn;

	if (st->ro)
		wr = false;
	prot = IK_PROT_READ | (wr ? IK_PROT_WRITE : 0);
	if (!unpriv)
		prot |= IK_PROT_PRIV;
	xn = priv_access ? ((pte & IK_LPAE_PTE_PXN) || st->pxn)
			 : ((pte & IK_LPAE_PTE_UXN) || st->xn);
	if ((pte & (IK_LPAE_PTE_UXN | IK_LPAE_PTE_PXN)) || st->xn || st->pxn)
		prot |= IK_PROT_NOEXEC;
	if (idx == IK_LPAE_MAIR_IDX_WBRWA)
		prot |= IK_PROT_CACHE;
	else if (idx == IK_LPAE_MAIR_IDX_DEV)
		prot |= IK_PROT_MMIO;
	res->attr = idx;
	res->dirty = (pte & IK_LPAE_PTE_DBM) && !(pte & IK_LPAE_PTE_AP_RDONLY);
	res->prot = prot;
	*hw_new = pte;
	if (!(pte & IK_LPAE_PTE_AF)) {
		if (!hw_dirty)	/* HA is enabled with HD */
			return IK_PT_FAULT_ACCESS_FLAG;
		nv |= IK_LPAE_PTE_AF;
	}
	if (access) {
		if (!priv_access && !unpriv)
			return IK_PT_FAULT_PERMISSION;
		if ((access & IK_ACCESS_WRITE) && !wr)
			return IK_PT_FAULT_PERMISSION;
		if ((access & IK_ACCESS_EXEC) && xn)
			return IK_PT_FAULT_PERMISSION;
		if ((access & IK_ACCESS_WRITE) && dbm)
			nv &= ~IK_LPAE_PTE_AP_RDONLY; /* hardware marks it dirty */
	}
	*hw_new = nv;
	return IK_PT_FAULT_NONE;
}

/* Stage 2 leaf: S2AP, MemAttr, XN; HA/HD with IK_PT_QUIRK_DIRTY (S2AP[1]
 * is the dirty bit of a DBM leaf). */
static inline enum ik_pt_fault lpae_walk_leaf_s2(const struct ik_pt_geometry *g, ik_u64 pte,
						 unsigned access, struct ik_pt_walk_result *res,
						 ik_u64 *hw_new)
{
	unsigned prot = 0;
	bool hw_s2 = (g->quirks & IK_PT_QUIRK_DIRTY) != 0;
	ik_u64 nv = pte;
	ik_u64 ma = (pte >> IK_LPAE_PTE_S2_MEMATTR_SHIFT) & 0xf;
	bool dbm = hw_s2 && (pte & IK_LPAE_PTE_DBM);

	if (pte & IK_LPAE_PTE_S2AP_READ)
		prot |= IK_PROT_READ;
	if ((pte & IK_LPAE_PTE_S2AP_WRITE) || dbm)
		prot |= IK_PROT_WRITE;
	if (pte & IK_LPAE_PTE_UXN)
		prot |= IK_PROT_NOEXEC;
	if (ma == IK_LPAE_S2_MEMATTR_WB)
		prot |= IK_PROT_CACHE;
	else if ((ma & 0xc) == 0)
		prot |= IK_PROT_MMIO;
	res->attr = ma;
	res->dirty = (pte & IK_LPAE_PTE_DBM) && (pte & IK_LPAE_PTE_S2AP_WRITE);
	res->prot = prot;
	*hw_new = pte;
	if (!(pte & IK_LPAE_PTE_AF)) {
		if (!hw_s2)
			return IK_PT_FAULT_ACCESS_FLAG;
		nv |= IK_LPAE_PTE_AF;
	}
	if (access) {
		if ((access & IK_ACCESS_READ) && !(prot & IK_PROT_READ))
			return IK_PT_FAULT_PERMISSION;
		if ((access & IK_ACCESS_WRITE) && !(prot & IK_PROT_WRITE))
			return IK_PT_FAULT_PERMISSION;
		if ((access & IK_ACCESS_EXEC) && (prot & IK_PROT_NOEXEC))
			return IK_PT_FAULT_PERMISSION;
		if ((access & IK_ACCESS_WRITE) && dbm)
			nv |= IK_LPAE_PTE_S2AP_WRITE; /* hardware marks it dirty */
	}
	*hw_new = nv;
	return IK_PT_FAULT_NONE;
}

static inline enum ik_pt_fault lpae_walk_leaf(const struct ik_pt_geometry *g,
					     const struct lpae_walk_state *st, ik_u64 pte,
					     unsigned lvl, unsigned access,
					     struct ik_pt_walk_result *res, ik_u64 *hw_new)
{
	(void)lvl;
	if (LPAE_STAGE == 1)
		return lpae_walk_leaf_s1(g, st, pte, access, res, hw_new);
	(void)st;
	return lpae_walk_leaf_s2(g, pte, access, res, hw_new);
}

/* Dirty state (DBM = 1 leaves only): stage 1 writable-dirty = AP[2] clear;
 * stage 2 writable-dirty = S2AP[1] set. */
static inline bool lpae_leaf_dirty(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	if (!(pte & IK_LPAE_PTE_DBM))
		return false;
	return LPAE_STAGE == 1 ? !(pte & IK_LPAE_PTE_AP_RDONLY) : (pte & IK_LPAE_PTE_S2AP_WRITE) != 0;
}

static inline ik_u64 lpae_leaf_mkclean(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	if (!(pte & IK_LPAE_PTE_DBM))
		return pte;
	return LPAE_STAGE == 1 ? pte | IK_LPAE_PTE_AP_RDONLY : pte & ~IK_LPAE_PTE_S2AP_WRITE;
}

/*
 * The format contract's names (src/pgtable/pgtable_internal.h): the engine
 * template calls fmt_*; this format defines lpae_*, so each definition has
 * one name of its own (ctags, cscope and backtraces find it).
 */
#define fmt_geometry lpae_geometry
#define fmt_is_table lpae_is_table
#define fmt_is_valid lpae_is_valid
#define fmt_leaf_addr lpae_leaf_addr
#define fmt_leaf_attrs lpae_leaf_attrs
#define fmt_leaf_dirty lpae_leaf_dirty
#define fmt_leaf_mkclean lpae_leaf_mkclean
#define fmt_mk_leaf lpae_mk_leaf
#define fmt_mk_table lpae_mk_table
#define fmt_prot_attrs lpae_prot_attrs
#define fmt_table_addr lpae_table_addr
#define fmt_walk_init lpae_walk_init
#define fmt_walk_leaf lpae_walk_leaf
#define fmt_walk_state lpae_walk_state
#define fmt_walk_table lpae_walk_table

#endif /* IK_SRC_FMT_LPAE_H */
