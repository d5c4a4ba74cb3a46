/* smc_rnics: reading (and writing the power files of) a sysfs tree below a root. */
#include "rnics.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rnics_root(void)
{
	const char *r = getenv("SMC_SYSFS_ROOT");

	return r && *r ? r : "/sys";
}

static void vpath(char *buf, size_t len, const char *fmt, va_list ap)
{
	int n = snprintf(buf, len, "%s/", rnics_root());

	if (n > 0 && (size_t)n < len)
		vsnprintf(buf + n, len - (size_t)n, fmt, ap);
}

static ssize_t read_path(const char *path, void *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	n = read(fd, buf, len);
	close(fd);
	return n;
}

int rnics_read_bin(unsigned char *buf, size_t len, const char *fmt, ...)
{
	char path[4096];
	va_list ap;

	va_start(ap, fmt);
	vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	return (int)read_path(path, buf, len);
}

int rnics_link_base(char *buf, size_t len, const char *fmt, ...)
{
	char path[4096], target[4096];
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	buf[0] = '\0';
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -1;
	target[n] = '\0';
	snprintf(buf, len, "%s", strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
	return 0;
}

int rnics_read(char *buf, size_t len, const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	buf[0] = '\0';
	n = read_path(path, buf, len - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool rnics_exists(const char *fmt, ...)
{
	char path[4096];
	struct stat sb;
	va_list ap;

	va_start(ap, fmt);
	vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	return stat(path, &sb) == 0;
}

int rnics_list(char ***names, const char *fmt, ...)
{
	char path[4096];
	struct dirent *de;
	char **v = NULL;
	int n = 0;
	va_list ap;
	DIR *d;

	va_start(ap, fmt);
	vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	*names = NULL;
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char **nv;

		if (de->d_name[0] == '.')
			continue;
		nv = realloc(v, sizeof(*v) * (size_t)(n + 1));
		if (!nv)
			break;
		v = nv;
		v[n] = strdup(de->d_name);
		if (v[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), by_name);
	*names = v;
	return n;
}

void rnics_list_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

enum rnics_power_rc rnics_set_power(unsigned long fid, bool on)
{
	char path[4096], cur[16];
	ssize_t w;
	int fd;

	struct stat st;

	snprintf(path, sizeof(path), "%s/bus/pci/slots/%08lx", rnics_root(), fid);
	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return RNICS_POWER_NOFID;
	rnics_read(cur, sizeof(cur), "bus/pci/slots/%08lx/power", fid);
	if (!strcmp(cur, on ? "1" : "0"))
		return RNICS_POWER_SAME;
	snprintf(path, sizeof(path), "%s/bus/pci/slots/%08lx/power", rnics_root(), fid);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return RNICS_POWER_FAILED;
	w = write(fd, on ? "1\n" : "0\n", 2);
	if (close(fd) || w != 2)
		return RNICS_POWER_FAILED;
	return RNICS_POWER_OK;
}
