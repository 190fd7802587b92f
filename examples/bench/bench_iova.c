/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench iova: the IOVA allocator on the published workloads.
 *
 *   W1      granule 4 KiB, start pfn 1, every allocation alloc(size, limit
 *           0xfffff, size-aligned); fill 1/4 (1/2, 3/4) of the space with
 *           size-1 allocations, then 263,000 times: free a random live one,
 *           allocate one of size 1.
 *   W2      the space filled completely; then free one, allocate one (it
 *           succeeds), allocate one more (it fails): both timed.
 *   W3      mixed sizes 1..64 pages, size-aligned, at 1/4 and 1/2 of the pages.
 *   growth  W1's churn at 1/4 occupancy with 10^3 .. 10^6 live ranges (10^7
 *           with --big): visits and ns should grow like log n.
 *   W4      the fast path: alloc_fast/free_fast pairs of size 1 and of sizes
 *           1..32, inline (IK_INLINE_FAST), and of size 1 through the
 *           exported functions (size1-ext), on 1..N threads (--threads N,
 *           default: the CPUs), in the domain's default rcache mode (RSEQ
 *           where the platform has it: no atomic on a hit), and size 1 both
 *           ways again with the per-CPU locks (size1-lock, size1-ext-lock;
 *           IK_IOVA_CFG_LOCKED_RCACHE).  JSON: rcache_mode on every W4 line.
 *           Also
 *           the lock floor: the same pattern on a bare array under
 *           ik_lock/ik_unlock, the least a per-CPU-locked cache can cost
 *           (JSON: lock_floor_ns on every W4 line).
 *
 * Beside the times: the tree nodes each allocation visited (visits_mean)
 * and the nodes whose summaries each free and allocation updated,
 * rotations included (summary_updates_mean; ik_iova_stats()'s
 * summary_updates, read after each sampled call, outside its timing).
 * W1-W3: the hint's probes over the timed loop, on the allocation row
 * (probe_hits, probe_misses: ik_iova_probe_stats(); a probe is tried after
 * a hit and otherwise about once in 64 allocations).
 *
 * Each latency is one operation between two clock reads; the clock's own cost
 * is subtracted (printed as timer_ns).  For W1-W3 that cost is measured in
 * the loop itself: every iteration also times an empty interval, and the
 * median of those is subtracted; a calibration taken once at start, in a hot
 * loop, varied by +-20 ns between runs here, a 2x error on W2's failing
 * allocation.  W2's failing allocation (it changes nothing) is timed 16 at a
 * time.  W1-W3 also time the free+alloc pair in batches of 64 without a
 * clock read per operation (batch_pair_p50_ns), an independent check on the
 * per-operation figures: mean_ns includes every sample, preemption and
 * interrupts too, and on a shared machine is far above the medians.  Nodes visited per
 * tree allocation come from ik_iova_stats() (a count: stable on a noisy
 * machine).  W1-W3 and growth use a domain without rcaches (they measure the
 * tree: ik_iova_alloc/ik_iova_free); W4 measures the rcaches.  The system
 * allocator is used as it is.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
/* W4 measures both forms of the fast path: the inline one (IK_INLINE_FAST)
 * and, as (ik_iova_alloc_fast)(...), the exported one. */
#define IK_INLINE_FAST 1
#include <iommukit/iova.h>
#include "bench.h"
#include "bench_baseline.h"	/* config.h; BENCH_BASELINE: --baseline is built */

static uint64_t timer_ns;

/* CPU time of the calling thread: on a shared machine a thread's wall time
 * includes the time other processes ran; this does not. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static uint64_t node_bytes;
/* Memory per live range for the rows being reported (0: not measured): the
 * library's own count (ik_iova_stats bytes / ranges) and the system heap's
 * growth over the fill (node sizes as malloc rounds them, its headers). */
static double lib_bytes_per_range, heap_bytes_per_range;
/* The hint's probes over a churn's timed loop (ik_iova_probe_stats()),
 * reported with its allocation row; probe_set: a churn set
 * them. */
static uint64_t probe_hits, probe_misses;
static bool probe_set;

struct rng {
	uint64_t s;
};

static uint64_t rnext(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rbelow(struct rng *r, uint64_t n)
{
	return rnext(r) % n;
}

static void measure_timer(void)
{
	struct bench_samples s;
	struct bench_stats st;

	if (bench_samples_init(&s, 100000))
		return;
	for (int i = 0; i < 100000; i++) {
		uint64_t t0 = bench_now_ns();

		bench_samples_add(&s, bench_now_ns() - t0);
	}
	bench_stats_compute(&s, &st);
	timer_ns = st.p50;
	bench_samples_free(&s);
}

static inline uint64_t lap(uint64_t t0)
{
	uint64_t d = bench_now_ns() - t0;

	return d > timer_ns ? d - timer_ns : 0;
}

/* Mean of the (sorted) samples up to and including `upto`. */
static double trimmed_mean(const struct bench_samples *s, uint64_t upto)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < s->n && s->v[i] <= upto; i++)
		sum += (double)s->v[i];
	return i ? sum / (double)i : 0;
}

/* Latency samples and visit counts for one (workload, occupancy, op).  The
 * samples are raw clock differences for `per` operations until report()
 * takes the clock's cost off and divides. */
struct series {
	struct bench_samples lat;
	double visits_sum;
	uint64_t visits_max, visits_n;
	double upd_sum;		/* summary updates over the sampled calls */
	uint64_t upd_n;		/* samples with a summary-update count */
	unsigned per;
};

static int series_init(struct series *s, size_t cap)
{
	s->visits_sum = 0;
	s->visits_max = 0;
	s->visits_n = 0;
	s->upd_sum = 0;
	s->upd_n = 0;
	s->per = 1;
	return bench_samples_init(&s->lat, cap);
}

/* In-loop clock calibration: the cost of one clock read as the timed
 * operations see it (same caches, same frequency), and batch figures. */
struct calib {
	struct bench_samples empty;	/* raw laps over nothing */
	uint64_t batch_pair_p50;	/* ns per free+alloc pair, batches of 64; 0: none */
};

