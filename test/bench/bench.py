#!/usr/bin/env python3
"""walpilot benchmark harness (stdlib only).

A scenario is a list of named configurations (postgresql.conf lines, environment
such as WALPILOT_STORAGE, optional setup SQL) x workloads x client counts, run
interleaved over R repetitions.  Configurations that differ only in reloadable
settings share one cluster (settings applied by reload before each run); the
rest (environment, postmaster-level settings, setup SQL) get their own cluster.

    test/bench/run SCENARIO [--quick] [options]     (see --help)
"""
import argparse
import csv
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EMU_DIR = os.path.join(ROOT, "test", "emulator")
SHIM = os.path.join(EMU_DIR, "walpilot_emu.so")
EMU_STAT = os.path.join(EMU_DIR, "emu_stat")


def log(msg):
    print(msg, flush=True)


# --------------------------------------------------------------------------
# scenario model
# --------------------------------------------------------------------------
@dataclass
class Workload:
    name: str
    args: list                      # pgbench arguments, e.g. ["-b", "tpcb-like"]
    script: str = None              # custom script text (written to a file, -f)
    conf: list = field(default_factory=list)   # reloadable conf lines for this workload
    rate: float = None              # -R
    latency_limit_ms: float = None  # -L


@dataclass
class Config:
    name: str
    conf: list = field(default_factory=list)       # postgresql.conf lines
    env: dict = field(default_factory=dict)        # postmaster environment
    setup_sql: list = field(default_factory=list)  # run once after cluster creation
    group: str = ""                                # comparison group (one table each)
    baseline: bool = False                         # ratios are against this config
    workloads: list = None                         # restrict to these workload names
    clients: list = None                           # restrict to these client counts
    meta: dict = field(default_factory=dict)       # free-form (delay, siblings, ...)


@dataclass
class Scenario:
    name: str
    configs: list
    workloads: list
    clients: list
    reps: int = 3
    duration: int = 10
    scale: int = 10
    base_conf: list = field(default_factory=list)  # for every cluster
    checkpoint_before_run: bool = True
    events_regex: str = r"checkpoint starting|checkpoint complete|walpilot"
    plot_events: bool = False
    cpu_regex: str = r"walpilot|wait_sampling"     # aux processes whose CPU is measured
    analyze: object = None                         # fn(ctx, rows) -> text
    plot_filter: object = None                     # fn(group, workload, clients) -> bool
    order: object = None                           # fn(rep, cfgs) -> cfgs: a cell's run order (default shuffled)
    notes: str = ""


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def find_bindir():
    for cand in (os.environ.get("PG_BINDIR"),):
        if cand and os.path.exists(os.path.join(cand, "postgres")):
            return cand
    try:
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True).stdout.strip()
        if out and os.path.exists(os.path.join(out, "postgres")):
            return out
    except FileNotFoundError:
        pass
    return "/usr/lib/postgresql/15/bin"


BINDIR = find_bindir()
IS_ROOT = os.geteuid() == 0
RUNAS = ["runuser", "-u", "postgres", "--"] if IS_ROOT else []


