# The commit_delay pilot: on an emulated slow-flush disk under a
# flush-bound load it tunes commit_delay with decision rows; DBA pins win;
# revert(), mode = off and DROP EXTENSION put the configured value back; a
# restart starts from the DBA's configuration; on fast storage it does
# nothing.
# walpilot-test: alone (its fast-storage case compares flush times with a threshold)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

# walpilot.settings applies the published target in the calling session
# first, so it shows what SHOW commit_delay says from then on.
my $effective = q{SELECT effective_value FROM walpilot.settings WHERE name = 'commit_delay'};

# what SHOW says in a new session after its first commit (no view needed)
my $show_after_commit = "SELECT 1 \\g /dev/null\nSHOW commit_delay";

#
# slow flush: the pilot engages
#
my $node = emulated_node('hdd', 'hdd', "walpilot.mode = 'tune'\nmax_connections = 40");
$node->safe_psql('postgres', 'CREATE ROLE pinned LOGIN SUPERUSER');
$node->safe_psql('postgres', 'ALTER ROLE pinned SET commit_delay = 7');

my $load = start_insert_load($node, 8, 240);
ok($node->poll_query_until('postgres',
		q{SELECT count(*) > 0 FROM walpilot.decisions WHERE outcome LIKE 'kept%'}),
	'a flush-bound load on slow storage gets a kept trial');
my $decisions = $node->safe_psql('postgres',
	q{SELECT count(*) FROM walpilot.decisions WHERE reason LIKE 'trial%' AND evidence ? 'commits_per_s'});
cmp_ok($decisions, '>=', 1, 'trials are logged with their evidence');
ok($node->poll_query_until('postgres', "SELECT ($effective)::int > 0"),
	'sessions get a commit_delay above 0 without any file');
is($node->safe_psql('postgres',
		q{SELECT managed_by || '/' || source FROM walpilot.settings WHERE name = 'commit_delay'}),
	'walpilot/default', 'settings shows walpilot owning commit_delay at default priority');
my $show = $node->safe_psql('postgres', $show_after_commit);
cmp_ok($show, '>', 0, 'SHOW commit_delay tells the pilot\'s value');
like(slurp_file($node->data_dir . '/postgresql.auto.conf'), qr/^(?!.*commit_delay)/s,
	'nothing written to postgresql.auto.conf');

# DBA pins win: a session SET, and ALTER ROLE
is($node->safe_psql('postgres',
		"SET commit_delay = 3;\n$effective"),
	'3', 'SET in a session wins over the pilot');
is($node->safe_psql('postgres',
		q{SET commit_delay = 3; SELECT managed_by FROM walpilot.settings WHERE name = 'commit_delay'}),
	'dba', 'settings shows the session pin as the DBA\'s');
is($node->safe_psql('postgres', $effective, extra_params => [ '-U', 'pinned' ]),
	'7', 'ALTER ROLE ... SET commit_delay wins over the pilot');
is($node->safe_psql('postgres',
		q{SELECT effective_value FROM walpilot.settings WHERE name = 'commit_siblings'},
		extra_params => [ '-U', 'pinned' ]),
	'5', 'a session that pins commit_delay keeps the configured commit_siblings');

# revert() puts the configured value back everywhere
$node->safe_psql('postgres', 'SELECT walpilot.revert()');
ok($node->poll_query_until('postgres', "SELECT ($effective) = '0'"),
	'revert() puts commit_delay back to the configured value');
ok($node->poll_query_until('postgres',
		q{SELECT count(*) > 0 FROM walpilot.decisions WHERE reason LIKE 'walpilot.revert()%'}),
	'revert is a decision row');
ok($node->poll_query_until('postgres',
		q{SELECT pilot_reason LIKE 'held off until %' FROM walpilot.status}),
	'the pilot is held off after revert()');
# a fixed window: the pilot must not re-engage within it
sleep 3;
is($node->safe_psql('postgres', $effective), '0',
	'the pilot does not re-engage right after revert()');
$load->kill_kill;

#
# mode = off and DROP EXTENSION also revert; restart starts afresh
#
$node->append_conf('postgresql.conf', "walpilot.tune_interval = 10\n");
$node->reload;
$load = start_insert_load($node, 8, 240);
ok($node->poll_query_until('postgres', "SELECT ($effective)::int > 0"),
	'after tune_interval the pilot tunes again');
$node->append_conf('postgresql.conf', "walpilot.mode = 'observe'\n");
$node->reload;
ok($node->poll_query_until('postgres', "SELECT ($effective) = '0'"),
	'mode = observe puts the configured value back');
$node->append_conf('postgresql.conf', "walpilot.mode = 'tune'\n");
$node->reload;
ok($node->poll_query_until('postgres', "SELECT ($effective)::int > 0"),
	'mode = tune tunes again');
$node->safe_psql('postgres', 'DROP EXTENSION walpilot');
ok($node->poll_query_until('postgres', $show_after_commit, '0'),
	'DROP EXTENSION puts the configured value back');
$load->kill_kill;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
$node->restart;
is($node->safe_psql('postgres', $effective), '0',
	'after a restart sessions start from the configured value');
is($node->safe_psql('postgres', q{SELECT count(*) FROM walpilot.decisions}), '0',
	'decision log starts empty after a restart');
$node->stop;

#
# fast storage: the pilot stays at the configured value.  real_sync=0, so
# the emulated flush is what the server sees even when the real disk of a
# busy machine is slower than that.  A 50 us flush (an NVMe-class device):
# the pilot measures a flush as the time commits wait in it, run-queue
# wait included, and on a loaded 2-core machine the 0.2 ms ssd profile
# read 0.39-0.46 ms against the 0.5 ms engage threshold (0.21-0.26 ms for
# this one).  The load must qualify on every other count, so that the
# flush is what keeps the pilot out.
#
$node = emulated_node('ssd', 'flush_us=50,real_sync=0', "walpilot.mode = 'tune'\nmax_connections = 40");
$load = start_insert_load($node, 8, 20);
my $fast_re = qr{^not flush-bound: (\d+) commits/s \(needs (\d+)\), flush (\d+) us from \S+ \(needs (\d+)\), (\d+) committers \(needs (\d+)\)};
my $r = '';
wait_until('fast storage: a load that qualifies but for the flush (the pilot says so)',
	20, sub {
		$r = $node->safe_psql('postgres', 'SELECT pilot_reason FROM walpilot.status');
		return $r =~ $fast_re && $1 >= $2 && $5 >= $6;
	})
  or diag("last pilot_reason: $r");
$load->finish;
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.decisions WHERE setting LIKE 'commit%' AND (reason LIKE 'trial%' OR new_value <> '-')}),
	'0', 'no trial and no change on fast storage')
  or diag($node->safe_psql('postgres',
		q{SELECT string_agg(concat_ws(' | ', old_value, new_value, reason, evidence, outcome), E'\n' ORDER BY decided_at) FROM walpilot.decisions}));
is($node->safe_psql('postgres', $effective), '0',
	'commit_delay stays at the configured value on fast storage');
$node->stop;

done_testing();
