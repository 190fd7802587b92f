/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * pgtable, the hardware-view walker on guest-written tables: hand-built
 * entries in a small guest memory, for every format built in.
 *   - output addresses past oas: a leaf larger than 2^oas (or ending above
 *     it) faults ADDR_SIZE for exactly the IOVAs whose output address is
 *     beyond oas, in ik_pt_walk and in ik_pt_walker_dump;
 *   - dump cost: a self-referencing page, shared tables (a DAG), counted in
 *     read64 calls (never in time);
 *   - the hardware's A/D update through a cas64 that loses: bounded retries,
 *     then IK_PT_FAULT_EXTERNAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/fmt/riscv.h>
#include <iommukit/fmt/amd.h>
#include "testlib.h"

/* ------------------------------------------------------------ guest memory */

#define GBASE 0x10000000ull	/* below 2^32: every oas reaches it */
#define GPAGES 8

enum cas_mode { CAS_OK, CAS_ALWAYS_LOSE, CAS_FAIL };

struct gmem {
	ik_u64 pgsz;		/* table page size (the granule) */
	ik_u64 *w;		/* GPAGES pages */
	unsigned long reads;
	unsigned long read_budget;	/* 0: none; else reads after it fail */
	unsigned long cas_calls;
	enum cas_mode cas_mode;
	unsigned cas_lose;	/* lose this many, then behave as cas_mode */
};

static ik_u64 gm_size(const struct gmem *m)
{
	return m->pgsz * GPAGES;
}

static ik_u64 *gm_slot(struct gmem *m, ik_u64 addr)
{
	if ((addr & 7) || addr < GBASE || addr - GBASE >= gm_size(m))
		return NULL;
	return &m->w[(addr - GBASE) / 8];
}

static int gm_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	struct gmem *m = ctx;
	ik_u64 *p = gm_slot(m, addr);

	m->reads++;
	if (m->read_budget && m->reads > m->read_budget)
		return -EIO;
	if (!p)
		return -EFAULT;
	*val = *p;
	return 0;
}

static int gm_cas64(void *ctx, ik_u64 addr, ik_u64 old, ik_u64 val)
{
	struct gmem *m = ctx;
	ik_u64 *p = gm_slot(m, addr);

	m->cas_calls++;
	if (m->cas_lose) {
		m->cas_lose--;
		return -EAGAIN;
	}
	if (m->cas_mode == CAS_ALWAYS_LOSE)
		return -EAGAIN;
	if (m->cas_mode == CAS_FAIL || !p)
		return -EIO;
	if (*p != old)
		return -EAGAIN;
	*p = val;
	return 0;
}

static void gm_init(struct gmem *m, ik_u64 pgsz)
{
	memset(m, 0, sizeof(*m));
	m->pgsz = pgsz;
	m->w = calloc(1, gm_size(m));
	ck_assert_ptr_nonnull(m->w);
}

static void gm_clear(struct gmem *m)
{
	memset(m->w, 0, gm_size(m));
	m->reads = 0;
	m->cas_calls = 0;
}

static ik_u64 gm_page(const struct gmem *m, unsigned i)
{
	return GBASE + i * m->pgsz;
}

static void gm_set(struct gmem *m, ik_u64 table, unsigned idx, ik_u64 e)
{
	ik_u64 *p = gm_slot(m, table + idx * 8ull);

	ck_assert_ptr_nonnull(p);
	*p = e;
}

/* ------------------------------------------------------------ entries */

/* A table entry at engine level lvl pointing to a table at addr (of level
 * lvl - 1), granting everything. */
