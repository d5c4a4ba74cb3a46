/* asuser: run a command as an unprivileged user, for the guests' checks of
 * what a user without CAP_NET_ADMIN may do (busybox's setpriv cannot set
 * ids).
 *
 *   asuser UID CMD [ARG]...   no supplementary groups, gid and uid UID, then
 *                             exec CMD: a non-zero uid leaves no capability.
 * Built statically (cc -static) so it needs nothing in the initramfs. */
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *end;
	long id;

	if (argc < 3) {
		fprintf(stderr, "usage: asuser UID CMD [ARG]...\n");
		return 2;
	}
	id = strtol(argv[1], &end, 10);
	if (*end || id <= 0 || id > 65535) {
		fprintf(stderr, "asuser: bad uid '%s'\n", argv[1]);
		return 2;
	}
	if (setgroups(0, NULL) || setgid((gid_t)id) || setuid((uid_t)id)) {
		perror("asuser: dropping privileges");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror("asuser: exec");
	return 127;
}
