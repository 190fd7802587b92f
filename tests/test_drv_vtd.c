/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * drv/vtd: the VT-d driver core (<iommukit/drv/vtd.h>), against a software
 * model of a remapping unit's register file.
 *
 * The model (struct unit below) implements what the driver relies on, the
 * way the VT-d specification describes it and QEMU 7.2's intel-iommu
 * (hw/i386/intel_iommu.c) implements it: GCMD -> GSTS (persistent and
 * one-shot bits), RTADDR latched by SRTP, IQA/IQH/IQT with descriptors
 * consumed synchronously when IQT is written, each checked against QEMU's
 * reserved-field masks (written here from its source and the spec, not from
 * iommukit's encoder) and refused with FSTS.IQE, after which it fetches
 * again only when IQT is written; wait descriptors write their status
 * (SW) or set ICS.IWC (IF); FSTS RW1C bits; fault-recording registers the
 * test fills; and GCMD writes are checked against the rule "persistent bits
 * as GSTS shows them plus one command".
 *
 * The project's VT-d register model is <iommukit/softvtd.h>
 * (tests/test_softvtd.c brings it up with this core, DMA end to end, and
 * runs the planner against the soft IOMMU's stale-translation checker).
 * This private model stays for what that one does not, on purpose, offer:
 * QEMU 7.2's own reserved-field masks and its assertion on a wait with SW
 * and IF (the library's model follows the specification), the log of every
 * register write in order with its value (the bring-up and teardown order
 * tests), a unit that refuses to clear QIE, and QEMU's habit of fetching
 * again only on an IQT write (the library's model resumes when IQE clears,
 * as hardware does).
 *
 * DMA memory is the env's (device address = CPU address), through a
 * fault-injecting allocator, so the model reads tables and the queue at
 * host addresses.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <iommukit/drv/vtd.h>
#include "testlib.h"

#define BIT(n) ((uint64_t)1 << (n))

/* ================================================================ the unit model */

#define FRO 0x220u
#define NFR 4u
#define REGS_SIZE (FRO + 16 * NFR)

/* QEMU 7.2's reserved masks (intel_iommu_internal.h), per descriptor type. */
#define Q_CC_RSVD 0xfffc00000000ffc0ull
#define Q_IOTLB_RSVD_LO 0xffffffff0000ff00ull
#define Q_IOTLB_RSVD_HI 0xf80ull
#define Q_DEVTLB_RSVD_LO 0xffff0000ffe0fff8ull
#define Q_DEVTLB_RSVD_HI 0xffeull
#define Q_WAIT_RSVD_LO 0xffffff80ull
#define Q_WAIT_RSVD_HI 0x3ull

#define SHORT_TIMEOUT_NS 20000000ull /* 20 ms: for waits that must expire */

struct unit {
	uint64_t cap, ecap;
	uint32_t ver, gsts, fsts, fectl, iectl, ics;
	uint64_t rtaddr, iqa, iqh, iqt, iqercd;
	uint64_t frcd[NFR][2];
	/* latched state */
	uint64_t root;	  /* RTADDR at the last SRTP */
	bool qi_on, dw;
	uint64_t iq_base;
	uint32_t iq_size, head, tail;
	unsigned last_type;
	/* behaviour */
	uint32_t stuck;	     /* GSTS bits that never follow their command */
	unsigned late_srtp;  /* SRTP stuck until this GSTS read after it, which
				sleeps past SHORT_TIMEOUT_NS and then sets RTPS */
	unsigned srtp_reads; /* GSTS reads since the last SRTP */
	bool devtlb_timeout; /* a device-TLB invalidation sets ITE, aborts waits */
	bool refuse_qi_off;  /* QIE clear is ignored */
	bool aborting;	     /* ITE pending: waits complete without status */
	uint64_t iqercd_on_iqe;
	/* observations */
	unsigned gcmd_violations, one_shot_writes, wbf, srtp, iqt_writes, iqe, desc_done;
	unsigned counts[16];	/* descriptors executed, by type */
	struct ik_vtd_desc last[64];
	unsigned nlast;
	uint32_t log[256];	/* register write offsets, in order */
	uint32_t logv[256];
	unsigned nlog;
};

#define PERSIST (BIT(31) | BIT(28) | BIT(26) | BIT(25) | BIT(23))

static void u_init(struct unit *m, bool scalable)
{
	memset(m, 0, sizeof(*m));
	m->ver = 0x10;
	/* QEMU 7.2's CAP: FRO 0x220, NFR, ND 6 (16-bit DIDs), MAMV 18, PSI,
	 * SLLPS 2M|1G, MGAW 48, SAGAW 39|48 bits, read/write draining. */
	m->cap = ((uint64_t)(FRO / 16) << 24) | ((uint64_t)(NFR - 1) << 40) | 6 |
		 (18ull << 48) | BIT(39) | (3ull << 34) | (47ull << 16) | (6ull << 8) | BIT(54) |
		 BIT(55);
	/* QI, IRO 0xf0, DT, PT; scalable: SMTS, SRS, SLTS, FLTS, PASID with
	 * PSS 19 (20-bit PASIDs). */
	m->ecap = BIT(1) | (0xfull << 8) | BIT(2) | BIT(6);
	if (scalable)
		m->ecap |= BIT(43) | BIT(31) | BIT(46) | BIT(47) | BIT(40) | (19ull << 35);
	m->fectl = m->iectl = 1u << 31;
}

static void u_log(struct unit *m, uint32_t off, uint32_t v)
{
	if (m->nlog < 256) {
		m->log[m->nlog] = off;
		m->logv[m->nlog] = v;
	}
	m->nlog++;
}

static void *host(uint64_t a)
{
	return (void *)(uintptr_t)a;
}

/* QEMU's checks for one descriptor (vtd_process_inv_desc and helpers). */
static bool u_desc_ok(struct unit *m, const uint64_t *w)
{
	uint64_t lo = w[0], hi = w[1];
	unsigned type = lo & 0xf;

	switch (type) {
	case 1:
		if ((lo & Q_CC_RSVD) || hi)
			return false;
		return ((lo >> 4) & 3) != 0;
	case 2:
		if ((lo & Q_IOTLB_RSVD_LO) || (hi & Q_IOTLB_RSVD_HI))
			return false;
		if (((lo >> 4) & 3) == 3)
			return (hi & 0x3f) <= ((m->cap >> 48) & 0x3f);
		return ((lo >> 4) & 3) != 0;
	case 3:
		return !(lo & Q_DEVTLB_RSVD_LO) && !(hi & Q_DEVTLB_RSVD_HI);
	case 4: /* interrupt entry cache */
	case 6: /* PASID-based IOTLB: accepted, not executed */
	case 7: /* PASID cache: accepted, not executed */
		return true;
	case 5:
		if ((lo & Q_WAIT_RSVD_LO) || (hi & Q_WAIT_RSVD_HI))
			return false;
		if ((lo & BIT(5)) && (lo & BIT(4)))
			ck_abort_msg("a wait with SW and IF: QEMU 7.2 asserts");
		return (lo & (BIT(4) | BIT(5))) != 0;
	default:
		return false;
	}
}

static void u_exec(struct unit *m, const uint64_t *w)
{
	unsigned type = w[0] & 0xf;
	struct ik_vtd_desc d;

	m->counts[type]++;
	m->desc_done++;
	if (type == 5) {
		if (m->aborting)
			return; /* aborted by the time-out: no status */
		if (w[0] & BIT(5)) {
			uint32_t data = (uint32_t)(w[0] >> 32);

			__atomic_store_n((uint32_t *)host(w[1] & ~3ull), data, __ATOMIC_RELEASE);
		} else {
			m->ics |= 1;
		}
		return;
	}
	if (type == 3 && m->devtlb_timeout) {
		m->fsts |= 1u << 6; /* ITE */
		m->aborting = true;
	}
	ck_assert_int_eq(ik_vtd_desc_decode(w, m->dw ? 4 : 2, &d), 0);
	m->last[m->nlast++ % 64] = d;
}

static void u_fetch(struct unit *m)
{
	unsigned es = m->dw ? 32 : 16, shift = m->dw ? 5 : 4;

	if (m->tail >= m->iq_size) {
		m->fsts |= 1u << 4;
		return;
	}
	while (m->head != m->tail) {
		uint64_t *w = host(m->iq_base + (uint64_t)m->head * es);
		uint64_t ent[4];

		memcpy(ent, w, es);
		if (!u_desc_ok(m, ent)) {
			m->fsts |= 1u << 4; /* IQE; IQH stays at the bad one */
			m->iqe++;
			m->iqercd = m->iqercd_on_iqe;
			break;
		}
		u_exec(m, ent);
		m->last_type = ent[0] & 0xf;
		m->head = (m->head + 1) % m->iq_size;
		m->iqh = (uint64_t)m->head << shift;
	}
}

static void u_gcmd(struct unit *m, uint32_t v)
{
	uint32_t changed = (m->gsts ^ v) & PERSIST, one = v & ~PERSIST & 0xff800000u;
	unsigned cmds = __builtin_popcount(changed) + __builtin_popcount(one);

	/* The rule: the persistent bits as GSTS shows them, one change. */
	if (cmds != 1)
		m->gcmd_violations++;
	if (changed & BIT(31) && !(m->stuck & BIT(31)))
		m->gsts ^= 1u << 31;
	if (v & BIT(30)) { /* SRTP */
		m->srtp++;
		m->srtp_reads = 0;
		m->root = m->rtaddr;
		if (!(m->stuck & BIT(30)))
			m->gsts |= 1u << 30;
	}
	if (v & BIT(27)) /* WBF: done at once, WBFS stays clear */
		m->wbf++;
	if (changed & BIT(26) && !(m->stuck & BIT(26))) {
		if (v & BIT(26)) {
			m->dw = (m->ecap & BIT(43)) && (m->iqa & BIT(11));
			m->iq_base = m->iqa & ~0xfffull;
			m->iq_size = 1u << ((m->iqa & 7) + 8 - (m->dw ? 1 : 0));
			m->qi_on = true;
			m->gsts |= 1u << 26;
		} else if (m->tail == m->head && m->last_type == 5 && !m->refuse_qi_off) {
			m->qi_on = false;
			m->head = 0;
			m->iqh = 0;
			m->gsts &= ~(1u << 26);
		}
	}
	if (one & (BIT(29) | BIT(24)))
		m->one_shot_writes++;
}

static uint64_t *u_reg64(struct unit *m, uint32_t off)
{
	switch (off & ~7u) {
	case IK_VTD_REG_CAP: return &m->cap;
	case IK_VTD_REG_ECAP: return &m->ecap;
	case IK_VTD_REG_RTADDR: return &m->rtaddr;
	case IK_VTD_REG_IQH: return &m->iqh;
	case IK_VTD_REG_IQT: return &m->iqt;
	case IK_VTD_REG_IQA: return &m->iqa;
	case IK_VTD_REG_IQERCD: return &m->iqercd;
	default:
		if (off >= FRO && off < REGS_SIZE)
			return &m->frcd[(off - FRO) / 16][((off - FRO) / 8) & 1];
		return NULL;
	}
}

static uint32_t u_read32(void *ctx, uint32_t off)
{
	struct unit *m = ctx;
	uint64_t *r;

	ck_assert_uint_eq(off & 3, 0);
	switch (off) {
	case IK_VTD_REG_VER: return m->ver;
	case IK_VTD_REG_GSTS: {
		uint32_t g = m->gsts;

		/* The poller is preempted after this read until past its
		 * deadline; the unit finishes the command meanwhile. */
		if (m->late_srtp && m->srtp && ++m->srtp_reads == m->late_srtp) {
			struct timespec ts = { 0, 3 * (long)SHORT_TIMEOUT_NS };

			nanosleep(&ts, NULL);
			m->stuck &= ~BIT(30);
			m->gsts |= BIT(30);
			m->late_srtp = 0;
		}
		return g;
	}
	case IK_VTD_REG_FSTS: {
		uint32_t ppf = 0;

		for (unsigned i = 0; i < NFR; i++)
			if (m->frcd[i][1] & BIT(63))
				ppf = 2;
		return (m->fsts & ~2u) | ppf;
	}
	case IK_VTD_REG_FECTL: return m->fectl;
	case IK_VTD_REG_IECTL: return m->iectl;
	case IK_VTD_REG_ICS: return m->ics;
	default:
		r = u_reg64(m, off);
		ck_assert_msg(r != NULL, "read of unmodelled register %#x", off);
		return (uint32_t)(*r >> (off & 4 ? 32 : 0));
	}
}

static void u_write32(void *ctx, uint32_t off, uint32_t v)
{
	struct unit *m = ctx;
	uint64_t *r;

	ck_assert_uint_eq(off & 3, 0);
	u_log(m, off, v);
	switch (off) {
	case IK_VTD_REG_GCMD:
		u_gcmd(m, v);
		return;
	case IK_VTD_REG_FSTS:
		m->fsts &= ~(v & 0x71u); /* PFO, IQE, ICE, ITE: RW1C */
		if (v & (1u << 6))
			m->aborting = false;
		return;
	case IK_VTD_REG_FECTL: m->fectl = v; return;
	case IK_VTD_REG_IECTL: m->iectl = v; return;
	case IK_VTD_REG_ICS: m->ics &= ~v; return;
	case IK_VTD_REG_IQT:
		m->iqt = (m->iqt & ~0xffffffffull) | v;
		m->iqt_writes++;
		if (m->dw && (v & 0x10))
			return; /* QEMU ignores the write */
		m->tail = (uint32_t)((v & 0x7fff0) >> (m->dw ? 5 : 4));
		if (m->qi_on && !(m->fsts & (1u << 4)))
			u_fetch(m);
		return;
	default:
		break;
	}
	if (off >= FRO && off < REGS_SIZE && (off & 15) == 12) {
		if (v & (1u << 31))
			m->frcd[(off - FRO) / 16][1] &= ~BIT(63); /* F: RW1C */
		return;
	}
	r = u_reg64(m, off);
	ck_assert_msg(r != NULL && off != IK_VTD_REG_CAP && off != IK_VTD_REG_ECAP,
		      "write of unmodelled register %#x", off);
	if (off & 4)
		*r = (*r & 0xffffffffull) | (uint64_t)v << 32;
	else
		*r = (*r & ~0xffffffffull) | v;
}

/* A fault record, fields at the specification's positions. */
static void u_fault(struct unit *m, unsigned i, uint16_t sid, uint64_t addr, uint8_t fr,
		    bool write, bool pp, uint32_t pasid)
{
	m->frcd[i][0] = addr & ~0xfffull;
	m->frcd[i][1] = BIT(63) | (write ? 0 : BIT(62)) | ((uint64_t)pasid << 40) |
			((uint64_t)fr << 32) | (pp ? BIT(31) : 0) | sid;
}

/* ================================================================ harness */

struct rig {
	struct unit m;
	struct ik_mmio mmio;
	struct ik_fault_alloc fa;
	struct ik_dma_mem dma;
	struct ik_vtd_config cfg;
	struct ik_vtd *u;
};


static void rig_init(struct rig *r, bool scalable)
{
	memset(r, 0, sizeof(*r));
	u_init(&r->m, scalable);
	r->mmio.read32 = u_read32;
	r->mmio.write32 = u_write32;
	r->mmio.ctx = &r->m;
	ik_fault_alloc_init(&r->fa);
	ck_assert_int_eq(ik_dma_mem_default(&r->dma, &r->fa.a), 0);
	r->cfg.mmio = &r->mmio;
	r->cfg.dma = &r->dma;
	r->cfg.alloc = &r->fa.a;
	r->cfg.haw = 48;
	r->cfg.flags = scalable ? IK_VTD_CFG_SCALABLE : 0;
	r->cfg.pasid_bits = scalable ? 8 : 0; /* 4 PASID tables */
	/* Long enough that a loaded machine (TSan, valgrind, other jobs)
	 * never expires a wait that completes; the tests that expect a
	 * timeout set SHORT_TIMEOUT_NS themselves. */
	r->cfg.timeout_ns = 10000000000ull;
}

static void rig_up(struct rig *r)
{
	ck_assert_int_eq(ik_vtd_create(&r->cfg, &r->u), 0);
	ck_assert_int_eq(ik_vtd_enable(r->u), 0);
}

static void rig_fini(struct rig *r)
{
	ik_vtd_destroy(r->u);
	r->u = NULL;
	ck_assert_int_eq(r->fa.live, 0);
}

/* A VT-d table set for the rig's unit (hooks optional). */
static struct ik_pgtable *mk_pt_hooks(struct rig *r, enum ik_pt_fmt fmt, uint32_t ias,
				      const struct ik_pgtable_hooks *hooks, void *cookie)
{
	struct ik_vtd_caps vc = { r->m.cap, r->m.ecap, 48, (r->cfg.flags & IK_VTD_CFG_SCALABLE) != 0 };
	struct ik_pgtable_cfg pc;
	struct ik_pgtable *pt;

	ck_assert_int_eq(ik_vtd_cfg_init(&pc, fmt, &vc, ias, 0), 0);
	pc.hooks = hooks;
	pc.cookie = cookie;
	ck_assert_int_eq(ik_pgtable_create(&pc, &pt), 0);
	return pt;
}

static struct ik_pgtable *mk_pt(struct rig *r, enum ik_pt_fmt fmt, uint32_t ias)
{
	return mk_pt_hooks(r, fmt, ias, NULL, NULL);
}

static uint64_t *root_entry(struct rig *r, unsigned bus)
{
	return (uint64_t *)host(r->m.root & ~0xfffull) + 2 * bus;
}

/* ================================================================ capabilities */

START_TEST(cap_and_ecap_fields_decode_at_spec_positions)
{
	struct ik_vtd_hwcaps c;
	uint64_t cap, ecap;

	/* Single bits of CAP_REG at the positions "Register descriptions" gives. */
	static const struct {
		unsigned bit;
		size_t off;
	} cbits[] = {
		{ 3, offsetof(struct ik_vtd_hwcaps, afl) },
		{ 4, offsetof(struct ik_vtd_hwcaps, rwbf) },
		{ 5, offsetof(struct ik_vtd_hwcaps, plmr) },
		{ 6, offsetof(struct ik_vtd_hwcaps, phmr) },
		{ 7, offsetof(struct ik_vtd_hwcaps, cm) },
		{ 22, offsetof(struct ik_vtd_hwcaps, zlr) },
		{ 39, offsetof(struct ik_vtd_hwcaps, psi) },
		{ 54, offsetof(struct ik_vtd_hwcaps, dwd) },
		{ 55, offsetof(struct ik_vtd_hwcaps, drd) },
		{ 56, offsetof(struct ik_vtd_hwcaps, fl1gp) },
		{ 59, offsetof(struct ik_vtd_hwcaps, pi) },
		{ 60, offsetof(struct ik_vtd_hwcaps, fl5lp) },
		{ 61, offsetof(struct ik_vtd_hwcaps, ecmds) },
		{ 62, offsetof(struct ik_vtd_hwcaps, esirtps) },
		{ 63, offsetof(struct ik_vtd_hwcaps, esrtps) },
	}, ebits[] = {
		{ 0, offsetof(struct ik_vtd_hwcaps, c) },
		{ 1, offsetof(struct ik_vtd_hwcaps, qi) },
		{ 2, offsetof(struct ik_vtd_hwcaps, dt) },
		{ 3, offsetof(struct ik_vtd_hwcaps, ir) },
		{ 4, offsetof(struct ik_vtd_hwcaps, eim) },
		{ 6, offsetof(struct ik_vtd_hwcaps, pt) },
		{ 7, offsetof(struct ik_vtd_hwcaps, sc) },
		{ 25, offsetof(struct ik_vtd_hwcaps, mts) },
		{ 26, offsetof(struct ik_vtd_hwcaps, nest) },
		{ 29, offsetof(struct ik_vtd_hwcaps, prs) },
		{ 30, offsetof(struct ik_vtd_hwcaps, ers) },
		{ 31, offsetof(struct ik_vtd_hwcaps, srs) },
		{ 33, offsetof(struct ik_vtd_hwcaps, nwfs) },
		{ 34, offsetof(struct ik_vtd_hwcaps, eafs) },
		{ 40, offsetof(struct ik_vtd_hwcaps, pasid) },
		{ 41, offsetof(struct ik_vtd_hwcaps, dit) },
		{ 42, offsetof(struct ik_vtd_hwcaps, pds) },
		{ 43, offsetof(struct ik_vtd_hwcaps, smts) },
		{ 44, offsetof(struct ik_vtd_hwcaps, vcs) },
		{ 45, offsetof(struct ik_vtd_hwcaps, slads) },
		{ 46, offsetof(struct ik_vtd_hwcaps, slts) },
		{ 47, offsetof(struct ik_vtd_hwcaps, flts) },
		{ 48, offsetof(struct ik_vtd_hwcaps, smpwc) },
		{ 49, offsetof(struct ik_vtd_hwcaps, rps) },
		{ 51, offsetof(struct ik_vtd_hwcaps, pms) },
		{ 52, offsetof(struct ik_vtd_hwcaps, adms) },
		{ 53, offsetof(struct ik_vtd_hwcaps, rprivs) },
	};

	for (unsigned i = 0; i < IK_ARRAY_SIZE(cbits); i++) {
		ck_assert_int_eq(ik_vtd_hwcaps_decode(0, BIT(cbits[i].bit), 0, &c), 0);
		ck_assert_msg(*(bool *)((char *)&c + cbits[i].off), "CAP bit %u", cbits[i].bit);
		ck_assert_int_eq(ik_vtd_hwcaps_decode(0, ~BIT(cbits[i].bit), ~0ull, &c), 0);
		ck_assert_msg(!*(bool *)((char *)&c + cbits[i].off), "CAP bit %u", cbits[i].bit);
	}
	for (unsigned i = 0; i < IK_ARRAY_SIZE(ebits); i++) {
		ck_assert_int_eq(ik_vtd_hwcaps_decode(0, 0, BIT(ebits[i].bit), &c), 0);
		ck_assert_msg(*(bool *)((char *)&c + ebits[i].off), "ECAP bit %u", ebits[i].bit);
		ck_assert_int_eq(ik_vtd_hwcaps_decode(0, ~0ull, ~BIT(ebits[i].bit), &c), 0);
		ck_assert_msg(!*(bool *)((char *)&c + ebits[i].off), "ECAP bit %u", ebits[i].bit);
	}
	/* Multi-bit fields: ND 2:0, SAGAW 12:8, MGAW 21:16, FRO 33:24 (x16),
	 * SLLPS 37:34, NFR 47:40 (+1), MAMV 53:48; IRO 17:8 (x16), MHMV 23:20,
	 * PSS 39:35; VER 7:4.3:0. */
	cap = 5 | (0x15ull << 8) | (0x2bull << 16) | (0x2a5ull << 24) | (0x9ull << 34) |
	      (0xc3ull << 40) | (0x2dull << 48);
	ecap = (0x3a7ull << 8) | (0xbull << 20) | (0x13ull << 35);
	ck_assert_int_eq(ik_vtd_hwcaps_decode(0x61, cap, ecap, &c), 0);
	ck_assert(c.ver_major == 6 && c.ver_minor == 1 && c.ver == 0x61);
	ck_assert(c.nd == 5 && c.domains == 16384);
	ck_assert_uint_eq(c.sagaw, 0x15);
	ck_assert_uint_eq(c.mgaw, 0x2c);
	ck_assert_uint_eq(c.fro, 0x2a50);
	ck_assert_uint_eq(c.sllps, 9);
	ck_assert_uint_eq(c.nfr, 0xc4);
	ck_assert_uint_eq(c.mamv, 0x2d);
	ck_assert_uint_eq(c.iro, 0x3a70);
	ck_assert_uint_eq(c.mhmv, 0xb);
	ck_assert(c.pss == 0x13 && c.pasid_bits == 20);
	ck_assert(c.cap == cap && c.ecap == ecap);
	ck_assert(!c.psi && !c.c && !c.qi);
	/* ND: 0 -> 16 domains, 6 -> 65536, 7 reserved (no domains). */
	ik_vtd_hwcaps_decode(0, 0, 0, &c);
	ck_assert_uint_eq(c.domains, 16);
	ik_vtd_hwcaps_decode(0, 6, 0, &c);
	ck_assert_uint_eq(c.domains, 65536);
	ik_vtd_hwcaps_decode(0, 7, 0, &c);
	ck_assert_uint_eq(c.domains, 0);
	/* QEMU 7.2's default unit, from its own definitions. */
	{
		struct unit m;

		u_init(&m, false);
		ik_vtd_hwcaps_decode(m.ver, m.cap, m.ecap, &c);
		ck_assert(c.fro == 0x220 && c.nfr == NFR && c.domains == 65536 && c.mamv == 18 &&
			  c.psi && c.sllps == 3 && c.mgaw == 48 && c.sagaw == 6 && c.dwd && c.drd &&
			  c.qi && c.iro == 0xf0 && !c.c && !c.cm && c.ver_major == 1);
	}
	ck_assert_int_eq(ik_vtd_hwcaps_decode(0, 0, 0, NULL), -EINVAL);
}
END_TEST

START_TEST(queue_register_values_and_indexes)
{
	struct ik_vtd_qi qi;
	struct ik_mmio m = { u_read32, u_write32, NULL, NULL, NULL };

	/* IQA: base 63:12, DW bit 11, QS 2:0. */
	ck_assert_uint_eq(ik_vtd_iqa_value(0x12345000ull, 3, false), 0x12345003ull);
	ck_assert_uint_eq(ik_vtd_iqa_value(0x12345000ull, 7, true), 0x12345807ull);
	/* IQH/IQT: index << 4 (128-bit), << 5 (256-bit), in 18:4. */
	ck_assert_uint_eq(ik_vtd_iq_reg_value(5, false), 0x50);
	ck_assert_uint_eq(ik_vtd_iq_reg_value(5, true), 0xa0);
	ck_assert_uint_eq(ik_vtd_iq_reg_index(0x7fff0, false), 0x7fff);
	ck_assert_uint_eq(ik_vtd_iq_reg_index(0x7ffe0, true), 0x3fff);
	ck_assert_uint_eq(ik_vtd_iq_reg_index(0xfff80000 | 0x30, false), 3);
	/* Queue sizes QS can give: 2^(QS+8) / 2^(QS+7) entries. */
	ck_assert_int_eq(ik_vtd_qi_init(&qi, &m, 8, false), 0);
	ck_assert_int_eq(ik_vtd_qi_init(&qi, &m, 15, false), 0);
	ck_assert_int_eq(ik_vtd_qi_init(&qi, &m, 7, false), -EINVAL);
	ck_assert_int_eq(ik_vtd_qi_init(&qi, &m, 16, false), -EINVAL);
	ck_assert_int_eq(ik_vtd_qi_init(&qi, &m, 7, true), 0);
	ck_assert_int_eq(ik_vtd_qi_init(&qi, &m, 14, true), 0);
	ck_assert_int_eq(ik_vtd_qi_init(&qi, &m, 15, true), -EINVAL);
	ck_assert_int_eq(ik_vtd_qi_init(NULL, &m, 8, false), -EINVAL);
	ck_assert_int_eq(ik_vtd_qi_init(&qi, NULL, 8, false), -EINVAL);
}
END_TEST

START_TEST(iqercd_and_fault_records_decode_at_spec_positions)
{
	struct ik_vtd_iqerr e;
	struct ik_vtd_fault f;
	uint64_t rec[2];

	/* IQERCD: IQEI 3:0, ITESID 47:32, ICESID 63:48. */
	ck_assert_int_eq(ik_vtd_iqercd_decode(0xabcd123400000004ull, &e), 0);
	ck_assert(e.iqei == 4 && e.itesid == 0x1234 && e.icesid == 0xabcd);
	ck_assert_str_eq(ik_vtd_iqei_name(IK_VTD_IQEI_TYPE), "invalid descriptor type");
	ck_assert_ptr_null(ik_vtd_iqei_name(9));
	ck_assert_int_eq(ik_vtd_iqercd_decode(0, NULL), -EINVAL);

	/* FRCD: FI 63:12 | SID 79:64, T2 92, PRIV 93, EXE 94, PP 95, FR
	 * 103:96, PV 123:104, AT 125:124, T 126 (0 = write), F 127. */
	rec[0] = 0x0000123456789fffull;
	rec[1] = BIT(63) | BIT(62) | (2ull << 60) | (0xabcdeull << 40) | (0x59ull << 32) |
		 BIT(31) | BIT(30) | BIT(29) | BIT(28) | 0x0310;
	ck_assert_int_eq(ik_vtd_fault_decode(rec, &f), 0);
	ck_assert_uint_eq(f.addr, 0x0000123456789000ull);
	ck_assert_uint_eq(f.sid, 0x0310);
	ck_assert(f.t2 && f.priv && f.exe && f.pp);
	ck_assert_uint_eq(f.reason, 0x59);
	ck_assert_uint_eq(f.pasid, 0xabcde);
	ck_assert_uint_eq(f.at, 2);
	ck_assert(!f.write); /* T = 1: a read */
	rec[1] = BIT(63) | (0x5ull << 32);
	ck_assert_int_eq(ik_vtd_fault_decode(rec, &f), 0);
	ck_assert(f.write && !f.pp && !f.priv && !f.exe && !f.t2 && f.reason == 5 && f.at == 0);
	rec[1] &= ~BIT(63);
	ck_assert_int_eq(ik_vtd_fault_decode(rec, &f), -ENOENT);
	ck_assert_int_eq(ik_vtd_fault_decode(NULL, &f), -EINVAL);
	ck_assert_int_eq(ik_vtd_fault_decode(rec, NULL), -EINVAL);
	/* Reason names: legacy, interrupt remapping, scalable; gaps are NULL. */
	ck_assert_str_eq(ik_vtd_fault_reason_name(0x2), "context entry not present");
	ck_assert_str_eq(ik_vtd_fault_reason_name(0x5), "write to a page without write permission");
	ck_assert_ptr_nonnull(ik_vtd_fault_reason_name(0xe));
	ck_assert_ptr_nonnull(ik_vtd_fault_reason_name(0x26));
	ck_assert_ptr_nonnull(ik_vtd_fault_reason_name(0x30));
	ck_assert_ptr_nonnull(ik_vtd_fault_reason_name(0x59));
	ck_assert_ptr_nonnull(ik_vtd_fault_reason_name(0x90));
	ck_assert_ptr_null(ik_vtd_fault_reason_name(0));
	ck_assert_ptr_null(ik_vtd_fault_reason_name(0xf));
	ck_assert_ptr_null(ik_vtd_fault_reason_name(0x33));
	ck_assert_ptr_null(ik_vtd_fault_reason_name(0x60));
	ck_assert_ptr_null(ik_vtd_fault_reason_name(0x91));
}
END_TEST

/* ================================================================ bring-up */

/* Index of the first logged write to `off` at or after `from`, or -1. */
static int log_find(const struct unit *m, uint32_t off, int from)
{
	for (unsigned i = (unsigned)from; i < m->nlog && i < 256; i++)
		if (m->log[i] == off)
			return (int)i;
	return -1;
}

START_TEST(legacy_bringup_programs_root_queue_invalidations_then_translation)
{
	struct rig r;
	int i_iectl, i_rt, i_srtp, i_iqt0, i_iqa, i_qie, i_te;

	rig_init(&r, false);
	rig_up(&r);
	/* Order: IECTL.IM, RTADDR, GCMD.SRTP, IQT = 0, IQA, GCMD.QIE, the
	 * invalidations (IQT writes), GCMD.TE. */
	i_iectl = log_find(&r.m, IK_VTD_REG_IECTL, 0);
	i_rt = log_find(&r.m, IK_VTD_REG_RTADDR, 0);
	i_srtp = log_find(&r.m, IK_VTD_REG_GCMD, i_rt);
	i_iqt0 = log_find(&r.m, IK_VTD_REG_IQT, i_srtp);
	i_iqa = log_find(&r.m, IK_VTD_REG_IQA, i_iqt0);
	i_qie = log_find(&r.m, IK_VTD_REG_GCMD, i_iqa);
	i_te = log_find(&r.m, IK_VTD_REG_GCMD, i_qie + 1);
	ck_assert(i_iectl >= 0 && i_iectl < i_rt && i_rt < i_srtp && i_srtp < i_iqt0 &&
		  i_iqt0 < i_iqa && i_iqa < i_qie && i_qie < i_te);
	ck_assert_uint_eq(r.m.logv[i_iectl], 1u << 31);
	ck_assert_uint_eq(r.m.logv[i_srtp], 1u << 30);		/* SRTP alone */
	ck_assert_uint_eq(r.m.logv[i_iqt0], 0);
	ck_assert_uint_eq(r.m.logv[i_qie], 1u << 26);		/* QIE */
	ck_assert_uint_eq(r.m.logv[i_te], (1u << 31) | (1u << 26)); /* TE, QIE kept */
	ck_assert_int_gt(log_find(&r.m, IK_VTD_REG_IQT, i_qie), i_qie);
	ck_assert_int_lt(log_find(&r.m, IK_VTD_REG_IQT, i_qie), i_te);
	/* RTADDR: the root table, TTM 00b; IQA: the ring, DW 0, QS 0. */
	ck_assert_uint_eq(r.m.rtaddr & 0xfff, 0);
	ck_assert(r.m.root != 0 && !r.m.dw && (r.m.iqa & 0xfff) == 0);
	ck_assert_uint_eq(r.m.iq_size, 256);
	ck_assert_uint_eq(r.m.gsts, (1u << 31) | (1u << 30) | (1u << 26));
	ck_assert_uint_eq(r.m.gcmd_violations, 0);
	ck_assert_uint_eq(r.m.one_shot_writes, 0);
	ck_assert_uint_eq(r.m.wbf, 0); /* no RWBF */
	/* Global context-cache and IOTLB invalidation (with draining), then a
	 * wait with a status write. */
	ck_assert(r.m.counts[1] == 1 && r.m.counts[2] == 1 && r.m.counts[5] == 1);
	ck_assert(r.m.last[0].type == IK_VTD_DESC_CC && r.m.last[0].g == IK_VTD_G_GLOBAL);
	ck_assert(r.m.last[1].type == IK_VTD_DESC_IOTLB && r.m.last[1].g == IK_VTD_G_GLOBAL &&
		  r.m.last[1].dr && r.m.last[1].dw);
	ck_assert_uint_eq(r.m.iqe, 0);
	ck_assert_ptr_nonnull(ik_vtd_queue(r.u));
	ck_assert_uint_eq(ik_vtd_desc_words(r.u), 2);
	ck_assert_uint_eq(ik_vtd_plan_flags(r.u), 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), -EBUSY);
	/* Disable: TE off, a wait, QIE off - QEMU's rule for QI disable. */
	ck_assert_int_eq(ik_vtd_disable(r.u), 0);
	ck_assert_uint_eq(r.m.gsts & ((1u << 31) | (1u << 26)), 0);
	ck_assert(!r.m.qi_on);
	ck_assert_uint_eq(r.m.gcmd_violations, 0);
	ck_assert_ptr_null(ik_vtd_queue(r.u));
	/* And up again: the queue restarts at IQH = 0. */
	ck_assert_int_eq(ik_vtd_enable(r.u), 0);
	ck_assert_int_eq(ik_vtd_issue(r.u, NULL, 0, true), 0);
	ck_assert_uint_eq(r.m.gcmd_violations, 0);
	rig_fini(&r);
}
END_TEST

START_TEST(scalable_bringup_uses_ttm_01_and_256_bit_descriptors)
{
	struct rig r;
	uint32_t before;

	rig_init(&r, true);
	rig_up(&r);
	/* RTADDR.TTM (11:10) = 01b; IQA.DW (11) = 1; 128 entries of 32 bytes. */
	ck_assert_uint_eq((r.m.rtaddr >> 10) & 3, 1);
	ck_assert(r.m.dw && (r.m.iqa & BIT(11)));
	ck_assert_uint_eq(r.m.iq_size, 128);
	/* CC global, PC global, IOTLB global, wait. */
	ck_assert(r.m.counts[1] == 1 && r.m.counts[7] == 1 && r.m.counts[2] == 1 &&
		  r.m.counts[5] == 1);
	ck_assert(r.m.last[1].type == IK_VTD_DESC_PC && r.m.last[1].g == IK_VTD_G_PC_GLOBAL);
	ck_assert_uint_eq(ik_vtd_desc_words(r.u), 4);
	ck_assert_uint_eq(ik_vtd_plan_flags(r.u), IK_VTD_PLAN_SCALABLE);
	/* IQT advances by 32 bytes per descriptor, bit 4 never set. */
	before = (uint32_t)r.m.iqt;
	ck_assert_int_eq(ik_vtd_issue(r.u, NULL, 0, true), 0);
	ck_assert_uint_eq((uint32_t)r.m.iqt - before, 32);
	ck_assert_uint_eq(r.m.iqt & 0x10, 0);
	ck_assert_uint_eq(r.m.gcmd_violations, 0);
	rig_fini(&r);
}
END_TEST

START_TEST(rwbf_unit_gets_write_buffer_flushes)
{
	struct rig r;
	struct ik_vtd_plan p;
	struct ik_vtd_target t;

	rig_init(&r, false);
	r.m.cap |= BIT(4); /* RWBF */
	rig_up(&r);
	ck_assert_uint_eq(r.m.wbf, 1); /* after SRTP */
	memset(&t, 0, sizeof(t));
	t.pt = mk_pt(&r, IK_PT_VTD_SL, 48);
	t.did = 1;
	ck_assert_int_eq(ik_vtd_plan_map(ik_vtd_caps(r.u), 0, &t, 0x1000, 0x1000, &p), 0);
	ck_assert(p.wbf && p.n == 0 && !p.sync);
	ck_assert_int_eq(ik_vtd_plan_issue(r.u, &p), 0);
	ck_assert_uint_eq(r.m.wbf, 2);
	ck_assert_uint_eq(r.m.gcmd_violations, 0);
	ik_pgtable_destroy((struct ik_pgtable *)t.pt);
	rig_fini(&r);
}
END_TEST

START_TEST(status_bit_that_never_follows_is_etimedout_and_unit_left_off)
{
	static const uint32_t stuck[] = { 1u << 30, 1u << 26, 1u << 31 };

	for (unsigned k = 0; k < IK_ARRAY_SIZE(stuck); k++) {
		struct rig r;

		rig_init(&r, k & 1);
		r.cfg.timeout_ns = SHORT_TIMEOUT_NS;
		r.m.stuck = stuck[k];
		ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
		ck_assert_int_eq(ik_vtd_enable(r.u), -ETIMEDOUT);
		/* Nothing left on, nothing left allocated but the object. */
		ck_assert_uint_eq(r.m.gsts & ((1u << 31) | (1u << 26)), 0);
		ck_assert_ptr_null(ik_vtd_queue(r.u));
		ck_assert_int_eq(r.fa.live, 1);
		ck_assert_uint_eq(r.m.gcmd_violations, 0);
		r.m.stuck = 0;
		ck_assert_int_eq(ik_vtd_enable(r.u), 0);
		rig_fini(&r);
	}
}
END_TEST

/* A status bit that comes true while the poller is preempted past its
 * deadline is seen: the poll takes one more look before -ETIMEDOUT. */
START_TEST(status_bit_set_while_the_poller_was_away_is_not_a_timeout)
{
	struct rig r;

	rig_init(&r, false);
	r.cfg.timeout_ns = SHORT_TIMEOUT_NS;
	r.m.stuck = 1u << 30;
	r.m.late_srtp = 2;
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), 0);
	ck_assert_uint_eq(r.m.late_srtp, 0); /* the late read happened */
	ck_assert_uint_eq(r.m.gsts & (1u << 31), 1u << 31);
	ck_assert_uint_eq(r.m.gcmd_violations, 0);
	rig_fini(&r);
}
END_TEST

