/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * pgtable, Intel VT-d formats: what the generic suite (tests/test_pgtable.c)
 * cannot know.  Entries checked bit by bit against the specification's
 * layouts; superpages gated by the capability flags; the values a driver
 * programs (context and PASID entries) bit by bit; the config built from
 * CAP/ECAP; the library's walker against a reference walker written from the
 * specification (tests/vtd_refwalk.h), on engine-built tables and on
 * hand-built "guest" tables with every kind of fault; second-level A/D dirty
 * tracking and first-level A/D presetting; the two non-coherent cleaning
 * schemes (at write time, or deferred to the end of the request).
 */
#include <stdlib.h>
#include <string.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/vtd.h>
#include "testlib.h"
#include "vtd_refwalk.h"

#define SZ_4K 0x1000ull
#define SZ_2M 0x200000ull
#define SZ_1G 0x40000000ull
#define ALL_SIZES (SZ_4K | SZ_2M | SZ_1G)
#define RW (IK_PROT_READ | IK_PROT_WRITE)

/* ------------------------------------------------------------ test memory */

/* Hooks: testlib's identity table memory (struct ik_test_tables,
 * ik_test_mem), IOMMU address = CPU address, so that both walkers can follow
 * table pointers directly; plus cleaning and map-sync counters. */
struct tenv {
	struct ik_test_tables tables;	/* first: the cookie is also its cookie */
	long cleans, clean_bytes, syncs;
	uint64_t sync_iova, sync_size;
	/* clean-order probe: the entry that the request writes last */
	const uint64_t *probe;
	long cleans_seeing_probe, cleans_before_probe;
};

static void t_clean(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	struct tenv *e = cookie;

	(void)cpu;
	(void)iommu;
	e->cleans++;
	e->clean_bytes += (long)size;
	if (e->probe) {
		if (__atomic_load_n(e->probe, __ATOMIC_RELAXED))
			e->cleans_seeing_probe++;
		else
			e->cleans_before_probe++;
	}
}

static void t_sync_map(void *cookie, ik_u64 iova, ik_u64 size)
{
	struct tenv *e = cookie;

	e->syncs++;
	e->sync_iova = iova;
	e->sync_size = size;
}

static const struct ik_pgtable_hooks t_hooks = {
	.alloc_table = ik_test_tables_alloc,
	.free_table = ik_test_tables_free,
	.clean = t_clean,
	.iotlb_sync_map = t_sync_map,
};

static void reset_counts(struct tenv *e)
{
	e->cleans = e->clean_bytes = e->syncs = 0;
	e->cleans_seeing_probe = e->cleans_before_probe = 0;
}

static struct ik_pgtable_cfg mkcfg(enum ik_pt_fmt fmt, unsigned ias, unsigned oas, ik_u64 flags,
				   ik_u32 quirks, bool coherent, struct tenv *e)
{
	return ik_test_cfg(fmt, ias, oas, ALL_SIZES, quirks, flags, coherent, &t_hooks, e);
}

static struct ik_pgtable *mkpt(enum ik_pt_fmt fmt, unsigned ias, unsigned oas, ik_u64 flags,
			       ik_u32 quirks, bool coherent, struct tenv *e)
{
	struct ik_pgtable_cfg c = mkcfg(fmt, ias, oas, flags, quirks, coherent, e);

	return ik_test_pt_create(&c);
}

static uint64_t next_table(uint64_t e)
{
	return e & IK_VTD_ADDR_MASK;
}

/* The raw entry at level `lvl` on the path of `iova` (NULL if the path ends
 * above it), found by following table pointers in memory. */
static uint64_t *raw_entry(const struct ik_pgtable *pt, uint64_t iova, unsigned lvl)
{
	return ik_test_raw_entry(pt, iova, lvl, 9, next_table);
}

static const uint64_t *ref_table_at(void *ctx, uint64_t pa)
{
	(void)ctx;
	return (const uint64_t *)(uintptr_t)pa;
}

static struct rw_tables ref_of(const struct ik_pgtable *pt)
{
	struct ik_pgtable_info info;
	struct rw_tables t;

	ik_pgtable_get_info(pt, &info);
	memset(&t, 0, sizeof(t));
	t.table_at = ref_table_at;
	t.root = info.root_iommu;
	t.levels = info.geom.nlevels;
	t.haw = info.geom.oas;
	t.sl = info.geom.fmt == IK_PT_VTD_SL;
	t.big2m = !t.sl || (info.geom.fmt_flags & IK_VTD_FLAG_SP_2M);
	t.big1g = (info.geom.fmt_flags & IK_VTD_FLAG_SP_1G) != 0;
	t.nxe = true;
	return t;
}

/* --------------------------------------------------- second-level entries */

START_TEST(sl_leaf_and_table_entries_match_the_spec_layout)
{
	struct tenv e = { 0 };
	struct ik_pgtable *pt = mkpt(IK_PT_VTD_SL, 48, 48, IK_VTD_FLAG_SC, 0, true, &e);
	const uint64_t iova = 0x12345000ull, pa = 0xabcde000ull;
	uint64_t *leaf;

	ck_assert_int_eq(ik_pgtable_map(pt, iova, pa, SZ_4K, RW | IK_PROT_CACHE), 0);
	leaf = raw_entry(pt, iova, 0);
	ck_assert_ptr_nonnull(leaf);
	/* R bit 0, W bit 1, SNP bit 11, address 51:12; PS, A, D, X clear */
	ck_assert_uint_eq(*leaf, pa | 0x1 | 0x2 | 0x800);
	/* table entries: next table's address with R and W, nothing else */
	for (unsigned l = 1; l < 4; l++) {
		uint64_t t = *raw_entry(pt, iova, l);

		ck_assert_uint_eq(t & ~IK_VTD_ADDR_MASK, 0x3);
		ck_assert_uint_eq(t & 0xfff, 0x3);
	}
	/* read-only, write-only, no SNP without CACHE */
	ck_assert_int_eq(ik_pgtable_map(pt, iova + SZ_4K, pa, SZ_4K, IK_PROT_READ), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova + SZ_4K, 0), pa | 0x1);
	ck_assert_int_eq(ik_pgtable_map(pt, iova + 2 * SZ_4K, pa, SZ_4K, IK_PROT_WRITE), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova + 2 * SZ_4K, 0), pa | 0x2);
	/* NOEXEC, PRIV, MMIO have no second-level bits */
	ck_assert_int_eq(ik_pgtable_map(pt, iova + 3 * SZ_4K, pa, SZ_4K,
					IK_PROT_READ | IK_PROT_NOEXEC | IK_PROT_PRIV | IK_PROT_MMIO), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova + 3 * SZ_4K, 0), pa | 0x1);
	/* the highest address bit a 52-bit HAW allows */
	ik_pgtable_destroy(pt);

	pt = mkpt(IK_PT_VTD_SL, 48, 52, IK_VTD_FLAG_SC | IK_VTD_FLAG_FORCE_SNP, 0, true, &e);
	ck_assert_int_eq(ik_pgtable_map(pt, iova, 0x000ffffffffff000ull, SZ_4K, IK_PROT_READ), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova, 0), 0x000ffffffffff000ull | 0x1 | 0x800);
	ik_pgtable_destroy(pt);

	/* SNP is never written when the unit has no snoop control */
	pt = mkpt(IK_PT_VTD_SL, 48, 48, 0, 0, true, &e);
	ck_assert_int_eq(ik_pgtable_map(pt, iova, pa, SZ_4K, RW | IK_PROT_CACHE), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova, 0), pa | 0x3);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.tables.allocs, e.tables.frees);
}
END_TEST

START_TEST(sl_superpages_set_ps_and_keep_low_address_bits_clear)
{
	struct tenv e = { 0 };
	struct ik_pgtable *pt = mkpt(IK_PT_VTD_SL, 48, 48, IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G,
				     0, true, &e);
	uint64_t pa, sz;

	ck_assert_int_eq(ik_pgtable_map(pt, 0x40000000ull, 0x80000000ull, SZ_1G, RW), 0);
	ck_assert_uint_eq(*raw_entry(pt, 0x40000000ull, 2), 0x80000000ull | 0x3 | 0x80);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x80200000ull, 0x12600000ull, SZ_2M, IK_PROT_READ), 0);
	ck_assert_uint_eq(*raw_entry(pt, 0x80200000ull, 1), 0x12600000ull | 0x1 | 0x80);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(pt, 0x80200000ull + 0x1234, &pa, &sz), 0);
	ck_assert_uint_eq(pa, 0x12601234ull);
	ck_assert_uint_eq(sz, SZ_2M);
	ik_pgtable_destroy(pt);
}
END_TEST

