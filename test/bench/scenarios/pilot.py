"""pilot: walpilot none / observe / tune against the static oracle (commit_delay sweep)
and the 1/2-flush rule, on emulated slow storage (hdd, cloud).  Stub until the
pilot lands: walpilot configurations are skipped with a message when the
extension is not installed; the static sweep always runs.  walpilot's decisions
are marked on the plots when it logs lines containing "walpilot".

    --set tune_conf="walpilot.x = 1;walpilot.y = 2"   extra conf lines for the tune config
"""
from bench import Scenario, Config
from _common import profile, INSERT


def build(opts):
    quick = opts.quick
    names = opts.profiles.split(";") if opts.profiles else (["hdd"] if quick else ["hdd", "cloud"])
    extra = [x.strip() for x in opts.options.get("tune_conf", "").split(";") if x.strip()]
    configs = []
    for pname in names:
        label, spec, F = profile(pname)
        env = {"WALPILOT_STORAGE": spec}
        configs.append(Config("none", [], env, group=label, baseline=True))
        configs.append(Config("walpilot-observe", ["shared_preload_libraries = 'walpilot'",
                                                   "walpilot.mode = 'observe'"], env, group=label))
        configs.append(Config("walpilot-tune", ["shared_preload_libraries = 'walpilot'",
                                                "walpilot.mode = 'tune'"] + extra, env, group=label))
        half = max(10, int(round(F / 20.0)) * 10)
        configs.append(Config(f"rule d{half}/s5", [f"commit_delay = {half}", "commit_siblings = 5"], env,
                              group=label, meta={"delay": half, "siblings": 5, "rule": True}))
        for f in ([1 / 8] if quick else [1 / 8, 1 / 4, 1 / 2, 1]):
            d = max(10, int(round(F * f / 10.0)) * 10)
            configs.append(Config(f"static d{d}/s1", [f"commit_delay = {d}", "commit_siblings = 1"], env,
                                  group=label, meta={"delay": d, "siblings": 1}))
    return Scenario(
        name="pilot", configs=configs, workloads=[INSERT], clients=[8, 32] if quick else [4, 16, 32],
        reps=1 if quick else 3, duration=10 if quick else 30, scale=10,
        base_conf=["shared_buffers = 256MB", "checkpoint_timeout = 30min", "max_wal_size = 8GB",
                   "wal_init_zero = off"],
        events_regex=r"walpilot|checkpoint complete", plot_events=True,
        notes="# pilot: best static = oracle; walpilot configs need the extension installed")
