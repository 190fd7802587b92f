// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * /init of the ikvtd test guest (guest.sh builds it static and packs it with
 * the modules).  The kernel command line picks the run: ikt=ikvtd loads
 * /ikvtd.ko first (before any NVMe module; ikp=ARGS are its module
 * parameters, e.g. ikp=scalable=1), ikt=intree leaves the in-tree
 * driver (intel_iommu=on) in charge.  Then it loads the NVMe modules, writes
 * a random 16 MiB pattern to /dev/nvme0n1 with O_DIRECT and reads it back
 * (checksum), runs the dma-map benchmark (ikdmabench.ko) on edu, and with
 * ikvtd: prints the driver's counters for the I/O,
 * runs the edu test (a DMA through the domain, then one to an unmapped
 * IOVA that must fault once), runs examples/vfio-edu's program on edu
 * (vfio-pci and vfio_iommu_type1 over ikvtd's domains: its TAP lines become
 * ours, and ikvtd's fault report of its DMA after UNMAP_DMA must name edu),
 * removes nvme and unloads ikvtd.  ikt=intree ikvfio=1 runs vfio-edu under
 * the in-tree driver too.  Every line
 * for guest.sh starts with "IKT: "; results are "IKT: ok - ..." or
 * "IKT: not ok - ...".  It powers the VM off at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* examples/vfio-edu's steps for running vfio-edu in a guest */
#include "../../vfio-edu/guest-vfio.h"

#define IO_BYTES (16u << 20)
#define IO_ROUNDS 3
#define NSTATS 32
#define EDU_ADDR "0000:00:04.0"

static void result(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("IKT: %s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int load(const char *path)
{
	return gv_load(path, "", 0);
}

/* Kernel log lines that name edu (bus:dev.fn) and say "fault"; those from
 * the print_from'th on are printed (-1: none). */
static int edu_fault_lines(int print_from)
{
	return gv_fault_lines(EDU_ADDR + 5, "IKT: #   ", print_from);
}

/* A line of vfio-edu's output: its TAP results become ours (*got counts
 * them), the rest comments. */
static void vfio_edu_line(void *ctx, char *line)
{
	char *t = line;

	line[strcspn(line, "\n")] = '\0';
	if (!strncmp(t, "ok ", 3) || !strncmp(t, "not ok ", 7)) {
		int ok = t[0] == 'o';

		t = strstr(t, " - ");
		++*(int *)ctx;
		result(ok, "vfio-edu: %s", t ? t + 3 : line);
	} else {
		printf("IKT: # vfio-edu: %s\n", line);
	}
}

/* examples/vfio-edu on edu through ikvtd's domains: load the VFIO modules
 * (compressed, as the kernel package ships them), bind edu to vfio-pci, run
 * /vfio-edu with its TAP lines as ours, check that ikvtd reported the fault
 * of its DMA after UNMAP_DMA naming edu, give edu back (unbound). */
static void vfio_edu(void)
{
	static char *const argv[] = { "vfio-edu", EDU_ADDR, NULL };
	int err = 0, st, f0, f1 = 0, got = 0;
	bool bound = false;

	for (size_t i = 0; i < GV_VFIO_NMODS && !err; i++) {
		err = gv_load(gv_vfio_mods[i].file, gv_vfio_mods[i].params,
			      MODULE_INIT_COMPRESSED_FILE);
		if (err)
			printf("IKT: # load %s: %s\n", gv_vfio_mods[i].file, strerror(err));
	}
	if (!err)
		err = gv_bind_vfio_pci(EDU_ADDR, &bound);
	result(!err && bound, "vfio: the VFIO modules load (vfio_iommu_type1 "
	       "allow_unsafe_interrupts=1) and edu binds to vfio-pci%s%s", err ? ": " : "",
	       err ? strerror(err) : "");
	if (err || !bound)
		return;
	f0 = edu_fault_lines(-1);
	st = gv_run("/vfio-edu", argv, vfio_edu_line, &got);
	result(got > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "vfio-edu ran to the end and passed (%d checks, status %#x)", got, st);
	/* ikvtd polls the fault records every IKVTD_FAULT_POLL_MS (200);
	 * the in-tree driver takes the fault interrupt. */
	for (int i = 0; i < 20 && (f1 = edu_fault_lines(-1)) <= f0; i++)
		usleep(100000);
	result(f1 > f0, "the IOMMU driver reported vfio-edu's DMA after UNMAP_DMA: %d kernel line(s) with "
	       "\"fault\" and %s", f1 - f0, EDU_ADDR + 5);
	edu_fault_lines(f0);
	err = gv_write("/sys/bus/pci/devices/" EDU_ADDR "/driver/unbind", EDU_ADDR);
	result(!err, "edu unbound from vfio-pci (the container and domain released)%s%s",
	       err ? ": " : "", err ? strerror(err) : "");
}

struct stats {
	int n;
	char name[NSTATS][32];
	long long v[NSTATS];
};

static int read_stats(struct stats *s)
{
	FILE *f = fopen("/sys/kernel/debug/ikvtd/stats", "r");

	s->n = 0;
	if (!f)
		return -1;
	while (s->n < NSTATS && fscanf(f, "%31s %lld", s->name[s->n], &s->v[s->n]) == 2)
		s->n++;
	fclose(f);
	return 0;
}

static long long stat_of(const struct stats *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->v[i];
	return -1;
}

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* 16 MiB of random data written with O_DIRECT and read back; times in ms. */
static int nvme_io(double *wms, double *rms)
{
	uint8_t *buf;
	uint64_t x = (uint64_t)now_ms() * 2654435761u | 1, sum;
	size_t done;
	int fd, ok = 0;

	if (posix_memalign((void **)&buf, 4096, IO_BYTES))
		return 0;
	for (size_t i = 0; i < IO_BYTES / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		((uint64_t *)buf)[i] = x;
	}
	sum = fnv(buf, IO_BYTES);
	fd = open("/dev/nvme0n1", O_RDWR | O_DIRECT);
	if (fd < 0) {
		printf("IKT: # open /dev/nvme0n1: %s\n", strerror(errno));
		free(buf);
		return 0;
	}
	*wms = now_ms();
	for (done = 0; done < IO_BYTES;) {
		ssize_t n = pwrite(fd, buf + done, IO_BYTES - done, (off_t)done);

		if (n <= 0) {
			printf("IKT: # write at %zu: %s\n", done, strerror(errno));
			goto out;
		}
		done += (size_t)n;
	}
	if (fdatasync(fd)) {
		printf("IKT: # fdatasync: %s\n", strerror(errno));
		goto out;
	}
	*wms = now_ms() - *wms;
	memset(buf, 0, IO_BYTES);
	*rms = now_ms();
	for (done = 0; done < IO_BYTES;) {
		ssize_t n = pread(fd, buf + done, IO_BYTES - done, (off_t)done);

		if (n <= 0) {
			printf("IKT: # read at %zu: %s\n", done, strerror(errno));
			goto out;
		}
		done += (size_t)n;
	}
	*rms = now_ms() - *rms;
	ok = fnv(buf, IO_BYTES) == sum;
	printf("IKT: # checksum %016llx %s\n", (unsigned long long)sum, ok ? "matches" : "DIFFERS");
out:
	close(fd);
	free(buf);
	return ok;
}

/* A config-space read of edu at `off` (0xf8: the I/O starts, 0xfc: it
 * ended): QEMU's pci_cfg_read trace event marks the I/O window in the
 * trace, where guest.sh counts the invalidations the unit executed. */
static void marker(unsigned off)
{
	int fd = open("/sys/bus/pci/devices/0000:00:04.0/config", O_RDONLY);
	uint32_t v;

	if (fd >= 0 && pread(fd, &v, 4, off) != 4)
		printf("IKT: # marker read at %#x failed\n", off);
	if (fd >= 0)
		close(fd);
}

static void show_file(const char *label, const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("IKT: # %s %s", label, line);
	fclose(f);
}

int main(void)
{
	const char *mode = getenv("ikt");
	int ours = mode && !strcmp(mode, "ikvtd");
	struct stats s0, s1;
	double wms = 0, rms = 0, t;
	int i, err;

	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	klogctl(8 /* SYSLOG_ACTION_CONSOLE_LEVEL */, NULL, 7);
	printf("IKT: # mode %s\n", ours ? "ikvtd" : "in-tree");
	if (ours) {
		/* ikp=ARGS on the kernel command line: ikvtd's parameters. */
		const char *args = getenv("ikp") ? getenv("ikp") : "";

		err = gv_load("/ikvtd.ko", args, 0);
		result(!err, "ikvtd.ko%s%s loads from the initramfs before nvme%s%s", *args ? " " : "",
		       args, err ? ": " : "", err ? strerror(err) : "");
		if (err)
			goto off;
	}
	err = load("/nvme-auth.ko");
	err = err ? err : load("/nvme-core.ko");
	err = err ? err : load("/nvme.ko");
	t = now_ms();
	for (i = 0; i < 600 && access("/dev/nvme0n1", F_OK); i++)
		usleep(100000);
	result(!err && !access("/dev/nvme0n1", F_OK), "nvme binds behind the IOMMU, /dev/nvme0n1 in %.0f ms",
	       now_ms() - t);
	show_file("nvme domain:", "/sys/bus/pci/drivers/nvme/0000:00:03.0/iommu_group/type");
	if (ours)
		read_stats(&s0);
	/* IO_ROUNDS rounds, each a new pattern: the median round is the I/O
	 * time (TCG timings are noisy); the counters cover all rounds. */
	{
		double tot[IO_ROUNDS], tmp;
		int r, k, good = 1;

		marker(0xf8);
		for (r = 0; r < IO_ROUNDS; r++) {
			good &= nvme_io(&wms, &rms);
			tot[r] = wms + rms;
			printf("IKT: # round %d: write %.1f ms, read %.1f ms\n", r, wms, rms);
		}
		marker(0xfc);
		result(good, "%d x 16 MiB random pattern written with O_DIRECT and read back, "
		       "checksums equal", IO_ROUNDS);
		for (r = 0; r < IO_ROUNDS; r++)
			for (k = r + 1; k < IO_ROUNDS; k++)
				if (tot[k] < tot[r]) {
					tmp = tot[r];
					tot[r] = tot[k];
					tot[k] = tmp;
				}
		printf("IKT: io rounds %d mib %d median_ms %.1f min_ms %.1f\n", IO_ROUNDS,
		       IO_ROUNDS * 2 * (int)(IO_BYTES >> 20), tot[IO_ROUNDS / 2], tot[0]);
	}
	if (ours)
		read_stats(&s1);
	err = load("/ikdmabench.ko");
	result(!err, "dma-map benchmark (ikdmabench.ko) ran on edu%s%s", err ? ": " : "",
	       err ? strerror(err) : "");
	if (!err)
		syscall(SYS_delete_module, "ikdmabench", O_NONBLOCK);
	if (!ours) {
		/* ikvfio=1: vfio-edu under the in-tree driver as well (the
		 * comparison for examples/vfio-edu). */
		if (getenv("ikvfio"))
			vfio_edu();
		goto off;
	}
	for (i = 0; i < s1.n; i++)
		printf("IKT: stat %s %lld %lld\n", s1.name[i], s1.v[i] - stat_of(&s0, s1.name[i]),
		       s1.v[i]);
	{
		long long sm = stat_of(&s1, "sync_map") - stat_of(&s0, "sync_map");
		long long smc = stat_of(&s1, "sync_map_cmds") - stat_of(&s0, "sync_map_cmds");
		long long sms = stat_of(&s1, "sync_map_syncs") - stat_of(&s0, "sync_map_syncs");
		long long mc = stat_of(&s1, "map_calls") - stat_of(&s0, "map_calls");

		result(stat_of(&s1, "issue_errors") == 0 && stat_of(&s1, "cmds") > 0,
		       "every invalidation completed (%lld descriptors, %lld waits, %lld failed)",
		       stat_of(&s1, "cmds"), stat_of(&s1, "syncs"),
		       stat_of(&s1, "issue_errors"));
		if (stat_of(&s1, "caching_mode") == 1)
			result(sm > 0 && smc == sm && sms == sm && mc > sm,
			       "CM=1: one invalidation and one wait per mapped list (%lld lists, %lld "
			       "segments mapped, %lld invalidations, %lld waits)", sm, mc, smc, sms);
		else
			result(smc == 0 && sms == 0,
			       "CM=0: no invalidation on map (%lld lists, %lld invalidations)", sm, smc);
	}
	{
		char res[200] = "";
		int fd = open("/sys/kernel/debug/ikvtd/edu_test", O_RDWR);

		if (fd >= 0 && write(fd, "1", 1) == 1) {
			ssize_t n = pread(fd, res, sizeof(res) - 1, 0);

			res[n > 0 ? n : 0] = '\0';
			res[strcspn(res, "\n")] = '\0';
		}
		if (fd >= 0)
			close(fd);
		result(!strncmp(res, "pass", 4),
		       "edu DMA through the domain arrives; DMA to an unmapped IOVA is one decoded "
		       "fault; a buffer unmapped under a live DMA faults once and stays untouched; "
		       "guest runs on (%s)", res);
	}
	printf("IKT: # vfio-edu start\n");
	if (!access("/vfio-edu", X_OK))
		vfio_edu();
	else
		result(0, "vfio: /vfio-edu is in the initramfs");
	{
		/* With nvme bound and translated, giving the devices back
		 * must be refused; without it, allowed; then rmmod. */
		int fd = open("/sys/kernel/debug/ikvtd/unregister", O_WRONLY), busy, e2 = 0;

		busy = fd >= 0 && write(fd, "1", 1) < 0 && errno == EBUSY;
		err = syscall(SYS_delete_module, "nvme", O_NONBLOCK) ? errno : 0;
		if (!err && fd >= 0 && write(fd, "1", 1) != 1)
			err = errno;
		if (fd >= 0)
			close(fd);
		result(busy, "ikvtd refuses to give the devices back while nvme is bound (EBUSY)");
		if (!err)
			e2 = syscall(SYS_delete_module, "ikvtd", O_NONBLOCK) ? errno : 0;
		result(!err && !e2, "nvme removed, devices given back, ikvtd unloaded%s%s",
		       err || e2 ? ": " : "", err || e2 ? strerror(err ? err : e2) : "");
	}
off:
	printf("IKT: # done\n");
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 1;
}