static ik_u64 e_table(enum ik_pt_fmt f, ik_u64 addr, unsigned lvl)
{
	switch (f) {
	case IK_PT_LPAE_S1:
	case IK_PT_LPAE_S2:
		return addr | IK_LPAE_PTE_TYPE_TABLE;
	case IK_PT_VTD_SL:
		return addr | IK_VTD_SL_R | IK_VTD_SL_W;
	case IK_PT_VTD_FL:
	case IK_PT_AMD_V2:
		return addr | IK_VTD_FL_P | IK_VTD_FL_RW | IK_VTD_FL_US;
	case IK_PT_RISCV_S1:
	case IK_PT_RISCV_S2:
		return IK_RISCV_PTE_PPN(addr) | IK_RISCV_PTE_V;
	case IK_PT_AMD_V1:
		return addr | IK_AMD_PTE_PR | IK_AMD_PTE_IR | IK_AMD_PTE_IW | IK_AMD_PTE_NL(lvl);
	default:
		ck_abort_msg("format %d has no test encoder", (int)f);
		return 0;
	}
}

/* A read/write leaf at engine level lvl for output address oa. */
static ik_u64 e_leaf(enum ik_pt_fmt f, ik_u64 oa, unsigned lvl)
{
	switch (f) {
	case IK_PT_LPAE_S1:
		return oa | IK_LPAE_PTE_AF | IK_LPAE_PTE_AP_UNPRIV |
		       (lvl ? IK_LPAE_PTE_TYPE_BLOCK : IK_LPAE_PTE_TYPE_PAGE);
	case IK_PT_LPAE_S2:
		return oa | IK_LPAE_PTE_AF | IK_LPAE_PTE_S2AP_READ | IK_LPAE_PTE_S2AP_WRITE |
		       (lvl ? IK_LPAE_PTE_TYPE_BLOCK : IK_LPAE_PTE_TYPE_PAGE);
	case IK_PT_VTD_SL:
		return oa | IK_VTD_SL_R | IK_VTD_SL_W | (lvl ? IK_VTD_SL_PS : 0);
	case IK_PT_VTD_FL:
	case IK_PT_AMD_V2:
		return oa | IK_VTD_FL_P | IK_VTD_FL_RW | IK_VTD_FL_US | (lvl ? IK_VTD_FL_PS : 0);
	case IK_PT_RISCV_S1:
	case IK_PT_RISCV_S2:
		return IK_RISCV_PTE_PPN(oa) | IK_RISCV_PTE_V | IK_RISCV_PTE_R | IK_RISCV_PTE_W |
		       IK_RISCV_PTE_A | IK_RISCV_PTE_D | IK_RISCV_PTE_U;
	case IK_PT_AMD_V1:
		return oa | IK_AMD_PTE_PR | IK_AMD_PTE_IR | IK_AMD_PTE_IW;
	default:
		ck_abort_msg("format %d has no test encoder", (int)f);
		return 0;
	}
}

static unsigned top(const struct ik_pt_walker *w)
{
	return w->geom.nlevels - 1u;
}

static ik_u64 esize(const struct ik_pt_walker *w, unsigned l)
{
	return 1ull << (w->geom.lg2_granule + l * w->geom.bits);
}

static unsigned entries(const struct ik_pt_walker *w, unsigned l)
{
	return 1u << (l == top(w) ? w->geom.top_bits : w->geom.bits);
}

/* ------------------------------------------------------------ configs */

/* Every format built in, with each granule, without and with all its
 * fmt_flags, at its widest accepted ias and the given oas (0: the
 * narrowest); calls fn for each config the walker accepts.  Returns how
 * many. */
struct wcfg {
	struct ik_pgtable_cfg cfg;
	struct ik_pt_fmt_info info;
};

typedef void (*wcfg_fn)(const struct wcfg *c, void *arg);

