/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * AMD IOMMU driver core (<iommukit/drv/amd.h>): the ACPI IVRS table parser.
 *
 * The table is firmware's, or a guest's (a VMM parsing what it is given):
 * hostile bytes.  One walk does it all twice - first only checking and
 * counting (emit = false), then, once the table is known to be well
 * formed, filling the caller's arrays - so that a bad table writes
 * nothing.  Every length is compared against what is left of its
 * container (left = end - off, never off + len > end), so no sum can wrap.
 */
#include <iommukit/drv/amd.h>

#define HDR_LEN 36u	/* the ACPI header */
#define IVRS_FIRST 48u	/* the first block: header, IVinfo, 8 reserved */
#define IVHD_LEN_10H 24u	/* type 10h IVHD header */
#define IVHD_LEN_11H 40u	/* types 11h and 40h */

static ik_u32 le16(const ik_u8 *p)
{
	return (ik_u32)p[0] | (ik_u32)p[1] << 8;
}

static ik_u32 le32(const ik_u8 *p)
{
	return le16(p) | le16(p + 2) << 16;
}

static ik_u64 le64(const ik_u8 *p)
{
	return (ik_u64)le32(p) | (ik_u64)le32(p + 4) << 32;
}

struct walk {
	struct ik_amd_ivrs *out;
	bool emit;
	unsigned nunits, nranges;
};

static void ivrs_add_range(struct walk *w, ik_u32 first, ik_u32 last, ik_u32 alias, bool alias_valid,
			   ik_u8 setting, ik_u8 kind)
{
	if (w->emit && w->nranges < w->out->max_ranges) {
		struct ik_amd_ivrs_range *r = &w->out->ranges[w->nranges];

		r->first = (ik_u16)first;
		r->last = (ik_u16)last;
		r->alias = (ik_u16)(alias_valid ? alias : first);
		r->alias_valid = alias_valid;
		r->setting = setting;
		r->unit = (ik_u8)(w->nunits - 1);
		r->kind = kind;
	}
	w->nranges++;
}

/* Device entries of one IVHD: [p, p + len). */
static int ivhd_entries(struct walk *w, const ik_u8 *p, ik_size len)
{
	ik_size off = 0;
	bool open = false;
	ik_u32 start = 0, alias = 0;
	ik_u8 setting = 0, kind = 0;
	bool alias_valid = false;

	while (off < len) {
		ik_size left = len - off, n;
		ik_u8 t = p[off];
		const ik_u8 *e = p + off;

		if (t < 0x40)
			n = 4;
		else if (t < 0x80)
			n = 8;
		else if (t == 0xf0) {
			/* ACPI HID device: 22 bytes, then UID Length bytes. */
			if (left < 22)
				return -EINVAL;
			n = 22u + e[21];
		} else {
			return -EINVAL; /* 80h..EFh, F1h..FFh: no size defined */
		}
		if (n > left)
			return -EINVAL;
		switch (t) {
		case 0x01: /* all */
			if (open)
				return -EINVAL;
			ivrs_add_range(w, 0, IK_AMD_MAX_DEVID, 0, false, e[3], t);
			break;
		case 0x02: /* select */
		case 0x46: /* extended select */
			if (open)
				return -EINVAL;
			ivrs_add_range(w, le16(e + 1), le16(e + 1), 0, false, e[3], t);
			break;
		case 0x42: /* alias select */
			if (open)
				return -EINVAL;
			ivrs_add_range(w, le16(e + 1), le16(e + 1), le16(e + 5), true, e[3], t);
			break;
		case 0x48: /* special device (IOAPIC, HPET) */
			if (open)
				return -EINVAL;
			ivrs_add_range(w, le16(e + 5), le16(e + 5), 0, false, e[3], t);
			break;
		case 0x03: /* start of range */
		case 0x43: /* alias start of range */
		case 0x47: /* extended start of range */
			if (open)
				return -EINVAL;
			open = true;
			start = le16(e + 1);
			setting = e[3];
			kind = t;
			alias_valid = t == 0x43;
			alias = alias_valid ? le16(e + 5) : 0;
			break;
		case 0x04: /* end of range */
			if (!open || le16(e + 1) < start)
				return -EINVAL;
			open = false;
			ivrs_add_range(w, start, le16(e + 1), alias, alias_valid, setting, kind);
			break;
		default: /* 00h padding, reserved and ACPI HID entries: no DeviceID run */
			break;
		}
		off += n;
	}
	return open ? -EINVAL : 0;
}

static int walk_table(struct walk *w, const ik_u8 *t, ik_size len)
{
	ik_size off = IVRS_FIRST;

	while (off < len) {
		ik_size left = len - off, blen, hlen;
		const ik_u8 *b = t + off;
		ik_u8 type;
		int err;

		if (left < 4)
			return -EINVAL;
		type = b[0];
		blen = le16(b + 2);
		if (blen < 4 || blen > left)
			return -EINVAL;
		if (type == 0x10 || type == 0x11 || type == 0x40) {
			hlen = type == 0x10 ? IVHD_LEN_10H : IVHD_LEN_11H;
			if (blen < hlen)
				return -EINVAL;
			if (w->nunits == 255)
				return -EINVAL;
			if (w->emit && w->nunits < w->out->max_units) {
				struct ik_amd_ivrs_unit *u = &w->out->units[w->nunits];

				u->type = type;
				u->flags = b[1];
				u->devid = (ik_u16)le16(b + 4);
				u->cap_off = (ik_u16)le16(b + 6);
				u->base = le64(b + 8);
				u->segment = (ik_u16)le16(b + 16);
				u->info = (ik_u16)le16(b + 18);
				u->attr = le32(b + 20);
				u->have_efr = type != 0x10;
				u->efr = u->have_efr ? le64(b + 24) : 0;
			}
			w->nunits++;
			err = ivhd_entries(w, b + hlen, blen - hlen);
			if (err)
				return err;
		}
		/* IVMD (20h..22h) and unknown blocks: skipped by their Length. */
		off += blen;
	}
	return 0;
}

IK_API int ik_amd_ivrs_parse(const void *table, ik_size len, struct ik_amd_ivrs *out)
{
	const ik_u8 *t = (const ik_u8 *)table;
	struct walk w;
	ik_u8 sum = 0;
	int err;

	if (!table || !out || (!out->units && out->max_units) ||
	    (!out->ranges && out->max_ranges) || len < IVRS_FIRST)
		return -EINVAL;
	if (t[0] != 'I' || t[1] != 'V' || t[2] != 'R' || t[3] != 'S' || le32(t + 4) != len)
		return -EINVAL;
	for (ik_size i = 0; i < len; i++)
		sum = (ik_u8)(sum + t[i]);
	if (sum)
		return -EINVAL;
	IK_ENV_MEMSET(&w, 0, sizeof(w));
	w.out = out;
	err = walk_table(&w, t, len);
	if (err)
		return err;
	w.emit = true;
	w.nunits = w.nranges = 0;
	err = walk_table(&w, t, len);
	if (err) /* the same bytes: cannot differ from the first walk */
		return err;
	out->ivinfo = le32(t + HDR_LEN);
	out->nunits = w.nunits;
	out->nranges = w.nranges;
	return (w.nunits > out->max_units || w.nranges > out->max_ranges) ? -ENOSPC : 0;
}
