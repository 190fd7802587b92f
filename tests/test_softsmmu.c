/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softsmmu: the register-level SMMUv3 model (<iommukit/softsmmu.h>) brought
 * up by the SMMUv3 driver core (<iommukit/drv/smmuv3.h>) through its
 * struct ik_mmio, exactly as the core brings up QEMU's SMMUv3: end-to-end
 * DMA through STE, CD and page tables fetched from memory, events, command
 * errors, and the core's ECMDQ register mode (discovery, per-CPU queues,
 * shared queues, per-queue errors, fallback) against hostile register
 * behaviour injected by the model.  Register bit positions used by the
 * assertions are written here from IHI 0070, not taken from the encoders.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/softsmmu.h>
#include <iommukit/drv/smmuv3.h>
#include <iommukit/pgtable.h>
#include "testlib.h"

/* Spec positions (IHI 0070). */
#define CR0ACK 0x24u
#define GERROR 0x60u
#define GERRORN 0x64u
#define GERROR_CMDQP (1u << 9)
#define CP0 0x20000u	/* the model's control page 0 */
#define EQ_PROD(q) (CP0 + ((q) >> 1) * 0x10000u + ((q) & 1) * 0x100u + 8u) /* 2 queues/page */
#define EQ_CONS(q) (EQ_PROD(q) + 4u)
#define ENACK (1u << 31)
#define ERR (1u << 23)
#define ERRACK (1u << 23)

struct rig {
	struct ik_softiommu *soft;
	struct ik_softsmmu *m;
	struct ik_mmio io;
	struct ik_dma_mem dma;
	struct ik_test_ncdma *nc;	/* non-NULL: the core's DMA memory is not coherent */
	struct ik_smmu *s;
};

static bool rig_noncoherent; /* the next rig_init() uses struct ik_test_ncdma */

/* A model with `nq` ECMDQs (2 per control page; 0: no ECMDQ), reset by the
 * driver core with IK_SMMU_F_ECMDQ and at most `limit` queues.  `pre`
 * (may be NULL) runs on the model before the reset. */
