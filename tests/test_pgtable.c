/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * pgtable: the generic page-table suite.  Every test that is not about one
 * format's bits runs over every row of `fmt_cases` below (Check loop tests),
 * so a new format gets the whole suite by adding one line there.
 *
 * The harness (struct th) is the table set's hooks: table pages come from a
 * fault-injecting allocator and get fake IOMMU addresses, so the walker reads
 * tables only through its own address map (never the engine's pointers);
 * cleans, syncs and gather calls are counted.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/fmt/riscv.h>
#include <iommukit/fmt/amd.h>
#include "testlib.h"

#define SZ_4K 0x1000ull
#define SZ_16K 0x4000ull
#define SZ_64K 0x10000ull
#define SZ_2M 0x200000ull
#define SZ_32M 0x2000000ull
#define SZ_512M 0x20000000ull
#define SZ_1G 0x40000000ull
#define SZ_64G (1ull << 36)
#define SZ_512G (1ull << 39)
#define SZ_4T (1ull << 42)

#define PROT_RW (IK_PROT_READ | IK_PROT_WRITE)
#define PROT_LPAE (IK_PROT_READ | IK_PROT_WRITE | IK_PROT_NOEXEC | IK_PROT_CACHE | IK_PROT_MMIO)
/* VT-d second-level: CACHE is SNP (with IK_VTD_FLAG_SC); first-level: x86. */
#define PROT_VTD_SL (IK_PROT_READ | IK_PROT_WRITE | IK_PROT_CACHE)
#define PROT_VTD_FL (PROT_LPAE | IK_PROT_PRIV)
#define VTD_SP (IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SP_1G)
/* RISC-V first stage: no memory types (no Svpbmt); NOEXEC round-trips but
 * an S-mode fetch from a U page always faults, which the generic walker
 * test does not expect (tests/test_pgtable_riscv.c covers X).  G-stage:
 * every leaf is U, so PRIV is not expressible. */
#define PROT_RV_S1 (PROT_RW | IK_PROT_PRIV)
#define PROT_RV_S2 (PROT_RW | IK_PROT_NOEXEC)
#define RV_SIZES (SZ_4K | SZ_2M | SZ_1G | SZ_512G)
/* AMD v1: IR/IW and CACHE (FC); no execute, privilege or memory type. */
#define PROT_AMD_V1 (IK_PROT_READ | IK_PROT_WRITE | IK_PROT_CACHE)

/* ------------------------------------------------------------ the formats */

/*
 * One row per configuration the generic suite runs.  prot_mask: the IK_PROT_*
 * bits that round-trip exactly through the walker for the prot values the
 * tests use (READ or READ|WRITE, optionally NOEXEC, CACHE, PRIV).
 * fmt_flags: the config's format options (e.g. VT-d superpage capabilities).
 * To add a format: one line here.
 */
struct fmt_case {
	const char *name;
	enum ik_pt_fmt fmt;
	ik_u32 ias, oas;
	ik_u64 pgsizes;
	ik_u32 quirks;
	unsigned prot_mask;
	ik_u64 fmt_flags;
};

static const struct fmt_case fmt_cases[] = {
	{ "lpae-s1 4K ias48", IK_PT_LPAE_S1, 48, 48, SZ_4K | SZ_2M | SZ_1G, 0, PROT_LPAE | IK_PROT_PRIV, 0 },
	{ "lpae-s1 4K ias39 dirty", IK_PT_LPAE_S1, 39, 40, SZ_4K | SZ_2M | SZ_1G, IK_PT_QUIRK_DIRTY,
	  PROT_LPAE | IK_PROT_PRIV, 0 },
	{ "lpae-s1 4K ias32", IK_PT_LPAE_S1, 32, 32, SZ_4K | SZ_2M | SZ_1G, 0, PROT_LPAE | IK_PROT_PRIV, 0 },
	{ "lpae-s1 16K ias48", IK_PT_LPAE_S1, 48, 48, SZ_16K | SZ_32M, 0, PROT_LPAE | IK_PROT_PRIV, 0 },
	{ "lpae-s1 64K ias48", IK_PT_LPAE_S1, 48, 48, SZ_64K | SZ_512M, 0, PROT_LPAE | IK_PROT_PRIV, 0 },
	{ "lpae-s2 4K ias40 concat", IK_PT_LPAE_S2, 40, 40, SZ_4K | SZ_2M | SZ_1G, 0, PROT_LPAE, 0 },
	{ "lpae-s2 4K ias48", IK_PT_LPAE_S2, 48, 48, SZ_4K | SZ_2M | SZ_1G, 0, PROT_LPAE, 0 },
	{ "lpae-s2 16K ias48 concat", IK_PT_LPAE_S2, 48, 44, SZ_16K | SZ_32M, 0, PROT_LPAE, 0 },
	{ "lpae-s2 64K ias42", IK_PT_LPAE_S2, 42, 42, SZ_64K | SZ_512M, 0, PROT_LPAE, 0 },
	{ "lpae-s2 4K ias48 dirty", IK_PT_LPAE_S2, 48, 48, SZ_4K | SZ_2M | SZ_1G, IK_PT_QUIRK_DIRTY, PROT_LPAE, 0 },
	/* 52 bits: FEAT_LPA (64K) and FEAT_LPA2 (4K, 16K); tables above 2^48 */
	{ "lpae-s1 64K lpa ias52", IK_PT_LPAE_S1, 52, 52, SZ_64K | SZ_512M | SZ_4T, 0, PROT_LPAE | IK_PROT_PRIV, 0 },
	{ "lpae-s2 64K lpa ias52 dirty", IK_PT_LPAE_S2, 52, 52, SZ_64K | SZ_512M | SZ_4T, IK_PT_QUIRK_DIRTY, PROT_LPAE, 0 },
	{ "lpae-s1 4K lpa2 ias52", IK_PT_LPAE_S1, 52, 52, SZ_4K | SZ_2M | SZ_1G | SZ_512G, 0, PROT_LPAE | IK_PROT_PRIV, IK_LPAE_FLAG_LPA2 },
	{ "lpae-s1 16K lpa2 ias52 dirty", IK_PT_LPAE_S1, 52, 52, SZ_16K | SZ_32M | SZ_64G, IK_PT_QUIRK_DIRTY, PROT_LPAE | IK_PROT_PRIV, IK_LPAE_FLAG_LPA2 },
	{ "lpae-s2 4K lpa2 ias52 concat", IK_PT_LPAE_S2, 52, 52, SZ_4K | SZ_2M | SZ_1G | SZ_512G, 0, PROT_LPAE, IK_LPAE_FLAG_LPA2 },
	{ "lpae-s2 16K lpa2 ias52 dirty", IK_PT_LPAE_S2, 52, 52, SZ_16K | SZ_32M | SZ_64G, IK_PT_QUIRK_DIRTY, PROT_LPAE, IK_LPAE_FLAG_LPA2 },
	{ "vtd-sl 3-level", IK_PT_VTD_SL, 39, 48, SZ_4K | SZ_2M | SZ_1G, 0, PROT_VTD_SL, VTD_SP | IK_VTD_FLAG_SC },
	{ "vtd-sl 4-level 2M dirty", IK_PT_VTD_SL, 48, 48, SZ_4K | SZ_2M | SZ_1G, IK_PT_QUIRK_DIRTY, PROT_VTD_SL, IK_VTD_FLAG_SP_2M | IK_VTD_FLAG_SC },
	{ "vtd-sl 4-level 4K only", IK_PT_VTD_SL, 48, 46, SZ_4K | SZ_2M | SZ_1G, 0, PROT_RW, 0 },
	{ "vtd-sl 5-level", IK_PT_VTD_SL, 57, 52, SZ_4K | SZ_2M | SZ_1G, 0, PROT_VTD_SL, VTD_SP | IK_VTD_FLAG_SC },
	{ "vtd-fl 4-level", IK_PT_VTD_FL, 47, 48, SZ_4K | SZ_2M | SZ_1G, 0, PROT_VTD_FL, IK_VTD_FLAG_SP_1G },
	{ "vtd-fl 5-level dirty", IK_PT_VTD_FL, 56, 52, SZ_4K | SZ_2M | SZ_1G, IK_PT_QUIRK_DIRTY, PROT_VTD_FL, 0 },
	{ "riscv-s1 sv39", IK_PT_RISCV_S1, 38, 44, RV_SIZES, 0, PROT_RV_S1, 0 },
	{ "riscv-s1 sv48 dirty", IK_PT_RISCV_S1, 47, 56, RV_SIZES, IK_PT_QUIRK_DIRTY, PROT_RV_S1, 0 },
	{ "riscv-s1 sv57 sum", IK_PT_RISCV_S1, 56, 48, RV_SIZES, 0, PROT_RV_S1, IK_RISCV_FLAG_SUM },
	{ "riscv-s2 sv39x4", IK_PT_RISCV_S2, 41, 44, RV_SIZES, 0, PROT_RV_S2, 0 },
	{ "riscv-s2 sv48x4 dirty", IK_PT_RISCV_S2, 50, 48, RV_SIZES, IK_PT_QUIRK_DIRTY, PROT_RV_S2, 0 },
	{ "riscv-s2 sv57x4", IK_PT_RISCV_S2, 59, 56, RV_SIZES, 0, PROT_RV_S2, 0 },
	{ "amd-v1 mode 3", IK_PT_AMD_V1, 39, 48, SZ_4K | SZ_2M | SZ_1G, 0, PROT_AMD_V1, 0 },
	{ "amd-v1 mode 4 dirty", IK_PT_AMD_V1, 48, 48, SZ_4K | SZ_2M | SZ_1G, IK_PT_QUIRK_DIRTY, PROT_AMD_V1, 0 },
	{ "amd-v1 mode 6 4K only", IK_PT_AMD_V1, 63, 52, SZ_4K, 0, PROT_RW, IK_AMD_FLAG_U },
	{ "amd-v2 4-level", IK_PT_AMD_V2, 47, 48, SZ_4K | SZ_2M | SZ_1G, 0, PROT_VTD_FL, 0 },
	{ "amd-v2 5-level dirty", IK_PT_AMD_V2, 56, 52, SZ_4K | SZ_2M | SZ_1G, IK_PT_QUIRK_DIRTY, PROT_VTD_FL, 0 },
};
#define NCASES ((int)(sizeof(fmt_cases) / sizeof(fmt_cases[0])))

/* ------------------------------------------------------------ harness */

struct tpage {
	void *cpu;
	uint64_t iommu;
	size_t size;
	struct tpage *hnext;
	size_t live_idx;
};

#define TH_BUCKETS 4096
#define TH_MAXLG 24

struct th {
	struct ik_fault_alloc fa;
	struct ik_pgtable_hooks hooks;
	struct ik_pgtable_cfg cfg;
	struct ik_pt_geometry g;
	const struct fmt_case *fc;
	struct ik_pgtable *pt;
	pthread_mutex_t lock;
	struct tpage *buckets[TH_BUCKETS];
	struct tpage **live;
	size_t nlive, cap;
	uint64_t next_iommu;
	uint64_t *freeaddr[TH_MAXLG + 1];
	size_t nfree[TH_MAXLG + 1], capfree[TH_MAXLG + 1];
	/* counters (atomic where threads share them) */
	long allocs, frees, cleans, clean_bytes, sync_maps, gather_adds, iotlb_syncs, flush_walks;
	uint64_t last_sync_iova, last_sync_size;
	uint64_t last_clean_iommu, last_clean_size;
	/* one-shot: run from inside the next clean (simulates another thread
	 * acting between the engine's clean and its install) */
	void (*on_clean)(struct th *h);
};

static size_t th_hash(uint64_t base)
{
	return (size_t)((base >> 12) * 0x9e3779b97f4a7c15ull >> 52) & (TH_BUCKETS - 1);
}

static void *th_alloc_table(void *cookie, ik_size size, ik_u64 *iommu)
{
	struct th *h = cookie;
	unsigned lg = (unsigned)__builtin_ctzll(size);
	struct tpage *p;
	void *cpu;
	uint64_t a;

	cpu = h->fa.a.alloc(h->fa.a.ctx, size, size);
	if (!cpu)
		return NULL;
	p = malloc(sizeof(*p));
	pthread_mutex_lock(&h->lock);
	if (lg <= TH_MAXLG && h->nfree[lg]) {
		a = h->freeaddr[lg][--h->nfree[lg]];
	} else {
		a = (h->next_iommu + size - 1) & ~(uint64_t)(size - 1);
		h->next_iommu = a + size;
	}
	p->cpu = cpu;
	p->iommu = a;
	p->size = size;
	p->hnext = h->buckets[th_hash(a)];
	h->buckets[th_hash(a)] = p;
	if (h->nlive == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 256;
		h->live = realloc(h->live, h->cap * sizeof(*h->live));
	}
	p->live_idx = h->nlive;
	h->live[h->nlive++] = p;
	h->allocs++;
	pthread_mutex_unlock(&h->lock);
	/* garbage, as real memory would hold */
	memset(cpu, 0xa5, size);
	*iommu = a;
	return cpu;
}

static struct tpage *th_find_locked(struct th *h, uint64_t addr)
{
	unsigned lg;

	for (lg = 6; lg <= TH_MAXLG; lg++) {
		uint64_t base = addr & ~((1ull << lg) - 1);
		struct tpage *p;

		for (p = h->buckets[th_hash(base)]; p; p = p->hnext)
			if (p->iommu == base && addr - base < p->size)
				return p;
	}
	return NULL;
}

static void th_free_table(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	struct th *h = cookie;
	struct tpage **pp, *p;
	unsigned lg = (unsigned)__builtin_ctzll(size);

	pthread_mutex_lock(&h->lock);
	for (pp = &h->buckets[th_hash(iommu)]; (p = *pp) != NULL; pp = &p->hnext)
		if (p->iommu == iommu)
			break;
	if (!p || p->cpu != cpu || p->size != size)
		ck_abort_msg("free_table of an unknown page %#llx", (unsigned long long)iommu);
	*pp = p->hnext;
	h->live[p->live_idx] = h->live[--h->nlive];
	h->live[p->live_idx]->live_idx = p->live_idx;
	if (h->nfree[lg] == h->capfree[lg]) {
		h->capfree[lg] = h->capfree[lg] ? h->capfree[lg] * 2 : 64;
		h->freeaddr[lg] = realloc(h->freeaddr[lg], h->capfree[lg] * sizeof(uint64_t));
	}
	h->freeaddr[lg][h->nfree[lg]++] = iommu;
	h->frees++;
	pthread_mutex_unlock(&h->lock);
	memset(cpu, 0x5a, size);	/* poison: a use after free shows up */
	h->fa.a.free(h->fa.a.ctx, cpu, size);
	free(p);
}

static void th_clean(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	struct th *h = cookie;

	(void)cpu;
	__atomic_add_fetch(&h->cleans, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&h->clean_bytes, (long)size, __ATOMIC_RELAXED);
	__atomic_store_n(&h->last_clean_iommu, iommu, __ATOMIC_RELAXED);
	__atomic_store_n(&h->last_clean_size, size, __ATOMIC_RELAXED);
	if (h->on_clean) {
		void (*fn)(struct th *) = h->on_clean;

		h->on_clean = NULL;
		fn(h);
	}
}

static void th_sync_map(void *cookie, ik_u64 iova, ik_u64 size)
{
	struct th *h = cookie;

	__atomic_add_fetch(&h->sync_maps, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->last_sync_iova, iova, __ATOMIC_RELAXED);
	__atomic_store_n(&h->last_sync_size, size, __ATOMIC_RELAXED);
}

static void th_gather_add(void *cookie, struct ik_gather *g, ik_u64 iova, ik_u64 size, ik_u64 gran)
{
	struct th *h = cookie;

	__atomic_add_fetch(&h->gather_adds, 1, __ATOMIC_RELAXED);
	ik_gather_add(g, iova, size, gran);
}

static void th_iotlb_sync(void *cookie, struct ik_gather *g)
{
	struct th *h = cookie;

	(void)g;
	__atomic_add_fetch(&h->iotlb_syncs, 1, __ATOMIC_RELAXED);
}

static void th_flush_walk(void *cookie, ik_u64 iova, ik_u64 size, ik_u64 gran)
{
	struct th *h = cookie;

	(void)iova;
	(void)size;
	(void)gran;
	__atomic_add_fetch(&h->flush_walks, 1, __ATOMIC_RELAXED);
}

static int th_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	struct th *h = ctx;
	struct tpage *p;
	int ret = -EFAULT;

	pthread_mutex_lock(&h->lock);
	p = th_find_locked(h, addr);
	if (p && !(addr & 7)) {
		*val = __atomic_load_n((ik_u64 *)((char *)p->cpu + (addr - p->iommu)), __ATOMIC_ACQUIRE);
		ret = 0;
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

static int th_cas64(void *ctx, ik_u64 addr, ik_u64 old, ik_u64 val)
{
	struct th *h = ctx;
	struct tpage *p;
	int ret = -EFAULT;

	pthread_mutex_lock(&h->lock);
	p = th_find_locked(h, addr);
	if (p) {
		ik_u64 *e = (ik_u64 *)((char *)p->cpu + (addr - p->iommu));

		ret = __atomic_compare_exchange_n(e, &old, val, 0, __ATOMIC_SEQ_CST,
						  __ATOMIC_SEQ_CST) ? 0 : -EAGAIN;
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

/* A CPU pointer to the entry at IOMMU address addr (tests that corrupt). */
static ik_u64 *th_entry(struct th *h, uint64_t addr)
{
	struct tpage *p;

	pthread_mutex_lock(&h->lock);
	p = th_find_locked(h, addr);
	pthread_mutex_unlock(&h->lock);
	return p ? (ik_u64 *)((char *)p->cpu + (addr - p->iommu)) : NULL;
}

static void th_mem(struct th *h, struct ik_pt_mem *m, bool hw_updates)
{
	m->read64 = th_read64;
	m->cas64 = hw_updates ? th_cas64 : NULL;
	m->ctx = h;
}

static void th_reset_counts(struct th *h)
{
	h->cleans = h->clean_bytes = h->sync_maps = h->gather_adds = h->iotlb_syncs = 0;
	h->flush_walks = 0;
}

/* The harness; flush_walk: whether the table set has that hook (it has no
 * flush_all). */
static struct th *th_new_hooks(const struct fmt_case *fc, bool coherent, ik_u32 extra_quirks,
			       bool flush_walk)
{
	struct th *h = calloc(1, sizeof(*h));
	int ret;

	ik_fault_alloc_init(&h->fa);
	pthread_mutex_init(&h->lock, NULL);
	h->fc = fc;
	/* 52-bit configs get table addresses that use OA[51:48] */
	h->next_iommu = fc->oas == 52 && (fc->fmt == IK_PT_LPAE_S1 || fc->fmt == IK_PT_LPAE_S2)
				? 0xbull << 48 : 1ull << 20;
	h->hooks.alloc_table = th_alloc_table;
	h->hooks.free_table = th_free_table;
	h->hooks.clean = th_clean;
	h->hooks.iotlb_sync_map = th_sync_map;
	h->hooks.gather_add = th_gather_add;
	h->hooks.iotlb_sync = th_iotlb_sync;
	h->hooks.flush_walk = flush_walk ? th_flush_walk : NULL;
	h->cfg.fmt = fc->fmt;
	h->cfg.ias = fc->ias;
	h->cfg.oas = fc->oas;
	h->cfg.pgsize_bitmap = fc->pgsizes;
	h->cfg.coherent = coherent;
	h->cfg.quirks = fc->quirks | extra_quirks;
	h->cfg.fmt_flags = fc->fmt_flags;
	h->cfg.hooks = &h->hooks;
	h->cfg.cookie = h;
	h->cfg.allocator = &h->fa.a;
	ret = ik_pgtable_create(&h->cfg, &h->pt);
	ck_assert_msg(ret == 0, "%s: create: %d", fc->name, ret);
	ik_pt_geometry_init(&h->g, &h->cfg);
	return h;
}

static struct th *th_new_cfg(const struct fmt_case *fc, bool coherent, ik_u32 extra_quirks)
{
	return th_new_hooks(fc, coherent, extra_quirks, true);
}

static struct th *th_new(int i, bool coherent)
{
	return th_new_cfg(&fmt_cases[i], coherent, 0);
}

static void th_destroy(struct th *h)
{
	unsigned i;

	ik_pgtable_destroy(h->pt);
	ck_assert_int_eq(h->fa.live, 0);
	ck_assert_int_eq((long)h->nlive, 0);
	for (i = 0; i <= TH_MAXLG; i++)
		free(h->freeaddr[i]);
	free(h->live);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* Order-independent digest of every live table page (address + contents). */
static uint64_t th_digest(struct th *h)
{
	uint64_t sum = 0;
	size_t i, k;

	pthread_mutex_lock(&h->lock);
	for (i = 0; i < h->nlive; i++) {
		struct tpage *p = h->live[i];
		const uint64_t *w = p->cpu;
		uint64_t x = p->iommu * 0x9e3779b97f4a7c15ull;

		for (k = 0; k < p->size / 8; k++)
			x = (x ^ w[k]) * 0x100000001b3ull;
		sum += x;
	}
	pthread_mutex_unlock(&h->lock);
	return sum;
}

/* Geometry shorthands. */
static uint64_t G(const struct th *h) { return 1ull << h->g.lg2_granule; }
static uint64_t E(const struct th *h) { return 1ull << h->g.bits; }
static uint64_t T(const struct th *h) { return G(h) << h->g.bits; } /* level-0 table span */
/* Smallest block size, or 0. */
static uint64_t B(const struct th *h)
{
	uint64_t m = h->g.pgsize_bitmap & ~G(h);

	return m ? m & -m : 0;
}
static uint64_t BASE(const struct th *h) { return 1ull << (h->g.ias - 1); }

static ik_s64 unmap_sync(struct th *h, uint64_t iova, uint64_t size)
{
	struct ik_gather g;
	ik_s64 r;

	ik_gather_init(&g);
	r = ik_pgtable_unmap(h->pt, iova, size, &g);
	ik_pgtable_gather_sync(h->pt, &g);
	return r;
}

/* ------------------------------------------------------------ shadow model */

struct shadow {
	uint64_t base, npages, gran;
	uint64_t *pa;		/* pa of each page, valid if prot != 0 */
	unsigned *prot;
};

static void sh_init(struct shadow *s, uint64_t base, uint64_t npages, uint64_t gran)
{
	s->base = base;
	s->npages = npages;
	s->gran = gran;
	s->pa = calloc(npages, sizeof(*s->pa));
	s->prot = calloc(npages, sizeof(*s->prot));
}

static void sh_free(struct shadow *s)
{
	free(s->pa);
	free(s->prot);
}

static bool sh_free_range(const struct shadow *s, uint64_t first, uint64_t n)
{
	uint64_t i;

	for (i = first; i < first + n; i++)
		if (s->prot[i])
			return false;
	return true;
}

struct dump_check {
	const struct shadow *s;
	unsigned mask;
	uint64_t pages;
	int bad;
	int nranges;
};

static int dump_cb(void *ctx, const struct ik_pt_range *r)
{
	struct dump_check *d = ctx;
	const struct shadow *s = d->s;
	uint64_t off;

	d->nranges++;
	for (off = 0; off < r->size; off += s->gran) {
		uint64_t i = (r->iova + off - s->base) / s->gran;

		if (r->iova + off < s->base || i >= s->npages || !s->prot[i] ||
		    s->pa[i] != r->oa + off || (r->prot & d->mask) != (s->prot[i] & d->mask)) {
			d->bad++;
			return 0;
		}
		d->pages++;
	}
	return 0;
}

/* Full check of the window: iova_to_phys for every page, the walker (through
 * the harness memory map) for every page, and both dumps. */
static void sh_verify(struct th *h, const struct shadow *s, bool all_walks, struct ik_rng *rng)
{
	struct ik_pt_walker w;
	struct ik_pt_mem mem;
	struct dump_check d;
	uint64_t i, mapped = 0;
	int ret;

	ik_pgtable_walker(h->pt, &w);
	th_mem(h, &mem, false);
	for (i = 0; i < s->npages; i++) {
		uint64_t iova = s->base + i * s->gran, pa = 0, pgsz = 0;
		int r = ik_pgtable_iova_to_phys(h->pt, iova, &pa, &pgsz);

		if (s->prot[i]) {
			mapped++;
			IK_REQUIRE_MSG(r == 0 && pa == s->pa[i], "%s: page %llu: iova_to_phys %d %#llx want %#llx",
				       h->fc->name, (unsigned long long)i, r, (unsigned long long)pa,
				       (unsigned long long)s->pa[i]);
		} else {
			IK_REQUIRE_MSG(r == -ENOENT, "%s: page %llu should be unmapped (%d)", h->fc->name,
				       (unsigned long long)i, r);
		}
		if (all_walks || ik_rng_below(rng, 16) == 0) {
			struct ik_pt_walk_result res;

			ret = ik_pt_walk(&w, &mem, iova + (ik_rng_below(rng, s->gran) & ~7ull), 0, &res);
			IK_REQUIRE(ret == 0);
			if (s->prot[i]) {
				IK_REQUIRE_MSG(res.fault == IK_PT_FAULT_NONE &&
						       (res.oa & ~(s->gran - 1)) == s->pa[i] &&
						       (res.prot & h->fc->prot_mask) ==
							       (s->prot[i] & h->fc->prot_mask),
					       "%s: walker page %llu fault %d oa %#llx prot %#x want %#llx %#x",
					       h->fc->name, (unsigned long long)i, res.fault,
					       (unsigned long long)res.oa, res.prot,
					       (unsigned long long)s->pa[i], s->prot[i]);
			} else {
				IK_REQUIRE(res.fault == IK_PT_FAULT_TRANSLATION);
			}
		}
	}
	memset(&d, 0, sizeof(d));
	d.s = s;
	d.mask = h->fc->prot_mask;
	ret = ik_pt_walker_dump(&w, &mem, s->base, s->npages * s->gran, dump_cb, &d);
	IK_REQUIRE(ret == 0 && d.bad == 0 && d.pages == mapped);
	memset(&d, 0, sizeof(d));
	d.s = s;
	d.mask = h->fc->prot_mask;
	ret = ik_pgtable_dump(h->pt, s->base, s->npages * s->gran, dump_cb, &d);
	IK_REQUIRE(ret == 0 && d.bad == 0 && d.pages == mapped);
}

static unsigned rand_prot(struct th *h, struct ik_rng *r)
{
	unsigned p = IK_PROT_READ;

	if (ik_rng_below(r, 2))
		p |= IK_PROT_WRITE;
	if ((h->fc->prot_mask & IK_PROT_NOEXEC) && ik_rng_below(r, 3) == 0)
		p |= IK_PROT_NOEXEC;
	if ((h->fc->prot_mask & IK_PROT_CACHE) && ik_rng_below(r, 2))
		p |= IK_PROT_CACHE;
	if ((h->fc->prot_mask & IK_PROT_PRIV) && ik_rng_below(r, 4) == 0)
		p |= IK_PROT_PRIV;
	return p;
}

/* A physical address for `n` pages at iova: block-compatible or not. */
static uint64_t rand_pa(struct th *h, struct ik_rng *r, uint64_t iova, bool blocky)
{
	uint64_t span = B(h) ? B(h) : T(h);
	uint64_t lim = (h->g.oas > 40 ? 1ull << 40 : 1ull << h->g.oas) / span / 2;
	uint64_t pa = ik_rng_below(r, lim) * span + (iova & (span - 1));

	if (!blocky)
		pa += G(h);
	return pa;
}

/* ------------------------------------------------------------ tests */

/* Random map, map_pages, map_sg and unmap calls on format case i, checked
 * against a shadow model; flush_walk: whether the table set has that hook
 * (without it, emptied tables are kept instead of replaced by blocks). */
static void random_ops(int i_case, bool flush_walk)
{
	struct th *h = th_new_hooks(&fmt_cases[i_case], i_case % 2 == 0, 0, flush_walk);
	struct ik_rng rng = { 0x5eed0000u + (uint64_t)i_case + (flush_walk ? 0 : 0x100u) };
	struct shadow s;
	uint64_t npages, step, ops = (uint64_t)ik_test_iters(300);
	struct ik_gather pend;

	npages = 4 * E(h);
	sh_init(&s, BASE(h), npages, G(h));
	ik_gather_init(&pend);
	for (step = 0; step < ops; step++) {
		unsigned kind = (unsigned)ik_rng_below(&rng, 10);
		uint64_t first, n, i, iova, pa;
		unsigned prot = rand_prot(h, &rng);
		int ret;

		/* lengths: mostly small, sometimes a table's worth */
		n = ik_rng_below(&rng, 4) == 0 ? E(h) : 1 + ik_rng_below(&rng, 40);
		if (ik_rng_below(&rng, 3) == 0)
			first = ik_rng_below(&rng, npages / E(h)) * E(h);
		else
			first = ik_rng_below(&rng, npages);
		if (first + n > npages)
			n = npages - first;
		iova = s.base + first * G(h);
		if (kind < 3) {
			/* map: blocks where the pa allows */
			bool free_range = sh_free_range(&s, first, n);
			long cl = h->cleans, sm = h->sync_maps;

			pa = rand_pa(h, &rng, iova, ik_rng_below(&rng, 2));
			ret = ik_pgtable_map(h->pt, iova, pa, n * G(h), prot);
			if (!free_range) {
				IK_REQUIRE_MSG(ret == -EEXIST, "%s: overlap map returned %d", h->fc->name, ret);
				IK_REQUIRE(h->cleans == cl && h->sync_maps == sm);
				continue;
			}
			IK_REQUIRE_MSG(ret == 0, "%s: map %d", h->fc->name, ret);
			IK_REQUIRE(h->sync_maps == sm + 1);
			for (i = 0; i < n; i++) {
				s.pa[first + i] = pa + i * G(h);
				s.prot[first + i] = prot;
			}
		} else if (kind < 5) {
			/* map_pages with a random supported page size */
			uint64_t sizes[8], psz, cnt;
			unsigned ns = 0, b;

			for (b = 0; b < 64; b++)
				if (h->g.pgsize_bitmap & (1ull << b) && (1ull << b) <= npages * G(h) / 2)
					sizes[ns++] = 1ull << b;
			psz = sizes[ik_rng_below(&rng, ns)];
			iova = s.base + (ik_rng_below(&rng, npages * G(h) / psz)) * psz;
			first = (iova - s.base) / G(h);
			cnt = 1 + ik_rng_below(&rng, psz == G(h) ? 16 : 2);
			if (first + cnt * (psz / G(h)) > npages)
				cnt = 1;
			n = cnt * psz / G(h);
			pa = rand_pa(h, &rng, iova, true) & ~(psz - 1);
			ret = ik_pgtable_map_pages(h->pt, iova, pa, psz, cnt, prot);
			if (!sh_free_range(&s, first, n)) {
				IK_REQUIRE(ret == -EEXIST);
				continue;
			}
			IK_REQUIRE_MSG(ret == 0, "%s: map_pages %d", h->fc->name, ret);
			for (i = 0; i < n; i++) {
				s.pa[first + i] = pa + i * G(h);
				s.prot[first + i] = prot;
			}
		} else if (kind < 7) {
			/* map_sg: up to 8 segments, some physically contiguous */
			struct ik_seg segs[8];
			unsigned k, nseg = 1 + (unsigned)ik_rng_below(&rng, 8);
			uint64_t total = 0, mapped = 0, off = 0;

			for (k = 0; k < nseg; k++) {
				uint64_t len = (1 + ik_rng_below(&rng, 8)) * G(h);

				if (k && ik_rng_below(&rng, 3) == 0)
					segs[k].paddr = segs[k - 1].paddr + segs[k - 1].len;
				else
					segs[k].paddr = rand_pa(h, &rng, iova + total, true);
				segs[k].len = len;
				total += len;
			}
			if (first + total / G(h) > npages)
				continue;
			ret = ik_pgtable_map_sg(h->pt, iova, segs, nseg, prot, &mapped);
			if (!sh_free_range(&s, first, total / G(h))) {
				IK_REQUIRE(ret == -EEXIST && mapped == 0);
				continue;
			}
			IK_REQUIRE_MSG(ret == 0 && mapped == total, "%s: map_sg %d", h->fc->name, ret);
			for (k = 0; k < nseg; k++) {
				for (i = 0; i < segs[k].len / G(h); i++) {
					s.pa[first + off] = segs[k].paddr + i * G(h);
					s.prot[first + off] = prot;
					off++;
				}
			}
		} else {
			/* unmap, with the gather synced now or later */
			uint64_t want = 0;
			ik_s64 r;

			for (i = first; i < first + n; i++)
				if (s.prot[i])
					want += G(h);
			r = ik_pgtable_unmap(h->pt, iova, n * G(h), &pend);
			IK_REQUIRE_MSG(r == (ik_s64)want, "%s: unmap %lld want %llu", h->fc->name,
				       (long long)r, (unsigned long long)want);
			for (i = first; i < first + n; i++)
				s.prot[i] = 0;
			if (ik_rng_below(&rng, 2))
				ik_pgtable_gather_sync(h->pt, &pend);
		}
		if (step % 64 == 63)
			sh_verify(h, &s, false, &rng);
	}
	ik_pgtable_gather_sync(h->pt, &pend);
	sh_verify(h, &s, true, &rng);
	IK_REQUIRE(unmap_sync(h, s.base, npages * G(h)) >= 0);
	memset(s.prot, 0, npages * sizeof(*s.prot));
	sh_verify(h, &s, false, &rng);
	sh_free(&s);
	th_destroy(h);
}

START_TEST(random_ops_match_shadow_model)
{
	random_ops(_i, true);
}
END_TEST

START_TEST(random_ops_match_shadow_model_without_walk_flush)
{
	random_ops(_i, false);
}
END_TEST

START_TEST(bad_arguments_are_einval_and_change_nothing)
{
	struct th *h = th_new(_i, false);
	uint64_t base = BASE(h), g = G(h), top = h->g.ias >= 64 ? 0 : 1ull << h->g.ias;
	uint64_t oastop = 1ull << h->g.oas, d0, pa = 0;
	struct ik_seg seg[2];
	struct ik_gather ga;
	long live;

	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x100000, g, PROT_RW), 0);
	ik_pgtable_drain_cache(h->pt);
	d0 = th_digest(h);
	live = h->fa.live;
	th_reset_counts(h);
	/* misaligned */
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g + 8, 0, g, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g, 8, g, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g, 0, g + 8, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map_pages(h->pt, base + g, 0, g * 2 == B(h) ? g * 4 : g * 2, 1, PROT_RW), -EINVAL);
	if (B(h))
		ck_assert_int_eq(ik_pgtable_map_pages(h->pt, base + g, 0, B(h), 1, PROT_RW), -EINVAL);
	/* size 0, count 0 */
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g, 0, 0, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map_pages(h->pt, base + g, 0, g, 0, PROT_RW), -EINVAL);
	/* overflow and beyond ias / oas */
	ck_assert_int_eq(ik_pgtable_map(h->pt, 0 - g, 0, 2 * g, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map_pages(h->pt, base, 0, g, UINT64_MAX / 2, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(h->pt, top - g, 0, 2 * g, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(h->pt, top, 0, g, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g, oastop - g, 2 * g, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g, oastop, g, PROT_RW), -EINVAL);
	/* unsupported page size, prot */
	ck_assert_int_eq(ik_pgtable_map_pages(h->pt, base + 4 * g, 0, g * 4, 1, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map_pages(h->pt, base + g, 0, g * 3, 1, PROT_RW), -EINVAL);
	/* sizes the config offered that the format or the unit's capabilities
	 * (e.g. VT-d SLLPS) rule out */
	for (unsigned k = h->g.lg2_granule; k < 63; k++) {
		uint64_t sz = 1ull << k;

		if ((h->fc->pgsizes & ~h->g.pgsize_bitmap & sz) && 2 * sz <= base)
			ck_assert_int_eq(ik_pgtable_map_pages(h->pt, base + sz, 0, sz, 1, PROT_RW), -EINVAL);
	}
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g, 0, g, 0), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g, 0, g, IK_PROT_NOEXEC), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g, 0, g, PROT_RW | 0x1000), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g, 0, g,
					PROT_RW | IK_PROT_CACHE | IK_PROT_MMIO), -EINVAL);
	/* map_sg: empty list, zero-length or misaligned segment, overflow */
	seg[0].paddr = 0;
	seg[0].len = g;
	seg[1].paddr = 3 * g;
	seg[1].len = 0;
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, base + g, seg, 0, PROT_RW, NULL), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, base + g, seg, 2, PROT_RW, NULL), -EINVAL);
	seg[1].len = g / 2;
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, base + g, seg, 2, PROT_RW, NULL), -EINVAL);
	seg[1].len = UINT64_MAX & ~(g - 1);
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, base + g, seg, 2, PROT_RW, NULL), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, base + 8, seg, 1, PROT_RW, NULL), -EINVAL);
	/* unmap */
	ik_gather_init(&ga);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, base + 8, g, &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, base, 0, &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, base, g + 8, &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, top, g, &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, 0 - g, 2 * g, &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, base, g, NULL), -EINVAL);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, top, &pa, NULL), -EINVAL);
	/* nothing moved */
	ck_assert_int_eq(h->cleans, 0);
	ck_assert_int_eq(h->sync_maps, 0);
	ck_assert_int_eq(h->gather_adds, 0);
	ck_assert_int_eq(h->fa.live, live);
	ck_assert(th_digest(h) == d0);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, base, &pa, NULL), 0);
	ck_assert_uint_eq(pa, 0x100000);
	th_destroy(h);
}
END_TEST

