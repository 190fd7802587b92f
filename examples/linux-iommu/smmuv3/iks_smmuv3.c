// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * iks_smmuv3 - an Arm SMMUv3 IOMMU driver for Linux (6.12) built over
 * iommukit: <iommukit/drv/smmuv3.h> for the SMMU (ID registers, stream and
 * CD tables, command queue, event queue), LPAE stage-1 tables from the
 * generic page-table engine, and the invalidation planner
 * (ik_smmu_plan_inv) for every TLB invalidation.
 *
 * Binds the "arm,smmu-v3" platform device (device tree) and registers an
 * iommu_device:
 *   - probe_device: the StreamIDs from the device's fwspec (of_xlate adds
 *     them from "iommus" / "iommu-map");
 *   - domains: paging domains (one CD table with one CD per domain, its own
 *     ASID, stage 1), a static identity domain (bypass STE) and a static
 *     blocked domain (abort STE);
 *   - map_pages/unmap_pages on the engine; unmap gathers leaf ranges into
 *     the core's iommu_iotlb_gather, iotlb_sync turns the gather into the
 *     planner's commands (range TLBIs where IDR3.RIL), flush_iotlb_all is
 *     TLBI_NH_ASID; an unmap that unlinks table pages or splits a block
 *     invalidates before it returns (table pages are freed only after
 *     their CMD_SYNC);
 *   - strict and lazy (IOMMU_CAP_DEFERRED_FLUSH: the DMA layer's flush
 *     queue calls flush_iotlb_all);
 *   - the event queue is serviced by its wired interrupt ("eventq"; QEMU's
 *     virt machine wires one), else by a bounded poll every 100 ms; global
 *     errors by the "gerror" interrupt (or the same poll);
 *   - counters in debugfs: /sys/kernel/debug/iks_smmuv3/stats.
 * Unload (or unbind) leaves the SMMU disabled with GBPA.ABORT set, so DMA
 * aborts, and frees every table page, stream and CD table.
 *
 * Needs a coherent SMMU (IDR0.COHACC and a "dma-coherent" node): table and
 * queue memory is plain page memory addressed by virt_to_phys().
 */
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/of.h>
#include <linux/of_device.h>
#include <linux/of_address.h>
#include <linux/iommu.h>
#include <linux/pci.h>
#include <linux/interrupt.h>
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/idr.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/workqueue.h>
#include <linux/gfp.h>
#include <linux/dma-map-ops.h>

#include <iommukit/drv/smmuv3.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/version.h>

#include "ik_linux_io.h"	/* register accessors, SMMU-visible pages */

/* Exported by the kernel (EXPORT_SYMBOL), declared in a private header. */
void iommu_dma_get_resv_regions(struct device *dev, struct list_head *list);

#define IKS_MSI_IOVA_BASE 0x8000000ul
#define IKS_MSI_IOVA_LEN 0x100000ul
#define IKS_IRQ_CTRL_GERROR (1u << 0)
#define IKS_IRQ_CTRL_EVTQ (1u << 2)
#define IKS_POLL_MS 100
#define IKS_PLAN_TLBI 12u	/* planner threshold: the plan lives on the stack */

/* Driver-wide counters (debugfs), all relaxed atomics. */
struct iks_counters {
	atomic64_t map_calls, unmap_calls, pages_mapped, pages_unmapped;
	atomic64_t tlbi_cmds, cfgi_cmds, syncs, flush_all, faults, gerrors;
	atomic64_t table_pages, dma_pages, domains;	/* live objects (leak checks) */
};
static struct iks_counters iks_ctr;

struct iks_smmu {
	struct device *dev;
	void __iomem *base;
	struct ik_mmio mmio;
	struct ik_dma_mem dma;
	struct ik_smmu *s;
	const struct ik_smmu_idr *id;
	struct iommu_device iommu;
	struct mutex ste_lock;		/* serialises stream-table writes */
	spinlock_t evt_lock;		/* one event-queue consumer */
	spinlock_t masters_lock;	/* masters: probe, release and event reports */
	struct list_head masters;	/* every probed iks_master, for event reports */
	struct ida asids;
	unsigned asid_max;
	int evt_irq, gerr_irq;
	struct delayed_work poll;	/* no event interrupt: bounded poll */
	bool polling;
	struct dentry *dbg;
};

struct iks_domain {
	struct iommu_domain dom;
	struct iks_smmu *smmu;
	struct ik_pgtable *pt;
	struct ik_smmu_cdtab cdt;
	u16 asid;
};

