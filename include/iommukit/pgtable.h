/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/pgtable.h - IO page tables: one generic engine, pluggable formats.
 *
 * An IOMMU translates the addresses a device emits (IOVAs) through page
 * tables in memory.  This unit builds and edits such tables for a chosen
 * hardware format (ARM LPAE stage 1 / stage 2, Intel VT-d second-level and
 * first-level, RISC-V IOMMU first stage / G-stage, AMD v1 host and v2 guest
 * tables), and reads them back the way the hardware would.  Units: bytes -
 * every iova, paddr, size and page size (pgsize_bitmap: IK_SZ_4K | IK_SZ_2M
 * ..., <iommukit/sizes.h>).  The engine
 * (map, unmap, iova-to-phys, dirty tracking, table freeing) is written once;
 * a format only says how many levels there are, how many index bits each
 * level has, which levels may hold leaves, and how an entry is encoded.
 * Per-entry work is resolved at compile time: each format's source file
 * instantiates the engine template with its inline encoders, and the runtime
 * format value is dispatched once per request.
 *
 * What the engine guarantees, per request:
 *   - every page-table entry (PTE) the request changes is written, then each
 *     contiguous run of changed entries within one table page is cleaned for a
 *     non-coherent walker with exactly one `clean` hook call (never one per
 *     entry); a newly created table is filled before it becomes reachable and
 *     is cleaned once, whole;
 *   - a successful map request calls `iotlb_sync_map(iova, size)` exactly
 *     once, at the end, for the whole request (also for a scatter list);
 *   - a failed request changes nothing: all memory it needs is obtained, and
 *     every conflict is detected, before the first entry is written;
 *   - an unmap adds one range per call to the caller's gather; table pages it
 *     empties are unlinked (one entry cleared, never their 512 leaves one by
 *     one) and freed only when the caller syncs the gather.
 *
 * Glossary:
 *   IOVA / ias   the input address a device emits; ias = its width in bits.
 *   OA / oas     the output (physical, or intermediate physical for ARM stage 2)
 *                address; oas = its width in bits.
 *   granule      the smallest page size; also the size of a table page.
 *   level        engine levels count up from the leaves: level 0 tables hold
 *                granule-sized pages; an entry at level L spans
 *                granule << (L * bits_per_level).  The root is level
 *                nlevels - 1.  (ARM numbers lookup levels the other way; the
 *                format converts.)
 *   leaf         an entry that translates (a page at level 0, a block or
 *                superpage above); a table entry points to the next table.
 *   block split  replacing a block by a table of smaller leaves with the same
 *                attributes, so that part of it can be unmapped.
 *   gather       invalidation work accumulated by unmaps (one IOVA range, the
 *                smallest page size cleared, and the table pages to free once
 *                the caller has invalidated the IOTLB and walk caches).
 *   clean        writing CPU cache lines holding table memory back to memory,
 *                for an IOMMU whose table walker does not snoop CPU caches.
 *   table set    one ik_pgtable: a root and all tables below it.
 *
 * Synchronization:
 *   operation pair                          | needs a lock?
 *   ----------------------------------------+-------------------------------
 *   map/map_sg/map_pages vs same, disjoint  | no (new tables installed with
 *     IOVA ranges                           |  compare-and-swap; the loser
 *                                           |  merges into the winner's table
 *                                           |  and returns its page)
 *   unmap vs map/unmap, disjoint ranges     | no
 *   any vs any, overlapping ranges          | caller serialises (the result
 *                                           |  is otherwise undefined, but
 *                                           |  memory stays safe)
 *   iova_to_phys, walk, dump vs map/unmap   | no (they may see either the old
 *                                           |  or the new entry of a range
 *                                           |  being changed), except vs a
 *                                           |  request that frees tables in
 *                                           |  their range (gather_sync after
 *                                           |  an unmap, a map replacing an
 *                                           |  empty table, with flush_walk or
 *                                           |  flush_all set): caller
 *                                           |  serialises
 *   read_and_clear_dirty vs map/unmap of    | no; vs unmap of the same range:
 *     other ranges, vs hardware updates     |  caller serialises
 *   gather_sync vs everything               | no (the gather is the caller's;
 *                                           |  one thread uses one gather)
 *   create/destroy vs anything              | caller serialises
 *   Two ranges are "disjoint" when no byte of IOVA is in both; two disjoint
 *   requests may still share table pages (they then use CAS and distinct
 *   entries).  A block split by an unmap belongs to the range of that block.
 *
 * What the engine calls back into: only the hooks in `struct
 * ik_pgtable_hooks` (and the config's allocator for its own small
 * bookkeeping).  Hooks are called from the thread of the request, never with
 * an iommukit lock held; they must not call back into the same table set.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_PGTABLE_H
#define IOMMUKIT_PGTABLE_H

#include <iommukit/env.h>
#include <iommukit/batch.h>
#include <iommukit/sizes.h>

IK_BEGIN_DECLS

/* ------------------------------------------------------------------ formats */

/*
 * Page-table formats.  The values are stable; a value whose format is not
 * built into the library makes ik_pgtable_create() return -EOPNOTSUPP.
 */
