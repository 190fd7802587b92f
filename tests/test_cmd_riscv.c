/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RISC-V IOMMU commands and fault records: every field at the position the
 * specification gives (expected words written from the tables, not from the
 * encoder); random words decode exactly when they are legal and re-encode to
 * themselves; reserved bits and iommukit's valid-bit rules are refused; the
 * ik_cmdq entry format (IOFENCE.C + AV as the sync) driven through a queue
 * and the software consumer (completion addresses anywhere in 64 bits:
 * tests/test_cmdq.c, sw_consumer_status_address_anywhere_in_64_bits);
 * the fault-queue record decoder and encoder.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/cmdq.h>
#include <iommukit/cmd/riscv.h>
#include "testlib.h"

#define BIT(n) (1ull << (n))
#define GENMASK(h, l) (((~0ull) >> (63 - (h))) & ~((1ull << (l)) - 1))

static struct ik_riscv_cmd rcmd(unsigned opcode, unsigned func3)
{
	struct ik_riscv_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = (uint8_t)opcode;
	c.func3 = (uint8_t)func3;
	return c;
}

static bool cmd_eq(const struct ik_riscv_cmd *a, const struct ik_riscv_cmd *b)
{
	return a->opcode == b->opcode && a->func3 == b->func3 && a->av == b->av &&
	       a->pscv == b->pscv && a->gv == b->gv && a->wsi == b->wsi && a->pr == b->pr &&
	       a->pw == b->pw && a->dv == b->dv && a->gscid == b->gscid && a->pscid == b->pscid &&
	       a->pid == b->pid && a->did == b->did && a->data == b->data && a->addr == b->addr;
}

static void roundtrip(const struct ik_riscv_cmd *c, uint64_t w0, uint64_t w1)
{
	uint64_t w[2] = { 0, 0 };
	struct ik_riscv_cmd x;

	ck_assert_int_eq(ik_riscv_cmd_encode(c, w), 0);
	ck_assert_msg(w[0] == w0 && w[1] == w1, "%s: %#llx %#llx, want %#llx %#llx",
		      ik_riscv_cmd_name(c->opcode, c->func3), (unsigned long long)w[0],
		      (unsigned long long)w[1], (unsigned long long)w0, (unsigned long long)w1);
	ck_assert_int_eq(ik_riscv_cmd_decode(w, &x), 0);
	ck_assert(cmd_eq(&x, c));
}

START_TEST(fields_at_spec_positions)
{
	struct ik_riscv_cmd c;

	/* IOTINVAL.VMA: opcode 1, func3 0, AV 10, PSCID 31:12, PSCV 32, GV 33,
	 * GSCID 59:44; ADDR[63:12] in dword1 61:10 */
	c = rcmd(1, 0);
	c.av = 1, c.pscv = 1, c.pscid = 0xfedcb, c.gv = 1, c.gscid = 0x9abc;
	c.addr = 0xfffffffffffff000ull;
	roundtrip(&c, 1 | BIT(10) | 0xfedcbull << 12 | BIT(32) | BIT(33) | 0x9abcull << 44,
		  GENMASK(61, 10));
	c = rcmd(1, 0);
	roundtrip(&c, 1, 0);	/* everything */
	/* IOTINVAL.GVMA: func3 1 */
	c = rcmd(1, 1);
	c.av = 1, c.gv = 1, c.gscid = 7, c.addr = 0x123456789000ull;
	roundtrip(&c, 1 | 1ull << 7 | BIT(10) | BIT(33) | 7ull << 44, 0x123456789ull << 10);
	/* IOFENCE.C: opcode 2, AV 10, WSI 11, PR 12, PW 13, DATA 63:32;
	 * ADDR[63:2] in dword1 61:0 */
	c = rcmd(2, 0);
	c.av = 1, c.wsi = 1, c.pr = 1, c.pw = 1, c.data = 0xcafef00d;
	c.addr = 0xfffffffffffffffcull;
	roundtrip(&c, 2 | BIT(10) | BIT(11) | BIT(12) | BIT(13) | 0xcafef00dull << 32,
		  GENMASK(61, 0));
	/* IODIR.INVAL_DDT: opcode 3, DV 33, DID 63:40; INVAL_PDT: PID 31:12 */
	c = rcmd(3, 0);
	c.dv = 1, c.did = 0xabcdef;
	roundtrip(&c, 3 | BIT(33) | 0xabcdefull << 40, 0);
	c = rcmd(3, 0);
	roundtrip(&c, 3, 0);	/* every device */
	c = rcmd(3, 1);
	c.dv = 1, c.did = 1, c.pid = 0xfffff;
	roundtrip(&c, 3 | 1ull << 7 | 0xfffffull << 12 | BIT(33) | 1ull << 40, 0);
	ck_assert_str_eq(ik_riscv_cmd_name(1, 1), "IOTINVAL.GVMA");
	ck_assert_ptr_null(ik_riscv_cmd_name(4, 0));
	ck_assert_ptr_null(ik_riscv_cmd_name(2, 1));
	ck_assert_ptr_null(ik_riscv_cmd_name(0x81, 0));
}
END_TEST

