/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * pgtable, RISC-V IOMMU formats: what the generic suite (tests/test_pgtable.c)
 * cannot know.  Entries checked bit by bit against the privileged
 * specification's PTE layout; the 16 KiB G-stage root and its extra index
 * bits; engine-built tables translated by a reference walker written from
 * the specification (tests/riscv_refwalk.h) and compared with what was
 * requested, permissions included; hand-built entries with every fault
 * decoded alike by the library's walker and the reference; A/D presetting
 * and dirty tracking; the atp helpers; bad input refused with nothing
 * changed.
 */
#include <stdlib.h>
#include <string.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/riscv.h>
#include "testlib.h"
#include "riscv_refwalk.h"

#define SZ_4K 0x1000ull
#define SZ_16K 0x4000ull
#define SZ_2M 0x200000ull
#define SZ_1G 0x40000000ull
#define SZ_512G 0x8000000000ull
#define ALL_SIZES (SZ_4K | SZ_2M | SZ_1G | SZ_512G | (1ull << 48))
#define RW (IK_PROT_READ | IK_PROT_WRITE)
#define S1 IK_PT_RISCV_S1
#define S2 IK_PT_RISCV_S2

/* ------------------------------------------------------------ test memory */

/* Table pages: testlib's identity table memory (struct ik_test_tables,
 * ik_test_mem), IOMMU address = CPU address, so that both walkers follow
 * table pointers directly. */
static struct ik_pgtable_cfg mkcfg(enum ik_pt_fmt fmt, unsigned ias, unsigned oas, ik_u64 flags,
				   ik_u32 quirks, struct ik_test_tables *e)
{
	return ik_test_cfg(fmt, ias, oas, ALL_SIZES, quirks, flags, true, &ik_test_tables_hooks, e);
}

static struct ik_pgtable *mkpt(enum ik_pt_fmt fmt, unsigned ias, unsigned oas, ik_u64 flags,
			       ik_u32 quirks, struct ik_test_tables *e)
{
	struct ik_pgtable_cfg c = mkcfg(fmt, ias, oas, flags, quirks, e);

	return ik_test_pt_create(&c);
}

static bool ref_read(void *ctx, uint64_t pa, uint64_t *val)
{
	(void)ctx;
	*val = __atomic_load_n((const uint64_t *)(uintptr_t)pa, __ATOMIC_RELAXED);
	return true;
}

static void ref_write(void *ctx, uint64_t pa, uint64_t val)
{
	(void)ctx;
	__atomic_store_n((uint64_t *)(uintptr_t)pa, val, __ATOMIC_RELAXED);
}

static struct rv_tables ref_of(const struct ik_pgtable *pt)
{
	struct ik_pgtable_info info;
	struct rv_tables t;

	ik_pgtable_get_info(pt, &info);
	memset(&t, 0, sizeof(t));
	t.read = ref_read;
	t.write = ref_write;
	t.root = info.root_iommu;
	t.levels = info.geom.nlevels;
	t.gstage = info.geom.fmt == S2;
	t.pa_bits = info.geom.oas;
	t.sum = (info.geom.fmt_flags & IK_RISCV_FLAG_SUM) != 0;
	t.ade = (info.geom.quirks & IK_PT_QUIRK_DIRTY) != 0;
	return t;
}

/* The table a non-leaf entry points to, by the test's own decoding of the
 * PPN (0: not valid, or a leaf). */
static uint64_t next_table(uint64_t e)
{
	if (!(e & 1) || (e & 0xe))
		return 0;
	return ((e >> 10) & ((1ull << 44) - 1)) << 12;
}

/* The raw entry at level `lvl` on the path of `iova` (NULL if the path
 * ends above it); a G-stage root indexes 11 bits. */
static uint64_t *raw_entry(const struct ik_pgtable *pt, uint64_t iova, unsigned lvl)
{
	struct ik_pgtable_info info;

	ik_pgtable_get_info(pt, &info);
	return ik_test_raw_entry(pt, iova, lvl, info.geom.fmt == S2 ? 11 : 9, next_table);
}

/* --------------------------------------------------------- entry layout */

