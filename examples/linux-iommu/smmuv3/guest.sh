#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# guest.sh - the SMMUv3 Linux driver (iks_smmuv3.ko, over iommukit) booted
# in Debian 12's arm64 6.12 kernel under qemu-system-aarch64 -M
# virt,iommu=smmuv3, end to end from a fresh checkout:
#   1. apt-get download (into the package cache; nothing installed): the newest
#      linux-image-6.12.*+deb12-arm64-unsigned:arm64, its headers and
#      -common, the amd64 linux-kbuild of that version (host tools for the
#      cross build), busybox-static:arm64;
#   2. builds iks_smmuv3.ko and iks_edu.ko (cross, aarch64-linux-gnu-gcc);
#   3. boots three times, each with virtio-blk-pci (iommu_platform=on) and
#      edu behind the SMMU, an initramfs whose /init (busybox sh) loads the
#      modules before virtio-blk binds, and a timeout:
#        iommukit strict   initcall_blacklist=arm_smmu_driver_init: load
#                          iks_smmuv3, virtio_blk; 16 MiB random O_DIRECT
#                          write + read back + checksum; edu DMA and a DMA
#                          to an unmapped IOVA (fault check); vfio-edu
#                          (examples/vfio-edu, cross-built static) through
#                          vfio-pci over iks_smmuv3's domains, each of its
#                          checks a TAP line, and the driver's report of
#                          its DMA after UNMAP_DMA naming edu; a small DMA
#                          map benchmark on edu; remove the devices, unload
#                          the module (SMMU disabled with GBPA.ABORT
#                          written, nothing leaked);
#        iommukit lazy     the same with iommu.strict=0 (flush queue) and the
#                          event queue polled, without the unload;
#        in-tree           the kernel's arm-smmu-v3 with iommu.strict=1, the
#                          same I/O and benchmark, for the comparison;
#   4. prints one TAP line per check, the comparison table (I/O time; SMMU
#      commands and CMD_SYNCs per MiB and per DMA unmap: commands from QEMU's
#      smmuv3_cmdq_opcode trace over the dd's window, unmaps from the guest's
#      iommu:unmap tracepoint), then "# PASS: N" / "# FAIL: N"; exit 1 if a check
#      failed, 77 with one "1..0 # SKIP" line when the tools or packages are
#      missing (IK_LSMMU_REQUIRE=1 makes that a failure, for CI; IK_HIL=0
#      skips, as tests/qemu-hil.sh does).
# Needs: qemu-system-aarch64 (qemu-system-arm), gcc-aarch64-linux-gnu, apt
# with arm64 as a foreign architecture (dpkg --add-architecture arm64 &&
# apt-get update), xz-utils, flock, a host cc (mkcpio).  The download cache,
# TAP helpers and QEMU boot are examples/linux-iommu/guest-lib.sh's.
# Environment: IK_LSMMU_OUT (default _build-lsmmu), IK_GUEST_CACHE (the
# downloaded packages, default $IK_LSMMU_OUT/debs; make check shares one
# with the other guest scripts), IK_LSMMU_TIMEOUT (per boot, default 120 s),
# IK_JOBS (default 2).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
gl_out=${IK_LSMMU_OUT:-$top/_build-lsmmu} gl_what="smmuv3 guest" gl_require=${IK_LSMMU_REQUIRE:-0} gl_init_mark="IKS: "
. "$top/examples/linux-iommu/guest-lib.sh"
out=$gl_out
tmo=${IK_LSMMU_TIMEOUT:-120}
jobs=${IK_JOBS:-2}
gl_init
# aarch64-linux-gnu-gcc-12: the compiler the headers' .kernelvariables names.
gl_need qemu-system-aarch64 aarch64-linux-gnu-gcc-12 aarch64-linux-gnu-gcc apt-get dpkg-deb xz cc make flock timeout
dpkg --print-foreign-architectures | grep -qx arm64 ||
	gl_skip "arm64 is not an apt architecture (dpkg --add-architecture arm64 && apt-get update)"

