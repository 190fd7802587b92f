/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * drv/smmuv3: the SMMUv3 driver core (<iommukit/drv/smmuv3.h>).
 *
 * Bit positions are checked against constants written here from IHI 0070
 * (and the Arm ARM for TCR_EL1/VTCR_EL2), never taken from the encoders.
 * The device tests run against a software model of the SMMUv3 register file
 * (struct model): CR0 -> CR0ACK, GBPA.UPDATE, IRQ_CTRL -> IRQ_CTRLACK,
 * GERROR/GERRORN toggling, a command queue consumed by ik_cmdq_sw from the
 * ring at CMDQ_BASE, CMDQ_CONS.ERR kept after the acknowledgement as QEMU
 * 7.2 does, an event queue whose records the test injects, and STE/CD
 * fetches on CFGI decoded independently from the stream table in device
 * memory.  A second DMA memory model (struct ik_test_ncdma) gives the device its
 * own copy of memory that only clean updates, so a missing clean shows.
 */
#include <stdlib.h>
#include <string.h>
#include <iommukit/drv/smmuv3.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/softiommu.h>
#include "testlib.h"

#define BIT(n) (1ull << (n))
#define GENMASK(h, l) ((~0ull >> (63 - (h))) & ~((1ull << (l)) - 1))
#define FLD(v, h, l) (((v) & GENMASK(h, l)) >> (l))

/* ================================================================ ID registers (IHI 0070) */

/* A capable SMMU: S1P, S2P, TTF AArch64, COHACC, HTTU 2, ASID16, VMID16,
 * CD2L, TTENDIAN LE, STALL_MODEL 1, TERM_MODEL 1, ST_LEVEL 2-level;
 * SIDSIZE 16, SSIDSIZE 10, EVENTQS 19, CMDQS 19, ATTR_TYPES_OVR; RIL; OAS 48,
 * all granules. */
static void idr_full(uint32_t idr[6])
{
	memset(idr, 0, 6 * sizeof(*idr));
	idr[0] = 1u << 0 | 1u << 1 | 2u << 2 | 1u << 4 | 2u << 6 | 1u << 12 | 1u << 18 |
		 1u << 19 | 2u << 21 | 1u << 24 | 1u << 26 | 1u << 27;
	idr[1] = 16u << 0 | 10u << 6 | 19u << 16 | 19u << 21 | 1u << 27;
	idr[3] = 1u << 10;
	idr[5] = 5u << 0 | 1u << 4 | 1u << 5 | 1u << 6;
}

/* What QEMU 7.2 reports: stage 1 only, AArch64, COHACC, ASID16, LE,
 * STALL_MODEL 1, TERM_MODEL 1, 2-level; SIDSIZE 16, EVENTQS/CMDQS 19;
 * RIL, HAD, BBML 2; all granules; OAS 44 in QEMU, 48 here, because the
 * tables and queues of these tests live at host addresses (47 bits). */
static void idr_qemu(uint32_t idr[6])
{
	memset(idr, 0, 6 * sizeof(*idr));
	idr[0] = 1u << 1 | 2u << 2 | 1u << 4 | 1u << 12 | 2u << 21 | 1u << 24 | 1u << 26 |
		 1u << 27;
	idr[1] = 16u | 19u << 16 | 19u << 21;
	idr[3] = 1u << 10 | 1u << 2 | 2u << 11;
	idr[5] = 5u | 1u << 4 | 1u << 5 | 1u << 6;
}

static struct ik_smmu_idr decode(const uint32_t idr[6])
{
	struct ik_smmu_idr id;

	ck_assert_int_eq(ik_smmu_idr_decode(idr, 0, 0, &id), 0);
	return id;
}

/* ================================================================ page tables */

/* Table pages for an oas below the host's addresses: host memory, with
 * made-up IOMMU addresses under 2^36 (the descriptor tests only encode
 * them; walks use 48-bit table sets at host addresses), above the base
 * the cookie points to, if any. */
static uint64_t fake_next;

static void *fake_alloc_table(void *cookie, ik_size size, ik_u64 *iommu)
{
	void *p = NULL;

	if (posix_memalign(&p, size, size))
		return NULL;
	*iommu = (cookie ? *(const uint64_t *)cookie : 0) + (++fake_next << 20);
	return p;
}

static const struct ik_pgtable_hooks fake_hooks = { .alloc_table = fake_alloc_table,
						    .free_table = ik_test_table_free };

static struct ik_pgtable *mk_pt(enum ik_pt_fmt fmt, unsigned gshift, unsigned ias, unsigned oas,
				bool coherent, uint32_t quirks)
{
	struct ik_pgtable_cfg pc;
	struct ik_pgtable *pt = NULL;

	memset(&pc, 0, sizeof(pc));
	if (oas < 48)
		pc.hooks = &fake_hooks;
	pc.fmt = fmt;
	pc.ias = ias;
	pc.oas = oas;
	pc.pgsize_bitmap = gshift == 12 ? (BIT(12) | BIT(21) | BIT(30)) :
			   gshift == 14 ? (BIT(14) | BIT(25)) : (BIT(16) | BIT(29));
	pc.coherent = coherent;
	pc.quirks = quirks;
	ck_assert_int_eq(ik_pgtable_create(&pc, &pt), 0);
	return pt;
}

/* ================================================================ DMA memory models */

/* Coherent DMA memory with allocation failure injection: env memory,
 * device address = CPU address. */
struct cdma {
	struct ik_dma_mem d;
	struct ik_fault_alloc fa;
};

static void cdma_init(struct cdma *c)
{
	ik_fault_alloc_init(&c->fa);
	ck_assert_int_eq(ik_dma_mem_default(&c->d, &c->fa.a), 0);
}

/* ================================================================ the SMMUv3 model */

#define R(off) m->regs[(off) / 4]
#define MAX_LOG 512

struct model {
	uint32_t regs[0x20000 / 4];
	uint32_t idr[6];
	struct ik_cmdq_sw sw;
	bool sw_on;
	/* behaviour */
	bool stuck_cr0ack, stuck_gbpa, stuck_irqack, no_consume;
	uint8_t ill_opcode; /* the handler refuses this opcode (CERROR_ILL) */
	struct ik_softiommu *soft; /* executes what it consumes, if set */
	/* what happened */
	struct ik_smmu_cmd log[MAX_LOG];
	int nlog;
	uint32_t woff[MAX_LOG], wval[MAX_LOG];
	int nw;
	uint64_t fetched[64][8]; /* STE as the model read it at each CFGI_STE */
	uint32_t fetched_sid[64];
	int nfetched;
	long acks; /* CMDQ_ERR acknowledgements seen */
};

static uint64_t reg64(struct model *m, uint32_t off)
{
	return (uint64_t)R(off) | (uint64_t)R(off + 4) << 32;
}

/* The STE of sid as the SMMU finds it (IHI 0070 "Stream tables"), read
 * from device memory; false if the stream table does not reach it. */
static bool model_ste(struct model *m, uint32_t sid, uint64_t ste[8])
{
	uint64_t base = reg64(m, 0x80) & GENMASK(51, 6);
	uint32_t cfg = R(0x88), log2size = cfg & 0x3f, split = (cfg >> 6) & 0x1f;
	const uint64_t *e;

	if (log2size < 32 && sid >= (1u << log2size))
		return false;
	if (FLD(cfg, 17, 16) == 1) {
		uint64_t l1 = ((const uint64_t *)(uintptr_t)base)[sid >> split];
		uint64_t span = l1 & 0x1f, idx = sid & ((1u << split) - 1);

		if (!span || idx >= (1ull << (span - 1)))
			return false;
		e = (const uint64_t *)(uintptr_t)(l1 & GENMASK(51, 6)) + idx * 8;
	} else {
		e = (const uint64_t *)(uintptr_t)base + (uint64_t)sid * 8;
	}
	memcpy(ste, e, 64);
	return true;
}

static ik_u32 model_handler(void *ctx, ik_u32 index, const void *ent, int kind)
{
	struct model *m = ctx;
	struct ik_smmu_cmd c;

	(void)index;
	(void)kind;
	if (ik_smmu_cmd_decode(ent, &c))
		return IK_CMDQ_CERROR_ILL;
	if (m->ill_opcode && c.op == m->ill_opcode)
		return IK_CMDQ_CERROR_ILL;
	if (m->nlog < MAX_LOG)
		m->log[m->nlog++] = c;
	if (c.op == IK_SMMU_CMD_CFGI_STE && m->nfetched < 64) {
		m->fetched_sid[m->nfetched] = c.sid;
		if (!model_ste(m, c.sid, m->fetched[m->nfetched]))
			memset(m->fetched[m->nfetched], 0xff, 64);
		m->nfetched++;
	}
	if (m->soft && ik_softiommu_exec_smmu(m->soft, &c))
		return IK_CMDQ_CERROR_ILL;
	return 0;
}

static bool cmdq_err_active(struct model *m)
{
	return (R(0x60) ^ R(0x64)) & 1u;
}

static void model_consume(struct model *m)
{
	uint32_t err;

	if (!m->sw_on || !(R(0x20) & 8) || m->no_consume || cmdq_err_active(m))
		return;
	(void)ik_cmdq_sw_consume(&m->sw, 1u << 20);
	err = ik_cmdq_sw_error(&m->sw);
	/* CONS: RD|wrap in [19:0], ERR [30:24]; ERR stays after the ack. */
	R(0x9c) = (R(0x9c) & 0x7f000000u) | m->sw.cons;
	if (err) {
		R(0x9c) = (R(0x9c) & ~0x7f000000u) | err << 24 | m->sw.cons;
		R(0x60) ^= 1u; /* GERROR.CMDQ_ERR toggles: active */
	}
}

static void model_cmdq_enable(struct model *m)
{
	struct ik_cmdq_sw_config sc;
	uint64_t base = reg64(m, 0x90);

	memset(&sc, 0, sizeof(sc));
	sc.fmt = &ik_cmdq_fmt_smmuv3;
	sc.log2_entries = (unsigned)(base & 0x1f);
	sc.ring = (void *)(uintptr_t)(base & GENMASK(51, 5));
	sc.handler = model_handler;
	sc.ctx = m;
	ck_assert_int_eq(ik_cmdq_sw_init(&m->sw, &sc), 0);
	m->sw.prod = R(0x98);
	m->sw.cons = m->sw.cons_full = R(0x9c) & 0xfffff;
	m->sw_on = true;
}

static ik_u32 model_read32(void *ctx, ik_u32 off)
{
	struct model *m = ctx;

	ck_assert_uint_lt(off, sizeof(m->regs));
	if (off == 0x44 && !m->stuck_gbpa)
		R(0x44) &= ~(1u << 31); /* a pending GBPA update completes */
	return R(off);
}

static void model_write32(void *ctx, ik_u32 off, ik_u32 v)
{
	struct model *m = ctx;

	ck_assert_uint_lt(off, sizeof(m->regs));
	if (m->nw < MAX_LOG) {
		m->woff[m->nw] = off;
		m->wval[m->nw++] = v;
	}
	switch (off) {
	case 0x20: { /* CR0 */
		bool was = R(0x20) & 8;

		R(0x20) = v;
		if (!m->stuck_cr0ack)
			R(0x24) = v & 0x1f;
		if (!(v & 8))
			m->sw_on = false;
		else if (!was)
			model_cmdq_enable(m);
		model_consume(m);
		break;
	}
	case 0x44: /* GBPA: the update completes at once unless stuck */
		R(0x44) = m->stuck_gbpa ? v : v & ~(1u << 31);
		break;
	case 0x50:
		R(0x50) = v;
		if (!m->stuck_irqack)
			R(0x54) = v;
		break;
	case 0x64: { /* GERRORN */
		bool was = cmdq_err_active(m);

		R(0x64) = v;
		if (was && !cmdq_err_active(m)) {
			m->acks++;
			ik_cmdq_sw_regs.ack_error(&m->sw);
			model_consume(m);
		}
		break;
	}
	case 0x98: /* CMDQ_PROD */
		R(0x98) = v;
		if (m->sw_on) {
			m->sw.prod = v;
			model_consume(m);
		}
		break;
	default:
		if (off < 0x20)
			break; /* ID registers: read-only */
		R(off) = v;
		break;
	}
}

static void model_init(struct model *m, const uint32_t idr[6])
{
	memset(m, 0, sizeof(*m));
	memcpy(m->idr, idr, sizeof(m->idr));
	for (int i = 0; i < 6; i++)
		m->regs[i] = idr[i];
	R(0x18) = 0x43b; /* IIDR: implementer 0x43b (Arm) */
	R(0x1c) = 0x01;  /* AIDR: SMMUv3.1 */
}

static struct model *model_new(const uint32_t idr[6])
{
	struct model *m = malloc(sizeof(*m));

	ck_assert_ptr_nonnull(m);
	model_init(m, idr);
	return m;
}

static struct ik_mmio model_mmio(struct model *m)
{
	struct ik_mmio io = { model_read32, model_write32, NULL, NULL, m };

	return io;
}

/* Inject an event record as the SMMU would write it: at EVTQ_PROD in device
 * memory, then PROD advances; a full queue toggles PROD.OVFLG instead. */
static void model_event(struct model *m, const uint64_t rec[4])
{
	uint64_t base = reg64(m, 0xa0);
	unsigned log2 = (unsigned)(base & 0x1f);
	uint32_t mask = (2u << log2) - 1, prod = R(0x100a8), cons = R(0x100ac);
	uint64_t *ring = (uint64_t *)(uintptr_t)(base & GENMASK(51, 5));

	if (((prod ^ cons) & mask) == (1u << log2)) {
		R(0x100a8) = prod ^ (1u << 31);
		return;
	}
	memcpy(ring + (prod & ((1u << log2) - 1)) * 4, rec, 32);
	R(0x100a8) = (prod & (1u << 31)) | ((prod + 1) & mask);
}

/* An SMMU object over a model, reset. */
struct dev {
	struct model *m;
	struct ik_mmio io;
	struct cdma c;
	struct ik_test_ncdma nc;
	struct ik_smmu *s;
};

static void dev_init(struct dev *d, const uint32_t idr[6], bool noncoherent, unsigned flags)
{
	struct ik_smmu_config cfg;

	memset(d, 0, sizeof(*d));
	d->m = model_new(idr);
	d->io = model_mmio(d->m);
	cdma_init(&d->c);
	ik_test_ncdma_init(&d->nc);
	memset(&cfg, 0, sizeof(cfg));
	cfg.mmio = &d->io;
	cfg.dma = noncoherent ? &d->nc.d : &d->c.d;
	cfg.cmdq_log2 = 4;
	cfg.evtq_log2 = 3;
	cfg.timeout_ns = 2000000000ull;
	cfg.flags = flags;
	ck_assert_int_eq(ik_smmu_create(&cfg, &d->s), 0);
	ck_assert_int_eq(ik_smmu_reset(d->s), 0);
}

/* dev_init() with QEMU's ID registers, coherent, no flags. */
static void dev_init_qemu(struct dev *d)
{
	uint32_t idr[6];

	idr_qemu(idr);
	dev_init(d, idr, false, 0);
}

static void dev_fini(struct dev *d)
{
	ik_smmu_destroy(d->s);
	ck_assert_int_eq(d->c.fa.live, 0);
	ck_assert_int_eq(d->nc.live, 0);
	free(d->m);
}

/* Index of the first logged register write to `off` at or after `from`. */
static int wfind(const struct model *m, uint32_t off, int from)
{
	for (int i = from; i < m->nw; i++)
		if (m->woff[i] == off)
			return i;
	return -1;
}

static uint64_t enc0(const struct ik_smmu_cmd *c)
{
	uint64_t w[2];

	ck_assert_int_eq(ik_smmu_cmd_encode(c, w), 0);
	return w[0];
}

/* ================================================================ identification */

START_TEST(idr_fields_decode_at_spec_positions)
{
	uint32_t idr[6] = { 0, 0, 0, 0, 0, 0 };
	struct ik_smmu_idr id;

	/* IDR0: S2P 0, S1P 1, TTF [3:2], COHACC 4, BTM 5, HTTU [7:6], HYP 9,
	 * ATS 10, NS1ATS 11, ASID16 12, MSI 13, SEV 14, ATOS 15, PRI 16,
	 * VMW 17, VMID16 18, CD2L 19, VATOS 20, TTENDIAN [22:21],
	 * STALL_MODEL [25:24], TERM_MODEL 26, ST_LEVEL [28:27]. */
	idr[0] = 1u << 0 | 3u << 2 | 1u << 5 | 2u << 6 | 1u << 9 | 1u << 11 | 1u << 13 |
		 1u << 15 | 1u << 17 | 1u << 19 | 2u << 21 | 2u << 24 | 1u << 27;
	/* IDR1: SIDSIZE [5:0], SSIDSIZE [10:6], PRIQS [15:11], EVENTQS [20:16],
	 * CMDQS [25:21], ATTR_TYPES_OVR 27, QUEUES_PRESET 29, ECMDQ 31. */
	idr[1] = 32u | 20u << 6 | 7u << 11 | 17u << 16 | 19u << 21 | 1u << 27 | 1u << 29 | 1u << 31;
	idr[2] = 0x3ff; /* BA_VATOS [9:0] */
	/* IDR3: HAD 2, FWB 8, RIL 10, BBML [12:11]. */
	idr[3] = 1u << 2 | 1u << 8 | 1u << 10 | 2u << 11;
	/* IDR5: OAS [2:0], GRAN4K 4, GRAN64K 6, VAX [11:10], STALL_MAX [31:16]. */
	idr[5] = 6u | 1u << 4 | 1u << 6 | 1u << 10 | 0x1234u << 16;
	/* IIDR: Implementer [11:0], Revision [15:12], Variant [19:16],
	 * ProductID [31:20]; AIDR: minor [3:0], major [7:4]. */
	ck_assert_int_eq(ik_smmu_idr_decode(idr, 0x4833u | 5u << 12 | 2u << 16 | 0x483u << 20, 0x02,
					    &id), 0);
	ck_assert(id.s2p && !id.s1p);
	ck_assert_uint_eq(id.ttf, 3);
	ck_assert(!id.cohacc && id.btm);
	ck_assert_uint_eq(id.httu, 2);
	ck_assert(id.hyp && !id.ats && id.ns1ats && !id.asid16 && id.msi && !id.sev && id.atos);
	ck_assert(!id.pri && id.vmw && !id.vmid16 && id.cd2l && !id.vatos);
	ck_assert_uint_eq(id.ttendian, 2);
	ck_assert_uint_eq(id.stall_model, 2);
	ck_assert(!id.term_model);
	ck_assert_uint_eq(id.st_level, 1);
	ck_assert_uint_eq(id.sidsize, 32);
	ck_assert_uint_eq(id.ssidsize, 20);
	ck_assert_uint_eq(id.priqs, 7);
	ck_assert_uint_eq(id.eventqs, 17);
	ck_assert_uint_eq(id.cmdqs, 19);
	ck_assert(id.attr_types_ovr && id.queues_preset && id.ecmdq && !id.tables_preset);
	ck_assert_uint_eq(id.ba_vatos, 0x3ff);
	ck_assert(id.had && id.fwb && id.ril);
	ck_assert_uint_eq(id.bbml, 2);
	ck_assert_uint_eq(id.oas_enc, 6);
	ck_assert_uint_eq(id.oas, 52);
	ck_assert(id.gran4k && !id.gran16k && id.gran64k);
	ck_assert_uint_eq(id.vax, 1);
	ck_assert_uint_eq(id.stall_max, 0x1234);
	ck_assert_uint_eq(id.implementer, 0x833);
	ck_assert_uint_eq(id.revision, 5);
	ck_assert_uint_eq(id.variant, 2);
	ck_assert_uint_eq(id.productid, 0x483);
	ck_assert_uint_eq(id.arch_major, 0);
	ck_assert_uint_eq(id.arch_minor, 2);
	ck_assert_uint_eq(id.raw[5], idr[5]);
	/* OAS encodings 0..5 and the reserved 7. */
	static const unsigned bits[8] = { 32, 36, 40, 42, 44, 48, 52, 0 };
	for (uint32_t e = 0; e < 8; e++) {
		idr[5] = e;
		ck_assert_int_eq(ik_smmu_idr_decode(idr, 0, 0, &id), 0);
		ck_assert_uint_eq(id.oas, bits[e]);
	}
}
END_TEST

