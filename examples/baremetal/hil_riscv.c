/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The RISC-V IOMMU checks of the hardware-in-the-loop harness (hil.h,
 * docs/hil.md): iommukit's RISC-V driver core (<iommukit/drv/riscv.h>) on
 * QEMU 10.0.2's riscv-iommu-pci (rv64 virt, -device riscv-iommu-pci), with
 * edu as the DMA master.  docs/riscv-bringup.md walks through the same code.
 *
 * The IOMMU is programmed through iommukit only: ik_riscv_create() /
 * _enable() bring up the command queue (an ik_cmdq of ik_cmdq_fmt_riscv),
 * the fault queue and the page-request queue; the device directory is an
 * ik_riscv_ddt (two levels, the context format capabilities.MSI_FLAT
 * says) selected with ik_riscv_set_ddtp(); first-stage tables are
 * ik_pgtables of IK_PT_RISCV_S1 (Sv39/48/57), G-stage tables of
 * IK_PT_RISCV_S2 (Sv39x4/48x4), their pages from the harness's DMA memory;
 * edu's device context (DID = its requester ID) is built with
 * ik_riscv_dc_build() and written with ik_riscv_ddt_write(), which issues
 * its own invalidations; every other invalidation is planned by
 * ik_riscv_plan_*() and issued on the queue; fault records are read with
 * ik_riscv_fault_pop().
 *
 * Each behaviour is one check (one TAP line): bring-up and teardown twice;
 * 4 KiB DMA both ways through Sv39, Sv48 and Sv57 first stages, 2 MiB and
 * 1 GiB leaves, Sv39x4 and Sv48x4 G-stages, a first stage nested over a
 * G-stage; the top page of the input range; a read-only page (the write
 * blocked and recorded); unmap + planned invalidation; fault records
 * decoded; an illegal command and the queue's recovery; IODIR on a device
 * context change; and the departures below, one check each.
 *
 * Where QEMU 10.0.2 departs from the RISC-V IOMMU specification v1.0 the
 * check asserts what QEMU does, names the departure in its TAP description
 * ("QEMU 10.0.2 departs: ...") and prints it as "# QEMU 10.0.2 departs from
 * the spec: ..."; tests/test_drv_riscv.c (a register model and the soft
 * IOMMU) checks the specified behaviour instead:
 *   - IOTINVAL with AV = 1 drops only the 4 KiB entry at ADDR: a 2 MiB or
 *     1 GiB leaf used at another page of it stays cached;
 *   - iotval2 is 0 for guest-page faults (the specification: the GPA);
 *   - a translation fault on a read records TTYP 3 (untranslated write), a
 *     "DDT entry not valid" on a write TTYP 2 (read), and PV is 1 for
 *     requests without a PASID;
 *   - a write to a read-only page whose translation an earlier read cached
 *     is blocked but not recorded;
 *   - "DDT entry not valid" records iotval 0;
 *   - the PTE U bit is never checked (an unprivileged request reaches a
 *     page without U);
 *   - reserved command bits are ignored (no cmd_ill);
 *   - SADE = 1 is accepted without capabilities.AMO_HWAD;
 *   - clearing cqcsr.cmd_ill does not restart the queue, only the next cqt
 *     write does (shown on a queue programmed by hand: the core's error
 *     acknowledgement writes cqt again, so the recovery check passes on
 *     QEMU and on the specification's IOMMU alike).
 */
#include <iommukit/env.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/riscv.h>
#include <iommukit/cmd/riscv.h>
#include <iommukit/drv/riscv.h>
#include "hil.h"
#include "ik_env_baremetal.h"

#define PG 4096ull
#define SZ_2M (1ull << 21)
#define SZ_1G (1ull << 30)

/* Seeds of hil_fill(): SRC for what edu reads, POISON for memory no DMA may
 * reach. */
#define SRC 0x5200u
#define POISON 0xc900u
#define POISON2 0xca00u

/* IOVAs and guest-physical addresses: below 2^38, so that Sv39 reaches them. */
#define IOVA_4K 0x10000000ull	/* 256 MiB */
#define IOVA_2M 0x20000000ull	/* 512 MiB */
#define IOVA_1G 0x40000000ull	/* 1 GiB */
#define GPA_DATA 0x100000000ull	/* 4 GiB: where the nested first stage points */
#define RAM_BASE 0x80000000ull	/* the machine's RAM: 1 GiB identity in a G-stage */

#define PSCID0 0x123u		/* PSCIDs of set 0 and 1 */
#define PSCID1 0x456u
#define GSCID0 0x21u		/* GSCID of a G-stage */

#define RIG_SETS 3
#define MAX_FAULTS 16

static const char dep[] = "QEMU 10.0.2 departs from the spec";

struct rig;

struct rig_set {
	struct rig *r;
	struct ik_pgtable *pt;
	struct ik_riscv_target t;	/* the planner's view */
	unsigned mode;		/* its atp MODE */
};

struct rig {
	struct hil *h;
	struct ik_riscv *u;
	const struct ik_riscv_caps *caps;
	struct ik_riscv_ddt ddt;
	bool ddt_live;
	bool attached;		/* edu's context is valid */
	struct rig_set s[RIG_SETS];
	struct hil_bufs bufs;	/* the check's DMA buffers */
	unsigned dmas;
	int hook_err;
	long live;
	struct ik_riscv_fault f[MAX_FAULTS];	/* the last drain's records */
	unsigned nf;
};

static void departs(const char *what)
{
	hil_diag("%s: %s", dep, what);
}

static void hook_error(struct rig *r, int err)
{
	if (err && !r->hook_err)
		r->hook_err = err;
}

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

/* A map replaced an empty table by a leaf: AV = 0 of the tag. */
static void pt_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	struct rig_set *s = (struct rig_set *)cookie;
	struct ik_riscv_plan p;
	int err;

	(void)granule;
	err = ik_riscv_plan_range(&s->t, iova, size, true, &p);
	if (!err)
		err = ik_riscv_plan_issue(ik_riscv_queue(s->r->u), &p);
	hook_error(s->r, err);
}

static const struct ik_pgtable_hooks pt_hooks = {
	pt_alloc, pt_free, NULL, NULL, pt_flush_walk, NULL, NULL, NULL,
};

/*
 * Table set i: fmt (IK_PT_RISCV_S1 or _S2) over ias bits; its planner
 * target: PSCID pscid (S1), GSCID gscid (S2, or S1 under a G-stage: gv).
 * -EOPNOTSUPP: the capabilities lack the mode.
 */
