/* A small unit-test harness: TEST(name) registers, CHECK* record failures. */
#ifndef UNIT_H
#define UNIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*unit_fn)(void);
void unit_register(const char *name, unit_fn fn);
void unit_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define TEST(name)                                                        \
	static void name(void);                                           \
	__attribute__((constructor)) static void reg_##name(void)         \
	{ unit_register(#name, name); }                                   \
	static void name(void)

#define CHECK(cond) do { if (!(cond)) unit_fail(__FILE__, __LINE__, "%s", #cond); } while (0)
#define CHECK_INT(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) unit_fail(__FILE__, __LINE__, "%s == %lld, expected %lld", #a, _a, _b); } while (0)
#define CHECK_STR(a, b) do { const char *_a = (a), *_b = (b);               \
	if (!_a || strcmp(_a, _b)) unit_fail(__FILE__, __LINE__,            \
		"%s:\n--- got ---\n%s\n--- expected ---\n%s", #a, _a ? _a : "(null)", _b); } while (0)

/* Hex digits (spaces between bytes ignored) into out; the byte count.  Aborts on bad text or overflow. */
size_t unit_unhex(const char *s, uint8_t *out, size_t size);

/* xorshift64: the next number of a fixed sequence from *state (never 0). */
uint64_t unit_xorshift(uint64_t *state);

/* Capture what a formatter writes: cap_open(), print into cap.f, cap_text(). */
struct capture {
	FILE *f;
	char *buf;
	size_t len;
};
void cap_open(struct capture *c);
/* Closes the stream and returns the text (freed by the next cap_open/cap_free). */
const char *cap_text(struct capture *c);
void cap_free(struct capture *c);

#endif
