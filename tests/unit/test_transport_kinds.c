/*
 * Which transport a PAIR reply's kind chooses (preload/transport/kinds.c),
 * and the refusal of an operation table with a hole in it: one line on
 * stderr, once per table, and no transport.
 */
#include "unit.h"
#include "reg.h"
#include "transport.h"

#include <stdarg.h>

/* The library's stderr line (preload/base/log.c), kept here instead. */
static char said[512];

void preload_err(const char *fmt, ...)
{
	size_t n = strlen(said);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(said + n, sizeof(said) - n, fmt, ap);
	va_end(ap);
}

/* The ring's wake-up tuning (preload/base/soft_config.c): not under test. */
void soft_config_init(bool enabled)
{
	(void)enabled;
}

TEST(transport_kind_chooses_its_table)
{
	CHECK(transport_of_kind(SMC_SOFT_TRANSPORT_RING) == &transport_ring);
	CHECK(transport_of_kind(SMC_SOFT_TRANSPORT_RDMA) == &transport_rdma);
	CHECK(transport_of_kind(0) == NULL);
	CHECK(transport_of_kind(77) == NULL);
	CHECK(transport_ops_complete(&transport_rdma_elsewhere));
}

TEST(transport_with_a_missing_operation_is_refused_once)
{
	struct transport_ops holed = transport_ring, holed2 = transport_rdma;

	holed.rx_size = NULL;
	said[0] = '\0';
	CHECK(!transport_ops_complete(&holed));
	CHECK(!transport_ops_complete(&holed));
	CHECK_STR(said, "libsmc-preload: transport ring has no operation rx_size: not used\n");
	holed2.map = NULL;
	said[0] = '\0';
	CHECK(!transport_ops_complete(&holed2));
	CHECK_STR(said, "libsmc-preload: transport rdma has no operation map: not used\n");
}
