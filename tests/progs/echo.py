#!/usr/bin/env python3
"""asyncio echo server and checking client for the real-program tests.

  echo.py server [--host H] [--port P]
      Echo every byte back; half-close when the client half-closes.
      Prints "port N" once listening, then serves until SIGTERM/SIGINT.

  echo.py client --host H --port P [--conns N] [--bytes B] [--chunk C]
                 [--linger S] [--until PATH]
      N concurrent connections.  Each sends B random bytes in writes of up to
      C bytes while reading the echo, half-closes, reads to EOF and compares
      length and SHA-256 of what came back with what was sent.  With
      --linger, each connection is held open S seconds after the first
      echoed bytes arrive (so smcss can see it live) before it half-closes;
      with --until, until PATH exists (at most 120 s), after any linger.
      Prints one line "ok conns=N bytes=B" and exits 0, or a line per
      mismatch and exits 1.

Only the standard library: the tests run it under smc_run, whose preload
then sees what asyncio does (non-blocking sockets, epoll, shutdown).
"""
import argparse
import asyncio
import hashlib
import os
import signal
import sys


async def handle(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
        await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except ConnectionError:
            pass


async def serve(host, port):
    server = await asyncio.start_server(handle, host, port)
    print("port %d" % server.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set_result, None)
    async with server:
        await stop


async def held(path):
    for _ in range(2400):
        if os.path.exists(path):
            return
        await asyncio.sleep(0.05)


async def one(host, port, nbytes, chunk, linger, until, idx):
    reader, writer = await asyncio.open_connection(host, port)
    sent = hashlib.sha256()
    got = hashlib.sha256()
    first = asyncio.Event()
    received = 0

    async def send():
        left = nbytes
        while left > 0:
            n = min(chunk, left)
            data = os.urandom(n)
            sent.update(data)
            writer.write(data)
            await writer.drain()
            left -= n
        if linger or until:
            await first.wait()
        if linger:
            await asyncio.sleep(linger)
        if until:
            await held(until)
        writer.write_eof()
        await writer.drain()

    async def recv():
        nonlocal received
        while True:
            data = await reader.read(65536)
            if not data:
                break
            first.set()
            got.update(data)
            received += len(data)

    await asyncio.gather(send(), recv())
    writer.close()
    await writer.wait_closed()
    if received != nbytes or got.digest() != sent.digest():
        print("conn %d: sent %d bytes sha256 %s, got %d bytes sha256 %s"
              % (idx, nbytes, sent.hexdigest(), received, got.hexdigest()))
        return False
    return True


async def client(args):
    res = await asyncio.gather(*(one(args.host, args.port, args.bytes,
                                     args.chunk, args.linger, args.until, i)
                                 for i in range(args.conns)))
    if all(res):
        print("ok conns=%d bytes=%d" % (args.conns, args.bytes))
        return 0
    return 1


def main():
    p = argparse.ArgumentParser(description="asyncio echo server / checking client")
    p.add_argument("role", choices=("server", "client"))
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--conns", type=int, default=1)
    p.add_argument("--bytes", type=int, default=1 << 20)
    p.add_argument("--chunk", type=int, default=65536)
    p.add_argument("--linger", type=float, default=0)
    p.add_argument("--until", default=None)
    args = p.parse_args()
    if args.role == "server":
        asyncio.run(serve(args.host, args.port))
        return 0
    if not args.port:
        p.error("client needs --port")
    return asyncio.run(client(args))


if __name__ == "__main__":
    sys.exit(main())