START_TEST(probe_reads_id_registers_and_usable_refuses_what_the_core_cannot_drive)
{
	uint32_t idr[6];
	struct model *m;
	struct ik_mmio io;
	struct ik_smmu_idr id;

	idr_qemu(idr);
	m = model_new(idr);
	io = model_mmio(m);
	ck_assert_int_eq(ik_smmu_probe(&io, &id), 0);
	ck_assert(id.s1p && !id.s2p && id.ril && id.cohacc && id.asid16);
	ck_assert_uint_eq(id.oas, 48);
	ck_assert_uint_eq(id.sidsize, 16);
	ck_assert_uint_eq(id.cmdqs, 19);
	ck_assert_uint_eq(id.implementer, 0x43b);
	ck_assert_uint_eq(id.arch_minor, 1);
	ck_assert_int_eq(m->nw, 0); /* reads only */
	ck_assert_int_eq(ik_smmu_idr_usable(&id), 0);
	/* AArch32 tables only; big-endian only; no stage; no granule; reserved
	 * OAS; a command queue below 4 entries. */
	struct { int word; uint32_t clear, set; } bad[] = {
		{ 0, 3u << 2, 1u << 2 }, { 0, 3u << 21, 3u << 21 }, { 0, 3u, 0 },
		{ 5, 7u << 4, 0 }, { 5, 7u, 7u }, { 1, 31u << 21, 1u << 21 },
	};
	for (unsigned i = 0; i < IK_ARRAY_SIZE(bad); i++) {
		uint32_t x[6];

		memcpy(x, idr, sizeof(x));
		x[bad[i].word] = (x[bad[i].word] & ~bad[i].clear) | bad[i].set;
		id = decode(x);
		ck_assert_int_eq(ik_smmu_idr_usable(&id), -ENODEV);
	}
	free(m);
}
END_TEST

/* ================================================================ STE */

/* STE fields (IHI 0070 "Stream table entry"), as bit positions over the
 * 512-bit entry: word = pos / 64. */
#define STE_V BIT(0)
#define STE_CFG(w0) FLD(w0, 3, 1)
#define STE_S1FMT(w0) FLD(w0, 5, 4)
#define STE_S1CTXPTR(w0) ((w0) & GENMASK(51, 6))
#define STE_S1CDMAX(w0) FLD(w0, 63, 59)
#define STE_S1DSS(w1) FLD(w1, 1, 0)
#define STE_S1CIR(w1) FLD(w1, 3, 2)
#define STE_S1COR(w1) FLD(w1, 5, 4)
#define STE_S1CSH(w1) FLD(w1, 7, 6)
#define STE_S1STALLD BIT(27)
#define STE_EATS(w1) FLD(w1, 29, 28)
#define STE_STRW(w1) FLD(w1, 31, 30)
#define STE_SHCFG(w1) FLD(w1, 45, 44)
#define STE_S2VMID(w2) FLD(w2, 15, 0)
#define STE_S2T0SZ(w2) FLD(w2, 37, 32)
#define STE_S2SL0(w2) FLD(w2, 39, 38)
#define STE_S2IR0(w2) FLD(w2, 41, 40)
#define STE_S2OR0(w2) FLD(w2, 43, 42)
#define STE_S2SH0(w2) FLD(w2, 45, 44)
#define STE_S2TG(w2) FLD(w2, 47, 46)
#define STE_S2PS(w2) FLD(w2, 50, 48)
#define STE_S2AA64 BIT(51)
#define STE_S2ENDI BIT(52)
#define STE_S2PTW BIT(54)
#define STE_S2R BIT(58)
#define STE_S2TTB(w3) ((w3) & GENMASK(51, 4))

START_TEST(ste_abort_and_bypass_at_spec_positions)
{
	uint32_t w[6];
	struct ik_smmu_idr id;
	struct ik_smmu_ste_config c;
	uint64_t ste[8];

	idr_full(w);
	id = decode(w);
	memset(&c, 0, sizeof(c));
	c.config = IK_SMMU_STE_CFG_ABORT;
	ck_assert_int_eq(ik_smmu_ste_build(&id, &c, ste), 0);
	ck_assert_uint_eq(ste[0], STE_V); /* V, Config 0b000 */
	for (int i = 1; i < 8; i++)
		ck_assert_uint_eq(ste[i], 0);
	c.config = IK_SMMU_STE_CFG_BYPASS;
	ck_assert_int_eq(ik_smmu_ste_build(&id, &c, ste), 0);
	ck_assert_uint_eq(ste[0], STE_V | 4ull << 1);
	ck_assert_uint_eq(ste[1], 1ull << 44); /* SHCFG = 0b01, use incoming */
	for (int i = 2; i < 8; i++)
		ck_assert_uint_eq(ste[i], 0);
	/* Without ATTR_TYPES_OVR SHCFG is RES0 (QEMU): left 0. */
	idr_qemu(w);
	id = decode(w);
	ck_assert_int_eq(ik_smmu_ste_build(&id, &c, ste), 0);
	ck_assert_uint_eq(ste[1], 0);
}
END_TEST

START_TEST(ste_stage1_fields_at_spec_positions)
{
	uint32_t w[6];
	struct ik_smmu_idr id;
	struct ik_smmu_ste_config c;
	uint64_t ste[8];

	idr_full(w);
	w[0] &= ~(3u << 24); /* STALL_MODEL 0: stalls supported */
	w[0] |= 1u << 10 | 1u << 9; /* ATS, HYP */
	id = decode(w);
	memset(&c, 0, sizeof(c));
	c.config = IK_SMMU_STE_CFG_S1;
	c.s1_ctx_ptr = 0x0000123456789ac0ull;
	c.s1_fmt = IK_SMMU_S1FMT_2LVL_64K;
	c.s1_cdmax = 10;
	c.s1_dss = IK_SMMU_S1DSS_SSID0;
	c.s1_cir = IK_SMMU_S1C_WBRA;
	c.s1_cor = IK_SMMU_S1C_WT;
	c.s1_csh = IK_SMMU_SH_ISH;
	c.s1_stalld = true;
	c.eats = IK_SMMU_EATS_TRANS;
	c.strw = IK_SMMU_STRW_EL2;
	c.s2_vmid = 0x1234;
	ck_assert_int_eq(ik_smmu_ste_build(&id, &c, ste), 0);
	ck_assert(ste[0] & STE_V);
	ck_assert_uint_eq(STE_CFG(ste[0]), 0x5);
	ck_assert_uint_eq(STE_S1FMT(ste[0]), 2);
	ck_assert_uint_eq(STE_S1CTXPTR(ste[0]), 0x0000123456789ac0ull);
	ck_assert_uint_eq(STE_S1CDMAX(ste[0]), 10);
	ck_assert_uint_eq(STE_S1DSS(ste[1]), 2);
	ck_assert_uint_eq(STE_S1CIR(ste[1]), 1);
	ck_assert_uint_eq(STE_S1COR(ste[1]), 2);
	ck_assert_uint_eq(STE_S1CSH(ste[1]), 3);
	ck_assert(ste[1] & STE_S1STALLD);
	ck_assert_uint_eq(STE_EATS(ste[1]), 1);
	ck_assert_uint_eq(STE_STRW(ste[1]), 2);
	ck_assert_uint_eq(STE_SHCFG(ste[1]), 1);
	ck_assert_uint_eq(STE_S2VMID(ste[2]), 0x1234);
	ck_assert_uint_eq(ste[2] & ~GENMASK(15, 0), 0); /* no stage-2 fields */
	ck_assert_uint_eq(ste[3], 0);
	/* Exactly these bits and no others. */
	ck_assert_uint_eq(ste[0], 1 | 5ull << 1 | 2ull << 4 | 0x0000123456789ac0ull | 10ull << 59);
	ck_assert_uint_eq(ste[1], 2 | 1ull << 2 | 2ull << 4 | 3ull << 6 | BIT(27) | 1ull << 28 |
				      2ull << 30 | 1ull << 44);
}
END_TEST

START_TEST(ste_stage2_fields_come_from_the_table_set_at_spec_positions)
{
	static const struct {
		unsigned gshift, ias, oas;
		uint64_t tg, ps;
	} cases[] = {
		/* S2TG: 0b00 4KB, 0b01 64KB, 0b10 16KB; S2PS as IDR5.OAS. */
		{ 12, 40, 48, 0, 5 }, { 12, 48, 40, 0, 2 }, { 14, 36, 44, 2, 4 },
		{ 16, 42, 42, 1, 3 }, { 16, 48, 48, 1, 5 },
	};
	uint32_t w[6];
	struct ik_smmu_idr id;

	idr_full(w);
	id = decode(w);
	for (unsigned k = 0; k < IK_ARRAY_SIZE(cases); k++) {
		struct ik_pgtable *pt = mk_pt(IK_PT_LPAE_S2, cases[k].gshift, cases[k].ias,
					      cases[k].oas, k & 1, 0);
		struct ik_pgtable_info info;
		struct ik_smmu_ste_config c;
		uint64_t ste[8], sl0;

		ik_pgtable_get_info(pt, &info);
		/* SL0 (VTCR_EL2): 4K granule 0 = level 2, 1 = level 1, 2 = level 0;
		 * 16K/64K 0 = level 3, 1 = level 2, 2 = level 1. */
		sl0 = cases[k].gshift == 12 ? 2 - info.geom.hw_start_level :
					      3 - info.geom.hw_start_level;
		memset(&c, 0, sizeof(c));
		c.config = IK_SMMU_STE_CFG_S2;
		c.s2_pt = pt;
		c.s2_vmid = (uint16_t)(0xbe00 + k);
		ck_assert_int_eq(ik_smmu_ste_build(&id, &c, ste), 0);
		ck_assert_uint_eq(STE_CFG(ste[0]), 6);
		ck_assert_uint_eq(ste[0], STE_V | 6ull << 1);
		ck_assert_uint_eq(STE_S2VMID(ste[2]), 0xbe00 + k);
		ck_assert_uint_eq(STE_S2T0SZ(ste[2]), 64 - cases[k].ias);
		ck_assert_uint_eq(STE_S2SL0(ste[2]), sl0);
		/* walk attributes: WB/WB/IS when coherent, NC/NC/OS otherwise */
		ck_assert_uint_eq(STE_S2IR0(ste[2]), k & 1 ? 1 : 0);
		ck_assert_uint_eq(STE_S2OR0(ste[2]), k & 1 ? 1 : 0);
		ck_assert_uint_eq(STE_S2SH0(ste[2]), k & 1 ? 3 : 2);
		ck_assert_uint_eq(STE_S2TG(ste[2]), cases[k].tg);
		ck_assert_uint_eq(STE_S2PS(ste[2]), cases[k].ps);
		ck_assert(ste[2] & STE_S2AA64);
		ck_assert(ste[2] & STE_S2R);
		ck_assert(!(ste[2] & (STE_S2ENDI | STE_S2PTW)));
		ck_assert_uint_eq(STE_S2TTB(ste[3]), info.root_iommu);
		ck_assert_uint_eq(ste[3] & ~GENMASK(51, 4), 0);
		if (cases[k].gshift == 12 && cases[k].ias == 40)
			ck_assert_uint_eq(sl0, 1); /* two concatenated level-1 tables */
		/* Nested: both stages and S2PTW. */
		c.config = IK_SMMU_STE_CFG_NESTED;
		c.s1_ctx_ptr = 0x40000;
		ck_assert_int_eq(ik_smmu_ste_build(&id, &c, ste), 0);
		ck_assert_uint_eq(STE_CFG(ste[0]), 7);
		ck_assert_uint_eq(STE_S1CTXPTR(ste[0]), 0x40000);
		ck_assert(ste[2] & STE_S2PTW);
		ck_assert_uint_eq(STE_S2T0SZ(ste[2]), 64 - cases[k].ias);
		ik_pgtable_destroy(pt);
	}
}
END_TEST

START_TEST(ste_rejects_what_the_smmu_lacks_with_nothing_written)
{
	uint32_t w[6], wq[6];
	struct ik_smmu_idr full, q, x;
	struct ik_pgtable *s2 = mk_pt(IK_PT_LPAE_S2, 12, 40, 48, true, 0);
	struct ik_pgtable *s2_16k = mk_pt(IK_PT_LPAE_S2, 14, 40, 48, true, 0);
	struct ik_pgtable *s2nc = mk_pt(IK_PT_LPAE_S2, 12, 40, 48, false, 0);
	struct ik_pgtable *s1 = mk_pt(IK_PT_LPAE_S1, 12, 48, 48, true, 0);
	struct ik_smmu_ste_config c;
	uint64_t ste[8];

	idr_full(w);
	full = decode(w);
	idr_qemu(wq);
	q = decode(wq);
#define REJECT(idp, ...) \
	do { \
		memset(&c, 0, sizeof(c)); \
		__VA_ARGS__; \
		memset(ste, 0x77, sizeof(ste)); \
		ck_assert_int_eq(ik_smmu_ste_build(idp, &c, ste), -EINVAL); \
		for (int i_ = 0; i_ < 8; i_++) \
			ck_assert_uint_eq(ste[i_], 0x7777777777777777ull); \
	} while (0)
	/* unknown configs: the reserved 0b001..0b011, and beyond 3 bits */
	REJECT(&full, c.config = 1);
	REJECT(&full, c.config = 2);
	REJECT(&full, c.config = 3);
	REJECT(&full, c.config = 8);
	/* a stage the SMMU lacks: QEMU has no stage 2 */
	REJECT(&q, c.config = IK_SMMU_STE_CFG_S2; c.s2_pt = s2);
	REJECT(&q, c.config = IK_SMMU_STE_CFG_NESTED; c.s2_pt = s2);
	x = full;
	x.s1p = false;
	REJECT(&x, c.config = IK_SMMU_STE_CFG_S1);
	/* stage 2 without a table set, or with a stage-1 one */
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S2);
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S2; c.s2_pt = s1);
	/* VMID beyond 8 bits without VMID16; any VMID without stage 2 */
	x = full;
	x.vmid16 = false;
	REJECT(&x, c.config = IK_SMMU_STE_CFG_S2; c.s2_pt = s2; c.s2_vmid = 256);
	REJECT(&q, c.config = IK_SMMU_STE_CFG_S1; c.s2_vmid = 1);
	/* granule the SMMU lacks */
	x = full;
	x.gran16k = false;
	REJECT(&x, c.config = IK_SMMU_STE_CFG_S2; c.s2_pt = s2_16k);
	/* output size beyond OAS (48-bit tables, 44-bit SMMU) */
	x = full;
	x.oas = 44;
	REJECT(&x, c.config = IK_SMMU_STE_CFG_S2; c.s2_pt = s2);
	/* a coherent walk on a non-coherent SMMU (fine when not coherent) */
	x = full;
	x.cohacc = false;
	REJECT(&x, c.config = IK_SMMU_STE_CFG_S2; c.s2_pt = s2);
	memset(&c, 0, sizeof(c));
	c.config = IK_SMMU_STE_CFG_S2;
	c.s2_pt = s2nc;
	ck_assert_int_eq(ik_smmu_ste_build(&x, &c, ste), 0);
	/* CD table pointer: misaligned, beyond OAS; bad S1Fmt, CDMax, DSS */
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S1; c.s1_ctx_ptr = 0x1020);
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S1; c.s1_ctx_ptr = 1ull << 48);
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S1; c.s1_fmt = 3);
	REJECT(&q, c.config = IK_SMMU_STE_CFG_S1; c.s1_fmt = IK_SMMU_S1FMT_2LVL_4K); /* no CD2L */
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S1; c.s1_cdmax = 11); /* SSIDSIZE 10 */
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S1; c.s1_dss = 3);
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S1; c.s1_csh = 1);
	/* stalls, ATS and STRW the SMMU lacks */
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S1; c.s1_stalld = true); /* STALL_MODEL 1 */
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S1; c.eats = IK_SMMU_EATS_TRANS);
	x = full;
	x.ats = true;
	REJECT(&x, c.config = IK_SMMU_STE_CFG_S1; c.eats = IK_SMMU_EATS_S1CHK);
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S1; c.strw = IK_SMMU_STRW_EL2);
	REJECT(&full, c.config = IK_SMMU_STE_CFG_S1; c.strw = 1);
	/* NULL arguments */
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(ik_smmu_ste_build(NULL, &c, ste), -EINVAL);
	ck_assert_int_eq(ik_smmu_ste_build(&full, NULL, ste), -EINVAL);
	ck_assert_int_eq(ik_smmu_ste_build(&full, &c, NULL), -EINVAL);
