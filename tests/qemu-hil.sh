#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Hardware-in-the-loop checks (docs/hil.md): build the bare-metal harness
# images with examples/baremetal/Makefile (`make hil`), boot each QEMU
# configuration with a hard timeout, and pass every TAP line the image
# prints on its serial console through as one result of this test:
#
#   virt-smmuv3    qemu-system-aarch64 -M virt,iommu=smmuv3,highmem=off
#   q35-vtd-aw39   qemu-system-x86_64 -M q35 -device intel-iommu,aw-bits=39
#   q35-vtd-aw48   qemu-system-x86_64 -M q35 -device intel-iommu,aw-bits=48
#   q35-vtd-sm48   the same with x-scalable-mode=on (ECAP.SMTS: the scalable-
#                  mode checks run; in the others they report SKIP)
#   q35-amd        qemu-system-x86_64 -M q35 -device amd-iommu (the AMD
#                  checks, hil_amd.c; QEMU 7.2's departures from the AMD
#                  specification are named in their results)
#   riscv-virt     qemu-system-riscv64 -M virt -bios none -device
#                  riscv-iommu-pci (the RISC-V IOMMU checks, hil_riscv.c):
#                  QEMU 10 or later, which Debian 12 lacks: build 10.0.2
#                  with scripts/build-qemu-riscv.sh and point
#                  IK_QEMU_RISCV at it (QEMU 10.0.2's departures from the
#                  RISC-V IOMMU specification are named in the results)
#
# each with QEMU's edu device as the DMA master.  Per configuration one more
# result says whether the run was complete: the image's plan line, every
# result it announced, in order, its closing "# hil: done" line, no "Bail
# out!", no timeout, and the QEMU exit status the image's verdict implies.
# Per architecture one result says the image built.
#
# Missing tools (qemu-system-aarch64 / qemu-system-x86_64 / a
# qemu-system-riscv64 with riscv-iommu-pci, the aarch64 / riscv64 cross
# compilers) make the configurations that need them one "ok ... # SKIP" line,
# so a machine without them stays green - unless IK_HIL_REQUIRE=1 (CI),
# which makes them failures.  Environment:
#   IK_HIL=0            skip everything (one SKIP line)
#   IK_HIL_REQUIRE=1    missing tools fail instead of skipping
#   IK_HIL_CONFIGS      the configurations to run (default: all six)
#   IK_QEMU_RISCV       the qemu-system-riscv64 of riscv-virt (default: the
#                       one in PATH; it must offer -device riscv-iommu-pci)
#   IK_HIL_TIMEOUT      seconds per QEMU run (default 60)
#   IK_HIL_OUT          build and log directory (default ./_hil; kept, so
#                       the next run rebuilds only what changed)
# --summary prints automake-style "# PASS: N" / "# FAIL: N" / "# SKIP: N"
# after the plan (for .ci/run when run on its own).  Prints TAP, plan last.
set -u
: "${top_srcdir:=.}"
top=$(cd "$top_srcdir" && pwd)
out=${IK_HIL_OUT:-$(pwd)/_hil}
tmo=${IK_HIL_TIMEOUT:-60}
require=${IK_HIL_REQUIRE:-0}
configs=${IK_HIL_CONFIGS:-"virt-smmuv3 q35-vtd-aw39 q35-vtd-aw48 q35-vtd-sm48 q35-amd riscv-virt"}
qemu_riscv=${IK_QEMU_RISCV:-qemu-system-riscv64}
summary=0
[ "${1:-}" = --summary ] && summary=1
n=0 pass=0 fail=0 skip=0

ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $*"; }
skipped() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n # SKIP $*"; }
finish() {
	echo "1..$n"
	if [ "$summary" -eq 1 ]; then
		echo "# PASS: $pass"
		echo "# FAIL: $fail"
		echo "# SKIP: $skip"
	fi
	[ "$fail" -eq 0 ]
	exit
}
show() { # show FILE LABEL: the last lines of a log, as diagnostics
	[ -s "$1" ] && tail -n 25 "$1" | tr -d '\r' | sed "s/^/#   $2| /"
}

if [ "${IK_HIL:-1}" = 0 ]; then
	skipped "hardware-in-the-loop checks disabled (IK_HIL=0)"
	finish
fi

host=$(uname -m)
arch_of() { case $1 in virt-*) echo aarch64 ;; q35-*) echo x86_64 ;; riscv-*) echo riscv64 ;; esac; }
cross_of() { [ "$1" = "$host" ] && echo "" || echo "$1-linux-gnu-"; }
qemu_of() {
	case $1 in
	aarch64) echo qemu-system-aarch64 ;;
	x86_64) echo qemu-system-x86_64 ;;
	riscv64) echo "$qemu_riscv" ;;
	esac
}
image_of() {
	case $1 in
	aarch64) echo ik-hil-qemu-virt ;;
	x86_64) echo ik-hil-qemu-q35 ;;
	riscv64) echo ik-hil-qemu-riscv-virt ;;
	esac
}

