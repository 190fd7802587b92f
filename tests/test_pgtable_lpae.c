/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * ARM LPAE tables, 48- and 52-bit (FEAT_LPA, FEAT_LPA2), checked against an
 * independent decoder (tests/lpae_refwalk.h) that starts from the register
 * values ik_lpae_get_regs() gives: every mapping the tests request
 * translates, through the descriptors the engine wrote, to the requested
 * output address with the requested permissions and attributes; every
 * address not mapped faults; sizes and addresses a configuration cannot
 * express are -EINVAL with nothing changed; stage-2 DBM dirty tracking
 * follows the hardware's updates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/lpae.h>
#include "testlib.h"
#include "lpae_refwalk.h"

#define SZ_4K 0x1000ull
#define SZ_16K 0x4000ull
#define SZ_64K 0x10000ull
#define SZ_2M (1ull << 21)
#define SZ_32M (1ull << 25)
#define SZ_512M (1ull << 29)
#define SZ_1G (1ull << 30)
#define SZ_64G (1ull << 36)
#define SZ_512G (1ull << 39)
#define SZ_4T (1ull << 42)
#define LPA2 IK_LPAE_FLAG_LPA2

/* ------------------------------------------------------------ table memory */

/* Table pages at made-up IOMMU addresses (from `next`, so that 52-bit
 * configs put tables above 2^48), found again by address for the decoder. */
struct tmem {
	struct tpg {
		uint64_t iommu, size;
		void *cpu;
	} pg[4096];
	int n;
	uint64_t next;
	long allocs, frees;
};

static void *tm_alloc(void *cookie, ik_size size, ik_u64 *iommu)
{
	struct tmem *m = cookie;
	void *cpu;

	if (m->n == (int)(sizeof(m->pg) / sizeof(m->pg[0])) ||
	    posix_memalign(&cpu, size, size))
		return NULL;
	m->next = (m->next + size - 1) & ~(uint64_t)(size - 1);
	m->pg[m->n].iommu = m->next;
	m->pg[m->n].size = size;
	m->pg[m->n].cpu = cpu;
	m->n++;
	*iommu = m->next;
	m->next += size;
	m->allocs++;
	return cpu;
}

static void tm_free(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	struct tmem *m = cookie;

	(void)size;
	for (int i = 0; i < m->n; i++) {
		if (m->pg[i].iommu == iommu) {
			ck_assert_ptr_eq(m->pg[i].cpu, cpu);
			free(cpu);
			m->pg[i] = m->pg[--m->n];
			m->frees++;
			return;
		}
	}
	ck_abort_msg("free of unknown table %#llx", (unsigned long long)iommu);
}

static uint64_t *tm_slot(struct tmem *m, uint64_t pa)
{
	for (int i = 0; i < m->n; i++)
		if (pa >= m->pg[i].iommu && pa - m->pg[i].iommu < m->pg[i].size)
			return (uint64_t *)((char *)m->pg[i].cpu + (pa - m->pg[i].iommu));
	return NULL;
}

static bool tm_read(void *ctx, uint64_t pa, uint64_t *v)
{
	uint64_t *p = tm_slot(ctx, pa);

	if (!p)
		return false;
	*v = __atomic_load_n(p, __ATOMIC_RELAXED);
	return true;
}

static bool tm_write(void *ctx, uint64_t pa, uint64_t v)
{
	uint64_t *p = tm_slot(ctx, pa);

	if (!p)
		return false;
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
	return true;
}

/* The same memory as the library's walker reads it. */
static int tm_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	uint64_t v;

	if (!tm_read(ctx, addr, &v))
		return -EFAULT;
	*val = v;
	return 0;
}

/* Order-independent digest of every table page (address and contents). */
static uint64_t tm_digest(struct tmem *m)
{
	uint64_t sum = 0;

	for (int i = 0; i < m->n; i++) {
		const uint64_t *w = m->pg[i].cpu;
		uint64_t x = m->pg[i].iommu * 0x9e3779b97f4a7c15ull;

		for (uint64_t k = 0; k < m->pg[i].size / 8; k++)
			x = (x ^ w[k]) * 0x100000001b3ull;
		sum += x;
	}
	return sum;
}

struct env {
	struct tmem mem;
	struct ik_pgtable_hooks hooks;
	struct ik_pgtable_cfg cfg;
	struct ik_pgtable *pt;
	struct lr_regs regs;
};

/* One configuration.  pgsizes: what the config offers (everything the
 * format may keep); blocks: what the geometry must keep. */
struct lcfg {
	const char *name;
	enum ik_pt_fmt fmt;
	unsigned ias, oas;
	uint64_t gran, blocks;
	uint64_t flags;
	unsigned quirks;
};

