/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/fmt/riscv.h - the RISC-V IOMMU formats' side of the format
 * contract (see src/pgtable/pgtable_internal.h): Sv39/48/57 first stage and
 * Sv39x4/48x4/57x4 G-stage.  Not API.  The entry layout is described in
 * include/iommukit/fmt/riscv.h.
 *
 * The including file defines RISCV_G to 0 (first stage, IK_PT_RISCV_S1) or
 * 1 (G-stage, IK_PT_RISCV_S2); every test of it is a compile-time constant.
 *
 * The PPN field holds oa >> 12 at bit 10, so a leaf is linear in its output
 * address with a step of d >> 2: FMT_LEAF_OA_SHIFT 2.
 *
 * attrs: the leaf minus its PPN (V, R, W, X, U, A, D); the same at every
 * level (a RISC-V superpage has no type bit of its own).
 */
#ifndef IK_SRC_FMT_RISCV_H
#define IK_SRC_FMT_RISCV_H

#include "../pgtable/pgtable_internal.h"
#include <iommukit/fmt/riscv.h>

#ifndef RISCV_G
#error "define RISCV_G to 0 (first stage) or 1 (G-stage) before including riscv.h"
#endif

/* ---- the facts (ik_pt_fmt_info) ---- */
#define FMT_QUIRKS (IK_PT_QUIRK_DIRTY | IK_PT_QUIRK_DEFER_LEAF_CLEAN)
#define FMT_HAS_DIRTY 1
#if RISCV_G
#define FMT_FLAGS 0ull
#define FMT_IAS_WIDTHS IK_PT_WIDTHS(32, 59)	/* 3 levels to 41, 4 to 50, 5 to 59 */
#else
#define FMT_FLAGS IK_RISCV_FLAG_SUM
#define FMT_IAS_WIDTHS IK_PT_WIDTHS(32, 56)	/* lower half: 38, 47, 56 */
#endif
#define FMT_OAS_WIDTHS IK_PT_WIDTHS(32, 56)
/* Leaves at every level: 4K, 2M, 1G, 512G, 256T (as the levels allow). */
#define FMT_GRANULES { { 1ull << 12, (1ull << 12) | (1ull << 21) | (1ull << 30) | \
				     (1ull << 39) | (1ull << 48) } }
#define FMT_HW_LEVELS_UP 1
#define FMT_LEAF_OA_SHIFT 2

#define RISCV_RWX (IK_RISCV_PTE_R | IK_RISCV_PTE_W | IK_RISCV_PTE_X)
/* Bits a supported entry must have clear: reserved, PBMT, N. */
#define RISCV_RSVD (IK_RISCV_PTE_RSVD_MASK | IK_RISCV_PTE_PBMT_MASK | IK_RISCV_PTE_N)

IK_ALWAYS_INLINE ik_u64 riscv_lvl_size(unsigned lvl)
{
	return (ik_u64)1 << (12 + 9 * lvl);
}

/* Levels for `ias` input bits: a mode of n levels spans 12 + 9 n bits, of
 * which the first stage maps the lower half (one bit less) and the x4
 * G-stage two bits more. */
IK_INLINE unsigned riscv_levels_for_ias(unsigned ias)
{
	unsigned w3 = RISCV_G ? 41u : 38u, w4 = RISCV_G ? 50u : 47u;

	return ias <= w3 ? 3u : ias <= w4 ? 4u : 5u;
}

IK_INLINE int riscv_geometry(struct ik_pt_geometry *g, const struct ik_pgtable_cfg *cfg)
{
	/* quirks, fmt_flags, ias, oas and the granule are checked (FMT_*) */
	unsigned lvl;

	ik_pt_geometry_from_cfg(g, cfg);
	g->nlevels = (ik_u8)riscv_levels_for_ias(cfg->ias);
	g->lg2_granule = 12;
	g->bits = 9;
	/* The IOMMU indexes the root with the mode's full width, whatever ias
	 * the driver uses: a whole 4 KiB page, or 16 KiB for the x4 G-stage. */
	g->top_bits = RISCV_G ? 11 : 9;
	g->root_size = 8ull << g->top_bits;
	g->hw_start_level = g->nlevels;
	g->concat = RISCV_G ? 4 : 1;
	g->leaf_levels = 0;
	g->pgsize_bitmap = 0;
	for (lvl = 0; lvl < g->nlevels; lvl++) {
		if (cfg->pgsize_bitmap & riscv_lvl_size(lvl)) {
			g->leaf_levels |= 1u << lvl;
			g->pgsize_bitmap |= riscv_lvl_size(lvl);
		}
	}
	return 0;
}

