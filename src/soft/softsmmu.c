/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The register-level SMMUv3 model (<iommukit/softsmmu.h>): the register
 * file, the main command queue and the ECMDQs consumed by ik_cmdq_sw, the
 * configuration cache (STE, CD 0) filled from memory on demand, the event
 * queue and GERROR.
 *
 * Locks.  One per command queue (struct sq.lock: its registers and its
 * consumption), one for the rest of the register file and the event queue
 * (m->lock), one for the configuration cache (m->cfg_lock).  Order: a queue
 * lock, then cfg_lock, then m->lock; m->lock is never held while another is
 * taken.  Registers that waiters poll (CONS, GERROR, CR0ACK, ENACK) are read
 * without a lock, with acquire loads of words stored with release.
 *
 * Error publication (edge C1 of <iommukit/cmdq.h>): the consumer stops
 * with its index stored first (ik_cmdq_sw), then the ERR field (ECMDQ) or
 * the CONS.ERR code and then GERROR (main queue) are stored with release;
 * a reader that sees the error reads the index after it.
 */
#include <iommukit/softsmmu.h>
#include <iommukit/drv/smmuv3.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/atomic.h>
#include <iommukit/lock.h>
#include "soft_int.h"

#define SM_ECMDQ_EN IK_SMMU_ECMDQ_PROD_EN
#define SM_ECMDQ_ERRACK IK_SMMU_ECMDQ_PROD_ERRACK
#define SM_ECMDQ_ENACK IK_SMMU_ECMDQ_CONS_ENACK
#define SM_ECMDQ_ERR IK_SMMU_ECMDQ_CONS_ERR
#define SM_ECMDQ_REASON_SHIFT IK_SMMU_ECMDQ_CONS_REASON_SHIFT
#define SM_Q_IDX_MASK IK_SMMU_ECMDQ_IDX_MASK
#define SM_GERROR_CMDQP_ERR IK_SMMU_GERROR_CMDQP_ERR
#define SM_ADDR_51_5 0x000fffffffffffe0ull
#define SM_ADDR_51_6 0x000fffffffffffc0ull
#define SM_ADDR_51_12 0x000ffffffffff000ull
#define SM_ADDR_51_4 0x000ffffffffffff0ull

/* Stream states of the configuration cache. */
enum { ST_NONE, ST_ABORT, ST_BYPASS, ST_XLATE, ST_EVENT };

struct scfg {
	ik_u8 state;	/* ST_* (ST_NONE: not cached) */
	ik_u8 evt;	/* ST_EVENT: the event type every access raises */
	ik_u64 fetch;	/* the address of a failed fetch (F_*_FETCH) */
};

struct sq {
	ik_lock_t lock;
	struct ik_softsmmu *m;
	int id;		/* IK_SOFTSMMU_MAIN_CMDQ or the ECMDQ index */
	ik_u64 base;	/* BASE as written */
	ik_u32 prod;	/* PROD as written (ECMDQ: EN | ERRACK | WR) */
	ik_u32 cons;	/* CONS [19:0] while not live */
	ik_u32 hi;	/* ECMDQ: ENACK | ERR_REASON | ERR; main: the ERR code << 24 */
	bool live;	/* enabled and acknowledged */
	bool ring_bad;	/* enabled, but the ring is not memory: fetches abort */
	ik_u32 sw_live;	/* live && !ring_bad: CONS comes from sw (lock-free readers) */
	bool stopped;	/* an error is raised and not acknowledged */
	unsigned log2;
	ik_u32 wrmask;
	struct ik_cmdq_sw sw;
	/* injection */
	unsigned atc_timeouts, beyond_reads;
	ik_u32 beyond;
	bool no_enack, en_pending;
	ik_u64 executed;
};

struct ik_softsmmu {
	struct ik_softsmmu_config cfg;
	ik_lock_t lock;
	ik_lock_t cfg_lock;
	unsigned cmdqs, eventqs, sidsize, oas;
	bool asid16;
	/* page 0/1 registers (m->lock; read with acquire) */
	ik_u32 cr0, cr0ack, cr1, cr2, gbpa, irq_ctrl, irq_ctrlack, gerror, gerrorn;
	ik_u64 strtab_base, evtq_base;
	ik_u32 strtab_cfg, evtq_prod, evtq_cons;
	ik_u32 paused;
	struct sq main;
	unsigned nq, numq_log2, nump;
	struct sq *ecmdq;
	struct scfg *streams;
	struct ik_pt_mem ptmem;
	ik_u64 commands, cmd_errors, ste_fetches, cd_fetches, events, events_lost, ecmdq_enables;
};

/* ---------------------------------------------------------------- defaults */

IK_API void ik_softsmmu_config_init(struct ik_softsmmu_config *cfg)
{
	IK_ASSERT(cfg);
	IK_ENV_MEMSET(cfg, 0, sizeof(*cfg));
	/* IDR0: S2P, S1P, TTF AArch64, COHACC, ASID16, VMID16, TTENDIAN LE,
	 * STALL_MODEL terminate only, TERM_MODEL, ST_LEVEL 2-level. */
	cfg->idr[0] = 1u << 0 | 1u << 1 | 2u << 2 | 1u << 4 | 1u << 12 | 1u << 18 | 2u << 21 |
		      1u << 24 | 1u << 26 | 1u << 27;
	/* IDR1: SIDSIZE 16, EVENTQS 19, CMDQS 19. */
	cfg->idr[1] = 16u | 19u << 16 | 19u << 21;
	cfg->idr[3] = 1u << 10; /* RIL */
	cfg->idr[5] = 5u | 1u << 4 | 1u << 5 | 1u << 6; /* OAS 48, 4K/16K/64K */
	cfg->iidr = 0x43b;
	cfg->aidr = 0x03; /* SMMUv3.3 */
	cfg->max_streams = 64;
}

/* ---------------------------------------------------------------- memory */

/* The host pointer for [pa, pa + len), or NULL: the sum is checked, and
 * addresses beyond OAS are not memory. */
static void *host(struct ik_softsmmu *m, ik_u64 pa, ik_u64 len)
{
	return soft_host(m->cfg.phys_to_host, m->cfg.phys_ctx, m->oas, pa, len);
}

static bool read64(struct ik_softsmmu *m, ik_u64 pa, ik_u64 *v)
{
	const volatile ik_u64 *p;

	if (pa & 7)
		return false;
	p = (const volatile ik_u64 *)host(m, pa, 8);
	if (!p)
		return false;
	*v = *p;
	return true;
}

