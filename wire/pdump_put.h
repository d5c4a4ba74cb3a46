/*
 * One CDC or DATA record into the dump ring of a stats memfd (pstats.h,
 * doc/smc-dump-header.md 9).  Pure: the caller decides whether the dump is
 * on and fills the header; any number of threads and processes may write
 * one ring at once.
 */
#ifndef SOFT_PDUMP_PUT_H
#define SOFT_PDUMP_PUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

#include "pstats.h"

/*
 * Reserve a slot of the ring in map (the memfd's mapping, SOFT_PSTATS_MAP_LEN
 * bytes), copy hdr (its seq and caplen are ignored) and the first caplen
 * bytes (at most SOFT_PDUMP_SNAP_MAX, at most what iov holds) of iov after
 * skip bytes, then publish.  False when the ring is full: the record is
 * counted in drops, nothing is written.  Never waits.
 */
bool soft_pdump_put(void *map, const struct soft_pdump_slot *hdr, const struct iovec *iov,
		    int iovcnt, size_t skip, size_t caplen);

#endif