/* A unit that will not let go (QIE does not clear after a failed enable):
 * its memory is kept, not freed under it; a later disable that succeeds
 * lets destroy free everything. */
START_TEST(unit_that_does_not_let_go_keeps_its_memory)
{
	struct rig r;
	long live;

	rig_init(&r, false);
	r.cfg.timeout_ns = SHORT_TIMEOUT_NS;
	r.m.stuck = 1u << 31; /* TES never follows: enable fails after QI is on */
	r.m.refuse_qi_off = true;
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
	live = r.fa.live;
	ck_assert_int_eq(ik_vtd_enable(r.u), -ETIMEDOUT);
	ck_assert(r.m.qi_on);
	ck_assert_int_eq(r.fa.live, live + 4); /* root, ring, status words, queue */
	ck_assert_int_eq(ik_vtd_enable(r.u), -EBUSY);
	ck_assert_int_eq(ik_vtd_disable(r.u), -ETIMEDOUT);
	r.m.refuse_qi_off = false;
	r.m.stuck = 0;
	ck_assert_int_eq(ik_vtd_disable(r.u), 0);
	ck_assert(!r.m.qi_on);
	rig_fini(&r);
}
END_TEST

/* DMA memory that remembers its blocks, so that a test can free what a
 * stuck unit leaves allocated (by design) once the test is done with it. */
