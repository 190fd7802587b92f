/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit/drv/io.h - what an IOMMU driver core needs from the machine: its
 * registers (MMIO) and memory the IOMMU reads and writes (DMA memory).
 *
 * The driver cores (<iommukit/drv/smmuv3.h>, <iommukit/drv/vtd.h>) never
 * touch a register or allocate a table themselves: they go through the two
 * objects below, which the caller fills in.  A kernel port points them at
 * readl/writel and its DMA allocator; firmware at volatile accesses and a
 * static pool; a test or an emulator at a software model of the device,
 * which then sees every register access in program order.
 *
 * Glossary
 *   MMIO    memory-mapped I/O: the IOMMU's register file, at offsets from a
 *           base.  Accesses are 32 or 64 bits wide and naturally aligned.
 *   DMA memory  memory the IOMMU itself reads or writes (stream tables,
 *           context tables, command queues, event queues): it has a CPU
 *           address and a device (bus) address, which may differ.
 *   clean   make CPU writes to DMA memory visible to a device that does not
 *           snoop the CPU caches (write back the lines, then a barrier).
 *
 * struct ik_mmio - register accessors; ctx is passed to each.
 *   read32(ctx, off) / write32(ctx, off, val)  required.
 *   read64(ctx, off) / write64(ctx, off, val)  optional: NULL splits the
 *           access into two 32-bit ones, low word first (what the VT-d and
 *           SMMUv3 specifications allow for their 64-bit registers).
 *   Ordering the accessors must give, as Linux's readl()/writel() do: a write
 *   is ordered after every earlier store to DMA memory (a command written to
 *   a ring is visible to the device before the doorbell that publishes it),
 *   and a read is ordered before every later load from DMA memory (after
 *   reading a consumer index, the entries it covers are read afresh).
 *   ik_mmio_direct_init() gives accessors with exactly that ordering.
 *
 * struct ik_dma_mem - DMA memory; ctx is passed to each.
 *   alloc(ctx, size, align, &dma)  `size` bytes aligned to `align` (a power
 *           of two, up to the size rounded up to a power of two), returning
 *           the CPU address and storing the device address in *dma (aligned
 *           as well).  Contents need not be zeroed: the driver cores write
 *           every byte they hand to the device.  NULL on failure.
 *   free(ctx, cpu, dma, size)  frees what alloc returned.
 *   clean(ctx, cpu, dma, size) optional: NULL when the IOMMU snoops the CPU
 *           caches (coherent); otherwise called after each CPU write the
 *           device must see, before the register write that lets it look.
 *   ik_dma_mem_default() gives alloc/free from the env's allocator with the
 *   device address equal to the CPU address (identity-mapped firmware,
 *   emulators, tests) and no clean; it serves alignments up to what the
 *   allocator does (the env contract promises 4096: a larger stream table
 *   or queue needs an allocator that aligns further, as the hosted env's
 *   does).
 *
 * Synchronization: both objects are read-only once filled in; the driver
 * cores call the accessors from whatever thread calls them, so accessors and
 * allocators must be safe to call concurrently where the driver object is
 * used from several threads.
 *
 * Pointer arguments follow the rule of <iommukit/env.h> ("Conventions:
 * pointer arguments").
 */
#ifndef IOMMUKIT_DRV_IO_H
#define IOMMUKIT_DRV_IO_H

#include <iommukit/env.h>

IK_BEGIN_DECLS

/* struct ik_mmio - register accessors (the header's page, iommukit_drv_io(3), says more). */
struct ik_mmio {
	ik_u32 (*read32)(void *ctx, ik_u32 off); /* required: 32-bit register read at offset off */
	void (*write32)(void *ctx, ik_u32 off, ik_u32 val); /* required: 32-bit register write at
							       offset off */
	ik_u64 (*read64)(void *ctx, ik_u32 off);	      /* optional */
	void (*write64)(void *ctx, ik_u32 off, ik_u64 val); /* optional */
	void *ctx;	/* passed to each accessor */
};

/* struct ik_dma_mem - DMA memory (see iommukit_drv_io(3)); ik_dma_mem_default() fills one. */
struct ik_dma_mem {
	void *(*alloc)(void *ctx, ik_size size, ik_size align, ik_u64 *dma); /* size bytes
										aligned to align;
										the device
										address into
										*dma; NULL on
										failure */
	void (*free)(void *ctx, void *cpu, ik_u64 dma, ik_size size); /* free what alloc returned */
	void (*clean)(void *ctx, const void *cpu, ik_u64 dma, ik_size size); /* optional */
	void *ctx;	/* passed to each callback */
};

/*
 * ik_mmio_direct_init - accessors for registers mapped at CPU address `base`
 * (firmware with an identity map, a kernel that ioremap()ed them): volatile
 * loads and stores, a DMA write barrier before each store and a DMA read
 * barrier after each load (see "Ordering" above).  An env may supply its own
 * primitives by defining IK_ENV_MMIO_READ32(addr), IK_ENV_MMIO_WRITE32(addr,
 * val), IK_ENV_MMIO_READ64(addr) and IK_ENV_MMIO_WRITE64(addr, val) (all four
 * or none), which then carry the ordering themselves.  -EINVAL for a NULL m
 * or base (m untouched).  O(1).
 */
IK_API int ik_mmio_direct_init(struct ik_mmio *m, volatile void *base);

/* The accessors through `m`: read64/write64 fall back to two 32-bit
 * accesses, low word first, where `m` has none.  m must be filled in. */
IK_INLINE ik_u32 ik_mmio_read32(const struct ik_mmio *m, ik_u32 off)
{
	return m->read32(m->ctx, off);
}

/* 32-bit register write through m. */
IK_INLINE void ik_mmio_write32(const struct ik_mmio *m, ik_u32 off, ik_u32 val)
{
	m->write32(m->ctx, off, val);
}

/* 64-bit register read through m (two 32-bit reads, low word first, without read64). */
IK_INLINE ik_u64 ik_mmio_read64(const struct ik_mmio *m, ik_u32 off)
{
	if (m->read64)
		return m->read64(m->ctx, off);
	return (ik_u64)m->read32(m->ctx, off) | (ik_u64)m->read32(m->ctx, off + 4) << 32;
}

/* 64-bit register write through m (two 32-bit writes, low word first, without write64). */
IK_INLINE void ik_mmio_write64(const struct ik_mmio *m, ik_u32 off, ik_u64 val)
{
	if (m->write64) {
		m->write64(m->ctx, off, val);
		return;
	}
	m->write32(m->ctx, off, (ik_u32)val);
	m->write32(m->ctx, off + 4, (ik_u32)(val >> 32));
}

/* ik_dma_mem_default - see struct ik_dma_mem above: env memory, device
 * address = CPU address, coherent.  `a` selects the allocator (NULL: the
 * env's) and must outlive *d.  -EINVAL for a NULL d.  O(1). */
IK_API int ik_dma_mem_default(struct ik_dma_mem *d, const struct ik_allocator *a);

/*
 * ik_dma_alloc - allocate through `d` and zero: *cpu and *dma get the CPU and
 * device addresses.  Returns 0; -ENOMEM when d->alloc fails; -ERANGE when it
 * returned a device address not aligned to `align` (the block is freed
 * again); -EINVAL for a NULL d, cpu or dma, size 0, or an align that is not
 * a power of two.  On failure *cpu = NULL, *dma = 0.  The zeroing is the
 * CPU's: clean what the device must see once its contents are written.
 * O(size).
 */
IK_API int ik_dma_alloc(const struct ik_dma_mem *d, ik_size size, ik_size align, void **cpu,
			ik_u64 *dma);

/* Free and clean through `d`.  ik_dma_free() ignores a NULL cpu;
 * ik_dma_clean() does nothing for a coherent `d` (clean NULL). */
IK_INLINE void ik_dma_free(const struct ik_dma_mem *d, void *cpu, ik_u64 dma, ik_size size)
{
	if (cpu)
		d->free(d->ctx, cpu, dma, size);
}

/* Make [cpu, cpu + size) visible to the device (nothing for a coherent d). */
IK_INLINE void ik_dma_clean(const struct ik_dma_mem *d, const void *cpu, ik_u64 dma,
			    ik_size size)
{
	if (d->clean)
		d->clean(d->ctx, cpu, dma, size);
}

IK_END_DECLS

#endif /* IOMMUKIT_DRV_IO_H */
