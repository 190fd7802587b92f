/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * SMMUv3 driver core, the pure part: ID registers, STE and CD encoders, event
 * records and GERROR (<iommukit/drv/smmuv3.h>).  Bit positions are IHI 0070's
 * ("Registers", "Stream table entry", "Context descriptor", "Event queue
 * record formats"); TCR_EL1/VTCR_EL2 field positions (to read
 * ik_lpae_get_regs()) are the Arm ARM's.
 */
#include <iommukit/drv/smmuv3.h>
#include <iommukit/fmt/lpae.h>

static inline ik_u32 fld32(ik_u32 v, unsigned lsb, unsigned width)
{
	return (v >> lsb) & ((1u << width) - 1);
}

static inline ik_u64 fld64(ik_u64 v, unsigned lsb, unsigned width)
{
	return (v >> lsb) & ((1ull << width) - 1);
}

static inline bool bit32(ik_u32 v, unsigned b)
{
	return (v >> b) & 1u;
}

/* ---------------------------------------------------------------- IDR */

static const ik_u8 oas_bits[8] = { 32, 36, 40, 42, 44, 48, 52, 0 };

IK_API int ik_smmu_idr_decode(const ik_u32 idr[6], ik_u32 iidr, ik_u32 aidr,
			      struct ik_smmu_idr *out)
{
	ik_u32 r0, r1, r3, r5;

	if (!idr || !out)
		return -EINVAL;
	IK_ENV_MEMSET(out, 0, sizeof(*out));
	for (unsigned i = 0; i < 6; i++)
		out->raw[i] = idr[i];
	out->iidr = iidr;
	out->aidr = aidr;
	r0 = idr[0];
	out->s2p = bit32(r0, 0);
	out->s1p = bit32(r0, 1);
	out->ttf = (ik_u8)fld32(r0, 2, 2);
	out->cohacc = bit32(r0, 4);
	out->btm = bit32(r0, 5);
	out->httu = (ik_u8)fld32(r0, 6, 2);
	out->dormhint = bit32(r0, 8);
	out->hyp = bit32(r0, 9);
	out->ats = bit32(r0, 10);
	out->ns1ats = bit32(r0, 11);
	out->asid16 = bit32(r0, 12);
	out->msi = bit32(r0, 13);
	out->sev = bit32(r0, 14);
	out->atos = bit32(r0, 15);
	out->pri = bit32(r0, 16);
	out->vmw = bit32(r0, 17);
	out->vmid16 = bit32(r0, 18);
	out->cd2l = bit32(r0, 19);
	out->vatos = bit32(r0, 20);
	out->ttendian = (ik_u8)fld32(r0, 21, 2);
	out->atsrecerr = bit32(r0, 23);
	out->stall_model = (ik_u8)fld32(r0, 24, 2);
	out->term_model = bit32(r0, 26);
	out->st_level = (ik_u8)fld32(r0, 27, 2);
	r1 = idr[1];
	out->sidsize = (ik_u8)fld32(r1, 0, 6);
	out->ssidsize = (ik_u8)fld32(r1, 6, 5);
	out->priqs = (ik_u8)fld32(r1, 11, 5);
	out->eventqs = (ik_u8)fld32(r1, 16, 5);
	out->cmdqs = (ik_u8)fld32(r1, 21, 5);
	out->attr_perms_ovr = bit32(r1, 26);
	out->attr_types_ovr = bit32(r1, 27);
	out->rel = bit32(r1, 28);
	out->queues_preset = bit32(r1, 29);
	out->tables_preset = bit32(r1, 30);
	out->ecmdq = bit32(r1, 31);
	out->ba_vatos = (ik_u16)fld32(idr[2], 0, 10);
	r3 = idr[3];
	out->had = bit32(r3, 2);
	out->pbha = bit32(r3, 3);
	out->xnx = bit32(r3, 4);
	out->pps = bit32(r3, 5);
	out->mpam = bit32(r3, 7);
	out->fwb = bit32(r3, 8);
	out->stt = bit32(r3, 9);
	out->ril = bit32(r3, 10);
	out->bbml = (ik_u8)fld32(r3, 11, 2);
	out->e0pd = bit32(r3, 13);
	out->ptwnnc = bit32(r3, 14);
	r5 = idr[5];
	out->oas_enc = (ik_u8)fld32(r5, 0, 3);
	out->oas = oas_bits[out->oas_enc];
	out->gran4k = bit32(r5, 4);
	out->gran16k = bit32(r5, 5);
	out->gran64k = bit32(r5, 6);
	out->ds = bit32(r5, 7);
	out->vax = (ik_u8)fld32(r5, 10, 2);
	out->stall_max = (ik_u16)fld32(r5, 16, 16);
	out->implementer = (ik_u16)fld32(iidr, 0, 12);
	out->revision = (ik_u8)fld32(iidr, 12, 4);
	out->variant = (ik_u8)fld32(iidr, 16, 4);
	out->productid = (ik_u16)fld32(iidr, 20, 12);
	out->arch_minor = (ik_u8)fld32(aidr, 0, 4);
	out->arch_major = (ik_u8)fld32(aidr, 4, 4);
	return 0;
}