START_TEST(overlap_is_eexist_with_nothing_changed)
{
	struct th *h = th_new(_i, false);
	uint64_t base = BASE(h), g = G(h), d0, pa;
	struct ik_seg seg[3];
	long live;

	/* one page in the middle of an otherwise empty table span */
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + T(h) + 7 * g, 0x7000000, g, PROT_RW), 0);
	ik_pgtable_drain_cache(h->pt);
	d0 = th_digest(h);
	live = h->fa.live;
	th_reset_counts(h);
	/* a long map ending on it: the earlier part would need new tables */
	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x10000000, T(h) + 8 * g, PROT_RW), -EEXIST);
	ck_assert_int_eq(ik_pgtable_map_pages(h->pt, base + T(h), 0, g, 16, PROT_RW), -EEXIST);
	seg[0].paddr = 0x1000000;
	seg[0].len = 4 * g;
	seg[1].paddr = 0x3000000;
	seg[1].len = T(h);
	seg[2].paddr = 0x5000000;
	seg[2].len = 16 * g;
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, base + 4 * g, seg, 3, PROT_RW, NULL), -EEXIST);
	/* a block over a table that holds a page */
	if (B(h))
		ck_assert_int_eq(ik_pgtable_map(h->pt, base + T(h) - T(h) % B(h), 0, B(h), PROT_RW),
				 -EEXIST);
	ik_pgtable_drain_cache(h->pt);
	ck_assert(th_digest(h) == d0);
	ck_assert_int_eq(h->fa.live, live);
	ck_assert_int_eq(h->cleans, 0);
	ck_assert_int_eq(h->sync_maps, 0);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, base, &pa, NULL), -ENOENT);
	/* unmapping nothing returns 0 and adds nothing to the gather */
	{
		struct ik_gather ga;

		ik_gather_init(&ga);
		ck_assert_int_eq(ik_pgtable_unmap(h->pt, base, 4 * g, &ga), 0);
		ck_assert_int_eq(ga.nr_ranges, 0);
		ck_assert(ga.start >= ga.end);
		ck_assert_int_eq(ik_pgtable_unmap(h->pt, base + T(h), T(h), &ga), (ik_s64)g);
		ik_pgtable_gather_sync(h->pt, &ga);
	}
	th_destroy(h);
}
END_TEST

