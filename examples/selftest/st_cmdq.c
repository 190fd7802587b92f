/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Self-test cases for the command queue (<iommukit/cmdq.h>): lock-free
 * insertion against the software consumer, for SMMUv3 and VT-d encodings,
 * syncs by CONS polling and by completion write, error recovery, a stuck
 * consumer's timeout, allocation failure, and batches in groups of
 * IK_CMDQ_BATCH_MAX.  The self-test has no threads,
 * so the "device" runs when the driver reads CONS: the read_cons hook lets
 * the software consumer drain a few entries first, as a real IOMMU would
 * have meanwhile.  Empty where the library has no command-queue unit.
 */
#include "st_internal.h"

#if __has_include(<iommukit/cmdq.h>)
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>

struct st_cq {
	struct ik_cmdq_sw sw;
	unsigned budget;	/* entries consumed per CONS read; 0: stuck device */
	bool vtd;		/* commands are VT-d descriptors */
	ik_u32 next_tag;	/* the tag the next command must carry */
	bool order_ok;
	ik_u64 cmds, syncs, prod_writes, doorbells;
	void *ring;		/* host DMA memory for the ring, or NULL */
	ik_u64 ring_dma;
};

static ik_u32 st_cq_read_cons(void *ctx, ik_u32 *cerror)
{
	struct st_cq *c = (struct st_cq *)ctx;

	if (c->budget)
		(void)ik_cmdq_sw_consume(&c->sw, c->budget);
	return ik_cmdq_sw_regs.read_cons(&c->sw, cerror);
}

static void st_cq_write_prod(void *ctx, ik_u32 prod)
{
	struct st_cq *c = (struct st_cq *)ctx;

	c->prod_writes++;
	ik_cmdq_sw_regs.write_prod(&c->sw, prod);
}

static void st_cq_doorbell(void *ctx)
{
	((struct st_cq *)ctx)->doorbells++;
}

static void st_cq_ack_error(void *ctx)
{
	ik_cmdq_sw_regs.ack_error(&((struct st_cq *)ctx)->sw);
}

static const struct ik_cmdq_regs st_cq_regs = {
	st_cq_read_cons, st_cq_write_prod, st_cq_doorbell, st_cq_ack_error,
};

/* The consumer's per-entry handler: commands must arrive in issue order. */
static ik_u32 st_cq_handler(void *ctx, ik_u32 index, const void *ent, int kind)
{
	struct st_cq *c = (struct st_cq *)ctx;
	ik_u32 tag = ~0u;

	(void)index;
	if (kind == IK_CMDQ_KIND_SYNC) {
		c->syncs++;
		return 0;
	}
	if (c->vtd) {
		struct ik_vtd_desc d;

		if (ik_vtd_desc_decode((const ik_u64 *)ent, 2, &d) == 0 &&
		    d.type == IK_VTD_DESC_IOTLB)
			tag = d.did;
	} else {
		struct ik_smmu_cmd m;

		if (ik_smmu_cmd_decode((const ik_u64 *)ent, &m) == 0 &&
		    m.op == IK_SMMU_CMD_TLBI_NH_VA)
			tag = m.asid;
	}
	if (tag != (c->next_tag & 0xffff))
		c->order_ok = false;
	c->next_tag++;
	c->cmds++;
	return 0;
}

