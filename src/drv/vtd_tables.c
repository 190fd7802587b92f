/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * VT-d translation structures (<iommukit/drv/vtd.h>): the root table,
 * legacy context tables, scalable-mode context tables, PASID directories and
 * PASID tables, in DMA memory.
 *
 * Write order, everywhere: a new table page is zeroed and cleaned before
 * anything points to it; an entry's words other than the one holding P are
 * written first and the P word last (release store: the compiler and CPU
 * keep the order, and the unit, which reads DMA memory in CPU store order on
 * x86, never sees P with stale words); the entry is cleaned (ECAP.C = 0)
 * before the level above is made to point to it.  Clearing writes the P word
 * first.  A present entry is never rewritten in place (-EBUSY): the caller
 * clears it, issues its invalidations, then sets it again.
 *
 * Every function checks its arguments and obtains all memory before the first
 * write; on failure what it allocated is freed again and nothing is written.
 */
#include "vtd_int.h"
#include <iommukit/pgtable.h>

#define PAGE 4096u

static ik_u64 *words_at(const struct vtd_page *pg, ik_size off)
{
	return (ik_u64 *)(void *)((ik_u8 *)pg->cpu + off);
}

/* Write words[0..n) of an entry: 1..n-1 first, word 0 (with P) last. */
static void entry_write(ik_u64 *e, const ik_u64 *w, unsigned n)
{
	for (unsigned i = n - 1; i > 0; i--)
		ik_store_relaxed(&e[i], w[i]);
	ik_store_release(&e[0], w[0]);
}

/* Clear an entry: word 0 (with P) first. */
static void entry_clear(ik_u64 *e, unsigned n)
{
	ik_store_release(&e[0], (ik_u64)0);
	for (unsigned i = 1; i < n; i++)
		ik_store_relaxed(&e[i], (ik_u64)0);
}

static void clean_entry(const struct ik_vtd *u, const struct vtd_page *pg, ik_size off,
			ik_size size)
{
	ik_vtd_tables_clean(u, (const ik_u8 *)pg->cpu + off, pg->dma + off, size);
}

int ik_vtd_root_get(struct ik_vtd *u, bool *fresh)
{
	int err;

	*fresh = false;
	if (u->root.cpu)
		return 0;
	err = ik_vtd_page_alloc(u, PAGE, PAGE, &u->root);
	if (err)
		return err;
	ik_vtd_tables_clean(u, u->root.cpu, u->root.dma, PAGE);
	*fresh = true;
	return 0;
}

static ik_size pdir_bytes(const struct ik_vtd *u)
{
	ik_size n = u->pasid_bits > 6 ? (ik_size)1 << (u->pasid_bits - 6) : 1;

	return n * 8 > PAGE ? n * 8 : PAGE;
}

static ik_u32 pdir_tables(const struct ik_vtd *u)
{
	return u->pasid_bits > 6 ? (ik_u32)1 << (u->pasid_bits - 6) : 1;
}

/* Free a PASID directory's bookkeeping; its DMA pages too when `pages`. */
static void pdir_free(struct ik_vtd *u, struct vtd_pdir *pd, bool pages)
{
	if (!pd)
		return;
	for (ik_u32 i = 0; pages && i < pd->ntables; i++)
		ik_vtd_page_free(u, &pd->tables[i], PAGE);
	if (pages)
		ik_vtd_page_free(u, &pd->dir, pd->dir_bytes);
	ik_free(u->alloc, pd->tables, sizeof(*pd->tables) * pd->ntables);
	ik_free(u->alloc, pd, sizeof(*pd));
}

void ik_vtd_tables_free(struct ik_vtd *u, bool pages)
{
	for (unsigned i = 0; i < IK_ARRAY_SIZE(u->ctx); i++) {
		struct vtd_ctx *c = &u->ctx[i];

		if (c->pdir) {
			for (unsigned k = 0; k < 128; k++)
				pdir_free(u, c->pdir[k], pages);
			ik_free(u->alloc, c->pdir, 128 * sizeof(*c->pdir));
			c->pdir = NULL;
		}
		if (pages)
			ik_vtd_page_free(u, &c->pg, PAGE);
	}
	if (pages)
		ik_vtd_page_free(u, &u->root, PAGE);
}

/* ---------------------------------------------------------------- checks */

static int check_did(const struct ik_vtd *u, ik_u16 did)
{
	if (did >= u->caps.domains || (u->caps.cm && did == 0))
		return -EINVAL;
	return 0;
}