static const struct lcfg lcfgs[] = {
	{ "s1 4K 48", IK_PT_LPAE_S1, 48, 48, SZ_4K, SZ_2M | SZ_1G, 0, 0 },
	{ "s2 16K 48 concat", IK_PT_LPAE_S2, 48, 48, SZ_16K, SZ_32M, 0, 0 },
	{ "s1 64K lpa 52", IK_PT_LPAE_S1, 52, 52, SZ_64K, SZ_512M | SZ_4T, 0, 0 },
	{ "s1 64K lpa ias48 oas52", IK_PT_LPAE_S1, 48, 52, SZ_64K, SZ_512M | SZ_4T, 0, 0 },
	{ "s2 64K lpa 52 dirty", IK_PT_LPAE_S2, 52, 52, SZ_64K, SZ_512M | SZ_4T, 0, IK_PT_QUIRK_DIRTY },
	{ "s1 4K lpa2 52 (level -1)", IK_PT_LPAE_S1, 52, 52, SZ_4K, SZ_2M | SZ_1G | SZ_512G, LPA2, 0 },
	{ "s1 4K lpa2 48 oas52", IK_PT_LPAE_S1, 48, 52, SZ_4K, SZ_2M | SZ_1G | SZ_512G, LPA2, 0 },
	{ "s1 16K lpa2 52 dirty", IK_PT_LPAE_S1, 52, 52, SZ_16K, SZ_32M | SZ_64G, LPA2, IK_PT_QUIRK_DIRTY },
	{ "s2 4K lpa2 52 concat", IK_PT_LPAE_S2, 52, 52, SZ_4K, SZ_2M | SZ_1G | SZ_512G, LPA2, 0 },
	{ "s2 4K lpa2 50 concat", IK_PT_LPAE_S2, 50, 52, SZ_4K, SZ_2M | SZ_1G | SZ_512G, LPA2, 0 },
	{ "s2 16K lpa2 52 (SL0 3)", IK_PT_LPAE_S2, 52, 52, SZ_16K, SZ_32M | SZ_64G, LPA2, 0 },
	{ "s2 16K lpa2 51 concat dirty", IK_PT_LPAE_S2, 51, 48, SZ_16K, SZ_32M | SZ_64G, LPA2,
	  IK_PT_QUIRK_DIRTY },
};
#define NLCFG ((int)(sizeof(lcfgs) / sizeof(lcfgs[0])))

static struct env *env_new(const struct lcfg *c)
{
	struct env *e = calloc(1, sizeof(*e));
	struct ik_lpae_regs r;

	/* bits 51:48 = 0b1010: both moved bits and kept bits get exercised */
	e->mem.next = c->oas == 52 ? (0xaull << 48) + (1ull << 20) : 1ull << 20;
	e->hooks.alloc_table = tm_alloc;
	e->hooks.free_table = tm_free;
	e->cfg.fmt = c->fmt;
	e->cfg.ias = c->ias;
	e->cfg.oas = c->oas;
	e->cfg.pgsize_bitmap = ~(c->gran - 1);
	e->cfg.coherent = true;
	e->cfg.quirks = c->quirks;
	e->cfg.fmt_flags = c->flags;
	e->cfg.hooks = &e->hooks;
	e->cfg.cookie = &e->mem;
	ck_assert_msg(ik_pgtable_create(&e->cfg, &e->pt) == 0, "%s: create", c->name);
	ck_assert_int_eq(ik_lpae_get_regs(e->pt, &r), 0);
	e->regs.stage = c->fmt == IK_PT_LPAE_S1 ? 1 : 2;
	e->regs.tcr = e->regs.stage == 1 ? r.tcr : r.vtcr;
	e->regs.ttbr = e->regs.stage == 1 ? r.ttbr : r.vttbr;
	e->regs.mair = r.mair;
	e->regs.read = tm_read;
	e->regs.write = tm_write;
	e->regs.ctx = &e->mem;
	return e;
}

static void env_free(struct env *e)
{
	ik_pgtable_destroy(e->pt);
	ck_assert_int_eq(e->mem.allocs, e->mem.frees);
	free(e);
}

/* ------------------------------------------------------------ the requests */

struct req {
	uint64_t iova, size, pa;
	unsigned prot;
};

struct shadow {
	struct req r[1024];
	int n;
};

static bool sh_overlaps(const struct shadow *s, uint64_t iova, uint64_t size)
{
	for (int i = 0; i < s->n; i++)
		if (iova < s->r[i].iova + s->r[i].size && s->r[i].iova < iova + size)
			return true;
	return false;
}

