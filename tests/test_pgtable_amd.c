/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * pgtable, AMD IOMMU v1 host format: what the generic suite
 * (tests/test_pgtable.c) cannot know.  Entries bit by bit against the
 * specification's layout; Mode from ias and every config the format refuses;
 * requests the format cannot express refused with nothing changed; an
 * independent reference walker (tests/amd_refwalk.h) checked against a model
 * of what was requested (never against the engine's own lookups) on
 * engine-built tables, and the library's walker checked against both; and
 * hand-built "guest" tables with next-level-7 pages, skipped levels and every
 * kind of fault; host A/D dirty tracking.
 */
#include <stdlib.h>
#include <string.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/amd.h>
#include "testlib.h"
#include "amd_refwalk.h"
#include "vtd_refwalk.h"
#include <iommukit/fmt/vtd.h>

#define SZ_4K 0x1000ull
#define SZ_8K 0x2000ull
#define SZ_64K 0x10000ull
#define SZ_1M 0x100000ull
#define SZ_2M 0x200000ull
#define SZ_4M 0x400000ull
#define SZ_1G 0x40000000ull
#define ALL_SIZES (SZ_4K | SZ_2M | SZ_1G)
#define RW (IK_PROT_READ | IK_PROT_WRITE)

/* ------------------------------------------------------------ test memory */

/* Table pages: testlib's identity table memory (struct ik_test_tables,
 * ik_test_mem), IOMMU address = CPU address. */

static enum ik_pt_fmt cfg_fmt = IK_PT_AMD_V1;

static struct ik_pgtable_cfg mkcfg(unsigned ias, unsigned oas, ik_u64 flags, ik_u32 quirks,
				   struct ik_test_tables *e)
{
	return ik_test_cfg(cfg_fmt, ias, oas, ALL_SIZES, quirks, flags, true, &ik_test_tables_hooks,
			   e);
}

static struct ik_pgtable *mkpt(unsigned ias, unsigned oas, ik_u64 flags, ik_u32 quirks,
			       struct ik_test_tables *e)
{
	struct ik_pgtable_cfg c = mkcfg(ias, oas, flags, quirks, e);

	return ik_test_pt_create(&c);
}

/* The raw entry at AMD level `level` on the path of iova (NULL if the path
 * ends above it), following NextLevel as written. */
static uint64_t next_table(uint64_t e)
{
	return e & 0x000ffffffffff000ull;
}

static uint64_t *raw_entry(const struct ik_pgtable *pt, uint64_t iova, unsigned level)
{
	return ik_test_raw_entry(pt, iova, level - 1, 9, next_table);
}

static const uint64_t *ref_table_at(void *ctx, uint64_t pa)
{
	(void)ctx;
	return (const uint64_t *)(uintptr_t)pa;
}

static struct arw_tables ref_of(uint64_t root, unsigned mode, unsigned oas)
{
	struct arw_tables t = { ref_table_at, NULL, root, mode, oas };

	return t;
}

/* ------------------------------------------------------------ entries */

START_TEST(entries_match_the_spec_layout)
{
	struct ik_test_tables e = { 0 };
	struct ik_pgtable *pt = mkpt(48, 48, 0, 0, &e);
	const uint64_t iova = 0x0000123440000000ull, pa = 0x00000abcc0000000ull;
	uint64_t *ent;

	/* Mode 4: levels 4..1.  A 4K read-only page, a 2M RW page with FC
	 * (CACHE), a 1G write-only page. */
	ck_assert_int_eq(ik_pgtable_map(pt, iova + 0x1000, pa + 0x1000, SZ_4K, IK_PROT_READ), 0);
	ck_assert_int_eq(ik_pgtable_map(pt, iova + SZ_2M, pa + SZ_2M, SZ_2M, RW | IK_PROT_CACHE), 0);
	ck_assert_int_eq(ik_pgtable_map(pt, iova + SZ_1G, pa + SZ_1G, SZ_1G, IK_PROT_WRITE), 0);

	/* PDEs: PR, IR, IW, NextLevel = the level below, the table address. */
	for (unsigned l = 4; l >= 2; l--) {
		ent = raw_entry(pt, iova + 0x1000, l);
		ck_assert_ptr_nonnull(ent);
		ck_assert_uint_eq(*ent & ~0x000ffffffffff000ull,
				  1ull | (1ull << 61) | (1ull << 62) | ((uint64_t)(l - 1) << 9));
		ck_assert_uint_eq(*ent & 0xfff, ((uint64_t)(l - 1) << 9) | 1);
	}
	ent = raw_entry(pt, iova + 0x1000, 1);
	ck_assert_uint_eq(*ent, (pa + 0x1000) | 1ull | (1ull << 61));
	ent = raw_entry(pt, iova + SZ_2M, 2);
	ck_assert_uint_eq(*ent, (pa + SZ_2M) | 1ull | (1ull << 61) | (1ull << 62) | (1ull << 60));
	ent = raw_entry(pt, iova + SZ_1G, 3);
	ck_assert_uint_eq(*ent, (pa + SZ_1G) | 1ull | (1ull << 62));
	ik_pgtable_destroy(pt);

	/* FORCE_FC and U put FC and U in every leaf. */
	pt = mkpt(39, 48, IK_AMD_FLAG_FORCE_FC | IK_AMD_FLAG_U, 0, &e);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x5000, 0x7000, SZ_4K, RW), 0);
	ent = raw_entry(pt, 0x5000, 1);
	ck_assert_uint_eq(*ent, 0x7000ull | 1 | (3ull << 61) | (1ull << 60) | (1ull << 59));
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.allocs, e.frees);
}
END_TEST

