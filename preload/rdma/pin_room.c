/*
 * How much more memory this process may register with a device: the
 * kernel pins registered pages and counts them against RLIMIT_MEMLOCK
 * (ib_umem_get()), unless the process has CAP_IPC_LOCK.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "rdma.h"

#define CAP_IPC_LOCK_BIT 14     /* <linux/capability.h> */

/* The number after "\nkey" in text (base 10 or 16); false when it is not there. */
static bool field(const char *text, const char *key, int base, unsigned long long *v)
{
	const char *p = strstr(text, key);
	char *end;

	if (!p)
		return false;
	*v = strtoull(p + strlen(key), &end, base);
	return end != p + strlen(key);
}

size_t rdma_mr_room(const char *dev)
{
	char status[4096];
	unsigned long long pinned_kb, caps;
	struct rlimit rl;
	size_t n;
	FILE *f;

	(void)dev;      /* the limit is the process's, on every device */
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return SIZE_MAX;
	/* stdio: its reads are libc's own, not the hooks' (a lower layer, doc/layers.md) */
	f = fopen("/proc/self/status", "re");
	if (!f)
		return SIZE_MAX;
	n = fread(status, 1, sizeof(status) - 1, f);
	fclose(f);
	if (!n)
		return SIZE_MAX;
	status[n] = '\0';
	if (field(status, "\nCapEff:", 16, &caps) && (caps >> CAP_IPC_LOCK_BIT & 1))
		return SIZE_MAX;
	if (!field(status, "\nVmPin:", 10, &pinned_kb))
		return SIZE_MAX;
	return pinned_kb * 1024 >= rl.rlim_cur ? 0 : (size_t)(rl.rlim_cur - pinned_kb * 1024);
}