/* The AW field for the unit's widest second-level depth (pass-through). */
static unsigned max_aw(const struct ik_vtd *u)
{
	for (unsigned aw = 3; aw >= 1; aw--)
		if (u->caps.sagaw & (1u << aw))
			return aw;
	return 0;
}

#define ATTACH_FLAGS                                                                        \
	(IK_VTD_ATTACH_ATS | IK_VTD_ATTACH_FPD | IK_VTD_ATTACH_PASSTHROUGH | IK_VTD_ATTACH_PASID)

/*
 * Check `a` and build the entry words: legacy (context entry, 2 words) or
 * scalable (PASID entry, 8 words).  *fl: the PASID entry is tagged by PASID
 * (first-level or pass-through).
 */
static int build_entry(const struct ik_vtd *u, const struct ik_vtd_attach *a, bool ctx_entry,
		       ik_u64 w[8], bool *fl)
{
	bool pt_mode = a->flags & IK_VTD_ATTACH_PASSTHROUGH;
	struct ik_pgtable_info info;
	struct ik_vtd_regs r;
	ik_u64 limit = (ik_u64)1 << u->haw;

	IK_ENV_MEMSET(w, 0, 8 * sizeof(*w));
	*fl = false;
	if ((a->flags & ~ATTACH_FLAGS) || check_did(u, a->did) || (pt_mode != !a->pt))
		return -EINVAL;
	if ((a->flags & IK_VTD_ATTACH_ATS) && !u->caps.dt)
		return -EINVAL;
	if ((a->flags & IK_VTD_ATTACH_PASID) && (!u->scalable || !ctx_entry || !u->caps.pasid))
		return -EINVAL;
	if (pt_mode) {
		unsigned aw = max_aw(u);

		if (!u->caps.pt || !aw)
			return -EINVAL;
		if (!u->scalable) {
			w[0] = IK_VTD_CTX_P | ((ik_u64)IK_VTD_CTX_TT_PASSTHROUGH << IK_VTD_CTX_TT_SHIFT);
			w[1] = ((ik_u64)aw << IK_VTD_CTX_AW_SHIFT) |
			       ((ik_u64)a->did << IK_VTD_CTX_DID_SHIFT);
		} else {
			w[0] = IK_VTD_PE_P | ((ik_u64)aw << IK_VTD_PE_AW_SHIFT) |
			       ((ik_u64)IK_VTD_PGTT_PT << IK_VTD_PE_PGTT_SHIFT);
			w[1] = a->did;
			*fl = true;
		}
	} else {
		if (ik_vtd_get_regs(a->pt, a->did, &r))
			return -EINVAL; /* not a VT-d table set */
		ik_pgtable_get_info(a->pt, &info);
		if (info.root_iommu >= limit || info.geom.oas > u->haw)
			return -EINVAL;
		if (info.geom.fmt == IK_PT_VTD_SL) {
			if (!(u->caps.sagaw & (1u << r.aw)) || (u->scalable && !u->caps.slts))
				return -EINVAL;
		} else {
			if (!u->scalable || !u->caps.flts || (r.flpm && !u->caps.fl5lp))
				return -EINVAL;
			*fl = true;
		}
		if (!u->scalable) {
			w[0] = r.context[0];
			w[1] = r.context[1];
			if (a->flags & IK_VTD_ATTACH_ATS)
				w[0] |= (ik_u64)IK_VTD_CTX_TT_DEVTLB << IK_VTD_CTX_TT_SHIFT;
		} else {
			for (unsigned i = 0; i < 8; i++)
				w[i] = r.pasid[i];
		}
	}
	if (a->flags & IK_VTD_ATTACH_FPD)
		w[0] |= u->scalable ? IK_VTD_PE_FPD : IK_VTD_CTX_FPD;
	return 0;
}

static int check_bdf(const struct ik_vtd *u, unsigned bus, unsigned devfn, const void *chg)
{
	(void)u;
	return (bus > 255 || devfn > 255 || !chg) ? -EINVAL : 0;
}

static void root_point(struct ik_vtd *u, unsigned bus, unsigned upper, ik_u64 ctp)
{
	ik_u64 *re = words_at(&u->root, (ik_size)bus * 16);

	/* One 64-bit word each: P with its pointer in one store. */
	ik_store_release(&re[upper], ctp | IK_VTD_RE_P);
	clean_entry(u, &u->root, (ik_size)bus * 16 + 8 * upper, 8);
}