#undef REJECT
	ik_pgtable_destroy(s2);
	ik_pgtable_destroy(s2_16k);
	ik_pgtable_destroy(s2nc);
	ik_pgtable_destroy(s1);
}
END_TEST

/* ================================================================ CD */

/* CD fields (IHI 0070 "Context descriptor"). */
#define CD_T0SZ(w0) FLD(w0, 5, 0)
#define CD_TG0(w0) FLD(w0, 7, 6)
#define CD_IR0(w0) FLD(w0, 9, 8)
#define CD_OR0(w0) FLD(w0, 11, 10)
#define CD_SH0(w0) FLD(w0, 13, 12)
#define CD_EPD0 BIT(14)
#define CD_ENDI BIT(15)
#define CD_EPD1 BIT(30)
#define CD_V BIT(31)
#define CD_IPS(w0) FLD(w0, 34, 32)
#define CD_AFFD BIT(35)
#define CD_AA64 BIT(41)
#define CD_HD BIT(42)
#define CD_HA BIT(43)
#define CD_S BIT(44)
#define CD_R BIT(45)
#define CD_A BIT(46)
#define CD_ASET BIT(47)
#define CD_ASID(w0) FLD(w0, 63, 48)
#define CD_TTB0(w1) ((w1) & GENMASK(51, 4))
/* TCR_EL1 (Arm ARM), to show where a copied TCR would have put things. */
#define TCR_EPD0 BIT(7)
#define TCR_TG0(t) FLD(t, 15, 14)
#define TCR_EPD1 BIT(23)

START_TEST(cd_fields_at_spec_positions_not_tcr_positions)
{
	static const struct {
		unsigned gshift, ias, oas;
		uint64_t tg0, ips;
	} cases[] = {
		/* CD TG0: 0b00 4KB, 0b01 64KB, 0b10 16KB; IPS as IDR5.OAS. */
		{ 12, 48, 48, 0, 5 }, { 12, 39, 40, 0, 2 }, { 14, 47, 44, 2, 4 },
		{ 16, 42, 36, 1, 1 }, { 16, 48, 48, 1, 5 },
	};
	uint32_t w[6];
	struct ik_smmu_idr id;

	idr_full(w);
	id = decode(w);
	for (unsigned k = 0; k < IK_ARRAY_SIZE(cases); k++) {
		struct ik_pgtable *pt = mk_pt(IK_PT_LPAE_S1, cases[k].gshift, cases[k].ias,
					      cases[k].oas, !(k & 1), 0);
		struct ik_pgtable_info info;
		struct ik_lpae_regs r;
		struct ik_smmu_cd_config c;
		uint64_t cd[8];

		ik_pgtable_get_info(pt, &info);
		ck_assert_int_eq(ik_lpae_get_regs(pt, &r), 0);
		memset(&c, 0, sizeof(c));
		c.pt = pt;
		c.asid = (uint16_t)(0xa500 + k);
		ck_assert_int_eq(ik_smmu_cd_build(&id, &c, cd), 0);
		ck_assert_uint_eq(CD_T0SZ(cd[0]), 64 - cases[k].ias);
		ck_assert_uint_eq(CD_TG0(cd[0]), cases[k].tg0);
		ck_assert_uint_eq(CD_IR0(cd[0]), k & 1 ? 0 : 1);
		ck_assert_uint_eq(CD_OR0(cd[0]), k & 1 ? 0 : 1);
		ck_assert_uint_eq(CD_SH0(cd[0]), k & 1 ? 2 : 3);
		ck_assert(!(cd[0] & CD_EPD0));
		ck_assert(!(cd[0] & CD_ENDI));
		ck_assert(cd[0] & CD_EPD1);
		ck_assert(cd[0] & CD_V);
		ck_assert_uint_eq(CD_IPS(cd[0]), cases[k].ips);
		ck_assert(!(cd[0] & (CD_AFFD | CD_HA | CD_HD | CD_S)));
		ck_assert(cd[0] & CD_AA64);
		ck_assert(cd[0] & CD_R);
		ck_assert(cd[0] & CD_A);
		ck_assert(cd[0] & CD_ASET);
		ck_assert_uint_eq(CD_ASID(cd[0]), 0xa500 + k);
		ck_assert_uint_eq(CD_TTB0(cd[1]), info.root_iommu);
		ck_assert_uint_eq(cd[1] & ~GENMASK(51, 4), 0);
		ck_assert_uint_eq(cd[2], 0);
		ck_assert_uint_eq(cd[3], IK_LPAE_MAIR_VALUE);
		for (int i = 4; i < 8; i++)
			ck_assert_uint_eq(cd[i], 0);
		/* Nothing else is set in word 0. */
		ck_assert_uint_eq(cd[0] & ~(GENMASK(13, 0) | CD_EPD1 | CD_V | GENMASK(34, 32) |
					    CD_AA64 | CD_R | CD_A | CD_ASET | GENMASK(63, 48)), 0);
		/* Issue 12: the TCR_EL1 value is not a CD.  A copy would put TG0
		 * at [15:14] (ENDI/EPD0 of the CD) and miss EPD1 (TCR bit 23 is
		 * the CD's TG1[1]). */
		ck_assert(r.tcr & TCR_EPD1);
		ck_assert(!(cd[0] & BIT(23)));
		if (TCR_TG0(r.tcr))
			ck_assert_uint_ne(r.tcr & GENMASK(15, 14), cd[0] & GENMASK(15, 14));
		ik_pgtable_destroy(pt);
	}
}
END_TEST

/* 52-bit table sets: table pages above 2^48 (BADDR[51:48] = 0b1010). */
static const uint64_t high_base = 0xaull << 48;

static struct ik_pgtable *mk_pt52(enum ik_pt_fmt fmt, unsigned gshift, unsigned ias, uint32_t quirks)
{
	struct ik_pgtable_cfg pc;
	struct ik_pgtable *pt = NULL;

	memset(&pc, 0, sizeof(pc));
	pc.hooks = &fake_hooks;
	pc.cookie = (void *)&high_base;
	pc.fmt = fmt;
	pc.ias = ias;
	pc.oas = 52;
	pc.pgsize_bitmap = 1ull << gshift;
	pc.fmt_flags = gshift == 16 ? 0 : IK_LPAE_FLAG_LPA2;
	pc.coherent = true;
	pc.quirks = quirks;
	ck_assert_int_eq(ik_pgtable_create(&pc, &pt), 0);
	return pt;
}

/* 52-bit tables (FEAT_LPA at 64K, FEAT_LPA2 at 4K/16K): IPS/S2PS 0b110,
 * CD.DS / STE.S2DS, S2HA/S2HD for stage-2 dirty tracking, and TTB0/S2TTB
 * holding the root address itself (bits [51:4]), not the TTBR packing;
 * an SMMU without DS, VAX, OAS 52 or HTTU 2 refuses them, nothing written. */
START_TEST(cd_and_ste_carry_52_bit_tables_at_spec_positions)
{
	uint32_t w[6];
	struct ik_smmu_idr id, no;
	struct ik_pgtable *s1_4k = mk_pt52(IK_PT_LPAE_S1, 12, 52, 0);
	struct ik_pgtable *s1_64k = mk_pt52(IK_PT_LPAE_S1, 16, 52, 0);
	struct ik_pgtable *s2_4k = mk_pt52(IK_PT_LPAE_S2, 12, 52, IK_PT_QUIRK_DIRTY);
	struct ik_pgtable *s2_16k = mk_pt52(IK_PT_LPAE_S2, 14, 52, 0);
	struct ik_pgtable_info info;
	struct ik_lpae_regs r;
	struct ik_smmu_cd_config c;
	struct ik_smmu_ste_config sc;
	uint64_t cd[8], ste[8], keep[8];

	idr_full(w);
	w[5] = 6u << 0 | 1u << 4 | 1u << 5 | 1u << 6 | 1u << 7 | 1u << 10; /* OAS 52, DS, VAX 52 */
	id = decode(w);
	ck_assert(id.ds);
	ck_assert_uint_eq(id.oas, 52);
	ck_assert_uint_eq(id.vax, 1);
	/* stage 1, 4K LPA2 */
	memset(&c, 0, sizeof(c));
	c.pt = s1_4k;
	ik_pgtable_get_info(s1_4k, &info);
	ck_assert_int_eq(ik_lpae_get_regs(s1_4k, &r), 0);
	ck_assert_int_eq(ik_smmu_cd_build(&id, &c, cd), 0);
	ck_assert_uint_eq(CD_T0SZ(cd[0]), 12);
	ck_assert_uint_eq(CD_IPS(cd[0]), 6);
	ck_assert_uint_ge(info.root_iommu, 1ull << 48);
	ck_assert_uint_eq(CD_TTB0(cd[1]), info.root_iommu);
	ck_assert_uint_ne(cd[1], r.ttbr & GENMASK(51, 4)); /* TTBR packs [51:48] at [5:2] */
	ck_assert_uint_eq(cd[2], BIT(58));		      /* DS, CD bit 186 */
	{
		/* an emulator's walker from the CD: TCR fields and TTB0 */
		struct ik_pt_walker wk;
		uint64_t tcr = CD_T0SZ(cd[0]) | 0ull << 14 | CD_IPS(cd[0]) << 32 | 1ull << 59;

		ck_assert_int_eq(ik_lpae_walker_from_regs(&wk, 1, tcr,
							  ik_lpae_ttbr_from_addr(CD_TTB0(cd[1])), 0), 0);
		ck_assert_uint_eq(wk.root, info.root_iommu);
		ck_assert_uint_eq(wk.geom.nlevels, 5);
	}
	/* stage 1, 64K LPA: no DS */
	c.pt = s1_64k;
	ik_pgtable_get_info(s1_64k, &info);
	ck_assert_int_eq(ik_smmu_cd_build(&id, &c, cd), 0);
	ck_assert_uint_eq(CD_IPS(cd[0]), 6);
	ck_assert_uint_eq(CD_TTB0(cd[1]), info.root_iommu);
	ck_assert_uint_eq(cd[2], 0);
	/* stage 2, 4K LPA2, dirty: 16 concatenated level-0 tables (SL0 2) */
	memset(&sc, 0, sizeof(sc));
	sc.config = IK_SMMU_STE_CFG_S2;
	sc.s2_pt = s2_4k;
	ik_pgtable_get_info(s2_4k, &info);
	ck_assert_int_eq(ik_smmu_ste_build(&id, &sc, ste), 0);
	ck_assert_uint_eq(STE_S2T0SZ(ste[2]), 12);
	ck_assert_uint_eq(STE_S2SL0(ste[2]), 2);
	ck_assert_uint_eq(STE_S2PS(ste[2]), 6);
	ck_assert(ste[2] & BIT(56));	/* S2HA, STE bit 184 */
	ck_assert(ste[2] & BIT(55));	/* S2HD, STE bit 183 */
	ck_assert_uint_eq(STE_S2TTB(ste[3]), info.root_iommu);
	ck_assert_uint_eq(ste[3] & ~GENMASK(51, 4), BIT(3)); /* S2DS, STE bit 195 */
	ck_assert_uint_eq(ste[3] & BIT(2), 0);		      /* S2SL0_2: no level -1 */
	/* stage 2, 16K LPA2 52-bit: start level 0 is SL0 0b11 */
	sc.s2_pt = s2_16k;
	ck_assert_int_eq(ik_smmu_ste_build(&id, &sc, ste), 0);
	ck_assert_uint_eq(STE_S2SL0(ste[2]), 3);
	ck_assert(!(ste[2] & (BIT(55) | BIT(56))));
	ck_assert_uint_eq(ste[3] & BIT(3), BIT(3));
	/* what an SMMU without the features refuses, nothing written */
	memset(keep, 0x5a, sizeof(keep));
	memcpy(cd, keep, sizeof(cd));
	memcpy(ste, keep, sizeof(ste));
	no = id;
	no.ds = false;
	c.pt = s1_4k;
	ck_assert_int_eq(ik_smmu_cd_build(&no, &c, cd), -EINVAL);
	sc.s2_pt = s2_16k;
	ck_assert_int_eq(ik_smmu_ste_build(&no, &sc, ste), -EINVAL);
	c.pt = s1_64k; /* 64K needs no DS */
	ck_assert_int_eq(ik_smmu_cd_build(&no, &c, cd), 0);
	memcpy(cd, keep, sizeof(cd));
	no = id;
	no.vax = 0;
	ck_assert_int_eq(ik_smmu_cd_build(&no, &c, cd), -EINVAL);
	no = id;
	no.oas = 48;
	ck_assert_int_eq(ik_smmu_cd_build(&no, &c, cd), -EINVAL);
	sc.s2_pt = s2_4k;
	ck_assert_int_eq(ik_smmu_ste_build(&no, &sc, ste), -EINVAL);
	no = id;
	no.httu = 1;
	ck_assert_int_eq(ik_smmu_ste_build(&no, &sc, ste), -EINVAL);
	ck_assert_mem_eq(cd, keep, sizeof(cd));
	ck_assert_mem_eq(ste, keep, sizeof(ste));
	ik_pgtable_destroy(s1_4k);
	ik_pgtable_destroy(s1_64k);
	ik_pgtable_destroy(s2_4k);
	ik_pgtable_destroy(s2_16k);
}
END_TEST

START_TEST(cd_flags_and_dirty_tracking_at_spec_positions)
{
	uint32_t w[6];
	struct ik_smmu_idr id;
	struct ik_pgtable *pt = mk_pt(IK_PT_LPAE_S1, 12, 48, 48, true, IK_PT_QUIRK_DIRTY);
	struct ik_smmu_cd_config c;
	uint64_t cd[8];

	idr_full(w);
	w[0] &= ~(3u << 24 | 1u << 26); /* STALL_MODEL 0, TERM_MODEL 0 */
	id = decode(w);
	memset(&c, 0, sizeof(c));
	c.pt = pt;
	c.asid = 0xffff;
	c.flags = IK_SMMU_CD_STALL | IK_SMMU_CD_AFFD | IK_SMMU_CD_SHARED_ASID |
		  IK_SMMU_CD_NO_RECORD | IK_SMMU_CD_TERM_RAZWI;
	ck_assert_int_eq(ik_smmu_cd_build(&id, &c, cd), 0);
	ck_assert(cd[0] & CD_HA); /* IK_PT_QUIRK_DIRTY: HA and HD */
	ck_assert(cd[0] & CD_HD);
	ck_assert(cd[0] & CD_S);
	ck_assert(cd[0] & CD_AFFD);
	ck_assert(!(cd[0] & (CD_ASET | CD_R | CD_A)));
	ck_assert_uint_eq(CD_ASID(cd[0]), 0xffff);
	ik_pgtable_destroy(pt);
}
END_TEST

START_TEST(cd_rejects_granule_asid_dirty_and_stall_the_smmu_lacks)
{
	uint32_t w[6];
	struct ik_smmu_idr full, x;
	struct ik_pgtable *p4 = mk_pt(IK_PT_LPAE_S1, 12, 48, 48, true, 0);
	struct ik_pgtable *p64 = mk_pt(IK_PT_LPAE_S1, 16, 48, 48, false, 0);
	struct ik_pgtable *pd = mk_pt(IK_PT_LPAE_S1, 12, 48, 48, true, IK_PT_QUIRK_DIRTY);
	struct ik_pgtable *ps2 = mk_pt(IK_PT_LPAE_S2, 12, 40, 40, true, 0);
	struct ik_smmu_cd_config c;
	uint64_t cd[8];

	idr_full(w);
	full = decode(w);
#define REJECT(idp, ...) \
	do { \
		memset(&c, 0, sizeof(c)); \
		c.pt = p4; \
		__VA_ARGS__; \
		memset(cd, 0x77, sizeof(cd)); \
		ck_assert_int_eq(ik_smmu_cd_build(idp, &c, cd), -EINVAL); \
		for (int i_ = 0; i_ < 8; i_++) \
			ck_assert_uint_eq(cd[i_], 0x7777777777777777ull); \
	} while (0)
	x = full;
	x.gran64k = false;
	REJECT(&x, c.pt = p64); /* granule */
	REJECT(&full, c.pt = ps2); /* a stage-2 table set */
	REJECT(&full, c.pt = NULL);
	x = full;
	x.asid16 = false;
	REJECT(&x, c.asid = 0x100); /* 8-bit ASIDs */
	x = full;
	x.httu = 1;
	REJECT(&x, c.pt = pd); /* dirty tracking needs HTTU 2 */
	x = full;
	x.oas = 40;
	REJECT(&x); /* IPS 48 beyond OAS */
	x = full;
	x.s1p = false;
	REJECT(&x);
	x = full;
	x.cohacc = false;
	REJECT(&x); /* write-back walk, SMMU cannot snoop */
	REJECT(&full, c.flags = IK_SMMU_CD_STALL); /* STALL_MODEL 1 */
	REJECT(&full, c.flags = IK_SMMU_CD_TERM_RAZWI); /* TERM_MODEL 1 */
	REJECT(&full, c.flags = 0x100);
	x = full;
	x.stall_model = 2;
	REJECT(&x); /* stall forced: S must be 1 */
	memset(&c, 0, sizeof(c));
	c.pt = p4;
	c.flags = IK_SMMU_CD_STALL;
	ck_assert_int_eq(ik_smmu_cd_build(&x, &c, cd), 0);
	ck_assert(cd[0] & CD_S);
	x = full;
	x.cohacc = false;
	c.pt = p64; /* non-coherent tables on a non-coherent SMMU: fine */
	c.flags = 0;
	ck_assert_int_eq(ik_smmu_cd_build(&x, &c, cd), 0);
	ck_assert_int_eq(ik_smmu_cd_build(NULL, &c, cd), -EINVAL);
	ck_assert_int_eq(ik_smmu_cd_build(&full, NULL, cd), -EINVAL);
	ck_assert_int_eq(ik_smmu_cd_build(&full, &c, NULL), -EINVAL);
#undef REJECT
	ik_pgtable_destroy(p4);
	ik_pgtable_destroy(p64);
	ik_pgtable_destroy(pd);
	ik_pgtable_destroy(ps2);
}
END_TEST

