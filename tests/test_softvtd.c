/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softvtd: the register-level VT-d model (<iommukit/softvtd.h>) brought up
 * by the VT-d driver core (<iommukit/drv/vtd.h>) through its struct
 * ik_mmio, exactly as the core brings up QEMU's intel-iommu: legacy and
 * scalable bring-up, DMA end to end through root / context / PASID entries
 * fetched from memory, structure caching until the matching invalidation,
 * unmap + planned invalidation -> fault record decoded by ik_vtd_fault_pop,
 * queue errors and their recovery, caching mode, and hostile register
 * values.  Register bit positions used by the assertions are written here
 * from the VT-d specification, not taken from the driver's macros.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/softvtd.h>
#include <iommukit/drv/vtd.h>
#include <iommukit/pgtable.h>
#include "testlib.h"

#define BIT(n) ((uint64_t)1 << (n))
/* Spec positions. */
#define R_GCMD 0x18u
#define R_GSTS 0x1cu
#define R_RTADDR 0x20u
#define R_FSTS 0x34u
#define R_IQH 0x80u
#define R_IQT 0x88u
#define R_IQA 0x90u
#define R_IQERCD 0xb0u
#define FSTS_PFO (1u << 0)
#define FSTS_PPF (1u << 1)
#define FSTS_IQE (1u << 4)
#define FSTS_ITE (1u << 6)
#define GSTS_TES (1u << 31)
#define GSTS_RTPS (1u << 30)
#define GSTS_QIES (1u << 26)
#define SID(bus, devfn) ((uint32_t)((bus) << 8 | (devfn)))

struct rig {
	struct ik_softiommu *soft;
	struct ik_softvtd *m;
	struct ik_softvtd_config mc;
	struct ik_mmio io;
	struct ik_fault_alloc fa;
	struct ik_dma_mem dma;
	struct ik_vtd_config cfg;
	struct ik_vtd *u;
};

/* A model (flags: IK_SOFTVTD_*) and a driver object over it; `nfr` fault
 * records (0: the default). */
static void rig_init(struct rig *r, uint32_t flags, unsigned nfr)
{
	struct ik_softiommu_config sc;

	memset(r, 0, sizeof(*r));
	ik_softiommu_config_init(&sc);
	sc.flags = IK_SOFTIOMMU_CHECK;
	sc.max_streams = 65536;
	sc.phys_to_host = ik_softiommu_host_identity;
	ck_assert_int_eq(ik_softiommu_create(&sc, &r->soft), 0);
	ik_softvtd_config_init(&r->mc, flags);
	r->mc.soft = r->soft;
	r->mc.phys_to_host = ik_softiommu_host_identity;
	r->mc.max_sids = 65536;
	if (nfr)
		r->mc.cap = (r->mc.cap & ~(0xffull << 40)) | (uint64_t)(nfr - 1) << 40;
	ck_assert_int_eq(ik_softvtd_create(&r->mc, &r->m), 0);
	ck_assert_int_eq(ik_softvtd_mmio(r->m, &r->io), 0);
	ik_fault_alloc_init(&r->fa);
	ck_assert_int_eq(ik_dma_mem_default(&r->dma, &r->fa.a), 0);
	r->cfg.mmio = &r->io;
	r->cfg.dma = &r->dma;
	r->cfg.alloc = &r->fa.a;
	r->cfg.haw = 48;
	r->cfg.flags = (flags & IK_SOFTVTD_SCALABLE) ? IK_VTD_CFG_SCALABLE : 0;
	r->cfg.pasid_bits = (flags & IK_SOFTVTD_SCALABLE) ? 8 : 0;
	r->cfg.qs = 0; /* 256 / 128 descriptors: the ring laps often */
	r->cfg.timeout_ns = 10000000000ull;
	ck_assert_int_eq(ik_vtd_create(&r->cfg, &r->u), 0);
}

static void rig_fini(struct rig *r)
{
	struct ik_softvtd_stats st;

	ck_assert_int_eq(ik_softvtd_get_stats(r->m, &st), 0);
	ck_assert_uint_eq(st.gcmd_violations, 0); /* the core never broke the protocol */
	ik_vtd_destroy(r->u);
	ck_assert_int_eq(r->fa.live, 0);
	ik_softvtd_destroy(r->m);
	ik_softiommu_destroy(r->soft);
}

static struct ik_pgtable *mk_pt(struct rig *r, enum ik_pt_fmt fmt, uint32_t ias)
{
	struct ik_vtd_caps vc = { r->mc.cap, r->mc.ecap, 48, (r->cfg.flags & IK_VTD_CFG_SCALABLE) != 0 };
	struct ik_pgtable_cfg pc;
	struct ik_pgtable *pt;

	ck_assert_int_eq(ik_vtd_cfg_init(&pc, fmt, &vc, ias, 0), 0);
	ck_assert_int_eq(ik_pgtable_create(&pc, &pt), 0);
	return pt;
}

static void attach(struct rig *r, unsigned bus, unsigned devfn, const struct ik_pgtable *pt,
		   uint16_t did, bool issue)
{
	struct ik_vtd_attach a = { pt, did, pt ? 0 : IK_VTD_ATTACH_PASSTHROUGH };
	struct ik_vtd_change chg;
	struct ik_vtd_plan p;

	ck_assert_int_eq(ik_vtd_context_set(r->u, bus, devfn, &a, &chg), 0);
	ck_assert_int_eq(ik_vtd_plan_change(ik_vtd_caps(r->u), ik_vtd_plan_flags(r->u), &chg, &p), 0);
	if (issue)
		ck_assert_int_eq(ik_vtd_plan_issue(r->u, &p), 0);
}

