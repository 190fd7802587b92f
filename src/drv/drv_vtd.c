/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The VT-d driver core (<iommukit/drv/vtd.h>): capability decoding, the
 * invalidation queue's register hooks, fault records, unit bring-up and
 * teardown.  Tables are src/drv/vtd_tables.c, the invalidation planner
 * src/drv/vtd_plan.c.  Register positions from the VT-d specification's
 * "Register descriptions".
 */
#include "vtd_int.h"
#include "drv_int.h"

/* ---------------------------------------------------------------- capabilities */

IK_API int ik_vtd_hwcaps_decode(ik_u32 ver, ik_u64 cap, ik_u64 ecap, struct ik_vtd_hwcaps *o)
{
	if (!o)
		return -EINVAL;
	IK_ENV_MEMSET(o, 0, sizeof(*o));
	o->cap = cap;
	o->ecap = ecap;
	o->ver = ver;
	o->ver_major = (ik_u8)IK_VTD_VER_MAJOR(ver);
	o->ver_minor = (ik_u8)IK_VTD_VER_MINOR(ver);
	o->nd = (ik_u8)IK_VTD_CAP_ND(cap);
	/* ND = 7 is reserved; never more than 16 bits of DID. */
	o->domains = o->nd >= 7 ? 0 : (ik_u32)1 << (4 + 2 * o->nd);
	o->afl = cap & IK_VTD_CAP_AFL;
	o->rwbf = cap & IK_VTD_CAP_RWBF;
	o->plmr = cap & IK_VTD_CAP_PLMR;
	o->phmr = cap & IK_VTD_CAP_PHMR;
	o->cm = cap & IK_VTD_CAP_CM;
	o->sagaw = (ik_u8)IK_VTD_CAP_SAGAW(cap);
	o->mgaw = (ik_u8)IK_VTD_CAP_MGAW(cap);
	o->zlr = cap & IK_VTD_CAP_ZLR;
	o->fro = IK_VTD_CAP_FRO(cap);
	o->sllps = (ik_u8)IK_VTD_CAP_SLLPS(cap);
	o->psi = cap & IK_VTD_CAP_PSI;
	o->nfr = (ik_u16)IK_VTD_CAP_NFR(cap);
	o->mamv = (ik_u8)IK_VTD_CAP_MAMV(cap);
	o->dwd = cap & IK_VTD_CAP_DWD;
	o->drd = cap & IK_VTD_CAP_DRD;
	o->fl1gp = cap & IK_VTD_CAP_FL1GP;
	o->pi = cap & IK_VTD_CAP_PI;
	o->fl5lp = cap & IK_VTD_CAP_FL5LP;
	o->ecmds = cap & IK_VTD_CAP_ECMDS;
	o->esirtps = cap & IK_VTD_CAP_ESIRTPS;
	o->esrtps = cap & IK_VTD_CAP_ESRTPS;
	o->c = ecap & IK_VTD_ECAP_C;
	o->qi = ecap & IK_VTD_ECAP_QI;
	o->dt = ecap & IK_VTD_ECAP_DT;
	o->ir = ecap & IK_VTD_ECAP_IR;
	o->eim = ecap & IK_VTD_ECAP_EIM;
	o->pt = ecap & IK_VTD_ECAP_PT;
	o->sc = ecap & IK_VTD_ECAP_SC;
	o->iro = IK_VTD_ECAP_IRO(ecap);
	o->mhmv = (ik_u8)IK_VTD_ECAP_MHMV(ecap);
	o->mts = ecap & IK_VTD_ECAP_MTS;
	o->nest = ecap & IK_VTD_ECAP_NEST;
	o->prs = ecap & IK_VTD_ECAP_PRS;
	o->ers = ecap & IK_VTD_ECAP_ERS;
	o->srs = ecap & IK_VTD_ECAP_SRS;
	o->nwfs = ecap & IK_VTD_ECAP_NWFS;
	o->eafs = ecap & IK_VTD_ECAP_EAFS;
	o->pss = (ik_u8)IK_VTD_ECAP_PSS(ecap);
	o->pasid_bits = (ik_u8)(o->pss + 1);
	o->pasid = ecap & IK_VTD_ECAP_PASID;
	o->dit = ecap & IK_VTD_ECAP_DIT;
	o->pds = ecap & IK_VTD_ECAP_PDS;
	o->smts = ecap & IK_VTD_ECAP_SMTS;
	o->vcs = ecap & IK_VTD_ECAP_VCS;
	o->slads = ecap & IK_VTD_ECAP_SLADS;
	o->slts = ecap & IK_VTD_ECAP_SLTS;
	o->flts = ecap & IK_VTD_ECAP_FLTS;
	o->smpwc = ecap & IK_VTD_ECAP_SMPWC;
	o->rps = ecap & IK_VTD_ECAP_RPS;
	o->pms = ecap & IK_VTD_ECAP_PMS;
	o->adms = ecap & IK_VTD_ECAP_ADMS;
	o->rprivs = ecap & IK_VTD_ECAP_RPRIVS;
	return 0;
}