/* Remove [iova, iova + size); returns the bytes that were mapped. */
static uint64_t sh_unmap(struct shadow *s, uint64_t iova, uint64_t size)
{
	uint64_t end = iova + size, gone = 0;

	for (int i = 0; i < s->n; i++) {
		struct req q = s->r[i];
		uint64_t qend = q.iova + q.size, lo, hi;

		if (end <= q.iova || qend <= iova)
			continue;
		lo = iova > q.iova ? iova : q.iova;
		hi = end < qend ? end : qend;
		gone += hi - lo;
		s->r[i] = s->r[--s->n];	/* replace by what is left of it */
		if (q.iova < lo) {
			ck_assert_int_lt(s->n, 1024);
			s->r[s->n++] = (struct req){ q.iova, lo - q.iova, q.pa, q.prot };
		}
		if (hi < qend) {
			ck_assert_int_lt(s->n, 1024);
			s->r[s->n++] = (struct req){ hi, qend - hi, q.pa + (hi - q.iova), q.prot };
		}
		i--;
	}
	return gone;
}

/* What the decoder must report for a mapping of `prot`. */
static void expect_prot(const struct lcfg *c, unsigned prot, const struct lr_result *r,
			uint64_t iova)
{
	bool x = !(prot & (IK_PROT_NOEXEC | IK_PROT_MMIO));

	IK_REQUIRE_MSG(r->w == !!(prot & IK_PROT_WRITE) && r->x == x, "%s: %#llx prot %#x: w %d x %d",
		       c->name, (unsigned long long)iova, prot, r->w, r->x);
	if (c->fmt == IK_PT_LPAE_S1) {
		unsigned mair = (prot & IK_PROT_CACHE) ? 0xff : (prot & IK_PROT_MMIO) ? 0x04 : 0x44;

		IK_REQUIRE(r->r && r->priv_only == !!(prot & IK_PROT_PRIV) && r->attr == mair);
	} else {
		unsigned ma = (prot & IK_PROT_CACHE) ? 0xf : (prot & IK_PROT_MMIO) ? 0x1 : 0x5;

		IK_REQUIRE(r->r == !!(prot & IK_PROT_READ) && r->attr == ma);
	}
	IK_REQUIRE(!r->dirty);
}

static void check_addr(const struct env *e, const struct lcfg *c, const struct shadow *s,
		       uint64_t iova)
{
	struct lr_result r = lr_walk(&e->regs, iova, 0);

	for (int i = 0; i < s->n; i++) {
		const struct req *q = &s->r[i];

		if (iova >= q->iova && iova - q->iova < q->size) {
			IK_REQUIRE_MSG(r.fault == LR_OK && r.pa == q->pa + (iova - q->iova),
				       "%s: %#llx: fault %d pa %#llx want %#llx", c->name,
				       (unsigned long long)iova, r.fault, (unsigned long long)r.pa,
				       (unsigned long long)(q->pa + (iova - q->iova)));
			expect_prot(c, q->prot, &r, iova);
			return;
		}
	}
	IK_REQUIRE_MSG(r.fault == LR_TRANSLATION, "%s: unmapped %#llx: fault %d pa %#llx", c->name,
		       (unsigned long long)iova, r.fault, (unsigned long long)r.pa);
}

static const unsigned prots[] = {
	IK_PROT_READ,
	IK_PROT_READ | IK_PROT_WRITE,
	IK_PROT_READ | IK_PROT_NOEXEC,
	IK_PROT_READ | IK_PROT_WRITE | IK_PROT_CACHE,
	IK_PROT_READ | IK_PROT_MMIO,
	IK_PROT_READ | IK_PROT_WRITE | IK_PROT_PRIV, /* stage 1 only */
	IK_PROT_WRITE,				     /* stage 2 only */
};

static unsigned pick_prot(const struct lcfg *c, struct ik_rng *rng)
{
	unsigned p = prots[ik_rng_below(rng, 7)];

	if (c->fmt == IK_PT_LPAE_S1 && p == IK_PROT_WRITE)
		p = IK_PROT_READ | IK_PROT_WRITE;
	if (c->fmt == IK_PT_LPAE_S2)
		p &= ~IK_PROT_PRIV;
	return p;
}

/* ------------------------------------------------------------ tests */

/* The geometry keeps exactly the blocks the architecture allows for the
 * combination, and the registers describe the table set. */
