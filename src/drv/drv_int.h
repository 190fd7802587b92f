/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Internal (not API): helpers the driver cores in src/drv/ share.  Defined
 * in src/drv/drv_io.c.
 */
#ifndef IK_SRC_DRV_INT_H
#define IK_SRC_DRV_INT_H

#include <iommukit/drv/io.h>
#include <iommukit/cmdq.h>

/*
 * ik_drv_dma_alloc_below - ik_dma_alloc(d, size, align, cpu, dma) for memory
 * the IOMMU addresses with `bits`-bit device addresses: the whole buffer
 * [*dma, *dma + size) must lie below 2^bits (bits >= 64: anywhere; the end
 * is computed without overflow).  Returns 0 with the buffer zeroed (not
 * cleaned); ik_dma_alloc()'s errors; -ERANGE when the buffer does not fit
 * (it is freed again).  On failure *cpu = NULL, *dma = 0.  O(size).
 */
int ik_drv_dma_alloc_below(const struct ik_dma_mem *d, ik_size size, ik_size align, unsigned bits,
			   void **cpu, ik_u64 *dma);

/*
 * ik_drv_io_ok - whether a core's config names usable registers and DMA
 * memory: mmio with read32 and write32, dma with alloc and free.  O(1).
 */
bool ik_drv_io_ok(const struct ik_mmio *mmio, const struct ik_dma_mem *dma);

/*
 * ik_drv_zalloc - a unit's state: `size` zeroed bytes aligned to a cache
 * line from `a` (NULL: the env's allocator), or NULL.  O(size).
 */
void *ik_drv_zalloc(const struct ik_allocator *a, ik_size size);

/*
 * ik_drv_poll_step - the wait of a bounded poll loop, called each time the
 * polled condition is still false.  *deadline starts at 0: the first call
 * sets it to now + timeout_ns; the first call after it has passed returns 0
 * without a pause, so the caller reads the condition once more (a poller
 * preempted past its deadline does not report a timeout for a condition that
 * came true meanwhile), and the call after that returns -ETIMEDOUT;
 * otherwise it pauses (ik_cpu_relax) and returns 0.  O(1); reads
 * IK_ENV_TIME_NS at most once.
 */
int ik_drv_poll_step(ik_u64 *deadline, ik_u64 timeout_ns);

/*
 * ik_drv_queue_cfg - *qc zeroed, then set for a driver core's command ring:
 * 2^log2 entries of `fmt` at ring / ring_dma, register hooks `regs` on
 * regs_ctx, completion by the consumer's own writes (IK_CMDQ_CFG_NO_WRAP |
 * IK_CMDQ_CFG_MSI), waits bounded by timeout_ns.  The caller adds what only
 * it has (status words, an allocator).  O(1).
 */
void ik_drv_queue_cfg(struct ik_cmdq_config *qc, const struct ik_cmdq_fmt *fmt, unsigned log2,
		      void *ring, ik_u64 ring_dma, const struct ik_cmdq_regs *regs, void *regs_ctx,
		      ik_u64 timeout_ns);

#endif /* IK_SRC_DRV_INT_H */
