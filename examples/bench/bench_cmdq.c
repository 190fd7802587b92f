/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench cmdq: command-queue throughput and per-request latency.
 *
 * Producers issue pre-encoded SMMUv3 TLBI_NH_VA commands in requests of
 * `batch` commands (with IK_CMDQ_SYNC: a sync per request, waited for); one
 * consumer thread drains like an SMMU (ik_cmdq_sw_consume: classify every
 * entry, write sync completions, advance CONS).  Designs:
 *   shared   one ik_cmdq for all producers
 *   percpu   an ik_cmdq_set with one queue per producer (ECMDQ/VCMDQ style),
 *            one consumer serving them all round-robin
 *   ck_ring  Concurrency Kit's MPSC ring of 16-byte entries (if built with
 *            libck), same consumer work per entry
 *   rte_ring DPDK's ring, multi-producer bulk enqueue of 16-byte elements (if
 *            built with libdpdk)
 *   linux    a Linux-style producer: the design of the Linux SMMUv3 driver's
 *            arm_smmu_cmdq_issue_cmdlist() (Will Deacon's lock-free command
 *            queue, Linux 5.5+), written here from its description: one
 *            cmpxchg on {prod, cons} with an OWNED flag in prod, a valid
 *            bitmap toggled per lap, the owner waits for the previous owner,
 *            gathers every reservation made since, waits for their valid bits
 *            and writes PROD; a CMD_SYNC's MSI writes 0 over its own entry
 *            (polled), under a shared/exclusive counter lock that keeps the
 *            producers' view of CONS from moving while syncs are polled.  Its
 *            waits spin (cpu_relax), as the kernel's do.  Same consumer.
 * The consumer thread plays the device: it polls for --consumer-spin ns
 * after the last entry it found (default 20 us), then yields the CPU
 * between polls; cstl/req (consumer_stalls_per_req) counts its yields that
 * came back after more than 20 us - it was descheduled, and whatever was
 * published meanwhile waited for it - per request.
 * A request's latency is the time of its issue call (with sync: until the
 * consumer passed it); p99.9ny (noyield_p999_ns, with noyield_requests and
 * noyield_p50_ns) is the p99.9 of our requests whose waits never called
 * IK_ENV_YIELD(), to tell the library's waiter from the rest of the tail.  cas_retries_per_cmd counts failed reservation CASes
 * (ours only); cas_retries_per_req and yields_per_req count the failed CASes
 * and the waiters' IK_ENV_YIELD() calls (ik_cmdq_get_wait_stats) per request
 * (ours only).  --spin NS sets every queue's spin bound (ik_cmdq_set_spin;
 * 1 = yield right after the untimed spin, the policy before issue 25).  The "shared core" rows pin every producer to CPU 0 (and the
 * consumer to CPU 1) to show what preemption inside an insertion does.
 *
 * Before the queue rows, the cost of encoding one command as the queue and
 * the planners do it, in ns of this thread's CPU time per call (median of 5
 * runs of 2^20 calls; CPU time, so that a busy machine's preemptions do not
 * count):
 *   cmd_sync_fmt   ik_cmdq_fmt_smmuv3.encode_sync, the sync every waiting
 *                  request writes
 *   cmd_sync       ik_smmu_cmd_encode of the same CMD_SYNC
 *   tlbi_nh_va     ik_smmu_cmd_encode of a TLBI_NH_VA (what the planners emit)
 */
#define _GNU_SOURCE
#include "config.h"
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include "bench.h"

#ifdef HAVE_CK
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wcast-qual"
#include <ck_ring.h>
#pragma GCC diagnostic pop
#endif
#ifdef HAVE_DPDK
#include <rte_ring.h>
#include <rte_ring_elem.h>
#endif

#define MAXP 16
#define MAXBATCH 256
#define CSTALL_NS 20000	/* a consumer yield this long was a deschedule */
#define CSPIN_DEFAULT_NS 20000	/* --consumer-spin */

enum design { D_SHARED, D_PERCPU, D_CK, D_RTE, D_LINUX, D_N };
static const char *const design_name[] = { "shared", "percpu", "ck_ring", "rte_ring", "linux" };

struct entry {
	uint64_t w[2];
};

#ifdef HAVE_CK
CK_RING_PROTOTYPE(ikent, entry)
#endif

/* ---- the Linux-style producer (see the top comment) ---- */

#define LX_OWNED (1u << 31)	/* in prod: an owner is gathering */
#define LX_DMA 0x80000000ull	/* the ring's device address, for the MSIs */

struct lx_q {
	uint64_t llq;		/* prod (low half) | cons (high half), index|wrap form */
	int lock;		/* > 0: shared holders; INT_MIN + k: exclusive */
	uint32_t owner_prod;
	uint32_t log2, wrapmask;	/* wrapmask: 2 * entries - 1 */
	uint64_t *valid;	/* one bit per entry, toggled each lap */
	uint8_t *ring;
	struct ik_cmdq_sw *sw;
};

static uint32_t lx_prod(uint64_t v) { return (uint32_t)v; }
static uint32_t lx_cons(uint64_t v) { return (uint32_t)(v >> 32); }
static uint64_t lx_val(uint32_t prod, uint32_t cons) { return prod | (uint64_t)cons << 32; }
static uint32_t lx_idx(const struct lx_q *q, uint32_t p) { return p & ((1u << q->log2) - 1); }
static uint32_t lx_wrp(const struct lx_q *q, uint32_t p) { return p & (1u << q->log2); }

static uint32_t lx_inc(const struct lx_q *q, uint32_t p, uint32_t n)
{
	return (p & LX_OWNED) | (((p & q->wrapmask) + n) & q->wrapmask);
}

