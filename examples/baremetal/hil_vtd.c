/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The VT-d checks of the hardware-in-the-loop harness (hil.h, docs/hil.md):
 * iommukit's VT-d driver core (<iommukit/drv/vtd.h>) on QEMU 7.2's
 * intel-iommu (q35; aw-bits 39 and 48; legacy and scalable mode), with edu
 * as the DMA master.  docs/vtd-bringup.md walks through the same code.
 *
 * The unit is programmed through iommukit only: ik_vtd_create()/_enable()
 * bring it up; second-level tables are an ik_pgtable of IK_PT_VTD_SL whose
 * config comes from ik_vtd_cfg_init() with the unit's CAP/ECAP, whose table
 * pages come from the harness's DMA memory (alloc_table hook) and are
 * cleaned (ECAP.C = 0); edu is attached with ik_vtd_context_set() (legacy
 * context entry, or scalable-mode context entry + RID_PASID PASID entry with
 * PGTT = second-level); IOVAs come from an ik_iova domain; every
 * invalidation is planned by ik_vtd_plan_*() and issued by
 * ik_vtd_plan_issue().
 *
 * Each behaviour is one check (one TAP line), in legacy mode ("vtd_") and in
 * scalable mode ("vtd_sm_", SKIP without ECAP.SMTS):
 *   - bring-up and teardown, twice;
 *   - translation through every table depth CAP.SAGAW offers (aw-bits 39:
 *     3 levels; 48: 3 and 4), the unit's own view of the entry (AW, pointer,
 *     DID, TT/PGTT read back through RTADDR) matching the table set; every
 *     other check also asserts the depth of its tables (hil.aw-bits);
 *   - DMA through 4 KiB pages in both directions, contents checked;
 *   - scattered pages behind one IOVA range (ik_pgtable_map_sg());
 *   - 2 MiB and 1 GiB superpages (the walker shows the leaf size);
 *   - unmap + planned page-selective invalidation: the next DMA is blocked,
 *     memory untouched, and the fault record names edu, the page and the
 *     reason - for a 4 KiB page, 64 KiB (AM = 4), a hole punched in a 2 MiB
 *     superpage (a split: IH = 0) and a whole 2 MiB leaf table unlinked
 *     (AM = 9);
 *   - the same without the invalidation still reaches the old page (QEMU's
 *     IOTLB caches translations, so the checks above mean something); a
 *     page-selective invalidation of one page leaves its neighbour's cached
 *     translation in place;
 *   - a read-only mapping: a write is blocked with a write fault, a read
 *     works;
 *   - a RW -> RO change: the cached RW translation is used until the
 *     invalidation, writes fault after it;
 *   - a context-entry switch from table set A to B (scalable mode: also a
 *     PASID-entry switch): A until ik_vtd_plan_change()'s invalidations, B
 *     after;
 *   - an illegal descriptor: -EIO to its submitter, the descriptor queued
 *     behind it still executes (a DMA proves it), the queue runs on;
 *   - first-level tables (scalable mode): SKIP, QEMU 7.2 has no ECAP.FLTS.
 * A check that needs a DMA counts them (about 100 ms each); the totals are
 * printed per check.
 *
 * Where QEMU 7.2 departs from the specification a check keeps the
 * specification's expectation and accepts QEMU's behaviour only as a named
 * departure, printed as "# QEMU 7.2 departs from the spec: ...":
 *   - scalable mode records the legacy fault reasons (0x5 / 0x6 for a write
 *     / read without permission, where the specification has 0x85 / 0x86);
 *   - scalable mode records PP = 1 with PASID 0 for requests without PASID
 *     (they carry none; PP should be 0);
 *   - IQA_REG reads back without DW, although the queue runs with 256-bit
 *     descriptors.
 * Behaviours the specification leaves open are printed as observations
 * ("# QEMU 7.2: ..."): its IOTLB caches translations (also stale ones) and
 * a page-selective invalidation of one page leaves the neighbour; legacy
 * mode caches context entries, scalable mode keeps no PASID-entry cache
 * (PASID-cache descriptors are no-ops); a write that hits a read-only IOTLB
 * entry is blocked without a fault record.
 */
#include <iommukit/env.h>
#include <iommukit/iova.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/drv/vtd.h>
#include "hil.h"
#include "ik_env_baremetal.h"

#define PG 4096ull
#define SZ_64K (1ull << 16)
#define SZ_2M (1ull << 21)
#define SZ_1G (1ull << 30)

/* Seeds of hil_fill(): SRC for what edu reads, POISON for memory no DMA may
 * reach; page k of a multi-page fill gets seed + k. */
#define SRC 0x5a00u
#define POISON 0xde00u
#define POISON2 0xee00u

/* Fault reasons (the specification's "Non-recoverable fault reason
 * encodings"). */
#define FR_WRITE 0x5u	   /* legacy: write to a page without write permission */
#define FR_READ 0x6u	   /* legacy: read of a page without read permission */
#define FR_SM_WRITE 0x85u  /* scalable mode: the same */
#define FR_SM_READ 0x86u

/* ---------------------------------------------------------------- modes */

struct mode {
	bool sm;		/* scalable mode (RTADDR.TTM = 01b), else legacy */
	enum ik_pt_fmt fmt;	/* the tables devices translate through */
};

static const struct mode legacy = { false, IK_PT_VTD_SL };
static const struct mode scalable = { true, IK_PT_VTD_SL };
static const struct mode scalable_fl = { true, IK_PT_VTD_FL };

/* ---------------------------------------------------------------- the rig */

/*
 * A rig is what almost every check needs: the unit enabled through an
 * ik_vtd, table sets with hooks into the harness's DMA memory, an IOVA
 * domain, set 0 attached to edu (DID 1), DMA buffers; rig_down() detaches,
 * disables, frees everything and checks that translation is off and the
 * pool is as before.  Setting up costs no DMA.
 */
#define RIG_SETS 3

struct rig;

/* One table set; its hooks get this as their cookie. */
struct rig_set {
	struct rig *r;
	struct ik_pgtable *pt;
	struct ik_vtd_target t;	/* the planner's view: pt and DID */
	unsigned levels;
};

struct rig {
	struct hil *h;
	const struct mode *m;
	struct ik_vtd *u;
	struct ik_vtd_caps vc;	/* for ik_vtd_cfg_init() */
	ik_u32 ias;		/* the default sets' input width */
	unsigned want_levels;	/* their depth, from hil.aw-bits */
	struct rig_set s[RIG_SETS];
	struct ik_iova_domain iova;
	bool iova_live;
	int attached;		/* the set edu's entry names; -1: none */
	struct hil_bufs bufs;	/* the check's DMA buffers */
	ik_u8 *scratch;		/* one page: expected patterns */
	ik_u64 scratch_bus;
	unsigned dmas;
	int hook_err;		/* the first error a table hook saw */
	long live;
};

static bool unit_scalable(struct hil *h)
{
	return ik_mmio_read64(&h->iommu, IK_VTD_REG_ECAP) & IK_VTD_ECAP_SMTS;
}

/* The depth of second-level tables for an input width (fmt/vtd.h). */
static unsigned sl_levels(ik_u32 ias)
{
	return ias <= 39 ? 3 : ias <= 48 ? 4 : 5;
}

static void hook_error(struct rig *r, int err)
{
	if (err && !r->hook_err)
		r->hook_err = err;
}

/* Table pages from the harness's DMA memory, below 2^haw (identity). */
static void *pt_alloc(void *cookie, ik_size size, ik_u64 *iommu_addr)
{
	struct rig_set *s = (struct rig_set *)cookie;
	void *cpu = NULL;

	if (ik_dma_alloc(&s->r->h->dma, size, size, &cpu, iommu_addr))
		return NULL;
	return cpu;
}

static void pt_free(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size)
{
	struct rig_set *s = (struct rig_set *)cookie;

	ik_dma_free(&s->r->h->dma, cpu, iommu_addr, size);
}

/* ECAP.C = 0: the unit's walks do not snoop; clflush what changed. */
static void pt_clean(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size)
{
	struct rig_set *s = (struct rig_set *)cookie;

	ik_dma_clean(&s->r->h->dma, cpu, iommu_addr, size);
}

/* A map replaced an empty table by a block: the walk caches go, then the
 * engine frees the table. */
static void pt_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	struct rig_set *s = (struct rig_set *)cookie;
	struct ik_vtd_plan p;
	int err;

	(void)granule;
	err = ik_vtd_plan_range(ik_vtd_caps(s->r->u), ik_vtd_plan_flags(s->r->u), &s->t, iova, size,
				true, &p);
	if (!err)
		err = ik_vtd_plan_issue(s->r->u, &p);
	hook_error(s->r, err);
}