/* The context table page at slot i (allocating it): *fresh if new. */
static int ctx_get(struct ik_vtd *u, unsigned i, bool *fresh)
{
	int err;

	*fresh = false;
	if (u->ctx[i].pg.cpu)
		return 0;
	err = ik_vtd_page_alloc(u, PAGE, PAGE, &u->ctx[i].pg);
	if (!err)
		*fresh = true;
	return err;
}

/* ---------------------------------------------------------------- legacy */

static int legacy_set(struct ik_vtd *u, unsigned bus, unsigned devfn,
		      const struct ik_vtd_attach *a, struct ik_vtd_change *chg)
{
	struct vtd_ctx *c = &u->ctx[bus];
	bool fresh_root, fresh_ctx, fl;
	ik_u64 w[8], *ce;
	int err;

	err = build_entry(u, a, true, w, &fl);
	if (err)
		return err;
	if (c->pg.cpu && (ik_load_relaxed(&words_at(&c->pg, (ik_size)devfn * 16)[0]) & IK_VTD_CTX_P))
		return -EBUSY;
	err = ik_vtd_root_get(u, &fresh_root);
	if (err)
		return err;
	err = ctx_get(u, bus, &fresh_ctx);
	if (err) {
		if (fresh_root)
			ik_vtd_page_free(u, &u->root, PAGE);
		return err;
	}
	ce = words_at(&c->pg, (ik_size)devfn * 16);
	entry_write(ce, w, 2);
	if (fresh_ctx) {
		clean_entry(u, &c->pg, 0, PAGE);
		root_point(u, bus, 0, c->pg.dma);
	} else {
		clean_entry(u, &c->pg, (ik_size)devfn * 16, 16);
	}
	IK_ENV_MEMSET(chg, 0, sizeof(*chg));
	chg->kind = IK_VTD_CHANGE_CONTEXT;
	chg->present = true;
	chg->ats = a->flags & IK_VTD_ATTACH_ATS;
	chg->sid = (ik_u16)(bus << 8 | devfn);
	chg->did = a->did;
	return 0;
}

static int legacy_clear(struct ik_vtd *u, unsigned bus, unsigned devfn,
			struct ik_vtd_change *chg)
{
	struct vtd_ctx *c = &u->ctx[bus];
	ik_u64 *ce, lo, hi;

	if (!c->pg.cpu)
		return -ENOENT;
	ce = words_at(&c->pg, (ik_size)devfn * 16);
	lo = ik_load_relaxed(&ce[0]);
	hi = ik_load_relaxed(&ce[1]);
	if (!(lo & IK_VTD_CTX_P))
		return -ENOENT;
	entry_clear(ce, 2);
	clean_entry(u, &c->pg, (ik_size)devfn * 16, 16);
	IK_ENV_MEMSET(chg, 0, sizeof(*chg));
	chg->kind = IK_VTD_CHANGE_CONTEXT;
	chg->ats = ((lo >> IK_VTD_CTX_TT_SHIFT) & 3) == IK_VTD_CTX_TT_DEVTLB;
	chg->sid = (ik_u16)(bus << 8 | devfn);
	chg->did = (ik_u16)(hi >> IK_VTD_CTX_DID_SHIFT);
	return 0;
}

/* ---------------------------------------------------------------- scalable */

/* The device's PASID directory and the PASID table of `pasid`, allocating
 * what is missing; *made: bit 0 ctx page, 1 pdir array, 2 pdir, 3 table. */
