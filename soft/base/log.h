/* The daemon's log: stderr in the foreground, else syslog (log.c). */
#ifndef SOFT_LOG_H
#define SOFT_LOG_H

#include <stdbool.h>

#define SOFTD_PROG "smc_softd"

void softd_log_open(bool use_syslog);
void softd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void softd_log_close(void);

#endif
