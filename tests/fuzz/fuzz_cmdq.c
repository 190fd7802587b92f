/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fuzz_cmdq - the lock-free command queue (include/iommukit/cmdq.h), single
 * threaded, with the software consumer driven by the harness; and the
 * software consumer alone on hostile ring contents.
 *
 * Mode A (queue).  A queue (SMMUv3, VT-d 128 or 256-bit, RISC-V; small rings; wrap
 * bit or NO_WRAP; with or without MSI completion; ring in caller memory or
 * carved, device address fuzzed) whose register hooks run a struct ik_cmdq_sw
 * consumer in one of three ways the input switches between: drain everything
 * on each register access, drain a few entries, or stuck (timeouts, with a
 * tiny timeout_ns).  The consumer's handler fails commands as the input's
 * plan says (CERROR_ILL, _ABT, _ATC_INV_SYNC, also on syncs), entries can be
 * illegal words, and ik_cmdq_sw_inject() injects fetch aborts.  Model:
 *   - every PROD write publishes exactly the next entries of the calling
 *     issue (its commands, byte for byte, in order, then its sync, which
 *     names its own slot with MSI), never more than the capacity beyond the
 *     consumer, and nothing a call did not submit;
 *   - the consumer sees every published entry exactly once, in order, as
 *     published or - only after on_error() reported it replaced - as the
 *     no-op; every consumer stop is reported once to on_error() (index,
 *     code, attempt count, and the retry-or-replace decision max_retries
 *     implies) before it is acknowledged;
 *   - an issue/batch that waits returns -EIO exactly when one of its entries
 *     was replaced, 0 when none was, -ETIMEDOUT only if it did not complete;
 *     an entry left unpublished means the call reported a timeout;
 *   - at the end, with the consumer running, everything published is
 *     consumed (a timeout loses nothing) and the counters agree.
 * Mode B (hostile ring).  Arbitrary words in a ring inside a larger buffer
 * with guard words, PROD set arbitrarily, the ring's device address and
 * every completion address anywhere in 64 bits: ik_cmdq_sw_consume() may
 * change the ring only by the completion writes of syncs whose 4 bytes lie
 * inside it, and must route every other completion to write32; the guards
 * and a shadow copy of the ring say so after every call.
 */
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>
#include <iommukit/cmd/riscv.h>
#include "fuzzlib.h"

/* Catch a handler writing to a timed-out issuer's dead stack frame. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_stack_use_after_return=1";
}

#define MAX_ENT 4096
#define MAX_CALLS 512
#define MAX_ERR 2048

static const struct ik_cmdq_fmt *const fmts[4] = { &ik_cmdq_fmt_smmuv3, &ik_cmdq_fmt_vtd128,
						   &ik_cmdq_fmt_vtd256, &ik_cmdq_fmt_riscv };

/* ================================================================ mode A */

struct fent {
	uint8_t bytes[32];
	bool sync;
	bool replaced;
	bool consumed;
	int call;
};

struct pend {
	uint8_t bytes[32];
	bool sync;
};

struct errlog {
	ik_u32 index, cerror;
	unsigned attempt;
	int result;
	uint8_t bytes[32];
};

struct plan {
	uint8_t code, times;
};

enum { C_RUN, C_SOME, C_STUCK };

static struct {
	const struct ik_cmdq_fmt *fmt;
	struct ik_cmdq *q;
	struct ik_cmdq_sw sw;
	unsigned es, words, log2, flags, retries;
	ik_u32 size, mask, regmask, cap;
	uint64_t ring_dma;
	uint8_t *ring;
	uint8_t nop[32];

	struct fent ent[MAX_ENT];
	uint64_t published, consumed; /* full indices */
	int cur_call;
	struct pend pend[MAX_ENT];
	unsigned npend, pend_at;

	struct errlog err[MAX_ERR];
	unsigned nerr;
	unsigned attempts; /* of the entry at err_index, as the library counts */
	bool err_active;
	ik_u32 err_index;
	unsigned stops;	   /* consumer stops not yet reported */
	uint64_t writes, acks, handler_calls;

	int mode, some;
	unsigned in_hook;
	bool ready; /* the consumer is set up */
	struct plan plan[MAX_ENT + 2];
	struct plan sync_plan;
	uint32_t next_id;
} A;

static struct fz_alloc FA;

static uint32_t ent_id(const uint8_t *b)
{
	uint64_t w0;

	memcpy(&w0, b, 8);
	if (A.fmt == &ik_cmdq_fmt_riscv) {	/* IOTINVAL.VMA ADDR = id << 12 */
		uint64_t w1;

		memcpy(&w1, b + 8, 8);
		return (uint32_t)(w1 >> 10);
	}
	return A.fmt == &ik_cmdq_fmt_smmuv3 ? (uint32_t)(w0 >> 32) : (uint32_t)(w0 >> 16);
}

/* A command carrying `id`; illegal words (the consumer stops with ILL) when
 * `bad`. */