/* ---------------------------------------------------------------- queue registers */

#define QI_ERRORS (IK_VTD_FSTS_IQE | IK_VTD_FSTS_ITE | IK_VTD_FSTS_ICE)

static ik_u32 qi_read_cons(void *ctx, ik_u32 *cerror)
{
	struct ik_vtd_qi *qi = (struct ik_vtd_qi *)ctx;
	/* The error state first, then the index (edge C1: the accessor
	 * orders the read before later loads of the ring). */
	ik_u32 fsts = ik_mmio_read32(qi->mmio, IK_VTD_REG_FSTS);
	ik_u32 ce = IK_CMDQ_CERROR_NONE, iqh;

	if (fsts & IK_VTD_FSTS_IQE)
		ce = IK_CMDQ_CERROR_ILL;
	else if (fsts & (IK_VTD_FSTS_ITE | IK_VTD_FSTS_ICE))
		ce = IK_CMDQ_CERROR_ATC_INV_SYNC;
	if (ce)
		ik_store_relaxed(&qi->iqercd, ik_mmio_read64(qi->mmio, IK_VTD_REG_IQERCD));
	iqh = ik_mmio_read32(qi->mmio, IK_VTD_REG_IQH);
	*cerror = ce;
	return ((iqh & 0x7fff0u) >> qi->shift) & qi->mask;
}

static void qi_write_prod(void *ctx, ik_u32 prod)
{
	struct ik_vtd_qi *qi = (struct ik_vtd_qi *)ctx;

	/* R2: the accessor orders the ring stores before the register write.
	 * The lock keeps ack_error's IQT rewrite from going backwards. */
	ik_lock(&qi->lock);
	qi->tail = prod & qi->mask;
	ik_mmio_write32(qi->mmio, IK_VTD_REG_IQT, qi->tail << qi->shift);
	ik_unlock(&qi->lock);
}

static void qi_ack_error(void *ctx)
{
	struct ik_vtd_qi *qi = (struct ik_vtd_qi *)ctx;
	ik_u32 fsts;

	/* E1: the repaired descriptor is stored before these writes (the
	 * accessor's write barrier).  Clear the error bits that are set (RW1C),
	 * then write IQT again: QEMU 7.2 fetches only on an IQT write. */
	ik_lock(&qi->lock);
	fsts = ik_mmio_read32(qi->mmio, IK_VTD_REG_FSTS) & QI_ERRORS;
	if (fsts)
		ik_mmio_write32(qi->mmio, IK_VTD_REG_FSTS, fsts);
	ik_mmio_write32(qi->mmio, IK_VTD_REG_IQT, qi->tail << qi->shift);
	ik_store_relaxed(&qi->errors, qi->errors + 1);
	ik_unlock(&qi->lock);
}

IK_API const struct ik_cmdq_regs ik_vtd_qi_regs = {
	qi_read_cons, qi_write_prod, NULL, qi_ack_error,
};