static void detach(struct rig *r, unsigned bus, unsigned devfn, bool issue)
{
	struct ik_vtd_change chg;
	struct ik_vtd_plan p;

	ck_assert_int_eq(ik_vtd_context_clear(r->u, bus, devfn, &chg), 0);
	ck_assert_int_eq(ik_vtd_plan_change(ik_vtd_caps(r->u), ik_vtd_plan_flags(r->u), &chg, &p), 0);
	if (issue)
		ck_assert_int_eq(ik_vtd_plan_issue(r->u, &p), 0);
}

static void unmap(struct rig *r, struct ik_pgtable *pt, uint16_t did, uint64_t iova, uint64_t size,
		  bool issue)
{
	struct ik_vtd_target t;
	struct ik_vtd_plan p;
	struct ik_gather g;

	memset(&t, 0, sizeof(t));
	t.pt = pt;
	t.did = did;
	ik_gather_init(&g);
	ck_assert_int_eq(ik_pgtable_unmap(pt, iova, size, &g), (long)size);
	ck_assert_int_eq(ik_vtd_plan_unmap(ik_vtd_caps(r->u), ik_vtd_plan_flags(r->u), &t, &g, &p), 0);
	if (issue)
		ck_assert_int_eq(ik_vtd_plan_issue(r->u, &p), 0);
	ik_pgtable_gather_sync(pt, &g);
}

/* ================================================================ the model alone */

START_TEST(model_rejects_bad_configs_and_answers_hostile_offsets)
{
	struct ik_softiommu_config sc;
	struct ik_softiommu *soft;
	struct ik_softvtd_config c;
	struct ik_softvtd *m = NULL;

	ik_softiommu_config_init(&sc);
	ck_assert_int_eq(ik_softiommu_create(&sc, &soft), 0);
	ik_softvtd_config_init(&c, 0);
	ck_assert_int_eq(ik_softvtd_create(&c, &m), -EINVAL); /* no soft, no phys_to_host */
	c.soft = soft;
	c.phys_to_host = ik_softiommu_host_identity;
	c.haw = 31;
	ck_assert_int_eq(ik_softvtd_create(&c, &m), -EINVAL);
	c.haw = 48;
	c.max_sids = 65537;
	ck_assert_int_eq(ik_softvtd_create(&c, &m), -EINVAL);
	c.max_sids = 256;
	c.ecap &= ~BIT(1); /* no QI */
	ck_assert_int_eq(ik_softvtd_create(&c, &m), -EINVAL);
	c.ecap |= BIT(1);
	c.cap = (c.cap & ~(0x3ffull << 24)) | (uint64_t)(0xff0 / 16) << 24; /* records past 4 KiB */
	ck_assert_int_eq(ik_softvtd_create(&c, &m), -EINVAL);
	c.cap = (c.cap & ~(0x3ffull << 24)) | (uint64_t)(0x100 / 16) << 24; /* over IRO */
	ck_assert_int_eq(ik_softvtd_create(&c, &m), -EINVAL);
	ck_assert_ptr_null(m);
	ik_softvtd_config_init(&c, IK_SOFTVTD_SCALABLE | IK_SOFTVTD_CM);
	c.soft = soft;
	c.phys_to_host = ik_softiommu_host_identity;
	ck_assert_int_eq(ik_softvtd_create(&c, &m), 0);
	/* ID registers at their offsets; CM bit 7, SMTS bit 43. */
	ck_assert_uint_eq(ik_softvtd_read32(m, 0), 0x60);
	ck_assert_uint_eq(ik_softvtd_read32(m, 8) & (1u << 7), 1u << 7);
	ck_assert_uint_eq(ik_softvtd_read32(m, 0x14) & (1u << 11), 1u << 11);
	ck_assert_uint_eq((ik_softvtd_read32(m, 0xc) >> 8) & 0xff, 7); /* NFR - 1 */
	/* Unaligned, unknown and out-of-range offsets: 0, writes ignored. */
	ik_softvtd_write32(m, 0x8, 0);
	ck_assert_uint_eq(ik_softvtd_read32(m, 8) & (1u << 7), 1u << 7);
	ik_softvtd_write32(m, 0x19, ~0u);
	ik_softvtd_write32(m, 0xfffffffcu, ~0u);
	ck_assert_uint_eq(ik_softvtd_read32(m, 0x19), 0);
	ck_assert_uint_eq(ik_softvtd_read32(m, 0xfffffffcu), 0);
	ck_assert_uint_eq(ik_softvtd_read32(m, R_GSTS), 0);
	ck_assert_uint_eq(ik_softvtd_read32(m, 0x38), 1u << 31); /* FECTL.IM */
	ck_assert_int_eq(ik_softvtd_inject(m, 99, 0, 1), -EINVAL);
	ck_assert_int_eq(ik_softvtd_inject(m, IK_SOFTVTD_INJ_FETCH_ABT, 0, 1), -EBUSY);
	ck_assert_int_eq(ik_softvtd_inject(m, IK_SOFTVTD_INJ_STUCK, 1, 0), -EINVAL);
	ik_softvtd_destroy(m);
	ik_softiommu_destroy(soft);
}
END_TEST

