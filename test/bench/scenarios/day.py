"""day: a compressed day in production, the same schedule against the
defaults, walpilot.mode = tune and the best single static
commit_delay/commit_siblings (test/bench/README-day.md).

Phases (seconds, each a --set parameter; --set phase_s=N sets them all):
  night    180  2 clients of one-row inserts at a fixed rate (pgbench -R)
  morning  240  4 -> 8 -> 16 -> 32 clients of inserts, in equal steps
  peak     240  sysbench oltp_write_only, 32 threads, beside 8 pgbench insert clients
  batch    240  bulk INSERT ... SELECT in a loop beside sysbench (16) and pgbench (4):
                checkpoints by WAL volume (max_wal_size) and by time (checkpoint_timeout)
  bursts   180  8 insert clients, and 64 in all for 10 s every 30 s
  evening  120  8 -> 4 -> 2 clients of inserts

Per storage profile (default "3ms;tbucket": 3 ms + 0-1 ms jitter, and the
token bucket) one cluster holds every configuration; before each run the
server is restarted (a fresh pilot), pgbench_history and the bulk table are
emptied and vacuumed, and the run's settings are in force from the start:
  defaults  commit_delay 0 / siblings 5, walpilot loaded in observe mode (its views
            measure; --set observe=0 runs the defaults and static without walpilot)
  tune      walpilot.mode = tune (no commit_delay line: the pilot owns it)
  static    the best static setting of a sweep on the peak phase (each candidate
            --set sweep_s seconds after a warm-up), or --set static=D/S
Runs rotate through the configurations, one place further each repetition.

--set soak_min=80: the day schedule repeated in tune mode (one profile) until
soak_min minutes are over, sampling every --set sample_s=60 s the worker's and
the postmaster's RSS, walpilot's shared memory, every walpilot view's rows,
the decision log and walpilot's lines in the server log (soak.csv); the report
flags growth after --set soak_warmup_min=10 of more than 1 MB and every
walpilot WARNING or ERROR.
"""
import array
import atexit
import csv
import json
import math
import os
import re
import signal
import subprocess
import threading
import time

import bench
from bench import Scenario, Config, Workload, median, pct, log, RUNAS, BINDIR
from _common import profile, INSERT, decision_evidence

PHASES = ["night", "morning", "peak", "batch", "bursts", "evening"]
DEFAULT_S = {"night": 180, "morning": 240, "peak": 240, "batch": 240, "bursts": 180, "evening": 120}
# profile names of this scenario besides the emulator's own
ALIASES = {"3ms": "flush_us=3000,jitter_us=1000,bw_mbps=125"}
TRIAL_STATES = ("trial", "re-check")
LIVE = []        # load generators running (process group leaders), stopped at exit


def _stop_live():
    for p in list(LIVE):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except OSError:
                pass
    for p in list(LIVE):
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
    LIVE.clear()


atexit.register(_stop_live)


