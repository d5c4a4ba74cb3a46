/*
 * Fuzz target for one end of an SMC-R connection's data path
 * (wire/smcr_conn.h): the input is what a hostile peer sends, cut into
 * CDC-sized messages (or ones with bytes inside, when the first byte of a
 * piece says) and handed to smcr_conn_rx(), with our sends and
 * reads between them as the first byte of each piece says.  Nothing may be
 * read or written outside the send buffer and the RMB (ASan), the link must
 * never be asked for a write outside them, and what the connection reports
 * must stay within its buffers, the bytes handed out for TCP after BACK
 * included.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/smcr_conn.h"

#define SNDBUF 4096u
#define RMB    2048u
#define PEER   8192u

void fuzz_smcr_conn(const uint8_t *data, size_t size);

static int w_write(void *link, uint32_t off, uint32_t len, uint32_t rmb_off)
{
	(void)link;
	if (!len || (uint64_t)off + len > SNDBUF || (uint64_t)rmb_off + len > PEER)
		abort();
	return 0;
}

static int w_send(void *link, const uint8_t *msg, size_t len, uint64_t id)
{
	struct smcr_cdc m;

	(void)link, (void)id;
	/* what we send must be a CDC a peer can take, its bytes inside counted right */
	if (len < SMCR_CDC_LEN || len > SMCR_CDC_LEN + SMCR_CDC_DATA_MAX || smcr_cdc_decode(msg, len, &m) ||
	    smcr_cdc_check(&m, PEER, RMB) || len != SMCR_CDC_LEN + m.data_len)
		abort();
	return 0;
}

static const struct smcr_link_ops ops = { .write = w_write, .send = w_send };

static bool in_sndbuf(const struct iovec *v, const uint8_t *sndbuf)
{
	const uint8_t *p = v->iov_base;

	return !v->iov_len || (p >= sndbuf && p + v->iov_len <= sndbuf + SNDBUF);
}

/* Back to TCP: promise, say, or hand out what the peer did not consume (op's bits 4-5). */
static void back_step(struct smcr_conn *c, uint8_t op, const uint8_t *sndbuf)
{
	struct iovec p[2];
	ssize_t n;

	if (op & 0x10) {
		smcr_conn_set_soft(c, CDC_SOFT_BACK_OK | CDC_SOFT_DATA_OK, 0);
		return;
	}
	if (op & 0x20) {
		smcr_conn_back(c);
		return;
	}
	n = smcr_conn_back_pending(c, p);
	if (n < 0)
		return;
	if ((size_t)n != p[0].iov_len + p[1].iov_len || n > (ssize_t)SNDBUF ||
	    !in_sndbuf(&p[0], sndbuf) || !in_sndbuf(&p[1], sndbuf))
		abort();
	smcr_conn_back_sent(c, (size_t)(op & 0x0c) * 300);
}

void fuzz_smcr_conn(const uint8_t *data, size_t size)
{
	static uint8_t sndbuf[SNDBUF], rmb[RMB], buf[3 * RMB];
	struct smcr_conn c;

	smcr_conn_init(&c, &ops, NULL, sndbuf, SNDBUF, rmb, RMB, PEER, 0x1234, 0x5678);
	while (size > 1) {
		size_t cut = (data[0] & 7) == 4 ? SMCR_CDC_LEN + SMCR_CDC_DATA_MAX : SMCR_CDC_LEN;
		size_t n = size - 1 < cut ? size - 1 : cut;
		struct iovec iov = { buf, (size_t)data[0] * 24 };
		ssize_t r;

		switch (data[0] & 3) {
		case 0:
			smcr_conn_rx(&c, data + 1, n);
			break;
		case 1:
			r = smcr_conn_send(&c, &iov, 1);
			if (r > (ssize_t)iov.iov_len)
				abort();
			break;
		case 2:
			r = smcr_conn_recv(&c, &iov, 1, data[0] & 4);
			if (r > (ssize_t)iov.iov_len || smcr_conn_readable(&c) > RMB)
				abort();
			break;
		default:
			if (data[0] & 0x80)
				back_step(&c, data[0], sndbuf);
			else
				smcr_conn_sent(&c, (uint64_t)data[1] << 8 | data[n > 1 ? 2 : 1]);
			break;
		}
		if (smcr_conn_space(&c) > SNDBUF || smcr_conn_unread(&c) > SNDBUF + PEER)
			abort();
		data += n + 1;
		size -= n + 1;
	}
}
