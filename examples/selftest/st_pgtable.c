/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Self-test cases for the IO page tables (<iommukit/pgtable.h>): for every
 * format the library has, map (pages, blocks, scatter lists), the walker as
 * an oracle reading table memory by its device address, the error contract,
 * exact clean and sync counts, block split on unmap, deferred table freeing
 * through the gather, and rollback when a table allocation fails.  Table
 * pages come from the host (alloc_pages in a kernel, the static pool on
 * bare metal) with their device addresses, and cleans go to the host's real
 * clean instruction.  Empty where the library has no page-table unit.
 */
#include "st_internal.h"

#if __has_include(<iommukit/pgtable.h>)
#include <iommukit/atomic.h>
#include <iommukit/pgtable.h>
#if __has_include(<iommukit/fmt/vtd.h>)
#include <iommukit/fmt/vtd.h>
#define ST_PT_HAVE_VTD 1
#else
#define ST_PT_HAVE_VTD 0
#endif
#if __has_include(<iommukit/fmt/amd.h>)
#include <iommukit/fmt/amd.h>
#define ST_PT_HAVE_AMD 1
#else
#define ST_PT_HAVE_AMD 0
#endif
#if __has_include(<iommukit/fmt/lpae.h>)
#define ST_PT_HAVE_LPAE 1
#else
#define ST_PT_HAVE_LPAE 0
#endif

#define ST_PT_MAX_PAGES 128
#define ST_SZ_4K 0x1000ull
#define ST_SZ_2M 0x200000ull
#define ST_SZ_1G 0x40000000ull

/* The table pages handed to the engine, so that the walker can read table
 * memory by device address (a physical address in a kernel). */
struct st_pt {
	struct ik_st *t;
	struct {
		void *va;
		ik_u64 dma;
		ik_size size;	/* what was asked for */
		ik_size got;	/* what the host gave (>= 4096) */
	} pg[ST_PT_MAX_PAGES];
	unsigned live;
	ik_u64 cleans, clean_bytes, sync_maps;
};

static void *st_pt_alloc_table(void *cookie, ik_size size, ik_u64 *iommu_addr)
{
	struct st_pt *p = (struct st_pt *)cookie;
	ik_size got = size < 4096 ? 4096 : size;
	unsigned i;
	void *va;

	/* Table pages count as allocations for the fault injection too. */
	if (ik_st_alloc_fault(p->t))
		return NULL;
	for (i = 0; i < ST_PT_MAX_PAGES && p->pg[i].va; i++)
		;
	if (i == ST_PT_MAX_PAGES)
		return NULL;
	va = ik_st_page_alloc(p->t, got, iommu_addr);
	if (!va)
		return NULL;
	p->pg[i].va = va;
	p->pg[i].dma = *iommu_addr;
	p->pg[i].size = size;
	p->pg[i].got = got;
	p->live++;
	return va;
}

static void st_pt_free_table(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size)
{
	struct st_pt *p = (struct st_pt *)cookie;
	unsigned i;

	for (i = 0; i < ST_PT_MAX_PAGES; i++) {
		if (p->pg[i].va == cpu) {
			/* A mismatch leaks the page: the runner then fails the case. */
			if (p->pg[i].dma != iommu_addr || p->pg[i].size != size)
				return;
			ik_st_page_free(p->t, cpu, iommu_addr, p->pg[i].got);
			p->pg[i].va = NULL;
			p->live--;
			return;
		}
	}
}

static void st_pt_clean(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size)
{
	struct st_pt *p = (struct st_pt *)cookie;

	(void)iommu_addr;
	p->cleans++;
	p->clean_bytes += size;
	ik_st_clean(p->t, cpu, size);
}

static void st_pt_sync_map(void *cookie, ik_u64 iova, ik_u64 size)
{
	(void)iova;
	(void)size;
	((struct st_pt *)cookie)->sync_maps++;
}

static const struct ik_pgtable_hooks st_pt_hooks = {
	st_pt_alloc_table, st_pt_free_table, st_pt_clean, NULL, NULL, NULL, st_pt_sync_map, NULL,
};

/* The walker's memory: table pages by device address only. */
static int st_pt_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	struct st_pt *p = (struct st_pt *)ctx;
	unsigned i;

	for (i = 0; i < ST_PT_MAX_PAGES; i++) {
		if (p->pg[i].va && addr >= p->pg[i].dma && addr - p->pg[i].dma < p->pg[i].size) {
			*val = ik_load_relaxed((ik_u64 *)(void *)((char *)p->pg[i].va +
								   (addr - p->pg[i].dma)));
			return 0;
		}
	}
	return -EFAULT;
}

