/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SMMUv3 driver core: stream tables and CD tables in DMA memory, and the
 * order in which their entries are changed while the SMMU may read them
 * (<iommukit/drv/smmuv3.h>, "Safe update order").
 *
 * Layouts (IHI 0070, "Stream tables", "Context descriptor tables"):
 *   linear stream table  2^LOG2SIZE STEs of 64 bytes;
 *   2-level              L1: 2^(LOG2SIZE - SPLIT) descriptors of 8 bytes,
 *                        Span [4:0] (L2 holds 2^(Span - 1) STEs, 0 invalid),
 *                        L2Ptr [51:6]; L2: 2^SPLIT STEs;
 *   linear CD table      2^S1CDMax CDs of 64 bytes;
 *   2-level CD table     L1CD: V [0], L2Ptr [51:12]; L2 of 64 (S1Fmt 1) or
 *                        1024 (S1Fmt 2) CDs, indexed by SSID's low 6 / 10
 *                        bits, L1 by the rest.
 */
#include <iommukit/drv/smmuv3.h>
#include <iommukit/atomic.h>

#define L1STD_SPAN_MASK 0x1full
#define L1STD_L2PTR_MASK 0x000fffffffffffc0ull /* [51:6] */
#define L1CD_V 0x1ull
#define L1CD_L2PTR_MASK 0x000ffffffffff000ull /* [51:12] */
#define ENT_WORDS 8
#define ENT_BYTES 64u

/* [dma, dma + size) lies below 2^bits. */
static bool dma_fits(ik_u64 dma, ik_u64 size, unsigned bits)
{
	ik_u64 last = dma + size - 1;

	return last >= dma && (bits >= 64 || !(last >> bits));
}

static int dma_get(const struct ik_dma_mem *d, ik_size size, unsigned oas, void **cpu,
		   ik_u64 *dma)
{
	ik_size align = size < 64 ? 64 : size;
	int err;

	if (size < 64)
		size = 64;
	err = ik_dma_alloc(d, size, align, cpu, dma);
	if (err)
		return err;
	if (!dma_fits(*dma, size, oas)) {
		ik_dma_free(d, *cpu, *dma, size);
		*cpu = NULL;
		return -ERANGE;
	}
	ik_dma_clean(d, *cpu, *dma, size);
	return 0;
}

IK_API int ik_smmu_cfgi_ste_cmds(ik_u32 sid, bool leaf, struct ik_smmu_cmd out[2])
{
	if (!out)
		return -EINVAL;
	IK_ENV_MEMSET(out, 0, 2 * sizeof(*out));
	out[0].op = IK_SMMU_CMD_CFGI_STE;
	out[0].sid = sid;
	out[0].leaf = leaf;
	out[1].op = IK_SMMU_CMD_SYNC;
	return 2;
}

IK_API int ik_smmu_cfgi_cd_cmds(ik_u32 sid, ik_u32 ssid, bool leaf, struct ik_smmu_cmd out[2])
{
	if (!out || ssid >> 20)
		return -EINVAL;
	IK_ENV_MEMSET(out, 0, 2 * sizeof(*out));
	out[0].op = IK_SMMU_CMD_CFGI_CD;
	out[0].sid = sid;
	out[0].ssid = ssid;
	out[0].leaf = leaf;
	out[1].op = IK_SMMU_CMD_SYNC;
	return 2;
}

/* ---------------------------------------------------------------- the update order */

/* Who must be told, and how, once an entry changed. */
struct inval {
	ik_smmu_issue_fn fn;
	void *ctx;
	bool cd;
	ik_u32 sid, ssid;
	const ik_u32 *sids;
	unsigned nsids;
};

#define CFGI_GROUP 16

static int inval_run(const struct inval *iv, bool leaf)
{
	struct ik_smmu_cmd c[CFGI_GROUP];
	unsigned done = 0;

	if (!iv->fn)
		return 0;
	if (!iv->cd) {
		IK_ENV_MEMSET(&c[0], 0, sizeof(c[0]));
		c[0].op = IK_SMMU_CMD_CFGI_STE;
		c[0].sid = iv->sid;
		c[0].leaf = leaf;
		return iv->fn(iv->ctx, c, 1);
	}
	while (done < iv->nsids) {
		unsigned k = iv->nsids - done > CFGI_GROUP ? CFGI_GROUP : iv->nsids - done;
		int err;

		IK_ENV_MEMSET(c, 0, sizeof(c));
		for (unsigned i = 0; i < k; i++) {
			c[i].op = IK_SMMU_CMD_CFGI_CD;
			c[i].sid = iv->sids[done + i];
			c[i].ssid = iv->ssid;
			c[i].leaf = leaf;
		}
		err = iv->fn(iv->ctx, c, k);
		if (err)
			return err;
		done += k;
	}
	return 0;
}

