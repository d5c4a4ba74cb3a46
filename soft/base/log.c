/* Log lines of smc_softd: stderr in the foreground, syslog otherwise. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

static bool to_syslog;

void softd_log_open(bool use_syslog)
{
	to_syslog = use_syslog;
	if (to_syslog)
		openlog(SOFTD_PROG, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void softd_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (to_syslog) {
		vsyslog(prio, fmt, ap);
	} else {
		fprintf(stderr, "%s: ", SOFTD_PROG);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

void softd_log_close(void)
{
	if (to_syslog)
		closelog();
	to_syslog = false;
}