/* A CD read back with the spec's positions into TCR_EL1 form gives, through
 * ik_lpae_walker_from_regs(), a walker that translates like the table set:
 * the CD describes the tables a hardware walker would find. */
START_TEST(cd_decoded_by_spec_walks_like_the_table_set)
{
	uint32_t w[6];
	struct ik_smmu_idr id;

	idr_full(w);
	id = decode(w);
	for (unsigned gs = 12; gs <= 16; gs += 2) {
		struct ik_pgtable *pt = mk_pt(IK_PT_LPAE_S1, gs, 44, 48, true, 0);
		struct ik_smmu_cd_config c;
		struct ik_pt_walker wk;
		uint64_t cd[8], tcr, g = 1ull << gs;
		int mapped = 0;

		ck_assert_int_eq(ik_pgtable_map(pt, 5 * g, 0x7700000000ull, 3 * g,
						IK_PROT_READ | IK_PROT_WRITE), 0);
		ck_assert_int_eq(ik_pgtable_map(pt, 1ull << 40, 0x1230000000ull, g, IK_PROT_READ), 0);
		memset(&c, 0, sizeof(c));
		c.pt = pt;
		c.asid = 1;
		ck_assert_int_eq(ik_smmu_cd_build(&id, &c, cd), 0);
		/* CD TG0 and TCR_EL1.TG0 share their encoding, not their place. */
		tcr = CD_T0SZ(cd[0]) | CD_TG0(cd[0]) << 14 | CD_IR0(cd[0]) << 8 |
		      CD_OR0(cd[0]) << 10 | CD_SH0(cd[0]) << 12 | CD_IPS(cd[0]) << 32 | TCR_EPD1;
		ck_assert_int_eq(ik_lpae_walker_from_regs(&wk, 1, tcr, CD_TTB0(cd[1]), 0), 0);
		ck_assert_uint_eq(wk.geom.ias, 44);
		ck_assert_uint_eq(wk.geom.lg2_granule, gs);
		for (uint64_t k = 0; k < 12; k++) {
			uint64_t iova = k < 10 ? (3 + k) * g : (1ull << 40) + (k - 10) * g, pa = 0;
			struct ik_pt_walk_result res;
			int e = ik_pgtable_iova_to_phys(pt, iova, &pa, NULL);

			ck_assert_int_eq(ik_pt_walk(&wk, &ik_test_mem, iova, 0, &res), 0);
			if (e == 0) {
				mapped++;
				ck_assert_uint_eq(res.fault, IK_PT_FAULT_NONE);
				ck_assert_uint_eq(res.oa, pa);
			} else {
				ck_assert_uint_eq(res.fault, IK_PT_FAULT_TRANSLATION);
			}
		}
		ck_assert_int_eq(mapped, 4);
		ik_pgtable_destroy(pt);
	}
}
END_TEST
/* ================================================================ events, GERROR */

START_TEST(event_fields_decode_at_spec_positions)
{
	struct ik_smmu_event ev;
	uint64_t rec[4];

	/* F_TRANSLATION at stage 2: type [7:0], SSV 11, SSID [31:12], SID
	 * [63:32]; STAG [79:64], Stall 95, PnU 97, InD 98, RnW 99, S2 103,
	 * Class [105:104]; InputAddr [191:128]; IPA [243:204]. */
	rec[0] = 0x10 | BIT(11) | 0xabcdeull << 12 | 0x12345678ull << 32;
	rec[1] = 0xbeef | BIT(95 - 64) | BIT(97 - 64) | BIT(99 - 64) | BIT(103 - 64) | 1ull << 40;
	rec[2] = 0xffff123456789abcull;
	rec[3] = 0x000fedcba9876000ull | 0xfff; /* low bits are not the IPA */
	ck_assert_int_eq(ik_smmu_event_decode(rec, &ev), 0);
	ck_assert_uint_eq(ev.type, IK_SMMU_EVT_F_TRANSLATION);
	ck_assert_str_eq(ev.name, "F_TRANSLATION");
	ck_assert(ev.ssv);
	ck_assert_uint_eq(ev.ssid, 0xabcde);
	ck_assert_uint_eq(ev.sid, 0x12345678);
	ck_assert_uint_eq(ev.stag, 0xbeef);
	ck_assert(ev.stall && ev.pnu && !ev.ind && ev.rnw && ev.s2);
	ck_assert_uint_eq(ev.cls, IK_SMMU_EVT_CLASS_TT);
	ck_assert(ev.has_addr && ev.has_ipa && !ev.has_fetch);
	ck_assert_uint_eq(ev.addr, 0xffff123456789abcull);
	ck_assert_uint_eq(ev.ipa, 0x000fedcba9876000ull);
	ck_assert_uint_eq(ev.raw[3], rec[3]);
	/* A stage-1 permission fault: no IPA; InD set, Class IN. */
	rec[0] = 0x13 | 7ull << 32;
	rec[1] = BIT(98 - 64) | 2ull << 40;
	ck_assert_int_eq(ik_smmu_event_decode(rec, &ev), 0);
	ck_assert_str_eq(ev.name, "F_PERMISSION");
	ck_assert(!ev.ssv && ev.ind && !ev.rnw && !ev.s2 && !ev.has_ipa && ev.has_addr);
	ck_assert_uint_eq(ev.cls, IK_SMMU_EVT_CLASS_IN);
	/* Fetch aborts: FetchAddr [243:195]. */
	rec[0] = 0x03 | 9ull << 32;
	rec[1] = 0;
	rec[3] = 0x000f000012345678ull | 7;
	ck_assert_int_eq(ik_smmu_event_decode(rec, &ev), 0);
	ck_assert_str_eq(ev.name, "F_STE_FETCH");
	ck_assert(ev.has_fetch && !ev.has_addr);
	ck_assert_uint_eq(ev.fetch_addr, 0x000f000012345678ull);
	rec[0] = 0x0b;
	rec[1] = BIT(103 - 64) | 1ull << 40;
	ck_assert_int_eq(ik_smmu_event_decode(rec, &ev), 0);
	ck_assert_str_eq(ev.name, "F_WALK_EABT");
	ck_assert(ev.has_fetch && ev.has_addr && ev.s2 && !ev.has_ipa);
	/* Every named type, configuration errors carrying the stream only. */
	static const struct { uint8_t t; const char *n; } names[] = {
		{ 0x01, "F_UUT" }, { 0x02, "C_BAD_STREAMID" }, { 0x03, "F_STE_FETCH" },
		{ 0x04, "C_BAD_STE" }, { 0x05, "F_BAD_ATS_TREQ" }, { 0x06, "F_STREAM_DISABLED" },
		{ 0x07, "F_TRANSL_FORBIDDEN" }, { 0x08, "C_BAD_SUBSTREAMID" }, { 0x09, "F_CD_FETCH" },
		{ 0x0a, "C_BAD_CD" }, { 0x0b, "F_WALK_EABT" }, { 0x10, "F_TRANSLATION" },
		{ 0x11, "F_ADDR_SIZE" }, { 0x12, "F_ACCESS" }, { 0x13, "F_PERMISSION" },
		{ 0x20, "F_TLB_CONFLICT" }, { 0x21, "F_CFG_CONFLICT" }, { 0x24, "E_PAGE_REQUEST" },
		{ 0x25, "F_VMS_FETCH" }, { 0xe3, "IMPDEF" }, { 0x0c, "UNKNOWN" }, { 0xff, "UNKNOWN" },
	};
	for (unsigned i = 0; i < IK_ARRAY_SIZE(names); i++) {
		ck_assert_str_eq(ik_smmu_event_name(names[i].t), names[i].n);
		rec[0] = names[i].t | BIT(11) | 5ull << 12 | 0x42ull << 32;
		rec[1] = rec[2] = rec[3] = ~0ull;
		ck_assert_int_eq(ik_smmu_event_decode(rec, &ev), 0);
		ck_assert_str_eq(ev.name, names[i].n);
		ck_assert_uint_eq(ev.sid, 0x42);
		if (names[i].t == 0x04 || names[i].t == 0x0a || names[i].t == 0x02)
			ck_assert(!ev.has_addr && !ev.has_fetch && !ev.rnw && ev.ssv &&
				  ev.ssid == 5);
	}
	ck_assert_int_eq(ik_smmu_event_decode(NULL, &ev), -EINVAL);
	ck_assert_int_eq(ik_smmu_event_decode(rec, NULL), -EINVAL);
}
END_TEST

START_TEST(gerror_decode_names_the_active_bits)
{
	struct ik_smmu_gerror ge;

	/* GERROR: CMDQ_ERR 0, EVTQ_ABT_ERR 2, PRIQ_ABT_ERR 3, MSI_CMDQ_ABT_ERR 4,
	 * MSI_EVTQ_ABT_ERR 5, MSI_PRIQ_ABT_ERR 6, MSI_GERROR_ABT_ERR 7,
	 * SFM_ERR 8; active where GERROR != GERRORN. */
	ck_assert_int_eq(ik_smmu_gerror_decode(0x1fd, 0x0fc, &ge), 0);
	ck_assert_uint_eq(ge.active, 0x101);
	ck_assert(ge.cmdq_err && ge.sfm && !ge.evtq_abt && !ge.msi_gerror_abt);
	ck_assert_int_eq(ik_smmu_gerror_decode(0x0fc, 0, &ge), 0);
	ck_assert(ge.evtq_abt && ge.priq_abt && ge.msi_cmdq_abt && ge.msi_evtq_abt &&
		  ge.msi_priq_abt && ge.msi_gerror_abt && !ge.cmdq_err && !ge.sfm);
	ck_assert_str_eq(ik_smmu_gerror_name(1u << 0), "CMDQ_ERR");
	ck_assert_str_eq(ik_smmu_gerror_name(1u << 2), "EVTQ_ABT_ERR");
	ck_assert_str_eq(ik_smmu_gerror_name(1u << 8), "SFM_ERR");
	ck_assert_ptr_null(ik_smmu_gerror_name(1u << 1));
	ck_assert_ptr_null(ik_smmu_gerror_name(3));
	ck_assert_int_eq(ik_smmu_gerror_decode(0, 0, NULL), -EINVAL);
}
END_TEST

/* ================================================================ tables */

/* Records the commands an issue callback receives; optionally fails. */
struct issued {
	struct ik_smmu_cmd c[64];
	int n, calls, fail_at; /* fail_at: 1-based call that fails */
	struct ik_test_ncdma *nc;      /* snapshot the device's copy of an entry */
	const uint64_t *watch_cpu;
	uint64_t seen[8][8];   /* device view of the watched entry at each call */
};

static int rec_issue(void *ctx, const struct ik_smmu_cmd *cmds, unsigned n)
{
	struct issued *is = ctx;

	is->calls++;
	if (is->watch_cpu && is->calls <= 8) {
		if (is->nc) {
			struct ik_test_ncblk *b = ik_test_nc_find(is->nc, is->watch_cpu);

			memcpy(is->seen[is->calls - 1],
			       b->dev + ((const uint8_t *)is->watch_cpu - b->cpu), 64);
		} else {
			memcpy(is->seen[is->calls - 1], is->watch_cpu, 64);
		}
	}
	if (is->calls == is->fail_at)
		return -EIO;
	for (unsigned i = 0; i < n && is->n < 64; i++)
		is->c[is->n++] = cmds[i];
	return 0;
}

static void ste_val(uint64_t ste[8], uint64_t tag)
{
	/* an S1 STE-shaped value: V, Config 5, ctx pointer tagged */
	memset(ste, 0, 64);
	ste[0] = STE_V | 5ull << 1 | (tag << 12 & GENMASK(51, 6));
	ste[1] = 1ull << 44 | (tag & 3);
	ste[2] = tag << 8;
}

/* A stream-table config over dma, all fields 0 but the ID registers: *id,
 * decoded from idr_full()'s. */
static void st_cfg_init(struct ik_smmu_strtab_config *c, struct ik_smmu_idr *id,
			struct ik_dma_mem *dma)
{
	uint32_t w[6];

	idr_full(w);
	*id = decode(w);
	memset(c, 0, sizeof(*c));
	c->idr = id;
	c->dma = dma;
}

START_TEST(strtab_linear_layout_and_registers)
{
	struct ik_smmu_idr id;
	struct ik_test_ncdma nc;
	struct ik_smmu_strtab t;
	struct ik_smmu_strtab_config c;
	struct issued is;
	uint64_t ste[8], back[8], base;
	uint32_t cfg;

	ik_test_ncdma_init(&nc);
	st_cfg_init(&c, &id, &nc.d);
	c.log2size = 6;
	ck_assert_int_eq(ik_smmu_strtab_init(&t, &c), 0);
	/* STRTAB_BASE: ADDR [51:6], RA 62 (not for non-coherent memory);
	 * STRTAB_BASE_CFG: LOG2SIZE [5:0], SPLIT [10:6], FMT [17:16] = 0. */
	ik_smmu_strtab_regs(&t, &base, &cfg);
	ck_assert_uint_eq(base & ~GENMASK(51, 6), 0);
	ck_assert_uint_eq(cfg, 6);
	ck_assert_uint_eq(base & 4095, 0); /* aligned to its 4 KiB */
	/* the device sees a zeroed table (every STE invalid) */
	for (int i = 0; i < 512; i++)
		ck_assert_uint_eq(((uint64_t *)(uintptr_t)base)[i], 0);
	memset(&is, 0, sizeof(is));
	ste_val(ste, 0x1234);
	ck_assert_int_eq(ik_smmu_strtab_write(&t, 63, ste, rec_issue, &is), 0);
	/* STE of sid at base + 64 * sid, in the device's copy */
	ck_assert_int_eq(memcmp((uint8_t *)(uintptr_t)base + 63 * 64, ste, 64), 0);
	ck_assert_int_eq(is.n, 1);
	ck_assert_uint_eq(is.c[0].op, IK_SMMU_CMD_CFGI_STE);
	ck_assert_uint_eq(is.c[0].sid, 63);
	ck_assert(is.c[0].leaf);
	ck_assert_int_eq(ik_smmu_strtab_read(&t, 63, back), 0);
	ck_assert_int_eq(memcmp(back, ste, 64), 0);
	/* the same STE again: nothing written, nothing issued */
	long cleans = nc.cleans;
	ck_assert_int_eq(ik_smmu_strtab_write(&t, 63, ste, rec_issue, &is), 0);
	ck_assert_int_eq(is.calls, 1);
	ck_assert_int_eq(nc.cleans, cleans);
	/* out of range: -EINVAL, nothing written */
	ck_assert_int_eq(ik_smmu_strtab_write(&t, 64, ste, rec_issue, &is), -EINVAL);
	ck_assert_int_eq(ik_smmu_strtab_read(&t, 64, back), -EINVAL);
	ck_assert_int_eq(is.calls, 1);
	ik_smmu_strtab_fini(&t);
	ik_smmu_strtab_fini(&t); /* zeroed: ignored */
	ck_assert_int_eq(nc.live, 0);
}
END_TEST

START_TEST(strtab_two_level_allocates_l2_on_demand_with_span_and_l2ptr)
{
	struct ik_smmu_idr id;
	struct cdma cd;
	struct ik_smmu_strtab t;
	struct ik_smmu_strtab_config c;
	struct issued is;
	uint64_t ste[8], base, *l1;
	uint32_t cfg;

	cdma_init(&cd);
	st_cfg_init(&c, &id, &cd.d);
	c.alloc = &cd.fa.a;
	c.log2size = 16;
	c.two_level = true;
	c.split = 8;
	ck_assert_int_eq(ik_smmu_strtab_init(&t, &c), 0);
	ik_smmu_strtab_regs(&t, &base, &cfg);
	/* coherent: RA; FMT 1, SPLIT 8, LOG2SIZE 16 */
	ck_assert(base & BIT(62));
	ck_assert_uint_eq(cfg, 16 | 8u << 6 | 1u << 16);
	l1 = (uint64_t *)(uintptr_t)(base & GENMASK(51, 6));
	for (int i = 0; i < 256; i++)
		ck_assert_uint_eq(l1[i], 0); /* Span 0: invalid */
	ck_assert_int_eq(cd.fa.live, 2); /* L1 table + L2 bookkeeping */
	memset(&is, 0, sizeof(is));
	ste_val(ste, 0x77);
	ck_assert_int_eq(ik_smmu_strtab_write(&t, 0x1203, ste, rec_issue, &is), 0);
	ck_assert_int_eq(cd.fa.live, 3);
	/* L1 descriptor: Span [4:0] = SPLIT + 1 (2^(Span-1) STEs), L2Ptr [51:6] */
	uint64_t d = l1[0x12];
	ck_assert_uint_eq(d & 0x1f, 9);
	uint64_t *l2 = (uint64_t *)(uintptr_t)(d & GENMASK(51, 6));
	ck_assert_uint_eq((uintptr_t)l2 & 16383, 0); /* 256 STEs: 16 KiB aligned */
	ck_assert_int_eq(memcmp(l2 + 3 * 8, ste, 64), 0);
	for (int i = 0; i < 256 * 8; i++)
		if (i < 24 || i >= 32)
			ck_assert_uint_eq(l2[i], 0);
	/* the first write after a new L1 descriptor: a non-leaf CFGI_STE */
	ck_assert_int_eq(is.n, 1);
	ck_assert_uint_eq(is.c[0].sid, 0x1203);
	ck_assert(!is.c[0].leaf);
	/* a second STE in the same L2: no allocation, leaf CFGI */
	ste_val(ste, 0x78);
	ck_assert_int_eq(ik_smmu_strtab_write(&t, 0x12ff, ste, rec_issue, &is), 0);
	ck_assert_int_eq(cd.fa.live, 3);
	ck_assert(is.c[1].leaf);
	/* an invalid STE where no L2 exists: nothing allocated or issued */
	memset(ste, 0, sizeof(ste));
	ck_assert_int_eq(ik_smmu_strtab_write(&t, 0x5000, ste, rec_issue, &is), 0);
	ck_assert_int_eq(cd.fa.live, 3);
	ck_assert_int_eq(is.calls, 2);
	ck_assert_uint_eq(l1[0x50], 0);
	/* an L2 allocation failure: -ENOMEM, nothing written */
	ste_val(ste, 0x79);
	ik_fault_alloc_fail_nth(&cd.fa, 1);
	ck_assert_int_eq(ik_smmu_strtab_write(&t, 0x5000, ste, rec_issue, &is), -ENOMEM);
	ck_assert_uint_eq(l1[0x50], 0);
	ck_assert_int_eq(is.calls, 2);
	ik_fault_alloc_disarm(&cd.fa);
	ck_assert_int_eq(ik_smmu_strtab_write(&t, 0x5000, ste, NULL, NULL), 0);
	ck_assert_uint_eq(l1[0x50] & 0x1f, 9);
	ik_smmu_strtab_fini(&t);
	ck_assert_int_eq(cd.fa.live, 0);
}
END_TEST

