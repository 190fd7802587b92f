/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * userspace-driver.c - a walk-through of a VFIO-style userspace driver built
 * on iommukit: it manages its own IOVA space (ik_iova), its own IO page
 * tables (ik_pgtable, ARM LPAE stage 1 here), and issues invalidations to
 * the IOMMU through a command queue (ik_cmdq, SMMUv3 commands) - end to end,
 * against the software IOMMU instead of hardware.
 *
 * The shape is the one a driver has on a real SMMUv3:
 *
 *   hardware                          here
 *   --------------------------------  ---------------------------------------
 *   SMMU registers (CMDQ_PROD/CONS)   struct ik_cmdq_sw registers in memory
 *   the SMMU consuming the queue      ik_softiommu_cq_run() on a thread
 *   STE/CD holding TTBR0/TCR/ASID     ik_softiommu_attach_pt() with the walker
 *                                     the SMMU derives from those registers
 *   the SMMU's table walker + TLB     the soft IOMMU's ik_pt_walk() + IOTLB
 *   the device's DMA engine           ik_softiommu_dma_read()/dma_write()
 *   the event queue (faults)          ik_softiommu_fault_pop()
 *
 * What changes on hardware is only the memory behind the queue registers and
 * the table pages (MMIO and DMA-able memory with their device addresses);
 * every iommukit call below stays the same.
 *
 * Build: part of `make` (a noinst program); `make check` runs it
 * (tests/userspace-driver.sh).  Exit status 0 when every step behaved.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <iommukit/iova.h>
#include <iommukit/pgtable.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/cmdq.h>
#include <iommukit/cmd/smmuv3.h>
#include <iommukit/softiommu.h>

/* posix_memalign with aligned_alloc's interface (no size restriction). */
static void *xmemalign(size_t align, size_t size)
{
	void *p = NULL;

	return posix_memalign(&p, align, size ? size : align) ? NULL : p;
}

#define SID 3	 /* the device's StreamID */
#define ASID 7	 /* the address-space id of its context */
#define PAGE 4096u

#define CHECK(expr)                                                                       \
	do {                                                                              \
		int e_ = (expr);                                                          \
		if (e_ < 0) {                                                             \
			fprintf(stderr, "userspace-driver: %s failed: %s (line %d)\n", #expr, \
				ik_strerror(e_), __LINE__);                               \
			exit(1);                                                          \
		}                                                                         \
	} while (0)

/* The "hardware": created once, owned by the platform, not by the driver. */
static struct ik_softiommu *smmu;
static struct ik_softiommu_cq smmu_cmdq_consumer;
static int smmu_stop;

static void *smmu_thread(void *arg)
{
	struct ik_softiommu_cq *cqs[1] = { &smmu_cmdq_consumer };

	(void)arg;
	ik_softiommu_cq_run(cqs, 1, &smmu_stop);
	return NULL;
}

/* The driver's state for one device: what a VFIO driver keeps. */
struct driver {
	struct ik_iova_domain iovad; /* the device's IOVA space */
	struct ik_pgtable *pt;	     /* its IO page tables */
	struct ik_cmdq *cmdq;	     /* the SMMU's command queue (producer side) */
	void *cmdq_ring;
};

/*
 * Invalidate what an unmap left in the IOTLB and wait for it: TLBI_NH_VA for
 * the gathered range (range invalidation: a few commands for any size), then
 * CMD_SYNC appended by IK_CMDQ_SYNC.  `walk` (tables were freed or split)
 * clears the Leaf hint so walk caches are invalidated too.
 */
static void invalidate(struct driver *drv, const struct ik_gather *g)
{
	struct ik_smmu_cmd tmpl, cmds[16];
	ik_u64 ents[16][2];
	int n;

	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.op = IK_SMMU_CMD_TLBI_NH_VA;
	tmpl.asid = ASID;
	tmpl.leaf = !g->walk;
	n = ik_smmu_tlbi_range(&tmpl, g->start, g->end - g->start, 12, true, cmds, 16);
	CHECK(n);
	for (int i = 0; i < n; i++)
		CHECK(ik_smmu_cmd_encode(&cmds[i], ents[i]));
	CHECK(ik_cmdq_issue(drv->cmdq, ents, (unsigned)n, IK_CMDQ_SYNC));
}

/* dma_map: IOVA for `len` bytes at `buf`, mapped for the device. */
static ik_u64 dma_map(struct driver *drv, void *buf, size_t len, unsigned prot)
{
	ik_u64 npages = (len + PAGE - 1) / PAGE, pfn;

	/* 1. An IOVA range below the device's DMA limit (the per-CPU caches
	 *    make this a few nanoseconds in the common case). */
	CHECK(ik_iova_alloc_fast(&drv->iovad, npages, 0xfffff, &pfn));
	/* 2. Page-table entries: the engine picks the largest page sizes the
	 *    alignment allows, cleans each run of PTEs once for a non-coherent
	 *    walker, and calls iotlb_sync_map once.  The SMMU caches no
	 *    invalid entries, so nothing needs invalidating before first use. */
	CHECK(ik_pgtable_map(drv->pt, pfn * PAGE, (ik_u64)(uintptr_t)buf, npages * PAGE, prot));
	return pfn * PAGE;
}

