#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py - the table, CSV and chart of a "make bench" run.

Usage: tools/testing/bench/bench-report.py RESULTS_DIR

Reads the RESULT lines of rds-zc-bench (RESULTS_DIR/rds*/guest2/run-*.txt,
tagged modules=ours or modules=distro) and of the raw-verbs phase
(RESULTS_DIR/verbs-smpN/guest2/output.txt, one folder per guest CPU
count), and RESULTS_DIR/env.txt; prints the
table and writes table.txt, results.csv and, when gnuplot is installed,
chart.png into RESULTS_DIR.  Each figure: the median over the rounds and
the spread [min-max]; the ratios ours/distro and ours/raw are ratios of
medians.  The raw-verbs ceiling of a figure is the best median of the
raw-verbs phases (higher, or lower for latencies), marked with its CPU
count.  Exit status 0 when at least one figure was measured.
"""

import csv
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys

SIZES = (4096, 65536, 1 << 20)
DEPTHS = (1, 16)
KEYS = ("map", "getmr", "reuse")


def figures():
    """The figures, in table order: (name, size, inflight, raw figure)."""
    out = []
    for op in ("write", "read"):
        for key in KEYS:
            for size in SIZES:
                for depth in DEPTHS:
                    out.append((f"rdma_{op}_{key}", size, depth,
                                (f"raw_{op}", size, depth)))
    for name in ("reg_pair", "reg_pair_inv"):
        for threads in (1, 8):
            out.append((name, 4096, threads, None))
    out.append(("dgram_rtt_p50", 64, 1, ("raw_rtt_p50", 64, 1)))
    out.append(("dgram_rtt_p99", 64, 1, ("raw_rtt_p99", 64, 1)))
    for size in (64, 4096):
        for senders in (1, 16):
            out.append(("dgram_rate", size, senders, None))
    for size in (65536, 1 << 20):
        for senders in (1, 16):
            out.append(("dgram_tput", size, senders, None))
    for size in (4096, 65536):
        for name in ("reclaim_notify", "reclaim_barrier"):
            out.append((name, size, 16, None))
    return out


LINE = re.compile(r'(\w+)=("[^"]*"|\S+)')


def parse_result(line):
    """The key=value pairs of one RESULT line, or None."""
    pos = line.find("RESULT ")
    if pos < 0:
        return None
    kv = {k: v.strip('"') for k, v in LINE.findall(line[pos + 7:])}
    if not {"name", "size", "inflight", "value", "unit"} <= kv.keys():
        return None
    return kv


class Cell:
    """The rounds of one figure for one module set."""

    def __init__(self):
        self.values = []
        self.unsupported = []
        self.errors = []
        self.unit = ""
        self.config = ""

    def add(self, kv):
        self.unit = kv["unit"]
        v = kv["value"]
        if v == "unsupported":
            self.unsupported.append(kv.get("reason", ""))
        elif v == "error":
            self.errors.append(kv.get("reason", ""))
        else:
            try:
                self.values.append(float(v))
            except ValueError:
                self.errors.append("bad value " + v)

    def rounds(self):
        return len(self.values) + len(self.unsupported) + len(self.errors)

    def median(self):
        return statistics.median(self.values) if self.values else None

    def status(self):
        if self.values and not self.errors:
            return "ok"
        if self.values:
            return f"{len(self.errors)} of {self.rounds()} rounds failed"
        if self.unsupported:
            return "unsupported"
        if self.errors:
            return "failed"
        return "not measured"

    def text(self):
        if not self.values:
            if self.unsupported:
                return "unsupported"
            return "FAILED" if self.errors else "-"
        t = f"{fmt(self.median())} [{fmt(min(self.values))}-{fmt(max(self.values))}]"
        if self.errors:
            t += f" ({len(self.values)}/{self.rounds()})"
        if self.config:
            t += " " + self.config
        return t


def fmt(x):
    """Three significant digits, no exponent for what the bench measures."""
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def size_str(size):
    if size >= 1 << 20:
        return f"{size >> 20} MiB"
    if size >= 1024:
        return f"{size >> 10} KiB"
    return f"{size} B"


def label(name, size, inflight):
    if name.startswith("rdma_"):
        _, op, key = name.split("_")
        return f"RDMA {op.upper()} key={key} {size_str(size)} x{inflight}"
    if name.startswith("reg_pair"):
        inv = " +INVALIDATE" if name.endswith("_inv") else ""
        return f"GET_MR+FREE_MR{inv} {size_str(size)}, {inflight} thr"
    if name.startswith("dgram_rtt"):
        return f"datagram RTT {name[-3:]} {size_str(size)}"
    if name.startswith("reclaim_"):
        how = "barrier/16" if name.endswith("barrier") else "NOTIFY_ME/op"
        return f"bulk reclaim by {how}, WRITE {size_str(size)} x{inflight}"
    kind = "rate" if name == "dgram_rate" else "throughput"
    return f"datagram {kind} {size_str(size)}, {inflight} snd"


def lower_is_better(unit):
    return unit == "us"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def load(res):
    """cells[(set, name, size, inflight)] from every RESULT line."""
    cells = {}

    def add(set_name, kv):
        key = (set_name, kv["name"], int(kv["size"]), int(kv["inflight"]))
        cells.setdefault(key, Cell()).add(kv)

    for path in sorted(glob.glob(os.path.join(res, "rds*", "guest2", "run-*.txt"))):
        with open(path, errors="replace") as f:
            for line in f:
                kv = parse_result(line)
                if kv and kv.get("modules") in ("ours", "distro"):
                    add(kv["modules"], kv)
    for path in sorted(glob.glob(os.path.join(res, "verbs-smp*", "guest2",
                                              "output.txt"))):
        smp = path.split(os.sep)[-3][len("verbs-"):]
        with open(path, errors="replace") as f:
            for line in f:
                kv = parse_result(line)
                if kv and kv["name"].startswith("raw_"):
                    add("raw-" + smp, kv)
    return cells


def best_raw(cells, fig):
    """The raw-verbs cell of the best configuration for fig, or None."""
    best = None
    for key, cell in cells.items():
        if not key[0].startswith("raw-") or key[1:] != fig:
            continue
        cell.config = key[0][4:]
        if best is None or not best.values:
            best = cell
        elif cell.values:
            lower = lower_is_better(cell.unit)
            if (cell.median() < best.median()) == lower:
                best = cell
    return best


def read_env(res):
    env = {}
    try:
        with open(os.path.join(res, "env.txt")) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v
    except OSError:
        pass
    return env


def kernel_log_notes(res):
    """'not ok' lines of the vm-run.sh logs: kernel warnings, timeouts."""
    notes = []
    for path in sorted(glob.glob(os.path.join(res, "*.log"))):
        phase = os.path.basename(path)[:-4]
        with open(path, errors="replace") as f:
            lines = f.readlines()
        for i, line in enumerate(lines):
            if not line.startswith("not ok - "):
                continue
            notes.append(f"{phase}: {line[9:].strip()}")
            # vm-run.sh prints what it found in the kernel log below
            if i + 1 < len(lines) and lines[i + 1].startswith("#   "):
                notes.append("    " + lines[i + 1][4:].strip()[:160])
    return notes


def header_lines(env):
    smp = env.get("guest_smp", "?")
    lines = [
        f"RDS zero-copy benchmark, {env.get('date', '?')}, commit {env.get('commit', '?')}",
        f"kernel {env.get('kernel', '?')}; 2 guests (qemu TCG, smp {smp}, "
        f"{env.get('guest_mem_mb', '?')} MiB, {env.get('guest_nic', '?')}) "
        f"linked by soft-RoCE (rdma_rxe); raw verbs: perftest -R, guests smp "
        f"{env.get('verbs_smp', '-')}",
        f"host: {env.get('host_cpus', '?')} CPUs, load {env.get('host_load_start', '?')} "
        f"at start, {env.get('host_load_end', '?')} at end; {env.get('rounds', '?')} "
        f"rounds of {env.get('point_secs', '?')} s per point; wall time "
        f"{env.get('wall_secs', '?')} s",
        "Emulated: absolute figures are qemu TCG figures, not hardware ones; "
        "the ratios measured in one run are the result.",
        "Cells: median [min-max] over the rounds; ratios of medians; "
        "unit 'us': lower is better, every other unit: higher is better.",
        "Raw verbs: the best of the perftest phases (smpN: guests with N "
        "CPUs), the ceiling of the same rxe link.",
    ]
    return lines


def make_table(rows, env, notes):
    head = ("figure", "unit", "ours", "distro", "raw verbs", "ours/distro",
            "ours/raw")
    body = []
    for r in rows:
        unit = r["unit"] + (" (lower better)" if lower_is_better(r["unit"]) else "")
        body.append((r["label"], unit, r["ours"].text(), r["distro"].text(),
                     r["raw"].text() if r["raw"] else "",
                     f"{r['od']:.2f}" if r["od"] is not None else "-",
                     f"{r['or']:.2f}" if r["or"] is not None else
                     ("-" if r["raw"] else "")))
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]

    def line(cols):
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cols, widths))).rstrip()

    out = header_lines(env) + ["", line(head), line(["-" * w for w in widths])]
    out += [line(b) for b in body]
    by = {(r["name"], r["size"]): r for r in rows}
    recl = []
    for size in (4096, 65536):
        n, b = by.get(("reclaim_notify", size)), by.get(("reclaim_barrier", size))
        if n and b:
            q = ratio(b["ours"].median(), n["ours"].median())
            if q is not None:
                recl.append(f"{size_str(size)} {q:.2f}x")
    if recl:
        out += ["", "Bulk reclaim, ours: one barrier per 16 operations against "
                "a notification per operation: " + ", ".join(recl)]
    if notes:
        out += ["", "Bench warnings (vm-run.sh checks that failed; see the logs):"]
        out += ["  " + n for n in notes]
    return "\n".join(out) + "\n"


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        cols = ["figure", "name", "size", "inflight", "unit", "better"]
        for s in ("ours", "distro", "raw"):
            cols += [f"{s}_median", f"{s}_min", f"{s}_max", f"{s}_rounds",
                     f"{s}_status"]
        cols += ["raw_config", "ours_over_distro", "ours_over_raw"]
        w.writerow(cols)
        for r in rows:
            row = [r["label"], r["name"], r["size"], r["inflight"], r["unit"],
                   "lower" if lower_is_better(r["unit"]) else "higher"]
            for s in ("ours", "distro", "raw"):
                c = r[s]
                if c is None:
                    row += ["", "", "", "", ""]
                    continue
                row += [c.median() if c.values else "",
                        min(c.values) if c.values else "",
                        max(c.values) if c.values else "",
                        c.rounds(), c.status()]
            row += [r["raw"].config if r["raw"] else "",
                    "" if r["od"] is None else f"{r['od']:.4f}",
                    "" if r["or"] is None else f"{r['or']:.4f}"]
            w.writerow(row)


def write_chart(res, rows, env):
    """chart.png through gnuplot: four panels; False when impossible."""
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        return False
    by = {(r["name"], r["size"], r["inflight"]): r for r in rows}

    def triple(c):
        if c is None or not c.values:
            return "NaN NaN NaN"
        return f"{c.median():.6g} {min(c.values):.6g} {max(c.values):.6g}"

    files = {}
    for op in ("write", "read"):
        lines = []
        for size in SIZES:
            for depth in DEPTHS:
                m = by[(f"rdma_{op}_map", size, depth)]
                u = by[(f"rdma_{op}_reuse", size, depth)]
                lines.append(f'"{size_str(size).replace(" ", "")} x{depth}" '
                             f'{triple(m["ours"])} {triple(u["ours"])} '
                             f'{triple(m["distro"])} {triple(m["raw"])}')
        files[op] = lines
    lines = []
    for name in ("dgram_rate", "dgram_tput"):
        for size in ((64, 4096) if name == "dgram_rate" else (65536, 1 << 20)):
            for n in (1, 16):
                r = by[(name, size, n)]
                lines.append(f'"{size_str(size).replace(" ", "")} x{n}" '
                             f'{r["od"] if r["od"] is not None else "NaN"}')
    files["dgram"] = lines
    lines = []
    for name in ("dgram_rtt_p50", "dgram_rtt_p99"):
        r = by[(name, 64, 1)]
        lines.append(f'"{name[-3:]}" {triple(r["ours"])} {triple(r["distro"])} '
                     f'{triple(r["raw"])}')
    files["rtt"] = lines
    for k, lines in files.items():
        with open(os.path.join(res, f"chart-{k}.dat"), "w") as f:
            f.write("\n".join(lines) + "\n")

    title = (f"RDS: this project vs the distribution vs raw verbs - kernel "
             f"{env.get('kernel', '?')}, qemu TCG guests smp {env.get('guest_smp', '?')}, "
             f"{env.get('guest_mem_mb', '?')} MiB, {env.get('guest_nic', '?')}, rxe "
             f"(raw verbs: smp {env.get('verbs_smp', '-')}) - emulation figures: "
             f"compare ratios")
    gp = f"""
