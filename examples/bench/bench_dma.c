/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench dma: the end-to-end DMA benchmark on the soft IOMMU, the
 * equivalent of Linux's dma_map_benchmark on any machine.
 *
 * Per iteration, on each thread:
 *   map     = ik_iova_alloc_fast -> ik_pgtable_map (or map_sg of N
 *             non-contiguous segments) -> iotlb_sync_map hook
 *   device  = the soft IOMMU's stream 0 writes 8 bytes into every page of
 *             the buffer through translation (IOTLB, walker on a miss)
 *   unmap   = ik_pgtable_unmap -> strict: invalidation commands + sync
 *             through the command queue, consumed by the soft IOMMU (inline
 *             on the PROD write, or on its own thread), then gather sync and
 *             ik_iova_free_fast;
 *             deferred: the range goes into a flush queue that invalidates
 *             the whole context once per batch and only then frees the IOVAs
 *             and table pages
 * then the host checks that every page holds what the device wrote.
 *
 * Nested rows (lpae-s1/s2, vtd-fl/sl): the same loop on a guest's stage-1
 * table that the soft IOMMU walks through a host stage 2 (dma_sys.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <iommukit/flushq.h>
#include "bench.h"
#include "dma_sys.h"

/* posix_memalign with aligned_alloc's interface (no size restriction). */
static void *xmemalign(size_t align, size_t size)
{
	void *p = NULL;

	return posix_memalign(&p, align, size ? size : align) ? NULL : p;
}

struct dma_opts {
	enum ik_pt_fmt fmt;
	bool nested;	/* fmt (stage 1) over its stage 2 */
	unsigned granule_shift;
	bool coherent;
	bool deferred;
	unsigned threads;
	uint64_t size;
	unsigned segments;
	unsigned nqueues;
	bool consumer_thread;
	bool check;
	uint32_t iotlb_entries, iotlb_ways;
	bool iotlb_set;
	uint32_t fq_size;
	double seconds;
	uint64_t iterations; /* 0: run for `seconds` */
};

struct dma_result {
	struct dma_opts o;
	uint64_t iters;
	double secs;
	struct bench_stats map, unmap;
	struct dsys_counts c;
	struct ik_softiommu_stats ss;
	struct ik_pgtable_stats ps;
	uint64_t faults, stale, verify_errors;
	char error[160];
};

struct worker {
	struct dsys *d;
	const struct dma_opts *o;
	unsigned id;
	unsigned char *buf; /* 2 MiB aligned; 2 x size when segmented */
	size_t buf_bytes;
	struct bench_samples map, unmap;
	uint64_t iters, verify_errors, faults;
	uint64_t deadline;
	const uint64_t *progress_done;
	int error;
	char msg[160];
	/* deferred mode */
	struct ik_flushq fq;
	bool fq_ok;
	struct ik_gather pending;
};

struct fq_entry_ctx {
	struct worker *w;
};

static int fq_flush(void *ctx, uint64_t lo, uint64_t hi)
{
	struct worker *w = ctx;
	int err;

	(void)lo;
	(void)hi;
	/* One invalidation of the whole context and one sync for the batch
	 * (what Linux's flush queue does with flush_iotlb_all), then the
	 * table pages the batch's unmaps emptied may go. */
	err = dsys_invalidate_all(w->d);
	if (err)
		return err;
	ik_pgtable_gather_sync(w->d->pt, &w->pending);
	ik_gather_init(&w->pending);
	return 0;
}

static void fq_release(void *ctx, const struct ik_flushq_entry *e)
{
	struct worker *w = ctx;
	uint64_t npages = e->size >> w->o->granule_shift;

	ik_iova_free_fast(&w->d->iovad, e->iova >> w->o->granule_shift, npages);
}

static void fail(struct worker *w, int err, const char *what)
{
	if (!w->error) {
		w->error = err ? err : -EIO;
		snprintf(w->msg, sizeof(w->msg), "thread %u: %s: %s", w->id, what,
			 err ? ik_strerror(err) : "failed");
	}
}

static int one_iteration(struct worker *w, uint64_t seq)
{
	const struct dma_opts *o = w->o;
	struct dsys *d = w->d;
	uint64_t npages = o->size >> o->granule_shift, pfn, iova, t0, t1, t2, t3;
	uint64_t g = d->granule;
	int err;

	t0 = bench_now_ns();
	err = ik_iova_alloc_fast(&d->iovad, npages, d->iova_limit_pfn, &pfn);
	if (err)
		return fail(w, err, "ik_iova_alloc_fast"), err;
	iova = pfn << o->granule_shift;
	if (o->segments <= 1) {
		err = ik_pgtable_map(d->pt, iova, (uint64_t)(uintptr_t)w->buf, o->size,
				     IK_PROT_READ | IK_PROT_WRITE | IK_PROT_CACHE);
	} else {
		struct ik_seg segs[256];
		uint64_t chunk = o->size / o->segments;

		for (unsigned i = 0; i < o->segments; i++) {
			segs[i].paddr = (uint64_t)(uintptr_t)w->buf + 2 * i * chunk;
			segs[i].len = chunk;
		}
		err = ik_pgtable_map_sg(d->pt, iova, segs, o->segments,
					IK_PROT_READ | IK_PROT_WRITE | IK_PROT_CACHE, NULL);
	}
	if (!err && d->hook_error)
		err = d->hook_error;
	t1 = bench_now_ns();
	if (err)
		return fail(w, err, "map"), err;

	/* The device writes a tag at the start of every page and reads the
	 * page's last word, through the soft IOMMU (two accesses per page: the
	 * second one hits the IOTLB). */
	for (uint64_t p = 0; p < npages; p++) {
		uint64_t tag = seq ^ (p << 40) ^ ((uint64_t)w->id << 56), tail;

		err = ik_softiommu_dma_write(d->s, 0, iova + p * g, &tag, sizeof(tag));
		if (!err)
			err = ik_softiommu_dma_read(d->s, 0, iova + p * g + g - 8, &tail, sizeof(tail));
		if (err) {
			w->faults++;
			return fail(w, err, "device access (fault during the benchmark)"), err;
		}
	}

	t2 = bench_now_ns();
	{
		struct ik_gather gl;
		struct ik_gather *gp = o->deferred ? &w->pending : &gl;
		int64_t un;

		if (!o->deferred)
			ik_gather_init(&gl);
		un = ik_pgtable_unmap(d->pt, iova, o->size, gp);
		if (un != (int64_t)o->size)
			return fail(w, un < 0 ? (int)un : -EIO, "unmap"), -EIO;
		if (!o->deferred) {
			err = dsys_invalidate(d, gl.start, gl.end - gl.start, gl.walk, true);
			if (err)
				return fail(w, err, "invalidate + sync"), err;
			ik_pgtable_gather_sync(d->pt, &gl);
			ik_iova_free_fast(&d->iovad, pfn, npages);
		} else {
			err = ik_flushq_add(&w->fq, iova, npages << o->granule_shift, NULL);
			if (err)
				return fail(w, err, "flush queue"), err;
		}
	}
	t3 = bench_now_ns();
	bench_samples_add(&w->map, t1 - t0);
	bench_samples_add(&w->unmap, t3 - t2);

	/* The host sees what the device wrote, in the right pages. */
	for (uint64_t p = 0; p < npages; p++) {
		uint64_t want = seq ^ (p << 40) ^ ((uint64_t)w->id << 56), got;
		uint64_t off;

		if (o->segments <= 1) {
			off = p * g;
		} else {
			uint64_t per = npages / o->segments;

			off = 2 * (p / per) * (o->size / o->segments) + (p % per) * g;
		}
		memcpy(&got, w->buf + off, sizeof(got));
		if (got != want)
			w->verify_errors++;
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct dma_opts *o = w->o;

	for (uint64_t i = 0;; i++) {
		if (o->iterations ? i >= o->iterations
				  : ((i & 15) == 0 && bench_now_ns() >= w->deadline))
			break;
		if (one_iteration(w, i + 1))
			break;
		w->iters++;
	}
	if (w->fq_ok) {
		int err = ik_flushq_flush(&w->fq);

		if (err)
			fail(w, err, "final flush");
	}
	return NULL;
}

static bool progress_wanted(double total_secs, bool json)
{
	return !json && total_secs > 3.0 && isatty(STDERR_FILENO);
}

/* Set up worker w (of `cap` latency samples) for configuration o on d:
 * 0, or a negative errno with a message in r->error. */
static int worker_init(struct worker *w, unsigned id, struct dsys *d, const struct dma_opts *o,
		       size_t cap, struct dma_result *r)
{
	w->d = d;
	w->o = o;
	w->id = id;
	w->buf_bytes = (size_t)(o->segments > 1 ? 2 * o->size : o->size);
	w->buf = xmemalign(2u << 20, (w->buf_bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1));
	if (!w->buf || bench_samples_init(&w->map, cap) || bench_samples_init(&w->unmap, cap)) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return -ENOMEM;
	}
	memset(w->buf, 0, w->buf_bytes);
	ik_gather_init(&w->pending);
	if (o->deferred) {
		struct ik_flushq_ops ops = { fq_flush, fq_release, w };
		int err = ik_flushq_init(&w->fq, o->fq_size, 0, &ops, NULL);

		if (err) {
			snprintf(r->error, sizeof(r->error), "flush queue: %s", ik_strerror(err));
			return err;
		}
		w->fq_ok = true;
	}
	return 0;
}

/* Run the workers until their deadline or iteration count; r->secs is the
 * wall time.  0, or -EAGAIN when a thread cannot start. */
static int workers_run(struct worker *ws, pthread_t *tids, const struct dma_opts *o,
		       struct dma_result *r)
{
	uint64_t t0 = bench_now_ns();

	for (unsigned i = 0; i < o->threads; i++) {
		ws[i].deadline = t0 + (uint64_t)(o->seconds * 1e9);
		if (pthread_create(&tids[i], NULL, worker_main, &ws[i])) {
			snprintf(r->error, sizeof(r->error), "cannot start threads");
			for (unsigned k = 0; k < i; k++)
				pthread_join(tids[k], NULL);
			return -EAGAIN;
		}
	}
	for (unsigned i = 0; i < o->threads; i++)
		pthread_join(tids[i], NULL);
	r->secs = (double)(bench_now_ns() - t0) / 1e9;
	return 0;
}

/* Merge the workers' counts and latencies into *r; the first worker error,
 * or 0. */
static int workers_collect(struct worker *ws, const struct dma_opts *o, size_t cap,
			   struct dma_result *r)
{
	struct bench_samples all_map, all_unmap;
	int err = 0;

	bench_samples_init(&all_map, cap * o->threads);
	bench_samples_init(&all_unmap, cap * o->threads);
	for (unsigned i = 0; i < o->threads; i++) {
		struct worker *w = &ws[i];

		r->iters += w->iters;
		r->verify_errors += w->verify_errors;
		r->faults += w->faults;
		for (size_t k = 0; k < w->map.n; k++)
			bench_samples_add(&all_map, w->map.v[k]);
		for (size_t k = 0; k < w->unmap.n; k++)
			bench_samples_add(&all_unmap, w->unmap.v[k]);
		if (w->error && !err) {
			err = w->error;
			snprintf(r->error, sizeof(r->error), "%s", w->msg);
		}
	}
	bench_stats_compute(&all_map, &r->map);
	bench_stats_compute(&all_unmap, &r->unmap);
	bench_samples_free(&all_map);
	bench_samples_free(&all_unmap);
	for (unsigned i = 0; i < o->threads; i++)
		if (ws[i].fq_ok) {
			ik_flushq_destroy(&ws[i].fq);
			ws[i].fq_ok = false;
		}
	return err;
}

/* The system's counters into *r, and the run's verdict: err, or what the
 * device and the soft IOMMU saw go wrong. */
static int dma_verdict(struct dsys *d, struct dma_result *r, int err)
{
	ik_softiommu_stats(d->s, &r->ss);
	ik_pgtable_get_stats(d->pt, &r->ps);
	r->c = d->c;
	r->faults = r->ss.faults;
	r->stale = r->ss.stale;
	if (!err && r->verify_errors) {
		snprintf(r->error, sizeof(r->error), "%llu pages did not hold what the device wrote",
			 (unsigned long long)r->verify_errors);
		err = -EIO;
	}
	if (!err && (r->faults || r->stale)) {
		snprintf(r->error, sizeof(r->error), "%llu faults, %llu stale translations",
			 (unsigned long long)r->faults, (unsigned long long)r->stale);
		err = -EFAULT;
	}
	return err;
}

/* Run one configuration. */
static int dma_run(const struct dma_opts *o, struct dma_result *r)
{
	struct dsys_cfg dc;
	struct dsys d;
	struct worker *ws;
	pthread_t *tids;
	size_t cap;
	int err = 0;

	memset(r, 0, sizeof(*r));
	r->o = *o;
	memset(&dc, 0, sizeof(dc));
	dc.fmt = o->fmt;
	dc.nested = o->nested;
	dc.granule_shift = o->granule_shift;
	dc.coherent = o->coherent;
	dc.nqueues = o->nqueues;
	dc.consumer_thread = o->consumer_thread;
	dc.check = o->check;
	dc.iotlb_entries = o->iotlb_entries;
	dc.iotlb_ways = o->iotlb_ways;
	dc.iotlb_set = o->iotlb_set;
	err = dsys_init(&d, &dc, r->error, sizeof(r->error));
	if (err)
		return err;
	ws = calloc(o->threads, sizeof(*ws));
	tids = calloc(o->threads, sizeof(*tids));
	cap = o->iterations ? (size_t)o->iterations : (size_t)(o->seconds * 2e6) + 1024;
	if (cap > (size_t)1 << 24)
		cap = (size_t)1 << 24;
	if (!ws || !tids) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		err = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < o->threads && !err; i++)
		err = worker_init(&ws[i], i, &d, o, cap, r);
	if (err)
		goto out;
	ik_softiommu_stats_reset(d.s);
	memset(&d.c, 0, sizeof(d.c));
	err = workers_run(ws, tids, o, r);
	if (err)
		goto out;
	err = dma_verdict(&d, r, workers_collect(ws, o, cap, r));
out:
	if (ws)
		for (unsigned i = 0; i < o->threads; i++) {
			if (ws[i].fq_ok)
				ik_flushq_destroy(&ws[i].fq);
			free(ws[i].buf);
			bench_samples_free(&ws[i].map);
			bench_samples_free(&ws[i].unmap);
		}
	free(ws);
	free(tids);
	dsys_fini(&d);
	return err;
}

