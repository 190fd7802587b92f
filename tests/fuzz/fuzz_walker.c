/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fuzz_walker - the hardware-view walker (ik_pt_walk, ik_pt_walker_dump in
 * include/iommukit/pgtable.h) on hostile memory: every format built in, at
 * any granule, flags, ias and oas the input picks, over a guest memory of
 * a few table pages whose every entry the input writes (raw values, values
 * shaped like pointers to the memory's own pages, whole pages of one value
 * - self-references - or of a run of leaves).  read64 fails outside the
 * memory; cas64 (the hardware's A/D and access-flag updates) succeeds,
 * fails, always loses, or loses n times, as the input says.
 *
 * Checks, after every operation:
 *   - no crash, no sanitizer report, no assertion;
 *   - a walk reads at most nlevels entries per pass and makes at most
 *     1 + IK_PT_WALK_CAS_RETRIES passes; a cas that always loses ends in
 *     IK_PT_FAULT_EXTERNAL after exactly that many cas64 calls; every
 *     output address a walk reports (fault NONE, PERMISSION, ACCESS_FLAG)
 *     lies below 2^oas, with a power-of-two pgsize;
 *   - a dump reports ranges in increasing, non-overlapping IOVA order inside
 *     the requested range, each with oa + size - 1 below 2^oas (computed
 *     without overflow), and terminates with read64 calls bounded by
 *         R = root_entries + (nlevels - 1) * E * (3 + P + L)
 *     where E = the most entries of a non-root table, P = the memory's
 *     pages (every table below the root is a granule-aligned page of the
 *     memory, and the walker remembers up to 8 empty tables per level, so
 *     with P <= 8 each is read in full at most once per level), and L
 *     bounds the leaves the dump added: sum over the reported ranges of
 *     size / granule + 2, plus 1 (the leaf that made fn stop it).  Each
 *     visit of a table below the root is a boundary visit (at most 2 per
 *     level), the first full visit of an empty table, or a visit that
 *     found a leaf (at most one per leaf and level), plus one cut short.
 *     (Checked when the dump returned 0 or fn's value, so that every leaf
 *     added is in a reported range, and when the memory is at most 8 pages:
 *     a concatenated stage-2 root can make it 16.);
 *   - ik_pt_walk (access 0, no cas) agrees with the dump: IOVAs sampled in
 *     every reported range translate (NONE or ACCESS_FLAG) to the same oa,
 *     prot and attr with pgsize >= the range's; IOVAs sampled in the holes
 *     of a completed dump do not translate, and a hole's walk never fails
 *     a read the dump did not.
 */
#include <iommukit/pgtable.h>
#include "fuzzlib.h"

#define GBASE 0x10000000ull	/* below 2^32, aligned to any root size */
#define MAX_PAGES 8		/* <= the walker's empty-table memory per level */
#define MAX_OPS 48
#define MAX_DUMP_RANGES 4096

enum cas_mode { CAS_NONE, CAS_OK, CAS_FAIL, CAS_ALWAYS_LOSE, CAS_LOSE_N };

struct wmem {
	ik_u64 pgsz, size;
	ik_u64 *w;
	unsigned long reads, cas_calls;
	enum cas_mode cas;
	unsigned lose;
};

static struct wmem M;
static struct ik_pt_walker W;
static ik_u64 OAS_LIM;	/* 2^oas (oas <= 63) */

static ik_u64 *slot(ik_u64 addr)
{
	if ((addr & 7) || addr < GBASE || addr - GBASE >= M.size)
		return NULL;
	return &M.w[(addr - GBASE) / 8];
}

static int w_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	ik_u64 *p = slot(addr);

	(void)ctx;
	M.reads++;
	if (!p)
		return -EFAULT;
	*val = *p;
	return 0;
}

