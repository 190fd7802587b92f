/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fuzz_pgtable - the page-table engine (include/iommukit/pgtable.h) in every
 * format (lpae-s1, lpae-s2 with 48- and 52-bit layouts, vtd-sl, vtd-fl,
 * riscv-s1, riscv-s2, amd-v1, amd-v2), at every granule, input and output
 * size the input picks (bad configs must be refused), with the table-page
 * hooks or the default allocator, coherent or not.
 *
 * Table memory.  The harness's alloc_table hook hands out pages at IOMMU
 * addresses of its own (a bump allocator, never reused: a stale pointer to
 * a freed page cannot land on a live one), filled with garbage.  For a
 * non-coherent walker each page also has a "device view" that only the
 * clean hook updates: the hardware walker (ik_pt_walk through read64)
 * reads that view, so a missing clean shows up as a wrong translation.
 * read64 refuses any address outside a live page (a walk into freed memory
 * is a finding).  Failures are injected into the n-th allocation of an
 * operation (bookkeeping through the config's allocator, or a table page),
 * and into alloc_table's address (beyond oas or misaligned: -ERANGE).
 *
 * Model: a sorted list of extents iova -> (paddr, prot, leaf size), the
 * leaf sizes predicted as the engine must choose them (largest page the
 * alignment of iova and paddr and the remaining length allow; a block split
 * by an unmap leaves the largest pages that fit outside the hole), and the
 * dirty leaves.  After every operation:
 *   - the operation's result (-EINVAL argument rules, -EEXIST, bytes
 *     unmapped, -ENOMEM/-ERANGE with nothing changed under injection, the
 *     `mapped` output of map_sg, iotlb_sync_map once per successful map);
 *   - the engine's dump equals the model (merged ranges, decoded prot and
 *     memory attributes as the format documents them);
 *   - iova_to_phys and the hardware-view walker (the engine's walker, and
 *     the one an SMMU/VT-d unit builds from the registers ik_lpae_get_regs
 *     / ik_vtd_get_regs give) agree with the model at sampled addresses;
 *   - each unmap's gather range covers every unmapped byte and nothing
 *     outside the request, with the smallest cleared leaf size, exactly so
 *     when no table was unlinked or split;
 *   - table pages: the pages an unmap unlinks are queued on the gather
 *     (nr_tables), stay live and unchanged and unreachable until
 *     gather_sync; a page the walker saw is freed only by gather_sync (or by
 *     a map after flush_walk); tables_live = reachable + cache + queued
 *     (a traversal of the tables that decodes entries independently);
 *   - read_and_clear_dirty reports exactly the dirty leaves (set by device
 *     writes through the walker's cas64) in the bitmap, at any page size;
 *   - at destroy, every page and block is freed.
 */
#include <iommukit/pgtable.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/fmt/riscv.h>
#include <iommukit/fmt/amd.h>
#include "fuzzlib.h"

typedef unsigned __int128 u128;

#define MAX_PAGES 6000
#define MAX_EXT 12000 /* two splits of a 256T block: 2 x 4 x 511 extents */
#define LEAF_CAP 12000
#define MAX_TBL 8192
#define MAX_OPS 40
/* entries a traversal may read: some 64K tables (8192 entries) too */
#define TRAVERSE_BUDGET (20000 + 4 * (1ull << G.bits))

/* ================================================================ memory */

struct page {
	uint64_t addr, size;	/* IOMMU address (default mode: CPU address) */
	uint8_t *cpu, *dev;	/* dev: the non-coherent walker's view, or NULL */
	bool visible;		/* read by the walker since the last flush/sync */
	bool pending;		/* unlinked by an unmap, waiting for its sync */
	bool reached;		/* scratch for traversals */
	bool before;		/* reached by the traversal before the op */
	int gid;		/* the gather it waits in */
	uint64_t snap;		/* content hash when unlinked */
};

static struct ik_pgtable_hooks HOOKS; /* the config's hooks */
static struct page PG[MAX_PAGES];
static size_t NPG;
static struct fz_alloc FA;

static struct {
	bool hooks_alloc;	/* alloc_table/free_table are ours */
	bool coherent;
	int in_sync;		/* gather id being synced + 1, or 0 */
	bool flushed;		/* flush_walk/flush_all called in this op */
	uint64_t next_iommu;
	long range_fail_at, range_calls;
	uint32_t oas;
	/* hook calls in the current op */
	unsigned sync_maps, flush_walks, gather_adds;
	uint64_t sm_iova, sm_size, fw_iova, fw_size, fw_gran;
	uint64_t ga_iova, ga_size, ga_gran;
	unsigned iotlb_syncs;
} H;

static size_t pg_lower(uint64_t addr)
{
	size_t a = 0, b = NPG;

	while (a < b) {
		size_t m = (a + b) / 2;

		if (PG[m].addr < addr)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* The page holding addr, or NULL. */
static struct page *pg_find(uint64_t addr)
{
	size_t i = pg_lower(addr);

	if (i < NPG && PG[i].addr == addr)
		return &PG[i];
	if (i > 0 && addr - PG[i - 1].addr < PG[i - 1].size)
		return &PG[i - 1];
	return NULL;
}

static void pg_add(uint64_t addr, uint64_t size, uint8_t *cpu, uint8_t *dev)
{
	size_t i = pg_lower(addr);

	FZ_CHECK(NPG < MAX_PAGES, "too many pages");
	FZ_CHECK(i == NPG || PG[i].addr >= addr + size, "page registry overlap");
	memmove(&PG[i + 1], &PG[i], (NPG - i) * sizeof(PG[0]));
	memset(&PG[i], 0, sizeof(PG[i]));
	PG[i].addr = addr;
	PG[i].size = size;
	PG[i].cpu = cpu;
	PG[i].dev = dev;
	NPG++;
}

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* A page or block goes away: it must not be one the walker may still hold
 * (seen since the last invalidation) nor one waiting in a gather, except
 * where the API frees such pages. */
static void pg_del(struct page *p, const char *what)
{
	size_t i = (size_t)(p - PG);

	/* Without flush_walk and flush_all the caller accepted that a map
	 * replacing an empty table frees it without an invalidation. */
	if (p->visible && (HOOKS.flush_walk || HOOKS.flush_all))
		FZ_CHECK(H.in_sync || H.flushed,
			 "%s: page %#llx freed while the walker may still cache it (no sync, no flush)",
			 what, (unsigned long long)p->addr);
	if (p->pending)
		FZ_CHECK(H.in_sync == p->gid + 1, "%s: page %#llx freed before its gather was synced",
			 what, (unsigned long long)p->addr);
	memset(p->cpu, 0x6b, p->size); /* poison */
	if (H.hooks_alloc)
		free(p->cpu);
	free(p->dev);
	memmove(&PG[i], &PG[i + 1], (NPG - i - 1) * sizeof(PG[0]));
	NPG--;
}

/* The config's allocator: fault injection (fuzzlib), and in default mode
 * every block registered, so that read64 can tell live memory. */
static void *a_alloc(void *ctx, ik_size size, ik_size align)
{
	void *p = fz_alloc_fn(ctx, size, align);

	if (p && !H.hooks_alloc)
		pg_add((uint64_t)(uintptr_t)p, size ? size : 1, p, NULL);
	return p;
}

static void a_free(void *ctx, void *ptr, ik_size size)
{
	if (ptr && !H.hooks_alloc) {
		struct page *p = pg_find((uint64_t)(uintptr_t)ptr);

		FZ_CHECK(p && p->addr == (uint64_t)(uintptr_t)ptr && p->size == (size ? size : 1),
			 "free of %p (%zu bytes): not a live block", ptr, (size_t)size);
		p->cpu = NULL; /* fz_free_fn frees it */
		{
			size_t i = (size_t)(p - PG);

			if (p->visible && (HOOKS.flush_walk || HOOKS.flush_all))
				FZ_CHECK(H.in_sync || H.flushed,
					 "block %p freed while the walker may still cache it", ptr);
			if (p->pending)
				FZ_CHECK(H.in_sync == p->gid + 1, "block %p freed before its sync", ptr);
			memset(ptr, 0x6b, size);
			memmove(&PG[i], &PG[i + 1], (NPG - i - 1) * sizeof(PG[0]));
			NPG--;
		}
	}
	fz_free_fn(ctx, ptr, size);
}

static struct ik_allocator ALLOC = { a_alloc, a_free, &FA };

/* ---- table-page hooks ---- */

static void *h_alloc_table(void *cookie, ik_size size, ik_u64 *iommu)
{
	uint8_t *cpu, *dev = NULL;
	uint64_t a;

	(void)cookie;
	FZ_CHECK(IK_IS_POW2(size) && size >= 64, "alloc_table of %zu bytes", (size_t)size);
	if (++FA.calls == FA.fail_at) {
		FA.failures++;
		return NULL;
	}
	cpu = aligned_alloc(size, size);
	FZ_CHECK(cpu, "out of memory");
	memset(cpu, 0xa5, size); /* the engine writes every entry before use */
	if (!H.coherent) {
		dev = malloc(size);
		memset(dev, 0x5a, size); /* what the walker sees until cleaned */
	}
	a = (H.next_iommu + size - 1) & ~(uint64_t)(size - 1);
	H.next_iommu = a + size;
	FZ_CHECK(H.oas >= 64 || H.next_iommu <= (1ull << H.oas), "harness IOMMU space exhausted");
	if (++H.range_calls == H.range_fail_at) {
		/* a hook bug: the engine must hand the page back (-ERANGE) */
		if (H.oas < 64 && (H.range_calls & 1))
			a = (1ull << H.oas) + a;
		else
			a += 8;
	}
	pg_add(a, size, cpu, dev);
	*iommu = a;
	return cpu;
}

static void h_free_table(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	struct page *p = pg_find(iommu);

	(void)cookie;
	FZ_CHECK(p && p->addr == iommu && p->cpu == cpu && p->size == size,
		 "free_table(%p, %#llx, %zu): not a live page", cpu, (unsigned long long)iommu,
		 (size_t)size);
	pg_del(p, "free_table");
}

static void h_clean(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	struct page *p = pg_find(iommu);
	uint64_t off;

	(void)cookie;
	FZ_CHECK(!H.coherent, "clean on a coherent table set");
	FZ_CHECK(p, "clean of %#llx: no live page", (unsigned long long)iommu);
	off = iommu - p->addr;
	FZ_CHECK(size && off + size <= p->size && !(off & 7) && !(size & 7),
		 "clean [%#llx, +%zu) does not lie in one page", (unsigned long long)iommu, (size_t)size);
	FZ_CHECK((uint8_t *)cpu == p->cpu + off, "clean: CPU and IOMMU addresses disagree");
	if (p->dev)
		memcpy(p->dev + off, p->cpu + off, size);
}

static void h_flush_all(void *cookie)
{
	(void)cookie;
	H.flushed = true;
	for (size_t i = 0; i < NPG; i++)
		PG[i].visible = false;
}

static void h_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	(void)cookie;
	H.flush_walks++;
	H.fw_iova = iova;
	H.fw_size = size;
	H.fw_gran = granule;
	h_flush_all(NULL);
}

static void h_gather_add(void *cookie, struct ik_gather *g, ik_u64 iova, ik_u64 size,
			 ik_u64 granule)
{
	(void)cookie;
	H.gather_adds++;
	H.ga_iova = iova;
	H.ga_size = size;
	H.ga_gran = granule;
	ik_gather_add(g, iova, size, granule);
}

static void h_sync_map(void *cookie, ik_u64 iova, ik_u64 size)
{
	(void)cookie;
	H.sync_maps++;
	H.sm_iova = iova;
	H.sm_size = size;
}

static void h_iotlb_sync(void *cookie, struct ik_gather *g)
{
	(void)cookie;
	(void)g;
	H.iotlb_syncs++;
}


/* ---- the walker's memory ---- */

static int m_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	struct page *p = pg_find(addr);
	uint64_t off;

	(void)ctx;
	FZ_CHECK(p && p->cpu, "walker read %#llx: not live table memory", (unsigned long long)addr);
	off = addr - p->addr;
	FZ_CHECK(!(addr & 7) && off + 8 <= p->size, "walker read %#llx: misaligned or past the page",
		 (unsigned long long)addr);
	memcpy(val, (p->dev ? p->dev : p->cpu) + off, 8);
	p->visible = true;
	return 0;
}

static int m_cas64(void *ctx, ik_u64 addr, ik_u64 old, ik_u64 val)
{
	struct page *p = pg_find(addr);
	uint64_t cur, off;

	(void)ctx;
	FZ_CHECK(p && p->cpu && !(addr & 7), "walker update of %#llx: not live",
		 (unsigned long long)addr);
	off = addr - p->addr;
	memcpy(&cur, (p->dev ? p->dev : p->cpu) + off, 8);
	if (cur != old)
		return -EAGAIN;
	/* the unit's own update reaches memory (and so the CPU) */
	memcpy(p->cpu + off, &val, 8);
	if (p->dev)
		memcpy(p->dev + off, &val, 8);
	return 0;
}

static const struct ik_pt_mem MEM = { m_read64, m_cas64, NULL };

/* ================================================================ model */

struct ext {
	uint64_t iova, size, pa, leaf;
	unsigned prot;
};

static struct {
	struct ext e[MAX_EXT];
	size_t n;
	uint64_t leaves;
	uint64_t dirty[4 * LEAF_CAP]; /* bases of dirty leaves, sorted */
	size_t ndirty;
	/* Entries of a page size above the granule that hold a table, possibly
	 * emptied by unmaps: (entry size, base).  Without flush_walk and
	 * flush_all the engine keeps such a table, and a map there uses
	 * smaller leaves instead of a block (pgtable.h, the hooks comment). */
	struct tbl { uint64_t size, base; } tbl[MAX_TBL];
	size_t ntbl;
} M;

static struct ik_pgtable *PT;
static struct ik_pgtable_cfg CFG;
static struct ik_pt_geometry G;
static struct ik_pt_walker W, WREG;
static bool have_wreg;
static uint64_t IAS_END; /* 2^ias (ias < 64) */
static uint64_t BIG;	  /* the largest page size */

static uint64_t ext_iova(size_t i)
{
	return M.e[i].iova;
}

static size_t ext_lower(uint64_t iova)
{
	return fz_lower(M.n, ext_iova, iova);
}

/* The extent holding iova, or -1. */
static long ext_find(uint64_t iova)
{
	size_t i = ext_lower(iova);

	if (i < M.n && M.e[i].iova == iova)
		return (long)i;
	if (i > 0 && iova - M.e[i - 1].iova < M.e[i - 1].size)
		return (long)(i - 1);
	return -1;
}

static bool model_overlaps(uint64_t iova, uint64_t size)
{
	size_t i = ext_lower(iova);

	if (i < M.n && M.e[i].iova < iova + size)
		return true;
	return i > 0 && M.e[i - 1].iova + M.e[i - 1].size > iova;
}

static bool tbl_has(uint64_t size, uint64_t base)
{
	for (size_t i = 0; i < M.ntbl; i++)
		if (M.tbl[i].size == size && M.tbl[i].base == base)
			return true;
	return false;
}

/* Tables of entries inside [s, e) are gone (an unmap cleared their entries,
 * or a block replaced them). */
static void tbl_drop_within(uint64_t s, uint64_t e)
{
	size_t j = 0;

	for (size_t i = 0; i < M.ntbl; i++)
		if (!(M.tbl[i].base >= s && M.tbl[i].base - s + M.tbl[i].size <= e - s))
			M.tbl[j++] = M.tbl[i];
	M.ntbl = j;
}

/* Leaves of size `leaf` over [iova, iova + size): every entry of a larger
 * page size around them holds a table; an entry of their own size holds
 * them, not a table. */
static void tbl_note_leaves(uint64_t iova, uint64_t size, uint64_t leaf)
{
	if (leaf > (1ull << G.lg2_granule))
		for (uint64_t o = 0; o < size; o += leaf)
			tbl_drop_within(iova + o, iova + o + leaf);
	for (int b = 0; b < 64; b++) {
		uint64_t E = 1ull << b;

		if (E <= leaf || !(G.pgsize_bitmap & E))
			continue;
		for (uint64_t at = iova & ~(E - 1); at < iova + size && at >= (iova & ~(E - 1));
		     at += E) {
			if (tbl_has(E, at))
				continue;
			FZ_CHECK(M.ntbl < MAX_TBL, "table model full");
			M.tbl[M.ntbl].size = E;
			M.tbl[M.ntbl].base = at;
			M.ntbl++;
			if (at + E < at)
				break;
		}
	}
}

static void ext_insert(uint64_t iova, uint64_t size, uint64_t pa, uint64_t leaf, unsigned prot)
{
	size_t i = ext_lower(iova);

	tbl_note_leaves(iova, size, leaf);

	FZ_CHECK(M.n < MAX_EXT, "model full");
	memmove(&M.e[i + 1], &M.e[i], (M.n - i) * sizeof(M.e[0]));
	M.e[i].iova = iova;
	M.e[i].size = size;
	M.e[i].pa = pa;
	M.e[i].leaf = leaf;
	M.e[i].prot = prot;
	M.n++;
	M.leaves += size / leaf;
}

static bool dirty_overflow;
static bool split_budget; /* the model follows an unmap it may still skip */

static uint64_t dirty_at(size_t i)
{
	return M.dirty[i];
}

static size_t dirty_lower(uint64_t iova)
{
	return fz_lower(M.ndirty, dirty_at, iova);
}

static bool is_dirty(uint64_t leaf_base)
{
	size_t i = dirty_lower(leaf_base);

	return i < M.ndirty && M.dirty[i] == leaf_base;
}

static void set_dirty(uint64_t leaf_base, bool on)
{
	size_t i = dirty_lower(leaf_base);
	bool is = i < M.ndirty && M.dirty[i] == leaf_base;

	if (on && !is) {
		if (M.ndirty >= 4 * LEAF_CAP) {
			dirty_overflow = true; /* the op is undone and skipped */
			return;
		}
		memmove(&M.dirty[i + 1], &M.dirty[i], (M.ndirty - i) * sizeof(M.dirty[0]));
		M.dirty[i] = leaf_base;
		M.ndirty++;
	} else if (!on && is) {
		memmove(&M.dirty[i], &M.dirty[i + 1], (M.ndirty - i - 1) * sizeof(M.dirty[0]));
		M.ndirty--;
	}
}

/* Whether a map may replace an emptied table by a block: only where it can
 * invalidate walk caches first (flush_walk or flush_all). */
static bool keeps_tables_ok(void)
{
	return HOOKS.flush_walk || HOOKS.flush_all;
}

/* The largest page size of the geometry that is <= limit, divides `at` and
 * `pa` and fits in `rem`, and that the engine may place there. */
static uint64_t best_leaf(uint64_t at, uint64_t pa, uint64_t rem, uint64_t limit)
{
	for (int b = 63; b >= 0; b--) {
		uint64_t sz = 1ull << b;

		if (!(G.pgsize_bitmap & sz) || sz > limit || sz > rem || ((at | pa) & (sz - 1)))
			continue;
		if (!keeps_tables_ok() && sz > (1ull << G.lg2_granule) && tbl_has(sz, at))
			continue; /* a kept (empty) table: smaller leaves inside it */
		return sz;
	}
	return 0;
}

/* Cover [at, at + len) -> pa with leaves <= limit as the engine would,
 * one extent per run of equal leaves; returns the leaves added. */
static uint64_t fill_leaves(uint64_t at, uint64_t pa, uint64_t len, uint64_t limit, unsigned prot,
			    bool dirty)
{
	uint64_t added = 0;

	while (len) {
		uint64_t sz, run;

		/* An unmap's split past the model's leaf budget (far more
		 * leaves than it can hold, e.g. a 512G block of a table set
		 * with no size between it and 4K): stop; op_unmap sees
		 * M.leaves > LEAF_CAP and skips the unmap.  (A map has happened
		 * by the time the model follows it: that fill must complete.) */
		if (split_budget && M.leaves > LEAF_CAP)
			break;
		sz = best_leaf(at, pa, len, limit);
		FZ_CHECK(sz, "no page size fits (harness)");
		run = sz;
		while (run + sz <= len && (!split_budget || run / sz <= LEAF_CAP) &&
		       best_leaf(at + run, pa + run, len - run, limit) == sz)
			run += sz;
		ext_insert(at, run, pa, sz, prot);
		if (dirty && M.ndirty + run / sz > 4 * LEAF_CAP)
			dirty_overflow = true;
		else if (dirty)
			for (uint64_t o = 0; o < run; o += sz)
				set_dirty(at + o, true);
		added += run / sz;
		at += run;
		pa += run;
		len -= run;
	}
	return added;
}

/* Leaves a map of the segments (back to back) would make, as the engine
 * chooses them (page sizes depend on iova and paddr alignment). */
static uint64_t count_map_leaves(uint64_t iova, const struct ik_seg *segs, size_t n, uint64_t pgsize)
{
	uint64_t leaves = 0;
	size_t i = 0;

	while (i < n) {
		uint64_t pa = segs[i].paddr, len = segs[i].len;

		i++;
		while (i < n && segs[i].paddr == pa + len)
			len += segs[i++].len;
		if (pgsize) {
			leaves += len / pgsize;
		} else {
			for (uint64_t at = iova, p = pa, rem = len; rem && leaves <= LEAF_CAP;) {
				uint64_t sz = best_leaf(at, p, rem, ~0ull);

				leaves++;
				at += sz;
				p += sz;
				rem -= sz;
			}
		}
		iova += len;
	}
	return leaves;
}

/* Apply a successful map to the model. */
static void model_map(uint64_t iova, const struct ik_seg *segs, size_t n, uint64_t pgsize,
		      unsigned prot)
{
	size_t i = 0;

	while (i < n) {
		uint64_t pa = segs[i].paddr, len = segs[i].len;

		i++;
		while (i < n && segs[i].paddr == pa + len)
			len += segs[i++].len; /* physically contiguous: one range */
		if (pgsize) {
			/* Forced pages, split into smaller leaves where an entry
			 * of that size holds a table the engine must keep. */
			for (uint64_t o = 0; o < len; o += pgsize) {
				if (!keeps_tables_ok() && pgsize > (1ull << G.lg2_granule) &&
				    tbl_has(pgsize, iova + o))
					fill_leaves(iova + o, pa + o, pgsize, pgsize - 1, prot, false);
				else
					ext_insert(iova + o, pgsize, pa + o, pgsize, prot);
			}
		} else {
			fill_leaves(iova, pa, len, ~0ull, prot, false);
		}
		iova += len;
	}
}

/* Apply an unmap of [s, e) to the model; returns the bytes that were
 * mapped there, the smallest leaf cleared in *minleaf, the first and last
 * unmapped byte, and whether a block was split. */
static uint64_t model_unmap(uint64_t s, uint64_t e, uint64_t *minleaf, uint64_t *first,
			    uint64_t *last_end, bool *split)
{
	uint64_t bytes = 0;
	size_t i = ext_lower(s);

	*minleaf = 0;
	*first = ~0ull;
	*last_end = 0;
	*split = false;
	if (i > 0)
		i--;
	while (i < M.n && M.e[i].iova < e) {
		struct ext x = M.e[i];
		uint64_t xs = x.iova, xe = x.iova + x.size, cs, ce, lb, le;

		if (xe <= s) {
			i++;
			continue;
		}
		/* remove the extent, then add back what stays */
		memmove(&M.e[i], &M.e[i + 1], (M.n - i - 1) * sizeof(M.e[0]));
		M.n--;
		M.leaves -= x.size / x.leaf;
		cs = s > xs ? s : xs;
		ce = e < xe ? e : xe;
		bytes += ce - cs;
		if (*minleaf == 0 || x.leaf < *minleaf)
			*minleaf = x.leaf;
		if (cs < *first)
			*first = cs;
		if (ce > *last_end)
			*last_end = ce;
		/* the leaves holding cs and ce - 1 */
		lb = cs - ((cs - xs) % x.leaf);
		le = ce + ((x.leaf - (ce - xs) % x.leaf) % x.leaf);
		if (lb > xs)
			ext_insert(xs, lb - xs, x.pa, x.leaf, x.prot);
		if (le < xe)
			ext_insert(le, xe - le, x.pa + (le - xs), x.leaf, x.prot);
		for (uint64_t o = lb; o < le; o += x.leaf) {
			bool d = is_dirty(o);

			set_dirty(o, false);
			if (o < cs) { /* split: [o, cs) stays, in smaller leaves */
				*split = true;
				fill_leaves(o, x.pa + (o - xs), cs - o, x.leaf - 1, x.prot, d);
			}
			if (o + x.leaf > ce) {
				uint64_t a = ce > o ? ce : o;

				*split = true;
				fill_leaves(a, x.pa + (a - xs), o + x.leaf - a, x.leaf - 1, x.prot, d);
			}
		}
		i = ext_lower(ce);
		if (i > 0)
			i--;
	}
	/* An unmap that covers a table's whole entry clears the entry. */
	tbl_drop_within(s, e);
	return bytes;
}

/* ---- what the format says a prot decodes to ---- */

static void expect_prot(unsigned prot, unsigned *dprot, uint64_t *attr)
{
	unsigned p = 0;
	uint64_t a = 0;
	bool snp;

	switch (G.fmt) {
	case IK_PT_LPAE_S1:
		p = IK_PROT_READ | (prot & IK_PROT_WRITE) | (prot & IK_PROT_PRIV);
		if (prot & (IK_PROT_NOEXEC | IK_PROT_MMIO))
			p |= IK_PROT_NOEXEC;
		p |= prot & IK_PROT_CACHE ? IK_PROT_CACHE : prot & IK_PROT_MMIO;
		a = prot & IK_PROT_CACHE ? IK_LPAE_MAIR_IDX_WBRWA
		    : prot & IK_PROT_MMIO ? IK_LPAE_MAIR_IDX_DEV
					  : IK_LPAE_MAIR_IDX_NC;
		break;
	case IK_PT_LPAE_S2:
		p = prot & (IK_PROT_READ | IK_PROT_WRITE);
		if (prot & (IK_PROT_NOEXEC | IK_PROT_MMIO))
			p |= IK_PROT_NOEXEC;
		p |= prot & IK_PROT_CACHE ? IK_PROT_CACHE : prot & IK_PROT_MMIO;
		a = prot & IK_PROT_CACHE ? IK_LPAE_S2_MEMATTR_WB
		    : prot & IK_PROT_MMIO ? IK_LPAE_S2_MEMATTR_DEV
					  : IK_LPAE_S2_MEMATTR_NC;
		break;
	case IK_PT_AMD_V1:
		/* FC is the only attribute; no execute permission */
		snp = (prot & IK_PROT_CACHE) || (G.fmt_flags & IK_AMD_FLAG_FORCE_FC);
		p = IK_PROT_NOEXEC | (prot & (IK_PROT_READ | IK_PROT_WRITE)) | (snp ? IK_PROT_CACHE : 0);
		a = (snp ? 1u : 0u) | ((G.fmt_flags & IK_AMD_FLAG_U) ? 2u : 0u);
		break;
	case IK_PT_VTD_SL:
		snp = (G.fmt_flags & IK_VTD_FLAG_FORCE_SNP) ||
		      ((prot & IK_PROT_CACHE) && (G.fmt_flags & IK_VTD_FLAG_SC));
		p = IK_PROT_NOEXEC | (prot & (IK_PROT_READ | IK_PROT_WRITE)) | (snp ? IK_PROT_CACHE : 0);
		a = snp;
		break;
	case IK_PT_RISCV_S1:	/* no memory types (no Svpbmt); W implies R */
		p = IK_PROT_READ | (prot & (IK_PROT_WRITE | IK_PROT_PRIV | IK_PROT_NOEXEC));
		break;
	case IK_PT_RISCV_S2:	/* every G-stage leaf is U: PRIV is not kept */
		p = IK_PROT_READ | (prot & (IK_PROT_WRITE | IK_PROT_NOEXEC));
		break;
	default: /* IK_PT_VTD_FL, IK_PT_AMD_V2 */
		p = IK_PROT_READ | (prot & (IK_PROT_WRITE | IK_PROT_PRIV | IK_PROT_NOEXEC));
		p |= prot & IK_PROT_MMIO ? IK_PROT_MMIO : prot & IK_PROT_CACHE;
		a = prot & IK_PROT_MMIO ? 3 : prot & IK_PROT_CACHE ? 0 : 2;
		break;
	}
	*dprot = p;
	*attr = a;
}

static bool expect_dirty(const struct ext *x, uint64_t leaf_base)
{
	if (G.quirks & IK_PT_QUIRK_DIRTY)
		return is_dirty(leaf_base);
	/* x86 and RISC-V leaves: D preset on writable ones */
	return (G.fmt == IK_PT_VTD_FL || G.fmt == IK_PT_AMD_V2 || G.fmt == IK_PT_RISCV_S1 ||
		G.fmt == IK_PT_RISCV_S2) &&
	       (x->prot & IK_PROT_WRITE);
}

/* ================================================================ checks */

static void check_walk_one(const struct ik_pt_walker *w, uint64_t iova, const char *which)
{
	struct ik_pt_walk_result r;
	long i = iova < IAS_END ? ext_find(iova) : -1;
	int err = ik_pt_walk(w, &MEM, iova, 0, &r);

	FZ_CHECK(err == 0, "%s walk(%#llx) = %d", which, (unsigned long long)iova, err);
	if (i < 0) {
		FZ_CHECK(r.fault == IK_PT_FAULT_TRANSLATION,
			 "%s walk(%#llx): unmapped, fault %d oa %#llx", which, (unsigned long long)iova,
			 r.fault, (unsigned long long)r.oa);
		return;
	}
	{
		const struct ext *x = &M.e[i];
		uint64_t off = iova - x->iova, base = iova - (off % x->leaf), attr;
		unsigned dprot;

		expect_prot(x->prot, &dprot, &attr);
		FZ_CHECK(r.fault == IK_PT_FAULT_NONE && r.oa == x->pa + off && r.pgsize == x->leaf,
			 "%s walk(%#llx): fault %d oa %#llx pgsize %#llx, model oa %#llx leaf %#llx",
			 which, (unsigned long long)iova, r.fault, (unsigned long long)r.oa,
			 (unsigned long long)r.pgsize, (unsigned long long)(x->pa + off),
			 (unsigned long long)x->leaf);
		FZ_CHECK(r.prot == dprot && r.attr == attr,
			 "%s walk(%#llx): prot %#x attr %#llx, expected %#x %#llx for prot %#x", which,
			 (unsigned long long)iova, r.prot, (unsigned long long)r.attr, dprot,
			 (unsigned long long)attr, x->prot);
		FZ_CHECK(r.dirty == expect_dirty(x, base), "%s walk(%#llx): dirty %d, model %d", which,
			 (unsigned long long)iova, r.dirty, expect_dirty(x, base));
	}
}

static void check_addr(uint64_t iova)
{
	uint64_t pa = 0x77, pgsize = 0x77;
	int err;
	long i;

	if (IAS_END && iova >= IAS_END) {
		err = ik_pgtable_iova_to_phys(PT, iova, &pa, &pgsize);
		FZ_CHECK(err == -EINVAL, "iova_to_phys(%#llx) beyond ias = %d", (unsigned long long)iova, err);
		check_walk_one(&W, iova, "engine");
		return;
	}
	i = ext_find(iova);
	err = ik_pgtable_iova_to_phys(PT, iova, &pa, &pgsize);
	if (i < 0) {
		FZ_CHECK(err == -ENOENT, "iova_to_phys(%#llx) unmapped = %d (pa %#llx)",
			 (unsigned long long)iova, err, (unsigned long long)pa);
	} else {
		const struct ext *x = &M.e[i];

		FZ_CHECK(err == 0 && pa == x->pa + (iova - x->iova) && pgsize == x->leaf,
			 "iova_to_phys(%#llx) = %d pa %#llx pgsize %#llx, model %#llx leaf %#llx",
			 (unsigned long long)iova, err, (unsigned long long)pa,
			 (unsigned long long)pgsize, (unsigned long long)(x->pa + (iova - x->iova)),
			 (unsigned long long)x->leaf);
	}
	check_walk_one(&W, iova, "engine");
	if (have_wreg)
		check_walk_one(&WREG, iova, "from-registers");
}

static void check_range(uint64_t iova, uint64_t size)
{
	uint64_t g = 1ull << G.lg2_granule;

	if (!size)
		return;
	check_addr(iova);
	check_addr(iova + size - g);
	check_addr(iova + (size / 2 & ~(g - 1)));
	if (iova >= g)
		check_addr(iova - g);
	if (iova + size < (IAS_END ? IAS_END : ~0ull))
		check_addr(iova + size);
}

/* ---- the engine's dump against the model ---- */

struct dump_ctx {
	size_t i;	/* next model extent */
	uint64_t at;
	bool bad;
};

static int dump_cb(void *ctx, const struct ik_pt_range *r)
{
	struct dump_ctx *d = (struct dump_ctx *)ctx;
	uint64_t iova, oa, size = 0, pgsize = ~0ull, attr = 0, a2;
	unsigned dprot = 0, p2;

	FZ_CHECK(d->i < M.n, "dump: range [%#llx, +%#llx) not in the model", (unsigned long long)r->iova,
		 (unsigned long long)r->size);
	iova = M.e[d->i].iova;
	oa = M.e[d->i].pa;
	expect_prot(M.e[d->i].prot, &dprot, &attr);
	/* merge model extents as the dump does */
	while (d->i < M.n && M.e[d->i].iova == iova + size && M.e[d->i].pa == oa + size) {
		expect_prot(M.e[d->i].prot, &p2, &a2);
		if (p2 != dprot || a2 != attr)
			break;
		size += M.e[d->i].size;
		if (M.e[d->i].leaf < pgsize)
			pgsize = M.e[d->i].leaf;
		d->i++;
	}
	FZ_CHECK(r->iova == iova && r->oa == oa && r->size == size && r->pgsize == pgsize &&
			 r->prot == dprot && r->attr == attr,
		 "dump [%#llx, +%#llx) -> %#llx pgsize %#llx prot %#x attr %#llx; model [%#llx, +%#llx) -> %#llx pgsize %#llx prot %#x attr %#llx",
		 (unsigned long long)r->iova, (unsigned long long)r->size, (unsigned long long)r->oa,
		 (unsigned long long)r->pgsize, r->prot, (unsigned long long)r->attr,
		 (unsigned long long)iova, (unsigned long long)size, (unsigned long long)oa,
		 (unsigned long long)pgsize, dprot, (unsigned long long)attr);
	return 0;
}

/* Dump [lo, hi) - the whole space when `full`, else around the model's
 * extents (a dump visits every entry of the tables it crosses) - and
 * compare it with the model. */
static void check_dump(bool hw, bool full)
{
	struct dump_ctx d = { 0, 0, false };
	uint64_t end = IAS_END ? IAS_END : ~0ull, lo = 0, hi = end;
	int err;

	if (!full) {
		if (!M.n)
			return;
		lo = M.e[0].iova;
		hi = M.e[M.n - 1].iova + M.e[M.n - 1].size;
		lo = lo > BIG ? (lo - BIG) & ~(BIG - 1) : 0;
		hi = hi < end - BIG ? hi + BIG : end;
	}
	err = hw ? ik_pt_walker_dump(&W, &MEM, lo, hi - lo, dump_cb, &d)
		 : ik_pgtable_dump(PT, lo, hi - lo, dump_cb, &d);

	FZ_CHECK(err == 0, "%s dump = %d", hw ? "walker" : "engine", err);
	FZ_CHECK(d.i == M.n, "%s dump ended after %zu of %zu model extents", hw ? "walker" : "engine",
		 d.i, M.n);
}

/* ---- an independent traversal of the tables (engine view) ---- */

static bool my_is_table(uint64_t e, unsigned lvl)
{
	if (!e || lvl == 0)
		return false;
	switch (G.fmt) {
	case IK_PT_LPAE_S1:
	case IK_PT_LPAE_S2:
		return (e & 3) == 3;
	case IK_PT_VTD_SL:
		return lvl > 2 || !(e & IK_VTD_SL_PS);
	case IK_PT_RISCV_S1:
	case IK_PT_RISCV_S2:
		return !(e & 0xe);	/* R = W = X = 0: a pointer */
	case IK_PT_AMD_V1: /* NextLevel 0 or 7: a page */
		return ((e >> 9) & 7) != 0 && ((e >> 9) & 7) != 7;
	default:
		return lvl > 2 || !(e & IK_VTD_FL_PS);
	}
}

static uint64_t my_table_addr(uint64_t e)
{
	uint64_t a;

	if (G.fmt == IK_PT_RISCV_S1 || G.fmt == IK_PT_RISCV_S2)
		return ((e >> 10) & ((1ull << 44) - 1)) << 12;	/* PPN 53:10 */
	if (G.fmt != IK_PT_LPAE_S1 && G.fmt != IK_PT_LPAE_S2)
		return e & IK_VTD_ADDR_MASK;
	/* NLTA: 64K keeps [51:48] in [15:12]; LPA2 [51:50] in [9:8] */
	if (G.lg2_granule == 16)
		a = (e & 0x0000ffffffff0000ull) | ((e >> 12) & 0xf) << 48;
	else if (G.fmt_flags & IK_LPAE_FLAG_LPA2)
		a = (e & 0x0003fffffffff000ull) | ((e >> 8) & 0x3) << 50;
	else
		a = e & 0x0000fffffffff000ull;
	return a & ~((1ull << G.lg2_granule) - 1);
}

struct trav {
	uint64_t pages, entries, hash;
	bool over;
};

static void trav_tbl(struct trav *t, uint64_t addr, unsigned lvl, uint64_t nent)
{
	struct page *p = pg_find(addr);

	/* default pages may sit inside an over-aligned block */
	FZ_CHECK(p && p->cpu && (p->addr == addr || !H.hooks_alloc) && addr - p->addr + nent * 8 <= p->size,
		 "traversal: table %#llx at level %u is not a live page", (unsigned long long)addr, lvl);
	FZ_CHECK(!p->reached, "traversal: table %#llx reached twice", (unsigned long long)addr);
	FZ_CHECK(!p->pending, "traversal: table %#llx waits in a gather but is reachable",
		 (unsigned long long)addr);
	p->reached = true;
	t->pages++;
	t->entries += nent;
	if (t->entries > TRAVERSE_BUDGET) {
		t->over = true;
		return;
	}
	for (uint64_t i = 0; i < nent && !t->over; i++) {
		uint64_t e;

		memcpy(&e, p->cpu + (addr - p->addr) + i * 8, 8);
		t->hash = (t->hash ^ e ^ (i << 48)) * 1099511628211ull;
		if (my_is_table(e, lvl))
			trav_tbl(t, my_table_addr(e), lvl - 1, 1ull << G.bits);
	}
}

static bool traverse(struct trav *t)
{
	struct ik_pgtable_info info;

	for (size_t i = 0; i < NPG; i++)
		PG[i].reached = false;
	memset(t, 0, sizeof(*t));
	t->hash = 1469598103934665603ull;
	ik_pgtable_get_info(PT, &info);
	trav_tbl(t, info.root_iommu, G.nlevels - 1u, 1ull << G.top_bits);
	return !t->over;
}

static bool track = true; /* traversals affordable */

static struct ik_gather GS[2];

static void check_accounting(const struct trav *t)
{
	struct ik_pgtable_stats st;
	uint64_t queued = GS[0].nr_tables + GS[1].nr_tables;

	ik_pgtable_get_stats(PT, &st);
	FZ_CHECK(st.tables_live == t->pages + st.cache_pages + queued,
		 "tables_live %llu, reachable %llu + cached %llu + queued %llu",
		 (unsigned long long)st.tables_live, (unsigned long long)t->pages,
		 (unsigned long long)st.cache_pages, (unsigned long long)queued);
	if (H.hooks_alloc)
		FZ_CHECK(st.tables_live == NPG, "tables_live %llu, %zu pages allocated",
			 (unsigned long long)st.tables_live, NPG);
}

/* Before an operation: note what is reachable. */
static bool snap_before(uint64_t *hash)
{
	struct trav t;

	if (!track)
		return false;
	if (!traverse(&t)) {
		track = false;
		return false;
	}
	for (size_t i = 0; i < NPG; i++)
		PG[i].before = PG[i].reached;
	*hash = t.hash;
	check_accounting(&t);
	return true;
}

/* After it: pages reachable before and not now.  Stores their count in
 * *lostp and marks them pending in gather `gid` (gid < 0: just count).
 * Returns false when the tables have grown past the traversal budget: then
 * nothing is known (and tracking stops). */
static bool snap_after(uint64_t *hash, int gid, uint64_t *lostp)
{
	struct trav t;
	uint64_t lost = 0;

	*lostp = 0;
	if (!traverse(&t)) {
		FZ_TRACE("tables past the traversal budget: table tracking off");
		track = false;
		return false;
	}
	*hash = t.hash;
	for (size_t i = 0; i < NPG; i++) {
		if (!PG[i].before || PG[i].reached)
			continue;
		lost++;
		if (gid >= 0) {
			PG[i].pending = true;
			PG[i].gid = gid;
			PG[i].snap = hash_bytes(PG[i].cpu, PG[i].size);
		}
	}
	check_accounting(&t);
	*lostp = lost;
	return true;
}

/* ================================================================ operations */

static uint64_t WIN, PAWIN;

static uint64_t pick_unit(struct fz *f)
{
	uint64_t sizes[8];
	unsigned n = 0;

	for (int b = 0; b < 64 && n < 8; b++)
		if (G.pgsize_bitmap & (1ull << b))
			sizes[n++] = 1ull << b;
	return sizes[fz_u8(f) % n];
}

static uint64_t gen_iova(struct fz *f)
{
	uint8_t k = fz_u8(f);
	uint64_t g = 1ull << G.lg2_granule, v;

	if (k < 200) {
		v = WIN + fz_u8(f) % 32 * pick_unit(f) + (k & 1 ? (fz_u8(f) % 16) * g : 0);
	} else if (k < 230) {
		v = (IAS_END ? IAS_END : 0) - (1 + fz_u8(f) % 8) * pick_unit(f);
	} else if (k < 245) {
		v = fz_edgy(f) & ~(g - 1);
	} else {
		v = fz_u64(f); /* anything, unaligned too */
	}
	return v;
}

static uint64_t gen_size(struct fz *f)
{
	uint8_t k = fz_u8(f);
	uint64_t g = 1ull << G.lg2_granule;

	if (k < 200)
		return (1 + fz_u8(f) % 8) * pick_unit(f) + (k & 1 ? (fz_u8(f) % 8) * g : 0);
	if (k < 220)
		return 0;
	if (k < 240)
		return fz_edgy(f) & ~(g - 1);
	return fz_u64(f);
}

static uint64_t gen_pa(struct fz *f, uint64_t iova)
{
	uint8_t k = fz_u8(f);
	uint64_t g = 1ull << G.lg2_granule;

	if (k < 160)
		return PAWIN + (iova - WIN); /* congruent: blocks possible */
	if (k < 220)
		return PAWIN + (uint64_t)fz_u16(f) * g;
	if (k < 240)
		return (G.oas < 64 ? (1ull << G.oas) : 0) - (1 + fz_u8(f) % 4) * BIG;
	return fz_u64(f);
}

static unsigned gen_prot(struct fz *f)
{
	uint8_t k = fz_u8(f);

	if (k < 250)
		return (k & 3 ? (k & 3) : 3) | ((k >> 2) & 0x3c);
	return fz_u8(f); /* sometimes invalid */
}

static bool prot_ok(unsigned prot)
{
	return !(prot & ~IK_PROT_ALL) && (prot & (IK_PROT_READ | IK_PROT_WRITE)) &&
	       !((prot & IK_PROT_CACHE) && (prot & IK_PROT_MMIO));
}

static bool range_ok(uint64_t start, uint64_t len, uint32_t bits)
{
	if (len == 0 || start + len < start)
		return false;
	return bits >= 64 || start + len - 1 < (1ull << bits);
}

/* Arm an injected failure for the coming call. */
static bool arm_fail(struct fz *f)
{
	uint8_t k = fz_u8(f);

	H.range_calls = 0;
	H.range_fail_at = 0;
	if (k < 200) {
		fz_alloc_arm(&FA, 0);
		return false;
	}
	if (k < 240 || !H.hooks_alloc) {
		fz_alloc_arm(&FA, 1 + k % 6);
	} else {
		fz_alloc_arm(&FA, 0);
		H.range_fail_at = 1 + k % 4;
	}
	return true;
}

static void disarm(void)
{
	fz_alloc_arm(&FA, 0);
	H.range_fail_at = 0;
}

static void op_begin(void)
{
	H.flushed = false;
	H.sync_maps = H.flush_walks = H.gather_adds = 0;
}

/* A map request in any of the three forms. */
static void op_map(struct fz *f)
{
	struct ik_seg segs[8];
	uint8_t k = fz_u8(f);
	int form = k % 3, err;
	bool exists = false;
	uint64_t iova = gen_iova(f), pgsize = 0, pgcount = 0, total = 0, mapped = 0x55, h0 = 0, h1 = 0,
		 gmask = (1ull << G.lg2_granule) - 1;
	unsigned prot = gen_prot(f);
	size_t n = 1;
	bool valid = prot_ok(prot), fail, snap;

	if (form == 0) {
		uint64_t size = gen_size(f);

		segs[0].paddr = gen_pa(f, iova);
		segs[0].len = size;
		valid = valid && !((iova | segs[0].paddr | size) & gmask) &&
			range_ok(iova, size, G.ias) && range_ok(segs[0].paddr, size, G.oas);
		total = size;
	} else if (form == 1) {
		pgsize = fz_u8(f) < 240 ? pick_unit(f) : 1ull << (fz_u8(f) % 40);
		pgcount = fz_u8(f) < 250 ? 1 + fz_u8(f) % 8 : fz_edgy(f);
		segs[0].paddr = gen_pa(f, iova);
		valid = valid && (G.pgsize_bitmap & pgsize) && pgcount &&
			!((iova | segs[0].paddr) & (pgsize - 1)) && pgcount <= ~0ull / pgsize;
		segs[0].len = pgcount * pgsize;
		valid = valid && range_ok(iova, segs[0].len, G.ias) &&
			range_ok(segs[0].paddr, segs[0].len, G.oas);
		total = segs[0].len;
	} else {
		uint64_t pa = gen_pa(f, iova);

		n = 1 + fz_u8(f) % 8;
		valid = valid && !(iova & gmask);
		for (size_t i = 0; i < n; i++) {
			uint8_t c = fz_u8(f);

			segs[i].len = c < 240 ? (1 + c % 4) * pick_unit(f) : gen_size(f);
			segs[i].paddr = c & 1 ? pa : gen_pa(f, iova + total);
			pa = segs[i].paddr + segs[i].len;
			valid = valid && !((segs[i].paddr | segs[i].len) & gmask) &&
				range_ok(segs[i].paddr, segs[i].len, G.oas) && total + segs[i].len >= total;
			total += segs[i].len;
		}
		valid = valid && range_ok(iova, total, G.ias);
	}
	if (valid && model_overlaps(iova, total)) {
		valid = false;
		exists = true; /* -EEXIST expected */
	}
	if (valid) {
		/* Keep the model within its arrays: a map adds at most one
		 * extent per leaf, and without forced pages at most one per
		 * leaf size per end of each physically contiguous run. */
		uint64_t add = count_map_leaves(iova, segs, n, pgsize), ext = add;

		if (!pgsize && ext > (uint64_t)n * 128)
			ext = (uint64_t)n * 128;
		if (M.leaves + add > LEAF_CAP || M.n + ext > MAX_EXT - 64)
			return;
	}
	snap = snap_before(&h0);
	fail = arm_fail(f);
	op_begin();
	if (form == 0)
		err = ik_pgtable_map(PT, iova, segs[0].paddr, segs[0].len, prot);
	else if (form == 1)
		err = ik_pgtable_map_pages(PT, iova, segs[0].paddr, pgsize, pgcount, prot);
	else
		err = ik_pgtable_map_sg(PT, iova, segs, n, prot, fz_u8(f) & 1 ? &mapped : NULL);
	disarm();
	FZ_TRACE("map form %d %#llx +%#llx pa %#llx pgsize %#llx segs %zu prot %#x fail %d = %d", form,
		 (unsigned long long)iova, (unsigned long long)total, (unsigned long long)segs[0].paddr,
		 (unsigned long long)pgsize, n, prot, fail, err);
	if (form == 2 && mapped != 0x55)
		FZ_CHECK(mapped == (err ? 0 : total), "map_sg: mapped %#llx, err %d, total %#llx",
			 (unsigned long long)mapped, err, (unsigned long long)total);
	if (!valid) {
		FZ_CHECK(err == (exists ? -EEXIST : -EINVAL),
			 "map form %d iova %#llx size %#llx prot %#x: %d, expected %d", form,
			 (unsigned long long)iova, (unsigned long long)total, prot, err,
			 exists ? -EEXIST : -EINVAL);
	} else if (err) {
		FZ_CHECK((fail || !H.hooks_alloc) && (err == -ENOMEM || err == -ERANGE),
			 "map form %d iova %#llx size %#llx: %d", form, (unsigned long long)iova,
			 (unsigned long long)total, err);
	} else {
		model_map(iova, segs, n, pgsize, prot);
	}
	FZ_CHECK(H.sync_maps == (err ? 0u : 1u) || !HOOKS.iotlb_sync_map,
		 "iotlb_sync_map called %u times for a map that returned %d", H.sync_maps, err);
	if (!err && HOOKS.iotlb_sync_map)
		FZ_CHECK(H.sm_iova == iova && H.sm_size == total, "iotlb_sync_map(%#llx, %#llx), request [%#llx, +%#llx)",
			 (unsigned long long)H.sm_iova, (unsigned long long)H.sm_size,
			 (unsigned long long)iova, (unsigned long long)total);
	if (H.flush_walks)
		FZ_CHECK(!err && H.flush_walks == 1 && H.fw_iova == iova && H.fw_size == total &&
				 H.fw_gran == 1ull << G.lg2_granule,
			 "flush_walk %u times (%#llx, %#llx, %#llx) for map [%#llx, +%#llx) = %d",
			 H.flush_walks, (unsigned long long)H.fw_iova, (unsigned long long)H.fw_size,
			 (unsigned long long)H.fw_gran, (unsigned long long)iova,
			 (unsigned long long)total, err);
	uint64_t lost;

	if (snap && snap_after(&h1, -1, &lost)) {
		if (err)
			FZ_CHECK(h0 == h1 && !lost, "a failed map (%d) changed the tables", err);
		if (lost && (HOOKS.flush_walk || HOOKS.flush_all))
			FZ_CHECK(H.flushed, "a map replaced %llu tables without flush_walk",
				 (unsigned long long)lost);
	}
	if (valid || !err)
		check_range(iova, total);
}

/* The model's mappings, dirty leaves and tables as op_unmap() found them,
 * put back where it skips an unmap or the unmap fails. */
static struct {
	struct ext e[MAX_EXT];
	uint64_t dirty[4 * LEAF_CAP];
	struct tbl tbl[MAX_TBL];
	size_t n, ndirty, ntbl;
	uint64_t leaves;
} SAVED;

static void model_save(void)
{
	memcpy(SAVED.e, M.e, M.n * sizeof(M.e[0]));
	memcpy(SAVED.dirty, M.dirty, M.ndirty * sizeof(M.dirty[0]));
	memcpy(SAVED.tbl, M.tbl, M.ntbl * sizeof(M.tbl[0]));
	SAVED.n = M.n;
	SAVED.ndirty = M.ndirty;
	SAVED.ntbl = M.ntbl;
	SAVED.leaves = M.leaves;
}

static void model_restore(void)
{
	memcpy(M.e, SAVED.e, SAVED.n * sizeof(M.e[0]));
	memcpy(M.dirty, SAVED.dirty, SAVED.ndirty * sizeof(M.dirty[0]));
	memcpy(M.tbl, SAVED.tbl, SAVED.ntbl * sizeof(M.tbl[0]));
	M.n = SAVED.n;
	M.ndirty = SAVED.ndirty;
	M.ntbl = SAVED.ntbl;
	M.leaves = SAVED.leaves;
}

static void op_unmap(struct fz *f)
{
	uint64_t iova = gen_iova(f), size = gen_size(f), gmask = (1ull << G.lg2_granule) - 1;
	uint64_t bytes = 0, minleaf = 0, first = 0, last_end = 0, h0 = 0, h1 = 0;
	int gid = fz_u8(f) & 1;
	struct ik_gather *g = &GS[gid];
	struct ik_gather before = *g;
	bool valid, split = false, fail, snap, fresh;
	ik_s64 r;

	valid = !((iova | size) & gmask) && range_ok(iova, size, G.ias);
	if (valid) {
		model_save();
		dirty_overflow = false;
		split_budget = true;
		bytes = model_unmap(iova, iova + size, &minleaf, &first, &last_end, &split);
		split_budget = false;
		if (M.leaves > LEAF_CAP || M.n > MAX_EXT - 64 || dirty_overflow) {
			/* too many leaves after the splits: skip it */
			model_restore();
			return;
		}
	}
	fresh = g->start >= g->end && !g->tables;
	snap = snap_before(&h0);
	fail = arm_fail(f);
	op_begin();
	r = ik_pgtable_unmap(PT, iova, size, g);
	disarm();
	FZ_TRACE("unmap %#llx +%#llx gather %d fail %d = %lld", (unsigned long long)iova,
		 (unsigned long long)size, gid, fail, (long long)r);
	if (!valid) {
		FZ_CHECK(r == -EINVAL, "unmap(%#llx, %#llx) = %lld, expected -EINVAL",
			 (unsigned long long)iova, (unsigned long long)size, (long long)r);
		return;
	}
	if (r < 0) {
		FZ_CHECK((fail || !H.hooks_alloc) && split && (r == -ENOMEM || r == -ERANGE),
			 "unmap(%#llx, %#llx) = %lld (split %d)", (unsigned long long)iova,
			 (unsigned long long)size, (long long)r, split);
		model_restore();
		FZ_CHECK(g->start == before.start && g->end == before.end && g->nr_tables == before.nr_tables &&
				 g->nr_ranges == before.nr_ranges,
			 "a failed unmap changed the gather");
		if (snap) {
			uint64_t lost;

			FZ_CHECK(!snap_after(&h1, -1, &lost) || (lost == 0 && h0 == h1),
				 "a failed unmap changed the tables");
		}
		check_range(iova, size);
		return;
	}
	FZ_CHECK((uint64_t)r == bytes, "unmap(%#llx, %#llx) = %lld bytes, model %llu",
		 (unsigned long long)iova, (unsigned long long)size, (long long)r,
		 (unsigned long long)bytes);
	/* the gather: this unmap's range */
	{
		uint64_t gs, ge, gg;
		unsigned adds = HOOKS.gather_add ? H.gather_adds : g->nr_ranges - before.nr_ranges;
		bool walk_now = g->walk && !before.walk;

		if (HOOKS.gather_add) {
			gs = H.ga_iova;
			ge = H.ga_iova + H.ga_size;
			gg = H.ga_gran;
		} else {
			gs = g->start;
			ge = g->end;
			gg = g->granule;
		}
		FZ_CHECK(adds <= 1, "unmap added %u ranges to the gather", adds);
		if (bytes)
			FZ_CHECK(adds == 1, "unmap cleared %llu bytes but added no gather range",
				 (unsigned long long)bytes);
		if (adds && (HOOKS.gather_add || fresh)) {
			FZ_CHECK(gs >= iova && ge <= iova + size && gs < ge,
				 "gather [%#llx, %#llx) outside the unmap [%#llx, +%#llx)",
				 (unsigned long long)gs, (unsigned long long)ge, (unsigned long long)iova,
				 (unsigned long long)size);
			if (bytes)
				FZ_CHECK(gs <= first && ge >= last_end && gg <= minleaf && (G.pgsize_bitmap & gg),
					 "gather [%#llx, %#llx) granule %#llx misses unmapped [%#llx, %#llx) leaf %#llx",
					 (unsigned long long)gs, (unsigned long long)ge, (unsigned long long)gg,
					 (unsigned long long)first, (unsigned long long)last_end,
					 (unsigned long long)minleaf);
			if (fresh && !g->walk) {
				FZ_CHECK(bytes && gs == first && ge == last_end && gg == minleaf && !split,
					 "gather [%#llx, %#llx) granule %#llx, no walk: expected exactly [%#llx, %#llx) granule %#llx",
					 (unsigned long long)gs, (unsigned long long)ge, (unsigned long long)gg,
					 (unsigned long long)first, (unsigned long long)last_end,
					 (unsigned long long)minleaf);
			}
			if (!bytes)
				FZ_CHECK(walk_now || before.walk, "a gather range with nothing unmapped and no walk");
		}
		if (split)
			FZ_CHECK(g->walk, "a block was split but gather->walk is not set");
	}
	uint64_t lost;

	if (snap && snap_after(&h1, gid, &lost)) {
		FZ_CHECK(g->nr_tables - before.nr_tables == lost,
			 "unmap unlinked %llu tables, the gather got %u", (unsigned long long)lost,
			 g->nr_tables - before.nr_tables);
		if (lost)
			FZ_CHECK(g->walk, "tables unlinked without gather->walk");
	}
	check_range(iova, size);
}

static void do_sync(int gid)
{
	unsigned calls;
	int err;

	FZ_TRACE("sync gather %d", gid);
	for (size_t i = 0; i < NPG; i++)
		if (PG[i].pending && PG[i].gid == gid)
			FZ_CHECK(hash_bytes(PG[i].cpu, PG[i].size) == PG[i].snap,
				 "unlinked table %#llx changed before its gather was synced",
				 (unsigned long long)PG[i].addr);
	op_begin();
	calls = H.iotlb_syncs;
	H.in_sync = gid + 1;
	err = ik_pgtable_gather_sync(PT, &GS[gid]);
	H.in_sync = 0;
	FZ_CHECK(err == 0, "gather_sync = %d", err);
	FZ_CHECK(!HOOKS.iotlb_sync || H.iotlb_syncs == calls + 1, "iotlb_sync not called once");
	FZ_CHECK(GS[gid].start >= GS[gid].end && !GS[gid].nr_tables && !GS[gid].tables,
		 "gather not re-initialised by its sync");
	for (size_t i = 0; i < NPG; i++) {
		if (PG[i].pending && PG[i].gid == gid)
			PG[i].pending = false; /* in the cache now */
		PG[i].visible = false;	    /* invalidated */
	}
}

static void op_sync(struct fz *f)
{
	do_sync(fz_u8(f) & 1);
}

/* A device write through the walker: the unit marks the leaf dirty. */
static void op_device_write(struct fz *f)
{
	uint64_t iova;
	struct ik_pt_walk_result r;
	long i;
	int err;

	if (M.n && fz_u8(f) < 220) {
		const struct ext *x = &M.e[fz_below(f, M.n)];

		iova = x->iova + (fz_u16(f) % (x->size >> G.lg2_granule)) * (1ull << G.lg2_granule);
	} else {
		iova = gen_iova(f);
	}
	i = (IAS_END && iova >= IAS_END) ? -1 : ext_find(iova);
	err = ik_pt_walk(&W, &MEM, iova, IK_ACCESS_WRITE | IK_ACCESS_PRIV, &r);
	FZ_CHECK(err == 0, "walk = %d", err);
	if (i < 0) {
		FZ_CHECK(r.fault == IK_PT_FAULT_TRANSLATION, "device write to unmapped %#llx: fault %d",
			 (unsigned long long)iova, r.fault);
		return;
	}
	/* RISC-V first stage: a privileged write to a U page needs SUM */
	if (!(M.e[i].prot & IK_PROT_WRITE) ||
	    (G.fmt == IK_PT_RISCV_S1 && !(M.e[i].prot & IK_PROT_PRIV) &&
	     !(G.fmt_flags & IK_RISCV_FLAG_SUM))) {
		FZ_CHECK(r.fault == IK_PT_FAULT_PERMISSION, "device write to read-only %#llx: fault %d",
			 (unsigned long long)iova, r.fault);
		return;
	}
	FZ_CHECK(r.fault == IK_PT_FAULT_NONE, "device write to %#llx: fault %d", (unsigned long long)iova,
		 r.fault);
	if (G.quirks & IK_PT_QUIRK_DIRTY) {
		const struct ext *x = &M.e[i];

		set_dirty(iova - ((iova - x->iova) % x->leaf), true);
		FZ_CHECK(r.dirty, "device write with dirty tracking: the walk reports clean");
	}
}

static void op_dirty(struct fz *f)
{
	static uint64_t bm[1024 + 1];
	uint64_t iova = gen_iova(f), size = gen_size(f), nbits, words, pattern;
	unsigned lg2 = G.lg2_granule + (fz_u8(f) % 12), flags = fz_u8(f) % 8 == 0 ? IK_DIRTY_NO_CLEAR : 0;
	uint64_t *exp;
	int gid = fz_u8(f) % 3; /* 2: no gather */
	struct ik_gather *g = gid < 2 ? &GS[gid] : NULL;
	bool valid, supported = (G.quirks & IK_PT_QUIRK_DIRTY) != 0;
	int64_t count = 0;
	uint64_t lo = ~0ull, hi = 0, gran = 0;
	ik_s64 r;

	if (fz_u8(f) == 0xff)
		flags = fz_u8(f);
	if (fz_u8(f) == 0xfe)
		lg2 = fz_u8(f) % 70;
	valid = !(flags & ~IK_DIRTY_NO_CLEAR) && lg2 >= G.lg2_granule && lg2 <= 63 &&
		!((iova | size) & ((1ull << (lg2 & 63)) - 1)) && range_ok(iova, size, G.ias);
	nbits = valid ? size >> lg2 : 64;
	if (nbits > 64 * 1024)
		return;
	words = (nbits + 63) / 64;
	pattern = fz_u64(f); /* bits are only ever set: start from junk */
	for (uint64_t w = 0; w < words; w++)
		bm[w] = pattern * (w + 1);
	bm[words] = 0x1234567887654321ull; /* guard word */
	exp = calloc(words + 1, 8);
	memcpy(exp, bm, (words + 1) * 8);
	if (valid && supported) {
		/* every dirty leaf that meets the range sets the bits of the pages
		 * of 2^lg2 bytes its in-range part touches */
		for (size_t i = 0; i < M.ndirty; i++) {
			uint64_t b = M.dirty[i];
			long e = ext_find(b);
			uint64_t leaf, rs, re;

			FZ_CHECK(e >= 0, "dirty leaf %#llx not mapped (harness)", (unsigned long long)b);
			leaf = M.e[e].leaf;
			if (b + leaf <= iova || b >= iova + size)
				continue;
			count++;
			rs = b > iova ? b : iova;
			re = b + leaf < iova + size ? b + leaf : iova + size;
			for (uint64_t k = (rs - iova) >> lg2; k <= (re - 1 - iova) >> lg2; k++)
				exp[k / 64] |= 1ull << (k % 64);
			if (b < lo)
				lo = b;
			if (b + leaf > hi)
				hi = b + leaf;
			if (!gran || leaf < gran)
				gran = leaf;
		}
	}
	op_begin();
	{
		r = ik_pgtable_read_and_clear_dirty(PT, iova, size, flags, bm, lg2, g);
		if (!supported) {
			FZ_CHECK(r == -EOPNOTSUPP, "read_and_clear_dirty without dirty tracking = %lld",
				 (long long)r);
		} else if (!valid) {
			FZ_CHECK(r == -EINVAL, "read_and_clear_dirty(%#llx, %#llx, flags %#x, lg2 %u) = %lld",
				 (unsigned long long)iova, (unsigned long long)size, flags, lg2,
				 (long long)r);
		} else {
			FZ_CHECK(r == count, "read_and_clear_dirty(%#llx, %#llx, lg2 %u) = %lld, model %lld",
				 (unsigned long long)iova, (unsigned long long)size, lg2, (long long)r,
				 (long long)count);
			for (uint64_t w = 0; w <= words; w++)
				FZ_CHECK(bm[w] == exp[w],
					 "read_and_clear_dirty(%#llx, %#llx, lg2 %u): bitmap word %llu %016llx, expected %016llx",
					 (unsigned long long)iova, (unsigned long long)size, lg2,
					 (unsigned long long)w, (unsigned long long)bm[w],
					 (unsigned long long)exp[w]);
			if (g && count && !flags && HOOKS.gather_add)
				FZ_CHECK(H.gather_adds == 1 && H.ga_iova == lo && H.ga_iova + H.ga_size == hi &&
						 H.ga_gran == gran,
					 "dirty clear: gather (%u) [%#llx, +%#llx) granule %#llx, expected [%#llx, %#llx) granule %#llx",
					 H.gather_adds, (unsigned long long)H.ga_iova,
					 (unsigned long long)H.ga_size, (unsigned long long)H.ga_gran,
					 (unsigned long long)lo, (unsigned long long)hi,
					 (unsigned long long)gran);
			else if (HOOKS.gather_add)
				FZ_CHECK(H.gather_adds == 0, "dirty read without clearing added a gather range");
			if (!flags) /* cleared: the leaves are clean again */
				for (size_t i = M.ndirty; i-- > 0;) {
					uint64_t b = M.dirty[i];
					long e = ext_find(b);

					if (b + M.e[e].leaf > iova && b < iova + size)
						set_dirty(b, false);
				}
		}
	}
	free(exp);
	if (valid)
		check_range(iova, size);
}

/* ================================================================ config */

static bool lpae_oas_ok(uint32_t oas)
{
	return oas == 32 || oas == 36 || oas == 40 || oas == 42 || oas == 44 || oas == 48 ||
	       oas == 52;
}

/* The LPA2 layout (DS = 1): 4K and 16K with the flag; 64K has FEAT_LPA's. */
static bool lpae_ds(const struct ik_pgtable_cfg *c)
{
	return (c->fmt_flags & IK_LPAE_FLAG_LPA2) && __builtin_ctzll(c->pgsize_bitmap) != 16;
}

/* Whether the documented rules accept cfg (format headers). */
static int cfg_expect(const struct ik_pgtable_cfg *c)
{
	unsigned glg2;

	if (c->fmt < IK_PT_LPAE_S1 || c->fmt > IK_PT_AMD_V2)
		return -EOPNOTSUPP;
	if (!c->pgsize_bitmap)
		return -EINVAL;
	glg2 = (unsigned)__builtin_ctzll(c->pgsize_bitmap);
	if (c->fmt == IK_PT_LPAE_S1 || c->fmt == IK_PT_LPAE_S2) {
		ik_u32 q = IK_PT_QUIRK_DEFER_LEAF_CLEAN | IK_PT_QUIRK_DIRTY;

		if (c->fmt == IK_PT_LPAE_S1)
			q |= IK_PT_QUIRK_ARM_NS;
		if ((c->quirks & ~q) || (c->fmt_flags & ~IK_LPAE_FLAG_LPA2) ||
		    (glg2 != 12 && glg2 != 14 && glg2 != 16) || c->ias < 32 || c->ias > 52 ||
		    !lpae_oas_ok(c->oas))
			return -EINVAL;
		/* over 48 bits: FEAT_LPA/LVA (64K) or FEAT_LPA2 (4K, 16K) */
		if ((c->ias > 48 || c->oas > 48) && glg2 != 16 && !lpae_ds(c))
			return -EINVAL;
		return 0;
	}
	if (c->fmt == IK_PT_RISCV_S1 || c->fmt == IK_PT_RISCV_S2) {
		bool s1 = c->fmt == IK_PT_RISCV_S1;

		if (c->ias < 32 || c->ias > (s1 ? 56u : 59u) || c->oas < 32 || c->oas > 56 ||
		    glg2 != 12 || (c->quirks & ~(IK_PT_QUIRK_DIRTY | IK_PT_QUIRK_DEFER_LEAF_CLEAN)) ||
		    (c->fmt_flags & ~(s1 ? IK_RISCV_FLAG_SUM : 0)))
			return -EINVAL;
		return 0;
	}
	if (c->oas < 32 || c->oas > 52 || glg2 != 12)
		return -EINVAL;
	if (c->quirks & ~(IK_PT_QUIRK_DIRTY | IK_PT_QUIRK_DEFER_LEAF_CLEAN))
		return -EINVAL;
	if (c->fmt == IK_PT_AMD_V1)	/* Mode 1..6 */
		return c->ias < 21 || c->ias > 63 || (c->fmt_flags & ~(IK_AMD_FLAG_FORCE_FC | IK_AMD_FLAG_U))
			       ? -EINVAL : 0;
	if (c->fmt == IK_PT_AMD_V2)	/* x86-64, no capability flags */
		return c->ias < 32 || c->ias > 56 || c->fmt_flags ? -EINVAL : 0;
	if (c->ias < 32 || c->ias > (c->fmt == IK_PT_VTD_FL ? 56u : 57u))
		return -EINVAL;
	if (c->fmt == IK_PT_VTD_FL ? (c->fmt_flags & ~(IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G))
				   : (c->fmt_flags & ~0xfull))
		return -EINVAL;
	if ((c->fmt_flags & IK_VTD_FLAG_FORCE_SNP) && !(c->fmt_flags & IK_VTD_FLAG_SC))
		return -EINVAL;
	return 0;
}

/* Levels the format headers give a config. */
static unsigned expect_levels(const struct ik_pgtable_cfg *c)
{
	unsigned glg2 = (unsigned)__builtin_ctzll(c->pgsize_bitmap), bits = glg2 - 3, va, n;

	if (c->fmt == IK_PT_VTD_SL)
		return c->ias <= 39 ? 3 : c->ias <= 48 ? 4 : 5;
	if (c->fmt == IK_PT_VTD_FL || c->fmt == IK_PT_AMD_V2)
		return c->ias <= 47 ? 4 : 5;
	if (c->fmt == IK_PT_RISCV_S1)
		return c->ias <= 38 ? 3 : c->ias <= 47 ? 4 : 5;
	if (c->fmt == IK_PT_RISCV_S2)
		return c->ias <= 41 ? 3 : c->ias <= 50 ? 4 : 5;
	if (c->fmt == IK_PT_AMD_V1)
		return (c->ias - 12 + 8) / 9;
	va = c->ias - glg2;
	n = (va + bits - 1) / bits;
	/* stage 2 starts a level lower with 2..16 concatenated roots */
	if (c->fmt == IK_PT_LPAE_S2 && n > 1 && va - (n - 1) * bits <= 4)
		n--;
	return n;
}

/* The page sizes the geometry must keep of cfg's. */
static uint64_t expect_sizes(const struct ik_pgtable_cfg *c)
{
	unsigned glg2 = (unsigned)__builtin_ctzll(c->pgsize_bitmap), n = expect_levels(c);
	uint64_t s = 1ull << glg2, want = 0;

	if (c->fmt == IK_PT_LPAE_S1 || c->fmt == IK_PT_LPAE_S2) {
		bool ds = lpae_ds(c);

		/* Arm ARM block levels; level 0 (4K) / level 1 (16K) with DS,
		 * the 4T level-1 block of 64K with 52-bit PAs */
		want = glg2 == 12   ? (1ull << 21) | (1ull << 30) | (ds ? 1ull << 39 : 0)
		       : glg2 == 14 ? (1ull << 25) | (ds ? 1ull << 36 : 0)
				    : (1ull << 29) | (c->oas == 52 ? 1ull << 42 : 0);
	} else if (c->fmt == IK_PT_AMD_V1 || c->fmt == IK_PT_AMD_V2) {
		want = (1ull << 21) | (1ull << 30);	/* natural sizes only; no capability gating */
	} else if (c->fmt == IK_PT_RISCV_S1 || c->fmt == IK_PT_RISCV_S2) {
		want = (1ull << 21) | (1ull << 30) | (1ull << 39) | (1ull << 48); /* every level */
	} else
		want = ((c->fmt == IK_PT_VTD_FL || (c->fmt_flags & IK_VTD_FLAG_SP_2M)) ? 1ull << 21 : 0) |
		       ((c->fmt_flags & IK_VTD_FLAG_SP_1G) ? 1ull << 30 : 0);
	/* a block size needs its level: level L spans 2^(glg2 + L * (glg2 - 3)) */
	for (unsigned b = 0; b < 64; b++)
		if ((want >> b) & 1 && (b - glg2) / (glg2 - 3) >= n)
			want &= ~(1ull << b);
	return s | (c->pgsize_bitmap & want);
}

static void gen_cfg(struct fz *f, struct ik_pgtable_cfg *c, int *mode)
{
	uint8_t k = fz_u8(f), q;
	unsigned glg2;

	memset(c, 0, sizeof(*c));
	c->fmt = (enum ik_pt_fmt)(k < 250 ? 1 + k % 8 : k % 11);
	k = fz_u8(f);
	if (c->fmt == IK_PT_LPAE_S1 || c->fmt == IK_PT_LPAE_S2) {
		static const uint32_t oas[] = { 32, 36, 40, 42, 44, 48, 52, 52 };

		glg2 = k % 3 == 0 ? 12 : k % 3 == 1 ? 14 : 16;
		c->ias = 32 + fz_u8(f) % 21;
		c->oas = oas[fz_u8(f) % 8];
		if (c->ias > 48 || c->oas > 48 || (k & 0x40)) /* mostly valid: LPA2 */
			c->fmt_flags |= IK_LPAE_FLAG_LPA2;
	} else if (c->fmt == IK_PT_RISCV_S1 || c->fmt == IK_PT_RISCV_S2) {
		glg2 = 12;
		c->ias = 32 + fz_u8(f) % (c->fmt == IK_PT_RISCV_S1 ? 25 : 28);
		c->oas = 32 + fz_u8(f) % 25;
	} else {
		glg2 = 12;
		c->ias = c->fmt == IK_PT_AMD_V1 ? 21 + fz_u8(f) % 43 : 32 + fz_u8(f) % 26;
		c->oas = 32 + fz_u8(f) % 21;
	}
	if (k >= 240) { /* out of range values */
		c->ias = fz_u8(f) % 70;
		c->oas = fz_u8(f) % 70;
		if (fz_bool(f))
			glg2 = fz_u8(f) % 40;
	}
	c->pgsize_bitmap = 1ull << glg2;
	k = fz_u8(f);
	if (k & 1)
		c->pgsize_bitmap |= 1ull << 21 | 1ull << 30;
	if (k & 2)
		c->pgsize_bitmap |= 1ull << 25 | 1ull << 29;
	if (k & 8)	/* the 52-bit blocks: 512G, 64G, 4T */
		c->pgsize_bitmap |= 1ull << 39 | 1ull << 36 | 1ull << 42;
	if (k & 4)
		c->pgsize_bitmap |= fz_u64(f) & ~((2ull << glg2) - 1); /* extra sizes */
	if (k >= 250)
		c->pgsize_bitmap = fz_u64(f);
	q = fz_u8(f);
	c->quirks = (q & 1 ? IK_PT_QUIRK_DIRTY : 0) | (q & 2 ? IK_PT_QUIRK_ARM_NS : 0) |
		    (q & 4 ? IK_PT_QUIRK_DEFER_LEAF_CLEAN : 0);
	if (c->fmt == IK_PT_RISCV_S1 || c->fmt == IK_PT_RISCV_S2) {
		c->quirks &= ~IK_PT_QUIRK_ARM_NS;
		if (c->fmt == IK_PT_RISCV_S1 && (q & 8))
			c->fmt_flags |= IK_RISCV_FLAG_SUM;
	} else if (c->fmt == IK_PT_AMD_V1 || c->fmt == IK_PT_AMD_V2) {
		c->quirks &= ~IK_PT_QUIRK_ARM_NS;
		if (c->fmt == IK_PT_AMD_V1)
			c->fmt_flags = (q & 8 ? IK_AMD_FLAG_FORCE_FC : 0) | (q & 16 ? IK_AMD_FLAG_U : 0);
	} else if (c->fmt >= IK_PT_VTD_SL) {
		c->quirks &= ~IK_PT_QUIRK_ARM_NS;
		if (q & 8)
			c->fmt_flags |= IK_VTD_FLAG_SP_2M;
		if (q & 16)
			c->fmt_flags |= IK_VTD_FLAG_SP_1G;
		if (c->fmt == IK_PT_VTD_SL && (q & 32))
			c->fmt_flags |= IK_VTD_FLAG_SC | (q & 64 ? IK_VTD_FLAG_FORCE_SNP : 0);
	} else if (c->fmt == IK_PT_LPAE_S2) {
		c->quirks &= ~IK_PT_QUIRK_ARM_NS;
	}
	if (q >= 250) {
		c->quirks |= fz_u32(f);
		c->fmt_flags |= fz_u8(f);
	}
	k = fz_u8(f);
	c->coherent = k & 1;
	*mode = (k >> 1) % 4; /* 0, 1: our table pages; 2: default pages + hooks; 3: no hooks */
	memset(&HOOKS, 0, sizeof(HOOKS));
	if (*mode <= 2) {
		if (*mode <= 1) {
			HOOKS.alloc_table = h_alloc_table;
			HOOKS.free_table = h_free_table;
		}
		HOOKS.clean = h_clean;
		HOOKS.gather_add = (k & 0x10) ? NULL : h_gather_add;
		HOOKS.iotlb_sync_map = h_sync_map;
		HOOKS.iotlb_sync = (k & 0x20) ? NULL : h_iotlb_sync;
		HOOKS.flush_walk = (k & 0x40) ? NULL : h_flush_walk;
		HOOKS.flush_all = (k & 0x80) ? NULL : h_flush_all;
		c->hooks = &HOOKS;
	}
	c->allocator = &ALLOC;
}

static void setup_regs_walker(void)
{
	have_wreg = false;
	if (G.fmt == IK_PT_AMD_V1 || G.fmt == IK_PT_AMD_V2) {
		/* no register helpers: a walker from the config and the root,
		 * as an emulator builds one from a DTE */
		FZ_CHECK(ik_pt_walker_init(&WREG, &CFG, W.root) == 0, "AMD walker from the config");
		FZ_CHECK(ik_vtd_get_regs(PT, 1, NULL) == -EINVAL, "vtd_get_regs on AMD");
		have_wreg = true;
		return;
	}
	if (G.fmt == IK_PT_LPAE_S1 || G.fmt == IK_PT_LPAE_S2) {
		struct ik_lpae_regs r;

		FZ_CHECK(ik_lpae_get_regs(PT, &r) == 0, "lpae_get_regs");
		if (G.fmt == IK_PT_LPAE_S1)
			FZ_CHECK(ik_lpae_walker_from_regs(&WREG, 1, r.tcr, r.ttbr, G.quirks & IK_PT_QUIRK_DIRTY) == 0,
				 "walker from TCR/TTBR");
		else
			FZ_CHECK(ik_lpae_walker_from_regs(&WREG, 2, r.vtcr, r.vttbr, G.quirks & IK_PT_QUIRK_DIRTY) == 0,
				 "walker from VTCR/VTTBR");
		FZ_CHECK(ik_vtd_get_regs(PT, 1, NULL) == -EINVAL, "vtd_get_regs on LPAE");
	} else if (G.fmt == IK_PT_RISCV_S1 || G.fmt == IK_PT_RISCV_S2) {
		struct ik_vtd_regs vr;
		ik_u64 atp;

		FZ_CHECK(ik_riscv_get_atp(PT, G.fmt == IK_PT_RISCV_S2 ? 0x1234 : 0, &atp) == 0,
			 "riscv_get_atp");
		FZ_CHECK(ik_riscv_walker_from_atp(&WREG, G.fmt, atp, G.oas, G.quirks & IK_PT_QUIRK_DIRTY,
						  G.fmt_flags) == 0, "walker from iosatp/iohgatp");
		FZ_CHECK(ik_vtd_get_regs(PT, 1, &vr) == -EINVAL, "vtd_get_regs on RISC-V");
	} else {
		struct ik_vtd_regs r;

		FZ_CHECK(ik_vtd_get_regs(PT, 7, &r) == 0, "vtd_get_regs");
		if (G.fmt == IK_PT_VTD_SL && !(G.quirks & IK_PT_QUIRK_DIRTY))
			FZ_CHECK(ik_vtd_walker_from_context(&WREG, r.context, G.fmt_flags, G.oas) == 0,
				 "walker from the context entry");
		else
			FZ_CHECK(ik_vtd_walker_from_pasid(&WREG, r.pasid, G.fmt_flags, G.oas) == 0,
				 "walker from the PASID entry");
	}
	/* The unit's walker decodes the same geometry (the page sizes it
	 * allows may be more than the engine uses). */
	FZ_CHECK(WREG.root == W.root && WREG.geom.nlevels == G.nlevels &&
			 WREG.geom.lg2_granule == G.lg2_granule && WREG.geom.top_bits == G.top_bits &&
			 WREG.geom.ias >= G.ias && WREG.geom.oas == G.oas,
		 "register walker: root %#llx/%#llx levels %u/%u top %u/%u ias %u/%u oas %u/%u",
		 (unsigned long long)WREG.root, (unsigned long long)W.root, WREG.geom.nlevels,
		 G.nlevels, WREG.geom.top_bits, G.top_bits, WREG.geom.ias, G.ias, WREG.geom.oas,
		 G.oas);
	have_wreg = (WREG.geom.leaf_levels & G.leaf_levels) == G.leaf_levels;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ik_pt_geometry g;
	struct fz f;
	int mode, want, err;
	bool fail;

	fz_init(&f, data, size);
	memset(&H, 0, sizeof(H));
	memset(&M, 0, sizeof(M));
	NPG = 0;
	track = true;
	PT = NULL;
	fz_alloc_init(&FA);
	ALLOC.ctx = &FA;
	gen_cfg(&f, &CFG, &mode);
	H.hooks_alloc = mode <= 1;
	H.coherent = CFG.coherent;
	H.oas = CFG.oas;
	/* 52-bit configs: table addresses above 2^48 (bits 51:48 = 0b1010) */
	H.next_iommu = CFG.oas == 52 ? (0xaull << 48) + (1ull << 21) : 1ull << 21;
	want = cfg_expect(&CFG);
	FZ_TRACE("config fmt %d ias %u oas %u sizes %#llx quirks %#x flags %#llx mode %d", CFG.fmt,
		 CFG.ias, CFG.oas, (unsigned long long)CFG.pgsize_bitmap, CFG.quirks,
		 (unsigned long long)CFG.fmt_flags, mode);
	err = ik_pt_geometry_init(&g, &CFG);
	FZ_CHECK(err == want, "geometry_init(fmt %d ias %u oas %u sizes %#llx quirks %#x flags %#llx) = %d, expected %d",
		 CFG.fmt, CFG.ias, CFG.oas, (unsigned long long)CFG.pgsize_bitmap, CFG.quirks,
		 (unsigned long long)CFG.fmt_flags, err, want);
	if (want == 0)
		FZ_CHECK(g.nlevels == expect_levels(&CFG), "geometry: %u levels, expected %u", g.nlevels,
			 expect_levels(&CFG));
	if (want == 0)
		FZ_CHECK(g.pgsize_bitmap == expect_sizes(&CFG),
			 "geometry page sizes %#llx, expected %#llx of %#llx", (unsigned long long)g.pgsize_bitmap,
			 (unsigned long long)expect_sizes(&CFG), (unsigned long long)CFG.pgsize_bitmap);
	fail = arm_fail(&f);
	err = ik_pgtable_create(&CFG, &PT);
	disarm();
	if (want) {
		FZ_CHECK(err == want && !PT, "create of a bad config = %d", err);
		FZ_CHECK(FA.live == 0 && NPG == 0, "failed create leaked");
		return 0;
	}
	if (err) {
		FZ_CHECK((fail || !H.hooks_alloc) && (err == -ENOMEM || err == -ERANGE) && !PT,
			 "create = %d", err);
		FZ_CHECK(FA.live == 0 && NPG == 0, "create %d leaked %ld blocks, %zu pages", err, FA.live, NPG);
		if (!H.hooks_alloc && err == -ERANGE)
			return 0; /* the heap lies above this oas */
		err = ik_pgtable_create(&CFG, &PT);
		if (!H.hooks_alloc && err == -ERANGE)
			return 0;
		FZ_CHECK(err == 0, "create = %d", err);
	}
	{
		struct ik_pgtable_info info;
		struct ik_pt_walker w2;

		ik_pgtable_get_info(PT, &info);
		G = info.geom;
		ik_pgtable_walker(PT, &W);
		FZ_CHECK(W.root == info.root_iommu, "walker root");
		FZ_CHECK(ik_pt_walker_init(&w2, &CFG, info.root_iommu) == 0 && w2.root == W.root &&
				 w2.geom.fmt == G.fmt && w2.geom.nlevels == G.nlevels &&
				 w2.geom.top_bits == G.top_bits && w2.geom.bits == G.bits &&
				 w2.geom.pgsize_bitmap == G.pgsize_bitmap &&
				 w2.geom.leaf_levels == G.leaf_levels && w2.geom.root_size == G.root_size,
			 "walker_init from the config differs from the table set's walker");
		IAS_END = G.ias < 64 ? 1ull << G.ias : 0;
	}
	setup_regs_walker();
	/* windows: a place high in the space with room for the largest block */
	BIG = 1ull << (63 - __builtin_clzll(G.pgsize_bitmap));
	WIN = ((uint64_t)fz_u8(&f) << (G.ias - 8)) & ~(BIG - 1);
	if (WIN + 64 * BIG > IAS_END)
		WIN = 0;
	PAWIN = ((uint64_t)fz_u8(&f) << (G.oas - 8)) & ~(BIG - 1);
	if (PAWIN + 64 * BIG > (1ull << G.oas))
		PAWIN = 0;
	ik_gather_init(&GS[0]);
	ik_gather_init(&GS[1]);
	check_dump(false, true);

	for (unsigned ops = 0; fz_left(&f) && ops < MAX_OPS; ops++) {
		switch (fz_u8(&f) % 10) {
		case 0:
		case 1:
		case 2: op_map(&f); break;
		case 3:
		case 4: op_unmap(&f); break;
		case 5: op_sync(&f); break;
		case 6: op_device_write(&f); break;
		case 7: op_dirty(&f); break;
		case 8:
			check_addr(gen_iova(&f));
			break;
		default:
			op_begin();
			FZ_TRACE("drain cache");
			ik_pgtable_drain_cache(PT);
			{
				struct ik_pgtable_stats st;

				ik_pgtable_get_stats(PT, &st);
				FZ_CHECK(st.cache_pages == 0, "cache not drained");
			}
			break;
		}
		if (M.leaves <= 1024)
			check_dump(false, false);
	}
	check_dump(false, true);
	if (M.leaves <= 2048)
		check_dump(true, false);
	{
		uint64_t h;

		(void)snap_before(&h); /* a last accounting check */
	}
	/* Everything synced before destroy (its precondition). */
	do_sync(0);
	do_sync(1);
	H.flushed = true; /* the caller has stopped the IOMMU */
	ik_pgtable_destroy(PT);
	FZ_CHECK(NPG == 0 && FA.live == 0, "destroy left %zu pages, %ld blocks", NPG, FA.live);
	return 0;
}
