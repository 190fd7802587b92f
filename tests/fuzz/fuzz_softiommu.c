/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fuzz_softiommu - the soft IOMMU (include/iommukit/softiommu.h) as an
 * emulator runs it.
 *
 * Mode A (a driver).  Up to three contexts, each an ik_pgtable (LPAE stage
 * 1 or 2, VT-d second- or first-level, RISC-V first stage or G-stage, 4K
 * granule, blocks possible) whose
 * table pages sit at harness-chosen IOMMU addresses and are read through
 * the read64 hook; streams attached to them (some sharing a context);
 * device memory is a 4 MiB arena at a fixed physical address (phys_to_host).
 * The driver maps and unmaps, and after each unmap invalidates the gather
 * (leaf-only when the gather says no walk changed) by ik_softiommu_exec() or
 * through a command queue drained inline by the soft IOMMU (SMMUv3 TLBI
 * ranges from ik_smmu_tlbi_range, VT-d page-selective descriptors from
 * ik_vtd_psi_mask, RISC-V IOTINVAL per page or per address space), syncs, then syncs the gather.  The input may also make
 * it a sloppy driver (invalidation skipped, leaf-only where walks changed,
 * tables freed before the invalidation).  Model: per context, iova page ->
 * (arena page, prot); the arena's expected contents.
 *   - correct driver: every DMA read/write and translate does exactly what
 *     the model says: the bytes of mapped pages move, the first page the
 *     access may not use stops it with the right fault record (type, iova,
 *     stream, access; BAD_STREAM for streams not attached), and the
 *     stale-translation checker never fires; the IOMMU never reads a freed
 *     table page;
 *   - sloppy driver: with checking on, an access that succeeds agrees with
 *     the tables as they are now (a stale one is refused); without, nothing
 *     is checked but memory safety.
 *   Nested contexts: an LPAE stage-1 or VT-d first-level context may be
 *   a guest's, attached with ik_softiommu_attach_nested() over one stage 2
 *   per run (lpae-s2 / vtd-sl, built once: IPA = PA + NEST_OFF over the
 *   table-page window and the arena).  Its table pages and outputs are
 *   IPAs; the model is the same (stage 2 never refuses), its faults are
 *   stage-1 faults, and its invalidations are the stage-1 commands of its
 *   two tags (TLBI_NH_* with the VMID, PASID-based IOTLB with the DID, or
 *   INV_* with IK_SOFTIOMMU_CMD_VMID / _PASID).
 * Mode B (guest tables).  A guest-memory buffer with arbitrary contents
 * holds the tables; walkers come from fuzzed TCR/TTBR, VT-d context and
 * PASID entries, RISC-V iosatp/iohgatp values, or configs; table memory is
 * read (and A/D-updated) only through read64/cas64, which refuse anything
 * outside the buffer (a nested stream's stage-1 and stage-2 tables both in
 * it, stage 1's addresses translated by stage 2, or a pair the soft IOMMU
 * must refuse); DMA at
 * any address and length, translations, invalidations, and guest writes to
 * the tables in between.  Nothing may crash or write outside the buffers
 * (guard bytes around each), and with checking on a translation that
 * succeeds agrees with a fresh walk.
 * Mode C (completion addresses; an input whose first byte is 0xe0 or
 * above): a guest's own queue ring in every format the soft IOMMU consumes,
 * sync descriptors with completion addresses anywhere in 64 bits, with no
 * write32 hook or a recording one; and the exported identity hooks on
 * addresses they must refuse.  See "mode C" below.
 */
#include <iommukit/softiommu.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/fmt/riscv.h>
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>
#include <iommukit/cmd/riscv.h>
#include "fuzzlib.h"

#define GUARD 256
#define GUARD_BYTE 0x3c
#define ARENA_PHYS 0x40000000ull
#define ARENA_SIZE (4ull << 20)
#define PAGE 4096ull
#define WIN_PAGES 2048 /* 8 MiB of IOVA per context */
#define MAX_CTX 3
#define MAX_SID 8
#define MAX_TPAGES 512
#define NEST_OFF (1ull << 36) /* mode A nested contexts: IPA = PA + NEST_OFF */

static struct fz_alloc FA;
static int trace = -1;
#define TRACE(...)                                                        \
	do {                                                              \
		if (trace < 0)                                            \
			trace = getenv("FZ_TRACE") != NULL;               \
		if (trace)                                                \
			fprintf(stderr, __VA_ARGS__);                     \
	} while (0)
static uint8_t *arena_buf, *arena;	 /* arena inside guards */
static uint8_t *gm_buf, *gm;		 /* guest memory (mode B) */
static uint64_t GM_PHYS, GM_SIZE;
static struct ik_softiommu *S;
static bool mode_b, mode_c, check_mode;

static void *phys_to_host(void *ctx, ik_u64 oa, ik_size len)
{
	void *p = fz_window(arena, ARENA_PHYS, ARENA_SIZE, oa, len);

	(void)ctx;
	if (!p && gm)
		p = fz_window(gm, GM_PHYS, GM_SIZE, oa, len);
	return p;
}

static void check_guards(void)
{
	for (unsigned i = 0; i < GUARD; i++) {
		FZ_CHECK(arena_buf[i] == GUARD_BYTE && arena[ARENA_SIZE + i] == GUARD_BYTE,
			 "a guard byte of the DMA arena was overwritten");
		if (gm)
			FZ_CHECK(gm_buf[i] == GUARD_BYTE && gm[GM_SIZE + i] == GUARD_BYTE,
				 "a guard byte of the guest memory was overwritten");
	}
}

/* ================================================================ mode A */

struct tpage {
	uint64_t iommu, size;
	uint8_t *cpu;
};

struct ctx {
	struct ik_pgtable *pt;
	struct ik_pgtable_cfg cfg;
	struct ik_pt_walker w;
	uint32_t tag;
	uint32_t tag2;			/* nested: the stage-2 tag */
	bool nested;			/* a guest's stage 1 over A.s2 */
	int32_t page[WIN_PAGES];	/* arena page, -1: unmapped */
	uint8_t prot[WIN_PAGES];
	uint64_t win;
	bool rd_always;			/* the format cannot deny reads */
};

static struct {
	struct ctx c[MAX_CTX];
	unsigned nctx;
	int sid_ctx[MAX_SID];		/* -1: detached */
	struct tpage tp[MAX_TPAGES];
	unsigned ntp;
	uint64_t next_iommu;
	unsigned sloppy;		/* 0: correct driver */
	bool use_queue;
	struct ik_cmdq *q;
	struct ik_softiommu_cq cq;
	uint8_t *ring;
	const struct ik_cmdq_fmt *qfmt;
	/* expected fault records, oldest first */
	struct ik_softiommu_fault exp[4096];
	unsigned nexp, exp_head;
	uint64_t faults;		/* faults the model predicted */
	bool faults_exact;
	uint32_t max_streams, fault_depth;
	uint64_t freed_reads;
	struct ik_pgtable *s2;		/* the stage 2 of nested contexts */
	bool s2_smmu;			/* it is lpae-s2 (else vtd-sl) */
	struct ik_pt_walker s2w;
} A;

static struct tpage *tp_find(uint64_t addr)
{
	for (unsigned i = 0; i < A.ntp; i++)
		if (addr >= A.tp[i].iommu && addr - A.tp[i].iommu < A.tp[i].size)
			return &A.tp[i];
	return NULL;
}

static void *t_alloc(void *cookie, ik_size size, ik_u64 *iommu)
{
	struct tpage *t;
	const struct ctx *c = (const struct ctx *)cookie; /* NULL: the stage 2 */

	if (A.ntp >= MAX_TPAGES)
		return NULL;
	t = &A.tp[A.ntp++];
	t->size = size;
	t->cpu = aligned_alloc(size, size);
	memset(t->cpu, 0xee, size);
	A.next_iommu = (A.next_iommu + size - 1) & ~(uint64_t)(size - 1);
	t->iommu = A.next_iommu;
	A.next_iommu += size;
	*iommu = t->iommu + (c && c->nested ? NEST_OFF : 0); /* a guest's: its IPA */
	return t->cpu;
}

static void t_free(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	const struct ctx *c = (const struct ctx *)cookie;
	struct tpage *t = tp_find(iommu - (c && c->nested ? NEST_OFF : 0));

	FZ_CHECK(t && t->cpu == cpu && t->size == size, "free_table of an unknown page");
	memset(cpu, 0x6b, size);
	free(cpu);
	*t = A.tp[--A.ntp];
}

static int t_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	struct tpage *t = tp_find(addr);

	(void)ctx;
	if (!t || (addr & 7)) {
		/* a freed table: only a sloppy driver lets the IOMMU go there */
		FZ_CHECK(A.sloppy, "the IOMMU read %#llx, no live table page (correct driver)",
			 (unsigned long long)addr);
		A.freed_reads++;
		return -EFAULT;
	}
	memcpy(val, t->cpu + (addr - t->iommu), 8);
	return 0;
}

static const struct ik_pt_mem TMEM = { t_read64, NULL, NULL };