static int pt_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	return read64((struct ik_softsmmu *)ctx, addr, val) ? 0 : -EFAULT;
}

/* ---------------------------------------------------------------- GERROR */

/* Make `bit` active (GERROR differs from GERRORN) unless it is.  Release:
 * what the error reports is stored before. */
static void gerror_raise(struct ik_softsmmu *m, ik_u32 bit)
{
	ik_lock(&m->lock);
	if (!((m->gerror ^ m->gerrorn) & bit))
		ik_store_release(&m->gerror, m->gerror ^ bit);
	ik_unlock(&m->lock);
}

static bool gerror_active(struct ik_softsmmu *m, ik_u32 bit)
{
	return ((ik_load_acquire(&m->gerror) ^ ik_load_acquire(&m->gerrorn)) & bit) != 0;
}

/* ---------------------------------------------------------------- configuration */

static void cfg_invalidate(struct ik_softsmmu *m, ik_u64 first, ik_u64 count)
{
	ik_lock(&m->cfg_lock);
	for (ik_u64 i = first; i < m->cfg.max_streams && i - first < count; i++)
		m->streams[i].state = ST_NONE;
	ik_unlock(&m->cfg_lock);
}

static void set_event(struct scfg *c, ik_u8 evt, ik_u64 fetch)
{
	c->state = ST_EVENT;
	c->evt = evt;
	c->fetch = fetch;
}

/* The STE of sid: 0 with ste[] read, or an event type. */
static ik_u8 fetch_ste(struct ik_softsmmu *m, ik_u32 sid, ik_u64 ste[8], ik_u64 *where)
{
	ik_u64 base = ik_load_relaxed(&m->strtab_base) & SM_ADDR_51_6, addr;
	ik_u32 cfg = ik_load_relaxed(&m->strtab_cfg);
	unsigned log2size = cfg & 0x3f, split = (cfg >> 6) & 0x1f, fmt = (cfg >> 16) & 3;
	const volatile ik_u64 *p;

	if (log2size > m->sidsize)
		log2size = m->sidsize;
	if (log2size < 32 && sid >> log2size)
		return IK_SMMU_EVT_C_BAD_STREAMID;
	if (fmt == 1) {
		ik_u64 l1, span, idx;

		if (split != 6 && split != 8 && split != 10)
			return IK_SMMU_EVT_C_BAD_STREAMID;
		if (!soft_addr_add(base, (ik_u64)(sid >> split) * 8, &addr) || !read64(m, addr, &l1)) {
			*where = addr;
			return IK_SMMU_EVT_F_STE_FETCH;
		}
		span = l1 & 0x1f;
		idx = sid & ((1u << split) - 1);
		if (!span || span > split + 1 || idx >= (1ull << (span - 1)))
			return IK_SMMU_EVT_C_BAD_STREAMID;
		base = l1 & SM_ADDR_51_6;
		if (!soft_addr_add(base, idx * 64, &addr))
			addr = IK_U64_MAX;
	} else if (fmt == 0) {
		if (!soft_addr_add(base, (ik_u64)sid * 64, &addr))
			addr = IK_U64_MAX;
	} else {
		return IK_SMMU_EVT_C_BAD_STREAMID;
	}
	*where = addr;
	p = (const volatile ik_u64 *)(addr == IK_U64_MAX ? NULL : host(m, addr, 64));
	if (!p)
		return IK_SMMU_EVT_F_STE_FETCH;
	for (unsigned k = 0; k < 8; k++)
		ste[k] = p[k];
	ik_atomic_fetch_add(&m->ste_fetches, 1, IK_MO_RELAXED);
	return 0;
}

/* CD 0 of a stage-1 STE: 0 with cd[] read, or an event type. */
static ik_u8 fetch_cd0(struct ik_softsmmu *m, const ik_u64 ste[8], ik_u64 cd[8], ik_u64 *where)
{
	ik_u64 ptr = ste[0] & IK_SMMU_STE_S1CTXPTR_MASK, addr = ptr;
	unsigned fmt = (ste[0] >> IK_SMMU_STE_S1FMT_SHIFT) & 3;
	unsigned cdmax = (unsigned)(ste[0] >> IK_SMMU_STE_S1CDMAX_SHIFT) & 0x1f;
	const volatile ik_u64 *p;

	if (cdmax && fmt == 3)
		return IK_SMMU_EVT_C_BAD_STE;
	if (cdmax && fmt != IK_SMMU_S1FMT_LINEAR) {
		ik_u64 l1;

		if (!read64(m, ptr, &l1)) {
			*where = ptr;
			return IK_SMMU_EVT_F_CD_FETCH;
		}
		if (!(l1 & 1))
			return IK_SMMU_EVT_C_BAD_SUBSTREAMID;
		addr = l1 & SM_ADDR_51_12;
	}
	*where = addr;
	p = (const volatile ik_u64 *)host(m, addr, 64);
	if (!p)
		return IK_SMMU_EVT_F_CD_FETCH;
	for (unsigned k = 0; k < 8; k++)
		cd[k] = p[k];
	ik_atomic_fetch_add(&m->cd_fetches, 1, IK_MO_RELAXED);
	return 0;
}

/* TCR_EL1 / VTCR_EL2 field positions (Arm ARM), for the walker decoder. */
#define SM_TCR_IRGN0_SHIFT 8
#define SM_TCR_ORGN0_SHIFT 10
#define SM_TCR_SH0_SHIFT 12
#define SM_TCR_TG0_SHIFT 14
#define SM_TCR_EPD1 (1ull << 23)
#define SM_TCR_IPS_SHIFT 32
#define SM_TCR_DS (1ull << 59)
#define SM_VTCR_SL0_SHIFT 6
#define SM_VTCR_PS_SHIFT 16
#define SM_VTCR_DS (1ull << 32)

static ik_u64 f64(ik_u64 v, unsigned lo, unsigned bits)
{
	return (v >> lo) & ((1ull << bits) - 1);
}