START_TEST(leaf_and_table_entries_match_the_spec_layout)
{
	struct ik_test_tables e = { 0 };
	struct ik_pgtable *pt = mkpt(S1, 38, 56, 0, 0, &e);
	const uint64_t iova = 0x12345000ull, pa = 0xabcdef000ull;
	uint64_t *leaf, *tbl, v;

	ck_assert_int_eq(ik_pgtable_map(pt, iova, pa, SZ_4K, RW), 0);
	leaf = raw_entry(pt, iova, 0);
	ck_assert_ptr_nonnull(leaf);
	/* V R W X U A D, PPN = pa >> 12 at bit 10; G, RSW, PBMT, N clear */
	ck_assert_uint_eq(*leaf, ((pa >> 12) << 10) | 0x1f | 0x40 | 0x80);
	/* a pointer: V and the PPN only */
	tbl = raw_entry(pt, iova, 1);
	ck_assert_uint_eq(*tbl & 0x3ff, 0x1);
	ck_assert_uint_eq(((*tbl >> 10) << 12), (uint64_t)(uintptr_t)leaf & ~0xfffull);
	/* read-only, no-exec, privileged: V R A only; no D on a read-only leaf */
	ck_assert_int_eq(ik_pgtable_map(pt, iova + SZ_4K, pa + SZ_4K, SZ_4K,
					IK_PROT_READ | IK_PROT_NOEXEC | IK_PROT_PRIV), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova + SZ_4K, 0), (((pa + SZ_4K) >> 12) << 10) | 0x43);
	/* write-only: W without R is reserved, so R is granted too */
	ck_assert_int_eq(ik_pgtable_map(pt, iova + 2 * SZ_4K, pa, SZ_4K, IK_PROT_WRITE), 0);
	ck_assert_uint_eq(*raw_entry(pt, iova + 2 * SZ_4K, 0) & 0x3ff, 0xdf);
	/* superpages: the same bits, the PPN's low 9 / 18 bits zero */
	ck_assert_int_eq(ik_pgtable_map(pt, 0x40000000ull, 0x80000000ull, SZ_1G, RW), 0);
	v = *raw_entry(pt, 0x40000000ull, 2);
	ck_assert_uint_eq(v, ((0x80000000ull >> 12) << 10) | 0xdf);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x200000ull, 0x600000ull, SZ_2M, IK_PROT_READ), 0);
	ck_assert_uint_eq(*raw_entry(pt, 0x200000ull, 1), ((0x600000ull >> 12) << 10) | 0x5b);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.allocs, e.frees);
}
END_TEST

START_TEST(gstage_root_is_16k_and_every_leaf_is_user)
{
	struct ik_test_tables e = { 0 };
	struct ik_pgtable *pt = mkpt(S2, 41, 48, 0, 0, &e);
	struct ik_pgtable_info info;
	/* GPA bit 40 set: root index 1024 + ..., beyond the first 4 KiB */
	const uint64_t gpa = (1ull << 40) | (3ull << 30) | 0x5000ull, pa = 0x7654000ull;
	uint64_t *leaf, *root;

	ik_pgtable_get_info(pt, &info);
	ck_assert_uint_eq(info.geom.root_size, SZ_16K);
	ck_assert_uint_eq(info.geom.nlevels, 3);
	ck_assert_uint_eq(info.root_iommu & (SZ_16K - 1), 0);
	ck_assert_int_eq(ik_pgtable_map(pt, gpa, pa, SZ_4K, IK_PROT_READ | IK_PROT_PRIV), 0);
	root = info.root_cpu;
	for (unsigned i = 0; i < 2048; i++)
		ck_assert_uint_eq(root[i] != 0, i == 1024 + 3);
	leaf = raw_entry(pt, gpa, 0);
	ck_assert_ptr_nonnull(leaf);
	/* U although PRIV was asked: G-stage leaves are all user */
	ck_assert_uint_eq(*leaf, ((pa >> 12) << 10) | 0x5b);
	/* beyond 41 bits: refused, nothing changed */
	ck_assert_int_eq(ik_pgtable_map(pt, 1ull << 41, pa, SZ_4K, RW), -EINVAL);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.allocs, e.frees);
}
END_TEST

