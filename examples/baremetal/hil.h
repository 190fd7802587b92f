/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * hil.h - iommukit's hardware-in-the-loop harness: bare-metal images that
 * boot on QEMU's emulated machines (aarch64 virt with an SMMUv3, x86-64 q35
 * with an Intel VT-d unit or an AMD IOMMU, rv64 virt with a riscv-iommu-pci
 * function), find QEMU's `edu` PCI device, and run a list of
 * named checks that each print one TAP line on the serial console.  The
 * checks drive real (emulated) IOMMU hardware through the library's driver
 * cores, with edu as the DMA master.  tests/qemu-hil.sh builds the images,
 * runs each QEMU configuration and counts every line; docs/hil.md says how
 * to run one by hand and how to add a check.
 *
 * What a check gets (struct hil, filled in before the first check runs):
 *   - h->edu: the edu device, found by scanning PCI config space (ECAM), with
 *     BAR0 assigned (by the firmware on q35, by the harness on virt), memory
 *     decoding and bus mastering enabled; hil_edu_*() drive it;
 *   - h->rid: edu's PCI requester ID, bus << 8 | dev << 3 | fn: the SMMUv3
 *     StreamID and the VT-d source-id of every DMA it makes;
 *   - h->dma: DMA memory (struct ik_dma_mem) over the image's static page
 *     pool; device address = CPU address (the machines have no translation
 *     between CPU and PCI); clean = the data-cache clean loop;
 *   - h->iommu: the IOMMU's register file (struct ik_mmio through
 *     ik_mmio_direct_init() at h->iommu_base), h->iommu_kind says which;
 *   - hil_wait() / HIL_POLL(): bounded waits on IK_ENV_TIME_NS();
 *   - HIL_CHECK() and friends: report the first failed condition, with
 *     file, line and expression, as the check's TAP line;
 *   - hil_printf() / hil_diag(): output (TAP diagnostics are "# " lines);
 *   - hil_fill() / hil_verify(): seeded byte patterns, to prove a DMA
 *     arrived or - edu does not see IOMMU faults - that it did not.
 *
 * The IOMMU is present but off when a check starts (SMMU_CR0.SMMUEN = 0,
 * VT-d GSTS.TES = 0): edu's DMA is untranslated.  A check that enables it
 * must disable it again before it returns, and free what it allocated: the
 * runner fails a check that returns with pool memory still allocated.
 *
 * Glossary
 *   bus address  the address a PCI device puts on the bus for a DMA: an
 *           IOVA when the IOMMU translates, the physical address when not.
 *   edu buffer   edu's 4 KiB of internal memory, at device address 0x40000
 *           in its DMA registers; reachable only by DMA.
 *   check   a function void fn(struct hil *h, const void *arg): one TAP line.
 *   suite   a named array of checks (struct hil_suite); the image runs the
 *           baseline suite, then the suite of its machine's IOMMU, if built.
 *
 * Adding checks: the SMMUv3 checks live in hil_smmuv3.c (compiled for
 * aarch64 only), the VT-d checks in hil_vtd.c and the AMD IOMMU checks in
 * hil_amd.c (x86-64 only), the RISC-V IOMMU checks in hil_riscv.c (rv64
 * only).  Each defines its suite for its IOMMU kind as
 *     const struct hil_suite hil_suite_vtd =
 *             HIL_SUITE_FOR(HIL_IOMMU_VTD, "vtd", checks);
 * and the Makefile compiles and registers the file when it exists.  The
 * runner runs the suites of no kind (the baseline) and the one of the
 * IOMMU the board found; the plan line counts exactly those.  A command
 * line "hil.iommu=NAME" (vtd, amd, smmuv3, riscv) says which IOMMU the machine
 * must have: another one (or none) bails out, so that a configuration
 * cannot pass by running no IOMMU checks at all.
 *
 * Synchronization: single CPU, single thread.  Nothing here is reentrant;
 * checks run one after another.
 *
 * Pointer arguments: every function requires valid pointers (this is test
 * scaffolding for one image, not library API); the edu functions, which
 * take addresses a check computes, validate those.
 */
#ifndef HIL_H
#define HIL_H

#include <iommukit/env.h>
#include <iommukit/drv/io.h>

/* ---- PCI (hil_pci.c) ---- */

