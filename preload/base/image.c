/*
 * Whether the program an execve() starts will have this library: LD_PRELOAD
 * in its environment (or /etc/ld.so.preload) naming it, no set-user-ID or
 * set-group-ID switch (the loader ignores LD_PRELOAD then), and a dynamic
 * ELF image (a static one loads nothing).  A connection on shared memory
 * that reaches a program without it is read there as plain TCP.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"

#define LIB_NAME "libsmc-preload"

int soft_file_names_library(const char *path)
{
	char line[512];
	int found = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, LIB_NAME) != NULL;
	fclose(f);
	return found;
}

static bool env_preloads(char *const envp[])
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "LD_PRELOAD=", 11) && strstr(envp[i] + 11, LIB_NAME))
			return true;
	return soft_file_names_library("/etc/ld.so.preload") == 1;
}

static bool switches_ids(const struct stat *st)
{
	return ((st->st_mode & S_ISUID) && st->st_uid != getuid()) ||
	       ((st->st_mode & S_ISGID) && st->st_gid != getgid());
}

/* An ELF image without a program interpreter; false for anything else (a script). */
static bool static_elf(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(ph))
		return false;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (Elf64_Off)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			return false;
		if (ph.p_type == PT_INTERP)
			return false;
	}
	return true;
}

/* file as posix_spawnp() finds it along PATH; file itself if not found. */
const char *soft_image_find(const char *file, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (!*file || strchr(file, '/'))
		return file;
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int n = end == p ? snprintf(buf, len, "%s", file)
				 : snprintf(buf, len, "%.*s/%s", (int)(end - p), p, file);

		if (n > 0 && (size_t)n < len && !access(buf, X_OK))
			return buf;
		if (!*end)
			return file;
		p = end;
	}
}

bool soft_image_has_library(const char *path, char *const envp[])
{
	struct stat st;
	bool has;
	int fd;

	if (!env_preloads(envp))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;            /* execve will say what is wrong with it */
	has = !fstat(fd, &st) && !switches_ids(&st) && !static_elf(fd);
	next.close(fd);
	return has;
}
