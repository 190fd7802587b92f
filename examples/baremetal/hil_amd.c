/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The AMD IOMMU checks of the hardware-in-the-loop harness (hil.h,
 * docs/hil.md): iommukit's AMD driver core (<iommukit/drv/amd.h>) on QEMU
 * 7.2's amd-iommu (q35, -device amd-iommu), with edu as the DMA master.
 * docs/amd-bringup.md walks through the same code.
 *
 * The IOMMU is programmed through iommukit only: the ACPI IVRS table is
 * parsed with ik_amd_ivrs_parse(); ik_amd_create()/_enable() bring it up
 * (device table, command buffer, event log, Control); host tables are an
 * ik_pgtable of IK_PT_AMD_V1 whose pages come from the harness's DMA
 * memory; edu's DTE is built with ik_amd_dte_build() and written with
 * ik_amd_devtab_write(), which issues its own invalidations; every other
 * invalidation is planned by ik_amd_plan_*() and issued on the unit's
 * queue.
 *
 * Each behaviour is one check (one TAP line):
 *   - the IVRS table describes the IOMMU at the board's base, its EFR image
 *     is the EFR register, and a DeviceID range covers edu;
 *   - bring-up and teardown, twice, Control and Status as the spec says;
 *   - 4 KiB DMA both ways through Mode 2, 3 and 4 tables (the DTE's Mode
 *     read back), 2 MiB and 1 GiB pages;
 *   - a read-only mapping: the read works, the write is dropped;
 *   - unmap + planned invalidation: the next DMA reaches nothing; without
 *     the invalidation the cached translation is still used (so the check
 *     above means something);
 *   - a DTE switch between two domains through ik_amd_devtab_write(): the
 *     second domain's page after it.
 * Where QEMU 7.2 departs from pub. 48882 the check asserts what QEMU does,
 * names the departure in its TAP description ("QEMU 7.2 departs: ...")
 * and prints it as "# QEMU 7.2 departs from the spec: ..."; the unit tests
 * (tests/test_drv_amd.c: a register model of the specification's IOMMU,
 * and the soft IOMMU walking what the DTE says) check the specification's
 * behaviour instead:
 *   - it never writes the event log (no IO_PAGE_FAULT or any other record
 *     can be checked here: Event Log Tail stays 0);
 *   - it raises no fault for a not-present PTE;
 *   - it ignores IOVA bits above the DTE's Mode (the DMA aliases into the
 *     mapped range instead of faulting);
 *   - it does not stop on an illegal command (CmdBufRun stays 1);
 *   - it flushes the whole domain for any INVALIDATE_IOMMU_PAGES;
 *   - it keys its IOTLB by device rather than DomainID (a DTE switch to
 *     another DomainID with only INVALIDATE_DEVTAB_ENTRY keeps using the
 *     old domain's translations).
 */
#include <iommukit/env.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/amd.h>
#include <iommukit/drv/amd.h>
#include "hil.h"
#include "ik_env_baremetal.h"

#define PG 4096ull
#define SZ_2M (1ull << 21)
#define SZ_1G (1ull << 30)

/* Seeds of hil_fill(): SRC for what edu reads, POISON for memory no DMA may
 * reach. */
#define SRC 0x7a00u
#define POISON 0xd700u
#define POISON2 0xe700u

/* IOVAs: below 2^30, so that every Mode (2: 30 bits) reaches them. */
#define IOVA_4K 0x10000000ull	/* 256 MiB */
#define IOVA_2M 0x20000000ull	/* 512 MiB */
#define IOVA_1G 0x40000000ull	/* 1 GiB: needs Mode 3 */

#define RIG_SETS 2

struct rig;

struct rig_set {
	struct rig *r;
	struct ik_pgtable *pt;
	struct ik_amd_target t;	/* the planner's view: pt and DomainID */
	unsigned mode;	/* its levels: the DTE's Mode */
};

struct rig {
	struct hil *h;
	struct ik_amd *u;
	struct rig_set s[RIG_SETS];
	struct hil_bufs bufs;	/* the check's DMA buffers */
	int attached;	/* the set edu's DTE names; -1: blocked */
	unsigned dmas;
	int hook_err;
	long live;
};

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

/* A map replaced an empty table by a block: the walk caches go first. */
static void pt_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	struct rig_set *s = (struct rig_set *)cookie;
	struct ik_amd_plan p;
	int err;

	(void)granule;
	err = ik_amd_plan_range(&s->t, iova, size, true, &p);
	if (!err)
		err = ik_amd_plan_issue(ik_amd_queue(s->r->u), &p);
	hook_error(s->r, err);
}