/* Fail every allocation point of a long map in turn: -ENOMEM, no leaked
 * page, the tables byte-identical to before; then it succeeds. */
START_TEST(enomem_at_every_allocation_rolls_back)
{
	struct th *h = th_new(_i, false);
	uint64_t g = G(h), t = T(h);
	uint64_t base = BASE(h) - 2 * t; /* crosses a top-level entry boundary */
	struct ik_seg segs[6];
	long n, live;
	uint64_t d0, pa;
	int ret = -1;
	unsigned k;

	/* existing state: a page in the first table touched */
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + 3 * g, 0x200000 + g, g, PROT_RW), 0);
	for (k = 0; k < 6; k++) {
		segs[k].paddr = 0x40000000ull + k * 0x1000000ull + g; /* no blocks */
		segs[k].len = k == 5 ? t : (k + 1) * g;
	}
	segs[0].len = 2 * t - 8 * g; /* fills the rest of two tables after the page */
	for (n = 1; n < 100; n++) {
		ik_pgtable_drain_cache(h->pt);
		d0 = th_digest(h);
		live = h->fa.live;
		th_reset_counts(h);
		ik_fault_alloc_fail_nth(&h->fa, n);
		ret = ik_pgtable_map_sg(h->pt, base + 4 * g, segs, 6, PROT_RW, NULL);
		ik_fault_alloc_disarm(&h->fa);
		if (ret == 0)
			break;
		ck_assert_int_eq(ret, -ENOMEM);
		ck_assert_int_eq(h->sync_maps, 0);
		ck_assert_int_eq(h->cleans, 0);
		ik_pgtable_drain_cache(h->pt);
		ck_assert_msg(h->fa.live == live, "%s: n=%ld live %ld -> %ld", h->fc->name, n, live,
			      h->fa.live);
		ck_assert_msg(th_digest(h) == d0, "%s: n=%ld tables changed", h->fc->name, n);
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_int_gt(n, 2); /* several allocation points were exercised */
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, base + 4 * g, &pa, NULL), 0);
	ck_assert_uint_eq(pa, segs[0].paddr);

	/* the same for an unmap that must split a block */
	if (B(h)) {
		uint64_t bb = BASE(h) - 4 * B(h);
		ik_s64 r = -1;

		ck_assert_int_eq(ik_pgtable_map(h->pt, bb, 0x80000000ull, B(h), PROT_RW), 0);
		for (n = 1; n < 50; n++) {
			struct ik_gather ga;

			ik_pgtable_drain_cache(h->pt);
			d0 = th_digest(h);
			live = h->fa.live;
			ik_gather_init(&ga);
			ik_fault_alloc_fail_nth(&h->fa, n);
			r = ik_pgtable_unmap(h->pt, bb + 5 * g, g, &ga);
			ik_fault_alloc_disarm(&h->fa);
			if (r >= 0) {
				ik_pgtable_gather_sync(h->pt, &ga);
				break;
			}
			ck_assert_int_eq(r, -ENOMEM);
			ck_assert_int_eq(ga.nr_ranges, 0);
			ik_pgtable_drain_cache(h->pt);
			ck_assert_int_eq(h->fa.live, live);
			ck_assert(th_digest(h) == d0);
		}
		ck_assert_int_eq(r, (ik_s64)g);
		ck_assert_int_gt(n, 1);
	}
	th_destroy(h);
}
END_TEST

/* The issue's known cases, non-coherent. */
/*
 * Requests inside one existing level-0 table take the engine's fast paths
 * (one descent, no counting pass): the entries, cleans, sync, gather and
 * errors must be exactly the general path's.  Covered per format/granule:
 * one granule (map_pages and map), a run of 16, an entry in the way
 * (-EEXIST, nothing changed), a table missing (general path), and unmaps
 * of part of the table (fast) and of all of it (general: it unlinks).
 */
START_TEST(one_table_requests_match_the_general_path)
{
	struct th *h = th_new(_i, false);
	uint64_t g = G(h), t = T(h), base = BASE(h) + 8 * t, pa = 0x30000000ull, got, sz, d;
	struct ik_gather ga;
	unsigned k;

	/* the level-0 table exists: one page far from the ones used below */
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + (E(h) - 1) * g, pa, g, PROT_RW), 0);
	th_reset_counts(h);
	ck_assert_int_eq(ik_pgtable_map_pages(h->pt, base, pa + g, g, 1, PROT_RW), 0);
	ck_assert_int_eq(h->cleans, 1);
	ck_assert_int_eq(h->clean_bytes, 8);
	ck_assert_int_eq(h->sync_maps, 1);
	ck_assert_uint_eq(h->last_sync_iova, base);
	ck_assert_uint_eq(h->last_sync_size, g);
	th_reset_counts(h);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + 16 * g, pa + 32 * g, 16 * g, PROT_RW), 0);
	ck_assert_int_eq(h->cleans, 1);
	ck_assert_int_eq(h->clean_bytes, 16 * 8);
	ck_assert_int_eq(h->sync_maps, 1);
	for (k = 0; k < 16; k++) {
		ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, base + (16 + k) * g, &got, &sz), 0);
		ck_assert_uint_eq(got, pa + (32 + k) * g);
		ck_assert_uint_eq(sz, g);
	}
	/* an entry in the way: -EEXIST, no entry, clean or sync */
	d = th_digest(h);
	th_reset_counts(h);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + 8 * g, pa, 9 * g, PROT_RW), -EEXIST);
	ck_assert_int_eq(ik_pgtable_map_pages(h->pt, base, pa, g, 1, PROT_RW), -EEXIST);
	ck_assert_uint_eq(th_digest(h), d);
	ck_assert_int_eq(h->cleans + h->sync_maps, 0);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, base + 8 * g, &got, &sz), -ENOENT);
	/* no table yet: the general path makes it (whole clean + parent entry) */
	th_reset_counts(h);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + 2 * t, pa, g, PROT_RW), 0);
	ck_assert_int_eq(h->cleans, 2);
	ck_assert_int_eq(h->clean_bytes, (long)(8 * E(h) + 8));
	/* part of one table: one clean of the run, one gather range */
	th_reset_counts(h);
	ik_gather_init(&ga);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, base + 16 * g, 16 * g, &ga), (ik_s64)(16 * g));
	ck_assert_int_eq(h->cleans, 1);
	ck_assert_int_eq(h->clean_bytes, 16 * 8);
	ck_assert_uint_eq(ga.start, base + 16 * g);
	ck_assert_uint_eq(ga.end, base + 32 * g);
	ck_assert_uint_eq(ga.granule, g);
	ck_assert(!ga.walk && !ga.tables);
	ik_pgtable_gather_sync(h->pt, &ga);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, base + 16 * g, &got, &sz), -ENOENT);
	/* nothing mapped there any more: 0 bytes, nothing to invalidate */
	ik_gather_init(&ga);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, base + 16 * g, 16 * g, &ga), 0);
	ck_assert_uint_eq(ga.nr_ranges, 0);
	/* all of the table: the general path unlinks it */
	ik_gather_init(&ga);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, base, t, &ga), (ik_s64)(2 * g));
	ck_assert(ga.walk);
	ck_assert_uint_eq(ga.nr_tables, 1);
	ik_pgtable_gather_sync(h->pt, &ga);
	ck_assert_int_eq(unmap_sync(h, base + 2 * t, g), (ik_s64)g);
	th_destroy(h);
}
END_TEST

/*
 * Unmaps of whole entries of one table above level 0 (a block, the entry of
 * a whole level-0 table, an aligned run of them with holes and empty tables)
 * take the one-table fast path; the same layout unmapped with one more
 * granule in an empty neighbour (which forces the general path and clears
 * nothing more) must give exactly the same bytes, cleans, gather, tables
 * queued and table contents.  Per format/granule, non-coherent.
 */
struct we_out {
	ik_s64 bytes;
	long cleans, clean_bytes, gather_adds, frees_before_sync;
	struct ik_gather ga;
	uint64_t digest, digest_synced;
	ik_u32 nr_tables;
};

/* Entries k of the level-1 run at `b` (span t each): 0 and 4 a block (or 3
 * pages where the smallest block is not a level-1 entry), 1 a table with 2
 * pages, 2 empty, 3 an empty table (left by a partial unmap), 5 empty, 6 a
 * table with pages 1..20 and 24..40 (two runs: more than the 16 pages the
 * fast path clears inline). */
static void we_layout(struct th *h, uint64_t b, bool blk)
{
	uint64_t g = G(h), t = T(h), pa = 0x40000000ull;
	unsigned k;

	for (k = 0; k < 5; k += 4) {
		uint64_t at = b + k * t, len = blk ? t : 3 * g;

		ck_assert_int_eq(ik_pgtable_map(h->pt, blk ? at : at + g, pa + k * t, len, PROT_RW), 0);
	}
	ck_assert_int_eq(ik_pgtable_map(h->pt, b + t, pa + t, g, PROT_RW), 0);
	ck_assert_int_eq(ik_pgtable_map(h->pt, b + t + 5 * g, pa + t + 5 * g, g, PROT_RW), 0);
	ck_assert_int_eq(ik_pgtable_map(h->pt, b + 3 * t + 7 * g, pa, g, PROT_RW), 0);
	ck_assert_int_eq(unmap_sync(h, b + 3 * t + 7 * g, g), (ik_s64)g);
	ck_assert_int_eq(ik_pgtable_map(h->pt, b + 6 * t + g, pa + g, 20 * g, PROT_RW), 0);
	ck_assert_int_eq(ik_pgtable_map(h->pt, b + 6 * t + 24 * g, pa + 24 * g, 17 * g, PROT_RW), 0);
}

/* Unmap [b + first * t - pre, b + (first + n) * t + post) from a fresh
 * table set with the layout. */
static void we_run(int i, unsigned first, unsigned n, uint64_t pre, uint64_t post,
		   struct we_out *o)
{
	struct th *h = th_new(i, false);
	uint64_t t = T(h), b = BASE(h) + 8 * t;
	long frees;

	we_layout(h, b, B(h) == t);
	th_reset_counts(h);
	frees = h->frees;
	ik_gather_init(&o->ga);
	o->bytes = ik_pgtable_unmap(h->pt, b + first * t - pre, n * t + pre + post, &o->ga);
	o->cleans = h->cleans;
	o->clean_bytes = h->clean_bytes;
	o->gather_adds = h->gather_adds;
	o->frees_before_sync = h->frees - frees;
	o->nr_tables = o->ga.nr_tables;
	o->digest = th_digest(h);
	{
		/* sync a copy: o->ga keeps what the unmap put in it */
		struct ik_gather sg = o->ga;

		ck_assert_int_eq(ik_pgtable_gather_sync(h->pt, &sg), 0);
	}
	o->digest_synced = th_digest(h);
	th_destroy(h);
}