/* The walker's view of one IOVA: 0 and the output address and leaf size, or
 * the fault. */
static int st_pt_walk(struct st_pt *p, struct ik_pgtable *pt, ik_u64 iova, ik_u64 *oa,
		      ik_u64 *pgsize)
{
	struct ik_pt_walker w;
	struct ik_pt_mem mem;
	struct ik_pt_walk_result r;

	ik_pgtable_walker(pt, &w);
	mem.read64 = st_pt_read64;
	mem.cas64 = NULL;
	mem.ctx = p;
	if (ik_pt_walk(&w, &mem, iova, IK_ACCESS_READ, &r) != 0)
		return -EINVAL;
	if (r.fault != IK_PT_FAULT_NONE)
		return -(int)r.fault;
	*oa = r.oa;
	*pgsize = r.pgsize;
	return 0;
}

/* The walker and iova_to_phys agree that iova -> oa with leaves of pgsize. */
static bool st_pt_maps(struct st_pt *p, struct ik_pgtable *pt, ik_u64 iova, ik_u64 oa,
		       ik_u64 pgsize)
{
	ik_u64 woa = 0, wsz = 0, eoa = 0, esz = 0;

	return st_pt_walk(p, pt, iova, &woa, &wsz) == 0 && woa == oa && wsz == pgsize &&
	       ik_pgtable_iova_to_phys(pt, iova, &eoa, &esz) == 0 && eoa == oa && esz == pgsize;
}

static bool st_pt_unmapped(struct st_pt *p, struct ik_pgtable *pt, ik_u64 iova)
{
	ik_u64 oa, sz;

	return st_pt_walk(p, pt, iova, &oa, &sz) == -(int)IK_PT_FAULT_TRANSLATION &&
	       ik_pgtable_iova_to_phys(pt, iova, &oa, &sz) == -ENOENT;
}

static int st_pt_count_range(void *ctx, const struct ik_pt_range *r)
{
	ik_u64 *n = (ik_u64 *)ctx;

	n[0]++;
	n[1] += r->size;
	if (r->pgsize > n[2])
		n[2] = r->pgsize;
	return 0;
}

/* The addresses the case uses. */
#define ST_PT_RW (IK_PROT_READ | IK_PROT_WRITE)
#define ST_PT_A 0x40000000ull		/* 4K pages ... */
#define ST_PT_PA 0x80001000ull		/* ... at a pa not 2M-aligned */
#define ST_PT_B 0x80000000ull		/* blocks: both 2M-aligned */
#define ST_PT_PB 0x100000000ull
#define ST_PT_C 0x7f0000000000ull	/* a fresh region, inside 47 bits */

/* Create the table set, failing each of its allocations in turn first. */
static bool st_pt_create(struct ik_st *t, struct st_pt *p, const struct ik_pgtable_cfg *cfg,
			 struct ik_pgtable **pt)
{
	long nth, live0 = t->alloc.live;
	int rc = 0;

	for (nth = 1; nth < 16; nth++) {
		ik_st_alloc_arm(t, nth);
		rc = ik_pgtable_create(cfg, pt);
		ik_st_alloc_arm(t, 0);
		if (rc == 0)
			break;
		ST_CHECK_GOTO(t, rc == -ENOMEM && t->alloc.live == live0 && p->live == 0, fail);
	}
	ST_CHECK_GOTO(t, rc == 0, fail);
	return true;
fail:
	return false;
}

/* 1 + 255 pages of 4K: the second map writes one run in one table page, so
 * it costs exactly one clean of 255 entries and one sync_map.  Then the
 * error contract: nothing changes, no sync. */