static void calib_lap(struct calib *c)
{
	uint64_t t0 = bench_now_ns();

	bench_samples_add(&c->empty, bench_now_ns() - t0);
}

/* Sets timer_ns to the median empty lap and turns raw samples into ns/op. */
static void calib_apply(struct calib *c, struct series *const *ss, unsigned n)
{
	struct bench_stats st;

	bench_stats_compute(&c->empty, &st);
	timer_ns = st.p50;
	for (unsigned i = 0; i < n; i++) {
		struct bench_samples *l = &ss[i]->lat;

		for (size_t k = 0; k < l->n; k++)
			l->v[k] = (l->v[k] > timer_ns ? l->v[k] - timer_ns : 0) / ss[i]->per;
	}
	bench_samples_free(&c->empty);
}

/*
 * After a sampled call: the nodes whose summaries it updated (the domain's
 * summary_updates counter against *upd, its value after the call before;
 * *upd takes the new value).  Read outside the timed window.
 */
static void series_upd(struct series *s, const struct ik_iova_stats *st, uint64_t *upd)
{
	s->upd_sum += (double)(st->summary_updates - *upd);
	s->upd_n++;
	*upd = st->summary_updates;
}

/* The domain's summary_updates counter now. */
static uint64_t upd_now(struct ik_iova_domain *d)
{
	struct ik_iova_stats st;

	ik_iova_stats(d, &st);
	return st.summary_updates;
}

/* After a sampled free: its summary updates. */
static void series_free(struct series *s, struct ik_iova_domain *d, uint64_t *upd)
{
	struct ik_iova_stats st;

	ik_iova_stats(d, &st);
	series_upd(s, &st, upd);
}

/* After a sampled allocation: the nodes it visited and its summary updates. */
static void series_visit(struct series *s, struct ik_iova_domain *d, uint64_t *upd)
{
	struct ik_iova_stats st;

	ik_iova_stats(d, &st);
	s->visits_sum += (double)st.last_visits;
	s->visits_n++;
	if (st.last_visits > s->visits_max)
		s->visits_max = st.last_visits;
	series_upd(s, &st, upd);
}

/* "(<= B)", the visit bound as the table shows it. */
static const char *bound_str(double bound)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "(<= %.0f)", floor(bound));
	return buf;
}

static void report(const struct bench_opts *o, const char *wl, const char *occ, const char *op,
		   struct series *s, uint64_t ranges, uint64_t batch_pair)
{
	struct bench_stats st;
	double bound = ranges > 1 ? 2.0 * log2((double)ranges) + 4 : 4;

	bench_stats_compute(&s->lat, &st);
	double trim = trimmed_mean(&s->lat, st.p999);
	if (o->json) {
		printf("{\"bench\":\"iova\",\"workload\":\"%s\",\"occupancy\":\"%s\",\"op\":\"%s\","
		       "\"n\":%zu,\"ranges\":%llu,\"mean_ns\":%.1f,\"p50_ns\":%llu,\"p99_ns\":%llu,"
		       "\"p999_ns\":%llu,\"max_ns\":%llu,\"mean_to_p999_ns\":%.1f,",
		       wl, occ, op, st.n, (unsigned long long)ranges, st.mean,
		       (unsigned long long)st.p50, (unsigned long long)st.p99,
		       (unsigned long long)st.p999, (unsigned long long)st.max, trim);
		if (s->visits_n)
			printf("\"visits_mean\":%.2f,\"visits_max\":%llu,\"visits_bound\":%.1f,",
			       s->visits_sum / (double)s->visits_n,
			       (unsigned long long)s->visits_max, bound);
		else
			printf("\"visits_mean\":null,\"visits_max\":null,");
		if (s->upd_n)
			printf("\"summary_updates_mean\":%.2f,",
			       s->upd_sum / (double)s->upd_n / (double)s->per);
		else
			printf("\"summary_updates_mean\":null,");
		if (batch_pair)
			printf("\"batch_pair_p50_ns\":%llu,", (unsigned long long)batch_pair);
		if (probe_set && !strcmp(op, "alloc"))
			printf("\"probe_hits\":%llu,\"probe_misses\":%llu,",
			       (unsigned long long)probe_hits, (unsigned long long)probe_misses);
		if (lib_bytes_per_range > 0)
			printf("\"bytes_per_range\":%.1f,", lib_bytes_per_range);
		if (heap_bytes_per_range > 0)
			printf("\"heap_bytes_per_range\":%.1f,", heap_bytes_per_range);
		printf("\"node_bytes\":%llu,\"timer_ns\":%llu}\n", (unsigned long long)node_bytes,
		       (unsigned long long)timer_ns);
	} else {
		printf("%-6s %-5s %-10s %8zu %8llu %8.1f %7.1f %7llu %7llu %8llu %9llu", wl, occ, op,
		       st.n, (unsigned long long)ranges, st.mean, trim, (unsigned long long)st.p50,
		       (unsigned long long)st.p99, (unsigned long long)st.p999,
		       (unsigned long long)st.max);
		if (s->visits_n)
			printf(" %7.1f %5llu %-8s", s->visits_sum / (double)s->visits_n,
			       (unsigned long long)s->visits_max, bound_str(bound));
		else
			printf("       -     - %-8s", "");
		if (s->upd_n)
			printf(" %6.1f\n", s->upd_sum / (double)s->upd_n / (double)s->per);
		else
			printf("      -\n");
		bench_print_hist(stdout, &st);
	}
	bench_samples_free(&s->lat);
}

/* The configuration every domain of this benchmark uses: 4 KiB pages. */
static void cfg_make(struct ik_iova_config *c, uint64_t start, uint64_t end, unsigned flags)
{
	memset(c, 0, sizeof(*c));
	c->granule = 4096;
	c->start_pfn = start;
	c->end_pfn = end;
	c->flags = flags;
}

