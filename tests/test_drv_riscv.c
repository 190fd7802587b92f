/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * drv/riscv: the RISC-V IOMMU driver core (<iommukit/drv/riscv.h>).
 *
 * The capabilities register and device contexts are checked against bit
 * positions written here from the RISC-V IOMMU specification v1.0
 * (SPEC_* below, never the header's macros); bad input leaves every buffer
 * byte-identical; device and process directories are walked by hand as the
 * IOMMU walks them (DDI / PDI split from the specification), with
 * allocation failures injected and the update order observed from the
 * issue callback.  The planner's commands are checked row by row and through the RISC-V
 * command decoder, and end to end: plans issued through an ik_cmdq of
 * ik_cmdq_fmt_riscv to the soft IOMMU (which keeps its walk cache on
 * IOTINVAL with AV = 1, as the specification lets an IOMMU keep non-leaf
 * entries), whose stale-translation checker then finds nothing after
 * unmaps - and does find the stale walk when a freed table is followed by
 * per-page AV = 1 commands only (what examples/bench's dsys_invalidate()
 * issued before it used the planner).
 */
#include <stdlib.h>
#include <string.h>
#include <iommukit/drv/riscv.h>
#include <iommukit/softiommu.h>
#include "testlib.h"

#define BIT(n) ((uint64_t)1 << (n))

/* Spec bit positions (RISC-V IOMMU v1.0), as numbers: */
/* capabilities */
#define SPEC_CAP_SV39 9
#define SPEC_CAP_SV48 10
#define SPEC_CAP_SV57 11
#define SPEC_CAP_SV39X4 17
#define SPEC_CAP_SV48X4 18
#define SPEC_CAP_SV57X4 19
#define SPEC_CAP_MSI_FLAT 22
#define SPEC_CAP_AMO_HWAD 24
#define SPEC_CAP_ATS 25
#define SPEC_CAP_T2GPA 26
#define SPEC_CAP_IGS 28	/* 29:28 */
#define SPEC_CAP_PAS 32	/* 37:32 */
#define SPEC_CAP_PD8 38
#define SPEC_CAP_PD17 39
#define SPEC_CAP_PD20 40
/* device context tc */
#define SPEC_TC_V 0
#define SPEC_TC_EN_ATS 1
#define SPEC_TC_EN_PRI 2
#define SPEC_TC_T2GPA 3
#define SPEC_TC_DTF 4
#define SPEC_TC_PDTV 5
#define SPEC_TC_PRPR 6
#define SPEC_TC_GADE 7
#define SPEC_TC_SADE 8
#define SPEC_TC_DPE 9
/* atp-like words: MODE 63:60, GSCID 59:44, PPN 43:0; ta.PSCID 31:12 */
#define SPEC_MODE 60
#define SPEC_GSCID 44
#define SPEC_PSCID 12

/* Every capability an IOMMU may have, version 1.0, 48-bit PAS. */
static uint64_t full_caps_reg(void)
{
	return 0x10 | BIT(SPEC_CAP_SV39) | BIT(SPEC_CAP_SV48) | BIT(SPEC_CAP_SV57) |
	       BIT(SPEC_CAP_SV39X4) | BIT(SPEC_CAP_SV48X4) | BIT(SPEC_CAP_SV57X4) |
	       BIT(SPEC_CAP_MSI_FLAT) | BIT(SPEC_CAP_AMO_HWAD) | BIT(SPEC_CAP_ATS) |
	       BIT(SPEC_CAP_T2GPA) | (2ull << SPEC_CAP_IGS) | (48ull << SPEC_CAP_PAS) |
	       BIT(SPEC_CAP_PD8) | BIT(SPEC_CAP_PD17) | BIT(SPEC_CAP_PD20);
}

static struct ik_riscv_caps caps_of(uint64_t reg)
{
	struct ik_riscv_caps c;

	ck_assert_int_eq(ik_riscv_caps_decode(reg, &c), 0);
	return c;
}

/* ================================================================ DMA memory, page tables */

/* DMA memory: testlib's struct ik_test_dma (0xa5-filled, counted, failure
 * injection); table sets: ik_test_pt_new(). */

static struct ik_pgtable *mk_pt_hooks(enum ik_pt_fmt fmt, unsigned ias, struct ik_pgtable_hooks *h,
				      void *cookie)
{
	return ik_test_pt_new(fmt, ias, 0, 0, h, cookie);
}

static struct ik_pgtable_hooks plain_hooks;

static struct ik_pgtable *mk_pt(enum ik_pt_fmt fmt, unsigned ias)
{
	return mk_pt_hooks(fmt, ias, &plain_hooks, NULL);
}

static uint64_t root_of(const struct ik_pgtable *pt)
{
	struct ik_pgtable_info info;

	ik_pgtable_get_info(pt, &info);
	return info.root_iommu;
}

/* ================================================================ capabilities */

START_TEST(caps_decode_at_spec_positions)
{
	struct ik_riscv_caps c, c0;

	c = caps_of(full_caps_reg());
	ck_assert(c.version == 0x10 && c.igs == 2 && c.pas == 48);
	ck_assert(c.sv39 && c.sv48 && c.sv57 && c.sv39x4 && c.sv48x4 && c.sv57x4);
	ck_assert(c.msi_flat && c.amo_hwad && c.ats && c.t2gpa && c.pd8 && c.pd17 && c.pd20);
	ck_assert(!c.svpbmt && !c.amo_mrif && !c.msi_mrif && !c.end && !c.hpm && !c.dbg);
	ck_assert_uint_eq(c.raw, full_caps_reg());
	/* one bit at a time */
	c = caps_of(0x10 | BIT(SPEC_CAP_SV48) | (40ull << SPEC_CAP_PAS));
	ck_assert(c.sv48 && !c.sv39 && !c.sv57 && !c.sv48x4 && c.pas == 40 && c.igs == 0);
	c = caps_of(0x10 | BIT(SPEC_CAP_AMO_HWAD) | (56ull << SPEC_CAP_PAS) | BIT(63));
	ck_assert(c.amo_hwad && !c.ats && c.pas == 56);
	/* refused, *out untouched: IGS 3, PAS out of range, version 2.0 */
	memset(&c0, 0x3c, sizeof(c0));
	c = c0;
	ck_assert_int_eq(ik_riscv_caps_decode(full_caps_reg() | (3ull << SPEC_CAP_IGS), &c), -EINVAL);
	ck_assert_int_eq(ik_riscv_caps_decode(0x10 | (31ull << SPEC_CAP_PAS), &c), -EINVAL);
	ck_assert_int_eq(ik_riscv_caps_decode(0x10 | (57ull << SPEC_CAP_PAS), &c), -EINVAL);
	ck_assert_int_eq(ik_riscv_caps_decode(0x20 | (48ull << SPEC_CAP_PAS), &c), -EINVAL);
	ck_assert(memcmp(&c, &c0, sizeof(c)) == 0);
	ck_assert_int_eq(ik_riscv_caps_decode(full_caps_reg(), NULL), -EINVAL);
}
END_TEST

/* ================================================================ device contexts */

START_TEST(dc_fields_at_spec_positions)
{
	struct ik_riscv_caps caps = caps_of(full_caps_reg());
	struct ik_pgtable *s1 = ik_test_pt_new(IK_PT_RISCV_S1, 47, IK_PT_QUIRK_DIRTY, 0,
						&plain_hooks, NULL);
	struct ik_pgtable *s2 = ik_test_pt_new(IK_PT_RISCV_S2, 41, IK_PT_QUIRK_DIRTY, 0,
						&plain_hooks, NULL);
	struct ik_riscv_dc_config c;
	struct ik_riscv_dc d;
	uint64_t dc[8];

	memset(&c, 0, sizeof(c));
	c.s1 = s1;
	c.s2 = s2;
	c.gscid = 0xbeef;
	c.pscid = 0xabcde;
	c.flags = IK_RISCV_DC_EN_ATS | IK_RISCV_DC_EN_PRI | IK_RISCV_DC_T2GPA | IK_RISCV_DC_DTF |
		  IK_RISCV_DC_PRPR;
	ck_assert_int_eq(ik_riscv_dc_build(&caps, &c, dc), 0);
	ck_assert_uint_eq(dc[0], BIT(SPEC_TC_V) | BIT(SPEC_TC_EN_ATS) | BIT(SPEC_TC_EN_PRI) |
					 BIT(SPEC_TC_T2GPA) | BIT(SPEC_TC_DTF) | BIT(SPEC_TC_PRPR) |
					 BIT(SPEC_TC_GADE) | BIT(SPEC_TC_SADE));
	/* Sv39x4 (MODE 8), GSCID, PPN of the 16 KiB root */
	ck_assert_uint_eq(dc[1], (8ull << SPEC_MODE) | (0xbeefull << SPEC_GSCID) | root_of(s2) >> 12);
	ck_assert_uint_eq(dc[2], 0xabcdeull << SPEC_PSCID);
	/* Sv48 (MODE 9) */
	ck_assert_uint_eq(dc[3], (9ull << SPEC_MODE) | root_of(s1) >> 12);
	ck_assert_int_eq(ik_riscv_dc_decode(&caps, dc, false, &d), 0);
	ck_assert(d.v && !d.pdtv && d.iohgatp_mode == 8 && d.gscid == 0xbeef &&
		  d.iohgatp_root == root_of(s2) && d.pscid == 0xabcde && d.fsc_mode == 9 &&
		  d.fsc_root == root_of(s1) && d.tc == dc[0]);
	/* the extended format: MSI words as given, word 7 zero */
	c.extended = true;
	c.msiptp = (1ull << SPEC_MODE) | 0x12345;
	c.msi_addr_mask = 0xff;
	c.msi_addr_pattern = 0x000fedcba9876543ull;
	memset(dc, 0x77, sizeof(dc));
	ck_assert_int_eq(ik_riscv_dc_build(&caps, &c, dc), 0);
	ck_assert(dc[4] == c.msiptp && dc[5] == 0xff && dc[6] == c.msi_addr_pattern && dc[7] == 0);
	ck_assert_int_eq(ik_riscv_dc_decode(&caps, dc, true, &d), 0);
	ck_assert(d.msiptp_mode == 1 && d.msiptp_root == 0x12345000ull && d.msi_addr_mask == 0xff);
	/* a process directory: PDTV, fsc = pdtp (PD17 = MODE 2), DPE */
	{
		struct ik_test_dma f;
		struct ik_riscv_pdt pdt;
		struct ik_riscv_pdt_config pc = { 0 };

		ik_test_dma_init(&f);
		pc.dma = &f.d;
		pc.caps = &caps;
		pc.pid_bits = 17;
		ck_assert_int_eq(ik_riscv_pdt_init(&pdt, &pc), 0);
		memset(&c, 0, sizeof(c));
		c.pdt = &pdt;
		c.flags = IK_RISCV_DC_DPE;
		ck_assert_int_eq(ik_riscv_dc_build(&caps, &c, dc), 0);
		ck_assert_uint_eq(dc[0], BIT(SPEC_TC_V) | BIT(SPEC_TC_PDTV) | BIT(SPEC_TC_DPE));
		ck_assert_uint_eq(dc[1], 0);
		ck_assert_uint_eq(dc[2], 0);
		ck_assert_uint_eq(dc[3], ik_riscv_pdt_fsc(&pdt));
		ck_assert_uint_eq(dc[3] >> SPEC_MODE, 2);
		ck_assert_int_eq(ik_riscv_dc_decode(&caps, dc, false, &d), 0);
		ck_assert(d.pdtv && d.fsc_mode == 2);
		ik_riscv_pdt_fini(&pdt);
		ck_assert_int_eq(f.allocs, f.frees);
	}
	/* Sv57 / Sv57x4 and Bare */
	{
		struct ik_pgtable *a = mk_pt(IK_PT_RISCV_S1, 56), *b = mk_pt(IK_PT_RISCV_S2, 59);

		memset(&c, 0, sizeof(c));
		c.s1 = a;
		c.s2 = b;
		ck_assert_int_eq(ik_riscv_dc_build(&caps, &c, dc), 0);
		ck_assert(dc[0] == BIT(SPEC_TC_V) && dc[1] >> SPEC_MODE == 10 && dc[3] >> SPEC_MODE == 10);
		memset(&c, 0, sizeof(c));
		ck_assert_int_eq(ik_riscv_dc_build(&caps, &c, dc), 0);
		ck_assert(dc[0] == BIT(SPEC_TC_V) && !dc[1] && !dc[2] && !dc[3]);
		ik_pgtable_destroy(a);
		ik_pgtable_destroy(b);
	}
	ik_pgtable_destroy(s1);
	ik_pgtable_destroy(s2);
}
END_TEST

START_TEST(bad_dc_input_is_einval_and_buffers_stay_identical)
{
	struct ik_riscv_caps full = caps_of(full_caps_reg()), caps;
	struct ik_pgtable *s1 = mk_pt(IK_PT_RISCV_S1, 38), *s2 = mk_pt(IK_PT_RISCV_S2, 41);
	struct ik_pgtable *s1d = ik_test_pt_new(IK_PT_RISCV_S1, 38, IK_PT_QUIRK_DIRTY, 0,
						&plain_hooks, NULL);
	struct ik_pgtable *s2d = ik_test_pt_new(IK_PT_RISCV_S2, 41, IK_PT_QUIRK_DIRTY, 0,
						&plain_hooks, NULL);
	struct ik_pgtable *sum = ik_test_pt_new(IK_PT_RISCV_S1, 38, 0, IK_RISCV_FLAG_SUM,
						&plain_hooks, NULL);
	struct ik_pgtable *s1_48 = mk_pt(IK_PT_RISCV_S1, 47), *lpae = mk_pt(IK_PT_LPAE_S1, 48);
	struct ik_riscv_dc_config c;
	struct ik_riscv_dc d, d0;
	uint64_t dc[8], before[8], ok[8];

	memset(&c, 0, sizeof(c));
	c.s1 = s1;
	c.s2 = s2;
	c.pscid = 1;
	c.gscid = 2;
	ck_assert_int_eq(ik_riscv_dc_build(&full, &c, ok), 0);
	memset(before, 0x5a, sizeof(before));
#define BAD(capsreg, mutate)                                                                \
	do {                                                                                \
		struct ik_riscv_dc_config cb = c;                                           \
		caps = caps_of(capsreg);                                                    \
		mutate;                                                                     \
		memcpy(dc, before, sizeof(dc));                                             \
		ck_assert_msg(ik_riscv_dc_build(&caps, &cb, dc) == -EINVAL, "line %d", __LINE__); \
		ck_assert(memcmp(dc, before, sizeof(dc)) == 0);                             \
	} while (0)
	BAD(full_caps_reg(), cb.s1 = lpae);			/* a table of another format */
	BAD(full_caps_reg(), cb.s1 = s2);			/* a G-stage as first stage */
	BAD(full_caps_reg(), cb.s2 = s1);			/* and the converse */
	BAD(full_caps_reg(), cb.s1 = sum);			/* SUM belongs to a process context */
	BAD(full_caps_reg() & ~BIT(SPEC_CAP_SV39), (void)0);	/* a mode the IOMMU lacks */
	BAD(full_caps_reg() & ~BIT(SPEC_CAP_SV39X4), (void)0);
	BAD(full_caps_reg() & ~BIT(SPEC_CAP_SV48), cb.s1 = s1_48);
	BAD(full_caps_reg() & ~BIT(SPEC_CAP_AMO_HWAD), cb.s1 = s1d);	/* SADE */
	BAD(full_caps_reg() & ~BIT(SPEC_CAP_AMO_HWAD), cb.s2 = s2d);	/* GADE */
	BAD(full_caps_reg() & ~BIT(SPEC_CAP_ATS), cb.flags = IK_RISCV_DC_EN_ATS);
	BAD(full_caps_reg(), cb.flags = IK_RISCV_DC_EN_PRI);	/* without EN_ATS */
	BAD(full_caps_reg(), cb.flags = IK_RISCV_DC_T2GPA);
	BAD(full_caps_reg() & ~BIT(SPEC_CAP_T2GPA), cb.flags = IK_RISCV_DC_EN_ATS | IK_RISCV_DC_T2GPA);
	BAD(full_caps_reg(), (cb.flags = IK_RISCV_DC_EN_ATS | IK_RISCV_DC_T2GPA, cb.s2 = NULL,
			      cb.gscid = 0));
	BAD(full_caps_reg(), cb.flags = IK_RISCV_DC_EN_ATS | IK_RISCV_DC_PRPR);
	BAD(full_caps_reg(), cb.flags = IK_RISCV_DC_DPE);	/* without a process directory */
	BAD(full_caps_reg(), cb.flags = 0x40);
	BAD(full_caps_reg(), cb.pscid = 0x100000);
	BAD(full_caps_reg(), cb.gscid = 0x10000);
	BAD(full_caps_reg(), (cb.s2 = NULL));			/* a GSCID without a G-stage */
	BAD(full_caps_reg(), (cb.s1 = NULL));			/* a PSCID without a first stage */
	BAD(full_caps_reg() & ~BIT(SPEC_CAP_MSI_FLAT), cb.extended = true);
	BAD(full_caps_reg(), cb.msiptp = 1ull << SPEC_MODE);	/* MSI in the base format */
	BAD(full_caps_reg(), (cb.extended = true, cb.msiptp = 2ull << SPEC_MODE));
	BAD(full_caps_reg(), (cb.extended = true, cb.msiptp = (1ull << SPEC_MODE) | BIT(50)));
	BAD(full_caps_reg(), (cb.extended = true, cb.msiptp = 5));	/* PPN with MODE Off */
	BAD(full_caps_reg(), (cb.extended = true, cb.msi_addr_mask = BIT(52)));
	BAD(full_caps_reg(), (cb.extended = true, cb.msi_addr_pattern = BIT(63)));
#undef BAD
	ck_assert_int_eq(ik_riscv_dc_build(NULL, &c, dc), -EINVAL);
	ck_assert_int_eq(ik_riscv_dc_build(&full, NULL, dc), -EINVAL);
	ck_assert_int_eq(ik_riscv_dc_build(&full, &c, NULL), -EINVAL);

	/* hostile contexts: the decoder refuses what the IOMMU calls
	 * misconfigured, *out untouched */
	memset(&d0, 0x42, sizeof(d0));
#define BADD(capsp, ext, mutate)                                                            \
	do {                                                                                \
		memcpy(dc, ok, sizeof(ok));                                                 \
		dc[4] = dc[5] = dc[6] = dc[7] = 0;                                          \
		mutate;                                                                     \
		d = d0;                                                                     \
		ck_assert_msg(ik_riscv_dc_decode(capsp, dc, ext, &d) == -EINVAL, "line %d", __LINE__); \
		ck_assert(memcmp(&d, &d0, sizeof(d)) == 0);                                 \
	} while (0)
	BADD(NULL, false, dc[0] |= BIT(12));			/* tc reserved */
	BADD(NULL, false, dc[0] |= BIT(10));			/* SBE */
	BADD(NULL, false, dc[0] |= BIT(11));			/* SXL */
	BADD(NULL, false, dc[2] |= 1);				/* ta reserved 11:0 */
	BADD(NULL, false, dc[2] |= BIT(32));			/* ta reserved 63:32 */
	BADD(NULL, false, dc[3] |= BIT(50));			/* fsc reserved 59:44 */
	BADD(NULL, false, dc[3] = (dc[3] & ~(0xfull << SPEC_MODE)) | (11ull << SPEC_MODE));
	BADD(NULL, false, dc[3] = (dc[3] & ~(0xfull << SPEC_MODE)) | (1ull << SPEC_MODE));
	BADD(NULL, false, (dc[0] |= BIT(SPEC_TC_PDTV), dc[3] = 4ull << SPEC_MODE));
	BADD(NULL, false, dc[1] = (dc[1] & ~(0xfull << SPEC_MODE)) | (7ull << SPEC_MODE));
	BADD(NULL, false, dc[1] |= 1);				/* G-stage root not 16 KiB */
	BADD(NULL, false, dc[1] = 0xbeefull << SPEC_GSCID);	/* Bare with a GSCID */
	BADD(NULL, false, dc[0] |= BIT(SPEC_TC_EN_PRI));	/* without EN_ATS */
	BADD(NULL, false, dc[0] |= BIT(SPEC_TC_EN_ATS) | BIT(SPEC_TC_PRPR));
	BADD(NULL, false, (dc[0] |= BIT(SPEC_TC_EN_ATS) | BIT(SPEC_TC_T2GPA), dc[1] = 0));
	BADD(NULL, false, dc[0] |= BIT(SPEC_TC_DPE));		/* without PDTV */
	BADD(NULL, true, dc[7] = 1);				/* extended: word 7 reserved */
	BADD(NULL, true, dc[4] = 2ull << SPEC_MODE);
	BADD(NULL, true, dc[5] = BIT(52));
	caps = caps_of(full_caps_reg() & ~BIT(SPEC_CAP_SV39));
	BADD(&caps, false, (void)0);
	caps = caps_of(full_caps_reg() & ~BIT(SPEC_CAP_SV39X4));
	BADD(&caps, false, (void)0);
	caps = caps_of(full_caps_reg() & ~BIT(SPEC_CAP_AMO_HWAD));
	BADD(&caps, false, dc[0] |= BIT(SPEC_TC_SADE));
	caps = caps_of(full_caps_reg() & ~BIT(SPEC_CAP_ATS));
	BADD(&caps, false, dc[0] |= BIT(SPEC_TC_EN_ATS));
	caps = caps_of(full_caps_reg() & ~BIT(SPEC_CAP_MSI_FLAT));
	BADD(&caps, true, dc[4] = 1ull << SPEC_MODE);
#undef BADD
	/* V = 0: the rest is ignored, as by the IOMMU */
	memset(dc, 0xff, sizeof(dc));
	dc[0] = ~1ull;
	ck_assert_int_eq(ik_riscv_dc_decode(&full, dc, true, &d), 0);
	ck_assert(!d.v);
	ck_assert_int_eq(ik_riscv_dc_decode(&full, NULL, true, &d), -EINVAL);
	ck_assert_int_eq(ik_riscv_dc_decode(&full, dc, true, NULL), -EINVAL);
	ik_pgtable_destroy(s1);
	ik_pgtable_destroy(s2);
	ik_pgtable_destroy(s1d);
	ik_pgtable_destroy(s2d);
	ik_pgtable_destroy(sum);
	ik_pgtable_destroy(s1_48);
	ik_pgtable_destroy(lpae);
}
END_TEST

/* ================================================================ directories */

/* The directory walk as the specification gives it: from the root (ddtp
 * PPN or pdtp PPN), `levels` levels, index bits per level (leaf first),
 * non-leaf entries V [0] | PPN [53:10]; the leaf entry's address, or 0 where
 * a non-leaf entry is not valid.  Identity DMA memory. */
static uint64_t *dir_walk(uint64_t root, unsigned levels, const unsigned *bits, unsigned entry_bytes,
			  uint32_t id)
{
	uint64_t table = root;
	unsigned shift = 0;

	for (unsigned l = 0; l < levels; l++)
		shift += bits[l];
	for (unsigned l = levels - 1; l > 0; l--) {
		uint64_t e;

		shift -= bits[l];
		e = ((uint64_t *)(uintptr_t)table)[(id >> shift) & ((1u << bits[l]) - 1)];
		if (!(e & 1))
			return NULL;
		table = ((e >> 10) & ((1ull << 44) - 1)) << 12;
	}
	return (uint64_t *)(uintptr_t)(table + (uint64_t)(id & ((1u << bits[0]) - 1)) * entry_bytes);
}

struct obs {
	struct ik_riscv_ddt *t;
	uint32_t did;
	unsigned calls;
	uint64_t tc_seen[4];	/* tc of did at each call */
	struct ik_riscv_plan p[4];
	int fail;
};

static int obs_issue(void *ctx, const struct ik_riscv_plan *p)
{
	struct obs *o = ctx;
	uint64_t dc[8];

	ck_assert_int_eq(ik_riscv_ddt_read(o->t, o->did, dc), 0);
	ck_assert_uint_lt(o->calls, 4);
	o->tc_seen[o->calls] = dc[0];
	o->p[o->calls++] = *p;
	return o->fail;
}

START_TEST(device_directory_levels_follow_the_spec_split)
{
	static const unsigned base_bits[3] = { 7, 9, 8 }, ext_bits[3] = { 6, 9, 9 };
	struct ik_riscv_caps caps = caps_of(full_caps_reg());
	struct ik_pgtable *s1 = mk_pt(IK_PT_RISCV_S1, 38);
	struct ik_riscv_dc_config c;

	memset(&c, 0, sizeof(c));
	c.s1 = s1;
	c.pscid = 0x321;
	for (unsigned ext = 0; ext < 2; ext++) {
		for (unsigned lv = 1; lv <= 3; lv++) {
			const unsigned *bits = ext ? ext_bits : base_bits;
			unsigned total = 0, words = ext ? 8 : 4;
			struct ik_riscv_ddt_config tc = { 0 };
			struct ik_riscv_ddt t;
			struct ik_test_dma f;
			uint64_t dc[8], back[8], reg;
			uint32_t dids[4];

			for (unsigned l = 0; l < lv; l++)
				total += bits[l];
			ik_test_dma_init(&f);
			tc.dma = &f.d;
			tc.caps = &caps;
			tc.levels = lv;
			tc.extended = ext;
			ck_assert_int_eq(ik_riscv_ddt_init(&t, &tc), 0);
			ck_assert_uint_eq(ik_riscv_ddt_max_did(&t), (1u << total) - 1);
			reg = ik_riscv_ddt_reg(&t);
			ck_assert_uint_eq(reg & 0xf, lv + 1);	/* MODE 1LVL..3LVL = 2..4 */
			ck_assert_uint_eq(reg & BIT(4), 0);
			c.extended = ext;
			ck_assert_int_eq(ik_riscv_dc_build(&caps, &c, dc), 0);
			dids[0] = 0;
			dids[1] = (1u << total) - 1;
			dids[2] = (1u << total) / 3;
			dids[3] = dids[2] + 1;
			for (unsigned i = 0; i < 4; i++) {
				uint64_t *e;

				dc[2] = (uint64_t)(0x100 + i) << SPEC_PSCID;
				ck_assert_int_eq(ik_riscv_ddt_write(&t, dids[i], dc, NULL, NULL, NULL), 0);
				e = dir_walk((reg >> 10) << 12, lv, bits, words * 8, dids[i]);
				ck_assert_ptr_nonnull(e);
				ck_assert(memcmp(e, dc, words * 8) == 0);
				ck_assert_int_eq(ik_riscv_ddt_read(&t, dids[i], back), 0);
				ck_assert(memcmp(back, dc, words * 8) == 0);
			}
			/* the others' entries are untouched by each write */
			for (unsigned i = 0; i < 4; i++) {
				uint64_t *e = dir_walk((reg >> 10) << 12, lv, bits, words * 8, dids[i]);

				ck_assert_uint_eq(e[2], (uint64_t)(0x100 + i) << SPEC_PSCID);
			}
			/* beyond the directory */
			if (total < 24)
				ck_assert_int_eq(ik_riscv_ddt_write(&t, 1u << total, dc, NULL, NULL, NULL),
						 -EINVAL);
			ck_assert_int_eq(ik_riscv_ddt_read(&t, 1u << 24, back), -EINVAL);
			ik_riscv_ddt_fini(&t);
			ck_assert_int_eq(f.allocs, f.frees);
		}
	}
	/* bad configs, *t untouched */
	{
		struct ik_riscv_caps nomsi = caps_of(full_caps_reg() & ~BIT(SPEC_CAP_MSI_FLAT));
		struct ik_riscv_ddt_config tc = { 0 };
		struct ik_riscv_ddt t, t0;
		struct ik_test_dma f;

		ik_test_dma_init(&f);
		memset(&t0, 0x33, sizeof(t0));
		t = t0;
		tc.dma = &f.d;
		tc.caps = &caps;
		tc.levels = 0;
		ck_assert_int_eq(ik_riscv_ddt_init(&t, &tc), -EINVAL);
		tc.levels = 4;
		ck_assert_int_eq(ik_riscv_ddt_init(&t, &tc), -EINVAL);
		tc.levels = 2;
		tc.oas = 57;
		ck_assert_int_eq(ik_riscv_ddt_init(&t, &tc), -EINVAL);
		tc.oas = 0;
		tc.extended = true;
		tc.caps = &nomsi;
		ck_assert_int_eq(ik_riscv_ddt_init(&t, &tc), -EINVAL);
		tc.caps = NULL;
		ck_assert_int_eq(ik_riscv_ddt_init(&t, &tc), -EINVAL);
		tc.caps = &caps;
		f.fail_at = 1;
		ck_assert_int_eq(ik_riscv_ddt_init(&t, &tc), -ENOMEM);
		ck_assert(memcmp(&t, &t0, sizeof(t)) == 0);
		ck_assert_int_eq(f.allocs, 0);
	}
	ik_pgtable_destroy(s1);
}
END_TEST

START_TEST(device_directory_writes_in_a_safe_order)
{
	struct ik_riscv_caps caps = caps_of(full_caps_reg());
	struct ik_riscv_caps nosv48 = caps_of(full_caps_reg() & ~BIT(SPEC_CAP_SV48));
	struct ik_pgtable *s1 = mk_pt(IK_PT_RISCV_S1, 38), *s1b = mk_pt(IK_PT_RISCV_S1, 47);
	struct ik_pgtable *s2 = mk_pt(IK_PT_RISCV_S2, 41);
	struct ik_riscv_ddt_config tc = { 0 };
	struct ik_riscv_dc_config c;
	struct ik_riscv_change chg;
	struct ik_riscv_ddt t;
	struct ik_test_dma f;
	struct obs o;
	uint64_t dc[4], dc2[4], back[4], zero[4] = { 0, 0, 0, 0 };
	const uint32_t did = 0x123456;

	ik_test_dma_init(&f);
	tc.dma = &f.d;
	tc.caps = &caps;
	tc.levels = 3;
	ck_assert_int_eq(ik_riscv_ddt_init(&t, &tc), 0);
	memset(&c, 0, sizeof(c));
	c.s1 = s1;
	c.pscid = 0x55;
	c.s2 = s2;
	c.gscid = 0x66;
	ck_assert_int_eq(ik_riscv_dc_build(&caps, &c, dc), 0);
	/* invalid -> valid: one plan, after the store (tc already valid);
	 * two lower tables made */
	memset(&o, 0, sizeof(o));
	o.t = &t;
	o.did = did;
	ck_assert_int_eq(ik_riscv_ddt_write(&t, did, dc, obs_issue, &o, &chg), 0);
	ck_assert_uint_eq(o.calls, 1);
	ck_assert_uint_eq(o.tc_seen[0], dc[0]);
	ck_assert(o.p[0].n == 1 && o.p[0].sync && o.p[0].c[0].opcode == IK_RISCV_CMD_IODIR &&
		  o.p[0].c[0].func3 == IK_RISCV_IODIR_INVAL_DDT && o.p[0].c[0].did == did);
	ck_assert(chg.kind == IK_RISCV_CHANGE_DC && chg.did == did && chg.flags == 0);
	ck_assert_int_eq(f.allocs, 3);
	/* unchanged: nothing */
	memset(&o, 0, sizeof(o));
	o.t = &t;
	o.did = did;
	ck_assert_int_eq(ik_riscv_ddt_write(&t, did, dc, obs_issue, &o, &chg), 0);
	ck_assert_uint_eq(o.calls, 0);
	/* valid -> another first stage: break (tc = 0 while the old
	 * context's PSCID, under its GSCID, is flushed), then make */
	c.s1 = s1b;
	ck_assert_int_eq(ik_riscv_dc_build(&caps, &c, dc2), 0);
	ck_assert_int_eq(ik_riscv_ddt_write(&t, did, dc2, obs_issue, &o, &chg), 0);
	ck_assert_uint_eq(o.calls, 2);
	ck_assert_uint_eq(o.tc_seen[0], 0);
	ck_assert(o.p[0].n == 2 && o.p[0].c[1].func3 == IK_RISCV_IOTINVAL_VMA &&
		  o.p[0].c[1].pscid == 0x55 && o.p[0].c[1].gv && o.p[0].c[1].gscid == 0x66 &&
		  !o.p[0].c[1].av);
	ck_assert_uint_eq(o.tc_seen[1], dc2[0]);
	ck_assert(o.p[1].n == 1 && o.p[1].c[0].opcode == IK_RISCV_CMD_IODIR);
	ck_assert(chg.flags == (IK_RISCV_CHANGE_FLUSH_PSCID | IK_RISCV_CHANGE_GV) &&
		  chg.pscid == 0x55);
	ck_assert_int_eq(ik_riscv_ddt_read(&t, did, back), 0);
	ck_assert(memcmp(back, dc2, sizeof(dc2)) == 0);
	/* valid -> invalid: one plan (after tc = 0) flushing both tags */
	memset(&o, 0, sizeof(o));
	o.t = &t;
	o.did = did;
	ck_assert_int_eq(ik_riscv_ddt_write(&t, did, zero, obs_issue, &o, &chg), 0);
	ck_assert_uint_eq(o.calls, 1);
	ck_assert_uint_eq(o.tc_seen[0], 0);
	ck_assert(o.p[0].n == 3 && o.p[0].c[2].func3 == IK_RISCV_IOTINVAL_GVMA &&
		  o.p[0].c[2].gscid == 0x66);
	ck_assert_int_eq(ik_riscv_ddt_read(&t, did, back), 0);
	ck_assert(memcmp(back, zero, sizeof(zero)) == 0);
	/* the issue function's error is returned (the context stays invalid) */
	ck_assert_int_eq(ik_riscv_ddt_write(&t, did, dc, NULL, NULL, NULL), 0);
	memset(&o, 0, sizeof(o));
	o.t = &t;
	o.did = did;
	o.fail = -ETIMEDOUT;
	ck_assert_int_eq(ik_riscv_ddt_write(&t, did, dc2, obs_issue, &o, NULL), -ETIMEDOUT);
	ck_assert_int_eq(ik_riscv_ddt_read(&t, did, back), 0);
	ck_assert_uint_eq(back[0], 0);
	/* refused, nothing written: a context the capabilities refuse, a
	 * hostile one, lower tables that cannot be allocated */
	{
		struct ik_riscv_ddt_config tc2 = tc;
		struct ik_riscv_ddt t2;
		uint64_t bad[4];
		long allocs;

		tc2.caps = &nosv48;
		ck_assert_int_eq(ik_riscv_ddt_init(&t2, &tc2), 0);
		ck_assert_int_eq(ik_riscv_ddt_write(&t2, 5, dc2, NULL, NULL, NULL), -EINVAL);
		memcpy(bad, dc, sizeof(bad));
		bad[0] |= BIT(40);
		ck_assert_int_eq(ik_riscv_ddt_write(&t2, 5, bad, NULL, NULL, NULL), -EINVAL);
		allocs = f.allocs - f.frees;
		for (long n = 1; n <= 2; n++) {
			f.fail_at = n;
			f.calls = 0;
			ck_assert_int_eq(ik_riscv_ddt_write(&t2, 0x10000, dc, NULL, NULL, NULL), -ENOMEM);
			ck_assert_int_eq(ik_riscv_ddt_read(&t2, 0x10000, back), 0);
			ck_assert(memcmp(back, zero, sizeof(zero)) == 0);
			for (unsigned i = 0; i < 512; i++)
				ck_assert_uint_eq(((uint64_t *)(uintptr_t)((ik_riscv_ddt_reg(&t2) >> 10)
									   << 12))[i], 0);
		}
		f.fail_at = 0;
		ck_assert_int_eq(f.allocs - f.frees, allocs); /* the first table of a failed pair freed */
		ck_assert_int_eq(ik_riscv_ddt_write(&t2, 0x10000, dc, NULL, NULL, NULL), 0);
		ik_riscv_ddt_fini(&t2);
	}
	ck_assert_int_eq(ik_riscv_ddt_write(&t, 0x1000000, dc, NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(ik_riscv_ddt_write(NULL, 1, dc, NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(ik_riscv_ddt_write(&t, 1, NULL, NULL, NULL, NULL), -EINVAL);
	ik_riscv_ddt_fini(&t);
	ck_assert_int_eq(f.allocs, f.frees);
	ik_riscv_ddt_fini(&t);	/* a zeroed struct is ignored */
	ik_pgtable_destroy(s1);
	ik_pgtable_destroy(s1b);
	ik_pgtable_destroy(s2);
}
END_TEST

START_TEST(process_directories_hold_first_stages_by_pid)
{
	static const unsigned pd_bits[3] = { 8, 9, 3 };
	struct ik_riscv_caps caps = caps_of(full_caps_reg());
	struct ik_pgtable *s1 = mk_pt(IK_PT_RISCV_S1, 38);
	struct ik_pgtable *sum = ik_test_pt_new(IK_PT_RISCV_S1, 47, 0, IK_RISCV_FLAG_SUM,
						&plain_hooks, NULL);
	struct ik_pgtable *s2 = mk_pt(IK_PT_RISCV_S2, 41);
	static const unsigned modes[3][2] = { { 8, 1 }, { 17, 2 }, { 20, 3 } };

	for (unsigned m = 0; m < 3; m++) {
		struct ik_riscv_pdt_config pc = { 0 };
		struct ik_riscv_change chg;
		struct ik_riscv_pdt t;
		struct ik_test_dma f;
		uint64_t fsc, pc2[2], *e;
		uint32_t top = (1u << modes[m][0]) - 1, pids[3] = { 0, top, top / 3 };

		ik_test_dma_init(&f);
		pc.dma = &f.d;
		pc.caps = &caps;
		pc.pid_bits = modes[m][0];
		ck_assert_int_eq(ik_riscv_pdt_init(&t, &pc), 0);
		fsc = ik_riscv_pdt_fsc(&t);
		ck_assert_uint_eq(fsc >> SPEC_MODE, modes[m][1]);
		for (unsigned i = 0; i < 3; i++) {
			ck_assert_int_eq(ik_riscv_pdt_set(&t, pids[i], i == 1 ? sum : s1, 0x400 + i,
							  i == 2 ? IK_RISCV_PC_FLAG_ENS : 0, &chg), 0);
			ck_assert(chg.kind == IK_RISCV_CHANGE_PC && chg.pid == pids[i]);
			e = dir_walk((fsc & ((1ull << 44) - 1)) << 12, modes[m][1], pd_bits, 16, pids[i]);
			ck_assert_ptr_nonnull(e);
			/* ta: V, ENS [1], SUM [2], PSCID; fsc: iosatp */
			ck_assert_uint_eq(e[0], 1 | (i == 2 ? 2 : 0) | (i == 1 ? 4 : 0) |
							(uint64_t)(0x400 + i) << SPEC_PSCID);
			ck_assert_uint_eq(e[1], ((uint64_t)(i == 1 ? 9 : 8) << SPEC_MODE) |
							root_of(i == 1 ? sum : s1) >> 12);
			ck_assert_int_eq(ik_riscv_pdt_read(&t, pids[i], pc2), 0);
			ck_assert(pc2[0] == e[0] && pc2[1] == e[1]);
		}
		/* valid: -EBUSY; clear; -ENOENT */
		ck_assert_int_eq(ik_riscv_pdt_set(&t, pids[0], s1, 1, 0, NULL), -EBUSY);
		ck_assert_int_eq(ik_riscv_pdt_clear(&t, pids[0], &chg), 0);
		ck_assert(chg.flags == IK_RISCV_CHANGE_FLUSH_PSCID && chg.pscid == 0x400 &&
			  chg.pid == pids[0]);
		ck_assert_int_eq(ik_riscv_pdt_read(&t, pids[0], pc2), 0);
		ck_assert(pc2[0] == 0 && pc2[1] == 0);
		ck_assert_int_eq(ik_riscv_pdt_clear(&t, pids[0], &chg), -ENOENT);
		/* refused, nothing written */
		ck_assert_int_eq(ik_riscv_pdt_set(&t, top + 1, s1, 1, 0, NULL), -EINVAL);
		ck_assert_int_eq(ik_riscv_pdt_set(&t, 1, s2, 1, 0, NULL), -EINVAL);
		ck_assert_int_eq(ik_riscv_pdt_set(&t, 1, s1, 0x100000, 0, NULL), -EINVAL);
		ck_assert_int_eq(ik_riscv_pdt_set(&t, 1, s1, 1, 2, NULL), -EINVAL);
		ck_assert_int_eq(ik_riscv_pdt_read(&t, 1, pc2), 0);
		ck_assert(pc2[0] == 0 && pc2[1] == 0);
		if (m == 2) {
			/* a lower table that cannot be allocated: no link made */
			uint64_t root[512];
			const uint64_t *rp = (const uint64_t *)(uintptr_t)((fsc & ((1ull << 44) - 1)) << 12);

			memcpy(root, rp, sizeof(root));
			for (long n = 1; n <= 2; n++) {
				f.fail_at = f.calls = 0;
				f.fail_at = n;
				ck_assert_int_eq(ik_riscv_pdt_set(&t, 0x80000, s1, 1, 0, NULL), -ENOMEM);
				ck_assert(memcmp(root, rp, sizeof(root)) == 0);
			}
			f.fail_at = 0;
		}
		ik_riscv_pdt_fini(&t);
		ck_assert_int_eq(f.allocs, f.frees);
	}
	/* a mode the capabilities lack, a bad pid width */
	{
		struct ik_riscv_caps nopd = caps_of(full_caps_reg() & ~BIT(SPEC_CAP_PD17));
		struct ik_riscv_pdt_config pc = { 0 };
		struct ik_riscv_pdt t;
		struct ik_test_dma f;

		ik_test_dma_init(&f);
		pc.dma = &f.d;
		pc.caps = &nopd;
		pc.pid_bits = 17;
		ck_assert_int_eq(ik_riscv_pdt_init(&t, &pc), -EINVAL);
		pc.caps = &caps;
		pc.pid_bits = 16;
		ck_assert_int_eq(ik_riscv_pdt_init(&t, &pc), -EINVAL);
		ck_assert_int_eq(f.allocs, 0);
	}
	ik_pgtable_destroy(s1);
	ik_pgtable_destroy(sum);
	ik_pgtable_destroy(s2);
}
END_TEST

/* ================================================================ planner */

/* Every command of a plan encodes, and decodes back to itself. */
static void plan_decodes(const struct ik_riscv_plan *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct ik_riscv_cmd back;
		uint64_t w[2];

		ck_assert_int_eq(ik_riscv_cmd_encode(&p->c[i], w), 0);
		ck_assert_int_eq(ik_riscv_cmd_decode(w, &back), 0);
		ck_assert(memcmp(&back, &p->c[i], sizeof(back)) == 0);
	}
}

/* c is an IOTINVAL.VMA of pscid (GV/gscid as given), AV and addr as given. */
static void is_vma(const struct ik_riscv_cmd *c, uint32_t pscid, bool gv, uint16_t gscid, bool av,
		   uint64_t addr)
{
	ck_assert_uint_eq(c->opcode, IK_RISCV_CMD_IOTINVAL);
	ck_assert_uint_eq(c->func3, IK_RISCV_IOTINVAL_VMA);
	ck_assert(c->pscv && c->pscid == pscid);
	ck_assert(c->gv == gv && c->gscid == gscid);
	ck_assert(c->av == av && c->addr == addr);
}

START_TEST(plan_unmap_follows_the_choice_table)
{
	struct ik_pgtable *s1 = mk_pt(IK_PT_RISCV_S1, 38), *s2 = mk_pt(IK_PT_RISCV_S2, 41);
	struct ik_pgtable *other = mk_pt(IK_PT_RISCV_S1, 38), *lpae = mk_pt(IK_PT_LPAE_S1, 48);
	struct ik_riscv_target t;
	struct ik_riscv_plan p, p0;
	struct ik_gather g;

	memset(&t, 0, sizeof(t));
	t.pt = s1;
	t.pscid = 0xabcde;
	ik_gather_init(&g);
	/* empty: nothing, no fence */
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 0 && !p.sync);
	/* one page: AV = 1 at it */
	g.start = 0x5000, g.end = 0x6000, g.granule = 0x1000, g.pt = s1;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 1 && p.sync);
	is_vma(&p.c[0], 0xabcde, false, 0, true, 0x5000);
	plan_decodes(&p);
	/* three pages: three commands, in order */
	g.start = 0x7000, g.end = 0xa000;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 3);
	for (unsigned i = 0; i < 3; i++)
		is_vma(&p.c[i], 0xabcde, false, 0, true, 0x7000 + 0x1000ull * i);
	/* a table freed (walk): AV = 0, whatever the size - AV = 1 would
	 * leave a cached non-leaf entry pointing into the freed table */
	g.walk = true;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 1 && p.sync);
	is_vma(&p.c[0], 0xabcde, false, 0, false, 0);
	plan_decodes(&p);
	g.start = 0x5000, g.end = 0x6000;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 1 && !p.c[0].av);
	/* two 2 MiB blocks: one command per block (the gather's granule) */
	g.start = 0x40200000, g.end = 0x40600000, g.granule = 0x200000, g.walk = false;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 2);
	is_vma(&p.c[0], 0xabcde, false, 0, true, 0x40200000);
	is_vma(&p.c[1], 0xabcde, false, 0, true, 0x40400000);
	/* beyond max_av steps: AV = 0 */
	t.max_av = 1;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 1 && !p.c[0].av);
	t.max_av = 2; /* exactly the steps: still per address */
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 2 && p.c[0].av && p.c[1].av);
	t.max_av = 0; /* 0: IK_RISCV_PLAN_MAX */
	g.start = 0, g.end = IK_RISCV_PLAN_MAX * 0x1000ull, g.granule = 0x1000;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == IK_RISCV_PLAN_MAX && p.c[IK_RISCV_PLAN_MAX - 1].av);
	plan_decodes(&p);
	g.end += 0x1000;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 1 && !p.c[0].av);
	/* a first stage under a G-stage: GV and the GSCID */
	t.flags = IK_RISCV_TARGET_GV;
	t.gscid = 0xbeef;
	g.start = 0x3000, g.end = 0x4000;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	is_vma(&p.c[0], 0xabcde, true, 0xbeef, true, 0x3000);
	plan_decodes(&p);
	/* a G-stage table: .GVMA of the GSCID */
	memset(&t, 0, sizeof(t));
	t.pt = s2;
	t.gscid = 0x1234;
	g.pt = s2;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 1 && p.c[0].opcode == IK_RISCV_CMD_IOTINVAL &&
		  p.c[0].func3 == IK_RISCV_IOTINVAL_GVMA && p.c[0].gv && p.c[0].gscid == 0x1234 &&
		  !p.c[0].pscv && p.c[0].av && p.c[0].addr == 0x3000);
	plan_decodes(&p);
	g.walk = true;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, &p), 0);
	ck_assert(p.n == 1 && p.c[0].func3 == IK_RISCV_IOTINVAL_GVMA && !p.c[0].av);
	plan_decodes(&p);

	/* refused, *p untouched */
	memset(&p0, 0x6b, sizeof(p0));
	t.pt = s1;
	t.gscid = 0;
	t.pscid = 7;
	g.pt = s1;
