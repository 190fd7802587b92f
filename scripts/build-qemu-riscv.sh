#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Build QEMU 10.0.2's qemu-system-riscv64 (the first QEMU with the RISC-V
# IOMMU, -device riscv-iommu-pci) into a private prefix, for the riscv
# configuration of the hardware-in-the-loop checks (tests/qemu-hil.sh,
# docs/hil.md).  Debian 12's own qemu-system-* 7.2 stays the system QEMU for
# every other configuration: backports' binary packages would replace it for
# every target, so this builds one target from backports' source package.
#
#   scripts/build-qemu-riscv.sh [PREFIX]
#
# PREFIX defaults to $top/_build-qemu10/prefix; the binary ends up as
# PREFIX/bin/qemu-system-riscv64 (point IK_QEMU_RISCV at it).  Idempotent:
# when that binary already reports version 10.0.2 nothing is done.
#
# On a Debian 12 machine (root or sudo) it:
#   1. adds bookworm-backports (deb and deb-src) to apt's sources, unless a
#      source for that suite is already there;
#   2. installs the build dependencies a --without-default-features build
#      needs, meson (>= 1.5) and python3-pycotap from backports;
#   3. fetches the source package's upstream tarball (checked against the
#      SHA-256 in apt's signed Sources index) into $work (default
#      $top/_build-qemu10) and unpacks it;
#   4. empties meson.build's edk2_targets (the +ds tarball has no
#      edk2 firmware images) and configures riscv64-softmmu only, with every
#      optional feature, tool, document and firmware blob off and a device
#      configuration of just the virt machine, riscv-iommu-pci and edu;
#   5. builds qemu-system-riscv64 alone with ninja -j$IK_JOBS (default 2)
#      and installs it as PREFIX/bin/qemu-system-riscv64.
# Nothing is cached: every run that finds no 10.0.2 binary rebuilds.
# Environment: IK_JOBS (parallel jobs), IK_QEMU_WORK (work directory).
# Prints "# time: qemu10 build N s" at the end.
set -eu
want=10.0.2
srcver=1:10.0.2+ds-2+deb13u1~bpo12+1
top=$(cd "$(dirname "$0")/.." && pwd)
work=${IK_QEMU_WORK:-$top/_build-qemu10}
prefix=${1:-$work/prefix}
jobs=${IK_JOBS:-2}
bin=$prefix/bin/qemu-system-riscv64

if [ -x "$bin" ] && "$bin" --version 2>/dev/null | head -n 1 | grep -q "version $want\b"; then
	echo "qemu-system-riscv64 $want already in $prefix"
	exit 0
fi

t0=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo

# 1. bookworm-backports, binaries and sources.
if ! grep -rqsE '^(Suites:.*[[:space:]]|deb-src .*[[:space:]])bookworm-backports([[:space:]]|$)' \
	/etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "== adding bookworm-backports (deb, deb-src) to apt's sources"
	$sudo tee /etc/apt/sources.list.d/ik-bookworm-backports.sources > /dev/null <<-'EOF'
	Types: deb deb-src
	URIs: http://deb.debian.org/debian
	Suites: bookworm-backports
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
fi
if ! apt-cache showsrc "qemu=$srcver" 2>/dev/null | grep -q '^Package: qemu'; then
	$sudo apt-get update -qq
fi

# 2. Build dependencies: only what riscv64-softmmu without default features
# needs (glib, zlib, the system libfdt), and the build tools.
pkgs="curl xz-utils ninja-build pkg-config python3-venv libglib2.0-dev libfdt-dev zlib1g-dev"
missing=
for p in $pkgs; do dpkg -s "$p" > /dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] || $sudo apt-get install -y -qq --no-install-recommends $missing > /dev/null
# meson 1.5+ and pycotap only exist in backports for Debian 12.
if ! dpkg -s python3-pycotap > /dev/null 2>&1 ||
	! meson --version 2>/dev/null | grep -qE '^(1\.([5-9]|[1-9][0-9])|[2-9])'; then
	$sudo apt-get install -y -qq --no-install-recommends -t bookworm-backports meson python3-pycotap > /dev/null