static int dom_make_flags(struct ik_iova_domain *d, uint64_t start, uint64_t end, unsigned flags)
{
	struct ik_iova_config c;
	int err;

	cfg_make(&c, start, end, flags);
	err = ik_iova_init(d, &c);
	if (err)
		fprintf(stderr, "iommukit-bench iova: init: %s\n", ik_strerror(err));
	return err;
}

static int dom_make(struct ik_iova_domain *d, uint64_t start, uint64_t end, bool rcache)
{
	return dom_make_flags(d, start, end, rcache ? 0 : IK_IOVA_CFG_NO_RCACHE);
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "iommukit-bench iova: %s: %s\n", what, ik_strerror(err));
	return 1;
}

/* ---- W1 and growth: size-1 churn at a given number of live ranges ---- */

/* The calls a churn makes, through pointers so that --baseline drives
 * another build of the library with the same code. */
struct iova_ops {
	int (*init)(struct ik_iova_domain *, const struct ik_iova_config *);
	int (*alloc)(struct ik_iova_domain *, ik_u64, ik_u64, unsigned, ik_u64 *);
	int (*free)(struct ik_iova_domain *, ik_u64);
	void (*destroy)(struct ik_iova_domain *);
};

/* This build's. */
static const struct iova_ops this_ops = { ik_iova_init, ik_iova_alloc, ik_iova_free,
					  ik_iova_destroy };

/* The state of one churn run (W1, W3, growth, --baseline). */
struct churn {
	const struct iova_ops *f;	/* the library it drives */
	struct ik_iova_domain *d;	/* 16 x this build's size: another build's may be larger */
	struct rng r;
	uint64_t *live, *npg;	/* live ranges' first pfns and sizes */
	uint64_t n, pages, end, maxsize, fails;
	uint64_t upd;		/* the domain's summary_updates after the last sampled call */
	uint64_t heap_fill;	/* heap bytes the fill took (0: unknown) */
	bool sum;		/* churn_step() adds each call's ns to free_ns, alloc_ns */
	double free_ns, alloc_ns;
};

/* Bytes in use on the system heap (0 where the C library does not say). */
static uint64_t heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
	return (uint64_t)mallinfo2().uordblks;
#else
	return 0;
#endif
}

/* One iteration: free a random live range, allocate one of a random size in
 * its place.  With sf and sa (this build only: they read its stats), each
 * operation is timed into them (raw laps); with c->sum, into c's sums (the
 * clock's cost subtracted). */
static int churn_step(struct churn *c, struct series *sf, struct series *sa)
{
	uint64_t j = rbelow(&c->r, c->n), k = c->maxsize == 1 ? 1 : 1 + rbelow(&c->r, c->maxsize);
	uint64_t t0 = 0, p;
	int err;

	if (sf || c->sum)
		t0 = bench_now_ns();
	err = c->f->free(c->d, c->live[j]);
	if (sf) {
		bench_samples_add(&sf->lat, bench_now_ns() - t0);
		series_free(sf, c->d, &c->upd);
	} else if (c->sum) {
		c->free_ns += (double)lap(t0);
	}
	if (err)
		return fail("free", err);
	c->pages -= c->npg[j];
	if (sa || c->sum)
		t0 = bench_now_ns();
	err = c->f->alloc(c->d, k, c->end, IK_IOVA_SIZE_ALIGNED, &p);
	if (sa) {
		bench_samples_add(&sa->lat, bench_now_ns() - t0);
		series_visit(sa, c->d, &c->upd);
	} else if (c->sum) {
		c->alloc_ns += (double)lap(t0);
	}
	if (err == -ENOSPC) {
		c->fails++;
		c->live[j] = c->live[--c->n];
		c->npg[j] = c->npg[c->n];
		return 0;
	}
	if (err)
		return fail("alloc", err);
	c->live[j] = p;
	c->npg[j] = k;
	c->pages += k;
	return 0;
}

/* Fill: size 1 to `target` ranges (maxsize 1: W1, growth) or mixed sizes to
 * `target` pages (W3). */
static int churn_fill(struct churn *c, uint64_t target)
{
	uint64_t cap = target, h0;

	c->live = malloc(cap * sizeof(*c->live));
	c->npg = malloc(cap * sizeof(*c->npg));
	if (!c->live || !c->npg)
		return 1;
	h0 = heap_in_use();
	while (c->maxsize == 1 ? c->n < target : c->pages < target) {
		uint64_t k = c->maxsize == 1 ? 1 : 1 + rbelow(&c->r, c->maxsize);
		int err;

		if (c->n == cap) {
			cap *= 2;
			c->live = realloc(c->live, cap * sizeof(*c->live));
			c->npg = realloc(c->npg, cap * sizeof(*c->npg));
			if (!c->live || !c->npg)
				return 1;
		}
		err = c->f->alloc(c->d, k, c->end, IK_IOVA_SIZE_ALIGNED, &c->live[c->n]);
		if (err == -ENOSPC)
			break;
		if (err)
			return fail("fill", err);
		c->npg[c->n++] = k;
		c->pages += k;
	}
	/* (the arrays are not resized in practice: cap >= ranges) */
	c->heap_fill = h0 && cap == target ? heap_in_use() - h0 : 0;
	return 0;
}

/* Set c up: a domain over [1, end] without rcache, driven through c->f,
 * filled to `target` (see churn_fill()). */
static int churn_open(struct churn *c, uint64_t target)
{
	struct ik_iova_config cfg;
	int err;

	c->d = aligned_alloc(64, (16 * sizeof(struct ik_iova_domain) + 63) & ~(size_t)63);
	if (!c->d)
		return 1;
	cfg_make(&cfg, 1, c->end, IK_IOVA_CFG_NO_RCACHE);
	err = c->f->init(c->d, &cfg);
	if (err) {
		free(c->d);
		c->d = NULL;
		return fail("init", err);
	}
	return churn_fill(c, target);
}

static void churn_close(struct churn *c)
{
	if (c->d)
		c->f->destroy(c->d);
	free(c->d);
	free(c->live);
	free(c->npg);
}

