/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * src/cmdq/cmdq_test.h - test-only hooks of the command queue.  Not API, not
 * installed, not exported from the shared library: tests/test_cmdq.c
 * includes this header and links the library statically.
 *
 * The two halves of one insertion, so that a test can stage a producer
 * preempted between them:
 *   ik_cmdq_test_reserve() reserves n slots (waiting for space as
 *     ik_cmdq_issue() does) and returns the first index in *first; 0, or
 *     -EINVAL (q or first NULL, n 0 or above the capacity), -ETIMEDOUT;
 *   ik_cmdq_test_commit() writes the n commands there, marks them valid and
 *     publishes.
 */
#ifndef IK_SRC_CMDQ_TEST_H
#define IK_SRC_CMDQ_TEST_H

#include <iommukit/cmdq.h>

IK_BEGIN_DECLS
int ik_cmdq_test_reserve(struct ik_cmdq *q, unsigned n, ik_u32 *first);
void ik_cmdq_test_commit(struct ik_cmdq *q, ik_u32 first, const void *cmds, unsigned n);
IK_END_DECLS

#endif /* IK_SRC_CMDQ_TEST_H */
