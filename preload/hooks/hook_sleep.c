/*
 * Waits that cannot be cut short for a connection's offer (offer.c): the
 * process sleeps, waits for a child or for a signal.  Before it does, every
 * connection whose offer would come due meanwhile is offered, so that one
 * left idle while its process sleeps is paired and listed so.  A wait that
 * would not block (WNOHANG, a zero time) offers nothing.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))

static int64_t span_ns(const struct timespec *ts)
{
	if (!ts || ts->tv_sec < 0 || ts->tv_nsec < 0)
		return -1;
	if (ts->tv_sec > INT64_MAX / 1000000000 - 1)
		return -1;
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

EXPORT unsigned int sleep(unsigned int s)
{
	PRELOAD_INIT();
	offer_before_sleep((int64_t)s * 1000000000);
	return next.sleep(s);
}

EXPORT int usleep(useconds_t us)
{
	PRELOAD_INIT();
	offer_before_sleep((int64_t)us * 1000);
	return next.usleep(us);
}

EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	PRELOAD_INIT();
	offer_before_sleep(span_ns(req));
	return next.nanosleep(req, rem);
}

EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
			   struct timespec *rem)
{
	PRELOAD_INIT();
	/* until a time of that clock: how long is not worth a clock read here */
	offer_before_sleep(flags & TIMER_ABSTIME ? -1 : span_ns(req));
	return next.clock_nanosleep(clk, flags, req, rem);
}

EXPORT int pause(void)
{
	PRELOAD_INIT();
	offer_before_sleep(-1);
	return next.pause();
}

EXPORT int sigsuspend(const sigset_t *mask)
{
	PRELOAD_INIT();
	offer_before_sleep(-1);
	return next.sigsuspend(mask);
}

EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	PRELOAD_INIT();
	offer_before_sleep(-1);
	return next.sigwaitinfo(set, info);
}

EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *ts)
{
	PRELOAD_INIT();
	offer_before_sleep(span_ns(ts));
	return next.sigtimedwait(set, info, ts);
}

EXPORT pid_t wait(int *status)
{
	PRELOAD_INIT();
	offer_before_sleep(-1);
	return next.wait(status);
}

EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	PRELOAD_INIT();
	if (!(options & WNOHANG))
		offer_before_sleep(-1);
	return next.waitpid(pid, status, options);
}

EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	PRELOAD_INIT();
	if (!(options & WNOHANG))
		offer_before_sleep(-1);
	return next.wait4(pid, status, options, ru);
}

EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	PRELOAD_INIT();
	if (!(options & WNOHANG))
		offer_before_sleep(-1);
	return next.waitid(idtype, id, info, options);
}
