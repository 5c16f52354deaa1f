# Instruments under pgbench: durable commits counted equal pgbench's count,
# one timeline row per second, WAL waits under writes and not under
# select-only, and agreement with pg_wait_sampling on the WAL events.
# walpilot-test: alone (it compares sample counts with pg_wait_sampling under load)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = new_node('instruments');
# pg_wait_sampling, the reference, is not packaged for every server version:
# the comparisons with it skip where it is absent.
my $have_pgws = -f $node->config_data('--pkglibdir') . '/pg_wait_sampling.so';
my $preload = $have_pgws ? 'walpilot,pg_wait_sampling' : 'walpilot';
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = '$preload'
fsync = on
autovacuum = off
walpilot.sample_interval = 10
pg_wait_sampling.profile_period = 10
max_connections = 30
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
$node->safe_psql('postgres', 'CREATE EXTENSION pg_wait_sampling') if $have_pgws;

# pgbench against the node; returns its stdout
sub pgbench
{
	my @args = @_;
	my ($out, $err);
	IPC::Run::run([ 'pgbench', '-h', $node->host, '-p', $node->port, @args, 'postgres' ],
		'>', \$out, '2>', \$err)
	  or die "pgbench failed: $err";
	return $out;
}

sub processed
{
	my ($out) = @_;
	return $out =~ /number of transactions actually processed: (\d+)/ ? $1 : -1;
}

sub reset_both
{
	$node->safe_psql('postgres', 'SELECT walpilot.reset()');
	$node->safe_psql('postgres', 'SELECT pg_wait_sampling_reset_profile()')
	  if $have_pgws;
}

pgbench('-i', '-s', '1', '-q');

# Write load: tpcb-like, durable commits.
reset_both();
my $out = pgbench('-n', '-c', '4', '-j', '2', '-T', '8');
my $n = processed($out);
cmp_ok($n, '>', 100, "pgbench ran ($n transactions)");
my $timed = $node->safe_psql('postgres', 'SELECT commits_timed FROM walpilot.status');
cmp_ok(abs($timed - $n), '<=', 0.02 * $n,
	"durable commits timed ($timed) equal pgbench's count ($n) within 2 %");
my $hist = $node->safe_psql('postgres', 'SELECT sum(commits) FROM walpilot.commit_latency');
cmp_ok(abs($hist - $timed), '<=', 0.02 * $n + 2,
	"histogram holds the timed commits ($hist)");

# Profile counts of WAL events, by the full type:event name (17 renamed
# IO:WALSync and IO:WALWrite to IO:WalSync and IO:WalWrite: counted under
# the old names here).
sub wal_name
{
	my ($k) = @_;
	$k =~ s/^IO:Wal(Sync|Write)$/IO:WAL$1/;
	return $k;
}
my %wal_events = map { $_ => 1 } ('LWLock:WALWrite', 'LWLock:WALInsert', 'IO:WALSync', 'IO:WALWrite');

sub walpilot_counts
{
	my ($where) = @_;
	$where //= 'true';
	my %c;
	for my $l (split /\n/, $node->safe_psql('postgres',
		"SELECT wait_event_type || ':' || wait_event, sum(samples) FROM walpilot.wait_profile WHERE $where GROUP BY 1"))
	{
		my ($k, $v) = split /\|/, $l;
		$c{ wal_name($k) } = $v;
	}
	return \%c;
}

sub pgws_counts
{
	my %c;
	for my $l (split /\n/, $node->safe_psql('postgres',
		"SELECT coalesce(event_type, 'CPU') || ':' || coalesce(event, 'CPU'), sum(count) FROM pg_wait_sampling_profile GROUP BY 1"))
	{
		my ($k, $v) = split /\|/, $l;
		$c{ wal_name($k) } = $v;
	}
	return \%c;
}