static void make_cmd(uint8_t *b, uint32_t id, bool bad)
{
	uint64_t w[4] = { 0, 0, 0, 0 };

	if (A.fmt == &ik_cmdq_fmt_smmuv3) {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_SMMU_CMD_CFGI_STE;
		c.sid = id;
		FZ_CHECK(ik_smmu_cmd_encode(&c, w) == 0, "encode CFGI_STE");
		if (bad)
			w[0] = (w[0] & ~0xffull) | 0xff; /* no such opcode */
	} else if (A.fmt == &ik_cmdq_fmt_riscv) {
		struct ik_riscv_cmd c;

		memset(&c, 0, sizeof(c));
		c.opcode = IK_RISCV_CMD_IOTINVAL;
		c.func3 = IK_RISCV_IOTINVAL_VMA;
		c.av = 1;
		c.addr = (uint64_t)id << 12;
		FZ_CHECK(ik_riscv_cmd_encode(&c, w) == 0, "encode IOTINVAL.VMA");
		if (bad)
			w[0] |= 1ull << 11; /* a reserved bit */
	} else {
		struct ik_vtd_desc d;

		memset(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_CC;
		d.g = IK_VTD_G_GLOBAL;
		d.did = (ik_u16)id;
		d.sid = (ik_u16)(id >> 16);
		FZ_CHECK(ik_vtd_desc_encode(&d, w, A.words) == 0, "encode CC");
		if (bad)
			w[0] |= 1ull << 10; /* a reserved bit */
	}
	memcpy(b, w, A.es);
}

static int classify(const uint8_t *b, struct ik_cmdq_sync_info *si)
{
	uint64_t w[4];

	memcpy(w, b, A.es);
	si->write = false;
	si->addr = 0;
	si->data = 0;
	return A.fmt->classify(w, si);
}

/* Run the consumer as the current mode says (from a register hook). */
static void consumer_run(void)
{
	if (A.mode == C_STUCK || A.in_hook || !A.ready)
		return;
	A.in_hook++;
	if (A.mode == C_RUN)
		(void)ik_cmdq_sw_consume(&A.sw, ~0u);
	else
		(void)ik_cmdq_sw_consume(&A.sw, (unsigned)A.some);
	A.in_hook--;
	if (ik_cmdq_sw_error(&A.sw))
		A.stops += A.stops == 0; /* stopped: one report owed */
}

static ik_u32 hook_read_cons(void *ctx, ik_u32 *cerror)
{
	(void)ctx;
	consumer_run();
	return ik_cmdq_sw_regs.read_cons(&A.sw, cerror);
}

static void hook_write_prod(void *ctx, ik_u32 prod)
{
	uint64_t full = A.published + ((prod - (ik_u32)A.published) & A.regmask);

	(void)ctx;
	A.writes++;
	FZ_CHECK(full > A.published, "PROD write %#x publishes nothing (published %llu)", prod,
		 (unsigned long long)A.published);
	FZ_CHECK(full - A.consumed <= A.cap, "PROD %llu is %llu entries past the consumer (capacity %u)",
		 (unsigned long long)full, (unsigned long long)(full - A.consumed), A.cap);
	FZ_CHECK(full <= MAX_ENT, "too many entries");
	for (uint64_t i = A.published; i < full; i++) {
		struct fent *e = &A.ent[i];
		const uint8_t *slot = A.ring + (size_t)(i & A.mask) * A.es;
		struct pend *p;
		struct ik_cmdq_sync_info si;
		int kind;

		FZ_CHECK(A.cur_call >= 0 && A.pend_at < A.npend,
			 "entry %llu published but no call submitted it", (unsigned long long)i);
		p = &A.pend[A.pend_at++];
		memcpy(e->bytes, slot, A.es);
		e->sync = p->sync;
		e->call = A.cur_call;
		e->replaced = e->consumed = false;
		kind = classify(slot, &si);
		if (!p->sync) {
			FZ_CHECK(!memcmp(slot, p->bytes, A.es),
				 "entry %llu is not the command issued in that place",
				 (unsigned long long)i);
			continue;
		}
		FZ_CHECK(kind == IK_CMDQ_KIND_SYNC, "entry %llu should be a sync, classifies as %d",
			 (unsigned long long)i, kind);
		if (A.flags & IK_CMDQ_CFG_MSI)
			FZ_CHECK(si.write && si.addr == A.ring_dma + (i & A.mask) * A.es,
				 "MSI sync %llu completes at %#llx (write %d), its slot is %#llx",
				 (unsigned long long)i, (unsigned long long)si.addr, si.write,
				 (unsigned long long)(A.ring_dma + (i & A.mask) * A.es));
		else
			FZ_CHECK(!si.write, "sync %llu asks for a completion write without MSI",
				 (unsigned long long)i);
	}
	A.published = full;
	ik_cmdq_sw_regs.write_prod(&A.sw, prod);
}

static void hook_doorbell(void *ctx)
{
	(void)ctx;
	consumer_run();
}

static void hook_ack(void *ctx)
{
	ik_u32 cerror = 0, cons;

	(void)ctx;
	A.acks++;
	cons = ik_cmdq_sw_regs.read_cons(&A.sw, &cerror);
	FZ_CHECK(cerror, "ack_error with the consumer not stopped");
	FZ_CHECK(A.nerr > 0 && A.stops == 0, "ack_error before on_error reported the stop");
	FZ_CHECK(A.err[A.nerr - 1].cerror == cerror && (A.err[A.nerr - 1].index & A.regmask) == cons,
		 "on_error reported %u at %u, the consumer is stopped with %u at %u",
		 A.err[A.nerr - 1].cerror, A.err[A.nerr - 1].index, cerror, cons);
	ik_cmdq_sw_regs.ack_error(&A.sw);
	consumer_run();
}

static const struct ik_cmdq_regs hook_regs = { hook_read_cons, hook_write_prod, hook_doorbell,
					       hook_ack };
static const struct ik_cmdq_regs hook_regs_nodb = { hook_read_cons, hook_write_prod, NULL,
						    hook_ack };

static void on_error(void *ctx, const struct ik_cmdq_error *e)
{
	struct errlog *l;
	uint64_t full = A.consumed; /* the consumer is stopped at the next entry */
	bool replace;

	(void)ctx;
	FZ_CHECK(A.nerr < MAX_ERR, "too many errors");
	FZ_CHECK(A.stops == 1, "on_error without a consumer stop to report (%u)", A.stops);
	A.stops = 0;
	FZ_CHECK(e->index == (ik_u32)full, "on_error at index %u, the consumer stopped at %llu",
		 e->index, (unsigned long long)full);
	FZ_CHECK(full < A.published, "on_error for an unpublished entry");
	FZ_CHECK(!memcmp(e->entry, A.ent[full].replaced ? A.nop : A.ent[full].bytes, A.es),
		 "on_error: the entry's bytes are not what was published there");
	if (A.err_active && A.err_index == e->index)
		A.attempts++;
	else
		A.attempts = 1;
	A.err_active = true;
	A.err_index = e->index;
	FZ_CHECK(e->attempt == A.attempts, "on_error: attempt %u, expected %u", e->attempt,
		 A.attempts);
	replace = e->cerror == IK_CMDQ_CERROR_ILL ||
		  (e->cerror != IK_CMDQ_CERROR_ABT && e->cerror != IK_CMDQ_CERROR_ATC_INV_SYNC) ||
		  A.attempts > A.retries;
	FZ_CHECK(e->result == (replace ? -EIO : 0), "on_error: code %u attempt %u: result %d",
		 e->cerror, e->attempt, e->result);
	if (replace) {
		A.ent[full].replaced = true;
		A.err_active = false;
	}
	l = &A.err[A.nerr++];
	l->index = e->index;
	l->cerror = e->cerror;
	l->attempt = e->attempt;
	l->result = e->result;
	memcpy(l->bytes, e->entry, A.es);
}

static ik_u32 handler(void *ctx, ik_u32 index, const void *entp, int kind)
{
	const uint8_t *b = (const uint8_t *)entp;
	struct fent *e;
	ik_u32 rc = 0;

	(void)ctx;
	A.handler_calls++;
	FZ_CHECK(index == (ik_u32)A.consumed, "consumer at %u, expected %llu", index,
		 (unsigned long long)A.consumed);
	FZ_CHECK(A.consumed < A.published, "consumer past PROD");
	e = &A.ent[A.consumed];
	FZ_CHECK(!memcmp(b, e->replaced ? A.nop : e->bytes, A.es),
		 "entry %llu changed in the ring before it was consumed (replaced %d)",
		 (unsigned long long)A.consumed, e->replaced);
	if (kind == IK_CMDQ_KIND_SYNC) {
		if (A.sync_plan.times) {
			A.sync_plan.times--;
			rc = A.sync_plan.code;
		}
	} else {
		uint32_t id = ent_id(b);

		if (id < IK_ARRAY_SIZE(A.plan) && A.plan[id].times) {
			A.plan[id].times--;
			rc = A.plan[id].code;
		}
		if (rc == IK_CMDQ_CERROR_ATC_INV_SYNC)
			goto consumed; /* consumed; the next sync reports it */
	}
	if (rc)
		return rc;
consumed:
	e->consumed = true;
	A.consumed++;
	return rc;
}

static void write32(void *ctx, ik_u64 addr, ik_u32 val)
{
	(void)ctx;
	(void)val;
	FZ_CHECK(0, "completion write outside the ring at %#llx", (unsigned long long)addr);
}

/* Start a call: its entries, in the order they must be published. */
static void call_begin(void)
{
	A.cur_call++;
	A.npend = 0;
	A.pend_at = 0;
}

static void pend_cmds(const uint8_t *cmds, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		FZ_CHECK(A.npend < MAX_ENT, "pend full");
		memcpy(A.pend[A.npend].bytes, cmds + (size_t)i * A.es, A.es);
		A.pend[A.npend++].sync = false;
	}
}

