/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The register-level VT-d model (<iommukit/softvtd.h>): the register file,
 * the invalidation queue consumed by ik_cmdq_sw, the context cache filled
 * from the root / context / PASID structures on demand, and the fault
 * recording registers.
 *
 * Lock.  m->lock serializes everything but a DMA's walk and copy: the
 * registers, the queue's consumption (which runs on the thread that writes
 * IQT or clears an error), the context cache and the fault records.
 */
#include <iommukit/softvtd.h>
#include <iommukit/drv/vtd.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/atomic.h>
#include <iommukit/lock.h>
#include "soft_int.h"

#define SV_ADDR_63_12 0xfffffffffffff000ull
#define SV_GCMD_ONESHOT (IK_VTD_GCMD_SRTP | IK_VTD_GCMD_SFL | IK_VTD_GCMD_WBF | IK_VTD_GCMD_SIRTP)
#define SV_GCMD_PERSIST                                                                     \
	(IK_VTD_GCMD_TE | IK_VTD_GCMD_EAFL | IK_VTD_GCMD_QIE | IK_VTD_GCMD_IRE | IK_VTD_GCMD_CFI)
#define SV_GSTS_ALL (SV_GCMD_ONESHOT | SV_GCMD_PERSIST)
#define SV_FSTS_RW1C (IK_VTD_FSTS_PFO | IK_VTD_FSTS_IQE | IK_VTD_FSTS_ICE | IK_VTD_FSTS_ITE)
#define SV_CCMD_ICC (1u << 31)	/* high half: bit 63 */
#define SV_IOTLB_IVT (1u << 31)	/* high half: bit 63 */

/* Fault reasons (VT-d "Fault reasons" tables). */
#define FR_ROOT_NP 0x1
#define FR_CTX_NP 0x2
#define FR_CTX_INVALID 0x3
#define FR_ADDR_WIDTH 0x4
#define FR_WRITE 0x5
#define FR_READ 0x6
#define FR_SL_FETCH 0x7
#define FR_ROOT_FETCH 0x8
#define FR_CTX_FETCH 0x9
#define FR_ROOT_RSVD 0xa
#define FR_CTX_RSVD 0xb
#define SM_RTA 0x30
#define SM_ROOT_FETCH 0x38
#define SM_ROOT_NP 0x39
#define SM_ROOT_RSVD 0x3a
#define SM_CTX_FETCH 0x40
#define SM_CTX_NP 0x41
#define SM_CTX_RSVD 0x42
#define SM_CTX_INVALID 0x43
#define SM_PASID_BEYOND 0x46
#define SM_PDE_FETCH 0x50
#define SM_PDE_NP 0x51
#define SM_PDE_RSVD 0x52
#define SM_PE_FETCH 0x58
#define SM_PE_NP 0x59
#define SM_PE_INVALID 0x5b
#define SM_FL_FETCH 0x70
#define SM_FL_NP 0x71
#define SM_SL_FETCH 0x78
#define SM_ADDR 0x83
#define SM_WRITE 0x85
#define SM_READ 0x86

/* Context-cache entry states. */
enum { CS_NONE, CS_XLATE, CS_PT, CS_FAULT };

struct cce {
	ik_u8 state;	/* CS_* (CS_NONE: not cached) */
	ik_u8 reason;	/* CS_FAULT: the fault reason */
	bool fpd;	/* record no faults */
	bool first_level;	/* scalable: a first-level PASID entry */
	ik_u16 did;	/* the domain (0 for a cached fault) */
	ik_u32 pasid;	/* scalable: the PASID entry used (RID_PASID) */
};

struct ik_softvtd {
	struct ik_softvtd_config cfg;
	ik_lock_t lock;
	unsigned nfr, fro, iro, mamv, mgaw;
	ik_u32 domains;
	/* registers */
	ik_u32 gsts, fsts, fectl, iectl, ics, fedata, feaddr, feuaddr, iedata, ieaddr, ieuaddr;
	ik_u64 rtaddr, ccmd, iqa, iqt, iqercd, iva, iotlb;
	ik_u64 (*frcd)[2];
	unsigned frnext, fri;
	/* latched */
	ik_u64 root;	/* RTADDR at the last SRTP */
	unsigned ttm;	/* its TTM */
	bool qi_on, dw, ring_bad;
	ik_u64 iq_base;
	ik_u32 iq_entries;
	unsigned iq_log2, shift;
	struct ik_cmdq_sw sw;
	/* injection */
	unsigned devtlb_timeouts;
	ik_u32 stuck;
	/* context cache */
	struct cce *cc;
	struct ik_pt_mem ptmem;
	ik_u64 descriptors, queue_errors, root_fetches, context_fetches, pasid_fetches, faults,
		faults_lost, faults_suppressed, gcmd_violations, wbf;
};

/* ---------------------------------------------------------------- defaults */

IK_API void ik_softvtd_config_init(struct ik_softvtd_config *cfg, ik_u32 flags)
{
	IK_ASSERT(cfg);
	IK_ENV_MEMSET(cfg, 0, sizeof(*cfg));
	cfg->ver = 0x60;
	/* ND 6, SAGAW 39|48, MGAW 48, FRO 0x220, SLLPS 2M|1G, PSI, NFR 8,
	 * MAMV 18, DWD, DRD, FL1GP. */
	cfg->cap = 6u | (ik_u64)6 << 8 | (ik_u64)47 << 16 | (ik_u64)(0x220 / 16) << 24 |
		   (ik_u64)3 << 34 | IK_VTD_CAP_PSI | (ik_u64)7 << 40 | (ik_u64)18 << 48 |
		   IK_VTD_CAP_DWD | IK_VTD_CAP_DRD | IK_VTD_CAP_FL1GP;
	if (flags & IK_SOFTVTD_CM)
		cfg->cap |= IK_VTD_CAP_CM;
	/* C, QI, DT, PT, IRO 0x100, PDS. */
	cfg->ecap = IK_VTD_ECAP_C | IK_VTD_ECAP_QI | IK_VTD_ECAP_DT | IK_VTD_ECAP_PT |
		    (ik_u64)(0x100 / 16) << 8 | IK_VTD_ECAP_PDS;
	if (flags & IK_SOFTVTD_SCALABLE)
		cfg->ecap |= IK_VTD_ECAP_SMTS | IK_VTD_ECAP_PASID | (ik_u64)19 << 35 |
			     IK_VTD_ECAP_FLTS | IK_VTD_ECAP_SLTS | IK_VTD_ECAP_SMPWC | IK_VTD_ECAP_RPS;
	cfg->haw = 48;
	cfg->max_sids = 256;
}

