/* The fake of preload/rdma/ for the link-group tests (fake_rdma.c). */
#ifndef TESTS_FAKE_RDMA_H
#define TESTS_FAKE_RDMA_H

/* Device name's port goes down: a port event, and its queue pairs break. */
void fake_rdma_port_down(const char *name);
/* Its port is back: a port event; queue pairs broken meanwhile stay broken. */
void fake_rdma_port_up(const char *name);
/* Device name is deleted (a fatal event, its queue pairs break; no open by that name), then added again. */
void fake_rdma_delete(const char *name);
void fake_rdma_add(const char *name);
/*
 * The queue pairs device name has now take posts and neither carry nor
 * complete them, with no error, as rxe parks one for good; queue pairs
 * made later work.
 */
void fake_rdma_park(const char *name);
#include <stdbool.h>
#include <stdint.h>

/* The RoCE v2 GID of 10.net.0.host (::ffff:10.net.0.host): the fake routes by GID and queue pair. */
void fake_rdma_gid(uint8_t gid[16], uint8_t net, uint8_t host);
/* Device name's host writes LLC's host-order fields in the other byte order
 * (its messages to and from devices of ours have them swapped). */
void fake_rdma_other_byte_order(const char *name);
/* Devices opened from now on with name have port MTU mtu (IB enum; else 3, 1024). */
void fake_rdma_mtu(const char *name, uint8_t mtu);
/* Writes and messages carried so far. */
extern long fake_rdma_writes, fake_rdma_msgs;
/* Channels lent to a sleeping thread (a reader that took its completions itself). */
extern long fake_rdma_lends, fake_rdma_unlends;
/* Queue pairs stopped (rdma_qp_stop()), and those not destroyed yet. */
extern long fake_rdma_stops;
int fake_rdma_qps_live(void);
/* Those of devices named name (a test's own: other tests' groups may still be going). */
int fake_rdma_dev_qps_live(const char *name);
/*
 * Until called again with err 0, rdma_mr_reg() or rdma_qp_create() on a
 * device named name fails with err (-ENOMEM, as a memlock limit says).
 */
void fake_rdma_fail_mr(const char *name, int err);
void fake_rdma_fail_qp(const char *name, int err);
/*
 * Registrations on a device named name fail with -ENOMEM past bytes in all
 * (a memlock limit; 0: none), rdma_mr_room() says what is left of them;
 * what they hold now.
 */
void fake_rdma_mr_budget(const char *name, size_t bytes);
/* While set, rdma_mr_room() cannot tell (SIZE_MAX) whatever the budget. */
extern _Atomic bool fake_rdma_room_hidden;
size_t fake_rdma_mr_bytes(const char *name);
/* While set, rdma_qp_destroy() waits, up to 60 s (as rxe's for packets a downed network device holds). */
extern _Atomic bool fake_rdma_destroy_held;

#endif