static struct {
	void *p[16];
	int n;
} kept;

static void *kept_alloc(void *ctx, ik_size size, ik_size align, ik_u64 *dma)
{
	void *p = NULL;

	(void)ctx;
	if (kept.n == 16 || posix_memalign(&p, align < 64 ? 64 : align, size))
		return NULL;
	kept.p[kept.n++] = p;
	*dma = (ik_u64)(uintptr_t)p;
	return p;
}

static void kept_free(void *ctx, void *cpu, ik_u64 dma, ik_size size)
{
	(void)ctx;
	(void)dma;
	(void)size;
	for (int i = 0; i < kept.n; i++)
		if (kept.p[i] == cpu) {
			kept.p[i] = kept.p[--kept.n];
			free(cpu);
			return;
		}
	ck_abort_msg("free of a block not allocated");
}

/*
 * A unit that will not let go (QIE never clears): destroy leaks the DMA
 * memory the unit may still read, as documented - but not the bookkeeping
 * (the queue's state from cfg->alloc), which no device reads.  fuzz_drv
 * found the queue state leaked with it.
 */
START_TEST(destroy_of_a_stuck_unit_leaks_only_dma_memory)
{
	struct ik_dma_mem dm = { kept_alloc, kept_free, NULL, NULL };
	struct rig r;

	rig_init(&r, false);
	r.cfg.dma = &dm;
	r.cfg.timeout_ns = SHORT_TIMEOUT_NS;
	r.m.stuck = 1u << 31; /* TES never follows: enable fails after QI is on */
	r.m.refuse_qi_off = true;
	memset(&kept, 0, sizeof(kept));
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), -ETIMEDOUT);
	ck_assert(r.m.qi_on);
	ik_vtd_destroy(r.u);
	r.u = NULL;
	ck_assert_int_eq(kept.n, 3); /* root, ring, status words: kept for the unit */
	ck_assert_int_eq(r.fa.live, 0); /* the bookkeeping is freed */
	while (kept.n)
		free(kept.p[--kept.n]);
	rig_fini(&r);

	/* Scalable mode, a device attached: its PASID directory's bookkeeping
	 * (cfg->alloc) is freed too, its pages kept. */
	{
		struct ik_vtd_attach a;
		struct ik_vtd_change chg;
		struct ik_pgtable *pt;

		rig_init(&r, true);
		r.cfg.dma = &dm;
		r.cfg.timeout_ns = SHORT_TIMEOUT_NS;
		r.m.stuck = 1u << 31;
		r.m.refuse_qi_off = true;
		ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
		pt = mk_pt(&r, IK_PT_VTD_SL, 48);
		memset(&a, 0, sizeof(a));
		a.pt = pt;
		a.did = 5;
		ck_assert_int_eq(ik_vtd_context_set(r.u, 0, 8, &a, &chg), 0);
		ck_assert_int_eq(ik_vtd_enable(r.u), -ETIMEDOUT);
		ik_vtd_destroy(r.u);
		r.u = NULL;
		ck_assert_int_gt(kept.n, 3);
		ck_assert_int_eq(r.fa.live, 0);
		while (kept.n)
			free(kept.p[--kept.n]);
		ik_pgtable_destroy(pt);
		rig_fini(&r);
	}

	/* The same unit letting go before destroy: nothing is leaked. */
	rig_init(&r, false);
	r.cfg.dma = &dm;
	r.cfg.timeout_ns = SHORT_TIMEOUT_NS;
	r.m.stuck = 1u << 31;
	r.m.refuse_qi_off = true;
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), -ETIMEDOUT);
	r.m.refuse_qi_off = false;
	r.m.stuck = 0;
	ik_vtd_destroy(r.u);
	r.u = NULL;
	ck_assert(!r.m.qi_on);
	ck_assert_int_eq(kept.n, 0);
	rig_fini(&r);
}
END_TEST

