#!/usr/bin/env python3
"""Checks of test/ecosystem/run that parse things: the exporter's scrape,
PromQL in the dashboard and the rules, the sql_exporter and pgwatch files,
the docs.  Each subcommand prints what is wrong and exits 1, or exits 0.

SQL runs through the command in $WP_PSQL (psql as the pg_monitor role)."""
import csv
import io
import json
import math
import os
import re
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
problems = []


def bad(msg):
    problems.append(msg)


def done():
    for p in problems:
        print("  " + p)
    sys.exit(1 if problems else 0)


def psql(sql):
    cmd = os.environ["WP_PSQL"].split() + ["--csv", "-c", sql]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return list(csv.DictReader(io.StringIO(r.stdout)))


def parse_scrape(path):
    """{name: [(labels dict, value float)]}, {family: type}"""
    series, types = {}, {}
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("# TYPE "):
            _, _, fam, typ = line.split(" ", 3)
            types[fam] = typ
            continue
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        if not m:
            continue
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        series.setdefault(m.group(1), []).append((labels, float(m.group(4))))
    return series, types


def one(series, metric, **want):
    rows = [v for l, v in series.get(metric, []) if all(l.get(k) == x for k, x in want.items())]
    if len(rows) != 1:
        bad(f"{metric}{want}: {len(rows)} series, expected 1")
        return None
    return rows[0]


