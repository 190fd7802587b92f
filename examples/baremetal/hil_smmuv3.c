/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * hil_smmuv3.c - the SMMUv3 checks of the hardware-in-the-loop image
 * (docs/hil.md): QEMU's emulated SMMUv3 (-M virt,iommu=smmuv3) programmed
 * entirely through iommukit, with edu as the DMA master (StreamID h->rid):
 *   - ik_smmu_* (<iommukit/drv/smmuv3.h>): bring-up, the stream table, a CD
 *     table, STEs and CDs, the command queue, the event queue, the
 *     invalidation planner;
 *   - ik_pgtable IK_PT_LPAE_S1 for the translation tables, whose pages come
 *     from the harness's DMA memory through the alloc_table hook;
 *   - ik_iova for the IOVAs.
 * docs/smmuv3-bringup.md walks through the same code.
 *
 * Every check brings its own SMMU instance up (smmu_up) and down
 * (smmu_down: SMMUEN = 0, then everything freed), on the failure paths too.
 *
 * What a DMA proves.  edu ignores IOMMU faults, so a blocked write is proven
 * by memory that kept its seed, and a fault by its event record.  Each edu
 * DMA costs 100 ms of QEMU time; the suite makes 50 of them (counted per
 * check in its comment).  Checks that must show a cached translation first
 * "prime" it with a read (edu reads 64 bytes at +0x100 of the page); the
 * write that follows sends those 64 bytes to +0, so a write that reached
 * the page is told from its seed.
 *
 * QEMU 7.2 facts these checks rely on (hw/arm/smmuv3.c, smmu-common.c,
 * softmmu/physmem.c; see docs/hil.md):
 *   - the IOTLB caches leaves (keyed ASID, IOVA, granule, level) with their
 *     permission; there is no walk cache; the configuration cache holds the
 *     decoded STE + CD per device until CFGI_STE/CFGI_CD/CFGI_ALL; neither
 *     is flushed by SMMUEN = 0 (ik_smmu_reset issues CFGI_ALL and
 *     TLBI_NSNH_ALL);
 *   - a transaction that faults goes to QEMU's "unassigned" region, which
 *     the memory core retries 4 bytes at a time, translating again each
 *     time: a faulting DMA of n bytes gives n / 4 event records (hardware
 *     gives one per transaction), hence the short faulting transfers here.
 */
#include "hil.h"
#include <iommukit/drv/smmuv3.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/iova.h>
#include <iommukit/pgtable.h>

#define SZ_4K 0x1000ull
#define SZ_64K 0x10000ull
#define SZ_2M 0x200000ull
#define SZ_1G 0x40000000ull
#define RAM_BASE 0x40000000ull	/* virt's RAM (128 MiB with -m 128M) */

#define PROT_RW (IK_PROT_READ | IK_PROT_WRITE | IK_PROT_CACHE)
#define PROT_RO (IK_PROT_READ | IK_PROT_CACHE)

#define PRIME_OFF 0x100u	/* where a priming read reads, in the page */
#define PRIME_LEN 64u		/* and how much; also the length of test writes */

/* ================================================================ one SMMU */

struct smmu_ctx {
	struct hil *h;
	struct ik_smmu *s;
	const struct ik_smmu_idr *id;
	ik_u32 sid;
	bool iova_live, cdt_live;
	struct ik_iova_domain iovad;
	struct ik_pgtable *pt;		/* table set A, the stream's at attach */
	ik_u16 asid;			/* its ASID */
	struct ik_smmu_cdtab cdt;	/* one CD (S1CDMax 0: QEMU takes no more) */
	struct ik_smmu_inv_target tgt;	/* stage 1, asid, VMID 0 (no stage 2) */
	bool no_ril;			/* plan as for an SMMU without range TLBIs */
};

/* Table pages from the harness's DMA memory (identity-mapped). */
static void *pt_alloc_table(void *cookie, ik_size size, ik_u64 *iommu_addr)
{
	struct smmu_ctx *c = (struct smmu_ctx *)cookie;
	void *cpu;

	return ik_dma_alloc(&c->h->dma, size, size, &cpu, iommu_addr) ? NULL : cpu;
}

static void pt_free_table(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size)
{
	ik_dma_free(&((struct smmu_ctx *)cookie)->h->dma, cpu, iommu_addr, size);
}

static void pt_clean(void *cookie, void *cpu, ik_u64 iommu_addr, ik_size size)
{
	ik_dma_clean(&((struct smmu_ctx *)cookie)->h->dma, cpu, iommu_addr, size);
}

/* A map that replaces an emptied table by a block frees the table outside a
 * gather: the engine asks for the walk to be invalidated first.  The ASID
 * of the table set being mapped is not passed, so invalidate both of the
 * ASIDs these checks use (1 and 2): correct, if broad. */
static void pt_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	struct smmu_ctx *c = (struct smmu_ctx *)cookie;
	struct ik_smmu_cmd t[2];

	(void)iova;
	(void)size;
	(void)granule;
	IK_ENV_MEMSET(t, 0, sizeof(t));
	t[0].op = t[1].op = IK_SMMU_CMD_TLBI_NH_ASID;
	t[0].asid = 1;
	t[1].asid = 2;
	(void)ik_smmu_issue(c->s, t, 2);
}

static const struct ik_pgtable_hooks pt_hooks = {
	.alloc_table = pt_alloc_table,
	.free_table = pt_free_table,
	.clean = pt_clean,
	.flush_walk = pt_flush_walk,
};

/* A stage-1 table set the SMMU can walk: 48-bit IOVAs (T0SZ 16: QEMU takes
 * 16..39), 44-bit output (the SMMU's OAS), 4K pages and 2M / 1G blocks.
 * Not coherent: the harness's DMA memory has a clean hook, so the SMMU
 * core treats the SMMU as non-coherent and so must the tables. */
static int pt_new(struct smmu_ctx *c, struct ik_pgtable **pt)
{
	struct ik_pgtable_cfg pc;

	IK_ENV_MEMSET(&pc, 0, sizeof(pc));
	pc.fmt = IK_PT_LPAE_S1;
	pc.ias = 48;
	pc.oas = c->id->oas < 48 ? c->id->oas : 48;
	pc.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
	pc.coherent = ik_smmu_coherent(c->id, &c->h->dma);
	pc.hooks = &pt_hooks;
	pc.cookie = c;
	return ik_pgtable_create(&pc, pt);
}

/* Make table set `pt` with `asid` the CD of the stream's CD table; the
 * writer orders the words and issues CFGI_CD + CMD_SYNC for our stream. */
static int attach_cd(struct smmu_ctx *c, struct ik_pgtable *pt, ik_u16 asid, ik_u64 cd[8])
{
	struct ik_smmu_cd_config cc;

	IK_ENV_MEMSET(&cc, 0, sizeof(cc));
	cc.pt = pt;
	cc.asid = asid;
	return ik_smmu_cd_build(c->id, &cc, cd);
}

/*
 * Bring-up: probe and allocate (ik_smmu_create; a linear stream table of
 * 2^sid_bits STEs if `linear`, else the core's choice), reset (ik_smmu_reset: CR0 =
 * 0 ... queues, CFGI_ALL + TLBI_NSNH_ALL, SMMUEN), an IOVA space, table set
 * A, a one-CD table with A's CD, and the stream's STE: stage 1 through that
 * CD table.  0, or the first error (smmu_down() frees what was made).
 */
static int smmu_up_table(struct smmu_ctx *c, struct hil *h, bool linear, unsigned sid_bits)
{
	struct ik_smmu_config sc;
	struct ik_iova_config ic;
	struct ik_smmu_cdtab_config tc;
	struct ik_smmu_ste_config stc;
	ik_u64 cd[8], ste[8];
	int err;

	IK_ENV_MEMSET(c, 0, sizeof(*c));
	c->h = h;
	c->sid = h->rid;
	c->asid = 1;
	IK_ENV_MEMSET(&sc, 0, sizeof(sc));
	sc.mmio = &h->iommu;
	sc.dma = &h->dma;
	sc.linear = linear;
	sc.sid_bits = sid_bits;
	err = ik_smmu_create(&sc, &c->s);
	if (err)
		return err;
	c->id = ik_smmu_get_idr(c->s);
	err = ik_smmu_reset(c->s);
	if (err)
		return err;

	IK_ENV_MEMSET(&ic, 0, sizeof(ic));
	ic.granule = SZ_4K;
	ic.start_pfn = 1;			/* IOVA 0 stays unused */
	ic.end_pfn = (1ull << (48 - 12)) - 1;	/* the table set's 48 bits */
	ic.flags = IK_IOVA_CFG_NO_RCACHE;	/* one CPU: the tree is enough */
	err = ik_iova_init(&c->iovad, &ic);
	if (err)
		return err;
	c->iova_live = true;

	err = pt_new(c, &c->pt);
	if (err)
		return err;
	IK_ENV_MEMSET(&tc, 0, sizeof(tc));
	tc.idr = c->id;
	tc.dma = &h->dma;
	tc.log2_cds = 0;
	tc.fmt = IK_SMMU_S1FMT_LINEAR;
	err = ik_smmu_cdtab_init(&c->cdt, &tc);
	if (err)
		return err;
	c->cdt_live = true;
	err = attach_cd(c, c->pt, c->asid, cd);
	if (!err)
		err = ik_smmu_write_cd(c->s, &c->cdt, 0, cd, &c->sid, 1);
	if (err)
		return err;
	IK_ENV_MEMSET(&stc, 0, sizeof(stc));
	stc.config = IK_SMMU_STE_CFG_S1;
	ik_smmu_cdtab_ste(&c->cdt, &stc);
	err = ik_smmu_ste_build(c->id, &stc, ste);
	if (!err)
		err = ik_smmu_write_ste(c->s, c->sid, ste);
	c->tgt.stage = 1;
	c->tgt.asid = c->asid;
	c->tgt.vmid = 0;
	return err;
}

