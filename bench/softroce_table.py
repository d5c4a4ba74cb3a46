"""bench/softroce.sh's table: RESULT lines of tests/vm/guest/b1.sh on stdin.

RESULT MODE TEST ROUND VALUE UNIT CPU_JIFFIES VIA COUNT, MODE tcp, kernel
or soft, TEST latency (usec, COUNT round trips) or throughput (MBps, COUNT
the run's seconds); VALUE 0 is a run that failed, counted apart.  Medians
over the rounds that ran; ratios are oriented so that above 1 is better for
the mode: throughput mode/TCP, latency TCP/mode, CPU TCP/mode (per GB, per
round trip).  Writes the JSON to argv[1]; argv[2] names the guests' kernel,
argv[3] the SMC_SOFT_DRIVE of the soft SMC-R runs, argv[4] the guests'
Ethernet MTU, argv[5] (if not empty) the RLIMIT_MEMLOCK in KiB of soft
SMC-R's programs, run as a user (memlock_kib).  HOSTMARK begin|end MODE
TEST ROUND TICKS lines (tests/vm/hostcpu.sh) give each run's CPU as the
host paid it, both QEMUs: host_cpu in the rows, with its ratios.
"""
import json
import statistics
import sys

HZ = 100            # USER_HZ: /proc/stat's jiffies

runs = {}
splits = {}
marks = {}
for line in sys.stdin:
    f = line.split()
    if len(f) == 6 and f[0] == "HOSTMARK":
        test = {"pp": "latency", "tp": "throughput"}.get(f[3], f[3])
        marks.setdefault((f[2], test, f[4]), {})[f[1]] = int(f[5])
        continue
    if len(f) == 14 and f[0] == "SPLIT":
        test = {"pp": "latency", "tp": "throughput"}.get(f[2], f[2])
        splits[(f[1], test, f[3])] = [int(x) for x in f[4:]]
        continue
    if len(f) < 9 or f[0] != "RESULT":
        continue
    mode, test, value, cpu, via, count = f[1], f[2], float(f[4]), int(f[6]), f[7], int(f[8])
    runs.setdefault((mode, test), []).append((value, cpu, via, count, f[3]))


def split_of(mode, test, ran):
    """Where the CPU went, medians over the rounds: jiffies of user, system
    and interrupt (softirq, rxe's work) time of both guests, their context
    switches, and the client's rxe packets, per GB moved or per round trip."""
    per = {k: [] for k in ("user", "sys", "softirq", "ctxt", "tx_pkts", "rx_pkts")}
    for value, _, _, count, rnd in ran:
        sp = splits.get((mode, test, rnd))
        units = value * count / 1000.0 if test == "throughput" else count
        if not sp or not units:
            continue
        cu, cs, cq, cc, su, ss, sq, sc, tx, rx = sp
        scale = 1000.0 / HZ if test == "throughput" else 1e6 / HZ
        per["user"].append((cu + su) * scale / units)
        per["sys"].append((cs + ss) * scale / units)
        per["softirq"].append((cq + sq) * scale / units)
        per["ctxt"].append((cc + sc) / units)
        per["tx_pkts"].append(tx / units)
        per["rx_pkts"].append(rx / units)
    if not per["user"]:
        return None
    out = {k: round(statistics.median(v), 3) for k, v in per.items()}
    out["unit"] = ("CPU ms, context switches and client rxe packets per GB"
                   if test == "throughput" else "CPU us, context switches and client rxe packets per round trip")
    return out


def per_unit(test, value, cpu, count):
    """CPU of both guests: ms per GB (10^9 bytes) moved, or us per round trip."""
    if test == "throughput":
        return cpu * 1000.0 / HZ / (value * count / 1000.0) if value and count else None
    return cpu * 1e6 / HZ / count if count else None


def host_ticks(mode, test, rnd):
    m = marks.get((mode, test, rnd), {})
    return m["end"] - m["begin"] if "begin" in m and "end" in m else None


table = {}
for (mode, test), rs in sorted(runs.items()):
    ran = [r for r in rs if r[0] > 0]
    cpu = [c for c in (per_unit(test, r[0], r[1], r[3]) for r in ran) if c is not None]
    ticks = [(r, host_ticks(mode, test, r[4])) for r in ran]
    host = [c for c in (per_unit(test, r[0], t, r[3]) for r, t in ticks if t is not None) if c is not None]
    table[(mode, test)] = {
        "value": statistics.median(r[0] for r in ran) if ran else 0.0,
        "cpu": statistics.median(cpu) if cpu else None,
        "via": sorted({r[2] for r in ran}),
        "rounds": len(ran),
        "failed_rounds": len(rs) - len(ran),
        "split": split_of(mode, test, ran),
        "host": statistics.median(host) if host else None,
    }