class Opts:
    """the scenario's --set parameters, with their defaults"""

    def __init__(self, o, quick):
        def i(k, d):
            return int(float(o.get(k, d)))
        every = o.get("phase_s")
        self.phase_s = {p: i(p + "_s", every if every else (DEFAULT_S[p] // 4 if quick else DEFAULT_S[p]))
                        for p in PHASES}
        self.night_clients = i("night_clients", 2)
        self.night_rate = i("night_rate", 50)
        self.morning_steps = [int(x) for x in o.get("morning_steps", "4,8,16,32").split(",")]
        self.peak_sb = i("peak_sb", 32)
        self.peak_pg = i("peak_pg", 8)
        self.sb_test = o.get("sb_test", "oltp_write_only")
        self.sb_tables = i("sb_tables", 4)
        self.sb_rows = i("sb_rows", 100000)
        self.batch_sb = i("batch_sb", 16)
        self.batch_pg = i("batch_pg", 4)
        self.bulk_rows = i("bulk_rows", 100000)
        self.bulk_max_mb = i("bulk_max_mb", 512)
        self.burst_base = i("burst_base", 8)
        self.burst_clients = i("burst_clients", 64)
        self.burst_len = i("burst_len", 10)
        self.burst_period = i("burst_period", 30)
        self.evening_steps = [int(x) for x in o.get("evening_steps", "8,4,2").split(",")]
        self.ckpt_timeout = o.get("checkpoint_timeout", "2min")
        self.max_wal_size = o.get("max_wal_size", "512MB")
        self.sweep_s = i("sweep_s", 30)
        self.sweep_warm_s = i("sweep_warm_s", 10)
        self.sweep = o.get("sweep", "")
        self.static = o.get("static", "")
        self.observe = o.get("observe", "1") != "0"
        self.tune_conf = [x.strip() for x in o.get("tune_conf", "").split(";") if x.strip()]
        self.soak_min = float(o.get("soak_min", 0))
        self.sample_s = i("sample_s", 60)
        self.soak_warmup_min = float(o.get("soak_warmup_min", 10))
        self.pilot_poll_s = float(o.get("pilot_poll_s", 1))
        self.pred_poll_s = float(o.get("pred_poll_s", 5))

    def day_s(self):
        return sum(self.phase_s.values())


def build(opts):
    o = opts.options
    D = Opts(o, opts.quick)
    soak = D.soak_min > 0
    names = (opts.profiles.split(";") if opts.profiles and ";" in opts.profiles
             else opts.profiles.split(",") if opts.profiles else ["3ms", "tbucket"])
    names = [n.strip() for n in names if n.strip()]
    if soak:
        names = names[:1]
    wp = ["shared_preload_libraries = 'walpilot'"]
    setup = ["CREATE EXTENSION walpilot"]
    configs = []
    for pname in names:
        spec = ALIASES.get(pname, pname)
        label, spec, F = profile(spec)
        if pname in ALIASES:
            label = pname
        env = {"WALPILOT_STORAGE": spec}
        tune = Config("tune", wp + ["walpilot.mode = 'tune'"] + D.tune_conf, env, setup_sql=setup,
                      group=label, meta={"kind": "tune", "F_us": F})
        if soak:
            tune.baseline = True
            configs.append(tune)
            continue
        other = (wp + ["walpilot.mode = 'observe'"]) if D.observe else []
        configs.append(Config("defaults", other + ["commit_delay = 0", "commit_siblings = 5"], env,
                              setup_sql=setup if D.observe else [], group=label, baseline=True,
                              meta={"kind": "defaults", "F_us": F}))
        configs.append(tune)
        configs.append(Config("static", other + ["commit_delay = 0", "commit_siblings = 5"], env,
                              setup_sql=setup if D.observe else [], group=label,
                              meta={"kind": "static", "F_us": F}))
    base_conf = ["shared_buffers = 256MB", f"checkpoint_timeout = {D.ckpt_timeout}",
                 f"max_wal_size = {D.max_wal_size}", "min_wal_size = 80MB", "wal_init_zero = off",
                 "autovacuum = on", "log_autovacuum_min_duration = 0"]
    day = D.day_s()
    if soak:
        day *= max(1, math.ceil(D.soak_min * 60 / max(1, day)))   # whole days: the run's length
    notes = ("# day: phases " + ", ".join(f"{p} {D.phase_s[p]} s" for p in PHASES) + f" ({D.day_s() / 60:.1f} min)"
             + (f"; soak: the day repeated for >= {D.soak_min:g} min in tune mode, samples every {D.sample_s} s"
                if soak else "; configurations rotate one place per repetition; a fresh server per run"))
    sc = Scenario(
        name="day-soak" if soak else "day", configs=configs, workloads=[Workload("day", [], script=INSERT.script)],
        clients=[D.peak_sb], reps=1 if (soak or opts.quick) else 3, duration=day, scale=1,
        base_conf=base_conf, checkpoint_before_run=False,
        events_regex=r"checkpoint starting|checkpoint complete|automatic vacuum|walpilot",
        analyze=analyze, plot_filter=lambda *a: False, notes=notes)
    sc.order = lambda rep, cfgs: cfgs[rep % len(cfgs):] + cfgs[:rep % len(cfgs)]
    sc.day = D
    sc.soak = soak
    bench.do_run = day_run
    # its own emulator state name (the harness's is walpilot-emu-bench-PID-N)
    orig_init = bench.Cluster.__init__

    def init(self, *a, **k):
        orig_init(self, *a, **k)
        if self.shm:
            self.shm = self.shm.replace("walpilot-emu-bench-", "walpilot-emu-day-")
    # walpilot.mode is a sighup setting the harness cannot look up (an
    # extension's): reloadable here, so every configuration of a profile
    # shares one cluster and the run's mode comes from bench_run.conf
    orig_rel = bench.is_reloadable
    if not getattr(orig_rel, "_day", False):
        def is_reloadable(line):
            return bench.guc_name(line) == "walpilot.mode" or orig_rel(line)
        is_reloadable._day = True
        bench.is_reloadable = is_reloadable
    if not getattr(bench.Cluster.__init__, "_day", False):
        init._day = True
        bench.Cluster.__init__ = init
    return sc


# --------------------------------------------------------------------------
# load generators and the recording of one run
# --------------------------------------------------------------------------
class Recorder:
    """Starts the load of one run (pgbench, sysbench, bulk loads), keeps
    its phases, parses the clients' logs into per-second series, polls the
    pilots' state every second and, in a soak, samples memory and views."""

    def __init__(self, ctx, cl, runid, has_wp, seed):
        self.ctx, self.cl, self.runid, self.has_wp = ctx, cl, runid, has_wp
        self.D = ctx.scenario.day
        self.seed = seed
        self.k = 0
        self.t0 = time.time()
        self.phases = []           # {name, iter, t0, t1, hist0, hist1}
        self.pg_sec = {}           # second -> array of pgbench latencies (ms)
        self.pg_phase = {}         # phase index -> array of latencies
        self.pg_fail = 0
        self.sb_sec = {}           # second -> [tps, p99, errors/s]
        self.sb_phase = {}         # phase index -> [{txns, tps, p99, secs, errors}]
        self.pilot = []            # (t, [{pilot, state, setting, candidate}])
        self.pred = []             # (t, walpilot.prediction()), every pred_poll_s
        self.soak = []             # sample dicts
        self.decisions = {}        # (t, setting, reason) -> row
        self.wp = {}               # second -> walpilot.timeline's (commits, p99 us, WAL bytes)
        self.bulk = {}             # phase index -> [statements, rows, truncates, timeouts]
        self.pending = []          # (kind, phase index, path/prefix, t_start)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = None
        self.log_off = 0
        self.log_counts = {"LOG": 0, "WARNING": 0, "ERROR": 0}
        self.other_problems = []   # server WARNING/ERROR/FATAL/PANIC lines not from walpilot
        self.wp_problems = []

    # ---- processes
    def _spawn(self, cmd, out=None, env=None):
        full = RUNAS + (["env"] + [f"{k}={v}" for k, v in env.items()] if env else []) + cmd
        f = open(out, "w") if out else subprocess.DEVNULL
        p = subprocess.Popen(full, stdout=f, stderr=subprocess.STDOUT if out else subprocess.DEVNULL,
                             cwd=self.ctx.tmp, start_new_session=True)
        if out:
            f.close()
        LIVE.append(p)
        return p

    def pgbench(self, clients, secs, rate=None):
        self.k += 1
        prefix = f"{self.runid}_{self.k}"
        sp = os.path.join(self.ctx.tmp, "day-insert.sql")
        if not os.path.exists(sp):
            with open(sp, "w") as f:
                f.write(INSERT.script)
            self.ctx.chown(sp)
        cmd = [os.path.join(BINDIR, "pgbench"), "-n", "-M", "prepared", "-h", self.cl.sock, "-p", str(self.cl.port),
               "-c", str(clients), "-j", str(min(clients, self.ctx.jobs)), "-T", str(max(1, int(secs))),
               "--log", f"--log-prefix={self.ctx.tmp}/{prefix}", f"--random-seed={self.seed + self.k}",
               "-f", sp]
        if rate:
            cmd += ["-R", str(rate)]
        p = self._spawn(cmd + ["postgres"], out=os.path.join(self.ctx.tmp, prefix + ".out"))
        self.pending.append(("pg", len(self.phases) - 1, prefix, time.time()))
        return p

    def sb_args(self, threads=1):
        cl = self.cl
        return [self.D.sb_test, "--db-driver=pgsql", f"--pgsql-host={cl.sock}", f"--pgsql-port={cl.port}",
                "--pgsql-user=postgres", "--pgsql-db=postgres", f"--tables={self.D.sb_tables}",
                f"--table-size={self.D.sb_rows}", f"--threads={threads}"]

    def sysbench(self, threads, secs):
        self.k += 1
        out = os.path.join(self.ctx.tmp, f"{self.runid}_{self.k}.sysbench")
        cmd = ["sysbench"] + self.sb_args(threads) + [f"--time={max(1, int(secs))}", "--report-interval=1",
                                                      "--percentile=99", f"--rand-seed={self.seed + self.k}",
                                                      "run"]
        p = self._spawn(cmd, out=out)
        self.pending.append(("sb", len(self.phases) - 1, out, time.time()))
        return p

    def wait(self, procs, limit):
        """wait for procs; past limit seconds (a hung client) stop them"""
        end = time.time() + limit
        for p in procs:
            try:
                p.wait(timeout=max(1, end - time.time()))
            except subprocess.TimeoutExpired:
                log(f"    a load generator outlived its phase by {limit:.0f} s: stopped")
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except OSError:
                    pass
                p.wait()
            if p in LIVE:
                LIVE.remove(p)

    def bulk_load(self, secs):
        """INSERT ... SELECT in a loop until secs are over (each statement
        bounded by statement_timeout); the table is emptied when it passes
        bulk_max_mb, as a loaded staging table is"""
        st = self.bulk.setdefault(len(self.phases) - 1, [0, 0, 0, 0])
        end = time.time() + secs
        while end - time.time() > 1.5:
            ms = int((end - time.time()) * 1000)
            sql = ("INSERT INTO day_bulk SELECT g, md5(g::text) || md5((g + 1)::text), now() "
                   f"FROM generate_series(1, {self.D.bulk_rows}) g")
            p = bench.run([os.path.join(BINDIR, "psql"), "-X", "-q", "-h", self.cl.sock, "-p", str(self.cl.port),
                           "-d", "postgres", "-c", sql], check=False, env={"PGOPTIONS": f"-c statement_timeout={ms}"})
            st[0] += 1
            if p.returncode == 0:
                st[1] += self.D.bulk_rows
            elif "statement timeout" in p.stderr:
                st[3] += 1
            else:
                log(f"    bulk load: {p.stderr.strip()[:200]}")
                time.sleep(1)
            mb = self.cl.psql("SELECT pg_total_relation_size('day_bulk') / 1048576", check=False).stdout.strip()
            if mb.isdigit() and int(mb) > self.D.bulk_max_mb:
                self.cl.psql("TRUNCATE day_bulk", check=False)
                st[2] += 1

    # ---- phases
    def hist(self):
        if not self.has_wp:
            return None
        p = self.cl.psql("SELECT coalesce(json_agg(json_build_array(bucket_lower_us, bucket_upper_us, commits)), "
                         "'[]') FROM walpilot.commit_latency", check=False)
        try:
            return json.loads(p.stdout.strip())
        except ValueError:
            return None

    def phase(self, name, it, fn, secs):
        self.phases.append({"name": name, "iter": it, "t0": time.time(), "hist0": self.hist(), "secs": secs})
        fn(self, secs)
        ph = self.phases[-1]
        ph["t1"] = time.time()
        ph["hist1"] = self.hist()
        self.fetch_decisions()
        self.fetch_timeline(ph["t0"] - 1)
        log(f"    {name}{f' (day {it + 1})' if it else ''}: {ph['t1'] - ph['t0']:.0f} s")

    def fetch_timeline(self, since):
        """walpilot.timeline's seconds since `since` (kept as they come: a
        soak outlasts walpilot.history_size)"""
        if not self.has_wp:
            return
        p = self.cl.psql("SELECT coalesce(json_agg(json_build_array(extract(epoch FROM ts)::float8, commits, "
                         "commit_p99_us, wal_bytes)), '[]') FROM walpilot.timeline "
                         f"WHERE ts >= to_timestamp({since})", check=False)
        try:
            for t, c, p99, wb in json.loads(p.stdout.strip() or "[]"):
                self.wp[int(t - self.t0)] = (c, p99, wb)
        except ValueError:
            pass

    def fetch_decisions(self):
        if not self.has_wp:
            return
        p = self.cl.psql("SELECT coalesce(json_agg(d), '[]') FROM (SELECT extract(epoch FROM decided_at)::float8 AS t, "
                         "setting, old_value, new_value, reason, outcome, evidence FROM walpilot.decisions "
                         f"WHERE decided_at >= to_timestamp({self.t0})) d", check=False)
        try:
            for d in json.loads(p.stdout.strip() or "[]"):
                self.decisions[(round(d["t"], 3), d["setting"], d["reason"])] = d
        except ValueError:
            pass

    # ---- the sampler thread: the pilots' state every second, a soak sample every sample_s
    def start_sampler(self, soak):
        def loop():
            next_soak = next_pred = time.time()
            while not self.stop.is_set():
                t = time.time()
                if self.has_wp:
                    p = self.cl.psql("SELECT coalesce(json_agg(json_build_object('p', pilot, 's', state, 'v', setting, "
                                     "'c', candidate)), '[]') FROM walpilot.pilots", check=False)
                    try:
                        self.pilot.append((t, json.loads(p.stdout.strip())))
                    except ValueError:
                        pass
                if self.has_wp and t >= next_pred:
                    # the commit-path model's prediction (NULL-safe on a build without it)
                    p = self.cl.psql("SELECT walpilot.prediction()", check=False)
                    try:
                        self.pred.append((t, json.loads(p.stdout.strip())))
                    except ValueError:
                        pass
                    next_pred += self.D.pred_poll_s
                if soak and t >= next_soak:
                    try:
                        self.soak.append(self.soak_sample())
                    except Exception as e:  # noqa: a sample must not end the soak
                        log(f"    soak sample failed: {e}")
                    next_soak += self.D.sample_s
                self.stop.wait(max(0.05, self.D.pilot_poll_s - (time.time() - t)))
        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()

    def end_sampler(self):
        self.stop.set()
        if self.thread:
            self.thread.join(timeout=30)

    def _children(self):
        out = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                st = open(f"/proc/{pid}/stat").read()
                if int(st.rsplit(")", 1)[1].split()[1]) != self.cl.pid:
                    continue
                out[int(pid)] = open(f"/proc/{pid}/cmdline").read().replace("\0", " ").strip()
            except (OSError, IndexError, ValueError):
                pass
        return out

    @staticmethod
    def _mem(pid):
        d = {}
        try:
            for line in open(f"/proc/{pid}/status"):
                k, _, v = line.partition(":")
                if k in ("VmRSS", "RssAnon", "RssShmem"):
                    d[k] = int(v.split()[0])
        except OSError:
            pass
        return d

    def soak_sample(self):
        t = time.time()
        s = {"t_min": round((t - self.t0) / 60, 2)}
        workers = [pid for pid, c in self._children().items() if "walpilot worker" in c]
        s["worker_pid"] = workers[0] if workers else ""
        wm = self._mem(workers[0]) if workers else {}
        pm = self._mem(self.cl.pid)
        s.update({"worker_rss_kb": wm.get("VmRSS", ""), "worker_anon_kb": wm.get("RssAnon", ""),
                  "pm_rss_kb": pm.get("VmRSS", ""), "pm_anon_kb": pm.get("RssAnon", "")})
        p = self.cl.psql("SELECT coalesce(json_agg(json_build_array(name, allocated_size) ORDER BY name), '[]') "
                         "FROM pg_shmem_allocations WHERE name LIKE 'walpilot%'", check=False)
        try:
            rows = json.loads(p.stdout.strip())
        except ValueError:
            rows = []
        s["shmem_rows"] = len(rows)
        s["shmem_bytes"] = sum(r[1] for r in rows)
        p = self.cl.psql("SELECT string_agg(format('SELECT %L, count(*) FROM walpilot.%I', viewname, viewname), "
                         "' UNION ALL ' ORDER BY viewname) FROM pg_views WHERE schemaname = 'walpilot'", check=False)
        q = p.stdout.strip()
        if q:
            p = self.cl.psql(q, check=False)
            for line in p.stdout.splitlines():
                v, _, n = line.partition("|")
                s["rows_" + v] = int(n) if n.isdigit() else ""
        # walpilot's lines in the server log since the last sample
        try:
            with open(self.cl.logfile, errors="replace") as f:
                f.seek(self.log_off)
                chunk = f.read()
                self.log_off = f.tell()
        except OSError:
            chunk = ""
        for line in chunk.splitlines():
            m = re.search(r"\b(LOG|WARNING|ERROR|FATAL|PANIC):\s+(.*)", line)
            if not m:
                continue
            lvl, msg = m.group(1), m.group(2)
            if "walpilot" in msg:
                if lvl in self.log_counts:
                    self.log_counts[lvl] += 1
                if lvl != "LOG":
                    self.wp_problems.append(f"{s['t_min']:.1f} min: {line.strip()[:300]}")
            elif lvl != "LOG":
                self.other_problems.append(f"{s['t_min']:.1f} min: {line.strip()[:300]}")
        s.update({"wp_log": self.log_counts["LOG"], "wp_warning": self.log_counts["WARNING"],
                  "wp_error": self.log_counts["ERROR"], "other_warn_err": len(self.other_problems)})
        s["decisions"] = s.get("rows_decisions", "")
        return s

    # ---- parsing the clients' logs
    def parse_pending(self):
        todo, self.pending = self.pending, []
        for kind, ph, path, ts in todo:
            if kind == "pg":
                self._parse_pg(ph, path)
            else:
                self._parse_sb(ph, path, ts)

    def _parse_pg(self, ph, prefix):
        lat_ph = self.pg_phase.setdefault(ph, array.array("d"))
        tmp = self.ctx.tmp
        for fn in os.listdir(tmp):
            if not fn.startswith(prefix + "."):
                continue
            path = os.path.join(tmp, fn)
            if fn.endswith(".out"):
                txt = open(path, errors="replace").read()
                if re.search(r"pgbench: (error|fatal)|aborted", txt):
                    self.pg_fail += 1
                    log(f"    pgbench {prefix}: {txt.strip()[-300:]}")
                os.unlink(path)
                continue
            with open(path) as f:
                for line in f:
                    p = line.split()
                    if len(p) < 6 or p[2] == "skipped":
                        continue
                    lat = int(p[2]) / 1000.0
                    if len(p) >= 7:     # -R: the schedule lag is part of the latency
                        lat += int(p[6]) / 1000.0
                    t = int(p[4]) + int(p[5]) / 1e6
                    sec = int(t - self.t0)
                    a = self.pg_sec.get(sec)
                    if a is None:
                        a = self.pg_sec[sec] = array.array("d")
                    a.append(lat)
                    lat_ph.append(lat)
            os.unlink(path)

    def _parse_sb(self, ph, path, ts):
        try:
            txt = open(path, errors="replace").read()
            os.unlink(path)
        except OSError:
            return
        for m in re.finditer(r"\[ (\d+)s \] thds: \d+ tps: ([\d.]+) .*?lat \(ms,99%\): ([\d.]+) err/s: ([\d.]+)",
                             txt):
            sec = int(ts + int(m.group(1)) - 1 - self.t0)
            v = self.sb_sec.setdefault(sec, [0.0, 0.0, 0.0])
            v[0] += float(m.group(2))
            v[1] = max(v[1], float(m.group(3)))
            v[2] += float(m.group(4))
        m_tx = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", txt)
        m_p99 = re.search(r"99th percentile:\s+([\d.]+)", txt)
        m_err = re.search(r"ignored errors:\s+(\d+)", txt)
        m_t = re.search(r"total time:\s+([\d.]+)s", txt)
        if not m_tx:
            log(f"    sysbench gave no summary: {txt.strip()[-400:]}")
            self.pg_fail += 1
            return
        self.sb_phase.setdefault(ph, []).append({
            "txns": int(m_tx.group(1)), "tps": float(m_tx.group(2)),
            "p99": float(m_p99.group(1)) if m_p99 else float("nan"),
            "errors": int(m_err.group(1)) if m_err else 0, "secs": float(m_t.group(1)) if m_t else float("nan")})


def _ph_night(rec, L):
    rec.wait([rec.pgbench(rec.D.night_clients, L, rate=rec.D.night_rate)], L + 60)


def _steps(steps):
    def fn(rec, L):
        end = time.time() + L
        for i, c in enumerate(steps):
            secs = max(1, int(round((end - time.time()) / (len(steps) - i))))
            rec.wait([rec.pgbench(c, secs)], secs + 60)
    return fn


def _ph_peak(rec, L):
    rec.wait([rec.sysbench(rec.D.peak_sb, L), rec.pgbench(rec.D.peak_pg, L)], L + 60)


def _ph_batch(rec, L):
    procs = [rec.sysbench(rec.D.batch_sb, L), rec.pgbench(rec.D.batch_pg, L)]
    rec.bulk_load(L)
    rec.wait(procs, 60)


def _ph_bursts(rec, L):
    D = rec.D
    t0 = time.time()
    procs = [rec.pgbench(D.burst_base, L)]
    k = 0
    while True:
        at = D.burst_period * k + (D.burst_period - D.burst_len)
        if at + D.burst_len > L:
            break
        time.sleep(max(0, t0 + at - time.time()))
        procs.append(rec.pgbench(max(1, D.burst_clients - D.burst_base), D.burst_len))
        k += 1
    rec.wait(procs, max(1, L - (time.time() - t0)) + 60)


def _phase_fns(D):
    return {"night": _ph_night, "morning": _steps(D.morning_steps), "peak": _ph_peak, "batch": _ph_batch,
            "bursts": _ph_bursts, "evening": _steps(D.evening_steps)}


# --------------------------------------------------------------------------
# cluster preparation, the static sweep, one run
# --------------------------------------------------------------------------
def _prepare(ctx, cl):
    """once per cluster, without the emulator: sysbench's tables and the bulk table"""
    if getattr(cl, "day_ready", False):
        return
    D = ctx.scenario.day
    cl.stop()
    cl.start(emulated=False)
    log(f"  sysbench prepare: {D.sb_tables} tables x {D.sb_rows} rows")
    bench.run(["sysbench"] + Recorder(ctx, cl, "prep", False, 0).sb_args(2) + ["prepare"])
    cl.psql("CREATE TABLE day_bulk (id integer, payload text, at timestamptz)")
    cl.psql("VACUUM ANALYZE")
    cl.psql("CHECKPOINT")
    cl.stop()
    cl.day_ready = True


def _fresh(ctx, cl, lines):
    """the run's settings from the start, the data as before every run, a
    freshly started (emulated) server"""
    cl.stop()
    cl.apply(lines)
    cl.start(emulated=False)
    cl.psql("TRUNCATE pgbench_history, day_bulk")
    cl.psql("VACUUM ANALYZE")
    cl.psql("CHECKPOINT")
    cl.stop()
    cl.start(emulated=cl.emulated)


def _lines(ctx, cfg, static=None):
    lines = [l for l in cfg.conf if bench.is_reloadable(l)]
    if static:
        lines = [l for l in lines if bench.guc_name(l) not in ("commit_delay", "commit_siblings")]
        lines += [f"commit_delay = {static[0]}", f"commit_siblings = {static[1]}"]
    return lines


def _sweep_candidates(D, F):
    if D.sweep:
        return [tuple(int(x) for x in c.split("/")) for c in D.sweep.split(",")]
    half = max(10, int(round(F / 20.0)) * 10)
    eighth, quarter = (max(10, int(round(F * f / 10.0)) * 10) for f in (1 / 8, 1 / 4))
    return [(d, 1) for d in sorted({eighth, quarter, half, 1000, 2000})] + \
        [(d, 0) for d in sorted({eighth, quarter})]


def _sweep(ctx, cfg, cl):
    """the best static commit_delay/commit_siblings of the group: each
    candidate runs the peak phase's load for sweep_s on one server, after a
    warm-up; best = most commits/s (pgbench + sysbench)"""
    D = ctx.scenario.day
    g = cfg.group
    ctx.day_static = getattr(ctx, "day_static", {})
    if g in ctx.day_static:
        return ctx.day_static[g][0]
    if D.static:
        best = tuple(int(x) for x in D.static.split("/"))
        ctx.day_static[g] = (best, [])
        log(f"  [{g}] static setting given: d{best[0]}/s{best[1]} (no sweep)")
        return best
    cands = _sweep_candidates(D, cfg.meta.get("F_us", 1000))
    log(f"  [{g}] static sweep on the peak load: defaults and {len(cands)} candidates x {D.sweep_s} s")
    _fresh(ctx, cl, _lines(ctx, cfg, (0, 5)))
    has_wp = "walpilot" in bench.preload_libs(cfg.conf)
    rec = Recorder(ctx, cl, f"sweep{g[:8]}", has_wp, 7000)
    rec.phase("warm-up", 0, _ph_peak, D.sweep_warm_s)
    res = []
    for d, s in [(0, 5)] + cands:
        cl.apply(_lines(ctx, cfg, (d, s)))
        n0 = len(rec.phases)
        rec.phase(f"d{d}/s{s}", 0, _ph_peak, D.sweep_s)
        rec.parse_pending()
        st = _phase_stats(rec, n0)
        res.append({"delay": d, "siblings": s, **st})
        log(f"    sweep d{d}/s{s}: {st['commits_s']:.0f} commits/s, pgbench p99 {st['pg_p99_ms']:.1f} ms, "
            f"sysbench p99 {st['sb_p99_ms']:.1f} ms")
    pick = max((r for r in res if (r["delay"], r["siblings"]) != (0, 5)), key=lambda r: r["commits_s"])
    best = (pick["delay"], pick["siblings"])
    ctx.day_static[g] = (best, res)
    with open(os.path.join(ctx.out, f"sweep-{g}.json"), "w") as f:
        json.dump({"best": best, "candidates": res}, f, indent=1)
    log(f"  [{g}] best static: d{best[0]}/s{best[1]}")
    return best


def day_run(ctx, cfg, wl, clients, rep, order):
    sc = ctx.scenario
    D = sc.day
    cl = ctx.cluster_of[id(cfg)]
    _prepare(ctx, cl)
    static = None
    if cfg.meta.get("kind") == "static":
        static = _sweep(ctx, cfg, cl)
    elif not sc.soak and any(c.meta.get("kind") == "static" and c.group == cfg.group for c in sc.configs):
        # the sweep comes first in a group, whichever configuration runs first
        st = next(c for c in sc.configs if c.meta.get("kind") == "static" and c.group == cfg.group)
        _sweep(ctx, st, ctx.cluster_of[id(st)])
    lines = _lines(ctx, cfg, static)
    _fresh(ctx, cl, lines)
    has_wp = "walpilot" in bench.preload_libs(cfg.conf)
    got = cl.psql("SELECT current_setting('commit_delay') || '/' || current_setting('commit_siblings') || ' ' || "
                  "coalesce(current_setting('walpilot.mode', true), '-')").stdout.strip()
    want_mode = "tune" if cfg.meta.get("kind") == "tune" else ("observe" if has_wp else "-")
    if not got.endswith(" " + want_mode) or (static and not got.startswith(f"{static[0]}/{static[1]} ")):
        raise RuntimeError(f"{cfg.name}: settings in force {got!r}, wanted {static} {want_mode}")
    runid = f"r{ctx.nrun:04d}"
    ctx.nrun += 1
    rec = Recorder(ctx, cl, runid, has_wp, 1000 * (rep + 1))
    fns = _phase_fns(D)
    log(f"  run {cfg.group} {cfg.name} rep{rep} ({got}): day of {D.day_s()} s"
        + (f", repeated for >= {D.soak_min:g} min" if sc.soak else ""))
    rec.start_sampler(sc.soak)
    it = 0
    try:
        while True:
            for ph in PHASES:
                if D.phase_s[ph] > 0:
                    rec.phase(ph, it, fns[ph], D.phase_s[ph])
            it += 1
            if not sc.soak or time.time() - rec.t0 >= D.soak_min * 60:
                break
    finally:
        _stop_live()
        rec.end_sampler()
    t1 = time.time()
    if sc.soak:
        rec.soak.append(rec.soak_sample())
    rec.fetch_decisions()
    rec.fetch_timeline(rec.phases[-1]["t0"] - 1 if rec.phases else rec.t0 - 1)
    rec.parse_pending()
    base = f"{cfg.group}__day__{cfg.name}__r{rep}".replace("/", "_")
    return _finish(ctx, cfg, rec, rep, order, base, t1, got, static)


# --------------------------------------------------------------------------
# per-run figures
# --------------------------------------------------------------------------
def _hist_p99(h0, h1):
    """p99 (ms) of the commits between two snapshots of walpilot.commit_latency"""
    if not h0 or not h1:
        return float("nan")
    c0 = {(b[0], b[1]): b[2] for b in h0}
    d = [(b[0], b[1], b[2] - c0.get((b[0], b[1]), 0)) for b in sorted(h1, key=lambda b: b[0])]
    tot = sum(x[2] for x in d)
    if tot <= 0:
        return float("nan")
    acc = 0
    for lo, hi, n in d:
        if n > 0 and acc + n >= 0.99 * tot:
            hi = hi if hi is not None else lo * 2
            return (lo + (hi - lo) * (0.99 * tot - acc) / n) / 1000.0
        acc += n
    return float("nan")


def _phase_stats(rec, i):
    ph = rec.phases[i]
    secs = max(0.001, ph["t1"] - ph["t0"])
    lats = sorted(rec.pg_phase.get(i, []))
    sbs = rec.sb_phase.get(i, [])
    sb_tx = sum(s["txns"] for s in sbs)
    sb_s = max([s["secs"] for s in sbs if s["secs"] == s["secs"]], default=secs)
    return {"secs": round(secs, 1), "pg_tps": round(len(lats) / secs, 1),
            "pg_p50_ms": round(pct(lats, 0.50), 2) if lats else float("nan"),
            "pg_p99_ms": round(pct(lats, 0.99), 2) if lats else float("nan"),
            "sb_tps": round(sb_tx / sb_s, 1) if sbs else 0.0,
            "sb_p99_ms": max([s["p99"] for s in sbs], default=float("nan")),
            "sb_errors": sum(s["errors"] for s in sbs),
            "commits_s": round(len(lats) / secs + (sb_tx / sb_s if sbs else 0), 1),
            "wp_p99_ms": round(_hist_p99(ph.get("hist0"), ph.get("hist1")), 2)}


def _state_code(state):
    return {"idle": 0, "hold": 1, "trial": 2, "re-check": 3}.get(state, -1)


def _finish(ctx, cfg, rec, rep, order, base, t1, got, static):
    sc = ctx.scenario
    cl = rec.cl
    t0 = rec.t0
    n = int(math.ceil(t1 - t0))
    # walpilot's per-second timeline over the run
    wp = rec.wp
    # the pilots' state per second
    pstate = {}
    for t, ps in rec.pilot:
        for x in ps:
            pstate.setdefault(x["p"], {})[int(t - t0)] = x
    phase_of = [None] * (n + 1)
    for i, ph in enumerate(rec.phases):
        for s in range(max(0, int(ph["t0"] - t0)), min(n + 1, int(math.ceil(ph["t1"] - t0)))):
            phase_of[s] = i
    ser = []
    for s in range(n):
        lats = sorted(rec.pg_sec.get(s, []))
        win = sorted(x for k in range(max(0, s - 4), s + 1) for x in rec.pg_sec.get(k, []))
        sb = rec.sb_sec.get(s, [0.0, float("nan"), 0.0])
        w = wp.get(s)
        cd = pstate.get("commit_delay", {}).get(s)
        cf = pstate.get("checkpoint_flush_after", {}).get(s)
        i = phase_of[s]
        ser.append({"sec": s, "phase": rec.phases[i]["name"] if i is not None else "",
                    "commits": round(len(lats) + sb[0], 1), "pg_tps": len(lats),
                    "pg_p99_ms": round(pct(lats, 0.99), 3) if lats else "",
                    "pg_p99_5s_ms": round(pct(win, 0.99), 3) if win else "",
                    "sb_tps": round(sb[0], 1), "sb_p99_ms": sb[1] if sb[1] == sb[1] and sb[0] else "",
                    "wp_commits": w[0] if w else "", "wp_p99_ms": round(w[1] / 1000.0, 3) if w and w[1] else "",
                    "wal_mb": round(w[2] / 1e6, 2) if w and w[2] is not None else "",
                    "cd_state": _state_code(cd["s"]) if cd else "", "cd_setting": cd["v"] if cd else "",
                    "cf_state": _state_code(cf["s"]) if cf else ""})
    for s in range(n):
        w = ser[max(0, s - 4):s + 1]
        ser[s]["commits_5s"] = round(sum(x["commits"] for x in w) / len(w), 1)
    keys = ["sec", "phase", "commits", "commits_5s", "pg_tps", "pg_p99_ms", "pg_p99_5s_ms", "sb_tps", "sb_p99_ms",
            "wp_commits", "wp_p99_ms", "wal_mb", "cd_state", "cf_state", "cd_setting"]
    sdir = os.path.join(ctx.out, "series")
    with open(os.path.join(sdir, base + ".csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=keys)
        wr.writeheader()
        wr.writerows(ser)
    # server log: checkpoints, autovacuum, walpilot lines
    ev = bench.server_events(cl, t0, t1 + 1, sc.events_regex)
    with open(os.path.join(sdir, base + ".events"), "w") as f:
        for t, e in ev:
            f.write(f"{t - t0:.2f}\t{e}\n")
    # decisions, relative to the run's start
    ds = sorted(rec.decisions.values(), key=lambda d: d["t"])
    for d in ds:
        d["rel"] = round(d["t"] - t0, 2)
        i = phase_of[min(n, max(0, int(d["rel"])))]
        d["phase"] = rec.phases[i]["name"] if i is not None else ""
    with open(os.path.join(sdir, base + ".decisions"), "w") as f:
        json.dump(ds, f, indent=1, default=str)
    # the model's predictions as read (walpilot.prediction(), every pred_poll_s), relative to the run's start
    with open(os.path.join(sdir, base + ".pred.jsonl"), "w") as f:
        for t, x in rec.pred:
            f.write(json.dumps({"t": round(t - t0, 2), "prediction": x}, sort_keys=True) + "\n")
    # per phase
    phases = []
    for i, ph in enumerate(rec.phases):
        st = _phase_stats(rec, i)
        s0, s1 = int(ph["t0"] - t0), int(math.ceil(ph["t1"] - t0))
        wsec = [wp[s] for s in range(s0, s1) if s in wp]
        cks = [(t - t0, e) for t, e in ev if "checkpoint starting" in e and ph["t0"] <= t < ph["t1"]]
        st.update({
            "phase": ph["name"], "iter": ph["iter"], "t0": round(ph["t0"] - t0, 1), "t1": round(ph["t1"] - t0, 1),
            "wp_commits_s": round(sum(w[0] for w in wsec) / len(wsec), 1) if wsec else "",
            "wal_mb_s": round(sum(w[2] or 0 for w in wsec) / 1e6 / len(wsec), 2) if wsec else "",
            "ckpt_time": sum(1 for _, e in cks if re.search(r"starting:.*\btime\b", e)),
            "ckpt_wal": sum(1 for _, e in cks if re.search(r"starting:.*\bwal\b", e)),
            "autovacuum": sum(1 for t, e in ev if "automatic vacuum" in e and ph["t0"] <= t < ph["t1"]),
            "bulk": rec.bulk.get(i, ""),
        })
        for pname, key in (("commit_delay", "cd"), ("checkpoint_flush_after", "cf")):
            sts = [pstate.get(pname, {}).get(s) for s in range(s0, s1)]
            st[key + "_trial_s"] = sum(1 for x in sts if x and x["s"] == "trial")
            st[key + "_recheck_s"] = sum(1 for x in sts if x and x["s"] == "re-check")
        st["decisions"] = sum(1 for d in ds if ph["t0"] - t0 <= d["rel"] < ph["t1"] - t0)
        # the model's predictions in the phase (in the defaults run: what tune would win)
        pr = [x for t, x in rec.pred if ph["t0"] <= t < ph["t1"] and isinstance(x, dict)]
        gains = sorted(x["predicted_gain"] for x in pr if x.get("predicted_gain") is not None)
        st["pred_samples"] = len(pr)
        st["pred_gain"] = round(gains[len(gains) // 2], 3) if gains else ""
        st["pred_verdicts"] = {v: sum(1 for x in pr if x.get("verdict") == v)
                               for v in sorted({x.get("verdict") for x in pr if x.get("verdict")})}
        phases.append(st)
    with open(os.path.join(sdir, base + ".phases.json"), "w") as f:
        json.dump(phases, f, indent=1)
    if sc.soak:
        _write_soak(ctx, rec, base)
    all_l = sorted(x for a in rec.pg_sec.values() for x in a)
    sb_tx = sum(s["txns"] for v in rec.sb_phase.values() for s in v)
    row = {
        "scenario": sc.name, "group": cfg.group, "workload": "day", "clients": sc.clients[0],
        "config": cfg.name, "rep": rep, "order": order, "run": rec.runid,
        "tps": round((len(all_l) + sb_tx) / max(1, t1 - t0), 2),
        "p99_ms": round(pct(all_l, 0.99), 3) if all_l else "",
        "pg_txns": len(all_l), "sb_txns": sb_tx, "client_failures": rec.pg_fail,
        "wall_s": round(t1 - t0, 1), "settings": got,
        "static": f"d{static[0]}/s{static[1]}" if static else "",
        "decisions": len(ds), "checkpoints": sum(1 for _, e in ev if "checkpoint complete" in e),
        "meta": json.dumps(cfg.meta, sort_keys=True), "series": base,
    }
    if rec.pg_fail:
        ctx.ok = False
    return row


def _write_soak(ctx, rec, base):
    keys = []
    for s in rec.soak:
        for k in s:
            if k not in keys:
                keys.append(k)
    with open(os.path.join(ctx.out, "soak.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rec.soak)
    with open(os.path.join(ctx.out, "soak-log.txt"), "w") as f:
        f.write("# walpilot WARNING/ERROR lines\n" + "\n".join(rec.wp_problems) +
                "\n# other WARNING/ERROR/FATAL/PANIC lines of the server\n" + "\n".join(rec.other_problems) + "\n")


# --------------------------------------------------------------------------
# analysis: per-phase tables, decisions, trial cost, pictures, soak
# --------------------------------------------------------------------------
def _load(ctx, r, ext):
    try:
        return json.load(open(os.path.join(ctx.out, "series", r["series"] + ext)))
    except (OSError, ValueError):
        return []


def _series(ctx, r):
    try:
        with open(os.path.join(ctx.out, "series", r["series"] + ".csv")) as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def _f(x, nd=1):
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "-"
    return "-" if x != x else f"{x:.{nd}f}"


def _ratio(a, b):
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return "-"
    return f"{a / b:.2f}" if b and a == a and b == b else "-"


def _trial_costs(ser, ds, phases):
    """each commit_delay trial: its seconds, the pilot's ratio and the cost
    against the held setting it implies, and the clients' commits/s in
    the trial against the 10 s before it"""
    out = []
    rate = [float(x["commits"]) for x in ser]
    for d in ds:
        why = d.get("reason") or ""
        kind = why.split(":")[0]
        if d.get("setting") != "commit_delay" or kind not in ("trial", "re-check", "new search"):
            continue
        m = re.search(r"x([\d.]+) \(t=[-\d.]+, keep needs [\d.]+, (\d+) pairs\)", d.get("outcome") or "")
        ratio = float(m.group(1)) if m else float("nan")
        pairs = int(m.group(2)) if m else 8
        t = int(d["rel"])
        dur = 2 * pairs
        # the held setting's rate: up to 10 s before the trial, in its phase
        p0 = max([int(p["t0"]) + 1 for p in phases if p["t0"] <= d["rel"]], default=0)
        held = rate[max(0, p0, t - 10):t]
        held = held if len(held) >= 3 else []
        held = sum(held) / len(held) if held else float("nan")
        during = rate[t:t + dur]
        during = sum(during) / len(during) if during else float("nan")
        # a trial's candidate arm runs `pairs` one-second windows against the
        # held setting; a re-check (or a new search's first trial) runs the
        # configured setting against the held choice, ratio = held / configured
        if kind == "trial":
            lost = (1 - ratio) * held * pairs
        else:
            lost = (1 - 1 / ratio) * held * pairs if ratio == ratio and ratio else float("nan")
        crosses = any(d["rel"] < p["t1"] < d["rel"] + dur for p in phases)
        # the commit-path model's ratio for it (a search's first trial from the configured setting)
        pred = decision_evidence(d).get("predicted_gain")
        out.append({"t": d["rel"], "phase": d.get("phase", "") + ("+" if crosses else ""), "kind": kind, "arms": f"{d['old_value']} | {d['new_value']}",
                    "secs": dur, "ratio": ratio, "pred": pred, "held_cps": held, "lost": lost,
                    "client_x": during / held if held == held and held else float("nan"),
                    "outcome": (d.get("outcome") or "(running)").split(":")[0]})
    return out


def analyze(ctx, rows, summ):
    sc = ctx.scenario
    if sc.soak:
        return _analyze_day(ctx, rows) + "\n" + _analyze_soak(ctx)
    return _analyze_day(ctx, rows)


def _analyze_day(ctx, rows):
    out = ["\n## per phase, every run (commits/s = pgbench + sysbench transactions; p99 ms: pgbench (client, "
           "per transaction), sysbench (its own 99th percentile), walpilot (walpilot.commit_latency, every durable "
           "commit); trial/re-check s: seconds the commit_delay pilot spent in them (walpilot.pilots, polled 1/s))"]
    groups = []
    for r in rows:
        if r["group"] not in groups:
            groups.append(r["group"])
    for g in groups:
        gr = [r for r in rows if r["group"] == g]
        sw = None
        try:
            sw = json.load(open(os.path.join(ctx.out, f"sweep-{g}.json")))
        except (OSError, ValueError):
            pass
        if sw:
            out.append(f"\n### {g}: static sweep on the peak load (best: d{sw['best'][0]}/s{sw['best'][1]}; "
                       f"one pass, in this order)")
            d0 = [c for c in sw["candidates"] if (c["delay"], c["siblings"]) == (0, 5)]
            if d0 and all(c["commits_s"] < d0[0]["commits_s"] for c in sw["candidates"] if c is not d0[0]):
                out.append("  (the defaults beat every candidate here: the static configuration is the best "
                           "nonzero delay, not better than the defaults)")
            for c in sw["candidates"]:
                out.append(f"  d{c['delay']:>5}/s{c['siblings']}: {_f(c['commits_s'], 0):>7} commits/s  pgbench p99 "
                           f"{_f(c['pg_p99_ms'])} ms  sysbench p99 {_f(c['sb_p99_ms'])} ms")
        reps = sorted({r["rep"] for r in gr})
        per = {}     # (config, phase) -> list over reps of stats
        for rep in reps:
            rr = {r["config"]: r for r in gr if r["rep"] == rep}
            order = [c for c, _ in sorted(((c, r["order"]) for c, r in rr.items()), key=lambda x: int(x[1]))]
            out.append(f"\n### {g} rep{rep}: run order {', '.join(order)}"
                       + "".join(f"; {c} = {r['settings']}" for c, r in rr.items()))
            ph = {c: _load(ctx, r, ".phases.json") for c, r in rr.items()}
            cfgs = [c for c in ("defaults", "static", "tune") if c in ph] + \
                [c for c in ph if c not in ("defaults", "static", "tune")]
            w = 9 * len(cfgs) + 11

            def block(st, key, nd):
                tu, de, sa = st.get("tune", {}), st.get("defaults", {}), st.get("static", {})
                return "".join(f" {_f(st[c].get(key), nd):>8}" for c in cfgs) + \
                    f" {_ratio(tu.get(key), de.get(key)):>5} {_ratio(tu.get(key), sa.get(key)):>4} |"
            names = "".join(f" {c[:8]:>8}" for c in cfgs) + "   t/d  t/s |"
            nph = max(len(v) for v in ph.values()) if ph else 0
            rows_st = []
            for i in range(nph):
                st = {c: (ph[c][i] if i < len(ph[c]) else {}) for c in cfgs}
                for c in cfgs:     # no sysbench in the phase: no sysbench p99
                    if st[c] and not st[c].get("sb_tps"):
                        st[c] = dict(st[c], sb_p99_ms="")
                name = next(x["phase"] for x in st.values() if x)
                for c, x in st.items():
                    per.setdefault((c, i, name), []).append(x)
                rows_st.append((name, st))
            out.append("  clients' figures")
            out.append(f"  {'':<9} {'commits/s':<{w}}| {'pgbench p99 ms':<{w}}| {'sysbench p99 ms':<{w}}|"
                       f" {'pgbench p50 ms':<{w}}|")
            out.append(f"  {'phase':<9}" + names * 4)
            for name, st in rows_st:
                out.append(f"  {name:<9}" + block(st, "commits_s", 0) + block(st, "pg_p99_ms", 1) +
                           block(st, "sb_p99_ms", 1) + block(st, "pg_p50_ms", 2))
            out.append("  walpilot's views (commits/s: walpilot.timeline; p99: walpilot.commit_latency at the phase's "
                       "ends), the tune run's pilots and checkpoints")
            out.append(f"  {'':<9} {'commits/s':<{w}}| {'p99 ms':<{w}}| tune: trial re-ck flush-pilot  WAL MB/s "
                       "ckpt time/wal  autovacuum")
            out.append(f"  {'phase':<9}" + names * 2)
            for name, st in rows_st:
                tu = st.get("tune", {})
                out.append(f"  {name:<9}" + block(st, "wp_commits_s", 0) + block(st, "wp_p99_ms", 1) +
                           f" {tu.get('cd_trial_s', '-'):>11} {tu.get('cd_recheck_s', '-'):>5} "
                           f"{(tu.get('cf_trial_s') or 0) + (tu.get('cf_recheck_s') or 0) if tu else '-':>11} "
                           f"{_f(tu.get('wal_mb_s'), 1):>9} {tu.get('ckpt_time', '-'):>9}/{tu.get('ckpt_wal', '-'):<3} "
                           f"{tu.get('autovacuum', '-'):>10}")
            for c, r in rr.items():
                tot = f"  whole day {c}: {r['tps']:.0f} commits/s, pgbench p99 {_f(r['p99_ms'])} ms, " \
                      f"{r['checkpoints']} checkpoints, {r['decisions']} decisions"
                if int(r.get("client_failures") or 0):
                    tot += f", {r['client_failures']} client failures (see the log)"
                out.append(tot)
            # the pilot's decisions and its trials' cost, tune run
            if "tune" in rr:
                r = rr["tune"]
                ds = _load(ctx, r, ".decisions")
                ser = _series(ctx, r)
                out.append(f"\n  tune decisions ({len(ds)}; t = seconds after the day's start)")
                for d in ds:
                    out.append(f"    t={d['rel']:7.1f} {d.get('phase', ''):<8} {d['setting']}: {d['old_value']} -> "
                               f"{d['new_value']}  [{(d.get('outcome') or '')[:90]}]  {(d.get('reason') or '')[:100]}")
                tc = _trial_costs(ser, ds, ph.get("tune", []))
                if tc:
                    out.append("  commit_delay trials: seconds, the pilot's ratio, what its other arm cost against the "
                               "held setting (commits; negative = it gained), clients' commits/s in it / the 10 s before "
                               "(phase+: it ran into the next phase, the clients' ratio then means little)")
                    for x in tc:
                        out.append(f"    t={x['t']:7.1f} {x['phase']:<8} {x['kind']:<10} {x['secs']:>3} s  x{_f(x['ratio'], 2)}"
                                   f"  cost {_f(x['lost'], 0):>6} commits ({_f(x['held_cps'], 0)}/s held)"
                                   f"  clients x{_f(x['client_x'], 2)}  {x['outcome']}"
                                   + (f"  (model predicted x{x['pred']:.2f})" if x.get("pred") else ""))
                    lost = [x["lost"] for x in tc if x["lost"] == x["lost"]]
                    secs = sum(x["secs"] for x in tc)
                    total = sum(float(s["commits"]) for s in ser)
                    out.append(f"  in all: {len(tc)} trials/re-checks, {secs} s; cost {sum(lost):.0f} commits "
                               f"({100 * sum(lost) / total if total else float('nan'):.2f} % of the day's {total:.0f})")
                trial_s = sum(s.get("cd_trial_s", 0) + s.get("cd_recheck_s", 0) for s in ph.get("tune", []))
                cf_s = sum(s.get("cf_trial_s", 0) + s.get("cf_recheck_s", 0) for s in ph.get("tune", []))
                out.append(f"  seconds in trial or re-check (walpilot.pilots): commit_delay {trial_s}, "
                           f"checkpoint_flush_after {cf_s}")
            # the commit-path model in the defaults run (observe mode): what it predicted tune would win
            if "defaults" in ph and any(x.get("pred_samples") for x in ph["defaults"]):
                out.append("\n  the model in the defaults run (walpilot.prediction(), every 5 s; gain: median of its "
                           "predictions in the phase) against tune's measured commits/s ratio")
                for i, x in enumerate(ph["defaults"]):
                    tu = ph.get("tune", [])
                    meas = _ratio(tu[i].get("commits_s"), x.get("commits_s")) if i < len(tu) else ""
                    verd = ", ".join(f"{k} {v}" for k, v in (x.get("pred_verdicts") or {}).items())
                    out.append(f"    {x['phase']:<8} predicted x{_f(x.get('pred_gain'), 2):<5} measured x{meas:<5} "
                               f"({x.get('pred_samples', 0)} samples: {verd})")
            _picture(ctx, g, rep, rr)
        names = []
        for (c, i, name) in per:
            if (i, name) not in names:
                names.append((i, name))
        out.append(f"\n### {g}: the bars, every repetition: tune/defaults commits/s >= 0.98 and pgbench p99 <= 1.10 "
                   "in every phase, pgbench p50 within 5 % at night")
        for i, name in sorted(names):
            tu, de = per.get(("tune", i, name), []), per.get(("defaults", i, name), [])
            cells = []
            for k in range(min(len(tu), len(de))):
                def r(key):
                    try:
                        return float(tu[k][key]) / float(de[k][key])
                    except (KeyError, TypeError, ValueError, ZeroDivisionError):
                        return float("nan")
                c_r, p_r = r("commits_s"), r("pg_p99_ms")
                ok = c_r >= 0.98 and p_r <= 1.10
                cell = f"r{k} x{c_r:.2f} p99 x{p_r:.2f}"
                if name == "night":
                    p50 = r("pg_p50_ms")
                    ok = ok and abs(p50 - 1) <= 0.05
                    cell += f" p50 x{p50:.2f}"
                cells.append(cell + (" ok" if ok else " MISSED"))
            out.append(f"  {name:<9} " + "; ".join(cells))
        if len(reps) > 1:
            out.append(f"\n### {g}: median over {len(reps)} repetitions (commits/s; pgbench p99 ms)")
            for i, name in sorted(names):
                def m(c, k):
                    v = [float(s[k]) for s in per.get((c, i, name), []) if s and s.get(k) not in ("", None)]
                    v = [x for x in v if x == x]
                    return median(v) if v else float("nan")
                out.append(f"  {name:<9} commits/s d {_f(m('defaults', 'commits_s'), 0)} s {_f(m('static', 'commits_s'), 0)}"
                           f" t {_f(m('tune', 'commits_s'), 0)} (t/d {_ratio(m('tune', 'commits_s'), m('defaults', 'commits_s'))},"
                           f" t/s {_ratio(m('tune', 'commits_s'), m('static', 'commits_s'))}); p99 d {_f(m('defaults', 'pg_p99_ms'))}"
                           f" s {_f(m('static', 'pg_p99_ms'))} t {_f(m('tune', 'pg_p99_ms'))}")
    out.append("\n# pictures: day-GROUP-rREP.png beside this report (commits/s and pgbench p99 over the day; "
               "phases shaded; the tune run's decisions marked: green kept, red rejected, orange restored, grey other)")
    return "\n".join(out)


PHASE_COLORS = {"night": "#d0d8f0", "morning": "#f4ecd0", "peak": "#f6d6d0", "batch": "#e0d0f0",
                "bursts": "#f8e0c8", "evening": "#d8ecd8"}
CFG_COLORS = {"defaults": "#1f77b4", "static": "#2ca02c", "tune": "#d62728"}


def _picture(ctx, g, rep, rr):
    import shutil
    if not shutil.which("gnuplot"):
        return
    ref = rr.get("tune") or next(iter(rr.values()))
    phases = _load(ctx, ref, ".phases.json")
    ds = _load(ctx, rr["tune"], ".decisions") if "tune" in rr else []
    png = os.path.join(ctx.out, f"day-{g}-r{rep}.png")
    gp = ["set terminal pngcairo size 1400,900 font ',9'", f"set output '{png}'", "set termoption noenhanced",
          "set datafile separator ','", "set key top left horizontal", "set grid",
          "set multiplot title 'day " + f"{g} rep{rep}: " +
          ", ".join(f"{c} = {r['settings']}" for c, r in rr.items()) +
          " (tune decisions: green kept, red rejected, orange restored, grey other)'",
          "set lmargin 10", "set rmargin 3", "set size 1,0.43", "set origin 0,0.53"]
    objs = []
    for k, p in enumerate(phases):
        col = PHASE_COLORS.get(p["phase"], "#eeeeee")
        objs.append(f"set object {k + 1} rect from {p['t0'] / 60:.3f}, graph 0 to {p['t1'] / 60:.3f}, graph 1 "
                    f"behind fc rgb '{col}' fs solid 0.6 noborder")
        objs.append(f"set label {k + 1} '{p['phase']}' at {(p['t0'] + p['t1']) / 120:.3f}, graph 0.04 center")
    marks = []
    for j, d in enumerate(ds):
        oc = (d.get("outcome") or "")
        col = "#2ca02c" if oc.startswith(("kept", "held choice kept")) else "#d62728" if oc.startswith("rejected") \
            else "#ff7f0e" if oc.startswith("configured setting restored") else "#777777"
        marks.append(f"set arrow {j + 1} from {d['rel'] / 60:.3f}, graph 0 to {d['rel'] / 60:.3f}, graph 0.9 "
                     f"nohead lc rgb '{col}' lw 1.2 dt 2")
    gp += objs + marks
    cols = ["defaults", "static", "tune"]
    files = [(c, os.path.join(ctx.out, "series", rr[c]["series"] + ".csv")) for c in cols if c in rr]
    gp += ["set ylabel 'commits/s (5-s mean)'", "set yrange [0:*]", "set format x ''"]
    gp.append("plot " + ", ".join(f"'{f}' using ($1/60):4 skip 1 with lines lw 1.3 lc rgb '{CFG_COLORS[c]}' "
                                  f"title '{c} ({rr[c]['tps']:.0f}/s)'" for c, f in files))
    gp += ["unset label", "set origin 0,0.17", "set size 1,0.36",
           "set ylabel 'pgbench p99 ms (5-s windows)'", "set logscale y", "set yrange [*:*]"]
    gp.append("plot " + ", ".join(f"'{f}' using ($1/60):7 skip 1 with lines lw 1.3 lc rgb '{CFG_COLORS[c]}' "
                                  f"title '{c}'" for c, f in files))
    # the tune run's pilots, second by second (walpilot.pilots)
    gp += ["set origin 0,0", "set size 1,0.19", "unset logscale y", "set yrange [-0.3:3.3]",
           "set ytics ('idle' 0, 'hold' 1, 'trial' 2, 're-check' 3)", "set ylabel 'tune: pilot'",
           "set xlabel 'minutes of the day'", "set format x '%g'", "set key top left horizontal"]
    if "tune" in rr:
        f = os.path.join(ctx.out, "series", rr["tune"]["series"] + ".csv")
        gp.append(f"plot '{f}' using ($1/60):13 skip 1 with steps lw 1.5 lc rgb '#d62728' title 'commit_delay', "
                  f"'{f}' using ($1/60):($14 + 0.08) skip 1 with steps lw 1.2 lc rgb '#9467bd' "
                  "title 'checkpoint_flush_after'")
    gp.append("unset multiplot")
    p = subprocess.run(["gnuplot"], input="\n".join(gp), text=True, capture_output=True)
    if p.returncode != 0:
        log(f"gnuplot: {p.stderr[-500:]}")


def _analyze_soak(ctx):
    D = ctx.scenario.day
    try:
        with open(os.path.join(ctx.out, "soak.csv")) as f:
            ss = list(csv.DictReader(f))
    except OSError:
        return "\n## soak: no samples (soak.csv missing)"
    out = [f"\n## soak: {len(ss)} samples, every {D.sample_s} s; growth from the first sample at or after "
           f"{D.soak_warmup_min:g} min to the last"]
    if not ss:
        return "\n".join(out)
    cols = [k for k in ss[0] if k not in ("t_min",)]
    out.append("  " + " ".join(f"{c[:14]:>14}" for c in ["t_min"] + cols))
    for s in ss:
        out.append("  " + " ".join(f"{str(s.get(c, ''))[:14]:>14}" for c in ["t_min"] + cols))
    _soak_picture(ctx, ss)
    after = [s for s in ss if float(s["t_min"]) >= D.soak_warmup_min]
    flags = []
    if len(after) < 2:
        out.append(f"  (fewer than 2 samples after {D.soak_warmup_min:g} min: no growth check; "
                   f"--set soak_warmup_min=N for a short soak)")
    else:
        a, b = after[0], after[-1]
        out.append(f"  from {a['t_min']} to {b['t_min']} min:")

        def num(s, k):
            try:
                return float(s[k])
            except (KeyError, ValueError, TypeError):
                return float("nan")
        for k, unit, lim in (("worker_anon_kb", "kB", 1024), ("worker_rss_kb", "kB", None),
                             ("pm_anon_kb", "kB", 1024), ("pm_rss_kb", "kB", None),
                             ("shmem_bytes", "bytes", 1 << 20)):
            d = num(b, k) - num(a, k)
            flag = lim is not None and d == d and d > lim
            if flag:
                flags.append(f"{k} grew by {d:.0f} {unit}")
            out.append(f"    {k:<16} {num(a, k):>12.0f} -> {num(b, k):>12.0f} {unit:<5} ({d:+.0f})"
                       + ("  FLAG: > 1 MB" if flag else "" if lim is not None else "  (includes shared memory touched)"))
        if a.get("worker_pid") != b.get("worker_pid"):
            flags.append(f"the worker's pid changed ({a.get('worker_pid')} -> {b.get('worker_pid')}): it restarted")
        for k in cols:
            if not k.startswith("rows_"):
                continue
            d = num(b, k) - num(a, k)
            note = ""
            if k == "rows_timeline":
                note = "  (one row per second up to walpilot.history_size)"
            elif k in ("rows_decisions", "rows_checkpoints"):
                cap = 256 if k == "rows_decisions" else 64
                note = f"  (the view keeps the last {cap})"
                if num(b, k) > cap:
                    flags.append(f"walpilot.{k[5:]} holds more than {cap} rows")
            elif k == "rows_wait_profile":
                note = "  (one row per backend type and wait event seen)"
            elif d > 0:
                note = "  (grew)"
            out.append(f"    {k:<24} {num(a, k):>8.0f} -> {num(b, k):>8.0f}{note}")
    last = ss[-1]
    for k in ("wp_warning", "wp_error"):
        if last.get(k) not in ("", "0", None):
            flags.append(f"{last[k]} walpilot {k[3:].upper()} lines (soak-log.txt)")
    out.append(f"  walpilot lines in the server log: LOG {last.get('wp_log')}, WARNING {last.get('wp_warning')}, "
               f"ERROR {last.get('wp_error')}; other WARNING/ERROR/FATAL lines: {last.get('other_warn_err')} "
               "(soak-log.txt)")
    try:
        other = open(os.path.join(ctx.out, "soak-log.txt")).read().split("# other WARNING/ERROR/FATAL/PANIC lines")[1]
        kinds = {}
        for line in other.splitlines()[1:]:
            m = re.search(r"\b(WARNING|ERROR|FATAL|PANIC):\s+(.*)", line)
            if m:
                k = m.group(1) + ": " + re.sub(r"\d+", "N", m.group(2))[:90]
                kinds[k] = kinds.get(k, 0) + 1
        for k, nk in sorted(kinds.items(), key=lambda x: -x[1])[:6]:
            out.append(f"    {nk:>6} x {k}")
    except (OSError, IndexError):
        pass
    out.append("  soak: " + ("FLAG: " + "; ".join(flags) if flags else "no growth over 1 MB after the warm-up, "
                                                                          "no walpilot WARNING or ERROR"))
    return "\n".join(out)


def _soak_picture(ctx, ss):
    """soak.png: private memory of the worker and the postmaster, walpilot's
    shared memory, and the rows of the views that grow, per sample"""
    import shutil
    if not shutil.which("gnuplot") or not ss:
        return
    cols = list(ss[0].keys())
    f = os.path.join(ctx.out, "soak.csv")

    def c(k):
        return cols.index(k) + 1
    mem = [(k, t) for k, t in (("worker_anon_kb", "worker RssAnon"), ("worker_rss_kb", "worker VmRSS"),
                               ("pm_anon_kb", "postmaster RssAnon")) if k in cols]
    rows = [k for k in cols if k.startswith("rows_") and len({s.get(k) for s in ss}) > 1] + \
        [k for k in ("wp_log",) if k in cols]
    gp = ["set terminal pngcairo size 1200,800 font ',9'", f"set output '{os.path.join(ctx.out, 'soak.png')}'",
          "set termoption noenhanced", "set datafile separator ','", "set grid", "set key top left",
          "set multiplot layout 2,1 title 'soak: walpilot worker and postmaster memory, shared memory, view rows'",
          "set ylabel 'MB'", "set yrange [0:*]"]
    gp.append("plot " + ", ".join(f"'{f}' using {c('t_min')}:(${c(k)}/1024) skip 1 with linespoints title '{t}'"
                                  for k, t in mem) +
              (f", '{f}' using {c('t_min')}:(${c('shmem_bytes')}/1048576) skip 1 with linespoints "
               "title 'walpilot shared memory'" if "shmem_bytes" in cols else ""))
    gp += ["set ylabel 'rows'", "set xlabel 'minutes'", "set logscale y", "set yrange [1:*]"]
    if rows:
        gp.append("plot " + ", ".join(f"'{f}' using {c('t_min')}:(${c(k)}+1) skip 1 with linespoints title '{k} + 1'"
                                      for k in rows))
    gp.append("unset multiplot")
    p = subprocess.run(["gnuplot"], input="\n".join(gp), text=True, capture_output=True)
    if p.returncode != 0:
        log(f"gnuplot: {p.stderr[-500:]}")