IK_API int ik_vtd_qi_init(struct ik_vtd_qi *qi, const struct ik_mmio *mmio,
			  unsigned log2_entries, bool dw)
{
	unsigned lo = dw ? 7 : 8;

	if (!qi || !mmio || log2_entries < lo || log2_entries > lo + IK_VTD_IQA_QS_MAX)
		return -EINVAL;
	IK_ENV_MEMSET(qi, 0, sizeof(*qi));
	qi->mmio = mmio;
	qi->shift = dw ? IK_VTD_IQ_SHIFT_256 : IK_VTD_IQ_SHIFT_128;
	qi->mask = ((ik_u32)1 << log2_entries) - 1;
	ik_lock_init(&qi->lock);
	return 0;
}

IK_API int ik_vtd_iqercd_decode(ik_u64 v, struct ik_vtd_iqerr *o)
{
	if (!o)
		return -EINVAL;
	o->iqei = (ik_u8)(v & 0xf);
	o->itesid = (ik_u16)(v >> 32);
	o->icesid = (ik_u16)(v >> 48);
	return 0;
}

IK_API const char *ik_vtd_iqei_name(unsigned iqei)
{
	switch (iqei) {
	case IK_VTD_IQEI_NONE: return "no information";
	case IK_VTD_IQEI_TAIL: return "invalid tail pointer";
	case IK_VTD_IQEI_FETCH: return "descriptor fetch error";
	case IK_VTD_IQEI_TYPE: return "invalid descriptor type";
	case IK_VTD_IQEI_RESERVED: return "reserved field set";
	case IK_VTD_IQEI_WIDTH: return "invalid descriptor width";
	default: return NULL;
	}
}

/* ---------------------------------------------------------------- faults */

IK_API int ik_vtd_fault_decode(const ik_u64 rec[2], struct ik_vtd_fault *f)
{
	ik_u64 hi;

	if (!rec || !f)
		return -EINVAL;
	IK_ENV_MEMSET(f, 0, sizeof(*f));
	hi = rec[1];
	if (!(hi & IK_VTD_FRCD_HI_F))
		return -ENOENT;
	f->addr = rec[0] & ~(ik_u64)0xfff;		/* 63:12 FI */
	f->sid = (ik_u16)hi;				/* 79:64 */
	f->t2 = (hi >> 28) & 1;				/* 92 */
	f->priv = (hi >> 29) & 1;			/* 93 */
	f->exe = (hi >> 30) & 1;			/* 94 */
	f->pp = (hi >> 31) & 1;				/* 95 */
	f->reason = (ik_u8)(hi >> 32);			/* 103:96 */
	f->pasid = (ik_u32)(hi >> 40) & 0xfffff;	/* 123:104 */
	f->at = (ik_u8)((hi >> 60) & 3);		/* 125:124 */
	f->write = !(hi & IK_VTD_FRCD_HI_T);		/* 126: 0 = write */
	return 0;
}

/* Fault reasons: appendix "Non-recoverable fault reason encodings". */
static const char *const legacy_reasons[] = {
	NULL,
	"root entry not present",
	"context entry not present",
	"invalid context entry",
	"address beyond MGAW/AGAW",
	"write to a page without write permission",
	"read of a page without read permission",
	"error reading a second-level paging entry",
	"error reading the root entry",
	"error reading the context entry",
	"reserved field set in the root entry",
	"reserved field set in the context entry",
	"reserved field set in a second-level paging entry",
	"request blocked by the context entry's translation type",
	"output address in the interrupt address range",
};

static const char *const ir_reasons[] = {
	"reserved field set in the interrupt request",
	"interrupt index beyond the table",
	"interrupt table entry not present",
	"error reading the interrupt remapping table",
	"reserved field set in the interrupt table entry",
	"compatibility-format interrupt blocked",
	"interrupt blocked by source-id verification",
};

struct reason {
	ik_u8 code;
	const char *name;
};