START_TEST(geometry_keeps_every_allowed_block_and_registers_describe_it)
{
	const struct lcfg *c = &lcfgs[_i];
	struct env *e = env_new(c);
	struct ik_pgtable_info info;
	struct lr_shape s;
	struct ik_pt_walker w;

	ik_pgtable_get_info(e->pt, &info);
	ck_assert_uint_eq(info.geom.pgsize_bitmap, c->gran | c->blocks);
	ck_assert(lr_shape_of(&e->regs, &s));
	ck_assert_uint_eq(s.gshift, __builtin_ctzll(c->gran));
	ck_assert_uint_eq(s.ias, c->ias);
	ck_assert_uint_eq(s.ps, c->oas);
	ck_assert_int_eq(s.ds, c->gran != SZ_64K && (c->flags & LPA2));
	ck_assert_int_eq(s.hd, !!(c->quirks & IK_PT_QUIRK_DIRTY));
	ck_assert_uint_eq(s.root, info.root_iommu);
	ck_assert_int_eq(s.start, (int)(4 - info.geom.nlevels));
	if (c->oas == 52) {
		ck_assert_uint_ge(info.root_iommu, 1ull << 48);
		/* BADDR[51:48] in TTBR bits [5:2], not at [51:48] (ASID/VMID) */
		ck_assert_uint_eq(e->regs.ttbr >> 48, 0);
		ck_assert_uint_eq((e->regs.ttbr >> 2) & 0xf, info.root_iommu >> 48);
	}
	/* an emulator's walker from the same registers has the same shape */
	ck_assert_int_eq(ik_lpae_walker_from_regs(&w, e->regs.stage, e->regs.tcr, e->regs.ttbr,
						  c->quirks),
			 0);
	ck_assert_uint_eq(w.root, info.root_iommu);
	ck_assert_uint_eq(w.geom.nlevels, info.geom.nlevels);
	ck_assert_uint_eq(w.geom.concat, info.geom.concat);
	ck_assert_uint_eq(w.geom.pgsize_bitmap, info.geom.pgsize_bitmap);
	ck_assert_uint_eq(w.geom.fmt_flags & LPA2, s.ds ? LPA2 : 0);
	env_free(e);
}
END_TEST

/* Random maps and unmaps near the top and the bottom of the input space,
 * output addresses anywhere below 2^oas (above 2^48 for most of them on a
 * 52-bit config): the decoder translates each requested page to its output
 * address with its permissions, and everything else faults. */
START_TEST(decoder_translates_every_request_and_nothing_else)
{
	const struct lcfg *c = &lcfgs[_i];
	struct env *e = env_new(c);
	struct shadow *sh = calloc(1, sizeof(*sh));
	struct ik_rng rng = { 0x52b17000u + (uint64_t)_i };
	uint64_t sizes[8], top = 1ull << c->ias, win = c->ias > 44 ? 1ull << 44 : top / 2;
	uint64_t bases[2] = { 0, top - win };
	unsigned ns = 0;
	/* Not scaled down (IK_TEST_SCALE): the check after the run needs the
	 * mappings 300 operations make, and they cost milliseconds. */
	long ops = 300;
	struct ik_pgtable_info info;

	ik_pgtable_get_info(e->pt, &info);
	for (unsigned b = 0; b < 64; b++)
		if (info.geom.pgsize_bitmap >> b & 1)
			sizes[ns++] = 1ull << b;
	for (long i = 0; i < ops; i++) {
		uint64_t unit = sizes[ik_rng_below(&rng, ns)];
		uint64_t size = unit * (unit == sizes[0] ? 1 + ik_rng_below(&rng, 32) : 1 + ik_rng_below(&rng, 2));
		uint64_t base = bases[ik_rng_below(&rng, 2)];
		uint64_t iova, pa;

		if (size >= win)
			size = unit;
		if (size >= win)
			continue;
		iova = base + ik_rng_below(&rng, (win - size) / unit) * unit;
		pa = ik_rng_below(&rng, ((1ull << c->oas) - size) / unit) * unit;
		if (ik_rng_below(&rng, 3) == 0) {
			struct ik_gather g;
			ik_s64 n;

			ik_gather_init(&g);
			n = ik_pgtable_unmap(e->pt, iova, size, &g);
			IK_REQUIRE(n >= 0);
			ik_pgtable_gather_sync(e->pt, &g);
			IK_REQUIRE_MSG((uint64_t)n == sh_unmap(sh, iova, size), "%s: unmap count", c->name);
		} else if (sh->n < 1000) {
			unsigned prot = pick_prot(c, &rng);
			int rc = ik_pgtable_map(e->pt, iova, pa, size, prot);

			if (sh_overlaps(sh, iova, size)) {
				IK_REQUIRE(rc == -EEXIST);
			} else {
				IK_REQUIRE_MSG(rc == 0, "%s: map %d", c->name, rc);
				sh->r[sh->n++] = (struct req){ iova, size, pa, prot };
			}
		}
	}
	/* the run did what it is for: many live mappings, blocks among them,
	 * output addresses above 2^48 on 52-bit configs */
	{
		int high = 0, blocks = 0;

		for (int i = 0; i < sh->n; i++) {
			high += sh->r[i].pa + sh->r[i].size > (1ull << 48);
			blocks += lr_walk(&e->regs, sh->r[i].iova, 0).pgsize > sizes[0];
		}
		ck_assert_msg(sh->n >= 20 && blocks >= 5 && (c->oas < 52 || high >= 10),
			      "%s: %d mappings, %d blocks, %d high", c->name, sh->n, blocks, high);
	}
	for (int i = 0; i < sh->n; i++) {
		const struct req *q = &sh->r[i];

		check_addr(e, c, sh, q->iova);
		check_addr(e, c, sh, q->iova + q->size - sizes[0]);
		check_addr(e, c, sh, q->iova + ik_rng_below(&rng, q->size));
	}
	for (long i = 0; i < ops * 4; i++)
		check_addr(e, c, sh, bases[i & 1] + ik_rng_below(&rng, win));
	if (c->ias < 64)
		IK_REQUIRE(lr_walk(&e->regs, top + ik_rng_below(&rng, top), 0).fault == LR_TRANSLATION);
	free(sh);
	env_free(e);
}
END_TEST

