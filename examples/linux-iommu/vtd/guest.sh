#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# guest.sh - the VT-d Linux guest checks of issue 24, end to end:
#   1. apt-get download (into the package cache, nothing installed) Debian
#      12's newest linux-image-6.12.*+deb12-amd64-unsigned and the matching
#      linux-headers (-amd64, -common) and linux-kbuild; unpack them (from
#      the image only the kernel and the modules the guest loads); point
#      the headers' Makefile at the unpacked -common
#      package (it names /usr/src by absolute path);
#   2. build ikvtd.ko against them (-Werror, BTF for modules off: no pahole
#      needed) and a static /init (guest-init.c), and pack an initramfs with
#      ikvtd.ko and the kernel's nvme-auth, nvme-core and nvme modules;
#   3. boot qemu-system-x86_64 -M q35 with -device intel-iommu,intremap=off,
#      an NVMe disk and edu, kernel arguments intel_iommu=off intremap=off,
#      five times (TCG; each boot under a timeout):
#        cm-off-lazy    caching-mode=off, iommu.strict=0 (the core's flush queue)
#        cm-on-strict   caching-mode=on,  iommu.strict=1
#        sm-cm-on-strict  the same in scalable mode (x-scalable-mode=on,
#                       ikvtd scalable=1)
#        in-tree        caching-mode=on, the in-tree driver: intel_iommu=on
#                       iommu.strict=1, no ikvtd; vfio-edu too (what
#                       examples/vfio-edu/guest.sh checks, in this boot)
#        in-tree-lazy   caching-mode=off, the in-tree driver, iommu.strict=0
#      In each: 3 x 16 MiB random O_DIRECT write + read back (checksum), the
#      dma-map benchmark (ikdmabench.ko: dma_map_single, dma_map_sg); with
#      ikvtd also the map-sync check, the edu test (DMA through the domain;
#      a DMA to an unmapped IOVA and one into a buffer unmapped while the
#      DMA was pending: one decoded fault each, the buffer untouched),
#      examples/vfio-edu's program on edu through vfio-pci and
#      vfio_iommu_type1 (allow_unsafe_interrupts=1) over ikvtd's domains
#      (each of its checks a TAP line; ikvtd's report of its DMA after
#      UNMAP_DMA names edu's BDF), the
#      refused unregister while nvme is bound, nvme removal and ikvtd unload
#      (translation and QI off, no DMA page left);
#   4. QEMU's trace events (vtd_inv_desc*) count the invalidation
#      descriptors and waits the unit executed over each whole boot; the
#      table at the end gives I/O time and commands/syncs per MiB of I/O
#      for both drivers.
# Prints one TAP line per check, then "# PASS: N" / "# FAIL: N"; exit 1 if a
# check failed, 77 with one "1..0 # SKIP" line when the packages or QEMU
# cannot be had.  Host tools: gcc with a static libc (libc6-dev), make,
# apt-get, dpkg-deb, xz, flock, qemu-system-x86 (7.2).  The download cache,
# TAP helpers and QEMU boot are examples/linux-iommu/guest-lib.sh's.
# Environment: IK_LVTD_OUT (default _build-lvtd in the tree),
# IK_GUEST_CACHE (the downloaded packages, default $IK_LVTD_OUT/debs; make
# check shares one with the other guest scripts), IK_LVTD_TIMEOUT
# (seconds per boot, default 120: a boot takes 10-20 s), IK_HIL=0 (skip, as tests/qemu-hil.sh
# does), IK_LVTD_REQUIRE=1 (a skip is a failure: for CI).  make check runs it
# through tests/linux-vtd-guest.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
gl_out=${IK_LVTD_OUT:-$top/_build-lvtd} gl_what="ikvtd guest" gl_require=${IK_LVTD_REQUIRE:-0} gl_init_mark="IKT: "
. "$top/examples/linux-iommu/guest-lib.sh"
out=$gl_out
tmo=${IK_LVTD_TIMEOUT:-120}
gl_init
gl_need gcc cc make xz timeout truncate flock qemu-system-x86_64 apt-get dpkg-deb