/* The defined bits of each command (opcode and func3 included). */
static const struct { uint64_t op, m0, m1; } masks[] = {
	{ 1, BIT(10) | GENMASK(33, 12) | GENMASK(59, 44), GENMASK(61, 10) },
	{ 1 | 1 << 7, BIT(10) | BIT(33) | GENMASK(59, 44), GENMASK(61, 10) },
	{ 2, GENMASK(13, 10) | GENMASK(63, 32), GENMASK(61, 0) },
	{ 3, BIT(33) | GENMASK(63, 40), 0 },
	{ 3 | 1 << 7, GENMASK(31, 12) | BIT(33) | GENMASK(63, 40), 0 },
};

/* Whether w obeys the valid-bit rules (given only defined bits). */
static bool rules_hold(unsigned k, const uint64_t *w)
{
	bool av = w[0] & BIT(10), v33 = w[0] & BIT(33), v32 = w[0] & BIT(32);

	switch (k) {
	case 0: return (av || !w[1]) && (v32 || !(w[0] & GENMASK(31, 12))) &&
		       (v33 || !(w[0] & GENMASK(59, 44)));
	case 1: return (av || !w[1]) && (v33 || !(w[0] & GENMASK(59, 44)));
	case 2: return av || (!w[1] && !(w[0] >> 32));
	case 3: return v33 || !(w[0] >> 40);
	default: return v33;
	}
}

START_TEST(random_words_roundtrip_and_reserved_bits_rejected)
{
	struct ik_rng rng = { 77 };
	long iters = ik_test_iters(20000), ok = 0;

	for (long it = 0; it < iters; it++) {
		unsigned k = (unsigned)ik_rng_below(&rng, IK_ARRAY_SIZE(masks));
		uint64_t w[2], back[2];
		struct ik_riscv_cmd c;
		int err;

		w[0] = masks[k].op | (ik_rng_next(&rng) & masks[k].m0);
		w[1] = ik_rng_next(&rng) & masks[k].m1;
		/* clear a valid bit now and then, with or without its field */
		if (ik_rng_below(&rng, 3) == 0)
			w[0] &= ~(BIT(10) | BIT(32) | BIT(33));
		if (ik_rng_below(&rng, 2))
			w[0] &= ~(GENMASK(31, 12) | GENMASK(59, 44)), w[1] = 0;
		if (ik_rng_below(&rng, 4) == 0)
			w[0] &= GENMASK(9, 0) | BIT(10) | BIT(32) | BIT(33);
		err = ik_riscv_cmd_decode(w, &c);
		IK_REQUIRE_MSG((err == 0) == rules_hold(k, w), "k %u %#llx %#llx: %d", k,
			       (unsigned long long)w[0], (unsigned long long)w[1], err);
		if (err == 0) {
			ok++;
			IK_REQUIRE(ik_riscv_cmd_encode(&c, back) == 0);
			IK_REQUIRE(back[0] == w[0] && back[1] == w[1]);
		}
		/* any bit outside the command's fields: illegal */
		for (int b = 10; b < 128; b += 1 + (int)ik_rng_below(&rng, 8)) {
			uint64_t x[2] = { w[0], w[1] };
			uint64_t m = b < 64 ? masks[k].m0 : masks[k].m1;

			if (m & BIT(b % 64))
				continue;
			x[b / 64] |= BIT(b % 64);
			IK_REQUIRE(ik_riscv_cmd_decode(x, &c) == -EINVAL);
		}
	}
	ck_assert_int_gt(ok, iters / 8);
}
END_TEST

