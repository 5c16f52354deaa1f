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
per run.  Its "after learning" figures are those from the end of its last
trial (the time of its last "walpilot trial on checkpoint_flush_after ended"
LOG line, the pilot holding at the run's end) to the end of the run, with the
number of checkpoints up to that point (its convergence); "while learning"
those before.  Fixed settings have nothing to learn: their after-learning
figures are the whole run's.

--set bw=10,25,100 runs the emulated hdd (WAL 150 MB/s) at those data-write
bandwidths, each with its own load, --set load=10:100:4,25:200:8,100:400:8
(bandwidth:rate:clients, pgbench -R rate -c clients; a bandwidth not listed
gets rate 100, 4 clients): the rate rises with the bandwidth so that the
checkpoint's writeback, ~0.7 x checkpoint MB / bandwidth, still stalls.
Without bw: --profiles "A;B" with --set rate/limit_ms and --clients.
--set tune_s=S --set fixed_s=S: per-config run lengths (default --duration;
a tune run needs ~10 checkpoints of 30 s to converge and some after it).
--set observe=1 loads walpilot (mode observe) into the fixed configurations
too and reports what the pilot would see of their checkpoints (stalled
seconds, p99 ratio, impact; also for tune).
--set side=1 adds backend_flush_after = 256kB and bgwriter_flush_after = 0
(both at checkpoint_flush_after = 256kB) beside 256kB, to see whether those
settings would pay; every row carries the pg_stat_bgwriter deltas of its run.

A checkpoint is on schedule when its total (write + sync) time stays within
checkpoint_timeout x checkpoint_completion_target + 3 s (27 + 3 s here: the
write phase is paced to end at 27 s, the sync phase follows).
"""
import csv
import json
import math
import os
import re
import bench
from bench import Scenario, Config, Workload, median
from _common import profile, numbers, spread, OBSERVE_CONF, OBSERVE_SQL, pilot_view, pilot_view_table

BASE_CONF = ["shared_buffers = 1GB", "checkpoint_timeout = 30s", "checkpoint_completion_target = 0.9",
             "max_wal_size = 4GB", "min_wal_size = 1GB", "wal_init_zero = off",
             "bgwriter_flush_after = 512kB", "backend_flush_after = 0"]


CKPT_TIMEOUT_S = 30
CKPT_TARGET = 0.9
SCHEDULE_SLACK_S = 3.0
DEFAULT_LOAD = "10:100:4,25:200:8,100:400:8"
TUNE_CONF = ["shared_preload_libraries = 'walpilot'", "walpilot.mode = 'tune'",
             "walpilot.tune_commit_delay = off"]


def build(opts):
    quick = opts.quick
    o = opts.options
    limit = float(o.get("limit_ms", 100))
    values = o.get("flush_values", "0,256kB,2MB").split(",")
    duration = getattr(opts, "duration", None) or int(o.get("duration", 65 if quick else 120))
    cells = []                       # (profile name, rate, clients or None)
    if o.get("bw"):
        load = {}
        for item in o.get("load", DEFAULT_LOAD).split(","):
            b, r, c = item.split(":")
            load[float(b)] = (float(r), int(c))
        for b in o["bw"].split(","):
            r, c = load.get(float(b), (100.0, 4))
            cells.append((f"hdd,bw_mbps={b},wal_bw_mbps=150", r, c))
    else:
        names = opts.profiles.split(";") if opts.profiles else ["hdd,bw_mbps=10,wal_bw_mbps=150"]
        cells = [(n, float(o.get("rate", 100)), None) for n in names]
    configs = []
    workloads = {}
    for pname, rate, nclients in cells:
        label, spec, F = profile(pname)
        env = {"WALPILOT_STORAGE": spec}
        wname = f"simple-update-R{rate:g}"
        workloads.setdefault(wname, Workload(wname, ["-b", "simple-update"], rate=rate, latency_limit_ms=limit))
        kw = dict(group=label, workloads=[wname], clients=[nclients] if nclients else None)
        fixed_meta = {"duration": int(o.get("fixed_s", duration)), "rate": rate}
        observe = o.get("observe")
        for v in values:
            configs.append(Config(f"flush_after={v}", [f"checkpoint_flush_after = {v}"] + (OBSERVE_CONF if observe else []),
                                  env, baseline=v == values[0], setup_sql=OBSERVE_SQL if observe else [],
                                  meta=dict(fixed_meta, checkpoint_flush_after=v, observe=bool(observe)), **kw))
        if o.get("side"):
            configs.append(Config("backend_flush_after=256kB", ["checkpoint_flush_after = 256kB",
                                                                "backend_flush_after = 256kB"], env,
                                  meta=dict(fixed_meta, side=True), **kw))
            configs.append(Config("bgwriter_flush_after=0", ["checkpoint_flush_after = 256kB",
                                                             "bgwriter_flush_after = 0"], env,
                                  meta=dict(fixed_meta, side=True), **kw))
        if o.get("tune"):
            configs.append(Config("tune", TUNE_CONF, env, setup_sql=["CREATE EXTENSION IF NOT EXISTS walpilot"],
                                  meta={"tune": True, "duration": int(o.get("tune_s", duration)), "rate": rate},
                                  **kw))
    _wrap_runs()
    loads = ", ".join(f"{profile(p)[0]}: -R {r:g} -c {c or 'see --clients'}" for p, r, c in cells)
    sc = Scenario(
        name="checkpoint-flush", configs=configs, workloads=list(workloads.values()), clients=[4],
        reps=1 if quick else 3, duration=max([duration] + [c.meta["duration"] for c in configs]), scale=20,
        base_conf=BASE_CONF,
        plot_events=True, analyze=analyze,
        notes=f"# pgbench -M prepared -b simple-update -j 2 -L {limit:g}, {loads}; checkpoint_timeout=30s "
              "(checkpoints complete ~27 s after start: runs of 65 s see 1, of 120 s see 3)\n"
              "# late % = (skipped + latency-from-schedule > -L) / all; stall s % = seconds below 10 % of the "
              "run's median per-second tps")
    return sc


_last_tx = []


def _late_stall(tx, t0, limit_ms, lo, hi):
    """late+skipped % of the transactions completed in [lo, hi) seconds
    after t0, and stalled-second % of the whole seconds in it (the stall
    threshold from their median; a partial first second would look
    stalled)."""
    n = late = 0
    secs = {}
    for t, lat in tx:
        s = t - t0
        if not lo <= s < hi:
            continue
        n += 1
        if lat is None or lat > limit_ms:
            late += 1
        if lat is not None:
            secs[int(s)] = secs.get(int(s), 0) + 1
    span = [secs.get(i, 0) for i in range(math.ceil(lo), int(hi))]
    if not n or not span:
        return "", ""
    med = median(span)
    return round(100.0 * late / n, 3), round(100.0 * sum(1 for x in span if x < 0.1 * med) / len(span), 2)


def _checkpoints(events_path):
    """[(t_complete, reason, total_s)] from a run's .events file."""
    out = []
    reason = ""
    try:
        with open(events_path) as f:
            for line in f:
                t, _, msg = line.rstrip("\n").partition("\t")
                m = re.search(r"checkpoint starting: (\S+)", msg)
                if m:
                    reason = m.group(1)
                m = re.search(r"checkpoint complete:.*total=([\d.]+) s", msg)
                if m:
                    out.append((float(t), reason, float(m.group(1))))
    except OSError:
        pass
    return out


def _last_trial_end(events_path):
    """seconds from run start of the last ended checkpoint_flush_after trial,
    and whether a trial started after it."""
    end, open_trial = None, False
    try:
        with open(events_path) as f:
            for line in f:
                t, _, msg = line.rstrip("\n").partition("\t")
                if "walpilot trial on checkpoint_flush_after ended" in msg:
                    end, open_trial = float(t), False
                elif "walpilot trial on checkpoint_flush_after starts" in msg:
                    open_trial = True
    except OSError:
        pass
    return end, open_trial


def _wrap_runs():
    """Wrap bench.do_run and bench.parse_pgbench_logs (additively): per-config
    run length, a server restart before a tune run (the pilot learns from
    scratch), the pilot's decisions, and learning/after-learning figures,
    checkpoint schedule and pg_stat_bgwriter deltas in every row."""
    orig = bench.do_run
    if getattr(orig, "_flush_wrapped", False):
        return
    orig_parse = bench.parse_pgbench_logs

    def parse(prefix_dir, prefix, limit_ms):
        global _last_tx
        _last_tx = orig_parse(prefix_dir, prefix, limit_ms)
        return _last_tx

    bgw_sql = "SELECT buffers_checkpoint || ' ' || buffers_clean || ' ' || buffers_backend FROM pg_stat_bgwriter"

    def do_run(ctx, cfg, wl, clients, rep, order):
        s = ctx.scenario
        cl = ctx.cluster_of[id(cfg)]
        if cfg.meta.get("tune"):
            cl.stop()
            cl.start(emulated=cl.emulated)
        t_start = cl.psql("SELECT now()").stdout.strip()
        bgw0 = [int(x) for x in cl.psql(bgw_sql).stdout.split()]
        full = s.duration
        s.duration = int(cfg.meta.get("duration", full))
        try:
            row = orig(ctx, cfg, wl, clients, rep, order)
        finally:
            dur, s.duration = s.duration, full
        row["duration"] = dur
        bgw1 = [int(x) for x in cl.psql(bgw_sql).stdout.split()]
        for k, a, b in zip(("buf_checkpoint", "buf_clean", "buf_backend"), bgw0, bgw1):
            row[k] = b - a
        tx = _last_tx
        t0 = min((t - (l or 0) / 1000.0 for t, l in tx), default=0)
        events = os.path.join(ctx.out, "series", row["series"] + ".events")
        ck = _checkpoints(events)
        budget = CKPT_TIMEOUT_S * CKPT_TARGET + SCHEDULE_SLACK_S
        timed = [c for c in ck if c[1] in ("time", "wal")]
        row["ckpt_total_max_s"] = max((c[2] for c in timed), default="")
        row["ckpts_timed"] = len(timed)
        row["ckpts_late"] = sum(1 for c in timed if c[2] > budget)
        learned = 0.0
        if cfg.meta.get("tune"):
            p = cl.psql("SELECT coalesce(json_agg(d ORDER BY d.t), '[]') FROM "
                        "(SELECT extract(epoch FROM decided_at)::float8 AS t, old_value, new_value, reason, "
                        "outcome FROM walpilot.decisions WHERE setting = 'checkpoint_flush_after' "
                        f"AND decided_at >= '{t_start}') d", check=False)
            with open(os.path.join(ctx.out, "series", row["series"] + ".decisions"), "w") as f:
                f.write(p.stdout.strip() or p.stderr)
            st = cl.psql("SELECT state FROM walpilot.pilots WHERE pilot = 'checkpoint_flush_after'", check=False)
            row["pilot_state"] = st.stdout.strip()
            r = cl.psql("SELECT string_agg(flush_after_kb::text, ' ' ORDER BY started_at) FROM walpilot.checkpoints "
                        f"WHERE started_at >= '{t_start}'", check=False)
            row["flush_kb_by_ckpt"] = r.stdout.strip()
            end, open_trial = _last_trial_end(events)
            if end is not None and not open_trial and row["pilot_state"] == "hold":
                learned = end
                row["converged_s"] = round(end, 1)
                row["ckpts_to_last_decision"] = sum(1 for c in ck if c[0] <= end + 1.0)
            else:
                learned = None
                row["converged_s"] = ""
                row["ckpts_to_last_decision"] = f">{len(ck)}"
            if learned is not None:
                row["learning_late_pct"], row["learning_stall_pct"] = _late_stall(
                    tx, t0, wl.latency_limit_ms, 0, learned)
        if learned is not None:
            row["learned_late_pct"], row["learned_stall_pct"] = _late_stall(
                tx, t0, wl.latency_limit_ms, learned, dur)
        if cfg.meta.get("tune") or cfg.meta.get("observe"):
            row.update(pilot_view(cl, t_start))
        return row
    do_run._flush_wrapped = True
    bench.do_run = do_run
    bench.parse_pgbench_logs = parse


def analyze(ctx, rows, summ):
    out = ["\n## checkpoint-flush: stalls vs checkpoint_flush_after (medians over repetitions)",
           f"  {'profile':<30} {'config':<20} {'tps':>6} {'late %':>7} {'stall s %':>9} {'p99 ms':>8} "
           f"{'max lat ms':>10} {'WAL flush max ms':>16} {'ckpt MB':>8} {'MB/bw s':>8} {'ckpts':>5}"]
    res = {}
    for s in summ:
        rs = [r for r in rows if r["group"] == s["group"] and r["config"] == s["config"]]

        def m(k):
            v = numbers(rs, k)
            return median(v) if v else float("nan")
        mbw = re.search(r"bw_mbps([\d.]+)", s["group"])
        bw = float(mbw.group(1)) if mbw else 150.0
        ck = m("ckpt_mb")
        out.append(f"  {s['group']:<30} {s['config']:<20} {s['tps_median']:>6.1f} {m('late_pct'):>7.2f} "
                   f"{m('stalled_sec_pct'):>9.2f} {m('p99_ms'):>8.1f} {m('max_ms'):>10.0f} "
                   f"{m('wal_flush_max_ms'):>16.0f} {ck:>8.1f} {ck / bw:>8.2f} {m('checkpoints'):>5.0f}")
        res[(s["group"], s["config"])] = (m("late_pct"), m("stalled_sec_pct"))
    out.append(_targets(rows))
    pv = pilot_view_table(rows, summ)
    if pv:
        out.append(pv)
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


def _targets(rows):
    """Per bandwidth: every config's figures (median [min-max] over
    repetitions), tune's convergence, and the pilot's targets."""
    out = []
    groups = []
    for r in rows:
        if r["group"] not in groups:
            groups.append(r["group"])
    for g in groups:
        rg = [r for r in rows if r["group"] == g]
        cfgs = []
        for r in rg:
            if r["config"] not in cfgs:
                cfgs.append(r["config"])
        cfgs.sort(key=lambda c: (c == "tune", c))
        wl = rg[0]["workload"]
        out.append(f"\n## {g} ({wl}, {rg[0]['clients']} clients): whole run | after learning (tune: from its "
                   "last trial's end; fixed: whole run) | while learning; median [min-max]")
        out.append(f"  {'config':<26} {'s':>4} {'tps':>16} {'late+skip %':>18} {'stall s %':>16} {'p99 ms':>18} "
                   f"{'late % learned':>18} {'stall % learned':>16} {'late % learning':>18} "
                   f"{'ckpt max s':>16} {'late ckpts':>10} {'bufs clean/backend':>18}")
        fig = {}
        for c in cfgs:
            rs = [r for r in rg if r["config"] == c]

            def col(k):
                return [r.get(k) for r in rs]
            tune = c == "tune"
            ll = col("learned_late_pct")
            ls = col("learned_stall_pct")
            if not tune:
                ll, ls = col("late_pct"), col("stalled_sec_pct")
            late_ck = sum(int(r.get("ckpts_late") or 0) for r in rs)
            timed = sum(int(r.get("ckpts_timed") or 0) for r in rs)
            clean = sum(int(r.get("buf_clean") or 0) for r in rs)
            backend = sum(int(r.get("buf_backend") or 0) for r in rs)
            out.append(f"  {c:<26} {int(rs[0].get('duration') or 0):>4} {spread(col('tps'), 1):>16} "
                       f"{spread(col('late_pct')):>18} {spread(col('stalled_sec_pct')):>16} "
                       f"{spread(col('p99_ms'), 0):>18} {spread(ll):>18} {spread(ls):>16} "
                       f"{spread(col('learning_late_pct')) if tune else '':>18} "
                       f"{spread(col('ckpt_total_max_s'), 1):>16} {f'{late_ck}/{timed}':>10} "
                       f"{f'{clean}/{backend}':>18}")
            v = [float(x) for x in ll if x not in ("", None)]
            w = [float(x) for x in ls if x not in ("", None)]
            fig[c] = {"late": median(v) if v else None, "stall": median(w) if w else None,
                      "whole_late": median(numbers(rs, "late_pct") or [0]),
                      "whole_stall": median(numbers(rs, "stalled_sec_pct") or [0]),
                      "learning": numbers(rs, "learning_late_pct")}
            if tune:
                for r in rs:
                    out.append(f"      rep {r['rep']}: flush_after_kb per checkpoint: {r.get('flush_kb_by_ckpt')}; "
                               f"converged at {r.get('converged_s') or '-'} s, checkpoints to the last decision: "
                               f"{r.get('ckpts_to_last_decision')} (state at the end: {r.get('pilot_state')})")
        fixed = {c: f for c, f in fig.items() if c.startswith("flush_after=")}
        t = fig.get("tune")
        if not t or not fixed:
            continue
        for k, name in (("late", "late+skipped %"), ("stall", "stalled-second %")):
            vals = [f[k] for f in fixed.values() if f[k] is not None]
            if t[k] is None or not vals:
                out.append(f"  target {name} after learning: not measurable (no converged tune run)")
                continue
            best, worst = min(vals), max(vals)
            ok = t[k] <= best and (t[k] <= 0.5 * worst or worst == 0)
            out.append(f"  target {name} after learning <= best fixed ({best:.2f}) and <= 0.5 x worst "
                       f"({0.5 * worst:.2f}): tune {t[k]:.2f} -> {'PASS' if ok else 'FAIL'}")
            wk = "whole_" + k
            worst_whole = max(f[wk] for f in fixed.values())
            out.append(f"  target {name} while learning (tune's whole run) <= worst fixed ({worst_whole:.2f}): "
                       f"tune {t[wk]:.2f} -> {'PASS' if t[wk] <= worst_whole else 'FAIL'}")
        conv = [r.get("ckpts_to_last_decision") for r in rg if r["config"] == "tune"]
        ok = all(str(x).isdigit() and int(x) <= 10 for x in conv)
        out.append(f"  target converges within 10 checkpoints: {', '.join(str(x) for x in conv)} -> "
                   f"{'PASS' if ok else 'FAIL'}")
    return "\n".join(out)