START_TEST(sl_superpages_are_gated_by_the_sllps_flags)
{
	struct tenv e = { 0 };
	struct ik_pgtable_info info;
	struct ik_pt_walker w;
	struct ik_pt_walk_result r;
	struct ik_pgtable *pt = mkpt(IK_PT_VTD_SL, 39, 48, 0, 0, true, &e);

	ik_pgtable_get_info(pt, &info);
	ck_assert_uint_eq(info.geom.pgsize_bitmap, SZ_4K);
	ck_assert_uint_eq(info.geom.leaf_levels, 1);
	/* map_pages with a size the unit lacks: -EINVAL, nothing changed */
	ck_assert_int_eq(ik_pgtable_map_pages(pt, SZ_2M, SZ_2M, SZ_2M, 1, RW), -EINVAL);
	ck_assert_ptr_null(raw_entry(pt, SZ_2M, 0));
	/* map() falls back to 4K pages */
	ck_assert_int_eq(ik_pgtable_map(pt, SZ_2M, SZ_2M, SZ_2M, RW), 0);
	ik_pgtable_walker(pt, &w);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, SZ_2M + 0x5000, IK_ACCESS_READ, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
	ck_assert_uint_eq(r.pgsize, SZ_4K);
	ik_pgtable_destroy(pt);

	/* 2M only: a 1G-aligned 1G request becomes 512 superpages */
	pt = mkpt(IK_PT_VTD_SL, 39, 48, IK_VTD_FLAG_SP_2M, 0, true, &e);
	ik_pgtable_get_info(pt, &info);
	ck_assert_uint_eq(info.geom.pgsize_bitmap, SZ_4K | SZ_2M);
	ck_assert_int_eq(ik_pgtable_map_pages(pt, SZ_1G, SZ_1G, SZ_1G, 1, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(pt, SZ_1G, SZ_1G, SZ_1G, RW), 0);
	ik_pgtable_walker(pt, &w);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, SZ_1G + 0x345000, 0, &r), 0);
	ck_assert_uint_eq(r.pgsize, SZ_2M);
	ck_assert_uint_eq(*raw_entry(pt, SZ_1G + SZ_2M, 1), (SZ_1G + SZ_2M) | 0x3 | 0x80);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.tables.allocs, e.tables.frees);
}
END_TEST

/* ---------------------------------------------------- first-level entries */

START_TEST(fl_leaf_and_table_entries_match_the_x86_layout)
{
	struct tenv e = { 0 };
	struct ik_pgtable *pt = mkpt(IK_PT_VTD_FL, 47, 48, IK_VTD_FLAG_SP_1G, 0, true, &e);
	const uint64_t iova = 0x7654321000ull, pa = 0x1234567000ull;
	const uint64_t P = 1, W = 2, US = 4, PWT = 8, PCD = 16, A = 32, D = 64, PS = 128;
	const uint64_t XD = 1ull << 63;

	ck_assert_int_eq(ik_pgtable_map(pt, iova, pa, SZ_4K, RW | IK_PROT_CACHE), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova, 0), pa | P | W | US | A | D);
	for (unsigned l = 1; l < 4; l++)
		ck_assert_uint_eq(*raw_entry(pt, iova, l) & ~IK_VTD_ADDR_MASK, P | W | US | A);
	ck_assert_int_eq(ik_pgtable_map(pt, iova + SZ_4K, pa, SZ_4K,
					IK_PROT_READ | IK_PROT_NOEXEC | IK_PROT_PRIV | IK_PROT_CACHE), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova + SZ_4K, 0), pa | P | A | XD);
	ck_assert_int_eq(ik_pgtable_map(pt, iova + 2 * SZ_4K, pa, SZ_4K, IK_PROT_READ | IK_PROT_MMIO), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova + 2 * SZ_4K, 0), pa | P | US | A | PWT | PCD);
	ck_assert_int_eq(ik_pgtable_map(pt, iova + 3 * SZ_4K, pa, SZ_4K, IK_PROT_WRITE), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova + 3 * SZ_4K, 0), pa | P | W | US | A | D | PCD);
	/* 2M and 1G pages: PS (bit 7), PAT (bit 12) clear */
	ck_assert_int_eq(ik_pgtable_map(pt, SZ_1G, 3 * SZ_1G, SZ_1G, RW | IK_PROT_CACHE), 0);
	ck_assert_uint_eq(*raw_entry(pt, SZ_1G, 2), 3 * SZ_1G | P | W | US | A | D | PS);
	ck_assert_int_eq(ik_pgtable_map(pt, 2 * SZ_1G, 7 * SZ_2M, SZ_2M, IK_PROT_READ | IK_PROT_CACHE), 0);
	ck_assert_uint_eq(*raw_entry(pt, 2 * SZ_1G, 1), 7 * SZ_2M | P | US | A | PS);
	ik_pgtable_destroy(pt);

	/* with dirty tracking, writable leaves start clean (D = 0) */
	pt = mkpt(IK_PT_VTD_FL, 47, 48, 0, IK_PT_QUIRK_DIRTY, true, &e);
	ck_assert_int_eq(ik_pgtable_map(pt, iova, pa, SZ_4K, RW | IK_PROT_CACHE), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova, 0), pa | P | W | US | A);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.tables.allocs, e.tables.frees);
}
END_TEST

/* ------------------------------------------------------------ geometry */