START_TEST(encoder_rejects_bad_commands_and_leaves_w_alone)
{
	struct ik_riscv_cmd c, bad[16];
	uint64_t w[2] = { 0x1111, 0x2222 };
	unsigned n = 0;

	bad[n++] = rcmd(0, 0);				/* no such opcode */
	bad[n++] = rcmd(4, 0);				/* ATS: not supported */
	bad[n++] = rcmd(2, 1);				/* no such function */
	c = rcmd(1, 1), c.pscv = 1, bad[n++] = c;	/* GVMA has no PSCV */
	c = rcmd(1, 0), c.pscid = 5, bad[n++] = c;	/* PSCID without PSCV */
	c = rcmd(1, 0), c.gscid = 5, bad[n++] = c;	/* GSCID without GV */
	c = rcmd(1, 0), c.addr = 0x1000, bad[n++] = c;	/* ADDR without AV */
	c = rcmd(1, 0), c.av = 1, c.addr = 0x1800, bad[n++] = c; /* misaligned */
	c = rcmd(1, 0), c.pscv = 1, c.pscid = 1u << 20, bad[n++] = c; /* too wide */
	c = rcmd(2, 0), c.data = 1, bad[n++] = c;	/* DATA without AV */
	c = rcmd(2, 0), c.av = 1, c.addr = 0x1002, bad[n++] = c; /* not 4-byte aligned */
	c = rcmd(3, 1), c.pid = 3, bad[n++] = c;	/* PDT without DV */
	c = rcmd(3, 0), c.dv = 1, c.did = 1u << 24, bad[n++] = c; /* DID too wide */
	c = rcmd(3, 0), c.pid = 1, bad[n++] = c;	/* DDT has no PID */
	c = rcmd(2, 0), c.av = 2, bad[n++] = c;		/* a flag is 0 or 1 */
	for (unsigned i = 0; i < n; i++) {
		ck_assert_msg(ik_riscv_cmd_encode(&bad[i], w) == -EINVAL, "bad[%u] encoded", i);
		ck_assert(w[0] == 0x1111 && w[1] == 0x2222);
	}
	ck_assert_int_eq(ik_riscv_cmd_encode(NULL, w), -EINVAL);
	c = rcmd(2, 0);
	ck_assert_int_eq(ik_riscv_cmd_encode(&c, NULL), -EINVAL);
	ck_assert_int_eq(ik_riscv_cmd_decode(NULL, &c), -EINVAL);
	ck_assert_int_eq(ik_riscv_cmd_decode(w, NULL), -EINVAL);
}
END_TEST

/* ------------------------------------------------------ queue format */

START_TEST(cmdq_format_sync_is_iofence_with_av_and_nop_is_a_bare_fence)
{
	const struct ik_cmdq_fmt *f = &ik_cmdq_fmt_riscv;
	struct ik_cmdq_sync_info si;
	uint64_t w[2];

	ck_assert_uint_eq(f->entry_size, 16);
	f->encode_nop(w);
	ck_assert(w[0] == 2 && w[1] == 0);
	ck_assert_int_eq(f->classify(w, &si), IK_CMDQ_KIND_SYNC);
	ck_assert(!si.write);
	f->encode_sync(w, 0x80001000ull, 0xabcd0001u);
	ck_assert_uint_eq(w[0], 2 | BIT(10) | 0xabcd0001ull << 32);
	ck_assert_uint_eq(w[1], 0x80001000ull >> 2);
	ck_assert_int_eq(f->classify(w, &si), IK_CMDQ_KIND_SYNC);
	ck_assert(si.write && si.addr == 0x80001000ull && si.data == 0xabcd0001u);
	/* an address the command cannot hold: a sync without the write */
	f->encode_sync(w, 0x80001001ull, 5);
	ck_assert(w[0] == 2 && w[1] == 0);
	/* other commands are commands; a reserved bit is illegal */
	w[0] = 1, w[1] = 0;
	ck_assert_int_eq(f->classify(w, &si), IK_CMDQ_KIND_CMD);
	w[0] = 1 | BIT(11);
	ck_assert_int_eq(f->classify(w, &si), -EINVAL);
}
END_TEST

struct qrig {
	struct ik_cmdq *q;
	struct ik_cmdq_sw sw;
	void *ring;
	pthread_t thr;
	int stop;
	uint64_t next_pscid, bad_seen;
};

