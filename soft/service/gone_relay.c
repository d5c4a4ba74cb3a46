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

/*
 * GONE is not answered: sent at once and once more a little later (a
 * busy peer host whose full socket buffer dropped the first would drop
 * a second sent right behind it)
 */
#define GONE_AGAIN_MS 500

void soft_gone_tell(struct soft_state *st, uint64_t conn_id)
{
	struct soft_peer_msg m;

	for (struct soft_sock *s = soft_idx_conn_first(st, conn_id); s; s = s->conn_next) {
		if (!soft_relays(s))
			continue;
		soft_relay_msg(s, SOFT_PEER_GONE, 0, NULL, 0, &m);
		soft_peer_send(st, &m, 0, s->ask.ifindex);
		soft_peer_send_later(st, &m, s->ask.ifindex, soft_now_ms() + GONE_AGAIN_MS);
	}
}

void soft_gone_input(struct soft_sock *s, const struct soft_peer_msg *m)
{
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