static const struct ik_pgtable_hooks pt_hooks = {
	pt_alloc, pt_free, NULL, NULL, pt_flush_walk, NULL, NULL, NULL,
};

/* Table set i: amd-v1 over ias bits (Mode = its levels), DomainID domid. */
static int rig_set_new(struct rig *r, unsigned i, ik_u32 ias, ik_u16 domid)
{
	struct rig_set *s = &r->s[i];
	struct ik_pgtable_cfg pc;
	struct ik_pgtable_info info;
	int err;

	IK_ENV_MEMSET(&pc, 0, sizeof(pc));
	pc.fmt = IK_PT_AMD_V1;
	pc.ias = ias;
	pc.oas = 48;
	pc.pgsize_bitmap = PG | SZ_2M | SZ_1G;
	pc.coherent = true;	/* x86: the IOMMU's walks snoop */
	pc.hooks = &pt_hooks;
	pc.cookie = s;
	s->r = r;
	err = ik_pgtable_create(&pc, &s->pt);
	if (err)
		return err;
	ik_pgtable_get_info(s->pt, &info);
	s->mode = info.geom.nlevels;
	s->t.pt = s->pt;
	s->t.domid = domid;
	return 0;
}

/* edu's DTE: set i with read and write permission (-1: blocked), written
 * with the invalidations its change needs (fn NULL: none issued). */
static int rig_dte(struct rig *r, int i, ik_amd_issue_fn fn)
{
	struct ik_amd_dte_config dc;
	struct ik_amd_change chg;
	ik_u64 dte[4];
	int err;

	IK_ENV_MEMSET(&dc, 0, sizeof(dc));
	if (i >= 0) {
		dc.pt = r->s[i].pt;
		dc.prot = IK_PROT_READ | IK_PROT_WRITE;
		dc.domid = r->s[i].t.domid;
	}
	err = ik_amd_dte_build(&dc, dte);
	if (!err)
		err = ik_amd_devtab_write(ik_amd_devtab(r->u), r->h->rid, dte, fn,
					  fn ? ik_amd_queue(r->u) : NULL, &chg);
	if (!err)
		r->attached = i;
	return err;
}

static void show_event(const char *what, const struct ik_amd_event *e)
{
	const char *name = ik_amd_event_name(e->code);

	hil_diag("%s: %s devid %#x domid %u addr %#llx flags %#x", what, name ? name : "?",
		 e->devid, e->domid, (unsigned long long)e->addr, e->flags);
}

/* Event Log Tail as the IOMMU shows it (QEMU 7.2: always 0). */
static ik_u64 evt_tail(const struct hil *h)
{
	return ik_mmio_read64(&h->iommu, IK_AMD_REG_EVTLOG_TAIL);
}

/*
 * rig_up - the unit enabled, nsets table sets over `ias` bits (set i:
 * DomainID 1 + i), set 0 in edu's DTE.  false: the check ends here
 * (failure recorded); call rig_down() either way.
 */
