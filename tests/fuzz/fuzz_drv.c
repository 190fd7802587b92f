/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fuzz_drv - the SMMUv3 and VT-d driver cores (include/iommukit/drv/) on
 * what a driver core is handed by hostile or careless parties: arbitrary
 * ID/capability registers, arbitrary configs, arbitrary records, arbitrary
 * gathers and ranges, and a register file that acknowledges wrongly or
 * never.
 *
 * Each operation of the input:
 *   - SMMU IDR decode of arbitrary words: the fields against bit positions
 *     written here from IHI 0070; ik_smmu_idr_usable() refuses what the
 *     header says it needs.
 *   - STE / CD builders with an arbitrary IDR and an arbitrary config (page
 *     tables from a pool of every granule, input and output size, walk
 *     coherency, dirty tracking and LPA2): a reference decides from the
 *     header's rules whether the config is legal; a refusal is -EINVAL with
 *     the output buffer byte for byte unchanged; an accepted config gives a
 *     descriptor whose every field reads back (and no bit outside the
 *     fields is set), and whose translation parameters, reassembled into
 *     TCR/VTCR, are accepted by ik_lpae_walker_from_regs() and describe the
 *     same table set (geometry and root).
 *   - event records, GERROR pairs, VT-d CAP/ECAP/VER, fault records and
 *     IQERCD of arbitrary bits: the decoders against positions written
 *     here; nothing is read out of bounds.
 *   - ik_smmu_plan_inv on arbitrary gathers (any start/end up to 2^64,
 *     granules, walk), targets and IDRs (RIL, ASID16/VMID16): refusals leave
 *     out[] untouched and happen exactly where the header says; a plan ends
 *     with one CMD_SYNC, every command encodes and round-trips, carries the
 *     target's tags, and the TLBIs cover the gather's range (or a
 *     whole-context fallback is used); nested adds TLBI_NH_ALL.
 *   - ik_vtd_plan_unmap/_range/_map/_change with arbitrary capabilities,
 *     targets and ranges: refusals leave the plan untouched; every
 *     descriptor encodes in the mode's width, round-trips, passes
 *     ik_vtd_desc_validate() with the unit's rules, is tagged right, and
 *     the page-selective blocks (IOTLB and device-TLB) hold the range.
 *   - the SMMUv3 and VT-d objects against a register model whose ID
 *     registers are arbitrary and whose acknowledgements (CR0ACK, GBPA,
 *     IRQ_CTRLACK, CMDQ_CONS, GERROR; GSTS, IQH, FSTS, fault records) are
 *     right, late, never, or garbage, with allocation failures injected:
 *     every call ends (bounded waits) with 0 or a documented errno; a
 *     successful bring-up left the unit enabled as documented; after
 *     destroy nothing is left allocated (bookkeeping and DMA memory),
 *     except what VT-d documents it leaks from a unit that would not let go.
 *   - AMD: the ACPI IVRS parser on hostile tables (raw bytes, or a well
 *     formed table with a few bytes changed and the checksum repaired),
 *     read from a heap copy of exactly its length (ASan sees any read
 *     beyond): -EINVAL leaves the output and its arrays byte for byte
 *     unchanged, success gives ranges with first <= last naming a unit that
 *     exists and counts no smaller than what was filled; event and PPR
 *     records and the EFR of arbitrary bits decode as the header says
 *     (undefined codes refused, fields only for the codes that define
 *     them).
 */
#include <iommukit/drv/smmuv3.h>
#include <iommukit/drv/vtd.h>
#include <iommukit/drv/amd.h>
#include <iommukit/fmt/lpae.h>
#include <iommukit/fmt/vtd.h>
#include "fuzzlib.h"

#define BIT(n) (1ull << (n))
#define GENMASK(h, l) ((~0ull >> (63 - (h))) & ~((1ull << (l)) - 1))
#define FLD(v, h, l) (((ik_u64)(v) & GENMASK(h, l)) >> (l))

typedef unsigned __int128 u128;

/* ================================================================ page-table pool */

/*
 * Table sets are immutable here (nothing is mapped), so one pool serves
 * every input.  LPAE: fmt x granule x ias x oas x coherent x dirty x LPA2;
 * roots at made-up IOMMU addresses near the top of the oas (hooks), so
 * that "root beyond the SMMU's OAS" is reachable.
 */
static const unsigned pool_ias[] = { 32, 40, 48, 52 };
static const unsigned pool_oas[] = { 32, 40, 48, 52 };
#define LPAE_POOL (2 * 3 * 4 * 4 * 2 * 2 * 2)
static struct ik_pgtable *lpae_pool[LPAE_POOL];
static bool lpae_tried[LPAE_POOL];
static uint64_t fake_seq;

static void *fake_alloc_table(void *cookie, ik_size size, ik_u64 *iommu)
{
	unsigned oas = (unsigned)(uintptr_t)cookie;
	void *p = aligned_alloc(size < 64 ? 64 : size, size < 64 ? 64 : size);

	if (!p)
		return NULL;
	/* Below 2^oas, aligned to 1 MiB (every root and table size). */
	*iommu = (1ull << (oas - 1)) | ((++fake_seq & 0x3f) << 20);
	return p;
}

static void fake_free_table(void *cookie, void *cpu, ik_u64 iommu, ik_size size)
{
	(void)cookie;
	(void)iommu;
	(void)size;
	free(cpu);
}

static const struct ik_pgtable_hooks fake_hooks = { .alloc_table = fake_alloc_table,
						    .free_table = fake_free_table };

/* Table set `k` of the LPAE pool, or NULL where the library refuses that
 * config. */
static struct ik_pgtable *lpae_pt(unsigned k)
{
	unsigned i = k % LPAE_POOL, x = i;
	unsigned fmt = x % 2, g = (x / 2) % 3, ias = (x / 6) % 4, oas = (x / 24) % 4;
	bool coh = (x / 96) % 2, dirty = (x / 192) % 2, lpa2 = (x / 384) % 2;
	struct ik_pgtable_cfg pc;

	if (lpae_tried[i])
		return lpae_pool[i];
	lpae_tried[i] = true;
	memset(&pc, 0, sizeof(pc));
	pc.fmt = fmt ? IK_PT_LPAE_S2 : IK_PT_LPAE_S1;
	pc.ias = pool_ias[ias];
	pc.oas = pool_oas[oas];
	pc.pgsize_bitmap = g == 0 ? (BIT(12) | BIT(21) | BIT(30)) :
			   g == 1 ? (BIT(14) | BIT(25)) : (BIT(16) | BIT(29));
	pc.coherent = coh;
	pc.quirks = dirty ? IK_PT_QUIRK_DIRTY : 0;
	pc.fmt_flags = lpa2 ? IK_LPAE_FLAG_LPA2 : 0;
	pc.hooks = &fake_hooks;
	pc.cookie = (void *)(uintptr_t)pool_oas[oas];
	if (ik_pgtable_create(&pc, &lpae_pool[i]))
		lpae_pool[i] = NULL;
	return lpae_pool[i];
}

/* A VT-d table set: second-level 39/48 bits, first-level 48 bits. */
#define VTD_POOL 3
static struct ik_pgtable *vtd_pool[VTD_POOL];
static bool vtd_tried[VTD_POOL];

static struct ik_pgtable *vtd_pt(unsigned k)
{
	struct ik_pgtable_cfg pc;

	k %= VTD_POOL;
	if (vtd_tried[k])
		return vtd_pool[k];
	vtd_tried[k] = true;
	memset(&pc, 0, sizeof(pc));
	pc.fmt = k == 2 ? IK_PT_VTD_FL : IK_PT_VTD_SL;
	pc.ias = k == 0 ? 39 : 48;
	pc.oas = 48;
	pc.pgsize_bitmap = BIT(12) | BIT(21) | BIT(30);
	if (ik_pgtable_create(&pc, &vtd_pool[k]))
		vtd_pool[k] = NULL;
	return vtd_pool[k];
}

/* ================================================================ SMMU ID registers */

/* A capable SMMU (IHI 0070 bit positions): S1P, S2P, TTF AArch64, COHACC,
 * HTTU 2, HYP, ATS, ASID16, VMID16, CD2L, TTENDIAN LE, STALL_MODEL 0,
 * 2-level stream table; SIDSIZE 16, SSIDSIZE 10, EVENTQS/CMDQS 19,
 * ATTR_TYPES_OVR; RIL; OAS 48, every granule, VAX, DS. */
static void idr_good(uint32_t idr[6])
{
	memset(idr, 0, 6 * sizeof(*idr));
	idr[0] = 1u << 0 | 1u << 1 | 2u << 2 | 1u << 4 | 2u << 6 | 1u << 9 | 1u << 10 |
		 1u << 12 | 1u << 18 | 1u << 19 | 2u << 21 | 1u << 27;
	idr[1] = 16u << 0 | 10u << 6 | 19u << 16 | 19u << 21 | 1u << 27;
	idr[3] = 1u << 10;
	idr[5] = 5u << 0 | 1u << 4 | 1u << 5 | 1u << 6 | 1u << 10;
}

/* An IDR from the input: the capable one with bits flipped, or arbitrary. */
static void idr_from(struct fz *f, uint32_t idr[6])
{
	uint8_t mode = fz_u8(f);

	idr_good(idr);
	if (mode & 1) {
		for (unsigned i = 0; i < 6; i++)
			idr[i] = fz_u32(f);
	} else {
		unsigned flips = (mode >> 1) & 7;

		for (unsigned i = 0; i < flips; i++) {
			uint8_t b = fz_u8(f);

			idr[(b >> 5) % 6] ^= 1u << (b & 31);
		}
		/* The OAS is what bounds addresses: pick it outright. */
		if (mode & 0x10)
			idr[5] = (idr[5] & ~7u) | (fz_u8(f) & 7u);
	}
}

/* ID registers from the input (idr_from()), decoded into *id; a set the
 * decoder refuses leaves *id as the decoder leaves it. */
static void idr_decoded(struct fz *f, struct ik_smmu_idr *id)
{
	uint32_t raw[6];

	idr_from(f, raw);
	(void)ik_smmu_idr_decode(raw, 0, 0, id);
}

static const unsigned oas_bits[8] = { 32, 36, 40, 42, 44, 48, 52, 0 };

static void op_idr(struct fz *f)
{
	uint32_t idr[6], iidr, aidr;
	struct ik_smmu_idr id;
	int usable;
	bool need;

	idr_from(f, idr);
	iidr = fz_u32(f);
	aidr = fz_u32(f);
	FZ_CHECK(ik_smmu_idr_decode(idr, iidr, aidr, &id) == 0, "idr_decode refused");
	for (unsigned i = 0; i < 6; i++)
		FZ_CHECK(id.raw[i] == idr[i], "idr raw[%u]", i);
	FZ_CHECK(id.iidr == iidr && id.aidr == aidr, "iidr/aidr");
	FZ_CHECK(id.s2p == FLD(idr[0], 0, 0) && id.s1p == FLD(idr[0], 1, 1) &&
			 id.ttf == FLD(idr[0], 3, 2) && id.cohacc == FLD(idr[0], 4, 4) &&
			 id.httu == FLD(idr[0], 7, 6) && id.hyp == FLD(idr[0], 9, 9) &&
			 id.ats == FLD(idr[0], 10, 10) && id.asid16 == FLD(idr[0], 12, 12) &&
			 id.vmid16 == FLD(idr[0], 18, 18) && id.cd2l == FLD(idr[0], 19, 19) &&
			 id.ttendian == FLD(idr[0], 22, 21) &&
			 id.stall_model == FLD(idr[0], 25, 24) &&
			 id.term_model == FLD(idr[0], 26, 26) &&
			 id.st_level == FLD(idr[0], 28, 27),
		 "IDR0 %#x decoded wrong", idr[0]);
	FZ_CHECK(id.sidsize == FLD(idr[1], 5, 0) && id.ssidsize == FLD(idr[1], 10, 6) &&
			 id.priqs == FLD(idr[1], 15, 11) && id.eventqs == FLD(idr[1], 20, 16) &&
			 id.cmdqs == FLD(idr[1], 25, 21) &&
			 id.attr_types_ovr == FLD(idr[1], 27, 27),
		 "IDR1 %#x decoded wrong", idr[1]);
	FZ_CHECK(id.ril == FLD(idr[3], 10, 10), "IDR3.RIL");
	FZ_CHECK(id.oas_enc == FLD(idr[5], 2, 0) && id.oas == oas_bits[idr[5] & 7] &&
			 id.gran4k == FLD(idr[5], 4, 4) && id.gran16k == FLD(idr[5], 5, 5) &&
			 id.gran64k == FLD(idr[5], 6, 6) && id.vax == FLD(idr[5], 11, 10) &&
			 id.stall_max == FLD(idr[5], 31, 16),
		 "IDR5 %#x decoded wrong", idr[5]);
	usable = ik_smmu_idr_usable(&id);
	FZ_CHECK(usable == 0 || usable == -ENODEV, "idr_usable returned %d", usable);
	need = (id.ttf & 2) && id.ttendian != 3 && id.oas && (id.s1p || id.s2p) &&
	       (id.gran4k || id.gran16k || id.gran64k) && id.cmdqs >= IK_CMDQ_LOG2_MIN && id.eventqs >= 2 && id.sidsize > 0;
	if (!need)
		FZ_CHECK(usable == -ENODEV, "idr_usable accepted an SMMU it cannot drive");
	else if (id.ttendian != 1)
		FZ_CHECK(usable == 0, "idr_usable refused a usable SMMU");
}

