/*
 * The network interface a registered socket uses, for the PNET check of
 * PAIR.  Interface ioctls on the socket itself answer in the socket's
 * network namespace, which need not be the daemon's.
 */
#include "sock.h"

#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* Whether the socket lives in the daemon's own network namespace. */
static bool in_own_netns(int fd)
{
	static uint64_t own;
	uint64_t cookie;
	socklen_t len = sizeof(cookie);

	if (!own) {
		int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		len = sizeof(own);
		if (s < 0 || getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE, &own, &len) < 0)
			own = 0;
		if (s >= 0)
			close(s);
		len = sizeof(cookie);
	}
	return own && getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) == 0 &&
	       cookie == own;
}

/*
 * An IPv6 address's interface: SIOCGIFCONF lists IPv4 only, and the
 * daemon's getifaddrs() sees its own namespace, so only a socket there is
 * looked up.
 */
static void by_address6(int fd, const uint8_t a[16], char ifname[IF_NAMESIZE])
{
	struct ifaddrs *all, *i;

	if (!in_own_netns(fd) || getifaddrs(&all) < 0)
		return;
	for (i = all; i; i = i->ifa_next) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)i->ifa_addr;

		if (sin6 && sin6->sin6_family == AF_INET6 && !memcmp(&sin6->sin6_addr, a, 16)) {
			snprintf(ifname, IF_NAMESIZE, "%s", i->ifa_name);
			break;
		}
	}
	freeifaddrs(all);
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
	} else {
		by_address6(fd, id->src, ifname);
	}
}
