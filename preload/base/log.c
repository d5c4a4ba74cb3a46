/* The library's lines on stderr: SMC_DEBUG's, and the few always shown. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"

/* One write(2) per message, so lines of concurrent threads do not mix. */
static void vmsg(const char *fmt, va_list ap)
{
	char buf[512];
	int saved = errno;
	int n;

	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	/* the system call itself: write() is one of this library's hooks */
	if (n > 0 && next.syscall && next.syscall(SYS_write, STDERR_FILENO, buf, (size_t)n) < 0) {
		/* nowhere to report it */
	}
	errno = saved;
}

void preload_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!preload_cfg.debug)
		return;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void preload_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}