/* dma_unmap: the reverse, in the order that keeps the device safe. */
static void dma_unmap(struct driver *drv, ik_u64 iova, size_t len)
{
	ik_u64 npages = (len + PAGE - 1) / PAGE;
	struct ik_gather g;

	ik_gather_init(&g);
	/* 1. Clear the PTEs (the device can no longer walk to the buffer)... */
	if (ik_pgtable_unmap(drv->pt, iova, npages * PAGE, &g) != (ik_s64)(npages * PAGE)) {
		fprintf(stderr, "userspace-driver: unmap did not unmap everything\n");
		exit(1);
	}
	/* 2. ...but the IOTLB may still hold them: invalidate and wait... */
	invalidate(drv, &g);
	/* 3. ...only then free the table pages the unmap emptied... */
	ik_pgtable_gather_sync(drv->pt, &g);
	/* 4. ...and the IOVA, which another mapping may now reuse. */
	CHECK(ik_iova_free_fast(&drv->iovad, iova / PAGE, npages));
}

/* ---- platform: the SMMU, with its IOTLB, and stale-translation checking
 * on (a driver bug would show up as a report, not silently); its command
 * queue consumer, on a thread of its own. */
static pthread_t platform_init(struct driver *drv)
{
	struct ik_softiommu_config scfg;
	struct ik_softiommu_cq_config ccfg;
	pthread_t tid;

	ik_softiommu_config_init(&scfg);
	scfg.flags = IK_SOFTIOMMU_CHECK;
	/* This process is the whole platform: device addresses are its own
	 * virtual addresses, so it trusts them on purpose (a VMM never may). */
	scfg.phys_to_host = ik_softiommu_host_identity;
	CHECK(ik_softiommu_create(&scfg, &smmu));

	/* The queue's ring is memory the driver allocates and tells the SMMU
	 * about (CMDQ_BASE); PROD/CONS are the SMMU's registers, here the soft
	 * IOMMU's consumer (ik_cmdq_sw_regs). */
	drv->cmdq_ring = xmemalign(4096, 16u << 8);
	CHECK(drv->cmdq_ring ? 0 : -ENOMEM);
	memset(drv->cmdq_ring, 0, 16u << 8);
	memset(&ccfg, 0, sizeof(ccfg));
	ccfg.fmt = &ik_cmdq_fmt_smmuv3;
	ccfg.log2_entries = 8;
	ccfg.ring = drv->cmdq_ring;
	CHECK(ik_softiommu_cq_init(&smmu_cmdq_consumer, smmu, &ccfg));
	CHECK(pthread_create(&tid, NULL, smmu_thread, NULL) ? -EAGAIN : 0);
	return tid;
}

/* ---- the driver: its command queue, its IOVA space, its page tables, and
 * the context the SMMU walks them with. */
static void driver_init(struct driver *drv)
{
	struct ik_cmdq_config qcfg;
	struct ik_iova_config icfg;
	struct ik_pgtable_cfg pcfg;
	struct ik_pt_fmt_info fi;
	struct ik_lpae_regs regs;
	struct ik_pt_walker hw_walker;

	memset(&qcfg, 0, sizeof(qcfg));
	qcfg.fmt = &ik_cmdq_fmt_smmuv3;
	qcfg.log2_entries = 8;
	qcfg.ring = drv->cmdq_ring;
	qcfg.regs = &ik_cmdq_sw_regs;		/* on hardware: MMIO accessors */
	qcfg.regs_ctx = &smmu_cmdq_consumer.sw;	/* on hardware: the register page */
	CHECK(ik_cmdq_create(&qcfg, &drv->cmdq));

	/* The IOVA space: 4 KiB pages 1 .. 2^20 - 1 (a 4 GiB window), with the
	 * MSI doorbell window reserved, as VFIO reports it. */
	memset(&icfg, 0, sizeof(icfg));
	icfg.granule = PAGE;
	icfg.start_pfn = 1;
	icfg.end_pfn = 0xfffff;
	CHECK(ik_iova_init(&drv->iovad, &icfg));
	CHECK(ik_iova_reserve(&drv->iovad, 0x8000000 / PAGE, 0x80fffff / PAGE));

	/* The page tables: every page size the format has at its smallest
	 * granule (4K, 2M, 1G).  The driver writes TTBR0/TCR/MAIR into the
	 * context descriptor; the SMMU derives its walk from exactly those. */
	CHECK(ik_pt_fmt_get_info(IK_PT_LPAE_S1, &fi));
	memset(&pcfg, 0, sizeof(pcfg));
	pcfg.fmt = IK_PT_LPAE_S1;
	pcfg.ias = 48;
	pcfg.oas = 48;
	pcfg.pgsize_bitmap = fi.granules[0].leaf_sizes;
	pcfg.coherent = true;
	CHECK(ik_pgtable_create(&pcfg, &drv->pt));
	CHECK(ik_lpae_get_regs(drv->pt, &regs));
	CHECK(ik_lpae_walker_from_regs(&hw_walker, 1, regs.tcr, regs.ttbr, 0));
	CHECK(ik_softiommu_attach_pt(smmu, SID, ASID, &hw_walker, &ik_softiommu_host_mem));
	printf("context: TTBR0 %#llx TCR %#llx MAIR %#llx, ASID %d, StreamID %d\n",
	       (unsigned long long)regs.ttbr, (unsigned long long)regs.tcr,
	       (unsigned long long)regs.mair, ASID, SID);
}

