/*
 * libsmc-preload.so: the environment variables, read once.
 *
 *   SMC_DEBUG    debug messages on stderr when set to a value that is not
 *                empty and does not start with '0'
 *   SMC_SNDBUF   SO_SNDBUF for the mapped sockets: bytes, or with suffix k/K
 *   SMC_RCVBUF   (x1024) or m/M (x1048576); SO_RCVBUF likewise
 *   SMC_BACKEND  kernel | soft | auto (default)
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

struct preload_config preload_cfg;

/*
 * Upstream turned debugging on for an empty SMC_DEBUG; an empty value means
 * "not asked for", so it is off here.
 */
bool preload_parse_debug(const char *value)
{
	return value && value[0] && value[0] != '0';
}

/*
 * Parse a buffer size as upstream does (strtol base 10, then an optional
 * k/K or m/M multiplier; other trailing characters are ignored), but refuse
 * what upstream silently turned into nonsense: no digits at all, negative
 * values and sizes beyond INT_MAX.  Returns 0 and sets *bytes, or -1.
 */
int preload_parse_bufsize(const char *value, int *bytes)
{
	long n, mult = 1;
	char *end;

	errno = 0;
	n = strtol(value, &end, 10);
	if (end == value || errno == ERANGE || n < 0)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		mult = 1024;
		break;
	case 'm':
	case 'M':
		mult = 1048576;
		break;
	}
	if (n > INT_MAX / mult)
		return -1;
	*bytes = (int)(n * mult);
	return 0;
}

static int read_bufsize(const char *name)
{
	const char *value = getenv(name);
	int bytes;

	if (!value)
		return -1;
	if (preload_parse_bufsize(value, &bytes) < 0) {
		preload_dbg("libsmc-preload: ignoring %s='%s': invalid buffer size\n",
			    name, value);
		return -1;
	}
	return bytes;
}

static enum preload_want read_backend(void)
{
	const char *value = getenv("SMC_BACKEND");

	if (!value || !value[0] || !strcmp(value, "auto"))
		return PRELOAD_WANT_AUTO;
	if (!strcmp(value, "kernel"))
		return PRELOAD_WANT_KERNEL;
	if (!strcmp(value, "soft"))
		return PRELOAD_WANT_SOFT;
	preload_dbg("libsmc-preload: unknown SMC_BACKEND '%s', using auto\n", value);
	return PRELOAD_WANT_AUTO;
}

/*
 * cfg is the library's preload_cfg: debug is set first because preload_dbg()
 * reads it while the other variables are checked.
 */
void preload_config_read(struct preload_config *cfg)
{
	cfg->debug = preload_parse_debug(getenv("SMC_DEBUG"));
	cfg->sndbuf = read_bufsize("SMC_SNDBUF");
	cfg->rcvbuf = read_bufsize("SMC_RCVBUF");
	cfg->want = read_backend();
}
