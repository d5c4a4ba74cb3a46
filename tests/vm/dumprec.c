/*
 * dumprec: the soft backend's SMC-R dump records (doc/smc-dump-header.md)
 * read straight off a TUN device, for guests without tcpdump and Python
 * (smcdump-ex needs both).
 *
 *   dumprec [llc]
 *
 * It opens a capture session of SMC-R's records, every type or with llc
 * CLC and LLC only (DUMP_SET over $SMC_SOFT_SOCKET, as smcdump-ex does),
 * prints "capturing", and until SIGTERM or SIGINT prints one line per
 * record:
 *
 *   clc TYPE RX SRC DST             negotiation (TYPE 1-4)
 *   llc RX SRC DST LINK LLCTYPE RESP LGR-ID
 *   cdc RX SRC DST PROD-WRAP:COUNT CONS-WRAP:COUNT
 *   data RX SRC DST OFFSET LEN
 *   lost FULL UNFINISHED REFUSED
 *
 * SRC and DST are the packet's (swapped for RX records).  At the signal it
 * ends the session, which hands in what the processes' rings still hold,
 * prints those records too and "end", and exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "wire/dump_fmt.h"
#include "wire/reg_client.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "dumprec: %s: %s\n", what, strerror(err));
	return 1;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* A TUN device, up: its descriptor, its index in *ifindex. */
static int tun_open(unsigned *ifindex)
{
	struct ifreq ifr = { .ifr_flags = IFF_TUN | IFF_NO_PI };
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC), s;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "smcrec%%d");
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) < 0)
		return -1;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return -1;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return -1;
	close(s);
	*ifindex = if_nametoindex(ifr.ifr_name);
	return fd;
}

static void print_record(const uint8_t *b, size_t n)
{
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
	size_t ip = (size_t)(b[0] & 15) * 4, at = ip + 8, hlen;
	const uint8_t *h = b + at, *body;
	size_t blen;
	int rx;

	if (n < at + SOFT_DUMP_V2_HDR_LEN || (b[0] >> 4) != 4 || memcmp(h, "SMDH", 4))
		return;
	hlen = (size_t)h[7] * 4;
	if (n < at + hlen)
		return;
	body = h + hlen;
	blen = n - at - hlen;
	rx = (h[6] & SOFT_DUMP_F_RX) != 0;
	inet_ntop(AF_INET, b + 12, src, sizeof(src));
	inet_ntop(AF_INET, b + 16, dst, sizeof(dst));
	switch (h[5]) {
	case SOFT_DUMP_T_LLC:
		if (blen >= SOFT_DUMP_LLC_LEN + 4)
			printf("llc %d %s %s %u %u %d %08x\n", rx, src, dst, body[4], body[8] & 15,
			       (body[11] & 0x80) != 0, be32(body));
		break;
	case SOFT_DUMP_T_CDC:
		if (blen >= SOFT_DUMP_CDC_LEN)
			printf("cdc %d %s %s %u:%u %u:%u\n", rx, src, dst,
			       (unsigned)(body[0] << 8 | body[1]), be32(body + 2),
			       (unsigned)(body[6] << 8 | body[7]), be32(body + 8));
		break;
	case SOFT_DUMP_T_DATA:
		if (blen >= SOFT_DUMP_DATA_LEN)
			printf("data %d %s %s %llu %u\n", rx, src, dst,
			       (unsigned long long)be64(body), be32(body + 8));
		break;
	case SOFT_DUMP_T_LOST:
		if (blen >= SOFT_DUMP_LOST_LEN)
			printf("lost %llu %llu %llu\n", (unsigned long long)be64(body + 8),
			       (unsigned long long)be64(body + 16), (unsigned long long)be64(body + 24));
		break;
	default:
		if (h[5] >= SOFT_DUMP_T_PROPOSAL && h[5] <= SOFT_DUMP_T_DECLINE)
			printf("clc %u %d %s %s\n", h[5], rx, src, dst);
	}
}

/* Every packet the device holds, waiting up to ms for each next one. */
static void read_all(int tun, int ms)
{
	struct pollfd p = { .fd = tun, .events = POLLIN };
	uint8_t b[2048];

	while (!stop || ms > 0) {
		ssize_t n = read(tun, b, sizeof(b));

		if (n > 0) {
			print_record(b, (size_t)n);
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return;
		if (poll(&p, 1, stop ? ms : 200) == 0 && stop)
			return;
	}
}

int main(int argc, char **argv)
{
	uint8_t types = SOFT_DUMP_TYPE_CLC | SOFT_DUMP_TYPE_LLC;
	struct sigaction sa = { .sa_handler = on_signal };
	struct soft_reg_conn c;
	unsigned ifindex = 0;
	int tun, pkt, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	tun = tun_open(&ifindex);
	if (tun < 0)
		return die("TUN device", errno);
	pkt = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (pkt < 0)
		return die("AF_PACKET socket", errno);
	rc = soft_reg_open(&c, NULL, 0);
	if (rc)
		return die("the soft backend", -rc);
	if (argc < 2 || strcmp(argv[1], "llc"))
		types |= SOFT_DUMP_TYPE_CDC | SOFT_DUMP_TYPE_DATA;
	rc = soft_reg_dump_set(&c, SOFT_DUMP_MODE_SMCR, types, ifindex, pkt);
	if (rc)
		return die("DUMP_SET", -rc);
	printf("capturing\n");
	read_all(tun, 0);
	rc = soft_reg_dump_set(&c, 0, 0, 0, -1);
	if (rc)
		return die("DUMP_SET off", -rc);
	read_all(tun, 300);
	printf("end\n");
	soft_reg_close(&c);
	return 0;
}
