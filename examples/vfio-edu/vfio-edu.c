/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * vfio-edu - a userspace driver for QEMU's edu PCI device over VFIO, with its
 * DMA addresses from iommukit: one static binary that prints TAP.
 *
 * Usage: vfio-edu [options] PCI-ADDRESS      (e.g. 0000:00:03.0 or 00:03.0)
 *   --dma-bits N     the width of edu's dma_mask (QEMU's default is 28: edu
 *                    masks every bus address to it); IOVAs are allocated
 *                    below 2^N (default 28)
 *   --timeout-ms N   the bound on each wait for a DMA to finish (default 5000)
 *   --no-fault       skip the checks that DMA after VFIO_IOMMU_UNMAP_DMA
 *   --seed N         the seed of the random patterns (default 1)
 *   -h, --help
 * Exit status: 0 every check passed, 1 a check failed (or a step the rest
 * depends on: "Bail out!"), 2 bad usage.
 *
 * The device must already be bound to vfio-pci (this program binds nothing):
 *   echo vfio-pci > /sys/bus/pci/devices/ADDR/driver_override
 *   echo ADDR > /sys/bus/pci/drivers_probe
 * and every device of its IOMMU group must be bound to vfio-pci or to no
 * driver.  Needs /dev/vfio/vfio, /dev/vfio/GROUP and the type1 IOMMU backend
 * (vfio_iommu_type1; allow_unsafe_interrupts=1 where the platform has no
 * interrupt remapping - this program uses no interrupt, but vfio refuses the
 * group otherwise).  iommufd is not used (Debian 12's kernels lack it).
 *
 * What it does, one TAP line per check:
 *   1. opens the container (/dev/vfio/vfio; API version, type1v2), the group
 *      (from /sys/bus/pci/devices/ADDR/iommu_group; viable), sets type1v2;
 *   2. reads the usable IOVA ranges (VFIO_IOMMU_GET_INFO, capability
 *      IOVA_RANGE) and builds an ik_iova domain from them: every pfn outside
 *      them (the MSI window, reserved regions) is reserved, so no allocation
 *      can land there;
 *   3. gets the device, checks edu's identity (config space, BAR0 ID and
 *      liveness registers) with BAR0 mmap()ed (pread/pwrite when the region
 *      cannot be mapped), enables bus mastering;
 *   4. maps its buffers - several per page, unaligned, crossing pages, in
 *      two separate virtual areas - with one VFIO_IOMMU_MAP_DMA per segment
 *      that ik_iovec_segs() (<iommukit/batch.h>) makes of them, each segment
 *      at an IOVA range from ik_iova_alloc() under the dma_mask;
 *   5. moves random patterns RAM -> edu -> RAM through edu's DMA engine
 *      (at most 4095 bytes a transfer: QEMU 7.2's edu aborts on 4096) and
 *      checks every byte of the whole mapped area against a shadow copy, so
 *      a transfer that writes too much or to the wrong place fails too;
 *   6. unmaps one segment (VFIO_IOMMU_UNMAP_DMA) and makes edu write to and
 *      read from it: the DMA finishes within the bound (edu reports no
 *      error: the IOMMU faults it, the kernel logs a DMAR fault), the
 *      buffer is untouched and its contents do not reach the device; then
 *      maps it again and DMA works again;
 *   7. unmaps everything, frees the IOVAs, checks the domain.
 *
 * Error paths: every failing call is reported with what was asked and
 * strerror; a step that the later ones need ends the run with "Bail out!".
 * A DMA that does not finish within --timeout-ms is a failed check.
 *
 * Build: examples/vfio-edu/Makefile (gcc -static, the library's sources
 * compiled in), or `make` in the project (examples/vfio-edu/vfio-edu, linked
 * -all-static with libiommukit.a, where <linux/vfio.h> exists and no
 * sanitizer is configured).  README.md beside this file says more;
 * examples/vfio-edu/guest.sh runs it in a Debian guest under QEMU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/vfio.h>
#include <iommukit/iova.h>
#include <iommukit/batch.h>
#include "vfe_logic.h"

/* The byte offsets vfe_logic.c parses by, against the kernel's UAPI. */
_Static_assert(offsetof(struct vfio_iommu_type1_info, flags) == VFE_INFO_FLAGS_OFF, "flags");
_Static_assert(offsetof(struct vfio_iommu_type1_info, cap_offset) == VFE_INFO_CAP_OFFSET_OFF,
	       "cap_offset");
_Static_assert(sizeof(struct vfio_info_cap_header) == VFE_CAP_HDR_SIZE, "cap header");
_Static_assert(offsetof(struct vfio_iommu_type1_info_cap_iova_range, nr_iovas) ==
		       VFE_IOVA_CAP_NR_OFF, "nr_iovas");
_Static_assert(offsetof(struct vfio_iommu_type1_info_cap_iova_range, iova_ranges) ==
		       VFE_IOVA_CAP_RANGES_OFF, "iova_ranges");
_Static_assert(sizeof(struct vfio_iova_range) == VFE_IOVA_RANGE_SIZE, "range");
_Static_assert(VFIO_IOMMU_INFO_CAPS == VFE_INFO_FLAG_CAPS, "caps flag");
_Static_assert(VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE == VFE_CAP_IOVA_RANGE, "cap id");

/* ---- edu (QEMU docs/specs/edu.txt) ---- */
#define EDU_VENDOR 0x1234u
#define EDU_DEVICE 0x11e8u
#define EDU_ID 0x00		/* RO: 0xRRrr00ed */
#define EDU_LIVENESS 0x04	/* reads back the bitwise inverse */
#define EDU_DMA_SRC 0x80	/* 64-bit registers from here */
#define EDU_DMA_DST 0x88
#define EDU_DMA_CNT 0x90
#define EDU_DMA_CMD 0x98
#define EDU_CMD_START 0x1u	/* reads 1 until the transfer is done */
#define EDU_CMD_TO_RAM 0x2u	/* direction edu buffer -> RAM */
#define EDU_BUF 0x40000u	/* device address of edu's 4 KiB buffer */
#define EDU_BUF_SIZE 4096u
#define EDU_DMA_MAX (EDU_BUF_SIZE - 1u) /* QEMU 7.2 aborts on a full 4096 */

/* ---- TAP ---- */
static unsigned tap_n, tap_fail;

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static bool check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %u - ", ok ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	if (!ok)
		tap_fail++;
	return ok;
}