static bool st_pt_pages(struct ik_st *t, struct st_pt *p, struct ik_pgtable *pt, ik_u32 ias)
{
	ik_u64 i, cl, cb, sm;

	ST_CHECK_GOTO(t, ik_pgtable_map(pt, ST_PT_A, ST_PT_PA, ST_SZ_4K, ST_PT_RW) == 0, fail);
	cl = p->cleans;
	cb = p->clean_bytes;
	sm = p->sync_maps;
	ST_CHECK_GOTO(t, sm == 1 && cl >= 1, fail);
	ST_CHECK_GOTO(t, ik_pgtable_map_pages(pt, ST_PT_A + ST_SZ_4K, ST_PT_PA + ST_SZ_4K, ST_SZ_4K,
					      255, ST_PT_RW) == 0, fail);
	ST_CHECK_GOTO(t, p->cleans == cl + 1 && p->clean_bytes == cb + 255 * 8, fail);
	ST_CHECK_GOTO(t, p->sync_maps == sm + 1, fail);
	for (i = 0; i < 256; i += 15)
		ST_CHECK_GOTO(t, st_pt_maps(p, pt, ST_PT_A + i * ST_SZ_4K, ST_PT_PA + i * ST_SZ_4K,
					    ST_SZ_4K), fail);
	ST_CHECK_GOTO(t, st_pt_unmapped(p, pt, ST_PT_A + 256 * ST_SZ_4K), fail);

	sm = p->sync_maps;
	ST_CHECK_GOTO(t, ik_pgtable_map(pt, ST_PT_A + 8 * ST_SZ_4K, ST_PT_PB, ST_SZ_4K, ST_PT_RW) ==
			 -EEXIST, fail);
	ST_CHECK_GOTO(t, ik_pgtable_map(pt, ST_PT_A + 100, ST_PT_PA, ST_SZ_4K, ST_PT_RW) == -EINVAL,
		      fail);
	ST_CHECK_GOTO(t, ik_pgtable_map(pt, ST_PT_C, ST_PT_PA, 0, ST_PT_RW) == -EINVAL, fail);
	ST_CHECK_GOTO(t, ik_pgtable_map(pt, ST_PT_C, ST_PT_PA, ST_SZ_4K, 0) == -EINVAL, fail);
	ST_CHECK_GOTO(t, ik_pgtable_map(pt, 1ull << ias, ST_PT_PA, ST_SZ_4K, ST_PT_RW) == -EINVAL,
		      fail);
	ST_CHECK_GOTO(t, ik_pgtable_map_pages(pt, ST_PT_C, ST_PT_PA, 3 * ST_SZ_4K, 1, ST_PT_RW) ==
			 -EINVAL, fail);
	ST_CHECK_GOTO(t, p->sync_maps == sm && st_pt_maps(p, pt, ST_PT_A + 8 * ST_SZ_4K,
							     ST_PT_PA + 8 * ST_SZ_4K, ST_SZ_4K), fail);
	ST_CHECK_GOTO(t, st_pt_unmapped(p, pt, ST_PT_C), fail);
	return true;
fail:
	return false;
}

/* 4 MiB at 2 MiB alignment: two block entries.  Unmap the first 1 MiB of
 * the 4K run (one gather range), then one 4K page inside a block: the block
 * is split, its other pages stay mapped, and the gather asks for a
 * walk-cache flush. */
static bool st_pt_blocks(struct ik_st *t, struct st_pt *p, struct ik_pgtable *pt)
{
	struct ik_pgtable_stats ps;
	struct ik_gather g;
	ik_u64 n[3];
	ik_s64 un;

	ST_CHECK_GOTO(t, ik_pgtable_map(pt, ST_PT_B, ST_PT_PB, 2 * ST_SZ_2M, ST_PT_RW) == 0, fail);
	ST_CHECK_GOTO(t, st_pt_maps(p, pt, ST_PT_B + ST_SZ_2M + 0x5000, ST_PT_PB + ST_SZ_2M + 0x5000,
				    ST_SZ_2M), fail);
	n[0] = n[1] = n[2] = 0;
	ST_CHECK_GOTO(t, ik_pgtable_dump(pt, ST_PT_B, 2 * ST_SZ_2M, st_pt_count_range, n) == 0, fail);
	ST_CHECK_GOTO(t, n[0] == 1 && n[1] == 2 * ST_SZ_2M && n[2] == ST_SZ_2M, fail);

	ik_gather_init(&g);
	un = ik_pgtable_unmap(pt, ST_PT_A, 256 * ST_SZ_4K, &g);
	ST_CHECK_GOTO(t, un == (ik_s64)(256 * ST_SZ_4K), fail);
	ST_CHECK_GOTO(t, g.nr_ranges == 1 && g.start == ST_PT_A &&
			 g.end == ST_PT_A + 256 * ST_SZ_4K, fail);
	ST_CHECK_GOTO(t, st_pt_unmapped(p, pt, ST_PT_A) &&
			 st_pt_unmapped(p, pt, ST_PT_A + 255 * ST_SZ_4K), fail);
	ik_pgtable_gather_sync(pt, &g);
	ST_CHECK_GOTO(t, ik_pgtable_unmap(pt, ST_PT_A, 256 * ST_SZ_4K, &g) == 0, fail); /* a hole */

	ik_gather_init(&g);
	un = ik_pgtable_unmap(pt, ST_PT_B + 0x3000, ST_SZ_4K, &g);
	ST_CHECK_GOTO(t, un == (ik_s64)ST_SZ_4K && g.walk, fail);
	ST_CHECK_GOTO(t, st_pt_unmapped(p, pt, ST_PT_B + 0x3000), fail);
	ST_CHECK_GOTO(t, st_pt_maps(p, pt, ST_PT_B + 0x2000, ST_PT_PB + 0x2000, ST_SZ_4K), fail);
	ST_CHECK_GOTO(t, st_pt_maps(p, pt, ST_PT_B + 0x4000, ST_PT_PB + 0x4000, ST_SZ_4K), fail);
	ST_CHECK_GOTO(t, st_pt_maps(p, pt, ST_PT_B + ST_SZ_2M, ST_PT_PB + ST_SZ_2M, ST_SZ_2M), fail);
	ik_pgtable_gather_sync(pt, &g);
	ik_pgtable_get_stats(pt, &ps);
	ST_CHECK_GOTO(t, ps.splits >= 1, fail);
	return true;
fail:
	return false;
}

