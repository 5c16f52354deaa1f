"""Shared pieces of the bundled scenarios."""
import json
import time

from bench import Workload, median

# storage profiles: name -> (WALPILOT_STORAGE value, nominal flush time in us)
PROFILES = {
    "hdd": ("hdd", 8000),
    "ssd": ("ssd", 200),
    "cloud": ("cloud", 1500),
    # token bucket: 1 ms flush, 500 requests/s after a burst of 1000; the
    # nominal F is the flush cost (what a probe sees), not the 2 ms a flush
    # cycle takes once the cap binds
    "tbucket": ("tbucket", 1000),
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



def decision_evidence(d):
    """a walpilot.decisions row's evidence as a dict ({} when it has none)"""
    ev = d.get("evidence")
    if isinstance(ev, str):
        try:
            ev = json.loads(ev)
        except ValueError:
            ev = None
    return ev if isinstance(ev, dict) else {}


def numbers(rows, k):
    """the non-empty values of column k of rows, as floats"""
    return [float(r[k]) for r in rows if r.get(k) not in ("", None)]


def spread(vals, nd=2):
    """median [min-max] of the non-empty values, as text ("-" if none)."""
    v = [float(x) for x in vals if x not in ("", None)]
    if not v:
        return "-"
    f = f"{{:.{nd}f}}"
    if len(v) == 1:
        return f.format(v[0])
    return f"{f.format(median(v))} [{f.format(min(v))}-{f.format(max(v))}]"


# walpilot loaded in observe mode: what a fixed configuration's checkpoints
# would have scored in the checkpoint_flush_after pilot
OBSERVE_CONF = ["shared_preload_libraries = 'walpilot'", "walpilot.mode = 'observe'"]
OBSERVE_SQL = ["CREATE EXTENSION IF NOT EXISTS walpilot"]

# per spread checkpoint started in the run: stalled seconds, commit p99
# during against the minute before, the pilot's impact (one stalled second
# per doubled p99) and the impact linear in the ratio (as the pilot scored
# checkpoints before the log2)
_PILOT_VIEW_SQL = """
WITH c AS (
  SELECT stall_seconds AS s, greatest(commit_p99_us_during / nullif(commit_p99_us_outside, 0), 1) AS r,
         commit_p50_us_during AS p50, commit_p99_us_during AS p99
    FROM walpilot.checkpoints
   WHERE started_at >= '{t0}' AND reason IN ('time', 'wal') AND commits >= 50)
SELECT count(*), avg(s), avg(coalesce(r, 1)), avg(1 + s + ln(coalesce(r, 1)) / ln(2)), avg(s + coalesce(r, 1)),
       avg(p50) / 1000, avg(p99) / 1000
  FROM c"""
_PILOT_VIEW_KEYS = ("pv_ckpts", "pv_stall_s", "pv_p99_ratio", "pv_impact", "pv_impact_linear",
                    "pv_p50_ms", "pv_p99_ms")


def server_now(cl):
    """the server's now() when walpilot is installed there, else ''"""
    p = cl.psql("SELECT CASE WHEN to_regclass('walpilot.checkpoints') IS NOT NULL THEN now() END", check=False)
    return p.stdout.strip() if p.returncode == 0 else ""


def pilot_view(cl, t0):
    """pv_* figures (per checkpoint means) of the spread checkpoints that
    started since t0; {} without walpilot or checkpoints"""
    if not t0:
        return {}
    time.sleep(5)               # commit columns come ~2 s after a checkpoint's end
    p = cl.psql(_PILOT_VIEW_SQL.format(t0=t0), check=False)
    try:
        f = p.stdout.strip().split("|")
        if int(f[0]) == 0:
            return {}
        return {k: round(float(x), 3) for k, x in zip(_PILOT_VIEW_KEYS, f) if x != ""}
    except (ValueError, IndexError):
        return {}


def pilot_view_table(rows, summ):
    """the pv_* figures per configuration, median [min-max] over repetitions"""
    if not any(r.get("pv_ckpts") for r in rows):
        return ""
    out = ["\n## what the pilot sees (walpilot.checkpoints: spread checkpoints started in each run, their mean; "
           "median [min-max] over repetitions; impact = 1 + stalled s + log2 p99 ratio, lower better; "
           "linear = stalled s + p99 ratio)",
           f"  {'profile':<36} {'config':<18} {'ckpts':>5} {'stalled s':>18} {'p99 ratio':>22} {'impact':>20} "
           f"{'linear':>22} {'p50 ms':>16} {'p99 ms':>18}"]
    for s in summ:
        rs = [r for r in rows if r["group"] == s["group"] and r["config"] == s["config"] and r.get("pv_ckpts")]
        if not rs:
            continue

        def w(k):
            return numbers(rs, k)
        out.append(f"  {s['group']:<36} {s['config']:<18} {sum(w('pv_ckpts')):>5.0f} {spread(w('pv_stall_s'), 1):>18} "
                   f"{spread(w('pv_p99_ratio'), 2):>22} {spread(w('pv_impact'), 2):>20} "
                   f"{spread(w('pv_impact_linear'), 2):>22} {spread(w('pv_p50_ms'), 1):>16} {spread(w('pv_p99_ms'), 0):>18}")
    return "\n".join(out)