START_TEST(levels_follow_ias_and_bad_configs_are_refused)
{
	static const struct { enum ik_pt_fmt fmt; unsigned ias, levels; } ok[] = {
		{ S1, 32, 3 }, { S1, 38, 3 }, { S1, 39, 4 }, { S1, 47, 4 }, { S1, 48, 5 }, { S1, 56, 5 },
		{ S2, 32, 3 }, { S2, 41, 3 }, { S2, 42, 4 }, { S2, 50, 4 }, { S2, 51, 5 }, { S2, 59, 5 },
	};
	struct ik_pt_geometry g;
	struct ik_pgtable_cfg c;
	struct ik_pgtable *pt = NULL;
	struct ik_test_tables e = { 0 };

	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		c = mkcfg(ok[i].fmt, ok[i].ias, 48, 0, 0, &e);
		ck_assert_int_eq(ik_pt_geometry_init(&g, &c), 0);
		ck_assert_uint_eq(g.nlevels, ok[i].levels);
		ck_assert_uint_eq(g.hw_start_level, ok[i].levels);
		ck_assert_uint_eq(g.root_size, ok[i].fmt == S2 ? SZ_16K : SZ_4K);
		/* a leaf at every level: 4K .. 2^(12 + 9 (levels - 1)) */
		ck_assert_uint_eq(g.pgsize_bitmap, ALL_SIZES & ((1ull << (13 + 9 * (ok[i].levels - 1))) - 1));
	}
	/* widths the modes cannot express, flags the format lacks */
	c = mkcfg(S1, 57, 48, 0, 0, &e);
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c = mkcfg(S2, 60, 48, 0, 0, &e);
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c = mkcfg(S1, 38, 57, 0, 0, &e);
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c = mkcfg(S1, 31, 48, 0, 0, &e);
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c = mkcfg(S2, 41, 48, IK_RISCV_FLAG_SUM, 0, &e);
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c = mkcfg(S1, 38, 48, 0x2, 0, &e);
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c = mkcfg(S1, 38, 48, 0, IK_PT_QUIRK_ARM_NS, &e);
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c = mkcfg(S1, 38, 48, 0, 0, &e);
	c.pgsize_bitmap = 1ull << 14;	/* no 16K granule */
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	ck_assert_ptr_null(pt);
	ck_assert_int_eq(e.allocs, 0);
}
END_TEST

static int count_range(void *ctx, const struct ik_pt_range *r)
{
	(void)r;
	(*(int *)ctx)++;
	return 0;
}

