/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * RISC-V IOMMU driver core (<iommukit/drv/riscv.h>): the capabilities
 * register, device contexts, the device directory and process directories.
 *
 * Directories are radix trees of 4 KiB tables: non-leaf entries are V [0] |
 * PPN [53:10]; leaf tables hold device contexts (32 or 64 bytes) or process
 * contexts (16 bytes).  The CPU addresses of lower tables are kept in
 * bookkeeping nodes beside the DMA tables (the device address of a table
 * need not be its CPU address).
 *
 * Every function checks its arguments and obtains all memory before the
 * first store into a table the IOMMU may read.
 */
#include <iommukit/drv/riscv.h>
#include <iommukit/atomic.h>
#include "drv_int.h"

#define PAGE 4096u
#define PPN_FIELD 0x003ffffffffffc00ull	/* [53:10] */
#define ATP_MODE(v) ((unsigned)((v) >> IK_RISCV_ATP_MODE_SHIFT))
#define ATP_ROOT(v) (((v) & IK_RISCV_ATP_PPN_MASK) << 12)
#define ADDR56 0x00fffffffffff000ull

/* ================================================================ capabilities */

IK_API int ik_riscv_caps_decode(ik_u64 reg, struct ik_riscv_caps *out)
{
	struct ik_riscv_caps c;

	if (!out)
		return -EINVAL;
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.raw = reg;
	c.version = (ik_u8)(reg & IK_RISCV_CAP_VERSION_MASK);
	c.igs = (ik_u8)((reg >> IK_RISCV_CAP_IGS_SHIFT) & 3);
	c.pas = (ik_u8)((reg >> IK_RISCV_CAP_PAS_SHIFT) & 0x3f);
	if ((c.version >> 4) != 1 || c.igs == 3 || c.pas < 32 || c.pas > 56)
		return -EINVAL;
	c.sv39 = (reg & IK_RISCV_CAP_SV39) != 0;
	c.sv48 = (reg & IK_RISCV_CAP_SV48) != 0;
	c.sv57 = (reg & IK_RISCV_CAP_SV57) != 0;
	c.sv39x4 = (reg & IK_RISCV_CAP_SV39X4) != 0;
	c.sv48x4 = (reg & IK_RISCV_CAP_SV48X4) != 0;
	c.sv57x4 = (reg & IK_RISCV_CAP_SV57X4) != 0;
	c.svpbmt = (reg & IK_RISCV_CAP_SVPBMT) != 0;
	c.amo_mrif = (reg & IK_RISCV_CAP_AMO_MRIF) != 0;
	c.msi_flat = (reg & IK_RISCV_CAP_MSI_FLAT) != 0;
	c.msi_mrif = (reg & IK_RISCV_CAP_MSI_MRIF) != 0;
	c.amo_hwad = (reg & IK_RISCV_CAP_AMO_HWAD) != 0;
	c.ats = (reg & IK_RISCV_CAP_ATS) != 0;
	c.t2gpa = (reg & IK_RISCV_CAP_T2GPA) != 0;
	c.end = (reg & IK_RISCV_CAP_END) != 0;
	c.hpm = (reg & IK_RISCV_CAP_HPM) != 0;
	c.dbg = (reg & IK_RISCV_CAP_DBG) != 0;
	c.pd8 = (reg & IK_RISCV_CAP_PD8) != 0;
	c.pd17 = (reg & IK_RISCV_CAP_PD17) != 0;
	c.pd20 = (reg & IK_RISCV_CAP_PD20) != 0;
	*out = c;
	return 0;
}

/* The capabilities have atp MODE `mode` (8..10) for a first stage (s2
 * false) or a G-stage. */
static bool caps_mode(const struct ik_riscv_caps *c, bool s2, unsigned mode)
{
	switch (mode) {
	case IK_RISCV_ATP_MODE_SV39:
		return s2 ? c->sv39x4 : c->sv39;
	case IK_RISCV_ATP_MODE_SV48:
		return s2 ? c->sv48x4 : c->sv48;
	case IK_RISCV_ATP_MODE_SV57:
		return s2 ? c->sv57x4 : c->sv57;
	default:
		return false;
	}
}

