# walpilot.tune_max_wal_size: a tiny max_wal_size under a write load.
# Off, walpilot only recommends (postgresql.auto.conf untouched, no decision);
# on, the worker raises it by the recommendation's own rule, bounded by
# walpilot.max_wal_size_max, with a decision row; walpilot.revert() puts
# postgresql.auto.conf back byte for byte; a DBA who changes max_wal_size
# afterwards takes it back and walpilot leaves it alone.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use WalpilotTest;

# the DBA's postgresql.conf has max_wal_size = 32MB and their own
# postgresql.auto.conf; the flush pilot stays out of it
my $node = WalpilotTest::server_settings_node('tunewal');
$node->append_conf('postgresql.conf', qq{
walpilot.tune_checkpoint_flush = off
walpilot.max_wal_size_max = 256MB
});
$node->reload;
my $dba_bytes = WalpilotTest::dba_auto_conf();
sub slurp { return WalpilotTest::slurp_bytes(WalpilotTest::auto_conf_path()) // ''; }

my $wal_ckpts = q{SELECT count(*) FROM walpilot.checkpoints
				   WHERE reason = 'wal' AND finished_at IS NOT NULL};

# small inserts with bulk updates (about 0.5 MB of WAL each) until $more
# more checkpoints by WAL volume (max_wal_size = 32MB) have finished: a
# busy shared machine only makes it take longer
sub write_load
{
	my ($more) = @_;
	my $before = $node->safe_psql('postgres', $wal_ckpts);
	WalpilotTest::start_load();
	my $ok = $node->poll_query_until('postgres',
		"SELECT ($wal_ckpts) >= $before + $more");
	WalpilotTest::stop_load();
	return $ok;
}

my $decisions = q{SELECT count(*) FROM walpilot.decisions WHERE setting = 'max_wal_size'};

# The worker weighs a raise in the tick in which the last checkpoint by WAL
# volume gets its commit figures (about 2 s after it ends): wait for those
# and for two more ticks, the time a raise would have taken, before
# checking that none came.
sub wait_until_weighed
{
	my ($what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $ok = $node->poll_query_until('postgres', q{
		SELECT commits IS NOT NULL FROM walpilot.checkpoints
		 WHERE reason = 'wal' AND finished_at IS NOT NULL
		 ORDER BY started_at DESC LIMIT 1});
	my $ticks = $node->safe_psql('postgres', 'SELECT ticks FROM walpilot.status');
	$ok &&= $node->poll_query_until('postgres',
		"SELECT ticks > $ticks + 1 FROM walpilot.status");
	ok($ok, "$what: the worker has weighed the last checkpoint by WAL volume");
}

# ---- off: the recommendation only ----
ok(write_load(3), 'off: the load triggers checkpoints by WAL volume');
ok($node->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM walpilot.recommendations WHERE setting = 'max_wal_size'}),
	'off: max_wal_size is recommended');
is($node->safe_psql('postgres', q{
	SELECT current_value || '|' || (evidence ->> 'walpilot_applies_it')
	  FROM walpilot.recommendations WHERE setting = 'max_wal_size'}),
	'32MB|false', 'off: the recommendation says walpilot does not apply it');
wait_until_weighed('off');
is($node->safe_psql('postgres', 'SHOW max_wal_size'), '32MB',
	'off: max_wal_size is the DBA\'s');
is(slurp(), $dba_bytes, 'off: postgresql.auto.conf untouched');
is($node->safe_psql('postgres', $decisions), '0', 'off: no decision');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.settings WHERE name = 'max_wal_size'}),
	'0', 'off: walpilot.settings does not list max_wal_size');
like($node->safe_psql('postgres', 'SELECT walpilot.report()'),
	qr/^  walpilot\.tune_max_wal_size = on .* to let walpilot apply the max_wal_size recommendation itself$/m,
	'off: report() says what walpilot would need to apply it');

# ---- on: raised, bounded, recorded ----
$node->append_conf('postgresql.conf', "walpilot.tune_max_wal_size = on\n");
$node->reload;
ok($node->poll_query_until('postgres',
		q{SELECT setting::int > 32 FROM pg_settings WHERE name = 'max_wal_size'}),
	'on: walpilot raises max_wal_size');
my $raised = $node->safe_psql('postgres', 'SHOW max_wal_size');
like($raised, qr/^(64|128|256)MB$/,
	"on: to $raised, within walpilot.max_wal_size_max (256MB)");
like(slurp(), qr/\A\Q$dba_bytes\E\n# walpilot trial value: .*\nmax_wal_size = '$raised'\n\z/,
	'on: postgresql.auto.conf is the DBA\'s file and walpilot\'s line');
is($node->safe_psql('postgres',
		q{SELECT sourcefile LIKE '%postgresql.auto.conf' FROM pg_settings WHERE name = 'max_wal_size'}),
	't', 'on: pg_settings names postgresql.auto.conf');
is($node->safe_psql('postgres', q{
	SELECT old_value || '|' || new_value || '|' || (reason LIKE '%checkpoints by WAL volume%')
	       || '|' || ((evidence::jsonb ->> 'wal_checkpoints')::int >= 2)
	  FROM walpilot.decisions WHERE setting = 'max_wal_size' ORDER BY decided_at LIMIT 1}),
	"32MB|$raised|true|true", 'on: a decision row with the evidence');