static bool rig_up(struct hil *h, struct rig *r, unsigned nsets, ik_u32 ias)
{
	struct ik_amd_config c;
	unsigned i;

	IK_ENV_MEMSET(r, 0, sizeof(*r));
	r->h = h;
	r->attached = -1;
	r->live = bm_pool_live();
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.mmio = &h->iommu;
	c.dma = &h->dma;
	c.max_devid = h->rid;
	c.flags = IK_AMD_CFG_NO_PPR;	/* see ppr_log_... below */
#define UP_EQ(got, want)                                                                    \
	do {                                                                                \
		ik_u64 g_ = (ik_u64)(got), w_ = (ik_u64)(want);                             \
		if (g_ != w_) {                                                             \
			hil_fail_values(h, HIL_FILE, __LINE__, #got " == " #want, g_, w_);  \
			return false;                                                       \
		}                                                                           \
	} while (0)
	UP_EQ(ik_amd_create(&c, &r->u), 0);
	UP_EQ(ik_amd_enable(r->u), 0);
	for (i = 0; i < nsets; i++)
		UP_EQ(rig_set_new(r, i, ias, (ik_u16)(1 + i)), 0);
	if (nsets)
		UP_EQ(rig_dte(r, 0, ik_amd_issue_cmdq), 0);
#undef UP_EQ
	return true;
}

static void rig_down(struct rig *r)
{
	struct hil *h = r->h;
	struct ik_amd_event e;
	unsigned i, events = 0;
	int detach = 0;

	if (r->u) {
		if (r->attached >= 0 && ik_amd_queue(r->u))
			detach = rig_dte(r, -1, ik_amd_issue_cmdq);
		while (events < 256 && ik_amd_event_pop(r->u, &e) == 0) {
			show_event("event", &e);
			events++;
		}
		ik_amd_destroy(r->u);
	}
	for (i = 0; i < RIG_SETS; i++)
		ik_pgtable_destroy(r->s[i].pt);
	hil_bufs_free(&r->bufs, &h->dma);
	if (r->dmas)
		hil_diag("%u edu DMAs", r->dmas);
	HIL_CHECK_EQ(h, detach, 0);
	HIL_CHECK_EQ(h, r->hook_err, 0);
	HIL_CHECK_EQ(h, ik_mmio_read64(&h->iommu, IK_AMD_REG_CONTROL) &
				(IK_AMD_CTRL_IOMMU_EN | IK_AMD_CTRL_CMDBUF_EN), 0);
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
	struct ik_amd_plan p;
	ik_s64 n;
	int err;

	ik_gather_init(&g);
	n = ik_pgtable_unmap(r->s[s].pt, iova, size, &g);
	if (n != (ik_s64)size)
		return n < 0 ? (int)n : -EIO;
	err = ik_amd_plan_unmap(&r->s[s].t, &g, &p);
	if (!err)
		err = ik_amd_plan_issue(ik_amd_queue(r->u), &p);
	if (!err)
		err = ik_pgtable_gather_sync(r->s[s].pt, &g);
	return err;
}

static void departs(const char *what)
{
	hil_diag("QEMU 7.2 departs from the spec: %s", what);
}

/* ---------------------------------------------------------------- checks */

static void ivrs_describes_the_iommu(struct hil *h, const void *arg)
{
	struct ik_amd_ivrs_unit units[4];
	struct ik_amd_ivrs_range rg[16];
	struct ik_amd_ivrs iv;
	ik_u64 efr = ik_mmio_read64(&h->iommu, IK_AMD_REG_EFR);
	bool covered = false, efr_seen = false;
	unsigned i;

	(void)arg;
	HIL_CHECK(h, h->acpi_ivrs != NULL);
	IK_ENV_MEMSET(&iv, 0, sizeof(iv));
	iv.units = units;
	iv.max_units = 4;
	iv.ranges = rg;
	iv.max_ranges = 16;
	HIL_CHECK_EQ(h, ik_amd_ivrs_parse(h->acpi_ivrs, h->acpi_ivrs_len, &iv), 0);
	hil_diag("IVRS: %u bytes, IVinfo %#x, %u IVHD block(s), %u DeviceID range(s)",
		 h->acpi_ivrs_len, iv.ivinfo, iv.nunits, iv.nranges);
	HIL_CHECK(h, iv.nunits >= 1);
	for (i = 0; i < iv.nunits; i++) {
		hil_diag("  IVHD type %#x: IOMMU DeviceID %#x base %#llx segment %u EFR image %#llx",
			 units[i].type, units[i].devid, (unsigned long long)units[i].base,
			 units[i].segment, (unsigned long long)units[i].efr);
		HIL_CHECK_EQ(h, units[i].base, h->iommu_base);
		if (units[i].have_efr) {
			efr_seen = true;
			HIL_CHECK_EQ(h, units[i].efr, efr);
		}
	}
	for (i = 0; i < iv.nranges; i++) {
		hil_diag("  DeviceIDs %#06x..%#06x (entry type %#x, IVHD %u)", rg[i].first,
			 rg[i].last, rg[i].kind, rg[i].unit);
		if (rg[i].first <= h->rid && h->rid <= rg[i].last)
			covered = true;
	}
	if (!efr_seen)
		hil_diag("  no type 11h/40h IVHD: no EFR image to compare");
	HIL_CHECK(h, covered);
	/* The same bytes one short: the parser refuses them, writes nothing. */
	iv.nunits = 77;
	HIL_CHECK_EQ(h, ik_amd_ivrs_parse(h->acpi_ivrs, h->acpi_ivrs_len - 1, &iv), -EINVAL);
	HIL_CHECK_EQ(h, iv.nunits, 77);
}

static void bringup_and_teardown_twice(struct hil *h, const void *arg)
{
	struct ik_amd_config c;
	struct ik_amd *u = NULL;
	long live = bm_pool_live();
	int k;

	(void)arg;
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.mmio = &h->iommu;
	c.dma = &h->dma;
	c.max_devid = h->rid;
	c.flags = IK_AMD_CFG_NO_PPR;
	for (k = 0; k < 2; k++) {
		ik_u64 ctrl;
		ik_u32 sts;

		HIL_CHECK_EQ(h, ik_amd_create(&c, &u), 0);
		HIL_CHECK_EQ_GOTO(h, ik_amd_enable(u), 0, out);
		ctrl = ik_mmio_read64(&h->iommu, IK_AMD_REG_CONTROL);
		sts = ik_mmio_read32(&h->iommu, IK_AMD_REG_STATUS);
		hil_diag("enabled: Control %#llx Status %#x DevTab %#llx CmdBuf %#llx EvtLog %#llx",
			 (unsigned long long)ctrl, sts,
			 (unsigned long long)ik_mmio_read64(&h->iommu, IK_AMD_REG_DEVTAB_BASE),
			 (unsigned long long)ik_mmio_read64(&h->iommu, IK_AMD_REG_CMDBUF_BASE),
			 (unsigned long long)ik_mmio_read64(&h->iommu, IK_AMD_REG_EVTLOG_BASE));
		HIL_CHECK_GOTO(h, ctrl & IK_AMD_CTRL_IOMMU_EN, out);
		HIL_CHECK_GOTO(h, ctrl & IK_AMD_CTRL_CMDBUF_EN, out);
		HIL_CHECK_GOTO(h, ctrl & IK_AMD_CTRL_EVTLOG_EN, out);
		HIL_CHECK_GOTO(h, sts & IK_AMD_STS_CMDBUF_RUN, out);
		HIL_CHECK_GOTO(h, sts & IK_AMD_STS_EVTLOG_RUN, out);
		HIL_CHECK_EQ_GOTO(h, ik_mmio_read64(&h->iommu, IK_AMD_REG_DEVTAB_BASE),
				  ik_amd_devtab_reg(ik_amd_devtab(u)), out);
		HIL_CHECK_EQ_GOTO(h, ik_amd_enable(u), -EBUSY, out);
		/* 20 waits on the running buffer */
		for (int i = 0; i < 20; i++)
			HIL_CHECK_EQ_GOTO(h, ik_amd_issue(u, NULL, 0, true), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_amd_disable(u), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_mmio_read64(&h->iommu, IK_AMD_REG_CONTROL) &
					     (IK_AMD_CTRL_IOMMU_EN | IK_AMD_CTRL_CMDBUF_EN), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_mmio_read32(&h->iommu, IK_AMD_REG_STATUS) &
					     IK_AMD_STS_CMDBUF_RUN, 0, out);
		ik_amd_destroy(u);
		u = NULL;
	}
out:
	ik_amd_destroy(u);
	HIL_CHECK_EQ(h, bm_pool_live(), live);
}

/* 4 KiB pages, both directions, through a table of the given input width
 * (30: Mode 2, 39: Mode 3, 48: Mode 4); the DTE's Mode read back. */
static void dma_4k_mode(struct hil *h, const void *arg)
{
	ik_u32 ias = *(const ik_u32 *)arg;
	struct rig r;
	struct ik_amd_dte d;
	ik_u64 dte[4], bus;
	ik_u8 *page;

	if (rig_up(h, &r, 1, ias)) {
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_amd_devtab_read(ik_amd_devtab(r.u), h->rid, dte), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_amd_dte_decode(dte, &d), 0, out);
		hil_diag("DTE of %#x: Mode %u root %#llx DomainID %u IR/IW %u", h->rid, d.mode,
			 (unsigned long long)d.root, d.domid, d.prot);
		HIL_CHECK_EQ_GOTO(h, d.mode, ias <= 30 ? 2 : ias <= 39 ? 3 : 4, out);
		HIL_CHECK_EQ_GOTO(h, d.mode, r.s[0].mode, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);
		/* the untranslated address reaches nothing now */
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, bus, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
	}
out:
	rig_down(&r);
}