/* The largest block of each config holds an output address with every
 * high bit the layout moves, and its descriptor has them where the Arm ARM
 * puts them. */
START_TEST(largest_block_and_page_carry_the_moved_oa_bits)
{
	const struct lcfg *c = &lcfgs[_i];
	struct env *e = env_new(c);
	uint64_t big = 1ull << (63 - __builtin_clzll(c->blocks));
	uint64_t oa_top = (1ull << c->oas) - big, iova = (1ull << c->ias) - big;
	struct lr_result r;

	ck_assert_int_eq(ik_pgtable_map(e->pt, iova, oa_top, big, IK_PROT_READ | IK_PROT_WRITE), 0);
	r = lr_walk(&e->regs, iova + big - 8, 0);
	ck_assert_int_eq(r.fault, LR_OK);
	ck_assert_uint_eq(r.pgsize, big);
	ck_assert_uint_eq(r.pa, oa_top + big - 8);
	/* a page at the top of the output space, at the bottom of the input */
	ck_assert_int_eq(ik_pgtable_map(e->pt, 0, (1ull << c->oas) - c->gran, c->gran,
					IK_PROT_READ), 0);
	r = lr_walk(&e->regs, 0, 0);
	ck_assert_int_eq(r.fault, LR_OK);
	ck_assert_uint_eq(r.pgsize, c->gran);
	ck_assert_uint_eq(r.pa, (1ull << c->oas) - c->gran);
	if (c->oas == 52 && c->gran == SZ_64K) {
		ck_assert_uint_eq((r.desc >> 12) & 0xf, 0xf); /* OA[51:48] */
		ck_assert_uint_eq((r.desc >> 48) & 0xf, 0);
	} else if (c->oas == 52) {
		ck_assert_uint_eq((r.desc >> 8) & 3, 3);	/* OA[51:50] */
		ck_assert_uint_eq((r.desc >> 48) & 3, 3);	/* OA[49:48] */
		ck_assert_uint_eq((r.desc >> 50) & 3, 0);
	}
	if (c->flags & LPA2)	/* no SH field: bits [9:8] are address */
		ck_assert_uint_eq(((r.desc >> 8) & 3), ((1ull << c->oas) - 1) >> 50 & 3);
	env_free(e);
}
END_TEST

/* A run of leaves whose output addresses cross 2^48 or 2^50 (where the
 * encoded address stops being one run of bits) translates page by page to
 * the requested addresses: the engine does not fill it by adding. */
START_TEST(runs_across_the_moved_bit_boundaries_translate_exactly)
{
	const struct lcfg *c = &lcfgs[_i];
	struct env *e;
	uint64_t units[2] = { c->gran, c->blocks & -c->blocks };
	uint64_t iova = 0;

	if (c->oas != 52)
		return;
	e = env_new(c);
	for (int b = 0; b < 2; b++) {
		uint64_t edge = 1ull << (b ? 50 : 48);

		for (int u = 0; u < 2; u++) {
			uint64_t unit = units[u], pa = edge - 4 * unit;

			iova = (iova + unit - 1) & ~(unit - 1);
			/* a neighbour first, so that the run goes into an existing
			 * table (a new table is filled entry by entry anyway) */
			ck_assert_int_eq(ik_pgtable_map(e->pt, iova + 8 * unit, 0, unit, IK_PROT_READ), 0);
			ck_assert_int_eq(ik_pgtable_map(e->pt, iova, pa, 8 * unit, IK_PROT_READ), 0);
			for (uint64_t k = 0; k < 8; k++) {
				struct lr_result r = lr_walk(&e->regs, iova + k * unit + 8, 0);

				ck_assert_msg(r.fault == LR_OK && r.pgsize == unit &&
						      r.pa == pa + k * unit + 8,
					      "%s: edge 2^%d unit %#llx page %llu: fault %d pa %#llx",
					      c->name, b ? 50 : 48, (unsigned long long)unit,
					      (unsigned long long)k, r.fault, (unsigned long long)r.pa);
			}
			iova += 9 * unit;
		}
	}
	env_free(e);
}
END_TEST

