# checkpoint_flush_after tuned without side effects.  walpilot applies its
# value in the checkpointer's own memory, when the checkpointer logs
# "checkpoint starting", below every source of the DBA's; going back is
# applying the configured value the same way.  Under load, with the flush
# pilot applying and reverting values, this shows that
# - postgresql.conf and postgresql.auto.conf stay byte for byte the DBA's
#   and are never rewritten, and pg_walpilot/ holds no state, sampled
#   before, during a trial value, after walpilot.revert(), mode observe,
#   mode off, DROP EXTENSION, a killed postmaster and in a base backup;
# - nothing is reloaded: a line the DBA appended to postgresql.conf without
#   a reload is still not in force after walpilot applied and reverted
#   values (the old route rewrote postgresql.auto.conf and reloaded the
#   whole server, putting the DBA's unfinished edit in force);
# - a checkpoint really runs with walpilot's 512kB (walpilot.checkpoints,
#   walpilot.settings) while SHOW in a session says the configured 256kB;
#   after walpilot.revert(), mode observe, mode off and DROP EXTENSION the
#   next checkpoint runs with the configured value -- after revert() even
#   while the worker is stopped: the backend puts it back itself;
# - after a kill -9 of every process of the node mid-trial, a start without
#   walpilot has the DBA's checkpoint_flush_after and files;
# - a base backup taken while walpilot's value is in force starts as the
#   DBA configured it: its files are theirs and its first checkpoint runs
#   with the configured value.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest qw(:DEFAULT :server_settings);

# The DBA's own postgresql.auto.conf (an ALTER SYSTEM line, a hand-written
# comment and a hand-written line without the final newline) is the
# module's fixture; wal_level and max_wal_senders are for the base backup.
my $node = server_settings_node('ssnoside',
	"wal_level = replica\nmax_wal_senders = 2\n");
my $pgdata = $node->data_dir;
dba_files_unchanged('before walpilot applies anything');
my $loaded_at = $node->safe_psql('postgres', 'SELECT pg_conf_load_time()');

# The DBA is editing postgresql.conf and has not reloaded yet: a value
# nothing else sets (postgresql.auto.conf would outrank work_mem).
dba_append_conf("# the DBA's edit, not reloaded yet\neffective_cache_size = '77MB'\n");

start_load();

# the walpilot worker's pid
sub worker_pid
{
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'walpilot worker'");
}

# Stop the worker (SIGSTOP) while a checkpoint runs with walpilot's 512kB:
# the pilot changes its value only after a checkpoint ended, so with the
# worker stopped during such a checkpoint 512kB stays the value to apply.
# Returns the stopped worker's pid.
sub stop_worker_on_trial_value
{
	my ($what) = @_;
	for (1 .. 3)
	{
		wait_for_trial_value($what) or return undef;
		my $pid = worker_pid();
		kill 'STOP', $pid;
		return $pid if $node->safe_psql('postgres', q{
			SELECT flush_after_kb = 512 AND finished_at IS NULL
			  FROM walpilot.checkpoints ORDER BY started_at DESC LIMIT 1}) eq 't';
		# that checkpoint ended just before the stop: once more
		kill 'CONT', $pid;
	}
	fail("$what: the worker stopped during a checkpoint with 512kB");
	return undef;
}

# ---- a trial value in force: in the checkpointer only ----
wait_for_trial_value('first trial');
ok($node->poll_query_until('postgres', q{
	SELECT current_setting('checkpoint_flush_after') = '256kB'
	   AND s.source = 'default'
	   AND w.managed_by = 'walpilot' AND w.configured_value = '256kB'
	   AND w.effective_value = '512kB'
	   AND w.source = 'default, set by walpilot in the checkpointer'
	  FROM pg_settings s, walpilot.settings w
	 WHERE s.name = 'checkpoint_flush_after' AND w.name = s.name}),
	"walpilot.settings: walpilot's 512kB in force in the checkpointer, the configured 256kB; SHOW and pg_settings in a session: the configured 256kB (default)");
dba_files_unchanged('a trial value in force');