def run(cmd, check=True, env=None, capture=True, timeout=None, cwd=None):
    full = RUNAS + (["env"] + [f"{k}={v}" for k, v in (env or {}).items()] if env else []) + cmd
    p = subprocess.run(full, capture_output=capture, text=True, timeout=timeout, cwd=cwd)
    if check and p.returncode != 0:
        raise RuntimeError(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return p


def pkglibdir():
    p = subprocess.run([os.path.join(BINDIR, "pg_config"), "--pkglibdir"], capture_output=True, text=True)
    return p.stdout.strip() or "/usr/lib/postgresql/15/lib"


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(sorted_xs, q):
    if not sorted_xs:
        return float("nan")
    i = min(len(sorted_xs) - 1, max(0, int(round(q * (len(sorted_xs) - 1)))))
    return sorted_xs[i]


def guc_name(line):
    m = re.match(r"\s*([A-Za-z_][\w.]*)\s*=?", line)
    return m.group(1).lower() if m else None


_guc_context = None


def guc_contexts():
    """name -> context, from postgres --describe-config (no server needed)."""
    global _guc_context
    if _guc_context is None:
        _guc_context = {}
        p = run([os.path.join(BINDIR, "postgres"), "--describe-config"], check=False)
        for line in p.stdout.splitlines():
            f = line.split("\t")
            if len(f) > 1:
                _guc_context[f[0].lower()] = f[1]
    return _guc_context


def is_reloadable(line):
    """conf lines that can change between runs on one cluster (sighup/user)."""
    name = guc_name(line)
    ctx = guc_contexts().get(name)
    return ctx in ("sighup", "superuser", "user")


def preload_libs(conf):
    libs = []
    for line in conf:
        if guc_name(line) == "shared_preload_libraries":
            v = line.split("=", 1)[1].strip().strip("'\"")
            libs += [x.strip() for x in v.split(",") if x.strip()]
    return libs


def read_emu(shm):
    if not shm:
        return None
    p = subprocess.run([EMU_STAT, shm], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    d = {}
    for line in p.stdout.splitlines():
        k, _, v = line.partition("=")
        if k == "wal_flush_hist":
            d[k] = [int(x) for x in v.split(",")]
        elif k == "spec":
            d[k] = v
        else:
            d[k] = int(v)
    return d


def hist_quantile(hist, q):
    tot = sum(hist)
    if tot == 0:
        return float("nan")
    acc = 0
    for b, n in enumerate(hist):
        acc += n
        if acc >= q * tot:
            return (1 << b) / 1000.0  # upper bound of bucket, ms
    return float("nan")


# --------------------------------------------------------------------------
# clusters
# --------------------------------------------------------------------------
class Cluster:
    seq = 0

    def __init__(self, ctx, key, env, conf, setup_sql):
        Cluster.seq += 1
        self.ctx = ctx
        self.idx = Cluster.seq
        self.key = key
        self.env = dict(env)
        self.conf = list(conf)
        self.setup_sql = list(setup_sql)
        self.dir = os.path.join(ctx.tmp, f"c{self.idx}")
        self.data = os.path.join(self.dir, "data")
        self.sock = ctx.tmp
        self.port = ctx.free_port()
        self.logfile = os.path.join(self.dir, "server.log")
        self.shm = None
        self.running = False
        self.run_id = 0
        self.current_conf = None
        self.emulated = "WALPILOT_STORAGE" in self.env
        if self.emulated:
            self.shm = f"walpilot-emu-bench-{os.getpid()}-{self.idx}"

    def label(self):
        return f"c{self.idx}[{self.env.get('WALPILOT_STORAGE', 'no-shim')}" + \
            (f"; {'; '.join(self.conf)}" if self.conf else "") + "]"

    def psql(self, sql, db="postgres", check=True):
        return run([os.path.join(BINDIR, "psql"), "-X", "-q", "-At", "-h", self.sock, "-p", str(self.port),
                    "-d", db, "-v", "ON_ERROR_STOP=1", "-c", sql], check=check)

    def create(self):
        os.makedirs(self.dir)
        self.ctx.chown(self.dir)
        run([os.path.join(BINDIR, "initdb"), "-D", self.data, "-A", "trust", "-U", "postgres",
             "--no-sync", "-E", "UTF8", "--locale=C"])
        lines = [
            f"port = {self.port}",
            f"unix_socket_directories = '{self.sock}'",
            "listen_addresses = ''",
            "log_line_prefix = '%n [%p] '",
            "log_checkpoints = on",
            "logging_collector = off",
            "autovacuum = off",
            "max_connections = 200",
        ] + self.ctx.scenario.base_conf + self.conf + ["include_if_exists = 'bench_run.conf'"]
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n# walpilot bench\n" + "\n".join(lines) + "\n")
        self.write_run_conf([])
        # initialise data without the emulator (fast), then restart emulated
        self.start(emulated=False)
        sc = self.ctx.scenario
        log(f"  init {self.label()}: pgbench -i -s {sc.scale}")
        run([os.path.join(BINDIR, "pgbench"), "-i", "-q", "-s", str(sc.scale), "-h", self.sock,
             "-p", str(self.port), "postgres"])
        for sql in self.setup_sql:
            self.psql(sql)
        self.psql("VACUUM ANALYZE")
        self.psql("CHECKPOINT")
        self.stop()
        self.start(emulated=self.emulated)

    def start(self, emulated=True):
        env = {}
        if emulated:
            if not os.path.exists(SHIM):
                raise RuntimeError(f"{SHIM} missing: run make -C test/emulator")
            subprocess.run([EMU_STAT, self.shm, "--unlink"], capture_output=True)
            env = {"LD_PRELOAD": SHIM, "WALPILOT_STORAGE_SHM": self.shm}
            env.update(self.env)
        run([os.path.join(BINDIR, "pg_ctl"), "-D", self.data, "-l", self.logfile, "-w", "-t", "300",
             "start"], env=env)
        self.running = True
        self.pid = int(open(os.path.join(self.data, "postmaster.pid")).readline())
        if emulated:
            maps = open(f"/proc/{self.pid}/maps").read()
            if "walpilot_emu.so" not in maps:
                raise RuntimeError(f"storage shim NOT mapped into postmaster {self.pid} of {self.label()}")
            if read_emu(self.shm) is None:
                raise RuntimeError(f"shim mapped but shared segment {self.shm} not created ({self.label()})")
            log(f"  started {self.label()} pid {self.pid}: shim mapped, device /dev/shm/{self.shm}")

    def stop(self):
        if self.running:
            run([os.path.join(BINDIR, "pg_ctl"), "-D", self.data, "-m", "fast", "-w", "-t", "300", "stop"],
                check=False)
            self.running = False

    def destroy(self):
        self.stop()
        if self.shm:
            subprocess.run([EMU_STAT, self.shm, "--unlink"], capture_output=True)

    def write_run_conf(self, lines):
        self.run_id += 1
        body = "\n".join(list(lines) + [f"bench.run_id = '{self.run_id}'"]) + "\n"
        path = os.path.join(self.data, "bench_run.conf")
        with open(path, "w") as f:
            f.write(body)
        self.ctx.chown(path)

    def apply(self, lines):
        """reload-level settings for the next run; returns when visible to new sessions."""
        self.write_run_conf(lines)
        if not self.running:
            return
        self.psql("SELECT pg_reload_conf()")
        want = str(self.run_id)
        for _ in range(100):
            if self.psql("SELECT current_setting('bench.run_id', true)").stdout.strip() == want:
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("configuration reload not visible")
        err = self.psql("SELECT string_agg(name || ': ' || coalesce(error,''), ', ') FROM pg_file_settings "
                        "WHERE error IS NOT NULL").stdout.strip()
        pend = self.psql("SELECT string_agg(name, ',') FROM pg_settings WHERE pending_restart").stdout.strip()
        if err or pend:
            raise RuntimeError(f"bad run configuration {lines}: {err} {pend}")
        time.sleep(0.2)  # let checkpointer/walwriter pick up SIGHUP

    def aux_cpu(self, regex):
        """CPU ms of postmaster children whose title matches regex."""
        tot = 0.0
        hz = os.sysconf("SC_CLK_TCK")
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                st = open(f"/proc/{pid}/stat").read()
                ppid = int(st.rsplit(")", 1)[1].split()[1])
                if ppid != self.pid:
                    continue
                title = open(f"/proc/{pid}/cmdline").read().replace("\0", " ")
                if not re.search(regex, title):
                    continue
                f = st.rsplit(")", 1)[1].split()
                tot += (int(f[11]) + int(f[12])) * 1000.0 / hz
            except (OSError, IndexError, ValueError):
                pass
        return tot


# --------------------------------------------------------------------------
# a run
# --------------------------------------------------------------------------
def parse_pgbench_logs(prefix_dir, prefix, limit_ms):
    """per-transaction logs -> (list of (t_complete, latency_ms or None if skipped))"""
    tx = []
    for fn in os.listdir(prefix_dir):
        if not fn.startswith(prefix + "."):
            continue
        with open(os.path.join(prefix_dir, fn)) as f:
            for line in f:
                p = line.split()
                if len(p) < 6:
                    continue
                t = int(p[4]) + int(p[5]) / 1e6
                if p[2] == "skipped":
                    tx.append((t, None))
                    continue
                lat = int(p[2]) / 1000.0
                if len(p) >= 7:   # --rate: add schedule lag
                    lat += int(p[6]) / 1000.0
                tx.append((t, lat))
        os.unlink(os.path.join(prefix_dir, fn))
    return tx


def series(tx, t0, duration):
    secs = [[] for _ in range(duration)]
    skipped = [0] * duration
    for t, lat in tx:
        s = int(t - t0)
        if 0 <= s < duration:
            if lat is None:
                skipped[s] += 1
            else:
                secs[s].append(lat)
    out = []
    for s in range(duration):
        lats = sorted(secs[s])
        out.append({"sec": s, "tps": len(lats), "skipped": skipped[s],
                    "p99_ms": round(pct(lats, 0.99), 3) if lats else "",
                    "lat_avg_ms": round(sum(lats) / len(lats), 3) if lats else ""})
    return out


def server_events(cl, t_start, t_end, regex):
    ev = []
    try:
        with open(cl.logfile, errors="replace") as f:
            for line in f:
                m = re.match(r"(\d+\.\d+) \[\d+\] (.*)", line)
                if not m:
                    continue
                t = float(m.group(1))
                if t_start <= t <= t_end and re.search(regex, m.group(2)):
                    ev.append((t, m.group(2).strip()))
    except OSError:
        pass
    return ev


def do_run(ctx, cfg, wl, clients, rep, order):
    sc = ctx.scenario
    cl = ctx.cluster_of[id(cfg)]
    reload_lines = [l for l in cfg.conf if is_reloadable(l)] + wl.conf
    cl.apply(reload_lines)
    if sc.checkpoint_before_run:
        cl.psql("CHECKPOINT")
    runid = f"r{ctx.nrun:04d}"
    ctx.nrun += 1
    args = [os.path.join(BINDIR, "pgbench"), "-n", "-M", "prepared", "-h", cl.sock, "-p", str(cl.port),
            "-c", str(clients), "-j", str(min(clients, ctx.jobs)), "-T", str(sc.duration), "-P", "1",
            "--log", f"--log-prefix={ctx.tmp}/{runid}"]
    if wl.rate:
        args += ["-R", str(wl.rate)]
    if wl.latency_limit_ms:
        args += ["-L", str(wl.latency_limit_ms)]
    if wl.script:
        sp = os.path.join(ctx.tmp, f"{wl.name}.sql")
        if not os.path.exists(sp):
            with open(sp, "w") as f:
                f.write(wl.script)
            ctx.chown(sp)
        args += ["-f", sp]
    args += wl.args + ["postgres"]
    if cl.shm:
        subprocess.run([EMU_STAT, cl.shm, "--reset-max"], capture_output=True)
    emu0 = read_emu(cl.shm)
    cpu0 = cl.aux_cpu(sc.cpu_regex)
    t_wall0 = time.time()
    p = run(args, check=False, cwd=ctx.tmp, timeout=sc.duration * 3 + 300)
    t_wall1 = time.time()
    cpu1 = cl.aux_cpu(sc.cpu_regex)
    emu1 = read_emu(cl.shm)
    if p.returncode != 0:
        log(f"    pgbench failed: {p.stderr[-500:]}")
        ctx.ok = False
    out = p.stdout
    m = re.search(r"tps = ([\d.]+) \(without initial", out)
    tps = float(m.group(1)) if m else float("nan")
    tx = parse_pgbench_logs(ctx.tmp, runid, wl.latency_limit_ms)
    lats = sorted(l for _, l in tx if l is not None)
    nskip = sum(1 for _, l in tx if l is None)
    t0 = min((t - (l or 0) / 1000.0 for t, l in tx), default=t_wall0)
    ser = series(tx, t0, sc.duration)
    per_sec = [s["tps"] for s in ser]
    med_sec = median(per_sec) if per_sec else 0
    stalled = 100.0 * sum(1 for x in per_sec if x < 0.1 * med_sec) / len(per_sec) if per_sec else float("nan")
    late = nskip
    if wl.latency_limit_ms:
        late += sum(1 for l in lats if l > wl.latency_limit_ms)
    row = {
        "scenario": sc.name, "group": cfg.group, "workload": wl.name, "clients": clients,
        "config": cfg.name, "rep": rep, "order": order, "run": runid,
        "tps": round(tps, 2), "lat_avg_ms": round(sum(lats) / len(lats), 3) if lats else "",
        "p99_ms": round(pct(lats, 0.99), 3) if lats else "", "max_ms": round(lats[-1], 3) if lats else "",
        "txns": len(tx), "skipped": nskip,
        "late_pct": round(100.0 * late / len(tx), 3) if (tx and wl.latency_limit_ms) else "",
        "stalled_sec_pct": round(stalled, 2),
        "aux_cpu_ms": round(cpu1 - cpu0, 1),
        "wall_s": round(t_wall1 - t_wall0, 2),
        "meta": json.dumps(cfg.meta, sort_keys=True),
    }
    if emu0 and emu1:
        d = {k: emu1[k] - emu0[k] for k in emu1 if isinstance(emu1[k], int) and k in emu0}
        hist = [a - b for a, b in zip(emu1["wal_flush_hist"], emu0["wal_flush_hist"])]
        nf = d["n_flush_wal"]
        row.update({
            "wal_flushes": nf,
            "wal_flush_avg_ms": round(d["wal_flush_ns"] / nf / 1e6, 3) if nf else "",
            "wal_flush_p99_le_ms": hist_quantile(hist, 0.99),
            "wal_flush_max_ms": round(emu1["wal_flush_max_ns"] / 1e6, 2),
            "data_fsyncs": d["n_flush_data"],
            "data_fsync_max_ms": round(emu1["data_flush_max_ns"] / 1e6, 2),
            "mb_fsync": round(d["bytes_flushed_sync"] / 1e6, 2),
            "mb_sfr": round(d["bytes_writeback_sfr"] / 1e6, 2),
            "mb_bgwb": round(d["bytes_writeback_bg"] / 1e6, 2),
            "device_util_pct": round(100.0 * d["device_busy_ns"] / 1e9 / max(0.001, t_wall1 - t_wall0), 1),
        })
        if emu1.get("iops"):
            # token bucket (iops=, burst=): requests that found it empty, and their wait
            nr, nw = d.get("tb_requests", 0), d.get("tb_waited", 0)
            row.update({
                "device_requests": nr,
                "tb_waited_pct": round(100.0 * nw / nr, 1) if nr else "",
                "tb_wait_avg_ms": round(d["tb_wait_ns"] / nw / 1e6, 3) if nw else "",
            })
    ev = server_events(cl, t0, t_wall1 + 1, sc.events_regex)
    ckpt = [e for e in ev if "checkpoint complete" in e[1]]
    row["checkpoints"] = len(ckpt)
    bufs = [int(x) for _, e in ckpt for x in re.findall(r"wrote (\d+) buffers", e)]
    row["ckpt_mb"] = round(sum(bufs) * 8192 / 1e6 / max(1, len(bufs)), 1) if bufs else ""
    syncs = [float(x) for _, e in ckpt for x in re.findall(r"sync=([\d.]+) s", e)]
    row["ckpt_sync_s_max"] = max(syncs) if syncs else ""
    # store the per-second series and events
    base = f"{cfg.group or 'all'}__{wl.name}__c{clients}__{cfg.name}__r{rep}".replace("/", "_")
    with open(os.path.join(ctx.out, "series", base + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["sec", "tps", "skipped", "p99_ms", "lat_avg_ms"])
        w.writeheader()
        w.writerows(ser)
    with open(os.path.join(ctx.out, "series", base + ".events"), "w") as f:
        for t, e in ev:
            f.write(f"{t - t0:.2f}\t{e}\n")
    row["series"] = base
    return row


# --------------------------------------------------------------------------
# orchestration
# --------------------------------------------------------------------------
class Ctx:
    pass


def free_port_factory():
    used = set()

    def f():
        import socket
        while True:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            s.close()
            if port not in used and port > 20000:
                used.add(port)
                return port
    return f


def cluster_key(cfg):
    restart_conf = sorted(l.strip() for l in cfg.conf if not is_reloadable(l))
    return json.dumps([sorted(cfg.env.items()), restart_conf, cfg.setup_sql])


def scenario_from_json(path, opts):
    """A scenario as data: {"name", "configs": [{"name", "conf", "env", "setup_sql", "group",
    "baseline"}], "workloads": [{"name", "args", "script", "conf", "rate", "latency_limit_ms"}],
    "clients", "reps", "duration", "scale", "base_conf", "quick": {overrides}}"""
    with open(path) as f:
        d = json.load(f)
    if opts.quick:
        d.update(d.get("quick", {}))
    configs = [Config(**{k: v for k, v in c.items() if k in Config.__dataclass_fields__}) for c in d["configs"]]
    wls = [Workload(**{k: v for k, v in w.items() if k in Workload.__dataclass_fields__}) for w in d["workloads"]]
    kw = {k: d[k] for k in ("reps", "duration", "scale", "base_conf", "checkpoint_before_run", "events_regex",
                             "plot_events", "cpu_regex", "notes") if k in d}
    return Scenario(name=d.get("name", os.path.basename(path)[:-5]), configs=configs, workloads=wls,
                    clients=d.get("clients", [8]), **kw)


def load_scenario(name, opts):
    if name.endswith(".json"):
        return scenario_from_json(name, opts)
    path = name if name.endswith(".py") else os.path.join(HERE, "scenarios", name.replace("-", "_") + ".py")
    if not os.path.exists(path):
        avail = sorted(f[:-3].replace("_", "-") for f in os.listdir(os.path.join(HERE, "scenarios"))
                       if f.endswith(".py") and not f.startswith("_"))
        sys.exit(f"unknown scenario {name}; available: {', '.join(avail)}")
    spec = importlib.util.spec_from_file_location("scenario_" + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    for d in (os.path.join(HERE, "scenarios"), HERE):
        if d not in sys.path:
            sys.path.insert(0, d)
    sys.modules.setdefault("bench", sys.modules[__name__])
    spec.loader.exec_module(mod)
    return mod.build(opts)


def fmt_range(xs, nd=0):
    if not xs:
        return ""
    f = f"{{:.{nd}f}}"
    return f"{f.format(median(xs))} [{f.format(min(xs))}–{f.format(max(xs))}]"


def summarize(ctx, rows):
    """medians per (group, workload, clients, config) + ratio to the group baseline."""
    sc = ctx.scenario
    cells = {}
    for r in rows:
        cells.setdefault((r["group"], r["workload"], r["clients"]), {}).setdefault(r["config"], []).append(r)
    baselines = {c.group: c.name for c in sc.configs if c.baseline}
    summ = []
    lines = []
    metric_cols = [("p99_ms", "p99 ms", 1), ("late_pct", "late %", 2), ("stalled_sec_pct", "stall s %", 1),
                   ("wal_flush_avg_ms", "walfl ms", 2), ("wal_flush_max_ms", "walfl max", 0),
                   ("aux_cpu_ms", "auxcpu ms", 0)]
    for (g, w, n), byc in cells.items():
        base = baselines.get(g)
        bmed = median([r["tps"] for r in byc.get(base, [])]) if base in byc else None
        used = [(k, h, nd) for k, h, nd in metric_cols
                if any(r.get(k) not in ("", None, 0, 0.0) for rs in byc.values() for r in rs)]
        lines.append(f"\n[{g or sc.name}] workload={w} clients={n}  (baseline: {base})")
        hdr = f"  {'config':<22} {'tps median [min–max]':>26} {'ratio':>6}" + "".join(f" {h:>16}" for _, h, _ in used)
        lines.append(hdr)
        for cfgname, rs in byc.items():
            tps = [r["tps"] for r in rs]
            ratio = median(tps) / bmed if bmed else float("nan")
            s = {"group": g, "workload": w, "clients": n, "config": cfgname, "n": len(rs),
                 "tps_median": round(median(tps), 1), "tps_min": min(tps), "tps_max": max(tps),
                 "ratio": round(ratio, 3), "meta": rs[0]["meta"]}
            line = f"  {cfgname:<22} {fmt_range(tps):>26} {ratio:>6.2f}"
            for k, h, nd in used:
                vals = [float(r[k]) for r in rs if r.get(k) not in ("", None)]
                s[k + "_median"] = round(median(vals), 3) if vals else ""
                line += f" {fmt_range(vals, nd):>16}"
            for k in ("wal_flush_avg_ms", "late_pct", "stalled_sec_pct", "p99_ms", "wal_flush_max_ms"):
                if k + "_median" not in s:
                    vals = [float(r[k]) for r in rs if r.get(k) not in ("", None)]
                    s[k + "_median"] = round(median(vals), 3) if vals else ""
            summ.append(s)
            lines.append(line)
    return summ, "\n".join(lines)


def write_csv(path, rows):
    if not rows:
        return
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf", "#000000", "#aec7e8"]


def plot(ctx, rows):
    if not shutil.which("gnuplot"):
        log("gnuplot not found: no plots")
        return
    sc = ctx.scenario
    cells = {}
    for r in rows:
        cells.setdefault((r["group"], r["workload"], r["clients"]), {}).setdefault(r["config"], []).append(r)
    pdir = os.path.join(ctx.out, "plots")
    os.makedirs(pdir, exist_ok=True)
    for (g, w, n), byc in cells.items():
        if sc.plot_filter and not sc.plot_filter(g, w, n):
            continue
        # the median-tps repetition of each config
        pick = {}
        for c, rs in byc.items():
            rs = sorted(rs, key=lambda r: r["tps"])
            pick[c] = rs[len(rs) // 2]["series"]
        name = f"{g or sc.name}_{w}_c{n}".replace("/", "_")
        gp = [f"set terminal pngcairo size 1100,{700 if not sc.plot_events else 350 + 170 * len(pick)} font ',9'",
              f"set output '{os.path.join(pdir, name + '.png')}'",
              "set termoption noenhanced",
              "set datafile separator ','", "set key outside right", "set grid"]
        if not sc.plot_events:
            gp += ["set multiplot layout 2,1 title '" + f"{sc.name}: {g} {w} clients={n} (median repetition)" + "'",
                   "set ylabel 'tps'", "set yrange [0:*]"]
            gp.append("plot " + ", ".join(
                f"'{os.path.join(ctx.out, 'series', s + '.csv')}' using 1:2 skip 1 with lines lw 1.5 "
                f"lc rgb '{COLORS[i % len(COLORS)]}' dt {1 + i // len(COLORS)} title '{c}'"
                for i, (c, s) in enumerate(pick.items())))
            gp += ["set ylabel 'p99 latency (ms)'", "set xlabel 'second'", "set logscale y", "set yrange [*:*]"]
            gp.append("plot " + ", ".join(
                f"'{os.path.join(ctx.out, 'series', s + '.csv')}' using 1:4 skip 1 with lines lw 1.5 "
                f"lc rgb '{COLORS[i % len(COLORS)]}' dt {1 + i // len(COLORS)} title '{c}'"
                for i, (c, s) in enumerate(pick.items())))
        else:
            gp += [f"set multiplot layout {len(pick)},1 title '{sc.name}: {g} {w} clients={n}"
                   " (tps left, p99 ms right/log; checkpoint/walpilot events marked)'",
                   "set ytics nomirror", "set y2tics", "set logscale y2", "set y2label 'p99 ms'", "set ylabel 'tps'",
                   "set yrange [0:*]"]
            for c, s in pick.items():
                gp.append("unset arrow; unset label")
                evf = os.path.join(ctx.out, "series", s + ".events")
                for evl in open(evf):
                    t, e = evl.rstrip("\n").split("\t", 1)
                    col = "#cc0000" if "complete" in e else ("#888888" if "starting" in e else "#0066cc")
                    gp.append(f"set arrow from {t}, graph 0 to {t}, graph 1 nohead lc rgb '{col}' dt 2")
                gp.append(f"set title '{c}'")
                f = os.path.join(ctx.out, "series", s + ".csv")
                gp.append(f"plot '{f}' using 1:2 skip 1 with lines lw 1.5 title 'tps' axes x1y1, "
                          f"'{f}' using 1:4 skip 1 with lines title 'p99 ms' axes x1y2")
        gp.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(gp), text=True, capture_output=True)


def _num(v):
    try:
        f = float(v)
        return int(f) if f.is_integer() and "." not in v else f
    except (TypeError, ValueError):
        return v


def reanalyze(sc, opts):
    ctx = Ctx()
    ctx.scenario = sc
    ctx.out = opts.reanalyze.rstrip("/")
    with open(os.path.join(ctx.out, "runs.csv")) as f:
        rows = [{k: (_num(v) if k not in ("config", "group", "workload", "series", "meta", "scenario", "run")
                     else v) for k, v in r.items()} for r in csv.DictReader(f)]
    for r in rows:
        r["tps"] = float(r["tps"])
    reps = len({r["rep"] for r in rows})
    write_report(ctx, sc, rows, [f"# {sc.name}: {reps} reps (re-analysed from {ctx.out}/runs.csv)"])
    return 0


def write_report(ctx, sc, rows, header):
    """summary.csv, report.txt (header lines, notes, tables, analysis), printed, and plots"""
    summ, text = summarize(ctx, rows)
    write_csv(os.path.join(ctx.out, "summary.csv"), summ)
    report = header + [sc.notes, text]
    if sc.analyze:
        report.append(sc.analyze(ctx, rows, summ))
    report = "\n".join(report)
    with open(os.path.join(ctx.out, "report.txt"), "w") as f:
        f.write(report + "\n")
    print(report)
    plot(ctx, rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario")
    ap.add_argument("--quick", action="store_true", help="CI smoke size (a few minutes)")
    ap.add_argument("--reps", type=int, help="repetitions (interleaved)")
    ap.add_argument("--duration", type=int, help="seconds per run")
    ap.add_argument("--clients", help="comma list of client counts")
    ap.add_argument("--profiles", help="comma list of storage profiles (scenario-specific)")
    ap.add_argument("--workloads", help="comma list of workload names")
    ap.add_argument("--scale", type=int, help="pgbench scale")
    ap.add_argument("--set", action="append", default=[], metavar="K=V", help="scenario option")
    ap.add_argument("--jobs", type=int, default=2, help="pgbench -j upper bound")
    ap.add_argument("--out", help="results directory (default test/bench/results/SCENARIO-TIMESTAMP)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reanalyze", metavar="DIR", help="rebuild report/plots of a results directory from runs.csv")
    ap.add_argument("--strict", action="store_true", help="exit 1 if an acceptance check FAILs")
    opts = ap.parse_args()
    opts.options = dict(kv.split("=", 1) for kv in opts.set)

    sc = load_scenario(opts.scenario, opts)
    if opts.reps:
        sc.reps = opts.reps
    if opts.duration:
        sc.duration = opts.duration
    if opts.clients:
        sc.clients = [int(x) for x in opts.clients.split(",")]
    if opts.scale:
        sc.scale = opts.scale
    if opts.workloads:
        keep = opts.workloads.split(",")
        sc.workloads = [w for w in sc.workloads if w.name in keep]

    if opts.reanalyze:
        return reanalyze(sc, opts)

    if not os.path.exists(SHIM) or not os.path.exists(EMU_STAT):
        log("building the storage emulator (make -C test/emulator)")
        subprocess.run(["make", "-s", "-C", EMU_DIR], check=True)

    ctx = Ctx()
    ctx.scenario = sc
    ctx.jobs = opts.jobs
    ctx.nrun = 0
    ctx.ok = True
    ctx.free_port = free_port_factory()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    ctx.out = opts.out or os.path.join(HERE, "results", f"{sc.name}{'-quick' if opts.quick else ''}-{stamp}")
    os.makedirs(os.path.join(ctx.out, "series"), exist_ok=True)
    ctx.tmp = tempfile.mkdtemp(prefix="walpilot-bench-")
    os.chmod(ctx.tmp, 0o755)

    def chown(path):
        if IS_ROOT:
            shutil.chown(path, "postgres", "postgres")
    ctx.chown = chown
    chown(ctx.tmp)

    # skip configurations whose preload libraries are not installed
    libdir = pkglibdir()
    configs = []
    for c in sc.configs:
        missing = [l for l in preload_libs(c.conf) if not os.path.exists(os.path.join(libdir, l + ".so"))]
        if missing:
            log(f"SKIP config {c.name}: shared_preload_libraries {missing} not installed in {libdir} "
                f"(build and install the extension: make install)")
            continue
        configs.append(c)
    sc.configs = configs

    clusters = {}
    ctx.cluster_of = {}

    def cleanup(*_):
        for cl in clusters.values():
            try:
                cl.destroy()
            except Exception as e:  # noqa
                log(f"cleanup: {e}")
        shutil.rmtree(ctx.tmp, ignore_errors=True)

    def on_signal(signum, frame):
        log(f"signal {signum}: stopping clusters")
        cleanup()
        sys.exit(1)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    rows = []
    try:
        log(f"== scenario {sc.name}{' (quick)' if opts.quick else ''}: {len(sc.configs)} configs, "
            f"{len(sc.workloads)} workloads, clients {sc.clients}, {sc.reps} reps x {sc.duration}s; out {ctx.out}")
        for c in sc.configs:
            k = cluster_key(c)
            if k not in clusters:
                cl = Cluster(ctx, k, c.env, [l for l in c.conf if not is_reloadable(l)], c.setup_sql)
                try:
                    cl.create()
                except Exception as e:
                    log(f"SKIP cluster {cl.label()}: {str(e)[:800]}")
                    cl.destroy()
                    cl = None
                clusters[k] = cl
            if clusters[k] is not None:
                ctx.cluster_of[id(c)] = clusters[k]
        sc.configs = [c for c in sc.configs if id(c) in ctx.cluster_of]
        clusters = {k: v for k, v in clusters.items() if v is not None}
        # cells, in order
        groups = []
        for c in sc.configs:
            if c.group not in groups:
                groups.append(c.group)
        cells = []
        for g in groups:
            gcfgs = [c for c in sc.configs if c.group == g]
            ns = sorted(set(sc.clients) | {n for c in gcfgs for n in (c.clients or [])})
            for w in sc.workloads:
                for n in ns:
                    cfgs = [c for c in gcfgs if (c.workloads is None or w.name in c.workloads)
                            and ((c.clients is None and n in sc.clients) or (c.clients and n in c.clients))]
                    if cfgs:
                        cells.append((g, w, n, cfgs))
        total = sum(len(c[3]) for c in cells) * sc.reps
        if total == 0:
            raise SystemExit("nothing to run (all configurations skipped)")
        # a scenario may give a configuration its own run length (meta duration)
        est = sc.reps * sum(c.meta.get("duration", sc.duration) + 2 for cell in cells for c in cell[3])
        log(f"   {total} runs, ~{est // 60} min")
        rng = random.Random(opts.seed)
        done = 0
        t_begin = time.time()
        for rep in range(sc.reps):
            for g, w, n, cfgs in cells:
                order = list(cfgs)
                if sc.order:
                    order = sc.order(rep, order)
                else:
                    rng.shuffle(order)
                for i, cfg in enumerate(order):
                    r = do_run(ctx, cfg, w, n, rep, i)
                    rows.append(r)
                    done += 1
                    el = time.time() - t_begin
                    extra = "".join(f" {k}={r[k]}" for k in ("p99_ms", "late_pct", "stalled_sec_pct",
                                                             "wal_flush_avg_ms", "wal_flush_max_ms")
                                    if r.get(k) not in ("", None))
                    log(f"  [{done}/{total} {el / 60:.1f}m] rep{rep} {g} {w.name} c={n} {cfg.name}: "
                        f"tps={r['tps']}{extra}")
                write_csv(os.path.join(ctx.out, "runs.csv"), rows)
    finally:
        cleanup()
    write_csv(os.path.join(ctx.out, "runs.csv"), rows)
    write_report(ctx, sc, rows,
                 [f"# {sc.name}{' --quick' if opts.quick else ''}: {sc.reps} reps x {sc.duration}s, "
                  f"scale {sc.scale}, {os.uname().nodename}, {os.cpu_count()} cpus, {time.strftime('%Y-%m-%d %H:%M')}",
                  "# command: " + " ".join(["test/bench/run"] + sys.argv[1:])])
    latest = os.path.join(HERE, "results", f"{sc.name}{'-quick' if opts.quick else ''}-latest")
    try:
        if os.path.islink(latest):
            os.unlink(latest)
        os.symlink(os.path.basename(ctx.out), latest)
    except OSError:
        pass
    log(f"\nresults: {ctx.out}/ (runs.csv, summary.csv, report.txt, series/, plots/)")
    if opts.strict and "-> FAIL" in report:
        ctx.ok = False
    return 0 if getattr(ctx, "ok", True) else 1


if __name__ == "__main__":
    sys.exit(main())