IK_API int ik_smmu_probe(const struct ik_mmio *m, struct ik_smmu_idr *out)
{
	ik_u32 idr[6];

	if (!m || !out || !m->read32)
		return -EINVAL;
	for (unsigned i = 0; i < 6; i++)
		idr[i] = ik_mmio_read32(m, IK_SMMU_IDR0 + 4 * i);
	return ik_smmu_idr_decode(idr, ik_mmio_read32(m, IK_SMMU_IIDR),
				  ik_mmio_read32(m, IK_SMMU_AIDR), out);
}

IK_API int ik_smmu_idr_usable(const struct ik_smmu_idr *id)
{
	if (!id)
		return -EINVAL;
	if (!(id->ttf & 2) || id->ttendian == 3 || id->ttendian == 1 || !id->oas ||
	    !(id->s1p || id->s2p) || !(id->gran4k || id->gran16k || id->gran64k) ||
	    id->cmdqs < IK_CMDQ_LOG2_MIN || id->eventqs < 2 || id->sidsize == 0)
		return -ENODEV;
	return 0;
}

IK_API bool ik_smmu_coherent(const struct ik_smmu_idr *id, const struct ik_dma_mem *dma)
{
	IK_ASSERT(id && dma);
	return id->cohacc && !dma->clean;
}

/* ---------------------------------------------------------------- LPAE register fields */

/* TCR_EL1 and VTCR_EL2 fields (Arm ARM), as ik_lpae_get_regs() writes them. */
#define DESC_TCR_T0SZ(v) fld64(v, 0, 6)
#define DESC_TCR_IRGN0(v) fld64(v, 8, 2)
#define DESC_TCR_ORGN0(v) fld64(v, 10, 2)
#define DESC_TCR_SH0(v) fld64(v, 12, 2)
#define DESC_TCR_TG0(v) fld64(v, 14, 2) /* 0 4K, 1 64K, 2 16K (VTCR: the same) */
#define DESC_TCR_IPS(v) fld64(v, 32, 3)
#define DESC_VTCR_SL0(v) fld64(v, 6, 2)
#define DESC_VTCR_PS(v) fld64(v, 16, 3)
#define DESC_VTCR_HA(v) fld64(v, 21, 1)
#define DESC_VTCR_HD(v) fld64(v, 22, 1)
#define DESC_TCR_DS(v) fld64(v, 59, 1)
#define DESC_VTCR_DS(v) fld64(v, 32, 1)

static bool gran_ok(const struct ik_smmu_idr *id, unsigned lg2)
{
	return (lg2 == 12 && id->gran4k) || (lg2 == 14 && id->gran16k) ||
	       (lg2 == 16 && id->gran64k);
}

/* addr (and so everything below it) fits an output size of `bits`. */
static bool fits(ik_u64 addr, unsigned bits)
{
	return bits >= 64 || !(addr >> bits);
}

/* ---------------------------------------------------------------- STE */