/* After every map: what caching mode or RWBF ask (nothing on QEMU). */
static void pt_sync_map(void *cookie, ik_u64 iova, ik_u64 size)
{
	struct rig_set *s = (struct rig_set *)cookie;
	struct ik_vtd_plan p;
	int err;

	err = ik_vtd_plan_map(ik_vtd_caps(s->r->u), ik_vtd_plan_flags(s->r->u), &s->t, iova, size,
			      &p);
	if (!err)
		err = ik_vtd_plan_issue(s->r->u, &p);
	hook_error(s->r, err);
}

static const struct ik_pgtable_hooks pt_hooks = {
	pt_alloc, pt_free, pt_clean, NULL, pt_flush_walk, NULL, pt_sync_map, NULL,
};

/* A table set in slot i for input width ias, tagged with DID did. */
static int rig_set_new(struct rig *r, unsigned i, ik_u32 ias, ik_u16 did)
{
	struct rig_set *s = &r->s[i];
	struct ik_pgtable_cfg pc;
	struct ik_pgtable_info info;
	int err;

	err = ik_vtd_cfg_init(&pc, r->m->fmt, &r->vc, ias, 0);
	if (err)
		return err;
	pc.hooks = &pt_hooks;
	pc.cookie = s;
	s->r = r;
	err = ik_pgtable_create(&pc, &s->pt);
	if (err)
		return err;
	ik_pgtable_get_info(s->pt, &info);
	s->levels = info.geom.nlevels;
	s->t.pt = s->pt;
	s->t.did = did;
	return 0;
}

static int plan_issue_change(struct rig *r, const struct ik_vtd_change *chg)
{
	struct ik_vtd_plan p;
	int err = ik_vtd_plan_change(ik_vtd_caps(r->u), ik_vtd_plan_flags(r->u), chg, &p);

	return err ? err : ik_vtd_plan_issue(r->u, &p);
}

/* Point edu's context entry (scalable: and its RID_PASID entry) at set i,
 * with the invalidations the change needs. */
static int rig_attach(struct rig *r, unsigned i)
{
	struct ik_vtd_attach a;
	struct ik_vtd_change chg;
	int err;

	IK_ENV_MEMSET(&a, 0, sizeof(a));
	a.pt = r->s[i].pt;
	a.did = r->s[i].t.did;
	err = ik_vtd_context_set(r->u, r->h->rid >> 8, r->h->rid & 0xff, &a, &chg);
	if (err)
		return err;
	r->attached = (int)i;
	return plan_issue_change(r, &chg);
}

static int rig_detach(struct rig *r)
{
	struct ik_vtd_change chg;
	int err = ik_vtd_context_clear(r->u, r->h->rid >> 8, r->h->rid & 0xff, &chg);

	if (err)
		return err;
	r->attached = -1;
	return plan_issue_change(r, &chg);
}

static void show_fault(const char *what, const struct ik_vtd_fault *f)
{
	const char *name = ik_vtd_fault_reason_name(f->reason);

	if (f->pp)
		hil_diag("%s: sid %#x addr %#llx %s reason %#x (%s), PP, PASID %#x", what, f->sid,
			 (unsigned long long)f->addr, f->write ? "write" : "read", f->reason,
			 name ? name : "?", f->pasid);
	else
		hil_diag("%s: sid %#x addr %#llx %s reason %#x (%s)", what, f->sid,
			 (unsigned long long)f->addr, f->write ? "write" : "read", f->reason,
			 name ? name : "?");
}

/*
 * rig_up - the rig for mode arg with nsets table sets of the unit's full
 * width (set i: DID 1 + i), set 0 attached to edu.  false: the check ends
 * here (SKIP or failure recorded); call rig_down() either way.
 */
static bool rig_up(struct hil *h, const void *arg, struct rig *r, unsigned nsets)
{
	const struct mode *m = (const struct mode *)arg;
	struct ik_vtd_config c;
	struct ik_iova_config ic;
	struct ik_vtd_fault f;
	ik_u64 cap, ecap;
	ik_u32 mgaw;
	unsigned i;

	IK_ENV_MEMSET(r, 0, sizeof(*r));
	r->h = h;
	r->m = m;
	r->attached = -1;
	r->live = bm_pool_live();
	cap = ik_mmio_read64(&h->iommu, IK_VTD_REG_CAP);
	ecap = ik_mmio_read64(&h->iommu, IK_VTD_REG_ECAP);
	if (m->sm && !(ecap & IK_VTD_ECAP_SMTS)) {
		h->r.skip = "no scalable mode (x-scalable-mode=on)";
		return false;
	}
	if (m->fmt == IK_PT_VTD_FL && !(ecap & IK_VTD_ECAP_FLTS)) {
		h->r.skip = "first-level translation is not emulated (ECAP.FLTS = 0 on QEMU 7.2)";
		return false;
	}
	mgaw = IK_VTD_CAP_MGAW(cap);
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.mmio = &h->iommu;
	c.dma = &h->dma;
	c.haw = mgaw < 32 ? 32 : mgaw; /* QEMU's DMAR table: HAW = aw-bits */
	c.flags = m->sm ? IK_VTD_CFG_SCALABLE : 0;
#define UP_EQ(got, want)                                                                    \
	do {                                                                                \
		ik_u64 g_ = (ik_u64)(got), w_ = (ik_u64)(want);                             \
		if (g_ != w_) {                                                             \
			hil_fail_values(h, HIL_FILE, __LINE__, #got " == " #want, g_, w_);  \
			return false;                                                       \
		}                                                                           \
	} while (0)
	UP_EQ(ik_vtd_create(&c, &r->u), 0);
	/* Records a previous check left would hide ours: QEMU records no new
	 * fault while one from the same source-id is pending. */
	for (i = 0; i <= ik_vtd_caps(r->u)->nfr && ik_vtd_fault_pop(r->u, &f) == 0; i++)
		show_fault("stale fault record, cleared", &f);
	UP_EQ(ik_vtd_enable(r->u), 0);
	r->vc.cap = cap;
	r->vc.ecap = ecap;
	r->vc.haw = c.haw;
	r->vc.scalable = m->sm;
	/* First-level tables map the lower canonical half: 47 bits. */
	r->ias = m->fmt == IK_PT_VTD_FL && mgaw > 47 ? 47 : mgaw;
	r->want_levels = sl_levels((ik_u32)hil_cmdline_u64(h, "hil.aw-bits", mgaw));
	UP_EQ(ik_dma_alloc(&h->dma, PG, PG, (void **)&r->scratch, &r->scratch_bus), 0);
	IK_ENV_MEMSET(&ic, 0, sizeof(ic));
	ic.granule = PG;
	ic.start_pfn = 1;
	ic.end_pfn = ((ik_u64)1 << (r->ias - 12)) - 1;
	ic.flags = IK_IOVA_CFG_NO_RCACHE;
	UP_EQ(ik_iova_init(&r->iova, &ic), 0);
	r->iova_live = true;
	/* The interrupt window (0xfeexxxxx) is not DMA space. */
	UP_EQ(ik_iova_reserve(&r->iova, 0xfee00, 0xfeeff), 0);
	for (i = 0; i < nsets; i++) {
		UP_EQ(rig_set_new(r, i, r->ias, (ik_u16)(1 + i)), 0);
		if (m->fmt == IK_PT_VTD_SL)
			UP_EQ(r->s[i].levels, r->want_levels);
	}
	if (nsets)
		UP_EQ(rig_attach(r, 0), 0);
#undef UP_EQ
	return true;
}

static void rig_down(struct rig *r)
{
	struct hil *h = r->h;
	struct ik_vtd_fault f;
	unsigned i, left = 0, depths = 0, n = 0;
	char lv[16];
	int detach = 0;

	if (r->u) {
		if (r->attached >= 0)
			detach = rig_detach(r);
		while (left <= ik_vtd_caps(r->u)->nfr && ik_vtd_fault_pop(r->u, &f) == 0) {
			show_fault("fault record no step expected", &f);
			left++;
		}
		ik_vtd_destroy(r->u); /* translation and QI off, tables freed */
	}
	for (i = 0; i < RIG_SETS; i++) {
		if (r->s[i].pt)
			depths |= 1u << r->s[i].levels;
		ik_pgtable_destroy(r->s[i].pt);
	}
	if (r->iova_live)
		ik_iova_destroy(&r->iova);
	hil_bufs_free(&r->bufs, &h->dma);
	ik_dma_free(&h->dma, r->scratch, r->scratch_bus, PG);
	for (i = 2; i <= 6 && n + 2 < sizeof(lv); i++) {
		if (!(depths & (1u << i)))
			continue;
		if (n)
			lv[n++] = '+';
		lv[n++] = (char)('0' + i);
	}
	lv[n] = '\0';
	if (r->dmas)
		hil_diag("%u edu DMAs, %s-level %s tables", r->dmas, lv,
			 r->m->fmt == IK_PT_VTD_FL ? "first-level" : "second-level");
	HIL_CHECK_EQ(h, detach, 0);
	HIL_CHECK_EQ(h, left, 0);
	HIL_CHECK_EQ(h, r->hook_err, 0);
	HIL_CHECK_EQ(h, ik_mmio_read32(&h->iommu, IK_VTD_REG_GSTS) &
				(IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES), 0);
	HIL_CHECK_EQ(h, bm_pool_live(), r->live);
}

/* A zeroed DMA buffer of `size` bytes, freed by rig_down(). */
static int rig_buf(struct rig *r, ik_size size, ik_u8 **cpu, ik_u64 *bus)
{
	return hil_bufs_alloc(&r->bufs, &r->h->dma, size, cpu, bus);
}

/* `size` bytes of IOVA space aligned to size (rounded up to a power of two),
 * from the top of the unit's width down. */
static int rig_iova(struct rig *r, ik_u64 size, ik_u64 *iova)
{
	ik_u64 pfn = 0;
	int err = ik_iova_alloc(&r->iova, size / PG, IK_U64_MAX, IK_IOVA_SIZE_ALIGNED, &pfn);

	*iova = pfn * PG;
	return err;
}

/* edu reads [bus, bus + len) into its buffer at 0 / writes its buffer's
 * [0, len) to bus: one DMA each. */
static int rd(struct rig *r, ik_u64 bus, ik_u32 len)
{
	r->dmas++;
	return hil_edu_dma_from_ram(&r->h->edu, bus, 0, len, r->h->timeout_ns);
}

static int wr(struct rig *r, ik_u64 bus, ik_u32 len)
{
	r->dmas++;
	return hil_edu_dma_to_ram(&r->h->edu, 0, bus, len, r->h->timeout_ns);
}

/* Page k of p gets hil_fill() seed + k. */
static void fill_pages(void *p, unsigned npages, ik_u32 seed)
{
	for (unsigned k = 0; k < npages; k++)
		hil_fill((ik_u8 *)p + k * PG, PG, seed + k);
}

/* Does p[0, n) hold the bytes a page filled with `seed` has at
 * [from, from + n)?  (from + n <= 4096) */
static bool seed_at(struct rig *r, const void *p, ik_size n, ik_u32 seed, ik_size from)
{
	hil_fill(r->scratch, PG, seed);
	return hil_memdiff(p, r->scratch + from, n) == n;
}

/* Are pages [0, npages) of p still as fill_pages(p, npages, seed) left them? */
static bool untouched(const void *p, unsigned npages, ik_u32 seed)
{
	for (unsigned k = 0; k < npages; k++)
		if (hil_verify((const ik_u8 *)p + k * PG, PG, seed + k) != PG)
			return false;
	return true;
}

/* The hardware view: tables read at their bus addresses (identity). */
static int phys_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	(void)ctx;
	*val = *(const volatile ik_u64 *)(ik_uptr)addr;
	return 0;
}