# ---- 1. packages
ver=$(gl_kver amd64)
[ -n "$ver" ] || gl_skip "apt knows no linux-image-6.12.*+deb12-amd64-unsigned (bookworm-security/backports in sources?)"
krel=$ver-amd64
pkgs="linux-image-$krel-unsigned linux-headers-$krel linux-headers-$ver-common linux-kbuild-$ver"
gl_fetch $pkgs
root=$out/root
# From the kernel image only what the guest uses: the kernel, the NVMe
# modules and vfio-edu's (unpacking all of it took longer than a boot).
nvme_mods="drivers/nvme/common/nvme-auth drivers/nvme/host/nvme-core drivers/nvme/host/nvme"
vfio_mods="virt/lib/irqbypass drivers/vfio/vfio drivers/vfio/vfio_iommu_type1
	drivers/vfio/pci/vfio-pci-core drivers/vfio/pci/vfio-pci"
if [ ! -f "$root/.done-$ver-min" ]; then
	rm -rf "$root" && mkdir -p "$root"
	for p in $pkgs; do
		case $p in linux-image-*) continue ;; esac
		dpkg-deb -x "$(gl_deb "$p")" "$root" || gl_skip "cannot unpack $p"
	done
	dpkg-deb --fsys-tarfile "$(gl_deb "linux-image-$krel-unsigned")" | tar -x -C "$root" "./boot/vmlinuz-$krel" \
		$(for m in $nvme_mods $vfio_mods; do echo "./lib/modules/$krel/kernel/$m.ko.xz"; done) ||
		gl_skip "cannot unpack linux-image-$krel-unsigned"
	touch "$root/.done-$ver-min"
fi
kdir=$root/usr/src/linux-headers-$krel
sed -i "s|^include /usr/src/|include $root/usr/src/|" "$kdir/Makefile"
kernel=$root/boot/vmlinuz-$krel
echo "# kernel $krel (packages in $gl_cache)"

# ---- 2. module, /init, initramfs
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$here" KDIR="$kdir" BUILD="$out/mod" -j2 > "$out/kbuild.log" 2>&1 && [ -f "$out/mod/ikvtd.ko" ]; then
	ok "ikvtd.ko builds against linux-headers-$krel with -Werror"
	if grep -E 'warning:|WARNING:' "$out/kbuild.log" | sed 's/^/#   /' | grep .; then
		notok "ikvtd.ko build prints no warning (modpost included)"
	else
		ok "ikvtd.ko build prints no warning (modpost included)"
	fi
else
	notok "ikvtd.ko builds against linux-headers-$krel with -Werror"
	tail -n 30 "$out/kbuild.log" | sed 's/^/#   /'
	gl_finish
fi
mkdir -p "$out/boot"
gcc -static -O2 -Wall -Wextra -o "$out/boot/init" "$here/guest-init.c" ||
	{ notok "guest /init builds (static libc: libc6-dev)"; gl_finish; }
gl_mkcpio
for m in $nvme_mods; do
	xz -dc "$root/lib/modules/$krel/kernel/$m.ko.xz" > "$out/boot/$(basename "$m").ko" ||
		{ notok "unpack $m.ko"; gl_finish; }
done
# examples/vfio-edu's program and the VFIO modules (compressed: the guest
# loads them with MODULE_INIT_COMPRESSED_FILE).
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top/examples/vfio-edu" OUT="$out/vfio" \
	"$out/vfio/vfio-edu" > "$out/vfio-build.log" 2>&1; then
	ok "vfio-edu builds static with -Werror"
else
	notok "vfio-edu builds static with -Werror"
	tail -n 20 "$out/vfio-build.log" | sed 's/^/#   /'
	gl_finish
fi
set -- vfio-edu="$out/vfio/vfio-edu"
for m in $vfio_mods; do
	set -- "$@" "$(basename "$m").ko.xz=$root/lib/modules/$krel/kernel/$m.ko.xz"