/* The usual bring-up: the core's default stream table (2-level, split 8,
 * 16 StreamID bits: one 16 KiB L2 table holds edu's STE). */
static int smmu_up(struct smmu_ctx *c, struct hil *h)
{
	return smmu_up_table(c, h, false, 0);
}

/* Teardown: SMMUEN = 0 first (the SMMU stops reading tables and queues),
 * then free everything.  Fails the check if the SMMU did not acknowledge. */
static void smmu_down(struct smmu_ctx *c)
{
	struct hil *h = c->h;

	if (c->s) {
		int err = ik_smmu_disable(c->s);

		if (err)
			hil_fail_values(h, HIL_FILE, __LINE__, "ik_smmu_disable(c->s) == 0",
					(ik_u64)(ik_s64)err, 0);
		else if (ik_mmio_read32(&h->iommu, IK_SMMU_CR0ACK) != 0)
			hil_fail(h, HIL_FILE, __LINE__, "CR0ACK == 0 after ik_smmu_disable");
		ik_smmu_destroy(c->s);
		c->s = NULL;
	}
	if (c->cdt_live)
		ik_smmu_cdtab_fini(&c->cdt);
	c->cdt_live = false;
	ik_pgtable_destroy(c->pt);
	c->pt = NULL;
	if (c->iova_live)
		ik_iova_destroy(&c->iovad);
	c->iova_live = false;
}

/* An IOVA range of `bytes` (a power of two of pages), aligned to its size
 * (so 2M and 1G ranges can hold blocks). */
static int iova_get(struct smmu_ctx *c, ik_u64 bytes, ik_u64 *iova)
{
	ik_u64 pfn = 0;
	int err = ik_iova_alloc(&c->iovad, bytes >> 12, IK_U64_MAX, IK_IOVA_SIZE_ALIGNED, &pfn);

	*iova = pfn << 12;
	return err;
}

static void iova_put(struct smmu_ctx *c, ik_u64 iova)
{
	if (iova && c->iova_live)
		(void)ik_iova_free(&c->iovad, iova >> 12);
}

/* DMA memory for buffers: zeroed, aligned to its size (by address). */
static ik_u8 *buf_get(struct hil *h, ik_size size, ik_u64 *pa)
{
	void *p = NULL;

	return ik_dma_alloc(&h->dma, size, size, &p, pa) ? NULL : (ik_u8 *)p;
}

static void buf_put(struct hil *h, ik_u8 *p, ik_u64 pa, ik_size size)
{
	ik_dma_free(&h->dma, p, pa, size);
}

/* ================================================================ helpers */

static int dma_to_ram(struct smmu_ctx *c, ik_u32 off, ik_u64 bus, ik_u32 len)
{
	return hil_edu_dma_to_ram(&c->h->edu, off, bus, len, c->h->timeout_ns);
}

static int dma_from_ram(struct smmu_ctx *c, ik_u64 bus, ik_u32 off, ik_u32 len)
{
	return hil_edu_dma_from_ram(&c->h->edu, bus, off, len, c->h->timeout_ns);
}

/* Does p[0..n) hold the bytes hil_fill(seed) writes at [at, at + n)? */
static ik_u8 scratch[4096];

static bool slice_is(const void *p, ik_size n, ik_u32 seed, ik_size at)
{
	if (at + n > sizeof(scratch))
		return false;
	hil_fill(scratch, sizeof(scratch), seed);
	return hil_memdiff(p, scratch + at, n) == n;
}

static bool streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* The hardware view of an IOVA: the walker reads the tables by their IOMMU
 * (= physical) addresses, as the SMMU does. */
static int mem_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	(void)ctx;
	*val = *(const volatile ik_u64 *)(ik_uptr)addr;
	return 0;
}

static const struct ik_pt_mem direct_mem = { mem_read64, NULL, NULL };

static int walk(const struct ik_pgtable *pt, ik_u64 iova, unsigned access,
		struct ik_pt_walk_result *r)
{
	struct ik_pt_walker w;

	ik_pgtable_walker(pt, &w);
	return ik_pt_walk(&w, &direct_mem, iova, access, r);
}

static void cmd_diag(const char *what, const struct ik_smmu_cmd *m)
{
	const char *name = ik_smmu_cmd_name(m->op);

	if (m->op == IK_SMMU_CMD_TLBI_NH_VA)
		hil_diag("  %s %s asid %u addr %#llx tg %u num %u scale %u ttl %u leaf %u", what,
			 name, m->asid, (unsigned long long)m->addr, m->tg, m->num, m->scale,
			 m->ttl, m->leaf);
	else if (m->op == IK_SMMU_CMD_TLBI_NH_ASID)
		hil_diag("  %s %s asid %u", what, name, m->asid);
	else if (m->op == IK_SMMU_CMD_CFGI_STE || m->op == IK_SMMU_CMD_CFGI_CD)
		hil_diag("  %s %s sid %#x ssid %u leaf %u", what, name, m->sid, m->ssid, m->leaf);
	else
		hil_diag("  %s %s", what, name ? name : "?");
}

/* Print what ik_smmu_inv_gather() will issue for g (the same planner call
 * it makes), then issue it and wait for its CMD_SYNC.  With c->no_ril the
 * plan is made for this SMMU's IDR with RIL cleared (an SMMUv3.0 without
 * range invalidation) and issued with ik_smmu_issue(): the planner's other
 * rows, on the same device. */
static int invalidate(struct smmu_ctx *c, const struct ik_pgtable *pt, const struct ik_gather *g,
		      ik_u16 asid)
{
	struct ik_smmu_cmd plan[IK_SMMU_PLAN_MAX_CMDS(16)];
	struct ik_smmu_inv_target t = c->tgt;
	struct ik_smmu_idr id = *c->id;
	int n, i;

	t.asid = asid;
	t.max_tlbi = 16;
	if (c->no_ril)
		id.ril = false;
	hil_diag("gather [%#llx, %#llx) granule %#llx walk %u tables %u%s",
		 (unsigned long long)g->start, (unsigned long long)g->end,
		 (unsigned long long)g->granule, g->walk, g->nr_tables,
		 c->no_ril ? "; planned without RIL" : "");
	n = ik_smmu_plan_inv(&id, pt, g, &t, plan, IK_ARRAY_SIZE(plan));
	for (i = 0; i < n; i++)
		cmd_diag("plan:", &plan[i]);
	if (c->no_ril)	/* the plan ends with CMD_SYNC; ik_smmu_issue adds one */
		return n <= 0 ? n : ik_smmu_issue(c->s, plan, (unsigned)n - 1);
	return ik_smmu_inv_gather(c->s, pt, g, &t);
}

static void event_diag(const struct ik_smmu_event *ev)
{
	hil_diag("event %s (%#x): sid %#x ssv %u ssid %#x addr %#llx rnw %u ind %u pnu %u s2 %u "
		 "class %u stall %u stag %#x overflow %u",
		 ev->name, ev->type, ev->sid, ev->ssv, ev->ssid, (unsigned long long)ev->addr,
		 ev->rnw, ev->ind, ev->pnu, ev->s2, ev->cls, ev->stall, ev->stag, ev->overflow);
	hil_diag("  record %016llx %016llx %016llx %016llx", (unsigned long long)ev->raw[0],
		 (unsigned long long)ev->raw[1], (unsigned long long)ev->raw[2],
		 (unsigned long long)ev->raw[3]);
}

/*
 * Pop every event record.  A record "matches" when it is of `type`, from
 * our stream without a substream, has an InputAddr in [lo, lo + len) and
 * the direction `rnw`; e->first is the first record of all.  The records of
 * one faulting DMA come in address order (QEMU: one per 4-byte retry).
 */
struct evsum {
	unsigned n, match;
	struct ik_smmu_event first;
};

static void events_drain(struct smmu_ctx *c, unsigned type, ik_u64 lo, ik_u64 len, bool rnw,
			 struct evsum *e)
{
	struct ik_smmu_event ev;

	IK_ENV_MEMSET(e, 0, sizeof(*e));
	while (ik_smmu_event_pop(c->s, &ev) == 0) {
		if (!e->n++)
			e->first = ev;
		if (ev.type == type && ev.sid == c->sid && !ev.ssv && ev.has_addr &&
		    ev.addr >= lo && ev.addr - lo < len && ev.rnw == rnw && !ev.s2 &&
		    !ev.overflow)
			e->match++;
	}
	if (e->n) {
		event_diag(&e->first);
		hil_diag("%u record(s), %u of them %s from sid %#x in [%#llx, +%#llx)", e->n,
			 e->match, ik_smmu_event_name(type), c->sid, (unsigned long long)lo,
			 (unsigned long long)len);
	}
}

/* No global error is active (an event queue overflow would be one). */
static bool no_gerror(struct smmu_ctx *c)
{
	struct ik_smmu_gerror ge;
	int a = ik_smmu_gerror_poll(c->s, &ge);

	if (a)
		hil_diag("GERROR active %#x", (unsigned)a);
	return a == 0;
}

/* The faulting write of the fault checks: 64 bytes from edu to `bus`,
 * expected to be blocked with `type` records; `page` must keep `seed`. */