enum ik_pt_fmt {
	IK_PT_FMT_NONE = 0,
	IK_PT_LPAE_S1 = 1,	/* ARM VMSAv8-64 long descriptors, stage 1 */
	IK_PT_LPAE_S2 = 2,	/* ARM VMSAv8-64 long descriptors, stage 2 */
	IK_PT_VTD_SL = 3,	/* Intel VT-d second-level */
	IK_PT_VTD_FL = 4,	/* Intel VT-d first-level (x86-64 paging) */
	IK_PT_RISCV_S1 = 5,	/* RISC-V IOMMU first stage (Sv39/48/57) */
	IK_PT_RISCV_S2 = 6,	/* RISC-V IOMMU G-stage (Sv39x4/48x4/57x4) */
	IK_PT_AMD_V1 = 7,	/* AMD IOMMU v1 host page table */
	IK_PT_AMD_V2 = 8,	/* AMD IOMMU v2 guest page table (x86-64 paging) */
	/* New formats take the next value; the library says how many there
	 * are (ik_pt_fmt_count()), so that the enum has no "last" member whose
	 * value would change, and be baked into programs, with each format. */
};

/* The short name of a format ("lpae-s1", "lpae-s2", "vtd-sl", "vtd-fl",
 * "riscv-s1", "riscv-s2", "amd-v1", "amd-v2"),
 * or NULL for a value that names no format built into the library. */
IK_API const char *ik_pt_fmt_name(enum ik_pt_fmt fmt);
/* The format with that short name, or IK_PT_FMT_NONE (also for a NULL name,
 * which this function accepts). */
IK_API enum ik_pt_fmt ik_pt_fmt_from_name(const char *name);
/*
 * ik_pt_fmt_count - the largest format value built into this library: every
 * format it offers is one of 1 .. ik_pt_fmt_count() (a value in that range
 * may still name no format, when one is not built in: ik_pt_fmt_get_info()
 * says -EOPNOTSUPP).  Replaces the enum's former IK_PT_FMT_MAX, which was
 * this plus one.  No errors; O(formats built in); calls nothing.
 */
IK_API unsigned ik_pt_fmt_count(void);

/* Capabilities (ik_pt_fmt_info.caps). */
/* Hardware dirty tracking: the format accepts IK_PT_QUIRK_DIRTY, and
 * ik_pgtable_read_and_clear_dirty() works on table sets created with it. */
#define IK_PT_CAP_DIRTY 0x1u

/* Granules a format may offer at most (ARM: 4K, 16K, 64K). */
#define IK_PT_FMT_GRANULES 3

/*
 * struct ik_pt_fmt_info - what a format is and what a config of it may ask
 * for: everything a program needs to choose a format or a config without
 * testing format values itself.  A width or a bit outside these sets makes
 * ik_pgtable_create() (and ik_pt_geometry_init()) fail with -EINVAL.
 *
 *   fmt, name      the format and its short name (as ik_pt_fmt_name());
 *   caps           IK_PT_CAP_* bits;
 *   quirks         the IK_PT_QUIRK_* bits a config may set;
 *   fmt_flags      the fmt_flags bits a config may set (include/iommukit/fmt/);
 *                  some combinations are refused (VT-d: FORCE_SNP needs SC);
 *   ias_widths     bit n set: an input address width of n bits is accepted;
 *   oas_widths     bit n set: an output address width of n bits is accepted
 *                  (LPAE: the PARange values 32, 36, 40, 42, 44, 48, 52);
 *   granules       smallest first; size 0 ends the list.  size: a granule
 *                  (the lowest bit of pgsize_bitmap selects it); leaf_sizes:
 *                  every page size the format can map with that granule
 *                  (the granule and its block sizes), given an ias with
 *                  enough levels and the fmt_flags that enable them (VT-d:
 *                  IK_VTD_FLAG_SP_2M/SP_1G); the geometry keeps
 *                  pgsize_bitmap & leaf_sizes of those;
 *   hw_levels_up   how ik_pt_geometry.hw_start_level numbers lookup levels:
 *                  true: up from the leaves (VT-d: a table of engine level L
 *                  is hardware level L + 1, the root is level nlevels);
 *                  false: down from the root (ARM: the root is level
 *                  hw_start_level, the leaf tables are level
 *                  hw_start_level + nlevels - 1).
 */
struct ik_pt_fmt_granule {
	ik_u64 size;	/* a granule, in bytes (0 ends the list) */
	ik_u64 leaf_sizes;	/* the page sizes it can map (bit n: 2^n bytes) */
};

/* What a format accepts (ik_pt_fmt_get_info()); the fields as above. */
struct ik_pt_fmt_info {
	enum ik_pt_fmt fmt;	/* the format */
	const char *name;	/* its short name (as ik_pt_fmt_name()) */
	ik_u32 caps;	/* IK_PT_CAP_* bits */
	ik_u32 quirks;	/* the IK_PT_QUIRK_* bits a config may set */
	ik_u64 fmt_flags;	/* the fmt_flags bits a config may set */
	ik_u64 ias_widths;	/* bit n set: an input address width of n bits is accepted */
	ik_u64 oas_widths;	/* bit n set: an output address width of n bits is accepted */
	struct ik_pt_fmt_granule granules[IK_PT_FMT_GRANULES]; /* smallest first; size 0 ends the
								  list */
	bool hw_levels_up; /* hw_start_level counts up from the leaves (VT-d), else down from the
			      root */
};

/*
 * ik_pt_fmt_get_info - describe format `fmt` in *info.  To list the formats
 * built in, ask for every value from 1 to ik_pt_fmt_count().  Errors:
 * -EINVAL for a NULL info; -EOPNOTSUPP (*info untouched) for a value that
 * names no format built into the library, as ik_pgtable_create() answers.
 * O(formats built in); calls nothing.
 */
