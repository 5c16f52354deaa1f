#!/usr/bin/env python3
"""Split each gathered flush cycle of a cycle-trace ring into its stages.

Events (kind: t0..t3, CLOCK_MONOTONIC ns):
  1 WAL flush (emulator): start, end
  2 woken leader's handler: its arrival, the closing arrival, entry, exit
  3 gathered arrival at PRE_COMMIT: now
  4 closing arrival signals the leader: now
  5 gathered commit ends: now
A cycle runs from one WAL flush's end to the next one's end; only cycles
with exactly one wake-up and one woken leader are counted.
"""
import bisect
import statistics
import struct
import sys

STAGES = [
    ("A", "flush end -> first arrival (commit returns, client round trip, next transaction)"),
    ("B", "first arrival -> closing arrival (the rest of the group arrives)"),
    ("C", "closing arrival's signal -> leader's handler (walpilot: signal delivery)"),
    ("D", "leader's handler waits for the closing commit record (walpilot)"),
    ("E", "handler returns -> flush starts (PostgreSQL: sleep ends, WAL write)"),
    ("F", "the flush (emulated device)"),
]


def main(path):
    with open(path, "rb") as f:
        _, idx = struct.unpack("<QQ", f.read(16))
        idx = min(idx, 1 << 21)
        ev = [struct.unpack("<4qii", f.read(40)) for _ in range(idx)]
    flushes = sorted((e[0], e[1]) for e in ev if e[4] == 1)
    arrivals = sorted(e[0] for e in ev if e[4] == 3)
    signals = sorted(e[0] for e in ev if e[4] == 4)
    woken = sorted((e[2], e[3]) for e in ev if e[4] == 2)
    st = {k: [] for k, _ in STAGES}
    cycles, members = [], []
    for i in range(1, len(flushes)):
        prev_end = flushes[i - 1][1]
        start, end = flushes[i]
        s0, s1 = bisect.bisect_left(signals, prev_end), bisect.bisect_left(signals, start)
        w0, w1 = bisect.bisect_left(woken, (prev_end,)), bisect.bisect_left(woken, (start,))
        a0, a1 = bisect.bisect_left(arrivals, prev_end), bisect.bisect_left(arrivals, start)
        if s1 - s0 != 1 or w1 - w0 != 1 or a1 == a0:
            continue
        sig = signals[s0]
        h_in, h_out = woken[w0]
        first = arrivals[a0]
        for k, v in (("A", first - prev_end), ("B", sig - first), ("C", h_in - sig),
                     ("D", h_out - h_in), ("E", start - h_out), ("F", end - start)):
            st[k].append(v / 1e3)
        cycles.append((end - prev_end) / 1e3)
        members.append(a1 - a0)
    if not cycles:
        print("no gathered cycle in the trace (was gather mode on?)")
        return 1
    cyc = statistics.mean(cycles)
    print(f"{len(cycles)} gathered cycles of {len(flushes)} WAL flushes; "
          f"mean {statistics.mean(members):.1f} arrivals per cycle")
    print(f"  {'stage':5} {'mean us':>8} {'p10':>7} {'p50':>7} {'p90':>7} {'share':>6}")
    for k, what in STAGES:
        v = sorted(st[k])
        n = len(v)
        print(f"  {k:5} {statistics.mean(v):8.1f} {v[n // 10]:7.1f} {v[n // 2]:7.1f} "
              f"{v[9 * n // 10]:7.1f} {statistics.mean(v) / cyc:6.3f}  {what}")
    print(f"  cycle {cyc:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
