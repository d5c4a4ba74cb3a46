#!/usr/bin/env python3
"""A connection handed to a child process as its stdin (subprocess).

  stdin_child.py server CLOSE_FDS [PAUSE]
      Accept one connection, echo 10 lines, then twice run "head -c 6" with
      the connection as stdin (sh by its path, then by PATH search) and
      send back what it read, sleep PAUSE seconds, echo 10 more lines,
      close.  Prints "port N" once listening.  CLOSE_FDS 0:
      subprocess starts the children with posix_spawn; 1: with fork or
      vfork and dup2.
  stdin_child.py server-many CLOSE_FDS
      20 connections one after the other: echo 8 lines, run /bin/true
      (which never touches its stdin) with the connection as stdin, close.
      Then prints "rings N": the rings still mapped in this process.
  stdin_child.py client --port P
      The other end; prints "ok" when every answer was right, else what
      went wrong.
  stdin_child.py client-many --port P
      The other end of server-many: each connection must end with end of
      stream, not a reset.
"""
import socket
import subprocess
import sys
import time


def echo_lines(f, n):
    for _ in range(n):
        line = f.readline()
        if not line:
            return False
        f.write(line)
    return True


def server(close_fds, pause=0.0):
    lst = socket.create_server(("127.0.0.1", 0))
    print("port %d" % lst.getsockname()[1], flush=True)
    conn, _ = lst.accept()
    f = conn.makefile("rwb", buffering=0)
    if not echo_lines(f, 10):
        return 1
    # the second by PATH search: execve fails in the directories before /bin
    for sh in ("/bin/sh", "sh"):
        got = subprocess.run([sh, "-c", "head -c 6"], stdin=conn.fileno(),
                             capture_output=True, close_fds=close_fds).stdout
        conn.sendall(b"child:" + got)
    time.sleep(pause)
    if not echo_lines(f, 10):
        return 1
    conn.close()
    return 0


def server_many(close_fds):
    lst = socket.create_server(("127.0.0.1", 0))
    print("port %d" % lst.getsockname()[1], flush=True)
    for _ in range(20):
        conn, _ = lst.accept()
        f = conn.makefile("rwb", buffering=0)
        if not echo_lines(f, 8):
            return 1
        subprocess.run(["/bin/true"], stdin=conn.fileno(), close_fds=close_fds)
        f.close()
        conn.close()
    # the last ring goes when the daemon has answered for it: wait 3 s at most
    for _ in range(60):
        with open("/proc/self/maps") as m:
            rings = m.read().count("smc-dmb")
        if not rings:
            break
        time.sleep(0.05)
    print("rings %d" % rings, flush=True)
    return 0


def client_many(port):
    for n in range(20):
        s = socket.create_connection(("127.0.0.1", port))
        f = s.makefile("rwb", buffering=0)
        for i in range(8):
            f.write(b"line %d\n" % i)
            if f.readline() != b"line %d\n" % i:
                print("connection %d: echo %d wrong" % (n, i), flush=True)
                return 1
        try:
            end = s.recv(1)
        except OSError as e:
            print("connection %d: %s, want end of stream" % (n, e), flush=True)
            return 1
        if end:
            print("connection %d: data %r, want end of stream" % (n, end), flush=True)
            return 1
        s.close()
    print("ok", flush=True)
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
        sys.exit(server(sys.argv[2] == "1", float(sys.argv[3]) if len(sys.argv) > 3 else 0.0))
    if sys.argv[1] == "server-many":
        sys.exit(server_many(sys.argv[2] == "1"))
    if sys.argv[1] == "client-many":
        sys.exit(client_many(int(sys.argv[3])))
    sys.exit(client(int(sys.argv[3])))
