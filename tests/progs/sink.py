#!/usr/bin/env python3
"""One connection, bytes one way, for the capture tests.

  sink.py server [--host H]
      Accept one connection, read to EOF; prints "port N" once listening,
      then "got N" with the byte count, and exits.

  sink.py client --port P [--host H] [--bytes B] [--chunk C] [--pause S]
                 [--exec-at K]
      Send B bytes of the pattern byte[i] = i % 251 in writes of C bytes,
      S seconds apart, then close; prints "sent B".  With --exec-at, the
      process replaces itself (execv) after K bytes and the new image, given
      the socket's fd, sends the rest.

The server checks the pattern: "got N" only if every byte is right, else
"corrupt at OFFSET".
"""
import argparse
import os
import socket
import sys
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
    ap.add_argument("--exec-at", type=int, default=-1)
    ap.add_argument("--fd", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--sent", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.role == "server":
        lst = socket.create_server((a.host, a.port))
        print("port %d" % lst.getsockname()[1], flush=True)
        conn, _ = lst.accept()
        total = 0
        bad = -1
        while True:
            data = conn.recv(65536)
            if not data:
                break
            if bad < 0 and data != pattern(total, len(data)):
                bad = total + next(i for i in range(len(data))
                                   if data[i] != (total + i) % 251)
            total += len(data)
        conn.close()
        print("got %d" % total if bad < 0 else "corrupt at %d" % bad, flush=True)
        return
    if a.fd >= 0:
        s = socket.socket(fileno=a.fd)
    else:
        s = socket.create_connection((a.host, a.port))
    sent = a.sent
    while sent < a.bytes:
        if sent == a.exec_at:
            s.set_inheritable(True)
            os.execv(sys.executable, [sys.executable, __file__, "client",
                                      "--bytes", str(a.bytes), "--chunk", str(a.chunk),
                                      "--pause", str(a.pause), "--fd", str(s.fileno()),
                                      "--sent", str(sent)])
        n = min(a.chunk, a.bytes - sent, max(a.exec_at - sent, 0) or a.chunk)
        s.sendall(pattern(sent, n))
        sent += n
        time.sleep(a.pause)
    s.close()
    print("sent %d" % sent, flush=True)


if __name__ == "__main__":
    main()