START_TEST(strtab_init_rejects_bad_sizes_and_fails_cleanly)
{
	struct ik_smmu_idr id, x;
	struct cdma cd;
	struct ik_smmu_strtab t;
	struct ik_smmu_strtab_config c;

	cdma_init(&cd);
	st_cfg_init(&c, &id, &cd.d);
	c.alloc = &cd.fa.a;
	memset(&t, 0x3c, sizeof(t));
#define BAD(...) \
	do { \
		c.log2size = 12; c.two_level = false; c.split = 0; c.idr = &id; \
		__VA_ARGS__; \
		ck_assert_int_eq(ik_smmu_strtab_init(&t, &c), -EINVAL); \
		ck_assert_uint_eq(((uint8_t *)&t)[0], 0x3c); \
	} while (0)
	BAD(c.log2size = 0);
	BAD(c.log2size = 17); /* beyond SIDSIZE 16 */
	BAD(c.two_level = true; c.split = 7);
	BAD(c.two_level = true; c.log2size = 8); /* not above SPLIT */
	x = id;
	x.st_level = 0;
	BAD(c.idr = &x; c.two_level = true);
	x = id;
	x.sidsize = 32;
	BAD(c.idr = &x; c.log2size = 25); /* linear above 24 bits */
	BAD(c.idr = &x; c.log2size = 26; c.two_level = true); /* L1 above 2^17 */
#undef BAD
	ck_assert_int_eq(ik_smmu_strtab_init(NULL, &c), -EINVAL);
	ck_assert_int_eq(ik_smmu_strtab_init(&t, NULL), -EINVAL);
	/* every allocation failing in turn: nothing left */
	c.log2size = 12;
	c.two_level = true;
	for (long k = 1; k <= 2; k++) {
		ik_fault_alloc_fail_nth(&cd.fa, k);
		ck_assert_int_eq(ik_smmu_strtab_init(&t, &c), -ENOMEM);
		ck_assert_int_eq(cd.fa.live, 0);
		ck_assert_uint_eq(((uint8_t *)&t)[0], 0x3c);
	}
	ik_fault_alloc_disarm(&cd.fa);
	/* a table beyond OAS: -ERANGE (host memory above 2^32) */
	x = id;
	x.oas = 32;
	c.idr = &x;
	c.two_level = false;
	int r = ik_smmu_strtab_init(&t, &c);
	if (r == 0)
		ik_smmu_strtab_fini(&t); /* the heap happened to lie low */
	else
		ck_assert_int_eq(r, -ERANGE);
	ck_assert_int_eq(cd.fa.live, 0);
}
END_TEST

/* At every CFGI, the device's copy of the entry is either the old or the new
 * value whole, or (break-before-make) an abort STE. */
/* Writes STE sid through rec_issue, *is recording the device's copy of it
 * (from nc) at each call. */
static void watched_write(struct issued *is, struct ik_test_ncdma *nc, struct ik_smmu_strtab *t,
			  uint32_t sid, const uint64_t *ste)
{
	memset(is, 0, sizeof(*is));
	is->nc = nc;
	is->watch_cpu = t->base + sid * 8;
	ck_assert_int_eq(ik_smmu_strtab_write(t, sid, ste, rec_issue, is), 0);
}

START_TEST(ste_updates_are_never_seen_half_written)
{
	struct ik_smmu_idr id;
	struct ik_test_ncdma nc;
	struct ik_smmu_strtab t;
	struct ik_smmu_strtab_config c;
	struct issued is;
	uint64_t a[8], b[8], bb[8], *e, dev[8];

	ik_test_ncdma_init(&nc);
	st_cfg_init(&c, &id, &nc.d);
	c.log2size = 4;
	ck_assert_int_eq(ik_smmu_strtab_init(&t, &c), 0);
	e = t.base + 2 * 8;
	ste_val(a, 0x100);
	/* invalid -> valid: one CFGI, the device has the whole new STE */
	watched_write(&is, &nc, &t, 2, a);
	ck_assert_int_eq(is.calls, 1);
	ck_assert_int_eq(memcmp(is.seen[0], a, 64), 0);
	/* one word changes (word 2): in place, one CFGI */
	memcpy(b, a, 64);
	b[2] ^= 0xff00;
	watched_write(&is, &nc, &t, 2, b);
	ck_assert_int_eq(is.calls, 1);
	ck_assert_int_eq(memcmp(is.seen[0], b, 64), 0);
	/* several words change on a live STE: abort first (V=1, Config 0),
	 * CFGI; then the new STE, CFGI */
	ste_val(bb, 0x2345);
	watched_write(&is, &nc, &t, 2, bb);
	ck_assert_int_eq(is.calls, 2);
	ck_assert_uint_eq(is.seen[0][0], STE_V); /* abort: the other words ignored */
	ck_assert_int_eq(memcmp(is.seen[1], bb, 64), 0);
	/* to abort: word 0 first, one CFGI */
	memset(a, 0, sizeof(a));
	a[0] = STE_V;
	watched_write(&is, &nc, &t, 2, a);
	ck_assert_int_eq(is.calls, 1);
	ck_assert_int_eq(memcmp(is.seen[0], a, 64), 0);
	/* a failing CFGI during break-before-make: the error, STE left abort */
	ste_val(bb, 0x99);
	ck_assert_int_eq(ik_smmu_strtab_write(&t, 2, bb, NULL, NULL), 0);
	ste_val(b, 0x5555);
	memset(&is, 0, sizeof(is));
	is.fail_at = 1;
	ck_assert_int_eq(ik_smmu_strtab_write(&t, 2, b, rec_issue, &is), -EIO);
	ck_assert_uint_eq(e[0], STE_V);
	/* what the device holds matches the CPU after each clean */
	struct ik_test_ncblk *blk = ik_test_nc_find(&nc, e);
	memcpy(dev, blk->dev + ((uint8_t *)e - blk->cpu), 64);
	ck_assert_int_eq(memcmp(dev, e, 64), 0);
	ik_smmu_strtab_fini(&t);
	ck_assert_int_eq(nc.live, 0);
}
END_TEST

START_TEST(cdtab_layouts_l1cd_descriptors_and_cfgi_cd_per_stream)
{
	uint32_t w[6];
	struct ik_smmu_idr id;
	struct cdma cd;
	struct ik_pgtable *pt = mk_pt(IK_PT_LPAE_S1, 12, 48, 48, true, 0);
	struct ik_smmu_cd_config cc;
	uint64_t desc[8], back[8];
	uint32_t sids[20];

	idr_full(w);
	id = decode(w);
	cdma_init(&cd);
	memset(&cc, 0, sizeof(cc));
	cc.pt = pt;
	cc.asid = 9;
	ck_assert_int_eq(ik_smmu_cd_build(&id, &cc, desc), 0);
	for (int i = 0; i < 20; i++)
		sids[i] = 100 + (uint32_t)i;
	for (unsigned fmt = 0; fmt <= 2; fmt++) {
		struct ik_smmu_cdtab t;
		struct ik_smmu_cdtab_config c;
		struct ik_smmu_ste_config sc;
		struct issued is;
		uint32_t ssid = 0x2c5 & ((1u << 10) - 1);
		uint64_t *cdp;

		memset(&c, 0, sizeof(c));
		c.idr = &id;
		c.dma = &cd.d;
		c.log2_cds = 10;
		c.fmt = fmt;
		ck_assert_int_eq(ik_smmu_cdtab_init(&t, &c), 0);
		memset(&sc, 0, sizeof(sc));
		ik_smmu_cdtab_ste(&t, &sc);
		ck_assert_uint_eq(sc.s1_ctx_ptr, t.base_dma);
		ck_assert_uint_eq(sc.s1_fmt, fmt);
		ck_assert_uint_eq(sc.s1_cdmax, 10);
		ck_assert_uint_eq(sc.s1_cir, IK_SMMU_S1C_WBRA);
		ck_assert_uint_eq(sc.s1_csh, IK_SMMU_SH_ISH);
		memset(&is, 0, sizeof(is));
		ck_assert_int_eq(ik_smmu_cdtab_write(&t, ssid, desc, sids, 20, rec_issue, &is), 0);
		if (fmt == IK_SMMU_S1FMT_LINEAR) {
			cdp = (uint64_t *)(uintptr_t)t.base_dma + ssid * 8;
		} else {
			/* L1CD: V [0], L2Ptr [51:12]; L2 of 64 (4K) or 1024 (64K)
			 * CDs indexed by SSID[5:0] / SSID[9:0] */
			unsigned l2bits = fmt == 1 ? 6 : 10;
			uint64_t l1 = ((uint64_t *)(uintptr_t)t.base_dma)[ssid >> l2bits];

			ck_assert(l1 & 1);
			ck_assert_uint_eq(l1 & ~(GENMASK(51, 12) | 1), 0);
			cdp = (uint64_t *)(uintptr_t)(l1 & GENMASK(51, 12)) +
			      (ssid & ((1u << l2bits) - 1)) * 8;
		}
		ck_assert_int_eq(memcmp(cdp, desc, 64), 0);
		/* CFGI_CD(sid, ssid) for each of the 20 streams, in groups that
		 * each end with a sync (two calls); non-leaf after a new L1CD */
		ck_assert_int_eq(is.n, 20);
		ck_assert_int_eq(is.calls, 2);
		for (int i = 0; i < 20; i++) {
			ck_assert_uint_eq(is.c[i].op, IK_SMMU_CMD_CFGI_CD);
			ck_assert_uint_eq(is.c[i].sid, 100 + (uint32_t)i);
			ck_assert_uint_eq(is.c[i].ssid, ssid);
			ck_assert(is.c[i].leaf == (fmt == IK_SMMU_S1FMT_LINEAR));
		}
		ck_assert_int_eq(ik_smmu_cdtab_read(&t, ssid, back), 0);
		ck_assert_int_eq(memcmp(back, desc, 64), 0);
		/* out of range SSID, NULL sids with a count */
		ck_assert_int_eq(ik_smmu_cdtab_write(&t, 1024, desc, sids, 1, rec_issue, &is), -EINVAL);
		ck_assert_int_eq(ik_smmu_cdtab_write(&t, 1, desc, NULL, 1, rec_issue, &is), -EINVAL);
		ck_assert_int_eq(ik_smmu_cdtab_read(&t, 1024, back), -EINVAL);
		ck_assert_int_eq(is.calls, 2);
		ik_smmu_cdtab_fini(&t);
		ck_assert_int_eq(cd.fa.live, 0);
	}
	/* bad configs */
	struct ik_smmu_cdtab t;
	struct ik_smmu_cdtab_config c;
	memset(&c, 0, sizeof(c));
	c.idr = &id;
	c.dma = &cd.d;
	c.log2_cds = 11; /* SSIDSIZE 10 */
	ck_assert_int_eq(ik_smmu_cdtab_init(&t, &c), -EINVAL);
	c.log2_cds = 4;
	c.fmt = 3;
	ck_assert_int_eq(ik_smmu_cdtab_init(&t, &c), -EINVAL);
	struct ik_smmu_idr x = id;
	x.cd2l = false;
	c.idr = &x;
	c.fmt = 1;
	ck_assert_int_eq(ik_smmu_cdtab_init(&t, &c), -EINVAL);
	ik_pgtable_destroy(pt);
}
END_TEST

START_TEST(cfgi_command_helpers)
{
	struct ik_smmu_cmd c[2];

	ck_assert_int_eq(ik_smmu_cfgi_ste_cmds(77, true, c), 2);
	/* CFGI_STE: opcode 0x03, SID [63:32], Leaf [64] */
	uint64_t w[2];
	ck_assert_int_eq(ik_smmu_cmd_encode(&c[0], w), 0);
	ck_assert_uint_eq(w[0], 0x03 | 77ull << 32);
	ck_assert_uint_eq(w[1], 1);
	ck_assert_uint_eq(enc0(&c[1]), 0x46); /* CMD_SYNC, CS = NONE */
	ck_assert_int_eq(ik_smmu_cfgi_cd_cmds(5, 0xfffff, false, c), 2);
	ck_assert_int_eq(ik_smmu_cmd_encode(&c[0], w), 0);
	ck_assert_uint_eq(w[0], 0x05 | 0xfffffull << 12 | 5ull << 32);
	ck_assert_uint_eq(w[1], 0);
	ck_assert_int_eq(ik_smmu_cfgi_cd_cmds(5, 1u << 20, false, c), -EINVAL);
	ck_assert_int_eq(ik_smmu_cfgi_ste_cmds(5, false, NULL), -EINVAL);
}
END_TEST
/* ================================================================ the device */

START_TEST(bringup_programs_the_smmu_in_order)
{
	uint32_t idr[6];
	struct dev d;
	struct model *m;
	int i_cr1, i_str, i_cq, i_en1, i_evq, i_en2, i_en3;

	idr_full(idr);
	idr[0] |= 1u << 9; /* HYP: TLBI_EL2_ALL too */
	dev_init(&d, idr, false, IK_SMMU_F_ABORT_DISABLED);
	m = d.m;
	/* GBPA.ABORT with UPDATE before CR0 = 0 */
	int i_gbpa = wfind(m, 0x44, 0), i_cr0 = wfind(m, 0x20, 0);
	ck_assert_int_ge(i_gbpa, 0);
	ck_assert_int_lt(i_gbpa, i_cr0);
	ck_assert_uint_eq(m->wval[i_gbpa], 1u << 20 | 1u << 31);
	ck_assert_uint_eq(m->wval[i_cr0], 0);
	/* CR1: QUEUE_IC [1:0], QUEUE_OC [3:2], QUEUE_SH [5:4], TABLE_IC [7:6],
	 * TABLE_OC [9:8], TABLE_SH [11:10]: WB (1) and ISH (3), coherent.
	 * CR2: RECINVSID 1, PTM 2. */
	i_cr1 = wfind(m, 0x28, 0);
	ck_assert_uint_eq(m->wval[i_cr1], 1 | 1 << 2 | 3 << 4 | 1 << 6 | 1 << 8 | 3 << 10);
	ck_assert_uint_eq(R(0x2c), 1u << 1 | 1u << 2);
	ck_assert_uint_eq(R(0x50), 0); /* IRQ_CTRL: polling */
	/* STRTAB_BASE (+RA), STRTAB_BASE_CFG: 2-level, SPLIT 8, LOG2SIZE 16 */
	i_str = wfind(m, 0x80, 0);
	ck_assert(reg64(m, 0x80) & BIT(62));
	ck_assert_uint_eq(R(0x88), 16 | 8u << 6 | 1u << 16);
	/* CMDQ_BASE: ADDR [51:5], LOG2SIZE [4:0], RA 62; PROD/CONS 0 */
	i_cq = wfind(m, 0x90, 0);
	ck_assert_uint_eq(reg64(m, 0x90) & 0x1f, 4);
	ck_assert(reg64(m, 0x90) & BIT(62));
	ck_assert_uint_eq((reg64(m, 0x90) & GENMASK(51, 5)) & 255, 0); /* 256 B aligned */
	ck_assert_int_gt(wfind(m, 0x98, i_cq), i_cq);
	ck_assert_int_gt(wfind(m, 0x9c, i_cq), i_cq);
	/* CR0 = CMDQEN; then CFGI_ALL, TLBI_EL2_ALL, TLBI_NSNH_ALL, CMD_SYNC */
	i_en1 = wfind(m, 0x20, i_cq);
	ck_assert_uint_eq(m->wval[i_en1], 1u << 3);
	ck_assert_int_eq(m->nlog, 4);
	ck_assert_uint_eq(m->log[0].op, IK_SMMU_CMD_CFGI_STE_RANGE);
	ck_assert_uint_eq(m->log[0].range, 31);
	ck_assert_uint_eq(m->log[1].op, IK_SMMU_CMD_TLBI_EL2_ALL);
	ck_assert_uint_eq(m->log[2].op, IK_SMMU_CMD_TLBI_NSNH_ALL);
	ck_assert_uint_eq(m->log[3].op, IK_SMMU_CMD_SYNC);
	ck_assert_uint_eq(m->log[3].cs, IK_SMMU_SYNC_CS_NONE); /* completion by polling */
	/* EVTQ_BASE (WA), EVTQ_PROD/CONS in page 1, then EVTQEN, then SMMUEN */
	i_evq = wfind(m, 0xa0, i_en1);
	ck_assert_int_gt(i_evq, 0);
	ck_assert_uint_eq(reg64(m, 0xa0) & 0x1f, 3);
	ck_assert(reg64(m, 0xa0) & BIT(62));
	ck_assert_int_gt(wfind(m, 0x100a8, i_evq), i_evq);
	ck_assert_int_gt(wfind(m, 0x100ac, i_evq), i_evq);
	ck_assert_int_lt(wfind(m, 0xa8, 0), 0); /* never the page-0 alias */
	i_en2 = wfind(m, 0x20, i_evq);
	ck_assert_uint_eq(m->wval[i_en2], 1u << 3 | 1u << 2);
	i_en3 = wfind(m, 0x20, i_en2 + 1);
	ck_assert_uint_eq(m->wval[i_en3], 1u << 3 | 1u << 2 | 1u);
	ck_assert_int_eq(wfind(m, 0x20, i_en3 + 1), -1); /* SMMUEN is the last CR0 write */
	ck_assert(i_cr0 < i_cr1 && i_cr1 < i_str && i_str < i_cq && i_cq < i_en1);
	ck_assert_uint_eq(R(0x24), 0xd);
	/* disable: GBPA abort, CR0 = 0 */
	ck_assert_int_eq(ik_smmu_disable(d.s), 0);
	ck_assert_uint_eq(R(0x20), 0);
	ck_assert(R(0x44) & (1u << 20));
	dev_fini(&d);
}
END_TEST

