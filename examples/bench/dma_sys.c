/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* iommukit-bench: the soft-IOMMU system of the end-to-end subcommands. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>
#include <iommukit/cmd/riscv.h>
#include <iommukit/drv/riscv.h>
#include "bench.h"
#include "dma_sys.h"

/* posix_memalign with aligned_alloc's interface (no size restriction). */
static void *xmemalign(size_t align, size_t size)
{
	void *p = NULL;

	return posix_memalign(&p, align, size ? size : align) ? NULL : p;
}

#define ADD(field, v) __atomic_fetch_add(&(field), (v), __ATOMIC_RELAXED)

const char *dsys_clean_insn(void)
{
	const char *n = bench_clean_insn();

	return n ? n : "none";
}

static void hook_clean(void *cookie, void *cpu, uint64_t iommu_addr, size_t size)
{
	struct dsys *d = cookie;

	(void)iommu_addr;
	if (d->cfg.per_pte_clean) {
		for (size_t off = 0; off < size; off += 8) {
			if (d->cfg.real_clean)
				bench_clean((char *)cpu + off, 8);
			ADD(d->c.cleans, 1);
			ADD(d->c.clean_bytes, 8);
		}
		return;
	}
	if (d->cfg.real_clean)
		bench_clean(cpu, size);
	ADD(d->c.cleans, 1);
	ADD(d->c.clean_bytes, size);
}

static void hook_sync_map(void *cookie, uint64_t iova, uint64_t size)
{
	struct dsys *d = cookie;

	ADD(d->c.sync_maps, 1);
	if (d->cfg.sync_map_cmd) {
		int err = dsys_invalidate(d, iova, size, false, true);

		if (err && !d->hook_error)
			d->hook_error = err;
	}
}

static void *consumer_main(void *arg)
{
	struct dsys *d = arg;

	ik_softiommu_cq_run(d->cqp, d->nq, &d->stop);
	return NULL;
}

bool dsys_fmt_available(enum ik_pt_fmt fmt)
{
	return ik_pt_fmt_name(fmt) != NULL;
}

static int issue(struct dsys *d, const uint64_t *ents, unsigned n, bool sync)
{
	struct ik_cmdq_counters cnt;
	struct ik_cmdq *q = ik_cmdq_set_pick(d->qset);
	int err;

	memset(&cnt, 0, sizeof(cnt));
	err = ik_cmdq_issue_ex(q, ents, n, sync ? IK_CMDQ_SYNC : 0, &cnt);
	ADD(d->c.cmds, n + (sync ? 1u : 0u));
	if (sync)
		ADD(d->c.syncs, 1);
	ADD(d->c.cas_retries, cnt.cas_retries);
	return err;
}

#define MAX_INV_CMDS 32
#define MAX_RISCV_AV 16 /* IK_RISCV_PLAN_MAX: AV = 1 commands before AV = 0 */

/* The RISC-V planner's target for the one context: a first stage by its
 * PSCID (.VMA), a G-stage by its GSCID (.GVMA). */
static void riscv_target(const struct dsys *d, struct ik_riscv_target *t)
{
	memset(t, 0, sizeof(*t));
	t->pt = d->pt;
	if (d->stage2)
		t->gscid = d->tag;
	else
		t->pscid = d->tag;
	t->max_av = MAX_RISCV_AV;
}

/* Encode a RISC-V plan's commands into ents (2 words each); their count. */
static int riscv_encode(const struct ik_riscv_plan *p, uint64_t *ents)
{
	for (unsigned i = 0; i < p->n; i++) {
		int err = ik_riscv_cmd_encode(&p->c[i], &ents[2 * i]);

		if (err)
			return err;
	}
	return (int)p->n;
}