START_TEST(requests_beyond_the_widths_change_nothing)
{
	struct ik_test_tables e = { 0 };
	struct ik_pgtable *pt = mkpt(S1, 38, 48, 0, 0, &e);
	struct ik_pgtable_stats st0, st1;
	struct ik_gather ga;
	int n = 0;

	ck_assert_int_eq(ik_pgtable_map(pt, 0x1000, 0x2000, SZ_4K, RW), 0);
	ik_pgtable_get_stats(pt, &st0);
	/* paddr beyond oas 48, iova beyond the lower half of Sv39 */
	ck_assert_int_eq(ik_pgtable_map(pt, 0x10000, 1ull << 48, SZ_4K, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x10000, (1ull << 48) - SZ_4K, 2 * SZ_4K, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(pt, 1ull << 38, 0x2000, SZ_4K, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(pt, (1ull << 38) - SZ_4K, 0x2000, 2 * SZ_4K, RW), -EINVAL);
	/* sizes the format cannot express: 16K pages, a 2M page misaligned */
	ck_assert_int_eq(ik_pgtable_map_pages(pt, 0x100000, 0x100000, SZ_16K, 1, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map_pages(pt, 0x201000, 0x200000, SZ_2M, 1, RW), -EINVAL);
	/* 256T pages need Sv57 */
	ck_assert_int_eq(ik_pgtable_map_pages(pt, 0, 0, 1ull << 48, 1, RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x1000, 0x2000, SZ_4K, RW), -EEXIST);
	ik_gather_init(&ga);
	ck_assert_int_eq(ik_pgtable_unmap(pt, 1ull << 38, SZ_4K, &ga), -EINVAL);
	ik_pgtable_get_stats(pt, &st1);
	ck_assert_uint_eq(st0.tables_alloc, st1.tables_alloc);
	ck_assert_int_eq(ik_pgtable_dump(pt, 0, 1ull << 38, count_range, &n), 0);
	ck_assert_int_eq(n, 1);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.allocs, e.frees);
}
END_TEST

/* ------------------------------------------- engine tables vs reference */

static const struct rvcfg {
	enum ik_pt_fmt fmt;
	unsigned ias, oas;
	ik_u32 quirks;
	ik_u64 flags;
} rvcfgs[] = {
	{ S1, 38, 48, 0, 0 },		   { S1, 47, 48, IK_PT_QUIRK_DIRTY, 0 },
	{ S1, 56, 56, 0, IK_RISCV_FLAG_SUM }, { S2, 41, 48, 0, 0 },
	{ S2, 50, 52, IK_PT_QUIRK_DIRTY, 0 }, { S2, 59, 56, 0, 0 },
};

struct req {
	uint64_t iova, pa, size;
	unsigned prot;
};

/* What the reference says about one address of a request, for `acc`. */
static void check_one(const struct ik_pgtable *pt, const struct rv_tables *t, const struct req *q,
		      uint64_t off)
{
	bool s1 = !t->gstage, priv = s1 && (q->prot & IK_PROT_PRIV);
	unsigned mode = priv ? RV_SMODE : 0;
	struct rv_result r = rv_walk(t, q->iova + off, RV_READ | mode);

	ck_assert_msg(r.fault == RV_OK, "iova %#llx: fault %d", (unsigned long long)(q->iova + off),
		      (int)r.fault);
	ck_assert_uint_eq(r.pa, q->pa + off);
	ck_assert(r.r);
	ck_assert_int_eq(r.w, (q->prot & IK_PROT_WRITE) != 0);
	ck_assert_int_eq(r.x, !(q->prot & IK_PROT_NOEXEC));
	ck_assert_int_eq(r.u, !priv);
	/* A preset; D preset on writable leaves unless dirty tracking */
	ck_assert(r.pte & 0x40);
	ck_assert_int_eq(r.d, (q->prot & IK_PROT_WRITE) && !t->ade);
	/* writes: with A/D updating off, a writable-clean (dirty-tracked)
	 * leaf is an A/D fault; the tables stay untouched */
	{
		struct rv_tables t2 = *t;

		t2.ade = false;
		r = rv_walk(&t2, q->iova + off, RV_WRITE | mode);
		ck_assert_int_eq(r.fault, !(q->prot & IK_PROT_WRITE) ? RV_PERMISSION :
					  t->ade ? RV_AD : RV_OK);
	}
	/* the other privilege: S1 user pages from S-mode only with SUM;
	 * privileged pages never from U-mode; G-stage does not care */
	r = rv_walk(t, q->iova + off, RV_READ | (priv ? 0 : RV_SMODE));
	ck_assert_int_eq(r.fault, s1 && (priv || !t->sum) ? RV_PERMISSION : RV_OK);
	(void)pt;
}

START_TEST(reference_walker_translates_engine_tables_as_requested)
{
	const struct rvcfg *cf = &rvcfgs[_i];
	struct ik_test_tables e = { 0 };
	struct ik_pgtable *pt = mkpt(cf->fmt, cf->ias, cf->oas, cf->flags, cf->quirks, &e);
	struct rv_tables t = ref_of(pt);
	struct ik_rng rng = { 0x5151u + (unsigned)_i };
	struct req q[64];
	unsigned nq = 0, big = 0;
	uint64_t top = 1ull << cf->ias;

	/* Requests at random slots of 1 GiB: 4K runs, 2M and 1G leaves, runs
	 * that mix sizes; random prot.  Plus, where the input space allows, a
	 * 512G leaf near the top (G-stage: in the root's upper 12 KiB). */
	if (cf->ias >= 41) {
		uint64_t iova = top - 2 * SZ_512G, pa = 1ull << 39;

		ck_assert_int_eq(ik_pgtable_map(pt, iova, pa, SZ_512G, RW), 0);
		q[nq++] = (struct req){ iova, pa, SZ_512G, RW };
		big = 1;
	}
	for (unsigned k = 0; k < 40; k++) {
		uint64_t slot = (ik_rng_below(&rng, (top >> 30) - 2) + 1) << 30;
		static const uint64_t sizes[] = { SZ_4K, 5 * SZ_4K, SZ_2M, 3 * SZ_2M + SZ_4K, SZ_1G };
		uint64_t sz = sizes[ik_rng_below(&rng, 5)];
		uint64_t pa = (ik_rng_below(&rng, 1ull << (cf->oas - 31)) << 30) |
			      (sz >= SZ_2M ? 0 : ik_rng_below(&rng, 512) << 12);
		unsigned prot = IK_PROT_READ;
		int rc;

		if (ik_rng_below(&rng, 2))
			prot |= IK_PROT_WRITE;
		if (ik_rng_below(&rng, 3) == 0)
			prot |= IK_PROT_NOEXEC;
		if (ik_rng_below(&rng, 3) == 0)
			prot |= IK_PROT_PRIV;
		if (cf->fmt == S2)
			prot &= ~IK_PROT_PRIV;
		rc = ik_pgtable_map(pt, slot, pa, sz, prot);
		if (rc == -EEXIST)
			continue;
		ck_assert_int_eq(rc, 0);
		q[nq++] = (struct req){ slot, pa, sz, prot };
	}
	for (unsigned k = 0; k < nq; k++) {
		check_one(pt, &t, &q[k], 0);
		check_one(pt, &t, &q[k], q[k].size - 8);
		check_one(pt, &t, &q[k], (q[k].size / 2) & ~7ull);
		/* just past the end: not mapped (slots are 1 GiB apart) */
		if (q[k].size < SZ_1G) {
			struct rv_result r = rv_walk(&t, q[k].iova + q[k].size, RV_READ | RV_SMODE);

			ck_assert_int_eq(r.fault, RV_INVALID);
		}
	}
	ck_assert_uint_eq(big, cf->ias >= 41);
	/* and the library's walker agrees with the reference on every one */
	{
		struct ik_pt_walker w;

		ik_pgtable_walker(pt, &w);
		for (unsigned k = 0; k < nq; k++) {
			struct ik_pt_walk_result res;
			struct rv_result r = rv_walk(&t, q[k].iova + 0x18, RV_READ | RV_SMODE);

			ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, q[k].iova + 0x18, 0,
						    &res), 0);
			ck_assert_int_eq(res.fault, IK_PT_FAULT_NONE);
			ck_assert_uint_eq(res.oa, q[k].pa + 0x18);
			ck_assert_uint_eq(res.pgsize, r.pgsize);
			ck_assert_uint_eq(res.pte, r.pte);
		}
	}
	/* unmapping everything leaves nothing the reference can translate */
	for (unsigned k = 0; k < nq; k++) {
		struct ik_gather ga;

		ik_gather_init(&ga);
		ck_assert_int_eq(ik_pgtable_unmap(pt, q[k].iova, q[k].size, &ga), (ik_s64)q[k].size);
		ik_pgtable_gather_sync(pt, &ga);
		ck_assert_int_eq(rv_walk(&t, q[k].iova, RV_READ | RV_SMODE).fault, RV_INVALID);
	}
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.allocs, e.frees);
}
END_TEST