static bool write_faults(struct smmu_ctx *c, ik_u64 bus, const ik_u8 *page, ik_u32 seed,
			 unsigned type)
{
	struct hil *h = c->h;
	struct evsum e;

	HIL_CHECK_EQ_GOTO(h, dma_to_ram(c, 0, bus, PRIME_LEN), 0, fail);
	HIL_CHECK_EQ_GOTO(h, hil_verify(page, SZ_4K, seed), SZ_4K, fail); /* untouched */
	events_drain(c, type, bus, PRIME_LEN, false, &e);
	HIL_CHECK_GOTO(h, e.n > 0, fail);
	HIL_CHECK_EQ_GOTO(h, e.match, e.n, fail);	/* all of them ours */
	HIL_CHECK_EQ_GOTO(h, e.first.type, type, fail);
	HIL_CHECK_EQ_GOTO(h, e.first.addr, bus, fail);	/* the first access */
	HIL_CHECK_GOTO(h, no_gerror(c), fail);
	return true;
fail:
	return false;
}

/* ================================================================ checks */

/* Bring-up and teardown on their own: after ik_smmu_reset the SMMU
 * acknowledges SMMUEN, EVTQEN and CMDQEN, the queue completes a CMD_SYNC,
 * no global error is active; after ik_smmu_disable CR0ACK is 0 (DMA is
 * untranslated again).  No DMA. */
static void bringup_enables_queues_and_translation_and_disable_stops_them(struct hil *h,
									  const void *arg)
{
	struct smmu_ctx c;
	struct ik_smmu_stats st;
	ik_u32 ack;

	(void)arg;
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	ack = ik_mmio_read32(&h->iommu, IK_SMMU_CR0ACK);
	hil_diag("CR0ACK %#x CR1 %#x CR2 %#x STRTAB_BASE %#llx STRTAB_BASE_CFG %#x", ack,
		 ik_mmio_read32(&h->iommu, IK_SMMU_CR1), ik_mmio_read32(&h->iommu, IK_SMMU_CR2),
		 (unsigned long long)ik_mmio_read64(&h->iommu, IK_SMMU_STRTAB_BASE),
		 ik_mmio_read32(&h->iommu, IK_SMMU_STRTAB_BASE_CFG));
	HIL_CHECK_EQ_GOTO(h, ack, IK_SMMU_CR0_SMMUEN | IK_SMMU_CR0_EVTQEN | IK_SMMU_CR0_CMDQEN, out);
	HIL_CHECK_GOTO(h, ik_smmu_cmdq(c.s) != NULL, out);
	HIL_CHECK_EQ_GOTO(h, ik_smmu_issue(c.s, NULL, 0), 0, out);	/* a CMD_SYNC alone */
	HIL_CHECK_GOTO(h, no_gerror(&c), out);
	ik_smmu_get_stats(c.s, &st);
	hil_diag("stats: issues %llu ste_writes %llu cd_writes %llu doorbells %llu errors %llu",
		 (unsigned long long)st.issues, (unsigned long long)st.ste_writes,
		 (unsigned long long)st.cd_writes, (unsigned long long)st.cmdq.doorbells,
		 (unsigned long long)st.cmdq.errors);
	HIL_CHECK_EQ_GOTO(h, st.ste_writes, 1, out);
	HIL_CHECK_EQ_GOTO(h, st.cd_writes, 1, out);
	HIL_CHECK_EQ_GOTO(h, st.cmdq.errors, 0, out);
out:
	smmu_down(&c);
}

/* 1. Two 4K pages behind one IOVA allocation, RAM -> edu from one, edu ->
 * RAM into the other, 4000 bytes each: the destination holds exactly the
 * source bytes, its other bytes and the source are unchanged, no event.
 * The walker agrees with where the bytes went.  2 DMAs. */
static void dma_through_4k_pages_both_directions(struct hil *h, const void *arg)
{
	struct smmu_ctx c;
	struct ik_pt_walk_result r;
	struct ik_gather g;
	struct evsum e;
	ik_u8 *src = NULL, *dst = NULL;
	ik_u64 src_pa = 0, dst_pa = 0, iova = 0;

	(void)arg;
	ik_gather_init(&g);
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	src = buf_get(h, SZ_4K, &src_pa);
	dst = buf_get(h, SZ_4K, &dst_pa);
	HIL_CHECK_GOTO(h, src && dst, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, 2 * SZ_4K, &iova), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova, src_pa, SZ_4K, PROT_RW), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova + SZ_4K, dst_pa, SZ_4K, PROT_RW), 0, out);
	HIL_CHECK_EQ_GOTO(h, walk(c.pt, iova + SZ_4K + 0x20, IK_ACCESS_WRITE, &r), 0, out);
	HIL_CHECK_EQ_GOTO(h, r.fault, IK_PT_FAULT_NONE, out);
	HIL_CHECK_EQ_GOTO(h, r.oa, dst_pa + 0x20, out);
	HIL_CHECK_EQ_GOTO(h, r.pgsize, SZ_4K, out);
	hil_diag("iova %#llx -> src %#llx, +4K -> dst %#llx (pte %#llx at %#llx)",
		 (unsigned long long)iova, (unsigned long long)src_pa,
		 (unsigned long long)dst_pa, (unsigned long long)r.pte,
		 (unsigned long long)r.pte_addr);
	hil_fill(src, SZ_4K, 0x5101);
	hil_fill(dst, SZ_4K, 0x5102);
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, iova + 0x10, 0, 4000), 0, out);
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, iova + SZ_4K + 0x20, 4000), 0, out);
	HIL_CHECK_EQ_GOTO(h, hil_memdiff(dst + 0x20, src + 0x10, 4000), 4000, out);
	HIL_CHECK_GOTO(h, slice_is(dst, 0x20, 0x5102, 0), out);
	HIL_CHECK_GOTO(h, slice_is(dst + 0x20 + 4000, SZ_4K - 0x20 - 4000, 0x5102, 0x20 + 4000),
		       out);
	HIL_CHECK_EQ_GOTO(h, hil_verify(src, SZ_4K, 0x5101), SZ_4K, out);
	events_drain(&c, IK_SMMU_EVT_F_TRANSLATION, 0, 0, false, &e);
	HIL_CHECK_EQ_GOTO(h, e.n, 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, iova, 2 * SZ_4K, &g), (ik_s64)(2 * SZ_4K), out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&c, c.pt, &g, c.asid), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(c.pt, &g), 0, out);
out:
	iova_put(&c, iova);
	smmu_down(&c);
	buf_put(h, src, src_pa, SZ_4K);
	buf_put(h, dst, dst_pa, SZ_4K);
}

/* 2. Three pages that are not physically contiguous (nor in address order)
 * mapped back to back with one ik_pgtable_map_sg(): the walker finds each
 * behind its 4K of IOVA; a 4095-byte read across the first IOVA page
 * boundary and a 4095-byte write across the second move exactly the bytes
 * of the right pages.  2 DMAs. */
static void map_sg_scattered_pages_behind_one_iova_range(struct hil *h, const void *arg)
{
	struct smmu_ctx c;
	struct ik_pt_walk_result r;
	struct ik_gather g;
	struct ik_seg segs[3];
	ik_u8 *pg[5] = { NULL, NULL, NULL, NULL, NULL };
	ik_u64 pa[5] = { 0, 0, 0, 0, 0 }, iova = 0, mapped = 0;
	ik_u8 *p0, *p1, *p2;	/* the pages at IOVA +0, +4K, +8K */
	unsigned i;

	(void)arg;
	ik_gather_init(&g);
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	for (i = 0; i < 5; i++) {
		pg[i] = buf_get(h, SZ_4K, &pa[i]);
		HIL_CHECK_GOTO(h, pg[i], out);
	}
	/* pages 4, 0, 2: descending then ascending, never adjacent */
	p0 = pg[4];
	p1 = pg[0];
	p2 = pg[2];
	segs[0].paddr = pa[4];
	segs[1].paddr = pa[0];
	segs[2].paddr = pa[2];
	segs[0].len = segs[1].len = segs[2].len = SZ_4K;
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, 4 * SZ_4K, &iova), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map_sg(c.pt, iova, segs, 3, PROT_RW, &mapped), 0, out);
	HIL_CHECK_EQ_GOTO(h, mapped, 3 * SZ_4K, out);
	for (i = 0; i < 3; i++) {
		HIL_CHECK_EQ_GOTO(h, walk(c.pt, iova + i * SZ_4K + 0x123, IK_ACCESS_WRITE, &r), 0,
				  out);
		HIL_CHECK_EQ_GOTO(h, r.fault, IK_PT_FAULT_NONE, out);
		HIL_CHECK_EQ_GOTO(h, r.oa, segs[i].paddr + 0x123, out);
		hil_diag("iova %#llx -> %#llx", (unsigned long long)(iova + i * SZ_4K),
			 (unsigned long long)segs[i].paddr);
	}
	hil_fill(p0, SZ_4K, 0x5201);
	hil_fill(p1, SZ_4K, 0x5202);
	hil_fill(p2, SZ_4K, 0x5203);
	/* read: p0[0x800..0x1000) ++ p1[0..0x7ff) -> edu[0..0xfff) */
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, iova + 0x800, 0, 0xfff), 0, out);
	/* write: edu[0..0xfff) -> p1[0x800..0x1000) ++ p2[0..0x7ff) */
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, iova + SZ_4K + 0x800, 0xfff), 0, out);
	HIL_CHECK_GOTO(h, slice_is(p1, 0x800, 0x5202, 0), out);		/* kept */
	HIL_CHECK_GOTO(h, slice_is(p1 + 0x800, 0x800, 0x5201, 0x800), out);	/* from p0 */
	HIL_CHECK_GOTO(h, slice_is(p2, 0x7ff, 0x5202, 0), out);		/* from p1 */
	HIL_CHECK_GOTO(h, slice_is(p2 + 0x7ff, SZ_4K - 0x7ff, 0x5203, 0x7ff), out);
	HIL_CHECK_EQ_GOTO(h, hil_verify(p0, SZ_4K, 0x5201), SZ_4K, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, iova, 3 * SZ_4K, &g), (ik_s64)(3 * SZ_4K), out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&c, c.pt, &g, c.asid), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(c.pt, &g), 0, out);