# ---- 1. packages
ver=$(gl_kver arm64)
[ -n "$ver" ] || gl_skip "apt has no linux-image-6.12.*+deb12-arm64-unsigned"
krel=$ver-arm64
root=$out/root
# vfio-edu's modules, in load order (arm64's irqbypass is built in)
vfio_mods="drivers/vfio/vfio drivers/vfio/vfio_iommu_type1 drivers/vfio/pci/vfio-pci-core
	drivers/vfio/pci/vfio-pci"
pkgs="linux-image-$krel-unsigned:arm64 linux-headers-$krel:arm64 linux-headers-$ver-common
	linux-kbuild-$ver:$(dpkg --print-architecture) busybox-static:arm64"
gl_fetch $pkgs
if [ ! -f "$root/.done-$ver-vfio" ]; then
	rm -rf "$root" && mkdir -p "$root"
	for p in $pkgs; do
		case $p in linux-image-*) continue ;; esac
		dpkg-deb -x "$(gl_deb "$p")" "$root" || gl_skip "cannot unpack $p"
	done
	dpkg-deb --fsys-tarfile "$(gl_deb "linux-image-$krel-unsigned:arm64")" | tar -x -C "$root" \
		"./boot/vmlinuz-$krel" "./lib/modules/$krel/kernel/drivers/block/virtio_blk.ko.xz" \
		$(for m in $vfio_mods; do echo "./lib/modules/$krel/kernel/$m.ko.xz"; done) ||
		gl_skip "cannot unpack linux-image-$krel-unsigned"
	xz -d "$root/lib/modules/$krel/kernel/drivers/block/virtio_blk.ko.xz"
	for m in $vfio_mods; do xz -d "$root/lib/modules/$krel/kernel/$m.ko.xz"; done
	# The headers' Makefile includes the -common one by absolute path.
	sed -i "s|^include /usr/src/|include $root/usr/src/|" "$root/usr/src/linux-headers-$krel/Makefile"
	touch "$root/.done-$ver-vfio"
fi
echo "# kernel $krel (packages in $gl_cache); time so far $((SECONDS - gl_t0)) s"

# ---- 2. modules
kb=$out/kbuild
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -j"$jobs" -C "$here" KDIR="$root/usr/src/linux-headers-$krel" BUILD="$kb" \
	CONFIG_DEBUG_INFO_BTF_MODULES= > "$out/kbuild.log" 2>&1 &&
	[ -f "$kb/iks_smmuv3.ko" ] && [ -f "$kb/iks_edu.ko" ] &&
	! grep -qE 'warning:|WARNING:' "$out/kbuild.log"; then
	ok "iks_smmuv3.ko and iks_edu.ko build for $krel with -Werror, no warning"
else
	notok "iks_smmuv3.ko and iks_edu.ko build for $krel with -Werror, no warning"
	grep -E 'error|warning|ERROR|WARNING' "$out/kbuild.log" | head -n 20 | sed 's/^/#   /'
	gl_finish
fi
# examples/vfio-edu's program, static for aarch64
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top/examples/vfio-edu" CC=aarch64-linux-gnu-gcc \
	OUT="$out/vfio" "$out/vfio/vfio-edu" > "$out/vfio-build.log" 2>&1; then
	ok "vfio-edu cross-builds static for aarch64 with -Werror"
else
	notok "vfio-edu cross-builds static for aarch64 with -Werror"
	tail -n 20 "$out/vfio-build.log" | sed 's/^/#   /'
	gl_finish
fi
echo "# time so far $((SECONDS - gl_t0)) s"

# ---- 3. initramfs and boots
gl_mkcpio
cat > "$out/init" <<'EOF'
#!/busybox sh
/busybox mkdir -p /bin /proc /sys /dev /tmp
/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs none /sys/kernel/debug
say() { echo "IKS: $*"; }
check() { if "$@" > /tmp/out 2>&1; then say "ok - $D"; else say "not ok - $D"; sed 's/^/IKS: #   /' /tmp/out | head -n 20; fi; }
stat() { sed -n "s/^$1 //p" /sys/kernel/debug/iks_smmuv3/stats 2> /dev/null || echo 0; }
ms() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }
mode=$(sed -n 's/.*iks_mode=\([a-z]*\).*/\1/p' /proc/cmdline)
say "# mode $mode, $(uname -r)"
if [ "$mode" != intree ]; then
	D="insmod iks_smmuv3.ko: the SMMU probes, resets and registers"
	# lazy: the event queue by the bounded poll instead of its interrupt
	p=; [ "$mode" = lazy ] && p=force_poll=1
	check sh -c "insmod /iks_smmuv3.ko $p && dmesg | grep -q 'iks_smmuv3 (iommukit.*translating'"
	dmesg | grep -E "iks_smmuv3|event queue" | sed 's/^/IKS: #   /'