/* An entry whose word 0 alone decides what the SMMU does: an invalid one
 * (both), or an STE with V = 1 and Config = abort. */
static bool quiet(bool cd, ik_u64 w0)
{
	if (cd)
		return !(w0 & IK_SMMU_CD_V);
	return !(w0 & IK_SMMU_STE_V) || ((w0 >> IK_SMMU_STE_CFG_SHIFT) & 7) == IK_SMMU_STE_CFG_ABORT;
}

static void put_words(ik_u64 *dst, const ik_u64 *src, unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++)
		if (ik_load_relaxed(&dst[i]) != src[i])
			ik_store_relaxed(&dst[i], src[i]); /* single-copy atomic */
}

/* Each store batch is followed by this: visible to the SMMU before what
 * comes next (a coherent SMMU: the write barrier; else the clean). */
static void publish(const struct ik_dma_mem *d, const ik_u64 *dst, ik_u64 dma)
{
	ik_dma_wmb();
	ik_dma_clean(d, dst, dma, ENT_BYTES);
}

static int entry_write(const struct ik_dma_mem *d, ik_u64 *dst, ik_u64 dma, const ik_u64 src[8],
		       const struct inval *iv, bool leaf)
{
	unsigned ndiff = 0;
	bool valid_now, cd = iv->cd;
	ik_u64 quiet0;
	int err;

	for (unsigned i = 0; i < ENT_WORDS; i++)
		if (ik_load_relaxed(&dst[i]) != src[i])
			ndiff++;
	if (!ndiff)
		return 0;
	valid_now = !quiet(cd, ik_load_relaxed(&dst[0]));
	if (!valid_now || ndiff == 1 || !iv->fn || quiet(cd, src[0])) {
		if (quiet(cd, src[0])) {
			/* Becoming invalid / abort: word 0 first, then the rest
			 * (which the SMMU no longer looks at). */
			put_words(dst, src, 0, 1);
			publish(d, dst, dma);
			put_words(dst, src, 1, ENT_WORDS);
		} else {
			put_words(dst, src, 1, ENT_WORDS);
			publish(d, dst, dma);
			put_words(dst, src, 0, 1);
		}
		publish(d, dst, dma);
		return inval_run(iv, leaf);
	}
	/* Break-before-make. */
	quiet0 = cd ? 0 : IK_SMMU_STE_V | (ik_u64)IK_SMMU_STE_CFG_ABORT << IK_SMMU_STE_CFG_SHIFT;
	ik_store_relaxed(&dst[0], quiet0);
	publish(d, dst, dma);
	err = inval_run(iv, leaf);
	if (err)
		return err;
	put_words(dst, src, 1, ENT_WORDS);
	publish(d, dst, dma);
	put_words(dst, src, 0, 1);
	publish(d, dst, dma);
	return inval_run(iv, leaf);
}

static bool all_zero(const ik_u64 *w)
{
	for (unsigned i = 0; i < ENT_WORDS; i++)
		if (w[i])
			return false;
	return true;
}

/* ---------------------------------------------------------------- 2-level bookkeeping */

/* One allocation for the CPU and device addresses of nl1 L2 tables. */
static int l2_book_alloc(const struct ik_allocator *a, ik_u32 nl1, ik_u64 ***cpu, ik_u64 **dma)
{
	ik_size sz = (ik_size)nl1 * (sizeof(ik_u64 *) + sizeof(ik_u64));
	void *p = ik_alloc(a, sz, 8);

	if (!p)
		return -ENOMEM;
	IK_ENV_MEMSET(p, 0, sz);
	*cpu = (ik_u64 **)p;
	*dma = (ik_u64 *)(void *)((ik_u8 *)p + (ik_size)nl1 * sizeof(ik_u64 *));
	return 0;
}

static void l2_book_free(const struct ik_allocator *a, ik_u64 **cpu, ik_u32 nl1)
{
	ik_free(a, cpu, (ik_size)nl1 * (sizeof(ik_u64 *) + sizeof(ik_u64)));
}

/*
 * Find (allocating on demand) the L2 table of L1 slot `i`: a new table is
 * zeroed and cleaned before its descriptor `desc | its address` is stored
 * and cleaned.  *fresh tells that a descriptor was installed.
 */