static int rig_set_new(struct rig *r, unsigned i, enum ik_pt_fmt fmt, ik_u32 ias, ik_u32 pscid,
		       ik_u32 gscid, bool gv)
{
	struct rig_set *s = &r->s[i];
	struct ik_pgtable_cfg pc;
	ik_u64 atp;
	int err;

	IK_ENV_MEMSET(&pc, 0, sizeof(pc));
	pc.fmt = fmt;
	pc.ias = ias;
	pc.oas = r->caps->pas < 56 ? r->caps->pas : 56;
	pc.pgsize_bitmap = PG | SZ_2M | SZ_1G;
	pc.coherent = true;	/* QEMU's IOMMU reads what the hart wrote */
	pc.hooks = &pt_hooks;
	pc.cookie = s;
	s->r = r;
	err = ik_pgtable_create(&pc, &s->pt);
	if (err)
		return err;
	err = ik_riscv_get_atp(s->pt, 0, &atp);
	if (err)
		return err;
	s->mode = (unsigned)(atp >> IK_RISCV_ATP_MODE_SHIFT);
	if (fmt == IK_PT_RISCV_S1 ? !((s->mode == 8 && r->caps->sv39) ||
				      (s->mode == 9 && r->caps->sv48) ||
				      (s->mode == 10 && r->caps->sv57))
	    : !((s->mode == 8 && r->caps->sv39x4) || (s->mode == 9 && r->caps->sv48x4) ||
		(s->mode == 10 && r->caps->sv57x4)))
		return -EOPNOTSUPP;
	s->t.pt = s->pt;
	s->t.pscid = fmt == IK_PT_RISCV_S1 ? pscid : 0;
	s->t.gscid = fmt == IK_PT_RISCV_S2 || gv ? gscid : 0;
	s->t.flags = gv ? IK_RISCV_TARGET_GV : 0;
	return 0;
}

/* Write dc as edu's device context, with the invalidations its change needs
 * (fn NULL: none issued; *chg says what they would have been). */
static int rig_write_dc(struct rig *r, const ik_u64 *dc, ik_riscv_issue_fn fn,
			struct ik_riscv_change *chg)
{
	struct ik_riscv_change c;
	int err;

	err = ik_riscv_ddt_write(&r->ddt, r->h->rid, dc, fn, fn ? ik_riscv_queue(r->u) : NULL,
				 chg ? chg : &c);
	if (!err)
		r->attached = (dc[0] & IK_RISCV_TC_V) != 0;
	return err;
}

/* edu's device context: first stage s1 (-1: none, Bare), G-stage s2 (-1:
 * Bare); tags from the sets' targets. */
static int rig_attach(struct rig *r, int s1, int s2, ik_riscv_issue_fn fn,
		      struct ik_riscv_change *chg)
{
	struct ik_riscv_dc_config c;
	ik_u64 dc[8];
	int err;

	IK_ENV_MEMSET(&c, 0, sizeof(c));
	IK_ENV_MEMSET(dc, 0, sizeof(dc));
	c.extended = r->caps->msi_flat;
	if (s1 >= 0) {
		c.s1 = r->s[s1].pt;
		c.pscid = r->s[s1].t.pscid;
	}
	if (s2 >= 0) {
		c.s2 = r->s[s2].pt;
		c.gscid = r->s[s2].t.gscid;
	}
	err = ik_riscv_dc_build(r->caps, &c, dc);
	if (!err)
		err = rig_write_dc(r, dc, fn, chg);
	return err;
}

/* Every fault record in the queue, the first one printed (and a count of
 * the others); the first MAX_FAULTS kept in r->f[0..r->nf).  Returns the
 * number read, or a negative errno. */
static int drain_faults(struct rig *r)
{
	struct ik_riscv_fault f;
	ik_u64 raw[4];
	unsigned n = 0, bad = 0;
	int err;

	r->nf = 0;
	while (n < 256 && ((err = ik_riscv_fault_pop(r->u, &f, raw)) == 0 || err == -EIO)) {
		n++;
		if (err) {
			if (!bad++)
				hil_diag("fault record that does not decode: %#llx %#llx %#llx %#llx",
					 (unsigned long long)raw[0], (unsigned long long)raw[1],
					 (unsigned long long)raw[2], (unsigned long long)raw[3]);
			continue;
		}
		if (!r->nf)
			hil_diag("fault: cause %u (%s) ttyp %u did %#x pv %u pid %u priv %u "
				 "iotval %#llx iotval2 %#llx", f.cause,
				 ik_riscv_fault_cause_name(f.cause) ?
				 ik_riscv_fault_cause_name(f.cause) : "?", f.ttyp, f.did, f.pv, f.pid,
				 f.priv, (unsigned long long)f.iotval, (unsigned long long)f.iotval2);
		if (r->nf < MAX_FAULTS)
			r->f[r->nf++] = f;
	}
	if (n > 1)
		hil_diag("  and %u more record(s), %u not decodable", n - 1, bad);
	if (err != -ENOENT)
		return err;
	return bad ? -EIO : (int)n;
}

static void rig_init(struct hil *h, struct rig *r)
{
	IK_ENV_MEMSET(r, 0, sizeof(*r));
	r->h = h;
	r->live = bm_pool_live();
}

/* The driver object, enabled, with an empty two-level device directory in
 * ddtp.  false: the check ends here (failure recorded); call rig_down()
 * either way. */