/* ---------------------------------------------------------------- memory */

/* The host pointer for [pa, pa + len), or NULL: the sum is checked, and
 * addresses at or above 2^haw are not memory. */
static void *host(struct ik_softvtd *m, ik_u64 pa, ik_u64 len)
{
	return soft_host(m->cfg.phys_to_host, m->cfg.phys_ctx, m->cfg.haw, pa, len);
}

/* Read n 64-bit words at pa (8-byte aligned); false if not memory. */
static bool readw(struct ik_softvtd *m, ik_u64 pa, ik_u64 *w, unsigned n)
{
	const volatile ik_u64 *p;

	if (pa & 7)
		return false;
	p = (const volatile ik_u64 *)host(m, pa, (ik_u64)n * 8);
	if (!p)
		return false;
	for (unsigned k = 0; k < n; k++)
		w[k] = p[k];
	return true;
}

static int pt_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	return readw((struct ik_softvtd *)ctx, addr, val, 1) ? 0 : -EFAULT;
}

/* ---------------------------------------------------------------- faults */

static bool scalable(const struct ik_softvtd *m)
{
	return m->ttm == IK_VTD_RTADDR_TTM_SCALABLE;
}

static bool ppf(const struct ik_softvtd *m)
{
	for (unsigned i = 0; i < m->nfr; i++)
		if (m->frcd[i][1] & IK_VTD_FRCD_HI_F)
			return true;
	return false;
}

/* Record a fault (lock held). */
static void fault_record(struct ik_softvtd *m, ik_u32 sid, ik_u64 addr, ik_u8 reason, bool write,
			 bool fpd)
{
	unsigned i = m->frnext;

	if (fpd) {
		m->faults_suppressed++;
		return;
	}
	if ((m->fsts & IK_VTD_FSTS_PFO) || (m->frcd[i][1] & IK_VTD_FRCD_HI_F)) {
		m->fsts |= IK_VTD_FSTS_PFO;
		m->fectl |= IK_VTD_ECTL_IP;
		m->faults_lost++;
		return;
	}
	if (!ppf(m))
		m->fri = i;
	m->frcd[i][0] = addr & SV_ADDR_63_12;
	m->frcd[i][1] = IK_VTD_FRCD_HI_F | (write ? 0 : IK_VTD_FRCD_HI_T) |
			(ik_u64)reason << 32 | (sid & 0xffffu);
	m->frnext = (i + 1) % m->nfr;
	m->fectl |= IK_VTD_ECTL_IP;
	m->faults++;
}

/* FECTL.IP clears once nothing is pending (lock held). */
static void fault_ip_update(struct ik_softvtd *m)
{
	if (!(m->fsts & IK_VTD_FSTS_PFO) && !ppf(m))
		m->fectl &= ~IK_VTD_ECTL_IP;
}

/* ---------------------------------------------------------------- structures */

static ik_u64 walker_flags(const struct ik_softvtd *m, bool first_level)
{
	ik_u64 f = 0;

	if (first_level) {
		f = IK_VTD_FLAG_SP_2M;
		if (m->cfg.cap & IK_VTD_CAP_FL1GP)
			f |= IK_VTD_FLAG_SP_1G;
	} else {
		if (IK_VTD_CAP_SLLPS(m->cfg.cap) & IK_VTD_SLLPS_2M)
			f |= IK_VTD_FLAG_SP_2M;
		if (IK_VTD_CAP_SLLPS(m->cfg.cap) & IK_VTD_SLLPS_1G)
			f |= IK_VTD_FLAG_SP_1G;
	}
	if (m->cfg.ecap & IK_VTD_ECAP_SC)
		f |= IK_VTD_FLAG_SC;
	return f;
}

static bool aw_ok(const struct ik_softvtd *m, unsigned aw)
{
	return aw < 5 && (IK_VTD_CAP_SAGAW(m->cfg.cap) & (1u << aw));
}

static void set_fault(struct cce *c, ik_u8 reason)
{
	c->state = CS_FAULT;
	c->reason = reason;
	c->did = 0;
}

/* Bind sid in the soft IOMMU to the walker (lock held). */
static void bind(struct ik_softvtd *m, ik_u32 sid, struct cce *c, const struct ik_pt_walker *w,
		 ik_u8 bad)
{
	if (ik_softiommu_attach_pt(m->cfg.soft, sid, c->did, w, &m->ptmem))
		set_fault(c, bad);
	else
		c->state = CS_XLATE;
}

static void fetch_legacy(struct ik_softvtd *m, ik_u32 sid, struct cce *c)
{
	ik_u64 re[2], ce[2], addr;
	struct ik_pt_walker w;
	unsigned tt, aw;

	m->root_fetches++;
	if (!readw(m, (m->root & SV_ADDR_63_12) + (sid >> 8) * 16, re, 2)) {
		set_fault(c, FR_ROOT_FETCH);
		return;
	}
	if (!(re[0] & IK_VTD_RE_P)) {
		set_fault(c, FR_ROOT_NP);
		return;
	}
	if ((re[0] & 0xffeull) || re[1] || (re[0] >> m->cfg.haw)) {
		set_fault(c, FR_ROOT_RSVD);
		return;
	}
	m->context_fetches++;
	addr = (re[0] & SV_ADDR_63_12) + (sid & 0xffu) * 16;
	if (!readw(m, addr, ce, 2)) {
		set_fault(c, FR_CTX_FETCH);
		return;
	}
	if (!(ce[0] & IK_VTD_CTX_P)) {
		set_fault(c, FR_CTX_NP);
		return;
	}
	c->fpd = (ce[0] & IK_VTD_CTX_FPD) != 0;
	if ((ce[0] & 0xff0ull) || (ce[1] & ~0xffff7full)) {
		set_fault(c, FR_CTX_RSVD);
		return;
	}
	tt = (unsigned)(ce[0] >> IK_VTD_CTX_TT_SHIFT) & 3;
	aw = (unsigned)(ce[1] & 7);
	c->did = (ik_u16)(ce[1] >> IK_VTD_CTX_DID_SHIFT);
	if (c->did >= m->domains || tt == 3 ||
	    (tt == IK_VTD_CTX_TT_DEVTLB && !(m->cfg.ecap & IK_VTD_ECAP_DT)) ||
	    (tt == IK_VTD_CTX_TT_PASSTHROUGH && !(m->cfg.ecap & IK_VTD_ECAP_PT))) {
		set_fault(c, FR_CTX_INVALID);
		return;
	}
	if (tt == IK_VTD_CTX_TT_PASSTHROUGH) {
		c->state = CS_PT;
		return;
	}
	if (!aw_ok(m, aw) || ik_vtd_walker_from_context(&w, ce, walker_flags(m, false), m->cfg.haw)) {
		set_fault(c, FR_CTX_INVALID);
		return;
	}
	bind(m, sid, c, &w, FR_CTX_INVALID);
}

