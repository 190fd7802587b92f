/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The board of the aarch64 hardware-in-the-loop image: QEMU 7.2's virt
 * machine with `-M virt,iommu=smmuv3,highmem=off`, booted with -kernel (an
 * ELF: QEMU enters it at EL1 with the MMU off, no firmware runs).
 *
 * What it relies on - the one place for the machine's fixed facts (QEMU 7.2
 * hw/arm/virt.c, base_memmap[]; highmem=off keeps ECAM and the PCI memory
 * window in the low 4 GiB, where these are):
 *   0x09000000  PL011 UART (console, -serial)
 *   0x09050000  SMMUv3, 0x20000 bytes (iommu=smmuv3), in front of the PCIe
 *               root complex: a device's StreamID is its requester ID
 *   0x10000000  PCIe 32-bit memory window, up to 0x3eff0000: nobody assigns
 *               BARs on virt, the harness does, from here
 *   0x3f000000  PCIe ECAM, 16 MiB: buses 0..15
 *   0x40000000  RAM (-m), the device tree QEMU builds at its base; the image
 *               at 0x40200000 (hil_qemu_virt.ld)
 *   exit        PSCI SYSTEM_OFF (function 0x84000008) through HVC: the
 *               conduit QEMU's own PSCI uses when the guest starts at EL1
 *               (virtualization=off, secure=off, the defaults); QEMU then
 *               exits with status 0 whatever the result, so the TAP lines
 *               carry the result
 *   clock       the generic timer, CNTVCT_EL0 at CNTFRQ_EL0 (62.5 MHz)
 * The SMMU's base is cross-checked against the device tree's "arm,smmu-v3"
 * node.
 *
 * MMU: on, with an identity map (one level-1 table of 1 GiB blocks: the
 * first GiB - devices, ECAM, PCI window - Device-nGnRnE and execute-never,
 * the rest - RAM - Normal write-back, inner shareable).  With the MMU off
 * every data access at EL1 is Device-nGnRnE: the Arm ARM leaves exclusive
 * loads and stores (LDXR/STXR, the compare-and-swap and lock under every
 * iommukit atomic) to memory that is not Normal cacheable IMPLEMENTATION
 * DEFINED, an unaligned access faults, and the caches are off, so the
 * data-cache cleans the driver cores do for a non-coherent walker would
 * clean nothing.  QEMU would tolerate all of that; hardware need not, and the
 * harness should run the library as it runs on hardware.  -mstrict-align
 * stays (the code before the MMU is on, and the shared objects, need it).
 */
#include <iommukit/env.h>
#include "bm_hw.h"
#include "hil.h"

#define VIRT_UART 0x09000000ul
#define VIRT_SMMU 0x09050000ul
#define VIRT_PCIE_MMIO 0x10000000ull
#define VIRT_PCIE_MMIO_END 0x3eff0000ull
#define VIRT_PCIE_ECAM 0x3f000000ul
#define VIRT_PCIE_ECAM_BUSES 16u
#define VIRT_RAM 0x40000000ul
#define PSCI_SYSTEM_OFF 0x84000008ul

extern const ik_u8 hil_vectors[];	/* start_qemu_virt.S */
void hil_board_trap(ik_u64 kind, ik_u64 esr, ik_u64 elr, ik_u64 far) __attribute__((noreturn));

void bm_board_write(const char *s, ik_size n)
{
	bm_pl011_write(VIRT_UART, s, n);
}

void bm_board_exit(int status)
{
	register ik_u64 x0 __asm__("x0") = PSCI_SYSTEM_OFF;

	(void)status;
	__asm__ __volatile__("hvc #0" : "+r"(x0) : : "x1", "x2", "x3", "memory");
	for (;;)
		__asm__ __volatile__("wfi");
}

ik_u64 bm_board_time_ns(void)
{
	return bm_cntvct_ns();
}

unsigned bm_board_cpu_id(void)
{
	return bm_mpidr_aff0() % IK_BM_NR_CPUS;
}

