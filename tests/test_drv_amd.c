/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * drv/amd: the AMD IOMMU driver core (<iommukit/drv/amd.h>).
 *
 * Device table entries are checked against bit positions written here from
 * AMD pub. 48882 ("Device Table Entry Format") as independent constants
 * (SPEC_* below, never the header's macros); bad input leaves every buffer
 * byte-identical; the device table's size, base register and update order
 * (observed from the issue callback); GCR3 tables walked by hand as the
 * IOMMU walks them; the planner's commands checked row by row and through
 * the AMD command decoder; and end to end: plans issued through an ik_cmdq
 * of ik_cmdq_fmt_amd to the soft IOMMU, whose stale-translation checker then
 * finds nothing after unmaps (and does find the stale entry when the
 * invalidation is left out).
 *
 * DMA memory is host memory (device address = CPU address) through a
 * fault-injecting allocator.
 */
#include <stdlib.h>
#include <string.h>
#include <iommukit/drv/amd.h>
#include <iommukit/softiommu.h>
#include "testlib.h"

#define BIT(n) ((uint64_t)1 << (n))

/* Spec bit positions (pub. 48882, DTE over 256 bits; word k = bits
 * 64k+63..64k), as numbers: */
#define SPEC_V 0
#define SPEC_TV 1
#define SPEC_HAD 7		/* 8:7 */
#define SPEC_MODE 9		/* 11:9 */
#define SPEC_PPR 52
#define SPEC_GIOV 54
#define SPEC_GV 55
#define SPEC_GLX 56		/* 57:56 */
#define SPEC_GCR3_14_12 58	/* 60:58 */
#define SPEC_IR 61
#define SPEC_IW 62
#define SPEC_DOMID 64		/* 79:64 */
#define SPEC_GCR3_30_15 80	/* 95:80 */
#define SPEC_I 96
#define SPEC_SE 97
#define SPEC_SA 98
#define SPEC_GCR3_51_31 107	/* 127:107 */
#define SPEC_IV 128
#define SPEC_GPT_LEVEL 182	/* 183:182 */
/* Device Table Base Address register: 51:12 base, 8:0 size in 4K pages - 1. */
#define SPEC_DEVTAB_SIZE_MASK 0x1ffull

static uint64_t get_bits(const uint64_t *d, unsigned lo, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= ((d[(lo + i) / 64] >> ((lo + i) % 64)) & 1) << i;
	return v;
}

/* ================================================================ DMA memory, page tables */

/* DMA memory: testlib's struct ik_test_dma (0xa5-filled, counted, failure
 * injection); table sets: ik_test_pt_new(). */

static struct ik_pgtable *mk_pt_hooks(enum ik_pt_fmt fmt, unsigned ias, uint32_t quirks,
				      struct ik_pgtable_hooks *h, void *cookie)
{
	return ik_test_pt_new(fmt, ias, quirks, 0, h, cookie);
}

static struct ik_pgtable_hooks plain_hooks;

static struct ik_pgtable *mk_pt(enum ik_pt_fmt fmt, unsigned ias)
{
	return mk_pt_hooks(fmt, ias, 0, &plain_hooks, NULL);
}

static uint64_t root_of(const struct ik_pgtable *pt)
{
	struct ik_pgtable_info info;

	ik_pgtable_get_info(pt, &info);
	return info.root_iommu;
}

/* ================================================================ DTE */

START_TEST(dte_fields_at_spec_positions)
{
	struct ik_pgtable *pt = mk_pt(IK_PT_AMD_V1, 48);
	struct ik_pgtable *ptd = mk_pt_hooks(IK_PT_AMD_V1, 39, IK_PT_QUIRK_DIRTY, &plain_hooks, NULL);
	struct ik_amd_dte_config c;
	struct ik_amd_dte d;
	uint64_t dte[4];
	const uint64_t gcr3 = 0x000fedcba9876000ull;

	memset(&c, 0, sizeof(c));
	c.pt = pt;
	c.prot = IK_PROT_READ | IK_PROT_WRITE;
	c.domid = 0xbeef;
	c.flags = IK_AMD_DTE_IOTLB | IK_AMD_DTE_SE | IK_AMD_DTE_SA;
	ck_assert_int_eq(ik_amd_dte_build(&c, dte), 0);
	ck_assert_uint_eq(get_bits(dte, SPEC_V, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_TV, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_MODE, 3), 4);
	ck_assert_uint_eq(get_bits(dte, 12, 40) << 12, root_of(pt));
	ck_assert_uint_eq(get_bits(dte, SPEC_IR, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_IW, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_DOMID, 16), 0xbeef);
	ck_assert_uint_eq(get_bits(dte, SPEC_I, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_SE, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_SA, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_HAD, 2), 0);
	ck_assert_uint_eq(get_bits(dte, SPEC_GV, 1), 0);
	/* nothing else */
	ck_assert_uint_eq(dte[0], BIT(SPEC_V) | BIT(SPEC_TV) | 4ull << SPEC_MODE | root_of(pt) |
			  BIT(SPEC_IR) | BIT(SPEC_IW));
	ck_assert_uint_eq(dte[1], 0xbeefull | BIT(SPEC_I - 64) | BIT(SPEC_SE - 64) | BIT(SPEC_SA - 64));
	ck_assert_uint_eq(dte[2], 0);
	ck_assert_uint_eq(dte[3], 0);
	ck_assert_int_eq(ik_amd_dte_decode(dte, &d), 0);
	ck_assert(d.v && d.tv && d.mode == 4 && d.root == root_of(pt) && d.domid == 0xbeef);
	ck_assert(d.prot == (IK_PROT_READ | IK_PROT_WRITE) && d.iotlb && d.se && d.sa && !d.gv);

	/* read-only, Mode 3, host A/D */
	c.pt = ptd;
	c.prot = IK_PROT_READ;
	c.flags = 0;
	ck_assert_int_eq(ik_amd_dte_build(&c, dte), 0);
	ck_assert_uint_eq(get_bits(dte, SPEC_MODE, 3), 3);
	ck_assert_uint_eq(get_bits(dte, SPEC_HAD, 2), 3);
	ck_assert_uint_eq(get_bits(dte, SPEC_IR, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_IW, 1), 0);

	/* guest translation: the GCR3 root split over three fields, GLX, GV,
	 * GIoV, the GPT level, interrupt fields verbatim; no host table */
	memset(&c, 0, sizeof(c));
	c.prot = IK_PROT_READ | IK_PROT_WRITE;
	c.domid = 7;
	c.gcr3_root = gcr3;
	c.glx = 1;
	c.gpt_levels = 5;
	c.flags = IK_AMD_DTE_GIOV | IK_AMD_DTE_PPR;
	c.intr = BIT(SPEC_IV - 128) | 0x0000123456789ac0ull | 0xbull << 1; /* IV, root, IntTabLen */
	ck_assert_int_eq(ik_amd_dte_build(&c, dte), 0);
	ck_assert_uint_eq(get_bits(dte, SPEC_MODE, 3), 0);
	ck_assert_uint_eq(get_bits(dte, SPEC_GV, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_GIOV, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_PPR, 1), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_GLX, 2), 1);
	ck_assert_uint_eq(get_bits(dte, SPEC_GCR3_14_12, 3), (gcr3 >> 12) & 7);
	ck_assert_uint_eq(get_bits(dte, SPEC_GCR3_30_15, 16), (gcr3 >> 15) & 0xffff);
	ck_assert_uint_eq(get_bits(dte, SPEC_GCR3_51_31, 21), gcr3 >> 31);
	ck_assert_uint_eq(get_bits(dte, SPEC_GPT_LEVEL, 2), 1);
	ck_assert_uint_eq(get_bits(dte, 12, 40), 0); /* no host root */
	ck_assert_uint_eq(dte[2] & ~(3ull << (SPEC_GPT_LEVEL - 128)), c.intr);
	ck_assert_int_eq(ik_amd_dte_decode(dte, &d), 0);
	ck_assert(d.gv && d.giov && d.ppr && d.glx == 1 && d.gcr3_root == gcr3 && d.gpt_level == 1);
	ck_assert_uint_eq(d.intr, c.intr);
	ck_assert_uint_eq(d.domid, 7);
	c.gpt_levels = 4;
	ck_assert_int_eq(ik_amd_dte_build(&c, dte), 0);
	ck_assert_uint_eq(get_bits(dte, SPEC_GPT_LEVEL, 2), 0);

	/* the blocked entry: V, TV, nothing else */
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ik_amd_dte_build(&c, dte), 0);
	ck_assert_uint_eq(dte[0], BIT(SPEC_V) | BIT(SPEC_TV));
	ck_assert_uint_eq(dte[1] | dte[2] | dte[3], 0);
	ik_pgtable_destroy(pt);
	ik_pgtable_destroy(ptd);
}
END_TEST

START_TEST(dte_modes_follow_the_table_levels)
{
	static const struct {
		unsigned ias, mode;
	} m[] = { { 30, 2 }, { 39, 3 }, { 48, 4 }, { 57, 5 }, { 63, 6 } };

	for (unsigned i = 0; i < IK_ARRAY_SIZE(m); i++) {
		struct ik_pgtable *pt = mk_pt(IK_PT_AMD_V1, m[i].ias);
		struct ik_amd_dte_config c = { .pt = pt, .prot = IK_PROT_READ };
		struct ik_pt_walker w;
		uint64_t dte[4];

		ck_assert_int_eq(ik_amd_dte_build(&c, dte), 0);
		ck_assert_uint_eq(get_bits(dte, SPEC_MODE, 3), m[i].mode);
		ck_assert_int_eq(ik_amd_walker_from_dte(&w, dte, 48), 0);
		ck_assert_uint_eq(w.geom.nlevels, m[i].mode);
		ck_assert_uint_eq(w.root, root_of(pt));
		ik_pgtable_destroy(pt);
	}
}
END_TEST

START_TEST(bad_dte_input_is_einval_and_buffers_stay_identical)
{
	struct ik_pgtable *v1 = mk_pt(IK_PT_AMD_V1, 48);
	struct ik_pgtable *v2 = mk_pt(IK_PT_AMD_V2, 47);
	struct ik_pgtable *sl = mk_pt(IK_PT_VTD_SL, 48);
	struct ik_amd_dte_config good = { .pt = v1, .prot = IK_PROT_READ, .domid = 3 };
	struct ik_amd_dte_config c;
	struct ik_amd_dte d, d0;
	struct ik_pt_walker w;
	uint64_t dte[4], ref[4], ok[4];

	memset(ref, 0x5c, sizeof(ref));
#define BAD(mutate)                                                                         \
	do {                                                                                \
		c = good;                                                                   \
		mutate;                                                                     \
		memcpy(dte, ref, sizeof(dte));                                              \
		ck_assert_int_eq(ik_amd_dte_build(&c, dte), -EINVAL);                       \
		ck_assert(memcmp(dte, ref, sizeof(dte)) == 0);                              \
	} while (0)
	BAD(c.pt = v2);		/* a table from another format */
	BAD(c.pt = sl);
	BAD(c.domid = 0x10000);	/* DomainID out of range */
	BAD(c.prot = IK_PROT_CACHE | IK_PROT_READ);
	BAD(c.flags = 0x20);
	BAD(c.flags = IK_AMD_DTE_GIOV);	/* GIoV without guest tables */
	BAD(c.glx = 1);
	BAD(c.gpt_levels = 4);
	BAD((c.gcr3_root = 0x10000, c.glx = 3, c.gpt_levels = 4));
	BAD((c.gcr3_root = 0x10000, c.gpt_levels = 3));
	BAD((c.gcr3_root = 0x10000, c.gpt_levels = 0));
	BAD((c.gcr3_root = 0x10800, c.gpt_levels = 4));
	BAD((c.gcr3_root = BIT(52), c.gpt_levels = 4));
	BAD(c.intr = BIT(54));	/* the GPT level is not an interrupt field */
	BAD(c.intr = BIT(52));
#undef BAD
	memcpy(dte, ref, sizeof(dte));
	ck_assert_int_eq(ik_amd_dte_build(NULL, dte), -EINVAL);
	ck_assert_int_eq(ik_amd_dte_build(&good, NULL), -EINVAL);

	/* the decoder: reserved bits, Mode 7, GLX 3 -> -EINVAL, out untouched */
	ck_assert_int_eq(ik_amd_dte_build(&good, ok), 0);
	memset(&d0, 0x77, sizeof(d0));
	{
		static const struct {
			unsigned word;
			uint64_t bits;
		} bad[] = { { 0, BIT(2) }, { 0, BIT(6) }, { 0, BIT(63) }, { 0, 7ull << 9 },
			    { 0, 3ull << 56 }, { 2, BIT(52) }, { 2, BIT(53) }, { 3, BIT(0) },
			    { 3, BIT(14) }, { 3, BIT(48) }, { 3, BIT(53) } };

		for (unsigned i = 0; i < IK_ARRAY_SIZE(bad); i++) {
			memcpy(dte, ok, sizeof(dte));
			dte[bad[i].word] |= bad[i].bits;
			d = d0;
			ck_assert_msg(ik_amd_dte_decode(dte, &d) == -EINVAL, "case %u", i);
			ck_assert(memcmp(&d, &d0, sizeof(d)) == 0);
			ck_assert_int_eq(ik_amd_walker_from_dte(&w, dte, 48), -EINVAL);
		}
	}
	/* defined bits outside the builder's reach still decode */
	memcpy(dte, ok, sizeof(dte));
	dte[3] |= BIT(15) | BIT(63);
	dte[1] |= BIT(42);
	ck_assert_int_eq(ik_amd_dte_decode(dte, &d), 0);
	ck_assert_uint_eq(d.word3, BIT(15) | BIT(63));
	/* the walker: Mode 0 has no table; V, TV needed; oas in range */
	c = good;
	c.pt = NULL;
	ck_assert_int_eq(ik_amd_dte_build(&c, dte), 0);
	ck_assert_int_eq(ik_amd_walker_from_dte(&w, dte, 48), -EINVAL);
	ck_assert_int_eq(ik_amd_walker_from_dte(&w, ok, 31), -EINVAL);
	ck_assert_int_eq(ik_amd_walker_from_dte(&w, ok, 53), -EINVAL);
	memcpy(dte, ok, sizeof(dte));
	dte[0] &= ~BIT(SPEC_TV);
	ck_assert_int_eq(ik_amd_walker_from_dte(&w, dte, 48), -EINVAL);
	ck_assert_int_eq(ik_amd_dte_decode(NULL, &d), -EINVAL);
	ck_assert_int_eq(ik_amd_dte_decode(ok, NULL), -EINVAL);
	ik_pgtable_destroy(v1);
	ik_pgtable_destroy(v2);
	ik_pgtable_destroy(sl);
}
END_TEST