/* The driver's invalidation of [iova, iova + size) for context c. */
static void invalidate(struct ctx *c, uint64_t iova, uint64_t size, bool leaf)
{
	int err;

	if (!size)
		return;
	if (!A.use_queue) {
		struct ik_softiommu_cmd cmd = { IK_SOFTIOMMU_OP_INV_RANGE, c->tag, iova, size, leaf, 0, 0 };

		if (c->nested && (iova & PAGE)) { /* SMMUv3 style: ASID + VMID */
			cmd.flags = IK_SOFTIOMMU_CMD_VMID;
			cmd.tag2 = c->tag2;
		} else if (c->nested) { /* VT-d style: DID + PASID */
			cmd.flags = IK_SOFTIOMMU_CMD_PASID;
			cmd.tag = c->tag2;
			cmd.tag2 = c->tag;
		}
		FZ_CHECK(ik_softiommu_exec(S, &cmd) == 0, "exec INV_RANGE");
		cmd.flags = 0;
		cmd.op = IK_SOFTIOMMU_OP_SYNC;
		FZ_CHECK(ik_softiommu_exec(S, &cmd) == 0, "exec SYNC");
		return;
	}
	if (A.qfmt == &ik_cmdq_fmt_smmuv3) {
		static struct ik_smmu_cmd out[64];
		static uint64_t w[65][2];
		struct ik_smmu_cmd t;
		int n;

		memset(&t, 0, sizeof(t));
		if (c->cfg.fmt == IK_PT_LPAE_S2) {
			t.op = IK_SMMU_CMD_TLBI_S2_IPA;
			t.vmid = (ik_u16)c->tag;
		} else {
			t.op = IK_SMMU_CMD_TLBI_NH_VA;
			t.asid = (ik_u16)c->tag;
			t.vmid = (ik_u16)c->tag2; /* 0 when not nested */
		}
		t.leaf = leaf;
		n = ik_smmu_tlbi_range(&t, iova, size, 12, true, out, 64);
		if (n < 0) {
			/* too many: everything of the tag */
			memset(&out[0], 0, sizeof(out[0]));
			out[0].op = c->cfg.fmt == IK_PT_LPAE_S2 ? IK_SMMU_CMD_TLBI_S12_VMALL
								: IK_SMMU_CMD_TLBI_NH_ASID;
			if (out[0].op == IK_SMMU_CMD_TLBI_NH_ASID)
				out[0].asid = (ik_u16)c->tag, out[0].vmid = (ik_u16)c->tag2;
			else
				out[0].vmid = (ik_u16)c->tag;
			n = 1;
		}
		for (int i = 0; i < n; i++)
			FZ_CHECK(ik_smmu_cmd_encode(&out[i], w[i]) == 0, "encode TLBI");
		err = ik_cmdq_issue(A.q, w, (unsigned)n, IK_CMDQ_SYNC);
	} else if (A.qfmt == &ik_cmdq_fmt_riscv) {
		/* IOTINVAL.VMA of the PSCID (first stage) or .GVMA of the GSCID
		 * (G-stage): one per page with AV (each also drops a block
		 * holding it), or one for the address space */
		static uint64_t w[64][2];
		struct ik_riscv_cmd t;
		unsigned n = 0;

		memset(&t, 0, sizeof(t));
		t.opcode = IK_RISCV_CMD_IOTINVAL;
		if (c->cfg.fmt == IK_PT_RISCV_S2) {
			t.func3 = IK_RISCV_IOTINVAL_GVMA;
			t.gv = 1;
			t.gscid = (ik_u16)c->tag;
		} else {
			t.func3 = IK_RISCV_IOTINVAL_VMA;
			t.pscv = 1;
			t.pscid = c->tag;
		}
		if (size <= 64 * PAGE) {
			t.av = 1;
			for (uint64_t a = iova; a < iova + size; a += PAGE, n++) {
				t.addr = a;
				FZ_CHECK(ik_riscv_cmd_encode(&t, w[n]) == 0, "encode IOTINVAL");
			}
		} else {
			FZ_CHECK(ik_riscv_cmd_encode(&t, w[n++]) == 0, "encode IOTINVAL");
		}
		err = ik_cmdq_issue(A.q, w, n, IK_CMDQ_SYNC);
	} else {
		struct ik_vtd_desc d;
		uint64_t ent[4] = { 0, 0, 0, 0 }, base;
		unsigned am;

		memset(&d, 0, sizeof(d));
		/* nested: PASID-based in the domain (G_PASID_PAGE, G_PASID share
		 * the values of G_PAGE, G_DOMAIN) */
		d.type = c->nested ? IK_VTD_DESC_PIOTLB : IK_VTD_DESC_IOTLB;
		d.did = (ik_u16)(c->nested ? c->tag2 : c->tag);
		d.pasid = c->nested ? c->tag : 0;
		if (ik_vtd_psi_mask(iova >> 12, size >> 12, 18, &base, &am) == 0) {
			d.g = IK_VTD_G_PAGE;
			d.am = (ik_u8)am;
			d.addr = base << 12;
			d.ih = leaf;
		} else {
			d.g = IK_VTD_G_DOMAIN;
		}
		FZ_CHECK(ik_vtd_desc_encode(&d, ent, A.qfmt->entry_size / 8) == 0, "encode IOTLB");
		err = ik_cmdq_issue(A.q, ent, 1, IK_CMDQ_SYNC);
	}
	FZ_CHECK(err == 0, "invalidation through the queue = %d", err);
}

static void h_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	(void)granule;
	invalidate((struct ctx *)cookie, iova, size, false);
}

static void h_flush_all(void *cookie)
{
	struct ctx *c = (struct ctx *)cookie;
	struct ik_softiommu_cmd cmd = { IK_SOFTIOMMU_OP_INV_TAG, c->tag, 0, 0, false, 0, 0 };

	FZ_CHECK(ik_softiommu_exec(S, &cmd) == 0, "exec INV_TAG");
}

static const struct ik_pgtable_hooks THOOKS = {
	t_alloc, t_free, NULL, h_flush_all, h_flush_walk, NULL, NULL, NULL,
};

static bool ctx_can_read(const struct ctx *c, unsigned pg)
{
	return c->page[pg] >= 0 && (c->rd_always || (c->prot[pg] & IK_PROT_READ));
}

static bool ctx_can_write(const struct ctx *c, unsigned pg)
{
	return c->page[pg] >= 0 && (c->prot[pg] & IK_PROT_WRITE);
}

static void op_map(struct fz *f)
{
	struct ctx *c = &A.c[fz_below(f, A.nctx)];
	uint8_t k = fz_u8(f);
	unsigned pg, npg, apg, prot = (k & 3) ? (k & 3) : 3;
	int err;
	bool busy = false;

	if (k & 4) { /* a 2M block where it can be one */
		pg = (fz_u8(f) % (WIN_PAGES / 512)) * 512;
		npg = 512;
		apg = (fz_u8(f) % (ARENA_SIZE / (2 << 20))) * 512;
	} else {
		npg = 1 + fz_u8(f) % 16;
		pg = fz_u16(f) % (WIN_PAGES - npg);
		apg = fz_u16(f) % (ARENA_SIZE / PAGE - npg);
	}
	for (unsigned i = 0; i < npg; i++)
		busy |= c->page[pg + i] >= 0;
	err = ik_pgtable_map(c->pt, c->win + pg * PAGE,
			     ARENA_PHYS + apg * PAGE + (c->nested ? NEST_OFF : 0), npg * PAGE, prot);
	TRACE("map ctx %u [%#llx, +%u pages) -> page %u prot %u = %d\n", (unsigned)(c - A.c),
	      (unsigned long long)(c->win + pg * PAGE), npg, apg, prot, err);
	if (busy) {
		FZ_CHECK(err == -EEXIST, "map over a mapping = %d", err);
		return;
	}
	FZ_CHECK(err == 0 || err == -ENOMEM, "map = %d", err); /* -ENOMEM: out of table pages */
	if (err)
		return;
	(void)ik_softiommu_note(S, IK_SOFTIOMMU_EV_MAP, c->tag, c->win + pg * PAGE, npg * PAGE);
	for (unsigned i = 0; i < npg; i++) {
		c->page[pg + i] = (int32_t)(apg + i);
		c->prot[pg + i] = (uint8_t)prot;
	}
}

static void op_unmap(struct fz *f)
{
	struct ctx *c = &A.c[fz_below(f, A.nctx)];
	unsigned npg = 1 + fz_u16(f) % 600, pg = fz_u16(f) % (WIN_PAGES - npg);
	uint8_t how = A.sloppy ? fz_u8(f) % 4 : 0;
	struct ik_gather g;
	ik_s64 r;

	ik_gather_init(&g);
	r = ik_pgtable_unmap(c->pt, c->win + pg * PAGE, npg * PAGE, &g);
	TRACE("unmap ctx %u [%#llx, +%u pages) = %lld; gather [%#llx, %#llx) walk %d how %u\n",
	      (unsigned)(c - A.c), (unsigned long long)(c->win + pg * PAGE), npg, (long long)r,
	      (unsigned long long)g.start, (unsigned long long)g.end, g.walk, how);
	FZ_CHECK(r >= 0 || r == -ENOMEM, "unmap = %lld", (long long)r);
	if (r < 0)
		return;
	(void)ik_softiommu_note(S, IK_SOFTIOMMU_EV_UNMAP, c->tag, c->win + pg * PAGE, npg * PAGE);
	for (unsigned i = 0; i < npg; i++)
		c->page[pg + i] = -1;
	switch (how) {
	case 0: /* correct */
		if (g.end > g.start)
			invalidate(c, g.start, g.end - g.start, !g.walk);
		FZ_CHECK(ik_pgtable_gather_sync(c->pt, &g) == 0, "gather_sync");
		break;
	case 1: /* no invalidation at all */
		FZ_CHECK(ik_pgtable_gather_sync(c->pt, &g) == 0, "gather_sync");
		break;
	case 2: /* leaf-only, even where walks changed */
		if (g.end > g.start)
			invalidate(c, g.start, g.end - g.start, true);
		FZ_CHECK(ik_pgtable_gather_sync(c->pt, &g) == 0, "gather_sync");
		break;
	default: /* tables freed first, invalidated afterwards */
		FZ_CHECK(ik_pgtable_gather_sync(c->pt, &g) == 0, "gather_sync");
		if (g.end > g.start)
			invalidate(c, g.start, g.end - g.start, !g.walk);
		break;
	}
}

/* The outcome the model predicts for an access of `len` bytes at iova by
 * sid: the offset of the first byte that faults (len: none) and its type. */
static uint64_t predict(uint32_t sid, uint64_t iova, uint64_t len, bool write, uint32_t *type)
{
	struct ctx *c;

	if (sid >= A.max_streams || sid >= MAX_SID || A.sid_ctx[sid] < 0) {
		*type = IK_SOFTIOMMU_FAULT_BAD_STREAM;
		return 0;
	}
	c = &A.c[A.sid_ctx[sid]];
	for (uint64_t at = iova; at - iova < len;) {
		uint64_t next = (at | (PAGE - 1)) + 1;
		bool in = at >= c->win && at - c->win < WIN_PAGES * PAGE;
		unsigned pg = in ? (unsigned)((at - c->win) / PAGE) : 0;

		if (!in || c->page[pg] < 0) {
			*type = IK_SOFTIOMMU_FAULT_TRANSLATION;
			return at - iova;
		}
		if (write ? !ctx_can_write(c, pg) : !ctx_can_read(c, pg)) {
			*type = IK_SOFTIOMMU_FAULT_PERMISSION;
			return at - iova;
		}
		if (next == 0)
			break;
		at = next;
	}
	*type = 0;
	return len;
}

static uint64_t oa_of(uint32_t sid, uint64_t iova)
{
	struct ctx *c = &A.c[A.sid_ctx[sid]];
	unsigned pg = (unsigned)((iova - c->win) / PAGE);

	return ARENA_PHYS + (uint64_t)c->page[pg] * PAGE + (iova & (PAGE - 1));
}

static void expect_fault(uint32_t sid, uint64_t iova, uint32_t type, uint32_t access)
{
	A.faults++;
	if (A.nexp - A.exp_head >= A.fault_depth || A.nexp >= IK_ARRAY_SIZE(A.exp))
		return; /* dropped (queue full), or beyond what we track */
	/* a nested context's stage 2 refuses nothing: its faults are stage 1's */
	A.exp[A.nexp].stage = type != IK_SOFTIOMMU_FAULT_BAD_STREAM && sid < MAX_SID &&
					      A.sid_ctx[sid] >= 0 && A.c[A.sid_ctx[sid]].nested
				      ? IK_SOFTIOMMU_STAGE_1
				      : IK_SOFTIOMMU_STAGE_ONLY;
	A.exp[A.nexp].sid = sid;
	A.exp[A.nexp].iova = iova;
	A.exp[A.nexp].type = type;
	A.exp[A.nexp].access = access;
	A.nexp++;
}

static uint64_t gen_dma_iova(struct fz *f, uint32_t sid)
{
	uint8_t k = fz_u8(f);
	struct ctx *c = &A.c[(sid < MAX_SID && A.sid_ctx[sid] >= 0) ? A.sid_ctx[sid] : 0];

	if (k < 220)
		return c->win + (fz_u16(f) % WIN_PAGES) * PAGE + (k & 1 ? fz_u16(f) % PAGE : 0);
	return fz_edgy(f);
}