START_TEST(levels_follow_ias_and_bad_configs_are_refused)
{
	static const struct { enum ik_pt_fmt fmt; unsigned ias, levels; } ok[] = {
		{ IK_PT_VTD_SL, 32, 3 }, { IK_PT_VTD_SL, 39, 3 }, { IK_PT_VTD_SL, 40, 4 },
		{ IK_PT_VTD_SL, 48, 4 }, { IK_PT_VTD_SL, 49, 5 }, { IK_PT_VTD_SL, 57, 5 },
		{ IK_PT_VTD_FL, 32, 4 }, { IK_PT_VTD_FL, 47, 4 }, { IK_PT_VTD_FL, 48, 5 },
		{ IK_PT_VTD_FL, 56, 5 },
	};
	struct ik_pgtable_cfg c;
	struct ik_pt_geometry g;
	struct tenv e = { 0 };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		c = mkcfg(ok[i].fmt, ok[i].ias, 48, 0, 0, true, &e);
		ck_assert_int_eq(ik_pt_geometry_init(&g, &c), 0);
		ck_assert_uint_eq(g.nlevels, ok[i].levels);
		ck_assert_uint_eq(g.hw_start_level, ok[i].levels);
		ck_assert_uint_eq(g.lg2_granule, 12);
		ck_assert_uint_eq(g.bits, 9);
		ck_assert_uint_eq(g.top_bits, 9);	/* the root is a whole page */
		ck_assert_uint_eq(g.root_size, 4096);
	}
	/* ias, oas */
	c = mkcfg(IK_PT_VTD_SL, 58, 48, 0, 0, true, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(IK_PT_VTD_FL, 57, 48, 0, 0, true, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(IK_PT_VTD_SL, 31, 48, 0, 0, true, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(IK_PT_VTD_SL, 48, 53, 0, 0, true, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	/* granule other than 4K */
	c = mkcfg(IK_PT_VTD_SL, 48, 48, 0, 0, true, &e);
	c.pgsize_bitmap = 0x10000 | SZ_2M;
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c.pgsize_bitmap = 0;
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	/* flags and quirks */
	c = mkcfg(IK_PT_VTD_SL, 48, 48, 0x100, 0, true, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(IK_PT_VTD_SL, 48, 48, IK_VTD_FLAG_FORCE_SNP, 0, true, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(IK_PT_VTD_FL, 48, 48, IK_VTD_FLAG_SC, 0, true, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(IK_PT_VTD_SL, 48, 48, 0, IK_PT_QUIRK_ARM_NS, true, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(IK_PT_VTD_SL, 48, 48, 0, 1u << IK_PT_QUIRK_FMT_SHIFT, true, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), -EINVAL);
	c = mkcfg(IK_PT_VTD_SL, 48, 48, 0, IK_PT_QUIRK_DIRTY | IK_PT_QUIRK_DEFER_LEAF_CLEAN, false, &e);
	ck_assert_int_eq(ik_pt_geometry_init(&g, &c), 0);
	/* names */
	ck_assert_str_eq(ik_pt_fmt_name(IK_PT_VTD_SL), "vtd-sl");
	ck_assert_str_eq(ik_pt_fmt_name(IK_PT_VTD_FL), "vtd-fl");
	ck_assert_int_eq(ik_pt_fmt_from_name("vtd-fl"), IK_PT_VTD_FL);
}
END_TEST

/* ------------------------------------------------- driver-programmed values */

START_TEST(context_and_pasid_entries_are_computed_bit_by_bit)
{
	struct tenv e = { 0 };
	struct ik_vtd_regs r;
	struct ik_pgtable_info info;

	for (unsigned levels = 3; levels <= 5; levels++) {
		unsigned ias = 12 + 9 * levels;
		struct ik_pgtable *pt = mkpt(IK_PT_VTD_SL, ias, 48, 0, 0, levels != 4, &e);

		ik_pgtable_get_info(pt, &info);
		ck_assert_int_eq(ik_vtd_get_regs(pt, 0x1234, &r), 0);
		ck_assert_uint_eq(r.ptptr, info.root_iommu);
		ck_assert_uint_eq(r.aw, levels - 2);
		ck_assert_uint_eq(r.flpm, 0);
		/* context: lo = SLPTPTR | TT 00 | P; hi = DID 23:8 | AW 2:0 */
		ck_assert_uint_eq(r.context[0], info.root_iommu | 1);
		ck_assert_uint_eq(r.context[1], (0x1234ull << 8) | (levels - 2));
		/* PASID entry: word 0 = SLPTPTR | PGTT 010b << 6 | AW << 2 | P */
		ck_assert_uint_eq(r.pasid[0], info.root_iommu | (2ull << 6) | ((levels - 2ull) << 2) | 1);
		/* word 1: DID 15:0, PWSNP bit 23 when the walk snoops */
		ck_assert_uint_eq(r.pasid[1], 0x1234ull | (levels != 4 ? 1ull << 23 : 0));
		for (int k = 2; k < 8; k++)
			ck_assert_uint_eq(r.pasid[k], 0);
		ik_pgtable_destroy(pt);
	}
	{	/* SSADS: SLADE, word 0 bit 9 */
		struct ik_pgtable *pt = mkpt(IK_PT_VTD_SL, 48, 48, 0, IK_PT_QUIRK_DIRTY, true, &e);

		ik_pgtable_get_info(pt, &info);
		ck_assert_int_eq(ik_vtd_get_regs(pt, 7, &r), 0);
		ck_assert_uint_eq(r.pasid[0], info.root_iommu | (1ull << 9) | (2ull << 6) | (2ull << 2) | 1);
		ik_pgtable_destroy(pt);
	}
	for (unsigned levels = 4; levels <= 5; levels++) {
		struct ik_pgtable *pt = mkpt(IK_PT_VTD_FL, 11 + 9 * levels, 48, 0, 0, false, &e);

		ik_pgtable_get_info(pt, &info);
		ck_assert_int_eq(ik_vtd_get_regs(pt, 0xfffe, &r), 0);
		ck_assert_uint_eq(r.flpm, levels - 4);
		ck_assert_uint_eq(r.context[0], 0);
		ck_assert_uint_eq(r.context[1], 0);
		/* word 0: PGTT 001b, AW, P; word 2: FLPTPTR | NXE bit 5 | FLPM 3:2 */
		ck_assert_uint_eq(r.pasid[0], (1ull << 6) | ((levels - 2ull) << 2) | 1);
		ck_assert_uint_eq(r.pasid[1], 0xfffe);
		ck_assert_uint_eq(r.pasid[2], info.root_iommu | (1ull << 5) | ((levels - 4ull) << 2));
		ik_pgtable_destroy(pt);
	}
	ck_assert_int_eq(ik_vtd_get_regs(NULL, 0, &r), -EINVAL);
	{	/* not a VT-d table set */
		struct ik_pgtable_cfg c = mkcfg(IK_PT_LPAE_S1, 48, 48, 0, 0, true, &e);
		struct ik_pgtable *pt = NULL;

		if (ik_pgtable_create(&c, &pt) == 0) {
			ck_assert_int_eq(ik_vtd_get_regs(pt, 0, &r), -EINVAL);
			ik_pgtable_destroy(pt);
		}
	}
	ck_assert_int_eq(e.tables.allocs, e.tables.frees);
}
END_TEST

/* CAP/ECAP values of an imaginary unit: SAGAW 3/4-level, MGAW 48, SLLPS
 * 2M + 1G, FL1GP; ECAP C, SC, SMTS, SLADS, SLTS, FLTS, SMPWC. */
#define CAP_SAGAW(b) ((uint64_t)(b) << 8)
#define CAP_MGAW(w) ((uint64_t)((w) - 1) << 16)
#define CAP_SLLPS(b) ((uint64_t)(b) << 34)

START_TEST(config_is_derived_from_cap_and_ecap)
{
	struct ik_pgtable_cfg c;
	struct ik_vtd_caps caps;
	const uint64_t all_ecap = IK_VTD_ECAP_C | IK_VTD_ECAP_SC | IK_VTD_ECAP_SMTS |
				  IK_VTD_ECAP_SLADS | IK_VTD_ECAP_SLTS | IK_VTD_ECAP_FLTS |
				  IK_VTD_ECAP_SMPWC;

	memset(&caps, 0, sizeof(caps));
	caps.cap = CAP_SAGAW(0x6) | CAP_MGAW(48) | CAP_SLLPS(0x3) | IK_VTD_CAP_FL1GP;
	caps.ecap = all_ecap;
	caps.haw = 46;
	caps.scalable = false;
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_SL, &caps, 48, 0), 0);
	ck_assert_int_eq(c.fmt, IK_PT_VTD_SL);
	ck_assert_uint_eq(c.ias, 48);
	ck_assert_uint_eq(c.oas, 46);
	ck_assert(c.coherent);
	ck_assert_uint_eq(c.fmt_flags, IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G | IK_VTD_FLAG_SC);
	ck_assert_uint_eq(c.pgsize_bitmap, ALL_SIZES);
	ck_assert_ptr_null(c.hooks);
	/* SLLPS 2M only, no SC, not coherent */
	caps.cap = CAP_SAGAW(0x2) | CAP_MGAW(39) | CAP_SLLPS(0x1);
	caps.ecap = 0;
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_SL, &caps, 39, IK_PT_QUIRK_DEFER_LEAF_CLEAN), 0);
	ck_assert_uint_eq(c.fmt_flags, IK_VTD_FLAG_SP_2M);
	ck_assert(!c.coherent);
	ck_assert_uint_eq(c.quirks, IK_PT_QUIRK_DEFER_LEAF_CLEAN);
	/* SAGAW lacks 4-level; ias above MGAW */
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_SL, &caps, 48, 0), -EINVAL);
	caps.cap = CAP_SAGAW(0x2) | CAP_MGAW(48);
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_SL, &caps, 48, 0), -EOPNOTSUPP);
	/* first level needs scalable mode + FLTS, 5 levels FL5LP */
	caps.cap = CAP_SAGAW(0xe) | CAP_MGAW(57);
	caps.ecap = all_ecap;
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_FL, &caps, 47, 0), -EOPNOTSUPP);
	caps.scalable = true;
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_FL, &caps, 47, 0), 0);
	ck_assert_uint_eq(c.fmt_flags, 0);
	ck_assert(c.coherent);	/* SMPWC */
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_FL, &caps, 56, 0), -EOPNOTSUPP);
	caps.cap |= IK_VTD_CAP_FL5LP | IK_VTD_CAP_FL1GP;
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_FL, &caps, 56, IK_PT_QUIRK_DIRTY), 0);
	ck_assert_uint_eq(c.fmt_flags, IK_VTD_FLAG_SP_1G);
	/* second-level dirty tracking needs scalable mode and SLADS */
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_SL, &caps, 57, IK_PT_QUIRK_DIRTY), 0);
	caps.ecap &= ~IK_VTD_ECAP_SLADS;
	memset(&c, 0x5a, sizeof(c));
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_SL, &caps, 57, IK_PT_QUIRK_DIRTY), -EOPNOTSUPP);
	ck_assert_uint_eq(c.ias, 0x5a5a5a5au);	/* untouched on error */
	caps.ecap &= ~IK_VTD_ECAP_SLTS;
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_SL, &caps, 57, 0), -EOPNOTSUPP);
	/* bad arguments */
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_LPAE_S1, &caps, 48, 0), -EINVAL);
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_FL, &caps, 57, 0), -EINVAL);
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_FL, &caps, 48, IK_PT_QUIRK_ARM_NS), -EINVAL);
	caps.haw = 53;
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_FL, &caps, 48, 0), -EINVAL);
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_FL, NULL, 48, 0), -EINVAL);
}
END_TEST

