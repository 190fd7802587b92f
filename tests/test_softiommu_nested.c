/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softiommu nesting: a stage-1 (guest) table walked through a stage-2 (host)
 * table, for both supported pairs (lpae-s1 over lpae-s2, vtd-fl over
 * vtd-sl).
 *
 * The machine: 16 MiB of "host memory" at PA 0x80000000 (a heap buffer read
 * through a bounds-checked mem hook, written by device DMA through a
 * bounds-checked phys_to_host).  Stage-2 tables live in its first 4 MiB.
 * Guest RAM is IPA [0x40000000, +8 MiB) mapped by stage 2 onto PA
 * 0x80400000: the guest's stage-1 tables in its first MiB (4 KiB stage-2
 * pages), a stage-2 hole in the second MiB, data in the last 6 MiB (2 MiB
 * stage-2 blocks).  Expected answers come from those linear maps and the
 * requests, never from a walker.
 */
#include <stdlib.h>
#include <string.h>
#include <iommukit/softiommu.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/fmt/vtd.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/cmd/vtd.h>
#include <iommukit/cmdq.h>
#include "testlib.h"

#define PA_BASE 0x80000000ull
#define HOST_SIZE (16ull << 20)
#define S2_TABLES (4ull << 20)		/* host bytes for stage-2 tables */
#define GRAM_PA (PA_BASE + S2_TABLES)	/* guest RAM in host memory */
#define IPA_BASE 0x40000000ull
#define GTAB_SIZE (1ull << 20)		/* guest tables: IPA_BASE .. + 1 MiB */
#define GHOLE (IPA_BASE + (1ull << 20))	/* 1 MiB stage 2 leaves unmapped */
#define GOUT (GHOLE + (512ull << 10))	/* mapped by stage 2 outside host memory */
#define GDATA (IPA_BASE + (2ull << 20))	/* guest data: 6 MiB */
#define GDATA_SIZE (6ull << 20)
#define S1_OAS 44			/* the IPA width stage 1 may output */
#define ASID 3
#define VMID 7
#define R IK_SOFTIOMMU_READ
#define W IK_SOFTIOMMU_WRITE

struct nest {
	uint8_t *host;
	size_t s2_next, s1_next;
	struct ik_pgtable *s1, *s1b, *s2;
	struct ik_pgtable_hooks h1, h2;
	struct ik_softiommu *s;
	struct ik_pt_mem mem;
	struct ik_softiommu_nested cfg;
	bool vtd;
};

static uint8_t *pa_host(struct nest *n, uint64_t pa)
{
	return pa >= PA_BASE && pa - PA_BASE < HOST_SIZE ? n->host + (pa - PA_BASE) : NULL;
}

static uint64_t ipa_pa(uint64_t ipa)
{
	return GRAM_PA + (ipa - IPA_BASE);
}

static int host_read64(void *ctx, uint64_t pa, uint64_t *val)
{
	struct nest *n = ctx;

	if (pa < PA_BASE || pa - PA_BASE > HOST_SIZE - 8 || (pa & 7))
		return -EFAULT;
	*val = __atomic_load_n((uint64_t *)(void *)pa_host(n, pa), __ATOMIC_RELAXED);
	return 0;
}

static int host_cas64(void *ctx, uint64_t pa, uint64_t old, uint64_t val)
{
	struct nest *n = ctx;

	if (pa < PA_BASE || pa - PA_BASE > HOST_SIZE - 8 || (pa & 7))
		return -EFAULT;
	return __atomic_compare_exchange_n((uint64_t *)(void *)pa_host(n, pa), &old, val, false,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED) ? 0 : -EAGAIN;
}

static void *host_p2h(void *ctx, uint64_t oa, size_t len)
{
	struct nest *n = ctx;

	if (oa < PA_BASE || oa - PA_BASE > HOST_SIZE || len > HOST_SIZE - (oa - PA_BASE))
		return NULL;
	return pa_host(n, oa);
}

/* Table pages: bump allocators (freeing is a no-op; the arena goes at once). */
static void *bump(struct nest *n, size_t *next, size_t limit, size_t size, size_t host_off,
		  uint64_t base, uint64_t *addr)
{
	size_t at = (*next + size - 1) & ~(size - 1);

	if (at + size > limit)
		return NULL;
	*next = at + size;
	*addr = base + at;
	return n->host + host_off + at;
}

static void *s2_alloc(void *cookie, size_t size, uint64_t *addr)
{
	return bump(cookie, &((struct nest *)cookie)->s2_next, S2_TABLES, size, 0, PA_BASE, addr);
}

static void *s1_alloc(void *cookie, size_t size, uint64_t *addr)
{
	return bump(cookie, &((struct nest *)cookie)->s1_next, GTAB_SIZE, size, S2_TABLES, IPA_BASE,
		    addr);
}

static void no_free(void *cookie, void *cpu, uint64_t addr, size_t size)
{
	(void)cookie, (void)cpu, (void)addr, (void)size;
}

static struct ik_pgtable *mk_s1(struct nest *n, uint32_t quirks)
{
	struct ik_pgtable_cfg c;
	struct ik_pgtable *pt = NULL;

	memset(&c, 0, sizeof(c));
	c.fmt = n->vtd ? IK_PT_VTD_FL : IK_PT_LPAE_S1;
	c.ias = n->vtd ? 47 : 48;
	c.oas = S1_OAS;
	c.quirks = quirks;
	c.pgsize_bitmap = (1ull << 12) | (1ull << 21);
	c.coherent = true;
	c.hooks = &n->h1;
	c.cookie = n;
	ck_assert_int_eq(ik_pgtable_create(&c, &pt), 0);
	return pt;
}

