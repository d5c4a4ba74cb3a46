#include "pnet.h"
#include "ifname.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/genl/genl.h>
#include <linux/smc.h>

int pnet_check_id(const char *in, char out[PNET_ID_MAX + 1], const char **why)
{
	size_t len;

	while (isspace((unsigned char)*in))
		in++;
	len = strlen(in);
	while (len && isspace((unsigned char)in[len - 1]))
		len--;
	if (!len) {
		*why = "empty";
		return -1;
	}
	if (len > PNET_ID_MAX) {
		*why = "longer than 16 characters";
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		if (!isascii((unsigned char)in[i]) || !isalnum((unsigned char)in[i])) {
			*why = "only letters A-Z, a-z and digits 0-9 are allowed";
			return -1;
		}
		out[i] = (char)toupper((unsigned char)in[i]);
	}
	out[len] = '\0';
	return 0;
}

/* The kernel's rules (lib/ifname.c); the reason is for "invalid ... 'name': why". */
int pnet_check_ifname(const char *in, const char **why)
{
	*why = smc_ifname_invalid(in);
	return *why ? -1 : 0;
}

int pnet_check_ibname(const char *in, const char **why)
{
	*why = smc_ibname_invalid(in);
	return *why ? -1 : 0;
}

int pnet_parse_port(const char *in, unsigned int *port)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(in, &end, 0);
	if (errno || end == in || *end || v < 1 || v > 2)
		return -1;
	*port = (unsigned int)v;
	return 0;
}

/* A string attribute of at most max bytes including its NUL. */
static int get_str(const struct nlattr *a, char *buf, size_t max)
{
	int len = nla_len(a);
	const char *s = nla_data(a);

	if (len < 1 || (size_t)len > max || !memchr(s, '\0', (size_t)len))
		return -EBADMSG;
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

int pnet_parse(const struct nlmsghdr *nlh, struct pnet_entry *e)
{
	struct nlattr *tb[SMC_PNETID_MAX + 1];

	memset(e, 0, sizeof(*e));
	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, tb, SMC_PNETID_MAX, NULL) < 0 ||
	    !tb[SMC_PNETID_NAME])
		return -EBADMSG;
	if (get_str(tb[SMC_PNETID_NAME], e->pnetid, sizeof(e->pnetid)))
		return -EBADMSG;
	strcpy(e->eth, "n/a");
	strcpy(e->ib, "n/a");
	if (tb[SMC_PNETID_ETHNAME] && get_str(tb[SMC_PNETID_ETHNAME], e->eth, sizeof(e->eth)))
		return -EBADMSG;
	if (tb[SMC_PNETID_IBNAME] && get_str(tb[SMC_PNETID_IBNAME], e->ib, sizeof(e->ib)))
		return -EBADMSG;
	e->port = 255;
	if (tb[SMC_PNETID_IBPORT]) {
		if (nla_len(tb[SMC_PNETID_IBPORT]) < 1)
			return -EBADMSG;
		e->port = nla_get_u8(tb[SMC_PNETID_IBPORT]);
	}
	return 0;
}

/*
 * The kernel names an absent device "n/a" and an absent port 255; the text
 * shows them so, JSON has null (net_dev, ib_dev and ib_port as in smcr device).
 */
static void put_name(struct smc_out *o, const char *key, const char *name)
{
	out_str_or_none(o, key, "%s ", strcmp(name, "n/a") ? name : NULL, "n/a");
}

void pnet_print(struct smc_out *o, const struct pnet_entry *e)
{
	out_open_object(o, NULL);
	out_str(o, "pnet_id", "%s ", e->pnetid);
	put_name(o, "net_dev", e->eth);
	put_name(o, "ib_dev", e->ib);
	if (e->port == 255)
		out_none(o, "ib_port", "%s\n", "255");
	else
		out_u64(o, "ib_port", "%llu\n", e->port);
	out_close_object(o);
}
