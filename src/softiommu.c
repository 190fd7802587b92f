/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The software IOMMU: IOTLB, walk cache, command execution, fault and stale
 * report queues, device reads and writes.  See <iommukit/softiommu.h>.
 *
 * Locking: one lock (s->lock) protects every cache, ring and counter.  A walk
 * runs outside it; s->gen (bumped under the lock by every invalidation) tells
 * a walk that finished after an invalidation not to cache its result, since
 * it may have read entries the invalidation was meant to retire.
 */
#include <iommukit/softiommu.h>
#include <iommukit/atomic.h>
#include <iommukit/lock.h>
#include <iommukit/pgtable.h>

struct sio_tlbe {
	ik_u64 in;  /* iova >> lg2 */
	ik_u64 out; /* oa >> lg2 */
	ik_u64 lru;
	ik_u32 tag;
	ik_u8 lg2;
	ik_u8 prot;
	ik_u8 valid;
};

struct sio_wce {
	ik_u64 region; /* iova >> lg2 */
	ik_u64 table;
	ik_u64 lru;
	ik_u32 tag;
	ik_u32 lg2;
	bool valid;
};

struct sio_stream {
	struct ik_softiommu_walker w; /* custom walker, when !pt */
	struct ik_pt_walker ptw;      /* page-table root, when pt */
	struct ik_pt_mem mem;
	ik_u32 tag;
	bool attached;
	bool pt;
};

struct ik_softiommu {
	struct ik_softiommu_config cfg;
	ik_lock_t lock;
	ik_u32 flags;
	ik_u32 sets, ways;
	struct sio_tlbe *tlb;
	ik_u64 sizes; /* bit k: entries of block size 2^k may be present */
	struct sio_wce *wc;
	struct sio_stream *streams;
	struct ik_softiommu_fault *faults;
	ik_u64 fault_head, fault_tail;
	struct ik_softiommu_stale *stale;
	ik_u64 stale_head, stale_tail;
	struct ik_softiommu_event *hist;
	ik_u64 seq; /* events recorded so far */
	ik_u64 gen; /* invalidations so far */
	ik_u64 clock; /* LRU clock */
	ik_u64 bytes; /* stats.bytes, kept apart: updated without the lock */
	struct ik_softiommu_stats st;
};

IK_API void ik_softiommu_config_init(struct ik_softiommu_config *cfg)
{
	IK_ASSERT(cfg);
	if (!cfg)	/* release builds: still a harmless no-op */
		return;
	IK_ENV_MEMSET(cfg, 0, sizeof(*cfg));
	cfg->iotlb_entries = 512;
	cfg->iotlb_ways = 8;
	cfg->walk_cache_entries = 32;
	cfg->max_streams = 64;
	cfg->fault_depth = 256;
	cfg->stale_depth = 16;
	cfg->history_depth = 256;
}

static bool pow2_in(ik_u32 v, ik_u32 lo, ik_u32 hi)
{
	return IK_IS_POW2(v) && v >= lo && v <= hi;
}

static void sio_free_arrays(struct ik_softiommu *s)
{
	const struct ik_allocator *a = s->cfg.allocator;

	ik_free(a, s->tlb, (ik_size)s->cfg.iotlb_entries * sizeof(*s->tlb));
	ik_free(a, s->wc, (ik_size)s->cfg.walk_cache_entries * sizeof(*s->wc));
	ik_free(a, s->streams, (ik_size)s->cfg.max_streams * sizeof(*s->streams));
	ik_free(a, s->faults, (ik_size)s->cfg.fault_depth * sizeof(*s->faults));
	ik_free(a, s->stale, (ik_size)s->cfg.stale_depth * sizeof(*s->stale));
	ik_free(a, s->hist, (ik_size)s->cfg.history_depth * sizeof(*s->hist));
}

static void *sio_zalloc(const struct ik_allocator *a, ik_size n, bool *failed)
{
	void *p;

	if (n == 0 || *failed)
		return NULL;
	p = ik_alloc(a, n, 64);
	if (!p)
		*failed = true;
	else
		IK_ENV_MEMSET(p, 0, n);
	return p;
}