struct iks_master {
	struct iks_smmu *smmu;
	struct device *dev;
	struct list_head node;		/* on smmu->masters */
	unsigned nsids;
	u32 sids[];
};

static bool force_poll;
module_param(force_poll, bool, 0444);
MODULE_PARM_DESC(force_poll, "service the event queue by a 100 ms poll even where it has an interrupt");

static struct iks_smmu *iks_the_smmu;	/* the device tree has one SMMUv3 in QEMU's virt */

static inline struct iks_domain *to_iks(struct iommu_domain *d)
{
	return container_of(d, struct iks_domain, dom);
}

/* ---------------------------------------------------------------- commands */

/* Issue cmds[0..n) (no CMD_SYNC among them) and one CMD_SYNC; count them. */
static int iks_issue(struct iks_smmu *smmu, const struct ik_smmu_cmd *cmds, unsigned n)
{
	unsigned i;
	int err;

	for (i = 0; i < n; i++) {
		if (cmds[i].op >= IK_SMMU_CMD_TLBI_NH_ALL && cmds[i].op <= IK_SMMU_CMD_TLBI_NSNH_ALL)
			atomic64_inc(&iks_ctr.tlbi_cmds);
		else
			atomic64_inc(&iks_ctr.cfgi_cmds);
	}
	atomic64_add(n ? DIV_ROUND_UP(n, 16) : 1, &iks_ctr.syncs);
	err = ik_smmu_issue(smmu->s, cmds, n);
	if (err)
		dev_err_ratelimited(smmu->dev, "command queue: %d\n", err);
	return err;
}

/* The table writers' issue callback: the same, with its counting. */
static int iks_issue_fn(void *ctx, const struct ik_smmu_cmd *cmds, unsigned n)
{
	return iks_issue(ctx, cmds, n);
}

static void iks_tlbi_asid(struct iks_smmu *smmu, u16 asid)
{
	struct ik_smmu_cmd c = { .op = IK_SMMU_CMD_TLBI_NH_ASID, .asid = asid };

	atomic64_inc(&iks_ctr.flush_all);
	iks_issue(smmu, &c, 1);
}

/* Invalidate what gather `g` of domain d's table set holds: the planner's
 * commands (range TLBI_NH_VA with RIL, page TLBIs without, TLBI_NH_ASID past
 * the threshold), ending with its CMD_SYNC, which iks_issue supplies. */
static void iks_inv_gather(struct iks_domain *d, const struct ik_gather *g)
{
	struct ik_smmu_cmd plan[IK_SMMU_PLAN_MAX_CMDS(IKS_PLAN_TLBI)];
	struct ik_smmu_inv_target t = { .stage = 1, .asid = d->asid, .max_tlbi = IKS_PLAN_TLBI };
	int n;

	n = ik_smmu_plan_inv(d->smmu->id, d->pt, g, &t, plan, ARRAY_SIZE(plan));
	if (n < 0) {
		dev_err_ratelimited(d->smmu->dev, "invalidation plan: %d; flushing the ASID\n", n);
		iks_tlbi_asid(d->smmu, d->asid);
		return;
	}
	if (n > 0)
		iks_issue(d->smmu, plan, (unsigned)n - 1); /* the plan's last is its CMD_SYNC */
}

/* ---------------------------------------------------------------- page-table hooks */

static void *iks_pt_alloc(void *cookie, ik_size size, ik_u64 *iommu_addr)
{
	unsigned long p = __get_free_pages(GFP_ATOMIC | __GFP_NOWARN, get_order(size));

	if (!p)
		return NULL;
	atomic64_inc(&iks_ctr.table_pages);
	*iommu_addr = virt_to_phys((void *)p);
	return (void *)p;
}

static void iks_pt_free(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size)
{
	free_pages((unsigned long)cpu, get_order(size));
	atomic64_dec(&iks_ctr.table_pages);
}

/* A block replaced an emptied table: the walk caches may point at it. */
static void iks_pt_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	struct iks_domain *d = cookie;

	iks_tlbi_asid(d->smmu, d->asid);
}

static const struct ik_pgtable_hooks iks_pt_hooks = {
	.alloc_table = iks_pt_alloc,
	.free_table = iks_pt_free,
	.flush_walk = iks_pt_flush_walk,
};

/* ---------------------------------------------------------------- domains */

static const struct iommu_domain_ops iks_paging_ops;
static const struct iommu_ops iks_ops;