static void fetch_scalable(struct ik_softvtd *m, ik_u32 sid, struct cce *c)
{
	ik_u64 re[2], ce[4], pde, pe[8], half, addr;
	unsigned devfn = sid & 0xffu, pdts, pgtt;
	struct ik_pt_walker w;
	ik_u32 pasid = 0;

	m->root_fetches++;
	if (!readw(m, (m->root & SV_ADDR_63_12) + (sid >> 8) * 16, re, 2)) {
		set_fault(c, SM_ROOT_FETCH);
		return;
	}
	half = re[devfn >> 7];
	if (!(half & IK_VTD_RE_P)) {
		set_fault(c, SM_ROOT_NP);
		return;
	}
	if ((half & 0xffeull) || (half >> m->cfg.haw)) {
		set_fault(c, SM_ROOT_RSVD);
		return;
	}
	m->context_fetches++;
	if (!readw(m, (half & SV_ADDR_63_12) + (devfn & 0x7fu) * 32, ce, 4)) {
		set_fault(c, SM_CTX_FETCH);
		return;
	}
	if (!(ce[0] & IK_VTD_SMCE_P)) {
		set_fault(c, SM_CTX_NP);
		return;
	}
	c->fpd = (ce[0] & IK_VTD_SMCE_FPD) != 0;
	if ((ce[0] & 0x1e0ull) || (ce[1] & ~0x1fffffull) || ce[2] || ce[3]) {
		set_fault(c, SM_CTX_RSVD);
		return;
	}
	if ((ce[0] & IK_VTD_SMCE_DTE) && !(m->cfg.ecap & IK_VTD_ECAP_DT)) {
		set_fault(c, SM_CTX_INVALID);
		return;
	}
	if (m->cfg.ecap & IK_VTD_ECAP_RPS)
		pasid = (ik_u32)(ce[1] & IK_VTD_SMCE1_RID_PASID_MASK);
	pdts = (unsigned)(ce[0] >> IK_VTD_SMCE_PDTS_SHIFT) & 7;
	if ((pasid >> 6) >= (1u << (pdts + 7))) {
		set_fault(c, SM_PASID_BEYOND);
		return;
	}
	m->pasid_fetches++;
	if (!soft_addr_add(ce[0] & SV_ADDR_63_12, (ik_u64)(pasid >> 6) * 8, &addr) ||
	    !readw(m, addr, &pde, 1)) {
		set_fault(c, SM_PDE_FETCH);
		return;
	}
	if (!(pde & IK_VTD_PDE_P)) {
		set_fault(c, SM_PDE_NP);
		return;
	}
	c->fpd = c->fpd || (pde & IK_VTD_PDE_FPD);
	if (pde & 0xffcull) {
		set_fault(c, SM_PDE_RSVD);
		return;
	}
	if (!soft_addr_add(pde & SV_ADDR_63_12, (ik_u64)(pasid & 63) * 64, &addr) || !readw(m, addr, pe, 8)) {
		set_fault(c, SM_PE_FETCH);
		return;
	}
	if (!(pe[0] & IK_VTD_PE_P)) {
		set_fault(c, SM_PE_NP);
		return;
	}
	c->fpd = c->fpd || (pe[0] & IK_VTD_PE_FPD);
	c->pasid = pasid;
	c->did = (ik_u16)pe[1];
	pgtt = (unsigned)(pe[0] >> IK_VTD_PE_PGTT_SHIFT) & 7;
	c->first_level = pgtt == IK_VTD_PGTT_FL;
	if (c->did >= m->domains ||
	    (pgtt == IK_VTD_PGTT_PT && !(m->cfg.ecap & IK_VTD_ECAP_PT)) ||
	    (pgtt == IK_VTD_PGTT_FL && !(m->cfg.ecap & IK_VTD_ECAP_FLTS)) ||
	    (pgtt == IK_VTD_PGTT_SL && !(m->cfg.ecap & IK_VTD_ECAP_SLTS)) ||
	    (pgtt != IK_VTD_PGTT_PT && pgtt != IK_VTD_PGTT_FL && pgtt != IK_VTD_PGTT_SL)) {
		set_fault(c, SM_PE_INVALID);
		return;
	}
	if (pgtt == IK_VTD_PGTT_PT) {
		c->state = CS_PT;
		return;
	}
	if ((pgtt == IK_VTD_PGTT_SL && !aw_ok(m, (unsigned)(pe[0] >> IK_VTD_PE_AW_SHIFT) & 7)) ||
	    (pgtt == IK_VTD_PGTT_FL && ((pe[2] >> IK_VTD_PE_FLPM_SHIFT) & 3) == 1 &&
	     !(m->cfg.cap & IK_VTD_CAP_FL5LP)) ||
	    ik_vtd_walker_from_pasid(&w, pe, walker_flags(m, c->first_level), m->cfg.haw)) {
		set_fault(c, SM_PE_INVALID);
		return;
	}
	bind(m, sid, c, &w, SM_PE_INVALID);
}

/* The context-cache entry of sid, fetched if not cached (lock held). */
static struct cce lookup(struct ik_softvtd *m, ik_u32 sid)
{
	struct cce c;