static void op_dma(struct fz *f, bool write)
{
	static uint8_t buf[3 * 4096 + 64];
	uint32_t sid = fz_u8(f) % (MAX_SID + 1), type;
	uint64_t iova = gen_dma_iova(f, sid), len = fz_u16(f) % sizeof(buf), ok;
	int err;

	if (fz_u8(f) == 0)
		len = 0;
	for (uint64_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(iova + i * 7);
	if (len && iova + (len - 1) < iova) {
		err = write ? ik_softiommu_dma_write(S, sid, iova, buf, len)
			    : ik_softiommu_dma_read(S, sid, iova, buf, len);
		FZ_CHECK(err == -EINVAL, "dma wrapping 2^64 = %d", err);
		return;
	}
	if (!write)
		memset(buf, 0xa7, len);
	err = write ? ik_softiommu_dma_write(S, sid, iova, buf, len)
		    : ik_softiommu_dma_read(S, sid, iova, buf, len);
	TRACE("dma %s sid %u [%#llx, +%llu) = %d\n", write ? "write" : "read", sid,
	      (unsigned long long)iova, (unsigned long long)len, err);
	check_guards();
	if (A.sloppy && (!check_mode || err))
		return; /* possibly stale: only memory safety counts */
	ok = len ? predict(sid, iova, len, write, &type) : 0;
	if (ok < len) {
		FZ_CHECK(err == -EFAULT, "dma %s sid %u [%#llx, +%llu): %d, model faults at +%llu (type %u)",
			 write ? "write" : "read", sid, (unsigned long long)iova,
			 (unsigned long long)len, err, (unsigned long long)ok, type);
		if (!A.sloppy)
			expect_fault(sid, iova + ok, type, write ? IK_SOFTIOMMU_WRITE : IK_SOFTIOMMU_READ);
	} else {
		FZ_CHECK(err == 0, "dma %s sid %u [%#llx, +%llu): %d, model: all mapped",
			 write ? "write" : "read", sid, (unsigned long long)iova,
			 (unsigned long long)len, err);
	}
	/* the bytes before the fault moved, to and from the right places;
	 * the buffer past them is untouched */
	for (uint64_t i = 0; i < ok; i++) {
		uint64_t oa = oa_of(sid, iova + i) - ARENA_PHYS;

		if (write)
			FZ_CHECK(arena[oa] == buf[i], "dma write: arena byte %#llx is %#x, wrote %#x",
				 (unsigned long long)oa, arena[oa], buf[i]);
		else
			FZ_CHECK(buf[i] == arena[oa], "dma read of %#llx byte %llu: %#x, memory has %#x",
				 (unsigned long long)iova, (unsigned long long)i, buf[i], arena[oa]);
	}
	if (!write && !A.sloppy)
		for (uint64_t i = ok; i < len; i++)
			FZ_CHECK(buf[i] == 0xa7, "dma read wrote the buffer past the fault");
}

static void op_translate(struct fz *f)
{
	uint32_t sid = fz_u8(f) % (MAX_SID + 1), type, access = fz_bool(f) ? IK_SOFTIOMMU_WRITE : IK_SOFTIOMMU_READ;
	uint64_t iova = gen_dma_iova(f, sid);
	struct ik_softiommu_xlate x;
	int err = ik_softiommu_translate(S, sid, iova, access, &x);

	TRACE("translate sid %u %#llx access %u = %d\n", sid, (unsigned long long)iova, access, err);
	if (A.sloppy && (!check_mode || err))
		return;
	if (predict(sid, iova, 1, access == IK_SOFTIOMMU_WRITE, &type) == 0) {
		FZ_CHECK(err == -EFAULT && x.fault == type, "translate sid %u %#llx: %d fault %u, model %u",
			 sid, (unsigned long long)iova, err, x.fault, type);
		if (!A.sloppy)
			expect_fault(sid, iova, type, access);
		return;
	}
	FZ_CHECK(err == 0 && x.oa == oa_of(sid, iova), "translate sid %u %#llx: %d oa %#llx, model %#llx",
		 sid, (unsigned long long)iova, err, (unsigned long long)x.oa,
		 (unsigned long long)oa_of(sid, iova));
}

static void op_fault_pop(void)
{
	struct ik_softiommu_fault fr;

	for (;;) {
		int err = ik_softiommu_fault_pop(S, &fr);

		if (A.sloppy) {
			if (err)
				return;
			continue;
		}
		if (A.exp_head == A.nexp) {
			FZ_CHECK(err == -ENOENT || !A.faults_exact, "an unexpected fault: sid %u iova %#llx type %u",
				 fr.sid, (unsigned long long)fr.iova, fr.type);
			return;
		}
		FZ_CHECK(err == 0, "fault_pop = %d, %u records expected", err, A.nexp - A.exp_head);
		{
			const struct ik_softiommu_fault *e = &A.exp[A.exp_head++];
			struct ik_softiommu_stale st;

			if (fr.type == IK_SOFTIOMMU_FAULT_STALE && ik_softiommu_stale_pop(S, &st) == 0) {
				fprintf(stderr, "stale: iova %#llx walk_cache %d cached oa %#llx lg2 %u table %#llx fresh fault %u oa %#llx table %#llx\n",
					(unsigned long long)st.iova, st.walk_cache, (unsigned long long)st.cached.oa,
					st.cached.lg2_size, (unsigned long long)st.cached.leaf_table, st.fresh.fault,
					(unsigned long long)st.fresh.oa, (unsigned long long)st.fresh.leaf_table);
				for (unsigned h = 0; h < st.nhist; h++)
					fprintf(stderr, "  hist %llu op %u tag %#x [%#llx, +%#llx)\n",
						(unsigned long long)st.hist[h].seq, st.hist[h].op, st.hist[h].tag,
						(unsigned long long)st.hist[h].iova, (unsigned long long)st.hist[h].size);
			}

			FZ_CHECK(fr.sid == e->sid && fr.iova == e->iova && fr.type == e->type &&
					 fr.access == e->access && fr.stage == e->stage,
				 "fault record sid %u iova %#llx type %u access %u stage %u; expected %u "
				 "%#llx %u %u %u", fr.sid, (unsigned long long)fr.iova, fr.type, fr.access,
				 fr.stage, e->sid, (unsigned long long)e->iova, e->type, e->access,
				 e->stage);
		}
		if (A.exp_head == A.nexp)
			A.exp_head = A.nexp = 0;
	}
}

static void op_attach(struct fz *f)
{
	uint32_t sid = fz_u8(f) % (MAX_SID + 1);
	uint8_t k = fz_u8(f);

	if (k & 1) {
		int err = ik_softiommu_detach(S, sid);

		if (sid >= A.max_streams) {
			FZ_CHECK(err == -EINVAL, "detach of sid %u = %d", sid, err);
			return;
		}
		FZ_CHECK(err == (sid < MAX_SID && A.sid_ctx[sid] >= 0 ? 0 : -ENOENT) || sid >= MAX_SID,
			 "detach of sid %u = %d", sid, err);
		if (sid < MAX_SID)
			A.sid_ctx[sid] = -1;
	} else {
		unsigned ci = (k >> 1) % A.nctx;
		int err;

		if (A.c[ci].nested) {
			struct ik_softiommu_nested n;

			memset(&n, 0, sizeof(n));
			n.s1 = A.c[ci].w;
			n.s1_tag = A.c[ci].tag;
			n.s2 = A.s2w;
			n.s2_tag = A.c[ci].tag2;
			n.mem = &TMEM;
			err = ik_softiommu_attach_nested(S, sid, &n);
		} else {
			err = ik_softiommu_attach_pt(S, sid, A.c[ci].tag, &A.c[ci].w, &TMEM);
		}

		TRACE("attach sid %u ctx %u%s = %d\n", sid, ci, A.c[ci].nested ? " (nested)" : "", err);

		FZ_CHECK(err == (sid < A.max_streams ? 0 : -EINVAL), "attach_pt sid %u = %d", sid, err);
		if (!err && sid < MAX_SID) {
			/* a context switch: the old tag's entries belong to
			 * another context; the tag is the context's, so nothing
			 * to invalidate */
			A.sid_ctx[sid] = (int)ci;
		} else if (!err) {
			/* beyond what the model tracks: detach again */
			FZ_CHECK(ik_softiommu_detach(S, sid) == 0, "detach");
		}
	}
}

static void op_exec(struct fz *f)
{
	struct ik_softiommu_cmd c;
	uint8_t k = fz_u8(f);
	int err;

	const struct ctx *cx;
	bool ranged, s1, bad;

	memset(&c, 0, sizeof(c));
	c.op = 1 + k % 9;
	cx = &A.c[fz_below(f, A.nctx)];
	c.tag = fz_bool(f) ? cx->tag : cx->tag2;
	c.tag2 = fz_bool(f) ? cx->tag2 : cx->tag;
	c.flags = fz_u8(f) % 8 == 0 ? fz_u8(f) % 5 : 0;
	c.iova = fz_u8(f) & 1 ? fz_edgy(f) : A.c[0].win + fz_u16(f) * PAGE;
	c.size = fz_u8(f) & 1 ? fz_edgy(f) : fz_u16(f) * PAGE;
	c.leaf = k & 0x80;
	err = ik_softiommu_exec(S, &c);
	ranged = c.op == IK_SOFTIOMMU_OP_INV_RANGE || c.op == IK_SOFTIOMMU_OP_INV_S2_RANGE;
	s1 = c.op == IK_SOFTIOMMU_OP_INV_RANGE || c.op == IK_SOFTIOMMU_OP_INV_TAG;
	bad = c.op > IK_SOFTIOMMU_OP_INV_S2_RANGE || c.flags > 2 || (c.flags && !s1) ||
	      (ranged && (c.size == 0 || c.iova + (c.size - 1) < c.iova));
	if (bad)
		FZ_CHECK(err == -EINVAL, "exec op %u flags %u size %#llx = %d", c.op, c.flags,
			 (unsigned long long)c.size, err);
	else
		FZ_CHECK(err == 0, "exec op %u flags %u = %d", c.op, c.flags, err);
}

/* Commands through the queue that the soft IOMMU must refuse: the queue
 * replaces them and the issuer hears -EIO. */
static void op_bad_queue(struct fz *f)
{
	uint64_t w[4] = { fz_u64(f), fz_u64(f), 0, 0 };
	int err;

	if (!A.use_queue)
		return;
	if (A.qfmt == &ik_cmdq_fmt_smmuv3) {
		struct ik_smmu_cmd c;

		if (!ik_smmu_cmd_decode(w, &c))
			return;
	} else if (A.qfmt == &ik_cmdq_fmt_riscv) {
		struct ik_riscv_cmd c;

		if (!ik_riscv_cmd_decode(w, &c))
			return;
	} else {
		struct ik_vtd_desc d;

		if (!ik_vtd_desc_decode(w, A.qfmt->entry_size / 8, &d))
			return;
	}
	err = ik_cmdq_issue(A.q, w, 1, IK_CMDQ_SYNC);
	FZ_CHECK(err == -EIO, "an illegal command through the queue = %d", err);
}

static void create_ctx(struct fz *f, struct ctx *c, unsigned i)
{
	static const enum ik_pt_fmt fmts[] = { IK_PT_LPAE_S1, IK_PT_LPAE_S2, IK_PT_VTD_SL, IK_PT_VTD_FL,
					       IK_PT_RISCV_S1, IK_PT_RISCV_S2 };
	uint8_t k = fz_u8(f);
	int err;

	memset(c, 0, sizeof(*c));
	c->cfg.fmt = A.qfmt == &ik_cmdq_fmt_smmuv3 ? fmts[k & 1] :
		     A.qfmt == &ik_cmdq_fmt_riscv  ? fmts[4 + (k & 1)] : fmts[2 + (k & 1)];
	if (!A.use_queue)
		c->cfg.fmt = fmts[k % 6];
	if (c->cfg.fmt <= IK_PT_LPAE_S2) {
		c->cfg.ias = 32 + fz_u8(f) % 17;
		c->cfg.oas = 40;
	} else if (c->cfg.fmt >= IK_PT_RISCV_S1) {
		c->cfg.ias = 32 + fz_u8(f) % (c->cfg.fmt == IK_PT_RISCV_S1 ? 25 : 28);
		c->cfg.oas = 46;
	} else {
		c->cfg.ias = 32 + fz_u8(f) % (c->cfg.fmt == IK_PT_VTD_SL ? 26 : 25);
		c->cfg.oas = 46;
		c->cfg.fmt_flags = IK_VTD_FLAG_SP_2M;
	}
	c->cfg.pgsize_bitmap = (1ull << 12) | (k & 2 ? 1ull << 21 : 0);
	c->cfg.coherent = true;
	c->cfg.hooks = &THOOKS;
	c->cfg.cookie = c;
	c->cfg.allocator = &FA.a;
	err = ik_pgtable_create(&c->cfg, &c->pt);
	FZ_CHECK(err == 0, "pgtable_create = %d", err);
	ik_pgtable_walker(c->pt, &c->w);
	c->tag = 0x100 + i;
	/* formats that cannot deny reads (RISC-V: W without R is reserved) */
	c->rd_always = c->cfg.fmt == IK_PT_LPAE_S1 || c->cfg.fmt == IK_PT_VTD_FL ||
		       c->cfg.fmt == IK_PT_RISCV_S1 || c->cfg.fmt == IK_PT_RISCV_S2;
	/* an LPAE or VT-d stage 1 may be a guest's, nested over A.s2: its table
	 * addresses (t_alloc) and outputs (op_map) are IPAs */
	if ((k & 8) && A.s2 && c->cfg.fmt == (A.s2_smmu ? IK_PT_LPAE_S1 : IK_PT_VTD_FL)) {
		ik_pgtable_destroy(c->pt);
		c->nested = true;
		c->tag2 = 0x200 + i;
		FZ_CHECK(ik_pgtable_create(&c->cfg, &c->pt) == 0, "pgtable_create (nested)");
		ik_pgtable_walker(c->pt, &c->w);
	}
	c->win = (k & 4) ? 0 : ((1ull << c->cfg.ias) - WIN_PAGES * PAGE) & ~((2ull << 20) - 1);
	for (unsigned p = 0; p < WIN_PAGES; p++)
		c->page[p] = -1;
}

static const struct ik_pgtable_hooks S2HOOKS = { t_alloc, t_free, NULL, NULL, NULL, NULL, NULL, NULL };

/* The stage 2 of nested contexts: IPA = PA + NEST_OFF over the table-page
 * window [2^32, 2^32 + 1 GiB) and the arena; never changed during a run. */
static void create_s2(bool smmu)
{
	struct ik_pgtable_cfg c;

	memset(&c, 0, sizeof(c));
	c.fmt = smmu ? IK_PT_LPAE_S2 : IK_PT_VTD_SL;
	c.ias = smmu ? 40 : 48;
	c.oas = 40;
	c.pgsize_bitmap = (1ull << 12) | (1ull << 21) | (1ull << 30);
	c.fmt_flags = smmu ? 0 : IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G;
	c.coherent = true;
	c.hooks = &S2HOOKS;
	c.allocator = &FA.a;
	FZ_CHECK(ik_pgtable_create(&c, &A.s2) == 0, "stage 2 create");
	FZ_CHECK(ik_pgtable_map(A.s2, NEST_OFF + (1ull << 32), 1ull << 32, 1ull << 30,
				IK_PROT_READ | IK_PROT_WRITE) == 0, "stage 2 map of the table window");
	FZ_CHECK(ik_pgtable_map(A.s2, NEST_OFF + ARENA_PHYS, ARENA_PHYS, ARENA_SIZE,
				IK_PROT_READ | IK_PROT_WRITE) == 0, "stage 2 map of the arena");
	ik_pgtable_walker(A.s2, &A.s2w);
	A.s2_smmu = smmu;
}

static void run_driver(struct fz *f)
{
	unsigned ops;

	A.next_iommu = 1ull << 32;
	A.faults_exact = true;
	A.sloppy = fz_u8(f) % 4 == 3;
	A.use_queue = fz_bool(f);
	switch (fz_u8(f) % 4) {
	case 0: A.qfmt = &ik_cmdq_fmt_smmuv3; break;
	case 1: A.qfmt = &ik_cmdq_fmt_vtd128; break;
	case 2: A.qfmt = &ik_cmdq_fmt_vtd256; break;
	default: A.qfmt = &ik_cmdq_fmt_riscv; break;
	}
	if (fz_u8(f) & 1)
		create_s2(A.qfmt == &ik_cmdq_fmt_smmuv3);
	A.nctx = 1 + fz_u8(f) % MAX_CTX;
	for (unsigned i = 0; i < A.nctx; i++)
		create_ctx(f, &A.c[i], i);
	for (unsigned i = 0; i < MAX_SID; i++)
		A.sid_ctx[i] = -1;
	if (A.use_queue) {
		struct ik_softiommu_cq_config qc;
		struct ik_cmdq_config cc;
		unsigned log2 = 3 + fz_u8(f) % 3;

		A.ring = aligned_alloc(64, (size_t)A.qfmt->entry_size << log2);
		memset(&qc, 0, sizeof(qc));
		qc.fmt = A.qfmt;
		qc.log2_entries = log2;
		qc.ring = A.ring;
		FZ_CHECK(ik_softiommu_cq_init(&A.cq, S, &qc) == 0, "cq_init");
		memset(&cc, 0, sizeof(cc));
		cc.fmt = A.qfmt;
		cc.log2_entries = log2;
		cc.ring = A.ring;
		cc.regs = &ik_softiommu_cq_regs;
		cc.regs_ctx = &A.cq;
		cc.alloc = &FA.a;
		FZ_CHECK(ik_cmdq_create(&cc, &A.q) == 0, "cmdq_create");
	}

	for (ops = 0; fz_left(f) && ops < 96; ops++) {
		uint8_t op = fz_u8(f);

		switch (op % 12) {
		case 0:
		case 1:
		case 2: op_map(f); break;
		case 3: op_unmap(f); break;
		case 4:
		case 5: op_dma(f, false); break;
		case 6: op_dma(f, true); break;
		case 7: op_translate(f); break;
		case 8: op_fault_pop(); break;
		case 9: op_attach(f); break;
		case 10: op_exec(f); break;
		default:
			if (op & 0x80) {
				op_bad_queue(f);
			} else {
				check_mode = !check_mode;
				FZ_CHECK(ik_softiommu_set_flags(S, check_mode ? IK_SOFTIOMMU_CHECK : 0) == 0,
					 "set_flags");
			}
			break;
		}
	}
	op_fault_pop();
	{
		struct ik_softiommu_stale st;
		struct ik_softiommu_stats stats;

		FZ_CHECK(ik_softiommu_stats(S, &stats) == 0, "stats");
		if (!A.sloppy) {
			FZ_CHECK(ik_softiommu_stale_pop(S, &st) == -ENOENT && stats.stale == 0,
				 "a correct driver got a stale-translation report (iova %#llx)",
				 (unsigned long long)st.iova);
			FZ_CHECK(stats.faults == A.faults, "stats: %llu faults, model %llu",
				 (unsigned long long)stats.faults, (unsigned long long)A.faults);
		}
		while (ik_softiommu_stale_pop(S, &st) == 0)
			FZ_CHECK(st.nhist <= IK_SOFTIOMMU_REPORT_HIST, "stale report history");
	}
	ik_cmdq_destroy(A.q);
	free(A.ring);
	for (unsigned i = 0; i < A.nctx; i++)
		ik_pgtable_destroy(A.c[i].pt);
	ik_pgtable_destroy(A.s2);
	A.s2 = NULL;
	FZ_CHECK(A.ntp == 0, "%u table pages left", A.ntp);
}

/* ================================================================ mode B */

struct gstream {
	struct ik_pt_walker w;
	struct ik_pt_walker w2;	/* nested: the stage 2 */
	bool on, nested;
};

static struct gstream GSTR[MAX_SID];
static uint32_t MAXS; /* the soft IOMMU's max_streams */

static int g_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	(void)ctx;
	if (addr < GM_PHYS || addr - GM_PHYS >= GM_SIZE || GM_SIZE - (addr - GM_PHYS) < 8 || (addr & 7))
		return -EFAULT;
	memcpy(val, gm + (addr - GM_PHYS), 8);
	return 0;
}