START_TEST(bringup_on_a_non_coherent_smmu_uses_nc_attributes_and_cleans_what_it_reads)
{
	uint32_t idr[6];
	struct dev d;
	struct model *m;
	uint64_t ste[8], got[8];
	struct ik_smmu_ste_config c;

	idr_qemu(idr);
	dev_init(&d, idr, true, 0);
	m = d.m;
	/* CR1: NC (0) and OSH (2); no RA/WA hints */
	ck_assert_uint_eq(R(0x28), 2 << 4 | 2 << 10);
	ck_assert(!(reg64(m, 0x80) & BIT(62)));
	ck_assert(!(reg64(m, 0x90) & BIT(62)));
	ck_assert(!(reg64(m, 0xa0) & BIT(62)));
	/* the model consumed the bring-up commands from the device's copy */
	ck_assert_int_eq(m->nlog, 3);
	ck_assert_uint_eq(m->log[0].op, IK_SMMU_CMD_CFGI_STE_RANGE);
	/* many commands, wrapping the 16-entry ring several times */
	for (int i = 0; i < 40; i++) {
		struct ik_smmu_cmd t[3];

		memset(t, 0, sizeof(t));
		for (int k = 0; k < 3; k++) {
			t[k].op = IK_SMMU_CMD_TLBI_NH_ASID;
			t[k].asid = (uint16_t)(i * 3 + k);
		}
		ck_assert_int_eq(ik_smmu_issue(d.s, t, 3), 0);
	}
	ck_assert_int_eq(m->nlog, 3 + 40 * 4);
	for (int i = 0; i < 40; i++)
		for (int k = 0; k < 3; k++)
			ck_assert_uint_eq(m->log[3 + i * 4 + k].asid, i * 3 + k);
	/* 40 commands in one call: groups of 16, each with its sync, in order */
	struct ik_smmu_cmd many[40];
	memset(many, 0, sizeof(many));
	for (int i = 0; i < 40; i++) {
		many[i].op = IK_SMMU_CMD_TLBI_NH_ASID;
		many[i].asid = (uint16_t)(1000 + i);
	}
	int at = m->nlog;
	ck_assert_int_eq(ik_smmu_issue(d.s, many, 40), 0);
	ck_assert_int_eq(m->nlog - at, 40 + 3);
	for (int i = 0, k = at; i < 40; i++, k++) {
		if (m->log[k].op == IK_SMMU_CMD_SYNC)
			k++;
		ck_assert_uint_eq(m->log[k].asid, 1000 + i);
	}
	ck_assert_uint_eq(m->log[at + 16].op, IK_SMMU_CMD_SYNC);
	ck_assert_uint_eq(m->log[m->nlog - 1].op, IK_SMMU_CMD_SYNC);
	/* an STE written through the object: the model reads it from the
	 * device copy at its CFGI_STE */
	memset(&c, 0, sizeof(c));
	c.config = IK_SMMU_STE_CFG_BYPASS;
	struct ik_smmu_idr id = *ik_smmu_get_idr(d.s);
	ck_assert_int_eq(ik_smmu_ste_build(&id, &c, ste), 0);
	ck_assert_int_eq(ik_smmu_write_ste(d.s, 0x4321, ste), 0);
	ck_assert_int_eq(m->nfetched, 1);
	ck_assert_uint_eq(m->fetched_sid[0], 0x4321);
	ck_assert_int_eq(memcmp(m->fetched[0], ste, 64), 0);
	ck_assert(model_ste(m, 0x4321, got));
	ck_assert(!model_ste(m, 0x9999, got)); /* no L2 there: Span 0 */
	struct ik_smmu_stats st;
	ik_smmu_get_stats(d.s, &st);
	ck_assert_uint_eq(st.ste_writes, 1);
	ck_assert_uint_ge(st.issues, 41);
	dev_fini(&d);
}
END_TEST

START_TEST(every_wait_is_bounded)
{
	uint32_t idr[6];
	struct model *m;
	struct ik_mmio io;
	struct cdma cd;
	struct ik_smmu_config cfg;
	struct ik_smmu *s;

	idr_qemu(idr);
	cdma_init(&cd);
	for (int k = 0; k < 4; k++) {
		m = model_new(idr);
		io = model_mmio(m);
		memset(&cfg, 0, sizeof(cfg));
		cfg.mmio = &io;
		cfg.dma = &cd.d;
		cfg.timeout_ns = 2000000; /* 2 ms */
		cfg.flags = k == 1 ? IK_SMMU_F_ABORT_DISABLED : 0;
		ck_assert_int_eq(ik_smmu_create(&cfg, &s), 0);
		ck_assert_int_eq(m->nw, 0); /* create writes no register */
		m->stuck_cr0ack = k == 0;
		m->stuck_gbpa = k == 1;
		m->stuck_irqack = k == 2;
		if (k == 2)
			m->regs[0x54 / 4] = 4; /* EVENTQ_IRQEN acknowledged, and stays */
		m->no_consume = k == 3; /* the queue never moves: the sync times out */
		ck_assert_int_eq(ik_smmu_reset(s), -ETIMEDOUT);
		m->stuck_cr0ack = m->stuck_gbpa = m->stuck_irqack = m->no_consume = false;
		if (k == 3)
			ck_assert_ptr_nonnull(ik_smmu_cmdq(s));
		/* reset again once the SMMU behaves */
		ck_assert_msg(ik_smmu_reset(s) == 0, "case %d", k);
		ck_assert_uint_eq(R(0x24) & 1, 1);
		m->stuck_cr0ack = true;
		ck_assert_int_eq(ik_smmu_disable(s), -ETIMEDOUT);
		m->stuck_cr0ack = false;
		ik_smmu_destroy(s);
		ck_assert_int_eq(cd.fa.live, 0);
		free(m);
	}
}
END_TEST

START_TEST(illegal_command_is_replaced_reported_and_the_queue_runs_again)
{
	struct dev d;
	struct model *m;
	struct ik_smmu_cmd c[3];
	struct ik_smmu_stats st;

	dev_init_qemu(&d);
	m = d.m;
	m->ill_opcode = IK_SMMU_CMD_TLBI_NH_VA; /* this SMMU refuses it */
	memset(c, 0, sizeof(c));
	c[0].op = IK_SMMU_CMD_TLBI_NH_ASID;
	c[0].asid = 1;
	c[1].op = IK_SMMU_CMD_TLBI_NH_VA;
	c[1].asid = 2;
	c[1].addr = 0x5000;
	c[2].op = IK_SMMU_CMD_TLBI_NH_ASID;
	c[2].asid = 3;
	int before = m->nlog;
	ck_assert_int_eq(ik_smmu_issue(d.s, c, 3), -EIO);
	/* the SMMU stopped at the TLBI_NH_VA with CERROR_ILL; the queue put a
	 * CMD_SYNC (CS = NONE) there, toggled GERRORN.CMDQ_ERR, and what
	 * followed ran */
	ck_assert_int_eq(m->acks, 1);
	ck_assert_int_eq(m->nlog - before, 4);
	ck_assert_uint_eq(m->log[before].asid, 1);
	ck_assert_uint_eq(m->log[before + 1].op, IK_SMMU_CMD_SYNC);
	ck_assert_uint_eq(m->log[before + 1].cs, IK_SMMU_SYNC_CS_NONE);
	ck_assert_uint_eq(m->log[before + 2].asid, 3);
	ck_assert_uint_eq(m->log[before + 3].op, IK_SMMU_CMD_SYNC);
	ck_assert_uint_eq(R(0x60) & 1, R(0x64) & 1); /* acknowledged */
	/* QEMU 7.2 keeps the code in CONS.ERR after the acknowledgement: the
	 * next commands must run without an error being "seen" again */
	ck_assert_uint_eq((R(0x9c) >> 24) & 0x7f, 1);
	m->ill_opcode = 0;
	ck_assert_int_eq(ik_smmu_issue(d.s, c, 3), 0);
	ck_assert_int_eq(m->acks, 1);
	ik_smmu_get_stats(d.s, &st);
	ck_assert_uint_eq(st.cmdq.errors, 1);
	ck_assert_uint_eq(st.cmdq.replaced, 1);
	/* a second error later is handled the same way */
	m->ill_opcode = IK_SMMU_CMD_TLBI_NH_ASID;
	ck_assert_int_eq(ik_smmu_issue(d.s, c, 1), -EIO);
	ck_assert_int_eq(m->acks, 2);
	m->ill_opcode = 0;
	ck_assert_int_eq(ik_smmu_issue(d.s, NULL, 0), 0); /* a sync alone */
	dev_fini(&d);
}
END_TEST

START_TEST(cons_err_without_an_active_gerror_is_not_an_error)
{
	struct dev d;
	struct ik_smmu_cmd c;
	struct ik_smmu_stats st;

	dev_init_qemu(&d);
	/* CONS.ERR = ILL, GERROR == GERRORN: stale, as QEMU leaves it */
	d.m->regs[0x9c / 4] |= 1u << 24;
	memset(&c, 0, sizeof(c));
	c.op = IK_SMMU_CMD_TLBI_NSNH_ALL;
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(ik_smmu_issue(d.s, &c, 1), 0);
	ik_smmu_get_stats(d.s, &st);
	ck_assert_uint_eq(st.cmdq.errors, 0);
	ck_assert_int_eq(d.m->acks, 0);
	ck_assert_int_eq(ik_smmu_gerror_poll(d.s, NULL), 0);
	dev_fini(&d);
}
END_TEST

START_TEST(fetch_abort_is_retried_and_the_command_runs)
{
	struct dev d;
	struct ik_smmu_cmd c;
	struct ik_smmu_stats st;

	dev_init_qemu(&d);
	memset(&c, 0, sizeof(c));
	c.op = IK_SMMU_CMD_TLBI_NH_ASID;
	c.asid = 44;
	/* the next entry fails with CERROR_ABT on its first fetch */
	ik_cmdq_sw_inject(&d.m->sw, 0, IK_CMDQ_CERROR_ABT, 1);
	int before = d.m->nlog;
	ck_assert_int_eq(ik_smmu_issue(d.s, &c, 1), 0);
	ck_assert_int_eq(d.m->acks, 1);
	ck_assert_uint_eq(d.m->log[before].asid, 44); /* it did run */
	ik_smmu_get_stats(d.s, &st);
	ck_assert_uint_eq(st.cmdq.retried, 1);
	ck_assert_uint_eq(st.cmdq.replaced, 0);
	/* ATC_INV_SYNC at a sync: retried likewise */
	ik_cmdq_sw_inject(&d.m->sw, 1, IK_CMDQ_CERROR_ATC_INV_SYNC, 1);
	ck_assert_int_eq(ik_smmu_issue(d.s, &c, 1), 0);
	ck_assert_int_eq(d.m->acks, 2);
	dev_fini(&d);
}
END_TEST

START_TEST(gerror_poll_acknowledges_other_errors_and_leaves_cmdq_err_to_the_queue)
{
	struct dev d;
	struct ik_smmu_gerror ge;
	struct ik_smmu_stats st;

	dev_init_qemu(&d);
	/* EVTQ_ABT_ERR and SFM_ERR become active */
	d.m->regs[0x60 / 4] ^= 1u << 2 | 1u << 8;
	ck_assert_int_eq(ik_smmu_gerror_poll(d.s, &ge), (int)(1u << 2 | 1u << 8));
	ck_assert(ge.evtq_abt && ge.sfm && !ge.cmdq_err);
	ck_assert_uint_eq(d.m->regs[0x60 / 4], d.m->regs[0x64 / 4]);
	ck_assert_int_eq(ik_smmu_gerror_poll(d.s, &ge), 0);
	ik_smmu_get_stats(d.s, &st);
	ck_assert_uint_eq(st.gerrors, 2);
	/* a CMDQ_ERR: repaired by the queue (no-op in place, GERRORN toggled) */
	d.m->ill_opcode = IK_SMMU_CMD_TLBI_NSNH_ALL;
	struct ik_smmu_cmd c;
	memset(&c, 0, sizeof(c));
	c.op = IK_SMMU_CMD_TLBI_NSNH_ALL;
	ck_assert_int_eq(ik_cmdq_issue(ik_smmu_cmdq(d.s), (uint64_t[2]){ enc0(&c), 0 }, 1, 0), 0);
	ck_assert(cmdq_err_active(d.m));
	d.m->ill_opcode = 0;
	ck_assert_int_eq(ik_smmu_gerror_poll(d.s, &ge), 1);
	ck_assert(ge.cmdq_err);
	ck_assert(!cmdq_err_active(d.m));
	ck_assert_int_eq(d.m->acks, 1);
	ik_smmu_get_stats(d.s, &st);
	ck_assert_uint_eq(st.gerrors, 2);
	ck_assert_uint_eq(st.cmdq.replaced, 1);
	dev_fini(&d);
}
END_TEST

START_TEST(event_queue_pops_in_order_wraps_and_reports_overflow)
{
	uint32_t idr[6];
	struct dev d;
	struct ik_smmu_event ev;
	struct ik_smmu_stats st;
	uint64_t rec[4];

	idr_qemu(idr);
	for (int nc = 0; nc <= 1; nc++) {
		dev_init(&d, idr, nc, 0); /* 8 records */
		ck_assert_int_eq(ik_smmu_event_pop(d.s, &ev), -ENOENT);
		/* 20 records in three rounds: the ring wraps */
		uint32_t next = 0;
		for (int round = 0; round < 3; round++) {
			for (int i = 0; i < 7; i++) {
				rec[0] = IK_SMMU_EVT_F_TRANSLATION | (uint64_t)(next + (uint32_t)i) << 32;
				rec[1] = BIT(35);
				rec[2] = 0x1000ull * (next + (uint32_t)i);
				rec[3] = 0;
				model_event(d.m, rec);
			}
			for (int i = 0; i < 7; i++) {
				ck_assert_int_eq(ik_smmu_event_pop(d.s, &ev), 0);
				ck_assert_uint_eq(ev.sid, next);
				ck_assert_uint_eq(ev.addr, 0x1000ull * next);
				ck_assert(ev.rnw && !ev.overflow);
				next++;
			}
			ck_assert_int_eq(ik_smmu_event_pop(d.s, &ev), -ENOENT);
			/* CONS follows PROD, wrap bit included */
			ck_assert_uint_eq(d.m->regs[0x100ac / 4] & 15, d.m->regs[0x100a8 / 4] & 15);
		}
		/* overflow: 8 fit, the 9th toggles PROD.OVFLG */
		for (int i = 0; i < 9; i++) {
			rec[0] = IK_SMMU_EVT_C_BAD_STE | (uint64_t)(100 + i) << 32;
			model_event(d.m, rec);
		}
		ck_assert(d.m->regs[0x100a8 / 4] & (1u << 31));
		ck_assert_int_eq(ik_smmu_event_pop(d.s, &ev), 0);
		ck_assert(ev.overflow);
		ck_assert_uint_eq(ev.sid, 100);
		/* OVACKFLG written to match OVFLG */
		ck_assert_uint_eq(d.m->regs[0x100ac / 4] >> 31, 1);
		for (int i = 1; i < 8; i++) {
			ck_assert_int_eq(ik_smmu_event_pop(d.s, &ev), 0);
			ck_assert(!ev.overflow);
			ck_assert_uint_eq(ev.sid, 100 + (uint32_t)i);
		}
		ck_assert_int_eq(ik_smmu_event_pop(d.s, &ev), -ENOENT);
		ik_smmu_get_stats(d.s, &st);
		ck_assert_uint_eq(st.events, 21 + 8);
		ck_assert_uint_eq(st.evtq_overflows, 1);
		/* an overflow flagged with an empty queue is still acknowledged */
		d.m->regs[0x100a8 / 4] ^= 1u << 31;
		ck_assert_int_eq(ik_smmu_event_pop(d.s, &ev), -ENOENT);
		ck_assert_uint_eq(d.m->regs[0x100ac / 4] >> 31, d.m->regs[0x100a8 / 4] >> 31);
		ik_smmu_get_stats(d.s, &st);
		ck_assert_uint_eq(st.evtq_overflows, 2);
		dev_fini(&d);
	}
}
END_TEST