static uint32_t q_handler(void *ctx, ik_u32 index, const void *ent, int kind)
{
	struct qrig *r = ctx;
	struct ik_riscv_cmd c;

	(void)index;
	if (kind != IK_CMDQ_KIND_CMD)
		return 0;
	/* classify() accepted it: it decodes; PSCIDs arrive in order */
	IK_REQUIRE(ik_riscv_cmd_decode(ent, &c) == 0);
	if (c.pscid == 0xfffff) {	/* the test's "unit refuses this" marker */
		r->bad_seen++;
		return IK_CMDQ_CERROR_ILL;
	}
	IK_REQUIRE(c.opcode == IK_RISCV_CMD_IOTINVAL && c.pscid == r->next_pscid);
	r->next_pscid++;
	return 0;
}

static void *q_consumer(void *arg)
{
	struct qrig *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (ik_cmdq_sw_consume(&r->sw, 16) == -EAGAIN)
			ik_cmdq_poll_errors(r->q);
		sched_yield();
	}
	return NULL;
}

static void mk_inval(uint64_t w[2], uint32_t pscid)
{
	struct ik_riscv_cmd c = rcmd(1, 0);

	c.pscv = 1, c.pscid = pscid, c.av = 1, c.addr = (uint64_t)pscid << 12;
	IK_REQUIRE(ik_riscv_cmd_encode(&c, w) == 0);
}

START_TEST(queue_of_riscv_commands_through_the_software_consumer)
{
	for (unsigned msi = 0; msi < 2; msi++) {
		struct ik_cmdq_sw_config sc;
		struct ik_cmdq_config cfg;
		struct qrig r;
		uint64_t cmds[40][2], pscid = 0;

		memset(&r, 0, sizeof(r));
		ck_assert_int_eq(posix_memalign(&r.ring, 64, 16 << 3), 0);
		memset(r.ring, 0, 16 << 3);
		memset(&sc, 0, sizeof(sc));
		sc.fmt = &ik_cmdq_fmt_riscv;
		sc.log2_entries = 3;
		sc.flags = IK_CMDQ_CFG_NO_WRAP;	/* cqh/cqt: plain indices */
		sc.ring = r.ring;
		sc.handler = q_handler;
		sc.ctx = &r;
		ck_assert_int_eq(ik_cmdq_sw_init(&r.sw, &sc), 0);
		memset(&cfg, 0, sizeof(cfg));
		cfg.fmt = &ik_cmdq_fmt_riscv;
		cfg.log2_entries = 3;
		cfg.flags = IK_CMDQ_CFG_NO_WRAP | (msi ? IK_CMDQ_CFG_MSI : 0);
		cfg.ring = r.ring;
		cfg.regs = &ik_cmdq_sw_regs;
		cfg.regs_ctx = &r.sw;
		/* A live consumer thread ends every wait here: a long bound
		 * (the default 1 s expired on loaded build machines). */
		cfg.timeout_ns = ik_test_timeout_ns(30000000000ull);
		ck_assert_int_eq(ik_cmdq_create(&cfg, &r.q), 0);
		ck_assert_int_eq(pthread_create(&r.thr, NULL, q_consumer, &r), 0);
		for (unsigned round = 0; round < 12; round++) {
			unsigned n = round * 3 % 40;

			for (unsigned i = 0; i < n; i++)
				mk_inval(cmds[i], (uint32_t)pscid++);
			ck_assert_int_eq(ik_cmdq_issue(r.q, cmds, n, IK_CMDQ_SYNC), 0);
			/* the sync returned: the consumer executed all of them */
			ck_assert_uint_eq(__atomic_load_n(&r.next_pscid, __ATOMIC_RELAXED), pscid);
		}
		/* a command the unit refuses: reported, replaced, the rest run */
		mk_inval(cmds[0], (uint32_t)pscid++);
		mk_inval(cmds[1], 0xfffff);
		mk_inval(cmds[2], (uint32_t)pscid++);
		ck_assert_int_eq(ik_cmdq_issue(r.q, cmds, 3, IK_CMDQ_SYNC), -EIO);
		ck_assert_int_eq(ik_cmdq_sync(r.q), 0);
		ck_assert_uint_eq(__atomic_load_n(&r.next_pscid, __ATOMIC_RELAXED), pscid);
		ck_assert_uint_eq(r.bad_seen, 1);
		__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
		pthread_join(r.thr, NULL);
		ck_assert_uint_ge(r.sw.syncs, 13);
		ik_cmdq_destroy(r.q);
		free(r.ring);
	}
}
END_TEST