IK_API int ik_pt_fmt_get_info(enum ik_pt_fmt fmt, struct ik_pt_fmt_info *info);

/* ------------------------------------------------------------- protections */

/*
 * Protection and attribute flags of a mapping (the `prot` argument).  At
 * least one of READ and WRITE must be set.  The format maps them to its bits:
 *   READ, WRITE   access permissions;
 *   NOEXEC        instruction fetch not allowed (where the format has it);
 *   PRIV          privileged-only (stage 1: AP[1] clear; x86: U/S clear);
 *   CACHE         normal write-back cacheable memory, or "snoop" on VT-d;
 *                 without CACHE and MMIO: normal non-cacheable;
 *   MMIO          device memory (not combinable with CACHE).
 */
#define IK_PROT_READ	0x01u
#define IK_PROT_WRITE	0x02u
#define IK_PROT_NOEXEC	0x04u
#define IK_PROT_PRIV	0x08u
#define IK_PROT_CACHE	0x10u
#define IK_PROT_MMIO	0x20u
#define IK_PROT_ALL	0x3fu

/* Access types, for the walker (combine WRITE/EXEC with PRIV). */
#define IK_ACCESS_READ	0x01u
#define IK_ACCESS_WRITE	0x02u
#define IK_ACCESS_EXEC	0x04u
#define IK_ACCESS_PRIV	0x08u

/* Walker outcomes (ik_pt_walk_result.fault). */
enum ik_pt_fault {
	IK_PT_FAULT_NONE = 0,
	IK_PT_FAULT_TRANSLATION,	/* no valid entry, or IOVA beyond ias */
	IK_PT_FAULT_PERMISSION,		/* valid leaf, access not allowed */
	IK_PT_FAULT_ADDR_SIZE,		/* an output or table address beyond oas (the
					 * IOVA's own output address: a leaf may
					 * start below 2^oas and end above it) */
	IK_PT_FAULT_ACCESS_FLAG,	/* ARM: leaf with AF clear (no HW update) */
	IK_PT_FAULT_EXTERNAL,		/* the memory read callback failed, or the
					 * hardware update (cas64) failed or lost
					 * more than IK_PT_WALK_CAS_RETRIES times */
	IK_PT_FAULT_RESERVED		/* an entry has a reserved bit set or a
					 * leaf where the hardware allows none
					 * (VT-d reserved-field faults) */
};

/* Quirks (ik_pgtable_cfg.quirks). */
/* Hardware dirty tracking: writable leaves are written "writable-clean" so
 * that the IOMMU marks them dirty on the first write (LPAE stage 1: DBM with
 * AP[2] set; LPAE stage 2: DBM with S2AP[1] clear; VT-d second-level: the D
 * bit).  -EINVAL where unsupported. */
#define IK_PT_QUIRK_DIRTY		0x1u
/* ARM stage 1: mark table and leaf entries non-secure (NSTable/NS). */
#define IK_PT_QUIRK_ARM_NS		0x2u
/* Non-coherent walk: do not clean leaf runs as they are written; clean every
 * leaf run of the request just before iotlb_sync_map (the VT-d driver's
 * scheme).  Same number of cleans, issued at the end (the engine walks the
 * request's range once more to issue them).  New table pages are still
 * cleaned before they become reachable.  Ignored when coherent. */
#define IK_PT_QUIRK_DEFER_LEAF_CLEAN	0x4u
/* Format-private quirks start here (documented in include/iommukit/fmt/). */
#define IK_PT_QUIRK_FMT_SHIFT		16

/* ---------------------------------------------------------------- gather */

struct ik_pgtable;
struct ik_pt_tbl;	/* a table page's bookkeeping; not API */

/*
 * struct ik_gather - invalidations accumulated by ik_pgtable_unmap().
 *
 * Initialise with ik_gather_init(), pass to any number of unmaps of ONE table
 * set, then invalidate [start, end) on the IOMMU (its IOTLB, and its walk
 * caches too when `walk` is set) and call ik_pgtable_gather_sync(), which
 * frees the table pages the unmaps unlinked.  An empty gather (start >= end)
 * needs no invalidation.
 *
 *   start, end   the union of the ranges added (end exclusive);
 *   granule      the smallest leaf size cleared (the invalidation stride);
 *   nr_ranges    how many ranges were added (one per unmap that cleared
 *                something, however many pages it covered);
 *   walk         a table entry was cleared or a block replaced by a table, so
 *                cached walks (non-leaf entries) must be invalidated too;
 *   nr_tables    table pages waiting for the sync;
 *   pt, tables   not API: the table set whose unmap (or dirty clear) last
 *                added a range or queued pages, NULL in a fresh gather; and
 *                the pending table pages.
 */
struct ik_gather {
	ik_u64 start;
	ik_u64 end;
	ik_u64 granule;
	ik_u32 nr_ranges;
	ik_u32 nr_tables;
	bool walk;
	struct ik_pgtable *pt;
	struct ik_pt_tbl *tables;
};

/* Initialise an empty gather.  O(1). */
IK_INLINE void ik_gather_init(struct ik_gather *g)
{
	IK_ASSERT(g);
	g->start = IK_U64_MAX;
	g->end = 0;
	g->granule = 0;
	g->nr_ranges = 0;
	g->nr_tables = 0;
	g->walk = false;
	g->pt = NULL;
	g->tables = NULL;
}

