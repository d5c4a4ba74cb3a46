/* Hash indexes of the registrations (regidx.h), chained through the sockets. */
#include "regidx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define IDX_MIN_BUCKETS 64

struct htab {
	struct soft_sock **b;
	size_t nb, n;
	size_t link;                     /* offset of the chain pointer in soft_sock */
	uint64_t (*key)(const struct soft_sock *s);
};

/* A control connection's registrations. */
struct conn_ent {
	struct conn_ent *next;
	uint64_t conn_id;
	size_t count;
	struct soft_sock *socks;
};

struct soft_regidx {
	struct htab tok, ino, tup;
	struct conn_ent **cb;
	size_t ncb, nconn;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

void soft_addr_canon(int family, const uint8_t *a, uint8_t out[16])
{
	if (family == AF_INET) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, a, 4);
	} else {
		memcpy(out, a, 16);
	}
}

/* FNV-1a over local then remote end, so the reverse lookup swaps them. */
static uint64_t tuple_hash(int family, const uint8_t *la, uint16_t lp, const uint8_t *ra,
			   uint16_t rp)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uint8_t l[16], r[16];

	soft_addr_canon(family, la, l);
	soft_addr_canon(family, ra, r);
	for (int i = 0; i < 16; i++)
		h = (h ^ l[i]) * 0x100000001b3ULL;
	for (int i = 0; i < 16; i++)
		h = (h ^ r[i]) * 0x100000001b3ULL;
	h = (h ^ lp) * 0x100000001b3ULL;
	return (h ^ rp) * 0x100000001b3ULL;
}

static uint64_t key_tok(const struct soft_sock *s) { return s->token; }
static uint64_t key_ino(const struct soft_sock *s) { return s->id.inode; }

static uint64_t key_tup(const struct soft_sock *s)
{
	return tuple_hash(s->id.family, s->id.src, s->id.sport, s->id.dst, s->id.dport);
}

static struct soft_sock **chain(const struct htab *t, struct soft_sock *s)
{
	return (struct soft_sock **)((char *)s + t->link);
}

static size_t bucket(size_t nb, uint64_t key)
{
	return (size_t)(mix(key) & (nb - 1));
}

static int grow(struct htab *t)
{
	size_t nb = t->nb ? t->nb * 2 : IDX_MIN_BUCKETS;
	struct soft_sock **b = calloc(nb, sizeof(*b));

	if (!b)
		return t->nb ? 0 : -ENOMEM;     /* a full table still works, only slower */
	for (size_t i = 0; i < t->nb; i++) {
		struct soft_sock *s = t->b[i], *next;

		for (; s; s = next) {
			size_t k = bucket(nb, t->key(s));

			next = *chain(t, s);
			*chain(t, s) = b[k];
			b[k] = s;
		}
	}
	free(t->b);
	t->b = b;
	t->nb = nb;
	return 0;
}

static int htab_add(struct htab *t, struct soft_sock *s)
{
	size_t k;

	if ((t->n >= t->nb) && grow(t))
		return -ENOMEM;
	k = bucket(t->nb, t->key(s));
	*chain(t, s) = t->b[k];
	t->b[k] = s;
	t->n++;
	return 0;
}

static void htab_del(struct htab *t, struct soft_sock *s)
{
	struct soft_sock **pp;

	if (!t->nb)
		return;
	for (pp = &t->b[bucket(t->nb, t->key(s))]; *pp; pp = chain(t, *pp)) {
		if (*pp == s) {
			*pp = *chain(t, s);
			*chain(t, s) = NULL;
			t->n--;
			return;
		}
	}
}

static struct soft_regidx *idx_get(struct soft_state *st)
{
	struct soft_regidx *x = st->idx;

	if (x)
		return x;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->tok = (struct htab){ .link = offsetof(struct soft_sock, tok_next), .key = key_tok };
	x->ino = (struct htab){ .link = offsetof(struct soft_sock, ino_next), .key = key_ino };
	x->tup = (struct htab){ .link = offsetof(struct soft_sock, tup_next), .key = key_tup };
	st->idx = x;
	return x;
}

static struct conn_ent **conn_slot(const struct soft_regidx *x, uint64_t conn_id)
{
	struct conn_ent **pp;

	if (!x || !x->ncb)
		return NULL;
	for (pp = &x->cb[bucket(x->ncb, conn_id)]; *pp; pp = &(*pp)->next)
		if ((*pp)->conn_id == conn_id)
			return pp;
	return NULL;
}

static int conn_grow(struct soft_regidx *x)
{
	size_t nb = x->ncb ? x->ncb * 2 : IDX_MIN_BUCKETS;
	struct conn_ent **b = calloc(nb, sizeof(*b));

	if (!b)
		return x->ncb ? 0 : -ENOMEM;
	for (size_t i = 0; i < x->ncb; i++) {
		struct conn_ent *e = x->cb[i], *next;

		for (; e; e = next) {
			size_t k = bucket(nb, e->conn_id);

			next = e->next;
			e->next = b[k];
			b[k] = e;
		}
	}
	free(x->cb);
	x->cb = b;
	x->ncb = nb;
	return 0;
}