/* A 2 MiB or 1 GiB leaf: IOVA (aligned) -> the aligned block holding the
 * buffer; the DMA goes to IOVA + the buffer's offset in it. */
static void dma_superpage(struct hil *h, const void *arg)
{
	ik_u64 size = *(const ik_u64 *)arg, iova = size == SZ_1G ? IOVA_1G : IOVA_2M;
	struct rig r;
	struct ik_pgtable_info info;
	ik_u64 bus, pa;
	ik_u8 *page;

	if (rig_up(h, &r, 1, 39)) {
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		ik_pgtable_get_info(r.s[0].pt, &info);
		HIL_CHECK_GOTO(h, info.geom.pgsize_bitmap & size, out);
		pa = bus & ~(size - 1);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map_pages(r.s[0].pt, iova, pa, size, 1,
							  IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, iova + (bus - pa)), out);
		HIL_CHECK_EQ_GOTO(h, unmap_inv(&r, 0, iova, size), 0, out);
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, iova + (bus - pa), 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
	}
out:
	rig_down(&r);
}

static void read_only_mapping(struct hil *h, const void *arg)
{
	struct rig r;
	ik_u64 bus;
	ik_u8 *page;

	(void)arg;
	if (rig_up(h, &r, 1, 39)) {
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG, IK_PROT_READ), 0,
				  out);
		hil_fill(page, PG, SRC);
		HIL_CHECK_EQ_GOTO(h, rd(&r, IOVA_4K, 2048), 0, out);	/* edu's buffer: SRC */
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K + 2048, 2048), 0, out);	/* dropped */
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, SRC), PG, out);
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