/* A CAP.FRO that puts the fault-recording registers over the architectural
 * ones (fuzz_drv: fault_pop then wrote F-clears into GSTS and CCMD): the
 * unit is refused at create, nothing allocated. */
START_TEST(fault_records_over_the_registers_are_refused)
{
	static const uint64_t fro[] = { 0, 1, 0xf };
	struct rig r;

	for (unsigned i = 0; i < IK_ARRAY_SIZE(fro); i++) {
		rig_init(&r, false);
		r.m.cap = (r.m.cap & ~(0x3ffull << 24)) | fro[i] << 24;
		ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), -EOPNOTSUPP);
		ck_assert_ptr_null(r.u);
		rig_fini(&r);
	}
	rig_init(&r, false);
	r.m.cap = (r.m.cap & ~(0x3ffull << 24)) | 0x10ull << 24; /* 0x100 */
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
	rig_fini(&r);
}
END_TEST

START_TEST(unit_enabled_by_someone_else_is_ebusy_until_disabled)
{
	struct rig r;

	rig_init(&r, false);
	r.m.gsts = 1u << 31; /* firmware left translation on */
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), -EBUSY);
	ck_assert_int_eq(r.fa.live, 1);
	ck_assert_int_eq(ik_vtd_disable(r.u), 0);
	ck_assert_uint_eq(r.m.gsts, 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), 0);
	rig_fini(&r);
}
END_TEST

START_TEST(enable_allocation_failure_midway_leaves_nothing)
{
	for (bool scalable = false; ; scalable = true) {
		long n;

		for (n = 1;; n++) {
			struct rig r;
			int err;

			rig_init(&r, scalable);
			ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
			ik_fault_alloc_fail_nth(&r.fa, n);
			err = ik_vtd_enable(r.u);
			ik_fault_alloc_disarm(&r.fa);
			if (err == 0) {
				rig_fini(&r);
				break;
			}
			ck_assert_int_eq(err, -ENOMEM);
			ck_assert_int_eq(r.fa.live, 1);
			ck_assert_uint_eq(r.m.gsts, 0);
			ck_assert_uint_eq(r.m.nlog, 0); /* not a register written */
			rig_fini(&r);
		}
		ck_assert_int_ge(n, 4); /* root, ring, status words, queue */
		if (scalable)
			break;
	}
}
END_TEST