static struct iommu_domain *iks_domain_alloc_paging(struct device *dev)
{
	struct iks_master *m = dev_iommu_priv_get(dev);
	struct iks_smmu *smmu = m->smmu;
	const struct ik_smmu_idr *id = smmu->id;
	struct ik_smmu_cdtab_config tc = { .idr = id, .dma = &smmu->dma, .log2_cds = 0,
					   .fmt = IK_SMMU_S1FMT_LINEAR };
	struct ik_pgtable_cfg pc = {
		.fmt = IK_PT_LPAE_S1, .ias = 48, .oas = min_t(u32, id->oas, 48),
		.pgsize_bitmap = iks_ops.pgsize_bitmap, .coherent = true,
		.hooks = &iks_pt_hooks,
	};
	struct ik_smmu_cd_config cc;
	struct iks_domain *d;
	u64 cd[8];
	int asid, err;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	d->smmu = smmu;
	asid = ida_alloc_range(&smmu->asids, 1, smmu->asid_max, GFP_KERNEL);
	if (asid < 0) {
		err = asid;
		goto fail_free;
	}
	d->asid = (u16)asid;
	pc.cookie = d;
	err = ik_pgtable_create(&pc, &d->pt);
	if (err)
		goto fail_asid;
	err = ik_smmu_cdtab_init(&d->cdt, &tc);
	if (err)
		goto fail_pt;
	cc = (struct ik_smmu_cd_config){ .pt = d->pt, .asid = d->asid };
	err = ik_smmu_cd_build(id, &cc, cd);
	/* No STE points at the table yet: no CFGI (NULL issue function). */
	if (!err)
		err = ik_smmu_cdtab_write(&d->cdt, 0, cd, NULL, 0, NULL, NULL);
	if (err)
		goto fail_cdt;
	d->dom.pgsize_bitmap = iks_ops.pgsize_bitmap;
	d->dom.geometry.aperture_start = 0;
	d->dom.geometry.aperture_end = (1ull << 48) - 1;
	d->dom.geometry.force_aperture = true;
	d->dom.ops = &iks_paging_ops;
	atomic64_inc(&iks_ctr.domains);
	return &d->dom;

fail_cdt:
	ik_smmu_cdtab_fini(&d->cdt);
fail_pt:
	ik_pgtable_destroy(d->pt);
fail_asid:
	ida_free(&smmu->asids, asid);
fail_free:
	kfree(d);
	return ERR_PTR(err);
}

static void iks_domain_free(struct iommu_domain *dom)
{
	struct iks_domain *d = to_iks(dom);

	/* No STE uses the domain any more (the core detached every device):
	 * retire its ASID from the TLB before it can be reused. */
	iks_tlbi_asid(d->smmu, d->asid);
	ik_pgtable_destroy(d->pt);
	ik_smmu_cdtab_fini(&d->cdt);
	ida_free(&d->smmu->asids, d->asid);
	atomic64_dec(&iks_ctr.domains);
	kfree(d);
}

/* Point every StreamID of the master at `ste`. */
static int iks_master_write_ste(struct iks_master *m, const u64 ste[8])
{
	struct iks_smmu *smmu = m->smmu;
	unsigned i;
	int err = 0;

	mutex_lock(&smmu->ste_lock);
	for (i = 0; i < m->nsids && !err; i++)
		err = ik_smmu_strtab_write(ik_smmu_get_strtab(smmu->s), m->sids[i], ste,
					   iks_issue_fn, smmu);
	mutex_unlock(&smmu->ste_lock);
	return err;
}

static int iks_attach_cfg(struct device *dev, struct ik_smmu_ste_config *c)
{
	struct iks_master *m = dev_iommu_priv_get(dev);
	u64 ste[8];
	int err;

	err = ik_smmu_ste_build(m->smmu->id, c, ste);
	if (err)
		return err;
	return iks_master_write_ste(m, ste);
}

static int iks_attach_paging(struct iommu_domain *dom, struct device *dev)
{
	struct iks_master *m = dev_iommu_priv_get(dev);
	struct iks_domain *d = to_iks(dom);
	struct ik_smmu_ste_config c = { .config = IK_SMMU_STE_CFG_S1 };

	if (d->smmu != m->smmu)
		return -EINVAL;
	ik_smmu_cdtab_ste(&d->cdt, &c);
	return iks_attach_cfg(dev, &c);
}