IK_ALWAYS_INLINE bool riscv_is_table(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	return lvl > 0 && !(pte & RISCV_RWX);
}

IK_ALWAYS_INLINE bool riscv_is_valid(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return (pte & IK_RISCV_PTE_V) != 0;
}

IK_ALWAYS_INLINE ik_u64 riscv_table_addr(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return IK_RISCV_PTE_ADDR(pte);
}

IK_ALWAYS_INLINE ik_u64 riscv_leaf_addr(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	/* PPN bits below a superpage's size are a fault, not an address. */
	return IK_RISCV_PTE_ADDR(pte) & ~(riscv_lvl_size(lvl) - 1);
}

IK_ALWAYS_INLINE ik_u64 riscv_mk_table(const struct ik_pt_geometry *g, ik_u64 table_iommu,
				     unsigned lvl)
{
	(void)g;
	(void)lvl;
	return IK_RISCV_PTE_PPN(table_iommu) | IK_RISCV_PTE_V;
}

IK_INLINE int riscv_prot_attrs(const struct ik_pt_geometry *g, unsigned prot, ik_u64 *attrs)
{
	/* A preset: an IOMMU without A/D updates faults on A = 0. */
	ik_u64 a = IK_RISCV_PTE_V | IK_RISCV_PTE_A | IK_RISCV_PTE_R;

	/* W without R is reserved: a write-only mapping also reads (as x86).
	 * NOEXEC clears X.  G-stage: U always (guest accesses are user-mode
	 * as far as the G-stage is concerned); PRIV means nothing there.
	 * CACHE / MMIO: no PBMT, the PMAs decide. */
	if (prot & IK_PROT_WRITE) {
		a |= IK_RISCV_PTE_W;
		if (!(g->quirks & IK_PT_QUIRK_DIRTY))
			a |= IK_RISCV_PTE_D;
	}
	if (!(prot & IK_PROT_NOEXEC))
		a |= IK_RISCV_PTE_X;
	if (RISCV_G || !(prot & IK_PROT_PRIV))
		a |= IK_RISCV_PTE_U;
	*attrs = a;
	return 0;
}

IK_ALWAYS_INLINE ik_u64 riscv_mk_leaf(const struct ik_pt_geometry *g, ik_u64 attrs, ik_u64 oa,
				    unsigned lvl)
{
	(void)g;
	(void)lvl;
	return attrs | (oa >> (12 - IK_RISCV_PTE_PPN_SHIFT));
}

IK_ALWAYS_INLINE ik_u64 riscv_leaf_attrs(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	ik_u64 ppn = IK_RISCV_PTE_PPN(riscv_leaf_addr(g, pte, lvl));

	return pte & ~ppn;
}

/* ---- hardware view ---- */

/* RISC-V tables carry no hierarchical permissions. */
struct riscv_walk_state {
	char unused;
};

IK_ALWAYS_INLINE void riscv_walk_init(const struct ik_pt_geometry *g, struct riscv_walk_state *st)
{
	(void)g;
	st->unused = 0;
}

IK_INLINE enum ik_pt_fault riscv_walk_table(const struct ik_pt_geometry *g,
					  struct riscv_walk_state *st, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)st;
	(void)lvl;
	return (pte & RISCV_RSVD) ? IK_PT_FAULT_RESERVED : IK_PT_FAULT_NONE;
}

/* The permission check of a decoded leaf (IK_PROT_* in prot). */
IK_INLINE bool riscv_access_ok(const struct ik_pt_geometry *g, unsigned prot, unsigned access)
{
	if (((access & IK_ACCESS_READ) && !(prot & IK_PROT_READ)) ||
	    ((access & IK_ACCESS_WRITE) && !(prot & IK_PROT_WRITE)) ||
	    ((access & IK_ACCESS_EXEC) && (prot & IK_PROT_NOEXEC)))
		return false;
	if (RISCV_G)
		return true;
	if (!(access & IK_ACCESS_PRIV))
		return !(prot & IK_PROT_PRIV);
	/* S-mode on a U page: never fetch; read/write only with SUM */
	if (!(prot & IK_PROT_PRIV))
		return !(access & IK_ACCESS_EXEC) && (g->fmt_flags & IK_RISCV_FLAG_SUM);
	return true;
}