START_TEST(mode_follows_ias_and_bad_configs_are_refused)
{
	static const struct { unsigned ias, mode; } m[] = {
		{ 21, 1 }, { 22, 2 }, { 30, 2 }, { 32, 3 }, { 39, 3 }, { 40, 4 },
		{ 48, 4 }, { 52, 5 }, { 57, 5 }, { 58, 6 }, { 63, 6 },
	};
	struct ik_test_tables e = { 0 };
	struct ik_pgtable_cfg c;
	struct ik_pt_geometry g;
	struct ik_pgtable *pt = NULL;

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		c = mkcfg(m[i].ias, 48, 0, 0, &e);
		ck_assert_int_eq(ik_pt_geometry_init(&g, &c), 0);
		ck_assert_uint_eq(g.nlevels, m[i].mode);
		ck_assert_uint_eq(g.hw_start_level, m[i].mode);
		ck_assert_uint_eq(g.root_size, 4096);
		/* 2M needs a level-2 table, 1G a level-3 one */
		ck_assert_uint_eq(g.pgsize_bitmap, m[i].mode == 1 ? SZ_4K :
				  m[i].mode == 2 ? SZ_4K | SZ_2M : ALL_SIZES);
	}
	/* bad widths, flags, quirks, granule */
	c = mkcfg(20, 48, 0, 0, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(64, 48, 0, 0, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(48, 53, 0, 0, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(48, 31, 0, 0, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(48, 48, 0x4, 0, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(48, 48, 0, IK_PT_QUIRK_ARM_NS, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(48, 48, 0, 0, &e);
	c.pgsize_bitmap = SZ_2M | SZ_1G;
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(48, 48, 0, 0, &e);
	c.pgsize_bitmap = SZ_8K | SZ_64K;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	ck_assert_int_eq(e.allocs, 0);
}
END_TEST

static int count_range(void *ctx, const struct ik_pt_range *r)
{
	uint64_t *n = ctx;

	(void)r;
	(*n)++;
	return 0;
}

/* Bytes of table memory, as a checksum of everything reachable. */
static uint64_t tables_sum(const uint64_t *tbl, unsigned level)
{
	uint64_t s = 0;

	for (unsigned i = 0; i < 512; i++) {
		uint64_t e = tbl[i];

		s = s * 31 + e;
		if (level > 1 && (e & 1) && ((e >> 9) & 7) != 0 && ((e >> 9) & 7) != 7)
			s += tables_sum((const uint64_t *)(uintptr_t)(e & 0x000ffffffffff000ull),
					level - 1);
	}
	return s;
}

START_TEST(requests_the_format_cannot_express_change_nothing)
{
	struct ik_test_tables e = { 0 };
	struct ik_pgtable *pt = mkpt(39, 48, 0, 0, &e);
	struct ik_pgtable_info info;
	uint64_t before, n = 0;
	long allocs;

	ik_pgtable_get_info(pt, &info);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x200000, 0x400000, SZ_2M, RW), 0);
	before = tables_sum(info.root_cpu, 3);
	allocs = e.allocs;
	/* next-level-7 sizes are not engine page sizes */
	ck_assert_int_eq(ik_pgtable_map_pages(pt, 0x10000, 0x10000, SZ_8K, 1, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map_pages(pt, 0x10000, 0x10000, SZ_64K, 1, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map_pages(pt, 0, 0, SZ_4M, 1, RW), -EINVAL);
	/* 512G: no such page, and beyond Mode 3 anyway */
	ck_assert_int_eq(ik_pgtable_map_pages(pt, 0, 0, 1ull << 39, 1, RW), -EINVAL);
	/* beyond ias / oas, overflowing */
	ck_assert_int_eq(ik_pgtable_map(pt, (1ull << 39) - SZ_4K, 0, 2 * SZ_4K, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x1000, (1ull << 48) - SZ_4K, 2 * SZ_4K, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x1000, ~0ull - 0xfff, SZ_4K, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x1000, 0x1000, SZ_4K, 0), -EINVAL);
	/* a conflict with the 2M page */
	ck_assert_int_eq(ik_pgtable_map(pt, 0x1ff000, 0x1000, 2 * SZ_4K, RW), -EEXIST);
	ck_assert_uint_eq(tables_sum(info.root_cpu, 3), before);
	ck_assert_int_eq(e.allocs, allocs);
	ck_assert_int_eq(ik_pgtable_dump(pt, 0, 1ull << 39, count_range, &n), 0);
	ck_assert_uint_eq(n, 1);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.allocs, e.frees);
}
END_TEST

/* ------------------------------------------------------------ engine tables vs the model */

/*
 * A model of a 64 MiB window: per 4K page, the requested pa (0: unmapped)
 * and prot.  The engine maps and unmaps; the reference walker must then
 * translate every page exactly as requested, and the library's walker as the
 * reference does.
 */
#define WIN (64ull << 20)
#define NPG (WIN / SZ_4K)

struct model {
	uint64_t pa[NPG];
	unsigned char prot[NPG];
};

static unsigned access_to_ref(unsigned access)
{
	return ((access & IK_ACCESS_READ) ? ARW_READ : 0) |
	       ((access & IK_ACCESS_WRITE) ? ARW_WRITE : 0) | ((access & IK_ACCESS_EXEC) ? ARW_EXEC : 0);
}

static enum ik_pt_fault expected_fault(enum arw_fault f)
{
	switch (f) {
	case ARW_OK: return IK_PT_FAULT_NONE;
	case ARW_NOT_PRESENT: return IK_PT_FAULT_TRANSLATION;
	case ARW_INPUT_RANGE: return IK_PT_FAULT_TRANSLATION;
	case ARW_PERMISSION: return IK_PT_FAULT_PERMISSION;
	case ARW_RESERVED: return IK_PT_FAULT_RESERVED;
	case ARW_ADDR: return IK_PT_FAULT_ADDR_SIZE;
	}
	return IK_PT_FAULT_EXTERNAL;
}

/* The library's walker against the reference, for one iova and access. */
static struct arw_result compare_walk(const struct ik_pt_walker *w, const struct arw_tables *t,
				      uint64_t iova, unsigned access)
{
	struct ik_pt_walk_result r;
	struct arw_result ref = arw_walk(t, iova, access_to_ref(access));

	IK_REQUIRE(ik_pt_walk(w, &ik_test_mem, iova, access, &r) == 0);
	IK_REQUIRE_MSG(r.fault == expected_fault(ref.fault),
		       "iova %#llx access %u: fault %d, reference %d", (unsigned long long)iova,
		       access, (int)r.fault, (int)ref.fault);
	if (ref.fault == ARW_OK || ref.fault == ARW_PERMISSION) {
		IK_REQUIRE(r.oa == ref.pa);
		IK_REQUIRE(r.pgsize == ref.pgsize);
		IK_REQUIRE(r.pte == ref.leaf);
		IK_REQUIRE(r.level + 1 == ref.level);
		IK_REQUIRE(!!(r.prot & IK_PROT_READ) == ref.r);
		IK_REQUIRE(!!(r.prot & IK_PROT_WRITE) == ref.w);
		IK_REQUIRE(!!(r.prot & IK_PROT_CACHE) == ref.fc);
		IK_REQUIRE(r.prot & IK_PROT_NOEXEC);
		IK_REQUIRE(r.attr == ((ref.fc ? 1u : 0u) | (ref.u ? 2u : 0u)));
	} else {
		IK_REQUIRE(r.level + 1 == ref.level);
	}
	return ref;
}

static const unsigned prots[] = { IK_PROT_READ, IK_PROT_WRITE, RW, RW | IK_PROT_CACHE,
				   IK_PROT_READ | IK_PROT_NOEXEC | IK_PROT_PRIV };

static void model_set(struct model *m, uint64_t off, uint64_t pa, uint64_t size, unsigned prot)
{
	for (uint64_t k = 0; k < size / SZ_4K; k++) {
		m->pa[off / SZ_4K + k] = pa ? pa + k * SZ_4K : 0;
		m->prot[off / SZ_4K + k] = (unsigned char)prot;
	}
}

static bool model_free(const struct model *m, uint64_t off, uint64_t size)
{
	for (uint64_t k = 0; k < size / SZ_4K; k++)
		if (m->pa[off / SZ_4K + k])
			return false;
	return true;
}

static const struct { unsigned ias, oas; ik_u64 flags; } mcfgs[] = {
	{ 30, 48, 0 }, { 39, 48, IK_AMD_FLAG_U }, { 48, 52, 0 }, { 57, 48, IK_AMD_FLAG_FORCE_FC },
	{ 63, 52, 0 },
};

START_TEST(reference_walk_of_engine_tables_matches_the_requests)
{
	struct ik_test_tables e = { 0 };
	struct ik_pgtable *pt = mkpt(mcfgs[_i].ias, mcfgs[_i].oas, mcfgs[_i].flags, 0, &e);
	struct model *m = calloc(1, sizeof(*m));
	struct ik_pgtable_info info;
	struct ik_pt_walker w;
	struct arw_tables t;
	struct ik_rng rng = { 0xa3d0000u + (uint64_t)_i };
	const uint64_t base = (1ull << mcfgs[_i].ias) - WIN;	/* the top of the space */
	long ops = ik_test_iters(300);
	struct ik_gather g;

	ck_assert_ptr_nonnull(m);
	ik_pgtable_get_info(pt, &info);
	ik_pgtable_walker(pt, &w);
	t = ref_of(info.root_iommu, info.geom.nlevels, mcfgs[_i].oas);
	for (long i = 0; i < ops; i++) {
		uint64_t sz = SZ_4K << ik_rng_below(&rng, 11);
		uint64_t off = ik_rng_below(&rng, NPG) * SZ_4K;
		uint64_t pa = (ik_rng_below(&rng, (1ull << (mcfgs[_i].oas - 12)) - 1) + 1) << 12;
		unsigned prot = prots[ik_rng_below(&rng, 5)];

		if (ik_rng_below(&rng, 4) == 0) {	/* 2M-friendly */
			off = IK_ALIGN_DOWN(off, SZ_2M);
			pa = IK_ALIGN_DOWN(pa, SZ_2M) + (pa < SZ_2M ? SZ_2M : 0);
			sz = SZ_2M << ik_rng_below(&rng, 2);
		}
		if (off + sz > WIN || pa + sz > (1ull << mcfgs[_i].oas))
			continue;
		if (ik_rng_below(&rng, 3) == 0) {
			ik_gather_init(&g);
			IK_REQUIRE(ik_pgtable_unmap(pt, base + off, sz, &g) >= 0);
			IK_REQUIRE(ik_pgtable_gather_sync(pt, &g) == 0);
			model_set(m, off, 0, sz, 0);
		} else {
			int rc = ik_pgtable_map(pt, base + off, pa, sz, prot);

			IK_REQUIRE(rc == (model_free(m, off, sz) ? 0 : -EEXIST));
			if (rc == 0)
				model_set(m, off, pa, sz, prot);
		}
	}
	/* every page, and a random byte in it, against the model */
	for (uint64_t k = 0; k < NPG; k++) {
		uint64_t iova = base + k * SZ_4K + ik_rng_below(&rng, SZ_4K);
		struct arw_result ref = compare_walk(&w, &t, iova, 0);
		unsigned p = m->prot[k];

		if (!m->pa[k]) {
			IK_REQUIRE(ref.fault == ARW_NOT_PRESENT);
			continue;
		}
		IK_REQUIRE_MSG(ref.fault == ARW_OK && ref.pa == m->pa[k] + (iova & 0xfff),
			       "page %llu: fault %d pa %#llx want %#llx", (unsigned long long)k,
			       (int)ref.fault, (unsigned long long)ref.pa,
			       (unsigned long long)m->pa[k]);
		IK_REQUIRE(ref.r == !!(p & IK_PROT_READ) && ref.w == !!(p & IK_PROT_WRITE));
		IK_REQUIRE(ref.fc == ((p & IK_PROT_CACHE) || (mcfgs[_i].flags & IK_AMD_FLAG_FORCE_FC)));
		IK_REQUIRE(ref.u == !!(mcfgs[_i].flags & IK_AMD_FLAG_U));
		compare_walk(&w, &t, iova, IK_ACCESS_READ);
		compare_walk(&w, &t, iova, IK_ACCESS_WRITE);
		compare_walk(&w, &t, iova, IK_ACCESS_EXEC);
	}
	/* outside the window, and beyond ias */
	for (int k = 0; k < 64; k++) {
		uint64_t iova = ik_rng_below(&rng, base);

		compare_walk(&w, &t, iova, 0);
		if (mcfgs[_i].ias < 63)
			compare_walk(&w, &t, iova | (1ull << mcfgs[_i].ias), IK_ACCESS_READ);
	}
	ik_pgtable_destroy(pt);
	free(m);
	ck_assert_int_eq(e.allocs, e.frees);
}
END_TEST

/* ------------------------------------------------------------ guest tables */

#define PR 1ull
#define IRW ((1ull << 61) | (1ull << 62))
#define IR (1ull << 61)
#define NL(n) ((uint64_t)(n) << 9)
#define IOVA4(a, b, c, d) (((uint64_t)(a) << 39) | ((uint64_t)(b) << 30) | ((uint64_t)(c) << 21) | \
			   ((uint64_t)(d) << 12))

/* A walker of a Mode-4 guest table at root, and the reference's view. */
static void guest_walkers(uint64_t root, unsigned oas, struct ik_pt_walker *w,
			  struct arw_tables *t)
{
	struct ik_pgtable_cfg c;
	struct ik_test_tables e = { 0 };

	c = mkcfg(48, oas, 0, 0, &e);
	ck_assert_int_eq(ik_pt_walker_init(w, &c, root), 0);
	*t = ref_of(root, 4, oas);
}

static void expect(const struct ik_pt_walker *w, const struct arw_tables *t, uint64_t iova,
		   unsigned access, enum ik_pt_fault f, uint64_t pa, uint64_t pgsize)
{
	struct arw_result ref = compare_walk(w, t, iova, access);
	struct ik_pt_walk_result r;

	ck_assert_int_eq(ik_pt_walk(w, &ik_test_mem, iova, access, &r), 0);
	ck_assert_msg(r.fault == f, "iova %#llx: fault %d, want %d", (unsigned long long)iova,
		      (int)r.fault, (int)f);
	ck_assert_int_eq(expected_fault(ref.fault), f);
	if (f == IK_PT_FAULT_NONE) {
		ck_assert_uint_eq(r.oa, pa);
		ck_assert_uint_eq(r.pgsize, pgsize);
	}
}

START_TEST(walker_decodes_next_level_7_pages_and_skipped_levels)
{
	struct ik_test_pages gs = { 0 };
	uint64_t *l4 = ik_test_page(&gs), *l3 = ik_test_page(&gs), *l2 = ik_test_page(&gs);
	uint64_t *l1 = ik_test_page(&gs);
	uint64_t *l1b = ik_test_page(&gs), *l2b = ik_test_page(&gs);
	struct ik_pt_walker w;
	struct arw_tables t;
	const uint64_t pa64k = 0x12340000ull, pa4m = 0x40400000ull, pa8k = 0x8000ull;

	l4[0] = ik_test_addr(l3) | PR | IRW | NL(3);
	l3[0] = ik_test_addr(l2) | PR | IRW | NL(2);
	l2[0] = ik_test_addr(l1) | PR | IRW | NL(1);
	/* a 64K page at entries 16..31 of l1: each holds the same encoding */
	for (int i = 16; i < 32; i++)
		l1[i] = ik_amd_pte_size_encode(pa64k, SZ_64K) | PR | IRW | NL(7);
	/* an 8K read-only page at entries 2, 3 */
	l1[2] = l1[3] = ik_amd_pte_size_encode(pa8k, SZ_8K) | PR | IR | NL(7);
	/* a 4M page at l2 entries 2, 3 (FC) */
	l2[2] = l2[3] = ik_amd_pte_size_encode(pa4m, SZ_4M) | PR | IRW | NL(7) | (1ull << 60);
	/* malformed sizes: an 8K code in a level-2 entry, a 2M code at level 1 */
	l2[6] = ik_amd_pte_size_encode(0, SZ_8K) | PR | IRW | NL(7);
	l1[40] = ik_amd_pte_size_encode(0, SZ_2M) | PR | IRW | NL(7);
	/* a 4K page with NextLevel 0, and one beyond oas 48 */
	l1[50] = 0x99000ull | PR | IRW;
	l1[51] = (1ull << 49) | PR | IRW;
	/* a PDE whose NextLevel is its own level, and one pointing beyond oas */
	l2[8] = ik_test_addr(l1) | PR | IRW | NL(2);
	l2[9] = (1ull << 50) | PR | IRW | NL(1);
	/* a table without IR: reads through it fault */
	l2[10] = ik_test_addr(l1b) | PR | (1ull << 62) | NL(1);
	l1b[0] = 0x5000ull | PR | IRW;
	/* skip levels: l4[1] -> a level-1 table directly (levels 3, 2 skipped) */
	l4[1] = ik_test_addr(l1b) | PR | IRW | NL(1);
	/* skip one level: l4[2] -> a level-2 table with a 2M page */
	l4[2] = ik_test_addr(l2b) | PR | IRW | NL(2);
	l2b[5] = 0x600000ull | PR | IRW;

	guest_walkers(ik_test_addr(l4), 48, &w, &t);
	expect(&w, &t, IOVA4(0, 0, 0, 16), IK_ACCESS_WRITE, IK_PT_FAULT_NONE, pa64k, SZ_64K);
	expect(&w, &t, IOVA4(0, 0, 0, 31) + 0x123, IK_ACCESS_READ, IK_PT_FAULT_NONE,
	       pa64k + 15 * SZ_4K + 0x123, SZ_64K);
	expect(&w, &t, IOVA4(0, 0, 0, 3) + 8, IK_ACCESS_READ, IK_PT_FAULT_NONE, pa8k + SZ_4K + 8, SZ_8K);
	expect(&w, &t, IOVA4(0, 0, 0, 2), IK_ACCESS_WRITE, IK_PT_FAULT_PERMISSION, 0, 0);
	expect(&w, &t, IOVA4(0, 0, 3, 7), IK_ACCESS_WRITE, IK_PT_FAULT_NONE, pa4m + SZ_2M + 7 * SZ_4K,
	       SZ_4M);
	expect(&w, &t, IOVA4(0, 0, 6, 0), 0, IK_PT_FAULT_RESERVED, 0, 0);
	expect(&w, &t, IOVA4(0, 0, 0, 40), 0, IK_PT_FAULT_RESERVED, 0, 0);
	expect(&w, &t, IOVA4(0, 0, 0, 50), IK_ACCESS_EXEC, IK_PT_FAULT_PERMISSION, 0, 0);
	expect(&w, &t, IOVA4(0, 0, 0, 50), IK_ACCESS_READ, IK_PT_FAULT_NONE, 0x99000, SZ_4K);
	expect(&w, &t, IOVA4(0, 0, 8, 0), 0, IK_PT_FAULT_RESERVED, 0, 0);
	expect(&w, &t, IOVA4(0, 0, 10, 0), IK_ACCESS_READ, IK_PT_FAULT_PERMISSION, 0, 0);
	expect(&w, &t, IOVA4(0, 0, 10, 0), IK_ACCESS_WRITE, IK_PT_FAULT_NONE, 0x5000, SZ_4K);
	expect(&w, &t, IOVA4(0, 0, 0, 60), 0, IK_PT_FAULT_TRANSLATION, 0, 0);
	/* skipped levels: index 0 there translates, anything else faults */
	expect(&w, &t, IOVA4(1, 0, 0, 0) + 0x10, IK_ACCESS_READ, IK_PT_FAULT_NONE, 0x5010, SZ_4K);
	expect(&w, &t, IOVA4(1, 0, 1, 0), IK_ACCESS_READ, IK_PT_FAULT_TRANSLATION, 0, 0);
	expect(&w, &t, IOVA4(1, 1, 0, 0), IK_ACCESS_READ, IK_PT_FAULT_TRANSLATION, 0, 0);
	expect(&w, &t, IOVA4(2, 0, 5, 9), IK_ACCESS_READ, IK_PT_FAULT_NONE, 0x600000 + 9 * SZ_4K, SZ_2M);
	expect(&w, &t, IOVA4(2, 3, 5, 9), IK_ACCESS_READ, IK_PT_FAULT_TRANSLATION, 0, 0);
	/* beyond Mode 4's 48 bits */
	expect(&w, &t, 1ull << 48, 0, IK_PT_FAULT_TRANSLATION, 0, 0);

	/* a page and a table beyond oas 48 */
	expect(&w, &t, IOVA4(0, 0, 0, 51), 0, IK_PT_FAULT_ADDR_SIZE, 0, 0);
	expect(&w, &t, IOVA4(0, 0, 9, 0), 0, IK_PT_FAULT_ADDR_SIZE, 0, 0);
	ik_test_pages_free(&gs);
}
END_TEST

struct dump_acc {
	struct ik_pt_range r[8];
	int n;
};

static int dump_fn(void *ctx, const struct ik_pt_range *r)
{
	struct dump_acc *d = ctx;

	if (d->n < 8)
		d->r[d->n] = *r;
	d->n++;
	return 0;
}

START_TEST(walker_dump_reports_next_level_7_pages_whole)
{
	struct ik_test_pages gs = { 0 };
	uint64_t *l2 = ik_test_page(&gs), *l1 = ik_test_page(&gs);
	struct ik_pgtable_cfg c;
	struct ik_test_tables e = { 0 };
	struct ik_pt_walker w;
	struct dump_acc d = { .n = 0 };

	/* Mode 2 (30 bits): a 1M page at l1 entries 256..511, a 4M page at l2
	 * entries 4, 5. */
	l2[0] = ik_test_addr(l1) | PR | IRW | NL(1);
	for (int i = 256; i < 512; i++)
		l1[i] = ik_amd_pte_size_encode(0x100000ull, SZ_1M) | PR | IRW | NL(7);
	l2[4] = l2[5] = ik_amd_pte_size_encode(0x800000ull, SZ_4M) | PR | IR | NL(7);
	c = mkcfg(30, 48, 0, 0, &e);
	ck_assert_int_eq(ik_pt_walker_init(&w, &c, ik_test_addr(l2)), 0);
	ck_assert_int_eq(ik_pt_walker_dump(&w, &ik_test_mem, 0, 1ull << 30, dump_fn, &d), 0);
	ck_assert_int_eq(d.n, 2);
	ck_assert_uint_eq(d.r[0].iova, SZ_1M);
	ck_assert_uint_eq(d.r[0].oa, 0x100000);
	ck_assert_uint_eq(d.r[0].size, SZ_1M);
	ck_assert_uint_eq(d.r[0].pgsize, SZ_1M);
	ck_assert_uint_eq(d.r[1].iova, 4 * SZ_2M);
	ck_assert_uint_eq(d.r[1].oa, 0x800000);
	ck_assert_uint_eq(d.r[1].size, SZ_4M);
	ck_assert_uint_eq(d.r[1].prot, IK_PROT_READ | IK_PROT_NOEXEC);
	ik_test_pages_free(&gs);
}
END_TEST

START_TEST(host_access_dirty_sets_a_and_d_under_the_dirty_quirk)
{
	struct ik_test_tables e = { 0 };
	struct ik_pgtable *pt = mkpt(48, 48, 0, IK_PT_QUIRK_DIRTY, &e);
	struct ik_pgtable *plain = mkpt(48, 48, 0, 0, &e);
	struct ik_pt_walker w, wp;
	struct ik_pt_walk_result r;
	uint64_t bm[1] = { 0 };
	uint64_t *ent;

	ck_assert_int_eq(ik_pgtable_map(pt, 0x10000, 0x20000, 4 * SZ_4K, RW), 0);
	ck_assert_int_eq(ik_pgtable_map(plain, 0x10000, 0x20000, SZ_4K, RW), 0);
	ent = raw_entry(pt, 0x11000, 1);
	ck_assert_uint_eq(*ent & ((1ull << 5) | (1ull << 6)), 0);
	ik_pgtable_walker(pt, &w);
	ik_pgtable_walker(plain, &wp);
	/* a read sets A, a write A and D */
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, 0x10000, IK_ACCESS_READ, &r), 0);
	ck_assert_uint_eq(*raw_entry(pt, 0x10000, 1) & (3ull << 5), 1ull << 5);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, 0x11000, IK_ACCESS_WRITE, &r), 0);
	ck_assert(r.dirty);
	ck_assert_uint_eq(*ent & (3ull << 5), 3ull << 5);
	/* without the quirk the IOMMU updates nothing */
	ck_assert_int_eq(ik_pt_walk(&wp, &ik_test_mem_hw, 0x10000, IK_ACCESS_WRITE, &r), 0);
	ck_assert_uint_eq(*raw_entry(plain, 0x10000, 1) & (3ull << 5), 0);
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(plain, 0x10000, SZ_4K, 0, bm, 12, NULL),
			 -EOPNOTSUPP);
	/* read and clear: page 1 only; D is clear again, A stays */
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(pt, 0x10000, 4 * SZ_4K, 0, bm, 12, NULL), 1);
	ck_assert_uint_eq(bm[0], 2);
	ck_assert_uint_eq(*ent & (3ull << 5), 1ull << 5);
	ik_pgtable_destroy(pt);
	ik_pgtable_destroy(plain);
	ck_assert_int_eq(e.allocs, e.frees);
}
END_TEST

