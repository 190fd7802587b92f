// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * ikvtd.ko - a Linux IOMMU driver for an Intel VT-d remapping unit, built on
 * the vendored iommukit library (scripts/vendor.sh):
 *   - the unit comes from the ACPI DMAR table (its first DRHD);
 *   - <iommukit/drv/vtd.h> brings it up in legacy mode: root and context
 *     tables, the invalidation queue (an ik_cmdq), GCMD/GSTS, fault records;
 *   - every paging domain is one ik_pgtable of VT-d second-level tables
 *     tagged with its own domain id;
 *   - every invalidation is chosen by the VT-d planner (ik_vtd_plan_unmap,
 *     _map, _range, _change) and issued through the queue.
 * It registers an iommu_device with no firmware node: with intel_iommu=off
 * the 6.12 core then offers it every PCI device.  Devices already bound to a
 * driver when it loads keep DMA without translation (pass-through context
 * entries written before translation is enabled) and are refused by
 * probe_device.  Faults are polled (the unit's fault interrupt needs an
 * MSI that a module cannot allocate through the DMAR IRQ domain): a
 * delayed work every IKVTD_FAULT_POLL_MS, and at once on a debugfs request.
 *
 * debugfs, /sys/kernel/debug/ikvtd/:
 *   stats      counters (map/unmap calls and pages, sync_map, iotlb_sync,
 *              flush_all, invalidation descriptors and waits, faults)
 *   edu_test   write 1: an edu DMA through its domain (must arrive), then
 *              one from an unmapped IOVA (must fault once), then a buffer
 *              unmapped while edu's write into it is pending (must fault
 *              once, the page untouched); read: the result
 *   unregister write 1: give every device back (iommu_device_unregister:
 *              each is detached, its context entry cleared, its domains
 *              freed) so that the module can be unloaded - the core holds
 *              a module reference per device it probed.  Refused (-EBUSY,
 *              with the device named in the log) while a translated device
 *              has a driver bound: its DMA addresses are IOVAs of a domain
 *              that would go away under it.
 *
 * See docs/guide-kernel.md for a walkthrough.
 */
#define pr_fmt(fmt) "ikvtd: " fmt

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/acpi.h>
#include <linux/io.h>
#include <linux/iommu.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/idr.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/workqueue.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/atomic.h>
#include <asm/cacheflush.h>
#include <asm/set_memory.h>

#include <iommukit/drv/vtd.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/pgtable.h>

#include "ik_linux_io.h"	/* register accessors, the unit's DMA pages */

#define IKVTD_FAULT_POLL_MS 200
#define IKVTD_DID_IDENTITY 1	/* pass-through entries; DID 0 is the unit's under CM */
#define IKVTD_MSI_BASE 0xfee00000ul
#define IKVTD_MSI_SIZE 0x100000ul

static bool scalable;
module_param(scalable, bool, 0444);
MODULE_PARM_DESC(scalable, "scalable mode (second-level tables through PASID entries) where ECAP.SMTS");

static bool strict_only;
module_param(strict_only, bool, 0444);
MODULE_PARM_DESC(strict_only, "do not offer deferred flush (lazy) to the core");

/* Counters, per CPU (a locked add on every map and unmap would cost more
 * than it tells); debugfs sums them.  pages_live is a plain atomic: it
 * changes only with table and queue pages. */
enum ikvtd_counter {
	C_MAP_CALLS, C_MAP_PAGES, C_UNMAP_CALLS, C_UNMAP_PAGES,
	C_SYNC_MAP, C_SYNC_MAP_CMDS, C_SYNC_MAP_SYNCS,	/* iotlb_sync_map and what it issued */
	C_IOTLB_SYNC, C_FLUSH_ALL,
	C_CMDS, C_SYNCS, C_FAULTS, C_ISSUE_ERRORS,
	C_NR
};

static const char *const ikvtd_counter_names[C_NR] = {
	"map_calls", "map_pages", "unmap_calls", "unmap_pages",
	"sync_map", "sync_map_cmds", "sync_map_syncs",
	"iotlb_sync", "flush_all",
	"cmds", "syncs", "faults", "issue_errors",
};

struct ikvtd_pcpu {
	u64 v[C_NR];
};

struct ikvtd_stats {
	struct ikvtd_pcpu __percpu *pc;
	atomic64_t pages_live;
};

struct ikvtd_unit {
	void __iomem *regs;
	u64 reg_phys;
	struct ik_mmio mmio;
	struct ik_dma_mem dma;
	struct ik_vtd *u;
	struct ik_vtd_caps vc;	/* for ik_vtd_cfg_init() */
	u32 ias;		/* the domains' input width */
	unsigned int ndid;
	struct iommu_device iommu;
	struct mutex lock;	/* context entries: one change at a time */
	struct ida dids;
	DECLARE_BITMAP(pt_at_load, 65536);	/* SIDs left in pass-through at load */
	struct delayed_work fault_work;
	spinlock_t fault_lock;
	struct dentry *dbg;
	struct ikvtd_stats st;
	char edu_result[320];
	bool registered, sysfs;
};

static struct ikvtd_unit *unit;

