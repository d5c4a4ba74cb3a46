/*
 * stats: `stats json`, upstream's one-line document (smcd(8) `stats json`): the
 * 65 counters of the selected technology block in cache-file order, no
 * handshake or fallback data.
 */
#include "stats.h"

static const char *const legacy_keys[SMC_ST_TECH_CNT] = {
	"SMC_INT_TX_BUF_8K", "SMC_INT_TX_BUF_16K", "SMC_INT_TX_BUF_32K",
	"SMC_INT_TX_BUF_64K", "SMC_INT_TX_BUF_128K", "SMC_INT_TX_BUF_256K",
	"SMC_INT_TX_BUF_512K", "SMC_INT_TX_BUF_1024K", "SMC_INT_TX_BUF_G_1024K",
	"SMC_INT_RX_BUF_8K", "SMC_INT_RX_BUF_16K", "SMC_INT_RX_BUF_32K",
	"SMC_INT_RX_BUF_64K", "SMC_INT_RX_BUF_128K", "SMC_INT_RX_BUF_256K",
	"SMC_INT_RX_BUF_512K", "SMC_INT_RX_BUF_1024K", "SMC_INT_RX_BUF_G_1024K",
	"SMC_USR_TX_BUF_8K", "SMC_USR_TX_BUF_16K", "SMC_USR_TX_BUF_32K",
	"SMC_USR_TX_BUF_64K", "SMC_USR_TX_BUF_128K", "SMC_USR_TX_BUF_256K",
	"SMC_USR_TX_BUF_512K", "SMC_USR_TX_BUF_1024K", "SMC_USR_TX_BUF_G_1024K",
	"SMC_USR_RX_BUF_8K", "SMC_USR_RX_BUF_16K", "SMC_USR_RX_BUF_32K",
	"SMC_USR_RX_BUF_64K", "SMC_USR_RX_BUF_128K", "SMC_USR_RX_BUF_256K",
	"SMC_USR_RX_BUF_512K", "SMC_USR_RX_BUF_1024K", "SMC_USR_RX_BUF_G_1024K",
	"SMC_INT_TX_BUF_SIZE_SM_PEER_CNT", "SMC_INT_TX_BUF_SIZE_SM_CNT",
	"SMC_INT_TX_BUF_FULL_PEER_CNT", "SMC_INT_TX_BUF_FULL_CNT",
	"SMC_INT_TX_BUF_REUSE_CNT", "SMC_INT_TX_BUF_ALLOC_CNT", "SMC_INT_TX_BUF_DGRADE_CNT",
	"SMC_INT_RX_BUF_SIZE_SM_PEER_CNT", "SMC_INT_RX_BUF_SIZE_SM_CNT",
	"SMC_INT_RX_BUF_FULL_PEER_CNT", "SMC_INT_RX_BUF_FULL_CNT",
	"SMC_INT_RX_BUF_REUSE_CNT", "SMC_INT_RX_BUF_ALLOC_CNT", "SMC_INT_RX_BUF_DGRADE_CNT",
	"SMC_CLNT_V1_SUCC_CNT", "SMC_CLNT_V2_SUCC_CNT", "SMC_SRV_V1_SUCC_CNT",
	"SMC_SRV_V2_SUCC_CNT", "SMC_SENDPAGE_CNT", "SMC_URG_DATA_CNT", "SMC_SPLICE_CNT",
	"SMC_CORK_CNT", "SMC_NDLY_CNT", "SMC_RX_BYTES", "SMC_TX_BYTES", "SMC_RX_CNT",
	"SMC_TX_CNT", "SMC_RX_RMB_USAGE", "SMC_TX_RMB_USAGE",
};

void smc_stats_print_legacy_json(FILE *f, const struct smc_stats_data *d, bool smcd)
{
	const uint64_t *t = smc_stats_tech(d, smcd);

	fprintf(f, "{\"%s\": {", smcd ? "SMCD" : "SMCR");
	for (int i = 0; i < SMC_ST_TECH_CNT; i++)
		fprintf(f, "%s\"%s\":%llu", i ? "," : "", legacy_keys[i], (unsigned long long)t[i]);
	fprintf(f, "}}\n");
}