/* One PCI function and its configuration space (ECAM, 4 KiB). */
struct hil_pci_dev {
	ik_u8 bus, dev, fn;
	ik_u16 rid;		/* bus << 8 | dev << 3 | fn */
	ik_u16 vendor, device;
	volatile ik_u8 *cfg;	/* CPU address of its config space */
};

/* The machine's PCI host bridge as the board describes it. */
struct hil_pci {
	ik_uptr ecam;		/* ECAM base (bus 0) */
	unsigned buses;		/* buses the ECAM window covers, 1..256 */
	ik_u64 mem_next;	/* next free address of the 32-bit memory window */
	ik_u64 mem_end;		/* its end (exclusive) */
};

/* Config space accesses; `off` naturally aligned, below 4096. */
ik_u32 hil_pci_read32(const struct hil_pci_dev *d, ik_u32 off);
ik_u16 hil_pci_read16(const struct hil_pci_dev *d, ik_u32 off);
void hil_pci_write32(const struct hil_pci_dev *d, ik_u32 off, ik_u32 val);
void hil_pci_write16(const struct hil_pci_dev *d, ik_u32 off, ik_u16 val);

/*
 * hil_pci_find - scan every bus, device and function the ECAM window covers
 * (all eight functions of multi-function devices) for vendor:device; fills
 * *d with the first match.  0, or -ENODEV.  Cost: one config read per slot.
 */
int hil_pci_find(const struct hil_pci *p, ik_u16 vendor, ik_u16 device, struct hil_pci_dev *d);

/*
 * hil_pci_bar_setup - size memory BAR `bar` (0..5) with decoding off; if it
 * holds no address (nobody assigned it), assign one from p's window, aligned
 * to its size; then enable memory decoding.  *addr gets the BAR's address,
 * *size its size, *assigned whether this call assigned it.  -ENODEV for an
 * unimplemented or I/O BAR, -ENOSPC if the window has no room, -ERANGE for
 * an address beyond the CPU's reach; on error the BAR, the Command register
 * and the window are as they were.
 */
int hil_pci_bar_setup(struct hil_pci *p, const struct hil_pci_dev *d, unsigned bar, ik_u64 *addr,
		      ik_u64 *size, bool *assigned);

/* Set or clear Bus Master Enable (Command register bit 2); returns whether it
 * was set.  With it clear, the device's DMA reaches nothing (QEMU: writes are
 * dropped, reads return zeros). */
bool hil_pci_set_master(const struct hil_pci_dev *d, bool on);

/* ---- edu (hil_edu.c) ---- */

#define HIL_EDU_VENDOR 0x1234u
#define HIL_EDU_DEVICE 0x11e8u
#define HIL_EDU_BUF 0x40000u		/* device address of the edu buffer */
#define HIL_EDU_BUF_SIZE 4096u		/* its size */
/* The largest transfer: edu refuses (QEMU stops with a hardware error) a
 * transfer that ends exactly at the buffer's end, so off + len < 4096. */
#define HIL_EDU_DMA_MAX (HIL_EDU_BUF_SIZE - 1u)

struct hil_edu {
	struct hil_pci_dev pci;
	volatile ik_u8 *bar0;		/* CPU address of BAR0, 1 MiB of registers */
	ik_u64 bar0_addr;		/* as programmed into the BAR */
	bool bar0_assigned;		/* the harness assigned it (no firmware did) */
};

/* Register offsets in BAR0 (QEMU docs/specs/edu.txt). */
#define HIL_EDU_ID 0x00			/* RO 0xRRrr00ed: major, minor version */
#define HIL_EDU_LIVENESS 0x04		/* RW: reads back the inverse of what was written */
#define HIL_EDU_DMA_SRC 0x80		/* 64-bit */
#define HIL_EDU_DMA_DST 0x88		/* 64-bit */
#define HIL_EDU_DMA_CNT 0x90		/* 64-bit */
#define HIL_EDU_DMA_CMD 0x98		/* 64-bit */
#define HIL_EDU_CMD_START 0x1u		/* reads 1 while the transfer runs */
#define HIL_EDU_CMD_TO_RAM 0x2u		/* direction: edu buffer -> RAM */

