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

/* ================================================================ DMA memory */

struct fdma {
	long allocs, frees, fail_at; /* fail_at: fail the n-th allocation (1-based), 0 never */
	long calls;
	struct ik_dma_mem d;
};

static void *fd_alloc(void *ctx, ik_size size, ik_size align, ik_u64 *dma)
{
	struct fdma *f = ctx;
	void *p;

	if (f->fail_at && ++f->calls == f->fail_at)
		return NULL;
	p = aligned_alloc(align < 4096 ? 4096 : align, (size + 4095) & ~(size_t)4095);
	if (p) {
		f->allocs++;
		memset(p, 0xa5, size); /* the library must zero what it uses */
		*dma = (uintptr_t)p;
	}
	return p;
}

static void fd_free(void *ctx, void *cpu, ik_u64 dma, ik_size size)
{
	struct fdma *f = ctx;

	(void)dma;
	(void)size;
	f->frees++;
	free(cpu);
}

static void fdma_init(struct fdma *f)
{
	memset(f, 0, sizeof(*f));
	f->d.alloc = fd_alloc;
	f->d.free = fd_free;
	f->d.ctx = f;
}

/* ================================================================ page tables */

static void *t_alloc(void *cookie, ik_size size, ik_u64 *iommu)
{
	void *p = aligned_alloc(size, size);

	(void)cookie;
	if (p)
		*iommu = (uintptr_t)p;
	return p;
}

static void t_free(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	(void)cookie;
	(void)iommu;
	(void)size;
	free(cpu);
}

static struct ik_pgtable *mk_pt_hooks(enum ik_pt_fmt fmt, unsigned ias, uint32_t quirks,
				      struct ik_pgtable_hooks *h, void *cookie)
{
	struct ik_pgtable_cfg c;
	struct ik_pgtable *pt = NULL;

	h->alloc_table = t_alloc;
	h->free_table = t_free;
	memset(&c, 0, sizeof(c));
	c.fmt = fmt;
	c.ias = ias;
	c.oas = 48;
	c.pgsize_bitmap = BIT(12) | BIT(21) | BIT(30);
	c.coherent = true;
	c.quirks = quirks;
	c.hooks = h;
	c.cookie = cookie;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), 0);
	return pt;
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
	struct fdma f;

	fdma_init(&f);
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
	struct fdma f;
	struct rec r;
	uint64_t d1[4], d2[4], d3[4], blocked[4], cur[4], before[4];
	const uint64_t *mem;

	fdma_init(&f);
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
	struct fdma f;

	fdma_init(&f);
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
	struct fdma f;
	struct ik_amd_target t;
	unsigned flush_walks;
};

