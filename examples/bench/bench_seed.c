/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench seed: the ECMDQ seed workload (issue 26) on the register-
 * level SMMUv3 model (<iommukit/softsmmu.h>) driven by the SMMUv3 driver
 * core, as the published ECMDQ comparison ran it on hardware.
 *
 * One thread per CPU (--threads, default: the CPUs this process may use),
 * each pinned to its CPU, loops for --time ms:
 *   map one 4 KiB page at an IOVA of its own (ik_pgtable_map, one stage-1
 *   table set shared by all threads, one StreamID, one ASID);
 *   table walk: the device translates it (ik_softiommu_translate through
 *   the stream the model attached from its STE and CD, an IOTLB miss and a
 *   walk every time, since the page was invalidated the round before);
 *   unmap it, and queue its TLBI_NH_VA (Leaf) in the thread's batch; when
 *   the batch holds `batch` commands, issue them and one CMD_SYNC with one
 *   ik_cmdq_issue(IK_CMDQ_SYNC) and wait (strict: an IOVA is reused only
 *   after the sync that invalidated it).
 * Modes:
 *   shared  the single command queue (SMMU_CMDQ), every thread's batches in
 *           it, for each --batches value (default 1,32,64,128,256);
 *   ecmdq   IK_SMMU_F_ECMDQ with one ECMDQ per thread: each thread issues on
 *           ik_cmdq_set_pick() (its CPU's queue), same batches.
 * The model consumes a queue on the thread that writes its PROD (the device
 * running when the doorbell rings), so the shared queue serialises the
 * consumption of every thread's commands as one SMMU command queue does, and
 * the ECMDQs consume in parallel, as the architecture allows.
 * Output: requests (map-walk-unmap rounds completed) in total and per
 * thread for each configuration, and the ratio of the best ECMDQ row to the
 * best shared row; --json: one object per row with exactly the fields mode,
 * batch, threads, requests, requests_per_thread.
 * A configuration that fails ends the run (exit 1) with one line on stderr:
 * the call that failed, what it returned, and the thread and its request
 * count (or "during setup").  The driver's wait bound is 60 s, not its
 * default 1 s: the model consumes on the bench's own threads, which a
 * loaded machine may deschedule for longer (see seed_setup()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <iommukit/softsmmu.h>
#include <iommukit/drv/smmuv3.h>
#include <iommukit/pgtable.h>
#include <iommukit/atomic.h>
#include "bench.h"

#define SEED_MAX_BATCHES 8
#define SEED_MAX_THREADS 256
#define SEED_SID 1u
#define SEED_ASID 5u
#define SEED_TIMEOUT_NS 60000000000ull /* 60 s: see seed_setup() */

enum { SEED_TIME = BENCH_OPT_OWN, SEED_BATCHES, SEED_NOPTS };

static const struct option seed_options[] = {
	BENCH_OPTS_COMMON, BENCH_OPTS_JSON, BENCH_OPTS_QUICK, BENCH_OPTS_THREADS,
	{ "time", required_argument, NULL, SEED_TIME },
	{ "batches", required_argument, NULL, SEED_BATCHES },
	BENCH_OPTS_END,
};

static void seed_help(void)
{
	printf("usage: iommukit-bench seed [--threads N] [--time MS] [--batches LIST] [--json] [--quick]\n"
	       "\n"
	       "The ECMDQ seed workload on the SMMUv3 model: one thread per CPU, each\n"
	       "looping map -> table walk -> unmap with strict invalidation, the TLBIs\n"
	       "issued in batches of B commands plus one CMD_SYNC.\n"
	       "  --threads N     threads (default: the CPUs this process may run on), 1..256\n"
	       "  --time MS       milliseconds per configuration (default 1000; --quick 100)\n"
	       "  --batches LIST  batch sizes, 1..256 each (default 1,32,64,128,256)\n"
	       "  --json          one row per configuration: mode, batch, threads, requests,\n"
	       "                  requests_per_thread\n");
}

struct seed_run {
	struct ik_softiommu *soft;
	struct ik_softsmmu *m;
	struct ik_mmio io;
	struct ik_dma_mem dma;
	struct ik_smmu *s;
	struct ik_pgtable *pt;
	struct ik_smmu_cdtab cdt;
	bool cdt_live;
	uint8_t *mem;	/* the pages every mapping points at */
	bool ecmdq;
	unsigned batch, threads;
	int go, stop;
	int failed;
	/* The first failure: what failed, its return value, on which thread
	 * (-1: setup), and the request count it had reached. */
	const char *why;
	int err;
	int who;
	uint64_t at;
};

struct seed_thread {
	struct seed_run *r;
	unsigned idx;
	uint64_t requests;
	pthread_t t;
};

static void seed_pin(unsigned i)
{
	cpu_set_t avail, set;
	unsigned n = 0;

	if (sched_getaffinity(0, sizeof(avail), &avail))
		return;
	for (unsigned c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &avail))
			continue;
		if (n++ == i % (unsigned)CPU_COUNT(&avail)) {
			CPU_ZERO(&set);
			CPU_SET(c, &set);
			(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
			return;
		}
	}
}

/* Record the first failure (later ones are consequences) and stop. */
static void seed_fail(struct seed_run *r, const char *why, int err, int who, uint64_t at)
{
	int zero = 0;

	if (ik_atomic_cas(&r->failed, &zero, 1, IK_MO_ACQ_REL, IK_MO_RELAXED)) {
		r->why = why;
		r->err = err;
		r->who = who;
		r->at = at;
	}
	ik_store_release(&r->stop, 1);
}

static void *seed_worker(void *arg)
{
	struct seed_thread *t = arg;
	struct seed_run *r = t->r;
	uint64_t base = (uint64_t)(t->idx + 1) << 30, w[256][2];
	uint64_t pa = (uint64_t)(uintptr_t)r->mem;
	unsigned n = 0, slot = 0;
	const char *why = NULL;
	struct ik_gather g;
	int err = 0;

	seed_pin(t->idx);
	while (!ik_load_acquire(&r->go))
		sched_yield();
	ik_gather_init(&g);
	while (!ik_load_acquire(&r->stop)) {
		uint64_t iova = base + (uint64_t)slot * 4096;
		struct ik_softiommu_xlate x;
		struct ik_smmu_cmd c;
		ik_s64 un;

		err = ik_pgtable_map(r->pt, iova, pa, 4096, IK_PROT_READ | IK_PROT_WRITE);
		if (err) {
			why = "ik_pgtable_map";
			break;
		}
		err = ik_softiommu_translate(r->soft, SEED_SID, iova, IK_SOFTIOMMU_READ, &x);
		if (err || x.oa != pa) {
			why = err ? "ik_softiommu_translate" : "translation to another address";
			break;
		}
		un = ik_pgtable_unmap(r->pt, iova, 4096, &g);
		if (un != 4096) {
			why = "ik_pgtable_unmap";
			err = (int)un;
			break;
		}
		memset(&c, 0, sizeof(c));
		c.op = IK_SMMU_CMD_TLBI_NH_VA;
		c.asid = SEED_ASID;
		c.leaf = 1;
		c.addr = iova;
		err = ik_smmu_cmd_encode(&c, w[n]);
		if (err) {
			why = "ik_smmu_cmd_encode";
			break;
		}
		n++;
		slot = (slot + 1) % r->batch;
		if (n == r->batch) {
			struct ik_cmdq *q = r->ecmdq ? ik_cmdq_set_pick(ik_smmu_ecmdq_set(r->s)) :
						       ik_smmu_cmdq(r->s);

			err = ik_cmdq_issue(q, w, n, IK_CMDQ_SYNC);
			if (err) {
				why = "ik_cmdq_issue";
				break;
			}
			err = ik_pgtable_gather_sync(r->pt, &g);
			if (err) {
				why = "ik_pgtable_gather_sync";
				break;
			}
			ik_gather_init(&g);
			t->requests += n;
			n = 0;
		}
	}
	if (why)
		seed_fail(r, why, err, (int)t->idx, t->requests);
	return NULL;
}

static void seed_teardown(struct seed_run *r)
{
	if (r->s)
		ik_smmu_destroy(r->s);
	if (r->cdt_live)
		ik_smmu_cdtab_fini(&r->cdt);
	if (r->pt)
		ik_pgtable_destroy(r->pt);
	ik_softsmmu_destroy(r->m);
	ik_softiommu_destroy(r->soft);
	free(r->mem);
}

/* A setup step failed: record it (seed_once() reports it) and return -1. */
static int setup_fail(struct seed_run *r, const char *why, int err)
{
	seed_fail(r, why, err, -1, 0);
	return -1;
}

/* Model, core, tables and the stream, as a driver sets them up. */
static int seed_setup(struct seed_run *r)
{
	struct ik_softiommu_config sc;
	struct ik_softsmmu_config mc;
	struct ik_smmu_config cfg;
	struct ik_pgtable_cfg pc;
	struct ik_smmu_cdtab_config cc;
	struct ik_smmu_cd_config cd;
	struct ik_smmu_ste_config stc;
	uint64_t cdw[8], ste[8];
	uint32_t sid = SEED_SID;
	uint8_t v;
	const struct ik_smmu_idr *id;
	int err;

	ik_softiommu_config_init(&sc);
	sc.iotlb_entries = 4096;
	sc.iotlb_ways = 8;
	sc.phys_to_host = ik_softiommu_host_identity; /* this process's own pages */
	if ((err = ik_softiommu_create(&sc, &r->soft)))
		return setup_fail(r, "ik_softiommu_create", err);
	ik_softsmmu_config_init(&mc);
	mc.soft = r->soft;
	mc.phys_to_host = ik_softiommu_host_identity;
	mc.idr[1] |= IK_SMMU_IDR1_ECMDQ;
	mc.ecmdq_log2numq = 4; /* 16 queues a page */
	mc.ecmdq_log2nump = 4; /* 16 pages: 256 queues */
	if ((err = ik_softsmmu_create(&mc, &r->m)))
		return setup_fail(r, "ik_softsmmu_create", err);
	if ((err = ik_softsmmu_mmio(r->m, &r->io)))
		return setup_fail(r, "ik_softsmmu_mmio", err);
	if ((err = ik_dma_mem_default(&r->dma, NULL)))
		return setup_fail(r, "ik_dma_mem_default", err);
	memset(&cfg, 0, sizeof(cfg));
	cfg.mmio = &r->io;
	cfg.dma = &r->dma;
	cfg.cmdq_log2 = 10; /* a batch of 256 and its sync fit */
	/* The "device" is the model, run by whichever bench thread writes
	 * PROD, so a wait sees no progress while that thread is descheduled -
	 * for more than the driver's default 1 s on a loaded machine (make
	 * check under load: "shared batch 1 failed", ik_cmdq_issue()
	 * -ETIMEDOUT).  This is a benchmark, not a test of the bound: a long
	 * one, so that only a stuck model ends a run (and says so). */
	cfg.timeout_ns = SEED_TIMEOUT_NS;
	cfg.flags = r->ecmdq ? IK_SMMU_F_ECMDQ : 0;
	if ((err = ik_smmu_create(&cfg, &r->s)))
		return setup_fail(r, "ik_smmu_create", err);
	if ((err = ik_smmu_ecmdq_limit(r->s, r->threads)))
		return setup_fail(r, "ik_smmu_ecmdq_limit", err);
	if ((err = ik_smmu_reset(r->s)))
		return setup_fail(r, "ik_smmu_reset", err);
	if (r->ecmdq && ik_smmu_ecmdq_count(r->s) != r->threads)
		return setup_fail(r, "ik_smmu_ecmdq_count (fewer queues than threads)",
				  (int)ik_smmu_ecmdq_count(r->s));
	id = ik_smmu_get_idr(r->s);
	memset(&pc, 0, sizeof(pc));
	pc.fmt = IK_PT_LPAE_S1;
	pc.ias = 48;
	pc.oas = 48;
	pc.pgsize_bitmap = 1ull << 12 | 1ull << 21 | 1ull << 30;
	pc.coherent = true;
	if ((err = ik_pgtable_create(&pc, &r->pt)))
		return setup_fail(r, "ik_pgtable_create", err);
	memset(&cc, 0, sizeof(cc));
	cc.idr = id;
	cc.dma = &r->dma;
	if ((err = ik_smmu_cdtab_init(&r->cdt, &cc)))
		return setup_fail(r, "ik_smmu_cdtab_init", err);
	r->cdt_live = true;
	memset(&cd, 0, sizeof(cd));
	cd.pt = r->pt;
	cd.asid = SEED_ASID;
	memset(&stc, 0, sizeof(stc));
	stc.config = IK_SMMU_STE_CFG_S1;
	ik_smmu_cdtab_ste(&r->cdt, &stc);
	if ((err = ik_smmu_cd_build(id, &cd, cdw)))
		return setup_fail(r, "ik_smmu_cd_build", err);
	if ((err = ik_smmu_write_cd(r->s, &r->cdt, 0, cdw, &sid, 1)))
		return setup_fail(r, "ik_smmu_write_cd", err);
	if ((err = ik_smmu_ste_build(id, &stc, ste)))
		return setup_fail(r, "ik_smmu_ste_build", err);
	if ((err = ik_smmu_write_ste(r->s, sid, ste)))
		return setup_fail(r, "ik_smmu_write_ste", err);
	if ((err = posix_memalign((void **)&r->mem, 4096, 4096)))
		return setup_fail(r, "posix_memalign", -err);
	memset(r->mem, 0x5a, 4096);
	/* The device's first access makes the model fetch STE and CD and
	 * attach the stream (it faults: nothing is mapped yet). */
	(void)ik_softsmmu_dma(r->m, sid, 0, &v, 1, false);
	return 0;
}

/* Why a configuration failed (seed_once()). */
struct seed_why {
	const char *why;	/* the call that failed */
	int err;		/* what it returned */
	int who;		/* the thread, -1 for the setup */
	uint64_t at;		/* that thread's requests until then */
};

/* One configuration: requests completed, or -1 with *w saying why. */
static int64_t seed_once(bool ecmdq, unsigned batch, unsigned threads, unsigned ms,
			 struct seed_why *w)
{
	struct seed_run r;
	struct seed_thread *t;
	uint64_t total = 0;
	unsigned started = 0;

	memset(&r, 0, sizeof(r));
	r.ecmdq = ecmdq;
	r.batch = batch;
	r.threads = threads;
	t = calloc(threads, sizeof(*t));
	if (!t)
		(void)setup_fail(&r, "calloc", -ENOMEM);
	if (!t || seed_setup(&r)) {
		free(t);
		seed_teardown(&r);
		*w = (struct seed_why){ r.why, r.err, r.who, r.at };
		return -1;
	}
	for (; started < threads; started++) {
		int err;

		t[started].r = &r;
		t[started].idx = started;
		err = pthread_create(&t[started].t, NULL, seed_worker, &t[started]);
		if (err) {
			seed_fail(&r, "pthread_create", -err, (int)started, 0);
			break;
		}
	}
	ik_store_release(&r.go, 1);
	if (started == threads)
		usleep(ms * 1000u);
	ik_store_release(&r.stop, 1);
	for (unsigned i = 0; i < started; i++) {
		pthread_join(t[i].t, NULL);
		total += t[i].requests;
	}
	free(t);
	seed_teardown(&r);
	if (r.failed) {
		*w = (struct seed_why){ r.why, r.err, r.who, r.at };
		return -1;
	}
	return (int64_t)total;
}

static unsigned seed_cpus(void)
{
	cpu_set_t s;

	if (sched_getaffinity(0, sizeof(s), &s))
		return 1;
	return (unsigned)CPU_COUNT(&s);
}

int bench_seed(int argc, char **argv, struct bench_opts *o)
{
	struct bench_parse p;
	uint64_t batches[SEED_MAX_BATCHES] = { 1, 32, 64, 128, 256 }, ms = 0, v;
	int nb = 5, opt;
	unsigned threads;
	double best[2] = { 0, 0 };

	bench_parse_init(&p, "seed", seed_options, seed_help, o, argc, argv);
	while ((opt = bench_next_opt(&p)) > 0) {
		switch (opt) {
		case SEED_TIME:
			if (!bench_opt_range(&p, 1, 600000, &ms))
				return 2;
			break;
		case SEED_BATCHES:
			nb = bench_parse_list_u64(optarg, batches, SEED_MAX_BATCHES);
			if (nb < 0)
				return bench_usage_error("seed", "--batches must be a list of 1..256");
			for (int i = 0; i < nb; i++)
				if (batches[i] < 1 || batches[i] > 256)
					return bench_usage_error("seed", "--batches must be a list of 1..256");
			break;
		default:
			break;
		}
	}
	if (opt < 0)
		return p.status;
	threads = o->threads ? o->threads : seed_cpus();
	if (threads > SEED_MAX_THREADS)
		return bench_usage_error("seed", "--threads must be 1..%d", SEED_MAX_THREADS);
	if (!ms)
		ms = o->quick ? 100 : 1000;
	if (!o->json)
		printf("seed workload: map -> walk -> unmap, strict, %u threads, %llu ms each\n"
		       "%-7s %6s %8s %12s %20s\n",
		       threads, (unsigned long long)ms, "mode", "batch", "threads", "requests",
		       "requests_per_thread");
	for (int mode = 0; mode < 2; mode++) {
		for (int i = 0; i < nb; i++) {
			struct seed_why w = { "?", 0, -1, 0 };
			int64_t req = seed_once(mode == 1, (unsigned)batches[i], threads, (unsigned)ms, &w);
			const char *name = mode ? "ecmdq" : "shared";

			if (req < 0) {
				/* One line: the call, its error, where. */
				fprintf(stderr, "iommukit-bench seed: %s batch %llu failed: %s returned %d (%s)",
					name, (unsigned long long)batches[i], w.why, w.err,
					w.err < 0 ? strerror(-w.err) : "not an errno");
				if (w.who >= 0)
					fprintf(stderr, " in thread %d after %llu requests\n", w.who,
						(unsigned long long)w.at);
				else
					fprintf(stderr, " during setup\n");
				return 1;
			}
			v = (uint64_t)req / threads;
			if ((double)req > best[mode])
				best[mode] = (double)req;
			if (o->json)
				printf("{\"mode\":\"%s\",\"batch\":%llu,\"threads\":%u,\"requests\":%lld,"
				       "\"requests_per_thread\":%llu}\n",
				       name, (unsigned long long)batches[i], threads, (long long)req,
				       (unsigned long long)v);
			else
				printf("%-7s %6llu %8u %12lld %20llu\n", name,
				       (unsigned long long)batches[i], threads, (long long)req,
				       (unsigned long long)v);
			fflush(stdout);
		}
	}
	if (!o->json)
		printf("ratio ecmdq / best shared (best rows): %.3f\n",
		       best[0] > 0 ? best[1] / best[0] : 0.0);
	return 0;
}