/* Fill the cache entry of sid from memory (cfg_lock held). */
static void fetch_stream(struct ik_softsmmu *m, ik_u32 sid, struct scfg *c)
{
	ik_u64 ste[8], cd[8], where = 0, tcr;
	struct ik_pt_walker w;
	unsigned config;
	ik_u32 tag;
	ik_u8 e;

	e = fetch_ste(m, sid, ste, &where);
	if (e) {
		set_event(c, e, where);
		return;
	}
	if (!(ste[0] & IK_SMMU_STE_V)) {
		set_event(c, IK_SMMU_EVT_C_BAD_STE, 0);
		return;
	}
	config = (unsigned)(ste[0] >> IK_SMMU_STE_CFG_SHIFT) & 7;
	switch (config) {
	case IK_SMMU_STE_CFG_ABORT:
		c->state = ST_ABORT;
		return;
	case IK_SMMU_STE_CFG_BYPASS:
		c->state = ST_BYPASS;
		return;
	case IK_SMMU_STE_CFG_S1:
		e = fetch_cd0(m, ste, cd, &where);
		if (e) {
			set_event(c, e, where);
			return;
		}
		if (!(cd[0] & IK_SMMU_CD_V) || !(cd[0] & IK_SMMU_CD_AA64) ||
		    (cd[0] & IK_SMMU_CD_EPD0)) {
			set_event(c, IK_SMMU_EVT_C_BAD_CD, 0);
			return;
		}
		tcr = f64(cd[0], IK_SMMU_CD_T0SZ_SHIFT, 6) |
		      f64(cd[0], IK_SMMU_CD_IR0_SHIFT, 2) << SM_TCR_IRGN0_SHIFT |
		      f64(cd[0], IK_SMMU_CD_OR0_SHIFT, 2) << SM_TCR_ORGN0_SHIFT |
		      f64(cd[0], IK_SMMU_CD_SH0_SHIFT, 2) << SM_TCR_SH0_SHIFT |
		      f64(cd[0], IK_SMMU_CD_TG0_SHIFT, 2) << SM_TCR_TG0_SHIFT |
		      f64(cd[0], IK_SMMU_CD_IPS_SHIFT, 3) << SM_TCR_IPS_SHIFT | SM_TCR_EPD1 |
		      ((cd[2] & IK_SMMU_CD_DS) ? SM_TCR_DS : 0);
		tag = (ik_u32)(cd[0] >> IK_SMMU_CD_ASID_SHIFT) & (m->asid16 ? 0xffffu : 0xffu);
		if (ik_lpae_walker_from_regs(&w, 1, tcr, ik_lpae_ttbr_from_addr(cd[1] & SM_ADDR_51_4),
					     0)) {
			set_event(c, IK_SMMU_EVT_C_BAD_CD, 0);
			return;
		}
		break;
	case IK_SMMU_STE_CFG_S2:
		/* STE word 2: S2VMID [15:0], S2T0SZ [37:32], S2SL0 [39:38],
		 * S2IR0/OR0/SH0 [45:40], S2TG [47:46], S2PS [50:48], S2AA64
		 * 51; word 3: S2DS bit 3, S2TTB [51:4]. */
		if (!(ste[2] & (1ull << 51))) {
			set_event(c, IK_SMMU_EVT_C_BAD_STE, 0);
			return;
		}
		tcr = f64(ste[2], 32, 6) | f64(ste[2], 38, 2) << SM_VTCR_SL0_SHIFT |
		      f64(ste[2], 40, 2) << SM_TCR_IRGN0_SHIFT | f64(ste[2], 42, 2) << SM_TCR_ORGN0_SHIFT |
		      f64(ste[2], 44, 2) << SM_TCR_SH0_SHIFT | f64(ste[2], 46, 2) << SM_TCR_TG0_SHIFT |
		      f64(ste[2], 48, 3) << SM_VTCR_PS_SHIFT | ((ste[3] & 8) ? SM_VTCR_DS : 0);
		tag = (ik_u32)(ste[2] & 0xffff);
		if (ik_lpae_walker_from_regs(&w, 2, tcr, ik_lpae_ttbr_from_addr(ste[3] & SM_ADDR_51_4),
					     0)) {
			set_event(c, IK_SMMU_EVT_C_BAD_STE, 0);
			return;
		}
		break;
	default: /* reserved encodings, and nesting (not modelled) */
		set_event(c, IK_SMMU_EVT_C_BAD_STE, 0);
		return;
	}
	if (ik_softiommu_attach_pt(m->cfg.soft, sid, tag, &w, &m->ptmem)) {
		set_event(c, IK_SMMU_EVT_C_BAD_STREAMID, 0);
		return;
	}
	c->state = ST_XLATE;
}

/* ---------------------------------------------------------------- events */

/* Write one record at EVTQ_PROD (m->lock held); false if it was lost. */
static bool event_write_locked(struct ik_softsmmu *m, const ik_u64 rec[4])
{
	ik_u64 base = m->evtq_base & SM_ADDR_51_5, addr;
	unsigned log2 = (unsigned)(m->evtq_base & 0x1f);
	ik_u32 mask, prod = m->evtq_prod, cons = m->evtq_cons;
	volatile ik_u64 *p;

	if (!(m->cr0ack & IK_SMMU_CR0_EVTQEN) || ((m->gerror ^ m->gerrorn) & IK_SMMU_GERROR_EVTQ_ABT_ERR))
		return false;
	if (log2 > m->eventqs)
		log2 = m->eventqs;
	mask = (2u << log2) - 1;
	if (((prod ^ cons) & mask) == (1u << log2)) {
		/* Full: flag an overflow unless one is already flagged. */
		if (!((prod ^ cons) & IK_SMMU_EVTQ_OVFLG))
			ik_store_release(&m->evtq_prod, prod ^ IK_SMMU_EVTQ_OVFLG);
		return false;
	}
	p = soft_addr_add(base, (ik_u64)(prod & ((1u << log2) - 1)) * 32, &addr) ?
		    (volatile ik_u64 *)host(m, addr, 32) : NULL;
	if (!p) {
		if (!((m->gerror ^ m->gerrorn) & IK_SMMU_GERROR_EVTQ_ABT_ERR))
			ik_store_release(&m->gerror, m->gerror ^ IK_SMMU_GERROR_EVTQ_ABT_ERR);
		return false;
	}
	for (unsigned k = 0; k < 4; k++)
		p[k] = rec[k];
	/* The record before the index that publishes it. */
	ik_store_release(&m->evtq_prod, (prod & IK_SMMU_EVTQ_OVFLG) | ((prod + 1) & mask));
	return true;
}