ik_u32 hil_edu_read32(const struct hil_edu *e, ik_u32 off);
void hil_edu_write32(const struct hil_edu *e, ik_u32 off, ik_u32 val);
/* The DMA registers take 8-byte accesses: a 4-byte write of 0x80 sets the
 * whole register (upper half zero) and one of 0x84 is ignored. */
ik_u64 hil_edu_read64(const struct hil_edu *e, ik_u32 off);
void hil_edu_write64(const struct hil_edu *e, ik_u32 off, ik_u64 val);

/* hil_edu_liveness - write v to the liveness register, return what it reads
 * back (~v on a live edu). */
ik_u32 hil_edu_liveness(const struct hil_edu *e, ik_u32 v);

/*
 * hil_edu_dma_from_ram / hil_edu_dma_to_ram - one DMA of `len` bytes between
 * bus address `bus` and the edu buffer at offset `off`, started and polled
 * to completion (edu's transfers complete 100 ms of QEMU virtual time after
 * they start).  Returns:
 *   0           the transfer completed - which says nothing about whether
 *               the bytes reached memory: edu ignores bus errors and IOMMU
 *               faults (a faulting read fills the edu buffer with zeros, a
 *               faulting write is dropped); check memory with hil_verify();
 *   -EINVAL     len 0, off + len >= 4096 (computed overflow-safe), or bus +
 *               len wraps 2^64: nothing is written to edu;
 *   -EBUSY      a transfer is still running (an earlier one timed out);
 *   -ETIMEDOUT  it did not complete within timeout_ns; it may still run.
 * The caller cleans (to-device) or invalidates nothing: the QEMU machines'
 * PCI is cache-coherent.
 */
int hil_edu_dma_from_ram(const struct hil_edu *e, ik_u64 bus, ik_u32 off, ik_u32 len,
			 ik_u64 timeout_ns);
int hil_edu_dma_to_ram(const struct hil_edu *e, ik_u32 off, ik_u64 bus, ik_u32 len,
		       ik_u64 timeout_ns);

/*
 * hil_edu_round_trip - a DMA round trip through an IOMMU mapping iova ->
 * page (4 KiB): fills the page with hil_fill(seed), edu reads its first
 * 2048 bytes at iova and writes them back at iova + 2048.  True if both
 * DMAs completed and the second half then holds the first's bytes.  Adds
 * the DMAs started to *dmas.
 */
bool hil_edu_round_trip(const struct hil_edu *e, ik_u8 *page, ik_u64 iova, ik_u32 seed,
			ik_u64 timeout_ns, unsigned *dmas);

/*
 * The DMA buffers of one check (the edu DMA setup the IOMMU checks share):
 * hil_bufs_alloc() gives a zeroed, page-aligned buffer of `size` bytes
 * from `dma` (CPU address *cpu, bus address *bus) and records it;
 * hil_bufs_free() frees every recorded buffer.  Zero-initialise the set
 * first.  -ENOSPC when HIL_BUFS_MAX are held, or ik_dma_alloc()'s error;
 * nothing recorded then.
 */
#define HIL_BUFS_MAX 4u

struct hil_bufs {
	unsigned n;
	struct {
		void *cpu;
		ik_u64 bus;
		ik_size size;
	} b[HIL_BUFS_MAX];
};

int hil_bufs_alloc(struct hil_bufs *bs, const struct ik_dma_mem *dma, ik_size size, ik_u8 **cpu,
		   ik_u64 *bus);
void hil_bufs_free(struct hil_bufs *bs, const struct ik_dma_mem *dma);

/* ---- the harness (hil_main.c) ---- */

enum hil_iommu_kind {
	HIL_IOMMU_NONE = 0,
	HIL_IOMMU_SMMUV3,		/* Arm SMMUv3 (IHI 0070) */
	HIL_IOMMU_VTD,			/* Intel VT-d remapping unit */
	HIL_IOMMU_AMD,			/* AMD IOMMU (pub. 48882) */
	HIL_IOMMU_RISCV,		/* RISC-V IOMMU (spec v1.0), a PCI function */
};

