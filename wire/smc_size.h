/*
 * SMC's compressed buffer size, a 4-bit code that CLC ACCEPT/CONFIRM carry
 * for the receive buffer (RMBE, or DMBE for SMC-D): size = 16 KiB << code.
 * SMC-D caps the code at 6 (1 MiB), SMC-R at 15 (512 MiB, Linux 6.8 on).
 * Header-only: the programs that link wire/dmb.c alone use it too.
 */
#ifndef SOFT_SMC_SIZE_H
#define SOFT_SMC_SIZE_H

#include <stddef.h>
#include <stdint.h>

#define SMC_SIZE_MIN        (16u * 1024)
#define SMC_SIZE_CODE_SMCD  6
#define SMC_SIZE_CODE_SMCR  15

/* The code of the smallest size >= want (rounded up), at most max_code. */
static inline uint8_t smc_size_code(size_t want, uint8_t max_code)
{
	uint8_t c = 0;

	if (want <= SMC_SIZE_MIN)
		return 0;
	for (size_t v = (want - 1) >> 14; v; v >>= 1)
		c++;
	return c > max_code ? max_code : c;
}

/* The size a code stands for; codes above 15 (no 4-bit field has them) count as 15. */
static inline uint32_t smc_code_size(uint8_t code)
{
	return SMC_SIZE_MIN << (code > SMC_SIZE_CODE_SMCR ? SMC_SIZE_CODE_SMCR : code);
}

#endif