/* The independent check: iters/4 more iterations, no clock read per
 * operation; the median over batches of 64 of ns per free+alloc pair. */
static int churn_batches(struct churn *c, uint64_t iters, uint64_t *pair_p50)
{
	struct bench_samples b;
	struct bench_stats st;
	int err = 0;

	if (bench_samples_init(&b, iters / 256 + 1))
		return 1;
	for (uint64_t i = 0; i + 64 <= iters / 4 && !err; i += 64) {
		uint64_t t0 = bench_now_ns();

		for (unsigned k = 0; k < 64 && !err; k++)
			err = churn_step(c, NULL, NULL);
		bench_samples_add(&b, (bench_now_ns() - t0 + 32) / 64);
	}
	bench_stats_compute(&b, &st);
	*pair_p50 = st.p50;
	bench_samples_free(&b);
	return err;
}

static void mem_per_range(struct churn *c)
{
	struct ik_iova_stats st;

	ik_iova_stats(c->d, &st);
	lib_bytes_per_range = st.ranges ? (double)st.bytes / (double)st.ranges : 0;
	heap_bytes_per_range = c->n ? (double)c->heap_fill / (double)c->n : 0;
}

static int churn(const struct bench_opts *o, const char *wl, const char *occ, uint64_t end,
		 uint64_t live_n, uint64_t iters, uint64_t maxsize)
{
	struct churn c = { .f = &this_ops, .r = { o->seed * 0x1234567ull + live_n }, .end = end,
			   .maxsize = maxsize };
	struct series sa, sf;
	struct series *const both[2] = { &sa, &sf };
	ik_u32 h0, m0, h1, m1;
	struct calib cal;
	uint64_t pair = 0;
	int err = 0;

	if (churn_open(&c, live_n) || series_init(&sa, iters) || series_init(&sf, iters) ||
	    bench_samples_init(&cal.empty, iters))
		return 1;
	c.upd = upd_now(c.d);
	ik_iova_probe_stats(c.d, &h0, &m0);
	for (uint64_t i = 0; i < iters && !err; i++) {
		err = churn_step(&c, &sf, &sa);
		calib_lap(&cal);
	}
	ik_iova_probe_stats(c.d, &h1, &m1);
	probe_hits = (ik_u32)(h1 - h0);
	probe_misses = (ik_u32)(m1 - m0);
	probe_set = true;
	if (!err)
		err = churn_batches(&c, iters, &pair);
	if (err)
		return err;
	calib_apply(&cal, both, 2);
	mem_per_range(&c);
	report(o, wl, occ, "alloc", &sa, c.n, pair);
	report(o, wl, occ, "free", &sf, c.n, pair);
	if (!o->json)
		printf("    clock %llu ns; free+alloc pair timed in batches of 64, no clock per op:"
		       " p50 %llu ns\n    memory per live range: %.1f bytes (library), %.1f bytes"
		       " (heap growth over the fill; 0: unknown)\n", (unsigned long long)timer_ns,
		       (unsigned long long)pair, lib_bytes_per_range, heap_bytes_per_range);
	if (!o->json)
		printf("    hint probe (a climb from the gap last freed into or allocated from,"
		       " before the descent): %llu hits, %llu misses in %llu allocations\n",
		       (unsigned long long)probe_hits, (unsigned long long)probe_misses,
		       (unsigned long long)iters);
	lib_bytes_per_range = heap_bytes_per_range = 0;
	probe_set = false;
	if (c.fails && !o->json)
		printf("    (%llu allocations found no room and were not replaced)\n",
		       (unsigned long long)c.fails);
	churn_close(&c);
	return 0;
}

/* ---- --baseline: this build against another, in one process ---- */

/*
 * Interleaved rounds: the same churn (W1 at 1/4, W3 at 1/4 and 1/2) on two
 * domains, one driven by the library this tool links and one by a second
 * build loaded with dlopen() (a build of the previous commit, say), with
 * the same random streams, alternating every round between the two so that
 * both see the same machine.  Each round times CHUNK frees and allocations
 * one by one (the clock's cost subtracted) after a short untimed warm-up;
 * the ratio reported is this build's round mean over the baseline's (see
 * ab_workload() for how two passes combine), and the means are medians of
 * the round means.  The other
 * build must take the same struct ik_iova_config (unchanged since 0.1.0);
 * its domain lives in a buffer far larger than this build's, as its struct
 * may have grown.
 */
enum { AB_CHUNK = 2000, AB_WARM = 500 };

static int ab_load(const char *path, struct iova_ops *f)
{
#ifdef BENCH_BASELINE
	/* Deep binding: the other build's calls into its own exported
	 * functions (ik_iova_free() calls ik_iova_free_locked(), say) must not
	 * land in this build's, whose domain layout may differ. */
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);

	if (!h) {
		fprintf(stderr, "iommukit-bench iova: --baseline: %s\n", dlerror());
		return 2;
	}
	*(void **)&f->init = dlsym(h, "ik_iova_init");
	*(void **)&f->alloc = dlsym(h, "ik_iova_alloc");
	*(void **)&f->free = dlsym(h, "ik_iova_free");
	*(void **)&f->destroy = dlsym(h, "ik_iova_destroy");
	if (!f->init || !f->alloc || !f->free || !f->destroy) {
		fprintf(stderr, "iommukit-bench iova: --baseline: %s: not an iommukit library\n",
			path);
		return 2;
	}
	return 0;
#else
	(void)path;
	(void)f;
	fprintf(stderr, "iommukit-bench iova: --baseline: not available in this build (it needs"
			" dlopen() with RTLD_DEEPBIND, and no sanitizer)\n");
	return 2;
#endif
}