out:
	iova_put(&c, iova);
	smmu_down(&c);
	for (i = 0; i < 5; i++)
		buf_put(h, pg[i], pa[i], SZ_4K);
}

/* 3. A 2 MiB block over the 2 MiB region holding buffer A, and a 1 GiB block
 * over all of RAM (PA 0x40000000) holding buffer B: the walker sees one
 * block entry of each size; RAM -> edu -> RAM through both in both
 * directions (A via 2M -> edu -> B via 1G, then B via 1G -> edu -> A via
 * 2M).  Nothing but the two buffers is written.  4 DMAs. */
static void dma_through_2m_and_1g_block_entries(struct hil *h, const void *arg)
{
	struct smmu_ctx c;
	struct ik_pt_walk_result r;
	struct ik_pgtable_stats st;
	struct ik_gather g;
	ik_u8 *a = NULL, *b = NULL;
	ik_u64 a_pa = 0, b_pa = 0, iova2m = 0, iova1g = 0, base2m, base1g = RAM_BASE;
	ik_u64 a_bus, b_bus;

	(void)arg;
	ik_gather_init(&g);
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	a = buf_get(h, SZ_4K, &a_pa);
	b = buf_get(h, SZ_4K, &b_pa);
	HIL_CHECK_GOTO(h, a && b, out);
	base2m = a_pa & ~(SZ_2M - 1);
	HIL_CHECK_GOTO(h, b_pa >= base1g && b_pa - base1g < SZ_1G, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, SZ_2M, &iova2m), 0, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, SZ_1G, &iova1g), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova2m, base2m, SZ_2M, PROT_RW), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova1g, base1g, SZ_1G, PROT_RW), 0, out);
	a_bus = iova2m + (a_pa - base2m);
	b_bus = iova1g + (b_pa - base1g);
	/* the hardware view: block entries, of 2M (ARM level 2) and 1G (level 1) */
	HIL_CHECK_EQ_GOTO(h, walk(c.pt, a_bus, IK_ACCESS_WRITE, &r), 0, out);
	hil_diag("iova %#llx: pgsize %#llx pte %#llx (type %llu) at %#llx -> %#llx",
		 (unsigned long long)a_bus, (unsigned long long)r.pgsize,
		 (unsigned long long)r.pte, (unsigned long long)(r.pte & 3),
		 (unsigned long long)r.pte_addr, (unsigned long long)r.oa);
	HIL_CHECK_EQ_GOTO(h, r.fault, IK_PT_FAULT_NONE, out);
	HIL_CHECK_EQ_GOTO(h, r.pgsize, SZ_2M, out);
	HIL_CHECK_EQ_GOTO(h, r.pte & IK_LPAE_PTE_TYPE_MASK, IK_LPAE_PTE_TYPE_BLOCK, out);
	HIL_CHECK_EQ_GOTO(h, r.oa, a_pa, out);
	HIL_CHECK_EQ_GOTO(h, walk(c.pt, b_bus, IK_ACCESS_WRITE, &r), 0, out);
	hil_diag("iova %#llx: pgsize %#llx pte %#llx (type %llu) at %#llx -> %#llx",
		 (unsigned long long)b_bus, (unsigned long long)r.pgsize,
		 (unsigned long long)r.pte, (unsigned long long)(r.pte & 3),
		 (unsigned long long)r.pte_addr, (unsigned long long)r.oa);
	HIL_CHECK_EQ_GOTO(h, r.fault, IK_PT_FAULT_NONE, out);
	HIL_CHECK_EQ_GOTO(h, r.pgsize, SZ_1G, out);
	HIL_CHECK_EQ_GOTO(h, r.pte & IK_LPAE_PTE_TYPE_MASK, IK_LPAE_PTE_TYPE_BLOCK, out);
	HIL_CHECK_EQ_GOTO(h, r.oa, b_pa, out);
	/* root + one level-1 table for both (same 512 GiB) + one level-2 table:
	 * no level-3 table was needed */
	ik_pgtable_get_stats(c.pt, &st);
	hil_diag("table pages live %llu", (unsigned long long)st.tables_live);

	hil_fill(a, SZ_4K, 0x5301);
	hil_fill(b, SZ_4K, 0x5302);
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, a_bus, 0, 4000), 0, out);	/* 2M block read */
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, b_bus, 4000), 0, out);		/* 1G block write */
	HIL_CHECK_GOTO(h, slice_is(b, 4000, 0x5301, 0), out);
	HIL_CHECK_GOTO(h, slice_is(b + 4000, SZ_4K - 4000, 0x5302, 4000), out);
	hil_fill(b, SZ_4K, 0x5303);
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, b_bus + 0x40, 0, 4000), 0, out);	/* 1G read */
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, a_bus + 0x40, 4000), 0, out);	/* 2M write */
	HIL_CHECK_GOTO(h, slice_is(a + 0x40, 4000, 0x5303, 0x40), out);
	HIL_CHECK_GOTO(h, slice_is(a, 0x40, 0x5301, 0), out);
	HIL_CHECK_GOTO(h, no_gerror(&c), out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, iova2m, SZ_2M, &g), (ik_s64)SZ_2M, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, iova1g, SZ_1G, &g), (ik_s64)SZ_1G, out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&c, c.pt, &g, c.asid), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(c.pt, &g), 0, out);
out:
	iova_put(&c, iova2m);
	iova_put(&c, iova1g);
	smmu_down(&c);
	buf_put(h, a, a_pa, SZ_4K);
	buf_put(h, b, b_pa, SZ_4K);
}

/*
 * 4 and 5. Unmap, then a device write to what was unmapped, with the
 * planned invalidation between them (4) or without it (5):
 *   UK_4K     one 4K page;
 *   UK_64K    a 64 KiB range of sixteen 4K pages (the write goes to the
 *             last page, so the range invalidation must reach it);
 *   UK_HOLE   a 4K hole punched in a 2M block (the block is split into a
 *             table; the neighbour page must stay mapped);
 *   UK_TABLE  2M of 4K pages whose whole level-3 table is unlinked (one
 *             table entry cleared, the table freed only after the sync).
 * Each case first primes the translation with a read (so it is in the
 * SMMU's TLB), then unmaps.  With the invalidation (ik_smmu_inv_gather) the
 * write is a translation fault: the page keeps its seed and the event queue
 * holds F_TRANSLATION records for our StreamID starting at the written
 * IOVA (UK_HOLE: a write to the neighbour page still arrives).  Without it
 * the write reaches the old page through the cached translation: QEMU 7.2
 * caches every leaf it walked until a TLBI (there is no walk cache, so
 * UK_TABLE's stale entry is the leaf of the unlinked table).  The table
 * pages of UK_TABLE are still held by the gather then, as they must be:
 * the stale translation points through memory not yet freed.
 * Two more cases plan as for an SMMU without RIL (SMMUv3.0): the 64 KiB
 * range is sixteen TLBI_NH_VA (TG = 0), one per page; the unlinked table
 * is over the threshold (512 pages > 16) and falls back to TLBI_NH_ASID.
 * 2 DMAs per case (+1 for UK_HOLE with the invalidation).
 */
enum unmap_kind { UK_4K, UK_64K, UK_HOLE, UK_TABLE };

struct unmap_case {
	enum unmap_kind kind;
	bool invalidate;
	bool no_ril;	/* plan as for an SMMU without RIL (see invalidate()) */
};

static const struct unmap_case uc_4k_inv = { UK_4K, true, false },
			       uc_64k_inv = { UK_64K, true, false },
			       uc_hole_inv = { UK_HOLE, true, false },
			       uc_table_inv = { UK_TABLE, true, false },
			       uc_4k_stale = { UK_4K, false, false },
			       uc_64k_stale = { UK_64K, false, false },
			       uc_hole_stale = { UK_HOLE, false, false },
			       uc_table_stale = { UK_TABLE, false, false },
			       uc_64k_inv_noril = { UK_64K, true, true },
			       uc_table_inv_noril = { UK_TABLE, true, true };