# ---- walpilot.revert(): at once, even with the worker stopped ----
my $wpid = stop_worker_on_trial_value('before walpilot.revert()');
my $timed_out = 0;
my ($rc) = $node->psql('postgres', 'SELECT walpilot.revert()',
	timeout => 120, timed_out => \$timed_out);
ok(($rc // -1) == 0 && !$timed_out,
	'walpilot.revert() returns while the worker is stopped');
checkpoint_runs_with('walpilot.revert(), the worker stopped', 256);
kill 'CONT', $wpid if $wpid;
is($node->safe_psql('postgres', q{
	SELECT managed_by || ' ' || effective_value || ' ' || configured_value
	  FROM walpilot.settings WHERE name = 'checkpoint_flush_after'}),
	'default 256kB 256kB', 'walpilot.settings: the configured 256kB is in force');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after'
	   AND reason LIKE 'walpilot.revert() by %'}),
	'the revert is a decision row once the worker runs again');
dba_files_unchanged('after walpilot.revert()');
# Walpilot applied 512kB and reverted it: the DBA's unfinished edit is
# still not in force, and the configuration was never reloaded.
is($node->safe_psql('postgres', 'SHOW effective_cache_size'), '4GB',
	"the DBA's line that was not reloaded is not in force in a new session");
is($node->safe_psql('postgres', 'SELECT pg_conf_load_time()'), $loaded_at,
	'the configuration was not reloaded since the server started');
unlike(slurp_bytes($node->logfile),
	qr/received SIGHUP, reloading configuration files/,
	'the server log has no reload');

# ---- walpilot.mode = 'observe' (the DBA's reload) ----
wait_for_trial_value('after the hold-off');
dba_append_conf("walpilot.mode = 'observe'\n");
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT reason LIKE 'observe mode%' FROM walpilot.pilots
	 WHERE pilot = 'checkpoint_flush_after'}),
	'mode observe: the pilot says so');
checkpoint_runs_with('mode observe', 256);
is($node->safe_psql('postgres', 'SHOW effective_cache_size'), '77MB',
	"the DBA's own reload puts their line in force");
dba_files_unchanged('mode observe');

# ---- walpilot.mode = 'off' ----
dba_append_conf("walpilot.mode = 'tune'\n");
$node->reload;
wait_for_trial_value('tune again');
dba_append_conf("walpilot.mode = 'off'\n");
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT reason LIKE 'off mode%' FROM walpilot.pilots
	 WHERE pilot = 'checkpoint_flush_after'}),
	'mode off: the pilot says so');
# with walpilot.mode = off walpilot.checkpoints records nothing: what the
# checkpointer has in force at its checkpoint start is in walpilot.settings
$node->safe_psql('postgres', 'CHECKPOINT');
is($node->safe_psql('postgres', q{
	SELECT managed_by || ' ' || effective_value FROM walpilot.settings
	 WHERE name = 'checkpoint_flush_after'}),
	'default 256kB', 'mode off: the next checkpoint runs with the configured 256kB');
dba_files_unchanged('mode off');

# ---- DROP EXTENSION ----
dba_append_conf("walpilot.mode = 'tune'\n");
$node->reload;
wait_for_trial_value('tune again');
my $from = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', 'DROP EXTENSION walpilot');
$node->safe_psql('postgres', 'CHECKPOINT');
my $until = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
dba_files_unchanged('DROP EXTENSION');
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
is($node->safe_psql('postgres', qq{
	SELECT coalesce(string_agg(DISTINCT flush_after_kb::text, ' '), 'none')
	  FROM walpilot.checkpoints
	 WHERE started_at BETWEEN '$from' AND '$until'}),
	'256', 'DROP EXTENSION: the next checkpoint runs with the configured 256kB');

# ---- a base backup while walpilot's value is in force ----
# The worker stays stopped from here to the kill below: 512kB is the value
# every checkpoint starts with meanwhile, the backup's own included.
$wpid = stop_worker_on_trial_value('before the base backup');
$from = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->backup('during_trial');
$until = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
# (its checkpoint, and any other that started meanwhile)
is($node->safe_psql('postgres', qq{
	SELECT coalesce(string_agg(DISTINCT flush_after_kb::text, ' '), 'none')
	  FROM walpilot.checkpoints
	 WHERE started_at BETWEEN '$from' AND '$until'}),
	'512', "the backup's checkpoint ran with walpilot's 512kB");