static void rig_init(struct rig *r, unsigned nq, unsigned limit, ik_u64 timeout_ns,
		     void (*pre)(struct rig *))
{
	struct ik_softiommu_config sc;
	struct ik_softsmmu_config mc;
	struct ik_smmu_config cfg;

	memset(r, 0, sizeof(*r));
	ik_softiommu_config_init(&sc);
	sc.flags = IK_SOFTIOMMU_CHECK;
	sc.phys_to_host = ik_softiommu_host_identity; /* tables map host buffers */
	ck_assert_int_eq(ik_softiommu_create(&sc, &r->soft), 0);
	ik_softsmmu_config_init(&mc);
	mc.soft = r->soft;
	mc.phys_to_host = ik_softiommu_host_identity;
	if (nq) {
		mc.idr[1] |= IK_SMMU_IDR1_ECMDQ;
		mc.ecmdq_log2numq = 1;
		mc.ecmdq_log2nump = nq <= 2 ? 0 : nq <= 4 ? 1 : 2;
	}
	ck_assert_int_eq(ik_softsmmu_create(&mc, &r->m), 0);
	ck_assert_int_eq(ik_softsmmu_mmio(r->m, &r->io), 0);
	ck_assert_int_eq(ik_dma_mem_default(&r->dma, NULL), 0);
	if (rig_noncoherent) {
		r->nc = malloc(sizeof(*r->nc));
		ck_assert_ptr_nonnull(r->nc);
		ik_test_ncdma_init(r->nc);
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.mmio = &r->io;
	cfg.dma = r->nc ? &r->nc->d : &r->dma;
	cfg.cmdq_log2 = 4; /* 16 entries: the rings wrap often */
	cfg.evtq_log2 = 3;
	cfg.timeout_ns = timeout_ns ? timeout_ns : 5000000000ull;
	cfg.flags = IK_SMMU_F_ECMDQ;
	ck_assert_int_eq(ik_smmu_create(&cfg, &r->s), 0);
	ck_assert_int_eq(ik_smmu_ecmdq_limit(r->s, limit), 0);
	if (pre)
		pre(r);
	ck_assert_int_eq(ik_smmu_reset(r->s), 0);
}

static void rig_fini(struct rig *r)
{
	ik_smmu_destroy(r->s);
	ik_softsmmu_destroy(r->m);
	ik_softiommu_destroy(r->soft);
	if (r->nc) {
		ck_assert_int_eq(r->nc->n, 0); /* everything freed */
		free(r->nc);
	}
}

static void tlbi(ik_u16 asid, ik_u64 addr, ik_u64 w[2])
{
	struct ik_smmu_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = IK_SMMU_CMD_TLBI_NH_VA;
	c.asid = asid;
	c.addr = addr;
	ck_assert_int_eq(ik_smmu_cmd_encode(&c, w), 0);
}

static struct ik_cmdq *eq(struct rig *r, unsigned i)
{
	struct ik_cmdq *q = ik_cmdq_set_queue(ik_smmu_ecmdq_set(r->s), i);

	ck_assert_ptr_nonnull(q);
	return q;
}

static ik_u64 total_ecmdq_commands(struct rig *r, unsigned n)
{
	ik_u64 t = 0;

	for (unsigned i = 0; i < n; i++)
		t += ik_softsmmu_queue_commands(r->m, (int)i);
	return t;
}

/* ================================================================ the model alone */

START_TEST(model_rejects_bad_configs_and_answers_hostile_offsets)
{
	struct ik_softiommu_config sc;
	struct ik_softsmmu_config mc;
	struct ik_softiommu *soft;
	struct ik_softsmmu *m;
	struct ik_mmio io;

	ik_softiommu_config_init(&sc);
	ck_assert_int_eq(ik_softiommu_create(&sc, &soft), 0);
	ik_softsmmu_config_init(&mc);
	ck_assert_int_eq(ik_softsmmu_create(&mc, &m), -EINVAL); /* no soft, no hook */
	mc.soft = soft;
	ck_assert_int_eq(ik_softsmmu_create(&mc, &m), -EINVAL);
	mc.phys_to_host = ik_softiommu_host_identity;
	ck_assert_int_eq(ik_softsmmu_create(NULL, &m), -EINVAL);
	ck_assert_int_eq(ik_softsmmu_create(&mc, NULL), -EINVAL);
	mc.idr[1] |= IK_SMMU_IDR1_ECMDQ;
	mc.ecmdq_log2nump = 5;
	mc.ecmdq_log2numq = 4; /* 512 queues */
	ck_assert_int_eq(ik_softsmmu_create(&mc, &m), -EINVAL);
	mc.ecmdq_log2nump = 1;
	mc.ecmdq_log2numq = 2;
	mc.max_streams = 0;
	ck_assert_int_eq(ik_softsmmu_create(&mc, &m), -EINVAL);
	mc.max_streams = 64;
	ck_assert_int_eq(ik_softsmmu_create(&mc, &m), 0);
	ck_assert_int_eq(ik_softsmmu_mmio(m, &io), 0);
	/* ID registers as configured, IDR6 at 0x190: LOG2NUMP [27:24],
	 * LOG2NUMQ [19:16]; control page 0 at 0x4000: ADDR 0x20000,
	 * CMDQGS 1, PRESET. */
	ck_assert_uint_eq(ik_mmio_read32(&io, 0x04), mc.idr[1]);
	ck_assert_uint_eq(ik_mmio_read32(&io, 0x190), 1u << 24 | 2u << 16);
	ck_assert_uint_eq(ik_mmio_read64(&io, 0x4000), 0x20000u | 2u | 1u);
	ck_assert_uint_eq(ik_mmio_read64(&io, 0x4020), 0x30000u | 2u | 1u);
	/* Unaligned, unknown and beyond-the-pages offsets: RAZ/WI. */
	for (ik_u32 off = 0x1; off < 0x80000; off = off * 3 + 1) {
		ik_softsmmu_write32(m, off | 1, 0xffffffffu);
		ck_assert_uint_eq(ik_softsmmu_read32(m, off | 1), 0);
	}
	ik_softsmmu_write32(m, 0x40000 + 8, ~0u); /* page 2 does not exist */
	ck_assert_uint_eq(ik_softsmmu_read32(m, 0x40000 + 8), 0);
	ik_softsmmu_write32(m, 0x00, 0); /* IDR0 is read-only */
	ck_assert_uint_eq(ik_softsmmu_read32(m, 0x00), mc.idr[0]);
	ck_assert_int_eq(ik_softsmmu_inject(m, 9, IK_SOFTSMMU_INJ_ILL, 0, 1), -EINVAL);
	ck_assert_int_eq(ik_softsmmu_inject(m, 0, 99, 0, 1), -EINVAL);
	ck_assert_int_eq(ik_softsmmu_inject(m, IK_SOFTSMMU_MAIN_CMDQ,
					    IK_SOFTSMMU_INJ_SPURIOUS_ERR, 0, 1), -EINVAL);
	ck_assert_int_eq(ik_softsmmu_inject(m, 0, IK_SOFTSMMU_INJ_ILL, 0, 1), -EBUSY);
	ik_softsmmu_destroy(m);
	ik_softiommu_destroy(soft);
}
END_TEST

/* Hostile register values: queues at absurd bases and sizes, a stream table
 * beyond the address space, PROD far beyond CONS.  Nothing is read outside
 * what phys_to_host allowed (here: nothing at all), errors are raised. */
static void *refuse_all(void *ctx, ik_u64 pa, ik_size len)
{
	(void)ctx;
	(void)pa;
	(void)len;
	return NULL;
}

START_TEST(model_survives_hostile_bases_and_indices)
{
	struct ik_softiommu_config sc;
	struct ik_softsmmu_config mc;
	struct ik_softiommu *soft;
	struct ik_softsmmu *m;
	ik_u8 buf[16];

	ik_softiommu_config_init(&sc);
	ck_assert_int_eq(ik_softiommu_create(&sc, &soft), 0);
	ik_softsmmu_config_init(&mc);
	mc.soft = soft;
	mc.phys_to_host = refuse_all;
	mc.idr[1] |= IK_SMMU_IDR1_ECMDQ;
	ck_assert_int_eq(ik_softsmmu_create(&mc, &m), 0);
	/* main queue at the top of the address space, LOG2SIZE 31 */
	ik_softsmmu_write32(m, 0x90, 0xffffffffu);
	ik_softsmmu_write32(m, 0x94, 0xffffffffu);
	ik_softsmmu_write32(m, 0x98, 0xfffff);
	ik_softsmmu_write32(m, 0x20, 1u << 3);
	ck_assert_uint_eq(ik_softsmmu_read32(m, CR0ACK) & 8, 8);
	/* the fetch aborts: CONS.ERR = CERROR_ABT, GERROR.CMDQ_ERR active */
	ck_assert_uint_eq((ik_softsmmu_read32(m, 0x9c) >> 24) & 0x7f, 2);
	ck_assert_uint_eq((ik_softsmmu_read32(m, GERROR) ^ ik_softsmmu_read32(m, GERRORN)) & 1, 1);
	/* an ECMDQ likewise, and the error goes to its own CONS.ERR */
	ik_softsmmu_write32(m, CP0 + 0, 0xffffffe4u);
	ik_softsmmu_write32(m, CP0 + 4, 0x7fffffffu);
	ik_softsmmu_write32(m, CP0 + 8, 1u << 31 | 5);
	ck_assert_uint_eq(ik_softsmmu_read32(m, CP0 + 12) & (ENACK | ERR), ENACK | ERR);
	ck_assert_uint_eq((ik_softsmmu_read32(m, CP0 + 12) >> 24) & 7, 2);
	/* stream table and event queue unreachable: DMA faults, the event
	 * cannot be written (EVTQ_ABT_ERR) */
	ik_softsmmu_write32(m, 0x80, 0xffffffc0u);
	ik_softsmmu_write32(m, 0x84, 0xffffffffu);
	ik_softsmmu_write32(m, 0x88, 1u << 16 | 8u << 6 | 63u);
	ik_softsmmu_write32(m, 0xa0, 0xffffffe0u);
	ik_softsmmu_write32(m, 0xa4, 0xffffffffu);
	ik_softsmmu_write32(m, 0x20, 1u << 3 | 1u << 2 | 1u);
	for (ik_u32 sid = 0; sid < 64; sid += 7)
		ck_assert_int_eq(ik_softsmmu_dma(m, sid, ~0ull - 3, buf, 4, false), -EFAULT);
	ck_assert_int_eq(ik_softsmmu_dma(m, 0, ~0ull - 3, buf, 8, false), -EINVAL); /* wraps */
	ck_assert_uint_eq((ik_softsmmu_read32(m, GERROR) ^ ik_softsmmu_read32(m, GERRORN)) & 4, 4);
	ik_softsmmu_destroy(m);
	ik_softiommu_destroy(soft);
}
END_TEST

/* ================================================================ the driver core on the model */

START_TEST(driver_core_brings_up_the_model_and_dma_translates_end_to_end)
{
	struct rig r;
	struct ik_smmu_cdtab t;
	struct ik_smmu_cdtab_config cc;
	struct ik_smmu_ste_config stc;
	struct ik_smmu_cd_config c;
	struct ik_pgtable_cfg pc;
	struct ik_pgtable *pt;
	struct ik_smmu_event ev;
	struct ik_smmu_inv_target tg;
	struct ik_gather g;
	uint64_t cd[8], ste[8];
	uint32_t sid = 5;
	uint8_t *buf, v = 0;
	const struct ik_smmu_idr *id;

	rig_init(&r, 0, 0, 0, NULL);
	ck_assert_uint_eq(ik_smmu_ecmdq_count(r.s), 0); /* no ECMDQ: the single queue */
	/* CR0ACK: SMMUEN, EVTQEN, CMDQEN; the bring-up commands ran */
	ck_assert_uint_eq(ik_softsmmu_read32(r.m, CR0ACK) & 0xd, 0xd);
	ck_assert_uint_ge(ik_softsmmu_queue_commands(r.m, IK_SOFTSMMU_MAIN_CMDQ), 3);
	id = ik_smmu_get_idr(r.s);
	memset(&pc, 0, sizeof(pc));
	pc.fmt = IK_PT_LPAE_S1;
	pc.ias = 44;
	pc.oas = 48;
	pc.pgsize_bitmap = 1ull << 12 | 1ull << 21 | 1ull << 30;
	pc.coherent = true;
	ck_assert_int_eq(ik_pgtable_create(&pc, &pt), 0);
	memset(&cc, 0, sizeof(cc));
	cc.idr = id;
	cc.dma = &r.dma;
	ck_assert_int_eq(ik_smmu_cdtab_init(&t, &cc), 0);
	memset(&c, 0, sizeof(c));
	c.pt = pt;
	c.asid = 7;
	ck_assert_int_eq(ik_smmu_cd_build(id, &c, cd), 0);
	ck_assert_int_eq(ik_smmu_write_cd(r.s, &t, 0, cd, &sid, 1), 0);
	memset(&stc, 0, sizeof(stc));
	stc.config = IK_SMMU_STE_CFG_S1;
	ik_smmu_cdtab_ste(&t, &stc);
	ck_assert_int_eq(ik_smmu_ste_build(id, &stc, ste), 0);
	ck_assert_int_eq(ik_smmu_write_ste(r.s, sid, ste), 0);
	ck_assert_int_eq(posix_memalign((void **)&buf, 4096, 8192), 0);
	memset(buf, 0x3c, 8192);
	ck_assert_int_eq(ik_pgtable_map(pt, 0x40000, (uint64_t)(uintptr_t)buf, 8192,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	/* the device reads through STE -> CD -> tables, all fetched by the model */
	ck_assert_int_eq(ik_softsmmu_dma(r.m, sid, 0x40ffe, &v, 1, false), 0);
	ck_assert_uint_eq(v, 0x3c);
	v = 0x77;
	ck_assert_int_eq(ik_softsmmu_dma(r.m, sid, 0x41000, &v, 1, true), 0);
	ck_assert_uint_eq(buf[4096], 0x77);
	/* unmapped: F_TRANSLATION, read by the core from the event queue */
	ck_assert_int_eq(ik_softsmmu_dma(r.m, sid, 0x90000, &v, 1, true), -EFAULT);
	ck_assert_int_eq(ik_smmu_event_pop(r.s, &ev), 0);
	ck_assert_uint_eq(ev.type, IK_SMMU_EVT_F_TRANSLATION);
	ck_assert_uint_eq(ev.sid, sid);
	ck_assert_uint_eq(ev.addr, 0x90000);
	ck_assert(!ev.rnw);
	ck_assert_int_eq(ik_smmu_event_pop(r.s, &ev), -ENOENT);
	/* unmap + the core's invalidation: the next access faults (the soft
	 * IOMMU's checking mode would have reported a stale entry) */
	ik_gather_init(&g);
	ck_assert_int_eq(ik_pgtable_unmap(pt, 0x40000, 8192, &g), 8192);
	memset(&tg, 0, sizeof(tg));
	tg.stage = 1;
	tg.asid = 7;
	ck_assert_int_eq(ik_smmu_inv_gather(r.s, pt, &g, &tg), 0);
	ck_assert_int_eq(ik_pgtable_gather_sync(pt, &g), 0);
	ck_assert_int_eq(ik_softsmmu_dma(r.m, sid, 0x40000, &v, 1, false), -EFAULT);
	ck_assert_int_eq(ik_smmu_event_pop(r.s, &ev), 0);
	ck_assert_uint_eq(ev.type, IK_SMMU_EVT_F_TRANSLATION);
	ck_assert(ev.rnw);
	/* the STE is cached: changed in memory without CFGI it is not seen;
	 * through the core (CFGI_STE + CMD_SYNC) it is */
	{
		struct ik_smmu_strtab *st = ik_smmu_get_strtab(r.s);
		uint64_t bad[8];

		ck_assert_int_eq(ik_smmu_strtab_read(st, sid, bad), 0);
		ck_assert_int_eq(ik_pgtable_map(pt, 0x40000, (uint64_t)(uintptr_t)buf, 4096,
						IK_PROT_READ), 0);
		memset(&stc, 0, sizeof(stc));
		stc.config = IK_SMMU_STE_CFG_ABORT;
		ck_assert_int_eq(ik_smmu_ste_build(id, &stc, ste), 0);
		ck_assert_int_eq(ik_smmu_strtab_write(st, sid, ste, NULL, NULL), 0);
		ck_assert_int_eq(ik_softsmmu_dma(r.m, sid, 0x40000, &v, 1, false), 0);
		{
			struct ik_smmu_cmd cf;

			memset(&cf, 0, sizeof(cf));
			cf.op = IK_SMMU_CMD_CFGI_STE;
			cf.sid = sid;
			ck_assert_int_eq(ik_smmu_issue(r.s, &cf, 1), 0);
		}
		ck_assert_int_eq(ik_softsmmu_dma(r.m, sid, 0x40000, &v, 1, false), -EFAULT);
		ck_assert_int_eq(ik_smmu_event_pop(r.s, &ev), -ENOENT); /* abort: no event */
		/* an invalid STE: C_BAD_STE */
		memset(bad, 0, sizeof(bad));
		ck_assert_int_eq(ik_smmu_write_ste(r.s, sid, bad), 0);
		ck_assert_int_eq(ik_softsmmu_dma(r.m, sid, 0x40000, &v, 1, false), -EFAULT);
		ck_assert_int_eq(ik_smmu_event_pop(r.s, &ev), 0);
		ck_assert_uint_eq(ev.type, IK_SMMU_EVT_C_BAD_STE);
	}
	/* a stream beyond the model's: C_BAD_STREAMID */
	ck_assert_int_eq(ik_softsmmu_dma(r.m, 4000, 0, &v, 1, false), -EFAULT);
	ck_assert_int_eq(ik_smmu_event_pop(r.s, &ev), 0);
	ck_assert_uint_eq(ev.type, IK_SMMU_EVT_C_BAD_STREAMID);
	ik_smmu_cdtab_fini(&t);
	ik_pgtable_destroy(pt);
	free(buf);
	rig_fini(&r);
}
END_TEST

START_TEST(main_queue_errors_illegal_abort_and_atc_timeout_are_repaired)
{
	struct rig r;
	struct ik_smmu_stats st;
	struct ik_smmu_cmd c[3];
	ik_u64 before;

	rig_init(&r, 0, 0, 0, NULL);
	memset(c, 0, sizeof(c));
	c[0].op = IK_SMMU_CMD_TLBI_NH_ASID;
	c[0].asid = 1;
	c[1].op = IK_SMMU_CMD_TLBI_NH_ASID;
	c[1].asid = 2;
	/* illegal: the command is replaced, reported, the one behind it runs */
	before = ik_softsmmu_queue_commands(r.m, IK_SOFTSMMU_MAIN_CMDQ);
	ck_assert_int_eq(ik_softsmmu_inject(r.m, IK_SOFTSMMU_MAIN_CMDQ, IK_SOFTSMMU_INJ_ILL, 0, 1), 0);
	ck_assert_int_eq(ik_smmu_issue(r.s, c, 2), -EIO);
	/* no-op + second + sync */
	ck_assert_uint_eq(ik_softsmmu_queue_commands(r.m, IK_SOFTSMMU_MAIN_CMDQ) - before, 3);
	/* fetch abort twice: retried, the command runs */
	ck_assert_int_eq(ik_softsmmu_inject(r.m, IK_SOFTSMMU_MAIN_CMDQ, IK_SOFTSMMU_INJ_ABT, 0, 2), 0);
	ck_assert_int_eq(ik_smmu_issue(r.s, c, 2), 0);
	/* ATC invalidation timeout, reported at the sync, which is retried */
	c[2].op = IK_SMMU_CMD_ATC_INV;
	c[2].sid = 1;
	c[2].global = 1;
	ck_assert_int_eq(ik_softsmmu_inject(r.m, IK_SOFTSMMU_MAIN_CMDQ, IK_SOFTSMMU_INJ_ATC_TIMEOUT,
					    0, 1), 0);
	ck_assert_int_eq(ik_smmu_issue(r.s, &c[2], 1), 0);
	ik_smmu_get_stats(r.s, &st);
	ck_assert_uint_eq(st.cmdq.errors, 4);
	ck_assert_uint_eq(st.cmdq.replaced, 1);
	ck_assert_uint_eq(st.cmdq.retried, 3);
	/* GERROR.CMDQ_ERR acknowledged every time */
	ck_assert_uint_eq((ik_softsmmu_read32(r.m, GERROR) ^ ik_softsmmu_read32(r.m, GERRORN)) & 1, 0);
	rig_fini(&r);
}
END_TEST

/* ================================================================ ECMDQ */

START_TEST(ecmdq_discovery_programming_and_disable)
{
	struct rig r;
	struct ik_smmu_ecmdq_info info;
	const struct ik_smmu_idr *id;
	ik_u64 main_before;

	rig_init(&r, 4, 4, 0, NULL);
	id = ik_smmu_get_idr(r.s);
	ck_assert(id->ecmdq);
	ck_assert_int_eq(ik_smmu_ecmdq_probe(&r.io, id, &info), 0);
	ck_assert_uint_eq(info.nump, 2);
	ck_assert_uint_eq(info.numq, 2);
	ck_assert_uint_eq(info.nr, 4);
	ck_assert_uint_eq(info.page0, CP0);
	ck_assert_uint_eq(ik_smmu_ecmdq_count(r.s), 4);
	ck_assert_int_eq(ik_smmu_ecmdq_limit(r.s, 2), -EBUSY);
	for (unsigned q = 0; q < 4; q++) {
		/* PROD.EN and CONS.ENACK; ECMDQ_BASE holds the ring, LOG2SIZE 4 */
		ck_assert_uint_eq(ik_softsmmu_read32(r.m, EQ_PROD(q)) & (1u << 31), 1u << 31);
		ck_assert_uint_eq(ik_softsmmu_read32(r.m, EQ_CONS(q)) & ENACK, ENACK);
		ck_assert_uint_eq(ik_softsmmu_read32(r.m, EQ_PROD(q) - 8) & 0x1f, 4);
	}
	/* commands go to the ECMDQs, not the main queue; a call's commands
	 * and their syncs all land in one queue */
	main_before = ik_softsmmu_queue_commands(r.m, IK_SOFTSMMU_MAIN_CMDQ);
	for (int k = 0; k < 20; k++) {
		struct ik_smmu_cmd c[40];
		ik_u64 per[4], after;
		int hit = 0;

		for (unsigned q = 0; q < 4; q++)
			per[q] = ik_softsmmu_queue_commands(r.m, (int)q);
		memset(c, 0, sizeof(c));
		for (int i = 0; i < 40; i++) {
			c[i].op = IK_SMMU_CMD_TLBI_NH_ASID;
			c[i].asid = (ik_u16)i;
		}
		ck_assert_int_eq(ik_smmu_issue(r.s, c, 40), 0);
		for (unsigned q = 0; q < 4; q++) {
			after = ik_softsmmu_queue_commands(r.m, (int)q);
			if (after != per[q]) {
				ck_assert_uint_eq(after - per[q], 40 + 3); /* 3 groups, 3 syncs */
				hit++;
			}
		}
		ck_assert_int_eq(hit, 1);
	}
	ck_assert_uint_eq(ik_softsmmu_queue_commands(r.m, IK_SOFTSMMU_MAIN_CMDQ), main_before);
	/* disable: EN and ENACK clear on every queue; reset enables them again */
	ck_assert_int_eq(ik_smmu_disable(r.s), 0);
	ck_assert_uint_eq(ik_smmu_ecmdq_count(r.s), 0);
	for (unsigned q = 0; q < 4; q++)
		ck_assert_uint_eq(ik_softsmmu_read32(r.m, EQ_CONS(q)) & ENACK, 0);
	ck_assert_int_eq(ik_smmu_reset(r.s), 0);
	ck_assert_uint_eq(ik_smmu_ecmdq_count(r.s), 4);
	ck_assert_int_eq(ik_smmu_issue(r.s, NULL, 0), 0);
	rig_fini(&r);
}
END_TEST

struct worker {
	struct rig *r;
	int n;
	int errors;
	pthread_t t;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < w->n; i++) {
		struct ik_smmu_cmd c[3];

		memset(c, 0, sizeof(c));
		for (int k = 0; k < 3; k++) {
			c[k].op = IK_SMMU_CMD_TLBI_NH_ASID;
			c[k].asid = (ik_u16)(i + k);
		}
		if (ik_smmu_issue(w->r->s, c, 3))
			w->errors++;
		if (i % 64 == 0)
			sched_yield();
	}
	return NULL;
}

START_TEST(ecmdq_shared_by_more_threads_than_queues_loses_nothing)
{
	struct rig r;
	struct worker w[4];
	ik_u64 before;

	rig_init(&r, 2, 2, 0, NULL);
	ck_assert_uint_eq(ik_smmu_ecmdq_count(r.s), 2);
	before = total_ecmdq_commands(&r, 2);
	for (int i = 0; i < 4; i++) {
		w[i].r = &r;
		w[i].n = (int)(400 * ik_test_scale()) + 10;
		w[i].errors = 0;
		ck_assert_int_eq(pthread_create(&w[i].t, NULL, worker_fn, &w[i]), 0);
	}
	ik_u64 expect = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(w[i].t, NULL);
		ck_assert_int_eq(w[i].errors, 0);
		expect += (ik_u64)w[i].n * 4; /* 3 commands and a sync each */
	}
	ck_assert_uint_eq(total_ecmdq_commands(&r, 2) - before, expect);
	rig_fini(&r);
}
END_TEST

START_TEST(ecmdq_error_on_one_queue_is_repaired_while_the_other_runs)
{
	struct rig r;
	struct ik_smmu_ecmdq_stats es;
	struct ik_smmu_gerror ge;
	ik_u64 w[5][2], q0, q1;

	rig_init(&r, 2, 2, 0, NULL);
	for (int i = 0; i < 5; i++)
		tlbi(3, 0x1000ull * (ik_u64)i, w[i]);
	q0 = ik_softsmmu_queue_commands(r.m, 0);
	q1 = ik_softsmmu_queue_commands(r.m, 1);
	/* queue 0: its third command is illegal; issued without waiting */
	ck_assert_int_eq(ik_softsmmu_inject(r.m, 0, IK_SOFTSMMU_INJ_ILL, 2, 1), 0);
	ck_assert_int_eq(ik_cmdq_issue(eq(&r, 0), w, 5, 0), 0);
	/* stopped: CONS.ERR toggled, ERR_REASON CERROR_ILL, CONS at it,
	 * GERROR.CMDQP_ERR active */
	ck_assert_uint_eq(ik_softsmmu_read32(r.m, EQ_CONS(0)) & ERR, ERR);
	ck_assert_uint_eq((ik_softsmmu_read32(r.m, EQ_CONS(0)) >> 24) & 7, 1);
	ck_assert_uint_eq(ik_softsmmu_read32(r.m, EQ_CONS(0)) & 0x1f, 2);
	ck_assert_uint_eq(ik_softsmmu_queue_commands(r.m, 0) - q0, 2);
	ck_assert_uint_eq((ik_softsmmu_read32(r.m, GERROR) ^ ik_softsmmu_read32(r.m, GERRORN)) &
				  GERROR_CMDQP, GERROR_CMDQP);
	/* queue 1 is not affected */
	ck_assert_int_eq(ik_cmdq_issue(eq(&r, 1), w, 5, IK_CMDQ_SYNC), 0);
	ck_assert_uint_eq(ik_softsmmu_queue_commands(r.m, 1) - q1, 6);
	/* the GERROR poll (an interrupt handler's job) repairs queue 0: the
	 * bad command becomes a no-op, the two behind it run */
	ck_assert_int_ge(ik_smmu_gerror_poll(r.s, &ge), 0);
	ck_assert_uint_eq(ge.active & GERROR_CMDQP, GERROR_CMDQP);
	ck_assert_uint_eq(ik_softsmmu_queue_commands(r.m, 0) - q0, 5);
	ck_assert_uint_eq(ik_softsmmu_read32(r.m, EQ_PROD(0)) & ERRACK,
			  ik_softsmmu_read32(r.m, EQ_CONS(0)) & ERR);
	ck_assert_uint_eq((ik_softsmmu_read32(r.m, GERROR) ^ ik_softsmmu_read32(r.m, GERRORN)) &
				  GERROR_CMDQP, 0);
	ck_assert_int_eq(ik_cmdq_sync(eq(&r, 0)), 0);
	/* a waiting issuer gets -EIO for its own bad command */
	ck_assert_int_eq(ik_softsmmu_inject(r.m, 0, IK_SOFTSMMU_INJ_ILL, 0, 1), 0);
	ck_assert_int_eq(ik_cmdq_issue(eq(&r, 0), w, 2, IK_CMDQ_SYNC), -EIO);
	/* fetch abort: retried, ATC timeout: the sync is retried */
	ck_assert_int_eq(ik_softsmmu_inject(r.m, 1, IK_SOFTSMMU_INJ_ABT, 1, 2), 0);
	ck_assert_int_eq(ik_cmdq_issue(eq(&r, 1), w, 3, IK_CMDQ_SYNC), 0);
	{
		struct ik_smmu_cmd atc;
		ik_u64 aw[2];

		memset(&atc, 0, sizeof(atc));
		atc.op = IK_SMMU_CMD_ATC_INV;
		atc.global = 1;
		ck_assert_int_eq(ik_smmu_cmd_encode(&atc, aw), 0);
		ck_assert_int_eq(ik_softsmmu_inject(r.m, 1, IK_SOFTSMMU_INJ_ATC_TIMEOUT, 0, 1), 0);
		ck_assert_int_eq(ik_cmdq_issue(eq(&r, 1), aw, 1, IK_CMDQ_SYNC), 0);
	}
	ck_assert_int_eq(ik_smmu_get_ecmdq_stats(r.s, &es), 0);
	ck_assert_uint_eq(es.cmdq.errors, 5);
	ck_assert_uint_eq(es.cmdq.replaced, 2);
	ck_assert_uint_eq(es.cmdq.retried, 3);
	rig_fini(&r);
}
END_TEST

static void no_enack_on_queue_1(struct rig *r)
{
	ck_assert_int_eq(ik_softsmmu_inject(r->m, 1, IK_SOFTSMMU_INJ_NO_ENACK, 0, 1), 0);
}

START_TEST(ecmdq_enack_never_set_falls_back_to_the_single_queue)
{
	struct rig r;
	struct ik_smmu_ecmdq_stats es;
	struct ik_smmu_cmd c;
	ik_u64 before;

	rig_init(&r, 2, 2, 20000000ull, no_enack_on_queue_1); /* 20 ms bound */
	ck_assert_uint_eq(ik_smmu_ecmdq_count(r.s), 0);
	ck_assert_ptr_null(ik_smmu_ecmdq_set(r.s));
	ck_assert_int_eq(ik_smmu_get_ecmdq_stats(r.s, &es), 0);
	ck_assert_uint_eq(es.enable_timeouts, 1);
	/* queue 0, enabled before queue 1 failed, is disabled again */
	ck_assert_uint_eq(ik_softsmmu_read32(r.m, EQ_CONS(0)) & ENACK, 0);
	memset(&c, 0, sizeof(c));
	c.op = IK_SMMU_CMD_TLBI_NH_ALL;
	before = ik_softsmmu_queue_commands(r.m, IK_SOFTSMMU_MAIN_CMDQ);
	ck_assert_int_eq(ik_smmu_issue(r.s, &c, 1), 0);
	ck_assert_uint_eq(ik_softsmmu_queue_commands(r.m, IK_SOFTSMMU_MAIN_CMDQ) - before, 2);
	/* the acknowledgement comes late; a new reset uses the ECMDQs */
	ck_assert_int_eq(ik_softsmmu_inject(r.m, 1, IK_SOFTSMMU_INJ_NO_ENACK, 0, 0), 0);
	ck_assert_int_eq(ik_smmu_reset(r.s), 0);
	ck_assert_uint_eq(ik_smmu_ecmdq_count(r.s), 2);
	ck_assert_int_eq(ik_smmu_issue(r.s, &c, 1), 0);
	rig_fini(&r);
}
END_TEST

START_TEST(ecmdq_err_on_an_empty_queue_touches_no_entry_and_loses_nothing)
{
	struct rig r;
	struct ik_smmu_ecmdq_stats es;
	ik_u64 w[2][2], slot[2], q0;
	const ik_u64 *ring;
	ik_u32 cons;

	rig_init(&r, 2, 2, 0, NULL);
	tlbi(1, 0x1000, w[0]);
	tlbi(1, 0x2000, w[1]);
	ck_assert_int_eq(ik_cmdq_issue(eq(&r, 0), w, 2, IK_CMDQ_SYNC), 0);
	/* empty queue (CONS == PROD); the model toggles ERR anyway */
	ck_assert_int_eq(ik_softsmmu_inject(r.m, 0, IK_SOFTSMMU_INJ_SPURIOUS_ERR, 0, 0), 0);
	ck_assert_uint_eq(ik_softsmmu_read32(r.m, EQ_CONS(0)) & ERR, ERR);
	cons = ik_softsmmu_read32(r.m, EQ_CONS(0)) & 0xf;
	ring = ik_cmdq_ring(eq(&r, 0));
	memcpy(slot, ring + 2 * cons, 16);
	/* the GERROR handler acknowledges it without writing the ring */
	ck_assert_int_ge(ik_smmu_gerror_poll(r.s, NULL), 0);
	ck_assert_int_eq(memcmp(slot, ring + 2 * cons, 16), 0);
	ck_assert_uint_eq(ik_softsmmu_read32(r.m, EQ_PROD(0)) & ERRACK, ERRACK);
	ck_assert_int_eq(ik_smmu_get_ecmdq_stats(r.s, &es), 0);
	ck_assert_uint_eq(es.spurious_errors, 1);
	ck_assert_uint_eq(es.cmdq.errors, 0);
	/* and the queue runs: both commands and the sync execute */
	q0 = ik_softsmmu_queue_commands(r.m, 0);
	ck_assert_int_eq(ik_cmdq_issue(eq(&r, 0), w, 2, IK_CMDQ_SYNC), 0);
	ck_assert_uint_eq(ik_softsmmu_queue_commands(r.m, 0) - q0, 3);
	rig_fini(&r);
}
END_TEST

struct beyond {
	struct rig *r;
	struct ik_cmdq *q;
	int mq;	/* the model's name of the queue */
	int ret;
	ik_u64 executed_at_return;
	int done;
};

static void *beyond_fn(void *arg)
{
	struct beyond *b = arg;
	ik_u64 w[2][2];

	tlbi(2, 0x1000, w[0]);
	tlbi(2, 0x2000, w[1]);
	b->ret = ik_cmdq_issue(b->q, w, 2, IK_CMDQ_SYNC);
	b->executed_at_return = ik_softsmmu_queue_commands(b->r->m, b->mq);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ECMDQ 0, then the main command queue: a CONS 3 entries past PROD. */
START_TEST(cons_beyond_prod_never_completes_a_sync_early)
{
	for (int k = 0; k < 2; k++) {
		struct rig r;
		struct beyond b;
		struct ik_smmu_ecmdq_stats es;
		pthread_t t;
		ik_u64 q0;

		rig_init(&r, 2, 2, 0, NULL);
		memset(&b, 0, sizeof(b));
		b.r = &r;
		b.mq = k ? IK_SOFTSMMU_MAIN_CMDQ : 0;
		b.q = k ? ik_smmu_cmdq(r.s) : eq(&r, 0);
		q0 = ik_softsmmu_queue_commands(r.m, b.mq);
		/* the device is late, and its CONS reads 3 entries past PROD */
		ck_assert_int_eq(ik_softsmmu_pause(r.m, true), 0);
		ck_assert_int_eq(ik_softsmmu_inject(r.m, b.mq, IK_SOFTSMMU_INJ_CONS_BEYOND_PROD, 3,
						    1u << 30), 0);
		ck_assert_int_eq(pthread_create(&t, NULL, beyond_fn, &b), 0);
		/* wait until the issuer has seen the hostile CONS a few times,
		 * or (the bug) returned */
		for (;;) {
			ck_assert_int_eq(ik_smmu_get_ecmdq_stats(r.s, &es), 0);
			if (es.hostile_cons >= 8 || __atomic_load_n(&b.done, __ATOMIC_ACQUIRE))
				break;
			sched_yield();
		}
		ck_assert_int_eq(ik_softsmmu_inject(r.m, b.mq, IK_SOFTSMMU_INJ_CONS_BEYOND_PROD, 3, 0),
				 0);
		ck_assert_int_eq(ik_softsmmu_pause(r.m, false), 0);
		pthread_join(t, NULL);
		ck_assert_int_eq(b.ret, 0);
		/* the sync returned only after both commands and the sync ran */
		ck_assert_uint_ge(b.executed_at_return - q0, 3);
		ck_assert_int_eq(ik_cmdq_sync(b.q), 0);
		rig_fini(&r);
	}
}
END_TEST

/* Non-coherent memory: the ECMDQ rings are cleaned before each PROD write,
 * and the repaired entry before the ERRACK that lets the SMMU fetch it
 * again; otherwise the model reads garbage or the bad entry again. */
START_TEST(ecmdq_on_a_non_coherent_smmu_cleans_entries_and_repairs)
{
	struct rig r;
	struct ik_smmu_ecmdq_stats es;
	ik_u64 w[3][2], q0;

	rig_noncoherent = true;
	rig_init(&r, 2, 2, 500000000ull, NULL);
	rig_noncoherent = false;
	ck_assert_uint_eq(ik_smmu_ecmdq_count(r.s), 2);
	/* CR1: queues and tables non-cacheable outer-shareable */
	ck_assert_uint_eq(ik_softsmmu_read32(r.m, 0x28) & 0xfff, 2u << 4 | 2u << 10);
	for (int round = 0; round < 12; round++) { /* the 16-entry rings wrap */
		tlbi(4, 0x1000, w[0]);
		tlbi(4, 0x2000, w[1]);
		q0 = ik_softsmmu_queue_commands(r.m, 0);
		ck_assert_int_eq(ik_cmdq_issue(eq(&r, 0), w, 2, IK_CMDQ_SYNC), 0);
		ck_assert_uint_eq(ik_softsmmu_queue_commands(r.m, 0) - q0, 3);
	}
	/* an entry the SMMU cannot decode (opcode 0xff): replaced by a no-op
	 * that must reach the device before ERRACK */
	tlbi(4, 0x1000, w[0]);
	w[1][0] = 0xff;
	w[1][1] = 0;
	tlbi(4, 0x3000, w[2]);
	q0 = ik_softsmmu_queue_commands(r.m, 0);
	ck_assert_int_eq(ik_cmdq_issue(eq(&r, 0), w, 3, IK_CMDQ_SYNC), -EIO);
	ck_assert_uint_eq(ik_softsmmu_queue_commands(r.m, 0) - q0, 4);
	ck_assert_int_eq(ik_smmu_get_ecmdq_stats(r.s, &es), 0);
	ck_assert_uint_eq(es.cmdq.errors, 1);
	ck_assert_uint_eq(es.cmdq.replaced, 1);
	ck_assert_int_eq(ik_cmdq_sync(eq(&r, 1)), 0);
	rig_fini(&r);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("softsmmu");
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, model_rejects_bad_configs_and_answers_hostile_offsets);
	tcase_add_test(tc, model_survives_hostile_bases_and_indices);
	tcase_add_test(tc, driver_core_brings_up_the_model_and_dma_translates_end_to_end);
	tcase_add_test(tc, main_queue_errors_illegal_abort_and_atc_timeout_are_repaired);
	suite_add_tcase(s, tc);
	tc = tcase_create("ecmdq");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ecmdq_discovery_programming_and_disable);
	tcase_add_test(tc, ecmdq_shared_by_more_threads_than_queues_loses_nothing);
	tcase_add_test(tc, ecmdq_error_on_one_queue_is_repaired_while_the_other_runs);
	tcase_add_test(tc, ecmdq_enack_never_set_falls_back_to_the_single_queue);
	tcase_add_test(tc, ecmdq_err_on_an_empty_queue_touches_no_entry_and_loses_nothing);
	tcase_add_test(tc, cons_beyond_prod_never_completes_a_sync_early);
	tcase_add_test(tc, ecmdq_on_a_non_coherent_smmu_cleans_entries_and_repairs);
	suite_add_tcase(s, tc);
	return s;
}
