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
count.

The datagram points over RDS-over-TCP (tcp_dgram_*, rds-zc-bench --tests
tcp) are rows of the main table, ours against the distribution's; their
streams' ceiling is a plain TCP stream over the same link (iperf3, the
raw_tcp_tput lines of the same runs, tagged modules=tcp), in the raw
column marked "tcp".

Three more sections when their phases ran: one host (RESULTS_DIR/
onehost/guest1/run-*.txt, tagged modules= and path=local or device: the
RDMA cycle between two sockets of one guest, ours on local delivery and
over the device, the distribution's over the device, ratios to the
distribution's over the device), live keys (RESULTS_DIR/keys/
guest2/run-*.txt, RESULT lines with live_keys=N: the cycle with N keys
held against none, as a ratio of cycle times) and all to all
(RESULTS_DIR/scale-gN/guestK/: mem-{0,1,2}.txt, conn-J.txt,
stream-J.txt: per guest count, connection setup, kernel memory and RDMA
resources per peer, aggregate throughput; how they grow from the fewest
guests to the most; a paper model of 1,000 nodes).  Their rows go to
results.csv too, with the columns live_keys and guests.

Exit status 0 when at least one figure was measured.
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


def dgram_figures(prefix, raw_p50, raw_p99, raw_tput):
    """The datagram points, their names after @prefix; the round trips
    with the raw figures @raw_p50 and @raw_p99 to compare, the streams
    with @raw_tput, if any."""
    out = [(prefix + "dgram_rtt_p50", 64, 1, raw_p50),
           (prefix + "dgram_rtt_p99", 64, 1, raw_p99)]
    for size in (64, 4096):
        for senders in (1, 16):
            out.append((prefix + "dgram_rate", size, senders, None))
    for size in (65536, 1 << 20):
        for senders in (1, 16):
            out.append((prefix + "dgram_tput", size, senders, raw_tput))
    for size in (65536, 1 << 20):
        out.append((prefix + "dgram_tput_zc", size, 1, raw_tput))
    return out


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
    out += dgram_figures("", ("raw_rtt_p50", 64, 1), ("raw_rtt_p99", 64, 1),
                         None)
    for size in (4096, 65536):
        for name in ("reclaim_notify", "reclaim_barrier"):
            out.append((name, size, 16, None))
    # the datagram points again over RDS-over-TCP (--tests tcp); the
    # streams' ceiling: a plain TCP stream over the same link (iperf3)
    out += dgram_figures("tcp_", None, None, ("raw_tcp_tput", 1 << 20, 1))
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

    def why(self):
        """What the rounds without a value said, the first of them."""
        reasons = self.errors + self.unsupported
        return reasons[0] if reasons else ""

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
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def size_str(size):
    if size >= 1 << 20:
        return f"{size >> 20} MiB"
    if size >= 1024:
        return f"{size >> 10} KiB"
    return f"{size} B"


def label(name, size, inflight):
    if name.startswith("tcp_"):
        return "TCP " + label(name[4:], size, inflight)
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
    kind = "rate" if name.startswith("dgram_rate") else "throughput"
    zc = ", MSG_ZEROCOPY" if name.endswith("_zc") else ""
    return f"datagram {kind} {size_str(size)}, {inflight} snd{zc}"


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
                elif kv and kv.get("modules") == "tcp" and \
                        kv["name"].startswith("raw_tcp"):
                    add("raw-tcp", kv)
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


# ---------------------------------------------------------------- one host

ONEHOST_PATHS = (("ours", "local"), ("ours", "device"), ("distro", "device"),
                 ("distro", "local"))


def load_onehost(res):
    """cells[(set, path, name, size, inflight)] from the one-host phase."""
    cells = {}
    for path in sorted(glob.glob(os.path.join(res, "onehost*", "guest1",
                                              "run-*.txt"))):
        with open(path, errors="replace") as f:
            for line in f:
                kv = parse_result(line)
                if not kv or kv.get("modules") not in ("ours", "distro") or \
                        kv.get("path") not in ("local", "device"):
                    continue
                key = (kv["modules"], kv["path"], kv["name"], int(kv["size"]),
                       int(kv["inflight"]))
                cells.setdefault(key, Cell()).add(kv)
    return cells