static int sm_prepare(struct ik_vtd *u, unsigned bus, unsigned devfn, ik_u32 pasid,
		      bool alloc_ctx, unsigned *made)
{
	struct vtd_ctx *c = &u->ctx[bus * 2 + (devfn >> 7)];
	unsigned idx = devfn & 127, ti = pasid >> 6;
	struct vtd_pdir *pd;
	bool fresh;
	int err;

	*made = 0;
	if (alloc_ctx) {
		err = ctx_get(u, bus * 2 + (devfn >> 7), &fresh);
		if (err)
			return err;
		*made |= fresh ? 1u : 0;
	}
	if (!c->pdir) {
		c->pdir = (struct vtd_pdir **)ik_alloc(u->alloc, 128 * sizeof(*c->pdir),
						       sizeof(void *));
		if (!c->pdir)
			return -ENOMEM;
		IK_ENV_MEMSET(c->pdir, 0, 128 * sizeof(*c->pdir));
		*made |= 2;
	}
	pd = c->pdir[idx];
	if (!pd) {
		pd = (struct vtd_pdir *)ik_alloc(u->alloc, sizeof(*pd), sizeof(void *));
		if (!pd)
			return -ENOMEM;
		IK_ENV_MEMSET(pd, 0, sizeof(*pd));
		pd->ntables = pdir_tables(u);
		pd->dir_bytes = pdir_bytes(u);
		pd->tables = (struct vtd_page *)ik_alloc(u->alloc, sizeof(*pd->tables) * pd->ntables,
							 sizeof(void *));
		if (!pd->tables) {
			ik_free(u->alloc, pd, sizeof(*pd));
			return -ENOMEM;
		}
		IK_ENV_MEMSET(pd->tables, 0, sizeof(*pd->tables) * pd->ntables);
		err = ik_vtd_page_alloc(u, pd->dir_bytes, PAGE, &pd->dir);
		if (err) {
			ik_free(u->alloc, pd->tables, sizeof(*pd->tables) * pd->ntables);
			ik_free(u->alloc, pd, sizeof(*pd));
			return err;
		}
		ik_vtd_tables_clean(u, pd->dir.cpu, pd->dir.dma, pd->dir_bytes);
		c->pdir[idx] = pd;
		*made |= 4;
	}
	if (!pd->tables[ti].cpu) {
		err = ik_vtd_page_alloc(u, PAGE, PAGE, &pd->tables[ti]);
		if (err)
			return err;
		ik_vtd_tables_clean(u, pd->tables[ti].cpu, pd->tables[ti].dma, PAGE);
		*made |= 8;
	}
	return 0;
}

/* Undo what sm_prepare() made (after a failure, nothing linked yet). */
static void sm_unprepare(struct ik_vtd *u, unsigned bus, unsigned devfn, ik_u32 pasid,
			 unsigned made)
{
	struct vtd_ctx *c = &u->ctx[bus * 2 + (devfn >> 7)];
	unsigned idx = devfn & 127;

	if ((made & 8) && c->pdir && c->pdir[idx])
		ik_vtd_page_free(u, &c->pdir[idx]->tables[pasid >> 6], PAGE);
	if ((made & 4) && c->pdir) {
		pdir_free(u, c->pdir[idx], true);
		c->pdir[idx] = NULL;
	}
	if ((made & 2) && c->pdir) {
		ik_free(u->alloc, c->pdir, 128 * sizeof(*c->pdir));
		c->pdir = NULL;
	}
	if (made & 1)
		ik_vtd_page_free(u, &c->pg, PAGE);
}

static ik_u64 *sm_ce(struct ik_vtd *u, unsigned bus, unsigned devfn)
{
	struct vtd_ctx *c = &u->ctx[bus * 2 + (devfn >> 7)];

	return c->pg.cpu ? words_at(&c->pg, (ik_size)(devfn & 127) * 32) : NULL;
}

static struct vtd_pdir *sm_pdir(struct ik_vtd *u, unsigned bus, unsigned devfn)
{
	struct vtd_ctx *c = &u->ctx[bus * 2 + (devfn >> 7)];

	return c->pdir ? c->pdir[devfn & 127] : NULL;
}

/* Write the PASID entry of `pasid` (its table exists), then the directory
 * entry if the table is new (made & 8). */
static void sm_pe_write(struct ik_vtd *u, struct vtd_pdir *pd, ik_u32 pasid, const ik_u64 w[8],
			bool new_table)
{
	struct vtd_page *t = &pd->tables[pasid >> 6];
	ik_size off = (ik_size)(pasid & 63) * 64;

	entry_write(words_at(t, off), w, 8);
	clean_entry(u, t, off, 64);
	if (new_table) {
		ik_u64 *pde = words_at(&pd->dir, (ik_size)(pasid >> 6) * 8);

		ik_store_release(pde, t->dma | IK_VTD_PDE_P);
		clean_entry(u, &pd->dir, (ik_size)(pasid >> 6) * 8, 8);
	}
}

static ik_u64 *sm_pe(struct vtd_pdir *pd, ik_u32 pasid)
{
	struct vtd_page *t;

	if (!pd || (pasid >> 6) >= pd->ntables)
		return NULL;
	t = &pd->tables[pasid >> 6];
	return t->cpu ? words_at(t, (ik_size)(pasid & 63) * 64) : NULL;
}