#define BAD(mutate)                                                                         \
	do {                                                                                \
		struct ik_riscv_target tb = t;                                              \
		struct ik_gather gb = g;                                                    \
		(void)gb;                                                                   \
		mutate;                                                                     \
		p = p0;                                                                     \
		ck_assert_int_eq(ik_riscv_plan_unmap(&tb, &gb, &p), -EINVAL);               \
		ck_assert(memcmp(&p, &p0, sizeof(p)) == 0);                                 \
	} while (0)
	BAD(gb.pt = other);			/* a gather from another table set */
	BAD((tb.pt = lpae, gb.pt = lpae));	/* not a RISC-V table */
	BAD(tb.pt = NULL);
	BAD(tb.pscid = 0x100000);
	BAD(tb.gscid = 5);			/* a GSCID for a first stage without GV */
	BAD((tb.flags = IK_RISCV_TARGET_GV, tb.gscid = 0x10000));
	BAD(tb.flags = 2);
	BAD(tb.max_av = IK_RISCV_PLAN_MAX + 1);
	BAD((tb.pt = s2, gb.pt = s2));		/* a PSCID for a G-stage */
	BAD((tb.pt = s2, gb.pt = s2, tb.pscid = 0, tb.flags = IK_RISCV_TARGET_GV));
	BAD(gb.granule = 0x800);
	BAD(gb.granule = 0x3000);