int bench_dma_once(const struct dsys_cfg *dc, unsigned threads, uint64_t size, double seconds,
		   double *iters_per_s, uint64_t *unmap_p99, uint64_t *cas_retries, char *err,
		   size_t errlen)
{
	struct dma_opts o;
	struct dma_result *r = malloc(sizeof(*r));
	int e;

	if (!r)
		return -ENOMEM;
	memset(&o, 0, sizeof(o));
	o.fmt = dc->fmt;
	o.granule_shift = dc->granule_shift;
	o.coherent = dc->coherent;
	o.threads = threads;
	o.size = size;
	o.segments = 1;
	o.nqueues = dc->nqueues;
	o.consumer_thread = dc->consumer_thread;
	o.check = dc->check;
	o.fq_size = 256;
	o.seconds = seconds;
	e = dma_run(&o, r);
	if (e) {
		snprintf(err, errlen, "%s", r->error[0] ? r->error : ik_strerror(e));
	} else {
		*iters_per_s = (double)r->iters / (r->secs > 0 ? r->secs : 1);
		*unmap_p99 = r->unmap.p99;
		*cas_retries = r->c.cas_retries;
	}
	free(r);
	return e;
}

/* ------------------------------------------------------------ output */

static const char *human_size(uint64_t b, char *buf, size_t n)
{
	if (b >= (1u << 20) && b % (1u << 20) == 0)
		snprintf(buf, n, "%lluM", (unsigned long long)(b >> 20));
	else if (b >= 1024 && b % 1024 == 0)
		snprintf(buf, n, "%lluK", (unsigned long long)(b >> 10));
	else
		snprintf(buf, n, "%llu", (unsigned long long)b);
	return buf;
}