static void pend_sync(void)
{
	A.pend[A.npend].sync = true;
	A.npend++;
}

static bool call_replaced(int call)
{
	for (uint64_t i = 0; i < A.published; i++)
		if (A.ent[i].call == call && A.ent[i].replaced)
			return true;
	return false;
}

static void gen_cmds(struct fz *f, uint8_t *cmds, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint8_t k = fz_u8(f);
		uint32_t id = A.next_id++;

		if (id < IK_ARRAY_SIZE(A.plan)) {
			A.plan[id].code = 0;
			A.plan[id].times = 0;
			if (k >= 200) {
				A.plan[id].code = (uint8_t)(1 + k % 3);
				A.plan[id].times = (uint8_t)(1 + (k >> 2) % 5);
			}
		}
		make_cmd(cmds + (size_t)i * A.es, id, k >= 250);
	}
}

/* The outcome of one waiting call (issue with SYNC, batch submit). */
static void check_wait_result(int err, int call, bool timed_out_before, const char *what)
{
	bool rep = call_replaced(call);

	if (err == -ETIMEDOUT)
		return;
	if (err == -EIO) {
		FZ_CHECK(rep, "%s returned -EIO, none of its entries was replaced", what);
		return;
	}
	FZ_CHECK(err == 0, "%s returned %d", what, err);
	FZ_CHECK(!rep, "%s returned 0, one of its entries was replaced", what);
	FZ_CHECK(!timed_out_before, "%s returned 0 after a timeout", what);
	FZ_CHECK(A.pend_at == A.npend, "%s returned 0 but %u entries were not published", what,
		 A.npend - A.pend_at);
}