/* The capabilities have pdtp MODE `mode` (1..3). */
static bool caps_pd(const struct ik_riscv_caps *c, unsigned mode)
{
	return (mode == IK_RISCV_PDTP_MODE_PD8 && c->pd8) ||
	       (mode == IK_RISCV_PDTP_MODE_PD17 && c->pd17) ||
	       (mode == IK_RISCV_PDTP_MODE_PD20 && c->pd20);
}

/* ================================================================ device contexts */

/* The atp of a RISC-V table set of format fmt, checked against caps:
 * *dirty its IK_PT_QUIRK_DIRTY. */
static int table_atp(const struct ik_riscv_caps *caps, const struct ik_pgtable *pt,
		     enum ik_pt_fmt fmt, ik_u16 gscid, ik_u64 *atp, bool *dirty)
{
	struct ik_pgtable_info info;

	ik_pgtable_get_info(pt, &info);
	if (info.geom.fmt != fmt || (info.root_iommu & ~ADDR56))
		return -EINVAL;
	if (ik_riscv_get_atp(pt, gscid, atp) ||
	    !caps_mode(caps, fmt == IK_PT_RISCV_S2, ATP_MODE(*atp)))
		return -EINVAL;
	*dirty = (info.geom.quirks & IK_PT_QUIRK_DIRTY) != 0;
	if (*dirty && !caps->amo_hwad)
		return -EINVAL;
	if (fmt == IK_PT_RISCV_S1 && (info.geom.fmt_flags & IK_RISCV_FLAG_SUM))
		return -EINVAL;	/* callers with SUM: the process context sets it */
	return 0;
}