def onehost_rows(cells):
    """CSV rows: per figure, ours local and ours over the device, each
    against the distribution's over the device."""
    rows = []
    figs = sorted({k[2:] for k in cells}, key=lambda k: (k[0], k[1], k[2]))
    for name, size, inflight in figs:
        base = cells.get(("distro", "device", name, size, inflight), Cell())
        for path in ("local", "device"):
            ours = cells.get(("ours", path, name, size, inflight), Cell())
            if not ours.rounds():
                continue
            how = "local delivery" if path == "local" else "over the device"
            rows.append({"name": f"onehost_{name}_{path}", "size": size,
                         "inflight": inflight, "unit": ours.unit or base.unit,
                         "label": f"one host, ours {how} vs distro over the "
                                  f"device: {label(name, size, inflight)}",
                         "ours": ours, "distro": base, "raw": None,
                         "od": ratio(ours.median(), base.median()),
                         "or": None})
    return rows


def onehost_cell(c):
    """A cell of the one-host table: the figures, or why there are none."""
    if c.values or not c.rounds():
        return c.text()
    what = "unsupported" if c.unsupported and not c.errors else "FAILED"
    why = c.why()
    if len(why) > 90:
        why = why[:87] + "..."
    return f"{what}: {why}" if why else what


def onehost_table(cells, env):
    if not cells:
        return []
    out = ["", "One host (one guest): a server and a client of the same guest, "
           f"{env.get('rounds', '?')} rounds of {env.get('point_secs', '?')} s "
           "per point, the sets alternating.  local: 127.0.0.1 <- 127.0.0.2, "
           "no device (ours: local delivery, the RDMA a kernel copy); device: "
           "10.254.3.3 <- 10.254.3.4, two ends of a veth pair with an rxe "
           "device each, both sockets pinned to IB (SO_RDS_TRANSPORT).  "
           "Ratios: ours over the distribution's over the device.", ""]
    head = ("figure", "unit", "ours local", "ours device", "distro device",
            "distro local", "local/distro", "device/distro")
    body = []
    figs = sorted({k[2:] for k in cells}, key=lambda k: (k[0], k[1], k[2]))
    for name, size, inflight in figs:
        c = {p: cells.get(p + (name, size, inflight), Cell())
             for p in ONEHOST_PATHS}
        base = c[("distro", "device")].median()
        unit = next((x.unit for x in c.values() if x.unit), "")
        q = [ratio(c[("ours", p)].median(), base) for p in ("local", "device")]
        body.append((label(name, size, inflight), unit,
                     onehost_cell(c[("ours", "local")]),
                     onehost_cell(c[("ours", "device")]),
                     onehost_cell(c[("distro", "device")]),
                     onehost_cell(c[("distro", "local")]),
                     *("-" if x is None else f"{x:.2f}" for x in q)))
    return out + columns(head, body, 2)


# --------------------------------------------------------------- live keys

KEYS_TARGET = 1.10	# the issue: 10,000 live keys slow a cycle by < 10%


def load_keys(res):
    """cells[(live, name, size, inflight)], per_round[(live, name, size,
    inflight)][round] from the live-keys phase."""
    cells, rounds = {}, {}
    for path in sorted(glob.glob(os.path.join(res, "keys*", "guest2",
                                              "run-*.txt"))):
        with open(path, errors="replace") as f:
            for line in f:
                kv = parse_result(line)
                if not kv or "live_keys" not in kv:
                    continue
                key = (int(kv["live_keys"]), kv["name"], int(kv["size"]),
                       int(kv["inflight"]))
                cells.setdefault(key, Cell()).add(kv)
                try:
                    rounds.setdefault(key, {})[kv.get("round", "?")] = \
                        float(kv["value"])
                except ValueError:
                    pass
    return cells, rounds


