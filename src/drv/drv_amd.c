/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * AMD IOMMU driver core (<iommukit/drv/amd.h>): the Extended Feature
 * Register, the command buffer's register hooks, the event and PPR log
 * decoders, and the unit - bring-up, disable, the logs.
 *
 * Register layout (AMD pub. 48882 "MMIO Registers"): every register this
 * file touches is 64 bits; head and tail pointers hold the byte offset of
 * a 16-byte entry in [18:4]; ring base registers hold the base in [51:12]
 * and log2 of the entries in [59:56].
 */
#include <iommukit/drv/amd.h>
#include <iommukit/atomic.h>
#include "drv_int.h"

#define PAGE 4096u
#define ENTRY 16u
#define STS_RW1C                                                                        \
	(IK_AMD_STS_EVT_OVERFLOW | IK_AMD_STS_EVT_INT | IK_AMD_STS_COMWAIT_INT |         \
	 IK_AMD_STS_PPR_OVERFLOW | IK_AMD_STS_PPR_INT)
#define CTRL_RUN_BITS                                                                   \
	(IK_AMD_CTRL_IOMMU_EN | IK_AMD_CTRL_CMDBUF_EN | IK_AMD_CTRL_EVTLOG_EN |           \
	 IK_AMD_CTRL_PPRLOG_EN | IK_AMD_CTRL_PPR_EN)

static ik_u64 bits(ik_u64 v, unsigned lo, unsigned n)
{
	return (v >> lo) & (((ik_u64)1 << n) - 1);
}

/* ================================================================ EFR */

IK_API int ik_amd_hwcaps_decode(ik_u64 efr, struct ik_amd_hwcaps *out)
{
	struct ik_amd_hwcaps c;

	if (!out)
		return -EINVAL;
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	c.efr = efr;
	c.pref = bits(efr, 0, 1);
	c.ppr = bits(efr, 1, 1);
	c.xt = bits(efr, 2, 1);
	c.nx = bits(efr, 3, 1);
	c.gt = bits(efr, 4, 1);
	c.ia = bits(efr, 6, 1);
	c.ga = bits(efr, 7, 1);
	c.he = bits(efr, 8, 1);
	c.pc = bits(efr, 9, 1);
	c.hats = (ik_u8)bits(efr, 10, 2);
	c.gats = (ik_u8)bits(efr, 12, 2);
	c.glx_sup = (ik_u8)bits(efr, 14, 2);
	c.smif_sup = (ik_u8)bits(efr, 16, 2);
	c.smif_rc = (ik_u8)bits(efr, 18, 3);
	c.gam_sup = (ik_u8)bits(efr, 21, 3);
	c.pasmax = (ik_u8)bits(efr, 32, 5);
	c.us = bits(efr, 37, 1);
	c.devtblseg = (ik_u8)bits(efr, 38, 2);
	c.gio = bits(efr, 48, 1);
	c.ha = bits(efr, 49, 1);
	c.eph = bits(efr, 50, 1);
	c.hd = bits(efr, 52, 1);
	c.host_levels = c.hats == 3 ? 0 : (ik_u8)(c.hats + 4);
	c.guest_levels = c.gats == 3 ? 0 : (ik_u8)(c.gats + 4);
	c.pasid_bits = c.gt ? (ik_u8)(c.pasmax + 1) : 0;
	*out = c;
	return 0;
}

/* ================================================================ command buffer hooks */

static ik_u32 cb_read_cons(void *ctx, ik_u32 *cerror)
{
	struct ik_amd_cmdbuf *cb = (struct ik_amd_cmdbuf *)ctx;
	ik_u32 sts = ik_mmio_read32(cb->mmio, IK_AMD_REG_STATUS);
	ik_u32 head = ik_mmio_read32(cb->mmio, IK_AMD_REG_CMDBUF_HEAD);

	/* Status before Head (C1): a stop seen here is a stop at this Head. */
	*cerror = IK_CMDQ_CERROR_NONE;
	if (ik_load_acquire(&cb->started) && !(sts & IK_AMD_STS_CMDBUF_RUN))
		*cerror = IK_CMDQ_CERROR_ILL;
	/* QEMU 7.2 shows the buffer's length after the last slot: mask it. */
	return (head >> IK_AMD_PTR_SHIFT) & cb->mask;
}

