/*
 * Spinning before sleeping: only while the peer last ran on another CPU
 * (on a shared core a spinner would only steal the peer's time), bounded by
 * SMC_SPIN_USEC, and adaptive: a spin that ends empty-handed halves the
 * budget of the next ones, a successful one doubles it back, so a process
 * whose peers are busy elsewhere (more runnable threads than CPUs) stops
 * burning the CPU they need.
 */
#include <sched.h>
#include <time.h>

#include "soft.h"

#define SPIN_MIN_NS   2000u       /* below this a spin is not worth starting */
#define SPIN_RETRY    64u         /* sleeps before a disabled spin is tried again */

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

static void spin_result(unsigned used, bool ok)
{
	unsigned b = used;

	if (ok) {
		b = used * 2 > soft_cfg.spin_ns ? soft_cfg.spin_ns : used * 2;
		atomic_fetch_add_explicit(&pstats->spins, 1, memory_order_relaxed);
	} else {
		b = used / 2;
	}
	atomic_store_explicit(&budget_ns, b, memory_order_relaxed);
}

static bool spin_for(unsigned ns, bool (*ready)(void *), void *arg)
{
	uint64_t end = (uint64_t)soft_now_ns() + ns;

	do {
		for (int i = 0; i < 16; i++) {
			if (ready(arg))
				return true;
			cpu_relax();
		}
	} while ((uint64_t)soft_now_ns() < end);
	return false;
}

/* Both of our CPU fields: the peer reads the one of the direction it waits on. */
int soft_note_cpu(struct sconn *sc)
{
	int cpu = sched_getcpu();

	if (cpu < 0)
		return cpu;
	if (atomic_load_explicit(&sc->dmb.rx.ctrl->cons_cpu, memory_order_relaxed) != (uint32_t)cpu + 1)
		atomic_store_explicit(&sc->dmb.rx.ctrl->cons_cpu, (uint32_t)cpu + 1, memory_order_relaxed);
	if (atomic_load_explicit(&sc->dmb.tx.ctrl->prod_cpu, memory_order_relaxed) != (uint32_t)cpu + 1)
		atomic_store_explicit(&sc->dmb.tx.ctrl->prod_cpu, (uint32_t)cpu + 1, memory_order_relaxed);
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
	peer = atomic_load_explicit(rx ? &sc->dmb.rx.ctrl->prod_cpu : &sc->dmb.tx.ctrl->cons_cpu,
				    memory_order_relaxed);
	if (peer == mine || !soft_cfg.multi_cpu) {
		/* a shared core: let the peer run once instead of spinning */
		sys_yield();
		return cond(sc);
	}
	return soft_spin_until(sc_ready, &c);
}

bool soft_spin_until(bool (*ready)(void *), void *arg)
{
	unsigned b = spin_budget();
	bool ok;

	if (!b)
		return false;
	ok = spin_for(b, ready, arg);
	spin_result(b, ok);
	return ok;
}