/* ================================================================ device table */

START_TEST(device_table_size_follows_the_highest_device_id)
{
	static const struct {
		uint32_t max_devid, entries;
	} s[] = { { 0, 128 }, { 127, 128 }, { 128, 256 }, { 0x1234, 0x1280 }, { 0xffff, 0x10000 } };
	struct ik_test_dma f;

	ik_test_dma_init(&f);
	for (unsigned i = 0; i < IK_ARRAY_SIZE(s); i++) {
		struct ik_amd_devtab_config c = { .dma = &f.d, .max_devid = s[i].max_devid };
		struct ik_amd_devtab t;
		uint64_t reg, dte[4];
		const uint64_t *mem;

		ck_assert_int_eq(ik_amd_devtab_init(&t, &c), 0);
		ck_assert_uint_eq(ik_amd_devtab_entries(&t), s[i].entries);
		reg = ik_amd_devtab_reg(&t);
		ck_assert_uint_eq((reg & SPEC_DEVTAB_SIZE_MASK) + 1, s[i].entries * 32 / 4096);
		mem = (const uint64_t *)(uintptr_t)(reg & 0x000ffffffffff000ull);
		/* every entry blocked: V, TV, nothing else */
		for (uint32_t e = 0; e < s[i].entries; e++)
			IK_REQUIRE(mem[4 * e] == (BIT(SPEC_V) | BIT(SPEC_TV)) && !mem[4 * e + 1] &&
				   !mem[4 * e + 2] && !mem[4 * e + 3]);
		ck_assert_int_eq(ik_amd_devtab_read(&t, s[i].entries - 1, dte), 0);
		ck_assert_int_eq(ik_amd_devtab_read(&t, s[i].entries, dte), -EINVAL);
		ik_amd_devtab_fini(&t);
	}
	ck_assert_int_eq(f.allocs, f.frees);
	{
		struct ik_amd_devtab_config c = { .dma = &f.d, .max_devid = 0x10000 };
		struct ik_amd_devtab t, t0;

		memset(&t, 0x3c, sizeof(t));
		t0 = t;
		ck_assert_int_eq(ik_amd_devtab_init(&t, &c), -EINVAL);
		c.max_devid = 10;
		c.oas = 31;
		ck_assert_int_eq(ik_amd_devtab_init(&t, &c), -EINVAL);
		c.oas = 0;
		f.fail_at = 1;
		f.calls = 0;
		ck_assert_int_eq(ik_amd_devtab_init(&t, &c), -ENOMEM);
		ck_assert(memcmp(&t, &t0, sizeof(t)) == 0);
		c.dma = NULL;
		ck_assert_int_eq(ik_amd_devtab_init(&t, &c), -EINVAL);
		ck_assert_int_eq(ik_amd_devtab_init(NULL, &c), -EINVAL);
		ck_assert(memcmp(&t, &t0, sizeof(t)) == 0);
	}
	ck_assert_int_eq(f.allocs, f.frees);
}
END_TEST

/* An issue function that records each plan and the entry as the IOMMU
 * would read it at that moment. */
struct rec {
	const uint64_t *entry;
	unsigned calls;
	int fail;
	struct ik_amd_plan p[4];
	uint64_t seen[4][4];
};

static int rec_issue(void *ctx, const struct ik_amd_plan *p)
{
	struct rec *r = ctx;

	if (r->fail)
		return r->fail;
	ck_assert_uint_lt(r->calls, 4);
	r->p[r->calls] = *p;
	memcpy(r->seen[r->calls], r->entry, 32);
	r->calls++;
	return 0;
}

static bool has_cmd(const struct ik_amd_plan *p, unsigned op, uint16_t id)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->c[i].op == op &&
		    (op == IK_AMD_CMD_INV_IOMMU_PAGES ? p->c[i].domid : p->c[i].devid) == id)
			return true;
	return false;
}

START_TEST(device_table_writes_in_a_safe_order_with_their_invalidations)
{
	struct ik_pgtable *a = mk_pt(IK_PT_AMD_V1, 48), *b = mk_pt(IK_PT_AMD_V1, 39);
	struct ik_amd_devtab_config tc;
	struct ik_amd_dte_config c;
	struct ik_amd_change chg;
	struct ik_amd_devtab t;
	struct ik_test_dma f;
	struct rec r;
	uint64_t d1[4], d2[4], d3[4], blocked[4], cur[4], before[4];
	const uint64_t *mem;

	ik_test_dma_init(&f);
	memset(&tc, 0, sizeof(tc));
	tc.dma = &f.d;
	tc.max_devid = 0x200;
	ck_assert_int_eq(ik_amd_devtab_init(&t, &tc), 0);
	mem = (const uint64_t *)(uintptr_t)(ik_amd_devtab_reg(&t) & 0x000ffffffffff000ull);
	memset(&r, 0, sizeof(r));
	r.entry = mem + 4 * 0x108;
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ik_amd_dte_build(&c, blocked), 0);
	c.pt = a;
	c.prot = IK_PROT_READ | IK_PROT_WRITE;
	c.domid = 5;
	c.flags = IK_AMD_DTE_IOTLB;
	ck_assert_int_eq(ik_amd_dte_build(&c, d1), 0);
	c.pt = b; /* same DomainID, another table: word 0 only */
	ck_assert_int_eq(ik_amd_dte_build(&c, d2), 0);
	c.pt = a; /* another table and DomainID: words 0 and 1 */
	c.domid = 6;
	c.flags = 0;
	ck_assert_int_eq(ik_amd_dte_build(&c, d3), 0);

	/* blocked -> d1: no break, one plan: INVALIDATE_DEVTAB_ENTRY only */
	ck_assert_int_eq(ik_amd_devtab_write(&t, 0x108, d1, rec_issue, &r, &chg), 0);
	ck_assert_uint_eq(r.calls, 1);
	ck_assert(memcmp(r.seen[0], d1, 32) == 0);
	ck_assert(r.p[0].n == 1 && r.p[0].sync && has_cmd(&r.p[0], IK_AMD_CMD_INV_DEVTAB_ENTRY, 0x108));
	ck_assert(!chg.flush_domain && !chg.ats);
	/* unchanged: nothing */
	ck_assert_int_eq(ik_amd_devtab_write(&t, 0x108, d1, rec_issue, &r, NULL), 0);
	ck_assert_uint_eq(r.calls, 1);
	/* d1 -> d2 (one word): no break; the DomainID now names another
	 * table: its translations go, and the ATS device's IOTLB */
	ck_assert_int_eq(ik_amd_devtab_write(&t, 0x108, d2, rec_issue, &r, &chg), 0);
	ck_assert_uint_eq(r.calls, 2);
	ck_assert(memcmp(r.seen[1], d2, 32) == 0);
	ck_assert(chg.flush_domain && chg.ats && chg.domid == 5);
	ck_assert(has_cmd(&r.p[1], IK_AMD_CMD_INV_DEVTAB_ENTRY, 0x108) &&
		  has_cmd(&r.p[1], IK_AMD_CMD_INV_IOMMU_PAGES, 5) &&
		  has_cmd(&r.p[1], IK_AMD_CMD_INV_IOTLB_PAGES, 0x108));
	/* d2 -> d3 (two words, translating): break-before-make.  The first
	 * plan runs while the IOMMU sees the blocked word 0 with the old word
	 * 1, the second once the whole new entry is there. */
	ck_assert_int_eq(ik_amd_devtab_write(&t, 0x108, d3, rec_issue, &r, &chg), 0);
	ck_assert_uint_eq(r.calls, 4);
	ck_assert_uint_eq(r.seen[2][0], BIT(SPEC_V) | BIT(SPEC_TV));
	ck_assert_uint_eq(r.seen[2][1], d2[1]);
	ck_assert(has_cmd(&r.p[2], IK_AMD_CMD_INV_DEVTAB_ENTRY, 0x108) &&
		  has_cmd(&r.p[2], IK_AMD_CMD_INV_IOMMU_PAGES, 5));
	ck_assert(memcmp(r.seen[3], d3, 32) == 0);
	ck_assert(r.p[3].n == 1 && has_cmd(&r.p[3], IK_AMD_CMD_INV_DEVTAB_ENTRY, 0x108));
	/* bad input: nothing written, nothing issued */
	memcpy(before, r.entry, 32);
	r.calls = 0;
	memcpy(cur, d1, sizeof(cur));
	cur[0] |= BIT(63);
	ck_assert_int_eq(ik_amd_devtab_write(&t, 0x108, cur, rec_issue, &r, NULL), -EINVAL);
	ck_assert_int_eq(ik_amd_devtab_write(&t, ik_amd_devtab_entries(&t), d1, rec_issue, &r, NULL),
			 -EINVAL);
	ck_assert_int_eq(ik_amd_devtab_write(&t, 0x108, NULL, rec_issue, &r, NULL), -EINVAL);
	ck_assert_int_eq(ik_amd_devtab_write(NULL, 0x108, d1, rec_issue, &r, NULL), -EINVAL);
	ck_assert(memcmp(before, r.entry, 32) == 0);
	ck_assert_uint_eq(r.calls, 0);
	/* the issue function's error is returned: the entry is left blocked */
	r.fail = -EIO;
	ck_assert_int_eq(ik_amd_devtab_write(&t, 0x108, d2, rec_issue, &r, NULL), -EIO);
	ck_assert_int_eq(ik_amd_devtab_read(&t, 0x108, cur), 0);
	ck_assert_uint_eq(cur[0], blocked[0]);
	ck_assert_uint_eq(cur[1], d3[1]);
	r.fail = 0;
	/* fn NULL: written, nothing issued, *chg still says what to do */
	ck_assert_int_eq(ik_amd_devtab_write(&t, 0x108, d1, NULL, NULL, &chg), 0);
	ck_assert_int_eq(ik_amd_devtab_read(&t, 0x108, cur), 0);
	ck_assert(memcmp(cur, d1, 32) == 0);
	/* to blocked: word 0 first; the old domain's translations go */
	ck_assert_int_eq(ik_amd_devtab_write(&t, 0x108, blocked, rec_issue, &r, &chg), 0);
	ck_assert_uint_eq(r.calls, 1);
	ck_assert(memcmp(r.seen[0], blocked, 32) == 0);
	ck_assert(chg.flush_domain && chg.domid == 5 && chg.ats);
	ik_amd_devtab_fini(&t);
	ck_assert_int_eq(f.allocs, f.frees);
	ik_pgtable_destroy(a);
	ik_pgtable_destroy(b);
}
END_TEST

/* ================================================================ GCR3 */

/* The GCR3 walk as the spec gives it: GLX + 1 levels, 9 PASID bits each
 * from the top, entries V [0] | address [51:12]. */
static uint64_t gcr3_walk(uint64_t root, unsigned glx, uint32_t pasid)
{
	uint64_t tbl = root;

	for (int lvl = (int)glx; lvl >= 0; lvl--) {
		uint64_t e = ((const uint64_t *)(uintptr_t)tbl)[(pasid >> (9 * lvl)) & 511];

		if (lvl == 0)
			return e;
		if (!(e & 1))
			return 0;
		tbl = e & 0x000ffffffffff000ull;
	}
	return 0;
}

