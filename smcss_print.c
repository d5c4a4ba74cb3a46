/*
 * smcss rows and JSON.  The text is byte-compatible with upstream smcss
 * (smcss(8)); each value goes through one out_* call that pairs its
 * text format with its JSON key, so -j cannot drift from the table.
 *
 * JSON (-j/--json): {"sockets":[{...},...]}, one object per selected socket:
 *   "state"               state name ("ACTIVE", ...; "0x63?" when unknown)
 *   "uid", "inode"        numbers
 *   "local_address", "local_port", "peer_address", "peer_port"
 *                         address text never truncated, port a number
 *   "interface"           ifindex of the bound device (number)
 *   "mode"                "SMCR", "SMCD" or "TCP"
 *   "fallback_reason"     number, and "fallback_reason_hex" ("0x%08x") and
 *   "peer_diagnosis"      number, all three when the kernel sent them;
 *   "fallback_reason_text", "peer_diagnosis_text"
 *                         "<meaning> (<kernel name>)" of a non-zero known code
 *   "shutdown"            "<->", "R->", "<-W" or "R-W", when sent
 *   "conn"   (-d)  token, sndbuf, rcvbuf, peerbuf (numbers); the cursors
 *                  rx_prod, rx_cons, tx_prod, tx_cons, tx_prep, tx_sent,
 *                  tx_fin as {"wrap":n,"count":n}; the flag bytes
 *                  rx_prod_flags, rx_conn_state_flags, tx_prod_flags,
 *                  tx_conn_state_flags (numbers)
 *   "smcr"   (-R)  role ("CLNT"/"SERV"), ib_dev, ib_port, link_id (numbers),
 *                  gid, peer_gid (GID text)
 *   "smcd"   (-D)  gid, token, peer_gid, peer_token, link_id (numbers; the
 *                  text shows them in hex); then gid_ext and peer_gid_ext
 *                  when the kernel sent them (6.8 and later: the 128-bit
 *                  GIDs of loopback and virtual ISM devices; JSON only, the
 *                  text keeps upstream's 64-bit columns)
 * doc/json-schema/smcss.schema.json is the schema.
 * Unlike the text, which cuts INIT, LISTEN, CLOSED and fallback rows short,
 * JSON has every field the kernel sent.
 */
#include "smcss_print.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "names.h"

enum { STATE_INIT = 2, STATE_CLOSED = 7, STATE_LISTEN = 10 };

static const char hdr_base[] =
	"State          UID   Inode   Local Address           Peer Address            Intf Mode ";
static const char hdr_debug[] =
	"Shutd Token    Sndbuf   Rcvbuf   Peerbuf  rxprod-Cursor rxcons-Cursor rxFlags "
	"txprod-Cursor txcons-Cursor txFlags txprep-Cursor txsent-Cursor txfin-Cursor  ";
static const char hdr_smcr[] =
	"Role IB-device       Port Linkid GID                                      Peer-GID";
static const char hdr_smcd[] =
	"GID              Token            Peer-GID         Peer-Token       Linkid";

uint8_t smcss_ext_mask(const struct smcss_opts *o)
{
	/* Upstream never asked for SHUTDOWN and FALLBACK; kernels send them anyway. */
	uint8_t mask = SMC_DIAG_EXT(SMC_DIAG_SHUTDOWN) | SMC_DIAG_EXT(SMC_DIAG_FALLBACK);

	if (o->debug)
		mask |= SMC_DIAG_EXT(SMC_DIAG_CONNINFO);
	if (o->smcr)
		mask |= SMC_DIAG_EXT(SMC_DIAG_LGRINFO);
	if (o->smcd)
		mask |= SMC_DIAG_EXT(SMC_DIAG_DMBINFO);
	return mask;
}

bool smcss_selected(const struct smc_diag_sock *s, const struct smcss_opts *o)
{
	if (o->listening) {
		if (s->state != STATE_LISTEN)
			return false;
	} else if (!o->all && (s->state == STATE_LISTEN || s->state == STATE_INIT)) {
		return false;
	}
	if (o->smcr && s->mode != SMC_DIAG_MODE_SMCR)
		return false;
	if (o->smcd && s->mode != SMC_DIAG_MODE_SMCD)
		return false;
	return true;
}

/* diag_family is AF_SMC for every socket, so the family is guessed as upstream does. */
void smcss_addr_text(const uint8_t addr[16], char *buf, size_t len)
{
	static const uint8_t zero[12];
	int af = memcmp(addr + 4, zero, sizeof(zero)) ? AF_INET6 : AF_INET;

	if (!inet_ntop(af, addr, buf, (socklen_t)len))
		snprintf(buf, len, "(inet_ntop error)");
}

