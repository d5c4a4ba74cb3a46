/*
 * The soft data path's knobs, read once:
 *   SMC_SPIN_USEC        how long a wait spins before it sleeps, in
 *                        microseconds (default 50; 0 never spins).  A wait
 *                        spins only while the peer runs on another CPU.
 *   SMC_SOFT_PAIR_DELAY_USEC
 *                        how long an established connection (connect,
 *                        accept; a non-blocking connect from its first data
 *                        call) lives before it is offered for pairing, in
 *                        microseconds (default 1000; 0: at once); offer.c.
 *   SMC_SOFT_PAIR_AFTER  0 (default): the delay above; N: after N data calls
 *                        (send or receive) instead.
 *   SMC_SOFT_FUTEX       1 (default): a blocking receive sleeps on a futex in
 *                        the shared memory; 0: in recv() on the TCP socket,
 *                        woken by doorbell bytes.
 *   SMC_SOFT_DRIVE       1: a blocking receive or send on a soft SMC-R
 *                        connection takes its link's completions itself;
 *                        0 (default, until the stall under load that
 *                        doc/soft-roce.md names is understood): the
 *                        progress thread takes them and wakes it.
 *   SMC_SOFT_URING       watch (default): io_uring requests through liburing
 *                        are read, other instances keep connections TCP;
 *                        tcp: every instance does; files: instances not
 *                        watched are taken to reach files only (uring.c).
 *   SMC_SOFT_SOCKET      the daemon's socket (reg_client.h), read here once.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "reg_client.h"

#define SPIN_USEC_DEFAULT   50
#define SPIN_USEC_MAX       100000
#define PAIR_AFTER_DEFAULT  0
#define PAIR_DELAY_USEC_DEFAULT 1000
#define PAIR_DELAY_USEC_MAX     10000000

struct soft_config soft_cfg;

static long read_number(const char *name, long dflt, long min, long max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return dflt;
	n = strtol(v, &end, 10);
	if (*end || n < min || n > max) {
		preload_dbg("libsmc-preload: ignoring %s='%s'\n", name, v);
		return dflt;
	}
	return n;
}

static int read_uring(void)
{
	const char *v = getenv("SMC_SOFT_URING");

	if (!v || !*v || !strcmp(v, "watch"))
		return SOFT_URING_WATCH;
	if (!strcmp(v, "tcp"))
		return SOFT_URING_TCP;
	if (!strcmp(v, "files"))
		return SOFT_URING_FILES;
	preload_dbg("libsmc-preload: ignoring SMC_SOFT_URING='%s' (watch, tcp or files): "
		    "watch is used\n", v);
	return SOFT_URING_WATCH;
}

void soft_config_init(bool enabled)
{
	soft_cfg.spin_ns = (unsigned)read_number("SMC_SPIN_USEC", SPIN_USEC_DEFAULT, 0,
						 SPIN_USEC_MAX) * 1000u;
	soft_cfg.pair_after = (unsigned)read_number("SMC_SOFT_PAIR_AFTER", PAIR_AFTER_DEFAULT,
						    0, 1000000);
	soft_cfg.pair_delay_ns = (uint64_t)read_number("SMC_SOFT_PAIR_DELAY_USEC",
						       PAIR_DELAY_USEC_DEFAULT, 0,
						       PAIR_DELAY_USEC_MAX) * 1000u;
	/* the peer's CPU, not our affinity, decides; this only rules out one CPU */
	soft_cfg.futex = read_number("SMC_SOFT_FUTEX", 1, 0, 1);
	soft_cfg.bells = read_number("SMC_SOFT_BELL", 1, 0, 1);
	soft_cfg.drive = read_number("SMC_SOFT_DRIVE", 0, 0, 1);
	soft_cfg.uring = read_uring();
	soft_cfg.ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	soft_cfg.multi_cpu = soft_cfg.ncpus > 1;
	if (!soft_cfg.socket_path[0])
		soft_reg_socket_path(soft_cfg.socket_path, sizeof(soft_cfg.socket_path));
	soft_cfg.enabled = enabled;
}
