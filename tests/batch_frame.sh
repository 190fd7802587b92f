#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The batch-size knob of <iommukit/cmdq.h> for kernels: a five-line function
# with a struct ik_cmdq_batch on its stack exceeds Linux's default 2048-byte
# frame limit at the default IK_CMDQ_BATCH_MAX (64), fits with 16 (what
# examples/linux-module's Kbuild uses), and a value out of 1..1024 stops at
# an #error.  Prints TAP.
set -u
: "${top_srcdir:=.}"
. "$top_srcdir/tests/sh-lib.sh"
cat > "$tmp/f.c" <<'EOC'
#include <iommukit/cmdq.h>
int ik_frame_test(struct ik_cmdq *q, const void *cmd);
int ik_frame_test(struct ik_cmdq *q, const void *cmd)
{
	struct ik_cmdq_batch b;

	ik_cmdq_batch_init(&b, q);
	ik_cmdq_batch_add(&b, cmd);
	return ik_cmdq_batch_submit(&b);
}
_Static_assert(sizeof(struct ik_cmdq_batch) == IK_CMDQ_BATCH_MAX * 32 + 24, "batch size");
EOC
cc_frame() { $CC -std=c11 -O2 -Wframe-larger-than=2048 -Werror -I"$top_srcdir/include" "$@" \
	-c "$tmp/f.c" -o "$tmp/f.o" 2> "$tmp/err"; }
echo "1..3"
if cc_frame; then
	echo "not ok 1 - the default batch (64) exceeds a 2048-byte frame (it no longer does: update the advice in cmdq.h)"
elif grep -q 'frame size' "$tmp/err"; then
	echo "ok 1 - the default batch (64) exceeds a 2048-byte frame"
else
	echo "not ok 1 - the default batch (64) exceeds a 2048-byte frame"; sed 's/^/# /' "$tmp/err"
fi
if cc_frame -DIK_CMDQ_BATCH_MAX=16; then
	echo "ok 2 - IK_CMDQ_BATCH_MAX=16 fits a 2048-byte frame"
else
	echo "not ok 2 - IK_CMDQ_BATCH_MAX=16 fits a 2048-byte frame"; sed 's/^/# /' "$tmp/err"
fi
if ! cc_frame -DIK_CMDQ_BATCH_MAX=0 && grep -q 'IK_CMDQ_BATCH_MAX must be' "$tmp/err"; then
	echo "ok 3 - IK_CMDQ_BATCH_MAX=0 stops at its #error"
else
	echo "not ok 3 - IK_CMDQ_BATCH_MAX=0 stops at its #error"
fi