/* ================================================================ STE */

#define PATTERN 0xa5a5a5a5a5a5a5a5ull

static void fill(ik_u64 *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		w[i] = PATTERN ^ i;
}

static bool untouched(const ik_u64 *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (w[i] != (PATTERN ^ i))
			return false;
	return true;
}

static bool fits(uint64_t addr, unsigned bits)
{
	return bits >= 64 || !(addr >> bits);
}

static bool gran_ok(const struct ik_smmu_idr *id, unsigned lg2)
{
	return (lg2 == 12 && id->gran4k) || (lg2 == 14 && id->gran16k) ||
	       (lg2 == 16 && id->gran64k);
}

/* The table set a walker from the reassembled registers describes is the
 * pool's: same geometry where the hardware derives it, same root. */
static void same_walk(const struct ik_pgtable *pt, unsigned stage, ik_u64 tcr, ik_u64 root,
		      const char *what)
{
	struct ik_pgtable_info info;
	struct ik_pt_walker w;
	int r;

	ik_pgtable_get_info(pt, &info);
	r = ik_lpae_walker_from_regs(&w, stage, tcr, ik_lpae_ttbr_from_addr(root),
				     info.geom.quirks & IK_PT_QUIRK_DIRTY);
	FZ_CHECK(r == 0, "%s: the library's walker refuses the descriptor's registers (%d, tcr %#llx)",
		 what, r, (unsigned long long)tcr);
	FZ_CHECK(w.geom.lg2_granule == info.geom.lg2_granule && w.geom.ias == info.geom.ias &&
			 w.geom.nlevels == info.geom.nlevels &&
			 w.geom.hw_start_level == info.geom.hw_start_level,
		 "%s: the descriptor describes another table set (granule %u/%u ias %u/%u levels %u/%u)",
		 what, w.geom.lg2_granule, info.geom.lg2_granule, w.geom.ias, info.geom.ias,
		 w.geom.nlevels, info.geom.nlevels);
	FZ_CHECK(w.root == info.root_iommu, "%s: root %#llx, the table set's %#llx", what,
		 (unsigned long long)w.root, (unsigned long long)info.root_iommu);
}

static void op_ste(struct fz *f)
{
	struct ik_smmu_idr id;
	struct ik_smmu_ste_config c;
	struct ik_pgtable_info info;
	struct ik_lpae_regs lr;
	const struct ik_pgtable *pt = NULL;
	ik_u64 ste[8], vtcr = 0;
	static const unsigned cfgs[8] = { 0, 4, 5, 6, 7, 1, 3, 8 };
	bool ok = true, s1, s2;
	uint8_t k;
	int r;

	idr_decoded(f, &id);
	memset(&c, 0, sizeof(c));
	k = fz_u8(f);
	c.config = (k & 0x80) ? fz_u32(f) : cfgs[k & 7];
	k = fz_u8(f);
	c.s1_ctx_ptr = (k & 1) ? fz_edgy(f) : (fz_u64(f) & GENMASK(47, 6));
	c.s1_fmt = fz_u8(f) % 5;
	c.s1_cdmax = fz_u8(f) % 24;
	c.s1_dss = fz_u8(f) % 4;
	k = fz_u8(f);
	c.s1_cir = (k & 0x80) ? k & 7 : 0;
	c.s1_cor = (k & 0x40) ? (k >> 3) & 7 : 0;
	k = fz_u8(f);
	c.s1_csh = k & 0x80 ? k & 7 : 3;
	c.s1_stalld = (k >> 3) & 1;
	k = fz_u8(f);
	if (k & 1)
		pt = c.s2_pt = lpae_pt(fz_u16(f));
	c.s2_vmid = (k & 2) ? fz_u16(f) : 0;
	k = fz_u8(f);
	c.eats = (k & 0x80) ? k & 3 : 0;
	c.strw = (k & 0x40) ? (k >> 2) & 3 : 0;

	/* The reference: the header's rules. */
	if (c.config != 0 && c.config != 4 && c.config != 5 && c.config != 6 && c.config != 7)
		ok = false;
	s1 = c.config == 5 || c.config == 7;
	s2 = c.config == 6 || c.config == 7;
	if (ok && (s1 || s2)) {
		if ((c.s2_vmid > 0xff && !id.vmid16) || (c.s2_vmid && !id.s2p))
			ok = false;
		if (c.eats > 2 || (c.eats && !id.ats) ||
		    (c.eats == 2 && (c.config != 7 || id.ns1ats)))
			ok = false;
		if ((c.strw != 0 && c.strw != 2) || (c.strw == 2 && (!id.hyp || c.config != 5)))
			ok = false;
	}
	if (ok && s1) {
		if (!id.s1p || c.s1_fmt > 2 || (c.s1_fmt && !id.cd2l) ||
		    c.s1_cdmax > id.ssidsize || c.s1_cdmax > 20 || c.s1_dss > 2 ||
		    c.s1_cir > 3 || c.s1_cor > 3 || c.s1_csh > 3 || c.s1_csh == 1 ||
		    (c.s1_ctx_ptr & 63) || !fits(c.s1_ctx_ptr, id.oas) ||
		    (c.s1_stalld && id.stall_model != 0) || ((c.s1_cir || c.s1_cor) && !id.cohacc))
			ok = false;
	}
	if (ok && s2) {
		if (!id.s2p || !pt) {
			ok = false;
		} else {
			ik_pgtable_get_info(pt, &info);
			FZ_CHECK(ik_lpae_get_regs(pt, &lr) == 0, "lpae_get_regs");
			vtcr = lr.vtcr;
			if (info.geom.fmt != IK_PT_LPAE_S2 || !gran_ok(&id, info.geom.lg2_granule) ||
			    info.geom.oas > id.oas || info.geom.ias > id.oas ||
			    !fits(info.root_iommu, id.oas) || (FLD(vtcr, 9, 8) && !id.cohacc) ||
			    (FLD(vtcr, 32, 32) && !id.ds) || (FLD(vtcr, 22, 22) && id.httu != 2))
				ok = false;
		}
	}

	fill(ste, 8);
	r = ik_smmu_ste_build(&id, &c, ste);
	FZ_TRACE("ste config %u -> %d (reference %s)", c.config, r, ok ? "accept" : "refuse");
	if (r) {
		FZ_CHECK(r == -EINVAL, "ste_build returned %d", r);
		FZ_CHECK(untouched(ste, 8), "ste_build failed but wrote the STE");
		FZ_CHECK(!ok, "ste_build refused a legal config (config %u)", c.config);
		return;
	}
	FZ_CHECK(ok, "ste_build accepted an illegal config (config %u)", c.config);
	/* Every field back, nothing else set. */
	FZ_CHECK((ste[0] & 1) && FLD(ste[0], 3, 1) == c.config, "STE V/Config");
	for (unsigned i = 4; i < 8; i++)
		FZ_CHECK(ste[i] == 0, "STE word %u not zero", i);
	if (c.config == 0 || c.config == 4) {
		FZ_CHECK((ste[0] & ~GENMASK(3, 0)) == 0 && ste[2] == 0 && ste[3] == 0,
			 "abort/bypass STE with other fields");
		FZ_CHECK(ste[1] == (c.config == 4 && id.attr_types_ovr ? 1ull << 44 : 0),
			 "abort/bypass STE word 1 %#llx", (unsigned long long)ste[1]);
		return;
	}
	FZ_CHECK(FLD(ste[1], 29, 28) == c.eats && FLD(ste[1], 31, 30) == c.strw &&
			 FLD(ste[1], 45, 44) == (id.attr_types_ovr ? 1u : 0u),
		 "STE EATS/STRW/SHCFG");
	FZ_CHECK(FLD(ste[2], 15, 0) == c.s2_vmid, "STE S2VMID");
	if (s1) {
		FZ_CHECK(FLD(ste[0], 5, 4) == c.s1_fmt &&
				 (ste[0] & GENMASK(51, 6)) == c.s1_ctx_ptr &&
				 FLD(ste[0], 63, 59) == c.s1_cdmax,
			 "STE S1Fmt/S1ContextPtr/S1CDMax");
		FZ_CHECK(FLD(ste[1], 1, 0) == c.s1_dss && FLD(ste[1], 3, 2) == c.s1_cir &&
				 FLD(ste[1], 5, 4) == c.s1_cor && FLD(ste[1], 7, 6) == c.s1_csh &&
				 FLD(ste[1], 27, 27) == c.s1_stalld,
			 "STE S1DSS/S1CIR/S1COR/S1CSH/S1STALLD");
	} else {
		FZ_CHECK((ste[0] & ~GENMASK(3, 0)) == 0 && (ste[1] & GENMASK(27, 0)) == 0,
			 "stage-2 STE with stage-1 fields");
	}
	FZ_CHECK((ste[0] & ~(GENMASK(5, 0) | GENMASK(51, 6) | GENMASK(63, 59))) == 0,
		 "STE word 0 bits outside the fields");
	FZ_CHECK((ste[1] & ~(GENMASK(7, 0) | BIT(27) | GENMASK(31, 28) | GENMASK(45, 44))) == 0,
		 "STE word 1 bits outside the fields: %#llx", (unsigned long long)ste[1]);
	if (s2) {
		ik_u64 t;

		/* VTCR back from S2T0SZ, S2SL0, S2IR0/OR0/SH0, S2TG, S2PS, S2HA/HD,
		 * S2DS. */
		t = FLD(ste[2], 37, 32) | FLD(ste[2], 39, 38) << 6 | FLD(ste[2], 41, 40) << 8 |
		    FLD(ste[2], 43, 42) << 10 | FLD(ste[2], 45, 44) << 12 |
		    FLD(ste[2], 47, 46) << 14 | FLD(ste[2], 50, 48) << 16 |
		    FLD(ste[2], 56, 56) << 21 | FLD(ste[2], 55, 55) << 22 |
		    FLD(ste[3], 3, 3) << 32;
		/* VTCR.SL2 (bit 33) is not an STE field: keep the table set's. */
		t |= vtcr & BIT(33);
		FZ_CHECK((ste[2] & BIT(51)) && (ste[2] & BIT(58)), "S2AA64/S2R");
		FZ_CHECK(FLD(ste[2], 54, 54) == (c.config == 7), "S2PTW");
		FZ_CHECK(FLD(ste[2], 56, 55) == (FLD(vtcr, 21, 21) | FLD(vtcr, 22, 22) << 1),
			 "S2HA/S2HD");
		FZ_CHECK((t & ~BIT(33)) == (vtcr & (GENMASK(22, 21) | GENMASK(18, 0) | BIT(32))),
			 "STE stage-2 fields %#llx, the table set's VTCR %#llx",
			 (unsigned long long)t, (unsigned long long)vtcr);
		FZ_CHECK((ste[3] & ~(GENMASK(51, 4) | BIT(3))) == 0, "STE word 3 bits outside");
		same_walk(pt, 2, t, ste[3] & GENMASK(51, 4), "STE");
	} else {
		FZ_CHECK((ste[2] & ~GENMASK(15, 0)) == 0 && ste[3] == 0,
			 "stage-1 STE with stage-2 fields");
	}
}

/* ================================================================ CD */

