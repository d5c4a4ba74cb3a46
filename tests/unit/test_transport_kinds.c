/*
 * Which transport a PAIR reply's kind chooses (preload/transport/kinds.c),
 * and the refusal of an operation table with a hole in it: one line on
 * stderr, once per table, and no transport.
 */
#include "unit.h"
#include "reg.h"
#include "base.h"
#include "transport.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* What the library's line on stderr (preload/base/log.c) said, around one call: into said. */
static char said[512];

static bool refused(const struct transport_ops *ops)
{
	char path[] = "/tmp/smc-unit-stderr.XXXXXX";
	int f = mkstemp(path), saved = dup(STDERR_FILENO);
	bool complete;
	ssize_t n;

	preload_next_init();
	unlink(path);
	dup2(f, STDERR_FILENO);
	complete = transport_ops_complete(ops);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(f, said, sizeof(said) - 1, 0);
	said[n > 0 ? n : 0] = '\0';
	close(f);
	return !complete;
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
	CHECK(refused(&holed));
	CHECK_STR(said, "libsmc-preload: transport ring has no operation rx_size: not used\n");
	/* once per table */
	CHECK(refused(&holed));
	CHECK_STR(said, "");
	holed2.map = NULL;
	CHECK(refused(&holed2));
	CHECK_STR(said, "libsmc-preload: transport rdma has no operation map: not used\n");
}