/* The board's description of its machine (board_qemu_*.c). */
struct hil_board {
	const char *machine;		/* "qemu-virt", "qemu-q35", "qemu-riscv-virt" */
	const char *cmdline;		/* boot command line ("" if none) */
	struct hil_pci pci;
	enum hil_iommu_kind iommu_kind;
	ik_uptr iommu_base;		/* the IOMMU's register base, identity-mapped */
	ik_u64 iommu_base_fw;		/* where the firmware tables put it; 0: unknown */
	const char *iommu_base_fw_src;	/* which tables ("ACPI DMAR", "device tree") */
	const void *acpi_ivrs;		/* the ACPI IVRS table (AMD IOMMU), or NULL */
	ik_u32 acpi_ivrs_len;		/* its length in bytes */
};

/* Outcome of the running check; HIL_CHECK() and friends fill it in. */
struct hil_result {
	bool failed;
	const char *file;
	int line;
	const char *expr;
	const char *skip;		/* non-NULL: the check was skipped, why */
	bool have_values;		/* HIL_CHECK_EQ: got and want are set */
	ik_u64 got, want;
};

struct hil {
	const char *machine;		/* "qemu-virt", "qemu-q35" */
	const char *cmdline;		/* boot command line, "" if none */
	struct hil_pci pci;
	struct hil_edu edu;		/* valid when have_edu */
	bool have_edu;
	ik_u16 rid;			/* edu's requester ID (StreamID, source-id) */
	struct ik_dma_mem dma;		/* static pool, identity-mapped, clean set */
	enum hil_iommu_kind iommu_kind;
	ik_u64 iommu_base;		/* fixed per machine (board_qemu_*.c) */
	ik_u64 iommu_base_fw;		/* as the firmware tables say; 0: unknown */
	const char *iommu_base_fw_src;
	struct ik_mmio iommu;		/* valid when iommu_kind != HIL_IOMMU_NONE */
	const void *acpi_ivrs;		/* the board's, for the AMD checks */
	ik_u32 acpi_ivrs_len;
	ik_u64 timeout_ns;		/* default bound for one edu DMA: 2 s */
	struct hil_result r;		/* the running check's outcome */
};

/* What a check needs; the runner fails it, without calling it, when the
 * machine lacks it (HIL_NEEDS_EDU: edu was not found). */
#define HIL_NEEDS_EDU 0x1u
#define HIL_NEEDS_IOMMU 0x2u

struct hil_check {
	const char *name;		/* what it proves, e.g. "edu_dma_round_trip" */
	void (*fn)(struct hil *h, const void *arg);
	const void *arg;		/* passed to fn: one function, several checks */
	unsigned needs;			/* HIL_NEEDS_* */
};

struct hil_suite {
	const char *name;
	const struct hil_check *checks;
	unsigned n;
	enum hil_iommu_kind kind;	/* runs only with this IOMMU; NONE: always */
};

#define HIL_SUITE(name, checks) \
	{ (name), (checks), sizeof(checks) / sizeof((checks)[0]), HIL_IOMMU_NONE }
#define HIL_SUITE_FOR(kind, name, checks) \
	{ (name), (checks), sizeof(checks) / sizeof((checks)[0]), (kind) }

/* The suites (hil_base.c; hil_smmuv3.c, hil_vtd.c, hil_amd.c and
 * hil_riscv.c where they exist). */
extern const struct hil_suite hil_suite_base;
extern const struct hil_suite hil_suite_smmuv3;
extern const struct hil_suite hil_suite_vtd;
extern const struct hil_suite hil_suite_amd;
extern const struct hil_suite hil_suite_riscv;

/* Record a failure of the running check (the first one counts). */
void hil_fail(struct hil *h, const char *file, int line, const char *expr);
void hil_fail_values(struct hil *h, const char *file, int line, const char *expr, ik_u64 got,
		     ik_u64 want);

#ifdef __FILE_NAME__
#define HIL_FILE __FILE_NAME__
#else
#define HIL_FILE __FILE__
#endif

/* HIL_CHECK(h, cond): if cond is false, the check fails (file, line and the
 * expression are printed under its TAP line) and the check function
 * returns.  HIL_CHECK_GOTO jumps to a cleanup label instead.  HIL_CHECK_EQ
 * compares two integers and prints both on failure. */