/* ---------------------------------------------- hand-built guest tables */

static enum ik_pt_fault lib_fault_of(enum rv_fault f)
{
	switch (f) {
	case RV_OK: return IK_PT_FAULT_NONE;
	case RV_INVALID: case RV_INPUT: return IK_PT_FAULT_TRANSLATION;
	case RV_RESERVED: return IK_PT_FAULT_RESERVED;
	case RV_PERMISSION: return IK_PT_FAULT_PERMISSION;
	case RV_AD: return IK_PT_FAULT_ACCESS_FLAG;
	case RV_ACCESS: return IK_PT_FAULT_ADDR_SIZE;
	}
	return IK_PT_FAULT_EXTERNAL;
}

static unsigned lib_access_of(unsigned acc)
{
	return ((acc & RV_READ) ? IK_ACCESS_READ : 0) | ((acc & RV_WRITE) ? IK_ACCESS_WRITE : 0) |
	       ((acc & RV_EXEC) ? IK_ACCESS_EXEC : 0) | ((acc & RV_SMODE) ? IK_ACCESS_PRIV : 0);
}

/*
 * A guest's Sv39 / Sv39x4 table, built by hand: root -> mid -> leaf table.
 * Entry patterns at the leaf (level 0) and mid (level 1, as a 2M leaf or as a
 * pointer) are varied; both walkers must report the same outcome.
 */
