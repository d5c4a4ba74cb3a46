#!/usr/bin/env python3
"""A threaded server that hands each connection to a program it starts, as
inetd and CGI servers do.

  handover.py server [--path-search]
      Prints "port N", then per connection (a thread each): reads a 16-byte
      header, writes one line, and runs cat with the connection as its
      stdin and stdout (subprocess, close_fds), then closes its copy and
      waits for cat.  --path-search: cat is found through a PATH whose
      first directories do not have it (each failed execve must leave the
      connection as it was).
  handover.py client --port P [--bytes N] [--pause S]
      Pauses S seconds (default 0.05: the connection is paired meanwhile),
      sends the header, reads the line, pauses again, sends N random bytes (default 100000), shuts down its sending side
      and prints "ok" when exactly those bytes came back before the end.
"""
import argparse
import os
import socket
import subprocess
import threading
import time


def serve(conn, env):
    with conn:
        hdr = b""
        while len(hdr) < 16:
            data = conn.recv(16 - len(hdr))
            if not data:
                return
            hdr += data
        conn.sendall(b"hello " + hdr + b"\n")
        child = subprocess.Popen(["cat"], stdin=conn, stdout=conn, close_fds=True, env=env)
    child.wait()


def server(path_search):
    env = dict(os.environ)
    if path_search:
        env["PATH"] = "/nonexistent/a:/nonexistent/b:/proc:" + env.get("PATH", "/usr/bin:/bin")
    lst = socket.create_server(("127.0.0.1", 0))
    print("port %d" % lst.getsockname()[1], flush=True)
    while True:
        conn, _ = lst.accept()
        threading.Thread(target=serve, args=(conn, env), daemon=True).start()


def client(port, nbytes, pause):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(20)
    time.sleep(pause)
    s.sendall(b"0123456789abcdef")
    line = b""
    while not line.endswith(b"\n"):
        data = s.recv(1)
        if not data:
            print("EOF before the line")
            return
        line += data
    time.sleep(pause)
    out = os.urandom(nbytes)
    s.sendall(out)
    s.shutdown(socket.SHUT_WR)
    got = bytearray()
    while True:
        data = s.recv(65536)
        if not data:
            break
        got += data
    print("ok" if bytes(got) == out else "got %d bytes back of %d, %s" %
          (len(got), nbytes, "a prefix" if out.startswith(bytes(got)) else "not the same"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["server", "client"])
    ap.add_argument("--path-search", action="store_true")
    ap.add_argument("--port", type=int)
    ap.add_argument("--bytes", type=int, default=100000)
    ap.add_argument("--pause", type=float, default=0.05)
    a = ap.parse_args()
    if a.mode == "server":
        server(a.path_search)
    else:
        client(a.port, a.bytes, a.pause)


if __name__ == "__main__":
    main()