static void event(struct ik_softsmmu *m, ik_u8 type, ik_u32 sid, ik_u64 addr, bool write,
		  ik_u64 fetch, unsigned cls)
{
	ik_u64 rec[4] = { 0, 0, 0, 0 };
	bool ok;

	rec[0] = type | (ik_u64)sid << 32;
	switch (type) {
	case IK_SMMU_EVT_F_TRANSLATION:
	case IK_SMMU_EVT_F_ADDR_SIZE:
	case IK_SMMU_EVT_F_ACCESS:
	case IK_SMMU_EVT_F_PERMISSION:
	case IK_SMMU_EVT_F_WALK_EABT:
		rec[1] = (write ? 0 : 1ull << 35) | (ik_u64)cls << 40;
		rec[2] = addr;
		rec[3] = fetch & 0x000ffffffffffff8ull;
		break;
	case IK_SMMU_EVT_F_STE_FETCH:
	case IK_SMMU_EVT_F_CD_FETCH:
		rec[3] = fetch & 0x000ffffffffffff8ull;
		break;
	default:
		break;
	}
	ik_lock(&m->lock);
	ok = event_write_locked(m, rec);
	ik_unlock(&m->lock);
	ik_atomic_fetch_add(ok ? &m->events : &m->events_lost, 1, IK_MO_RELAXED);
}

/* ---------------------------------------------------------------- command queues */

static ik_u32 cmd_handler(void *ctx, ik_u32 index, const void *ent, int kind)
{
	struct sq *q = (struct sq *)ctx;
	struct ik_softsmmu *m = q->m;
	struct ik_smmu_cmd c;
	ik_u64 w[2];

	(void)index;
	(void)kind;
	IK_ENV_MEMCPY(w, ent, 16);
	if (ik_smmu_cmd_decode(w, &c))
		return IK_CMDQ_CERROR_ILL;
	switch (c.op) {
	case IK_SMMU_CMD_CFGI_STE:
	case IK_SMMU_CMD_CFGI_CD:
	case IK_SMMU_CMD_CFGI_CD_ALL:
		cfg_invalidate(m, c.sid, 1);
		break;
	case IK_SMMU_CMD_CFGI_STE_RANGE: {
		ik_u64 n = 2ull << c.range;

		cfg_invalidate(m, c.sid & ~(n - 1), n);
		break;
	}
	case IK_SMMU_CMD_ATC_INV:
		if (q->atc_timeouts) {
			q->atc_timeouts--;
			return IK_CMDQ_CERROR_ATC_INV_SYNC;
		}
		break;
	default:
		break;
	}
	if (ik_softiommu_exec_smmu(m->cfg.soft, &c))
		return IK_CMDQ_CERROR_ILL;
	q->executed++;
	ik_atomic_fetch_add(&m->commands, 1, IK_MO_RELAXED);
	return 0;
}

static void cmd_write32(void *ctx, ik_u64 addr, ik_u32 val)
{
	struct sq *q = (struct sq *)ctx;
	ik_u32 *p = (addr & 3) ? NULL : (ik_u32 *)host(q->m, addr, 4);

	if (p)
		ik_store_release(p, val);
}

static bool is_main(const struct sq *q)
{
	return q->id < 0;
}

static unsigned sq_log2(const struct sq *q)
{
	unsigned l = (unsigned)(q->base & 0x1f);

	return l > q->m->cmdqs ? q->m->cmdqs : l;
}

/* Raise an error on q (lock held): index first (the consumer stored it, or
 * cons for a ring that is not memory), then the code, then GERROR. */
static void sq_raise(struct sq *q, ik_u32 code)
{
	struct ik_softsmmu *m = q->m;

	q->stopped = true;
	ik_atomic_fetch_add(&m->cmd_errors, 1, IK_MO_RELAXED);
	if (is_main(q)) {
		ik_store_release(&q->hi, code << IK_SMMU_CMDQ_CONS_ERR_SHIFT);
		gerror_raise(m, IK_SMMU_GERROR_CMDQ_ERR);
	} else {
		ik_u32 h = q->hi & ~(7u << SM_ECMDQ_REASON_SHIFT);

		ik_store_release(&q->hi, (h ^ SM_ECMDQ_ERR) | (code & 7) << SM_ECMDQ_REASON_SHIFT);
		gerror_raise(m, SM_GERROR_CMDQP_ERR);
	}
}

/* Whether q may consume now (lock held). */
static bool sq_can_run(struct sq *q, bool force)
{
	if (!q->live || q->stopped || (!force && ik_load_relaxed(&q->m->paused)))
		return false;
	if (!is_main(q) && ((q->prod & SM_ECMDQ_ERRACK) != 0) != ((q->hi & SM_ECMDQ_ERR) != 0))
		return false; /* an error not acknowledged (also one raised spuriously) */
	return true;
}

/* Consume what q has published (lock held). */
static int sq_consume_x(struct sq *q, bool force)
{
	ik_u32 err;
	int n;

	if (!sq_can_run(q, force))
		return 0;
	if (q->ring_bad) {
		if (((q->prod ^ q->cons) & q->wrmask) != 0)
			sq_raise(q, IK_CMDQ_CERROR_ABT);
		return 0;
	}
	n = ik_cmdq_sw_consume(&q->sw, ~0u);
	if (n < 0)
		n = 0;
	err = ik_cmdq_sw_error(&q->sw);
	if (err)
		sq_raise(q, err);
	return n;
}

static int sq_consume(struct sq *q)
{
	return sq_consume_x(q, false);
}

/* Start consuming at BASE with PROD/CONS as they are (lock held). */
static void sq_enable(struct sq *q)
{
	struct ik_cmdq_sw_config sc;
	ik_u64 ring = q->base & SM_ADDR_51_5;
	void *p;

	q->log2 = sq_log2(q);
	q->wrmask = (2u << q->log2) - 1;
	q->stopped = false;
	q->live = true;
	q->ring_bad = true;
	ik_store_release(&q->sw_live, 0);
	if (q->log2 < IK_CMDQ_LOG2_MIN)
		return; /* queues of 1 or 2 entries are not modelled: fetches abort */
	p = host(q->m, ring, (ik_u64)16 << q->log2);
	if (!p)
		return;
	IK_ENV_MEMSET(&sc, 0, sizeof(sc));
	sc.fmt = &ik_cmdq_fmt_smmuv3;
	sc.log2_entries = q->log2;
	sc.ring = p;
	sc.ring_dma = ring;
	sc.handler = cmd_handler;
	sc.ctx = q;
	sc.write32 = cmd_write32;
	if (ik_cmdq_sw_init(&q->sw, &sc))
		return;
	q->sw.prod = q->prod & q->wrmask;
	q->sw.cons = q->sw.cons_full = q->cons & q->wrmask;
	q->ring_bad = false;
	ik_store_release(&q->sw_live, 1);
}

static void sq_disable(struct sq *q)
{
	if (q->live && !q->ring_bad)
		ik_store_release(&q->cons, ik_load_relaxed(&q->sw.cons));
	ik_store_release(&q->sw_live, 0);
	q->live = false;
}