START_TEST(size_encoding_helper_refuses_what_it_cannot_express)
{
	ck_assert_uint_eq(ik_amd_pte_size_encode(0x2000, SZ_8K), 0x2000);
	ck_assert_uint_eq(ik_amd_pte_size_encode(0x10000, SZ_64K), 0x17000);
	ck_assert_uint_eq(ik_amd_pte_size_encode(0, 1ull << 32), 0x7ffff000ull);
	ck_assert_uint_eq(ik_amd_pte_size_encode(0x1000, SZ_8K), 0);	/* misaligned */
	ck_assert_uint_eq(ik_amd_pte_size_encode(0, SZ_4K), 0);	/* natural 4K: NextLevel 0 */
	ck_assert_uint_eq(ik_amd_pte_size_encode(0, 3 * SZ_8K), 0);
	ck_assert_uint_eq(ik_amd_pte_size_encode(1ull << 52, SZ_8K), 0);
	ck_assert_uint_eq(ik_amd_pte_size_encode(0, 1ull << 52), 0);
}
END_TEST

/* ------------------------------------------------------------ v2 */

/* Every entry of two table sets, following table pointers (x86 layout:
 * P = bit 0, PS = bit 7 at levels 1 and 2). */
static void same_tables(const uint64_t *a, const uint64_t *b, unsigned lvl)
{
	for (unsigned i = 0; i < 512; i++) {
		bool table = (a[i] & 1) && lvl > 0 && !(lvl <= 2 && (a[i] & 0x80));

		IK_REQUIRE_MSG((a[i] & ~IK_VTD_ADDR_MASK) == (b[i] & ~IK_VTD_ADDR_MASK),
			       "level %u entry %u: %#llx vs %#llx", lvl, i,
			       (unsigned long long)a[i], (unsigned long long)b[i]);
		if (table)
			same_tables((const uint64_t *)(uintptr_t)(a[i] & IK_VTD_ADDR_MASK),
				    (const uint64_t *)(uintptr_t)(b[i] & IK_VTD_ADDR_MASK), lvl - 1);
		else
			IK_REQUIRE(a[i] == b[i]);
	}
}

