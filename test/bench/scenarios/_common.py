"""Shared pieces of the bundled scenarios."""
from bench import Workload, median

# storage profiles: name -> (WALPILOT_STORAGE value, nominal flush time in us)
PROFILES = {
    "hdd": ("hdd", 8000),
    "ssd": ("ssd", 200),
    "cloud": ("cloud", 1500),
    "real": ("real", 200),   # shim loaded for measurement only; real disk flushes
}


def profile(name):
    """'hdd', 'hdd,bw_mbps=25' or 'flush_us=3000,...' -> (label, WALPILOT_STORAGE, nominal flush us)"""
    if name in PROFILES:
        spec, f = PROFILES[name]
        return name, spec, f
    parts = dict(p.split("=", 1) for p in name.split(",") if "=" in p)
    base = [p for p in name.split(",") if "=" not in p]
    f = PROFILES[base[0]][1] if base and base[0] in PROFILES else 0
    if "flush_us" in parts:
        f = float(parts["flush_us"]) + float(parts.get("jitter_us", 0)) / 2
    label = name.replace(",", "_").replace("=", "")
    return label, name, f


# insert-only one-row transactions (pgbench-tools insert.sql, as in the
# pgsql-hackers thread on commit_delay, November 2012)
INSERT = Workload("insert", [], script="""\\set nbranches 1 * :scale
\\set ntellers 10 * :scale
\\set naccounts 100000 * :scale
\\set aid random(1, :naccounts)
\\set bid random(1, :nbranches)
\\set tid random(1, :ntellers)
\\set delta random(-5000, 5000)
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
""")
TPCB = Workload("tpcb", ["-b", "tpcb-like"])
SELECT_ONLY = Workload("select-only", ["-b", "select-only"])
TPCB_ASYNC = Workload("tpcb-async", ["-b", "tpcb-like"], conf=["synchronous_commit = off"])


def spread(vals, nd=2):
    """median [min-max] of the non-empty values, as text ("-" if none)."""
    v = [float(x) for x in vals if x not in ("", None)]
    if not v:
        return "-"
    f = f"{{:.{nd}f}}"
    if len(v) == 1:
        return f.format(v[0])
    return f"{f.format(median(v))} [{f.format(min(v))}-{f.format(max(v))}]"