START_TEST(create_validates_its_config)
{
	struct rig r;
	struct ik_vtd_config c;
	struct ik_vtd *u = (struct ik_vtd *)1;

	rig_init(&r, false);
	c = r.cfg;
	c.haw = 31;
	ck_assert_int_eq(ik_vtd_create(&c, &u), -EINVAL);
	c.haw = 53;
	ck_assert_int_eq(ik_vtd_create(&c, &u), -EINVAL);
	c = r.cfg;
	c.qs = 8;
	ck_assert_int_eq(ik_vtd_create(&c, &u), -EINVAL);
	c = r.cfg;
	c.flags = 0x100;
	ck_assert_int_eq(ik_vtd_create(&c, &u), -EINVAL);
	c = r.cfg;
	c.pasid_bits = 21;
	ck_assert_int_eq(ik_vtd_create(&c, &u), -EINVAL);
	c = r.cfg;
	c.flags = IK_VTD_CFG_SCALABLE; /* no ECAP.SMTS */
	ck_assert_int_eq(ik_vtd_create(&c, &u), -EOPNOTSUPP);
	r.m.ecap &= ~BIT(1); /* no queued invalidation */
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &u), -EOPNOTSUPP);
	r.m.ecap |= BIT(1);
	ik_fault_alloc_fail_nth(&r.fa, 1);
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &u), -ENOMEM);
	ck_assert_ptr_eq(u, (struct ik_vtd *)1);
	ik_fault_alloc_disarm(&r.fa);
	ck_assert_int_eq(r.fa.live, 0);
	ck_assert_uint_eq(r.m.nlog, 0);
	/* PASID bits above ECAP.PSS + 1. */
	rig_init(&r, true);
	r.m.ecap = (r.m.ecap & ~(0x1full << 35)) | (7ull << 35); /* 8-bit PASIDs */
	c = r.cfg;
	c.pasid_bits = 9;
	ck_assert_int_eq(ik_vtd_create(&c, &u), -EINVAL);
	c.pasid_bits = 8;
	ck_assert_int_eq(ik_vtd_create(&c, &u), 0);
	ik_vtd_destroy(u);
	ck_assert_int_eq(r.fa.live, 0);
}
END_TEST

/* ================================================================ queue errors */

/* A descriptor QEMU refuses: -EIO to its issuer, FSTS.IQE cleared, IQT
 * written again (QEMU fetches only then), and the queue goes on. */
START_TEST(bad_descriptor_is_eio_and_queue_resumes_after_iqt_rewrite)
{
	for (int scalable = 0; scalable < 2; scalable++) {
		struct ik_vtd_stats st;
		uint64_t bad[4] = { 0x2 | (2ull << 4) | BIT(8), 0, 0, 0 }; /* IOTLB, reserved bit 8 */
		unsigned words, iqt_before;
		struct rig r;

		rig_init(&r, scalable);
		rig_up(&r);
		words = ik_vtd_desc_words(r.u);
		r.m.iqercd_on_iqe = IK_VTD_IQEI_RESERVED;
		iqt_before = r.m.iqt_writes;
		ck_assert_int_eq(ik_cmdq_issue(ik_vtd_queue(r.u), bad, 1, IK_CMDQ_SYNC), -EIO);
		ck_assert_uint_eq(r.m.iqe, 1);
		ck_assert_uint_eq(r.m.fsts & (1u << 4), 0);
		/* publish, then the acknowledgement's rewrite */
		ck_assert_uint_ge(r.m.iqt_writes - iqt_before, 2);
		/* The repair was the no-op: a wait with IF, which set ICS.IWC. */
		ck_assert_uint_eq(r.m.ics & 1, 1);
		ck_assert_int_eq(ik_vtd_get_stats(r.u, &st), 0);
		ck_assert_uint_eq(st.queue_errors, 1);
		/* Later submissions complete, for several laps of the ring. */
		ik_test_vtd_laps(r.u, 300);
		ck_assert_uint_eq(r.m.iqe, 1);
		(void)words;
		rig_fini(&r);
	}
}
END_TEST

/* ITE: the unit aborts the waits behind a timed-out device-TLB invalidation
 * (no status write); their issuer times out, ITE is cleared and IQT
 * rewritten, and the queue goes on. */
START_TEST(device_tlb_timeout_aborts_the_wait_then_queue_goes_on)
{
	struct ik_vtd_desc d;
	struct ik_vtd_stats st;
	struct rig r;

	rig_init(&r, false);
	r.cfg.timeout_ns = SHORT_TIMEOUT_NS;
	rig_up(&r);
	memset(&d, 0, sizeof(d));
	d.type = IK_VTD_DESC_DEVTLB;
	d.sid = 0x0108;
	d.s = 1;
	d.addr = 0x7ffffffffffff000ull;
	r.m.devtlb_timeout = true;
	ck_assert_int_eq(ik_vtd_issue(r.u, &d, 1, true), -ETIMEDOUT);
	ck_assert_uint_eq(r.m.fsts & (1u << 6), 0); /* acknowledged */
	r.m.devtlb_timeout = false;
	ck_assert_int_eq(ik_vtd_issue(r.u, &d, 1, true), 0);
	ck_assert_int_eq(ik_vtd_get_stats(r.u, &st), 0);
	ck_assert_uint_ge(st.queue_errors, 1);
	rig_fini(&r);
}
END_TEST

START_TEST(issue_refuses_what_the_unit_would_reject)
{
	struct ik_vtd_desc d;
	struct rig r;

	rig_init(&r, false);
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
	memset(&d, 0, sizeof(d));
	d.type = IK_VTD_DESC_IOTLB;
	d.g = IK_VTD_G_DOMAIN;
	ck_assert_int_eq(ik_vtd_issue(r.u, &d, 1, true), -ENODEV); /* not enabled */
	ck_assert_int_eq(ik_vtd_enable(r.u), 0);
	d.g = IK_VTD_G_PAGE;
	d.am = 19; /* MAMV 18 */
	ck_assert_int_eq(ik_vtd_issue(r.u, &d, 1, true), -EINVAL);
	d.type = IK_VTD_DESC_PC; /* legacy mode */
	d.g = IK_VTD_G_PC_PASID;
	d.am = 0;
	ck_assert_int_eq(ik_vtd_issue(r.u, &d, 1, true), -EINVAL);
	ck_assert_uint_eq(r.m.iqe, 0);
	ck_assert_int_eq(ik_vtd_issue(r.u, NULL, 1, true), -EINVAL);
	ck_assert_int_eq(ik_vtd_issue(NULL, &d, 1, true), -EINVAL);
	rig_fini(&r);
}
END_TEST

/* ================================================================ tables */

START_TEST(legacy_context_entry_fields_at_spec_positions)
{
	struct ik_vtd_attach a = { NULL, 0x1234, IK_VTD_ATTACH_ATS | IK_VTD_ATTACH_FPD };
	const struct ik_pgtable *ck_pt;
	struct ik_pgtable_info info;
	struct ik_vtd_change chg;
	uint64_t *re, *ce;
	struct rig r;

	rig_init(&r, false);
	rig_up(&r);
	a.pt = mk_pt(&r, IK_PT_VTD_SL, 48);
	ck_pt = a.pt;
	ik_pgtable_get_info(a.pt, &info);
	ck_assert_int_eq(ik_vtd_context_set(r.u, 3, 0x42, &a, &chg), 0);
	/* Root entry of bus 3: P (bit 0) | CTP (63:12); upper half reserved. */
	re = root_entry(&r, 3);
	ck_assert_uint_eq(re[0] & 0xfff, 1);
	ck_assert_uint_eq(re[1], 0);
	/* Context entry 0x42: lo = P (0) | FPD (1) | TT 01b (3:2) | SLPTPTR
	 * (63:12); hi = AW 010b (2:0, 48 bits) | DID (23:8). */
	ce = (uint64_t *)host(re[0] & ~0xfffull) + 2 * 0x42;
	ck_assert_uint_eq(ce[0], info.root_iommu | 0x1 | 0x2 | (1u << 2));
	ck_assert_uint_eq(ce[1], 2 | (0x1234ull << 8));
	ck_assert(chg.kind == IK_VTD_CHANGE_CONTEXT && chg.present && chg.ats &&
		  chg.sid == 0x0342 && chg.did == 0x1234 && !chg.first_level);
	/* Pass-through: TT 10b, AW the widest SAGAW (48 bits: 2). */
	a.pt = NULL;
	a.flags = IK_VTD_ATTACH_PASSTHROUGH;
	ck_assert_int_eq(ik_vtd_context_set(r.u, 3, 0x43, &a, &chg), 0);
	ck_assert_uint_eq(ce[2], 0x1 | (2u << 2));
	ck_assert_uint_eq(ce[3], 2 | (0x1234ull << 8));
	/* Clear: reports the old DID and ATS; the entry reads zero. */
	ck_assert_int_eq(ik_vtd_context_clear(r.u, 3, 0x42, &chg), 0);
	ck_assert(ce[0] == 0 && ce[1] == 0);
	ck_assert(chg.kind == IK_VTD_CHANGE_CONTEXT && !chg.present && chg.ats &&
		  chg.did == 0x1234 && chg.sid == 0x0342);
	ck_assert_int_eq(ik_vtd_context_clear(r.u, 3, 0x42, &chg), -ENOENT);
	ck_assert_int_eq(ik_vtd_context_clear(r.u, 9, 0, &chg), -ENOENT);
	rig_fini(&r);
	ik_pgtable_destroy((struct ik_pgtable *)(uintptr_t)ck_pt);
}
END_TEST

/* Bad input is -EINVAL (or -EBUSY) and writes nothing: every table byte and
 * every allocation as before. */
START_TEST(bad_attach_input_is_refused_with_nothing_written)
{
	struct ik_vtd_change chg;
	struct ik_vtd_stats st0, st1;
	struct ik_pgtable *sl, *sl5, *fl;
	struct ik_vtd_attach a;
	uint64_t root_before[512];
	long live;
	struct rig r;

	rig_init(&r, false);
	r.m.cap = (r.m.cap & ~7ull) | 2; /* ND 2: 256 domains */
	r.m.ecap &= ~(BIT(2) | BIT(6));	 /* no device-TLB, no pass-through */
	rig_up(&r);
	sl = mk_pt(&r, IK_PT_VTD_SL, 48);
	{
		/* A 5-level table set from a unit that has them. */
		struct ik_vtd_caps vc = { r.m.cap | (8ull << 8) | (56ull << 16), r.m.ecap, 48, false };
		struct ik_pgtable_cfg pc;

		ck_assert_int_eq(ik_vtd_cfg_init(&pc, IK_PT_VTD_SL, &vc, 57, 0), 0);
		ck_assert_int_eq(ik_pgtable_create(&pc, &sl5), 0);
		vc.scalable = true;
		vc.ecap |= BIT(43) | BIT(47);
		ck_assert_int_eq(ik_vtd_cfg_init(&pc, IK_PT_VTD_FL, &vc, 47, 0), 0);
		ck_assert_int_eq(ik_pgtable_create(&pc, &fl), 0);
	}
	a.pt = sl;
	a.did = 5;
	a.flags = 0;
	ck_assert_int_eq(ik_vtd_context_set(r.u, 1, 8, &a, &chg), 0); /* bus 1 has a table */
	memcpy(root_before, root_entry(&r, 0), sizeof(root_before));
	ik_vtd_get_stats(r.u, &st0);
	live = r.fa.live;
#define REFUSED(call, err)                                                                  \
	do {                                                                                \
		ck_assert_int_eq((call), (err));                                            \
		ck_assert_int_eq(memcmp(root_before, root_entry(&r, 0), sizeof(root_before)), 0); \
		ck_assert_int_eq(r.fa.live, live);                                          \
	} while (0)
	REFUSED(ik_vtd_context_set(r.u, 256, 0, &a, &chg), -EINVAL);
	REFUSED(ik_vtd_context_set(r.u, 0, 256, &a, &chg), -EINVAL);
	a.did = 256; /* ND 2 */
	REFUSED(ik_vtd_context_set(r.u, 2, 0, &a, &chg), -EINVAL);
	REFUSED(ik_vtd_context_set(r.u, 1, 9, &a, &chg), -EINVAL);
	a.did = 5;
	a.pt = sl5; /* AW 3 (57 bits): not in this unit's SAGAW */
	REFUSED(ik_vtd_context_set(r.u, 2, 0, &a, &chg), -EINVAL);
	a.pt = fl; /* first-level in legacy mode */
	REFUSED(ik_vtd_context_set(r.u, 2, 0, &a, &chg), -EINVAL);
	a.pt = sl;
	a.flags = IK_VTD_ATTACH_ATS; /* no ECAP.DT */
	REFUSED(ik_vtd_context_set(r.u, 2, 0, &a, &chg), -EINVAL);
	a.flags = IK_VTD_ATTACH_PASID; /* legacy mode */
	REFUSED(ik_vtd_context_set(r.u, 2, 0, &a, &chg), -EINVAL);
	a.flags = 0x80;
	REFUSED(ik_vtd_context_set(r.u, 2, 0, &a, &chg), -EINVAL);
	a.flags = IK_VTD_ATTACH_PASSTHROUGH; /* no ECAP.PT, and a pt given */
	REFUSED(ik_vtd_context_set(r.u, 2, 0, &a, &chg), -EINVAL);
	a.pt = NULL;
	REFUSED(ik_vtd_context_set(r.u, 2, 0, &a, &chg), -EINVAL);
	a.flags = 0;
	REFUSED(ik_vtd_context_set(r.u, 2, 0, &a, &chg), -EINVAL); /* no pt */
	a.pt = sl;
	REFUSED(ik_vtd_context_set(r.u, 1, 8, &a, &chg), -EBUSY);  /* present */
	REFUSED(ik_vtd_context_set(NULL, 2, 0, &a, &chg), -EINVAL);
	REFUSED(ik_vtd_context_set(r.u, 2, 0, NULL, &chg), -EINVAL);
	REFUSED(ik_vtd_context_set(r.u, 2, 0, &a, NULL), -EINVAL);
	REFUSED(ik_vtd_context_clear(r.u, 256, 0, &chg), -EINVAL);
	REFUSED(ik_vtd_pasid_set(r.u, 1, 8, 0, &a, &chg), -EINVAL); /* legacy mode */
	REFUSED(ik_vtd_pasid_clear(r.u, 1, 8, 0, &chg), -EINVAL);
#undef REFUSED
	ik_vtd_get_stats(r.u, &st1);
	ck_assert_uint_eq(st0.tables, st1.tables);
	/* DID 0 under caching mode. */
	rig_fini(&r);
	rig_init(&r, false);
	r.m.cap |= BIT(7);
	rig_up(&r);
	a.pt = sl;
	a.did = 0;
	ck_assert_int_eq(ik_vtd_context_set(r.u, 0, 0, &a, &chg), -EINVAL);
	ck_assert_int_eq(r.fa.live, 5); /* object, root, ring, status words, queue */
	rig_fini(&r);
	ik_pgtable_destroy(sl);
	ik_pgtable_destroy(sl5);
	ik_pgtable_destroy(fl);
}
END_TEST