# qemu_cmd CONFIG IMAGE SERIAL-LOG: the configuration's command line, in
# "$@" of the caller (set -- $(...) would split paths; print one per line).
qemu_cmd() {
	edu="edu,addr=03.0,dma_mask=0xffffffffffffffff"
	case $1 in
	virt-smmuv3)
		printf '%s\n' qemu-system-aarch64 -M virt,iommu=smmuv3,highmem=off -accel tcg \
			-cpu cortex-a57 -smp 1 -m 128M -nodefaults -display none -no-reboot \
			-serial "file:$3" -device "$edu" -kernel "$2" ;;
	q35-vtd-aw39 | q35-vtd-aw48)
		aw=${1#q35-vtd-aw}
		printf '%s\n' qemu-system-x86_64 -M q35 -accel tcg -cpu qemu64 -smp 1 -m 128M \
			-nodefaults -display none -no-reboot -serial "file:$3" \
			-device "intel-iommu,aw-bits=$aw" -device "$edu" \
			-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
			-kernel "$2" -append "hil.iommu=vtd hil.aw-bits=$aw" ;;
	q35-vtd-sm48)
		printf '%s\n' qemu-system-x86_64 -M q35 -accel tcg -cpu qemu64 -smp 1 -m 128M \
			-nodefaults -display none -no-reboot -serial "file:$3" \
			-device "intel-iommu,aw-bits=48,x-scalable-mode=on" -device "$edu" \
			-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
			-kernel "$2" -append "hil.iommu=vtd hil.aw-bits=48" ;;
	q35-amd)
		printf '%s\n' qemu-system-x86_64 -M q35 -accel tcg -cpu qemu64 -smp 1 -m 128M \
			-nodefaults -display none -no-reboot -serial "file:$3" \
			-device amd-iommu -device "$edu" \
			-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
			-kernel "$2" -append "hil.iommu=amd" ;;
	riscv-virt)
		# -bios none: QEMU's reset vector enters the ELF in M-mode; the
		# command line reaches the image as /chosen/bootargs.
		printf '%s\n' "$qemu_riscv" -M virt -accel tcg -smp 1 -m 256M -nodefaults \
			-display none -no-reboot -bios none -serial "file:$3" \
			-device riscv-iommu-pci,addr=01.0 -device "$edu" \
			-kernel "$2" -append "hil.iommu=riscv" ;;
	esac
}

# What each configuration lacks (empty: it can run).
missing_for() {
	a=$(arch_of "$1") m=
	case $a in "") echo "unknown configuration"; return ;; esac
	q=$(qemu_of "$a")
	if ! command -v "$q" > /dev/null 2>&1; then
		m="$m $q"
	elif [ "$a" = riscv64 ] && ! "$q" -device help 2>/dev/null | grep -q '"riscv-iommu-pci"'; then
		m="$m $q with riscv-iommu-pci (QEMU 10: scripts/build-qemu-riscv.sh, IK_QEMU_RISCV)"
	fi
	c=$(cross_of "$a")
	command -v "${c}gcc" > /dev/null 2>&1 || m="$m ${c}gcc"
	command -v "${c}nm" > /dev/null 2>&1 || m="$m ${c}nm"
	command -v timeout > /dev/null 2>&1 || m="$m timeout"
	echo "${m# }"
}

runnable='' all_missing=''
for cfg in $configs; do
	m=$(missing_for "$cfg")
	if [ -z "$m" ]; then
		runnable="$runnable $cfg"
	else
		all_missing="$all_missing $cfg ($m)"
	fi
done
if [ -z "$runnable" ] && [ "$require" != 1 ]; then
	skipped "hardware-in-the-loop checks: not installed:$all_missing"
	finish
fi
for cfg in $configs; do
	m=$(missing_for "$cfg")
	[ -n "$m" ] || continue
	if [ "$require" = 1 ]; then
		notok "$cfg: not installed: $m (IK_HIL_REQUIRE=1)"
	else
		skipped "$cfg: not installed: $m"
	fi
done

[ -n "$runnable" ] || finish