#undef BAD
	p = p0;
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, NULL, &p), -EINVAL);
	ck_assert_int_eq(ik_riscv_plan_unmap(NULL, &g, &p), -EINVAL);
	ck_assert_int_eq(ik_riscv_plan_unmap(&t, &g, NULL), -EINVAL);
	ck_assert(memcmp(&p, &p0, sizeof(p)) == 0);
	/* range: 4 KiB stride; walk -> AV = 0; size 0 or wrapping refused */
	ck_assert_int_eq(ik_riscv_plan_range(&t, 0x3800, 0x1000, false, &p), 0);
	ck_assert(p.n == 2 && p.c[0].addr == 0x3000 && p.c[1].addr == 0x4000 && p.sync);
	ck_assert_int_eq(ik_riscv_plan_range(&t, 0x3000, 0x1000, true, &p), 0);
	ck_assert(p.n == 1 && !p.c[0].av);
	p = p0;
	ck_assert_int_eq(ik_riscv_plan_range(&t, 0x3000, 0, true, &p), -EINVAL);
	ck_assert_int_eq(ik_riscv_plan_range(&t, ~0ull, 2, true, &p), -EINVAL);
	ck_assert(memcmp(&p, &p0, sizeof(p)) == 0);
	ck_assert_int_eq(ik_riscv_plan_range(&t, 0, ~0ull, false, &p), 0);
	ck_assert(p.n == 1 && !p.c[0].av);
	ck_assert_int_eq(ik_riscv_plan_range(&t, ~0ull << 12, 1ull << 12, false, &p), 0);
	ck_assert(p.n == 1 && p.c[0].av && p.c[0].addr == ~0ull << 12);
	plan_decodes(&p);
	ik_pgtable_destroy(s1);
	ik_pgtable_destroy(s2);
	ik_pgtable_destroy(other);
	ik_pgtable_destroy(lpae);
}
END_TEST