START_TEST(attach_allocation_failure_changes_nothing)
{
	for (int scalable = 0; scalable < 2; scalable++) {
		struct ik_vtd_attach a;
		struct ik_vtd_change chg;
		struct ik_pgtable *pt;
		struct rig r;
		long n, live;

		rig_init(&r, scalable);
		ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
		pt = mk_pt(&r, IK_PT_VTD_SL, 48);
		a.pt = pt;
		a.did = 7;
		a.flags = scalable ? IK_VTD_ATTACH_PASID : 0;
		live = r.fa.live;
		/* Before enable (no root table yet), every allocation fails in
		 * turn: -ENOMEM and not a page or byte left behind. */
		for (n = 1;; n++) {
			int err;

			ik_fault_alloc_fail_nth(&r.fa, n);
			err = ik_vtd_context_set(r.u, 0x10, 0x81, &a, &chg);
			ik_fault_alloc_disarm(&r.fa);
			if (!err)
				break;
			ck_assert_msg(err == -ENOMEM, "scalable %d n %ld: %d", scalable, n, err);
			ck_assert_int_eq(r.fa.live, live);
		}
		ck_assert_int_ge(n, scalable ? 6 : 3);
		ck_assert_int_eq(ik_vtd_enable(r.u), 0); /* reuses that root table */
		ck_assert_uint_eq(r.m.root & ~0xfffull, (uint64_t)(uintptr_t)root_entry(&r, 0));
		if (scalable) {
			/* A second PASID needs a new PASID table: same story. */
			a.flags = 0;
			live = r.fa.live;
			for (n = 1;; n++) {
				int err;

				ik_fault_alloc_fail_nth(&r.fa, n);
				err = ik_vtd_pasid_set(r.u, 0x10, 0x81, 64, &a, &chg);
				ik_fault_alloc_disarm(&r.fa);
				if (!err)
					break;
				ck_assert_int_eq(err, -ENOMEM);
				ck_assert_int_eq(r.fa.live, live);
			}
			ck_assert_int_eq(n, 2);
		}
		rig_fini(&r);
		ik_pgtable_destroy(pt);
	}
}
END_TEST

START_TEST(scalable_context_and_pasid_entries_at_spec_positions)
{
	struct ik_vtd_attach a;
	struct ik_vtd_change chg;
	struct ik_pgtable_info sli, fli;
	struct ik_pgtable *sl, *fl;
	uint64_t *re, *ce, *pd, *pe;
	struct rig r;

	rig_init(&r, true);
	rig_up(&r);
	sl = mk_pt(&r, IK_PT_VTD_SL, 48);
	fl = mk_pt(&r, IK_PT_VTD_FL, 47);
	ik_pgtable_get_info(sl, &sli);
	ik_pgtable_get_info(fl, &fli);
	a.pt = sl;
	a.did = 0x77;
	a.flags = IK_VTD_ATTACH_ATS | IK_VTD_ATTACH_PASID;
	ck_assert_int_eq(ik_vtd_context_set(r.u, 5, 0x85, &a, &chg), 0);
	ck_assert(chg.kind == IK_VTD_CHANGE_CONTEXT && chg.present && chg.ats &&
		  !chg.first_level && chg.did == 0x77 && chg.sid == 0x0585 && chg.pasid == 0);
	/* devfn 0x85 >= 128: the upper half of the root entry: UP (64) |
	 * UCTP (127:76); the lower half stays clear. */
	re = root_entry(&r, 5);
	ck_assert_uint_eq(re[0], 0);
	ck_assert_uint_eq(re[1] & 0xfff, 1);
	/* The 256-bit context entry at index 0x85 - 128: word 0 = P (0) | DTE
	 * (2) | PASIDE (3) | PDTS 11:9 = 2 (512 directory entries) | PASID
	 * directory pointer (63:12); word 1 RID_PASID (19:0) = 0; words 2-3 0. */
	ce = (uint64_t *)host(re[1] & ~0xfffull) + 4 * (0x85 - 128);
	ck_assert_uint_eq(ce[0] & 0xfff, 0x1 | 0x4 | 0x8 | (2u << 9));
	ck_assert(ce[1] == 0 && ce[2] == 0 && ce[3] == 0);
	/* PASID directory entry 0: P (0) | PASID table pointer (63:12). */
	pd = host(ce[0] & ~0xfffull);
	ck_assert_uint_eq(pd[0] & 0xfff, 1);
	/* PASID entry 0: word 0 = P | AW 010b (4:2) | PGTT 010b (8:6) |
	 * SLPTPTR (63:12); word 1 = DID (15:0). */
	pe = host(pd[0] & ~0xfffull);
	ck_assert_uint_eq(pe[0], sli.root_iommu | 1 | (2u << 2) | (2u << 6));
	ck_assert_uint_eq(pe[1] & 0xffff, 0x77);
	/* A first-level PASID entry for PASID 65 (directory entry 1, table
	 * entry 1): PGTT 001b, FLPTPTR in word 2 (63:12), FLPM 00b (3:2). */
	a.pt = fl;
	a.did = 0x78;
	a.flags = 0;
	ck_assert_int_eq(ik_vtd_pasid_set(r.u, 5, 0x85, 65, &a, &chg), 0);
	ck_assert(chg.kind == IK_VTD_CHANGE_PASID && chg.present && chg.first_level &&
		  chg.pasid == 65 && chg.did == 0x78);
	ck_assert_uint_eq(pd[1] & 0xfff, 1);
	pe = (uint64_t *)host(pd[1] & ~0xfffull) + 8 * 1;
	ck_assert_uint_eq(pe[0] & 0x1c1, 1 | (1u << 6));
	ck_assert_uint_eq(pe[2] & ~0xfffull, fli.root_iommu);
	ck_assert_uint_eq((pe[2] >> 2) & 3, 0);
	ck_assert_uint_eq(pe[1] & 0xffff, 0x78);
	/* Range and state checks. */
	ck_assert_int_eq(ik_vtd_pasid_set(r.u, 5, 0x85, 65, &a, &chg), -EBUSY);
	ck_assert_int_eq(ik_vtd_pasid_set(r.u, 5, 0x85, 1u << 6 << 6, &a, &chg), -EINVAL);
	ck_assert_int_eq(ik_vtd_pasid_set(r.u, 5, 0x86, 1, &a, &chg), -ENOENT);
	ck_assert_int_eq(ik_vtd_context_clear(r.u, 5, 0x85, &chg), -EBUSY); /* PASID 65 */
	ck_assert_int_eq(ik_vtd_pasid_clear(r.u, 5, 0x85, 66, &chg), -ENOENT);
	ck_assert_int_eq(ik_vtd_pasid_clear(r.u, 5, 0x85, 65, &chg), 0);
	ck_assert(chg.kind == IK_VTD_CHANGE_PASID && !chg.present && chg.first_level &&
		  chg.did == 0x78 && chg.ats);
	ck_assert_uint_eq(pe[0], 0);
	ck_assert_int_eq(ik_vtd_context_clear(r.u, 5, 0x85, &chg), 0);
	ck_assert(chg.kind == IK_VTD_CHANGE_CONTEXT && !chg.present && chg.did == 0x77 &&
		  chg.ats && !chg.first_level);
	ck_assert_uint_eq(ce[0], 0);
	/* devfn < 128 uses the lower half; PASIDs need PASIDE. */
	a.pt = sl;
	ck_assert_int_eq(ik_vtd_context_set(r.u, 5, 0x05, &a, &chg), 0);
	ck_assert_uint_eq(re[0] & 0xfff, 1);
	ck_assert_int_eq(ik_vtd_pasid_set(r.u, 5, 0x05, 3, &a, &chg), -EINVAL);
	/* Pass-through PASID entry: PGTT 100b. */
	ck_assert_int_eq(ik_vtd_pasid_clear(r.u, 5, 0x05, 0, &chg), 0);
	a.pt = NULL;
	a.flags = IK_VTD_ATTACH_PASSTHROUGH;
	ck_assert_int_eq(ik_vtd_pasid_set(r.u, 5, 0x05, 0, &a, &chg), 0);
	ck_assert(chg.first_level);
	rig_fini(&r);
	ik_pgtable_destroy(sl);
	ik_pgtable_destroy(fl);
}
END_TEST

/* ================================================================ faults */

START_TEST(fault_records_pop_in_order_decoded_and_cleared)
{
	struct ik_vtd_fault f;
	struct ik_vtd_stats st;
	struct rig r;

	rig_init(&r, false);
	rig_up(&r);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), -ENOENT);
	/* Records 2, 3, 0 pending, FRI = 2: popped in that order. */
	u_fault(&r.m, 2, 0x0100, 0x123000, 0x5, true, false, 0);
	u_fault(&r.m, 3, 0x0101, 0x456000, 0x6, false, true, 0x42);
	u_fault(&r.m, 0, 0x0102, 0x789000, 0x2, false, false, 0);
	r.m.fsts = 2u << 8;
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert(f.index == 2 && f.sid == 0x0100 && f.addr == 0x123000 && f.reason == 5 &&
		  f.write && !f.overflow);
	ck_assert_uint_eq(r.m.frcd[2][1] & BIT(63), 0); /* F written with 1 */
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert(f.index == 3 && !f.write && f.pp && f.pasid == 0x42 && f.reason == 6);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert(f.index == 0 && f.sid == 0x0102);
	ck_assert_uint_eq(u_read32(&r.m, IK_VTD_REG_FSTS) & 2, 0); /* PPF clear */
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), -ENOENT);
	/* Overflow: reported with the record and cleared. */
	u_fault(&r.m, 1, 0x0200, 0x1000, 0x1, true, false, 0);
	r.m.fsts = (1u << 8) | 1; /* PFO */
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), 0);
	ck_assert(f.overflow && f.index == 1);
	ck_assert_uint_eq(r.m.fsts & 1, 0);
	r.m.fsts = 1; /* PFO with nothing pending: cleared, -ENOENT */
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, &f), -ENOENT);
	ck_assert_uint_eq(r.m.fsts & 1, 0);
	ck_assert_int_eq(ik_vtd_get_stats(r.u, &st), 0);
	ck_assert(st.faults == 4 && st.overflows == 2);
	/* The queue's error bits are not touched by fault handling. */
	ck_assert_uint_eq(r.m.iqe, 0);
	rig_fini(&r);
}
END_TEST

