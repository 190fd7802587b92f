/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fuzz_softvtd - the register-level VT-d model (include/iommukit/softvtd.h)
 * as a guest drives it: every register value and every byte of guest
 * memory is the input's.
 *
 * Guest memory is a 256 KiB arena at guest-physical ARENA_PHYS, filled from
 * the input, with guard bytes on both sides; phys_to_host gives a pointer
 * only for ranges wholly inside it.  The unit is legacy or scalable, with
 * or without caching mode, and has 1..16 fault records (from the input).
 * The input is a program of MMIO writes (the registers the model knows, the
 * fault-recording and IOTLB registers, random offsets; values raw or
 * pointing into the arena), MMIO reads, guest writes to the arena (queue
 * descriptors, root, context, PASID directory and PASID entries, page
 * tables; some written as plausible entries pointing into the arena), DMA
 * by any source id at any address and length (into a buffer with guards)
 * and injections.  Checked: nothing crashes (ASan, UBSan), no guard byte
 * changes, a DMA result is 0, -EFAULT or -EINVAL, IQH is always inside the
 * queue and aligned, FSTS and GSTS carry only defined bits.
 */
#include <iommukit/softvtd.h>
#include <iommukit/drv/vtd.h>
#include "fuzzlib.h"

#define ARENA_PHYS 0x80000000ull
#define ARENA_SIZE (256u << 10)

static uint8_t arena_buf[FZ_ARENA_BYTES(ARENA_SIZE)];
static struct fz_arena arena = { arena_buf, ARENA_SIZE, ARENA_PHYS };

static const ik_u32 regs[] = {
	0x18, 0x20, 0x24, 0x28, 0x2c, 0x34, 0x38, 0x3c, 0x40, 0x44, 0x80, 0x88, 0x90, 0x94, 0x9c,
	0xa0, 0xb0, 0x100, 0x104, 0x108, 0x10c, 0x220, 0x22c, 0x23c, 0x24c,
};

static ik_u32 pick_off(struct fz *f)
{
	ik_u8 k = fz_u8(f);

	if (k < 0xc0)
		return regs[k % (sizeof(regs) / sizeof(regs[0]))];
	if (k < 0xf0) /* a fault-recording register word */
		return 0x220u + (k & 0x3fu) * 4u;
	return fz_u32(f);
}

/* A 4-KiB-aligned arena page address. */
static ik_u64 arena_page(struct fz *f)
{
	return ARENA_PHYS + (ik_u64)(fz_u8(f) % (ARENA_SIZE >> 12)) * 4096u;
}

static ik_u32 pick_val(struct fz *f)
{
	ik_u8 k = fz_u8(f);

	switch (k & 7) {
	case 0: /* low half of an arena page, with low control bits (TTM, DW, QS) */
		return (ik_u32)arena_page(f) | (fz_u32(f) & 0xfffu);
	case 1:
		return (ik_u32)(ARENA_PHYS >> 32);
	case 2: /* a GCMD command: the persistent bits of GSTS with one change */
		return 1u << (23 + fz_below(f, 9));
	case 3: /* an IQT index */
		return (ik_u32)fz_below(f, 300) << 4;
	case 4:
		return (ik_u32)fz_edgy(f);
	default:
		return fz_u32(f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ik_softiommu_config sc;
	struct ik_softvtd_config mc;
	struct ik_softiommu *soft;
	struct ik_softvtd *m;
	struct fz f;
	ik_u8 dbuf[FZ_ARENA_BYTES(FZ_DMA_MAX)];
	struct fz_arena dma = { dbuf, FZ_DMA_MAX, 0 };
	ik_u8 mode;

	fz_init(&f, data, size);
	fz_arena_fill(&arena, data, size);
	fz_arena_fill(&dma, NULL, 0);
	ik_softiommu_config_init(&sc);
	sc.max_streams = 512;
	sc.phys_to_host = fz_arena_phys;
	sc.phys_ctx = &arena;
	if (ik_softiommu_create(&sc, &soft))
		return 0;
	mode = fz_u8(&f);
	ik_softvtd_config_init(&mc, mode & 3);
	mc.soft = soft;
	mc.phys_to_host = fz_arena_phys;
	mc.phys_ctx = &arena;
	mc.max_sids = 512;
	mc.cap = (mc.cap & ~(0xffull << 40)) | (ik_u64)((mode >> 2) & 15) << 40; /* NFR 1..16 */
	if (ik_softvtd_create(&mc, &m)) {
		ik_softiommu_destroy(soft);
		return 0;
	}
	for (unsigned step = 0; step < 256 && fz_left(&f); step++) {
		switch (fz_u8(&f) % 9) {
		case 0:
		case 1:
		case 2: {
			ik_u32 off = pick_off(&f), v = pick_val(&f);

			FZ_TRACE("write %#x = %#x", off, v);
			ik_softvtd_write32(m, off, v);
			break;
		}
		case 3: {
			ik_u32 off = pick_off(&f), v = ik_softvtd_read32(m, off);

			if (off == IK_VTD_REG_IQH)
				FZ_CHECK(!(v & ~0x7fff0u), "IQH %#x", v);
			if (off == IK_VTD_REG_FSTS)
				FZ_CHECK(!(v & ~0xff73u), "FSTS %#x", v);
			if (off == IK_VTD_REG_GSTS)
				FZ_CHECK(!(v & 0x7fffffu), "GSTS %#x", v);
			break;
		}
		case 4: /* the guest writes its memory */
			fz_arena_scribble(&arena, &f);
			break;
		case 5: { /* a plausible entry: P | an arena page, at an aligned slot */
			ik_u32 at = (fz_u32(&f) % (ARENA_SIZE - 8)) & ~7u;
			ik_u64 v = arena_page(&f) | (fz_u8(&f) & 0x7fu);

			memcpy(fz_arena_mem(&arena) + at, &v, 8);
			break;
		}
		case 6: {
			ik_u32 sid = (ik_u32)fz_below(&f, 520);
			struct fz_dma d = fz_dma(&f, sid);
			int r = ik_softvtd_dma(m, sid, d.iova, fz_arena_mem(&dma), d.len, d.wr);

			FZ_CHECK_DMA(r);
			break;
		}
		case 7: {
			unsigned kind = (unsigned)fz_below(&f, 5);
			int r = ik_softvtd_inject(m, kind, fz_below(&f, 8) == 0 ? fz_u32(&f) : fz_below(&f, 8),
						  (unsigned)fz_below(&f, 3));

			FZ_CHECK(r == 0 || r == -EINVAL || r == -EBUSY, "inject returned %d", r);
			break;
		}
		default: {
			struct ik_softvtd_stats st;

			FZ_CHECK(ik_softvtd_get_stats(m, &st) == 0, "stats");
			break;
		}
		}
	}
	fz_arena_check(&arena, "arena");
	fz_arena_check(&dma, "dma");
	ik_softvtd_destroy(m);
	ik_softiommu_destroy(soft);
	return 0;
}