int dsys_invalidate_all(struct dsys *d)
{
	uint64_t w[4] = { 0, 0, 0, 0 };
	int err;

	if (d->riscv) {
		struct ik_riscv_target t;
		struct ik_riscv_plan p;

		/* the whole address space: a walk-invalidating range plan */
		riscv_target(d, &t);
		err = ik_riscv_plan_range(&t, 0, 1ull << 32, true, &p);
		if (!err)
			err = riscv_encode(&p, w) < 0 ? -EINVAL : 0;
	} else if (d->smmu) {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		if (d->stage2) {
			c.op = IK_SMMU_CMD_TLBI_S12_VMALL;
			c.vmid = (uint16_t)d->tag;
		} else {
			c.op = IK_SMMU_CMD_TLBI_NH_ASID;
			c.asid = (uint16_t)d->tag;
			c.vmid = (uint16_t)d->tag2;
		}
		err = ik_smmu_cmd_encode(&c, w);
	} else {
		struct ik_vtd_desc v;

		memset(&v, 0, sizeof(v));
		if (d->cfg.nested) { /* the guest's PASID in the domain */
			v.type = IK_VTD_DESC_PIOTLB;
			v.g = IK_VTD_G_PASID;
			v.did = (uint16_t)d->tag2;
			v.pasid = d->tag;
		} else {
			v.type = IK_VTD_DESC_IOTLB;
			v.g = IK_VTD_G_DOMAIN;
			v.did = (uint16_t)d->tag;
		}
		err = ik_vtd_desc_encode(&v, w, 2);
	}
	return err ? err : issue(d, w, 1, true);
}


int dsys_invalidate(struct dsys *d, uint64_t iova, uint64_t size, bool walk, bool sync)
{
	uint64_t ents[MAX_INV_CMDS * 2];
	int n, err;

	if (d->riscv) {
		/* the planner: AV = 1 per page up to MAX_RISCV_AV pages, AV = 0
		 * (the whole PSCID / GSCID) beyond, and whenever tables were
		 * freed (walk): AV = 1 drops leaf entries only, and a cached
		 * non-leaf entry could still point into a freed table */
		struct ik_riscv_target t;
		struct ik_riscv_plan p;

		riscv_target(d, &t);
		err = ik_riscv_plan_range(&t, iova, size, walk, &p);
		if (err)
			return err;
		n = riscv_encode(&p, ents);
		if (n < 0)
			return n;
	} else if (d->smmu) {
		struct ik_smmu_cmd tmpl, out[MAX_INV_CMDS];

		memset(&tmpl, 0, sizeof(tmpl));
		if (d->stage2) {
			tmpl.op = IK_SMMU_CMD_TLBI_S2_IPA;
			tmpl.vmid = (uint16_t)d->tag;
		} else {
			tmpl.op = IK_SMMU_CMD_TLBI_NH_VA;
			tmpl.asid = (uint16_t)d->tag;
			tmpl.vmid = (uint16_t)d->tag2;
		}
		tmpl.leaf = !walk;
		n = ik_smmu_tlbi_range(&tmpl, iova, size, d->cfg.granule_shift, true, out,
				       MAX_INV_CMDS);
		if (n == -ENOSPC)
			return sync ? dsys_invalidate_all(d) : 0;
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			err = ik_smmu_cmd_encode(&out[i], &ents[2 * i]);
			if (err)
				return err;
		}
	} else {
		struct ik_vtd_desc v;
		uint64_t base;
		unsigned am;

		memset(&v, 0, sizeof(v));
		/* nested: PASID-based (first stage) in the domain; G_PASID_PAGE
		 * and G_PASID share the values of G_PAGE and G_DOMAIN */
		v.type = d->cfg.nested ? IK_VTD_DESC_PIOTLB : IK_VTD_DESC_IOTLB;
		v.did = (uint16_t)(d->cfg.nested ? d->tag2 : d->tag);
		v.pasid = d->cfg.nested ? d->tag : 0;
		if (ik_vtd_psi_mask(iova >> 12, (size + 4095) >> 12, 18, &base, &am) == 0) {
			v.g = d->cfg.nested ? IK_VTD_G_PASID_PAGE : IK_VTD_G_PAGE;
			v.addr = base << 12;
			v.am = (uint8_t)am;
			v.ih = !walk;
		} else {
			v.g = d->cfg.nested ? IK_VTD_G_PASID : IK_VTD_G_DOMAIN;
		}
		err = ik_vtd_desc_encode(&v, ents, 2);
		if (err)
			return err;
		n = 1;
	}
	return issue(d, ents, (unsigned)n, sync);
}