/* ================================================================ planner */

static void caps_of(struct ik_vtd_hwcaps *c, uint64_t cap, uint64_t ecap)
{
	ck_assert_int_eq(ik_vtd_hwcaps_decode(0x10, cap, ecap, c), 0);
}

static struct ik_pgtable *plan_pt(enum ik_pt_fmt fmt)
{
	struct unit m;
	struct ik_vtd_caps vc;
	struct ik_pgtable_cfg pc;
	struct ik_pgtable *pt;

	u_init(&m, true);
	vc.cap = m.cap;
	vc.ecap = m.ecap;
	vc.haw = 48;
	vc.scalable = fmt == IK_PT_VTD_FL;
	ck_assert_int_eq(ik_vtd_cfg_init(&pc, fmt, &vc, fmt == IK_PT_VTD_FL ? 47 : 48, 0), 0);
	ck_assert_int_eq(ik_pgtable_create(&pc, &pt), 0);
	return pt;
}

static void gather(struct ik_gather *g, struct ik_pgtable *pt, uint64_t start, uint64_t end,
		   bool walk)
{
	ik_gather_init(g);
	g->start = start;
	g->end = end;
	g->granule = 4096;
	g->walk = walk;
	g->pt = pt;
	g->nr_ranges = 1;
}

/* Every planned descriptor encodes and QEMU 7.2 would accept it. */
static void plan_valid(const struct ik_vtd_plan *p, bool scalable)
{
	struct ik_vtd_desc_rules q;
	uint64_t w[4];

	ik_vtd_desc_rules_qemu72(&q, scalable);
	for (unsigned i = 0; i < p->n; i++) {
		struct unit m;

		u_init(&m, scalable);
		ck_assert_int_eq(ik_vtd_desc_validate(&p->d[i], &q), 0);
		ck_assert_int_eq(ik_vtd_desc_encode(&p->d[i], w, 4), 0);
		ck_assert(u_desc_ok(&m, w));
	}
}

START_TEST(plan_unmap_follows_the_choice_table_row_by_row)
{
	struct ik_pgtable *sl = plan_pt(IK_PT_VTD_SL), *fl = plan_pt(IK_PT_VTD_FL);
	struct ik_vtd_target t;
	struct ik_vtd_hwcaps c;
	struct ik_vtd_plan p;
	struct ik_gather g;
	struct unit m;
	const struct ik_vtd_desc *d = &p.d[0], *e = &p.d[1];

	u_init(&m, true);
	caps_of(&c, m.cap, m.ecap);
	memset(&t, 0, sizeof(t));
	t.pt = sl;
	t.did = 42;
	/* empty gather: nothing, no wait */
	ik_gather_init(&g);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(p.n == 0 && !p.sync && !p.wbf);
	/* second-level, PSI: pages 0x10..0x13 -> 2^2 pages at 0x10, IH (leaf only) */
	gather(&g, sl, 0x10000, 0x14000, false);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(p.n == 1 && p.sync && !p.wbf);
	ck_assert(d->type == IK_VTD_DESC_IOTLB && d->g == IK_VTD_G_PAGE && d->did == 42 &&
		  d->addr == 0x10000 && d->am == 2 && d->ih == 1 && d->dr && d->dw);
	plan_valid(&p, false);
	/* pages 0x13..0x14 straddle: the aligned block 0x10..0x17 (AM 3) */
	gather(&g, sl, 0x13000, 0x15000, false);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(d->addr == 0x10000 && d->am == 3);
	/* a table entry was cleared: IH = 0 */
	gather(&g, sl, 0x200000, 0x400000, true);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(d->g == IK_VTD_G_PAGE && d->addr == 0x200000 && d->am == 9 && d->ih == 0);
	/* the block would need AM 19 > MAMV 18: domain-selective */
	gather(&g, sl, 0, 1ull << 31, false);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(p.n == 1 && d->g == IK_VTD_G_DOMAIN && d->did == 42 && d->am == 0 &&
		  d->addr == 0 && d->ih == 0 && d->dr && d->dw);
	plan_valid(&p, false);
	/* AM 18 exactly is still page-selective */
	gather(&g, sl, 0, 1ull << 30, false);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(d->g == IK_VTD_G_PAGE && d->am == 18);
	/* above the caller's threshold: domain-selective */
	t.max_psi_pages = 2;
	gather(&g, sl, 0x10000, 0x14000, false);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(d->g == IK_VTD_G_DOMAIN);
	t.max_psi_pages = 4;
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(d->g == IK_VTD_G_PAGE);
	t.max_psi_pages = 0;
	/* no PSI in CAP, no draining: domain-selective, DR = DW = 0 */
	caps_of(&c, m.cap & ~(BIT(39) | BIT(54) | BIT(55)), m.ecap);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(d->g == IK_VTD_G_DOMAIN && !d->dr && !d->dw);
	caps_of(&c, m.cap, m.ecap);
	/* first-level (scalable): PASID-based, page or PASID-selective */
	t.pt = fl;
	t.pasid = 5;
	gather(&g, fl, 0x10000, 0x14000, false);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, IK_VTD_PLAN_SCALABLE, &t, &g, &p), 0);
	ck_assert(p.n == 1 && d->type == IK_VTD_DESC_PIOTLB && d->g == IK_VTD_G_PASID_PAGE &&
		  d->did == 42 && d->pasid == 5 && d->addr == 0x10000 && d->am == 2 && d->ih &&
		  !d->dr && !d->dw);
	plan_valid(&p, true);
	gather(&g, fl, 0, 1ull << 31, true);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, IK_VTD_PLAN_SCALABLE, &t, &g, &p), 0);
	ck_assert(d->type == IK_VTD_DESC_PIOTLB && d->g == IK_VTD_G_PASID && d->pasid == 5);
	/* ... not in legacy mode */
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), -EINVAL);
	/* ATS: the device-TLB of the same block, ATS size encoding */
	t.pt = sl;
	t.pasid = 0;
	t.flags = IK_VTD_TARGET_ATS;
	t.sid = 0x0310;
	t.mip = 5;
	gather(&g, sl, 0x7000, 0x8000, false); /* one page: S = 0 */
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(p.n == 2 && d->type == IK_VTD_DESC_IOTLB && e->type == IK_VTD_DESC_DEVTLB &&
		  e->sid == 0x0310 && e->mip == 5 && e->pfsid == 0 && e->s == 0 && e->addr == 0x7000);
	gather(&g, sl, 0x8000, 0xa000, false); /* 2 pages: S = 1, no address bit */
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(e->s == 1 && e->addr == 0x8000);
	gather(&g, sl, 0x10000, 0x14000, false); /* 4 pages: S = 1, bit 12 */
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(e->s == 1 && e->addr == 0x11000);
	gather(&g, sl, 0x200000, 0x400000, false); /* 512 pages: bits 12..19 */
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(e->s == 1 && e->addr == 0x2ff000);
	plan_valid(&p, false);
	gather(&g, sl, 0, 1ull << 31, false); /* domain-selective: the whole device-TLB */
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(d->g == IK_VTD_G_DOMAIN && e->s == 1 && e->addr == 0x7ffffffffffff000ull);
	plan_valid(&p, false);
	/* bad input: nothing written to *p */
	memset(&p, 0x5a, sizeof(p));
	t.pasid = 3;
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, IK_VTD_PLAN_SCALABLE, &t, &g, &p), -EOPNOTSUPP);
	t.flags = 0;
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), -EINVAL); /* PASID, legacy */
	t.pasid = 0;
	g.pt = fl; /* a gather from another table set */
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), -EINVAL);
	g.pt = sl;
	t.did = 0; /* fine without CM ... */
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	memset(&p, 0x5a, sizeof(p));
	caps_of(&c, m.cap | BIT(7), m.ecap); /* ... reserved with it */
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), -EINVAL);
	caps_of(&c, (m.cap & ~7ull) | 1, m.ecap); /* ND 1: 64 domains */
	t.did = 64;
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), -EINVAL);
	t.did = 63;
	t.mip = 32;
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), -EINVAL);
	t.mip = 0;
	t.flags = 0x10;
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), -EINVAL);
	t.flags = 0;
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0x10, &t, &g, &p), -EINVAL);
	ck_assert_int_eq(ik_vtd_plan_unmap(NULL, 0, &t, &g, &p), -EINVAL);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, NULL, &g, &p), -EINVAL);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, NULL, &p), -EINVAL);
	t.pt = NULL;
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), -EINVAL);
	ck_assert_uint_eq(((unsigned char *)&p)[0], 0x5a);
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, NULL), -EINVAL);
	ik_pgtable_destroy(sl);
	ik_pgtable_destroy(fl);
}
END_TEST

/* A real unmap's gather names its table set: another one's is refused. */
START_TEST(plan_refuses_a_gather_from_another_table_set)
{
	struct ik_pgtable *a = plan_pt(IK_PT_VTD_SL), *b = plan_pt(IK_PT_VTD_SL);
	static _Alignas(4096) unsigned char buf[4096];
	struct ik_vtd_target t;
	struct ik_vtd_hwcaps c;
	struct ik_vtd_plan p;
	struct ik_gather g;
	struct unit m;

	u_init(&m, false);
	caps_of(&c, m.cap, m.ecap);
	ck_assert_int_eq(ik_pgtable_map(b, 0x1000, (uint64_t)(uintptr_t)buf, 4096,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	ik_gather_init(&g);
	ck_assert_int_eq(ik_pgtable_unmap(b, 0x1000, 4096, &g), 4096);
	ck_assert(!g.walk && g.nr_tables == 0); /* leaf only: no pages queued */
	memset(&t, 0, sizeof(t));
	t.pt = a;
	t.did = 1;
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), -EINVAL);
	t.pt = b;
	ck_assert_int_eq(ik_vtd_plan_unmap(&c, 0, &t, &g, &p), 0);
	ck_assert(p.n == 1 && p.d[0].addr == 0x1000 && p.d[0].am == 0 && p.d[0].ih);
	ik_pgtable_gather_sync(b, &g);
	ik_pgtable_destroy(a);
	ik_pgtable_destroy(b);
}
END_TEST