START_TEST(plan_change_follows_its_table)
{
	struct ik_riscv_change c;
	struct ik_riscv_plan p, p0;

	memset(&c, 0, sizeof(c));
	c.kind = IK_RISCV_CHANGE_DC;
	c.did = 0xabcdef;
	ck_assert_int_eq(ik_riscv_plan_change(&c, &p), 0);
	ck_assert(p.n == 1 && p.sync && p.c[0].opcode == IK_RISCV_CMD_IODIR &&
		  p.c[0].func3 == IK_RISCV_IODIR_INVAL_DDT && p.c[0].dv && p.c[0].did == 0xabcdef);
	plan_decodes(&p);
	c.flags = IK_RISCV_CHANGE_FLUSH_PSCID | IK_RISCV_CHANGE_FLUSH_GSCID | IK_RISCV_CHANGE_GV;
	c.pscid = 0x12345;
	c.gscid = 0x6789;
	ck_assert_int_eq(ik_riscv_plan_change(&c, &p), 0);
	ck_assert(p.n == 3 && p.sync);
	ck_assert(p.c[0].opcode == IK_RISCV_CMD_IODIR); /* the directory first */
	is_vma(&p.c[1], 0x12345, true, 0x6789, false, 0);
	ck_assert(p.c[2].func3 == IK_RISCV_IOTINVAL_GVMA && p.c[2].gv && p.c[2].gscid == 0x6789 &&
		  !p.c[2].av);
	plan_decodes(&p);
	memset(&c, 0, sizeof(c));
	c.kind = IK_RISCV_CHANGE_PC;
	c.did = 0x42;
	c.pid = 0xfffff;
	c.flags = IK_RISCV_CHANGE_FLUSH_PSCID;
	c.pscid = 9;
	ck_assert_int_eq(ik_riscv_plan_change(&c, &p), 0);
	ck_assert(p.n == 2 && p.c[0].func3 == IK_RISCV_IODIR_INVAL_PDT && p.c[0].dv &&
		  p.c[0].did == 0x42 && p.c[0].pid == 0xfffff);
	is_vma(&p.c[1], 9, false, 0, false, 0);
	plan_decodes(&p);
	/* refused, *p untouched */
	memset(&p0, 0x5a, sizeof(p0));
#define BAD(mutate)                                                                         \
	do {                                                                                \
		struct ik_riscv_change cb = c;                                              \
		mutate;                                                                     \
		p = p0;                                                                     \
		ck_assert_int_eq(ik_riscv_plan_change(&cb, &p), -EINVAL);                   \
		ck_assert(memcmp(&p, &p0, sizeof(p)) == 0);                                 \
	} while (0)
	BAD(cb.kind = 0);
	BAD(cb.kind = 3);
	BAD(cb.did = 0x1000000);
	BAD(cb.pid = 0x100000);
	BAD(cb.pscid = 0x100000);
	BAD(cb.gscid = 0x10000);
	BAD(cb.flags = 8);
	BAD(cb.kind = IK_RISCV_CHANGE_DC);	/* a PID for a device context */
#undef BAD
	ck_assert_int_eq(ik_riscv_plan_change(NULL, &p), -EINVAL);
	ck_assert_int_eq(ik_riscv_plan_change(&c, NULL), -EINVAL);
	/* issue: a plan that does not encode issues nothing */
	p.n = IK_RISCV_PLAN_MAX + 1;
	ck_assert_int_eq(ik_riscv_plan_issue((struct ik_cmdq *)&p, &p), -EINVAL);
	ck_assert_int_eq(ik_riscv_plan_issue(NULL, &p0), -EINVAL);
}
END_TEST