def cmd_scrape(path, names_out):
    s, types = parse_scrape(path)
    walpilot = sorted(n for n in s if n.startswith("walpilot_"))
    with open(names_out, "w") as f:
        f.write("\n".join(walpilot) + "\n")
    if types.get("walpilot_commit_latency_seconds") != "histogram":
        bad("walpilot_commit_latency_seconds is not a histogram")
    buckets = sorted(((float("inf") if l["le"] == "+Inf" else float(l["le"])), v)
                     for l, v in s.get("walpilot_commit_latency_seconds_bucket", []))
    count = one(s, "walpilot_commit_latency_seconds_count")
    total = one(s, "walpilot_commit_latency_seconds_sum")
    commits = one(s, "walpilot_durable_commits_total")
    if len(buckets) < 20:
        bad(f"{len(buckets)} histogram buckets")
    if any(a[1] > b[1] for a, b in zip(buckets, buckets[1:])):
        bad("bucket counts are not cumulative")
    if buckets and (buckets[-1][0] != float("inf") or buckets[-1][1] != count):
        bad(f"+Inf bucket {buckets[-1]} is not _count {count}")
    if not count or count < 100:
        bad(f"_count {count}: the load's commits are missing")
    # two queries of one scrape, taken while the load runs: close, not equal
    if count is None or commits is None or abs(count - commits) > 0.05 * max(count, commits):
        bad(f"histogram _count {count} is not walpilot_durable_commits_total {commits} (within 5 %)")
    if count and total is not None and not (5e-6 < total / count < 1.0):
        bad(f"mean commit latency {total / count} s is not between 5 us and 1 s")
    if types.get("walpilot_durable_commits_total") != "counter" or types.get("walpilot_wait_seconds_total") != "counter":
        bad("counters are not typed counter")
    if one(s, "walpilot_worker_up") != 1:
        bad("walpilot_worker_up is not 1")
    one(s, "walpilot_mode_info", mode="tune")
    states = {l["state"]: v for l, v in s.get("walpilot_pilot_state_active", []) if l.get("pilot") == "commit_delay"}
    if sorted(states) != ["hold", "idle", "re-check", "trial"] or sum(states.values()) != 1:
        bad(f"commit_delay pilot states {states}")
    # the test ran walpilot.revert() after the pilot's first decision
    info = [l for l, v in s.get("walpilot_pilot_info", []) if l.get("pilot") == "commit_delay" and v == 1]
    if len(info) != 1 or info[0].get("reason") != "held off" or info[0].get("state") != "idle":
        bad(f"walpilot_pilot_info of the commit_delay pilot after walpilot.revert(): {info}")
    # every pilot of walpilot.pilots, and only those, with all its series
    pilots = sorted(l.get("pilot") for l, v in s.get("walpilot_pilot_info", []))
    in_view = sorted(r["pilot"] for r in psql("SELECT pilot FROM walpilot.pilots"))
    if pilots != in_view or "commit_delay" not in pilots:
        bad(f"walpilot_pilot_info pilots {pilots}, walpilot.pilots has {in_view}")
    for l, v in s.get("walpilot_pilot_info", []):
        if re.search(r"\d", l.get("reason", "")) or not l.get("reason"):
            bad(f"walpilot_pilot_info reason label is not a short kind: {l}")
    for pilot in pilots:
        one(s, "walpilot_pilot_setting_info", pilot=pilot)
        if sum(v for l, v in s.get("walpilot_pilot_state_active", []) if l.get("pilot") == pilot) != 1:
            bad(f"{pilot}: not exactly one active state")
        for m in ("last_hour", "trials_last_hour", "hold_offs_last_hour", "fallbacks_last_hour", "last_timestamp_seconds"):
            one(s, f"walpilot_pilot_decisions_{m}", pilot=pilot)
    if not (one(s, "walpilot_pilot_decisions_trials_last_hour", pilot="commit_delay") or 0) >= 1:
        bad("no commit_delay trial counted in the last hour")
    if not (one(s, "walpilot_pilot_decisions_hold_offs_last_hour", pilot="commit_delay") or 0) >= 1:
        bad("walpilot.revert()'s hold-off is not counted")
    fb = one(s, "walpilot_pilot_decisions_fallbacks_last_hour", pilot="commit_delay")
    last_hour = one(s, "walpilot_pilot_decisions_last_hour", pilot="commit_delay")
    if fb is None or last_hour is None or fb + 2 > last_hour:
        bad(f"fallbacks {fb} of {last_hour} decisions: the trial and the hold-off are not fallbacks")
    if one(s, "walpilot_recommendations_open") is None:
        bad("walpilot_recommendations_open is not served")
    verdicts = ("tune would win", "nothing to win", "out of the model's scope", "no evidence")
    pred = s.get("walpilot_prediction_evidence_seconds", [])
    if len(pred) != 1 or pred[0][0].get("verdict") not in verdicts or not 0 <= pred[0][1] <= 60:
        bad(f"walpilot_prediction_evidence_seconds {pred}")
    gain = s.get("walpilot_prediction_predicted_gain", [])
    if len(gain) != 1 or not (math.isnan(gain[0][1]) or 0 < gain[0][1] < 100):
        bad(f"walpilot_prediction_predicted_gain {gain}")
    # the model's record: commit_delay alone has a model; NaN before a graded trial
    model = sorted(l.get("pilot") for l, v in s.get("walpilot_pilot_model_trials", []))
    trials = one(s, "walpilot_pilot_model_trials", pilot="commit_delay")
    err = one(s, "walpilot_pilot_model_error", pilot="commit_delay")
    if model != ["commit_delay"] or trials is None or err is None or \
            not (math.isnan(err) if trials == 0 else err >= 0):
        bad(f"walpilot_pilot_model: pilots {model}, trials {trials}, error {err}")
    for name in ("commit_delay", "commit_siblings"):
        rows = [l for l, v in s.get("walpilot_setting_value", []) if l.get("name") == name]
        if len(rows) != 1 or rows[0].get("managed_by") not in ("walpilot", "dba", "default"):
            bad(f"walpilot_setting_value for {name}: {rows}")
        one(s, "walpilot_setting_configured_value", name=name)
    if one(s, "walpilot_setting_configured_value", name="commit_siblings") != 5:
        bad("configured commit_siblings is not the default 5")
    if not (one(s, "walpilot_decisions_total") or 0) >= 1:
        bad("no decision counted")
    dec = [l for l, v in s.get("walpilot_last_decision_info", [])]
    settings = [l.get("setting") for l in dec]
    if "commit_delay" not in settings or len(settings) != len(set(settings)) or not all(l.get("reason") for l in dec):
        bad(f"last decision per setting {dec}")
    est_v = one(s, "walpilot_wal_flush_estimate_seconds")
    if est_v is None or not (0.002 < est_v < 0.05):
        bad(f"flush estimate {est_v} s on the emulated 8 ms disk")
    cpf = one(s, "walpilot_last_minute_commits_per_flush")
    if cpf is None or not cpf > 1.2:
        bad(f"commits per flush {cpf} with 8 clients on an 8 ms disk")
    client = [v for l, v in s.get("walpilot_wait_seconds_total", []) if l.get("backend_type") == "client backend"]
    if not client or sum(client) <= 0:
        bad("no sampled wait time of client backends")
    ckpt = s.get("walpilot_last_checkpoint_duration_seconds", [])
    if len(ckpt) != 1 or ckpt[0][0].get("reason") != "requested" or not ckpt[0][1] >= 0:
        bad(f"last checkpoint {ckpt}")
    if not (one(s, "walpilot_checkpoints_last_hour") or 0) >= 1:
        bad("no checkpoint in the last hour")
    if not (one(s, "walpilot_last_minute_commits_per_second") or 0) > 0:
        bad("no commits in the last minute")
    est = s.get("walpilot_wal_flush_estimate_seconds", [])
    if len(est) != 1 or "source" not in est[0][0]:
        bad(f"flush estimate {est}")
    if one(s, "pg_exporter_last_scrape_error") != 0:
        bad("the exporter reports a scrape error")
    for l, v in s.get("pg_exporter_user_queries_load_error", []):
        if v != 0:
            bad(f"the exporter could not load the query file: {l}")
    done()


