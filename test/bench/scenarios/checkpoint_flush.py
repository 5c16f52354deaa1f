"""checkpoint-flush (after the pgsql-hackers thread "checkpointer continuous flushing", 2015): throttled pgbench -R/-L with frequent checkpoints on an
emulated HDD; checkpoint_flush_after 0 vs 256kB vs 2MB.

Without early flushing a checkpoint leaves ~(pages written) x 8 kB dirty in the
(emulated) page cache; the checkpoint's fsync then occupies the device for
bytes / bandwidth and every WAL flush waits behind it.  sync_file_range every
checkpoint_flush_after bytes spreads that writeback out.  The device bandwidth
(default: data pages 10 MB/s — random 8 kB writes on a disk are far below its
sequential rate — and WAL 150 MB/s, sequential) and the rate set the size of the stall: stall ~ checkpoint MB / bw.

--set tune=1 adds walpilot's checkpoint_flush_after pilot (walpilot.mode = tune,
commit_delay pilot off) beside the fixed values, on a freshly restarted server
per run; its late % and stalled-second % are also reported after it learned
(--set learned_from=S seconds, default 180), from the per-second series, and
the checkpoint at which it made its last decision.  Runs should be long enough
for ~10 checkpoints (--set duration=330).
"""
import json
import os
import re
import csv
import bench
from bench import Scenario, Config, Workload, median
from _common import profile

BASE_CONF = ["shared_buffers = 1GB", "checkpoint_timeout = 30s", "checkpoint_completion_target = 0.9",
             "max_wal_size = 4GB", "min_wal_size = 1GB", "wal_init_zero = off",
             "bgwriter_flush_after = 512kB", "backend_flush_after = 0"]


def build(opts):
    quick = opts.quick
    o = opts.options
    names = opts.profiles.split(";") if opts.profiles else ["hdd,bw_mbps=10,wal_bw_mbps=150"]
    rate = float(o.get("rate", 100))
    limit = float(o.get("limit_ms", 100))
    values = o.get("flush_values", "0,256kB,2MB").split(",")
    configs = []
    for pname in names:
        label, spec, F = profile(pname)
        env = {"WALPILOT_STORAGE": spec}
        for v in values:
            base = v == values[0]
            configs.append(Config(f"flush_after={v}", [f"checkpoint_flush_after = {v}"], env, group=label,
                                  baseline=base, meta={"checkpoint_flush_after": v}))
        if o.get("tune"):
            configs.append(Config("tune", ["shared_preload_libraries = 'walpilot'", "walpilot.mode = 'tune'",
                                           "walpilot.tune_commit_delay = off"], env, group=label,
                                  setup_sql=["CREATE EXTENSION IF NOT EXISTS walpilot"],
                                  meta={"tune": True}))
    wl = Workload(f"simple-update-R{rate:g}", ["-b", "simple-update"], rate=rate, latency_limit_ms=limit)
    if o.get("tune"):
        _wrap_tune_runs(float(o.get("learned_from", 180)))
    return Scenario(
        name="checkpoint-flush", configs=configs, workloads=[wl], clients=[4],
        reps=1 if quick else 3, duration=int(o.get("duration", 65 if quick else 120)), scale=20,
        base_conf=BASE_CONF,
        plot_events=True, analyze=analyze,
        notes=f"# pgbench -M prepared -b simple-update -c 4 -j 2 -R {rate:g} -L {limit:g}; checkpoint_timeout=30s "
              "(checkpoints complete ~27 s after start: runs of 65 s see 1, of 120 s see 3)\n"
              "# late % = (skipped + latency-from-schedule > -L) / all; stall s % = seconds below 10 % of the "
              "run's median per-second tps")


