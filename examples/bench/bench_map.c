/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench map - IO page-table map/unmap latency and maintenance counts.
 *
 * For each format, buffer size (4K .. 4M at a 2 MiB-aligned iova), page kind
 * (4 KiB pages with paddr offset by 4 KiB so blocks cannot be used, or blocks
 * where aligned) and walk mode (coherent; non-coherent with a counting-only
 * clean hook; non-coherent with a real cache-line clean loop), it times map
 * and unmap requests and reports ns per call and per page, cleans and bytes
 * cleaned, TLB hook calls, iotlb_sync_map calls, and table pages allocated
 * (new tables installed, whether the page came from the hooks or from the
 * table set's cache of freed pages) and freed (tables unlinked by the unmap
 * and released at gather sync), per call.  --per-pte-sync adds the old behaviour: one request
 * per page, so every PTE is cleaned and synced on its own.  Finally the
 * 30-segment 120 KiB scatter list: one map_sg request against 30 map calls.
 *
 * Timing: each sample times a batch of NREG requests on distinct 2 MiB-aligned
 * regions (so the clock's own cost is divided by NREG); the median over the
 * samples is reported.  Gathers are synced after the timed unmap batch.
 * The 2 MiB rows include the unmap of a 2 MiB block (one entry above the
 * last level cleared) and of 2 MiB of 4 KiB pages (one table pointer
 * cleared, tfreed 1).
 *
 * --baseline LIB: the same measurements on this build and on another one
 * loaded with dlopen(), alternating in one process (see ab_measure()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/vtd.h>
#include "bench.h"
#include "bench_baseline.h"	/* config.h; BENCH_BASELINE: --baseline is built */

#define K4 0x1000ull
#define M2 0x200000ull
#define NREG 8

/* The formats: bench_fmts (bench_fmts.c); pages up to 1G where the format
 * has them at the 4 KiB granule. */
#define NFMTS bench_nfmts

static const char *fname(const struct bench_fmt *f)
{
	const char *n = f->variant ? f->variant : ik_pt_fmt_name(f->fmt);

	return n ? n : "?";
}

/* ---- hooks: counting, and a real clean loop ---- */

enum clean_kind { CLEAN_COUNT, CLEAN_REAL };

struct bctx {
	enum clean_kind kind;
	uint64_t cleans, clean_bytes, tlb_calls, sync_maps;
};

static void h_clean(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	struct bctx *b = cookie;

	(void)iommu;
	b->cleans++;
	b->clean_bytes += size;
	if (b->kind == CLEAN_REAL)
		bench_clean(cpu, size);
}

static void h_flush_all(void *cookie)
{
	((struct bctx *)cookie)->tlb_calls++;
}

static void h_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 granule)
{
	(void)iova;
	(void)size;
	(void)granule;
	((struct bctx *)cookie)->tlb_calls++;
}

static void h_gather_add(void *cookie, struct ik_gather *g, ik_u64 iova, ik_u64 size, ik_u64 gran)
{
	((struct bctx *)cookie)->tlb_calls++;
	ik_gather_add(g, iova, size, gran);
}

static void h_iotlb_sync(void *cookie, struct ik_gather *g)
{
	(void)g;
	((struct bctx *)cookie)->tlb_calls++;
}

static void h_sync_map(void *cookie, ik_u64 iova, ik_u64 size)
{
	(void)iova;
	(void)size;
	((struct bctx *)cookie)->sync_maps++;
}

static const struct ik_pgtable_hooks bench_hooks = {
	NULL, NULL, h_clean, h_flush_all, h_flush_walk, h_gather_add, h_sync_map, h_iotlb_sync,
};

/* ---- the library calls, through pointers so that --baseline drives a
 * second build with the same code ---- */

struct pt_api {
	int (*create)(const struct ik_pgtable_cfg *cfg, struct ik_pgtable **out);
	void (*destroy)(struct ik_pgtable *pt);
	int (*map)(struct ik_pgtable *pt, ik_u64 iova, ik_u64 paddr, ik_u64 size, unsigned prot);
	int (*map_pages)(struct ik_pgtable *pt, ik_u64 iova, ik_u64 paddr, ik_u64 pgsize,
			 ik_u64 pgcount, unsigned prot);
	int (*map_sg)(struct ik_pgtable *pt, ik_u64 iova, const struct ik_seg *segs, ik_size n,
		      unsigned prot, ik_u64 *mapped);
	ik_s64 (*unmap)(struct ik_pgtable *pt, ik_u64 iova, ik_u64 size, struct ik_gather *g);
	int (*gather_sync)(struct ik_pgtable *pt, struct ik_gather *g);
	int (*iova_to_phys)(const struct ik_pgtable *pt, ik_u64 iova, ik_u64 *paddr,
			    ik_u64 *pgsize);
	void (*get_stats)(const struct ik_pgtable *pt, struct ik_pgtable_stats *st);
};

static const struct pt_api this_api = {
	ik_pgtable_create, ik_pgtable_destroy, ik_pgtable_map, ik_pgtable_map_pages,
	ik_pgtable_map_sg, ik_pgtable_unmap, ik_pgtable_gather_sync, ik_pgtable_iova_to_phys,
	ik_pgtable_get_stats,
};

/* The build measured now: this one, or with --baseline either of the two. */
static const struct pt_api *api = &this_api;

/* ---- one measurement ---- */

struct run {
	const struct bench_fmt *f;
	uint64_t size;
	bool blocks;		/* blocks allowed (paddr aligned like iova) */
	bool coherent;
	enum clean_kind kind;
	bool per_pte;		/* one request per 4 KiB page */
	bool defer;		/* IK_PT_QUIRK_DEFER_LEAF_CLEAN (non-coherent) */
	unsigned samples;
};

struct result {
	double ns_median, ns_p99;
	double ns_iqm;		/* interquartile mean (--baseline compares these) */
	double cleans, clean_bytes, tlb_calls, sync_maps, tables_alloc, tables_freed;
	double sync_ns;
	uint64_t pgsize;	/* largest leaf used */
};

struct counters {
	uint64_t cleans, clean_bytes, tlb, sync_maps, talloc, tfreed;
};

static void snap(const struct bctx *b, const struct ik_pgtable *pt, struct counters *c)
{
	struct ik_pgtable_stats st;

	api->get_stats(pt, &st);
	c->cleans = b->cleans;
	c->clean_bytes = b->clean_bytes;
	c->tlb = b->tlb_calls;
	c->sync_maps = b->sync_maps;
	/* new tables: from the hooks or from the freed-table cache */
	c->talloc = st.tables_alloc + st.cache_hits;
	c->tfreed = st.tables_freed;
}

static void diff(struct result *r, const struct counters *a, const struct counters *b, double n,
		 bool map)
{
	(void)map;
	r->cleans = (double)(b->cleans - a->cleans) / n;
	r->clean_bytes = (double)(b->clean_bytes - a->clean_bytes) / n;
	r->tlb_calls = (double)(b->tlb - a->tlb) / n;
	r->sync_maps = (double)(b->sync_maps - a->sync_maps) / n;
	r->tables_alloc = (double)(b->talloc - a->talloc) / n;
	r->tables_freed = (double)(b->tfreed - a->tfreed) / n;
}

static int do_map(struct ik_pgtable *pt, const struct run *r, uint64_t iova, uint64_t pa)
{
	uint64_t off;
	int ret;

	if (!r->per_pte)
		return api->map(pt, iova, pa, r->size, IK_PROT_READ | IK_PROT_WRITE);
	for (off = 0; off < r->size; off += K4) {
		ret = api->map_pages(pt, iova + off, pa + off, K4, 1, IK_PROT_READ | IK_PROT_WRITE);
		if (ret)
			return ret;
	}
	return 0;
}

static int64_t do_unmap(struct ik_pgtable *pt, const struct run *r, uint64_t iova,
			struct ik_gather *g)
{
	uint64_t off;
	int64_t total = 0, n;

	if (!r->per_pte)
		return api->unmap(pt, iova, r->size, g);
	for (off = 0; off < r->size; off += K4) {
		n = api->unmap(pt, iova + off, K4, g);
		if (n < 0)
			return n;
		total += n;
		api->gather_sync(pt, g); /* the old way: sync each page */
	}
	return total;
}

/* The mean of the middle half of sorted samples: robust to the outliers of
 * a busy machine, and finer than a median when the clock is coarse (a
 * median of batches then sits on a multiple of the clock's step). */
static double iqm(const struct bench_samples *s)
{
	size_t i, lo = s->n / 4, hi = s->n - s->n / 4;
	double sum = 0;

	if (hi <= lo)
		return s->n ? (double)s->v[s->n / 2] : 0;
	for (i = lo; i < hi; i++)
		sum += (double)s->v[i];
	return sum / (double)(hi - lo);
}

/* The leaf size the engine chooses for r's buffer at iova -> pa (0 if the
 * map fails); the table set is left as it was. */
static uint64_t chosen_leaf(struct ik_pgtable *pt, const struct run *r, uint64_t iova, uint64_t pa)
{
	uint64_t got = 0, sz = 0;
	struct ik_gather g;

	if (api->map(pt, iova, pa, r->size, IK_PROT_READ | IK_PROT_WRITE))
		return 0;
	api->iova_to_phys(pt, iova, &got, &sz);
	ik_gather_init(&g);
	api->unmap(pt, iova, r->size, &g);
	api->gather_sync(pt, &g);
	return sz;
}

static int measure(const struct run *r, struct result *map, struct result *unmap)
{
	struct bctx b;
	struct ik_pgtable_cfg cfg;
	struct ik_pgtable *pt;
	struct bench_samples sm, su;
	struct bench_stats st;
	struct counters c0, c1, c2;
	struct ik_gather g[NREG];
	uint64_t base = 1ull << 40, slot = (r->size + M2 - 1) & ~(M2 - 1);
	uint64_t pa0 = 1ull << 36, sync_ns = 0, maxleaf = 0;
	unsigned s, i, warm = 2;
	int ret;

	memset(&b, 0, sizeof(b));
	b.kind = r->kind;
	memset(&cfg, 0, sizeof(cfg));
	cfg.fmt = r->f->fmt;
	cfg.ias = r->f->ias;
	cfg.oas = r->f->oas;
	cfg.pgsize_bitmap = bench_fmt_leaf_sizes(r->f->fmt, K4);
	cfg.quirks = r->f->quirks | (r->defer ? IK_PT_QUIRK_DEFER_LEAF_CLEAN : 0);
	cfg.fmt_flags = r->f->fmt_flags;
	cfg.coherent = r->coherent;
	cfg.hooks = &bench_hooks;
	cfg.cookie = &b;
	ret = api->create(&cfg, &pt);
	if (ret)
		return ret;
	slot *= 2; /* keep regions in distinct last-level tables */
	if (bench_samples_init(&sm, r->samples) || bench_samples_init(&su, r->samples))
		return -ENOMEM;
	for (s = 0; s < r->samples + warm; s++) {
		uint64_t t0, t1, t2, t3;

		if (s == warm)
			snap(&b, pt, &c0);
		t0 = bench_now_ns();
		for (i = 0; i < NREG; i++) {
			uint64_t iova = base + i * slot;
			uint64_t pa = pa0 + i * slot + (r->blocks ? 0 : K4);

			ret = do_map(pt, r, iova, pa);
			if (ret)
				goto out;
		}
		t1 = bench_now_ns();
		if (s == warm)
			snap(&b, pt, &c1);
		for (i = 0; i < NREG; i++) {
			ik_gather_init(&g[i]);
			if (do_unmap(pt, r, base + i * slot, &g[i]) != (int64_t)r->size) {
				ret = -EIO;
				goto out;
			}
		}
		t2 = bench_now_ns();
		if (s == warm) {
			snap(&b, pt, &c2);
			/* tables unlinked by these unmaps, released at sync */
			for (i = 0; i < NREG; i++)
				c2.tfreed += g[i].nr_tables;
		}
		for (i = 0; i < NREG; i++)
			api->gather_sync(pt, &g[i]);
		t3 = bench_now_ns();
		if (s >= warm) {
			bench_samples_add(&sm, (t1 - t0));
			bench_samples_add(&su, (t2 - t1));
			sync_ns += t3 - t2;
		}
	}
	/* counts: from one steady-state sample */
	diff(map, &c0, &c1, NREG, true);
	diff(unmap, &c1, &c2, NREG, false);
	maxleaf = chosen_leaf(pt, r, base, pa0 + (r->blocks ? 0 : K4));
	bench_stats_compute(&sm, &st);
	map->ns_median = (double)st.p50 / NREG;
	map->ns_p99 = (double)st.p99 / NREG;
	map->ns_iqm = iqm(&sm) / NREG;
	bench_stats_compute(&su, &st);
	unmap->ns_median = (double)st.p50 / NREG;
	unmap->ns_p99 = (double)st.p99 / NREG;
	unmap->ns_iqm = iqm(&su) / NREG;
	unmap->sync_ns = (double)sync_ns / r->samples / NREG;
	map->sync_ns = 0;
	map->pgsize = unmap->pgsize = r->per_pte ? K4 : maxleaf;
	ret = 0;
out:
	bench_samples_free(&sm);
	bench_samples_free(&su);
	api->destroy(pt);
	return ret;
}

/* The 30-segment 120 KiB scatter list: one request, or 30 map calls. */
static int measure_sg(const struct bench_fmt *f, bool coherent, enum clean_kind kind, bool separate,
		      unsigned samples, struct result *res)
{
	struct bctx b;
	struct ik_pgtable_cfg cfg;
	struct ik_pgtable *pt;
	struct bench_samples sm;
	struct bench_stats st;
	struct ik_seg segs[30];
	struct counters c0, c1;
	uint64_t base = 1ull << 40;
	unsigned s, i, k;
	int ret;

	memset(&b, 0, sizeof(b));
	b.kind = kind;
	memset(&cfg, 0, sizeof(cfg));
	cfg.fmt = f->fmt;
	cfg.ias = f->ias;
	cfg.oas = f->oas;
	cfg.pgsize_bitmap = bench_fmt_leaf_sizes(f->fmt, K4);
	cfg.quirks = f->quirks;
	cfg.fmt_flags = f->fmt_flags;
	cfg.coherent = coherent;
	cfg.hooks = &bench_hooks;
	cfg.cookie = &b;
	ret = api->create(&cfg, &pt);
	if (ret)
		return ret;
	for (k = 0; k < 30; k++) {
		segs[k].paddr = (1ull << 36) + (uint64_t)k * 3 * K4; /* non-contiguous */
		segs[k].len = K4;
	}
	if (bench_samples_init(&sm, samples))
		return -ENOMEM;
	for (s = 0; s < samples + 2; s++) {
		uint64_t t0, t1;

		if (s == 2)
			snap(&b, pt, &c0);
		t0 = bench_now_ns();
		for (i = 0; i < NREG; i++) {
			uint64_t iova = base + (uint64_t)i * 2 * M2;

			if (!separate) {
				ret = api->map_sg(pt, iova, segs, 30, IK_PROT_READ | IK_PROT_WRITE,
						  NULL);
			} else {
				for (k = 0; k < 30 && !ret; k++)
					ret = api->map(pt, iova + k * K4, segs[k].paddr, K4,
						       IK_PROT_READ | IK_PROT_WRITE);
			}
			if (ret)
				goto out;
		}
		t1 = bench_now_ns();
		if (s == 2)
			snap(&b, pt, &c1);
		for (i = 0; i < NREG; i++) {
			struct ik_gather g;

			ik_gather_init(&g);
			api->unmap(pt, base + (uint64_t)i * 2 * M2, 30 * K4, &g);
			api->gather_sync(pt, &g);
		}
		if (s >= 2)
			bench_samples_add(&sm, t1 - t0);
	}
	diff(res, &c0, &c1, NREG, true);
	bench_stats_compute(&sm, &st);
	res->ns_median = (double)st.p50 / NREG;
	res->ns_p99 = (double)st.p99 / NREG;
	res->ns_iqm = iqm(&sm) / NREG;
	res->pgsize = K4;
	res->sync_ns = 0;
out:
	bench_samples_free(&sm);
	api->destroy(pt);
	return ret;
}

/* ---- output ---- */

static const char *mode_name(bool per_pte, enum clean_kind k)
{
	if (per_pte)
		return "per-pte";
	return k == CLEAN_REAL ? bench_clean_insn() : "count";
}

/* The text table's clean column: the mode, with "+dfr" when leaf cleans were
 * deferred to the end of the request (IK_PT_QUIRK_DEFER_LEAF_CLEAN). */
static const char *mode_label(const char *mode, bool defer, char *buf, size_t n)
{
	if (!defer)
		return mode;
	snprintf(buf, n, "%s+dfr", mode);
	return buf;
}

static void emit(const struct bench_opts *o, const char *fmt, uint64_t size, bool coherent,
		 const char *mode, bool defer, const char *op, const struct result *r)
{
	double pages = (double)size / (double)K4;
	char lb[32];

	if (o->json) {
		printf("{\"bench\":\"map\",\"fmt\":\"%s\",\"size\":%llu,\"pgsize\":%llu,"
		       "\"coherent\":%s,\"clean_mode\":\"%s\",\"defer_leaf_clean\":%s,\"op\":\"%s\","
		       "\"ns_median\":%.1f,"
		       "\"ns_p99\":%.1f,\"ns_per_page\":%.2f,\"cleans\":%.2f,\"clean_bytes\":%.1f,"
		       "\"tlb_calls\":%.2f,\"sync_map_calls\":%.2f,\"tables_alloc\":%.2f,"
		       "\"tables_freed\":%.2f}\n",
		       fmt, (unsigned long long)size, (unsigned long long)r->pgsize,
		       coherent ? "true" : "false", mode, defer ? "true" : "false", op, r->ns_median,
		       r->ns_p99, r->ns_median / pages, r->cleans, r->clean_bytes, r->tlb_calls,
		       r->sync_maps, r->tables_alloc, r->tables_freed);
		return;
	}
	printf("%-8s %7lluK %7lluK %-5s %-14s %-6s %10.1f %8.2f %7.2f %9.1f %7.2f %5.2f %6.2f %6.2f",
	       fmt, (unsigned long long)(size >> 10), (unsigned long long)(r->pgsize >> 10),
	       coherent ? "coh" : "nc", mode_label(mode, defer, lb, sizeof(lb)), op, r->ns_median,
	       r->ns_median / pages, r->cleans, r->clean_bytes, r->tlb_calls, r->sync_maps,
	       r->tables_alloc, r->tables_freed);
	if (r->cleans > 0 && strcmp(mode, "count") && strcmp(mode, "per-pte"))
		printf("  %.1f ns/clean", r->ns_median / r->cleans);
	if (r->sync_ns > 0)
		printf("  (+%.1f ns gather sync)", r->sync_ns);
	printf("\n");
}

static void header(const struct bench_opts *o)
{
	if (o->json)
		return;
	printf("map: IO page-table map/unmap per call (median of batches of %d requests);\n"
	       "counts per call: cleans, bytes cleaned, TLB hook calls, iotlb_sync_map calls,\n"
	       "tables installed (talloc) / unlinked and released at gather sync (tfreed).\n"
	       "+dfr: leaf cleans deferred to the end of the request\n"
	       "(IK_PT_QUIRK_DEFER_LEAF_CLEAN).\n", NREG);
	printf("%-8s %8s %8s %-5s %-14s %-6s %10s %8s %7s %9s %7s %5s %6s %6s\n", "fmt", "size",
	       "pgsize", "walk", "clean", "op", "ns/call", "ns/page", "cleans", "bytes", "tlb",
	       "sync", "talloc", "tfreed");
}

/* --fmt all (text): one line per measurement, one column pair per format. */
static void side_header(const bool *sel)
{
	size_t fi;

	printf("map --fmt all: ns per call (median of batches of %d requests) and cleans per call,\n"
	       "formats side by side.  clean: count = counting-only hook, the instruction = a real\n"
	       "clean loop, per-pte = one request per page, +dfr = leaf cleans deferred to the end\n"
	       "of the request (IK_PT_QUIRK_DEFER_LEAF_CLEAN).  --fmt NAME for every count.\n", NREG);
	printf("%8s %8s %-5s %-14s %-6s", "", "", "", "", "");
	for (fi = 0; fi < NFMTS; fi++)
		if (sel[fi])
			printf(" | %17s", fname(&bench_fmts[fi]));
	printf("\n%8s %8s %-5s %-14s %-6s", "size", "pgsize", "walk", "clean", "op");
	for (fi = 0; fi < NFMTS; fi++)
		if (sel[fi])
			printf(" | %9s %7s", "ns/call", "cleans");
	printf("\n");
}

static void side_row(uint64_t size, bool coherent, const char *label, const char *op,
		     const struct result *rs, const bool *sel)
{
	uint64_t pgsize = 0;
	size_t fi;

	for (fi = 0; fi < NFMTS; fi++)
		if (sel[fi] && rs[fi].pgsize > pgsize)
			pgsize = rs[fi].pgsize;
	printf("%7lluK %7lluK %-5s %-14s %-6s", (unsigned long long)(size >> 10),
	       (unsigned long long)(pgsize >> 10), coherent ? "coh" : "nc", label, op);
	for (fi = 0; fi < NFMTS; fi++)
		if (sel[fi])
			printf(" | %9.1f %7.2f", rs[fi].ns_median, rs[fi].cleans);
	printf("\n");
}

/* ---- the subcommand ---- */

/* What the command line asked for. */
struct map_opts {
	const uint64_t *sizes;
	size_t nsizes;
	uint64_t one_size;		/* --size */
	unsigned samples;
	bool per_pte;			/* --per-pte-sync */
	bool sel[BENCH_FMTS_MAX];	/* the formats to run */
	bool side;			/* several formats, text: side by side */
	unsigned rounds;		/* --rounds (--baseline) */
	const struct pt_api *base;	/* --baseline LIB, or NULL */
	const struct pt_api *cur;	/* this build, or --candidate LIB */
	const char *base_path, *cand_path;
};

/* ---- --baseline: this build against another, in one process ---- */

/*
 * Each measurement (one format, size, page kind and walk mode; and the
 * scatter list) runs `rounds` times on each build, alternating between the
 * two (who goes first alternates too), so that both see the same machine;
 * every run is a whole measure() (its own table set, warm-up and samples).
 * A run's time is the interquartile mean of its batches (iqm(): finer than
 * their median when the clock is coarse); the ratio reported is the median
 * over the rounds of this build's over the baseline's, and the times are the
 * medians of the rounds' times.
 * The counts (cleans, tables installed and released) are each build's own,
 * from its last round: they show what work changed.  The other build must
 * take the same config, hooks, gather and stats structs (unchanged since
 * 0.1.0).
 */
struct pt_lib {
	struct pt_api api;
};

static struct pt_lib base_lib, cand_lib;

static int ab_load(const char *path, struct pt_lib *l)
{
#ifdef BENCH_BASELINE
	/* Deep binding: the other build's calls into its own exported
	 * functions must not land in this build's. */
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
	struct pt_api *a = &l->api;

	if (!h) {
		fprintf(stderr, "iommukit-bench map: --baseline: %s\n", dlerror());
		return 2;
	}
	*(void **)&a->create = dlsym(h, "ik_pgtable_create");
	*(void **)&a->destroy = dlsym(h, "ik_pgtable_destroy");
	*(void **)&a->map = dlsym(h, "ik_pgtable_map");
	*(void **)&a->map_pages = dlsym(h, "ik_pgtable_map_pages");
	*(void **)&a->map_sg = dlsym(h, "ik_pgtable_map_sg");
	*(void **)&a->unmap = dlsym(h, "ik_pgtable_unmap");
	*(void **)&a->gather_sync = dlsym(h, "ik_pgtable_gather_sync");
	*(void **)&a->iova_to_phys = dlsym(h, "ik_pgtable_iova_to_phys");
	*(void **)&a->get_stats = dlsym(h, "ik_pgtable_get_stats");
	if (!a->create || !a->destroy || !a->map || !a->map_pages || !a->map_sg || !a->unmap ||
	    !a->gather_sync || !a->iova_to_phys || !a->get_stats) {
		fprintf(stderr, "iommukit-bench map: --baseline: %s: not an iommukit library\n",
			path);
		return 2;
	}
	return 0;
#else
	(void)path;
	(void)l;
	fprintf(stderr, "iommukit-bench map: --baseline: not available in this build (it needs"
			" dlopen() with RTLD_DEEPBIND, and no sanitizer)\n");
	return 2;
#endif
}

/* What one A/B measurement reports, per op (0 map, 1 unmap). */
struct ab_res {
	double base_ns[2], ns[2], ratio[2];
	struct result base[2], cur[2];	/* each build's last round (counts) */
};

/* One measurement of either build: fills rm (and ru, unless NULL). */
typedef int (*ab_fn)(const void *arg, struct result *rm, struct result *ru);

static int ab_measure(const struct map_opts *m, ab_fn fn, const void *arg, struct ab_res *out)
{
	unsigned n = m->rounds, r, k;
	double *v = calloc(6 * (size_t)n, sizeof(double));
	int ret = 0;

	if (!v)
		return -ENOMEM;
	for (r = 0; r < n && !ret; r++) {
		for (k = 0; k < 2 && !ret; k++) {
			bool cur = ((r & 1) != 0) == (k == 0); /* alternate who goes first */
			struct result *rm = cur ? &out->cur[0] : &out->base[0];
			struct result *ru = cur ? &out->cur[1] : &out->base[1];

			memset(rm, 0, sizeof(*rm));
			memset(ru, 0, sizeof(*ru));
			api = cur ? m->cur : m->base;
			ret = fn(arg, rm, ru);
		}
		for (k = 0; k < 2 && !ret; k++) {
			v[(2 * k) * n + r] = out->base[k].ns_iqm;
			v[(2 * k + 1) * n + r] = out->cur[k].ns_iqm;
			v[(4 + k) * n + r] = out->base[k].ns_iqm > 0
						     ? out->cur[k].ns_iqm / out->base[k].ns_iqm
						     : 1;
		}
	}
	api = &this_api;
	for (k = 0; k < 2 && !ret; k++) {
		out->base_ns[k] = bench_median(v + (2 * k) * n, n);
		out->ns[k] = bench_median(v + (2 * k + 1) * n, n);
		out->ratio[k] = bench_median(v + (4 + k) * n, n);
	}
	free(v);
	return ret;
}

static void ab_emit(const struct bench_opts *o, const struct map_opts *m, const char *fmt,
		    uint64_t size, bool coherent, const char *mode, bool defer, const char *op,
		    const struct ab_res *a, unsigned k)
{
	const struct result *b = &a->base[k], *c = &a->cur[k];
	char lb[32];

	if (o->json) {
		printf("{\"bench\":\"map\",\"mode\":\"baseline\",\"fmt\":\"%s\",\"size\":%llu,"
		       "\"pgsize\":%llu,\"coherent\":%s,\"clean_mode\":\"%s\","
		       "\"defer_leaf_clean\":%s,\"op\":\"%s\",\"rounds\":%u,"
		       "\"base_ns\":%.1f,\"ns\":%.1f,\"ratio\":%.3f,"
		       "\"base_cleans\":%.2f,\"cleans\":%.2f,\"base_clean_bytes\":%.1f,"
		       "\"clean_bytes\":%.1f,\"base_tables_alloc\":%.2f,\"tables_alloc\":%.2f,"
		       "\"base_tables_freed\":%.2f,\"tables_freed\":%.2f}\n",
		       fmt, (unsigned long long)size, (unsigned long long)c->pgsize,
		       coherent ? "true" : "false", mode, defer ? "true" : "false", op, m->rounds,
		       a->base_ns[k], a->ns[k], a->ratio[k], b->cleans, c->cleans, b->clean_bytes,
		       c->clean_bytes, b->tables_alloc, c->tables_alloc, b->tables_freed,
		       c->tables_freed);
		return;
	}
	printf("%-12s %7lluK %7lluK %-5s %-14s %-6s %9.1f %9.1f %6.3f %6.2f %6.2f %6.2f %6.2f\n",
	       fmt, (unsigned long long)(size >> 10), (unsigned long long)(c->pgsize >> 10),
	       coherent ? "coh" : "nc", mode_label(mode, defer, lb, sizeof(lb)), op, a->base_ns[k],
	       a->ns[k], a->ratio[k], b->cleans, c->cleans, b->tables_freed, c->tables_freed);
}

static void ab_header(const struct bench_opts *o, const struct map_opts *m)
{
	if (o->json)
		return;
	printf("map --baseline %s: %s against that one in one process,\n"
	       "%u rounds per measurement alternating between the two builds (who goes first\n"
	       "alternates); base, this: medians over the rounds of ns per call (each round\n"
	       "the interquartile mean of batches of %d requests); ratio: median of\n"
	       "this/base per round;\n"
	       "cleans and tables released per call (tfreed), baseline and this build.\n",
	       m->base_path, m->cand_path ? m->cand_path : "this build", m->rounds, NREG);
	printf("%-12s %8s %8s %-5s %-14s %-6s %9s %9s %6s %6s %6s %6s %6s\n", "fmt", "size",
	       "pgsize", "walk", "clean", "op", "base", "this", "ratio", "cl.b", "cl", "tf.b",
	       "tf");
}

/* measure() and measure_sg() as ab_fn. */
struct sg_arg {
	const struct bench_fmt *f;
	bool separate;
	unsigned samples;
};


enum {
	MAP_FMT = BENCH_OPT_OWN, MAP_SIZE, MAP_SAMPLES, MAP_PER_PTE_SYNC, MAP_BASELINE,
	MAP_CANDIDATE, MAP_ROUNDS
};

static const struct option map_options[] = {
	BENCH_OPTS_COMMON, BENCH_OPTS_JSON, BENCH_OPTS_QUICK,
	{ "fmt", required_argument, NULL, MAP_FMT },
	{ "size", required_argument, NULL, MAP_SIZE },
	{ "samples", required_argument, NULL, MAP_SAMPLES },
	{ "per-pte-sync", no_argument, NULL, MAP_PER_PTE_SYNC },
	{ "baseline", required_argument, NULL, MAP_BASELINE },
	{ "candidate", required_argument, NULL, MAP_CANDIDATE },
	{ "rounds", required_argument, NULL, MAP_ROUNDS },
	BENCH_OPTS_END,
};

static void map_help(void)
{
	size_t fi;

	printf("usage: iommukit-bench map [--fmt NAME|all] [--size BYTES] [--per-pte-sync]\n"
	       "                          [--samples N] [--quick] [--json]\n"
	       "                          [--baseline LIB [--candidate LIB] [--rounds N]]\n"
	       "  formats:");
	for (fi = 0; fi < NFMTS; fi++)
		printf(" %s", fname(&bench_fmts[fi]));
	printf(" (default %s; 'all': side by side)\n"
	       "  map and unmap latency for 4K..4M buffers at a 2 MiB-aligned iova, 4 KiB\n"
	       "  pages vs blocks, coherent vs non-coherent (counting-only clean, and the\n"
	       "  real clean instruction: %s), each non-coherent mode also with leaf\n"
	       "  cleans deferred to the end of the request (+dfr); --per-pte-sync adds\n"
	       "  one request per page; then the 30-segment 120 KiB scatterlist as one\n"
	       "  map_sg vs 30 map calls.\n"
	       "  --baseline LIB: every measurement also on another build's libiommukit.so\n"
	       "  (dlopen), alternating between the two in one process for --rounds N\n"
	       "  rounds (default 7, --quick 3): both times, their ratio (this/base) and\n"
	       "  both builds' counts.  --candidate LIB: load 'this' build too.\n",
	       fname(&bench_fmts[0]), bench_clean_insn() ? bench_clean_insn() : "none here");
}

/* --fmt NAME|all: 0, or the exit status of a bad name. */
static int map_select(struct map_opts *m, const char *arg)
{
	bool found = false;
	size_t fi;

	for (fi = 0; fi < NFMTS; fi++) {
		m->sel[fi] = !strcmp(arg, "all") || !strcmp(arg, fname(&bench_fmts[fi]));
		found |= m->sel[fi];
	}
	return found ? 0 : bench_usage_error("map", "unknown format '%s'", arg);
}

/* Parse the command line into *m: -1 to run, else the exit status. */
static int map_parse(int argc, char **argv, struct bench_opts *o, struct map_opts *m)
{
	static const uint64_t all_sizes[] = { 4 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10,
					      1 << 20, 2 << 20, 4 << 20 };
	static const uint64_t quick_sizes[] = { 4 << 10, 1 << 20, 2 << 20 };
	struct bench_parse p;
	size_t fi, nsel = 0;
	uint64_t v;
	int c;

	memset(m, 0, sizeof(*m));
	m->sel[0] = true;
	bench_parse_init(&p, "map", map_options, map_help, o, argc, argv);
	while ((c = bench_next_opt(&p)) > 0) {
		switch (c) {
		case MAP_FMT:
			if (map_select(m, optarg))
				return 2;
			break;
		case MAP_SIZE:
			if (!bench_parse_u64(optarg, &m->one_size) || m->one_size == 0 ||
			    (m->one_size & (K4 - 1)) || m->one_size > (64ull << 20))
				return bench_usage_error("map", "--size needs a multiple of 4K up to 64M");
			break;
		case MAP_SAMPLES:
			if (!bench_opt_range(&p, 1, 100000, &v))
				return 2;
			m->samples = (unsigned)v;
			break;
		case MAP_PER_PTE_SYNC:
			m->per_pte = true;
			break;
		case MAP_BASELINE:
			m->base_path = optarg;
			break;
		case MAP_CANDIDATE:
			m->cand_path = optarg;
			break;
		case MAP_ROUNDS:
			if (!bench_opt_range(&p, 1, 1000, &v))
				return 2;
			m->rounds = (unsigned)v;
			break;
		}
	}
	if (c < 0)
		return p.status;
	if (m->cand_path && !m->base_path)
		return bench_usage_error("map", "--candidate needs --baseline");
	if (m->rounds && !m->base_path)
		return bench_usage_error("map", "--rounds needs --baseline");
	if (!m->rounds)
		m->rounds = o->quick ? 3 : 7;
	m->sizes = o->quick ? quick_sizes : all_sizes;
	m->nsizes = o->quick ? 3 : 8;
	if (m->one_size) {
		m->sizes = &m->one_size;
		m->nsizes = 1;
	}
	if (!m->samples)
		m->samples = o->quick ? 5 : 41;
	for (fi = 0; fi < NFMTS; fi++)
		nsel += m->sel[fi];
	m->side = !o->json && nsel > 1 && !m->base_path;
	m->cur = &this_api;
	if (m->base_path) {
		int rc = ab_load(m->base_path, &base_lib);

		if (!rc && m->cand_path)
			rc = ab_load(m->cand_path, &cand_lib);
		if (rc)
			return rc;
		m->base = &base_lib.api;
		if (m->cand_path)
			m->cur = &cand_lib.api;
	}
	return -1;
}

static int ab_run_fn(const void *arg, struct result *rm, struct result *ru)
{
	return measure((const struct run *)arg, rm, ru);
}

static int ab_sg_fn(const void *arg, struct result *rm, struct result *ru)
{
	const struct sg_arg *a = arg;

	(void)ru;
	return measure_sg(a->f, false, CLEAN_COUNT, a->separate, a->samples, rm);
}

/* One configuration (size, pages or blocks, walk mode) on every selected
 * format: rows, or one side-by-side row pair.  0, or 1 on a failure. */
static int map_config(const struct bench_opts *o, const struct map_opts *m, struct run *r,
		      struct result *rm, struct result *ru)
{
	const char *mname = mode_name(r->per_pte, r->kind);
	char lb[32];
	size_t fi;
	int ret;

	for (fi = 0; fi < NFMTS; fi++) {
		if (!m->sel[fi])
			continue;
		r->f = &bench_fmts[fi];
		if (m->base) {
			struct ab_res a;

			ret = ab_measure(m, ab_run_fn, r, &a);
			if (ret) {
				fprintf(stderr, "iommukit-bench map: %s: %s\n", fname(r->f),
					ik_strerror(ret));
				return 1;
			}
			ab_emit(o, m, fname(r->f), r->size, r->coherent, mname, r->defer, "map", &a,
				0);
			ab_emit(o, m, fname(r->f), r->size, r->coherent, mname, r->defer, "unmap",
				&a, 1);
			continue;
		}
		memset(&rm[fi], 0, sizeof(rm[fi]));
		memset(&ru[fi], 0, sizeof(ru[fi]));
		ret = measure(r, &rm[fi], &ru[fi]);
		if (ret) {
			fprintf(stderr, "iommukit-bench map: %s: %s\n", fname(r->f), ik_strerror(ret));
			return 1;
		}
		if (!m->side) {
			emit(o, fname(r->f), r->size, r->coherent, mname, r->defer, "map", &rm[fi]);
			emit(o, fname(r->f), r->size, r->coherent, mname, r->defer, "unmap", &ru[fi]);
		}
	}
	if (m->side) {
		mname = mode_label(mname, r->defer, lb, sizeof(lb));
		side_row(r->size, r->coherent, mname, "map", rm, m->sel);
		side_row(r->size, r->coherent, mname, "unmap", ru, m->sel);
	}
	return 0;
}

/* Every size, pages and blocks, every walk mode: 0 coherent; non-coherent:
 * 1 count, 2 count deferred, 3 real, 4 real deferred, 5 one request per
 * page.  0, or 1 on a failure. */
static int map_matrix(const struct bench_opts *o, const struct map_opts *m, struct result *rm,
		      struct result *ru)
{
	size_t si;
	unsigned blk, mode;

	for (si = 0; si < m->nsizes; si++) {
		for (blk = 0; blk < 2; blk++) {
			if (blk && m->sizes[si] < M2)
				continue; /* no block fits: same as pages */
			for (mode = 0; mode < 6; mode++) {
				struct run r;

				memset(&r, 0, sizeof(r));
				r.size = m->sizes[si];
				r.blocks = blk;
				r.samples = m->samples;
				r.coherent = mode == 0;
				r.kind = mode == 3 || mode == 4 ? CLEAN_REAL : CLEAN_COUNT;
				r.defer = mode == 2 || mode == 4;
				r.per_pte = mode == 5;
				if (r.kind == CLEAN_REAL && !bench_clean_insn())
					continue;
				if (mode == 5 && (!m->per_pte || blk))
					continue;
				if (map_config(o, m, &r, rm, ru))
					return 1;
			}
		}
	}
	return 0;
}

/* The scatterlist: one request vs 30 calls, non-coherent counting. */
static int map_scatterlist(const struct bench_opts *o, const struct map_opts *m,
			   struct result *rm)
{
	unsigned sep;
	size_t fi;
	int ret;

	for (sep = 0; sep < 2; sep++) {
		for (fi = 0; fi < NFMTS; fi++) {
			if (!m->sel[fi])
				continue;
			if (m->base) {
				struct sg_arg sa = { &bench_fmts[fi], sep != 0, m->samples };
				struct ab_res a;

				ret = ab_measure(m, ab_sg_fn, &sa, &a);
				if (ret) {
					fprintf(stderr, "iommukit-bench map: %s: %s\n",
						fname(&bench_fmts[fi]), ik_strerror(ret));
					return 1;
				}
				ab_emit(o, m, fname(&bench_fmts[fi]), 30 * K4, false,
					sep ? "per-pte" : "count", false, "map_sg", &a, 0);
				continue;
			}
			memset(&rm[fi], 0, sizeof(rm[fi]));
			ret = measure_sg(&bench_fmts[fi], false, CLEAN_COUNT, sep, m->samples, &rm[fi]);
			if (ret) {
				fprintf(stderr, "iommukit-bench map: %s: %s\n", fname(&bench_fmts[fi]),
					ik_strerror(ret));
				return 1;
			}
			if (!m->side)
				emit(o, fname(&bench_fmts[fi]), 30 * K4, false, sep ? "per-pte" : "count",
				     false, "map_sg", &rm[fi]);
		}
		if (m->side)
			side_row(30 * K4, false, sep ? "per-pte" : "count", "map_sg", rm, m->sel);
	}
	return 0;
}

int bench_map(int argc, char **argv, struct bench_opts *o)
{
	struct map_opts m;
	struct result rm[BENCH_FMTS_MAX], ru[BENCH_FMTS_MAX];
	int rc = map_parse(argc, argv, o, &m);

	if (rc >= 0)
		return rc;
	if (m.base)
		ab_header(o, &m);
	else if (m.side)
		side_header(m.sel);
	else
		header(o);
	memset(rm, 0, sizeof(rm));
	memset(ru, 0, sizeof(ru));
	if (map_matrix(o, &m, rm, ru) || map_scatterlist(o, &m, rm))
		return 1;
	return 0;
}
