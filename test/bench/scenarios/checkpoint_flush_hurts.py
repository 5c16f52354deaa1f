"""checkpoint-flush-hurts: the case where checkpoint_flush_after costs more
than it saves -- a hot set rewritten within seconds that fits the page cache
but not shared_buffers (after the pgsql-hackers thread "checkpointer
continuous flushing", 2015).

shared_buffers is small (32MB, --set shared_buffers=) and the hot set
(pgbench scale 4, --set scale=: ~60 MB of pgbench_accounts and its index)
larger, so backends evict and rewrite the
same pages many times per checkpoint cycle; the emulated page cache (page
identity, test/emulator/README.md) absorbs a rewrite of a page that is still
dirty.  With checkpoint_flush_after > 0 the checkpointer's sync_file_range
writes its pages back at once; the next eviction re-dirties them and the
checkpoint's fsync writes them again.  With 0 the page cache absorbs the
rewrite.  Only checkpoint_flush_after varies (bgwriter_flush_after and
backend_flush_after are 0); checkpoint_timeout 30s, completion target 0.5
(--set completion_target=).

Reported per configuration: tps, late % (-L), the data bytes the emulated
device wrote (writeback of non-WAL files: fsync, sync_file_range, expiry) and
the page cache's absorbed rewrites of data pages, each median [min-max] over repetitions.
--set tune=1 adds walpilot's checkpoint_flush_after pilot (its own cluster,
learning across its repetitions).  --set rate=R throttles (-R); default
unthrottled, with -L 100.  --set observe=1 loads walpilot (mode observe) into
the fixed configurations too, and reports per configuration what the pilot
would see of each spread checkpoint in the run (walpilot.checkpoints: stalled
seconds, commit p99 during against the minute before, the pilot's impact
figure), to compare with the client's late %.
"""
import bench
from bench import Scenario, Config, Workload, median
from _common import profile, numbers, spread, OBSERVE_CONF, OBSERVE_SQL, server_now, pilot_view, pilot_view_table

BASE_CONF = ["checkpoint_timeout = 30s", "max_wal_size = 4GB", "min_wal_size = 1GB", "wal_init_zero = off",
             "bgwriter_flush_after = 0", "backend_flush_after = 0"]
DEFAULT_PROFILE = "flush_us=1000,bw_mbps=8,wal_bw_mbps=150"


def build(opts):
    o = opts.options
    names = opts.profiles.split(";") if opts.profiles else [DEFAULT_PROFILE]
    rate = float(o["rate"]) if o.get("rate") else None
    limit = float(o.get("limit_ms", 100))
    values = o.get("flush_values", "0,256kB,2MB").split(",")
    configs = []
    observe = OBSERVE_CONF if o.get("observe") else []
    for pname in names:
        label, spec, _ = profile(pname)
        env = {"WALPILOT_STORAGE": spec}
        for v in values:
            configs.append(Config(f"flush_after={v}", [f"checkpoint_flush_after = {v}"] + observe, env, group=label,
                                  baseline=v == "256kB", meta={"checkpoint_flush_after": v},
                                  setup_sql=OBSERVE_SQL if observe else []))
        if o.get("tune"):
            configs.append(Config("tune", ["shared_preload_libraries = 'walpilot'", "walpilot.mode = 'tune'",
                                           "walpilot.tune_commit_delay = off",
                                           "walpilot.tune_checkpoint_flush = on"], env, group=label,
                                  setup_sql=["CREATE EXTENSION IF NOT EXISTS walpilot"], meta={"tune": True}))
    base_conf = BASE_CONF + [f"shared_buffers = {o.get('shared_buffers', '32MB')}",
                             f"checkpoint_completion_target = {o.get('completion_target', '0.5')}"]
    wl = Workload(f"simple-update{'-R%g' % rate if rate else ''}", ["-b", "simple-update"], rate=rate,
                  latency_limit_ms=limit)
    _wrap_runs()
    return Scenario(
        name="checkpoint-flush-hurts", configs=configs, workloads=[wl], clients=[4],
        reps=1 if opts.quick else 3, duration=int(o.get("duration", 60 if opts.quick else 75)), scale=int(o.get("scale", 4)),
        base_conf=base_conf, checkpoint_before_run=False, analyze=analyze,
        notes=f"# pgbench -M prepared -b simple-update -c 4 -j 2{' -R %g' % rate if rate else ''} -L {limit:g}, "
              f"scale {int(o.get('scale', 4))}, shared_buffers={o.get('shared_buffers', '32MB')}, checkpoint_timeout=30s, "
              f"completion_target={o.get('completion_target', '0.5')}; only checkpoint_flush_after varies\n"
              "# data MB = non-WAL bytes the emulated device wrote back; absorbed = rewrites of data pages "
              "still dirty in the emulated page cache")