static void nest_init(struct nest *n, bool vtd, uint32_t flags)
{
	struct ik_softiommu_config sc;
	struct ik_pgtable_cfg c;
	struct ik_pgtable_info info;

	memset(n, 0, sizeof(*n));
	n->vtd = vtd;
	ck_assert_int_eq(posix_memalign((void **)&n->host, 2u << 20, HOST_SIZE), 0);
	memset(n->host, 0, HOST_SIZE);
	n->h2.alloc_table = s2_alloc;
	n->h2.free_table = no_free;
	n->h1.alloc_table = s1_alloc;
	n->h1.free_table = no_free;
	memset(&c, 0, sizeof(c));
	c.fmt = vtd ? IK_PT_VTD_SL : IK_PT_LPAE_S2;
	c.ias = vtd ? 39 : 40;
	c.oas = 40;
	c.pgsize_bitmap = (1ull << 12) | (1ull << 21);
	c.fmt_flags = vtd ? IK_VTD_FLAG_SP_2M : 0;
	c.coherent = true;
	c.hooks = &n->h2;
	c.cookie = n;
	ck_assert_int_eq(ik_pgtable_create(&c, &n->s2), 0);
	ik_pgtable_get_info(n->s2, &info);
	ck_assert_uint_eq(info.geom.pgsize_bitmap & (1ull << 21), 1ull << 21);
	ck_assert_int_eq(ik_pgtable_map(n->s2, IPA_BASE, ipa_pa(IPA_BASE), GTAB_SIZE,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	ck_assert_int_eq(ik_pgtable_map(n->s2, GDATA, ipa_pa(GDATA), GDATA_SIZE,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	ck_assert_int_eq(ik_pgtable_map(n->s2, GOUT, 1ull << 36, 4096, IK_PROT_READ), 0);
	n->s1 = mk_s1(n, 0);

	ik_softiommu_config_init(&sc);
	sc.flags = flags;
	sc.phys_to_host = host_p2h;
	sc.phys_ctx = n;
	ck_assert_int_eq(ik_softiommu_create(&sc, &n->s), 0);
	n->mem.read64 = host_read64;
	n->mem.cas64 = host_cas64;
	n->mem.ctx = n;
	ik_pgtable_walker(n->s1, &n->cfg.s1);
	ik_pgtable_walker(n->s2, &n->cfg.s2);
	n->cfg.s1_tag = ASID;
	n->cfg.s2_tag = VMID;
	n->cfg.mem = &n->mem;
	ck_assert_int_eq(ik_softiommu_attach_nested(n->s, 0, &n->cfg), 0);
}

static void nest_fini(struct nest *n)
{
	ik_softiommu_destroy(n->s);
	ik_pgtable_destroy(n->s1);
	ik_pgtable_destroy(n->s1b);
	ik_pgtable_destroy(n->s2);
	free(n->host);
}

static void s1_map(struct nest *n, uint64_t iova, uint64_t ipa, uint64_t size, unsigned prot)
{
	ck_assert_int_eq(ik_pgtable_map(n->s1, iova, ipa, size, prot), 0);
}

static void unmap(struct ik_pgtable *pt, uint64_t iova, uint64_t size)
{
	struct ik_gather g;

	ik_gather_init(&g);
	ck_assert_int_eq(ik_pgtable_unmap(pt, iova, size, &g), (int64_t)size);
	ik_pgtable_gather_sync(pt, &g);
}

static struct ik_softiommu_stats stats(struct ik_softiommu *s)
{
	struct ik_softiommu_stats st;

	ck_assert_int_eq(ik_softiommu_stats(s, &st), 0);
	return st;
}

/* Translate, expecting the fault `type` (0: success). */
static struct ik_softiommu_xlate xl(struct nest *n, uint32_t sid, uint64_t iova, uint32_t acc,
				    uint32_t type)
{
	struct ik_softiommu_xlate x;
	int err = ik_softiommu_translate(n->s, sid, iova, acc, &x);

	ck_assert_msg(err == (type ? -EFAULT : 0) && x.fault == type,
		      "iova %#llx: err %d fault %s, expected %s", (unsigned long long)iova, err,
		      ik_softiommu_fault_name(x.fault), ik_softiommu_fault_name(type));
	return x;
}

static void drain_faults(struct ik_softiommu *s)
{
	struct ik_softiommu_fault f;

	while (ik_softiommu_fault_pop(s, &f) == 0)
		;
}

/* The guest's view of its own tables: IPA -> host through the linear map. */
static int guest_read64(void *ctx, uint64_t ipa, uint64_t *val)
{
	struct nest *n = ctx;

	if (ipa < IPA_BASE || ipa - IPA_BASE >= (8ull << 20) || (ipa & 7))
		return -EFAULT;
	return host_read64(n, ipa_pa(ipa), val);
}

/* The IPA of the stage-1 entry that ends a walk of iova (leaf or hole). */
static uint64_t s1_entry(struct nest *n, uint64_t iova, unsigned *level)
{
	struct ik_pt_mem gm = { guest_read64, NULL, n };
	struct ik_pt_walk_result r;

	ck_assert_int_eq(ik_pt_walk(&n->cfg.s1, &gm, iova, 0, &r), 0);
	ck_assert_uint_ne(r.fault, IK_PT_FAULT_EXTERNAL);
	if (level)
		*level = r.level;
	return r.pte_addr;
}

static uint64_t *guest_ptr(struct nest *n, uint64_t ipa)
{
	return (uint64_t *)(void *)pa_host(n, ipa_pa(ipa));
}

/* ------------------------------------------------------------ translation */

START_TEST(nested_access_reaches_both_stages_output)
{
	struct nest n;
	uint64_t v = 0x1122334455667788ull, back = 0;

	nest_init(&n, _i, 0);
	s1_map(&n, 0x10000, GDATA + 0x3000, 0x2000, IK_PROT_READ | IK_PROT_WRITE);
	ck_assert_int_eq(ik_softiommu_dma_write(n.s, 0, 0x10ff8, &v, 8), 0);
	ck_assert(memcmp(pa_host(&n, ipa_pa(GDATA + 0x3ff8)), &v, 8) == 0);
	ck_assert_int_eq(ik_softiommu_dma_read(n.s, 0, 0x10ff8, &back, 8), 0);
	ck_assert_uint_eq(back, v);
	/* A DMA across the two pages: each through its own combined entry. */
	memset(pa_host(&n, ipa_pa(GDATA + 0x4000)), 0x5a, 8);
	ck_assert_int_eq(ik_softiommu_dma_read(n.s, 0, 0x10ffc, &back, 8), 0);
	ck_assert_uint_eq(back, 0x5a5a5a5a11223344ull);

	struct ik_softiommu_xlate x = xl(&n, 0, 0x11234, R, 0);
	ck_assert_uint_eq(x.oa, ipa_pa(GDATA + 0x4234));
	ck_assert_uint_eq(x.ipa, GDATA + 0x4234);
	ck_assert_uint_eq(x.lg2_size, 12); /* 4 KiB stage 1 over a 2 MiB stage-2 block */
	ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_NESTED);
	ck_assert_uint_eq(x.prot, R | W);
	struct ik_softiommu_stats st = stats(n.s);
	ck_assert_uint_eq(st.iotlb_misses, 2);
	ck_assert_uint_ge(st.iotlb_hits, 3);
	ck_assert_uint_eq(st.walk_cache_hits + st.walk_cache_misses, 0); /* not for nested */
	nest_fini(&n);
}
END_TEST

START_TEST(combined_block_is_the_smaller_of_the_two_leaves)
{
	struct nest n;
	struct ik_softiommu_xlate x;

	nest_init(&n, _i, 0);
	/* 2 MiB stage 1 over a 2 MiB stage-2 block: one 2 MiB entry. */
	s1_map(&n, 0x200000, GDATA, 2u << 20, IK_PROT_READ | IK_PROT_WRITE);
	x = xl(&n, 0, 0x3fff00, W, 0);
	ck_assert_uint_eq(x.lg2_size, 21);
	ck_assert_uint_eq(x.oa, ipa_pa(GDATA) + 0x1fff00);
	xl(&n, 0, 0x200000, R, 0);
	ck_assert_uint_eq(stats(n.s).iotlb_misses, 1);
	/* 2 MiB stage 1 over 4 KiB stage-2 pages (split a stage-2 block): 4 KiB. */
	unmap(n.s2, GDATA + (2u << 20), 2u << 20);
	ck_assert_int_eq(ik_pgtable_map(n.s2, GDATA + (2u << 20), ipa_pa(GDATA + (2u << 20)),
					0x1000, IK_PROT_READ), 0);
	ck_assert_int_eq(ik_pgtable_map(n.s2, GDATA + (2u << 20) + 0x1000,
					ipa_pa(GDATA + (2u << 20)) + 0x1000, 0x1000,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	s1_map(&n, 0x400000, GDATA + (2u << 20), 2u << 20, IK_PROT_READ | IK_PROT_WRITE);
	x = xl(&n, 0, 0x401008, W, 0);
	ck_assert_uint_eq(x.lg2_size, 12);
	ck_assert_uint_eq(x.oa, ipa_pa(GDATA + (2u << 20)) + 0x1008);
	ck_assert_uint_eq(x.prot_s1, R | W);
	x = xl(&n, 0, 0x400008, R, 0); /* the next page is its own entry, read-only */
	ck_assert_uint_eq(x.prot, R);
	xl(&n, 0, 0x402000, R, IK_SOFTIOMMU_FAULT_TRANSLATION); /* stage 2 has nothing */
	nest_fini(&n);
}
END_TEST

/* ------------------------------------------------------------ permissions */

START_TEST(permissions_are_intersected_and_the_refusing_stage_reported)
{
	struct nest n;
	struct ik_softiommu_xlate x;
	struct ik_softiommu_fault f;

	nest_init(&n, _i, 0);
	/* stage 2 read-only data page */
	unmap(n.s2, GDATA, 2u << 20);
	ck_assert_int_eq(ik_pgtable_map(n.s2, GDATA, ipa_pa(GDATA), 0x1000, IK_PROT_READ), 0);
	ck_assert_int_eq(ik_pgtable_map(n.s2, GDATA + 0x1000, ipa_pa(GDATA + 0x1000), 0x1000,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	s1_map(&n, 0x1000, GDATA, 0x1000, IK_PROT_READ | IK_PROT_WRITE);  /* S1 RW, S2 R */
	s1_map(&n, 0x2000, GDATA + 0x1000, 0x1000, IK_PROT_READ);	   /* S1 R, S2 RW */
	s1_map(&n, 0x3000, GDATA + 0x2000, 0x1000, IK_PROT_READ);	   /* S1 R, S2 none */

	x = xl(&n, 0, 0x1000, R, 0);
	ck_assert_uint_eq(x.prot, R);
	ck_assert_uint_eq(x.prot_s1, R | W);
	x = xl(&n, 0, 0x1010, W, IK_SOFTIOMMU_FAULT_PERMISSION); /* from the IOTLB */
	ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_2);
	ck_assert_uint_eq(x.s2_class, IK_SOFTIOMMU_S2_IN);
	ck_assert_int_eq(ik_softiommu_fault_pop(n.s, &f), 0);
	ck_assert_uint_eq(f.type, IK_SOFTIOMMU_FAULT_PERMISSION);
	ck_assert_uint_eq(f.stage, IK_SOFTIOMMU_STAGE_2);
	ck_assert_uint_eq(f.s2_class, IK_SOFTIOMMU_S2_IN);
	ck_assert_uint_eq(f.iova, 0x1010);
	ck_assert_uint_eq(f.ipa, GDATA + 0x10);
	ck_assert_uint_eq(f.tag, ASID);
	ck_assert_uint_eq(f.tag2, VMID);
	ck_assert_uint_eq(f.access, W);

	x = xl(&n, 0, 0x2000, W, IK_SOFTIOMMU_FAULT_PERMISSION); /* from a walk */
	ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_1);
	ck_assert_uint_eq(x.s2_class, IK_SOFTIOMMU_S2_NONE);
	xl(&n, 0, 0x2000, R, 0);
	/* Stage 1 refuses the write before stage 2 looks at the IPA... */
	x = xl(&n, 0, 0x3000, W, IK_SOFTIOMMU_FAULT_PERMISSION);
	ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_1);
	/* ...a read passes stage 1 and meets stage 2's hole. */
	x = xl(&n, 0, 0x3000, R, IK_SOFTIOMMU_FAULT_TRANSLATION);
	ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_2);
	ck_assert_uint_eq(x.s2_class, IK_SOFTIOMMU_S2_IN);
	ck_assert_uint_eq(x.ipa, GDATA + 0x2000);
	/* The same with a read-only 2 MiB stage-1 block onto an IPA far from
	 * anything stage 2 maps: the stage-1 fault has the block's level. */
	s1_map(&n, 0x600000, 0x80000000ull, 2u << 20, IK_PROT_READ);
	x = xl(&n, 0, 0x600000, W, IK_SOFTIOMMU_FAULT_PERMISSION);
	ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_1);
	ck_assert_uint_eq(x.level, 1);
	x = xl(&n, 0, 0x600000, R, IK_SOFTIOMMU_FAULT_TRANSLATION);
	ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_2);
	ck_assert_uint_ge(x.level, 2);
	drain_faults(n.s);
	nest_fini(&n);
}
END_TEST

/* ------------------------------------------------- stage 2 on stage-1 walks */

START_TEST(stage2_fault_on_a_stage1_table_fetch_is_class_tt)
{
	struct nest n;
	struct ik_softiommu_xlate x;
	struct ik_softiommu_fault f;
	uint64_t leaf, page;
	unsigned level;

	nest_init(&n, _i, 0);
	s1_map(&n, 0x7000, GDATA, 0x1000, IK_PROT_READ | IK_PROT_WRITE);
	leaf = s1_entry(&n, 0x7000, &level);
	ck_assert_uint_eq(level, 0);
	page = leaf & ~0xfffull;
	ck_assert(page >= IPA_BASE && page < IPA_BASE + GTAB_SIZE);
	/* The host takes away the stage-2 mapping of the guest's leaf table. */
	unmap(n.s2, page, 0x1000);
	x = xl(&n, 0, 0x7000, R, IK_SOFTIOMMU_FAULT_TRANSLATION);
	ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_2);
	ck_assert_uint_eq(x.s2_class, IK_SOFTIOMMU_S2_TT);
	ck_assert_uint_eq(x.ipa, leaf);
	ck_assert_int_eq(ik_softiommu_fault_pop(n.s, &f), 0);
	ck_assert_uint_eq(f.stage, IK_SOFTIOMMU_STAGE_2);
	ck_assert_uint_eq(f.s2_class, IK_SOFTIOMMU_S2_TT);
	ck_assert_uint_eq(f.ipa, leaf);
	ck_assert_uint_eq(f.iova, 0x7000);
	ck_assert_uint_eq(f.type, IK_SOFTIOMMU_FAULT_TRANSLATION);
	/* Mapped back, but not readable (LPAE stage 2 can say write-only; VT-d
	 * second level cannot): a permission fault on the table fetch. */
	if (!n.vtd) {
		ck_assert_int_eq(ik_pgtable_map(n.s2, page, ipa_pa(page), 0x1000, IK_PROT_WRITE),
				 0);
		x = xl(&n, 0, 0x7000, R, IK_SOFTIOMMU_FAULT_PERMISSION);
		ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_2);
		ck_assert_uint_eq(x.s2_class, IK_SOFTIOMMU_S2_TT);
		unmap(n.s2, page, 0x1000);
	}
	ck_assert_int_eq(ik_pgtable_map(n.s2, page, ipa_pa(page), 0x1000,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	x = xl(&n, 0, 0x7000, R, 0);
	ck_assert_uint_eq(x.oa, ipa_pa(GDATA));
	drain_faults(n.s);
	nest_fini(&n);
}
END_TEST

static void inv_s1(struct nest *n, uint32_t s1tag, uint32_t s2tag, uint64_t iova);

/* ----------------------------------------------------- hostile descriptors */

/*
 * Hostile stage-1 descriptors: the guest writes its own table entries.  The
 * 2 MiB region at 0x400000 has no stage-1 table yet; its level-1 entry is
 * replaced by a table pointer (copied from the valid neighbour at 0x200000,
 * address bits changed) or a block entry.
 */
struct hostile {
	uint64_t addr;	/* where the entry points (an IPA) */
	bool block;	/* a level-1 block instead of a table pointer */
	uint32_t fault, stage, s2_class;
};

static void check_hostile(struct nest *n, uint64_t slot, uint64_t tbl, uint64_t blk,
			  const struct hostile *h)
{
	uint64_t mask = n->vtd ? IK_VTD_ADDR_MASK : IK_LPAE_PTE_ADDR_MASK;
	uint64_t e = ((h->block ? blk : tbl) & ~mask) | (h->addr & mask);
	struct ik_softiommu_xlate x;

	__atomic_store_n(guest_ptr(n, slot), e, __ATOMIC_RELAXED);
	x = xl(n, 0, 0x400000 + 0x5000, R, h->fault);
	ck_assert_msg(x.stage == h->stage && x.s2_class == h->s2_class,
		      "addr %#llx block %d: stage %u class %u", (unsigned long long)h->addr,
		      h->block, x.stage, x.s2_class);
	if (h->stage == IK_SOFTIOMMU_STAGE_2)
		ck_assert_uint_eq(x.ipa >> 21, h->addr >> 21);
	__atomic_store_n(guest_ptr(n, slot), 0, __ATOMIC_RELAXED);
}

START_TEST(hostile_stage1_descriptors_fault_at_the_right_stage)
{
	const struct hostile cases[] = {
		/* table beyond the IPA size stage 1 may output */
		{ 1ull << 46, false, IK_SOFTIOMMU_FAULT_ADDR_SIZE, IK_SOFTIOMMU_STAGE_1, 0 },
		/* inside it, beyond stage 2's input size */
		{ 1ull << 42, false, IK_SOFTIOMMU_FAULT_TRANSLATION, IK_SOFTIOMMU_STAGE_2,
		  IK_SOFTIOMMU_S2_TT },
		/* an IPA stage 2 does not map */
		{ GHOLE, false, IK_SOFTIOMMU_FAULT_TRANSLATION, IK_SOFTIOMMU_STAGE_2,
		  IK_SOFTIOMMU_S2_TT },
		/* an IPA stage 2 maps outside host memory: the fetch aborts */
		{ GOUT, false, IK_SOFTIOMMU_FAULT_EXTERNAL, IK_SOFTIOMMU_STAGE_1, 0 },
		/* a block whose output is beyond the IPA size */
		{ 1ull << 46, true, IK_SOFTIOMMU_FAULT_ADDR_SIZE, IK_SOFTIOMMU_STAGE_1, 0 },
		/* a block to an IPA beyond stage 2's input size */
		{ 1ull << 42, true, IK_SOFTIOMMU_FAULT_TRANSLATION, IK_SOFTIOMMU_STAGE_2,
		  IK_SOFTIOMMU_S2_IN },
		/* a block onto the stage-2 hole */
		{ GDATA + (6ull << 20), true, IK_SOFTIOMMU_FAULT_TRANSLATION, IK_SOFTIOMMU_STAGE_2,
		  IK_SOFTIOMMU_S2_IN },
	};
	struct nest n;
	uint64_t slot, tbl, blk, before[2];
	unsigned level;

	nest_init(&n, _i, 0);
	s1_map(&n, 0x200000, GDATA, 0x1000, IK_PROT_READ);		 /* a level-0 table */
	s1_map(&n, 0x600000, GDATA + (2u << 20), 2u << 20, IK_PROT_READ); /* a block */
	slot = s1_entry(&n, 0x400000, &level);
	ck_assert_uint_eq(level, 1);
	tbl = *guest_ptr(&n, slot - 8);
	blk = *guest_ptr(&n, slot + 8);
	ck_assert_uint_ne(tbl, 0);
	ck_assert_uint_ne(blk, 0);
	xl(&n, 0, 0x600000, R, 0); /* the templates are what they claim */
	xl(&n, 0, 0x200000, R, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_hostile(&n, slot, tbl, blk, &cases[i]);
	/* A reserved leaf encoding at the last level: LPAE type 0b01, VT-d
	 * first level a reserved bit: a stage-1 fault, nothing read beyond. */
	slot = s1_entry(&n, 0x200000, &level);
	before[0] = *guest_ptr(&n, slot);
	inv_s1(&n, ASID, VMID, 0x200000); /* the guest invalidates, then reads */
	__atomic_store_n(guest_ptr(&n, slot),
			 n.vtd ? before[0] | (1ull << 51) : (before[0] & ~3ull) | 1, __ATOMIC_RELAXED);
	ck_assert_int_eq(ik_softiommu_translate(n.s, 0, 0x200000 + 0x10, R, NULL), -EFAULT);
	before[1] = 0;
	struct ik_softiommu_fault f;
	while (ik_softiommu_fault_pop(n.s, &f) == 0)
		before[1] = f.stage;
	ck_assert_uint_eq(before[1], IK_SOFTIOMMU_STAGE_1);
	__atomic_store_n(guest_ptr(&n, slot), before[0], __ATOMIC_RELAXED);
	xl(&n, 0, 0x200000, R, 0);
	nest_fini(&n);
}
END_TEST

/* ------------------------------------------------------------ invalidation */

static int smmu(struct nest *n, const struct ik_smmu_cmd *c)
{
	uint64_t w[2];
	struct ik_smmu_cmd d;

	/* as the queue consumer does: encoded, decoded, executed */
	ck_assert_int_eq(ik_smmu_cmd_encode(c, w), 0);
	ck_assert_int_eq(ik_smmu_cmd_decode(w, &d), 0);
	return ik_softiommu_exec_smmu(n->s, &d);
}

static int vtd(struct nest *n, const struct ik_vtd_desc *d)
{
	uint64_t w[4];
	struct ik_vtd_desc e;

	ck_assert_int_eq(ik_vtd_desc_encode(d, w, 4), 0);
	ck_assert_int_eq(ik_vtd_desc_decode(w, 4, &e), 0);
	return ik_softiommu_exec_vtd(n->s, &e);
}

/* Stage-1 invalidation of one page of (ASID, VMID) / (PASID, DID). */
static void inv_s1(struct nest *n, uint32_t s1tag, uint32_t s2tag, uint64_t iova)
{
	if (n->vtd) {
		struct ik_vtd_desc d;

		memset(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_PIOTLB;
		d.g = IK_VTD_G_PASID_PAGE;
		d.did = (uint16_t)s2tag;
		d.pasid = s1tag;
		d.addr = iova;
		ck_assert_int_eq(vtd(n, &d), 0);
	} else {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_SMMU_CMD_TLBI_NH_VA;
		c.asid = (uint16_t)s1tag;
		c.vmid = (uint16_t)s2tag;
		c.addr = iova;
		ck_assert_int_eq(smmu(n, &c), 0);
	}
}

/* Stage-2 invalidation of one IPA page of VMID / DID. */
static void inv_s2(struct nest *n, uint32_t s2tag, uint64_t ipa)
{
	if (n->vtd) {
		struct ik_vtd_desc d;

		memset(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_IOTLB;
		d.g = IK_VTD_G_PAGE;
		d.did = (uint16_t)s2tag;
		d.addr = ipa & ~0xfffull;
		ck_assert_int_eq(vtd(n, &d), 0);
	} else {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_SMMU_CMD_TLBI_S2_IPA;
		c.vmid = (uint16_t)s2tag;
		c.addr = ipa & ~0xfffull;
		ck_assert_int_eq(smmu(n, &c), 0);
	}
}

static struct ik_softiommu_stale stale_pop(struct nest *n)
{
	struct ik_softiommu_stale r;

	ck_assert_int_eq(ik_softiommu_stale_pop(n->s, &r), 0);
	return r;
}

START_TEST(stage1_change_is_stale_until_a_stage1_invalidation_of_both_tags)
{
	struct nest n;
	struct ik_softiommu_xlate x;
	struct ik_softiommu_stale r;

	nest_init(&n, _i, IK_SOFTIOMMU_CHECK);
	s1_map(&n, 0x5000, GDATA, 0x1000, IK_PROT_READ | IK_PROT_WRITE);
	xl(&n, 0, 0x5000, R, 0);
	unmap(n.s1, 0x5000, 0x1000);
	s1_map(&n, 0x5000, GDATA + 0x8000, 0x1000, IK_PROT_READ | IK_PROT_WRITE);
	xl(&n, 0, 0x5000, R, IK_SOFTIOMMU_FAULT_STALE);
	r = stale_pop(&n);
	ck_assert_uint_eq(r.cached.oa, ipa_pa(GDATA));
	ck_assert_uint_eq(r.fresh.oa, ipa_pa(GDATA + 0x8000));
	ck_assert_uint_eq(r.fresh.ipa, GDATA + 0x8000);
	/* the right stage-1 tag under another stage-2 tag: not this context */
	inv_s1(&n, ASID, VMID + 1, 0x5000);
	xl(&n, 0, 0x5000, R, IK_SOFTIOMMU_FAULT_STALE);
	inv_s1(&n, ASID + 1, VMID, 0x5000);
	xl(&n, 0, 0x5000, R, IK_SOFTIOMMU_FAULT_STALE);
	inv_s1(&n, ASID, VMID, 0x5000);
	x = xl(&n, 0, 0x5000, R, 0);
	ck_assert_uint_eq(x.oa, ipa_pa(GDATA + 0x8000));
	ck_assert_uint_eq(stats(n.s).stale, 3);
	drain_faults(n.s);
	nest_fini(&n);
}
END_TEST

START_TEST(stage2_change_is_stale_until_a_stage2_invalidation_drops_the_vmid)
{
	struct nest n;
	struct ik_softiommu_xlate x;
	struct ik_softiommu_stats st;

	nest_init(&n, _i, IK_SOFTIOMMU_CHECK);
	s1_map(&n, 0x5000, GDATA, 0x1000, IK_PROT_READ | IK_PROT_WRITE);
	s1_map(&n, 0x9000, GDATA + (4u << 20), 0x1000, IK_PROT_READ | IK_PROT_WRITE);
	xl(&n, 0, 0x5000, R, 0);
	xl(&n, 0, 0x9000, R, 0);
	/* The host moves the guest's first data block to other memory. */
	unmap(n.s2, GDATA, 2u << 20);
	ck_assert_int_eq(ik_pgtable_map(n.s2, GDATA, ipa_pa(GDATA + (2u << 20)), 2u << 20,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	xl(&n, 0, 0x5000, R, IK_SOFTIOMMU_FAULT_STALE);
	ck_assert_uint_eq(stale_pop(&n).fresh.oa, ipa_pa(GDATA + (2u << 20)));
	inv_s2(&n, VMID + 1, GDATA); /* another VM's: nothing */
	xl(&n, 0, 0x5000, R, IK_SOFTIOMMU_FAULT_STALE);
	st = stats(n.s);
	/* An IPA far from both entries still drops every combined entry of the
	 * VMID (documented): the two cached translations go. */
	inv_s2(&n, VMID, GDATA + (5u << 20));
	ck_assert_uint_eq(stats(n.s).iotlb_inv_entries - st.iotlb_inv_entries, 2);
	x = xl(&n, 0, 0x5000, R, 0);
	ck_assert_uint_eq(x.oa, ipa_pa(GDATA + (2u << 20)));
	xl(&n, 0, 0x9000, R, 0);
	ck_assert_uint_eq(stats(n.s).iotlb_misses, st.iotlb_misses + 2);
	drain_faults(n.s);
	while (ik_softiommu_stale_pop(n.s, &(struct ik_softiommu_stale){ 0 }) == 0)
		;
	nest_fini(&n);
}
END_TEST

START_TEST(stage2_remap_of_a_stage1_table_needs_the_stage2_invalidation)
{
	/* Why a stage-2 IPA invalidation drops every combined entry: here the
	 * IPA that changes holds the guest's leaf table, not the data. */
	struct nest n;
	uint64_t leaf, page, newpa = ipa_pa(GDATA + (5u << 20));
	struct ik_softiommu_xlate x;

	nest_init(&n, _i, IK_SOFTIOMMU_CHECK);
	s1_map(&n, 0x5000, GDATA, 0x1000, IK_PROT_READ | IK_PROT_WRITE);
	xl(&n, 0, 0x5000, R, 0);
	leaf = s1_entry(&n, 0x5000, NULL);
	page = leaf & ~0xfffull;
	/* A copy of the table at another PA, whose entry points elsewhere. */
	memcpy(pa_host(&n, newpa), pa_host(&n, ipa_pa(page)), 4096);
	uint64_t *e = (uint64_t *)(void *)pa_host(&n, newpa + (leaf & 0xfff));
	uint64_t mask = n.vtd ? IK_VTD_ADDR_MASK : IK_LPAE_PTE_ADDR_MASK;
	*e = (*e & ~mask) | ((GDATA + 0x3000) & mask);
	unmap(n.s2, page, 0x1000);
	ck_assert_int_eq(ik_pgtable_map(n.s2, page, newpa, 0x1000, IK_PROT_READ | IK_PROT_WRITE), 0);
	xl(&n, 0, 0x5000, R, IK_SOFTIOMMU_FAULT_STALE);
	inv_s2(&n, VMID, page);
	x = xl(&n, 0, 0x5000, R, 0);
	ck_assert_uint_eq(x.ipa, GDATA + 0x3000);
	drain_faults(n.s);
	nest_fini(&n);
}
END_TEST

START_TEST(same_stage1_tag_under_two_stage2_tags_never_shares_entries)
{
	struct nest n;
	struct ik_softiommu_nested c2;
	struct ik_softiommu_xlate x;
	struct ik_softiommu_stats st;

	nest_init(&n, _i, 0);
	n.s1b = mk_s1(&n, 0);
	c2 = n.cfg;
	ik_pgtable_walker(n.s1b, &c2.s1);
	c2.s2_tag = VMID + 1; /* a second VM with the same ASID / PASID */
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 1, &c2), 0);
	s1_map(&n, 0x5000, GDATA, 0x1000, IK_PROT_READ);
	ck_assert_int_eq(ik_pgtable_map(n.s1b, 0x5000, GDATA + 0x1000, 0x1000, IK_PROT_READ), 0);
	for (int i = 0; i < 2; i++) {
		x = xl(&n, 0, 0x5000, R, 0);
		ck_assert_uint_eq(x.ipa, GDATA);
		x = xl(&n, 1, 0x5000, R, 0);
		ck_assert_uint_eq(x.ipa, GDATA + 0x1000);
	}
	ck_assert_uint_eq(stats(n.s).iotlb_misses, 2);
	/* a stage-1 "all of the ASID / PASID" of VM 2 leaves VM 1's entry */
	st = stats(n.s);
	if (n.vtd) {
		struct ik_vtd_desc d;

		memset(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_PIOTLB;
		d.g = IK_VTD_G_PASID;
		d.did = VMID + 1;
		d.pasid = ASID;
		ck_assert_int_eq(vtd(&n, &d), 0);
	} else {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_SMMU_CMD_TLBI_NH_ASID;
		c.asid = ASID;
		c.vmid = VMID + 1;
		ck_assert_int_eq(smmu(&n, &c), 0);
	}
	ck_assert_uint_eq(stats(n.s).iotlb_inv_entries - st.iotlb_inv_entries, 1);
	xl(&n, 0, 0x5000, R, 0);
	xl(&n, 1, 0x5000, R, 0);
	ck_assert_uint_eq(stats(n.s).iotlb_misses, st.iotlb_misses + 1);
	/* the stage-2 "everything of the VM" (S12_VMALL / domain IOTLB) */
	st = stats(n.s);
	if (n.vtd) {
		struct ik_vtd_desc d;

		memset(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_IOTLB;
		d.g = IK_VTD_G_DOMAIN;
		d.did = VMID;
		ck_assert_int_eq(vtd(&n, &d), 0);
	} else {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_SMMU_CMD_TLBI_S12_VMALL;
		c.vmid = VMID;
		ck_assert_int_eq(smmu(&n, &c), 0);
	}
	ck_assert_uint_eq(stats(n.s).iotlb_inv_entries - st.iotlb_inv_entries, 1);
	ck_assert_uint_eq(stats(n.s).inv_s2_tag, 1);
	nest_fini(&n);
}
END_TEST

START_TEST(hardware_access_flag_update_goes_through_stage2)
{
	/* LPAE stage 1 with the access flag clear: the walker sets it with the
	 * host's cas64 at the PA stage 2 gives, which needs stage-2 write
	 * permission on the table page. */
	struct nest n;
	uint64_t leaf, page;

	nest_init(&n, false, 0);
	/* HA comes with HD in this format: a table set with dirty tracking */
	n.s1b = mk_s1(&n, IK_PT_QUIRK_DIRTY);
	ik_pgtable_walker(n.s1b, &n.cfg.s1);
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 0, &n.cfg), 0);
	ck_assert_int_eq(ik_pgtable_map(n.s1b, 0x5000, GDATA, 0x1000, IK_PROT_READ), 0);
	leaf = s1_entry(&n, 0x5000, NULL);
	page = leaf & ~0xfffull;
	*guest_ptr(&n, leaf) &= ~IK_LPAE_PTE_AF;
	unmap(n.s2, page, 0x1000);
	ck_assert_int_eq(ik_pgtable_map(n.s2, page, ipa_pa(page), 0x1000, IK_PROT_READ), 0);
	struct ik_softiommu_xlate x = xl(&n, 0, 0x5000, R, IK_SOFTIOMMU_FAULT_PERMISSION);
	ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_2);
	ck_assert_uint_eq(x.s2_class, IK_SOFTIOMMU_S2_TT);
	ck_assert_uint_eq(*guest_ptr(&n, leaf) & IK_LPAE_PTE_AF, 0);
	unmap(n.s2, page, 0x1000);
	ck_assert_int_eq(ik_pgtable_map(n.s2, page, ipa_pa(page), 0x1000,
					IK_PROT_READ | IK_PROT_WRITE), 0);
	xl(&n, 0, 0x5000, R, 0);
	ck_assert_uint_ne(*guest_ptr(&n, leaf) & IK_LPAE_PTE_AF, 0);
	drain_faults(n.s);
	nest_fini(&n);
}
END_TEST

/* Through a real command queue, consumed inline by the soft IOMMU on the
 * PROD write: the guest's stage-1 invalidation, then the host's stage-2
 * one, each with its sync. */
START_TEST(invalidations_through_the_command_queue)
{
	const struct ik_cmdq_fmt *qf = _i ? &ik_cmdq_fmt_vtd128 : &ik_cmdq_fmt_smmuv3;
	struct ik_softiommu_cq cq;
	struct ik_softiommu_cq_config cc;
	struct ik_cmdq_config qc;
	struct ik_cmdq *q;
	struct nest n;
	uint64_t w[2][2], newpa = ipa_pa(GDATA + (2u << 20));
	void *ring;

	nest_init(&n, _i, IK_SOFTIOMMU_CHECK);
	ring = calloc(1, (size_t)qf->entry_size << 4);
	ck_assert_ptr_nonnull(ring);
	memset(&cc, 0, sizeof(cc));
	cc.fmt = qf;
	cc.log2_entries = 4;
	cc.flags = _i ? IK_CMDQ_CFG_NO_WRAP : 0;
	cc.ring = ring;
	ck_assert_int_eq(ik_softiommu_cq_init(&cq, n.s, &cc), 0);
	memset(&qc, 0, sizeof(qc));
	qc.fmt = qf;
	qc.log2_entries = 4;
	qc.flags = cc.flags;
	qc.ring = ring;
	qc.regs = &ik_softiommu_cq_regs;
	qc.regs_ctx = &cq;
	ck_assert_int_eq(ik_cmdq_create(&qc, &q), 0);

	s1_map(&n, 0x5000, GDATA, 0x1000, IK_PROT_READ | IK_PROT_WRITE);
	xl(&n, 0, 0x5000, R, 0);
	unmap(n.s1, 0x5000, 0x1000);
	s1_map(&n, 0x5000, GDATA + 0x1000, 0x1000, IK_PROT_READ | IK_PROT_WRITE);
	if (_i) {
		struct ik_vtd_desc d;

		memset(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_PIOTLB;
		d.g = IK_VTD_G_PASID_PAGE;
		d.did = VMID;
		d.pasid = ASID;
		d.addr = 0x5000;
		ck_assert_int_eq(ik_vtd_desc_encode(&d, w[0], 2), 0);
		memset(&d, 0, sizeof(d));
		d.type = IK_VTD_DESC_IOTLB;
		d.g = IK_VTD_G_PAGE;
		d.did = VMID;
		d.addr = GDATA;
		ck_assert_int_eq(ik_vtd_desc_encode(&d, w[1], 2), 0);
	} else {
		struct ik_smmu_cmd c;

		memset(&c, 0, sizeof(c));
		c.op = IK_SMMU_CMD_TLBI_NH_VA;
		c.asid = ASID;
		c.vmid = VMID;
		c.addr = 0x5000;
		ck_assert_int_eq(ik_smmu_cmd_encode(&c, w[0]), 0);
		c.op = IK_SMMU_CMD_TLBI_S2_IPA;
		c.asid = 0;
		c.addr = GDATA;
		ck_assert_int_eq(ik_smmu_cmd_encode(&c, w[1]), 0);
	}
	ck_assert_int_eq(ik_cmdq_issue(q, w[0], 1, IK_CMDQ_SYNC), 0);
	ck_assert_uint_eq(xl(&n, 0, 0x5000, R, 0).ipa, GDATA + 0x1000);
	/* the host moves the guest's data block */
	unmap(n.s2, GDATA, 2u << 20);
	ck_assert_int_eq(ik_pgtable_map(n.s2, GDATA, newpa, 2u << 20, IK_PROT_READ | IK_PROT_WRITE), 0);
	ck_assert_int_eq(ik_cmdq_issue(q, w[1], 1, IK_CMDQ_SYNC), 0);
	ck_assert_uint_eq(xl(&n, 0, 0x5000, R, 0).oa, newpa + 0x1000);
	ck_assert_uint_eq(stats(n.s).stale, 0);
	ck_assert_uint_eq(stats(n.s).inv_s2_range, 1);
	ck_assert_uint_eq(stats(n.s).inv_range, 1);
	ck_assert_uint_ge(stats(n.s).syncs, 2);
	ik_cmdq_destroy(q);
	free(ring);
	nest_fini(&n);
}
END_TEST

/* A custom walker that fills the nested fields anyway. */
static int junk_walk(void *ctx, uint64_t iova, struct ik_softiommu_xlate *out)
{
	(void)ctx;
	out->oa = PA_BASE + (iova & 0xfff);
	out->lg2_size = 12;
	out->prot = R | W;
	out->stage = IK_SOFTIOMMU_STAGE_2;
	out->s2_class = IK_SOFTIOMMU_S2_TT;
	out->ipa = 0x1234000 + (iova & 0xfff);
	out->prot_s1 = R;
	return 0;
}

START_TEST(non_nested_streams_report_no_stage)
{
	struct nest n;
	struct ik_softiommu_walker w = { junk_walk, NULL, NULL };
	struct ik_softiommu_xlate x;

	nest_init(&n, false, IK_SOFTIOMMU_CHECK);
	ck_assert_int_eq(ik_softiommu_attach(n.s, 2, 9, &w), 0);
	for (int i = 0; i < 2; i++) { /* a walk, then a checked hit */
		x = xl(&n, 2, 0x7008, W, 0);
		ck_assert_uint_eq(x.stage, IK_SOFTIOMMU_STAGE_ONLY);
		ck_assert_uint_eq(x.s2_class, IK_SOFTIOMMU_S2_NONE);
		ck_assert_uint_eq(x.ipa, 0);
		ck_assert_uint_eq(x.prot_s1, 0);
		ck_assert_uint_eq(x.oa, PA_BASE + 8);
	}
	ck_assert_uint_eq(stats(n.s).stale, 0);
	nest_fini(&n);
}
END_TEST

/* ------------------------------------------------------------ bad input */

START_TEST(attach_nested_rejects_bad_pairs_and_changes_nothing)
{
	struct nest n;
	struct ik_softiommu_nested c;
	struct ik_pt_mem nomem = { NULL, NULL, NULL };
	struct ik_pt_walker wrong;
	struct ik_softiommu_stats st0;

	nest_init(&n, _i, 0);
	s1_map(&n, 0x5000, GDATA, 0x1000, IK_PROT_READ);
	xl(&n, 0, 0x5000, R, 0);
	st0 = stats(n.s);
	ck_assert_int_eq(ik_softiommu_attach_nested(NULL, 0, &n.cfg), -EINVAL);
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 0, NULL), -EINVAL);
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 64, &n.cfg), -EINVAL);
	c = n.cfg;
	c.mem = &nomem;
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 0, &c), -EINVAL);
	c.mem = NULL; /* no default table memory */
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 0, &c), -EINVAL);
	/* pairs: stage 2 as stage 1, stage 1 over a stage 1, across vendors */
	c = n.cfg;
	c.s1 = n.cfg.s2;
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 0, &c), -EINVAL);
	c = n.cfg;
	c.s2 = n.cfg.s1;
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 0, &c), -EINVAL);
	c = n.cfg;
	wrong = n.cfg.s2;
	wrong.geom.fmt = n.vtd ? IK_PT_LPAE_S2 : IK_PT_VTD_SL;
	c.s2 = wrong;
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 0, &c), -EINVAL);
	c = n.cfg;
	c.s2.geom.nlevels = 0;
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 0, &c), -EINVAL);
	c = n.cfg;
	c.s1.geom.nlevels = IK_SOFTIOMMU_MAX_LEVELS + 1;
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 0, &c), -EINVAL);
	c = n.cfg;
	c.s1.geom.fmt = (enum ik_pt_fmt)(ik_pt_fmt_count() + 1);
	ck_assert_int_eq(ik_softiommu_attach_nested(n.s, 0, &c), -EINVAL);
	/* the old binding still translates, from its cached entry */
	xl(&n, 0, 0x5000, R, 0);
	ck_assert_uint_eq(stats(n.s).iotlb_misses, st0.iotlb_misses);
	xl(&n, 1, 0x5000, R, IK_SOFTIOMMU_FAULT_BAD_STREAM);
	/* detach unbinds both stages */
	ck_assert_int_eq(ik_softiommu_detach(n.s, 0), 0);
	xl(&n, 0, 0x5000, R, IK_SOFTIOMMU_FAULT_BAD_STREAM);
	drain_faults(n.s);
	nest_fini(&n);
}
END_TEST