static void cb_write_prod(void *ctx, ik_u32 prod)
{
	struct ik_amd_cmdbuf *cb = (struct ik_amd_cmdbuf *)ctx;

	ik_mmio_write32(cb->mmio, IK_AMD_REG_CMDBUF_TAIL, (prod & cb->mask) << IK_AMD_PTR_SHIFT);
}

static void cb_ack_error(void *ctx)
{
	struct ik_amd_cmdbuf *cb = (struct ik_amd_cmdbuf *)ctx;
	ik_u64 c = ik_mmio_read64(cb->mmio, IK_AMD_REG_CONTROL);

	cb->errors++; /* one thread at a time (the queue's error lock) */
	/* CmdBufRun comes back on a 0 -> 1 edge of CmdBufEn; the IOMMU then
	 * fetches again at Head, where the queue put its no-op. */
	ik_mmio_write64(cb->mmio, IK_AMD_REG_CONTROL, c & ~IK_AMD_CTRL_CMDBUF_EN);
	ik_mmio_write64(cb->mmio, IK_AMD_REG_CONTROL, c | IK_AMD_CTRL_CMDBUF_EN);
}

IK_API const struct ik_cmdq_regs ik_amd_cmdbuf_regs = {
	.read_cons = cb_read_cons,
	.write_prod = cb_write_prod,
	.doorbell = NULL,
	.ack_error = cb_ack_error,
};

IK_API int ik_amd_cmdbuf_init(struct ik_amd_cmdbuf *cb, const struct ik_mmio *mmio,
			      unsigned log2_entries)
{
	if (!cb || !mmio || log2_entries < IK_AMD_RING_LOG2_MIN ||
	    log2_entries > IK_AMD_RING_LOG2_MAX)
		return -EINVAL;
	cb->mmio = mmio;
	cb->mask = (1u << log2_entries) - 1;
	cb->started = false;
	cb->errors = 0;
	return 0;
}

IK_API void ik_amd_cmdbuf_start(struct ik_amd_cmdbuf *cb)
{
	ik_store_release(&cb->started, true);
}

IK_API void ik_amd_cmdbuf_stop(struct ik_amd_cmdbuf *cb)
{
	ik_store_release(&cb->started, false);
}

/* ================================================================ log entries */

static const char *const event_names[] = {
	[IK_AMD_EVT_ILLEGAL_DEV_TABLE_ENTRY] = "ILLEGAL_DEV_TABLE_ENTRY",
	[IK_AMD_EVT_IO_PAGE_FAULT] = "IO_PAGE_FAULT",
	[IK_AMD_EVT_DEV_TAB_HARDWARE_ERROR] = "DEV_TAB_HARDWARE_ERROR",
	[IK_AMD_EVT_PAGE_TAB_HARDWARE_ERROR] = "PAGE_TAB_HARDWARE_ERROR",
	[IK_AMD_EVT_ILLEGAL_COMMAND_ERROR] = "ILLEGAL_COMMAND_ERROR",
	[IK_AMD_EVT_COMMAND_HARDWARE_ERROR] = "COMMAND_HARDWARE_ERROR",
	[IK_AMD_EVT_IOTLB_INV_TIMEOUT] = "IOTLB_INV_TIMEOUT",
	[IK_AMD_EVT_INVALID_DEVICE_REQUEST] = "INVALID_DEVICE_REQUEST",
	[IK_AMD_EVT_INVALID_PPR_REQUEST] = "INVALID_PPR_REQUEST",
	[IK_AMD_EVT_EVENT_COUNTER_ZERO] = "EVENT_COUNTER_ZERO",
};

IK_API const char *ik_amd_event_name(unsigned code)
{
	return code < IK_ARRAY_SIZE(event_names) ? event_names[code] : NULL;
}

/* Which fields each code defines. */
#define F_DEV 0x1u	/* DeviceID */
#define F_PASID 0x2u	/* PASID / DomainID by GN */
#define F_FLAGS 0x4u	/* flags 59:48 */
#define F_HWTYPE 0x8u	/* Type 58:57 */
#define F_REQTYPE 0x10u	/* Type 59:57 */