# Shares among non-idle waits: Activity, Client and Extension (idle
# extension workers, each tool sees the other's) and CPU (this
# pg_wait_sampling does not sample it) are left out of both.
sub shares
{
	my ($c) = @_;
	my $total = 0;
	for my $k (keys %$c)
	{
		next if $k =~ /^(Activity|Client|Extension|CPU|Timeout:CommitDelay)/;
		$total += $c->{$k};
	}
	my %s;
	my $wal = 0;
	for my $k (keys %wal_events)
	{
		$s{$k} = $total ? 100.0 * ($c->{$k} // 0) / $total : 0;
		$wal += $s{$k};
	}
	$s{WAL} = $wal;
	return (\%s, $total);
}

my $wp = walpilot_counts();
my $wal_samples = 0;
$wal_samples += $wp->{$_} // 0 for keys %wal_events;
cmp_ok($wal_samples, '>', 0, "WAL waits appear under a write load ($wal_samples samples)");

my ($wps, $wpt) = shares($wp);
SKIP:
{
	skip 'pg_wait_sampling is not installed for this server', 5 unless $have_pgws;
	my ($pgs, $pgt) = shares(pgws_counts());
	for my $k (sort(keys %wal_events), 'WAL')
	{
		my $d = abs($wps->{$k} - $pgs->{$k});
		cmp_ok($d, '<=', 5,
			sprintf("share of %s: walpilot %.1f %%, pg_wait_sampling %.1f %% (of %d / %d waiting samples)",
				$k, $wps->{$k}, $pgs->{$k}, $wpt, $pgt));
	}
}

# One timeline row per second, consecutive, covering the run.
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.timeline');
cmp_ok($rows, '>=', 6, "timeline has a row per second ($rows rows for an 8 s run)");
cmp_ok($rows, '<=', 12, 'and not more');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM (SELECT ts - lag(ts) OVER (ORDER BY ts) AS d FROM walpilot.timeline) s WHERE d <> interval '1 second'"),
	'0', 'timeline rows are one second apart, oldest first');
is($node->safe_psql('postgres',
		'SELECT bool_and(samples > 0) FROM walpilot.timeline'),
	't', 'every second has samples');
my $tl_commits = $node->safe_psql('postgres', 'SELECT sum(commits) FROM walpilot.timeline');
cmp_ok($tl_commits, '<=', $timed, "timeline commits ($tl_commits) do not exceed those timed");
cmp_ok($tl_commits, '>=', 0.7 * $timed, 'and cover most of them');
is($node->safe_psql('postgres',
		'SELECT bool_and(commit_p50_us <= commit_p95_us AND commit_p95_us <= commit_p99_us AND commit_p99_us <= commit_max_us) FROM walpilot.timeline WHERE commits > 0'),
	't', 'per-second percentiles are ordered');
is($node->safe_psql('postgres',
		'SELECT bool_and(wal_flushes > 0 AND commits_per_flush >= 1) FROM walpilot.timeline WHERE commits > 10'),
	't', 'with fsync on, commits lead flushes and commits_per_flush >= 1');
cmp_ok($node->safe_psql('postgres', 'SELECT sum(wal_bytes) FROM walpilot.timeline'),
	'>', 0, 'timeline sees WAL bytes');