static void ab_row(const struct bench_opts *o, const char *wl, const char *occ, const char *op,
		   unsigned rounds, double base, double cur, double ratio)
{
	if (o->json)
		printf("{\"bench\":\"iova\",\"mode\":\"baseline\",\"workload\":\"%s\",\"occupancy\":\"%s\","
		       "\"op\":\"%s\",\"rounds\":%u,\"chunk\":%u,\"base_mean_ns\":%.1f,\"mean_ns\":%.1f,"
		       "\"ratio\":%.3f,\"timer_ns\":%llu}\n",
		       wl, occ, op, rounds, (unsigned)AB_CHUNK, base, cur, ratio,
		       (unsigned long long)timer_ns);
	else
		printf("%-6s %-5s %-6s %7u %10.1f %10.1f %7.3f\n", wl, occ, op, rounds, base, cur, ratio);
}

/*
 * One pass: the two builds in slots 0 and 1 (this build in slot `me`), each
 * round's means into base[r], cur[r] and this build's over the baseline's
 * into ratio[r], for the frees (f*) and the allocations (a*).
 */
struct ab_out {
	double *fb, *fc, *fr, *ab, *ac, *ar;
};

static int ab_pass(const struct bench_opts *o, const struct iova_ops *base,
		   const struct iova_ops *cur, int me, uint64_t end, uint64_t target,
		   uint64_t maxsize, unsigned rounds, const struct ab_out *out)
{
	struct churn s[2];
	int err = 0;

	for (int i = 0; i < 2; i++)
		s[i] = (struct churn){ .f = i == me ? cur : base,
				       .r = { o->seed * 0x1234567ull + target },
				       .end = end, .maxsize = maxsize };
	for (int i = 0; i < 2 && !err; i++)
		err = churn_open(&s[i], target);
	for (int w = 0; w < 10 && !err; w++) /* warm both trees up */
		for (int i = 0; i < 2 && !err; i++)
			for (unsigned k = 0; k < AB_CHUNK && !err; k++)
				err = churn_step(&s[i], NULL, NULL);
	for (unsigned r = 0; r < rounds && !err; r++) {
		const struct churn *b = &s[1 - me], *c = &s[me];

		for (int k = 0; k < 2 && !err; k++) {
			struct churn *a = &s[(r & 1) ? 1 - k : k]; /* alternate who goes first */

			a->sum = false;
			for (unsigned i = 0; i < AB_WARM && !err; i++)
				err = churn_step(a, NULL, NULL);
			a->sum = true;
			a->free_ns = a->alloc_ns = 0;
			for (unsigned i = 0; i < AB_CHUNK && !err; i++)
				err = churn_step(a, NULL, NULL);
			a->sum = false;
		}
		out->fb[r] = b->free_ns / AB_CHUNK;
		out->fc[r] = c->free_ns / AB_CHUNK;
		out->fr[r] = b->free_ns > 0 ? c->free_ns / b->free_ns : 1;
		out->ab[r] = b->alloc_ns / AB_CHUNK;
		out->ac[r] = c->alloc_ns / AB_CHUNK;
		out->ar[r] = b->alloc_ns > 0 ? c->alloc_ns / b->alloc_ns : 1;
	}
	for (int i = 0; i < 2; i++)
		churn_close(&s[i]);
	return err;
}

/*
 * Two passes, this build in slot 1 and then in slot 0: the slots are not
 * alike (measured: two copies of one build read 1.04-1.15 for W3 1/2
 * frees, the second slot slower), so the ratio reported is the geometric
 * mean of the two passes' median ratios, which cancels what the slot
 * adds; the means are medians over both passes.  The library this tool
 * links is not quite like a loaded one either (the same build against a
 * loaded copy: 1.00-1.05 for W3 1/2 allocations): --candidate loads both.
 */
static int ab_workload(const struct bench_opts *o, const struct iova_ops *base,
		       const struct iova_ops *cur, const char *wl, const char *occ, uint64_t end,
		       uint64_t target, uint64_t maxsize, unsigned rounds)
{
	double *v = calloc(12 * (size_t)rounds, sizeof(double)), r[2][2];
	int err = 0;

	if (!v)
		return 1;
	for (int pass = 0; pass < 2 && !err; pass++) {
		double *w = v + (size_t)pass * rounds;
		struct ab_out out = { w, w + 2 * rounds, w + 4 * rounds,
				      w + 6 * rounds, w + 8 * rounds, w + 10 * rounds };

		err = ab_pass(o, base, cur, 1 - pass, end, target, maxsize, rounds, &out);
		if (!err) {
			r[pass][0] = bench_median(out.ar, rounds);
			r[pass][1] = bench_median(out.fr, rounds);
		}
	}
	if (!err) {
		ab_row(o, wl, occ, "alloc", 2 * rounds, bench_median(v + 6 * rounds, 2 * rounds),
		       bench_median(v + 8 * rounds, 2 * rounds), sqrt(r[0][0] * r[1][0]));
		ab_row(o, wl, occ, "free", 2 * rounds, bench_median(v, 2 * rounds),
		       bench_median(v + 2 * rounds, 2 * rounds), sqrt(r[0][1] * r[1][1]));
	}
	free(v);
	return err;
}

static int ab_run(const struct bench_opts *o, const char *path, const char *cand)
{
	struct iova_ops base, cur = this_ops;
	unsigned rounds = o->quick ? 20 : 200;
	int rc = ab_load(path, &base);

	if (!rc && cand)
		rc = ab_load(cand, &cur);
	if (rc)
		return rc;
	if (!o->json)
		printf("iova --baseline %s: %s against that one in one process,\n"
		       "interleaved rounds of %u frees and allocations each, timed one by one\n"
		       "(clock %llu ns subtracted), in two passes with the builds' places swapped;\n"
		       "base and this: medians of the round means (ns); ratio: this build's round\n"
		       "mean over the baseline's, the geometric mean of the two passes' medians\n\n"
		       "%-6s %-5s %-6s %7s %10s %10s %7s\n",
		       path, cand ? cand : "this build", (unsigned)AB_CHUNK,
		       (unsigned long long)timer_ns, "work", "occ", "op",
		       "rounds", "base", "this", "ratio");
	rc = ab_workload(o, &base, &cur, "W1", "1/4", 0xfffff, 1ull << 18, 1, rounds);
	if (!rc)
		rc = ab_workload(o, &base, &cur, "W3", "1/4", 0xfffff, 1ull << 18, 64, rounds);
	if (!rc && !o->quick)
		rc = ab_workload(o, &base, &cur, "W3", "1/2", 0xfffff, 1ull << 19, 64, rounds);
	return rc;
}