static int g_cas64(void *ctx, ik_u64 addr, ik_u64 old, ik_u64 val)
{
	uint64_t cur;

	if (g_read64(ctx, addr, &cur))
		return -EFAULT;
	if (cur != old)
		return -EAGAIN;
	memcpy(gm + (addr - GM_PHYS), &val, 8);
	return 0;
}

static const struct ik_pt_mem GMEM = { g_read64, g_cas64, NULL };

/* The harness's own nested walk, for the checked translations: stage 1
 * through a view that walks each table-entry IPA by stage 2 (read), then
 * the output IPA by stage 2.  No hardware updates (a reference). */
static int ref_nest_read64(void *ctx, ik_u64 ipa, ik_u64 *val)
{
	const struct ik_pt_walker *w2 = (const struct ik_pt_walker *)ctx;
	struct ik_pt_mem m = { g_read64, NULL, NULL };
	struct ik_pt_walk_result r;

	if (ik_pt_walk(w2, &m, ipa, IK_ACCESS_READ, &r) || r.fault)
		return -EFAULT;
	return g_read64(NULL, r.oa, val);
}

static bool ref_nested(const struct gstream *g, uint64_t iova, uint64_t *oa)
{
	struct ik_pt_mem m1 = { ref_nest_read64, NULL, (void *)&g->w2 };
	struct ik_pt_mem m2 = { g_read64, NULL, NULL };
	struct ik_pt_walk_result r;

	if (ik_pt_walk(&g->w, &m1, iova, 0, &r) || r.fault)
		return false;
	if (ik_pt_walk(&g->w2, &m2, r.oa, 0, &r) || r.fault)
		return false;
	*oa = r.oa;
	return true;
}

/* A walker of format fmt at a guest-memory root from a fuzzed config
 * (mostly sane widths): 0 or the config's error. */
static int gen_cfg_walker(struct fz *f, enum ik_pt_fmt fmt, struct ik_pt_walker *w)
{
	struct ik_pgtable_cfg c;
	uint64_t root = GM_PHYS + (fz_u8(f) % (GM_SIZE / PAGE)) * PAGE;

	memset(&c, 0, sizeof(c));
	c.fmt = fmt;
	c.ias = fz_bool(f) ? 32 + fz_u8(f) % 26 : (fmt == IK_PT_VTD_SL ? 39 : 40);
	c.oas = fz_bool(f) ? 32 + fz_u8(f) % 21 : 40;
	c.pgsize_bitmap = (1ull << 12) | (fz_bool(f) ? 1ull << 21 : 0) | (fz_bool(f) ? 1ull << 30 : 0);
	c.quirks = fz_u8(f) & 1;
	c.fmt_flags = fmt >= IK_PT_VTD_SL ? fz_u8(f) & 3 : 0;
	if (fz_u8(f) > 240)
		root = fz_edgy(f);
	return ik_pt_walker_init(w, &c, root);
}

/* A nested stream: both stages' tables in guest memory, stage 1's at
 * IPAs; sometimes a pair the soft IOMMU must refuse. */