fi

# 3. The source: the package's upstream tarball (+ds: upstream less the
# firmware blobs), its SHA-256 from apt's Sources index (signed through the
# suite's Release file), unpacked with tar.  Debian's own patches
# (debian.tar.xz) are not needed for one softmmu target and are not applied.
mkdir -p "$work"
cd "$work"
src=$work/qemu-$want
if [ ! -f "$src/VERSION" ]; then
	# (in an empty directory: apt lists no file the directory already has)
	tmp=$(mktemp -d)
	line=$(cd "$tmp" && apt-get source --print-uris -qq "qemu=$srcver" | grep "orig\.tar\.xz' ")
	rmdir "$tmp"
	url=$(echo "$line" | awk '{print $1}' | tr -d "'")
	file=$(echo "$line" | awk '{print $2}')
	sum=$(echo "$line" | awk '{print $4}' | sed 's/^SHA256://')
	[ -n "$url" ] && [ ${#sum} -eq 64 ] ||
		{ echo "no qemu $srcver orig tarball in apt's Sources" >&2; exit 1; }
	if ! echo "$sum  $file" | sha256sum -c --status 2>/dev/null; then
		# Bounded: a stalled mirror fails the build instead of hanging CI.
		curl -fsSL --connect-timeout 30 --speed-limit 1024 --speed-time 60 --retry 2 \
			-o "$file.part" "$url" || { echo "$url: download failed" >&2; exit 1; }
		mv "$file.part" "$file"
		echo "$sum  $file" | sha256sum -c --status ||
			{ echo "$file: SHA-256 mismatch" >&2; rm -f "$file"; exit 1; }
	fi
	rm -rf "$src.tmp" && mkdir "$src.tmp"
	tar -xJf "$file" -C "$src.tmp" --strip-components=1
	rm -rf "$src" && mv "$src.tmp" "$src"
fi
grep -qx "$want" "$src/VERSION" || { echo "$src: not QEMU $want" >&2; exit 1; }

# 4. No edk2 images in the +ds tarball; a device set of our own.
sed -i 's/^edk2_targets = \[.*\]$/edk2_targets = []/' "$src/meson.build"
grep -q '^edk2_targets = \[\]$' "$src/meson.build" ||
	{ echo "meson.build: edk2_targets not found" >&2; exit 1; }
cat > "$src/configs/devices/riscv64-softmmu/ik-hil.mak" <<-'EOF'
# iommukit hardware-in-the-loop: the virt machine, riscv-iommu-pci, edu.
CONFIG_RISCV_VIRT=y
CONFIG_RISCV_IOMMU=y
CONFIG_EDU=y
EOF

rm -rf "$work/build"
mkdir -p "$work/build"
cd "$work/build"
"$src/configure" --prefix="$prefix" --python=/usr/bin/python3 \
	--target-list=riscv64-softmmu --disable-download --without-default-features \
	--without-default-devices --with-devices-riscv64=ik-hil \
	--enable-fdt=system --disable-install-blobs --disable-docs --disable-tools \
	--disable-guest-agent --disable-debug-info --disable-werror --enable-tcg \
	> configure.log 2>&1 || { tail -n 40 configure.log >&2; exit 1; }

# 5. Build the one binary (not QEMU's unit tests, which `make` would build
# too) and install it: with -bios none and no display it needs nothing from
# QEMU's data directory.
ninja -C "$work/build" -j"$jobs" qemu-system-riscv64 > build.log 2>&1 ||
	{ tail -n 40 build.log >&2; exit 1; }
mkdir -p "$prefix/bin"
install -m 755 "$work/build/qemu-system-riscv64" "$bin.tmp"
mv "$bin.tmp" "$bin"
"$bin" --version | head -n 1
"$bin" -device help 2>/dev/null | grep -E '"(riscv-iommu-pci|edu)"' || true
echo "# time: qemu10 build $(($(date +%s) - t0)) s"