static void pe_change(struct ik_vtd_change *chg, unsigned bus, unsigned devfn, ik_u32 pasid,
		      const ik_u64 *pe_words, bool present, bool ats, ik_u8 kind)
{
	unsigned pgtt = (unsigned)(pe_words[0] >> IK_VTD_PE_PGTT_SHIFT) & 7;

	IK_ENV_MEMSET(chg, 0, sizeof(*chg));
	chg->kind = kind;
	chg->present = present;
	chg->ats = ats;
	chg->first_level = pgtt != IK_VTD_PGTT_SL;
	chg->sid = (ik_u16)(bus << 8 | devfn);
	chg->did = (ik_u16)pe_words[1];
	chg->pasid = pasid;
}

static int sm_set(struct ik_vtd *u, unsigned bus, unsigned devfn, const struct ik_vtd_attach *a,
		  struct ik_vtd_change *chg)
{
	unsigned half = devfn >> 7, slot = bus * 2 + half, made;
	struct vtd_ctx *c = &u->ctx[slot];
	ik_u64 w[8], cw[4] = { 0, 0, 0, 0 }, *ce;
	struct vtd_pdir *pd;
	bool fresh_root, fl;
	unsigned pdts;
	int err;

	err = build_entry(u, a, true, w, &fl);
	if (err)
		return err;
	ce = sm_ce(u, bus, devfn);
	if (ce && (ik_load_relaxed(&ce[0]) & IK_VTD_SMCE_P))
		return -EBUSY;
	err = ik_vtd_root_get(u, &fresh_root);
	if (err)
		return err;
	err = sm_prepare(u, bus, devfn, 0, true, &made);
	if (err) {
		sm_unprepare(u, bus, devfn, 0, made);
		if (fresh_root)
			ik_vtd_page_free(u, &u->root, PAGE);
		return err;
	}
	pd = c->pdir[devfn & 127];
	/* 1. the RID_PASID entry (and its directory entry) */
	sm_pe_write(u, pd, 0, w, made & 8);
	/* 2. the context entry, P last */
	for (pdts = 0; ((ik_size)128 << pdts) < pd->dir_bytes / 8; pdts++)
		;
	cw[0] = IK_VTD_SMCE_P | pd->dir.dma | ((ik_u64)pdts << IK_VTD_SMCE_PDTS_SHIFT);
	if (a->flags & IK_VTD_ATTACH_FPD)
		cw[0] |= IK_VTD_SMCE_FPD;
	if (a->flags & IK_VTD_ATTACH_ATS)
		cw[0] |= IK_VTD_SMCE_DTE;
	if (a->flags & IK_VTD_ATTACH_PASID)
		cw[0] |= IK_VTD_SMCE_PASIDE;
	cw[1] = 0; /* RID_PASID = 0 */
	ce = words_at(&c->pg, (ik_size)(devfn & 127) * 32);
	entry_write(ce, cw, 4);
	/* 3. the root entry's half, if the context table is new */
	if (made & 1) {
		clean_entry(u, &c->pg, 0, PAGE);
		root_point(u, bus, half, c->pg.dma);
	} else {
		clean_entry(u, &c->pg, (ik_size)(devfn & 127) * 32, 32);
	}
	pe_change(chg, bus, devfn, 0, w, true, a->flags & IK_VTD_ATTACH_ATS,
		  IK_VTD_CHANGE_CONTEXT);
	return 0;
}

static int sm_clear(struct ik_vtd *u, unsigned bus, unsigned devfn, struct ik_vtd_change *chg)
{
	struct vtd_ctx *c = &u->ctx[bus * 2 + (devfn >> 7)];
	ik_u64 *ce = sm_ce(u, bus, devfn), *pe, w[8];
	struct vtd_pdir *pd = sm_pdir(u, bus, devfn);
	bool ats;

	if (!ce || !(ik_load_relaxed(&ce[0]) & IK_VTD_SMCE_P))
		return -ENOENT;
	if (pd && pd->live)
		return -EBUSY;
	ats = ik_load_relaxed(&ce[0]) & IK_VTD_SMCE_DTE;
	pe = sm_pe(pd, 0);
	IK_ENV_MEMSET(w, 0, sizeof(w));
	if (pe)
		for (unsigned i = 0; i < 8; i++)
			w[i] = ik_load_relaxed(&pe[i]);
	entry_clear(ce, 4);
	clean_entry(u, &c->pg, (ik_size)(devfn & 127) * 32, 32);
	if (pe) {
		entry_clear(pe, 8);
		clean_entry(u, &pd->tables[0], 0, 64);
	}
	pe_change(chg, bus, devfn, 0, w, false, ats, IK_VTD_CHANGE_CONTEXT);
	return 0;
}