IK_INLINE enum ik_pt_fault riscv_walk_leaf(const struct ik_pt_geometry *g,
					 const struct riscv_walk_state *st, ik_u64 pte,
					 unsigned lvl, unsigned access,
					 struct ik_pt_walk_result *res, ik_u64 *hw_new)
{
	ik_u64 want;
	unsigned prot = 0;

	(void)st;
	*hw_new = pte;
	/* level 0 without R/W/X, W without R, reserved bits, misaligned
	 * superpage PPN: page faults of a malformed entry */
	if (!(pte & RISCV_RWX) || (pte & (IK_RISCV_PTE_R | IK_RISCV_PTE_W)) == IK_RISCV_PTE_W ||
	    (pte & RISCV_RSVD) || (IK_RISCV_PTE_ADDR(pte) & (riscv_lvl_size(lvl) - 1)))
		return IK_PT_FAULT_RESERVED;
	if (pte & IK_RISCV_PTE_R)
		prot |= IK_PROT_READ;
	if (pte & IK_RISCV_PTE_W)
		prot |= IK_PROT_WRITE;
	if (!(pte & IK_RISCV_PTE_X))
		prot |= IK_PROT_NOEXEC;
	if (!(pte & IK_RISCV_PTE_U))
		prot |= IK_PROT_PRIV;
	res->prot = prot;
	res->attr = 0;
	res->dirty = (pte & IK_RISCV_PTE_D) != 0;
	if (!access)
		return IK_PT_FAULT_NONE;
	/* G-stage: a leaf without U faults for every access */
	if ((RISCV_G && !(pte & IK_RISCV_PTE_U)) || !riscv_access_ok(g, prot, access))
		return IK_PT_FAULT_PERMISSION;
	want = IK_RISCV_PTE_A | ((access & IK_ACCESS_WRITE) ? IK_RISCV_PTE_D : 0);
	if ((pte & want) != want) {
		/* A/D updates enabled (SADE / GADE): the DIRTY quirk */
		if (!(g->quirks & IK_PT_QUIRK_DIRTY))
			return IK_PT_FAULT_ACCESS_FLAG;
		*hw_new = pte | want;
		if (access & IK_ACCESS_WRITE)
			res->dirty = true;
	}
	return IK_PT_FAULT_NONE;
}

/* ---- dirty tracking (IK_PT_QUIRK_DIRTY) ---- */

IK_ALWAYS_INLINE bool riscv_leaf_dirty(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return (pte & IK_RISCV_PTE_D) != 0;
}

IK_ALWAYS_INLINE ik_u64 riscv_leaf_mkclean(const struct ik_pt_geometry *g, ik_u64 pte, unsigned lvl)
{
	(void)g;
	(void)lvl;
	return pte & ~IK_RISCV_PTE_D;
}

/*
 * The format contract's names (src/pgtable/pgtable_internal.h): the engine
 * template calls fmt_*; this format defines riscv_*, so each definition has
 * one name of its own (ctags, cscope and backtraces find it).
 */
#define fmt_geometry riscv_geometry
#define fmt_is_table riscv_is_table
#define fmt_is_valid riscv_is_valid
#define fmt_leaf_addr riscv_leaf_addr
#define fmt_leaf_attrs riscv_leaf_attrs
#define fmt_leaf_dirty riscv_leaf_dirty
#define fmt_leaf_mkclean riscv_leaf_mkclean
#define fmt_mk_leaf riscv_mk_leaf
#define fmt_mk_table riscv_mk_table
#define fmt_prot_attrs riscv_prot_attrs
#define fmt_table_addr riscv_table_addr
#define fmt_walk_init riscv_walk_init
#define fmt_walk_leaf riscv_walk_leaf
#define fmt_walk_state riscv_walk_state
#define fmt_walk_table riscv_walk_table

#endif /* IK_SRC_FMT_RISCV_H */