static const struct reason sm_reasons[] = {
	{ 0x30, "SM: invalid root table address" },
	{ 0x31, "SM: legacy TTM for a request with PASID" },
	{ 0x32, "SM: legacy TTM for a page request" },
	{ 0x38, "SM: error reading the root entry" },
	{ 0x39, "SM: root entry not present" },
	{ 0x3a, "SM: reserved field set in the root entry" },
	{ 0x40, "SM: error reading the context entry" },
	{ 0x41, "SM: context entry not present" },
	{ 0x42, "SM: reserved field set in the context entry" },
	{ 0x43, "SM: invalid context entry" },
	{ 0x44, "SM: device-TLB not enabled (DTE clear)" },
	{ 0x45, "SM: requests with PASID not enabled (PASIDE clear)" },
	{ 0x46, "SM: PASID beyond the context entry's directory" },
	{ 0x47, "SM: page requests not enabled (PRE clear)" },
	{ 0x48, "SM: RID_PASID error in the context entry" },
	{ 0x50, "SM: error reading the PASID directory entry" },
	{ 0x51, "SM: PASID directory entry not present" },
	{ 0x52, "SM: reserved field set in the PASID directory entry" },
	{ 0x58, "SM: error reading the PASID table entry" },
	{ 0x59, "SM: PASID table entry not present" },
	{ 0x5a, "SM: reserved field set in the PASID table entry" },
	{ 0x5b, "SM: invalid PASID table entry" },
	{ 0x5c, "SM: execute request with ERE clear" },
	{ 0x5d, "SM: supervisor request with SRE clear" },
	{ 0x70, "SM: error reading a first-level paging entry" },
	{ 0x71, "SM: first-level paging entry not present" },
	{ 0x72, "SM: reserved field set in a first-level paging entry" },
	{ 0x73, "SM: error reading a nested FL-PML4 entry" },
	{ 0x74, "SM: nested first-level entry address beyond MGAW" },
	{ 0x75, "SM: nested FL-PML4 read permission error" },
	{ 0x76, "SM: nested first-level read permission error" },
	{ 0x77, "SM: nested first-level write permission error" },
	{ 0x78, "SM: error reading a second-level paging entry" },
	{ 0x79, "SM: second-level read/write permission error" },
	{ 0x7a, "SM: reserved field set in a second-level paging entry" },
	{ 0x7b, "SM: invalid second-level table pointer" },
	{ 0x7c, "SM: second-level A/D update to a non-snooped entry" },
	{ 0x80, "SM: first-level address not canonical" },
	{ 0x81, "SM: user request to a supervisor page" },
	{ 0x82, "SM: execute request without execute permission" },
	{ 0x83, "SM: address beyond the unit's maximum" },
	{ 0x84, "SM: second-level entry address beyond the maximum" },
	{ 0x85, "SM: write without write permission" },
	{ 0x86, "SM: read without read permission" },
	{ 0x87, "SM: output address in the interrupt range" },
	{ 0x90, "SM: first-level A/D update to a non-snooped entry" },
};

IK_API const char *ik_vtd_fault_reason_name(unsigned r)
{
	if (r < IK_ARRAY_SIZE(legacy_reasons))
		return legacy_reasons[r];
	if (r >= 0x20 && r - 0x20 < IK_ARRAY_SIZE(ir_reasons))
		return ir_reasons[r - 0x20];
	for (unsigned i = 0; i < IK_ARRAY_SIZE(sm_reasons); i++)
		if (sm_reasons[i].code == r)
			return sm_reasons[i].name;
	return NULL;
}

/* ---------------------------------------------------------------- the unit */

static ik_u32 rd32(const struct ik_vtd *u, ik_u32 off)
{
	return ik_mmio_read32(&u->mmio, off);
}

static void wr32(const struct ik_vtd *u, ik_u32 off, ik_u32 v)
{
	ik_mmio_write32(&u->mmio, off, v);
}

int ik_vtd_page_alloc(struct ik_vtd *u, ik_size size, ik_size align, struct vtd_page *pg)
{
	ik_u64 dma;
	void *cpu;
	int err = ik_drv_dma_alloc_below(&u->dma, size, align, u->haw, &cpu, &dma);

	if (err)
		return err;
	pg->cpu = cpu;
	pg->dma = dma;
	u->st.tables++;
	return 0;
}