	if (m->cc[sid].state != CS_NONE)
		return m->cc[sid];
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	if (m->ttm == IK_VTD_RTADDR_TTM_LEGACY)
		fetch_legacy(m, sid, &c);
	else if (scalable(m) && (m->cfg.ecap & IK_VTD_ECAP_SMTS))
		fetch_scalable(m, sid, &c);
	else
		set_fault(&c, SM_RTA);
	/* Entry addresses cannot wrap: a 4-KiB-aligned table plus at most
	 * 255 * 16 bytes stays below 2^64; the PASID directory index is
	 * added with soft_addr_add(). */
	/* Not-present and faulting entries are cached only in caching mode. */
	if (c.state != CS_FAULT || (m->cfg.cap & IK_VTD_CAP_CM))
		m->cc[sid] = c;
	return c;
}

/* Context-cache invalidation: g 1 global, 2 domain, 3 device (sid under
 * the function mask; any domain: more than asked, never less). */
static void cc_invalidate(struct ik_softvtd *m, unsigned g, ik_u16 did, ik_u16 sid, unsigned fm)
{
	ik_u32 mask = fm == 0 ? 0xffffu : fm == 1 ? 0xfffeu : fm == 2 ? 0xfffcu : 0xfff8u;

	for (ik_u32 i = 0; i < m->cfg.max_sids; i++) {
		struct cce *c = &m->cc[i];

		if (c->state == CS_NONE)
			continue;
		if (g == 1 || (g == 2 && c->did == did) || (g == 3 && (i & mask) == (sid & mask)))
			c->state = CS_NONE;
	}
}

/* PASID-cache invalidation (scalable): g 0 domain, 1 PASID of a domain,
 * 3 global. */
static void pc_invalidate(struct ik_softvtd *m, unsigned g, ik_u16 did, ik_u32 pasid)
{
	for (ik_u32 i = 0; i < m->cfg.max_sids; i++) {
		struct cce *c = &m->cc[i];

		if (c->state == CS_NONE)
			continue;
		if (g == IK_VTD_G_PC_GLOBAL || (g == IK_VTD_G_PC_DOMAIN && c->did == did) ||
		    (g == IK_VTD_G_PC_PASID && c->did == did && c->pasid == pasid))
			c->state = CS_NONE;
	}
}

/* ---------------------------------------------------------------- invalidation queue */

static bool type_defined(const struct ik_softvtd *m, unsigned type)
{
	switch (type) {
	case IK_VTD_DESC_CC:
	case IK_VTD_DESC_IOTLB:
	case IK_VTD_DESC_DEVTLB:
	case IK_VTD_DESC_WAIT:
		return true;
	case IK_VTD_DESC_PIOTLB:
	case IK_VTD_DESC_PC:
		return scalable(m);
	default:
		return false;
	}
}

static ik_u32 desc_handler(void *ctx, ik_u32 index, const void *ent, int kind)
{
	struct ik_softvtd *m = (struct ik_softvtd *)ctx;
	struct ik_vtd_desc_rules r;
	struct ik_vtd_desc d;
	ik_u64 w[4];
	unsigned words = m->dw ? 4 : 2, type;

	(void)index;
	(void)kind;
	IK_ENV_MEMCPY(w, ent, words * 8u);
	type = (unsigned)(w[0] & 0xf) | (unsigned)((w[0] >> 9) & 7) << 4;
	r.flags = ((m->cfg.cap & IK_VTD_CAP_PSI) ? IK_VTD_RULE_PSI : 0) |
		  ((m->cfg.ecap & IK_VTD_ECAP_PDS) ? IK_VTD_RULE_PDS : 0) |
		  (scalable(m) ? IK_VTD_RULE_SCALABLE : 0);
	r.mamv = (ik_u8)m->mamv;
	if (!type_defined(m, type) || ik_vtd_desc_decode(w, words, &d) ||
	    ik_vtd_desc_validate(&d, &r))
		return IK_CMDQ_CERROR_ILL; /* iq_run() says why */
	switch (d.type) {
	case IK_VTD_DESC_CC:
		cc_invalidate(m, d.g, d.did, d.sid, d.fm);
		break;
	case IK_VTD_DESC_PC:
		pc_invalidate(m, d.g, d.did, d.pasid);
		break;
	case IK_VTD_DESC_DEVTLB:
		if (m->devtlb_timeouts) {
			m->devtlb_timeouts--;
			m->iqercd = (m->iqercd & ~((ik_u64)0xffff << 32)) | (ik_u64)d.sid << 32;
			m->descriptors++;
			return IK_CMDQ_CERROR_ATC_INV_SYNC; /* reported at the next wait */
		}
		break;
	case IK_VTD_DESC_WAIT:
		if (d.iflag) {
			m->ics |= 1u;
			m->iectl |= IK_VTD_ECTL_IP;
		}
		break;
	default:
		break;
	}
	if (ik_softiommu_exec_vtd(m->cfg.soft, &d))
		return IK_CMDQ_CERROR_ILL;
	m->descriptors++;
	return 0;
}

static void desc_write32(void *ctx, ik_u64 addr, ik_u32 val)
{
	struct ik_softvtd *m = (struct ik_softvtd *)ctx;
	ik_u32 *p = (addr & 3) ? NULL : (ik_u32 *)host(m, addr, 4);

	if (p)
		ik_store_release(p, val);
}

static void iq_error(struct ik_softvtd *m, ik_u32 bit, ik_u8 iqei)
{
	m->fsts |= bit;
	if (bit == IK_VTD_FSTS_IQE)
		m->iqercd = (m->iqercd & ~(ik_u64)0xf) | iqei;
	m->queue_errors++;
}

static bool iq_stopped(const struct ik_softvtd *m)
{
	return (m->fsts & (IK_VTD_FSTS_IQE | IK_VTD_FSTS_ITE | IK_VTD_FSTS_ICE)) != 0;
}

