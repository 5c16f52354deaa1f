# A value of the DBA's outranks walpilot's checkpoint_flush_after: walpilot
# applies its value in the checkpointer's memory with the lowest source
# (dynamic default), so a postgresql.conf line or an ALTER SYSTEM value,
# once reloaded, is what the checkpointer's next checkpoint runs with --
# also while walpilot's trial value is in force.  walpilot.settings then
# says the DBA manages it (the source names the file and line), the pilot
# does not tune and its reason says the setting is the DBA's; when the DBA
# removes their value, walpilot may manage it again (nothing is recorded
# on disk).  walpilot writes no file meanwhile.  With log_checkpoints = off
# the checkpointer logs no "checkpoint starting", where walpilot applies
# its value: the pilot does not tune and says why.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest qw(:DEFAULT :server_settings);

my $node = server_settings_node('ssdba', "log_checkpoints = off\n");
my $pgdata = $node->data_dir;
my $config_file = $node->safe_psql('postgres', 'SHOW config_file');
my $auto_file = "$pgdata/postgresql.auto.conf";
$auto_file = $1 . 'postgresql.auto.conf' if $config_file =~ m{^(.*/)};

start_load();

# the pilot's state and reason
sub pilot
{
	return $node->safe_psql('postgres', q{
		SELECT state || ': ' || reason FROM walpilot.pilots
		 WHERE pilot = 'checkpoint_flush_after'});
}

# ---- log_checkpoints = off: no trial ----
ok($node->poll_query_until('postgres', q{
	SELECT state = 'idle'
	   AND reason = 'log_checkpoints = off: walpilot applies checkpoint_flush_after when the checkpointer logs "checkpoint starting"'
	  FROM walpilot.pilots WHERE pilot = 'checkpoint_flush_after'}),
	'log_checkpoints = off: the pilot does not tune and says why')
  or diag(pilot());
# two loaded checkpoints (seen by the worker in pg_control): with
# log_checkpoints on a trial starts after the first
ok($node->poll_query_until('postgres', q{
	SELECT count(*) >= 2 FROM walpilot.checkpoints WHERE finished_at IS NOT NULL}),
	'log_checkpoints = off: two checkpoints pass under load');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions WHERE setting = 'checkpoint_flush_after'}),
	'0', 'log_checkpoints = off: no trial, no decision');
like(pilot(), qr/^idle: log_checkpoints = off/, 'log_checkpoints = off: still idle');

# ---- log_checkpoints = on: walpilot tunes ----
dba_append_conf("log_checkpoints = on\n");
$node->reload;
wait_for_trial_value('log_checkpoints = on');

# ---- the DBA's postgresql.conf line, while walpilot's value is in force ----
my $without_line = dba_conf_bytes();
my $line = dba_append_conf("checkpoint_flush_after = 128kB\n");
$node->reload;
# A new session has the DBA's value once the postmaster has reloaded, and
# by then the postmaster has signalled every child, the checkpointer too.
ok($node->poll_query_until('postgres', qq{
	SELECT setting = '16' AND sourcefile = '$config_file' AND sourceline = $line
	  FROM pg_settings WHERE name = 'checkpoint_flush_after'}),
	"postgresql.conf: a new session has the DBA's 128kB from line $line");
my $pinned_at = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
checkpoint_runs_with('postgresql.conf', 128);
my $source = "configuration file ($config_file line $line)";
ok($node->poll_query_until('postgres', qq{
	SELECT managed_by = 'dba' AND configured_value = '128kB'
	   AND effective_value = '128kB' AND source = '$source'
	  FROM walpilot.settings WHERE name = 'checkpoint_flush_after'}),
	"postgresql.conf: walpilot.settings says the DBA manages it, from $source")
  or diag($node->safe_psql('postgres',
		"SELECT * FROM walpilot.settings WHERE name = 'checkpoint_flush_after'"));
ok($node->poll_query_until('postgres', qq{
	SELECT state = 'idle'
	   AND reason LIKE '%checkpoint_flush_after is the DBA''s ($source)%'
	  FROM walpilot.pilots WHERE pilot = 'checkpoint_flush_after'}),
	"postgresql.conf: the pilot's reason says the setting is the DBA's")
  or diag(pilot());
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after'
	   AND (outcome LIKE 'interrupted: pinned: checkpoint_flush_after is the DBA''s%'
	        OR reason LIKE 'pinned: checkpoint_flush_after is the DBA''s%')}),
	"postgresql.conf: walpilot's trial ends, a decision row says the setting is the DBA's");