/* Unmap + planned invalidation: the DMA reaches nothing; QEMU caches the
 * translation, so without the invalidation it still would. */
static void unmap_blocks_dma(struct hil *h, const void *arg)
{
	struct rig r;
	ik_u64 bus, bus2;
	ik_u8 *page, *page2;
	struct ik_gather g;

	(void)arg;
	if (rig_up(h, &r, 1, 39)) {
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page2, &bus2), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);	/* cached now */
		/* Remapped to page2 without an invalidation: the IOTLB still
		 * gives the old page. */
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
		hil_diag("QEMU 7.2: its IOTLB caches translations: without the invalidation the "
			 "old page is still used");
		/* The planned invalidation: page2 from now on. */
		HIL_CHECK_EQ_GOTO(h, unmap_inv(&r, 0, IOVA_4K, PG), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus2, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_GOTO(h, hil_verify(page2, 64, POISON2) != 64, out);
		/* Unmapped and invalidated: the DMA reaches neither page. */
		HIL_CHECK_EQ_GOTO(h, unmap_inv(&r, 0, IOVA_4K, PG), 0, out);
		hil_fill(page, PG, POISON);
		hil_fill(page2, PG, POISON2);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page2, PG, POISON2), PG, out);
		/* The spec: an IO_PAGE_FAULT for the not-present PTE. */
		HIL_CHECK_EQ_GOTO(h, evt_tail(h), 0, out);
		departs("no IO_PAGE_FAULT event for a not-present PTE (the DMA is dropped "
			"silently)");
	}
out:
	rig_down(&r);
}

/* Two domains map the same IOVA to different pages: the DTE switch
 * through ik_amd_devtab_write() (its plan: INVALIDATE_DEVTAB_ENTRY and the
 * old domain's pages) moves edu to the second. */
static void dte_switch(struct hil *h, const void *arg)
{
	struct rig r;
	ik_u64 bus, bus2;
	ik_u8 *page, *page2;

	(void)arg;
	if (rig_up(h, &r, 2, 39)) {
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page2, &bus2), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[1].pt, IOVA_4K, bus2, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);
		HIL_CHECK_EQ_GOTO(h, rig_dte(&r, 1, ik_amd_issue_cmdq), 0, out);
		hil_fill(page, PG, POISON);
		HIL_CHECK_GOTO(h, round_trip(&r, page2, IOVA_4K), out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		/* and back */
		HIL_CHECK_EQ_GOTO(h, rig_dte(&r, 0, ik_amd_issue_cmdq), 0, out);
		hil_fill(page2, PG, POISON2);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page2, PG, POISON2), PG, out);
	}
out:
	rig_down(&r);
}

/* The spec tags cached translations with the DomainID: a DTE that names
 * another DomainID needs only INVALIDATE_DEVTAB_ENTRY to take effect.
 * QEMU 7.2 keys its IOTLB by device: edu keeps the old domain's page until
 * that domain is flushed. */
static void dte_switch_devtab_only(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_amd_cmd c;
	ik_u64 bus, bus2;
	ik_u8 *page, *page2;

	(void)arg;
	if (rig_up(h, &r, 2, 39)) {
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page2, &bus2), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[1].pt, IOVA_4K, bus2, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);	/* cached, domain 1 */
		HIL_CHECK_EQ_GOTO(h, rig_dte(&r, 1, NULL), 0, out);	/* domain 2, no plan */
		IK_ENV_MEMSET(&c, 0, sizeof(c));
		c.op = IK_AMD_CMD_INV_DEVTAB_ENTRY;
		c.devid = h->rid;
		HIL_CHECK_EQ_GOTO(h, ik_amd_issue(r.u, &c, 1, true), 0, out);
		hil_fill(page, PG, POISON);
		hil_fill(page2, PG, POISON2);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		/* The spec: page2 (DomainID 2 has nothing cached).  QEMU: page. */
		HIL_CHECK_EQ_GOTO(h, hil_verify(page2, PG, POISON2), PG, out);
		HIL_CHECK_GOTO(h, hil_verify(page, 64, POISON) != 64, out);
		departs("the IOTLB is keyed by device, not DomainID: after a DTE switch to "
			"DomainID 2 and INVALIDATE_DEVTAB_ENTRY, edu still uses DomainID 1's page");
		/* What ik_amd_plan_change() adds when a device leaves a domain. */
		IK_ENV_MEMSET(&c, 0, sizeof(c));
		c.op = IK_AMD_CMD_INV_IOMMU_PAGES;
		c.domid = 1;
		c.s = 1;
		c.pde = 1;
		c.addr = IK_AMD_INV_ALL_ADDR;
		HIL_CHECK_EQ_GOTO(h, ik_amd_issue(r.u, &c, 1, true), 0, out);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_GOTO(h, hil_verify(page2, 64, POISON2) != 64, out);
	}