/* Configs the architecture cannot express are refused at create. */
START_TEST(configs_the_architecture_cannot_express_are_einval)
{
	static const struct {
		enum ik_pt_fmt fmt;
		unsigned ias, oas;
		uint64_t gran, flags;
	} bad[] = {
		{ IK_PT_LPAE_S1, 48, 52, SZ_4K, 0 },   /* oas 52 at 4K needs LPA2 */
		{ IK_PT_LPAE_S2, 48, 52, SZ_16K, 0 },  /* ... and at 16K */
		{ IK_PT_LPAE_S1, 49, 48, SZ_4K, 0 },   /* ias 49 at 4K needs LPA2 */
		{ IK_PT_LPAE_S2, 52, 48, SZ_16K, 0 },
		{ IK_PT_LPAE_S1, 53, 52, SZ_64K, 0 },  /* beyond 52 bits */
		{ IK_PT_LPAE_S1, 53, 52, SZ_4K, LPA2 },
		{ IK_PT_LPAE_S1, 48, 50, SZ_4K, LPA2 }, /* not a PARange value */
		{ IK_PT_LPAE_S1, 48, 48, SZ_4K, 0x2 },  /* unknown flag */
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ik_pgtable_cfg cfg = { 0 };
		struct ik_pgtable *pt = NULL;
		struct ik_pt_geometry g;

		cfg.fmt = bad[i].fmt;
		cfg.ias = bad[i].ias;
		cfg.oas = bad[i].oas;
		cfg.pgsize_bitmap = bad[i].gran;
		cfg.fmt_flags = bad[i].flags;
		cfg.coherent = true;
		ck_assert_msg(ik_pgtable_create(&cfg, &pt) == -EINVAL, "row %u", i);
		ck_assert_ptr_null(pt);
		ck_assert_int_eq(ik_pt_geometry_init(&g, &cfg), -EINVAL);
	}
}
END_TEST

/* Page sizes the granule cannot express (the 52-bit blocks without the
 * feature included), IOVAs beyond ias and output addresses beyond oas are
 * -EINVAL, and no table page changes. */
START_TEST(sizes_and_addresses_beyond_the_config_are_einval_with_nothing_changed)
{
	static const struct lcfg small[] = {
		{ "4K no lpa2", IK_PT_LPAE_S1, 48, 48, SZ_4K, SZ_512G, 0, 0 },
		{ "16K no lpa2", IK_PT_LPAE_S2, 48, 48, SZ_16K, SZ_64G, 0, 0 },
		{ "64K oas48", IK_PT_LPAE_S1, 48, 48, SZ_64K, SZ_4T, 0, 0 },
		{ "16K lpa2", IK_PT_LPAE_S1, 52, 52, SZ_16K, SZ_1G, LPA2, 0 },
	};

	for (unsigned i = 0; i < 4; i++) {
		const struct lcfg *c = &small[i];
		struct env *e = env_new(c);
		uint64_t d, bad = c->blocks, top_oa = 1ull << c->oas, top_ia = 1ull << c->ias;
		struct ik_pgtable_info info;

		ik_pgtable_get_info(e->pt, &info);
		ck_assert_uint_eq(info.geom.pgsize_bitmap & bad, 0);
		ck_assert_int_eq(ik_pgtable_map(e->pt, 0, 0, c->gran, IK_PROT_READ), 0);
		d = tm_digest(&e->mem);
		ck_assert_int_eq(ik_pgtable_map_pages(e->pt, bad, bad, bad, 1, IK_PROT_READ), -EINVAL);
		ck_assert_int_eq(ik_pgtable_map_pages(e->pt, top_ia, 0, c->gran, 1, IK_PROT_READ),
				 -EINVAL);
		ck_assert_int_eq(ik_pgtable_map_pages(e->pt, top_ia - c->gran, 0, c->gran, 2,
						      IK_PROT_READ), -EINVAL);
		ck_assert_int_eq(ik_pgtable_map(e->pt, c->gran, top_oa, c->gran, IK_PROT_READ),
				 -EINVAL);
		ck_assert_int_eq(ik_pgtable_map(e->pt, c->gran, top_oa - c->gran, 2 * c->gran,
						IK_PROT_READ), -EINVAL);
		ck_assert_uint_eq(tm_digest(&e->mem), d);
		ck_assert_int_eq(lr_walk(&e->regs, c->gran, 0).fault, LR_TRANSLATION);
		ck_assert_int_eq(lr_walk(&e->regs, 0, 0).fault, LR_OK);
		env_free(e);
	}
}
END_TEST