#define CNT_ADD(c, n) this_cpu_add(unit->st.pc->v[c], (n))
#define CNT_INC(c) CNT_ADD(c, 1)

static u64 cnt_read(enum ikvtd_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(unit->st.pc, cpu)->v[c];
	return sum;
}

struct ikvtd_domain {
	struct iommu_domain dom;
	struct ik_pgtable *pt;
	struct ik_vtd_target t;
	u16 did;
};

struct ikvtd_dev {
	u8 bus, devfn;
	struct iommu_domain *attached;	/* NULL: context entry not present */
	u16 did;
};

static inline struct ikvtd_domain *to_ikd(struct iommu_domain *d)
{
	return container_of(d, struct ikvtd_domain, dom);
}

/* ---------------------------------------------------------------- env hooks */

/* ECAP.C = 0 (QEMU): the unit's walks do not snoop the CPU caches. */
static void ikvtd_dma_clean(void *ctx, const void *cpu, u64 dma, size_t size)
{
	(void)ctx;
	(void)dma;
	clflush_cache_range((void *)cpu, size);
}

/* ---------------------------------------------------------------- invalidation */

/*
 * Issue a plan.  No local_irq_save() here: an issuer in an interrupt
 * handler (an NVMe completion unmapping its buffers) could otherwise wait
 * behind the slots of the issuer it interrupted, reserved but not yet
 * published, until the queue's timeout - the queue itself now turns local
 * interrupts off around each insertion (IK_ENV_IRQ_SAVE in ik_env_linux.h;
 * <iommukit/cmdq.h>, "Interrupts"), and waits for the sync with them on.
 */
static int ikvtd_issue(const struct ik_vtd_plan *p)
{
	int err;

	if (!p->n && !p->sync && !p->wbf)
		return 0;
	err = ik_vtd_plan_issue(unit->u, p);
	if (err) {
		CNT_INC(C_ISSUE_ERRORS);
		pr_err_ratelimited("invalidation failed: %d\n", err);
		return err;
	}
	CNT_ADD(C_CMDS, p->n);
	if (p->sync)
		CNT_INC(C_SYNCS);
	return 0;
}

static int ikvtd_issue_change(const struct ik_vtd_change *chg)
{
	struct ik_vtd_plan p;
	int err = ik_vtd_plan_change(ik_vtd_caps(unit->u), ik_vtd_plan_flags(unit->u), chg, &p);

	return err ? err : ikvtd_issue(&p);
}

/* Page-table hooks: table pages, cleans, and the walk flush a map needs
 * where a block replaces an empty table. */
static void *ikvtd_pt_alloc(void *cookie, ik_size size, ik_u64 *iommu_addr)
{
	(void)cookie;
	return ik_linux_pages_alloc(&unit->st.pages_live, size, size, iommu_addr);
}

static void ikvtd_pt_free(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size)
{
	(void)cookie;
	(void)iommu_addr;
	ik_linux_pages_free(&unit->st.pages_live, cpu, size);
}

static void ikvtd_pt_clean(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size)
{
	(void)cookie;
	(void)iommu_addr;
	clflush_cache_range(cpu, size);
}

static void ikvtd_pt_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	struct ikvtd_domain *d = cookie;
	struct ik_vtd_plan p;

	(void)granule;
	if (!ik_vtd_plan_range(ik_vtd_caps(unit->u), ik_vtd_plan_flags(unit->u), &d->t, iova, size,
			       true, &p))
		ikvtd_issue(&p);
}

/* No iotlb_sync_map hook here: the engine would call it once per
 * map_pages call (per scatter-gather segment); the iommu core calls
 * ikvtd_iotlb_sync_map() once per dma_map_sg list instead. */
static const struct ik_pgtable_hooks ikvtd_pt_hooks = {
	.alloc_table = ikvtd_pt_alloc,
	.free_table = ikvtd_pt_free,
	.clean = ikvtd_pt_clean,
	.flush_walk = ikvtd_pt_flush_walk,
};

/* ---------------------------------------------------------------- faults */

static void ikvtd_fault_service(void)
{
	struct ik_vtd_fault f;
	unsigned int i, nfr;
	unsigned long flags;

	spin_lock_irqsave(&unit->fault_lock, flags);
	nfr = ik_vtd_caps(unit->u)->nfr + 1;
	for (i = 0; i < nfr && ik_vtd_fault_pop(unit->u, &f) == 0; i++) {
		const char *why = ik_vtd_fault_reason_name(f.reason);

		CNT_INC(C_FAULTS);
		pr_warn("DMA fault: %02x:%02x.%u %s addr %#llx reason %#x (%s)%s\n", f.sid >> 8,
			(f.sid >> 3) & 0x1f, f.sid & 7, f.write ? "write" : "read",
			(unsigned long long)f.addr, f.reason, why ? why : "unknown",
			f.overflow ? ", records lost (overflow)" : "");
	}
	spin_unlock_irqrestore(&unit->fault_lock, flags);
}

static void ikvtd_fault_work(struct work_struct *w)
{
	ikvtd_fault_service();
	schedule_delayed_work(&unit->fault_work, msecs_to_jiffies(IKVTD_FAULT_POLL_MS));
}

/* ---------------------------------------------------------------- domains */