/* ---------------------------------------------------------------- API */

IK_API int ik_vtd_context_set(struct ik_vtd *u, unsigned bus, unsigned devfn,
			      const struct ik_vtd_attach *a, struct ik_vtd_change *chg)
{
	if (!u || !a || check_bdf(u, bus, devfn, chg))
		return -EINVAL;
	return u->scalable ? sm_set(u, bus, devfn, a, chg) : legacy_set(u, bus, devfn, a, chg);
}

IK_API int ik_vtd_context_clear(struct ik_vtd *u, unsigned bus, unsigned devfn,
				struct ik_vtd_change *chg)
{
	if (!u || check_bdf(u, bus, devfn, chg))
		return -EINVAL;
	return u->scalable ? sm_clear(u, bus, devfn, chg) : legacy_clear(u, bus, devfn, chg);
}

static int check_pasid(const struct ik_vtd *u, ik_u32 pasid)
{
	if (!u->scalable || pasid >= ((ik_u32)1 << u->pasid_bits))
		return -EINVAL;
	if (pasid && (!u->caps.pasid || pasid >= ((ik_u32)1 << u->caps.pasid_bits)))
		return -EINVAL;
	return 0;
}

IK_API int ik_vtd_pasid_set(struct ik_vtd *u, unsigned bus, unsigned devfn, ik_u32 pasid,
			    const struct ik_vtd_attach *a, struct ik_vtd_change *chg)
{
	struct vtd_pdir *pd;
	ik_u64 w[8], *ce, *pe, c0;
	unsigned made;
	bool fl;
	int err;

	if (!u || !a || check_bdf(u, bus, devfn, chg) || check_pasid(u, pasid))
		return -EINVAL;
	err = build_entry(u, a, false, w, &fl);
	if (err)
		return err;
	ce = sm_ce(u, bus, devfn);
	c0 = ce ? ik_load_relaxed(&ce[0]) : 0;
	if (!(c0 & IK_VTD_SMCE_P))
		return -ENOENT;
	if (pasid && !(c0 & IK_VTD_SMCE_PASIDE))
		return -EINVAL;
	pe = sm_pe(sm_pdir(u, bus, devfn), pasid);
	if (pe && (ik_load_relaxed(&pe[0]) & IK_VTD_PE_P))
		return -EBUSY;
	err = sm_prepare(u, bus, devfn, pasid, false, &made);
	if (err) {
		sm_unprepare(u, bus, devfn, pasid, made);
		return err;
	}
	pd = sm_pdir(u, bus, devfn);
	sm_pe_write(u, pd, pasid, w, made & 8);
	if (pasid)
		pd->live++;
	pe_change(chg, bus, devfn, pasid, w, true, c0 & IK_VTD_SMCE_DTE, IK_VTD_CHANGE_PASID);
	return 0;
}

IK_API int ik_vtd_pasid_clear(struct ik_vtd *u, unsigned bus, unsigned devfn, ik_u32 pasid,
			      struct ik_vtd_change *chg)
{
	struct vtd_pdir *pd;
	ik_u64 w[8], *ce, *pe;
	bool ats;

	if (!u || check_bdf(u, bus, devfn, chg) || check_pasid(u, pasid))
		return -EINVAL;
	ce = sm_ce(u, bus, devfn);
	pd = sm_pdir(u, bus, devfn);
	pe = sm_pe(pd, pasid);
	if (!ce || !pe || !(ik_load_relaxed(&pe[0]) & IK_VTD_PE_P))
		return -ENOENT;
	ats = ik_load_relaxed(&ce[0]) & IK_VTD_SMCE_DTE;
	for (unsigned i = 0; i < 8; i++)
		w[i] = ik_load_relaxed(&pe[i]);
	entry_clear(pe, 8);
	clean_entry(u, &pd->tables[pasid >> 6], (ik_size)(pasid & 63) * 64, 64);
	if (pasid)
		pd->live--;
	pe_change(chg, bus, devfn, pasid, w, false, ats, IK_VTD_CHANGE_PASID);
	return 0;
}
