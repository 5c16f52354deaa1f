"""overhead: cost of observing.  No extension vs walpilot observe vs pg_wait_sampling;
select-only and tpcb with synchronous_commit=off; 4 and 32 clients; no storage
emulation (the shim is not loaded).  Reports tps ratios and the CPU time of the
extension's background processes (from /proc, column auxcpu ms).

Configurations can be replaced without editing this file:
    --set configs=FILE.json   with {"name": ["conf line", ...], ...}; the first is the baseline.
Not done here (left to the instruments issue): callgrind instructions per commit.
"""
import json
from bench import Scenario, Config
from _common import SELECT_ONLY, TPCB_ASYNC

DEFAULT = {
    "none": [],
    "walpilot-observe": ["shared_preload_libraries = 'walpilot'", "walpilot.mode = 'observe'"],
    "pg_wait_sampling": ["shared_preload_libraries = 'pg_wait_sampling'"],
}


def build(opts):
    quick = opts.quick
    spec = DEFAULT
    if "configs" in opts.options:
        with open(opts.options["configs"]) as f:
            spec = json.load(f)
    configs = [Config(name, list(lines), {}, group="overhead", baseline=(i == 0))
               for i, (name, lines) in enumerate(spec.items())]
    return Scenario(
        name="overhead", configs=configs, workloads=[SELECT_ONLY, TPCB_ASYNC], clients=[4, 32],
        reps=1 if quick else 5, duration=5 if quick else 20, scale=10,
        base_conf=["shared_buffers = 256MB", "checkpoint_timeout = 30min", "max_wal_size = 8GB"],
        checkpoint_before_run=True,
        notes="# overhead: no storage emulation; tpcb-async = tpcb-like with synchronous_commit=off")