START_TEST(gcr3_tables_hold_guest_roots_by_pasid)
{
	static const struct {
		unsigned bits, glx;
		uint32_t pasids[3];
	} k[] = { { 1, 0, { 0, 1, 1 } }, { 9, 0, { 0, 5, 511 } }, { 16, 1, { 0, 513, 0xffff } },
		  { 20, 2, { 0, 0x40201, 0xfffff } } };
	struct ik_pgtable *v2 = mk_pt(IK_PT_AMD_V2, 47), *v2b = mk_pt(IK_PT_AMD_V2, 47);
	struct ik_pgtable *v2_5 = mk_pt(IK_PT_AMD_V2, 56), *v1 = mk_pt(IK_PT_AMD_V1, 48);
	struct ik_test_dma f;

	ik_test_dma_init(&f);
	for (unsigned i = 0; i < IK_ARRAY_SIZE(k); i++) {
		struct ik_amd_gcr3tab_config gc = { .dma = &f.d, .pasid_bits = k[i].bits };
		struct ik_amd_dte_config dc;
		struct ik_amd_change chg;
		struct ik_amd_gcr3tab t;
		struct ik_amd_dte d;
		uint64_t dte[4], e;

		ck_assert_int_eq(ik_amd_gcr3tab_init(&t, &gc), 0);
		memset(&dc, 0, sizeof(dc));
		ik_amd_gcr3tab_dte(&t, &dc);
		ck_assert_uint_eq(dc.glx, k[i].glx);
		ck_assert_uint_eq(dc.gpt_levels, 4);
		dc.prot = IK_PROT_READ | IK_PROT_WRITE;
		ck_assert_int_eq(ik_amd_dte_build(&dc, dte), 0);
		ck_assert_int_eq(ik_amd_dte_decode(dte, &d), 0);
		ck_assert_uint_eq(get_bits(dte, SPEC_GLX, 2), k[i].glx);
		for (unsigned j = 0; j < 3; j++) {
			uint32_t pasid = k[i].pasids[j];

			if (j && pasid == k[i].pasids[j - 1])
				continue;
			ck_assert_uint_eq(gcr3_walk(d.gcr3_root, d.glx, pasid), 0);
			ck_assert_int_eq(ik_amd_gcr3tab_set(&t, pasid, j == 1 ? v2b : v2, &chg), 0);
			ck_assert(chg.kind == IK_AMD_CHANGE_GCR3 && chg.pasid == pasid);
			ck_assert_uint_eq(gcr3_walk(d.gcr3_root, d.glx, pasid),
					  root_of(j == 1 ? v2b : v2) | 1);
			ck_assert_int_eq(ik_amd_gcr3tab_read(&t, pasid, &e), 0);
			ck_assert_uint_eq(e, root_of(j == 1 ? v2b : v2) | 1);
			ck_assert_int_eq(ik_amd_gcr3tab_set(&t, pasid, v2, NULL), -EBUSY);
		}
		/* refused: another format, other levels, out of range */
		ck_assert_int_eq(ik_amd_gcr3tab_set(&t, 2 & ((1u << k[i].bits) - 1), v1, NULL), -EINVAL);
		ck_assert_int_eq(ik_amd_gcr3tab_set(&t, 0, v2_5, NULL), -EINVAL);
		ck_assert_int_eq(ik_amd_gcr3tab_set(&t, 1u << k[i].bits, v2, NULL), -EINVAL);
		ck_assert_int_eq(ik_amd_gcr3tab_read(&t, 1u << k[i].bits, &e), -EINVAL);
		/* clear */
		ck_assert_int_eq(ik_amd_gcr3tab_clear(&t, k[i].pasids[0], &chg), 0);
		ck_assert_uint_eq(gcr3_walk(d.gcr3_root, d.glx, k[i].pasids[0]), 0);
		ck_assert_int_eq(ik_amd_gcr3tab_clear(&t, k[i].pasids[0], &chg), -ENOENT);
		ck_assert_int_eq(ik_amd_gcr3tab_clear(&t, 1u << k[i].bits, &chg), -EINVAL);
		ik_amd_gcr3tab_fini(&t);
		ck_assert_int_eq(f.allocs, f.frees);
	}
	/* 5-level guest tables: the DTE says so once */
	{
		struct ik_amd_gcr3tab_config gc = { .dma = &f.d, .pasid_bits = 4, .gpt_levels = 5 };
		struct ik_amd_dte_config dc;
		struct ik_amd_gcr3tab t;
		uint64_t dte[4];

		ck_assert_int_eq(ik_amd_gcr3tab_init(&t, &gc), 0);
		ck_assert_int_eq(ik_amd_gcr3tab_set(&t, 3, v2_5, NULL), 0);
		ck_assert_int_eq(ik_amd_gcr3tab_set(&t, 4, v2, NULL), -EINVAL);
		memset(&dc, 0, sizeof(dc));
		ik_amd_gcr3tab_dte(&t, &dc);
		ck_assert_int_eq(ik_amd_dte_build(&dc, dte), 0);
		ck_assert_uint_eq(get_bits(dte, SPEC_GPT_LEVEL, 2), 1);
		ik_amd_gcr3tab_fini(&t);
	}
	/* bad configs and allocation failures leave nothing */
	{
		struct ik_amd_gcr3tab_config gc = { .dma = &f.d, .pasid_bits = 0 };
		struct ik_amd_gcr3tab t, t0;
		uint64_t before[512];

		memset(&t, 0x3c, sizeof(t));
		t0 = t;
		ck_assert_int_eq(ik_amd_gcr3tab_init(&t, &gc), -EINVAL);
		gc.pasid_bits = 21;
		ck_assert_int_eq(ik_amd_gcr3tab_init(&t, &gc), -EINVAL);
		gc.pasid_bits = 16;
		gc.gpt_levels = 3;
		ck_assert_int_eq(ik_amd_gcr3tab_init(&t, &gc), -EINVAL);
		gc.gpt_levels = 0;
		f.fail_at = 1;
		f.calls = 0;
		ck_assert_int_eq(ik_amd_gcr3tab_init(&t, &gc), -ENOMEM);
		ck_assert(memcmp(&t, &t0, sizeof(t)) == 0);
		f.fail_at = 0;
		gc.pasid_bits = 20;
		ck_assert_int_eq(ik_amd_gcr3tab_init(&t, &gc), 0);
		memcpy(before, t.root, sizeof(before));
		for (long n = 1; n <= 2; n++) { /* the middle table, then the last one */
			f.fail_at = n;
			f.calls = 0;
			ck_assert_int_eq(ik_amd_gcr3tab_set(&t, 0x40201, v2, NULL), -ENOMEM);
			ck_assert(memcmp(before, t.root, sizeof(before)) == 0);
		}
		f.fail_at = 0;
		ik_amd_gcr3tab_fini(&t);
		ck_assert_int_eq(f.allocs, f.frees);
	}
	ik_pgtable_destroy(v2);
	ik_pgtable_destroy(v2b);
	ik_pgtable_destroy(v2_5);
	ik_pgtable_destroy(v1);
}
END_TEST

/* ================================================================ planner */

/* Every command of a plan encodes, and decodes back to itself. */
static void plan_decodes(const struct ik_amd_plan *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct ik_amd_cmd back;
		uint64_t w[2];

		ck_assert_int_eq(ik_amd_cmd_encode(&p->c[i], w), 0);
		ck_assert_int_eq(ik_amd_cmd_decode(w, &back), 0);
		ck_assert(memcmp(&back, &p->c[i], sizeof(back)) == 0);
	}
}

static void range_of(const struct ik_amd_cmd *c, uint64_t *first, uint64_t *last)
{
	ck_assert_int_eq(ik_amd_inv_decode(c->addr, c->s, first, last), 0);
}

START_TEST(plan_unmap_follows_the_choice_table)
{
	struct ik_pgtable *v1 = mk_pt(IK_PT_AMD_V1, 48), *v2 = mk_pt(IK_PT_AMD_V2, 47);
	struct ik_pgtable *other = mk_pt(IK_PT_AMD_V1, 48), *sl = mk_pt(IK_PT_VTD_SL, 48);
	struct ik_amd_target t;
	struct ik_amd_plan p, p0;
	struct ik_gather g;
	uint64_t first, last;

	memset(&t, 0, sizeof(t));
	t.pt = v1;
	t.domid = 0x1234;
	ik_gather_init(&g);
	/* empty: nothing, no wait */
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 0 && !p.sync);
	/* one page: S = 0, leaf only */
	g.start = 0x5000, g.end = 0x6000, g.pt = v1;
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 1 && p.sync);
	ck_assert(p.c[0].op == IK_AMD_CMD_INV_IOMMU_PAGES && p.c[0].domid == 0x1234 && !p.c[0].s &&
		  p.c[0].addr == 0x5000 && !p.c[0].pde && !p.c[0].gn);
	plan_decodes(&p);
	/* three pages: the smallest S-encoded block holding them */
	g.start = 0x7000, g.end = 0xa000;
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, &p), 0);
	range_of(&p.c[0], &first, &last);
	ck_assert(p.c[0].s && first == 0 && last == 0xffff);
	/* tables freed: PDE */
	g.walk = true;
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.c[0].pde);
	plan_decodes(&p);
	/* 2 MiB block */
	g.start = 0x40200000, g.end = 0x40400000, g.walk = false;
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, &p), 0);
	range_of(&p.c[0], &first, &last);
	ck_assert(first == 0x40200000 && last == 0x403fffff && !p.c[0].pde);
	/* past the threshold: the whole domain, PDE */
	t.max_inv_bytes = 0x100000;
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.c[0].s && p.c[0].addr == IK_AMD_INV_ALL_ADDR && p.c[0].pde);
	t.max_inv_bytes = 0x200000; /* exactly the block: still ranged */
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.c[0].addr != IK_AMD_INV_ALL_ADDR);
	t.max_inv_bytes = 0;
	plan_decodes(&p);
	/* ATS: the device IOTLB, same range */
	t.flags = IK_AMD_TARGET_ATS;
	t.devid = 0x0810;
	t.maxpend = 9;
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 2 && p.c[1].op == IK_AMD_CMD_INV_IOTLB_PAGES && p.c[1].devid == 0x0810 &&
		  p.c[1].maxpend == 9 && p.c[1].addr == p.c[0].addr && p.c[1].s == p.c[0].s);
	plan_decodes(&p);
	/* a guest table: GN and the PASID */
	t.pt = v2;
	t.pasid = 0xabc;
	g.pt = v2;
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.c[0].gn && p.c[0].pasid == 0xabc && p.c[1].gn && p.c[1].pasid == 0xabc);
	plan_decodes(&p);
	t.flags = 0;
	t.pasid = 0xfffff;
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, &p), 0);
	plan_decodes(&p);

	/* refused, *p untouched */
	memset(&p0, 0x6b, sizeof(p0));
#define BAD(mutate)                                                                         \
	do {                                                                                \
		struct ik_amd_target tb = t;                                                \
		struct ik_gather gb = g;                                                    \
		(void)gb;                                                                   \
		mutate;                                                                     \
		p = p0;                                                                     \
		ck_assert_int_eq(ik_amd_plan_unmap(&tb, &gb, &p), -EINVAL);                 \
		ck_assert(memcmp(&p, &p0, sizeof(p)) == 0);                                 \
	} while (0)
	BAD(gb.pt = other);		/* a gather from another table set */
	BAD(tb.pt = sl);		/* not an AMD table */
	BAD(tb.pt = NULL);
	BAD(tb.pasid = 0x100000);
	BAD((tb.pt = v1, gb.pt = v1, tb.pasid = 1)); /* a PASID for the host table */
	BAD(tb.domid = 0x10000);
	BAD(tb.flags = 2);
	BAD((tb.flags = IK_AMD_TARGET_ATS, tb.pasid = 0x10000));
#undef BAD
	p = p0;
	ck_assert_int_eq(ik_amd_plan_unmap(&t, NULL, &p), -EINVAL);
	ck_assert_int_eq(ik_amd_plan_unmap(NULL, &g, &p), -EINVAL);
	ck_assert_int_eq(ik_amd_plan_unmap(&t, &g, NULL), -EINVAL);
	/* range: walk -> PDE; size 0 or wrapping refused */
	t.pt = v1;
	t.pasid = 0;
	ck_assert_int_eq(ik_amd_plan_range(&t, 0x3000, 0x1000, true, &p), 0);
	ck_assert(p.n == 1 && p.c[0].pde && !p.c[0].s && p.c[0].addr == 0x3000);
	ck_assert_int_eq(ik_amd_plan_range(&t, 0x3000, 0, true, &p), -EINVAL);
	ck_assert_int_eq(ik_amd_plan_range(&t, ~0ull, 2, true, &p), -EINVAL);
	ck_assert_int_eq(ik_amd_plan_range(&t, 0, ~0ull, false, &p), 0);
	ck_assert(p.c[0].addr == IK_AMD_INV_ALL_ADDR && p.c[0].pde);
	/* map: nothing, or with NpCache the range (PDE) without the IOTLB */
	t.flags = IK_AMD_TARGET_ATS;
	ck_assert_int_eq(ik_amd_plan_map(0, &t, 0x200000, 0x200000, &p), 0);
	ck_assert(p.n == 0 && !p.sync);
	ck_assert_int_eq(ik_amd_plan_map(IK_AMD_PLAN_NPCACHE, &t, 0x200000, 0x200000, &p), 0);
	ck_assert(p.n == 1 && p.sync && p.c[0].op == IK_AMD_CMD_INV_IOMMU_PAGES && p.c[0].pde);
	plan_decodes(&p);
	ck_assert_int_eq(ik_amd_plan_map(2, &t, 0x200000, 0x200000, &p), -EINVAL);
	ik_pgtable_destroy(v1);
	ik_pgtable_destroy(v2);
	ik_pgtable_destroy(other);
	ik_pgtable_destroy(sl);
}
END_TEST

START_TEST(plan_change_follows_its_table)
{
	struct ik_amd_change c;
	struct ik_amd_plan p, p0;

	memset(&c, 0, sizeof(c));
	c.kind = IK_AMD_CHANGE_DTE;
	c.devid = 0x1f;
	ck_assert_int_eq(ik_amd_plan_change(&c, &p), 0);
	ck_assert(p.n == 1 && p.sync && p.c[0].op == IK_AMD_CMD_INV_DEVTAB_ENTRY &&
		  p.c[0].devid == 0x1f);
	c.flush_domain = true;
	c.domid = 44;
	c.ats = true;
	ck_assert_int_eq(ik_amd_plan_change(&c, &p), 0);
	ck_assert(p.n == 3 && p.c[1].op == IK_AMD_CMD_INV_IOMMU_PAGES && p.c[1].domid == 44 &&
		  p.c[1].addr == IK_AMD_INV_ALL_ADDR && p.c[1].s && p.c[1].pde && !p.c[1].gn);
	ck_assert(p.c[2].op == IK_AMD_CMD_INV_IOTLB_PAGES && p.c[2].devid == 0x1f && p.c[2].s);
	plan_decodes(&p);
	memset(&c, 0, sizeof(c));
	c.kind = IK_AMD_CHANGE_GCR3;
	c.domid = 9;
	c.pasid = 0x345;
	ck_assert_int_eq(ik_amd_plan_change(&c, &p), 0);
	ck_assert(p.n == 1 && p.c[0].op == IK_AMD_CMD_INV_IOMMU_PAGES && p.c[0].gn &&
		  p.c[0].pasid == 0x345 && p.c[0].domid == 9 && p.c[0].pde);
	c.ats = true;
	c.devid = 3;
	ck_assert_int_eq(ik_amd_plan_change(&c, &p), 0);
	ck_assert(p.n == 2 && p.c[1].gn && p.c[1].pasid == 0x345 && p.c[1].devid == 3);
	plan_decodes(&p);
	memset(&p0, 0x6b, sizeof(p0));
	p = p0;
	c.pasid = 0x10000; /* ats: 16 bits */
	ck_assert_int_eq(ik_amd_plan_change(&c, &p), -EINVAL);
	c.ats = false;
	c.pasid = 0x100000;
	ck_assert_int_eq(ik_amd_plan_change(&c, &p), -EINVAL);
	c.pasid = 0;
	c.kind = 3;
	ck_assert_int_eq(ik_amd_plan_change(&c, &p), -EINVAL);
	ck_assert(memcmp(&p, &p0, sizeof(p)) == 0);
	ck_assert_int_eq(ik_amd_plan_change(NULL, &p), -EINVAL);
	ck_assert_int_eq(ik_amd_plan_change(&c, NULL), -EINVAL);
}
END_TEST

/* ================================================================ end to end */

/* A device table, an ik_cmdq of the AMD format, consumed inline by the soft
 * IOMMU (the PROD write drains it), whose stream 0 is attached to what the
 * IOMMU would walk for the DTE of DEVID, tagged with its DomainID. */
#define DEVID 0x0818u

struct sys {
	struct ik_softiommu *s;
	struct ik_softiommu_cq cq;
	struct ik_cmdq *q;
	void *ring;
	struct ik_amd_devtab dt;
	struct ik_test_dma f;
	struct ik_amd_target t;
	unsigned flush_walks;
};

static void sys_init(struct sys *y)
{
	struct ik_softiommu_config sc;
	struct ik_amd_devtab_config tc;

	memset(y, 0, sizeof(*y));
	ik_softiommu_config_init(&sc);
	sc.flags = IK_SOFTIOMMU_CHECK;
	sc.phys_to_host = ik_softiommu_host_identity;
	ck_assert_int_eq(ik_softiommu_create(&sc, &y->s), 0);
	y->ring = ik_test_soft_cmdq(y->s, &ik_cmdq_fmt_amd, 6, IK_CMDQ_CFG_NO_WRAP, NULL, &y->cq,
				    &y->q);
	ik_test_dma_init(&y->f);
	memset(&tc, 0, sizeof(tc));
	tc.dma = &y->f.d;
	tc.max_devid = DEVID;
	ck_assert_int_eq(ik_amd_devtab_init(&y->dt, &tc), 0);
}