/* ---- W2: exhausted space ---- */

static int w2(const struct bench_opts *o, uint64_t end, uint64_t iters)
{
	struct ik_iova_domain d;
	struct series sa, sx, sf;
	struct series *const all[3] = { &sa, &sx, &sf };
	struct calib cal;
	struct rng r = { o->seed * 77 + 2 };
	uint64_t space = end, *live = malloc(space * sizeof(*live)), n = 0, p, upd;
	int err;

	if (!live || dom_make(&d, 1, end, false))
		return free(live), 1;
	while ((err = ik_iova_alloc(&d, 1, end, IK_IOVA_SIZE_ALIGNED, &p)) == 0)
		live[n++] = p;
	if (err != -ENOSPC || n != space)
		return fail("fill", err);
	if (series_init(&sa, iters) || series_init(&sx, iters) || series_init(&sf, iters) ||
	    bench_samples_init(&cal.empty, iters))
		return 1;
	sx.per = 16;
	upd = upd_now(&d);
	for (uint64_t i = 0; i < iters; i++) {
		uint64_t j = rbelow(&r, n), t0;

		t0 = bench_now_ns();
		err = ik_iova_free(&d, live[j]);
		bench_samples_add(&sf.lat, bench_now_ns() - t0);
		series_free(&sf, &d, &upd);
		if (err)
			return fail("free", err);
		t0 = bench_now_ns();
		err = ik_iova_alloc(&d, 1, end, IK_IOVA_SIZE_ALIGNED, &live[j]);
		bench_samples_add(&sa.lat, bench_now_ns() - t0);
		series_visit(&sa, &d, &upd);
		if (err)
			return fail("alloc after free", err);
		/* A failing allocation changes nothing: 16 in a row per sample,
		 * as the clock costs about as much as one of them. */
		t0 = bench_now_ns();
		for (unsigned k = 0; k < 16; k++)
			err |= ik_iova_alloc(&d, 1, end, IK_IOVA_SIZE_ALIGNED, &p) != -ENOSPC;
		bench_samples_add(&sx.lat, bench_now_ns() - t0);
		series_visit(&sx, &d, &upd);
		if (err)
			return fail("alloc on a full space did not fail", -EEXIST);
		calib_lap(&cal);
	}
	calib_apply(&cal, all, 3);
	report(o, "W2", "1", "alloc", &sa, n, 0);
	report(o, "W2", "1", "alloc_fail", &sx, n, 0);
	report(o, "W2", "1", "free", &sf, n, 0);
	if (!o->json)
		printf("    clock %llu ns; alloc_fail timed 16 at a time\n",
		       (unsigned long long)timer_ns);
	ik_iova_destroy(&d);
	free(live);
	return 0;
}

/* ---- W4: the fast path ---- */

struct w4_arg {
	struct ik_iova_domain *d;
	unsigned id;
	int mixed; /* 0: size 1, 1: sizes 1..32, 2: size 1 through the exported calls;
		      3, 4: as 0 and 2 on a domain with the per-CPU locks */
	uint64_t ops;
	int *go; /* start flag, set with a release store */
	uint64_t ns, cpu_ns;
	int err;
	struct bench_samples lat; /* per-op ns, averaged over batches of 16 */
};

/* 16 operations: 8 allocations then 8 frees in reverse, so the magazines
 * see a stack of depth 8; sizes 1, or 1..32 varying with i. */
static inline int w4_batch(const struct w4_arg *a, uint64_t i)
{
	uint64_t pfn[8];
	int err = 0;

	for (unsigned k = 0; k < 8; k++) {
		uint64_t sz = a->mixed == 1 ? 1 + ((i / 16 + k) & 31) : 1;

		err |= a->mixed == 2 || a->mixed == 4 ? (ik_iova_alloc_fast)(a->d, sz, ~0ull, &pfn[k])
						      : ik_iova_alloc_fast(a->d, sz, ~0ull, &pfn[k]);
	}
	for (unsigned k = 8; k-- > 0;) {
		uint64_t sz = a->mixed == 1 ? 1 + ((i / 16 + k) & 31) : 1;

		err |= a->mixed == 2 || a->mixed == 4 ? (ik_iova_free_fast)(a->d, pfn[k], sz)
						      : ik_iova_free_fast(a->d, pfn[k], sz);
	}
	return err;
}

static void *w4_thread(void *p)
{
	struct w4_arg *a = p;
	uint64_t t0, c0;
	int err = 0;

	while (!__atomic_load_n(a->go, __ATOMIC_ACQUIRE))
		;
	/* Throughput: no clock inside the loop. */
	t0 = bench_now_ns();
	c0 = thread_cpu_ns();
	for (uint64_t i = 0; i < a->ops && !err; i += 16) {
		err |= w4_batch(a, i);
	}
	a->ns = bench_now_ns() - t0;
	a->cpu_ns = thread_cpu_ns() - c0;
	/* Latency: a quarter as many operations, timed per batch of 16. */
	for (uint64_t i = 0; i < a->ops / 4 && !err; i += 16) {
		uint64_t tb = bench_now_ns();

		err |= w4_batch(a, i);
		bench_samples_add(&a->lat, (lap(tb) + 8) / 16);
	}
	a->err = err;
	return NULL;
}

/*
 * The floor under any per-CPU-locked cache on this machine: the same pattern
 * (8 pops then 8 pushes per batch) on a bare array, each operation under
 * ik_lock/ik_unlock (one atomic exchange and one release store).  The fast
 * path's ns/op minus this is what the rcache itself costs.
 */