def cmd_recommendations(path, names_file):
    """The second scrape, with walpilot.tune_commit_delay off: the commit_delay
    recommendation is served; its names join the served ones."""
    s, types = parse_scrape(path)
    with open(names_file) as f:
        names = set(f.read().split())
    names |= {n for n in s if n.startswith("walpilot_")}
    with open(names_file, "w") as f:
        f.write("\n".join(sorted(names)) + "\n")
    n = one(s, "walpilot_recommendations_open")
    rows = s.get("walpilot_recommendation_confidence", [])
    if not n or n != len(rows):
        bad(f"walpilot_recommendations_open {n}, {len(rows)} walpilot_recommendation_confidence series")
    cd = [(l, v) for l, v in rows if l.get("setting") == "commit_delay"]
    if len(cd) != 1:
        bad(f"commit_delay recommendation: {cd}")
    else:
        l, v = cd[0]
        if not (0 < v <= 1) or l.get("requires_restart") != "false" or l.get("current_value") != "0" \
                or not re.fullmatch(r"\d+", l.get("recommended_value", "")) or int(l["recommended_value"]) <= 0:
            bad(f"commit_delay recommendation {l} {v}")
    info = [l for l, v in s.get("walpilot_pilot_info", []) if l.get("pilot") == "commit_delay"]
    if len(info) != 1 or info[0].get("reason") != "walpilot.tune_commit_delay = off":
        bad(f"walpilot_pilot_info with walpilot.tune_commit_delay off: {info}")
    done()


BUILTIN = set("""sum min max avg group stddev stdvar count count_values bottomk topk quantile
by without on ignoring group_left group_right bool and or unless offset
rate irate increase delta idelta deriv predict_linear histogram_quantile label_replace label_join
abs ceil floor round clamp clamp_min clamp_max exp ln log2 log10 sqrt time timestamp vector scalar
sort sort_desc absent absent_over_time changes resets day_of_month day_of_week hour minute month year
avg_over_time min_over_time max_over_time sum_over_time count_over_time quantile_over_time
stddev_over_time stdvar_over_time last_over_time present_over_time label_values query_result
humanizeDuration inf nan""".split())