/*
 * ik_gather_add - the default `gather_add`: widen [start, end) to cover
 * [iova, iova + size) and lower `granule` to `granule`.  A hook that issues
 * range invalidations itself may instead flush when a new range is not
 * adjacent and restart the gather.  O(1).
 */
IK_INLINE void ik_gather_add(struct ik_gather *g, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	IK_ASSERT(g);
	if (iova < g->start)
		g->start = iova;
	if (iova + size > g->end)
		g->end = iova + size;
	if (g->granule == 0 || granule < g->granule)
		g->granule = granule;
	g->nr_ranges++;
}

/* ----------------------------------------------------------------- config */

/*
 * struct ik_pgtable_hooks - per-instance callbacks (two IOMMUs in one system
 * differ in them).  `cookie` (from the config) is passed to each.  Every
 * member may be NULL; the default is given with each (alloc_table and
 * free_table come as a pair: one without the other is -EINVAL at create).
 *
 * alloc_table(cookie, size, iommu_addr)
 *     Return `size` bytes (a power of two >= 64, usually the granule; more for
 *     a concatenated ARM stage-2 root) aligned to `size`, and store in
 *     *iommu_addr the address the IOMMU uses for it (must fit oas and be
 *     aligned to `size`).  Contents need not be zeroed (the engine writes
 *     every entry before the table is reachable).  NULL on failure (the
 *     request fails with -ENOMEM and changes nothing).  A page whose
 *     iommu_addr is misaligned or does not fit oas is handed back through
 *     free_table and the request fails with -ERANGE (nothing changed).
 *     Default: ik_alloc(cfg->allocator) with iommu_addr = the CPU address;
 *     a page whose CPU address does not fit oas (a host whose heap lies
 *     above 2^oas) is refused the same way (-ERANGE): supply alloc_table
 *     where table memory must come from low physical memory.
 * free_table(cookie, cpu, iommu_addr, size)
 *     Free a table page.  Default: ik_free(cfg->allocator).
 * clean(cookie, cpu, iommu_addr, size)
 *     Only when !cfg->coherent: make [cpu, cpu + size) visible to the IOMMU's
 *     table walker (write back CPU cache lines, then a barrier).  Called once
 *     per contiguous run of changed entries within one table page, and once
 *     for each new table page (whole).  Default: nothing (count-only use).
 * flush_all(cookie)
 *     Invalidate every cached translation of this table set and wait.  The
 *     engine calls it only from ik_pgtable_flush_all().
 * flush_walk(cookie, iova, size, granule)
 *     Invalidate cached walks (and translations) for [iova, iova + size) and
 *     wait.  The engine calls it only where it frees a table page outside a
 *     gather: a map that puts a block where an empty table (left by partial
 *     unmaps) was calls it once, with the request's range, after its cleans
 *     and before freeing the table.  Default: flush_all, if set.  With
 *     neither, nothing can invalidate a walk cache that may still point at
 *     such a table, so the engine never frees one there: the table stays and
 *     the map puts smaller leaves into it (see ik_pgtable_map_sg()).
 * gather_add(cookie, gather, iova, size, granule)
 *     Record [iova, iova + size) in the gather; called once per unmap call
 *     that cleared anything.  Default: ik_gather_add().
 * iotlb_sync_map(cookie, iova, size)
 *     Called once at the end of each successful map request, with the whole
 *     request's range: for IOMMUs that cache non-present entries (VT-d
 *     caching mode) or need a write-buffer flush.  Default: nothing.
 * iotlb_sync(cookie, gather)
 *     Called by ik_pgtable_gather_sync() before it frees table pages: issue
 *     and wait for the invalidation of the gather's range.  Default: nothing
 *     (the caller invalidated before calling gather_sync).
 */
struct ik_pgtable_hooks {
	void *(*alloc_table)(void *cookie, ik_size size, ik_u64 *iommu_addr);
	void (*free_table)(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size);
	void (*clean)(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size);
	void (*flush_all)(void *cookie);
	void (*flush_walk)(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule);
	void (*gather_add)(void *cookie, struct ik_gather *g, ik_u64 iova, ik_u64 size,
			   ik_u64 granule);
	void (*iotlb_sync_map)(void *cookie, ik_u64 iova, ik_u64 size);
	void (*iotlb_sync)(void *cookie, struct ik_gather *g);
};

/*
 * struct ik_pgtable_cfg - what the driver knows about its IOMMU.
 *
 *   fmt            the format.
 *   ias, oas       input and output address widths in bits (the widths
 *                  each format accepts: ik_pt_fmt_get_info()).
 *   pgsize_bitmap  page sizes the IOMMU supports (bit n set: 2^n bytes).  Its
 *                  lowest set bit selects the granule (one of the format's,
 *                  ik_pt_fmt_get_info(); LPAE: 4K, 16K or 64K);
 *                  the engine keeps only the sizes the format can express at
 *                  that granule (see ik_pgtable_info).  Must include the
 *                  granule.
 *   coherent       the IOMMU's table walker snoops CPU caches (no cleans).
 *   quirks         IK_PT_QUIRK_* bits.
 *   fmt_flags      format-specific options (0: defaults), see fmt/NAME.h.
 *   hooks, cookie  callbacks (NULL hooks: all defaults) and their argument.
 *   allocator      for the engine's own bookkeeping (about 40 bytes per table
 *                  page plus 8 bytes per entry of non-last-level tables) and
 *                  for table pages when hooks->alloc_table is NULL.  NULL: env.
 */