/* ------------------------------------------------------ walker vs reference */

static enum ik_pt_fault expected_fault(enum rw_fault f)
{
	switch (f) {
	case RW_OK: return IK_PT_FAULT_NONE;
	case RW_NOT_PRESENT: return IK_PT_FAULT_TRANSLATION;
	case RW_INPUT_RANGE: return IK_PT_FAULT_TRANSLATION;
	case RW_PERMISSION: return IK_PT_FAULT_PERMISSION;
	case RW_RESERVED: return IK_PT_FAULT_RESERVED;
	case RW_ADDR: return IK_PT_FAULT_ADDR_SIZE;
	}
	return IK_PT_FAULT_EXTERNAL;
}

static unsigned access_to_ref(unsigned access)
{
	unsigned a = 0;

	if (!access)
		return 0;	/* translate only */
	if (access & IK_ACCESS_READ)
		a |= RW_READ;
	if (access & IK_ACCESS_WRITE)
		a |= RW_WRITE;
	if (access & IK_ACCESS_EXEC)
		a |= RW_EXEC;
	if (!(access & IK_ACCESS_PRIV))
		a |= RW_USER;
	return a;
}

/* Walk `iova` with both walkers and compare everything the reference
 * knows. */
static void compare_walk(const struct ik_pt_walker *w, const struct rw_tables *t, uint64_t iova,
			 unsigned access)
{
	struct ik_pt_walk_result r;
	struct rw_result ref = rw_walk(t, iova, access_to_ref(access));

	IK_REQUIRE(ik_pt_walk(w, &ik_test_mem, iova, access, &r) == 0);
	IK_REQUIRE_MSG(r.fault == expected_fault(ref.fault),
		       "iova %#llx access %u: fault %d, reference %d", (unsigned long long)iova,
		       access, (int)r.fault, (int)ref.fault);
	if (ref.fault != RW_OK && ref.fault != RW_PERMISSION)
		return;
	IK_REQUIRE(r.oa == ref.pa);
	IK_REQUIRE(r.pgsize == ref.pgsize);
	IK_REQUIRE(r.pte == ref.leaf);
	IK_REQUIRE(!!(r.prot & IK_PROT_READ) == ref.r);
	IK_REQUIRE(!!(r.prot & IK_PROT_WRITE) == ref.w);
	IK_REQUIRE(!(r.prot & IK_PROT_NOEXEC) == ref.x);
	IK_REQUIRE(!(r.prot & IK_PROT_PRIV) == ref.user);
	if (t->sl)
		IK_REQUIRE(r.attr == (ref.snp ? 1u : 0u));
}

struct vcfg {
	const char *name;
	enum ik_pt_fmt fmt;
	unsigned ias, oas;
	ik_u64 flags;
};

static const struct vcfg vcfgs[] = {
	{ "sl3", IK_PT_VTD_SL, 39, 48, IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G | IK_VTD_FLAG_SC },
	{ "sl4", IK_PT_VTD_SL, 48, 48, IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SC },
	{ "sl5", IK_PT_VTD_SL, 57, 52, IK_VTD_FLAG_SP_1G },
	{ "fl4", IK_PT_VTD_FL, 47, 48, IK_VTD_FLAG_SP_1G },
	{ "fl5", IK_PT_VTD_FL, 56, 52, 0 },
};

static const unsigned prots[] = {
	IK_PROT_READ, IK_PROT_WRITE, RW, RW | IK_PROT_CACHE, IK_PROT_READ | IK_PROT_NOEXEC,
	RW | IK_PROT_PRIV, IK_PROT_READ | IK_PROT_MMIO, RW | IK_PROT_NOEXEC | IK_PROT_CACHE,
};

static const unsigned accesses[] = {
	0, IK_ACCESS_READ, IK_ACCESS_WRITE, IK_ACCESS_EXEC, IK_ACCESS_READ | IK_ACCESS_PRIV,
	IK_ACCESS_WRITE | IK_ACCESS_PRIV,
};

START_TEST(walker_agrees_with_the_reference_on_engine_tables)
{
	const struct vcfg *vc = &vcfgs[_i];
	struct tenv e = { 0 };
	struct ik_pgtable *pt = mkpt(vc->fmt, vc->ias, vc->oas, vc->flags, 0, true, &e);
	struct ik_pt_walker w;
	struct rw_tables t = ref_of(pt);
	struct ik_rng rng = { 0x5eed0000u + (uint64_t)_i };
	/* a 4 GiB window near the top of the input space */
	const uint64_t base = ((1ull << vc->ias) - 4 * SZ_1G);
	long ops = ik_test_iters(400);
	struct ik_gather g;

	ik_pgtable_walker(pt, &w);
	for (long i = 0; i < ops; i++) {
		uint64_t sz = SZ_4K << ik_rng_below(&rng, 11);
		uint64_t iova = base + (ik_rng_below(&rng, 4 * SZ_1G / SZ_4K) << 12);
		uint64_t pa = ik_rng_below(&rng, (1ull << vc->oas) / SZ_4K) << 12;

		if (ik_rng_below(&rng, 4) == 0)	/* superpage-friendly */
			pa = IK_ALIGN_DOWN(pa, SZ_1G) | (iova & (SZ_1G - 1));
		if (ik_rng_below(&rng, 8) == 0) {
			iova = IK_ALIGN_DOWN(iova, SZ_1G);
			pa = IK_ALIGN_DOWN(pa, SZ_1G);
			sz = SZ_1G;
		}
		if (iova + sz > base + 4 * SZ_1G || pa + sz > (1ull << vc->oas))
			continue;
		if (ik_rng_below(&rng, 3) == 0) {
			ik_gather_init(&g);
			IK_REQUIRE(ik_pgtable_unmap(pt, iova, sz, &g) >= 0);
			ik_pgtable_gather_sync(pt, &g);
		} else {
			int rc = ik_pgtable_map(pt, iova, pa, sz, prots[ik_rng_below(&rng, 8)]);

			IK_REQUIRE(rc == 0 || rc == -EEXIST);
		}
	}
	for (long i = 0; i < ops * 20; i++) {
		uint64_t iova = base + ik_rng_below(&rng, 4 * SZ_1G);

		if (i % 97 == 0)	/* beyond ias, and the bottom of the space */
			iova = i % 2 ? (1ull << vc->ias) + iova : ik_rng_below(&rng, SZ_1G);
		compare_walk(&w, &t, iova, accesses[ik_rng_below(&rng, 6)]);
	}
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.tables.allocs, e.tables.frees);
}
END_TEST

/*
 * Hand-built "guest" tables, reached through a context or PASID entry as an
 * emulator would: one path per fault kind, plus good 4K / 2M / 1G leaves.
 */
struct guest_case {
	uint64_t iova;
	unsigned access;
	enum ik_pt_fault f;
};

/* Walk each case with w (the library's walker of the 4-level guest tables at
 * root) and expect its fault; the reference walker, at an offset `off` into
 * the page, agrees. */