static bool rig_up(struct hil *h, struct rig *r)
{
	struct ik_riscv_config c;
	struct ik_riscv_ddt_config dc;

	rig_init(h, r);
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.mmio = &h->iommu;
	c.dma = &h->dma;
#define UP_EQ(got, want)                                                                    \
	do {                                                                                \
		ik_u64 g_ = (ik_u64)(got), w_ = (ik_u64)(want);                             \
		if (g_ != w_) {                                                             \
			hil_fail_values(h, HIL_FILE, __LINE__, #got " == " #want, g_, w_);  \
			return false;                                                       \
		}                                                                           \
	} while (0)
	UP_EQ(ik_riscv_create(&c, &r->u), 0);
	r->caps = ik_riscv_get_caps(r->u);
	UP_EQ(ik_riscv_enable(r->u), 0);
	IK_ENV_MEMSET(&dc, 0, sizeof(dc));
	dc.dma = &h->dma;
	dc.caps = r->caps;
	dc.levels = 2;
	dc.extended = r->caps->msi_flat;
	UP_EQ(ik_riscv_ddt_init(&r->ddt, &dc), 0);
	r->ddt_live = true;
	UP_EQ(ik_riscv_set_ddtp(r->u, ik_riscv_ddt_reg(&r->ddt)), 0);
#undef UP_EQ
	return true;
}

/* Detach edu (invalid context, its flushes), ddtp back to Bare (hil.h: DMA
 * untranslated between checks), queues off, everything freed. */
static void rig_down(struct rig *r)
{
	struct hil *h = r->h;
	ik_u64 zero[8] = { 0 };
	unsigned i;
	int detach = 0, bare = 0, left = 0;

	if (r->u) {
		if (r->attached && ik_riscv_queue(r->u))
			detach = rig_write_dc(r, zero, ik_riscv_issue_cmdq, NULL);
		if (ik_riscv_queue(r->u)) {
			left = drain_faults(r);
			if (left > 0)
				hil_diag("%d fault record(s) left at teardown", left);
			left = left < 0 ? left : 0;
		}
		bare = ik_riscv_set_ddtp(r->u, IK_RISCV_DDTP_MODE_BARE);
		if (!bare && ik_riscv_queue(r->u)) {
			struct ik_riscv_change c;
			struct ik_riscv_plan p;

			/* the new ddtp: every cached context goes */
			IK_ENV_MEMSET(&c, 0, sizeof(c));
			c.kind = IK_RISCV_CHANGE_DC;
			bare = ik_riscv_plan_change(&c, &p);
			if (!bare) {
				p.c[0].dv = 0;
				p.c[0].did = 0;
				bare = ik_riscv_plan_issue(ik_riscv_queue(r->u), &p);
			}
		}
		ik_riscv_destroy(r->u);
	}
	if (r->ddt_live)
		ik_riscv_ddt_fini(&r->ddt);
	for (i = 0; i < RIG_SETS; i++)
		ik_pgtable_destroy(r->s[i].pt);
	hil_bufs_free(&r->bufs, &h->dma);
	if (r->dmas)
		hil_diag("%u edu DMAs", r->dmas);
	HIL_CHECK_EQ(h, detach, 0);
	HIL_CHECK_EQ(h, left, 0);
	HIL_CHECK_EQ(h, bare, 0);
	HIL_CHECK_EQ(h, r->hook_err, 0);
	HIL_CHECK_EQ(h, ik_mmio_read64(&h->iommu, IK_RISCV_REG_DDTP), IK_RISCV_DDTP_MODE_BARE);
	HIL_CHECK_EQ(h, ik_mmio_read32(&h->iommu, IK_RISCV_REG_CQCSR) & IK_RISCV_QCSR_ON, 0);
	HIL_CHECK_EQ(h, bm_pool_live(), r->live);
}

static int rig_buf(struct rig *r, ik_size size, ik_u8 **cpu, ik_u64 *bus)
{
	return hil_bufs_alloc(&r->bufs, &r->h->dma, size, cpu, bus);
}

/* edu reads [bus, bus + len) into its buffer at 0 / writes its buffer's
 * [0, len) to bus. */
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

/* A DMA round trip through iova -> page: edu reads the page (SRC) at iova
 * and writes it back to iova + 2048; the second half must then hold the
 * first's bytes. */
static bool round_trip(struct rig *r, ik_u8 *page, ik_u64 iova)
{
	return hil_edu_round_trip(&r->h->edu, page, iova, SRC, r->h->timeout_ns, &r->dmas);
}

/* Unmap [iova, iova + size) of set s, plan its invalidation, issue it,
 * sync the gather. */
static int unmap_inv(struct rig *r, unsigned s, ik_u64 iova, ik_u64 size)
{
	struct ik_gather g;
	struct ik_riscv_plan p;
	ik_s64 n;
	int err;

	ik_gather_init(&g);
	n = ik_pgtable_unmap(r->s[s].pt, iova, size, &g);
	if (n != (ik_s64)size)
		return n < 0 ? (int)n : -EIO;
	err = ik_riscv_plan_unmap(&r->s[s].t, &g, &p);
	if (!err)
		err = ik_riscv_plan_issue(ik_riscv_queue(r->u), &p);
	if (!err)
		err = ik_pgtable_gather_sync(r->s[s].pt, &g);
	return err;
}

/*
 * The records one faulting DMA left: QEMU's edu transfer reaches the IOMMU
 * in 4-byte accesses, and each faulting access is one record, so a DMA of
 * n bytes leaves n / 4 of them.  True when there is at least one, every one
 * has `cause` and edu's DID, and the first one's iotval is `iotval`;
 * the failure is recorded otherwise.
 */
static bool faults_of_one_dma(struct hil *h, struct rig *r, unsigned cause, ik_u64 iotval)
{
	int n = drain_faults(r);
	unsigned i;

	if (n < 1) {
		hil_fail_values(h, HIL_FILE, __LINE__, "fault records after the DMA >= 1",
				(ik_u64)(ik_s64)n, 1);
		return false;
	}
	for (i = 0; i < r->nf; i++) {
		if (r->f[i].cause != cause || r->f[i].did != r->h->rid) {
			hil_fail_values(h, HIL_FILE, __LINE__, "every record's cause is the "
					"expected one", r->f[i].cause, cause);
			return false;
		}
	}
	if (r->f[0].iotval != iotval) {
		hil_fail_values(h, HIL_FILE, __LINE__, "the first record's iotval", r->f[0].iotval,
				iotval);
		return false;
	}
	hil_diag("%d record(s) of cause %u for the DMA", n, cause);
	return true;
}

/* The one fault record of the last drain with this cause, or NULL. */
static const struct ik_riscv_fault *fault_with(const struct rig *r, unsigned cause)
{
	unsigned i;

	for (i = 0; i < r->nf; i++)
		if (r->f[i].cause == cause)
			return &r->f[i];
	return NULL;
}

/* ---------------------------------------------------------------- checks */

static void bringup_and_teardown_twice(struct hil *h, const void *arg)
{
	struct ik_riscv_config c;
	struct ik_riscv_ddt_config dc;
	struct ik_riscv_ddt ddt;
	struct ik_riscv *u = NULL;
	struct ik_riscv_fault f;
	long live = bm_pool_live();
	bool ddt_live = false;
	int k;

	(void)arg;
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.mmio = &h->iommu;
	c.dma = &h->dma;
	for (k = 0; k < 2; k++) {
		const struct ik_riscv_caps *caps;
		ik_u32 cq, fq;

		HIL_CHECK_EQ(h, ik_riscv_create(&c, &u), 0);
		caps = ik_riscv_get_caps(u);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_enable(u), 0, out);
		cq = ik_mmio_read32(&h->iommu, IK_RISCV_REG_CQCSR);
		fq = ik_mmio_read32(&h->iommu, IK_RISCV_REG_FQCSR);
		hil_diag("enabled: cqcsr %#x fqcsr %#x pqcsr %#x cqb %#llx fqb %#llx", cq, fq,
			 ik_mmio_read32(&h->iommu, IK_RISCV_REG_PQCSR),
			 (unsigned long long)ik_mmio_read64(&h->iommu, IK_RISCV_REG_CQB),
			 (unsigned long long)ik_mmio_read64(&h->iommu, IK_RISCV_REG_FQB));
		HIL_CHECK_GOTO(h, cq & IK_RISCV_QCSR_ON, out);
		HIL_CHECK_GOTO(h, fq & IK_RISCV_QCSR_ON, out);
		HIL_CHECK_EQ_GOTO(h, cq & (IK_RISCV_CQCSR_CMD_ILL | IK_RISCV_QCSR_MF), 0, out);
		HIL_CHECK_GOTO(h, !caps->ats || (ik_mmio_read32(&h->iommu, IK_RISCV_REG_PQCSR) &
						 IK_RISCV_QCSR_ON), out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_enable(u), -EBUSY, out);
		/* a directory in ddtp, read back, and Bare again */
		IK_ENV_MEMSET(&dc, 0, sizeof(dc));
		dc.dma = &h->dma;
		dc.caps = caps;
		dc.levels = 3;
		dc.extended = caps->msi_flat;
		HIL_CHECK_EQ_GOTO(h, ik_riscv_ddt_init(&ddt, &dc), 0, out);
		ddt_live = true;
		HIL_CHECK_EQ_GOTO(h, ik_riscv_set_ddtp(u, ik_riscv_ddt_reg(&ddt)), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_mmio_read64(&h->iommu, IK_RISCV_REG_DDTP),
				  ik_riscv_ddt_reg(&ddt), out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_set_ddtp(u, IK_RISCV_DDTP_MODE_BARE), 0, out);
		ik_riscv_ddt_fini(&ddt);
		ddt_live = false;
		/* 20 fences on the running queue; no fault */
		for (int i = 0; i < 20; i++)
			HIL_CHECK_EQ_GOTO(h, ik_cmdq_issue(ik_riscv_queue(u), NULL, 0, IK_CMDQ_SYNC),
					  0, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_fault_pop(u, &f, NULL), -ENOENT, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_disable(u), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(&h->iommu, IK_RISCV_REG_CQCSR) &
					     (IK_RISCV_QCSR_ON | IK_RISCV_QCSR_EN), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(&h->iommu, IK_RISCV_REG_FQCSR) &
					     (IK_RISCV_QCSR_ON | IK_RISCV_QCSR_EN), 0, out);
		ik_riscv_destroy(u);
		u = NULL;
	}
out:
	if (ddt_live) {
		ik_riscv_set_ddtp(u, IK_RISCV_DDTP_MODE_BARE);
		ik_riscv_ddt_fini(&ddt);
	}
	ik_riscv_destroy(u);
	HIL_CHECK_EQ(h, bm_pool_live(), live);
}

