#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# CI's vendoring step: iommukit's sources, unchanged, in other homes.
#   1. scripts/vendor.sh copies the vendored file set and --check agrees;
#   2. the Linux kernel module (examples/linux-module) builds against the
#      headers Debian's linux-headers-amd64 installed, with the kernel's own
#      flags plus -Werror, and no warning;
#   2b. the same module builds for arm64, cross, against Debian 12's 6.12
#      arm64 headers (apt-get download, unpacked here, not installed; the
#      amd64 linux-kbuild of the same version supplies the host tools):
#      the arm64 kernel headers define TCR_* names and GCC's arm64 outline
#      atomics call libgcc helpers a kernel lacks, which an x86 build misses;
#   3. (unless --no-boot or IK_CI_BOOT=0) the module is loaded in the
#      matching Debian kernel booted under qemu-system-x86_64, and each
#      self-test line from the serial console counts;
#   4. the bare-metal images (examples/baremetal) for x86-64 and aarch64 build
#      with -ffreestanding -nostdlib, leave undefined only the board functions
#      the env declares, link with no undefined symbol, and run (x86-64
#      natively, aarch64 under qemu-aarch64), each self-test line counting;
#   5. the library is cross-built for aarch64 (configure --host) and its
#      self-test program runs under qemu-aarch64, each line counting.
# Prints TAP-style lines and then automake's "# PASS: N" / "# FAIL: N" so
# .ci/run's count() adds them to the final summary.  Exit status 1 if any
# check failed.  Build output goes to $IK_VENDOR_OUT (default _build-vendoring).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${IK_VENDOR_OUT:-$top/_build-vendoring}
boot=${IK_CI_BOOT:-1}
[ "${1:-}" = --no-boot ] && boot=0
jobs=${IK_JOBS:-2}
rm -rf "$out" && mkdir -p "$out"
pass=0 fail=0 skip=0 n=0

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $*"; }
skipped() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n # SKIP $*"; }
check() { # check DESC CMD...: one result for a command; its log is shown on failure
	local desc=$1 log=$out/log.$((n + 1))
	shift
	if "$@" > "$log" 2>&1; then
		ok "$desc"
	else
		notok "$desc"; tail -n 30 "$log" | sed 's/^/#   /'
	fi
}
# tap PREFIX FILE: re-number the TAP results in FILE as ours, named PREFIX: name;
# a run that produced no result at all is a failure.
tap() {
	local prefix=$1 file=$2 line got=0
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		"ok "*) got=1; ok "$prefix: ${line#ok * - }" ;;
		"not ok "*) got=1; notok "$prefix: ${line#not ok * - }" ;;
		"# "*) echo "#   $prefix ${line#\# }" ;;
		esac
	done < "$file"
	[ "$got" -eq 1 ] || notok "$prefix: produced no result"
}
timed() { # timed LABEL: print seconds since the last call
	echo "# time: $1 $((SECONDS - t_last)) s"; t_last=$SECONDS
}
t_last=$SECONDS

# ---- 1. the vendoring script
check "vendor.sh copies the library and the self-test" "$top/scripts/vendor.sh" --selftest "$out/tree"
check "vendor.sh --check finds the copy in sync" "$top/scripts/vendor.sh" --selftest --check "$out/tree"
# A file an earlier copy had and upstream dropped goes on the next run (the
# manifest names it; mawk, Debian's awk, must read the manifest too).
stale_check() {
	printf '%s src/env/dropped_upstream.c\n' "$(sha256sum "$top/README.md" | cut -d' ' -f1)" \
		>> "$out/tree/IOMMUKIT-VENDOR" && : > "$out/tree/src/env/dropped_upstream.c" &&
		"$top/scripts/vendor.sh" --selftest "$out/tree" > /dev/null &&
		test ! -e "$out/tree/src/env/dropped_upstream.c"
}
check "vendor.sh removes a file an earlier copy had and upstream dropped" stale_check
check "a vendored copy has no libc env (no env-hosted.h, no env_hosted.c)" \
	test ! -e "$out/tree/include/iommukit/env-hosted.h" -a ! -e "$out/tree/src/env/env_hosted.c"
timed vendor

# Slow serial work runs in the background while the builds below use the
# CPUs: the aarch64 cross configure (one process at a time) and build, and
# the download of the kernel image for the boot (network-bound).
adir=$out/aarch64
mkdir -p "$adir"
(
	cd "$adir" && "$top/configure" -q --host=aarch64-linux-gnu --enable-werror --disable-shared \
		PKG_CONFIG=false && make examples/selftest/ik-selftest
) > "$out/aarch64-build.log" 2>&1 &
aarch64_pid=$!

hdrpkg=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null | sed 's/ .*//')
kdir=${IK_KDIR:-/usr/src/$hdrpkg}
krel=
[ -n "$hdrpkg" ] && [ -d "$kdir" ] &&
	krel=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