/* The GCMD protocol: one command per write; a write with two is ignored. */
START_TEST(gcmd_changes_one_thing_per_write_and_ignores_two)
{
	struct ik_softvtd_stats st;
	struct rig r;

	rig_init(&r, 0, 0);
	ik_softvtd_write32(r.m, R_RTADDR, 0x1000);
	ik_softvtd_write32(r.m, R_GCMD, (1u << 31) | (1u << 30)); /* TE and SRTP */
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_GSTS), 0);
	ck_assert_int_eq(ik_softvtd_get_stats(r.m, &st), 0);
	ck_assert_uint_eq(st.gcmd_violations, 1);
	ik_softvtd_write32(r.m, R_GCMD, 1u << 30);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_GSTS), GSTS_RTPS);
	/* RTPS sits where SRTP does: writing GSTS back with TE is two
	 * commands (a one-shot written back), ignored. */
	ik_softvtd_write32(r.m, R_GCMD, GSTS_RTPS | (1u << 31));
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_GSTS), GSTS_RTPS);
	ck_assert_int_eq(ik_softvtd_get_stats(r.m, &st), 0);
	ck_assert_uint_eq(st.gcmd_violations, 2);
	/* The persistent bits as GSTS shows them plus one: TE on, then off. */
	ik_softvtd_write32(r.m, R_GCMD, 1u << 31);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_GSTS), GSTS_RTPS | GSTS_TES);
	ik_softvtd_write32(r.m, R_GCMD, 0);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_GSTS), GSTS_RTPS);
	ck_assert_int_eq(ik_softvtd_get_stats(r.m, &st), 0);
	ck_assert_uint_eq(st.gcmd_violations, 2);
	/* reset the count for rig_fini's check */
	ik_vtd_destroy(r.u);
	r.u = NULL;
	ik_softvtd_destroy(r.m);
	ik_softiommu_destroy(r.soft);
}
END_TEST

/* ================================================================ bring-up and DMA */

static void bringup_and_dma(uint32_t flags, enum ik_pt_fmt fmt)
{
	const unsigned bus = 3, devfn = 0x21;
	struct ik_softvtd_stats st;
	struct ik_vtd_fault f;
	struct ik_softiommu_stale rep;
	struct ik_pgtable *pt;
	uint64_t v = 0x1122334455667788ull, back = 0;
	uint8_t *buf;
	struct rig r;

	rig_init(&r, flags, 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), 0);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_GSTS) & (GSTS_TES | GSTS_RTPS | GSTS_QIES),
			  GSTS_TES | GSTS_RTPS | GSTS_QIES);
	/* TTM at RTADDR bits 11:10 as the mode says. */
	ck_assert_uint_eq((ik_softvtd_read32(r.m, R_RTADDR) >> 10) & 3,
			  (flags & IK_SOFTVTD_SCALABLE) ? 1 : 0);
	buf = aligned_alloc(4096, 8192);
	ck_assert_ptr_nonnull(buf);
	memset(buf, 0, 8192);
	pt = mk_pt(&r, fmt, fmt == IK_PT_VTD_FL ? 47 : 48);
	/* Blocked until a context entry is set: a fault record. */
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 0x40000000, &v, 8, true), -EFAULT);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert_uint_eq(f.sid, SID(bus, devfn));
	ck_assert_uint_eq(f.reason, (flags & IK_SOFTVTD_SCALABLE) ? 0x39 : 0x1); /* root not present */
	ck_assert(f.write);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x40000000, (uint64_t)(uintptr_t)buf, 8192,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	attach(&r, bus, devfn, pt, 7, true);
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 0x40000ffc, &v, 8, true), 0);
	ck_assert_int_eq(memcmp(buf + 0xffc, &v, 8), 0);
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 0x40000ffc, &back, 8, false), 0);
	ck_assert_uint_eq(back, v);
	/* Second-level input beyond MGAW (48 bits): an address-width fault. */
	if (fmt == IK_PT_VTD_SL) {
		ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 1ull << 48, &v, 8, false), -EFAULT);
		ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
		ck_assert_uint_eq(f.reason, (flags & IK_SOFTVTD_SCALABLE) ? 0x83 : 0x4);
		ck_assert_uint_eq(f.addr, 1ull << 48);
	}
	/* Another device on the bus is still blocked. */
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn + 1), 0x40000000, &v, 8, false), -EFAULT);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert_uint_eq(f.reason, (flags & IK_SOFTVTD_SCALABLE) ? 0x41 : 0x2); /* context not present */
	ck_assert(!f.write);
	/* Unmap without its invalidation: the IOTLB still translates (the
	 * soft IOMMU's checker reports the stale hit, which refuses it). */
	unmap(&r, pt, 7, 0x40001000, 4096, false);
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 0x40001000, &back, 8, false), -EFAULT);
	ck_assert_int_eq(ik_softiommu_stale_pop(r.soft, &rep), 0);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	/* Then unmap + planned invalidation: a translation fault decoded. */
	unmap(&r, pt, 7, 0x40000000, 4096, true);
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 0x40000010, &v, 8, true), -EFAULT);
	ck_assert_int_eq(ik_softiommu_stale_pop(r.soft, &rep), -ENOENT);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert_uint_eq(f.sid, SID(bus, devfn));
	ck_assert_uint_eq(f.addr, 0x40000000);
	ck_assert(f.write && !f.overflow);
	ck_assert_uint_eq(f.reason, !(flags & IK_SOFTVTD_SCALABLE) ? 0x5 : fmt == IK_PT_VTD_FL ? 0x71 : 0x85);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), -ENOENT);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & (FSTS_PPF | FSTS_PFO), 0);
	ck_assert_int_eq(ik_softvtd_get_stats(r.m, &st), 0);
	ck_assert_uint_ge(st.descriptors, 4);
	ck_assert_uint_eq(st.queue_errors, 0);
	ck_assert_uint_ge(st.context_fetches, 2);
	if (flags & IK_SOFTVTD_SCALABLE)
		ck_assert_uint_ge(st.pasid_fetches, 1);
	ck_assert_int_eq(ik_vtd_disable(r.u), 0);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_GSTS) & (GSTS_TES | GSTS_QIES), 0);
	rig_fini(&r);
	ik_pgtable_destroy(pt);
	free(buf);
}