static void unmap_then_device_write(struct hil *h, const void *arg)
{
	const struct unmap_case *uc = (const struct unmap_case *)arg;
	struct smmu_ctx c;
	struct ik_pt_walk_result r;
	struct ik_gather g;
	struct evsum e;
	ik_u8 *buf = NULL, *page, *nb = NULL;
	ik_u64 buf_pa = 0, iova = 0, page_pa, target, map_size, unmap_at, unmap_size, base;
	ik_size buf_size;
	const ik_u32 seed = 0x5400u + (ik_u32)uc->kind, nb_seed = 0x54f0u;
	bool synced = false;

	ik_gather_init(&g);
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	c.no_ril = uc->no_ril;
	switch (uc->kind) {
	case UK_4K:
		buf_size = SZ_4K;
		map_size = SZ_4K;
		break;
	case UK_64K:
		buf_size = SZ_64K;
		map_size = SZ_64K;
		break;
	case UK_HOLE:
		buf_size = 2 * SZ_4K;	/* the page and its neighbour, one 2M region */
		map_size = SZ_2M;
		break;
	default:
		buf_size = SZ_4K;
		map_size = SZ_2M;
		break;
	}
	buf = buf_get(h, buf_size, &buf_pa);
	HIL_CHECK_GOTO(h, buf, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, map_size, &iova), 0, out);
	switch (uc->kind) {
	case UK_4K:
	case UK_64K:
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova, buf_pa, map_size, PROT_RW), 0, out);
		page_pa = buf_pa + map_size - SZ_4K;	/* the last page */
		target = iova + map_size - SZ_4K;
		unmap_at = iova;
		unmap_size = map_size;
		break;
	case UK_HOLE:
		base = buf_pa & ~(SZ_2M - 1);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova, base, SZ_2M, PROT_RW), 0, out);
		page_pa = buf_pa;
		target = iova + (buf_pa - base);
		unmap_at = target;
		unmap_size = SZ_4K;
		nb = buf + SZ_4K;
		hil_fill(nb, SZ_4K, nb_seed);
		break;
	default:
		base = buf_pa & ~(SZ_2M - 1);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_map_pages(c.pt, iova, base, SZ_4K, 512, PROT_RW), 0,
				  out);
		page_pa = buf_pa;
		target = iova + (buf_pa - base);
		unmap_at = iova;
		unmap_size = SZ_2M;
		break;
	}
	page = buf + (page_pa - buf_pa);
	HIL_CHECK_EQ_GOTO(h, walk(c.pt, target, IK_ACCESS_WRITE, &r), 0, out);
	HIL_CHECK_EQ_GOTO(h, r.fault, IK_PT_FAULT_NONE, out);
	HIL_CHECK_EQ_GOTO(h, r.oa, page_pa, out);
	HIL_CHECK_EQ_GOTO(h, r.pgsize, uc->kind == UK_HOLE ? SZ_2M : SZ_4K, out);
	hil_fill(page, SZ_4K, seed);

	/* prime: the SMMU walks and caches the translation of `target` */
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, target + PRIME_OFF, 0, PRIME_LEN), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, unmap_at, unmap_size, &g), (ik_s64)unmap_size,
			  out);
	HIL_CHECK_EQ_GOTO(h, walk(c.pt, target, IK_ACCESS_WRITE, &r), 0, out);
	HIL_CHECK_EQ_GOTO(h, r.fault, IK_PT_FAULT_TRANSLATION, out);	/* gone from the tables */
	if (uc->kind == UK_TABLE) {
		HIL_CHECK_GOTO(h, g.walk, out);
		HIL_CHECK_EQ_GOTO(h, g.nr_tables, 1, out);	/* the unlinked table waits */
	}
	if (uc->kind == UK_HOLE) {
		HIL_CHECK_GOTO(h, g.walk, out);			/* the block was split */
		HIL_CHECK_EQ_GOTO(h, walk(c.pt, target + SZ_4K, IK_ACCESS_WRITE, &r), 0, out);
		HIL_CHECK_EQ_GOTO(h, r.fault, IK_PT_FAULT_NONE, out);
		HIL_CHECK_EQ_GOTO(h, r.pgsize, SZ_4K, out);
	}

	if (uc->invalidate) {
		HIL_CHECK_EQ_GOTO(h, invalidate(&c, c.pt, &g, c.asid), 0, out);
		HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(c.pt, &g), 0, out);
		synced = true;
		HIL_CHECK_GOTO(h, write_faults(&c, target, page, seed, IK_SMMU_EVT_F_TRANSLATION),
			       out);
		if (nb) {	/* the rest of the split block still translates */
			HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, target + SZ_4K, PRIME_LEN), 0, out);
			HIL_CHECK_GOTO(h, slice_is(nb, PRIME_LEN, seed, PRIME_OFF), out);
			HIL_CHECK_GOTO(h, slice_is(nb + PRIME_LEN, SZ_4K - PRIME_LEN, nb_seed,
						   PRIME_LEN), out);
		}
	} else {
		HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, target, PRIME_LEN), 0, out);
		/* it arrived, through the translation the SMMU still holds */
		HIL_CHECK_GOTO(h, slice_is(page, PRIME_LEN, seed, PRIME_OFF), out);
		HIL_CHECK_GOTO(h, slice_is(page + PRIME_LEN, SZ_4K - PRIME_LEN, seed, PRIME_LEN),
			       out);
		events_drain(&c, IK_SMMU_EVT_F_TRANSLATION, target, PRIME_LEN, false, &e);
		HIL_CHECK_EQ_GOTO(h, e.n, 0, out);
		hil_diag("QEMU used the cached translation of %#llx after the unmap",
			 (unsigned long long)target);
	}
out:
	/* failure paths: whatever the gather holds is invalidated and freed */
	if (!synced && c.s && g.end > g.start)
		(void)invalidate(&c, c.pt, &g, c.asid);
	if (c.pt)
		(void)ik_pgtable_gather_sync(c.pt, &g);
	iova_put(&c, iova);
	smmu_down(&c);
	buf_put(h, buf, buf_pa, buf_size);
}

/* 6. A read-only page: a device write to it is F_PERMISSION (from the table
 * walk, then again from the TLB entry the read left), the page keeps its
 * seed; a device read of it succeeds (its bytes come back out through a
 * writable page).  4 DMAs. */
static void read_only_mapping_faults_writes_and_serves_reads(struct hil *h, const void *arg)
{
	struct smmu_ctx c;
	struct ik_pt_walk_result r;
	struct ik_gather g;
	ik_u8 *ro = NULL, *rw = NULL;
	ik_u64 ro_pa = 0, rw_pa = 0, iova = 0;

	(void)arg;
	ik_gather_init(&g);
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	ro = buf_get(h, SZ_4K, &ro_pa);
	rw = buf_get(h, SZ_4K, &rw_pa);
	HIL_CHECK_GOTO(h, ro && rw, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, 2 * SZ_4K, &iova), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova, ro_pa, SZ_4K, PROT_RO), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova + SZ_4K, rw_pa, SZ_4K, PROT_RW), 0, out);
	HIL_CHECK_EQ_GOTO(h, walk(c.pt, iova, IK_ACCESS_WRITE, &r), 0, out);
	HIL_CHECK_EQ_GOTO(h, r.fault, IK_PT_FAULT_PERMISSION, out);	/* the walker agrees */
	hil_fill(ro, SZ_4K, 0x5601);
	hil_fill(rw, SZ_4K, 0x5602);
	/* a write, walked: F_PERMISSION */
	HIL_CHECK_GOTO(h, write_faults(&c, iova, ro, 0x5601, IK_SMMU_EVT_F_PERMISSION), out);
	/* a read succeeds (and leaves a read-only TLB entry) */
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, iova + PRIME_OFF, 0, 256), 0, out);
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, iova + SZ_4K, 256), 0, out);
	HIL_CHECK_GOTO(h, slice_is(rw, 256, 0x5601, PRIME_OFF), out);
	/* a write again, from the TLB entry: F_PERMISSION */
	HIL_CHECK_GOTO(h, write_faults(&c, iova + 0x200, ro, 0x5601, IK_SMMU_EVT_F_PERMISSION), out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, iova, 2 * SZ_4K, &g), (ik_s64)(2 * SZ_4K), out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&c, c.pt, &g, c.asid), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(c.pt, &g), 0, out);
out:
	iova_put(&c, iova);
	smmu_down(&c);
	buf_put(h, ro, ro_pa, SZ_4K);
	buf_put(h, rw, rw_pa, SZ_4K);
}

/* 7. RW -> RO: a writable page, primed; unmapped and mapped again read-only.
 * Before the invalidation a device write still arrives (the SMMU uses its
 * cached RW entry: QEMU caches the permission with the leaf); after
 * ik_smmu_inv_gather() the same write is F_PERMISSION and the page keeps
 * its bytes.  3 DMAs. */
static void rw_to_ro_downgrade_applies_after_the_invalidation(struct hil *h, const void *arg)
{
	struct smmu_ctx c;
	struct ik_pt_walk_result r;
	struct ik_gather g;
	struct evsum e;
	ik_u8 *p = NULL;
	ik_u64 pa = 0, iova = 0;
	bool synced = false;

	(void)arg;
	ik_gather_init(&g);
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	p = buf_get(h, SZ_4K, &pa);
	HIL_CHECK_GOTO(h, p, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, SZ_4K, &iova), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova, pa, SZ_4K, PROT_RW), 0, out);
	hil_fill(p, SZ_4K, 0x5701);
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, iova + PRIME_OFF, 0, PRIME_LEN), 0, out);
	/* the downgrade: the tables say read-only from here on */
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, iova, SZ_4K, &g), (ik_s64)SZ_4K, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova, pa, SZ_4K, PROT_RO), 0, out);
	HIL_CHECK_EQ_GOTO(h, walk(c.pt, iova, IK_ACCESS_WRITE, &r), 0, out);
	HIL_CHECK_EQ_GOTO(h, r.fault, IK_PT_FAULT_PERMISSION, out);
	/* before the invalidation: the old RW translation is used */
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, iova, PRIME_LEN), 0, out);
	HIL_CHECK_GOTO(h, slice_is(p, PRIME_LEN, 0x5701, PRIME_OFF), out);
	events_drain(&c, IK_SMMU_EVT_F_PERMISSION, iova, PRIME_LEN, false, &e);
	HIL_CHECK_EQ_GOTO(h, e.n, 0, out);
	hil_diag("before the TLBI the write used the cached RW entry");
	HIL_CHECK_EQ_GOTO(h, invalidate(&c, c.pt, &g, c.asid), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(c.pt, &g), 0, out);
	synced = true;
	hil_fill(p, SZ_4K, 0x5702);
	HIL_CHECK_GOTO(h, write_faults(&c, iova, p, 0x5702, IK_SMMU_EVT_F_PERMISSION), out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, iova, SZ_4K, &g), (ik_s64)SZ_4K, out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&c, c.pt, &g, c.asid), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(c.pt, &g), 0, out);