/* Word 1 */
#define STE1_S1DSS_SHIFT 0
#define STE1_S1CIR_SHIFT 2
#define STE1_S1COR_SHIFT 4
#define STE1_S1CSH_SHIFT 6
#define STE1_S1STALLD (1ull << 27)
#define STE1_EATS_SHIFT 28
#define STE1_STRW_SHIFT 30
#define STE1_SHCFG_SHIFT 44
#define STE1_SHCFG_INCOMING 1ull
/* Word 2 */
#define STE2_S2VMID_SHIFT 0
#define STE2_S2T0SZ_SHIFT 32
#define STE2_S2SL0_SHIFT 38
#define STE2_S2IR0_SHIFT 40
#define STE2_S2OR0_SHIFT 42
#define STE2_S2SH0_SHIFT 44
#define STE2_S2TG_SHIFT 46
#define STE2_S2PS_SHIFT 48
#define STE2_S2AA64 (1ull << 51)
#define STE2_S2PTW (1ull << 54)
#define STE2_S2HD (1ull << 55)
#define STE2_S2HA (1ull << 56)
#define STE2_S2R (1ull << 58)
/* Word 3 */
#define STE3_S2DS (1ull << 3)
#define STE3_S2TTB_MASK 0x000ffffffffffff0ull

static int ste_s1(const struct ik_smmu_idr *id, const struct ik_smmu_ste_config *c,
		  ik_u64 w[8])
{
	if (!id->s1p || c->s1_fmt > IK_SMMU_S1FMT_2LVL_64K ||
	    (c->s1_fmt != IK_SMMU_S1FMT_LINEAR && !id->cd2l) || c->s1_cdmax > id->ssidsize ||
	    c->s1_cdmax > 20 || c->s1_dss > IK_SMMU_S1DSS_SSID0 || c->s1_cir > 3 ||
	    c->s1_cor > 3 || c->s1_csh > 3 || c->s1_csh == 1 ||
	    !IK_IS_ALIGNED(c->s1_ctx_ptr, 64) || !fits(c->s1_ctx_ptr, id->oas) ||
	    (c->s1_stalld && id->stall_model != 0))
		return -EINVAL;
	/* A coherent CD fetch on an SMMU that cannot snoop. */
	if ((c->s1_cir || c->s1_cor) && !id->cohacc)
		return -EINVAL;
	w[0] |= (ik_u64)c->s1_fmt << IK_SMMU_STE_S1FMT_SHIFT |
		(c->s1_ctx_ptr & IK_SMMU_STE_S1CTXPTR_MASK) |
		(ik_u64)c->s1_cdmax << IK_SMMU_STE_S1CDMAX_SHIFT;
	w[1] |= (ik_u64)c->s1_dss << STE1_S1DSS_SHIFT | (ik_u64)c->s1_cir << STE1_S1CIR_SHIFT |
		(ik_u64)c->s1_cor << STE1_S1COR_SHIFT | (ik_u64)c->s1_csh << STE1_S1CSH_SHIFT |
		(c->s1_stalld ? STE1_S1STALLD : 0);
	return 0;
}