static const struct ik_pt_mem phys = { phys_read64, NULL, NULL };

static ik_u64 phys64(ik_u64 addr)
{
	return *(const volatile ik_u64 *)(ik_uptr)addr;
}

/* The walker's answer for iova in set s, as the unit would walk it. */
static struct ik_pt_walk_result walk(const struct rig_set *s, ik_u64 iova)
{
	struct ik_pt_walker w;
	struct ik_pt_walk_result res;

	IK_ENV_MEMSET(&res, 0, sizeof(res));
	ik_pgtable_walker(s->pt, &w);
	if (ik_pt_walk(&w, &phys, iova, 0, &res))
		res.fault = IK_PT_FAULT_EXTERNAL;
	return res;
}

/* Unmap [iova, iova + size) of set s into *g. */
static ik_s64 unmap(struct rig *r, unsigned s, ik_u64 iova, ik_u64 size, struct ik_gather *g)
{
	ik_gather_init(g);
	return ik_pgtable_unmap(r->s[s].pt, iova, size, g);
}

/* The planned invalidation of a gather, issued; then the gather synced. */
static int invalidate(struct rig *r, unsigned s, struct ik_gather *g, struct ik_vtd_plan *p)
{
	struct ik_vtd_plan local;
	int err;

	if (!p)
		p = &local;
	err = ik_vtd_plan_unmap(ik_vtd_caps(r->u), ik_vtd_plan_flags(r->u), &r->s[s].t, g, p);
	if (!err)
		err = ik_vtd_plan_issue(r->u, p);
	if (!err)
		err = ik_pgtable_gather_sync(r->s[s].pt, g);
	return err;
}

/* Is plan p one page-selective IOTLB invalidation of 2^am pages at iova
 * (with the unit's drain bits and hint ih) and a wait? */
static bool plan_is_psi(const struct rig *r, const struct ik_vtd_plan *p, ik_u64 iova,
			unsigned am, bool ih)
{
	const struct ik_vtd_desc *d = &p->d[0];

	hil_diag("plan: %u descriptor(s): %s G %u DID %u ADDR %#llx AM %u IH %u, wait %u", p->n,
		 p->n ? ik_vtd_desc_name(d->type) : "-", d->g, d->did, (unsigned long long)d->addr,
		 d->am, d->ih, p->sync);
	return p->n == 1 && p->sync && !p->wbf && d->type == IK_VTD_DESC_IOTLB &&
	       d->g == IK_VTD_G_PAGE && d->addr == iova && d->am == am && d->ih == ih &&
	       d->did == r->s[0].t.did && d->dr == ik_vtd_caps(r->u)->drd &&
	       d->dw == ik_vtd_caps(r->u)->dwd;
}

/*
 * fault_is - pop the record the last DMA left and compare it with what the
 * specification says it holds: edu's source-id, the page of iova, the
 * access type, reason fr (legacy) or sm_fr (scalable mode), no PASID; and
 * no second record.  In scalable mode QEMU 7.2's legacy reason and its
 * PP = 1 / PASID 0 are accepted as named departures.  0, or the line of
 * the first mismatch (printed).
 */
static int fault_is(struct rig *r, ik_u64 iova, bool write, unsigned fr, unsigned sm_fr)
{
	struct ik_vtd_fault f, g;
	bool sm = r->m->sm;
	unsigned want = sm ? sm_fr : fr;

	if (ik_vtd_fault_pop(r->u, &f)) {
		hil_diag("no fault record");
		return __LINE__;
	}
	show_fault("fault", &f);
	if (f.sid != r->h->rid || f.addr != (iova & ~(PG - 1)) || f.write != write)
		return __LINE__;
	if (f.reason != want) {
		if (!sm || f.reason != fr)
			return __LINE__;
		hil_diag("QEMU 7.2 departs from the spec: legacy reason %#x in scalable mode, "
			 "where the spec has %#x", fr, sm_fr);
	}
	if (f.pp) {
		if (!sm || f.pasid != 0)
			return __LINE__;
		hil_diag("QEMU 7.2 departs from the spec: PP = 1 (PASID 0, RID_PASID) for a "
			 "request without PASID");
	}
	if (ik_vtd_fault_pop(r->u, &g) != -ENOENT) {
		show_fault("a second record", &g);
		return __LINE__;
	}
	return 0;
}

#define EXPECT_FAULT(r, iova, write, fr, sm_fr)                                             \
	HIL_CHECK_EQ_GOTO((r)->h, fault_is((r), (iova), (write), (fr), (sm_fr)), 0, out)

/* ---------------------------------------------------------------- checks */

