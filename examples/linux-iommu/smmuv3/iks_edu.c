// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * iks_edu - the guest check of a DMA fault through the IOMMU, with QEMU's
 * "edu" device (1234:11e8) as the DMA master.  On probe it
 *   1. moves a 4095-byte pattern RAM -> edu -> RAM through the DMA API (the
 *      IOVAs come from the IOMMU's DMA domain) and compares every byte;
 *   2. makes edu write 64 bytes to an IOVA the domain does not map: the
 *      IOMMU must refuse the write (an F_TRANSLATION event from the driver),
 *      the transfer still completes on the device side, nothing in the
 *      guest's memory changes, and nothing hangs.
 * Each result is printed as "iks-edu: ok|not ok - ..." for the guest script.
 * QEMU 7.2's edu aborts QEMU on a DMA covering its whole 4096-byte buffer
 * and masks DMA addresses to 28 bits: transfers stay at most 4095 bytes and
 * the device's DMA mask is 28 bits.
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/dma-mapping.h>
#include <linux/iommu.h>
#include <linux/delay.h>
#include <linux/sort.h>
#include <linux/ktime.h>
#include <linux/slab.h>

static unsigned bench;
module_param(bench, uint, 0444);
MODULE_PARM_DESC(bench, "instead of the checks: N rounds of dma_map_single/dma_unmap_single of 1..64 pages, timed");

#define BENCH_MAX_PAGES 64u

#define EDU_DMA_SRC 0x80
#define EDU_DMA_DST 0x88
#define EDU_DMA_CNT 0x90
#define EDU_DMA_CMD 0x98
#define EDU_CMD_START 0x1
#define EDU_CMD_TO_RAM 0x2
#define EDU_BUF 0x40000ull
#define EDU_LEN 4095u

/* Start a transfer (QEMU's edu runs it from a timer, 100 ms later). */
static void edu_dma_start(void __iomem *bar, u64 src, u64 dst, u32 len, bool to_ram)
{
	writeq(src, bar + EDU_DMA_SRC);
	writeq(dst, bar + EDU_DMA_DST);
	writeq(len, bar + EDU_DMA_CNT);
	writeq(EDU_CMD_START | (to_ram ? EDU_CMD_TO_RAM : 0), bar + EDU_DMA_CMD);
}

static bool edu_dma_wait(void __iomem *bar)
{
	int i;

	for (i = 0; i < 5000; i++) {	/* bounded: 5 s */
		if (!(readq(bar + EDU_DMA_CMD) & EDU_CMD_START))
			return true;
		msleep(1);
	}
	return false;
}

static bool edu_dma(void __iomem *bar, u64 src, u64 dst, u32 len, bool to_ram)
{
	edu_dma_start(bar, src, dst, len, to_ram);
	return edu_dma_wait(bar);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * A small dma_map_benchmark (Debian's kernels lack CONFIG_DMA_MAP_BENCHMARK):
 * `bench` rounds of dma_map_single + dma_unmap_single of 1, 2, ..., 64
 * pages of one physically contiguous buffer, on this device (behind the
 * IOMMU).  The set of unmapped ranges is the same whatever the driver, so
 * the guest script compares the invalidation commands each driver issues
 * for it.  Prints ns per map and unmap, p50 and p99.
 */
static int iks_edu_bench(struct pci_dev *pdev)
{
	unsigned n = bench * BENCH_MAX_PAGES, i = 0, r, k;
	struct page *pg = alloc_pages(GFP_KERNEL, ilog2(BENCH_MAX_PAGES));
	u64 *tm = kcalloc(n, sizeof(u64), GFP_KERNEL), *tu = kcalloc(n, sizeof(u64), GFP_KERNEL);
	int err = 0;

	if (!pg || !tm || !tu) {
		err = -ENOMEM;
		goto out;
	}
	for (r = 0; r < bench; r++) {
		for (k = 1; k <= BENCH_MAX_PAGES; k++, i++) {
			u64 t0 = ktime_get_ns(), t1;
			dma_addr_t a = dma_map_single(&pdev->dev, page_address(pg), k * PAGE_SIZE,
						      DMA_BIDIRECTIONAL);

			t1 = ktime_get_ns();
			if (dma_mapping_error(&pdev->dev, a)) {
				err = -EIO;
				goto out;
			}
			dma_unmap_single(&pdev->dev, a, k * PAGE_SIZE, DMA_BIDIRECTIONAL);
			tm[i] = t1 - t0;
			tu[i] = ktime_get_ns() - t1;
		}
	}
	sort(tm, n, sizeof(u64), cmp_u64, NULL);
	sort(tu, n, sizeof(u64), cmp_u64, NULL);
	pr_info("iks-edu: # bench %u map+unmap of 1..%u pages: map p50 %llu ns p99 %llu ns, unmap p50 %llu ns p99 %llu ns\n",
		n, BENCH_MAX_PAGES, tm[n / 2], tm[n * 99 / 100], tu[n / 2], tu[n * 99 / 100]);
out:
	if (err)
		pr_info("iks-edu: not ok - bench: %d\n", err);
	kfree(tm);
	kfree(tu);
	if (pg)
		__free_pages(pg, ilog2(BENCH_MAX_PAGES));
	return 0;
}

static int iks_edu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct iommu_domain *dom;
	void __iomem *bar;
	dma_addr_t iova, hole = 0;
	u8 *buf;
	u32 i, bad = 0;
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return err;
	pci_set_master(pdev);
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(28));
	if (err)
		return err;
	bar = pcim_iomap(pdev, 0, 0);
	if (!bar)
		return -ENOMEM;
	if (bench)
		return iks_edu_bench(pdev);
	dom = iommu_get_domain_for_dev(&pdev->dev);
	pr_info("iks-edu: # domain type %#x\n", dom ? dom->type : 0);
	buf = dma_alloc_coherent(&pdev->dev, PAGE_SIZE, &iova, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < EDU_LEN; i++)
		buf[i] = (u8)(i * 7 + 3);
	if (!edu_dma(bar, iova, EDU_BUF, EDU_LEN, false)) {
		pr_info("iks-edu: not ok - edu DMA RAM->device timed out\n");
		goto out;
	}
	memset(buf, 0, PAGE_SIZE);
	if (!edu_dma(bar, EDU_BUF, iova, EDU_LEN, true)) {
		pr_info("iks-edu: not ok - edu DMA device->RAM timed out\n");
		goto out;
	}
	for (i = 0; i < EDU_LEN; i++)
		bad += buf[i] != (u8)(i * 7 + 3);
	if (bad || buf[EDU_LEN])
		pr_info("iks-edu: not ok - edu DMA round trip through IOVA %pad: %u bytes differ\n",
			&iova, bad);
	else
		pr_info("iks-edu: ok - edu DMA round trip through IOVA %pad, 4095 bytes each way\n",
			&iova);

	/* An IOVA below the 28-bit mask that the domain does not map. */
	if (dom && dom->type & __IOMMU_DOMAIN_PAGING) {
		for (hole = 0x0ff00000; hole > 0x100000; hole -= 0x100000)
			if (!iommu_iova_to_phys(dom, hole) && !iommu_iova_to_phys(dom, hole + 0x1000))
				break;
	}
	if (!hole) {
		pr_info("iks-edu: not ok - the edu is not in a paging domain: no fault check\n");
		goto out;
	}
	memset(buf, 0x5a, PAGE_SIZE);
	pr_info("iks-edu: # fault: edu writes 64 bytes to unmapped IOVA %pad\n", &hole);
	if (!edu_dma(bar, EDU_BUF, hole, 64, true)) {
		pr_info("iks-edu: not ok - a DMA to an unmapped IOVA hung the device\n");
		goto out;
	}
	msleep(300);	/* let the event interrupt (or poll) report it */
	for (i = 0, bad = 0; i < PAGE_SIZE; i++)
		bad += buf[i] != 0x5a;
	pr_info("iks-edu: %s - DMA to unmapped IOVA %pad completed without reaching memory (%u bytes changed)\n",
		bad ? "not ok" : "ok", &hole, bad);
	/* And translation still works after the fault. */
	memset(buf, 0, PAGE_SIZE);
	if (edu_dma(bar, EDU_BUF, iova, EDU_LEN, true) && buf[100] == (u8)(100 * 7 + 3))
		pr_info("iks-edu: ok - edu DMA works again after the fault\n");
	else
		pr_info("iks-edu: not ok - edu DMA after the fault\n");

	/*
	 * A misbehaving driver unmaps a buffer while the device's write to it
	 * is still pending.  In a strict domain the unmap has invalidated the
	 * IOTLB when it returns, so the write must fault and the page stay as
	 * it was (in a lazy one the IOVA stays reachable until the flush queue
	 * flushes: that is what lazy means, so the check is strict only).
	 */
	if (dom->type == IOMMU_DOMAIN_DMA) {
		struct page *pg = alloc_page(GFP_KERNEL);
		dma_addr_t a;

		if (!pg)
			goto out;
		memset(page_address(pg), 0x33, PAGE_SIZE);
		a = dma_map_page(&pdev->dev, pg, 0, PAGE_SIZE, DMA_FROM_DEVICE);
		if (dma_mapping_error(&pdev->dev, a)) {
			__free_page(pg);
			goto out;
		}
		edu_dma_start(bar, EDU_BUF, a, 64, true);
		dma_unmap_page(&pdev->dev, a, PAGE_SIZE, DMA_FROM_DEVICE);
		if (!edu_dma_wait(bar)) {
			/* The page may still be written: never free it. */
			pr_info("iks-edu: not ok - a DMA racing its unmap hung the device\n");
			goto out;
		}
		for (i = 0, bad = 0; i < PAGE_SIZE; i++)
			bad += ((u8 *)page_address(pg))[i] != 0x33;
		pr_info("iks-edu: %s - a DMA to a buffer unmapped under it (strict) does not reach the page (%u bytes changed)\n",
			bad ? "not ok" : "ok", bad);
		__free_page(pg);
	}
out:
	dma_free_coherent(&pdev->dev, PAGE_SIZE, buf, iova);
	return 0;
}

static const struct pci_device_id iks_edu_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8) },
	{ }
};
MODULE_DEVICE_TABLE(pci, iks_edu_ids);

static struct pci_driver iks_edu_driver = {
	.name = "iks-edu",
	.id_table = iks_edu_ids,
	.probe = iks_edu_probe,
};
module_pci_driver(iks_edu_driver);

MODULE_DESCRIPTION("iommukit SMMUv3 guest check: edu DMA and a DMA fault");
MODULE_LICENSE("Dual BSD/GPL");
