/*
 * The network interface a registered socket uses, for the PNET check of
 * PAIR.  Interface ioctls on the socket itself answer in the socket's
 * network namespace, which need not be the daemon's.
 */
#include "sock.h"

#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#define IFCONF_MAX 256

static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* The IPv4 address of the socket's local end, false for a real IPv6 one. */
static bool local_v4(const struct soft_sock_id *id, struct in_addr *a)
{
	if (id->family == AF_INET) {
		memcpy(a, id->src, 4);
		return true;
	}
	if (!memcmp(id->src, v4mapped, sizeof(v4mapped))) {
		memcpy(a, id->src + 12, 4);
		return true;
	}
	return false;
}

static void by_address(int fd, struct in_addr a, char ifname[IF_NAMESIZE])
{
	struct ifreq *req = calloc(IFCONF_MAX, sizeof(*req));
	struct ifconf ifc = { .ifc_len = IFCONF_MAX * (int)sizeof(*req), .ifc_req = req };

	if (!req)
		return;
	if (ioctl(fd, SIOCGIFCONF, &ifc) == 0) {
		for (size_t i = 0; i < (size_t)ifc.ifc_len / sizeof(*req); i++) {
			const struct sockaddr_in *sin = (const struct sockaddr_in *)&req[i].ifr_addr;

			if (sin->sin_family == AF_INET && sin->sin_addr.s_addr == a.s_addr) {
				memcpy(ifname, req[i].ifr_name, IF_NAMESIZE);
				ifname[IF_NAMESIZE - 1] = '\0';
				break;
			}
		}
	}
	free(req);
}

void soft_sock_ifname(int fd, const struct soft_sock_id *id, char ifname[IF_NAMESIZE])
{
	static const uint8_t lo6[16] = { [15] = 1 };
	struct in_addr a;

	ifname[0] = '\0';
	if (id->ifindex) {
		struct ifreq ifr = { .ifr_ifindex = (int)id->ifindex };

		if (ioctl(fd, SIOCGIFNAME, &ifr) == 0) {
			memcpy(ifname, ifr.ifr_name, IF_NAMESIZE);
			ifname[IF_NAMESIZE - 1] = '\0';
		}
		return;
	}
	if (local_v4(id, &a)) {
		/* 127/8 lives on lo, whatever SIOCGIFCONF lists */
		if ((ntohl(a.s_addr) >> 24) == 127)
			strcpy(ifname, "lo");
		else
			by_address(fd, a, ifname);
	} else if (!memcmp(id->src, lo6, sizeof(lo6))) {
		strcpy(ifname, "lo");
	}
}