/* 4 KiB pages, both directions, through a first stage of ias bits (38:
 * Sv39, 47: Sv48, 56: Sv57); the device context read back and decoded. */
static void dma_4k_s1(struct hil *h, const void *arg)
{
	ik_u32 ias = *(const ik_u32 *)arg;
	struct rig r;
	struct ik_riscv_dc d;
	ik_u64 dc[8], bus;
	ik_u8 *page;
	int err;

	if (rig_up(h, &r)) {
		err = rig_set_new(&r, 0, IK_PT_RISCV_S1, ias, PSCID0, 0, false);
		if (err == -EOPNOTSUPP) {
			rig_down(&r);
			HIL_SKIP(h, "the capabilities lack the mode");
		}
		HIL_CHECK_EQ_GOTO(h, err, 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, -1, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_ddt_read(&r.ddt, h->rid, dc), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_dc_decode(r.caps, dc, r.caps->msi_flat, &d), 0, out);
		hil_diag("device context of %#x: tc %#llx fsc mode %u root %#llx PSCID %#x "
			 "iohgatp mode %u (%s format)", h->rid, (unsigned long long)d.tc,
			 d.fsc_mode, (unsigned long long)d.fsc_root, d.pscid, d.iohgatp_mode,
			 r.caps->msi_flat ? "extended" : "base");
		HIL_CHECK_GOTO(h, d.v, out);
		HIL_CHECK_EQ_GOTO(h, d.fsc_mode, ias <= 38 ? 8 : ias <= 47 ? 9 : 10, out);
		HIL_CHECK_EQ_GOTO(h, d.pscid, PSCID0, out);
		HIL_CHECK_EQ_GOTO(h, d.iohgatp_mode, 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);
		/* the untranslated address reaches nothing now */
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, bus, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_WRITE_PAGE, bus), out);
	}
out:
	rig_down(&r);
}

/* A page of a two-page buffer whose offset in a `size` block is not 0. */
static void page_off_block(ik_u8 *buf, ik_u64 bus, ik_u64 size, ik_u8 **page, ik_u64 *pbus)
{
	if (bus & (size - 1)) {
		*page = buf;
		*pbus = bus;
	} else {
		*page = buf + PG;
		*pbus = bus + PG;
	}
}

/* A 2 MiB or 1 GiB first-stage leaf: IOVA (aligned) -> the aligned block
 * holding the buffer; the DMA goes to a page of it other than the first.
 * The planner's unmap is IOTINVAL AV = 1 at the leaf's IOVA, which by the
 * specification drops the leaf whatever page of it was used; QEMU keeps
 * the cached 4 KiB entry of the page used, so the DMA still lands until
 * an AV = 0 invalidation. */
static void dma_superpage(struct hil *h, const void *arg)
{
	ik_u64 size = *(const ik_u64 *)arg, iova = size == SZ_1G ? IOVA_1G : IOVA_2M;
	struct rig r;
	struct ik_pgtable_info info;
	struct ik_riscv_plan p;
	struct ik_gather g;
	ik_u64 bus, pa, pbus;
	ik_u8 *buf, *page;

	if (rig_up(h, &r)) {
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 0, IK_PT_RISCV_S1, 38, PSCID0, 0, false), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, -1, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, 2 * PG, &buf, &bus), 0, out);
		page_off_block(buf, bus, size, &page, &pbus);
		ik_pgtable_get_info(r.s[0].pt, &info);
		HIL_CHECK_GOTO(h, info.geom.pgsize_bitmap & size, out);
		pa = pbus & ~(size - 1);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map_pages(r.s[0].pt, iova, pa, size, 1,
							  IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, iova + (pbus - pa)), out);
		/* the planned unmap: one IOTINVAL.VMA AV = 1 at the leaf */
		ik_gather_init(&g);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(r.s[0].pt, iova, size, &g), (ik_s64)size, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_plan_unmap(&r.s[0].t, &g, &p), 0, out);
		HIL_CHECK_EQ_GOTO(h, p.n, 1, out);
		HIL_CHECK_EQ_GOTO(h, p.c[0].av, 1, out);
		HIL_CHECK_EQ_GOTO(h, p.c[0].addr, iova, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_plan_issue(ik_riscv_queue(r.u), &p), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(r.s[0].pt, &g), 0, out);
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, iova + (pbus - pa), 64), 0, out);
		/* the spec: blocked (the leaf is gone).  QEMU: the stale 4 KiB entry. */
		HIL_CHECK_GOTO(h, hil_verify(page, 64, POISON) != 64, out);
		departs("IOTINVAL.VMA with AV = 1 drops only the 4 KiB entry at ADDR: the "
			"superpage leaf used at another page stays cached");
		/* AV = 0 of the PSCID (ik_riscv_plan_range(walk = true)): gone */
		HIL_CHECK_EQ_GOTO(h, ik_riscv_plan_range(&r.s[0].t, iova, size, true, &p), 0, out);
		HIL_CHECK_EQ_GOTO(h, p.c[0].av, 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_plan_issue(ik_riscv_queue(r.u), &p), 0, out);
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, iova + (pbus - pa), 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_WRITE_PAGE,
						    iova + (pbus - pa)), out);
	}
out:
	rig_down(&r);
}

/* A G-stage only (fsc Bare): GPA = the device's address, 4 KiB pages,
 * both ways, through Sv39x4 (ias 41) or Sv48x4 (ias 50). */
static void dma_s2(struct hil *h, const void *arg)
{
	ik_u32 ias = *(const ik_u32 *)arg;
	struct rig r;
	struct ik_riscv_dc d;
	ik_u64 dc[8], bus;
	ik_u8 *page;
	int err;

	if (rig_up(h, &r)) {
		err = rig_set_new(&r, 0, IK_PT_RISCV_S2, ias, 0, GSCID0, false);
		if (err == -EOPNOTSUPP) {
			rig_down(&r);
			HIL_SKIP(h, "the capabilities lack the mode");
		}
		HIL_CHECK_EQ_GOTO(h, err, 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, -1, 0, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_ddt_read(&r.ddt, h->rid, dc), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_dc_decode(r.caps, dc, r.caps->msi_flat, &d), 0, out);
		HIL_CHECK_EQ_GOTO(h, d.iohgatp_mode, ias <= 41 ? 8 : 9, out);
		HIL_CHECK_EQ_GOTO(h, d.gscid, GSCID0, out);
		HIL_CHECK_EQ_GOTO(h, d.fsc_mode, 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);
		HIL_CHECK_EQ_GOTO(h, unmap_inv(&r, 0, IOVA_4K, PG), 0, out);
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		/* a guest-page fault: the spec records the GPA in iotval2
		 * (bits 63:2); QEMU records 0 */
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_WRITE_GUEST_PAGE, IOVA_4K),
			       out);
		HIL_CHECK_GOTO(h, r.f[0].guest_page_fault, out);
		HIL_CHECK_EQ_GOTO(h, r.f[0].iotval2, 0, out);
		departs("iotval2 is 0 for a guest-page fault (the spec: the faulting "
			"guest-physical address, bits 63:2)");
	}
