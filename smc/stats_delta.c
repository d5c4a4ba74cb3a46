/*
 * stats: the baseline arithmetic of smcd(8) `stats` (FILES: the cache
 * file).  The kernel has no reset; "reset" stores the values in the cache
 * file and later reports subtract it.
 */
#include "stats.h"

/*
 * The cached count of code on the same side, 0 if absent.  As upstream, a
 * kernel slot with code 0 looks up the cache's first free slot.
 */
static int cached_count(const struct smc_stats_rsn *base, int code)
{
	for (int k = 0; k < SMC_STATS_RSN_SLOTS; k++)
		if (base[k].code == code)
			return base[k].count;
	return 0;
}

static bool reasons_consistent(const struct smc_stats_rsn *kern, const struct smc_stats_rsn *base)
{
	for (int k = 0; k < SMC_STATS_RSN_SLOTS; k++)
		if (kern[k].count < cached_count(base, kern[k].code))
			return false;
	return true;
}

bool smc_stats_consistent(const struct smc_stats_data *kern, const struct smc_stats_data *base)
{
	for (int i = 0; i < SMC_STATS_CNT; i++)
		if (kern->cnt[i] < base->cnt[i])
			return false;
	return reasons_consistent(kern->srv, base->srv) &&
	       reasons_consistent(kern->clnt, base->clnt) &&
	       kern->srv_fback >= base->srv_fback &&
	       kern->clnt_fback >= base->clnt_fback;
}

static void subtract_reasons(struct smc_stats_rsn *kern, const struct smc_stats_rsn *base)
{
	/* wraps like upstream's int arithmetic would, without overflow traps */
	for (int k = 0; k < SMC_STATS_RSN_SLOTS; k++)
		kern[k].count = (int)((unsigned int)kern[k].count -
				      (unsigned int)cached_count(base, kern[k].code));
}

void smc_stats_subtract(struct smc_stats_data *kern, const struct smc_stats_data *base)
{
	for (int i = 0; i < SMC_STATS_CNT; i++)
		kern->cnt[i] -= base->cnt[i];
	subtract_reasons(kern->srv, base->srv);
	subtract_reasons(kern->clnt, base->clnt);
	kern->srv_fback -= base->srv_fback;
	kern->clnt_fback -= base->clnt_fback;
}
