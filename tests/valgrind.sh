#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# valgrind.sh SUITE...: run each Check suite under valgrind's leak check
# (make check-valgrind; CI's valgrind step): CK_FORK=no so that valgrind sees
# the tests themselves, IK_TEST_SCALE=0.05 so that it ends in minutes.  A
# definite or indirect leak, or any valgrind error, fails the suite.  Prints
# each suite's TAP and automake-style "# PASS:" / "# FAIL:" / "# ERROR:"
# counts; exits non-zero if anything failed.
set -u
: "${VALGRIND:=valgrind}"
: "${LIBTOOL:=./libtool}"
: "${IK_TEST_SCALE:=0.05}"
export IK_TEST_SCALE
command -v "$VALGRIND" > /dev/null 2>&1 || { echo "check-valgrind: $VALGRIND not found (apt-get install valgrind)"; exit 1; }
rc=0 tp=0 tf=0
for t in "$@"; do
	log=$t.vg.log
	echo "--- $t"
	# libtool wrapper scripts: run the real binary through libtool.
	if ! CK_FORK=no $LIBTOOL --mode=execute "$VALGRIND" -q --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=99 "./$t" > "$log" 2>&1; then
		rc=1
	fi
	cat "$log"
	ok=$(grep -c '^ok ' "$log")
	nok=$(grep -c '^not ok ' "$log")
	echo "# PASS: $ok"
	echo "# FAIL: $nok"
	tp=$((tp + ok)) tf=$((tf + nok))
	if grep -q '^==[0-9]*==' "$log"; then echo "# ERROR: 1"; rc=1; fi
done
echo "check-valgrind: $tp passed, $tf failed under valgrind in $# suites"
exit $rc