static void guest_cases(const struct ik_pt_walker *w, uint64_t root, unsigned haw, bool sl,
			const struct guest_case *cases, size_t n, uint64_t off)
{
	struct ik_pt_walk_result r;
	struct rw_tables t;

	memset(&t, 0, sizeof(t));
	t.table_at = ref_table_at;
	t.root = root;
	t.levels = 4;
	t.haw = haw;
	t.sl = sl;
	t.big2m = true;
	t.nxe = true;
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(ik_pt_walk(w, &ik_test_mem, cases[i].iova, cases[i].access,
					    &r), 0);
		ck_assert_msg(r.fault == cases[i].f, "case %zu: fault %d, expected %d", i,
			      (int)r.fault, (int)cases[i].f);
		compare_walk(w, &t, cases[i].iova | off, cases[i].access);
	}
}

START_TEST(walker_decodes_guest_sl_tables_and_their_faults)
{
	struct ik_test_pages gs = { 0 };
	uint64_t *l3 = ik_test_page(&gs), *l2 = ik_test_page(&gs), *l1 = ik_test_page(&gs);
	uint64_t *l0 = ik_test_page(&gs);
	const unsigned haw = 48;	/* heap addresses fit */
	uint64_t ctx[2] = { ik_test_addr(l3) | 1, 2 /* AW 48-bit */ | (5u << 8) };
	struct ik_pt_walker w;
	struct ik_pt_walk_result r;
	/* iova = (i3, i2, i1, i0) indices */
#define IOVA(a, b, c, d) (((uint64_t)(a) << 39) | ((uint64_t)(b) << 30) | ((uint64_t)(c) << 21) | \
			  ((uint64_t)(d) << 12))
	static const struct guest_case cases[] = {
		{ IOVA(0, 0, 0, 1), IK_ACCESS_WRITE, IK_PT_FAULT_NONE },	/* RW 4K */
		{ IOVA(0, 0, 0, 2), IK_ACCESS_READ, IK_PT_FAULT_NONE },		/* R 4K */
		{ IOVA(0, 0, 0, 2), IK_ACCESS_WRITE, IK_PT_FAULT_PERMISSION },
		{ IOVA(0, 0, 0, 3), IK_ACCESS_READ, IK_PT_FAULT_PERMISSION },	/* W-only */
		{ IOVA(0, 0, 0, 4), 0, IK_PT_FAULT_TRANSLATION },		/* empty */
		{ IOVA(0, 0, 0, 5), 0, IK_PT_FAULT_TRANSLATION },		/* R=W=0, ignored bits set */
		{ IOVA(0, 0, 0, 6), 0, IK_PT_FAULT_RESERVED },			/* bit 62 */
		{ IOVA(0, 0, 0, 7), 0, IK_PT_FAULT_ADDR_SIZE },			/* address >= HAW */
		{ IOVA(0, 0, 0, 8), IK_ACCESS_WRITE, IK_PT_FAULT_NONE },	/* ignored bits */
		{ IOVA(0, 0, 2, 0), IK_ACCESS_READ, IK_PT_FAULT_NONE },		/* 2M leaf */
		{ IOVA(0, 0, 3, 0), 0, IK_PT_FAULT_RESERVED },			/* 2M, bit 12 set */
		{ IOVA(0, 1, 0, 0), 0, IK_PT_FAULT_RESERVED },			/* 1G, no SP_1G */
		{ IOVA(1, 0, 0, 0), 0, IK_PT_FAULT_RESERVED },			/* PS in a PML4E */
		{ IOVA(0, 2, 0, 1), IK_ACCESS_WRITE, IK_PT_FAULT_PERMISSION },	/* R-only table */
		{ IOVA(0, 3, 0, 0), 0, IK_PT_FAULT_ADDR_SIZE },			/* table ptr >= HAW */
		{ IOVA(0, 0, 0, 9), IK_ACCESS_EXEC, IK_PT_FAULT_PERMISSION },	/* no execute */
		{ 1ull << 48, 0, IK_PT_FAULT_TRANSLATION },			/* beyond AGAW */
	};

	l3[0] = ik_test_addr(l2) | 3;
	l3[1] = ik_test_addr(l2) | 3 | 0x80;
	l2[0] = ik_test_addr(l1) | 3;
	l2[1] = 0x40000000ull | 3 | 0x80;
	l2[2] = ik_test_addr(l1) | 1;
	l2[3] = (1ull << 50) | 3;
	l1[0] = ik_test_addr(l0) | 3;
	l1[2] = 0x600000ull | 1 | 0x80;
	l1[3] = 0x800000ull | 0x1000 | 1 | 0x80;
	l0[1] = 0x1000ull | 3 | 0x800;
	l0[2] = 0x2000ull | 1;
	l0[3] = 0x3000ull | 2;
	l0[5] = 0x5000ull | 0x400 | (0x3ffull << 52) | (1ull << 63);
	l0[6] = 0x6000ull | 3 | (1ull << 62);
	l0[7] = (1ull << haw) | 3;
	l0[8] = 0x8000ull | 3 | 0x400 | (0x3ffull << 52) | (1ull << 63);
	l0[9] = 0x9000ull | 3;
	/* l2[0] path also leads to l1[0..3] through l2[2] (read-only table) */

	ck_assert_int_eq(ik_vtd_walker_from_context(&w, ctx, IK_VTD_FLAG_SP_2M, haw), 0);
	guest_cases(&w, ik_test_addr(l3), haw, true, cases, IK_ARRAY_SIZE(cases), 0x123);
	/* details of the good leaves */
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, IOVA(0, 0, 0, 1) | 0x10, IK_ACCESS_WRITE,
				    &r), 0);
	ck_assert_uint_eq(r.oa, 0x1010);
	ck_assert_uint_eq(r.attr, 1);	/* SNP */
	ck_assert_uint_eq(r.level, 0);
	ck_assert_uint_eq(r.pte_addr, ik_test_addr(&l0[1]));
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, IOVA(0, 0, 2, 7) | 0x10, IK_ACCESS_READ,
				    &r), 0);
	ck_assert_uint_eq(r.oa, 0x600000ull + 0x7010);
	ck_assert_uint_eq(r.pgsize, SZ_2M);
	ck_assert_uint_eq(r.level, 1);
	ck_assert_uint_eq(r.prot & RW, IK_PROT_READ);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, IOVA(0, 0, 0, 8), IK_ACCESS_WRITE, &r), 0);
	ck_assert_uint_eq(r.oa, 0x8000);
	/* with SP_1G the 1G leaf translates */
	ck_assert_int_eq(ik_vtd_walker_from_context(&w, ctx, IK_VTD_FLAG_SP_1G, haw), 0);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, IOVA(0, 1, 0, 5), IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
	ck_assert_uint_eq(r.oa, 0x40005000ull);
	ck_assert_uint_eq(r.pgsize, SZ_1G);
	/* ... but then 2M leaves are reserved */
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, IOVA(0, 0, 2, 0), 0, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_RESERVED);
	/* bad context entries */
	ctx[0] &= ~1ull;
	ck_assert_int_eq(ik_vtd_walker_from_context(&w, ctx, 0, haw), -EINVAL);
	ctx[0] |= 1 | (2u << 2);	/* TT pass-through */
	ck_assert_int_eq(ik_vtd_walker_from_context(&w, ctx, 0, haw), -EINVAL);
	ctx[0] &= ~(3ull << 2);
	ctx[1] = 4;	/* reserved AW */
	ck_assert_int_eq(ik_vtd_walker_from_context(&w, ctx, 0, haw), -EINVAL);
	ctx[1] = 0;
	ck_assert_int_eq(ik_vtd_walker_from_context(&w, ctx, 0, haw), -EINVAL);
	ik_test_pages_free(&gs);
#undef IOVA
}
END_TEST