is($node->safe_psql('postgres', q{
	SELECT configured_value || '|' || effective_value || '|' || managed_by
	  FROM walpilot.settings WHERE name = 'max_wal_size'}),
	"32MB|$raised|walpilot", 'on: walpilot.settings: walpilot manages it over the DBA\'s 32MB');
ok($node->poll_query_until('postgres',
		q{SELECT count(*) = 0 FROM walpilot.recommendations WHERE setting = 'max_wal_size'}),
	'on: the recommendation is gone once applied');
like($node->safe_psql('postgres', 'SELECT walpilot.report()'),
	qr/^  max_wal_size: raised by walpilot \(the DBA's 32MB, in force $raised\)$/m,
	'on: report() shows what walpilot did with max_wal_size');
# the raise is the recommendation or the bound, whichever is smaller, and
# the evidence names the bound only when it cut the raise (a recommendation
# of exactly 256MB is not bounded)
is($node->safe_psql('postgres', q{
	SELECT CASE WHEN (evidence::jsonb ->> 'recommended_mb')::int > 256
				THEN (new_value = '256MB' AND evidence::jsonb ->> 'bounded_by' = 'walpilot.max_wal_size_max')::text
				ELSE (new_value = (evidence::jsonb ->> 'recommended_mb') || 'MB' AND evidence::jsonb ->> 'bounded_by' = '')::text
		   END
	  FROM walpilot.decisions WHERE setting = 'max_wal_size' ORDER BY decided_at LIMIT 1}),
	'true', 'on: the raise is min(recommended, bound); bounded_by says which');

# ---- walpilot.revert(): the DBA's file byte for byte ----
# the raise after the revert's hold-off runs under a bound below the
# smallest recommendation (twice the current 32MB); set before the revert,
# so the hold-off cannot end under the old bound (walpilot never lowers a
# raise it made when the bound comes down)
$node->append_conf('postgresql.conf', "walpilot.max_wal_size_max = 40MB\n");
$node->reload;
$node->safe_psql('postgres', 'SELECT walpilot.revert()');
WalpilotTest::wait_for_dba_file('revert');
ok($node->poll_query_until('postgres', q{SELECT current_setting('max_wal_size') = '32MB'}),
	'revert: the DBA\'s 32MB is in force again');
is($node->safe_psql('postgres', q{
	SELECT old_value || '|' || new_value || '|' || reason FROM walpilot.decisions
	 WHERE setting = 'max_wal_size' ORDER BY decided_at DESC LIMIT 1}),
	"$raised|(DBA's)|walpilot.revert() or DROP EXTENSION", 'revert: a decision row');

# after walpilot.tune_interval the evidence (the same checkpoints) still
# holds: raised again, now always cut by the 40MB bound
ok($node->poll_query_until('postgres',
		q{SELECT setting::int > 32 FROM pg_settings WHERE name = 'max_wal_size'}),
	'after the hold-off: raised again');
my $again = $node->safe_psql('postgres', 'SHOW max_wal_size');
is($again, '40MB', 'bounded: raised to walpilot.max_wal_size_max (40MB)');
# (the raise's row, not the latest: at 40MB the same checkpoints count
# again, and the next tick may add a "not raised: ... above the bound" row)
is($node->safe_psql('postgres', q{
	SELECT (evidence::jsonb ->> 'recommended_mb')::int >= 64
		   AND evidence::jsonb ->> 'bounded_by' = 'walpilot.max_wal_size_max'
		   AND reason LIKE '%; bounded by walpilot.max_wal_size_max'
	  FROM walpilot.decisions WHERE setting = 'max_wal_size' AND new_value = '40MB'
	 ORDER BY decided_at DESC LIMIT 1}),
	't', 'bounded: the decision names the bound over the larger recommendation');

# ---- the DBA takes it back: a new postgresql.conf value ----
$node->append_conf('postgresql.conf', "max_wal_size = 48MB\n");
$node->reload;
ok($node->poll_query_until('postgres', q{SELECT current_setting('max_wal_size') = '48MB'}),
	'DBA: the DBA\'s new 48MB is in force');
WalpilotTest::wait_for_dba_file('DBA: walpilot\'s line is gone');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM walpilot.decisions WHERE setting = 'max_wal_size'
	   AND reason LIKE 'the DBA took the setting back%'}),
	'DBA: a decision row says the DBA took it back');
is($node->safe_psql('postgres', q{
	SELECT old_value FROM walpilot.decisions WHERE setting = 'max_wal_size'
	   AND reason LIKE 'the DBA took the setting back%'}),
	$again, 'DBA: the row names the value walpilot had in force');
is($node->safe_psql('postgres',
		q{SELECT managed_by FROM walpilot.settings WHERE name = 'max_wal_size'}),
	'dba', 'DBA: walpilot.settings: managed by the DBA');
my $n = $node->safe_psql('postgres', $decisions);
ok(write_load(2), 'DBA: the load triggers checkpoints by WAL volume again');
wait_until_weighed('DBA');
is($node->safe_psql('postgres', 'SHOW max_wal_size'), '48MB',
	'DBA: a new write load does not make walpilot raise it again');
is($node->safe_psql('postgres', $decisions), $n, 'DBA: and no new decision');
is($node->safe_psql('postgres', q{
	SELECT coalesce(max(evidence ->> 'walpilot_applies_it'), 'none')
	  FROM walpilot.recommendations WHERE setting = 'max_wal_size'}) =~ /^(false|none)$/ ? 1 : 0,
	1, 'DBA: a recommendation, if any, says walpilot does not apply it');

$node->stop;
done_testing();