# the next spread checkpoint (timed, or by WAL volume) too: the pilot
# stays out, the checkpointer keeps the DBA's value
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) > 0 FROM walpilot.checkpoints
	 WHERE reason IN ('time', 'wal') AND started_at > '$pinned_at'
	   AND finished_at IS NOT NULL}),
	'postgresql.conf: a spread checkpoint passes');
is($node->safe_psql('postgres', qq{
	SELECT string_agg(DISTINCT flush_after_kb::text, ' ')
	  FROM walpilot.checkpoints WHERE started_at > '$pinned_at'}),
	'128', "postgresql.conf: every checkpoint since ran with the DBA's 128kB");
is($node->safe_psql('postgres', qq{
	SELECT count(*) FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND decided_at > '$pinned_at'
	   AND reason LIKE 'trial%'}),
	'0', 'postgresql.conf: no trial while the setting is the DBA\'s');
dba_files_unchanged("the DBA's postgresql.conf line");

# ---- the DBA takes the line out: walpilot may manage it again ----
dba_write_conf($without_line);
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT source = 'default' FROM pg_settings WHERE name = 'checkpoint_flush_after'}),
	'the line is gone: a new session has the default again');
wait_for_trial_value('the DBA took the line out');

# ---- ALTER SYSTEM SET by the DBA, while walpilot's value is in force ----
$node->safe_psql('postgres', q{ALTER SYSTEM SET checkpoint_flush_after = '1MB'});
$node->reload;
dba_snapshot();		# ALTER SYSTEM rewrote postgresql.auto.conf for the DBA
my $auto = slurp_bytes($auto_file);
is(scalar(() = $auto =~ /^checkpoint_flush_after = '1MB'$/mg), 1,
	"ALTER SYSTEM: postgresql.auto.conf has the DBA's line, once");
unlike($auto, qr/walpilot/i, 'ALTER SYSTEM: and no line of walpilot\'s');
my @lines = split /\n/, $auto;
my ($auto_line) = grep { $lines[ $_ - 1 ] =~ /^checkpoint_flush_after/ } 1 .. @lines;
ok($node->poll_query_until('postgres', q{
	SELECT setting = '128' FROM pg_settings WHERE name = 'checkpoint_flush_after'}),
	"ALTER SYSTEM: a new session has the DBA's 1MB");
checkpoint_runs_with('ALTER SYSTEM', 1024);
$source = "configuration file ($auto_file line $auto_line)";
ok($node->poll_query_until('postgres', qq{
	SELECT managed_by = 'dba' AND configured_value = '1MB'
	   AND effective_value = '1MB' AND source = '$source'
	  FROM walpilot.settings WHERE name = 'checkpoint_flush_after'}),
	"ALTER SYSTEM: walpilot.settings says the DBA manages it, from $source")
  or diag($node->safe_psql('postgres',
		"SELECT * FROM walpilot.settings WHERE name = 'checkpoint_flush_after'"));
ok($node->poll_query_until('postgres', qq{
	SELECT state = 'idle'
	   AND reason LIKE '%checkpoint_flush_after is the DBA''s ($source)%'
	  FROM walpilot.pilots WHERE pilot = 'checkpoint_flush_after'}),
	"ALTER SYSTEM: the pilot's reason says the setting is the DBA's")
  or diag(pilot());
dba_files_unchanged('ALTER SYSTEM');

# ---- ALTER SYSTEM RESET: the DBA's value is gone again ----
$node->safe_psql('postgres', 'ALTER SYSTEM RESET checkpoint_flush_after');
$node->reload;
dba_snapshot();
ok($node->poll_query_until('postgres', q{
	SELECT source = 'default' FROM pg_settings WHERE name = 'checkpoint_flush_after'}),
	'ALTER SYSTEM RESET: a new session has the default again');
checkpoint_runs_with('ALTER SYSTEM RESET', 256);
is($node->safe_psql('postgres', q{
	SELECT managed_by || ' ' || configured_value || ' ' || effective_value
	  FROM walpilot.settings WHERE name = 'checkpoint_flush_after'}),
	'default 256kB 256kB', 'ALTER SYSTEM RESET: walpilot.settings: the default');
ok($node->poll_query_until('postgres', q{
	SELECT reason NOT LIKE '%the DBA''s%' FROM walpilot.pilots
	 WHERE pilot = 'checkpoint_flush_after'}),
	"ALTER SYSTEM RESET: the pilot's reason no longer says the DBA's")
  or diag(pilot());

stop_load();
$node->stop;
dba_files_unchanged('a clean stop');
done_testing();