struct ik_pgtable_cfg {
	enum ik_pt_fmt fmt;
	ik_u32 ias;
	ik_u32 oas;
	ik_u64 pgsize_bitmap;
	bool coherent;
	ik_u32 quirks;
	ik_u64 fmt_flags;
	const struct ik_pgtable_hooks *hooks;
	void *cookie;
	const struct ik_allocator *allocator;
};

/*
 * struct ik_pt_geometry - the shape of a table set, as derived from a config
 * by the format (and as the hardware derives it from its registers).
 *
 *   fmt, ias, oas, quirks, fmt_flags   from the config;
 *   nlevels        number of levels (root = level nlevels - 1);
 *   lg2_granule    log2 of the granule (12, 14 or 16);
 *   bits           index bits of every non-root level;
 *   top_bits       index bits of the root (fewer for a partial top level,
 *                  more for concatenated ARM stage-2 roots);
 *   leaf_levels    bit L set: level L may hold leaves (given pgsize_bitmap);
 *   pgsize_bitmap  the page sizes the engine will use (leaf sizes);
 *   root_size      bytes of the root table (8 << top_bits, at least 64);
 *   hw_start_level  format-specific first lookup level as the hardware
 *                  numbers it (ARM: 0..3 for stage 1, 0..2 for stage 2;
 *                  a 4K LPA2 stage 1 over 48 bits starts at level -1,
 *                  stored as (ik_u32)-1 so that hw_start_level + nlevels
 *                  is 4 in unsigned arithmetic; VT-d: nlevels);
 *   concat         number of concatenated root tables (1 if none).
 */
struct ik_pt_geometry {
	enum ik_pt_fmt fmt;
	ik_u32 ias;
	ik_u32 oas;
	ik_u32 quirks;
	ik_u64 fmt_flags;
	ik_u8 nlevels;
	ik_u8 lg2_granule;
	ik_u8 bits;
	ik_u8 top_bits;
	ik_u32 leaf_levels;
	ik_u64 pgsize_bitmap;
	ik_u64 root_size;
	ik_u32 hw_start_level;
	ik_u32 concat;
};

/*
 * ik_pt_geometry_init - validate `cfg` for its format and derive the
 * geometry, without creating anything.  Errors: -EOPNOTSUPP for a format not
 * built in; -EINVAL for a NULL g or cfg, or an unsupported ias, oas, granule,
 * page size or quirk.
 * O(1); calls nothing.
 */
IK_API int ik_pt_geometry_init(struct ik_pt_geometry *g, const struct ik_pgtable_cfg *cfg);

/* -------------------------------------------------------------- lifecycle */

/*
 * ik_pgtable_create - validate `cfg`, allocate the root table (through
 * hooks->alloc_table) and the engine's state (through cfg->allocator), and
 * return the table set in *out.  The config (not the hooks struct, which must
 * outlive the table set) is copied.  The root is zeroed and, if not coherent,
 * cleaned.  Errors: -EINVAL for a NULL cfg or out (*out untouched); those
 * of ik_pt_geometry_init(); -ENOMEM (nothing leaked);
 * -ERANGE if the root page's IOMMU address does not fit oas (see
 * alloc_table).
 */
IK_API int ik_pgtable_create(const struct ik_pgtable_cfg *cfg, struct ik_pgtable **out);

/*
 * ik_pgtable_destroy - free every table page (through free_table) and the
 * engine state.  The caller has stopped the IOMMU from walking the tables and
 * synced every gather that holds this table set's pages.  NULL is a no-op.
 * Cost: O(table pages).
 */
IK_API void ik_pgtable_destroy(struct ik_pgtable *pt);

/*
 * struct ik_pgtable_info - what a driver programs and what a tool prints.
 *   geom        the geometry;
 *   root_iommu  the root table's IOMMU address (TTBR/VTTBR base, VT-d SLPTPTR
 *               or FLPTPTR);
 *   root_cpu    the root table's CPU address.
 */
struct ik_pgtable_info {
	struct ik_pt_geometry geom;
	ik_u64 root_iommu;
	void *root_cpu;
};
/* Copy the table set's geometry and root into *info.  pt and info must not be NULL.  O(1). */
IK_API void ik_pgtable_get_info(const struct ik_pgtable *pt, struct ik_pgtable_info *info);

/*
 * struct ik_pgtable_stats - counters since create (relaxed reads; exact when
 * the table set is quiescent):
 *   tables_alloc, tables_freed   table pages from alloc_table / to free_table;
 *   tables_live                  table pages currently owned (incl. the root,
 *                                the cache and pages waiting in gathers);
 *   cache_hits                   new tables taken from the freed-table cache;
 *   cache_pages                  pages in the cache now;
 *   cas_lost                     table installs lost to a concurrent request;
 *   splits                       blocks split by unmap.
 */
struct ik_pgtable_stats {
	ik_u64 tables_alloc;
	ik_u64 tables_freed;
	ik_u64 tables_live;
	ik_u64 cache_hits;
	ik_u64 cache_pages;
	ik_u64 cas_lost;
	ik_u64 splits;
};
/* Snapshot the counters into *st (relaxed reads; takes the table-page cache lock briefly).  pt
 * and st must not be NULL.  O(1). */
IK_API void ik_pgtable_get_stats(const struct ik_pgtable *pt, struct ik_pgtable_stats *st);

/* Return every page of the freed-table cache through free_table.  Caller
 * serialises against map/unmap.  O(cache size). */