static unsigned for_each_config(wcfg_fn fn, void *arg)
{
	unsigned f, gi, fl, n = 0;

	for (f = 1; f <= ik_pt_fmt_count(); f++) {
		struct wcfg c;

		if (ik_pt_fmt_get_info((enum ik_pt_fmt)f, &c.info))
			continue;
		for (gi = 0; gi < IK_PT_FMT_GRANULES && c.info.granules[gi].size; gi++) {
			for (fl = 0; fl < 2; fl++) {
				int ias, oas, done = 0;

				if (fl && !c.info.fmt_flags)
					continue;
				for (ias = 63; ias >= 32 && !done; ias--) {
					for (oas = 32; oas < 64 && !done; oas++) {
						struct ik_pt_walker w;

						if (!(c.info.ias_widths & (1ull << ias)) ||
						    !(c.info.oas_widths & (1ull << oas)))
							continue;
						memset(&c.cfg, 0, sizeof(c.cfg));
						c.cfg.fmt = (enum ik_pt_fmt)f;
						c.cfg.ias = (ik_u32)ias;
						c.cfg.oas = (ik_u32)oas;
						c.cfg.pgsize_bitmap = c.info.granules[gi].leaf_sizes;
						c.cfg.fmt_flags = fl ? c.info.fmt_flags : 0;
						c.cfg.coherent = true;
						if (ik_pt_walker_init(&w, &c.cfg, GBASE))
							continue;
						fn(&c, arg);
						n++;
						done = 1;
					}
				}
			}
		}
	}
	return n;
}

/* ------------------------------------------------------------ dump helpers */

#define MAXR 64
struct dump_log {
	unsigned n;
	unsigned stop_after;	/* 0: never stop */
	struct ik_pt_range r[MAXR];
};

static int log_cb(void *ctx, const struct ik_pt_range *r)
{
	struct dump_log *d = ctx;

	if (d->n < MAXR)
		d->r[d->n] = *r;
	d->n++;
	return d->stop_after && d->n >= d->stop_after ? 42 : 0;
}

/* ------------------------------------------------------------ oas */

struct oas_stats {
	unsigned big[16];	/* per format: leaves larger than 2^oas tested */
	unsigned leaves[16];	/* per format: leaf levels tested */
};

/* Chain root -> ... -> level L, leaf at index 0 of level L for `oa`. */
static void build_chain(struct gmem *m, const struct ik_pt_walker *w, unsigned L, ik_u64 leaf)
{
	unsigned l, p = 0;

	gm_clear(m);
	for (l = top(w); l > L; l--, p++)
		gm_set(m, gm_page(m, p), 0, e_table(w->geom.fmt, gm_page(m, p + 1), l));
	gm_set(m, gm_page(m, p), 0, leaf);
}

