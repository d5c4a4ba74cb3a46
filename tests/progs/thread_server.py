#!/usr/bin/env python3
"""A threaded server of short connections (soft_churn.bats, tests/soak.sh).

  thread_server.py [--port P] [--most N] [--answer]
      A thread per accepted connection reads a random amount, 1 to N bytes
      (default 300), or to the end of stream, then, with --answer, sends
      one byte "k", and closes.  Prints "port N" once listening (P 0, the
      default: any port).
"""
import argparse
import random
import socket
import threading


def serve(conn, most, answer):
    with conn:
        want, got = random.randint(1, most), 0
        while got < want:
            data = conn.recv(want - got)
            if not data:
                break
            got += len(data)
        if answer:
            conn.sendall(b"k")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--most", type=int, default=300)
    ap.add_argument("--answer", action="store_true")
    a = ap.parse_args()
    lst = socket.create_server(("127.0.0.1", a.port))
    print("port %d" % lst.getsockname()[1], flush=True)
    while True:
        conn, _ = lst.accept()
        threading.Thread(target=serve, args=(conn, a.most, a.answer), daemon=True).start()


if __name__ == "__main__":
    main()
