"""Wait until a preloaded process's connection is on shared memory.

  from shm_wait import wait_mapped
  wait_mapped(sock)

Empty, non-consuming reads (MSG_PEEK | MSG_DONTWAIT) collect the daemon's
answer without anything written, until the ring's region shows in
/proc/self/maps; exits with a message if it never does (4 s).
"""
import socket
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
