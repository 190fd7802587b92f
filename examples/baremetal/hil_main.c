/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The hardware-in-the-loop image's main and its runner (see hil.h): set up
 * the board, find edu, fill in struct hil, run every suite's checks, print
 * one TAP line per check, and stop the machine with the result.
 *
 * start.S calls bm_main() on its own stack and passes the return value to
 * bm_board_exit(); in a HIL image bm_main is defined here (the self-test
 * image's bm_main.c is not linked in).
 *
 * TAP output:
 *   # diagnostics of the board and the setup
 *   1..N                                  (N: every check of the suites that
 *                                         run: the baseline and the suite of
 *                                         the IOMMU the board found)
 *   # diagnostics ...
 *   ok 1 - base: pci_finds_edu
 *   not ok 2 - base: ...                  followed by "# file:line: ..."
 *   ok 3 - base: ... # SKIP why
 *   # hil: done: P passed, F failed, S skipped
 * The last line tells the runner the image reached its end; anything after
 * the plan but before it (an exception, a hang) is an early stop.
 */
#include <iommukit/env.h>
#include <iommukit/drv/io.h>
#include "hil.h"

int bm_main(void);

/* The suites this image runs: the baseline, then its IOMMU's where built
 * (the Makefile defines HIL_HAVE_SMMUV3 / HIL_HAVE_VTD when hil_smmuv3.c /
 * hil_vtd.c exist for the image's architecture). */
static const struct hil_suite *const suites[] = {
	&hil_suite_base,
#ifdef HIL_HAVE_SMMUV3
	&hil_suite_smmuv3,
#endif
#ifdef HIL_HAVE_VTD
	&hil_suite_vtd,
#endif
#ifdef HIL_HAVE_AMD
	&hil_suite_amd,
#endif
#ifdef HIL_HAVE_RISCV
	&hil_suite_riscv,
#endif
};

/* ---------------------------------------------------------------- output */

static void out_str(const char *s)
{
	bm_puts(s);
}

/* One formatted number: base 10 or 16, zero or space padding to `width`,
 * left-justified with '-', "0x" with '#'. */
static void out_num(ik_u64 v, bool neg, unsigned base, bool upper, int width, bool zero,
		    bool left, bool alt)
{
	char buf[24];
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	int n = 0, len, pad;

	do {
		buf[n++] = digits[v % base];
		v /= base;
	} while (v);
	len = n + (neg ? 1 : 0) + (alt && base == 16 ? 2 : 0);
	pad = width > len ? width - len : 0;
	if (!left && !zero)
		for (; pad; pad--)
			bm_board_write(" ", 1);
	if (neg)
		bm_board_write("-", 1);
	if (alt && base == 16)
		bm_board_write(upper ? "0X" : "0x", 2);
	if (!left && zero)
		for (; pad; pad--)
			bm_board_write("0", 1);
	while (n)
		bm_board_write(&buf[--n], 1);
	for (; pad; pad--)
		bm_board_write(" ", 1);
}

static void out_vfmt(const char *fmt, __builtin_va_list ap)
{
	for (; *fmt; fmt++) {
		bool zero = false, left = false, alt = false;
		int width = 0, lng = 0;

		if (*fmt != '%') {
			const char *s = fmt;

			while (fmt[1] && fmt[1] != '%')
				fmt++;
			bm_board_write(s, (ik_size)(fmt - s + 1));
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '0')
				zero = true;
			else if (*fmt == '-')
				left = true;
			else if (*fmt == '#')
				alt = true;
			else
				break;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		for (;; fmt++) {
			if (*fmt == 'l')
				lng++;
			else if (*fmt == 'z')
				lng = 2;
			else
				break;
		}
		switch (*fmt) {
		case 'd':
		case 'i': {
			ik_s64 v = lng >= 2 ? __builtin_va_arg(ap, long long)
			    : lng ? __builtin_va_arg(ap, long) : __builtin_va_arg(ap, int);

			out_num(v < 0 ? (ik_u64)0 - (ik_u64)v : (ik_u64)v, v < 0, 10, false, width, zero,
				left, false);
			break;
		}
		case 'u':
		case 'x':
		case 'X': {
			ik_u64 v = lng >= 2 ? __builtin_va_arg(ap, unsigned long long)
			    : lng ? __builtin_va_arg(ap, unsigned long) : __builtin_va_arg(ap, unsigned);

			out_num(v, false, *fmt == 'u' ? 10 : 16, *fmt == 'X', width, zero, left, alt);
			break;
		}
		case 'p':
			out_num((ik_u64)(ik_uptr)__builtin_va_arg(ap, void *), false, 16, false, width,
				zero, left, true);
			break;
		case 's': {
			const char *s = __builtin_va_arg(ap, const char *);
			ik_size n = 0;

			if (!s)
				s = "(null)";
			while (s[n])
				n++;
			for (; !left && width > (int)n; width--)
				bm_board_write(" ", 1);
			bm_board_write(s, n);
			for (; left && width > (int)n; width--)
				bm_board_write(" ", 1);
			break;
		}
		case 'c': {
			char c = (char)__builtin_va_arg(ap, int);

			bm_board_write(&c, 1);
			break;
		}
		case '%':
			bm_board_write("%", 1);
			break;
		case '\0':
			return;
		default:		/* unknown conversion: print it as it is */
			bm_board_write("%", 1);
			bm_board_write(fmt, 1);
			break;
		}
	}
}

void hil_printf(const char *fmt, ...)
{
	__builtin_va_list ap;

	__builtin_va_start(ap, fmt);
	out_vfmt(fmt, ap);
	__builtin_va_end(ap);
}

void hil_diag(const char *fmt, ...)
{
	__builtin_va_list ap;

	out_str("# ");
	__builtin_va_start(ap, fmt);
	out_vfmt(fmt, ap);
	__builtin_va_end(ap);
	out_str("\n");
}

/* ---------------------------------------------------------------- checks */

void hil_fail(struct hil *h, const char *file, int line, const char *expr)
{
	if (h->r.failed)
		return;
	h->r.failed = true;
	h->r.file = file;
	h->r.line = line;
	h->r.expr = expr;
}

void hil_fail_values(struct hil *h, const char *file, int line, const char *expr, ik_u64 got,
		     ik_u64 want)
{
	if (h->r.failed)
		return;
	hil_fail(h, file, line, expr);
	h->r.have_values = true;
	h->r.got = got;
	h->r.want = want;
}

int hil_wait(bool (*done)(void *arg), void *arg, ik_u64 timeout_ns)
{
	ik_u64 t0 = IK_ENV_TIME_NS();

	while (!done(arg)) {
		if (IK_ENV_TIME_NS() - t0 > timeout_ns)
			return done(arg) ? 0 : -ETIMEDOUT;
		IK_ENV_YIELD();
	}
	return 0;
}

/* splitmix64's finaliser over (seed, index): a byte per index, different
 * for different seeds at the same index (the seed is mixed in first, so
 * seeds s and s' give bytes that differ with probability 255/256 each; the
 * + 1 keeps seed 0 from being the all-zero pattern a faulting read gives). */
static ik_u8 pattern_byte(ik_u32 seed, ik_size i)
{
	ik_u64 z = ((ik_u64)seed << 32 | (ik_u32)(i >> 3)) + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (ik_u8)((z >> ((i & 7) * 8)) + 1);
}

void hil_fill(void *p, ik_size n, ik_u32 seed)
{
	volatile ik_u8 *b = (volatile ik_u8 *)p;
	ik_size i;

	for (i = 0; i < n; i++)
		b[i] = pattern_byte(seed, i);
}

ik_size hil_verify(const void *p, ik_size n, ik_u32 seed)
{
	const volatile ik_u8 *b = (const volatile ik_u8 *)p;
	ik_size i;

	for (i = 0; i < n; i++)
		if (b[i] != pattern_byte(seed, i))
			return i;
	return n;
}

ik_size hil_memdiff(const void *a, const void *b, ik_size n)
{
	const volatile ik_u8 *x = (const volatile ik_u8 *)a, *y = (const volatile ik_u8 *)b;
	ik_size i;

	for (i = 0; i < n; i++)
		if (x[i] != y[i])
			return i;
	return n;
}

const char *hil_cmdline_get(const struct hil *h, const char *key, ik_size *len)
{
	const char *s = h->cmdline;
	ik_size k = 0;

	while (key[k])
		k++;
	while (s && *s) {
		ik_size i, n;

		while (*s == ' ')
			s++;
		for (n = 0; s[n] && s[n] != ' '; n++)
			;
		for (i = 0; i < k && i < n && s[i] == key[i]; i++)
			;
		if (i == k && n > k && s[k] == '=') {
			*len = n - k - 1;
			return s + k + 1;
		}
		s += n;
	}
	return NULL;
}

ik_u64 hil_cmdline_u64(const struct hil *h, const char *key, ik_u64 dflt)
{
	ik_size n, i = 0;
	const char *v = hil_cmdline_get(h, key, &n);
	unsigned base = 10;
	ik_u64 x = 0;

	if (!v || !n)
		return dflt;
	if (n > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		base = 16;
		i = 2;
	}
	for (; i < n; i++) {
		char c = v[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return dflt;
		if (x > (IK_U64_MAX - d) / base)
			return dflt;
		x = x * base + d;
	}
	return x;
}

/* ---------------------------------------------------------------- DMA memory */

/* Pool pages: aligned to the size rounded up to a power of two, so an
 * alignment above that is met by asking for more. */
static void *dma_alloc(void *ctx, ik_size size, ik_size align, ik_u64 *dma)
{
	void *p;

	(void)ctx;
	p = bm_alloc_pages(size > align ? size : align);
	*dma = (ik_u64)(ik_uptr)p;	/* identity: bus address = CPU address */
	return p;
}

static void dma_free(void *ctx, void *cpu, ik_u64 dma, ik_size size)
{
	(void)ctx;
	(void)dma;
	(void)size;
	bm_free_pages(cpu);
}

/* Clean AND invalidate: the driver cores also call `clean` before they read
 * what the IOMMU wrote (ik_smmu_event_pop() over an event record), and
 * <iommukit/drv/smmuv3.h> asks the hook to invalidate then, or the CPU could
 * read a stale cached line of the record.  AArch64: dc civac (a clean alone,
 * dc cvac, would leave the line valid); x86-64: clflush already invalidates. */
static void dma_clean(void *ctx, const void *cpu, ik_u64 dma, ik_size size)
{
	(void)ctx;
	(void)dma;
#if defined(__aarch64__)
	{
		ik_uptr a, end = (ik_uptr)cpu + size;
		ik_u64 ctr, line;

		__asm__ __volatile__("mrs %0, ctr_el0" : "=r"(ctr));
		line = 4ull << ((ctr >> 16) & 0xf);	/* CTR_EL0.DminLine */
		for (a = (ik_uptr)cpu & ~(ik_uptr)(line - 1); a < end; a += line)
			__asm__ __volatile__("dc civac, %0" : : "r"(a) : "memory");
		__asm__ __volatile__("dsb sy" ::: "memory");
	}
#else
	bm_clean_dcache(cpu, size);
#endif
}

/* ---------------------------------------------------------------- runner */

static const char *kind_name(enum hil_iommu_kind k)
{
	switch (k) {
	case HIL_IOMMU_SMMUV3:
		return "smmuv3";
	case HIL_IOMMU_VTD:
		return "vtd";
	case HIL_IOMMU_AMD:
		return "amd";
	case HIL_IOMMU_RISCV:
		return "riscv";
	default:
		return "none";
	}
}

static void setup(struct hil *h, const struct hil_board *b)
{
	ik_u64 size = 0;
	int err;

	h->machine = b->machine;
	h->cmdline = b->cmdline ? b->cmdline : "";
	h->pci = b->pci;
	h->timeout_ns = 2000000000ull;
	h->dma.alloc = dma_alloc;
	h->dma.free = dma_free;
	h->dma.clean = dma_clean;
	h->dma.ctx = NULL;
	h->iommu_kind = b->iommu_kind;
	h->iommu_base = b->iommu_base;
	h->iommu_base_fw = b->iommu_base_fw;
	h->iommu_base_fw_src = b->iommu_base_fw_src;
	h->acpi_ivrs = b->acpi_ivrs;
	h->acpi_ivrs_len = b->acpi_ivrs_len;
	if (b->iommu_kind != HIL_IOMMU_NONE &&
	    ik_mmio_direct_init(&h->iommu, (volatile void *)b->iommu_base) != 0)
		h->iommu_kind = HIL_IOMMU_NONE;

	hil_diag("hil: machine %s, iommu %s at %#llx, ecam %#llx (%u buses), cmdline \"%s\"",
		 h->machine, kind_name(h->iommu_kind), (unsigned long long)h->iommu_base,
		 (unsigned long long)h->pci.ecam, h->pci.buses, h->cmdline);
	err = hil_pci_find(&h->pci, HIL_EDU_VENDOR, HIL_EDU_DEVICE, &h->edu.pci);
	if (err) {
		hil_diag("hil: no edu device (%04x:%04x) on PCI: is -device edu given?",
			 HIL_EDU_VENDOR, HIL_EDU_DEVICE);
		return;
	}
	err = hil_pci_bar_setup(&h->pci, &h->edu.pci, 0, &h->edu.bar0_addr, &size,
				&h->edu.bar0_assigned);
	if (err) {
		hil_diag("hil: edu BAR0 setup failed: %s", ik_strerror(err));
		return;
	}
	h->edu.bar0 = (volatile ik_u8 *)(ik_uptr)h->edu.bar0_addr;
	hil_pci_set_master(&h->edu.pci, true);
	h->have_edu = true;
	h->rid = h->edu.pci.rid;
	hil_diag("hil: edu at %02x:%02x.%x, requester ID %#06x, BAR0 %#llx (%llu KiB, %s)",
		 h->edu.pci.bus, h->edu.pci.dev, h->edu.pci.fn, h->rid,
		 (unsigned long long)h->edu.bar0_addr, (unsigned long long)(size >> 10),
		 h->edu.bar0_assigned ? "assigned by the harness" : "assigned by the firmware");
}

/* A suite runs on every machine (kind NONE) or with its IOMMU. */
static bool suite_runs(const struct hil_suite *su, const struct hil *h)
{
	return su->kind == HIL_IOMMU_NONE || su->kind == h->iommu_kind;
}

/* hil.iommu=NAME on the command line: does the machine have that IOMMU?
 * (true without the key) */
static bool iommu_as_asked(const struct hil *h)
{
	const char *want, *got = kind_name(h->iommu_kind);
	ik_size wlen, k = 0;
	char w[16];

	want = hil_cmdline_get(h, "hil.iommu", &wlen);
	if (!want)
		return true;
	while (got[k] && k < wlen && got[k] == want[k])
		k++;
	if (k == wlen && !got[k])
		return true;
	for (k = 0; k < wlen && k + 1 < sizeof(w); k++)
		w[k] = want[k];
	w[k] = '\0';
	hil_printf("Bail out! the command line asks for IOMMU \"%s\", the machine has %s\n", w,
		   got);
	return false;
}

int bm_main(void)
{
	static struct hil h;	/* static: the stack stays small */
	struct hil_board b;
	unsigned s, i, n = 0, idx = 0, passed = 0, failed = 0, skipped = 0;

	IK_ENV_MEMSET(&b, 0, sizeof(b));
	hil_board_init(&b);
	hil_diag("iommukit %s hardware-in-the-loop harness, env " IK_ENV_NAME, ik_version());
	setup(&h, &b);
	if (!iommu_as_asked(&h))
		return 2;
	for (s = 0; s < IK_ARRAY_SIZE(suites); s++) {
		if (suite_runs(suites[s], &h))
			n += suites[s]->n;
		else
			hil_diag("hil: suite %s not run: the machine's IOMMU is %s", suites[s]->name,
				 kind_name(h.iommu_kind));
	}
	hil_printf("1..%u\n", n);

	for (s = 0; s < IK_ARRAY_SIZE(suites); s++) {
		const struct hil_suite *su = suites[s];

		if (!suite_runs(su, &h))
			continue;

		for (i = 0; i < su->n; i++) {
			const struct hil_check *c = &su->checks[i];
			long live = bm_pool_live();
			const char *missing = NULL;

			idx++;
			IK_ENV_MEMSET(&h.r, 0, sizeof(h.r));
			if ((c->needs & HIL_NEEDS_EDU) && !h.have_edu)
				missing = "no edu device";
			else if ((c->needs & HIL_NEEDS_IOMMU) && h.iommu_kind == HIL_IOMMU_NONE)
				missing = "no IOMMU";
			if (missing) {
				hil_fail(&h, "hil_main.c", 0, missing);
			} else {
				c->fn(&h, c->arg);
				if (!h.r.failed && bm_pool_live() != live)
					hil_fail_values(&h, "hil_main.c", __LINE__,
							"the check freed what it allocated "
							"(pool allocations after == before)",
							(ik_u64)bm_pool_live(), (ik_u64)live);
			}
			if (h.r.failed) {
				failed++;
				hil_printf("not ok %u - %s: %s\n", idx, su->name, c->name);
				if (h.r.line)
					hil_diag("%s:%d: check failed: %s", h.r.file, h.r.line, h.r.expr);
				else
					hil_diag("not run: %s", h.r.expr);
				if (h.r.have_values)
					hil_diag("  got %#llx (%llu), want %#llx (%llu)",
						 (unsigned long long)h.r.got, (unsigned long long)h.r.got,
						 (unsigned long long)h.r.want,
						 (unsigned long long)h.r.want);
			} else if (h.r.skip) {
				skipped++;
				hil_printf("ok %u - %s: %s # SKIP %s\n", idx, su->name, c->name, h.r.skip);
			} else {
				passed++;
				hil_printf("ok %u - %s: %s\n", idx, su->name, c->name);
			}
		}
	}
	hil_diag("hil: done: %u passed, %u failed, %u skipped", passed, failed, skipped);
	return failed ? 1 : 0;
}