out:
	rig_down(&r);
}

/* A first stage nested over a G-stage: the first stage maps IOVA -> GPA
 * GPA_DATA, the G-stage GPA_DATA -> the page and RAM (where the first
 * stage's own tables lie) 1:1 with a 1 GiB leaf. */
static void nested_s1_over_s2(struct hil *h, const void *arg)
{
	struct rig r;
	ik_u64 bus;
	ik_u8 *page;

	(void)arg;
	if (rig_up(h, &r)) {
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 1, IK_PT_RISCV_S2, 41, 0, GSCID0, false), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 0, IK_PT_RISCV_S1, 38, PSCID0, GSCID0, true),
				  0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map_pages(r.s[1].pt, RAM_BASE, RAM_BASE, SZ_1G, 1,
							  IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[1].pt, GPA_DATA, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, GPA_DATA, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, 1, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);
		/* the GPA is not an IOVA of the first stage */
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, GPA_DATA, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_WRITE_PAGE, GPA_DATA), out);
		/* the first stage's unmap under the G-stage (GV = 1): blocked */
		HIL_CHECK_EQ_GOTO(h, round_trip(&r, page, IOVA_4K), 1, out);
		HIL_CHECK_EQ_GOTO(h, unmap_inv(&r, 0, IOVA_4K, PG), 0, out);
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_WRITE_PAGE, IOVA_4K), out);
	}
out:
	rig_down(&r);
}

/* The top page of Sv39's input range (ias 38: the lower half of the
 * sign-extended 39-bit space) and of Sv48's (47). */
static void top_page(struct hil *h, const void *arg)
{
	ik_u32 ias = *(const ik_u32 *)arg;
	ik_u64 top = (1ull << ias) - PG;
	struct rig r;
	ik_u64 bus;
	ik_u8 *page;
	int err;

	if (rig_up(h, &r)) {
		err = rig_set_new(&r, 0, IK_PT_RISCV_S1, ias, PSCID0, 0, false);
		if (err == -EOPNOTSUPP) {
			rig_down(&r);
			HIL_SKIP(h, "the capabilities lack the mode");
		}
		HIL_CHECK_EQ_GOTO(h, err, 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, -1, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, top, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		/* one page further is outside the table set */
		HIL_CHECK_GOTO(h, ik_pgtable_map(r.s[0].pt, top + PG, bus, PG, IK_PROT_READ) < 0,
			       out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, top), out);
		HIL_CHECK_EQ_GOTO(h, unmap_inv(&r, 0, top, PG), 0, out);
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, top + 2048, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_WRITE_PAGE, top + 2048),
			       out);
	}
out:
	rig_down(&r);
}

/* A read-only page: the read works; a write is blocked and recorded (store
 * page fault at the IOVA).  Then the same after a read cached the
 * translation: blocked, and the spec records it again; QEMU does not. */
static void read_only_page(struct hil *h, const void *arg)
{
	struct rig r;
	const struct ik_riscv_fault *f;
	ik_u64 bus;
	ik_u8 *page;

	(void)arg;
	if (rig_up(h, &r)) {
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 0, IK_PT_RISCV_S1, 38, PSCID0, 0, false), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, -1, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG, IK_PROT_READ), 0,
				  out);
		/* first a write, nothing cached */
		hil_fill(page, PG, SRC);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K + 2048, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, SRC), PG, out);
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_WRITE_PAGE,
						    IOVA_4K + 2048), out);
		f = fault_with(&r, IK_RISCV_CAUSE_WRITE_PAGE);
		HIL_CHECK_GOTO(h, f != NULL, out);
		HIL_CHECK_EQ_GOTO(h, f->ttyp, IK_RISCV_TTYP_UW, out);
		/* a read (cached now), then the write: blocked */
		HIL_CHECK_EQ_GOTO(h, rd(&r, IOVA_4K, 2048), 0, out);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K + 2048, 2048), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, SRC), PG, out);
		HIL_CHECK_EQ_GOTO(h, drain_faults(&r), 0, out);	/* the spec: 1 */
		departs("a write to a read-only page whose translation an earlier read cached "
			"is blocked but not recorded in the fault queue");
		/* the read worked: edu's buffer now goes to an RW alias */
		HIL_CHECK_EQ_GOTO(h, unmap_inv(&r, 0, IOVA_4K, PG), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K + 2048, 2048), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_memdiff(page, page + 2048, 2048), 2048, out);
	}
out:
	rig_down(&r);
}

/* Unmap + planned invalidation: the DMA reaches nothing and faults; QEMU
 * caches the translation, so without the invalidation it still would. */
static void unmap_blocks_dma(struct hil *h, const void *arg)
{
	struct rig r;
	ik_u64 bus, bus2;
	ik_u8 *page, *page2;
	struct ik_gather g;

	(void)arg;
	if (rig_up(h, &r)) {
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 0, IK_PT_RISCV_S1, 38, PSCID0, 0, false), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, -1, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page2, &bus2), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);	/* cached now */
		/* remapped to page2 without an invalidation: the IOTLB still
		 * gives the old page */
		ik_gather_init(&g);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(r.s[0].pt, IOVA_4K, PG, &g), (ik_s64)PG, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(r.s[0].pt, &g), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus2, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		hil_fill(page, PG, POISON);
		hil_fill(page2, PG, POISON2);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_GOTO(h, hil_verify(page, 64, POISON) != 64, out);	/* stale: old page */
		HIL_CHECK_EQ_GOTO(h, hil_verify(page2, PG, POISON2), PG, out);
		hil_diag("QEMU 10.0.2 caches translations: without the invalidation the old page "
			 "is still used");
		/* the planned invalidation: page2 from now on */
		HIL_CHECK_EQ_GOTO(h, unmap_inv(&r, 0, IOVA_4K, PG), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus2, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_GOTO(h, hil_verify(page2, 64, POISON2) != 64, out);
		/* unmapped and invalidated: the DMA reaches neither page */
		HIL_CHECK_EQ_GOTO(h, unmap_inv(&r, 0, IOVA_4K, PG), 0, out);
		hil_fill(page, PG, POISON);
		hil_fill(page2, PG, POISON2);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page2, PG, POISON2), PG, out);
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_WRITE_PAGE, IOVA_4K), out);
	}
out:
	rig_down(&r);
}

/* Fault records decoded: a read of an unmapped IOVA (the spec: load page
 * fault, TTYP 2 untranslated read, PV 0 - edu sends no PASID); and a DMA
 * from a device without a valid context (DDT entry not valid, iotval the
 * IOVA in QEMU's reading of the spec; QEMU records 0). */
static void fault_records(struct hil *h, const void *arg)
{
	struct rig r;
	ik_u64 bus;
	ik_u8 *page;

	(void)arg;
	if (rig_up(h, &r)) {
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 0, IK_PT_RISCV_S1, 38, PSCID0, 0, false), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		/* no context: DDT entry not valid */
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, bus, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_DDT_INVALID, 0), out);
		HIL_CHECK_EQ_GOTO(h, r.f[0].ttyp, IK_RISCV_TTYP_UR, out);	/* the spec: UW */
		departs("\"DDT entry not valid\" records iotval 0, not the IOVA, and TTYP 2 "
			"(untranslated read) for a write");
		/* a read of an unmapped IOVA */
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, -1, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_EQ_GOTO(h, rd(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_READ_PAGE, IOVA_4K), out);
		HIL_CHECK_EQ_GOTO(h, r.f[0].ttyp, IK_RISCV_TTYP_UW, out);	/* the spec: UR */
		HIL_CHECK_EQ_GOTO(h, r.f[0].pv, 1, out);			/* the spec: 0 */
		HIL_CHECK_EQ_GOTO(h, r.f[0].pid, 0, out);
		departs("TTYP is 3 (untranslated write) for a read, and PV is 1 for a request "
			"without a PASID");
	}