static void finish(void) __attribute__((noreturn));
static void finish(void)
{
	printf("1..%u\n", tap_n);
	printf("# PASS: %u\n# FAIL: %u\n", tap_n - tap_fail, tap_fail);
	fflush(stdout);
	exit(tap_fail ? 1 : 0);
}

static void bail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void bail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A failed check that parsers of TAP without "Bail out!" count too. */
	check(false, "%s", msg);
	printf("Bail out! %s\n", msg);
	finish();
}

/* ---- the device ---- */
struct edu {
	int container, group, device;
	char addr[13];
	unsigned group_id;
	volatile unsigned char *bar0;	/* mmap()ed BAR0, or NULL: pread/pwrite */
	uint64_t bar0_off, bar0_size;	/* region offset in the device fd, size */
	uint64_t cfg_off;		/* config space region offset */
	uint64_t timeout_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int io_read(const struct edu *e, uint32_t off, void *v, size_t size)
{
	if (e->bar0) {
		if (size == 8)
			*(uint64_t *)v = *(volatile uint64_t *)(e->bar0 + off);
		else
			*(uint32_t *)v = *(volatile uint32_t *)(e->bar0 + off);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return 0;
	}
	return pread(e->device, v, size, (off_t)(e->bar0_off + off)) == (ssize_t)size ? 0 : -EIO;
}

static int io_write(const struct edu *e, uint32_t off, uint64_t val, size_t size)
{
	uint32_t v32 = (uint32_t)val;

	/* The CPU's stores to the DMA buffers before the command that starts
	 * the DMA (a full fence: the BAR is uncached MMIO). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (e->bar0) {
		if (size == 8)
			*(volatile uint64_t *)(e->bar0 + off) = val;
		else
			*(volatile uint32_t *)(e->bar0 + off) = v32;
		return 0;
	}
	return pwrite(e->device, size == 8 ? (void *)&val : (void *)&v32, size,
		      (off_t)(e->bar0_off + off)) == (ssize_t)size ? 0 : -EIO;
}

static int cfg_rw(const struct edu *e, bool write, uint32_t off, void *v, size_t size)
{
	ssize_t r = write ? pwrite(e->device, v, size, (off_t)(e->cfg_off + off))
			  : pread(e->device, v, size, (off_t)(e->cfg_off + off));

	return r == (ssize_t)size ? 0 : (r < 0 ? -errno : -EIO);
}

/*
 * One edu DMA, waited for with a bound.  Returns 0 when the start bit
 * cleared, -EBUSY when a transfer was still running before this one,
 * -ETIMEDOUT when it did not clear within e->timeout_ns, -EINVAL for an
 * edu-side range QEMU 7.2 would abort on, -EIO for a failed register access.
 */
static int edu_dma(const struct edu *e, bool to_ram, uint64_t iova, uint32_t edu_off, uint32_t len)
{
	uint64_t cmd, t0;

	if (len == 0 || edu_off >= EDU_BUF_SIZE || len > EDU_DMA_MAX - edu_off)
		return -EINVAL;
	if (io_read(e, EDU_DMA_CMD, &cmd, 8) < 0)
		return -EIO;
	if (cmd & EDU_CMD_START)
		return -EBUSY;
	if (io_write(e, EDU_DMA_SRC, to_ram ? EDU_BUF + edu_off : iova, 8) < 0 ||
	    io_write(e, EDU_DMA_DST, to_ram ? iova : EDU_BUF + edu_off, 8) < 0 ||
	    io_write(e, EDU_DMA_CNT, len, 8) < 0 ||
	    io_write(e, EDU_DMA_CMD, EDU_CMD_START | (to_ram ? EDU_CMD_TO_RAM : 0), 8) < 0)
		return -EIO;
	t0 = now_ns();
	for (;;) {
		struct timespec ms = { 0, 1000000 };

		if (io_read(e, EDU_DMA_CMD, &cmd, 8) < 0)
			return -EIO;
		if (!(cmd & EDU_CMD_START))
			break;
		if (now_ns() - t0 > e->timeout_ns)
			return -ETIMEDOUT;
		nanosleep(&ms, NULL);
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the device's stores before our loads */
	return 0;
}

/* ---- setup ---- */
static int group_of(const char *addr, unsigned *id)
{
	char path[96], link[PATH_MAX];
	const char *base;
	ssize_t n;
	char *end;
	unsigned long v;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", addr);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	errno = 0;
	v = strtoul(base, &end, 10);
	if (errno || end == base || *end || v > UINT_MAX)
		return -EINVAL;
	*id = (unsigned)v;
	return 0;
}

static void open_container(struct edu *e)
{
	char path[64];
	struct vfio_group_status st = { .argsz = sizeof(st) };
	int api, r;

	e->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (e->container < 0)
		bail("cannot open /dev/vfio/vfio: %s (is the vfio module loaded?)", strerror(errno));
	api = ioctl(e->container, VFIO_GET_API_VERSION);
	if (!check(api == VFIO_API_VERSION, "container: VFIO API version %d (expected %d)", api,
		   VFIO_API_VERSION))
		bail("unknown VFIO API");
	r = ioctl(e->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU);
	if (!check(r > 0, "container: type1v2 IOMMU backend available"))
		bail("no type1v2 backend (load vfio_iommu_type1): VFIO_CHECK_EXTENSION returned %d", r);

	r = group_of(e->addr, &e->group_id);
	if (r < 0)
		bail("%s has no IOMMU group (/sys/bus/pci/devices/%s/iommu_group: %s): is an IOMMU "
		     "enabled?", e->addr, e->addr, strerror(-r));
	snprintf(path, sizeof(path), "/dev/vfio/%u", e->group_id);
	e->group = open(path, O_RDWR | O_CLOEXEC);
	if (e->group < 0)
		bail("cannot open %s: %s (is %s bound to vfio-pci?)", path, strerror(errno), e->addr);
	if (ioctl(e->group, VFIO_GROUP_GET_STATUS, &st) < 0)
		bail("VFIO_GROUP_GET_STATUS on %s: %s", path, strerror(errno));
	if (!check(st.flags & VFIO_GROUP_FLAGS_VIABLE, "group %u is viable", e->group_id))
		bail("group %u is not viable: every device in it must be bound to vfio-pci or to no "
		     "driver", e->group_id);
	if (ioctl(e->group, VFIO_GROUP_SET_CONTAINER, &e->container) < 0)
		bail("VFIO_GROUP_SET_CONTAINER: %s", strerror(errno));
	if (ioctl(e->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) < 0)
		bail("VFIO_SET_IOMMU(type1v2): %s (without interrupt remapping: "
		     "vfio_iommu_type1 allow_unsafe_interrupts=1)", strerror(errno));
	check(true, "group %u attached to the container, type1v2 set", e->group_id);
}

/* VFIO_IOMMU_GET_INFO with its capability chain: the usable IOVA ranges. */
static size_t iova_ranges(struct edu *e, struct vfe_range *out, size_t max, uint64_t *pgsizes)
{
	struct vfio_iommu_type1_info *info;
	uint32_t argsz = sizeof(*info);
	size_t nr = 0;
	int r;

	for (int tries = 0;; tries++) {
		info = calloc(1, argsz);
		if (!info)
			bail("out of memory");
		info->argsz = argsz;
		if (ioctl(e->container, VFIO_IOMMU_GET_INFO, info) < 0)
			bail("VFIO_IOMMU_GET_INFO: %s", strerror(errno));
		if (info->argsz <= argsz || tries == 2)
			break;
		argsz = info->argsz; /* the capabilities need more room */
		free(info);
	}
	*pgsizes = (info->flags & VFIO_IOMMU_INFO_PGSIZES) ? info->iova_pgsizes : 0;
	r = vfe_parse_iova_ranges(info, info->argsz < argsz ? info->argsz : argsz, out, max, &nr);
	free(info);
	if (r == -ENOENT) {
		/* A kernel before 5.4 reports no ranges: all of the space but the
		 * x86 MSI window, which is never DMA-able there. */
		diag("the kernel reports no IOVA_RANGE capability: assuming all but 0xfee00000-0xfeefffff");
		out[0] = (struct vfe_range){ 0, 0xfedfffffull };
		out[1] = (struct vfe_range){ 0xfef00000ull, UINT64_MAX };
		return 2;
	}
	if (!check(r == 0, "VFIO_IOMMU_GET_INFO: %zu usable IOVA range(s) in the IOVA_RANGE capability",
		   nr))
		bail("cannot use the IOVA_RANGE capability (%s): %s",
		     r == -E2BIG ? "more ranges than this program takes" : "malformed", strerror(-r));
	for (size_t i = 0; i < nr; i++)
		diag("usable IOVA range %zu: 0x%" PRIx64 "-0x%" PRIx64, i, out[i].start, out[i].end);
	return nr;
}

static void open_device(struct edu *e)
{
	struct vfio_region_info reg = { .argsz = sizeof(reg) };
	uint32_t id = 0, live = 0;
	uint16_t ven = 0, dev = 0, cmd = 0;
	void *p;

	e->device = ioctl(e->group, VFIO_GROUP_GET_DEVICE_FD, e->addr);
	if (e->device < 0)
		bail("VFIO_GROUP_GET_DEVICE_FD(%s): %s", e->addr, strerror(errno));
	reg.index = VFIO_PCI_CONFIG_REGION_INDEX;
	if (ioctl(e->device, VFIO_DEVICE_GET_REGION_INFO, &reg) < 0)
		bail("VFIO_DEVICE_GET_REGION_INFO(config): %s", strerror(errno));
	e->cfg_off = reg.offset;
	if (cfg_rw(e, false, 0, &ven, 2) < 0 || cfg_rw(e, false, 2, &dev, 2) < 0)
		bail("cannot read %s's config space", e->addr);
	if (!check(ven == EDU_VENDOR && dev == EDU_DEVICE, "%s is edu (%04x:%04x)", e->addr, ven, dev))
		bail("%s is %04x:%04x, not QEMU's edu %04x:%04x", e->addr, ven, dev, EDU_VENDOR,
		     EDU_DEVICE);

	memset(&reg, 0, sizeof(reg));
	reg.argsz = sizeof(reg);
	reg.index = VFIO_PCI_BAR0_REGION_INDEX;
	if (ioctl(e->device, VFIO_DEVICE_GET_REGION_INFO, &reg) < 0)
		bail("VFIO_DEVICE_GET_REGION_INFO(BAR0): %s", strerror(errno));
	if (reg.size < EDU_DMA_CMD + 8)
		bail("BAR0 is %" PRIu64 " bytes: too small for edu's registers", (uint64_t)reg.size);
	e->bar0_off = reg.offset;
	e->bar0_size = reg.size;
	if (reg.flags & VFIO_REGION_INFO_FLAG_MMAP) {
		p = mmap(NULL, reg.size, PROT_READ | PROT_WRITE, MAP_SHARED, e->device,
			 (off_t)reg.offset);
		if (p == MAP_FAILED)
			diag("mmap of BAR0 failed (%s): using pread/pwrite", strerror(errno));
		else
			e->bar0 = p;
	}
	if (io_read(e, EDU_ID, &id, 4) < 0 || io_write(e, EDU_LIVENESS, 0x5a5aa5a5u, 4) < 0 ||
	    io_read(e, EDU_LIVENESS, &live, 4) < 0)
		bail("BAR0 register access failed");
	if (!check((id & 0xffffu) == 0x00ed && live == ~0x5a5aa5a5u,
		   "BAR0 (%s): ID 0x%08x, liveness register inverts", e->bar0 ? "mmap" : "pread/pwrite",
		   id))
		bail("edu's registers do not answer: ID 0x%08x, liveness 0x%08x", id, live);

	/* Bus mastering: without it edu's DMA goes nowhere. */
	if (cfg_rw(e, false, 4, &cmd, 2) < 0)
		bail("cannot read the command register");
	cmd |= 0x6; /* memory space, bus master */
	if (cfg_rw(e, true, 4, &cmd, 2) < 0 || cfg_rw(e, false, 4, &cmd, 2) < 0)
		bail("cannot write the command register");
	if (!check(cmd & 0x4, "bus mastering enabled (command 0x%04x)", cmd))
		bail("bus mastering stays off");
}

/* ---- buffers ----
 *
 * One anonymous area of AREA_PAGES pages.  Segment A is pages 0-3, segment B
 * pages 5-6; pages 4 and 7 are never mapped for the device (a transfer
 * that overran a buffer into them would fault, and the shadow check would
 * see it anyway).  The buffers, unaligned, several sharing a page, some
 * crossing pages:
 */
#define PAGE 4096u
#define AREA_PAGES 8u
static const struct {
	uint32_t off, len;
} bufs[] = {
	{ 0 * PAGE + 0, 4095 },		/* 0: A, page 0 */
	{ 1 * PAGE + 2049, 4095 },	/* 1: A, pages 1-2 */
	{ 2 * PAGE + 2048 + 100, 600 },	/* 2: A, page 2 (shares it with 1) */
	{ 3 * PAGE + 16, 512 },		/* 3: A, page 3 */
	{ 3 * PAGE + 2048, 512 },	/* 4: A, page 3 (shares it with 3) */
	{ 5 * PAGE + 4000, 3000 },	/* 5: B, pages 5-6 */
	{ 6 * PAGE + 3000, 1000 },	/* 6: B, page 6 (shares it with 5) */
};
#define NBUFS (sizeof(bufs) / sizeof(bufs[0]))
#define NSEGS_EXPECTED 2

struct maps {
	unsigned char *area, *shadow;	/* the device's view, and what it should hold */
	struct ik_iovec segs[NBUFS];
	uint64_t seg_iova[NBUFS];
	size_t seg_of[NBUFS], nsegs;
	bool mapped[NBUFS];
	unsigned map_calls;
};

static uint64_t rng_state;

static uint8_t rnd8(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint8_t)(rng_state >> 56);
}

static uint64_t buf_iova(const struct maps *m, size_t i)
{
	size_t k = m->seg_of[i];

	return m->seg_iova[k] + ((uint64_t)(uintptr_t)(m->area + bufs[i].off) - m->segs[k].base);
}

static void fill(struct maps *m, size_t i)
{
	for (uint32_t j = 0; j < bufs[i].len; j++)
		m->area[bufs[i].off + j] = m->shadow[bufs[i].off + j] = rnd8();
}

/* Every byte of the area against the shadow: the first difference, or -1. */
static long first_diff(const struct maps *m)
{
	for (size_t j = 0; j < (size_t)AREA_PAGES * PAGE; j++)
		if (m->area[j] != m->shadow[j])
			return (long)j;
	return -1;
}

static int map_seg(struct edu *e, struct maps *m, size_t k)
{
	struct vfio_iommu_type1_dma_map map = {
		.argsz = sizeof(map),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = m->segs[k].base,
		.iova = m->seg_iova[k],
		.size = m->segs[k].len,
	};

	m->map_calls++;
	if (ioctl(e->container, VFIO_IOMMU_MAP_DMA, &map) < 0)
		return -errno;
	m->mapped[k] = true;
	return 0;
}

static int unmap_seg(struct edu *e, struct maps *m, size_t k)
{
	struct vfio_iommu_type1_dma_unmap unmap = {
		.argsz = sizeof(unmap),
		.iova = m->seg_iova[k],
		.size = m->segs[k].len,
	};

	if (ioctl(e->container, VFIO_IOMMU_UNMAP_DMA, &unmap) < 0)
		return -errno;
	m->mapped[k] = false;
	/* type1 reports the bytes it unmapped */
	return unmap.size == m->segs[k].len ? 0 : -EIO;
}

static void map_buffers(struct edu *e, struct maps *m, struct ik_iova_domain *d, uint64_t granule,
			uint64_t limit_pfn)
{
	struct ik_iovec iov[NBUFS];
	ik_s64 n;

	m->area = mmap(NULL, (size_t)AREA_PAGES * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	m->shadow = calloc(AREA_PAGES, PAGE);
	if (m->area == MAP_FAILED || !m->shadow)
		bail("cannot allocate the buffers");
	for (size_t j = 0; j < (size_t)AREA_PAGES * PAGE; j++)
		m->area[j] = m->shadow[j] = (uint8_t)(0xc3 ^ j); /* a known background */
	for (size_t i = 0; i < NBUFS; i++) {
		iov[i].base = (uint64_t)(uintptr_t)(m->area + bufs[i].off);
		iov[i].len = bufs[i].len;
	}
	n = ik_iovec_segs(iov, NBUFS, granule, m->segs, NBUFS, m->seg_of);
	if (n < 0)
		bail("ik_iovec_segs: %s", strerror((int)-n));
	m->nsegs = (size_t)n;
	for (size_t k = 0; k < m->nsegs; k++) {
		ik_u64 pfn;
		int r = ik_iova_alloc(d, m->segs[k].len / granule, limit_pfn, 0, &pfn);

		if (r < 0)
			bail("ik_iova_alloc(%" PRIu64 " pages under pfn 0x%" PRIx64 "): %s",
			     (uint64_t)(m->segs[k].len / granule), limit_pfn, strerror(-r));
		m->seg_iova[k] = pfn * granule;
		r = map_seg(e, m, k);
		if (r < 0)
			bail("VFIO_IOMMU_MAP_DMA(vaddr 0x%" PRIx64 ", iova 0x%" PRIx64 ", 0x%" PRIx64
			     "): %s", (uint64_t)m->segs[k].base, m->seg_iova[k],
			     (uint64_t)m->segs[k].len, strerror(-r));
		diag("segment %zu: %" PRIu64 " bytes at iova 0x%" PRIx64, k, (uint64_t)m->segs[k].len,
		     m->seg_iova[k]);
	}
	check(m->nsegs == NSEGS_EXPECTED && m->map_calls == m->nsegs,
	      "%zu buffers mapped with %u VFIO_IOMMU_MAP_DMA call(s) (ik_iovec_segs: %zu segments, "
	      "expected %d)", NBUFS, m->map_calls, m->nsegs, NSEGS_EXPECTED);
}

/* RAM -> edu -> RAM, one check per transfer, every byte of the area checked. */
static void copy_check(struct edu *e, struct maps *m, size_t src, size_t dst, uint32_t edu_off,
		       uint32_t len)
{
	int r;
	long bad;

	fill(m, src);
	r = edu_dma(e, false, buf_iova(m, src), edu_off, len);
	if (r == 0)
		r = edu_dma(e, true, buf_iova(m, dst), edu_off, len);
	if (r == 0) {
		memcpy(m->shadow + bufs[dst].off, m->shadow + bufs[src].off, len);
		bad = first_diff(m);
	} else {
		bad = -2;
	}
	check(r == 0 && bad < 0,
	      "DMA %u bytes buffer %zu (iova 0x%" PRIx64 ") -> edu[%u] -> buffer %zu (iova 0x%" PRIx64
	      "): every byte of the area as expected", len, src, buf_iova(m, src), edu_off, dst,
	      buf_iova(m, dst));
	if (r < 0)
		diag("the DMA failed: %s", strerror(-r));
	else if (bad >= 0)
		diag("first wrong byte at area offset %ld: 0x%02x, expected 0x%02x", bad, m->area[bad],
		     m->shadow[bad]);
	if (r == -ETIMEDOUT || r == -EBUSY)
		bail("edu's DMA engine is stuck");
}

/* After UNMAP_DMA: the device's accesses fault, and are seen to. */
static void fault_checks(struct edu *e, struct maps *m)
{
	size_t b = 5, other = 1, k = m->seg_of[5];
	uint32_t len = bufs[5].len;
	unsigned same = 0;
	long bad;
	int r;

	/* edu's buffer holds other data than buffer 5 (fill 1, copy it in). */
	fill(m, other);
	r = edu_dma(e, false, buf_iova(m, other), 0, len);
	fill(m, b);
	if (r == 0)
		r = unmap_seg(e, m, k);
	if (!check(r == 0, "VFIO_IOMMU_UNMAP_DMA of segment %zu (iova 0x%" PRIx64 ", %" PRIu64
		       " bytes) unmaps it all", k, m->seg_iova[k], (uint64_t)m->segs[k].len))
		bail("unmap failed: %s", strerror(-r));

	/* Device write to the unmapped IOVA. */
	r = edu_dma(e, true, buf_iova(m, b), 0, len);
	check(r == 0, "DMA edu -> unmapped iova 0x%" PRIx64 " ends within %" PRIu64
	      " ms (edu reports no error; the IOMMU blocked it)", buf_iova(m, b), e->timeout_ns / 1000000);
	if (r < 0)
		bail("edu's DMA engine did not finish: %s", strerror(-r));
	bad = first_diff(m);
	check(bad < 0, "the unmapped buffer (and the rest of the area) is untouched");
	if (bad >= 0)
		diag("area offset %ld changed: 0x%02x, expected 0x%02x", bad, m->area[bad],
		     m->shadow[bad]);

	/* Device read from the unmapped IOVA: the buffer's bytes must not
	 * reach edu.  Copy edu's buffer out to a mapped buffer and look.  A
	 * fresh secret first, so that this check does not depend on the last. */
	fill(m, b);
	r = edu_dma(e, false, buf_iova(m, b), 0, len);
	if (r == 0)
		r = edu_dma(e, true, buf_iova(m, other), 0, len);
	if (r < 0)
		bail("edu's DMA engine did not finish: %s", strerror(-r));
	for (uint32_t j = 0; j < len; j++)
		same += m->area[bufs[other].off + j] == m->shadow[bufs[b].off + j];
	check(memcmp(m->area + bufs[other].off, m->shadow + bufs[b].off, len) != 0 &&
		      same < len / 16,
	      "DMA unmapped iova 0x%" PRIx64 " -> edu ends, and the buffer's data does not reach the "
	      "device (%u of %u bytes equal by chance)", buf_iova(m, b), same, len);
	memcpy(m->shadow + bufs[other].off, m->area + bufs[other].off, len);

	/* Map it again: DMA works again at the same IOVA. */
	r = map_seg(e, m, k);
	if (!check(r == 0, "VFIO_IOMMU_MAP_DMA of segment %zu again", k))
		bail("map failed: %s", strerror(-r));
	copy_check(e, m, 6, b, 200, bufs[6].len);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: vfio-edu [--dma-bits N] [--timeout-ms N] [--no-fault] [--seed N] "
		   "PCI-ADDRESS\n"
		   "  drives QEMU's edu device (bound to vfio-pci) through VFIO type1v2 with IOVAs\n"
		   "  from iommukit's ik_iova; prints TAP.  See examples/vfio-edu/README.md.\n");
}

static bool num_arg(const char *s, unsigned long lo, unsigned long hi, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	return !errno && end != s && !*end && *v >= lo && *v <= hi;
}

int main(int argc, char **argv)
{
	struct edu e = { .container = -1, .group = -1, .device = -1 };
	struct vfe_range ranges[64];
	struct ik_iova_domain dom;
	struct maps m = { 0 };	/* map_calls and mapped[] start at zero */
	uint64_t pgsizes = 0, granule = PAGE, limit_pfn;
	unsigned long dma_bits = 28, timeout_ms = 5000, seed = 1, v;
	unsigned reserved = 0;
	bool fault = true;
	const char *addr = NULL;
	size_t nr;
	int r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--no-fault")) {
			fault = false;
		} else if ((!strcmp(a, "--dma-bits") || !strcmp(a, "--timeout-ms") ||
			    !strcmp(a, "--seed")) && i + 1 < argc) {
			const char *s = argv[++i];
			bool ok = a[2] == 'd' ? num_arg(s, 13, 64, &v) :
				  a[2] == 't' ? num_arg(s, 1, 3600000, &v) :
						num_arg(s, 0, ULONG_MAX, &v);

			if (!ok) {
				fprintf(stderr, "vfio-edu: bad value for %s: %s\n", a, s);
				return 2;
			}
			*(a[2] == 'd' ? &dma_bits : a[2] == 't' ? &timeout_ms : &seed) = v;
		} else if (a[0] != '-' && !addr) {
			addr = a;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!addr || vfe_parse_pci_addr(addr, e.addr) < 0) {
		if (addr)
			fprintf(stderr, "vfio-edu: not a PCI address: %s\n", addr);
		usage(stderr);
		return 2;
	}
	e.timeout_ns = (uint64_t)timeout_ms * 1000000u;
	rng_state = seed;
	diag("vfio-edu %s: dma_mask %lu bits, DMA wait bound %lu ms, seed %lu", e.addr, dma_bits,
	     timeout_ms, seed);

	open_container(&e);
	nr = iova_ranges(&e, ranges, sizeof(ranges) / sizeof(ranges[0]), &pgsizes);
	if (pgsizes) {
		uint64_t min = pgsizes & -pgsizes;

		if (min > granule)
			granule = min;
		diag("IOMMU page sizes 0x%" PRIx64 ": granule %" PRIu64, pgsizes, granule);
	}
	if (granule != PAGE)
		bail("the IOMMU's smallest page is %" PRIu64 " bytes: this program lays its buffers "
		     "out in 4 KiB pages", granule);
	r = vfe_iova_domain_init(&dom, ranges, nr, granule, &reserved);
	if (!check(r == 0, "ik_iova domain over the usable ranges, %u gap(s) reserved", reserved))
		bail("vfe_iova_domain_init: %s", strerror(-r));
	/* Every whole page outside the usable ranges (between the domain's
	 * first and last pfn) must be reserved: no allocation can land there.
	 * Before any allocation, the domain's ranges are all reservations. */
	{
		struct ik_iova_range rr;
		uint64_t lo = 0;
		unsigned gaps = 0, bad = 0;

		while (ik_iova_next(&dom, lo, &rr) == 0) {
			bool inside = false;

			for (size_t i = 0; i < nr; i++)
				inside |= rr.lo * granule >= ranges[i].start &&
					  rr.hi * granule + (granule - 1) <= ranges[i].end;
			gaps++;
			bad += !rr.reserved || inside;
			diag("reserved pfns 0x%" PRIx64 "-0x%" PRIx64, rr.lo, rr.hi);
			if (rr.hi == UINT64_MAX)
				break;
			lo = rr.hi + 1;
		}
		check(gaps == reserved && bad == 0,
		      "the domain reserves exactly the gaps between the usable ranges (%u)", gaps);
#if defined(__x86_64__) || defined(__i386__)
		/* x86: the MSI window 0xfee00000-0xfeefffff, never DMA-able. */
		if (ranges[0].start < 0xfee00000ull && ranges[nr - 1].end > 0xfeefffffull)
			check(ik_iova_find(&dom, 0xfee00000ull / granule, &rr) == 0 && rr.reserved &&
				      rr.hi >= 0xfeefffffull / granule,
			      "the x86 MSI window 0xfee00000-0xfeefffff is reserved in the domain");
#endif
	}
	limit_pfn = dma_bits >= 64 ? UINT64_MAX / granule : (((uint64_t)1 << dma_bits) - 1) / granule;

	open_device(&e);
	map_buffers(&e, &m, &dom, granule, limit_pfn);

	copy_check(&e, &m, 0, 1, 0, EDU_DMA_MAX);	/* a full 4095 bytes, across a page */
	copy_check(&e, &m, 3, 4, 100, bufs[3].len);	/* two buffers sharing a page */
	copy_check(&e, &m, 5, 0, 1000, bufs[5].len);	/* segment B -> segment A */
	copy_check(&e, &m, 1, 2, 3400, bufs[2].len);	/* near the end of edu's buffer */
	copy_check(&e, &m, 2, 6, 7, bufs[2].len);	/* A -> B */
	if (fault)
		fault_checks(&e, &m);

	/* Tear down: unmap every segment, free its IOVA, check the domain. */
	r = 0;
	for (size_t k = 0; k < m.nsegs; k++) {
		int u = m.mapped[k] ? unmap_seg(&e, &m, k) : 0;

		if (u < 0 && !r)
			r = u;
		u = ik_iova_free(&dom, m.seg_iova[k] / granule);
		if (u < 0 && !r)
			r = u;
	}
	check(r == 0 && ik_iova_check(&dom) == 0,
	      "every segment unmapped (VFIO_IOMMU_UNMAP_DMA) and its IOVA freed; domain consistent");
	if (r < 0)
		diag("teardown: %s", strerror(-r));
	ik_iova_destroy(&dom);
	if (e.bar0)
		munmap((void *)e.bar0, e.bar0_size);
	close(e.device);
	close(e.group);
	close(e.container);
	finish();
}
