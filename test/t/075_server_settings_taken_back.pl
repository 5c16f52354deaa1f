# A DBA who takes checkpoint_flush_after back keeps it across a restart:
# the release is recorded in pg_walpilot/released (written, fsynced,
# renamed), so after a restart walpilot still leaves the setting alone --
# also when the DBA's way of taking it back left no line of theirs
# (ALTER SYSTEM RESET).  Removing that file and reloading hands the setting
# back to walpilot.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest qw(:DEFAULT :server_settings);

my $node = server_settings_node('sstaken');
my $pgdata = $node->data_dir;
my $autoconf = "$pgdata/postgresql.auto.conf";
my $released = "$pgdata/pg_walpilot/released";

start_load();

# ---- the DBA resets the setting while a trial value is in force ----
wait_for_trial_value('first trial');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET checkpoint_flush_after');
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT managed_by = 'dba' AND effective_value = '256kB'
	  FROM walpilot.settings WHERE name = 'checkpoint_flush_after'}),
	'ALTER SYSTEM RESET: the DBA manages it, the default in force');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after'
	   AND reason LIKE 'the DBA took the setting back (reset by ALTER SYSTEM%'}),
	'a decision row says the DBA took it back');
like(slurp_bytes($released) // '', qr/^released checkpoint_flush_after reset by ALTER SYSTEM/m,
	'the release is recorded in pg_walpilot/released');
my $dba_file = slurp_bytes($autoconf);
unlike($dba_file, qr/walpilot|checkpoint_flush_after/,
	"the file is the DBA's, with no line for the setting");

# ---- a restart: still the DBA's ----
stop_load();
$node->restart;
start_load();
ok($node->poll_query_until('postgres', q{
	SELECT managed_by = 'dba' FROM walpilot.settings s, walpilot.status w
	 WHERE s.name = 'checkpoint_flush_after' AND w.worker_pid IS NOT NULL}),
	'after the restart walpilot.settings still says the DBA manages it');
my $ck = $node->safe_psql('postgres',
	"SELECT count(*) FROM walpilot.checkpoints WHERE finished_at IS NOT NULL");
ok($node->poll_query_until('postgres',
	"SELECT count(*) >= $ck + 4 FROM walpilot.checkpoints WHERE finished_at IS NOT NULL"),
	'four checkpoints pass under load');
is(slurp_bytes($autoconf), $dba_file, 'walpilot has not written the setting again');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.checkpoints WHERE flush_after_kb <> 256}),
	'0', 'every checkpoint ran with the DBA\'s value');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'trial%'}),
	'0', 'no trial after the restart');
ok(!-e "$pgdata/pg_walpilot/server_settings", 'no record of a trial value');

# ---- the DBA hands it back: the file removed, a reload ----
unlink $released or die "cannot remove $released: $!";
$node->reload;
wait_for_trial_value('handed back');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.settings
	 WHERE name = 'checkpoint_flush_after' AND managed_by IN ('walpilot', 'default')}),
	'walpilot.settings no longer says the DBA manages it');

stop_load();
$node->stop;
unlike(slurp_bytes($autoconf), qr/walpilot/, 'a clean stop leaves no walpilot line');
done_testing();
