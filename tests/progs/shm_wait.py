"""Wait until a preloaded process's connection is on shared memory.

  from shm_wait import wait_mapped, wait_cut
  wait_mapped(sock)
  wait_cut(sock, echo)

wait_mapped: empty, non-consuming reads (MSG_PEEK | MSG_DONTWAIT) collect
the daemon's answer without anything written, until the ring's region shows
in /proc/self/maps; exits with a message if it never does (4 s).
wait_cut: echo rounds until both directions have cut over, as the kernel's
TCP byte counts show.
"""
import socket
import struct
import sys
import time


def mapped():
    with open("/proc/self/maps") as m:
        return "smc-dmb" in m.read()


def wait_mapped(sock, who="the connection"):
    for _ in range(400):
        try:
            if sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                sys.exit("%s: data before anyone wrote" % who)
        except BlockingIOError:
            pass
        if mapped():
            return
        time.sleep(0.01)
    sys.exit("%s: never on shared memory" % who)


def tcp_bytes(sock):
    """The kernel's bytes acked and received on sock (struct tcp_info)."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    return struct.unpack_from("QQ", info, 120)


def wait_cut(sock, echo, n=100000, who="the connection"):
    """Echo rounds of n bytes (echo(sock, n)) until one moves less than
    half of them over TCP each way: both directions are on the ring."""
    for _ in range(300):
        a0, r0 = tcp_bytes(sock)
        echo(sock, n)
        a1, r1 = tcp_bytes(sock)
        if a1 - a0 < n // 2 and r1 - r0 < n // 2:
            return
    sys.exit("%s: never cut over to shared memory" % who)