static void sys_fini(struct sys *y)
{
	ik_amd_devtab_fini(&y->dt);
	ik_cmdq_destroy(y->q);
	ik_softiommu_destroy(y->s);
	free(y->ring);
}

/* Point stream 0 at the DTE's translation, as the IOMMU reads it. */
static void attach_from_dte(struct sys *y, const struct ik_pgtable *v2, uint32_t pasid)
{
	struct ik_amd_dte d;
	struct ik_pt_walker w;
	uint64_t dte[4];

	ck_assert_int_eq(ik_amd_devtab_read(&y->dt, DEVID, dte), 0);
	ck_assert_int_eq(ik_amd_dte_decode(dte, &d), 0);
	if (!v2) {
		ck_assert_int_eq(ik_amd_walker_from_dte(&w, dte, 48), 0);
	} else {
		/* the guest table the GCR3 table names for the PASID */
		struct ik_pgtable_info info;
		struct ik_pgtable_cfg c;
		uint64_t e = gcr3_walk(d.gcr3_root, d.glx, pasid);

		ck_assert(e & 1);
		ik_pgtable_get_info(v2, &info);
		memset(&c, 0, sizeof(c));
		c.fmt = IK_PT_AMD_V2;
		c.ias = d.gpt_level ? 56 : 47;
		c.oas = 48;
		c.pgsize_bitmap = BIT(12) | BIT(21) | BIT(30);
		c.coherent = true;
		ck_assert_int_eq(ik_pt_walker_init(&w, &c, e & 0x000ffffffffff000ull), 0);
		ck_assert_uint_eq(w.root, info.root_iommu);
	}
	ck_assert_int_eq(ik_softiommu_attach_pt(y->s, 0, d.domid, &w, &ik_softiommu_host_mem), 0);
}

static void e2e_flush_walk(void *cookie, uint64_t iova, uint64_t size, uint64_t granule)
{
	struct sys *y = cookie;
	struct ik_amd_plan p;

	(void)granule;
	y->flush_walks++;
	ck_assert_int_eq(ik_amd_plan_range(&y->t, iova, size, true, &p), 0);
	ck_assert(p.n >= 1 && p.c[0].pde);
	ck_assert_int_eq(ik_amd_plan_issue(y->q, &p), 0);
}

static void e2e_sync_map(void *cookie, uint64_t iova, uint64_t size)
{
	struct sys *y = cookie;
	struct ik_amd_plan p;

	ck_assert_int_eq(ik_amd_plan_map(IK_AMD_PLAN_NPCACHE, &y->t, iova, size, &p), 0);
	ck_assert_int_eq(ik_amd_plan_issue(y->q, &p), 0);
}

/* ik_test_churn()'s invalidation: the unmap's plan, issued. */
static int e2e_inval(void *ctx, struct ik_gather *g)
{
	struct sys *y = ctx;
	struct ik_amd_plan p;
	int err = ik_amd_plan_unmap(&y->t, g, &p);

	return err ? err : ik_amd_plan_issue(y->q, &p);
}

/*
 * The planner end to end, for a host (amd-v1, Mode 4) table behind a DTE
 * and a guest (amd-v2) table behind a GCR3 entry: maps, device accesses
 * (filling the soft IOMMU's IOTLB and walk cache), unmaps (leaf ones, whole
 * tables, blocks), each followed by the planned invalidations issued
 * through the queue; the stale-translation checker then finds nothing, and
 * every access to an unmapped range faults.  Without the invalidation it
 * does find the stale entry.
 */
START_TEST(planned_invalidations_leave_no_stale_translation)
{
	for (unsigned k = 0; k < 3; k++) {
		const size_t span = 8u << 20;
		const bool guest = k == 2;
		struct ik_pgtable_hooks hooks = { 0 };
		struct ik_amd_gcr3tab gt;
		struct ik_amd_dte_config dc;
		struct ik_amd_change chg;
		struct ik_amd_plan p;
		struct ik_rng rng = { 0xa3d + k };
		struct ik_pgtable *pt;
		unsigned char *buf;
		bool *mapped;
		long iters = ik_test_iters(300);
		uint64_t dte[4];
		struct sys y;

		sys_init(&y);
		hooks.flush_walk = e2e_flush_walk;
		hooks.iotlb_sync_map = e2e_sync_map;
		pt = mk_pt_hooks(guest ? IK_PT_AMD_V2 : IK_PT_AMD_V1, guest ? 47 : 48, 0, &hooks, &y);
		y.t.pt = pt;
		y.t.domid = 0x2a;
		y.t.pasid = guest ? 0x155 : 0;
		y.t.max_inv_bytes = k == 1 ? (1u << 20) : 0; /* k 1: the whole-domain form too */
		memset(&dc, 0, sizeof(dc));
		dc.prot = IK_PROT_READ | IK_PROT_WRITE;
		dc.domid = 0x2a;
		if (guest) {
			struct ik_amd_gcr3tab_config gc = { .dma = &y.f.d, .pasid_bits = 16 };

			ck_assert_int_eq(ik_amd_gcr3tab_init(&gt, &gc), 0);
			ck_assert_int_eq(ik_amd_gcr3tab_set(&gt, 0x155, pt, &chg), 0);
			chg.domid = 0x2a;
			ck_assert_int_eq(ik_amd_plan_change(&chg, &p), 0);
			ck_assert_int_eq(ik_amd_plan_issue(y.q, &p), 0);
			ik_amd_gcr3tab_dte(&gt, &dc);
		} else {
			dc.pt = pt;
		}
		ck_assert_int_eq(ik_amd_dte_build(&dc, dte), 0);
		ck_assert_int_eq(ik_amd_devtab_write(&y.dt, DEVID, dte, ik_amd_issue_cmdq, y.q, &chg), 0);
		attach_from_dte(&y, guest ? pt : NULL, 0x155);
		buf = ik_test_churn_mem(span, &mapped);
		/* Deterministic first: a page (its table made), the page
		 * unmapped (leaf only), a 2 MiB block over the now empty table
		 * (the engine's flush_walk: PDE before the table is freed),
		 * the block unmapped. */
		{
			uint64_t v = 7, iova = 0x40000000ull + span - (2u << 20);
			struct ik_gather g;

			ik_test_map_unmap(pt, y.s, iova + 0x3000, buf, &g);
			ck_assert_int_eq(ik_amd_plan_unmap(&y.t, &g, &p), 0);
			ck_assert(p.n == 1 && !p.c[0].pde && !p.c[0].s && p.c[0].gn == guest);
			ck_assert_int_eq(ik_amd_plan_issue(y.q, &p), 0);
			ik_pgtable_gather_sync(pt, &g);
			ck_assert_int_eq(ik_pgtable_map(pt, iova,
							(uint64_t)(uintptr_t)buf + span - (2u << 20),
							2u << 20, IK_PROT_READ | IK_PROT_WRITE), 0);
			ck_assert_uint_eq(y.flush_walks, 1);
			ck_assert_int_eq(ik_softiommu_dma_write(y.s, 0, iova + 0x3000, &v, 8), 0);
			ik_gather_init(&g);
			ck_assert_int_eq(ik_pgtable_unmap(pt, iova, 2u << 20, &g), 2u << 20);
			ck_assert_int_eq(ik_amd_plan_unmap(&y.t, &g, &p), 0);
			ck_assert_int_eq(ik_amd_plan_issue(y.q, &p), 0);
			ik_pgtable_gather_sync(pt, &g);
			ik_test_gone(y.s, iova + 0x3000);
		}
		ik_test_churn(pt, y.s, 0x40000000ull, buf, span, mapped, iters, &rng, e2e_inval, &y);
		ck_assert_uint_eq(y.cq.rejected, 0);
		/* Control: an unmap without its invalidation is caught. */
		{
			struct ik_gather g;

			ik_test_stale_control(pt, y.s, 0x80000000ull, buf, &g);
			ik_pgtable_gather_sync(pt, &g);
		}
		/* Detach: the DTE blocked, its plan issued; the domain's cached
		 * translations are gone with it. */
		ck_assert_int_eq(ik_amd_dte_build(&(struct ik_amd_dte_config){ 0 }, dte), 0);
		ck_assert_int_eq(ik_amd_devtab_write(&y.dt, DEVID, dte, ik_amd_issue_cmdq, y.q, &chg),
				 0);
		ck_assert(chg.flush_domain && chg.domid == 0x2a);
		if (guest)
			ik_amd_gcr3tab_fini(&gt);
		sys_fini(&y);
		ck_assert_int_eq(y.f.allocs, y.f.frees);
		ik_pgtable_destroy(pt);
		free(buf);
		free(mapped);
	}
}
END_TEST

/*
 * What QEMU 7.2's amd-iommu cannot show (tests/qemu-hil.sh q35-amd names
 * each departure), shown on the soft IOMMU walking what the DTE says:
 *   - an IOVA above the DTE's Mode faults (QEMU: aliases into the range);
 *   - a not-present PTE faults (QEMU: silently dropped);
 *   - an INVALIDATE_IOMMU_PAGES of one page (S = 0) leaves the neighbour's
 *     cached translation (the stale checker reports it; QEMU drops the
 *     whole DomainID);
 *   - cached translations are tagged with the DomainID: after a DTE switch
 *     to another DomainID, INVALIDATE_DEVTAB_ENTRY (and the IOMMU fetching
 *     the new DTE) is enough (QEMU keys its IOTLB by device).
 */