static int w_cas64(void *ctx, ik_u64 addr, ik_u64 old, ik_u64 val)
{
	ik_u64 *p = slot(addr);

	(void)ctx;
	M.cas_calls++;
	switch (M.cas) {
	case CAS_FAIL:
		return -EIO;
	case CAS_ALWAYS_LOSE:
		return -EAGAIN;
	case CAS_LOSE_N:
		if (M.lose) {
			M.lose--;
			return -EAGAIN;
		}
		break;
	default:
		break;
	}
	if (!p)
		return -EFAULT;
	if (*p != old)
		return -EAGAIN;
	*p = val;
	return 0;
}

static bool is_pow2(ik_u64 v)
{
	return v && !(v & (v - 1));
}

/* ---- config ---- */

static bool pick_config(struct fz *f)
{
	struct ik_pt_fmt_info info;
	struct ik_pgtable_cfg cfg;
	unsigned nfmt = ik_pt_fmt_count(), ngran = 0, i, want, n;
	ik_u64 widths;

	if (ik_pt_fmt_get_info((enum ik_pt_fmt)(1 + fz_below(f, nfmt)), &info))
		return false;
	while (ngran < IK_PT_FMT_GRANULES && info.granules[ngran].size)
		ngran++;
	memset(&cfg, 0, sizeof(cfg));
	cfg.fmt = info.fmt;
	i = (unsigned)fz_below(f, ngran);
	cfg.pgsize_bitmap = info.granules[i].leaf_sizes;
	cfg.fmt_flags = fz_u64(f) & info.fmt_flags;
	cfg.quirks = fz_u32(f) & info.quirks;
	cfg.coherent = true;
	/* ias, oas: the n-th accepted width (n from the input). */
	widths = info.ias_widths;
	want = (unsigned)fz_below(f, (ik_u64)__builtin_popcountll(widths));
	for (i = 0, n = 0; i < 64; i++)
		if ((widths >> i & 1) && n++ == want)
			cfg.ias = i;
	widths = info.oas_widths;
	want = (unsigned)fz_below(f, (ik_u64)__builtin_popcountll(widths));
	for (i = 0, n = 0; i < 64; i++)
		if ((widths >> i & 1) && n++ == want)
			cfg.oas = i;
	if (ik_pt_walker_init(&W, &cfg, GBASE))
		return false;	/* a combination the format refuses */
	FZ_CHECK(W.geom.oas < 64, "oas %u", W.geom.oas);
	OAS_LIM = 1ull << W.geom.oas;
	M.pgsz = 1ull << W.geom.lg2_granule;
	n = 1 + (unsigned)fz_below(f, MAX_PAGES);
	M.size = M.pgsz * n;
	if (M.size < W.geom.root_size)
		M.size = W.geom.root_size;	/* a concatenated root: more pages */
	FZ_TRACE("config %s ias %u oas %u granule %#llx flags %#llx quirks %#x pages %llu",
		 info.name, cfg.ias, cfg.oas, (unsigned long long)M.pgsz,
		 (unsigned long long)cfg.fmt_flags, cfg.quirks,
		 (unsigned long long)(M.size / M.pgsz));
	return true;
}

static unsigned npages(void)
{
	return (unsigned)(M.size / M.pgsz);
}

/* A value as a guest writes it: raw, or shaped like an entry pointing into
 * the memory (address field at bit 12, or as a RISC-V PPN at bit 10), with
 * the input's low and high bits. */
static ik_u64 entry_value(struct fz *f)
{
	ik_u64 page = GBASE + fz_below(f, npages()) * M.pgsz;

	switch (fz_u8(f) % 4) {
	case 0:
		return fz_edgy(f);
	case 1:
		return page | (fz_u16(f) & 0xfff) | ((ik_u64)fz_u16(f) << 48);
	case 2:
		return ((page >> 12) << 10) | (fz_u16(f) & 0x3ff) | ((ik_u64)fz_u8(f) << 56);
	default:
		/* a leaf-like value anywhere below 2^52 */
		return (fz_u64(f) & 0x000ffffffffff000ull) | (fz_u16(f) & 0xfff) |
		       ((ik_u64)fz_u16(f) << 48);
	}
}