/* ================================================================ end to end */

/* An ik_cmdq of the RISC-V format, consumed inline by the soft IOMMU (the
 * tail write drains it), whose stream 0 is attached to what the IOMMU walks
 * for the table's atp, tagged with the PSCID (first stage) or the GSCID
 * (G-stage). */
struct sys {
	struct ik_softiommu *s;
	struct ik_softiommu_cq cq;
	struct ik_cmdq *q;
	void *ring;
	struct ik_riscv_target t;
	unsigned flush_walks;
};

static void sys_init(struct sys *y)
{
	struct ik_softiommu_config sc;

	memset(y, 0, sizeof(*y));
	ik_softiommu_config_init(&sc);
	sc.flags = IK_SOFTIOMMU_CHECK;
	sc.phys_to_host = ik_softiommu_host_identity;
	ck_assert_int_eq(ik_softiommu_create(&sc, &y->s), 0);
	y->ring = ik_test_soft_cmdq(y->s, &ik_cmdq_fmt_riscv, 6, IK_CMDQ_CFG_NO_WRAP,
				    ik_softiommu_host_write32, &y->cq, &y->q);
}

static void sys_fini(struct sys *y)
{
	ik_cmdq_destroy(y->q);
	ik_softiommu_destroy(y->s);
	free(y->ring);
}

#define DID 0x4321u

/* Make pt the device context of DID (a first stage tagged PSCID tag, or a
 * G-stage tagged GSCID tag) through the directory and the queue, and point
 * stream 0 at what the IOMMU reads there. */
static void attach_dc(struct sys *y, struct ik_riscv_ddt *ddt, struct ik_test_dma *f,
		      const struct ik_pgtable *pt, bool s2, uint32_t tag)
{
	struct ik_riscv_caps caps = caps_of(full_caps_reg());
	struct ik_riscv_ddt_config tc = { 0 };
	struct ik_riscv_dc_config c;
	struct ik_riscv_change chg;
	struct ik_riscv_dc d;
	struct ik_pt_walker w;
	uint64_t dc[4];

	ik_test_dma_init(f);
	tc.dma = &f->d;
	tc.caps = &caps;
	tc.levels = 2;
	ck_assert_int_eq(ik_riscv_ddt_init(ddt, &tc), 0);
	memset(&c, 0, sizeof(c));
	if (s2) {
		c.s2 = pt;
		c.gscid = tag;
	} else {
		c.s1 = pt;
		c.pscid = tag;
	}
	ck_assert_int_eq(ik_riscv_dc_build(&caps, &c, dc), 0);
	ck_assert_int_eq(ik_riscv_ddt_write(ddt, DID, dc, ik_riscv_issue_cmdq, y->q, &chg), 0);
	ck_assert_int_eq(ik_riscv_ddt_read(ddt, DID, dc), 0);
	ck_assert_int_eq(ik_riscv_dc_decode(&caps, dc, false, &d), 0);
	ck_assert_int_eq(ik_riscv_walker_from_atp(&w, s2 ? IK_PT_RISCV_S2 : IK_PT_RISCV_S1,
						  s2 ? dc[1] : dc[3], 48, 0, 0), 0);
	ck_assert_int_eq(ik_softiommu_attach_pt(y->s, 0, s2 ? d.gscid : d.pscid, &w,
						&ik_softiommu_host_mem), 0);
}

static void e2e_flush_walk(void *cookie, uint64_t iova, uint64_t size, uint64_t granule)
{
	struct sys *y = cookie;
	struct ik_riscv_plan p;

	(void)granule;
	y->flush_walks++;
	ck_assert_int_eq(ik_riscv_plan_range(&y->t, iova, size, true, &p), 0);
	ck_assert(p.n == 1 && !p.c[0].av);
	ck_assert_int_eq(ik_riscv_plan_issue(y->q, &p), 0);
}

