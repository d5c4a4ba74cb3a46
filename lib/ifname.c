/* Interface and device names: the kernel's rules, and quoting for messages. */
#include "ifname.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* isspace() of the kernel's <linux/ctype.h>: Latin-1's no-break space too. */
static bool k_isspace(unsigned char c)
{
	return (c >= '\t' && c <= '\r') || c == ' ' || c == 0xa0;
}

static bool all_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

/* The bytes both kinds of name refuse; ':' only when colon_bad. */
static const char *bad_byte(const char *name, bool colon_bad)
{
	for (const char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '/')
			return "contains '/'";
		if (c == ':' && colon_bad)
			return "contains ':'";
		if (c == 0xa0)
			return "contains byte 0xa0, white space to the kernel";
		if (k_isspace(c))
			return "contains white space";
	}
	return NULL;
}

const char *smc_ifname_invalid(const char *name)
{
	size_t len = strlen(name);

	if (!len)
		return "empty";
	if (len > SMC_IFNAME_MAX)
		return all_ascii(name) ? "longer than 15 characters" : "longer than 15 bytes";
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return "not an interface name";
	return bad_byte(name, true);
}

const char *smc_ibname_invalid(const char *name)
{
	size_t len = strlen(name);

	if (!len)
		return "empty";
	if (len > SMC_IBNAME_MAX)
		return all_ascii(name) ? "longer than 63 characters" : "longer than 63 bytes";
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return "not a device name";
	return bad_byte(name, false);
}

/*
 * Length of the valid UTF-8 sequence at s that is not a C1 control
 * (U+0080..U+009F), else 0.  No overlong forms, no surrogates, at most U+10FFFF.
 */
static size_t utf8_len(const unsigned char *s)
{
	unsigned int cp;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07u;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)      /* the NUL ends the check too */
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((n == 2 && cp < 0xa0) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

char *smc_name_escape(const char *name)
{
	const unsigned char *s = (const unsigned char *)name;
	char *out = malloc(4 * strlen(name) + 1);
	char *o = out;

	if (!out)
		return NULL;
	while (*s) {
		size_t n = *s >= 0x80 ? utf8_len(s) : 1;

		if (*s == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else if (n && *s >= 0x20 && *s != 0x7f) {
			memcpy(o, s, n);
			o += n;
		} else {
			o += sprintf(o, "\\x%02x", *s);
			n = 1;
		}
		s += n;
	}
	*o = '\0';
	return out;
}

bool smc_is_pci_name(const char *name)
{
	unsigned int dom, bus, slot, fn;
	char end;

	return sscanf(name, "%x:%x:%x.%x%c", &dom, &bus, &slot, &fn, &end) == 4;
}