/* A row's format label: the format, or "lpae-s1/s2", "vtd-fl/sl" nested. */
static const char *row_name(enum ik_pt_fmt fmt, bool nested)
{
	if (nested)
		return fmt == IK_PT_LPAE_S1 ? "lpae-s1/s2" : fmt == IK_PT_VTD_FL ? "vtd-fl/sl" : "?";
	return ik_pt_fmt_name(fmt) ? ik_pt_fmt_name(fmt) : "?";
}

static void print_header(void)
{
	printf("%-10s %5s %-8s %9s | %21s | %22s |\n", "", "", "", "", "map (ns)     ",
	       "unmap (ns)      ");
	printf("%-10s %5s %-8s %9s | %6s %7s %6s | %6s %8s %6s | %6s %6s %6s %5s %6s\n", "format",
	       "size", "mode", "iter/s", "mean", "stddev", "p99", "mean", "stddev", "p99", "cmd/it",
	       "syn/it", "cln/it", "hit%", "faults");
}

static void print_row(const struct dma_result *r)
{
	char sz[32];
	double it = r->iters ? (double)r->iters : 1.0;
	uint64_t acc = r->ss.iotlb_hits + r->ss.iotlb_misses;

	printf("%-10s %5s %-8s %9.0f | %6.0f %7.0f %6llu | %6.0f %8.0f %6llu | %6.2f %6.2f %6.2f %5.1f %6llu\n",
	       row_name(r->o.fmt, r->o.nested), human_size(r->o.size, sz, sizeof(sz)),
	       r->o.deferred ? "deferred" : "strict", (double)r->iters / (r->secs > 0 ? r->secs : 1),
	       r->map.mean, r->map.stddev, (unsigned long long)r->map.p99, r->unmap.mean,
	       r->unmap.stddev, (unsigned long long)r->unmap.p99, (double)r->c.cmds / it,
	       (double)r->c.syncs / it, (double)r->c.cleans / it,
	       acc ? 100.0 * (double)r->ss.iotlb_hits / (double)acc : 0.0,
	       (unsigned long long)r->faults);
}