/* Stage 2 DBM: a writable leaf starts writable-clean (DBM = 1, S2AP[1] =
 * 0); the hardware's write (the decoder's update) makes it dirty, the
 * engine reports that page once and makes it clean again. */
START_TEST(stage2_dbm_dirty_bit_is_s2ap_write)
{
	static const struct lcfg cs[] = {
		{ "s2 4K 48 dirty", IK_PT_LPAE_S2, 48, 48, SZ_4K, SZ_2M | SZ_1G, 0, IK_PT_QUIRK_DIRTY },
		{ "s2 64K lpa 52 dirty", IK_PT_LPAE_S2, 52, 52, SZ_64K, SZ_512M | SZ_4T, 0,
		  IK_PT_QUIRK_DIRTY },
		{ "s2 4K lpa2 52 dirty", IK_PT_LPAE_S2, 52, 52, SZ_4K, SZ_2M | SZ_1G | SZ_512G, LPA2,
		  IK_PT_QUIRK_DIRTY },
	};

	for (unsigned i = 0; i < 3; i++) {
		const struct lcfg *c = &cs[i];
		struct env *e = env_new(c);
		uint64_t g = c->gran, bm[1] = { 0 }, pa = (1ull << c->oas) - 16 * g;
		unsigned lg = (unsigned)__builtin_ctzll(g);
		struct lr_result r;

		ck_assert_int_eq(ik_pgtable_map(e->pt, 0, pa, 8 * g, IK_PROT_READ | IK_PROT_WRITE), 0);
		ck_assert_int_eq(ik_pgtable_map(e->pt, 8 * g, pa + 8 * g, 8 * g, IK_PROT_READ), 0);
		r = lr_walk(&e->regs, 3 * g, 0);
		ck_assert_int_eq(r.fault, LR_OK);
		ck_assert(r.w && !r.dirty);
		ck_assert_uint_eq((r.desc >> 51) & 1, 1);	/* DBM */
		ck_assert_uint_eq((r.desc >> 7) & 1, 0);	/* S2AP[1]: clean */
		ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(e->pt, 0, 16 * g, 0, bm, lg, NULL), 0);
		ck_assert_uint_eq(bm[0], 0);
		/* the device writes page 3; a read-only page refuses the write */
		r = lr_walk(&e->regs, 3 * g + 8, LR_WRITE);
		ck_assert_int_eq(r.fault, LR_OK);
		ck_assert(r.dirty);
		ck_assert_int_eq(lr_walk(&e->regs, 9 * g, LR_WRITE).fault, LR_PERMISSION);
		ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(e->pt, 0, 16 * g, IK_DIRTY_NO_CLEAR,
								 bm, lg, NULL), 1);
		ck_assert_uint_eq(bm[0], 1u << 3);
		bm[0] = 0;
		ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(e->pt, 0, 16 * g, 0, bm, lg, NULL), 1);
		ck_assert_uint_eq(bm[0], 1u << 3);
		r = lr_walk(&e->regs, 3 * g, 0);
		ck_assert(r.w && !r.dirty);
		ck_assert_uint_eq(r.pa, pa + 3 * g);
		bm[0] = 0;
		ck_assert_int_eq(ik_pgtable_read_and_clear_dirty(e->pt, 0, 16 * g, 0, bm, lg, NULL), 0);
		ck_assert_uint_eq(bm[0], 0);
		env_free(e);
	}
}
END_TEST

/* Register values the library does not produce but an emulator may
 * receive: a 4K stage 2 starting at level -1 (DS = 1, SL2 = 1, SL0 = 0)
 * decodes to five levels, as the decoder reads it; the reserved SL2
 * combinations and DS-only encodings without DS are refused. */
