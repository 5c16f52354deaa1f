# checkpoint_timeout advice: timed checkpoints whose WAL is mostly full-page
# images.  Two servers under the same light pgbench load with a 30-s
# checkpoint_timeout: with full_page_writes the images dominate the WAL and
# the advice appears; without them it does not.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my @nodes;
for my $fpw ('on', 'off')
{
	my $node = new_node("fpw_$fpw", conf => qq{
shared_preload_libraries = 'walpilot'
walpilot.mode = 'observe'
log_checkpoints = on
checkpoint_timeout = 30s
max_wal_size = 1GB
full_page_writes = $fpw
});
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
	my ($o, $e);
	IPC::Run::run([ 'pgbench', '-i', '-s', '5', '-q', '-h', $node->host,
		'-p', $node->port, 'postgres' ], '>', \$o, '2>', \$e)
	  or die "pgbench -i failed: $e";
	push @nodes, $node;
}
my ($with, $without) = @nodes;

# a rate-limited load on both at once, long enough for three timed checkpoints
# (two of them a whole checkpoint_timeout after the previous one)
my @loads;
for my $node (@nodes)
{
	my ($o, $e);
	push @loads, IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-R', '100', '-T', '110',
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$o, '2>', \$e);
}
$_->finish for @loads;

my $timed = q{SELECT count(*) FROM walpilot.checkpoints
			   WHERE reason = 'time' AND started_at > now() - interval '1 hour'};
cmp_ok($with->safe_psql('postgres', $timed), '>=', 3, 'fpw on: three timed checkpoints');
cmp_ok($without->safe_psql('postgres', $timed), '>=', 3, 'fpw off: three timed checkpoints');

my $row = q{SELECT current_value || '|' || recommended_value || '|' || apply_sql
			  FROM walpilot.recommendations WHERE setting = 'checkpoint_timeout'};
is($with->safe_psql('postgres', $row),
	q{30s|60s|ALTER SYSTEM SET checkpoint_timeout = '60s'; SELECT pg_reload_conf();},
	'fpw on: full-page images most of the WAL: checkpoint_timeout advice');
cmp_ok($with->safe_psql('postgres',
		q{SELECT evidence ->> 'fpi_share_of_wal_bytes' FROM walpilot.recommendations
		   WHERE setting = 'checkpoint_timeout'}), '>=', 0.5,
	'fpw on: the evidence is the full-page images\' share');
is($without->safe_psql('postgres', $row), '',
	'fpw off: no full-page images: no checkpoint_timeout advice');

$with->safe_psql('postgres',
	"ALTER SYSTEM SET checkpoint_timeout = '60s'; SELECT pg_reload_conf();");
ok($with->poll_query_until('postgres',
		q{SELECT count(*) = 0 FROM walpilot.recommendations WHERE setting = 'checkpoint_timeout'}),
	'fpw on: gone once applied (the old checkpoints were timed by the old interval)');

$_->stop for @nodes;
done_testing();