static void b_attach_nested(struct fz *f, uint32_t sid)
{
	static const enum ik_pt_fmt pairs[][2] = {
		{ IK_PT_LPAE_S1, IK_PT_LPAE_S2 }, { IK_PT_VTD_FL, IK_PT_VTD_SL },
		{ IK_PT_LPAE_S1, IK_PT_VTD_SL },  { IK_PT_LPAE_S2, IK_PT_LPAE_S2 },
	};
	unsigned p = fz_u8(f) % 8;
	bool good = p < 6; /* mostly a supported pair */
	struct ik_softiommu_nested n;
	int err;

	p = good ? p % 2 : 2 + p % 2;
	memset(&n, 0, sizeof(n));
	if (gen_cfg_walker(f, pairs[p][0], &n.s1) || gen_cfg_walker(f, pairs[p][1], &n.s2))
		return;
	n.s1_tag = fz_u8(f);
	n.s2_tag = fz_u8(f);
	n.mem = &GMEM;
	err = ik_softiommu_attach_nested(S, sid, &n);
	FZ_CHECK(err == (good && sid < MAXS ? 0 : -EINVAL), "attach_nested pair %u sid %u = %d", p,
		 sid, err);
	if (err)
		return;
	GSTR[sid].w = n.s1;
	GSTR[sid].w2 = n.s2;
	GSTR[sid].on = true;
	GSTR[sid].nested = true;
}

/* An entry a guest might write: a table or leaf pointing into the guest
 * memory or the arena, or junk. */
static uint64_t gen_entry(struct fz *f)
{
	uint8_t k = fz_u8(f);
	uint64_t a;

	switch (k % 5) {
	case 0: a = GM_PHYS + (fz_u16(f) % (GM_SIZE / PAGE)) * PAGE; break;
	case 1: a = ARENA_PHYS + (fz_u16(f) % (ARENA_SIZE / PAGE)) * PAGE; break;
	case 2: a = ARENA_PHYS + (fz_u8(f) % 2) * (2ull << 20); break;
	case 3: return fz_edgy(f);
	default: return fz_u64(f);
	}
	return a | (fz_u16(f) & 0xfff) | ((uint64_t)(fz_u8(f) & 0xf8) << 56);
}

static void b_attach(struct fz *f)
{
	uint32_t sid = fz_u8(f) % MAX_SID;
	uint8_t k = fz_u8(f);
	uint64_t root = GM_PHYS + (fz_u8(f) % (GM_SIZE / PAGE)) * PAGE;
	struct ik_pt_walker w;
	int err = -EINVAL;

	if (fz_u8(f) > 240)
		root = fz_edgy(f);
	if (k % 8 >= 6) {
		b_attach_nested(f, sid);
		return;
	}
	switch (k % 5) {
	case 0: {
		uint64_t tcr = fz_u64(f);

		if (fz_bool(f)) /* mostly sane: T0SZ, TG0, IPS */
			tcr = (64 - (32 + fz_u8(f) % 17)) | ((uint64_t)(fz_u8(f) % 3) << 14) |
			      ((uint64_t)(fz_u8(f) % 6) << 32) | ((uint64_t)(fz_u8(f) % 3) << 6) |
			      ((uint64_t)(fz_u8(f) % 6) << 16);
		err = ik_lpae_walker_from_regs(&w, 1 + fz_u8(f) % 2, tcr, root,
					       fz_bool(f) ? IK_PT_QUIRK_DIRTY : 0);
		break;
	}
	case 1: {
		ik_u64 ce[2] = { IK_VTD_CTX_P | root | (fz_u8(f) & 0xc), (ik_u64)(fz_u8(f) % 5) };

		err = ik_vtd_walker_from_context(&w, ce, fz_u8(f) & 0xf, 32 + fz_u8(f) % 21);
		break;
	}
	case 2: {
		ik_u64 pe[8] = { 0 };

		pe[0] = IK_VTD_PE_P | ((ik_u64)(fz_u8(f) % 5) << IK_VTD_PE_AW_SHIFT) |
			((ik_u64)(1 + fz_u8(f) % 3) << IK_VTD_PE_PGTT_SHIFT) | (fz_bool(f) ? IK_VTD_PE_SLADE : 0) |
			root;
		pe[2] = root | ((ik_u64)(fz_u8(f) % 3) << IK_VTD_PE_FLPM_SHIFT);
		err = ik_vtd_walker_from_pasid(&w, pe, fz_u8(f) & 0xf, 32 + fz_u8(f) % 21);
		break;
	}
	case 3: {
		/* an iosatp / iohgatp: MODE mostly 8..10, PPN the root */
		ik_u64 atp = ((ik_u64)(fz_u8(f) % 12) << IK_RISCV_ATP_MODE_SHIFT) | (root >> 12) |
			     (fz_bool(f) ? (ik_u64)fz_u16(f) << IK_RISCV_ATP_GSCID_SHIFT : 0);

		err = ik_riscv_walker_from_atp(&w, fz_bool(f) ? IK_PT_RISCV_S2 : IK_PT_RISCV_S1, atp,
					       32 + fz_u8(f) % 26, fz_bool(f) ? IK_PT_QUIRK_DIRTY : 0,
					       fz_u8(f) & 1);
		break;
	}
	default: {
		struct ik_pgtable_cfg c;

		memset(&c, 0, sizeof(c));
		c.fmt = (enum ik_pt_fmt)(1 + fz_u8(f) % 6);
		c.ias = 32 + fz_u8(f) % 26;
		c.oas = 32 + fz_u8(f) % 21;
		c.pgsize_bitmap = fz_u64(f) | (1ull << (12 + 2 * (fz_u8(f) % 3)));
		c.pgsize_bitmap &= ~((1ull << 12) - 1);
		c.quirks = fz_u8(f) & 1;
		c.fmt_flags = c.fmt >= IK_PT_VTD_SL ? fz_u8(f) & 3 : 0;	/* RISC-V: SUM, or refused */
		err = ik_pt_walker_init(&w, &c, root);
		break;
	}
	}
	if (err)
		return;
	err = ik_softiommu_attach_pt(S, sid, fz_u8(f), &w, &GMEM);
	FZ_CHECK(err == 0 || sid >= MAXS, "attach_pt of an accepted walker (case %u, fmt %d, %u levels) = %d",
		 k % 5, w.geom.fmt, w.geom.nlevels, err);
	if (err)
		return;
	GSTR[sid].w = w;
	GSTR[sid].on = true;
	GSTR[sid].nested = false;
}

static void b_dma(struct fz *f, bool write)
{
	static uint8_t buf[3 * 4096 + 64];
	uint32_t sid = fz_u8(f) % (MAX_SID + 1);
	uint64_t iova = fz_u8(f) & 1 ? fz_edgy(f) : (uint64_t)fz_u32(f) << (fz_u8(f) % 24),
		 len = fz_u16(f) % sizeof(buf);

	memset(buf, 0x11, sizeof(buf));
	if (write)
		(void)ik_softiommu_dma_write(S, sid, iova, buf, len);
	else
		(void)ik_softiommu_dma_read(S, sid, iova, buf, len);
	check_guards();
}

static void b_translate(struct fz *f)
{
	uint32_t sid = fz_u8(f) % MAX_SID;
	uint64_t iova = fz_u8(f) & 1 ? fz_edgy(f) : (uint64_t)fz_u32(f) << (fz_u8(f) % 24);
	struct ik_softiommu_xlate x;
	int err = ik_softiommu_translate(S, sid, iova, IK_SOFTIOMMU_READ, &x);

	if (!err && check_mode && GSTR[sid].on && GSTR[sid].nested) {
		uint64_t oa = 0;
		bool ok = ref_nested(&GSTR[sid], iova, &oa);

		/* a checked translation is what both stages say now */
		FZ_CHECK(ok && oa == x.oa && x.stage == IK_SOFTIOMMU_STAGE_NESTED,
			 "checked nested translate %#llx = %#llx, the reference says %d %#llx",
			 (unsigned long long)iova, (unsigned long long)x.oa, ok,
			 (unsigned long long)oa);
	} else if (!err && check_mode && GSTR[sid].on) {
		struct ik_pt_walk_result r;

		/* a checked translation is what the tables say now */
		FZ_CHECK(ik_pt_walk(&GSTR[sid].w, &GMEM, iova, 0, &r) == 0, "walk");
		FZ_CHECK(r.fault == IK_PT_FAULT_NONE && r.oa == x.oa,
			 "checked translate %#llx = %#llx, a fresh walk says fault %d oa %#llx",
			 (unsigned long long)iova, (unsigned long long)x.oa, r.fault,
			 (unsigned long long)r.oa);
	}
}

static void run_guest(struct fz *f)
{
	GM_SIZE = (uint64_t)(1 + fz_u8(f) % 16) * PAGE * 4;
	GM_PHYS = 0x80000000ull + (uint64_t)fz_u8(f) * (1ull << 21);
	gm_buf = malloc(GM_SIZE + 2 * GUARD);
	memset(gm_buf, GUARD_BYTE, GM_SIZE + 2 * GUARD);
	gm = gm_buf + GUARD;
	memset(gm, 0, GM_SIZE);
	memset(GSTR, 0, sizeof(GSTR));
	for (uint64_t i = 0; i < GM_SIZE / 8 && fz_left(f) && i < 64; i++) {
		uint64_t e = gen_entry(f);

		memcpy(gm + (fz_u16(f) % (GM_SIZE / 8)) * 8, &e, 8);
	}
	for (unsigned ops = 0; fz_left(f) && ops < 96; ops++) {
		uint8_t op = fz_u8(f);

		switch (op % 9) {
		case 0: b_attach(f); break;
		case 1:
		case 2: {
			uint64_t e = gen_entry(f);

			memcpy(gm + (fz_u16(f) % (GM_SIZE / 8)) * 8, &e, 8);
			break;
		}
		case 3: b_dma(f, false); break;
		case 4: b_dma(f, true); break;
		case 5: b_translate(f); break;
		case 6: {
			struct ik_softiommu_cmd c = { 1 + fz_u8(f) % 5, fz_u8(f), fz_edgy(f), fz_edgy(f), fz_bool(f), 0, 0 };

			(void)ik_softiommu_exec(S, &c);
			break;
		}
		case 7: {
			struct ik_softiommu_fault fr;

			while (ik_softiommu_fault_pop(S, &fr) == 0)
				;
			break;
		}
		default:
			check_mode = !check_mode;
			FZ_CHECK(ik_softiommu_set_flags(S, check_mode ? IK_SOFTIOMMU_CHECK : 0) == 0, "set_flags");
			break;
		}
	}
	check_guards();
	free(gm_buf);
	gm = gm_buf = NULL;
}

/* ================================================================ mode C */