static void print_json(const struct dma_result *r)
{
	printf("{\"bench\":\"dma\",\"fmt\":\"%s\",\"nested\":%s,\"size\":%llu,\"segments\":%u,\"granule\":%llu,"
	       "\"coherent\":%s,\"mode\":\"%s\",\"threads\":%u,\"queues\":%u,\"consumer\":\"%s\",\"check\":%s,"
	       "\"iters\":%llu,\"seconds\":%.3f,\"iters_per_s\":%.1f,"
	       "\"map_mean_ns\":%.1f,\"map_stddev_ns\":%.1f,\"map_p50_ns\":%llu,\"map_p99_ns\":%llu,"
	       "\"unmap_mean_ns\":%.1f,\"unmap_stddev_ns\":%.1f,\"unmap_p50_ns\":%llu,"
	       "\"unmap_p99_ns\":%llu,\"cleans\":%llu,\"clean_bytes\":%llu,\"sync_map_calls\":%llu,"
	       "\"cmds\":%llu,\"syncs\":%llu,\"cas_retries\":%llu,\"iotlb_hits\":%llu,"
	       "\"iotlb_misses\":%llu,\"walks\":%llu,\"walk_cache_hits\":%llu,"
	       "\"iotlb_inv_entries\":%llu,\"tables_alloc\":%llu,\"tables_freed\":%llu,"
	       "\"faults\":%llu,\"stale\":%llu}\n",
	       row_name(r->o.fmt, r->o.nested), r->o.nested ? "true" : "false",
	       (unsigned long long)r->o.size, r->o.segments ? r->o.segments : 1,
	       1ull << r->o.granule_shift, r->o.coherent ? "true" : "false",
	       r->o.deferred ? "deferred" : "strict", r->o.threads, r->o.nqueues,
	       r->o.consumer_thread ? "thread" : "inline", r->o.check ? "true" : "false", (unsigned long long)r->iters, r->secs,
	       (double)r->iters / (r->secs > 0 ? r->secs : 1), r->map.mean, r->map.stddev,
	       (unsigned long long)r->map.p50, (unsigned long long)r->map.p99, r->unmap.mean,
	       r->unmap.stddev, (unsigned long long)r->unmap.p50, (unsigned long long)r->unmap.p99,
	       (unsigned long long)r->c.cleans, (unsigned long long)r->c.clean_bytes,
	       (unsigned long long)r->c.sync_maps, (unsigned long long)r->c.cmds,
	       (unsigned long long)r->c.syncs, (unsigned long long)r->c.cas_retries,
	       (unsigned long long)r->ss.iotlb_hits, (unsigned long long)r->ss.iotlb_misses,
	       (unsigned long long)r->ss.walks, (unsigned long long)r->ss.walk_cache_hits,
	       (unsigned long long)r->ss.iotlb_inv_entries, (unsigned long long)r->ps.tables_alloc,
	       (unsigned long long)r->ps.tables_freed, (unsigned long long)r->faults,
	       (unsigned long long)r->stale);
}