def _wrap_tune_runs(learned_from):
    """Wrap bench.do_run (additively): restart the server before a tune run
    (the pilot learns from scratch), store its walpilot.decisions, and add
    after-learning figures from the per-second series to every row."""
    orig = bench.do_run
    if getattr(orig, "_flush_wrapped", False):
        return

    def do_run(ctx, cfg, wl, clients, rep, order):
        cl = ctx.cluster_of[id(cfg)]
        if cfg.meta.get("tune"):
            cl.stop()
            cl.start(emulated=cl.emulated)
        t_start = cl.psql("SELECT now()").stdout.strip()
        row = orig(ctx, cfg, wl, clients, rep, order)
        ser = []
        try:
            with open(os.path.join(ctx.out, "series", row["series"] + ".csv")) as f:
                ser = [r for r in csv.DictReader(f)]
        except OSError:
            pass
        w = ser[int(learned_from):]
        if w:
            tps = [float(r["tps"]) for r in w]
            med = median(tps) if tps else 0
            skipped = sum(float(r["skipped"]) for r in w)
            row["learned_stall_pct"] = round(100.0 * sum(1 for x in tps if x < 0.1 * med) / len(tps), 2)
            row["learned_skip_pct"] = round(100.0 * skipped / max(1.0, skipped + sum(tps)), 3)
        if cfg.meta.get("tune"):
            p = cl.psql("SELECT coalesce(json_agg(d ORDER BY d.t), '[]') FROM "
                        "(SELECT extract(epoch FROM decided_at)::float8 AS t, old_value, new_value, reason, "
                        "outcome FROM walpilot.decisions WHERE setting = 'checkpoint_flush_after' "
                        f"AND decided_at >= '{t_start}') d", check=False)
            with open(os.path.join(ctx.out, "series", row["series"] + ".decisions"), "w") as f:
                f.write(p.stdout.strip() or p.stderr)
            q = cl.psql("SELECT count(*) FROM walpilot.checkpoints WHERE started_at >= "
                        f"'{t_start}' AND started_at <= coalesce((SELECT max(decided_at) FROM walpilot.decisions "
                        f"WHERE setting = 'checkpoint_flush_after' AND decided_at >= '{t_start}'), now())",
                        check=False)
            row["ckpts_to_last_decision"] = q.stdout.strip()
            r = cl.psql("SELECT string_agg(flush_after_kb::text, ' ' ORDER BY started_at) FROM walpilot.checkpoints "
                        f"WHERE started_at >= '{t_start}'", check=False)
            row["flush_kb_by_ckpt"] = r.stdout.strip()
        return row
    do_run._flush_wrapped = True
    bench.do_run = do_run


def analyze(ctx, rows, summ):
    out = ["\n## checkpoint-flush: stalls vs checkpoint_flush_after (medians over repetitions)",
           f"  {'profile':<30} {'config':<20} {'tps':>6} {'late %':>7} {'stall s %':>9} {'p99 ms':>8} "
           f"{'max lat ms':>10} {'WAL flush max ms':>16} {'ckpt MB':>8} {'MB/bw s':>8} {'ckpts':>5}"]
    res = {}
    for s in summ:
        rs = [r for r in rows if r["group"] == s["group"] and r["config"] == s["config"]]
        def m(k):
            v = [float(r[k]) for r in rs if r.get(k) not in ("", None)]
            return median(v) if v else float("nan")
        mbw = re.search(r"bw_mbps([\d.]+)", s["group"])
        bw = float(mbw.group(1)) if mbw else 150.0
        ck = m("ckpt_mb")
        out.append(f"  {s['group']:<30} {s['config']:<20} {s['tps_median']:>6.1f} {m('late_pct'):>7.2f} "
                   f"{m('stalled_sec_pct'):>9.2f} {m('p99_ms'):>8.1f} {m('max_ms'):>10.0f} "
                   f"{m('wal_flush_max_ms'):>16.0f} {ck:>8.1f} {ck / bw:>8.2f} {m('checkpoints'):>5.0f}")
        res[(s["group"], s["config"])] = (m("late_pct"), m("stalled_sec_pct"))
        if any(r.get("learned_stall_pct") not in ("", None) for r in rs):
            out.append(f"  {'':<30} {'  after learning':<20} {'':>6} {'skip %':>7} {m('learned_stall_pct'):>9.2f}"
                       f"   (skipped {m('learned_skip_pct'):.2f} %, from the per-second series)")
        for r in rs:
            if r.get("flush_kb_by_ckpt"):
                out.append(f"  {'':<30}   rep {r['rep']}: flush_after_kb per checkpoint: {r['flush_kb_by_ckpt']}; "
                           f"checkpoints up to the last decision: {r.get('ckpts_to_last_decision')}")
    out.append("\n## acceptance: with checkpoint_flush_after=256kB (Linux default) fewer late transactions AND "
               "fewer stalled seconds than with 0")
    for g in sorted({k[0] for k in res}):
        b = res.get((g, "flush_after=0"))
        for c in sorted({k[1] for k in res if k[0] == g and k[1] != "flush_after=0"}):
            x = res.get((g, c))
            if b and x:
                ok = x[0] < b[0] and (x[1] < b[1] or x[1] == b[1] == 0)
                note = " (stall < 1 s: no second emptied either way)" if b[1] == 0 else ""
                verdict = ("PASS" if ok else "FAIL") if c == "flush_after=256kB" else \
                    ("(info) better" if ok else "(info) not better on both")
                verdict += note
                out.append(f"  {g} {c}: late {x[0]:.2f}% vs {b[0]:.2f}%, stalled seconds {x[1]:.2f}% vs "
                           f"{b[1]:.2f}% -> {verdict}")
    return "\n".join(out)
