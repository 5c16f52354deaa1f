"""commit-delay (after the pgsql-hackers thread "Doc patch making firm recommendation
for setting the value of commit_delay", November 2012): static commit_delay/commit_siblings sweep per storage profile.

Reports per (profile, workload, clients): PostgreSQL defaults, the 1/2-flush-time
rule (commit_delay = F/2, siblings 5), the best static setting (oracle), and the
flush-cycle limit L(N) = N / (F + N*c), F the measured WAL flush time of the
profile, c the machine time per transaction (1 / tps with synchronous_commit=off).
"""
import math
import os
import shutil
import subprocess
from bench import Scenario, Config, median, COLORS
from _common import profile, INSERT, TPCB

BASE_CONF = ["shared_buffers = 256MB", "checkpoint_timeout = 30min", "max_wal_size = 8GB",
             "min_wal_size = 1GB", "wal_init_zero = off"]


def build(opts):
    quick = opts.quick
    names = (opts.profiles.split(";") if opts.profiles and ";" in opts.profiles
             else opts.profiles.split(",") if opts.profiles
             else (["hdd", "ssd"] if quick else ["hdd", "ssd", "cloud", "real"]))
    configs = []
    for pname in names:
        label, spec, F = profile(pname)
        env = {"WALPILOT_STORAGE": spec}
        configs.append(Config("d0/s5", ["commit_delay = 0", "commit_siblings = 5"], env, group=label,
                              baseline=True, meta={"delay": 0, "siblings": 5, "F_nominal_us": F}))
        fr = [1 / 8, 1 / 2] if quick else [1 / 8, 1 / 4, 1 / 2, 1, 2]
        sweep = [(f, 1) for f in fr] + [(1 / 2, 5)] + ([] if quick else [(1 / 8, 5)])
        for f, s in sweep:
            d = max(10, int(round(F * f / 10.0)) * 10)
            configs.append(Config(f"d{d}/s{s}", [f"commit_delay = {d}", f"commit_siblings = {s}"], env,
                                  group=label, meta={"delay": d, "siblings": s, "frac": f,
                                                     "rule": (f == 1 / 2 and s == 5), "F_nominal_us": F}))
    # machine time per transaction c: synchronous commit on an instant device
    # (flush_us=0, real_sync=0: fdatasync costs nothing), many clients
    ncal = 8 if quick else 16
    configs.append(Config("instant-flush", [], {"WALPILOT_STORAGE": "flush_us=0,bw_mbps=0,real_sync=0"},
                          group="calib-c", baseline=True, clients=[ncal], meta={"calib": True}))
    sc = Scenario(
        name="commit-delay", configs=configs,
        workloads=[INSERT] if quick else [INSERT, TPCB],
        clients=[8, 32] if quick else [1, 4, 8, 16, 32, 64],
        reps=2 if quick else 3, duration=5 if quick else 8, scale=10 if quick else 20,
        base_conf=BASE_CONF, analyze=analyze,
        plot_filter=lambda g, w, n: n in (8, 32) or g == "calib-c",
        notes="# configs dD/sS = commit_delay D us, commit_siblings S; d0/s5 = PostgreSQL defaults (baseline)")
    return sc