START_TEST(soft_iommu_shows_what_qemu_cannot)
{
	struct ik_pgtable_hooks hooks = { 0 };
	struct ik_pgtable *a, *b;
	struct ik_amd_dte_config dc;
	struct ik_amd_change chg;
	struct ik_amd_plan p;
	struct ik_softiommu_xlate x;
	struct ik_softiommu_fault f;
	struct ik_softiommu_stale rep;
	struct ik_amd_cmd c;
	struct ik_gather g;
	uint64_t dte[4], w[2];
	const uint64_t iova = 0x10000000ull;
	unsigned char *pa, *pb;
	struct sys y;

	sys_init(&y);
	hooks.flush_walk = e2e_flush_walk;
	a = mk_pt_hooks(IK_PT_AMD_V1, 30, 0, &hooks, &y);	/* Mode 2 */
	b = mk_pt_hooks(IK_PT_AMD_V1, 30, 0, &hooks, &y);
	pa = aligned_alloc(4096, 3 * 4096);
	pb = aligned_alloc(4096, 4096);
	ck_assert(pa && pb);
	ck_assert_int_eq(ik_pgtable_map(a, iova, (uintptr_t)pa, 2 * 4096,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	ck_assert_int_eq(ik_pgtable_map(b, iova, (uintptr_t)pb, 4096,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	memset(&dc, 0, sizeof(dc));
	dc.pt = a;
	dc.prot = IK_PROT_READ | IK_PROT_WRITE;
	dc.domid = 1;
	ck_assert_int_eq(ik_amd_dte_build(&dc, dte), 0);
	ck_assert_int_eq(ik_amd_devtab_write(&y.dt, DEVID, dte, ik_amd_issue_cmdq, y.q, &chg), 0);
	attach_from_dte(&y, NULL, 0);

	/* IOVA above Mode 2's 30 bits: a fault, not IOVA's page. */
	ck_assert_int_eq(ik_softiommu_translate(y.s, 0, iova, IK_SOFTIOMMU_WRITE, &x), 0);
	ck_assert_uint_eq(x.oa, (uintptr_t)pa);
	ck_assert_int_eq(ik_softiommu_translate(y.s, 0, iova + (1ull << 30), IK_SOFTIOMMU_WRITE,
						&x), -EFAULT);
	ck_assert_int_eq(ik_softiommu_fault_pop(y.s, &f), 0);
	ck_assert_uint_eq(f.type, IK_SOFTIOMMU_FAULT_TRANSLATION); /* IOVA beyond ias */
	ck_assert_uint_eq(f.iova, iova + (1ull << 30));
	ck_assert_uint_eq(f.tag, 1);
	/* A not-present PTE: a fault. */
	ck_assert_int_eq(ik_softiommu_translate(y.s, 0, iova + 0x5000, IK_SOFTIOMMU_READ, &x),
			 -EFAULT);
	ck_assert_int_eq(ik_softiommu_fault_pop(y.s, &f), 0);
	ck_assert_uint_eq(f.type, IK_SOFTIOMMU_FAULT_TRANSLATION);
	ck_assert_uint_eq(f.iova, iova + 0x5000);

	/* Both pages cached; page 2 remapped without its own invalidation;
	 * INVALIDATE_IOMMU_PAGES of page 1 only (S = 0): page 2's cached
	 * translation stays, the checker finds it stale. */
	ck_assert_int_eq(ik_softiommu_translate(y.s, 0, iova + 0x1000, IK_SOFTIOMMU_READ, &x), 0);
	ik_gather_init(&g);
	ck_assert_int_eq(ik_pgtable_unmap(a, iova + 0x1000, 4096, &g), 4096);
	ck_assert_int_eq(ik_pgtable_gather_sync(a, &g), 0);
	ck_assert_int_eq(ik_pgtable_map(a, iova + 0x1000, (uintptr_t)pa + 0x2000, 4096,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	y.t.pt = a;
	y.t.domid = 1;
	ck_assert_int_eq(ik_amd_plan_range(&y.t, iova, 4096, false, &p), 0);
	ck_assert(p.n == 1 && p.c[0].s == 0 && p.c[0].addr == iova);
	ck_assert_int_eq(ik_amd_plan_issue(y.q, &p), 0);
	(void)ik_softiommu_translate(y.s, 0, iova + 0x1000, IK_SOFTIOMMU_READ, &x);
	ck_assert_int_eq(ik_softiommu_stale_pop(y.s, &rep), 0);
	ck_assert_uint_eq(rep.iova, iova + 0x1000);
	ck_assert_uint_eq(rep.tag, 1);
	while (ik_softiommu_fault_pop(y.s, &f) == 0)
		;
	/* ... until its own invalidation. */
	ck_assert_int_eq(ik_amd_plan_range(&y.t, iova + 0x1000, 4096, false, &p), 0);
	ck_assert_int_eq(ik_amd_plan_issue(y.q, &p), 0);
	ck_assert_int_eq(ik_softiommu_translate(y.s, 0, iova + 0x1000, IK_SOFTIOMMU_READ, &x), 0);
	ck_assert_uint_eq(x.oa, (uintptr_t)pa + 0x2000);
	ck_assert_int_eq(ik_softiommu_stale_pop(y.s, &rep), -ENOENT);

	/* A DTE switch to DomainID 2 with only INVALIDATE_DEVTAB_ENTRY: the
	 * IOMMU fetches the new DTE, and DomainID 2 has nothing cached, so
	 * table b's page - although DomainID 1's translation of the same IOVA
	 * is still cached. */
	ck_assert_int_eq(ik_softiommu_translate(y.s, 0, iova, IK_SOFTIOMMU_READ, &x), 0);
	dc.pt = b;
	dc.domid = 2;
	ck_assert_int_eq(ik_amd_dte_build(&dc, dte), 0);
	ck_assert_int_eq(ik_amd_devtab_write(&y.dt, DEVID, dte, NULL, NULL, &chg), 0);
	ck_assert(chg.flush_domain); /* the planner would also flush DomainID 1 */
	memset(&c, 0, sizeof(c));
	c.op = IK_AMD_CMD_INV_DEVTAB_ENTRY;
	c.devid = DEVID;
	ck_assert_int_eq(ik_amd_cmd_encode(&c, w), 0);
	ck_assert_int_eq(ik_cmdq_issue(y.q, w, 1, IK_CMDQ_SYNC), 0);
	attach_from_dte(&y, NULL, 0);
	ck_assert_int_eq(ik_softiommu_translate(y.s, 0, iova, IK_SOFTIOMMU_READ, &x), 0);
	ck_assert_uint_eq(x.oa, (uintptr_t)pb);
	ck_assert_int_eq(ik_softiommu_stale_pop(y.s, &rep), -ENOENT);

	ik_pgtable_destroy(a);
	ik_pgtable_destroy(b);
	free(pa);
	free(pb);
	sys_fini(&y);
}
END_TEST

/* ================================================================ register file and bring-up */

/* Register offsets and bits from pub. 48882 "MMIO Registers", as numbers. */
#define R_DEVTAB 0x0000u
#define R_CMDBASE 0x0008u
#define R_EVTBASE 0x0010u
#define R_CONTROL 0x0018u
#define R_EFR 0x0030u
#define R_PPRBASE 0x0038u
#define R_CMDHEAD 0x2000u
#define R_CMDTAIL 0x2008u
#define R_EVTHEAD 0x2010u
#define R_EVTTAIL 0x2018u
#define R_STATUS 0x2020u
#define R_PPRHEAD 0x2030u
#define R_PPRTAIL 0x2038u
#define C_IOMMUEN BIT(0)
#define C_EVTLOGEN BIT(2)
#define C_CMDBUFEN BIT(12)
#define C_PPRLOGEN BIT(13)
#define S_EVTOVF (1u << 0)
#define S_EVTRUN (1u << 3)
#define S_CMDRUN (1u << 4)
#define S_PPROVF (1u << 5)
#define S_PPRRUN (1u << 7)
#define EFR_PPRSUP BIT(1)
#define EFR_GTSUP BIT(4)
#define EFR_IASUP BIT(6)
#define RING_LEN(base) (1u << (((base) >> 56) & 0xf))
#define RING_ADDR(base) ((base) & 0x000ffffffffff000ull)

/*
 * A model of the IOMMU's register file, as the specification describes it:
 * Run bits follow their enables (a 0 -> 1 edge of CmdBufEn restarts a
 * stopped command buffer at Head); a Tail write makes it consume commands
 * from Head, decoded with the library's own decoder (which refuses what the
 * IOMMU calls illegal): an illegal command stops it (CmdBufRun = 0, Head at
 * the command) and logs ILLEGAL_COMMAND_ERROR with the command's address;
 * COMPLETION_WAIT with S stores its data.  Events go into the event log
 * (overflow: EventOverflow set, EventLogRun cleared).  With qemu_head,
 * Head reads as QEMU 7.2's does: the length of the buffer right after the
 * last slot.  Only 32-bit accessors: 64-bit registers are written low half
 * first, which the model applies as it comes.
 */
struct amdm {
	uint64_t devtab, cmdbase, evtbase, ctrl, efr, pprbase;
	uint64_t cmd_head, evt_head, evt_tail, ppr_head, ppr_tail, cmd_tail;
	uint32_t sts, hidx;
	bool qemu_head, no_run; /* no_run: Run bits never come on */
	unsigned illegal, inv_all, inv_dte, waits, cmds, ctrl_writes;
	uint32_t woff[512];
	unsigned nw;
};

static void *host(uint64_t a)
{
	return (void *)(uintptr_t)a;
}

static void m_log_entry(struct amdm *m, uint64_t base, uint64_t *head, uint64_t *tail,
			uint32_t run, uint32_t ovf, const uint64_t rec[2])
{
	uint32_t n = RING_LEN(base), t = (uint32_t)(*tail >> 4);
	uint64_t *e;

	if (!(m->sts & run))
		return;
	if ((t + 1) % n == (uint32_t)(*head >> 4)) {
		m->sts |= ovf;
		m->sts &= ~run;
		return;
	}
	e = host(RING_ADDR(base) + (uint64_t)t * 16);
	e[0] = rec[0];
	e[1] = rec[1];
	*tail = (uint64_t)((t + 1) % n) << 4;
}

static void m_event(struct amdm *m, const uint64_t rec[2])
{
	m_log_entry(m, m->evtbase, &m->evt_head, &m->evt_tail, S_EVTRUN, S_EVTOVF, rec);
}

static void m_ppr(struct amdm *m, const uint64_t rec[2])
{
	m_log_entry(m, m->pprbase, &m->ppr_head, &m->ppr_tail, S_PPRRUN, S_PPROVF, rec);
}

static void m_run(struct amdm *m)
{
	uint32_t n = RING_LEN(m->cmdbase);

	while ((m->sts & S_CMDRUN) && m->hidx != (uint32_t)(m->cmd_tail >> 4)) {
		uint64_t a = RING_ADDR(m->cmdbase) + (uint64_t)m->hidx * 16;
		uint64_t *w = host(a);
		struct ik_amd_cmd c;

		if (ik_amd_cmd_decode(w, &c)) {
			uint64_t rec[2] = { (uint64_t)5 << 60, a };

			m->illegal++;
			m->sts &= ~S_CMDRUN;
			m->cmd_head = (uint64_t)m->hidx << 4;
			m_event(m, rec);
			return;
		}
		m->cmds++;
		if (c.op == IK_AMD_CMD_COMPLETION_WAIT) {
			m->waits++;
			if (c.store)
				__atomic_store_n((uint64_t *)host(c.store_addr), c.store_data,
						 __ATOMIC_RELEASE);
		} else if (c.op == IK_AMD_CMD_INV_IOMMU_ALL) {
			m->inv_all++;
		} else if (c.op == IK_AMD_CMD_INV_DEVTAB_ENTRY) {
			m->inv_dte++;
		}
		m->cmd_head = m->qemu_head ? (uint64_t)(m->hidx + 1) << 4
					   : (uint64_t)((m->hidx + 1) % n) << 4;
		m->hidx = (m->hidx + 1) % n;
	}
}

static void m_control(struct amdm *m, uint64_t v)
{
	uint64_t old = m->ctrl;

	m->ctrl = v;
	m->ctrl_writes++;
	if (m->no_run)
		return;
	if ((v & C_CMDBUFEN) && !(old & C_CMDBUFEN))
		m->sts |= S_CMDRUN;
	if (!(v & C_CMDBUFEN))
		m->sts &= ~S_CMDRUN;
	if ((v & C_EVTLOGEN) && !(old & C_EVTLOGEN))
		m->sts |= S_EVTRUN;
	if (!(v & C_EVTLOGEN))
		m->sts &= ~S_EVTRUN;
	if ((v & C_PPRLOGEN) && !(old & C_PPRLOGEN) && (m->efr & EFR_PPRSUP))
		m->sts |= S_PPRRUN;
	if (!(v & C_PPRLOGEN))
		m->sts &= ~S_PPRRUN;
	m_run(m);
}

static uint64_t *m_reg(struct amdm *m, uint32_t off)
{
	switch (off & ~7u) {
	case R_DEVTAB: return &m->devtab;
	case R_CMDBASE: return &m->cmdbase;
	case R_EVTBASE: return &m->evtbase;
	case R_CONTROL: return &m->ctrl;
	case R_EFR: return &m->efr;
	case R_PPRBASE: return &m->pprbase;
	case R_CMDHEAD: return &m->cmd_head;
	case R_CMDTAIL: return &m->cmd_tail;
	case R_EVTHEAD: return &m->evt_head;
	case R_EVTTAIL: return &m->evt_tail;
	case R_PPRHEAD: return &m->ppr_head;
	case R_PPRTAIL: return &m->ppr_tail;
	default: return NULL;
	}
}

static uint32_t m_read32(void *ctx, uint32_t off)
{
	struct amdm *m = ctx;
	uint64_t *r;

	ck_assert_uint_eq(off & 3, 0);
	if (off == R_STATUS)
		return m->sts;
	if (off == R_STATUS + 4)
		return 0;
	r = m_reg(m, off);
	ck_assert_msg(r != NULL, "read of unmodelled register %#x", off);
	return (uint32_t)(*r >> (off & 4 ? 32 : 0));
}

static void m_write32(void *ctx, uint32_t off, uint32_t v)
{
	struct amdm *m = ctx;
	uint64_t *r, nv;

	ck_assert_uint_eq(off & 3, 0);
	if (m->nw < 512)
		m->woff[m->nw++] = off;
	if (off == R_STATUS) {
		m->sts &= ~(v & 0x67u); /* overflow and interrupt bits: RW1C */
		return;
	}
	if (off == R_STATUS + 4)
		return;
	r = m_reg(m, off);
	ck_assert_msg(r != NULL && off != R_EFR && off != R_EFR + 4,
		      "write of unmodelled register %#x", off);
	nv = off & 4 ? (*r & 0xffffffffull) | (uint64_t)v << 32 : (*r & ~0xffffffffull) | v;
	if ((off & ~7u) == R_CONTROL) {
		m_control(m, nv);
		return;
	}
	*r = nv;
	if (off == R_CMDHEAD)
		m->hidx = (v >> 4) & (RING_LEN(m->cmdbase) - 1);
	if (off == R_CMDTAIL)
		m_run(m);
}

struct arig {
	struct amdm m;
	struct ik_mmio mmio;
	struct ik_test_dma f;
	struct ik_fault_alloc fa;
	struct ik_amd_config cfg;
	struct ik_amd *u;
};

static void arig_init(struct arig *r, uint64_t efr)
{
	memset(r, 0, sizeof(*r));
	r->m.efr = efr;
	r->mmio.read32 = m_read32;
	r->mmio.write32 = m_write32;
	r->mmio.ctx = &r->m;
	ik_test_dma_init(&r->f);
	ik_fault_alloc_init(&r->fa);
	r->cfg.mmio = &r->mmio;
	r->cfg.dma = &r->f.d;
	r->cfg.alloc = &r->fa.a;
	r->cfg.max_devid = 0xff;
	r->cfg.timeout_ns = ik_test_timeout_ns(2000000000ull);
}

static void arig_up(struct arig *r)
{
	ck_assert_int_eq(ik_amd_create(&r->cfg, &r->u), 0);
	ck_assert_int_eq(ik_amd_enable(r->u), 0);
}

static void arig_fini(struct arig *r)
{
	ik_amd_destroy(r->u);
	ck_assert_int_eq(r->f.allocs, r->f.frees);
	ck_assert_int_eq(r->fa.live, 0);
}

static unsigned woff_index(const struct amdm *m, uint32_t off, unsigned from)
{
	for (unsigned i = from; i < m->nw; i++)
		if (m->woff[i] == off)
			return i;
	return ~0u;
}

START_TEST(efr_fields_at_spec_positions)
{
	struct ik_amd_hwcaps c;

	ck_assert_int_eq(ik_amd_hwcaps_decode(0, NULL), -EINVAL);
	ck_assert_int_eq(ik_amd_hwcaps_decode(BIT(0), &c), 0);
	ck_assert(c.pref && !c.ppr && !c.gt);
	ck_assert_int_eq(ik_amd_hwcaps_decode(BIT(1) | BIT(4) | BIT(6) | BIT(7) | BIT(8) | BIT(9),
					      &c), 0);
	ck_assert(c.ppr && c.gt && c.ia && c.ga && c.he && c.pc && !c.xt && !c.nx);
	ck_assert_int_eq(ik_amd_hwcaps_decode(BIT(2) | BIT(3) | BIT(37) | BIT(48) | BIT(49) |
					      BIT(50) | BIT(52), &c), 0);
	ck_assert(c.xt && c.nx && c.us && c.gio && c.ha && c.eph && c.hd && !c.gt);
	/* HATS [11:10] = 10b: 6 levels; GATS [13:12] = 01b: 5; GLXSup [15:14]
	 * = 10b; PASmax [36:32] = 15 with GTSup: 16 PASID bits. */
	ck_assert_int_eq(ik_amd_hwcaps_decode((2ull << 10) | (1ull << 12) | (2ull << 14) |
					      (15ull << 32) | BIT(4) | (3ull << 16) |
					      (5ull << 18) | (6ull << 21) | (2ull << 38), &c), 0);
	ck_assert_uint_eq(c.hats, 2);
	ck_assert_uint_eq(c.host_levels, 6);
	ck_assert_uint_eq(c.guest_levels, 5);
	ck_assert_uint_eq(c.glx_sup, 2);
	ck_assert_uint_eq(c.pasmax, 15);
	ck_assert_uint_eq(c.pasid_bits, 16);
	ck_assert_uint_eq(c.smif_sup, 3);
	ck_assert_uint_eq(c.smif_rc, 5);
	ck_assert_uint_eq(c.gam_sup, 6);
	ck_assert_uint_eq(c.devtblseg, 2);
	/* HATS 11b is reserved; PASmax without GTSup gives no PASIDs. */
	ck_assert_int_eq(ik_amd_hwcaps_decode((3ull << 10) | (15ull << 32), &c), 0);
	ck_assert_uint_eq(c.host_levels, 0);
	ck_assert_uint_eq(c.pasid_bits, 0);
}
END_TEST

/* An event log entry from spec positions: DeviceID [15:0], PASID[19:16]
 * [19:16], DomainID/PASID[15:0] [47:32], flags [59:48], EventCode [63:60],
 * address [127:64]. */
static void evt_rec(uint64_t rec[2], unsigned code, uint16_t devid, uint32_t tag16, unsigned hi4,
		    uint16_t flags, uint64_t addr)
{
	rec[0] = (uint64_t)code << 60 | (uint64_t)(flags & 0xfff) << 48 | (uint64_t)tag16 << 32 |
		 (uint64_t)(hi4 & 0xf) << 16 | devid;
	rec[1] = addr;
}

START_TEST(event_records_decode_at_spec_positions)
{
	static const struct {
		unsigned code;
		const char *name;
	} names[] = {
		{ 0x1, "ILLEGAL_DEV_TABLE_ENTRY" }, { 0x2, "IO_PAGE_FAULT" },
		{ 0x3, "DEV_TAB_HARDWARE_ERROR" }, { 0x4, "PAGE_TAB_HARDWARE_ERROR" },
		{ 0x5, "ILLEGAL_COMMAND_ERROR" }, { 0x6, "COMMAND_HARDWARE_ERROR" },
		{ 0x7, "IOTLB_INV_TIMEOUT" }, { 0x8, "INVALID_DEVICE_REQUEST" },
	};
	struct ik_amd_event e, before;
	uint64_t rec[2];

	for (unsigned i = 0; i < IK_ARRAY_SIZE(names); i++)
		ck_assert_str_eq(ik_amd_event_name(names[i].code), names[i].name);
	ck_assert_ptr_null(ik_amd_event_name(0xb));
	ck_assert_ptr_null(ik_amd_event_name(0));

	/* IO_PAGE_FAULT, GN = 0: DomainID; RW [53], PR [52], I [51], US [50],
	 * NX [49], PE [54], RZ [55], TR [56] each alone. */
	evt_rec(rec, 2, 0x0318, 0x1234, 0, 0, 0xdeadb000ull);
	ck_assert_int_eq(ik_amd_event_decode(rec, &e), 0);
	ck_assert_uint_eq(e.code, IK_AMD_EVT_IO_PAGE_FAULT);
	ck_assert_uint_eq(e.devid, 0x0318);
	ck_assert_uint_eq(e.domid, 0x1234);
	ck_assert_uint_eq(e.pasid, 0);
	ck_assert_uint_eq(e.addr, 0xdeadb000ull);
	ck_assert(!e.write && !e.present && !e.gn);
	static const unsigned fl[] = { 53, 52, 51, 50, 49, 54, 55, 56 };
	for (unsigned i = 0; i < IK_ARRAY_SIZE(fl); i++) {
		evt_rec(rec, 2, 1, 0, 0, (uint16_t)(1u << (fl[i] - 48)), 0);
		ck_assert_int_eq(ik_amd_event_decode(rec, &e), 0);
		ck_assert_uint_eq(e.flags, 1u << (fl[i] - 48));
		ck_assert_int_eq(e.write, fl[i] == 53);
		ck_assert_int_eq(e.present, fl[i] == 52);
		ck_assert_int_eq(e.intr, fl[i] == 51);
		ck_assert_int_eq(e.us, fl[i] == 50);
		ck_assert_int_eq(e.nx, fl[i] == 49);
		ck_assert_int_eq(e.pe, fl[i] == 54);
		ck_assert_int_eq(e.rz, fl[i] == 55);
		ck_assert_int_eq(e.tr, fl[i] == 56);
	}
	/* GN = 1 [48]: a 20-bit PASID from [19:16] and [47:32]. */
	evt_rec(rec, 2, 7, 0xbeef, 0xa, 1, 0x1000);
	ck_assert_int_eq(ik_amd_event_decode(rec, &e), 0);
	ck_assert(e.gn);
	ck_assert_uint_eq(e.pasid, 0xabeef);
	ck_assert_uint_eq(e.domid, 0);
	/* PAGE_TAB_HARDWARE_ERROR: Type [58:57]. */
	evt_rec(rec, 4, 9, 0x55, 0, (uint16_t)(2u << 9), 0x12345678ull);
	ck_assert_int_eq(ik_amd_event_decode(rec, &e), 0);
	ck_assert_uint_eq(e.type, 2);
	ck_assert_uint_eq(e.domid, 0x55);
	ck_assert_uint_eq(e.devid, 9);
	/* DEV_TAB_HARDWARE_ERROR: DeviceID, Type; no DomainID field. */
	evt_rec(rec, 3, 0x10, 0x55, 0, (uint16_t)(1u << 9), 0x4000);
	ck_assert_int_eq(ik_amd_event_decode(rec, &e), 0);
	ck_assert_uint_eq(e.type, 1);
	ck_assert_uint_eq(e.devid, 0x10);
	ck_assert_uint_eq(e.domid, 0);
	/* ILLEGAL_COMMAND_ERROR: the command's address only. */
	evt_rec(rec, 5, 0x77, 0x55, 3, 0xfff, 0xabc0);
	ck_assert_int_eq(ik_amd_event_decode(rec, &e), 0);
	ck_assert_uint_eq(e.devid, 0);
	ck_assert_uint_eq(e.flags, 0);
	ck_assert_uint_eq(e.addr, 0xabc0);
	/* COMMAND_HARDWARE_ERROR: Type [58:57] and the address. */
	evt_rec(rec, 6, 0x77, 0, 0, (uint16_t)(3u << 9), 0xabd0);
	ck_assert_int_eq(ik_amd_event_decode(rec, &e), 0);
	ck_assert_uint_eq(e.type, 3);
	ck_assert_uint_eq(e.devid, 0);
	/* IOTLB_INV_TIMEOUT: DeviceID and the command's address. */
	evt_rec(rec, 7, 0x42, 0x55, 0, 0, 0xabe0);
	ck_assert_int_eq(ik_amd_event_decode(rec, &e), 0);
	ck_assert_uint_eq(e.devid, 0x42);
	ck_assert_uint_eq(e.domid, 0);
	/* INVALID_DEVICE_REQUEST: Type [59:57]. */
	evt_rec(rec, 8, 0x43, 0, 0, (uint16_t)(5u << 9), 0x9000);
	ck_assert_int_eq(ik_amd_event_decode(rec, &e), 0);
	ck_assert_uint_eq(e.type, 5);
	ck_assert_uint_eq(e.devid, 0x43);
	/* ILLEGAL_DEV_TABLE_ENTRY: DeviceID, flags. */
	evt_rec(rec, 1, 0x44, 0x99, 0, (uint16_t)(1u << 5), 0x8000);
	ck_assert_int_eq(ik_amd_event_decode(rec, &e), 0);
	ck_assert_uint_eq(e.devid, 0x44);
	ck_assert(e.write);
	ck_assert_uint_eq(e.domid, 0);
	/* Empty slot: -ENOENT, zeroed; undefined codes: -EINVAL, untouched. */
	memset(&e, 0x5a, sizeof(e));
	rec[0] = 0x0000ffffffffffffull;
	ck_assert_int_eq(ik_amd_event_decode(rec, &e), -ENOENT);
	ck_assert_uint_eq(e.code, 0);
	ck_assert_uint_eq(e.devid, 0);
	for (unsigned code = 0xb; code <= 0xf; code++) {
		memset(&e, 0x5a, sizeof(e));
		before = e;
		evt_rec(rec, code, 1, 2, 3, 4, 5);
		ck_assert_int_eq(ik_amd_event_decode(rec, &e), -EINVAL);
		ck_assert_int_eq(memcmp(&e, &before, sizeof(e)), 0);
	}
	ck_assert_int_eq(ik_amd_event_decode(NULL, &e), -EINVAL);
	ck_assert_int_eq(ik_amd_event_decode(rec, NULL), -EINVAL);
}
END_TEST

START_TEST(ppr_records_decode_at_spec_positions)
{
	struct ik_amd_ppr p, before;
	/* DeviceID [15:0], PASID[15:0] [31:16], Tag [40:32], PASID[19:16]
	 * [45:42], write [53], gn [56], PPRCode 1 [63:60]. */
	uint64_t rec[2] = { (uint64_t)1 << 60 | BIT(56) | BIT(53) | (uint64_t)0x9 << 42 |
				    (uint64_t)0x1ab << 32 | (uint64_t)0x4321 << 16 | 0x0318,
			    0x7f001000ull };

	ck_assert_int_eq(ik_amd_ppr_decode(rec, &p), 0);
	ck_assert_uint_eq(p.code, IK_AMD_PPR_PAGE_SERVICE_REQUEST);
	ck_assert_uint_eq(p.devid, 0x0318);
	ck_assert_uint_eq(p.pasid, 0x94321);
	ck_assert_uint_eq(p.tag, 0x1ab);
	ck_assert(p.write && p.gn && !p.read && !p.exec && !p.user && !p.priv);
	ck_assert_uint_eq(p.addr, 0x7f001000ull);
	rec[0] = (uint64_t)1 << 60 | BIT(49) | BIT(50) | BIT(54) | BIT(55);
	ck_assert_int_eq(ik_amd_ppr_decode(rec, &p), 0);
	ck_assert(p.exec && p.read && p.user && p.priv && !p.write && !p.gn);
	rec[0] = 0;
	ck_assert_int_eq(ik_amd_ppr_decode(rec, &p), -ENOENT);
	memset(&p, 0x5a, sizeof(p));
	before = p;
	rec[0] = (uint64_t)2 << 60;
	ck_assert_int_eq(ik_amd_ppr_decode(rec, &p), -EINVAL);
	ck_assert_int_eq(memcmp(&p, &before, sizeof(p)), 0);
}
END_TEST

START_TEST(enable_programs_the_rings_then_iommu_en_then_flushes)
{
	struct arig r;
	uint64_t devreg;
	unsigned i_dev, i_cmd, i_evt, i_ctl;

	arig_init(&r, EFR_IASUP);
	ck_assert_int_eq(ik_amd_create(&r.cfg, &r.u), 0);
	ck_assert_ptr_null(ik_amd_queue(r.u));
	ck_assert_uint_eq(r.m.nw, 0); /* create writes no register */
	ck_assert(ik_amd_caps(r.u)->ia);
	ck_assert_int_eq(ik_amd_enable(r.u), 0);
	/* Device Table Base: base [51:12] | Size [8:0] = 4K pages - 1 (256
	 * DTEs of 32 bytes: 2 pages). */
	devreg = r.m.devtab;
	ck_assert_uint_eq(devreg & 0x1ff, 1);
	ck_assert_uint_eq(devreg & ~0x1ffull, ik_amd_devtab_reg(ik_amd_devtab(r.u)) & ~0x1ffull);
	/* Command buffer and event log: 2^8 entries in [59:56]. */
	ck_assert_uint_eq((r.m.cmdbase >> 56) & 0xf, 8);
	ck_assert_uint_eq((r.m.evtbase >> 56) & 0xf, 8);
	ck_assert_uint_eq(RING_ADDR(r.m.cmdbase), ik_cmdq_ring_dma(ik_amd_queue(r.u)));
	ck_assert_uint_eq(r.m.pprbase, 0); /* no PPRSup: no PPR log */
	ck_assert(!ik_amd_has_ppr(r.u));
	/* Order: the tables and rings before Control; IommuEn after the rings. */
	i_dev = woff_index(&r.m, R_DEVTAB, 0);
	i_cmd = woff_index(&r.m, R_CMDBASE, 0);
	i_evt = woff_index(&r.m, R_EVTBASE, 0);
	i_ctl = woff_index(&r.m, R_CONTROL, 0);
	ck_assert_uint_lt(i_dev, i_ctl);
	ck_assert_uint_lt(i_cmd, i_ctl);
	ck_assert_uint_lt(i_evt, i_ctl);
	ck_assert(r.m.ctrl & C_IOMMUEN);
	ck_assert(r.m.ctrl & C_CMDBUFEN);
	ck_assert(r.m.ctrl & C_EVTLOGEN);
	ck_assert_uint_ge(r.m.ctrl_writes, 2); /* rings first, then IommuEn */
	/* INVALIDATE_IOMMU_ALL (IASup) and a COMPLETION_WAIT. */
	ck_assert_uint_eq(r.m.inv_all, 1);
	ck_assert_uint_ge(r.m.waits, 1);
	ck_assert_uint_eq(r.m.illegal, 0);
	/* Enabled twice, or by someone else: -EBUSY. */
	ck_assert_int_eq(ik_amd_enable(r.u), -EBUSY);
	ck_assert_int_eq(ik_amd_disable(r.u), 0);
	ck_assert_uint_eq(r.m.ctrl & (C_IOMMUEN | C_CMDBUFEN | C_EVTLOGEN), 0);
	ck_assert_ptr_null(ik_amd_queue(r.u));
	r.m.ctrl = C_IOMMUEN;
	ck_assert_int_eq(ik_amd_enable(r.u), -EBUSY);
	r.m.ctrl = 0;
	arig_fini(&r);

	/* Without IASup: INVALIDATE_DEVTAB_ENTRY for every DeviceID. */
	arig_init(&r, EFR_PPRSUP);
	arig_up(&r);
	ck_assert_uint_eq(r.m.inv_all, 0);
	ck_assert_uint_eq(r.m.inv_dte, ik_amd_devtab_entries(ik_amd_devtab(r.u)));
	/* PPRSup: the PPR log runs too. */
	ck_assert_uint_eq((r.m.pprbase >> 56) & 0xf, 8);
	ck_assert(r.m.ctrl & C_PPRLOGEN);
	ck_assert(ik_amd_has_ppr(r.u));
	arig_fini(&r);
}
END_TEST

/* DMA memory beyond the unit's OAS (device addresses at 2^60 and up):
 * creating the unit (its device table and rings) fails with -ERANGE and
 * gives back every buffer and every byte it took. */
START_TEST(dma_beyond_oas_is_erange)
{
	struct arig r;

	arig_init(&r, 0);
	r.f.dma_or = 1ull << 60;
	ck_assert_int_eq(ik_amd_create(&r.cfg, &r.u), -ERANGE);
	ck_assert_ptr_null(r.u);
	ck_assert_int_gt(r.f.allocs, 0);
	ck_assert_int_eq(r.f.allocs, r.f.frees);
	ck_assert_int_eq(r.fa.live, 0);
}
END_TEST

START_TEST(bad_unit_input_is_einval_and_nothing_is_written)
{
	struct arig r;
	struct ik_amd *u = (struct ik_amd *)(uintptr_t)0x1234;
	struct ik_amd_config bad;

	arig_init(&r, 0);
	bad = r.cfg;
	bad.max_devid = 0x10000;
	ck_assert_int_eq(ik_amd_create(&bad, &u), -EINVAL);
	bad = r.cfg;
	bad.oas = 31;
	ck_assert_int_eq(ik_amd_create(&bad, &u), -EINVAL);
	bad = r.cfg;
	bad.cmd_log2 = 7;
	ck_assert_int_eq(ik_amd_create(&bad, &u), -EINVAL);
	bad = r.cfg;
	bad.evt_log2 = 16;
	ck_assert_int_eq(ik_amd_create(&bad, &u), -EINVAL);
	bad = r.cfg;
	bad.flags = 0x80;
	ck_assert_int_eq(ik_amd_create(&bad, &u), -EINVAL);
	bad = r.cfg;
	bad.mmio = NULL;
	ck_assert_int_eq(ik_amd_create(&bad, &u), -EINVAL);
	ck_assert_int_eq(ik_amd_create(NULL, &u), -EINVAL);
	ck_assert_int_eq(ik_amd_create(&r.cfg, NULL), -EINVAL);
	ck_assert_ptr_eq(u, (void *)(uintptr_t)0x1234);
	ck_assert_uint_eq(r.m.nw, 0);
	ck_assert_int_eq(r.f.allocs, 0);
	ck_assert_int_eq(r.fa.live, 0);
	/* Memory failures: nothing left allocated, nothing written. */
	r.f.fail_at = 1;
	ck_assert_int_eq(ik_amd_create(&r.cfg, &u), -ENOMEM);
	ck_assert_int_eq(r.fa.live, 0);
	r.f.fail_at = 0;
	r.f.calls = 0;
	ck_assert_int_eq(ik_amd_create(&r.cfg, &r.u), 0);
	for (long n = 1; n <= 3; n++) {
		unsigned nw = r.m.nw;
		long live = r.fa.live;

		r.f.calls = 0;
		r.f.fail_at = n < 3 ? n : 0; /* command buffer, event log */
		if (n == 3)
			ik_fault_alloc_fail_nth(&r.fa, 1); /* the queue's bookkeeping */
		ck_assert_int_eq(ik_amd_enable(r.u), -ENOMEM);
		ck_assert_uint_eq(r.m.nw, nw);
		ck_assert_int_eq(r.f.allocs - r.f.frees, 1); /* the device table only */
		ck_assert_int_eq(r.fa.live, live);
	}
	r.f.fail_at = 0;
	ik_fault_alloc_disarm(&r.fa);
	/* Run bits that never come: -ETIMEDOUT, switched off again. */
	r.m.no_run = true;
	ik_amd_destroy(r.u);
	r.cfg.timeout_ns = 20000000ull;
	ck_assert_int_eq(ik_amd_create(&r.cfg, &r.u), 0);
	ck_assert_int_eq(ik_amd_enable(r.u), -ETIMEDOUT);
	ck_assert_uint_eq(r.m.ctrl & (C_IOMMUEN | C_CMDBUFEN | C_EVTLOGEN), 0);
	ck_assert_int_eq(r.f.allocs - r.f.frees, 1);
	ck_assert_int_eq(ik_amd_issue(r.u, NULL, 0, true), -ENODEV);
	struct ik_amd_event e;
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), -ENODEV);
	arig_fini(&r);
}
END_TEST

/* QEMU 7.2's Head: after the last slot it reads as the buffer's length
 * (256 << 4 here), which unmasked is an index beyond the ring. */
START_TEST(cmdbuf_head_is_masked_qemu_reads_the_length_after_the_last_slot)
{
	struct arig r;

	arig_init(&r, EFR_IASUP);
	r.m.qemu_head = true;
	arig_up(&r);
	/* 300 syncs: the ring (256 slots, one kept empty) wraps more than once. */
	for (unsigned i = 0; i < 600; i++)
		ck_assert_int_eq(ik_amd_issue(r.u, NULL, 0, true), 0);
	ck_assert_uint_ge(r.m.waits, 600);
	ck_assert_uint_eq(r.m.illegal, 0);
	arig_fini(&r);
}
END_TEST

/* The hooks alone, over the model's registers: CONS carries no bit beyond
 * the ring (the ik_cmdq_regs contract), Tail is index << 4, a stop is an
 * error only once started, ack toggles CmdBufEn. */
START_TEST(cmdbuf_hooks_follow_the_register_layout)
{
	struct arig r;
	struct ik_amd_cmdbuf cb;
	uint32_t cerror = 99;
	unsigned writes;

	arig_init(&r, 0);
	ck_assert_int_eq(ik_amd_cmdbuf_init(&cb, &r.mmio, 7), -EINVAL);
	ck_assert_int_eq(ik_amd_cmdbuf_init(&cb, &r.mmio, 16), -EINVAL);
	ck_assert_int_eq(ik_amd_cmdbuf_init(&cb, NULL, 8), -EINVAL);
	ck_assert_int_eq(ik_amd_cmdbuf_init(&cb, &r.mmio, 8), 0);
	r.m.cmdbase = ik_amd_ring_reg(0x100000, 8);
	r.m.cmd_head = 256u << 4; /* QEMU 7.2 after the last slot */
	ck_assert_uint_eq(ik_amd_cmdbuf_regs.read_cons(&cb, &cerror), 0);
	ck_assert_uint_eq(cerror, IK_CMDQ_CERROR_NONE); /* not started: no error */
	r.m.cmd_head = 37u << 4;
	ck_assert_uint_eq(ik_amd_cmdbuf_regs.read_cons(&cb, &cerror), 37);
	ik_amd_cmdbuf_start(&cb);
	ck_assert_uint_eq(ik_amd_cmdbuf_regs.read_cons(&cb, &cerror), 37);
	ck_assert_uint_eq(cerror, IK_CMDQ_CERROR_ILL); /* started, CmdBufRun 0 */
	r.m.sts = S_CMDRUN;
	ck_assert_uint_eq(ik_amd_cmdbuf_regs.read_cons(&cb, &cerror), 37);
	ck_assert_uint_eq(cerror, IK_CMDQ_CERROR_NONE);
	r.m.sts = 0;
	ik_amd_cmdbuf_regs.write_prod(&cb, 200);
	ck_assert_uint_eq(r.m.cmd_tail, 200u << 4);
	r.m.cmd_tail = 0; /* nothing for the model to fetch on the restart */
	r.m.ctrl = C_IOMMUEN | C_CMDBUFEN;
	writes = r.m.ctrl_writes;
	ik_amd_cmdbuf_regs.ack_error(&cb);
	ck_assert_uint_ge(r.m.ctrl_writes, writes + 2);
	ck_assert_uint_eq(r.m.ctrl, C_IOMMUEN | C_CMDBUFEN);
	ck_assert(r.m.sts & S_CMDRUN);
	ck_assert_uint_eq(cb.errors, 1);
	ik_amd_cmdbuf_stop(&cb);
	r.m.sts = 0;
	ck_assert_uint_eq(ik_amd_cmdbuf_regs.read_cons(&cb, &cerror), 37);
	ck_assert_uint_eq(cerror, IK_CMDQ_CERROR_NONE);
}
END_TEST

/* An illegal command: the IOMMU stops (CmdBufRun = 0, Head at it) and logs
 * ILLEGAL_COMMAND_ERROR; the queue replaces it with a no-op, the core
 * restarts the buffer (CmdBufEn 0 -> 1), the issuer gets -EIO and what was
 * queued behind it runs. */
START_TEST(illegal_command_stops_the_buffer_and_recovery_resumes_it)
{
	struct arig r;
	struct ik_amd_event e;
	struct ik_amd_stats st;
	uint64_t bad[2] = { (uint64_t)0xf << 60, 0 }; /* opcode 0xf: illegal */
	uint64_t slot;
	unsigned waits;

	arig_init(&r, EFR_IASUP);
	arig_up(&r);
	waits = r.m.waits;
	slot = RING_ADDR(r.m.cmdbase) + (uint64_t)r.m.hidx * 16;
	ck_assert_int_eq(ik_cmdq_issue(ik_amd_queue(r.u), bad, 1, IK_CMDQ_SYNC), -EIO);
	ck_assert_uint_eq(r.m.illegal, 1);
	ck_assert(r.m.sts & S_CMDRUN);	/* restarted */
	ck_assert_uint_eq(r.m.waits, waits + 2); /* the no-op and the sync */
	ck_assert_int_eq(ik_amd_get_stats(r.u, &st), 0);
	ck_assert_uint_eq(st.cmd_stops, 1);
	/* The queue goes on. */
	ck_assert_int_eq(ik_amd_issue(r.u, NULL, 0, true), 0);
	/* The event says which command. */
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), 0);
	ck_assert_uint_eq(e.code, IK_AMD_EVT_ILLEGAL_COMMAND_ERROR);
	ck_assert_uint_eq(e.addr, slot);
	ck_assert(!e.overflow);
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), -ENOENT);
	arig_fini(&r);
}
END_TEST