fi
insmod /virtio_blk.ko
i=0; while [ ! -b /dev/vda ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
D="virtio-blk (iommu_platform=on) is behind the IOMMU in a DMA domain"
vdev=$(basename "$(readlink -f /sys/block/vda/device/..)" 2> /dev/null)
check sh -c "test -b /dev/vda && t=\$(cat /sys/bus/pci/devices/$vdev/iommu_group/type) && echo \$t && case \$t in DMA*) true;; *) false;; esac"
say "# virtio-blk $vdev group type $(cat /sys/bus/pci/devices/$vdev/iommu_group/type 2> /dev/null)"
D="the group's reserved regions include the software MSI window"
check sh -c "cat /sys/bus/pci/devices/$vdev/iommu_group/reserved_regions; grep -q '0x0000000008000000 0x00000000080fffff msi' /sys/bus/pci/devices/$vdev/iommu_group/reserved_regions"
head -c 16777216 /dev/urandom > /tmp/pat
# The iommu core's unmap tracepoint counts the DMA unmaps (in strict mode
# each one must cost one invalidation and one CMD_SYNC), for either driver.
T=/sys/kernel/tracing
mount -t tracefs none $T
echo 1 > $T/events/iommu/unmap/enable
m0=$(stat map_calls) u0=$(stat unmap_calls) t0c=$(stat tlbi_cmds) s0=$(stat syncs)
t0=$(ms)
dd if=/tmp/pat of=/dev/vda bs=1M count=16 oflag=direct 2> /tmp/dd1 && sync &&
	dd if=/dev/vda of=/tmp/back bs=1M count=16 iflag=direct 2> /tmp/dd2
rc=$?
t1=$(ms)
echo 0 > $T/events/iommu/unmap/enable
# The end of the window in QEMU's trace: a read of sector 60000, which the
# dd does not touch (its unmaps all happened before dd returned).
dd if=/dev/vda of=/dev/null bs=512 count=1 skip=60000 iflag=direct 2> /dev/null
unm=$(sed -n 's/.*entries-written: [0-9]*\/\([0-9]*\).*/\1/p' $T/trace | head -n 1)
D="16 MiB random O_DIRECT write + read back through the IOMMU, checksums equal"
check sh -c "[ $rc -eq 0 ] && [ \"\$(sha256sum < /tmp/pat)\" = \"\$(sha256sum < /tmp/back)\" ]"
say "# io ms $((t1 - t0)) maps $(( $(stat map_calls) - m0 )) unmaps $(( $(stat unmap_calls) - u0 )) tlbi $(( $(stat tlbi_cmds) - t0c )) syncs $(( $(stat syncs) - s0 )) iommu_unmaps ${unm:-0} mib 32"
rm -f /tmp/pat /tmp/back
# The same set of DMA unmaps for every driver (1..64 pages, 8 rounds, on
# edu), between two marker reads (sectors 60008 and 60016) for QEMU's trace.
dd if=/dev/vda of=/dev/null bs=512 count=1 skip=60008 iflag=direct 2> /dev/null
echo > $T/trace
echo 1 > $T/events/iommu/unmap/enable
insmod /iks_edu.ko bench=8
echo 0 > $T/events/iommu/unmap/enable
bunm=$(sed -n 's/.*entries-written: [0-9]*\/\([0-9]*\).*/\1/p' $T/trace | head -n 1)
dd if=/dev/vda of=/dev/null bs=512 count=1 skip=60016 iflag=direct 2> /dev/null
rmmod iks_edu
dmesg | grep "iks-edu: # bench" | sed 's/^.*iks-edu: /IKS: /'
say "# bench iommu_unmaps ${bunm:-0}"
D="the DMA benchmark maps and unmaps 512 ranges of 1..64 pages (iommu:unmap tracepoint: ${bunm:-0})"
check sh -c "[ ${bunm:-0} -eq 512 ] && ! dmesg | grep -q 'iks-edu: not ok - bench'"
if [ "$mode" != intree ]; then
	f0=$(stat faults)
	insmod /iks_edu.ko
	sleep 1
	dmesg | grep "iks-edu: " | grep -v "# bench" | sed 's/^.*iks-edu: /IKS: /'
	f1=$(stat faults)
	D="the DMA fault is decoded and reported (F_TRANSLATION event, faults counter $f0 -> $f1)"
	check sh -c "[ $f1 -gt $f0 ] && dmesg | grep -q 'event F_TRANSLATION.*write'"
	dmesg | grep "event F_TRANSLATION" | head -n 2 | sed 's/^/IKS: #   /'
	cat /sys/kernel/debug/iks_smmuv3/stats | tr '\n' ' ' | sed 's/^/IKS: # stats /'; echo
	rmmod iks_edu
	# examples/vfio-edu through vfio-pci and vfio_iommu_type1 over
	# iks_smmuv3's domains (its software-MSI window reserved); edu polls,
	# no MSI.
	edu=$(grep -l 0x11e8 /sys/bus/pci/devices/*/device | head -n 1); edu=${edu%/device}; edu=${edu##*/}
	D="vfio: the VFIO modules load (vfio_iommu_type1 allow_unsafe_interrupts=1) and edu ($edu) binds to vfio-pci"
	check sh -c "insmod /vfio.ko && insmod /vfio_iommu_type1.ko allow_unsafe_interrupts=1 &&
		insmod /vfio-pci-core.ko && insmod /vfio-pci.ko && echo vfio-pci > /sys/bus/pci/devices/$edu/driver_override &&
		echo $edu > /sys/bus/pci/drivers_probe && readlink /sys/bus/pci/devices/$edu/driver | grep -q /vfio-pci"
	bdf=${edu#0000:}
	nf0=$(dmesg | grep -i fault | grep -c "$bdf")
	/vfio-edu "$edu" > /tmp/vfe 2>&1
	vrc=$?
	while IFS= read -r l; do
		case $l in
		"ok "*) say "ok - vfio-edu: ${l#* - }" ;;
		"not ok "*) say "not ok - vfio-edu: ${l#* - }" ;;
		*) say "# vfio-edu: $l" ;;
		esac
	done < /tmp/vfe
	D="vfio-edu ran to the end and passed (exit status $vrc)"
	check [ "$vrc" -eq 0 ]
	i=0; while [ "$(dmesg | grep -i fault | grep -c "$bdf")" -le "$nf0" ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
	D="iks_smmuv3 reported vfio-edu's DMA after UNMAP_DMA: a kernel line with \"fault\" and $bdf"
	check sh -c "[ \$(dmesg | grep -i fault | grep -c '$bdf') -gt $nf0 ]"
	dmesg | grep -i fault | grep "$bdf" | tail -n +$((nf0 + 1)) | sed 's/^/IKS: #   /'
	D="edu unbound from vfio-pci"
	check sh -c "echo $edu > /sys/bus/pci/devices/$edu/driver/unbind"
fi
if [ "$mode" = strict ]; then
	D="rmmod iks_smmuv3 with devices attached is refused (module in use), nothing breaks"
	check sh -c '! rmmod iks_smmuv3 && test -d /sys/kernel/debug/iks_smmuv3'
	rmmod virtio_blk
	for d in /sys/bus/pci/devices/*; do
		[ -e "$d/iommu_group" ] && echo 1 > "$d/remove"
	done
	D="after the devices are removed, rmmod iks_smmuv3 succeeds: SMMU disabled (CR0 0, GBPA.ABORT written), no domain, table page or SMMU page left"
	check sh -c 'rmmod iks_smmuv3 && dmesg | grep -q "unloaded: CR0 0x0 GBPA .*; live: domains 0 table pages 0 SMMU pages 0"'
	dmesg | grep "unloaded:" | sed 's/^/IKS: #   /'
fi
D="no kernel warning, BUG or oops"
check sh -c '! dmesg | grep -E "WARNING:|BUG:|Oops|Call trace|Call Trace|hung_task"'
say "done"
poweroff -f
EOF
cpio=$out/initramfs.cpio
"$out/mkcpio" "$cpio" init="$out/init" busybox="$root/bin/busybox" iks_smmuv3.ko="$kb/iks_smmuv3.ko" \
	iks_edu.ko="$kb/iks_edu.ko" vfio-edu="$out/vfio/vfio-edu" \
	$(for m in $vfio_mods; do echo "${m##*/}.ko=$root/lib/modules/$krel/kernel/$m.ko"; done) \
	virtio_blk.ko="$root/lib/modules/$krel/kernel/drivers/block/virtio_blk.ko" || exit 1

