# postgresql.auto.conf cannot be written (here: its temporary file's name
# is taken by a directory, so neither ALTER SYSTEM nor walpilot can write
# it): the pilot stops with a WARNING and a decision row, and nothing is
# half-written -- the file, the settings in force and the record are as
# before.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest qw(:DEFAULT :server_settings);

my $node = server_settings_node('ssunwr');
my $pgdata = $node->data_dir;
my $autoconf = "$pgdata/postgresql.auto.conf";
my $dba_bytes = dba_auto_conf();

mkdir "$pgdata/postgresql.auto.conf.tmp" or die;
start_load();
my $log_offset = -s $node->logfile;
ok($node->wait_for_log(qr/WARNING:  walpilot could not set checkpoint_flush_after to "512kB"/,
		$log_offset), 'a WARNING says the setting could not be written');
ok($node->wait_for_log(qr/WARNING:  walpilot stops tuning checkpoint_flush_after/,
		$log_offset), 'a WARNING says the pilot stops');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'stopped:%'}),
	'a decision row says the pilot stopped');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after'
	   AND reason LIKE 'not applied: could not write postgresql.auto.conf%'}),
	'1', 'a decision row names the failed write');
is(slurp_bytes($autoconf), $dba_bytes, 'postgresql.auto.conf is untouched');
ok(!-e "$pgdata/pg_walpilot/server_settings", 'no record is left behind');
is($node->safe_psql('postgres', 'SHOW checkpoint_flush_after'), '256kB',
	'the configured value is in force');
my $ck = $node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.checkpoints');
ok($node->poll_query_until('postgres',
	"SELECT count(*) >= $ck + 2 FROM walpilot.checkpoints WHERE finished_at IS NOT NULL"),
	'two more checkpoints pass');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'not applied%'}),
	'1', 'the stopped pilot does not try again');
rmdir "$pgdata/postgresql.auto.conf.tmp";
stop_load();
$node->stop;
is(slurp_bytes($autoconf), $dba_bytes, 'still the DBA\'s file after the stop');
done_testing();