static void op_cd(struct fz *f)
{
	struct ik_smmu_idr id;
	struct ik_smmu_cd_config c;
	struct ik_pgtable_info info;
	struct ik_lpae_regs lr;
	ik_u64 cd[8], tcr, t;
	bool ok = true, dirty, stall;
	uint8_t k;
	int r;

	idr_decoded(f, &id);
	memset(&c, 0, sizeof(c));
	k = fz_u8(f);
	c.pt = (k & 0x80) ? NULL : lpae_pt(fz_u16(f));
	c.asid = (k & 1) ? fz_u16(f) : fz_u8(f);
	c.flags = (k & 2) ? fz_u32(f) : fz_u8(f) & IK_SMMU_CD_FLAGS_ALL;

	if (!c.pt || (c.flags & ~IK_SMMU_CD_FLAGS_ALL)) {
		ok = false;
	} else {
		ik_pgtable_get_info(c.pt, &info);
		FZ_CHECK(ik_lpae_get_regs(c.pt, &lr) == 0, "lpae_get_regs");
		tcr = lr.tcr;
		dirty = info.geom.quirks & IK_PT_QUIRK_DIRTY;
		stall = c.flags & IK_SMMU_CD_STALL;
		if (info.geom.fmt != IK_PT_LPAE_S1 || !id.s1p ||
		    !gran_ok(&id, info.geom.lg2_granule) || info.geom.oas > id.oas ||
		    !fits(info.root_iommu, id.oas) || (c.asid > 0xff && !id.asid16) ||
		    (info.geom.ias > 48 && !id.vax) || (FLD(tcr, 59, 59) && !id.ds) ||
		    (dirty && id.httu != 2) || (FLD(tcr, 9, 8) && !id.cohacc) ||
		    (stall && id.stall_model != 0 && id.stall_model != 2) ||
		    (!stall && id.stall_model == 2) ||
		    ((c.flags & IK_SMMU_CD_TERM_RAZWI) && id.term_model))
			ok = false;
	}
	fill(cd, 8);
	r = ik_smmu_cd_build(&id, &c, cd);
	FZ_TRACE("cd flags %#x asid %u -> %d (reference %s)", c.flags, c.asid, r,
		 ok ? "accept" : "refuse");
	if (r) {
		FZ_CHECK(r == -EINVAL, "cd_build returned %d", r);
		FZ_CHECK(untouched(cd, 8), "cd_build failed but wrote the CD");
		FZ_CHECK(!ok, "cd_build refused a legal config");
		return;
	}
	FZ_CHECK(ok, "cd_build accepted an illegal config (flags %#x asid %#x)", c.flags, c.asid);
	FZ_CHECK((cd[0] & IK_SMMU_CD_V) && (cd[0] & IK_SMMU_CD_AA64) && (cd[0] & IK_SMMU_CD_EPD1) &&
			 !(cd[0] & IK_SMMU_CD_EPD0) && !(cd[0] & IK_SMMU_CD_ENDI),
		 "CD V/AA64/EPD0/EPD1/ENDI");
	FZ_CHECK(FLD(cd[0], 63, 48) == c.asid, "CD ASID");
	FZ_CHECK(!!(cd[0] & IK_SMMU_CD_S) == !!(c.flags & IK_SMMU_CD_STALL) &&
			 !!(cd[0] & IK_SMMU_CD_AFFD_BIT) == !!(c.flags & IK_SMMU_CD_AFFD) &&
			 !(cd[0] & IK_SMMU_CD_ASET) == !!(c.flags & IK_SMMU_CD_SHARED_ASID) &&
			 !(cd[0] & IK_SMMU_CD_R) == !!(c.flags & IK_SMMU_CD_NO_RECORD) &&
			 !(cd[0] & IK_SMMU_CD_A) == !!(c.flags & IK_SMMU_CD_TERM_RAZWI),
		 "CD flags");
	FZ_CHECK(!!(cd[0] & IK_SMMU_CD_HA) == dirty && !!(cd[0] & IK_SMMU_CD_HD) == dirty,
		 "CD HA/HD");
	FZ_CHECK((cd[0] & (GENMASK(29, 16) | GENMASK(40, 36))) == 0, "CD word 0 bits outside");
	FZ_CHECK((cd[1] & ~GENMASK(51, 4)) == 0, "CD word 1 bits outside");
	FZ_CHECK((cd[2] & ~IK_SMMU_CD_DS) == 0, "CD word 2 bits outside");
	FZ_CHECK(cd[3] == lr.mair, "CD MAIR");
	for (unsigned i = 4; i < 8; i++)
		FZ_CHECK(cd[i] == 0, "CD word %u not zero", i);
	/* TCR back from T0SZ, TG0, IR0, OR0, SH0, IPS, HA/HD, DS, EPD1. */
	t = FLD(cd[0], 5, 0) | FLD(cd[0], 9, 8) << 8 | FLD(cd[0], 11, 10) << 10 |
	    FLD(cd[0], 13, 12) << 12 | FLD(cd[0], 7, 6) << 14 | BIT(23) |
	    FLD(cd[0], 34, 32) << 32 | FLD(cd[0], 43, 43) << 39 | FLD(cd[0], 42, 42) << 40 |
	    FLD(cd[2], 58, 58) << 59;
	FZ_CHECK((t & (GENMASK(15, 0) | GENMASK(34, 32) | BIT(59))) ==
			 (tcr & (GENMASK(15, 0) | GENMASK(34, 32) | BIT(59))),
		 "CD translation fields %#llx, the table set's TCR %#llx", (unsigned long long)t,
		 (unsigned long long)tcr);
	same_walk(c.pt, 1, t, cd[1] & GENMASK(51, 4), "CD");
}

/* ================================================================ records */

static void op_records(struct fz *f)
{
	ik_u64 rec[4], fr[2];
	struct ik_smmu_event ev;
	struct ik_smmu_gerror ge;
	struct ik_vtd_fault vf;
	struct ik_vtd_iqerr qe;
	struct ik_vtd_hwcaps hc;
	uint32_t g, gn, ver;
	ik_u64 cap, ecap, iq;
	int r;

	for (unsigned i = 0; i < 4; i++)
		rec[i] = fz_u64(f);
	if (fz_bool(f))
		rec[0] = (rec[0] & ~0xffull) | (fz_u8(f) % 0x26);
	FZ_CHECK(ik_smmu_event_decode(rec, &ev) == 0, "event_decode refused");
	FZ_CHECK(ev.type == (rec[0] & 0xff) && ev.sid == (rec[0] >> 32) &&
			 ev.ssv == FLD(rec[0], 11, 11),
		 "event type/sid/ssv");
	if (ev.ssv)
		FZ_CHECK(ev.ssid == FLD(rec[0], 31, 12), "event ssid");
	FZ_CHECK(ev.name && ev.name == ik_smmu_event_name(ev.type) && strlen(ev.name) > 0,
		 "event name");
	FZ_CHECK(!memcmp(ev.raw, rec, sizeof(rec)), "event raw");
	if (ev.has_addr)
		FZ_CHECK(ev.addr == rec[2] && ev.rnw == FLD(rec[1], 35, 35) &&
				 ev.ind == FLD(rec[1], 34, 34) && ev.pnu == FLD(rec[1], 33, 33),
			 "event InputAddr/RnW/InD/PnU");
	if (ev.has_ipa)
		FZ_CHECK(ev.s2 && ev.ipa == (rec[3] & GENMASK(51, 12)), "event IPA");
	if (ev.has_fetch)
		FZ_CHECK(ev.fetch_addr == (rec[3] & GENMASK(51, 3)), "event FetchAddr");
	if (ev.type == IK_SMMU_EVT_F_TRANSLATION || ev.type == IK_SMMU_EVT_F_PERMISSION)
		FZ_CHECK(ev.has_addr && ev.s2 == FLD(rec[1], 39, 39) &&
				 ev.cls == FLD(rec[1], 41, 40) && ev.stall == FLD(rec[1], 31, 31) &&
				 ev.stag == FLD(rec[1], 15, 0) && ev.has_ipa == ev.s2,
			 "translation fault fields");
	if (ev.type == IK_SMMU_EVT_C_BAD_STE || ev.type == IK_SMMU_EVT_C_BAD_STREAMID)
		FZ_CHECK(!ev.has_addr && !ev.has_ipa && !ev.has_fetch, "config error with addresses");

	g = fz_u32(f);
	gn = fz_bool(f) ? g ^ (1u << (fz_u8(f) & 31)) : fz_u32(f);
	FZ_CHECK(ik_smmu_gerror_decode(g, gn, &ge) == 0, "gerror_decode");
	FZ_CHECK(ge.active == (g ^ gn) && ge.cmdq_err == !!((g ^ gn) & 1) &&
			 ge.sfm == !!((g ^ gn) & BIT(8)) && ge.evtq_abt == !!((g ^ gn) & BIT(2)),
		 "gerror fields");
	for (unsigned b = 0; b < 32; b++) {
		const char *n = ik_smmu_gerror_name(1u << b);

		FZ_CHECK(!n == !((0x1fdu >> b) & 1), "gerror_name of bit %u", b);
	}

	/* VT-d: fault record, IQERCD, capabilities. */
	fr[0] = fz_u64(f);
	fr[1] = fz_u64(f);
	r = ik_vtd_fault_decode(fr, &vf);
	if (!(fr[1] & BIT(63))) {
		struct ik_vtd_fault z;

		memset(&z, 0, sizeof(z));
		FZ_CHECK(r == -ENOENT && !memcmp(&vf, &z, sizeof(z)), "fault_decode without F");
	} else {
		FZ_CHECK(r == 0, "fault_decode %d", r);
		FZ_CHECK(vf.addr == (fr[0] & ~0xfffull) && vf.sid == FLD(fr[1], 15, 0) &&
				 vf.t2 == FLD(fr[1], 28, 28) && vf.priv == FLD(fr[1], 29, 29) &&
				 vf.exe == FLD(fr[1], 30, 30) && vf.pp == FLD(fr[1], 31, 31) &&
				 vf.reason == FLD(fr[1], 39, 32) && vf.pasid == FLD(fr[1], 59, 40) &&
				 vf.at == FLD(fr[1], 61, 60) && vf.write == !FLD(fr[1], 62, 62),
			 "fault record decoded wrong");
		(void)ik_vtd_fault_reason_name(vf.reason);
	}
	iq = fz_u64(f);
	FZ_CHECK(ik_vtd_iqercd_decode(iq, &qe) == 0 && qe.iqei == (iq & 0xf) &&
			 qe.itesid == FLD(iq, 47, 32) && qe.icesid == FLD(iq, 63, 48),
		 "iqercd");
	(void)ik_vtd_iqei_name(qe.iqei);
	ver = fz_u32(f);
	cap = fz_u64(f);
	ecap = fz_u64(f);
	FZ_CHECK(ik_vtd_hwcaps_decode(ver, cap, ecap, &hc) == 0, "hwcaps_decode");
	FZ_CHECK(hc.cap == cap && hc.ecap == ecap && hc.ver == ver &&
			 hc.ver_major == FLD(ver, 7, 4) && hc.ver_minor == FLD(ver, 3, 0),
		 "hwcaps raw");
	FZ_CHECK(hc.nd == FLD(cap, 2, 0) &&
			 hc.domains == (hc.nd == 7 ? 0u : 1u << (4 + 2 * hc.nd)) &&
			 hc.rwbf == FLD(cap, 4, 4) && hc.cm == FLD(cap, 7, 7) &&
			 hc.sagaw == FLD(cap, 12, 8) && hc.mgaw == FLD(cap, 21, 16) + 1 &&
			 hc.fro == FLD(cap, 33, 24) * 16 && hc.sllps == FLD(cap, 37, 34) &&
			 hc.psi == FLD(cap, 39, 39) && hc.nfr == FLD(cap, 47, 40) + 1 &&
			 hc.mamv == FLD(cap, 53, 48) && hc.dwd == FLD(cap, 54, 54) &&
			 hc.drd == FLD(cap, 55, 55),
		 "CAP %#llx decoded wrong", (unsigned long long)cap);
	FZ_CHECK(hc.c == FLD(ecap, 0, 0) && hc.qi == FLD(ecap, 1, 1) && hc.dt == FLD(ecap, 2, 2) &&
			 hc.pt == FLD(ecap, 6, 6) && hc.iro == FLD(ecap, 17, 8) * 16 &&
			 hc.pss == FLD(ecap, 39, 35) && hc.pasid_bits == hc.pss + 1 &&
			 hc.pasid == FLD(ecap, 40, 40) && hc.pds == FLD(ecap, 42, 42) &&
			 hc.smts == FLD(ecap, 43, 43) && hc.flts == FLD(ecap, 47, 47),
		 "ECAP %#llx decoded wrong", (unsigned long long)ecap);
}