def _stats(cl):
    p = cl.psql("SELECT buffers_checkpoint, buffers_clean, buffers_backend FROM pg_stat_bgwriter", check=False)
    try:
        return [int(x) for x in p.stdout.strip().split("|")]
    except ValueError:
        return None


def _wrap_runs():
    """Wrap bench.do_run (additively): a CHECKPOINT before the counters are
    read, then per run the emulator's data-device bytes and page counters
    and who wrote the buffers."""
    orig = bench.do_run
    if getattr(orig, "_hurts_wrapped", False):
        return

    def do_run(ctx, cfg, wl, clients, rep, order):
        cl = ctx.cluster_of[id(cfg)]
        cl.psql("CHECKPOINT")
        e0, s0, t0 = bench.read_emu(cl.shm), _stats(cl), server_now(cl)
        row = orig(ctx, cfg, wl, clients, rep, order)
        e1, s1 = bench.read_emu(cl.shm), _stats(cl)
        row.update(pilot_view(cl, t0))
        if e0 and e1 and "bytes_device_data" in e1:
            d = {k: e1[k] - e0[k] for k in e1 if isinstance(e1[k], int) and k in e0}
            row["data_mb"] = round(d["bytes_device_data"] / 1e6, 1)
            row["wal_mb"] = round(d["bytes_device_wal"] / 1e6, 1)
            row["data_sfr_mb"] = round(d["bytes_writeback_sfr"] / 1e6, 1)
            # rewrites absorbed in data files (older emulators: all files, WAL included)
            row["absorbed_mb"] = round((d["pages_redirtied"] - d.get("pages_redirtied_wal", 0)) * 4096 / 1e6, 1)
            row["dirtied_mb"] = round(d["pages_dirtied"] * 4096 / 1e6, 1)
            row["untracked_pages"] = d["pages_untracked"]
        if s0 and s1:
            row["buf_ckpt_mb"], row["buf_clean_mb"], row["buf_backend_mb"] = \
                [round((b - a) * 8192 / 1e6, 1) for a, b in zip(s0, s1)]
        return row
    do_run._hurts_wrapped = True
    bench.do_run = do_run


def _rel(x, b):
    return f"{x / b - 1:+.1%}" if b else "-"


def analyze(ctx, rows, summ):
    out = ["\n## checkpoint-flush-hurts: median [min-max] over repetitions",
           f"  {'profile':<36} {'config':<18} {'tps':>22} {'late %':>20} {'stall s %':>20} {'data MB':>20} {'absorbed MB':>20} "
           f"{'ckpt-written MB':>18} {'backend MB':>16} {'ckpts':>5}"]
    res = {}
    for s in summ:
        rs = [r for r in rows if r["group"] == s["group"] and r["config"] == s["config"]]

        def v(k):
            return numbers(rs, k)
        out.append(f"  {s['group']:<36} {s['config']:<18} {spread(v('tps'), 0):>22} {spread(v('late_pct'), 2):>20} "
                   f"{spread(v('stalled_sec_pct'), 1):>20} {spread(v('data_mb'), 1):>20} {spread(v('absorbed_mb'), 1):>20} {spread(v('buf_ckpt_mb'), 1):>18} "
                   f"{spread(v('buf_backend_mb'), 1):>16} {median(v('checkpoints')):>5.0f}")
        res[(s["group"], s["config"])] = (median(v("tps")), median(v("late_pct")), median(v("data_mb")),
                                          median(v("stalled_sec_pct")))
    pv = pilot_view_table(rows, summ)
    if pv:
        out.append(pv)
    throttled = any(r.get("workload", "").startswith("simple-update-R") for r in rows)
    out.append("\n## does flushing hurt? (flush_after=0 against each other value, medians; judged on "
               + ("late %, the load being throttled)" if throttled else "tps, the load being unthrottled)"))
    for g in sorted({k[0] for k in res}):
        b = res.get((g, "flush_after=0"))
        for c in sorted(k[1] for k in res if k[0] == g and k[1] != "flush_after=0"):
            x = res[(g, c)]
            if b:
                out.append(f"  {g} {c}: tps {x[0]:.0f} vs {b[0]:.0f} ({_rel(x[0], b[0])}), late {x[1]:.2f}% vs "
                           f"{b[1]:.2f}%, stalled s {x[3]:.1f}% vs {b[3]:.1f}%, data written {x[2]:.1f} vs {b[2]:.1f} MB ({_rel(x[2], b[2])}) -> "
                           + ("flushing hurts" if (x[1] > b[1] if throttled else x[0] < b[0])
                              else "flushing does not hurt here"))
    return "\n".join(out)