/* ik_test_churn()'s invalidation: the unmap's plan, issued. */
static int e2e_inval(void *ctx, struct ik_gather *g)
{
	struct sys *y = ctx;
	struct ik_riscv_plan p;
	int err = ik_riscv_plan_unmap(&y->t, g, &p);

	return err ? err : ik_riscv_plan_issue(y->q, &p);
}

/* What examples/bench's dsys_invalidate() issued before the planner: one
 * AV = 1 command per 4 KiB page of the range, the tables-freed flag
 * ignored. */
static void old_dsys_invalidate(struct sys *y, uint64_t iova, uint64_t size)
{
	struct ik_riscv_plan p;

	for (uint64_t a = iova; a < iova + size; a += 4096) {
		ck_assert_int_eq(ik_riscv_plan_range(&y->t, a, 4096, false, &p), 0);
		ck_assert(p.n == 1 && p.c[0].av);
		ck_assert_int_eq(ik_riscv_plan_issue(y->q, &p), 0);
	}
}

/*
 * The planner end to end, for a first-stage (Sv39) and a G-stage (Sv39x4)
 * table: maps, device accesses (filling the soft IOMMU's IOTLB and walk
 * cache), unmaps (leaf ones, whole tables, blocks), each followed by the
 * planned invalidations issued through the queue; the stale-translation
 * checker then finds nothing, and every access to an unmapped range faults.
 * Controls: an unmap without its invalidation is caught, and so is a freed
 * table followed by per-page AV = 1 commands only (the old dsys_invalidate()).
 */
START_TEST(planned_invalidations_leave_no_stale_translation)
{
	for (unsigned k = 0; k < 3; k++) {
		const size_t span = 8u << 20;
		const bool s2 = k == 2;
		const uint32_t tag = s2 ? 0x77 : 0x12345;
		struct ik_pgtable_hooks hooks = { 0 };
		struct ik_softiommu_stale rep;
		struct ik_riscv_plan p;
		struct ik_riscv_ddt ddt;
		struct ik_riscv_change chg;
		struct ik_test_dma f;
		struct ik_rng rng = { 0x5c5 + k };
		struct ik_pgtable *pt;
		unsigned char *buf;
		bool *mapped;
		long iters = ik_test_iters(300);
		struct sys y;

		sys_init(&y);
		hooks.flush_walk = e2e_flush_walk;
		pt = mk_pt_hooks(s2 ? IK_PT_RISCV_S2 : IK_PT_RISCV_S1, s2 ? 41 : 39, &hooks, &y);
		y.t.pt = pt;
		if (s2)
			y.t.gscid = tag;
		else
			y.t.pscid = tag;
		y.t.max_av = k == 1 ? 2 : 0; /* k 1: the whole-space form more often */
		attach_dc(&y, &ddt, &f, pt, s2, tag);
		buf = ik_test_churn_mem(span, &mapped);
		/* Deterministic first: a page (its table made), the page
		 * unmapped (its table freed: AV = 0), the page again; a 2 MiB
		 * block over an empty table (the engine's flush_walk), the
		 * block unmapped. */
		{
			uint64_t v = 7, iova = 0x40000000ull + span - (2u << 20);
			struct ik_gather g;

			ik_test_map_unmap(pt, y.s, iova + 0x3000, buf, &g);
			ck_assert_int_eq(ik_riscv_plan_unmap(&y.t, &g, &p), 0);
			ck_assert(p.n == 1 && p.c[0].av == !g.walk);
			ck_assert_int_eq(ik_riscv_plan_issue(y.q, &p), 0);
			ik_pgtable_gather_sync(pt, &g);
			ck_assert_int_eq(ik_pgtable_map(pt, iova + 0x3000, (uint64_t)(uintptr_t)buf + 4096,
							4096, IK_PROT_READ | IK_PROT_WRITE), 0);
			ck_assert_int_eq(ik_softiommu_dma_read(y.s, 0, iova + 0x3000, &v, 8), 0);
			ck_assert_int_eq(ik_softiommu_stale_pop(y.s, &rep), -ENOENT);
			ik_gather_init(&g);
			ck_assert_int_eq(ik_pgtable_unmap(pt, iova + 0x3000, 4096, &g), 4096);
			ck_assert_int_eq(ik_riscv_plan_unmap(&y.t, &g, &p), 0);
			ck_assert_int_eq(ik_riscv_plan_issue(y.q, &p), 0);
			ik_pgtable_gather_sync(pt, &g);
			ck_assert_int_eq(ik_pgtable_map(pt, iova,
							(uint64_t)(uintptr_t)buf + span - (2u << 20),
							2u << 20, IK_PROT_READ | IK_PROT_WRITE), 0);
			ck_assert_int_eq(ik_softiommu_dma_write(y.s, 0, iova + 0x3000, &v, 8), 0);
			ik_gather_init(&g);
			ck_assert_int_eq(ik_pgtable_unmap(pt, iova, 2u << 20, &g), 2u << 20);
			ck_assert_int_eq(ik_riscv_plan_unmap(&y.t, &g, &p), 0);
			ck_assert_int_eq(ik_riscv_plan_issue(y.q, &p), 0);
			ik_pgtable_gather_sync(pt, &g);
			ik_test_gone(y.s, iova + 0x3000);
		}
		ik_test_churn(pt, y.s, 0x40000000ull, buf, span, mapped, iters, &rng, e2e_inval, &y);
		ck_assert_uint_eq(y.cq.rejected, 0);
		/* Control 1: an unmap without its invalidation is caught. */
		{
			uint64_t iova = 0x80000000ull;
			struct ik_gather g;

			ik_test_stale_control(pt, y.s, iova, buf, &g);
			old_dsys_invalidate(&y, iova, 4096);
			ik_pgtable_gather_sync(pt, &g);
		}
		/* Control 2: per-page AV = 1 commands after an unmap that
		 * freed the leaf table (what the old dsys_invalidate() sent
		 * for every range it did not hand to the whole-space form):
		 * the cached walk to the freed table stays; a map next to it
		 * builds a new table (the old one is still held by the
		 * gather, so it is another page) and the device's access goes
		 * through the stale walk. */
		{
			uint64_t v = 1, iova = 0xc0000000ull;
			struct ik_gather g;

			ck_assert_int_eq(ik_pgtable_map(pt, iova, (uint64_t)(uintptr_t)buf, 4096,
							IK_PROT_READ | IK_PROT_WRITE), 0);
			ck_assert_int_eq(ik_softiommu_dma_write(y.s, 0, iova, &v, 8), 0);
			ik_gather_init(&g);
			ck_assert_int_eq(ik_pgtable_unmap(pt, iova, 2u << 20, &g), 4096);
			ck_assert(g.walk);
			old_dsys_invalidate(&y, iova, 2u << 20);
			ck_assert_int_eq(ik_pgtable_map(pt, iova + 0x1000, (uint64_t)(uintptr_t)buf,
							4096, IK_PROT_READ | IK_PROT_WRITE), 0);
			(void)ik_softiommu_dma_read(y.s, 0, iova + 0x1000, &v, 8);
			ck_assert_int_eq(ik_softiommu_stale_pop(y.s, &rep), 0);
			ik_pgtable_gather_sync(pt, &g);
		}
		/* Detach: the context made invalid, its plan issued; the tag's
		 * cached translations go with it. */
		{
			uint64_t zero[4] = { 0, 0, 0, 0 }, v;

			ck_assert_int_eq(ik_riscv_ddt_write(&ddt, DID, zero, ik_riscv_issue_cmdq, y.q,
							    &chg), 0);
			ck_assert(chg.flags == (s2 ? IK_RISCV_CHANGE_FLUSH_GSCID
						   : IK_RISCV_CHANGE_FLUSH_PSCID));
			ck_assert(s2 ? chg.gscid == tag : chg.pscid == tag);
			ck_assert_uint_eq(y.cq.rejected, 0);
			(void)ik_softiommu_dma_read(y.s, 0, 0xc0000000ull + 0x1000, &v, 8);
			ck_assert_int_eq(ik_softiommu_stale_pop(y.s, &rep), -ENOENT);
			ik_riscv_ddt_fini(&ddt);
			ck_assert_int_eq(f.allocs, f.frees);
		}
		sys_fini(&y);
		ik_pgtable_destroy(pt);
		free(buf);
		free(mapped);
	}
}
END_TEST

/* ================================================================ registers and bring-up */

/*
 * A register model of a RISC-V IOMMU (spec chapter "Memory-mapped register
 * interface"): capabilities, fctl, ddtp with BUSY for a few reads after a
 * write (and a record of any write while busy), queues that turn on a few
 * reads after cqen/fqen/pqen, a command queue that executes commands when
 * cqt is written (and, like QEMU 10.0.2, resumes after an error only on a
 * cqt write), fault and page-request queues the test fills.  DMA memory is
 * identity-mapped host memory.
 */
struct rm {
	uint64_t caps, ddtp, cqb, fqb, pqb;
	uint32_t fctl, cqh, cqt, fqh, fqt, pqh, pqt, cqcsr, fqcsr, pqcsr, ipsr;
	unsigned ddtp_busy, busy[3];	/* reads left with BUSY */
	uint32_t ddtp_modes;	/* bit m: ddtp MODE m is implemented */
	bool never_on, mf_on_enable;
	unsigned violations;	/* ddtp written while busy, a base written while on */
	unsigned ncmds;
	struct ik_riscv_cmd cmds[64];
	struct ik_mmio mmio;
};

static uint32_t *rm_csr(struct rm *m, uint32_t off, unsigned *q)
{
	*q = off == IK_RISCV_REG_CQCSR ? 0 : off == IK_RISCV_REG_FQCSR ? 1 : 2;
	return *q == 0 ? &m->cqcsr : *q == 1 ? &m->fqcsr : &m->pqcsr;
}

static void rm_run(struct rm *m)
{
	uint32_t mask = (2u << (m->cqb & 0x1f)) - 1;
	const uint64_t *ring = (const uint64_t *)(uintptr_t)(((m->cqb >> 10) & ((1ull << 44) - 1)) << 12);

	if (!(m->cqcsr & IK_RISCV_QCSR_ON) ||
	    (m->cqcsr & (IK_RISCV_CQCSR_CMD_ILL | IK_RISCV_QCSR_MF | IK_RISCV_CQCSR_CMD_TO)))
		return;
	while (m->cqh != m->cqt) {
		struct ik_riscv_cmd c;

		if (ik_riscv_cmd_decode(&ring[2 * m->cqh], &c)) {
			m->cqcsr |= IK_RISCV_CQCSR_CMD_ILL;
			m->ipsr |= IK_RISCV_IPSR_CIP;
			return;
		}
		if (m->ncmds < 64)
			m->cmds[m->ncmds++] = c;
		if (c.opcode == IK_RISCV_CMD_IOFENCE && c.av)
			__atomic_store_n((uint32_t *)(uintptr_t)c.addr, c.data, __ATOMIC_RELEASE);
		m->cqh = (m->cqh + 1) & mask;
	}
}