/* Why the descriptor at IQH was refused: its type, or a field. */
static ik_u8 iqei_at_head(struct ik_softvtd *m)
{
	ik_u32 i = ik_load_relaxed(&m->sw.cons) & (m->iq_entries - 1);
	const volatile ik_u64 *w = (const volatile ik_u64 *)((ik_u8 *)m->sw.cfg.ring +
							      (ik_size)i * (m->dw ? 32u : 16u));
	ik_u64 w0 = w[0];
	unsigned type = (unsigned)(w0 & 0xf) | (unsigned)((w0 >> 9) & 7) << 4;

	return type_defined(m, type) ? IK_VTD_IQEI_RESERVED : IK_VTD_IQEI_TYPE;
}

/* Run the queue from IQH to IQT (lock held). */
static void iq_run(struct ik_softvtd *m)
{
	ik_u32 err;

	if (!m->qi_on || iq_stopped(m))
		return;
	if (m->ring_bad) {
		if (ik_load_relaxed(&m->sw.prod) != ik_load_relaxed(&m->sw.cons))
			iq_error(m, IK_VTD_FSTS_IQE, IK_VTD_IQEI_FETCH);
		return;
	}
	if (ik_load_relaxed(&m->sw.prod) == ik_load_relaxed(&m->sw.cons))
		return;
	if ((m->dw && !(m->cfg.ecap & IK_VTD_ECAP_SMTS)) || (!m->dw && scalable(m))) {
		iq_error(m, IK_VTD_FSTS_IQE, IK_VTD_IQEI_WIDTH);
		return;
	}
	(void)ik_cmdq_sw_consume(&m->sw, ~0u);
	err = ik_cmdq_sw_error(&m->sw);
	if (err == IK_CMDQ_CERROR_ATC_INV_SYNC)
		iq_error(m, IK_VTD_FSTS_ITE, 0);
	else if (err == IK_CMDQ_CERROR_ABT)
		iq_error(m, IK_VTD_FSTS_IQE, IK_VTD_IQEI_FETCH);
	else if (err)
		iq_error(m, IK_VTD_FSTS_IQE, iqei_at_head(m));
}

static void qi_enable(struct ik_softvtd *m)
{
	struct ik_cmdq_sw_config sc;
	unsigned qs = (unsigned)(m->iqa & 7);
	void *p;

	m->dw = (m->iqa & IK_VTD_IQA_DW) != 0;
	m->shift = m->dw ? IK_VTD_IQ_SHIFT_256 : IK_VTD_IQ_SHIFT_128;
	m->iq_base = m->iqa & SV_ADDR_63_12;
	m->iq_log2 = qs + (m->dw ? 7u : 8u);
	m->iq_entries = 1u << m->iq_log2;
	m->qi_on = true;
	m->ring_bad = true;
	IK_ENV_MEMSET(&m->sw, 0, sizeof(m->sw));
	p = host(m, m->iq_base, (ik_u64)4096 << qs);
	if (!p)
		return;
	IK_ENV_MEMSET(&sc, 0, sizeof(sc));
	sc.fmt = m->dw ? &ik_cmdq_fmt_vtd256 : &ik_cmdq_fmt_vtd128;
	sc.log2_entries = m->iq_log2;
	sc.flags = IK_CMDQ_CFG_NO_WRAP;
	sc.ring = p;
	sc.ring_dma = m->iq_base;
	sc.handler = desc_handler;
	sc.ctx = m;
	sc.write32 = desc_write32;
	if (ik_cmdq_sw_init(&m->sw, &sc))
		return;
	m->ring_bad = false;
}

/* IQT written (lock held). */
static void iqt_write(struct ik_softvtd *m, ik_u32 v)
{
	ik_u32 idx;

	m->iqt = v & 0x7fff0u;
	if (!m->qi_on)
		return;
	idx = (v & 0x7fff0u) >> m->shift;
	if ((m->dw && (v & 0x10u)) || idx >= m->iq_entries) {
		if (!(m->fsts & IK_VTD_FSTS_IQE))
			iq_error(m, IK_VTD_FSTS_IQE, IK_VTD_IQEI_TAIL);
		return;
	}
	ik_store_release(&m->sw.prod, idx);
	iq_run(m);
}

static ik_u32 iqh_read(const struct ik_softvtd *m)
{
	if (!m->qi_on)
		return 0;
	return ik_load_relaxed(&m->sw.cons) << m->shift;
}

/* ---------------------------------------------------------------- registers */

static void gcmd_write(struct ik_softvtd *m, ik_u32 v)
{
	ik_u32 changed = (m->gsts ^ v) & SV_GCMD_PERSIST, one = v & SV_GCMD_ONESHOT;
	ik_u32 cmd = changed | one;

	if (!cmd)
		return;
	if (cmd & (cmd - 1)) {
		m->gcmd_violations++;
		return;
	}
	if (cmd == IK_VTD_GCMD_SRTP)
		m->gsts &= ~IK_VTD_GSTS_RTPS;
	if (cmd == IK_VTD_GCMD_WBF)
		m->wbf++;
	if (m->stuck & cmd) {
		if (cmd == IK_VTD_GCMD_WBF)
			m->gsts |= IK_VTD_GSTS_WBFS; /* the flush never ends */
		return;
	}
	switch (cmd) {
	case IK_VTD_GCMD_SRTP:
		m->root = m->rtaddr;
		m->ttm = (unsigned)(m->rtaddr >> IK_VTD_RTADDR_TTM_SHIFT) & 3;
		m->gsts |= IK_VTD_GSTS_RTPS;
		break;
	case IK_VTD_GCMD_WBF: /* done at once: WBFS stays clear */
		break;
	case IK_VTD_GCMD_SFL:
		m->gsts |= IK_VTD_GSTS_FLS;
		break;
	case IK_VTD_GCMD_SIRTP:
		m->gsts |= IK_VTD_GSTS_IRTPS;
		break;
	case IK_VTD_GCMD_QIE:
		if (v & IK_VTD_GCMD_QIE) {
			qi_enable(m);
			m->gsts |= IK_VTD_GSTS_QIES;
			iqt_write(m, (ik_u32)m->iqt);
		} else {
			m->qi_on = false;
			m->gsts &= ~IK_VTD_GSTS_QIES;
		}
		break;
	default: /* TE, EAFL, IRE, CFI: the status follows the command */
		m->gsts = (m->gsts & ~cmd) | (v & cmd);
		break;
	}
}

