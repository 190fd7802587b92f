/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ARM LPAE stage 2: the engine instantiated for this format (see "How to
 * add a page-table format" in pgtable_internal.h). */
#include "pgtable_internal.h"

#define LPAE_STAGE 2
#define IKPT_FMT IK_PT_LPAE_S2
#define IKPT_SYM lpae_s2
#define IKPT_NAME "lpae-s2"
#include "fmt_lpae.h"
#include "pgtable_tmpl.h"