out:
	rig_down(&r);
}

/* An illegal command (opcode 0) ahead of a real invalidation: the queue
 * stops (cqcsr.cmd_ill), the core's hooks replace it with a no-op,
 * acknowledge and restart; the issuer gets -EIO; the invalidation behind
 * it runs (a DMA proves it); the queue keeps working. */
static void illegal_command(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_riscv_stats st;
	struct ik_gather g;
	struct ik_riscv_plan p;
	ik_u64 bus, cmds[2 * (1 + IK_RISCV_PLAN_MAX)];
	ik_u8 *page;
	int err;

	(void)arg;
	if (rig_up(h, &r)) {
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 0, IK_PT_RISCV_S1, 38, PSCID0, 0, false), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, -1, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);	/* cached */
		ik_gather_init(&g);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(r.s[0].pt, IOVA_4K, PG, &g), (ik_s64)PG, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_plan_unmap(&r.s[0].t, &g, &p), 0, out);
		cmds[0] = 0;	/* opcode 0: not a command */
		cmds[1] = 0;
		for (unsigned i = 0; i < p.n; i++)
			HIL_CHECK_EQ_GOTO(h, ik_riscv_cmd_encode(&p.c[i], &cmds[2 + 2 * i]), 0, out);
		err = ik_cmdq_issue(ik_riscv_queue(r.u), cmds, 1 + p.n, IK_CMDQ_SYNC);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(r.s[0].pt, &g), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_get_stats(r.u, &st), 0, out);
		hil_diag("illegal command: issue %s, command-queue errors %llu, cqcsr %#x",
			 ik_strerror(err), (unsigned long long)st.cq_errors,
			 ik_mmio_read32(&h->iommu, IK_RISCV_REG_CQCSR));
		HIL_CHECK_EQ_GOTO(h, err, -EIO, out);
		HIL_CHECK_EQ_GOTO(h, st.cq_errors, 1, out);
		HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(&h->iommu, IK_RISCV_REG_CQCSR) &
					     (IK_RISCV_CQCSR_CMD_ILL | IK_RISCV_QCSR_ON), IK_RISCV_QCSR_ON,
				  out);
		/* the invalidation behind it ran: the DMA reaches nothing */
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		HIL_CHECK_GOTO(h, faults_of_one_dma(h, &r, IK_RISCV_CAUSE_WRITE_PAGE, IOVA_4K), out);
		HIL_CHECK_EQ_GOTO(h, ik_cmdq_issue(ik_riscv_queue(r.u), NULL, 0, IK_CMDQ_SYNC), 0,
				  out);
	}
out:
	rig_down(&r);
}

/* A reserved bit in a command (IOTINVAL.VMA bit 11): the spec makes it
 * illegal (cmd_ill); QEMU executes it. */
static void reserved_command_bits(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_riscv_cmd c;
	struct ik_riscv_stats st;
	ik_u64 w[2];
	int err;

	(void)arg;
	if (rig_up(h, &r)) {
		IK_ENV_MEMSET(&c, 0, sizeof(c));
		c.opcode = IK_RISCV_CMD_IOTINVAL;
		c.func3 = IK_RISCV_IOTINVAL_VMA;
		HIL_CHECK_EQ_GOTO(h, ik_riscv_cmd_encode(&c, w), 0, out);
		w[0] |= 1ull << 11;
		HIL_CHECK_EQ_GOTO(h, ik_riscv_cmd_decode(w, &c), -EINVAL, out);
		err = ik_cmdq_issue(ik_riscv_queue(r.u), w, 1, IK_CMDQ_SYNC);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_get_stats(r.u, &st), 0, out);
		hil_diag("IOTINVAL.VMA with bit 11 set: issue %s, command-queue errors %llu",
			 ik_strerror(err), (unsigned long long)st.cq_errors);
		HIL_CHECK_EQ_GOTO(h, err, 0, out);	/* the spec: -EIO */
		HIL_CHECK_EQ_GOTO(h, st.cq_errors, 0, out);
		departs("reserved command bits are ignored (no cmd_ill)");
	}
out:
	rig_down(&r);
}

/* The command queue's restart after cmd_ill, on a queue of our own (four
 * slots, programmed register by register: the library's queue would repair
 * and restart by itself): an illegal command at slot 0, an IOFENCE.C that
 * writes a status word at slot 1.  The queue stops at slot 0 with cmd_ill;
 * slot 0 is then made an IOFENCE.C and cmd_ill cleared (RW1C).  The spec:
 * the queue resumes.  QEMU: it stays at slot 0 until the next cqt write. */
