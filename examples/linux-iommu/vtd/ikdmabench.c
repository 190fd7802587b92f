// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * ikdmabench.ko - what the kernel's dma_map_benchmark measures (Debian's
 * kernels lack CONFIG_DMA_MAP_BENCHMARK), for whichever IOMMU driver
 * translates the device: at load it times `iters` rounds of
 *   dma_map_single + dma_unmap_single of one page, and
 *   dma_map_sg + dma_unmap_sg of `sg_pages` scattered pages,
 * on a PCI device (default: QEMU's edu, 1234:11e8, which has no driver and
 * does no DMA here: only the mapping cost is measured) in each of `threads`
 * kernel threads at once, and prints nanoseconds per map and per unmap
 * (p50, p99 over all threads' rounds):
 *   ikdmabench: single map p50 N p99 N unmap p50 N p99 N (T threads x I)
 *   ikdmabench: sgP map p50 N p99 N unmap p50 N p99 N (T threads x I)
 * then stays loaded doing nothing (rmmod it).
 */
#define pr_fmt(fmt) "ikdmabench: " fmt

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/pci.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/sort.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/ktime.h>

static unsigned int iters = 2000;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "rounds per thread and test");
static unsigned int sg_pages = 16;
module_param(sg_pages, uint, 0444);
MODULE_PARM_DESC(sg_pages, "pages in the scatter-gather list");
static unsigned int threads = 2;
module_param(threads, uint, 0444);
MODULE_PARM_DESC(threads, "threads mapping at once");
static unsigned int vendor = 0x1234, device = 0x11e8;
module_param(vendor, uint, 0444);
module_param(device, uint, 0444);

#define MAX_THREADS 16
#define MAX_SG 64

struct bench_thread {
	struct device *dev;
	struct completion done;
	u64 *map_ns, *unmap_ns;	/* [iters] each, per test */
	int err;
	bool sg;
};

static int bench_fn(void *arg)
{
	struct bench_thread *t = arg;
	struct page *pages[MAX_SG];
	struct scatterlist *sgl = NULL;
	unsigned int i, n = t->sg ? sg_pages : 1;

	memset(pages, 0, sizeof(pages));
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i]) {
			t->err = -ENOMEM;
			goto out;
		}
	}
	if (t->sg) {
		sgl = kcalloc(n, sizeof(*sgl), GFP_KERNEL);
		if (!sgl) {
			t->err = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < iters && !t->err; i++) {
		u64 t0, t1, t2;

		if (t->sg) {
			unsigned int k;
			int nents;

			sg_init_table(sgl, n);
			for (k = 0; k < n; k++)
				sg_set_page(&sgl[k], pages[k], PAGE_SIZE, 0);
			t0 = ktime_get_ns();
			nents = dma_map_sg(t->dev, sgl, n, DMA_TO_DEVICE);
			t1 = ktime_get_ns();
			if (!nents) {
				t->err = -EIO;
				break;
			}
			dma_unmap_sg(t->dev, sgl, n, DMA_TO_DEVICE);
			t2 = ktime_get_ns();
		} else {
			dma_addr_t a;

			t0 = ktime_get_ns();
			a = dma_map_page(t->dev, pages[0], 0, PAGE_SIZE, DMA_TO_DEVICE);
			t1 = ktime_get_ns();
			if (dma_mapping_error(t->dev, a)) {
				t->err = -EIO;
				break;
			}
			dma_unmap_page(t->dev, a, PAGE_SIZE, DMA_TO_DEVICE);
			t2 = ktime_get_ns();
		}
		t->map_ns[i] = t1 - t0;
		t->unmap_ns[i] = t2 - t1;
	}
out:
	kfree(sgl);
	for (i = 0; i < n; i++)
		if (pages[i])
			__free_page(pages[i]);
	complete(&t->done);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static int run(struct device *dev, bool sg)
{
	struct bench_thread *t;
	u64 *map_ns, *unmap_ns;
	size_t total = (size_t)threads * iters;
	unsigned int i;
	int err = 0;

	t = kcalloc(threads, sizeof(*t), GFP_KERNEL);
	map_ns = vmalloc(array_size(total, sizeof(u64)));
	unmap_ns = vmalloc(array_size(total, sizeof(u64)));
	if (!t || !map_ns || !unmap_ns) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < threads; i++) {
		struct task_struct *k;

		t[i].dev = dev;
		t[i].sg = sg;
		t[i].map_ns = map_ns + (size_t)i * iters;
		t[i].unmap_ns = unmap_ns + (size_t)i * iters;
		init_completion(&t[i].done);
		k = kthread_run(bench_fn, &t[i], "ikdmabench/%u", i);
		if (IS_ERR(k)) {
			t[i].err = PTR_ERR(k);
			complete(&t[i].done);
		}
	}
	for (i = 0; i < threads; i++) {
		wait_for_completion(&t[i].done);
		if (t[i].err && !err)
			err = t[i].err;
	}
	if (err)
		goto out;
	sort(map_ns, total, sizeof(u64), cmp_u64, NULL);
	sort(unmap_ns, total, sizeof(u64), cmp_u64, NULL);
	if (sg)
		pr_info("sg%u map p50 %llu p99 %llu unmap p50 %llu p99 %llu (%u threads x %u)\n",
			sg_pages, map_ns[total / 2], map_ns[total * 99 / 100], unmap_ns[total / 2],
			unmap_ns[total * 99 / 100], threads, iters);
	else
		pr_info("single map p50 %llu p99 %llu unmap p50 %llu p99 %llu (%u threads x %u)\n",
			map_ns[total / 2], map_ns[total * 99 / 100], unmap_ns[total / 2],
			unmap_ns[total * 99 / 100], threads, iters);
out:
	vfree(map_ns);
	vfree(unmap_ns);
	kfree(t);
	return err;
}

static int __init ikdmabench_init(void)
{
	struct pci_dev *pdev;
	int err;

	if (!iters || !threads || threads > MAX_THREADS || !sg_pages || sg_pages > MAX_SG)
		return -EINVAL;
	pdev = pci_get_device(vendor, device, NULL);
	if (!pdev) {
		pr_err("no PCI device %04x:%04x\n", vendor, device);
		return -ENODEV;
	}
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (!err)
		err = run(&pdev->dev, false);
	if (!err)
		err = run(&pdev->dev, true);
	pci_dev_put(pdev);
	if (err)
		pr_err("failed: %d\n", err);
	return err;
}

static void __exit ikdmabench_exit(void)
{
}

module_init(ikdmabench_init);
module_exit(ikdmabench_exit);
MODULE_DESCRIPTION("dma_map_single/dma_map_sg latency on a device behind an IOMMU (example)");
MODULE_LICENSE("Dual BSD/GPL");