/* FSTS written: RW1C bits; clearing a queue error resumes the queue. */
static void fsts_write(struct ik_softvtd *m, ik_u32 v)
{
	ik_u32 was = m->fsts;

	m->fsts &= ~(v & SV_FSTS_RW1C);
	fault_ip_update(m);
	if (!m->qi_on || iq_stopped(m) || !(was & (IK_VTD_FSTS_IQE | IK_VTD_FSTS_ITE | IK_VTD_FSTS_ICE)))
		return;
	if (!m->ring_bad && ik_cmdq_sw_error(&m->sw)) {
		if (ik_cmdq_sw_error(&m->sw) == IK_CMDQ_CERROR_ATC_INV_SYNC) {
			/* The aborted wait is never completed: IQH passes it. */
			m->sw.cons_full++;
			ik_store_release(&m->sw.cons, m->sw.cons_full & m->sw.regmask);
		}
		ik_cmdq_sw_regs.ack_error(&m->sw);
	}
	iq_run(m);
}

/* Register-based context-cache invalidation (CCMD high half written). */
static void ccmd_run(struct ik_softvtd *m)
{
	unsigned g = (unsigned)(m->ccmd >> 61) & 3;

	if (!(m->ccmd >> 63))
		return;
	if (g)
		cc_invalidate(m, g, (ik_u16)m->ccmd, (ik_u16)(m->ccmd >> 16),
			      (unsigned)(m->ccmd >> 32) & 3);
	/* CAIG = CIRG (what was done), ICC clear. */
	m->ccmd = (m->ccmd & ~((ik_u64)1 << 63) & ~((ik_u64)3 << 59)) | (ik_u64)g << 59;
}

/* Register-based IOTLB invalidation (IOTLB_REG high half written). */
static void iotlb_run(struct ik_softvtd *m)
{
	unsigned g = (unsigned)(m->iotlb >> 60) & 3;
	struct ik_vtd_desc d;

	if (!(m->iotlb >> 63))
		return;
	IK_ENV_MEMSET(&d, 0, sizeof(d));
	d.type = IK_VTD_DESC_IOTLB;
	d.g = (ik_u8)g;
	d.did = (ik_u16)(m->iotlb >> 32);
	d.am = (ik_u8)(m->iva & 0x3f);
	d.ih = (ik_u8)((m->iva >> 6) & 1);
	d.addr = m->iva & SV_ADDR_63_12;
	if (g == 3 && (d.am > m->mamv || !(m->cfg.cap & IK_VTD_CAP_PSI)))
		g = 2, d.g = 2; /* a unit may invalidate more than asked */
	if (g && ik_softiommu_exec_vtd(m->cfg.soft, &d))
		g = 1, d.g = 1, (void)ik_softiommu_exec_vtd(m->cfg.soft, &d);
	/* IAIG = IIRG (57:56 hold what was done), IVT clear. */
	m->iotlb = (m->iotlb & ~((ik_u64)1 << 63) & ~((ik_u64)3 << 57)) | (ik_u64)g << 57;
}

static ik_u32 read_locked(struct ik_softvtd *m, ik_u32 off)
{
	if (off >= m->fro && off - m->fro < m->nfr * 16u) {
		ik_u32 rel = off - m->fro;
		ik_u64 w = m->frcd[rel / 16][(rel / 8) & 1];

		return (rel & 4) ? soft_hi32(w) : soft_lo32(w);
	}
	if (off >= m->iro && off - m->iro < 16u) {
		ik_u64 w = (off - m->iro) < 8 ? m->iva : m->iotlb;

		return (off & 4) ? soft_hi32(w) : soft_lo32(w);
	}
	switch (off) {
	case IK_VTD_REG_VER: return m->cfg.ver;
	case IK_VTD_REG_CAP: return soft_lo32(m->cfg.cap);
	case IK_VTD_REG_CAP + 4: return soft_hi32(m->cfg.cap);
	case IK_VTD_REG_ECAP: return soft_lo32(m->cfg.ecap);
	case IK_VTD_REG_ECAP + 4: return soft_hi32(m->cfg.ecap);
	case IK_VTD_REG_GSTS: return m->gsts;
	case IK_VTD_REG_RTADDR: return soft_lo32(m->rtaddr);
	case IK_VTD_REG_RTADDR + 4: return soft_hi32(m->rtaddr);
	case IK_VTD_REG_CCMD: return soft_lo32(m->ccmd);
	case IK_VTD_REG_CCMD + 4: return soft_hi32(m->ccmd);
	case IK_VTD_REG_FSTS:
		return (m->fsts & SV_FSTS_RW1C) | (ppf(m) ? IK_VTD_FSTS_PPF | m->fri << 8 : 0);
	case IK_VTD_REG_FECTL: return m->fectl;
	case IK_VTD_REG_FEDATA: return m->fedata;
	case IK_VTD_REG_FEADDR: return m->feaddr;
	case IK_VTD_REG_FEUADDR: return m->feuaddr;
	case IK_VTD_REG_IQH: return iqh_read(m);
	case IK_VTD_REG_IQT: return soft_lo32(m->iqt);
	case IK_VTD_REG_IQA: return soft_lo32(m->iqa);
	case IK_VTD_REG_IQA + 4: return soft_hi32(m->iqa);
	case IK_VTD_REG_ICS: return m->ics;
	case IK_VTD_REG_IECTL: return m->iectl;
	case IK_VTD_REG_IEDATA: return m->iedata;
	case IK_VTD_REG_IEADDR: return m->ieaddr;
	case IK_VTD_REG_IEUADDR: return m->ieuaddr;
	case IK_VTD_REG_IQERCD: return soft_lo32(m->iqercd);
	case IK_VTD_REG_IQERCD + 4: return soft_hi32(m->iqercd);
	default: return 0;
	}
}