START_TEST(legacy_bringup_and_dma_end_to_end)
{
	bringup_and_dma(0, IK_PT_VTD_SL);
}
END_TEST

START_TEST(scalable_bringup_and_dma_end_to_end)
{
	bringup_and_dma(IK_SOFTVTD_SCALABLE, IK_PT_VTD_SL);
	bringup_and_dma(IK_SOFTVTD_SCALABLE, IK_PT_VTD_FL);
}
END_TEST

/* A context entry is cached until its context-cache invalidation; in
 * caching mode a not-present one is cached too until the set's plan. */
static void context_cache(uint32_t flags)
{
	const unsigned bus = 0, devfn = 0x10;
	bool cm = (flags & IK_SOFTVTD_CM) != 0;
	struct ik_vtd_fault f;
	struct ik_pgtable *pt;
	uint64_t v = 5;
	uint8_t *buf;
	struct rig r;

	rig_init(&r, flags, 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), 0);
	buf = aligned_alloc(4096, 4096);
	ck_assert_ptr_nonnull(buf);
	pt = mk_pt(&r, IK_PT_VTD_SL, 48);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x1000, (uint64_t)(uintptr_t)buf, 4096,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	/* The device faults once: under CM the not-present entry is cached. */
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 0x1000, &v, 8, true), -EFAULT);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	attach(&r, bus, devfn, pt, 9, false); /* plan not issued */
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 0x1000, &v, 8, true), cm ? -EFAULT : 0);
	if (cm) {
		ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
		ck_assert_uint_eq(f.reason, (flags & IK_SOFTVTD_SCALABLE) ? 0x39 : 0x1); /* cached */
	}
	/* Now the set's plan (CC device with DID 0 under CM). */
	detach(&r, bus, devfn, true);
	attach(&r, bus, devfn, pt, 9, true);
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 0x1000, &v, 8, true), 0);
	/* A cleared entry without its invalidation is still used ... */
	detach(&r, bus, devfn, false);
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 0x1000, &v, 8, true), 0);
	/* ... until the context-cache invalidation. */
	{
		struct ik_vtd_desc d;

		memset(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_CC;
		d.g = IK_VTD_G_DEVICE;
		d.sid = (uint16_t)SID(bus, devfn);
		d.did = 9;
		ck_assert_int_eq(ik_vtd_issue(r.u, &d, 1, true), 0);
	}
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(bus, devfn), 0x1000, &v, 8, true), -EFAULT);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert_uint_eq(f.reason, (flags & IK_SOFTVTD_SCALABLE) ? 0x41 : 0x2);
	rig_fini(&r);
	ik_pgtable_destroy(pt);
	free(buf);
}

START_TEST(context_entries_are_cached_until_invalidated_and_caching_mode_caches_not_present)
{
	context_cache(0);
	context_cache(IK_SOFTVTD_CM);
	context_cache(IK_SOFTVTD_SCALABLE);
	context_cache(IK_SOFTVTD_SCALABLE | IK_SOFTVTD_CM);
}
END_TEST

/* ================================================================ faults */

/* NFR records in ring order; the (NFR+1)-th fault with every record
 * pending sets PFO and is lost; pop reports the overflow and clears it. */
START_TEST(fault_ring_overflows_into_pfo_and_pop_clears_it)
{
	struct ik_softvtd_stats st;
	struct ik_vtd_fault f;
	uint64_t v = 0;
	struct rig r;

	rig_init(&r, 0, 4);
	ck_assert_int_eq(ik_vtd_enable(r.u), 0);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(ik_softvtd_dma(r.m, SID(1, i), 0x1000 * (i + 1), &v, 8, false), -EFAULT);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & (FSTS_PPF | FSTS_PFO), FSTS_PPF | FSTS_PFO);
	ck_assert_uint_eq((ik_softvtd_read32(r.m, R_FSTS) >> 8) & 0xff, 0); /* FRI */
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
		ck_assert_uint_eq(f.sid, SID(1, i));
		ck_assert_uint_eq(f.addr, 0x1000 * (i + 1));
		ck_assert(!f.write);
		ck_assert_uint_eq(f.overflow, i == 0);
	}
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), -ENOENT);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & (FSTS_PPF | FSTS_PFO), 0);
	ck_assert_int_eq(ik_softvtd_get_stats(r.m, &st), 0);
	ck_assert_uint_eq(st.faults, 4);
	ck_assert_uint_eq(st.faults_lost, 1);
	/* Recording goes on at the next record: FRI follows it. */
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(2, 0), 0x9000, &v, 8, true), -EFAULT);
	ck_assert_uint_eq((ik_softvtd_read32(r.m, R_FSTS) >> 8) & 0xff, 0);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert_uint_eq(f.sid, SID(2, 0));
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(2, 1), 0x9000, &v, 8, true), -EFAULT);
	ck_assert_uint_eq((ik_softvtd_read32(r.m, R_FSTS) >> 8) & 0xff, 1);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert_uint_eq(f.sid, SID(2, 1));
	rig_fini(&r);
}
END_TEST