done
"$out/mkcpio" "$out/boot/initramfs.cpio" init="$out/boot/init" ikvtd.ko="$out/mod/ikvtd.ko" \
	nvme-auth.ko="$out/boot/nvme-auth.ko" nvme-core.ko="$out/boot/nvme-core.ko" \
	nvme.ko="$out/boot/nvme.ko" ikdmabench.ko="$out/mod/ikdmabench.ko" "$@" || { notok "initramfs"; gl_finish; }
truncate -s 64M "$out/boot/nvme.img"

# ---- 3. boots
# boot NAME IOMMU-OPTS APPEND: console in $out/NAME.log, QEMU trace in $out/NAME.trace.
boot() {
	local name=$1 vtd=$2 append=$3
	rm -f "$out/$name.trace"
	gl_boot "$name" "$tmo" qemu-system-x86_64 -M q35 -m 512 -smp 2 -nographic -no-reboot -nic none \
		-vga none -device intel-iommu,intremap=off,"$vtd" \
		-drive file="$out/boot/nvme.img",if=none,id=nvm,format=raw \
		-device nvme,drive=nvm,serial=ikvtd,addr=03.0 -device edu,addr=04.0 \
		-kernel "$kernel" -initrd "$out/boot/initramfs.cpio" \
		-trace 'vtd_inv_desc*' -trace pci_cfg_read -D "$out/$name.trace" \
		-append "console=ttyS0 quiet panic=-1 $append"
	mv -f "$out/$name.log" "$out/$name.clog"
	sed -n 's/^.*IKT: \(not ok\|ok\) - /\1 - /p' "$out/$name.clog" | while IFS= read -r l; do
		echo "$l"
	done > "$out/$name.tap"
	local got=0 line
	while IFS= read -r line; do
		got=1
		case $line in
		"ok - "*) ok "$name: ${line#ok - }" ;;
		*) notok "$name: ${line#not ok - }" ;;
		esac
	done < "$out/$name.tap"
	[ "$got" -eq 1 ] || { notok "$name: guest produced no result"; tail -n 20 "$out/$name.clog" | sed 's/^/#   /'; }
	grep -a 'IKT: #' "$out/$name.clog" | sed "s/^.*IKT: # /#   $name: /"
	gl_no_oops "$name" "$out/$name.clog"
}
io_ms() { sed -n 's/^.*IKT: io .*median_ms \([0-9.]*\).*/\1/p' "$out/$1.clog" | head -1; }
io_mib() { sed -n 's/^.*IKT: io .* mib \([0-9]*\) .*/\1/p' "$out/$1.clog" | head -1; }
stat_io() { sed -n "s/^.*IKT: stat $2 \([0-9-]*\) .*/\1/p" "$out/$1.clog" | head -1; }

base="intel_iommu=off intremap=off ikt=ikvtd"
boot cm-off-lazy caching-mode=off "$base iommu.strict=0"
grep -aq 'nvme domain: DMA-FQ' "$out/cm-off-lazy.clog" && ok "cm-off-lazy: nvme's default domain is DMA-FQ (deferred flush)" ||
	notok "cm-off-lazy: nvme's default domain is DMA-FQ (deferred flush)"
boot cm-on-strict caching-mode=on "$base iommu.strict=1"
grep -aq 'nvme domain: DMA$' "$out/cm-on-strict.clog" && ok "cm-on-strict: nvme's default domain is DMA (strict)" ||
	notok "cm-on-strict: nvme's default domain is DMA (strict)"
boot sm-cm-on-strict x-scalable-mode=on,caching-mode=on "$base iommu.strict=1 ikp=scalable=1"
grep -aq 'ikvtd: unit at .* scalable mode' "$out/sm-cm-on-strict.clog" &&
	ok "sm-cm-on-strict: ikvtd ran the unit in scalable mode (PASID entries, 256-bit descriptors)" ||
	notok "sm-cm-on-strict: ikvtd ran the unit in scalable mode (PASID entries, 256-bit descriptors)"