static void sys_init(struct sys *y)
{
	struct ik_softiommu_config sc;
	struct ik_softiommu_cq_config cc;
	struct ik_cmdq_config qc;
	struct ik_amd_devtab_config tc;

	memset(y, 0, sizeof(*y));
	ik_softiommu_config_init(&sc);
	sc.flags = IK_SOFTIOMMU_CHECK;
	sc.phys_to_host = ik_softiommu_host_identity;
	ck_assert_int_eq(ik_softiommu_create(&sc, &y->s), 0);
	y->ring = aligned_alloc(4096, 4096); /* 64 entries of 16 bytes, rounded up */
	ck_assert_ptr_nonnull(y->ring);
	memset(y->ring, 0, 16u << 6);
	memset(&cc, 0, sizeof(cc));
	cc.fmt = &ik_cmdq_fmt_amd;
	cc.log2_entries = 6;
	cc.flags = IK_CMDQ_CFG_NO_WRAP;
	cc.ring = y->ring;
	ck_assert_int_eq(ik_softiommu_cq_init(&y->cq, y->s, &cc), 0);
	memset(&qc, 0, sizeof(qc));
	qc.fmt = &ik_cmdq_fmt_amd;
	qc.log2_entries = 6;
	qc.flags = IK_CMDQ_CFG_NO_WRAP;
	qc.ring = y->ring;
	qc.regs = &ik_softiommu_cq_regs;
	qc.regs_ctx = &y->cq;
	qc.timeout_ns = 20000000000ull;
	ck_assert_int_eq(ik_cmdq_create(&qc, &y->q), 0);
	fdma_init(&y->f);
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
		struct ik_softiommu_stale rep;
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
		buf = aligned_alloc(2u << 20, span);
		mapped = calloc(span >> 12, 1);
		ck_assert(buf && mapped);
		/* Deterministic first: a page (its table made), the page
		 * unmapped (leaf only), a 2 MiB block over the now empty table
		 * (the engine's flush_walk: PDE before the table is freed),
		 * the block unmapped. */
		{
			uint64_t v = 7, iova = 0x40000000ull + span - (2u << 20);
			struct ik_gather g;

			ck_assert_int_eq(ik_pgtable_map(pt, iova + 0x3000, (uint64_t)(uintptr_t)buf,
							4096, IK_PROT_READ | IK_PROT_WRITE), 0);
			ck_assert_int_eq(ik_softiommu_dma_write(y.s, 0, iova + 0x3000, &v, 8), 0);
			ik_gather_init(&g);
			ck_assert_int_eq(ik_pgtable_unmap(pt, iova + 0x3000, 4096, &g), 4096);
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
			ck_assert_int_eq(ik_softiommu_dma_read(y.s, 0, iova + 0x3000, &v, 8), -EFAULT);
			ck_assert_int_eq(ik_softiommu_stale_pop(y.s, &rep), -ENOENT);
		}
		for (long it = 0; it < iters; it++) {
			unsigned lg = 12 + (unsigned)ik_rng_below(&rng, 11);
			uint64_t size = 1ull << lg, off = ik_rng_below(&rng, span >> lg) << lg;
			uint64_t iova = 0x40000000ull + off, v = (uint64_t)it;
			bool any = false, all = true;
			struct ik_gather g;

			for (uint64_t pg = off >> 12; pg < (off + size) >> 12; pg++) {
				any |= mapped[pg];
				all &= mapped[pg];
			}
			if (!any) {
				IK_REQUIRE(ik_pgtable_map(pt, iova, (uint64_t)(uintptr_t)buf + off, size,
							  IK_PROT_READ | IK_PROT_WRITE) == 0);
				memset(mapped + (off >> 12), 1, size >> 12);
				IK_REQUIRE(ik_softiommu_dma_write(y.s, 0, iova, &v, 8) == 0);
				IK_REQUIRE(ik_softiommu_dma_write(y.s, 0, iova + size - 8, &v, 8) == 0);
			} else if (all || ik_rng_below(&rng, 2)) {
				ik_gather_init(&g);
				IK_REQUIRE(ik_pgtable_unmap(pt, iova, size, &g) >= 0);
				memset(mapped + (off >> 12), 0, size >> 12);
				IK_REQUIRE(ik_amd_plan_unmap(&y.t, &g, &p) == 0);
				IK_REQUIRE(ik_amd_plan_issue(y.q, &p) == 0);
				IK_REQUIRE(ik_pgtable_gather_sync(pt, &g) == 0);
				IK_REQUIRE(ik_softiommu_dma_read(y.s, 0, iova, &v, 8) == -EFAULT);
			}
			IK_REQUIRE(ik_softiommu_stale_pop(y.s, &rep) == -ENOENT);
		}
		for (uint64_t pg = 0; pg < span >> 12; pg += 61) {
			uint64_t v;
			int err = ik_softiommu_dma_read(y.s, 0, 0x40000000ull + (pg << 12), &v, 8);

			IK_REQUIRE(err == (mapped[pg] ? 0 : -EFAULT));
		}
		ck_assert_int_eq(ik_softiommu_stale_pop(y.s, &rep), -ENOENT);
		ck_assert_uint_eq(y.cq.rejected, 0);
		/* Control: an unmap without its invalidation is caught. */
		{
			uint64_t v = 1, iova = 0x80000000ull;
			struct ik_gather g;

			ck_assert_int_eq(ik_pgtable_map(pt, iova, (uint64_t)(uintptr_t)buf, 4096,
							IK_PROT_READ | IK_PROT_WRITE), 0);
			ck_assert_int_eq(ik_softiommu_dma_write(y.s, 0, iova, &v, 8), 0);
			ik_gather_init(&g);
			ck_assert_int_eq(ik_pgtable_unmap(pt, iova, 4096, &g), 4096);
			ck_assert_int_eq(ik_softiommu_dma_read(y.s, 0, iova, &v, 8), -EFAULT);
			ck_assert_int_eq(ik_softiommu_stale_pop(y.s, &rep), 0);
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
	suite_add_tcase(s, tc);
	return s;
}