static void op_write(struct fz *f)
{
	ik_u64 i = fz_below(f, M.size / 8);

	M.w[i] = entry_value(f);
	FZ_TRACE("write [%#llx] = %#llx", (unsigned long long)(GBASE + i * 8),
		 (unsigned long long)M.w[i]);
}

/* A whole page of one value, or of a run (value + k * stride): a page that
 * points to itself, a table shared by all its parent's entries, a run of
 * contiguous leaves. */
static void op_fill(struct fz *f)
{
	ik_u64 p = fz_below(f, npages()), v = entry_value(f), k;
	ik_u64 stride = fz_bool(f) ? (1ull << (12 + fz_below(f, 40))) : 0;

	for (k = 0; k < M.pgsz / 8; k++)
		M.w[p * M.pgsz / 8 + k] = v + k * stride;
	FZ_TRACE("fill page %llu with %#llx stride %#llx", (unsigned long long)p,
		 (unsigned long long)v, (unsigned long long)stride);
}

static ik_u64 pick_iova(struct fz *f)
{
	ik_u64 lim = W.geom.ias >= 64 ? ~0ull : (1ull << W.geom.ias);

	switch (fz_u8(f) % 4) {
	case 0:
		return fz_edgy(f);	/* beyond ias too */
	case 1:
		return fz_u64(f) & (lim - 1) & ~(M.pgsz - 1);
	default:
		return fz_u64(f) & (lim - 1);
	}
}

/* ---- walk ---- */

static void op_walk(struct fz *f)
{
	struct ik_pt_mem mem = { w_read64, w_cas64, NULL };
	struct ik_pt_walk_result r;
	ik_u64 iova = pick_iova(f);
	unsigned access = fz_u8(f) & (IK_ACCESS_READ | IK_ACCESS_WRITE | IK_ACCESS_EXEC |
				      IK_ACCESS_PRIV);
	unsigned passes_max = 1 + IK_PT_WALK_CAS_RETRIES;
	int ret;

	M.cas = (enum cas_mode)fz_below(f, 5);
	M.lose = (unsigned)fz_below(f, IK_PT_WALK_CAS_RETRIES + 4);
	if (M.cas == CAS_NONE)
		mem.cas64 = NULL;
	M.reads = M.cas_calls = 0;
	ret = ik_pt_walk(&W, &mem, iova, access, &r);
	FZ_TRACE("walk %#llx access %#x cas %d/%u -> %d fault %d oa %#llx pgsize %#llx",
		 (unsigned long long)iova, access, (int)M.cas, M.lose, ret, (int)r.fault,
		 (unsigned long long)r.oa, (unsigned long long)r.pgsize);
	FZ_CHECK(ret == 0, "walk returned %d", ret);
	FZ_CHECK(M.reads <= (unsigned long)W.geom.nlevels * passes_max, "%lu reads", M.reads);
	FZ_CHECK(M.cas_calls <= passes_max, "%lu cas calls", M.cas_calls);
	FZ_CHECK(M.reads <= (unsigned long)W.geom.nlevels * (M.cas_calls + 1), "%lu reads, %lu cas",
		 M.reads, M.cas_calls);
	if (M.cas == CAS_ALWAYS_LOSE && M.cas_calls)
		FZ_CHECK(r.fault == IK_PT_FAULT_EXTERNAL && M.cas_calls == passes_max,
			 "always-losing cas: fault %d after %lu calls", (int)r.fault, M.cas_calls);
	if (M.cas == CAS_FAIL && M.cas_calls)
		FZ_CHECK(r.fault == IK_PT_FAULT_EXTERNAL && M.cas_calls == 1, "failing cas: fault %d",
			 (int)r.fault);
	if (r.fault == IK_PT_FAULT_NONE || r.fault == IK_PT_FAULT_PERMISSION ||
	    r.fault == IK_PT_FAULT_ACCESS_FLAG) {
		FZ_CHECK(r.oa < OAS_LIM, "oa %#llx beyond oas %u", (unsigned long long)r.oa,
			 W.geom.oas);
		FZ_CHECK(is_pow2(r.pgsize) && r.pgsize >= M.pgsz, "pgsize %#llx",
			 (unsigned long long)r.pgsize);
		FZ_CHECK(r.level < W.geom.nlevels, "level %u", r.level);
	}
	if (r.fault != IK_PT_FAULT_NONE || M.cas != CAS_OK || !access)
		return;
	/* A successful update is in memory: a second identical walk needs
	 * none. */
	M.cas_calls = 0;
	FZ_CHECK(ik_pt_walk(&W, &mem, iova, access, &r) == 0, "rewalk");
	FZ_CHECK(r.fault == IK_PT_FAULT_NONE && M.cas_calls == 0,
		 "rewalk after the update: fault %d, %lu cas", (int)r.fault, M.cas_calls);
}

