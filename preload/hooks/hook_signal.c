/*
 * sigaction(): the program's handlers without SA_RESTART run behind the
 * library's trampoline, so that its own waits restart as the kernel's
 * calls would (base/signals.c).  No initialisation of the library here: a
 * sanitizer's runtime or a constructor may install handlers before it.
 */
#include <signal.h>

#include "hooks.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return sig_action(sig, act, old);
}
