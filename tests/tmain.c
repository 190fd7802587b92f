/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * main() for every Check suite: runs ik_test_suite() and prints TAP on
 * stdout.  CK_FORK=no (Check's own variable) runs tests in-process, as the
 * valgrind leak check does.  Exit status: 0 when every test passed.
 */
#include <stdlib.h>
#include "testlib.h"

int main(void)
{
	SRunner *sr = srunner_create(ik_test_suite());
	int failed;

	srunner_set_tap(sr, "-");
	srunner_run_all(sr, CK_SILENT);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
