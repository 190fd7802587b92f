/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * iommukit-bench: whether this build can run --baseline (bench iova, bench
 * map), which loads a second build of the library with
 * dlopen(RTLD_DEEPBIND): BENCH_BASELINE is defined where it can.  The
 * sanitizer runtimes refuse RTLD_DEEPBIND, so sanitized builds go without.
 * Includes config.h and, where there is one, <dlfcn.h>.
 */
#ifndef IK_BENCH_BASELINE_H
#define IK_BENCH_BASELINE_H

#include "config.h"
#ifdef HAVE_DLOPEN
#include <dlfcn.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BENCH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define BENCH_SANITIZED 1
#endif
#endif
#if defined(HAVE_DLOPEN) && defined(RTLD_DEEPBIND) && !defined(BENCH_SANITIZED)
#define BENCH_BASELINE 1
#endif

#endif /* IK_BENCH_BASELINE_H */