void hil_board_trap(ik_u64 kind, ik_u64 esr, ik_u64 elr, ik_u64 far)
{
	static const char *const from[4] = { "EL1 with SP_EL0", "EL1 with SP_EL1",
					     "EL0 AArch64", "EL0 AArch32" };
	static const char *const type[4] = { "synchronous", "IRQ", "FIQ", "SError" };

	hil_printf("Bail out! unexpected %s exception from %s: ESR_EL1 %#llx (EC %#llx), "
		   "ELR_EL1 %#llx, FAR_EL1 %#llx\n", type[kind & 3], from[kind >> 2 & 3],
		   (unsigned long long)esr, (unsigned long long)(esr >> 26 & 0x3f),
		   (unsigned long long)elr, (unsigned long long)far);
	bm_board_exit(2);
}

/* ---- MMU ---- */
#define BLOCK 0x1ull			/* level-1 block descriptor */
#define ATTR(i) ((ik_u64)(i) << 2)	/* AttrIndx: MAIR_EL1 byte i */
#define SH_INNER (3ull << 8)
#define AF (1ull << 10)
#define PXN (1ull << 53)
#define UXN (1ull << 54)
#define MAIR_DEVICE_nGnRnE 0x00ull
#define MAIR_NORMAL_WB 0xffull		/* inner and outer write-back, RW-allocate */
/* TCR_EL1: T0SZ 32 (4 GiB, lookup from level 1), IRGN0/ORGN0 write-back
 * write-allocate, SH0 inner shareable, TG0 4 KiB, EPD1 (no TTBR1 walks),
 * TG1 4 KiB, IPS 32 bits. */
#define TCR_VALUE (32ull | 1ull << 8 | 1ull << 10 | 3ull << 12 | 1ull << 23 | 2ull << 30)
#define SCTLR_M (1ull << 0)
#define SCTLR_A (1ull << 1)
#define SCTLR_C (1ull << 2)
#define SCTLR_I (1ull << 12)

static ik_u64 l1_table[512] IK_ALIGNED(4096);

static void mmu_on(void)
{
	ik_u64 sctlr;
	unsigned i;

	l1_table[0] = 0 | BLOCK | ATTR(0) | AF | PXN | UXN;
	for (i = 1; i < 4; i++)
		l1_table[i] = (ik_u64)i << 30 | BLOCK | ATTR(1) | SH_INNER | AF;
	__asm__ __volatile__("dsb sy" ::: "memory");
	__asm__ __volatile__("msr mair_el1, %0" : : "r"(MAIR_DEVICE_nGnRnE | MAIR_NORMAL_WB << 8));
	__asm__ __volatile__("msr tcr_el1, %0" : : "r"(TCR_VALUE));
	__asm__ __volatile__("msr ttbr0_el1, %0" : : "r"((ik_u64)(ik_uptr)l1_table));
	__asm__ __volatile__("isb; tlbi vmalle1; dsb nsh; isb" ::: "memory");
	__asm__ __volatile__("mrs %0, sctlr_el1" : "=r"(sctlr));
	sctlr = (sctlr | SCTLR_M | SCTLR_C | SCTLR_I) & ~SCTLR_A;
	__asm__ __volatile__("msr sctlr_el1, %0; isb" : : "r"(sctlr) : "memory");
}

/* ---- the device tree: the "reg" address of the first node compatible
 * with `compat` (a child of the root, #address-cells = 2 as on virt) ---- */
static ik_u32 be32(const volatile ik_u8 *p)
{
	return (ik_u32)p[0] << 24 | (ik_u32)p[1] << 16 | (ik_u32)p[2] << 8 | p[3];
}

static bool str_in_list(const volatile ik_u8 *list, ik_u32 len, const char *s)
{
	ik_u32 i = 0, j;

	while (i < len) {
		for (j = 0; i + j < len && s[j] && list[i + j] == (ik_u8)s[j]; j++)
			;
		if (!s[j] && i + j < len && list[i + j] == 0)
			return true;
		while (i < len && list[i])
			i++;
		i++;
	}
	return false;
}

static bool name_is(const volatile ik_u8 *p, ik_u32 max, const char *s)
{
	ik_u32 j;

	for (j = 0; j < max && s[j] && p[j] == (ik_u8)s[j]; j++)
		;
	return !s[j] && j < max && p[j] == 0;
}