/* A scatter list of three non-contiguous segments: one request, one
 * iotlb_sync_map, mapped back to back. */
static bool st_pt_scatterlist(struct ik_st *t, struct st_pt *p, struct ik_pgtable *pt)
{
	struct ik_seg segs[3];
	ik_u64 sm, mapped;

	segs[0].paddr = 0x200000000ull;
	segs[0].len = 3 * ST_SZ_4K;
	segs[1].paddr = 0x300000000ull;
	segs[1].len = ST_SZ_4K;
	segs[2].paddr = 0x300005000ull;
	segs[2].len = 2 * ST_SZ_4K;
	sm = p->sync_maps;
	ST_CHECK_GOTO(t, ik_pgtable_map_sg(pt, ST_PT_A, segs, 3, ST_PT_RW, &mapped) == 0 &&
			 mapped == 6 * ST_SZ_4K, fail);
	ST_CHECK_GOTO(t, p->sync_maps == sm + 1, fail);
	ST_CHECK_GOTO(t, st_pt_maps(p, pt, ST_PT_A + 2 * ST_SZ_4K, 0x200002000ull, ST_SZ_4K), fail);
	ST_CHECK_GOTO(t, st_pt_maps(p, pt, ST_PT_A + 3 * ST_SZ_4K, 0x300000000ull, ST_SZ_4K), fail);
	ST_CHECK_GOTO(t, st_pt_maps(p, pt, ST_PT_A + 5 * ST_SZ_4K, 0x300006000ull, ST_SZ_4K), fail);
	return true;
fail:
	return false;
}

/* A map that needs new tables, failing at each allocation in turn:
 * -ENOMEM, nothing mapped, nothing leaked. */
static bool st_pt_enomem(struct ik_st *t, struct st_pt *p, struct ik_pgtable *pt)
{
	long nth, live0;
	int rc = 0;

	ik_pgtable_drain_cache(pt);
	for (nth = 1; nth < 32; nth++) {
		ik_u64 tables = p->live;

		live0 = t->alloc.live;
		ik_st_alloc_arm(t, nth);
		rc = ik_pgtable_map(pt, ST_PT_C, ST_PT_PA - ST_SZ_4K, 2 * ST_SZ_2M + 3 * ST_SZ_4K,
				    ST_PT_RW);
		ik_st_alloc_arm(t, 0);
		if (rc == 0)
			break;
		ST_CHECK_GOTO(t, rc == -ENOMEM, fail);
		ST_CHECK_GOTO(t, st_pt_unmapped(p, pt, ST_PT_C) &&
			      st_pt_unmapped(p, pt, ST_PT_C + 2 * ST_SZ_2M), fail);
		ik_pgtable_drain_cache(pt);
		ST_CHECK_GOTO(t, t->alloc.live == live0 && p->live == tables, fail);
	}
	ST_CHECK_GOTO(t, rc == 0, fail);
	ST_CHECK_GOTO(t, st_pt_maps(p, pt, ST_PT_C + 2 * ST_SZ_2M + 2 * ST_SZ_4K,
				    ST_PT_PA - ST_SZ_4K + 2 * ST_SZ_2M + 2 * ST_SZ_4K, ST_SZ_4K), fail);
	return true;
fail:
	return false;
}