static uint64_t timeouts, timeouts_slack;

static void op_issue(struct fz *f)
{
	static uint8_t cmds[MAX_ENT * 32];
	uint8_t k = fz_u8(f);
	unsigned n = k < 128 ? k % 5 : k < 200 ? fz_u8(f) % 40 : fz_u16(f) % 300;
	bool sync = fz_bool(f);
	int err;

	if (A.next_id + n >= MAX_ENT - 8 || A.published + n + 2 >= MAX_ENT)
		return;
	gen_cmds(f, cmds, n);
	call_begin();
	pend_cmds(cmds, n);
	if (sync)
		pend_sync();
	err = ik_cmdq_issue(A.q, n ? cmds : NULL, n, sync ? IK_CMDQ_SYNC : 0);
	if (err == -ETIMEDOUT)
		timeouts++;
	if (sync) {
		check_wait_result(err, A.cur_call, false, "issue(SYNC)");
	} else {
		FZ_CHECK(err == 0 || err == -ETIMEDOUT, "issue without sync returned %d", err);
		FZ_CHECK(err || A.pend_at == A.npend, "issue returned 0 but %u entries are unpublished",
			 A.npend - A.pend_at);
	}
	FZ_CHECK(err == -ETIMEDOUT || A.pend_at == A.npend, "entries left unpublished without a timeout");
	A.npend = A.pend_at; /* no more PROD writes for this call */
}

static void op_batch(struct fz *f)
{
	static struct ik_cmdq_batch b;
	static uint8_t cmds[300 * 32];
	unsigned n = fz_u8(f) % 150;
	bool timed_out = false;
	int err;

	if (A.next_id + n >= MAX_ENT - 8 || A.published + n + 4 >= MAX_ENT)
		return;
	gen_cmds(f, cmds, n);
	call_begin();
	ik_cmdq_batch_init(&b, A.q);
	for (unsigned i = 0; i < n; i++) {
		pend_cmds(cmds + (size_t)i * A.es, 1);
		err = ik_cmdq_batch_add(&b, cmds + (size_t)i * A.es);
		if (err == -ETIMEDOUT) {
			timed_out = true;
			timeouts++;
			/* the group that timed out is dropped: whatever of it
			 * was not published will not be */
			A.npend = A.pend_at;
		} else {
			FZ_CHECK(err == 0, "batch_add = %d", err);
		}
		if (fz_u8(f) == 0xaa) /* the consumer changes pace mid-batch */
			A.mode = (A.mode + 1) % 3;
	}
	pend_sync();
	err = ik_cmdq_batch_submit(&b);
	/* The submit's own flush may have timed out behind an earlier error
	 * (the batch reports the first one). */
	if (err == -ETIMEDOUT && !timed_out)
		timeouts++;
	else if (err)
		timeouts_slack++;
	check_wait_result(err, A.cur_call, timed_out, "batch_submit");
	A.npend = A.pend_at;
}

static void op_consume(struct fz *f)
{
	unsigned budget = fz_u8(f) % 16;
	int r;

	A.in_hook++;
	r = ik_cmdq_sw_consume(&A.sw, budget);
	A.in_hook--;
	FZ_CHECK(r == -EAGAIN || (r >= 0 && (unsigned)r <= budget), "consume(%u) = %d", budget, r);
	if (ik_cmdq_sw_error(&A.sw))
		A.stops += A.stops == 0;
	else
		FZ_CHECK(r != -EAGAIN, "consume -EAGAIN while not stopped");
}

static void op_poll(void)
{
	bool stopped = ik_cmdq_sw_error(&A.sw) != 0;
	unsigned nerr = A.nerr;
	int r = ik_cmdq_poll_errors(A.q);

	/* Its CONS read may run the consumer into an error first. */
	FZ_CHECK(r == (A.nerr > nerr ? 1 : 0) && A.nerr - nerr <= 1 && (!stopped || r == 1),
		 "poll_errors = %d with the consumer %s, %u errors reported", r,
		 stopped ? "stopped" : "running", A.nerr - nerr);
}