out:
	/* failure paths: whatever the gather holds is invalidated and freed */
	if (!synced && c.s && g.end > g.start)
		(void)invalidate(&c, c.pt, &g, c.asid);
	if (c.pt)
		(void)ik_pgtable_gather_sync(c.pt, &g);
	iova_put(&c, iova);
	smmu_down(&c);
	buf_put(h, p, pa, SZ_4K);
}

/* An issue function that holds the table writer's commands back, so that a
 * check can show the SMMU's view before the CFGI and issue it afterwards. */
struct held {
	struct ik_smmu_cmd cmd[8];
	unsigned n, calls;
};

static int hold_issue(void *ctx, const struct ik_smmu_cmd *cmds, unsigned n)
{
	struct held *hd = (struct held *)ctx;
	unsigned i;

	hd->calls++;
	for (i = 0; i < n; i++) {
		if (hd->n == IK_ARRAY_SIZE(hd->cmd))
			return -ENOSPC;
		hd->cmd[hd->n++] = cmds[i];
	}
	return 0;
}

static int release(struct smmu_ctx *c, struct held *hd)
{
	unsigned i;

	for (i = 0; i < hd->n; i++)
		cmd_diag("held back:", &hd->cmd[i]);
	i = hd->n;
	hd->n = 0;
	return ik_smmu_issue(c->s, hd->cmd, i);
}

/* 8a. The stream's CD changes from table set A (ASID 1: IOVA X -> page a)
 * to table set B (ASID 2: X -> page b), written by ik_smmu_cdtab_write()
 * with its CFGI_CD held back: a device write to X still lands in a (the
 * SMMU keeps the CD it read); once the CFGI_CD + CMD_SYNC are issued the
 * same write lands in b.  3 DMAs. */
static void cd_change_takes_effect_only_after_cfgi_cd(struct hil *h, const void *arg)
{
	struct smmu_ctx c;
	struct ik_pgtable *ptb = NULL;
	struct ik_gather g;
	struct held hd;
	struct ik_smmu_cmd tlbi;
	ik_u8 *a = NULL, *b = NULL;
	ik_u64 a_pa = 0, b_pa = 0, x = 0, cd[8];

	(void)arg;
	ik_gather_init(&g);
	IK_ENV_MEMSET(&hd, 0, sizeof(hd));
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	a = buf_get(h, SZ_4K, &a_pa);
	b = buf_get(h, SZ_4K, &b_pa);
	HIL_CHECK_GOTO(h, a && b, out);
	HIL_CHECK_EQ_GOTO(h, pt_new(&c, &ptb), 0, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, SZ_4K, &x), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, x, a_pa, SZ_4K, PROT_RW), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(ptb, x, b_pa, SZ_4K, PROT_RW), 0, out);
	hil_fill(a, SZ_4K, 0x5801);
	hil_fill(b, SZ_4K, 0x5802);
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, x + PRIME_OFF, 0, PRIME_LEN), 0, out);	/* via A */

	HIL_CHECK_EQ_GOTO(h, attach_cd(&c, ptb, 2, cd), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_smmu_cdtab_write(&c.cdt, 0, cd, &c.sid, 1, hold_issue, &hd), 0, out);
	hil_diag("CD written (TTB0 %#llx, ASID 2); the writer asked %u time(s) for %u command(s)",
		 (unsigned long long)(cd[1] & IK_SMMU_CD_TTB0_MASK), hd.calls, hd.n);
	HIL_CHECK_GOTO(h, hd.n > 0, out);
	HIL_CHECK_EQ_GOTO(h, hd.cmd[hd.n - 1].op, IK_SMMU_CMD_CFGI_CD, out);
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, x, PRIME_LEN), 0, out);
	HIL_CHECK_GOTO(h, slice_is(a, PRIME_LEN, 0x5801, PRIME_OFF), out);	/* old CD: A */
	HIL_CHECK_EQ_GOTO(h, hil_verify(b, SZ_4K, 0x5802), SZ_4K, out);
	hil_diag("before CFGI_CD the write went through the old CD (table set A)");

	HIL_CHECK_EQ_GOTO(h, release(&c, &hd), 0, out);
	hil_fill(a, SZ_4K, 0x5803);
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, x, PRIME_LEN), 0, out);
	HIL_CHECK_GOTO(h, slice_is(b, PRIME_LEN, 0x5801, PRIME_OFF), out);	/* new CD: B */
	HIL_CHECK_GOTO(h, slice_is(b + PRIME_LEN, SZ_4K - PRIME_LEN, 0x5802, PRIME_LEN), out);
	HIL_CHECK_EQ_GOTO(h, hil_verify(a, SZ_4K, 0x5803), SZ_4K, out);
	HIL_CHECK_GOTO(h, no_gerror(&c), out);
	/* A's ASID is no longer used: its TLB entries go (the caller's duty) */
	IK_ENV_MEMSET(&tlbi, 0, sizeof(tlbi));
	tlbi.op = IK_SMMU_CMD_TLBI_NH_ASID;
	tlbi.asid = 1;
	HIL_CHECK_EQ_GOTO(h, ik_smmu_issue(c.s, &tlbi, 1), 0, out);
out:
	iova_put(&c, x);
	smmu_down(&c);	/* the SMMU is off before B's tables go */
	ik_pgtable_destroy(ptb);
	buf_put(h, a, a_pa, SZ_4K);
	buf_put(h, b, b_pa, SZ_4K);
}

/* 8b. The stream's STE changes from stage 1 (table set A: X -> page a) to
 * abort, written by ik_smmu_strtab_write() with its CFGI_STE held back: a
 * device write to X still lands in a; once the CFGI_STE + CMD_SYNC are
 * issued the same write is aborted - a keeps its bytes and, as an abort
 * STE specifies, no event is recorded.  3 DMAs. */
static void ste_change_takes_effect_only_after_cfgi_ste(struct hil *h, const void *arg)
{
	struct smmu_ctx c;
	struct ik_smmu_ste_config sc;
	struct held hd;
	struct evsum e;
	ik_u8 *a = NULL;
	ik_u64 a_pa = 0, x = 0, ste[8], cur[8];

	(void)arg;
	IK_ENV_MEMSET(&hd, 0, sizeof(hd));
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	a = buf_get(h, SZ_4K, &a_pa);
	HIL_CHECK_GOTO(h, a, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, SZ_4K, &x), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, x, a_pa, SZ_4K, PROT_RW), 0, out);
	hil_fill(a, SZ_4K, 0x5811);
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, x + PRIME_OFF, 0, PRIME_LEN), 0, out);

	IK_ENV_MEMSET(&sc, 0, sizeof(sc));
	sc.config = IK_SMMU_STE_CFG_ABORT;
	HIL_CHECK_EQ_GOTO(h, ik_smmu_ste_build(c.id, &sc, ste), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_smmu_strtab_write(ik_smmu_get_strtab(c.s), c.sid, ste, hold_issue,
						  &hd), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_smmu_strtab_read(ik_smmu_get_strtab(c.s), c.sid, cur), 0, out);
	hil_diag("STE word 0 now %#llx (Config %llu); the writer asked for %u command(s)",
		 (unsigned long long)cur[0], (unsigned long long)((cur[0] >> 1) & 7), hd.n);
	HIL_CHECK_GOTO(h, hd.n > 0, out);
	HIL_CHECK_EQ_GOTO(h, hd.cmd[hd.n - 1].op, IK_SMMU_CMD_CFGI_STE, out);
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, x, PRIME_LEN), 0, out);
	HIL_CHECK_GOTO(h, slice_is(a, PRIME_LEN, 0x5811, PRIME_OFF), out);	/* old STE */
	hil_diag("before CFGI_STE the write went through the old STE (stage 1)");

	HIL_CHECK_EQ_GOTO(h, release(&c, &hd), 0, out);
	hil_fill(a, SZ_4K, 0x5812);
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, x, PRIME_LEN), 0, out);
	HIL_CHECK_EQ_GOTO(h, hil_verify(a, SZ_4K, 0x5812), SZ_4K, out);		/* aborted */
	events_drain(&c, IK_SMMU_EVT_F_TRANSLATION, x, PRIME_LEN, false, &e);
	HIL_CHECK_EQ_GOTO(h, e.n, 0, out);				/* silently */
	HIL_CHECK_GOTO(h, no_gerror(&c), out);
out:
	iova_put(&c, x);
	smmu_down(&c);
	buf_put(h, a, a_pa, SZ_4K);
}

/* 9. An illegal command (opcode 0x7f) followed, in the same submission, by
 * TLBI_NH_ASID for a page that was unmapped but not yet invalidated: the
 * submitter gets -EIO, the SMMU resumes (GERROR acknowledged, the bad entry
 * replaced by a no-op), and the TLBI behind the bad command was executed -
 * the next device write to the page faults.  Later commands and CMD_SYNCs
 * complete.  2 DMAs. */
