#!/usr/bin/env python3
"""Connections for tests/cli/soft_offer.bats: when a connection is offered
to the daemon (doc/soft-lifecycle.md section 1.1).

  offer.py server               listen on 127.0.0.1, print "listen PORT";
                                each connection: read a byte, answer it,
                                close; forever
  offer.py holder               the same, but keep each connection open and
                                wait for the next one in accept()
  offer.py short PORT N         N times: connect, send a byte, read the
                                answer, close; then print "short N"
  offer.py idle PORT HOW        connect, print "conn INODE LOCALPORT", then
                                wait by HOW: pause, sleep, select, poll,
                                epoll, recv, waitpid; print "woke" after it
  offer.py rcvtimeo PORT        connect; SO_RCVTIMEO 200 ms; a blocking
                                recv() gets EAGAIN: print "recv EAGAIN"
  offer.py sendfile FILE        listen, print "listen PORT"; accept one
                                connection and send FILE with non-blocking
                                sendfile() calls of 256 KiB that never wait
                                (nginx with a reader that keeps up), close
  offer.py drain PORT           connect, read to the end: print "drained N"
  offer.py alarm PORT           connect; a SIGALRM handler that raises, the
                                alarm in 200 ms; a blocking recv() is
                                interrupted: print "recv interrupted"
"""
import os
import select
import signal
import socket
import struct
import sys
import time


def listen():
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(64)
    print("listen", lst.getsockname()[1], flush=True)
    return lst


def serve(keep):
    lst = listen()
    held = []
    while True:
        c, _ = lst.accept()
        b = c.recv(1)
        if b:
            c.sendall(b)
        if keep:
            held.append(c)
        else:
            c.close()


def short(port, n):
    for _ in range(n):
        c = socket.create_connection(("127.0.0.1", port))
        c.sendall(b"x")
        if c.recv(1) != b"x":
            sys.exit("short: no answer")
        c.close()
    print("short", n, flush=True)


def idle(port, how):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"x")
    if c.recv(1) != b"x":
        sys.exit("idle: no answer")
    print("conn", os.fstat(c.fileno()).st_ino, c.getsockname()[1], flush=True)
    signal.signal(signal.SIGUSR1, lambda *_: None)
    if how == "pause":
        signal.pause()
    elif how == "sleep":
        time.sleep(60)
    elif how == "select":
        select.select([c], [], [], 60)
    elif how == "poll":
        p = select.poll()
        p.register(c, select.POLLIN)
        p.poll(60000)
    elif how == "epoll":
        e = select.epoll()
        e.register(c, select.EPOLLIN)
        e.poll(60)
    elif how == "recv":
        c.recv(1)
    elif how == "waitpid":
        pid = os.fork()
        if pid == 0:
            signal.pause()
            os._exit(0)
        os.waitpid(pid, 0)
    else:
        sys.exit("idle: unknown wait " + how)
    print("woke", flush=True)


def rcvtimeo(port):
    c = socket.create_connection(("127.0.0.1", port))
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 0, 200000))
    try:
        c.recv(1)
        print("recv returned")
    except BlockingIOError:
        print("recv EAGAIN", flush=True)


def send_file(path):
    lst = listen()
    c, _ = lst.accept()
    c.setblocking(False)
    with open(path, "rb") as f:
        size, off = os.fstat(f.fileno()).st_size, 0
        while off < size:
            try:
                off += os.sendfile(c.fileno(), f.fileno(), off, 256 * 1024)
            except BlockingIOError:
                pass       # no wait: a reader that keeps up rarely lets it come
    c.setblocking(True)
    c.close()


def drain(port):
    c = socket.create_connection(("127.0.0.1", port))
    buf = bytearray(1 << 20)
    n = 0
    while True:
        k = c.recv_into(buf)
        if k == 0:
            break
        n += k
    print("drained", n, flush=True)


class Alarm(Exception):
    pass


def alarm(port):
    c = socket.create_connection(("127.0.0.1", port))

    def ring(*_):
        raise Alarm()

    signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        c.recv(1)
        print("recv returned")
    except Alarm:
        print("recv interrupted", flush=True)


def main():
    cmd = sys.argv[1]
    if cmd in ("server", "holder"):
        serve(cmd == "holder")
    elif cmd == "short":
        short(int(sys.argv[2]), int(sys.argv[3]))
    elif cmd == "idle":
        idle(int(sys.argv[2]), sys.argv[3])
    elif cmd == "rcvtimeo":
        rcvtimeo(int(sys.argv[2]))
    elif cmd == "sendfile":
        send_file(sys.argv[2])
    elif cmd == "drain":
        drain(int(sys.argv[2]))
    elif cmd == "alarm":
        alarm(int(sys.argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
