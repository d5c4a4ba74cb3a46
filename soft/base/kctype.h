/*
 * The kernel's <linux/ctype.h> classes.  They differ from the C library's:
 * the kernel's table classifies Latin-1 (bytes 0xa0-0xff) as well, and never
 * depends on a locale.  PNET ID and EID checks use these, so that the soft
 * backend accepts and refuses exactly the strings the kernel does.
 */
#ifndef SOFT_KCTYPE_H
#define SOFT_KCTYPE_H

#include <stdbool.h>

static inline bool k_isupper(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7);
}

static inline bool k_islower(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 0xdf && c != 0xf7);
}

static inline bool k_isdigit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline bool k_isalnum(unsigned char c)
{
	return k_isupper(c) || k_islower(c) || k_isdigit(c);
}

static inline bool k_isspace(unsigned char c)
{
	return (c >= '\t' && c <= '\r') || c == ' ' || c == 0xa0;
}

static inline unsigned char k_toupper(unsigned char c)
{
	return k_islower(c) ? (unsigned char)(c - ('a' - 'A')) : c;
}

#endif