/* ------------------------------------------------------------ options */

/* "lpae-s1, lpae-s2, ...": the formats of bench_fmts built into the library
 * (only those of the default matrix with `defaults`). */
static const char *fmt_names(char *buf, size_t len, bool defaults)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t k = 0; k < bench_nfmts; k++) {
		const char *name = ik_pt_fmt_name(bench_fmts[k].fmt);

		if (name && !bench_fmts[k].variant && (!defaults || bench_fmts[k].dma_default))
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? ", " : "",
					      name);
	}
	for (int k = 0; k < 2; k++) /* the nested pairs, built in */
		if (ik_pt_fmt_name(k ? IK_PT_VTD_FL : IK_PT_LPAE_S1) &&
		    ik_pt_fmt_name(dsys_nested_s2(k ? IK_PT_VTD_FL : IK_PT_LPAE_S1)))
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? ", " : "",
					      row_name(k ? IK_PT_VTD_FL : IK_PT_LPAE_S1, true));
	return buf;
}

static void dma_help(void)
{
	char all[192], dflt[192];

	printf(
"usage: iommukit-bench [--json] [--quick] [--threads N] dma [OPTIONS]\n"
"\n"
"End-to-end DMA through the soft IOMMU, as Linux's dma_map_benchmark measures\n"
"it on hardware.  Per iteration and thread: ik_iova_alloc_fast -> map (or\n"
"map_sg) -> the device writes and reads every page through the soft IOMMU ->\n"
"unmap -> invalidation commands + sync through the command queue (consumed by\n"
"the soft IOMMU) -> ik_iova_free_fast; the host then checks every page.\n"
"\n"
"options (each may be given once; without any, a summary matrix runs):\n"
"  --size BYTES[,BYTES...]  buffer sizes (k/m suffixes; multiples of the granule)\n"
"                           (default 4k,64k,1m)\n"
"  --segments N             map as a scatterlist of N physically non-contiguous\n"
"                           segments with one map_sg (default 1: one map)\n"
"  --granule 4k|16k|64k     page-table granule and IOVA page (default 4k; VT-d: 4k)\n"
"  --format NAME[,NAME...]  %s\n"
"                           (default: %s, those with the granule);\n"
"                           lpae-s1/s2, vtd-fl/sl: the stage 1 nested over its\n"
"                           stage 2 (an identity map of 48 bits in its largest\n"
"                           blocks), invalidated by ASID+VMID / PASID+DID\n"
"  --coherent               the IOMMU walker snoops CPU caches: no cleans (default)\n"
"  --non-coherent           every changed run of PTEs is cleaned (counted)\n"
"  --mode strict|deferred|both\n"
"                           strict: invalidate + sync on every unmap; deferred: a\n"
"                           flush queue batches them and frees IOVAs after the\n"
"                           sync (default: both)\n"
"  --fq-size N              deferred: flush-queue entries per thread (default 256)\n"
"  --queues shared|percpu|N one queue for all threads, one per thread, or N\n"
"                           (default shared)\n"
"  --consumer inline|thread who runs the soft IOMMU's command consumer: the\n"
"                           producing thread when it writes PROD, as an emulator\n"
"                           does (default), or a thread of its own, as hardware\n"
"                           runs beside the CPUs (adds a thread hand-off per sync)\n"
"  --check                  stale-translation checking: every IOTLB hit is walked\n"
"                           again and compared (slower; any report fails the run)\n"
"  --iotlb ENTRIES[,WAYS]   soft IOMMU IOTLB geometry (default 512,8; 0: none)\n"
"  --time SECONDS           per configuration (default 1; --quick 0.2)\n"
"  --iterations N           per thread, instead of --time\n"
"  --progress / --no-progress\n"
"                           a progress line on stderr (default: on a terminal,\n"
"                           when the whole run takes more than 3 s)\n"
"  --help                   this text\n"
"global options: --json (one object per configuration), --quick, --threads N\n"
"(worker threads, default 1); --opt=V is --opt V.\n"
"\n"
"Columns: iter/s over all threads; map = alloc + map + sync_map; unmap =\n"
"unmap + invalidation + sync + free (deferred: + the amortised batch flush);\n"
"cmd/it, syn/it, cln/it = queue commands, syncs and cache cleans per\n"
"iteration; hit%% = IOTLB hits of the device's page accesses.  A fault, a\n"
"stale translation or a page without the device's data fails the run (exit 1).\n"
"\n"
"--json fields: bench (\"dma\"), fmt, nested, size, segments, granule, coherent, mode,\n"
"threads, queues, consumer, check, iters, seconds, iters_per_s, map_mean_ns,\n"
"map_stddev_ns, map_p50_ns, map_p99_ns, unmap_mean_ns, unmap_stddev_ns,\n"
"unmap_p50_ns, unmap_p99_ns, cleans, clean_bytes, sync_map_calls, cmds, syncs,\n"
"cas_retries, iotlb_hits, iotlb_misses, walks, walk_cache_hits,\n"
"iotlb_inv_entries, tables_alloc, tables_freed, faults, stale.\n",
	       fmt_names(all, sizeof(all), false), fmt_names(dflt, sizeof(dflt), true));
}

