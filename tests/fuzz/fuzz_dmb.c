/*
 * Fuzz target for the soft SMC-D shared-memory region (wire/dmb.c): the bytes
 * are what a hostile peer could leave in the region before we map it.  The
 * validator must reject it or the rings must work within bounds.
 *
 * Byte 0: bit 0 sizes the file as the header claims (else as the input),
 * bit 1 leaves the file unsealed, bit 2 maps as side 1, bit 3 starts from a
 * valid region and overlays the input on its control blocks (offset 128),
 * which reaches the data path far more often than raw bytes do.
 */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wire/dmb.h"

void fuzz_dmb(const uint8_t *data, size_t size);

static int raw_region(const uint8_t *data, size_t size, bool claimed, bool seal)
{
	off_t len = (off_t)size;
	int fd;

	if (claimed && size >= 32) {
		uint64_t total;

		memcpy(&total, data + 24, sizeof(total));
		/* Keep the file small enough for a fuzzer's memory limit. */
		if (total <= DMB_HDR_SIZE + 2 * DMB_MAX_SIZE)
			len = (off_t)total;
	}
	fd = memfd_create("fuzz-dmb", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, len) < 0 ||
	    pwrite(fd, data, size < (size_t)len ? size : (size_t)len, 0) < 0 ||
	    (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void exercise(struct dmb_conn *c)
{
	static uint8_t buf[20000];
	struct iovec v[2] = { { buf, 7 }, { buf + 7, sizeof(buf) - 7 } };
	uint32_t wake;

	(void)dmb_readable(c);
	(void)dmb_space(c);
	(void)dmb_unread(c);
	(void)dmb_peer_state(c);
	(void)dmb_peer_pflags(c);
	(void)dmb_consume(c, v, 2, DMB_PEEK, &wake);
	(void)dmb_consume(c, v, 2, 0, &wake);
	(void)dmb_produce(c, v, 2, 0, &wake);
	(void)dmb_produce(c, v, 1, DMB_URGENT, &wake);
	if (!dmb_rx_sleep_begin(c, NULL, DMB_BELL_TCP))
		(void)dmb_readable(c);
	dmb_rx_sleep_end(c);
	if (!dmb_tx_sleep_begin(c, 100, 7))
		(void)dmb_space(c);
	dmb_tx_sleep_end(c);
	dmb_shutdown_wr(c);
	(void)dmb_consume(c, v, 2, 0, &wake);
	dmb_abort(c);
	(void)dmb_produce(c, v, 2, 0, &wake);
}

void fuzz_dmb(const uint8_t *data, size_t size)
{
	struct dmb_conn c;
	uint8_t mode;
	int fd;

	if (size < 1)
		return;
	mode = data[0];
	data++;
	size--;
	if (mode & 8) {
		fd = dmb_create(0, 0);
		if (fd < 0)
			return;
		size_t room = DMB_HDR_SIZE - DMB_LINE;
		if (pwrite(fd, data, size < room ? size : room, DMB_LINE) < 0) {
			close(fd);
			return;
		}
	} else {
		fd = raw_region(data, size, mode & 1, !(mode & 2));
		if (fd < 0)
			return;
	}
	if (dmb_map(fd, (mode >> 2) & 1, &c) == 0) {
		/*
		 * A lock word naming a live process (a hostile peer's doing)
		 * stalls each call for seconds before it fails: free them so
		 * the shared-end path runs at fuzzing speed.
		 */
		atomic_store(&c.tx.ctrl->prod_lock, 0);
		atomic_store(&c.rx.ctrl->cons_lock, 0);
		exercise(&c);
		dmb_unmap(&c);
	}
	close(fd);
}
