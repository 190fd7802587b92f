#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# examples/vfio-edu/guest.sh: run vfio-edu in a Debian 12 amd64 guest (kernel
# 6.12) under qemu-system-x86_64 (TCG, no KVM needed): q35 with QEMU's VT-d
# (intel-iommu,intremap=off) and edu, the in-tree VT-d driver
# (intel_iommu=on), vfio-pci with vfio_iommu_type1 allow_unsafe_interrupts=1.
#
#   1. apt-get download linux-image-6.12.*+deb12-amd64-unsigned (the newest
#      apt knows) into the output directory, unpacked there (nothing is
#      installed; kept for the next run);
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
#   IK_VFIO_TIMEOUT          seconds the guest may run (default 300)
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
out=${IK_VFIO_OUT:-$(pwd)/_vfio-edu}
tmo=${IK_VFIO_TIMEOUT:-300}
require=${IK_VFIO_REQUIRE:-0}
pass=0 fail=0 n=0
t0=$SECONDS

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $*"; }
skip_all() {
	if [ "$require" = 1 ]; then
		notok "$* (IK_VFIO_REQUIRE=1)"
		summary
	fi
	echo "1..0 # SKIP vfio-edu guest: $*"
	exit 77
}
summary() {
	echo "# time: total $((SECONDS - t0)) s"
	echo "1..$n"
	echo "# PASS: $pass"
	echo "# FAIL: $fail"
	[ "$fail" -eq 0 ] && exit 0
	exit 1
}

[ "${IK_HIL:-1}" = 0 ] && { echo "1..0 # SKIP vfio-edu guest: disabled (IK_HIL=0)"; exit 77; }
for t in qemu-system-x86_64 dpkg-deb tar timeout gcc; do
	command -v "$t" > /dev/null 2>&1 || skip_all "$t is not installed"
done
[ -r /usr/include/linux/vfio.h ] || skip_all "no <linux/vfio.h> (apt-get install linux-libc-dev)"
mkdir -p "$out" || exit 1

# ---- 1. the kernel and its VFIO modules
mods="virt/lib/irqbypass drivers/vfio/vfio drivers/vfio/vfio_iommu_type1
	drivers/vfio/pci/vfio-pci-core drivers/vfio/pci/vfio-pci"
deb=${IK_VFIO_KERNEL_DEB:-}
if [ -z "$deb" ]; then
	command -v apt-get > /dev/null 2>&1 || skip_all "no apt-get to download the kernel"
	pkg=$(apt-cache pkgnames linux-image-6.12. 2> /dev/null |
		grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' | sort -V | tail -n 1)
	[ -n "$pkg" ] || skip_all "apt knows no linux-image-6.12.*+deb12-amd64-unsigned (apt-get update?)"
	deb=$(ls "$out/dl/${pkg}"_*.deb 2> /dev/null | tail -n 1)
	if [ -z "$deb" ]; then
		rm -rf "$out/dl" && mkdir -p "$out/dl"
		(cd "$out/dl" && apt-get download -q "$pkg") > "$out/download.log" 2>&1 ||
			skip_all "apt-get download $pkg failed ($(tail -n 1 "$out/download.log"))"
		deb=$(ls "$out/dl/${pkg}"_*.deb 2> /dev/null | tail -n 1)
	fi
fi
[ -r "$deb" ] || skip_all "no kernel package $deb"
kdir=$out/kernel
rm -rf "$kdir" && mkdir -p "$kdir"
pats=('./boot/vmlinuz-*')
for m in $mods; do pats+=("./lib/modules/*/kernel/$m.ko*"); done
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$kdir" --wildcards "${pats[@]}" 2> "$out/unpack.log" ||
	skip_all "cannot unpack $deb ($(tail -n 1 "$out/unpack.log"))"
kernel=$(ls "$kdir"/boot/vmlinuz-* | head -n 1)
echo "# kernel: $(basename "$deb")"

# ---- 2. the programs and the initramfs
if make -C "$here" OUT="$out/build" > "$out/build.log" 2>&1; then
	ok "vfio-edu and the guest's /init build static with -Werror"
else
	notok "vfio-edu and the guest's /init build static with -Werror"
	tail -n 30 "$out/build.log" | sed 's/^/#   /'
	summary
fi
gcc -O2 -o "$out/build/mkcpio" "$top/examples/linux-module/boot/mkcpio.c" || exit 1
set -- init="$out/build/guest-init" vfio-edu="$out/build/vfio-edu"
for m in $mods; do
	f=$(ls "$kdir"/lib/modules/*/kernel/"$m".ko* | head -n 1)
	set -- "$@" "$(basename "$m").ko.xz=$f"
done
case $(ls "$kdir"/lib/modules/*/kernel/drivers/vfio/vfio.ko*) in
*.ko.xz) ;;
*) notok "the VFIO modules are .ko.xz (the guest's /init loads them compressed)"; summary ;;
esac
"$out/build/mkcpio" "$out/initramfs.cpio" "$@" || exit 1

# ---- 3. boot
extra=
for a in ${IK_VFIO_ARGS:-}; do extra="$extra vfio_edu_arg=$a"; done
tb=$SECONDS
timeout "$tmo" qemu-system-x86_64 -M q35 -m 512 -smp 1 -nographic -no-reboot -nic none \
	-device intel-iommu,intremap=off -device edu \
	-kernel "$kernel" -initrd "$out/initramfs.cpio" \
	-append "console=ttyS0 intel_iommu=on intremap=off panic=-1 quiet$extra" \
	> "$out/console.log" 2>&1
qrc=$?
echo "# time: boot and checks $((SECONDS - tb)) s (QEMU exit status $qrc)"

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
if grep -aE 'BUG:|Oops|Call Trace|general protection|WARNING:' "$out/console.log" |
	sed 's/^/#   console: /' | grep .; then
	notok "the kernel logged no warning, BUG or oops"
else
	ok "the kernel logged no warning, BUG or oops"
fi
echo "# console: $out/console.log"
summary