/* What the command line asked for: the options common to every
 * configuration, and the lists the configurations run through. */
struct dma_cli {
	struct dma_opts base;
	uint64_t sizes[16];
	int nsizes;
	enum ik_pt_fmt fmts[8];
	bool nested[8];		/* fmts[i] nested over its stage 2 */
	int nfmts;
	bool modes[2];		/* deferred or not, per mode run */
	int nmodes;
	bool progress_set, progress_on;
};

enum {
	DMA_SIZE = BENCH_OPT_OWN, DMA_SEGMENTS, DMA_GRANULE, DMA_FORMAT, DMA_MODE, DMA_FQ_SIZE,
	DMA_QUEUES, DMA_IOTLB, DMA_TIME, DMA_ITERATIONS, DMA_COHERENT, DMA_NON_COHERENT,
	DMA_CHECK, DMA_PROGRESS, DMA_NO_PROGRESS, DMA_CONSUMER, DMA_NOPTS
};

static const struct option dma_options[] = {
	BENCH_OPTS_COMMON, BENCH_OPTS_JSON, BENCH_OPTS_QUICK, BENCH_OPTS_THREADS,
	{ "size", required_argument, NULL, DMA_SIZE },
	{ "segments", required_argument, NULL, DMA_SEGMENTS },
	{ "granule", required_argument, NULL, DMA_GRANULE },
	{ "format", required_argument, NULL, DMA_FORMAT },
	{ "mode", required_argument, NULL, DMA_MODE },
	{ "fq-size", required_argument, NULL, DMA_FQ_SIZE },
	{ "queues", required_argument, NULL, DMA_QUEUES },
	{ "iotlb", required_argument, NULL, DMA_IOTLB },
	{ "time", required_argument, NULL, DMA_TIME },
	{ "iterations", required_argument, NULL, DMA_ITERATIONS },
	{ "coherent", no_argument, NULL, DMA_COHERENT },
	{ "non-coherent", no_argument, NULL, DMA_NON_COHERENT },
	{ "check", no_argument, NULL, DMA_CHECK },
	{ "progress", no_argument, NULL, DMA_PROGRESS },
	{ "no-progress", no_argument, NULL, DMA_NO_PROGRESS },
	{ "consumer", required_argument, NULL, DMA_CONSUMER },
	BENCH_OPTS_END,
};

/* --format NAME[,NAME...]: 0, or the exit status. */
static int dma_opt_format(struct dma_cli *c, const char *v)
{
	char buf[128], names[192], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum ik_pt_fmt f = ik_pt_fmt_from_name(tok);
		bool nested = false;

		if (f == IK_PT_FMT_NONE) {
			f = !strcmp(tok, row_name(IK_PT_LPAE_S1, true))	  ? IK_PT_LPAE_S1
			    : !strcmp(tok, row_name(IK_PT_VTD_FL, true)) ? IK_PT_VTD_FL
									  : IK_PT_FMT_NONE;
			nested = f != IK_PT_FMT_NONE;
		}
		if (f == IK_PT_FMT_NONE || !bench_fmt_find(f) ||
		    (nested && !bench_fmt_find(dsys_nested_s2(f))))
			return bench_usage_error("dma", "--format: '%s' is not a format built into "
						 "this library (%s)", tok,
						 fmt_names(names, sizeof(names), false));
		if (c->nfmts == 8)
			return bench_usage_error("dma", "--format: too many formats");
		c->nested[c->nfmts] = nested;
		c->fmts[c->nfmts++] = f;
	}
	return 0;
}

/* --iotlb ENTRIES[,WAYS]: 0, or the exit status. */
static int dma_opt_iotlb(struct dma_opts *b, const char *v)
{
	uint64_t list[4];
	int n = bench_parse_list_u64(v, list, 2);

	if (n < 1 || (list[0] && (list[0] > 65536 || (list[0] & (list[0] - 1)))) ||
	    (n == 2 && (!list[1] || list[1] > list[0] || (list[1] & (list[1] - 1)))))
		return bench_usage_error("dma", "--iotlb: ENTRIES a power of two <= 65536 "
					 "(or 0), WAYS a power of two <= ENTRIES");
	b->iotlb_entries = (uint32_t)list[0];
	b->iotlb_ways = n == 2 ? (uint32_t)list[1] : 0;
	b->iotlb_set = true;
	if (!list[0]) /* no IOTLB */
		b->iotlb_entries = 0, b->iotlb_ways = 0;
	return 0;
}