static void bringup_and_teardown(struct hil *h, const void *arg)
{
	const struct mode *m = (const struct mode *)arg;
	const struct ik_vtd_hwcaps *c;
	struct ik_vtd_config cfg;
	struct ik_vtd *u = NULL;
	long live = bm_pool_live();
	ik_u64 cap = ik_mmio_read64(&h->iommu, IK_VTD_REG_CAP);
	bool dw;

	if (m->sm && !unit_scalable(h))
		HIL_SKIP(h, "no scalable mode (x-scalable-mode=on)");
	IK_ENV_MEMSET(&cfg, 0, sizeof(cfg));
	cfg.mmio = &h->iommu;
	cfg.dma = &h->dma;
	cfg.haw = IK_VTD_CAP_MGAW(cap) < 32 ? 32 : IK_VTD_CAP_MGAW(cap);
	cfg.flags = m->sm ? IK_VTD_CFG_SCALABLE : 0;
	HIL_CHECK_EQ(h, ik_vtd_create(&cfg, &u), 0);
	c = ik_vtd_caps(u);
	hil_diag("VT-d %u.%u: ND %u (%u domains) SAGAW %#x MGAW %u SLLPS %#x PSI %u MAMV %u NFR %u "
		 "FRO %#x CM %u RWBF %u C %u QI %u DT %u PT %u SMTS %u SLTS %u FLTS %u",
		 c->ver_major, c->ver_minor, c->nd, c->domains, c->sagaw, c->mgaw, c->sllps, c->psi,
		 c->mamv, c->nfr, c->fro, c->cm, c->rwbf, c->c, c->qi, c->dt, c->pt, c->smts,
		 c->slts, c->flts);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_enable(u), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(&h->iommu, IK_VTD_REG_GSTS) &
				     (IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES | IK_VTD_GSTS_RTPS),
			  IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES | IK_VTD_GSTS_RTPS, out);
	HIL_CHECK_EQ_GOTO(h, (ik_mmio_read64(&h->iommu, IK_VTD_REG_RTADDR) >>
			      IK_VTD_RTADDR_TTM_SHIFT) & 3,
			  m->sm ? IK_VTD_RTADDR_TTM_SCALABLE : IK_VTD_RTADDR_TTM_LEGACY, out);
	dw = ik_mmio_read64(&h->iommu, IK_VTD_REG_IQA) & IK_VTD_IQA_DW;
	HIL_CHECK_EQ_GOTO(h, ik_vtd_issue(u, NULL, 0, true), 0, out);
	/* IQA.DW is read-write: it reads back as written.  QEMU 7.2 returns
	 * IQA without it; the wait above, a 256-bit descriptor that a unit in
	 * 128-bit mode would misread, shows the width took effect. */
	if (m->sm && !dw)
		hil_diag("QEMU 7.2 departs from the spec: IQA_REG reads back without DW "
			 "(bit 11), while the queue runs with 256-bit descriptors");
	else
		HIL_CHECK_EQ_GOTO(h, dw, m->sm, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_disable(u), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(&h->iommu, IK_VTD_REG_GSTS) &
				     (IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES), 0, out);
	/* and once more: the queue restarts at IQH = 0 */
	HIL_CHECK_EQ_GOTO(h, ik_vtd_enable(u), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_issue(u, NULL, 0, true), 0, out);
out:
	ik_vtd_destroy(u);
	HIL_CHECK_EQ(h, ik_mmio_read32(&h->iommu, IK_VTD_REG_GSTS) &
				(IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES), 0);
	HIL_CHECK_EQ(h, bm_pool_live(), live);
}

/*
 * What the unit reads for edu, found from RTADDR as the unit finds it:
 * legacy root entry -> context entry (TT, AW, SLPTPTR, DID); scalable root
 * entry -> scalable-mode context entry -> PASID directory -> RID_PASID
 * (PASID 0) entry (PGTT, AW, SLPTPTR, DID).  0, or the line where an entry
 * on the way was not present.
 */
struct unit_view {
	ik_u64 ptptr;
	unsigned aw, did, type; /* type: legacy TT, scalable PGTT */
};

static int unit_view(const struct rig *r, struct unit_view *v)
{
	ik_u64 rta = ik_mmio_read64(&r->h->iommu, IK_VTD_REG_RTADDR);
	ik_u64 root = rta & ~(PG - 1), re, w0, w1;
	unsigned bus = r->h->rid >> 8, devfn = r->h->rid & 0xff;

	IK_ENV_MEMSET(v, 0, sizeof(*v));
	if (((rta >> IK_VTD_RTADDR_TTM_SHIFT) & 3) !=
	    (r->m->sm ? IK_VTD_RTADDR_TTM_SCALABLE : IK_VTD_RTADDR_TTM_LEGACY))
		return __LINE__;
	if (!r->m->sm) {
		re = phys64(root + bus * 16);
		if (!(re & IK_VTD_RE_P))
			return __LINE__;
		w0 = phys64((re & IK_VTD_ADDR_MASK) + devfn * 16);
		w1 = phys64((re & IK_VTD_ADDR_MASK) + devfn * 16 + 8);
		if (!(w0 & IK_VTD_CTX_P))
			return __LINE__;
		v->type = (unsigned)(w0 >> IK_VTD_CTX_TT_SHIFT) & 3;
		v->ptptr = w0 & IK_VTD_ADDR_MASK;
		v->aw = (unsigned)(w1 >> IK_VTD_CTX_AW_SHIFT) & 7;
		v->did = (unsigned)(w1 >> IK_VTD_CTX_DID_SHIFT) & 0xffff;
		return 0;
	}
	re = phys64(root + bus * 16 + (devfn >= 128 ? 8 : 0));
	if (!(re & IK_VTD_RE_P))
		return __LINE__;
	w0 = phys64((re & IK_VTD_ADDR_MASK) + (devfn & 127) * 32);
	if (!(w0 & IK_VTD_SMCE_P))
		return __LINE__;
	w0 = phys64(w0 & IK_VTD_ADDR_MASK); /* PASID directory entry 0 */
	if (!(w0 & IK_VTD_PDE_P))
		return __LINE__;
	w1 = phys64((w0 & IK_VTD_ADDR_MASK) + 8);
	w0 = phys64(w0 & IK_VTD_ADDR_MASK); /* PASID entry 0, words 0 and 1 */
	if (!(w0 & IK_VTD_PE_P))
		return __LINE__;
	v->type = (unsigned)(w0 >> IK_VTD_PE_PGTT_SHIFT) & 7;
	v->ptptr = w0 & IK_VTD_ADDR_MASK;
	v->aw = (unsigned)(w0 >> IK_VTD_PE_AW_SHIFT) & 7;
	v->did = (unsigned)(w1 & 0xffff);
	return 0;
}

/*
 * Every depth CAP.SAGAW offers within CAP.MGAW: a table set of that depth,
 * the entry the unit reads naming it with the right AW, and a round trip
 * through the top two pages of its input range (the last index at every
 * level).  The configuration's own depth (hil.aw-bits) must be among them.
 */
static void dma_through_every_sagaw_depth(struct hil *h, const void *arg)
{
	struct rig r;
	struct unit_view v;
	struct ik_pgtable_info info;
	const struct ik_vtd_hwcaps *c;
	unsigned lv, n = 0;
	bool own = false;
	ik_u8 *buf;
	ik_u64 bus;

	if (!rig_up(h, arg, &r, 0))
		goto out;
	c = ik_vtd_caps(r.u);
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, 2 * PG, &buf, &bus), 0, out);
	for (lv = 3; lv <= 5; lv++) {
		ik_u32 ias = 12 + 9 * lv;
		ik_u64 x;

		if (!(c->sagaw & (1u << IK_VTD_AW_FROM_LEVELS(lv))))
			continue;
		if (ias > c->mgaw)
			ias = c->mgaw;
		if (ias <= 12 + 9 * (lv - 1))
			continue; /* MGAW too narrow for this depth */
		x = ((ik_u64)1 << ias) - 2 * PG;
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, n, ias, (ik_u16)(1 + n)), 0, out);
		HIL_CHECK_EQ_GOTO(h, r.s[n].levels, lv, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[n].pt, x, bus, 2 * PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, n), 0, out);
		HIL_CHECK_EQ_GOTO(h, unit_view(&r, &v), 0, out);
		ik_pgtable_get_info(r.s[n].pt, &info);
		hil_diag("%u levels, ias %u: the unit reads %s %u, AW %u, table %#llx, DID %u; "
			 "DMA at %#llx", lv, ias, r.m->sm ? "PGTT" : "TT", v.type, v.aw,
			 (unsigned long long)v.ptptr, v.did, (unsigned long long)x);
		HIL_CHECK_EQ_GOTO(h, v.aw, IK_VTD_AW_FROM_LEVELS(lv), out);
		HIL_CHECK_EQ_GOTO(h, v.ptptr, info.root_iommu, out);
		HIL_CHECK_EQ_GOTO(h, v.did, 1 + n, out);
		HIL_CHECK_EQ_GOTO(h, v.type, r.m->sm ? IK_VTD_PGTT_SL : IK_VTD_CTX_TT_UNTRANSLATED,
				  out);
		fill_pages(buf, 2, SRC + 16 * lv);
		HIL_CHECK_EQ_GOTO(h, rd(&r, x + 64, 256), 0, out);
		HIL_CHECK_EQ_GOTO(h, wr(&r, x + PG + 512, 256), 0, out);
		HIL_CHECK_GOTO(h, seed_at(&r, buf + PG + 512, 256, SRC + 16 * lv, 64), out);
		HIL_CHECK_GOTO(h, seed_at(&r, buf + PG, 512, SRC + 16 * lv + 1, 0), out);
		HIL_CHECK_GOTO(h, seed_at(&r, buf, PG, SRC + 16 * lv, 0), out);
		HIL_CHECK_EQ_GOTO(h, rig_detach(&r), 0, out);
		own = own || lv == r.want_levels;
		n++;
	}
	HIL_CHECK_GOTO(h, own, out);