static const struct iommu_domain_ops ikvtd_paging_ops;

static struct iommu_domain *ikvtd_domain_alloc_paging(struct device *dev)
{
	struct ikvtd_domain *d;
	struct ik_pgtable_cfg pc;
	int did, err;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	did = ida_alloc_range(&unit->dids, IKVTD_DID_IDENTITY + 1, unit->ndid - 1, GFP_KERNEL);
	if (did < 0) {
		kfree(d);
		return ERR_PTR(did);
	}
	d->did = (u16)did;
	err = ik_vtd_cfg_init(&pc, IK_PT_VTD_SL, &unit->vc, unit->ias, 0);
	if (!err) {
		pc.hooks = &ikvtd_pt_hooks;
		pc.cookie = d;
		err = ik_pgtable_create(&pc, &d->pt);
	}
	if (err) {
		ida_free(&unit->dids, did);
		kfree(d);
		return ERR_PTR(err);
	}
	d->t.pt = d->pt;
	d->t.did = d->did;
	d->dom.ops = &ikvtd_paging_ops;
	d->dom.pgsize_bitmap = pc.pgsize_bitmap;
	d->dom.geometry.aperture_start = 0;
	d->dom.geometry.aperture_end = (1ull << unit->ias) - 1;
	d->dom.geometry.force_aperture = true;
	return &d->dom;
}

static void ikvtd_domain_free(struct iommu_domain *dom)
{
	struct ikvtd_domain *d = to_ikd(dom);

	/* Detached from every device: the context-entry clear invalidated
	 * the DID's IOTLB entries. */
	ik_pgtable_destroy(d->pt);
	ida_free(&unit->dids, d->did);
	kfree(d);
}

/* Point the device's context entry at `dom` (NULL: not present). */
static int ikvtd_set_context(struct device *dev, struct iommu_domain *dom)
{
	struct ikvtd_dev *info = dev_iommu_priv_get(dev);
	struct ik_vtd_change chg;
	struct ik_vtd_attach a;
	int err = 0;

	if (!info)
		return -ENODEV;
	mutex_lock(&unit->lock);
	if (info->attached == dom)
		goto out;
	if (info->attached) {
		err = ik_vtd_context_clear(unit->u, info->bus, info->devfn, &chg);
		if (!err)
			err = ikvtd_issue_change(&chg);
		if (err)
			goto out;
		info->attached = NULL;
	}
	if (!dom || dom->type == IOMMU_DOMAIN_BLOCKED)
		goto done;
	memset(&a, 0, sizeof(a));
	if (dom->type == IOMMU_DOMAIN_IDENTITY) {
		a.did = IKVTD_DID_IDENTITY;
		a.flags = IK_VTD_ATTACH_PASSTHROUGH;
	} else {
		a.pt = to_ikd(dom)->pt;
		a.did = to_ikd(dom)->did;
	}
	err = ik_vtd_context_set(unit->u, info->bus, info->devfn, &a, &chg);
	if (!err)
		err = ikvtd_issue_change(&chg);
	if (err)
		goto out;
done:
	/* Blocked is a cleared context entry: a later attach must not try
	 * to clear it again (-ENOENT: vfio's paging domain after the
	 * blocked one of its DMA ownership, the default domain after it). */
	info->attached = dom && dom->type != IOMMU_DOMAIN_BLOCKED ? dom : NULL;
out:
	mutex_unlock(&unit->lock);
	return err;
}

static int ikvtd_attach_dev(struct iommu_domain *dom, struct device *dev)
{
	return ikvtd_set_context(dev, dom);
}

static int ikvtd_map_pages(struct iommu_domain *dom, unsigned long iova, phys_addr_t paddr,
			   size_t pgsize, size_t pgcount, int prot, gfp_t gfp, size_t *mapped)
{
	struct ikvtd_domain *d = to_ikd(dom);
	unsigned int ip = 0;
	int err;

	(void)gfp;
	if (prot & IOMMU_READ)
		ip |= IK_PROT_READ;
	if (prot & IOMMU_WRITE)
		ip |= IK_PROT_WRITE;
	if (!ip)
		return -EINVAL;
	err = ik_pgtable_map_pages(d->pt, iova, paddr, pgsize, pgcount, ip);
	CNT_INC(C_MAP_CALLS);
	if (err)
		return err;
	CNT_ADD(C_MAP_PAGES, pgsize * pgcount >> PAGE_SHIFT);
	*mapped = pgsize * pgcount;
	return 0;
}

/* The unmap's leaf ranges join the core's gather (one invalidation at
 * iotlb_sync, or none until the flush queue's flush_iotlb_all in lazy
 * mode).  An unmap that unlinked table pages or split a block must
 * invalidate the walk caches before those pages are freed: it does so at
 * once. */
