/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The board of the rv64 hardware-in-the-loop image: QEMU 10's riscv virt
 * machine with `-bios none -kernel IMAGE -device riscv-iommu-pci`, booted
 * in M-mode (QEMU's reset vector jumps to the ELF's entry with a0 = hart
 * ID, a1 = the device tree; no firmware runs, so no SBI, no PMP set up:
 * M-mode reaches everything).
 *
 * What it relies on - the one place for the machine's fixed facts (QEMU
 * 10.0.2 hw/riscv/virt.c, virt_memmap[]):
 *   0x00100000  SiFive test device ("sifive,test0"): writing 0x5555 stops
 *               QEMU with exit status 0, (s << 16) | 0x3333 with status s
 *   0x0200bff8  the ACLINT's mtime, 10 MHz (the machine's timebase)
 *   0x10000000  ns16550a UART (console, -serial), byte registers
 *   0x30000000  PCIe ECAM, 256 MiB: buses 0..255
 *   0x40000000  PCIe 32-bit memory window, up to 0x80000000: nobody assigns
 *               BARs (no firmware), the board and the harness do, from here
 *   0x80000000  RAM (-m); the image at its base (hil_qemu_riscv_virt.ld),
 *               the device tree QEMU builds near its top
 * The RISC-V IOMMU is not at a fixed address: `-device riscv-iommu-pci` is
 * a PCI function (vendor 0x1b36, device 0x0014, class 0x0806) whose BAR0
 * holds the register file; QEMU puts every other device of its PCI bus
 * behind it, with the requester ID as the device ID.  The board finds it,
 * assigns BAR0 from the window and enables memory decoding and bus
 * mastering, and switches ddtp from its reset value, Off (every DMA
 * refused), to Bare, so that DMA is untranslated until a check enables the
 * IOMMU (hil.h's contract).
 *
 * The command line (hil.iommu=riscv ...) is the device tree's
 * /chosen/bootargs, from -append.  No MMU, no caches to maintain (QEMU's
 * PCI DMA is coherent with the hart): the DMA clean is a fence.
 */
#include <iommukit/env.h>
#include "bm_hw.h"
#include "hil.h"

#define RV_TEST 0x00100000ul
#define RV_MTIME 0x0200bff8ul
#define RV_TIMEBASE_HZ 10000000ull
#define RV_UART 0x10000000ul
#define RV_PCIE_ECAM 0x30000000ul
#define RV_PCIE_ECAM_BUSES 256u
#define RV_PCIE_MMIO 0x40000000ull
#define RV_PCIE_MMIO_END 0x80000000ull
#define RV_RAM 0x80000000ull

#define RISCV_IOMMU_VENDOR 0x1b36u	/* Red Hat, Inc. (QEMU) */
#define RISCV_IOMMU_DEVICE 0x0014u

extern const ik_u8 hil_trap_vector[];	/* start_qemu_riscv_virt.S */
void hil_board_trap(ik_u64 mcause, ik_u64 mepc, ik_u64 mtval) __attribute__((noreturn));

/* Set by start.S from a1: the device tree QEMU passed. */
ik_u64 bm_boot_fdt;

void bm_board_write(const char *s, ik_size n)
{
	volatile ik_u8 *uart = (volatile ik_u8 *)RV_UART;

	for (; n; n--, s++) {
		while (!(uart[5] & 0x20))	/* LSR.THRE */
			;
		uart[0] = (ik_u8)*s;
	}
}

void bm_board_exit(int status)
{
	volatile ik_u32 *test = (volatile ik_u32 *)RV_TEST;

	__asm__ __volatile__("fence iorw, iorw" ::: "memory");
	*test = status ? (ik_u32)(status & 0xffff) << 16 | 0x3333u : 0x5555u;
	for (;;)
		__asm__ __volatile__("wfi");
}

ik_u64 bm_board_time_ns(void)
{
	ik_u64 t = *(volatile ik_u64 *)RV_MTIME;

	return (t / RV_TIMEBASE_HZ) * 1000000000u + (t % RV_TIMEBASE_HZ) * 1000000000u /
	       RV_TIMEBASE_HZ;
}

unsigned bm_board_cpu_id(void)
{
	return 0;	/* one hart */
}

void hil_board_trap(ik_u64 mcause, ik_u64 mepc, ik_u64 mtval)
{
	hil_printf("Bail out! unexpected trap: mcause %#llx, mepc %#llx, mtval %#llx\n",
		   (unsigned long long)mcause, (unsigned long long)mepc,
		   (unsigned long long)mtval);
	bm_board_exit(2);
}

/* ---- the device tree: /chosen/bootargs ---- */
static ik_u32 be32(const volatile ik_u8 *p)
{
	return (ik_u32)p[0] << 24 | (ik_u32)p[1] << 16 | (ik_u32)p[2] << 8 | p[3];
}

static bool name_is(const volatile ik_u8 *p, ik_u32 max, const char *s)
{
	ik_u32 j;

	for (j = 0; j < max && s[j] && p[j] == (ik_u8)s[j]; j++)
		;
	return !s[j] && j < max && p[j] == 0;
}

/* The value of the first property named `prop` (NUL-terminated within its
 * length), or NULL.  Every offset is checked against the blob's sizes. */
static const char *fdt_string_prop(const volatile ik_u8 *fdt, const char *prop)
{
	ik_u32 size, st, st_size, strs, strs_size, off;

	if (be32(fdt) != 0xd00dfeedu)
		return NULL;
	size = be32(fdt + 4);
	st = be32(fdt + 8);
	strs = be32(fdt + 12);
	strs_size = be32(fdt + 32);
	st_size = be32(fdt + 36);
	if (size > (2u << 20) || st > size || st_size > size - st || strs > size ||
	    strs_size > size - strs)
		return NULL;
	for (off = st; off + 4 <= st + st_size;) {
		ik_u32 tok = be32(fdt + off);

		off += 4;
		if (tok == 1) {			/* FDT_BEGIN_NODE: name, padded */
			while (off < st + st_size && fdt[off])
				off++;
			off = (off + 4) & ~3u;
		} else if (tok == 3) {		/* FDT_PROP: len, nameoff, value */
			ik_u32 len, nameoff;

			if (off + 8 > st + st_size)
				return NULL;
			len = be32(fdt + off);
			nameoff = be32(fdt + off + 4);
			off += 8;
			if (len > st + st_size - off || nameoff >= strs_size)
				return NULL;
			if (name_is(fdt + strs + nameoff, strs_size - nameoff, prop) && len &&
			    fdt[off + len - 1] == 0)
				return (const char *)(fdt + off);
			off = (off + len + 3) & ~3u;
		} else if (tok == 2 || tok == 4) {	/* FDT_END_NODE, FDT_NOP */
			continue;
		} else {			/* FDT_END or garbage */
			break;
		}
	}
	return NULL;
}

void hil_board_init(struct hil_board *b)
{
	const volatile ik_u8 *fdt = (const volatile ik_u8 *)(ik_uptr)bm_boot_fdt;
	struct hil_pci_dev iommu;
	ik_u64 base = 0, size = 0, old;
	volatile ik_u64 *ddtp;
	unsigned i;
	bool assigned = false, have_dt;
	const char *args = NULL;
	int err;

	__asm__ __volatile__("csrw mtvec, %0" : : "r"((ik_u64)(ik_uptr)hil_trap_vector));
	have_dt = bm_boot_fdt >= RV_RAM && be32(fdt) == 0xd00dfeedu;
	if (have_dt)
		args = fdt_string_prop(fdt, "bootargs");
	b->machine = "qemu-riscv-virt";
	b->cmdline = args ? args : "";
	b->pci.ecam = RV_PCIE_ECAM;
	b->pci.buses = RV_PCIE_ECAM_BUSES;
	b->pci.mem_next = RV_PCIE_MMIO;
	b->pci.mem_end = RV_PCIE_MMIO_END;
	b->iommu_kind = HIL_IOMMU_NONE;
	b->iommu_base_fw = 0;
	b->iommu_base_fw_src = "PCI BAR0 of the riscv-iommu-pci function";
	hil_diag("riscv-virt: M-mode, mtime at %llu Hz, device tree %s", RV_TIMEBASE_HZ,
		 have_dt ? "found" : "not found");
	err = hil_pci_find(&b->pci, RISCV_IOMMU_VENDOR, RISCV_IOMMU_DEVICE, &iommu);
	if (!err)
		err = hil_pci_bar_setup(&b->pci, &iommu, 0, &base, &size, &assigned);
	if (err) {
		hil_diag("riscv-virt: no riscv-iommu-pci function (%04x:%04x) with a BAR0: %s; is "
			 "-device riscv-iommu-pci given?", RISCV_IOMMU_VENDOR, RISCV_IOMMU_DEVICE,
			 ik_strerror(err));
		return;
	}
	hil_pci_set_master(&iommu, true);
	/* ddtp comes out of reset in MODE Off (every DMA refused); the
	 * harness's contract is an IOMMU that lets DMA through untranslated
	 * until a check enables it: MODE Bare, with the busy handshake
	 * (BUSY, bit 4, clear before and after the write). */
	ddtp = (volatile ik_u64 *)(ik_uptr)(base + 0x10);
	for (i = 0; i < 1000000 && (*ddtp & 0x10); i++)
		;
	old = *ddtp;
	*ddtp = 1;	/* MODE Bare */
	for (i = 0; i < 1000000 && (*ddtp & 0x10); i++)
		;
	hil_diag("riscv-virt: ddtp %#llx at reset, %#llx after writing MODE Bare",
		 (unsigned long long)old, (unsigned long long)*ddtp);
	b->iommu_kind = HIL_IOMMU_RISCV;
	b->iommu_base = (ik_uptr)base;
	b->iommu_base_fw = base;
	hil_diag("riscv-virt: riscv-iommu-pci at %02x:%02x.%x (requester ID %#06x), class %#08x, "
		 "BAR0 %#llx (%llu KiB, %s)", iommu.bus, iommu.dev, iommu.fn, iommu.rid,
		 hil_pci_read32(&iommu, 8) >> 8, (unsigned long long)base,
		 (unsigned long long)(size >> 10), assigned ? "assigned by the board" : "preset");
}
