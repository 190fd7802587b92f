/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The baseline checks of the hardware-in-the-loop harness (hil.h): they need
 * no IOMMU driver, and prove the harness itself - PCI, the edu driver, DMA
 * with the IOMMU off, the "did the DMA reach memory" test, the clock - and
 * that the IOMMU's identification registers read back plausibly.
 *
 * Register layouts are written here from the specifications, independently
 * of the library's encoders:
 *   SMMUv3 (Arm IHI 0070, "Registers"): IDR0 0x00, IDR1 0x04, IDR2 0x08,
 *     IDR3 0x0c, IDR4 0x10, IDR5 0x14, IIDR 0x18, AIDR 0x1c, CR0 0x20,
 *     CR0ACK 0x24, GBPA 0x44;
 *   VT-d (Intel VT-d specification, "Register Descriptions"): VER_REG 0x00,
 *     CAP_REG 0x08, ECAP_REG 0x10, GSTS_REG 0x1c.
 */
#include <iommukit/env.h>
#include <iommukit/drv/io.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/drv/amd.h>
#include <iommukit/drv/riscv.h>
#include "hil.h"

/* ---------------------------------------------------------------- PCI, edu */

static void pci_finds_edu(struct hil *h, const void *arg)
{
	const struct hil_pci_dev *d = &h->edu.pci;
	ik_u16 cmd;

	(void)arg;
	HIL_CHECK(h, h->have_edu);
	HIL_CHECK_EQ(h, hil_pci_read16(d, 0x00), HIL_EDU_VENDOR);
	HIL_CHECK_EQ(h, hil_pci_read16(d, 0x02), HIL_EDU_DEVICE);
	HIL_CHECK_EQ(h, h->rid, (ik_u32)d->bus << 8 | (ik_u32)d->dev << 3 | d->fn);
	cmd = hil_pci_read16(d, 0x04);
	HIL_CHECK(h, cmd & 0x2);	/* Memory Space Enable */
	HIL_CHECK(h, cmd & 0x4);	/* Bus Master Enable */
	/* BAR0 holds the address the harness uses, and edu.txt's 1 MB. */
	HIL_CHECK_EQ(h, hil_pci_read32(d, 0x10) & 0xfffffff0u, (ik_u32)h->edu.bar0_addr);
	HIL_CHECK(h, h->edu.bar0_addr != 0);
}

static void edu_id_register(struct hil *h, const void *arg)
{
	ik_u32 id = hil_edu_read32(&h->edu, HIL_EDU_ID);

	(void)arg;
	hil_diag("edu identification %#010x: version %u.%u", id, id >> 24, id >> 16 & 0xff);
	HIL_CHECK_EQ(h, id & 0xffff, 0x00ed);	/* edu.txt: 0xRRrr00ed */
	HIL_CHECK(h, id >> 16 != 0);		/* a version at all */
}

static void edu_liveness(struct hil *h, const void *arg)
{
	static const ik_u32 v[] = { 0, 0xffffffffu, 0x12345678u, 0xa5a5a5a5u, 0x80000001u };
	unsigned i;

	(void)arg;
	for (i = 0; i < IK_ARRAY_SIZE(v); i++)
		HIL_CHECK_EQ(h, hil_edu_liveness(&h->edu, v[i]), ~v[i]);
	HIL_CHECK_EQ(h, hil_edu_liveness(&h->edu, h->rid), ~(ik_u32)h->rid);
}

