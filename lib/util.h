/* Small helpers shared by the tools' command-line parsers. */
#ifndef SMC_UTIL_H
#define SMC_UTIL_H

#include <stdbool.h>
#include <string.h>

/* True when word is a non-empty prefix of keyword ("l" matches "linkgroup"). */
static inline bool smc_prefix(const char *word, const char *keyword)
{
	size_t n = strlen(word);

	return n > 0 && n <= strlen(keyword) && !strncmp(word, keyword, n);
}

/* basename() without modifying its argument. */
static inline const char *smc_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

#endif