START_TEST(whole_entry_unmaps_match_the_general_path)
{
	/* first entry, entries, and which empty neighbour the general path's
	 * extra granule goes into (-1: the one before, 1: the one after) */
	static const int runs[][3] = { { 0, 1, -1 }, { 1, 1, 1 }, { 3, 1, -1 }, { 0, 5, 1 } };
	struct th *h = th_new(_i, false);
	uint64_t g = G(h), t = T(h), b = BASE(h) + 8 * t;
	bool blk = B(h) == t;
	struct we_out f, s;
	unsigned r;

	th_destroy(h);
	for (r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		we_run(_i, (unsigned)runs[r][0], (unsigned)runs[r][1], 0, 0, &f);
		we_run(_i, (unsigned)runs[r][0], (unsigned)runs[r][1], runs[r][2] < 0 ? g : 0,
		       runs[r][2] > 0 ? g : 0, &s);
		ck_assert_msg(f.bytes == s.bytes, "%s run %u: bytes %lld vs %lld", fmt_cases[_i].name,
			      r, (long long)f.bytes, (long long)s.bytes);
		ck_assert_int_eq(f.cleans, s.cleans);
		ck_assert_int_eq(f.clean_bytes, s.clean_bytes);
		ck_assert_int_eq(f.gather_adds, s.gather_adds);
		ck_assert_uint_eq(f.ga.start, s.ga.start);
		ck_assert_uint_eq(f.ga.end, s.ga.end);
		ck_assert_uint_eq(f.ga.granule, s.ga.granule);
		ck_assert_uint_eq(f.ga.nr_ranges, s.ga.nr_ranges);
		ck_assert(f.ga.walk == s.ga.walk);
		ck_assert_uint_eq(f.nr_tables, s.nr_tables);
		ck_assert_int_eq(f.frees_before_sync, 0);
		ck_assert_int_eq(s.frees_before_sync, 0);
		ck_assert_uint_eq(f.digest, s.digest);
		ck_assert_uint_eq(f.digest_synced, s.digest_synced);
	}
	/* the run 0..4, as documented: two runs of two cleared entries (one
	 * clean each), one range, the granule (tables were unlinked) */
	ck_assert_int_eq(f.bytes, (ik_s64)(blk ? 2 * t + 2 * g : 8 * g));
	ck_assert_int_eq(f.cleans, 2);
	ck_assert_int_eq(f.clean_bytes, 32);
	ck_assert_int_eq(f.gather_adds, 1);
	ck_assert_uint_eq(f.ga.start, b);
	ck_assert_uint_eq(f.ga.end, b + 5 * t);
	ck_assert_uint_eq(f.ga.granule, g);
	ck_assert(f.ga.walk);
	ck_assert_uint_eq(f.nr_tables, blk ? 2 : 4);
	/* a block alone: one entry cleaned, its own size as the granule */
	we_run(_i, 0, 1, 0, 0, &f);
	ck_assert_int_eq(f.cleans, 1);
	ck_assert_int_eq(f.clean_bytes, 8);
	ck_assert_uint_eq(f.ga.start, b);
	ck_assert_uint_eq(f.ga.end, b + t);
	ck_assert_uint_eq(f.ga.granule, blk ? t : g);
	ck_assert(f.ga.walk == !blk);
	/* pages of entry 6's table, 48 (two runs) and 12: the fast path (long
	 * and inline loops) against the general one (one granule of entry 5
	 * more) */
	{
		static const unsigned npg[] = { 48, 12 };
		unsigned k;

		for (k = 0; k < 2; k++) {
			we_run(_i, 6, 0, 0, npg[k] * g, &f);
			we_run(_i, 6, 0, g, npg[k] * g, &s);
			ck_assert_int_eq(f.bytes, (ik_s64)((k ? 11 : 37) * g));
			ck_assert_int_eq(f.bytes, s.bytes);
			ck_assert_int_eq(f.cleans, k ? 1 : 2);
			ck_assert_int_eq(f.cleans, s.cleans);
			ck_assert_int_eq(f.clean_bytes, s.clean_bytes);
			ck_assert_uint_eq(f.ga.start, b + 6 * t + g);
			ck_assert_uint_eq(f.ga.start, s.ga.start);
			ck_assert_uint_eq(f.ga.end, b + 6 * t + (k ? 12 : 41) * g);
			ck_assert_uint_eq(f.ga.end, s.ga.end);
			ck_assert_uint_eq(f.ga.granule, g);
			ck_assert_uint_eq(s.ga.granule, g);
			ck_assert(!f.ga.walk && !s.ga.walk);
			ck_assert_uint_eq(f.nr_tables + s.nr_tables, 0);
			ck_assert_uint_eq(f.digest, s.digest);
		}
	}
	/* the empty entry, whole or in part: nothing mapped, nothing added */
	we_run(_i, 2, 1, 0, 0, &f);
	ck_assert_int_eq(f.bytes, 0);
	ck_assert_int_eq(f.cleans + f.gather_adds, 0);
	ck_assert_uint_eq(f.ga.nr_ranges, 0);
	we_run(_i, 2, 0, 0, g, &f);
	ck_assert_int_eq(f.bytes, 0);
	ck_assert_int_eq(f.cleans + f.gather_adds, 0);
}
END_TEST

START_TEST(exact_clean_and_sync_counts)
{
	struct th *h = th_new(_i, false);
	uint64_t g = G(h), t = T(h), base = BASE(h) + 4 * t, pa = 0x10000000ull + g;
	struct ik_gather ga;
	struct ik_seg segs[30];
	unsigned k;
	struct ik_pgtable_stats st;

	/* make the level-0 table exist (a page past the ones used below) */
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + 300 * g, 0x1000000, g, PROT_RW), 0);

	/* 256 pages inside one table page: one clean of 256 entries, one sync */
	th_reset_counts(h);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base, pa, 256 * g, PROT_RW), 0);
	ck_assert_int_eq(h->cleans, 1);
	ck_assert_int_eq(h->clean_bytes, 256 * 8);
	ck_assert_int_eq(h->sync_maps, 1);
	ck_assert_uint_eq(h->last_sync_iova, base);
	ck_assert_uint_eq(h->last_sync_size, 256 * g);
	th_reset_counts(h);
	ik_gather_init(&ga);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, base, 256 * g, &ga), (ik_s64)(256 * g));
	ck_assert_int_eq(h->cleans, 1);
	ck_assert_int_eq(h->clean_bytes, 256 * 8);
	ck_assert_int_eq(h->gather_adds, 1);
	ck_assert_int_eq(ga.nr_ranges, 1);
	ck_assert_uint_eq(ga.start, base);
	ck_assert_uint_eq(ga.end, base + 256 * g);
	ck_assert_uint_eq(ga.granule, g);
	ck_assert(!ga.walk);
	ik_pgtable_gather_sync(h->pt, &ga);
	ck_assert_int_eq(h->iotlb_syncs, 1);

	/* 30 non-contiguous segments, one table page: one sync, one clean */
	for (k = 0; k < 30; k++) {
		segs[k].paddr = 0x20000000ull + (uint64_t)k * 7 * g;
		segs[k].len = g;
	}
	th_reset_counts(h);
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, base + 100 * g, segs, 30, PROT_RW, NULL), 0);
	ck_assert_int_eq(h->sync_maps, 1);
	ck_assert_uint_eq(h->last_sync_size, 30 * g);
	ck_assert_int_eq(h->cleans, 1);
	ck_assert_int_eq(h->clean_bytes, 30 * 8);
	/* the same list crossing into the next table (which exists): two cleans */
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + t + 300 * g, 0x1000000, g, PROT_RW), 0);
	th_reset_counts(h);
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, base + t - 8 * g, segs, 15, PROT_RW, NULL), 0);
	ck_assert_int_eq(h->cleans, 2);
	ck_assert_int_eq(h->sync_maps, 1);
	/* into empty space: the new table (whole, once) and its parent entry */
	th_reset_counts(h);
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, base + 3 * t, segs, 30, PROT_RW, NULL), 0);
	ck_assert_int_eq(h->cleans, 2);
	ck_assert_int_eq(h->clean_bytes, (long)(8 * E(h) + 8));
	ck_assert_int_eq(h->sync_maps, 1);

	/* two blocks for a block-aligned buffer of twice the block size */
	if (B(h)) {
		uint64_t bb = BASE(h) + 64 * B(h), got, sz;
		uint64_t bpa = h->g.oas > 36 ? 0x100000000ull : 0x80000000ull;
		struct ik_pt_walker w;
		struct ik_pt_mem mem;
		struct ik_pt_walk_result r;

		th_reset_counts(h);
		ck_assert_int_eq(ik_pgtable_map(h->pt, bb, bpa, 2 * B(h), PROT_RW), 0);
		ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, bb + B(h) + g, &got, &sz), 0);
		ck_assert_uint_eq(sz, B(h));
		ck_assert_uint_eq(got, bpa + B(h) + g);
		ik_pgtable_walker(h->pt, &w);
		th_mem(h, &mem, false);
		ck_assert_int_eq(ik_pt_walk(&w, &mem, bb, IK_ACCESS_READ, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
		ck_assert_uint_eq(r.pgsize, B(h));
		ck_assert_uint_eq(r.level, 1);
		ik_pgtable_get_stats(h->pt, &st);
		ck_assert_int_eq(h->sync_maps, 1);
		/* two entries in one table: one clean of 16 bytes (+ the new
		 * table holding them, whole, if it had to be created) */
		ck_assert_int_le(h->cleans, 2);
		ck_assert_uint_eq(h->last_clean_size, 16);
		th_reset_counts(h);
		ck_assert_int_eq(unmap_sync(h, bb, 2 * B(h)), (ik_s64)(2 * B(h)));
		ck_assert_int_eq(h->cleans, 1);
		ck_assert_uint_eq(h->last_clean_size, 16);
	}
	th_destroy(h);
}
END_TEST

/* Unmap of a whole level-0 table's span clears one entry (not E leaves),
 * and the table is freed only when the gather is synced. */
START_TEST(whole_table_unmap_drops_table_after_gather_sync)
{
	struct th *h = th_new(_i, false);
	uint64_t g = G(h), t = T(h), base = BASE(h) + 2 * t;
	struct ik_gather ga;
	struct ik_pgtable_stats s0, s1;
	struct ik_pgtable_info info;
	uint64_t d_before;
	long frees;

	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x40000000ull + g, t, PROT_RW), 0);
	ik_pgtable_get_stats(h->pt, &s0);
	ik_pgtable_get_info(h->pt, &info);
	d_before = th_digest(h);
	th_reset_counts(h);
	frees = h->frees;
	ik_gather_init(&ga);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, base, t, &ga), (ik_s64)t);
	ck_assert_int_eq(h->cleans, 1);
	ck_assert_int_eq(h->clean_bytes, 8);
	ck_assert_int_eq(ga.nr_tables, 1);
	ck_assert(ga.walk);
	ck_assert_int_eq(ga.nr_ranges, 1);
	ck_assert_uint_eq(ga.start, base);
	ck_assert_uint_eq(ga.end, base + t);
	/* the unlinked table is untouched and not freed yet */
	ik_pgtable_get_stats(h->pt, &s1);
	ck_assert_uint_eq(s1.tables_freed, s0.tables_freed);
	ck_assert_uint_eq(s1.cache_pages, s0.cache_pages);
	ck_assert_int_eq(h->frees, frees);
	(void)d_before;
	{
		/* the leaves of the unlinked table still read as before */
		struct ik_pt_walker w;
		struct ik_pt_mem mem;
		struct ik_pt_walk_result r;

		ik_pgtable_walker(h->pt, &w);
		th_mem(h, &mem, false);
		ck_assert_int_eq(ik_pt_walk(&w, &mem, base + g, 0, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_TRANSLATION);
		ck_assert_uint_eq(r.level, 1);
	}
	ik_pgtable_gather_sync(h->pt, &ga);
	ik_pgtable_get_stats(h->pt, &s1);
	ck_assert_uint_eq(s1.cache_pages, s0.cache_pages + 1); /* into the cache */
	ck_assert_int_eq(ga.nr_tables, 0);
	/* map again: the cached page comes back, nothing allocated */
	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x40000000ull + g, t, PROT_RW), 0);
	ik_pgtable_get_stats(h->pt, &s0);
	ck_assert_uint_eq(s0.tables_alloc, s1.tables_alloc);
	ck_assert_uint_eq(s0.cache_hits, s1.cache_hits + 1);
	th_destroy(h);
}
END_TEST

START_TEST(page_size_choice)
{
	struct th *h = th_new(_i, true);
	uint64_t g = G(h), b = B(h), iova, pa, got, sz;
	struct ik_seg segs[2];

	if (!b) {
		th_destroy(h);
		return;
	}
	/* at b/2 alignment, 2b long: b/2 of pages, a block, b/2 of pages */
	iova = BASE(h) + 16 * b + b / 2;
	pa = (h->g.oas > 36 ? 0x200000000ull : 0x80000000ull) + b / 2;
	ck_assert_int_eq(ik_pgtable_map(h->pt, iova, pa, 2 * b, PROT_RW), 0);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova, &got, &sz), 0);
	ck_assert_uint_eq(sz, g);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova + b / 2, &got, &sz), 0);
	ck_assert_uint_eq(sz, b);
	ck_assert_uint_eq(got, pa + b / 2);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova + 3 * b / 2, &got, &sz), 0);
	ck_assert_uint_eq(sz, g);
	ck_assert_int_eq(unmap_sync(h, iova, 2 * b), (ik_s64)(2 * b));
	/* paddr offset by one page: pages only */
	ck_assert_int_eq(ik_pgtable_map(h->pt, iova + b / 2, pa + g, b, PROT_RW), 0);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova + b / 2, &got, &sz), 0);
	ck_assert_uint_eq(sz, g);
	ck_assert_int_eq(unmap_sync(h, iova + b / 2, b), (ik_s64)b);
	/* map_pages forces its size */
	ck_assert_int_eq(ik_pgtable_map_pages(h->pt, iova + b / 2, pa + b / 2, g, b / g, PROT_RW), 0);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova + b / 2, &got, &sz), 0);
	ck_assert_uint_eq(sz, g);
	ck_assert_int_eq(unmap_sync(h, iova, 2 * b), (ik_s64)b);
	/* map_sg coalesces contiguous segments into a block */
	segs[0].paddr = pa + b / 2;
	segs[0].len = b / 2;
	segs[1].paddr = pa + b;
	segs[1].len = b / 2;
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, iova + b / 2, segs, 2, PROT_RW, NULL), 0);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova + b - g, &got, &sz), 0);
	ck_assert_uint_eq(sz, b);
	ck_assert_uint_eq(got, pa + b - g);
	ck_assert_int_eq(unmap_sync(h, iova + b / 2, b), (ik_s64)b);
	/* the largest size: a top block where the format has one above b */
	if (h->g.pgsize_bitmap & ~(b | g) & ~((2 * b) - 1)) {
		uint64_t big = h->g.pgsize_bitmap & ~((2 * b) - 1);

		big &= -big;
		if (big * 4 < (1ull << (h->g.ias - 1))) {
			ck_assert_int_eq(ik_pgtable_map(h->pt, BASE(h) + big, big, big + b, PROT_RW), 0);
			ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, BASE(h) + big + g, &got, &sz), 0);
			ck_assert_uint_eq(sz, big);
			ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, BASE(h) + 2 * big, &got, &sz), 0);
			ck_assert_uint_eq(sz, b);
			ck_assert_int_eq(unmap_sync(h, BASE(h) + big, big + b), (ik_s64)(big + b));
		}
	}
	th_destroy(h);
}
END_TEST