static int st_cq_encode(struct st_cq *c, ik_u32 tag, ik_u64 w[2])
{
	if (c->vtd) {
		struct ik_vtd_desc d;

		IK_ENV_MEMSET(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_IOTLB;
		d.g = IK_VTD_G_PAGE;
		d.did = (ik_u16)tag;
		d.addr = (ik_u64)tag << 12;
		return ik_vtd_desc_encode(&d, w, 2);
	} else {
		struct ik_smmu_cmd m;

		IK_ENV_MEMSET(&m, 0, sizeof(m));
		m.op = IK_SMMU_CMD_TLBI_NH_VA;
		m.asid = (ik_u16)tag;
		m.addr = (ik_u64)tag << 12;
		m.leaf = 1;
		return ik_smmu_cmd_encode(&m, w);
	}
}

static void st_cq_put_ring(struct ik_st *t, struct st_cq *c)
{
	if (c->ring)
		ik_st_page_free(t, c->ring, c->ring_dma, 4096);
	c->ring = NULL;
}

/* A queue of 2^log2 entries over a software consumer, created through the
 * self-test's allocator.  With dma_ring, the ring is a host table page and
 * the queue is told its device address (a physical address in a kernel): a
 * completion write (IK_CMDQ_CFG_MSI) must target what the device sees, and a
 * kernel virtual address does not even fit SMMUv3's 52-bit MSI field. */
static int st_cq_setup(struct ik_st *t, struct st_cq *c, struct ik_cmdq **q, bool vtd,
		       unsigned log2, unsigned flags, ik_u64 timeout_ns, bool dma_ring)
{
	struct ik_cmdq_config cfg;
	struct ik_cmdq_sw_config sc;
	int rc;

	IK_ENV_MEMSET(c, 0, sizeof(*c));
	c->vtd = vtd;
	c->order_ok = true;
	c->budget = 0;	/* create() reads CONS before the consumer exists */
	IK_ENV_MEMSET(&cfg, 0, sizeof(cfg));
	cfg.fmt = vtd ? &ik_cmdq_fmt_vtd128 : &ik_cmdq_fmt_smmuv3;
	cfg.log2_entries = log2;
	cfg.flags = flags;
	cfg.regs = &st_cq_regs;
	cfg.regs_ctx = c;
	cfg.timeout_ns = timeout_ns;
	cfg.alloc = &t->alloc.a;
	if (dma_ring) {
		c->ring = ik_st_page_alloc(t, 4096, &c->ring_dma);
		if (!c->ring)
			return -ENOMEM;
		cfg.ring = c->ring;
		cfg.ring_dma = c->ring_dma;
	}
	rc = ik_cmdq_create(&cfg, q);
	if (rc) {
		st_cq_put_ring(t, c);
		return rc;
	}
	IK_ENV_MEMSET(&sc, 0, sizeof(sc));
	sc.fmt = cfg.fmt;
	sc.log2_entries = log2;
	sc.flags = flags;
	sc.ring = ik_cmdq_ring(*q);
	sc.ring_dma = ik_cmdq_ring_dma(*q);
	sc.handler = st_cq_handler;
	sc.ctx = c;
	rc = ik_cmdq_sw_init(&c->sw, &sc);
	if (rc) {
		ik_cmdq_destroy(*q);
		st_cq_put_ring(t, c);
	}
	c->budget = 3;
	return rc;
}

/* Many small issues, with and without sync, on a 16-entry ring that wraps
 * often: every command consumed once, in order; a sync returns only after. */
static void st_cmdq_insertion(struct ik_st *t, bool vtd, unsigned flags)
{
	struct st_cq *c = (struct st_cq *)ik_alloc(&t->alloc.a, sizeof(*c), IK_CACHELINE);
	struct ik_cmdq *q = NULL;
	ik_u64 w[8 * 2];
	ik_u32 tag = 0;
	unsigned round, i, n;
	int rc;

	ST_CHECK(t, c != NULL);
	ST_CHECK_GOTO(t, st_cq_setup(t, c, &q, vtd, 4, flags, 0, true) == 0, out_free);
	ST_CHECK_GOTO(t, ik_cmdq_ring(q) == c->ring && ik_cmdq_ring_dma(q) == c->ring_dma, out);
	ST_CHECK_GOTO(t, ik_cmdq_entries(q) == 16, out);
	for (round = 0; round < 200; round++) {
		n = 1 + (unsigned)ik_st_below(t, 8);
		for (i = 0; i < n; i++)
			ST_CHECK_GOTO(t, st_cq_encode(c, tag++, &w[2 * i]) == 0, out);
		rc = ik_cmdq_issue(q, w, n, (round % 3 == 0) ? IK_CMDQ_SYNC : 0);
		ST_CHECK_GOTO(t, rc == 0, out);
		if (round % 3 == 0)
			ST_CHECK_GOTO(t, c->cmds == tag, out);	/* all consumed */
	}
	ST_CHECK_GOTO(t, ik_cmdq_sync(q) == 0, out);
	ST_CHECK_GOTO(t, c->cmds == tag && c->order_ok, out);
	ST_CHECK_GOTO(t, c->syncs >= 200 / 3 && c->prod_writes > 0 && c->doorbells == c->prod_writes,
		      out);
	/* Bad arguments queue nothing. */
	ST_CHECK_GOTO(t, ik_cmdq_issue(q, NULL, 1, 0) == -EINVAL, out);
	ST_CHECK_GOTO(t, ik_cmdq_issue(q, w, 1, 0x80) == -EINVAL, out);
	ST_CHECK_GOTO(t, ik_cmdq_sync(q) == 0 && c->cmds == tag, out);
out:
	ik_cmdq_destroy(q);
	st_cq_put_ring(t, c);
out_free:
	ik_free(&t->alloc.a, c, sizeof(*c));
}

static void cmdq_smmuv3_insertion_and_sync(struct ik_st *t)
{
	st_cmdq_insertion(t, false, 0);
}

static void cmdq_smmuv3_msi_completion(struct ik_st *t)
{
	st_cmdq_insertion(t, false, IK_CMDQ_CFG_MSI);
}

static void cmdq_vtd_no_wrap_insertion_and_sync(struct ik_st *t)
{
	st_cmdq_insertion(t, true, IK_CMDQ_CFG_NO_WRAP);
}

/* The consumer rejects a command (ILL): it is replaced, the issuer gets
 * -EIO, and the commands behind it still run; an abort (ABT) is retried. */
static void cmdq_error_recovery(struct ik_st *t)
{
	struct st_cq *c = (struct st_cq *)ik_alloc(&t->alloc.a, sizeof(*c), IK_CACHELINE);
	struct ik_cmdq *q = NULL;
	struct ik_cmdq_stats st;
	ik_u64 w[4 * 2];
	unsigned i;

	ST_CHECK(t, c != NULL);
	ST_CHECK_GOTO(t, st_cq_setup(t, c, &q, false, 4, 0, 0, false) == 0, out_free);
	for (i = 0; i < 4; i++)
		ST_CHECK_GOTO(t, st_cq_encode(c, i, &w[2 * i]) == 0, out);
	ik_cmdq_sw_inject(&c->sw, 1, IK_CMDQ_CERROR_ILL, 1);	/* the 2nd entry */
	ST_CHECK_GOTO(t, ik_cmdq_issue(q, w, 4, IK_CMDQ_SYNC) == -EIO, out);
	/* The replaced command never reached the handler; the others did. */
	ST_CHECK_GOTO(t, c->cmds == 3, out);
	ik_cmdq_get_stats(q, &st);
	ST_CHECK_GOTO(t, st.errors == 1 && st.replaced == 1, out);
	c->next_tag = 0;
	c->cmds = 0;
	c->order_ok = true;
	ik_cmdq_sw_inject(&c->sw, 0, IK_CMDQ_CERROR_ABT, 1);	/* fails once, then runs */
	ST_CHECK_GOTO(t, ik_cmdq_issue(q, w, 4, IK_CMDQ_SYNC) == 0, out);
	ST_CHECK_GOTO(t, c->cmds == 4 && c->order_ok, out);
	ik_cmdq_get_stats(q, &st);
	ST_CHECK_GOTO(t, st.errors == 2 && st.retried == 1 && st.replaced == 1, out);
out:
	ik_cmdq_destroy(q);
out_free:
	ik_free(&t->alloc.a, c, sizeof(*c));
}

/* A stuck consumer: a full ring and a sync end in -ETIMEDOUT, bounded; once
 * the consumer runs again everything queued is consumed. */
static void cmdq_stuck_consumer_times_out(struct ik_st *t)
{
	struct st_cq *c = (struct st_cq *)ik_alloc(&t->alloc.a, sizeof(*c), IK_CACHELINE);
	struct ik_cmdq *q = NULL;
	struct ik_cmdq_stats st;
	ik_u64 w[2];
	ik_u32 cap, i;

	ST_CHECK(t, c != NULL);
	ST_CHECK_GOTO(t, st_cq_setup(t, c, &q, false, 2, 0, 2000000 /* 2 ms */, false) == 0,
		      out_free);
	c->budget = 0;	/* the device is stuck */
	cap = ik_cmdq_capacity(q);
	for (i = 0; i < cap; i++) {
		ST_CHECK_GOTO(t, st_cq_encode(c, i, w) == 0, out);
		ST_CHECK_GOTO(t, ik_cmdq_issue(q, w, 1, 0) == 0, out);
	}
	ST_CHECK_GOTO(t, st_cq_encode(c, cap, w) == 0, out);
	ST_CHECK_GOTO(t, ik_cmdq_issue(q, w, 1, 0) == -ETIMEDOUT, out);
	ST_CHECK_GOTO(t, ik_cmdq_sync(q) == -ETIMEDOUT, out);
	ik_cmdq_get_stats(q, &st);
	ST_CHECK_GOTO(t, st.timeouts == 2, out);
	c->budget = 4;	/* it recovers */
	ST_CHECK_GOTO(t, ik_cmdq_sync(q) == 0, out);
	ST_CHECK_GOTO(t, c->cmds == cap && c->order_ok, out);
out:
	ik_cmdq_destroy(q);
out_free:
	ik_free(&t->alloc.a, c, sizeof(*c));
}

/* create and set_create fail cleanly at each allocation; a set's queues
 * each take their own commands. */
static void cmdq_create_failure_and_sets(struct ik_st *t)
{
	struct st_cq *c = (struct st_cq *)ik_alloc(&t->alloc.a, 2 * sizeof(*c), IK_CACHELINE);
	struct ik_cmdq_config cfg[2];
	struct ik_cmdq_set *s = NULL;
	struct ik_cmdq *q;
	long nth;
	int rc = -ENOMEM;
	unsigned i;

	ST_CHECK(t, c != NULL);
	ST_CHECK_GOTO(t, st_cq_setup(t, &c[0], &q, false, 3, 0, 0, false) == 0, out_free);
	ik_cmdq_destroy(q);
	ik_st_alloc_arm(t, 1);
	rc = st_cq_setup(t, &c[0], &q, false, 3, 0, 0, false);
	ik_st_alloc_arm(t, 0);
	ST_CHECK_GOTO(t, rc == -ENOMEM && t->alloc.live == 1, out_free);
	ST_CHECK_GOTO(t, st_cq_setup(t, &c[0], &q, false, 30, 0, 0, false) == -EINVAL, out_free);

	IK_ENV_MEMSET(cfg, 0, sizeof(cfg));
	for (i = 0; i < 2; i++) {
		IK_ENV_MEMSET(&c[i], 0, sizeof(c[i]));
		c[i].order_ok = true;
		cfg[i].fmt = &ik_cmdq_fmt_smmuv3;
		cfg[i].log2_entries = 3;
		cfg[i].regs = &st_cq_regs;
		cfg[i].regs_ctx = &c[i];
		cfg[i].alloc = &t->alloc.a;
	}
	for (nth = 1; nth < 8; nth++) {
		ik_st_alloc_arm(t, nth);
		rc = ik_cmdq_set_create(2, cfg, &s);
		ik_st_alloc_arm(t, 0);
		if (rc == 0)
			break;
		ST_CHECK_GOTO(t, rc == -ENOMEM && t->alloc.live == 1, out_free);
	}
	ST_CHECK_GOTO(t, rc == 0 && ik_cmdq_set_size(s) == 2, out_free);
	for (i = 0; i < 2; i++) {
		struct ik_cmdq_sw_config sc;

		IK_ENV_MEMSET(&sc, 0, sizeof(sc));
		sc.fmt = &ik_cmdq_fmt_smmuv3;
		sc.log2_entries = 3;
		sc.ring = ik_cmdq_ring(ik_cmdq_set_queue(s, i));
		sc.ring_dma = ik_cmdq_ring_dma(ik_cmdq_set_queue(s, i));
		sc.handler = st_cq_handler;
		sc.ctx = &c[i];
		ST_CHECK_GOTO(t, ik_cmdq_sw_init(&c[i].sw, &sc) == 0, out);
		c[i].budget = 2;
	}
	for (i = 0; i < 20; i++) {
		/* Each queue's consumer expects its own sequence of tags: pick
		 * once, encode for that queue, issue there with the sync. */
		struct ik_cmdq *pq = ik_cmdq_set_pick(s);
		struct st_cq *mine = &c[pq == ik_cmdq_set_queue(s, 0) ? 0 : 1];
		ik_u64 w[2];

		ST_CHECK_GOTO(t, pq == ik_cmdq_set_queue(s, 0) || pq == ik_cmdq_set_queue(s, 1), out);
		ST_CHECK_GOTO(t, st_cq_encode(mine, mine->next_tag, w) == 0, out);
		ST_CHECK_GOTO(t, ik_cmdq_issue(pq, w, 1, IK_CMDQ_SYNC) == 0, out);
	}
	ST_CHECK_GOTO(t, ik_cmdq_set_sync_all(s) == 0, out);
	ST_CHECK_GOTO(t, c[0].cmds + c[1].cmds == 20 && c[0].order_ok && c[1].order_ok, out);
out:
	ik_cmdq_set_destroy(s);
out_free:
	ik_free(&t->alloc.a, c, 2 * sizeof(*c));
}

/* A batch of 2 * IK_CMDQ_BATCH_MAX + 3 commands, in memory from the
 * allocator (how a kernel should hold one: see <iommukit/cmdq.h>): each full
 * group of IK_CMDQ_BATCH_MAX is issued as it fills, the rest with the sync
 * of ik_cmdq_batch_submit(), which returns once every command ran, in order.
 * Runs with whatever IK_CMDQ_BATCH_MAX the build chose (the kernel module
 * builds with a smaller one). */
static void cmdq_batch_issues_full_groups(struct ik_st *t)
{
	struct st_cq *c = (struct st_cq *)ik_alloc(&t->alloc.a, sizeof(*c), IK_CACHELINE);
	struct ik_cmdq_batch *b = (struct ik_cmdq_batch *)ik_alloc(&t->alloc.a, sizeof(*b), 8);
	struct ik_cmdq *q = NULL;
	ik_u64 w[2], writes;
	ik_u32 i, n = 2 * IK_CMDQ_BATCH_MAX + 3;

	ST_CHECK_GOTO(t, c != NULL && b != NULL, out_free);
	ST_CHECK_GOTO(t, st_cq_setup(t, c, &q, false, 8, 0, 0, false) == 0, out_free);
	ik_cmdq_batch_init(b, q);
	writes = c->prod_writes;
	for (i = 0; i < n; i++) {
		ST_CHECK_GOTO(t, st_cq_encode(c, i, w) == 0, out);
		ST_CHECK_GOTO(t, ik_cmdq_batch_add(b, w) == 0, out);
		if (i + 1 == IK_CMDQ_BATCH_MAX - 1)	/* not full yet: nothing issued */
			ST_CHECK_GOTO(t, c->prod_writes == writes, out);
		if (i + 1 == IK_CMDQ_BATCH_MAX)	/* the first group went out */
			ST_CHECK_GOTO(t, c->prod_writes > writes, out);
	}
	ST_CHECK_GOTO(t, ik_cmdq_batch_submit(b) == 0, out);
	ST_CHECK_GOTO(t, c->cmds == n && c->order_ok && c->syncs >= 1, out);
	ST_CHECK_GOTO(t, ik_cmdq_batch_add(NULL, w) == -EINVAL && ik_cmdq_batch_submit(NULL) == -EINVAL,
		      out);
out:
	ik_cmdq_destroy(q);
out_free:
	if (b)
		ik_free(&t->alloc.a, b, sizeof(*b));
	if (c)
		ik_free(&t->alloc.a, c, sizeof(*c));
}

const struct ik_st_case ik_st_cmdq_cases[] = {
	{ "cmdq_smmuv3_insertion_and_sync", cmdq_smmuv3_insertion_and_sync },
	{ "cmdq_smmuv3_msi_completion", cmdq_smmuv3_msi_completion },
	{ "cmdq_vtd_no_wrap_insertion_and_sync", cmdq_vtd_no_wrap_insertion_and_sync },
	{ "cmdq_error_recovery", cmdq_error_recovery },
	{ "cmdq_stuck_consumer_times_out", cmdq_stuck_consumer_times_out },
	{ "cmdq_create_failure_and_sets", cmdq_create_failure_and_sets },
	{ "cmdq_batch_issues_full_groups", cmdq_batch_issues_full_groups },
};
const unsigned ik_st_cmdq_ncases = IK_ARRAY_SIZE(ik_st_cmdq_cases);
#else
const struct ik_st_case ik_st_cmdq_cases[1] = { { NULL, NULL } };
const unsigned ik_st_cmdq_ncases = 0;
#endif