def keys_rows(res):
    """Rows of the live-keys section: per figure, none and N keys, and the
    ratio of cycle times (N keys over none)."""
    cells, rounds = load_keys(res)
    lives = sorted({k[0] for k in cells})
    many = [n for n in lives if n > 0]
    if not many:
        return []
    n = many[-1]
    rows = []
    figs = sorted({k[1:] for k in cells}, key=lambda k: (k[0], k[1], k[2]))
    for name, size, inflight in figs:
        zero = cells.get((0, name, size, inflight), Cell())
        full = cells.get((n, name, size, inflight), Cell())
        # the cycle time is the inverse of the throughput at any depth
        q = ratio(zero.median(), full.median())
        per = Cell()
        r0 = rounds.get((0, name, size, inflight), {})
        rn = rounds.get((n, name, size, inflight), {})
        for r in sorted(set(r0) & set(rn)):
            if rn[r]:
                per.values.append(r0[r] / rn[r])
        per.unit = "x"
        base = label(name, size, inflight)
        rows.append({"name": f"{name}_live0", "size": size,
                     "inflight": inflight, "unit": zero.unit or full.unit,
                     "label": f"{base}, no live key", "ours": zero,
                     "distro": None, "raw": None, "od": None, "or": None,
                     "live_keys": 0})
        rows.append({"name": f"{name}_live{n}", "size": size,
                     "inflight": inflight, "unit": zero.unit or full.unit,
                     "label": f"{base}, {n} live keys", "ours": full,
                     "distro": None, "raw": None, "od": None, "or": None,
                     "live_keys": n})
        rows.append({"name": f"{name}_live_cycle_ratio", "size": size,
                     "inflight": inflight, "unit": "x",
                     "label": f"{base}, cycle time {n} keys / none",
                     "ours": per, "distro": None, "raw": None, "od": None,
                     "or": None, "live_keys": n, "ratio": q, "better": "lower",
                     "zero": zero, "full": full, "base": name})
    return rows


def keys_table(rows, env):
    rats = [r for r in rows if r["name"].endswith("_live_cycle_ratio")]
    if not rats:
        return []
    n = rats[0]["live_keys"]
    out = ["", f"Live keys (ours only): the client holds {n} keys (RDS_GET_MR "
           f"of one page each) on its device during the points; rds_zc_ib "
           f"fmr_pool_size={env.get('keys_pool', '?')}; {env.get('rounds', '?')} "
           f"rounds of {env.get('keys_secs', '?')} s, alternating.  Cycle time "
           f"ratio: median with {n} keys over median without (per-round "
           f"ratios in brackets); the target is below {KEYS_TARGET:.2f}."]
    head = ("figure", "unit", "no live key", f"{n} live keys",
            f"cycle {n}/0", "target")
    body = []
    for r in rats:
        q = r["ratio"]
        per = r["ours"]
        qt = "-" if q is None else f"{q:.3f}"
        if per.values:
            qt += f" [{min(per.values):.3f}-{max(per.values):.3f}]"
        verdict = "-" if q is None else ("met" if q < KEYS_TARGET else "NOT met")
        body.append((label(r["base"], r["size"], r["inflight"]),
                     r["full"].unit or r["zero"].unit, r["zero"].text(),
                     r["full"].text(), qt, verdict))
    return out + [""] + columns(head, body, 2)


def columns(head, body, left):
    """Lines of a table: the first @left columns left-aligned."""
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]

    def line(cols):
        return "  ".join(c.ljust(w) if i < left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cols, widths))).rstrip()
    return [line(head), line(["-" * w for w in widths])] + [line(b) for b in body]


# ------------------------------------------------------------- all to all

FLAT = 1.25	# "flat": the per-peer figure grew by less than this


def read_mem(path):
    """A mem-N.txt sample: /proc/meminfo in kB and the rdma_* counts."""
    m = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(":")
                v = v.split()
                if v and re.fullmatch(r"\d+", v[0]):
                    m[k.strip()] = int(v[0])
    except OSError:
        return None
    return m