rows = []
for (mode, test), t in sorted(table.items()):
    tcp, ker = table.get(("tcp", test)), table.get(("kernel", test))
    better = (lambda a, b: a / b) if test == "throughput" else (lambda a, b: b / a)
    row = {
        "name": ("tp_65000B" if test == "throughput" else "pp_14B") + "_" +
                {"tcp": "tcp", "kernel": "kernel_smcr", "soft": "soft_smcr"}[mode],
        "mode": mode,
        "unit": "MB/s" if test == "throughput" else "us (half round trip)",
        "value": round(t["value"], 3),
        "rounds": t["rounds"],
        "failed_rounds": t["failed_rounds"],
        "via": t["via"],
        "cpu": round(t["cpu"], 3) if t["cpu"] is not None else None,
        "cpu_unit": "ms per GB" if test == "throughput" else "us per round trip",
    }
    if mode != "tcp" and tcp and t["value"] and tcp["value"]:
        row["ratio_to_tcp"] = round(better(t["value"], tcp["value"]), 3)
        if t["cpu"] and tcp["cpu"]:
            row["cpu_ratio_to_tcp"] = round(tcp["cpu"] / t["cpu"], 3)
    if mode == "soft" and ker and t["value"] and ker["value"]:
        row["ratio_to_kernel_smcr"] = round(better(t["value"], ker["value"]), 3)
        if t["cpu"] and ker["cpu"]:
            row["cpu_ratio_to_kernel_smcr"] = round(ker["cpu"] / t["cpu"], 3)
    if t["host"]:
        row["host_cpu"] = round(t["host"], 3)
        if mode != "tcp" and tcp and tcp["host"]:
            row["host_cpu_ratio_to_tcp"] = round(tcp["host"] / t["host"], 3)
        if mode == "soft" and ker and ker["host"]:
            row["host_cpu_ratio_to_kernel_smcr"] = round(ker["host"] / t["host"], 3)
    if t["split"]:
        row["cpu_split"] = t["split"]
    if mode == "kernel":
        row["comparison"] = "the kernel's own SMC-R, in the same guests over the same rxe devices"
    rows.append(row)

with open(sys.argv[1], "w") as fh:
    json.dump({"kernel": sys.argv[2] if len(sys.argv) > 2 else "unknown",
               "method": "tests/vm/guest/b1.sh: sockperf between two one-CPU TCG guests, "
                         "interleaved rounds, medians; CPU of both guests from /proc/stat, and "
                         "host_cpu: both QEMUs' CPU on the host (tests/vm/hostcpu.sh)",
               "soft_drive": int(sys.argv[3]) if len(sys.argv) > 3 else 0,
               "mtu": int(sys.argv[4]) if len(sys.argv) > 4 else 1500,
               **({"memlock_kib": int(sys.argv[5])} if len(sys.argv) > 5 and sys.argv[5] else {}),
               "rows": rows}, fh, indent=1)
    fh.write("\n")

print(f"{'name':22} {'value':>9} {'unit':21} {'vs TCP':>7} {'vs kernel':>9} "
      f"{'CPU':>9} {'CPU vs TCP':>10} {'CPU vs kernel':>13} rounds")
for r in rows:
    cpu = r["cpu"] if r["cpu"] is not None else ""
    print(f"{r['name']:22} {r['value']:>9} {r['unit']:21} {r.get('ratio_to_tcp', ''):>7} "
          f"{r.get('ratio_to_kernel_smcr', ''):>9} {cpu:>9} {r.get('cpu_ratio_to_tcp', ''):>10} "
          f"{r.get('cpu_ratio_to_kernel_smcr', ''):>13} {r['rounds']}"
          + (f" ({r['failed_rounds']} failed)" if r["failed_rounds"] else ""))

if any("cpu_split" in r for r in rows):
    print()
    print(f"{'name':22} {'user':>9} {'sys':>9} {'softirq':>9} {'ctxt':>9} {'tx pkts':>9} {'rx pkts':>9}"
          "  (both guests; per GB, or per round trip)")
    for r in rows:
        sp = r.get("cpu_split")
        if sp:
            print(f"{r['name']:22} {sp['user']:>9} {sp['sys']:>9} {sp['softirq']:>9} {sp['ctxt']:>9} "
                  f"{sp['tx_pkts']:>9} {sp['rx_pkts']:>9}")

if any("host_cpu" in r for r in rows):
    print()
    print(f"{'name':22} {'host CPU':>9} {'vs TCP':>7} {'vs kernel':>9}"
          "  (both QEMUs on the host; per GB in ms, or per round trip in us)")
    for r in rows:
        if "host_cpu" in r:
            print(f"{r['name']:22} {r['host_cpu']:>9} {r.get('host_cpu_ratio_to_tcp', ''):>7} "
                  f"{r.get('host_cpu_ratio_to_kernel_smcr', ''):>9}")