IK_API int ik_riscv_dc_build(const struct ik_riscv_caps *caps, const struct ik_riscv_dc_config *c,
			     ik_u64 *dc)
{
	ik_u64 w[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	unsigned words;
	bool dirty;
	ik_u32 f;

	if (!caps || !c || !dc || (c->flags & ~IK_RISCV_DC_FLAGS_ALL) || (c->s1 && c->pdt) ||
	    c->gscid > IK_RISCV_MAX_GSCID || c->pscid > IK_RISCV_MAX_PSCID ||
	    (c->gscid && !c->s2) || (c->pscid && !c->s1))
		return -EINVAL;
	f = c->flags;
	if (((f & IK_RISCV_DC_EN_ATS) && !caps->ats) ||
	    ((f & (IK_RISCV_DC_EN_PRI | IK_RISCV_DC_T2GPA)) && !(f & IK_RISCV_DC_EN_ATS)) ||
	    ((f & IK_RISCV_DC_T2GPA) && (!caps->t2gpa || !c->s2)) ||
	    ((f & IK_RISCV_DC_PRPR) && !(f & IK_RISCV_DC_EN_PRI)) ||
	    ((f & IK_RISCV_DC_DPE) && !c->pdt))
		return -EINVAL;
	if (c->extended) {
		unsigned m = ATP_MODE(c->msiptp);

		if (!caps->msi_flat || (c->msiptp & IK_RISCV_PTR_RSVD) ||
		    m > IK_RISCV_MSIPTP_MODE_FLAT || (m == 0 && (c->msiptp & IK_RISCV_ATP_PPN_MASK)) ||
		    (c->msi_addr_mask & ~IK_RISCV_MSI_ADDR_MASK) ||
		    (c->msi_addr_pattern & ~IK_RISCV_MSI_ADDR_MASK))
			return -EINVAL;
		w[4] = c->msiptp;
		w[5] = c->msi_addr_mask;
		w[6] = c->msi_addr_pattern;
	} else if (c->msiptp || c->msi_addr_mask || c->msi_addr_pattern) {
		return -EINVAL;
	}
	w[0] = IK_RISCV_TC_V;
	if (f & IK_RISCV_DC_EN_ATS)
		w[0] |= IK_RISCV_TC_EN_ATS;
	if (f & IK_RISCV_DC_EN_PRI)
		w[0] |= IK_RISCV_TC_EN_PRI;
	if (f & IK_RISCV_DC_T2GPA)
		w[0] |= IK_RISCV_TC_T2GPA;
	if (f & IK_RISCV_DC_DTF)
		w[0] |= IK_RISCV_TC_DTF;
	if (f & IK_RISCV_DC_PRPR)
		w[0] |= IK_RISCV_TC_PRPR;
	if (f & IK_RISCV_DC_DPE)
		w[0] |= IK_RISCV_TC_DPE;
	if (c->s2) {
		if (table_atp(caps, c->s2, IK_PT_RISCV_S2, (ik_u16)c->gscid, &w[1], &dirty))
			return -EINVAL;
		if (dirty)
			w[0] |= IK_RISCV_TC_GADE;
	}
	if (c->s1) {
		if (table_atp(caps, c->s1, IK_PT_RISCV_S1, 0, &w[3], &dirty))
			return -EINVAL;
		if (dirty)
			w[0] |= IK_RISCV_TC_SADE;
		w[2] = (ik_u64)c->pscid << IK_RISCV_TA_PSCID_SHIFT;
	} else if (c->pdt) {
		if (!c->pdt->d.root)
			return -EINVAL;
		w[3] = ik_riscv_pdt_fsc(c->pdt);
		if (!caps_pd(caps, ATP_MODE(w[3])))
			return -EINVAL;
		w[0] |= IK_RISCV_TC_PDTV;
	}
	words = c->extended ? 8u : 4u;
	for (unsigned i = 0; i < words; i++)
		dc[i] = w[i];
	return 0;
}

IK_API int ik_riscv_dc_decode(const struct ik_riscv_caps *caps, const ik_u64 *dc, bool extended,
			      struct ik_riscv_dc *out)
{
	struct ik_riscv_dc d;
	ik_u64 tc;

	if (!dc || !out)
		return -EINVAL;
	IK_ENV_MEMSET(&d, 0, sizeof(d));
	tc = dc[0];
	d.tc = tc;
	if (!(tc & IK_RISCV_TC_V)) {
		*out = d;	/* the IOMMU ignores the rest */
		return 0;
	}
	if ((tc & (IK_RISCV_TC_RSVD | IK_RISCV_TC_SXL | IK_RISCV_TC_SBE)) ||
	    (dc[2] & IK_RISCV_DC_TA_RSVD) || (dc[3] & IK_RISCV_PTR_RSVD))
		return -EINVAL;
	d.v = true;
	d.pdtv = (tc & IK_RISCV_TC_PDTV) != 0;
	d.iohgatp_mode = (ik_u8)ATP_MODE(dc[1]);
	d.gscid = (ik_u16)((dc[1] & IK_RISCV_ATP_GSCID_MASK) >> IK_RISCV_ATP_GSCID_SHIFT);
	d.iohgatp_root = ATP_ROOT(dc[1]);
	d.pscid = (ik_u32)(dc[2] >> IK_RISCV_TA_PSCID_SHIFT);
	d.fsc_mode = (ik_u8)ATP_MODE(dc[3]);
	d.fsc_root = ATP_ROOT(dc[3]);
	if (d.iohgatp_mode != IK_RISCV_ATP_MODE_BARE &&
	    (d.iohgatp_mode < IK_RISCV_ATP_MODE_SV39 || d.iohgatp_mode > IK_RISCV_ATP_MODE_SV57))
		return -EINVAL;
	if (d.iohgatp_mode == IK_RISCV_ATP_MODE_BARE && dc[1])
		return -EINVAL;	/* Bare: GSCID and PPN must be 0 */
	if (d.iohgatp_root & 0x3fffu)
		return -EINVAL;	/* the G-stage root is 16 KiB */
	if (d.pdtv ? d.fsc_mode > IK_RISCV_PDTP_MODE_PD20
		   : (d.fsc_mode != IK_RISCV_ATP_MODE_BARE &&
		      (d.fsc_mode < IK_RISCV_ATP_MODE_SV39 || d.fsc_mode > IK_RISCV_ATP_MODE_SV57)))
		return -EINVAL;
	if (((tc & (IK_RISCV_TC_EN_PRI | IK_RISCV_TC_T2GPA)) && !(tc & IK_RISCV_TC_EN_ATS)) ||
	    ((tc & IK_RISCV_TC_PRPR) && !(tc & IK_RISCV_TC_EN_PRI)) ||
	    ((tc & IK_RISCV_TC_T2GPA) && d.iohgatp_mode == IK_RISCV_ATP_MODE_BARE) ||
	    ((tc & IK_RISCV_TC_DPE) && !d.pdtv))
		return -EINVAL;
	if (extended) {
		if ((dc[4] & IK_RISCV_PTR_RSVD) || ATP_MODE(dc[4]) > IK_RISCV_MSIPTP_MODE_FLAT ||
		    (dc[5] & ~IK_RISCV_MSI_ADDR_MASK) || (dc[6] & ~IK_RISCV_MSI_ADDR_MASK) || dc[7])
			return -EINVAL;
		d.msiptp_mode = (ik_u8)ATP_MODE(dc[4]);
		d.msiptp_root = ATP_ROOT(dc[4]);
		d.msi_addr_mask = dc[5];
		d.msi_addr_pattern = dc[6];
	}
	if (caps) {
		if ((d.iohgatp_mode && !caps_mode(caps, true, d.iohgatp_mode)) ||
		    (!d.pdtv && d.fsc_mode && !caps_mode(caps, false, d.fsc_mode)) ||
		    (d.pdtv && d.fsc_mode && !caps_pd(caps, d.fsc_mode)) ||
		    ((tc & IK_RISCV_TC_EN_ATS) && !caps->ats) ||
		    ((tc & IK_RISCV_TC_T2GPA) && !caps->t2gpa) ||
		    ((tc & (IK_RISCV_TC_SADE | IK_RISCV_TC_GADE)) && !caps->amo_hwad) ||
		    (d.msiptp_mode && !caps->msi_flat))
			return -EINVAL;
	}
	*out = d;
	return 0;
}

/* ================================================================ directories */

struct ik_riscv_dir_node {
	ik_u64 *cpu;	/* the table page */
	ik_u64 dma;	/* its device address */
	struct ik_riscv_dir_node **child;	/* non-leaf tables: the children by index */
};

#define NODE_SLOTS 512u

static ik_size node_bytes(bool nonleaf)
{
	return sizeof(struct ik_riscv_dir_node) +
	       (nonleaf ? NODE_SLOTS * sizeof(struct ik_riscv_dir_node *) : 0);
}

static void publish(const struct ik_dma_mem *d, const void *cpu, ik_u64 dma, ik_size size)
{
	ik_dma_wmb();
	ik_dma_clean(d, cpu, dma, size);
}

/* A new zeroed table below 2^oas and its node (not linked, not cleaned). */
static int node_new(struct ik_riscv_dir *d, bool nonleaf, struct ik_riscv_dir_node **out)
{
	struct ik_riscv_dir_node *n = (struct ik_riscv_dir_node *)ik_alloc(d->alloc,
									   node_bytes(nonleaf), 8);
	void *p;
	ik_u64 dma;
	int err;

	if (!n)
		return -ENOMEM;
	IK_ENV_MEMSET(n, 0, node_bytes(nonleaf));
	if (nonleaf)
		n->child = (struct ik_riscv_dir_node **)(void *)(n + 1);
	err = ik_drv_dma_alloc_below(d->dma, PAGE, PAGE, d->oas, &p, &dma);
	if (err) {
		ik_free(d->alloc, n, node_bytes(nonleaf));
		return err;
	}
	IK_ENV_MEMSET(p, 0, PAGE);
	n->cpu = (ik_u64 *)p;
	n->dma = dma;
	*out = n;
	return 0;
}

static void node_free(struct ik_riscv_dir *d, struct ik_riscv_dir_node *n, unsigned level)
{
	if (!n)
		return;
	if (level > 0)
		for (unsigned i = 0; i < NODE_SLOTS; i++)
			node_free(d, n->child[i], level - 1);
	ik_dma_free(d->dma, n->cpu, n->dma, PAGE);
	ik_free(d->alloc, n, node_bytes(level > 0));
}

static unsigned dir_shift(const struct ik_riscv_dir *d, unsigned level)
{
	unsigned s = 0;

	for (unsigned i = 0; i < level; i++)
		s += d->bits[i];
	return s;
}

static unsigned dir_index(const struct ik_riscv_dir *d, ik_u32 id, unsigned level)
{
	return (unsigned)(id >> dir_shift(d, level)) & ((1u << d->bits[level]) - 1);
}

static ik_u32 dir_max(const struct ik_riscv_dir *d)
{
	unsigned bits = dir_shift(d, d->levels);

	return bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
}

static int dir_init(struct ik_riscv_dir *d, const struct ik_dma_mem *dma,
		    const struct ik_allocator *alloc, unsigned levels, const ik_u8 *bits,
		    unsigned leaf_words, unsigned oas)
{
	struct ik_riscv_dir n;
	int err;

	IK_ENV_MEMSET(&n, 0, sizeof(n));
	n.dma = dma;
	n.alloc = alloc;
	n.levels = (ik_u8)levels;
	for (unsigned i = 0; i < 3; i++)
		n.bits[i] = bits[i];
	n.leaf_words = (ik_u8)leaf_words;
	n.oas = (ik_u8)oas;
	err = node_new(&n, levels > 1, &n.root);
	if (err)
		return err;
	publish(dma, n.root->cpu, n.root->dma, PAGE);
	n.tables = 1;
	*d = n;
	return 0;
}

static void dir_fini(struct ik_riscv_dir *d)
{
	node_free(d, d->root, d->levels - 1u);
}

/* The leaf table holding id's entry, or NULL where none exists. */
static struct ik_riscv_dir_node *dir_leaf(const struct ik_riscv_dir *d, ik_u32 id)
{
	struct ik_riscv_dir_node *n = d->root;

	for (unsigned l = d->levels - 1u; l > 0 && n; l--)
		n = n->child[dir_index(d, id, l)];
	return n;
}

/* The leaf table of id, made where missing: every new table is allocated
 * first (nothing is linked on failure), then linked bottom up, each page
 * cleaned before the entry that names it is stored. */
static int dir_make(struct ik_riscv_dir *d, ik_u32 id, struct ik_riscv_dir_node **leaf)
{
	struct ik_riscv_dir_node *path[3] = { NULL, NULL, NULL }, *fresh[3] = { NULL, NULL, NULL };
	unsigned top = d->levels - 1u;
	int err;

	path[top] = d->root;
	for (unsigned l = top; l > 0; l--) {
		struct ik_riscv_dir_node *c = path[l]->child[dir_index(d, id, l)];

		if (!c) {
			err = node_new(d, l - 1 > 0, &fresh[l - 1]);
			if (err) {
				for (unsigned k = l; k < 3; k++)
					node_free(d, fresh[k], k);
				return err;
			}
			c = fresh[l - 1];
		}
		path[l - 1] = c;
	}
	for (unsigned l = 1; l <= top; l++) {
		struct ik_riscv_dir_node *c = fresh[l - 1], *p = path[l];
		unsigned i = dir_index(d, id, l);

		if (!c)
			continue;
		publish(d->dma, c->cpu, c->dma, PAGE);
		p->child[i] = c;
		d->tables++;
		ik_store_release(&p->cpu[i], ((c->dma >> 12) << 10 & PPN_FIELD) | IK_RISCV_DIR_V);
		publish(d->dma, &p->cpu[i], p->dma + (ik_u64)i * 8, 8);
	}
	*leaf = path[0];
	return 0;
}

/* The entry of id in its leaf table (CPU and device address). */
static ik_u64 *dir_entry(const struct ik_riscv_dir *d, struct ik_riscv_dir_node *leaf, ik_u32 id,
			 ik_u64 *dma)
{
	ik_size off = (ik_size)dir_index(d, id, 0) * d->leaf_words;

	*dma = leaf->dma + (ik_u64)off * 8;
	return leaf->cpu + off;
}

static unsigned dir_oas(const struct ik_riscv_caps *caps, unsigned oas)
{
	return oas ? oas : caps->pas;
}

IK_API int ik_riscv_issue_cmdq(void *ctx, const struct ik_riscv_plan *p)
{
	return ik_riscv_plan_issue((struct ik_cmdq *)ctx, p);
}

/* ---- device directory ---- */

IK_API int ik_riscv_ddt_init(struct ik_riscv_ddt *t, const struct ik_riscv_ddt_config *c)
{
	static const ik_u8 base_bits[3] = { 7, 9, 8 }, ext_bits[3] = { 6, 9, 9 };
	unsigned oas;
	int err;

	if (!t || !c || !c->caps || !c->dma || !c->dma->alloc || !c->dma->free ||
	    c->levels < 1 || c->levels > 3 || (c->extended && !c->caps->msi_flat))
		return -EINVAL;
	oas = dir_oas(c->caps, c->oas);
	if (oas < 32 || oas > 56)
		return -EINVAL;
	err = dir_init(&t->d, c->dma, c->alloc, c->levels, c->extended ? ext_bits : base_bits,
		       c->extended ? 8u : 4u, oas);
	if (err)
		return err;
	t->caps = *c->caps;
	t->extended = c->extended;
	return 0;
}

IK_API void ik_riscv_ddt_fini(struct ik_riscv_ddt *t)
{
	if (!t || !t->d.root)
		return;
	dir_fini(&t->d);
	IK_ENV_MEMSET(t, 0, sizeof(*t));
}

IK_API ik_u64 ik_riscv_ddt_reg(const struct ik_riscv_ddt *t)
{
	IK_ASSERT(t && t->d.root);
	return ((t->d.root->dma >> 12) << 10 & IK_RISCV_DDTP_PPN_MASK) |
	       (IK_RISCV_DDTP_MODE_1LVL + t->d.levels - 1u);
}

IK_API ik_u32 ik_riscv_ddt_max_did(const struct ik_riscv_ddt *t)
{
	IK_ASSERT(t && t->d.root);
	return dir_max(&t->d);
}

/* What leaving the old context `o` for `n` needs flushed (both decoded). */
static void dc_change(const ik_u64 *o, const struct ik_riscv_dc *od, const ik_u64 *n,
		      const struct ik_riscv_dc *nd, ik_u32 did, struct ik_riscv_change *c)
{
	IK_ENV_MEMSET(c, 0, sizeof(*c));
	c->kind = IK_RISCV_CHANGE_DC;
	c->did = did;
	if (!od->v)
		return;
	if (!od->pdtv && od->fsc_mode &&
	    !(nd->v && !nd->pdtv && n[3] == o[3] && n[2] == o[2] && n[1] == o[1])) {
		c->flags |= IK_RISCV_CHANGE_FLUSH_PSCID;
		c->pscid = od->pscid;
		if (od->iohgatp_mode) {
			c->flags |= IK_RISCV_CHANGE_GV;
			c->gscid = od->gscid;
		}
	}
	if (od->iohgatp_mode && !(nd->v && n[1] == o[1])) {
		c->flags |= IK_RISCV_CHANGE_FLUSH_GSCID;
		c->gscid = od->gscid;
	}
}

static int issue_change(ik_riscv_issue_fn fn, void *ctx, const struct ik_riscv_change *c)
{
	struct ik_riscv_plan p;
	int err;

	if (!fn)
		return 0;
	err = ik_riscv_plan_change(c, &p);
	return err ? err : fn(ctx, &p);
}

IK_API int ik_riscv_ddt_write(struct ik_riscv_ddt *t, ik_u32 did, const ik_u64 *dc,
			      ik_riscv_issue_fn fn, void *ctx, struct ik_riscv_change *chg)
{
	struct ik_riscv_dir_node *leaf;
	struct ik_riscv_dc od, nd;
	struct ik_riscv_change c;
	ik_u64 old[8], *e, dma;
	unsigned words;
	bool same = true;
	int err;

	if (!t || !dc || !t->d.root || did > dir_max(&t->d) ||
	    ik_riscv_dc_decode(&t->caps, dc, t->extended, &nd))
		return -EINVAL;
	words = t->extended ? 8u : 4u;
	err = ik_riscv_ddt_read(t, did, old);
	if (err)
		return err;
	for (unsigned i = 0; i < words; i++)
		same &= old[i] == dc[i];
	/* Our own table: a valid old context decodes unless someone else
	 * wrote it; then flush what its raw fields name. */
	if (ik_riscv_dc_decode(NULL, old, t->extended, &od)) {
		IK_ENV_MEMSET(&od, 0, sizeof(od));
		od.v = true;
		od.fsc_mode = (ik_u8)ATP_MODE(old[3]);
		od.pdtv = (old[0] & IK_RISCV_TC_PDTV) != 0;
		od.pscid = (ik_u32)(old[2] >> IK_RISCV_TA_PSCID_SHIFT) & IK_RISCV_MAX_PSCID;
		od.iohgatp_mode = (ik_u8)ATP_MODE(old[1]);
		od.gscid = (ik_u16)((old[1] & IK_RISCV_ATP_GSCID_MASK) >> IK_RISCV_ATP_GSCID_SHIFT);
	}
	dc_change(old, &od, dc, &nd, did, &c);
	if (same) {
		if (chg) {
			IK_ENV_MEMSET(chg, 0, sizeof(*chg));
			chg->kind = IK_RISCV_CHANGE_DC;
			chg->did = did;
		}
		return 0;
	}
	leaf = dir_leaf(&t->d, did);
	if (!leaf) {
		err = dir_make(&t->d, did, &leaf);
		if (err)
			return err;
	}
	if (chg)
		*chg = c;
	e = dir_entry(&t->d, leaf, did, &dma);
	if (od.v) {
		/* Break: an invalid context first; the old context's
		 * invalidations complete while the device faults. */
		ik_store_release(&e[0], (ik_u64)0);
		publish(t->d.dma, e, dma, (ik_size)words * 8);
		err = issue_change(fn, ctx, &c);
		if (err)
			return err;
		IK_ENV_MEMSET(&c, 0, sizeof(c));
		c.kind = IK_RISCV_CHANGE_DC;
		c.did = did;
		if (!nd.v) {
			/* V stays 0: the other words as given, in any order */
			for (unsigned i = 1; i < words; i++)
				ik_store_relaxed(&e[i], dc[i]);
			ik_store_release(&e[0], dc[0]);
			publish(t->d.dma, e, dma, (ik_size)words * 8);
			return 0;
		}
	}
	for (unsigned i = 1; i < words; i++)
		ik_store_relaxed(&e[i], dc[i]);
	publish(t->d.dma, e, dma, (ik_size)words * 8);
	ik_store_release(&e[0], dc[0]);
	publish(t->d.dma, e, dma, 8);
	return issue_change(fn, ctx, &c);
}

IK_API int ik_riscv_ddt_read(const struct ik_riscv_ddt *t, ik_u32 did, ik_u64 *dc)
{
	struct ik_riscv_dir_node *leaf;
	unsigned words;

	if (!t || !dc || !t->d.root || did > dir_max(&t->d))
		return -EINVAL;
	words = t->extended ? 8u : 4u;
	leaf = dir_leaf(&t->d, did);
	if (!leaf) {
		for (unsigned i = 0; i < words; i++)
			dc[i] = 0;
	} else {
		ik_u64 dma, *e = dir_entry(&t->d, leaf, did, &dma);

		for (unsigned i = 0; i < words; i++)
			dc[i] = ik_load_relaxed(&e[i]);
	}
	return 0;
}

/* ---- process directories ---- */

IK_API int ik_riscv_pdt_init(struct ik_riscv_pdt *t, const struct ik_riscv_pdt_config *c)
{
	static const ik_u8 pd_bits[3] = { 8, 9, 3 };
	unsigned oas, levels;
	int err;

	if (!t || !c || !c->caps || !c->dma || !c->dma->alloc || !c->dma->free)
		return -EINVAL;
	levels = c->pid_bits == 8 ? 1u : c->pid_bits == 17 ? 2u : c->pid_bits == 20 ? 3u : 0u;
	if (!levels || !caps_pd(c->caps, levels))
		return -EINVAL;
	oas = dir_oas(c->caps, c->oas);
	if (oas < 32 || oas > 56)
		return -EINVAL;
	err = dir_init(&t->d, c->dma, c->alloc, levels, pd_bits, 2, oas);
	if (err)
		return err;
	t->caps = *c->caps;
	return 0;
}

IK_API void ik_riscv_pdt_fini(struct ik_riscv_pdt *t)
{
	if (!t || !t->d.root)
		return;
	dir_fini(&t->d);
	IK_ENV_MEMSET(t, 0, sizeof(*t));
}

IK_API ik_u64 ik_riscv_pdt_fsc(const struct ik_riscv_pdt *t)
{
	IK_ASSERT(t && t->d.root);
	/* PD8, PD17, PD20 = 1, 2, 3 levels */
	return (ik_u64)t->d.levels << IK_RISCV_ATP_MODE_SHIFT |
	       ((t->d.root->dma >> 12) & IK_RISCV_ATP_PPN_MASK);
}

IK_API int ik_riscv_pdt_set(struct ik_riscv_pdt *t, ik_u32 pid, const struct ik_pgtable *s1,
			    ik_u32 pscid, ik_u32 flags, struct ik_riscv_change *chg)
{
	struct ik_pgtable_info info;
	struct ik_riscv_dir_node *leaf;
	ik_u64 atp, ta, *e, dma;
	int err;

	if (!t || !s1 || !t->d.root || pid > dir_max(&t->d) || pscid > IK_RISCV_MAX_PSCID ||
	    (flags & ~IK_RISCV_PC_FLAG_ENS))
		return -EINVAL;
	ik_pgtable_get_info(s1, &info);
	if (info.geom.fmt != IK_PT_RISCV_S1 || (info.root_iommu & ~ADDR56) ||
	    ik_riscv_get_atp(s1, 0, &atp) || !caps_mode(&t->caps, false, ATP_MODE(atp)))
		return -EINVAL;
	leaf = dir_leaf(&t->d, pid);
	if (leaf && (ik_load_relaxed(dir_entry(&t->d, leaf, pid, &dma)) & IK_RISCV_PC_V))
		return -EBUSY;
	if (!leaf) {
		err = dir_make(&t->d, pid, &leaf);
		if (err)
			return err;
	}
	ta = IK_RISCV_PC_V | (ik_u64)pscid << IK_RISCV_TA_PSCID_SHIFT;
	if (flags & IK_RISCV_PC_FLAG_ENS)
		ta |= IK_RISCV_PC_ENS;
	if (info.geom.fmt_flags & IK_RISCV_FLAG_SUM)
		ta |= IK_RISCV_PC_SUM;
	e = dir_entry(&t->d, leaf, pid, &dma);
	ik_store_relaxed(&e[1], atp);
	publish(t->d.dma, e, dma, 16);
	ik_store_release(&e[0], ta);
	publish(t->d.dma, e, dma, 8);
	if (chg) {
		IK_ENV_MEMSET(chg, 0, sizeof(*chg));
		chg->kind = IK_RISCV_CHANGE_PC;
		chg->pid = pid;
	}
	return 0;
}

IK_API int ik_riscv_pdt_clear(struct ik_riscv_pdt *t, ik_u32 pid, struct ik_riscv_change *chg)
{
	struct ik_riscv_dir_node *leaf;
	ik_u64 *e, dma, ta;

	if (!t || !t->d.root || pid > dir_max(&t->d))
		return -EINVAL;
	leaf = dir_leaf(&t->d, pid);
	if (!leaf)
		return -ENOENT;
	e = dir_entry(&t->d, leaf, pid, &dma);
	ta = ik_load_relaxed(&e[0]);
	if (!(ta & IK_RISCV_PC_V))
		return -ENOENT;
	ik_store_release(&e[0], (ik_u64)0);
	publish(t->d.dma, e, dma, 8);
	ik_store_relaxed(&e[1], (ik_u64)0);
	publish(t->d.dma, e, dma, 16);
	if (chg) {
		IK_ENV_MEMSET(chg, 0, sizeof(*chg));
		chg->kind = IK_RISCV_CHANGE_PC;
		chg->pid = pid;
		chg->flags = IK_RISCV_CHANGE_FLUSH_PSCID;
		chg->pscid = (ik_u32)(ta >> IK_RISCV_TA_PSCID_SHIFT) & IK_RISCV_MAX_PSCID;
	}
	return 0;
}

IK_API int ik_riscv_pdt_read(const struct ik_riscv_pdt *t, ik_u32 pid, ik_u64 pc[2])
{
	struct ik_riscv_dir_node *leaf;

	if (!t || !pc || !t->d.root || pid > dir_max(&t->d))
		return -EINVAL;
	leaf = dir_leaf(&t->d, pid);
	pc[0] = pc[1] = 0;
	if (leaf) {
		ik_u64 dma, *e = dir_entry(&t->d, leaf, pid, &dma);

		pc[0] = ik_load_relaxed(&e[0]);
		pc[1] = ik_load_relaxed(&e[1]);
	}
	return 0;
}