def kernel_kb(m):
    """Kernel memory that is neither on the LRU lists (user and page cache
    pages, pinned ones included) nor reclaimable slab (dentries, inodes):
    unreclaimable slab, vmalloc, per-CPU, page tables, kernel stacks and
    pages the page allocator handed out directly (RDS receive buffers,
    rxe queues).  Free pages on the per-CPU lists (PcpFree, from
    /proc/zoneinfo: MemFree leaves them out, and they hold megabytes)
    count as free."""
    return (m["MemTotal"] - m["MemFree"] - m.get("PcpFree", 0) - m["Active"] -
            m["Inactive"] - m.get("Unevictable", 0) - m.get("SReclaimable", 0))


def results_in(path, name):
    out = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                kv = parse_result(line)
                if kv and kv["name"] == name:
                    out.append(kv)
    except OSError:
        pass
    return out


def cell_of(values, unit):
    c = Cell()
    c.values = [v for v in values if v is not None]
    c.unit = unit
    return c


def load_scale(res):
    """One entry per guest count N, from RESULTS_DIR/scale-gN."""
    runs = []
    for d in glob.glob(os.path.join(res, "scale-g*")):
        m = re.fullmatch(r"scale-g(\d+)", os.path.basename(d))
        if not m or not os.path.isdir(d):
            continue
        n = int(m.group(1))
        peers = n - 1
        run = {"guests": n, "setup": [], "warm": [], "setup_rtts": [],
               "conn_failed": 0,
               "kmem": [], "slab": [], "vmalloc": [], "percpu": [],
               "qp0": [], "qp1": [], "qp_peer": [], "cq_peer": [],
               "mr1": [], "mr2": [], "mr_peer": [], "tput": [],
               "streams": 0, "streams_failed": 0, "size": None,
               "depth": None, "nodes": 0}
        for k in range(1, n + 1):
            g = os.path.join(d, f"guest{k}")
            m0 = read_mem(os.path.join(g, "mem-0.txt"))
            m1 = read_mem(os.path.join(g, "mem-1.txt"))
            m2 = read_mem(os.path.join(g, "mem-2.txt"))
            if m0 and m1:
                run["nodes"] += 1
                run["kmem"].append((kernel_kb(m1) - kernel_kb(m0)) / peers)
                run["slab"].append((m1["SUnreclaim"] - m0["SUnreclaim"]) / peers)
                run["vmalloc"].append((m1.get("VmallocUsed", 0) -
                                       m0.get("VmallocUsed", 0)) / peers)
                run["percpu"].append((m1.get("Percpu", 0) -
                                      m0.get("Percpu", 0)) / peers)
                run["qp0"].append(m0.get("rdma_qp"))
                run["qp1"].append(m1.get("rdma_qp"))
                if "rdma_qp" in m0 and "rdma_qp" in m1:
                    run["qp_peer"].append((m1["rdma_qp"] - m0["rdma_qp"]) / peers)
                if "rdma_cq" in m0 and "rdma_cq" in m1:
                    run["cq_peer"].append((m1["rdma_cq"] - m0["rdma_cq"]) / peers)
                if "rdma_mr" in m0 and "rdma_mr" in m1:
                    run["mr_peer"].append((m1["rdma_mr"] - m0["rdma_mr"]) / peers)
                run["mr1"].append(m1.get("rdma_mr"))
            if m2:
                run["mr2"].append(m2.get("rdma_mr"))
            for path in sorted(glob.glob(os.path.join(g, "conn-*.txt"))):
                got = results_in(path, "conn_setup")
                ok = [kv for kv in got if kv["value"] not in ("error", "unsupported")]
                if not ok:
                    run["conn_failed"] += 1
                for kv in ok:
                    setup = float(kv["value"])
                    run["setup"].append(setup)
                    if "warm_us" in kv:
                        warm = float(kv["warm_us"])
                        run["warm"].append(warm)
                        # the cold round trip in warm ones of the same
                        # connection: what setup costs, the host's
                        # speed of that moment divided out
                        if warm > 0:
                            run["setup_rtts"].append(setup * 1000 / warm)
            for path in sorted(glob.glob(os.path.join(g, "stream-*.txt"))):
                run["streams"] += 1
                got = [kv for kv in results_in(path, "rdma_write_map")]
                ok = [kv for kv in got if kv["value"] not in ("error", "unsupported")]
                if not ok:
                    run["streams_failed"] += 1
                for kv in got:
                    run["size"] = int(kv["size"])
                    run["depth"] = int(kv["inflight"])
                for kv in ok:
                    run["tput"].append(float(kv["value"]))
        runs.append(run)
    return sorted(runs, key=lambda r: r["guests"])