void dsys_fini(struct dsys *d)
{
	if (d->consumer_running) {
		__atomic_store_n(&d->stop, 1, __ATOMIC_RELEASE);
		pthread_join(d->consumer, NULL);
		d->consumer_running = false;
	}
	ik_cmdq_set_destroy(d->qset);
	d->qset = NULL;
	if (d->rings)
		for (unsigned i = 0; i < d->nq; i++)
			free(d->rings[i]);
	free(d->rings);
	free(d->cqs);
	free(d->cqp);
	d->rings = NULL;
	d->cqs = NULL;
	d->cqp = NULL;
	ik_pgtable_destroy(d->pt);
	d->pt = NULL;
	ik_pgtable_destroy(d->s2);
	d->s2 = NULL;
	if (d->iovad_ok)
		ik_iova_destroy(&d->iovad);
	d->iovad_ok = false;
	ik_softiommu_destroy(d->s);
	d->s = NULL;
}

#define LOG2_QUEUE 8

enum ik_pt_fmt dsys_nested_s2(enum ik_pt_fmt s1)
{
	return s1 == IK_PT_LPAE_S1 ? IK_PT_LPAE_S2 : s1 == IK_PT_VTD_FL ? IK_PT_VTD_SL
								       : IK_PT_FMT_NONE;
}

#define NEST_SPAN_LG2 48 /* stage 2 maps IPA = PA over [0, 2^48) */

/* Nested: the host's stage 2 (an identity map of the 48-bit space with its
 * largest blocks) under the stage 1 in d->pt, attached to stream 0.  0, or
 * a negative errno with a message. */
static int dsys_init_stage2(struct dsys *d, const struct dsys_cfg *cfg, char *errbuf,
			    size_t errlen)
{
	enum ik_pt_fmt f2 = dsys_nested_s2(cfg->fmt);
	const struct bench_fmt *bf = bench_fmt_find(f2);
	struct ik_softiommu_nested n;
	struct ik_pgtable_cfg pc;
	uint64_t sizes = bench_fmt_leaf_sizes(f2, d->granule), block;
	int err;

	if (!bf || !sizes) {
		snprintf(errbuf, errlen, "nested: %s has no stage 2 at this granule",
			 ik_pt_fmt_name(cfg->fmt) ? ik_pt_fmt_name(cfg->fmt) : "?");
		return -EINVAL;
	}
	memset(&pc, 0, sizeof(pc));
	pc.fmt = f2;
	pc.ias = NEST_SPAN_LG2;
	pc.oas = 48;
	pc.pgsize_bitmap = sizes;
	pc.fmt_flags = bf->fmt_flags;
	pc.coherent = true;
	block = 1ull << (63 - __builtin_clzll(sizes));
	if (NEST_SPAN_LG2 - __builtin_ctzll(block) > 20) { /* more than 2^20 entries */
		snprintf(errbuf, errlen, "nested: stage 2 (%s) has no blocks larger than %lluK at "
			 "this granule: an identity map would take 2^%d entries", ik_pt_fmt_name(f2),
			 (unsigned long long)(block >> 10), NEST_SPAN_LG2 - __builtin_ctzll(block));
		return -EINVAL;
	}
	err = ik_pgtable_create(&pc, &d->s2);
	if (!err)
		err = ik_pgtable_map(d->s2, 0, 0, 1ull << NEST_SPAN_LG2, IK_PROT_READ | IK_PROT_WRITE);
	if (err) {
		snprintf(errbuf, errlen, "nested: stage 2 (%s, identity with %lluK blocks): %s",
			 ik_pt_fmt_name(f2), (unsigned long long)(block >> 10), ik_strerror(err));
		return err;
	}
	memset(&n, 0, sizeof(n));
	ik_pgtable_walker(d->pt, &n.s1);
	ik_pgtable_walker(d->s2, &n.s2);
	n.s1_tag = d->tag;
	n.s2_tag = d->tag2;
	n.mem = &ik_softiommu_host_mem; /* stage 2 is an identity map of this process */
	return ik_softiommu_attach_nested(d->s, 0, &n);
}