void ik_vtd_page_free(struct ik_vtd *u, struct vtd_page *pg, ik_size size)
{
	if (pg->cpu)
		ik_dma_free(&u->dma, pg->cpu, pg->dma, size);
	pg->cpu = NULL;
	pg->dma = 0;
}

void ik_vtd_tables_clean(const struct ik_vtd *u, const void *cpu, ik_u64 dma, ik_size size)
{
	if (!u->caps.c)
		ik_dma_clean(&u->dma, cpu, dma, size);
}

/* Poll GSTS until `bit` is set (want) or clear: 0 or -ETIMEDOUT. */
static int wait_gsts(const struct ik_vtd *u, ik_u32 bit, bool want)
{
	ik_u64 deadline = 0;

	for (;;) {
		ik_u32 g = rd32(u, IK_VTD_REG_GSTS);

		if (((g & bit) != 0) == want)
			return 0;
		if (ik_drv_poll_step(&deadline, u->timeout))
			return -ETIMEDOUT;
	}
}

/* One GCMD write: the persistent bits as GSTS shows them, with `cmd` set
 * (on) or cleared; one-shot bits are never written back.  Then wait for
 * GSTS.sts to become `want`. */
static int gcmd(const struct ik_vtd *u, ik_u32 cmd, bool on, ik_u32 sts, bool want)
{
	ik_u32 v = rd32(u, IK_VTD_REG_GSTS) & IK_VTD_GSTS_PERSISTENT;

	v = on ? v | cmd : v & ~cmd;
	wr32(u, IK_VTD_REG_GCMD, v);
	return wait_gsts(u, sts, want);
}

static int write_buffer_flush(struct ik_vtd *u)
{
	u->st.wbf++;
	return gcmd(u, IK_VTD_GCMD_WBF, true, IK_VTD_GSTS_WBFS, false);
}