/* The CONS register, lock-free. */
static ik_u32 sq_cons_read(struct sq *q)
{
	ik_u32 hi = ik_load_acquire(&q->hi);
	ik_u32 lo;

	if (ik_load_acquire(&q->beyond_reads)) {
		ik_lock(&q->lock);
		if (q->beyond_reads) {
			q->beyond_reads--;
			lo = ((q->prod & q->wrmask) + q->beyond) & q->wrmask;
			ik_unlock(&q->lock);
			return hi | lo;
		}
		ik_unlock(&q->lock);
	}
	if (ik_load_acquire(&q->sw_live))
		lo = ik_load_acquire(&q->sw.cons);
	else
		lo = ik_load_acquire(&q->cons);
	return hi | (lo & SM_Q_IDX_MASK);
}

/* Acknowledge the error of q (lock held) and resume. */
static void sq_ack(struct sq *q)
{
	if (!q->stopped)
		return;
	q->stopped = false;
	if (!q->ring_bad)
		ik_cmdq_sw_regs.ack_error(&q->sw);
	(void)sq_consume(q);
}

/* ECMDQ PROD write (lock held). */
static void ecmdq_prod_write(struct sq *q, ik_u32 v)
{
	bool en = (q->prod & SM_ECMDQ_EN) != 0, enack = (q->hi & SM_ECMDQ_ENACK) != 0;

	if (en != enack)
		return; /* an enable or disable is in progress: PROD is read-only */
	q->prod = v & (SM_ECMDQ_EN | SM_ECMDQ_ERRACK | SM_Q_IDX_MASK);
	if ((v & SM_ECMDQ_EN) && !enack) {
		if (q->no_enack) {
			q->en_pending = true;
			return;
		}
		sq_enable(q);
		ik_atomic_fetch_add(&q->m->ecmdq_enables, 1, IK_MO_RELAXED);
		ik_store_release(&q->hi, q->hi | SM_ECMDQ_ENACK);
		(void)sq_consume(q);
		return;
	}
	if (!(v & SM_ECMDQ_EN) && enack) {
		sq_disable(q);
		q->en_pending = false;
		ik_store_release(&q->hi, q->hi & ~SM_ECMDQ_ENACK);
		return;
	}
	if (!q->live)
		return;
	if (!q->ring_bad)
		q->sw.prod = q->prod & q->wrmask;
	if (((q->prod & SM_ECMDQ_ERRACK) != 0) == ((q->hi & SM_ECMDQ_ERR) != 0))
		sq_ack(q);
	(void)sq_consume(q);
}

static struct sq *ecmdq_at(struct ik_softsmmu *m, ik_u32 off, ik_u32 *reg)
{
	ik_u32 rel, page, qi;

	if (!m->nq || off < IK_SOFTSMMU_CP_OFFSET)
		return NULL;
	rel = off - IK_SOFTSMMU_CP_OFFSET;
	page = rel >> 16;
	qi = (rel & 0xffff) >> 8;
	if (page >= m->nump || qi >= (1u << m->numq_log2))
		return NULL;
	*reg = rel & 0xff;
	return &m->ecmdq[(page << m->numq_log2) + qi];
}

/* ---------------------------------------------------------------- registers */

IK_API ik_u32 ik_softsmmu_read32(struct ik_softsmmu *m, ik_u32 off)
{
	struct sq *q;
	ik_u32 reg, v;

	IK_ASSERT(m);
	if (off & 3)
		return 0;
	if (off < 0x18)
		return m->cfg.idr[off / 4];
	q = ecmdq_at(m, off, &reg);
	if (q) {
		switch (reg) {
		case 0x0:
			ik_lock(&q->lock);
			v = soft_lo32(q->base);
			ik_unlock(&q->lock);
			return v;
		case 0x4:
			ik_lock(&q->lock);
			v = soft_hi32(q->base);
			ik_unlock(&q->lock);
			return v;
		case 0x8:
			ik_lock(&q->lock);
			v = q->prod;
			ik_unlock(&q->lock);
			return v;
		case 0xc:
			return sq_cons_read(q);
		default:
			return 0;
		}
	}
	if (m->nq && off >= 0x4000 && off < 0x4000 + 32 * m->nump) {
		ik_u32 n = (off - 0x4000) / 32;

		switch ((off - 0x4000) % 32) {
		case 0x0: /* ADDR [55:16] (an offset), CMDQGS 64 KiB, PRESET */
			return (IK_SOFTSMMU_CP_OFFSET + (n << 16)) | 1u << 1 | 1u;
		case 0x8:
		case 0xc:
			return 1; /* CFG.EN and STATUS.ENACK: RES1 */
		default:
			return 0;
		}
	}
	switch (off) {
	case IK_SMMU_IIDR:
		return m->cfg.iidr;
	case IK_SMMU_AIDR:
		return m->cfg.aidr;
	case IK_SMMU_CR0:
		return ik_load_acquire(&m->cr0);
	case IK_SMMU_CR0ACK:
		return ik_load_acquire(&m->cr0ack);
	case IK_SMMU_CR1:
		return ik_load_acquire(&m->cr1);
	case IK_SMMU_CR2:
		return ik_load_acquire(&m->cr2);
	case IK_SMMU_GBPA:
		return ik_load_acquire(&m->gbpa);
	case IK_SMMU_IRQ_CTRL:
		return ik_load_acquire(&m->irq_ctrl);
	case IK_SMMU_IRQ_CTRLACK:
		return ik_load_acquire(&m->irq_ctrlack);
	case IK_SMMU_GERROR:
		return ik_load_acquire(&m->gerror);
	case IK_SMMU_GERRORN:
		return ik_load_acquire(&m->gerrorn);
	case IK_SMMU_IDR6:
		return m->nq ? (ik_u32)(m->cfg.ecmdq_log2nump << 24 | m->cfg.ecmdq_log2numq << 16) : 0;
	case IK_SMMU_EVTQ_PROD:
		return ik_load_acquire(&m->evtq_prod);
	case IK_SMMU_EVTQ_CONS:
		return ik_load_acquire(&m->evtq_cons);
	case IK_SMMU_CMDQ_CONS:
		return sq_cons_read(&m->main);
	default:
		break;
	}
	ik_lock(&m->lock);
	switch (off) {
	case IK_SMMU_STRTAB_BASE:
		v = soft_lo32(m->strtab_base);
		break;
	case IK_SMMU_STRTAB_BASE + 4:
		v = soft_hi32(m->strtab_base);
		break;
	case IK_SMMU_STRTAB_BASE_CFG:
		v = m->strtab_cfg;
		break;
	case IK_SMMU_EVTQ_BASE:
		v = soft_lo32(m->evtq_base);
		break;
	case IK_SMMU_EVTQ_BASE + 4:
		v = soft_hi32(m->evtq_base);
		break;
	default:
		v = 0;
		break;
	}
	ik_unlock(&m->lock);
	if (off == IK_SMMU_CMDQ_BASE || off == IK_SMMU_CMDQ_BASE + 4 || off == IK_SMMU_CMDQ_PROD) {
		ik_lock(&m->main.lock);
		v = off == IK_SMMU_CMDQ_PROD ? m->main.prod :
						 off == IK_SMMU_CMDQ_BASE ? soft_lo32(m->main.base) :
									     soft_hi32(m->main.base);
		ik_unlock(&m->main.lock);
	}
	return v;
}

