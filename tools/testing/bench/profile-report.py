#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""profile-report.py - the table of "make profile" (tools/testing/bench/
profile.sh): guest instructions per operation, by class of code, ours
against the distribution's RDS.

    profile-report.py RESULTS     (the folder profile.sh filled)
    profile-report.py --compare RESULTS1 RESULTS2   (two runs of it: how
                                  far each figure moved between them)
    profile-report.py --self-test (a synthetic dump; no guest needed)

RESULTS holds, per guest K (1 the server, 2 the client):
  insn-K.txt        insn-profile.so's dump: per window, one line per
                    translation block "VADDR INSNS COUNT";
  vm/guestK/windows.txt  what each window measured, one line each:
                    "WINDOW SET POINT REP OPS" (SET ours or distro);
  vm/guestK/syms-SET/kallsyms.txt, modules.txt  the guest's
                    /proc/kallsyms and "MODULE TEXT_ADDR CORESIZE" from
                    /sys/module/*/sections/.text and coresize, taken with
                    SET loaded.

Each point runs twice per repetition: OPS = N1 and N2 operations.  The
instructions of one operation are (I(N2) - I(N1)) / (N2 - N1): what does
not grow with the operations (starting the programs, the first ping, the
window's own edges) cancels.  Blocks are attributed by their start
address: user space below the kernel's half, else the module whose text
holds it (kallsyms' [module] tags, modules.txt), else the kernel.

Writes RESULTS/profile.txt (what it prints) and RESULTS/profile.csv.
Exit status 0 when a table was made.
"""

import bisect
import collections
import os
import shutil
import statistics
import sys

KERNEL_START = 0xffff800000000000
CLASSES = ("rds", "rdma", "rxe", "kernel", "user")
CLASS_NAMES = {
    "rds": "RDS modules",
    "rdma": "RDMA stack",
    "rxe": "rxe",
    "kernel": "rest of kernel",
    "user": "user space",
}
MODULE_CLASS = {
    "rds_zc": "rds", "rds_zc_ib": "rds", "rds": "rds", "rds_rdma": "rds",
    "rds_tcp": "rds", "rds_zc_tcp": "rds",
    "ib_core": "rdma", "rdma_cm": "rdma", "ib_cm": "rdma", "iw_cm": "rdma",
    "ib_uverbs": "rdma",
    "rdma_rxe": "rxe",
}
SIDES = (("client", 2), ("server", 1))
# Calls counted by the executions of the block at a function's entry:
# frames rxe sends and receives per operation, which explain most of the
# instructions of rxe, UDP and virtio, and the scheduler's runs.
ENTRIES = (("rxe_xmit_packet", "frames sent"),
           ("rxe_rcv", "frames received"),
           ("__schedule", "schedules"),
           ("__sysvec_apic_timer_interrupt", "timer interrupts"))
POINT_NAMES = {
    "rtt": "64 B datagram round trip",
    "map4k": "4 KiB RDMA WRITE by MAP, 1 in flight",
    "read4k": "4 KiB RDMA READ by MAP, 1 in flight",
    "map64k": "64 KiB RDMA WRITE by MAP, 1 in flight",
    "read64k": "64 KiB RDMA READ by MAP, 1 in flight",
    "map4k16": "4 KiB RDMA WRITE by MAP, 16 in flight",
    "read4k16": "4 KiB RDMA READ by MAP, 16 in flight",
    "dgram64k": "64 KiB datagram, one sender",
    "dgram1m": "1 MiB datagram, one sender",
    "dgram64kzc": "64 KiB datagram, MSG_ZEROCOPY",
    "dgram1mzc": "1 MiB datagram, MSG_ZEROCOPY",
    "tcprtt": "64 B datagram round trip over TCP",
    "tcp64": "64 B datagram over TCP, one sender",
    "tcp4k": "4 KiB datagram over TCP, one sender",
    "tcp64k": "64 KiB datagram over TCP, one sender",
    "tcp1m": "1 MiB datagram over TCP, one sender",
    "tcp64kzc": "64 KiB datagram over TCP, MSG_ZEROCOPY",
    "tcp1mzc": "1 MiB datagram over TCP, MSG_ZEROCOPY",
    "getmr": "RDS_GET_MR + RDS_FREE_MR, 4 KiB",
}
# The payload of one operation of the datagram points: the summary gives
# their instructions per byte as well.
POINT_BYTES = {
    "dgram64k": 65536, "dgram1m": 1 << 20,
    "dgram64kzc": 65536, "dgram1mzc": 1 << 20, "tcp64k": 65536,
    "tcp1m": 1 << 20, "tcp64kzc": 65536, "tcp1mzc": 1 << 20,
}
# The distribution's RDS functions that register and release the key of
# its MAP cycle (rds_rdma's fast registration and the core's MR code):
# its cheapest equivalent of RDS_GET_MR + RDS_FREE_MR, which fail on rxe.
DISTRO_REG_FUNCS = (
    "__rds_rdma_map", "rds_cmsg_rdma_map", "__rds_put_mr_final",
    "rds_rdma_free_op", "rds_ib_get_mr", "rds_ib_reg_frmr",
    "rds_ib_post_reg_frmr", "rds_ib_map_frmr", "rds_ib_alloc_frmr",
    "rds_ib_try_reuse_ibmr", "rds_ib_reuse_mr", "rds_ib_free_mr",
    "rds_ib_free_frmr_list", "rds_ib_unreg_frmr", "rds_ib_mr_cqe_handler",
    "rds_ib_sync_mr", "rds_ib_get_device", "rds_ib_flush_mr_pool",
    "rds_ib_teardown_mr", "__rds_ib_teardown_mr", "rds_ib_free_frmr",
    "rds_mr_tree_walk",
)


def parse_dump(path):
    """{window: {"blocks": [(vaddr, insns, count)], "state": str}}"""
    windows = {}
    cur = None
    with open(path) as f:
        for line in f:
            if line.startswith("# window "):
                cur = int(line.split()[2])
                windows[cur] = {"blocks": [], "state": "cut"}
            elif line.startswith("# end "):
                w = line.split()
                if cur is not None and int(w[2]) == cur:
                    windows[cur]["state"] = w[-1]
                cur = None
            elif line.startswith("#") or not line.strip():
                continue
            elif cur is not None:
                a, n, c = line.split()
                windows[cur]["blocks"].append((int(a, 16), int(n), int(c)))
    return windows


class Symbols:
    """Kernel text symbols of one guest with one module set loaded."""

    def __init__(self, kallsyms, modules=None):
        syms = []
        with open(kallsyms) as f:
            for line in f:
                w = line.split()
                if len(w) < 3 or w[1] not in "tTwW":
                    continue
                addr = int(w[0], 16)
                if not addr:
                    continue
                mod = w[3].strip("[]") if len(w) > 3 else ""
                syms.append((addr, w[2], mod))
        syms.sort()
        self.addrs = [s[0] for s in syms]
        self.syms = syms
        names = {e[0] for e in ENTRIES}
        self.entries = {a: n for a, n, _ in syms if n in names}
        self.ranges = []
        if modules and os.path.exists(modules):
            with open(modules) as f:
                for line in f:
                    w = line.split()
                    if len(w) == 3:
                        base = int(w[1], 16)
                        self.ranges.append((base, base + int(w[2]), w[0]))
        if not self.addrs:
            raise ValueError(f"{kallsyms}: no text symbols (read as root?)")

    def lookup(self, addr):
        """(class, module, function) of a block's start address."""
        if addr < KERNEL_START:
            return "user", "", "[user]"
        mod = None
        for lo, hi, m in self.ranges:
            if lo <= addr < hi:
                mod = m
                break
        i = bisect.bisect_right(self.addrs, addr) - 1
        func = "[unknown]"
        if i >= 0 and addr - self.addrs[i] < (1 << 20):
            _, name, smod = self.syms[i]
            if mod is None or smod == mod:
                func = name
                if mod is None:
                    mod = smod
        mod = mod or ""
        cls = MODULE_CLASS.get(mod, "kernel")
        return cls, mod, func if not mod else f"{func} [{mod}]"


def attribute(blocks, syms, cache):
    """Instructions per class and per function of one window."""
    per_class = collections.Counter()
    per_func = collections.Counter()
    for vaddr, insns, count in blocks:
        if vaddr in syms.entries:
            per_class["calls:" + syms.entries[vaddr]] += count
        hit = cache.get(vaddr)
        if hit is None:
            hit = cache[vaddr] = syms.lookup(vaddr)
        cls, _, func = hit
        n = insns * count
        per_class[cls] += n
        if cls == "rds":
            per_func[func] += n
    per_class["total"] = sum(per_class[c] for c in CLASSES)
    return per_class, per_func


def read_windows(path):
    """[(window, set, point, rep, ops)] of a guest's windows.txt."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 5 and w[0].isdigit():
                out.append((int(w[0]), w[1], w[2], int(w[3]), int(w[4])))
    return out


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.2f}M"
    if a >= 1e4:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return "-"
    return f"{a / b:.2f}x"


def spread(vals):
    """Largest relative distance of the repetitions from their mean, %."""
    vals = [v for v in vals if v is not None]
    if len(vals) < 2:
        return None
    m = statistics.mean(vals)
    if m <= 0:
        return None
    return max(abs(v - m) for v in vals) / m * 100


def analyse(res):
    """{(point, set, side): {"reps": [{cls: per-op}], "funcs": Counter,
    "raw": [(rep, ops, total)]}} and notes."""
    data = {}
    notes = []
    for side, node in SIDES:
        dump = os.path.join(res, f"insn-{node}.txt")
        gdir = os.path.join(res, "vm", f"guest{node}")
        if not os.path.exists(dump):
            notes.append(f"no {dump}")
            continue
        wins = parse_dump(dump)
        syms = {}
        caches = {}
        runs = collections.defaultdict(dict)
        for win, mset, point, rep, ops in read_windows(
                os.path.join(gdir, "windows.txt")):
            if win not in wins:
                notes.append(f"{side}: window {win} ({mset} {point} rep {rep}"
                             f" ops {ops}) missing from the dump")
                continue
            if wins[win]["state"] != "closed":
                notes.append(f"{side}: window {win} {wins[win]['state']}")
            if mset not in syms:
                sdir = os.path.join(gdir, f"syms-{mset}")
                syms[mset] = Symbols(os.path.join(sdir, "kallsyms.txt"),
                                     os.path.join(sdir, "modules.txt"))
                caches[mset] = {}
            runs[(point, mset, rep)][ops] = attribute(
                wins[win]["blocks"], syms[mset], caches[mset])
        for (point, mset, rep), by_ops in sorted(runs.items()):
            if len(by_ops) != 2:
                notes.append(f"{side}: {point} {mset} rep {rep}: "
                             f"{len(by_ops)} window(s), need 2")
                continue
            n1, n2 = sorted(by_ops)
            (c1, f1), (c2, f2) = by_ops[n1], by_ops[n2]
            d = data.setdefault((point, mset, side),
                                {"reps": [], "funcs": collections.Counter(),
                                 "raw": []})
            d["reps"].append({c: (c2[c] - c1[c]) / (n2 - n1)
                              for c in CLASSES + ("total",) + tuple(
                                  "calls:" + e[0] for e in ENTRIES)})
            d["raw"].append((rep, n1, c1["total"], n2, c2["total"]))
            for fn in set(f1) | set(f2):
                d["funcs"][fn] += (f2[fn] - f1[fn]) / (n2 - n1)
        for d in data.values():
            if d["reps"] and "nreps" not in d:
                d["nreps"] = len(d["reps"])
    for d in data.values():
        n = len(d["reps"])
        for fn in d["funcs"]:
            d["funcs"][fn] /= n
    return data, notes


def mean_of(d, cls):
    if not d or not d["reps"]:
        return None
    return statistics.mean(r[cls] for r in d["reps"])


def both_sides(data, point, mset, cls):
    """A class per operation, client + server; None if a side is missing."""
    vals = [mean_of(data.get((point, mset, s)), cls) for s, _ in SIDES]
    return None if None in vals else sum(vals)


def distro_reg(data):
    """The RDS instructions of the distribution's MAP cycle (map4k) spent
    in DISTRO_REG_FUNCS, both sides, per operation; None without it."""
    total = 0.0
    seen = False
    for side, _ in SIDES:
        d = data.get(("map4k", "distro", side))
        if not d:
            return None
        for fn, v in d["funcs"].items():
            # "name.part.0 [module]": gcc's clones count as the function
            if fn.split(" ")[0].split(".")[0] in DISTRO_REG_FUNCS:
                total += v
                seen = True
    return total if seen else None


def summary(data):
    """One line per point: the ratios the issue's targets are about."""
    points = [p for p in POINT_NAMES if any(k[0] == p for k in data)]
    if not points:
        return []
    out = ["== Summary: instructions per operation, client + server ==",
           f"{'point':<40} {'RDS ours':>9} {'distro':>9} {'o/d':>6}"
           f" {'guest ours':>11} {'distro':>9} {'o/d':>6}"
           f" {'verbs':>9} {'o/v':>6}"]
    for p in points:
        ro = both_sides(data, p, "ours", "rds")
        rd = both_sides(data, p, "distro", "rds")
        go = both_sides(data, p, "ours", "total")
        gd = both_sides(data, p, "distro", "total")
        gv = both_sides(data, p, "verbs", "total")
        if p == "getmr":
            rd, gd = distro_reg(data), None
        out.append(f"{POINT_NAMES[p]:<40} {fmt(ro):>9} {fmt(rd):>9}"
                   f" {ratio(ro, rd):>6} {fmt(go):>11} {fmt(gd):>9}"
                   f" {ratio(go, gd):>6} {fmt(gv):>9} {ratio(go, gv):>6}")
    if "getmr" in points:
        out.append("  getmr's distro column: the RDS instructions its MAP"
                   " cycle spends registering and releasing the key"
                   " (DISTRO_REG_FUNCS in map4k); its RDS_GET_MR fails on"
                   " rxe")
    out.append("  verbs: verbs-floor posting the same frames (no RDS"
               " header, no RDS ACKs); o/v: ours against it")
    out.extend(per_byte(data, points))
    return out


def per_byte(data, points):
    """Instructions per byte of payload of the datagram points, client +
    server: the whole guest and the RDS modules, ours and distro."""
    dgram = [p for p in points if p in POINT_BYTES]
    if not dgram:
        return []

    def pb(v, size):
        return "-" if v is None else f"{v / size:.3f}"

    out = ["", "== Instructions per byte (datagram points), client + server"
           " ==",
           f"{'point':<40} {'guest ours':>11} {'distro':>9}"
           f" {'RDS ours':>9} {'distro':>9}"]
    for p in dgram:
        size = POINT_BYTES[p]
        out.append(f"{POINT_NAMES[p]:<40}"
                   f" {pb(both_sides(data, p, 'ours', 'total'), size):>11}"
                   f" {pb(both_sides(data, p, 'distro', 'total'), size):>9}"
                   f" {pb(both_sides(data, p, 'ours', 'rds'), size):>9}"
                   f" {pb(both_sides(data, p, 'distro', 'rds'), size):>9}")
    for p in dgram:
        if not p.endswith("zc") or p[:-2] not in dgram:
            continue
        for mset in ("ours", "distro"):
            zc = both_sides(data, p, mset, "total")
            cp = both_sides(data, p[:-2], mset, "total")
            if zc is None or cp is None:
                continue
            out.append(f"  {mset}, whole guest, {POINT_NAMES[p][:-14]}"
                       f" MSG_ZEROCOPY / copied: {ratio(zc, cp)}")
    if any(p in dgram for p in ("dgram64kzc", "dgram1mzc")):
        out.append("  the distribution refuses MSG_ZEROCOPY over IB: no"
                   " distro figure for those MSG_ZEROCOPY points")
    return out


def floor_lines(data, point):
    """The raw-verbs floor's classes, both sides, and ours against it."""
    if not any(k[0] == point and k[1] == "verbs" for k in data):
        return []
    row = f"{'raw verbs floor':<16}"
    for cls in CLASSES + ("total",):
        row += f" {CLASS_NAMES.get(cls, 'whole')} {fmt(both_sides(data, point, 'verbs', cls))};"
    go = both_sides(data, point, "ours", "total")
    gd = both_sides(data, point, "distro", "total")
    gv = both_sides(data, point, "verbs", "total")
    return [row.rstrip(";"),
            f"{'':<16} whole guest ours/floor {ratio(go, gv)},"
            f" distro/floor {ratio(gd, gv)}"]


def report(res):
    data, notes = analyse(res)
    lines = []
    csv = ["point,side,class,ours,distro,ours_over_distro,"
           "ours_spread_pct,distro_spread_pct"]
    points = sorted({k[0] for k in data},
                    key=lambda p: list(POINT_NAMES).index(p)
                    if p in POINT_NAMES else 99)
    if not points:
        lines.append("profile: no complete measurement")
    lines.extend(summary(data))
    for point in points:
        lines.append("")
        lines.append(f"== {POINT_NAMES.get(point, point)}: guest "
                     "instructions per operation ==")
        hdr = f"{'class':<16}"
        for side in ("client", "server", "both"):
            hdr += f" {side + ' ours':>12} {side + ' distro':>13} {'o/d':>6}"
        lines.append(hdr)
        worst = 0.0
        for cls in CLASSES + ("total",):
            row = f"{CLASS_NAMES.get(cls, 'whole guest'):<16}"
            both = {}
            for mset in ("ours", "distro"):
                vals = [mean_of(data.get((point, mset, s)), cls)
                        for s, _ in SIDES]
                both[mset] = None if None in vals else sum(vals)
            for side in ("client", "server"):
                o = mean_of(data.get((point, "ours", side)), cls)
                d = mean_of(data.get((point, "distro", side)), cls)
                row += f" {fmt(o):>12} {fmt(d):>13} {ratio(o, d):>6}"
                so = spread([r[cls] for r in data.get(
                    (point, "ours", side), {"reps": []})["reps"]])
                sd = spread([r[cls] for r in data.get(
                    (point, "distro", side), {"reps": []})["reps"]])
                csv.append(",".join([
                    point, side, cls,
                    "" if o is None else f"{o:.1f}",
                    "" if d is None else f"{d:.1f}",
                    "" if o is None or d is None or d <= 0
                    else f"{o / d:.4f}",
                    "" if so is None else f"{so:.2f}",
                    "" if sd is None else f"{sd:.2f}"]))
            row += (f" {fmt(both['ours']):>12} {fmt(both['distro']):>13}"
                    f" {ratio(both['ours'], both['distro']):>6}")
            lines.append(row)
        lines.extend(floor_lines(data, point))
        for fn, what in ENTRIES:
            row = f"{what:<16}"
            for side in ("client", "server"):
                o = mean_of(data.get((point, "ours", side)), "calls:" + fn)
                d = mean_of(data.get((point, "distro", side)), "calls:" + fn)
                row += f" {'-' if o is None else f'{o:.2f}':>12}"
                row += f" {'-' if d is None else f'{d:.2f}':>13}"
                row += f" {ratio(o, d):>6}"
            lines.append(row)
        lines.append("")
        lines.append("Repetitions (per operation; spread: largest distance "
                     "from their mean):")
        for mset in ("ours", "distro", "verbs"):
            for side, _ in SIDES:
                d = data.get((point, mset, side))
                if not d:
                    continue
                for cls in ("rds", "total", "calls:rxe_xmit_packet"):
                    vals = [r[cls] for r in d["reps"]]
                    s = spread(vals)
                    if s is not None and cls == "total":
                        worst = max(worst, s)
                    lines.append(
                        f"  {mset:<6} {side:<6} {CLASS_NAMES.get(cls, 'whole guest' if cls == 'total' else 'frames sent'):<14}"
                        f" {' '.join(fmt(v) if v >= 100 else f'{v:.2f}' for v in vals):<30}"
                        f" spread {'-' if s is None else f'{s:.2f} %'}")
                for rep, n1, t1, n2, t2 in d["raw"]:
                    lines.append(f"    rep {rep}: window of {n1} ops "
                                 f"{fmt(t1)} insns, of {n2} ops {fmt(t2)}")
        lines.append(f"  whole guest, worst spread: {worst:.2f} %"
                     f" ({'within' if worst <= 2 else 'over'} 2 %)")
        for mset in ("ours", "distro"):
            funcs = collections.Counter()
            per_side = {}
            for side, _ in SIDES:
                d = data.get((point, mset, side))
                if d:
                    per_side[side] = d["funcs"]
                    funcs.update(d["funcs"])
            total = sum(v for v in funcs.values())
            if total <= 0:
                continue
            lines.append("")
            lines.append(f"Top 30 functions of the RDS modules, {mset} "
                         f"(both sides: {fmt(total)} instructions per "
                         "operation)")
            lines.append(f"  {'function':<44} {'client':>8} {'server':>8}"
                         f" {'both':>8} {'share':>7}")
            for fn, v in funcs.most_common(30):
                lines.append(
                    f"  {fn:<44} {fmt(per_side.get('client', {}).get(fn, 0)):>8}"
                    f" {fmt(per_side.get('server', {}).get(fn, 0)):>8}"
                    f" {fmt(v):>8} {v / total * 100:>6.1f}%")
    if notes:
        lines.append("")
        lines.extend(f"note: {n}" for n in notes)
    text = "\n".join(lines).lstrip("\n") + "\n"
    with open(os.path.join(res, "profile.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(res, "profile.csv"), "w") as f:
        f.write("\n".join(csv) + "\n")
    sys.stdout.write(text)
    return bool(points)


def compare(res1, res2):
    """Each class per operation in two runs, and how far apart they are."""
    d1, n1 = analyse(res1)
    d2, n2 = analyse(res2)
    rows = ["point   set    side   class              run 1      run 2"
            "    2/1"]
    worst = {}
    for key in sorted(set(d1) & set(d2)):
        point, mset, side = key
        for cls in CLASSES + ("total", "calls:rxe_xmit_packet"):
            a, b = mean_of(d1[key], cls), mean_of(d2[key], cls)
            name = CLASS_NAMES.get(cls, "whole guest" if cls == "total"
                                   else "frames sent")
            rel = "-" if not a else f"{b / a:.3f}"
            rows.append(f"{point:<7} {mset:<6} {side:<6} {name:<16}"
                        f" {fmt(a) if a >= 100 else f'{a:.2f}':>8}"
                        f" {fmt(b) if b >= 100 else f'{b:.2f}':>10} {rel:>6}")
            if a and cls in ("rds", "total"):
                w = worst.setdefault((point, mset, cls), 0.0)
                worst[(point, mset, cls)] = max(w, abs(b / a - 1) * 100)
    rows.append("")
    for (point, mset, cls), w in sorted(worst.items()):
        rows.append(f"{point} {mset} {CLASS_NAMES.get(cls, 'whole guest')}:"
                    f" runs {w:.2f} % apart at most"
                    f" ({'within' if w <= 2 else 'over'} 2 %)")
    rows.extend(f"note: {n}" for n in n1 + n2)
    print("\n".join(rows))
    return bool(worst)


def self_test():
    """A synthetic run: two guests, two module sets, two repetitions."""
    import tempfile

    res = tempfile.mkdtemp(prefix="profile-selftest-")
    ktext = 0xffffffff81000000
    mods = {"ours": ("rds_zc", 0xffffffffc0100000),
            "distro": ("rds", 0xffffffffc0200000),
            "verbs": ("rds_zc", 0xffffffffc0100000)}
    rxe = 0xffffffffc0300000
    # per operation: RDS 1000 (ours) or 2000 (distro) insns, rxe 500,
    # kernel 3000, user 200; fixed per window 100000 in the kernel
    per_op = {"ours": 1000, "distro": 2000, "verbs": 0}
    for node in (1, 2):
        g = os.path.join(res, "vm", f"guest{node}")
        dump = [f"# insn-profile\n"]
        wins = []
        k = 0
        for mset in ("ours", "distro", "verbs"):
            name, base = mods[mset]
            sd = os.path.join(g, f"syms-{mset}")
            os.makedirs(sd)
            with open(os.path.join(sd, "kallsyms.txt"), "w") as f:
                f.write(f"{ktext:016x} T _stext\n")
                f.write(f"{ktext + 0x1000:016x} T schedule\n")
                f.write(f"{base:016x} t {name}_sendmsg\t[{name}]\n")
                f.write(f"{base + 0x800:016x} t {name}_recv\t[{name}]\n")
                f.write(f"{rxe:016x} t rxe_requester\t[rdma_rxe]\n")
            with open(os.path.join(sd, "modules.txt"), "w") as f:
                f.write(f"{name} {base:#x} 8192\nrdma_rxe {rxe:#x} 4096\n")
            for rep, point in ((1, "rtt"), (2, "rtt"), (1, "dgram1m"),
                               (2, "dgram1m"), (1, "dgram1mzc"),
                               (2, "dgram1mzc")):
                if point == "dgram1mzc" and mset != "ours":
                    continue
                for ops in (100, 500):
                    k += 1
                    wins.append(f"{k} {mset} {point} {rep} {ops}\n")
                    dump.append(f"# window {k}\n")
                    dump.append(f"{base + 0x10:x} 10 {ops * per_op[mset] // 20}\n")
                    dump.append(f"{base + 0x810:x} 10 {ops * per_op[mset] // 20}\n")
                    dump.append(f"{rxe + 0x10:x} 5 {ops * 100}\n")
                    dump.append(f"{ktext + 0x1010:x} 30 {ops * 100 + 3333 + rep}\n")
                    dump.append("7f0000001000 20 %d\n" % (ops * 10))
                    dump.append(f"# end {k} blocks 5 insns 0 closed\n")
        with open(os.path.join(g, "windows.txt"), "w") as f:
            f.writelines(wins)
        with open(os.path.join(res, f"insn-{node}.txt"), "w") as f:
            f.writelines(dump)
    data, notes = analyse(res)
    assert not notes, notes
    for mset in ("ours", "distro"):
        for side, _ in SIDES:
            r = data[("rtt", mset, side)]["reps"]
            assert len(r) == 2, r
            for rep in r:
                assert rep["rds"] == per_op[mset], rep
                assert rep["rxe"] == 500 and rep["kernel"] == 3000, rep
                assert rep["user"] == 200, rep
            funcs = data[("rtt", mset, side)]["funcs"]
            name = mods[mset][0]
            assert funcs[f"{name}_sendmsg [{name}]"] == per_op[mset] / 2, funcs
    assert report(res)
    with open(os.path.join(res, "profile.txt")) as f:
        text = f.read()
    assert "0.50x" in text, text
    # whole guest per side: ours 4700, the floor 3700 (no RDS)
    assert "1.27x" in text and "raw verbs floor" in text, text
    # per byte of a 1 MiB datagram, both sides: ours 9400, distro 11400
    # instructions; RDS 2000 and 4000
    flat = " ".join(text.split())
    for want in ("1 MiB datagram, one sender 0.009 0.011 0.002 0.004",
                 "1 MiB datagram, MSG_ZEROCOPY 0.009 - 0.002 -",
                 "MSG_ZEROCOPY / copied: 1.00x"):
        assert want in flat, (want, text)
    shutil.rmtree(res)
    print("profile-report: self-test passed")
    return True


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return 0 if self_test() else 1
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        return 0 if compare(sys.argv[2], sys.argv[3]) else 1
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.stderr.write(__doc__)
        return 2
    return 0 if report(sys.argv[1]) else 1


if __name__ == "__main__":
    sys.exit(main())