out:
	rig_down(&r);
}

/* Mode 2 translates 30 bits; the spec faults an IOVA above them.  QEMU
 * 7.2 drops the upper bits: IOVA + 1 GiB reaches IOVA's page. */
static void iova_above_mode(struct hil *h, const void *arg)
{
	struct rig r;
	ik_u64 bus;
	ik_u8 *page;

	(void)arg;
	if (rig_up(h, &r, 1, 30)) {
		HIL_CHECK_EQ_GOTO(h, r.s[0].mode, 2, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K + SZ_1G, 64), 0, out);
		HIL_CHECK_GOTO(h, hil_verify(page, 64, POISON) != 64, out);
		HIL_CHECK_EQ_GOTO(h, evt_tail(h), 0, out);
		departs("IOVA bits above the DTE's Mode are ignored: a Mode 2 DMA to "
			"IOVA + 1 GiB reaches IOVA's page (no IO_PAGE_FAULT)");
	}
out:
	rig_down(&r);
}

/* A DTE without IW (read-only device): the spec logs an IO_PAGE_FAULT for
 * its write; QEMU drops the write but writes no event log entry. */
static void event_log_never_written(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_amd_dte_config dc;
	struct ik_amd_change chg;
	struct ik_amd_event e;
	ik_u64 dte[4], bus, evt;
	ik_u8 *page;

	(void)arg;
	if (rig_up(h, &r, 1, 39)) {
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		IK_ENV_MEMSET(&dc, 0, sizeof(dc));
		dc.pt = r.s[0].pt;
		dc.prot = IK_PROT_READ;
		dc.domid = 1;
		HIL_CHECK_EQ_GOTO(h, ik_amd_dte_build(&dc, dte), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_amd_devtab_write(ik_amd_devtab(r.u), h->rid, dte,
							 ik_amd_issue_cmdq, ik_amd_queue(r.u),
							 &chg), 0, out);
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);	/* dropped */
		evt = ik_mmio_read64(&h->iommu, IK_AMD_REG_EVTLOG_BASE);
		hil_diag("Event Log Base %#llx Head %#llx Tail %#llx Status %#x",
			 (unsigned long long)evt,
			 (unsigned long long)ik_mmio_read64(&h->iommu, IK_AMD_REG_EVTLOG_HEAD),
			 (unsigned long long)evt_tail(h),
			 ik_mmio_read32(&h->iommu, IK_AMD_REG_STATUS));
		HIL_CHECK_EQ_GOTO(h, ik_amd_event_pop(r.u, &e), -ENOENT, out);
		HIL_CHECK_EQ_GOTO(h, evt_tail(h), 0, out);
		departs("the event log is never written: no IO_PAGE_FAULT for a write the "
			"DTE's IW = 0 forbids (Event Log Tail stays 0)");
	}
out:
	rig_down(&r);
}

/* An illegal command (opcode 0xf): the spec stops the command buffer
 * (CmdBufRun = 0) and logs ILLEGAL_COMMAND_ERROR; the queue would then
 * replace it and restart (-EIO to its issuer).  QEMU 7.2 skips it and goes
 * on: the issuer gets 0.  Either way the invalidation queued behind it
 * runs (a DMA proves it). */