/* ---- dump ---- */

struct dlog {
	ik_u64 start, end;	/* the request */
	unsigned n, stop_after;
	ik_u64 leaves_bound;
	struct ik_pt_range r[MAX_DUMP_RANGES];
};

static struct dlog D;

static int d_cb(void *ctx, const struct ik_pt_range *r)
{
	struct dlog *d = ctx;

	FZ_CHECK(d->n < MAX_DUMP_RANGES, "too many ranges");
	FZ_CHECK(r->size > 0 && r->iova >= d->start && r->iova - d->start < d->end - d->start &&
		 r->size <= d->end - r->iova, "range [%#llx +%#llx) outside [%#llx, %#llx)",
		 (unsigned long long)r->iova, (unsigned long long)r->size,
		 (unsigned long long)d->start, (unsigned long long)d->end);
	if (d->n)
		FZ_CHECK(r->iova >= d->r[d->n - 1].iova + d->r[d->n - 1].size,
			 "ranges out of order or overlapping");
	FZ_CHECK(r->oa < OAS_LIM && r->size - 1 < OAS_LIM - r->oa,
		 "range oa %#llx + %#llx beyond oas %u", (unsigned long long)r->oa,
		 (unsigned long long)r->size, W.geom.oas);
	FZ_CHECK(is_pow2(r->pgsize) && r->pgsize >= M.pgsz, "pgsize %#llx",
		 (unsigned long long)r->pgsize);
	d->r[d->n++] = *r;
	d->leaves_bound += r->size / M.pgsz + 2;
	return d->n >= d->stop_after ? 7 : 0;
}

/* Walk iova (access 0, no cas): does it translate as range r says (r
 * NULL: not at all)? */
static void check_walk_agrees(ik_u64 iova, const struct ik_pt_range *r)
{
	struct ik_pt_mem mem = { w_read64, NULL, NULL };
	struct ik_pt_walk_result w;

	FZ_CHECK(ik_pt_walk(&W, &mem, iova, 0, &w) == 0, "walk");
	if (!r) {
		FZ_CHECK(w.fault != IK_PT_FAULT_NONE && w.fault != IK_PT_FAULT_ACCESS_FLAG &&
			 w.fault != IK_PT_FAULT_EXTERNAL,
			 "iova %#llx in a hole of the dump: fault %d oa %#llx",
			 (unsigned long long)iova, (int)w.fault, (unsigned long long)w.oa);
		return;
	}
	FZ_CHECK(w.fault == IK_PT_FAULT_NONE || w.fault == IK_PT_FAULT_ACCESS_FLAG,
		 "iova %#llx dumped in [%#llx +%#llx) -> %#llx: walk fault %d",
		 (unsigned long long)iova, (unsigned long long)r->iova,
		 (unsigned long long)r->size, (unsigned long long)r->oa, (int)w.fault);
	FZ_CHECK(w.oa == r->oa + (iova - r->iova) && w.prot == r->prot && w.attr == r->attr &&
		 w.pgsize >= r->pgsize,
		 "iova %#llx: walk oa %#llx prot %#x attr %#llx pgsize %#llx, dump oa %#llx "
		 "prot %#x attr %#llx pgsize %#llx", (unsigned long long)iova,
		 (unsigned long long)w.oa, w.prot, (unsigned long long)w.attr,
		 (unsigned long long)w.pgsize, (unsigned long long)(r->oa + (iova - r->iova)),
		 r->prot, (unsigned long long)r->attr, (unsigned long long)r->pgsize);
}