# Select-only: no WAL waits in client backends.
reset_both();
$out = pgbench('-n', '-S', '-c', '4', '-j', '2', '-T', '5');
cmp_ok(processed($out), '>', 100, 'select-only pgbench ran');
$wp = walpilot_counts("backend_type = 'client backend'");
$wal_samples = 0;
$wal_samples += $wp->{$_} // 0 for keys %wal_events;
cmp_ok($wal_samples, '<=', 2, "no WAL waits under select-only ($wal_samples samples)");
cmp_ok($wp->{'CPU:CPU'} // 0, '>', 0, 'select-only backends are seen on CPU');
cmp_ok($node->safe_psql('postgres', 'SELECT commits_timed FROM walpilot.status'),
	'<=', 2, 'select-only transactions are not durable commits');

# Asynchronous commits are counted apart from durable ones.
reset_both();
{
	local $ENV{PGOPTIONS} = '-c synchronous_commit=off';
	$out = pgbench('-n', '-c', '2', '-t', '200');
}
$n = processed($out);
ok($node->poll_query_until('postgres',
		"SELECT sum(async_commits) >= $n FROM walpilot.timeline"),
	"asynchronous commits reach the timeline ($n)");
cmp_ok($node->safe_psql('postgres', 'SELECT commits_timed FROM walpilot.status'),
	'<=', 2, 'asynchronous commits are not timed as durable');

# The worker keeps up and the status counters move.
cmp_ok($node->safe_psql('postgres', 'SELECT samples_taken FROM walpilot.status'),
	'>', 0, 'status counts samples');

# commit_delay: the sleeping flush leader shows no wait event in 15; the
# sampler tells it apart from CPU.  commit_siblings = 0 makes every leader
# sleep; an insert-only load has no row contention.
$node->safe_psql('postgres', 'CREATE TABLE wp_ins (a int)');
$node->append_conf('postgresql.conf', "commit_delay = 3000\ncommit_siblings = 0\n");
$node->reload;
# the worker, whose sampler infers the sleep while commit_delay > 0, has
# read the file too: walpilot.settings shows the value it configured
ok($node->poll_query_until('postgres', q{
	SELECT configured_value = '3000' FROM walpilot.settings WHERE name = 'commit_delay'}),
	'the worker sees commit_delay = 3000');
my $script = $node->basedir . '/insert.sql';
PostgreSQL::Test::Utils::append_to_file($script, "INSERT INTO wp_ins VALUES (1);\n");
reset_both();
pgbench('-n', '-c', '4', '-j', '2', '-T', '4', '-f', $script);
$wp = walpilot_counts("backend_type = 'client backend'");
my $cd = $wp->{'Timeout:CommitDelay'} // 0;
my $cpu = $wp->{'CPU:CPU'} // 0;
cmp_ok($cd, '>', 0, "commit_delay sleep is seen as Timeout:CommitDelay ($cd samples, CPU $cpu)");
cmp_ok($node->safe_psql('postgres',
		'SELECT sum(commit_delay_sleepers) FROM walpilot.timeline'),
	'>', 0, 'timeline shows commit_delay sleepers');
# Here followers queue on WALWrite behind the sleeping leader: compare the
# WAL lock shares with pg_wait_sampling again, under real contention.
($wps, $wpt) = shares(walpilot_counts());
cmp_ok($wps->{'LWLock:WALWrite'}, '>', 5, 'followers wait on LWLock:WALWrite');
SKIP:
{
	skip 'pg_wait_sampling is not installed for this server', 2 unless $have_pgws;
	my ($pgs, $pgt) = shares(pgws_counts());
	for my $k ('LWLock:WALWrite', 'WAL')
	{
		cmp_ok(abs($wps->{$k} - $pgs->{$k}), '<=', 5,
			sprintf("under commit_delay, share of %s: walpilot %.1f %%, pg_wait_sampling %.1f %% (of %d / %d waiting samples)",
				$k, $wps->{$k}, $pgs->{$k}, $wpt, $pgt));
	}
}
$node->append_conf('postgresql.conf', "commit_delay = 0\n");
$node->reload;

# mode = off: no timing, no sampling.
$node->append_conf('postgresql.conf', "walpilot.mode = off\n");
$node->reload;
poll_until('the worker runs with mode off', undef,
	sub { $node->safe_psql('postgres', 'SELECT mode FROM walpilot.status') eq 'off' });
reset_both();
pgbench('-n', '-c', '2', '-t', '50');
is($node->safe_psql('postgres', 'SELECT commits_timed FROM walpilot.status'),
	'0', 'mode off times nothing');

$node->stop;
done_testing();