static void final_drain(void)
{
	struct ik_cmdq_stats st;
	uint64_t replaced = 0, retried = 0;
	int err;

	A.mode = C_RUN;
	A.sync_plan.times = 0;
	for (unsigned i = 0; i < IK_ARRAY_SIZE(A.plan); i++)
		A.plan[i].times = 0;
	ik_cmdq_sw_inject(&A.sw, 0, 0, 0);
	for (int guard = 0; guard < 10000; guard++) {
		consumer_run();
		if (ik_cmdq_sw_error(&A.sw)) {
			FZ_CHECK(ik_cmdq_poll_errors(A.q) == 1, "poll_errors on a stopped consumer");
			continue;
		}
		if (A.consumed == A.published)
			break;
	}
	FZ_CHECK(A.consumed == A.published, "final drain: %llu of %llu entries consumed",
		 (unsigned long long)A.consumed, (unsigned long long)A.published);
	/* A last sync must complete cleanly (an ATC timeout still pending in
	 * the consumer fails the first one; a tiny timeout may expire while
	 * it is retried). */
	for (int tries = 0;; tries++) {
		call_begin();
		pend_sync();
		err = ik_cmdq_sync(A.q);
		if (err == -ETIMEDOUT)
			timeouts++;
		A.npend = A.pend_at;
		FZ_CHECK(err == 0 || (tries < 4 && (err == -ETIMEDOUT || err == -EIO)),
			 "final sync = %d (try %d)", err, tries);
		if (!err)
			break;
		while (ik_cmdq_sw_error(&A.sw))
			(void)ik_cmdq_poll_errors(A.q);
	}
	for (uint64_t i = 0; i < A.published; i++)
		FZ_CHECK(A.ent[i].consumed, "entry %llu lost", (unsigned long long)i);
	for (unsigned i = 0; i < A.nerr; i++) {
		if (A.err[i].result)
			replaced++;
		else
			retried++;
	}
	ik_cmdq_get_stats(A.q, &st);
	FZ_CHECK(st.errors == A.nerr && st.replaced == replaced && st.retried == retried,
		 "stats: errors %llu/%u replaced %llu/%llu retried %llu/%llu",
		 (unsigned long long)st.errors, A.nerr, (unsigned long long)st.replaced,
		 (unsigned long long)replaced, (unsigned long long)st.retried,
		 (unsigned long long)retried);
	FZ_CHECK(st.doorbells == A.writes, "stats: %llu doorbells, %llu PROD writes",
		 (unsigned long long)st.doorbells, (unsigned long long)A.writes);
	FZ_CHECK(st.timeouts >= timeouts && st.timeouts <= timeouts + timeouts_slack,
		 "stats: %llu timeouts, %llu seen (+%llu unsure)", (unsigned long long)st.timeouts,
		 (unsigned long long)timeouts, (unsigned long long)timeouts_slack);
	FZ_CHECK(A.acks == A.nerr, "%llu acknowledgements for %u errors", (unsigned long long)A.acks,
		 A.nerr);
}

static bool msi_ok(const struct ik_cmdq_fmt *fmt, uint64_t dma, uint64_t bytes)
{
	if (bytes - 1 > ~0ull - dma || dma % 4)
		return false;
	if (fmt == &ik_cmdq_fmt_smmuv3 && dma + bytes - fmt->entry_size >= (1ull << 52))
		return false;
	return true;
}