kernel=/boot/vmlinuz-$krel
kimg_pid=
if [ -n "$krel" ] && [ "$boot" != 0 ] && command -v qemu-system-x86_64 > /dev/null &&
	[ ! -r "$kernel" ]; then
	# The image package of the same version, unpacked, not installed (no
	# initramfs hooks run): only its vmlinuz is needed.
	kernel=$out/kimg/boot/vmlinuz-$krel
	mkdir -p "$out/kimg"
	(cd "$out/kimg" && apt-get download -q "linux-image-$krel" &&
		dpkg-deb --fsys-tarfile linux-image-"$krel"_*.deb | tar -x "./boot/vmlinuz-$krel" &&
		rm -f linux-image-"$krel"_*.deb) > "$out/kimg.log" 2>&1 &
	kimg_pid=$!
fi

# The arm64 headers (step 2b): the newest Debian 12 6.12 arm64 headers
# package, its -common, and the amd64 linux-kbuild of that version, fetched
# in the background.  Needs arm64 as a foreign architecture in apt (no arm64
# package is installed).
a64dir=$out/arm64-headers a64ver= a64_pid=
# (aarch64-linux-gnu-gcc-12: the compiler the headers' .kernelvariables name.)
if command -v aarch64-linux-gnu-gcc-12 > /dev/null && dpkg --print-foreign-architectures | grep -qx arm64; then
	a64ver=$(apt-cache pkgnames linux-headers-6.12. 2> /dev/null |
		sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12\)-arm64$/\1/p' | sort -V | tail -n 1)