void smcss_addr_port_text(const uint8_t addr[16], uint16_t port, bool wide,
			  char *buf, size_t len)
{
	char a[SMCSS_ADDR_BUF], p[8];
	int alen, plen;

	smcss_addr_text(addr, a, sizeof(a));
	plen = snprintf(p, sizeof(p), "%u", port);
	alen = (int)strlen(a);
	if (!wide && alen + 1 + plen > SMCSS_ADDR_SHORT)
		snprintf(buf, len, "%.*s..:%s", SMCSS_ADDR_SHORT - 1 - plen - 2, a, p);
	else
		snprintf(buf, len, "%s:%s", a, p);
}

void smcss_print_header(const struct smcss_opts *o, FILE *f)
{
	if (o->json)
		return;
	fputs(hdr_base, f);
	if (o->debug)
		fputs(hdr_debug, f);
	if (o->smcr)
		fputs(hdr_smcr, f);
	if (o->smcd)
		fputs(hdr_smcd, f);
	fputc('\n', f);
}

/* Upstream prints the u32 uid with %05d, so huge uids come out negative. */
static void put_uid(struct smc_out *o, uint32_t uid)
{
	out_json_u64(o, "uid", uid);
	out_text(o, "%05d ", (int)(int32_t)uid);
}

static void put_addr(struct smc_out *o, const char *addr_key, const char *port_key,
		     const uint8_t addr[16], uint16_t port, bool wide)
{
	char text[SMCSS_ADDR_BUF], cell[SMCSS_ADDR_BUF];

	/* JSON: address and port apart, never cut; text: upstream's one cell */
	smcss_addr_text(addr, text, sizeof(text));
	smcss_addr_port_text(addr, port, wide, cell, sizeof(cell));
	out_json_str(o, addr_key, text);
	out_json_u64(o, port_key, port);
	out_text(o, "%-*s ", SMCSS_ADDR_SHORT, cell);
}

/* JSON only: what a known non-zero reason code means, from the shared table. */
static void put_reason_text(struct smc_out *o, const char *key, uint32_t code)
{
	char text[128];

	if (!code || !smc_reason_text(code))
		return;
	snprintf(text, sizeof(text), "%s (%s)", smc_reason_text(code), smc_reason_symbol(code));
	out_json_str(o, key, text);
}

static void put_mode(struct smc_out *o, const struct smc_diag_sock *s)
{
	char hex[16];

	out_str(o, "mode", "%s ", smc_mode_name(s->mode));
	if (!s->has_fallback)
		return;
	if (!out_is_json(o) && s->mode != SMC_DIAG_MODE_FALLBACK_TCP)
		return;
	out_json_u64(o, "fallback_reason", s->fallback_reason);
	snprintf(hex, sizeof(hex), "0x%08x", s->fallback_reason);
	out_str(o, "fallback_reason_hex", "%s", hex);
	put_reason_text(o, "fallback_reason_text", s->fallback_reason);
	out_json_u64(o, "peer_diagnosis", s->peer_diagnosis);
	put_reason_text(o, "peer_diagnosis_text", s->peer_diagnosis);
	if (s->peer_diagnosis)
		out_text(o, "/0x%08x", s->peer_diagnosis);
}

static void put_shutdown(struct smc_out *o, uint8_t mask)
{
	char t[4] = { mask & 1 ? 'R' : '<', '-', mask & 2 ? 'W' : '>', '\0' };

	out_str(o, "shutdown", " %s  ", t);
}

static void put_cursor(struct smc_out *o, const char *key, struct smc_diag_cur c)
{
	out_open_object(o, key);
	out_u64(o, "wrap", "%04llx:", c.wrap);
	out_u64(o, "count", "%08llx ", c.count);
	out_close_object(o);
}

static void put_conn(struct smc_out *o, const struct smc_diag_conn *c)
{
	out_open_object(o, "conn");
	out_u64(o, "token", "%08llx ", c->token);
	out_u64(o, "sndbuf", "%08llx ", c->sndbuf_size);
	out_u64(o, "rcvbuf", "%08llx ", c->rmbe_size);
	out_u64(o, "peerbuf", "%08llx ", c->peer_rmbe_size);
	put_cursor(o, "rx_prod", c->rx_prod);
	put_cursor(o, "rx_cons", c->rx_cons);
	out_u64(o, "rx_prod_flags", "%02llx:", c->rx_prod_flags);
	out_u64(o, "rx_conn_state_flags", "%02llx   ", c->rx_conn_state_flags);
	put_cursor(o, "tx_prod", c->tx_prod);
	put_cursor(o, "tx_cons", c->tx_cons);
	out_u64(o, "tx_prod_flags", "%02llx:", c->tx_prod_flags);
	out_u64(o, "tx_conn_state_flags", "%02llx   ", c->tx_conn_state_flags);
	put_cursor(o, "tx_prep", c->tx_prep);
	put_cursor(o, "tx_sent", c->tx_sent);
	put_cursor(o, "tx_fin", c->tx_fin);
	out_close_object(o);
}