/* ================================================================ SMMU planner */

#define PLAN_MAX 300

struct ival {
	u128 lo, hi;
};

static int ival_cmp(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Whether the union of iv[0..n) holds [lo, hi). */
static bool ival_cover(struct ival *iv, unsigned n, u128 lo, u128 hi)
{
	u128 at = lo;

	qsort(iv, n, sizeof(*iv), ival_cmp);
	for (unsigned i = 0; i < n && at < hi; i++) {
		if (iv[i].lo > at)
			return false;
		if (iv[i].hi > at)
			at = iv[i].hi;
	}
	return at >= hi;
}

static bool bytes_are(const void *p, size_t n, uint8_t v)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return false;
	return true;
}

static void op_smmu_plan(struct fz *f)
{
	static struct ik_smmu_cmd out[PLAN_MAX];
	static struct ival iv[PLAN_MAX];
	struct ik_smmu_idr id;
	struct ik_smmu_inv_target t;
	struct ik_pgtable_info info;
	struct ik_gather g;
	const struct ik_pgtable *pt;
	unsigned max, nv = 0, tlbis = 0, T;
	bool inval = false, nospc = false, fallback = false, nh_all = false;
	uint64_t gran, stride, start, end;
	u128 rend;
	uint8_t k;
	int n;

	idr_decoded(f, &id);
	pt = lpae_pt(fz_u16(f));
	if (!pt)
		return;
	ik_pgtable_get_info(pt, &info);
	memset(&g, 0, sizeof(g));
	k = fz_u8(f);
	if (k & 1) {
		g.start = fz_edgy(f);
		g.end = fz_edgy(f);
	} else {
		/* Inside the space, mostly page-aligned. */
		uint64_t lim = info.geom.ias >= 64 ? ~0ull : (1ull << info.geom.ias) - 1;

		g.start = fz_u64(f) & lim;
		g.end = g.start + (fz_u32(f) << (k & 2 ? 12 : 0)) + (k & 4 ? fz_u16(f) : 0);
		if (k & 8)
			g.start &= ~0xfffull;
	}
	k = fz_u8(f);
	g.granule = (k & 0x80) ? fz_u64(f) : (k & 0x40) ? 0 : 1ull << (k & 63);
	g.walk = (k >> 6) & 1;
	k = fz_u8(f);
	g.pt = (k & 3) == 1 ? (struct ik_pgtable *)pt :
	       (k & 3) == 2 ? lpae_pt(fz_u16(f)) : NULL;
	memset(&t, 0, sizeof(t));
	t.stage = (k >> 2) & 3;
	t.asid = (k & 0x10) ? fz_u16(f) : 0;
	t.vmid = (k & 0x20) ? fz_u16(f) : 0;
	t.nested = (k >> 6) & 1;
	t.max_tlbi = (k & 0x80) ? fz_below(f, PLAN_MAX) : 0;
	max = (unsigned)fz_below(f, PLAN_MAX + 1);

	/* The reference: the header's errors. */
	if (!((info.geom.fmt == IK_PT_LPAE_S1 && t.stage == 1) ||
	      (info.geom.fmt == IK_PT_LPAE_S2 && t.stage == 2)) ||
	    (g.pt && g.pt != pt) || (t.nested && t.stage != 2) || (t.asid > 0xff && !id.asid16) ||
	    (t.vmid > 0xff && !id.vmid16) || (t.stage == 2 && t.asid))
		inval = true;
	stride = 1ull << info.geom.lg2_granule;
	gran = g.granule > stride ? g.granule : stride;
	start = g.start & ~(gran - 1);
	rend = ((u128)g.end + gran - 1) & ~(u128)(gran - 1);
	if (g.start < g.end && !inval) {
		if ((info.geom.ias < 64 && g.end > (1ull << info.geom.ias)) ||
		    (g.granule & (g.granule - 1)))
			inval = true;
		else if (rend > ((u128)1 << info.geom.ias) || rend > ~0ull)
			inval = true; /* the range widened to the stride leaves the space */
		if (max < 2)
			nospc = true;
	}
	end = (uint64_t)rend;
	memset(out, 0xa5, sizeof(out));
	n = ik_smmu_plan_inv(&id, pt, &g, &t, out, max);
	FZ_TRACE("plan_inv stage %u [%#llx, %#llx) gran %#llx walk %d ril %d max %u T %u -> %d",
		 t.stage, (unsigned long long)g.start, (unsigned long long)g.end,
		 (unsigned long long)g.granule, g.walk, id.ril, max, t.max_tlbi, n);
	if (n <= 0) {
		FZ_CHECK(bytes_are(out, sizeof(out), 0xa5), "plan_inv: %d but out[] written", n);
		if (n == 0) {
			FZ_CHECK(!inval && g.start >= g.end, "plan_inv: nothing for a non-empty gather");
			return;
		}
		FZ_CHECK((n == -EINVAL && inval) || (n == -ENOSPC && nospc),
			 "plan_inv returned %d (reference: %s)", n,
			 inval ? "-EINVAL" : nospc ? "-ENOSPC" : "success");
		return;
	}
	FZ_CHECK(!inval && !nospc && g.start < g.end, "plan_inv: %d commands for a refused request", n);
	FZ_CHECK((unsigned)n <= max, "plan_inv: %d commands in %u", n, max);
	/* out[n..max) is scratch the planner may have used; beyond max, nothing. */
	FZ_CHECK(bytes_are(out + max, sizeof(out) - sizeof(out[0]) * (size_t)max, 0xa5),
		 "plan_inv wrote past max");
	FZ_CHECK(out[n - 1].op == IK_SMMU_CMD_SYNC && out[n - 1].cs == IK_SMMU_SYNC_CS_NONE,
		 "plan does not end with CMD_SYNC(CS = NONE)");
	for (int i = 0; i < n; i++) {
		const struct ik_smmu_cmd *c = &out[i];
		struct ik_smmu_cmd back;
		ik_u64 w[2], w2[2];

		FZ_CHECK(ik_smmu_cmd_encode(c, w) == 0, "plan command %d (op %#x) does not encode", i,
			 c->op);
		FZ_CHECK(ik_smmu_cmd_decode(w, &back) == 0 && ik_smmu_cmd_encode(&back, w2) == 0 &&
				 w[0] == w2[0] && w[1] == w2[1],
			 "plan command %d does not round-trip", i);
		if (i < n - 1)
			FZ_CHECK(c->op != IK_SMMU_CMD_SYNC, "CMD_SYNC in the middle of a plan");
		switch (c->op) {
		case IK_SMMU_CMD_SYNC:
			break;
		case IK_SMMU_CMD_TLBI_NH_ASID:
		case IK_SMMU_CMD_TLBI_S12_VMALL:
			FZ_CHECK((c->op == IK_SMMU_CMD_TLBI_NH_ASID) == (t.stage == 1),
				 "fallback of the other stage");
			FZ_CHECK(c->vmid == t.vmid && (t.stage != 1 || c->asid == t.asid),
				 "fallback tags");
			fallback = true;
			break;
		case IK_SMMU_CMD_TLBI_NH_ALL:
			FZ_CHECK(t.nested && c->vmid == t.vmid, "TLBI_NH_ALL outside nested");
			nh_all = true;
			break;
		case IK_SMMU_CMD_TLBI_NH_VA:
		case IK_SMMU_CMD_TLBI_S2_IPA: {
			u128 lo = c->addr, span;

			FZ_CHECK((c->op == IK_SMMU_CMD_TLBI_NH_VA) == (t.stage == 1),
				 "TLBI of the other stage");
			FZ_CHECK(c->vmid == t.vmid && (t.stage != 1 || c->asid == t.asid), "TLBI tags");
			FZ_CHECK(c->leaf == !g.walk, "TLBI Leaf %u for walk %d", c->leaf, g.walk);
			FZ_CHECK(!g.walk || c->ttl == 0, "TTL hint after a walk change");
			if (c->tg) {
				FZ_CHECK(id.ril, "range TLBI on an SMMU without RIL");
				FZ_CHECK(c->tg == (info.geom.lg2_granule == 12 ? 1 :
						   info.geom.lg2_granule == 14 ? 2 : 3),
					 "TLBI TG %u for granule %u", c->tg, info.geom.lg2_granule);
				span = ((u128)c->num + 1) << (c->scale + info.geom.lg2_granule);
			} else {
				FZ_CHECK(!id.ril, "TG 0 TLBI on an SMMU with RIL");
				span = gran; /* one leaf per stride (see the header) */
			}
			iv[nv].lo = lo;
			iv[nv++].hi = lo + span;
			tlbis++;
			break;
		}
		default:
			FZ_CHECK(0, "plan command of op %#x", c->op);
		}
	}
	if (t.nested && !fallback)
		FZ_CHECK(nh_all, "nested plan without TLBI_NH_ALL");
	T = t.max_tlbi ? t.max_tlbi : IK_SMMU_PLAN_DEFAULT_MAX_TLBI;
	if (fallback) {
		FZ_CHECK(tlbis == 0 && n == 2, "fallback mixed with TLBIs");
		return;
	}
	FZ_CHECK(tlbis <= T, "%u TLBIs above the threshold %u", tlbis, T);
	FZ_CHECK(ival_cover(iv, nv, start, end),
		 "the TLBIs do not cover [%#llx, %#llx)", (unsigned long long)start,
		 (unsigned long long)end);
}

/* ================================================================ VT-d planners */

static void vtd_caps_from(struct fz *f, struct ik_vtd_hwcaps *hc)
{
	uint8_t m = fz_u8(f);
	ik_u64 cap, ecap;

	if (m & 1) {
		cap = fz_u64(f);
		ecap = fz_u64(f);
	} else {
		/* ND 2, SAGAW 39/48, MGAW 48, FRO 0x200, PSI, NFR 8, MAMV 18;
		 * QI, DT, PT, PSS 19, PASID, SMTS, SLTS, FLTS; flips. */
		cap = 2ull | 6ull << 8 | 47ull << 16 | 0x20ull << 24 | BIT(39) | 7ull << 40 |
		      18ull << 48;
		ecap = BIT(1) | BIT(2) | BIT(6) | 19ull << 35 | BIT(40) | BIT(43) | BIT(46) | BIT(47);
		for (unsigned i = 0; i < ((m >> 1) & 7); i++) {
			uint8_t b = fz_u8(f);

			if (b & 0x40)
				cap ^= BIT(b & 63);
			else
				ecap ^= BIT(b & 63);
		}
	}
	(void)ik_vtd_hwcaps_decode(0x10, cap, ecap, hc);
}

/* Pages [*lo, *hi) a device-TLB descriptor invalidates (ATS encoding);
 * false for "everything". */
static bool devtlb_pages(const struct ik_vtd_desc *d, u128 *lo, u128 *hi)
{
	uint64_t pfn = d->addr >> 12;
	unsigned z;

	if (!d->s) {
		*lo = pfn;
		*hi = (u128)pfn + 1;
		return true;
	}
	if (d->addr == 0x7ffffffffffff000ull)
		return false;
	z = (unsigned)__builtin_ctzll(~pfn);
	*lo = pfn & ~((2ull << z) - 1);
	*hi = *lo + ((u128)2 << z);
	return true;
}

static void check_desc(const struct ik_vtd_desc *d, unsigned words,
		       const struct ik_vtd_desc_rules *rules, int i)
{
	ik_u64 w[4], w2[4];
	struct ik_vtd_desc back;

	FZ_CHECK(ik_vtd_desc_encode(d, w, words) == 0, "plan descriptor %d (type %u) does not encode",
		 i, d->type);
	FZ_CHECK(ik_vtd_desc_decode(w, words, &back) == 0 && ik_vtd_desc_encode(&back, w2, words) == 0 &&
			 !memcmp(w, w2, words * 8),
		 "plan descriptor %d does not round-trip", i);
	FZ_CHECK(back.type == d->type && back.g == d->g && back.did == d->did &&
			 back.addr == d->addr && back.am == d->am && back.pasid == d->pasid &&
			 back.sid == d->sid,
		 "plan descriptor %d fields lost", i);
	FZ_CHECK(ik_vtd_desc_validate(d, rules) == 0,
		 "plan descriptor %d (type %u g %u am %u) refused by the unit's rules", i, d->type,
		 d->g, d->am);
}