static void run_queue(struct fz *f)
{
	struct ik_cmdq_config cfg;
	struct ik_cmdq_sw_config sc;
	uint8_t k = fz_u8(f), *ringbuf = NULL, *mem = NULL;
	ik_size memsize;
	bool valid = true, own_ring, use_create;
	uint64_t ring_dma, bytes;
	int err;

	memset(&A, 0, sizeof(A));
	A.cur_call = -1;
	timeouts = timeouts_slack = 0;
	fz_alloc_init(&FA);
	A.fmt = fmts[k % 4];
	A.es = A.fmt->entry_size;
	A.words = A.es / 8; /* 64-bit words of an entry */
	memset(&cfg, 0, sizeof(cfg));
	cfg.fmt = A.fmt;
	k = fz_u8(f);
	cfg.log2_entries = k < 240 ? 2 + k % 5 : k % 24;
	k = fz_u8(f);
	cfg.flags = (k & 1 ? IK_CMDQ_CFG_NO_WRAP : 0) | (k & 2 ? IK_CMDQ_CFG_MSI : 0);
	if (k >= 250)
		cfg.flags |= 4;
	own_ring = k & 4;
	use_create = k & 8;
	cfg.regs = (k & 16) ? &hook_regs_nodb : &hook_regs;
	k = fz_u8(f);
	cfg.ring_dma = k < 128 ? 0 : k < 200 ? 0x10000ull * fz_u16(f) : fz_edgy(f);
	cfg.timeout_ns = 500 + fz_u16(f) % 20000;
	cfg.max_retries = fz_u8(f) % 5;
	cfg.on_error = on_error;
	cfg.alloc = &FA.a;
	if (cfg.log2_entries < IK_CMDQ_LOG2_MIN || cfg.log2_entries > IK_CMDQ_LOG2_MAX ||
	    (cfg.flags & ~3u))
		valid = false;
	if (cfg.log2_entries > 12 && valid)
		return; /* large rings: no new paths, much memory */
	A.log2 = cfg.log2_entries;
	A.size = 1u << (A.log2 & 31);
	A.mask = A.size - 1;
	if (own_ring && valid) {
		ringbuf = aligned_alloc(64, (size_t)A.es * A.size);
		cfg.ring = ringbuf;
	}
	memsize = ik_cmdq_memsize(&cfg);
	FZ_CHECK((memsize != 0) == valid, "memsize %zu for a %s config", (size_t)memsize,
		 valid ? "good" : "bad");
	if (valid && (cfg.flags & IK_CMDQ_CFG_MSI)) {
		/* the device address the syncs will name */
		bytes = (uint64_t)A.es << A.log2;
		ring_dma = cfg.ring_dma;
		if (!ring_dma)
			ring_dma = own_ring ? (uint64_t)(uintptr_t)ringbuf : 0;
		if (ring_dma && !msi_ok(A.fmt, ring_dma, bytes))
			valid = false;
	}
	if (use_create) {
		fz_alloc_arm(&FA, fz_u8(f) % 8 == 0 ? 1 : 0);
		err = ik_cmdq_create(&cfg, &A.q);
		if (err == -ENOMEM) {
			FZ_CHECK(valid || memsize, "create -ENOMEM for a bad config");
			FZ_CHECK(FA.live == 0, "create -ENOMEM leaked");
			fz_alloc_arm(&FA, 0);
			err = ik_cmdq_create(&cfg, &A.q);
		}
	} else {
		mem = aligned_alloc(64, memsize ? (memsize + 63) & ~(size_t)63 : 64);
		if (memsize)
			FZ_CHECK(ik_cmdq_init(mem, memsize - 1, &cfg, &A.q) == -EINVAL,
				 "init with too little memory");
		err = ik_cmdq_init(mem, memsize, &cfg, &A.q);
	}
	if (valid && (cfg.flags & IK_CMDQ_CFG_MSI) && !cfg.ring_dma && !own_ring && err == 0) {
		/* carved ring: its CPU address is the device address */
		ring_dma = ik_cmdq_ring_dma(A.q);
		FZ_CHECK(msi_ok(A.fmt, ring_dma, (uint64_t)A.es << A.log2), "carved ring unusable");
	}
	if (!valid) {
		FZ_CHECK(err == -EINVAL, "queue init of a bad config = %d", err);
		goto out;
	}
	FZ_CHECK(err == 0, "queue init = %d", err);
	A.ring = ik_cmdq_ring(A.q);
	A.ring_dma = ik_cmdq_ring_dma(A.q);
	FZ_CHECK(A.ring_dma == (cfg.ring_dma ? cfg.ring_dma : (uint64_t)(uintptr_t)A.ring),
		 "ring_dma %#llx", (unsigned long long)A.ring_dma);
	FZ_CHECK(ik_cmdq_entries(A.q) == A.size, "entries");
	A.flags = cfg.flags;
	A.regmask = (cfg.flags & IK_CMDQ_CFG_NO_WRAP) ? A.mask : 2 * A.size - 1;
	A.cap = (cfg.flags & IK_CMDQ_CFG_NO_WRAP) ? A.size - 1 : A.size;
	FZ_CHECK(ik_cmdq_capacity(A.q) == A.cap, "capacity");
	A.retries = cfg.max_retries ? cfg.max_retries : IK_CMDQ_DEFAULT_RETRIES;
	A.fmt->encode_nop(A.nop);
	A.next_id = 1;

	memset(&sc, 0, sizeof(sc));
	sc.fmt = A.fmt;
	sc.log2_entries = A.log2;
	sc.flags = cfg.flags & IK_CMDQ_CFG_NO_WRAP;
	sc.ring = A.ring;
	sc.ring_dma = A.ring_dma;
	sc.handler = handler;
	sc.write32 = write32;
	if (ik_cmdq_sw_init(&A.sw, &sc)) {
		/* a device address range that wraps 2^64 or is not aligned
		 * to the entry size: the consumer refuses it (the queue
		 * without MSI does not care) */
		FZ_CHECK(!(cfg.flags & IK_CMDQ_CFG_MSI) || A.ring_dma % A.es,
			 "sw_init refused an MSI queue's ring");
		goto out_q;
	}
	A.mode = fz_u8(f) % 3;
	A.some = 1 + fz_u8(f) % 4;
	A.ready = true;

	for (unsigned ops = 0; fz_left(f) && ops < 64; ops++) {
		uint8_t op = fz_u8(f);

		switch (op % 10) {
		case 0:
		case 1:
		case 2: op_issue(f); break;
		case 3: op_batch(f); break;
		case 4: op_consume(f); break;
		case 5:
			A.mode = fz_u8(f) % 3;
			A.some = 1 + fz_u8(f) % 4;
			break;
		case 6: op_poll(); break;
		case 7: {
			uint8_t c = fz_u8(f);

			A.sync_plan.code = (uint8_t)(1 + c % 3);
			A.sync_plan.times = (uint8_t)(c >> 6);
			break;
		}
		case 8: {
			uint8_t c = fz_u8(f);

			ik_cmdq_sw_inject(&A.sw, fz_u8(f) % 8, 1 + c % 3, 1 + (c >> 2) % 5);
			break;
		}
		default: {
			/* argument errors change nothing */
			uint64_t pub = A.published;

			FZ_CHECK(ik_cmdq_issue(A.q, NULL, 1, 0) == -EINVAL, "issue(NULL, 1)");
			FZ_CHECK(ik_cmdq_issue(A.q, A.nop, 1, 0x80) == -EINVAL, "issue(bad flag)");
			FZ_CHECK(ik_cmdq_issue(A.q, NULL, 0, 0) == 0, "issue of nothing");
			FZ_CHECK(A.published == pub, "argument errors published entries");
			break;
		}
		}
	}
	final_drain();
out_q:
	if (use_create)
		ik_cmdq_destroy(A.q);
out:
	if (use_create || !valid)
		FZ_CHECK(!use_create || FA.live == 0, "queue destroy leaked %ld blocks", FA.live);
	free(mem);
	free(ringbuf);
}

/* ================================================================ mode B */

#define GUARD 64
#define GUARD_BYTE 0xc5

