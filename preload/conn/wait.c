/*
 * Spinning before sleeping: only while the peer last ran on another CPU
 * (on a shared core a spinner would only steal the peer's time), only while
 * the machine has no more runnable threads than CPUs (a spinner would take
 * the CPU one of them needs), bounded by SMC_SPIN_USEC, and adaptive: a
 * spin that ends empty-handed, or that waited longer than a sleep costs,
 * halves the budget of the next ones, a short successful one doubles it
 * back.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"

#define SPIN_MIN_NS   2000u       /* below this a spin is not worth starting */
#define SPIN_RETRY    64u         /* sleeps before a disabled spin is tried again */
#define LOAD_EVERY_NS 10000000u   /* how old the runnable count may be */
#define SPIN_PAYS_NS  10000u      /* about what a sleep and its wake-up cost */

static _Atomic unsigned budget_ns = UINT32_MAX;
static _Atomic unsigned skipped;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static _Atomic uint64_t load_at;
static _Atomic bool crowded;

/* Runnable threads of the machine now: /proc/loadavg's "R/T" field; -1 if unknown. */
static long runnable_now(void)
{
	char buf[128], *p;
	ssize_t n;
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = next.read(fd, buf, sizeof(buf) - 1);
	next.close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "0.52 0.58 0.59 3/412 12345": the fourth field */
	p = buf;
	for (int field = 0; field < 3 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p ? strtol(p, NULL, 10) : -1;
}

/*
 * More runnable threads than CPUs (this one included), looked at once per
 * LOAD_EVERY_NS; a sandboxed process cannot look and does not count.
 */
bool soft_cpus_crowded(void)
{
	uint64_t now = (uint64_t)soft_now_ns();
	long r;

	if (now - atomic_load_explicit(&load_at, memory_order_relaxed) < LOAD_EVERY_NS ||
	    soft_sandboxed())
		return atomic_load_explicit(&crowded, memory_order_relaxed);
	atomic_store_explicit(&load_at, now, memory_order_relaxed);
	r = runnable_now();
	if (atomic_exchange_explicit(&crowded, r > soft_cfg.ncpus, memory_order_relaxed) !=
	    (r > soft_cfg.ncpus))
		preload_dbg("libsmc-preload: %ld runnable threads on %ld CPUs: waits %s\n", r,
			    soft_cfg.ncpus, r > soft_cfg.ncpus ? "do not spin" : "may spin");
	return r > soft_cfg.ncpus;
}

/* The budget for the next spin, 0 for none. */
static unsigned spin_budget(void)
{
	unsigned b = atomic_load_explicit(&budget_ns, memory_order_relaxed);

	if (b > soft_cfg.spin_ns)
		b = soft_cfg.spin_ns;
	if (b >= SPIN_MIN_NS)
		return b;
	if (atomic_fetch_add_explicit(&skipped, 1, memory_order_relaxed) % SPIN_RETRY)
		return 0;
	/*
	 * The retry spins the whole budget: once both ends sleep, each waits a
	 * wake-up for the other, longer than any short spin, and only a spin
	 * that outlasts it finds the way back.
	 */
	return soft_cfg.spin_ns;
}

/*
 * A spin that found its data within SPIN_PAYS_NS doubles the next budget;
 * one that waited longer, or in vain, halves it: sleeping and being woken
 * costs less CPU than a long spin (a reader that waits on a slower writer,
 * a bulk transfer, sleeps then).
 */
static void spin_result(unsigned budget, bool ok, uint64_t took)
{
	unsigned b;

	if (ok)
		atomic_fetch_add_explicit(&pstats->spins, 1, memory_order_relaxed);
	if (ok && took <= SPIN_PAYS_NS)
		b = budget * 2 > soft_cfg.spin_ns ? soft_cfg.spin_ns : budget * 2;
	else
		b = budget / 2;
	atomic_store_explicit(&budget_ns, b, memory_order_relaxed);
}

/* Until ready or ns passed: true with *took the time it took. */
static bool spin_for(unsigned ns, bool (*ready)(void *), void *arg, uint64_t *took)
{
	uint64_t start = (uint64_t)soft_now_ns(), now = start;

	do {
		for (int i = 0; i < 16; i++) {
			if (ready(arg)) {
				*took = (uint64_t)soft_now_ns() - start;
				return true;
			}
			cpu_relax();
		}
		now = (uint64_t)soft_now_ns();
	} while (now - start < ns);
	*took = now - start;
	return false;
}

/* Both of our CPU fields: the peer reads the one of the direction it waits on. */
int soft_note_cpu(struct sconn *sc)
{
	int cpu = sched_getcpu();

	if (cpu < 0)
		return cpu;
	TP(sc, note_cpu, cpu);
	return cpu;
}

struct sc_cond {
	struct sconn *sc;
	bool (*cond)(struct sconn *);
};

static bool sc_ready(void *arg)
{
	struct sc_cond *c = arg;

	return c->cond(c->sc);
}

bool soft_spin(struct sconn *sc, bool (*cond)(struct sconn *), bool rx)
{
	struct sc_cond c = { .sc = sc, .cond = cond };
	uint32_t peer, mine;
	int cpu;

	if (!soft_cfg.spin_ns)
		return false;
	cpu = soft_note_cpu(sc);
	if (cpu < 0)
		return false;
	mine = (uint32_t)cpu + 1;
	peer = TP(sc, peer_cpu, rx);
	/* (the machine's load is looked at only where it decides) */
	if (!soft_cfg.multi_cpu || peer == mine || soft_cpus_crowded()) {
		/* a peer on another host does not run any sooner for it */
		if (peer == TP_PEER_REMOTE)
			return false;
		/* a shared core, or all busy: let the peer run once instead of spinning */
		sys_yield();
		return cond(sc);
	}
	return soft_spin_until(sc_ready, &c);
}

bool soft_spin_until(bool (*ready)(void *), void *arg)
{
	unsigned b = spin_budget();
	uint64_t took;
	bool ok;

	if (soft_cpus_crowded() || !b)
		return false;
	ok = spin_for(b, ready, arg, &took);
	spin_result(b, ok, took);
	return ok;
}