def num(x):
    """fmt(), but whole numbers as such."""
    if x is not None and x == int(x):
        return str(int(x))
    return fmt(x)


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def scale_rows(runs):
    """CSV rows of the all-to-all phase, one per figure and guest count."""
    rows = []
    figs = (
        ("scale_setup", "connection setup: first round trip, cold", "ms", "setup"),
        ("scale_warm_rtt", "round trip on a warm connection", "us", "warm"),
        ("scale_setup_rtts", "connection setup in warm round trips", "RTTs",
         "setup_rtts"),
        ("scale_kmem_per_peer", "kernel memory per peer", "KiB", "kmem"),
        ("scale_slab_per_peer", "  of which unreclaimable slab", "KiB", "slab"),
        ("scale_vmalloc_per_peer", "  of which vmalloc", "KiB", "vmalloc"),
        ("scale_qp_per_node", "QPs per node, connections up", "QPs", "qp1"),
        ("scale_qp_per_peer", "QPs per peer", "QPs", "qp_peer"),
        ("scale_cq_per_peer", "CQs per peer", "CQs", "cq_peer"),
        ("scale_mr_per_peer", "MRs per peer", "MRs", "mr_peer"),
        ("scale_mr_per_node", "MRs per node after the streams", "MRs", "mr2"),
        ("scale_stream_tput", "RDMA WRITE stream, each", "MiB/s", "tput"),
    )
    for r in runs:
        n = r["guests"]
        for name, text, unit, key in figs:
            c = cell_of(r[key], unit)
            rows.append({"name": name, "size": r["size"] or 0,
                         "inflight": r["depth"] or 0, "unit": unit,
                         "label": f"all to all, {n} guests: {text.strip()}",
                         "ours": c, "distro": None, "raw": None, "od": None,
                         "or": None, "guests": n,
                         "better": "higher" if unit == "MiB/s" else "lower"})
        agg = cell_of([sum(r["tput"])] if r["tput"] else [], "MiB/s")
        rows.append({"name": "scale_aggregate_tput", "size": r["size"] or 0,
                     "inflight": r["depth"] or 0, "unit": "MiB/s",
                     "label": f"all to all, {n} guests: aggregate throughput",
                     "ours": agg, "distro": None, "raw": None, "od": None,
                     "or": None, "guests": n})
    if len(runs) >= 2:
        lo, hi = runs[0], runs[-1]
        for name, key, text in (("scale_kmem_growth", "kmem", "kernel memory per peer"),
                                ("scale_setup_growth", "setup", "connection setup"),
                                ("scale_setup_rtts_growth", "setup_rtts",
                                 "connection setup in warm round trips"),
                                ("scale_qp_growth", "qp_peer", "QPs per peer")):
            q = ratio(median_or_none(hi[key]), median_or_none(lo[key]))
            rows.append({"name": name, "size": lo["size"] or 0,
                         "inflight": lo["depth"] or 0, "unit": "x",
                         "label": f"all to all: {text}, {hi['guests']} guests "
                                  f"/ {lo['guests']}",
                         "ours": cell_of([q], "x"), "distro": None,
                         "raw": None, "od": None, "or": None,
                         "guests": hi["guests"], "better": "lower"})
    return rows