static void op_vtd_plan(struct fz *f)
{
	struct ik_vtd_hwcaps hc;
	struct ik_vtd_target t;
	struct ik_vtd_plan p;
	struct ik_vtd_change ch;
	struct ik_vtd_desc_rules rules;
	struct ik_gather g;
	struct ik_pgtable_info info;
	ik_u32 flags;
	uint64_t iova = 0, size = 0, s = 0, e = 0;
	uint8_t kind, k;
	bool inval = false, nosup = false, fl = false, scal, walk = false, empty = false;
	int r;

	vtd_caps_from(f, &hc);
	k = fz_u8(f);
	flags = (k & 0x80) ? fz_u32(f) : k & 1;
	scal = flags & IK_VTD_PLAN_SCALABLE;
	kind = (k >> 1) & 3;
	rules.flags = (hc.psi ? IK_VTD_RULE_PSI : 0) | (hc.pds ? IK_VTD_RULE_PDS : 0) |
		      (scal ? IK_VTD_RULE_SCALABLE : 0);
	rules.mamv = hc.mamv;
	memset(&p, 0xa5, sizeof(p));

	if (kind == 3) {
		memset(&ch, 0, sizeof(ch));
		k = fz_u8(f);
		ch.kind = (k & 0x80) ? fz_u8(f) : 1 + (k & 1);
		ch.present = (k >> 1) & 1;
		ch.ats = (k >> 2) & 1;
		ch.first_level = (k >> 3) & 1;
		ch.sid = fz_u16(f);
		ch.did = (k & 0x10) ? fz_u16(f) : fz_u8(f);
		ch.pasid = (k & 0x20) ? fz_u32(f) : (k & 0x40) ? fz_u8(f) : 0;
		if ((flags & ~IK_VTD_PLAN_SCALABLE) || ch.pasid >= (1u << 20) ||
		    ch.did >= hc.domains)
			inval = true;
		else if (ch.kind == IK_VTD_CHANGE_CONTEXT)
			inval = ch.pasid || (!scal && ch.first_level);
		else
			inval = ch.kind != IK_VTD_CHANGE_PASID || !scal;
		nosup = !ch.present && ch.ats && ch.pasid;
		r = ik_vtd_plan_change(&hc, flags, &ch, &p);
		FZ_TRACE("plan_change kind %u present %d ats %d fl %d did %u pasid %#x -> %d", ch.kind,
			 ch.present, ch.ats, ch.first_level, ch.did, ch.pasid, r);
		if (r) {
			FZ_CHECK(bytes_are(&p, sizeof(p), 0xa5), "plan_change %d wrote the plan", r);
			FZ_CHECK((r == -EINVAL && inval) || (r == -EOPNOTSUPP && nosup && !inval),
				 "plan_change returned %d (reference %s)", r,
				 inval ? "-EINVAL" : nosup ? "-EOPNOTSUPP" : "success");
			return;
		}
		FZ_CHECK(!inval && !nosup, "plan_change accepted a refused change");
		FZ_CHECK(p.wbf == hc.rwbf && p.n <= IK_VTD_PLAN_MAX, "plan_change wbf/n");
		if (ch.present && !hc.cm) {
			FZ_CHECK(p.n == 0 && !p.sync, "plan_change: descriptors for a set without CM");
			return;
		}
		{
			unsigned i = 0;
			bool flt = scal && ch.first_level;

			if (ch.kind == IK_VTD_CHANGE_CONTEXT) {
				FZ_CHECK(p.n > i && p.d[i].type == IK_VTD_DESC_CC &&
						 p.d[i].g == IK_VTD_G_DEVICE && p.d[i].sid == ch.sid &&
						 p.d[i].did == (ch.present ? 0 : ch.did),
					 "plan_change: context-cache invalidation");
				i++;
			}
			if (scal) {
				FZ_CHECK(p.n > i && p.d[i].type == IK_VTD_DESC_PC &&
						 p.d[i].did == ch.did && p.d[i].pasid == ch.pasid,
					 "plan_change: PASID-cache invalidation");
				i++;
			}
			FZ_CHECK(p.n > i && p.d[i].did == ch.did &&
					 (flt ? (p.d[i].type == IK_VTD_DESC_PIOTLB &&
						 p.d[i].g == IK_VTD_G_PASID && p.d[i].pasid == ch.pasid) :
						(p.d[i].type == IK_VTD_DESC_IOTLB &&
						 p.d[i].g == IK_VTD_G_DOMAIN)),
				 "plan_change: IOTLB invalidation");
			i++;
			if (!ch.present && ch.ats) {
				FZ_CHECK(p.n > i && p.d[i].type == IK_VTD_DESC_DEVTLB &&
						 p.d[i].sid == ch.sid && p.d[i].s &&
						 p.d[i].addr == 0x7ffffffffffff000ull,
					 "plan_change: device-TLB invalidation");
				i++;
			}
			FZ_CHECK(p.n == i && p.sync, "plan_change: %u descriptors, expected %u", p.n, i);
			for (unsigned j = 0; j < p.n; j++)
				check_desc(&p.d[j], scal ? 4 : 2, &rules, (int)j);
		}
		return;
	}

	memset(&t, 0, sizeof(t));
	k = fz_u8(f);
	t.pt = (k & 3) == 3 ? NULL : (k & 3) == 2 ? lpae_pt(fz_u16(f)) : vtd_pt(fz_u8(f));
	t.did = (k & 4) ? fz_u16(f) : fz_u8(f) % 16;
	t.pasid = (k & 8) ? fz_u32(f) : (k & 0x10) ? fz_u8(f) : 0;
	t.flags = (k & 0x20) ? IK_VTD_TARGET_ATS : 0;
	if (k & 0x40)
		t.flags |= fz_u32(f);
	t.sid = fz_u16(f);
	t.pfsid = (k & 0x80) ? fz_u16(f) : 0;
	t.mip = fz_u8(f) % 40;
	t.max_psi_pages = fz_bool(f) ? fz_edgy(f) : 0;

	if (!t.pt || (flags & ~IK_VTD_PLAN_SCALABLE) || (t.flags & ~IK_VTD_TARGET_ATS) ||
	    t.mip > 31 || t.pasid >= (1u << 20) || t.did >= hc.domains || (hc.cm && t.did == 0)) {
		inval = true;
	} else {
		ik_pgtable_get_info(t.pt, &info);
		if (info.geom.fmt == IK_PT_VTD_FL)
			inval = !scal, fl = true;
		else if (info.geom.fmt == IK_PT_VTD_SL)
			inval = !scal && t.pasid;
		else
			inval = true;
	}
	nosup = (t.flags & IK_VTD_TARGET_ATS) && t.pasid;

	if (kind == 0) {
		memset(&g, 0, sizeof(g));
		k = fz_u8(f);
		g.start = fz_edgy(f);
		g.end = (k & 1) ? fz_edgy(f) : g.start + fz_u32(f);
		g.walk = (k >> 1) & 1;
		g.granule = 4096;
		g.pt = (k & 4) ? (struct ik_pgtable *)t.pt : (k & 8) ? vtd_pt(fz_u8(f)) : NULL;
		walk = g.walk;
		if (g.pt && g.pt != t.pt && !nosup)
			inval = true;
		empty = g.start >= g.end;
		if (!empty) {
			s = g.start >> 12;
			e = (g.end - 1) >> 12;
		}
		r = ik_vtd_plan_unmap(&hc, flags, &t, &g, &p);
	} else {
		k = fz_u8(f);
		iova = fz_edgy(f);
		size = (k & 1) ? fz_edgy(f) : fz_u32(f);
		walk = (k >> 1) & 1;
		if (!size || iova + (size - 1) < iova)
			inval = true;
		else
			s = iova >> 12, e = (iova + (size - 1)) >> 12;
		r = kind == 1 ? ik_vtd_plan_range(&hc, flags, &t, iova, size, walk, &p) :
				ik_vtd_plan_map(&hc, flags, &t, iova, size, &p);
	}
	FZ_TRACE("vtd plan kind %u pages [%#llx, %#llx] did %u pasid %#x flags %#x ats %d -> %d", kind,
		 (unsigned long long)s, (unsigned long long)e, t.did, t.pasid, flags,
		 !!(t.flags & IK_VTD_TARGET_ATS), r);
	if (r) {
		FZ_CHECK(bytes_are(&p, sizeof(p), 0xa5), "vtd plan %d wrote the plan", r);
		FZ_CHECK((r == -EINVAL && inval) || (r == -EOPNOTSUPP && nosup),
			 "vtd plan returned %d (reference %s)", r,
			 inval ? "-EINVAL" : nosup ? "-EOPNOTSUPP" : "success");
		return;
	}
	FZ_CHECK(!inval && !nosup, "vtd plan accepted a refused request");
	FZ_CHECK(p.n <= IK_VTD_PLAN_MAX, "plan of %u", p.n);
	for (unsigned j = 0; j < p.n; j++)
		check_desc(&p.d[j], scal ? 4 : 2, &rules, (int)j);
	if (empty) {
		FZ_CHECK(p.n == 0 && !p.sync && !p.wbf, "plan for an empty gather");
		return;
	}
	if (kind == 2 && !hc.cm) {
		FZ_CHECK(p.n == 0 && !p.sync && p.wbf == hc.rwbf, "map plan without CM");
		return;
	}
	FZ_CHECK(!p.wbf && p.sync, "plan wbf/sync");
	{
		const struct ik_vtd_desc *d = &p.d[0];
		unsigned am_min = 0, nexp = 1;
		bool psi;

		while (am_min < 64 && (s >> am_min) != (e >> am_min))
			am_min++;
		psi = hc.psi && am_min <= hc.mamv &&
		      (!t.max_psi_pages || (am_min < 64 && (1ull << am_min) <= t.max_psi_pages));
		FZ_CHECK(p.n >= 1 && d->did == t.did &&
				 d->type == (fl ? IK_VTD_DESC_PIOTLB : IK_VTD_DESC_IOTLB),
			 "plan's first descriptor");
		if (fl)
			FZ_CHECK(d->pasid == t.pasid, "PIOTLB pasid");
		else
			FZ_CHECK(d->dr == hc.drd && d->dw == hc.dwd, "IOTLB DR/DW");
		FZ_CHECK((d->g == (fl ? IK_VTD_G_PASID_PAGE : IK_VTD_G_PAGE)) == psi,
			 "page-selective %d where the reference says %d (am %u mamv %u psi %d max %llu)",
			 d->g == (fl ? IK_VTD_G_PASID_PAGE : IK_VTD_G_PAGE), psi, am_min, hc.mamv,
			 hc.psi, (unsigned long long)t.max_psi_pages);
		if (psi) {
			u128 lo = d->addr >> 12, hi = lo + ((u128)1 << d->am);

			FZ_CHECK(d->am == am_min && lo <= s && e < hi,
				 "PSI block [%#llx, +2^%u) does not hold [%#llx, %#llx]",
				 (unsigned long long)(d->addr >> 12), d->am, (unsigned long long)s,
				 (unsigned long long)e);
			FZ_CHECK(d->ih == (kind == 2 ? 0 : !walk), "IH %u", d->ih);
		}
		if (kind != 2 && (t.flags & IK_VTD_TARGET_ATS)) {
			const struct ik_vtd_desc *v = &p.d[1];
			u128 lo, hi;

			nexp = 2;
			FZ_CHECK(p.n >= 2 && v->type == IK_VTD_DESC_DEVTLB && v->sid == t.sid &&
					 v->pfsid == t.pfsid && v->mip == t.mip,
				 "device-TLB descriptor");
			if (devtlb_pages(v, &lo, &hi))
				FZ_CHECK(psi && lo <= s && e < hi,
					 "device-TLB block [%#llx, %#llx) does not hold [%#llx, %#llx]",
					 (unsigned long long)lo, (unsigned long long)hi,
					 (unsigned long long)s, (unsigned long long)e);
		}
		FZ_CHECK(p.n == nexp, "plan of %u descriptors, expected %u", p.n, nexp);
	}
}

/* ================================================================ hostile devices */

/* DMA memory that knows its blocks (device address = CPU address), with
 * allocation-failure injection: a leak shows as a block left over, and a
 * device model may write only inside a block. */
#define TD_BLOCKS 128
struct tdma {
	struct ik_dma_mem d;
	struct {
		uint8_t *p;
		size_t n;
	} b[TD_BLOCKS];
	int nb;
	long calls, fail_at, failures;
};

