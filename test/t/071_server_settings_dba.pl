# A DBA who sets checkpoint_flush_after while walpilot manages it takes it
# back: by ALTER SYSTEM (their line replaces walpilot's and the file is
# theirs) or in postgresql.conf (walpilot removes its line so theirs is in
# force); walpilot.settings says managed_by = 'dba' and walpilot does not
# write the setting again.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest qw(:DEFAULT :server_settings);

my $node = server_settings_node('ssdba');
my $pgdata = $node->data_dir;
my $autoconf = "$pgdata/postgresql.auto.conf";
my $dba_bytes = dba_auto_conf();

start_load();

# ---- ALTER SYSTEM by the DBA ----
wait_for_trial_value('first trial');
$node->safe_psql('postgres', q{ALTER SYSTEM SET checkpoint_flush_after = '1MB'});
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT managed_by = 'dba' AND effective_value = '1MB'
	  FROM walpilot.settings WHERE name = 'checkpoint_flush_after'}),
	"ALTER SYSTEM: walpilot.settings says the DBA manages it, 1MB in force");
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after'
	   AND reason LIKE 'the DBA took the setting back%'}),
	'ALTER SYSTEM: a decision row says the DBA took it back');
my $after = slurp_bytes($autoconf);
like($after, qr/^checkpoint_flush_after = '1MB'$/m, "the DBA's line is in the file");
unlike($after, qr/walpilot trial value|'512kB'/, "walpilot's lines are gone");
ok(!-e "$pgdata/pg_walpilot/server_settings",
	'the record is gone: nothing left for walpilot to revert');
# walpilot stays out for the following checkpoints
my $ck = $node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.checkpoints');
ok($node->poll_query_until('postgres',
	"SELECT count(*) >= $ck + 3 FROM walpilot.checkpoints WHERE finished_at IS NOT NULL"),
	'three more checkpoints pass');
is(slurp_bytes($autoconf), $after, 'walpilot does not touch the DBA\'s file again');
is($node->safe_psql('postgres', 'SHOW checkpoint_flush_after'), '1MB',
	"SHOW: the DBA's value");

# ---- postgresql.conf by the DBA (a fresh server, the DBA's file again) ----
stop_load();
$node->stop;
open(my $fh, '>', $autoconf) or die;
print $fh $dba_bytes;
close $fh;
# the take-back above holds across restarts until the DBA hands the
# setting back by removing its record (075 tests that)
ok(-e "$pgdata/pg_walpilot/released", 'the take-back is recorded durably');
unlink "$pgdata/pg_walpilot/released";
$node->start;
start_load();
wait_for_trial_value('after restart');
$node->append_conf('postgresql.conf', "checkpoint_flush_after = 128kB\n");
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT managed_by = 'dba' AND effective_value = '128kB'
	  FROM walpilot.settings WHERE name = 'checkpoint_flush_after'}),
	'postgresql.conf: the DBA manages it, 128kB in force');
wait_for_dba_file('postgresql.conf');
is($node->safe_psql('postgres',
	"SELECT sourcefile LIKE '%postgresql.conf' FROM pg_settings WHERE name = 'checkpoint_flush_after'"),
	't', 'pg_settings: the value comes from postgresql.conf');
$ck = $node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.checkpoints');
ok($node->poll_query_until('postgres',
	"SELECT count(*) >= $ck + 3 FROM walpilot.checkpoints WHERE finished_at IS NOT NULL"),
	'three more checkpoints pass');
is(slurp_bytes($autoconf), $dba_bytes, 'walpilot leaves the setting alone');

stop_load();
$node->stop;
done_testing();