START_TEST(walker_decodes_guest_fl_tables_and_their_faults)
{
	struct ik_test_pages gs = { 0 };
	uint64_t *l3 = ik_test_page(&gs), *l2 = ik_test_page(&gs), *l1 = ik_test_page(&gs);
	uint64_t *l0 = ik_test_page(&gs);
	const unsigned haw = 48;
	uint64_t pe[8] = { 1 | (2u << 2) | (1u << 6), 9, ik_test_addr(l3) | (1u << 5),
			   0, 0, 0, 0, 0 };
	const uint64_t P = 1, W = 2, US = 4, PWT = 8, PCD = 16, A = 32, D = 64, PS = 128;
	const uint64_t XD = 1ull << 63, TBL = P | W | US | A;
	struct ik_pt_walker w;
	struct ik_pt_walk_result r;
#define IOVA(a, b, c, d) (((uint64_t)(a) << 39) | ((uint64_t)(b) << 30) | ((uint64_t)(c) << 21) | \
			  ((uint64_t)(d) << 12))
	static const struct guest_case cases[] = {
		{ IOVA(0, 0, 0, 1), IK_ACCESS_WRITE, IK_PT_FAULT_NONE },
		{ IOVA(0, 0, 0, 2), IK_ACCESS_READ, IK_PT_FAULT_NONE },		/* read-only */
		{ IOVA(0, 0, 0, 2), IK_ACCESS_WRITE, IK_PT_FAULT_PERMISSION },
		{ IOVA(0, 0, 0, 3), IK_ACCESS_READ, IK_PT_FAULT_PERMISSION },	/* supervisor */
		{ IOVA(0, 0, 0, 3), IK_ACCESS_READ | IK_ACCESS_PRIV, IK_PT_FAULT_NONE },
		{ IOVA(0, 0, 0, 4), IK_ACCESS_EXEC, IK_PT_FAULT_PERMISSION },	/* XD */
		{ IOVA(0, 0, 0, 1), IK_ACCESS_EXEC, IK_PT_FAULT_NONE },
		{ IOVA(0, 0, 0, 5), 0, IK_PT_FAULT_TRANSLATION },		/* P = 0 */
		{ IOVA(0, 0, 0, 6), 0, IK_PT_FAULT_ADDR_SIZE },
		{ IOVA(0, 0, 0, 7), IK_ACCESS_READ, IK_PT_FAULT_NONE },		/* PAT, ignored bits */
		{ IOVA(0, 0, 1, 0), IK_ACCESS_READ, IK_PT_FAULT_NONE },		/* 2M, PAT bit 12 */
		{ IOVA(0, 0, 2, 0), 0, IK_PT_FAULT_RESERVED },			/* 2M, bit 13 */
		{ IOVA(0, 1, 0, 0), 0, IK_PT_FAULT_RESERVED },			/* 1G, no FL1GP */
		{ IOVA(1, 0, 0, 0), 0, IK_PT_FAULT_RESERVED },			/* PS in PML4E */
		{ IOVA(0, 2, 0, 1), IK_ACCESS_READ, IK_PT_FAULT_PERMISSION },	/* U/S=0 table */
		{ IOVA(0, 3, 0, 1), IK_ACCESS_WRITE, IK_PT_FAULT_PERMISSION },	/* R/W=0 table */
		{ IOVA(0, 4, 0, 1), IK_ACCESS_EXEC, IK_PT_FAULT_PERMISSION },	/* XD table */
		{ 1ull << 47, 0, IK_PT_FAULT_TRANSLATION },			/* upper half */
	};

	l3[0] = ik_test_addr(l2) | TBL;
	l3[1] = ik_test_addr(l2) | TBL | PS;
	l2[0] = ik_test_addr(l1) | TBL;
	l2[1] = 0x40000000ull | TBL | PS;
	l2[2] = ik_test_addr(l1) | P | W | A;
	l2[3] = ik_test_addr(l1) | P | US | A;
	l2[4] = ik_test_addr(l1) | TBL | XD;
	l1[0] = ik_test_addr(l0) | TBL;
	l1[1] = 0x200000ull | P | US | A | PS | (1ull << 12);
	l1[2] = 0x400000ull | P | US | A | PS | (1ull << 13);
	l0[1] = 0x1000ull | P | W | US | A | D;
	l0[2] = 0x2000ull | P | US | A;
	l0[3] = 0x3000ull | P | W | A | D;
	l0[4] = 0x4000ull | P | W | US | A | D | XD;
	l0[5] = 0x5000ull | W | US | A | D;
	l0[6] = (1ull << haw) | P | US;
	l0[7] = 0x7000ull | P | US | PWT | PCD | 0x80 /* PAT */ | (0x7ull << 9) | (0x7ffull << 52);

	ck_assert_int_eq(ik_vtd_walker_from_pasid(&w, pe, 0, haw), 0);
	guest_cases(&w, ik_test_addr(l3), haw, false, cases, IK_ARRAY_SIZE(cases), 0x321);
	/* memory type: PAT index = PWT | PCD << 1 | PAT << 2 */
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, IOVA(0, 0, 0, 7), 0, &r), 0);
	ck_assert_uint_eq(r.attr, 7);
	ck_assert(r.prot & IK_PROT_MMIO);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, IOVA(0, 0, 1, 3), 0, &r), 0);
	ck_assert_uint_eq(r.attr, 4);
	ck_assert_uint_eq(r.oa, 0x203000ull);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, IOVA(0, 0, 0, 1), 0, &r), 0);
	ck_assert_uint_eq(r.attr, 0);
	ck_assert(r.prot & IK_PROT_CACHE);
	/* with FL1GP the 1G page translates */
	ck_assert_int_eq(ik_vtd_walker_from_pasid(&w, pe, IK_VTD_FLAG_SP_1G, haw), 0);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, IOVA(0, 1, 3, 4), IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
	ck_assert_uint_eq(r.oa, 0x40000000ull + IOVA(0, 0, 3, 4));
	/* bad PASID entries: not present, nested, reserved FLPM */
	pe[0] &= ~1ull;
	ck_assert_int_eq(ik_vtd_walker_from_pasid(&w, pe, 0, haw), -EINVAL);
	pe[0] = 1 | (3u << 6);
	ck_assert_int_eq(ik_vtd_walker_from_pasid(&w, pe, 0, haw), -EINVAL);
	pe[0] = 1 | (1u << 6);
	pe[2] |= 2u << 2;
	ck_assert_int_eq(ik_vtd_walker_from_pasid(&w, pe, 0, haw), -EINVAL);
	/* second-level PASID entries with a reserved AW */
	pe[0] = ik_test_addr(l3) | 1 | (2u << 6);
	ck_assert_int_eq(ik_vtd_walker_from_pasid(&w, pe, 0, haw), -EINVAL);
	pe[0] |= 4u << 2;
	ck_assert_int_eq(ik_vtd_walker_from_pasid(&w, pe, 0, haw), -EINVAL);
	pe[0] = ik_test_addr(l3) | 1 | (2u << 6) | (2u << 2);
	ck_assert_int_eq(ik_vtd_walker_from_pasid(&w, pe, 0, haw), 0);
	ck_assert_int_eq(ik_vtd_walker_from_pasid(NULL, pe, 0, haw), -EINVAL);
	ck_assert_int_eq(ik_vtd_walker_from_context(&w, NULL, 0, haw), -EINVAL);
	ik_test_pages_free(&gs);
#undef IOVA
}
END_TEST

START_TEST(walkers_from_programmed_entries_match_the_engine_walker)
{
	for (size_t i = 0; i < sizeof(vcfgs) / sizeof(vcfgs[0]); i++) {
		const struct vcfg *vc = &vcfgs[i];
		struct tenv e = { 0 };
		struct ik_pgtable *pt = mkpt(vc->fmt, vc->ias, vc->oas, vc->flags, 0, true, &e);
		struct ik_pt_walker a, b, c;
		struct ik_pt_walk_result ra, rb;
		struct ik_vtd_regs regs;

		ck_assert_int_eq(ik_pgtable_map(pt, 0x40000000ull, 0x7fe00000ull, 3 * SZ_2M, RW), 0);
		ck_assert_int_eq(ik_pgtable_map(pt, 0x1000ull, 0x5000ull, 5 * SZ_4K, IK_PROT_READ), 0);
		ck_assert_int_eq(ik_vtd_get_regs(pt, 1, &regs), 0);
		ik_pgtable_walker(pt, &a);
		ck_assert_int_eq(ik_vtd_walker_from_pasid(&b, regs.pasid, vc->flags, vc->oas), 0);
		if (vc->fmt == IK_PT_VTD_SL)
			ck_assert_int_eq(ik_vtd_walker_from_context(&c, regs.context, vc->flags, vc->oas), 0);
		else
			c = b;
		for (uint64_t iova = 0; iova < 0x40800000ull; iova += 0x3f000ull) {
			for (int k = 0; k < 2; k++) {
				const struct ik_pt_walker *x = k ? &c : &b;

				ck_assert_int_eq(ik_pt_walk(&a, &ik_test_mem, iova, IK_ACCESS_READ,
							    &ra), 0);
				ck_assert_int_eq(ik_pt_walk(x, &ik_test_mem, iova, IK_ACCESS_READ,
							    &rb), 0);
				ck_assert_int_eq(ra.fault, rb.fault);
				ck_assert_uint_eq(ra.oa, rb.oa);
				ck_assert_uint_eq(ra.prot, rb.prot);
				ck_assert_uint_eq(ra.pte_addr, rb.pte_addr);
			}
		}
		ik_pgtable_destroy(pt);
	}
}
END_TEST