static void *td_alloc(void *ctx, ik_size size, ik_size align, ik_u64 *dma)
{
	struct tdma *t = ctx;
	uint8_t *p;

	if (++t->calls == t->fail_at || t->nb == TD_BLOCKS) {
		t->failures++;
		return NULL;
	}
	if (align < 64)
		align = 64;
	p = aligned_alloc(align, (size + align - 1) & ~(align - 1));
	if (!p)
		return NULL;
	memset(p, 0x5a, size); /* not zeroed: the cores write every byte */
	t->b[t->nb].p = p;
	t->b[t->nb++].n = size;
	*dma = (ik_u64)(uintptr_t)p;
	return p;
}

static void td_free(void *ctx, void *cpu, ik_u64 dma, ik_size size)
{
	struct tdma *t = ctx;

	FZ_CHECK(dma == (ik_u64)(uintptr_t)cpu, "dma free: address pair");
	for (int i = 0; i < t->nb; i++) {
		if (t->b[i].p == cpu) {
			FZ_CHECK(t->b[i].n == size, "dma free: size %zu of a block of %zu",
				 (size_t)size, t->b[i].n);
			free(cpu);
			t->b[i] = t->b[--t->nb];
			return;
		}
	}
	FZ_CHECK(0, "dma free of a block not allocated");
}

/* The block holding [a, a + n), or NULL. */
static uint8_t *td_find(struct tdma *t, uint64_t a, size_t n)
{
	for (int i = 0; i < t->nb; i++) {
		uint64_t b = (uint64_t)(uintptr_t)t->b[i].p;

		if (a >= b && a - b <= t->b[i].n && n <= t->b[i].n - (a - b))
			return (uint8_t *)(uintptr_t)a;
	}
	return NULL;
}

static void td_init(struct tdma *t)
{
	memset(t, 0, sizeof(*t));
	t->d.alloc = td_alloc;
	t->d.free = td_free;
	t->d.ctx = t;
}

/* A driver core's memory: env allocations from fa, DMA memory from td,
 * neither failing until armed. */
static void mem_init(struct fz_alloc *fa, struct tdma *td)
{
	fz_alloc_init(fa);
	td_init(td);
}

/* Failures for the next operation, as op's bits ask: 0x80 the n-th env
 * allocation, 0x40 the n-th DMA allocation (n from the input, 0..3). */
static void mem_arm(struct fz *f, uint8_t op, struct fz_alloc *fa, struct tdma *td)
{
	fz_alloc_arm(fa, op & 0x80 ? fz_u8(f) % 4 : 0);
	td->calls = 0;
	td->fail_at = op & 0x40 ? fz_u8(f) % 4 : 0;
}

static void td_release_all(struct tdma *t)
{
	while (t->nb)
		free(t->b[--t->nb].p);
}

/* xorshift: the model's garbage (seeded from the input). */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Acknowledgement behaviours. */
enum { ACK_RIGHT, ACK_NEVER, ACK_GARBAGE, ACK_LATE };

#define TIMEOUT_NS 20000ull

/* ---------------------------------------------------------------- SMMUv3 */

struct smodel {
	uint32_t regs[0x20000 / 4];
	uint64_t rng;
	uint8_t cr0ack, gbpa, irqack, cons, gerror, evtq;
	unsigned late;
	struct tdma *dma;
};

#define SR(off) m->regs[(off) / 4]

static void sm_consume(struct smodel *m)
{
	uint32_t prod = SR(IK_SMMU_CMDQ_PROD) & 0xfffff;

	if (!(SR(IK_SMMU_CR0) & IK_SMMU_CR0_CMDQEN) || ((SR(IK_SMMU_GERROR) ^ SR(IK_SMMU_GERRORN)) & 1))
		return;
	switch (m->cons) {
	case ACK_RIGHT:
		SR(IK_SMMU_CMDQ_CONS) = prod;
		break;
	case ACK_NEVER:
		break;
	case ACK_GARBAGE:
		SR(IK_SMMU_CMDQ_CONS) = (uint32_t)rng_next(&m->rng);
		break;
	case ACK_LATE:
		/* An error now and then: CONS stops at the entry, ERR set,
		 * GERROR.CMDQ_ERR toggles; else everything consumed. */
		if (rng_next(&m->rng) % 3 == 0) {
			SR(IK_SMMU_CMDQ_CONS) = (SR(IK_SMMU_CMDQ_CONS) & 0xfffff) |
						(uint32_t)(rng_next(&m->rng) & 0x7f) << 24;
			SR(IK_SMMU_GERROR) ^= 1;
		} else {
			SR(IK_SMMU_CMDQ_CONS) = prod;
		}
		break;
	}
}

static ik_u32 sm_read32(void *ctx, ik_u32 off)
{
	struct smodel *m = ctx;

	FZ_CHECK(off < sizeof(m->regs) && !(off & 3), "SMMU register read at %#x", off);
	switch (off) {
	case IK_SMMU_CR0ACK:
		if (m->cr0ack == ACK_RIGHT || (m->cr0ack == ACK_LATE && m->late && !--m->late))
			SR(off) = SR(IK_SMMU_CR0) & 0x1f;
		else if (m->cr0ack == ACK_GARBAGE)
			return (uint32_t)rng_next(&m->rng);
		break;
	case IK_SMMU_GBPA:
		if (m->gbpa == ACK_RIGHT || (m->gbpa == ACK_LATE && rng_next(&m->rng) & 1))
			SR(off) &= ~IK_SMMU_GBPA_UPDATE;
		else if (m->gbpa == ACK_GARBAGE)
			return (uint32_t)rng_next(&m->rng);
		break;
	case IK_SMMU_IRQ_CTRLACK:
		if (m->irqack == ACK_RIGHT)
			SR(off) = SR(IK_SMMU_IRQ_CTRL);
		else if (m->irqack == ACK_GARBAGE)
			return (uint32_t)rng_next(&m->rng);
		break;
	case IK_SMMU_GERROR:
		if (m->gerror && rng_next(&m->rng) % 4 == 0)
			SR(off) ^= (uint32_t)rng_next(&m->rng) & 0x1fc; /* not CMDQ_ERR */
		break;
	case IK_SMMU_CMDQ_CONS:
		if (m->cons == ACK_GARBAGE)
			return (uint32_t)rng_next(&m->rng);
		break;
	case IK_SMMU_EVTQ_PROD:
		if (m->evtq)
			return (uint32_t)rng_next(&m->rng);
		break;
	}
	return SR(off);
}

static void sm_write32(void *ctx, ik_u32 off, ik_u32 v)
{
	struct smodel *m = ctx;

	FZ_CHECK(off < sizeof(m->regs) && !(off & 3), "SMMU register write at %#x", off);
	FZ_CHECK(off >= IK_SMMU_CR0 && off != IK_SMMU_CR0ACK && off != IK_SMMU_IRQ_CTRLACK &&
			 off != IK_SMMU_GERROR,
		 "write to read-only SMMU register %#x", off);
	SR(off) = v;
	switch (off) {
	case IK_SMMU_CR0:
		m->late = (unsigned)(rng_next(&m->rng) % 5) + 1;
		sm_consume(m);
		if ((v & IK_SMMU_CR0_EVTQEN) && m->evtq) {
			/* Garbage records in the whole event ring. */
			uint64_t b = ((uint64_t)SR(IK_SMMU_EVTQ_BASE + 4) << 32 | SR(IK_SMMU_EVTQ_BASE));
			size_t n = (size_t)32 << (b & 0x1f);
			uint8_t *p = (b & 0x1f) <= 20 ? td_find(m->dma, b & IK_SMMU_Q_BASE_ADDR_MASK, n) : NULL;

			for (size_t i = 0; p && i < n; i += 8) {
				uint64_t x = rng_next(&m->rng);

				memcpy(p + i, &x, 8);
			}
		}
		break;
	case IK_SMMU_CMDQ_PROD:
		sm_consume(m);
		break;
	case IK_SMMU_GERRORN:
		sm_consume(m); /* an acknowledged CMDQ_ERR resumes the queue */
		break;
	}
}

static struct ik_smmu_cmd rand_cmd(struct fz *f)
{
	static const uint8_t ops[] = { 0x03, 0x04, 0x05, 0x06, 0x10, 0x11, 0x12, 0x20,
				       0x28, 0x2a, 0x30, 0x40, 0x41, 0x46, 0x00, 0x7f };
	struct ik_smmu_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = ops[fz_u8(f) % sizeof(ops)];
	c.sid = fz_u8(f);
	if (fz_bool(f)) {
		c.addr = fz_edgy(f);
		c.asid = fz_u16(f);
		c.vmid = fz_u16(f);
		c.leaf = fz_u8(f) & 1;
	}
	return c;
}

static void op_smmu_dev(struct fz *f)
{
	static struct smodel mstate;
	struct smodel *m = &mstate;
	uint32_t idr[6];
	struct ik_mmio mmio = { sm_read32, sm_write32, NULL, NULL, m };
	struct fz_alloc fa;
	struct tdma td;
	struct ik_smmu_config cfg;
	struct ik_smmu *s = NULL;
	uint8_t k;
	int r;

	memset(m, 0, sizeof(*m));
	mem_init(&fa, &td);
	m->dma = &td;
	idr_from(f, idr);
	memcpy(m->regs, idr, sizeof(idr));
	SR(IK_SMMU_IIDR) = fz_u32(f);
	k = fz_u8(f);
	m->cr0ack = k & 3;
	m->gbpa = (k >> 2) & 3;
	m->irqack = (k >> 4) & 3;
	m->cons = (k >> 6) & 3;
	k = fz_u8(f);
	m->gerror = k & 1;
	m->evtq = (k >> 1) & 1;
	m->rng = fz_u64(f);
	SR(IK_SMMU_GERROR) = (k & 4) ? fz_u32(f) : 0;
	SR(IK_SMMU_CR0ACK) = (k & 8) ? fz_u32(f) : 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.mmio = &mmio;
	cfg.dma = &td.d;
	cfg.alloc = &fa.a;
	k = fz_u8(f);
	cfg.cmdq_log2 = (k & 1) ? fz_u8(f) % 24 : 0;
	cfg.evtq_log2 = (k & 2) ? fz_u8(f) % 24 : 0;
	cfg.sid_bits = (k & 4) ? fz_u8(f) % 34 : 0;
	cfg.linear = (k >> 3) & 1;
	cfg.flags = (k >> 4) & 3;
	cfg.timeout_ns = TIMEOUT_NS;
	fz_alloc_arm(&fa, fz_u8(f) % 8);
	td.calls = 0;
	td.fail_at = fz_u8(f) % 8;
	r = ik_smmu_create(&cfg, &s);
	FZ_TRACE("smmu create -> %d", r);
	if (r) {
		FZ_CHECK(r == -EINVAL || r == -ENODEV || r == -ENOMEM || r == -ERANGE,
			 "smmu_create returned %d", r);
		FZ_CHECK(r != -ENOMEM || fa.failures || td.failures, "-ENOMEM without a failure");
		FZ_CHECK(fa.live == 0 && td.nb == 0, "smmu_create failed and left %ld + %d blocks",
			 fa.live, td.nb);
		return;
	}
	FZ_CHECK(ik_smmu_idr_usable(ik_smmu_get_idr(s)) == 0, "created over an unusable IDR");
	FZ_CHECK(!(cfg.flags & ~IK_SMMU_F_ALL), "created with unknown flags");
	for (unsigned step = 0; step < 12 && fz_left(f); step++) {
		uint8_t op = fz_u8(f);

		mem_arm(f, op, &fa, &td);
		switch (op % 7) {
		case 0:
			r = ik_smmu_reset(s);
			FZ_TRACE("smmu reset -> %d", r);
			FZ_CHECK(r == 0 || r == -ETIMEDOUT || r == -EIO, "smmu_reset returned %d", r);
			/* (An SMMU whose CR0ACK is garbage can say anything.) */
			if (!r && m->cr0ack != ACK_GARBAGE)
				FZ_CHECK((SR(IK_SMMU_CR0) & 0x1f) == (IK_SMMU_CR0_SMMUEN | IK_SMMU_CR0_EVTQEN |
								   IK_SMMU_CR0_CMDQEN) &&
						 (SR(IK_SMMU_CR0ACK) & 0x1f) == (SR(IK_SMMU_CR0) & 0x1f),
					 "reset succeeded with CR0 %#x CR0ACK %#x", SR(IK_SMMU_CR0),
					 SR(IK_SMMU_CR0ACK));
			break;
		case 1:
			r = ik_smmu_disable(s);
			FZ_CHECK(r == 0 || r == -ETIMEDOUT, "smmu_disable returned %d", r);
			break;
		case 2: {
			struct ik_smmu_cmd c[20];
			unsigned n = fz_u8(f) % 20;

			for (unsigned i = 0; i < n; i++)
				c[i] = rand_cmd(f);
			r = ik_smmu_issue(s, c, n);
			FZ_CHECK(r == 0 || r == -EINVAL || r == -ETIMEDOUT || r == -EIO,
				 "smmu_issue returned %d", r);
			break;
		}
		case 3:
			for (unsigned i = 0; i < 8; i++) {
				struct ik_smmu_event ev;

				r = ik_smmu_event_pop(s, &ev);
				FZ_CHECK(r == 0 || r == -ENOENT || r == -EINVAL, "event_pop returned %d", r);
				if (r)
					break;
				FZ_CHECK(ev.name != NULL, "event without a name");
			}
			break;
		case 4: {
			struct ik_smmu_gerror ge;

			r = ik_smmu_gerror_poll(s, &ge);
			FZ_CHECK(r >= 0, "gerror_poll returned %d", r);
			break;
		}
		case 5: {
			struct ik_smmu_ste_config sc;
			ik_u64 ste[8], before[8], after[8];
			ik_u32 sid = fz_bool(f) ? fz_u32(f) : fz_u16(f);
			int rd;

			memset(&sc, 0, sizeof(sc));
			sc.config = fz_bool(f) ? IK_SMMU_STE_CFG_BYPASS : IK_SMMU_STE_CFG_ABORT;
			if (ik_smmu_ste_build(ik_smmu_get_idr(s), &sc, ste))
				break;
			if (fz_bool(f))
				ste[1] ^= fz_u64(f);
			rd = ik_smmu_strtab_read(ik_smmu_get_strtab(s), sid, before);
			r = ik_smmu_write_ste(s, sid, ste);
			FZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM || r == -ERANGE ||
					 r == -ETIMEDOUT || r == -EIO,
				 "write_ste returned %d", r);
			FZ_CHECK((rd == 0) == (r != -EINVAL), "write_ste %d but strtab_read %d", r, rd);
			if (r == -ENOMEM || r == -ERANGE || r == -EINVAL) {
				if (!rd) {
					FZ_CHECK(ik_smmu_strtab_read(ik_smmu_get_strtab(s), sid, after) == 0 &&
							 !memcmp(before, after, sizeof(after)),
						 "write_ste %d changed the STE", r);
				}
			} else if (!r) {
				FZ_CHECK(ik_smmu_strtab_read(ik_smmu_get_strtab(s), sid, after) == 0 &&
						 !memcmp(ste, after, sizeof(after)),
					 "write_ste succeeded but the STE differs");
			}
			break;
		}
		case 6: {
			struct ik_gather g;
			struct ik_smmu_inv_target t;
			const struct ik_pgtable *pt = lpae_pt(fz_u16(f));

			if (!pt)
				break;
			memset(&g, 0, sizeof(g));
			g.start = fz_edgy(f);
			g.end = g.start + fz_u32(f);
			memset(&t, 0, sizeof(t));
			t.stage = fz_u8(f) % 3;
			t.max_tlbi = fz_u8(f);
			r = ik_smmu_inv_gather(s, pt, &g, &t);
			FZ_CHECK(r == 0 || r == -EINVAL || r == -ENOSPC || r == -ETIMEDOUT || r == -EIO,
				 "inv_gather returned %d", r);
			break;
		}
		}
	}
	fz_alloc_arm(&fa, 0);
	td.fail_at = 0;
	ik_smmu_destroy(s);
	FZ_CHECK(fa.live == 0 && td.nb == 0, "smmu destroy left %ld bookkeeping and %d DMA blocks",
		 fa.live, td.nb);
}