START_TEST(event_log_pops_in_order_overflow_restarts_and_hostile_pointers_are_eio)
{
	struct arig r;
	struct ik_amd_event e;
	struct ik_amd_stats st;
	uint64_t rec[2];
	uint64_t head;

	arig_init(&r, 0);
	arig_up(&r);
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), -ENOENT);
	for (unsigned i = 0; i < 3; i++) {
		evt_rec(rec, 2, (uint16_t)(0x18 + i), 7, 0, 1u << 5, 0x1000ull * (i + 1));
		m_event(&r.m, rec);
	}
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_int_eq(ik_amd_event_pop(r.u, &e), 0);
		ck_assert_uint_eq(e.code, IK_AMD_EVT_IO_PAGE_FAULT);
		ck_assert_uint_eq(e.devid, 0x18 + i);
		ck_assert_uint_eq(e.domid, 7);
		ck_assert(e.write);
		ck_assert_uint_eq(e.addr, 0x1000ull * (i + 1));
		/* the slot is zeroed after reading */
		ck_assert_uint_eq(((uint64_t *)host(RING_ADDR(r.m.evtbase)))[2 * i], 0);
	}
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), -ENOENT);
	ck_assert_uint_eq(r.m.evt_head, r.m.evt_tail);
	/* Fill the log past its 255 usable slots: overflow. */
	for (unsigned i = 0; i < 300; i++) {
		evt_rec(rec, 2, (uint16_t)i, 0, 0, 0, 0);
		m_event(&r.m, rec);
	}
	ck_assert(r.m.sts & S_EVTOVF);
	ck_assert(!(r.m.sts & S_EVTRUN));
	for (unsigned i = 0; i < 255; i++) {
		ck_assert_int_eq(ik_amd_event_pop(r.u, &e), 0);
		ck_assert(e.overflow);
		ck_assert_uint_eq(e.devid, i);
	}
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), -ENOENT); /* and the restart */
	ck_assert(!(r.m.sts & S_EVTOVF));
	ck_assert(r.m.sts & S_EVTRUN);
	ck_assert_uint_eq(r.m.evt_head, 0);
	ck_assert_uint_eq(r.m.evt_tail, 0);
	ck_assert_int_eq(ik_amd_get_stats(r.u, &st), 0);
	ck_assert_uint_eq(st.overflows, 1);
	ck_assert_uint_eq(st.events, 258);
	evt_rec(rec, 1, 0x99, 0, 0, 0, 0);
	m_event(&r.m, rec);
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), 0);
	ck_assert_uint_eq(e.code, IK_AMD_EVT_ILLEGAL_DEV_TABLE_ENTRY);
	ck_assert(!e.overflow);
	/* A Tail beyond the log, or bits outside [18:4]: -EIO, Head unmoved. */
	head = r.m.evt_head;
	r.m.evt_tail = 256u << 4;
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), -EIO);
	r.m.evt_tail = head | 8;
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), -EIO);
	r.m.evt_tail = BIT(40);
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), -EIO);
	ck_assert_uint_eq(r.m.evt_head, head);
	r.m.evt_tail = head;
	/* An entry of an undefined code: skipped, -EIO. */
	evt_rec(rec, 0xc, 1, 0, 0, 0, 0);
	m_event(&r.m, rec);
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), -EIO);
	ck_assert_int_eq(ik_amd_event_pop(r.u, &e), -ENOENT);
	ck_assert_int_eq(ik_amd_event_pop(r.u, NULL), -EINVAL);
	arig_fini(&r);
}
END_TEST

