/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A driver for QEMU's educational PCI device, edu (QEMU docs/specs/edu.txt),
 * as the DMA master of the hardware-in-the-loop harness (hil.h).
 *
 * What matters about edu's DMA engine (edu.txt, and QEMU 7.2 hw/misc/edu.c):
 *   - one transfer at a time between a bus address and the 4 KiB edu buffer
 *     at device address 0x40000: source, destination, count, then the
 *     command register (bit 0 start, bit 1 direction edu -> RAM);
 *   - the edu-buffer side must lie inside the buffer and must not end at its
 *     last byte (QEMU aborts the whole machine with "EDU: DMA range ... out
 *     of bounds" otherwise), so this driver refuses such a transfer;
 *   - bus addresses are masked with the device's dma_mask property, 28 bits
 *     by default: the harness's command lines set it to all ones;
 *   - the transfer runs 100 ms of QEMU virtual time after the command, and
 *     the start bit reads 1 until it has; register writes while it runs are
 *     ignored;
 *   - bus errors and IOMMU faults are not reported: the command completes.
 */
#include <iommukit/env.h>
#include <iommukit/atomic.h>
#include "hil.h"

ik_u32 hil_edu_read32(const struct hil_edu *e, ik_u32 off)
{
	ik_u32 v = *(volatile ik_u32 *)(e->bar0 + off);

	ik_dma_rmb();
	return v;
}

void hil_edu_write32(const struct hil_edu *e, ik_u32 off, ik_u32 val)
{
	ik_dma_wmb();
	*(volatile ik_u32 *)(e->bar0 + off) = val;
}

ik_u64 hil_edu_read64(const struct hil_edu *e, ik_u32 off)
{
	ik_u64 v = *(volatile ik_u64 *)(e->bar0 + off);

	ik_dma_rmb();
	return v;
}

void hil_edu_write64(const struct hil_edu *e, ik_u32 off, ik_u64 val)
{
	/* The write barrier also orders the CPU's stores to the DMA buffer
	 * before the command that makes edu read it. */
	ik_dma_wmb();
	*(volatile ik_u64 *)(e->bar0 + off) = val;
}

ik_u32 hil_edu_liveness(const struct hil_edu *e, ik_u32 v)
{
	hil_edu_write32(e, HIL_EDU_LIVENESS, v);
	return hil_edu_read32(e, HIL_EDU_LIVENESS);
}

static bool dma_idle(void *arg)
{
	return !(hil_edu_read64((const struct hil_edu *)arg, HIL_EDU_DMA_CMD) & HIL_EDU_CMD_START);
}

static int dma(const struct hil_edu *e, ik_u64 src, ik_u64 dst, ik_u32 len, ik_u64 cmd,
	       ik_u64 timeout_ns)
{
	if (!dma_idle((void *)(ik_uptr)e))
		return -EBUSY;
	hil_edu_write64(e, HIL_EDU_DMA_SRC, src);
	hil_edu_write64(e, HIL_EDU_DMA_DST, dst);
	hil_edu_write64(e, HIL_EDU_DMA_CNT, len);
	hil_edu_write64(e, HIL_EDU_DMA_CMD, cmd | HIL_EDU_CMD_START);
	return hil_wait(dma_idle, (void *)(ik_uptr)e, timeout_ns);
}

/* The edu-buffer side: len > 0 and off + len < 4096, without overflow. */
static bool range_ok(ik_u64 bus, ik_u32 off, ik_u32 len)
{
	return len && off < HIL_EDU_BUF_SIZE && len < HIL_EDU_BUF_SIZE - off &&
	       bus <= IK_U64_MAX - len;
}

int hil_edu_dma_from_ram(const struct hil_edu *e, ik_u64 bus, ik_u32 off, ik_u32 len,
			 ik_u64 timeout_ns)
{
	if (!range_ok(bus, off, len))
		return -EINVAL;
	return dma(e, bus, HIL_EDU_BUF + off, len, 0, timeout_ns);
}

int hil_edu_dma_to_ram(const struct hil_edu *e, ik_u32 off, ik_u64 bus, ik_u32 len,
		       ik_u64 timeout_ns)
{
	if (!range_ok(bus, off, len))
		return -EINVAL;
	return dma(e, HIL_EDU_BUF + off, bus, len, HIL_EDU_CMD_TO_RAM, timeout_ns);
}

bool hil_edu_round_trip(const struct hil_edu *e, ik_u8 *page, ik_u64 iova, ik_u32 seed,
			ik_u64 timeout_ns, unsigned *dmas)
{
	hil_fill(page, 4096, seed);
	++*dmas;
	if (hil_edu_dma_from_ram(e, iova, 0, 2048, timeout_ns))
		return false;
	++*dmas;
	if (hil_edu_dma_to_ram(e, 0, iova + 2048, 2048, timeout_ns))
		return false;
	return hil_memdiff(page, page + 2048, 2048) == 2048;
}

int hil_bufs_alloc(struct hil_bufs *bs, const struct ik_dma_mem *dma, ik_size size, ik_u8 **cpu,
		   ik_u64 *bus)
{
	void *p = NULL;
	ik_u64 b = 0;
	int err;

	if (bs->n >= HIL_BUFS_MAX)
		return -ENOSPC;
	err = ik_dma_alloc(dma, size, 4096, &p, &b);
	if (err)
		return err;
	bs->b[bs->n].cpu = p;
	bs->b[bs->n].bus = b;
	bs->b[bs->n].size = size;
	bs->n++;
	*cpu = (ik_u8 *)p;
	*bus = b;
	return 0;
}

void hil_bufs_free(struct hil_bufs *bs, const struct ik_dma_mem *dma)
{
	while (bs->n) {
		bs->n--;
		ik_dma_free(dma, bs->b[bs->n].cpu, bs->b[bs->n].bus, bs->b[bs->n].size);
	}
}