static struct conn_ent *conn_get(struct soft_regidx *x, uint64_t conn_id)
{
	struct conn_ent **pp = conn_slot(x, conn_id), *e;
	size_t k;

	if (pp)
		return *pp;
	if (x->nconn >= x->ncb && conn_grow(x))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->conn_id = conn_id;
	k = bucket(x->ncb, conn_id);
	e->next = x->cb[k];
	x->cb[k] = e;
	x->nconn++;
	return e;
}

int soft_idx_add(struct soft_state *st, struct soft_sock *s)
{
	struct soft_regidx *x = idx_get(st);
	struct conn_ent *e = x ? conn_get(x, s->conn_id) : NULL;

	if (!e)
		return -ENOMEM;
	if (htab_add(&x->tok, s))
		return -ENOMEM;
	if (htab_add(&x->ino, s)) {
		htab_del(&x->tok, s);
		return -ENOMEM;
	}
	s->conn_next = e->socks;
	s->conn_pprev = &e->socks;
	if (e->socks)
		e->socks->conn_pprev = &s->conn_next;
	e->socks = s;
	e->count++;
	return 0;
}

void soft_idx_del(struct soft_state *st, struct soft_sock *s)
{
	struct soft_regidx *x = st->idx;
	struct conn_ent **pp;

	if (!x)
		return;
	htab_del(&x->tok, s);
	htab_del(&x->ino, s);
	if (s->tuple_indexed)
		htab_del(&x->tup, s);
	s->tuple_indexed = false;
	if (s->conn_pprev) {
		*s->conn_pprev = s->conn_next;
		if (s->conn_next)
			s->conn_next->conn_pprev = s->conn_pprev;
		s->conn_pprev = NULL;
	}
	pp = conn_slot(x, s->conn_id);
	if (pp && --(*pp)->count == 0) {
		struct conn_ent *e = *pp;

		*pp = e->next;
		free(e);
		x->nconn--;
	}
}

struct soft_sock *soft_idx_token(const struct soft_state *st, uint64_t token)
{
	const struct soft_regidx *x = st->idx;

	if (!x || !x->tok.nb)
		return NULL;
	for (struct soft_sock *s = x->tok.b[bucket(x->tok.nb, token)]; s; s = s->tok_next)
		if (s->token == token)
			return s;
	return NULL;
}

struct soft_sock *soft_idx_inode(const struct soft_state *st, uint64_t inode)
{
	const struct soft_regidx *x = st->idx;

	if (!x || !x->ino.nb)
		return NULL;
	for (struct soft_sock *s = x->ino.b[bucket(x->ino.nb, inode)]; s; s = s->ino_next)
		if (s->id.inode == inode)
			return s;
	return NULL;
}

bool soft_idx_has_inode(const struct soft_state *st, uint64_t inode)
{
	return soft_idx_inode(st, inode) != NULL;
}

size_t soft_idx_conn_count(const struct soft_state *st, uint64_t conn_id)
{
	struct conn_ent **pp = conn_slot(st->idx, conn_id);

	return pp ? (*pp)->count : 0;
}

struct soft_sock *soft_idx_conn_first(const struct soft_state *st, uint64_t conn_id)
{
	struct conn_ent **pp = conn_slot(st->idx, conn_id);

	return pp ? (*pp)->socks : NULL;
}

int soft_idx_tuple_add(struct soft_state *st, struct soft_sock *s)
{
	struct soft_regidx *x = idx_get(st);

	if (!x || htab_add(&x->tup, s))
		return -ENOMEM;
	s->tuple_indexed = true;
	return 0;
}

static bool same_addr(const struct soft_sock_id *a, const uint8_t *x,
		      const struct soft_sock_id *b, const uint8_t *y)
{
	uint8_t p[16], q[16];

	soft_addr_canon(a->family, x, p);
	soft_addr_canon(b->family, y, q);
	return !memcmp(p, q, 16);
}

bool soft_ids_reversed(const struct soft_sock_id *a, const struct soft_sock_id *b)
{
	return a->sport == b->dport && a->dport == b->sport &&
	       same_addr(a, a->src, b, b->dst) && same_addr(a, a->dst, b, b->src);
}

static bool reversed(const struct soft_sock *a, const struct soft_sock *b)
{
	return soft_ids_reversed(&a->id, &b->id);
}

struct soft_sock *soft_idx_reverse(const struct soft_state *st, const struct soft_sock *s,
				   bool (*ok)(const struct soft_sock *cand,
					      const struct soft_sock *s))
{
	const struct soft_regidx *x = st->idx;
	uint64_t key = tuple_hash(s->id.family, s->id.dst, s->id.dport, s->id.src, s->id.sport);

	if (!x || !x->tup.nb)
		return NULL;
	for (struct soft_sock *c = x->tup.b[bucket(x->tup.nb, key)]; c; c = c->tup_next)
		if (c != s && reversed(c, s) && ok(c, s))
			return c;
	return NULL;
}

void soft_idx_free(struct soft_state *st)
{
	struct soft_regidx *x = st->idx;

	if (!x)
		return;
	for (size_t i = 0; i < x->ncb; i++) {
		struct conn_ent *e = x->cb[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(x->cb);
	free(x->tok.b);
	free(x->ino.b);
	free(x->tup.b);
	free(x);
	st->idx = NULL;
}