/* ---------------------------------------------------------------- VT-d */

#define VREGS 0x8000
struct vmodel {
	uint32_t regs[VREGS / 4];
	uint64_t rng;
	uint8_t gsts, iqh, fsts;
	unsigned good_gcmds; /* ACK_LATE: GCMD writes honoured before the unit sticks */
	struct tdma *dma;
};

#define VR(off) m->regs[(off) / 4]
#define VR64(off) ((uint64_t)VR((off) + 4) << 32 | VR(off))

/* Run the queue from IQH to IQT: waits with SW write their status. */
static void vm_consume(struct vmodel *m)
{
	uint64_t iqa = VR64(IK_VTD_REG_IQA);
	bool dw = iqa & IK_VTD_IQA_DW;
	unsigned words = dw ? 4 : 2, shift = dw ? 5 : 4;
	uint32_t n = (4096u << (iqa & 7)) / (words * 8);
	uint32_t h = (VR(IK_VTD_REG_IQH) & 0x7fff0u) >> shift, t = (VR(IK_VTD_REG_IQT) & 0x7fff0u) >> shift;
	uint64_t *ring = (uint64_t *)td_find(m->dma, iqa & ~0xfffull, (size_t)n * words * 8);

	if (!(VR(IK_VTD_REG_GSTS) & IK_VTD_GSTS_QIES) || !ring || (VR(IK_VTD_REG_FSTS) & 0x70))
		return;
	if (m->iqh == ACK_NEVER)
		return;
	if (m->iqh == ACK_GARBAGE) {
		VR(IK_VTD_REG_IQH) = (uint32_t)rng_next(&m->rng);
		return;
	}
	for (uint32_t i = h % n, guard = 0; i != t % n && guard < n; i = (i + 1) % n, guard++) {
		struct ik_vtd_desc d;

		if (ik_vtd_desc_decode(ring + (size_t)i * words, words, &d) ||
		    (m->iqh == ACK_LATE && rng_next(&m->rng) % 4 == 0)) {
			/* IQE, IQH at the descriptor; or ITE sometimes. */
			VR(IK_VTD_REG_FSTS) |= (m->iqh == ACK_LATE && rng_next(&m->rng) & 1) ?
						       IK_VTD_FSTS_ITE : IK_VTD_FSTS_IQE;
			VR(IK_VTD_REG_IQH) = i << shift;
			return;
		}
		if (d.type == IK_VTD_DESC_WAIT && d.sw) {
			uint8_t *p = td_find(m->dma, d.status_addr, 4);

			if (p)
				memcpy(p, &d.status_data, 4);
		}
	}
	VR(IK_VTD_REG_IQH) = (t % n) << shift;
}

static void vm_gcmd(struct vmodel *m, uint32_t v)
{
	uint32_t st = VR(IK_VTD_REG_GSTS);

	if (m->gsts == ACK_NEVER)
		return;
	if (m->gsts == ACK_GARBAGE) {
		VR(IK_VTD_REG_GSTS) = (uint32_t)rng_next(&m->rng);
		return;
	}
	if (m->gsts == ACK_LATE && !m->good_gcmds)
		return;
	if (m->good_gcmds)
		m->good_gcmds--;
	st = (st & ~IK_VTD_GSTS_PERSISTENT) | (v & IK_VTD_GSTS_PERSISTENT);
	if (v & IK_VTD_GCMD_SRTP)
		st |= IK_VTD_GSTS_RTPS;
	st &= ~IK_VTD_GSTS_WBFS; /* flushes complete at once */
	VR(IK_VTD_REG_GSTS) = st;
	if (!(st & IK_VTD_GSTS_QIES))
		VR(IK_VTD_REG_IQH) = 0;
}

static ik_u32 vm_read32(void *ctx, ik_u32 off)
{
	struct vmodel *m = ctx;

	FZ_CHECK(off < VREGS && !(off & 3), "VT-d register read at %#x", off);
	if (off == IK_VTD_REG_FSTS && m->fsts && rng_next(&m->rng) % 3 == 0)
		VR(off) ^= (uint32_t)rng_next(&m->rng) & 0xff03u; /* PFO, PPF, FRI */
	return VR(off);
}

static void vm_write32(void *ctx, ik_u32 off, ik_u32 v)
{
	struct vmodel *m = ctx;
	uint32_t fro = (uint32_t)FLD(VR64(IK_VTD_REG_CAP), 33, 24) * 16;
	uint32_t nfr = (uint32_t)FLD(VR64(IK_VTD_REG_CAP), 47, 40) + 1;

	FZ_CHECK(off < VREGS && !(off & 3), "VT-d register write at %#x", off);
	FZ_CHECK(off >= IK_VTD_REG_GCMD && off != IK_VTD_REG_GSTS, "write to VT-d register %#x", off);
	switch (off) {
	case IK_VTD_REG_GCMD:
		VR(off) = v;
		vm_gcmd(m, v);
		return;
	case IK_VTD_REG_FSTS:
		VR(off) &= ~(v & 0x71u); /* RW1C: PFO, IQE, ICE, ITE */
		vm_consume(m);
		return;
	case IK_VTD_REG_IQT:
		VR(off) = v;
		vm_consume(m);
		return;
	}
	if (off >= fro && off < fro + 16 * nfr && (off - fro) % 16 == 12) {
		VR(off) &= ~(v & (1u << 31)); /* F is RW1C */
		return;
	}
	VR(off) = v;
}