IK_API void ik_pgtable_drain_cache(struct ik_pgtable *pt);

/* ---------------------------------------------------------------- mapping */

/*
 * ik_pgtable_map_pages - map `pgcount` pages of `pgsize` bytes each:
 * [iova, iova + pgsize * pgcount) -> [paddr, ...), with `prot`.
 * Preconditions/errors (-EINVAL, nothing changed): pt NULL; pgsize not in the
 * geometry's pgsize_bitmap; iova or paddr not aligned to pgsize; pgcount 0;
 * the range overflows 64 bits or passes ias (iova) or oas (paddr); no READ and
 * no WRITE in prot, unknown prot bits, CACHE with MMIO.  -EEXIST if any page
 * of the range is already mapped (nothing changed).  -ENOMEM if a table page
 * (or the engine's bookkeeping for one) cannot be allocated, -ERANGE if the
 * page's IOMMU address does not fit oas (nothing changed, nothing leaked).
 * Cost: O(pgcount + tables touched); one clean per run of changed entries per
 * table page (non-coherent), one iotlb_sync_map on success.  A request that
 * fits in one existing table with all its entries empty (the commonest DMA
 * size) takes one descent and no counting pass; ik_pgtable_map() too.
 * Calls: alloc_table, clean, iotlb_sync_map, free_table (a CAS loser's page
 * when the cache is full).
 */
IK_API int ik_pgtable_map_pages(struct ik_pgtable *pt, ik_u64 iova, ik_u64 paddr, ik_u64 pgsize,
				ik_u64 pgcount, unsigned prot);

/*
 * ik_pgtable_map - map [iova, iova + size) -> [paddr, paddr + size), choosing
 * at every step the largest page size of the geometry that the alignment of
 * iova and paddr and the remaining length allow (a 4 MiB buffer at 2 MiB
 * alignment on a 4K-granule LPAE table is two block entries).  iova, paddr
 * and size must be multiples of the granule; size 0 or pt NULL -> -EINVAL.
 * Otherwise as ik_pgtable_map_pages().
 */
IK_API int ik_pgtable_map(struct ik_pgtable *pt, ik_u64 iova, ik_u64 paddr, ik_u64 size,
			  unsigned prot);

/*
 * ik_pgtable_map_sg - map segs[0..n-1] back to back from `iova`: segment i
 * lands at iova + (sum of the lengths before it).  Physically contiguous
 * neighbours are treated as one range, and large pages are used where the
 * alignment of iova and paddr allows, exactly as ik_pgtable_map() would for
 * each coalesced range.  Every segment's paddr and len must be multiples of
 * the granule and len > 0 (-EINVAL); n 0, pt NULL or segs NULL -> -EINVAL.
 * The whole list is one request: one run of cleans per table page run (runs
 * continue across segment boundaries), one iotlb_sync_map(iova, total) on
 * success, nothing changed on failure.  If `mapped` is not NULL it receives
 * the total bytes mapped (0 on any failure, NULL arguments included).
 *
 * All map calls: an empty table (one left by partial unmaps, with no leaf
 * below it) where a block is to go is not a conflict.  With hooks->flush_walk
 * or flush_all set, the block replaces it and the table is freed after that
 * invalidation.  With neither, the table stays (a walk cache may still point
 * at it) and the part of the request it spans is mapped into it with the
 * largest smaller leaves that fit, ik_pgtable_map_pages() included: the
 * translations are the same, in more entries; tables it needs below are
 * counted and allocated as any (all or nothing).
 */
IK_API int ik_pgtable_map_sg(struct ik_pgtable *pt, ik_u64 iova, const struct ik_seg *segs,
			     ik_size n, unsigned prot, ik_u64 *mapped);

/*
 * ik_pgtable_unmap - unmap every leaf in [iova, iova + size) and return the
 * bytes unmapped (0 if nothing was mapped there; holes are skipped, not an
 * error).  iova and size must be multiples of the granule, size > 0, the range
 * inside ias and not overflowing, pt and gather not NULL (else -EINVAL,
 * nothing changed).
 *
 * A block that lies only partly inside the range is split first: it is
 * replaced, in one atomic entry update, by a table of next-level leaves (down
 * to the level the range boundary needs) with the block's attributes, then
 * the in-range leaves are cleared; the pages outside the range stay mapped
 * throughout.  The split needs table pages: -ENOMEM if they cannot be
 * allocated, -ERANGE as for map (nothing changed).  Splits set gather->walk.
 *
 * A table whose whole span lies inside the range is unlinked by clearing the
 * one entry that points to it (its leaves are not touched); it and the tables
 * below it are queued on the gather and freed by ik_pgtable_gather_sync().
 * Tables left empty by a partial unmap stay in place (they are reused).
 *
 * Adds one range, [first cleared byte, last cleared byte], with the smallest
 * cleared leaf size, to the gather through gather_add, when it cleared
 * anything.  The gather must be empty or hold only this table set's pages.
 * Cost: O(leaves cleared in partly covered tables + tables unlinked); one
 * clean per run of cleared entries per table page.  A range that is a run
 * of whole entries of one table, reached through table entries only (pages
 * inside one level-0 table, a block, the entry of a whole last-level table,
 * an aligned run of them), takes one descent and no counting pass: nothing
 * in it can need a split.
 * Calls: alloc_table and clean (splits), gather_add.
 */
IK_API ik_s64 ik_pgtable_unmap(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size,
			       struct ik_gather *gather);

