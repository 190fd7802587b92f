#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# examples/vfio-edu/guest.sh: run vfio-edu in a Debian 12 amd64 guest (kernel
# 6.12) under qemu-system-x86_64 (TCG, no KVM needed): q35 with QEMU's VT-d
# (intel-iommu,intremap=off) and edu, the in-tree VT-d driver
# (intel_iommu=on), vfio-pci with vfio_iommu_type1 allow_unsafe_interrupts=1.
#
#   1. apt-get download linux-image-6.12.*+deb12-amd64-unsigned (the newest
#      apt knows) into the package cache (examples/linux-iommu/guest-lib.sh,
#      the guest machinery the three guest scripts share), unpacked in the
#      output directory (nothing is installed; kept for the next run);
#   2. make -C examples/vfio-edu: the static vfio-edu and the guest's /init
#      (guest-init.c); an initramfs of them and the five VFIO modules;
#   3. one boot, bounded by a timeout: /init loads the modules, binds edu to
#      vfio-pci, runs vfio-edu, and reports the kernel's fault log line;
#   4. prints one TAP line per check (the guest's, renumbered, and the
#      boot's own: powered off in time, no oops), then "# PASS: N" /
#      "# FAIL: N"; exit status 1 if a check failed.
# When the tools or the packages cannot be had it prints one "# SKIP" line
# and exits 77 (automake's skip).
#
# Environment:
#   IK_HIL=0                 skip (one SKIP line), as tests/qemu-hil.sh does
#   IK_VFIO_OUT              output directory (default ./_vfio-edu; kept)
#   IK_GUEST_CACHE           the downloaded packages (default $IK_VFIO_OUT/debs;
#                            make check shares one with the other guest scripts)
#   IK_VFIO_TIMEOUT          seconds the guest may run (default 120)
#   IK_VFIO_KERNEL_DEB       a linux-image-*-amd64-unsigned .deb to use instead
#                            of downloading one
#   IK_VFIO_REQUIRE=1        missing tools or packages fail instead of skipping
#   IK_VFIO_ARGS             options for vfio-edu in the guest (words without
#                            spaces, e.g. "--timeout-ms 1" to see a DMA wait
#                            time out), passed as vfio_edu_arg=X kernel words
#
# Host tools: bash, apt-get, dpkg-deb, tar, gcc with a static libc
# (libc6-dev), linux-libc-dev (<linux/vfio.h>), qemu-system-x86, timeout.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
gl_out=${IK_VFIO_OUT:-$(pwd)/_vfio-edu} gl_what="vfio-edu guest" gl_require=${IK_VFIO_REQUIRE:-0}
. "$top/examples/linux-iommu/guest-lib.sh"
out=$gl_out
tmo=${IK_VFIO_TIMEOUT:-120}
gl_init
gl_need qemu-system-x86_64 dpkg-deb tar timeout gcc cc flock
[ -r /usr/include/linux/vfio.h ] || gl_skip "no <linux/vfio.h> (apt-get install linux-libc-dev)"

# ---- 1. the kernel and its VFIO modules
mods="virt/lib/irqbypass drivers/vfio/vfio drivers/vfio/vfio_iommu_type1
	drivers/vfio/pci/vfio-pci-core drivers/vfio/pci/vfio-pci"
deb=${IK_VFIO_KERNEL_DEB:-}
if [ -z "$deb" ]; then
	gl_need apt-get
	ver=$(gl_kver amd64)
	[ -n "$ver" ] || gl_skip "apt knows no linux-image-6.12.*+deb12-amd64-unsigned (apt-get update?)"
	gl_fetch "linux-image-$ver-amd64-unsigned"
	deb=$(gl_deb "linux-image-$ver-amd64-unsigned")
fi
[ -r "$deb" ] || gl_skip "no kernel package $deb"
kdir=$out/kernel
rm -rf "$kdir" && mkdir -p "$kdir"
pats=('./boot/vmlinuz-*')
for m in $mods; do pats+=("./lib/modules/*/kernel/$m.ko*"); done
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$kdir" --wildcards "${pats[@]}" 2> "$out/unpack.log" ||
	gl_skip "cannot unpack $deb ($(tail -n 1 "$out/unpack.log"))"
kernel=$(ls "$kdir"/boot/vmlinuz-* | head -n 1)
echo "# kernel: $(basename "$deb")"

# ---- 2. the programs and the initramfs
if make -C "$here" OUT="$out/build" > "$out/build.log" 2>&1; then
	ok "vfio-edu and the guest's /init build static with -Werror"
else
	notok "vfio-edu and the guest's /init build static with -Werror"
	tail -n 30 "$out/build.log" | sed 's/^/#   /'
	gl_finish
fi
gl_mkcpio
set -- init="$out/build/guest-init" vfio-edu="$out/build/vfio-edu"
for m in $mods; do
	f=$(ls "$kdir"/lib/modules/*/kernel/"$m".ko* | head -n 1)
	set -- "$@" "$(basename "$m").ko.xz=$f"
done
case $(ls "$kdir"/lib/modules/*/kernel/drivers/vfio/vfio.ko*) in
*.ko.xz) ;;
*) notok "the VFIO modules are .ko.xz (the guest's /init loads them compressed)"; gl_finish ;;
esac
"$out/mkcpio" "$out/initramfs.cpio" "$@" || exit 1

# ---- 3. boot
extra=
for a in ${IK_VFIO_ARGS:-}; do extra="$extra vfio_edu_arg=$a"; done
gl_boot vfio-edu "$tmo" qemu-system-x86_64 -M q35 -m 512 -smp 1 -nographic -no-reboot -nic none \
	-device intel-iommu,intremap=off -device edu \
	-kernel "$kernel" -initrd "$out/initramfs.cpio" \
	-append "console=ttyS0 intel_iommu=on intremap=off panic=-1 quiet$extra"
qrc=$gl_rc
mv -f "$out/vfio-edu.log" "$out/console.log"

# ---- 4. results
got=0
while IFS= read -r line; do
	line=${line%$'\r'}
	case $line in
	*"vfio-edu-guest: "*) line=${line#*vfio-edu-guest: } ;;
	*) continue ;;
	esac
	name=guest
	case $line in
	"vfio-edu: "*) name=vfio-edu; line=${line#vfio-edu: } ;;
	esac
	case $line in
	"ok "*) got=1; ok "$name: ${line#ok * - }" ;;
	"not ok "*) got=1; notok "$name: ${line#not ok * - }" ;;
	"# PASS"* | "# FAIL"*) ;;
	"# "*) echo "#   $name ${line#\# }" ;;
	"Bail out!"*) echo "# $name: $line" ;;
	esac
done < "$out/console.log"
[ "$got" -eq 1 ] || notok "the guest printed results"
if [ "$qrc" -eq 0 ] && grep -aq 'vfio-edu-guest: done' "$out/console.log"; then
	ok "the guest ran to the end and powered off within ${tmo} s"
else
	notok "the guest ran to the end and powered off within ${tmo} s (QEMU exit status $qrc)"
	tail -n 20 "$out/console.log" | sed 's/^/#   console: /'
fi
gl_no_oops guest "$out/console.log"
echo "# console: $out/console.log"
gl_finish
