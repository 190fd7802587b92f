/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * PCI for the hardware-in-the-loop harness (hil.h): configuration space
 * through ECAM (PCI Express Base Specification, "Enhanced Configuration
 * Access Mechanism": function (bus, dev, fn) at ecam + (bus << 20 | dev <<
 * 15 | fn << 12)), a brute-force scan, memory BAR sizing and assignment, and
 * the Command register.
 *
 * Type 0 header offsets used (PCI Local Bus Specification, "Configuration
 * Space Header"): 0x00 vendor, 0x02 device, 0x04 command, 0x0e header type
 * (bit 7: multi-function), 0x10 + 4 * n BAR n.
 */
#include <iommukit/env.h>
#include <iommukit/atomic.h>
#include "hil.h"

#define PCI_VENDOR 0x00
#define PCI_DEVICE 0x02
#define PCI_COMMAND 0x04
#define PCI_CMD_MEM 0x0002u
#define PCI_CMD_MASTER 0x0004u
#define PCI_HEADER_TYPE 0x0e
#define PCI_BAR0 0x10
#define PCI_BAR_IO 0x1u
#define PCI_BAR_TYPE_MASK 0x6u
#define PCI_BAR_TYPE_64 0x4u
#define PCI_BAR_ADDR_MASK 0xfffffff0u

/* Config-space accesses are device accesses: the identity map makes them
 * Device memory (aarch64) / uncached (x86); the barriers order them against
 * the DMA memory the device is about to use, as the MMIO accessors do. */
ik_u32 hil_pci_read32(const struct hil_pci_dev *d, ik_u32 off)
{
	ik_u32 v = *(volatile ik_u32 *)(d->cfg + off);

	ik_dma_rmb();
	return v;
}

ik_u16 hil_pci_read16(const struct hil_pci_dev *d, ik_u32 off)
{
	ik_u16 v = *(volatile ik_u16 *)(d->cfg + off);

	ik_dma_rmb();
	return v;
}

void hil_pci_write32(const struct hil_pci_dev *d, ik_u32 off, ik_u32 val)
{
	ik_dma_wmb();
	*(volatile ik_u32 *)(d->cfg + off) = val;
}

void hil_pci_write16(const struct hil_pci_dev *d, ik_u32 off, ik_u16 val)
{
	ik_dma_wmb();
	*(volatile ik_u16 *)(d->cfg + off) = val;
}

static void at(const struct hil_pci *p, unsigned bus, unsigned dev, unsigned fn,
	       struct hil_pci_dev *d)
{
	d->bus = (ik_u8)bus;
	d->dev = (ik_u8)dev;
	d->fn = (ik_u8)fn;
	d->rid = (ik_u16)(bus << 8 | dev << 3 | fn);
	d->cfg = (volatile ik_u8 *)(p->ecam + ((ik_uptr)bus << 20 | (ik_uptr)dev << 15 |
					      (ik_uptr)fn << 12));
	d->vendor = hil_pci_read16(d, PCI_VENDOR);
	d->device = hil_pci_read16(d, PCI_DEVICE);
}

int hil_pci_find(const struct hil_pci *p, ik_u16 vendor, ik_u16 device, struct hil_pci_dev *out)
{
	unsigned bus, dev, fn, nfn;
	struct hil_pci_dev d;

	for (bus = 0; bus < p->buses && bus < 256; bus++) {
		for (dev = 0; dev < 32; dev++) {
			at(p, bus, dev, 0, &d);
			if (d.vendor == 0xffff)	/* no function 0: no device */
				continue;
			nfn = (hil_pci_read32(&d, PCI_HEADER_TYPE & ~3u) >> 16 & 0x80) ? 8 : 1;
			for (fn = 0; fn < nfn; fn++) {
				if (fn)
					at(p, bus, dev, fn, &d);
				if (d.vendor == vendor && d.device == device) {
					*out = d;
					return 0;
				}
			}
		}
	}
	return -ENODEV;
}

int hil_pci_bar_setup(struct hil_pci *p, const struct hil_pci_dev *d, unsigned bar, ik_u64 *addr,
		      ik_u64 *size, bool *assigned)
{
	ik_u32 off = PCI_BAR0 + 4 * bar, lo, hi = 0, mlo, mhi = 0xffffffffu;
	ik_u16 cmd = hil_pci_read16(d, PCI_COMMAND);
	ik_u64 a, sz, base;
	bool is64;

	if (bar > 5)
		return -ENODEV;
	lo = hil_pci_read32(d, off);
	if (lo & PCI_BAR_IO)
		return -ENODEV;
	is64 = (lo & PCI_BAR_TYPE_MASK) == PCI_BAR_TYPE_64;
	if (is64 && bar == 5)
		return -ENODEV;
	/* Size it with decoding off: all ones, read back the writable bits. */
	hil_pci_write16(d, PCI_COMMAND, (ik_u16)(cmd & ~PCI_CMD_MEM));
	hil_pci_write32(d, off, 0xffffffffu);
	mlo = hil_pci_read32(d, off);
	hil_pci_write32(d, off, lo);
	if (is64) {
		hi = hil_pci_read32(d, off + 4);
		hil_pci_write32(d, off + 4, 0xffffffffu);
		mhi = hil_pci_read32(d, off + 4);
		hil_pci_write32(d, off + 4, hi);
	}
	sz = ~((ik_u64)mhi << 32 | (mlo & PCI_BAR_ADDR_MASK)) + 1;
	if (!(mlo & PCI_BAR_ADDR_MASK) || (sz & (sz - 1))) {
		hil_pci_write16(d, PCI_COMMAND, cmd);
		return -ENODEV;	/* unimplemented BAR */
	}
	a = (ik_u64)hi << 32 | (lo & PCI_BAR_ADDR_MASK);
	*assigned = false;
	if (a && a > (ik_u64)(ik_uptr)-1 - sz) {
		hil_pci_write16(d, PCI_COMMAND, cmd);
		return -ERANGE;
	}
	if (!a) {
		base = (p->mem_next + sz - 1) & ~(sz - 1);
		if (base < p->mem_next || base > p->mem_end || p->mem_end - base < sz) {
			hil_pci_write16(d, PCI_COMMAND, cmd);
			return -ENOSPC;
		}
		a = base;
		p->mem_next = base + sz;
		hil_pci_write32(d, off, (ik_u32)a | (lo & ~PCI_BAR_ADDR_MASK));
		if (is64)
			hil_pci_write32(d, off + 4, (ik_u32)(a >> 32));
		*assigned = true;
	}
	hil_pci_write16(d, PCI_COMMAND, (ik_u16)(cmd | PCI_CMD_MEM));
	*addr = a;
	*size = sz;
	return 0;
}

bool hil_pci_set_master(const struct hil_pci_dev *d, bool on)
{
	ik_u16 cmd = hil_pci_read16(d, PCI_COMMAND);

	hil_pci_write16(d, PCI_COMMAND,
			(ik_u16)(on ? cmd | PCI_CMD_MASTER : cmd & ~PCI_CMD_MASTER));
	return (cmd & PCI_CMD_MASTER) != 0;
}