/* ------------------------------------------------------ fault records */

START_TEST(fault_record_fields_at_spec_positions)
{
	uint64_t w[4], back[4];
	struct ik_riscv_fault f;

	/* CAUSE 11:0, PID 31:12, PV 32, PRIV 33, TTYP 39:34, DID 63:40 */
	w[0] = 13 | 0x12345ull << 12 | BIT(32) | BIT(33) | 6ull << 34 | 0xabcdefull << 40;
	w[1] = 0xdeadbeef;	/* custom */
	w[2] = 0x7fff12345678ull;
	w[3] = 0;
	ck_assert_int_eq(ik_riscv_fault_decode(w, &f), 0);
	ck_assert_uint_eq(f.cause, IK_RISCV_CAUSE_READ_PAGE);
	ck_assert_uint_eq(f.pid, 0x12345);
	ck_assert(f.pv && f.priv && f.page_fault && !f.guest_page_fault);
	ck_assert_uint_eq(f.ttyp, IK_RISCV_TTYP_TR);
	ck_assert_uint_eq(f.did, 0xabcdef);
	ck_assert_uint_eq(f.custom, 0xdeadbeef);
	ck_assert_uint_eq(f.iotval, 0x7fff12345678ull);
	ck_assert_int_eq(ik_riscv_fault_encode(&f, back), 0);
	ck_assert_int_eq(memcmp(back, w, sizeof(w)), 0);
	ck_assert_str_eq(ik_riscv_fault_cause_name(f.cause), "read page fault");
	/* a guest-page fault: iotval2[63:2] = GPA[63:2], bit 0 = implicit
	 * access, bit 1 = it was a write */
	w[0] = 23 | 3ull << 34 | 5ull << 40;
	w[2] = 0x1000;
	w[3] = 0x80002ff8ull | 3;
	ck_assert_int_eq(ik_riscv_fault_decode(w, &f), 0);
	ck_assert(f.guest_page_fault && f.implicit && f.implicit_write && !f.pv && !f.page_fault);
	ck_assert_uint_eq(f.gpa, 0x80002ff8ull);
	ck_assert_uint_eq(f.ttyp, IK_RISCV_TTYP_UW);
	w[3] = 0x80002ff8ull | 2;	/* bit 1 without bit 0: not an implicit write */
	ck_assert_int_eq(ik_riscv_fault_decode(w, &f), 0);
	ck_assert(!f.implicit && !f.implicit_write);
	/* not a guest-page fault: no GPA */
	w[0] = 13 | 6ull << 34;
	ck_assert_int_eq(ik_riscv_fault_decode(w, &f), 0);
	ck_assert(!f.guest_page_fault && !f.implicit && f.gpa == 0);
	/* names: every defined cause has one; reserved ones none */
	ck_assert_str_eq(ik_riscv_fault_cause_name(258), "DDT entry not valid");
	ck_assert_str_eq(ik_riscv_fault_cause_name(274), "first/second-stage PT data corruption");
	ck_assert_str_eq(ik_riscv_fault_cause_name(3000), "custom");
	ck_assert_ptr_null(ik_riscv_fault_cause_name(0));
	ck_assert_ptr_null(ik_riscv_fault_cause_name(14));
	ck_assert_ptr_null(ik_riscv_fault_cause_name(275));
	ck_assert_ptr_null(ik_riscv_fault_cause_name(4096));
}
END_TEST