START_TEST(walkers_agree_on_hand_built_entries_and_their_faults)
{
	/* want[0]: first stage (no SUM), want[1]: G-stage */
	static const struct { uint64_t pte; unsigned lvl, acc; enum rv_fault want[2]; } cases[] = {
		{ 0x0df, 0, RV_READ, { RV_OK, RV_OK } },		/* V R W X U A D */
		{ 0x0de, 0, RV_READ, { RV_INVALID, RV_INVALID } },	/* V clear */
		{ 0x0d5, 0, RV_READ, { RV_RESERVED, RV_RESERVED } },	/* W without R */
		{ 0x0dd, 0, RV_EXEC, { RV_RESERVED, RV_RESERVED } },	/* W X without R */
		{ 0x0c1, 0, RV_READ, { RV_RESERVED, RV_RESERVED } },	/* a pointer at level 0 */
		{ 0x0df | (1ull << 54), 0, RV_READ, { RV_RESERVED, RV_RESERVED } }, /* bits 60:54 */
		{ 0x0df | (1ull << 61), 0, RV_READ, { RV_RESERVED, RV_RESERVED } }, /* PBMT */
		{ 0x0df | (1ull << 63), 0, RV_READ, { RV_RESERVED, RV_RESERVED } }, /* N */
		{ 0x0db, 0, RV_WRITE, { RV_PERMISSION, RV_PERMISSION } }, /* read-only */
		{ 0x0d7, 0, RV_EXEC, { RV_PERMISSION, RV_PERMISSION } }, /* no X */
		{ 0x0d9, 0, RV_READ, { RV_PERMISSION, RV_PERMISSION } }, /* execute-only, read */
		{ 0x0d9, 0, RV_EXEC, { RV_OK, RV_OK } },		/* execute-only, fetch */
		{ 0x0cf, 0, RV_READ, { RV_PERMISSION, RV_PERMISSION } }, /* U clear, U-mode */
		{ 0x0cf, 0, RV_READ | RV_SMODE, { RV_OK, RV_PERMISSION } }, /* U clear, S-mode */
		{ 0x0df, 0, RV_READ | RV_SMODE, { RV_PERMISSION, RV_OK } }, /* U page, S-mode, no SUM */
		{ 0x0cf, 0, RV_EXEC | RV_SMODE, { RV_OK, RV_PERMISSION } },
		{ 0x09f, 0, RV_READ, { RV_AD, RV_AD } },		/* A clear */
		{ 0x05f, 0, RV_WRITE, { RV_AD, RV_AD } },		/* D clear, write */
		{ 0x05f, 0, RV_READ, { RV_OK, RV_OK } },		/* D clear, read */
		{ 0x0df, 1, RV_READ, { RV_OK, RV_OK } },		/* 2M leaf */
		{ 0x0df | (1ull << 10), 1, RV_READ, { RV_RESERVED, RV_RESERVED } }, /* misaligned 2M */
		{ 0x001 | (1ull << 60), 1, RV_READ, { RV_RESERVED, RV_RESERVED } }, /* pointer, bit 60 */
		{ 0x001, 1, RV_READ, { RV_OK, RV_OK } },		/* plain pointer */
	};
	for (int gs = 0; gs < 2; gs++) {
		uint64_t *root = aligned_alloc(SZ_16K, SZ_16K), *mid = aligned_alloc(SZ_4K, SZ_4K);
		uint64_t *lt = aligned_alloc(SZ_4K, SZ_4K);
		const uint64_t va = (gs ? (3ull << 39) : 0) | (5ull << 30) | (7ull << 21) | (9ull << 12) | 0x10;
		const uint64_t opa = 0x123400000ull;	/* 2M aligned */
		unsigned ridx = (unsigned)((va >> 30) & (gs ? 2047 : 511));
		struct rv_tables t = { ref_read, ref_write, NULL, (uintptr_t)root, 3, gs != 0, 48, false, false };
		struct ik_pt_walker w;
		struct ik_pgtable_cfg c = mkcfg(gs ? S2 : S1, gs ? 41 : 38, 48, 0, 0, NULL);
		struct ik_pt_walk_result res;

		memset(root, 0, SZ_16K);
		memset(mid, 0, SZ_4K);
		memset(lt, 0, SZ_4K);
		root[ridx] = (((uintptr_t)mid >> 12) << 10) | 1;
		ck_assert_int_eq(ik_pt_walker_init(&w, &c, (uintptr_t)root), 0);
		for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			bool ptr = cases[k].lvl == 1 && !(cases[k].pte & 0xe);
			uint64_t pte = cases[k].pte | (((ptr ? (uintptr_t)lt : opa) >> 12) << 10);
			struct rv_result r;

			if (cases[k].lvl == 0) {
				mid[(va >> 21) & 511] = (((uintptr_t)lt >> 12) << 10) | 1;
				lt[(va >> 12) & 511] = pte;
			} else {
				mid[(va >> 21) & 511] = pte;
				lt[(va >> 12) & 511] = 0x0df | ((opa >> 12) << 10);
			}
			r = rv_walk(&t, va, cases[k].acc);
			ck_assert_msg(r.fault == cases[k].want[gs], "gs %d case %u: ref %d want %d", gs,
				      k, (int)r.fault, (int)cases[k].want[gs]);
			ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, va,
						    lib_access_of(cases[k].acc), &res), 0);
			ck_assert_msg(res.fault == lib_fault_of(r.fault), "gs %d case %u: lib %d ref %d",
				      gs, k, (int)res.fault, (int)r.fault);
			if (r.fault == RV_OK) {
				ck_assert_uint_eq(res.oa, r.pa);
				ck_assert_uint_eq(res.pgsize, r.pgsize);
			}
		}
		/* a leaf beyond the physical width: an access fault */
		mid[(va >> 21) & 511] = 0x0df | ((1ull << 48) >> 2);
		ck_assert_int_eq(rv_walk(&t, va, RV_READ).fault, RV_ACCESS);
		ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, va, IK_ACCESS_READ, &res), 0);
		ck_assert_int_eq(res.fault, IK_PT_FAULT_ADDR_SIZE);
		/* beyond the input width (first stage: not sign-extended) */
		ck_assert_int_eq(rv_walk(&t, gs ? 1ull << 41 : 1ull << 38, RV_READ).fault, RV_INPUT);
		ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, gs ? 1ull << 41 : 1ull << 38,
					    IK_ACCESS_READ, &res), 0);
		ck_assert_int_eq(res.fault, IK_PT_FAULT_TRANSLATION);
		free(root);
		free(mid);
		free(lt);
	}
}
END_TEST

