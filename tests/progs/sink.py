#!/usr/bin/env python3
"""One connection, bytes one way, for the capture tests.

  sink.py server [--host H]
      Accept one connection, read to EOF; prints "port N" once listening,
      then "got N" with the byte count, and exits.

  sink.py client --port P [--host H] [--bytes B] [--chunk C] [--pause S]
      Send B bytes of the pattern byte[i] = i % 251 in writes of C bytes,
      S seconds apart, then close; prints "sent B".
"""
import argparse
import socket
import time


def pattern(start, n):
    return bytes((start + i) % 251 for i in range(n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=("server", "client"))
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--bytes", type=int, default=102400)
    ap.add_argument("--chunk", type=int, default=4096)
    ap.add_argument("--pause", type=float, default=0.02)
    a = ap.parse_args()
    if a.role == "server":
        lst = socket.create_server((a.host, a.port))
        print("port %d" % lst.getsockname()[1], flush=True)
        conn, _ = lst.accept()
        total = 0
        while True:
            data = conn.recv(65536)
            if not data:
                break
            total += len(data)
        conn.close()
        print("got %d" % total, flush=True)
        return
    s = socket.create_connection((a.host, a.port))
    sent = 0
    while sent < a.bytes:
        n = min(a.chunk, a.bytes - sent)
        s.sendall(pattern(sent, n))
        sent += n
        time.sleep(a.pause)
    s.close()
    print("sent %d" % sent, flush=True)


if __name__ == "__main__":
    main()