START_TEST(ppr_log_runs_where_the_unit_has_one)
{
	struct arig r;
	struct ik_amd_ppr p;
	uint64_t rec[2] = { (uint64_t)1 << 60 | BIT(53) | 0x18, 0x5000 };

	arig_init(&r, EFR_PPRSUP | EFR_GTSUP);
	arig_up(&r);
	ck_assert_int_eq(ik_amd_ppr_pop(r.u, &p), -ENOENT);
	m_ppr(&r.m, rec);
	ck_assert_int_eq(ik_amd_ppr_pop(r.u, &p), 0);
	ck_assert_uint_eq(p.devid, 0x18);
	ck_assert(p.write);
	ck_assert_uint_eq(p.addr, 0x5000);
	ck_assert_int_eq(ik_amd_ppr_pop(r.u, &p), -ENOENT);
	arig_fini(&r);
	/* No PPRSup, or IK_AMD_CFG_NO_PPR: no log, -ENODEV. */
	arig_init(&r, 0);
	arig_up(&r);
	ck_assert_int_eq(ik_amd_ppr_pop(r.u, &p), -ENODEV);
	ck_assert_uint_eq(r.m.pprbase, 0);
	arig_fini(&r);
	arig_init(&r, EFR_PPRSUP);
	r.cfg.flags = IK_AMD_CFG_NO_PPR;
	arig_up(&r);
	ck_assert_int_eq(ik_amd_ppr_pop(r.u, &p), -ENODEV);
	ck_assert(!(r.m.ctrl & C_PPRLOGEN));
	arig_fini(&r);
}
END_TEST

/* DTE writes through the unit's queue: the INVALIDATE_DEVTAB_ENTRY of a
 * change reaches the model. */
START_TEST(unit_devtab_writes_issue_their_invalidations)
{
	struct arig r;
	struct ik_amd_dte_config dc;
	struct ik_amd_change chg;
	uint64_t dte[4];
	unsigned before;

	arig_init(&r, EFR_IASUP);
	ck_assert_int_eq(ik_amd_create(&r.cfg, &r.u), 0);
	memset(&dc, 0, sizeof(dc));
	dc.prot = IK_PROT_READ | IK_PROT_WRITE;
	dc.domid = 1;
	ck_assert_int_eq(ik_amd_dte_build(&dc, dte), 0);
	/* before enable: written, nothing issued */
	ck_assert_int_eq(ik_amd_devtab_write(ik_amd_devtab(r.u), 0x18, dte, NULL, NULL, &chg), 0);
	ck_assert_int_eq(ik_amd_enable(r.u), 0);
	before = r.m.inv_dte;
	dc.domid = 2;
	ck_assert_int_eq(ik_amd_dte_build(&dc, dte), 0);
	ck_assert_int_eq(ik_amd_devtab_write(ik_amd_devtab(r.u), 0x18, dte, ik_amd_issue_cmdq,
					     ik_amd_queue(r.u), &chg), 0);
	ck_assert_uint_eq(r.m.inv_dte, before + 1);
	ck_assert_int_eq(((uint64_t *)host(RING_ADDR(r.m.devtab)))[0x18 * 4 + 1] & 0xffff, 2);
	arig_fini(&r);
}
END_TEST