def scale_table(runs, env):
    if not runs:
        return []
    size = next((r["size"] for r in runs if r["size"]), None)
    depth = next((r["depth"] for r in runs if r["depth"]), None)
    out = ["", f"All to all (ours only): 2 to N guests on one Ethernet segment "
           f"(udp-hub), every guest connects to every other, then streams "
           f"RDMA WRITE by MAP, {size_str(size) if size else '?'} x{depth or '?'}, "
           f"{env.get('scale_secs', '?')} s, to every other at once.",
           "Setup: first round trip on a cold connection (connections "
           "opened one at a time per guest); kernel KiB/peer: (MemTotal - "
           "MemFree - PcpFree - LRU - SReclaimable) after the connections came "
           "up, less before, over the peers; setup RTTs: each connection's "
           "setup over its own warm round trip, which divides out how fast "
           "the host ran the guests then (4 TCG guests share 2 cores); "
           "cells: median [min-max] over connections, nodes or streams.", ""]
    head = ("guests", "setup ms", "warm RTT us", "setup RTTs",
            "kernel KiB/peer",
            "slab KiB/peer", "vmalloc KiB/peer", "QPs/node", "QPs/peer",
            "MRs/peer", "MRs/node", "MiB/s each", "aggregate MiB/s",
            "streams ok")
    body = []
    for r in runs:
        setup = cell_of(r["setup"], "ms").text()
        if r["conn_failed"]:
            setup += f" ({r['conn_failed']} failed)"
        body.append((str(r["guests"]), setup,
                     cell_of(r["warm"], "us").text(),
                     cell_of(r["setup_rtts"], "RTTs").text(),
                     cell_of(r["kmem"], "KiB").text(),
                     cell_of(r["slab"], "KiB").text(),
                     cell_of(r["vmalloc"], "KiB").text(),
                     num(median_or_none(r["qp1"])),
                     num(median_or_none(r["qp_peer"])),
                     num(median_or_none(r["mr_peer"])),
                     num(median_or_none(r["mr2"])),
                     cell_of(r["tput"], "MiB/s").text(),
                     fmt(sum(r["tput"])) if r["tput"] else "-",
                     f"{r['streams'] - r['streams_failed']}/{r['streams']}"))
    out += columns(head, body, 1)
    if len(runs) >= 2:
        lo, hi = runs[0], runs[-1]
        parts = []
        for key, text in (("kmem", "kernel memory"), ("setup", "setup time"),
                          ("warm", "warm round trip"),
                          ("setup_rtts", "setup in warm round trips"),
                          ("qp_peer", "QPs")):
            q = ratio(median_or_none(hi[key]), median_or_none(lo[key]))
            if q is None:
                parts.append(f"{text} -")
            else:
                verdict = "flat" if q < FLAT else "GROWS"
                if key == "warm":
                    # the host's speed, not a cost per peer
                    verdict = "host load"
                parts.append(f"{text} {q:.2f}x ({verdict})")
        out += ["", f"Per peer, {hi['guests']} guests against {lo['guests']} "
                f"(flat: below {FLAT:.2f}x): " + ", ".join(parts)]
    big = runs[-1]
    kmem = median_or_none(big["kmem"])
    qpp = median_or_none(big["qp_peer"])
    qp0 = median_or_none(big["qp0"])
    mrp = median_or_none(big["mr_peer"])
    mr2 = median_or_none(big["mr2"])
    if kmem is not None and qpp is not None and qp0 is not None:
        peers = 999
        mem = peers * kmem
        line = (f"Paper model, 1,000 nodes all to all (per-peer costs of the "
                f"{big['guests']}-guest run): QPs per node {num(qp0)} + "
                f"{peers} x {num(qpp)} = {num(qp0 + peers * qpp)}; kernel memory "
                f"per node {peers} x {num(kmem)} KiB = {num(mem / 1024)} MiB")
        if mrp is not None and mr2 is not None:
            line += (f"; MRs per node {num(mr2)} (after the streams) + "
                     f"{peers} x {num(mrp)} = {num(mr2 + peers * mrp)}")
        out += [line]
    return out


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
        f"kernel {env.get('kernel', '?')}; guests {env.get('guests', '?')} (qemu TCG, smp {smp}, "
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
        "Raw: raw verbs, the best of the perftest phases (smpN: guests "
        "with N CPUs), the ceiling of the same rxe link; for the TCP "
        "streams (tcp), a plain TCP stream between the same guests "
        "(iperf3, writes of 1 MiB) after each run's points.",
    ]
    return lines