/* ------------------------------------------------------------ A/D bits */

START_TEST(sl_dirty_tracking_uses_the_d_bit_under_ssads)
{
	struct tenv e = { 0 };
	struct ik_pgtable *pt = mkpt(IK_PT_VTD_SL, 48, 48, IK_VTD_FLAG_SP_2M, IK_PT_QUIRK_DIRTY, true, &e);
	const uint64_t base = 0x10000000ull;
	uint64_t bm[16];
	struct ik_pt_walker w;
	struct ik_pt_walk_result r;

	ck_assert_int_eq(ik_pgtable_map(pt, base, 0x20000000ull, 16 * SZ_4K, RW), 0);
	ck_assert_int_eq(ik_pgtable_map(pt, base + SZ_2M, 0x40000000ull, SZ_2M, RW), 0);
	ck_assert_uint_eq(*raw_entry(pt, base + 3 * SZ_4K, 0) & 0x300, 0);	/* A, D clear */
	ik_pgtable_walker(pt, &w);
	/* device writes pages 3 and 5 and inside the 2M page, reads page 7 */
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, base + 3 * SZ_4K, IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, base + 5 * SZ_4K + 8, IK_ACCESS_WRITE,
				    &r), 0);
	ck_assert(r.dirty);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, base + 7 * SZ_4K, IK_ACCESS_READ, &r), 0);
	ck_assert(!r.dirty);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, base + SZ_2M + 0x1234, IK_ACCESS_WRITE,
				    &r), 0);
	/* A bit 8 and D bit 9, as the unit sets them */
	ck_assert_uint_eq(*raw_entry(pt, base + 3 * SZ_4K, 0) & 0x300, 0x300);
	ck_assert_uint_eq(*raw_entry(pt, base + 7 * SZ_4K, 0) & 0x300, 0x100);
	ck_assert_uint_eq(*raw_entry(pt, base + SZ_2M, 1) & 0x300, 0x300);

	memset(bm, 0, sizeof(bm));
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(pt, base, 2 * SZ_2M, IK_DIRTY_NO_CLEAR, bm, 12,
							 NULL), 3);
	ck_assert_uint_eq(bm[0], (1ull << 3) | (1ull << 5));
	for (int k = 8; k < 16; k++)
		ck_assert_uint_eq(bm[k], ~0ull);
	memset(bm, 0, sizeof(bm));
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(pt, base, 2 * SZ_2M, 0, bm, 12, NULL), 3);
	ck_assert_uint_eq(bm[0], (1ull << 3) | (1ull << 5));
	/* D cleared, A and the rest of the entry kept */
	ck_assert_uint_eq(*raw_entry(pt, base + 3 * SZ_4K, 0), 0x20003000ull | 0x3 | 0x100);
	memset(bm, 0, sizeof(bm));
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(pt, base, 2 * SZ_2M, 0, bm, 12, NULL), 0);
	ck_assert_uint_eq(bm[0], 0);
	ik_pgtable_destroy(pt);

	/* without SSADS the unit leaves A/D alone and tracking is refused */
	pt = mkpt(IK_PT_VTD_SL, 48, 48, 0, 0, true, &e);
	ck_assert_int_eq(ik_pgtable_map(pt, base, 0x20000000ull, SZ_4K, RW), 0);
	ik_pgtable_walker(pt, &w);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, base, IK_ACCESS_WRITE, &r), 0);
	ck_assert_uint_eq(*raw_entry(pt, base, 0), 0x20000000ull | 0x3);
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(pt, base, SZ_4K, 0, bm, 12, NULL), -EOPNOTSUPP);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.tables.allocs, e.tables.frees);
}
END_TEST

START_TEST(fl_presets_a_and_d_so_the_unit_never_updates_entries)
{
	struct tenv e = { 0 };
	struct ik_pgtable *pt = mkpt(IK_PT_VTD_FL, 47, 48, 0, 0, true, &e);
	struct ik_pt_walker w;
	struct ik_pt_walk_result r;
	uint64_t before, bm[1] = { 0 };

	ck_assert_int_eq(ik_pgtable_map(pt, 0x8000, 0x9000, SZ_4K, RW), 0);
	ck_assert_int_eq(ik_pgtable_map(pt, 0xa000, 0xb000, SZ_4K, IK_PROT_READ), 0);
	ik_pgtable_walker(pt, &w);
	before = *raw_entry(pt, 0x8000, 0);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, 0x8000, IK_ACCESS_WRITE, &r), 0);
	ck_assert_uint_eq(*raw_entry(pt, 0x8000, 0), before);
	before = *raw_entry(pt, 0xa000, 0);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, 0xa000, IK_ACCESS_READ, &r), 0);
	ck_assert_uint_eq(*raw_entry(pt, 0xa000, 0), before);
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(pt, 0, 0x10000, 0, bm, 12, NULL), -EOPNOTSUPP);
	ik_pgtable_destroy(pt);

	/* with tracking, the unit sets D on the first write */
	pt = mkpt(IK_PT_VTD_FL, 47, 48, 0, IK_PT_QUIRK_DIRTY, true, &e);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x8000, 0x9000, 2 * SZ_4K, RW), 0);
	ik_pgtable_walker(pt, &w);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, 0x9000, IK_ACCESS_WRITE, &r), 0);
	ck_assert_uint_eq(*raw_entry(pt, 0x9000, 0) & 0x60, 0x60);
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(pt, 0, 0x10000, 0, bm, 12, NULL), 1);
	ck_assert_uint_eq(bm[0], 1ull << 9);
	ck_assert_uint_eq(*raw_entry(pt, 0x9000, 0) & 0x60, 0x20);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.tables.allocs, e.tables.frees);
}
END_TEST

/* ------------------------------------------------------ non-coherent walks */