START_TEST(stage2_level_minus_one_registers_decode)
{
	/* T0SZ 12, SL0 0, TG0 4K, PS 52, DS, SL2 */
	uint64_t vtcr = 12 | 0ull << 6 | 0ull << 14 | 6ull << 16 | 1ull << 32 | 1ull << 33;
	uint64_t vttbr = 0x40000ull | 0x3ull << 2; /* BADDR[51:48] = 3 */
	struct ik_pt_walker w;
	struct lr_regs r = { 2, vtcr, vttbr, 0, tm_read, NULL, NULL };
	struct lr_shape sh;

	ck_assert_int_eq(ik_lpae_walker_from_regs(&w, 2, vtcr, vttbr, 0), 0);
	ck_assert_uint_eq(w.geom.nlevels, 5);
	ck_assert_uint_eq(w.geom.hw_start_level, (ik_u32)-1);
	ck_assert_uint_eq(w.geom.top_bits, 4);
	ck_assert_uint_eq(w.geom.concat, 1);
	ck_assert_uint_eq(w.root, (3ull << 48) | 0x40000);
	ck_assert_uint_eq(w.geom.pgsize_bitmap, SZ_4K | SZ_2M | SZ_1G | SZ_512G);
	ck_assert(lr_shape_of(&r, &sh));
	ck_assert_int_eq(sh.start, -1);
	ck_assert_uint_eq(sh.root, w.root);
	/* SL2 with SL0 1: reserved */
	ck_assert_int_eq(ik_lpae_walker_from_regs(&w, 2, vtcr | 1ull << 6, vttbr, 0), -EINVAL);
	/* without DS: T0SZ 12 is beyond 48 bits at 4K */
	ck_assert_int_eq(ik_lpae_walker_from_regs(&w, 2, vtcr & ~(1ull << 32), vttbr, 0), -EINVAL);
	/* 16K SL0 3 (level 0) only with DS */
	vtcr = 12 | 3ull << 6 | 2ull << 14 | 6ull << 16 | 1ull << 32;
	ck_assert_int_eq(ik_lpae_walker_from_regs(&w, 2, vtcr, vttbr, 0), 0);
	ck_assert_uint_eq(w.geom.nlevels, 4);
	ck_assert_uint_eq(w.geom.top_bits, 5);
	ck_assert_int_eq(ik_lpae_walker_from_regs(&w, 2, (vtcr & ~(1ull << 32)) | 16, vttbr, 0),
			 -EINVAL);
}
END_TEST

/* The library's own walker, set up from the registers as an emulator is,
 * agrees with the decoder on a 52-bit table set (output address, size,
 * write permission, faults). */
START_TEST(walker_from_registers_agrees_with_the_decoder)
{
	const struct lcfg *c = &lcfgs[_i];
	struct env *e = env_new(c);
	struct ik_pt_walker w;
	struct ik_pt_mem mem = { 0 };
	struct ik_rng rng = { 0xdec0de00u + (uint64_t)_i };
	uint64_t big = 1ull << (63 - __builtin_clzll(c->blocks));

	ck_assert_int_eq(ik_pgtable_map(e->pt, (1ull << c->ias) - big, (1ull << c->oas) - big, big,
					IK_PROT_READ), 0);
	ck_assert_int_eq(ik_pgtable_map(e->pt, 0, (1ull << c->oas) - 64 * c->gran, 64 * c->gran,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	ck_assert_int_eq(ik_lpae_walker_from_regs(&w, e->regs.stage, e->regs.tcr, e->regs.ttbr,
						  c->quirks),
			 0);
	mem.read64 = tm_read64;
	mem.ctx = &e->mem;
	for (int i = 0; i < 200; i++) {
		uint64_t iova = i & 1 ? (1ull << c->ias) - 1 - ik_rng_below(&rng, 2 * big)
				      : ik_rng_below(&rng, 128 * c->gran);
		struct lr_result r = lr_walk(&e->regs, iova, 0);
		struct ik_pt_walk_result res;

		ck_assert_int_eq(ik_pt_walk(&w, &mem, iova, 0, &res), 0);
		if (r.fault == LR_OK) {
			IK_REQUIRE(res.fault == IK_PT_FAULT_NONE && res.oa == r.pa &&
				   res.pgsize == r.pgsize && !!(res.prot & IK_PROT_WRITE) == r.w);
		} else {
			IK_REQUIRE(r.fault == LR_TRANSLATION && res.fault == IK_PT_FAULT_TRANSLATION);
		}
	}
	env_free(e);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("pgtable_lpae");
	TCase *tc = tcase_create("lpae52");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, geometry_keeps_every_allowed_block_and_registers_describe_it, 0, NLCFG);
	tcase_add_loop_test(tc, decoder_translates_every_request_and_nothing_else, 0, NLCFG);
	tcase_add_loop_test(tc, largest_block_and_page_carry_the_moved_oa_bits, 0, NLCFG);
	tcase_add_loop_test(tc, runs_across_the_moved_bit_boundaries_translate_exactly, 0, NLCFG);
	tcase_add_test(tc, configs_the_architecture_cannot_express_are_einval);
	tcase_add_test(tc, sizes_and_addresses_beyond_the_config_are_einval_with_nothing_changed);
	tcase_add_test(tc, stage2_dbm_dirty_bit_is_s2ap_write);
	tcase_add_loop_test(tc, walker_from_registers_agrees_with_the_decoder, 0, NLCFG);
	tcase_add_test(tc, stage2_level_minus_one_registers_decode);
	suite_add_tcase(s, tc);
	return s;
}
