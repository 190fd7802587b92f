/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ARM LPAE stage 1: the engine instantiated for this format (see "How to
 * add a page-table format" in pgtable_internal.h). */
#include "pgtable_internal.h"

#define LPAE_STAGE 1
#define IKPT_FMT IK_PT_LPAE_S1
#define IKPT_SYM lpae_s1
#define IKPT_NAME "lpae-s1"
#include "fmt_lpae.h"
#include "pgtable_tmpl.h"