static void oas_one(const struct wcfg *c, void *arg)
{
	struct oas_stats *s = arg;
	struct ik_pt_walker w;
	struct ik_pt_mem mem;
	struct gmem m;
	ik_u64 lim = 1ull << c->cfg.oas;
	unsigned L;

	ck_assert_int_eq(ik_pt_walker_init(&w, &c->cfg, GBASE), 0);
	gm_init(&m, 1ull << w.geom.lg2_granule);
	mem.read64 = gm_read64;
	mem.cas64 = NULL;
	mem.ctx = &m;
	for (L = 0; L <= top(&w); L++) {
		enum ik_pt_fmt f = c->cfg.fmt;
		struct ik_pt_walk_result r;
		struct dump_log d;
		ik_u64 pg = esize(&w, L), base;

		build_chain(&m, &w, L, e_leaf(f, 0, L));
		ck_assert_int_eq(ik_pt_walk(&w, &mem, 0, 0, &r), 0);
		if (r.fault != IK_PT_FAULT_NONE)
			continue;	/* no leaf at this level in this config */
		ck_assert_uint_eq(r.level, L);
		ck_assert_uint_eq(r.pgsize, pg);
		s->leaves[f]++;
		if (pg > lim) {
			/* The leaf starts at 0 (inside oas) and ends beyond it. */
			s->big[f]++;
			ck_assert_int_eq(ik_pt_walk(&w, &mem, lim - 1, IK_ACCESS_READ, &r), 0);
			ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
			ck_assert_uint_eq(r.oa, lim - 1);
			ck_assert_int_eq(ik_pt_walk(&w, &mem, lim, IK_ACCESS_READ, &r), 0);
			ck_assert_msg(r.fault == IK_PT_FAULT_ADDR_SIZE,
				      "%s oas %u level %u: iova 2^oas -> fault %d oa %#llx",
				      c->info.name, c->cfg.oas, L, (int)r.fault,
				      (unsigned long long)r.oa);
			ck_assert_int_eq(ik_pt_walk(&w, &mem, pg - 1, 0, &r), 0);
			ck_assert_int_eq(r.fault, IK_PT_FAULT_ADDR_SIZE);
			memset(&d, 0, sizeof(d));
			ck_assert_int_eq(ik_pt_walker_dump(&w, &mem, 0, pg, log_cb, &d), 0);
			ck_assert_uint_eq(d.n, 1);
			ck_assert_uint_eq(d.r[0].iova, 0);
			ck_assert_uint_eq(d.r[0].oa, 0);
			ck_assert_msg(d.r[0].size == lim, "%s level %u: dump size %#llx, oas %u",
				      c->info.name, L, (unsigned long long)d.r[0].size, c->cfg.oas);
			/* From the middle: the range still ends at 2^oas. */
			memset(&d, 0, sizeof(d));
			ck_assert_int_eq(ik_pt_walker_dump(&w, &mem, lim / 2, pg - lim / 2, log_cb, &d),
					 0);
			ck_assert_uint_eq(d.n, 1);
			ck_assert_uint_eq(d.r[0].oa, lim / 2);
			ck_assert_uint_eq(d.r[0].size, lim / 2);
			continue;
		}
		/* The highest leaf below 2^oas: all of it translates. */
		base = lim - pg;
		build_chain(&m, &w, L, e_leaf(f, base, L));
		ck_assert_int_eq(ik_pt_walk(&w, &mem, pg - 1, IK_ACCESS_READ, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
		ck_assert_uint_eq(r.oa, lim - 1);
		memset(&d, 0, sizeof(d));
		ck_assert_int_eq(ik_pt_walker_dump(&w, &mem, 0, pg, log_cb, &d), 0);
		ck_assert_uint_eq(d.n, 1);
		ck_assert_uint_eq(d.r[0].oa, base);
		ck_assert_uint_eq(d.r[0].size, pg);
		/* One leaf further: wholly beyond oas. */
		build_chain(&m, &w, L, e_leaf(f, lim, L));
		ck_assert_int_eq(ik_pt_walk(&w, &mem, 0, 0, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_ADDR_SIZE);
		memset(&d, 0, sizeof(d));
		ck_assert_int_eq(ik_pt_walker_dump(&w, &mem, 0, pg, log_cb, &d), 0);
		ck_assert_uint_eq(d.n, 0);
	}
	free(m.w);
}

START_TEST(walk_and_dump_check_the_final_output_address_against_oas)
{
	struct oas_stats s;
	unsigned f;

	memset(&s, 0, sizeof(s));
	ck_assert_uint_gt(for_each_config(oas_one, &s), 0);
	for (f = 1; f <= ik_pt_fmt_count() && f < 16; f++) {
		struct ik_pt_fmt_info info;

		if (ik_pt_fmt_get_info((enum ik_pt_fmt)f, &info))
			continue;
		ck_assert_msg(s.leaves[f] > 0, "%s: no leaf level tested", info.name);
	}
	/* The leaves larger than 2^32 that reached beyond oas: RISC-V 512G
	 * and 256T, AMD v1 level-4/5 pages, LPA2 level-0 blocks and 16K
	 * LPA2 level-1 blocks. */
	ck_assert_uint_gt(s.big[IK_PT_RISCV_S1], 0);
	ck_assert_uint_gt(s.big[IK_PT_RISCV_S2], 0);
	ck_assert_uint_gt(s.big[IK_PT_AMD_V1], 0);
	ck_assert_uint_gt(s.big[IK_PT_LPAE_S1], 0);
	ck_assert_uint_gt(s.big[IK_PT_LPAE_S2], 0);
}
END_TEST

/* ------------------------------------------------------------ dump cost */

/* One page whose every entry points to the page itself, dumped over the
 * whole input space.  Where the last level reads those entries as leaves
 * (LPAE pages, x86/VT-d PTEs), every IOVA maps to the page: fn is called
 * and stops the dump.  Where they fault (RISC-V: a pointer at level 0),
 * nothing is mapped and the dump must still end after a pass per level. */
static void selfref_one(const struct wcfg *c, void *arg)
{
	struct ik_pt_walker w;
	struct ik_pt_mem mem;
	struct gmem m;
	struct dump_log d;
	ik_u64 T = GBASE, space;
	unsigned i, l, n = 0;
	unsigned long bound;
	int ret;

	(void)arg;
	ck_assert_int_eq(ik_pt_walker_init(&w, &c->cfg, GBASE), 0);
	gm_init(&m, 1ull << w.geom.lg2_granule);
	if (w.geom.root_size > m.pgsz) {	/* a concatenated stage-2 root */
		free(m.w);
		return;
	}
	mem.read64 = gm_read64;
	mem.cas64 = gm_cas64;
	mem.ctx = &m;
	for (l = top(&w); l > 0; l--)
		n = entries(&w, l) > n ? entries(&w, l) : n;
	n = entries(&w, 0) > n ? entries(&w, 0) : n;
	for (i = 0; i < n && i * 8ull < m.pgsz; i++)
		gm_set(&m, T, i, e_table(c->cfg.fmt, T, 1));
	/* A reads budget, far above what the dump may take, so that a walker
	 * that does not bound its work fails here instead of running for
	 * hours. */
	m.read_budget = 1000000;
	memset(&d, 0, sizeof(d));
	d.stop_after = 200;
	space = 1ull << c->cfg.ias;
	ret = ik_pt_walker_dump(&w, &mem, 0, space, log_cb, &d);
	/* Each level's page is read in full at most once while it is found
	 * empty, plus once per reported range for the path to it. */
	bound = (unsigned long)n * w.geom.nlevels + (unsigned long)(d.n + 1) * w.geom.nlevels;
	ck_assert_msg(ret == 0 || ret == 42, "%s ias %u: dump returned %d after %lu reads",
		      c->info.name, c->cfg.ias, ret, m.reads);
	ck_assert_msg(m.reads <= bound, "%s ias %u: %lu reads for %u ranges (bound %lu)",
		      c->info.name, c->cfg.ias, m.reads, d.n, bound);
	ck_assert_uint_eq(m.cas_calls, 0);	/* a dump never writes */
	if (ret == 42) {
		/* What was reported is what the hardware would do. */
		ck_assert_uint_eq(d.n, 200);
		for (i = 0; i < MAXR && i < d.n; i++) {
			struct ik_pt_walk_result r;

			ck_assert_int_eq(ik_pt_walk(&w, &mem, d.r[i].iova, 0, &r), 0);
			ck_assert(r.fault == IK_PT_FAULT_NONE || r.fault == IK_PT_FAULT_ACCESS_FLAG);
			ck_assert_uint_eq(r.oa, d.r[i].oa);
		}
	} else {
		ck_assert_uint_eq(d.n, 0);
	}
	free(m.w);
}

START_TEST(self_referencing_page_dump_is_bounded)
{
	ck_assert_uint_gt(for_each_config(selfref_one, NULL), 0);
}
END_TEST

/* The named cases of the issue, with exact read counts: Sv57 (nothing
 * mapped: 512 reads per level), and the formats whose self-reference maps
 * everything, stopped by fn. */
static void selfref_named(enum ik_pt_fmt f, ik_u32 ias, ik_u64 flags, unsigned long max_reads,
			  int want_ret)
{
	struct ik_pgtable_cfg cfg;
	struct ik_pt_walker w;
	struct ik_pt_mem mem = { gm_read64, NULL, NULL };
	struct gmem m;
	struct dump_log d;
	unsigned i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fmt = f;
	cfg.ias = ias;
	cfg.oas = 48;
	cfg.pgsize_bitmap = 0x1000;
	cfg.fmt_flags = flags;
	ck_assert_int_eq(ik_pt_walker_init(&w, &cfg, GBASE), 0);
	gm_init(&m, 0x1000);
	mem.ctx = &m;
	for (i = 0; i < 512; i++)
		gm_set(&m, GBASE, i, e_table(f, GBASE, 1));
	m.read_budget = 1000000;
	memset(&d, 0, sizeof(d));
	d.stop_after = 1000;
	ck_assert_int_eq(ik_pt_walker_dump(&w, &mem, 0, 1ull << ias, log_cb, &d), want_ret);
	ck_assert_msg(m.reads <= max_reads, "%s: %lu reads (at most %lu)", ik_pt_fmt_name(f),
		      m.reads, max_reads);
	free(m.w);
}

START_TEST(self_reference_named_cases)
{
	/* Sv57: a pointer at level 0 faults, so nothing is mapped; one pass
	 * over the page per level.  (The per-granule dump read 5 x 2^45.) */
	selfref_named(IK_PT_RISCV_S1, 56, 0, 5 * 512, 0);
	selfref_named(IK_PT_RISCV_S2, 59, 0, 5 * 512 + 2048, 0);
	/* 5-level VT-d and LPAE 48-bit: every IOVA maps to the page; fn
	 * stops after 1000 ranges, one read each plus the path down. */
	selfref_named(IK_PT_VTD_SL, 57, 0, 1000 + 2 * 5, 42);
	selfref_named(IK_PT_VTD_FL, 56, 0, 1000 + 2 * 5, 42);
	selfref_named(IK_PT_LPAE_S1, 48, 0, 1000 + 2 * 4, 42);
	selfref_named(IK_PT_LPAE_S2, 48, 0, 1000 + 2 * 4, 42);
}
END_TEST

/* A DAG: the same leaf table under every entry of its parent, and that
 * parent under every entry of the root.  Every path is a legitimate
 * mapping (all of them to the same 2 MiB), so the dump reports them all,
 * one range per level-1 entry, and fn can stop it whenever it likes. */
START_TEST(shared_leaf_table_dump_reports_every_path_and_stops)
{
	struct ik_pgtable_cfg cfg;
	struct ik_pt_walker w;
	struct ik_pt_mem mem = { gm_read64, NULL, NULL };
	struct gmem m;
	struct dump_log d;
	ik_u64 root = GBASE, l2 = GBASE + 0x1000, l1 = GBASE + 0x2000, l0 = GBASE + 0x3000;
	ik_u64 X = 0x40000000ull;
	unsigned i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fmt = IK_PT_VTD_SL;
	cfg.ias = 48;
	cfg.oas = 48;
	cfg.pgsize_bitmap = 0x1000;
	ck_assert_int_eq(ik_pt_walker_init(&w, &cfg, root), 0);
	gm_init(&m, 0x1000);
	mem.ctx = &m;
	gm_set(&m, root, 0, e_table(cfg.fmt, l2, 3));
	for (i = 0; i < 512; i++) {
		gm_set(&m, l2, i, e_table(cfg.fmt, l1, 2));
		gm_set(&m, l1, i, e_table(cfg.fmt, l0, 1));
		gm_set(&m, l0, i, e_leaf(cfg.fmt, X + i * 0x1000ull, 0));
	}
	memset(&d, 0, sizeof(d));
	d.stop_after = 50;
	ck_assert_int_eq(ik_pt_walker_dump(&w, &mem, 0, 1ull << 48, log_cb, &d), 42);
	ck_assert_uint_eq(d.n, 50);
	for (i = 0; i < MAXR && i < d.n; i++) {
		ck_assert_uint_eq(d.r[i].iova, i * 0x200000ull);
		ck_assert_uint_eq(d.r[i].oa, X);
		ck_assert_uint_eq(d.r[i].size, 0x200000ull);
		ck_assert_uint_eq(d.r[i].pgsize, 0x1000);
	}
	/* root, l2, l1 entries on the way, then 512 per leaf table, and the
	 * first entry of the 51st (which emits the 50th range). */
	ck_assert_uint_le(m.reads, 3 + 50 + 50 * 512 + 1);
	/* Not stopped: every path of [0, 1 GiB), 512 ranges. */
	m.reads = 0;
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(ik_pt_walker_dump(&w, &mem, 0, 1ull << 30, log_cb, &d), 0);
	ck_assert_uint_eq(d.n, 512);
	ck_assert_uint_eq(m.reads, 2 + 512 + 512 * 512);
	free(m.w);
}
END_TEST

/* Many distinct empty tables under one root: each is read once (they are
 * all remembered), and a table seen empty is not read again through
 * another entry. */
START_TEST(empty_shared_tables_are_read_once)
{
	struct ik_pgtable_cfg cfg;
	struct ik_pt_walker w;
	struct ik_pt_mem mem = { gm_read64, NULL, NULL };
	struct gmem m;
	struct dump_log d;
	ik_u64 root = GBASE, mid = GBASE + 0x1000, e0 = GBASE + 0x2000, e1 = GBASE + 0x3000;
	unsigned i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fmt = IK_PT_RISCV_S1;
	cfg.ias = 38;
	cfg.oas = 48;
	cfg.pgsize_bitmap = 0x1000;
	ck_assert_int_eq(ik_pt_walker_init(&w, &cfg, root), 0);
	gm_init(&m, 0x1000);
	mem.ctx = &m;
	/* root -> mid everywhere; mid -> e0 / e1 alternately; e0, e1 hold
	 * pointers at level 0 (faults) and zeros. */
	for (i = 0; i < 512; i++) {
		gm_set(&m, root, i, e_table(cfg.fmt, mid, 2));
		gm_set(&m, mid, i, e_table(cfg.fmt, (i & 1) ? e1 : e0, 1));
		if (i & 1)
			gm_set(&m, e0, i, e_table(cfg.fmt, e0, 1));
	}
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(ik_pt_walker_dump(&w, &mem, 0, 1ull << 38, log_cb, &d), 0);
	ck_assert_uint_eq(d.n, 0);
	/* the root's entries in [0, 2^38) (Sv39's lower half: 256), then mid,
	 * e0 and e1, 512 each, once. */
	ck_assert_uint_eq(m.reads, 256 + 3 * 512);
	free(m.w);
}
END_TEST

/* ------------------------------------------------------------ cas64 */

static void cas_setup(struct gmem *m, struct ik_pt_walker *w, enum ik_pt_fmt f, ik_u32 quirks)
{
	struct ik_pgtable_cfg cfg;
	unsigned l, p = 0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.fmt = f;
	cfg.ias = 48;
	cfg.oas = 48;
	cfg.pgsize_bitmap = 0x1000;
	cfg.quirks = quirks;
	if (f == IK_PT_RISCV_S1 || f == IK_PT_RISCV_S2)
		cfg.ias = f == IK_PT_RISCV_S1 ? 47 : 50;
	ck_assert_int_eq(ik_pt_walker_init(w, &cfg, GBASE), 0);
	gm_init(m, 0x1000);
	for (l = top(w); l > 0; l--, p++)
		gm_set(m, gm_page(m, p), 0, e_table(f, gm_page(m, p + 1), l));
	/* A clean, not yet accessed leaf: the walker must set A/D or AF. */
	switch (f) {
	case IK_PT_VTD_FL:
		gm_set(m, gm_page(m, p), 0, 0x5000 | IK_VTD_FL_P | IK_VTD_FL_RW | IK_VTD_FL_US);
		break;
	case IK_PT_RISCV_S1:
		gm_set(m, gm_page(m, p), 0, IK_RISCV_PTE_PPN(0x5000) | IK_RISCV_PTE_V |
			IK_RISCV_PTE_R | IK_RISCV_PTE_W | IK_RISCV_PTE_U);
		break;
	case IK_PT_LPAE_S1:
		/* writable-clean DBM page, access flag clear */
		gm_set(m, gm_page(m, p), 0, 0x5000 | IK_LPAE_PTE_TYPE_PAGE | IK_LPAE_PTE_AP_UNPRIV |
			IK_LPAE_PTE_DBM | IK_LPAE_PTE_AP_RDONLY);
		break;
	default:
		ck_abort_msg("no leaf for format %d", (int)f);
	}
}

static const struct {
	enum ik_pt_fmt f;
	ik_u32 quirks;
} cas_fmts[] = {
	{ IK_PT_VTD_FL, 0 },
	{ IK_PT_RISCV_S1, IK_PT_QUIRK_DIRTY },
	{ IK_PT_LPAE_S1, IK_PT_QUIRK_DIRTY },
};

START_TEST(cas_that_always_loses_ends_in_a_fault)
{
	struct ik_pt_walker w;
	struct ik_pt_mem mem = { gm_read64, gm_cas64, NULL };
	struct ik_pt_walk_result r;
	struct gmem m;

	cas_setup(&m, &w, cas_fmts[_i].f, cas_fmts[_i].quirks);
	mem.ctx = &m;
	m.cas_mode = CAS_ALWAYS_LOSE;
	ck_assert_int_eq(ik_pt_walk(&w, &mem, 0x123, IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_EXTERNAL);
	ck_assert_uint_eq(m.cas_calls, 1 + IK_PT_WALK_CAS_RETRIES);
	ck_assert_uint_eq(m.reads, (1ul + IK_PT_WALK_CAS_RETRIES) * w.geom.nlevels);
	/* An update that cannot be written at all: likewise. */
	m.cas_mode = CAS_FAIL;
	m.cas_calls = 0;
	ck_assert_int_eq(ik_pt_walk(&w, &mem, 0x123, IK_ACCESS_WRITE, &r), 0);
	ck_assert_int_eq(r.fault, IK_PT_FAULT_EXTERNAL);
	ck_assert_uint_eq(m.cas_calls, 1);
	free(m.w);
}
END_TEST

START_TEST(cas_that_loses_a_few_times_then_wins)
{
	unsigned lose[] = { 1, 5, IK_PT_WALK_CAS_RETRIES }, k;

	for (k = 0; k < sizeof(lose) / sizeof(lose[0]); k++) {
		struct ik_pt_walker w;
		struct ik_pt_mem mem = { gm_read64, gm_cas64, NULL };
		struct ik_pt_walk_result r;
		struct gmem m;
		ik_u64 before;

		cas_setup(&m, &w, cas_fmts[_i].f, cas_fmts[_i].quirks);
		mem.ctx = &m;
		m.cas_lose = lose[k];
		ck_assert_int_eq(ik_pt_walk(&w, &mem, 0x123, IK_ACCESS_WRITE, &r), 0);
		before = r.pte;
		ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
		ck_assert_uint_eq(r.oa, 0x5123);
		ck_assert(r.dirty);
		ck_assert_uint_eq(m.cas_calls, lose[k] + 1);
		/* The update landed: the entry in memory is the one reported. */
		ck_assert_uint_eq(*gm_slot(&m, r.pte_addr), before);
		/* Nothing left to update: no more cas. */
		m.cas_calls = 0;
		ck_assert_int_eq(ik_pt_walk(&w, &mem, 0x123, IK_ACCESS_WRITE, &r), 0);
		ck_assert_int_eq(r.fault, IK_PT_FAULT_NONE);
		ck_assert_uint_eq(m.cas_calls, 0);
		free(m.w);
	}
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("pgtable_walker");
	TCase *tc = tcase_create("walker");
	unsigned ncas = sizeof(cas_fmts) / sizeof(cas_fmts[0]);

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, walk_and_dump_check_the_final_output_address_against_oas);
	tcase_add_test(tc, self_referencing_page_dump_is_bounded);
	tcase_add_test(tc, self_reference_named_cases);
	tcase_add_test(tc, shared_leaf_table_dump_reports_every_path_and_stops);
	tcase_add_test(tc, empty_shared_tables_are_read_once);
	tcase_add_loop_test(tc, cas_that_always_loses_ends_in_a_fault, 0, (int)ncas);
	tcase_add_loop_test(tc, cas_that_loses_a_few_times_then_wins, 0, (int)ncas);
	suite_add_tcase(s, tc);
	return s;
}