START_TEST(partial_unmap_splits_block)
{
	struct th *h = th_new(_i, false);
	uint64_t g = G(h), b = B(h), iova, pa = 0x300000000ull, got, sz, off;
	struct ik_gather ga;
	struct ik_pgtable_stats st;
	struct ik_pt_walker w;
	struct ik_pt_mem mem;

	if (!b) {
		th_destroy(h);
		return;
	}
	if (h->g.oas < 36)
		pa = 0x80000000ull;
	iova = BASE(h) + 4 * b;
	ck_assert_int_eq(ik_pgtable_map(h->pt, iova, pa, b, PROT_RW | IK_PROT_CACHE), 0);
	th_reset_counts(h);
	ik_gather_init(&ga);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, iova + 3 * g, 2 * g, &ga), (ik_s64)(2 * g));
	ck_assert(ga.walk);
	ck_assert_uint_eq(ga.start, iova + 3 * g);
	ck_assert_uint_eq(ga.end, iova + 5 * g);
	/* the new table, cleaned whole once, and the swapped entry */
	ck_assert_int_eq(h->cleans, 2);
	ik_pgtable_gather_sync(h->pt, &ga);
	ik_pgtable_get_stats(h->pt, &st);
	ck_assert_uint_eq(st.splits, 1);
	ik_pgtable_walker(h->pt, &w);
	th_mem(h, &mem, false);
	for (off = 0; off < b; off += g) {
		struct ik_pt_walk_result r;
		int ret = ik_pgtable_iova_to_phys(h->pt, iova + off, &got, &sz);

		ck_assert_int_eq(ik_pt_walk(&w, &mem, iova + off, IK_ACCESS_WRITE, &r), 0);
		if (off == 3 * g || off == 4 * g) {
			IK_REQUIRE(ret == -ENOENT && r.fault == IK_PT_FAULT_TRANSLATION);
		} else {
			IK_REQUIRE(ret == 0 && got == pa + off && sz == g);
			IK_REQUIRE(r.fault == IK_PT_FAULT_NONE && r.oa == pa + off);
			IK_REQUIRE((r.prot & h->fc->prot_mask) ==
				   ((PROT_RW | IK_PROT_CACHE) & h->fc->prot_mask));
		}
	}
	/* the rest goes too; mapping over the hole works */
	ck_assert_int_eq(ik_pgtable_map(h->pt, iova + 3 * g, pa + 3 * g, 2 * g, PROT_RW), 0);
	ck_assert_int_eq(unmap_sync(h, iova, b), (ik_s64)b);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova, &got, &sz), -ENOENT);
	/* splitting across the end of a block and into the next */
	ck_assert_int_eq(ik_pgtable_map(h->pt, iova, pa, 2 * b, PROT_RW), 0);
	ck_assert_int_eq(unmap_sync(h, iova + b - g, 2 * g), (ik_s64)(2 * g));
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova + b - 2 * g, &got, &sz), 0);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova + b + g, &got, &sz), 0);
	ck_assert_uint_eq(got, pa + b + g);
	ck_assert_int_eq(unmap_sync(h, iova, 2 * b), (ik_s64)(2 * b - 2 * g));
	th_destroy(h);
}
END_TEST

/* Map 4 pages at iova + 8 granules and unmap them again in `parts` unmaps:
 * partial unmaps, which leave the table in place and empty.  Then the
 * counters are reset and the stats are in *s0. */
static void leave_empty_table(struct th *h, uint64_t iova, unsigned parts,
			      struct ik_pgtable_stats *s0)
{
	uint64_t g = G(h), step = 4 * g / parts;

	ck_assert_int_eq(ik_pgtable_map(h->pt, iova + 8 * g, 0x1000000 + g, 4 * g, PROT_RW), 0);
	for (uint64_t off = 0; off < 4 * g; off += step)
		ck_assert_int_eq(unmap_sync(h, iova + 8 * g + off, step), (ik_s64)step);
	ik_pgtable_get_stats(h->pt, s0);
	th_reset_counts(h);
}

/* Partial unmaps leave an empty table; a block may then go there: the
 * table is freed after a walk-cache flush, and nothing else changes. */
START_TEST(block_replaces_empty_table_after_walk_flush)
{
	struct th *h = th_new(_i, false);
	uint64_t g = G(h), b = B(h), iova, got, sz;
	struct ik_pgtable_stats s0, s1;

	if (!b) {
		th_destroy(h);
		return;
	}
	iova = BASE(h) + 2 * b;
	leave_empty_table(h, iova, 1, &s0);
	ck_assert_int_eq(ik_pgtable_map(h->pt, iova, 0x80000000ull, b, PROT_RW), 0);
	ck_assert_int_eq(h->flush_walks, 1);
	ck_assert_int_eq(h->sync_maps, 1);
	ck_assert_int_eq(h->cleans, 1); /* the one entry */
	ik_pgtable_get_stats(h->pt, &s1);
	ck_assert_uint_eq(s1.cache_pages + s1.tables_freed, s0.cache_pages + s0.tables_freed + 1);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova + 9 * g, &got, &sz), 0);
	ck_assert_uint_eq(sz, b);
	ck_assert_uint_eq(got, 0x80000000ull + 9 * g);
	/* a table that still maps something is a conflict */
	ck_assert_int_eq(ik_pgtable_map(h->pt, iova + b + g, 0x1000000, g, PROT_RW), 0);
	ck_assert_int_eq(ik_pgtable_map(h->pt, iova + b, 0x80000000ull + b, b, PROT_RW), -EEXIST);
	ck_assert_int_eq(unmap_sync(h, iova, 2 * b), (ik_s64)(b + g));
	th_destroy(h);
}
END_TEST

START_TEST(deferred_leaf_clean_quirk_cleans_once_per_run)
{
	struct th *h = th_new_cfg(&fmt_cases[_i], false, IK_PT_QUIRK_DEFER_LEAF_CLEAN);
	uint64_t g = G(h), base = BASE(h);

	ck_assert_int_eq(ik_pgtable_map(h->pt, base + T(h) - g, 0x1000000, g, PROT_RW), 0);
	th_reset_counts(h);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x2000000 + g, 256 * g, PROT_RW), 0);
	ck_assert_int_eq(h->cleans, 1);
	ck_assert_int_eq(h->clean_bytes, 256 * 8);
	ck_assert_int_eq(h->sync_maps, 1);
	ck_assert_int_eq(unmap_sync(h, base, T(h)), (ik_s64)(257 * g));
	th_destroy(h);
}
END_TEST

/* ------------------------------------------------------------ concurrency */

/*
 * Deterministic races: the harness runs a second request from inside the
 * clean that the engine issues for its private tables just before it
 * installs them (the hook contract forbids this to drivers; here it stands
 * for another CPU winning the race at that instant).
 */
static uint64_t race_base;

static void race_map(struct th *h)
{
	ck_assert_int_eq(ik_pgtable_map(h->pt, race_base + 8 * G(h), 0x9000000, 4 * G(h), PROT_RW), 0);
}

static void race_unmap(struct th *h)
{
	ck_assert_int_eq(unmap_sync(h, race_base + 100 * G(h), G(h)), (ik_s64)G(h));
}

START_TEST(losing_table_install_merges_into_winner)
{
	struct th *h = th_new(_i, false);
	uint64_t g = G(h), got, sz, k;
	struct ik_pgtable_stats st;
	struct ik_pt_walker w;
	struct ik_pt_mem mem;

	race_base = BASE(h) + (BASE(h) >> 2); /* nothing below it yet */
	h->on_clean = race_map;
	ck_assert_int_eq(ik_pgtable_map(h->pt, race_base, 0x1000000, 4 * g, PROT_RW), 0);
	ck_assert_ptr_null(h->on_clean);
	ik_pgtable_get_stats(h->pt, &st);
	ck_assert_uint_ge(st.cas_lost, 1);
	ik_pgtable_walker(h->pt, &w);
	th_mem(h, &mem, false);
	for (k = 0; k < 12; k++) {
		struct ik_pt_walk_result r;
		int ret = ik_pgtable_iova_to_phys(h->pt, race_base + k * g, &got, &sz);

		ck_assert_int_eq(ik_pt_walk(&w, &mem, race_base + k * g, IK_ACCESS_READ, &r), 0);
		if (k < 4 || k >= 8) {
			uint64_t want = k < 4 ? 0x1000000 + k * g : 0x9000000 + (k - 8) * g;

			ck_assert_int_eq(ret, 0);
			ck_assert_uint_eq(got, want);
			ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
			ck_assert_uint_eq(r.oa, want);
		} else {
			ck_assert_int_eq(ret, -ENOENT);
			ck_assert_int_eq(r.fault, IK_PT_FAULT_TRANSLATION);
		}
	}
	ck_assert_int_eq(unmap_sync(h, race_base, 12 * g), (ik_s64)(8 * g));
	/* two unmaps splitting the same block: the loser unmaps from the
	 * winner's table */
	if (B(h)) {
		uint64_t b = B(h), bpa = 0x80000000ull;

		race_base = BASE(h) - 2 * b;
		ck_assert_int_eq(ik_pgtable_map(h->pt, race_base, bpa, b, PROT_RW), 0);
		h->on_clean = race_unmap;
		ck_assert_int_eq(unmap_sync(h, race_base + 3 * g, g), (ik_s64)g);
		ck_assert_ptr_null(h->on_clean);
		for (k = 0; k < 128; k++) {
			int ret = ik_pgtable_iova_to_phys(h->pt, race_base + k * g, &got, &sz);

			if (k == 3 || k == 100) {
				IK_REQUIRE(ret == -ENOENT);
			} else {
				IK_REQUIRE(ret == 0 && got == bpa + k * g && sz == g);
			}
		}
		ik_pgtable_get_stats(h->pt, &st);
		ck_assert_uint_ge(st.cas_lost, 2);
		ck_assert_uint_ge(st.splits, 1);
		ck_assert_int_eq(unmap_sync(h, race_base, b), (ik_s64)(b - 2 * g));
	}
	th_destroy(h);
}
END_TEST

struct cc_arg {
	struct th *h;
	unsigned id, nthreads;
	long rounds;
	pthread_barrier_t *bar;
	int errors;
};

/* Each round, every thread maps its own interleaved pages in a region no
 * table exists for yet (so the threads race to install the same tables),
 * checks them, and unmaps them; also a private whole-table span is mapped
 * and dropped. */
static void *cc_thread(void *p)
{
	struct cc_arg *a = p;
	struct th *h = a->h;
	uint64_t g = G(h), t = T(h), upper = t << h->g.bits;
	long r;
	unsigned k;

	for (r = 0; r < a->rounds; r++) {
		uint64_t step = 8 * (upper + 2 * t) < BASE(h) ? upper + 2 * t : 8 * t;
		uint64_t region = BASE(h) + ((uint64_t)r % 8) * step + ((uint64_t)r / 8) * 4 * t;
		uint64_t own = BASE(h) / 2 + (uint64_t)a->id * 4 * t;
		struct ik_gather ga;

		pthread_barrier_wait(a->bar);
		for (k = a->id; k < 64; k += a->nthreads) {
			uint64_t iova = region + (uint64_t)k * g;

			int ret = ik_pgtable_map(h->pt, iova, 0x10000000ull + (uint64_t)k * g, g, PROT_RW);

			if (ret) {
				if (!a->errors)
					fprintf(stderr, "thread %u round %ld map %d\n", a->id, r, ret);
				a->errors++;
			}
		}
		for (k = a->id; k < 64; k += a->nthreads) {
			uint64_t pa = 0;

			if (ik_pgtable_iova_to_phys(h->pt, region + (uint64_t)k * g, &pa, NULL) ||
			    pa != 0x10000000ull + (uint64_t)k * g) {
				if (!a->errors)
					fprintf(stderr, "thread %u round %ld lookup %u\n", a->id, r, k);
				a->errors++;
			}
		}
		ik_gather_init(&ga);
		for (k = a->id; k < 64; k += a->nthreads)
			if (ik_pgtable_unmap(h->pt, region + (uint64_t)k * g, g, &ga) != (ik_s64)g)
				a->errors++;
		/* a whole table span of our own: install and drop */
		if (ik_pgtable_map(h->pt, own, 0x20000000ull + g, t, PROT_RW))
			a->errors++;
		if (ik_pgtable_unmap(h->pt, own, t, &ga) != (ik_s64)t)
			a->errors++;
		ik_pgtable_gather_sync(h->pt, &ga);
	}
	return NULL;
}

START_TEST(concurrent_disjoint_map_unmap)
{
	struct th *h = th_new(_i, _i % 2 == 1);
	enum { NT = 4 };
	pthread_t tid[NT];
	struct cc_arg a[NT];
	pthread_barrier_t bar;
	unsigned i;
	long rounds = ik_test_iters(getenv("IK_TSAN") ? 8 : 40);
	struct ik_pgtable_stats st;

	pthread_barrier_init(&bar, NULL, NT);
	for (i = 0; i < NT; i++) {
		a[i].h = h;
		a[i].id = i;
		a[i].nthreads = NT;
		a[i].rounds = rounds;
		a[i].bar = &bar;
		a[i].errors = 0;
		pthread_create(&tid[i], NULL, cc_thread, &a[i]);
	}
	for (i = 0; i < NT; i++) {
		pthread_join(tid[i], NULL);
		ck_assert_int_eq(a[i].errors, 0);
	}
	pthread_barrier_destroy(&bar);
	ik_pgtable_get_stats(h->pt, &st);
	if (getenv("IK_TEST_VERBOSE"))
		fprintf(stderr, "%s: %llu table installs lost to a concurrent request\n",
			h->fc->name, (unsigned long long)st.cas_lost);
	/* every page is gone again */
	{
		struct dump_check d;
		struct shadow s;

		sh_init(&s, 0, 1, G(h));
		memset(&d, 0, sizeof(d));
		d.s = &s;
		ck_assert_int_eq(ik_pgtable_dump(h->pt, 0, 1ull << h->g.ias, dump_cb, &d), 0);
		ck_assert_int_eq(d.nranges, 0);
		sh_free(&s);
	}
	th_destroy(h);
}
END_TEST

/* ------------------------------------------------------------ walker, dirty */

/* Walker view of [iova, iova + size): every granule page translates to
 * pa + offset with a leaf of `pgsize` bytes. */
static void walk_expect(struct th *h, uint64_t iova, uint64_t pa, uint64_t size, uint64_t pgsize)
{
	struct ik_pt_walker w;
	struct ik_pt_mem mem;
	struct ik_pt_walk_result r;

	ik_pgtable_walker(h->pt, &w);
	th_mem(h, &mem, false);
	/* The first and the last granule of every leaf (a granule-by-granule
	 * walk of a 4T range of 512M blocks would take minutes). */
	for (uint64_t off = 0; off < size; off += pgsize) {
		for (uint64_t in = 0; in < pgsize; in += pgsize > G(h) ? pgsize - G(h) : pgsize) {
			uint64_t o = off + in;

			IK_REQUIRE(ik_pt_walk(&w, &mem, iova + o, IK_ACCESS_READ, &r) == 0);
			IK_REQUIRE_MSG(r.fault == IK_PT_FAULT_NONE && r.oa == pa + o && r.pgsize == pgsize,
				       "%s: iova %#llx: fault %d oa %#llx pgsize %#llx", h->fc->name,
				       (unsigned long long)(iova + o), r.fault, (unsigned long long)r.oa,
				       (unsigned long long)r.pgsize);
		}
	}
}

/*
 * Issue #12 item 4: with neither flush_walk nor flush_all, nothing can
 * invalidate a walk cache that may still point at a table emptied by partial
 * unmaps, so a block must not replace it (the table would be freed, and
 * reused, under the walk cache).  The table stays, the block's range is
 * mapped into it with smaller leaves, and the same holds one level up, where
 * the emptied table holds an emptied table and holes.
 */
START_TEST(without_walk_flush_empty_tables_are_kept)
{
	struct th *h = th_new_hooks(&fmt_cases[_i], false, 0, false);
	uint64_t g = G(h), b = B(h), big, iova, got, sz;
	struct ik_pgtable_stats s0, s1;

	if (!b) {
		th_destroy(h);
		return;
	}
	iova = BASE(h) + 2 * b;
	leave_empty_table(h, iova, 2, &s0);
	ck_assert_int_eq(ik_pgtable_map(h->pt, iova, 0x80000000ull, b, PROT_RW), 0);
	ck_assert_int_eq(h->flush_walks, 0);
	ck_assert_int_eq(h->sync_maps, 1);
	ik_pgtable_get_stats(h->pt, &s1);
	ck_assert_uint_eq(s1.tables_freed, s0.tables_freed);	/* nothing freed ... */
	ck_assert_uint_eq(s1.cache_pages, s0.cache_pages);	/* ... nor cached */
	ck_assert_uint_eq(s1.tables_live, s0.tables_live);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, iova + 9 * g, &got, &sz), 0);
	ck_assert_uint_eq(got, 0x80000000ull + 9 * g);
	ck_assert_uint_lt(sz, b);
	walk_expect(h, iova, 0x80000000ull, b, sz);
	/* the range is mapped: a second map is a conflict, the unmap gets it all */
	ck_assert_int_eq(ik_pgtable_map(h->pt, iova, 0x80000000ull, b, PROT_RW), -EEXIST);
	ck_assert_int_eq(unmap_sync(h, iova, b), (ik_s64)b);

	/* One level up: the next block size over an emptied table that holds
	 * the emptied table above and holes. */
	big = h->g.pgsize_bitmap & ~(2 * b - 1);
	big &= -big;
	if (big && 2 * big <= (1ull << (h->g.ias - 1))) {
		uint64_t at = BASE(h) + big;

		ck_assert_int_eq(ik_pgtable_map(h->pt, at + b + g, 0x1000000, g, PROT_RW), 0);
		ck_assert_int_eq(unmap_sync(h, at + b + g, g), (ik_s64)g);
		ik_pgtable_get_stats(h->pt, &s0);
		ck_assert_int_eq(ik_pgtable_map(h->pt, at, 0x40000000ull, big, PROT_RW), 0);
		ik_pgtable_get_stats(h->pt, &s1);
		ck_assert_uint_eq(s1.tables_freed, s0.tables_freed);
		ck_assert_int_eq(h->flush_walks, 0);
		ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, at, &got, &sz), 0);
		ck_assert_uint_eq(sz, b);	/* beside the kept table: blocks */
		ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, at + b + g, &got, &sz), 0);
		ck_assert_uint_eq(got, 0x40000000ull + b + g);
		ck_assert_uint_lt(sz, b);	/* in it: pages */
		walk_expect(h, at, 0x40000000ull, b, b);
		walk_expect(h, at + b, 0x40000000ull + b, b, sz);
		walk_expect(h, at + 2 * b, 0x40000000ull + 2 * b, big - 2 * b, b);
		ck_assert_int_eq(unmap_sync(h, at, big), (ik_s64)big);
	}
	th_destroy(h);
}
END_TEST

