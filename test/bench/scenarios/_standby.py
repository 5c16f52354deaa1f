"""A synchronous streaming standby beside each cluster of a scenario.

A config whose env holds STANDBY_KEY (a WALPILOT_STORAGE value) gets, once
its primary is initialised, a standby made by pg_basebackup, started on its
own emulated disk (its own device queue), and named in the primary's
synchronous_standby_names = '*' (appended after the initial load, which
therefore does not wait for it).  The standby stays up while the primary
restarts between runs, and goes with the cluster.
"""
import os
import subprocess
import time

import bench

STANDBY_KEY = "WP_BENCH_STANDBY_STORAGE"


def _make_standby(cl, spec):
    sdir = os.path.join(cl.dir, "standby")
    cl.standby_port = cl.ctx.free_port()
    cl.standby_dir = sdir
    cl.standby_shm = f"{cl.shm or 'walpilot-emu-bench'}-standby"
    bench.run([os.path.join(bench.BINDIR, "pg_basebackup"), "-D", sdir, "-R", "-X", "stream",
               "-c", "fast", "-h", cl.sock, "-p", str(cl.port)])
    with open(os.path.join(sdir, "postgresql.conf"), "a") as f:
        f.write(f"\n# bench standby\nport = {cl.standby_port}\n")
    subprocess.run([bench.EMU_STAT, cl.standby_shm, "--unlink"], capture_output=True)
    env = {"LD_PRELOAD": bench.SHIM, "WALPILOT_STORAGE": spec,
           "WALPILOT_STORAGE_SHM": cl.standby_shm}
    bench.run([os.path.join(bench.BINDIR, "pg_ctl"), "-D", sdir, "-l",
               os.path.join(cl.dir, "standby.log"), "-w", "-t", "300", "start"], env=env)
    with open(os.path.join(cl.data, "postgresql.conf"), "a") as f:
        f.write("synchronous_standby_names = '*'\n")
    cl.psql("SELECT pg_reload_conf()")
    for _ in range(600):
        if cl.psql("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'"
                   ).stdout.strip() == "1":
            break
        time.sleep(0.1)
    else:
        raise RuntimeError(f"the standby of {cl.label()} did not become synchronous")
    bench.log(f"  standby of {cl.label()} on port {cl.standby_port}: [{spec}], synchronous")


def install():
    """Wrap bench.Cluster (additively) with the standby of STANDBY_KEY."""
    if getattr(bench.Cluster, "_standby_wrapped", False):
        return
    create, destroy = bench.Cluster.create, bench.Cluster.destroy

    def create_with_standby(self):
        create(self)
        if self.env.get(STANDBY_KEY):
            _make_standby(self, self.env[STANDBY_KEY])

    def destroy_with_standby(self):
        if getattr(self, "standby_dir", None):
            bench.run([os.path.join(bench.BINDIR, "pg_ctl"), "-D", self.standby_dir, "-m", "fast",
                       "-w", "-t", "300", "stop"], check=False)
            subprocess.run([bench.EMU_STAT, self.standby_shm, "--unlink"], capture_output=True)
            self.standby_dir = None
        destroy(self)

    bench.Cluster.create = create_with_standby
    bench.Cluster.destroy = destroy_with_standby
    bench.Cluster._standby_wrapped = True
