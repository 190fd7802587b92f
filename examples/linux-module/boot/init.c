// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * /init of the test initramfs (make boot): raise the console log level so
 * that the self-test's pr_info lines reach the serial console, load
 * /iommukit_selftest.ko, and power the VM off.  Built static (no other file
 * in the initramfs).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/klog.h>
#include <sys/reboot.h>
#include <sys/syscall.h>

int main(void)
{
	int fd;

	klogctl(8 /* SYSLOG_ACTION_CONSOLE_LEVEL */, NULL, 7);
	fd = open("/iommukit_selftest.ko", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, "", 0) != 0)
		printf("iommukit-selftest: init: cannot load the module: %s\n", strerror(errno));
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 1;
}