/* One option with a value (optarg): 0, or the exit status. */
static int dma_opt_value(const struct bench_parse *p, struct dma_cli *c, int opt, const char *v)
{
	struct dma_opts *b = &c->base;
	uint64_t x;
	char *end;
	double t;

	switch (opt) {
	case DMA_SIZE:
		c->nsizes = bench_parse_list_u64(v, c->sizes, 16);
		if (c->nsizes <= 0)
			return bench_usage_error("dma", "--size: bad list '%s'", v);
		return 0;
	case DMA_SEGMENTS:
		if (!bench_opt_range(p, 1, 256, &x))
			return 2;
		b->segments = (unsigned)x;
		return 0;
	case DMA_GRANULE:
		if (!bench_parse_u64(v, &x) || (x != 4096 && x != 16384 && x != 65536))
			return bench_usage_error("dma", "--granule must be 4k, 16k or 64k");
		b->granule_shift = (unsigned)__builtin_ctzll(x);
		return 0;
	case DMA_FORMAT:
		return dma_opt_format(c, v);
	case DMA_MODE:
		if (!strcmp(v, "strict"))
			c->nmodes = 1, c->modes[0] = false;
		else if (!strcmp(v, "deferred"))
			c->nmodes = 1, c->modes[0] = true;
		else if (!strcmp(v, "both"))
			c->nmodes = 2;
		else
			return bench_usage_error("dma", "--mode must be strict, deferred or both");
		return 0;
	case DMA_FQ_SIZE:
		if (!bench_opt_range(p, 1, 65536, &x))
			return 2;
		b->fq_size = (uint32_t)x;
		return 0;
	case DMA_QUEUES:
		if (!strcmp(v, "shared"))
			b->nqueues = 1;
		else if (!strcmp(v, "percpu"))
			b->nqueues = 0; /* resolved later: one per thread */
		else if (bench_parse_u64(v, &x) && x >= 1 && x <= 64)
			b->nqueues = (unsigned)x;
		else
			return bench_usage_error("dma", "--queues must be shared, percpu or 1..64");
		return 0;
	case DMA_CONSUMER:
		if (strcmp(v, "inline") && strcmp(v, "thread"))
			return bench_usage_error("dma", "--consumer must be inline or thread");
		b->consumer_thread = !strcmp(v, "thread");
		return 0;
	case DMA_IOTLB:
		return dma_opt_iotlb(b, v);
	case DMA_TIME:
		t = strtod(v, &end);
		if (*end || !(t > 0) || t > 3600)
			return bench_usage_error("dma", "--time must be a number of seconds in (0, 3600]");
		b->seconds = t;
		return 0;
	default: /* DMA_ITERATIONS */
		if (!bench_opt_range(p, 1, 1u << 24, &b->iterations))
			return 2;
		return 0;
	}
}

/* Parse the command line: -1 to run, else the exit status.  Each option of
 * dma's own may be given once. */
static int dma_parse(int argc, char **argv, struct bench_opts *go, struct dma_cli *c)
{
	bool seen[DMA_NOPTS - BENCH_OPT_OWN] = { false };
	bool time_set = false;
	struct bench_parse p;
	int opt, err;

	memset(c, 0, sizeof(*c));
	c->sizes[0] = 4096;
	c->sizes[1] = 65536;
	c->sizes[2] = 1u << 20;
	c->nsizes = 3;
	c->modes[1] = true;
	c->nmodes = 2;
	c->base.granule_shift = 12;
	c->base.coherent = true;
	c->base.segments = 1;
	c->base.nqueues = 1;
	c->base.fq_size = 256;
	bench_parse_init(&p, "dma", dma_options, dma_help, go, argc, argv);
	while ((opt = bench_next_opt(&p)) > 0) {
		if (seen[opt - BENCH_OPT_OWN])
			return bench_usage_error("dma", "--%s given twice", dma_options[p.index].name);
		seen[opt - BENCH_OPT_OWN] = true;
		switch (opt) {
		case DMA_COHERENT:
		case DMA_NON_COHERENT:
			c->base.coherent = opt == DMA_COHERENT;
			break;
		case DMA_CHECK:
			c->base.check = true;
			break;
		case DMA_PROGRESS:
		case DMA_NO_PROGRESS:
			c->progress_set = true;
			c->progress_on = opt == DMA_PROGRESS;
			break;
		default:
			err = dma_opt_value(&p, c, opt, optarg);
			if (err)
				return err;
			time_set |= opt == DMA_TIME;
		}
	}
	if (opt < 0)
		return p.status;
	c->base.threads = go->threads ? go->threads : 1;
	if (!time_set)
		c->base.seconds = go->quick ? 0.2 : 1.0;
	return -1;
}

/* Defaults that depend on other options, and the checks across options:
 * 0, or the exit status. */