/*
 * Mode C (completion addresses).  A guest writes the ring of a soft IOMMU
 * queue itself (every format ik_softiommu_cq_init() accepts: smmuv3, vtd128,
 * vtd256, riscv, amd), publishes PROD through ik_softiommu_cq_regs and lets
 * the consumer drain by doorbell or by ik_softiommu_cq_poll() with small
 * budgets.  Between invalidation commands it writes sync descriptors whose
 * completion address is any 64-bit value the descriptor can hold: in the
 * ring, at or across its ends, at the ring's or its guards' host addresses,
 * at a host canary variable, 0, edge values; the ring's device address is
 * the host one, an arbitrary one, the top of the 52- or 64-bit space, or one
 * that aliases the guards.  Also illegal entries (the consumer stops with
 * CERROR_ILL; the guest repairs and acknowledges), and sync descriptors with
 * raw bit flips (whatever the format's classify says they ask for).
 * Either no write32 hook (the default) or a recording one (never the host
 * identity hook).  Model: per entry what the descriptor asks (write or not,
 * address, value, 32 or 64 bits), and where a completion must go: into the
 * ring when all its bytes lie inside [ring_dma, ring_dma + size) (128-bit
 * arithmetic), else to the hook, else nowhere (a 64-bit store not 8-byte
 * aligned: nowhere; the five formats' fields hold only 4-byte aligned
 * addresses, 8-byte aligned for AMD's 64-bit store, so through them no
 * completion straddles an end of the ring or is a misaligned wide store:
 * the rule covers those all the same, and addresses at and across the ends
 * are generated).
 * After every drain step: the ring equals the model's
 * copy (in-ring completions applied, nothing else), the guard words and the
 * canary are intact, completions_refused counts exactly the refusals, the
 * hook saw exactly the out-of-ring completions in queue order (a 64-bit one
 * as two calls, high word at addr + 4 first), executed counts every legal
 * entry, CONS and CERROR are where the model stops.  The guest never
 * publishes a sync whose in-ring completion would land on an entry not yet
 * consumed (it publishes the batch up to there first), so every entry the
 * consumer reads is the one the model wrote.
 * Interleaved: the exported identity hooks on addresses they must refuse
 * (0, misaligned, wrapping ranges, zero lengths) and inside a buffer the
 * harness owns.
 */

#define QGUARD 256			/* bytes of guard words on each side */
#define QGUARD_WORD 0x5aa5c33cu
#define QMAX_LOG2 7
#define QREC_MAX 1024			/* hook calls per drain step: 2 per entry at most */

enum { QK_CMD, QK_SYNC, QK_ILL };
enum { QW_NONE, QW_RING, QW_HOOK, QW_REFUSED };

struct qent {
	uint8_t kind;			/* QK_* */
	uint8_t where;			/* QW_*: where its completion goes */
	bool wide;
	uint64_t addr;			/* completion address (where != QW_NONE) */
	uint32_t data, data_hi;
};

struct qrec {
	uint64_t addr;
	uint32_t val;
};

static uint32_t q_canary[8] = { 0xc0ffee00u, 0xc0ffee01u, 0xc0ffee02u, 0xc0ffee03u,
				0xc0ffee04u, 0xc0ffee05u, 0xc0ffee06u, 0xc0ffee07u };

static struct {
	const struct ik_cmdq_fmt *fmt;
	unsigned esz, size, mask, regmask, cap;
	bool hook;
	uint8_t *buf, *ring;		/* ring inside QGUARD bytes of guard on each side */
	uint8_t shadow[32u << QMAX_LOG2];
	struct qent ent[1u << QMAX_LOG2];
	uint64_t dma, bytes;		/* the ring's device address and size */
	struct ik_softiommu_cq cq;
	uint32_t prod, cons;		/* full counters: written, consumed */
	bool stopped;			/* the consumer must be stopped at cons */
	uint64_t refused, executed;
	struct qrec exp[QREC_MAX], got[QREC_MAX];
	unsigned nexp, ngot;
	uint64_t hook_calls, in_ring, stops;	/* for the trace */
} Q;

static void q_hook(void *ctx, ik_u64 addr, ik_u32 val)
{
	FZ_CHECK(ctx == (void *)&Q, "write32 hook: ctx %p, not the config's write_ctx", ctx);
	FZ_CHECK(Q.hook, "write32 hook called on a queue configured without it");
	Q.hook_calls++;
	if (Q.ngot < QREC_MAX) {
		Q.got[Q.ngot].addr = addr;
		Q.got[Q.ngot].val = val;
	}
	Q.ngot++;
}

/* Where a completion of 4 (8: wide) bytes at addr must go (the contract of
 * <iommukit/cmdq.h>, ik_cmdq_sw_init()). */
static uint8_t q_where(uint64_t addr, bool wide)
{
	unsigned __int128 a = addr, lo = Q.dma, len = wide ? 8 : 4;

	if (wide && (addr & 7))
		return QW_REFUSED; /* a 64-bit store is only ever aligned */
	if (a >= lo && a + len <= lo + Q.bytes && !(addr & 3))
		return QW_RING;
	return Q.hook ? QW_HOOK : QW_REFUSED;
}

static void q_check(const char *what)
{
	ik_u32 cerror = 0, cons;
	const uint32_t *g0 = (const uint32_t *)(const void *)Q.buf;
	const uint32_t *g1 = (const uint32_t *)(const void *)(Q.ring + Q.bytes);

	for (unsigned i = 0; i < QGUARD / 4; i++)
		FZ_CHECK(g0[i] == QGUARD_WORD && g1[i] == QGUARD_WORD,
			 "%s: a guard word around the ring was written (%s, word %u)", what,
			 g0[i] != QGUARD_WORD ? "below" : "above", i);
	for (unsigned i = 0; i < IK_ARRAY_SIZE(q_canary); i++)
		FZ_CHECK(q_canary[i] == (0xc0ffee00u | i), "%s: the host canary word %u is %#x", what, i,
			 q_canary[i]);
	for (uint64_t i = 0; i < Q.bytes; i++)
		FZ_CHECK(Q.ring[i] == Q.shadow[i], "%s: ring byte %#llx is %#x, the model has %#x", what,
			 (unsigned long long)i, Q.ring[i], Q.shadow[i]);
	FZ_CHECK(ik_load_relaxed(&Q.cq.sw.completions_refused) == Q.refused,
		 "%s: completions_refused %llu, the model %llu", what,
		 (unsigned long long)ik_load_relaxed(&Q.cq.sw.completions_refused),
		 (unsigned long long)Q.refused);
	FZ_CHECK(Q.ngot == Q.nexp, "%s: the hook got %u completions, the model %u", what, Q.ngot,
		 Q.nexp);
	for (unsigned i = 0; i < Q.nexp && i < QREC_MAX; i++)
		FZ_CHECK(Q.got[i].addr == Q.exp[i].addr && Q.got[i].val == Q.exp[i].val,
			 "%s: hook call %u: (%#llx, %#x), the model (%#llx, %#x)", what, i,
			 (unsigned long long)Q.got[i].addr, Q.got[i].val,
			 (unsigned long long)Q.exp[i].addr, Q.exp[i].val);
	Q.ngot = Q.nexp = 0;
	FZ_CHECK(ik_load_relaxed(&Q.cq.executed) == Q.executed && ik_load_relaxed(&Q.cq.rejected) == 0,
		 "%s: executed %llu rejected %llu, the model %llu and 0", what,
		 (unsigned long long)ik_load_relaxed(&Q.cq.executed),
		 (unsigned long long)ik_load_relaxed(&Q.cq.rejected), (unsigned long long)Q.executed);
	cons = ik_softiommu_cq_regs.read_cons(&Q.cq, &cerror);
	FZ_CHECK(cons == (Q.cons & Q.regmask) && cerror == (Q.stopped ? IK_CMDQ_CERROR_ILL : 0u),
		 "%s: CONS %#x CERROR %u, the model %#x %u", what, cons, cerror, Q.cons & Q.regmask,
		 Q.stopped ? IK_CMDQ_CERROR_ILL : 0u);
}

static void q_expect(uint64_t addr, uint32_t val)
{
	if (Q.nexp < QREC_MAX) {
		Q.exp[Q.nexp].addr = addr;
		Q.exp[Q.nexp].val = val;
	}
	Q.nexp++;
}

/* The model consumes up to budget entries; returns how many. */
static unsigned q_model_consume(unsigned budget)
{
	unsigned n = 0;

	while (Q.cons != Q.prod && n < budget && !Q.stopped) {
		const struct qent *e = &Q.ent[Q.cons & Q.mask];

		if (e->kind == QK_ILL) {
			Q.stopped = true;
			Q.stops++;
			break;
		}
		Q.executed++;
		switch (e->where) {
		case QW_RING: {
			uint64_t off = e->addr - Q.dma;

			Q.in_ring++;
			if (e->wide)
				memcpy(Q.shadow + off + 4, &e->data_hi, 4);
			memcpy(Q.shadow + off, &e->data, 4);
			break;
		}
		case QW_HOOK:
			if (e->wide)
				q_expect(e->addr + 4, e->data_hi);
			q_expect(e->addr, e->data);
			break;
		case QW_REFUSED:
			Q.refused++;
			break;
		default:
			break;
		}
		Q.cons++;
		n++;
	}
	return n;
}

/* A completion address a guest might write. */
static uint64_t q_gen_addr(struct fz *f)
{
	uint8_t k = fz_u8(f);

	switch (k % 11) {
	case 0:
	case 1: return Q.dma + 4 * fz_below(f, Q.bytes / 4);			/* in the ring */
	case 2: return Q.dma + Q.bytes - 16 + 4 * (fz_u8(f) % 8);		/* across its end */
	case 3: return Q.dma - 4 * (1 + fz_u8(f) % 8);				/* just below it */
	case 4: return (uint64_t)(uintptr_t)Q.ring + 4 * fz_below(f, Q.bytes / 4); /* its host address */
	case 5: return (uint64_t)(uintptr_t)(fz_bool(f) ? Q.buf : Q.ring + Q.bytes) +
		       4 * (fz_u8(f) % (QGUARD / 4));				/* the guards' */
	case 6: return (uint64_t)(uintptr_t)&q_canary[fz_u8(f) % IK_ARRAY_SIZE(q_canary)];
	case 7: return 0;
	case 8: return fz_edgy(f);
	default: return fz_u64(f);
	}
}

/* A legal command that is not a sync (executed, no completion). */
static void q_gen_cmd(struct fz *f, uint64_t w[4])
{
	uint8_t k = fz_u8(f);
	int err;

	memset(w, 0, 32);
	if (Q.fmt == &ik_cmdq_fmt_smmuv3) {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		switch (k % 4) {
		case 0: c.op = IK_SMMU_CMD_TLBI_NH_ALL; break;
		case 1: c.op = IK_SMMU_CMD_TLBI_NH_ASID; c.asid = fz_u16(f); c.vmid = fz_u16(f); break;
		case 2: c.op = IK_SMMU_CMD_TLBI_S12_VMALL; c.vmid = fz_u16(f); break;
		default: c.op = IK_SMMU_CMD_CFGI_STE; c.sid = fz_u32(f); break;
		}
		err = ik_smmu_cmd_encode(&c, w);
	} else if (Q.fmt == &ik_cmdq_fmt_riscv) {
		struct ik_riscv_cmd c;

		memset(&c, 0, sizeof(c));
		switch (k % 3) {
		case 0: c.opcode = IK_RISCV_CMD_IOTINVAL; c.func3 = IK_RISCV_IOTINVAL_VMA; break;
		case 1:
			c.opcode = IK_RISCV_CMD_IOTINVAL;
			c.func3 = IK_RISCV_IOTINVAL_GVMA;
			c.gv = 1;
			c.gscid = fz_u16(f);
			break;
		default: c.opcode = IK_RISCV_CMD_IODIR; c.func3 = IK_RISCV_IODIR_INVAL_DDT; break;
		}
		err = ik_riscv_cmd_encode(&c, w);
	} else if (Q.fmt == &ik_cmdq_fmt_amd) {
		struct ik_amd_cmd c;

		memset(&c, 0, sizeof(c));
		if (k & 1) {
			c.op = IK_AMD_CMD_INV_IOMMU_ALL;
		} else {
			c.op = IK_AMD_CMD_INV_DEVTAB_ENTRY;
			c.devid = fz_u16(f);
		}
		err = ik_amd_cmd_encode(&c, w);
	} else {
		struct ik_vtd_desc d;

		memset(&d, 0, sizeof(d));
		d.type = k & 1 ? IK_VTD_DESC_IOTLB : IK_VTD_DESC_CC;
		d.g = (k & 2) ? IK_VTD_G_DOMAIN : IK_VTD_G_GLOBAL;
		d.did = d.g == IK_VTD_G_DOMAIN ? fz_u16(f) : 0;
		err = ik_vtd_desc_encode(&d, w, Q.esz / 8);
	}
	FZ_CHECK(err == 0, "encode a %s command = %d", Q.fmt->name, err);
}