out:
	rig_down(&r);
}

/* Mapped DMA through 4 KiB pages: edu reads one page and writes another;
 * the bytes arrive where the tables say, nothing else changes. */
static void dma_4k_both_directions(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_pt_walk_result w;
	ik_u8 *buf;
	ik_u64 bus, x;

	if (!rig_up(h, arg, &r, 1))
		goto out;
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, 2 * PG, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, 2 * PG, &x), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, bus, 2 * PG, IK_PROT_READ | IK_PROT_WRITE),
			  0, out);
	w = walk(&r.s[0], x + PG);
	HIL_CHECK_EQ_GOTO(h, w.fault, IK_PT_FAULT_NONE, out);
	HIL_CHECK_EQ_GOTO(h, w.pgsize, PG, out);
	HIL_CHECK_EQ_GOTO(h, w.oa, bus + PG, out);
	fill_pages(buf, 2, SRC);
	/* read: page 0 [100, 1100) -> edu; write: edu -> page 1 [300, 1300) */
	HIL_CHECK_EQ_GOTO(h, rd(&r, x + 100, 1000), 0, out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + PG + 300, 1000), 0, out);
	HIL_CHECK_GOTO(h, untouched(buf, 1, SRC), out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf + PG, 300, SRC + 1, 0), out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf + PG + 300, 1000, SRC, 100), out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf + PG + 1300, PG - 1300, SRC + 1, 1300), out);
out:
	rig_down(&r);
}

struct dump_ctx {
	unsigned n;
	struct ik_pt_range r[4];
};

static int dump_range(void *ctx, const struct ik_pt_range *rg)
{
	struct dump_ctx *d = (struct dump_ctx *)ctx;

	if (d->n < IK_ARRAY_SIZE(d->r))
		d->r[d->n] = *rg;
	d->n++;
	return 0;
}

/*
 * Three scattered pages (physically out of order, with a gap) mapped by one
 * ik_pgtable_map_sg() behind one contiguous IOVA range: the walker's dump
 * shows three ranges at the segments' addresses; edu reads across the
 * second segment boundary and writes across the first, and the bytes land
 * in the right pages.
 */
static void dma_map_sg_scattered_pages(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_pt_walker w;
	struct dump_ctx d;
	struct ik_seg seg[3];
	ik_u8 *buf, *p0, *p1, *p2;
	ik_u64 bus, x, mapped = 0;

	if (!rig_up(h, arg, &r, 1))
		goto out;
	/* pages 2, 0 and 3 of a run of four, in that order; page 1 unused */
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, 4 * PG, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, 3 * PG, &x), 0, out);
	seg[0].paddr = bus + 2 * PG;
	seg[1].paddr = bus;
	seg[2].paddr = bus + 3 * PG;
	seg[0].len = seg[1].len = seg[2].len = PG;
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map_sg(r.s[0].pt, x, seg, 3, IK_PROT_READ | IK_PROT_WRITE,
					       &mapped), 0, out);
	HIL_CHECK_EQ_GOTO(h, mapped, 3 * PG, out);
	IK_ENV_MEMSET(&d, 0, sizeof(d));
	ik_pgtable_walker(r.s[0].pt, &w);
	HIL_CHECK_EQ_GOTO(h, ik_pt_walker_dump(&w, &phys, x, 3 * PG, dump_range, &d), 0, out);
	HIL_CHECK_EQ_GOTO(h, d.n, 3, out);
	for (unsigned i = 0; i < 3; i++) {
		HIL_CHECK_EQ_GOTO(h, d.r[i].iova, x + i * PG, out);
		HIL_CHECK_EQ_GOTO(h, d.r[i].oa, seg[i].paddr, out);
		HIL_CHECK_EQ_GOTO(h, d.r[i].size, PG, out);
	}
	p0 = buf + 2 * PG;
	p1 = buf;
	p2 = buf + 3 * PG;
	fill_pages(buf, 4, SRC);
	/* read: seg1 [2048, 4096) + seg2 [0, 2047) -> edu [0, 4095) */
	HIL_CHECK_EQ_GOTO(h, rd(&r, x + PG + 2048, 4095), 0, out);
	/* write: edu [0, 4095) -> seg0 [2048, 4096) + seg1 [0, 2047) */
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + 2048, 4095), 0, out);
	HIL_CHECK_GOTO(h, seed_at(&r, p0, 2048, SRC + 2, 0), out);
	HIL_CHECK_GOTO(h, seed_at(&r, p0 + 2048, 2048, SRC + 0, 2048), out);
	HIL_CHECK_GOTO(h, seed_at(&r, p1, 2047, SRC + 3, 0), out);
	HIL_CHECK_GOTO(h, seed_at(&r, p1 + 2047, PG - 2047, SRC + 0, 2047), out);
	HIL_CHECK_GOTO(h, untouched(p2, 1, SRC + 3), out);
	HIL_CHECK_GOTO(h, untouched(buf + PG, 1, SRC + 1), out);
out:
	rig_down(&r);
}

/*
 * A superpage of `size` (2 MiB or 1 GiB) over the aligned physical region
 * that holds a buffer: the walker finds one leaf of that size (PS set) at
 * the right level; edu reads and writes the buffer through it.
 */
static void dma_superpage(struct hil *h, const void *arg, ik_u64 size)
{
	struct rig r;
	struct ik_pt_walk_result w;
	ik_u8 *buf;
	ik_u64 bus, x, base, off;

	if (!rig_up(h, arg, &r, 1))
		goto out;
	if (!(ik_vtd_caps(r.u)->sllps & (size == SZ_1G ? IK_VTD_SLLPS_1G : IK_VTD_SLLPS_2M))) {
		h->r.skip = "CAP.SLLPS lacks the size";
		goto out;
	}
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, size, &x), 0, out);
	base = bus & ~(size - 1);
	off = bus - base;
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, base, size, IK_PROT_READ | IK_PROT_WRITE),
			  0, out);
	w = walk(&r.s[0], x + off);
	hil_diag("iova %#llx -> %#llx: leaf of %#llx bytes at engine level %u, entry %#llx",
		 (unsigned long long)(x + off), (unsigned long long)w.oa,
		 (unsigned long long)w.pgsize, w.level, (unsigned long long)w.pte);
	HIL_CHECK_EQ_GOTO(h, w.fault, IK_PT_FAULT_NONE, out);
	HIL_CHECK_EQ_GOTO(h, w.pgsize, size, out);
	HIL_CHECK_EQ_GOTO(h, w.level, size == SZ_1G ? 2 : 1, out);
	HIL_CHECK_GOTO(h, w.pte & IK_VTD_SL_PS, out);
	HIL_CHECK_EQ_GOTO(h, w.oa, bus, out);
	fill_pages(buf, 1, SRC);
	HIL_CHECK_EQ_GOTO(h, rd(&r, x + off + 64, 1024), 0, out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + off + 2048, 1024), 0, out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf, 2048, SRC, 0), out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf + 2048, 1024, SRC, 64), out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf + 3072, 1024, SRC, 3072), out);
out:
	rig_down(&r);
}

static void dma_2m_superpage(struct hil *h, const void *arg)
{
	dma_superpage(h, arg, SZ_2M);
}

static void dma_1g_superpage(struct hil *h, const void *arg)
{
	dma_superpage(h, arg, SZ_1G);
}

/*
 * Unmap with the planned invalidation, for a mapping of `size` bytes of 4K
 * pages (4 KiB, 64 KiB): edu first reads the last page (QEMU's IOTLB now
 * holds it); after ik_pgtable_unmap(), the plan - one page-selective IOTLB
 * invalidation of the smallest aligned block, IH = 1 (only leaves changed) -
 * and its wait, a write there is blocked: memory untouched, a write fault
 * for the page; and a read of the first page is blocked with a read fault.
 */
static void unmap_then_planned_psi_blocks(struct hil *h, const void *arg, ik_u64 size)
{
	struct rig r;
	struct ik_gather g;
	struct ik_vtd_plan p;
	unsigned npages = (unsigned)(size / PG), am = 0;
	ik_u8 *buf;
	ik_u64 bus, x, last;

	while (((ik_u64)1 << am) < npages)
		am++;
	if (!rig_up(h, arg, &r, 1))
		goto out;
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, size, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, size, &x), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, bus, size, IK_PROT_READ | IK_PROT_WRITE), 0,
			  out);
	last = x + size - PG;
	fill_pages(buf, npages, SRC);
	HIL_CHECK_EQ_GOTO(h, rd(&r, last + 128, 64), 0, out);
	fill_pages(buf, npages, POISON);
	HIL_CHECK_EQ_GOTO(h, unmap(&r, 0, x, size, &g), (ik_s64)size, out);
	HIL_CHECK_EQ_GOTO(h, g.walk, false, out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&r, 0, &g, &p), 0, out);
	HIL_CHECK_GOTO(h, plan_is_psi(&r, &p, x, am, true), out);
	HIL_CHECK_EQ_GOTO(h, walk(&r.s[0], last).fault, IK_PT_FAULT_TRANSLATION, out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, last + 128, 64), 0, out);
	HIL_CHECK_GOTO(h, untouched(buf, npages, POISON), out);
	EXPECT_FAULT(&r, last, true, FR_WRITE, FR_SM_WRITE);
	HIL_CHECK_EQ_GOTO(h, rd(&r, x + 256, 64), 0, out);
	EXPECT_FAULT(&r, x, false, FR_READ, FR_SM_READ);
