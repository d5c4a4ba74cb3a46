/* Attributes of a generic netlink request (soft_nl.h). */
#include "soft_nl.h"

#include <errno.h>
#include <string.h>
#include <libmnl/libmnl.h>

int soft_genl_attrs(const struct soft_req *r, const struct nlattr **tb, unsigned int maxtype)
{
	const unsigned char *p = r->data;
	size_t off = 0;

	memset(tb, 0, (maxtype + 1) * sizeof(*tb));
	while (off + sizeof(struct nlattr) <= r->data_len) {
		const struct nlattr *a = (const struct nlattr *)(p + off);
		unsigned int type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < sizeof(*a) || a->nla_len > r->data_len - off)
			return -EINVAL;
		if (type <= maxtype)
			tb[type] = a;
		off += NLA_ALIGN(a->nla_len);
	}
	return 0;
}