def promql_names(expr):
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r'\{[^}]*\}', '', e)
    e = re.sub(r'\[[^\]]*\]', '', e)
    e = re.sub(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', ' ', e)
    e = re.sub(r'\$\w+', '', e)
    names = set()
    for m in re.finditer(r'(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?', e):
        if m.group(2) or m.group(1) in BUILTIN or re.fullmatch(r'e\d*', m.group(1)):
            continue
        names.add(m.group(1))
    return names


def dashboard_exprs(d):
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append((f"panel '{p.get('title')}'", t["expr"]))
            walk(p.get("panels", []))
    walk(d.get("panels", []))
    for a in d.get("annotations", {}).get("list", []):
        if "expr" in a:
            out.append((f"annotation '{a['name']}'", a["expr"]))
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            m = re.match(r'label_values\((.*),\s*\w+\)$', q)
            out.append((f"variable '{v['name']}'", m.group(1) if m else q))
    return out


# Series that exist only once there is a row behind them.  The test's load
# makes the pilot decide and runs a checkpoint, so only the recommendation
# is left: the second scrape has one (cmd_recommendations checks it).
ROW_DEPENDENT = {"walpilot_recommendation_confidence"}


def defined_names():
    """Metric names the postgres_exporter query file defines."""
    spec = yaml.safe_load(open(os.path.join(ROOT, "monitoring", "postgres_exporter", "walpilot.yaml")))
    names = set()
    for key, q in spec.items():
        for item in q["metrics"]:
            for col, m in item.items():
                if m["usage"] == "HISTOGRAM":
                    names |= {f"{key}_{col}_bucket", f"{key}_{col}_sum", f"{key}_{col}_count"}
                elif m["usage"] != "LABEL":
                    names.add(f"{key}_{col}")
    return names


def served_and_recorded(names_file, rules_file):
    served = set(open(names_file).read().split())
    missing = defined_names() - served
    if missing - ROW_DEPENDENT:
        bad(f"defined in the query file but not served: {sorted(missing - ROW_DEPENDENT)}")
    served |= missing & ROW_DEPENDENT
    rules = yaml.safe_load(open(rules_file))
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    return served, recorded, rules


def cmd_dashboard_names(dash_file, names_file, rules_file):
    served, recorded, _ = served_and_recorded(names_file, rules_file)
    d = json.load(open(dash_file))
    exprs = dashboard_exprs(d)
    if len(exprs) < 15:
        bad(f"only {len(exprs)} queries in the dashboard")
    for where, e in exprs:
        for n in promql_names(e):
            if n not in served and n not in recorded:
                bad(f"{where} queries {n}, which the exporter does not serve")
    ds = [v for v in d["templating"]["list"] if v["name"] == "datasource"]
    if not ds or ds[0]["type"] != "datasource" or ds[0]["query"] != "prometheus":
        bad("no $datasource variable of type prometheus")
    def walk(panels):
        for p in panels:
            if p.get("type") != "row" and p.get("datasource", {}).get("uid") != "${datasource}":
                bad(f"panel '{p.get('title')}' does not use $datasource")
            for t in p.get("targets", []):
                if t.get("datasource", {}).get("uid") != "${datasource}":
                    bad(f"a target of '{p.get('title')}' does not use $datasource")
            walk(p.get("panels", []))
    walk(d["panels"])
    types = {p["type"] for p in d["panels"]}
    if "heatmap" not in types:
        bad("no heatmap panel")
    done()


def cmd_dashboard_exprs(dash_file, out):
    d = json.load(open(dash_file))
    with open(out, "w") as f:
        for where, e in dashboard_exprs(d):
            e = e.replace("$__rate_interval", "30s").replace("$__interval", "30s").replace("$instance", ".*")
            f.write(json.dumps({"where": where, "expr": e}) + "\n")


def cmd_rules_names(names_file, rules_file):
    served, recorded, rules = served_and_recorded(names_file, rules_file)
    for g in rules["groups"]:
        for r in g["rules"]:
            for n in promql_names(r["expr"]):
                if n not in served and n not in recorded:
                    bad(f"rule {r.get('record') or r.get('alert')} uses {n}, which the exporter does not serve")
    alerts = {r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    for a in ("WalpilotCommitLatencyHigh", "WalpilotPilotFellBack", "WalpilotCheckpointStalls"):
        if a not in alerts:
            bad(f"alert {a} missing")
    done()


def cmd_sql_exporter(collector_file, names_file):
    served = set(open(names_file).read().split())
    defined = defined_names()
    if not served <= defined:
        bad(f"served but not defined: {sorted(served - defined)}")
    c = yaml.safe_load(open(collector_file))
    queries = {q["query_name"]: q["query"] for q in c["queries"]}
    results = {}
    for name, sql in queries.items():
        try:
            results[name] = psql(sql)
        except RuntimeError as e:
            bad(f"query {name}: {e}")
    names = set()
    for m in c["metrics"]:
        names.add(m["metric_name"])
        rows = results.get(m["query_ref"])
        if rows is None:
            continue
        if not rows:
            continue
        for col in m.get("key_labels", []) + m["values"]:
            if col not in rows[0]:
                bad(f"{m['metric_name']}: column {col} not in the result of {m['query_ref']}")
    buckets = results.get("walpilot_commit_latency_seconds_bucket", [])
    if not buckets or buckets[-1]["le"] != "+Inf":
        bad("histogram buckets of the collector do not end at +Inf")
    if names != defined:
        bad(f"sql_exporter only: {sorted(names - defined)}; postgres_exporter only: {sorted(defined - names)}")
    done()


def cmd_pgwatch(path, server_major):
    spec = yaml.safe_load(open(path))
    metrics = spec["metrics"]
    if len(metrics) < 6:
        bad(f"only {len(metrics)} pgwatch metrics")
    for name, m in metrics.items():
        versions = sorted(int(v) for v in m["sqls"])
        usable = [v for v in versions if v <= server_major]
        if not usable:
            bad(f"{name}: no SQL for PostgreSQL {server_major}")
            continue
        try:
            rows = psql(m["sqls"][usable[-1]])
        except RuntimeError as e:
            bad(f"{name}: {e}")
            continue
        if not rows:
            continue
        cols = list(rows[0])
        if cols[0] != "epoch_ns" or not re.fullmatch(r"\d{19}", rows[0]["epoch_ns"]):
            bad(f"{name}: first column is not epoch_ns in ns: {cols[0]}={rows[0].get(cols[0])}")
        for g in m.get("gauges", []):
            if g != "*" and g not in cols:
                bad(f"{name}: gauge {g} is not a column")
            if g.startswith("tag_"):
                bad(f"{name}: tag column {g} listed as a gauge")
        if "description" not in m:
            bad(f"{name}: no description")
    for p in spec.get("presets", {}).values():
        for n in p["metrics"]:
            if n not in metrics:
                bad(f"preset names unknown metric {n}")
    done()


def cmd_reference():
    ref = open(os.path.join(ROOT, "docs", "reference.md")).read()
    everything = ref
    for d in [os.path.join(ROOT, "README.md")] + [os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))]:
        if d.endswith(".md"):
            everything += open(d).read()
    gucs = {r["name"] for r in psql("SELECT name FROM pg_settings WHERE name LIKE 'walpilot.%'")}
    views = {r["n"] for r in psql("SELECT 'walpilot.' || viewname AS n FROM pg_views WHERE schemaname = 'walpilot'")}
    funcs = {r["n"] for r in psql("SELECT 'walpilot.' || proname AS n FROM pg_proc WHERE pronamespace = 'walpilot'::regnamespace")}
    # every name in a reference table is real
    heads = set(re.findall(r'^\| `(walpilot\.[a-z_0-9]+)', ref, re.M)) | set(re.findall(r'^#+ `(walpilot\.[a-z_0-9]+)`', ref, re.M))
    for n in sorted(heads):
        if n not in gucs | views | funcs:
            bad(f"docs/reference.md documents {n}, which the installed extension does not have")
    # every installed name is documented somewhere
    for n in sorted(gucs | views | funcs):
        if f"`{n}" not in everything:
            bad(f"{n} is documented nowhere (docs/reference.md or another docs/ file)")
    # the columns of every view in docs/reference.md are the view's columns
    for v in sorted(views):
        m = re.search(r'^#+ `' + re.escape(v) + r'`.*?\n(.*?)(?=^#)', ref + "\n#", re.M | re.S)
        if not m:
            continue
        documented = set()
        for cell in re.findall(r'^\| (`[^|]*`) \|', m.group(1), re.M):
            documented |= set(re.findall(r'`([a-z_0-9]+)`', cell))
        real = {r["column_name"] for r in psql(
            f"SELECT column_name FROM information_schema.columns WHERE table_schema = 'walpilot' AND table_name = '{v.split('.')[1]}'")}
        if documented - real:
            bad(f"docs/reference.md: {v} has no column {sorted(documented - real)}")
        # a column added later may be documented in its feature's own docs file
        undocumented = {c for c in real - documented if f"`{c}`" not in everything}
        if undocumented:
            bad(f"columns of {v} documented nowhere: {sorted(undocumented)}")
    done()