static int l2_get(const struct ik_dma_mem *d, unsigned oas, ik_u64 *l1, ik_u64 l1_dma,
		  ik_u64 **l2, ik_u64 *l2_dma, ik_u32 *count, ik_u32 i, ik_size l2_bytes,
		  ik_u64 addr_mask, ik_u64 desc, bool *fresh)
{
	void *cpu;
	ik_u64 dma;
	int err;

	*fresh = false;
	if (l2[i])
		return 0;
	err = dma_get(d, l2_bytes, oas, &cpu, &dma);
	if (err)
		return err;
	l2[i] = (ik_u64 *)cpu;
	l2_dma[i] = dma;
	(*count)++;
	ik_dma_wmb(); /* the zeroed table before the descriptor that names it */
	ik_store_relaxed(&l1[i], (dma & addr_mask) | desc);
	ik_dma_wmb();
	ik_dma_clean(d, &l1[i], l1_dma + (ik_u64)i * 8, 8);
	*fresh = true;
	return 0;
}

static void l2_free_all(const struct ik_dma_mem *d, ik_u64 **l2, const ik_u64 *l2_dma, ik_u32 nl1,
			ik_size l2_bytes)
{
	for (ik_u32 i = 0; i < nl1; i++)
		if (l2[i])
			ik_dma_free(d, l2[i], l2_dma[i], l2_bytes);
}

/* The base table of a stream or CD table: allocated in the SMMU's reach
 * (at least 64 bytes, *size raised to what was allocated); on failure the
 * 2-level bookkeeping `l2` (NULL for a linear table) is freed too. */
static int tab_base_get(const struct ik_dma_mem *d, const struct ik_allocator *a, unsigned oas,
			ik_size *size, ik_u64 **l2, ik_u32 nl1, ik_u64 **base, ik_u64 *base_dma)
{
	void *cpu;
	int err = dma_get(d, *size, oas, &cpu, base_dma);

	if (err) {
		if (l2)
			l2_book_free(a, l2, nl1);
		return err;
	}
	if (*size < 64)
		*size = 64;
	*base = (ik_u64 *)cpu;
	return 0;
}

/* Free a stream or CD table: its L2 tables and their bookkeeping (when
 * `l2`), then the base. */
static void tab_free(const struct ik_dma_mem *d, const struct ik_allocator *a, ik_u64 **l2,
		     const ik_u64 *l2_dma, ik_u32 nl1, ik_size l2_bytes, ik_u64 *base, ik_u64 base_dma,
		     ik_size base_size)
{
	if (l2) {
		l2_free_all(d, l2, l2_dma, nl1, l2_bytes);
		l2_book_free(a, l2, nl1);
	}
	ik_dma_free(d, base, base_dma, base_size);
}

/* ---------------------------------------------------------------- stream table */

IK_API int ik_smmu_strtab_init(struct ik_smmu_strtab *t, const struct ik_smmu_strtab_config *c)
{
	struct ik_smmu_strtab n;
	unsigned split;
	int err;

	if (!t || !c || !c->idr || !c->dma || !c->dma->alloc || !c->dma->free)
		return -EINVAL;
	split = c->split ? c->split : 8;
	if (!c->log2size || c->log2size > c->idr->sidsize || c->log2size > 32)
		return -EINVAL;
	IK_ENV_MEMSET(&n, 0, sizeof(n));
	n.dma = c->dma;
	n.alloc = c->alloc;
	n.log2size = (ik_u8)c->log2size;
	n.oas = c->idr->oas ? c->idr->oas : 32;
	n.coherent = ik_smmu_coherent(c->idr, c->dma);
	if (c->two_level) {
		if (c->idr->st_level != 1 || (split != 6 && split != 8 && split != 10) ||
		    c->log2size <= split || c->log2size - split > 17)
			return -EINVAL;
		n.two_level = true;
		n.split = (ik_u8)split;
		n.nl1 = (ik_u32)1 << (c->log2size - split);
		n.base_size = (ik_size)n.nl1 * 8;
		err = l2_book_alloc(c->alloc, n.nl1, &n.l2, &n.l2_dma);
		if (err)
			return err;
	} else {
		if (c->log2size > 24)
			return -EINVAL;
		n.base_size = (ik_size)ENT_BYTES << c->log2size;
	}
	err = tab_base_get(c->dma, c->alloc, n.oas, &n.base_size, n.l2, n.nl1, &n.base, &n.base_dma);
	if (err)
		return err;
	*t = n;
	return 0;
}

IK_API void ik_smmu_strtab_fini(struct ik_smmu_strtab *t)
{
	if (!t || !t->base)
		return;
	tab_free(t->dma, t->alloc, t->two_level ? t->l2 : NULL, t->l2_dma, t->nl1,
		 (ik_size)ENT_BYTES << t->split, t->base, t->base_dma, t->base_size);
	IK_ENV_MEMSET(t, 0, sizeof(*t));
}