set terminal png size 1400,1000 font ",10" noenhanced
set output "{os.path.join(res, 'chart.png')}"
set datafile missing "NaN"
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set key top left Left reverse
set grid ytics
set yrange [0:*]
set offsets 0, 0, graph 0.3, 0
set multiplot layout 2,2 title "{title}" font ",11"
set title "RDMA WRITE cycle (request, WRITE + ACK, notification): MiB/s, median and min-max"
plot "{res}/chart-write.dat" using 2:3:4:xtic(1) title "ours, key by MAP", \\
     "" using 5:6:7 title "ours, one GET_MR reused", \\
     "" using 8:9:10 title "distribution, key by MAP", \\
     "" using 11:12:13 title "raw verbs (ib_write_bw)"
set title "RDMA READ cycle: MiB/s, median and min-max"
plot "{res}/chart-read.dat" using 2:3:4:xtic(1) title "ours, key by MAP", \\
     "" using 5:6:7 title "ours, one GET_MR reused", \\
     "" using 8:9:10 title "distribution, key by MAP", \\
     "" using 11:12:13 title "raw verbs (ib_read_bw)"
set title "Datagrams (rate 64 B, 4 KiB; throughput 64 KiB, 1 MiB): ours / distribution"
set style histogram clustered gap 1
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2
plot "{res}/chart-dgram.dat" using 2:xtic(1) title "ratio ours/distro (1 = equal)"
unset arrow 1
set style histogram errorbars gap 1 lw 1
set title "64 B datagram round trip, us (lower is better); raw: 2 x ib_write_lat"
plot "{res}/chart-rtt.dat" using 2:3:4:xtic(1) title "ours", \\
     "" using 5:6:7 title "distribution", \\
     "" using 8:9:10 title "raw verbs"