static unsigned event_fields(unsigned code)
{
	switch (code) {
	case IK_AMD_EVT_ILLEGAL_DEV_TABLE_ENTRY:
	case IK_AMD_EVT_IO_PAGE_FAULT:
	case IK_AMD_EVT_INVALID_PPR_REQUEST:
		return F_DEV | F_PASID | F_FLAGS;
	case IK_AMD_EVT_DEV_TAB_HARDWARE_ERROR:
		return F_DEV | F_FLAGS | F_HWTYPE;
	case IK_AMD_EVT_PAGE_TAB_HARDWARE_ERROR:
		return F_DEV | F_PASID | F_FLAGS | F_HWTYPE;
	case IK_AMD_EVT_COMMAND_HARDWARE_ERROR:
		return F_HWTYPE;
	case IK_AMD_EVT_IOTLB_INV_TIMEOUT:
		return F_DEV;
	case IK_AMD_EVT_INVALID_DEVICE_REQUEST:
		return F_DEV | F_PASID | F_FLAGS | F_REQTYPE;
	default: /* ILLEGAL_COMMAND_ERROR, EVENT_COUNTER_ZERO: the address only */
		return 0;
	}
}

IK_API int ik_amd_event_decode(const ik_u64 rec[2], struct ik_amd_event *e)
{
	struct ik_amd_event d;
	unsigned code, f;

	if (!rec || !e)
		return -EINVAL;
	code = (unsigned)bits(rec[0], 60, 4);
	if (code > IK_AMD_EVT_EVENT_COUNTER_ZERO)
		return -EINVAL;
	IK_ENV_MEMSET(&d, 0, sizeof(d));
	if (!code) {
		*e = d;
		return -ENOENT;
	}
	f = event_fields(code);
	d.code = (ik_u8)code;
	d.addr = rec[1];
	if (f & F_DEV)
		d.devid = (ik_u16)rec[0];
	if (f & F_FLAGS) {
		d.flags = (ik_u16)bits(rec[0], 48, 12);
		d.gn = bits(rec[0], 48, 1);
		d.nx = bits(rec[0], 49, 1);
		d.us = bits(rec[0], 50, 1);
		d.intr = bits(rec[0], 51, 1);
		d.present = bits(rec[0], 52, 1);
		d.write = bits(rec[0], 53, 1);
		d.pe = bits(rec[0], 54, 1);
		d.rz = bits(rec[0], 55, 1);
		d.tr = bits(rec[0], 56, 1);
	}
	if (f & F_PASID) {
		if (d.gn)
			d.pasid = (ik_u32)(bits(rec[0], 16, 4) << 16 | bits(rec[0], 32, 16));
		else if (code != IK_AMD_EVT_ILLEGAL_DEV_TABLE_ENTRY &&
			 code != IK_AMD_EVT_INVALID_DEVICE_REQUEST &&
			 code != IK_AMD_EVT_INVALID_PPR_REQUEST)
			d.domid = (ik_u16)bits(rec[0], 32, 16);
	}
	if (f & F_HWTYPE)
		d.type = (ik_u8)bits(rec[0], 57, 2);
	if (f & F_REQTYPE)
		d.type = (ik_u8)bits(rec[0], 57, 3);
	*e = d;
	return 0;
}

IK_API int ik_amd_ppr_decode(const ik_u64 rec[2], struct ik_amd_ppr *p)
{
	struct ik_amd_ppr d;
	unsigned code;

	if (!rec || !p)
		return -EINVAL;
	code = (unsigned)bits(rec[0], 60, 4);
	if (code > IK_AMD_PPR_PAGE_SERVICE_REQUEST)
		return -EINVAL;
	IK_ENV_MEMSET(&d, 0, sizeof(d));
	if (!code) {
		*p = d;
		return -ENOENT;
	}
	d.code = (ik_u8)code;
	d.devid = (ik_u16)rec[0];
	d.tag = (ik_u16)bits(rec[0], 32, 9);
	d.pasid = (ik_u32)(bits(rec[0], 42, 4) << 16 | bits(rec[0], 16, 16));
	d.flags = (ik_u16)bits(rec[0], 48, 12);
	d.exec = bits(rec[0], 49, 1);
	d.read = bits(rec[0], 50, 1);
	d.write = bits(rec[0], 53, 1);
	d.user = bits(rec[0], 54, 1);
	d.priv = bits(rec[0], 55, 1);
	d.gn = bits(rec[0], 56, 1);
	d.addr = rec[1];
	*p = d;
	return 0;
}