static size_t ikvtd_unmap_pages(struct iommu_domain *dom, unsigned long iova, size_t pgsize,
				size_t pgcount, struct iommu_iotlb_gather *kg)
{
	struct ikvtd_domain *d = to_ikd(dom);
	struct ik_gather g;
	struct ik_vtd_plan p;
	ik_s64 n;

	ik_gather_init(&g);
	n = ik_pgtable_unmap(d->pt, iova, (u64)pgsize * pgcount, &g);
	CNT_INC(C_UNMAP_CALLS);
	if (n <= 0)
		return 0;
	CNT_ADD(C_UNMAP_PAGES, (u64)n >> PAGE_SHIFT);
	if (g.nr_tables || g.walk) {
		if (!ik_vtd_plan_unmap(ik_vtd_caps(unit->u), ik_vtd_plan_flags(unit->u), &d->t, &g, &p))
			ikvtd_issue(&p);
	} else {
		iommu_iotlb_gather_add_range(kg, g.start, g.end - g.start);
	}
	ik_pgtable_gather_sync(d->pt, &g);
	return (size_t)n;
}

static void ikvtd_iotlb_sync(struct iommu_domain *dom, struct iommu_iotlb_gather *kg)
{
	struct ikvtd_domain *d = to_ikd(dom);
	struct ik_gather g;
	struct ik_vtd_plan p;

	if (kg->end < kg->start)
		return;
	CNT_INC(C_IOTLB_SYNC);
	ik_gather_init(&g);
	ik_gather_add(&g, kg->start, (u64)kg->end - kg->start + 1, PAGE_SIZE);
	if (!ik_vtd_plan_unmap(ik_vtd_caps(unit->u), ik_vtd_plan_flags(unit->u), &d->t, &g, &p))
		ikvtd_issue(&p);
}

/* Caching mode: the unit may cache not-present entries, so a new mapping
 * needs an invalidation too - once for the whole request (a dma_map_sg
 * list is one call), never once per segment. */
static int ikvtd_iotlb_sync_map(struct iommu_domain *dom, unsigned long iova, size_t size)
{
	struct ikvtd_domain *d = to_ikd(dom);
	struct ik_vtd_plan p;
	int err;

	CNT_INC(C_SYNC_MAP);
	err = ik_vtd_plan_map(ik_vtd_caps(unit->u), ik_vtd_plan_flags(unit->u), &d->t, iova, size,
			      &p);
	if (!err)
		err = ikvtd_issue(&p);
	if (!err) {
		CNT_ADD(C_SYNC_MAP_CMDS, p.n);
		if (p.sync)
			CNT_INC(C_SYNC_MAP_SYNCS);
	}
	return err;
}

static void ikvtd_flush_iotlb_all(struct iommu_domain *dom)
{
	struct ikvtd_domain *d = to_ikd(dom);
	struct ik_vtd_plan p;

	CNT_INC(C_FLUSH_ALL);
	if (!ik_vtd_plan_range(ik_vtd_caps(unit->u), ik_vtd_plan_flags(unit->u), &d->t, 0,
			       1ull << unit->ias, true, &p))
		ikvtd_issue(&p);
}

static phys_addr_t ikvtd_iova_to_phys(struct iommu_domain *dom, dma_addr_t iova)
{
	u64 pa;

	if (ik_pgtable_iova_to_phys(to_ikd(dom)->pt, iova, &pa, NULL))
		return 0;
	return pa;
}

static const struct iommu_domain_ops ikvtd_paging_ops = {
	.attach_dev = ikvtd_attach_dev,
	.map_pages = ikvtd_map_pages,
	.unmap_pages = ikvtd_unmap_pages,
	.iotlb_sync = ikvtd_iotlb_sync,
	.iotlb_sync_map = ikvtd_iotlb_sync_map,
	.flush_iotlb_all = ikvtd_flush_iotlb_all,
	.iova_to_phys = ikvtd_iova_to_phys,
	.free = ikvtd_domain_free,
};

static const struct iommu_domain_ops ikvtd_static_ops = {
	.attach_dev = ikvtd_attach_dev,
};

static struct iommu_domain ikvtd_identity = {
	.type = IOMMU_DOMAIN_IDENTITY,
	.ops = &ikvtd_static_ops,
};

static struct iommu_domain ikvtd_blocked = {
	.type = IOMMU_DOMAIN_BLOCKED,
	.ops = &ikvtd_static_ops,
};

/* ---------------------------------------------------------------- devices */

static struct iommu_device *ikvtd_probe_device(struct device *dev)
{
	struct pci_dev *pdev;
	struct ikvtd_dev *info;
	u16 sid;

	if (!dev_is_pci(dev))
		return ERR_PTR(-ENODEV);
	pdev = to_pci_dev(dev);
	if (pci_domain_nr(pdev->bus) != 0)
		return ERR_PTR(-ENODEV);
	sid = pci_dev_id(pdev);
	/* Bound before we came: its driver's DMA addresses are physical. */
	if (test_bit(sid, unit->pt_at_load) || dev->driver)
		return ERR_PTR(-ENODEV);
	info = kzalloc(sizeof(*info), GFP_KERNEL);
	if (!info)
		return ERR_PTR(-ENOMEM);
	info->bus = pdev->bus->number;
	info->devfn = pdev->devfn;
	dev_iommu_priv_set(dev, info);
	return &unit->iommu;
}

static void ikvtd_release_device(struct device *dev)
{
	struct ikvtd_dev *info = dev_iommu_priv_get(dev);

	if (!info)
		return;
	if (info->attached)
		ikvtd_set_context(dev, NULL);
	dev_iommu_priv_set(dev, NULL);
	kfree(info);
}