static int ste_s2(const struct ik_smmu_idr *id, const struct ik_smmu_ste_config *c,
		  ik_u64 w[8])
{
	struct ik_pgtable_info info;
	struct ik_lpae_regs r;
	ik_u64 vtcr;

	if (!id->s2p || !c->s2_pt)
		return -EINVAL;
	ik_pgtable_get_info(c->s2_pt, &info);
	if (info.geom.fmt != IK_PT_LPAE_S2 || ik_lpae_get_regs(c->s2_pt, &r))
		return -EINVAL;
	vtcr = r.vtcr;
	/* S2TTB holds the root address itself ([51:4]), not VTTBR's packing
	 * of BADDR[51:48] into [5:2]; HA/HD need HTTU with dirty state. */
	if (!gran_ok(id, info.geom.lg2_granule) || info.geom.oas > id->oas ||
	    info.geom.ias > id->oas || !fits(info.root_iommu, id->oas) ||
	    (DESC_TCR_IRGN0(vtcr) && !id->cohacc) || (DESC_VTCR_DS(vtcr) && !id->ds) ||
	    (DESC_VTCR_HD(vtcr) && id->httu != 2))
		return -EINVAL;
	w[2] |= DESC_TCR_T0SZ(vtcr) << STE2_S2T0SZ_SHIFT | DESC_VTCR_SL0(vtcr) << STE2_S2SL0_SHIFT |
		DESC_TCR_IRGN0(vtcr) << STE2_S2IR0_SHIFT | DESC_TCR_ORGN0(vtcr) << STE2_S2OR0_SHIFT |
		DESC_TCR_SH0(vtcr) << STE2_S2SH0_SHIFT | DESC_TCR_TG0(vtcr) << STE2_S2TG_SHIFT |
		DESC_VTCR_PS(vtcr) << STE2_S2PS_SHIFT | STE2_S2AA64 | STE2_S2R;
	if (DESC_VTCR_HA(vtcr))
		w[2] |= STE2_S2HA;
	if (DESC_VTCR_HD(vtcr))
		w[2] |= STE2_S2HD;
	if (c->config == IK_SMMU_STE_CFG_NESTED)
		w[2] |= STE2_S2PTW;
	w[3] = (info.root_iommu & STE3_S2TTB_MASK) | (DESC_VTCR_DS(vtcr) ? STE3_S2DS : 0);
	return 0;
}