/* ---- DMA: map a buffer, let the device write into it, read it; a
 * read-only mapping the device may read and not write; unmap, after which
 * the device is locked out.  0, or 1 if something misbehaved. */
static int device_dma(struct driver *drv, char *buf)
{
	struct ik_softiommu_fault fault;
	char msg[64];
	ik_u64 iova, iova2;

	iova = dma_map(drv, buf, 4 * PAGE, IK_PROT_READ | IK_PROT_WRITE);
	printf("mapped 16 KiB at host %p -> iova %#llx\n", (void *)buf, (unsigned long long)iova);
	snprintf(msg, sizeof(msg), "hello from the device");
	CHECK(ik_softiommu_dma_write(smmu, SID, iova + PAGE + 100, msg, strlen(msg) + 1));
	printf("device wrote at iova %#llx; the driver reads: \"%s\"\n",
	       (unsigned long long)(iova + PAGE + 100), buf + PAGE + 100);
	if (strcmp(buf + PAGE + 100, msg))
		return fprintf(stderr, "userspace-driver: data did not arrive\n"), 1;

	/* A read-only mapping: the device may read it, a write faults. */
	iova2 = dma_map(drv, buf + 3 * PAGE, PAGE, IK_PROT_READ);
	CHECK(ik_softiommu_dma_read(smmu, SID, iova2, msg, 8));
	if (ik_softiommu_dma_write(smmu, SID, iova2, msg, 8) != -EFAULT)
		return fprintf(stderr, "userspace-driver: write to read-only page allowed\n"), 1;
	CHECK(ik_softiommu_fault_pop(smmu, &fault));
	printf("event: %s fault, %s at iova %#llx (StreamID %u)\n",
	       ik_softiommu_fault_name(fault.type), fault.access == IK_SOFTIOMMU_WRITE ? "write" : "read",
	       (unsigned long long)fault.iova, fault.sid);

	/* Unmap: PTEs, invalidation + sync, table pages, IOVA. */
	dma_unmap(drv, iova, 4 * PAGE);
	dma_unmap(drv, iova2, PAGE);

	/* After unmap + invalidate + sync the device is locked out. */
	if (ik_softiommu_dma_write(smmu, SID, iova + PAGE, msg, 8) != -EFAULT)
		return fprintf(stderr, "userspace-driver: access after unmap succeeded\n"), 1;
	CHECK(ik_softiommu_fault_pop(smmu, &fault));
	printf("event: %s fault at iova %#llx after unmap, as it should be\n",
	       ik_softiommu_fault_name(fault.type), (unsigned long long)fault.iova);
	return 0;
}

/* ---- what the SMMU saw: two faults (both expected), no stale translation. */
static int check_counters(void)
{
	struct ik_softiommu_stats st;

	CHECK(ik_softiommu_stats(smmu, &st));
	printf("soft IOMMU: %llu accesses, %llu IOTLB hits, %llu misses, %llu commands, "
	       "%llu syncs, %llu faults, %llu stale translations\n",
	       (unsigned long long)st.accesses, (unsigned long long)st.iotlb_hits,
	       (unsigned long long)st.iotlb_misses, (unsigned long long)st.cmds,
	       (unsigned long long)st.syncs, (unsigned long long)st.faults,
	       (unsigned long long)st.stale);
	if (st.stale != 0 || st.faults != 2)
		return fprintf(stderr, "userspace-driver: unexpected counters\n"), 1;
	return 0;
}

int main(void)
{
	struct driver drv;
	pthread_t tid;
	char *buf;

	memset(&drv, 0, sizeof(drv));
	tid = platform_init(&drv);
	driver_init(&drv);
	buf = xmemalign(PAGE, 4 * PAGE);
	if (!buf)
		return 1;
	memset(buf, 0, 4 * PAGE);
	if (device_dma(&drv, buf) || check_counters())
		return 1;

	/* ---- teardown: detach the device before freeing its tables. */
	CHECK(ik_softiommu_detach(smmu, SID));
	ik_pgtable_destroy(drv.pt);
	ik_iova_destroy(&drv.iovad);
	__atomic_store_n(&smmu_stop, 1, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);
	ik_cmdq_destroy(drv.cmdq);
	ik_softiommu_destroy(smmu);
	free(drv.cmdq_ring);
	free(buf);
	printf("ok\n");
	return 0;
}