def cmd_prose():
    # everything a user reads: the README, docs/, the benchmark READMEs, the
    # changelog, the package's and PGXN's texts, the monitoring files
    files = ["README.md", "CHANGELOG.md", "META.json", "walpilot.control"]
    for d, pat in (("docs", r".*\.md$"), ("test/bench", r"README-.*\.md$"), ("debian", r"^(control|control\.in|changelog|copyright)$")):
        files += sorted(f"{d}/{f}" for f in os.listdir(os.path.join(ROOT, d)) if re.match(pat, f))
    for d, _, fs in os.walk(os.path.join(ROOT, "monitoring")):
        files += sorted(os.path.relpath(os.path.join(d, f), ROOT) for f in fs)
    for f in files:
        p = os.path.join(ROOT, f)
        if not os.path.exists(p):
            bad(f"{f} missing")
            continue
        text = open(p).read()
        for pat, what in ((r'\bsudo\b', "sudo"), (r'\bseeds? 0\d\d\b', "seed numbers"), (r'\bissues? #?\d', "issue numbers"),
                          (r'this machine', "'this machine'"), (r'(?<![\w/.-])[0-9a-f]{7,40}(?![\w/.-])', "a commit hash"),
                          (r'\.\./shared|shared/seeds', "shared files")):
            for m in re.finditer(pat, text):
                if what == "a commit hash" and not re.search(r'[a-f]', m.group(0)):
                    continue
                line = text[:m.start()].count("\n") + 1
                bad(f"{f}:{line}: {what}: {m.group(0)!r}")
    readme = open(os.path.join(ROOT, "README.md")).read()
    ci = [l.strip() for l in open(os.path.join(ROOT, ".ci", "run")) if l.strip() and not l.startswith("#")
          and not l.startswith("set ") and not l.startswith("cd ")]
    for c in ci:
        if c not in readme:
            bad(f"README.md does not show the CI command {c!r}")
    first = "\n".join(readme.splitlines()[:60]).lower()
    for w in ("create extension walpilot", "shared_preload_libraries", "walpilot.mode", "apt-get install"):
        if w not in first:
            bad(f"the README's first screen has no {w!r}")
    done()


