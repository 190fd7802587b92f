/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The board of the x86-64 hardware-in-the-loop image: QEMU 7.2's q35
 * machine booted with -kernel (Multiboot, start_qemu_q35.S) after SeaBIOS.
 *
 * What it relies on - the one place for the machine's fixed facts:
 *   console   COM1, a 16550 at I/O port 0x3f8 (-serial);
 *   exit      QEMU's isa-debug-exit device at I/O port 0xf4
 *             (-device isa-debug-exit,iobase=0xf4,iosize=0x04): writing v
 *             ends QEMU with exit status v << 1 | 1; without the device the
 *             CPU halts;
 *   clock     the TSC, calibrated once against channel 2 of the 8254 PIT
 *             (1.193182 MHz, gated through port 0x61); 1 GHz assumed where
 *             the PIT never counts;
 *   PCI       ECAM at the base SeaBIOS programs into the MCH's PCIEXBAR
 *             register (00:00.0 offset 0x60, read through ports 0xcf8/
 *             0xcfc; QEMU's default and SeaBIOS's choice: 0xb0000000,
 *             256 buses), enabled here if no firmware did; BARs assigned
 *             by SeaBIOS, the 32-bit window 0xc0000000..0xfec00000 used
 *             only for a BAR it left empty;
 *   IOMMU     the VT-d remapping unit's registers at 0xfed90000
 *             (Q35_HOST_BRIDGE_IOMMU_ADDR in QEMU 7.2's intel_iommu.h),
 *             cross-checked against the DRHD of the ACPI DMAR table
 *             (-device intel-iommu); or the AMD IOMMU's at 0xfed80000
 *             (AMDVI_BASE_ADDR in QEMU 7.2's amd_iommu.h), cross-checked
 *             against the IVHD of the ACPI IVRS table, parsed with
 *             ik_amd_ivrs_parse() (-device amd-iommu);
 *   cmdline   the Multiboot command line (-append), "hil.aw-bits=N" among
 *             others.
 * The identity map (start_qemu_q35.S) makes every address above usable as
 * a pointer; exceptions go to hil_board_trap(), which prints and stops.
 */
#include <iommukit/env.h>
#include <iommukit/drv/amd.h>
#include "bm_hw.h"
#include "hil.h"

#define Q35_COM1 0x3f8
#define Q35_DEBUG_EXIT 0xf4
#define Q35_VTD_BASE 0xfed90000ull
#define Q35_AMD_BASE 0xfed80000ull
#define Q35_ECAM_DEFAULT 0xb0000000ull
#define Q35_PCI_MEM_BASE 0xc0000000ull
#define Q35_PCI_MEM_END 0xfec00000ull
#define MCH_PCIEXBAR 0x60
#define PIT_HZ 1193182u

extern ik_u32 hil_mb_magic, hil_mb_info;	/* start_qemu_q35.S */
extern const ik_u64 hil_isr_stubs[32];
void hil_board_trap(ik_u64 vec, ik_u64 err, ik_u64 rip, ik_u64 cr2) __attribute__((noreturn));

static ik_u64 tsc_hz;
static char cmdline[256];

void bm_board_write(const char *s, ik_size n)
{
	bm_16550_write(Q35_COM1, s, n);
}

void bm_board_exit(int status)
{
	bm_outb(Q35_DEBUG_EXIT, (ik_u8)status);
	for (;;)
		__asm__ __volatile__("cli; hlt");
}

ik_u64 bm_board_time_ns(void)
{
	ik_u64 t = bm_rdtsc();

	if (!tsc_hz)
		return t;
	return (t / tsc_hz) * 1000000000u + (t % tsc_hz) * 1000000000u / tsc_hz;
}

unsigned bm_board_cpu_id(void)
{
	return 0;
}

void hil_board_trap(ik_u64 vec, ik_u64 err, ik_u64 rip, ik_u64 cr2)
{
	hil_printf("Bail out! unexpected exception %llu, error code %#llx, at rip %#llx, "
		   "cr2 %#llx\n", (unsigned long long)vec, (unsigned long long)err,
		   (unsigned long long)rip, (unsigned long long)cr2);
	bm_board_exit(2);
}

/* ---- exceptions: an IDT of 32 interrupt gates to the stubs ---- */
struct idt_gate {
	ik_u16 off_lo, sel;
	ik_u8 ist, type;
	ik_u16 off_mid;
	ik_u32 off_hi, zero;
};

static struct idt_gate idt[32] IK_ALIGNED(16);

static void idt_init(void)
{
	struct {
		ik_u16 limit;
		ik_u64 base;
	} __attribute__((packed)) ptr;
	unsigned i;

	for (i = 0; i < 32; i++) {
		ik_u64 a = hil_isr_stubs[i];

		idt[i].off_lo = (ik_u16)a;
		idt[i].sel = 0x08;		/* start_qemu_q35.S's 64-bit code segment */
		idt[i].ist = 0;
		idt[i].type = 0x8e;		/* present, DPL 0, 64-bit interrupt gate */
		idt[i].off_mid = (ik_u16)(a >> 16);
		idt[i].off_hi = (ik_u32)(a >> 32);
		idt[i].zero = 0;
	}
	ptr.limit = sizeof(idt) - 1;
	ptr.base = (ik_u64)(ik_uptr)idt;
	__asm__ __volatile__("lidt %0" : : "m"(ptr));
}

/* ---- clock ---- */
static void tsc_calibrate(void)
{
	const ik_u32 count = PIT_HZ / 100;	/* 10 ms */
	ik_u8 p61 = bm_inb(0x61);
	ik_u64 t0, t1;
	ik_u32 i;

	bm_outb(0x61, (ik_u8)((p61 & ~0x02) | 0x01));	/* gate 2 on, speaker off */
	bm_outb(0x43, 0xb0);				/* channel 2, lo/hi, mode 0 */
	bm_outb(0x42, (ik_u8)count);
	bm_outb(0x42, (ik_u8)(count >> 8));
	t0 = bm_rdtsc();
	for (i = 0; i < 50000000u && !(bm_inb(0x61) & 0x20); i++)	/* OUT2 */
		;
	t1 = bm_rdtsc();
	bm_outb(0x61, p61);
	if (i < 50000000u && t1 > t0)
		tsc_hz = (t1 - t0) * PIT_HZ / count;
	else
		tsc_hz = 1000000000u;
}

/* ---- PCI configuration mechanism #1, for the MCH's PCIEXBAR ---- */
static ik_u32 cf8_read(unsigned bus, unsigned dev, unsigned fn, unsigned off)
{
	bm_outl(0xcf8, 0x80000000u | bus << 16 | dev << 11 | fn << 8 | (off & 0xfc));
	return bm_inl(0xcfc);
}

static void cf8_write(unsigned bus, unsigned dev, unsigned fn, unsigned off, ik_u32 v)
{
	bm_outl(0xcf8, 0x80000000u | bus << 16 | dev << 11 | fn << 8 | (off & 0xfc));
	bm_outl(0xcfc, v);
}

/* PCIEXBAR: bit 0 enable, bits 2:1 length (0: 256 MiB, 1: 128, 2: 64),
 * base in bits 35:28 (35:27, 35:26 for the shorter lengths). */
static void ecam_init(struct hil_pci *p)
{
	ik_u64 v = cf8_read(0, 0, 0, MCH_PCIEXBAR) | (ik_u64)cf8_read(0, 0, 0, MCH_PCIEXBAR + 4) << 32;
	unsigned len = (unsigned)(v >> 1 & 3);

	if (!(v & 1) || len == 3) {
		cf8_write(0, 0, 0, MCH_PCIEXBAR + 4, 0);
		cf8_write(0, 0, 0, MCH_PCIEXBAR, (ik_u32)Q35_ECAM_DEFAULT | 1);
		v = Q35_ECAM_DEFAULT | 1;
		len = 0;
	}
	p->buses = 256u >> len;
	p->ecam = (ik_uptr)(v & (((ik_u64)1 << 36) - 1) & ~(((ik_u64)p->buses << 20) - 1));
}

/* ---- ACPI: the DMAR table's first DRHD register base ---- */
static bool acpi_sum_ok(const volatile ik_u8 *p, ik_u32 n)
{
	ik_u8 s = 0;

	while (n--)
		s = (ik_u8)(s + *p++);
	return s == 0;
}

static bool sig_is(const volatile ik_u8 *p, const char *sig, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (p[i] != (ik_u8)sig[i])
			return false;
	return true;
}

static ik_u32 rd32(const volatile ik_u8 *p)
{
	return (ik_u32)p[0] | (ik_u32)p[1] << 8 | (ik_u32)p[2] << 16 | (ik_u32)p[3] << 24;
}

/* The ACPI table with signature `sig` (through the RSDP and the RSDT), its
 * length in *len; NULL if there is none. */
static const volatile ik_u8 *acpi_table(const char *sig, ik_u32 *len)
{
	const volatile ik_u8 *rsdp = NULL, *rsdt, *t;
	ik_uptr a;
	ik_u32 n, i, rlen;

	/* The RSDP: 16-byte aligned in 0xe0000..0xfffff ("RSD PTR "). */
	for (a = 0xe0000; a < 0x100000; a += 16) {
		const volatile ik_u8 *p = (const volatile ik_u8 *)a;

		if (sig_is(p, "RSD PTR ", 8) && acpi_sum_ok(p, 20)) {
			rsdp = p;
			break;
		}
	}
	if (!rsdp)
		return NULL;
	rsdt = (const volatile ik_u8 *)(ik_uptr)rd32(rsdp + 16);
	if (!sig_is(rsdt, "RSDT", 4))
		return NULL;
	rlen = rd32(rsdt + 4);
	if (rlen < 36 || rlen > 65536)
		return NULL;
	n = (rlen - 36) / 4;
	for (i = 0; i < n; i++) {
		t = (const volatile ik_u8 *)(ik_uptr)rd32(rsdt + 36 + 4 * i);
		if (!sig_is(t, sig, 4))
			continue;
		*len = rd32(t + 4);
		return *len <= 65536 ? t : NULL;
	}
	return NULL;
}

/* The DMAR table's first DRHD register base. */
static ik_u64 acpi_dmar_base(void)
{
	ik_u32 len = 0, off;
	const volatile ik_u8 *t = acpi_table("DMAR", &len);

	if (!t)
		return 0;
	/* Remapping structures from offset 48: type (16 bits), length (16
	 * bits); a DRHD (type 0) has its register base at +8. */
	for (off = 48; off + 16 <= len;) {
		ik_u32 type = (ik_u32)t[off] | (ik_u32)t[off + 1] << 8;
		ik_u32 slen = (ik_u32)t[off + 2] | (ik_u32)t[off + 3] << 8;

		if (slen < 4 || slen > len - off)
			return 0;
		if (type == 0 && slen >= 16)
			return rd32(t + off + 8) | (ik_u64)rd32(t + off + 12) << 32;
		off += slen;
	}
	return 0;
}

/* The IVRS table's first IVHD register base, through the library's parser
 * (which checks the table's checksum and every length). */
static ik_u64 acpi_ivrs_base(struct hil_board *b)
{
	struct ik_amd_ivrs_unit units[4];
	struct ik_amd_ivrs iv;
	ik_u32 len = 0;
	const volatile ik_u8 *t = acpi_table("IVRS", &len);
	int err;

	if (!t)
		return 0;
	IK_ENV_MEMSET(&iv, 0, sizeof(iv));
	iv.units = units;
	iv.max_units = 4;
	err = ik_amd_ivrs_parse((const void *)(ik_uptr)t, len, &iv);
	if ((err && err != -ENOSPC) || !iv.nunits) {
		hil_diag("q35: ACPI IVRS table refused by ik_amd_ivrs_parse: %s", ik_strerror(err));
		return 0;
	}
	b->acpi_ivrs = (const void *)(ik_uptr)t;
	b->acpi_ivrs_len = len;
	return units[0].base;
}

/* The Multiboot command line (information flags bit 2, pointer at +16). */
static void cmdline_init(void)
{
	const volatile ik_u8 *mbi = (const volatile ik_u8 *)(ik_uptr)hil_mb_info;
	const volatile char *s;
	unsigned i;

	if (hil_mb_magic != 0x2badb002u || !mbi || !(rd32(mbi) & 0x4))
		return;
	s = (const volatile char *)(ik_uptr)rd32(mbi + 16);
	for (i = 0; s[i] && i + 1 < sizeof(cmdline); i++)
		cmdline[i] = s[i];
	cmdline[i] = '\0';
}

void hil_board_init(struct hil_board *b)
{
	idt_init();
	tsc_calibrate();
	cmdline_init();
	b->machine = "qemu-q35";
	b->cmdline = cmdline;
	ecam_init(&b->pci);
	b->pci.mem_next = Q35_PCI_MEM_BASE;
	b->pci.mem_end = Q35_PCI_MEM_END;
	/* No DMAR table: no -device intel-iommu (the registers then read 0);
	 * an IVRS table: -device amd-iommu. */
	b->iommu_base_fw = acpi_dmar_base();
	b->iommu_base_fw_src = "ACPI DMAR DRHD";
	b->iommu_kind = b->iommu_base_fw ? HIL_IOMMU_VTD : HIL_IOMMU_NONE;
	b->iommu_base = (ik_uptr)Q35_VTD_BASE;
	if (!b->iommu_base_fw) {
		b->iommu_base_fw = acpi_ivrs_base(b);
		if (b->iommu_base_fw) {
			b->iommu_base_fw_src = "ACPI IVRS IVHD";
			b->iommu_kind = HIL_IOMMU_AMD;
			b->iommu_base = (ik_uptr)Q35_AMD_BASE;
		}
	}
	if (!b->iommu_base_fw)
		hil_diag("q35: no ACPI DMAR or IVRS table: is -device intel-iommu or amd-iommu "
			 "given?");
	hil_diag("q35: TSC %llu kHz (calibrated against the PIT), multiboot magic %#x",
		 (unsigned long long)(tsc_hz / 1000), hil_mb_magic);
}