static struct {
	const struct ik_cmdq_fmt *fmt;
	struct ik_cmdq_sw sw;
	unsigned es, log2;
	ik_u32 size, mask, regmask;
	uint64_t dma, bytes;
	uint8_t *buf, *ring, *shadow;
	ik_u32 cons; /* full index the handler expects next */
	bool expect_write;
	uint64_t exp_addr;
	ik_u32 exp_data;
	unsigned handled, writes;
	bool has_write32;
} B;

static bool in_ring(uint64_t addr)
{
	return addr >= B.dma && addr - B.dma < B.bytes && B.bytes - (addr - B.dma) >= 4 && !(addr & 3);
}

static ik_u32 b_handler(void *ctx, ik_u32 index, const void *ent, int kind)
{
	uint8_t *slot = B.shadow + (size_t)(index & B.mask) * B.es;
	struct ik_cmdq_sync_info si = { false, 0, 0 };

	(void)ctx;
	FZ_CHECK(index == B.cons, "hostile ring: consumer at %u, expected %u", index, B.cons);
	FZ_CHECK(!memcmp(ent, slot, B.es), "hostile ring: entry %u is not what the ring holds", index);
	FZ_CHECK(!B.expect_write, "a completion write was not done");
	B.cons++;
	B.handled++;
	if (kind == IK_CMDQ_KIND_SYNC) {
		uint64_t w[4];

		memcpy(w, ent, B.es);
		FZ_CHECK(B.fmt->classify(w, &si) == IK_CMDQ_KIND_SYNC, "classify disagrees");
		if (si.write) {
			if (in_ring(si.addr)) {
				/* a 32-bit store into the ring: naturally aligned
				 * (a misaligned atomic faults on strict-alignment
				 * hosts) */
				FZ_CHECK(!((si.addr - B.dma) & 3),
					 "completion at %#llx would be a misaligned store at ring offset %#llx",
					 (unsigned long long)si.addr, (unsigned long long)(si.addr - B.dma));
				memcpy(B.shadow + (si.addr - B.dma), &si.data, 4);
			} else if (B.has_write32) {
				B.expect_write = true;
				B.exp_addr = si.addr;
				B.exp_data = si.data;
			}
		}
	}
	return 0;
}

static void b_write32(void *ctx, ik_u64 addr, ik_u32 val)
{
	(void)ctx;
	B.writes++;
	FZ_CHECK(B.expect_write && addr == B.exp_addr && val == B.exp_data,
		 "write32(%#llx, %#x) not expected (expected %d %#llx %#x)", (unsigned long long)addr,
		 val, B.expect_write, (unsigned long long)B.exp_addr, B.exp_data);
	FZ_CHECK(!in_ring(addr), "write32 for an address inside the ring");
	B.expect_write = false;
}

static void b_check_memory(void)
{
	for (unsigned i = 0; i < GUARD; i++) {
		FZ_CHECK(B.buf[i] == GUARD_BYTE, "guard below the ring overwritten at -%u", GUARD - i);
		FZ_CHECK(B.ring[B.bytes + i] == GUARD_BYTE, "guard above the ring overwritten at +%u", i);
	}
	FZ_CHECK(!memcmp(B.ring, B.shadow, B.bytes), "the ring changed other than by completions");
}

/* A completion address: near the ring's edges, or anywhere. */
static uint64_t gen_addr(struct fz *f)
{
	uint8_t k = fz_u8(f);
	uint64_t off = (uint64_t)(int8_t)fz_u8(f);

	switch (k % 6) {
	case 0: return B.dma + off;
	case 1: return B.dma + B.bytes + off;
	case 2: return B.dma + (fz_u16(f) % (B.bytes + 8));
	case 3: return ~0ull - (k & 7);
	case 4: return fz_edgy(f);
	default: return fz_u64(f);
	}
}

static void b_write_entry(struct fz *f)
{
	ik_u32 slot = fz_u8(f) & B.mask;
	uint8_t k = fz_u8(f), e[32];
	uint64_t w[4] = { 0, 0, 0, 0 };

	switch (k % 4) {
	case 0: /* arbitrary words */
		for (unsigned i = 0; i < B.es / 8; i++)
			w[i] = fz_u64(f);
		break;
	case 1: /* a sync completing anywhere */
		B.fmt->encode_sync(w, gen_addr(f), fz_u32(f));
		break;
	case 2: /* a sync with a raw (possibly unencodable) address */
		if (B.fmt == &ik_cmdq_fmt_smmuv3) {
			w[0] = IK_SMMU_CMD_SYNC | ((uint64_t)IK_SMMU_SYNC_CS_IRQ << 12) |
			       ((uint64_t)fz_u32(f) << 32);
			w[1] = (fz_u64(f) & ((1ull << 50) - 1)) << 2;
		} else if (B.fmt == &ik_cmdq_fmt_riscv) {	/* IOFENCE.C, AV */
			w[0] = IK_RISCV_CMD_IOFENCE | (1u << 10) | ((uint64_t)fz_u32(f) << 32);
			w[1] = fz_u64(f) & ((1ull << 62) - 1);
		} else {
			w[0] = IK_VTD_DESC_WAIT | (1u << 5) | ((uint64_t)fz_u32(f) << 32);
			w[1] = fz_u64(f) & ~3ull;
		}
		break;
	default:
		B.fmt->encode_nop(w);
		if (k & 0x10)
			w[0] ^= 1ull << (fz_u8(f) % 64);
		break;
	}
	memcpy(e, w, B.es);
	memcpy(B.ring + (size_t)slot * B.es, e, B.es);
	memcpy(B.shadow + (size_t)slot * B.es, e, B.es);
}