static void illegal_command_is_eio_and_the_queue_runs_again(struct hil *h, const void *arg)
{
	struct smmu_ctx c;
	struct ik_gather g;
	struct ik_smmu_cmd tlbi;
	struct ik_cmdq_stats before, after;
	ik_u64 w[2][2];
	ik_u8 *p = NULL;
	ik_u64 pa = 0, iova = 0;
	ik_u32 cons;
	int err;

	(void)arg;
	ik_gather_init(&g);
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	p = buf_get(h, SZ_4K, &pa);
	HIL_CHECK_GOTO(h, p, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, SZ_4K, &iova), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova, pa, SZ_4K, PROT_RW), 0, out);
	hil_fill(p, SZ_4K, 0x5901);
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, iova + PRIME_OFF, 0, PRIME_LEN), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, iova, SZ_4K, &g), (ik_s64)SZ_4K, out);

	w[0][0] = 0x7f;		/* no SMMUv3 command has opcode 0x7f */
	w[0][1] = 0;
	IK_ENV_MEMSET(&tlbi, 0, sizeof(tlbi));
	tlbi.op = IK_SMMU_CMD_TLBI_NH_ASID;
	tlbi.asid = c.asid;
	HIL_CHECK_EQ_GOTO(h, ik_smmu_cmd_encode(&tlbi, w[1]), 0, out);
	ik_cmdq_get_stats(ik_smmu_cmdq(c.s), &before);
	err = ik_cmdq_issue(ik_smmu_cmdq(c.s), w, 2, IK_CMDQ_SYNC);
	ik_cmdq_get_stats(ik_smmu_cmdq(c.s), &after);
	cons = ik_mmio_read32(&h->iommu, IK_SMMU_CMDQ_CONS);
	hil_diag("issue -> %d (%s); CMDQ_CONS %#x (ERR %u), GERROR %#x GERRORN %#x; errors %llu "
		 "replaced %llu", err, ik_strerror(err), cons,
		 (cons >> IK_SMMU_CMDQ_CONS_ERR_SHIFT) & IK_SMMU_CMDQ_CONS_ERR_MASK,
		 ik_mmio_read32(&h->iommu, IK_SMMU_GERROR), ik_mmio_read32(&h->iommu, IK_SMMU_GERRORN),
		 (unsigned long long)(after.errors - before.errors),
		 (unsigned long long)(after.replaced - before.replaced));
	HIL_CHECK_EQ_GOTO(h, err, -EIO, out);
	HIL_CHECK_EQ_GOTO(h, after.errors - before.errors, 1, out);
	HIL_CHECK_EQ_GOTO(h, after.replaced - before.replaced, 1, out);
	HIL_CHECK_EQ_GOTO(h, (cons >> IK_SMMU_CMDQ_CONS_ERR_SHIFT) & IK_SMMU_CMDQ_CONS_ERR_MASK,
			  IK_SMMU_CERROR_ILL, out);	/* the code, kept after the ack (QEMU) */
	HIL_CHECK_GOTO(h, no_gerror(&c), out);		/* acknowledged */
	/* the TLBI behind the bad command ran: the stale entry is gone */
	HIL_CHECK_GOTO(h, write_faults(&c, iova, p, 0x5901, IK_SMMU_EVT_F_TRANSLATION), out);
	/* and the queue keeps running */
	HIL_CHECK_EQ_GOTO(h, ik_smmu_issue(c.s, NULL, 0), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_smmu_issue(c.s, &tlbi, 1), 0, out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&c, c.pt, &g, c.asid), 0, out);
out:
	if (c.pt)
		(void)ik_pgtable_gather_sync(c.pt, &g);
	iova_put(&c, iova);
	smmu_down(&c);
	buf_put(h, p, pa, SZ_4K);
}

/* 10. The two faults a driver logs most, decoded field by field from the
 * event queue (printed as diagnostics): a device read of an unmapped IOVA
 * is F_TRANSLATION with RnW = 1, a device write to a read-only page is
 * F_PERMISSION with RnW = 0; both name our StreamID, no SubstreamID, the
 * exact InputAddr, a stage-1 fault (S2 = 0), no stall.  Each 8-byte DMA
 * gives two records in QEMU (4-byte retries).  2 DMAs. */
static void event_records_decode_translation_and_permission_faults(struct hil *h,
								   const void *arg)
{
	struct smmu_ctx c;
	struct ik_gather g;
	struct evsum e;
	ik_u8 *ro = NULL;
	ik_u64 ro_pa = 0, iova = 0, hole, bus;

	(void)arg;
	ik_gather_init(&g);
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	ro = buf_get(h, SZ_4K, &ro_pa);
	HIL_CHECK_GOTO(h, ro, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, 2 * SZ_4K, &iova), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova, ro_pa, SZ_4K, PROT_RO), 0, out);
	hole = iova + SZ_4K;		/* allocated, never mapped */
	hil_fill(ro, SZ_4K, 0x5a01);

	bus = hole + 0x238;
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, bus, 0, 8), 0, out);
	events_drain(&c, IK_SMMU_EVT_F_TRANSLATION, bus, 8, true, &e);
	HIL_CHECK_GOTO(h, e.n > 0, out);
	HIL_CHECK_EQ_GOTO(h, e.match, e.n, out);
	HIL_CHECK_EQ_GOTO(h, e.first.type, IK_SMMU_EVT_F_TRANSLATION, out);
	HIL_CHECK_GOTO(h, streq(e.first.name, "F_TRANSLATION"), out);
	HIL_CHECK_EQ_GOTO(h, e.first.sid, h->rid, out);
	HIL_CHECK_EQ_GOTO(h, e.first.ssv, 0, out);
	HIL_CHECK_EQ_GOTO(h, e.first.has_addr, 1, out);
	HIL_CHECK_EQ_GOTO(h, e.first.addr, bus, out);
	HIL_CHECK_EQ_GOTO(h, e.first.rnw, 1, out);
	HIL_CHECK_EQ_GOTO(h, e.first.s2, 0, out);
	HIL_CHECK_EQ_GOTO(h, e.first.stall, 0, out);

	bus = iova + 0x3c0;
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, bus, 8), 0, out);
	HIL_CHECK_EQ_GOTO(h, hil_verify(ro, SZ_4K, 0x5a01), SZ_4K, out);
	events_drain(&c, IK_SMMU_EVT_F_PERMISSION, bus, 8, false, &e);
	HIL_CHECK_GOTO(h, e.n > 0, out);
	HIL_CHECK_EQ_GOTO(h, e.match, e.n, out);
	HIL_CHECK_EQ_GOTO(h, e.first.type, IK_SMMU_EVT_F_PERMISSION, out);
	HIL_CHECK_GOTO(h, streq(e.first.name, "F_PERMISSION"), out);
	HIL_CHECK_EQ_GOTO(h, e.first.sid, h->rid, out);
	HIL_CHECK_EQ_GOTO(h, e.first.ssv, 0, out);
	HIL_CHECK_EQ_GOTO(h, e.first.addr, bus, out);
	HIL_CHECK_EQ_GOTO(h, e.first.rnw, 0, out);
	HIL_CHECK_EQ_GOTO(h, e.first.s2, 0, out);
	HIL_CHECK_EQ_GOTO(h, e.first.stall, 0, out);
	HIL_CHECK_GOTO(h, no_gerror(&c), out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, iova, SZ_4K, &g), (ik_s64)SZ_4K, out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&c, c.pt, &g, c.asid), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(c.pt, &g), 0, out);
out:
	iova_put(&c, iova);
	smmu_down(&c);
	buf_put(h, ro, ro_pa, SZ_4K);
}

/* Beyond the list: a linear stream table (32 STEs, 2 KiB) instead of the
 * 2-level one, with a DMA through it.  As the image's first SMMU
 * configuration it must translate.  Run again after 2-level ones it must
 * too (IHI 0070: STRTAB_BASE_CFG.FMT selects the format each time it is
 * written), but QEMU 7.2 keeps the 2-level format once FMT = 1 was written
 * (hw/arm/smmuv3.c only ever sets SMMU_FEATURE_2LVL_STE): it reads the
 * linear table's first word as an L1 descriptor with Span 0 and reports
 * C_BAD_STREAMID.  The check then says so (SKIP) - only with exactly that
 * record; anything else fails.  The core's default (2-level whenever
 * IDR0.ST_LEVEL allows and more than 8 StreamID bits are asked for) never
 * meets this.  1 DMA. */
static const bool st_first = false, st_after_2lvl = true;

