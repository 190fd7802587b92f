/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * guest-vfio.h - the steps a guest's /init takes to run vfio-edu, shared by
 * examples/vfio-edu/guest-init.c and examples/linux-iommu/vtd/guest-init.c
 * (each includes it; header-only, static functions, hosted C):
 *   gv_vfio_mods[]     the VFIO modules in dependency order, as Debian's
 *                      kernel package ships them (.ko.xz), with parameters;
 *   gv_load()          finit_module(), compressed modules included;
 *   gv_write()         a sysfs write;
 *   gv_bind_vfio_pci() driver_override + drivers_probe, then the driver link;
 *   gv_run()           a program with its stdout and stderr read line by line;
 *   gv_fault_lines()   the kernel log's fault reports that name a device.
 * Errors are errno values (0: success); nothing here exits.
 */
#ifndef GUEST_VFIO_H
#define GUEST_VFIO_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/klog.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef MODULE_INIT_COMPRESSED_FILE
#define MODULE_INIT_COMPRESSED_FILE 4
#endif

static const struct {
	const char *file, *params;
} gv_vfio_mods[] = {
	{ "/irqbypass.ko.xz", "" },
	{ "/vfio.ko.xz", "" },
	{ "/vfio_iommu_type1.ko.xz", "allow_unsafe_interrupts=1" },
	{ "/vfio-pci-core.ko.xz", "" },
	{ "/vfio-pci.ko.xz", "" },
};
#define GV_VFIO_NMODS (sizeof(gv_vfio_mods) / sizeof(gv_vfio_mods[0]))

/* Load the module in `file` with `params`; flags as finit_module's
 * (MODULE_INIT_COMPRESSED_FILE for a .ko.xz).  0 or errno (EEXIST: it was
 * loaded already). */
static int gv_load(const char *file, const char *params, int flags)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0 || syscall(SYS_finit_module, fd, params, flags) != 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	return err;
}

/* Write the string s to path (one write).  0 or errno. */
static int gv_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		err = errno;
	if (fd >= 0)
		close(fd);
	return err;
}

/* Bind the PCI device `addr` (dddd:bb:dd.f) to vfio-pci: driver_override,
 * then drivers_probe.  *bound: its driver link names vfio-pci afterwards.
 * 0 or the errno of a failed write. */
static int gv_bind_vfio_pci(const char *addr, bool *bound)
{
	char path[320], link[256];
	ssize_t l;
	int err;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver_override", addr);
	err = gv_write(path, "vfio-pci");
	if (!err)
		err = gv_write("/sys/bus/pci/drivers_probe", addr);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", addr);
	l = readlink(path, link, sizeof(link) - 1);
	link[l > 0 ? l : 0] = '\0';
	*bound = strstr(link, "/vfio-pci") != NULL;
	return err;
}

/* Run `path` with argv, its stdout and stderr in one pipe: each line (as
 * fgets reads it, newline kept) goes to line(ctx, text).  The wait status,
 * or -1 when it could not be started (pipe or fork failed).  A failed exec
 * is the child's "not ok 1 - exec ..." line and status 127. */
static int gv_run(const char *path, char *const argv[], void (*line)(void *ctx, char *text),
		  void *ctx)
{
	char buf[1024];
	int pfd[2], st = -1;
	FILE *in;
	pid_t pid;

	fflush(stdout);
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execv(path, argv);
		printf("not ok 1 - exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	in = fdopen(pfd[0], "r");
	while (in && fgets(buf, sizeof(buf), in))
		line(ctx, buf);
	if (in)
		fclose(in);
	else
		close(pfd[0]);
	return waitpid(pid, &st, 0) < 0 ? -1 : st;
}

/* The kernel log's lines that say "fault" (any case) and name `dev`
 * (bus:dev.fn, without the PCI domain, as IOMMU drivers print it); those
 * from the print_from'th on are printed after `prefix` (print_from < 0:
 * none).  Their number. */
static int gv_fault_lines(const char *dev, const char *prefix, int print_from)
{
	static char log[1 << 20];
	int len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1), nl = 0;

	if (len <= 0)
		return 0;
	log[len] = '\0';
	for (char *l = log, *e; *l; l = e ? e + 1 : l + strlen(l)) {
		e = strchr(l, '\n');
		if (e)
			*e = '\0';
		if (strcasestr(l, "fault") && strstr(l, dev)) {
			if (print_from >= 0 && nl >= print_from)
				printf("%s%s\n", prefix, l);
			nl++;
		}
	}
	return nl;
}

#endif /* GUEST_VFIO_H */