/* ================================================================ queue errors */

/* A descriptor the unit refuses: IQE with IQH at it and IQERCD saying why;
 * the core replaces it and clears IQE; the queue resumes, for laps. */
START_TEST(invalid_descriptor_is_iqe_and_the_queue_recovers)
{
	for (int sm = 0; sm < 2; sm++) {
		uint64_t bad[4] = { 0x2 | (2ull << 4) | BIT(8), 0, 0, 0 }; /* IOTLB, reserved bit 8 */
		uint64_t badtype[4] = { 0xf, 0, 0, 0 };
		struct ik_softvtd_stats st;
		struct rig r;

		rig_init(&r, sm ? IK_SOFTVTD_SCALABLE : 0, 0);
		ck_assert_int_eq(ik_vtd_enable(r.u), 0);
		ck_assert_int_eq(ik_cmdq_issue(ik_vtd_queue(r.u), bad, 1, IK_CMDQ_SYNC), -EIO);
		ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & FSTS_IQE, 0);
		ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQERCD) & 0xf, 4); /* reserved field */
		ck_assert_int_eq(ik_cmdq_issue(ik_vtd_queue(r.u), badtype, 1, IK_CMDQ_SYNC), -EIO);
		ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQERCD) & 0xf, 3); /* invalid type */
		ik_test_vtd_laps(r.u, 300);
		ck_assert_int_eq(ik_softvtd_get_stats(r.m, &st), 0);
		ck_assert_uint_eq(st.queue_errors, 2);
		ck_assert_uint_ge(st.descriptors, 600);
		rig_fini(&r);
	}
}
END_TEST

/* ITE: the wait behind a timed-out device-TLB invalidation is aborted (its
 * issuer times out); the core clears ITE and the queue goes on.  A fetch
 * abort is IQE with IQEI 2, recovered the same way. */
START_TEST(devtlb_timeout_and_fetch_abort_are_recovered)
{
	struct ik_softvtd_stats st;
	struct ik_vtd_desc d;
	struct rig r;

	rig_init(&r, 0, 0);
	r.cfg.timeout_ns = 20000000ull;
	ik_vtd_destroy(r.u);
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), 0);
	memset(&d, 0, sizeof(d));
	d.type = IK_VTD_DESC_DEVTLB;
	d.sid = 0x0108;
	d.s = 1;
	d.addr = 0x7ffffffffffff000ull;
	ck_assert_int_eq(ik_softvtd_inject(r.m, IK_SOFTVTD_INJ_DEVTLB_TIMEOUT, 0, 1), 0);
	ck_assert_int_eq(ik_vtd_issue(r.u, &d, 1, true), -ETIMEDOUT);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & FSTS_ITE, 0); /* acknowledged */
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQERCD + 4) & 0xffff, 0x0108); /* ITESID */
	ck_assert_int_eq(ik_vtd_issue(r.u, &d, 1, true), 0);
	ck_assert_int_eq(ik_softvtd_inject(r.m, IK_SOFTVTD_INJ_FETCH_ABT, 0, 1), 0);
	ck_assert_int_eq(ik_vtd_issue(r.u, &d, 1, true), -EIO);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQERCD) & 0xf, 2);
	ck_assert_int_eq(ik_vtd_issue(r.u, &d, 1, true), 0);
	ck_assert_int_eq(ik_softvtd_get_stats(r.m, &st), 0);
	ck_assert_uint_eq(st.queue_errors, 2);
	rig_fini(&r);
}
END_TEST

/* A GSTS bit that never follows: the core times out and leaves the unit off. */
START_TEST(stuck_status_bit_is_etimedout)
{
	struct rig r;

	rig_init(&r, 0, 0);
	r.cfg.timeout_ns = 20000000ull;
	ik_vtd_destroy(r.u);
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
	ck_assert_int_eq(ik_softvtd_inject(r.m, IK_SOFTVTD_INJ_STUCK, GSTS_TES, 0), 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), -ETIMEDOUT);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_GSTS) & (GSTS_TES | GSTS_QIES), 0);
	ck_assert_int_eq(ik_softvtd_inject(r.m, IK_SOFTVTD_INJ_STUCK, 0, 0), 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), 0);
	rig_fini(&r);
}
END_TEST

/* Hostile registers and memory, written directly: an IQT beyond the queue,
 * a queue that is not memory, a root table at the top of the address
 * space, DW = 1 without scalable mode. */