static int dma_resolve(struct dma_cli *c)
{
	struct dma_opts *b = &c->base;
	uint64_t gran = 1ull << b->granule_shift;

	if (b->nqueues == 0)
		b->nqueues = b->threads;
	if (c->nfmts == 0) {
		/* the default matrix: its formats that are built in and have the granule */
		for (size_t k = 0; k < bench_nfmts && c->nfmts < 8; k++)
			if (bench_fmts[k].dma_default && bench_fmt_leaf_sizes(bench_fmts[k].fmt, gran))
				c->fmts[c->nfmts++] = bench_fmts[k].fmt;
		/* and one nested row per pair (4 KiB granule: stage 2 in 1 GiB blocks) */
		for (int k = 0; k < 2 && gran == 4096 && c->nfmts < 8; k++) {
			enum ik_pt_fmt f = k ? IK_PT_VTD_FL : IK_PT_LPAE_S1;

			if (bench_fmt_find(f) && bench_fmt_find(dsys_nested_s2(f)) &&
			    bench_fmt_leaf_sizes(f, gran) && bench_fmt_leaf_sizes(dsys_nested_s2(f), gran)) {
				c->nested[c->nfmts] = true;
				c->fmts[c->nfmts++] = f;
			}
		}
	}
	for (int f = 0; f < c->nfmts; f++)
		if (!bench_fmt_leaf_sizes(c->fmts[f], gran) ||
		    (c->nested[f] && !bench_fmt_leaf_sizes(dsys_nested_s2(c->fmts[f]), gran)))
			return bench_usage_error("dma", "--granule: %s has no %lluK granule",
						 row_name(c->fmts[f], c->nested[f]),
						 (unsigned long long)(gran >> 10));
	for (int k = 0; k < c->nsizes; k++) {
		if (!c->sizes[k] || c->sizes[k] % gran || c->sizes[k] > (256ull << 20))
			return bench_usage_error("dma", "--size: %llu is not a multiple of the granule "
						 "in (0, 256M]", (unsigned long long)c->sizes[k]);
		if (b->segments > 1 &&
		    (c->sizes[k] % b->segments || (c->sizes[k] / b->segments) % gran))
			return bench_usage_error("dma", "--segments: size %llu does not split into %u "
						 "granule-aligned segments",
						 (unsigned long long)c->sizes[k], b->segments);
	}
	return 0;
}

static void dma_print_intro(const struct dma_opts *b)
{
	printf("iommukit-bench dma: end-to-end DMA through the soft IOMMU\n"
	       "  per iteration: alloc IOVA, map%s, device writes + reads every page, unmap,\n"
	       "  invalidate + sync (strict) or queue for a batched flush (deferred), free IOVA\n"
	       "  granule %lluK, %s walker, IOTLB %u entries, %u thread%s, %s queue%s,\n"
	       "  %s consumer%s; %s per configuration\n\n",
	       b->segments > 1 ? " (map_sg)" : "", (1ull << b->granule_shift) >> 10,
	       b->coherent ? "coherent" : "non-coherent", b->iotlb_set ? b->iotlb_entries : 512u,
	       b->threads, b->threads == 1 ? "" : "s", b->nqueues == 1 ? "one shared" : "per-CPU",
	       b->nqueues == 1 ? "" : "s", b->consumer_thread ? "threaded" : "inline",
	       b->check ? ", stale-translation checking" : "",
	       b->iterations ? "fixed iterations" : "timed");
	if (b->segments > 1)
		printf("  scatterlist: %u physically non-contiguous segments per buffer\n\n",
		       b->segments);
	print_header();
	fflush(stdout);
}

/* Run configuration o (number `done` + 1 of `total`) and print its row:
 * 0, or 1 when it failed (reported on stderr). */
static int dma_config(const struct dma_opts *o, bool json, bool progress, int done, int total)
{
	struct dma_result r;
	int err;

	if (progress) {
		char sz[32];

		fprintf(stderr, "\r  [%d/%d] %s %s %s ...        ", done + 1, total,
			row_name(o->fmt, o->nested), human_size(o->size, sz, sizeof(sz)),
			o->deferred ? "deferred" : "strict");
		fflush(stderr);
	}
	err = dma_run(o, &r);
	if (progress)
		fprintf(stderr, "\r%60s\r", "");
	if (err) {
		fprintf(stderr, "iommukit-bench dma: %s %llu bytes %s: %s\n",
			row_name(o->fmt, o->nested),
			(unsigned long long)o->size, o->deferred ? "deferred" : "strict",
			r.error[0] ? r.error : ik_strerror(err));
		return 1;
	}
	if (json)
		print_json(&r);
	else
		print_row(&r);
	fflush(stdout);
	return 0;
}

int bench_dma(int argc, char **argv, struct bench_opts *go)
{
	struct dma_cli c;
	int total, done = 0, rc = dma_parse(argc, argv, go, &c);
	bool progress;

	if (rc >= 0 || (rc = dma_resolve(&c)) != 0)
		return rc;
	total = c.nfmts * c.nsizes * c.nmodes;
	progress = c.progress_set ? c.progress_on : progress_wanted(total * c.base.seconds, go->json);
	if (!go->json)
		dma_print_intro(&c.base);
	for (int f = 0; f < c.nfmts; f++)
		for (int k = 0; k < c.nsizes; k++)
			for (int m = 0; m < c.nmodes; m++) {
				struct dma_opts o = c.base;

				o.fmt = c.fmts[f];
				o.nested = c.nested[f];
				o.size = c.sizes[k];
				o.deferred = c.modes[m];
				rc |= dma_config(&o, go->json, progress, done++, total);
			}
	return rc;
}