static void run_hostile(struct fz *f)
{
	struct ik_cmdq_sw_config sc;
	uint8_t k = fz_u8(f);
	bool valid = true;
	uint64_t dma_cfg;
	int err;

	memset(&B, 0, sizeof(B));
	B.fmt = fmts[k % 4];
	B.es = B.fmt->entry_size;
	k = fz_u8(f);
	B.log2 = k < 240 ? 2 + k % 6 : k % 24;
	memset(&sc, 0, sizeof(sc));
	sc.fmt = B.fmt;
	sc.log2_entries = B.log2;
	k = fz_u8(f);
	sc.flags = (k & 1 ? IK_CMDQ_CFG_NO_WRAP : 0) | (k >= 250 ? 8u : 0);
	if (B.log2 < IK_CMDQ_LOG2_MIN || B.log2 > IK_CMDQ_LOG2_MAX || (sc.flags & ~3u))
		valid = false;
	if (valid && B.log2 > 12)
		return;
	B.size = 1u << (B.log2 & 31);
	B.mask = B.size - 1;
	B.bytes = valid ? (uint64_t)B.es << B.log2 : 64;
	B.buf = aligned_alloc(64, B.bytes + 2 * GUARD);
	B.shadow = calloc(1, B.bytes);
	memset(B.buf, GUARD_BYTE, B.bytes + 2 * GUARD);
	B.ring = B.buf + GUARD;
	memset(B.ring, 0, B.bytes);
	k = fz_u8(f);
	switch (k % 5) {
	case 0: dma_cfg = 0; break;
	case 1: dma_cfg = ~0ull - B.bytes + 1 - (fz_u8(f) % 8); break; /* near the top */
	case 2: dma_cfg = ~0ull - B.bytes + 1 + (fz_u8(f) % 8); break; /* wraps: refused */
	case 3: dma_cfg = fz_edgy(f); break;
	default: dma_cfg = (uint64_t)fz_u32(f) << 12; break;
	}
	sc.ring = B.ring;
	sc.ring_dma = dma_cfg;
	sc.handler = b_handler;
	sc.write32 = (k & 0x80) ? NULL : b_write32;
	B.has_write32 = sc.write32 != NULL;
	B.dma = dma_cfg ? dma_cfg : (uint64_t)(uintptr_t)B.ring;
	if (valid && (B.bytes - 1 > ~0ull - B.dma || B.dma % B.es))
		valid = false;
	err = ik_cmdq_sw_init(&B.sw, &sc);
	if (!valid) {
		FZ_CHECK(err == -EINVAL, "sw_init of a bad config = %d", err);
		goto out;
	}
	FZ_CHECK(err == 0, "sw_init = %d", err);
	B.regmask = (sc.flags & IK_CMDQ_CFG_NO_WRAP) ? B.mask : 2 * B.size - 1;

	for (unsigned ops = 0; fz_left(f) && ops < 128; ops++) {
		uint8_t op = fz_u8(f);

		switch (op % 6) {
		case 0:
		case 1: b_write_entry(f); break;
		case 2: ik_cmdq_sw_regs.write_prod(&B.sw, fz_u8(f) & 1 ? fz_u32(f) : B.cons + fz_u8(f) % 8);
			break;
		case 3: {
			unsigned budget = fz_u8(f) % 64, before = B.handled;
			ik_u32 cerror = 0, cons;
			int r = ik_cmdq_sw_consume(&B.sw, budget);

			FZ_CHECK(!B.expect_write, "a completion write outside the ring went nowhere");
			if (r >= 0)
				FZ_CHECK((unsigned)r == B.handled - before, "consume returned %d, handled %u", r,
					 B.handled - before);
			cons = ik_cmdq_sw_regs.read_cons(&B.sw, &cerror);
			FZ_CHECK(cons == (B.cons & B.regmask), "CONS %u, consumed up to %u", cons, B.cons);
			b_check_memory();
			break;
		}
		case 4: {
			/* acknowledge a stop, repairing the entry with a no-op */
			ik_u32 cerror = 0;

			(void)ik_cmdq_sw_regs.read_cons(&B.sw, &cerror);
			if (cerror && fz_bool(f)) {
				uint8_t *slot = B.ring + (size_t)(B.cons & B.mask) * B.es;
				uint64_t w[4];

				B.fmt->encode_nop(w);
				memcpy(slot, w, B.es);
				memcpy(B.shadow + (size_t)(B.cons & B.mask) * B.es, w, B.es);
			}
			ik_cmdq_sw_regs.ack_error(&B.sw);
			break;
		}
		default: {
			uint8_t c = fz_u8(f);

			ik_cmdq_sw_inject(&B.sw, fz_u8(f) % 8, 1 + c % 3, 1 + (c >> 2) % 4);
			break;
		}
		}
	}
	b_check_memory();
out:
	free(B.buf);
	free(B.shadow);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f;

	fz_init(&f, data, size);
	if (fz_u8(&f) & 1)
		run_hostile(&f);
	else
		run_queue(&f);
	return 0;
}