/* ------------------------------------------------------------ A/D, dirty */

START_TEST(dirty_tracking_uses_d_and_the_unit_sets_it)
{
	for (int gs = 0; gs < 2; gs++) {
		struct ik_test_tables e = { 0 };
		struct ik_pgtable *pt = mkpt(gs ? S2 : S1, gs ? 41 : 38, 48, 0, IK_PT_QUIRK_DIRTY, &e);
		struct rv_tables t = ref_of(pt);
		struct ik_pt_walker w;
		struct ik_pt_walk_result res;
		ik_u64 bm[1] = { 0 };
		uint64_t *leaf;

		ik_pgtable_walker(pt, &w);
		ck_assert_int_eq(ik_pgtable_map(pt, 0x400000, 0x800000, 8 * SZ_4K, RW), 0);
		leaf = raw_entry(pt, 0x402000, 0);
		ck_assert_uint_eq(*leaf & 0xc0, 0x40);	/* A preset, D clear */
		/* a device write through the library's walker (SADE / GADE) */
		ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, 0x402000, IK_ACCESS_WRITE,
					    &res), 0);
		ck_assert_int_eq(res.fault, IK_PT_FAULT_NONE);
		ck_assert(res.dirty);
		ck_assert_uint_eq(*leaf & 0xc0, 0xc0);
		/* and one through the reference */
		ck_assert_int_eq(rv_walk(&t, 0x405000, RV_WRITE).fault, RV_OK);
		ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(pt, 0x400000, 8 * SZ_4K, 0, bm, 12, NULL), 2);
		ck_assert_uint_eq(bm[0], 0x24);
		ck_assert_uint_eq(*leaf & 0xc0, 0x40);
		/* without updates enabled, the same clean leaf is an A/D fault */
		w.geom.quirks &= ~IK_PT_QUIRK_DIRTY;
		t.ade = false;
		ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem_hw, 0x402000, IK_ACCESS_WRITE,
					    &res), 0);
		ck_assert_int_eq(res.fault, IK_PT_FAULT_ACCESS_FLAG);
		ck_assert_int_eq(rv_walk(&t, 0x402000, RV_WRITE).fault, RV_AD);
		ik_pgtable_destroy(pt);
		ck_assert_int_eq(e.allocs, e.frees);
	}
	/* without the quirk: no dirty tracking */
	{
		struct ik_test_tables e = { 0 };
		struct ik_pgtable *pt = mkpt(S1, 38, 48, 0, 0, &e);
		ik_u64 bm[1] = { 0 };

		ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(pt, 0, SZ_4K, 0, bm, 12, NULL), -EOPNOTSUPP);
		ik_pgtable_destroy(pt);
	}
}
END_TEST

/* ---------------------------------------------------------------- atp */