static void write_locked(struct ik_softvtd *m, ik_u32 off, ik_u32 v)
{
	if (off >= m->fro && off - m->fro < m->nfr * 16u) {
		ik_u32 rel = off - m->fro;

		if ((rel & 15) == 12 && (v & (1u << 31))) { /* F: RW1C */
			m->frcd[rel / 16][1] &= ~IK_VTD_FRCD_HI_F;
			fault_ip_update(m);
		}
		return;
	}
	if (off >= m->iro && off - m->iro < 16u) {
		if (off - m->iro < 8) {
			m->iva = soft_set_half(m->iva, off & 4, v);
		} else {
			m->iotlb = soft_set_half(m->iotlb, off & 4, v);
			if (off & 4)
				iotlb_run(m);
		}
		return;
	}
	switch (off) {
	case IK_VTD_REG_GCMD: gcmd_write(m, v); break;
	case IK_VTD_REG_RTADDR: m->rtaddr = soft_set_half(m->rtaddr, false, v & 0xfffff000u) | (v & 0xc00u); break;
	case IK_VTD_REG_RTADDR + 4: m->rtaddr = soft_set_half(m->rtaddr, true, v); break;
	case IK_VTD_REG_CCMD: m->ccmd = soft_set_half(m->ccmd, false, v); break;
	case IK_VTD_REG_CCMD + 4:
		m->ccmd = soft_set_half(m->ccmd, true, v);
		ccmd_run(m);
		break;
	case IK_VTD_REG_FSTS: fsts_write(m, v); break;
	case IK_VTD_REG_FECTL: m->fectl = (m->fectl & ~IK_VTD_ECTL_IM) | (v & IK_VTD_ECTL_IM); break;
	case IK_VTD_REG_FEDATA: m->fedata = v; break;
	case IK_VTD_REG_FEADDR: m->feaddr = v & ~3u; break;
	case IK_VTD_REG_FEUADDR: m->feuaddr = v; break;
	case IK_VTD_REG_IQT: iqt_write(m, v); break;
	case IK_VTD_REG_IQA: m->iqa = soft_set_half(m->iqa, false, v & 0xfffff807u); break;
	case IK_VTD_REG_IQA + 4: m->iqa = soft_set_half(m->iqa, true, v); break;
	case IK_VTD_REG_ICS:
		if (v & 1u) {
			m->ics &= ~1u;
			m->iectl &= ~IK_VTD_ECTL_IP;
		}
		break;
	case IK_VTD_REG_IECTL: m->iectl = (m->iectl & ~IK_VTD_ECTL_IM) | (v & IK_VTD_ECTL_IM); break;
	case IK_VTD_REG_IEDATA: m->iedata = v; break;
	case IK_VTD_REG_IEADDR: m->ieaddr = v & ~3u; break;
	case IK_VTD_REG_IEUADDR: m->ieuaddr = v; break;
	default: break;
	}
}

IK_API ik_u32 ik_softvtd_read32(struct ik_softvtd *m, ik_u32 off)
{
	ik_u32 v;

	if ((off & 3) || off >= IK_SOFTVTD_REG_SIZE)
		return 0;
	ik_lock(&m->lock);
	v = read_locked(m, off);
	ik_unlock(&m->lock);
	return v;
}

IK_API void ik_softvtd_write32(struct ik_softvtd *m, ik_u32 off, ik_u32 v)
{
	if ((off & 3) || off >= IK_SOFTVTD_REG_SIZE)
		return;
	ik_lock(&m->lock);
	write_locked(m, off, v);
	ik_unlock(&m->lock);
}

static ik_u32 mmio_read32(void *ctx, ik_u32 off)
{
	return ik_softvtd_read32((struct ik_softvtd *)ctx, off);
}

static void mmio_write32(void *ctx, ik_u32 off, ik_u32 v)
{
	ik_softvtd_write32((struct ik_softvtd *)ctx, off, v);
}

IK_API int ik_softvtd_mmio(struct ik_softvtd *m, struct ik_mmio *io)
{
	return soft_mmio(io, m, mmio_read32, mmio_write32);
}

/* ---------------------------------------------------------------- create / destroy */

IK_API int ik_softvtd_create(const struct ik_softvtd_config *cfg, struct ik_softvtd **out)
{
	struct ik_softvtd *m;
	unsigned nfr, fro, iro;

	if (!cfg || !out || !cfg->soft || !cfg->phys_to_host || !cfg->max_sids ||
	    cfg->max_sids > 65536 || cfg->haw < 32 || cfg->haw > 52 ||
	    !(cfg->ecap & IK_VTD_ECAP_QI))
		return -EINVAL;
	nfr = IK_VTD_CAP_NFR(cfg->cap);
	fro = IK_VTD_CAP_FRO(cfg->cap);
	iro = IK_VTD_ECAP_IRO(cfg->ecap);
	if (fro < 0x100 || fro + nfr * 16u > IK_SOFTVTD_REG_SIZE || iro < 0x100 ||
	    iro + 16u > IK_SOFTVTD_REG_SIZE || (iro + 16u > fro && fro + nfr * 16u > iro))
		return -EINVAL;
	m = (struct ik_softvtd *)ik_alloc(cfg->alloc, sizeof(*m), IK_CACHELINE);
	if (!m)
		return -ENOMEM;
	IK_ENV_MEMSET(m, 0, sizeof(*m));
	m->cfg = *cfg;
	m->cc = (struct cce *)ik_alloc(cfg->alloc, sizeof(struct cce) * cfg->max_sids, sizeof(ik_u64));
	m->frcd = (ik_u64(*)[2])ik_alloc(cfg->alloc, sizeof(ik_u64) * 2 * nfr, sizeof(ik_u64));
	if (!m->cc || !m->frcd) {
		ik_free(cfg->alloc, m->cc, sizeof(struct cce) * cfg->max_sids);
		ik_free(cfg->alloc, m->frcd, sizeof(ik_u64) * 2 * nfr);
		ik_free(cfg->alloc, m, sizeof(*m));
		return -ENOMEM;
	}
	IK_ENV_MEMSET(m->cc, 0, sizeof(struct cce) * cfg->max_sids);
	IK_ENV_MEMSET(m->frcd, 0, sizeof(ik_u64) * 2 * nfr);
	ik_lock_init(&m->lock);
	m->nfr = nfr;
	m->fro = fro;
	m->iro = iro;
	m->mamv = IK_VTD_CAP_MAMV(cfg->cap);
	m->mgaw = IK_VTD_CAP_MGAW(cfg->cap);
	m->domains = 1u << (4 + 2 * IK_VTD_CAP_ND(cfg->cap));
	if (m->domains > 65536)
		m->domains = 65536;
	m->fectl = m->iectl = IK_VTD_ECTL_IM;
	m->ptmem.read64 = pt_read64;
	m->ptmem.ctx = m;
	*out = m;
	return 0;
}

