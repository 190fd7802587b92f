/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ik_linux_io.h - the Linux glue the IOMMU drivers of examples/linux-iommu
 * share (iks_smmuv3.ko, ikvtd.ko): what <iommukit/drv/io.h> asks of the
 * caller, on kernel APIs.
 *
 *   ik_linux_mmio_init(m, base)  struct ik_mmio over an ioremap()ed register
 *       block: readl/readq and writel/writeq, which give the ordering
 *       <iommukit/drv/io.h> requires (a read before later loads from DMA
 *       memory, a write after earlier stores to it).
 *   ik_linux_dma_init(d, live)  struct ik_dma_mem of whole zeroed pages from
 *       the buddy allocator (GFP_ATOMIC: the cores allocate under spinlocks),
 *       naturally aligned to their order, hence to any power-of-two size and
 *       alignment up to it; the device address is the physical address (an
 *       IOMMU reaches memory untranslated).  No clean: a driver whose IOMMU
 *       does not snoop sets d->clean itself.  *live counts the pages held
 *       (the drivers' leak checks read it).
 *   ik_linux_pages_alloc/_free  the same pages, for a driver's own hooks
 *       (page-table pages).
 *
 * Header-only: the Makefiles copy it beside the driver's source, which
 * includes it once.  Everything is static inline.
 */
#ifndef IK_LINUX_IO_H
#define IK_LINUX_IO_H

#include <linux/io.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/minmax.h>
#include <linux/atomic.h>

#include <iommukit/drv/io.h>

static inline u32 ik_linux_read32(void *ctx, u32 off)
{
	return readl((u8 __iomem *)ctx + off);
}

static inline void ik_linux_write32(void *ctx, u32 off, u32 val)
{
	writel(val, (u8 __iomem *)ctx + off);
}

static inline u64 ik_linux_read64(void *ctx, u32 off)
{
	return readq((u8 __iomem *)ctx + off);
}

static inline void ik_linux_write64(void *ctx, u32 off, u64 val)
{
	writeq(val, (u8 __iomem *)ctx + off);
}

static inline void ik_linux_mmio_init(struct ik_mmio *m, void __iomem *base)
{
	*m = (struct ik_mmio){ .read32 = ik_linux_read32, .write32 = ik_linux_write32,
			       .read64 = ik_linux_read64, .write64 = ik_linux_write64,
			       .ctx = (void __force *)base };
}

/* `size` bytes (a whole number of pages) aligned to `align`: the device
 * address into *dma, 2^order pages added to *live.  NULL on failure. */
static inline void *ik_linux_pages_alloc(atomic64_t *live, size_t size, size_t align, u64 *dma)
{
	unsigned int order = get_order(max(size, align));
	struct page *pg = alloc_pages(GFP_ATOMIC | __GFP_ZERO | __GFP_NOWARN, order);

	if (!pg)
		return NULL;
	atomic64_add(1l << order, live);
	*dma = page_to_phys(pg);
	return page_address(pg);
}

static inline void ik_linux_pages_free(atomic64_t *live, void *cpu, size_t size)
{
	unsigned int order = get_order(size);

	free_pages((unsigned long)cpu, order);
	atomic64_sub(1l << order, live);
}

static inline void *ik_linux_dma_alloc(void *ctx, ik_size size, ik_size align, ik_u64 *dma)
{
	return ik_linux_pages_alloc(ctx, size, align, dma);
}

static inline void ik_linux_dma_free(void *ctx, void *cpu, ik_u64 dma, ik_size size)
{
	(void)dma;
	ik_linux_pages_free(ctx, cpu, size);
}

static inline void ik_linux_dma_init(struct ik_dma_mem *d, atomic64_t *live)
{
	*d = (struct ik_dma_mem){ .alloc = ik_linux_dma_alloc, .free = ik_linux_dma_free,
				  .ctx = live };
}

#endif /* IK_LINUX_IO_H */
