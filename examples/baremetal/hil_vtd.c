/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The VT-d checks of the hardware-in-the-loop harness (hil.h, docs/hil.md):
 * iommukit's VT-d driver core (<iommukit/drv/vtd.h>) on QEMU 7.2's
 * intel-iommu (q35, aw-bits 39 and 48), with edu as the DMA master.  The
 * harness's Makefile compiles this file for x86-64 images when it exists;
 * until the harness is in the tree nothing builds it.
 *
 * What they prove on the emulated unit:
 *   - bring-up (RTADDR/SRTP, IQA/QIE, global invalidation, TE) and teardown
 *     (TE off, a wait, QIE off - QEMU disables QI only after a wait), twice;
 *   - a descriptor QEMU refuses (FSTS.IQE) is -EIO to its issuer and the
 *     queue resumes (QEMU fetches again only when IQT is written; the
 *     repair's no-op, a wait with IF = 1, is accepted) for several laps;
 *     with the old no-op (SW = IF = 0) the repair failed and the unit stayed
 *     stuck (QI could not be disabled);
 *   - translated DMA through a legacy context entry and second-level tables
 *     reaches the mapped page only; an unmapped IOVA is blocked and leaves a
 *     fault record (QEMU 7.2 reports a write to a not-present second-level
 *     entry as reason 0x5, "write without write permission"); after unmap
 *     and the planned page-selective invalidation the old IOVA is blocked
 *     too, which it was not while QEMU's IOTLB held the translation;
 *   - the same three in scalable mode (TTM 01b, 256-bit descriptors,
 *     scalable-mode context entry, PASID directory and table), skipped
 *     unless the unit has ECAP.SMTS (-device intel-iommu,x-scalable-mode=on;
 *     passed there by hand: the harness has no such configuration yet).
 *     QEMU 7.2 reports the legacy reason 0x5 in scalable mode too, where the
 *     specification has its scalable-mode codes (0x85).
 */
#include <iommukit/env.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/drv/vtd.h>
#include "hil.h"
#include "ik_env_baremetal.h"

#define IOVA 0x40000000ull

/* arg of the checks: legacy mode (NULL) or scalable mode (&scalable). */
static const int scalable = 1;

static bool want_scalable(const void *arg)
{
	return arg == &scalable;
}

static bool unit_scalable(struct hil *h)
{
	return ik_mmio_read64(&h->iommu, IK_VTD_REG_ECAP) & IK_VTD_ECAP_SMTS;
}

/* One driver instance over h->iommu and h->dma. */
static int vtd_new(struct hil *h, const void *arg, struct ik_vtd **u)
{
	struct ik_vtd_config c;
	ik_u64 cap = ik_mmio_read64(&h->iommu, IK_VTD_REG_CAP);

	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.mmio = &h->iommu;
	c.dma = &h->dma;
	c.haw = IK_VTD_CAP_MGAW(cap) < 32 ? 32 : IK_VTD_CAP_MGAW(cap);
	c.flags = want_scalable(arg) ? IK_VTD_CFG_SCALABLE : 0;
	return ik_vtd_create(&c, u);
}

struct pt_ctx {
	struct hil *h;
	struct ik_vtd *u;
	struct ik_vtd_target t;
};

static void pt_clean(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size)
{
	struct pt_ctx *p = (struct pt_ctx *)cookie;

	ik_dma_clean(&p->h->dma, cpu, iommu_addr, size);
}

static void pt_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	struct pt_ctx *p = (struct pt_ctx *)cookie;
	struct ik_vtd_plan pl;

	(void)granule;
	if (!ik_vtd_plan_range(ik_vtd_caps(p->u), ik_vtd_plan_flags(p->u), &p->t, iova, size, true,
			       &pl))
		(void)ik_vtd_plan_issue(p->u, &pl);
}

static const struct ik_pgtable_hooks pt_hooks = {
	NULL, NULL, pt_clean, NULL, pt_flush_walk, NULL, NULL, NULL,
};

static void bringup_and_teardown(struct hil *h, const void *arg)
{
	const struct ik_vtd_hwcaps *c;
	struct ik_vtd *u = NULL;
	long live = bm_pool_live();

	if (want_scalable(arg) && !unit_scalable(h))
		HIL_SKIP(h, "no scalable mode (x-scalable-mode=on)");
	HIL_CHECK_EQ(h, vtd_new(h, arg, &u), 0);
	c = ik_vtd_caps(u);
	hil_diag("VT-d %u.%u: ND %u (%u domains) SAGAW %#x MGAW %u PSI %u MAMV %u NFR %u FRO %#x CM %u "
		 "RWBF %u C %u QI %u DT %u PT %u SMTS %u", c->ver_major, c->ver_minor, c->nd,
		 c->domains, c->sagaw, c->mgaw, c->psi, c->mamv, c->nfr, c->fro, c->cm, c->rwbf, c->c,
		 c->qi, c->dt, c->pt, c->smts);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_enable(u), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(&h->iommu, IK_VTD_REG_GSTS) &
				     (IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES | IK_VTD_GSTS_RTPS),
			  IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES | IK_VTD_GSTS_RTPS, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_issue(u, NULL, 0, true), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_disable(u), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(&h->iommu, IK_VTD_REG_GSTS) &
				     (IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES), 0, out);
	/* and once more: the queue restarts at IQH = 0 */
	HIL_CHECK_EQ_GOTO(h, ik_vtd_enable(u), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_issue(u, NULL, 0, true), 0, out);