static struct iommu_group *ikvtd_device_group(struct device *dev)
{
	return pci_device_group(dev);
}

static void ikvtd_get_resv_regions(struct device *dev, struct list_head *head)
{
	struct iommu_resv_region *r;

	/* The interrupt window: MSI writes are not remapped (intremap=off). */
	r = iommu_alloc_resv_region(IKVTD_MSI_BASE, IKVTD_MSI_SIZE, IOMMU_WRITE | IOMMU_MMIO,
				    IOMMU_RESV_MSI, GFP_KERNEL);
	if (r)
		list_add_tail(&r->list, head);
}

static bool ikvtd_capable(struct device *dev, enum iommu_cap cap)
{
	switch (cap) {
	case IOMMU_CAP_CACHE_COHERENCY:
		return true;
	case IOMMU_CAP_DEFERRED_FLUSH:
		return !strict_only;
	default:
		return false;
	}
}

static struct iommu_ops ikvtd_ops = {
	.capable = ikvtd_capable,
	.domain_alloc_paging = ikvtd_domain_alloc_paging,
	.probe_device = ikvtd_probe_device,
	.release_device = ikvtd_release_device,
	.device_group = ikvtd_device_group,
	.get_resv_regions = ikvtd_get_resv_regions,
	.identity_domain = &ikvtd_identity,
	.blocked_domain = &ikvtd_blocked,
	.release_domain = &ikvtd_blocked,
	/* The core holds a module reference per probed device: rmmod is
	 * refused until debugfs "unregister" has released them all. */
	.owner = THIS_MODULE,
};

/* ---------------------------------------------------------------- edu test */

#define EDU_VENDOR 0x1234
#define EDU_DEVICE 0x11e8
#define EDU_DMA_SRC 0x80
#define EDU_DMA_DST 0x88
#define EDU_DMA_CNT 0x90
#define EDU_DMA_CMD 0x98
#define EDU_CMD_RUN 0x1u
#define EDU_CMD_TO_RAM 0x2u
#define EDU_BUF 0x40000ul
#define EDU_FAULT_IOVA 0x0ff00000ul	/* below edu's 28-bit DMA mask; nothing maps it */

static void edu_dma_start(void __iomem *bar, u64 src, u64 dst, u32 cnt, u32 cmd)
{
	writeq(src, bar + EDU_DMA_SRC);
	writeq(dst, bar + EDU_DMA_DST);
	writeq(cnt, bar + EDU_DMA_CNT);
	writeq(cmd | EDU_CMD_RUN, bar + EDU_DMA_CMD);
}

static bool edu_dma_running(void __iomem *bar)
{
	return readq(bar + EDU_DMA_CMD) & EDU_CMD_RUN;
}

/* edu runs a transfer from a timer, 100 ms (virtual) after the command. */
static int edu_dma_wait(void __iomem *bar)
{
	unsigned int i;

	for (i = 0; i < 400; i++) {
		if (!edu_dma_running(bar))
			return 0;
		msleep(10);
	}
	return -ETIMEDOUT;
}

static int edu_dma(void __iomem *bar, u64 src, u64 dst, u32 cnt, u32 cmd)
{
	edu_dma_start(bar, src, dst, cnt, cmd);
	return edu_dma_wait(bar);
}

/* Faults recorded after a DMA that must fault: polled now, and again after
 * a few poll periods (a second record must not appear). */
static s64 edu_faults_since(s64 f0)
{
	ikvtd_fault_service();
	msleep(3 * IKVTD_FAULT_POLL_MS);
	ikvtd_fault_service();
	return (s64)cnt_read(C_FAULTS) - f0;
}

/*
 * A misbehaving driver: edu is told to write 64 bytes into a mapped page,
 * and the page is unmapped before the transfer runs.  The write must fault
 * (one record) and leave the page as it was.
 */
static int edu_unmap_live(struct pci_dev *pdev, void __iomem *bar, char *msg, size_t len)
{
	u8 *c = (u8 *)__get_free_page(GFP_KERNEL);
	dma_addr_t c_dma;
	bool early;
	s64 f0, nf;
	int i, err, bad = 0;

	if (!c)
		return -ENOMEM;
	memset(c, 0x5a, 64);
	c_dma = dma_map_single(&pdev->dev, c, PAGE_SIZE, DMA_FROM_DEVICE);
	if (dma_mapping_error(&pdev->dev, c_dma)) {
		free_page((unsigned long)c);
		return -EIO;
	}
	ikvtd_fault_service();
	f0 = (s64)cnt_read(C_FAULTS);
	edu_dma_start(bar, EDU_BUF, c_dma, 64, EDU_CMD_TO_RAM);
	dma_unmap_single(&pdev->dev, c_dma, PAGE_SIZE, DMA_FROM_DEVICE);
	early = !edu_dma_running(bar);
	err = edu_dma_wait(bar);
	nf = edu_faults_since(f0);
	for (i = 0; i < 64; i++)
		bad |= c[i] != 0x5a;
	snprintf(msg, len, "unmapped under a live DMA: dma %d%s, %lld fault(s), page %s", err,
		 early ? " (ran before the unmap: inconclusive)" : "", (long long)nf,
		 bad ? "WRITTEN" : "untouched");
	free_page((unsigned long)c);
	return !err && !early && nf == 1 && !bad ? 0 : -EIO;
}