IK_API void ik_softvtd_destroy(struct ik_softvtd *m)
{
	const struct ik_allocator *a;

	if (!m)
		return;
	a = m->cfg.alloc;
	ik_free(a, m->cc, sizeof(struct cce) * m->cfg.max_sids);
	ik_free(a, m->frcd, sizeof(ik_u64) * 2 * m->nfr);
	ik_free(a, m, sizeof(*m));
}

/* ---------------------------------------------------------------- injection */

IK_API int ik_softvtd_inject(struct ik_softvtd *m, unsigned kind, ik_u64 after, unsigned times)
{
	int err = 0;

	if (!m)
		return -EINVAL;
	ik_lock(&m->lock);
	switch (kind) {
	case IK_SOFTVTD_INJ_DEVTLB_TIMEOUT:
		if (!times)
			err = -EINVAL;
		else
			m->devtlb_timeouts = times;
		break;
	case IK_SOFTVTD_INJ_FETCH_ABT:
		if (!times)
			err = -EINVAL;
		else if (!m->qi_on || m->ring_bad)
			err = -EBUSY;
		else
			ik_cmdq_sw_inject(&m->sw, after, IK_CMDQ_CERROR_ABT, times);
		break;
	case IK_SOFTVTD_INJ_STUCK:
		if (after & ~(ik_u64)SV_GSTS_ALL)
			err = -EINVAL;
		else
			m->stuck = (ik_u32)after;
		break;
	default:
		err = -EINVAL;
		break;
	}
	ik_unlock(&m->lock);
	return err;
}

/* ---------------------------------------------------------------- DMA */

static ik_u8 reason_of(const struct ik_softvtd *m, const struct cce *c, ik_u32 fault, bool write)
{
	bool sm = scalable(m);

	switch (fault) {
	case IK_SOFTIOMMU_FAULT_ADDR_SIZE:
		return sm ? SM_ADDR : FR_ADDR_WIDTH;
	case IK_SOFTIOMMU_FAULT_EXTERNAL:
		return sm ? (c->first_level ? SM_FL_FETCH : SM_SL_FETCH) : FR_SL_FETCH;
	case IK_SOFTIOMMU_FAULT_TRANSLATION:
		if (sm && c->first_level)
			return SM_FL_NP;
		break;
	default:
		break;
	}
	/* Second-level: a not-present entry is one without the permission. */
	if (sm)
		return write ? SM_WRITE : SM_READ;
	return write ? FR_WRITE : FR_READ;
}

static bool copy(struct ik_softvtd *m, ik_u64 pa, ik_u8 *buf, ik_size n, bool write)
{
	return soft_copy((ik_u8 *)host(m, pa, n), buf, n, write);
}

IK_API int ik_softvtd_dma(struct ik_softvtd *m, ik_u32 sid, ik_u64 iova, void *buf, ik_size len,
			  bool write)
{
	ik_u8 *b = (ik_u8 *)buf;
	struct cce c;
	int ok = soft_dma_args(m, buf, len, iova);

	if (ok <= 0)
		return ok;
	if (sid >= m->cfg.max_sids)
		return -EFAULT;
	ik_lock(&m->lock);
	if (!(m->gsts & IK_VTD_GSTS_TES)) {
		ik_unlock(&m->lock);
		return copy(m, iova, b, len, write) ? 0 : -EFAULT;
	}
	c = lookup(m, sid);
	if (c.state == CS_FAULT)
		fault_record(m, sid, iova, c.reason, write, c.fpd);
	ik_unlock(&m->lock);
	if (c.state == CS_FAULT)
		return -EFAULT;
	if (c.state == CS_PT)
		return copy(m, iova, b, len, write) ? 0 : -EFAULT;
	while (len) {
		struct ik_softiommu_xlate x;
		ik_u64 blk, n;

		IK_ENV_MEMSET(&x, 0, sizeof(x));
		if (!c.first_level && m->mgaw < 64 && (iova >> m->mgaw)) {
			/* Second-level input beyond CAP.MGAW. */
			ik_lock(&m->lock);
			fault_record(m, sid, iova, reason_of(m, &c, IK_SOFTIOMMU_FAULT_ADDR_SIZE, write),
				     write, c.fpd);
			ik_unlock(&m->lock);
			return -EFAULT;
		}
		if (ik_softiommu_translate(m->cfg.soft, sid, iova,
					   write ? IK_SOFTIOMMU_WRITE : IK_SOFTIOMMU_READ, &x)) {
			ik_lock(&m->lock);
			fault_record(m, sid, iova, reason_of(m, &c, x.fault, write), write, c.fpd);
			ik_unlock(&m->lock);
			return -EFAULT;
		}
		blk = x.lg2_size < 64 ? (1ull << x.lg2_size) - (iova & ((1ull << x.lg2_size) - 1)) :
					IK_U64_MAX;
		n = len < blk ? len : blk;
		if (!copy(m, x.oa, b, (ik_size)n, write)) {
			ik_lock(&m->lock);
			fault_record(m, sid, iova, reason_of(m, &c, IK_SOFTIOMMU_FAULT_EXTERNAL, write),
				     write, c.fpd);
			ik_unlock(&m->lock);
			return -EFAULT;
		}
		b += n;
		len -= (ik_size)n;
		iova += n;
	}
	return 0;
}

/* ---------------------------------------------------------------- counters */

IK_API int ik_softvtd_get_stats(struct ik_softvtd *m, struct ik_softvtd_stats *st)
{
	if (!m || !st)
		return -EINVAL;
	IK_ENV_MEMSET(st, 0, sizeof(*st));
	ik_lock(&m->lock);
	st->descriptors = m->descriptors;
	st->queue_errors = m->queue_errors;
	st->root_fetches = m->root_fetches;
	st->context_fetches = m->context_fetches;
	st->pasid_fetches = m->pasid_fetches;
	st->faults = m->faults;
	st->faults_lost = m->faults_lost;
	st->faults_suppressed = m->faults_suppressed;
	st->gcmd_violations = m->gcmd_violations;
	st->wbf = m->wbf;
	ik_unlock(&m->lock);
	return 0;
}
