/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/pgtable.h>
#include <iommukit/softiommu.h>
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>
#include <iommukit/cmd/riscv.h>
#include <iommukit/cmd/amd.h>
#include <iommukit/drv/vtd.h>
#include "testlib.h"

double ik_test_scale(void)
{
	const char *s = getenv("IK_TEST_SCALE");
	double v = s ? atof(s) : 1.0;

	return v > 0 ? v : 1.0;
}

long ik_test_iters(long n)
{
	long v = (long)((double)n * ik_test_scale());

	return v < 1 ? 1 : v;
}

uint64_t ik_test_timeout_ns(uint64_t ns)
{
	const char *s = getenv("IK_TEST_TIMEOUT_SCALE");
	double v = s ? atof(s) : 1.0;

	if (!(v >= 1.0))
		v = 1.0;
	if (v > 1000.0)
		v = 1000.0;
	return (uint64_t)((double)ns * v);
}

static void *fa_alloc(void *ctx, ik_size size, ik_size align)
{
	struct ik_fault_alloc *fa = ctx;
	long n = __atomic_add_fetch(&fa->calls, 1, __ATOMIC_RELAXED);
	long at = __atomic_load_n(&fa->fail_at, __ATOMIC_RELAXED);
	void *p;

	if (at > 0 && (n == at || (fa->fail_every && n > at))) {
		__atomic_add_fetch(&fa->failures, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (align < sizeof(void *))
		align = sizeof(void *);
	if (posix_memalign(&p, align, size ? size : 1) != 0)
		return NULL;
	__atomic_add_fetch(&fa->live, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&fa->live_bytes, (long)size, __ATOMIC_RELAXED);
	return p;
}

static void fa_free(void *ctx, void *ptr, ik_size size)
{
	struct ik_fault_alloc *fa = ctx;

	__atomic_sub_fetch(&fa->live, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&fa->live_bytes, (long)size, __ATOMIC_RELAXED);
	free(ptr);
}

void ik_fault_alloc_init(struct ik_fault_alloc *fa)
{
	fa->a.alloc = fa_alloc;
	fa->a.free = fa_free;
	fa->a.ctx = fa;
	fa->fail_at = 0;
	fa->fail_every = 0;
	fa->calls = 0;
	fa->live = 0;
	fa->live_bytes = 0;
	fa->failures = 0;
}

void ik_fault_alloc_fail_nth(struct ik_fault_alloc *fa, long n)
{
	__atomic_store_n(&fa->calls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fa->fail_at, n, __ATOMIC_RELAXED);
}

void ik_fault_alloc_disarm(struct ik_fault_alloc *fa)
{
	__atomic_store_n(&fa->fail_at, 0, __ATOMIC_RELAXED);
	fa->fail_every = 0;
}

/* An identity table page: aligned to its size, IOMMU address = CPU address. */
static void *id_table_alloc(void *cookie, ik_size size, ik_u64 *iommu)
{
	void *p = aligned_alloc(size, size);

	(void)cookie;
	if (p)
		*iommu = (uintptr_t)p;
	return p;
}

void ik_test_table_free(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	(void)cookie;
	(void)iommu;
	(void)size;
	free(cpu);
}

void *ik_test_tables_alloc(void *cookie, ik_size size, ik_u64 *iommu)
{
	struct ik_test_tables *t = cookie;
	void *p = id_table_alloc(NULL, size, iommu);

	if (p)
		__atomic_add_fetch(&t->allocs, 1, __ATOMIC_RELAXED);
	return p;
}

void ik_test_tables_free(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	struct ik_test_tables *t = cookie;

	__atomic_add_fetch(&t->frees, 1, __ATOMIC_RELAXED);
	ik_test_table_free(NULL, cpu, iommu, size);
}

const struct ik_pgtable_hooks ik_test_tables_hooks = {
	.alloc_table = ik_test_tables_alloc,
	.free_table = ik_test_tables_free,
};

int ik_test_mem_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	(void)ctx;
	*val = __atomic_load_n((const ik_u64 *)(uintptr_t)addr, __ATOMIC_RELAXED);
	return 0;
}

int ik_test_mem_cas64(void *ctx, ik_u64 addr, ik_u64 old, ik_u64 val)
{
	(void)ctx;
	return __atomic_compare_exchange_n((ik_u64 *)(uintptr_t)addr, &old, val, 0,
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) ? 0 : -EAGAIN;
}

const struct ik_pt_mem ik_test_mem = { ik_test_mem_read64, NULL, NULL };
const struct ik_pt_mem ik_test_mem_hw = { ik_test_mem_read64, ik_test_mem_cas64, NULL };

uint64_t *ik_test_page(struct ik_test_pages *ps)
{
	uint64_t *p;

	ck_assert_int_lt(ps->n, IK_TEST_PAGES_MAX);
	p = aligned_alloc(4096, 4096);
	ck_assert_ptr_nonnull(p);
	memset(p, 0, 4096);
	ps->page[ps->n++] = p;
	return p;
}

void ik_test_pages_free(struct ik_test_pages *ps)
{
	while (ps->n > 0)
		free(ps->page[--ps->n]);
}

int ik_test_wait_encode(const struct ik_cmdq_fmt *fmt, uint64_t addr, uint64_t data, uint64_t *w)
{
	if (fmt == &ik_cmdq_fmt_smmuv3) {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_SMMU_CMD_SYNC;
		c.cs = IK_SMMU_SYNC_CS_IRQ;
		c.msiaddr = addr;
		c.msidata = (uint32_t)data;
		return ik_smmu_cmd_encode(&c, w);
	}
	if (fmt == &ik_cmdq_fmt_vtd128 || fmt == &ik_cmdq_fmt_vtd256) {
		struct ik_vtd_desc d;

		memset(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_WAIT;
		d.sw = 1;
		d.status_addr = addr;
		d.status_data = (uint32_t)data;
		return ik_vtd_desc_encode(&d, w, fmt->entry_size / 8u);
	}
	if (fmt == &ik_cmdq_fmt_riscv) {
		struct ik_riscv_cmd c;

		memset(&c, 0, sizeof(c));
		c.opcode = IK_RISCV_CMD_IOFENCE;
		c.func3 = IK_RISCV_IOFENCE_C;
		c.av = 1;
		c.addr = addr;
		c.data = (uint32_t)data;
		return ik_riscv_cmd_encode(&c, w);
	}
	if (fmt == &ik_cmdq_fmt_amd) {
		struct ik_amd_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_AMD_CMD_COMPLETION_WAIT;
		c.store = 1;
		c.store_addr = addr;
		c.store_data = data;
		return ik_amd_cmd_encode(&c, w);
	}
	return -EINVAL;
}

static void *test_dma_alloc(void *ctx, ik_size size, ik_size align, ik_u64 *dma)
{
	struct ik_test_dma *f = ctx;
	void *p;

	if (f->fail_at && ++f->calls == f->fail_at)
		return NULL;
	p = aligned_alloc(align < 4096 ? 4096 : align, (size + 4095) & ~(size_t)4095);
	if (p) {
		f->allocs++;
		memset(p, 0xa5, size); /* the library must zero what it uses */
		*dma = (uintptr_t)p | f->dma_or;
	}
	return p;
}

static void test_dma_free(void *ctx, void *cpu, ik_u64 dma, ik_size size)
{
	struct ik_test_dma *f = ctx;

	(void)dma;
	(void)size;
	f->frees++;
	free(cpu);
}

void ik_test_dma_init(struct ik_test_dma *f)
{
	memset(f, 0, sizeof(*f));
	f->d.alloc = test_dma_alloc;
	f->d.free = test_dma_free;
	f->d.ctx = f;
}

struct ik_test_ncblk *ik_test_nc_find(struct ik_test_ncdma *m, const void *cpu)
{
	const uint8_t *p = cpu;

	for (int i = 0; i < m->n; i++)
		if (p >= m->b[i].cpu && p < m->b[i].cpu + m->b[i].size)
			return &m->b[i];
	return NULL;
}

static void *nc_alloc(void *ctx, ik_size size, ik_size align, ik_u64 *dma)
{
	struct ik_test_ncdma *m = ctx;
	struct ik_test_ncblk *b;

	if (++m->allocs == m->fail_at || m->n == (int)IK_ARRAY_SIZE(m->b))
		return NULL;
	b = &m->b[m->n++];
	if (align < 64)
		align = 64;
	ck_assert_int_eq(posix_memalign((void **)&b->cpu, align, size), 0);
	ck_assert_int_eq(posix_memalign((void **)&b->dev, align, size), 0);
	b->snap = malloc(size);
	ck_assert_ptr_nonnull(b->snap);
	b->size = size;
	memset(b->cpu, 0x5a, size);
	memcpy(b->snap, b->cpu, size);
	memset(b->dev, 0xa5, size);
	*dma = (uint64_t)(uintptr_t)b->dev;
	m->live++;
	return b->cpu;
}

static void nc_free(void *ctx, void *cpu, ik_u64 dma, ik_size size)
{
	struct ik_test_ncdma *m = ctx;
	struct ik_test_ncblk *b = ik_test_nc_find(m, cpu);

	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_eq(cpu, b->cpu);
	ck_assert_uint_eq(dma, (uint64_t)(uintptr_t)b->dev);
	ck_assert_uint_eq(size, b->size);
	free(b->cpu);
	free(b->dev);
	free(b->snap);
	*b = m->b[--m->n];
	m->live--;
}

static void nc_clean(void *ctx, const void *cpu, ik_u64 dma, ik_size size)
{
	struct ik_test_ncdma *m = ctx;
	struct ik_test_ncblk *b = ik_test_nc_find(m, cpu);
	size_t off, end;

	ck_assert_ptr_nonnull(b);
	off = (size_t)((const uint8_t *)cpu - b->cpu);
	ck_assert_uint_eq(dma, (uint64_t)(uintptr_t)(b->dev + off));
	ck_assert_uint_le(off + size, b->size);
	end = off + size;
	for (off &= ~(size_t)63; off < end; off += 64) {
		size_t k = b->size - off < 64 ? b->size - off : 64;

		if (memcmp(b->cpu + off, b->snap + off, k))
			memcpy(b->dev + off, b->cpu + off, k);
		else
			memcpy(b->cpu + off, b->dev + off, k);
		memcpy(b->snap + off, b->cpu + off, k);
	}
	m->cleans++;
}

void ik_test_ncdma_init(struct ik_test_ncdma *m)
{
	memset(m, 0, sizeof(*m));
	m->d.alloc = nc_alloc;
	m->d.free = nc_free;
	m->d.clean = nc_clean;
	m->d.ctx = m;
}

void ik_test_vtd_laps(struct ik_vtd *u, int n)
{
	struct ik_vtd_desc d;

	memset(&d, 0, sizeof(d));
	d.type = IK_VTD_DESC_IOTLB;
	d.g = IK_VTD_G_DOMAIN;
	d.did = 3;
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(ik_vtd_issue(u, &d, 1, true), 0);
}

struct ik_pgtable_cfg ik_test_cfg(enum ik_pt_fmt fmt, unsigned ias, unsigned oas, uint64_t pgsizes,
				  uint32_t quirks, uint64_t fmt_flags, bool coherent,
				  const struct ik_pgtable_hooks *h, void *cookie)
{
	struct ik_pgtable_cfg c;

	memset(&c, 0, sizeof(c));
	c.fmt = fmt;
	c.ias = ias;
	c.oas = oas;
	c.pgsize_bitmap = pgsizes;
	c.coherent = coherent;
	c.quirks = quirks;
	c.fmt_flags = fmt_flags;
	c.hooks = h;
	c.cookie = cookie;
	return c;
}

struct ik_pgtable *ik_test_pt_create(const struct ik_pgtable_cfg *c)
{
	struct ik_pgtable *pt = NULL;
	int rc = ik_pgtable_create(c, &pt);

	ck_assert_msg(rc == 0, "ik_pgtable_create fmt %d ias %u oas %u: %d", (int)c->fmt, c->ias,
		      c->oas, rc);
	return pt;
}

struct ik_pgtable *ik_test_pt_new(enum ik_pt_fmt fmt, unsigned ias, uint32_t quirks,
				  uint64_t fmt_flags, struct ik_pgtable_hooks *h, void *cookie)
{
	struct ik_pgtable_cfg c;

	h->alloc_table = id_table_alloc;
	h->free_table = ik_test_table_free;
	c = ik_test_cfg(fmt, ias, 48, IK_SZ_4K | IK_SZ_2M | IK_SZ_1G, quirks, fmt_flags, true, h,
			cookie);
	return ik_test_pt_create(&c);
}

/* ik_test_churn()'s device: stream 0 of the soft IOMMU. */
static int soft_dev0(void *ctx, uint64_t iova, void *p, size_t len, bool write)
{
	return write ? ik_softiommu_dma_write(ctx, 0, iova, p, len) :
		       ik_softiommu_dma_read(ctx, 0, iova, p, len);
}

void ik_test_churn(struct ik_pgtable *pt, struct ik_softiommu *s, uint64_t iova, void *buf,
		   uint64_t span, bool *mapped, long iters, struct ik_rng *rng,
		   ik_test_inval_fn inval, void *ctx)
{
	struct ik_test_dev dev = { soft_dev0, s };

	ik_test_churn_dev(pt, s, &dev, iova, buf, span, mapped, iters, rng, inval, ctx);
}

void ik_test_churn_dev(struct ik_pgtable *pt, struct ik_softiommu *s, const struct ik_test_dev *dev,
		       uint64_t iova, void *buf, uint64_t span, bool *mapped, long iters,
		       struct ik_rng *rng, ik_test_inval_fn inval, void *ctx)
{
	struct ik_softiommu_stale rep;

	for (long it = 0; it < iters; it++) {
		unsigned lg = 12 + (unsigned)ik_rng_below(rng, 11);
		uint64_t size = 1ull << lg, off = ik_rng_below(rng, span >> lg) << lg;
		uint64_t va = iova + off, v = (uint64_t)it;
		bool any = false, all = true;
		struct ik_gather g;

		for (uint64_t pg = off >> 12; pg < (off + size) >> 12; pg++) {
			any |= mapped[pg];
			all &= mapped[pg];
		}
		if (!any) {
			IK_REQUIRE(ik_pgtable_map(pt, va, (uint64_t)(uintptr_t)buf + off, size,
						  IK_PROT_READ | IK_PROT_WRITE) == 0);
			memset(mapped + (off >> 12), 1, size >> 12);
			IK_REQUIRE(dev->dma(dev->ctx, va, &v, 8, true) == 0);
			IK_REQUIRE(dev->dma(dev->ctx, va + size - 8, &v, 8, true) == 0);
		} else if (all || ik_rng_below(rng, 2)) {
			ik_gather_init(&g);
			IK_REQUIRE(ik_pgtable_unmap(pt, va, size, &g) >= 0);
			memset(mapped + (off >> 12), 0, size >> 12);
			IK_REQUIRE(inval(ctx, &g) == 0);
			IK_REQUIRE(ik_pgtable_gather_sync(pt, &g) == 0);
			IK_REQUIRE(dev->dma(dev->ctx, va, &v, 8, false) == -EFAULT);
		}
		IK_REQUIRE(ik_softiommu_stale_pop(s, &rep) == -ENOENT);
	}
	/* Every mapped page still reads; every unmapped one faults. */
	for (uint64_t pg = 0; pg < span >> 12; pg += 61) {
		uint64_t v;
		int err = dev->dma(dev->ctx, iova + (pg << 12), &v, 8, false);

		IK_REQUIRE(err == (mapped[pg] ? 0 : -EFAULT));
	}
	IK_REQUIRE(ik_softiommu_stale_pop(s, &rep) == -ENOENT);
}

uint64_t *ik_test_raw_entry(const struct ik_pgtable *pt, uint64_t iova, unsigned lvl,
			    unsigned root_bits, uint64_t (*next)(uint64_t e))
{
	struct ik_pgtable_info info;
	uint64_t *tbl;
	unsigned top;

	ik_pgtable_get_info(pt, &info);
	tbl = info.root_cpu;
	top = (unsigned)info.geom.nlevels - 1;
	for (unsigned l = top;; l--) {
		unsigned bits = l == top ? root_bits : 9;
		uint64_t *e = &tbl[(iova >> (12 + 9 * l)) & ((1u << bits) - 1)];
		uint64_t t;

		if (l == lvl)
			return e;
		t = l ? next(*e) : 0;
		if (!t)
			return NULL;
		tbl = (uint64_t *)(uintptr_t)t;
	}
}

void *ik_test_churn_mem(uint64_t span, bool **mapped)
{
	void *buf = aligned_alloc(2u << 20, span);

	*mapped = calloc(span >> 12, 1);
	ck_assert(buf && *mapped);
	return buf;
}

void ik_test_map_unmap(struct ik_pgtable *pt, struct ik_softiommu *s, uint64_t iova, void *buf,
		       struct ik_gather *g)
{
	uint64_t v = 1;

	ck_assert_int_eq(ik_pgtable_map(pt, iova, (uint64_t)(uintptr_t)buf, 4096,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	ck_assert_int_eq(ik_softiommu_dma_write(s, 0, iova, &v, 8), 0);
	ik_gather_init(g);
	ck_assert_int_eq(ik_pgtable_unmap(pt, iova, 4096, g), 4096);
}

void ik_test_gone(struct ik_softiommu *s, uint64_t iova)
{
	struct ik_softiommu_stale rep;
	uint64_t v;

	ck_assert_int_eq(ik_softiommu_dma_read(s, 0, iova, &v, 8), -EFAULT);
	ck_assert_int_eq(ik_softiommu_stale_pop(s, &rep), -ENOENT);
}

void *ik_test_soft_cmdq(struct ik_softiommu *s, const struct ik_cmdq_fmt *fmt,
			unsigned log2_entries, unsigned flags,
			void (*write32)(void *ctx, ik_u64 addr, ik_u32 val), struct ik_softiommu_cq *cq,
			struct ik_cmdq **q)
{
	size_t bytes = (size_t)fmt->entry_size << log2_entries;
	struct ik_softiommu_cq_config cc;
	struct ik_cmdq_config qc;
	void *ring;

	bytes = (bytes + 4095) & ~(size_t)4095;
	ring = aligned_alloc(4096, bytes);
	ck_assert_ptr_nonnull(ring);
	memset(ring, 0, bytes);
	memset(&cc, 0, sizeof(cc));
	cc.fmt = fmt;
	cc.log2_entries = log2_entries;
	cc.flags = flags;
	cc.ring = ring;
	cc.write32 = write32;
	ck_assert_int_eq(ik_softiommu_cq_init(cq, s, &cc), 0);
	memset(&qc, 0, sizeof(qc));
	qc.fmt = fmt;
	qc.log2_entries = log2_entries;
	qc.flags = flags;
	qc.ring = ring;
	qc.regs = &ik_softiommu_cq_regs;
	qc.regs_ctx = cq;
	qc.timeout_ns = 20000000000ull; /* generous: sanitizers and valgrind */
	ck_assert_int_eq(ik_cmdq_create(&qc, q), 0);
	return ring;
}

void ik_test_stale_control(struct ik_pgtable *pt, struct ik_softiommu *s, uint64_t iova,
			   void *buf, struct ik_gather *g)
{
	struct ik_softiommu_stale rep;
	uint64_t v;

	ik_test_map_unmap(pt, s, iova, buf, g);
	ck_assert_int_eq(ik_softiommu_dma_read(s, 0, iova, &v, 8), -EFAULT);
	ck_assert_int_eq(ik_softiommu_stale_pop(s, &rep), 0);
}