/* An edu DMA of 64 bytes through the device's domain both ways (must
 * arrive), then a read of an unmapped IOVA (must be recorded as one fault,
 * reported once, and leave the guest running), then edu_unmap_live(). */
static void ikvtd_edu_test(void)
{
	struct pci_dev *pdev = pci_get_device(EDU_VENDOR, EDU_DEVICE, NULL);
	struct iommu_domain *dom;
	void __iomem *bar = NULL;
	dma_addr_t a_dma, b_dma;
	u8 *a = NULL, *b = NULL;
	char live_msg[128] = "";
	s64 f0, nf;
	int err, i, live;

	if (!pdev) {
		snprintf(unit->edu_result, sizeof(unit->edu_result), "fail: no edu device\n");
		return;
	}
	err = pci_enable_device(pdev);
	if (err) {
		snprintf(unit->edu_result, sizeof(unit->edu_result), "fail: enable %d\n", err);
		goto out_put;
	}
	pci_set_master(pdev);
	/* edu drops address bits above its 28-bit DMA mask. */
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(28));
	bar = err ? NULL : pci_iomap(pdev, 0, 0);
	dom = iommu_get_domain_for_dev(&pdev->dev);
	if (!bar || !dom || !(dom->type & __IOMMU_DOMAIN_PAGING)) {
		snprintf(unit->edu_result, sizeof(unit->edu_result),
			 "fail: edu has no paging domain (%d)\n", dom ? (int)dom->type : -1);
		goto out;
	}
	a = dma_alloc_coherent(&pdev->dev, PAGE_SIZE, &a_dma, GFP_KERNEL);
	b = dma_alloc_coherent(&pdev->dev, PAGE_SIZE, &b_dma, GFP_KERNEL);
	if (!a || !b) {
		snprintf(unit->edu_result, sizeof(unit->edu_result), "fail: no DMA buffers\n");
		goto out;
	}
	for (i = 0; i < 64; i++)
		a[i] = (u8)(i * 7 + 3);
	memset(b, 0, 64);
	if (edu_dma(bar, a_dma, EDU_BUF, 64, 0) || edu_dma(bar, EDU_BUF, b_dma, 64, EDU_CMD_TO_RAM) ||
	    memcmp(a, b, 64)) {
		snprintf(unit->edu_result, sizeof(unit->edu_result),
			 "fail: mapped DMA did not arrive (iova %#llx/%#llx)\n",
			 (unsigned long long)a_dma, (unsigned long long)b_dma);
		goto out;
	}
	if (iommu_iova_to_phys(dom, EDU_FAULT_IOVA)) {
		snprintf(unit->edu_result, sizeof(unit->edu_result), "fail: %#lx is mapped\n",
			 EDU_FAULT_IOVA);
		goto out;
	}
	ikvtd_fault_service();
	f0 = (s64)cnt_read(C_FAULTS);
	err = edu_dma(bar, EDU_FAULT_IOVA, EDU_BUF, 64, 0);
	nf = edu_faults_since(f0);
	live = edu_unmap_live(pdev, bar, live_msg, sizeof(live_msg));
	snprintf(unit->edu_result, sizeof(unit->edu_result),
		 "%s: mapped DMA ok (iova %#llx); read of an unmapped IOVA: dma %d, %lld fault(s); "
		 "%s\n", !err && nf == 1 && !live ? "pass" : "fail", (unsigned long long)a_dma, err,
		 (long long)nf, live_msg);
out:
	if (a)
		dma_free_coherent(&pdev->dev, PAGE_SIZE, a, a_dma);
	if (b)
		dma_free_coherent(&pdev->dev, PAGE_SIZE, b, b_dma);
	if (bar)
		pci_iounmap(pdev, bar);
	pci_clear_master(pdev);
	pci_disable_device(pdev);
out_put:
	pci_dev_put(pdev);
}

/* ---------------------------------------------------------------- debugfs */

static int ikvtd_stats_show(struct seq_file *m, void *v)
{
	int c;

	seq_printf(m, "caching_mode %u\n", ik_vtd_caps(unit->u)->cm ? 1 : 0);
	for (c = 0; c < C_NR; c++)
		seq_printf(m, "%s %llu\n", ikvtd_counter_names[c],
			   (unsigned long long)cnt_read((enum ikvtd_counter)c));
	seq_printf(m, "pages_live %lld\n", (long long)atomic64_read(&unit->st.pages_live));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ikvtd_stats);

static ssize_t ikvtd_edu_read(struct file *f, char __user *ubuf, size_t len, loff_t *off)
{
	return simple_read_from_buffer(ubuf, len, off, unit->edu_result, strlen(unit->edu_result));
}

static ssize_t ikvtd_edu_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	ikvtd_edu_test();
	return len;
}

static const struct file_operations ikvtd_edu_fops = {
	.owner = THIS_MODULE,
	.read = ikvtd_edu_read,
	.write = ikvtd_edu_write,
};