static uint32_t rm_read32(void *ctx, uint32_t off)
{
	struct rm *m = ctx;
	unsigned q;

	switch (off) {
	case IK_RISCV_REG_FCTL: return m->fctl;
	case IK_RISCV_REG_CQH: return m->cqh;
	case IK_RISCV_REG_CQT: return m->cqt;
	case IK_RISCV_REG_FQH: return m->fqh;
	case IK_RISCV_REG_FQT: return m->fqt;
	case IK_RISCV_REG_PQH: return m->pqh;
	case IK_RISCV_REG_PQT: return m->pqt;
	case IK_RISCV_REG_IPSR: return m->ipsr;
	case IK_RISCV_REG_CQCSR:
	case IK_RISCV_REG_FQCSR:
	case IK_RISCV_REG_PQCSR: {
		uint32_t *csr = rm_csr(m, off, &q);

		if (m->busy[q]) {
			if (--m->busy[q] == 0 && !m->never_on) {
				*csr &= ~IK_RISCV_QCSR_ON;
				if (*csr & IK_RISCV_QCSR_EN) {
					if (m->mf_on_enable)
						*csr |= IK_RISCV_QCSR_MF;
					else
						*csr |= IK_RISCV_QCSR_ON;
				}
			}
			return *csr | IK_RISCV_QCSR_BUSY;
		}
		return *csr;
	}
	default: return (uint32_t)(off == IK_RISCV_REG_CAPS ? m->caps : 0);
	}
}

static void rm_write32(void *ctx, uint32_t off, uint32_t v)
{
	struct rm *m = ctx;
	const uint32_t rw1c_cq = IK_RISCV_QCSR_MF | IK_RISCV_CQCSR_CMD_TO | IK_RISCV_CQCSR_CMD_ILL |
				 IK_RISCV_CQCSR_FENCE_W_IP;
	const uint32_t rw1c_q = IK_RISCV_QCSR_MF | IK_RISCV_QCSR_OF;
	unsigned q;

	switch (off) {
	case IK_RISCV_REG_FCTL:
		m->fctl = v & (((m->caps >> 28) & 3) ? IK_RISCV_FCTL_WSI : 0);
		break;
	case IK_RISCV_REG_CQT:
		m->cqt = v;
		rm_run(m);
		break;
	case IK_RISCV_REG_FQH: m->fqh = v; break;
	case IK_RISCV_REG_PQH: m->pqh = v; break;
	case IK_RISCV_REG_IPSR: m->ipsr &= ~v; break;
	case IK_RISCV_REG_CQCSR:
	case IK_RISCV_REG_FQCSR:
	case IK_RISCV_REG_PQCSR: {
		uint32_t *csr = rm_csr(m, off, &q), rw1c = q == 0 ? rw1c_cq : rw1c_q;
		bool was = *csr & IK_RISCV_QCSR_EN, en = v & IK_RISCV_QCSR_EN;

		*csr &= ~(v & rw1c);
		*csr = (*csr & ~(IK_RISCV_QCSR_EN | IK_RISCV_QCSR_IE)) |
		       (v & (IK_RISCV_QCSR_EN | IK_RISCV_QCSR_IE));
		if (was != en) {
			m->busy[q] = 2;
			if (en && q == 0)
				m->cqh = 0;
			if (en && q == 1)
				m->fqt = 0;
			if (en && q == 2)
				m->pqt = 0;
		}
		break;
	}
	default: break;
	}
}

static uint64_t rm_read64(void *ctx, uint32_t off)
{
	struct rm *m = ctx;

	switch (off) {
	case IK_RISCV_REG_CAPS: return m->caps;
	case IK_RISCV_REG_DDTP:
		if (m->ddtp_busy) {
			m->ddtp_busy--;
			return m->ddtp | IK_RISCV_DDTP_BUSY;
		}
		return m->ddtp;
	case IK_RISCV_REG_CQB: return m->cqb;
	case IK_RISCV_REG_FQB: return m->fqb;
	case IK_RISCV_REG_PQB: return m->pqb;
	default: return rm_read32(ctx, off) | (uint64_t)rm_read32(ctx, off + 4) << 32;
	}
}

static void rm_write64(void *ctx, uint32_t off, uint64_t v)
{
	struct rm *m = ctx;

	switch (off) {
	case IK_RISCV_REG_DDTP:
		if (m->ddtp_busy)
			m->violations++;
		if (m->ddtp_modes & (1u << (v & 0xf)))
			m->ddtp = v;
		m->ddtp_busy = 3;
		break;
	case IK_RISCV_REG_CQB:
	case IK_RISCV_REG_FQB:
	case IK_RISCV_REG_PQB: {
		unsigned q = off == IK_RISCV_REG_CQB ? 0 : off == IK_RISCV_REG_FQB ? 1 : 2;
		uint32_t csr = q == 0 ? m->cqcsr : q == 1 ? m->fqcsr : m->pqcsr;

		if (csr & (IK_RISCV_QCSR_ON | IK_RISCV_QCSR_EN))
			m->violations++;
		*(q == 0 ? &m->cqb : q == 1 ? &m->fqb : &m->pqb) = v;
		break;
	}
	default:
		rm_write32(ctx, off, (uint32_t)v);
		rm_write32(ctx, off + 4, (uint32_t)(v >> 32));
	}
}

static void rm_init(struct rm *m, uint64_t caps)
{
	memset(m, 0, sizeof(*m));
	m->caps = caps;
	m->ddtp_modes = 0x1f;
	m->mmio.read32 = rm_read32;
	m->mmio.write32 = rm_write32;
	m->mmio.read64 = rm_read64;
	m->mmio.write64 = rm_write64;
	m->mmio.ctx = m;
}

/* The device writes a record into a queue (fault: 4 words, page request:
 * 2), or sets OF when it is full. */
static void rm_push(struct rm *m, bool fq, const uint64_t *rec)
{
	uint64_t b = fq ? m->fqb : m->pqb;
	uint32_t *t = fq ? &m->fqt : &m->pqt, h = fq ? m->fqh : m->pqh;
	uint32_t *csr = fq ? &m->fqcsr : &m->pqcsr, mask = (2u << (b & 0x1f)) - 1;
	unsigned words = fq ? 4 : 2;
	uint64_t *ring = (uint64_t *)(uintptr_t)(((b >> 10) & ((1ull << 44) - 1)) << 12);

	if (!(*csr & IK_RISCV_QCSR_ON))
		return;
	if (((*t + 1) & mask) == h) {
		*csr |= IK_RISCV_QCSR_OF;
		return;
	}
	memcpy(&ring[*t * words], rec, words * 8);
	*t = (*t + 1) & mask;
	m->ipsr |= fq ? IK_RISCV_IPSR_FIP : IK_RISCV_IPSR_PIP;
}

static struct ik_riscv *rm_unit(struct rm *m, struct ik_test_dma *f, unsigned fq_log2, ik_u32 flags)
{
	struct ik_riscv_config c = { 0 };
	struct ik_riscv *u = NULL;

	ik_test_dma_init(f);
	c.mmio = &m->mmio;
	c.dma = &f->d;
	c.cq_log2 = 6;
	c.fq_log2 = fq_log2;
	c.pq_log2 = 3;
	c.flags = flags;
	c.timeout_ns = 2000000000ull;
	ck_assert_int_eq(ik_riscv_create(&c, &u), 0);
	return u;
}

START_TEST(bringup_follows_the_register_handshakes)
{
	struct rm m;
	struct ik_test_dma f;
	struct ik_riscv *u;
	struct ik_riscv_change chg = { 0 };
	struct ik_riscv_plan p;
	uint64_t *ring;

	rm_init(&m, full_caps_reg());
	u = rm_unit(&m, &f, 4, IK_RISCV_CFG_WSI | IK_RISCV_CFG_IE);
	ck_assert_uint_eq(ik_riscv_get_caps(u)->pas, 48);
	ck_assert_ptr_null(ik_riscv_queue(u));
	ck_assert_int_eq(m.cqcsr | m.fqcsr | m.pqcsr, 0); /* create writes nothing */
	ck_assert_int_eq(ik_riscv_enable(u), 0);
	ck_assert_int_eq(ik_riscv_enable(u), -EBUSY);
	ck_assert_uint_eq(m.violations, 0);
	/* bases: LOG2SZ-1 [4:0], PPN [53:10] of a size-aligned ring */
	ck_assert_uint_eq(m.cqb & 0x1f, 5);
	ck_assert_uint_eq(m.fqb & 0x1f, 3);
	ck_assert_uint_eq(m.pqb & 0x1f, 2);
	ck_assert_uint_eq(m.cqb & 0x3e0, 0);
	ring = (uint64_t *)(uintptr_t)((m.cqb >> 10) << 12);
	ck_assert_uint_eq((uintptr_t)ring & 1023, 0);
	/* all three queues on, interrupts enabled, fctl.WSI */
	ck_assert_uint_eq(m.cqcsr & (IK_RISCV_QCSR_ON | IK_RISCV_QCSR_EN | IK_RISCV_QCSR_IE),
			  IK_RISCV_QCSR_ON | IK_RISCV_QCSR_EN | IK_RISCV_QCSR_IE);
	ck_assert(m.fqcsr & IK_RISCV_QCSR_ON);
	ck_assert(m.pqcsr & IK_RISCV_QCSR_ON);
	ck_assert_uint_eq(m.fctl, IK_RISCV_FCTL_WSI);
	/* the global invalidations, then the fence */
	ck_assert_uint_eq(m.ncmds, 4);
	ck_assert(m.cmds[0].opcode == IK_RISCV_CMD_IOTINVAL && m.cmds[0].func3 == IK_RISCV_IOTINVAL_VMA &&
		  !m.cmds[0].pscv && !m.cmds[0].gv && !m.cmds[0].av);
	ck_assert(m.cmds[1].func3 == IK_RISCV_IOTINVAL_GVMA && !m.cmds[1].gv);
	ck_assert(m.cmds[2].opcode == IK_RISCV_CMD_IODIR && !m.cmds[2].dv);
	ck_assert(m.cmds[3].opcode == IK_RISCV_CMD_IOFENCE && m.cmds[3].av);
	/* ddtp: never written while busy; read back */
	ck_assert_int_eq(ik_riscv_set_ddtp(u, IK_RISCV_DDTP_MODE_BARE), 0);
	ck_assert_int_eq(ik_riscv_set_ddtp(u, IK_RISCV_DDTP_MODE_2LVL | (0x12345ull << 10)), 0);
	ck_assert_uint_eq(m.ddtp, IK_RISCV_DDTP_MODE_2LVL | (0x12345ull << 10));
	ck_assert_uint_eq(m.violations, 0);
	m.ddtp_modes = 0x7; /* no 2- or 3-level directories */
	ck_assert_int_eq(ik_riscv_set_ddtp(u, IK_RISCV_DDTP_MODE_3LVL | (0x5ull << 10)), -EOPNOTSUPP);
	ck_assert_int_eq(ik_riscv_set_ddtp(u, 5), -EINVAL);			/* reserved MODE */
	ck_assert_int_eq(ik_riscv_set_ddtp(u, IK_RISCV_DDTP_MODE_1LVL | BIT(4)), -EINVAL); /* BUSY */
	ck_assert_int_eq(ik_riscv_set_ddtp(u, IK_RISCV_DDTP_MODE_OFF | (1ull << 10)), -EINVAL);
	ck_assert_int_eq(ik_riscv_set_ddtp(u, IK_RISCV_DDTP_MODE_1LVL | BIT(60)), -EINVAL);
	ck_assert_uint_eq(m.violations, 0);
	/* a plan through the queue */
	chg.kind = IK_RISCV_CHANGE_DC;
	chg.did = 0x77;
	ck_assert_int_eq(ik_riscv_plan_change(&chg, &p), 0);
	ck_assert_int_eq(ik_riscv_plan_issue(ik_riscv_queue(u), &p), 0);
	ck_assert(m.ncmds == 6 && m.cmds[4].opcode == IK_RISCV_CMD_IODIR && m.cmds[4].did == 0x77);
	ck_assert_int_eq(ik_riscv_disable(u), 0);
	ck_assert_uint_eq(m.cqcsr & (IK_RISCV_QCSR_ON | IK_RISCV_QCSR_EN), 0);
	ck_assert_ptr_null(ik_riscv_queue(u));
	/* and again: the queues come back */
	ck_assert_int_eq(ik_riscv_enable(u), 0);
	ck_assert_uint_eq(m.violations, 0);
	ik_riscv_destroy(u);
	ck_assert_int_eq(f.allocs, f.frees);
}
END_TEST