static void op_vtd_dev(struct fz *f)
{
	static struct vmodel mstate;
	struct vmodel *m = &mstate;
	struct ik_mmio mmio = { vm_read32, vm_write32, NULL, NULL, m };
	struct fz_alloc fa;
	struct tdma td;
	struct ik_vtd_config cfg;
	struct ik_vtd_hwcaps hc;
	struct ik_vtd *u = NULL;
	uint64_t cap, ecap;
	uint8_t k;
	int r;

	memset(m, 0, sizeof(*m));
	mem_init(&fa, &td);
	m->dma = &td;
	vtd_caps_from(f, &hc);
	cap = hc.cap;
	ecap = hc.ecap;
	VR(IK_VTD_REG_VER) = 0x10;
	VR(IK_VTD_REG_CAP) = (uint32_t)cap;
	VR(IK_VTD_REG_CAP + 4) = (uint32_t)(cap >> 32);
	VR(IK_VTD_REG_ECAP) = (uint32_t)ecap;
	VR(IK_VTD_REG_ECAP + 4) = (uint32_t)(ecap >> 32);
	k = fz_u8(f);
	m->gsts = k & 3;
	m->iqh = (k >> 2) & 3;
	m->fsts = (k >> 4) & 1;
	m->good_gcmds = fz_u8(f) % 8;
	m->rng = fz_u64(f);
	if (k & 0x20)
		VR(IK_VTD_REG_GSTS) = fz_u32(f);
	/* Fault records: garbage where CAP says they are (inside the model). */
	for (uint32_t off = (uint32_t)hc.fro; off < VREGS && off < hc.fro + 16u * hc.nfr; off += 4)
		if (off >= 0x100)
			VR(off) = (uint32_t)rng_next(&m->rng);
	memset(&cfg, 0, sizeof(cfg));
	cfg.mmio = &mmio;
	cfg.dma = &td.d;
	cfg.alloc = &fa.a;
	k = fz_u8(f);
	cfg.haw = (k & 1) ? fz_u8(f) : 48;
	cfg.flags = (k >> 1) & 1;
	if (k & 4)
		cfg.flags |= fz_u32(f);
	cfg.qs = (k >> 3) & 7;
	if (k & 0x40)
		cfg.qs = fz_u8(f);
	cfg.pasid_bits = (k & 0x80) ? fz_u8(f) % 24 : 0;
	cfg.timeout_ns = TIMEOUT_NS;
	fz_alloc_arm(&fa, fz_u8(f) % 4);
	r = ik_vtd_create(&cfg, &u);
	FZ_TRACE("vtd create -> %d", r);
	if (r) {
		FZ_CHECK(r == -EINVAL || r == -EOPNOTSUPP || r == -ENOMEM, "vtd_create returned %d", r);
		FZ_CHECK(fa.live == 0 && td.nb == 0, "vtd_create failed and left memory");
		return;
	}
	FZ_CHECK(ik_vtd_caps(u)->qi && ik_vtd_caps(u)->domains, "created without QI or domains");
	for (unsigned step = 0; step < 12 && fz_left(f); step++) {
		uint8_t op = fz_u8(f);

		mem_arm(f, op, &fa, &td);
		switch (op % 6) {
		case 0:
			r = ik_vtd_enable(u);
			FZ_TRACE("vtd enable -> %d", r);
			FZ_CHECK(r == 0 || r == -EBUSY || r == -ENOMEM || r == -ERANGE ||
					 r == -ETIMEDOUT || r == -EIO,
				 "vtd_enable returned %d", r);
			/* (A unit whose GSTS is garbage can say anything after.) */
			if (!r && m->gsts != ACK_GARBAGE)
				FZ_CHECK((VR(IK_VTD_REG_GSTS) & (IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES)) ==
						 (IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES) &&
						 ik_vtd_queue(u) != NULL,
					 "enable succeeded but GSTS %#x", VR(IK_VTD_REG_GSTS));
			break;
		case 1:
			r = ik_vtd_disable(u);
			FZ_CHECK(r == 0 || r == -ETIMEDOUT, "vtd_disable returned %d", r);
			if (!r)
				FZ_CHECK(ik_vtd_queue(u) == NULL, "disabled but the queue is live");
			break;
		case 2: {
			struct ik_vtd_fault vf;

			for (unsigned i = 0; i < 4; i++) {
				r = ik_vtd_fault_pop(u, &vf);
				FZ_CHECK(r == 0 || r == -ENOENT, "fault_pop returned %d", r);
				if (r)
					break;
				FZ_CHECK(vf.index < hc.nfr, "fault record index %u of %u", vf.index, hc.nfr);
			}
			break;
		}
		case 3: {
			struct ik_vtd_attach a;
			struct ik_vtd_change chg;
			unsigned bus = fz_u8(f), devfn = fz_u8(f);

			memset(&a, 0, sizeof(a));
			a.pt = vtd_pt(fz_u8(f));
			a.did = fz_u8(f);
			a.flags = fz_u8(f) & 0xf;
			if (a.flags & IK_VTD_ATTACH_PASSTHROUGH)
				a.pt = NULL;
			r = ik_vtd_context_set(u, bus, devfn, &a, &chg);
			FZ_CHECK(r == 0 || r == -EINVAL || r == -EBUSY || r == -ENOMEM || r == -ERANGE ||
					 r == -EOPNOTSUPP,
				 "context_set returned %d", r);
			if (!r) {
				struct ik_vtd_plan p;

				if (ik_vtd_plan_change(ik_vtd_caps(u), ik_vtd_plan_flags(u), &chg, &p) == 0) {
					r = ik_vtd_plan_issue(u, &p);
					FZ_CHECK(r == 0 || r == -ENODEV || r == -ETIMEDOUT || r == -EIO,
						 "plan_issue returned %d", r);
				}
			}
			break;
		}
		case 4: {
			struct ik_vtd_change chg;

			r = ik_vtd_context_clear(u, fz_u8(f), fz_u8(f), &chg);
			FZ_CHECK(r == 0 || r == -EINVAL || r == -ENOENT || r == -EBUSY,
				 "context_clear returned %d", r);
			break;
		}
		case 5: {
			struct ik_vtd_target t;
			struct ik_vtd_plan p;

			memset(&t, 0, sizeof(t));
			t.pt = vtd_pt(fz_u8(f));
			t.did = fz_u8(f);
			if (ik_vtd_plan_range(ik_vtd_caps(u), ik_vtd_plan_flags(u), &t, fz_edgy(f),
					      fz_u32(f) + 1ull, fz_bool(f), &p) == 0) {
				r = ik_vtd_plan_issue(u, &p);
				FZ_CHECK(r == 0 || r == -ENODEV || r == -ETIMEDOUT || r == -EIO ||
						 r == -EINVAL,
					 "plan_issue returned %d", r);
			}
			break;
		}
		}
	}
	fz_alloc_arm(&fa, 0);
	td.fail_at = 0;
	ik_vtd_destroy(u);
	if (VR(IK_VTD_REG_GSTS) & (IK_VTD_GSTS_TES | IK_VTD_GSTS_QIES)) {
		/* A unit that would not let go keeps its DMA memory (documented). */
		td_release_all(&td);
	}
	FZ_CHECK(td.nb == 0, "vtd destroy left %d DMA blocks of a unit that let go", td.nb);
	FZ_CHECK(fa.live == 0, "vtd destroy left %ld bookkeeping blocks (GSTS %#x)", fa.live,
		 VR(IK_VTD_REG_GSTS));
}

/* ================================================================ AMD */

/* A small well-formed IVRS table: one IVHD of `type` with a range, a
 * select and an alias entry; bytes then changed by the input. */
static size_t ivrs_build(uint8_t *t, uint8_t type)
{
	size_t n = 48, h = n, hl = type == 0x10 ? 24 : 40;

	memset(t, 0, 256);
	memcpy(t, "IVRS", 4);
	t[h] = type;
	t[h + 8] = 0x00;
	t[h + 10] = 0xd8;	/* base 0xfed80000 */
	t[h + 11] = 0xfe;
	n += hl;
	t[n] = 0x03; t[n + 1] = 0x00; n += 4;		/* start of range 0 */
	t[n] = 0x04; t[n + 1] = 0xff; n += 4;		/* end of range 0xff */
	t[n] = 0x02; t[n + 1] = 0x18; n += 4;		/* select 0x18 */
	t[n] = 0x42; t[n + 1] = 0x20; t[n + 5] = 0x21; n += 8;	/* alias */
	t[h + 2] = (uint8_t)(n - h);
	t[4] = (uint8_t)n;
	return n;
}

static void ivrs_sum(uint8_t *t, size_t n)
{
	uint8_t s = 0;

	if (n < 10)
		return;
	t[9] = 0;
	for (size_t i = 0; i < n; i++)
		s = (uint8_t)(s + t[i]);
	t[9] = (uint8_t)(0 - s);
}

static void op_amd(struct fz *f)
{
	uint8_t buf[256], *copy;
	size_t n;
	struct ik_amd_ivrs_unit units[3], u0[3];
	struct ik_amd_ivrs_range rg[5], r0[5];
	struct ik_amd_ivrs out, o0;
	ik_u64 rec[2];
	struct ik_amd_event e, e0;
	struct ik_amd_ppr p, p0;
	struct ik_amd_hwcaps c;
	int r;

	switch (fz_u8(f) % 3) {
	case 0: /* raw bytes */
		n = fz_u8(f);
		for (size_t i = 0; i < n; i++)
			buf[i] = fz_u8(f);
		if (fz_bool(f))
			ivrs_sum(buf, n);
		break;
	default: { /* a good table, mutated, checksum repaired */
		unsigned k = fz_u8(f) % 8;

		n = ivrs_build(buf, fz_bool(f) ? 0x10 : 0x11);
		while (k--)
			buf[36 + fz_below(f, n - 36)] = fz_u8(f);
		if (fz_bool(f))
			n = 36 + fz_below(f, n - 35);	/* maybe truncated */
		ivrs_sum(buf, n);
		break;
	}
	}
	copy = malloc(n ? n : 1);
	FZ_CHECK(copy != NULL, "malloc");
	memcpy(copy, buf, n);
	memset(units, 0xa5, sizeof(units));
	memset(rg, 0x5a, sizeof(rg));
	memcpy(u0, units, sizeof(units));
	memcpy(r0, rg, sizeof(rg));
	memset(&out, 0x77, sizeof(out));
	out.units = fz_bool(f) ? units : NULL;
	out.max_units = out.units ? 1 + fz_below(f, 3) : 0;
	out.ranges = fz_bool(f) ? rg : NULL;
	out.max_ranges = out.ranges ? 1 + fz_below(f, 5) : 0;
	o0 = out;
	r = ik_amd_ivrs_parse(copy, n, &out);
	free(copy);
	FZ_CHECK(r == 0 || r == -EINVAL || r == -ENOSPC, "ivrs_parse returned %d", r);
	if (r == -EINVAL) {
		FZ_CHECK(!memcmp(&out, &o0, sizeof(out)) && !memcmp(units, u0, sizeof(units)) &&
				 !memcmp(rg, r0, sizeof(rg)),
			 "ivrs_parse -EINVAL wrote its output");
	} else {
		unsigned fu = out.nunits < out.max_units ? out.nunits : out.max_units;
		unsigned fr = out.nranges < out.max_ranges ? out.nranges : out.max_ranges;

		FZ_CHECK((r == -ENOSPC) == (out.nunits > out.max_units ||
					     out.nranges > out.max_ranges),
			 "ivrs_parse -ENOSPC iff a count exceeds its array");
		FZ_CHECK(n >= 48 && out.nunits <= 255, "ivrs_parse accepted %zu bytes, %u units",
			 n, out.nunits);
		for (unsigned i = 0; i < fu; i++)
			FZ_CHECK(units[i].type == 0x10 || units[i].type == 0x11 ||
					 units[i].type == 0x40,
				 "unit type %#x", units[i].type);
		for (unsigned i = 0; i < fr; i++)
			FZ_CHECK(rg[i].first <= rg[i].last && rg[i].unit < out.nunits,
				 "range %u: %#x..%#x unit %u of %u", i, rg[i].first, rg[i].last,
				 rg[i].unit, out.nunits);
		for (unsigned i = fu; i < 3; i++)
			FZ_CHECK(!memcmp(&units[i], &u0[i], sizeof(units[i])), "unit %u beyond", i);
		for (unsigned i = fr; i < 5; i++)
			FZ_CHECK(!memcmp(&rg[i], &r0[i], sizeof(rg[i])), "range %u beyond", i);
	}

	/* Records and the EFR. */
	rec[0] = fz_edgy(f);
	rec[1] = fz_u64(f);
	memset(&e, 0x3c, sizeof(e));
	e0 = e;
	r = ik_amd_event_decode(rec, &e);
	if (FLD(rec[0], 63, 60) > 0xa) {
		FZ_CHECK(r == -EINVAL && !memcmp(&e, &e0, sizeof(e)), "event code %llu: %d",
			 (unsigned long long)FLD(rec[0], 63, 60), r);
	} else if (!FLD(rec[0], 63, 60)) {
		FZ_CHECK(r == -ENOENT && e.code == 0 && e.addr == 0, "empty event: %d", r);
	} else {
		FZ_CHECK(r == 0 && e.code == FLD(rec[0], 63, 60) && e.addr == rec[1] &&
				 !e.overflow,
			 "event decode %d", r);
		FZ_CHECK(e.devid == 0 || e.devid == (ik_u16)rec[0], "event devid");
		FZ_CHECK(e.flags == 0 || e.flags == FLD(rec[0], 59, 48), "event flags");
		FZ_CHECK(!(e.domid && e.pasid), "event has both a DomainID and a PASID");
		FZ_CHECK(e.write == (e.flags >> 5 & 1) && e.gn == (e.flags & 1),
			 "event RW/GN off their flag bits");
		FZ_CHECK(ik_amd_event_name(e.code) != NULL, "no name for %u", e.code);
	}
	memset(&p, 0x3c, sizeof(p));
	p0 = p;
	r = ik_amd_ppr_decode(rec, &p);
	if (FLD(rec[0], 63, 60) > 1)
		FZ_CHECK(r == -EINVAL && !memcmp(&p, &p0, sizeof(p)), "ppr code: %d", r);
	else if (FLD(rec[0], 63, 60) == 1)
		FZ_CHECK(r == 0 && p.devid == (ik_u16)rec[0] && p.tag == FLD(rec[0], 40, 32) &&
				 p.pasid == (FLD(rec[0], 45, 42) << 16 | FLD(rec[0], 31, 16)) &&
				 p.addr == rec[1],
			 "ppr decode");
	else
		FZ_CHECK(r == -ENOENT, "empty ppr: %d", r);
	FZ_CHECK(ik_amd_hwcaps_decode(rec[1], &c) == 0 && c.efr == rec[1] &&
			 c.ppr == FLD(rec[1], 1, 1) && c.hats == FLD(rec[1], 11, 10) &&
			 c.pasmax == FLD(rec[1], 36, 32) &&
			 c.pasid_bits == (FLD(rec[1], 4, 4) ? FLD(rec[1], 36, 32) + 1 : 0),
		 "efr decode");
}

/* ================================================================ main */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f;

	fz_init(&f, data, size);
	for (unsigned step = 0; step < 64 && fz_left(&f); step++) {
		switch (fz_u8(&f) % 9) {
		case 0: op_idr(&f); break;
		case 1: op_ste(&f); break;
		case 2: op_cd(&f); break;
		case 3: op_records(&f); break;
		case 4: op_smmu_plan(&f); break;
		case 5: op_vtd_plan(&f); break;
		case 6: op_smmu_dev(&f); return 0;
		case 7: op_vtd_dev(&f); return 0;
		case 8: op_amd(&f); break;
		}
	}
	return 0;
}
