// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * /init of vfio-edu's guest (examples/vfio-edu/guest.sh): a static program,
 * the only process of the VM.  It
 *   1. mounts /proc, /sys and devtmpfs on /dev;
 *   2. loads the VFIO modules from the initramfs root in dependency order
 *      (irqbypass, vfio, vfio_iommu_type1 allow_unsafe_interrupts=1,
 *      vfio-pci-core, vfio-pci), compressed .ko.xz as the kernel decompresses
 *      them itself (finit_module's MODULE_INIT_COMPRESSED_FILE);
 *   3. finds QEMU's edu device (1234:11e8) in sysfs and binds it to vfio-pci
 *      (driver_override, drivers_probe);
 *   4. runs /vfio-edu ADDR, every line of its output prefixed (with the
 *      options that the kernel command line's vfio_edu_arg=X words give);
 *   5. looks in the kernel log for the IOMMU's report of the DMA fault that
 *      vfio-edu provokes (a DMAR fault naming the device), and prints it;
 *   6. powers off.
 * Every line meant for guest.sh starts with "vfio-edu-guest: " (TAP lines
 * and "# " comments after the prefix); the kernel's own console output goes
 * around them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "guest-vfio.h"	/* module loading, binding, running, fault lines */

#define P "vfio-edu-guest: "

static unsigned n;

static void tap(int ok, const char *what, const char *detail)
{
	printf(P "%s %u - %s%s%s\n", ok ? "ok" : "not ok", ++n, what, detail ? ": " : "",
	       detail ? detail : "");
	fflush(stdout);
}

static void off(void)
{
	printf(P "done\n");
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	_exit(1);
}

static unsigned read_hex(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return (unsigned)strtoul(buf, NULL, 16);
}

static int find_edu(char *addr, size_t size)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *de;
	char path[300];
	int found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", de->d_name);
		if (read_hex(path) != 0x1234)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", de->d_name);
		if (read_hex(path) != 0x11e8)
			continue;
		if (strlen(de->d_name) < size) {
			memcpy(addr, de->d_name, strlen(de->d_name) + 1);
			found = 1;
		}
	}
	closedir(d);
	return found;
}

static void vfio_edu_line(void *ctx, char *line)
{
	(void)ctx;
	printf(P "vfio-edu: %s", line);
	fflush(stdout);
}

/* Run /vfio-edu [args] ADDR, the args from the kernel command line's
 * vfio_edu_arg=X words (guest.sh's IK_VFIO_ARGS); its lines prefixed.
 * Returns its exit status or -1. */
static int run_vfio_edu(const char *addr)
{
	static char cmdline[4096];
	char *argv[64], *save = NULL, *w;
	int st, fd, argc = 0;
	ssize_t len;

	argv[argc++] = "vfio-edu";
	fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	len = fd < 0 ? -1 : read(fd, cmdline, sizeof(cmdline) - 1);
	if (fd >= 0)
		close(fd);
	cmdline[len > 0 ? len : 0] = 0;
	for (w = strtok_r(cmdline, " \n", &save); w && argc < 62; w = strtok_r(NULL, " \n", &save))
		if (!strncmp(w, "vfio_edu_arg=", 13))
			argv[argc++] = w + 13;
	argv[argc++] = (char *)addr;
	argv[argc] = NULL;

	st = gv_run("/vfio-edu", argv, vfio_edu_line, NULL);
	if (st < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	char addr[300], short_addr[300], msg[400];
	bool bound;
	int r, faults;

	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/dev", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf(P "# init started\n");

	for (size_t i = 0; i < GV_VFIO_NMODS; i++) {
		r = gv_load(gv_vfio_mods[i].file, gv_vfio_mods[i].params,
			    MODULE_INIT_COMPRESSED_FILE);
		if (r == EEXIST)
			r = 0;	/* built in, or loaded already */
		snprintf(msg, sizeof(msg), "%s", r ? strerror(r) : "loaded");
		tap(r == 0, gv_vfio_mods[i].file + 1, msg);
		if (r)
			off();
	}
	if (!find_edu(addr, sizeof(addr))) {
		tap(0, "edu (1234:11e8) is on the PCI bus", "not found");
		off();
	}
	r = gv_bind_vfio_pci(addr, &bound);
	tap(r == 0 && bound, "edu bound to vfio-pci", addr);
	if (r || !bound)
		off();

	r = run_vfio_edu(addr);
	snprintf(msg, sizeof(msg), "exit status %d", r);
	tap(r == 0, "vfio-edu passed", msg);

	/* The IOMMU driver's fault report, e.g. "DMAR: [DMA Write NO_PASID]
	 * Request device [00:03.0] fault addr 0x..." (bus:dev.fn without the
	 * domain).  Another IOMMU driver's report must name the device too. */
	{
		size_t skip = strlen(addr) > 5 ? 5 : 0; /* "dddd:" */

		memcpy(short_addr, addr + skip, strlen(addr) + 1 - skip);
	}
	faults = gv_fault_lines(short_addr, P "# kernel: ", 0);
	snprintf(msg, sizeof(msg), "%d line(s) naming %s", faults, short_addr);
	tap(faults > 0, "the kernel logged the IOMMU fault of the DMA after unmap", msg);
	off();
	return 0;
}