static double w4_lock_floor(uint64_t ops)
{
	static ik_lock_t lk;
	static uint64_t stack[16];
	uint64_t n = 8, pfn[8], t0, sum = 0;

	ik_lock_init(&lk);
	for (unsigned k = 0; k < 8; k++)
		stack[k] = k;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < ops; i += 16) {
		for (unsigned k = 0; k < 8; k++) {
			ik_lock(&lk);
			pfn[k] = stack[--n];
			ik_unlock(&lk);
		}
		for (unsigned k = 8; k-- > 0;) {
			ik_lock(&lk);
			stack[n++] = pfn[k];
			ik_unlock(&lk);
		}
	}
	t0 = bench_now_ns() - t0;
	for (unsigned k = 0; k < 8; k++)
		sum += stack[k];
	if (sum != 28) /* the stack is back as it started */
		return -1;
	return (double)t0 / (double)ops;
}

static int w4(const struct bench_opts *o, unsigned maxthreads, uint64_t ops)
{
	double floor_ns = w4_lock_floor(ops);

	/* The best of three: the first run also pays for the CPU waking up. */
	for (int r = 0; r < 2; r++) {
		double f = w4_lock_floor(ops);

		if (f < floor_ns)
			floor_ns = f;
	}

	if (!o->json)
		printf("W4     lock floor: %.2f ns/op for ik_lock + one array op + ik_unlock on"
		       " one thread\n       (the least any per-CPU-locked fast path can cost"
		       " here)\n",
		       floor_ns);
	static const char *const w4_op[] = { "fast_1", "fast_1_32", "fast_1_exported",
					      "fast_1_lock", "fast_1_exported_lock" };
	static const char *const w4_label[] = { "size1", "sizes1-32", "size1-ext", "size1-lock",
						 "size1-ext-lock" };
	static const char *const mode_name[] = { "none", "lock", "rseq", "pinned" };

	for (int mixed = 0; mixed < 5; mixed++) {
		for (unsigned t = 1; t <= maxthreads; t++) {
			struct ik_iova_domain d;
			struct w4_arg a[1024];
			pthread_t th[1024];
			int go = 0;
			uint64_t total = 0, wall = 0, cpu = 0;

			if (dom_make_flags(&d, 1, (1ull << 32) - 1,
					   mixed >= 3 ? IK_IOVA_CFG_LOCKED_RCACHE : 0))
				return 1;
			unsigned mode = (unsigned)ik_iova_rcache_mode(&d);

			if (mode > 3)
				mode = 0;
			for (unsigned i = 0; i < t; i++) {
				a[i] = (struct w4_arg){ &d, i, mixed, ops, &go, 0, 0, 0, { NULL, 0, 0 } };
				if (bench_samples_init(&a[i].lat, ops / 64 + 1) ||
				    pthread_create(&th[i], NULL, w4_thread, &a[i]))
					return 1;
			}
			__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
			for (unsigned i = 0; i < t; i++) {
				pthread_join(th[i], NULL);
				if (a[i].err)
					return fail("fast path", a[i].err);
				total += a[i].ops;
				cpu += a[i].cpu_ns;
				if (a[i].ns > wall)
					wall = a[i].ns;
			}
			{
				double ops_s = (double)total * 1e9 / (double)wall;
				double ns_op = (double)wall * t / (double)total;
				double cpu_op = (double)cpu / (double)total;
				double cpu_ops_s = 1e9 * t / cpu_op;
				struct ik_iova_stats st;
				struct bench_samples all;
				struct bench_stats bs;

				ik_iova_stats(&d, &st);
				if (bench_samples_init(&all, (ops / 64 + 1) * t))
					return 1;
				for (unsigned i = 0; i < t; i++) {
					for (size_t k = 0; k < a[i].lat.n; k++)
						bench_samples_add(&all, a[i].lat.v[k]);
					bench_samples_free(&a[i].lat);
				}
				bench_stats_compute(&all, &bs);
				if (o->json)
					printf("{\"bench\":\"iova\",\"workload\":\"W4\",\"occupancy\":\"-\","
					       "\"op\":\"%s\",\"threads\":%u,\"n\":%llu,\"ranges\":%llu,"
					       "\"mean_ns\":%.2f,\"p50_ns\":%llu,\"p99_ns\":%llu,"
					       "\"p999_ns\":%llu,\"max_ns\":%llu,\"visits_mean\":%.4f,"
					       "\"visits_max\":%llu,\"ns_per_op\":%.2f,\"ops_per_s\":%.0f,"
					       "\"cpu_ns_per_op\":%.2f,\"cpu_ops_per_s\":%.0f,"
					       "\"magazines\":%llu,\"node_bytes\":%llu,\"timer_ns\":%llu,"
					       "\"lock_floor_ns\":%.2f,\"rcache_mode\":\"%s\"}\n",
					       w4_op[mixed], t,
					       (unsigned long long)total, (unsigned long long)st.ranges,
					       bs.mean, (unsigned long long)bs.p50,
					       (unsigned long long)bs.p99, (unsigned long long)bs.p999,
					       (unsigned long long)bs.max,
					       (double)st.visits / (double)(total * 5 / 8),
					       (unsigned long long)st.max_visits, ns_op, ops_s, cpu_op, cpu_ops_s,
					       (unsigned long long)st.magazines,
					       (unsigned long long)node_bytes,
					       (unsigned long long)timer_ns, floor_ns, mode_name[mode]);
				else {
					printf("W4     %-14s threads %-3u wall %11.0f ops/s %6.2f ns/op/thread;"
					       " thread CPU time %6.2f ns/op (%.0f ops/s)\n"
					       "    %llu ops; per op in batches of 16: p50 %llu p99 %llu"
					       " p99.9 %llu ns; %llu ranges in the tree; rcache mode %s\n",
					       w4_label[mixed], t, ops_s, ns_op, cpu_op, cpu_ops_s,
					       (unsigned long long)total, (unsigned long long)bs.p50,
					       (unsigned long long)bs.p99, (unsigned long long)bs.p999,
					       (unsigned long long)st.ranges, mode_name[mode]);
					bench_print_hist(stdout, &bs);
				}
				bench_samples_free(&all);
			}
			ik_iova_destroy(&d);
		}
	}
	return 0;
}