/* Transfers edu cannot do are refused before a register is written. */
static void edu_refuses_bad_transfers(struct hil *h, const void *arg)
{
	static const struct {
		ik_u64 bus;
		ik_u32 off, len;
	} bad[] = {
		{ 0x1000, 0, 0 },			/* empty */
		{ 0x1000, 0, HIL_EDU_BUF_SIZE },	/* ends at the buffer's end */
		{ 0x1000, 1, HIL_EDU_BUF_SIZE - 1 },	/* so does this */
		{ 0x1000, HIL_EDU_BUF_SIZE - 1, 1 },	/* and this */
		{ 0x1000, HIL_EDU_BUF_SIZE, 1 },	/* starts past it */
		{ 0x1000, 0xffffffffu, 2 },		/* off + len wraps 2^32 */
		{ 0x1000, 2, 0xffffffffu },		/* so does this */
		{ ~(ik_u64)0 - 2, 0, 4 },		/* bus + len wraps 2^64 */
	};
	const struct hil_edu *e = &h->edu;
	ik_u64 src, dst, cnt, cmd;
	unsigned i;

	(void)arg;
	src = hil_edu_read64(e, HIL_EDU_DMA_SRC);
	dst = hil_edu_read64(e, HIL_EDU_DMA_DST);
	cnt = hil_edu_read64(e, HIL_EDU_DMA_CNT);
	cmd = hil_edu_read64(e, HIL_EDU_DMA_CMD);
	for (i = 0; i < IK_ARRAY_SIZE(bad); i++) {
		HIL_CHECK_EQ(h, hil_edu_dma_from_ram(e, bad[i].bus, bad[i].off, bad[i].len,
						     h->timeout_ns), -EINVAL);
		HIL_CHECK_EQ(h, hil_edu_dma_to_ram(e, bad[i].off, bad[i].bus, bad[i].len,
						   h->timeout_ns), -EINVAL);
	}
	HIL_CHECK_EQ(h, hil_edu_read64(e, HIL_EDU_DMA_SRC), src);
	HIL_CHECK_EQ(h, hil_edu_read64(e, HIL_EDU_DMA_DST), dst);
	HIL_CHECK_EQ(h, hil_edu_read64(e, HIL_EDU_DMA_CNT), cnt);
	HIL_CHECK_EQ(h, hil_edu_read64(e, HIL_EDU_DMA_CMD), cmd);
}

/* ---------------------------------------------------------------- DMA */

#define BUF_SIZE 8192u		/* two pages: transfers may cross a page boundary */
#define SEED_DATA 0x5eed0001u
#define SEED_POISON 0xdead0002u
#define SEED_OLD 0x01d00003u

struct round_trip {
	ik_u32 len;		/* bytes */
	ik_u32 edu_off;		/* offset in the edu buffer */
	ik_u32 ram_off;		/* offset in the two-page RAM buffers */
};

static const struct round_trip rt_1 = { 1, 0, 0 };
static const struct round_trip rt_8 = { 8, 8, 3 };
static const struct round_trip rt_100 = { 100, 0x100, 0x7 };	/* edu.txt's example */
static const struct round_trip rt_max = { HIL_EDU_DMA_MAX, 0, 0 };
static const struct round_trip rt_tail = { 2048, HIL_EDU_DMA_MAX - 2048, 0x801 };
static const struct round_trip rt_cross = { 3000, 0x10, 0xc00 };	/* spans two pages */

static ik_u8 expect[BUF_SIZE];

/* RAM -> edu -> RAM: the destination gets exactly the source bytes, nothing
 * around them changes, the source is unchanged. */