START_TEST(noncoherent_cleans_one_run_per_table_page_in_both_schemes)
{
	for (int defer = 0; defer < 2; defer++) {
		struct tenv e = { 0 };
		struct ik_pgtable *pt = mkpt(IK_PT_VTD_SL, 48, 48, IK_VTD_FLAG_SP_2M, defer ?
					     IK_PT_QUIRK_DEFER_LEAF_CLEAN : 0, false, &e);
		const uint64_t base = 0x40000000ull;
		struct ik_gather g;
		struct ik_pgtable_stats st;

		/* tables for [base, base + 4M) exist: map then unmap one page
		 * in each 2M (tables left empty by a partial unmap stay) */
		ck_assert_int_eq(ik_pgtable_map(pt, base, 0x1000, SZ_4K, RW), 0);
		ck_assert_int_eq(ik_pgtable_map(pt, base + SZ_2M, 0x1000, SZ_4K, RW), 0);
		ik_gather_init(&g);
		ck_assert_int_eq(ik_pgtable_unmap(pt, base, SZ_4K, &g), (ik_s64)SZ_4K);
		ck_assert_int_eq(ik_pgtable_unmap(pt, base + SZ_2M, SZ_4K, &g), (ik_s64)SZ_4K);
		ik_pgtable_gather_sync(pt, &g);

		/* 256 x 4K inside one table: one clean of 2 KiB, one sync */
		reset_counts(&e);
		ck_assert_int_eq(ik_pgtable_map(pt, base + 0x10000, 0x100001000ull, 256 * SZ_4K, RW), 0);
		ck_assert_int_eq(e.cleans, 1);
		ck_assert_int_eq(e.clean_bytes, 2048);
		ck_assert_int_eq(e.syncs, 1);
		ck_assert_uint_eq(e.sync_iova, base + 0x10000);
		ck_assert_uint_eq(e.sync_size, 256 * SZ_4K);
		reset_counts(&e);
		ik_gather_init(&g);
		ck_assert_int_eq(ik_pgtable_unmap(pt, base + 0x10000, 256 * SZ_4K, &g), (ik_s64)(256 * SZ_4K));
		ck_assert_int_eq(e.cleans, 1);
		ck_assert_int_eq(e.clean_bytes, 2048);
		ck_assert_uint_eq(g.nr_ranges, 1);
		ik_pgtable_gather_sync(pt, &g);

		/* 6 MiB of 4K pages over three leaf tables: three cleans of
		 * 4 KiB.  At write time, the first table's run is cleaned before
		 * the request has written its last leaf; deferred, every clean
		 * comes after all the request's leaves are written. */
		ck_assert_int_eq(ik_pgtable_map(pt, base + 2 * SZ_2M, 0x1000, SZ_4K, RW), 0);
		ik_gather_init(&g);
		ck_assert_int_eq(ik_pgtable_unmap(pt, base + 2 * SZ_2M, SZ_4K, &g), (ik_s64)SZ_4K);
		ik_pgtable_gather_sync(pt, &g);
		reset_counts(&e);
		e.probe = raw_entry(pt, base + 3 * SZ_2M - SZ_4K, 0);
		ck_assert_ptr_nonnull(e.probe);
		ck_assert_int_eq(ik_pgtable_map(pt, base, 0x100001000ull, 3 * SZ_2M, RW), 0);
		ck_assert_int_eq(e.cleans, 3);
		ck_assert_int_eq(e.clean_bytes, 3 * 4096);
		ck_assert_int_eq(e.syncs, 1);
		if (defer)
			ck_assert_int_eq(e.cleans_seeing_probe, 3);
		else
			ck_assert_int_ge(e.cleans_before_probe, 1);
		e.probe = NULL;

		/* whole-table unmap: one 8-byte clean of the table entry; the
		 * table is freed only by the gather sync */
		reset_counts(&e);
		ik_pgtable_get_stats(pt, &st);
		{
			ik_u64 freed = st.tables_freed, cached = st.cache_pages;
			long frees = e.tables.frees;

			ik_gather_init(&g);
			ck_assert_int_eq(ik_pgtable_unmap(pt, base, SZ_2M, &g), (ik_s64)SZ_2M);
			ck_assert_int_eq(e.cleans, 1);
			ck_assert_int_eq(e.clean_bytes, 8);
			ck_assert(g.walk);
			ck_assert_uint_eq(g.nr_tables, 1);
			ik_pgtable_get_stats(pt, &st);
			ck_assert_uint_eq(st.tables_freed, freed);
			ck_assert_uint_eq(st.cache_pages, cached);
			ck_assert_int_eq(e.tables.frees, frees);
			ik_pgtable_gather_sync(pt, &g);
			ik_pgtable_get_stats(pt, &st);
			ck_assert_uint_eq((st.tables_freed - freed) + (st.cache_pages - cached), 1);
		}
		ik_pgtable_destroy(pt);
		ck_assert_int_eq(e.tables.allocs, e.tables.frees);
	}
}
END_TEST

/*
 * The pointer-argument rule of <iommukit/env.h> for the VT-d helpers: each
 * one, given NULL in one pointer position at a time (everything else valid),
 * answers -EINVAL and writes nothing; the table set it is asked about is
 * left as it was (same mapping, same entries, no hook called).
 */
START_TEST(null_pointer_arguments_are_einval)
{
	struct tenv e = { 0 };
	struct ik_pgtable *pt = mkpt(IK_PT_VTD_SL, 48, 48, 0, 0, false, &e);
	struct ik_pgtable_cfg c, c0;
	struct ik_vtd_caps caps;
	struct ik_vtd_regs r, r0;
	struct ik_pt_walker w, w0;
	struct ik_pgtable_stats st0, st1;
	uint64_t *leaf, leaf0, pa = 0;

	ck_assert_int_eq(ik_pgtable_map(pt, 0x40000000, 0x80000000, SZ_4K, RW), 0);
	ck_assert_int_eq(ik_vtd_get_regs(pt, 9, &r), 0);
	leaf = raw_entry(pt, 0x40000000, 0);
	ck_assert_ptr_nonnull(leaf);
	leaf0 = *leaf;
	ik_pgtable_get_stats(pt, &st0);
	reset_counts(&e);
	memset(&caps, 0, sizeof(caps));
	caps.cap = CAP_SAGAW(0x4) | CAP_MGAW(48);
	caps.haw = 48;
	memset(&c, 0x5a, sizeof(c));
	memcpy(&c0, &c, sizeof(c));
	memset(&w, 0x5a, sizeof(w));
	memcpy(&w0, &w, sizeof(w));
	memcpy(&r0, &r, sizeof(r));

	ck_assert_int_eq(ik_vtd_cfg_init(NULL, IK_PT_VTD_SL, &caps, 48, 0), -EINVAL);
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_SL, NULL, 48, 0), -EINVAL);
	ck_assert_int_eq(ik_vtd_get_regs(NULL, 9, &r), -EINVAL);
	ck_assert_int_eq(ik_vtd_get_regs(pt, 9, NULL), -EINVAL);
	ck_assert_int_eq(ik_vtd_walker_from_context(NULL, r.context, 0, 48), -EINVAL);
	ck_assert_int_eq(ik_vtd_walker_from_context(&w, NULL, 0, 48), -EINVAL);
	ck_assert_int_eq(ik_vtd_walker_from_pasid(NULL, r.pasid, 0, 48), -EINVAL);
	ck_assert_int_eq(ik_vtd_walker_from_pasid(&w, NULL, 0, 48), -EINVAL);

	ck_assert(memcmp(&c, &c0, sizeof(c)) == 0);
	ck_assert(memcmp(&w, &w0, sizeof(w)) == 0);
	ck_assert(memcmp(&r, &r0, sizeof(r)) == 0);
	ck_assert_uint_eq(*leaf, leaf0);
	ik_pgtable_get_stats(pt, &st1);
	ck_assert(memcmp(&st0, &st1, sizeof(st0)) == 0);
	ck_assert(e.cleans == 0 && e.syncs == 0);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(pt, 0x40000000, &pa, NULL), 0);
	ck_assert_uint_eq(pa, 0x80000000);
	/* the same values with nothing NULL do work */
	ck_assert_int_eq(ik_vtd_cfg_init(&c, IK_PT_VTD_SL, &caps, 48, 0), 0);
	ck_assert_int_eq(ik_vtd_walker_from_context(&w, r.context, 0, 48), 0);
	ck_assert_int_eq(ik_vtd_walker_from_pasid(&w, r.pasid, 0, 48), 0);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.tables.allocs, e.tables.frees);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("pgtable-vtd");
	TCase *tc = tcase_create("vtd");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, sl_leaf_and_table_entries_match_the_spec_layout);
	tcase_add_test(tc, sl_superpages_set_ps_and_keep_low_address_bits_clear);
	tcase_add_test(tc, sl_superpages_are_gated_by_the_sllps_flags);
	tcase_add_test(tc, fl_leaf_and_table_entries_match_the_x86_layout);
	tcase_add_test(tc, levels_follow_ias_and_bad_configs_are_refused);
	tcase_add_test(tc, context_and_pasid_entries_are_computed_bit_by_bit);
	tcase_add_test(tc, config_is_derived_from_cap_and_ecap);
	tcase_add_loop_test(tc, walker_agrees_with_the_reference_on_engine_tables, 0,
			    (int)(sizeof(vcfgs) / sizeof(vcfgs[0])));
	tcase_add_test(tc, walker_decodes_guest_sl_tables_and_their_faults);
	tcase_add_test(tc, walker_decodes_guest_fl_tables_and_their_faults);
	tcase_add_test(tc, walkers_from_programmed_entries_match_the_engine_walker);
	tcase_add_test(tc, sl_dirty_tracking_uses_the_d_bit_under_ssads);
	tcase_add_test(tc, fl_presets_a_and_d_so_the_unit_never_updates_entries);
	tcase_add_test(tc, noncoherent_cleans_one_run_per_table_page_in_both_schemes);
	tcase_add_test(tc, null_pointer_arguments_are_einval);
	suite_add_tcase(s, tc);
	return s;
}