START_TEST(hostile_registers_give_clear_errors)
{
	struct ik_vtd_fault f;
	uint64_t v;
	struct rig r;

	rig_init(&r, 0, 0);
	/* Root table at 2^64 - 4 KiB: every fetch fails, no wrap. */
	ik_softvtd_write32(r.m, R_RTADDR, 0xfffff000u);
	ik_softvtd_write32(r.m, R_RTADDR + 4, 0xffffffffu);
	ik_softvtd_write32(r.m, R_GCMD, 1u << 30);
	ik_softvtd_write32(r.m, R_GCMD, 1u << 31);
	ck_assert_int_eq(ik_softvtd_dma(r.m, SID(0xff, 0xff), 0, &v, 8, false), -EFAULT);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert_uint_eq(f.reason, 0x8);
	/* A queue at an address the hook refuses (0): IQE, IQEI fetch. */
	ik_softvtd_write32(r.m, R_IQA, 0);
	ik_softvtd_write32(r.m, R_GCMD, GSTS_TES | (1u << 26));
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_GSTS) & GSTS_QIES, GSTS_QIES);
	ik_softvtd_write32(r.m, R_IQT, 0x10);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & FSTS_IQE, FSTS_IQE);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQERCD) & 0xf, 2);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQH), 0);
	/* Clearing IQE refetches: the same error again. */
	ik_softvtd_write32(r.m, R_FSTS, FSTS_IQE);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & FSTS_IQE, FSTS_IQE);
	ik_softvtd_write32(r.m, R_GCMD, GSTS_TES); /* QI off */
	ik_softvtd_write32(r.m, R_FSTS, FSTS_IQE);
	ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & FSTS_IQE, 0);
	/* A real queue; IQT beyond its 256 entries: IQE, IQEI tail, not taken. */
	{
		uint64_t *ring = aligned_alloc(4096, 4096);

		ck_assert_ptr_nonnull(ring);
		memset(ring, 0, 4096);
		ik_softvtd_write32(r.m, R_IQT, 0);
		ik_softvtd_write32(r.m, R_IQA, (uint32_t)(uintptr_t)ring);
		ik_softvtd_write32(r.m, R_IQA + 4, (uint32_t)((uintptr_t)ring >> 32));
		ik_softvtd_write32(r.m, R_GCMD, GSTS_TES | (1u << 26));
		ik_softvtd_write32(r.m, R_IQT, 256u << 4);
		ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & FSTS_IQE, FSTS_IQE);
		ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQERCD) & 0xf, 1);
		ik_softvtd_write32(r.m, R_FSTS, FSTS_IQE);
		/* A zero descriptor (type 0) at slot 0: IQE with IQH at it. */
		ik_softvtd_write32(r.m, R_IQT, 1u << 4);
		ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & FSTS_IQE, FSTS_IQE);
		ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQH), 0);
		ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQERCD) & 0xf, 3);
		/* Replaced by a wait with SW, IQE cleared: it runs. */
		{
			volatile uint32_t status = 0;

			ck_assert_int_eq(ik_test_wait_encode(&ik_cmdq_fmt_vtd128,
							     (uint64_t)(uintptr_t)&status, 0x5a, ring), 0);
			ik_softvtd_write32(r.m, R_FSTS, FSTS_IQE);
			ck_assert_uint_eq(status, 0x5a);
			ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQH), 1u << 4);
		}
		ik_softvtd_write32(r.m, R_GCMD, GSTS_TES);
		/* DW = 1 on a unit without scalable mode: IQEI width. */
		ik_softvtd_write32(r.m, R_IQT, 0);
		ik_softvtd_write32(r.m, R_IQA, (uint32_t)(uintptr_t)ring | (1u << 11));
		ik_softvtd_write32(r.m, R_GCMD, GSTS_TES | (1u << 26));
		ik_softvtd_write32(r.m, R_IQT, 1u << 5);
		ck_assert_uint_eq(ik_softvtd_read32(r.m, R_FSTS) & FSTS_IQE, FSTS_IQE);
		ck_assert_uint_eq(ik_softvtd_read32(r.m, R_IQERCD) & 0xf, 5);
		ik_softvtd_write32(r.m, R_GCMD, GSTS_TES);
		ik_softvtd_write32(r.m, R_GCMD, 0);
		ik_vtd_destroy(r.u);
		r.u = NULL;
		free(ring);
	}
	ik_softvtd_destroy(r.m);
	ik_softiommu_destroy(r.soft);
}
END_TEST

/* ================================================================ the planner end to end */

/* The page-table hooks of a driver on this unit: a block replacing an empty
 * table invalidates walks over the range before the table is freed. */
struct e2e {
	struct rig *r;
	uint32_t sid;
	struct ik_vtd_target t;
	unsigned flush_walks;
};

static void e2e_flush_walk(void *cookie, uint64_t iova, uint64_t size, uint64_t granule)
{
	struct e2e *e = cookie;
	struct ik_vtd_plan p;

	(void)granule;
	e->flush_walks++;
	ck_assert_int_eq(ik_vtd_plan_range(ik_vtd_caps(e->r->u), ik_vtd_plan_flags(e->r->u), &e->t,
					   iova, size, true, &p), 0);
	ck_assert(p.n >= 1 && !p.d[0].ih);
	ck_assert_int_eq(ik_vtd_plan_issue(e->r->u, &p), 0);
}

static void e2e_sync_map(void *cookie, uint64_t iova, uint64_t size)
{
	struct e2e *e = cookie;
	struct ik_vtd_plan p;

	ck_assert_int_eq(ik_vtd_plan_map(ik_vtd_caps(e->r->u), ik_vtd_plan_flags(e->r->u), &e->t,
					 iova, size, &p), 0);
	ck_assert_int_eq(ik_vtd_plan_issue(e->r->u, &p), 0);
}

/* The unmap's invalidation, for ik_test_churn_dev(): planned and issued. */
static int e2e_inval(void *ctx, struct ik_gather *g)
{
	struct e2e *e = ctx;
	struct ik_vtd_plan p;
	int err = ik_vtd_plan_unmap(ik_vtd_caps(e->r->u), ik_vtd_plan_flags(e->r->u), &e->t, g, &p);

	return err ? err : ik_vtd_plan_issue(e->r->u, &p);
}

/* e->sid's DMA through the model, for ik_test_churn_dev(): a faulted
 * access must leave a fault record, taken here. */
