/*
 * libFuzzer entry: the first byte picks the parser, the rest is one reply
 * datagram as a kernel or a soft backend could send it, or (fuzz_softd) one
 * request datagram as a client could send the soft backend, or (fuzz_dmb) a
 * shared-memory region as an untrusted peer could hand over, or
 * (fuzz_pairpoll) a PAIR, SOCK_INFO or BELL reply as the preload's client
 * code reads it, or (fuzz_pdump) a process's dump ring as the daemon drains
 * it, or (fuzz_peer) a datagram to the control port from a peer host, or
 * (fuzz_clc, index 12) a CLC message as the TCP stream of a handshake carries it,
 * or (fuzz_smcr_wire, index 13) an SMC-R CDC or LLC message off a link or a
 * rebuild message from the peer's library (wire/smcr_rebuild.h), or
 * (fuzz_smcr_conn, index 14) a hostile SMC-R peer's CDCs between our sends
 * and reads.
 */
#include <stddef.h>
#include <stdint.h>

void fuzz_transport(const uint8_t *data, size_t size);
void fuzz_pnet(const uint8_t *data, size_t size);
void fuzz_info(const uint8_t *data, size_t size);
void fuzz_smcss(const uint8_t *data, size_t size);
void fuzz_stats(const uint8_t *data, size_t size);
void fuzz_linkgroup(const uint8_t *data, size_t size);
void fuzz_device(const uint8_t *data, size_t size);
void fuzz_softd(const uint8_t *data, size_t size);
void fuzz_dmb(const uint8_t *data, size_t size);
void fuzz_pairpoll(const uint8_t *data, size_t size);
void fuzz_pdump(const uint8_t *data, size_t size);
void fuzz_peer(const uint8_t *data, size_t size);
void fuzz_clc(const uint8_t *data, size_t size);
void fuzz_smcr_wire(const uint8_t *data, size_t size);
void fuzz_smcr_conn(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void (*const targets[])(const uint8_t *, size_t) = {
	fuzz_transport, fuzz_pnet, fuzz_info, fuzz_smcss,
	fuzz_stats, fuzz_linkgroup, fuzz_device, fuzz_softd, fuzz_dmb, fuzz_pairpoll,
	fuzz_pdump, fuzz_peer, fuzz_clc, fuzz_smcr_wire, fuzz_smcr_conn,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	targets[data[0] % (sizeof(targets) / sizeof(targets[0]))](data + 1, size - 1);
	return 0;
}
