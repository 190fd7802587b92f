# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# guest-lib.sh - the guest machinery shared by the Linux guest scripts
# (examples/linux-iommu/vtd/guest.sh, examples/linux-iommu/smmuv3/guest.sh,
# examples/vfio-edu/guest.sh), sourced by each of them (bash):
#   - TAP: ok / notok number the checks; gl_finish prints the time, the plan
#     and automake's "# PASS: N" / "# FAIL: N" and exits 1 if a check
#     failed; gl_skip prints one "1..0 # SKIP" line and exits 77 (with
#     gl_require=1, for CI, a failed check instead; IK_HIL=0 is always a
#     plain skip);
#   - Debian 12's 6.12 kernel packages: gl_kver finds the newest version apt
#     knows, gl_fetch downloads packages with `apt-get download` (nothing
#     installed) into one cache directory that every script shares:
#     $IK_GUEST_CACHE, default $gl_out/debs; make check's wrappers
#     (tests/*-guest.sh) point it at _guest-cache in the build directory so
#     that each package is downloaded once however many scripts run, in
#     parallel included (an flock on the cache serialises the downloads);
#   - gl_mkcpio builds examples/linux-module/boot/mkcpio.c (the initramfs
#     writer); gl_boot runs QEMU under a timeout with its console in a file;
#     gl_no_oops checks a console log for a kernel warning, BUG or oops.
# The caller sets gl_out (its output directory), gl_what (how its SKIP line
# names it) and gl_require (1: a skip is a failure) before calling gl_init.
# Host tools: apt-get, dpkg-deb, flock, timeout, a host cc.

gl_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

gl_init() {
	pass=0 fail=0 n=0
	gl_t0=$SECONDS
	# A plain skip even with gl_require=1 (CI requires the guests but
	# runs them only in distcheck).
	[ "${IK_HIL:-1}" = 0 ] && { echo "1..0 # SKIP $gl_what: disabled (IK_HIL=0)"; exit 77; }
	mkdir -p "$gl_out" || exit 1
	gl_cache=${IK_GUEST_CACHE:-$gl_out/debs}
	mkdir -p "$gl_cache" || exit 1
}

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $*"; }
gl_finish() {
	echo "# time: total $((SECONDS - gl_t0)) s"
	echo "1..$n"
	echo "# PASS: $pass"
	echo "# FAIL: $fail"
	[ "$fail" -eq 0 ] && exit 0
	exit 1
}

gl_skip() {
	if [ "${gl_require:-0}" = 1 ]; then
		notok "$* (required)"
		gl_finish
	fi
	echo "1..0 # SKIP $gl_what: $*"
	exit 77
}

# gl_need TOOL...: skip unless every TOOL is installed
gl_need() {
	local t
	for t in "$@"; do
		command -v "$t" > /dev/null 2>&1 || gl_skip "$t is not installed"
	done
}

# gl_kver ARCH: the newest 6.12.N+deb12 that apt has an
# linux-image-*-ARCH-unsigned of (empty when none)
gl_kver() {
	apt-cache pkgnames linux-image-6.12. 2> /dev/null |
		sed -n "s/^linux-image-\(6\.12\.[0-9]*+deb12\)-$1-unsigned\$/\1/p" | sort -V | tail -n 1
}

# gl_fetch PKG[:ARCH]...: each package's .deb into the cache unless there;
# skips (one line) when apt-get cannot download one.
gl_fetch() {
	local p have=1
	for p in "$@"; do [ -n "$(gl_deb "$p")" ] || have=0; done
	[ "$have" = 1 ] && return 0
	(
		flock 9 || exit 1
		tmp=$(mktemp -d "$gl_cache/.dl.XXXXXX") || exit 1
		cd "$tmp" || exit 1
		for p in "$@"; do
			[ -n "$(gl_deb "$p")" ] && continue
			apt-get download -q "$p" || { rm -rf "$tmp"; exit 1; }
		done
		mv -f ./*.deb "$gl_cache"/ 2> /dev/null
		rm -rf "$tmp"
	) 9> "$gl_cache/.lock" > "$gl_out/download.log" 2>&1 || {
		tail -n 3 "$gl_out/download.log" | sed 's/^/#   /'
		gl_skip "cannot download $*"
	}
}

# gl_deb PKG[:ARCH]: the cached .deb's path (empty when not there)
gl_deb() {
	local name=${1%%:*} arch=${1#*:}
	[ "$arch" = "$1" ] && arch=
	ls "$gl_cache/${name}"_*"${arch:+_$arch}".deb 2> /dev/null | grep -v '/\.dl\.' | sort -V | tail -n 1
}

# gl_mkcpio: $gl_out/mkcpio, the initramfs writer
gl_mkcpio() {
	cc -O2 -Wall -Wextra -o "$gl_out/mkcpio" "$gl_top/examples/linux-module/boot/mkcpio.c" ||
		{ notok "mkcpio builds"; gl_finish; }
}

# gl_boot NAME SECONDS QEMU ARG...: the boot, console into $gl_out/NAME.log
# (carriage returns dropped), bounded by SECONDS; gl_rc is QEMU's status
# (124: timed out: that is a failed check).  Where the caller set
# gl_init_mark (a fixed string its /init prints first, before it loads any
# module), a boot whose console lacks it (the kernel crashed or hung in
# early boot, before the initramfs ran) is booted once more: under TCG on a loaded host the guest kernel has been seen to
# oops in its own early code ("int3" in sched_clock_idle_wakeup_event),
# with none of iommukit's code run yet.  The first console stays in
# NAME.try1.log and the retry is said in a comment line.
gl_boot() {
	local name=$1 tmo=$2 t=$SECONDS try
	shift 2
	for try in 1 2; do
		timeout "$tmo" "$@" > "$gl_out/$name.raw" 2>&1
		gl_rc=$?
		tr -d '\r' < "$gl_out/$name.raw" > "$gl_out/$name.log"
		rm -f "$gl_out/$name.raw"
		[ -z "${gl_init_mark:-}" ] && break
		grep -aqF "$gl_init_mark" "$gl_out/$name.log" && break
		[ "$try" = 2 ] && break
		mv "$gl_out/$name.log" "$gl_out/$name.try1.log"
		echo "# boot $name: the kernel did not reach /init (qemu status $gl_rc; console in $name.try1.log); booting again"
	done
	echo "# boot $name: $((SECONDS - t)) s (qemu status $gl_rc)"
	[ "$gl_rc" -ne 124 ] || notok "$name: the guest finished within ${tmo} s"
}

# gl_no_oops NAME LOG: one check, the kernel logged no warning, BUG or oops
gl_no_oops() {
	if grep -aE 'BUG:|Oops|WARNING:|Call Trace|Call trace|general protection|Kernel panic|hung_task' "$2" |
		sed 's/^/#   /' | grep .; then
		notok "$1: the kernel logged no warning, BUG or oops"
	else
		ok "$1: the kernel logged no warning, BUG or oops"
	fi
}