/* ================================================================ the unit */

/* One ring of 16-byte entries in DMA memory. */
struct ring {
	ik_u64 *cpu;
	ik_u64 dma;
	ik_size bytes;
	unsigned log2;
};

struct ik_amd {
	struct ik_mmio mmio;
	struct ik_dma_mem dma;
	const struct ik_allocator *alloc;
	struct ik_amd_hwcaps caps;
	struct ik_amd_devtab devtab;
	struct ik_amd_cmdbuf cb;
	struct ring cmd, evt, ppr;
	struct ik_cmdq *q;
	void *qmem;
	ik_size qmem_size;
	unsigned oas;
	ik_u32 flags;
	ik_u64 timeout;
	bool enabled, stuck, use_ppr;
	struct ik_amd_stats st;
};

static ik_u32 rd32(const struct ik_amd *u, ik_u32 off)
{
	return ik_mmio_read32(&u->mmio, off);
}

static ik_u64 rd64(const struct ik_amd *u, ik_u32 off)
{
	return ik_mmio_read64(&u->mmio, off);
}

static void wr64(const struct ik_amd *u, ik_u32 off, ik_u64 v)
{
	ik_mmio_write64(&u->mmio, off, v);
}

/* Poll Status until every bit of `mask` is set (want) or clear. */
static int wait_status(const struct ik_amd *u, ik_u32 mask, bool want)
{
	ik_u64 deadline = 0;

	for (;;) {
		ik_u32 s = rd32(u, IK_AMD_REG_STATUS) & mask;

		if (want ? s == mask : !s)
			return 0;
		if (ik_drv_poll_step(&deadline, u->timeout))
			return -ETIMEDOUT;
	}
}

static bool log2_ok(unsigned v)
{
	return !v || (v >= IK_AMD_RING_LOG2_MIN && v <= IK_AMD_RING_LOG2_MAX);
}

