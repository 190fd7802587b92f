/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * tests/test_cmdq_irq.c - the command queue's interrupt windows
 * (<iommukit/cmdq.h>, "Interrupts"), with the queue's source compiled in
 * against tests/cmdq_irq_env.h, whose IK_ENV_IRQ_SAVE/_RESTORE emulate a
 * CPU's local interrupts per thread.
 *
 *   windows    every command copied into the ring, and every PROD write, is
 *              made with interrupts off, and no save/restore pair that
 *              copied commands ends before they are published; no wait
 *              (yield, clock read, pause) happens with interrupts off; every
 *              exit (success, chunks of a request larger than the ring, a
 *              consumer error, a timeout in each wait) leaves them on, with
 *              saves and restores balanced.
 *   interrupt  an "interrupt" raised while a producer copies its commands
 *              runs a handler that issues with IK_CMDQ_SYNC.  Without the
 *              hooks it runs inside the producer's window, its sync sits
 *              behind the producer's unpublished entries, and it returns
 *              -ETIMEDOUT; with them it runs when the producer turns
 *              interrupts back on, and its sync completes.
 *
 * The consumer is an ik_cmdq_sw that the read_cons hook runs before it
 * reads CONS, so each test is one thread and deterministic.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include "testlib.h"
#include "cmdq_test.h"

/* ---------------------------------------------------------------- the emulated CPU */

struct t_log {
	unsigned saves, restores, bad_restores;
	unsigned waits_on, waits_off;	  /* yields, clock reads, pauses */
	unsigned copies_on, copies_off;	  /* commands copied into the ring */
	unsigned prod_on, prod_off;	  /* PROD writes */
	unsigned ack_on, ack_off;	  /* error acknowledgements */
	unsigned unpublished_at_restore;  /* pairs that copied but did not publish */
};

static __thread bool t_off;		/* interrupts off on this "CPU" */
static __thread void (*t_pending)(void); /* a raised interrupt */
static __thread bool t_in_handler;
static __thread struct t_log lg;
static __thread bool pair_copied, pair_published;
/* The caller's commands: copies from here are fill()'s. */
static __thread const char *t_cmds_lo, *t_cmds_hi;

static void t_irq_raise(void (*h)(void))
{
	t_pending = h;
}

/* Run a pending interrupt if interrupts are on (not nested). */
static void t_deliver(void)
{
	void (*h)(void) = t_pending;

	if (t_off || !h || t_in_handler)
		return;
	t_pending = NULL;
	t_in_handler = true;
	h();
	t_in_handler = false;
}

unsigned long t_irq_save(void)
{
	unsigned long was_on = !t_off;

	t_off = true;
	lg.saves++;
	if (was_on)
		pair_copied = pair_published = false;
	return was_on;
}

void t_irq_restore(unsigned long was_on)
{
	lg.restores++;
	if (!t_off)
		lg.bad_restores++;
	if (!was_on)
		return;
	if (pair_copied && !pair_published)
		lg.unpublished_at_restore++;
	t_off = false;
	t_deliver();
}

static void t_wait_point(void)
{
	if (t_off) {
		lg.waits_off++;
	} else {
		lg.waits_on++;
		t_deliver();
	}
}

void t_env_yield(void)
{
	t_wait_point();
	sched_yield();
}

__UINT64_TYPE__ t_env_time_ns(void)
{
	struct timespec ts;

	t_wait_point();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__UINT64_TYPE__)ts.tv_sec * 1000000000u + (__UINT64_TYPE__)ts.tv_nsec;
}

void t_env_relax(void)
{
	t_wait_point();
}

void *t_env_memcpy(void *d, const void *s, __SIZE_TYPE__ n)
{
	const char *p = (const char *)s;

	/* fill() copies a 16-byte entry as two 8-byte halves: count each
	 * entry at its first, look at both. */
	if (t_cmds_lo && p >= t_cmds_lo && p < t_cmds_hi) {
		unsigned first = (p - t_cmds_lo) % 16 == 0;

		if (t_off) {
			lg.copies_off += first;
		} else {
			lg.copies_on += first;
			t_deliver();
		}
		pair_copied = true;
	}
	return memcpy(d, s, n);
}

/* ---------------------------------------------------------------- the rig */

struct rig {
	struct ik_cmdq_sw sw;
	struct ik_cmdq *q;
	void *ring;
	unsigned budget;	/* entries consumed per CONS read */
	bool stuck;		/* consume nothing */
};