START_TEST(exec_rejects_bad_scopes_and_changes_nothing)
{
	struct nest n;
	struct ik_softiommu_cmd c;
	struct ik_softiommu_stats st0;
	struct ik_softiommu_event ev0[4], ev1[4];

	nest_init(&n, _i, 0);
	s1_map(&n, 0x5000, GDATA, 0x1000, IK_PROT_READ);
	xl(&n, 0, 0x5000, R, 0);
	memset(&c, 0, sizeof(c));
	c.op = IK_SOFTIOMMU_OP_SYNC;
	ck_assert_int_eq(ik_softiommu_exec(n.s, &c), 0);
	st0 = stats(n.s);
	ck_assert_int_eq(ik_softiommu_history(n.s, ev0, 4), 1);
	memset(&c, 0, sizeof(c));
	c.op = IK_SOFTIOMMU_OP_INV_TAG;
	c.tag = ASID;
	c.flags = IK_SOFTIOMMU_CMD_VMID | IK_SOFTIOMMU_CMD_PASID;
	ck_assert_int_eq(ik_softiommu_exec(n.s, &c), -EINVAL);
	c.flags = 0x4;
	ck_assert_int_eq(ik_softiommu_exec(n.s, &c), -EINVAL);
	c.op = IK_SOFTIOMMU_OP_INV_S2_TAG;
	c.flags = IK_SOFTIOMMU_CMD_VMID;
	ck_assert_int_eq(ik_softiommu_exec(n.s, &c), -EINVAL);
	c.op = IK_SOFTIOMMU_OP_INV_ALL;
	ck_assert_int_eq(ik_softiommu_exec(n.s, &c), -EINVAL);
	c.op = IK_SOFTIOMMU_OP_INV_S2_RANGE;
	c.flags = 0;
	c.size = 0;
	ck_assert_int_eq(ik_softiommu_exec(n.s, &c), -EINVAL);
	c.iova = ~0ull - 0xfff;
	c.size = 0x2000;
	ck_assert_int_eq(ik_softiommu_exec(n.s, &c), -EINVAL);
	struct ik_softiommu_stats st1 = stats(n.s);
	ck_assert(memcmp(&st0, &st1, sizeof(st0)) == 0);
	ck_assert_int_eq(ik_softiommu_history(n.s, ev1, 4), 1);
	ck_assert(memcmp(ev0, ev1, sizeof(ev0[0])) == 0);
	xl(&n, 0, 0x5000, R, 0);
	ck_assert_uint_eq(stats(n.s).iotlb_hits, st0.iotlb_hits + 1);
	ck_assert_str_eq(ik_softiommu_op_name(IK_SOFTIOMMU_OP_INV_S2_RANGE), "inv-s2-range");
	ck_assert_str_eq(ik_softiommu_op_name(IK_SOFTIOMMU_OP_INV_S2_TAG), "inv-s2-tag");
	nest_fini(&n);
}
END_TEST