/*
 * ik_pgtable_gather_sync - the caller has invalidated the gather's range (or
 * hooks->iotlb_sync will: it is called first, if set): free the table pages
 * queued on it (into the table set's small cache of free pages, the rest
 * through free_table) and re-initialise the gather.  A gather with no pages
 * and pt NULL is fine.  Returns 0, or -EINVAL with nothing done (no hook
 * called, the gather untouched) when gather is NULL or holds table pages of
 * another table set than pt (unmaps of two table sets into one gather):
 * freeing them through pt's hooks and cache would corrupt both.
 * Cost: O(pages queued).
 */
IK_API int ik_pgtable_gather_sync(struct ik_pgtable *pt, struct ik_gather *gather);

/* Calls hooks->flush_all, if set.  For completeness of the hook set. */
IK_API void ik_pgtable_flush_all(struct ik_pgtable *pt);

/*
 * ik_pgtable_iova_to_phys - the output address `iova` translates to, through
 * the engine's view of the tables.  0 with *paddr set (and *pgsize, if not
 * NULL, set to the leaf's size); -ENOENT if not mapped; -EINVAL beyond ias
 * or for a NULL pt or paddr.
 * Cost: one descent (nlevels entries read).
 */
IK_API int ik_pgtable_iova_to_phys(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 *paddr,
				   ik_u64 *pgsize);

/*
 * ik_pgtable_read_and_clear_dirty - report into `bitmap` the pages of
 * [iova, iova + size) that the IOMMU has written since the last clear, and
 * mark them clean again unless IK_DIRTY_NO_CLEAR.  Bit k of the bitmap
 * (bitmap[k / 64] >> (k % 64)) stands for the page of 2^lg2_page bytes at
 * iova + (k << lg2_page); a dirty leaf sets the bits of all its pages in the
 * range.  Bits are only set, never cleared, so several calls may accumulate.
 * Needs the IK_PT_QUIRK_DIRTY config (-EOPNOTSUPP otherwise); pt and bitmap
 * not NULL, iova and size aligned to 2^lg2_page and lg2_page >= lg2_granule
 * (-EINVAL).  Clearing is
 * an atomic update of each dirty leaf (the hardware may set it again at any
 * time); the caller then invalidates the range's IOTLB entries (a gather is
 * filled if `gather` is not NULL).  Returns the number of dirty leaves seen.
 */
#define IK_DIRTY_NO_CLEAR 0x1u
IK_API ik_s64 ik_pgtable_read_and_clear_dirty(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size,
					      unsigned flags, ik_u64 *bitmap, unsigned lg2_page,
					      struct ik_gather *gather);

/* ----------------------------------------------------------------- walker */

/*
 * The hardware view.  A walker reads table memory through `struct ik_pt_mem`
 * - by IOMMU address, never through the engine's pointers - and decodes it as
 * the IOMMU would: emulators use it on guest tables, tests use it as an
 * oracle for the engine.
 *
 * read64(ctx, addr, val): read the 8-byte entry at IOMMU address addr; 0, or
 *     a negative errno (the walk then reports IK_PT_FAULT_EXTERNAL).
 * cas64(ctx, addr, old, new): optional; if set, the walker performs the
 *     hardware's own updates (ARM access flag / DBM dirty state, VT-d and x86
 *     A/D bits) with it, as the IOMMU would on that access; 0 on success,
 *     -EAGAIN if the entry no longer holds `old` (the walker then walks again
 *     from the root, at most IK_PT_WALK_CAS_RETRIES times), any other
 *     negative errno if the entry cannot be written.  When the update cannot
 *     be made (an error other than -EAGAIN, or -EAGAIN once more after the
 *     last retry: another agent keeps rewriting the entry) the walk reports
 *     IK_PT_FAULT_EXTERNAL: the access must not proceed unrecorded.
 *     Only ik_pt_walk() calls it; dumps never write.
 */
struct ik_pt_mem {
	int (*read64)(void *ctx, ik_u64 addr, ik_u64 *val);
	int (*cas64)(void *ctx, ik_u64 addr, ik_u64 old, ik_u64 val);
	void *ctx;	/* passed to read64 and cas64 */
};

/* How many times a walk starts again after a lost cas64 before it gives up
 * with IK_PT_FAULT_EXTERNAL (so a walk calls cas64 at most this plus one
 * times). */
#define IK_PT_WALK_CAS_RETRIES 16

/* A walker: a geometry plus the root's IOMMU address. */
struct ik_pt_walker {
	struct ik_pt_geometry geom;	/* the table set's geometry (ik_pgtable_get_info()) */
	ik_u64 root;	/* the root table's IOMMU address */
};

/* Set up a walker from a config (as a driver would program the IOMMU) and a
 * root address.  Errors: those of ik_pt_geometry_init(); -EINVAL for a NULL
 * w or cfg, or a root not aligned to the root size. */
IK_API int ik_pt_walker_init(struct ik_pt_walker *w, const struct ik_pgtable_cfg *cfg,
			     ik_u64 root);
/* The walker of an engine table set (its geometry and root). */
IK_API void ik_pgtable_walker(const struct ik_pgtable *pt, struct ik_pt_walker *w);