for b in cm-off-lazy cm-on-strict sm-cm-on-strict; do
	# The edu test's faults: those reported before vfio-edu runs.
	nf=$(sed '/IKT: # vfio-edu start/q' "$out/$b.clog" | grep -ac 'ikvtd: DMA fault:')
	[ "$nf" -eq 2 ] && ok "$b: each of the 2 faulting DMAs was reported exactly once" ||
		notok "$b: each of the 2 faulting DMAs was reported exactly once (got $nf records)"
	grep -a 'ikvtd: DMA fault:' "$out/$b.clog" | sed "s/^.*ikvtd: /#   $b: /"
	if grep -aq 'ikvtd: unit off: GSTS 0x[0-9a-f]* (TE 0, QIES 0), 0 DMA pages still allocated' "$out/$b.clog"; then
		ok "$b: after unload translation and QI are off and no DMA page is left"
	else
		notok "$b: after unload translation and QI are off and no DMA page is left"
	fi
	grep -a 'ikvtd: unit off' "$out/$b.clog" | sed "s/^.*ikvtd: /#   $b: /"
done
boot in-tree caching-mode=on "intel_iommu=on intremap=off iommu.strict=1 ikt=intree ikvfio=1"
grep -aq 'nvme domain: DMA$' "$out/in-tree.clog" &&
	ok "in-tree: the in-tree driver translates nvme (strict DMA domain)" ||
	notok "in-tree: the in-tree driver translates nvme (strict DMA domain)"
boot in-tree-lazy caching-mode=off "intel_iommu=on intremap=off iommu.strict=0 ikt=intree"
grep -aq 'nvme domain: DMA-FQ' "$out/in-tree-lazy.clog" &&
	ok "in-tree-lazy: the in-tree driver translates nvme (DMA-FQ domain)" ||
	notok "in-tree-lazy: the in-tree driver translates nvme (DMA-FQ domain)"

# ---- 4. the table
# qwin NAME: "commands waits" QEMU executed in the I/O window (between the
# guest's edu config reads at 0xf8 and 0xfc).
qwin() {
	awk '/^pci_cfg_read edu .*@0xf8 / { w = 1; next }
	     /^pci_cfg_read edu .*@0xfc / { w = 0; next }
	     w && /^vtd_inv_desc invalidate desc type / { if ($5 == "wait") s++; else c++ }
	     END { printf "%d %d\n", c, s }' "$out/$1.trace"
}
mib() { awk -v c="$1" -v m="${2:-96}" 'BEGIN { printf "%.2f", c / m }'; }
echo "# I/O: 3 rounds of 16 MiB written + 16 MiB read with O_DIRECT (96 MiB); io_ms: the median round."
echo "# qemu_*: the descriptors QEMU's intel-iommu executed over the rounds (trace events vtd_inv_desc,"
echo "# between the guest's marker reads of edu's config space); ikvtd_*: the module's own counters."
printf '#   %-16s %8s %14s %15s %15s %16s\n' run io_ms qemu_cmds/MiB qemu_syncs/MiB ikvtd_cmds/MiB ikvtd_syncs/MiB
for b in cm-off-lazy in-tree-lazy cm-on-strict sm-cm-on-strict in-tree; do
	[ -f "$out/$b.trace" ] || continue
	set -- $(qwin "$b")
	ic=$(stat_io "$b" cmds) is=$(stat_io "$b" syncs) m=$(io_mib "$b")
	printf '#   %-16s %8s %14s %15s %15s %16s\n' "$b" "$(io_ms "$b")" "$(mib "$1" "$m")" "$(mib "$2" "$m")" \
		"${ic:+$(mib "$ic" "$m")}" "${is:+$(mib "$is" "$m")}"
done
echo "# dma-map benchmark on edu (ikdmabench.ko: ns per map / unmap, p50 p99, 2 threads x 2000):"
for b in cm-off-lazy in-tree-lazy cm-on-strict sm-cm-on-strict in-tree; do
	grep -aE 'ikdmabench: (single|sg)' "$out/$b.clog" 2> /dev/null | sed "s/^.*ikdmabench: /#   $(printf '%-16s' "$b") /"
done
gl_finish