/* A sync descriptor: what it asks for in *e (where not yet decided). */
static void q_gen_sync(struct fz *f, uint64_t w[4], struct qent *e)
{
	uint64_t a = q_gen_addr(f);
	uint8_t k = fz_u8(f);
	uint32_t data = fz_u32(f);
	int err;

	memset(w, 0, 32);
	e->kind = QK_SYNC;
	e->wide = false;
	e->data = data;
	e->data_hi = 0;
	if (Q.fmt == &ik_cmdq_fmt_smmuv3) {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_SMMU_CMD_SYNC;
		c.cs = k % 4 == 3 ? IK_SMMU_SYNC_CS_IRQ : k % 3; /* mostly IRQ */
		c.msh = (k >> 2) & 3;
		c.msiattr = k >> 4;
		c.msidata = data;
		c.msiaddr = a & ((1ull << 52) - 1) & ~3ull;
		err = ik_smmu_cmd_encode(&c, w);
		/* CS=IRQ with an address: the MSI write; CS=NONE/SEV or no
		 * address: none */
		e->where = c.cs == IK_SMMU_SYNC_CS_IRQ && c.msiaddr ? QW_HOOK : QW_NONE;
		e->addr = c.msiaddr;
	} else if (Q.fmt == &ik_cmdq_fmt_riscv) {
		struct ik_riscv_cmd c;

		memset(&c, 0, sizeof(c));
		c.opcode = IK_RISCV_CMD_IOFENCE;
		c.func3 = IK_RISCV_IOFENCE_C;
		c.av = (k & 7) != 0; /* mostly AV */
		c.wsi = (k >> 3) & 1;
		c.pr = (k >> 4) & 1;
		c.pw = (k >> 5) & 1;
		if (c.av) {
			c.addr = a & ~3ull;
			c.data = data;
		}
		err = ik_riscv_cmd_encode(&c, w);
		/* AV: DATA written at ADDR, whatever ADDR is (0 included) */
		e->where = c.av ? QW_HOOK : QW_NONE;
		e->addr = c.addr;
		e->data = c.data;
	} else if (Q.fmt == &ik_cmdq_fmt_amd) {
		struct ik_amd_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_AMD_CMD_COMPLETION_WAIT;
		c.store = (k & 7) != 0; /* mostly S */
		c.irq = (k >> 3) & 1;
		c.flush = (k >> 4) & 1;
		c.store_addr = a & ((1ull << 52) - 1) & ~7ull;
		c.store_data = (k & 0x40) ? (uint64_t)fz_u32(f) << 32 | data : data;
		err = ik_amd_cmd_encode(&c, w);
		/* S: the whole 64-bit StoreData at StoreAddress */
		e->where = c.store ? QW_HOOK : QW_NONE;
		e->wide = true;
		e->addr = c.store_addr;
		e->data = (uint32_t)c.store_data;
		e->data_hi = (uint32_t)(c.store_data >> 32);
	} else {
		struct ik_vtd_desc d;

		memset(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_WAIT;
		d.sw = (k & 7) != 0; /* mostly SW */
		d.iflag = !d.sw || (k & 8);
		d.fn = (k >> 4) & 1;
		d.pd = (k >> 5) & 1;
		d.status_addr = a & ~3ull;
		d.status_data = data;
		err = ik_vtd_desc_encode(&d, w, Q.esz / 8);
		if (err) { /* a combination the encoder refuses: the plain SW wait */
			d.iflag = d.fn = d.pd = 0;
			d.sw = 1;
			err = ik_vtd_desc_encode(&d, w, Q.esz / 8);
		}
		/* SW: status data written at the status address (0 included) */
		e->where = d.sw ? QW_HOOK : QW_NONE;
		e->addr = d.status_addr;
	}
	FZ_CHECK(err == 0, "encode a %s sync = %d", Q.fmt->name, err);
	if (e->where != QW_NONE)
		e->where = q_where(e->addr, e->wide);
}

/* The bits of an entry's first word that hold its opcode (its kind). */
static uint64_t q_opcode_bits(void)
{
	if (Q.fmt == &ik_cmdq_fmt_smmuv3)
		return 0xff;			/* opcode [7:0] */
	if (Q.fmt == &ik_cmdq_fmt_riscv)
		return 0x3ff;			/* opcode [6:0], func3 [9:7] */
	if (Q.fmt == &ik_cmdq_fmt_amd)
		return 0xfull << 60;		/* opcode [63:60] */
	return 0xe0f;				/* VT-d type [3:0] and [11:9] */
}

/* One entry the guest writes: a command, a sync, a sync with bits flipped
 * (what it asks for is what the format's classify says: the codecs are
 * fuzz_cmd's; never an opcode bit), or an illegal entry. */
static void q_gen_entry(struct fz *f, uint64_t w[4], struct qent *e, bool legal)
{
	uint8_t k = fz_u8(f);

	memset(e, 0, sizeof(*e));
	switch (k % 8) {
	case 0:
	case 1:
		q_gen_cmd(f, w);
		e->kind = QK_CMD;
		break;
	case 6: {
		struct ik_cmdq_sync_info si = { false, 0, 0, false, 0 };
		unsigned bit = fz_u8(f) % (Q.esz * 8);
		int kind;

		q_gen_sync(f, w, e);
		/* not the opcode's bits: another opcode is another command */
		if (bit < 64 && ((q_opcode_bits() >> bit) & 1))
			bit += 16;
		w[bit / 64] ^= 1ull << (bit % 64);
		kind = Q.fmt->classify(w, &si);
		FZ_CHECK(kind == IK_CMDQ_KIND_SYNC || kind < 0,
			 "a %s sync with bit %u flipped classifies as a command", Q.fmt->name, bit);
		memset(e, 0, sizeof(*e));
		if (kind < 0) {
			e->kind = QK_ILL;
			if (legal) /* a repair: the unflipped sync */
				q_gen_sync(f, w, e);
			break;
		}
		e->kind = QK_SYNC;
		e->wide = si.wide;
		e->addr = si.addr;
		e->data = si.data;
		e->data_hi = si.data_hi;
		e->where = si.write ? q_where(si.addr, si.wide) : QW_NONE;
		break;
	}
	case 7:
		if (!legal) {
			memset(w, 0, 32); /* all zero: illegal in every format */
			e->kind = QK_ILL;
			break;
		}
		/* fall through */
	default:
		q_gen_sync(f, w, e);
		break;
	}
}

/* Does e's completion land in ring slot `slot`? */
static bool q_lands(const struct qent *e, unsigned slot)
{
	uint64_t off = e->addr - Q.dma;

	return e->kind == QK_SYNC && e->where == QW_RING && off / Q.esz <= slot &&
	       slot <= (off + (e->wide ? 7 : 3)) / Q.esz;
}

/* Publish everything written and drain it, step by step, repairing and
 * acknowledging illegal entries. */
static void q_drain(struct fz *f)
{
	ik_softiommu_cq_regs.write_prod(&Q.cq, Q.prod & Q.regmask);
	while (Q.cons != Q.prod) {
		uint8_t k = fz_u8(f);

		if (Q.stopped) {
			uint64_t w[4];
			struct qent e;
			unsigned slot = Q.cons & Q.mask;
			bool clash = false;

			FZ_CHECK(ik_softiommu_cq_poll(&Q.cq, 1 + k % 8) == -EAGAIN,
				 "poll while stopped on an error");
			q_check("stopped");
			/* Repair: a legal entry; a sync whose completion would
			 * land on an entry behind it gives way to a command. */
			q_gen_entry(f, w, &e, true);
			for (uint32_t j = Q.cons + 1; j != Q.prod; j++)
				clash |= q_lands(&e, j & Q.mask);
			if (clash) {
				q_gen_cmd(f, w);
				memset(&e, 0, sizeof(e));
				e.kind = QK_CMD;
			}
			Q.ent[slot] = e;
			memcpy(Q.ring + (size_t)slot * Q.esz, w, Q.esz);
			memcpy(Q.shadow + (size_t)slot * Q.esz, w, Q.esz);
			Q.stopped = false;
			ik_softiommu_cq_regs.ack_error(&Q.cq); /* resumes: drains inline */
			(void)q_model_consume(~0u);
			q_check("after the acknowledgement");
		} else if (k & 1) {
			ik_softiommu_cq_regs.doorbell(&Q.cq);
			(void)q_model_consume(~0u);
			q_check("doorbell");
		} else {
			unsigned budget = 1 + (k >> 1) % 8;
			int r = ik_softiommu_cq_poll(&Q.cq, budget);
			unsigned n = q_model_consume(budget);

			FZ_CHECK(r == (int)n, "poll(%u) = %d, the model %u", budget, r, n);
			q_check("poll");
		}
	}
	q_check("drained");
}

/* A batch of up to a ring's worth of entries, published as one unless a
 * sync's in-ring completion would land on an entry of it not consumed yet
 * (then what comes before is published and drained first). */
static void q_batch(struct fz *f)
{
	unsigned n = 1 + fz_u8(f) % Q.cap;

	for (unsigned i = 0; i < n; i++) {
		uint64_t w[4];
		struct qent e;
		unsigned slot = Q.prod & Q.mask;

		q_gen_entry(f, w, &e, false);
		for (uint32_t j = Q.cons; j != Q.prod; j++)
			if (q_lands(&Q.ent[j & Q.mask], slot)) {
				q_drain(f);
				break;
			}
		Q.ent[slot] = e;
		memcpy(Q.ring + (size_t)slot * Q.esz, w, Q.esz);
		memcpy(Q.shadow + (size_t)slot * Q.esz, w, Q.esz);
		Q.prod++;
	}
	q_drain(f);
}

/* The exported identity hooks, on addresses they must refuse or inside a
 * buffer the harness owns. */
static void q_host_hooks(struct fz *f)
{
	static uint64_t hbuf[32];
	static uint8_t before[sizeof(hbuf)];
	uint8_t k = fz_u8(f);
	uint64_t hb = (uint64_t)(uintptr_t)hbuf;
	bool narrow = sizeof(uintptr_t) < 8; /* addresses wider than a pointer */

	for (unsigned i = 0; i < IK_ARRAY_SIZE(hbuf); i++)
		hbuf[i] = 0x0123456789abcdefull * (i + 1);
	memcpy(before, hbuf, sizeof(hbuf));
	switch (k % 8) {
	case 0: { /* identity: address 0, any length */
		ik_size len = (ik_size)fz_u64(f);

		FZ_CHECK(ik_softiommu_host_identity(NULL, 0, len) == NULL, "host_identity(0, %zu)",
			 (size_t)len);
		break;
	}
	case 1: { /* identity: length 0, any address */
		uint64_t oa = fz_edgy(f);

		FZ_CHECK(ik_softiommu_host_identity(&Q, oa, 0) == NULL, "host_identity(%#llx, 0)",
			 (unsigned long long)oa);
		break;
	}
	case 2: { /* identity: a range past the top of the address space */
		uint64_t oa = fz_u64(f) | (1ull << 63);
		ik_size len;

		if (narrow)
			oa = (uint32_t)oa | (1u << 31);
		len = (ik_size)(0 - (uintptr_t)oa) + 1 + fz_u16(f);
		FZ_CHECK(ik_softiommu_host_identity(NULL, oa, len) == NULL,
			 "host_identity(%#llx, %zu) wraps", (unsigned long long)oa, (size_t)len);
		if (narrow) /* wider than a pointer */
			FZ_CHECK(ik_softiommu_host_identity(NULL, oa | (1ull << 32), 1) == NULL,
				 "host_identity beyond a pointer");
		break;
	}
	case 3: { /* identity inside hbuf: the pointer itself */
		unsigned off = fz_u8(f) % sizeof(hbuf);
		ik_size len = 1 + fz_u16(f) % (sizeof(hbuf) - off);

		FZ_CHECK(ik_softiommu_host_identity(NULL, hb + off, len) == (uint8_t *)hbuf + off,
			 "host_identity inside a buffer");
		break;
	}
	case 4: { /* write32: 0 or misaligned anywhere (never performed) */
		uint64_t a = k & 0x10 ? 0 : (fz_bool(f) ? hb + fz_u8(f) % sizeof(hbuf) : fz_edgy(f) ^ fz_u64(f));

		if (a)
			a |= 1 + fz_u8(f) % 3;
		ik_softiommu_host_write32(NULL, a, fz_u32(f));
		break;
	}
	case 5: { /* write32 inside hbuf, aligned: exactly that word */
		unsigned i = fz_u8(f) % (sizeof(hbuf) / 4);
		uint32_t v = fz_u32(f);

		ik_softiommu_host_write32(&Q, hb + 4 * i, v);
		memcpy(before + 4 * i, &v, 4);
		break;
	}
	case 6: { /* read64: 0 or misaligned anywhere */
		uint64_t a = k & 0x10 ? 0 : (fz_bool(f) ? hb + fz_u8(f) % sizeof(hbuf) : fz_edgy(f) ^ fz_u64(f));
		ik_u64 v = 0;

		if (a)
			a |= 1 + fz_u8(f) % 7;
		FZ_CHECK(ik_softiommu_host_mem.read64(ik_softiommu_host_mem.ctx, a, &v) == -EFAULT,
			 "host_mem.read64(%#llx)", (unsigned long long)a);
		break;
	}
	default: { /* read64 inside hbuf, aligned */
		unsigned i = fz_u8(f) % IK_ARRAY_SIZE(hbuf);
		ik_u64 v = 0;

		FZ_CHECK(ik_softiommu_host_mem.read64(ik_softiommu_host_mem.ctx, hb + 8 * i, &v) == 0 &&
				 v == hbuf[i],
			 "host_mem.read64 inside a buffer");
		FZ_CHECK(!ik_softiommu_host_mem.cas64, "host_mem has a cas64");
		break;
	}
	}
	FZ_CHECK(memcmp(before, hbuf, sizeof(hbuf)) == 0, "an identity hook changed the buffer (op %u)",
		 k % 8);
	q_check("identity hooks");
}

static void run_queue(struct fz *f)
{
	static const struct ik_cmdq_fmt *const fmts[] = { &ik_cmdq_fmt_smmuv3, &ik_cmdq_fmt_vtd128,
							  &ik_cmdq_fmt_vtd256, &ik_cmdq_fmt_riscv,
							  &ik_cmdq_fmt_amd };
	struct ik_softiommu_cq_config qc;
	unsigned log2;
	uint64_t dma;
	uint8_t k;
	bool ok;
	int err;

	memset(&Q, 0, sizeof(Q));
	Q.fmt = fmts[fz_u8(f) % IK_ARRAY_SIZE(fmts)];
	Q.esz = Q.fmt->entry_size;
	log2 = IK_CMDQ_LOG2_MIN + fz_u8(f) % (QMAX_LOG2 - IK_CMDQ_LOG2_MIN + 1);
	Q.size = 1u << log2;
	Q.mask = Q.size - 1;
	Q.bytes = (uint64_t)Q.esz << log2;
	Q.hook = fz_bool(f);
	memset(&qc, 0, sizeof(qc));
	qc.fmt = Q.fmt;
	qc.log2_entries = log2;
	qc.flags = fz_bool(f) ? IK_CMDQ_CFG_NO_WRAP : 0;
	Q.regmask = qc.flags ? Q.mask : 2 * Q.size - 1;
	Q.cap = qc.flags ? Q.size - 1 : Q.size; /* NO_WRAP: a full ring reads as empty */
	Q.buf = aligned_alloc(64, QGUARD * 2 + Q.bytes);
	Q.ring = Q.buf + QGUARD;
	for (unsigned i = 0; i < QGUARD / 4; i++) {
		uint32_t g = QGUARD_WORD;

		memcpy(Q.buf + 4 * i, &g, 4);
		memcpy(Q.ring + Q.bytes + 4 * i, &g, 4);
	}
	for (uint64_t i = 0; i < Q.bytes; i++)
		Q.ring[i] = Q.shadow[i] = (uint8_t)(0x80 + i * 13);
	qc.ring = Q.ring;
	if (Q.hook) {
		qc.write32 = q_hook;
		qc.write_ctx = &Q;
	}
	/* the ring's device address */
	k = fz_u8(f);
	switch (k % 8) {
	case 0:
	case 1: dma = 0; break;	/* its host address */
	case 2: dma = fz_u64(f) & ((1ull << 52) - 1) & ~(uint64_t)(Q.esz - 1); break;
	case 3: dma = (1ull << 52) - Q.bytes; break;	/* the top of an SMMUv3/AMD address */
	case 4: dma = 0 - Q.bytes; break;		/* the top of 64 bits */
	case 5: dma = (uint64_t)(uintptr_t)Q.buf; break; /* device ring over the host guard */
	case 6: dma = (uint64_t)(uintptr_t)Q.ring + Q.bytes; break; /* just above the host ring */
	default: dma = fz_edgy(f); break;
	}
	ok = !(dma & (Q.esz - 1)) && Q.bytes - 1 <= ~0ull - dma;
	qc.ring_dma = dma;
	err = ik_softiommu_cq_init(&Q.cq, S, &qc);
	if (dma && !ok) {
		FZ_CHECK(err == -EINVAL, "cq_init with ring_dma %#llx (%llu bytes) = %d",
			 (unsigned long long)dma, (unsigned long long)Q.bytes, err);
		qc.ring_dma = dma = 0;
		err = ik_softiommu_cq_init(&Q.cq, S, &qc);
	}
	FZ_CHECK(err == 0, "cq_init %s log2 %u ring_dma %#llx = %d", Q.fmt->name, log2,
		 (unsigned long long)dma, err);
	Q.dma = dma ? dma : (uint64_t)(uintptr_t)Q.ring;
	TRACE("queue %s log2 %u flags %u hook %d ring %p dma %#llx\n", Q.fmt->name, log2, qc.flags,
	      Q.hook, (void *)Q.ring, (unsigned long long)Q.dma);
	q_check("init");
	for (unsigned ops = 0; fz_left(f) && ops < 48; ops++) {
		if (fz_u8(f) % 4 == 3)
			q_host_hooks(f);
		else
			q_batch(f);
	}
	q_check("end");
	TRACE("queue: %llu entries, %llu executed, %llu completions in the ring, %llu to the hook, "
	      "%llu refused, %llu stops\n", (unsigned long long)Q.prod, (unsigned long long)Q.executed,
	      (unsigned long long)Q.in_ring, (unsigned long long)Q.hook_calls,
	      (unsigned long long)Q.refused, (unsigned long long)Q.stops);
	FZ_CHECK(Q.hook || Q.hook_calls == 0, "hook calls without a hook");
	free(Q.buf);
	Q.buf = Q.ring = NULL;
}

/* ================================================================ driver */

static bool pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
	return IK_IS_POW2(v) && v >= lo && v <= hi;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ik_softiommu_config cfg;
	struct fz f;
	uint8_t k;
	bool valid;
	int err;

	if (!arena_buf) {
		arena_buf = malloc(ARENA_SIZE + 2 * GUARD);
		memset(arena_buf, GUARD_BYTE, ARENA_SIZE + 2 * GUARD);
		arena = arena_buf + GUARD;
		memset(arena, 0, ARENA_SIZE);
	}
	fz_init(&f, data, size);
	fz_alloc_init(&FA);
	k = fz_u8(&f);
	mode_b = k & 1;
	mode_c = k >= 0xe0; /* no seed of modes A and B starts with these */
	ik_softiommu_config_init(&cfg);
	k = fz_u8(&f);
	cfg.iotlb_entries = k < 240 ? (k & 7 ? 1u << (k & 7) : 0) : fz_u32(&f);
	cfg.iotlb_ways = k < 240 ? 1u << (fz_u8(&f) % 4) : fz_u32(&f);
	if (cfg.iotlb_entries && cfg.iotlb_ways > cfg.iotlb_entries && k < 240)
		cfg.iotlb_ways = cfg.iotlb_entries;
	cfg.walk_cache_entries = fz_u8(&f) % 9;
	cfg.max_streams = 1 + fz_u8(&f) % (MAX_SID + 2);
	cfg.fault_depth = 1u << (fz_u8(&f) % 7);
	cfg.stale_depth = 1u << (fz_u8(&f) % 4);
	cfg.history_depth = 16u << (fz_u8(&f) % 3);
	check_mode = fz_bool(&f);
	cfg.flags = check_mode ? IK_SOFTIOMMU_CHECK : 0;
	cfg.phys_to_host = phys_to_host;
	cfg.allocator = &FA.a;
	if (fz_u8(&f) == 0xff) /* the odd bad value */
		cfg.history_depth = 8;
	valid = (!cfg.iotlb_entries || (pow2_in(cfg.iotlb_entries, 1, 65536) && IK_IS_POW2(cfg.iotlb_ways) &&
					cfg.iotlb_ways <= cfg.iotlb_entries)) &&
		cfg.walk_cache_entries <= 256 && cfg.max_streams >= 1 && cfg.max_streams <= 65536 &&
		pow2_in(cfg.fault_depth, 1, 65536) && pow2_in(cfg.stale_depth, 1, 4096) &&
		pow2_in(cfg.history_depth, 16, 65536);
	fz_alloc_arm(&FA, fz_u8(&f) % 16 == 0 ? 1 + fz_u8(&f) % 7 : 0);
	err = ik_softiommu_create(&cfg, &S);
	fz_alloc_arm(&FA, 0);
	if (!valid) {
		FZ_CHECK(err == -EINVAL, "create of a bad config = %d", err);
		return 0;
	}
	if (err == -ENOMEM) {
		FZ_CHECK(FA.live == 0, "a failed create left %ld blocks", FA.live);
		err = ik_softiommu_create(&cfg, &S);
	}
	FZ_CHECK(err == 0, "create = %d", err);
	if (mode_c) {
		run_queue(&f);
	} else if (mode_b) {
		MAXS = cfg.max_streams;
		run_guest(&f);
	} else {
		memset(&A, 0, sizeof(A));
		A.max_streams = cfg.max_streams;
		A.fault_depth = cfg.fault_depth;
		run_driver(&f);
	}
	ik_softiommu_destroy(S);
	S = NULL;
	FZ_CHECK(FA.live == 0, "%ld blocks left after destroy", FA.live);
	return 0;
}