START_TEST(cd_installed_through_the_object_is_found_by_the_smmu)
{
	uint32_t idr[6];
	struct dev d;
	struct ik_smmu_cdtab t;
	struct ik_smmu_cdtab_config cc;
	struct ik_smmu_ste_config sc;
	struct ik_smmu_cd_config c;
	struct ik_pgtable *pt;
	uint64_t cd[8], ste[8];
	uint32_t sid = 7;

	idr_qemu(idr);
	dev_init(&d, idr, true, 0);
	const struct ik_smmu_idr *id = ik_smmu_get_idr(d.s);
	pt = mk_pt(IK_PT_LPAE_S1, 12, 44, 48, false, 0);
	memset(&cc, 0, sizeof(cc));
	cc.idr = id;
	cc.dma = &d.nc.d;
	ck_assert_int_eq(ik_smmu_cdtab_init(&t, &cc), 0);
	memset(&c, 0, sizeof(c));
	c.pt = pt;
	c.asid = 3;
	ck_assert_int_eq(ik_smmu_cd_build(id, &c, cd), 0);
	ck_assert_int_eq(ik_smmu_write_cd(d.s, &t, 0, cd, &sid, 1), 0);
	memset(&sc, 0, sizeof(sc));
	sc.config = IK_SMMU_STE_CFG_S1;
	ik_smmu_cdtab_ste(&t, &sc);
	ck_assert_uint_eq(sc.s1_cir, IK_SMMU_S1C_NC); /* non-coherent */
	ck_assert_uint_eq(sc.s1_csh, IK_SMMU_SH_OSH);
	ck_assert_int_eq(ik_smmu_ste_build(id, &sc, ste), 0);
	ck_assert_int_eq(ik_smmu_write_ste(d.s, sid, ste), 0);
	/* the SMMU's view: STE -> S1ContextPtr -> the CD, from device memory */
	ck_assert_int_eq(d.m->nfetched, 1);
	uint64_t *f = d.m->fetched[0];
	ck_assert_uint_eq(STE_CFG(f[0]), 5);
	const uint64_t *dcd = (const uint64_t *)(uintptr_t)STE_S1CTXPTR(f[0]);
	ck_assert_int_eq(memcmp(dcd, cd, 64), 0);
	ck_assert_uint_eq(CD_ASID(dcd[0]), 3);
	/* the CFGI_CD came first, with the stream's SID */
	int ncd = 0;
	for (int i = 0; i < d.m->nlog; i++)
		if (d.m->log[i].op == IK_SMMU_CMD_CFGI_CD) {
			ck_assert_uint_eq(d.m->log[i].sid, sid);
			ncd++;
		}
	ck_assert_int_eq(ncd, 1);
	ik_smmu_cdtab_fini(&t);
	ik_pgtable_destroy(pt);
	dev_fini(&d);
}
END_TEST

START_TEST(create_rejects_bad_configs_and_survives_every_allocation_failure)
{
	uint32_t idr[6];
	struct model *m;
	struct ik_mmio io;
	struct cdma cd;
	struct ik_smmu_config cfg;
	struct ik_smmu *s = (struct ik_smmu *)0x1;

	idr_qemu(idr);
	m = model_new(idr);
	io = model_mmio(m);
	cdma_init(&cd);
	memset(&cfg, 0, sizeof(cfg));
	cfg.mmio = &io;
	cfg.dma = &cd.d;
	cfg.alloc = &cd.fa.a;
#define BAD(err, ...) \
	do { \
		struct ik_smmu_config c2 = cfg; \
		struct ik_smmu_config *cp = &c2; \
		__VA_ARGS__; \
		ck_assert_int_eq(ik_smmu_create(cp, &s), err); \
		ck_assert_ptr_eq(s, (struct ik_smmu *)0x1); \
	} while (0)
	BAD(-EINVAL, c2.cmdq_log2 = 20); /* CMDQS 19 */
	BAD(-EINVAL, c2.cmdq_log2 = 1);
	BAD(-EINVAL, c2.evtq_log2 = 1);
	BAD(-EINVAL, c2.sid_bits = 17);
	BAD(-EINVAL, c2.flags = 0x80);
	BAD(-EINVAL, c2.mmio = NULL);
	BAD(-EINVAL, c2.dma = NULL);
	BAD(-EINVAL, cp = NULL);
	ck_assert_int_eq(ik_smmu_create(&cfg, NULL), -EINVAL);
	/* an SMMU the core cannot drive */
	m->regs[0] &= ~(3u << 2);
	BAD(-ENODEV);
	m->regs[0] = idr[0];
	ck_assert_int_eq(cd.fa.live, 0);
	/* every allocation of create failing in turn */
	long k = 1;
	for (;; k++) {
		int r;

		ik_fault_alloc_fail_nth(&cd.fa, k);
		r = ik_smmu_create(&cfg, &s);
		if (r == 0)
			break;
		ck_assert_int_eq(r, -ENOMEM);
		ck_assert_int_eq(cd.fa.live, 0);
	}
	ck_assert_int_ge(k, 5); /* object, L1, L2 book, cmdq ring+state, evtq ring */
	ik_fault_alloc_disarm(&cd.fa);
	ck_assert_int_eq(m->nw, 0);
	ik_smmu_destroy(s); /* never reset: nothing written */
	ck_assert_int_eq(m->nw, 0);
	ck_assert_int_eq(cd.fa.live, 0);
	ik_smmu_destroy(NULL);
#undef BAD
	free(m);
}
END_TEST
/* ================================================================ invalidation planner */

static struct ik_gather hand_gather(uint64_t start, uint64_t size, uint64_t granule, bool walk)
{
	struct ik_gather g;

	ik_gather_init(&g);
	ik_gather_add(&g, start, size, granule);
	g.walk = walk;
	return g;
}

static int plan(const struct ik_smmu_idr *id, struct ik_pgtable *pt, const struct ik_gather *g,
		unsigned stage, unsigned max_tlbi, bool nested, struct ik_smmu_cmd *out, unsigned max)
{
	struct ik_smmu_inv_target t;

	memset(&t, 0, sizeof(t));
	t.stage = stage;
	t.asid = stage == 1 ? 0x1234 : 0;
	t.vmid = 0x56;
	t.nested = nested;
	t.max_tlbi = max_tlbi;
	return ik_smmu_plan_inv(id, pt, g, &t, out, max);
}

START_TEST(plan_stage1_rows_of_the_choice_table)
{
	uint32_t w[6];
	struct ik_smmu_idr ril, noril;
	struct ik_pgtable *pt = mk_pt(IK_PT_LPAE_S1, 12, 48, 48, true, 0);
	struct ik_smmu_cmd out[200];
	struct ik_gather g;
	uint64_t e[2];
	int n;

	idr_full(w);
	ril = decode(w);
	w[3] &= ~(1u << 10);
	noril = decode(w);

	/* empty gather: no commands at all, not even a sync */
	ik_gather_init(&g);
	memset(out, 0x6b, sizeof(out));
	ck_assert_int_eq(plan(&ril, pt, &g, 1, 0, false, out, 200), 0);
	ck_assert_uint_eq(out[0].op, 0x6b);

	/* RIL: 5 pages of 4K -> one range TLBI (NUM 4, SCALE 0, TG 4K), Leaf,
	 * TTL 3 (exact: no 2M block fits), then CMD_SYNC */
	g = hand_gather(0x10000, 5 * 4096, 4096, false);
	n = plan(&ril, pt, &g, 1, 0, false, out, 200);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(ik_smmu_cmd_encode(&out[0], e), 0);
	/* TLBI_NH_VA 0x12, NUM [16:12], SCALE [24:20], VMID [47:32], ASID
	 * [63:48]; Leaf [64], TTL [73:72], TG [75:74], Address[63:12] [127:76] */
	ck_assert_uint_eq(e[0], 0x12 | 4ull << 12 | 0ull << 20 | 0x56ull << 32 | 0x1234ull << 48);
	ck_assert_uint_eq(e[1], 1 | 3ull << 8 | 1ull << 10 | 0x10000ull);
	ck_assert_uint_eq(out[1].op, IK_SMMU_CMD_SYNC);
	ck_assert_uint_eq(out[1].cs, IK_SMMU_SYNC_CS_NONE);

	/* a table entry changed (walk): Leaf 0 and no TTL */
	g = hand_gather(0x10000, 5 * 4096, 4096, true);
	ck_assert_int_eq(plan(&ril, pt, &g, 1, 0, false, out, 200), 2);
	ck_assert(!out[0].leaf);
	ck_assert_uint_eq(out[0].ttl, 0);

	/* a range holding a whole aligned 2M block: 4K leaves or not, TTL 0 */
	g = hand_gather(0x1ff000, (2u << 20) + 8192, 4096, false);
	n = plan(&ril, pt, &g, 1, 0, false, out, 200);
	ck_assert_int_gt(n, 1);
	for (int i = 0; i < n - 1; i++) {
		ck_assert_uint_eq(out[i].ttl, 0);
		ck_assert(out[i].leaf);
	}
	/* one 2M block: TTL 2 (level 2); one 1G block: TTL 1 */
	g = hand_gather(2u << 20, 2u << 20, 2u << 20, false);
	ck_assert_int_eq(plan(&ril, pt, &g, 1, 0, false, out, 200), 2);
	ck_assert_uint_eq(out[0].ttl, 2);
	ck_assert_uint_eq(out[0].num, 0); /* 512 pages: SCALE 9, NUM 0 */
	ck_assert_uint_eq(out[0].scale, 9);
	g = hand_gather(1ull << 30, 1ull << 30, 1ull << 30, false);
	ck_assert_int_eq(plan(&ril, pt, &g, 1, 0, false, out, 200), 2);
	ck_assert_uint_eq(out[0].ttl, 1);

	/* no RIL: one TLBI_NH_VA (TG 0, NUM/SCALE/TTL 0) per gather granule */
	g = hand_gather(0x40000, 3 * 4096, 4096, false);
	ck_assert_int_eq(plan(&noril, pt, &g, 1, 0, false, out, 200), 4);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(ik_smmu_cmd_encode(&out[i], e), 0);
		ck_assert_uint_eq(e[0], 0x12 | 0x56ull << 32 | 0x1234ull << 48);
		ck_assert_uint_eq(e[1], 1 | (0x40000ull + (uint64_t)i * 4096));
	}
	ck_assert_uint_eq(out[3].op, IK_SMMU_CMD_SYNC);
	g = hand_gather(4u << 20, 4u << 20, 2u << 20, false); /* two 2M blocks */
	ck_assert_int_eq(plan(&noril, pt, &g, 1, 0, false, out, 200), 3);
	ck_assert_uint_eq(out[1].addr, 6u << 20);

	/* the threshold (default 128 TLBIs): 128 pages precise, 129 -> ASID */
	g = hand_gather(0, 128 * 4096, 4096, false);
	ck_assert_int_eq(plan(&noril, pt, &g, 1, 0, false, out, 200), 129);
	g = hand_gather(0, 129 * 4096, 4096, false);
	ck_assert_int_eq(plan(&noril, pt, &g, 1, 0, false, out, 200), 2);
	ck_assert_int_eq(ik_smmu_cmd_encode(&out[0], e), 0);
	/* TLBI_NH_ASID 0x11: VMID [47:32], ASID [63:48] */
	ck_assert_uint_eq(e[0], 0x11 | 0x56ull << 32 | 0x1234ull << 48);
	ck_assert_uint_eq(out[1].op, IK_SMMU_CMD_SYNC);
	/* a configured threshold counts commands, not bytes */
	g = hand_gather(0, 3 * 4096, 4096, false);
	ck_assert_int_eq(plan(&noril, pt, &g, 1, 2, false, out, 200), 2);
	ck_assert_uint_eq(out[0].op, IK_SMMU_CMD_TLBI_NH_ASID);
	g = hand_gather(0, 4u << 20, 2u << 20, false); /* 2 commands of 2M */
	ck_assert_int_eq(plan(&noril, pt, &g, 1, 2, false, out, 200), 3);
	/* with RIL the same 129 pages are 2 range TLBIs */
	g = hand_gather(0, 129 * 4096, 4096, false);
	ck_assert_int_eq(plan(&ril, pt, &g, 1, 0, false, out, 200), 3);
	/* an out[] too small for the precise list: the fallback */
	g = hand_gather(0, 5 * 4096, 4096, false);
	ck_assert_int_eq(plan(&noril, pt, &g, 1, 0, false, out, 4), 2);
	ck_assert_uint_eq(out[0].op, IK_SMMU_CMD_TLBI_NH_ASID);
	ck_assert_int_eq(plan(&noril, pt, &g, 1, 0, false, out, 2), 2);
	ck_assert_int_eq(plan(&noril, pt, &g, 1, 0, false, out, 1), -ENOSPC);
	ck_assert_int_eq(plan(&noril, pt, &g, 1, 0, false, out, IK_SMMU_PLAN_MAX_CMDS(5)), 6);
	ik_pgtable_destroy(pt);
}
END_TEST

START_TEST(plan_stage2_rows_and_nesting)
{
	uint32_t w[6];
	struct ik_smmu_idr ril, noril;
	struct ik_pgtable *pt = mk_pt(IK_PT_LPAE_S2, 16, 42, 42, true, 0);
	struct ik_smmu_cmd out[200];
	struct ik_gather g;
	uint64_t e[2];

	idr_full(w);
	ril = decode(w);
	w[3] &= ~(1u << 10);
	noril = decode(w);
	/* RIL: 3 pages of 64K -> TLBI_S2_IPA (TG 64K = 3), VMID, Leaf, TTL 3 */
	g = hand_gather(0x100000, 3 * 65536, 65536, false);
	ck_assert_int_eq(plan(&ril, pt, &g, 2, 0, false, out, 200), 2);
	ck_assert_int_eq(ik_smmu_cmd_encode(&out[0], e), 0);
	/* TLBI_S2_IPA 0x2a: NUM [16:12], SCALE [24:20], VMID [47:32]; Leaf,
	 * TTL [73:72], TG [75:74], IPA[51:12] at [115:76] */
	ck_assert_uint_eq(e[0], 0x2a | 2ull << 12 | 0x56ull << 32);
	ck_assert_uint_eq(e[1], 1 | 3ull << 8 | 3ull << 10 | 0x100000ull);
	/* nested: + TLBI_NH_ALL(VMID) before the sync */
	ck_assert_int_eq(plan(&ril, pt, &g, 2, 0, true, out, 200), 3);
	ck_assert_int_eq(ik_smmu_cmd_encode(&out[1], e), 0);
	ck_assert_uint_eq(e[0], 0x10 | 0x56ull << 32); /* TLBI_NH_ALL: VMID [47:32] */
	ck_assert_uint_eq(out[2].op, IK_SMMU_CMD_SYNC);
	/* no RIL: one per granule */
	ck_assert_int_eq(plan(&noril, pt, &g, 2, 0, true, out, 200), 5);
	ck_assert_uint_eq(out[2].op, IK_SMMU_CMD_TLBI_S2_IPA);
	ck_assert_uint_eq(out[2].addr, 0x100000 + 2 * 65536);
	ck_assert_uint_eq(out[2].tg, 0);
	ck_assert_uint_eq(out[3].op, IK_SMMU_CMD_TLBI_NH_ALL);
	/* over the threshold: TLBI_S12_VMALL (covers the combined entries) */
	ck_assert_int_eq(plan(&noril, pt, &g, 2, 2, true, out, 200), 2);
	ck_assert_int_eq(ik_smmu_cmd_encode(&out[0], e), 0);
	ck_assert_uint_eq(e[0], 0x28 | 0x56ull << 32);
	ck_assert_int_eq(plan(&noril, pt, &g, 2, 0, true, out, 3), 2); /* no room */
	ik_pgtable_destroy(pt);
}
END_TEST

START_TEST(plan_rejects_bad_input_with_nothing_written)
{
	uint32_t w[6];
	struct ik_smmu_idr id, x;
	struct ik_pgtable *a = mk_pt(IK_PT_LPAE_S1, 12, 40, 48, true, 0);
	struct ik_pgtable *b = mk_pt(IK_PT_LPAE_S1, 12, 40, 48, true, 0);
	struct ik_pgtable *s2 = mk_pt(IK_PT_LPAE_S2, 12, 40, 48, true, 0);
	struct ik_smmu_cmd out[8];
	struct ik_smmu_inv_target t;
	struct ik_gather g;

	idr_full(w);
	id = decode(w);
	ck_assert_int_eq(ik_pgtable_map(b, 0x100000, 0x200000, 4096, IK_PROT_READ), 0);
	ik_gather_init(&g);
	ck_assert_int_eq(ik_pgtable_unmap(b, 0x100000, 4096, &g), 4096);
	ck_assert_uint_eq(g.nr_tables, 0); /* leaves only */
	memset(out, 0x6b, sizeof(out));
#define REJECT(expr) \
	do { \
		ck_assert_int_eq(expr, -EINVAL); \
		ck_assert_uint_eq(out[0].op, 0x6b); \
	} while (0)
	/* a gather from another table set (leaf ranges only) */
	REJECT(plan(&id, a, &g, 1, 0, false, out, 8));
	ck_assert_int_eq(plan(&id, b, &g, 1, 0, false, out, 8), 2);
	memset(out, 0x6b, sizeof(out));
	/* stage and format disagree; nested at stage 1 */
	REJECT(plan(&id, s2, &g, 1, 0, false, out, 8));
	struct ik_gather h = hand_gather(0, 4096, 4096, false);
	REJECT(plan(&id, a, &h, 2, 0, false, out, 8));
	REJECT(plan(&id, a, &h, 1, 0, true, out, 8));
	/* ASID / VMID too wide */
	x = id;
	x.asid16 = false;
	memset(&t, 0, sizeof(t));
	t.stage = 1;
	t.asid = 0x100;
	REJECT(ik_smmu_plan_inv(&x, a, &h, &t, out, 8));
	x = id;
	x.vmid16 = false;
	t.asid = 1;
	t.vmid = 0x100;
	REJECT(ik_smmu_plan_inv(&x, a, &h, &t, out, 8));
	/* a range beyond the table set's ias (40 bits) */
	h = hand_gather(1ull << 40, 4096, 4096, false);
	REJECT(plan(&id, a, &h, 1, 0, false, out, 8));
	h = hand_gather(0, 4096, 3000, false); /* a granule that is no power of 2 */
	REJECT(plan(&id, a, &h, 1, 0, false, out, 8));
	/* NULL arguments */
	t.vmid = 0;
	REJECT(ik_smmu_plan_inv(NULL, a, &h, &t, out, 8));
	REJECT(ik_smmu_plan_inv(&id, NULL, &h, &t, out, 8));
	REJECT(ik_smmu_plan_inv(&id, a, NULL, &t, out, 8));
	REJECT(ik_smmu_plan_inv(&id, a, &h, NULL, out, 8));
	ck_assert_int_eq(ik_smmu_plan_inv(&id, a, &h, &t, NULL, 8), -EINVAL);
#undef REJECT
	ik_pgtable_gather_sync(b, &g);
	ik_pgtable_destroy(a);
	ik_pgtable_destroy(b);
	ik_pgtable_destroy(s2);
}
END_TEST

/* Map, let a "device" fill the soft IOMMU's IOTLB, unmap, execute the plan
 * in the soft IOMMU, remap the IOVAs elsewhere: with stale checking on, a
 * missing invalidation is a refused access and a report. */