/*
 * struct ik_pt_walk_result - what one translation found.
 *   fault       IK_PT_FAULT_*;
 *   level       engine level where the walk ended (leaf or fault);
 *   oa          output address of the IOVA (valid without fault, and for
 *               permission / access-flag faults);
 *   pgsize      size of the leaf (page or block) used;
 *   prot        the leaf's IK_PROT_* as decoded (hierarchical limits, e.g.
 *               ARM APTable or x86 U/S of upper levels, applied);
 *   attr        format-specific memory attributes (LPAE stage 1: AttrIndx;
 *               stage 2: MemAttr; VT-d second-level: SNP bit 0, ...);
 *   dirty       the leaf is dirty (format with dirty tracking);
 *   pte         the raw leaf (or faulting) entry;
 *   pte_addr    its IOMMU address.
 */
struct ik_pt_walk_result {
	enum ik_pt_fault fault;
	unsigned level;
	ik_u64 oa;
	ik_u64 pgsize;
	unsigned prot;
	ik_u64 attr;
	bool dirty;
	ik_u64 pte;
	ik_u64 pte_addr;
};

/*
 * ik_pt_walk - translate `iova` for an access of type `access` (IK_ACCESS_*,
 * 0 = only translate, no permission check).  Returns 0 and fills *res (check
 * res->fault), or -EINVAL for a bad walker or a NULL w, mem, mem->read64 or
 * res.  The output address is checked against oas after the IOVA's offset
 * into the leaf is added (overflow-safe): a leaf larger than 2^oas, or one
 * that starts below 2^oas and ends above it, gives IK_PT_FAULT_ADDR_SIZE for
 * the IOVAs whose output address is beyond oas.  Reads at most nlevels
 * entries per pass, and makes at most 1 + IK_PT_WALK_CAS_RETRIES passes
 * (more than one only when a cas64 update is lost).  Iterative: a cas64
 * that always loses costs bounded time and stack.
 */
IK_API int ik_pt_walk(const struct ik_pt_walker *w, const struct ik_pt_mem *mem, ik_u64 iova,
		      unsigned access, struct ik_pt_walk_result *res);

/*
 * A mapped range, for dumps: [iova, iova + size) -> [oa, oa + size) with the
 * same prot and attr throughout; leaves that continue each other in both
 * address spaces with equal prot/attr are merged.  pgsize: the smallest leaf
 * size inside it.
 */
struct ik_pt_range {
	ik_u64 iova;	/* first input address */
	ik_u64 oa;	/* the output address iova maps to */
	ik_u64 size;	/* bytes in the range */
	ik_u64 pgsize;	/* the smallest leaf size inside it */
	unsigned prot;	/* IK_PROT_* throughout */
	ik_u64 attr;	/* format attributes throughout */
};
/* Return non-zero to stop the dump (that value is returned). */
typedef int (*ik_pt_range_fn)(void *ctx, const struct ik_pt_range *r);

/*
 * ik_pt_walker_dump - call fn for every mapped range in [iova, iova + size),
 * merged as described above, in increasing IOVA order, decoding the tables
 * through `mem` as the hardware would: an IOVA is reported exactly when
 * ik_pt_walk(access 0) finds it mapped (fault NONE or ACCESS_FLAG), with the
 * same output address, prot and attr.  The part of a leaf whose output
 * address would be beyond oas is not reported (a range always ends at or
 * below 2^oas).  Reads entries with mem->read64 only (never cas64, so a dump
 * sets no access flag).  Returns 0, fn's non-zero return, -EIO if a read
 * failed (ranges before it have been reported), or -EINVAL (fn never
 * called) for a NULL w, mem, mem->read64 or fn, a bad walker, or a range
 * beyond ias; ctx is only passed to fn.
 *
 * Cost: a depth-first traversal of the tables as they are in memory.  Each
 * entry read costs one read64; an entry that is invalid or faults (reserved
 * bits, a table beyond oas, ...) is skipped with its whole span, so the
 * cost does not depend on the size of the range but on the tables present:
 * at most (entries per table) x (tables visited), where a table is visited
 * once per entry that leads to it.  Guest memory is hostile and tables may
 * be shared: a table reached from many entries (the same leaf table under
 * all 512 entries of its parent, or a page pointing to itself) is visited
 * once per path.  The walker remembers the last 8 tables of each level it
 * found empty and does not visit those again, so a self-referencing page,
 * or up to 8 empty tables per level shared everywhere, cost one pass per
 * table and level.  With at most 8 distinct empty tables per level, every
 * visit of a table below the root is one of: the first visit of an empty
 * table, one of at most 2 per level that hold an end of the range, or a
 * visit that reports a leaf (fn is called at the latest when the merged
 * range ends, and can stop the dump by returning non-zero); so reads are
 * at most root entries + (nlevels - 1) x entries x (3 + empty tables +
 * leaves reported).  A hostile layout with more than 8 distinct empty
 * tables per level, shared across many paths, can still cost up to
 * (entries per table)^nlevels reads with no call to fn: a caller that
 * needs a hard bound counts calls in read64 and fails one (the dump then
 * returns -EIO).  Stack: O(nlevels) frames.
 */
IK_API int ik_pt_walker_dump(const struct ik_pt_walker *w, const struct ik_pt_mem *mem,
			     ik_u64 iova, ik_u64 size, ik_pt_range_fn fn, void *ctx);

/* The same over an engine table set, through its own view (faster: one
 * traversal).  Ranges are merged the same way.  -EINVAL for a NULL pt or
 * fn. */
IK_API int ik_pgtable_dump(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, ik_pt_range_fn fn,
			   void *ctx);

IK_END_DECLS

#endif /* IOMMUKIT_PGTABLE_H */