def analyze(ctx, rows, summ):
    out = ["\n## commit-delay analysis: defaults vs 1/2-flush rule vs best static (oracle) vs flush-cycle limit"]
    cal = {s["workload"]: s["tps_median"] for s in summ if s["group"] == "calib-c"}
    c_ms = {w: 1000.0 / t for w, t in cal.items() if t}
    out.append("# c (ms per transaction = 1/tps on an instant-flush device, synchronous commit): " +
               ", ".join(f"{w} {v:.3f}" for w, v in c_ms.items()))
    accept = {}
    Ls = {}
    groups = sorted({s["group"] for s in summ if s["group"] != "calib-c"},
                    key=lambda g: [s["group"] for s in summ].index(g))
    for g in groups:
        gs = [s for s in summ if s["group"] == g]
        fl = [float(r["wal_flush_avg_ms"]) for r in rows if r["group"] == g and r["config"] == "d0/s5"
              and r.get("wal_flush_avg_ms") not in ("", None)]
        F = median(fl) if fl else float("nan")
        out.append(f"\n### {g}: measured WAL flush F = {F:.3f} ms (median over default-config runs)")
        out.append(f"  {'workload':<8} {'N':>3} {'defaults':>9} {'rule F/2,s5':>17} {'oracle (best static)':>28}"
                   f" {'L(N)':>7} {'dflt/L':>6} {'rule/L':>6} {'best/L':>6}")
        for w in sorted({s["workload"] for s in gs}):
            for n in sorted({s["clients"] for s in gs if s["workload"] == w}):
                cell = [s for s in gs if s["workload"] == w and s["clients"] == n]
                base = next((s for s in cell if s["config"] == "d0/s5"), None)
                rule = next((s for s in cell if '"rule": true' in s["meta"]), None)
                best = max(cell, key=lambda s: s["tps_median"])
                bestnz = max((s for s in cell if s["config"] != "d0/s5"), key=lambda s: s["tps_median"], default=None)
                c = c_ms.get(w, float("nan"))
                L = n / (F + n * c) * 1000 if not math.isnan(F) and not math.isnan(c) else float("nan")
                bt = base["tps_median"] if base else float("nan")
                rt = rule["tps_median"] if rule else float("nan")
                out.append(f"  {w:<8} {n:>3} {bt:>9.0f} {rt:>9.0f} (x{rt / bt:4.2f}) "
                           f"{best['config']:>12} {best['tps_median']:>6.0f} (x{best['tps_median'] / bt:4.2f})"
                           f" {L:>7.0f} {bt / L:>6.2f} {rt / L:>6.2f} {best['tps_median'] / L:>6.2f}")
                Ls.setdefault((g, w), {})[n] = L
                if bestnz and base:
                    accept.setdefault((g, w), []).append((n, bestnz["tps_median"] / bt, bestnz["config"],
                                                          bestnz["tps_min"] / base["tps_max"]))
    plot_vs_clients(ctx, summ, Ls)
    out.append("\n## acceptance")
    for (g, w), lst in accept.items():
        if not g.startswith(("hdd", "ssd")) or w != "insert":
            continue
        if g.startswith("hdd"):
            hi = [x for x in lst if x[0] >= 8]
            if hi:
                n, r, cfg, worst = max(hi, key=lambda x: x[1])
                ok = r >= 1.2
                out.append(f"  {g} insert: best nonzero delay vs defaults at N>=8: x{r:.2f} ({cfg}, N={n}; "
                           f"min/max ratio x{worst:.2f}) -> {'PASS' if ok else 'FAIL'} (need >= 1.2)")
        else:
            n, r, cfg, worst = max(lst, key=lambda x: x[1])
            # "no gain": below the +-10 % run-to-run noise, or ranges overlap
            ok = r < 1.10 or worst <= 1.0
            out.append(f"  {g} insert: best nonzero delay vs defaults over all N: x{r:.2f} ({cfg}, N={n}; "
                       f"its min / defaults' max x{worst:.2f}) -> "
                       f"{'PASS (no gain beyond noise)' if ok else 'FAIL (significant gain)'}"
                       " (criterion: best < x1.10 or min-max ranges overlap)")
    return "\n".join(out)


def plot_vs_clients(ctx, summ, Ls):
    """tps (median, min-max bars) vs clients per configuration, with L(N), one PNG per profile x workload."""
    if not shutil.which("gnuplot"):
        return
    pdir = os.path.join(ctx.out, "plots")
    os.makedirs(pdir, exist_ok=True)
    for (g, w), lmap in Ls.items():
        cfgs = []
        for s in summ:
            if s["group"] == g and s["workload"] == w and s["config"] not in cfgs:
                cfgs.append(s["config"])
        plots = []
        for i, c in enumerate(cfgs):
            fn = os.path.join(pdir, f"{g}_{w}_{c.replace('/', '_')}.dat")
            with open(fn, "w") as f:
                for s in sorted((s for s in summ if s["group"] == g and s["workload"] == w and s["config"] == c),
                                key=lambda s: s["clients"]):
                    f.write(f"{s['clients']} {s['tps_median']} {s['tps_min']} {s['tps_max']}\n")
            plots.append(f"'{fn}' using 1:2:3:4 with yerrorlines lw 1.5 lc rgb '{COLORS[i % len(COLORS)]}' "
                         f"dt {1 + i // len(COLORS)} title '{c}'")
        lf = os.path.join(pdir, f"{g}_{w}_L.dat")
        with open(lf, "w") as f:
            for n in sorted(lmap):
                if not math.isnan(lmap[n]):
                    f.write(f"{n} {lmap[n]}\n")
        plots.append(f"'{lf}' using 1:2 with lines lw 2 lc rgb '#000000' dt 2 title 'L(N) flush-cycle limit'")
        gp = ["set terminal pngcairo size 1000,600 font ',9'", "set termoption noenhanced",
              f"set output '{os.path.join(pdir, f'{g}_{w}_tps_vs_clients.png')}'",
              f"set title 'commit-delay: {g} {w}: tps vs clients (median, min-max)'",
              "set logscale xy", "set xlabel 'clients'", "set ylabel 'tps'", "set key outside right", "set grid",
              "plot " + ", ".join(plots)]
        subprocess.run(["gnuplot"], input="\n".join(gp), text=True, capture_output=True)
