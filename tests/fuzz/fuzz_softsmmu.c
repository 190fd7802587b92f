/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fuzz_softsmmu - the register-level SMMUv3 model
 * (include/iommukit/softsmmu.h) as a guest drives it: every register value
 * and every byte of guest memory is the input's.
 *
 * Guest memory is a 256 KiB arena at guest-physical ARENA_PHYS, filled from
 * the input, with guard bytes on both sides; phys_to_host gives a pointer
 * only for ranges wholly inside it.  The model has two ECMDQ control pages
 * of two queues each.  The input is a program of MMIO writes (register
 * offsets the model knows, random ones, values raw or pointing into the
 * arena), MMIO reads, guest writes to the arena (rings, STEs, CDs, tables),
 * device DMA by any stream at any address and length (into a buffer with
 * guards), injections, pause and poll.  Checked: nothing crashes (ASan,
 * UBSan), no guard byte changes, a DMA result is 0, -EFAULT or -EINVAL,
 * and the CONS registers always carry only their defined bits.
 */
#include <iommukit/softsmmu.h>
#include <iommukit/drv/smmuv3.h>
#include "fuzzlib.h"

#define ARENA_PHYS 0x80000000ull
#define ARENA_SIZE (256u << 10)

static uint8_t arena_buf[FZ_ARENA_BYTES(ARENA_SIZE)];
static struct fz_arena arena = { arena_buf, ARENA_SIZE, ARENA_PHYS };

static const ik_u32 regs[] = {
	0x20, 0x24, 0x28, 0x2c, 0x44, 0x50, 0x54, 0x60, 0x64, 0x80, 0x84, 0x88, 0x90, 0x94, 0x98,
	0x9c, 0xa0, 0xa4, 0x100a8, 0x100ac, 0x190, 0x4000, 0x4008, 0x400c, 0x4020,
};

static ik_u32 pick_off(struct fz *f)
{
	ik_u8 k = fz_u8(f);

	if (k < 0x80)
		return regs[k % (sizeof(regs) / sizeof(regs[0]))];
	if (k < 0xf0) /* an ECMDQ register: page, queue, BASE lo/hi, PROD, CONS */
		return IK_SOFTSMMU_CP_OFFSET + ((k >> 3) & 3) * 0x10000u + ((k >> 2) & 1) * 0x100u +
		       (k & 3) * 4u;
	return fz_u32(f);
}

static ik_u32 pick_val(struct fz *f)
{
	ik_u8 k = fz_u8(f);

	switch (k & 3) {
	case 0: /* low half of an address in the arena, with a LOG2SIZE */
		return (ik_u32)(ARENA_PHYS + (fz_u32(f) % ARENA_SIZE)) | (k >> 3);
	case 1:
		return (ik_u32)(ARENA_PHYS >> 32);
	case 2:
		return (ik_u32)fz_edgy(f);
	default:
		return fz_u32(f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ik_softiommu_config sc;
	struct ik_softsmmu_config mc;
	struct ik_softiommu *soft;
	struct ik_softsmmu *m;
	struct fz f;
	ik_u8 dbuf[FZ_ARENA_BYTES(FZ_DMA_MAX)];
	struct fz_arena dma = { dbuf, FZ_DMA_MAX, 0 };

	fz_init(&f, data, size);
	fz_arena_fill(&arena, data, size);
	fz_arena_fill(&dma, NULL, 0);
	ik_softiommu_config_init(&sc);
	sc.max_streams = 16;
	sc.phys_to_host = fz_arena_phys;
	sc.phys_ctx = &arena;
	if (ik_softiommu_create(&sc, &soft))
		return 0;
	ik_softsmmu_config_init(&mc);
	mc.soft = soft;
	mc.phys_to_host = fz_arena_phys;
	mc.phys_ctx = &arena;
	mc.max_streams = 16;
	mc.idr[1] = (mc.idr[1] & ~0x3fu) | (fz_u8(&f) % 20) | IK_SMMU_IDR1_ECMDQ; /* SIDSIZE */
	mc.idr[1] = (mc.idr[1] & ~(0x1fu << 21)) | (fz_u8(&f) % 20) << 21;	  /* CMDQS */
	mc.ecmdq_log2nump = 1;
	mc.ecmdq_log2numq = 1;
	if (ik_softsmmu_create(&mc, &m)) {
		ik_softiommu_destroy(soft);
		return 0;
	}
	for (unsigned step = 0; step < 256 && fz_left(&f); step++) {
		switch (fz_u8(&f) % 10) {
		case 0:
		case 1:
		case 2: {
			ik_u32 off = pick_off(&f), v = pick_val(&f);

			FZ_TRACE("write %#x = %#x", off, v);
			ik_softsmmu_write32(m, off, v);
			break;
		}
		case 3: {
			ik_u32 off = pick_off(&f), v = ik_softsmmu_read32(m, off);

			if (off == IK_SMMU_CMDQ_CONS)
				FZ_CHECK(!(v & 0x80f00000u), "CMDQ_CONS %#x", v);
			if (off >= IK_SOFTSMMU_CP_OFFSET && (off & 0xff) == 0xc)
				FZ_CHECK(!(v & 0x78700000u), "ECMDQ_CONS %#x", v);
			break;
		}
		case 4: /* the guest writes its memory */
			fz_arena_scribble(&arena, &f);
			break;
		case 5: {
			ik_u32 sid = (ik_u32)fz_below(&f, 24);
			struct fz_dma d = fz_dma(&f, sid);
			int r = ik_softsmmu_dma(m, sid, d.iova, fz_arena_mem(&dma), d.len, d.wr);

			FZ_CHECK_DMA(r);
			break;
		}
		case 6: {
			int q = (int)fz_below(&f, 6) - 1;
			unsigned kind = (unsigned)fz_below(&f, 8);
			int r = ik_softsmmu_inject(m, q, kind, fz_below(&f, 40), (unsigned)fz_below(&f, 4));

			FZ_CHECK(r == 0 || r == -EINVAL || r == -EBUSY, "inject returned %d", r);
			break;
		}
		case 7:
			(void)ik_softsmmu_pause(m, fz_bool(&f));
			break;
		case 8:
			FZ_CHECK(ik_softsmmu_poll(m) >= 0, "poll");
			break;
		default: {
			struct ik_softsmmu_stats st;

			FZ_CHECK(ik_softsmmu_get_stats(m, &st) == 0, "stats");
			break;
		}
		}
	}
	fz_arena_check(&arena, "arena");
	fz_arena_check(&dma, "dma");
	ik_softsmmu_destroy(m);
	ik_softiommu_destroy(soft);
	return 0;
}