static void check_hole(struct fz *f, ik_u64 lo, ik_u64 hi)
{
	if (lo >= hi)
		return;
	check_walk_agrees(lo, NULL);
	check_walk_agrees(hi - 1, NULL);
	check_walk_agrees(lo + fz_below(f, hi - lo), NULL);
}

static void op_dump(struct fz *f)
{
	struct ik_pt_mem mem = { w_read64, w_cas64, NULL };
	ik_u64 lim = 1ull << W.geom.ias, start, size, E, Eroot, bound;
	unsigned i;
	int ret;

	/* An exhausted input dumps the whole space, up to the most ranges. */
	start = fz_bool(f) ? fz_u64(f) & (lim - 1) : 0;
	size = fz_bool(f) ? 1 + fz_below(f, lim - start) : lim - start;
	memset(&D, 0, offsetof(struct dlog, r));
	D.start = start;
	D.end = start + size;
	D.stop_after = MAX_DUMP_RANGES - (unsigned)fz_below(f, MAX_DUMP_RANGES);
	M.reads = M.cas_calls = 0;
	ret = ik_pt_walker_dump(&W, &mem, start, size, d_cb, &D);
	FZ_TRACE("dump [%#llx +%#llx) stop after %u -> %d, %u ranges, %lu reads",
		 (unsigned long long)start, (unsigned long long)size, D.stop_after, ret, D.n,
		 M.reads);
	FZ_CHECK(ret == 0 || ret == -EIO || (ret == 7 && D.n == D.stop_after), "dump returned %d",
		 ret);
	FZ_CHECK(M.cas_calls == 0, "a dump wrote");
	/* The read bound (see the top of the file). */
	E = 1ull << W.geom.bits;
	Eroot = W.geom.root_size / 8;
	bound = Eroot + (ik_u64)(W.geom.nlevels - 1) * E * (3 + npages() + D.leaves_bound + 1);
	if (ret != -EIO && npages() <= MAX_PAGES)
		FZ_CHECK(M.reads <= bound, "dump: %lu reads, bound %llu (%u ranges)", M.reads,
			 (unsigned long long)bound, D.n);
	/* The walker agrees, range by range, and in the holes between. */
	for (i = 0; i < D.n; i++) {
		const struct ik_pt_range *r = &D.r[i];

		check_walk_agrees(r->iova, r);
		check_walk_agrees(r->iova + r->size - 1, r);
		check_walk_agrees(r->iova + fz_below(f, r->size), r);
		if (ret != -EIO)
			check_hole(f, i ? D.r[i - 1].iova + D.r[i - 1].size : start, r->iova);
	}
	if (ret == 0)
		check_hole(f, D.n ? D.r[D.n - 1].iova + D.r[D.n - 1].size : start, D.end);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f;
	unsigned ops = 0;

	fz_init(&f, data, size);
	if (!pick_config(&f))
		return 0;
	M.w = calloc(1, M.size);
	FZ_CHECK(M.w != NULL, "calloc");
	while (fz_left(&f) && ops++ < MAX_OPS) {
		switch (fz_u8(&f) % 6) {
		case 0:
		case 1:
			op_write(&f);
			break;
		case 2:
			op_fill(&f);
			break;
		case 3:
		case 4:
			op_walk(&f);
			break;
		default:
			op_dump(&f);
			break;
		}
	}
	/* Every input ends with a whole-space dump. */
	op_dump(&f);
	free(M.w);
	M.w = NULL;
	return 0;
}
