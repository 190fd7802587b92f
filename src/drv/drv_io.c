/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Register accessors and DMA memory for the driver cores (<iommukit/drv/io.h>),
 * and the helpers they share (drv_int.h).
 */
#include <iommukit/drv/io.h>
#include <iommukit/atomic.h>
#include "drv_int.h"

#if defined(IK_ENV_MMIO_READ32) || defined(IK_ENV_MMIO_WRITE32) || \
	defined(IK_ENV_MMIO_READ64) || defined(IK_ENV_MMIO_WRITE64)
#if !defined(IK_ENV_MMIO_READ32) || !defined(IK_ENV_MMIO_WRITE32) || \
	!defined(IK_ENV_MMIO_READ64) || !defined(IK_ENV_MMIO_WRITE64)
#error "iommukit env (mmio): define all four IK_ENV_MMIO_* accessors, or none"
#endif
#else
/* The generic accessors: a store waits for earlier DMA-memory stores
 * (ik_dma_wmb), a load is complete before later DMA-memory loads
 * (ik_dma_rmb).  Single-copy atomic where the CPU does naturally aligned
 * 32/64-bit accesses in one instruction (every target iommukit builds for). */
#define IK_ENV_MMIO_READ32(a) mmio_rd32(a)
#define IK_ENV_MMIO_WRITE32(a, v) mmio_wr32((a), (v))
#define IK_ENV_MMIO_READ64(a) mmio_rd64(a)
#define IK_ENV_MMIO_WRITE64(a, v) mmio_wr64((a), (v))

static inline ik_u32 mmio_rd32(volatile void *a)
{
	ik_u32 v = *(volatile ik_u32 *)a;

	ik_dma_rmb();
	return v;
}

static inline void mmio_wr32(volatile void *a, ik_u32 v)
{
	ik_dma_wmb();
	*(volatile ik_u32 *)a = v;
}

static inline ik_u64 mmio_rd64(volatile void *a)
{
	ik_u64 v = *(volatile ik_u64 *)a;

	ik_dma_rmb();
	return v;
}

static inline void mmio_wr64(volatile void *a, ik_u64 v)
{
	ik_dma_wmb();
	*(volatile ik_u64 *)a = v;
}
#endif

static volatile void *reg(void *ctx, ik_u32 off)
{
	return (volatile void *)((volatile ik_u8 *)ctx + off);
}

static ik_u32 direct_read32(void *ctx, ik_u32 off)
{
	return IK_ENV_MMIO_READ32(reg(ctx, off));
}

static void direct_write32(void *ctx, ik_u32 off, ik_u32 val)
{
	IK_ENV_MMIO_WRITE32(reg(ctx, off), val);
}

static ik_u64 direct_read64(void *ctx, ik_u32 off)
{
	return IK_ENV_MMIO_READ64(reg(ctx, off));
}

static void direct_write64(void *ctx, ik_u32 off, ik_u64 val)
{
	IK_ENV_MMIO_WRITE64(reg(ctx, off), val);
}

IK_API int ik_mmio_direct_init(struct ik_mmio *m, volatile void *base)
{
	if (!m || !base)
		return -EINVAL;
	m->read32 = direct_read32;
	m->write32 = direct_write32;
	m->read64 = direct_read64;
	m->write64 = direct_write64;
	m->ctx = (void *)(ik_uptr)base;
	return 0;
}

/* ---------------------------------------------------------------- DMA memory */

static void *default_alloc(void *ctx, ik_size size, ik_size align, ik_u64 *dma)
{
	void *p = ik_alloc((const struct ik_allocator *)ctx, size, align);

	*dma = (ik_u64)(ik_uptr)p;
	return p;
}

static void default_free(void *ctx, void *cpu, ik_u64 dma, ik_size size)
{
	(void)dma;
	ik_free((const struct ik_allocator *)ctx, cpu, size);
}

IK_API int ik_dma_mem_default(struct ik_dma_mem *d, const struct ik_allocator *a)
{
	if (!d)
		return -EINVAL;
	d->alloc = default_alloc;
	d->free = default_free;
	d->clean = NULL;
	d->ctx = (void *)(ik_uptr)a;
	return 0;
}

IK_API int ik_dma_alloc(const struct ik_dma_mem *d, ik_size size, ik_size align, void **cpu,
			ik_u64 *dma)
{
	void *p;
	ik_u64 a = 0;

	if (!d || !cpu || !dma || !size || !align || (align & (align - 1)))
		return -EINVAL;
	*cpu = NULL;
	*dma = 0;
	p = d->alloc(d->ctx, size, align, &a);
	if (!p)
		return -ENOMEM;
	if (a & (align - 1)) {
		d->free(d->ctx, p, a, size);
		return -ERANGE;
	}
	IK_ENV_MEMSET(p, 0, size);
	*cpu = p;
	*dma = a;
	return 0;
}

int ik_drv_dma_alloc_below(const struct ik_dma_mem *d, ik_size size, ik_size align, unsigned bits,
			   void **cpu, ik_u64 *dma)
{
	ik_u64 last;
	int err = ik_dma_alloc(d, size, align, cpu, dma);

	if (err)
		return err;
	last = *dma + (size - 1);
	if (last < *dma || (bits < 64 && (last >> bits))) {
		ik_dma_free(d, *cpu, *dma, size);
		*cpu = NULL;
		*dma = 0;
		return -ERANGE;
	}
	return 0;
}

/* ---------------------------------------------------------------- shared by the cores */

bool ik_drv_io_ok(const struct ik_mmio *mmio, const struct ik_dma_mem *dma)
{
	return mmio && mmio->read32 && mmio->write32 && dma && dma->alloc && dma->free;
}

void *ik_drv_zalloc(const struct ik_allocator *a, ik_size size)
{
	void *p = ik_alloc(a, size, IK_CACHELINE);

	if (p)
		IK_ENV_MEMSET(p, 0, size);
	return p;
}

/* *deadline once it has passed: the caller takes one more look. */
#define POLL_LAST_LOOK IK_U64_MAX

int ik_drv_poll_step(ik_u64 *deadline, ik_u64 timeout_ns)
{
	ik_u64 now;

	if (*deadline == POLL_LAST_LOOK)
		return -ETIMEDOUT;
	now = IK_ENV_TIME_NS();
	if (!*deadline) {
		*deadline = now + timeout_ns;
		if (*deadline < now || *deadline == POLL_LAST_LOOK)
			*deadline = POLL_LAST_LOOK - 1;
	} else if (now > *deadline) {
		/* A poller preempted past its deadline may have missed the
		 * condition coming true: one more read before -ETIMEDOUT. */
		*deadline = POLL_LAST_LOOK;
		return 0;
	}
	ik_cpu_relax();
	return 0;
}

void ik_drv_queue_cfg(struct ik_cmdq_config *qc, const struct ik_cmdq_fmt *fmt, unsigned log2,
		      void *ring, ik_u64 ring_dma, const struct ik_cmdq_regs *regs, void *regs_ctx,
		      ik_u64 timeout_ns)
{
	IK_ENV_MEMSET(qc, 0, sizeof(*qc));
	qc->fmt = fmt;
	qc->log2_entries = log2;
	qc->ring = ring;
	qc->ring_dma = ring_dma;
	qc->regs = regs;
	qc->regs_ctx = regs_ctx;
	qc->flags = IK_CMDQ_CFG_NO_WRAP | IK_CMDQ_CFG_MSI;
	qc->timeout_ns = timeout_ns;
}