START_TEST(walker_reports_faults_like_hardware)
{
	struct th *h = th_new(_i, true);
	uint64_t g = G(h), base = BASE(h), top = 1ull << h->g.ias;
	struct ik_pt_walker w;
	struct ik_pt_mem mem;
	struct ik_pt_walk_result r;
	ik_u64 *e, saved;

	ik_pgtable_walker(h->pt, &w);
	th_mem(h, &mem, false);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x1000000, g, IK_PROT_READ | IK_PROT_NOEXEC), 0);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + g, 0x2000000, g, PROT_RW), 0);
	/* translation: unmapped, beyond ias */
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + 2 * g, IK_ACCESS_READ, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_TRANSLATION);
	ck_assert_uint_eq(r.level, 0);
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + T(h) * 4, IK_ACCESS_READ, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_TRANSLATION);
	ck_assert_int_gt(r.level, 0);
	ck_assert_int_eq(ik_pt_walk(&w, &mem, top, IK_ACCESS_READ, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_TRANSLATION);
	/* permission: write to read-only, exec of no-exec */
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + 8, IK_ACCESS_READ, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
	ck_assert_uint_eq(r.oa, 0x1000008);
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base, IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_PERMISSION);
	ck_assert_uint_eq(r.oa, 0x1000000);
	if (h->fc->prot_mask & IK_PROT_NOEXEC) {
		ck_assert_int_eq(ik_pt_walk(&w, &mem, base, IK_ACCESS_EXEC | IK_ACCESS_PRIV, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_PERMISSION);
		ck_assert_int_eq(ik_pt_walk(&w, &mem, base + g, IK_ACCESS_EXEC | IK_ACCESS_PRIV, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
	}
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + g, IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
	/* privileged-only page, unprivileged access */
	if (h->fc->prot_mask & IK_PROT_PRIV) {
		ck_assert_int_eq(ik_pgtable_map(h->pt, base + 3 * g, 0x3000000, g, PROT_RW | IK_PROT_PRIV), 0);
		ck_assert_int_eq(ik_pt_walk(&w, &mem, base + 3 * g, IK_ACCESS_READ, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_PERMISSION);
		ck_assert_int_eq(ik_pt_walk(&w, &mem, base + 3 * g, IK_ACCESS_READ | IK_ACCESS_PRIV, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
	}
	/* address size: a leaf whose output address is beyond oas */
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + g, 0, &r), 0);
	e = th_entry(h, r.pte_addr);
	ck_assert_ptr_nonnull(e);
	saved = *e;
	if (h->g.oas < 48) {
		*e = saved | (1ull << h->g.oas);
		ck_assert_int_eq(ik_pt_walk(&w, &mem, base + g, IK_ACCESS_READ, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_ADDR_SIZE);
	}
	/* an empty entry (format-specific invalid patterns: in each format's
	 * own test, e.g. lpae_stage1_bits_match_the_architecture) */
	*e = 0;
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + g, IK_ACCESS_READ, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_TRANSLATION);
	*e = saved;
	/* external: the memory read fails (root moved away) */
	w.root += 1ull << 36;
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base, IK_ACCESS_READ, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_EXTERNAL);
	ck_assert_int_eq(unmap_sync(h, base, 4 * g), (ik_s64)(h->fc->prot_mask & IK_PROT_PRIV ? 3 * g : 2 * g));
	th_destroy(h);
}
END_TEST

START_TEST(dirty_tracking_reports_device_writes)
{
	const struct fmt_case *fc = &fmt_cases[_i];
	struct th *h;
	uint64_t g, base, bm[8], b;
	struct ik_pt_walker w;
	struct ik_pt_mem mem;
	struct ik_pt_walk_result r;
	struct ik_gather ga;
	int k;

	h = th_new_cfg(fc, false, 0);
	g = G(h);
	if (!(fc->quirks & IK_PT_QUIRK_DIRTY)) {
		memset(bm, 0, sizeof(bm));
		ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, BASE(h), g, 0, bm,
								 h->g.lg2_granule, NULL),
				 -EOPNOTSUPP);
		th_destroy(h);
		return;
	}
	base = BASE(h);
	b = B(h);
	ik_pgtable_walker(h->pt, &w);
	th_mem(h, &mem, true);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x1000000 + g, 64 * g, PROT_RW), 0);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + 64 * g, 0x4000000 + g, 8 * g, IK_PROT_READ), 0);
	/* nothing written yet */
	memset(bm, 0, sizeof(bm));
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base, 128 * g, 0, bm, h->g.lg2_granule,
							 NULL), 0);
	for (k = 0; k < 8; k++)
		ck_assert_uint_eq(bm[k], 0);
	/* the device writes pages 3, 4 and 40, reads page 5 */
	for (k = 0; k < 3; k++) {
		uint64_t pg = k == 2 ? 40 : 3 + (uint64_t)k;

		ck_assert_int_eq(ik_pt_walk(&w, &mem, base + pg * g, IK_ACCESS_WRITE, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
		ck_assert(r.dirty);
	}
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + 5 * g, IK_ACCESS_READ, &r), 0);
	ck_assert(!r.dirty);
	/* a read-only page stays unwritable */
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + 65 * g, IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_PERMISSION);
	/* report without clearing, twice */
	for (k = 0; k < 2; k++) {
		memset(bm, 0, sizeof(bm));
		ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base, 128 * g, IK_DIRTY_NO_CLEAR,
								 bm, h->g.lg2_granule, NULL), 3);
		ck_assert_uint_eq(bm[0], (1ull << 3) | (1ull << 4) | (1ull << 40));
	}
	/* report and clear: a gather range for the IOTLB, then nothing */
	th_reset_counts(h);
	ik_gather_init(&ga);
	memset(bm, 0, sizeof(bm));
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base, 128 * g, 0, bm, h->g.lg2_granule,
							 &ga), 3);
	ck_assert_uint_eq(bm[0], (1ull << 3) | (1ull << 4) | (1ull << 40));
	ck_assert_uint_eq(ga.start, base + 3 * g);
	ck_assert_uint_eq(ga.end, base + 41 * g);
	ck_assert_int_eq(h->cleans, 2); /* runs {3,4} and {40} */
	ik_pgtable_gather_sync(h->pt, &ga);
	memset(bm, 0, sizeof(bm));
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base, 128 * g, 0, bm, h->g.lg2_granule,
							 NULL), 0);
	ck_assert_uint_eq(bm[0], 0);
	/* still writable (writable-clean) */
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + 3 * g, IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
	/* a dirty block sets the bits of all its pages, in 2 * granule units */
	if (b) {
		uint64_t bb = base + 8 * b, *big;
		uint64_t nbits = b / g / 2, i;

		big = calloc(nbits / 64 + 1, sizeof(*big));
		ck_assert_int_eq(ik_pgtable_map(h->pt, bb, 0x40000000ull, b, PROT_RW), 0);
		ck_assert_int_eq(ik_pt_walk(&w, &mem, bb + 7 * g, IK_ACCESS_WRITE, &r), 0);
		ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, bb, b, 0, big,
								 h->g.lg2_granule + 1, NULL), 1);
		for (i = 0; i < nbits; i++)
			IK_REQUIRE(big[i / 64] & (1ull << (i % 64)));
		free(big);
		ck_assert_int_eq(unmap_sync(h, bb, b), (ik_s64)b);
	}
	/* bad arguments */
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base + 8, g, 0, bm, h->g.lg2_granule,
							 NULL), -EINVAL);
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base, g, 0, bm, h->g.lg2_granule - 1,
							 NULL), -EINVAL);
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base, g, 0x10, bm, h->g.lg2_granule,
							 NULL), -EINVAL);
	ck_assert_int_eq(unmap_sync(h, base, 128 * g), (ik_s64)(72 * g));
	th_destroy(h);
}
END_TEST

/* A dirty leaf smaller than the bitmap's page sets the bit of the page that
 * holds it (fuzz_pgtable: pages of 2^lg2_page bytes with 4K leaves in them
 * were reported clean, their count rounded down to zero bits). */
START_TEST(dirty_small_leaf_sets_the_bit_of_its_larger_page)
{
	const struct fmt_case *fc = &fmt_cases[_i];
	struct th *h;
	uint64_t g, base, bm[2];
	struct ik_pt_walker w;
	struct ik_pt_mem mem;
	struct ik_pt_walk_result r;

	if (!(fc->quirks & IK_PT_QUIRK_DIRTY))
		return;
	h = th_new_cfg(fc, false, 0);
	g = G(h);
	base = BASE(h);
	ik_pgtable_walker(h->pt, &w);
	th_mem(h, &mem, true);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x1000000, 16 * g, PROT_RW), 0);
	/* the device writes granule pages 1 and 6 */
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + g, IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + 6 * g, IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
	/* in pages of 4 granules: bits 0 and 1 */
	memset(bm, 0, sizeof(bm));
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base, 16 * g, IK_DIRTY_NO_CLEAR, bm,
							 h->g.lg2_granule + 2, NULL), 2);
	ck_assert_uint_eq(bm[0], 3);
	/* in one page of 16 granules: bit 0, and cleared */
	memset(bm, 0, sizeof(bm));
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base, 16 * g, 0, bm,
							 h->g.lg2_granule + 4, NULL), 2);
	ck_assert_uint_eq(bm[0], 1);
	memset(bm, 0, sizeof(bm));
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base, 16 * g, 0, bm,
							 h->g.lg2_granule + 4, NULL), 0);
	ck_assert_uint_eq(bm[0], 0);
	ck_assert_int_eq(unmap_sync(h, base, 16 * g), (ik_s64)(16 * g));
	th_destroy(h);
}
END_TEST

/* ------------------------------------------------------------ LPAE specifics */

START_TEST(lpae_geometry_and_registers)
{
	struct ik_pgtable_cfg c;
	struct ik_pt_geometry g;
	struct ik_pgtable *pt;
	struct ik_lpae_regs r;
	struct ik_pt_walker w, w2;
	static const struct {
		enum ik_pt_fmt fmt;
		ik_u32 ias;
		ik_u64 gran;
		unsigned nlevels, top_bits, concat, start;
	} t[] = {
		{ IK_PT_LPAE_S1, 48, SZ_4K, 4, 9, 1, 0 },
		{ IK_PT_LPAE_S1, 39, SZ_4K, 3, 9, 1, 1 },
		{ IK_PT_LPAE_S1, 32, SZ_4K, 3, 2, 1, 1 },
		{ IK_PT_LPAE_S1, 48, SZ_16K, 4, 1, 1, 0 },
		{ IK_PT_LPAE_S1, 47, SZ_16K, 3, 11, 1, 1 },
		{ IK_PT_LPAE_S1, 48, SZ_64K, 3, 6, 1, 1 },
		{ IK_PT_LPAE_S1, 42, SZ_64K, 2, 13, 1, 2 },
		{ IK_PT_LPAE_S2, 40, SZ_4K, 3, 10, 2, 1 },
		{ IK_PT_LPAE_S2, 42, SZ_4K, 3, 12, 8, 1 },
		{ IK_PT_LPAE_S2, 48, SZ_4K, 4, 9, 1, 0 },
		{ IK_PT_LPAE_S2, 32, SZ_4K, 2, 11, 4, 2 },
		{ IK_PT_LPAE_S2, 48, SZ_16K, 3, 12, 2, 1 },
		{ IK_PT_LPAE_S2, 48, SZ_64K, 3, 6, 1, 1 },
	};
	unsigned i;

	memset(&c, 0, sizeof(c));
	c.oas = 48;
	c.coherent = true;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		c.fmt = t[i].fmt;
		c.ias = t[i].ias;
		c.pgsize_bitmap = t[i].gran | (t[i].gran << 9) | (t[i].gran << 18) | (t[i].gran << 11) |
				  (t[i].gran << 13);
		ck_assert_int_eq(ik_pt_geometry_init(&g, &c), 0);
		ck_assert_msg(g.nlevels == t[i].nlevels && g.top_bits == t[i].top_bits &&
				      g.concat == t[i].concat && g.hw_start_level == t[i].start,
			      "row %u: levels %u top %u concat %u start %u", i, g.nlevels, g.top_bits,
			      g.concat, g.hw_start_level);
		ck_assert_uint_eq(g.root_size, (8ull << g.top_bits) < 64 ? 64 : 8ull << g.top_bits);
		/* block sizes: 4K 2M+1G, 16K 32M, 64K 512M */
		if (t[i].gran == SZ_4K)
			ck_assert_uint_eq(g.pgsize_bitmap, SZ_4K | SZ_2M | (g.nlevels > 2 ? SZ_1G : 0));
		else if (t[i].gran == SZ_16K)
			ck_assert_uint_eq(g.pgsize_bitmap, SZ_16K | SZ_32M);
		else
			ck_assert_uint_eq(g.pgsize_bitmap, SZ_64K | SZ_512M);
		/* registers, and a walker rebuilt from them matches */
		ck_assert_int_eq(ik_pgtable_create(&c, &pt), 0);
		ck_assert_int_eq(ik_lpae_get_regs(pt, &r), 0);
		ik_pgtable_walker(pt, &w);
		if (c.fmt == IK_PT_LPAE_S1) {
			ck_assert_uint_eq(r.tcr & 0x3f, 64 - c.ias);
			ck_assert_uint_eq((r.tcr >> 32) & 7, 5);
			ck_assert_uint_eq(r.mair, 0x04ff44ull);
			ck_assert_uint_eq(r.ttbr, w.root);
			ck_assert_int_eq(ik_lpae_walker_from_regs(&w2, 1, r.tcr, r.ttbr, 0), 0);
		} else {
			ck_assert_uint_eq(r.vtcr & 0x3f, 64 - c.ias);
			ck_assert_uint_eq((r.vtcr >> 16) & 7, 5);
			ck_assert_uint_eq(r.vttbr, w.root);
			ck_assert_int_eq(ik_lpae_walker_from_regs(&w2, 2, r.vtcr, r.vttbr, 0), 0);
		}
		ck_assert_uint_eq(w2.root, w.root);
		ck_assert_uint_eq(w2.geom.nlevels, w.geom.nlevels);
		ck_assert_uint_eq(w2.geom.top_bits, w.geom.top_bits);
		ck_assert_uint_eq(w2.geom.concat, w.geom.concat);
		ck_assert_uint_eq(w2.geom.pgsize_bitmap, w.geom.pgsize_bitmap);
		ik_pgtable_destroy(pt);
	}
	/* known values: 4K stage 1, ias 48, coherent */
	c.fmt = IK_PT_LPAE_S1;
	c.ias = 48;
	c.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), 0);
	ck_assert_int_eq(ik_lpae_get_regs(pt, &r), 0);
	/* T0SZ 16, IRGN0/ORGN0 WBWA, SH0 IS, TG0 4K, EPD1, IPS 48 */
	ck_assert_uint_eq(r.tcr, 0x10ull | 0x100 | 0x400 | 0x3000 | (1ull << 23) | (5ull << 32));
	ik_pgtable_destroy(pt);
	/* stage 2 SL0 for 4K, start level 1 = 1; 16K start level 1 = 2 */
	c.fmt = IK_PT_LPAE_S2;
	c.ias = 40;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), 0);
	ck_assert_int_eq(ik_lpae_get_regs(pt, &r), 0);
	ck_assert_uint_eq((r.vtcr >> 6) & 3, 1);
	ik_pgtable_destroy(pt);
	/* unsupported: granule, ias, oas, quirks, formats */
	c.fmt = IK_PT_LPAE_S1;
	c.pgsize_bitmap = 0x2000;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c.pgsize_bitmap = SZ_4K;
	c.ias = 31;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c.ias = 49;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c.ias = 48;
	c.oas = 39;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c.oas = 52;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c.oas = 48;
	c.pgsize_bitmap = 0;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c.pgsize_bitmap = SZ_4K;
	c.quirks = 0x8000;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c.fmt = IK_PT_LPAE_S2;
	c.quirks = IK_PT_QUIRK_ARM_NS;	/* stage 1 only */
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EINVAL);
	c.quirks = 0;
	{ /* the count is the largest format built in */
		struct ik_pt_fmt_info fi;

		ck_assert_uint_ge(ik_pt_fmt_count(), IK_PT_VTD_FL);
		ck_assert_int_eq(ik_pt_fmt_get_info((enum ik_pt_fmt)ik_pt_fmt_count(), &fi), 0);
		ck_assert_int_eq(ik_pt_fmt_get_info((enum ik_pt_fmt)(ik_pt_fmt_count() + 1), &fi),
				 -EOPNOTSUPP);
	}
	c.fmt = (enum ik_pt_fmt)(ik_pt_fmt_count() + 1);
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -EOPNOTSUPP);
	ck_assert_ptr_null(ik_pt_fmt_name((enum ik_pt_fmt)(ik_pt_fmt_count() + 1)));
	ck_assert_str_eq(ik_pt_fmt_name(IK_PT_LPAE_S1), "lpae-s1");
	ck_assert_int_eq(ik_pt_fmt_from_name("lpae-s2"), IK_PT_LPAE_S2);
	ck_assert_int_eq(ik_pt_fmt_from_name("nope"), IK_PT_FMT_NONE);
	/* walker from a config: the root must be aligned to the root size */
	c.fmt = IK_PT_LPAE_S1;
	c.pgsize_bitmap = SZ_4K;
	ck_assert_int_eq(ik_pt_walker_init(&w2, &c, 0x10000), 0);
	ck_assert_uint_eq(w2.root, 0x10000);
	ck_assert_uint_eq(w2.geom.nlevels, 4);
	ck_assert_int_eq(ik_pt_walker_init(&w2, &c, 0x10800), -EINVAL);
	/* a register value the library cannot walk */
	ck_assert_int_eq(ik_lpae_walker_from_regs(&w2, 1, 0x3f, 0, 0), -EINVAL);
	ck_assert_int_eq(ik_lpae_walker_from_regs(&w2, 3, 0x10, 0, 0), -EINVAL);
}
END_TEST