START_TEST(plan_map_and_plan_change_follow_their_tables)
{
	struct ik_pgtable *sl = plan_pt(IK_PT_VTD_SL), *fl = plan_pt(IK_PT_VTD_FL);
	struct ik_vtd_change ch;
	struct ik_vtd_target t;
	struct ik_vtd_hwcaps c, cm;
	struct ik_vtd_plan p;
	struct unit m;

	u_init(&m, true);
	caps_of(&c, m.cap, m.ecap);
	caps_of(&cm, m.cap | BIT(7), m.ecap);
	memset(&t, 0, sizeof(t));
	t.pt = sl;
	t.did = 9;
	/* map: nothing without CM or RWBF; PSI (IH 0) with CM */
	ck_assert_int_eq(ik_vtd_plan_map(&c, 0, &t, 0x5000, 0x3000, &p), 0);
	ck_assert(p.n == 0 && !p.sync && !p.wbf);
	ck_assert_int_eq(ik_vtd_plan_map(&cm, 0, &t, 0x5000, 0x3000, &p), 0);
	ck_assert(p.n == 1 && p.sync && p.d[0].type == IK_VTD_DESC_IOTLB &&
		  p.d[0].g == IK_VTD_G_PAGE && p.d[0].addr == 0x4000 && p.d[0].am == 2 &&
		  !p.d[0].ih && p.d[0].did == 9);
	ck_assert_int_eq(ik_vtd_plan_map(&cm, 0, &t, 0, 1ull << 40, &p), 0);
	ck_assert(p.d[0].g == IK_VTD_G_DOMAIN);
	t.pt = fl;
	t.pasid = 2;
	ck_assert_int_eq(ik_vtd_plan_map(&cm, IK_VTD_PLAN_SCALABLE, &t, 0x5000, 0x1000, &p), 0);
	ck_assert(p.d[0].type == IK_VTD_DESC_PIOTLB && p.d[0].pasid == 2 && p.d[0].am == 0);
	t.pt = sl;
	t.pasid = 0;
	ck_assert_int_eq(ik_vtd_plan_map(&cm, 0, &t, 0x5000, 0, &p), -EINVAL);
	ck_assert_int_eq(ik_vtd_plan_map(&cm, 0, &t, ~0ull - 0xfff, 0x2000, &p), -EINVAL);
	t.did = 0;
	ck_assert_int_eq(ik_vtd_plan_map(&cm, 0, &t, 0x5000, 0x1000, &p), -EINVAL);

	/* change: set without CM: nothing */
	memset(&ch, 0, sizeof(ch));
	ch.kind = IK_VTD_CHANGE_CONTEXT;
	ch.present = true;
	ch.sid = 0x0108;
	ch.did = 9;
	ck_assert_int_eq(ik_vtd_plan_change(&c, 0, &ch, &p), 0);
	ck_assert(p.n == 0 && !p.sync && !p.wbf);
	/* set, CM, legacy: CC device under DID 0, IOTLB domain */
	ck_assert_int_eq(ik_vtd_plan_change(&cm, 0, &ch, &p), 0);
	ck_assert(p.n == 2 && p.sync && p.d[0].type == IK_VTD_DESC_CC &&
		  p.d[0].g == IK_VTD_G_DEVICE && p.d[0].sid == 0x0108 && p.d[0].did == 0 &&
		  p.d[0].fm == 0 && p.d[1].type == IK_VTD_DESC_IOTLB &&
		  p.d[1].g == IK_VTD_G_DOMAIN && p.d[1].did == 9);
	plan_valid(&p, false);
	/* set, CM, scalable context: CC, PC (DID, PASID 0), IOTLB domain */
	ck_assert_int_eq(ik_vtd_plan_change(&cm, IK_VTD_PLAN_SCALABLE, &ch, &p), 0);
	ck_assert(p.n == 3 && p.d[1].type == IK_VTD_DESC_PC && p.d[1].g == IK_VTD_G_PC_PASID &&
		  p.d[1].did == 9 && p.d[1].pasid == 0 && p.d[2].type == IK_VTD_DESC_IOTLB);
	plan_valid(&p, true);
	/* set, CM, first-level PASID entry: PC, PIOTLB (DID, PASID) */
	ch.kind = IK_VTD_CHANGE_PASID;
	ch.pasid = 17;
	ch.first_level = true;
	ck_assert_int_eq(ik_vtd_plan_change(&cm, IK_VTD_PLAN_SCALABLE, &ch, &p), 0);
	ck_assert(p.n == 2 && p.d[0].type == IK_VTD_DESC_PC && p.d[0].pasid == 17 &&
		  p.d[1].type == IK_VTD_DESC_PIOTLB && p.d[1].g == IK_VTD_G_PASID &&
		  p.d[1].pasid == 17 && p.d[1].did == 9);
	ck_assert_int_eq(ik_vtd_plan_change(&cm, 0, &ch, &p), -EINVAL); /* legacy */
	/* clear, legacy context: CC device (old DID), IOTLB domain; ATS: all */
	ch.kind = IK_VTD_CHANGE_CONTEXT;
	ch.pasid = 0;
	ch.first_level = false;
	ch.present = false;
	ch.ats = true;
	ck_assert_int_eq(ik_vtd_plan_change(&c, 0, &ch, &p), 0);
	ck_assert(p.n == 3 && p.sync && p.d[0].type == IK_VTD_DESC_CC && p.d[0].did == 9 &&
		  p.d[1].type == IK_VTD_DESC_IOTLB && p.d[1].g == IK_VTD_G_DOMAIN &&
		  p.d[2].type == IK_VTD_DESC_DEVTLB && p.d[2].sid == 0x0108 && p.d[2].s &&
		  p.d[2].addr == 0x7ffffffffffff000ull);
	plan_valid(&p, false);
	/* clear, scalable context: CC, PC, IOTLB (or PIOTLB), devtlb */
	ck_assert_int_eq(ik_vtd_plan_change(&c, IK_VTD_PLAN_SCALABLE, &ch, &p), 0);
	ck_assert(p.n == 4 && p.d[1].type == IK_VTD_DESC_PC && p.d[2].type == IK_VTD_DESC_IOTLB);
	/* clear, PASID entry of a PASID with ATS: not supported */
	ch.kind = IK_VTD_CHANGE_PASID;
	ch.pasid = 4;
	ck_assert_int_eq(ik_vtd_plan_change(&c, IK_VTD_PLAN_SCALABLE, &ch, &p), -EOPNOTSUPP);
	ch.ats = false;
	ch.first_level = true;
	ck_assert_int_eq(ik_vtd_plan_change(&c, IK_VTD_PLAN_SCALABLE, &ch, &p), 0);
	ck_assert(p.n == 2 && p.d[0].type == IK_VTD_DESC_PC && p.d[1].type == IK_VTD_DESC_PIOTLB);
	/* RWBF: a write-buffer flush with every change */
	caps_of(&c, m.cap | BIT(4), m.ecap);
	ch.present = true;
	ck_assert_int_eq(ik_vtd_plan_change(&c, IK_VTD_PLAN_SCALABLE, &ch, &p), 0);
	ck_assert(p.wbf && p.n == 0);
	/* bad input */
	ch.kind = 9;
	ck_assert_int_eq(ik_vtd_plan_change(&c, 0, &ch, &p), -EINVAL);
	ch.kind = IK_VTD_CHANGE_CONTEXT;
	ch.pasid = 1;
	ck_assert_int_eq(ik_vtd_plan_change(&c, 0, &ch, &p), -EINVAL);
	ch.pasid = 0;
	ck_assert_int_eq(ik_vtd_plan_change(&c, 4, &ch, &p), -EINVAL);
	ck_assert_int_eq(ik_vtd_plan_change(NULL, 0, &ch, &p), -EINVAL);
	ck_assert_int_eq(ik_vtd_plan_change(&c, 0, NULL, &p), -EINVAL);
	ck_assert_int_eq(ik_vtd_plan_change(&c, 0, &ch, NULL), -EINVAL);
	ik_pgtable_destroy(sl);
	ik_pgtable_destroy(fl);
}
END_TEST

/* DMA memory beyond the unit's HAW (device addresses at 2^60 and up):
 * enabling (the root table, the invalidation queue) fails with -ERANGE and
 * gives back every buffer it took. */
START_TEST(dma_beyond_haw_is_erange)
{
	struct ik_test_dma f;
	struct rig r;

	rig_init(&r, false);
	ik_test_dma_init(&f);
	f.dma_or = 1ull << 60;
	r.cfg.dma = &f.d;
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &r.u), 0);
	ck_assert_int_eq(ik_vtd_enable(r.u), -ERANGE);
	ck_assert_int_gt(f.allocs, 0);
	ik_vtd_destroy(r.u);
	ck_assert_int_eq(f.allocs, f.frees);
	ck_assert_int_eq(r.fa.live, 0);
}
END_TEST

/* ================================================================ end to end */

/* Bind stream 0 of the soft IOMMU to what the unit would walk for
 * bus:devfn, read from the tables the driver wrote. */
START_TEST(null_pointer_arguments_are_einval)
{
	struct ik_vtd_change chg;
	struct ik_vtd_attach a = { NULL, 1, IK_VTD_ATTACH_PASSTHROUGH };
	struct ik_vtd_fault f;
	struct ik_vtd_stats st;
	struct ik_vtd_plan p;
	struct ik_vtd *u = (struct ik_vtd *)1;
	struct rig r;

	rig_init(&r, false);
	ck_assert_int_eq(ik_vtd_create(NULL, &u), -EINVAL);
	ck_assert_int_eq(ik_vtd_create(&r.cfg, NULL), -EINVAL);
	r.cfg.mmio = NULL;
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &u), -EINVAL);
	r.cfg.mmio = &r.mmio;
	r.cfg.dma = NULL;
	ck_assert_int_eq(ik_vtd_create(&r.cfg, &u), -EINVAL);
	r.cfg.dma = &r.dma;
	ck_assert_ptr_eq(u, (struct ik_vtd *)1);
	rig_up(&r);
	ck_assert_int_eq(ik_vtd_enable(NULL), -EINVAL);
	ck_assert_int_eq(ik_vtd_disable(NULL), -EINVAL);
	ck_assert_int_eq(ik_vtd_context_set(r.u, 0, 0, &a, NULL), -EINVAL);
	ck_assert_int_eq(ik_vtd_context_clear(NULL, 0, 0, &chg), -EINVAL);
	ck_assert_int_eq(ik_vtd_context_clear(r.u, 0, 0, NULL), -EINVAL);
	ck_assert_int_eq(ik_vtd_fault_pop(NULL, &f), -EINVAL);
	ck_assert_int_eq(ik_vtd_fault_pop(r.u, NULL), -EINVAL);
	ck_assert_int_eq(ik_vtd_get_stats(NULL, &st), -EINVAL);
	ck_assert_int_eq(ik_vtd_get_stats(r.u, NULL), -EINVAL);
	ck_assert_int_eq(ik_vtd_plan_issue(NULL, &p), -EINVAL);
	ck_assert_int_eq(ik_vtd_plan_issue(r.u, NULL), -EINVAL);
	ik_vtd_destroy(NULL);
	rig_fini(&r);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("drv_vtd");
	TCase *tc = tcase_create("vtd");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, cap_and_ecap_fields_decode_at_spec_positions);
	tcase_add_test(tc, queue_register_values_and_indexes);
	tcase_add_test(tc, iqercd_and_fault_records_decode_at_spec_positions);
	tcase_add_test(tc, legacy_bringup_programs_root_queue_invalidations_then_translation);
	tcase_add_test(tc, scalable_bringup_uses_ttm_01_and_256_bit_descriptors);
	tcase_add_test(tc, rwbf_unit_gets_write_buffer_flushes);
	tcase_add_test(tc, status_bit_that_never_follows_is_etimedout_and_unit_left_off);
	tcase_add_test(tc, status_bit_set_while_the_poller_was_away_is_not_a_timeout);
	tcase_add_test(tc, unit_enabled_by_someone_else_is_ebusy_until_disabled);
	tcase_add_test(tc, fault_records_over_the_registers_are_refused);
	tcase_add_test(tc, destroy_of_a_stuck_unit_leaks_only_dma_memory);
	tcase_add_test(tc, unit_that_does_not_let_go_keeps_its_memory);
	tcase_add_test(tc, enable_allocation_failure_midway_leaves_nothing);
	tcase_add_test(tc, create_validates_its_config);
	tcase_add_test(tc, bad_descriptor_is_eio_and_queue_resumes_after_iqt_rewrite);
	tcase_add_test(tc, device_tlb_timeout_aborts_the_wait_then_queue_goes_on);
	tcase_add_test(tc, issue_refuses_what_the_unit_would_reject);
	tcase_add_test(tc, legacy_context_entry_fields_at_spec_positions);
	tcase_add_test(tc, bad_attach_input_is_refused_with_nothing_written);
	tcase_add_test(tc, attach_allocation_failure_changes_nothing);
	tcase_add_test(tc, scalable_context_and_pasid_entries_at_spec_positions);
	tcase_add_test(tc, fault_records_pop_in_order_decoded_and_cleared);
	tcase_add_test(tc, plan_unmap_follows_the_choice_table_row_by_row);
	tcase_add_test(tc, plan_refuses_a_gather_from_another_table_set);
	tcase_add_test(tc, plan_map_and_plan_change_follow_their_tables);
	tcase_add_test(tc, dma_beyond_haw_is_erange);
	tcase_add_test(tc, null_pointer_arguments_are_einval);
	suite_add_tcase(s, tc);
	return s;
}