/* CR0 write: the main queue's enable first (its lock), then the rest. */
static void cr0_write(struct ik_softsmmu *m, ik_u32 v)
{
	struct sq *q = &m->main;
	ik_u32 ack, old;
	bool cmdq_on;

	ik_lock(&q->lock);
	ik_lock(&m->lock);
	old = m->cr0ack;
	ack = v & 0x1f;
	if (q->no_enack)
		ack = (ack & ~IK_SMMU_CR0_CMDQEN) | (old & IK_SMMU_CR0_CMDQEN);
	ik_store_release(&m->cr0, v);
	cmdq_on = ack & IK_SMMU_CR0_CMDQEN;
	if ((ack ^ old) & IK_SMMU_CR0_SMMUEN) {
		/* The configuration is fetched afresh once SMMUEN changes. */
		ik_unlock(&m->lock);
		cfg_invalidate(m, 0, m->cfg.max_streams);
		ik_lock(&m->lock);
	}
	ik_unlock(&m->lock);
	if (cmdq_on && !(old & IK_SMMU_CR0_CMDQEN))
		sq_enable(q);
	else if (!cmdq_on && (old & IK_SMMU_CR0_CMDQEN))
		sq_disable(q);
	ik_lock(&m->lock);
	ik_store_release(&m->cr0ack, ack);
	ik_unlock(&m->lock);
	if (cmdq_on)
		(void)sq_consume(q);
	ik_unlock(&q->lock);
}

IK_API void ik_softsmmu_write32(struct ik_softsmmu *m, ik_u32 off, ik_u32 v)
{
	struct sq *q;
	ik_u32 reg;

	IK_ASSERT(m);
	if (off & 3)
		return;
	q = ecmdq_at(m, off, &reg);
	if (q) {
		bool off_;

		ik_lock(&q->lock);
		off_ = !(q->prod & SM_ECMDQ_EN) && !(q->hi & SM_ECMDQ_ENACK);
		if (reg == 0x8)
			ecmdq_prod_write(q, v);
		else if (reg == 0xc && off_)
			ik_store_release(&q->cons, v & SM_Q_IDX_MASK);
		else if ((reg == 0x0 || reg == 0x4) && off_)
			q->base = soft_set_half(q->base, reg == 0x4, v);
		ik_unlock(&q->lock);
		return;
	}
	switch (off) {
	case IK_SMMU_CR0:
		cr0_write(m, v);
		return;
	case IK_SMMU_CMDQ_BASE:
	case IK_SMMU_CMDQ_BASE + 4:
		ik_lock(&m->main.lock);
		if (!m->main.live)
			m->main.base = soft_set_half(m->main.base, off != IK_SMMU_CMDQ_BASE, v);
		ik_unlock(&m->main.lock);
		return;
	case IK_SMMU_CMDQ_PROD:
		q = &m->main;
		ik_lock(&q->lock);
		q->prod = v & SM_Q_IDX_MASK;
		if (q->live && !q->ring_bad)
			q->sw.prod = q->prod & q->wrmask;
		(void)sq_consume(q);
		ik_unlock(&q->lock);
		return;
	case IK_SMMU_CMDQ_CONS:
		ik_lock(&m->main.lock);
		if (!m->main.live)
			ik_store_release(&m->main.cons, v & SM_Q_IDX_MASK);
		ik_unlock(&m->main.lock);
		return;
	case IK_SMMU_GERRORN: {
		bool was;

		ik_lock(&m->lock);
		was = ((m->gerror ^ m->gerrorn) & IK_SMMU_GERROR_CMDQ_ERR) != 0;
		ik_store_release(&m->gerrorn, v);
		ik_unlock(&m->lock);
		if (was && !gerror_active(m, IK_SMMU_GERROR_CMDQ_ERR)) {
			ik_lock(&m->main.lock);
			sq_ack(&m->main);
			ik_unlock(&m->main.lock);
		}
		return;
	}
	default:
		break;
	}
	ik_lock(&m->lock);
	switch (off) {
	case IK_SMMU_CR1:
		ik_store_release(&m->cr1, v);
		break;
	case IK_SMMU_CR2:
		ik_store_release(&m->cr2, v);
		break;
	case IK_SMMU_GBPA: /* the update completes at once */
		ik_store_release(&m->gbpa, v & ~IK_SMMU_GBPA_UPDATE);
		break;
	case IK_SMMU_IRQ_CTRL:
		ik_store_release(&m->irq_ctrl, v);
		ik_store_release(&m->irq_ctrlack, v);
		break;
	case IK_SMMU_STRTAB_BASE:
	case IK_SMMU_STRTAB_BASE + 4:
		if (!(m->cr0ack & IK_SMMU_CR0_SMMUEN))
			m->strtab_base = soft_set_half(m->strtab_base, off != IK_SMMU_STRTAB_BASE, v);
		break;
	case IK_SMMU_STRTAB_BASE_CFG:
		if (!(m->cr0ack & IK_SMMU_CR0_SMMUEN))
			m->strtab_cfg = v;
		break;
	case IK_SMMU_EVTQ_BASE:
	case IK_SMMU_EVTQ_BASE + 4:
		if (!(m->cr0ack & IK_SMMU_CR0_EVTQEN))
			m->evtq_base = soft_set_half(m->evtq_base, off != IK_SMMU_EVTQ_BASE, v);
		break;
	case IK_SMMU_EVTQ_PROD:
		if (!(m->cr0ack & IK_SMMU_CR0_EVTQEN))
			ik_store_release(&m->evtq_prod, v & (SM_Q_IDX_MASK | IK_SMMU_EVTQ_OVFLG));
		break;
	case IK_SMMU_EVTQ_CONS:
		ik_store_release(&m->evtq_cons, v & (SM_Q_IDX_MASK | IK_SMMU_EVTQ_OVFLG));
		break;
	default:
		break; /* ID and unknown registers: writes ignored */
	}
	ik_unlock(&m->lock);
}

