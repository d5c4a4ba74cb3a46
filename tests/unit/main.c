#include "unit.h"

#include <stdarg.h>
#include <stdlib.h>

#define MAX_TESTS 1024

struct test {
	const char *name;
	unit_fn fn;
};

static struct test tests[MAX_TESTS];
static int ntests;
static int failures_in_test;

void unit_register(const char *name, unit_fn fn)
{
	if (ntests < MAX_TESTS) {
		tests[ntests].name = name;
		tests[ntests].fn = fn;
		ntests++;
	}
}

void unit_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	failures_in_test++;
	fprintf(stdout, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

size_t unit_unhex(const char *s, uint8_t *out, size_t size)
{
	size_t n = 0;

	for (; *s; s++) {
		char two[3] = { s[0], s[1], 0 }, *end;

		if (*s == ' ')
			continue;
		if (n == size || !s[1])
			abort();
		out[n++] = (uint8_t)strtoul(two, &end, 16);
		if (*end)
			abort();
		s++;
	}
	return n;
}

uint64_t unit_xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

void cap_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
}

const char *cap_text(struct capture *c)
{
	if (c->f) {
		fclose(c->f);
		c->f = NULL;
	}
	return c->buf ? c->buf : "";
}

void cap_free(struct capture *c)
{
	cap_text(c);
	free(c->buf);
	c->buf = NULL;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct test *)a)->name, ((const struct test *)b)->name);
}

/* A test whose name holds one of the arguments (all tests without one). */
static bool named(const char *name, int argc, char **argv)
{
	for (int a = 1; a < argc; a++)
		if (strstr(name, argv[a]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	/* whole lines, when code under test logs to stderr in between */
	setvbuf(stdout, NULL, _IOLBF, 0);
	qsort(tests, (size_t)ntests, sizeof(tests[0]), by_name);
	for (int i = 0; i < ntests; i++) {
		if (argc > 1 && !named(tests[i].name, argc, argv))
			continue;
		failures_in_test = 0;
		tests[i].fn();
		printf("%s unit: %s\n", failures_in_test ? "FAIL" : "PASS", tests[i].name);
		if (failures_in_test)
			failed++;
		else
			passed++;
	}
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