IK_API int ik_softiommu_create(const struct ik_softiommu_config *cfg, struct ik_softiommu **out)
{
	struct ik_softiommu *s;
	const struct ik_allocator *a;
	bool failed = false;

	if (!cfg || !out)
		return -EINVAL;
	if (cfg->iotlb_entries &&
	    (!pow2_in(cfg->iotlb_entries, 1, 65536) || !IK_IS_POW2(cfg->iotlb_ways) ||
	     cfg->iotlb_ways > cfg->iotlb_entries))
		return -EINVAL;
	if (cfg->walk_cache_entries > 256 || cfg->max_streams < 1 || cfg->max_streams > 65536 ||
	    !pow2_in(cfg->fault_depth, 1, 65536) || !pow2_in(cfg->stale_depth, 1, 4096) ||
	    !pow2_in(cfg->history_depth, 16, 65536) || (cfg->flags & ~IK_SOFTIOMMU_CHECK))
		return -EINVAL;
	a = cfg->allocator;
	s = (struct ik_softiommu *)ik_alloc(a, sizeof(*s), 64);
	if (!s)
		return -ENOMEM;
	IK_ENV_MEMSET(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->flags = cfg->flags;
	s->ways = cfg->iotlb_entries ? cfg->iotlb_ways : 0;
	s->sets = cfg->iotlb_entries ? cfg->iotlb_entries / cfg->iotlb_ways : 0;
	s->tlb = (struct sio_tlbe *)sio_zalloc(a, (ik_size)cfg->iotlb_entries * sizeof(*s->tlb), &failed);
	s->wc = (struct sio_wce *)sio_zalloc(a, (ik_size)cfg->walk_cache_entries * sizeof(*s->wc), &failed);
	s->streams = (struct sio_stream *)sio_zalloc(a, (ik_size)cfg->max_streams * sizeof(*s->streams),
						     &failed);
	s->faults = (struct ik_softiommu_fault *)sio_zalloc(
		a, (ik_size)cfg->fault_depth * sizeof(*s->faults), &failed);
	s->stale = (struct ik_softiommu_stale *)sio_zalloc(
		a, (ik_size)cfg->stale_depth * sizeof(*s->stale), &failed);
	s->hist = (struct ik_softiommu_event *)sio_zalloc(
		a, (ik_size)cfg->history_depth * sizeof(*s->hist), &failed);
	if (failed) {
		sio_free_arrays(s);
		ik_free(a, s, sizeof(*s));
		return -ENOMEM;
	}
	ik_lock_init(&s->lock);
	*out = s;
	return 0;
}

IK_API void ik_softiommu_destroy(struct ik_softiommu *s)
{
	if (!s)
		return;
	ik_lock_destroy(&s->lock);
	sio_free_arrays(s);
	ik_free(s->cfg.allocator, s, sizeof(*s));
}

IK_API int ik_softiommu_attach(struct ik_softiommu *s, ik_u32 sid, ik_u32 tag,
			       const struct ik_softiommu_walker *w)
{
	if (!s || !w || !w->walk || sid >= s->cfg.max_streams)
		return -EINVAL;
	ik_lock(&s->lock);
	IK_ENV_MEMSET(&s->streams[sid], 0, sizeof(s->streams[sid]));
	s->streams[sid].w = *w;
	s->streams[sid].tag = tag;
	s->streams[sid].attached = true;
	ik_unlock(&s->lock);
	return 0;
}

/* Table memory at host addresses equal to IOMMU addresses. */
static int sio_read_identity(void *ctx, ik_u64 addr, ik_u64 *val)
{
	(void)ctx;
	if ((ik_u64)(ik_uptr)addr != addr || (addr & 7) || !addr)
		return -EFAULT;
	/* Relaxed: the entry is read once, as a walker would; the writer's
	 * ordering (entry contents before the entry that points to them) is
	 * the page-table engine's, and x86/ARM keep dependent loads ordered. */
	*val = ik_load_relaxed((const ik_u64 *)(ik_uptr)addr);
	return 0;
}

IK_API int ik_softiommu_attach_pt(struct ik_softiommu *s, ik_u32 sid, ik_u32 tag,
				  const struct ik_pt_walker *w, const struct ik_pt_mem *mem)
{
	struct sio_stream st;

	if (!s || !w || sid >= s->cfg.max_streams || (mem && !mem->read64) ||
	    !ik_pt_fmt_name(w->geom.fmt) || w->geom.nlevels < 1 ||
	    w->geom.nlevels > IK_SOFTIOMMU_MAX_LEVELS)
		return -EINVAL;
	IK_ENV_MEMSET(&st, 0, sizeof(st));
	st.ptw = *w;
	if (mem) {
		st.mem = *mem;
	} else {
		st.mem.read64 = sio_read_identity;
		st.mem.cas64 = NULL;
		st.mem.ctx = NULL;
	}
	st.tag = tag;
	st.attached = true;
	st.pt = true;
	ik_lock(&s->lock);
	s->streams[sid] = st;
	ik_unlock(&s->lock);
	return 0;
}

IK_API int ik_softiommu_detach(struct ik_softiommu *s, ik_u32 sid)
{
	int ret = 0;

	if (!s || sid >= s->cfg.max_streams)
		return -EINVAL;
	ik_lock(&s->lock);
	if (!s->streams[sid].attached)
		ret = -ENOENT;
	s->streams[sid].attached = false;
	ik_unlock(&s->lock);
	return ret;
}

/* ---- history (lock held) ---- */

static void hist_add(struct ik_softiommu *s, ik_u32 op, ik_u32 tag, ik_u64 iova, ik_u64 size)
{
	struct ik_softiommu_event *e = &s->hist[s->seq & (s->cfg.history_depth - 1)];

	e->seq = ++s->seq;
	e->op = op;
	e->tag = tag;
	e->iova = iova;
	e->size = size;
}

static ik_u32 hist_copy(struct ik_softiommu *s, struct ik_softiommu_event *ev, ik_u32 max)
{
	ik_u64 n = IK_MIN((ik_u64)max, IK_MIN(s->seq, (ik_u64)s->cfg.history_depth));

	for (ik_u64 i = 0; i < n; i++) {
		ik_u64 seq = s->seq - n + i; /* 0-based index of the event */

		ev[i] = s->hist[seq & (s->cfg.history_depth - 1)];
	}
	return (ik_u32)n;
}

/* ---- IOTLB (lock held) ---- */

static ik_u32 tlb_set(const struct ik_softiommu *s, ik_u32 tag, ik_u64 in)
{
	return (ik_u32)((in + (ik_u64)tag * 0x9e3779b1u) & (s->sets - 1));
}

static struct sio_tlbe *tlb_lookup(struct ik_softiommu *s, ik_u32 tag, ik_u64 iova)
{
	ik_u64 sizes = s->sizes;

	while (sizes) {
		ik_u32 lg2 = (ik_u32)__builtin_ctzll(sizes);
		ik_u64 in = iova >> lg2;
		struct sio_tlbe *set = &s->tlb[(ik_size)tlb_set(s, tag, in) * s->ways];

		sizes &= sizes - 1;
		for (ik_u32 w = 0; w < s->ways; w++) {
			struct sio_tlbe *e = &set[w];

			if (e->valid && e->lg2 == lg2 && e->in == in && e->tag == tag)
				return e;
		}
	}
	return NULL;
}

static void tlb_fill(struct ik_softiommu *s, ik_u32 tag, ik_u64 iova,
		     const struct ik_softiommu_xlate *x)
{
	ik_u64 in = iova >> x->lg2_size;
	struct sio_tlbe *set = &s->tlb[(ik_size)tlb_set(s, tag, in) * s->ways], *victim = NULL;

	for (ik_u32 w = 0; w < s->ways; w++) {
		struct sio_tlbe *e = &set[w];

		if (e->valid && e->lg2 == x->lg2_size && e->in == in && e->tag == tag) {
			victim = e; /* refill in place (another access filled it) */
			break;
		}
		if (!e->valid) {
			if (!victim || victim->valid)
				victim = e;
		} else if (!victim || (victim->valid && e->lru < victim->lru)) {
			victim = e;
		}
	}
	if (victim->valid && !(victim->lg2 == x->lg2_size && victim->in == in && victim->tag == tag))
		s->st.iotlb_evictions++;
	victim->valid = 1;
	victim->tag = tag;
	victim->lg2 = (ik_u8)x->lg2_size;
	victim->in = in;
	victim->out = x->oa >> x->lg2_size;
	victim->prot = (ik_u8)x->prot;
	victim->lru = ++s->clock;
	s->sizes |= 1ull << x->lg2_size;
	s->st.iotlb_fills++;
}

static void tlb_to_xlate(const struct sio_tlbe *e, ik_u64 iova, struct ik_softiommu_xlate *x)
{
	IK_ENV_MEMSET(x, 0, sizeof(*x));
	x->oa = (e->out << e->lg2) | (iova & ((1ull << e->lg2) - 1));
	x->lg2_size = e->lg2;
	x->prot = e->prot;
}

static bool range_overlaps(ik_u64 a0, ik_u64 a_last, ik_u64 b0, ik_u64 b_last)
{
	return a0 <= b_last && b0 <= a_last;
}

/* Drop IOTLB entries: all (any_tag), of `tag`, or of `tag` overlapping
 * [first, last]. */
static void tlb_inv(struct ik_softiommu *s, bool any_tag, ik_u32 tag, bool ranged, ik_u64 first,
		    ik_u64 last)
{
	ik_u64 probes = 0, dropped = 0;
	ik_u32 n = s->sets * s->ways;

	if (ranged) {
		ik_u64 sizes = s->sizes;

		while (sizes && probes <= s->sets) {
			ik_u32 lg2 = (ik_u32)__builtin_ctzll(sizes);

			sizes &= sizes - 1;
			probes += (last >> lg2) - (first >> lg2) + 1;
			if ((last >> lg2) - (first >> lg2) >= s->sets)
				probes = (ik_u64)s->sets + 1;
		}
	}
	if (ranged && probes <= s->sets) {
		ik_u64 sizes = s->sizes;

		while (sizes) {
			ik_u32 lg2 = (ik_u32)__builtin_ctzll(sizes);

			sizes &= sizes - 1;
			for (ik_u64 in = first >> lg2; in <= last >> lg2; in++) {
				struct sio_tlbe *set = &s->tlb[(ik_size)tlb_set(s, tag, in) * s->ways];

				for (ik_u32 w = 0; w < s->ways; w++)
					if (set[w].valid && set[w].tag == tag && set[w].lg2 == lg2 &&
					    set[w].in == in) {
						set[w].valid = 0;
						dropped++;
					}
			}
		}
	} else {
		for (ik_u32 i = 0; i < n; i++) {
			struct sio_tlbe *e = &s->tlb[i];

			if (!e->valid || (!any_tag && e->tag != tag))
				continue;
			if (ranged && !range_overlaps(e->in << e->lg2,
						      (e->in << e->lg2) + ((1ull << e->lg2) - 1),
						      first, last))
				continue;
			e->valid = 0;
			dropped++;
		}
		if (any_tag)
			s->sizes = 0;
	}
	s->st.iotlb_inv_entries += dropped;
}

/* ---- walk cache (lock held) ---- */

static struct sio_wce *wc_lookup(struct ik_softiommu *s, ik_u32 tag, ik_u64 iova)
{
	for (ik_u32 i = 0; i < s->cfg.walk_cache_entries; i++) {
		struct sio_wce *e = &s->wc[i];

		if (e->valid && e->tag == tag && (iova >> e->lg2) == e->region)
			return e;
	}
	return NULL;
}

static void wc_fill(struct ik_softiommu *s, ik_u32 tag, ik_u64 iova, ik_u64 table, ik_u32 lg2)
{
	struct sio_wce *victim = NULL;

	if (!s->cfg.walk_cache_entries || !table || lg2 >= 64)
		return;
	for (ik_u32 i = 0; i < s->cfg.walk_cache_entries; i++) {
		struct sio_wce *e = &s->wc[i];

		if (e->valid && e->tag == tag && e->lg2 == lg2 && e->region == iova >> lg2) {
			victim = e;
			break;
		}
		if (!victim || (victim->valid && (!e->valid || e->lru < victim->lru)))
			victim = e;
	}
	victim->valid = true;
	victim->tag = tag;
	victim->lg2 = lg2;
	victim->region = iova >> lg2;
	victim->table = table;
	victim->lru = ++s->clock;
}

static void wc_inv(struct ik_softiommu *s, bool any_tag, ik_u32 tag, bool ranged, ik_u64 first,
		   ik_u64 last)
{
	for (ik_u32 i = 0; i < s->cfg.walk_cache_entries; i++) {
		struct sio_wce *e = &s->wc[i];
		ik_u64 lo;

		if (!e->valid || (!any_tag && e->tag != tag))
			continue;
		lo = e->region << e->lg2;
		if (ranged && !range_overlaps(lo, lo + ((1ull << e->lg2) - 1), first, last))
			continue;
		e->valid = false;
	}
}

/* ---- commands ---- */

IK_API int ik_softiommu_exec(struct ik_softiommu *s, const struct ik_softiommu_cmd *cmd)
{
	ik_u64 last = 0;

	if (!s || !cmd)
		return -EINVAL;
	switch (cmd->op) {
	case IK_SOFTIOMMU_OP_INV_ALL:
	case IK_SOFTIOMMU_OP_INV_TAG:
	case IK_SOFTIOMMU_OP_SYNC:
	case IK_SOFTIOMMU_OP_NOP:
		break;
	case IK_SOFTIOMMU_OP_INV_RANGE:
		if (cmd->size == 0 || cmd->iova + (cmd->size - 1) < cmd->iova)
			return -EINVAL;
		last = cmd->iova + (cmd->size - 1);
		break;
	default:
		return -EINVAL;
	}
	ik_lock(&s->lock);
	s->st.cmds++;
	switch (cmd->op) {
	case IK_SOFTIOMMU_OP_INV_ALL:
		tlb_inv(s, true, 0, false, 0, 0);
		wc_inv(s, true, 0, false, 0, 0);
		s->gen++;
		s->st.inv_all++;
		break;
	case IK_SOFTIOMMU_OP_INV_TAG:
		tlb_inv(s, false, cmd->tag, false, 0, 0);
		wc_inv(s, false, cmd->tag, false, 0, 0);
		s->gen++;
		s->st.inv_tag++;
		break;
	case IK_SOFTIOMMU_OP_INV_RANGE:
		tlb_inv(s, false, cmd->tag, true, cmd->iova, last);
		if (!cmd->leaf)
			wc_inv(s, false, cmd->tag, true, cmd->iova, last);
		s->gen++;
		s->st.inv_range++;
		break;
	case IK_SOFTIOMMU_OP_NOP:
		s->st.nops++;
		break;
	default: /* IK_SOFTIOMMU_OP_SYNC: invalidations above are already complete */
		s->st.syncs++;
		break;
	}
	hist_add(s, cmd->op, cmd->tag, cmd->op == IK_SOFTIOMMU_OP_INV_RANGE ? cmd->iova : 0,
		 cmd->op == IK_SOFTIOMMU_OP_INV_RANGE ? cmd->size : 0);
	ik_unlock(&s->lock);
	return 0;
}

IK_API int ik_softiommu_note(struct ik_softiommu *s, ik_u32 op, ik_u32 tag, ik_u64 iova,
			     ik_u64 size)
{
	if (!s || (op != IK_SOFTIOMMU_EV_MAP && op != IK_SOFTIOMMU_EV_UNMAP))
		return -EINVAL;
	ik_lock(&s->lock);
	hist_add(s, op, tag, iova, size);
	ik_unlock(&s->lock);
	return 0;
}

IK_API int ik_softiommu_set_flags(struct ik_softiommu *s, ik_u32 flags)
{
	if (!s || (flags & ~IK_SOFTIOMMU_CHECK))
		return -EINVAL;
	ik_store_relaxed(&s->flags, flags);
	return 0;
}

/* ---- translation ---- */

/* Queue a fault record (lock held). */
static void fault_push(struct ik_softiommu *s, ik_u32 sid, ik_u32 tag, ik_u64 iova, ik_u32 type,
		       ik_u32 access, ik_u32 level)
{
	struct ik_softiommu_fault *f;

	s->st.faults++;
	hist_add(s, IK_SOFTIOMMU_EV_ACCESS_FAULT, tag, iova, type);
	if (s->fault_tail - s->fault_head >= s->cfg.fault_depth) {
		s->st.faults_dropped++;
		return;
	}
	f = &s->faults[s->fault_tail++ & (s->cfg.fault_depth - 1)];
	f->iova = iova;
	f->seq = s->seq;
	f->sid = sid;
	f->tag = tag;
	f->type = type;
	f->access = access;
	f->level = level;
}

static void stale_push(struct ik_softiommu *s, ik_u32 sid, ik_u32 tag, ik_u64 iova, ik_u32 access,
		       bool walk_cache, const struct ik_softiommu_xlate *cached,
		       const struct ik_softiommu_xlate *fresh)
{
	struct ik_softiommu_stale *r;

	s->st.stale++;
	if (s->stale_tail - s->stale_head >= s->cfg.stale_depth) {
		s->st.stale_dropped++;
		return;
	}
	r = &s->stale[s->stale_tail++ & (s->cfg.stale_depth - 1)];
	r->iova = iova;
	r->seq = s->seq;
	r->sid = sid;
	r->tag = tag;
	r->access = access;
	r->walk_cache = walk_cache;
	r->cached = *cached;
	r->fresh = *fresh;
	r->nhist = hist_copy(s, r->hist, IK_SOFTIOMMU_REPORT_HIST);
}

static ik_u32 pt_fault(enum ik_pt_fault f)
{
	switch (f) {
	case IK_PT_FAULT_NONE: return IK_SOFTIOMMU_FAULT_NONE;
	case IK_PT_FAULT_PERMISSION: return IK_SOFTIOMMU_FAULT_PERMISSION;
	case IK_PT_FAULT_ADDR_SIZE: return IK_SOFTIOMMU_FAULT_ADDR_SIZE;
	case IK_PT_FAULT_ACCESS_FLAG: return IK_SOFTIOMMU_FAULT_ACCESS_FLAG;
	case IK_PT_FAULT_EXTERNAL: return IK_SOFTIOMMU_FAULT_EXTERNAL;
	default: return IK_SOFTIOMMU_FAULT_TRANSLATION;
	}
}

/* Index bits of the table at engine level `lvl` of geometry g. */
static ik_u32 pt_table_bits(const struct ik_pt_geometry *g, ik_u32 lvl)
{
	return lvl + 1u == g->nlevels ? g->top_bits : g->bits;
}

/*
 * Fill *x from a walk of `w` (the full root, or a sub-walker starting at a
 * leaf table, whose level numbering is the same: engine levels count up from
 * the leaves).  `full` is the stream's real geometry: the table holding the
 * entry is recorded for the walk cache unless it is the root.
 */
static void pt_to_xlate(const struct ik_pt_geometry *full, const struct ik_pt_walk_result *r,
			struct ik_softiommu_xlate *x)
{
	IK_ENV_MEMSET(x, 0, sizeof(*x));
	x->fault = pt_fault(r->fault);
	x->level = r->level;
	if (!x->fault || x->fault == IK_SOFTIOMMU_FAULT_ACCESS_FLAG) {
		x->oa = r->oa;
		x->lg2_size = r->pgsize ? (ik_u32)IK_ILOG2_64(r->pgsize) : 0;
		x->prot = r->prot & (IK_SOFTIOMMU_READ | IK_SOFTIOMMU_WRITE);
	}
	if (r->level + 1u < full->nlevels && r->pte_addr &&
	    (x->fault == IK_SOFTIOMMU_FAULT_NONE || x->fault == IK_SOFTIOMMU_FAULT_TRANSLATION)) {
		ik_u32 bits = pt_table_bits(full, r->level);

		x->leaf_table = r->pte_addr & ~((8ull << bits) - 1);
		x->leaf_table_lg2 = full->lg2_granule + full->bits * r->level + bits;
	}
}

/*
 * Checking a walk-cache hit on a page-table stream: the full walk notes
 * whether it read an entry of the cached table.  A walk restarted at that
 * table (as the hardware does) ends there or below it - a cached upper
 * table that holds a block also covers the addresses whose leaves are in a
 * lower table - so the entry is stale only if the walk no longer passes
 * through the table.
 */
struct wc_probe {
	const struct ik_pt_mem *inner;
	ik_u64 table, mask;
	bool seen;
};

static int probe_read64(void *ctx, ik_u64 addr, ik_u64 *val)
{
	struct wc_probe *p = (struct wc_probe *)ctx;

	if ((addr & ~p->mask) == p->table)
		p->seen = true;
	return p->inner->read64(p->inner->ctx, addr, val);
}

static int probe_cas64(void *ctx, ik_u64 addr, ik_u64 old, ik_u64 val)
{
	struct wc_probe *p = (struct wc_probe *)ctx;

	return p->inner->cas64(p->inner->ctx, addr, old, val);
}

/* `probe` (may be NULL): note whether the walk reads its table. */
static void do_walk(const struct sio_stream *st, ik_u64 iova, struct ik_softiommu_xlate *x,
		    struct wc_probe *probe)
{
	int err;

	if (st->pt) {
		struct ik_pt_walk_result r;
		struct ik_pt_mem pm;

		IK_ENV_MEMSET(&r, 0, sizeof(r));
		if (probe) {
			pm.read64 = probe_read64;
			pm.cas64 = st->mem.cas64 ? probe_cas64 : NULL;
			pm.ctx = probe;
			probe->inner = &st->mem;
			probe->seen = false;
			err = ik_pt_walk(&st->ptw, &pm, iova, 0, &r);
		} else {
			err = ik_pt_walk(&st->ptw, &st->mem, iova, 0, &r);
		}
		if (!err)
			pt_to_xlate(&st->ptw.geom, &r, x);
	} else {
		IK_ENV_MEMSET(x, 0, sizeof(*x));
		err = st->w.walk(st->w.ctx, iova, x);
	}
	if (err < 0) {
		IK_ENV_MEMSET(x, 0, sizeof(*x));
		x->fault = IK_SOFTIOMMU_FAULT_TRANSLATION;
	}
	if (!x->fault && (x->lg2_size < 10 || x->lg2_size > 47))
		x->fault = IK_SOFTIOMMU_FAULT_TRANSLATION; /* walker bug: no sane block size */
}

static bool can_walk_leaf(const struct sio_stream *st)
{
	return st->pt || st->w.walk_leaf;
}

/* A walk that starts at a cached leaf table (a walk-cache hit). */
static void do_walk_leaf(const struct sio_stream *st, ik_u64 table, ik_u32 lg2, ik_u64 iova,
			 struct ik_softiommu_xlate *x)
{
	int err;

	if (st->pt) {
		const struct ik_pt_geometry *g = &st->ptw.geom;
		struct ik_pt_walker sub = st->ptw;
		struct ik_pt_walk_result r;
		ik_u32 lvl = (lg2 - g->lg2_granule) / g->bits - 1u; /* level of that table */

		/* The same walk, from the cached table down: a geometry whose
		 * root is that table, over the input span it covers. */
		sub.geom.nlevels = (ik_u8)(lvl + 1u);
		sub.geom.top_bits = g->bits;
		sub.geom.ias = lg2;
		sub.geom.concat = 1;
		sub.geom.root_size = 8ull << g->bits;
		if (g->fmt == IK_PT_VTD_SL || g->fmt == IK_PT_VTD_FL)
			sub.geom.hw_start_level = lvl + 1u;
		else
			sub.geom.hw_start_level = g->hw_start_level + (g->nlevels - 1u - lvl);
		sub.root = table;
		IK_ENV_MEMSET(&r, 0, sizeof(r));
		err = ik_pt_walk(&sub, &st->mem, iova & ((1ull << lg2) - 1), 0, &r);
		if (!err)
			pt_to_xlate(g, &r, x);
	} else {
		IK_ENV_MEMSET(x, 0, sizeof(*x));
		err = st->w.walk_leaf(st->w.ctx, table, lg2, iova, x);
	}
	if (err < 0) {
		IK_ENV_MEMSET(x, 0, sizeof(*x));
		x->fault = IK_SOFTIOMMU_FAULT_TRANSLATION;
	}
	if (!x->fault && (x->lg2_size < 10 || x->lg2_size > 47))
		x->fault = IK_SOFTIOMMU_FAULT_TRANSLATION;
	x->leaf_table = table;
	x->leaf_table_lg2 = lg2;
}

static bool same_translation(const struct ik_softiommu_xlate *a, const struct ik_softiommu_xlate *b)
{
	return !a->fault && !b->fault && a->oa == b->oa && a->lg2_size == b->lg2_size &&
	       a->prot == b->prot;
}

/*
 * The whole translation of one access: returns 0 with *x filled, or the
 * fault type (the fault is queued, *x holds what the walk found).
 */
static ik_u32 xlate_access(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova, ik_u32 access,
			   struct ik_softiommu_xlate *x)
{
	bool counted = false;

	for (;;) {
		struct sio_stream st;
		struct ik_softiommu_xlate cached, fresh;
		struct sio_tlbe *e;
		struct sio_wce *wce;
		ik_u64 gen, wc_table = 0;
		ik_u32 tag, wc_lg2 = 0;
		bool check, hit, probed;
		struct wc_probe probe = { NULL, 0, 0, false };

		ik_lock(&s->lock);
		if (!counted)
			s->st.accesses++;
		counted = true;
		if (sid >= s->cfg.max_streams || !s->streams[sid].attached) {
			fault_push(s, sid, 0, iova, IK_SOFTIOMMU_FAULT_BAD_STREAM, access, 0);
			ik_unlock(&s->lock);
			IK_ENV_MEMSET(x, 0, sizeof(*x));
			x->fault = IK_SOFTIOMMU_FAULT_BAD_STREAM;
			return x->fault;
		}
		tag = s->streams[sid].tag;
		check = (ik_load_relaxed(&s->flags) & IK_SOFTIOMMU_CHECK) != 0;
		e = s->sets ? tlb_lookup(s, tag, iova) : NULL;
		hit = e != NULL;
		if (hit) {
			e->lru = ++s->clock;
			tlb_to_xlate(e, iova, &cached);
			s->st.iotlb_hits++;
			if (!check) {
				*x = cached;
				goto permission;
			}
		} else {
			s->st.iotlb_misses++;
			wce = wc_lookup(s, tag, iova);
			if (wce) {
				wce->lru = ++s->clock;
				wc_table = wce->table;
				wc_lg2 = wce->lg2;
				s->st.walk_cache_hits++;
			} else if (s->cfg.walk_cache_entries) {
				s->st.walk_cache_misses++;
			}
		}
		gen = s->gen;
		s->st.walks++;
		st = s->streams[sid]; /* a copy: attach may replace it during the walk */
		ik_unlock(&s->lock);

		/* Walk outside the lock.  A walk-cache hit starts at the cached
		 * leaf table, as hardware does, unless checking (then the full
		 * walk is the reference and the cached table is compared). */
		probed = check && wc_table && st.pt;
		if (probed) {
			probe.table = wc_table;
			probe.mask = (8ull << st.ptw.geom.bits) - 1; /* a non-root table */
		}
		if (wc_table && can_walk_leaf(&st) && !check)
			do_walk_leaf(&st, wc_table, wc_lg2, iova, &fresh);
		else
			do_walk(&st, iova, &fresh, probed ? &probe : NULL);

		ik_lock(&s->lock);
		if (s->gen != gen) {
			/* An invalidation ran during the walk: its result may be
			 * from before it, and a check would compare against an
			 * IOTLB that has since changed.  Start again. */
			s->st.fill_races++;
			ik_unlock(&s->lock);
			continue;
		}
		if (check && hit && !same_translation(&cached, &fresh)) {
			stale_push(s, sid, tag, iova, access, false, &cached, &fresh);
			fault_push(s, sid, tag, iova, IK_SOFTIOMMU_FAULT_STALE, access, fresh.level);
			ik_unlock(&s->lock);
			*x = fresh;
			x->fault = IK_SOFTIOMMU_FAULT_STALE;
			return x->fault;
		}
		if (check && wc_table && (probed ? !probe.seen : fresh.leaf_table != wc_table)) {
			struct ik_softiommu_xlate wcx;

			IK_ENV_MEMSET(&wcx, 0, sizeof(wcx));
			wcx.leaf_table = wc_table;
			wcx.leaf_table_lg2 = wc_lg2;
			stale_push(s, sid, tag, iova, access, true, &wcx, &fresh);
			fault_push(s, sid, tag, iova, IK_SOFTIOMMU_FAULT_STALE, access, fresh.level);
			ik_unlock(&s->lock);
			*x = fresh;
			x->fault = IK_SOFTIOMMU_FAULT_STALE;
			return x->fault;
		}
		if (fresh.fault) {
			fault_push(s, sid, tag, iova, fresh.fault, access, fresh.level);
			ik_unlock(&s->lock);
			*x = fresh;
			return x->fault;
		}
		if (!hit && s->sets)
			tlb_fill(s, tag, iova, &fresh);
		if (!wc_table || fresh.leaf_table != wc_table)
			wc_fill(s, tag, iova, fresh.leaf_table, fresh.leaf_table_lg2);
		*x = hit ? cached : fresh;
permission:
		if (!(x->prot & access)) {
			fault_push(s, sid, tag, iova, IK_SOFTIOMMU_FAULT_PERMISSION, access, x->level);
			x->fault = IK_SOFTIOMMU_FAULT_PERMISSION;
		}
		ik_unlock(&s->lock);
		return x->fault;
	}
}

IK_API int ik_softiommu_translate(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova,
				  ik_u32 access, struct ik_softiommu_xlate *out)
{
	struct ik_softiommu_xlate x;

	if (!s || (access != IK_SOFTIOMMU_READ && access != IK_SOFTIOMMU_WRITE))
		return -EINVAL;
	xlate_access(s, sid, iova, access, &x);
	if (out)
		*out = x;
	return x.fault ? -EFAULT : 0;
}

static int dma(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova, void *rbuf, const void *wbuf,
	       ik_size len)
{
	ik_u32 access = rbuf ? IK_SOFTIOMMU_READ : IK_SOFTIOMMU_WRITE;
	ik_size done = 0;

	if (!s || (!rbuf && !wbuf && len))
		return -EINVAL;
	if (len == 0)
		return 0;
	if (iova + (ik_u64)(len - 1) < iova)
		return -EINVAL;
	while (done < len) {
		struct ik_softiommu_xlate x;
		ik_u64 cur = iova + done, room;
		ik_size chunk;
		void *host;

		if (xlate_access(s, sid, cur, access, &x))
			return -EFAULT;
		room = (1ull << x.lg2_size) - (cur & ((1ull << x.lg2_size) - 1));
		chunk = (ik_size)IK_MIN((ik_u64)(len - done), room);
		if (s->cfg.phys_to_host)
			host = s->cfg.phys_to_host(s->cfg.phys_ctx, x.oa, chunk);
		else
			host = (ik_u64)(ik_uptr)x.oa == x.oa ? (void *)(ik_uptr)x.oa : NULL;
		if (!host) {
			ik_lock(&s->lock);
			fault_push(s, sid, 0, cur, IK_SOFTIOMMU_FAULT_EXTERNAL, access, x.level);
			ik_unlock(&s->lock);
			return -EFAULT;
		}
		if (rbuf)
			IK_ENV_MEMCPY((char *)rbuf + done, host, chunk);
		else
			IK_ENV_MEMCPY(host, (const char *)wbuf + done, chunk);
		done += chunk;
	}
	/* Relaxed: a statistic, read with an atomic load by stats(). */
	ik_atomic_fetch_add(&s->bytes, (ik_u64)len, IK_MO_RELAXED);
	return 0;
}

/* A device read of memory: the IOMMU reads at iova and delivers into buf. */
IK_API int ik_softiommu_dma_read(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova, void *buf,
				 ik_size len)
{
	if (!buf && len)
		return -EINVAL;
	return dma(s, sid, iova, buf, NULL, len);
}

IK_API int ik_softiommu_dma_write(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova,
				  const void *buf, ik_size len)
{
	if (!buf && len)
		return -EINVAL;
	return dma(s, sid, iova, NULL, buf, len);
}

/* ---- queues and counters ---- */

IK_API int ik_softiommu_fault_pop(struct ik_softiommu *s, struct ik_softiommu_fault *out)
{
	int ret = -ENOENT;

	if (!s || !out)
		return -EINVAL;
	ik_lock(&s->lock);
	if (s->fault_head != s->fault_tail) {
		*out = s->faults[s->fault_head++ & (s->cfg.fault_depth - 1)];
		ret = 0;
	}
	ik_unlock(&s->lock);
	return ret;
}

IK_API int ik_softiommu_stale_pop(struct ik_softiommu *s, struct ik_softiommu_stale *out)
{
	int ret = -ENOENT;

	if (!s || !out)
		return -EINVAL;
	ik_lock(&s->lock);
	if (s->stale_head != s->stale_tail) {
		*out = s->stale[s->stale_head++ & (s->cfg.stale_depth - 1)];
		ret = 0;
	}
	ik_unlock(&s->lock);
	return ret;
}

IK_API int ik_softiommu_history(struct ik_softiommu *s, struct ik_softiommu_event *ev, ik_u32 max)
{
	ik_u32 n;

	if (!s || (!ev && max))
		return -EINVAL;
	ik_lock(&s->lock);
	n = hist_copy(s, ev, max);
	ik_unlock(&s->lock);
	return (int)n;
}

IK_API int ik_softiommu_stats(struct ik_softiommu *s, struct ik_softiommu_stats *out)
{
	if (!s || !out)
		return -EINVAL;
	ik_lock(&s->lock);
	*out = s->st;
	ik_unlock(&s->lock);
	out->bytes = ik_load_relaxed(&s->bytes);
	return 0;
}

IK_API void ik_softiommu_stats_reset(struct ik_softiommu *s)
{
	if (!s)
		return;
	ik_lock(&s->lock);
	IK_ENV_MEMSET(&s->st, 0, sizeof(s->st));
	ik_unlock(&s->lock);
	ik_store_relaxed(&s->bytes, 0);
}

IK_API const char *ik_softiommu_fault_name(ik_u32 type)
{
	switch (type) {
	case IK_SOFTIOMMU_FAULT_NONE: return "none";
	case IK_SOFTIOMMU_FAULT_TRANSLATION: return "translation";
	case IK_SOFTIOMMU_FAULT_PERMISSION: return "permission";
	case IK_SOFTIOMMU_FAULT_ADDR_SIZE: return "address-size";
	case IK_SOFTIOMMU_FAULT_BAD_STREAM: return "bad-stream";
	case IK_SOFTIOMMU_FAULT_STALE: return "stale-translation";
	case IK_SOFTIOMMU_FAULT_EXTERNAL: return "external";
	case IK_SOFTIOMMU_FAULT_ACCESS_FLAG: return "access-flag";
	default: return "unknown";
	}
}

IK_API const char *ik_softiommu_op_name(ik_u32 op)
{
	switch (op) {
	case IK_SOFTIOMMU_OP_INV_ALL: return "inv-all";
	case IK_SOFTIOMMU_OP_INV_TAG: return "inv-tag";
	case IK_SOFTIOMMU_OP_INV_RANGE: return "inv-range";
	case IK_SOFTIOMMU_OP_SYNC: return "sync";
	case IK_SOFTIOMMU_OP_NOP: return "nop";
	case IK_SOFTIOMMU_EV_MAP: return "map";
	case IK_SOFTIOMMU_EV_UNMAP: return "unmap";
	case IK_SOFTIOMMU_EV_ACCESS_FAULT: return "fault";
	default: return "unknown";
	}
}
