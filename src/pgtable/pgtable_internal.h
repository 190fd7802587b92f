/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/pgtable/pgtable_internal.h - the page-table engine's internals and the
 * FORMAT CONTRACT.  Not API: nothing here is installed.
 *
 * ===================================================================
 * How to add a page-table format (the format contract)
 * ===================================================================
 *
 * A format family lives in src/fmt/, one naming rule for its files:
 *
 *   src/fmt/FAMILY.h           the FMT_* facts and the static inline
 *                              encoders/decoders listed below, shared by the
 *                              variants of the family (LPAE stage 1 and 2);
 *   src/fmt/FAMILY_VARIANT.c   the instantiation, a few lines:
 *
 *       #include "../pgtable/pgtable_internal.h"
 *       #define IKPT_FMT        IK_PT_LPAE_S1   // enum ik_pt_fmt value
 *       #define IKPT_SYM        lpae_s1         // suffix of its symbols
 *       #define IKPT_NAME       "lpae-s1"       // short name (CLI, JSON)
 *       #define LPAE_STAGE      1               // the family's variant switch
 *       #include "lpae.h"                       // the FMT_* facts, lpae_* functions
 *       #include "../pgtable/pgtable_tmpl.h"    // instantiates the engine
 *
 *       const struct ik_pt_ops ik_pt_ops_lpae_s1 = IKPT_OPS;
 *
 *   src/fmt/FAMILY_regs.c      optional: the family's public register and
 *                              config helpers (TTBR/TCR values, context
 *                              entries, walkers from register values);
 *   src/fmt/FAMILY_common.h    optional: facts FAMILY.h and FAMILY_regs.c
 *                              share (FAMILY.h needs the variant switch).
 *
 * then one line in src/pgtable/pgtable_formats.h (IK_PT_FORMAT(ops)), the
 * files in Makefile.am's pgtable block, a row in the test suite's format
 * table (tests/test_pgtable.c) and in the benchmark's
 * (examples/bench/bench_fmts.c).  Public bit definitions and register
 * helpers' declarations go in include/iommukit/fmt/FAMILY.h.
 *
 * The template names each of its out-of-line functions NAME_<sym>
 * (pt_map_lpae_s1, ...), so that backtraces and profiles tell the formats
 * apart; IKPT_OPS is the initializer of the format's struct ik_pt_ops.
 *
 * Each format header defines the functions below under its family's prefix
 * (lpae_mk_leaf, vtd_mk_leaf, riscv_mk_leaf, amd_mk_leaf, ...: one
 * definition per name in the tree, which ctags and cscope can follow) and
 * binds the contract's names to them at its end
 * (`#define fmt_mk_leaf lpae_mk_leaf`).
 *
 * The engine template (src/pgtable/pgtable_tmpl.h) calls the functions below by
 * these fmt_* names; they are `static inline` in the format header, so every
 * per-entry operation is inlined: no function pointer per PTE.  The runtime
 * format value selects the instantiated `struct ik_pt_ops` once per request.
 *
 * Conventions the engine relies on:
 *   - An entry is 64 bits.  The value 0 is the empty entry, always; the
 *     engine writes only 0, a table entry from fmt_mk_table() or a leaf from
 *     fmt_mk_leaf(); any non-zero entry it finds is a table (fmt_is_table) or
 *     else a leaf.
 *   - Levels count from the leaves: level 0 tables map granule pages; an
 *     entry at level L spans 2^(lg2_granule + L * bits).  The root is level
 *     nlevels - 1 and has 2^top_bits entries (concatenated roots are one table
 *     of 2^top_bits entries in contiguous memory).  Non-root tables have
 *     2^bits entries and take 8 << bits bytes (one granule).
 *   - "attrs" is a format-defined, level-independent encoding of everything in
 *     a leaf except its output address and its page/block type bits.  The
 *     engine computes it once per request (fmt_prot_attrs) or reads it back
 *     from a leaf (fmt_leaf_attrs, to split a block) and passes it to
 *     fmt_mk_leaf for each entry.
 *   - `g` is the geometry fmt_geometry() filled; formats may read any of its
 *     fields (quirks, fmt_flags, oas, ...) at run time.
 *
 * The facts (macros the format header defines; the template makes them the
 * format's struct ik_pt_fmt_info, which ik_pt_fmt_get_info() returns and
 * against which ik_pt_geometry_init() checks every config before
 * fmt_geometry() sees it; see that struct in <iommukit/pgtable.h>):
 *
 *   FMT_QUIRKS        the IK_PT_QUIRK_* bits a config may set
 *   FMT_FLAGS         the fmt_flags bits a config may set
 *   FMT_IAS_WIDTHS    accepted input widths (IK_PT_WIDTHS(lo, hi) or a mask)
 *   FMT_OAS_WIDTHS    accepted output widths
 *   FMT_GRANULES      initializer of the granules array: { { granule,
 *                     leaf sizes }, ... } smallest first
 *   FMT_HW_LEVELS_UP  1: the hardware numbers levels up from the leaves
 *   FMT_HAS_DIRTY     1: fmt_leaf_dirty/fmt_leaf_mkclean exist (hardware
 *                     dirty tracking: IK_PT_CAP_DIRTY); optional, default 0
 *   FMT_LEAF_OA_SHIFT the leaf's address field holds oa >> this (RISC-V:
 *                     2, the PPN of oa >> 12 sits at bit 10); optional,
 *                     default 0 (the address bits in place)
 *   FMT_LEAF_LINEAR_LG2  fmt_mk_leaf is linear in oa only within each
 *                     aligned 2^N window of output addresses (the address
 *                     field is split: ARM 52-bit OA keeps OA[51:48] or
 *                     OA[51:50] in low bits); a run of leaves that crosses
 *                     such a boundary is encoded entry by entry.  Optional,
 *                     default 64 (linear everywhere, no check compiled in)
 *
 * The functions (g: const struct ik_pt_geometry *; pte, attrs, oa: ik_u64;
 * lvl: unsigned engine level):
 *
 *   int fmt_geometry(struct ik_pt_geometry *g, const struct ik_pgtable_cfg *cfg)
 *       cfg has passed the checks of the facts above (quirks, fmt_flags,
 *       ias, oas, and a granule of FMT_GRANULES as the lowest bit of
 *       pgsize_bitmap).  Check what they cannot say (combinations) and fill
 *       every field of *g: fmt, ias, oas, quirks, fmt_flags, nlevels,
 *       lg2_granule, bits, top_bits, leaf_levels, pgsize_bitmap (the
 *       supported subset of cfg's, granule included), root_size (>= 64),
 *       hw_start_level, concat.  -EINVAL if unsupported.  nlevels must not
 *       exceed IK_PT_MAX_LEVELS.
 *   bool fmt_is_table(g, pte, lvl)
 *       pte != 0: does it point to a next-level table?  (Never at level 0.)
 *   bool fmt_is_valid(g, pte, lvl)
 *       Does the hardware treat pte as a valid entry (table or leaf) at this
 *       level?  Used by the walker only; the engine's own entries are always
 *       valid.
 *   ik_u64 fmt_table_addr(g, pte, lvl)
 *       IOMMU address of the next table.  Return every address bit the entry
 *       can hold (not masked to oas): the walker reports ADDR_SIZE if it is
 *       beyond oas.
 *   ik_u64 fmt_leaf_addr(g, pte, lvl)
 *       Output address of the leaf's first byte (likewise unmasked).
 *   ik_u64 fmt_mk_table(g, ik_u64 table_iommu, lvl)
 *       A table entry at level lvl pointing to a table (of level lvl - 1) at
 *       IOMMU address table_iommu, with no hierarchical restriction.
 *   int fmt_prot_attrs(g, unsigned prot, ik_u64 *attrs)
 *       Encode IK_PROT_* (already checked by the engine: READ or WRITE set,
 *       no unknown bits, not CACHE|MMIO) into attrs.  With IK_PT_QUIRK_DIRTY,
 *       a writable mapping starts writable-clean.  -EINVAL if the format
 *       cannot express prot.
 *   ik_u64 fmt_mk_leaf(g, attrs, oa, lvl)
 *       A leaf at level lvl (lvl in leaf_levels) for output address oa
 *       (aligned to the level's size).  The per-PTE hot path: keep it to a few
 *       ORs.  It must be linear in oa: fmt_mk_leaf(g, attrs, oa + d, lvl) ==
 *       fmt_mk_leaf(g, attrs, oa, lvl) + (d >> FMT_LEAF_OA_SHIFT) for any
 *       multiple d of the level's size that keeps oa + d below 2^oas and in
 *       the same aligned 2^FMT_LEAF_LINEAR_LG2 window as oa (within it, the
 *       address field is one run of bits that no attribute overlaps); the
 *       engine fills runs by adding.
 *   ik_u64 fmt_leaf_attrs(g, pte, lvl)
 *       attrs such that fmt_mk_leaf(g, attrs, fmt_leaf_addr(g, pte, lvl), lvl)
 *       == pte, and such that a leaf made at another level from them has the
 *       same permissions, attributes and dirty state.
 *
 *   Hardware view (walker):
 *   struct fmt_walk_state
 *       Whatever the format accumulates across table entries (ARM APTable /
 *       XNTable / PXNTable, x86 R/W, U/S, XD of upper levels).
 *   void fmt_walk_init(g, struct fmt_walk_state *st)
 *   enum ik_pt_fault fmt_walk_table(g, struct fmt_walk_state *st, pte, lvl)
 *       A valid table entry was read: accumulate its restrictions; a fault
 *       (e.g. reserved bits: IK_PT_FAULT_RESERVED) or IK_PT_FAULT_NONE.
 *   enum ik_pt_fault fmt_walk_leaf(g, const struct fmt_walk_state *st, pte,
 *                                  lvl, unsigned access,
 *                                  struct ik_pt_walk_result *res,
 *                                  ik_u64 *hw_new)
 *       A valid leaf was read.  Fill res->prot (after hierarchical limits),
 *       res->attr, res->dirty; check `access` (IK_ACCESS_*; 0: no check) and
 *       return IK_PT_FAULT_RESERVED (malformed leaf, checked first) /
 *       _PERMISSION / _ACCESS_FLAG / _NONE.  Set *hw_new to
 *       the value the hardware would write back for this access (access flag,
 *       dirty state), or to pte if none.  The generic walker does the
 *       address-size checks, the offsets, and the update through mem->cas64.
 *
 *   Optional walker hooks, for tables the engine did not build (each with a
 *   fact that defaults to 0, in which case the hook is not called; the
 *   engine's own entries never need them):
 *   FMT_HAS_LEAF_SIZE 1: ik_u64 fmt_leaf_size(g, pte, lvl)
 *       The size of the page a valid leaf maps, when it can differ from
 *       the level's entry size (AMD next-level-7 pages, replicated over
 *       every entry they cover): the walker reports it as pgsize and
 *       takes the offset into the page modulo it; fmt_leaf_addr() must
 *       return the page's first byte.  Default: the level's size.
 *   FMT_HAS_SKIP 1: unsigned fmt_table_level(g, pte, lvl)
 *       The engine level of the table a table entry points to, below lvl
 *       (fmt_walk_table() faults entries where it would not be); the walker
 *       descends to it directly, and faults (TRANSLATION) an iova whose
 *       bits of the skipped levels are not zero (AMD level skipping).
 *       Default: lvl - 1.
 *
 *   Dirty tracking (only if FMT_HAS_DIRTY is 1):
 *   bool fmt_leaf_dirty(g, pte, lvl)     written by the device since clean?
 *   ik_u64 fmt_leaf_mkclean(g, pte, lvl) pte made writable-clean again.
 *
 * Names: the template's own functions and macros start with pt_ / PT_ /
 * IKPT_ (IKPT_ also for what the format's .c tells it); a format header
 * must not use those prefixes (use fmt_ / FMT_ and its own family prefix,
 * e.g. lpae_, vtd_).
 *
 * The engine never looks at format bits itself; if a format needs a new
 * capability, add it here (with a default) rather than special-casing the
 * engine.
 * ===================================================================
 */
#ifndef IK_PGTABLE_INTERNAL_H
#define IK_PGTABLE_INTERNAL_H

#include <iommukit/pgtable.h>
#include <iommukit/atomic.h>
#include <iommukit/lock.h>

/* The deepest table set any format builds (AMD v1 Mode 6). */
#define IK_PT_MAX_LEVELS 6

/*
 * struct ik_pt_tbl - the engine's bookkeeping for one table page.
 *
 * The IOMMU sees only `cpu`'s contents.  `child[i]` mirrors entry i of a
 * non-level-0 table: the bookkeeping of the table that entry points to (NULL
 * when the entry is empty or a leaf).  It is how the engine gets from an
 * entry to the CPU address of the next table without a phys-to-virt hook.
 *
 * Installing a child (map, split): the installer publishes child[i] with a
 * CAS from NULL (C1), then stores the table entry with release (C2).  A
 * reader loads the entry with acquire (pairs with C2); if it is a table,
 * child[i] is set (C1 happened before C2).  A CAS loser of C1 waits until
 * the entry turns into a table entry, then uses the winner's table.
 * Unlinking (unmap of the table's whole span): entry cleared (relaxed; the
 * range is the unmapper's), then child[i] = NULL.
 */
struct ik_pt_tbl {
	ik_u64 *cpu;			/* entries (CPU address) */
	ik_u64 iommu;			/* IOMMU address of the entries */
	struct ik_pt_tbl *next;	/* link: cache, pool, gather, free list */
	struct ik_pt_tbl **child;	/* NULL at level 0; else one per entry */
	ik_u32 level;
	ik_u32 nent;			/* entries */
	ik_u32 nleaf;			/* leaf entries (relaxed atomic) */
	ik_u32 flags;			/* IK_PT_TBL_* */
	ik_u64 stamp;			/* request that created it (relaxed) */
	void *raw;			/* default allocation's base, if over-aligned */
};
#define IK_PT_TBL_ROOT 0x1u

/*
 * The child array of a table that has one: it lies right after the
 * bookkeeping, in the same allocation (pt_tbl_alloc() sets t->child to
 * t + 1 and nothing changes it), so a descent computes its address from t
 * instead of loading t->child: one dependent load per level (the child
 * pointer), not two.  Only for tables with a child array (not level 0).
 */
static inline struct ik_pt_tbl **ik_pt_tbl_children(const struct ik_pt_tbl *t)
{
	IK_ASSERT(t->child == (struct ik_pt_tbl **)(void *)(ik_uptr)(t + 1));
	return (struct ik_pt_tbl **)(void *)(ik_uptr)(t + 1);
}

/*
 * The start of every fmt_geometry(): *g zeroed, and the fields that come
 * straight from the (checked) config copied: fmt, ias, oas, quirks,
 * fmt_flags.  The format fills in the rest.
 */
static inline void ik_pt_geometry_from_cfg(struct ik_pt_geometry *g,
					   const struct ik_pgtable_cfg *cfg)
{
	IK_ENV_MEMSET(g, 0, sizeof(*g));
	g->fmt = cfg->fmt;
	g->ias = cfg->ias;
	g->oas = cfg->oas;
	g->quirks = cfg->quirks;
	g->fmt_flags = cfg->fmt_flags;
}

struct ik_pt_ops;

/*
 * A list of table pages of each kind: level-0 tables, and tables with a
 * child array (the page is the same size; the array stays with its page).
 * A request's pool holds the pages it obtained before writing anything (so
 * that it fails with -ENOMEM before it changes anything; unused pages go
 * back to the cache at its end); the table set's cache holds freed pages
 * for the next request.
 */
struct ik_pt_pool {
	struct ik_pt_tbl *upper;	/* tables with a child array */
	struct ik_pt_tbl *leaf;		/* level-0 tables */
};

/* Put t on the pool's list of its kind.  O(1). */
static inline void ik_pt_pool_push(struct ik_pt_pool *pool, struct ik_pt_tbl *t)
{
	struct ik_pt_tbl **list = t->child ? &pool->upper : &pool->leaf;

	t->next = *list;
	*list = t;
}

/* Take a table for `level` (with a child array unless level 0) off the
 * pool, or NULL if it has none of that kind.  O(1). */
static inline struct ik_pt_tbl *ik_pt_pool_pop(struct ik_pt_pool *pool, unsigned level)
{
	struct ik_pt_tbl **list = level ? &pool->upper : &pool->leaf;
	struct ik_pt_tbl *t = *list;

	if (t)
		*list = t->next;
	return t;
}

/* The table set. */
struct ik_pgtable {
	struct ik_pt_geometry geom;
	struct ik_pgtable_cfg cfg;
	struct ik_pgtable_hooks hooks;	/* cfg->hooks with defaults filled in */
	const struct ik_pt_ops *ops;
	struct ik_pt_tbl *root;

	/* freed-table cache, under cache_lock */
	ik_lock_t cache_lock;
	struct ik_pt_pool cache;
	ik_u32 cache_n_leaf;
	ik_u32 cache_n_upper;
	ik_u64 seq;			/* request stamps (relaxed atomic) */

	/* statistics (relaxed atomics) */
	ik_u64 st_tables_alloc;
	ik_u64 st_tables_freed;
	ik_u64 st_tables_live;
	ik_u64 st_cache_hits;
	ik_u64 st_cas_lost;
	ik_u64 st_splits;
};

/* Pages kept in the freed-table cache at most, per kind (level-0 tables
 * and tables with a child array). */
#define IK_PT_CACHE_MAX 16

/* Bits lo..hi set (lo <= hi <= 63): a range of address widths. */
#define IK_PT_WIDTHS(lo, hi) ((~0ull >> (63 - (hi))) & ~((1ull << (lo)) - 1))

/* The per-format operations the template instantiates (one set per format). */
struct ik_pt_ops {
	const struct ik_pt_fmt_info *info;	/* fmt, name, what configs may ask */
	int (*geometry)(struct ik_pt_geometry *g, const struct ik_pgtable_cfg *cfg);
	/* segs[0..n-1] back to back from iova; pgsize 0: choose per step. */
	int (*map)(struct ik_pgtable *pt, ik_u64 iova, const struct ik_seg *segs, ik_size n,
		   ik_u64 pgsize, unsigned prot);
	ik_s64 (*unmap)(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, struct ik_gather *g);
	int (*iova_to_phys)(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 *pa, ik_u64 *pgsize);
	ik_s64 (*dirty)(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, unsigned flags,
			ik_u64 *bitmap, unsigned lg2_page, struct ik_gather *g);
	int (*walk)(const struct ik_pt_walker *w, const struct ik_pt_mem *mem, ik_u64 iova,
		    unsigned access, struct ik_pt_walk_result *res);
	int (*dump)(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, ik_pt_range_fn fn,
		    void *ctx);
	/* ik_pt_walker_dump() (arguments checked). */
	int (*wdump)(const struct ik_pt_walker *w, const struct ik_pt_mem *mem, ik_u64 iova,
		     ik_u64 size, ik_pt_range_fn fn, void *ctx);
};

/* ---- engine services shared by every instantiation (src/pgtable/pgtable.c) ---- */

/* Table page + bookkeeping for `level`, from the cache or the hooks; entries
 * NOT zeroed.  NULL on failure (nothing leaked), with *err (if err is not
 * NULL) -ENOMEM or -ERANGE (a page beyond oas, or misaligned). */
struct ik_pt_tbl *ik_pt_tbl_get(struct ik_pgtable *pt, unsigned level, int *err);
/* Return a table that was never visible (or whose gather was synced): to the
 * cache, or freed.  Its child array must be all NULL. */
void ik_pt_tbl_put(struct ik_pgtable *pt, struct ik_pt_tbl *t);
/* Free a table and its bookkeeping for good (destroy, cache drain). */
void ik_pt_tbl_release(struct ik_pgtable *pt, struct ik_pt_tbl *t);
/* ik_pt_tbl_put() every table of a list linked through ->next. */
void ik_pt_tbl_put_list(struct ik_pgtable *pt, struct ik_pt_tbl *list);
/* Fill the pool with `upper` tables with child arrays and `leaf` level-0
 * tables; on failure returns -ENOMEM or -ERANGE having emptied the pool. */
int ik_pt_pool_fill(struct ik_pgtable *pt, struct ik_pt_pool *pool, ik_u64 upper, ik_u64 leaf);
/* Return the pool's unused pages. */
void ik_pt_pool_drain(struct ik_pgtable *pt, struct ik_pt_pool *pool);
/* Push t and every table below it onto *list (children first); returns how
 * many.  The subtree must be the caller's alone (unlinked, or being
 * destroyed).  O(tables).  (A level-0 table, the common case of an unmap,
 * is pushed inline; ik_pt_subtree_collect_deep() walks the rest.) */
ik_u32 ik_pt_subtree_collect_deep(struct ik_pt_tbl *t, struct ik_pt_tbl **list);
static inline ik_u32 ik_pt_subtree_collect(struct ik_pt_tbl *t, struct ik_pt_tbl **list)
{
	if (t->child)
		return ik_pt_subtree_collect_deep(t, list);
	t->next = *list;
	*list = t;
	return 1;
}

/*
 * Merging dump: mapped ranges go in in increasing IOVA order; one that
 * continues the pending range in both address spaces with the same prot and
 * attr extends it, any other emits the pending one through fn.  Used by both
 * dumps (the engine's and the walker's).
 */
struct ik_pt_merge {
	ik_pt_range_fn fn;
	void *ctx;
	struct ik_pt_range cur;	/* the pending range, when `have` */
	bool have;
	int ret;		/* fn's first non-zero return */
};
void ik_pt_merge_init(struct ik_pt_merge *m, ik_pt_range_fn fn, void *ctx);
/* Add [iova, iova + size) -> oa; returns m->ret (non-zero: stop). */
int ik_pt_merge_add(struct ik_pt_merge *m, ik_u64 iova, ik_u64 oa, ik_u64 size, ik_u64 pgsize,
		    unsigned prot, ik_u64 attr);
/* Emit the pending range; returns fn's first non-zero return, or 0. */
int ik_pt_merge_end(struct ik_pt_merge *m);

/* Generic argument checks. */
int ik_pt_check_prot(unsigned prot);

#endif /* IK_PGTABLE_INTERNAL_H */