static ik_u32 mmio_read32(void *ctx, ik_u32 off)
{
	return ik_softsmmu_read32((struct ik_softsmmu *)ctx, off);
}

static void mmio_write32(void *ctx, ik_u32 off, ik_u32 v)
{
	ik_softsmmu_write32((struct ik_softsmmu *)ctx, off, v);
}

IK_API int ik_softsmmu_mmio(struct ik_softsmmu *m, struct ik_mmio *io)
{
	return soft_mmio(io, m, mmio_read32, mmio_write32);
}

/* ---------------------------------------------------------------- create / destroy */

static void sq_init(struct sq *q, struct ik_softsmmu *m, int id)
{
	IK_ENV_MEMSET(q, 0, sizeof(*q));
	ik_lock_init(&q->lock);
	q->m = m;
	q->id = id;
	q->wrmask = 3;
}

IK_API int ik_softsmmu_create(const struct ik_softsmmu_config *cfg, struct ik_softsmmu **out)
{
	static const ik_u8 oas_bits[8] = { 32, 36, 40, 42, 44, 48, 52, 0 };
	struct ik_softsmmu *m;
	unsigned nq = 0;

	if (!cfg || !out || !cfg->soft || !cfg->phys_to_host || !cfg->max_streams ||
	    cfg->max_streams > 65536)
		return -EINVAL;
	if (cfg->idr[1] & IK_SMMU_IDR1_ECMDQ) {
		if (cfg->ecmdq_log2nump > 8 || cfg->ecmdq_log2numq > 8 ||
		    cfg->ecmdq_log2nump + cfg->ecmdq_log2numq > 8)
			return -EINVAL;
		nq = 1u << (cfg->ecmdq_log2nump + cfg->ecmdq_log2numq);
	}
	m = (struct ik_softsmmu *)ik_alloc(cfg->alloc, sizeof(*m), IK_CACHELINE);
	if (!m)
		return -ENOMEM;
	IK_ENV_MEMSET(m, 0, sizeof(*m));
	m->cfg = *cfg;
	m->streams = (struct scfg *)ik_alloc(cfg->alloc, sizeof(struct scfg) * cfg->max_streams,
					     sizeof(ik_u64));
	if (nq)
		m->ecmdq = (struct sq *)ik_alloc(cfg->alloc, sizeof(struct sq) * nq, IK_CACHELINE);
	if (!m->streams || (nq && !m->ecmdq)) {
		ik_free(cfg->alloc, m->streams, sizeof(struct scfg) * cfg->max_streams);
		ik_free(cfg->alloc, m->ecmdq, sizeof(struct sq) * nq);
		ik_free(cfg->alloc, m, sizeof(*m));
		return -ENOMEM;
	}
	IK_ENV_MEMSET(m->streams, 0, sizeof(struct scfg) * cfg->max_streams);
	ik_lock_init(&m->lock);
	ik_lock_init(&m->cfg_lock);
	m->cmdqs = (cfg->idr[1] >> 21) & 0x1f;
	m->eventqs = (cfg->idr[1] >> 16) & 0x1f;
	if (m->cmdqs > 19)
		m->cmdqs = 19;
	if (m->eventqs > 19)
		m->eventqs = 19;
	m->sidsize = cfg->idr[1] & 0x3f;
	if (m->sidsize > 32)
		m->sidsize = 32;
	m->oas = oas_bits[cfg->idr[5] & 7];
	if (!m->oas)
		m->oas = 48;
	m->asid16 = (cfg->idr[0] >> 12) & 1;
	m->ptmem.read64 = pt_read64;
	m->ptmem.ctx = m;
	sq_init(&m->main, m, IK_SOFTSMMU_MAIN_CMDQ);
	m->nq = nq;
	m->nump = nq ? 1u << cfg->ecmdq_log2nump : 0;
	m->numq_log2 = cfg->ecmdq_log2numq;
	for (unsigned i = 0; i < nq; i++)
		sq_init(&m->ecmdq[i], m, (int)i);
	*out = m;
	return 0;
}

IK_API void ik_softsmmu_destroy(struct ik_softsmmu *m)
{
	const struct ik_allocator *a;

	if (!m)
		return;
	a = m->cfg.alloc;
	ik_free(a, m->streams, sizeof(struct scfg) * m->cfg.max_streams);
	ik_free(a, m->ecmdq, sizeof(struct sq) * m->nq);
	ik_free(a, m, sizeof(*m));
}

/* ---------------------------------------------------------------- control */

IK_API int ik_softsmmu_pause(struct ik_softsmmu *m, bool paused)
{
	if (!m)
		return -EINVAL;
	ik_store_release(&m->paused, paused ? 1u : 0u);
	if (!paused)
		(void)ik_softsmmu_poll(m);
	return 0;
}

IK_API int ik_softsmmu_poll(struct ik_softsmmu *m)
{
	int n = 0;

	if (!m)
		return -EINVAL;
	/* Consume as if running, whatever `paused` says. */
	for (unsigned i = 0; i <= m->nq; i++) {
		struct sq *q = i < m->nq ? &m->ecmdq[i] : &m->main;

		ik_lock(&q->lock);
		n += sq_consume_x(q, true);
		ik_unlock(&q->lock);
	}
	return n;
}

static struct sq *queue_of(struct ik_softsmmu *m, int queue)
{
	if (queue == IK_SOFTSMMU_MAIN_CMDQ)
		return &m->main;
	if (queue < 0 || (unsigned)queue >= m->nq)
		return NULL;
	return &m->ecmdq[queue];
}