IK_API int ik_amd_create(const struct ik_amd_config *cfg, struct ik_amd **out)
{
	struct ik_amd_devtab_config dc;
	struct ik_amd *u;
	int err;

	if (!cfg || !out || !ik_drv_io_ok(cfg->mmio, cfg->dma) || cfg->max_devid > IK_AMD_MAX_DEVID ||
	    (cfg->oas && (cfg->oas < 32 || cfg->oas > 52)) || !log2_ok(cfg->cmd_log2) ||
	    !log2_ok(cfg->evt_log2) || !log2_ok(cfg->ppr_log2) || (cfg->flags & ~IK_AMD_CFG_NO_PPR))
		return -EINVAL;
	u = (struct ik_amd *)ik_drv_zalloc(cfg->alloc, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->mmio = *cfg->mmio;
	u->dma = *cfg->dma;
	u->alloc = cfg->alloc;
	u->oas = cfg->oas ? cfg->oas : 52;
	u->flags = cfg->flags;
	u->timeout = cfg->timeout_ns ? cfg->timeout_ns : 1000000000ull;
	u->cmd.log2 = cfg->cmd_log2 ? cfg->cmd_log2 : IK_AMD_RING_LOG2_MIN;
	u->evt.log2 = cfg->evt_log2 ? cfg->evt_log2 : IK_AMD_RING_LOG2_MIN;
	u->ppr.log2 = cfg->ppr_log2 ? cfg->ppr_log2 : IK_AMD_RING_LOG2_MIN;
	ik_amd_hwcaps_decode(rd64(u, IK_AMD_REG_EFR), &u->caps);
	u->use_ppr = u->caps.ppr && !(cfg->flags & IK_AMD_CFG_NO_PPR);
	dc.dma = &u->dma;
	dc.max_devid = cfg->max_devid;
	dc.oas = u->oas;
	err = ik_amd_devtab_init(&u->devtab, &dc);
	if (err) {
		ik_free(cfg->alloc, u, sizeof(*u));
		return err;
	}
	*out = u;
	return 0;
}

IK_API const struct ik_amd_hwcaps *ik_amd_caps(const struct ik_amd *u)
{
	return &u->caps;
}

IK_API struct ik_amd_devtab *ik_amd_devtab(struct ik_amd *u)
{
	return &u->devtab;
}

IK_API bool ik_amd_has_ppr(const struct ik_amd *u)
{
	return u && u->enabled && u->ppr.cpu;
}

static int ring_alloc(struct ik_amd *u, struct ring *r)
{
	void *p;
	int err;

	r->bytes = (ik_size)ENTRY << r->log2;
	err = ik_drv_dma_alloc_below(&u->dma, r->bytes, r->bytes, u->oas, &p, &r->dma);
	if (err)
		return err;
	r->cpu = (ik_u64 *)p;
	ik_dma_clean(&u->dma, r->cpu, r->dma, r->bytes);
	return 0;
}

static void ring_free(struct ik_amd *u, struct ring *r)
{
	ik_dma_free(&u->dma, r->cpu, r->dma, r->bytes);
	r->cpu = NULL;
	r->dma = 0;
}

static void rings_free(struct ik_amd *u)
{
	if (u->q) {
		ik_free(u->alloc, u->qmem, u->qmem_size);
		u->q = NULL;
		u->qmem = NULL;
	}
	ring_free(u, &u->cmd);
	ring_free(u, &u->evt);
	if (u->ppr.cpu)
		ring_free(u, &u->ppr);
}

static int queue_start(struct ik_amd *u)
{
	struct ik_cmdq_config qc;
	int err;

	err = ik_amd_cmdbuf_init(&u->cb, &u->mmio, u->cmd.log2);
	if (err)
		return err;
	ik_drv_queue_cfg(&qc, &ik_cmdq_fmt_amd, u->cmd.log2, u->cmd.cpu, u->cmd.dma,
			 &ik_amd_cmdbuf_regs, &u->cb, u->timeout);
	qc.alloc = u->alloc;
	u->qmem_size = ik_cmdq_memsize(&qc);
	if (!u->qmem_size)
		return -EINVAL;
	u->qmem = ik_alloc(u->alloc, u->qmem_size, IK_CACHELINE);
	if (!u->qmem)
		return -ENOMEM;
	err = ik_cmdq_init(u->qmem, u->qmem_size, &qc, &u->q);
	if (err) {
		ik_free(u->alloc, u->qmem, u->qmem_size);
		u->qmem = NULL;
		u->q = NULL;
	}
	return err;
}

/* Control with every bit this unit runs cleared, and a wait for the Run
 * bits to follow. */
static int switch_off(struct ik_amd *u)
{
	ik_u64 c = rd64(u, IK_AMD_REG_CONTROL);

	ik_amd_cmdbuf_stop(&u->cb);
	if (c & CTRL_RUN_BITS)
		wr64(u, IK_AMD_REG_CONTROL, c & ~CTRL_RUN_BITS);
	return wait_status(u, IK_AMD_STS_CMDBUF_RUN | IK_AMD_STS_EVTLOG_RUN |
				      IK_AMD_STS_PPRLOG_RUN, false);
}

static void ring_program(struct ik_amd *u, const struct ring *r, ik_u32 base, ik_u32 head,
			 ik_u32 tail)
{
	wr64(u, base, ik_amd_ring_reg(r->dma, r->log2));
	wr64(u, head, 0);
	wr64(u, tail, 0);
}

IK_API int ik_amd_enable(struct ik_amd *u)
{
	struct ik_amd_cmd c;
	ik_u64 ctrl;
	ik_u32 run = IK_AMD_STS_CMDBUF_RUN | IK_AMD_STS_EVTLOG_RUN;
	int err;

	if (!u)
		return -EINVAL;
	ctrl = rd64(u, IK_AMD_REG_CONTROL);
	if (u->enabled || (ctrl & (IK_AMD_CTRL_IOMMU_EN | IK_AMD_CTRL_CMDBUF_EN)))
		return -EBUSY;
	/* 2. memory */
	err = ring_alloc(u, &u->cmd);
	if (!err)
		err = ring_alloc(u, &u->evt);
	if (!err && u->use_ppr)
		err = ring_alloc(u, &u->ppr);
	if (!err)
		err = queue_start(u);
	if (err) {
		rings_free(u);
		return err;
	}
	/* 3. tables and rings */
	wr64(u, IK_AMD_REG_DEVTAB_BASE, ik_amd_devtab_reg(&u->devtab));
	ring_program(u, &u->cmd, IK_AMD_REG_CMDBUF_BASE, IK_AMD_REG_CMDBUF_HEAD,
		     IK_AMD_REG_CMDBUF_TAIL);
	ring_program(u, &u->evt, IK_AMD_REG_EVTLOG_BASE, IK_AMD_REG_EVTLOG_HEAD,
		     IK_AMD_REG_EVTLOG_TAIL);
	if (u->ppr.cpu) {
		ring_program(u, &u->ppr, IK_AMD_REG_PPRLOG_BASE, IK_AMD_REG_PPRLOG_HEAD,
			     IK_AMD_REG_PPRLOG_TAIL);
		run |= IK_AMD_STS_PPRLOG_RUN;
	}
	ik_mmio_write32(&u->mmio, IK_AMD_REG_STATUS, STS_RW1C);
	/* 4. the rings, then translation; interrupts stay off */
	ctrl &= ~(IK_AMD_CTRL_EVT_INT_EN | IK_AMD_CTRL_COMWAIT_INT_EN | IK_AMD_CTRL_PPR_INT_EN);
	ctrl |= IK_AMD_CTRL_CMDBUF_EN | IK_AMD_CTRL_EVTLOG_EN;
	if (u->ppr.cpu)
		ctrl |= IK_AMD_CTRL_PPRLOG_EN;
	wr64(u, IK_AMD_REG_CONTROL, ctrl);
	wr64(u, IK_AMD_REG_CONTROL, ctrl | IK_AMD_CTRL_IOMMU_EN);
	err = wait_status(u, run, true);
	if (err)
		goto fail;
	ik_amd_cmdbuf_start(&u->cb);
	u->enabled = true;
	/* 5. nothing cached from before */
	IK_ENV_MEMSET(&c, 0, sizeof(c));
	if (u->caps.ia) {
		c.op = IK_AMD_CMD_INV_IOMMU_ALL;
		err = ik_amd_issue(u, &c, 1, true);
	} else {
		ik_u32 n = ik_amd_devtab_entries(&u->devtab);

		c.op = IK_AMD_CMD_INV_DEVTAB_ENTRY;
		for (ik_u32 d = 0; d < n && !err; d++) {
			c.devid = (ik_u16)d;
			err = ik_amd_issue(u, &c, 1, d + 1 == n);
		}
	}
	if (!err)
		return 0;
	u->enabled = false;
fail:
	if (switch_off(u)) {
		u->stuck = true;
		return err;
	}
	rings_free(u);
	return err;
}

IK_API int ik_amd_disable(struct ik_amd *u)
{
	int err;

	if (!u)
		return -EINVAL;
	if (u->enabled && u->q)
		(void)ik_cmdq_sync(u->q);
	err = switch_off(u);
	if (err) {
		u->stuck = true;
		return err;
	}
	u->enabled = false;
	u->stuck = false;
	rings_free(u);
	return 0;
}

IK_API void ik_amd_destroy(struct ik_amd *u)
{
	if (!u)
		return;
	if ((u->enabled || u->stuck) && ik_amd_disable(u))
		return; /* the IOMMU may still read its memory: leak it */
	ik_amd_devtab_fini(&u->devtab);
	ik_free(u->alloc, u, sizeof(*u));
}

IK_API struct ik_cmdq *ik_amd_queue(struct ik_amd *u)
{
	return u && u->enabled ? u->q : NULL;
}

IK_API int ik_amd_issue(struct ik_amd *u, const struct ik_amd_cmd *c, unsigned n, bool sync)
{
	ik_u64 w[IK_AMD_PLAN_MAX * 4 * 2];

	if (!u || (n && !c) || n > IK_AMD_PLAN_MAX * 4)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (ik_amd_cmd_encode(&c[i], &w[2 * i]))
			return -EINVAL;
	if (!u->enabled || !u->q)
		return -ENODEV;
	if (!n && !sync)
		return 0;
	return ik_cmdq_issue(u->q, w, n, sync ? IK_CMDQ_SYNC : 0);
}

/*
 * Pop one entry of a log: Head and Tail checked against its size, the
 * entry read (after an invalidating clean) and zeroed, Head advanced.
 * Overflow: once the log is drained, the RW1C bit cleared and the log
 * restarted (its enable bit cleared and set, Head = Tail = 0).
 */
static int log_pop(struct ik_amd *u, const struct ring *r, ik_u32 head_reg, ik_u32 tail_reg,
		   ik_u32 ovf_bit, ik_u64 en_bit, ik_u64 rec[2], bool *overflow)
{
	ik_u32 n = 1u << r->log2;
	ik_u64 head = rd64(u, head_reg), tail = rd64(u, tail_reg);
	ik_u32 sts = rd32(u, IK_AMD_REG_STATUS);
	ik_u32 h, t;
	ik_u64 *ent;

	*overflow = sts & ovf_bit;
	if ((head & ~(ik_u64)IK_AMD_PTR_MASK) || (tail & ~(ik_u64)IK_AMD_PTR_MASK))
		return -EIO;
	h = (ik_u32)(head >> IK_AMD_PTR_SHIFT);
	t = (ik_u32)(tail >> IK_AMD_PTR_SHIFT);
	if (h >= n || t >= n)
		return -EIO;
	if (h == t) {
		if (*overflow) {
			ik_u64 c = rd64(u, IK_AMD_REG_CONTROL);

			u->st.overflows++;
			ik_mmio_write32(&u->mmio, IK_AMD_REG_STATUS, ovf_bit);
			wr64(u, IK_AMD_REG_CONTROL, c & ~en_bit);
			wr64(u, head_reg, 0);
			wr64(u, tail_reg, 0);
			wr64(u, IK_AMD_REG_CONTROL, c | en_bit);
		}
		return -ENOENT;
	}
	ent = &r->cpu[2 * h];
	ik_dma_clean(&u->dma, ent, r->dma + (ik_u64)h * ENTRY, ENTRY);
	rec[0] = ik_load_relaxed(&ent[0]);
	rec[1] = ik_load_relaxed(&ent[1]);
	ent[0] = 0;
	ent[1] = 0;
	ik_dma_clean(&u->dma, ent, r->dma + (ik_u64)h * ENTRY, ENTRY);
	wr64(u, head_reg, (ik_u64)((h + 1) & (n - 1)) << IK_AMD_PTR_SHIFT);
	return 0;
}

IK_API int ik_amd_event_pop(struct ik_amd *u, struct ik_amd_event *e)
{
	ik_u64 rec[2];
	bool ovf;
	int err;

	if (!u || !e)
		return -EINVAL;
	if (!u->enabled)
		return -ENODEV;
	err = log_pop(u, &u->evt, IK_AMD_REG_EVTLOG_HEAD, IK_AMD_REG_EVTLOG_TAIL,
		      IK_AMD_STS_EVT_OVERFLOW, IK_AMD_CTRL_EVTLOG_EN, rec, &ovf);
	if (err)
		return err;
	err = ik_amd_event_decode(rec, e);
	if (err)
		return -EIO;
	e->overflow = ovf;
	u->st.events++;
	return 0;
}

IK_API int ik_amd_ppr_pop(struct ik_amd *u, struct ik_amd_ppr *p)
{
	ik_u64 rec[2];
	bool ovf;
	int err;

	if (!u || !p)
		return -EINVAL;
	if (!u->enabled || !u->ppr.cpu)
		return -ENODEV;
	err = log_pop(u, &u->ppr, IK_AMD_REG_PPRLOG_HEAD, IK_AMD_REG_PPRLOG_TAIL,
		      IK_AMD_STS_PPR_OVERFLOW, IK_AMD_CTRL_PPRLOG_EN, rec, &ovf);
	if (err)
		return err;
	err = ik_amd_ppr_decode(rec, p);
	if (err)
		return -EIO;
	p->overflow = ovf;
	u->st.pprs++;
	return 0;
}

IK_API int ik_amd_get_stats(const struct ik_amd *u, struct ik_amd_stats *st)
{
	if (!u || !st)
		return -EINVAL;
	*st = u->st;
	st->cmd_stops = u->cb.errors;
	return 0;
}