/* ---------------------------------------------------------------- IVRS */

struct tbl {
	uint8_t b[1024];
	size_t n;
};

static void put(struct tbl *t, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		t->b[t->n++] = i < 8 ? (uint8_t)(v >> (8 * i)) : 0;
}

static void tbl_begin(struct tbl *t)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->b, "IVRS", 4);
	t->n = 36;
	put(t, 0x00203040u, 4); /* IVinfo */
	put(t, 0, 8);
}

/* An IVHD header of `type` (length patched by ivhd_end). */
static size_t ivhd_begin(struct tbl *t, uint8_t type, uint16_t devid, uint64_t base, uint64_t efr)
{
	size_t at = t->n;

	put(t, type, 1);
	put(t, 0xb0, 1);	/* flags */
	put(t, 0, 2);		/* length, patched */
	put(t, devid, 2);
	put(t, 0x40, 2);	/* capability offset */
	put(t, base, 8);
	put(t, 0, 2);		/* segment */
	put(t, 0x1300, 2);	/* info */
	put(t, 0x12345678, 4);	/* feature info / attributes */
	if (type != 0x10) {
		put(t, efr, 8);
		put(t, 0, 8);
	}
	return at;
}

static void blk_end(struct tbl *t, size_t at)
{
	t->b[at + 2] = (uint8_t)(t->n - at);
	t->b[at + 3] = (uint8_t)((t->n - at) >> 8);
}

static void tbl_end(struct tbl *t)
{
	uint8_t s = 0;

	t->b[4] = (uint8_t)t->n;
	t->b[5] = (uint8_t)(t->n >> 8);
	t->b[9] = 0;
	for (size_t i = 0; i < t->n; i++)
		s = (uint8_t)(s + t->b[i]);
	t->b[9] = (uint8_t)(0 - s);
}

static void dev4(struct tbl *t, uint8_t type, uint16_t devid, uint8_t setting)
{
	put(t, type, 1);
	put(t, devid, 2);
	put(t, setting, 1);
}

static void dev8(struct tbl *t, uint8_t type, uint16_t devid, uint8_t setting, uint16_t src,
		 uint8_t b7)
{
	dev4(t, type, devid, setting);
	put(t, 0, 1);
	put(t, src, 2);
	put(t, b7, 1);
}

static void sample_ivrs(struct tbl *t)
{
	size_t h;

	tbl_begin(t);
	h = ivhd_begin(t, 0x10, 0x0010, 0xfed80000ull, 0);
	dev4(t, 0x03, 0x0000, 0);	/* start of range */
	dev4(t, 0x04, 0x00ff, 0);	/* end of range */
	dev4(t, 0x00, 0, 0);		/* padding */
	blk_end(t, h);
	/* an IVMD block: skipped */
	h = t->n;
	put(t, 0x20, 1);
	put(t, 0, 1);
	put(t, 0, 2);
	put(t, 0, 28);
	blk_end(t, h);
	h = ivhd_begin(t, 0x11, 0x0010, 0xfed80000ull, 0x0000002200000a5aull);
	dev4(t, 0x02, 0x0018, 0xd7);	/* select */
	dev8(t, 0x42, 0x0100, 0, 0x0020, 0);	/* alias select */
	dev8(t, 0x43, 0x0200, 1, 0x0030, 0);	/* alias range */
	dev4(t, 0x04, 0x02ff, 0);
	dev8(t, 0x48, 0, 0xd7, 0x00a0, 1);	/* special: IOAPIC 0xa0 */
	put(t, 0xf0, 1);			/* ACPI HID, UID length 2 */
	put(t, 0, 20);
	put(t, 2, 1);
	put(t, 0x4142, 2);
	dev4(t, 0x01, 0, 0);		/* all */
	blk_end(t, h);
	tbl_end(t);
}

START_TEST(ivrs_gives_iommus_and_device_ranges)
{
	struct tbl t;
	struct ik_amd_ivrs_unit units[4];
	struct ik_amd_ivrs_range rg[8];
	struct ik_amd_ivrs out = { 0, units, 4, 0, rg, 8, 0 };

	sample_ivrs(&t);
	ck_assert_int_eq(ik_amd_ivrs_parse(t.b, t.n, &out), 0);
	ck_assert_uint_eq(out.ivinfo, 0x00203040u);
	ck_assert_uint_eq(out.nunits, 2);
	ck_assert_uint_eq(units[0].type, 0x10);
	ck_assert_uint_eq(units[0].base, 0xfed80000ull);
	ck_assert(!units[0].have_efr);
	ck_assert_uint_eq(units[0].devid, 0x0010);
	ck_assert_uint_eq(units[0].cap_off, 0x40);
	ck_assert_uint_eq(units[0].info, 0x1300);
	ck_assert_uint_eq(units[0].attr, 0x12345678);
	ck_assert_uint_eq(units[0].flags, 0xb0);
	ck_assert_uint_eq(units[1].type, 0x11);
	ck_assert(units[1].have_efr);
	ck_assert_uint_eq(units[1].efr, 0x0000002200000a5aull);
	ck_assert_uint_eq(out.nranges, 6);
	ck_assert_uint_eq(rg[0].first, 0);
	ck_assert_uint_eq(rg[0].last, 0xff);
	ck_assert_uint_eq(rg[0].unit, 0);
	ck_assert_uint_eq(rg[1].first, 0x18);
	ck_assert_uint_eq(rg[1].last, 0x18);
	ck_assert_uint_eq(rg[1].setting, 0xd7);
	ck_assert_uint_eq(rg[1].unit, 1);
	ck_assert(rg[2].alias_valid);
	ck_assert_uint_eq(rg[2].alias, 0x20);
	ck_assert_uint_eq(rg[3].first, 0x200);
	ck_assert_uint_eq(rg[3].last, 0x2ff);
	ck_assert_uint_eq(rg[3].alias, 0x30);
	ck_assert_uint_eq(rg[3].kind, 0x43);
	ck_assert_uint_eq(rg[4].first, 0xa0);
	ck_assert_uint_eq(rg[4].kind, 0x48);
	ck_assert_uint_eq(rg[5].first, 0);
	ck_assert_uint_eq(rg[5].last, 0xffff);
	/* Arrays too small: the first entries, the counts, -ENOSPC. */
	out.max_ranges = 2;
	ck_assert_int_eq(ik_amd_ivrs_parse(t.b, t.n, &out), -ENOSPC);
	ck_assert_uint_eq(out.nranges, 6);
	/* Counting only. */
	struct ik_amd_ivrs cnt = { 0, NULL, 0, 0, NULL, 0, 0 };
	ck_assert_int_eq(ik_amd_ivrs_parse(t.b, t.n, &cnt), -ENOSPC);
	ck_assert_uint_eq(cnt.nunits, 2);
	ck_assert_uint_eq(cnt.nranges, 6);
}
END_TEST

/* Parse a possibly bad table: either 0/-ENOSPC, or -EINVAL with out and
 * its arrays byte-identical. */
static int parse_check(const uint8_t *b, size_t n)
{
	struct ik_amd_ivrs_unit units[4], u0[4];
	struct ik_amd_ivrs_range rg[8], r0[8];
	struct ik_amd_ivrs out, o0;
	uint8_t *copy = malloc(n ? n : 1);
	int err;

	/* Padding too is compared below: fill it before the fields. */
	memset(&out, 0, sizeof(out));
	out.ivinfo = 0x5a5a;
	out.units = units;
	out.max_units = 4;
	out.nunits = 77;
	out.ranges = rg;
	out.max_ranges = 8;
	out.nranges = 88;

	memcpy(copy, b, n); /* exactly n bytes: ASan sees any read beyond */
	memset(units, 0xa5, sizeof(units));
	memset(rg, 0xa5, sizeof(rg));
	memcpy(u0, units, sizeof(units));
	memcpy(r0, rg, sizeof(rg));
	memcpy(&o0, &out, sizeof(out));
	err = ik_amd_ivrs_parse(copy, n, &out);
	free(copy);
	if (err == -EINVAL) {
		ck_assert_int_eq(memcmp(&out, &o0, sizeof(out)), 0);
		ck_assert_int_eq(memcmp(units, u0, sizeof(units)), 0);
		ck_assert_int_eq(memcmp(rg, r0, sizeof(rg)), 0);
	} else {
		ck_assert_msg(err == 0 || err == -ENOSPC, "parse returned %d", err);
	}
	return err;
}

/* A table of one type-10h IVHD block for the malformed-entry checks: its
 * entries follow bad_begin(); bad_end() closes the block and the table and
 * checks that the parser refuses it. */
static size_t bad_begin(struct tbl *t)
{
	tbl_begin(t);
	return ivhd_begin(t, 0x10, 0, 0xfed80000ull, 0);
}

static void bad_end(struct tbl *t, size_t h)
{
	blk_end(t, h);
	tbl_end(t);
	ck_assert_int_eq(parse_check(t->b, t->n), -EINVAL);
}

START_TEST(hostile_ivrs_is_einval_and_nothing_is_written)
{
	struct tbl t, bad;
	struct ik_rng rng = { 27 };
	struct ik_amd_ivrs out = { 0, NULL, 0, 0, NULL, 0, 0 };

	sample_ivrs(&t);
	ck_assert_int_eq(ik_amd_ivrs_parse(NULL, t.n, &out), -EINVAL);
	ck_assert_int_eq(ik_amd_ivrs_parse(t.b, t.n, NULL), -EINVAL);
	out.max_units = 1; /* NULL array with a size */
	ck_assert_int_eq(ik_amd_ivrs_parse(t.b, t.n, &out), -EINVAL);
	/* Every truncation: the header's Length no longer matches. */
	for (size_t n = 0; n < t.n; n++)
		ck_assert_int_eq(parse_check(t.b, n), -EINVAL);
	/* Checksum, signature. */
	bad = t;
	bad.b[60]++;
	ck_assert_int_eq(parse_check(bad.b, bad.n), -EINVAL);
	bad = t;
	bad.b[0] = 'X';
	tbl_end(&bad);
	ck_assert_int_eq(parse_check(bad.b, bad.n), -EINVAL);
	/* A block Length of 0..3, of less than its header, or past the end. */
	static const uint16_t lens[] = { 0, 1, 3, 23, 39, 0xffff, 0x400 };
	for (unsigned i = 0; i < IK_ARRAY_SIZE(lens); i++) {
		bad = t;
		bad.b[48 + 2] = (uint8_t)lens[i];
		bad.b[48 + 3] = (uint8_t)(lens[i] >> 8);
		tbl_end(&bad);
		ck_assert_int_eq(parse_check(bad.b, bad.n), -EINVAL);
	}
	/* A range end without start, an end below its start, an open range at
	 * the block's end, an entry running past its block, an undefined
	 * entry size. */
	{
		size_t h;

		h = bad_begin(&bad);
		dev4(&bad, 0x04, 0x10, 0);
		bad_end(&bad, h);
		h = bad_begin(&bad);
		dev4(&bad, 0x03, 0x20, 0);
		dev4(&bad, 0x04, 0x10, 0);
		bad_end(&bad, h);
		h = bad_begin(&bad);
		dev4(&bad, 0x03, 0x20, 0);
		bad_end(&bad, h);
		h = bad_begin(&bad);
		dev4(&bad, 0x42, 0x20, 0); /* an 8-byte entry with 4 bytes left */
		bad_end(&bad, h);
		h = bad_begin(&bad);
		put(&bad, 0xf0, 1); /* ACPI HID: UID length 200 past the block */
		put(&bad, 0, 20);
		put(&bad, 200, 1);
		bad_end(&bad, h);
		h = bad_begin(&bad);
		dev4(&bad, 0x90, 0, 0);
		bad_end(&bad, h);
	}
	/* Random corruption, checksum repaired: never a read outside the
	 * bytes (ASan), and -EINVAL leaves everything as it was. */
	for (long i = 0; i < ik_test_iters(20000); i++) {
		bad = t;
		for (unsigned k = 1 + ik_rng_below(&rng, 4); k; k--)
			bad.b[36 + ik_rng_below(&rng, t.n - 36)] = (uint8_t)ik_rng_next(&rng);
		tbl_end(&bad);
		(void)parse_check(bad.b, bad.n);
	}
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("drv_amd");
	TCase *tc = tcase_create("amd");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, dte_fields_at_spec_positions);
	tcase_add_test(tc, dte_modes_follow_the_table_levels);
	tcase_add_test(tc, bad_dte_input_is_einval_and_buffers_stay_identical);
	tcase_add_test(tc, device_table_size_follows_the_highest_device_id);
	tcase_add_test(tc, device_table_writes_in_a_safe_order_with_their_invalidations);
	tcase_add_test(tc, gcr3_tables_hold_guest_roots_by_pasid);
	tcase_add_test(tc, plan_unmap_follows_the_choice_table);
	tcase_add_test(tc, plan_change_follows_its_table);
	tcase_add_test(tc, planned_invalidations_leave_no_stale_translation);
	tcase_add_test(tc, soft_iommu_shows_what_qemu_cannot);
	tcase_add_test(tc, efr_fields_at_spec_positions);
	tcase_add_test(tc, event_records_decode_at_spec_positions);
	tcase_add_test(tc, ppr_records_decode_at_spec_positions);
	tcase_add_test(tc, enable_programs_the_rings_then_iommu_en_then_flushes);
	tcase_add_test(tc, bad_unit_input_is_einval_and_nothing_is_written);
	tcase_add_test(tc, cmdbuf_head_is_masked_qemu_reads_the_length_after_the_last_slot);
	tcase_add_test(tc, cmdbuf_hooks_follow_the_register_layout);
	tcase_add_test(tc, illegal_command_stops_the_buffer_and_recovery_resumes_it);
	tcase_add_test(tc, event_log_pops_in_order_overflow_restarts_and_hostile_pointers_are_eio);
	tcase_add_test(tc, ppr_log_runs_where_the_unit_has_one);
	tcase_add_test(tc, dma_beyond_oas_is_erange);
	tcase_add_test(tc, unit_devtab_writes_issue_their_invalidations);
	tcase_add_test(tc, ivrs_gives_iommus_and_device_ranges);
	tcase_add_test(tc, hostile_ivrs_is_einval_and_nothing_is_written);
	suite_add_tcase(s, tc);
	return s;
}