static void cmd_ill_restart(struct hil *h, const void *arg)
{
	const struct ik_mmio *m = &h->iommu;
	struct ik_riscv_config c;
	struct ik_riscv *u = NULL;
	struct ik_riscv_cmd f;
	ik_u64 ring_bus = 0, st_bus = 0;
	ik_u64 *ring = NULL;
	volatile ik_u32 *st = NULL;
	long live = bm_pool_live();
	ik_u32 csr = 0;
	int err;

	(void)arg;
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.mmio = m;
	c.dma = &h->dma;
	/* the core brings the IOMMU up (fault queue, an empty command queue),
	 * then its command queue goes off again: ours replaces it */
	HIL_CHECK_EQ(h, ik_riscv_create(&c, &u), 0);
	HIL_CHECK_EQ_GOTO(h, ik_riscv_enable(u), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_dma_alloc(&h->dma, PG, PG, (void **)&ring, &ring_bus), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_dma_alloc(&h->dma, PG, PG, (void **)&st, &st_bus), 0, out);
	ik_mmio_write32(m, IK_RISCV_REG_CQCSR, 0);
	HIL_POLL(err, !(ik_mmio_read32(m, IK_RISCV_REG_CQCSR) &
			(IK_RISCV_QCSR_ON | IK_RISCV_QCSR_BUSY)), 100000000ull);
	HIL_CHECK_EQ_GOTO(h, err, 0, out);
	IK_ENV_MEMSET(&f, 0, sizeof(f));
	f.opcode = IK_RISCV_CMD_IOFENCE;
	f.func3 = IK_RISCV_IOFENCE_C;
	f.av = 1;
	f.addr = st_bus;
	f.data = 0x5a5a;
	ring[0] = 0;	/* opcode 0: illegal */
	ring[1] = 0;
	HIL_CHECK_EQ_GOTO(h, ik_riscv_cmd_encode(&f, &ring[2]), 0, out);
	*st = 0;
	ik_dma_wmb();
	ik_mmio_write64(m, IK_RISCV_REG_CQB, (ring_bus >> 12) << 10 | 1);	/* 4 slots */
	ik_mmio_write32(m, IK_RISCV_REG_CQT, 0);
	ik_mmio_write32(m, IK_RISCV_REG_CQCSR, IK_RISCV_QCSR_EN);
	HIL_POLL(err, (ik_mmio_read32(m, IK_RISCV_REG_CQCSR) &
		       (IK_RISCV_QCSR_ON | IK_RISCV_QCSR_BUSY)) == IK_RISCV_QCSR_ON, 100000000ull);
	HIL_CHECK_EQ_GOTO(h, err, 0, out);
	ik_mmio_write32(m, IK_RISCV_REG_CQT, 2);
	HIL_POLL(err, ik_mmio_read32(m, IK_RISCV_REG_CQCSR) & IK_RISCV_CQCSR_CMD_ILL, 100000000ull);
	csr = ik_mmio_read32(m, IK_RISCV_REG_CQCSR);
	hil_diag("after the illegal command: cqcsr %#x cqh %u status word %#x", csr,
		 ik_mmio_read32(m, IK_RISCV_REG_CQH), *st);
	HIL_CHECK_EQ_GOTO(h, err, 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(m, IK_RISCV_REG_CQH), 0, out);
	HIL_CHECK_EQ_GOTO(h, *st, 0, out);
	/* repair slot 0 (a fence too), clear cmd_ill */
	HIL_CHECK_EQ_GOTO(h, ik_riscv_cmd_encode(&f, &ring[0]), 0, out);
	ring[0] &= ~((ik_u64)1 << 10);	/* AV = 0: no write */
	ring[0] &= 0xffffffffull;	/* DATA 0 */
	ring[1] = 0;
	ik_dma_wmb();
	ik_mmio_write32(m, IK_RISCV_REG_CQCSR, IK_RISCV_QCSR_EN | IK_RISCV_CQCSR_CMD_ILL);
	HIL_POLL(err, *st == 0x5a5a, 50000000ull);	/* the spec: it resumes */
	csr = ik_mmio_read32(m, IK_RISCV_REG_CQCSR);
	hil_diag("cmd_ill cleared: cqcsr %#x cqh %u status word %#x after 50 ms", csr,
		 ik_mmio_read32(m, IK_RISCV_REG_CQH), *st);
	HIL_CHECK_EQ_GOTO(h, err, -ETIMEDOUT, out);
	HIL_CHECK_EQ_GOTO(h, csr & IK_RISCV_CQCSR_CMD_ILL, 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(m, IK_RISCV_REG_CQH), 0, out);
	departs("clearing cqcsr.cmd_ill does not restart the command queue; the next cqt "
		"write does (ik_riscv_cq_regs_ops writes cqt again)");
	ik_mmio_write32(m, IK_RISCV_REG_CQT, 2);
	HIL_POLL(err, *st == 0x5a5a, 100000000ull);
	HIL_CHECK_EQ_GOTO(h, err, 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(m, IK_RISCV_REG_CQH), 2, out);
out:
	if (u) {
		ik_mmio_write32(m, IK_RISCV_REG_CQCSR, 0);
		HIL_POLL(err, !(ik_mmio_read32(m, IK_RISCV_REG_CQCSR) &
				(IK_RISCV_QCSR_ON | IK_RISCV_QCSR_BUSY)), 100000000ull);
		ik_riscv_destroy(u);
	}
	if (ring)
		ik_dma_free(&h->dma, ring, ring_bus, PG);
	if (st)
		ik_dma_free(&h->dma, (void *)(ik_uptr)st, st_bus, PG);
	HIL_CHECK_EQ(h, ik_mmio_read32(m, IK_RISCV_REG_CQCSR) & IK_RISCV_QCSR_ON, 0);
	HIL_CHECK_EQ(h, bm_pool_live(), live);
}

/* Two first stages (PSCIDs 0x123, 0x456) map the same IOVA to different
 * pages.  Switching edu's context without IODIR: QEMU keeps using the
 * cached context (as the spec allows); ik_riscv_plan_change() of the
 * change (IODIR.INVAL_DDT, the old PSCID, IOFENCE.C) moves it; and
 * ik_riscv_ddt_write() with the issuer does it all in one call. */
static void iodir_on_context_change(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_riscv_change chg;
	struct ik_riscv_plan p;
	ik_u64 bus, bus2;
	ik_u8 *page, *page2;

	(void)arg;
	if (rig_up(h, &r)) {
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 0, IK_PT_RISCV_S1, 38, PSCID0, 0, false), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 1, IK_PT_RISCV_S1, 38, PSCID1, 0, false), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page2, &bus2), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[1].pt, IOVA_4K, bus2, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, -1, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);	/* context cached */
		/* the new context written, nothing issued (a valid old context:
		 * the writer still needs its issuer for the break step, so
		 * write it invalid first, then the new one without issuing) */
		{
			ik_u64 zero[8] = { 0 };

			HIL_CHECK_EQ_GOTO(h, rig_write_dc(&r, zero, NULL, NULL), 0, out);
		}
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 1, -1, NULL, &chg), 0, out);
		hil_fill(page, PG, POISON);
		hil_fill(page2, PG, POISON2);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_GOTO(h, hil_verify(page, 64, POISON) != 64, out);	/* still page */
		HIL_CHECK_EQ_GOTO(h, hil_verify(page2, PG, POISON2), PG, out);
		hil_diag("without IODIR.INVAL_DDT the cached context (PSCID %#x) is still used",
			 PSCID0);
		/* the plan of the change: IODIR.INVAL_DDT of edu, IOFENCE.C */
		HIL_CHECK_EQ_GOTO(h, chg.kind, IK_RISCV_CHANGE_DC, out);
		HIL_CHECK_EQ_GOTO(h, chg.did, h->rid, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_plan_change(&chg, &p), 0, out);
		HIL_CHECK_GOTO(h, p.n >= 1, out);
		HIL_CHECK_EQ_GOTO(h, p.c[0].opcode, IK_RISCV_CMD_IODIR, out);
		HIL_CHECK_EQ_GOTO(h, p.c[0].func3, IK_RISCV_IODIR_INVAL_DDT, out);
		HIL_CHECK_EQ_GOTO(h, p.c[0].did, h->rid, out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_plan_issue(ik_riscv_queue(r.u), &p), 0, out);
		hil_fill(page, PG, POISON);
		HIL_CHECK_GOTO(h, round_trip(&r, page2, IOVA_4K), out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		/* and back through ik_riscv_ddt_write() with its issuer */
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, -1, ik_riscv_issue_cmdq, &chg), 0, out);
		hil_fill(page2, PG, POISON2);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page2, PG, POISON2), PG, out);
	}
out:
	rig_down(&r);
}

/* A first-stage page without U (IK_PROT_PRIV): edu's requests are
 * unprivileged, so the spec faults them; QEMU never checks U. */
static void pte_u_bit(struct hil *h, const void *arg)
{
	struct rig r;
	ik_u64 bus;
	ik_u8 *page;

	(void)arg;
	if (rig_up(h, &r)) {
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 0, IK_PT_RISCV_S1, 38, PSCID0, 0, false), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, rig_attach(&r, 0, -1, ik_riscv_issue_cmdq, NULL), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE | IK_PROT_PRIV), 0,
				  out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);	/* the spec: faults */
		HIL_CHECK_EQ_GOTO(h, drain_faults(&r), 0, out);
		departs("the PTE U bit is never checked: an unprivileged request reaches a page "
			"without U");
	}
out:
	rig_down(&r);
}

/* SADE = 1 without capabilities.AMO_HWAD: ik_riscv_dc_build() refuses it;
 * the spec makes such a context "DDT entry misconfigured" (cause 259).
 * Written through a directory built for capabilities that claim AMO_HWAD,
 * QEMU takes it and translates. */
