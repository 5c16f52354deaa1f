# A signal ends the flush leader's commit_delay sleep early.  The gather
# mode's wake-up depends on it, and pg_usleep is implemented differently
# across versions (select() up to 16, nanosleep() from 17): both must return
# on a signal rather than sleep the rest of the delay.
# walpilot-test: alone (it times commits against a sleep)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

# commit_delay's maximum, every commit sleeps (siblings 0, fsync on)
my $node = walpilot_node('delay_signal', q{
commit_delay = 100000
commit_siblings = 0
});
$node->start;
$node->safe_psql('postgres', 'CREATE TABLE t (a int)');

my $commits = 15;
my $script = $node->basedir . '/commits.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"SET application_name = 'sleeper';\n"
	  . "SELECT pg_sleep(3);\n"
	  . join('', map { "INSERT INTO t VALUES ($_);\n" } 1 .. $commits));

# Runs $commits one-row commits in one session; with $signal, sends that
# session's backend SIGUSR1 (its handler only sets the latch) every 2 ms.
# Returns the elapsed seconds of the commits.
sub timed_commits
{
	my ($signal) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-q', '-h', $node->host, '-p', $node->port, '-d', 'postgres',
		  '-f', $script ],
		'<', \undef, '>', \$out, '2>', \$err);
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'sleeper'")
	  or die "sleeper session not found";
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE application_name = 'sleeper'");
	# the commits start after the pg_sleep (3 s: room for two psql calls on a
	# slow machine to see it)
	my $ev = "SELECT wait_event FROM pg_stat_activity WHERE pid = $pid";
	$node->poll_query_until('postgres', $ev, 'PgSleep') or die "sleeper did not sleep";
	$node->poll_query_until('postgres',
		"SELECT wait_event IS DISTINCT FROM 'PgSleep' FROM pg_stat_activity WHERE pid = $pid")
	  or die "sleeper did not wake";
	my $t0 = time;
	while ($h->pumpable)
	{
		# the 2-ms signal interval is what is measured, not a wait
		kill('USR1', $pid) if $signal;
		usleep(2_000);
		$h->pump_nb;
	}
	$h->finish;
	my $elapsed = time - $t0;
	die "psql failed: $err" if $h->result;
	return $elapsed;
}

my $quiet = timed_commits(0);
cmp_ok($quiet, '>=', $commits * 0.1 * 0.9,
	sprintf('unsignalled, every commit sleeps its 100 ms commit_delay (%.2f s for %d)',
		$quiet, $commits));
my $signalled = timed_commits(1);
cmp_ok($signalled, '<', $quiet * 0.5,
	sprintf('a signal every 2 ms ends the sleep early (%.2f s vs %.2f s)',
		$signalled, $quiet));
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), 2 * $commits,
	'every commit went through');

$node->stop;
done_testing();