static int ikvtd_busy_dev(struct device *dev, void *data)
{
	struct ikvtd_dev *info;

	if (!dev->iommu || dev->iommu->iommu_dev != &unit->iommu)
		return 0;
	info = dev_iommu_priv_get(dev);
	if (dev->driver && info && info->attached &&
	    info->attached->type != IOMMU_DOMAIN_IDENTITY) {
		pr_warn("unregister refused: %s is bound to %s and translated\n", dev_name(dev),
			dev->driver->name);
		return -EBUSY;
	}
	return 0;
}

static ssize_t ikvtd_unregister_write(struct file *f, const char __user *ubuf, size_t len,
				      loff_t *off)
{
	int err;

	mutex_lock(&unit->lock);
	if (!unit->registered) {
		mutex_unlock(&unit->lock);
		return len;
	}
	err = bus_for_each_dev(&pci_bus_type, NULL, NULL, ikvtd_busy_dev);
	if (!err)
		unit->registered = false;
	mutex_unlock(&unit->lock);
	if (err)
		return err;
	/* Outside unit->lock: release_device takes it. */
	iommu_device_unregister(&unit->iommu);
	pr_info("unregistered: every device released, the module may be unloaded\n");
	return len;
}

static const struct file_operations ikvtd_unregister_fops = {
	.owner = THIS_MODULE,
	.write = ikvtd_unregister_write,
};

/* ---------------------------------------------------------------- load/unload */

static int ikvtd_find_drhd(u64 *base, u32 *haw)
{
	struct acpi_table_header *hdr;
	struct acpi_table_dmar *dmar;
	u8 *p, *end;
	int err = -ENODEV;

	if (ACPI_FAILURE(acpi_get_table(ACPI_SIG_DMAR, 0, &hdr)))
		return -ENODEV;
	dmar = (struct acpi_table_dmar *)hdr;
	*haw = dmar->width + 1u;
	p = (u8 *)(dmar + 1);
	end = (u8 *)hdr + hdr->length;
	while (p + sizeof(struct acpi_dmar_header) <= end) {
		struct acpi_dmar_header *h = (struct acpi_dmar_header *)p;

		if (h->length < sizeof(*h) || h->length > end - p)
			break;
		if (h->type == ACPI_DMAR_TYPE_HARDWARE_UNIT &&
		    h->length >= sizeof(struct acpi_dmar_hardware_unit)) {
			struct acpi_dmar_hardware_unit *d = (struct acpi_dmar_hardware_unit *)h;

			if (d->segment == 0) {
				*base = d->address;
				err = 0;
				break;
			}
		}
		p += h->length;
	}
	acpi_put_table(hdr);
	return err;
}

/* Devices bound before us keep untranslated DMA: pass-through entries,
 * written before translation is enabled. */
static int ikvtd_passthrough_bound(void)
{
	struct pci_dev *pdev = NULL;
	struct ik_vtd_attach a = { .did = IKVTD_DID_IDENTITY, .flags = IK_VTD_ATTACH_PASSTHROUGH };
	struct ik_vtd_change chg;
	int err;

	for_each_pci_dev(pdev) {
		if (pci_domain_nr(pdev->bus) || !pdev->dev.driver)
			continue;
		if (!ik_vtd_caps(unit->u)->pt) {
			pci_dev_put(pdev);
			pr_err("%s is bound and the unit has no pass-through (ECAP.PT)\n",
			       pci_name(pdev));
			return -EOPNOTSUPP;
		}
		err = ik_vtd_context_set(unit->u, pdev->bus->number, pdev->devfn, &a, &chg);
		if (err) {
			pci_dev_put(pdev);
			return err;
		}
		set_bit(pci_dev_id(pdev), unit->pt_at_load);
		pr_info("%s (%s) was bound at load: pass-through\n", pci_name(pdev),
			pdev->dev.driver->name);
	}
	return 0;
}

static void ikvtd_teardown(void)
{
	u32 gsts;
	s64 live;

	if (unit->u) {
		ikvtd_fault_service();
		ik_vtd_destroy(unit->u);	/* translation and QI off, tables freed */
		unit->u = NULL;
	}
	gsts = readl(unit->regs + IK_VTD_REG_GSTS);
	live = atomic64_read(&unit->st.pages_live);
	pr_info("unit off: GSTS %#x (TE %u, QIES %u), %lld DMA pages still allocated\n", gsts,
		!!(gsts & IK_VTD_GSTS_TES), !!(gsts & IK_VTD_GSTS_QIES), (long long)live);
	iounmap(unit->regs);
	ida_destroy(&unit->dids);
	free_percpu(unit->st.pc);
}