static int iks_attach_identity(struct iommu_domain *dom, struct device *dev)
{
	struct ik_smmu_ste_config c = { .config = IK_SMMU_STE_CFG_BYPASS };

	return iks_attach_cfg(dev, &c);
}

static int iks_attach_blocked(struct iommu_domain *dom, struct device *dev)
{
	struct ik_smmu_ste_config c = { .config = IK_SMMU_STE_CFG_ABORT };

	return iks_attach_cfg(dev, &c);
}

static const struct iommu_domain_ops iks_identity_ops = { .attach_dev = iks_attach_identity };
static const struct iommu_domain_ops iks_blocked_ops = { .attach_dev = iks_attach_blocked };
static struct iommu_domain iks_identity = { .type = IOMMU_DOMAIN_IDENTITY,
					    .ops = &iks_identity_ops };
static struct iommu_domain iks_blocked = { .type = IOMMU_DOMAIN_BLOCKED, .ops = &iks_blocked_ops };

static unsigned iks_prot(int prot)
{
	unsigned p = 0;

	if (prot & IOMMU_READ)
		p |= IK_PROT_READ;
	if (prot & IOMMU_WRITE)
		p |= IK_PROT_WRITE;
	if (prot & IOMMU_NOEXEC)
		p |= IK_PROT_NOEXEC;
	if (prot & IOMMU_PRIV)
		p |= IK_PROT_PRIV;
	if (prot & IOMMU_MMIO)
		p |= IK_PROT_MMIO;
	else if (prot & IOMMU_CACHE)
		p |= IK_PROT_CACHE;
	return p;
}

static int iks_map_pages(struct iommu_domain *dom, unsigned long iova, phys_addr_t paddr,
			 size_t pgsize, size_t pgcount, int prot, gfp_t gfp, size_t *mapped)
{
	struct iks_domain *d = to_iks(dom);
	int err;

	atomic64_inc(&iks_ctr.map_calls);
	err = ik_pgtable_map_pages(d->pt, iova, paddr, pgsize, pgcount, iks_prot(prot));
	if (err)
		return err;
	atomic64_add(pgcount * (pgsize >> PAGE_SHIFT), &iks_ctr.pages_mapped);
	*mapped = pgsize * pgcount;
	return 0;
}

static size_t iks_unmap_pages(struct iommu_domain *dom, unsigned long iova, size_t pgsize,
			      size_t pgcount, struct iommu_iotlb_gather *gather)
{
	struct iks_domain *d = to_iks(dom);
	struct ik_gather g;
	ik_s64 n;

	atomic64_inc(&iks_ctr.unmap_calls);
	ik_gather_init(&g);
	n = ik_pgtable_unmap(d->pt, iova, (u64)pgsize * pgcount, &g);
	if (n <= 0)
		return 0;
	atomic64_add((u64)n >> PAGE_SHIFT, &iks_ctr.pages_unmapped);
	if (g.walk || g.nr_tables) {
		/* Table pages were unlinked (or a block split): invalidate the
		 * walk caches now, then free them. */
		iks_inv_gather(d, &g);
		ik_pgtable_gather_sync(d->pt, &g);
		return (size_t)n;
	}
	/* Leaf entries only: the core's gather carries the range to
	 * iotlb_sync (strict), or the flush queue's flush_iotlb_all (lazy). */
	if (!iommu_iotlb_gather_queued(gather)) {
		if (gather->pgsize && (gather->pgsize != g.granule ||
				       iommu_iotlb_gather_is_disjoint(gather, g.start,
								      g.end - g.start)))
			iommu_iotlb_sync(dom, gather);
		gather->pgsize = g.granule;
		iommu_iotlb_gather_add_range(gather, g.start, g.end - g.start);
	}
	ik_pgtable_gather_sync(d->pt, &g); /* no table pages: re-initialises it */
	return (size_t)n;
}

static void iks_iotlb_sync(struct iommu_domain *dom, struct iommu_iotlb_gather *gather)
{
	struct iks_domain *d = to_iks(dom);
	struct ik_gather g;

	if (!gather->pgsize || gather->end < gather->start)
		return;
	ik_gather_init(&g);
	ik_gather_add(&g, gather->start, (u64)gather->end - gather->start + 1, gather->pgsize);
	iks_inv_gather(d, &g);
}

static void iks_flush_iotlb_all(struct iommu_domain *dom)
{
	struct iks_domain *d = to_iks(dom);

	iks_tlbi_asid(d->smmu, d->asid);
}