IK_API void ik_smmu_strtab_regs(const struct ik_smmu_strtab *t, ik_u64 *base, ik_u32 *cfg)
{
	IK_ASSERT(t && base && cfg);
	*base = (t->base_dma & IK_SMMU_STRTAB_BASE_ADDR_MASK) |
		(t->coherent ? IK_SMMU_STRTAB_BASE_RA : 0);
	*cfg = (ik_u32)t->log2size << IK_SMMU_STRTAB_CFG_LOG2SIZE_SHIFT;
	if (t->two_level)
		*cfg |= (ik_u32)t->split << IK_SMMU_STRTAB_CFG_SPLIT_SHIFT |
			1u << IK_SMMU_STRTAB_CFG_FMT_SHIFT;
}

/* The STE of sid, or NULL where its L2 table does not exist. */
static ik_u64 *ste_at(const struct ik_smmu_strtab *t, ik_u32 sid, ik_u64 *dma)
{
	ik_u32 i, j;

	if (!t->two_level) {
		*dma = t->base_dma + (ik_u64)sid * ENT_BYTES;
		return t->base + (ik_size)sid * ENT_WORDS;
	}
	i = sid >> t->split;
	j = sid & (((ik_u32)1 << t->split) - 1);
	if (!t->l2[i])
		return NULL;
	*dma = t->l2_dma[i] + (ik_u64)j * ENT_BYTES;
	return t->l2[i] + (ik_size)j * ENT_WORDS;
}

static bool sid_ok(const struct ik_smmu_strtab *t, ik_u32 sid)
{
	return t->log2size >= 32 || sid < ((ik_u32)1 << t->log2size);
}

IK_API int ik_smmu_strtab_write(struct ik_smmu_strtab *t, ik_u32 sid, const ik_u64 ste[8],
				ik_smmu_issue_fn fn, void *ctx)
{
	struct inval iv;
	ik_u64 *e, dma = 0;
	bool fresh = false;
	int err;

	if (!t || !ste || !t->base || !sid_ok(t, sid))
		return -EINVAL;
	e = ste_at(t, sid, &dma);
	if (!e) {
		if (all_zero(ste))
			return 0; /* already invalid */
		err = l2_get(t->dma, t->oas, t->base, t->base_dma, t->l2, t->l2_dma,
			     &t->l2_tables, sid >> t->split, (ik_size)ENT_BYTES << t->split,
			     L1STD_L2PTR_MASK, (ik_u64)(t->split + 1) & L1STD_SPAN_MASK, &fresh);
		if (err)
			return err;
		e = ste_at(t, sid, &dma);
	}
	IK_ENV_MEMSET(&iv, 0, sizeof(iv));
	iv.fn = fn;
	iv.ctx = ctx;
	iv.sid = sid;
	/* After a new L1 descriptor, a non-leaf CFGI: the SMMU may have cached
	 * the invalid one. */
	return entry_write(t->dma, e, dma, ste, &iv, !fresh);
}

IK_API int ik_smmu_strtab_read(const struct ik_smmu_strtab *t, ik_u32 sid, ik_u64 ste[8])
{
	const ik_u64 *e;
	ik_u64 dma;

	if (!t || !ste || !t->base || !sid_ok(t, sid))
		return -EINVAL;
	e = ste_at(t, sid, &dma);
	for (unsigned i = 0; i < ENT_WORDS; i++)
		ste[i] = e ? ik_load_relaxed(&e[i]) : 0;
	return 0;
}

/* ---------------------------------------------------------------- CD table */