out:
	rig_down(&r);
}

static void unmap_4k_then_planned_psi_blocks(struct hil *h, const void *arg)
{
	unmap_then_planned_psi_blocks(h, arg, PG);
}

static void unmap_64k_then_planned_psi_blocks(struct hil *h, const void *arg)
{
	unmap_then_planned_psi_blocks(h, arg, SZ_64K);
}

/*
 * A hole punched in a 2 MiB superpage: edu reads page k through the
 * superpage (QEMU caches the 2 MiB translation); unmapping page k splits
 * the block into a leaf table (gather.walk: IH = 0); after the planned
 * invalidation of page k a write there is blocked with a fault, and a write
 * to its neighbour still arrives - through the new 4 KiB leaf.
 */
static void unmap_hole_in_2m_superpage(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_gather g;
	struct ik_vtd_plan p;
	struct ik_pgtable_stats st;
	struct ik_pt_walk_result w;
	ik_u8 *buf, *pk, *pn;
	ik_u64 bus, x, base, bk, bn;

	if (!rig_up(h, arg, &r, 1))
		goto out;
	if (!(ik_vtd_caps(r.u)->sllps & IK_VTD_SLLPS_2M)) {
		h->r.skip = "no 2 MiB superpages (CAP.SLLPS)";
		goto out;
	}
	/* page k is the middle one of three; its neighbour n the one of the
	 * other two inside k's 2 MiB region */
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, 3 * PG, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, SZ_2M, &x), 0, out);
	bk = bus + PG;
	base = bk & ~(SZ_2M - 1);
	bn = ((bk + PG) & (SZ_2M - 1)) ? bk + PG : bk - PG;
	pk = buf + PG;
	pn = buf + (bn - bus);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, base, SZ_2M, IK_PROT_READ | IK_PROT_WRITE),
			  0, out);
	HIL_CHECK_EQ_GOTO(h, walk(&r.s[0], x + (bk - base)).pgsize, SZ_2M, out);
	fill_pages(pk, 1, SRC);
	HIL_CHECK_EQ_GOTO(h, rd(&r, x + (bk - base), 64), 0, out);
	fill_pages(pk, 1, POISON);
	fill_pages(pn, 1, POISON2);
	HIL_CHECK_EQ_GOTO(h, unmap(&r, 0, x + (bk - base), PG, &g), (ik_s64)PG, out);
	HIL_CHECK_EQ_GOTO(h, g.walk, true, out);
	ik_pgtable_get_stats(r.s[0].pt, &st);
	HIL_CHECK_EQ_GOTO(h, st.splits, 1, out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&r, 0, &g, &p), 0, out);
	HIL_CHECK_GOTO(h, plan_is_psi(&r, &p, x + (bk - base), 0, false), out);
	HIL_CHECK_EQ_GOTO(h, walk(&r.s[0], x + (bk - base)).fault, IK_PT_FAULT_TRANSLATION, out);
	w = walk(&r.s[0], x + (bn - base));
	HIL_CHECK_EQ_GOTO(h, w.fault, IK_PT_FAULT_NONE, out);
	HIL_CHECK_EQ_GOTO(h, w.pgsize, PG, out);
	HIL_CHECK_EQ_GOTO(h, w.oa, bn, out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + (bk - base), 64), 0, out);
	HIL_CHECK_GOTO(h, untouched(pk, 1, POISON), out);
	EXPECT_FAULT(&r, x + (bk - base), true, FR_WRITE, FR_SM_WRITE);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + (bn - base), 64), 0, out);
	HIL_CHECK_GOTO(h, seed_at(&r, pn, 64, SRC, 0), out);
	HIL_CHECK_GOTO(h, seed_at(&r, pn + 64, PG - 64, POISON2, 64), out);
out:
	rig_down(&r);
}

/*
 * A whole 2 MiB leaf table unlinked: 512 4 KiB pages; edu reads one (QEMU
 * caches its 4 KiB translation); unmapping the 2 MiB clears the one
 * directory entry (the table is queued on the gather: walk set, IH = 0);
 * the plan invalidates the 2^9-page block; after it the table is freed and
 * a write to the page is blocked with a fault.
 */
static void unmap_whole_2m_table(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_gather g;
	struct ik_vtd_plan p;
	struct ik_pt_walk_result w;
	ik_u8 *buf;
	ik_u64 bus, x, base, at;

	if (!rig_up(h, arg, &r, 1))
		goto out;
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, SZ_2M, &x), 0, out);
	base = bus & ~(SZ_2M - 1);
	at = x + (bus - base);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map_pages(r.s[0].pt, x, base, PG, 512,
						  IK_PROT_READ | IK_PROT_WRITE), 0, out);
	w = walk(&r.s[0], at);
	HIL_CHECK_EQ_GOTO(h, w.pgsize, PG, out);
	HIL_CHECK_EQ_GOTO(h, w.oa, bus, out);
	fill_pages(buf, 1, SRC);
	HIL_CHECK_EQ_GOTO(h, rd(&r, at, 64), 0, out);
	fill_pages(buf, 1, POISON);
	HIL_CHECK_EQ_GOTO(h, unmap(&r, 0, x, SZ_2M, &g), (ik_s64)SZ_2M, out);
	HIL_CHECK_EQ_GOTO(h, g.nr_tables, 1, out);
	HIL_CHECK_EQ_GOTO(h, g.walk, true, out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&r, 0, &g, &p), 0, out);
	HIL_CHECK_GOTO(h, plan_is_psi(&r, &p, x, 9, false), out);
	w = walk(&r.s[0], at);
	HIL_CHECK_EQ_GOTO(h, w.fault, IK_PT_FAULT_TRANSLATION, out);
	HIL_CHECK_EQ_GOTO(h, w.level, 1, out); /* the directory entry is empty */
	HIL_CHECK_EQ_GOTO(h, wr(&r, at, 64), 0, out);
	HIL_CHECK_GOTO(h, untouched(buf, 1, POISON), out);
	EXPECT_FAULT(&r, at, true, FR_WRITE, FR_SM_WRITE);
out:
	rig_down(&r);
}

/*
 * The control for the unmap checks: without the invalidation the unit
 * still uses the translation it cached, and edu's write reaches the page
 * that is no longer mapped.  (Then the planned invalidation, before the
 * gather frees anything.)
 */
static void unmap_without_invalidation_reaches_old_page(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_gather g;
	ik_u8 *buf;
	ik_u64 bus, x;

	if (!rig_up(h, arg, &r, 1))
		goto out;
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, PG, &x), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, bus, PG, IK_PROT_READ | IK_PROT_WRITE), 0,
			  out);
	fill_pages(buf, 1, SRC);
	HIL_CHECK_EQ_GOTO(h, rd(&r, x, 64), 0, out);
	fill_pages(buf, 1, POISON);
	HIL_CHECK_EQ_GOTO(h, unmap(&r, 0, x, PG, &g), (ik_s64)PG, out);
	HIL_CHECK_EQ_GOTO(h, walk(&r.s[0], x).fault, IK_PT_FAULT_TRANSLATION, out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + 1024, 64), 0, out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf + 1024, 64, SRC, 0), out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf, 1024, POISON, 0), out);
	hil_diag("QEMU 7.2: the write used the IOTLB's stale translation of the unmapped page");
	HIL_CHECK_EQ_GOTO(h, invalidate(&r, 0, &g, NULL), 0, out);
out:
	rig_down(&r);
}

/*
 * Page-selective means one page: two neighbouring pages cached, both
 * unmapped, only the first invalidated (AM = 0).  The first is blocked
 * (fault); the second is expected to keep its stale cached translation.
 * Invalidating more than asked is allowed by the specification, so if the
 * unit dropped the neighbour too the check says so instead of failing.
 */