/* Unmap everything; emptied tables are freed only by the gather sync. */
static bool st_pt_unmap_all(struct ik_st *t, struct st_pt *p, struct ik_pgtable *pt, ik_u32 ias)
{
	struct ik_pgtable_stats ps;
	struct ik_gather g;
	ik_s64 un;

	ik_gather_init(&g);
	un = ik_pgtable_unmap(pt, 0, 1ull << ias, &g);
	ST_CHECK_GOTO(t, un == (ik_s64)(6 * ST_SZ_4K + (2 * ST_SZ_2M - ST_SZ_4K) +
					(2 * ST_SZ_2M + 3 * ST_SZ_4K)), fail);
	ik_pgtable_get_stats(pt, &ps);
	ST_CHECK_GOTO(t, ps.tables_live == p->live, fail);
	ik_pgtable_gather_sync(pt, &g);
	ST_CHECK_GOTO(t, st_pt_unmapped(p, pt, ST_PT_B) && st_pt_unmapped(p, pt, ST_PT_C), fail);
	return true;
fail:
	return false;
}

static void st_pt_run(struct ik_st *t, enum ik_pt_fmt fmt, ik_u32 ias, ik_u64 fmt_flags)
{
	struct st_pt *p = (struct st_pt *)ik_alloc(&t->alloc.a, sizeof(struct st_pt), 8);
	struct ik_pgtable *pt = NULL;
	struct ik_pgtable_cfg cfg;

	ST_CHECK(t, p != NULL);
	IK_ENV_MEMSET(p, 0, sizeof(*p));
	p->t = t;
	IK_ENV_MEMSET(&cfg, 0, sizeof(cfg));
	cfg.fmt = fmt;
	cfg.ias = ias;
	cfg.oas = 48;
	cfg.pgsize_bitmap = ST_SZ_4K | ST_SZ_2M | ST_SZ_1G;
	cfg.coherent = false;
	cfg.fmt_flags = fmt_flags;
	cfg.hooks = &st_pt_hooks;
	cfg.cookie = p;
	cfg.allocator = &t->alloc.a;
	if (!st_pt_create(t, p, &cfg, &pt))
		goto out_free;
	if (st_pt_pages(t, p, pt, ias) && st_pt_blocks(t, p, pt) && st_pt_scatterlist(t, p, pt) &&
	    st_pt_enomem(t, p, pt))
		st_pt_unmap_all(t, p, pt, ias);
	ik_st_alloc_arm(t, 0);
	ik_pgtable_destroy(pt);
	ST_CHECK_GOTO(t, p->live == 0, out_free);
out_free:
	ik_free(&t->alloc.a, p, sizeof(*p));
}

#if ST_PT_HAVE_LPAE
static void pgtable_lpae_s1_4k(struct ik_st *t)
{
	st_pt_run(t, IK_PT_LPAE_S1, 48, 0);
}

static void pgtable_lpae_s2_4k(struct ik_st *t)
{
	st_pt_run(t, IK_PT_LPAE_S2, 48, 0);
}
#endif
#if ST_PT_HAVE_VTD
static void pgtable_vtd_sl_4level(struct ik_st *t)
{
	st_pt_run(t, IK_PT_VTD_SL, 48, IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G);
}

static void pgtable_vtd_fl_4level(struct ik_st *t)
{
	st_pt_run(t, IK_PT_VTD_FL, 47, IK_VTD_FLAG_SP_1G);
}
#endif
#if ST_PT_HAVE_AMD
static void pgtable_amd_v1_mode4(struct ik_st *t)
{
	st_pt_run(t, IK_PT_AMD_V1, 48, IK_AMD_FLAG_FORCE_FC);
}

static void pgtable_amd_v2_4level(struct ik_st *t)
{
	st_pt_run(t, IK_PT_AMD_V2, 47, 0);
}
#endif

const struct ik_st_case ik_st_pgtable_cases[] = {
#if ST_PT_HAVE_LPAE
	{ "pgtable_lpae_s1_4k_map_unmap_walk", pgtable_lpae_s1_4k },
	{ "pgtable_lpae_s2_4k_map_unmap_walk", pgtable_lpae_s2_4k },
#endif
#if ST_PT_HAVE_VTD
	{ "pgtable_vtd_sl_4level_map_unmap_walk", pgtable_vtd_sl_4level },
	{ "pgtable_vtd_fl_4level_map_unmap_walk", pgtable_vtd_fl_4level },
#endif
#if ST_PT_HAVE_AMD
	{ "pgtable_amd_v1_mode4_map_unmap_walk", pgtable_amd_v1_mode4 },
	{ "pgtable_amd_v2_4level_map_unmap_walk", pgtable_amd_v2_4level },
#endif
	{ NULL, NULL }
};
const unsigned ik_st_pgtable_ncases = IK_ARRAY_SIZE(ik_st_pgtable_cases) - 1;
#else
const struct ik_st_case ik_st_pgtable_cases[1] = { { NULL, NULL } };
const unsigned ik_st_pgtable_ncases = 0;
#endif
