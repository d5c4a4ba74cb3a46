#!/usr/bin/env python3
"""A connection handed to a child process as its stdin (subprocess).

  stdin_child.py server CLOSE_FDS
      Accept one connection, echo 10 lines, then twice run "head -c 6" with
      the connection as stdin and send back what it read, echo 10 more
      lines, close.  Prints "port N" once listening.  CLOSE_FDS 0:
      subprocess starts the children with posix_spawn; 1: with fork or
      vfork and dup2.
  stdin_child.py client --port P
      The other end; prints "ok" when every answer was right, else what
      went wrong.
"""
import socket
import subprocess
import sys


def echo_lines(f, n):
    for _ in range(n):
        line = f.readline()
        if not line:
            return False
        f.write(line)
    return True


def server(close_fds):
    lst = socket.create_server(("127.0.0.1", 0))
    print("port %d" % lst.getsockname()[1], flush=True)
    conn, _ = lst.accept()
    f = conn.makefile("rwb", buffering=0)
    if not echo_lines(f, 10):
        return 1
    for _ in range(2):
        got = subprocess.run(["/bin/sh", "-c", "head -c 6"], stdin=conn.fileno(),
                             capture_output=True, close_fds=close_fds).stdout
        conn.sendall(b"child:" + got)
    if not echo_lines(f, 10):
        return 1
    conn.close()
    return 0


def client(port):
    s = socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rwb", buffering=0)

    def ask(tag):
        for i in range(10):
            f.write(b"%s %d\n" % (tag, i))
            got = f.readline()
            if got != b"%s %d\n" % (tag, i):
                return "echo %s %d: got %r" % (tag.decode(), i, got)
        return None

    err = ask(b"before")
    for w in (b"word0\n", b"word1\n"):
        if err:
            break
        f.write(w)
        want = b"child:" + w
        got = b""
        while len(got) < len(want):
            part = s.recv(len(want) - len(got))
            if not part:
                break
            got += part
        if got != want:
            err = "the child read %r, want %r" % (got, want)
    err = err or ask(b"after")
    if not err and s.recv(1) != b"":
        err = "no end of stream at the end"
    print(err or "ok", flush=True)
    return 1 if err else 0


if __name__ == "__main__":
    if sys.argv[1] == "server":
        sys.exit(server(sys.argv[2] == "1"))
    sys.exit(client(int(sys.argv[3])))