static void psi_of_one_page_keeps_neighbour(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_gather g;
	struct ik_vtd_plan p;
	ik_u8 *buf;
	ik_u64 bus, x;

	if (!rig_up(h, arg, &r, 1))
		goto out;
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, 2 * PG, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, 2 * PG, &x), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, bus, 2 * PG, IK_PROT_READ | IK_PROT_WRITE),
			  0, out);
	fill_pages(buf, 2, SRC);
	HIL_CHECK_EQ_GOTO(h, rd(&r, x, 64), 0, out);
	HIL_CHECK_EQ_GOTO(h, rd(&r, x + PG, 64), 0, out); /* edu: page 1's bytes */
	fill_pages(buf, 2, POISON);
	HIL_CHECK_EQ_GOTO(h, unmap(&r, 0, x, 2 * PG, &g), (ik_s64)(2 * PG), out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_plan_range(ik_vtd_caps(r.u), ik_vtd_plan_flags(r.u), &r.s[0].t, x,
					       PG, false, &p), 0, out);
	HIL_CHECK_GOTO(h, plan_is_psi(&r, &p, x, 0, true), out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_plan_issue(r.u, &p), 0, out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x, 64), 0, out);
	HIL_CHECK_GOTO(h, untouched(buf, 2, POISON), out);
	EXPECT_FAULT(&r, x, true, FR_WRITE, FR_SM_WRITE);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + PG, 64), 0, out);
	if (untouched(buf + PG, 1, POISON + 1)) {
		/* dropped: then it faulted like the first page */
		hil_diag("QEMU 7.2 invalidated the neighbour too (allowed: the spec permits "
			 "invalidating more than asked)");
		EXPECT_FAULT(&r, x + PG, true, FR_WRITE, FR_SM_WRITE);
	} else {
		HIL_CHECK_GOTO(h, seed_at(&r, buf + PG, 64, SRC + 1, 0), out);
		HIL_CHECK_GOTO(h, seed_at(&r, buf + PG + 64, PG - 64, POISON + 1, 64), out);
		hil_diag("QEMU 7.2 kept the neighbour's cached translation: its PSI is exact");
	}
	HIL_CHECK_EQ_GOTO(h, invalidate(&r, 0, &g, NULL), 0, out);
out:
	rig_down(&r);
}

/*
 * A read-only mapping: edu's write is blocked (memory untouched, a write
 * fault for the page); its read works (edu then writes what it read to a
 * writable page).  A second write, which now hits the read-only IOTLB
 * entry, is blocked too; whether the unit records it is reported.
 */
static void read_only_mapping(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_vtd_fault f;
	ik_u8 *buf;
	ik_u64 bus, x, y;

	if (!rig_up(h, arg, &r, 1))
		goto out;
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, 2 * PG, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, PG, &x), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, PG, &y), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, bus, PG, IK_PROT_READ), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, y, bus + PG, PG, IK_PROT_READ | IK_PROT_WRITE),
			  0, out);
	HIL_CHECK_EQ_GOTO(h, walk(&r.s[0], x).prot & (IK_PROT_READ | IK_PROT_WRITE), IK_PROT_READ,
			  out);
	fill_pages(buf, 2, SRC);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x, 64), 0, out);
	HIL_CHECK_GOTO(h, untouched(buf, 1, SRC), out);
	EXPECT_FAULT(&r, x, true, FR_WRITE, FR_SM_WRITE);
	HIL_CHECK_EQ_GOTO(h, rd(&r, x + 512, 64), 0, out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, y, 64), 0, out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf + PG, 64, SRC, 512), out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf + PG + 64, PG - 64, SRC + 1, 64), out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x, 64), 0, out);
	HIL_CHECK_GOTO(h, untouched(buf, 1, SRC), out);
	if (ik_vtd_fault_pop(r.u, &f) == 0)
		show_fault("a write through the cached read-only translation: fault", &f);
	else
		hil_diag("QEMU 7.2: a write that hits a read-only IOTLB entry is blocked without "
			 "a fault record");
out:
	rig_down(&r);
}

/*
 * RW -> RO: the page is unmapped and mapped again read-only.  Until the
 * unmap's planned invalidation the unit may use the RW translation it
 * cached - QEMU does, and the write arrives; after it writes are blocked
 * with a write fault.
 */
static void rw_to_ro_downgrade(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_gather g;
	ik_u8 *buf;
	ik_u64 bus, x;

	if (!rig_up(h, arg, &r, 1))
		goto out;
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, PG, &x), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, bus, PG, IK_PROT_READ | IK_PROT_WRITE), 0,
			  out);
	fill_pages(buf, 1, SRC);
	HIL_CHECK_EQ_GOTO(h, rd(&r, x, 64), 0, out);
	fill_pages(buf, 1, POISON);
	HIL_CHECK_EQ_GOTO(h, unmap(&r, 0, x, PG, &g), (ik_s64)PG, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, bus, PG, IK_PROT_READ), 0, out);
	HIL_CHECK_EQ_GOTO(h, walk(&r.s[0], x).prot & (IK_PROT_READ | IK_PROT_WRITE), IK_PROT_READ,
			  out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + 256, 64), 0, out);
	HIL_CHECK_GOTO(h, seed_at(&r, buf + 256, 64, SRC, 0), out);
	hil_diag("QEMU 7.2: before the invalidation the write used the cached RW translation");
	fill_pages(buf, 1, POISON);
	HIL_CHECK_EQ_GOTO(h, invalidate(&r, 0, &g, NULL), 0, out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + 256, 64), 0, out);
	HIL_CHECK_GOTO(h, untouched(buf, 1, POISON), out);
	EXPECT_FAULT(&r, x, true, FR_WRITE, FR_SM_WRITE);
out:
	rig_down(&r);
}

/*
 * Switch edu from table set A (DID 1) to B (DID 2) - through its context
 * entry (pasid = false: ik_vtd_context_clear() + _set(); in scalable mode
 * they rewrite the RID_PASID entry too) or through the RID_PASID PASID entry
 * alone (pasid = true, scalable mode: ik_vtd_pasid_clear() + _set()).  A
 * and B map the same IOVAs X and Y to different pages.  Before the
 * invalidations ik_vtd_plan_change() plans for the two changes, X (cached
 * through A) still reaches A's page; Y (never used) shows whether the unit
 * cached the old entry too - the specification allows either, the check
 * reports which; after them X reaches B's page.
 */
static void switch_a_to_b(struct hil *h, const void *arg, bool pasid)
{
	struct rig r;
	struct ik_vtd_attach a;
	struct ik_vtd_change c1, c2;
	unsigned bus = h->rid >> 8, devfn = h->rid & 0xff;
	ik_u8 *pa, *pb;
	ik_u64 ba, bb, x;
	bool y_old;

	if (!rig_up(h, arg, &r, 2))
		goto out;
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, 2 * PG, &pa, &ba), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, 2 * PG, &pb, &bb), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, 2 * PG, &x), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, ba, 2 * PG, IK_PROT_READ | IK_PROT_WRITE),
			  0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[1].pt, x, bb, 2 * PG, IK_PROT_READ | IK_PROT_WRITE),
			  0, out);
	fill_pages(pa, 2, SRC);
	HIL_CHECK_EQ_GOTO(h, rd(&r, x, 64), 0, out); /* X cached through A */
	fill_pages(pa, 2, POISON);
	fill_pages(pb, 2, POISON2);
	IK_ENV_MEMSET(&a, 0, sizeof(a));
	a.pt = r.s[1].pt;
	a.did = r.s[1].t.did;
	if (pasid) {
		HIL_CHECK_EQ_GOTO(h, ik_vtd_pasid_clear(r.u, bus, devfn, 0, &c1), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_vtd_pasid_set(r.u, bus, devfn, 0, &a, &c2), 0, out);
		HIL_CHECK_EQ_GOTO(h, c1.kind, IK_VTD_CHANGE_PASID, out);
	} else {
		HIL_CHECK_EQ_GOTO(h, ik_vtd_context_clear(r.u, bus, devfn, &c1), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_vtd_context_set(r.u, bus, devfn, &a, &c2), 0, out);
		HIL_CHECK_EQ_GOTO(h, c1.kind, IK_VTD_CHANGE_CONTEXT, out);
	}
	r.attached = 1;
	HIL_CHECK_EQ_GOTO(h, c1.did, 1, out);
	HIL_CHECK_EQ_GOTO(h, c2.did, 2, out);
	HIL_CHECK_EQ_GOTO(h, c1.present, false, out);
	HIL_CHECK_EQ_GOTO(h, c2.present, true, out);
	/* before the invalidations */
	HIL_CHECK_EQ_GOTO(h, wr(&r, x, 64), 0, out);
	HIL_CHECK_GOTO(h, seed_at(&r, pa, 64, SRC, 0), out);
	HIL_CHECK_GOTO(h, untouched(pb, 2, POISON2), out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + PG + 128, 64), 0, out);
	y_old = !untouched(pa + PG, 1, POISON + 1);
	HIL_CHECK_GOTO(h, seed_at(&r, (y_old ? pa : pb) + PG + 128, 64, SRC, 0), out);
	HIL_CHECK_GOTO(h, untouched(y_old ? pb + PG : pa + PG, 1, y_old ? POISON2 + 1 : POISON + 1),
		       out);
	if (y_old)
		hil_diag("QEMU 7.2: an IOTLB miss before the invalidations still walked A: it "
			 "used its cached %s entry", r.m->sm ? "RID_PASID" : "context");
	else if (r.m->sm)
		hil_diag("QEMU 7.2: an IOTLB miss before the invalidations walked B: it reads the "
			 "PASID entry afresh (no PASID-entry cache: PASID-cache invalidations are "
			 "no-ops; the spec allows not caching)");
	else
		hil_diag("QEMU 7.2: an IOTLB miss before the invalidations walked B: it read the "
			 "context entry afresh (the spec allows not caching)");
	/* the invalidations of both changes, in order */
	HIL_CHECK_EQ_GOTO(h, plan_issue_change(&r, &c1), 0, out);
	HIL_CHECK_EQ_GOTO(h, plan_issue_change(&r, &c2), 0, out);
	fill_pages(pa, 1, POISON);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x + 256, 64), 0, out);
	HIL_CHECK_GOTO(h, seed_at(&r, pb + 256, 64, SRC, 0), out);
	HIL_CHECK_GOTO(h, seed_at(&r, pb, 256, POISON2, 0), out);
	HIL_CHECK_GOTO(h, untouched(pa, 1, POISON), out);