boot() { # boot NAME APPEND: console into $out/NAME.console, QEMU trace into $out/NAME.trace
	local name=$1 app=$2
	rm -f "$out/disk.img" && truncate -s 32M "$out/disk.img"
	gl_boot "$name" "$tmo" qemu-system-aarch64 -M virt,iommu=smmuv3 -cpu cortex-a57 -smp 2 -m 1024 \
		-nographic -no-reboot -nic none -kernel "$root/boot/vmlinuz-$krel" -initrd "$cpio" \
		-drive if=none,id=d0,file="$out/disk.img",format=raw,cache=none \
		-device virtio-blk-pci,drive=d0,iommu_platform=on,disable-legacy=on -device edu \
		-D "$out/$name.trace" -trace smmuv3_cmdq_opcode -trace virtio_blk_handle_write \
		-trace virtio_blk_handle_read \
		-append "console=ttyAMA0 panic=-1 loglevel=4 $app"
	mv -f "$out/$name.log" "$out/$name.console"
}
# tap NAME: the guest's IKS lines as ours
tap() {
	local name=$1 line got=0
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		*"IKS: ok - "*) got=1; ok "$name: ${line#*IKS: ok - }" ;;
		*"IKS: not ok - "*) got=1; notok "$name: ${line#*IKS: not ok - }" ;;
		*"IKS: done"*) ;;
		*"IKS: #"*) echo "#   $name ${line#*IKS: #}" ;;
		esac
	done < "$out/$name.console"
	[ "$got" -eq 1 ] || { notok "$name: the guest printed no result"; tail -n 30 "$out/$name.console" | sed 's/^/#   /'; }
	grep -q "IKS: done" "$out/$name.console" || notok "$name: the guest ran to the end of /init"
}
declare -A io_ms cmds syncs unmaps bcmds bsyncs bunmaps bench
row() { # row NAME: I/O time and the DMA unmaps (the iommu core's unmap
	# tracepoint) from the console; SMMU commands and CMD_SYNCs from the QEMU
	# trace, between the first virtio-blk write (the 16 MiB dd) and the
	# guest's marker read of sector 60000
	local name=$1 l
	l=$(grep -a "IKS: # io ms" "$out/$name.console" | tail -n 1)
	io_ms[$name]=$(echo "$l" | sed -n 's/.*io ms \([0-9]*\).*/\1/p')
	unmaps[$name]=$(echo "$l" | sed -n 's/.*iommu_unmaps \([0-9]*\).*/\1/p')
	unmaps[$name]=${unmaps[$name]:-0}
	set -- $(awk '/virtio_blk_handle_write/ { on = 1 }
		on && /smmuv3_cmdq_opcode/ { if (/CMD_SYNC/) s++; else c++ }
		on && /virtio_blk_handle_read/ && / sector 60000 / { print c + 0, s + 0; exit }
		' "$out/$name.trace" 2> /dev/null)
	cmds[$name]=${1:-0} syncs[$name]=${2:-0}
	# the benchmark's window, between the marker reads of sectors 60008 and 60016
	set -- $(awk '/virtio_blk_handle_read/ && / sector 60008 / { on = 1 }
		on && /smmuv3_cmdq_opcode/ { if (/CMD_SYNC/) s++; else c++ }
		on && /virtio_blk_handle_read/ && / sector 60016 / { print c + 0, s + 0; exit }
		' "$out/$name.trace" 2> /dev/null)
	bcmds[$name]=${1:-0} bsyncs[$name]=${2:-0}
	bunmaps[$name]=$(grep -a "IKS: # bench iommu_unmaps" "$out/$name.console" | sed -n 's/.*unmaps \([0-9]*\).*/\1/p')
	bunmaps[$name]=${bunmaps[$name]:-0}
	bench[$name]=$(grep -a "IKS: # bench .* map p50" "$out/$name.console" | sed -n 's/.*pages: //p' | tr -d '\r' | head -n 1)
}
base="initcall_blacklist=arm_smmu_driver_init rdinit=/init"
boot iks-strict "$base iks_mode=strict iommu.strict=1"; tap iks-strict; row iks-strict
boot iks-lazy "$base iks_mode=lazy iommu.strict=0"; tap iks-lazy; row iks-lazy
boot intree "rdinit=/init iks_mode=intree iommu.strict=1"; tap intree; row intree

echo "# 16 MiB written + read back with O_DIRECT (32 MiB of I/O); commands = SMMU commands other"
echo "# than CMD_SYNC (QEMU's smmuv3_cmdq_opcode trace); unmaps = DMA unmaps (iommu:unmap tracepoint)"
echo "# driver       I/O ms  vs in-tree  unmaps  commands/MiB  syncs/MiB  commands/unmap  syncs/unmap"
for b in iks-strict iks-lazy intree; do
	awk -v b="$b" -v t="${io_ms[$b]:-0}" -v ti="${io_ms[intree]:-0}" -v c="${cmds[$b]}" \
		-v s="${syncs[$b]}" -v u="${unmaps[$b]}" 'BEGIN {
		printf "# %-12s %6d  %9.2f  %6d  %12.2f  %9.2f  %14.3f  %11.3f\n", b, t,
			ti ? t / ti : 0, u, c / 32, s / 32, u ? c / u : 0, u ? s / u : 0 }'
done
echo "# DMA benchmark (512 map+unmap of 1..64 pages on edu): commands and CMD_SYNCs per unmap"
for b in iks-strict iks-lazy intree; do
	awk -v b="$b" -v c="${bcmds[$b]}" -v s="${bsyncs[$b]}" -v u="${bunmaps[$b]}" -v t="${bench[$b]}" 'BEGIN {
		printf "# %-12s commands/unmap %.3f  syncs/unmap %.3f  %s\n", b, u ? c / u : 0, u ? s / u : 0, t }'