START_TEST(lpae_stage1_bits_match_the_architecture)
{
	struct th *h = th_new(0, true);
	struct ik_pt_walker w;
	struct ik_pt_mem mem;
	struct ik_pt_walk_result r;
	uint64_t base = BASE(h);

	ik_pgtable_walker(h->pt, &w);
	th_mem(h, &mem, false);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x12345000, SZ_4K, IK_PROT_READ | IK_PROT_CACHE), 0);
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base, 0, &r), 0);
	/* page, AttrIndx 1, AP[1] (EL0), AP[2] (RO), SH IS, AF, nG */
	ck_assert_uint_eq(r.pte, 0x12345000ull | 3 | (1 << 2) | (1 << 6) | (1 << 7) | (3 << 8) |
					 (1 << 10) | (1 << 11));
	ck_assert_int_eq(ik_pgtable_map(h->pt, base + SZ_2M, 0x40000000, SZ_2M,
					PROT_RW | IK_PROT_MMIO), 0);
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base + SZ_2M, 0, &r), 0);
	/* block, AttrIndx 2, EL0, RW, SH OS, AF, nG, PXN, UXN */
	ck_assert_uint_eq(r.pte, 0x40000000ull | 1 | (2 << 2) | (1 << 6) | (2 << 8) | (1 << 10) |
					 (1 << 11) | (3ull << 53));
	ck_assert_uint_eq(r.level, 1);
	/* invalid patterns: valid bit clear; a block type at the last level;
	 * the access flag clear (no hardware AF update configured) */
	{
		ik_u64 *e, saved;

		ck_assert_int_eq(ik_pt_walk(&w, &mem, base, 0, &r), 0);
		e = th_entry(h, r.pte_addr);
		saved = *e;
		*e = saved & ~1ull;
		ck_assert_int_eq(ik_pt_walk(&w, &mem, base, IK_ACCESS_READ, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_TRANSLATION);
		*e = saved & ~2ull;
		ck_assert_int_eq(ik_pt_walk(&w, &mem, base, IK_ACCESS_READ, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_TRANSLATION);
		*e = saved & ~(1ull << 10);
		ck_assert_int_eq(ik_pt_walk(&w, &mem, base, IK_ACCESS_READ, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_ACCESS_FLAG);
		*e = saved;
	}
	ck_assert_int_eq(unmap_sync(h, base, 2 * SZ_2M), (ik_s64)(SZ_2M + SZ_4K));
	th_destroy(h);
	h = th_new(6, true); /* stage 2 */
	ik_pgtable_walker(h->pt, &w);
	th_mem(h, &mem, false);
	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x12345000, SZ_4K, PROT_RW | IK_PROT_CACHE), 0);
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base, 0, &r), 0);
	/* page, MemAttr 0xf, S2AP RW, SH IS, AF */
	ck_assert_uint_eq(r.pte, 0x12345000ull | 3 | (0xf << 2) | (3 << 6) | (3 << 8) | (1 << 10));
	ck_assert_uint_eq(r.attr, 0xf);
	ck_assert_int_eq(unmap_sync(h, base, SZ_4K), (ik_s64)SZ_4K);
	th_destroy(h);
}
END_TEST

/* The default hooks (no table hooks: the allocator and CPU addresses),
 * over-aligned 64K tables included. */
/* Does ik_pgtable_create() accept the config c?  (-ERANGE: it did, but the
 * heap's root page lies beyond a small oas.)  The table set is destroyed. */
static bool creates(const struct ik_pgtable_cfg *c)
{
	struct ik_pgtable *pt = NULL;
	int ret = ik_pgtable_create(c, &pt);

	ck_assert_msg(ret == 0 || ret == -EINVAL || ret == -ERANGE, "create: %d", ret);
	ik_pgtable_destroy(pt);
	return ret != -EINVAL;
}

/*
 * ik_pt_fmt_get_info() says what ik_pgtable_create() accepts: for every
 * format built in, every width, granule, quirk and fmt_flags bit the info
 * lists is accepted and every other one refused; the leaf sizes are what
 * the geometry keeps when the config offers every size; the name
 * round-trips; the dirty capability is what read_and_clear_dirty() does; the
 * level numbering is the geometry's.  Values that name no format are
 * -EOPNOTSUPP, as for create.
 */
START_TEST(format_info_agrees_with_create)
{
	int built = 0;

	for (int f = 0; f <= (int)ik_pt_fmt_count() + 2; f++) {
		struct ik_pt_fmt_info fi;
		struct ik_pgtable_cfg base, c;
		struct ik_pgtable *pt = NULL;
		unsigned leaf_hw = 0;
		int ret;

		memset(&base, 0, sizeof(base));
		base.fmt = (enum ik_pt_fmt)f;
		base.ias = 48;
		base.oas = 48;
		base.pgsize_bitmap = SZ_4K;
		base.coherent = true;
		memset(&fi, 0x5a, sizeof(fi));
		ret = ik_pt_fmt_get_info((enum ik_pt_fmt)f, &fi);
		if (ret) {
			ck_assert_int_eq(ret, -EOPNOTSUPP);
			ck_assert_ptr_null(ik_pt_fmt_name((enum ik_pt_fmt)f));
			ck_assert_int_eq(ik_pgtable_create(&base, &pt), -EOPNOTSUPP);
			continue;
		}
		built++;
		ck_assert_int_eq(fi.fmt, f);
		ck_assert_str_eq(fi.name, ik_pt_fmt_name((enum ik_pt_fmt)f));
		ck_assert_int_eq(ik_pt_fmt_from_name(fi.name), f);
		ck_assert_uint_ne(fi.ias_widths, 0);
		ck_assert_uint_ne(fi.oas_widths, 0);
		ck_assert_uint_ne(fi.granules[0].size, 0);
		/* the base: the widest widths, the smallest granule, every flag */
		base.ias = 63 - (ik_u32)__builtin_clzll(fi.ias_widths);
		base.oas = 63 - (ik_u32)__builtin_clzll(fi.oas_widths);
		base.pgsize_bitmap = fi.granules[0].size;
		base.fmt_flags = fi.fmt_flags;
		ck_assert_msg(creates(&base), "%s: base config", fi.name);
		for (ik_u32 w = 0; w <= 64; w++) {
			bool in = w < 64 && (fi.ias_widths >> w & 1);
			struct ik_pt_geometry g;

			c = base;
			c.ias = w;
			ck_assert_msg(creates(&c) == in, "%s: ias %u", fi.name, w);
			if (in) {
				ck_assert_int_eq(ik_pt_geometry_init(&g, &c), 0);
				if (fi.hw_levels_up) {
					ck_assert_uint_eq(g.hw_start_level, g.nlevels);
				} else {
					if (!leaf_hw)
						leaf_hw = g.hw_start_level + g.nlevels;
					ck_assert_uint_eq(g.hw_start_level + g.nlevels, leaf_hw);
				}
			}
			c = base;
			c.oas = w;
			in = w < 64 && (fi.oas_widths >> w & 1);
			ck_assert_msg(creates(&c) == in, "%s: oas %u", fi.name, w);
		}
		for (unsigned b = 0; b < 64; b++) {
			bool in = false;

			for (unsigned k = 0; k < IK_PT_FMT_GRANULES && fi.granules[k].size; k++)
				in |= fi.granules[k].size == 1ull << b;
			c = base;
			c.pgsize_bitmap = 1ull << b;
			ck_assert_msg(creates(&c) == in, "%s: granule 2^%u", fi.name, b);
			c = base;
			c.fmt_flags |= 1ull << b;
			ck_assert_msg(creates(&c) == !!(fi.fmt_flags >> b & 1), "%s: fmt_flags bit %u",
				      fi.name, b);
			if (b < 32) {
				c = base;
				c.quirks = fi.quirks | 1u << b;
				ck_assert_msg(creates(&c) == !!(fi.quirks >> b & 1), "%s: quirk bit %u",
					      fi.name, b);
			}
		}
		for (unsigned k = 0; k < IK_PT_FMT_GRANULES && fi.granules[k].size; k++) {
			struct ik_pt_geometry g;

			c = base;
			c.pgsize_bitmap = ~(fi.granules[k].size - 1);
			ck_assert_int_eq(ik_pt_geometry_init(&g, &c), 0);
			ck_assert_msg(g.pgsize_bitmap == fi.granules[k].leaf_sizes,
				      "%s: granule %#llx keeps %#llx, info says %#llx", fi.name,
				      (unsigned long long)fi.granules[k].size,
				      (unsigned long long)g.pgsize_bitmap,
				      (unsigned long long)fi.granules[k].leaf_sizes);
		}
		/* dirty tracking: the capability and the quirk go together */
		ck_assert_int_eq(!!(fi.caps & IK_PT_CAP_DIRTY), !!(fi.quirks & IK_PT_QUIRK_DIRTY));
		c = base;
		c.quirks = fi.quirks & IK_PT_QUIRK_DIRTY;
		ck_assert_int_eq(ik_pgtable_create(&c, &pt), 0);
		{
			ik_u64 bm[1] = { 0 };
			ik_s64 n = ik_pgtable_read_and_clear_dirty(pt, 0, fi.granules[0].size, 0, bm,
								   (unsigned)__builtin_ctzll(fi.granules[0].size),
								   NULL);

			ck_assert_int_eq(n, (fi.caps & IK_PT_CAP_DIRTY) ? 0 : -EOPNOTSUPP);
		}
		ik_pgtable_destroy(pt);
	}
	ck_assert_int_ge(built, 1);
	ck_assert_int_eq(ik_pt_fmt_get_info(IK_PT_LPAE_S1, NULL), -EINVAL);
}
END_TEST

START_TEST(default_hooks_work)
{
	struct ik_fault_alloc fa;
	struct ik_pgtable_cfg c;
	struct ik_pgtable *pt;
	uint64_t pa = 0, sz = 0;
	struct ik_gather ga;
	unsigned i;
	static const ik_u64 gr[3] = { SZ_4K, SZ_16K, SZ_64K };

	for (i = 0; i < 3; i++) {
		ik_fault_alloc_init(&fa);
		memset(&c, 0, sizeof(c));
		c.fmt = IK_PT_LPAE_S1;
		c.ias = 48;
		c.oas = 48;
		c.pgsize_bitmap = gr[i];
		c.allocator = &fa.a;
		ck_assert_int_eq(ik_pgtable_create(&c, &pt), 0);
		ck_assert_int_eq(ik_pgtable_map(pt, 1ull << 40, 0x100000000ull, 64 * gr[i], PROT_RW), 0);
		ck_assert_int_eq(ik_pgtable_iova_to_phys(pt, (1ull << 40) + 5 * gr[i] + 3, &pa, &sz), 0);
		ck_assert_uint_eq(pa, 0x100000000ull + 5 * gr[i] + 3);
		ck_assert_uint_eq(sz, gr[i]);
		ik_gather_init(&ga);
		ck_assert_int_eq(ik_pgtable_unmap(pt, 1ull << 40, 64 * gr[i], &ga), (ik_s64)(64 * gr[i]));
		ik_pgtable_gather_sync(pt, &ga);
		ik_pgtable_destroy(pt);
		ck_assert_int_eq(fa.live, 0);
	}
	/* create fails cleanly at each allocation */
	for (i = 1; i <= 3; i++) {
		ik_fault_alloc_init(&fa);
		c.pgsize_bitmap = SZ_4K;
		ik_fault_alloc_fail_nth(&fa, i);
		ck_assert_int_eq(ik_pgtable_create(&c, &pt), -ENOMEM);
		ck_assert_int_eq(fa.live, 0);
	}
}
END_TEST

/*
 * Issue #13 item 2: the gather of an unmap must name exactly the range
 * unmapped, for every format, granule and input size.  It did not where the
 * root is level 0 and indexes more bits than a level (LPAE stage 2, 64K, ias
 * 32/33: eight or sixteen concatenated one-level roots), so a stale IOTLB
 * entry could survive.  Scan every combination the formats accept, unmapping
 * single pages and a two-page run at the top, the middle and the bottom of
 * the input space.
 */
START_TEST(gather_names_the_unmapped_range_for_every_geometry)
{
	static const struct { enum ik_pt_fmt fmt; ik_u64 gran; ik_u32 ias_lo, ias_hi; ik_u32 oas; } fam[] = {
		{ IK_PT_LPAE_S1, SZ_4K, 25, 48, 48 },  { IK_PT_LPAE_S1, SZ_16K, 25, 48, 48 },
		{ IK_PT_LPAE_S1, SZ_64K, 25, 48, 48 }, { IK_PT_LPAE_S2, SZ_4K, 25, 48, 48 },
		{ IK_PT_LPAE_S2, SZ_16K, 25, 48, 48 }, { IK_PT_LPAE_S2, SZ_64K, 25, 48, 48 },
		{ IK_PT_VTD_SL, SZ_4K, 25, 57, 48 },   { IK_PT_VTD_FL, SZ_4K, 25, 56, 48 },
		{ IK_PT_RISCV_S1, SZ_4K, 25, 56, 48 }, { IK_PT_RISCV_S2, SZ_4K, 25, 59, 48 },
	};
	unsigned combos = 0, checks = 0;

	for (unsigned f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		for (ik_u32 ias = fam[f].ias_lo; ias <= fam[f].ias_hi; ias++) {
			struct fmt_case fc = { "scan", fam[f].fmt, ias, fam[f].oas, fam[f].gran, 0, 0, 0 };
			struct ik_pgtable_cfg cfg;
			struct ik_pt_geometry g;
			struct th *h;

			memset(&cfg, 0, sizeof(cfg));
			cfg.fmt = fc.fmt;
			cfg.ias = fc.ias;
			cfg.oas = fc.oas;
			cfg.pgsize_bitmap = fc.pgsizes;
			if (ik_pt_geometry_init(&g, &cfg))
				continue;	/* not a size this format has */
			combos++;
			h = th_new_cfg(&fc, true, 0);
			const uint64_t gr = fam[f].gran, top = (ias >= 64) ? 0 : 1ull << ias;
			const uint64_t at[] = { top - gr, top - 2 * gr, (top >> 1) + 0x12 * gr,
						(top >> 1) - gr, 0x12 * gr, 0 };

			for (unsigned k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
				for (uint64_t n = 1; n <= 2; n++) {
					struct ik_gather ga;
					uint64_t len = n * gr;

					if (at[k] + len > top || at[k] + len < at[k])
						continue;
					ck_assert_int_eq(ik_pgtable_map(h->pt, at[k], 0x10000000ull, len,
									IK_PROT_READ), 0);
					ik_gather_init(&ga);
					ck_assert_int_eq(ik_pgtable_unmap(h->pt, at[k], len, &ga), (ik_s64)len);
					ck_assert_msg(ga.start == at[k] && ga.end == at[k] + len,
						      "fmt %d gran %llu ias %u: unmap [%#llx, %#llx) gathered "
						      "[%#llx, %#llx)", (int)fc.fmt, (unsigned long long)gr,
						      ias, (unsigned long long)at[k],
						      (unsigned long long)(at[k] + len),
						      (unsigned long long)ga.start, (unsigned long long)ga.end);
					ck_assert_uint_eq(ga.granule, gr);
					ik_pgtable_gather_sync(h->pt, &ga);
					checks++;
				}
			}
			th_destroy(h);
		}
	}
	/* LPAE: 24 sizes per granule and stage (with the 64K stage-2 roots of
	 * ias 32/33); VT-d: every size its levels cover. */
	ck_assert_uint_ge(combos, 6 * 20);
	ck_assert_uint_ge(checks, combos * 8);
}
END_TEST