def cmd_quickstart_sql(out):
    """The README quick start's SQL blocks, in order, for psql."""
    readme = open(os.path.join(ROOT, "README.md")).read()
    qs = readme.split("\n## ", 2)[1] if "\n## " in readme else readme
    blocks = re.findall(r'```sql\n(.*?)```', qs, re.S)
    if not blocks:
        bad("no SQL in the quick start")
    with open(out, "w") as f:
        f.write("\n".join(blocks))
    done()


def cmd_monitoring_doc(rules_file):
    """docs/monitoring.md names every metric, rule and alert, and no other."""
    doc = open(os.path.join(ROOT, "docs", "monitoring.md")).read()
    rules = yaml.safe_load(open(rules_file))
    names = defined_names() | {r.get("record") or r.get("alert") for g in rules["groups"] for r in g["rules"]}
    mentioned = set(re.findall(r'`((?:walpilot[_:]|Walpilot)[A-Za-z0-9_:]*)`', doc))
    # pgwatch metric names may be named too
    pgwatch = set(yaml.safe_load(open(os.path.join(ROOT, "monitoring", "pgwatch", "walpilot.yaml")))["metrics"])
    for n in sorted(mentioned - names - pgwatch):
        bad(f"docs/monitoring.md names {n}, which is neither a metric nor a rule")
    for n in sorted(names - mentioned):
        if n.endswith(("_sum", "_count")) and n.rsplit("_", 1)[0] + "_bucket" in mentioned:
            continue
        bad(f"docs/monitoring.md does not document {n}")
    done()


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"scrape": cmd_scrape, "dashboard-names": cmd_dashboard_names, "dashboard-exprs": cmd_dashboard_exprs,
     "rules-names": cmd_rules_names, "sql-exporter": cmd_sql_exporter,
     "pgwatch": lambda p, v: cmd_pgwatch(p, int(v)), "reference": cmd_reference,
     "prose": cmd_prose, "monitoring-doc": cmd_monitoring_doc, "quickstart-sql": cmd_quickstart_sql,
     "recommendations": cmd_recommendations}[cmd](*args)