static bool lx_has_space(const struct lx_q *q, uint64_t v, uint32_t n)
{
	uint32_t p = lx_prod(v) & q->wrapmask, c = lx_cons(v) & q->wrapmask, space;

	if (lx_wrp(q, p) == lx_wrp(q, c))
		space = (1u << q->log2) - (lx_idx(q, p) - lx_idx(q, c));
	else
		space = lx_idx(q, c) - lx_idx(q, p);
	return space >= n;
}

static void lx_set_cons(struct lx_q *q, uint32_t cons)
{
	uint64_t v = __atomic_load_n(&q->llq, __ATOMIC_RELAXED);

	while (!__atomic_compare_exchange_n(&q->llq, &v, lx_val(lx_prod(v), cons), true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

static void lx_shared_lock(struct lx_q *q)
{
	int v;

	if (__atomic_fetch_add(&q->lock, 1, __ATOMIC_ACQUIRE) >= 0)
		return;
	do {
		while ((v = __atomic_load_n(&q->lock, __ATOMIC_RELAXED)) < 0)
			ik_cpu_relax();
	} while (!__atomic_compare_exchange_n(&q->lock, &v, v + 1, false, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
}

/* Toggle the valid bits of [from, to) (index|wrap form). */
static void lx_set_valid(struct lx_q *q, uint32_t from, uint32_t to)
{
	while ((from & q->wrapmask) != (to & q->wrapmask)) {
		uint32_t i = lx_idx(q, from), span = 64 - i % 64, left;
		uint64_t mask;

		left = (to - from) & q->wrapmask;
		if (span > left)
			span = left;
		mask = (span == 64 ? ~0ull : ((1ull << span) - 1)) << (i % 64);
		__atomic_fetch_xor(&q->valid[i / 64], mask, __ATOMIC_RELEASE);
		from = lx_inc(q, from, span);
	}
}

/* Wait until [from, to) are all valid for their lap. */
static void lx_poll_valid(struct lx_q *q, uint32_t from, uint32_t to)
{
	while ((from & q->wrapmask) != (to & q->wrapmask)) {
		uint32_t i = lx_idx(q, from), span = 64 - i % 64, left;
		uint64_t mask, want;

		left = (to - from) & q->wrapmask;
		if (span > left)
			span = left;
		mask = (span == 64 ? ~0ull : ((1ull << span) - 1)) << (i % 64);
		want = lx_wrp(q, from) ? 0 : mask;
		while ((__atomic_load_n(&q->valid[i / 64], __ATOMIC_ACQUIRE) & mask) != want)
			ik_cpu_relax();
		from = lx_inc(q, from, span);
	}
}

/* Wait for space: one waiter refreshes the shared CONS from the register
 * under the exclusive lock; the others spin on the shared view. */
static uint64_t lx_wait_space(struct lx_q *q, uint64_t v, uint32_t n)
{
	int zero = 0;

	if (__atomic_compare_exchange_n(&q->lock, &zero, INT_MIN, false, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED)) {
		uint32_t cerror;

		lx_set_cons(q, ik_cmdq_sw_regs.read_cons(q->sw, &cerror));
		__atomic_store_n(&q->lock, 0, __ATOMIC_RELEASE);
		return __atomic_load_n(&q->llq, __ATOMIC_ACQUIRE);
	}
	while (v = __atomic_load_n(&q->llq, __ATOMIC_ACQUIRE), !lx_has_space(q, v, n))
		ik_cpu_relax();
	return v;
}

static int lx_issue(struct lx_q *q, const struct entry *cmds, unsigned n, bool sync,
		    uint64_t *cas_retries)
{
	uint64_t v = __atomic_load_n(&q->llq, __ATOMIC_RELAXED), head;
	uint32_t prod, end, sp = 0;
	bool owner;

	/* 1. Reserve n (+ sync) entries; the first to set OWNED owns. */
	for (;;) {
		while (!lx_has_space(q, v, n + sync))
			v = lx_wait_space(q, v, n + sync);
		head = lx_val(lx_inc(q, lx_prod(v), n + sync) | LX_OWNED, lx_cons(v));
		if (__atomic_compare_exchange_n(&q->llq, &v, head, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		(*cas_retries)++;
	}
	owner = !(lx_prod(v) & LX_OWNED);
	prod = lx_prod(v) & ~LX_OWNED;
	end = lx_prod(head) & ~LX_OWNED;
	/* 2. Write the commands, and the sync whose MSI zeroes its own entry;
	 * the shared lock first, so that CONS cannot lap it unnoticed. */
	for (unsigned i = 0; i < n; i++)
		memcpy(q->ring + (size_t)lx_idx(q, lx_inc(q, prod, i)) * 16, cmds[i].w, 16);
	if (sync) {
		uint64_t w[2];

		sp = lx_inc(q, prod, n);
		ik_cmdq_fmt_smmuv3.encode_sync(w, LX_DMA + (uint64_t)lx_idx(q, sp) * 16, 0);
		memcpy(q->ring + (size_t)lx_idx(q, sp) * 16, w, 16);
		lx_shared_lock(q);
	}
	/* 3. Mark them valid (release: the entries first). */
	lx_set_valid(q, prod, end);
	/* 4. The owner: after the previous owner, take everything reserved so
	 * far, wait for it to be valid, write PROD, hand over. */
	if (owner) {
		uint32_t all;

		while (__atomic_load_n(&q->owner_prod, __ATOMIC_ACQUIRE) != prod)
			ik_cpu_relax();
		all = (uint32_t)__atomic_fetch_and(&q->llq, ~(uint64_t)LX_OWNED, __ATOMIC_ACQ_REL) &
		      ~LX_OWNED;
		lx_poll_valid(q, prod, all);
		ik_cmdq_sw_regs.write_prod(q->sw, all & q->wrapmask);
		__atomic_store_n(&q->owner_prod, all, __ATOMIC_RELEASE);
	}
	/* 5. Wait for the sync's MSI (its entry's first word becomes 0), then
	 * the last shared holder publishes what it knows of CONS. */
	if (sync) {
		uint32_t *word = (uint32_t *)(void *)(q->ring + (size_t)lx_idx(q, sp) * 16);

		while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != 0)
			ik_cpu_relax();
		/* Every sync before ours was valid, so its waiter holds the
		 * lock too: alone, nobody polls an entry before ours. */
		if (__atomic_load_n(&q->lock, __ATOMIC_ACQUIRE) == 1)
			lx_set_cons(q, lx_inc(q, sp, 1) & q->wrapmask);
		__atomic_fetch_sub(&q->lock, 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/* A sync marker for the reference rings: opcode CMD_SYNC, w[1] = address of
 * the producer's completion flag (the consumer sets it). */
struct run {
	enum design d;
	unsigned producers, batch, log2;
	bool sync, pin, hist;
	uint64_t duration_ns;
	uint64_t spin_ns;	/* --spin, 0: the library's default */
	uint64_t cspin_ns;	/* --consumer-spin */
	/* ours */
	struct ik_cmdq_set *set;
	struct ik_cmdq_sw sw[MAXP];
	void *rings[MAXP];
	unsigned nq;
	/* references */
	struct lx_q lx;
#ifdef HAVE_CK
	struct ck_ring ck;
	struct entry *ckbuf;
#endif
#ifdef HAVE_DPDK
	struct rte_ring *rte;
#endif
	int stop_producers, stop_consumer;
	int ready;
	uint64_t fail;
	uint64_t cstalls;	/* the consumer's idle yields that took > CSTALL_NS */
	/* results */
	double cps;
	uint64_t p999;
};

struct prod {
	struct run *r;
	unsigned id;
	pthread_t th;
	struct bench_samples lat;
	struct bench_samples lat_ny;	/* ours: the requests whose waits never yielded */
	struct ik_cmdq_counters cnt;
	uint64_t cmds, t_end;
	int err;
};

static void pin_to(unsigned cpu)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n <= 0 || cpu >= (unsigned)n)
		cpu = 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

#if defined(HAVE_CK) || defined(HAVE_DPDK)
/* The consumer's per-entry work for the reference rings: what the software
 * consumer does for ours (classify, complete a sync). */
static void ref_consume(const struct entry *e)
{
	struct ik_cmdq_sync_info si;

	if (ik_cmdq_fmt_smmuv3.classify(e->w, &si) == IK_CMDQ_KIND_SYNC && e->w[1])
		__atomic_store_n((int *)(uintptr_t)e->w[1], 1, __ATOMIC_RELEASE);
}
#endif

static void *consumer(void *arg)
{
	struct run *r = arg;
	uint64_t last = bench_now_ns();

	if (r->pin)
		pin_to(1);
	while (!__atomic_load_n(&r->stop_consumer, __ATOMIC_ACQUIRE)) {
		int got = 0;

		switch (r->d) {
		case D_SHARED:
		case D_PERCPU:
		case D_LINUX:
			for (unsigned i = 0; i < r->nq; i++) {
				int n = ik_cmdq_sw_consume(&r->sw[i], 4096);

				if (n < 0)
					__atomic_store_n(&r->fail, 1, __ATOMIC_RELAXED);
				got += n > 0 ? n : 0;
			}
			break;
		case D_CK:
#ifdef HAVE_CK
			for (struct entry e; got < 4096 && CK_RING_DEQUEUE_MPSC(ikent, &r->ck, r->ckbuf, &e); got++)
				ref_consume(&e);
#endif
			break;
		case D_RTE:
#ifdef HAVE_DPDK
		{
			struct entry e[64];
			unsigned n = rte_ring_sc_dequeue_burst_elem(r->rte, e, sizeof(e[0]), 64, NULL);

			for (unsigned i = 0; i < n; i++)
				ref_consume(&e[i]);
			got = (int)n;
		}
#endif
			break;
		case D_N:
			break;
		}
		if (got) {
			if (r->cspin_ns)
				last = bench_now_ns();
		} else if (r->cspin_ns && bench_now_ns() - last < r->cspin_ns) {
			/* Idle for less than --consumer-spin: poll on, as a
			 * device does, rather than give the CPU away between
			 * one request and the next. */
			ik_cpu_relax();
		} else {
			uint64_t t = bench_now_ns();

			sched_yield();
			/* An idle yield that comes back late: this thread (the
			 * simulated device) was descheduled, and whatever a
			 * producer published meanwhile waited for it. */
			if (bench_now_ns() - t > CSTALL_NS)
				r->cstalls++;
		}
	}
	return NULL;
}

static void *producer(void *arg)
{
	struct prod *p = arg;
	struct run *r = p->r;
	struct entry cmds[MAXBATCH + 1];
	struct ik_cmdq *q = NULL;
	int done_flag;

	if (r->pin)
		pin_to(0);
	for (unsigned i = 0; i < r->batch; i++) {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_SMMU_CMD_TLBI_NH_VA;
		c.asid = (uint16_t)p->id;
		c.addr = (uint64_t)i << 12;
		ik_smmu_cmd_encode(&c, cmds[i].w);
	}
	if (r->d == D_SHARED || r->d == D_PERCPU)
		q = ik_cmdq_set_queue(r->set, r->d == D_SHARED ? 0 : p->id % r->nq);
	__atomic_add_fetch(&r->ready, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE) <= (int)r->producers)
		sched_yield();
	while (!__atomic_load_n(&r->stop_producers, __ATOMIC_RELAXED)) {
		uint64_t t0 = bench_now_ns(), dt;
		unsigned n = r->batch;
		bool yielded = false;

		if (q) {
			struct ik_cmdq_wait_stats w0, w1;

			(void)ik_cmdq_get_wait_stats(q, &w0);
			p->err = ik_cmdq_issue_ex(q, cmds, n, r->sync ? IK_CMDQ_SYNC : 0, &p->cnt);
			if (p->err)
				break;
			(void)ik_cmdq_get_wait_stats(q, &w1);
			/* With one producer per queue the queue's yields are this
			 * request's; with more, another's may count here too. */
			yielded = w1.yields != w0.yields;
		} else if (r->d == D_LINUX) {
			p->err = lx_issue(&r->lx, cmds, n, r->sync, &p->cnt.cas_retries);
			if (p->err)
				break;
		} else {
			unsigned total = n;

			if (r->sync) {
				/* The sync marker: CMD_SYNC whose w[1] points at our flag. */
				done_flag = 0;
				cmds[n].w[0] = IK_SMMU_CMD_SYNC;
				cmds[n].w[1] = (uint64_t)(uintptr_t)&done_flag;
				total++;
			}
#ifdef HAVE_CK
			if (r->d == D_CK) {
				for (unsigned i = 0; i < total; i++)
					while (!CK_RING_ENQUEUE_MPSC(ikent, &r->ck, r->ckbuf, &cmds[i]))
						sched_yield(); /* full */
			}
#endif
#ifdef HAVE_DPDK
			if (r->d == D_RTE) {
				while (!rte_ring_mp_enqueue_bulk_elem(r->rte, cmds, sizeof(cmds[0]), total, NULL))
					sched_yield(); /* full */
			}
#endif
			if (r->sync)
				while (!__atomic_load_n(&done_flag, __ATOMIC_ACQUIRE))
					sched_yield();
		}
		dt = bench_now_ns() - t0;
		bench_samples_add(&p->lat, dt);
		if (q && !yielded)
			bench_samples_add(&p->lat_ny, dt);
		p->cmds += n;
	}
	p->t_end = bench_now_ns();
	return NULL;
}

/* The queues of design r->d.  0, or 1 on a failure. */
static int run_setup(struct run *r)
{
	struct ik_cmdq_config cfgs[MAXP];

	r->nq = 0;
	r->set = NULL;
	if (r->d == D_LINUX) {
		struct ik_cmdq_sw_config sc;
		size_t rsz = (size_t)16 << r->log2;

		if (posix_memalign(&r->rings[0], 64, rsz))
			return 1;
		memset(r->rings[0], 0, rsz);
		r->nq = 1;
		memset(&sc, 0, sizeof(sc));
		sc.fmt = &ik_cmdq_fmt_smmuv3;
		sc.log2_entries = r->log2;
		sc.ring = r->rings[0];
		sc.ring_dma = LX_DMA;
		if (ik_cmdq_sw_init(&r->sw[0], &sc))
			return 1;
		memset(&r->lx, 0, sizeof(r->lx));
		r->lx.log2 = r->log2;
		r->lx.wrapmask = (2u << r->log2) - 1;
		r->lx.ring = r->rings[0];
		r->lx.sw = &r->sw[0];
		r->lx.valid = calloc(((size_t)1 << r->log2) / 64 + 1, sizeof(uint64_t));
		return r->lx.valid ? 0 : 1;
	}
	if (r->d == D_SHARED || r->d == D_PERCPU) {
		r->nq = r->d == D_SHARED ? 1 : r->producers;
		for (unsigned i = 0; i < r->nq; i++) {
			struct ik_cmdq_sw_config sc;
			size_t rsz = (size_t)16 << r->log2;

			if (posix_memalign(&r->rings[i], 64, rsz))
				return 1;
			memset(r->rings[i], 0, rsz);
			memset(&sc, 0, sizeof(sc));
			sc.fmt = &ik_cmdq_fmt_smmuv3;
			sc.log2_entries = r->log2;
			sc.ring = r->rings[i];
			if (ik_cmdq_sw_init(&r->sw[i], &sc))
				return 1;
			memset(&cfgs[i], 0, sizeof(cfgs[i]));
			cfgs[i].fmt = &ik_cmdq_fmt_smmuv3;
			cfgs[i].log2_entries = r->log2;
			cfgs[i].flags = IK_CMDQ_CFG_MSI;
			cfgs[i].ring = r->rings[i];
			cfgs[i].regs = &ik_cmdq_sw_regs;
			cfgs[i].regs_ctx = &r->sw[i];
			cfgs[i].timeout_ns = 10000000000ull;
		}
		if (ik_cmdq_set_create(r->nq, cfgs, &r->set))
			return 1;
		if (r->spin_ns)
			for (unsigned i = 0; i < r->nq; i++)
				(void)ik_cmdq_set_spin(ik_cmdq_set_queue(r->set, i), r->spin_ns);
	}
#ifdef HAVE_CK
	if (r->d == D_CK) {
		r->ckbuf = calloc((size_t)1 << r->log2, sizeof(struct entry));
		if (!r->ckbuf)
			return 1;
		ck_ring_init(&r->ck, 1u << r->log2);
	}
#endif
#ifdef HAVE_DPDK
	if (r->d == D_RTE) {
		ssize_t sz = rte_ring_get_memsize_elem(sizeof(struct entry), 1u << r->log2);

		if (sz < 0 || posix_memalign((void **)&r->rte, 128, (size_t)sz) ||
		    rte_ring_init(r->rte, "ikbench", 1u << r->log2, RING_F_SC_DEQ))
			return 1;
	}
#endif
	return 0;
}

static void run_teardown(struct run *r)
{
	ik_cmdq_set_destroy(r->set);
	r->set = NULL;
	if (r->d == D_LINUX)
		free(r->lx.valid);
	for (unsigned i = 0; i < r->nq; i++)
		free(r->rings[i]);
#ifdef HAVE_CK
	if (r->d == D_CK)
		free(r->ckbuf);
#endif
#ifdef HAVE_DPDK
	if (r->d == D_RTE)
		free(r->rte);
#endif
}

/* The consumer and the producers, for r->duration_ns from the moment every
 * producer is ready (*t0).  0; 1 when the final sync failed; -1 when a
 * thread could not start (the run is abandoned, as it always was). */
static int run_threads(struct run *r, struct prod *ps, uint64_t *t0)
{
	pthread_t cth;
	int rc = 0;

	r->stop_producers = r->stop_consumer = 0;
	r->ready = 0;
	r->fail = 0;
	r->cstalls = 0;
	if (pthread_create(&cth, NULL, consumer, r))
		return -1;
	for (unsigned i = 0; i < r->producers; i++) {
		ps[i].r = r;
		ps[i].id = i;
		if (bench_samples_init(&ps[i].lat, 1u << 21) ||
		    bench_samples_init(&ps[i].lat_ny, r->set ? 1u << 21 : 0) ||
		    pthread_create(&ps[i].th, NULL, producer, &ps[i]))
			return -1;
	}
	while (__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE) < (int)r->producers)
		sched_yield();
	*t0 = bench_now_ns();
	__atomic_add_fetch(&r->ready, 1, __ATOMIC_ACQ_REL);
	while (bench_now_ns() - *t0 < r->duration_ns)
		usleep(2000);
	__atomic_store_n(&r->stop_producers, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < r->producers; i++)
		pthread_join(ps[i].th, NULL);
	if (r->set && ik_cmdq_set_sync_all(r->set))
		rc = 1;
	__atomic_store_n(&r->stop_consumer, 1, __ATOMIC_RELEASE);
	pthread_join(cth, NULL);
	return rc;
}

/* What one run measured. */
struct run_result {
	struct bench_stats st;
	double cps, rpc, dpc;	/* commands/s, CAS retries and doorbells per command */
	double rpr, ypr;	/* CAS retries and yields per request */
	struct bench_stats ny;	/* ours: requests whose waits did not yield */
	double spr;		/* consumer stalls per request */
	int rc;
};

/* Add up the producers' counts and latencies (freeing them) and the
 * queues' doorbells. */
static void run_collect(struct run *r, struct prod *ps, uint64_t t0, struct run_result *res)
{
	uint64_t cmds = 0, tend = 0, retries = 0, doorbells = 0, yields = 0;
	struct bench_samples all;
	double secs;

	bench_samples_init(&all, 0);
	for (unsigned i = 0; i < r->producers; i++) {
		cmds += ps[i].cmds;
		retries += ps[i].cnt.cas_retries;
		if (ps[i].t_end > tend)
			tend = ps[i].t_end;
		if (ps[i].err)
			res->rc = 1;
		all.cap += ps[i].lat.n;
	}
	free(all.v);
	all.v = malloc((all.cap ? all.cap : 1) * sizeof(*all.v));
	for (unsigned i = 0; i < r->producers; i++) {
		for (size_t k = 0; k < ps[i].lat.n; k++)
			bench_samples_add(&all, ps[i].lat.v[k]);
		bench_samples_free(&ps[i].lat);
	}
	bench_stats_compute(&all, &res->st);
	bench_samples_free(&all);
	bench_samples_init(&all, 0);
	for (unsigned i = 0; i < r->producers; i++)
		all.cap += ps[i].lat_ny.n;
	free(all.v);
	all.v = malloc((all.cap ? all.cap : 1) * sizeof(*all.v));
	for (unsigned i = 0; i < r->producers; i++) {
		for (size_t k = 0; all.v && k < ps[i].lat_ny.n; k++)
			bench_samples_add(&all, ps[i].lat_ny.v[k]);
		bench_samples_free(&ps[i].lat_ny);
	}
	bench_stats_compute(&all, &res->ny);
	bench_samples_free(&all);
	for (unsigned i = 0; r->set && i < r->nq; i++) {
		struct ik_cmdq_stats qs;
		struct ik_cmdq_wait_stats ws;

		ik_cmdq_get_stats(ik_cmdq_set_queue(r->set, i), &qs);
		doorbells += qs.doorbells;
		if (!ik_cmdq_get_wait_stats(ik_cmdq_set_queue(r->set, i), &ws))
			yields += ws.yields;
	}
	secs = (double)(tend - t0) / 1e9;
	res->cps = secs > 0 ? (double)cmds / secs : 0;
	res->rpc = cmds ? (double)retries / (double)cmds : 0;
	res->dpc = cmds ? (double)doorbells / (double)cmds : 0;
	res->rpr = res->st.n ? (double)retries / (double)res->st.n : 0;
	res->ypr = res->st.n ? (double)yields / (double)res->st.n : 0;
	res->spr = res->st.n ? (double)r->cstalls / (double)res->st.n : 0;
	if (r->fail)
		res->rc = 1;
}

static void run_report(const struct run *r, const struct run_result *res,
		       const struct bench_opts *o)
{
	const struct bench_stats *st = &res->st;

	if (o->json) {
		printf("{\"bench\":\"cmdq\",\"queue\":\"%s\",\"producers\":%u,\"batch\":%u,"
		       "\"sync\":%s,\"shared_core\":%s,\"cmds_per_s\":%.0f,\"p50_ns\":%llu,"
		       "\"p99_ns\":%llu,\"p999_ns\":%llu,\"cas_retries_per_cmd\":%.4f,"
		       "\"doorbells_per_cmd\":%.4f,\"requests\":%zu,\"cas_retries_per_req\":%.4f,"
		       "\"yields_per_req\":%.4f,\"noyield_requests\":%zu,\"noyield_p50_ns\":%llu,"
		       "\"noyield_p999_ns\":%llu,\"consumer_stalls_per_req\":%.6f}\n",
		       design_name[r->d], r->producers, r->batch, r->sync ? "true" : "false",
		       r->pin ? "true" : "false", res->cps, (unsigned long long)st->p50,
		       (unsigned long long)st->p99, (unsigned long long)st->p999, res->rpc,
		       r->set ? res->dpc : 0.0, st->n, res->rpr, res->ypr, res->ny.n,
		       (unsigned long long)res->ny.p50, (unsigned long long)res->ny.p999, res->spr);
	} else {
		printf("%-9s %4u%s %6u %5s %12.0f %9llu %9llu %10llu %9.4f %9.4f %9.4f %9.4f %10llu "
		       "%9.5f\n",
		       design_name[r->d], r->producers, r->pin ? "*" : " ", r->batch,
		       r->sync ? "yes" : "no", res->cps, (unsigned long long)st->p50,
		       (unsigned long long)st->p99, (unsigned long long)st->p999, res->rpc,
		       r->set ? res->dpc : 0.0, res->rpr, res->ypr,
		       (unsigned long long)res->ny.p999, res->spr);
		if (r->hist)
			bench_print_hist(stdout, st);
	}
	fflush(stdout);
}

/* One configuration: set up, run, report, tear down.  0, or 1. */
static int run_one(struct run *r, const struct bench_opts *o)
{
	struct prod ps[MAXP];
	struct run_result res;
	uint64_t t0 = 0;

	memset(ps, 0, sizeof(ps));
	memset(&res, 0, sizeof(res));
	if (run_setup(r))
		return 1;
	res.rc = run_threads(r, ps, &t0);
	if (res.rc < 0)
		return 1;
	run_collect(r, ps, t0, &res);
	r->cps = res.cps;
	r->p999 = res.st.p999;
	run_report(r, &res, o);
	run_teardown(r);
	if (res.rc)
		fprintf(stderr, "iommukit-bench cmdq: %s run failed\n", design_name[r->d]);
	return res.rc;
}

static bool parse_list(const char *s, unsigned *out, unsigned *n, unsigned max, unsigned lo,
		       unsigned hi)
{
	uint64_t v[256];
	int k = bench_parse_list_u64(s, v, (int)(max < 256 ? max : 256));

	if (k <= 0)
		return false;
	for (int i = 0; i < k; i++) {
		if (v[i] < lo || v[i] > hi)
			return false;
		out[i] = (unsigned)v[i];
	}
	*n = (unsigned)k;
	return true;
}

enum { CMDQ_PRODUCERS = BENCH_OPT_OWN, CMDQ_BATCH, CMDQ_MS, CMDQ_LOG2, CMDQ_NO_SHARED_CORE,
       CMDQ_SPIN, CMDQ_PIN, CMDQ_QUEUE, CMDQ_SYNC, CMDQ_HIST,
       CMDQ_CSPIN };

static const struct option cmdq_opts[] = {
	BENCH_OPTS_COMMON, BENCH_OPTS_JSON, BENCH_OPTS_QUICK, BENCH_OPTS_THREADS,
	{ "producers", required_argument, NULL, CMDQ_PRODUCERS },
	{ "batch", required_argument, NULL, CMDQ_BATCH },
	{ "ms", required_argument, NULL, CMDQ_MS },
	{ "log2", required_argument, NULL, CMDQ_LOG2 },
	{ "no-shared-core", no_argument, NULL, CMDQ_NO_SHARED_CORE },
	{ "spin", required_argument, NULL, CMDQ_SPIN },
	{ "pin", no_argument, NULL, CMDQ_PIN },
	{ "queue", required_argument, NULL, CMDQ_QUEUE },
	{ "sync", required_argument, NULL, CMDQ_SYNC },
	{ "hist", no_argument, NULL, CMDQ_HIST },
	{ "consumer-spin", required_argument, NULL, CMDQ_CSPIN },
	BENCH_OPTS_END,
};

static void cmdq_help(void)
{
	printf("usage: iommukit-bench cmdq [--producers L] [--batch L] [--ms N]\n"
	       "                           [--log2 N] [--no-shared-core] [--json] [--quick]\n"
	       "                           [--threads N] [--spin NS] [--pin] [--queue L]\n"
	       "                           [--sync no|yes] [--hist] [--consumer-spin NS]\n"
	       "  L: comma-separated list (producers 1..%d, batch 1..%d);\n"
	       "  --ms: milliseconds per configuration (default 300, quick 60);\n"
	       "  --log2: ring entries as a power of two (default 10);\n"
	       "  --threads N: producers N (at most %d), unless --producers;\n"
	       "  --spin NS: every queue's spin bound before yielding (ik_cmdq_set_spin;\n"
	       "             1: yield at once, as before issue 25; default: the library's);\n"
	       "  --pin: every row with the producers on CPU 0 and the consumer on CPU 1\n"
	       "         (a busy machine otherwise may put the consumer on a producer's CPU);\n"
	       "  --queue L: only these designs (comma-separated names, as below);\n"
	       "  --sync no|yes: only the rows without / with a waited-for sync;\n"
	       "  --hist: each row's log2 latency histogram (table only);\n"
	       "  --consumer-spin NS: the consumer thread (the simulated device) polls on\n"
	       "             for NS after its last entry before it yields (default 20000;\n"
	       "             0: yield whenever it finds nothing, as before).\n"
	       "  p99.9ny: p99.9 of the requests whose waits never yielded (ours);\n"
	       "  cstl/req: the consumer thread's idle yields that came back after\n"
	       "            more than 20 us (it was descheduled), per request.\n"
	       "  Designs: shared, percpu, linux (a Linux-style producer), and\n"
	       "  ck_ring / rte_ring when built in.\n",
	       MAXP, MAXBATCH, MAXP);
}

/* What the command line asked for. */
struct cmdq_cli {
	unsigned prods[MAXP], nprods;
	unsigned batches[16], nbatches;
	uint64_t ms, log2, spin, cspin;
	bool designs[D_N], shared_core, pin;
	bool syncs[2];		/* the rows without / with a sync */
	bool hist;		/* --hist */
};

/* --queue: a comma-separated list of design names, each built in, into
 * on[] (the others off).  false for an empty list or an unknown name. */
static bool parse_designs(const char *s, bool *on)
{
	bool want[D_N] = { false };
	bool any = false;

	while (*s) {
		size_t len = strcspn(s, ",");
		int d;

		for (d = 0; d < D_N; d++)
			if (strlen(design_name[d]) == len && !strncmp(s, design_name[d], len))
				break;
		if (d == D_N || !on[d])
			return false; /* unknown, or not built in */
		want[d] = any = true;
		s += len;
		if (*s == ',' && *++s == '\0')
			return false;
	}
	if (!any)
		return false;
	memcpy(on, want, sizeof(want));
	return true;
}

/* Parse the command line into *c: -1 to run, else the exit status. */
static int cmdq_parse(int argc, char **argv, struct bench_opts *o, struct cmdq_cli *c)
{
	static const unsigned dprods[] = { 1, 2, 4 }, dbatches[] = { 1, 32, 64, 128, 256 };
	static const unsigned qbatches[] = { 1, 64, 256 };
	struct bench_parse p;
	int opt;

	memset(c, 0, sizeof(*c));
	memcpy(c->prods, dprods, sizeof(dprods));
	memcpy(c->batches, dbatches, sizeof(dbatches));
	c->log2 = 10;
	c->designs[D_SHARED] = c->designs[D_PERCPU] = c->designs[D_LINUX] = true;
#ifdef HAVE_CK
	c->designs[D_CK] = true;
#endif
#ifdef HAVE_DPDK
	c->designs[D_RTE] = true;
#endif
	c->shared_core = true;
	c->syncs[0] = c->syncs[1] = true;
	c->cspin = CSPIN_DEFAULT_NS;
	bench_parse_init(&p, "cmdq", cmdq_opts, cmdq_help, o, argc, argv);
	while ((opt = bench_next_opt(&p)) > 0) {
		switch (opt) {
		case CMDQ_PRODUCERS:
			if (!parse_list(optarg, c->prods, &c->nprods, MAXP, 1, MAXP))
				return bench_usage_error("cmdq", "--producers wants a list of 1..%d", MAXP);
			break;
		case CMDQ_BATCH:
			if (!parse_list(optarg, c->batches, &c->nbatches, 16, 1, MAXBATCH))
				return bench_usage_error("cmdq", "--batch wants a list of 1..%d", MAXBATCH);
			break;
		case CMDQ_MS:
			if (!bench_opt_range(&p, 1, 600000, &c->ms))
				return 2;
			break;
		case CMDQ_LOG2:
			if (!bench_opt_range(&p, 9, 20, &c->log2))
				return 2;
			break;
		case CMDQ_NO_SHARED_CORE:
			c->shared_core = false;
			break;
		case CMDQ_PIN:
			c->pin = true;
			break;
		case CMDQ_SPIN:
			if (!bench_opt_range(&p, 1, 10000000000ull, &c->spin))
				return 2;
			break;
		case CMDQ_CSPIN:
			if (!bench_opt_range(&p, 0, 1000000000ull, &c->cspin))
				return 2;
			break;
		case CMDQ_HIST:
			c->hist = true;
			break;
		case CMDQ_SYNC:
			if (strcmp(optarg, "no") && strcmp(optarg, "yes"))
				return bench_usage_error("cmdq", "--sync wants no or yes");
			c->syncs[0] = !strcmp(optarg, "no");
			c->syncs[1] = !c->syncs[0];
			break;
		case CMDQ_QUEUE:
			if (!parse_designs(optarg, c->designs))
				return bench_usage_error("cmdq", "--queue wants a list of designs (shared, "
							 "percpu, linux, ck_ring, rte_ring) built in");
			break;
		}
	}
	if (opt < 0)
		return p.status;
	/* Defaults of what was not given: --quick shortens, --threads picks
	 * the producer count. */
	if (!c->nprods && o->threads) {
		c->prods[0] = o->threads > MAXP ? MAXP : o->threads;
		c->nprods = 1;
	} else if (!c->nprods) {
		c->nprods = o->quick ? 2 : 3;
	}
	if (!c->nbatches && o->quick) {
		memcpy(c->batches, qbatches, sizeof(qbatches));
		c->nbatches = 3;
	} else if (!c->nbatches) {
		c->nbatches = 5;
	}
	if (!c->ms)
		c->ms = o->quick ? 60 : 300;
	return -1;
}

static void cmdq_intro(const struct cmdq_cli *c)
{
	printf("cmdq: SMMUv3 TLBI_NH_VA commands, one software consumer thread, ring of %u\n"
	       "entries; a request = one issue of `batch` commands (+ a waited-for sync);\n"
	       "latency per request in ns; * = all producers pinned to one CPU.\n",
	       1u << c->log2);
#ifndef HAVE_CK
	printf("note: ck_ring skipped (configure did not find libck / ck.pc)\n");
#endif
#ifndef HAVE_DPDK
	printf("note: rte_ring skipped (configure did not find libdpdk)\n");
#endif
}

static void cmdq_header(void)
{
	printf("\n%-9s %5s %6s %5s %12s %9s %9s %10s %9s %9s %9s %9s %10s %9s\n", "queue", "prod",
	       "batch", "sync", "cmds/s", "p50", "p99", "p99.9", "cas/cmd", "db/cmd", "cas/req",
	       "yld/req", "p99.9ny", "cstl/req");
}

/* Run one configuration; its commands/s and p99.9 into *cps, *p999 (if not
 * NULL).  0, or 1. */
static int cmdq_config(const struct bench_opts *o, const struct cmdq_cli *c, int d,
		       unsigned producers, unsigned batch, bool sync, bool pin, double *cps,
		       uint64_t *p999)
{
	struct run *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return 1;
	r->d = (enum design)d;
	r->producers = producers;
	r->batch = batch;
	r->sync = sync;
	r->pin = pin;
	r->hist = c->hist;
	r->log2 = (unsigned)c->log2;
	r->duration_ns = c->ms * 1000000ull;
	r->spin_ns = c->spin;
	r->cspin_ns = c->cspin;
	rc = run_one(r, o);
	if (cps)
		*cps = r->cps;
	if (p999)
		*p999 = r->p999;
	free(r);
	return rc;
}

/* ---- encode microbenchmark ---- */

enum { ENC_SYNC_FMT, ENC_SYNC, ENC_TLBI, ENC_N };
static const char *const enc_name[ENC_N] = { "cmd_sync_fmt", "cmd_sync", "tlbi_nh_va" };

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ns per call of encoder `k`, the median of 5 runs of `iters` calls. */
static double enc_time(int k, unsigned iters)
{
	uint64_t runs[5], sink = 0;
	struct ik_smmu_cmd c;

	memset(&c, 0, sizeof(c));
	if (k == ENC_TLBI) {
		c.op = IK_SMMU_CMD_TLBI_NH_VA;
		c.asid = 7;
		c.vmid = 3;
		c.leaf = 1;
	} else {
		c.op = IK_SMMU_CMD_SYNC;
		c.cs = IK_SMMU_SYNC_CS_IRQ;
		c.msh = 3;
		c.msiattr = 0xf;
	}
	for (int r = 0; r < 5; r++) {
		uint64_t t0 = thread_cpu_ns();

		for (unsigned i = 0; i < iters; i++) {
			uint64_t w[2];

			switch (k) {
			case ENC_SYNC_FMT:
				ik_cmdq_fmt_smmuv3.encode_sync(w, 0x80000000ull + ((uint64_t)i << 4), i);
				break;
			case ENC_SYNC:
				c.msidata = i;
				c.msiaddr = 0x80000000ull + ((uint64_t)i << 4);
				(void)ik_smmu_cmd_encode(&c, w);
				break;
			default:
				c.addr = (uint64_t)i << 12;
				(void)ik_smmu_cmd_encode(&c, w);
				break;
			}
			sink += w[0] ^ w[1];
		}
		runs[r] = thread_cpu_ns() - t0;
	}
	__asm__ __volatile__("" : : "r"(sink));
	qsort(runs, 5, sizeof(runs[0]), u64_cmp);
	return (double)runs[2] / iters;
}

static void cmdq_encode_micro(const struct bench_opts *o)
{
	unsigned iters = o->quick ? 1u << 16 : 1u << 20;

	if (!o->json)
		printf("encode ns per call (median of 5 x %u):", iters);
	for (int k = 0; k < ENC_N; k++) {
		double ns = enc_time(k, iters);

		if (o->json)
			printf("{\"bench\":\"cmdq\",\"encode\":\"%s\",\"ns_per_cmd\":%.2f}\n",
			       enc_name[k], ns);
		else
			printf("  %s %.1f", enc_name[k], ns);
	}
	if (!o->json)
		printf("\n");
	fflush(stdout);
}

/* One producer and two producers on one CPU: no collapse expected. */
static int cmdq_shared_core(const struct bench_opts *o, const struct cmdq_cli *c)
{
	double pinned[D_N][2][3] = { { { 0 } } };
	uint64_t pinned_p999[D_N][2][3] = { { { 0 } } };
	int rc = 0;

	for (int d = 0; d < D_N; d++) {
		if (!c->designs[d] || d == D_PERCPU)
			continue;
		for (unsigned np = 1; np <= 2; np++)
			for (int s = 0; s < 2; s++)
				rc |= cmdq_config(o, c, d, np, 64, s, true, &pinned[d][s][np],
						  &pinned_p999[d][s][np]);
	}
	if (o->json)
		return rc;
	printf("\ntwo producers on one CPU vs one (batch 64; target >= 0.9x):\n");
	for (int d = 0; d < D_N; d++) {
		if (!c->designs[d] || d == D_PERCPU)
			continue;
		for (int s = 0; s < 2; s++)
			printf("  %-9s sync %-3s  %.2fx   p99.9 %llu ns\n", design_name[d],
			       s ? "yes" : "no",
			       pinned[d][s][1] > 0 ? pinned[d][s][2] / pinned[d][s][1] : 0.0,
			       (unsigned long long)pinned_p999[d][s][2]);
	}
	return rc;
}

int bench_cmdq(int argc, char **argv, struct bench_opts *o)
{
	struct cmdq_cli c;
	int rc = cmdq_parse(argc, argv, o, &c);

	if (rc >= 0)
		return rc;
	rc = 0;
	if (!o->json)
		cmdq_intro(&c);
	cmdq_encode_micro(o);
	if (!o->json)
		cmdq_header();
	for (int d = 0; d < D_N; d++) {
		if (!c.designs[d])
			continue;
		for (unsigned pi = 0; pi < c.nprods; pi++) {
			if (d == D_PERCPU && c.prods[pi] == 1)
				continue; /* the same as shared */
			for (unsigned bi = 0; bi < c.nbatches; bi++)
				for (int s = 0; s < 2; s++)
					if (c.syncs[s])
						rc |= cmdq_config(o, &c, d, c.prods[pi], c.batches[bi],
								  s, c.pin, NULL, NULL);
		}
	}
	if (c.shared_core)
		rc |= cmdq_shared_core(o, &c);
	return rc;
}
