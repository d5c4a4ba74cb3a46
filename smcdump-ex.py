#!/usr/bin/env python3
"""smcdump-ex - capture SMC handshake, CDC and data traffic with tcpdump.

SMC traffic never crosses the Ethernet device, so the backend mirrors it to
a capture device (smc-dummyXXXX) as UDP datagrams carrying the SMC dump
header (doc/smc-dump-header.md), and tcpdump captures there; with -m all it
captures on every interface, so the TCP handshake is in the same capture.

Python 3 standard library only.  The soft backend is driven over its control
socket with hand-built netlink messages (SMC_SOFT DUMP_SET, wire/reg.h).
"""
import argparse
import errno
import fcntl
import os
import re
import secrets
import select
import shlex
import shutil
import signal
import socket
import string
import struct
import subprocess
import sys
import time

PROG = "smcdump-ex"
DEV_PREFIX = "smc-dummy"
SOFT_SOCKET_DEFAULT = "/run/smc_soft/control"

# netlink
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x4, 0x200, 0x400
GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 0x10, 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
RTM_NEWLINK, RTM_DELLINK = 16, 17
IFLA_IFNAME, IFLA_LINKINFO, IFLA_INFO_KIND = 3, 18, 1

# SMC_SOFT (wire/reg.h, wire/dump_fmt.h)
SMC_SOFT_CMD_DUMP_SET = 8
A_DUMP_ON, A_DUMP_MODE, A_DUMP_TYPES, A_DUMP_LEGACY, A_IFINDEX = 24, 25, 26, 27, 28
MODE_SMCD, MODE_SMCR = 0x1, 0x2
TYPE_CLC, TYPE_CDC, TYPE_DATA, TYPE_LLC = 0x1, 0x2, 0x4, 0x8
MODES = {"all": MODE_SMCD | MODE_SMCR, "smc": MODE_SMCD | MODE_SMCR,
         "smcd": MODE_SMCD, "smcr": MODE_SMCR}
TYPES = {"all": TYPE_CLC | TYPE_CDC | TYPE_DATA | TYPE_LLC, "raw": TYPE_CLC | TYPE_DATA,
         "cdc": TYPE_CLC | TYPE_CDC | TYPE_LLC}

# TUN (linux/if_tun.h)
TUNSETIFF, TUNSETPERSIST = 0x400454CA, 0x400454CB
IFF_TUN, IFF_NO_PI, IFF_UP = 0x0001, 0x1000, 0x1
SIOCGIFFLAGS, SIOCSIFFLAGS = 0x8913, 0x8914

CAP_NET_ADMIN = 12
# How long tcpdump has, after the dump goes off, to take in the records the
# kernel holds for it before it is stopped.  libpcap's ring (TPACKET_V3)
# hands a block over when it is full or 1 s after it opened: 1.5 s more for
# tcpdump to be scheduled on a busy machine (with 1.2 s, a loaded CI run
# lost the last records).  Not tcpdump's --immediate-mode: its ring
# (TPACKET_V2) of fixed-size frames lost a record of a busy capture.
FLUSH_WAIT = 2.5


class Fail(Exception):
    """One error line: smcdump-ex: WHAT: WHY."""

    def __init__(self, what, why):
        super().__init__("%s: %s" % (what, why))


class NoDump(Exception):
    """The backend cannot dump SMC traffic: the reason."""


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        usage="%(prog)s [-h] [-m {all,smc,smcd,smcr}] [-t {all,raw,cdc}] "
              "[--param PARAM] [--filter FILTER] [--legacy]",
        description="Capture SMC handshake, CDC and data traffic with tcpdump.")
    p.add_argument("-m", choices=["all", "smc", "smcd", "smcr"], default="smc",
                   help="smc: SMC-R and SMC-D records (default); smcd, smcr: "
                        "one of them; all: records and every interface "
                        "(the TCP handshake)")
    p.add_argument("-t", choices=["all", "raw", "cdc"], default="all",
                   help="records besides CLC: all (default), raw (data), cdc (CDC and LLC)")
    p.add_argument("--param", help="extra tcpdump options, e.g. '-w smc.pcap'")
    p.add_argument("--filter", help="tcpdump filter expression")
    p.add_argument("--legacy", action="store_true",
                   help="the older (v1) dump header")
    return p.parse_args(glue_values(argv))