static phys_addr_t iks_iova_to_phys(struct iommu_domain *dom, dma_addr_t iova)
{
	ik_u64 pa;

	if (ik_pgtable_iova_to_phys(to_iks(dom)->pt, iova, &pa, NULL))
		return 0;
	return (phys_addr_t)pa;
}

static const struct iommu_domain_ops iks_paging_ops = {
	.attach_dev = iks_attach_paging,
	.map_pages = iks_map_pages,
	.unmap_pages = iks_unmap_pages,
	.flush_iotlb_all = iks_flush_iotlb_all,
	.iotlb_sync = iks_iotlb_sync,
	.iova_to_phys = iks_iova_to_phys,
	.free = iks_domain_free,
};

/* ---------------------------------------------------------------- devices */

static int iks_of_xlate(struct device *dev, const struct of_phandle_args *args)
{
	return iommu_fwspec_add_ids(dev, args->args, 1);
}

static struct iommu_device *iks_probe_device(struct device *dev)
{
	struct iommu_fwspec *fw = dev_iommu_fwspec_get(dev);
	struct iks_smmu *smmu = iks_the_smmu;
	struct iks_master *m;
	unsigned i;

	if (!fw || !smmu || fw->iommu_fwnode != dev_fwnode(smmu->dev))
		return ERR_PTR(-ENODEV);
	/* The stream table covers min(SIDSIZE, 16) bits (ik_smmu_config's
	 * default sid_bits). */
	for (i = 0; i < fw->num_ids; i++)
		if (fw->ids[i] >= (1u << min_t(unsigned, smmu->id->sidsize, 16)))
			return ERR_PTR(-ERANGE);
	m = kzalloc(struct_size(m, sids, fw->num_ids), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->smmu = smmu;
	m->dev = dev;
	m->nsids = fw->num_ids;
	memcpy(m->sids, fw->ids, fw->num_ids * sizeof(u32));
	dev_iommu_priv_set(dev, m);
	spin_lock_irq(&smmu->masters_lock);
	list_add_tail(&m->node, &smmu->masters);
	spin_unlock_irq(&smmu->masters_lock);
	dev_info(dev, "iks_smmuv3: StreamID %#x%s\n", m->sids[0], m->nsids > 1 ? " (+more)" : "");
	return &smmu->iommu;
}

static void iks_release_device(struct device *dev)
{
	struct iks_master *m = dev_iommu_priv_get(dev);
	struct ik_smmu_ste_config c = { .config = IK_SMMU_STE_CFG_ABORT };
	u64 ste[8];

	/* The core attached the release (blocked) domain already; make sure. */
	if (!ik_smmu_ste_build(m->smmu->id, &c, ste))
		iks_master_write_ste(m, ste);
	spin_lock_irq(&m->smmu->masters_lock);
	list_del(&m->node);
	spin_unlock_irq(&m->smmu->masters_lock);
	dev_iommu_priv_set(dev, NULL);
	kfree(m);
}

static struct iommu_group *iks_device_group(struct device *dev)
{
	return dev_is_pci(dev) ? pci_device_group(dev) : generic_device_group(dev);
}

static void iks_get_resv_regions(struct device *dev, struct list_head *head)
{
	struct iommu_resv_region *r;

	/* Where MSI doorbells are mapped for devices in paging domains (vfio). */
	r = iommu_alloc_resv_region(IKS_MSI_IOVA_BASE, IKS_MSI_IOVA_LEN,
				    IOMMU_WRITE | IOMMU_NOEXEC | IOMMU_MMIO, IOMMU_RESV_SW_MSI,
				    GFP_KERNEL);
	if (r)
		list_add_tail(&r->list, head);
	iommu_dma_get_resv_regions(dev, head);
}

static bool iks_capable(struct device *dev, enum iommu_cap cap)
{
	switch (cap) {
	case IOMMU_CAP_CACHE_COHERENCY:
		return true;	/* probe refused a non-coherent SMMU */
	case IOMMU_CAP_NOEXEC:
	case IOMMU_CAP_DEFERRED_FLUSH:
		return true;
	default:
		return false;
	}
}

static const struct iommu_ops iks_ops = {
	.capable = iks_capable,
	.identity_domain = &iks_identity,
	.blocked_domain = &iks_blocked,
	.release_domain = &iks_blocked,
	.domain_alloc_paging = iks_domain_alloc_paging,
	.probe_device = iks_probe_device,
	.release_device = iks_release_device,
	.device_group = iks_device_group,
	.get_resv_regions = iks_get_resv_regions,
	.of_xlate = iks_of_xlate,
	.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G,
	.owner = THIS_MODULE,
	.default_domain_ops = &iks_paging_ops,
};

/* ---------------------------------------------------------------- events */

/* The name of the device that owns StreamID `sid` ("0000:00:02.0" for a PCI
 * function: the report then names its BDF) into buf, or "unknown device"
 * when no probed master has it (released since, or a stray StreamID). */
static void iks_sid_name(struct iks_smmu *smmu, u32 sid, char *buf, size_t len)
{
	struct iks_master *m;
	unsigned long flags;
	unsigned i;

	strscpy(buf, "unknown device", len);
	spin_lock_irqsave(&smmu->masters_lock, flags);
	list_for_each_entry(m, &smmu->masters, node)
		for (i = 0; i < m->nsids; i++)
			if (m->sids[i] == sid) {
				strscpy(buf, dev_name(m->dev), len);
				goto out;
			}
out:
	spin_unlock_irqrestore(&smmu->masters_lock, flags);
}

/* Same device, type, direction and page: QEMU retries a refused DMA in
 * 4-byte pieces, so one faulting transfer makes many records. */
static bool iks_event_same(const struct ik_smmu_event *a, const struct ik_smmu_event *b)
{
	return a->sid == b->sid && a->type == b->type && a->rnw == b->rnw &&
	       a->has_addr == b->has_addr && (a->addr >> PAGE_SHIFT) == (b->addr >> PAGE_SHIFT);
}

static void iks_report_event(struct iks_smmu *smmu, const struct ik_smmu_event *ev)
{
	char who[40];

	iks_sid_name(smmu, ev->sid, who, sizeof(who));
	dev_err_ratelimited(smmu->dev, "fault: event %s (%#x): %s sid %#x%s addr %#llx %s%s%s\n",
			    ev->name, ev->type, who, ev->sid, ev->ssv ? " (ssid)" : "",
			    ev->has_addr ? (unsigned long long)ev->addr : 0ull,
			    ev->rnw ? "read" : "write", ev->s2 ? " stage 2" : "",
			    ev->overflow ? " (records were lost before it)" : "");
}

static void iks_drain_events(struct iks_smmu *smmu)
{
	struct ik_smmu_event ev, last = {};
	struct ik_smmu_gerror ge;
	unsigned long flags;
	unsigned repeats = 0;
	bool have = false;
	int n = 0;

	spin_lock_irqsave(&smmu->evt_lock, flags);
	/* Bounded: at most one queue's worth per call.  Every record counts;
	 * a run of records like the one before (one DMA) is reported once,
	 * with how many more there were. */
	while (n++ < 1024 && ik_smmu_event_pop(smmu->s, &ev) == 0) {
		atomic64_inc(&iks_ctr.faults);
		if (have && iks_event_same(&ev, &last) && !ev.overflow) {
			repeats++;
			continue;
		}
		if (repeats)
			dev_err_ratelimited(smmu->dev, "fault: %u more like it (sid %#x)\n", repeats,
					    last.sid);
		iks_report_event(smmu, &ev);
		last = ev;
		have = true;
		repeats = 0;
	}
	if (repeats)
		dev_err_ratelimited(smmu->dev, "fault: %u more like it (sid %#x)\n", repeats, last.sid);
	if (ik_smmu_gerror_poll(smmu->s, &ge) > 0) {
		atomic64_inc(&iks_ctr.gerrors);
		dev_err_ratelimited(smmu->dev, "global error(s) %#x acknowledged\n", ge.active);
	}
	spin_unlock_irqrestore(&smmu->evt_lock, flags);
}

static irqreturn_t iks_irq_thread(int irq, void *arg)
{
	iks_drain_events(arg);
	return IRQ_HANDLED;
}

static void iks_poll_work(struct work_struct *w)
{
	struct iks_smmu *smmu = container_of(to_delayed_work(w), struct iks_smmu, poll);

	iks_drain_events(smmu);
	schedule_delayed_work(&smmu->poll, msecs_to_jiffies(IKS_POLL_MS));
}

static int iks_setup_irqs(struct platform_device *pdev, struct iks_smmu *smmu)
{
	u32 ctrl = 0;
	int err, i;

	smmu->evt_irq = force_poll ? 0 : platform_get_irq_byname_optional(pdev, "eventq");
	smmu->gerr_irq = force_poll ? 0 : platform_get_irq_byname_optional(pdev, "gerror");
	if (smmu->evt_irq > 0) {
		err = devm_request_threaded_irq(smmu->dev, smmu->evt_irq, NULL, iks_irq_thread,
						IRQF_ONESHOT, "iks-smmuv3-evtq", smmu);
		if (err)
			smmu->evt_irq = 0;
		else
			ctrl |= IKS_IRQ_CTRL_EVTQ;
	}
	if (smmu->gerr_irq > 0) {
		err = devm_request_threaded_irq(smmu->dev, smmu->gerr_irq, NULL, iks_irq_thread,
						IRQF_ONESHOT, "iks-smmuv3-gerror", smmu);
		if (err)
			smmu->gerr_irq = 0;
		else
			ctrl |= IKS_IRQ_CTRL_GERROR;
	}
	if (ctrl) {
		writel(ctrl, smmu->base + IK_SMMU_IRQ_CTRL);
		for (i = 0; i < 1000 && readl(smmu->base + IK_SMMU_IRQ_CTRLACK) != ctrl; i++)
			udelay(10);
		if (readl(smmu->base + IK_SMMU_IRQ_CTRLACK) != ctrl) {
			dev_warn(smmu->dev, "IRQ_CTRL not acknowledged: polling events\n");
			ctrl = 0;
		}
	}
	smmu->polling = !(ctrl & IKS_IRQ_CTRL_EVTQ);
	if (smmu->polling) {
		INIT_DELAYED_WORK(&smmu->poll, iks_poll_work);
		schedule_delayed_work(&smmu->poll, msecs_to_jiffies(IKS_POLL_MS));
	}
	dev_info(smmu->dev, "event queue: %s\n",
		 smmu->polling ? "polled every 100 ms (no eventq interrupt, or force_poll)" :
		 "by its interrupt");
	return 0;
}

/* ---------------------------------------------------------------- debugfs */

static int iks_stats_show(struct seq_file *sf, void *unused)
{
	struct iks_smmu *smmu = sf->private;
	struct ik_smmu_stats st;

	ik_smmu_get_stats(smmu->s, &st);
#define P(name) seq_printf(sf, "%s %lld\n", #name, (long long)atomic64_read(&iks_ctr.name))
	P(map_calls); P(unmap_calls); P(pages_mapped); P(pages_unmapped);
	P(tlbi_cmds); P(cfgi_cmds); P(syncs); P(flush_all); P(faults); P(gerrors);
	P(table_pages); P(dma_pages); P(domains);
#undef P
	seq_printf(sf, "events %llu\nevtq_overflows %llu\nste_writes %llu\ncd_writes %llu\n"
		   "doorbells %llu\ncmdq_errors %llu\ncmdq_timeouts %llu\nril %d\nevent_irq %d\n",
		   st.events, st.evtq_overflows, st.ste_writes, st.cd_writes, st.cmdq.doorbells,
		   st.cmdq.errors, st.cmdq.timeouts, smmu->id->ril, !smmu->polling);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(iks_stats);

/* ---------------------------------------------------------------- platform driver */

static int iks_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct ik_smmu_config sc = { .flags = IK_SMMU_F_ABORT_DISABLED };
	struct iks_smmu *smmu;
	struct resource *res;
	int err;

	if (iks_the_smmu)
		return -EBUSY;	/* one SMMU per module instance */
	smmu = devm_kzalloc(dev, sizeof(*smmu), GFP_KERNEL);
	if (!smmu)
		return -ENOMEM;
	smmu->dev = dev;
	res = platform_get_resource(pdev, IORESOURCE_MEM, 0);
	if (!res || resource_size(res) < 0x20000)
		return -EINVAL;
	smmu->base = devm_ioremap_resource(dev, res);
	if (IS_ERR(smmu->base))
		return PTR_ERR(smmu->base);
	ik_linux_mmio_init(&smmu->mmio, smmu->base);
	/* The SMMU is coherent: no clean. */
	ik_linux_dma_init(&smmu->dma, &iks_ctr.dma_pages);
	mutex_init(&smmu->ste_lock);
	spin_lock_init(&smmu->evt_lock);
	spin_lock_init(&smmu->masters_lock);
	INIT_LIST_HEAD(&smmu->masters);
	ida_init(&smmu->asids);
	sc.mmio = &smmu->mmio;
	sc.dma = &smmu->dma;
	err = ik_smmu_create(&sc, &smmu->s);
	if (err)
		return dev_err_probe(dev, err, "ik_smmu_create\n");
	smmu->id = ik_smmu_get_idr(smmu->s);
	if (!smmu->id->s1p || !smmu->id->gran4k || !smmu->id->cohacc ||
	    !dev_is_dma_coherent(dev)) {
		err = dev_err_probe(dev, -ENODEV,
				    "needs stage 1, 4K granule and a coherent SMMU\n");
		goto fail_destroy;
	}
	smmu->asid_max = smmu->id->asid16 ? 0xffff : 0xff;
	err = ik_smmu_reset(smmu->s);
	if (err) {
		dev_err(dev, "ik_smmu_reset: %d\n", err);
		goto fail_destroy;
	}
	iks_setup_irqs(pdev, smmu);
	iks_the_smmu = smmu;
	platform_set_drvdata(pdev, smmu);
	smmu->dbg = debugfs_create_dir("iks_smmuv3", NULL);
	debugfs_create_file("stats", 0444, smmu->dbg, smmu, &iks_stats_fops);
	err = iommu_device_sysfs_add(&smmu->iommu, dev, NULL, "iks-smmuv3.%pa", &res->start);
	if (err)
		goto fail_reset;
	err = iommu_device_register(&smmu->iommu, &iks_ops, dev);
	if (err) {
		iommu_device_sysfs_remove(&smmu->iommu);
		goto fail_reset;
	}
	dev_info(dev, "iks_smmuv3 (iommukit %u.%u.%u): SIDSIZE %u, OAS %u, RIL %d, ASID16 %d, "
		 "stage 2 %d: translating\n", IK_VERSION_MAJOR, IK_VERSION_MINOR,
		 IK_VERSION_PATCH, smmu->id->sidsize, smmu->id->oas, smmu->id->ril,
		 smmu->id->asid16, smmu->id->s2p);
	return 0;

fail_reset:
	debugfs_remove_recursive(smmu->dbg);
	iks_the_smmu = NULL;
	if (smmu->polling)
		cancel_delayed_work_sync(&smmu->poll);
fail_destroy:
	ik_smmu_destroy(smmu->s);
	return err;
}

static void iks_remove(struct platform_device *pdev)
{
	struct iks_smmu *smmu = platform_get_drvdata(pdev);
	u32 cr0, gbpa;

	iommu_device_unregister(&smmu->iommu);
	iommu_device_sysfs_remove(&smmu->iommu);
	debugfs_remove_recursive(smmu->dbg);
	if (smmu->polling)
		cancel_delayed_work_sync(&smmu->poll);
	if (smmu->evt_irq > 0)
		devm_free_irq(smmu->dev, smmu->evt_irq, smmu);
	if (smmu->gerr_irq > 0)
		devm_free_irq(smmu->dev, smmu->gerr_irq, smmu);
	iks_drain_events(smmu);
	/* GBPA.ABORT, then SMMUEN = 0: from here on every DMA aborts. */
	ik_smmu_disable(smmu->s);
	cr0 = readl(smmu->base + IK_SMMU_CR0);
	gbpa = readl(smmu->base + IK_SMMU_GBPA);
	ik_smmu_destroy(smmu->s);
	ida_destroy(&smmu->asids);
	iks_the_smmu = NULL;
	/* GBPA reads back without ABORT on an SMMU that does not implement it
	 * (QEMU before 8.0: a disabled SMMU there always bypasses). */
	dev_info(smmu->dev, "iks_smmuv3: unloaded: CR0 %#x GBPA %#x (ABORT %s); live: domains %lld "
		 "table pages %lld SMMU pages %lld\n", cr0, gbpa,
		 gbpa & IK_SMMU_GBPA_ABORT ? "set" : "not implemented by this SMMU",
		 (long long)atomic64_read(&iks_ctr.domains),
		 (long long)atomic64_read(&iks_ctr.table_pages),
		 (long long)atomic64_read(&iks_ctr.dma_pages));
}

static const struct of_device_id iks_of_match[] = {
	{ .compatible = "arm,smmu-v3" },
	{ }
};
MODULE_DEVICE_TABLE(of, iks_of_match);

static struct platform_driver iks_driver = {
	.driver = {
		.name = "iks-smmuv3",
		.of_match_table = iks_of_match,
		.suppress_bind_attrs = true,
	},
	.probe = iks_probe,
	.remove_new = iks_remove,
};
module_platform_driver(iks_driver);

MODULE_DESCRIPTION("Arm SMMUv3 IOMMU driver over iommukit");
MODULE_LICENSE("Dual BSD/GPL");