static ik_u32 rig_read_cons(void *ctx, ik_u32 *cerror)
{
	struct rig *r = (struct rig *)ctx;

	if (!r->stuck)
		(void)ik_cmdq_sw_consume(&r->sw, r->budget);
	return ik_cmdq_sw_regs.read_cons(&r->sw, cerror);
}

static void rig_write_prod(void *ctx, ik_u32 prod)
{
	struct rig *r = (struct rig *)ctx;

	if (t_off)
		lg.prod_off++;
	else
		lg.prod_on++;
	pair_published = true;
	ik_cmdq_sw_regs.write_prod(&r->sw, prod);
}

static void rig_ack_error(void *ctx)
{
	struct rig *r = (struct rig *)ctx;

	if (t_off)
		lg.ack_off++;
	else
		lg.ack_on++;
	ik_cmdq_sw_regs.ack_error(&r->sw);
}

static const struct ik_cmdq_regs rig_regs = { rig_read_cons, rig_write_prod, NULL, rig_ack_error };

static void rig_init(struct rig *r, unsigned log2, unsigned budget, ik_u64 timeout_ns)
{
	struct ik_cmdq_sw_config sc;
	struct ik_cmdq_config cfg;
	size_t ringsz = (size_t)16 << log2;

	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(posix_memalign(&r->ring, 64, ringsz), 0);
	memset(r->ring, 0, ringsz);
	r->budget = budget;
	memset(&sc, 0, sizeof(sc));
	sc.fmt = &ik_cmdq_fmt_smmuv3;
	sc.log2_entries = log2;
	sc.ring = r->ring;
	ck_assert_int_eq(ik_cmdq_sw_init(&r->sw, &sc), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.fmt = &ik_cmdq_fmt_smmuv3;
	cfg.log2_entries = log2;
	cfg.ring = r->ring;
	cfg.regs = &rig_regs;
	cfg.regs_ctx = r;
	cfg.timeout_ns = timeout_ns;
	ck_assert_int_eq(ik_cmdq_create(&cfg, &r->q), 0);
	/* Yield soon, so that the waits reach every env call. */
	(void)ik_cmdq_set_spin(r->q, 1);
	memset(&lg, 0, sizeof(lg));
	t_off = false;
	t_pending = NULL;
}

static void rig_fini(struct rig *r)
{
	ik_cmdq_destroy(r->q);
	free(r->ring);
	t_cmds_lo = t_cmds_hi = NULL;
}

#define NCMDS 24
static ik_u64 cmds[NCMDS][2];

static void cmds_init(void)
{
	struct ik_smmu_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = IK_SMMU_CMD_TLBI_NSNH_ALL;
	for (unsigned i = 0; i < NCMDS; i++)
		ck_assert_int_eq(ik_smmu_cmd_encode(&c, cmds[i]), 0);
	t_cmds_lo = (const char *)cmds;
	t_cmds_hi = (const char *)cmds + sizeof(cmds);
}

/* After a call: interrupts on, every pair closed, nothing left unpublished
 * at a restore, no copy, PROD write or acknowledgement with them on and no
 * wait with them off. */
static void check_windows(const char *what)
{
	ck_assert_msg(!t_off, "%s: interrupts left off", what);
	ck_assert_msg(lg.saves == lg.restores && !lg.bad_restores,
		      "%s: %u saves, %u restores (%u without a save)", what, lg.saves, lg.restores,
		      lg.bad_restores);
	ck_assert_msg(!lg.copies_on, "%s: %u commands copied into the ring with interrupts on",
		      what, lg.copies_on);
	ck_assert_msg(!lg.prod_on, "%s: %u PROD writes with interrupts on", what, lg.prod_on);
	ck_assert_msg(!lg.ack_on, "%s: %u error acknowledgements with interrupts on", what,
		      lg.ack_on);
	ck_assert_msg(!lg.unpublished_at_restore,
		      "%s: %u windows turned interrupts on with entries unpublished", what,
		      lg.unpublished_at_restore);
	ck_assert_msg(!lg.waits_off, "%s: %u waits with interrupts off", what, lg.waits_off);
}

START_TEST(windows)
{
	struct rig r;
	unsigned copied = 0;

	/* 4 entries, one consumed per CONS read: requests of up to 11
	 * commands go in chunks, and producers wait for space and syncs. */
	rig_init(&r, 2, 1, 1000000000ull);
	cmds_init();
	for (unsigned n = 0; n <= 11; n++) {
		for (unsigned sync = 0; sync < 2; sync++) {
			if (!n && !sync)
				continue;
			ck_assert_int_eq(ik_cmdq_issue(r.q, n ? cmds : NULL, n,
						       sync ? IK_CMDQ_SYNC : 0), 0);
			copied += n;
			check_windows("issue");
		}
	}
	ck_assert_int_eq(ik_cmdq_sync(r.q), 0);
	check_windows("sync");
	/* Each command copied once, all in windows; and the checks above
	 * had waits to look at. */
	ck_assert_uint_eq(lg.copies_off, copied);
	ck_assert_uint_gt(lg.waits_on, 0);
	ck_assert_uint_gt(lg.prod_off, 0);

	/* A batch (its own enqueue path; added from a copy, since only
	 * fill()'s copies are to be counted). */
	{
		struct ik_cmdq_batch b;
		ik_u64 c[2];

		memcpy(c, cmds[0], sizeof(c));
		ik_cmdq_batch_init(&b, r.q);
		for (unsigned i = 0; i < 6; i++)
			ck_assert_int_eq(ik_cmdq_batch_add(&b, c), 0);
		ck_assert_int_eq(ik_cmdq_batch_submit(&b), 0);
		check_windows("batch");
	}

	/* The error path: an illegal entry is replaced, its issuer gets -EIO. */
	(void)ik_cmdq_sw_inject(&r.sw, 1, IK_CMDQ_CERROR_ILL, 1);
	ck_assert_int_eq(ik_cmdq_issue(r.q, cmds, 3, IK_CMDQ_SYNC), -EIO);
	check_windows("consumer error");
	ck_assert_uint_gt(lg.ack_off, 0);

	/* The timeouts: a stuck consumer, waiting for a sync, then for
	 * space (the request larger than the ring fails in reserve()). */
	r.stuck = true;
	(void)ik_cmdq_set_timeout(r.q, 2000000);
	ck_assert_int_eq(ik_cmdq_issue(r.q, cmds, 1, IK_CMDQ_SYNC), -ETIMEDOUT);
	check_windows("sync timeout");
	ck_assert_int_eq(ik_cmdq_issue(r.q, cmds, 11, 0), -ETIMEDOUT);
	check_windows("space timeout");
	rig_fini(&r);
}
END_TEST

/* ---------------------------------------------------------------- interrupt */

static struct rig *irq_rig;
static int irq_result;
static unsigned irq_runs;
static ik_u64 irq_cmd[2];

static void irq_handler(void)
{
	irq_runs++;
	irq_result = ik_cmdq_issue(irq_rig->q, irq_cmd, 1, IK_CMDQ_SYNC);
}

static void irq_handler_sync(void)
{
	irq_runs++;
	irq_result = ik_cmdq_sync(irq_rig->q);
}

static void interrupt_case(void (*handler)(void), unsigned n, unsigned flags)
{
	struct rig r;

	/* A short bound: without the hooks the handler's wait ends in it. */
	rig_init(&r, 4, 64, 100000000ull);
	cmds_init();
	memcpy(irq_cmd, cmds[0], sizeof(irq_cmd));
	irq_rig = &r;
	irq_result = 1;
	irq_runs = 0;
	t_irq_raise(handler);
	ck_assert_int_eq(ik_cmdq_issue(r.q, cmds, n, flags), 0);
	ck_assert_uint_eq(irq_runs, 1);
	ck_assert_msg(irq_result == 0,
		      "the interrupt handler's sync returned %d: it waited behind the "
		      "interrupted producer's unpublished entries", irq_result);
	/* Everything reached the consumer. */
	ck_assert_int_eq(ik_cmdq_sync(r.q), 0);
	ck_assert(!t_off);
	ck_assert_uint_eq(lg.saves, lg.restores);
	rig_fini(&r);
}

START_TEST(interrupt_issue)
{
	interrupt_case(irq_handler, 4, 0);
}
END_TEST

START_TEST(interrupt_sync)
{
	interrupt_case(irq_handler_sync, 4, IK_CMDQ_SYNC);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("cmdq_irq");
	TCase *tc = tcase_create("windows");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, windows);
	tcase_add_test(tc, interrupt_issue);
	tcase_add_test(tc, interrupt_sync);
	suite_add_tcase(s, tc);
	return s;
}