def glue_values(argv):
    """--param -n: argparse would take "-n" for an option; --param=-n it keeps."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in ("--param", "--filter") and i + 1 < len(argv):
            out.append(argv[i] + "=" + argv[i + 1])
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


# ---- netlink messages -------------------------------------------------

def nlattr(atype, payload):
    n = 4 + len(payload)
    return struct.pack("=HH", n, atype) + payload + b"\0" * (-n % 4)


def nlmsg(mtype, flags, seq, payload):
    return struct.pack("=IHHII", 16 + len(payload), mtype, flags, seq, 0) + payload


def nl_messages(buf):
    """(type, payload) of each netlink message in a datagram."""
    off = 0
    while off + 16 <= len(buf):
        n, mtype = struct.unpack_from("=IH", buf, off)
        if n < 16 or off + n > len(buf):
            raise Fail("netlink", "malformed reply")
        yield mtype, buf[off + 16:off + n]
        off += (n + 3) & ~3


def nl_attrs(buf):
    attrs, off = {}, 0
    while off + 4 <= len(buf):
        n, atype = struct.unpack_from("=HH", buf, off)
        if n < 4 or off + n > len(buf):
            break
        attrs.setdefault(atype & 0x3fff, buf[off + 4:off + n])
        off += (n + 3) & ~3
    return attrs


def nl_ack(sock):
    """0 or the negative errno of the NLMSG_ERROR answering the last request."""
    data = sock.recv(65536)
    for mtype, payload in nl_messages(data):
        if mtype == NLMSG_ERROR and len(payload) >= 4:
            return struct.unpack_from("=i", payload)[0]
    raise Fail("netlink", "no acknowledgement")


# ---- the backend ---------------------------------------------------------

def kernel_has_smc():
    try:
        socket.socket(43, socket.SOCK_STREAM, 0).close()
    except OSError as e:
        return e.errno not in (errno.EAFNOSUPPORT, errno.EPROTONOSUPPORT,
                               errno.ESOCKTNOSUPPORT)
    return True


def soft_socket_path():
    path = os.environ.get("SMC_SOFT_SOCKET")
    if path:
        return path
    rt = os.environ.get("XDG_RUNTIME_DIR")
    if os.getuid() != 0 and rt:
        user = os.path.join(rt, "smc_soft", "control")
        if os.path.exists(user):
            return user
    return SOFT_SOCKET_DEFAULT


def soft_connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(30)
    try:
        s.connect(path)
    except OSError:
        s.close()
        raise
    return s


def choose_backend():
    """("kernel", None) or ("soft", connected control socket)."""
    env = os.environ.get("SMC_BACKEND", "auto") or "auto"
    path = soft_socket_path()
    if env == "kernel":
        if not kernel_has_smc():
            raise Fail("SMC_BACKEND=kernel",
                       "the kernel has no SMC support (load it with 'modprobe smc')")
        return "kernel", None
    if env not in ("soft", "auto"):
        raise Fail("SMC_BACKEND", "invalid value '%s' (use auto, kernel or soft)" % env)
    if env == "auto" and kernel_has_smc():
        return "kernel", None
    try:
        s = soft_connect(path)
    except OSError as e:
        if env == "soft":
            raise Fail("SMC_BACKEND=soft", "no soft backend answers on %s: %s "
                       "(start 'smc_softd')" % (path, os.strerror(e.errno)))
        raise Fail("no SMC backend", "the kernel has no SMC support (load it with "
                   "'modprobe smc') and no soft backend answers on %s "
                   "(start 'smc_softd')" % path)
    uid = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
    if uid not in (0, os.getuid()):
        s.close()
        raise Fail("soft backend on %s" % path,
                   "refused: it runs as neither root nor the calling user")
    return "soft", s


def soft_family(sock):
    name = b"SMC_SOFT\0"
    req = struct.pack("=BBH", CTRL_CMD_GETFAMILY, 1, 0) + nlattr(CTRL_ATTR_FAMILY_NAME, name)
    sock.send(nlmsg(GENL_ID_CTRL, NLM_F_REQUEST, 1, req))
    for mtype, payload in nl_messages(sock.recv(65536)):
        if mtype == NLMSG_ERROR:
            break
        fid = nl_attrs(payload[4:]).get(CTRL_ATTR_FAMILY_ID)
        if fid and len(fid) >= 2:
            return struct.unpack("=H", fid[:2])[0]
    raise NoDump("smc_softd has no SMC_SOFT family")


def soft_dump_set(sock, family, on, args=None, ifindex=0, pkt=None):
    attrs = nlattr(A_DUMP_ON, struct.pack("B", on))
    if on:
        attrs += nlattr(A_DUMP_MODE, struct.pack("B", MODES[args.m]))
        attrs += nlattr(A_DUMP_TYPES, struct.pack("B", TYPES[args.t]))
        attrs += nlattr(A_DUMP_LEGACY, struct.pack("B", int(args.legacy)))
        attrs += nlattr(A_IFINDEX, struct.pack("=I", ifindex))
    req = struct.pack("=BBH", SMC_SOFT_CMD_DUMP_SET, 1, 0) + attrs
    msg = nlmsg(family, NLM_F_REQUEST | NLM_F_ACK, 2 + on, req)
    if pkt is not None:
        socket.send_fds(sock, [msg], [pkt.fileno()])
    else:
        sock.send(msg)
    err = nl_ack(sock)
    if err == -errno.EOPNOTSUPP:
        raise NoDump("this smc_softd has no dump support")
    if err == -errno.EPERM:
        raise Fail("SMC dump", "smc_softd refused: %s (CAP_NET_ADMIN needed)"
                   % os.strerror(errno.EPERM))
    if err:
        raise Fail("SMC dump", "smc_softd: %s" % os.strerror(-err))


# ---- the capture device -------------------------------------------------

def rtnl(payload_type, flags, payload):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    try:
        s.send(nlmsg(payload_type, NLM_F_REQUEST | NLM_F_ACK | flags, 1, payload))
        return nl_ack(s)
    finally:
        s.close()


def ifinfomsg(ifindex=0):
    return struct.pack("=BxHiII", socket.AF_UNSPEC, 0, ifindex, 0, 0)


def link_add_dummy(name):
    attrs = nlattr(IFLA_IFNAME, name.encode() + b"\0")
    attrs += nlattr(IFLA_LINKINFO, nlattr(IFLA_INFO_KIND, b"dummy"))
    return rtnl(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, ifinfomsg() + attrs)


def link_del(name):
    try:
        idx = socket.if_nametoindex(name)
    except OSError:
        return 0
    return rtnl(RTM_DELLINK, 0, ifinfomsg(idx))


def proc_start(pid):
    """The start time of process pid (field 22 of its stat), None if it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def owner_mark():
    return "%s pid %d start %s" % (PROG, os.getpid(), proc_start(os.getpid()))


