/*
 * stats: upstream's abbreviated number form (smcd(8) `stats`), kept byte for
 * byte, quirks included:
 *  - the digits are counted on the value printed as a signed long long, so
 *    values of 2^63 and above count as negative numbers (e.g. 2^64-1 is "-1",
 *    two digits, and comes out as its first six decimal digits);
 *  - for 15 and 18 digits the divisor is 1000 times too large
 *    (123456789012345 -> "  0.1T"): 1000^(n/3) instead of 1000^((n-1)/3).
 */
#include "stats.h"

#include <math.h>

#define ABBREV_DIGS (SMC_ABBREV_LEN - 1)

/* Integer digits and decimals for a number of n digits. */
static void abbrev_digits(int n, int *full, int *decimals)
{
	*full = n % 3;
	if (*full == 0)
		*full = 3;
	*decimals = ABBREV_DIGS - *full - 2;
	if (*decimals <= 0) {
		*decimals = 0;
		*full = ABBREV_DIGS - 1;
	}
}

static void abbrev_unit(int n, char *unit, double *factor)
{
	if (n < 7) {
		*unit = 'K';
		*factor = 1e3;
	} else if (n < 10) {
		*unit = 'M';
		*factor = 1e6;
	} else if (n < 13) {
		*unit = 'G';
		*factor = 1e9;
	} else {
		*factor = pow(1000, n / 3);     /* the upstream quirk, see above */
		*unit = n < 16 ? 'T' : n < 19 ? 'P' : '?';
	}
}

void smc_stats_abbrev(uint64_t num, char res[SMC_ABBREV_LEN])
{
	int n, full, decimals;
	double factor;
	char tmp[32];
	char unit;

	if (num == 0) {
		snprintf(res, SMC_ABBREV_LEN, "0");
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%lld", (long long)num);
	if (n < 4) {
		/* below 1000, or within 99 of 2^64 ("-1".."-99"): plain, cut to six */
		snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)num);
		snprintf(res, SMC_ABBREV_LEN, "%.6s", tmp);
		return;
	}
	abbrev_digits(n, &full, &decimals);
	abbrev_unit(n, &unit, &factor);
	/* one decimal less when rounding would reach 10^full (9999999 -> "10.00M") */
	if ((double)num / factor + 5 * pow(10, -1 - decimals) >= pow(10, full)) {
		if (decimals > 0) {
			decimals--;
		} else {
			abbrev_digits(++n, &full, &decimals);
			abbrev_unit(n, &unit, &factor);
		}
	}
	snprintf(res, SMC_ABBREV_LEN, "%*.*f%c", ABBREV_DIGS - 1, decimals,
		 (double)num / factor, unit);
}