static void sade_without_amo_hwad(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_riscv_caps fake;
	struct ik_riscv_ddt_config dcfg;
	struct ik_riscv_ddt ddt2;
	struct ik_riscv_dc_config c;
	ik_u64 dc[8], bus;
	ik_u8 *page;
	bool ddt2_live = false;

	(void)arg;
	if (rig_up(h, &r)) {
		if (r.caps->amo_hwad) {
			rig_down(&r);
			HIL_SKIP(h, "the capabilities have AMO_HWAD");
		}
		HIL_CHECK_EQ_GOTO(h, rig_set_new(&r, 0, IK_PT_RISCV_S1, 38, PSCID0, 0, false), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		IK_ENV_MEMSET(&c, 0, sizeof(c));
		IK_ENV_MEMSET(dc, 0, sizeof(dc));
		c.s1 = r.s[0].pt;
		c.pscid = PSCID0;
		c.extended = r.caps->msi_flat;
		HIL_CHECK_EQ_GOTO(h, ik_riscv_dc_build(r.caps, &c, dc), 0, out);
		dc[0] |= IK_RISCV_TC_SADE;
		/* the library refuses it for these capabilities */
		HIL_CHECK_EQ_GOTO(h, rig_write_dc(&r, dc, ik_riscv_issue_cmdq, NULL), -EINVAL, out);
		/* a directory for capabilities claiming AMO_HWAD takes it */
		fake = *r.caps;
		fake.amo_hwad = true;
		fake.raw |= IK_RISCV_CAP_AMO_HWAD;
		IK_ENV_MEMSET(&dcfg, 0, sizeof(dcfg));
		dcfg.dma = &h->dma;
		dcfg.caps = &fake;
		dcfg.levels = 2;
		dcfg.extended = r.caps->msi_flat;
		HIL_CHECK_EQ_GOTO(h, ik_riscv_ddt_init(&ddt2, &dcfg), 0, out);
		ddt2_live = true;
		HIL_CHECK_EQ_GOTO(h, ik_riscv_ddt_write(&ddt2, h->rid, dc, NULL, NULL, NULL), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, ik_riscv_set_ddtp(r.u, ik_riscv_ddt_reg(&ddt2)), 0, out);
		{
			struct ik_riscv_change all;
			struct ik_riscv_plan p;

			IK_ENV_MEMSET(&all, 0, sizeof(all));
			all.kind = IK_RISCV_CHANGE_DC;
			HIL_CHECK_EQ_GOTO(h, ik_riscv_plan_change(&all, &p), 0, out);
			p.c[0].dv = 0;	/* every device */
			p.c[0].did = 0;
			HIL_CHECK_EQ_GOTO(h, ik_riscv_plan_issue(ik_riscv_queue(r.u), &p), 0, out);
		}
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);	/* the spec: blocked */
		HIL_CHECK_EQ_GOTO(h, drain_faults(&r), 0, out);		/* the spec: cause 259 */
		departs("SADE = 1 is accepted without capabilities.AMO_HWAD (no \"DDT entry "
			"misconfigured\")");
	}
out:
	if (ddt2_live) {
		if (ik_riscv_set_ddtp(r.u, ik_riscv_ddt_reg(&r.ddt)) == 0) {
			struct ik_riscv_change all;
			struct ik_riscv_plan p;

			IK_ENV_MEMSET(&all, 0, sizeof(all));
			all.kind = IK_RISCV_CHANGE_DC;
			if (!ik_riscv_plan_change(&all, &p)) {
				p.c[0].dv = 0;
				p.c[0].did = 0;
				ik_riscv_plan_issue(ik_riscv_queue(r.u), &p);
			}
		}
		ik_riscv_ddt_fini(&ddt2);
	}
	rig_down(&r);
}

static const ik_u32 sv39 = 38, sv48 = 47, sv57 = 56, sv39x4 = 41, sv48x4 = 50;
static const ik_u64 sz2m = SZ_2M, sz1g = SZ_1G;

static const struct hil_check checks[] = {
	{ "bringup_and_teardown_twice", bringup_and_teardown_twice, NULL, 0 },
	{ "dma_4k_both_ways_through_sv39", dma_4k_s1, &sv39, HIL_NEEDS_EDU },
	{ "dma_4k_both_ways_through_sv48", dma_4k_s1, &sv48, HIL_NEEDS_EDU },
	{ "dma_4k_both_ways_through_sv57", dma_4k_s1, &sv57, HIL_NEEDS_EDU },
	{ "dma_through_a_2m_leaf_then_unmapped (QEMU 10.0.2 departs: IOTINVAL AV=1 drops only "
	  "the 4K entry at ADDR)", dma_superpage, &sz2m, HIL_NEEDS_EDU },
	{ "dma_through_a_1g_leaf_then_unmapped (QEMU 10.0.2 departs: IOTINVAL AV=1 drops only "
	  "the 4K entry at ADDR)", dma_superpage, &sz1g, HIL_NEEDS_EDU },
	{ "dma_4k_both_ways_through_a_sv39x4_g_stage (QEMU 10.0.2 departs: iotval2 0 for "
	  "guest-page faults)", dma_s2, &sv39x4, HIL_NEEDS_EDU },
	{ "dma_4k_both_ways_through_a_sv48x4_g_stage (QEMU 10.0.2 departs: iotval2 0 for "
	  "guest-page faults)", dma_s2, &sv48x4, HIL_NEEDS_EDU },
	{ "nested_sv39_first_stage_over_a_sv39x4_g_stage", nested_s1_over_s2, NULL,
	  HIL_NEEDS_EDU },
	{ "top_page_of_the_sv39_input_range", top_page, &sv39, HIL_NEEDS_EDU },
	{ "top_page_of_the_sv48_input_range", top_page, &sv48, HIL_NEEDS_EDU },
	{ "read_only_page_write_blocked_and_recorded (QEMU 10.0.2 departs: not recorded after "
	  "a cached read)", read_only_page, NULL, HIL_NEEDS_EDU },
	{ "unmap_and_planned_invalidation_block_dma_and_fault", unmap_blocks_dma, NULL,
	  HIL_NEEDS_EDU },
	{ "fault_records_decoded (QEMU 10.0.2 departs: DDT-invalid iotval 0 and TTYP 2 for a "
	  "write, TTYP 3 for a read, PV 1 without a PASID)", fault_records, NULL, HIL_NEEDS_EDU },
	{ "illegal_command_and_the_queue_recovery", illegal_command, NULL, HIL_NEEDS_EDU },
	{ "reserved_command_bits (QEMU 10.0.2 departs: ignored)", reserved_command_bits, NULL,
	  0 },
	{ "cmd_ill_cleared_restarts_the_queue (QEMU 10.0.2 departs: only the next cqt write "
	  "does)", cmd_ill_restart, NULL, 0 },
	{ "iodir_inval_ddt_on_a_device_context_change", iodir_on_context_change, NULL,
	  HIL_NEEDS_EDU },
	{ "pte_u_bit (QEMU 10.0.2 departs: never checked)", pte_u_bit, NULL, HIL_NEEDS_EDU },
	{ "sade_without_amo_hwad (QEMU 10.0.2 departs: accepted)", sade_without_amo_hwad, NULL,
	  HIL_NEEDS_EDU },
};

const struct hil_suite hil_suite_riscv = HIL_SUITE_FOR(HIL_IOMMU_RISCV, "riscv", checks);