struct stale_case {
	enum ik_pt_fmt fmt;
	bool ril;
	unsigned max_tlbi;
	bool nested;
};

static int stale_run(const struct stale_case *sc, bool skip_plan)
{
	uint32_t w[6];
	struct ik_smmu_idr id;
	struct ik_softiommu_config cfg;
	struct ik_softiommu *s;
	struct ik_pgtable *pt;
	struct ik_pt_walker wk;
	unsigned stage = sc->fmt == IK_PT_LPAE_S1 ? 1 : 2;
	uint32_t tag = stage == 1 ? 0x1234 : 0x56;
	uint8_t *a, *b;
	/* [iova, size) ranges, each in a 1 GiB region of its own, at offset
	 * `pa` of the buffers: pages, a 2M block, pages whose unmap empties a
	 * whole table, a partial unmap of a block (split).  (One region each:
	 * the soft IOMMU's walk-cache check takes a block's table, cached for
	 * its whole span, for stale once a table is installed beside the
	 * block - a false positive of the model, not a missing invalidation.) */
	static const struct { uint64_t iova, size, unmap_off, unmap_size, pa; } r[] = {
		{ 0x40000000, 6 * 4096, 0, 6 * 4096, 0 },
		{ 0x80000000, 2u << 20, 0, 2u << 20, 2u << 20 },
		{ 0xc0000000, 2u << 20, 0, 2u << 20, 4u << 20 },
		{ 0x100000000, 2u << 20, 4096, 8192, 6u << 20 },
	};
	int stale = 0;

	idr_full(w);
	if (!sc->ril)
		w[3] &= ~(1u << 10);
	id = decode(w);
	ik_softiommu_config_init(&cfg);
	cfg.flags = IK_SOFTIOMMU_CHECK;
	cfg.phys_to_host = ik_softiommu_host_identity; /* the tables map host buffers */
	ck_assert_int_eq(ik_softiommu_create(&cfg, &s), 0);
	pt = mk_pt(sc->fmt, 12, 40, 48, true, 0);
	ik_pgtable_walker(pt, &wk);
	ck_assert_int_eq(ik_softiommu_attach_pt(s, 0, tag, &wk, &ik_softiommu_host_mem), 0);
	ck_assert_int_eq(posix_memalign((void **)&a, 2u << 20, 8u << 20), 0);
	ck_assert_int_eq(posix_memalign((void **)&b, 2u << 20, 8u << 20), 0);
	memset(a, 0xaa, 8u << 20);
	memset(b, 0xbb, 8u << 20);
	for (unsigned i = 0; i < IK_ARRAY_SIZE(r); i++) {
		uint64_t pa = (uint64_t)(uintptr_t)a + r[i].pa;
		bool pages = i == 0 || i == 2;

		if (pages)
			ck_assert_int_eq(ik_pgtable_map_pages(pt, r[i].iova, pa, 4096, r[i].size / 4096,
							      IK_PROT_READ | IK_PROT_WRITE), 0);
		else
			ck_assert_int_eq(ik_pgtable_map(pt, r[i].iova, pa, r[i].size,
							IK_PROT_READ | IK_PROT_WRITE), 0);
		for (uint64_t o = 0; o < r[i].size; o += 4096) {
			uint8_t v;

			int e_ = ik_softiommu_dma_read(s, 0, r[i].iova + o, &v, 1);
			struct ik_softiommu_fault f_;

			if (e_ && ik_softiommu_fault_pop(s, &f_) == 0)
				ck_abort_msg("fmt %d range %u off %llx: fault type %u level %u", sc->fmt, i,
					     (unsigned long long)o, f_.type, f_.level);
			ck_assert_uint_eq(v, 0xaa);
		}
	}
	for (unsigned i = 0; i < IK_ARRAY_SIZE(r); i++) {
		struct ik_gather g;
		struct ik_smmu_inv_target t;
		struct ik_smmu_cmd out[IK_SMMU_PLAN_MAX_CMDS(IK_SMMU_PLAN_DEFAULT_MAX_TLBI)];
		uint64_t iova = r[i].iova + r[i].unmap_off, size = r[i].unmap_size;
		int n;

		ik_gather_init(&g);
		ck_assert_int_eq(ik_pgtable_unmap(pt, iova, size, &g), (int64_t)size);
		memset(&t, 0, sizeof(t));
		t.stage = stage;
		t.asid = stage == 1 ? 0x1234 : 0;
		t.vmid = 0x56;
		t.max_tlbi = sc->max_tlbi;
		t.nested = sc->nested;
		n = ik_smmu_plan_inv(&id, pt, &g, &t, out, IK_ARRAY_SIZE(out));
		ck_assert_int_ge(n, 2);
		ck_assert_uint_eq(out[n - 1].op, IK_SMMU_CMD_SYNC);
		if (i == 3 || i == 2)
			ck_assert(g.walk);
		for (int k = 0; k < n && !skip_plan; k++)
			ck_assert_int_eq(ik_softiommu_exec_smmu(s, &out[k]), 0);
		ck_assert_int_eq(ik_pgtable_gather_sync(pt, &g), 0);
		/* the IOVAs now lead to b */
		ck_assert_int_eq(ik_pgtable_map(pt, iova,
						(uint64_t)(uintptr_t)b + r[i].pa + r[i].unmap_off, size,
						IK_PROT_READ | IK_PROT_WRITE), 0);
	}
	for (unsigned i = 0; i < IK_ARRAY_SIZE(r); i++)
		for (uint64_t o = 0; o < r[i].size; o += 4096) {
			uint64_t iova = r[i].iova + o;
			bool moved = o >= r[i].unmap_off && o < r[i].unmap_off + r[i].unmap_size;
			uint8_t v = 0;
			int e = ik_softiommu_dma_read(s, 0, iova, &v, 1);

			if (e) {
				struct ik_softiommu_stale rep;

				ck_assert_int_eq(ik_softiommu_stale_pop(s, &rep), 0);
				stale++;
				continue;
			}
			ck_assert_uint_eq(v, moved ? 0xbb : 0xaa);
		}
	ik_pgtable_destroy(pt);
	ik_softiommu_destroy(s);
	free(a);
	free(b);
	return stale;
}

START_TEST(planned_commands_leave_no_stale_translation_in_the_soft_iommu)
{
	static const struct stale_case cases[] = {
		{ IK_PT_LPAE_S1, true, 0, false }, { IK_PT_LPAE_S1, false, 0, false },
		{ IK_PT_LPAE_S1, false, 4, false }, { IK_PT_LPAE_S1, true, 1, false },
		{ IK_PT_LPAE_S2, true, 0, false }, { IK_PT_LPAE_S2, false, 0, true },
		{ IK_PT_LPAE_S2, false, 3, false },
	};

	for (unsigned k = 0; k < IK_ARRAY_SIZE(cases); k++)
		ck_assert_msg(stale_run(&cases[k], false) == 0, "case %u left stale entries", k);
	/* the oracle notices a missing invalidation */
	ck_assert_int_gt(stale_run(&cases[0], true), 0);
}
END_TEST

START_TEST(inv_gather_through_the_smmu_model_reaches_the_soft_iommu)
{
	uint32_t idr[6];
	struct dev d;
	struct ik_softiommu_config cfg;
	struct ik_softiommu *s;
	struct ik_pgtable *pt;
	struct ik_pt_walker wk;
	struct ik_smmu_inv_target t;
	struct ik_gather g;
	uint8_t *a, *b, v;

	idr_qemu(idr);
	idr[3] &= ~(1u << 10); /* no RIL: 40 pages pass the 12-TLBI cap */
	dev_init(&d, idr, false, 0);
	ik_softiommu_config_init(&cfg);
	cfg.flags = IK_SOFTIOMMU_CHECK;
	cfg.phys_to_host = ik_softiommu_host_identity; /* the tables map host buffers */
	ck_assert_int_eq(ik_softiommu_create(&cfg, &s), 0);
	d.m->soft = s;
	pt = mk_pt(IK_PT_LPAE_S1, 12, 44, 48, true, 0);
	ik_pgtable_walker(pt, &wk);
	ck_assert_int_eq(ik_softiommu_attach_pt(s, 0, 9, &wk, &ik_softiommu_host_mem), 0);
	ck_assert_int_eq(posix_memalign((void **)&a, 4096, 64 * 4096), 0);
	ck_assert_int_eq(posix_memalign((void **)&b, 4096, 64 * 4096), 0);
	memset(a, 1, 64 * 4096);
	memset(b, 2, 64 * 4096);
	memset(&t, 0, sizeof(t));
	t.stage = 1;
	t.asid = 9;
	for (int round = 0; round < 3; round++) {
		uint64_t n = round == 2 ? 40 : 5; /* round 2: past the 12-TLBI cap */

		ck_assert_int_eq(ik_pgtable_map(pt, 0x100000, (uint64_t)(uintptr_t)a, n * 4096,
						IK_PROT_READ | IK_PROT_WRITE), 0);
		for (uint64_t i = 0; i < n; i++) {
			ck_assert_int_eq(ik_softiommu_dma_read(s, 0, 0x100000 + i * 4096, &v, 1), 0);
			ck_assert_uint_eq(v, 1);
		}
		ik_gather_init(&g);
		ck_assert_int_eq(ik_pgtable_unmap(pt, 0x100000, n * 4096, &g), (int64_t)(n * 4096));
		ck_assert_int_eq(ik_smmu_inv_gather(d.s, pt, &g, &t), 0);
		ck_assert_int_eq(ik_pgtable_gather_sync(pt, &g), 0);
		ck_assert_int_eq(ik_pgtable_map(pt, 0x100000, (uint64_t)(uintptr_t)b, n * 4096,
						IK_PROT_READ | IK_PROT_WRITE), 0);
		for (uint64_t i = 0; i < n; i++) {
			ck_assert_int_eq(ik_softiommu_dma_read(s, 0, 0x100000 + i * 4096, &v, 1), 0);
			ck_assert_uint_eq(v, 2);
		}
		ik_gather_init(&g);
		ck_assert_int_eq(ik_pgtable_unmap(pt, 0x100000, n * 4096, &g), (int64_t)(n * 4096));
		ck_assert_int_eq(ik_smmu_inv_gather(d.s, pt, &g, &t), 0);
		ck_assert_int_eq(ik_pgtable_gather_sync(pt, &g), 0);
	}
	struct ik_softiommu_stats st;
	ck_assert_int_eq(ik_softiommu_stats(s, &st), 0);
	ck_assert_uint_eq(st.stale, 0);
	ck_assert_uint_gt(st.inv_range, 0);
	ck_assert_uint_gt(st.inv_tag, 0); /* round 2 fell back to TLBI_NH_ASID */
	/* an empty gather issues nothing */
	int before = d.m->nlog;
	ik_gather_init(&g);
	ck_assert_int_eq(ik_smmu_inv_gather(d.s, pt, &g, &t), 0);
	ck_assert_int_eq(d.m->nlog, before);
	d.m->soft = NULL;
	ik_softiommu_destroy(s);
	ik_pgtable_destroy(pt);
	free(a);
	free(b);
	dev_fini(&d);
}
END_TEST

START_TEST(null_pointer_arguments_are_einval)
{
	uint32_t idr[6];
	struct dev d;
	uint64_t ste[8] = { 0 };
	struct ik_smmu_event ev;
	struct ik_smmu_idr id;
	struct ik_smmu_inv_target t;
	struct ik_gather g;

	dev_init_qemu(&d);
	ck_assert_int_eq(ik_smmu_idr_decode(NULL, 0, 0, &id), -EINVAL);
	ck_assert_int_eq(ik_smmu_idr_decode(idr, 0, 0, NULL), -EINVAL);
	ck_assert_int_eq(ik_smmu_probe(NULL, &id), -EINVAL);
	ck_assert_int_eq(ik_smmu_probe(&d.io, NULL), -EINVAL);
	ck_assert_int_eq(ik_smmu_idr_usable(NULL), -EINVAL);
	ck_assert_int_eq(ik_smmu_reset(NULL), -EINVAL);
	ck_assert_int_eq(ik_smmu_disable(NULL), -EINVAL);
	ck_assert_int_eq(ik_smmu_issue(NULL, NULL, 0), -EINVAL);
	ck_assert_int_eq(ik_smmu_issue(d.s, NULL, 1), -EINVAL);
	struct ik_smmu_cmd bad;
	memset(&bad, 0, sizeof(bad));
	bad.op = 0x77;
	int before = d.m->nlog;
	ck_assert_int_eq(ik_smmu_issue(d.s, &bad, 1), -EINVAL); /* nothing issued */
	ck_assert_int_eq(d.m->nlog, before);
	ck_assert_int_eq(ik_smmu_write_ste(NULL, 0, ste), -EINVAL);
	ck_assert_int_eq(ik_smmu_write_ste(d.s, 0, NULL), -EINVAL);
	ck_assert_int_eq(ik_smmu_write_ste(d.s, 1u << 16, ste), -EINVAL); /* SID range */
	ck_assert_int_eq(ik_smmu_write_cd(NULL, NULL, 0, ste, NULL, 0), -EINVAL);
	ck_assert_int_eq(ik_smmu_write_cd(d.s, NULL, 0, ste, NULL, 0), -EINVAL);
	ck_assert_int_eq(ik_smmu_event_pop(NULL, &ev), -EINVAL);
	ck_assert_int_eq(ik_smmu_event_pop(d.s, NULL), -EINVAL);
	ck_assert_int_eq(ik_smmu_gerror_poll(NULL, NULL), -EINVAL);
	memset(&t, 0, sizeof(t));
	t.stage = 1;
	ik_gather_init(&g);
	ck_assert_int_eq(ik_smmu_inv_gather(NULL, NULL, &g, &t), -EINVAL);
	ck_assert_int_eq(ik_smmu_inv_gather(d.s, NULL, &g, &t), -EINVAL);
	ck_assert_int_eq(ik_smmu_inv_gather(d.s, NULL, &g, NULL), -EINVAL);
	ck_assert_int_eq(ik_smmu_strtab_write(NULL, 0, ste, NULL, NULL), -EINVAL);
	ck_assert_int_eq(ik_smmu_strtab_read(NULL, 0, ste), -EINVAL);
	ck_assert_int_eq(ik_smmu_cdtab_write(NULL, 0, ste, NULL, 0, NULL, NULL), -EINVAL);
	ck_assert_int_eq(ik_smmu_cdtab_read(NULL, 0, ste), -EINVAL);
	ck_assert_int_eq(ik_smmu_cdtab_init(NULL, NULL), -EINVAL);
	ik_smmu_cdtab_fini(NULL);
	ik_smmu_strtab_fini(NULL);
	dev_fini(&d);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("drv_smmuv3");
	TCase *tc = tcase_create("desc");

	tcase_add_test(tc, idr_fields_decode_at_spec_positions);
	tcase_add_test(tc, probe_reads_id_registers_and_usable_refuses_what_the_core_cannot_drive);
	tcase_add_test(tc, ste_abort_and_bypass_at_spec_positions);
	tcase_add_test(tc, ste_stage1_fields_at_spec_positions);
	tcase_add_test(tc, ste_stage2_fields_come_from_the_table_set_at_spec_positions);
	tcase_add_test(tc, cd_and_ste_carry_52_bit_tables_at_spec_positions);
	tcase_add_test(tc, ste_rejects_what_the_smmu_lacks_with_nothing_written);
	tcase_add_test(tc, cd_fields_at_spec_positions_not_tcr_positions);
	tcase_add_test(tc, cd_flags_and_dirty_tracking_at_spec_positions);
	tcase_add_test(tc, cd_rejects_granule_asid_dirty_and_stall_the_smmu_lacks);
	tcase_add_test(tc, cd_decoded_by_spec_walks_like_the_table_set);
	tcase_add_test(tc, event_fields_decode_at_spec_positions);
	tcase_add_test(tc, gerror_decode_names_the_active_bits);
	suite_add_tcase(s, tc);

	tc = tcase_create("tables");
	tcase_add_test(tc, strtab_linear_layout_and_registers);
	tcase_add_test(tc, strtab_two_level_allocates_l2_on_demand_with_span_and_l2ptr);
	tcase_add_test(tc, strtab_init_rejects_bad_sizes_and_fails_cleanly);
	tcase_add_test(tc, ste_updates_are_never_seen_half_written);
	tcase_add_test(tc, cdtab_layouts_l1cd_descriptors_and_cfgi_cd_per_stream);
	tcase_add_test(tc, cfgi_command_helpers);
	suite_add_tcase(s, tc);

	tc = tcase_create("device");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, bringup_programs_the_smmu_in_order);
	tcase_add_test(tc, bringup_on_a_non_coherent_smmu_uses_nc_attributes_and_cleans_what_it_reads);
	tcase_add_test(tc, every_wait_is_bounded);
	tcase_add_test(tc, illegal_command_is_replaced_reported_and_the_queue_runs_again);
	tcase_add_test(tc, cons_err_without_an_active_gerror_is_not_an_error);
	tcase_add_test(tc, fetch_abort_is_retried_and_the_command_runs);
	tcase_add_test(tc, gerror_poll_acknowledges_other_errors_and_leaves_cmdq_err_to_the_queue);
	tcase_add_test(tc, event_queue_pops_in_order_wraps_and_reports_overflow);
	tcase_add_test(tc, cd_installed_through_the_object_is_found_by_the_smmu);
	tcase_add_test(tc, create_rejects_bad_configs_and_survives_every_allocation_failure);
	tcase_add_test(tc, null_pointer_arguments_are_einval);
	suite_add_tcase(s, tc);

	tc = tcase_create("plan");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, plan_stage1_rows_of_the_choice_table);
	tcase_add_test(tc, plan_stage2_rows_and_nesting);
	tcase_add_test(tc, plan_rejects_bad_input_with_nothing_written);
	tcase_add_test(tc, planned_commands_leave_no_stale_translation_in_the_soft_iommu);
	tcase_add_test(tc, inv_gather_through_the_smmu_model_reaches_the_soft_iommu);
	suite_add_tcase(s, tc);
	return s;
}