IK_API int ik_vtd_create(const struct ik_vtd_config *cfg, struct ik_vtd **out)
{
	struct ik_vtd_hwcaps c;
	struct ik_vtd *u;
	unsigned pb;

	if (!cfg || !out || !ik_drv_io_ok(cfg->mmio, cfg->dma) || cfg->haw < 32 || cfg->haw > 52 ||
	    (cfg->flags & ~IK_VTD_CFG_SCALABLE) || cfg->qs > IK_VTD_IQA_QS_MAX || cfg->pasid_bits > 20)
		return -EINVAL;
	ik_vtd_hwcaps_decode(ik_mmio_read32(cfg->mmio, IK_VTD_REG_VER),
			     ik_mmio_read64(cfg->mmio, IK_VTD_REG_CAP),
			     ik_mmio_read64(cfg->mmio, IK_VTD_REG_ECAP), &c);
	pb = cfg->pasid_bits;
	if (c.pasid && pb > c.pasid_bits)
		return -EINVAL;
	if (!pb)
		pb = c.pasid && c.pasid_bits < 6 ? c.pasid_bits : 6;
	/* Fault records over the architectural registers (CAP.FRO below
	 * 0x100: no unit has them there) would make ik_vtd_fault_pop() write
	 * F-clears into CCMD, IQH, ...: refuse such a unit. */
	if (!c.qi || !c.domains || ((cfg->flags & IK_VTD_CFG_SCALABLE) && !c.smts) ||
	    c.fro < 0x100)
		return -EOPNOTSUPP;
	u = (struct ik_vtd *)ik_drv_zalloc(cfg->alloc, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->mmio = *cfg->mmio;
	u->dma = *cfg->dma;
	u->alloc = cfg->alloc;
	u->caps = c;
	u->haw = cfg->haw;
	u->flags = cfg->flags;
	u->scalable = cfg->flags & IK_VTD_CFG_SCALABLE;
	u->qs = cfg->qs;
	u->pasid_bits = pb;
	u->words = u->scalable ? 4 : 2;
	u->log2 = cfg->qs + (u->scalable ? 7 : 8);
	u->timeout = cfg->timeout_ns ? cfg->timeout_ns : 1000000000ull;
	u->ring_bytes = (ik_size)4096 << cfg->qs;
	u->status_bytes = (ik_size)4 << u->log2;
	u->rules.flags = (c.psi ? IK_VTD_RULE_PSI : 0) | (c.pds ? IK_VTD_RULE_PDS : 0) |
			 (u->scalable ? IK_VTD_RULE_SCALABLE : 0);
	u->rules.mamv = c.mamv;
	*out = u;
	return 0;
}

static void queue_free(struct ik_vtd *u)
{
	ik_vtd_page_free(u, &u->ring, u->ring_bytes);
	ik_vtd_page_free(u, &u->status, u->status_bytes);
	if (u->qmem)
		ik_free(u->alloc, u->qmem, u->qmem_size);
	u->qmem = NULL;
	u->q = NULL;
}

IK_API void ik_vtd_destroy(struct ik_vtd *u)
{
	if (!u)
		return;
	/* A unit that did not let go before gets another chance now. */
	if ((u->stuck || u->enabled) && ik_vtd_disable(u)) {
		/* The unit may still read its tables and queue: leak them
		 * rather than free memory under it; free only our own (the
		 * queue's state and the object, which no device reads). */
		if (u->qmem)
			ik_free(u->alloc, u->qmem, u->qmem_size);
		ik_vtd_tables_free(u, false);
		ik_free(u->alloc, u, sizeof(*u));
		return;
	}
	queue_free(u);
	ik_vtd_tables_free(u, true);
	ik_free(u->alloc, u, sizeof(*u));
}

IK_API const struct ik_vtd_hwcaps *ik_vtd_caps(const struct ik_vtd *u)
{
	IK_ASSERT(u);
	return &u->caps;
}

IK_API struct ik_cmdq *ik_vtd_queue(struct ik_vtd *u)
{
	IK_ASSERT(u);
	return u->enabled ? u->q : NULL;
}

IK_API unsigned ik_vtd_desc_words(const struct ik_vtd *u)
{
	IK_ASSERT(u);
	return u->words;
}

IK_API ik_u32 ik_vtd_plan_flags(const struct ik_vtd *u)
{
	IK_ASSERT(u);
	return u->scalable ? IK_VTD_PLAN_SCALABLE : 0;
}

static void queue_cfg(struct ik_vtd *u, struct ik_cmdq_config *qc)
{
	ik_drv_queue_cfg(qc, u->scalable ? &ik_cmdq_fmt_vtd256 : &ik_cmdq_fmt_vtd128, u->log2,
			 u->ring.cpu, u->ring.dma, &ik_vtd_qi_regs, &u->qi, u->timeout);
	/* Completion words outside the ring: IQH counts descriptors fetched,
	 * not completed, so only a wait's status write proves completion. */
	qc->status = (ik_u32 *)u->status.cpu;
	qc->status_dma = u->status.dma;
}

/* The queue memory (ring, completion words, the ik_cmdq), allocated once. */
static int queue_alloc(struct ik_vtd *u)
{
	struct ik_cmdq_config qc;
	int err;

	if (!u->ring.cpu) {
		err = ik_vtd_page_alloc(u, u->ring_bytes, 4096, &u->ring);
		if (err)
			return err;
		err = ik_vtd_page_alloc(u, u->status_bytes, 64, &u->status);
		if (err) {
			queue_free(u);
			return err;
		}
	}
	if (!u->qmem) {
		queue_cfg(u, &qc);
		u->qmem_size = ik_cmdq_memsize(&qc);
		u->qmem = u->qmem_size ? ik_alloc(u->alloc, u->qmem_size, IK_CACHELINE) : NULL;
		if (!u->qmem) {
			queue_free(u);
			return -ENOMEM;
		}
	}
	return 0;
}

static int queue_start(struct ik_vtd *u)
{
	struct ik_cmdq_config qc;
	int err;

	err = ik_vtd_qi_init(&u->qi, &u->mmio, u->log2, u->scalable);
	if (err)
		return err;
	queue_cfg(u, &qc);
	return ik_cmdq_init(u->qmem, u->qmem_size, &qc, &u->q);
}

static int qi_off(struct ik_vtd *u)
{
	if (!(rd32(u, IK_VTD_REG_GSTS) & IK_VTD_GSTS_QIES))
		return 0;
	return gcmd(u, IK_VTD_GCMD_QIE, false, IK_VTD_GSTS_QIES, false);
}

IK_API int ik_vtd_enable(struct ik_vtd *u)
{
	struct ik_vtd_desc d[3];
	ik_u64 rta;
	unsigned n = 0;
	bool fresh = false;
	int err;

	if (!u)
		return -EINVAL;
	if (u->enabled || (rd32(u, IK_VTD_REG_GSTS) & (IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES)))
		return -EBUSY;
	/* 1. memory */
	err = ik_vtd_root_get(u, &fresh);
	if (err)
		return err;
	err = queue_alloc(u);
	if (err)
		goto out_root;
	IK_ENV_MEMSET(u->ring.cpu, 0, u->ring_bytes);
	IK_ENV_MEMSET(u->status.cpu, 0, u->status_bytes);
	/* 2. completion events masked: the no-op is a wait with IF = 1 */
	wr32(u, IK_VTD_REG_IECTL, IK_VTD_ECTL_IM);
	/* 3. root table */
	rta = u->root.dma | ((ik_u64)(u->scalable ? IK_VTD_RTADDR_TTM_SCALABLE :
						    IK_VTD_RTADDR_TTM_LEGACY)
			     << IK_VTD_RTADDR_TTM_SHIFT);
	ik_mmio_write64(&u->mmio, IK_VTD_REG_RTADDR, rta);
	err = gcmd(u, IK_VTD_GCMD_SRTP, true, IK_VTD_GSTS_RTPS, true);
	if (!err && u->caps.rwbf)
		err = write_buffer_flush(u);
	if (err)
		goto out_queue;
	/* 4. queued invalidation: no stale queue error from a previous owner */
	if (rd32(u, IK_VTD_REG_FSTS) & QI_ERRORS)
		wr32(u, IK_VTD_REG_FSTS, QI_ERRORS);
	wr32(u, IK_VTD_REG_IQT, 0);
	ik_mmio_write64(&u->mmio, IK_VTD_REG_IQA,
			ik_vtd_iqa_value(u->ring.dma, u->qs, u->scalable));
	err = gcmd(u, IK_VTD_GCMD_QIE, true, IK_VTD_GSTS_QIES, true);
	if (!err)
		err = queue_start(u);
	if (err)
		goto out_qi;
	/* 5. global invalidation of everything the unit may have cached */
	IK_ENV_MEMSET(d, 0, sizeof(d));
	d[n].type = IK_VTD_DESC_CC;
	d[n++].g = IK_VTD_G_GLOBAL;
	if (u->scalable) {
		d[n].type = IK_VTD_DESC_PC;
		d[n++].g = IK_VTD_G_PC_GLOBAL;
	}
	d[n].type = IK_VTD_DESC_IOTLB;
	d[n].g = IK_VTD_G_GLOBAL;
	d[n].dr = u->caps.drd;
	d[n++].dw = u->caps.dwd;
	u->enabled = true; /* for ik_vtd_issue() */
	err = ik_vtd_issue(u, d, n, true);
	/* 6. translation */
	if (!err)
		err = gcmd(u, IK_VTD_GCMD_TE, true, IK_VTD_GSTS_TES, true);
	if (!err)
		return 0;
	u->enabled = false;
	if ((rd32(u, IK_VTD_REG_GSTS) & IK_VTD_GSTS_TES) &&
	    gcmd(u, IK_VTD_GCMD_TE, false, IK_VTD_GSTS_TES, false))
		u->stuck = true;
	if (err != -ETIMEDOUT)
		(void)ik_cmdq_sync(u->q); /* QEMU disables QI only after a wait */
out_qi:
	if (qi_off(u))
		u->stuck = true;
out_queue:
	/* A unit that did not let go may still read the queue and tables:
	 * keep them (destroy leaks them) rather than free them under it. */
	if (u->stuck)
		return err;
	queue_free(u);
out_root:
	if (fresh)
		ik_vtd_page_free(u, &u->root, 4096);
	return err;
}

IK_API int ik_vtd_disable(struct ik_vtd *u)
{
	ik_u32 g;
	int err = 0;

	if (!u)
		return -EINVAL;
	g = rd32(u, IK_VTD_REG_GSTS);
	if (g & IK_VTD_GSTS_TES)
		err = gcmd(u, IK_VTD_GCMD_TE, false, IK_VTD_GSTS_TES, false);
	if (!err && (g & IK_VTD_GSTS_QIES)) {
		/* Nothing pending and a wait last (QEMU 7.2 refuses otherwise). */
		if (u->enabled && u->q)
			(void)ik_cmdq_sync(u->q);
		err = qi_off(u);
	}
	if (err)
		return err;
	u->enabled = false;
	u->stuck = false;
	return 0;
}

IK_API int ik_vtd_issue(struct ik_vtd *u, const struct ik_vtd_desc *d, unsigned n, bool sync)
{
	ik_u64 buf[IK_VTD_PLAN_MAX * 4 * 4];

	if (!u || (n && !d) || n > IK_VTD_PLAN_MAX * 4)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (ik_vtd_desc_validate(&d[i], &u->rules) ||
		    ik_vtd_desc_encode(&d[i], &buf[i * u->words], u->words))
			return -EINVAL;
	if (!u->enabled || !u->q)
		return -ENODEV;
	if (!n && !sync)
		return 0;
	return ik_cmdq_issue(u->q, buf, n, sync ? IK_CMDQ_SYNC : 0);
}

IK_API int ik_vtd_plan_issue(struct ik_vtd *u, const struct ik_vtd_plan *p)
{
	int err;

	if (!u || !p || p->n > IK_VTD_PLAN_MAX)
		return -EINVAL;
	if (!p->n && !p->sync && !p->wbf)
		return 0;
	if (!u->enabled)
		return -ENODEV;
	if (p->wbf) {
		err = write_buffer_flush(u);
		if (err)
			return err;
	}
	if (!p->n && !p->sync)
		return 0;
	return ik_vtd_issue(u, p->d, p->n, p->sync);
}

IK_API int ik_vtd_fault_pop(struct ik_vtd *u, struct ik_vtd_fault *f)
{
	ik_u32 fsts, nfr, start;
	bool ovf;
	int err = -ENOENT;

	if (!u || !f)
		return -EINVAL;
	fsts = rd32(u, IK_VTD_REG_FSTS);
	ovf = fsts & IK_VTD_FSTS_PFO;
	nfr = u->caps.nfr;
	start = IK_VTD_FSTS_FRI(fsts);
	if (start >= nfr)
		start = 0;
	if (fsts & IK_VTD_FSTS_PPF) {
		for (ik_u32 k = 0; k < nfr; k++) {
			ik_u32 i = (start + k) % nfr, off = u->caps.fro + 16 * i;
			ik_u64 rec[2];

			rec[1] = ik_mmio_read64(&u->mmio, off + 8);
			if (!(rec[1] & IK_VTD_FRCD_HI_F))
				continue;
			rec[0] = ik_mmio_read64(&u->mmio, off);
			(void)ik_vtd_fault_decode(rec, f);
			f->index = (ik_u16)i;
			/* F is RW1C, bit 31 of the record's last dword. */
			wr32(u, off + 12, 1u << 31);
			u->st.faults++;
			err = 0;
			break;
		}
	}
	if (ovf) {
		wr32(u, IK_VTD_REG_FSTS, IK_VTD_FSTS_PFO);
		u->st.overflows++;
		if (!err)
			f->overflow = true;
	}
	if (err)
		IK_ENV_MEMSET(f, 0, sizeof(*f));
	return err;
}

IK_API int ik_vtd_get_stats(const struct ik_vtd *u, struct ik_vtd_stats *st)
{
	if (!u || !st)
		return -EINVAL;
	*st = u->st;
	st->queue_errors = ik_load_relaxed(&u->qi.errors);
	return 0;
}
