/* Fuzz targets for the transport's framing and the smc_pnet / info parsers. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "genl.h"
#include "pnet.h"
#include "smc/info.h"

void fuzz_transport(const uint8_t *data, size_t size);
void fuzz_pnet(const uint8_t *data, size_t size);
void fuzz_info(const uint8_t *data, size_t size);

static int count_cb(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(*(int *)arg)++;
	return 0;
}

/* One datagram from the other side, as the reply to a dump request. */
void fuzz_transport(const uint8_t *data, size_t size)
{
	struct timeval tv = { .tv_usec = 1000 };
	struct nlmsghdr done = { .nlmsg_len = NLMSG_LENGTH(4), .nlmsg_type = NLMSG_DONE };
	unsigned char buf[65536], dbuf[NLMSG_LENGTH(4)] = { 0 };
	struct smc_genl g;
	int sv[2], n = 0;

	if (size > sizeof(buf) || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		return;
	memset(&g, 0, sizeof(g));
	g.nl.fd = sv[0];
	g.nl.backend = SMC_BACKEND_SOFT;
	g.nl.seq = 7;
	g.family = 0x20;
	memcpy(buf, data, size);
	if (size >= sizeof(struct nlmsghdr))
		((struct nlmsghdr *)buf)->nlmsg_seq = 8;  /* answers this request */
	send(sv[1], buf, size, 0);
	done.nlmsg_seq = 8;
	memcpy(dbuf, &done, sizeof(done));
	send(sv[1], dbuf, sizeof(dbuf), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	smc_genl_dump(&g, 1, count_cb, &n);
	close(sv[0]);
	close(sv[1]);
}

void fuzz_pnet(const uint8_t *data, size_t size)
{
	struct smc_out o = { .f = fuzz_sink() };
	const struct nlmsghdr *nlh = NULL;
	struct smc_reply rep;
	struct pnet_entry e;

	smc_reply_init(&rep);
	if (!smc_reply_append(&rep, data, size))
		while ((nlh = smc_reply_next(&rep, nlh)))
			if (!pnet_parse(nlh, &e))
				pnet_print(&o, &e);
	smc_reply_free(&rep);
}

void fuzz_info(const uint8_t *data, size_t size)
{
	struct hw_count c = { .ism = 1, .roce = { 0, 1, 1, 0 } };
	struct smc_out o = { .f = fuzz_sink() };
	const struct nlmsghdr *nlh = NULL;
	struct smc_reply rep;
	struct sys_info si;

	smc_reply_init(&rep);
	if (!smc_reply_append(&rep, data, size))
		while ((nlh = smc_reply_next(&rep, nlh)))
			if (smc_info_parse(nlh, &si) > 0)
				smc_info_print(&o, &si, &c);
	smc_reply_free(&rep);
}