/* The soft IOMMU, the page table its stream 0 walks, and the IOVA domain.
 * 0, or a negative errno with a message. */
static int dsys_init_translation(struct dsys *d, const struct dsys_cfg *cfg, char *errbuf,
				 size_t errlen)
{
	struct ik_softiommu_config sc;
	struct ik_pgtable_cfg pc;
	struct ik_iova_config ic;
	struct ik_pt_walker w;
	int err;

	ik_softiommu_config_init(&sc);
	if (cfg->iotlb_set) {
		sc.iotlb_entries = cfg->iotlb_entries;
		sc.iotlb_ways = cfg->iotlb_ways ? cfg->iotlb_ways : IK_MIN(8u, cfg->iotlb_entries);
	}
	sc.flags = cfg->check ? IK_SOFTIOMMU_CHECK : 0;
	/* The tables map this process's buffers at their own addresses. */
	sc.phys_to_host = ik_softiommu_host_identity;
	err = ik_softiommu_create(&sc, &d->s);
	if (err) {
		snprintf(errbuf, errlen, "soft IOMMU: %s", ik_strerror(err));
		return err;
	}

	memset(&pc, 0, sizeof(pc));
	d->hooks.clean = hook_clean;
	d->hooks.iotlb_sync_map = hook_sync_map;
	pc.fmt = cfg->fmt;
	pc.ias = 48;
	pc.oas = 48;
	pc.pgsize_bitmap = bench_fmt_leaf_sizes(cfg->fmt, d->granule);
	pc.coherent = cfg->coherent;
	pc.hooks = &d->hooks;
	pc.cookie = d;
	err = ik_pgtable_create(&pc, &d->pt);
	if (err) {
		snprintf(errbuf, errlen, "page table (%s, %u-bit granule): %s",
			 ik_pt_fmt_name(cfg->fmt) ? ik_pt_fmt_name(cfg->fmt) : "?",
			 cfg->granule_shift, ik_strerror(err));
		return err;
	}
	if (cfg->nested) {
		err = dsys_init_stage2(d, cfg, errbuf, errlen);
		if (err)
			return err;
	} else {
		ik_pgtable_walker(d->pt, &w);
		err = ik_softiommu_attach_pt(d->s, 0, d->tag, &w, &ik_softiommu_host_mem);
	}
	if (err) {
		snprintf(errbuf, errlen, "attach: %s", ik_strerror(err));
		return err;
	}

	/* A 4 GiB IOVA space (a DMA32 device), pfn 0 left out as DMA layers do. */
	memset(&ic, 0, sizeof(ic));
	ic.granule = d->granule;
	ic.start_pfn = 1;
	ic.end_pfn = (1ull << 32 >> cfg->granule_shift) - 1;
	d->iova_limit_pfn = ic.end_pfn;
	err = ik_iova_init(&d->iovad, &ic);
	if (err) {
		snprintf(errbuf, errlen, "IOVA domain: %s", ik_strerror(err));
		return err;
	}
	d->iovad_ok = true;
	return 0;
}

/* The command queues: the soft IOMMU's consumer end first (it owns the
 * registers the producer side reads at init), then the producer side.
 * 0, or a negative errno with a message. */