done
# The benchmark unmaps the same ranges whatever the driver: strict, iommukit
# must not issue more commands or syncs for them than the in-tree driver.
if [ "${bunmaps[iks-strict]}" -gt 0 ] && [ "${bunmaps[intree]}" -gt 0 ]; then
	D="strict: the benchmark's unmaps cost no more invalidation commands and CMD_SYNCs than with the in-tree driver (${bcmds[iks-strict]}/${bsyncs[iks-strict]} vs ${bcmds[intree]}/${bsyncs[intree]})"
	if [ "${bcmds[iks-strict]}" -le "${bcmds[intree]}" ] && [ "${bsyncs[iks-strict]}" -le "${bsyncs[intree]}" ]; then
		ok "$D"
	else
		notok "$D"
	fi
else
	notok "the benchmark ran in both strict boots"
fi
# How many DMA unmaps the same dd needs varies from boot to boot (virtio
# maps each scatter-gather segment on its own, and how many segments a
# 1 MiB buffer makes depends on how contiguous its pages happen to be), and
# so do the sizes of the ranges (a range TLBI covers (NUM+1) * 2^SCALE
# pages: some sizes take two): per MiB and per unmap are printed, and the
# syncs per unmap (one each) compared.
if [ "${unmaps[iks-strict]}" -gt 0 ] && [ "${unmaps[intree]}" -gt 0 ]; then
	D="strict: CMD_SYNCs per DMA unmap of the dd no more than the in-tree driver's (+1%)"
	if awk -v b="${syncs[iks-strict]}" -v ra="${unmaps[iks-strict]}" -v d="${syncs[intree]}" \
		-v rb="${unmaps[intree]}" 'BEGIN { exit !(b / ra <= 1.01 * d / rb) }'; then
		ok "$D"
	else
		notok "$D"
	fi
else
	notok "the iommu:unmap tracepoint counted DMA unmaps in both strict boots"
fi
gl_finish
