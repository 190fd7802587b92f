#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# iommukit-bench's integer options: a bad value - empty, a sign or a space
# before it, trailing characters, beyond 2^64 - 1 (the number or with its
# k/M/G suffix: 0x40000000000001M was once taken as 1 MiB), an empty list
# element, or out of the option's own range - exits 2 with one line that
# names the option.  Each command line ends with --bogus: a value taken by
# mistake then fails on that instead, with a line that does not name the
# option (and nothing runs).  Some good values are checked to be taken
# (--bogus is then the complaint).  (--time, a real number, is checked in
# bench-dma.sh.)  cmdq's --queue and --sync take names, not numbers, and
# refuse the same bad values.  Prints TAP, one test per option.
set -u
bench=./iommukit-bench
n=0 fails=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# Values every integer option refuses (;-separated; the first is empty).
common=';-1; -1; 1;+1;1x;0x;1 ;1k2;18446744073709551616;0x10000000000000000;0x40000000000001M'
common="$common;0x40000000000001k;0x400000001G;99999999999999999999999k"

# subcommand|option|its own bad values|good values (each ;-separated)
cat > "$tmp/cases" <<'EOC'
iova|seed||0;18446744073709551615;0x3fffffffffffffk;16G
iova|threads|0;1025;0x401|1;1024;1k
cmdq|producers|0;17;1,,2;1,;,1;1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17;1,-1;1, 2|1;16;1,2,16
cmdq|batch|0;257;1,,2;2,;1,0x40000000000001M|1;256;1,32
cmdq|ms|0;600001|1;600000
cmdq|log2|8;21|9;20
cmdq|queue|bogus;shared,,linux;shared,;,shared;Shared|shared;linux;shared,linux
cmdq|sync|maybe;yes,no;YES|no;yes
cmdq|consumer-spin|1000000001|0;1000000000;20000
dma|size|1,,2;4k,;,4k;4k,-4k;4k,0x40000000000001M|4k;4k,64k
dma|segments|0;257|1;256
dma|granule|8k;4097|4k;16k;64K
dma|fq-size|0;65537|1;65536
dma|queues|0;65|shared;percpu;1;64
dma|iotlb|3;131072;4,8;1,,1;4,|0;64;64,4
dma|iterations|0;16777217|1;16M
map|size|0;4097;128M|4k;64M
map|samples|0;100001|1;100000
EOC

echo "1..$(wc -l < "$tmp/cases")"
while IFS='|' read -r cmd opt bads goods; do
	n=$((n + 1))
	bad=0
	: > "$tmp/log"
	{
		printf '%s;%s\n' "$common" "$bads" | tr ';' '\n' | sed 's/^/bad|/'
		printf '%s\n' "$goods" | tr ';' '\n' | sed 's/^/good|/'
	} > "$tmp/vals"
	while IFS='|' read -r kind v; do
		err=$($bench "$cmd" "--$opt=$v" --bogus 2>&1 > /dev/null < /dev/null)
		rc=$?
		lines=$(printf '%s\n' "$err" | wc -l)
		if [ "$kind" = bad ]; then
			if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] ||
			   ! printf '%s\n' "$err" | grep -q -e "--$opt"; then
				echo "#   --$opt='$v' taken or misreported: exit $rc: $err" >> "$tmp/log"
				bad=$((bad + 1))
			fi
		elif [ $rc -ne 2 ] || ! printf '%s\n' "$err" | grep -q -e "--bogus"; then
			echo "#   --$opt='$v' refused: exit $rc: $err" >> "$tmp/log"
			bad=$((bad + 1))
		fi
	done < "$tmp/vals"
	if [ "$bad" -eq 0 ]; then
		echo "ok $n - $cmd --$opt: bad values exit 2 naming the option, good ones are taken"
	else
		echo "not ok $n - $cmd --$opt: $bad bad or good values misjudged"
		cat "$tmp/log"
		fails=$((fails + 1))
	fi
done < "$tmp/cases"
[ "$fails" -eq 0 ]