/* DMA memory beyond the unit's PAS (device addresses at 2^60 and up):
 * enabling fails with -ERANGE and gives back every buffer it took. */
START_TEST(dma_beyond_pas_is_erange)
{
	struct rm m;
	struct ik_test_dma f;
	struct ik_riscv *u;

	rm_init(&m, full_caps_reg());
	u = rm_unit(&m, &f, 4, 0);
	f.dma_or = 1ull << 60;
	ck_assert_int_eq(ik_riscv_enable(u), -ERANGE);
	ck_assert_int_gt(f.allocs, 0);
	ik_riscv_destroy(u);
	ck_assert_int_eq(f.allocs, f.frees);
}
END_TEST

START_TEST(bringup_errors_leave_the_queues_off)
{
	struct ik_riscv_config c = { 0 };
	struct ik_riscv *u = NULL, *u0 = (struct ik_riscv *)&c;
	struct rm m;
	struct ik_test_dma f;

	rm_init(&m, full_caps_reg() & ~(3ull << 28)); /* IGS: MSI only */
	ik_test_dma_init(&f);
	c.mmio = &m.mmio;
	c.dma = &f.d;
	u = u0;
	c.flags = IK_RISCV_CFG_WSI;
	ck_assert_int_eq(ik_riscv_create(&c, &u), -EOPNOTSUPP);
	c.flags = 4;
	ck_assert_int_eq(ik_riscv_create(&c, &u), -EINVAL);
	c.flags = 0;
	c.cq_log2 = 21;
	ck_assert_int_eq(ik_riscv_create(&c, &u), -EINVAL);
	c.cq_log2 = 0;
	c.fq_log2 = 17;
	ck_assert_int_eq(ik_riscv_create(&c, &u), -EINVAL);
	c.fq_log2 = 0;
	m.caps = 0x20 | (48ull << 32); /* version 2.0 */
	ck_assert_int_eq(ik_riscv_create(&c, &u), -EOPNOTSUPP);
	m.caps = full_caps_reg();
	m.fctl = IK_RISCV_FCTL_BE;
	ck_assert_int_eq(ik_riscv_create(&c, &u), -EOPNOTSUPP);
	ck_assert_ptr_eq(u, u0);
	m.fctl = 0;
	ck_assert_int_eq(ik_riscv_create(NULL, &u), -EINVAL);
	ck_assert_int_eq(ik_riscv_create(&c, NULL), -EINVAL);
	/* a queue that reports a memory fault, one that never turns on */
	u = rm_unit(&m, &f, 4, 0);
	m.mf_on_enable = true;
	ck_assert_int_eq(ik_riscv_enable(u), -EIO);
	ck_assert_ptr_null(ik_riscv_queue(u));
	ck_assert_uint_eq(m.cqcsr & IK_RISCV_QCSR_EN, 0);
	m.mf_on_enable = false;
	m.cqcsr = 0;
	ik_riscv_destroy(u);
	ck_assert_int_eq(f.allocs, f.frees);
	{
		struct ik_riscv_config c2 = c;

		c2.timeout_ns = 1000000; /* 1 ms */
		ck_assert_int_eq(ik_riscv_create(&c2, &u), 0);
		m.never_on = true;
		ck_assert_int_eq(ik_riscv_enable(u), -ETIMEDOUT);
		ck_assert_ptr_null(ik_riscv_queue(u));
		m.never_on = false;
		ik_riscv_destroy(u);
	}
}
END_TEST

START_TEST(command_queue_recovers_from_an_illegal_command)
{
	struct rm m;
	struct ik_test_dma f;
	struct ik_riscv *u;
	struct ik_riscv_stats st;
	struct ik_riscv_plan p;
	struct ik_riscv_change chg = { 0 };
	uint64_t bad[2] = { 0x7f, 0 }; /* opcode 127: cmd_ill */
	int err;

	rm_init(&m, full_caps_reg());
	u = rm_unit(&m, &f, 4, 0);
	ck_assert_int_eq(ik_riscv_enable(u), 0);
	m.ncmds = 0;
	err = ik_cmdq_issue(ik_riscv_queue(u), bad, 1, IK_CMDQ_SYNC);
	ck_assert(err == 0 || err == -EIO);
	/* the queue runs again: cmd_ill cleared, later commands executed */
	ck_assert_uint_eq(m.cqcsr & IK_RISCV_CQCSR_CMD_ILL, 0);
	chg.kind = IK_RISCV_CHANGE_DC;
	chg.did = 3;
	ck_assert_int_eq(ik_riscv_plan_change(&chg, &p), 0);
	ck_assert_int_eq(ik_riscv_plan_issue(ik_riscv_queue(u), &p), 0);
	ck_assert(m.ncmds >= 2 && m.cmds[m.ncmds - 2].opcode == IK_RISCV_CMD_IODIR &&
		  m.cmds[m.ncmds - 2].did == 3);
	ck_assert_int_eq(ik_riscv_get_stats(u, &st), 0);
	ck_assert_uint_ge(st.cq_errors, 1);
	ik_riscv_destroy(u);
	ck_assert_int_eq(f.allocs, f.frees);
}
END_TEST

START_TEST(fault_and_page_request_queues_are_read_and_acknowledged)
{
	struct rm m;
	struct ik_test_dma f;
	struct ik_riscv *u;
	struct ik_riscv_fault fl;
	struct ik_riscv_page_req pr;
	struct ik_riscv_stats st;
	uint64_t rec[4], raw[4];

	rm_init(&m, full_caps_reg());
	u = rm_unit(&m, &f, 2, 0); /* 4 slots: 3 records fit */
	ck_assert_int_eq(ik_riscv_fault_pop(u, &fl, NULL), -EINVAL); /* not enabled */
	ck_assert_int_eq(ik_riscv_enable(u), 0);
	ck_assert_int_eq(ik_riscv_fault_pop(u, &fl, NULL), -ENOENT);
	/* a read page fault of DID 0x123456, PID 5, at 0xdead000 */
	memset(&fl, 0, sizeof(fl));
	fl.cause = IK_RISCV_CAUSE_READ_PAGE;
	fl.ttyp = IK_RISCV_TTYP_UR;
	fl.did = 0x123456;
	fl.pid = 5;
	fl.pv = true;
	fl.iotval = 0xdead000;
	ck_assert_int_eq(ik_riscv_fault_encode(&fl, rec), 0);
	rm_push(&m, true, rec);
	rec[1] = 1ull << 40;	/* reserved bits: a record that does not decode */
	rm_push(&m, true, rec);
	rec[1] = 0;
	rm_push(&m, true, rec);
	rm_push(&m, true, rec);	/* full: overflow */
	ck_assert(m.fqcsr & IK_RISCV_QCSR_OF);
	memset(&fl, 0, sizeof(fl));
	ck_assert_int_eq(ik_riscv_fault_pop(u, &fl, raw), 0);
	ck_assert(fl.cause == IK_RISCV_CAUSE_READ_PAGE && fl.did == 0x123456 && fl.pid == 5 &&
		  fl.pv && fl.iotval == 0xdead000 && fl.page_fault);
	ck_assert_uint_eq(m.fqcsr & IK_RISCV_QCSR_OF, 0);	/* acknowledged */
	ck_assert_uint_eq(m.fqh, 1);
	ck_assert_int_eq(ik_riscv_fault_pop(u, &fl, raw), -EIO);
	ck_assert_uint_eq(raw[1], 1ull << 40);
	ck_assert_uint_eq(m.fqh, 2);	/* consumed all the same */
	ck_assert_int_eq(ik_riscv_fault_pop(u, &fl, NULL), 0);
	ck_assert(m.ipsr & IK_RISCV_IPSR_FIP);
	ck_assert_int_eq(ik_riscv_fault_pop(u, &fl, NULL), -ENOENT);
	ck_assert_uint_eq(m.ipsr & IK_RISCV_IPSR_FIP, 0);
	ck_assert_int_eq(ik_riscv_get_stats(u, &st), 0);
	ck_assert(st.faults == 3 && st.bad_faults == 1 && st.fq_overflows == 1);
	/* wrap around the ring */
	for (unsigned i = 0; i < 6; i++) {
		rec[2] = 0x1000ull * i;
		rm_push(&m, true, rec);
		ck_assert_int_eq(ik_riscv_fault_pop(u, &fl, NULL), 0);
		ck_assert_uint_eq(fl.iotval, 0x1000ull * i);
	}
	/* a tail beyond the queue is not trusted */
	m.fqt = 9;
	ck_assert_int_eq(ik_riscv_fault_pop(u, &fl, NULL), -ERANGE);
	m.fqt = m.fqh;
	/* page requests: PID 9, privileged, page 0x4000_3000, PRGI 0x1ab, last, write */
	rec[0] = (9ull << 12) | BIT(32) | BIT(33) | (0x42ull << 40);
	rec[1] = 0x40003000ull | (0x1abull << 3) | 4 | 2;
	rm_push(&m, false, rec);
	ck_assert_int_eq(ik_riscv_page_req_pop(u, &pr, raw), 0);
	ck_assert(pr.did == 0x42 && pr.pid == 9 && pr.pv && pr.priv && !pr.exec &&
		  pr.addr == 0x40003000ull && pr.prgi == 0x1ab && pr.last && pr.write && !pr.read);
	ck_assert_int_eq(ik_riscv_page_req_pop(u, &pr, NULL), -ENOENT);
	rec[0] = 9ull << 12; /* a PID without PV */
	ck_assert_int_eq(ik_riscv_page_req_decode(rec, &pr), -EINVAL);
	rec[0] = 1;	/* reserved */
	ck_assert_int_eq(ik_riscv_page_req_decode(rec, &pr), -EINVAL);
	ik_riscv_destroy(u);
	ck_assert_int_eq(f.allocs, f.frees);
	/* no ATS: no page-request queue */
	rm_init(&m, full_caps_reg() & ~BIT(SPEC_CAP_ATS));
	u = rm_unit(&m, &f, 2, 0);
	ck_assert_int_eq(ik_riscv_enable(u), 0);
	ck_assert_uint_eq(m.pqcsr, 0);
	ck_assert_int_eq(ik_riscv_page_req_pop(u, &pr, NULL), -ENODEV);
	ik_riscv_destroy(u);
	ck_assert_int_eq(f.allocs, f.frees);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("drv_riscv");
	TCase *tc = tcase_create("riscv");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, caps_decode_at_spec_positions);
	tcase_add_test(tc, dc_fields_at_spec_positions);
	tcase_add_test(tc, bad_dc_input_is_einval_and_buffers_stay_identical);
	tcase_add_test(tc, device_directory_levels_follow_the_spec_split);
	tcase_add_test(tc, device_directory_writes_in_a_safe_order);
	tcase_add_test(tc, process_directories_hold_first_stages_by_pid);
	tcase_add_test(tc, plan_unmap_follows_the_choice_table);
	tcase_add_test(tc, plan_change_follows_its_table);
	tcase_add_test(tc, planned_invalidations_leave_no_stale_translation);
	tcase_add_test(tc, bringup_follows_the_register_handshakes);
	tcase_add_test(tc, bringup_errors_leave_the_queues_off);
	tcase_add_test(tc, dma_beyond_pas_is_erange);
	tcase_add_test(tc, command_queue_recovers_from_an_illegal_command);
	tcase_add_test(tc, fault_and_page_request_queues_are_read_and_acknowledged);
	suite_add_tcase(s, tc);
	return s;
}