START_TEST(v2_is_the_first_level_layout_with_1g_pages_ungated)
{
	struct ik_test_tables e = { 0 };
	struct ik_pgtable_cfg c;
	struct ik_pgtable *v2, *fl;
	struct ik_pgtable_info i2, ifl;
	struct ik_pt_geometry g;
	struct ik_rng rng = { 0xa3d2 };
	struct rw_tables t;
	struct ik_pt_walker w;
	static const unsigned p2[] = { IK_PROT_READ, RW, RW | IK_PROT_CACHE | IK_PROT_NOEXEC,
				       RW | IK_PROT_PRIV, IK_PROT_READ | IK_PROT_MMIO };

	cfg_fmt = IK_PT_AMD_V2;
	c = mkcfg(47, 48, 0, 0, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), 0);
	ck_assert_uint_eq(g.pgsize_bitmap, ALL_SIZES);	/* no SP flag needed */
	ck_assert_uint_eq(g.nlevels, 4);
	c = mkcfg(56, 48, 0, 0, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), 0);
	ck_assert_uint_eq(g.nlevels, 5);
	c = mkcfg(47, 48, IK_VTD_FLAG_SP_1G, 0, &e);	/* no fmt_flags at all */
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(57, 48, 0, 0, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	v2 = mkpt(47, 48, 0, 0, &e);
	cfg_fmt = IK_PT_VTD_FL;
	fl = mkpt(47, 48, IK_VTD_FLAG_SP_1G, 0, &e);
	cfg_fmt = IK_PT_AMD_V1;
	/* the same requests give the same entries as VT-d first-level with
	 * FL1GP, and the x86 reference walker translates them as requested */
	for (int i = 0; i < 200; i++) {
		uint64_t iova = ik_rng_below(&rng, 1ull << 35) & ~(SZ_4K - 1);
		uint64_t pa = ik_rng_below(&rng, 1ull << 40) & ~(SZ_4K - 1);
		uint64_t sz = SZ_4K << ik_rng_below(&rng, 10);
		unsigned prot = p2[ik_rng_below(&rng, 5)];

		if (i % 5 == 0) {
			iova &= ~(SZ_1G - 1);
			pa &= ~(SZ_1G - 1);
			sz = SZ_1G;
		}
		int r1 = ik_pgtable_map(v2, iova, pa, sz, prot);

		ck_assert_int_eq(ik_pgtable_map(fl, iova, pa, sz, prot), r1);
		if (r1)
			continue;
		ik_pgtable_get_info(v2, &i2);
		t = (struct rw_tables){ ref_table_at, NULL, i2.root_iommu, 4, 48, false, true, true, true };
		for (int k = 0; k < 8; k++) {
			uint64_t off = ik_rng_below(&rng, sz);
			struct rw_result ref = rw_walk(&t, iova + off, 0);

			IK_REQUIRE(ref.fault == RW_OK && ref.pa == pa + off);
			IK_REQUIRE(ref.w == !!(prot & IK_PROT_WRITE));
			IK_REQUIRE(ref.user == !(prot & IK_PROT_PRIV));
			IK_REQUIRE(ref.x == !(prot & IK_PROT_NOEXEC));
			if (sz == SZ_1G)
				IK_REQUIRE(ref.pgsize == SZ_1G);
		}
	}
	ik_pgtable_get_info(v2, &i2);
	ik_pgtable_get_info(fl, &ifl);
	same_tables(i2.root_cpu, ifl.root_cpu, 3);
	ik_pgtable_walker(v2, &w);
	{
		struct ik_pt_walk_result r;

		ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, 1ull << 47, 0, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_TRANSLATION);
	}
	ik_pgtable_destroy(v2);
	ik_pgtable_destroy(fl);
	ck_assert_int_eq(e.allocs, e.frees);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("pgtable-amd");
	TCase *tc = tcase_create("amd-v1");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, entries_match_the_spec_layout);
	tcase_add_test(tc, mode_follows_ias_and_bad_configs_are_refused);
	tcase_add_test(tc, requests_the_format_cannot_express_change_nothing);
	tcase_add_loop_test(tc, reference_walk_of_engine_tables_matches_the_requests, 0,
			    (int)(sizeof(mcfgs) / sizeof(mcfgs[0])));
	tcase_add_test(tc, walker_decodes_next_level_7_pages_and_skipped_levels);
	tcase_add_test(tc, walker_dump_reports_next_level_7_pages_whole);
	tcase_add_test(tc, host_access_dirty_sets_a_and_d_under_the_dirty_quirk);
	tcase_add_test(tc, size_encoding_helper_refuses_what_it_cannot_express);
	tcase_add_test(tc, v2_is_the_first_level_layout_with_1g_pages_ungated);
	suite_add_tcase(s, tc);
	return s;
}
