/* The writer's side of the dump ring (pstats.h): reserve, fill, publish. */
#include <string.h>

#include "pdump_put.h"

_Static_assert(SOFT_PDUMP_SNAP_MAX <= UINT16_MAX, "caplen is 16 bits");

static bool reserve(struct soft_pdump_ring *r, uint64_t *idx)
{
	uint64_t p = atomic_load_explicit(&r->prod, memory_order_relaxed);

	do {
		/* the daemon stores cons after it has read the slot */
		uint64_t c = atomic_load_explicit(&r->cons, memory_order_acquire);

		if (p - c >= SOFT_PDUMP_SLOTS) {
			atomic_fetch_add_explicit(&r->drops, 1, memory_order_relaxed);
			return false;
		}
	} while (!atomic_compare_exchange_weak_explicit(&r->prod, &p, p + 1,
							memory_order_relaxed,
							memory_order_relaxed));
	*idx = p;
	return true;
}

static size_t gather(uint8_t *out, const struct iovec *iov, int iovcnt, size_t skip,
		     size_t len)
{
	size_t done = 0;

	for (int i = 0; i < iovcnt && done < len; i++) {
		size_t n = iov[i].iov_len;

		if (skip >= n) {
			skip -= n;
			continue;
		}
		n -= skip;
		if (n > len - done)
			n = len - done;
		memcpy(out + done, (const char *)iov[i].iov_base + skip, n);
		done += n;
		skip = 0;
	}
	return done;
}

bool soft_pdump_put(void *map, const struct soft_pdump_slot *hdr, const struct iovec *iov,
		    int iovcnt, size_t skip, size_t caplen)
{
	const size_t head = offsetof(struct soft_pdump_slot, token);
	struct soft_pdump_slot *s;
	uint64_t idx;

	if (!reserve(soft_pdump_ring_of(map), &idx))
		return false;
	s = soft_pdump_slot_of(map, idx);
	/* seq still holds the slot's previous index: the daemon waits for ours */
	memcpy((char *)s + head, (const char *)hdr + head, sizeof(*s) - head);
	if (caplen > SOFT_PDUMP_SNAP_MAX)
		caplen = SOFT_PDUMP_SNAP_MAX;
	s->caplen = (uint16_t)(caplen ? gather(s->data, iov, iovcnt, skip, caplen) : 0);
	atomic_store_explicit(&s->seq, idx + 1, memory_order_release);
	return true;
}