def make_table(rows, env, notes, extra=()):
    head = ("figure", "unit", "ours", "distro", "raw", "ours/distro",
            "ours/raw")
    body = []
    for r in rows:
        # a focused run (--points): only the rows it measured (the TCP
        # ceiling, measured in every TCP run, measures no row alone)
        if not (r["ours"].rounds() or r["distro"].rounds() or
                (r["raw"] and r["raw"].rounds() and r["raw"].config != "tcp")):
            continue
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

    out = header_lines(env) + [""]
    if any(r["ours"].values or r["distro"].values or
           (r["raw"] and r["raw"].values) for r in rows):
        out += [line(head), line(["-" * w for w in widths])]
        out += [line(b) for b in body]
    else:
        out += ["(no figure of ours against the distribution's: phases rds "
                "and verbs not run or nothing measured)"]
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
    zc = []
    by3 = {(r["name"], r["size"], r["inflight"]): r for r in rows}
    for size in (65536, 1 << 20):
        c = by3.get(("dgram_tput", size, 1))
        z = by3.get(("dgram_tput_zc", size, 1))
        if c and z:
            q = ratio(z["ours"].median(), c["ours"].median())
            if q is not None:
                zc.append(f"{size_str(size)} {q:.2f}x")
    if zc:
        out += ["", "Zero-copy datagrams, ours: MSG_ZEROCOPY against copied "
                "sends, one sender: " + ", ".join(zc)]
    zc = []
    for size in (65536, 1 << 20):
        c = by3.get(("tcp_dgram_tput", size, 1))
        z = by3.get(("tcp_dgram_tput_zc", size, 1))
        if not (c and z):
            continue
        for s in ("ours", "distro"):
            q = ratio(z[s].median(), c[s].median())
            if q is not None:
                zc.append(f"{s} {size_str(size)} {q:.2f}x")
    if zc:
        out += ["", "Zero-copy datagrams over TCP: MSG_ZEROCOPY against "
                "copied sends, one sender: " + ", ".join(zc)]
    out += list(extra)
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
        cols += ["raw_config", "ours_over_distro", "ours_over_raw",
                 "live_keys", "guests"]
        w.writerow(cols)
        for r in rows:
            better = r.get("better") or ("lower" if lower_is_better(r["unit"])
                                         else "higher")
            row = [r["label"], r["name"], r["size"], r["inflight"], r["unit"],
                   better]
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
                    "" if r["or"] is None else f"{r['or']:.4f}",
                    r.get("live_keys", ""), r.get("guests", "")]
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
    ocells = load_onehost(res)
    orows = onehost_rows(ocells)
    measured += sum(len(c.values) for c in ocells.values())
    krows = keys_rows(res)
    runs = load_scale(res)
    srows = scale_rows(runs)
    for r in krows + srows:
        if not r["name"].endswith(("_ratio", "_growth")):
            measured += len(r["ours"].values)
    extra = (onehost_table(ocells, env) + keys_table(krows, env) +
             scale_table(runs, env))
    table = make_table(rows, env, kernel_log_notes(res), extra)
    with open(os.path.join(res, "table.txt"), "w") as f:
        f.write(table)
    write_csv(os.path.join(res, "results.csv"), rows + orows + krows + srows)
    chart = False
    # the chart's panels need the RDMA cycles: none for a focused run
    # of other points
    measured_main = any(r["ours"].values or r["distro"].values
                        for r in rows if r["name"].startswith("rdma_"))
    if measured_main:
        chart = write_chart(res, rows, env)
    sys.stdout.write(table)
    print(f"\nresults: {res}/ (table.txt, results.csv, "
          f"{'chart.png, ' if chart else ''}env.txt, phase logs)")
    if not chart and measured_main:
        print("no chart: gnuplot is not installed (make deps) or failed")
    return 0 if measured else 1


if __name__ == "__main__":
    sys.exit(main())