START_TEST(atp_values_and_walkers_from_them)
{
	static const struct { enum ik_pt_fmt fmt; unsigned ias, mode; } cs[] = {
		{ S1, 38, 8 }, { S1, 47, 9 }, { S1, 56, 10 }, { S2, 41, 8 }, { S2, 50, 9 }, { S2, 59, 10 },
	};
	for (unsigned i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		struct ik_test_tables e = { 0 };
		struct ik_pgtable *pt = mkpt(cs[i].fmt, cs[i].ias, 48, 0, 0, &e);
		struct ik_pgtable_info info;
		struct ik_pt_walker w;
		struct ik_pt_walk_result r1, r2;
		ik_u16 gscid = cs[i].fmt == S2 ? 0xbeef : 0;
		ik_u64 atp = 0;

		ik_pgtable_get_info(pt, &info);
		ck_assert_int_eq(ik_riscv_get_atp(pt, gscid, &atp), 0);
		ck_assert_uint_eq(atp >> 60, cs[i].mode);
		ck_assert_uint_eq((atp >> 44) & 0xffff, gscid);
		ck_assert_uint_eq((atp & ((1ull << 44) - 1)) << 12, info.root_iommu);
		ck_assert_int_eq(ik_pgtable_map(pt, 0x40201000, 0x1234000, SZ_4K, RW), 0);
		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, cs[i].fmt, atp, 48, 0, 0), 0);
		ck_assert_uint_eq(w.geom.nlevels, info.geom.nlevels);
		ck_assert_uint_eq(w.geom.ias, cs[i].ias);
		/* the unit takes leaves at every level */
		ck_assert_uint_eq(w.geom.leaf_levels, (1u << w.geom.nlevels) - 1);
		ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, 0x40201008, IK_ACCESS_WRITE, &r1), 0);
		ck_assert_int_eq(r1.fault, IK_PT_FAULT_NONE);
		ck_assert_uint_eq(r1.oa, 0x1234008);
		ik_pgtable_walker(pt, &w);
		ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, 0x40201008, IK_ACCESS_WRITE, &r2), 0);
		ck_assert_uint_eq(r2.oa, r1.oa);
		/* errors */
		ck_assert_int_eq(ik_riscv_get_atp(pt, 1, &atp), cs[i].fmt == S1 ? -EINVAL : 0);
		ik_pgtable_destroy(pt);
	}
	{
		struct ik_pt_walker w;
		ik_u64 ok = (8ull << 60) | 0x1000;

		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, S1, ok, 48, 0, 0), 0);
		ck_assert_int_eq(ik_riscv_walker_from_atp(NULL, S1, ok, 48, 0, 0), -EINVAL);
		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, IK_PT_VTD_SL, ok, 48, 0, 0), -EINVAL);
		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, S1, 0x1000, 48, 0, 0), -EINVAL); /* Bare */
		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, S1, (11ull << 60) | 0x1000, 48, 0, 0), -EINVAL);
		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, S1, ok | (1ull << 44), 48, 0, 0), -EINVAL);
		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, S1, ok, 57, 0, 0), -EINVAL);
		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, S1, ok, 48, 0, 0x80), -EINVAL);
		/* G-stage: 16 KiB aligned root, GSCID allowed */
		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, S2, (8ull << 60) | (0xffffull << 44) | 4, 48, 0, 0), 0);
		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, S2, (8ull << 60) | 1, 48, 0, 0), -EINVAL);
		ck_assert_int_eq(ik_riscv_walker_from_atp(&w, S2, ok, 48, 0, IK_RISCV_FLAG_SUM), -EINVAL);
	}
}
END_TEST

START_TEST(null_pointer_arguments_are_einval)
{
	struct ik_test_tables e = { 0 };
	struct ik_pgtable *pt = mkpt(S1, 38, 48, 0, 0, &e);
	struct ik_pgtable *vt = NULL;
	struct ik_pgtable_cfg c = mkcfg(IK_PT_VTD_SL, 39, 48, 0, 0, &e);
	ik_u64 atp = 7;

	ck_assert_int_eq(ik_riscv_get_atp(NULL, 0, &atp), -EINVAL);
	ck_assert_int_eq(ik_riscv_get_atp(pt, 0, NULL), -EINVAL);
	ck_assert_int_eq(ik_pgtable_create(&c, &vt), 0);
	ck_assert_int_eq(ik_riscv_get_atp(vt, 0, &atp), -EINVAL);
	ck_assert_uint_eq(atp, 7);
	ik_pgtable_destroy(vt);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(e.allocs, e.frees);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("pgtable-riscv");
	TCase *tc = tcase_create("riscv");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, leaf_and_table_entries_match_the_spec_layout);
	tcase_add_test(tc, gstage_root_is_16k_and_every_leaf_is_user);
	tcase_add_test(tc, levels_follow_ias_and_bad_configs_are_refused);
	tcase_add_test(tc, requests_beyond_the_widths_change_nothing);
	tcase_add_loop_test(tc, reference_walker_translates_engine_tables_as_requested, 0,
			    (int)(sizeof(rvcfgs) / sizeof(rvcfgs[0])));
	tcase_add_test(tc, walkers_agree_on_hand_built_entries_and_their_faults);
	tcase_add_test(tc, dirty_tracking_uses_d_and_the_unit_sets_it);
	tcase_add_test(tc, atp_values_and_walkers_from_them);
	tcase_add_test(tc, null_pointer_arguments_are_einval);
	suite_add_tcase(s, tc);
	return s;
}