IK_API int ik_smmu_ste_build(const struct ik_smmu_idr *id, const struct ik_smmu_ste_config *c,
			     ik_u64 ste[8])
{
	ik_u64 w[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	unsigned cfg;
	int err;

	if (!id || !c || !ste)
		return -EINVAL;
	cfg = c->config;
	if (cfg != IK_SMMU_STE_CFG_ABORT && cfg != IK_SMMU_STE_CFG_BYPASS &&
	    cfg != IK_SMMU_STE_CFG_S1 && cfg != IK_SMMU_STE_CFG_S2 && cfg != IK_SMMU_STE_CFG_NESTED)
		return -EINVAL;
	w[0] = IK_SMMU_STE_V | (ik_u64)cfg << IK_SMMU_STE_CFG_SHIFT;
	if (cfg == IK_SMMU_STE_CFG_ABORT)
		goto done;
	/* SHCFG is RES0 without IDR1.ATTR_TYPES_OVR (then "incoming" anyway). */
	if (id->attr_types_ovr)
		w[1] |= STE1_SHCFG_INCOMING << STE1_SHCFG_SHIFT;
	if (cfg == IK_SMMU_STE_CFG_BYPASS)
		goto done;
	if (c->s2_vmid > 0xff && !id->vmid16)
		return -EINVAL;
	if (c->s2_vmid && !id->s2p)
		return -EINVAL; /* no VMID without stage 2 */
	if (c->eats > IK_SMMU_EATS_S1CHK || (c->eats && !id->ats) ||
	    (c->eats == IK_SMMU_EATS_S1CHK && (cfg != IK_SMMU_STE_CFG_NESTED || id->ns1ats)))
		return -EINVAL;
	if ((c->strw != IK_SMMU_STRW_NSEL1 && c->strw != IK_SMMU_STRW_EL2) ||
	    (c->strw == IK_SMMU_STRW_EL2 && (!id->hyp || cfg != IK_SMMU_STE_CFG_S1)))
		return -EINVAL;
	w[1] |= (ik_u64)c->eats << STE1_EATS_SHIFT | (ik_u64)c->strw << STE1_STRW_SHIFT;
	w[2] |= (ik_u64)c->s2_vmid << STE2_S2VMID_SHIFT;
	if (cfg & 1) {
		err = ste_s1(id, c, w);
		if (err)
			return err;
	}
	if (cfg & 2) {
		err = ste_s2(id, c, w);
		if (err)
			return err;
	}
done:
	for (unsigned i = 0; i < 8; i++)
		ste[i] = w[i];
	return 0;
}

/* ---------------------------------------------------------------- CD */

IK_API int ik_smmu_cd_build(const struct ik_smmu_idr *id, const struct ik_smmu_cd_config *c,
			    ik_u64 cd[8])
{
	struct ik_pgtable_info info;
	struct ik_lpae_regs r;
	ik_u64 w0, tcr;
	bool dirty, stall;

	if (!id || !c || !cd || !c->pt || (c->flags & ~IK_SMMU_CD_FLAGS_ALL))
		return -EINVAL;
	ik_pgtable_get_info(c->pt, &info);
	if (info.geom.fmt != IK_PT_LPAE_S1 || ik_lpae_get_regs(c->pt, &r))
		return -EINVAL;
	tcr = r.tcr;
	dirty = info.geom.quirks & IK_PT_QUIRK_DIRTY;
	stall = c->flags & IK_SMMU_CD_STALL;
	if (!id->s1p || !gran_ok(id, info.geom.lg2_granule) || info.geom.oas > id->oas ||
	    !fits(info.root_iommu, id->oas) || (c->asid > 0xff && !id->asid16) ||
	    (info.geom.ias > 48 && !id->vax) || (DESC_TCR_DS(tcr) && !id->ds) ||
	    (dirty && id->httu != 2) || (DESC_TCR_IRGN0(tcr) && !id->cohacc) ||
	    (stall && id->stall_model != 0 && id->stall_model != 2) ||
	    (!stall && id->stall_model == 2) ||
	    ((c->flags & IK_SMMU_CD_TERM_RAZWI) && id->term_model))
		return -EINVAL;
	/* Every field placed at the CD's own position: TG0, EPD0/EPD1, HA/HD
	 * are not where TCR_EL1 has them. */
	w0 = DESC_TCR_T0SZ(tcr) << IK_SMMU_CD_T0SZ_SHIFT |
	     DESC_TCR_TG0(tcr) << IK_SMMU_CD_TG0_SHIFT |
	     DESC_TCR_IRGN0(tcr) << IK_SMMU_CD_IR0_SHIFT |
	     DESC_TCR_ORGN0(tcr) << IK_SMMU_CD_OR0_SHIFT |
	     DESC_TCR_SH0(tcr) << IK_SMMU_CD_SH0_SHIFT | IK_SMMU_CD_EPD1 | IK_SMMU_CD_V |
	     DESC_TCR_IPS(tcr) << IK_SMMU_CD_IPS_SHIFT | IK_SMMU_CD_AA64 |
	     (ik_u64)c->asid << IK_SMMU_CD_ASID_SHIFT;
	if (c->flags & IK_SMMU_CD_AFFD)
		w0 |= IK_SMMU_CD_AFFD_BIT;
	if (dirty)
		w0 |= IK_SMMU_CD_HA | IK_SMMU_CD_HD;
	if (stall)
		w0 |= IK_SMMU_CD_S;
	if (!(c->flags & IK_SMMU_CD_NO_RECORD))
		w0 |= IK_SMMU_CD_R;
	if (!(c->flags & IK_SMMU_CD_TERM_RAZWI))
		w0 |= IK_SMMU_CD_A;
	if (!(c->flags & IK_SMMU_CD_SHARED_ASID))
		w0 |= IK_SMMU_CD_ASET;
	cd[0] = w0;
	/* TTB0 is the root address itself ([51:4]), not TTBR's packing of
	 * BADDR[51:48] into [5:2]. */
	cd[1] = info.root_iommu & IK_SMMU_CD_TTB0_MASK;
	cd[2] = DESC_TCR_DS(tcr) ? IK_SMMU_CD_DS : 0; /* TTB1: EPD1 = 1 */
	cd[3] = r.mair;
	cd[4] = cd[5] = cd[6] = cd[7] = 0;
	return 0;
}

/* ---------------------------------------------------------------- events */

static const struct {
	ik_u8 type;
	ik_u8 shape;
	const char *name;
} evt_types[] = {
#define E_SID 0	   /* stream (and substream) only */
#define E_ADDR 1   /* + InputAddr, access bits */
#define E_FETCH 2  /* + FetchAddr */
#define E_WALK 3   /* + InputAddr, access bits, S2/Class, Stall/STAG, FetchAddr */
#define E_XLATE 4  /* + InputAddr, access bits, S2/Class, Stall/STAG, IPA */
	{ IK_SMMU_EVT_F_UUT, E_ADDR, "F_UUT" },
	{ IK_SMMU_EVT_C_BAD_STREAMID, E_SID, "C_BAD_STREAMID" },
	{ IK_SMMU_EVT_F_STE_FETCH, E_FETCH, "F_STE_FETCH" },
	{ IK_SMMU_EVT_C_BAD_STE, E_SID, "C_BAD_STE" },
	{ IK_SMMU_EVT_F_BAD_ATS_TREQ, E_ADDR, "F_BAD_ATS_TREQ" },
	{ IK_SMMU_EVT_F_STREAM_DISABLED, E_SID, "F_STREAM_DISABLED" },
	{ IK_SMMU_EVT_F_TRANSL_FORBIDDEN, E_ADDR, "F_TRANSL_FORBIDDEN" },
	{ IK_SMMU_EVT_C_BAD_SUBSTREAMID, E_SID, "C_BAD_SUBSTREAMID" },
	{ IK_SMMU_EVT_F_CD_FETCH, E_FETCH, "F_CD_FETCH" },
	{ IK_SMMU_EVT_C_BAD_CD, E_SID, "C_BAD_CD" },
	{ IK_SMMU_EVT_F_WALK_EABT, E_WALK, "F_WALK_EABT" },
	{ IK_SMMU_EVT_F_TRANSLATION, E_XLATE, "F_TRANSLATION" },
	{ IK_SMMU_EVT_F_ADDR_SIZE, E_XLATE, "F_ADDR_SIZE" },
	{ IK_SMMU_EVT_F_ACCESS, E_XLATE, "F_ACCESS" },
	{ IK_SMMU_EVT_F_PERMISSION, E_XLATE, "F_PERMISSION" },
	{ IK_SMMU_EVT_F_TLB_CONFLICT, E_ADDR, "F_TLB_CONFLICT" },
	{ IK_SMMU_EVT_F_CFG_CONFLICT, E_SID, "F_CFG_CONFLICT" },
	{ IK_SMMU_EVT_E_PAGE_REQUEST, E_ADDR, "E_PAGE_REQUEST" },
	{ IK_SMMU_EVT_F_VMS_FETCH, E_FETCH, "F_VMS_FETCH" },
};

static int evt_find(unsigned type)
{
	for (unsigned i = 0; i < IK_ARRAY_SIZE(evt_types); i++)
		if (evt_types[i].type == type)
			return (int)i;
	return -1;
}

IK_API const char *ik_smmu_event_name(unsigned type)
{
	int i = evt_find(type);

	if (i >= 0)
		return evt_types[i].name;
	return type >= 0xe0 && type <= 0xef ? "IMPDEF" : "UNKNOWN";
}

/* Record fields (over the 256-bit record). */
#define EVT1_STAG(w) fld64(w, 0, 16)
#define EVT1_STALL(w) fld64(w, 31, 1)
#define EVT1_PNU(w) fld64(w, 33, 1)
#define EVT1_IND(w) fld64(w, 34, 1)
#define EVT1_RNW(w) fld64(w, 35, 1)
#define EVT1_S2(w) fld64(w, 39, 1)
#define EVT1_CLASS(w) fld64(w, 40, 2)
#define EVT3_IPA_MASK 0x000ffffffffff000ull   /* [51:12] */
#define EVT3_FETCH_MASK 0x000ffffffffffff8ull /* [51:3] */

IK_API int ik_smmu_event_decode(const ik_u64 rec[4], struct ik_smmu_event *ev)
{
	int i;
	unsigned shape;

	if (!rec || !ev)
		return -EINVAL;
	IK_ENV_MEMSET(ev, 0, sizeof(*ev));
	for (unsigned k = 0; k < 4; k++)
		ev->raw[k] = rec[k];
	ev->type = (ik_u8)fld64(rec[0], 0, 8);
	ev->name = ik_smmu_event_name(ev->type);
	ev->ssv = fld64(rec[0], 11, 1);
	ev->ssid = (ik_u32)fld64(rec[0], 12, 20);
	ev->sid = (ik_u32)fld64(rec[0], 32, 32);
	i = evt_find(ev->type);
	if (i < 0)
		return 0;
	shape = evt_types[i].shape;
	if (shape == E_ADDR || shape == E_WALK || shape == E_XLATE) {
		ev->has_addr = true;
		ev->addr = rec[2];
		ev->rnw = EVT1_RNW(rec[1]);
		ev->ind = EVT1_IND(rec[1]);
		ev->pnu = EVT1_PNU(rec[1]);
	}
	if (shape == E_WALK || shape == E_XLATE) {
		ev->s2 = EVT1_S2(rec[1]);
		ev->cls = (ik_u8)EVT1_CLASS(rec[1]);
		ev->stall = EVT1_STALL(rec[1]);
		ev->stag = (ik_u16)EVT1_STAG(rec[1]);
	}
	if (shape == E_XLATE && ev->s2) {
		ev->has_ipa = true;
		ev->ipa = rec[3] & EVT3_IPA_MASK;
	}
	if (shape == E_FETCH || shape == E_WALK) {
		ev->has_fetch = true;
		ev->fetch_addr = rec[3] & EVT3_FETCH_MASK;
	}
	return 0;
}

/* ---------------------------------------------------------------- GERROR */

static const struct {
	ik_u32 bit;
	const char *name;
} gerr_names[] = {
	{ IK_SMMU_GERROR_CMDQ_ERR, "CMDQ_ERR" },
	{ IK_SMMU_GERROR_EVTQ_ABT_ERR, "EVTQ_ABT_ERR" },
	{ IK_SMMU_GERROR_PRIQ_ABT_ERR, "PRIQ_ABT_ERR" },
	{ IK_SMMU_GERROR_MSI_CMDQ_ABT_ERR, "MSI_CMDQ_ABT_ERR" },
	{ IK_SMMU_GERROR_MSI_EVTQ_ABT_ERR, "MSI_EVTQ_ABT_ERR" },
	{ IK_SMMU_GERROR_MSI_PRIQ_ABT_ERR, "MSI_PRIQ_ABT_ERR" },
	{ IK_SMMU_GERROR_MSI_GERROR_ABT_ERR, "MSI_GERROR_ABT_ERR" },
	{ IK_SMMU_GERROR_SFM_ERR, "SFM_ERR" },
};

IK_API const char *ik_smmu_gerror_name(ik_u32 bit)
{
	for (unsigned i = 0; i < IK_ARRAY_SIZE(gerr_names); i++)
		if (gerr_names[i].bit == bit)
			return gerr_names[i].name;
	return NULL;
}

IK_API int ik_smmu_gerror_decode(ik_u32 gerror, ik_u32 gerrorn, struct ik_smmu_gerror *out)
{
	ik_u32 a = gerror ^ gerrorn;

	if (!out)
		return -EINVAL;
	out->active = a;
	out->cmdq_err = a & IK_SMMU_GERROR_CMDQ_ERR;
	out->evtq_abt = a & IK_SMMU_GERROR_EVTQ_ABT_ERR;
	out->priq_abt = a & IK_SMMU_GERROR_PRIQ_ABT_ERR;
	out->msi_cmdq_abt = a & IK_SMMU_GERROR_MSI_CMDQ_ABT_ERR;
	out->msi_evtq_abt = a & IK_SMMU_GERROR_MSI_EVTQ_ABT_ERR;
	out->msi_priq_abt = a & IK_SMMU_GERROR_MSI_PRIQ_ABT_ERR;
	out->msi_gerror_abt = a & IK_SMMU_GERROR_MSI_GERROR_ABT_ERR;
	out->sfm = a & IK_SMMU_GERROR_SFM_ERR;
	return 0;
}
