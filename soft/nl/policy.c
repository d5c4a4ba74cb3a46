/* Attribute policy checks with the kernel's error codes (lib/nlattr.c). */
#include "policy.h"

#include <errno.h>
#include <string.h>
#include <libmnl/libmnl.h>

int soft_policy_str(const struct nlattr *a, size_t max, bool nul)
{
	const char *s = mnl_attr_get_payload(a);
	size_t len = mnl_attr_get_payload_len(a);

	if (nul) {
		size_t scan = max && len > max + 1 ? max + 1 : len;

		if (!scan || !memchr(s, '\0', scan))
			return -EINVAL;
	}
	if (len < 1)
		return -ERANGE;
	if (max) {
		if (s[len - 1] == '\0')
			len--;
		if (len > max)
			return -ERANGE;
	}
	return 0;
}

int soft_policy_u8(const struct nlattr *a)
{
	return mnl_attr_get_payload_len(a) < 1 ? -ERANGE : 0;
}
