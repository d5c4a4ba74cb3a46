#!/usr/bin/env python3
"""A TCP peer on an AF_PACKET socket, for smc_chk's replay check
(tests/cli/smc_chk.bats):

  syn_responder.py IFACE MODE PORT READY ADDR...

answers every SYN to PORT of one of the addresses ADDR (IPv4 or IPv6) that
comes in on IFACE with a SYN-ACK, and a later segment with data or FIN with
an RST; it writes "ready" to the file READY once it listens.  Its addresses
are not the namespace's own (the client reaches them through permanent
neighbour entries), so the kernel there neither answers nor resets anything
of theirs.  MODE is what the SYN-ACK carries:

  replay  the SYN's options, byte for byte: a replaying peer or middlebox
  smc     an MSS, and SMC's option only when the SYN had it: a genuine SMC
          server (net/smc answers SMC's option to a SYN that has it)
"""
import socket
import struct
import sys

ETH_P_ALL = 3
SMC_OPTION = bytes((1, 1, 254, 6, 0xE2, 0xD4, 0xC3, 0xD9))
ISN = 0x10000000


def csum(data):
    if len(data) % 2:
        data += b"\0"
    v = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while v >> 16:
        v = (v & 0xFFFF) + (v >> 16)
    return ~v & 0xFFFF


def tcp(src, dst, sport, dport, seq, ack, flags, opts):
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq, ack,
                      (20 + len(opts)) // 4 << 4, flags, 65535, 0, 0) + opts
    if len(src) == 4:
        pseudo = src + dst + struct.pack("!BBH", 0, 6, len(hdr))
    else:
        pseudo = src + dst + struct.pack("!IxxxB", len(hdr), 6)
    return hdr[:16] + struct.pack("!H", csum(pseudo + hdr)) + hdr[18:]


def ip_packet(src, dst, seg):
    if len(src) == 4:
        h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(seg), 0, 0x4000,
                        64, 6, 0, src, dst)
        return h[:10] + struct.pack("!H", csum(h)) + h[12:] + seg
    return struct.pack("!IHBB16s16s", 6 << 28, len(seg), 6, 64, src, dst) + seg


def tcp_of(frame):
    """(source, destination, segment) of a TCP frame, else None."""
    etype = struct.unpack("!H", frame[12:14])[0]
    pkt = frame[14:]
    if etype == 0x0800 and len(pkt) >= 20 and pkt[9] == 6:
        end = struct.unpack("!H", pkt[2:4])[0]
        return pkt[12:16], pkt[16:20], pkt[(pkt[0] & 15) * 4:end]
    if etype == 0x86DD and len(pkt) >= 40 and pkt[6] == 6:
        end = 40 + struct.unpack("!H", pkt[4:6])[0]
        return pkt[8:24], pkt[24:40], pkt[40:end]
    return None


def answer(mode, seg):
    """(seq, ack, flags, options) of the answer to a segment, or None."""
    sport, dport, seq, ack, off, flags = struct.unpack("!HHIIBB", seg[:14])
    hlen = (off >> 4) * 4
    if flags & 0x04 or hlen < 20 or hlen > len(seg):
        return None
    opts = seg[20:hlen]
    if flags & 0x12 == 0x02:
        if mode == "replay":
            back = opts
        else:
            back = struct.pack("!BBH", 2, 4, 1460)
            if SMC_OPTION[2:] in opts:
                back += SMC_OPTION
        return ISN, (seq + 1) & 0xFFFFFFFF, 0x12, back
    if len(seg) > hlen or flags & 0x01:
        return ack, 0, 0x04, b""
    return None


def main():
    iface, mode, port, ready = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    mine = set()
    for a in sys.argv[5:]:
        mine.add(socket.inet_pton(socket.AF_INET6 if ":" in a else socket.AF_INET, a))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    with open(ready, "w") as f:
        f.write("ready\n")
    while True:
        frame, addr = s.recvfrom(65535)
        if addr[2] == socket.PACKET_OUTGOING or len(frame) < 14:
            continue
        got = tcp_of(frame)
        if got is None or got[1] not in mine or len(got[2]) < 20:
            continue
        src, dst, seg = got
        if struct.unpack("!H", seg[2:4])[0] != port:
            continue
        a = answer(mode, seg)
        if a is None:
            continue
        reply = tcp(dst, src, port, struct.unpack("!H", seg[:2])[0], *a)
        s.send(frame[6:12] + frame[0:6] + frame[12:14] + ip_packet(dst, src, reply))


main()