my $backup = $node->backup_dir . '/during_trial';
is(slurp_bytes("$backup/postgresql.auto.conf"), dba_auto_conf(),
	"the backup's postgresql.auto.conf is the DBA's, byte for byte");
is(slurp_bytes("$backup/postgresql.conf"), dba_conf_bytes(),
	"the backup's postgresql.conf is the DBA's, byte for byte");
my @state = -d "$backup/pg_walpilot"
  ? grep { !/^\.\.?$/ } do { opendir(my $d, "$backup/pg_walpilot"); readdir $d }
  : ();
ok(!@state, 'the backup holds no walpilot state') or diag("pg_walpilot/: @state");

# ---- the postmaster and every process of the node killed outright ----
# (as by a power loss) with walpilot's 512kB in force in the checkpointer,
# the worker still stopped: no process of the node does anything on its
# way out
is($node->safe_psql('postgres', q{
	SELECT managed_by || ' ' || effective_value FROM walpilot.settings
	 WHERE name = 'checkpoint_flush_after'}),
	'walpilot 512kB', "walpilot's 512kB is in force in the checkpointer");
my ($pmpid) = split /\n/, slurp_bytes("$pgdata/postmaster.pid");
my @children;
for my $stat (glob '/proc/[0-9]*/stat')
{
	my $s = slurp_bytes($stat) // next;
	push @children, $1 if $s =~ /^(\d+) \(.*\) \S (\d+) / && $2 == $pmpid;
}
ok(scalar(grep { $_ == $wpid } @children), 'the stopped worker is a child of the postmaster');
kill 'KILL', $pmpid, @children;
stop_load();
wait_until('every process of the node is gone', 60,
	sub { !grep { kill 0, $_ } $pmpid, @children });
dba_files_unchanged('killed postmaster and children');

# Start without walpilot: what the DBA configured, nothing of walpilot's.
# (no pg_ctl retry is needed: every process of the old server is gone)
ok(system('pg_ctl', '-D', $pgdata, '-l', $node->logfile, '-w', '-s',
		'-o', "--cluster-name=ssnoside -c shared_preload_libraries=''",
		'start') == 0,
	'the server starts without walpilot');
$node->_update_pid(1);
is($node->safe_psql('postgres', q{
	SELECT current_setting('shared_preload_libraries') || '|'
	       || current_setting('checkpoint_flush_after') || '|' || source
	  FROM pg_settings WHERE name = 'checkpoint_flush_after'}),
	'|256kB|default',
	"without walpilot: checkpoint_flush_after is the DBA's (256kB, default)");
dba_files_unchanged('started without walpilot');
$node->stop;
dba_files_unchanged('a clean stop');

# ---- the server restored from the backup ----
# Its pilot only observes: whatever it runs with comes from the backup.
my $restored = new_node('ssrestored', backup => [ $node, 'during_trial' ],
	conf => "walpilot.mode = 'observe'\n");
$restored->start;
is(slurp_bytes($restored->data_dir . '/postgresql.auto.conf'), dba_auto_conf(),
	"restored: postgresql.auto.conf is the DBA's");
$restored->safe_psql('postgres', 'CHECKPOINT');
is($restored->safe_psql('postgres', q{
	SELECT flush_after_kb FROM walpilot.checkpoints ORDER BY started_at LIMIT 1}),
	'256', 'restored: its first checkpoint runs with the configured 256kB');
is($restored->safe_psql('postgres', q{
	SELECT managed_by || ' ' || effective_value FROM walpilot.settings
	 WHERE name = 'checkpoint_flush_after'}),
	'default 256kB', 'restored: walpilot.settings says the configured 256kB');
ok($restored->poll_query_until('postgres', q{
	SELECT reason LIKE 'observe mode%' FROM walpilot.pilots
	 WHERE pilot = 'checkpoint_flush_after'}),
	'restored: the pilot only observes');
$restored->stop;
done_testing();