out:
	rig_down(&r);
}

static void context_switch_a_to_b(struct hil *h, const void *arg)
{
	switch_a_to_b(h, arg, false);
}

static void pasid_switch_a_to_b(struct hil *h, const void *arg)
{
	switch_a_to_b(h, arg, true);
}

/*
 * A descriptor the unit refuses (FSTS.IQE): its submitter gets -EIO and the
 * page-selective invalidation queued right behind it in the same call
 * still executes (edu's write to the page it invalidated is blocked); then
 * the queue runs on for more than two laps of the ring, refuses a second
 * bad descriptor the same way, and its waits complete.  (QEMU 7.2 fetches
 * again only when IQT is written; the repair's no-op, a wait with IF = 1, is
 * accepted.)
 */
static void bad_descriptor_then_queue_resumes(struct hil *h, const void *arg)
{
	/* an IOTLB invalidation with reserved bit 8 set */
	const ik_u64 bad0 = IK_VTD_DESC_IOTLB | ((ik_u64)IK_VTD_G_DOMAIN << 4) | (1ull << 8);
	struct rig r;
	struct ik_gather g;
	struct ik_vtd_desc d;
	ik_u64 w[8], bus, x;
	unsigned words;
	ik_u8 *buf;
	int i;

	if (!rig_up(h, arg, &r, 1))
		goto out;
	words = ik_vtd_desc_words(r.u);
	HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &buf, &bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, rig_iova(&r, PG, &x), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, x, bus, PG, IK_PROT_READ | IK_PROT_WRITE), 0,
			  out);
	fill_pages(buf, 1, SRC);
	HIL_CHECK_EQ_GOTO(h, rd(&r, x, 64), 0, out);
	fill_pages(buf, 1, POISON);
	HIL_CHECK_EQ_GOTO(h, unmap(&r, 0, x, PG, &g), (ik_s64)PG, out);
	/* [bad, PSI of x] in one call */
	IK_ENV_MEMSET(w, 0, sizeof(w));
	IK_ENV_MEMSET(&d, 0, sizeof(d));
	w[0] = bad0;
	d.type = IK_VTD_DESC_IOTLB;
	d.g = IK_VTD_G_PAGE;
	d.did = r.s[0].t.did;
	d.addr = x;
	d.dr = ik_vtd_caps(r.u)->drd;
	d.dw = ik_vtd_caps(r.u)->dwd;
	HIL_CHECK_EQ_GOTO(h, ik_vtd_desc_encode(&d, &w[words], words), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_cmdq_issue(ik_vtd_queue(r.u), w, 2, IK_CMDQ_SYNC), -EIO, out);
	HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(&h->iommu, IK_VTD_REG_FSTS) & IK_VTD_FSTS_IQE, 0, out);
	HIL_CHECK_EQ_GOTO(h, wr(&r, x, 64), 0, out);
	HIL_CHECK_GOTO(h, untouched(buf, 1, POISON), out);
	EXPECT_FAULT(&r, x, true, FR_WRITE, FR_SM_WRITE);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(r.s[0].pt, &g), 0, out);
	IK_ENV_MEMSET(&d, 0, sizeof(d));
	d.type = IK_VTD_DESC_IOTLB;
	d.g = IK_VTD_G_DOMAIN;
	d.did = r.s[0].t.did;
	for (i = 0; i < 600; i++) /* more than two laps of the ring */
		HIL_CHECK_EQ_GOTO(h, ik_vtd_issue(r.u, &d, 1, true), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_cmdq_issue(ik_vtd_queue(r.u), w, 1, IK_CMDQ_SYNC), -EIO, out);
	HIL_CHECK_EQ_GOTO(h, ik_vtd_issue(r.u, &d, 1, true), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_cmdq_sync(ik_vtd_queue(r.u)), 0, out);
out:
	rig_down(&r);
}

static const struct hil_check checks[] = {
	/* legacy mode (RTADDR.TTM = 00b) */
	{ "vtd_bringup_and_teardown", bringup_and_teardown, &legacy, HIL_NEEDS_IOMMU },
	{ "vtd_dma_through_every_sagaw_depth", dma_through_every_sagaw_depth, &legacy,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_dma_4k_both_directions", dma_4k_both_directions, &legacy,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_dma_map_sg_scattered_pages", dma_map_sg_scattered_pages, &legacy,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_dma_2m_superpage", dma_2m_superpage, &legacy, HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_dma_1g_superpage", dma_1g_superpage, &legacy, HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_unmap_4k_then_planned_psi_blocks", unmap_4k_then_planned_psi_blocks, &legacy,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_unmap_64k_then_planned_psi_blocks", unmap_64k_then_planned_psi_blocks, &legacy,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_unmap_hole_in_2m_superpage", unmap_hole_in_2m_superpage, &legacy,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_unmap_whole_2m_table", unmap_whole_2m_table, &legacy,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_unmap_without_invalidation_reaches_old_page",
	  unmap_without_invalidation_reaches_old_page, &legacy, HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_psi_of_one_page_keeps_neighbour", psi_of_one_page_keeps_neighbour, &legacy,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_read_only_mapping", read_only_mapping, &legacy, HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_rw_to_ro_downgrade", rw_to_ro_downgrade, &legacy, HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_context_switch_a_to_b", context_switch_a_to_b, &legacy,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_bad_descriptor_then_queue_resumes", bad_descriptor_then_queue_resumes, &legacy,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	/* scalable mode (TTM = 01b): second-level tables through the RID_PASID
	 * entry, PGTT = 010b */
	{ "vtd_sm_bringup_and_teardown", bringup_and_teardown, &scalable, HIL_NEEDS_IOMMU },
	{ "vtd_sm_dma_through_every_sagaw_depth", dma_through_every_sagaw_depth, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_dma_4k_both_directions", dma_4k_both_directions, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_first_level_dma_4k_both_directions", dma_4k_both_directions, &scalable_fl,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_dma_map_sg_scattered_pages", dma_map_sg_scattered_pages, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_dma_2m_superpage", dma_2m_superpage, &scalable, HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_dma_1g_superpage", dma_1g_superpage, &scalable, HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_unmap_4k_then_planned_psi_blocks", unmap_4k_then_planned_psi_blocks, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_unmap_64k_then_planned_psi_blocks", unmap_64k_then_planned_psi_blocks, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_unmap_hole_in_2m_superpage", unmap_hole_in_2m_superpage, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_unmap_whole_2m_table", unmap_whole_2m_table, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_unmap_without_invalidation_reaches_old_page",
	  unmap_without_invalidation_reaches_old_page, &scalable, HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_psi_of_one_page_keeps_neighbour", psi_of_one_page_keeps_neighbour, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_read_only_mapping", read_only_mapping, &scalable, HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_rw_to_ro_downgrade", rw_to_ro_downgrade, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_context_switch_a_to_b", context_switch_a_to_b, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_pasid_switch_a_to_b", pasid_switch_a_to_b, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
	{ "vtd_sm_bad_descriptor_then_queue_resumes", bad_descriptor_then_queue_resumes, &scalable,
	  HIL_NEEDS_EDU | HIL_NEEDS_IOMMU },
};

const struct hil_suite hil_suite_vtd = HIL_SUITE_FOR(HIL_IOMMU_VTD, "vtd", checks);
