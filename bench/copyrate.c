/*
 * bench/copyrate.c: what a byte copied costs on this machine in user space
 * (libc's memcpy(), as soft SMC-R copies into its send buffer and out of
 * its RMB) and in the kernel (a pipe's copy in and out, as the kernel's
 * SMC-R copies to and from its buffers), in CPU seconds per GiB.  Run in
 * bench/softroce.sh's guests (tests/vm/guest/b1.sh prints its line): TCG
 * may emulate the one faster than the other, which the CPU split of soft
 * SMC-R (user time) against the kernel's (system time) would carry.
 * Usage: copyrate [MIB]  (default 256)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define CHUNK (64 * 1024)
/* as large as soft SMC-R's send buffer: the copies go round it */
#define RING (256 * 1024)

static double cpu_s(const struct rusage *a, const struct rusage *b, int sys)
{
	const struct timeval *x = sys ? &a->ru_stime : &a->ru_utime, *y = sys ? &b->ru_stime : &b->ru_utime;

	return (double)(y->tv_sec - x->tv_sec) + (double)(y->tv_usec - x->tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
	long mib = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	size_t chunks;
	char *src = malloc(RING), *dst = malloc(RING);
	struct rusage r0, r1, r2;
	int p[2];

	if (mib <= 0)
		mib = 256;
	chunks = (size_t)mib * (1024 * 1024 / CHUNK);
	if (!src || !dst || pipe(p)) {
		perror("copyrate");
		return 1;
	}
	fcntl(p[1], F_SETPIPE_SZ, CHUNK);
	memset(src, 0x5a, RING);
	memset(dst, 0, RING);
	getrusage(RUSAGE_SELF, &r0);
	for (size_t i = 0; i < chunks; i++) {
		size_t off = i * CHUNK % RING;

		memcpy(dst + off, src + off, CHUNK);
		/* the copy is used: no compiler may leave it out */
		__asm__ volatile("" : : "r"(dst) : "memory");
	}
	getrusage(RUSAGE_SELF, &r1);
	for (size_t i = 0; i < chunks; i++) {
		size_t off = i * CHUNK % RING;

		if (write(p[1], src + off, CHUNK) != CHUNK || read(p[0], dst + off, CHUNK) != CHUNK) {
			perror("copyrate: pipe");
			return 1;
		}
	}
	getrusage(RUSAGE_SELF, &r2);
	/* the pipe copies each byte twice: in (copy_from_user) and out (copy_to_user) */
	printf("copyrate: %ld MiB: memcpy %.2f s user + %.2f s sys per GiB; pipe %.2f s user + %.2f s sys per GiB copied\n",
	       mib, cpu_s(&r0, &r1, 0) * 1024 / (double)mib, cpu_s(&r0, &r1, 1) * 1024 / (double)mib,
	       cpu_s(&r1, &r2, 0) * 512 / (double)mib, cpu_s(&r1, &r2, 1) * 512 / (double)mib);
	free(src);
	free(dst);
	return 0;
}