Suite *ik_test_suite(void)
{
	Suite *s = suite_create("softiommu_nested");
	TCase *tc = tcase_create("nested");

	/* _i = 0: lpae-s1 over lpae-s2 (SMMUv3); 1: vtd-fl over vtd-sl (VT-d) */
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, nested_access_reaches_both_stages_output, 0, 2);
	tcase_add_loop_test(tc, combined_block_is_the_smaller_of_the_two_leaves, 0, 2);
	tcase_add_loop_test(tc, permissions_are_intersected_and_the_refusing_stage_reported, 0, 2);
	tcase_add_loop_test(tc, stage2_fault_on_a_stage1_table_fetch_is_class_tt, 0, 2);
	tcase_add_loop_test(tc, hostile_stage1_descriptors_fault_at_the_right_stage, 0, 2);
	tcase_add_loop_test(tc, stage1_change_is_stale_until_a_stage1_invalidation_of_both_tags, 0,
			    2);
	tcase_add_loop_test(tc, stage2_change_is_stale_until_a_stage2_invalidation_drops_the_vmid,
			    0, 2);
	tcase_add_loop_test(tc, stage2_remap_of_a_stage1_table_needs_the_stage2_invalidation, 0, 2);
	tcase_add_loop_test(tc, same_stage1_tag_under_two_stage2_tags_never_shares_entries, 0, 2);
	tcase_add_test(tc, hardware_access_flag_update_goes_through_stage2);
	tcase_add_loop_test(tc, invalidations_through_the_command_queue, 0, 2);
	tcase_add_test(tc, non_nested_streams_report_no_stage);
	tcase_add_loop_test(tc, attach_nested_rejects_bad_pairs_and_changes_nothing, 0, 2);
	tcase_add_loop_test(tc, exec_rejects_bad_scopes_and_changes_nothing, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