IK_API int ik_softsmmu_inject(struct ik_softsmmu *m, int queue, unsigned kind, ik_u64 after,
			      unsigned times)
{
	struct sq *q;
	int err = 0;

	if (!m)
		return -EINVAL;
	q = queue_of(m, queue);
	if (!q || kind < IK_SOFTSMMU_INJ_ILL || kind > IK_SOFTSMMU_INJ_SPURIOUS_ERR ||
	    (kind == IK_SOFTSMMU_INJ_SPURIOUS_ERR && is_main(q)) ||
	    (kind == IK_SOFTSMMU_INJ_CONS_BEYOND_PROD && !after))
		return -EINVAL;
	ik_lock(&q->lock);
	switch (kind) {
	case IK_SOFTSMMU_INJ_ILL:
	case IK_SOFTSMMU_INJ_ABT:
		if (!q->live || q->ring_bad) {
			err = -EBUSY;
			break;
		}
		ik_cmdq_sw_inject(&q->sw, after,
				  kind == IK_SOFTSMMU_INJ_ILL ? IK_CMDQ_CERROR_ILL : IK_CMDQ_CERROR_ABT,
				  kind == IK_SOFTSMMU_INJ_ILL ? 1 : times);
		break;
	case IK_SOFTSMMU_INJ_ATC_TIMEOUT:
		q->atc_timeouts = times;
		break;
	case IK_SOFTSMMU_INJ_CONS_BEYOND_PROD:
		q->beyond = (ik_u32)(after & SM_Q_IDX_MASK);
		ik_store_release(&q->beyond_reads, times);
		break;
	case IK_SOFTSMMU_INJ_NO_ENACK:
		q->no_enack = times != 0;
		if (!q->no_enack && q->en_pending && !is_main(q)) {
			/* The acknowledgement that was held back comes now. */
			q->en_pending = false;
			sq_enable(q);
			ik_atomic_fetch_add(&m->ecmdq_enables, 1, IK_MO_RELAXED);
			ik_store_release(&q->hi, q->hi | SM_ECMDQ_ENACK);
			(void)sq_consume(q);
		}
		break;
	case IK_SOFTSMMU_INJ_SPURIOUS_ERR:
		if (!q->live) {
			err = -EBUSY;
			break;
		}
		sq_raise(q, IK_CMDQ_CERROR_ILL);
		q->stopped = false; /* nothing to re-fetch: ERRACK alone resumes */
		break;
	}
	ik_unlock(&q->lock);
	return err;
}

/* ---------------------------------------------------------------- DMA */

static ik_u8 evt_of(ik_u32 fault)
{
	switch (fault) {
	case IK_SOFTIOMMU_FAULT_PERMISSION:
		return IK_SMMU_EVT_F_PERMISSION;
	case IK_SOFTIOMMU_FAULT_ADDR_SIZE:
		return IK_SMMU_EVT_F_ADDR_SIZE;
	case IK_SOFTIOMMU_FAULT_ACCESS_FLAG:
		return IK_SMMU_EVT_F_ACCESS;
	case IK_SOFTIOMMU_FAULT_EXTERNAL:
		return IK_SMMU_EVT_F_WALK_EABT;
	case IK_SOFTIOMMU_FAULT_BAD_STREAM:
		return IK_SMMU_EVT_C_BAD_STREAMID;
	default:
		return IK_SMMU_EVT_F_TRANSLATION;
	}
}

/* Copy between buf and [pa, pa + n) of device memory. */
static bool copy(struct ik_softsmmu *m, ik_u64 pa, ik_u8 *buf, ik_size n, bool write)
{
	return soft_copy((ik_u8 *)host(m, pa, n), buf, n, write);
}

IK_API int ik_softsmmu_dma(struct ik_softsmmu *m, ik_u32 sid, ik_u64 iova, void *buf,
			   ik_size len, bool write)
{
	struct scfg c;
	ik_u8 *b = (ik_u8 *)buf;
	int ok = soft_dma_args(m, buf, len, iova);

	if (ok <= 0)
		return ok;
	if (!(ik_load_acquire(&m->cr0ack) & IK_SMMU_CR0_SMMUEN)) {
		if (ik_load_acquire(&m->gbpa) & IK_SMMU_GBPA_ABORT)
			return -EFAULT;
		return copy(m, iova, b, len, write) ? 0 : -EFAULT;
	}
	if (sid >= m->cfg.max_streams) {
		event(m, IK_SMMU_EVT_C_BAD_STREAMID, sid, 0, write, 0, 0);
		return -EFAULT;
	}
	ik_lock(&m->cfg_lock);
	if (m->streams[sid].state == ST_NONE)
		fetch_stream(m, sid, &m->streams[sid]);
	c = m->streams[sid];
	ik_unlock(&m->cfg_lock);
	switch (c.state) {
	case ST_ABORT:
		return -EFAULT;
	case ST_BYPASS:
		return copy(m, iova, b, len, write) ? 0 : -EFAULT;
	case ST_EVENT:
		event(m, c.evt, sid, iova, write, c.fetch, 0);
		return -EFAULT;
	default:
		break;
	}
	while (len) {
		struct ik_softiommu_xlate x;
		ik_u64 blk, n;

		IK_ENV_MEMSET(&x, 0, sizeof(x));
		if (ik_softiommu_translate(m->cfg.soft, sid, iova,
					   write ? IK_SOFTIOMMU_WRITE : IK_SOFTIOMMU_READ, &x)) {
			event(m, evt_of(x.fault), sid, iova, write, 0,
			      x.fault == IK_SOFTIOMMU_FAULT_EXTERNAL ? IK_SMMU_EVT_CLASS_TT :
								       IK_SMMU_EVT_CLASS_IN);
			return -EFAULT;
		}
		blk = x.lg2_size < 64 ? (1ull << x.lg2_size) - (iova & ((1ull << x.lg2_size) - 1)) :
					IK_U64_MAX;
		n = len < blk ? len : blk;
		if (!copy(m, x.oa, b, (ik_size)n, write)) {
			event(m, IK_SMMU_EVT_F_WALK_EABT, sid, iova, write, x.oa, IK_SMMU_EVT_CLASS_IN);
			return -EFAULT;
		}
		b += n;
		len -= (ik_size)n;
		iova += n;
	}
	return 0;
}

/* ---------------------------------------------------------------- counters */

IK_API int ik_softsmmu_get_stats(struct ik_softsmmu *m, struct ik_softsmmu_stats *st)
{
	if (!m || !st)
		return -EINVAL;
	IK_ENV_MEMSET(st, 0, sizeof(*st));
	st->commands = ik_load_relaxed(&m->commands);
	st->cmd_errors = ik_load_relaxed(&m->cmd_errors);
	st->ste_fetches = ik_load_relaxed(&m->ste_fetches);
	st->cd_fetches = ik_load_relaxed(&m->cd_fetches);
	st->events = ik_load_relaxed(&m->events);
	st->events_lost = ik_load_relaxed(&m->events_lost);
	st->ecmdq_enables = ik_load_relaxed(&m->ecmdq_enables);
	return 0;
}

IK_API ik_u64 ik_softsmmu_queue_commands(struct ik_softsmmu *m, int queue)
{
	struct sq *q = m ? queue_of(m, queue) : NULL;
	ik_u64 n;

	if (!q)
		return 0;
	ik_lock(&q->lock);
	n = q->executed;
	ik_unlock(&q->lock);
	return n;
}