out:
	ik_vtd_destroy(u);
	HIL_CHECK_EQ(h, ik_mmio_read32(&h->iommu, IK_VTD_REG_GSTS) &
				(IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES), 0);
	HIL_CHECK_EQ(h, bm_pool_live(), live);
}

/* A bad descriptor: -EIO, and the queue resumes (QEMU 7.2 fetches again
 * only when IQT is written). */
static void bad_descriptor_then_queue_resumes(struct hil *h, const void *arg)
{
	ik_u64 bad[4] = { 0x2 | (2ull << 4) | (1ull << 8), 0, 0, 0 }; /* IOTLB, reserved bit 8 */
	struct ik_vtd_desc d;
	struct ik_vtd *u = NULL;
	int i;

	if (want_scalable(arg) && !unit_scalable(h))
		HIL_SKIP(h, "no scalable mode (x-scalable-mode=on)");
	HIL_CHECK_EQ(h, vtd_new(h, arg, &u), 0);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_enable(u), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_cmdq_issue(ik_vtd_queue(u), bad, 1, IK_CMDQ_SYNC), -EIO, out);
	HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(&h->iommu, IK_VTD_REG_FSTS) & IK_VTD_FSTS_IQE, 0, out);
	IK_ENV_MEMSET(&d, 0, sizeof(d));
	d.type = IK_VTD_DESC_IOTLB;
	d.g = IK_VTD_G_DOMAIN;
	d.did = 1;
	for (i = 0; i < 600; i++) /* more than two laps of the 256-entry queue */
		HIL_CHECK_EQ_GOTO(h, ik_vtd_issue(u, &d, 1, true), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_cmdq_issue(ik_vtd_queue(u), bad, 1, IK_CMDQ_SYNC), -EIO, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_issue(u, &d, 1, true), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_disable(u), 0, out);
out:
	ik_vtd_destroy(u);
}

/* Translated DMA: the mapped page is reached, an unmapped IOVA is not and
 * leaves a fault record; after unmap + planned invalidation the old IOVA is
 * blocked too (QEMU's IOTLB held it). */
