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
	ik_u64 ipa; /* nested: the IPA >> lg2 */
	ik_u64 lru;
	ik_u32 tag;  /* nested: the stage-1 tag */
	ik_u32 tag2; /* nested: the stage-2 tag */
	ik_u8 lg2;
	ik_u8 prot;  /* nested: stage-1 prot in bits 4..5 */
	ik_u8 valid;
	ik_u8 nested;
};

/* Who an IOTLB entry belongs to: the tag, and for a combined entry both. */
struct sio_key {
	ik_u32 tag, tag2;
	bool nested;
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
	struct ik_pt_walker ptw;      /* page-table root, when pt (nested: stage 1) */
	struct ik_pt_walker s2w;      /* nested: the stage-2 root */
	struct ik_pt_mem mem;         /* (host) table memory */
	ik_u32 tag;                   /* nested: the stage-1 tag */
	ik_u32 tag2;                  /* nested: the stage-2 tag */
	bool attached;
	bool pt;
	bool nested;
	bool hw_levels_up;	/* the format's level numbering (ik_pt_fmt_info) */
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
	bool had_nested; /* a nested stream was attached: combined entries may exist */
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

/*
 * Host memory at host addresses equal to IOMMU addresses: only for a caller
 * that passes these on purpose (see "Host memory" in <iommukit/softiommu.h>).
 * They refuse what no host pointer can be (an address wider than a pointer,
 * 0, misaligned, a range that wraps) and trust everything else.
 */
static int host_read64(void *ctx, ik_u64 addr, ik_u64 *val)
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

IK_API const struct ik_pt_mem ik_softiommu_host_mem = { host_read64, NULL, NULL };

IK_API void *ik_softiommu_host_identity(void *ctx, ik_u64 oa, ik_size len)
{
	(void)ctx;
	if ((ik_u64)(ik_uptr)oa != oa || !oa || !len || (ik_uptr)oa + (len - 1) < (ik_uptr)oa)
		return NULL;
	return (void *)(ik_uptr)oa;
}

IK_API void ik_softiommu_host_write32(void *ctx, ik_u64 addr, ik_u32 val)
{
	(void)ctx;
	if ((ik_u64)(ik_uptr)addr != addr || (addr & 3) || !addr)
		return;
	/* Release: everything the commands before the sync did (IOTLB state,
	 * the consumer's own progress) is visible to the waiter that reads the
	 * completion word with acquire (cmdq's edge S1). */
	ik_store_release((ik_u32 *)(ik_uptr)addr, val);
}

IK_API int ik_softiommu_attach_pt(struct ik_softiommu *s, ik_u32 sid, ik_u32 tag,
				  const struct ik_pt_walker *w, const struct ik_pt_mem *mem)
{
	struct sio_stream st;
	struct ik_pt_fmt_info fi;

	if (!s || !w || sid >= s->cfg.max_streams || !mem || !mem->read64 ||
	    ik_pt_fmt_get_info(w->geom.fmt, &fi) || w->geom.nlevels < 1 ||
	    w->geom.nlevels > IK_SOFTIOMMU_MAX_LEVELS)
		return -EINVAL;
	IK_ENV_MEMSET(&st, 0, sizeof(st));
	st.ptw = *w;
	st.hw_levels_up = fi.hw_levels_up;
	st.mem = *mem;
	st.tag = tag;
	st.attached = true;
	st.pt = true;
	ik_lock(&s->lock);
	s->streams[sid] = st;
	ik_unlock(&s->lock);
	return 0;
}

/* A walker the soft IOMMU can run: its format is built in, its depth sane. */
static bool pt_walker_ok(const struct ik_pt_walker *w, enum ik_pt_fmt fmt)
{
	struct ik_pt_fmt_info fi;

	return w->geom.fmt == fmt && !ik_pt_fmt_get_info(fmt, &fi) && w->geom.nlevels >= 1 &&
	       w->geom.nlevels <= IK_SOFTIOMMU_MAX_LEVELS;
}

IK_API int ik_softiommu_attach_nested(struct ik_softiommu *s, ik_u32 sid,
				      const struct ik_softiommu_nested *n)
{
	struct sio_stream st;
	enum ik_pt_fmt f2;

	if (!s || !n || sid >= s->cfg.max_streams || !n->mem || !n->mem->read64)
		return -EINVAL;
	if (n->s1.geom.fmt == IK_PT_LPAE_S1)
		f2 = IK_PT_LPAE_S2;
	else if (n->s1.geom.fmt == IK_PT_VTD_FL)
		f2 = IK_PT_VTD_SL;
	else
		return -EINVAL;
	if (!pt_walker_ok(&n->s1, n->s1.geom.fmt) || !pt_walker_ok(&n->s2, f2))
		return -EINVAL;
	IK_ENV_MEMSET(&st, 0, sizeof(st));
	st.ptw = n->s1;
	st.s2w = n->s2;
	st.mem = *n->mem;
	st.tag = n->s1_tag;
	st.tag2 = n->s2_tag;
	st.attached = true;
	st.pt = true;
	st.nested = true;
	ik_lock(&s->lock);
	s->streams[sid] = st;
	s->had_nested = true;
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

/* The set of a key's entry: a combined entry hashes both tags. */
static ik_u32 key_set(const struct ik_softiommu *s, const struct sio_key *k, ik_u64 in)
{
	return tlb_set(s, k->nested ? k->tag ^ (k->tag2 * 0x85ebca6bu) ^ 0x5bd1e995u : k->tag, in);
}

static bool key_is(const struct sio_tlbe *e, const struct sio_key *k)
{
	return e->tag == k->tag && e->nested == k->nested && (!k->nested || e->tag2 == k->tag2);
}

static struct sio_tlbe *tlb_lookup(struct ik_softiommu *s, const struct sio_key *k, ik_u64 iova)
{
	ik_u64 sizes = s->sizes;

	while (sizes) {
		ik_u32 lg2 = (ik_u32)ik_ctz64(sizes);
		ik_u64 in = iova >> lg2;
		struct sio_tlbe *set = &s->tlb[(ik_size)key_set(s, k, in) * s->ways];

		sizes &= sizes - 1;
		for (ik_u32 w = 0; w < s->ways; w++) {
			struct sio_tlbe *e = &set[w];

			if (e->valid && e->lg2 == lg2 && e->in == in && key_is(e, k))
				return e;
		}
	}
	return NULL;
}

static void tlb_fill(struct ik_softiommu *s, const struct sio_key *k, ik_u64 iova,
		     const struct ik_softiommu_xlate *x)
{
	ik_u64 in = iova >> x->lg2_size;
	struct sio_tlbe *set = &s->tlb[(ik_size)key_set(s, k, in) * s->ways], *victim = NULL;

	for (ik_u32 w = 0; w < s->ways; w++) {
		struct sio_tlbe *e = &set[w];

		if (e->valid && e->lg2 == x->lg2_size && e->in == in && key_is(e, k)) {
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
	if (victim->valid && !(victim->lg2 == x->lg2_size && victim->in == in && key_is(victim, k)))
		s->st.iotlb_evictions++;
	victim->valid = 1;
	victim->tag = k->tag;
	victim->tag2 = k->nested ? k->tag2 : 0;
	victim->nested = k->nested;
	victim->lg2 = (ik_u8)x->lg2_size;
	victim->in = in;
	victim->out = x->oa >> x->lg2_size;
	victim->ipa = k->nested ? x->ipa >> x->lg2_size : 0;
	victim->prot = (ik_u8)((x->prot & 3u) | (k->nested ? (x->prot_s1 & 3u) << 4 : 0u));
	victim->lru = ++s->clock;
	s->sizes |= 1ull << x->lg2_size;
	s->st.iotlb_fills++;
}

static void tlb_to_xlate(const struct sio_tlbe *e, ik_u64 iova, struct ik_softiommu_xlate *x)
{
	ik_u64 off = iova & ((1ull << e->lg2) - 1);

	IK_ENV_MEMSET(x, 0, sizeof(*x));
	x->oa = (e->out << e->lg2) | off;
	x->lg2_size = e->lg2;
	x->prot = e->prot & 3u;
	if (e->nested) {
		x->stage = IK_SOFTIOMMU_STAGE_NESTED;
		x->ipa = (e->ipa << e->lg2) | off;
		x->prot_s1 = (e->prot >> 4) & 3u;
	}
}

static bool range_overlaps(ik_u64 a0, ik_u64 a_last, ik_u64 b0, ik_u64 b_last)
{
	return a0 <= b_last && b0 <= a_last;
}

/*
 * What an invalidation drops.  Non-nested entries: all (any_tag), or those
 * of `tag`, within [first, last] when ranged.  Combined entries, by `nest`:
 * none, stage-1 tag == tag (NM_S1; with tag2 as the stage-2 tag too:
 * NM_S1_S2; VT-d's DID + PASID: NM_S2_S1, stage-2 tag == tag and stage-1 tag
 * == tag2), within the range when ranged; or every one of stage-2 tag `tag`
 * (NM_S2, whatever the range).
 */
enum nest_match { NM_NONE, NM_S1, NM_S1_S2, NM_S2_S1, NM_S2 };

struct inv_match {
	bool any_tag, ranged;
	enum nest_match nest;
	ik_u32 tag, tag2;
	ik_u64 first, last;
};

static bool inv_hits(const struct inv_match *m, const struct sio_tlbe *e)
{
	bool tags;

	if (m->any_tag)
		return true;
	if (!e->nested)
		tags = e->tag == m->tag;
	else if (m->nest == NM_S2)
		return e->tag2 == m->tag;
	else
		tags = (m->nest == NM_S1 && e->tag == m->tag) ||
		       (m->nest == NM_S1_S2 && e->tag == m->tag && e->tag2 == m->tag2) ||
		       (m->nest == NM_S2_S1 && e->tag2 == m->tag && e->tag == m->tag2);
	return tags && (!m->ranged || range_overlaps(e->in << e->lg2,
						     (e->in << e->lg2) + ((1ull << e->lg2) - 1),
						     m->first, m->last));
}

/* Set probes a ranged invalidation of non-nested entries needs, or more
 * than s->sets when a scan is cheaper. */
static ik_u64 inv_probes(const struct ik_softiommu *s, const struct inv_match *m)
{
	ik_u64 probes = 0, sizes = s->sizes;

	while (sizes && probes <= s->sets) {
		ik_u32 lg2 = (ik_u32)ik_ctz64(sizes);

		sizes &= sizes - 1;
		probes += (m->last >> lg2) - (m->first >> lg2) + 1;
		if ((m->last >> lg2) - (m->first >> lg2) >= s->sets)
			probes = (ik_u64)s->sets + 1;
	}
	return probes;
}

/* Probe the sets a range of non-nested entries of m->tag can occupy. */
static ik_u64 tlb_inv_probe(struct ik_softiommu *s, const struct inv_match *m)
{
	ik_u64 sizes = s->sizes, dropped = 0;

	while (sizes) {
		ik_u32 lg2 = (ik_u32)ik_ctz64(sizes);

		sizes &= sizes - 1;
		for (ik_u64 in = m->first >> lg2; in <= m->last >> lg2; in++) {
			struct sio_tlbe *set = &s->tlb[(ik_size)tlb_set(s, m->tag, in) * s->ways];

			for (ik_u32 w = 0; w < s->ways; w++)
				if (set[w].valid && !set[w].nested && set[w].tag == m->tag &&
				    set[w].lg2 == lg2 && set[w].in == in) {
					set[w].valid = 0;
					dropped++;
				}
		}
	}
	return dropped;
}

/* Drop the IOTLB entries *m names. */
static void tlb_inv(struct ik_softiommu *s, const struct inv_match *m)
{
	ik_u64 dropped = 0;
	ik_u32 n = s->sets * s->ways;

	/* Combined entries live in sets hashed from both tags: once a nested
	 * stream may have filled some, a command that can reach them scans. */
	if (m->ranged && !(s->had_nested && m->nest != NM_NONE) && inv_probes(s, m) <= s->sets) {
		dropped = tlb_inv_probe(s, m);
	} else {
		for (ik_u32 i = 0; i < n; i++) {
			struct sio_tlbe *e = &s->tlb[i];

			if (!e->valid || !inv_hits(m, e))
				continue;
			e->valid = 0;
			dropped++;
		}
		if (m->any_tag)
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

/* Validate a command and say what it drops; false: -EINVAL. */
static bool cmd_match(const struct ik_softiommu_cmd *cmd, struct inv_match *m)
{
	bool s1 = cmd->op == IK_SOFTIOMMU_OP_INV_TAG || cmd->op == IK_SOFTIOMMU_OP_INV_RANGE;

	IK_ENV_MEMSET(m, 0, sizeof(*m));
	if ((cmd->flags & ~(IK_SOFTIOMMU_CMD_VMID | IK_SOFTIOMMU_CMD_PASID)) ||
	    cmd->flags == (IK_SOFTIOMMU_CMD_VMID | IK_SOFTIOMMU_CMD_PASID) || (!s1 && cmd->flags))
		return false;
	switch (cmd->op) {
	case IK_SOFTIOMMU_OP_INV_ALL:
		m->any_tag = true;
		return true;
	case IK_SOFTIOMMU_OP_SYNC:
	case IK_SOFTIOMMU_OP_NOP:
		return true;
	case IK_SOFTIOMMU_OP_INV_RANGE:
	case IK_SOFTIOMMU_OP_INV_S2_RANGE:
		if (cmd->size == 0 || cmd->iova + (cmd->size - 1) < cmd->iova)
			return false;
		m->ranged = true;
		m->first = cmd->iova;
		m->last = cmd->iova + (cmd->size - 1);
		break;
	case IK_SOFTIOMMU_OP_INV_TAG:
	case IK_SOFTIOMMU_OP_INV_S2_TAG:
		break;
	default:
		return false;
	}
	m->tag = cmd->tag;
	m->tag2 = cmd->tag2;
	if (!s1)
		m->nest = NM_S2;
	else
		m->nest = cmd->flags == IK_SOFTIOMMU_CMD_VMID    ? NM_S1_S2
			  : cmd->flags == IK_SOFTIOMMU_CMD_PASID ? NM_S2_S1
								 : NM_S1;
	return true;
}

IK_API int ik_softiommu_exec(struct ik_softiommu *s, const struct ik_softiommu_cmd *cmd)
{
	struct inv_match m;
	bool ranged;

	if (!s || !cmd || !cmd_match(cmd, &m))
		return -EINVAL;
	ranged = cmd->op == IK_SOFTIOMMU_OP_INV_RANGE || cmd->op == IK_SOFTIOMMU_OP_INV_S2_RANGE;
	ik_lock(&s->lock);
	s->st.cmds++;
	switch (cmd->op) {
	case IK_SOFTIOMMU_OP_NOP:
		s->st.nops++;
		break;
	case IK_SOFTIOMMU_OP_SYNC: /* invalidations before it are already complete */
		s->st.syncs++;
		break;
	default:
		tlb_inv(s, &m);
		/* The walk cache holds non-nested streams' tables only. */
		if (!ranged || !cmd->leaf)
			wc_inv(s, m.any_tag, m.tag, m.ranged, m.first, m.last);
		s->gen++;
		s->st.inv_all += cmd->op == IK_SOFTIOMMU_OP_INV_ALL;
		s->st.inv_tag += cmd->op == IK_SOFTIOMMU_OP_INV_TAG;
		s->st.inv_range += cmd->op == IK_SOFTIOMMU_OP_INV_RANGE;
		s->st.inv_s2_tag += cmd->op == IK_SOFTIOMMU_OP_INV_S2_TAG;
		s->st.inv_s2_range += cmd->op == IK_SOFTIOMMU_OP_INV_S2_RANGE;
		break;
	}
	hist_add(s, cmd->op, cmd->tag, ranged ? cmd->iova : 0, ranged ? cmd->size : 0);
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

/* Queue a fault record (lock held): fault x->fault of an access under key k
 * (NULL: none, an unknown stream), with x's level and nested details. */
static void fault_push(struct ik_softiommu *s, ik_u32 sid, const struct sio_key *k, ik_u64 iova,
		       ik_u32 access, const struct ik_softiommu_xlate *x)
{
	ik_u32 tag = k ? k->tag : 0, type = x->fault;
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
	f->level = x->level;
	f->stage = x->stage;
	f->s2_class = x->s2_class;
	f->tag2 = k && k->nested ? k->tag2 : 0;
	f->ipa = x->ipa;
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
 * Nested walks.  Stage 1 is walked by ik_pt_walk() through a memory view
 * whose addresses are IPAs: each entry read (and each hardware update) is a
 * stage-2 walk of that IPA for a read (write), then a host memory access at
 * the PA.  A stage-2 fault there ends the read with -EFAULT (the stage-1 walk
 * then stops, reporting EXTERNAL) and is remembered here, so that the
 * access reports it as the stage-2 fault on a stage-1 table fetch it is.
 */
struct nest_walk {
	const struct sio_stream *st;
	struct ik_softiommu_xlate s2f; /* the first stage-2 fault, if any */
};

/* Stage 2 of `ipa` for a table access of kind `access`: 0 and *pa, or the
 * fault recorded in n->s2f and -EFAULT. */
static int nest_s2(struct nest_walk *n, ik_u64 ipa, unsigned access, ik_u64 *pa)
{
	struct ik_pt_walk_result r;
	int err;

	err = ik_pt_walk(&n->st->s2w, &n->st->mem, ipa, access, &r);
	if (!err && r.fault == IK_PT_FAULT_NONE) {
		*pa = r.oa;
		return 0;
	}
	if (!n->s2f.fault) {
		n->s2f.fault = err ? IK_SOFTIOMMU_FAULT_TRANSLATION : pt_fault(r.fault);
		n->s2f.level = err ? 0 : r.level;
		n->s2f.stage = IK_SOFTIOMMU_STAGE_2;
		n->s2f.s2_class = IK_SOFTIOMMU_S2_TT;
		n->s2f.ipa = ipa;
	}
	return -EFAULT;
}

static int nest_read64(void *ctx, ik_u64 ipa, ik_u64 *val)
{
	struct nest_walk *n = (struct nest_walk *)ctx;
	ik_u64 pa;
	int err = nest_s2(n, ipa, IK_ACCESS_READ, &pa);

	return err ? err : n->st->mem.read64(n->st->mem.ctx, pa, val);
}

static int nest_cas64(void *ctx, ik_u64 ipa, ik_u64 old, ik_u64 val)
{
	struct nest_walk *n = (struct nest_walk *)ctx;
	ik_u64 pa;
	int err = nest_s2(n, ipa, IK_ACCESS_WRITE, &pa);

	return err ? err : n->st->mem.cas64(n->st->mem.ctx, pa, old, val);
}

/* The final IPA through stage 2; x holds stage 1's translation. */
static void nest_final(const struct sio_stream *st, struct ik_softiommu_xlate *x)
{
	struct ik_pt_walk_result r;
	ik_u32 lg2;
	int err = ik_pt_walk(&st->s2w, &st->mem, x->ipa, 0, &r);

	if (err || r.fault != IK_PT_FAULT_NONE) {
		x->fault = err ? IK_SOFTIOMMU_FAULT_TRANSLATION : pt_fault(r.fault);
		x->level = err ? 0 : r.level;
		x->stage = IK_SOFTIOMMU_STAGE_2;
		x->s2_class = IK_SOFTIOMMU_S2_IN;
		x->prot = 0;
		return;
	}
	lg2 = r.pgsize ? (ik_u32)IK_ILOG2_64(r.pgsize) : 0;
	/* The combined block: the smaller leaf, aligned in both spaces (both
	 * leaves are naturally aligned, so it lies inside each). */
	if (lg2 < x->lg2_size)
		x->lg2_size = lg2;
	x->oa = r.oa;
	x->prot = x->prot_s1 & r.prot;
	x->stage = IK_SOFTIOMMU_STAGE_NESTED;
}

static void nest_walk(const struct sio_stream *st, ik_u64 iova, struct ik_softiommu_xlate *x)
{
	struct nest_walk n;
	struct ik_pt_mem m;
	struct ik_pt_walk_result r;
	int err;

	IK_ENV_MEMSET(&n, 0, sizeof(n));
	n.st = st;
	m.read64 = nest_read64;
	m.cas64 = st->mem.cas64 ? nest_cas64 : NULL;
	m.ctx = &n;
	err = ik_pt_walk(&st->ptw, &m, iova, 0, &r);
	IK_ENV_MEMSET(x, 0, sizeof(*x));
	if (n.s2f.fault) {
		*x = n.s2f;	/* stage 2 refused a stage-1 table access */
		return;
	}
	x->stage = IK_SOFTIOMMU_STAGE_1;
	if (err) {
		x->fault = IK_SOFTIOMMU_FAULT_TRANSLATION;
		return;
	}
	x->fault = pt_fault(r.fault);
	x->level = r.level;
	if (x->fault)
		return;	/* incl. access flag: nothing to combine */
	x->ipa = r.oa;
	x->lg2_size = r.pgsize ? (ik_u32)IK_ILOG2_64(r.pgsize) : 0;
	x->prot_s1 = r.prot & (IK_SOFTIOMMU_READ | IK_SOFTIOMMU_WRITE);
	nest_final(st, x);
}

/* After any walk: the nested fields are 0 unless the stream is nested
 * (whatever a custom walker left there), and a block size no walker could
 * mean is a translation fault. */
static void walk_sanitize(const struct sio_stream *st, struct ik_softiommu_xlate *x)
{
	if (!st->nested) {
		x->stage = IK_SOFTIOMMU_STAGE_ONLY;
		x->s2_class = IK_SOFTIOMMU_S2_NONE;
		x->ipa = 0;
		x->prot_s1 = 0;
	}
	if (!x->fault && (x->lg2_size < 10 || x->lg2_size > 47))
		x->fault = IK_SOFTIOMMU_FAULT_TRANSLATION; /* walker bug: no sane block size */
}

static void do_walk(const struct sio_stream *st, ik_u64 iova, struct ik_softiommu_xlate *x)
{
	int err = 0;

	if (st->nested) {
		nest_walk(st, iova, x);
	} else if (st->pt) {
		struct ik_pt_walk_result r;

		IK_ENV_MEMSET(&r, 0, sizeof(r));
		err = ik_pt_walk(&st->ptw, &st->mem, iova, 0, &r);
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
	walk_sanitize(st, x);
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
		 * root is that table, over the input span it covers, and whose
		 * start level is that table's as the hardware numbers it. */
		sub.geom.nlevels = (ik_u8)(lvl + 1u);
		sub.geom.top_bits = g->bits;
		sub.geom.ias = lg2;
		sub.geom.concat = 1;
		sub.geom.root_size = 8ull << g->bits;
		if (st->hw_levels_up)
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
	walk_sanitize(st, x);
	x->leaf_table = table;
	x->leaf_table_lg2 = lg2;
}

static bool same_translation(const struct ik_softiommu_xlate *a, const struct ik_softiommu_xlate *b)
{
	return !a->fault && !b->fault && a->oa == b->oa && a->lg2_size == b->lg2_size &&
	       a->prot == b->prot && a->prot_s1 == b->prot_s1 && a->ipa == b->ipa;
}

/*
 * The translation of one access, in steps: look up the IOTLB and the walk
 * cache under the lock (xlate_lookup), walk the tables outside it
 * (xlate_walk), then, under the lock again, compare and fill the caches
 * (xlate_finish) and check the permission (xlate_permit).  Every fault
 * leaves through xlate_fault().
 */

/* One attempt, from the lookup to the end of the walk. */
struct xlate_try {
	struct sio_stream st;	/* a copy: attach may replace it during the walk */
	struct ik_softiommu_xlate cached, fresh;
	ik_u64 gen, wc_table;
	struct sio_key key;
	ik_u32 wc_lg2;
	bool check, hit;
};

enum xlate_next { XL_BAD_STREAM, XL_HIT, XL_WALK };

/* A permission fault of a combined translation belongs to the stage that
 * refused (stage 1 first, as the hardware checks it first). */
static void nest_fault_stage(struct ik_softiommu_xlate *f, ik_u32 access)
{
	bool s1_refuses = !(f->prot_s1 & access);

	if (f->stage == IK_SOFTIOMMU_STAGE_NESTED) {
		f->stage = s1_refuses ? IK_SOFTIOMMU_STAGE_1 : IK_SOFTIOMMU_STAGE_2;
		f->s2_class = s1_refuses ? IK_SOFTIOMMU_S2_NONE : IK_SOFTIOMMU_S2_IN;
	}
}

/*
 * A walk's stage-2 fault on the final IPA of an access that stage 1 does
 * not permit: the hardware reports stage 1's permission fault, found on the
 * stage-1 leaf before the output went to stage 2.  x->lg2_size is still
 * that leaf's, which gives its level.
 */
static void nest_prefer_s1(const struct sio_stream *st, struct ik_softiommu_xlate *f,
			   ik_u32 access)
{
	const struct ik_pt_geometry *g = &st->ptw.geom;

	if (f->stage != IK_SOFTIOMMU_STAGE_2 || f->s2_class != IK_SOFTIOMMU_S2_IN ||
	    (f->prot_s1 & access) || g->bits == 0 || f->lg2_size < g->lg2_granule)
		return;
	f->fault = IK_SOFTIOMMU_FAULT_PERMISSION;
	f->stage = IK_SOFTIOMMU_STAGE_1;
	f->s2_class = IK_SOFTIOMMU_S2_NONE;
	f->level = (f->lg2_size - g->lg2_granule) / g->bits;
}

/* Lock held: queue fault `type` of an access that found *found, unlock, and
 * report it in *x (found may be x).  Returns the fault type. */
static ik_u32 xlate_fault(struct ik_softiommu *s, ik_u32 sid, const struct sio_key *k, ik_u64 iova,
			  ik_u32 access, const struct ik_softiommu_xlate *found, ik_u32 type,
			  struct ik_softiommu_xlate *x)
{
	struct ik_softiommu_xlate f = *found;

	f.fault = type;
	if (type != IK_SOFTIOMMU_FAULT_STALE)
		nest_fault_stage(&f, access);
	fault_push(s, sid, k, iova, access, &f);
	ik_unlock(&s->lock);
	*x = f;
	return f.fault;
}

/* Lock held: the stream, the IOTLB (XL_HIT: the cached answer is the
 * answer) and the walk cache; what the walk then needs goes into *t. */
static enum xlate_next xlate_lookup(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova,
				    struct xlate_try *t)
{
	struct sio_tlbe *e;
	struct sio_wce *wce;

	if (sid >= s->cfg.max_streams || !s->streams[sid].attached)
		return XL_BAD_STREAM;
	t->key.tag = s->streams[sid].tag;
	t->key.tag2 = s->streams[sid].tag2;
	t->key.nested = s->streams[sid].nested;
	t->check = (ik_load_relaxed(&s->flags) & IK_SOFTIOMMU_CHECK) != 0;
	t->wc_table = 0;
	t->wc_lg2 = 0;
	e = s->sets ? tlb_lookup(s, &t->key, iova) : NULL;
	t->hit = e != NULL;
	if (t->hit) {
		e->lru = ++s->clock;
		tlb_to_xlate(e, iova, &t->cached);
		s->st.iotlb_hits++;
		if (!t->check)
			return XL_HIT;
	} else {
		s->st.iotlb_misses++;
		/* Nested streams do not use the walk cache (see the header). */
		wce = t->key.nested ? NULL : wc_lookup(s, t->key.tag, iova);
		if (wce) {
			wce->lru = ++s->clock;
			t->wc_table = wce->table;
			t->wc_lg2 = wce->lg2;
			s->st.walk_cache_hits++;
		} else if (s->cfg.walk_cache_entries && !t->key.nested) {
			s->st.walk_cache_misses++;
		}
	}
	t->gen = s->gen;
	s->st.walks++;
	t->st = s->streams[sid];
	return XL_WALK;
}

/* Outside the lock.  A walk-cache hit starts at the cached leaf table, as
 * hardware does, unless checking (then the full walk is the reference and
 * the cached table is compared). */
static void xlate_walk(struct xlate_try *t, ik_u64 iova)
{
	if (t->wc_table && can_walk_leaf(&t->st) && !t->check)
		do_walk_leaf(&t->st, t->wc_table, t->wc_lg2, iova, &t->fresh);
	else
		do_walk(&t->st, iova, &t->fresh);
}

/* Lock held; unlocks.  The access is allowed, or a permission fault. */
static ik_u32 xlate_permit(struct ik_softiommu *s, ik_u32 sid, const struct sio_key *k,
			   ik_u64 iova, ik_u32 access, struct ik_softiommu_xlate *x)
{
	if (!(x->prot & access))
		return xlate_fault(s, sid, k, iova, access, x, IK_SOFTIOMMU_FAULT_PERMISSION, x);
	ik_unlock(&s->lock);
	return x->fault;
}

/* Lock held, the walk current; unlocks.  Checking mode compares the walk
 * with the IOTLB's and the walk cache's answers (a stale translation is
 * refused and reported); then the walk's fault, or the caches filled and
 * the permission checked. */
static ik_u32 xlate_finish(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova, ik_u32 access,
			   struct xlate_try *t, struct ik_softiommu_xlate *x)
{
	const struct ik_softiommu_xlate *fresh = &t->fresh;

	if (t->check && t->hit && !same_translation(&t->cached, fresh)) {
		stale_push(s, sid, t->key.tag, iova, access, false, &t->cached, fresh);
		return xlate_fault(s, sid, &t->key, iova, access, fresh, IK_SOFTIOMMU_FAULT_STALE, x);
	}
	if (t->check && t->wc_table && fresh->leaf_table != t->wc_table) {
		struct ik_softiommu_xlate wcx;

		IK_ENV_MEMSET(&wcx, 0, sizeof(wcx));
		wcx.leaf_table = t->wc_table;
		wcx.leaf_table_lg2 = t->wc_lg2;
		stale_push(s, sid, t->key.tag, iova, access, true, &wcx, fresh);
		return xlate_fault(s, sid, &t->key, iova, access, fresh, IK_SOFTIOMMU_FAULT_STALE, x);
	}
	if (fresh->fault) {
		struct ik_softiommu_xlate f = *fresh;

		if (t->key.nested)
			nest_prefer_s1(&t->st, &f, access);
		return xlate_fault(s, sid, &t->key, iova, access, &f, f.fault, x);
	}
	if (!t->hit && s->sets)
		tlb_fill(s, &t->key, iova, fresh);
	/* Page-table streams cache last-level tables only: the table holding
	 * a block leaf may later hold a table pointer in that entry (the block
	 * unmapped with a leaf-only invalidation, then a table installed in
	 * the empty entry, which needs none), and a walk restarted there would
	 * no longer end at it; hardware caches that table as a non-leaf step,
	 * which stays valid. */
	if (!t->key.nested && (!t->st.pt || fresh->level == 0) &&
	    (!t->wc_table || fresh->leaf_table != t->wc_table))
		wc_fill(s, t->key.tag, iova, fresh->leaf_table, fresh->leaf_table_lg2);
	*x = t->hit ? t->cached : *fresh;
	return xlate_permit(s, sid, &t->key, iova, access, x);
}

/*
 * The whole translation of one access: returns 0 with *x filled, or the
 * fault type (the fault is queued, *x holds what the walk found).
 */
static ik_u32 xlate_access(struct ik_softiommu *s, ik_u32 sid, ik_u64 iova, ik_u32 access,
			   struct ik_softiommu_xlate *x)
{
	struct xlate_try t;
	bool counted = false;

	for (;;) {
		ik_lock(&s->lock);
		if (!counted)
			s->st.accesses++;
		counted = true;
		switch (xlate_lookup(s, sid, iova, &t)) {
		case XL_BAD_STREAM:
			IK_ENV_MEMSET(&t.fresh, 0, sizeof(t.fresh));
			return xlate_fault(s, sid, NULL, iova, access, &t.fresh,
					   IK_SOFTIOMMU_FAULT_BAD_STREAM, x);
		case XL_HIT:
			*x = t.cached;
			return xlate_permit(s, sid, &t.key, iova, access, x);
		case XL_WALK:
			break;
		}
		ik_unlock(&s->lock);
		xlate_walk(&t, iova);
		ik_lock(&s->lock);
		if (s->gen == t.gen)
			return xlate_finish(s, sid, iova, access, &t, x);
		/* An invalidation ran during the walk: its result may be from
		 * before it, and a check would compare against an IOTLB that has
		 * since changed.  Start again. */
		s->st.fill_races++;
		ik_unlock(&s->lock);
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
		/* No hook: no host memory (ik_softiommu_host_identity() is
		 * the explicit identity). */
		host = s->cfg.phys_to_host ? s->cfg.phys_to_host(s->cfg.phys_ctx, x.oa, chunk)
					   : NULL;
		if (!host) {
			x.fault = IK_SOFTIOMMU_FAULT_EXTERNAL;
			if (x.stage == IK_SOFTIOMMU_STAGE_NESTED)
				x.stage = IK_SOFTIOMMU_STAGE_2; /* the output PA, after both stages */
			ik_lock(&s->lock);
			fault_push(s, sid, NULL, cur, access, &x);
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
	case IK_SOFTIOMMU_OP_INV_S2_TAG: return "inv-s2-tag";
	case IK_SOFTIOMMU_OP_INV_S2_RANGE: return "inv-s2-range";
	case IK_SOFTIOMMU_EV_MAP: return "map";
	case IK_SOFTIOMMU_EV_UNMAP: return "unmap";
	case IK_SOFTIOMMU_EV_ACCESS_FAULT: return "fault";
	default: return "unknown";
	}
}