#define HIL_CHECK(h, cond)							\
	do {									\
		if (IK_UNLIKELY(!(cond))) {					\
			hil_fail((h), HIL_FILE, __LINE__, #cond);		\
			return;							\
		}								\
	} while (0)

#define HIL_CHECK_GOTO(h, cond, label)						\
	do {									\
		if (IK_UNLIKELY(!(cond))) {					\
			hil_fail((h), HIL_FILE, __LINE__, #cond);		\
			goto label;						\
		}								\
	} while (0)

#define HIL_CHECK_EQ(h, got, want)						\
	do {									\
		ik_u64 hil_got_ = (ik_u64)(got), hil_want_ = (ik_u64)(want);	\
		if (IK_UNLIKELY(hil_got_ != hil_want_)) {			\
			hil_fail_values((h), HIL_FILE, __LINE__, #got " == " #want, \
					hil_got_, hil_want_);			\
			return;							\
		}								\
	} while (0)

#define HIL_CHECK_EQ_GOTO(h, got, want, label)					\
	do {									\
		ik_u64 hil_got_ = (ik_u64)(got), hil_want_ = (ik_u64)(want);	\
		if (IK_UNLIKELY(hil_got_ != hil_want_)) {			\
			hil_fail_values((h), HIL_FILE, __LINE__, #got " == " #want, \
					hil_got_, hil_want_);			\
			goto label;						\
		}								\
	} while (0)

/* HIL_SKIP(h, why): the check does not apply here; TAP "ok N - name # SKIP
 * why".  Returns from the check. */
#define HIL_SKIP(h, why)							\
	do {									\
		(h)->r.skip = (why);						\
		return;								\
	} while (0)

/*
 * hil_wait - call done(arg) until it returns true or timeout_ns have passed
 * (IK_ENV_TIME_NS), spinning with IK_ENV_YIELD() between calls; done is
 * called once more after the deadline, so a condition that became true just
 * in time counts.  0, or -ETIMEDOUT.
 * HIL_POLL(err, cond, timeout_ns) is the same for an expression: err gets 0
 * or -ETIMEDOUT.
 */
int hil_wait(bool (*done)(void *arg), void *arg, ik_u64 timeout_ns);

#define HIL_POLL(err, cond, timeout_ns)						\
	do {									\
		ik_u64 hil_t0_ = IK_ENV_TIME_NS();				\
		(err) = 0;							\
		while (!(cond)) {						\
			if (IK_ENV_TIME_NS() - hil_t0_ > (ik_u64)(timeout_ns)) { \
				(err) = (cond) ? 0 : -ETIMEDOUT;		\
				break;						\
			}							\
			IK_ENV_YIELD();						\
		}								\
	} while (0)

/*
 * Output on the console.  hil_printf() understands %s %c %d %i %u %x %X %p
 * and %%, with the flags '0' '-' '#', a field width, and the length
 * modifiers l, ll and z; nothing else (no floating point).  hil_diag()
 * prints one TAP diagnostic line: "# ", the text, a newline.
 */
void hil_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hil_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Patterns: hil_fill() writes a byte sequence determined by seed and each
 * byte's index (different seeds give different bytes at every index);
 * hil_verify() returns the index of the first byte of [p, p + n) that
 * differs from what hil_fill(p, n, seed) wrote, or n if none does.  To prove
 * a DMA did not reach a buffer, fill it with a seed no transfer uses and
 * verify it afterwards.
 */
void hil_fill(void *p, ik_size n, ik_u32 seed);
ik_size hil_verify(const void *p, ik_size n, ik_u32 seed);
/* The index of the first byte where a and b differ, or n. */
ik_size hil_memdiff(const void *a, const void *b, ik_size n);

/* Look up "key=value" among the space-separated words of h->cmdline: the
 * value (up to the next space, not terminated: *len gets its length) or NULL. */
const char *hil_cmdline_get(const struct hil *h, const char *key, ik_size *len);
/* hil_cmdline_get() parsed as a decimal or 0x-prefixed hex number; `dflt`
 * when absent or malformed. */
ik_u64 hil_cmdline_u64(const struct hil *h, const char *key, ik_u64 dflt);

/* ---- the board (board_qemu_*.c) ---- */

/* Set up the machine (MMU, exception vectors, clock calibration) and
 * describe it.  Called once, first thing in the image's main. */
void hil_board_init(struct hil_board *b);

#endif /* HIL_H */