IK_API int ik_smmu_cdtab_init(struct ik_smmu_cdtab *t, const struct ik_smmu_cdtab_config *c)
{
	struct ik_smmu_cdtab n;
	int err;

	if (!t || !c || !c->idr || !c->dma || !c->dma->alloc || !c->dma->free)
		return -EINVAL;
	if (c->log2_cds > c->idr->ssidsize || c->log2_cds > 20 || c->fmt > IK_SMMU_S1FMT_2LVL_64K ||
	    (c->fmt != IK_SMMU_S1FMT_LINEAR && !c->idr->cd2l))
		return -EINVAL;
	IK_ENV_MEMSET(&n, 0, sizeof(n));
	n.dma = c->dma;
	n.alloc = c->alloc;
	n.log2_cds = (ik_u8)c->log2_cds;
	n.fmt = (ik_u8)c->fmt;
	n.oas = c->idr->oas ? c->idr->oas : 32;
	n.coherent = ik_smmu_coherent(c->idr, c->dma);
	if (c->fmt != IK_SMMU_S1FMT_LINEAR) {
		n.l2_log2 = c->fmt == IK_SMMU_S1FMT_2LVL_4K ? 6 : 10;
		n.nl1 = (ik_u32)1 << (c->log2_cds > n.l2_log2 ? c->log2_cds - n.l2_log2 : 0);
		n.base_size = (ik_size)n.nl1 * 8;
		err = l2_book_alloc(c->alloc, n.nl1, &n.l2, &n.l2_dma);
		if (err)
			return err;
	} else {
		n.base_size = (ik_size)ENT_BYTES << c->log2_cds;
	}
	err = tab_base_get(c->dma, c->alloc, n.oas, &n.base_size, n.l2, n.nl1, &n.base, &n.base_dma);
	if (err)
		return err;
	*t = n;
	return 0;
}

IK_API void ik_smmu_cdtab_fini(struct ik_smmu_cdtab *t)
{
	if (!t || !t->base)
		return;
	tab_free(t->dma, t->alloc, t->l2, t->l2_dma, t->nl1, (ik_size)ENT_BYTES << t->l2_log2,
		 t->base, t->base_dma, t->base_size);
	IK_ENV_MEMSET(t, 0, sizeof(*t));
}

IK_API void ik_smmu_cdtab_ste(const struct ik_smmu_cdtab *t, struct ik_smmu_ste_config *c)
{
	IK_ASSERT(t && c);
	c->s1_ctx_ptr = t->base_dma;
	c->s1_fmt = t->fmt;
	c->s1_cdmax = t->log2_cds;
	c->s1_cir = c->s1_cor = (ik_u8)(t->coherent ? IK_SMMU_S1C_WBRA : IK_SMMU_S1C_NC);
	c->s1_csh = (ik_u8)(t->coherent ? IK_SMMU_SH_ISH : IK_SMMU_SH_OSH);
}

static ik_u64 *cd_at(const struct ik_smmu_cdtab *t, ik_u32 ssid, ik_u64 *dma)
{
	ik_u32 i, j;

	if (t->fmt == IK_SMMU_S1FMT_LINEAR) {
		*dma = t->base_dma + (ik_u64)ssid * ENT_BYTES;
		return t->base + (ik_size)ssid * ENT_WORDS;
	}
	i = ssid >> t->l2_log2;
	j = ssid & (((ik_u32)1 << t->l2_log2) - 1);
	if (!t->l2[i])
		return NULL;
	*dma = t->l2_dma[i] + (ik_u64)j * ENT_BYTES;
	return t->l2[i] + (ik_size)j * ENT_WORDS;
}

IK_API int ik_smmu_cdtab_write(struct ik_smmu_cdtab *t, ik_u32 ssid, const ik_u64 cd[8],
			       const ik_u32 *sids, unsigned nsids, ik_smmu_issue_fn fn, void *ctx)
{
	struct inval iv;
	ik_u64 *e, dma = 0;
	bool fresh = false;
	int err;

	if (!t || !cd || !t->base || ssid >= ((ik_u32)1 << t->log2_cds) || (!sids && nsids))
		return -EINVAL;
	e = cd_at(t, ssid, &dma);
	if (!e) {
		if (all_zero(cd))
			return 0;
		err = l2_get(t->dma, t->oas, t->base, t->base_dma, t->l2, t->l2_dma,
			     &t->l2_tables, ssid >> t->l2_log2, (ik_size)ENT_BYTES << t->l2_log2,
			     L1CD_L2PTR_MASK, L1CD_V, &fresh);
		if (err)
			return err;
		e = cd_at(t, ssid, &dma);
	}
	IK_ENV_MEMSET(&iv, 0, sizeof(iv));
	iv.fn = fn;
	iv.ctx = ctx;
	iv.cd = true;
	iv.ssid = ssid;
	iv.sids = sids;
	iv.nsids = nsids;
	return entry_write(t->dma, e, dma, cd, &iv, !fresh);
}

IK_API int ik_smmu_cdtab_read(const struct ik_smmu_cdtab *t, ik_u32 ssid, ik_u64 cd[8])
{
	const ik_u64 *e;
	ik_u64 dma;

	if (!t || !cd || !t->base || ssid >= ((ik_u32)1 << t->log2_cds))
		return -EINVAL;
	e = cd_at(t, ssid, &dma);
	for (unsigned i = 0; i < ENT_WORDS; i++)
		cd[i] = e ? ik_load_relaxed(&e[i]) : 0;
	return 0;
}