unset multiplot
"""
    gp_path = os.path.join(res, "chart.gp")
    with open(gp_path, "w") as f:
        f.write(gp)
    r = subprocess.run([gnuplot, gp_path], capture_output=True, text=True)
    if r.returncode:
        sys.stderr.write("bench-report: gnuplot failed:\n" + r.stderr)
        return False
    return True


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.stderr.write("usage: bench-report.py RESULTS_DIR\n")
        return 2
    res = os.path.abspath(sys.argv[1])
    cells = load(res)
    env = read_env(res)
    rows = []
    measured = 0
    for name, size, inflight, raw in figures():
        ours = cells.get(("ours", name, size, inflight), Cell())
        distro = cells.get(("distro", name, size, inflight), Cell())
        rawc = None
        if raw:
            rawc = best_raw(cells, raw) or Cell()
        unit = ours.unit or distro.unit or (rawc.unit if rawc else "")
        measured += len(ours.values) + len(distro.values)
        rows.append({
            "name": name, "size": size, "inflight": inflight, "unit": unit,
            "label": label(name, size, inflight),
            "ours": ours, "distro": distro, "raw": rawc,
            "od": ratio(ours.median(), distro.median()),
            "or": ratio(ours.median(), rawc.median()) if rawc else None,
        })
    table = make_table(rows, env, kernel_log_notes(res))
    with open(os.path.join(res, "table.txt"), "w") as f:
        f.write(table)
    write_csv(os.path.join(res, "results.csv"), rows)
    chart = write_chart(res, rows, env)
    sys.stdout.write(table)
    print(f"\nresults: {res}/ (table.txt, results.csv, "
          f"{'chart.png, ' if chart else ''}env.txt, phase logs)")
    if not chart:
        print("no chart: gnuplot is not installed (make deps) or failed")
    return 0 if measured else 1


if __name__ == "__main__":
    sys.exit(main())