static int e2e_dma(void *ctx, uint64_t iova, void *p, size_t len, bool write)
{
	struct e2e *e = ctx;
	struct ik_vtd_fault f;
	int err = ik_softvtd_dma(e->r->m, e->sid, iova, p, len, write);

	if (err == -EFAULT)
		IK_REQUIRE(ik_vtd_fault_pop(e->r->u, &f) == 0);
	return err;
}

/*
 * The planner end to end (moved here from test_drv_vtd.c, where a private
 * register model handed descriptors to the soft IOMMU and the test attached
 * the stream itself): maps, device DMA through the model (the unit fetches
 * the context / PASID entry, the soft IOMMU fills its IOTLB and walk
 * cache), unmaps (leaf ones, whole tables, blocks), each followed by the
 * planned invalidations issued through the driver's queue.  The soft
 * IOMMU's stale-translation checker then finds nothing: every access to an
 * unmapped range faults.  Without the invalidation it does find the stale
 * entry.
 */
START_TEST(planned_invalidations_leave_no_stale_translation)
{
	static const struct {
		uint32_t flags;
		enum ik_pt_fmt fmt;
	} cases[] = { { 0, IK_PT_VTD_SL },
		      { IK_SOFTVTD_SCALABLE, IK_PT_VTD_SL },
		      { IK_SOFTVTD_SCALABLE, IK_PT_VTD_FL },
		      { IK_SOFTVTD_CM, IK_PT_VTD_SL } };
	const uint32_t sid = SID(0, 0x10);

	for (unsigned k = 0; k < IK_ARRAY_SIZE(cases); k++) {
		const size_t span = 8u << 20;
		struct ik_pgtable_hooks hooks = { 0 };
		struct ik_vtd_caps vc;
		struct ik_pgtable_cfg pc;
		struct e2e e;
		struct ik_softiommu_stale rep;
		struct ik_vtd_fault f;
		struct ik_vtd_plan p;
		struct ik_rng rng = { 77 + k };
		struct ik_pgtable *pt;
		unsigned char *buf;
		bool *mapped;
		long iters = ik_test_iters(300);
		struct ik_test_dev dev = { e2e_dma, &e };
		struct rig r;

		rig_init(&r, cases[k].flags, 0);
		ck_assert_int_eq(ik_vtd_enable(r.u), 0);
		memset(&e, 0, sizeof(e));
		e.r = &r;
		e.sid = sid;
		e.t.did = 12;
		hooks.flush_walk = e2e_flush_walk;
		hooks.iotlb_sync_map = e2e_sync_map;
		vc.cap = r.mc.cap;
		vc.ecap = r.mc.ecap;
		vc.haw = 48;
		vc.scalable = (cases[k].flags & IK_SOFTVTD_SCALABLE) != 0;
		ck_assert_int_eq(ik_vtd_cfg_init(&pc, cases[k].fmt, &vc,
						 cases[k].fmt == IK_PT_VTD_FL ? 47 : 48, 0), 0);
		pc.hooks = &hooks;
		pc.cookie = &e;
		ck_assert_int_eq(ik_pgtable_create(&pc, &pt), 0);
		e.t.pt = pt;
		attach(&r, 0, 0x10, pt, 12, true);
		buf = ik_test_churn_mem(span, &mapped);
		/* Deterministic first: a page (its table made), the page unmapped
		 * (leaf-only: IH), a 2 MiB block over the now empty table (the
		 * engine's flush_walk: IH = 0 before the table is freed), the
		 * block unmapped. */
		{
			uint64_t v = 7, iova = 0x40000000ull + span - (2u << 20);
			struct ik_gather g;

			ck_assert_int_eq(ik_pgtable_map(pt, iova + 0x3000, (uint64_t)(uintptr_t)buf, 4096,
							IK_PROT_READ | IK_PROT_WRITE), 0);
			ck_assert_int_eq(ik_softvtd_dma(r.m, sid, iova + 0x3000, &v, 8, true), 0);
			ik_gather_init(&g);
			ck_assert_int_eq(ik_pgtable_unmap(pt, iova + 0x3000, 4096, &g), 4096);
			ck_assert_int_eq(ik_vtd_plan_unmap(ik_vtd_caps(r.u), ik_vtd_plan_flags(r.u), &e.t,
							   &g, &p), 0);
			ck_assert(p.n == 1 && p.d[0].ih && p.d[0].am == 0);
			ck_assert_int_eq(ik_vtd_plan_issue(r.u, &p), 0);
			ik_pgtable_gather_sync(pt, &g);
			ck_assert_int_eq(ik_pgtable_map(pt, iova, (uint64_t)(uintptr_t)buf + span - (2u << 20),
							2u << 20, IK_PROT_READ | IK_PROT_WRITE), 0);
			ck_assert_uint_eq(e.flush_walks, 1);
			ck_assert_int_eq(ik_softvtd_dma(r.m, sid, iova + 0x3000, &v, 8, true), 0);
			ik_gather_init(&g);
			ck_assert_int_eq(ik_pgtable_unmap(pt, iova, 2u << 20, &g), 2u << 20);
			ck_assert_int_eq(ik_vtd_plan_unmap(ik_vtd_caps(r.u), ik_vtd_plan_flags(r.u), &e.t,
							   &g, &p), 0);
			ck_assert_int_eq(ik_vtd_plan_issue(r.u, &p), 0);
			ik_pgtable_gather_sync(pt, &g);
			ck_assert_int_eq(ik_softvtd_dma(r.m, sid, iova + 0x3000, &v, 8, false), -EFAULT);
			ck_assert_int_eq(ik_softiommu_stale_pop(r.soft, &rep), -ENOENT);
			ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
			ck_assert_uint_eq(f.addr, iova + 0x3000);
		}
		ik_test_churn_dev(pt, r.soft, &dev, 0x40000000ull, buf, span, mapped, iters, &rng,
				  e2e_inval, &e);
		/* Control: an unmap without its invalidation is caught. */
		{
			uint64_t v = 1, iova = 0x80000000ull;
			struct ik_gather g;

			ck_assert_int_eq(ik_pgtable_map(pt, iova, (uint64_t)(uintptr_t)buf, 4096,
							IK_PROT_READ | IK_PROT_WRITE), 0);
			ck_assert_int_eq(ik_softvtd_dma(r.m, sid, iova, &v, 8, true), 0);
			ik_gather_init(&g);
			ck_assert_int_eq(ik_pgtable_unmap(pt, iova, 4096, &g), 4096);
			ck_assert_int_eq(ik_softvtd_dma(r.m, sid, iova, &v, 8, false), -EFAULT);
			ck_assert_int_eq(ik_softiommu_stale_pop(r.soft, &rep), 0);
			ik_pgtable_gather_sync(pt, &g);
		}
		rig_fini(&r);
		ik_pgtable_destroy(pt);
		free(buf);
		free(mapped);
	}
}
END_TEST