static int __init ikvtd_init(void)
{
	struct ik_vtd_config c;
	struct ik_vtd_fault f;
	const struct ik_vtd_hwcaps *hc;
	u32 haw, mgaw;
	u64 base;
	unsigned int i;
	int err;

	err = ikvtd_find_drhd(&base, &haw);
	if (err) {
		pr_err("no DMAR remapping unit in ACPI\n");
		return err;
	}
	unit = kzalloc(sizeof(*unit), GFP_KERNEL);
	if (!unit)
		return -ENOMEM;
	unit->st.pc = alloc_percpu(struct ikvtd_pcpu);
	if (!unit->st.pc) {
		kfree(unit);
		return -ENOMEM;
	}
	mutex_init(&unit->lock);
	ida_init(&unit->dids);
	spin_lock_init(&unit->fault_lock);
	INIT_DELAYED_WORK(&unit->fault_work, ikvtd_fault_work);
	unit->reg_phys = base;
	unit->regs = ioremap(base, PAGE_SIZE);
	if (!unit->regs) {
		free_percpu(unit->st.pc);
		kfree(unit);
		return -ENOMEM;
	}
	ik_linux_mmio_init(&unit->mmio, unit->regs);
	ik_linux_dma_init(&unit->dma, &unit->st.pages_live);
	unit->dma.clean = ikvtd_dma_clean;
	memset(&c, 0, sizeof(c));
	c.mmio = &unit->mmio;
	c.dma = &unit->dma;
	c.haw = clamp(haw, 32u, 52u);
	c.qs = 0;
	if (scalable && (readq(unit->regs + IK_VTD_REG_ECAP) & IK_VTD_ECAP_SMTS))
		c.flags |= IK_VTD_CFG_SCALABLE;
	else if (scalable)
		pr_warn("no scalable mode (ECAP.SMTS = 0): legacy mode\n");
	err = ik_vtd_create(&c, &unit->u);
	if (err) {
		pr_err("ik_vtd_create: %d\n", err);
		goto fail;
	}
	hc = ik_vtd_caps(unit->u);
	unit->vc.cap = ik_mmio_read64(&unit->mmio, IK_VTD_REG_CAP);
	unit->vc.ecap = ik_mmio_read64(&unit->mmio, IK_VTD_REG_ECAP);
	unit->vc.haw = c.haw;
	unit->vc.scalable = c.flags & IK_VTD_CFG_SCALABLE;
	mgaw = IK_VTD_CAP_MGAW(unit->vc.cap);
	unit->ias = min(mgaw, 48u);
	unit->ndid = 1u << (4 + 2 * IK_VTD_CAP_ND(unit->vc.cap));
	if (unit->ndid > 65536)
		unit->ndid = 65536;
	/* A previous owner's fault records would hide ours. */
	for (i = 0; i <= hc->nfr && ik_vtd_fault_pop(unit->u, &f) == 0; i++)
		;
	err = ikvtd_passthrough_bound();
	if (!err)
		err = ik_vtd_enable(unit->u);
	if (err) {
		pr_err("bring-up: %d\n", err);
		goto fail;
	}
	pr_info("unit at %#llx: VT-d %u.%u, %s mode, HAW %u, MGAW %u, %u domain ids, CM %u, "
		"ECAP.C %u, PT %u; domains: %u-bit second-level tables\n",
		(unsigned long long)base, IK_VTD_VER_MAJOR(readl(unit->regs)),
		IK_VTD_VER_MINOR(readl(unit->regs)), unit->vc.scalable ? "scalable" : "legacy",
		c.haw, mgaw, unit->ndid, hc->cm ? 1 : 0,
		hc->c ? 1 : 0, hc->pt ? 1 : 0, unit->ias);
	unit->dbg = debugfs_create_dir("ikvtd", NULL);
	debugfs_create_file("stats", 0444, unit->dbg, NULL, &ikvtd_stats_fops);
	debugfs_create_file("edu_test", 0600, unit->dbg, NULL, &ikvtd_edu_fops);
	debugfs_create_file("unregister", 0200, unit->dbg, NULL, &ikvtd_unregister_fops);
	schedule_delayed_work(&unit->fault_work, msecs_to_jiffies(IKVTD_FAULT_POLL_MS));
	ikvtd_ops.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
	err = iommu_device_sysfs_add(&unit->iommu, NULL, NULL, "ikvtd0");
	if (err)
		goto fail_dbg;
	unit->sysfs = true;
	err = iommu_device_register(&unit->iommu, &ikvtd_ops, NULL);
	if (err)
		goto fail_dbg;
	unit->registered = true;
	pr_info("registered; translating every PCI device not bound before\n");
	return 0;
fail_dbg:
	if (unit->sysfs)
		iommu_device_sysfs_remove(&unit->iommu);
	cancel_delayed_work_sync(&unit->fault_work);
	debugfs_remove_recursive(unit->dbg);
fail:
	ikvtd_teardown();
	kfree(unit);
	unit = NULL;
	return err;
}

static void __exit ikvtd_exit(void)
{
	/* Reached only when no device holds a module reference: "unregister"
	 * released them (or none was ever probed). */
	if (unit->registered)
		iommu_device_unregister(&unit->iommu);
	iommu_device_sysfs_remove(&unit->iommu);
	cancel_delayed_work_sync(&unit->fault_work);
	debugfs_remove_recursive(unit->dbg);
	ikvtd_teardown();
	kfree(unit);
	unit = NULL;
}

module_init(ikvtd_init);
module_exit(ikvtd_exit);
MODULE_DESCRIPTION("Intel VT-d IOMMU driver over iommukit (example)");
MODULE_LICENSE("Dual BSD/GPL");