static void edu_dma_round_trip(struct hil *h, const void *arg)
{
	const struct round_trip *t = (const struct round_trip *)arg;
	ik_u8 *src = NULL, *dst = NULL;
	ik_u64 src_bus = 0, dst_bus = 0;
	ik_size i;
	int err;

	HIL_CHECK(h, t->ram_off + t->len <= BUF_SIZE);
	HIL_CHECK_EQ_GOTO(h, ik_dma_alloc(&h->dma, BUF_SIZE, 4096, (void **)&src, &src_bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_dma_alloc(&h->dma, BUF_SIZE, 4096, (void **)&dst, &dst_bus), 0, out);
	hil_fill(src, BUF_SIZE, SEED_DATA);
	hil_fill(dst, BUF_SIZE, SEED_POISON);
	ik_dma_clean(&h->dma, src, src_bus, BUF_SIZE);
	ik_dma_clean(&h->dma, dst, dst_bus, BUF_SIZE);
	for (i = 0; i < BUF_SIZE; i++)
		expect[i] = dst[i];
	for (i = 0; i < t->len; i++)
		expect[t->ram_off + i] = src[t->ram_off + i];

	err = hil_edu_dma_from_ram(&h->edu, src_bus + t->ram_off, t->edu_off, t->len, h->timeout_ns);
	HIL_CHECK_EQ_GOTO(h, err, 0, out);
	err = hil_edu_dma_to_ram(&h->edu, t->edu_off, dst_bus + t->ram_off, t->len, h->timeout_ns);
	HIL_CHECK_EQ_GOTO(h, err, 0, out);
	i = hil_memdiff(dst, expect, BUF_SIZE);
	if (i != BUF_SIZE)
		hil_diag("first wrong byte at %zu: %#x, want %#x (%s; edu masks bus addresses "
			 "with its dma_mask property: is it 0xffffffffffffffff?)", i, dst[i],
			 expect[i], i >= t->ram_off && i < t->ram_off + t->len
			 ? "inside the transfer" : "outside the transfer");
	HIL_CHECK_EQ_GOTO(h, i, BUF_SIZE, out);
	HIL_CHECK_EQ_GOTO(h, hil_verify(src, BUF_SIZE, SEED_DATA), BUF_SIZE, out);
out:
	ik_dma_free(&h->dma, src, src_bus, BUF_SIZE);
	ik_dma_free(&h->dma, dst, dst_bus, BUF_SIZE);
}

/* Load the first `len` bytes of the edu buffer with pattern `seed`. */
static int edu_load(struct hil *h, ik_u8 *buf, ik_u64 bus, ik_u32 len, ik_u32 seed)
{
	hil_fill(buf, len, seed);
	ik_dma_clean(&h->dma, buf, bus, len);
	return hil_edu_dma_from_ram(&h->edu, bus, 0, len, h->timeout_ns);
}

/* With Bus Master Enable clear, edu's write to RAM completes and RAM keeps
 * what it had (the harness's "did not reach memory" test, proven on a DMA
 * that certainly goes nowhere); the same transfer with it set does arrive. */
static void edu_write_without_bus_master(struct hil *h, const void *arg)
{
	const ik_u32 len = 1024;
	ik_u8 *buf = NULL;
	ik_u64 bus = 0;
	bool was = true;

	(void)arg;
	HIL_CHECK_EQ_GOTO(h, ik_dma_alloc(&h->dma, 4096, 4096, (void **)&buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, edu_load(h, buf, bus, len, SEED_DATA), 0, out);
	hil_fill(buf, len, SEED_POISON);
	was = hil_pci_set_master(&h->edu.pci, false);
	HIL_CHECK_EQ_GOTO(h, hil_edu_dma_to_ram(&h->edu, 0, bus, len, h->timeout_ns), 0, out);
	HIL_CHECK_EQ_GOTO(h, hil_verify(buf, len, SEED_POISON), len, out);	/* untouched */
	hil_pci_set_master(&h->edu.pci, true);
	HIL_CHECK_EQ_GOTO(h, hil_edu_dma_to_ram(&h->edu, 0, bus, len, h->timeout_ns), 0, out);
	HIL_CHECK_EQ_GOTO(h, hil_verify(buf, len, SEED_DATA), len, out);	/* arrived */
out:
	hil_pci_set_master(&h->edu.pci, was);
	ik_dma_free(&h->dma, buf, bus, 4096);
}

/* With Bus Master Enable clear, edu's read of RAM completes and fills its
 * buffer with zeros (QEMU: a read that reaches no memory returns 0): what a
 * check that provokes an IOMMU read fault will see in edu. */
static void edu_read_without_bus_master(struct hil *h, const void *arg)
{
	const ik_u32 len = 1024;
	ik_u8 *buf = NULL;
	ik_u64 bus = 0;
	bool was = true;
	ik_u32 i;

	(void)arg;
	HIL_CHECK_EQ_GOTO(h, ik_dma_alloc(&h->dma, 4096, 4096, (void **)&buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, edu_load(h, buf, bus, len, SEED_OLD), 0, out);
	hil_fill(buf, len, SEED_DATA);
	was = hil_pci_set_master(&h->edu.pci, false);
	HIL_CHECK_EQ_GOTO(h, hil_edu_dma_from_ram(&h->edu, bus, 0, len, h->timeout_ns), 0, out);
	hil_pci_set_master(&h->edu.pci, true);
	hil_fill(buf, len, SEED_POISON);
	HIL_CHECK_EQ_GOTO(h, hil_edu_dma_to_ram(&h->edu, 0, bus, len, h->timeout_ns), 0, out);
	for (i = 0; i < len && !buf[i]; i++)
		;
	if (i < len)
		hil_diag("edu buffer byte %u after the failed read: %#x (old pattern %s)", i, buf[i],
			 hil_verify(buf, len, SEED_OLD) == len ? "kept" : "not kept");
	HIL_CHECK_EQ_GOTO(h, i, len, out);
out:
	hil_pci_set_master(&h->edu.pci, was);
	ik_dma_free(&h->dma, buf, bus, 4096);
}

/* IK_ENV_TIME_NS never goes back, and moves across a DMA (which takes 100 ms
 * of QEMU virtual time): printed, not asserted - no timing assertions. */
static void clock_is_monotonic(struct hil *h, const void *arg)
{
	ik_u64 t0, t1, prev, now;
	ik_u8 *buf = NULL;
	ik_u64 bus = 0;
	unsigned i;

	(void)arg;
	prev = IK_ENV_TIME_NS();
	for (i = 0; i < 10000; i++) {
		now = IK_ENV_TIME_NS();
		HIL_CHECK(h, now >= prev);
		prev = now;
	}
	HIL_CHECK_EQ_GOTO(h, ik_dma_alloc(&h->dma, 4096, 4096, (void **)&buf, &bus), 0, out);
	t0 = IK_ENV_TIME_NS();
	HIL_CHECK_EQ_GOTO(h, hil_edu_dma_from_ram(&h->edu, bus, 0, 64, h->timeout_ns), 0, out);
	t1 = IK_ENV_TIME_NS();
	HIL_CHECK_GOTO(h, t1 > t0, out);
	hil_diag("one edu DMA took %llu us by IK_ENV_TIME_NS (QEMU: 100 ms virtual time)",
		 (unsigned long long)((t1 - t0) / 1000));
out:
	ik_dma_free(&h->dma, buf, bus, 4096);
}

/* ---------------------------------------------------------------- IOMMU */

#define SMMU_IDR0 0x00
#define SMMU_IDR1 0x04
#define SMMU_IDR2 0x08
#define SMMU_IDR3 0x0c
#define SMMU_IDR4 0x10
#define SMMU_IDR5 0x14
#define SMMU_IIDR 0x18
#define SMMU_AIDR 0x1c
#define SMMU_CR0 0x20
#define SMMU_CR0ACK 0x24
#define SMMU_GBPA 0x44

#define VTD_VER 0x00
#define VTD_CAP 0x08
#define VTD_ECAP 0x10
#define VTD_GSTS 0x1c

static ik_u32 field(ik_u64 v, unsigned lo, unsigned width)
{
	return (ik_u32)(v >> lo & (((ik_u64)1 << width) - 1));
}

static void smmuv3_id(struct hil *h)
{
	const struct ik_mmio *m = &h->iommu;
	ik_u32 idr[6], aidr, iidr, ttf, oas, sidsize;
	static const unsigned oas_bits[8] = { 32, 36, 40, 42, 44, 48, 52, 0 };
	unsigned i;

	for (i = 0; i < 6; i++)
		idr[i] = ik_mmio_read32(m, SMMU_IDR0 + 4 * i);
	iidr = ik_mmio_read32(m, SMMU_IIDR);
	aidr = ik_mmio_read32(m, SMMU_AIDR);
	hil_diag("SMMU_IDR0 %#010x IDR1 %#010x IDR2 %#010x IDR3 %#010x IDR4 %#010x IDR5 %#010x",
		 idr[0], idr[1], idr[2], idr[3], idr[4], idr[5]);
	hil_diag("SMMU_IIDR %#010x AIDR %#010x: SMMUv%u.%u", iidr, aidr, field(aidr, 4, 4) + 3,
		 field(aidr, 0, 4));
	ttf = field(idr[0], 2, 2);
	sidsize = field(idr[1], 0, 6);
	oas = field(idr[5], 0, 3);
	hil_diag("  IDR0: S1P %u S2P %u TTF %u COHACC %u ASID16 %u ST_LEVEL %u; IDR1: SIDSIZE %u "
		 "CMDQS %u EVENTQS %u; IDR3: RIL %u; IDR5: OAS %u bits, granules%s%s%s",
		 field(idr[0], 1, 1), field(idr[0], 0, 1), ttf, field(idr[0], 4, 1),
		 field(idr[0], 12, 1), field(idr[0], 27, 2), sidsize, field(idr[1], 21, 5),
		 field(idr[1], 16, 5), field(idr[3], 10, 1), oas_bits[oas],
		 field(idr[5], 4, 1) ? " 4K" : "", field(idr[5], 5, 1) ? " 16K" : "",
		 field(idr[5], 6, 1) ? " 64K" : "");
	HIL_CHECK_EQ(h, field(aidr, 4, 4), 0);		/* ArchMajorRev 0: SMMUv3 */
	HIL_CHECK(h, idr[0] & 0x3);			/* S1P or S2P */
	HIL_CHECK(h, ttf & 0x2);			/* AArch64 translation tables */
	HIL_CHECK(h, sidsize >= 1 && sidsize <= 32);
	HIL_CHECK(h, sidsize >= 16 || h->rid >> sidsize == 0);	/* edu's StreamID fits */
	HIL_CHECK(h, oas != 7);				/* 7 is reserved */
	HIL_CHECK(h, field(idr[5], 4, 3) != 0);		/* some granule */
	HIL_CHECK(h, field(idr[1], 21, 5) >= 1);	/* CMDQS: a command queue */
}

static void vtd_id(struct hil *h)
{
	const struct ik_mmio *m = &h->iommu;
	ik_u32 ver = ik_mmio_read32(m, VTD_VER);
	ik_u64 cap = ik_mmio_read64(m, VTD_CAP), ecap = ik_mmio_read64(m, VTD_ECAP);
	ik_u32 sagaw = field(cap, 8, 5), mgaw = field(cap, 16, 6) + 1;
	ik_u64 aw = hil_cmdline_u64(h, "hil.aw-bits", 0);

	hil_diag("VT-d VER_REG %#x (%u.%u) CAP_REG %#018llx ECAP_REG %#018llx", ver,
		 field(ver, 4, 4), field(ver, 0, 4), (unsigned long long)cap,
		 (unsigned long long)ecap);
	hil_diag("  CAP: ND %u CM %u SAGAW %#x MGAW %u ZLR %u FRO %#x SLLPS %#x PSI %u NFR %u "
		 "MAMV %u FL1GP %u FL5LP %u", field(cap, 0, 3), field(cap, 7, 1), sagaw, mgaw,
		 field(cap, 22, 1), field(cap, 24, 10) * 16, field(cap, 34, 4), field(cap, 39, 1),
		 field(cap, 40, 8) + 1, field(cap, 48, 6), field(cap, 56, 1), field(cap, 60, 1));
	hil_diag("  ECAP: C %u QI %u DT %u IR %u EIM %u PT %u SC %u IRO %#x MHMV %u SMTS %u "
		 "SLTS %u FLTS %u", field(ecap, 0, 1), field(ecap, 1, 1), field(ecap, 2, 1),
		 field(ecap, 3, 1), field(ecap, 4, 1), field(ecap, 6, 1), field(ecap, 7, 1),
		 field(ecap, 8, 10) * 16, field(ecap, 20, 4), field(ecap, 43, 1), field(ecap, 46, 1),
		 field(ecap, 47, 1));
	HIL_CHECK(h, field(ver, 4, 4) >= 1);		/* major version 1 or later */
	HIL_CHECK(h, cap != 0 && cap != IK_U64_MAX);
	HIL_CHECK(h, mgaw >= 39 && mgaw <= 64);
	/* SAGAW: bit 1 = 39-bit (3-level), bit 2 = 48-bit (4), bit 3 = 57-bit (5). */
	HIL_CHECK(h, sagaw & 0xe);
	/* The IOTLB registers (ECAP.IRO) and the fault recording registers
	 * (CAP.FRO, CAP.NFR) lie inside the 4 KiB register page. */
	HIL_CHECK(h, field(ecap, 8, 10) * 16 + 16 <= 4096);
	HIL_CHECK(h, (field(cap, 24, 10) + field(cap, 40, 8) + 1) * 16 <= 4096);
	if (aw) {
		hil_diag("  expected aw-bits %llu (hil.aw-bits on the command line)",
			 (unsigned long long)aw);
		HIL_CHECK_EQ(h, mgaw, aw);
		HIL_CHECK(h, aw != 39 || (sagaw & 0x2));
		HIL_CHECK(h, aw != 48 || (sagaw & 0x4));
		HIL_CHECK(h, aw != 57 || (sagaw & 0x8));
	}
}

/* AMD: the Extended Feature Register, decoded by the library. */
static void amd_id(struct hil *h)
{
	struct ik_amd_hwcaps c;
	ik_u64 efr = ik_mmio_read64(&h->iommu, IK_AMD_REG_EFR);

	HIL_CHECK_EQ(h, ik_amd_hwcaps_decode(efr, &c), 0);
	hil_diag("AMD IOMMU EFR %#018llx: PPRSup %u GTSup %u IASup %u GASup %u HESup %u PCSup %u "
		 "HATS %u (%u levels) GATS %u GLXSup %u PASmax %u", (unsigned long long)efr, c.ppr,
		 c.gt, c.ia, c.ga, c.he, c.pc, c.hats, c.host_levels, c.gats, c.glx_sup, c.pasmax);
	HIL_CHECK(h, efr != 0 && efr != IK_U64_MAX);
	HIL_CHECK(h, c.host_levels >= 4);	/* Mode 4 tables at least */
}

/* RISC-V: the capabilities register, decoded by the library. */
static void riscv_id(struct hil *h)
{
	struct ik_riscv_caps c;
	ik_u64 caps = ik_mmio_read64(&h->iommu, IK_RISCV_REG_CAPS);

	hil_diag("RISC-V IOMMU capabilities %#018llx fctl %#x", (unsigned long long)caps,
		 ik_mmio_read32(&h->iommu, IK_RISCV_REG_FCTL));
	HIL_CHECK_EQ(h, ik_riscv_caps_decode(caps, &c), 0);
	hil_diag("  version %u.%u PAS %u IGS %u Sv39 %u Sv48 %u Sv57 %u Sv39x4 %u Sv48x4 %u "
		 "Sv57x4 %u MSI_FLAT %u AMO_HWAD %u ATS %u T2GPA %u PD8 %u PD17 %u PD20 %u",
		 c.version >> 4, c.version & 15, c.pas, c.igs, c.sv39, c.sv48, c.sv57, c.sv39x4,
		 c.sv48x4, c.sv57x4, c.msi_flat, c.amo_hwad, c.ats, c.t2gpa, c.pd8, c.pd17, c.pd20);
	HIL_CHECK_EQ(h, c.version >> 4, 1);		/* v1.x */
	HIL_CHECK(h, c.sv39 || c.sv48 || c.sv57);	/* some first stage */
	HIL_CHECK(h, c.pas >= 32);
}

static void iommu_id_registers(struct hil *h, const void *arg)
{
	(void)arg;
	if (h->iommu_kind == HIL_IOMMU_SMMUV3)
		smmuv3_id(h);
	else if (h->iommu_kind == HIL_IOMMU_AMD)
		amd_id(h);
	else if (h->iommu_kind == HIL_IOMMU_RISCV)
		riscv_id(h);
	else
		vtd_id(h);
}

/* The baseline DMA is untranslated: the IOMMU is off at boot. */
static void iommu_off_at_boot(struct hil *h, const void *arg)
{
	const struct ik_mmio *m = &h->iommu;

	(void)arg;
	if (h->iommu_kind == HIL_IOMMU_SMMUV3) {
		ik_u32 gbpa = ik_mmio_read32(m, SMMU_GBPA);

		hil_diag("SMMU_CR0 %#x CR0ACK %#x GBPA %#x", ik_mmio_read32(m, SMMU_CR0),
			 ik_mmio_read32(m, SMMU_CR0ACK), gbpa);
		HIL_CHECK_EQ(h, ik_mmio_read32(m, SMMU_CR0) & 1, 0);	/* SMMUEN */
		HIL_CHECK_EQ(h, ik_mmio_read32(m, SMMU_CR0ACK) & 1, 0);
		HIL_CHECK_EQ(h, gbpa >> 20 & 1, 0);	/* GBPA.ABORT 0: bypass */
	} else if (h->iommu_kind == HIL_IOMMU_AMD) {
		ik_u64 ctrl = ik_mmio_read64(m, IK_AMD_REG_CONTROL);

		hil_diag("AMD IOMMU Control %#llx Status %#x", (unsigned long long)ctrl,
			 ik_mmio_read32(m, IK_AMD_REG_STATUS));
		HIL_CHECK_EQ(h, ctrl & IK_AMD_CTRL_IOMMU_EN, 0);
	} else if (h->iommu_kind == HIL_IOMMU_RISCV) {
		/* QEMU's reset value is MODE Off (no DMA at all); the board
		 * switched it to Bare (board_qemu_riscv_virt.c). */
		ik_u64 ddtp = ik_mmio_read64(m, IK_RISCV_REG_DDTP);

		hil_diag("RISC-V IOMMU ddtp %#llx cqcsr %#x fqcsr %#x", (unsigned long long)ddtp,
			 ik_mmio_read32(m, IK_RISCV_REG_CQCSR), ik_mmio_read32(m, IK_RISCV_REG_FQCSR));
		HIL_CHECK_EQ(h, ddtp, IK_RISCV_DDTP_MODE_BARE);
		HIL_CHECK_EQ(h, ik_mmio_read32(m, IK_RISCV_REG_CQCSR) & IK_RISCV_QCSR_ON, 0);
	} else {
		ik_u32 gsts = ik_mmio_read32(m, VTD_GSTS);

		hil_diag("VT-d GSTS_REG %#010x", gsts);
		HIL_CHECK_EQ(h, gsts >> 31, 0);		/* TES */
	}
}

/* The fixed register base the board uses is where the firmware's own
 * description of the machine puts the IOMMU (ACPI DMAR on q35, the device
 * tree QEMU passes on virt). */
static void iommu_base_from_firmware(struct hil *h, const void *arg)
{
	(void)arg;
	if (!h->iommu_base_fw)
		HIL_SKIP(h, "the firmware description was not found");
	hil_diag("%s: IOMMU registers at %#llx", h->iommu_base_fw_src,
		 (unsigned long long)h->iommu_base_fw);
	HIL_CHECK_EQ(h, h->iommu_base_fw, h->iommu_base);
}

#if defined(__x86_64__)
/* The library's VT-d config accepts the unit's CAP/ECAP and draws the
 * spec's conclusions from them: coherent walks iff ECAP.C (bit 0). */
static void vtd_caps_accepted(struct hil *h, const void *arg)
{
	struct ik_pgtable_cfg cfg;
	struct ik_vtd_caps caps;
	ik_u64 cap, ecap;
	ik_u32 mgaw, ias;
	int err;

	(void)arg;
	if (h->iommu_kind == HIL_IOMMU_AMD)
		HIL_SKIP(h, "the machine's IOMMU is an AMD IOMMU");
	HIL_CHECK(h, h->iommu_kind == HIL_IOMMU_VTD);
	cap = ik_mmio_read64(&h->iommu, VTD_CAP);
	ecap = ik_mmio_read64(&h->iommu, VTD_ECAP);
	mgaw = field(cap, 16, 6) + 1;
	ias = mgaw >= 48 && (field(cap, 8, 5) & 0x4) ? 48 : 39;
	IK_ENV_MEMSET(&caps, 0, sizeof(caps));
	caps.cap = cap;
	caps.ecap = ecap;
	caps.haw = mgaw < 52 ? mgaw : 52;
	err = ik_vtd_cfg_init(&cfg, IK_PT_VTD_SL, &caps, ias, 0);
	hil_diag("ik_vtd_cfg_init(second-level, ias %u, haw %u): %s; coherent %u pgsizes %#llx",
		 ias, caps.haw, ik_strerror(err), err ? 0 : cfg.coherent,
		 err ? 0ull : (unsigned long long)cfg.pgsize_bitmap);
	HIL_CHECK_EQ(h, err, 0);
	HIL_CHECK_EQ(h, cfg.coherent, (ecap & 1) != 0);
	HIL_CHECK(h, cfg.pgsize_bitmap & 0x1000);	/* 4 KiB pages always */
}
#endif

static const struct hil_check checks[] = {
	{ "pci_finds_edu_and_enables_memory_and_bus_mastering", pci_finds_edu, NULL, 0 },
	{ "edu_identification_register_reads_0xRRrr00ed", edu_id_register, NULL, HIL_NEEDS_EDU },
	{ "edu_liveness_register_reads_back_the_inverse", edu_liveness, NULL, HIL_NEEDS_EDU },
	{ "edu_refuses_transfers_outside_its_buffer_and_writes_no_register",
	  edu_refuses_bad_transfers, NULL, HIL_NEEDS_EDU },
	{ "env_clock_is_monotonic_and_advances_across_a_dma", clock_is_monotonic, NULL,
	  HIL_NEEDS_EDU },
	{ "dma_round_trip_1_byte", edu_dma_round_trip, &rt_1, HIL_NEEDS_EDU },
	{ "dma_round_trip_8_bytes_unaligned_in_ram", edu_dma_round_trip, &rt_8, HIL_NEEDS_EDU },
	{ "dma_round_trip_100_bytes_at_edu_0x100", edu_dma_round_trip, &rt_100, HIL_NEEDS_EDU },
	{ "dma_round_trip_4095_bytes_the_largest", edu_dma_round_trip, &rt_max, HIL_NEEDS_EDU },
	{ "dma_round_trip_2048_bytes_ending_at_the_last_edu_byte_but_one", edu_dma_round_trip,
	  &rt_tail, HIL_NEEDS_EDU },
	{ "dma_round_trip_3000_bytes_across_a_ram_page_boundary", edu_dma_round_trip, &rt_cross,
	  HIL_NEEDS_EDU },
	{ "dma_write_with_bus_mastering_off_leaves_ram_untouched", edu_write_without_bus_master,
	  NULL, HIL_NEEDS_EDU },
	{ "dma_read_with_bus_mastering_off_gives_edu_zeros", edu_read_without_bus_master, NULL,
	  HIL_NEEDS_EDU },
	{ "iommu_identification_registers_are_plausible", iommu_id_registers, NULL,
	  HIL_NEEDS_IOMMU },
	{ "iommu_is_off_at_boot_so_dma_is_untranslated", iommu_off_at_boot, NULL, HIL_NEEDS_IOMMU },
	{ "iommu_register_base_is_the_one_firmware_describes", iommu_base_from_firmware, NULL,
	  HIL_NEEDS_IOMMU },
#if defined(__x86_64__)
	{ "vtd_caps_accepted_by_ik_vtd_cfg_init", vtd_caps_accepted, NULL, HIL_NEEDS_IOMMU },
#endif
};

const struct hil_suite hil_suite_base = HIL_SUITE("base", checks);