# Build each architecture's image once; the parent make's flags (a jobserver,
# CC=... from the command line) must not leak into the bare-metal build.
unset MAKEFLAGS MFLAGS MAKELEVEL
mkdir -p "$out"
built=
for a in aarch64 x86_64 riscv64; do
	need=0
	for cfg in $runnable; do [ "$(arch_of "$cfg")" = "$a" ] && need=1; done
	[ "$need" -eq 1 ] || continue
	t0=$(date +%s)
	if ${MAKE:-make} -j2 -C "$top/examples/baremetal" ARCH="$a" OUT="$out/$a" hil \
		> "$out/build-$a.log" 2>&1 && [ -f "$out/$a/$(image_of "$a")" ]; then
		ok "$a: hil image $(image_of "$a") builds freestanding, no undefined symbol"
		built="$built $a"
	else
		notok "$a: hil image $(image_of "$a") builds"
		show "$out/build-$a.log" build
	fi
	echo "# time: build $a $(($(date +%s) - t0)) s"
done

# run_config CONFIG: boot it, renumber its TAP lines, judge the run.
run_config() {
	cfg=$1 a=$(arch_of "$1")
	serial=$out/$cfg.serial.log qlog=$out/$cfg.qemu.log
	rm -f "$serial" "$qlog"
	case " $built " in *" $a "*) ;; *) notok "$cfg: not run (the $a image did not build)"; return ;; esac
	qemu_cmd "$cfg" "$out/$a/$(image_of "$a")" "$serial" > "$out/$cfg.cmd"
	echo "# $cfg: $(tr '\n' ' ' < "$out/$cfg.cmd")"
	t0=$(date +%s)
	# One argument per line in the .cmd file (paths hold no newline).
	(
		set --
		while IFS= read -r arg; do set -- "$@" "$arg"; done < "$out/$cfg.cmd"
		exec timeout -k 5 "$tmo" "$@"
	) > "$qlog" 2>&1 < /dev/null
	rc=$?
	elapsed=$(($(date +%s) - t0))
	plan='' seen=0 done_line=0 bail='' order_bad='' img_failed=0
	if [ -f "$serial" ]; then
		tr -d '\r' < "$serial" > "$serial.tap"
		while IFS= read -r line; do
			case $line in
			"ok "* | "not ok "*)
				[ -n "$plan" ] || order_bad="a result before the plan"
				seen=$((seen + 1))
				case $line in
				"ok "*) rest=${line#ok } ;;
				*) rest=${line#not ok } ;;
				esac
				num=${rest%% *}
				[ "$num" = "$seen" ] || order_bad="result $num where $seen was due"
				desc=${rest#"$num"}
				desc=${desc# }
				desc=${desc#- }
				case $line in
				"ok "*)
					case $desc in
					*" # SKIP"*) n=$((n + 1)); skip=$((skip + 1))
						echo "ok $n - $cfg: $desc" ;;
					*) ok "$cfg: $desc" ;;
					esac ;;
				*) img_failed=$((img_failed + 1)); notok "$cfg: $desc" ;;
				esac ;;
			"1.."*)
				if [ -z "$plan" ]; then plan=${line#1..}; else order_bad="a second plan"; fi ;;
			"Bail out!"*) bail=$line; echo "# $cfg: $line" ;;
			"# hil: done"*) done_line=1; echo "# $cfg |${line#\#}" ;;
			"#"*) echo "# $cfg |${line#\#}" ;;
			esac
		done < "$serial.tap"
	fi
	# The QEMU exit status the image's verdict implies: virt ends with PSCI
	# SYSTEM_OFF (0 whatever the result); q35 with isa-debug-exit, status
	# s << 1 | 1 for the image's s (0: every check passed, 1: not); riscv
	# virt with its SiFive test device, status s.
	case $a in
	aarch64) want_rc=0 ;;
	riscv64) if [ "$img_failed" -eq 0 ]; then want_rc=0; else want_rc=1; fi ;;
	*) if [ "$img_failed" -eq 0 ]; then want_rc=1; else want_rc=3; fi ;;
	esac
	why=
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		why="timed out after $tmo s (QEMU killed)"
	elif [ -n "$bail" ]; then
		why="the image bailed out"
	elif [ -z "$plan" ]; then
		why="no TAP plan on the serial console"
	elif [ -n "$order_bad" ]; then
		why="TAP out of order: $order_bad"
	elif [ "$seen" -ne "$plan" ]; then
		why="stopped after $seen of $plan results"
	elif [ "$done_line" -ne 1 ]; then
		why="no closing '# hil: done' line"
	elif [ "$rc" -ne "$want_rc" ]; then
		why="QEMU exit status $rc, expected $want_rc"
	fi
	if [ -z "$why" ]; then
		ok "$cfg: run complete: $seen of $plan results, QEMU exit status $rc ($elapsed s)"
	else
		notok "$cfg: run complete: $why (${seen} of ${plan:-?} results, QEMU exit status $rc, $elapsed s)"
		show "$qlog" qemu
		[ -n "$plan" ] || show "$serial.tap" serial
	fi
	echo "# time: run $cfg $elapsed s"
}

for cfg in $runnable; do
	run_config "$cfg"
done
finish
