"""bench/softroce_pg.sh's table: RESULT lines of tests/vm/guest/b2.sh on stdin.

RESULT MODE TEST ROUND TPS tps CPU_JIFFIES VIA TRANSACTIONS, MODE tcp,
kernel (the kernel's own SMC-R, where the guests have it) or soft, TEST ro
(pgbench -S) or rw (TPC-B-like); TPS 0 is a run that failed, counted
apart.  Medians over the rounds that ran; ratios are oriented so that
above 1 is better for the mode: transactions per second mode/TCP (and
soft/kernel), CPU per transaction TCP/mode (and kernel/soft).  Writes the JSON to argv[1]; argv[2] names
the guests' kernel.
"""
import json
import statistics
import sys

HZ = 100            # USER_HZ: /proc/stat's jiffies
NAMES = {"ro": "pgbench_select_only", "rw": "pgbench_tpcb_like"}
SUFFIX = {"tcp": "tcp", "kernel": "kernel_smcr", "soft": "soft_smcr"}

runs = {}
for line in sys.stdin:
    f = line.split()
    if len(f) < 9 or f[0] != "RESULT":
        continue
    mode, test, tps, cpu, via, n = f[1], f[2], float(f[4]), int(f[6]), f[7], int(f[8])
    runs.setdefault((mode, test), []).append((tps, cpu, via, n))

summary = {}
for (mode, test), ran in runs.items():
    good = [r for r in ran if r[0] > 0 and r[3] > 0]
    if not good:
        summary[(mode, test)] = {"rounds": 0, "failed": len(ran), "via": sorted({r[2] for r in ran})}
        continue
    summary[(mode, test)] = {
        "tps": statistics.median(r[0] for r in good),
        # both guests' busy CPU per transaction
        "cpu": statistics.median(r[1] * 1e6 / HZ / r[3] for r in good),
        "rounds": len(good),
        "failed": len(ran) - len(good),
        "via": sorted({r[2] for r in ran}),
    }

rows = []
print("%-22s %-6s %10s %8s %14s %8s %8s %8s  %s" % (
    "test", "mode", "tps", "/TCP", "CPU us/txn", "/TCP", "/kernel", "CPU/ker", "via"))
for test in ("ro", "rw"):
    tcp = summary.get(("tcp", test), {})
    ker = summary.get(("kernel", test), {})
    for mode in ("tcp", "kernel", "soft"):
        s = summary.get((mode, test))
        if s is None:
            continue
        row = {"name": "%s_%s" % (NAMES[test], SUFFIX[mode]),
               "mode": mode, "unit": "transactions/s", "rounds": s["rounds"],
               "failed_rounds": s["failed"], "via": s["via"]}
        if s["rounds"]:
            row["value"] = round(s["tps"], 1)
            row["cpu"] = round(s["cpu"], 1)
            row["cpu_unit"] = "CPU us per transaction, both guests"
            if tcp.get("rounds"):
                row["ratio_to_tcp"] = round(s["tps"] / tcp["tps"], 3)
                row["cpu_ratio_to_tcp"] = round(tcp["cpu"] / s["cpu"], 3)
            if mode == "soft" and ker.get("rounds"):
                row["ratio_to_kernel_smcr"] = round(s["tps"] / ker["tps"], 3)
                row["cpu_ratio_to_kernel_smcr"] = round(ker["cpu"] / s["cpu"], 3)
        if mode == "kernel":
            row["comparison"] = "the kernel's own SMC-R, in the same guests over the same rxe devices"
        rows.append(row)
        print("%-22s %-6s %10s %8s %14s %8s %8s %8s  %s" % (
            NAMES[test], mode, row.get("value", "failed"), row.get("ratio_to_tcp", "-"),
            row.get("cpu", "-"), row.get("cpu_ratio_to_tcp", "-"), row.get("ratio_to_kernel_smcr", "-"),
            row.get("cpu_ratio_to_kernel_smcr", "-"), ",".join(s["via"])))

with open(sys.argv[1], "w") as out:
    json.dump({"kernel": sys.argv[2] if len(sys.argv) > 2 else "unknown",
               "method": "tests/vm/guest/b2.sh: PostgreSQL's server on one one-CPU TCG guest, "
                         "pgbench (4 clients, one thread) on the other, plain TCP, the kernel's "
                         "SMC-R where the kernel has it and soft SMC-R (both under smc_run) in "
                         "interleaved rounds; medians",
               "rows": rows}, out, indent=1)
    out.write("\n")