static void put_lgr(struct smc_out *o, const struct smc_diag_lgr *l)
{
	out_open_object(o, "smcr");
	out_str(o, "role", "%4s ", smc_role_name(l->role));
	out_str(o, "ib_dev", "%-15s ", l->ibname);
	out_u64(o, "ib_port", "%02llx   ", l->ibport);
	out_u64(o, "link_id", "%02llx     ", l->link_id);
	out_str(o, "gid", "%-40s ", l->gid);
	out_str(o, "peer_gid", "%s", l->peer_gid);
	out_close_object(o);
}

static void put_dmb(struct smc_out *o, const struct smc_diag_dmb *d)
{
	out_open_object(o, "smcd");
	out_u64(o, "gid", "%016llx ", d->my_gid);
	out_u64(o, "token", "%016llx ", d->token);
	out_u64(o, "peer_gid", "%016llx ", d->peer_gid);
	out_u64(o, "peer_token", "%016llx ", d->peer_token);
	out_u64(o, "link_id", "%08llx ", d->linkid);
	if (d->has_ext) {
		out_json_u64(o, "gid_ext", d->my_gid_ext);
		out_json_u64(o, "peer_gid_ext", d->peer_gid_ext);
	}
	out_close_object(o);
}

/* The -d, -R and -D blocks; JSON takes whatever the kernel sent. */
static void put_details(struct smc_out *o, const struct smcss_opts *opts,
			const struct smc_diag_sock *s)
{
	bool json = out_is_json(o);

	if ((opts->debug || json) && s->has_shutdown)
		put_shutdown(o, s->shutdown);
	if ((opts->debug || json) && s->has_conn)
		put_conn(o, &s->conn);
	if ((opts->smcr || json) && s->has_lgr)
		put_lgr(o, &s->lgr);
	if ((opts->smcd || json) && s->has_dmb)
		put_dmb(o, &s->dmb);
}

/* The text row of some states ends early; JSON never does. */
static bool text_ends(const struct smc_out *o, bool cond)
{
	return !out_is_json(o) && cond;
}

static void put_sock(struct smc_out *o, const struct smcss_opts *opts,
		     const struct smc_diag_sock *s)
{
	char state[SMC_NAME_BUF];

	out_str(o, "state", "%-14s ", smc_state_name(s->state, state));
	put_uid(o, s->uid);
	out_u64(o, "inode", "%07llu ", s->inode);
	if (text_ends(o, s->state == STATE_INIT))
		return;
	put_addr(o, "local_address", "local_port", s->src, s->sport, opts->wide);
	if (text_ends(o, s->state == STATE_LISTEN))
		return;
	put_addr(o, "peer_address", "peer_port", s->dst, s->dport, opts->wide);
	out_u64(o, "interface", "%04llx ", s->ifindex);
	if (text_ends(o, s->state == STATE_CLOSED))
		return;
	put_mode(o, s);
	if (text_ends(o, s->mode == SMC_DIAG_MODE_FALLBACK_TCP))
		return;
	put_details(o, opts, s);
}

void smcss_begin(struct smcss_printer *p, const struct smcss_opts *o, FILE *f)
{
	p->opts = o;
	p->out.f = f;
	p->out.j = NULL;
	if (!o->json)
		return;
	json_init(&p->json, f);
	p->out.j = &p->json;
	out_doc_begin(&p->out, "sockets");
}

int smcss_print_sock(const struct smc_diag_sock *s, void *arg)
{
	struct smcss_printer *p = arg;

	if (!smcss_selected(s, p->opts))
		return 0;
	out_open_object(&p->out, NULL);
	put_sock(&p->out, p->opts, s);
	out_close_object(&p->out);
	out_text(&p->out, "\n");
	return 0;
}

void smcss_end(struct smcss_printer *p)
{
	out_doc_end(&p->out);
}

int smcss_print_reply(const struct smc_reply *rep, const struct smcss_opts *o, FILE *f)
{
	struct smcss_printer p;
	int rc;

	smcss_print_header(o, f);
	smcss_begin(&p, o, f);
	rc = smc_diag_walk(rep, smcss_print_sock, &p);
	smcss_end(&p);
	return rc;
}
