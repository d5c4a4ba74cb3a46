#!/usr/bin/env python3
"""A connection on shared memory handed to a new image by execve.

  exec_cut.py PORT plain|keep|uncut [GO [again]]
      Connect to the echo server on 127.0.0.1:PORT and exchange 100,000
      bytes each way until both directions have cut over to shared memory
      (the kernel's TCP counts stop growing); with uncut, exchange
      nothing: empty reads until the region is mapped, so that no
      direction has cut over.
      Print "ready"; with GO, wait until that file exists (and
      with "again", echo 1000 bytes over a second connection, which talks
      to the daemon there is now).  Then execute python3 with the first
      connection as fd 7, without LD_PRELOAD (plain) or with it;
      the new image writes 1000 bytes, reads what comes back and prints
      "new image read N", or "new image: reset".
"""
import os
import socket
import sys
import time

from shm_wait import wait_cut, wait_mapped

NEW_IMAGE = """
import os
try:
    os.write(7, b"y" * 1000)
    print("new image read", len(os.read(7, 65536)))
except ConnectionResetError:
    print("new image: reset")
"""


def echo(t, n):
    t.sendall(b"x" * n)
    got = 0
    while got < n:
        got += len(t.recv(65536))


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    go = sys.argv[3] if len(sys.argv) > 3 else None
    again = len(sys.argv) > 4 and sys.argv[4] == "again"
    t = socket.create_connection(("127.0.0.1", port))
    if mode == "uncut":
        wait_mapped(t)
    else:
        wait_cut(t, echo)
    print("ready", flush=True)
    while go and not os.path.exists(go):
        time.sleep(0.05)
    if again:
        u = socket.create_connection(("127.0.0.1", port))
        # a sleep offers it to the daemon at once (SMC_SOFT_PAIR_DELAY_USEC)
        time.sleep(0.01)
        echo(u, 1000)
        u.close()
    os.dup2(t.fileno(), 7)
    env = dict(os.environ)
    if mode == "plain":
        del env["LD_PRELOAD"]
    os.execve(sys.executable, ["python3", "-c", NEW_IMAGE], env)


if __name__ == "__main__":
    main()
