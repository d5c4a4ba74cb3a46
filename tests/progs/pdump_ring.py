#!/usr/bin/env python3
"""The dump ring of the preload's stats memfd, with this script as the daemon.

  pdump_ring.py

Run under smc_run with a soft backend.  Pairs two sockets of this process,
finds its stats memfd in /proc/self/maps, writes the dump's control line as
the daemon would (doc/smc-dump-header.md 9) and checks the CDC and DATA
records that sends, receives, a peek, shutdown and close leave in the ring.
Prints "ok" and exits 0, or a line per mismatch and exits 1.
"""
import mmap
import os
import socket
import struct
import sys
import time

CTL_OFF, RING_OFF, SLOTS, SLOT_LEN, HDR = 4096, 8192, 512, 2048, 64
T_CDC, T_DATA, F_RX = 16, 32, 0x01
TYPE_CDC, TYPE_DATA = 0x02, 0x04
SLOT = struct.Struct("<QQQQIHBBHHIIBB")
FIELDS = ("seq token ts offset len caplen type flags prod_wrap cons_wrap "
          "prod_count cons_count prod_flags cstate").split()
errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


def stats_map():
    for line in open("/proc/self/maps"):
        if "memfd:smc-soft-stats" in line:
            fd = os.open("/proc/self/map_files/" + line.split()[0], os.O_RDWR)
            m = mmap.mmap(fd, os.fstat(fd).st_size)
            os.close(fd)
            return m
    sys.exit("pdump_ring: no stats memfd mapped (not preloaded?)")


class Ring:
    def __init__(self, m):
        self.m = m
        self.cons = struct.unpack_from("<Q", m, RING_OFF)[0]

    def set(self, types, snaplen):
        struct.pack_into("<II", self.m, CTL_OFF, types, snaplen)

    def drain(self):
        out = []
        while True:
            off = RING_OFF + 192 + (self.cons % SLOTS) * SLOT_LEN
            r = dict(zip(FIELDS, SLOT.unpack_from(self.m, off)))
            if r["seq"] != self.cons + 1:
                return out
            r["data"] = bytes(self.m[off + HDR:off + HDR + r["caplen"]])
            out.append(r)
            self.cons += 1
            struct.pack_into("<Q", self.m, RING_OFF + 64, self.cons)


def pair():
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen()
    c = socket.create_connection(ls.getsockname())
    s, _ = ls.accept()
    ls.close()
    return c, s


def main():
    c, s = pair()
    ring = Ring(stats_map())
    ring.set(TYPE_CDC | TYPE_DATA, 64)
    # until both directions go through the ring (the records say so)
    for _ in range(500):
        c.sendall(b"x")
        s.recv(1)
        s.sendall(b"y")
        c.recv(1)
        data = {(r["flags"], r["data"]): r["token"] for r in ring.drain() if r["type"] == T_DATA}
        if len(data) == 4:
            break
        time.sleep(0.01)
    else:
        sys.exit("pdump_ring: no DATA records both ways: never cut over?")
    tok_c, tok_s = data[(0, b"x")], data[(0, b"y")]
    check(tok_c and tok_s and tok_c != tok_s and data[(F_RX, b"x")] == tok_s and
          data[(F_RX, b"y")] == tok_c, "tokens: %r" % data)

    c.sendall(b"hello world")
    recs = ring.drain()
    check([(r["type"], r["flags"], r["token"]) for r in recs] ==
          [(T_DATA, 0, tok_c), (T_CDC, 0, tok_c)], "send: %r" % recs)
    d, cdc = recs[0], recs[1]
    check(d["len"] == 11 and d["caplen"] == 11 and d["data"] == b"hello world", "send: %r" % d)
    # rings are powers of two from 16 KiB: the cursor is the offset after it modulo one
    check((d["offset"] + 11 - cdc["prod_count"]) % 16384 == 0, "send cursor: %r %r" % (d, cdc))
    tx_off = d["offset"]

    check(s.recv(100, socket.MSG_PEEK) == b"hello world", "peek")
    check(ring.drain() == [], "a peek records nothing")
    check(s.recv(100) == b"hello world", "recv")
    recs = ring.drain()
    check(len(recs) >= 1 and recs[0]["type"] == T_DATA and recs[0]["flags"] == F_RX and
          recs[0]["token"] == tok_s and recs[0]["offset"] == tx_off and recs[0]["len"] == 11 and
          recs[0]["data"] == b"hello world", "recv: %r" % recs)
    check(all(r["type"] == T_CDC for r in recs[1:]), "recv: %r" % recs)

    ring.set(TYPE_DATA, 4)
    c.sendmsg([b"ab", b"", b"cdef"])
    recs = ring.drain()
    check(len(recs) == 1 and recs[0]["len"] == 6 and recs[0]["caplen"] == 4 and
          recs[0]["data"] == b"abcd" and recs[0]["offset"] == tx_off + 11,
          "sendmsg, snaplen 4: %r" % recs)
    s.recv(100)
    ring.drain()

    ring.set(TYPE_CDC, 64)
    c.sendall(b"z" * 3000)
    got = 0
    while got < 3000:
        got += len(s.recv(4096))
    recs = ring.drain()
    check(recs and all(r["type"] == T_CDC for r in recs), "CDC only: %r" % recs)

    ring.set(0, 64)
    c.sendall(b"quiet")
    s.recv(100)
    check(ring.drain() == [], "dump off: no records")

    ring.set(TYPE_CDC | TYPE_DATA, 64)
    c.shutdown(socket.SHUT_WR)
    recs = ring.drain()
    check(len(recs) == 1 and recs[0]["type"] == T_CDC and recs[0]["token"] == tok_c and
          recs[0]["cstate"] & 0x80, "shutdown: %r" % recs)
    check(s.recv(10) == b"", "EOF")
    c.close()
    recs = ring.drain()
    check(len(recs) == 1 and recs[0]["cstate"] & 0x40, "close: %r" % recs)
    s.close()
    recs = ring.drain()
    check(len(recs) == 1 and recs[0]["token"] == tok_s and recs[0]["cstate"] & 0x40,
          "close: %r" % recs)
    check(struct.unpack_from("<Q", ring.m, RING_OFF + 128)[0] == 0, "drops")
    ring.set(0, 0)
    for e in errors:
        print("pdump_ring:", e)
    print("ok" if not errors else "FAILED")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
