/*
 * sigaction() as a program sees it, with or without libsmc-preload.so (which
 * stands in front of handlers without SA_RESTART, base/signals.c): the old
 * action gives back the handler and flags installed, a handler with and
 * one without SA_SIGINFO get their arguments, SA_RESETHAND and SIG_IGN
 * behave.  Prints one line per check; the bats test compares the output
 * under smc_run with the output without it.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t plain_runs, info_runs, info_signo, info_code;

static void plain(int sig)
{
	(void)sig;
	plain_runs++;
}

static void with_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	info_runs++;
	info_signo = si ? si->si_signo : -1;
	info_code = si ? si->si_code : -1;
	(void)sig;
}

/* The flags a program sets, as an old action reports them (SA_RESTORER is libc's). */
static int shown(int flags)
{
	return flags & (SA_SIGINFO | SA_RESTART | SA_NODEFER | SA_RESETHAND | SA_ONSTACK);
}

static void say_old(const char *what, int sig)
{
	struct sigaction o;

	if (sigaction(sig, NULL, &o)) {
		printf("%s: sigaction failed\n", what);
		return;
	}
	printf("%s: handler %s flags %#x\n", what,
	       o.sa_handler == SIG_DFL ? "SIG_DFL" : o.sa_handler == SIG_IGN ? "SIG_IGN"
	       : (o.sa_flags & SA_SIGINFO) && o.sa_sigaction == with_info ? "with_info"
	       : !(o.sa_flags & SA_SIGINFO) && o.sa_handler == plain ? "plain" : "another",
	       shown(o.sa_flags));
}

int main(void)
{
	struct sigaction a, o;

	memset(&a, 0, sizeof(a));
	a.sa_handler = plain;
	sigaction(SIGUSR1, &a, NULL);
	say_old("plain, no flags", SIGUSR1);
	raise(SIGUSR1);
	printf("plain ran %d\n", (int)plain_runs);

	memset(&a, 0, sizeof(a));
	a.sa_sigaction = with_info;
	a.sa_flags = SA_SIGINFO | SA_NODEFER;
	memset(&o, 0, sizeof(o));
	sigaction(SIGUSR1, &a, &o);
	printf("replaced: handler %s flags %#x\n", o.sa_handler == plain ? "plain" : "another",
	       shown(o.sa_flags));
	say_old("with_info", SIGUSR1);
	raise(SIGUSR1);
	printf("with_info ran %d signo %d user %d\n", (int)info_runs, (int)info_signo,
	       info_code == SI_TKILL || info_code == SI_USER);

	memset(&a, 0, sizeof(a));
	a.sa_handler = plain;
	a.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &a, NULL);
	say_old("plain, SA_RESTART", SIGUSR2);

	memset(&a, 0, sizeof(a));
	a.sa_handler = plain;
	a.sa_flags = SA_RESETHAND;
	sigaction(SIGUSR2, &a, NULL);
	say_old("plain, SA_RESETHAND", SIGUSR2);
	raise(SIGUSR2);
	printf("plain ran %d\n", (int)plain_runs);
	say_old("after SA_RESETHAND ran", SIGUSR2);

	memset(&a, 0, sizeof(a));
	a.sa_handler = SIG_IGN;
	memset(&o, 0, sizeof(o));
	sigaction(SIGUSR1, &a, &o);
	printf("ignored: the old was %s\n",
	       (o.sa_flags & SA_SIGINFO) && o.sa_sigaction == with_info ? "with_info" : "another");
	raise(SIGUSR1);
	say_old("SIG_IGN", SIGUSR1);
	printf("with_info ran %d\n", (int)info_runs);

	memset(&a, 0, sizeof(a));
	a.sa_handler = plain;
	if (sigaction(SIGKILL, &a, NULL) == 0)
		printf("SIGKILL: accepted\n");
	else
		perror("SIGKILL");
	return 0;
}
