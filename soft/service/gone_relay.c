/*
 * A process that ended without closing its soft SMC-R ends (killed: its
 * library sent no CLOSED), told to the peers (doc/soft-roce.md section
 * 4).  When its control connection hangs up, this daemon sends GONE for
 * each of its ends over RDMA with another host to that host's daemon,
 * under both ends' nonces; the peer's daemon marks its end, and hands it
 * to its library at the library's next REBUILD question (about once a
 * second while it holds link groups).  The library then probes the
 * group's links: it believes no daemon, only a link whose peer does not
 * answer.  A GONE lost costs only time: the links' own watch finds the
 * peer gone later.
 */
#include "service.h"
#include "peer_msg.h"
#include "regidx.h"

/* GONE is not answered: sent this often, at once (a datagram lost on a busy host) */
#define GONE_SENDS 2

void soft_gone_tell(struct soft_state *st, uint64_t conn_id)
{
	for (struct soft_sock *s = soft_idx_conn_first(st, conn_id); s; s = s->conn_next)
		if (soft_relays(s))
			for (int i = 0; i < GONE_SENDS; i++)
				soft_relay_send(st, s, SOFT_PEER_GONE, 0, NULL, 0);
}

void soft_gone_input(struct soft_state *st, struct soft_sock *s, const struct soft_peer_msg *m)
{
	(void)st;
	if (!soft_relays(s) || !soft_clc_from_other_end(s, m) || s->ask.peer_gone)
		return;
	s->ask.peer_gone = SOFT_GONE_HEARD;
}

struct soft_sock *soft_gone_take(struct soft_state *st, uint64_t conn_id)
{
	for (struct soft_sock *s = soft_idx_conn_first(st, conn_id); s; s = s->conn_next)
		if (s->ask.peer_gone == SOFT_GONE_HEARD && s->lgr_key) {
			s->ask.peer_gone = SOFT_GONE_TOLD;
			return s;
		}
	return NULL;
}