START_TEST(fault_record_reserved_values_are_refused)
{
	const uint64_t good[4] = { 15 | 7ull << 34, 0, 0x1000, 0 };
	uint64_t bad[8][4];
	struct ik_riscv_fault f;
	unsigned n = 0;

	memcpy(bad[n], good, sizeof(good)), bad[n++][1] |= BIT(32);	/* reserved half of w[1] */
	memcpy(bad[n], good, sizeof(good)), bad[n++][0] ^= 15 ^ 2;	/* cause 2: reserved */
	memcpy(bad[n], good, sizeof(good)), bad[n++][0] ^= 15 ^ 300;	/* 275..2047 reserved */
	memcpy(bad[n], good, sizeof(good)), bad[n++][0] ^= 3ull << 34;	/* TTYP 4 */
	memcpy(bad[n], good, sizeof(good)), bad[n++][0] |= 10ull << 34;	/* TTYP 15 */
	memcpy(bad[n], good, sizeof(good)), bad[n++][0] |= 1ull << 12;	/* PID without PV */
	memcpy(bad[n], good, sizeof(good)), bad[n++][0] |= 1ull << 33;	/* PRIV without PV */
	memcpy(bad[n], good, sizeof(good)), bad[n][0] &= ~(63ull << 34);
	bad[n++][0] |= 1ull << 40;					/* DID, TTYP 0 */
	ck_assert_int_eq(ik_riscv_fault_decode(good, &f), 0);
	for (unsigned i = 0; i < n; i++) {
		memset(&f, 0x5a, sizeof(f));
		ck_assert_msg(ik_riscv_fault_decode(bad[i], &f) == -EINVAL, "bad[%u]", i);
		ck_assert(f.cause == 0 && f.iotval == 0 && !f.pv);
	}
	/* the encoder refuses what the decoder does, and values that do not fit */
	ck_assert_int_eq(ik_riscv_fault_decode(good, &f), 0);
	f.did = 1u << 24;
	ck_assert_int_eq(ik_riscv_fault_encode(&f, bad[0]), -EINVAL);
	f.did = 0, f.cause = 22;
	ck_assert_int_eq(ik_riscv_fault_encode(&f, bad[0]), -EINVAL);
	f.cause = 15, f.ttyp = 64;
	ck_assert_int_eq(ik_riscv_fault_encode(&f, bad[0]), -EINVAL);
	ck_assert_int_eq(ik_riscv_fault_decode(NULL, &f), -EINVAL);
	ck_assert_int_eq(ik_riscv_fault_decode(good, NULL), -EINVAL);
	ck_assert_int_eq(ik_riscv_fault_encode(NULL, bad[0]), -EINVAL);
	ck_assert_int_eq(ik_riscv_fault_encode(&f, NULL), -EINVAL);
	/* every 64-bit first word: decoding succeeds exactly for legal ones */
	{
		struct ik_rng rng = { 3 };

		for (long it = 0; it < ik_test_iters(20000); it++) {
			uint64_t w[4] = { ik_rng_next(&rng), ik_rng_next(&rng) & 0xffffffffull,
					  ik_rng_next(&rng), ik_rng_next(&rng) };
			unsigned cause = (unsigned)(w[0] & 0xfff), t = (unsigned)((w[0] >> 34) & 63);
			bool legal;

			if (ik_rng_below(&rng, 2))
				w[0] = (w[0] & ~0xfffull) | (ik_rng_below(&rng, 2) ? 13 : 257);
			if (ik_rng_below(&rng, 2))
				w[0] &= ~GENMASK(31, 12);
			cause = (unsigned)(w[0] & 0xfff);
			t = (unsigned)((w[0] >> 34) & 63);
			if (ik_rng_below(&rng, 2))
				w[0] &= ~(GENMASK(33, 32) | GENMASK(63, 40));
			legal = ik_riscv_fault_cause_name(cause) && t != 4 && (t < 10 || t >= 32) &&
				((w[0] & BIT(32)) || !(w[0] & (GENMASK(31, 12) | BIT(33)))) &&
				(t || !(w[0] & (GENMASK(63, 40) | BIT(32))));
			IK_REQUIRE((ik_riscv_fault_decode(w, &f) == 0) == legal);
			if (legal) {
				uint64_t back[4];

				IK_REQUIRE(ik_riscv_fault_encode(&f, back) == 0);
				IK_REQUIRE(!memcmp(back, w, sizeof(w)));
			}
		}
	}
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("cmd-riscv");
	TCase *tc = tcase_create("riscv");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fields_at_spec_positions);
	tcase_add_test(tc, random_words_roundtrip_and_reserved_bits_rejected);
	tcase_add_test(tc, encoder_rejects_bad_commands_and_leaves_w_alone);
	tcase_add_test(tc, cmdq_format_sync_is_iofence_with_av_and_nop_is_a_bare_fence);
	tcase_add_test(tc, queue_of_riscv_commands_through_the_software_consumer);
	tcase_add_test(tc, fault_record_fields_at_spec_positions);
	tcase_add_test(tc, fault_record_reserved_values_are_refused);
	suite_add_tcase(s, tc);
	return s;
}