static void illegal_command(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_amd_stats st;
	struct ik_gather g;
	struct ik_amd_plan p;
	ik_u64 bus, cmds[2 * (1 + IK_AMD_PLAN_MAX)];
	ik_u8 *page;
	int err;

	(void)arg;
	if (rig_up(h, &r, 1, 39)) {
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page, IOVA_4K), out);	/* cached */
		ik_gather_init(&g);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(r.s[0].pt, IOVA_4K, PG, &g), (ik_s64)PG, out);
		HIL_CHECK_EQ_GOTO(h, ik_amd_plan_unmap(&r.s[0].t, &g, &p), 0, out);
		cmds[0] = (ik_u64)0xf << 60;	/* opcode 0xf: illegal */
		cmds[1] = 0;
		for (unsigned i = 0; i < p.n; i++)
			HIL_CHECK_EQ_GOTO(h, ik_amd_cmd_encode(&p.c[i], &cmds[2 + 2 * i]), 0, out);
		err = ik_cmdq_issue(ik_amd_queue(r.u), cmds, 1 + p.n, IK_CMDQ_SYNC);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(r.s[0].pt, &g), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_amd_get_stats(r.u, &st), 0, out);
		hil_diag("illegal command: issue %s, CmdBufRun stops %llu, Status %#x",
			 ik_strerror(err), (unsigned long long)st.cmd_stops,
			 ik_mmio_read32(&h->iommu, IK_AMD_REG_STATUS));
		HIL_CHECK_EQ_GOTO(h, err, 0, out);	/* the spec: -EIO */
		HIL_CHECK_EQ_GOTO(h, st.cmd_stops, 0, out);
		HIL_CHECK_GOTO(h, ik_mmio_read32(&h->iommu, IK_AMD_REG_STATUS) &
					  IK_AMD_STS_CMDBUF_RUN, out);
		HIL_CHECK_EQ_GOTO(h, evt_tail(h), 0, out);
		departs("an illegal command does not stop the command buffer (CmdBufRun stays "
			"1, no ILLEGAL_COMMAND_ERROR event)");
		/* the invalidation behind it ran: the DMA reaches nothing */
		hil_fill(page, PG, POISON);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page, PG, POISON), PG, out);
		HIL_CHECK_EQ_GOTO(h, ik_amd_issue(r.u, NULL, 0, true), 0, out);
	}
out:
	rig_down(&r);
}

/* INVALIDATE_IOMMU_PAGES of one page (S = 0): the spec may leave another
 * page's cached translation.  QEMU 7.2 drops every translation of the
 * DomainID: the other page's new mapping is used at once. */
static void inv_pages_flushes_domain(struct hil *h, const void *arg)
{
	struct rig r;
	struct ik_amd_plan p;
	struct ik_gather g;
	ik_u64 bus, bus2;
	ik_u8 *page, *page2;

	(void)arg;
	if (rig_up(h, &r, 1, 39)) {
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, 2 * PG, &page, &bus), 0, out);
		HIL_CHECK_EQ_GOTO(h, rig_buf(&r, PG, &page2, &bus2), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K, bus, 2 * PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		HIL_CHECK_GOTO(h, round_trip(&r, page + PG, IOVA_4K + PG), out);	/* cached */
		/* page 2 remapped without an invalidation of its own */
		ik_gather_init(&g);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(r.s[0].pt, IOVA_4K + PG, PG, &g), (ik_s64)PG,
				  out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(r.s[0].pt, &g), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(r.s[0].pt, IOVA_4K + PG, bus2, PG,
						    IK_PROT_READ | IK_PROT_WRITE), 0, out);
		/* the planned invalidation of page 1 only: S = 0 */
		HIL_CHECK_EQ_GOTO(h, ik_amd_plan_range(&r.s[0].t, IOVA_4K, PG, false, &p), 0, out);
		HIL_CHECK_EQ_GOTO(h, p.n, 1, out);
		HIL_CHECK_EQ_GOTO(h, p.c[0].s, 0, out);
		HIL_CHECK_EQ_GOTO(h, p.c[0].addr, IOVA_4K, out);
		HIL_CHECK_EQ_GOTO(h, ik_amd_plan_issue(ik_amd_queue(r.u), &p), 0, out);
		hil_fill(page + PG, PG, POISON);
		hil_fill(page2, PG, POISON2);
		HIL_CHECK_EQ_GOTO(h, wr(&r, IOVA_4K + PG, 64), 0, out);
		HIL_CHECK_EQ_GOTO(h, hil_verify(page + PG, PG, POISON), PG, out);
		HIL_CHECK_GOTO(h, hil_verify(page2, 64, POISON2) != 64, out);
		departs("INVALIDATE_IOMMU_PAGES of one page (S = 0) drops every cached "
			"translation of the DomainID");
	}
out:
	rig_down(&r);
}

/* EFR.PPRSup: the unit has a PPR log.  The core programs and enables it
 * and waits for Status.PprLogRun. */