def clean_stale():
    """Remove smc-dummy devices of smcdump-ex processes that are gone."""
    try:
        names = os.listdir("/sys/class/net")
    except OSError:
        return
    for name in names:
        if not name.startswith(DEV_PREFIX):
            continue
        try:
            with open("/sys/class/net/%s/ifalias" % name) as f:
                alias = f.read().strip()
        except OSError:
            continue
        m = re.fullmatch(re.escape(PROG) + r" pid (\d+) start (\S+)", alias)
        if m and proc_start(int(m.group(1))) != m.group(2):
            link_del(name)


class Device:
    """A dummy device where the kernel has the driver, else a TUN device."""

    def __init__(self):
        suffix = "".join(secrets.choice(string.ascii_lowercase + string.digits)
                         for _ in range(4))
        self.name = DEV_PREFIX + suffix
        self.tun = None
        forced = os.environ.get("SMCDUMP_EX_DEVICE", "") == "tun"
        if forced or link_add_dummy(self.name) != 0:
            self._tun("" if forced else "no dummy driver and ")
        try:
            self._setup()
        except Fail:
            self.remove()
            raise

    def _tun(self, why):
        try:
            self.tun = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK)
            ifr = struct.pack("16sH22x", self.name.encode(), IFF_TUN | IFF_NO_PI)
            fcntl.ioctl(self.tun, TUNSETIFF, ifr)
            fcntl.ioctl(self.tun, TUNSETPERSIST, 1)
        except OSError as e:
            if self.tun is not None:
                os.close(self.tun)
                self.tun = None
            raise Fail("capture device", "cannot create %s: %s/dev/net/tun: %s"
                       % (self.name, why, os.strerror(e.errno)))

    def _setup(self):
        # a device of its own: no IPv6 autoconfiguration chatter in the capture
        try:
            with open("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % self.name, "w") as f:
                f.write("1")
        except OSError:
            pass
        try:
            with open("/sys/class/net/%s/ifalias" % self.name, "w") as f:
                f.write(owner_mark())
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                ifr = struct.pack("16sH22x", self.name.encode(), 0)
                flags = struct.unpack_from("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, ifr))[1]
                fcntl.ioctl(s, SIOCSIFFLAGS,
                            struct.pack("16sH22x", self.name.encode(), flags | IFF_UP))
            finally:
                s.close()
            self.ifindex = socket.if_nametoindex(self.name)
        except OSError as e:
            raise Fail("capture device", "%s: %s" % (self.name, os.strerror(e.errno)))

    def drain(self, timeout):
        """Wait up to timeout seconds, reading what the TUN device queues."""
        if self.tun is None:
            return False
        r, _, _ = select.select([self.tun], [], [], timeout)
        while r:
            try:
                os.read(self.tun, 65536)
            except OSError:
                break
        return True

    def remove(self):
        link_del(self.name)
        if self.tun is not None:
            os.close(self.tun)
            self.tun = None


# ---- the capture ----------------------------------------------------------

def has_net_admin():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return (int(line.split()[1], 16) >> CAP_NET_ADMIN) & 1 == 1
    except (OSError, ValueError):
        pass
    return False


def tcpdump_cmd(tcpdump, iface, args):
    cmd = [tcpdump, "-i", iface, "-U"]
    cmd += args.param_words
    if args.filter:
        cmd.append(args.filter)
    return cmd


def run_tcpdump(cmd, dev, before_stop=None):
    """Run tcpdump until it exits or SIGINT/SIGTERM/SIGHUP stops it.  Its status.

    tcpdump runs in a process group of its own, so that a Ctrl-C on the
    terminal reaches smcdump-ex alone: it calls before_stop (the dump goes
    off), gives tcpdump FLUSH_WAIT to take in the packets the kernel still
    holds for it, then stops it with SIGINT.
    """
    proc = subprocess.Popen(cmd, preexec_fn=os.setpgrp)
    stop = []

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: stop.append(signum))
    while proc.poll() is None and not stop:
        wait_a_little(proc, dev)
    if proc.poll() is not None:
        return proc.returncode if proc.returncode >= 0 else 0
    if before_stop:
        before_stop()
    deadline = time.monotonic() + FLUSH_WAIT
    while proc.poll() is None and time.monotonic() < deadline:
        wait_a_little(proc, dev)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    proc.wait()
    return 0


def wait_a_little(proc, dev):
    if dev and dev.drain(0.1):
        return
    try:
        proc.wait(0.1)
    except subprocess.TimeoutExpired:
        pass


def capture(args, tcpdump):
    backend, ctl = choose_backend()
    iface_all = args.m == "all"
    if backend == "kernel":
        raise NoDump("the kernel's SMC has no dump support")
    dev = pkt = None
    try:
        family = soft_family(ctl)
        soft_dump_set(ctl, family, 0)   # privilege and support, before any device
        clean_stale()
        dev = Device()
        pkt = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, 0)
        soft_dump_set(ctl, family, 1, args, dev.ifindex, pkt)
        pkt.close()
        pkt = None
        print("%s: capturing SMC records on %s" % (PROG, dev.name), file=sys.stderr,
              flush=True)
        def dump_off():
            try:
                soft_dump_set(ctl, family, 0)
            except (OSError, Fail, NoDump):
                pass    # the session ends with the connection anyway

        return run_tcpdump(tcpdump_cmd(tcpdump, "any" if iface_all else dev.name, args),
                           dev, dump_off)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        if pkt:
            pkt.close()
        ctl.close()
        if dev:
            dev.remove()


def stop_early(signum, _frame):
    """SIGTERM before tcpdump runs: unwind, so that the device goes."""
    raise SystemExit(128 + signum)


def main(argv):
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, stop_early)
    signal.signal(signal.SIGHUP, stop_early)
    try:
        if not has_net_admin():
            raise Fail("capture device", "permission denied: root or CAP_NET_ADMIN needed")
        try:
            args.param_words = shlex.split(args.param or "")
        except ValueError as e:
            raise Fail("--param", str(e))
        tcpdump = shutil.which("tcpdump")
        if not tcpdump:
            raise Fail("tcpdump", "not found in PATH (install the tcpdump package)")
        try:
            return capture(args, tcpdump)
        except NoDump as e:
            if args.m != "all":
                raise Fail("SMC dump", "%s (-m all still captures the TCP handshake)" % e)
            print("%s: SMC dump: %s: capturing the TCP handshake only" % (PROG, e),
                  file=sys.stderr, flush=True)
            return run_tcpdump(tcpdump_cmd(tcpdump, "any", args), None)
    except Fail as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except OSError as e:
        print("%s: %s: %s" % (PROG, e.filename or "error", os.strerror(e.errno or 0)),
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