static void translated_dma_unmap_and_faults(struct hil *h, const void *arg)
{
	struct ik_vtd_caps vc;
	struct ik_pgtable_cfg pc;
	struct ik_pgtable *pt = NULL;
	struct ik_vtd_attach a;
	struct ik_vtd_change chg;
	struct ik_vtd_plan p;
	struct ik_vtd_fault f;
	struct ik_gather g;
	struct pt_ctx ctx;
	struct ik_vtd *u = NULL;
	ik_u8 *buf = NULL;
	ik_u64 bus = 0, cap, ecap;
	long live = bm_pool_live();
	int err;

	if (want_scalable(arg) && !unit_scalable(h))
		HIL_SKIP(h, "no scalable mode (x-scalable-mode=on)");
	HIL_CHECK_EQ(h, ik_dma_alloc(&h->dma, 8192, 4096, (void **)&buf, &bus), 0);
	HIL_CHECK_EQ_GOTO(h, vtd_new(h, arg, &u), 0, out);
	cap = ik_mmio_read64(&h->iommu, IK_VTD_REG_CAP);
	ecap = ik_mmio_read64(&h->iommu, IK_VTD_REG_ECAP);
	vc.cap = cap;
	vc.ecap = ecap;
	vc.haw = IK_VTD_CAP_MGAW(cap);
	vc.scalable = want_scalable(arg);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_cfg_init(&pc, IK_PT_VTD_SL, &vc, IK_VTD_CAP_MGAW(cap), 0), 0,
			  out);
	IK_ENV_MEMSET(&ctx, 0, sizeof(ctx));
	ctx.h = h;
	ctx.u = u;
	pc.hooks = &pt_hooks;
	pc.cookie = &ctx;
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_create(&pc, &pt), 0, out);
	ctx.t.pt = pt;
	ctx.t.did = 1;
	HIL_CHECK_EQ_GOTO(h, ik_vtd_enable(u), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(pt, IOVA, bus, 4096, IK_PROT_READ | IK_PROT_WRITE), 0, out);
	a.pt = pt;
	a.did = 1;
	a.flags = 0;
	HIL_CHECK_EQ_GOTO(h, ik_vtd_context_set(u, h->rid >> 8, h->rid & 0xff, &a, &chg), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_plan_change(ik_vtd_caps(u), ik_vtd_plan_flags(u), &chg, &p), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_plan_issue(u, &p), 0, out);
	/* mapped: edu's buffer reaches buf through IOVA */
	hil_fill(buf, 8192, 0x600d);
	HIL_CHECK_EQ_GOTO(h, hil_edu_dma_from_ram(&h->edu, IOVA + 16, 0, 64, h->timeout_ns), 0, out);
	HIL_CHECK_EQ_GOTO(h, hil_edu_dma_to_ram(&h->edu, 0, IOVA + 256, 64, h->timeout_ns), 0, out);
	HIL_CHECK_EQ_GOTO(h, hil_memdiff(buf + 16, buf + 256, 64), 64, out);
	/* unmapped IOVA: blocked, and recorded */
	hil_fill(buf, 8192, 0xbad);
	HIL_CHECK_EQ_GOTO(h, hil_edu_dma_to_ram(&h->edu, 0, IOVA + 4096, 64, h->timeout_ns), 0, out);
	HIL_CHECK_EQ_GOTO(h, hil_verify(buf, 8192, 0xbad), 8192, out);
	err = ik_vtd_fault_pop(u, &f);
	HIL_CHECK_EQ_GOTO(h, err, 0, out);
	hil_diag("fault: sid %#x addr %#llx reason %#x (%s) %s", f.sid, (unsigned long long)f.addr,
		 f.reason, ik_vtd_fault_reason_name(f.reason) ? ik_vtd_fault_reason_name(f.reason) : "?",
		 f.write ? "write" : "read");
	HIL_CHECK_EQ_GOTO(h, f.sid, h->rid, out);
	HIL_CHECK_EQ_GOTO(h, f.addr, IOVA + 4096, out);
	HIL_CHECK_GOTO(h, f.write, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_fault_pop(u, &f), -ENOENT, out);
	/* unmap with the planned invalidation: the cached translation goes */
	HIL_CHECK_EQ_GOTO(h, hil_edu_dma_to_ram(&h->edu, 0, IOVA, 64, h->timeout_ns), 0, out);
	HIL_CHECK_GOTO(h, hil_verify(buf, 64, 0xbad) != 64, out); /* arrived */
	hil_fill(buf, 8192, 0xbad);
	ik_gather_init(&g);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(pt, IOVA, 4096, &g), 4096, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_plan_unmap(ik_vtd_caps(u), ik_vtd_plan_flags(u), &ctx.t, &g, &p), 0,
			  out);
	HIL_CHECK_EQ_GOTO(h, p.n, 1, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_plan_issue(u, &p), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(pt, &g), 0, out);
	HIL_CHECK_EQ_GOTO(h, hil_edu_dma_to_ram(&h->edu, 0, IOVA, 64, h->timeout_ns), 0, out);
	HIL_CHECK_EQ_GOTO(h, hil_verify(buf, 8192, 0xbad), 8192, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_fault_pop(u, &f), 0, out);
	HIL_CHECK_EQ_GOTO(h, f.addr, IOVA, out);
	/* detach */
	HIL_CHECK_EQ_GOTO(h, ik_vtd_context_clear(u, h->rid >> 8, h->rid & 0xff, &chg), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_plan_change(ik_vtd_caps(u), ik_vtd_plan_flags(u), &chg, &p), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_plan_issue(u, &p), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_disable(u), 0, out);
out:
	ik_vtd_destroy(u);
	ik_pgtable_destroy(pt);
	ik_dma_free(&h->dma, buf, bus, 8192);
	HIL_CHECK_EQ(h, bm_pool_live(), live);
}

static const struct hil_check checks[] = {
	{ "vtd_bringup_and_teardown", bringup_and_teardown, NULL, HIL_NEEDS_IOMMU },
	{ "vtd_bad_descriptor_then_queue_resumes", bad_descriptor_then_queue_resumes, NULL,
	  HIL_NEEDS_IOMMU },
	{ "vtd_translated_dma_unmap_and_faults", translated_dma_unmap_and_faults, NULL,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_scalable_bringup_and_teardown", bringup_and_teardown, &scalable, HIL_NEEDS_IOMMU },
	{ "vtd_scalable_bad_descriptor_then_queue_resumes", bad_descriptor_then_queue_resumes,
	  &scalable, HIL_NEEDS_IOMMU },
	{ "vtd_scalable_translated_dma_unmap_and_faults", translated_dma_unmap_and_faults,
	  &scalable, HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
};

const struct hil_suite hil_suite_vtd = HIL_SUITE("vtd", checks);