enum { IOVA_BIG = BENCH_OPT_OWN, IOVA_ONLY, IOVA_BASELINE, IOVA_CANDIDATE };

static const struct option iova_opts[] = {
	BENCH_OPTS_COMMON, BENCH_OPTS_JSON, BENCH_OPTS_QUICK, BENCH_OPTS_SEED, BENCH_OPTS_THREADS,
	{ "big", no_argument, NULL, IOVA_BIG },
	{ "only", required_argument, NULL, IOVA_ONLY },
	{ "baseline", required_argument, NULL, IOVA_BASELINE },
	{ "candidate", required_argument, NULL, IOVA_CANDIDATE },
	BENCH_OPTS_END,
};

static void iova_help(void)
{
	printf("usage: iommukit-bench [--quick] [--json] [--threads N] [--seed N] iova\n"
	       "                      [--only W1|W2|W3|growth|W4] [--big] [--baseline LIB\n"
	       "                      [--candidate LIB]]\n"
	       "  W1: 263,000 x (free random, alloc size 1) at 1/4, 1/2, 3/4 occupancy of\n"
	       "      pfns 1..0xfffff; W2: full space, free one, alloc one, alloc one that\n"
	       "      fails; W3: sizes 1..64 size-aligned at 1/4 and 1/2 of the pages;\n"
	       "      growth: 1e3..1e6 live ranges (--big: 1e7); W4: alloc_fast/free_fast\n"
	       "      on 1..N threads.  Latency mean/p50/p99/p99.9/max, log2 histogram,\n"
	       "      tree nodes visited per allocation, tree nodes whose summaries each\n"
	       "      call updated (JSON: summary_updates_mean).\n"
	       "  --baseline LIB: W1 at 1/4 and W3 at 1/4 and 1/2 in one process against\n"
	       "      another build of the library (LIB: its libiommukit.so), interleaved\n"
	       "      rounds; prints both means and their ratio (JSON: base_mean_ns,\n"
	       "      mean_ns, ratio).  --candidate LIB: measure that build instead of the\n"
	       "      one this tool links (both then loaded alike: the fairer comparison).\n");
}

int bench_iova(int argc, char **argv, struct bench_opts *o)
{
	bool big = false, run[5] = { true, true, true, true, true };
	const char *baseline = NULL, *candidate = NULL;
	static const char *const names[5] = { "W1", "W2", "W3", "growth", "W4" };
	struct bench_parse p;
	unsigned maxthreads;
	uint64_t iters;
	int rc = 0, opt, k;

	bench_parse_init(&p, "iova", iova_opts, iova_help, o, argc, argv);
	while ((opt = bench_next_opt(&p)) > 0) {
		switch (opt) {
		case IOVA_BIG:
			big = true;
			break;
		case IOVA_BASELINE:
			baseline = optarg;
			break;
		case IOVA_CANDIDATE:
			candidate = optarg;
			break;
		case IOVA_ONLY:
			for (k = 0; k < 5; k++)
				if (!strcmp(optarg, names[k]))
					break;
			if (k == 5)
				return bench_usage_error("iova", "unknown workload '%s'", optarg);
			for (int j = 0; j < 5; j++)
				run[j] = j == k;
			break;
		}
	}
	if (opt < 0)
		return p.status;
	maxthreads = o->threads;
	iters = o->quick ? 20000 : 263000;
	if (!maxthreads) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		maxthreads = c > 0 ? (unsigned)c : 1;
	}
	measure_timer();
	if (candidate && !baseline)
		return bench_usage_error("iova", "--candidate needs --baseline");
	if (baseline)
		return ab_run(o, baseline, candidate);
	node_bytes = sizeof(struct ik_iova_node);
	{
		struct ik_iova_domain d;
		struct ik_iova_stats st;

		if (dom_make(&d, 1, 2, false))
			return 1;
		ik_iova_stats(&d, &st);
		node_bytes = st.node_bytes;
		ik_iova_destroy(&d);
	}
	if (!o->json)
		printf("iova: ns per operation (the clock's cost subtracted: W4 %llu ns, measured at\n"
		       "start; W1-W3 measured in their loops, shown below each), tree nodes visited\n"
		       "per allocation (bound 2*log2(ranges)+4), upd: tree nodes whose summaries the\n"
		       "call updated (summary_updates); node %llu bytes per live range\n\n"
		       "mean<=p99.9: the mean of the samples up to the 99.9th percentile (on a shared\n"
		       "machine the largest samples are mostly time spent descheduled)\n\n"
		       "%-6s %-5s %-10s %8s %8s %8s %7s %7s %7s %8s %9s %7s %5s %-8s %6s\n",
		       (unsigned long long)timer_ns, (unsigned long long)node_bytes, "work", "occ",
		       "op", "n", "ranges", "mean", "<=p99.9", "p50", "p99", "p99.9", "max", "visits",
		       "max", "", "upd");
	if (run[0]) {
		static const char *const occ[3] = { "1/4", "1/2", "3/4" };

		for (int q = 1; q <= (o->quick ? 1 : 3) && !rc; q++)
			rc = churn(o, "W1", occ[q - 1], 0xfffff, (uint64_t)q << 18, iters, 1);
	}
	if (run[1] && !rc)
		rc = w2(o, o->quick ? 0xffff : 0xfffff, o->quick ? 20000 : 100000);
	if (run[2] && !rc) {
		rc = churn(o, "W3", "1/4", 0xfffff, 1ull << 18, iters, 64);
		if (!o->quick && !rc)
			rc = churn(o, "W3", "1/2", 0xfffff, 1ull << 19, iters, 64);
	}
	if (run[3] && !rc) {
		uint64_t top = big ? 10000000 : o->quick ? 100000 : 1000000;

		for (uint64_t n = 1000; n <= top && !rc; n *= 10) {
			rc = churn(o, "growth", "1/4", 4 * n, n, o->quick ? 20000 : 200000, 1);
		}
	}
	if (run[4] && !rc)
		rc = w4(o, maxthreads, o->quick ? 2000000 : 20000000);
	return rc;
}
