/*
 * Attribute policies of the kernel's genetlink families, checked as
 * validate_nla() does in liberal mode: only the attributes a policy names are
 * looked at, and a violation yields the kernel's errno.
 */
#ifndef SOFT_POLICY_H
#define SOFT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/netlink.h>

/*
 * NLA_NUL_STRING (nul true) or NLA_STRING with .len = max (0: unlimited):
 * -EINVAL when a NUL_STRING has no NUL within max + 1 bytes, -ERANGE when
 * the string (a trailing NUL not counted) is empty or longer than max.
 */
int soft_policy_str(const struct nlattr *a, size_t max, bool nul);

/* NLA_U8: -ERANGE when the payload is shorter than one byte. */
int soft_policy_u8(const struct nlattr *a);

/* The text the kernel attaches to a policy violation (extended ack). */
#define SOFT_POLICY_MSG "Attribute failed policy validation"

#endif