/* ================================================================ concurrency */

struct dmathr {
	struct rig *r;
	uint32_t sid;
	const int *stop;
	long done;
};

/* DMA to a range that stays mapped, until told to stop: every access
 * succeeds whatever the queue and the other device's tables do meanwhile. */
static void *dma_thread(void *arg)
{
	struct dmathr *t = arg;
	uint64_t v;

	while (!__atomic_load_n(t->stop, __ATOMIC_ACQUIRE) || t->done < 100) {
		v = (uint64_t)t->done;
		/* each device its own half of the page: no data race between them */
		IK_REQUIRE(ik_softvtd_dma(t->r->m, t->sid, 0x10000 + (t->sid & 1) * 0x800 +
						     (uint64_t)(t->done % 16) * 8, &v, 8, true) == 0);
		t->done++;
	}
	return NULL;
}

/* Two devices DMA from their own threads while the main thread maps,
 * unmaps and invalidates another range and a third device's context entry
 * is set and cleared with its plans: the model's lock keeps the register
 * file, the queue, the context cache and the fault records consistent (run
 * under TSan). */
START_TEST(dma_from_threads_while_the_driver_invalidates)
{
	struct dmathr t[2];
	pthread_t th[2];
	struct ik_vtd_fault f;
	struct ik_pgtable *pt;
	uint8_t *buf;
	int stop = 0;
	struct rig r;

	rig_init(&r, IK_SOFTVTD_SCALABLE | IK_SOFTVTD_CM, 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), 0);
	buf = aligned_alloc(4096, 2 * 4096);
	ck_assert_ptr_nonnull(buf);
	pt = mk_pt(&r, IK_PT_VTD_SL, 48);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x10000, (uint64_t)(uintptr_t)buf, 4096,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	attach(&r, 0, 8, pt, 4, true);
	attach(&r, 0, 9, pt, 4, true);
	for (int i = 0; i < 2; i++) {
		t[i].r = &r;
		t[i].sid = SID(0, 8 + i);
		t[i].stop = &stop;
		t[i].done = 0;
		ck_assert_int_eq(pthread_create(&th[i], NULL, dma_thread, &t[i]), 0);
	}
	for (long it = 0; it < ik_test_iters(200); it++) {
		uint64_t v = 1;

		ck_assert_int_eq(ik_pgtable_map(pt, 0x200000, (uint64_t)(uintptr_t)buf + 4096, 4096,
						IK_PROT_READ | IK_PROT_WRITE), 0);
		attach(&r, 0, 10, pt, 4, true);
		ck_assert_int_eq(ik_softvtd_dma(r.m, SID(0, 10), 0x200000, &v, 8, true), 0);
		detach(&r, 0, 10, true);
		unmap(&r, pt, 4, 0x200000, 4096, true);
		ck_assert_int_eq(ik_softvtd_dma(r.m, SID(0, 10), 0x200000, &v, 8, true), -EFAULT);
		ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
		ck_assert_uint_eq(f.sid, SID(0, 10));
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_int_ge(t[i].done, 100);
	}
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), -ENOENT);
	rig_fini(&r);
	ik_pgtable_destroy(pt);
	free(buf);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("softvtd");
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, model_rejects_bad_configs_and_answers_hostile_offsets);
	tcase_add_test(tc, gcmd_changes_one_thing_per_write_and_ignores_two);
	tcase_add_test(tc, hostile_registers_give_clear_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("driver");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, legacy_bringup_and_dma_end_to_end);
	tcase_add_test(tc, scalable_bringup_and_dma_end_to_end);
	tcase_add_test(tc, context_entries_are_cached_until_invalidated_and_caching_mode_caches_not_present);
	tcase_add_test(tc, fault_ring_overflows_into_pfo_and_pop_clears_it);
	tcase_add_test(tc, invalid_descriptor_is_iqe_and_the_queue_recovers);
	tcase_add_test(tc, devtlb_timeout_and_fetch_abort_are_recovered);
	tcase_add_test(tc, stuck_status_bit_is_etimedout);
	tcase_add_test(tc, planned_invalidations_leave_no_stale_translation);
	tcase_add_test(tc, dma_from_threads_while_the_driver_invalidates);
	suite_add_tcase(s, tc);
	return s;
}