static void linear_stream_table_translates(struct hil *h, const void *arg)
{
	const bool after = *(const bool *)arg;
	struct smmu_ctx c;
	struct ik_gather g;
	struct ik_smmu_event ev;
	ik_u8 *p = NULL;
	ik_u64 pa = 0, iova = 0;
	ik_u32 cfg;
	unsigned n = 0, bad_sid = 0;

	ik_gather_init(&g);
	HIL_CHECK_EQ_GOTO(h, smmu_up_table(&c, h, true, 5), 0, out);
	cfg = ik_mmio_read32(&h->iommu, IK_SMMU_STRTAB_BASE_CFG);
	hil_diag("STRTAB_BASE_CFG %#x (FMT %u, LOG2SIZE %u)", cfg,
		 (cfg >> IK_SMMU_STRTAB_CFG_FMT_SHIFT) & 3, cfg & 0x3f);
	p = buf_get(h, SZ_4K, &pa);
	HIL_CHECK_GOTO(h, p, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, SZ_4K, &iova), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_map(c.pt, iova, pa, SZ_4K, PROT_RW), 0, out);
	hil_fill(p, SZ_4K, 0x5b01);
	HIL_CHECK_EQ_GOTO(h, dma_to_ram(&c, 0, iova + 0x80, 64), 0, out);
	while (ik_smmu_event_pop(c.s, &ev) == 0) {
		if (!n++)
			event_diag(&ev);
		bad_sid += ev.type == IK_SMMU_EVT_C_BAD_STREAMID && ev.sid == c.sid;
	}
	if (after && n && bad_sid == n && hil_verify(p, SZ_4K, 0x5b01) == SZ_4K) {
		hil_diag("QEMU 7.2 walked the linear table as the earlier 2-level one: %u "
			 "C_BAD_STREAMID record(s)", n);
		(void)no_gerror(&c);
		iova_put(&c, iova);
		smmu_down(&c);
		buf_put(h, p, pa, SZ_4K);
		HIL_SKIP(h, "QEMU 7.2 keeps STRTAB_BASE_CFG.FMT = 2-level after a linear "
			    "configuration (IHI 0070 does not)");
	}
	HIL_CHECK_EQ_GOTO(h, n, 0, out);
	/* it arrived: those 64 bytes changed (edu's buffer holds what the
	 * last check left there), no other byte did */
	HIL_CHECK_EQ_GOTO(h, hil_verify(p, 0x80, 0x5b01), 0x80, out);
	HIL_CHECK_GOTO(h, !slice_is(p + 0x80, 64, 0x5b01, 0x80), out);
	HIL_CHECK_GOTO(h, slice_is(p + 0xc0, SZ_4K - 0xc0, 0x5b01, 0xc0), out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_unmap(c.pt, iova, SZ_4K, &g), (ik_s64)SZ_4K, out);
	HIL_CHECK_EQ_GOTO(h, invalidate(&c, c.pt, &g, c.asid), 0, out);
	HIL_CHECK_EQ_GOTO(h, ik_pgtable_gather_sync(c.pt, &g), 0, out);
out:
	iova_put(&c, iova);
	smmu_down(&c);
	buf_put(h, p, pa, SZ_4K);
}

/* Beyond the list: more fault records than the event queue holds (128, the
 * core's default).  QEMU makes one faulting 1 KiB read 256 records (4-byte
 * retries), so the queue fills: the core pops exactly a queue's worth, in
 * order from the faulting address, and the loss is reported - by
 * EVTQ_PROD.OVFLG, as IHI 0070 specifies for a full queue, acknowledged by
 * ik_smmu_event_pop() (ev->overflow), or, as QEMU 7.2 does instead, by
 * GERROR.EVTQ_ABT_ERR, acknowledged by ik_smmu_gerror_poll(); the check
 * says which it saw.  Afterwards the queue records again.  Skipped where one
 * DMA does not fill the queue (hardware: one record per transaction).
 * 2 DMAs. */
static void event_queue_overflow_is_reported_and_the_queue_records_again(struct hil *h,
									 const void *arg)
{
	struct smmu_ctx c;
	struct ik_smmu_event ev;
	struct ik_smmu_gerror ge;
	struct ik_smmu_stats st;
	struct evsum e;
	ik_u64 iova = 0, next;
	unsigned n = 0, ovf = 0, in_order = 0;
	int active;
	const unsigned qsize = 128;	/* ik_smmu_config.evtq_log2 0: 2^7 */

	(void)arg;
	HIL_CHECK_EQ_GOTO(h, smmu_up(&c, h), 0, out);
	HIL_CHECK_EQ_GOTO(h, iova_get(&c, SZ_4K, &iova), 0, out);	/* never mapped */
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, iova, 0, 1024), 0, out);
	next = iova;
	while (ik_smmu_event_pop(c.s, &ev) == 0) {
		if (!n)
			event_diag(&ev);
		n++;
		ovf += ev.overflow;
		if (ev.type == IK_SMMU_EVT_F_TRANSLATION && ev.addr >= next) {
			in_order++;
			next = ev.addr + 1;
		}
	}
	active = ik_smmu_gerror_poll(c.s, &ge);
	ik_smmu_get_stats(c.s, &st);
	hil_diag("one 1 KiB faulting read: %u record(s) popped (%u in address order), overflow "
		 "flagged on %u, GERROR active %#x (EVTQ_ABT_ERR %u), evtq_overflows %llu, "
		 "gerrors %llu", n, in_order, ovf, (unsigned)active, ge.evtq_abt,
		 (unsigned long long)st.evtq_overflows, (unsigned long long)st.gerrors);
	if (n < qsize)
		HIL_SKIP(h, "one DMA did not fill the event queue");
	HIL_CHECK_EQ_GOTO(h, n, qsize, out);
	HIL_CHECK_EQ_GOTO(h, in_order, qsize, out);
	HIL_CHECK_GOTO(h, ovf || ge.evtq_abt, out);
	if (ovf)
		hil_diag("reported as the specification says: EVTQ_PROD.OVFLG");
	else
		hil_diag("reported as QEMU 7.2 does: GERROR.EVTQ_ABT_ERR, not EVTQ_PROD.OVFLG "
			 "(IHI 0070: a full queue toggles OVFLG; EVTQ_ABT_ERR is an abort writing it)");
	HIL_CHECK_GOTO(h, no_gerror(&c), out);		/* acknowledged above */
	/* the queue records again */
	HIL_CHECK_EQ_GOTO(h, dma_from_ram(&c, iova + 0x40, 0, 8), 0, out);
	events_drain(&c, IK_SMMU_EVT_F_TRANSLATION, iova + 0x40, 8, true, &e);
	HIL_CHECK_GOTO(h, e.n > 0, out);
	HIL_CHECK_EQ_GOTO(h, e.match, e.n, out);
	HIL_CHECK_EQ_GOTO(h, e.first.overflow, 0, out);
	HIL_CHECK_GOTO(h, no_gerror(&c), out);
out:
	iova_put(&c, iova);
	smmu_down(&c);
}

#define N (HIL_NEEDS_EDU | HIL_NEEDS_IOMMU)

static const struct hil_check checks[] = {
	{ "linear_stream_table_translates_as_the_first_configuration",
	  linear_stream_table_translates, &st_first, N },
	{ "bringup_enables_queues_and_translation_and_disable_stops_them",
	  bringup_enables_queues_and_translation_and_disable_stops_them, NULL, N },
	{ "dma_through_4k_pages_both_directions", dma_through_4k_pages_both_directions, NULL, N },
	{ "map_sg_scattered_pages_behind_one_iova_range",
	  map_sg_scattered_pages_behind_one_iova_range, NULL, N },
	{ "dma_through_2m_and_1g_block_entries", dma_through_2m_and_1g_block_entries, NULL, N },
	{ "unmap_4k_and_invalidate_then_write_is_a_translation_fault", unmap_then_device_write,
	  &uc_4k_inv, N },
	{ "unmap_64k_and_invalidate_then_write_is_a_translation_fault", unmap_then_device_write,
	  &uc_64k_inv, N },
	{ "punch_4k_hole_in_2m_block_and_invalidate_then_write_is_a_translation_fault",
	  unmap_then_device_write, &uc_hole_inv, N },
	{ "unlink_2m_table_and_invalidate_then_write_is_a_translation_fault",
	  unmap_then_device_write, &uc_table_inv, N },
	{ "unmap_64k_and_invalidate_without_ril_16_tlbis_then_write_is_a_translation_fault",
	  unmap_then_device_write, &uc_64k_inv_noril, N },
	{ "unlink_2m_table_and_invalidate_without_ril_tlbi_asid_then_write_is_a_translation_fault",
	  unmap_then_device_write, &uc_table_inv_noril, N },
	{ "unmap_4k_without_invalidation_write_still_reaches_the_old_page",
	  unmap_then_device_write, &uc_4k_stale, N },
	{ "unmap_64k_without_invalidation_write_still_reaches_the_old_page",
	  unmap_then_device_write, &uc_64k_stale, N },
	{ "punch_hole_in_2m_block_without_invalidation_write_still_reaches_the_old_page",
	  unmap_then_device_write, &uc_hole_stale, N },
	{ "unlink_2m_table_without_invalidation_write_still_reaches_the_old_page",
	  unmap_then_device_write, &uc_table_stale, N },
	{ "read_only_mapping_faults_writes_and_serves_reads",
	  read_only_mapping_faults_writes_and_serves_reads, NULL, N },
	{ "rw_to_ro_downgrade_applies_after_the_invalidation",
	  rw_to_ro_downgrade_applies_after_the_invalidation, NULL, N },
	{ "cd_change_takes_effect_only_after_cfgi_cd", cd_change_takes_effect_only_after_cfgi_cd,
	  NULL, N },
	{ "ste_change_takes_effect_only_after_cfgi_ste", ste_change_takes_effect_only_after_cfgi_ste,
	  NULL, N },
	{ "illegal_command_is_eio_and_the_queue_runs_again",
	  illegal_command_is_eio_and_the_queue_runs_again, NULL, N },
	{ "event_records_decode_translation_and_permission_faults",
	  event_records_decode_translation_and_permission_faults, NULL, N },
	{ "event_queue_overflow_is_reported_and_the_queue_records_again",
	  event_queue_overflow_is_reported_and_the_queue_records_again, NULL, N },
	{ "linear_stream_table_translates_after_two_level_ones", linear_stream_table_translates,
	  &st_after_2lvl, N },
};

const struct hil_suite hil_suite_smmuv3 =
	HIL_SUITE_FOR(HIL_IOMMU_SMMUV3, "smmuv3", checks);