static void ppr_log(struct hil *h, const void *arg)
{
	struct ik_amd_config c;
	struct ik_amd *u = NULL;
	struct ik_amd_ppr p;
	long live = bm_pool_live();
	int err;

	(void)arg;
	if (!(ik_mmio_read64(&h->iommu, IK_AMD_REG_EFR) & 0x2))
		HIL_SKIP(h, "no EFR.PPRSup");
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.mmio = &h->iommu;
	c.dma = &h->dma;
	c.max_devid = h->rid;
	c.timeout_ns = 100000000ull;
	HIL_CHECK_EQ(h, ik_amd_create(&c, &u), 0);
	err = ik_amd_enable(u);
	hil_diag("enable with the PPR log: %s; PPR Log Base %#llx Status %#x", ik_strerror(err),
		 (unsigned long long)ik_mmio_read64(&h->iommu, IK_AMD_REG_PPRLOG_BASE),
		 ik_mmio_read32(&h->iommu, IK_AMD_REG_STATUS));
	if (!err) {
		HIL_CHECK_GOTO(h, ik_amd_has_ppr(u), out);
		HIL_CHECK_EQ_GOTO(h, ik_amd_ppr_pop(u, &p), -ENOENT, out);
	} else {
		HIL_CHECK_EQ_GOTO(h, err, -ETIMEDOUT, out);
		HIL_CHECK_EQ_GOTO(h, ik_mmio_read64(&h->iommu, IK_AMD_REG_CONTROL) &
					     (IK_AMD_CTRL_IOMMU_EN | IK_AMD_CTRL_CMDBUF_EN), 0, out);
		departs("EFR.PPRSup is set but Status.PprLogRun never follows PPRLogEn: "
			"ik_amd_enable() times out and switches the IOMMU off again (the other "
			"checks use IK_AMD_CFG_NO_PPR)");
	}
out:
	ik_amd_destroy(u);
	HIL_CHECK_EQ(h, bm_pool_live(), live);
}

static const ik_u32 ias30 = 30, ias39 = 39, ias48 = 48;
static const ik_u64 sz2m = SZ_2M, sz1g = SZ_1G;

static const struct hil_check checks[] = {
	{ "ivrs_parsed_by_the_library_describes_the_iommu_and_edu", ivrs_describes_the_iommu,
	  NULL, 0 },
	{ "bringup_and_teardown_twice", bringup_and_teardown_twice, NULL, 0 },
	{ "dma_4k_both_ways_through_a_mode_2_table", dma_4k_mode, &ias30, HIL_NEEDS_EDU },
	{ "dma_4k_both_ways_through_a_mode_3_table", dma_4k_mode, &ias39, HIL_NEEDS_EDU },
	{ "dma_4k_both_ways_through_a_mode_4_table", dma_4k_mode, &ias48, HIL_NEEDS_EDU },
	{ "dma_through_a_2m_page_then_unmapped", dma_superpage, &sz2m, HIL_NEEDS_EDU },
	{ "dma_through_a_1g_page_then_unmapped", dma_superpage, &sz1g, HIL_NEEDS_EDU },
	{ "read_only_mapping_reads_and_drops_the_write", read_only_mapping, NULL, HIL_NEEDS_EDU },
	{ "unmap_and_planned_invalidation_block_dma (QEMU 7.2 departs: raises no fault for a "
	  "not-present PTE)", unmap_blocks_dma, NULL, HIL_NEEDS_EDU },
	{ "dte_switch_between_domains_with_the_planned_invalidations", dte_switch, NULL,
	  HIL_NEEDS_EDU },
	{ "dte_switch_with_only_invalidate_devtab_entry (QEMU 7.2 departs: keys its cache by "
	  "device rather than DomainID)", dte_switch_devtab_only, NULL, HIL_NEEDS_EDU },
	{ "iova_above_the_dte_mode (QEMU 7.2 departs: ignores IOVA bits above the DTE's mode)",
	  iova_above_mode, NULL, HIL_NEEDS_EDU },
	{ "event_log_after_a_forbidden_write (QEMU 7.2 departs: never writes the event log)",
	  event_log_never_written, NULL, HIL_NEEDS_EDU },
	{ "illegal_command_and_the_invalidation_behind_it (QEMU 7.2 departs: does not stop on "
	  "an illegal command)", illegal_command, NULL, HIL_NEEDS_EDU },
	{ "invalidate_iommu_pages_of_one_page (QEMU 7.2 departs: flushes the whole domain for "
	  "any INVALIDATE_IOMMU_PAGES)", inv_pages_flushes_domain, NULL, HIL_NEEDS_EDU },
	{ "ppr_log_where_efr_pprsup_says_there_is_one", ppr_log, NULL, 0 },
};

const struct hil_suite hil_suite_amd = HIL_SUITE_FOR(HIL_IOMMU_AMD, "amd", checks);