static ik_u64 fdt_reg_of(const volatile ik_u8 *fdt, const char *compat)
{
	ik_u32 size, st, st_size, strs, strs_size, off, depth = 0;
	bool match[16] = { false };
	ik_u64 reg[16] = { 0 };

	if (be32(fdt) != 0xd00dfeedu)
		return 0;
	size = be32(fdt + 4);
	st = be32(fdt + 8);
	strs = be32(fdt + 12);
	strs_size = be32(fdt + 32);
	st_size = be32(fdt + 36);
	if (size > (2u << 20) || st > size || st_size > size - st || strs > size ||
	    strs_size > size - strs)
		return 0;
	for (off = st; off + 4 <= st + st_size;) {
		ik_u32 tok = be32(fdt + off);

		off += 4;
		if (tok == 1) {			/* FDT_BEGIN_NODE: name, padded */
			while (off < st + st_size && fdt[off])
				off++;
			off = (off + 4) & ~3u;
			if (++depth >= 16)
				return 0;
			match[depth] = false;
			reg[depth] = 0;
		} else if (tok == 2) {		/* FDT_END_NODE */
			if (!depth)
				return 0;
			if (match[depth] && reg[depth])
				return reg[depth];
			depth--;
		} else if (tok == 3) {		/* FDT_PROP: len, nameoff, value */
			ik_u32 len, nameoff;

			if (off + 8 > st + st_size)
				return 0;
			len = be32(fdt + off);
			nameoff = be32(fdt + off + 4);
			off += 8;
			if (len > st + st_size - off || nameoff >= strs_size)
				return 0;
			if (name_is(fdt + strs + nameoff, strs_size - nameoff, "compatible") &&
			    str_in_list(fdt + off, len, compat))
				match[depth] = true;
			if (name_is(fdt + strs + nameoff, strs_size - nameoff, "reg") && len >= 8)
				reg[depth] = (ik_u64)be32(fdt + off) << 32 | be32(fdt + off + 4);
			off = (off + len + 3) & ~3u;
		} else if (tok == 4) {		/* FDT_NOP */
			continue;
		} else {			/* FDT_END or garbage */
			break;
		}
	}
	return 0;
}

void hil_board_init(struct hil_board *b)
{
	bool have_dt;
	ik_u64 el;

	__asm__ __volatile__("msr vbar_el1, %0; isb" : : "r"((ik_u64)(ik_uptr)hil_vectors));
	mmu_on();
	__asm__ __volatile__("mrs %0, CurrentEL" : "=r"(el));
	b->machine = "qemu-virt";
	b->cmdline = "";
	b->pci.ecam = VIRT_PCIE_ECAM;
	b->pci.buses = VIRT_PCIE_ECAM_BUSES;
	b->pci.mem_next = VIRT_PCIE_MMIO;
	b->pci.mem_end = VIRT_PCIE_MMIO_END;
	have_dt = be32((const volatile ik_u8 *)VIRT_RAM) == 0xd00dfeedu;
	b->iommu_base = VIRT_SMMU;
	b->iommu_base_fw = have_dt ? fdt_reg_of((const volatile ik_u8 *)VIRT_RAM, "arm,smmu-v3") : 0;
	b->iommu_base_fw_src = "device tree arm,smmu-v3 node";
	/* A device tree without the node: no iommu=smmuv3 (the registers then
	 * read 0); without a device tree, assume the command line is right. */
	b->iommu_kind = have_dt && !b->iommu_base_fw ? HIL_IOMMU_NONE : HIL_IOMMU_SMMUV3;
	hil_diag("virt: EL%llu, MMU on (identity map), CNTFRQ %llu Hz, device tree %s",
		 (unsigned long long)(el >> 2 & 3), (unsigned long long)bm_cntfrq(),
		 have_dt ? "at 0x40000000" : "not found");
	if (b->iommu_kind == HIL_IOMMU_NONE)
		hil_diag("virt: no arm,smmu-v3 node in the device tree: is -M virt,iommu=smmuv3 given?");
}
