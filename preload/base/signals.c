/*
 * Whether an interrupted wait of the library's restarts, as the kernel
 * decides for recv(): a handler with SA_RESTART lets the call go on, one
 * without it ends the call with EINTR.  The library's own waits (a futex,
 * poll) are never restarted by the kernel, and EINTR does not say which
 * handler ran.  So a handler that the program installs without SA_RESTART
 * runs behind a trampoline that counts its runs in the thread it
 * interrupted; the program's sigaction() sees its own handler and flags.
 * A handler installed past sigaction() (sysv_signal(), siginterrupt(), a
 * raw system call) cannot be told apart: while one is there, every
 * interruption counts as one without SA_RESTART (doc/soft-ring.md
 * section 2).
 */
#include <dlfcn.h>

#include "base.h"

struct wrapped {
	_Atomic uintptr_t fn;      /* the program's handler (kept for a late signal) */
	_Atomic int flags;         /* its sa_flags, as the program gave them */
	_Atomic bool on;           /* the trampoline was installed last */
};

static struct wrapped wrapped[NSIG];
static __thread unsigned norestart_runs __attribute__((tls_model("initial-exec")));

/* Raised by the faulting thread itself, never while it blocks in a call. */
static bool fault_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
	       sig == SIGTRAP || sig == SIGSYS;
}

static void trampoline(int sig, siginfo_t *si, void *uc)
{
	uintptr_t fn = atomic_load_explicit(&wrapped[sig].fn, memory_order_acquire);
	int flags = atomic_load_explicit(&wrapped[sig].flags, memory_order_relaxed);

	norestart_runs++;
	if (!fn)
		return;
	if (flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))fn)(sig, si, uc);
	else
		((void (*)(int))fn)(sig);
}

static bool is_trampoline(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == trampoline;
}

/* The trampoline's action as the kernel reports it, with the program's handler (SA_RESTORER stays). */
static void as_given(struct sigaction *sa, uintptr_t fn, int flags)
{
	sa->sa_flags = (sa->sa_flags & ~SA_SIGINFO) | (flags & SA_SIGINFO);
	sa->sa_sigaction = (void (*)(int, siginfo_t *, void *))fn;
}

/* The kernel's action as the program installed it, given the entry (fn, flags, on) it had. */
static void as_installed(struct sigaction *sa, uintptr_t fn, int flags, bool on)
{
	if (is_trampoline(sa))
		as_given(sa, fn, flags);
	else if (on && sa->sa_handler == SIG_DFL && (sa->sa_flags & SA_RESETHAND))
		/* the kernel reset it after the trampoline ran: its flags stay */
		sa->sa_flags = (sa->sa_flags & ~SA_SIGINFO) | (flags & SA_SIGINFO);
}

static bool to_wrap(int sig, const struct sigaction *act)
{
	if (!act || sig <= 0 || sig >= NSIG || fault_signal(sig) || (act->sa_flags & SA_RESTART))
		return false;
	return act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
}

int sig_action(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction k, prev;
	uintptr_t was_fn;
	int was_flags, rc;
	bool was_on;

	if (!next.sigaction)
		next.sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(
			RTLD_NEXT, "sigaction");
	if (!to_wrap(sig, act)) {
		bool known = sig > 0 && sig < NSIG;

		was_on = known && atomic_load(&wrapped[sig].on);

		rc = next.sigaction(sig, act, &prev);
		if (!rc && act && known)
			atomic_store(&wrapped[sig].on, false);
		if (!rc && old) {
			if (known)
				as_installed(&prev, atomic_load(&wrapped[sig].fn),
					     atomic_load(&wrapped[sig].flags), was_on);
			*old = prev;
		}
		return rc;
	}
	k = *act;
	k.sa_sigaction = trampoline;
	k.sa_flags |= SA_SIGINFO;
	was_fn = atomic_load(&wrapped[sig].fn);
	was_flags = atomic_load(&wrapped[sig].flags);
	was_on = atomic_load(&wrapped[sig].on);
	/* the entry first: a signal between the two finds the new handler either way */
	atomic_store(&wrapped[sig].flags, act->sa_flags);
	atomic_store_explicit(&wrapped[sig].fn, (uintptr_t)act->sa_sigaction, memory_order_release);
	rc = next.sigaction(sig, &k, &prev);
	if (rc) {
		atomic_store(&wrapped[sig].flags, was_flags);
		atomic_store(&wrapped[sig].fn, was_fn);
		return rc;
	}
	atomic_store(&wrapped[sig].on, true);
	if (old) {
		as_installed(&prev, was_fn, was_flags, was_on);
		*old = prev;
	}
	return 0;
}

unsigned sig_norestart_mark(void)
{
	return norestart_runs;
}

/* A handler without SA_RESTART that the trampoline does not stand in front of. */
static bool unknown_norestart(void)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sig == SIGKILL || sig == SIGSTOP || fault_signal(sig) ||
		    next.sigaction(sig, NULL, &sa))
			continue;
		if (is_trampoline(&sa) || (sa.sa_flags & SA_RESTART))
			continue;
		if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
			return true;
	}
	return false;
}

bool sig_restarts(unsigned mark)
{
	return norestart_runs == mark && !unknown_norestart();
}