/* An allocator that hands out memory from one of two mmap'd arenas, one
 * below 4 GiB and one far above, so that a test controls where the default
 * table allocator's pages (CPU address = IOMMU address) land. */
struct arena_alloc {
	struct ik_allocator a;
	char *base[2];
	size_t used[2], size;
	int which;	/* arena for the next allocation */
	long live;
};

static void *arena_alloc_fn(void *ctx, ik_size size, ik_size align)
{
	struct arena_alloc *aa = ctx;
	size_t off = (aa->used[aa->which] + align - 1) & ~(size_t)(align - 1);

	if (off + size > aa->size)
		return NULL;
	aa->used[aa->which] = off + size;
	aa->live++;
	return aa->base[aa->which] + off;
}

static void arena_free_fn(void *ctx, void *p, ik_size size)
{
	struct arena_alloc *aa = ctx;

	(void)p, (void)size;
	aa->live--;
}

/* Issue #13 item 3: with no alloc_table hook, table pages are at their CPU
 * addresses, which need not fit a small oas; the hardware walker then takes
 * an address-size fault on every access.  create and map must refuse such a
 * page with -ERANGE and change nothing. */
START_TEST(default_allocator_refuses_tables_beyond_oas)
{
	static const uintptr_t hint[2] = { 0x10000000u, (uintptr_t)0x6e0000000000ull };
	struct arena_alloc aa;
	struct ik_pgtable_cfg c;
	struct ik_pgtable *pt = NULL;
	struct ik_pt_walker w;
	struct ik_pt_walk_result res;
	ik_u64 pa, sz;

	memset(&aa, 0, sizeof(aa));
	aa.a.alloc = arena_alloc_fn;
	aa.a.free = arena_free_fn;
	aa.a.ctx = &aa;
	aa.size = 1u << 20;
	for (int i = 0; i < 2; i++) {
		void *m = mmap((void *)hint[i], aa.size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ck_assert(m != MAP_FAILED);
		aa.base[i] = m;
	}
	/* The kernel may not honour a hint: the test needs one arena on each
	 * side of 4 GiB. */
	ck_assert_msg((uintptr_t)aa.base[0] + aa.size <= (1ull << 32) &&
		      (uint64_t)(uintptr_t)aa.base[1] >= (1ull << 32),
		      "arenas at %p and %p", (void *)aa.base[0], (void *)aa.base[1]);
	memset(&c, 0, sizeof(c));
	c.fmt = IK_PT_LPAE_S1;
	c.ias = 32;
	c.oas = 32;
	c.pgsize_bitmap = SZ_4K;
	c.allocator = &aa.a;
	/* Root beyond oas: create refuses, nothing leaked. */
	aa.which = 1;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), -ERANGE);
	ck_assert_ptr_null(pt);
	ck_assert_int_eq(aa.live, 0);
	/* Root below 4 GiB: fine; then a leaf table from above 4 GiB: map
	 * refuses and changes nothing. */
	aa.which = 0;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), 0);
	long live = aa.live;

	aa.which = 1;
	ck_assert_int_eq(ik_pgtable_map(pt, 0x40000000u, 0x80000000u, SZ_4K, PROT_RW), -ERANGE);
	ck_assert_int_eq(aa.live, live);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(pt, 0x40000000u, &pa, &sz), -ENOENT);
	/* From low memory the same map works, and the hardware view agrees. */
	aa.which = 0;
	ck_assert_int_eq(ik_pgtable_map(pt, 0x40000000u, 0x80000000u, SZ_4K, PROT_RW), 0);
	ik_pgtable_walker(pt, &w);
	ck_assert_int_eq(ik_pt_walk(&w, &ik_test_mem, 0x40000123u, IK_ACCESS_READ, &res), 0);
	ck_assert_int_eq(res.fault, IK_PT_FAULT_NONE);
	ck_assert_uint_eq(res.oa, 0x80000123u);
	ik_pgtable_destroy(pt);
	ck_assert_int_eq(aa.live, 0);
	munmap(aa.base[0], aa.size);
	munmap(aa.base[1], aa.size);

	/* An alloc_table hook that returns a page beyond oas: handed back
	 * through free_table, -ERANGE, nothing changed. */
	struct fmt_case fc = { "oas32", IK_PT_LPAE_S1, 32, 32, SZ_4K, 0, 0, 0 };
	struct th *h = th_new_cfg(&fc, false, 0);
	uint64_t before = th_digest(h);
	long frees = h->frees;

	h->next_iommu = 1ull << 32;
	ck_assert_int_eq(ik_pgtable_map(h->pt, 0x40000000u, 0x80000000u, SZ_4K, PROT_RW), -ERANGE);
	ck_assert_uint_eq(th_digest(h), before);
	ck_assert_int_eq(h->frees, frees + 1);
	th_destroy(h);
}
END_TEST

/* Issue #13 item 4: a gather holding table pages of table set A, synced
 * through B, would put A's pages into B's cache and free them through B's
 * hooks.  It is refused (-EINVAL) with nothing done, in release builds too. */
START_TEST(gather_sync_refuses_another_table_sets_pages)
{
	struct th *a = th_new(_i, false), *b = th_new(_i, false);
	struct ik_gather ga, copy;
	uint64_t base = BASE(a), span = T(a);
	long a_live, b_syncs;

	ck_assert_int_eq(ik_pgtable_map(a->pt, base, 0x100000, span, IK_PROT_READ), 0);
	memset(&ga, 0, sizeof(ga)); /* padding too: compared with memcmp below */
	ik_gather_init(&ga);
	ck_assert_int_eq(ik_pgtable_unmap(a->pt, base - span, 3 * span, &ga), (ik_s64)span);
	ck_assert_uint_ge(ga.nr_tables, 1);
	memcpy(&copy, &ga, sizeof(ga));
	a_live = (long)a->nlive;
	b_syncs = b->iotlb_syncs;
	ck_assert_int_eq(ik_pgtable_gather_sync(b->pt, &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_gather_sync(NULL, &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_gather_sync(a->pt, NULL), -EINVAL);
	ck_assert(memcmp(&ga, &copy, sizeof(ga)) == 0);
	ck_assert_int_eq(b->iotlb_syncs, b_syncs);
	ck_assert_int_eq((long)a->nlive, a_live);
	/* An unmap of B into A's gather is refused as well. */
	ck_assert_int_eq(ik_pgtable_unmap(b->pt, base, span, &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_gather_sync(a->pt, &ga), 0);
	ck_assert_uint_eq(ga.nr_tables, 0);
	/* An empty gather syncs anywhere, also with no table set. */
	ck_assert_int_eq(ik_pgtable_gather_sync(NULL, &ga), 0);
	ck_assert_int_eq(ik_pgtable_gather_sync(b->pt, &ga), 0);
	th_destroy(a);
	th_destroy(b);
}
END_TEST

/*
 * The pointer-argument rule of <iommukit/env.h> for the generic engine, the
 * walker and the LPAE register helpers: each error-returning call, given
 * NULL in one pointer position at a time (everything else valid), answers
 * -EINVAL with the table set (th_digest), its hooks, its memory and the
 * caller's other arguments untouched and no callback called.  Optional
 * arguments (map_sg's mapped, iova_to_phys's pgsize, the gathers of
 * read_and_clear_dirty and gather_sync's pt) are not part of it.
 */
static int count_dump_calls(void *ctx, const struct ik_pt_range *r)
{
	(void)r;
	++*(int *)ctx;
	return 0;
}

START_TEST(null_pointer_arguments_are_einval)
{
	struct th *h = th_new_cfg(&fmt_cases[1], false, 0); /* a dirty-tracking LPAE s1 */
	uint64_t base = BASE(h), g = G(h), d0, pa = 5, pgsz = 6, mapped = 7, bm[2] = { 0, 0 };
	struct ik_pgtable *pt = (struct ik_pgtable *)0x1;
	struct ik_pt_geometry geo, geo0;
	struct ik_pt_walker w, w2, w20;
	struct ik_pt_walk_result res, res0;
	struct ik_lpae_regs regs;
	struct ik_gather ga, ga0;
	struct ik_pt_mem mem;
	struct ik_seg seg = { 0x200000, 0 };
	int calls = 0;
	long live, allocs;

	ck_assert(h->cfg.quirks & IK_PT_QUIRK_DIRTY);
	seg.len = g;
	ck_assert_int_eq(ik_pgtable_map(h->pt, base, 0x100000, g, PROT_RW), 0);
	ck_assert_int_eq(ik_lpae_get_regs(h->pt, &regs), 0);
	ik_pgtable_walker(h->pt, &w);
	th_mem(h, &mem, false);
	ik_pgtable_drain_cache(h->pt);
	d0 = th_digest(h);
	live = h->fa.live;
	allocs = h->allocs;
	th_reset_counts(h);
	memset(&geo, 0x5a, sizeof(geo));
	memcpy(&geo0, &geo, sizeof(geo));
	memset(&w2, 0x5a, sizeof(w2));
	memcpy(&w20, &w2, sizeof(w2));
	memset(&res, 0x5a, sizeof(res));
	memcpy(&res0, &res, sizeof(res));
	memset(&ga, 0, sizeof(ga)); /* padding too: compared with memcmp below */
	ik_gather_init(&ga);
	memcpy(&ga0, &ga, sizeof(ga));

	/* configs and creation */
	ck_assert_int_eq(ik_pt_geometry_init(NULL, &h->cfg), -EINVAL);
	ck_assert_int_eq(ik_pt_geometry_init(&geo, NULL), -EINVAL);
	ck_assert_int_eq(ik_pgtable_create(NULL, &pt), -EINVAL);
	ck_assert_int_eq(ik_pgtable_create(&h->cfg, NULL), -EINVAL);
	ck_assert_ptr_eq(pt, (struct ik_pgtable *)0x1);
	ik_pgtable_destroy(NULL);
	/* mapping, unmapping, lookups */
	ck_assert_int_eq(ik_pgtable_map_pages(NULL, base + g, 0x200000, g, 1, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map(NULL, base + g, 0x200000, g, PROT_RW), -EINVAL);
	ck_assert_int_eq(ik_pgtable_map_sg(NULL, base + g, &seg, 1, PROT_RW, &mapped), -EINVAL);
	ck_assert_uint_eq(mapped, 0); /* documented: 0 after any failure */
	mapped = 7;
	ck_assert_int_eq(ik_pgtable_map_sg(h->pt, base + g, NULL, 1, PROT_RW, &mapped), -EINVAL);
	ck_assert_uint_eq(mapped, 0);
	ck_assert_int_eq(ik_pgtable_unmap(NULL, base, g, &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_unmap(h->pt, base, g, NULL), -EINVAL);
	ck_assert_int_eq(ik_pgtable_gather_sync(h->pt, NULL), -EINVAL);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(NULL, base, &pa, &pgsz), -EINVAL);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, base, NULL, &pgsz), -EINVAL);
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(NULL, base, g, 0, bm, h->g.lg2_granule,
							 &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(h->pt, base, g, 0, NULL, h->g.lg2_granule,
							 &ga), -EINVAL);
	ck_assert_int_eq(ik_pgtable_dump(NULL, base, g, count_dump_calls, &calls), -EINVAL);
	ck_assert_int_eq(ik_pgtable_dump(h->pt, base, g, NULL, &calls), -EINVAL);
	/* the walker */
	ck_assert_int_eq(ik_pt_walker_init(NULL, &h->cfg, w.root), -EINVAL);
	ck_assert_int_eq(ik_pt_walker_init(&w2, NULL, w.root), -EINVAL);
	ck_assert_int_eq(ik_pt_walk(NULL, &mem, base, IK_ACCESS_READ, &res), -EINVAL);
	ck_assert_int_eq(ik_pt_walk(&w, NULL, base, IK_ACCESS_READ, &res), -EINVAL);
	ck_assert_int_eq(ik_pt_walk(&w, &mem, base, IK_ACCESS_READ, NULL), -EINVAL);
	ck_assert_int_eq(ik_pt_walker_dump(NULL, &mem, base, g, count_dump_calls, &calls), -EINVAL);
	ck_assert_int_eq(ik_pt_walker_dump(&w, NULL, base, g, count_dump_calls, &calls), -EINVAL);
	ck_assert_int_eq(ik_pt_walker_dump(&w, &mem, base, g, NULL, &calls), -EINVAL);
	/* LPAE registers */
	ck_assert_int_eq(ik_lpae_get_regs(NULL, &regs), -EINVAL);
	ck_assert_int_eq(ik_lpae_get_regs(h->pt, NULL), -EINVAL);
	ck_assert_int_eq(ik_lpae_walker_from_regs(NULL, 1, regs.tcr, regs.ttbr, 0), -EINVAL);

	/* nothing changed, nothing written, no hook or callback called */
	ck_assert(memcmp(&geo, &geo0, sizeof(geo)) == 0);
	ck_assert(memcmp(&w2, &w20, sizeof(w2)) == 0);
	ck_assert(memcmp(&res, &res0, sizeof(res)) == 0);
	ck_assert(memcmp(&ga, &ga0, sizeof(ga)) == 0);
	ck_assert(pa == 5 && pgsz == 6 && bm[0] == 0 && bm[1] == 0);
	ck_assert_int_eq(calls, 0);
	ck_assert_int_eq(h->allocs, allocs);
	ck_assert_int_eq(h->cleans, 0);
	ck_assert_int_eq(h->sync_maps, 0);
	ck_assert_int_eq(h->gather_adds, 0);
	ck_assert_int_eq(h->iotlb_syncs, 0);
	ck_assert_int_eq(h->flush_walks, 0);
	ck_assert_int_eq(h->fa.live, live);
	ck_assert(th_digest(h) == d0);
	ck_assert_int_eq(ik_pgtable_iova_to_phys(h->pt, base, &pa, &pgsz), 0);
	ck_assert_uint_eq(pa, 0x100000);
	th_destroy(h);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("pgtable");
	TCase *gen = tcase_create("generic");
	TCase *fmt = tcase_create("formats");

	tcase_set_timeout(gen, 600);
	tcase_add_loop_test(gen, bad_arguments_are_einval_and_change_nothing, 0, NCASES);
	tcase_add_loop_test(gen, overlap_is_eexist_with_nothing_changed, 0, NCASES);
	tcase_add_loop_test(gen, enomem_at_every_allocation_rolls_back, 0, NCASES);
	tcase_add_loop_test(gen, exact_clean_and_sync_counts, 0, NCASES);
	tcase_add_loop_test(gen, one_table_requests_match_the_general_path, 0, NCASES);
	tcase_add_loop_test(gen, whole_entry_unmaps_match_the_general_path, 0, NCASES);
	tcase_add_loop_test(gen, whole_table_unmap_drops_table_after_gather_sync, 0, NCASES);
	tcase_add_loop_test(gen, gather_sync_refuses_another_table_sets_pages, 0, NCASES);
	tcase_add_loop_test(gen, page_size_choice, 0, NCASES);
	tcase_add_loop_test(gen, partial_unmap_splits_block, 0, NCASES);
	tcase_add_loop_test(gen, deferred_leaf_clean_quirk_cleans_once_per_run, 0, NCASES);
	tcase_add_loop_test(gen, block_replaces_empty_table_after_walk_flush, 0, NCASES);
	tcase_add_loop_test(gen, without_walk_flush_empty_tables_are_kept, 0, NCASES);
	tcase_add_loop_test(gen, walker_reports_faults_like_hardware, 0, NCASES);
	tcase_add_loop_test(gen, dirty_tracking_reports_device_writes, 0, NCASES);
	tcase_add_loop_test(gen, dirty_small_leaf_sets_the_bit_of_its_larger_page, 0, NCASES);
	tcase_add_loop_test(gen, random_ops_match_shadow_model, 0, NCASES);
	tcase_add_loop_test(gen, random_ops_match_shadow_model_without_walk_flush, 0, NCASES);
	tcase_add_loop_test(gen, losing_table_install_merges_into_winner, 0, NCASES);
	tcase_add_loop_test(gen, concurrent_disjoint_map_unmap, 0, NCASES);
	suite_add_tcase(s, gen);
	tcase_set_timeout(fmt, 120);
	tcase_add_test(fmt, lpae_geometry_and_registers);
	tcase_add_test(fmt, lpae_stage1_bits_match_the_architecture);
	tcase_add_test(fmt, default_hooks_work);
	tcase_add_test(fmt, format_info_agrees_with_create);
	tcase_add_test(fmt, gather_names_the_unmapped_range_for_every_geometry);
	tcase_add_test(fmt, default_allocator_refuses_tables_beyond_oas);
	tcase_add_test(fmt, null_pointer_arguments_are_einval);
	suite_add_tcase(s, fmt);
	return s;
}