static int dsys_init_queues(struct dsys *d, const struct dsys_cfg *cfg, char *errbuf,
			    size_t errlen)
{
	const struct ik_cmdq_fmt *qf = d->riscv ? &ik_cmdq_fmt_riscv :
				       d->smmu ? &ik_cmdq_fmt_smmuv3 : &ik_cmdq_fmt_vtd128;
	struct ik_cmdq_config *qc;
	int err = -ENOMEM;

	d->rings = calloc(d->nq, sizeof(*d->rings));
	d->cqs = calloc(d->nq, sizeof(*d->cqs));
	d->cqp = calloc(d->nq, sizeof(*d->cqp));
	qc = calloc(d->nq, sizeof(*qc));
	if (!d->rings || !d->cqs || !d->cqp || !qc) {
		snprintf(errbuf, errlen, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < d->nq; i++) {
		struct ik_softiommu_cq_config cc;
		size_t bytes = (size_t)qf->entry_size << LOG2_QUEUE;

		err = -ENOMEM;
		d->rings[i] = xmemalign(4096, bytes);
		if (!d->rings[i]) {
			snprintf(errbuf, errlen, "out of memory");
			goto out;
		}
		memset(d->rings[i], 0, bytes);
		memset(&cc, 0, sizeof(cc));
		cc.fmt = qf;
		cc.log2_entries = LOG2_QUEUE;
		cc.flags = d->smmu ? 0 : IK_CMDQ_CFG_NO_WRAP;
		cc.ring = d->rings[i];
		err = ik_softiommu_cq_init(&d->cqs[i], d->s, &cc);
		if (err) {
			snprintf(errbuf, errlen, "queue consumer: %s", ik_strerror(err));
			goto out;
		}
		d->cqp[i] = &d->cqs[i];
		qc[i].fmt = qf;
		qc[i].log2_entries = LOG2_QUEUE;
		qc[i].flags = cc.flags;
		qc[i].ring = d->rings[i];
		if (cfg->consumer_thread) {
			qc[i].regs = &ik_cmdq_sw_regs;
			qc[i].regs_ctx = &d->cqs[i].sw;
		} else {
			qc[i].regs = &ik_softiommu_cq_regs;
			qc[i].regs_ctx = &d->cqs[i];
		}
	}
	err = ik_cmdq_set_create(d->nq, qc, &d->qset);
	if (err)
		snprintf(errbuf, errlen, "command queues: %s", ik_strerror(err));
out:
	free(qc);
	return err;
}

int dsys_init(struct dsys *d, const struct dsys_cfg *cfg, char *errbuf, size_t errlen)
{
	const struct bench_fmt *bf;
	int err;

	memset(d, 0, sizeof(*d));
	d->cfg = *cfg;
	bf = bench_fmt_find(cfg->fmt);
	if (!bf) {
		snprintf(errbuf, errlen, "page-table format %d: not in the benchmark's table",
			 (int)cfg->fmt);
		return -EINVAL;
	}
	if (cfg->nested && dsys_nested_s2(cfg->fmt) == IK_PT_FMT_NONE) {
		snprintf(errbuf, errlen, "nested: %s is not a stage 1 the soft IOMMU nests",
			 ik_pt_fmt_name(cfg->fmt) ? ik_pt_fmt_name(cfg->fmt) : "?");
		return -EINVAL;
	}
	d->smmu = bf->smmu;
	d->riscv = bf->riscv;
	d->stage2 = bf->stage2;
	d->tag = 1;
	d->tag2 = 2;
	d->granule = 1ull << cfg->granule_shift;
	d->nq = cfg->nqueues ? cfg->nqueues : 1;
	err = dsys_init_translation(d, cfg, errbuf, errlen);
	if (!err)
		err = dsys_init_queues(d, cfg, errbuf, errlen);
	if (!err && cfg->consumer_thread) {
		err = pthread_create(&d->consumer, NULL, consumer_main, d);
		if (err) {
			snprintf(errbuf, errlen, "consumer thread: %s", strerror(err));
			err = -err;
		} else {
			d->consumer_running = true;
		}
	}
	if (err)
		dsys_fini(d);
	return err;
}