fi
if [ -n "$a64ver" ]; then
	mkdir -p "$a64dir/deb"
	(cd "$a64dir/deb" && apt-get download -q "linux-headers-$a64ver-arm64:arm64" \
		"linux-headers-$a64ver-common" "linux-kbuild-$a64ver:$(dpkg --print-architecture)" &&
		for d in ./*.deb; do dpkg-deb -x "$d" "$a64dir"; done &&
		rm -f ./*.deb &&
		# Its Makefile includes the -common one by absolute path.
		sed -i "s|^include /usr/src/|include $a64dir/usr/src/|" \
			"$a64dir/usr/src/linux-headers-$a64ver-arm64/Makefile") > "$out/arm64-headers.log" 2>&1 &
	a64_pid=$!
fi

# ---- 2. the Linux kernel module
if [ -n "$krel" ]; then
	echo "# kernel headers: $hdrpkg ($krel), from linux-headers-amd64 $(dpkg-query -W -f='${Version}' linux-headers-amd64)"
	kbuild=$out/linux-module
	if make -j"$jobs" -C "$top/examples/linux-module" KDIR="$kdir" BUILD="$kbuild" > "$out/kbuild.log" 2>&1 &&
		[ -f "$kbuild/iommukit_selftest.ko" ]; then
		ok "linux module builds against $hdrpkg with the kernel's flags and -Werror"
		if grep -E 'warning:|WARNING:' "$out/kbuild.log"; then
			notok "linux module build prints no warning (modpost included)"
		else
			ok "linux module build prints no warning (modpost included)"
		fi
		if strings "$kbuild/iommukit_selftest.ko" | grep -q "^vermagic=$krel "; then
			ok "linux module vermagic is $krel"
		else
			notok "linux module vermagic is $krel"
		fi
	else
		notok "linux module builds against $hdrpkg with the kernel's flags and -Werror"
		tail -n 40 "$out/kbuild.log" | sed 's/^/#   /'
	fi
	timed linux-module-build
	# ---- 3. boot it
	if [ "$boot" = 0 ]; then
		skipped "booting the module under qemu-system-x86_64 (disabled)"
	elif ! command -v qemu-system-x86_64 > /dev/null; then
		skipped "booting the module: qemu-system-x86_64 is not installed"
	elif [ -f "$kbuild/iommukit_selftest.ko" ]; then
		[ -z "$kimg_pid" ] || wait "$kimg_pid"
		timed kernel-image-download-wait
		if [ -r "$kernel" ]; then
			make -C "$top/examples/linux-module" KDIR="$kdir" BUILD="$kbuild" KERNEL="$kernel" \
				boot > "$out/boot.log" 2>&1
			brc=$?
			tr -d '\r' < "$kbuild/boot/console.log" | sed -n 's/^.*iommukit-selftest: //p' > "$out/vm.tap"
			tap "linux-vm" "$out/vm.tap"
			if [ "$brc" -eq 0 ]; then
				ok "the kernel logged no warning, BUG or oops while the module ran"
			else
				notok "make boot succeeded (kernel warnings or a failed case)"
				tail -n 20 "$out/boot.log" | sed 's/^/#   /'
			fi
		else
			# Not the code's fault (the archive may have moved on from
			# the installed headers' ABI): say so, do not fail.
			skipped "booting the module: could not get linux-image-$krel's vmlinuz"
			tail -n 5 "$out/kimg.log" | sed 's/^/#   /'
		fi
		timed linux-module-boot
	fi
else
	notok "linux-headers-amd64 is installed (apt-get install linux-headers-amd64)"
fi

# ---- 2b. the Linux kernel module for arm64 (cross)
if [ -z "$a64ver" ]; then
	skipped "linux module for arm64: needs aarch64-linux-gnu-gcc-12 and arm64 in apt (dpkg --add-architecture arm64 && apt-get update) with Debian 12's 6.12 arm64 headers"
elif ! wait "$a64_pid"; then
	notok "linux module for arm64: download linux-headers-$a64ver-arm64:arm64 and its -common and kbuild"
	tail -n 10 "$out/arm64-headers.log" | sed 's/^/#   /'
else
	a64k=$a64dir/usr/src/linux-headers-$a64ver-arm64
	kbuild=$out/linux-module-arm64
	# CONFIG_DEBUG_INFO_BTF_MODULES off: these headers ship a vmlinux, and
	# BTF for the module would need pahole (dwarves).
	if make -j"$jobs" -C "$top/examples/linux-module" KDIR="$a64k" BUILD="$kbuild" \
		CONFIG_DEBUG_INFO_BTF_MODULES= > "$out/kbuild-arm64.log" 2>&1 &&
		[ -f "$kbuild/iommukit_selftest.ko" ]; then
		ok "linux module builds for arm64 against linux-headers-$a64ver-arm64 with the kernel's flags and -Werror"
		if grep -E 'warning:|WARNING:' "$out/kbuild-arm64.log"; then
			notok "arm64 linux module build prints no warning (modpost included)"
		else
			ok "arm64 linux module build prints no warning (modpost included)"
		fi
		if aarch64-linux-gnu-readelf -h "$kbuild/iommukit_selftest.ko" | grep -q AArch64 &&
			strings "$kbuild/iommukit_selftest.ko" | grep -q "^vermagic=$a64ver-arm64 "; then
			ok "arm64 linux module is AArch64 with vermagic $a64ver-arm64"
		else
			notok "arm64 linux module is AArch64 with vermagic $a64ver-arm64"
		fi
	else
		notok "linux module builds for arm64 against linux-headers-$a64ver-arm64 with the kernel's flags and -Werror"
		grep -E 'error|ERROR' "$out/kbuild-arm64.log" | head -n 20 | sed 's/^/#   /'
		tail -n 10 "$out/kbuild-arm64.log" | sed 's/^/#   /'
	fi
fi
timed linux-module-arm64-build

# ---- 4. bare-metal images
for arch in x86_64 aarch64; do
	bdir=$out/baremetal
	if make -j"$jobs" -C "$top/examples/baremetal" ARCH="$arch" OUT="$bdir/$arch" > "$out/bm-$arch.log" 2>&1; then
		ok "bare-metal $arch: freestanding build; core leaves only the env's board functions undefined; images have no undefined symbol"
		sed -n 's/^ *NM *core.o leaves undefined only:/#   baremetal-'"$arch"' undefined before the board:/p' "$out/bm-$arch.log"
		runner=
		[ "$arch" = aarch64 ] && [ "$(uname -m)" != aarch64 ] && runner=qemu-aarch64
		$runner "$bdir/$arch/ik-bm-linux" > "$out/bm-$arch.tap" 2>&1
		rc=$?
		tap "baremetal-$arch" "$out/bm-$arch.tap"
		[ "$rc" -eq 0 ] || notok "baremetal-$arch: image exits with status 0 (got $rc)"
	else
		notok "bare-metal $arch build and symbol checks"
		tail -n 30 "$out/bm-$arch.log" | sed 's/^/#   /'
	fi
	timed "baremetal-$arch"
done

# ---- 5. aarch64 hosted build (started in the background) under qemu-aarch64
if wait "$aarch64_pid"; then
	ok "aarch64 cross build of libiommukit and ik-selftest (--enable-werror, static)"
	if aarch64-linux-gnu-objdump -d "$adir/examples/selftest/ik-selftest" | grep -qE 'dc[[:space:]]+cvac'; then
		ok "aarch64 ik-selftest contains the dc cvac clean loop"
	else
		notok "aarch64 ik-selftest contains the dc cvac clean loop"
	fi
	QEMU_LD_PREFIX=/usr/aarch64-linux-gnu qemu-aarch64 "$adir/examples/selftest/ik-selftest" \
		> "$out/aarch64.tap" 2>&1
	rc=$?
	tap "aarch64-hosted" "$out/aarch64.tap"
	[ "$rc" -eq 0 ] || notok "aarch64-hosted: ik-selftest exits with status 0 (got $rc)"
else
	notok "aarch64 cross build of libiommukit and ik-selftest"
	tail -n 30 "$out/aarch64-build.log" | sed 's/^/#   /'
fi
timed aarch64-hosted

[ -z "$kimg_pid" ] || wait "$kimg_pid" 2> /dev/null
echo "# time: total $SECONDS s"
echo "1..$n"
echo "# PASS: $pass"
echo "# FAIL: $fail"
echo "# SKIP: $skip"
[ "$fail" -eq 0 ]
