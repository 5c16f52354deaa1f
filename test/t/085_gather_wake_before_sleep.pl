# A gather wake-up that reaches the flush leader after it took
# WALWriteLock but before its commit_delay sleep began is not lost.  In
# XLogFlush the leader tests MinimumActiveBackends(commit_siblings) and
# only then loads commit_delay for pg_usleep; the handler used to see the
# sleeping leader (lock held, no wait event), return, and the sleep then
# ran in full.  Now the handler drops the commit's delay, so the sleep
# that has not begun does not begin.
#
# No timing makes that window hit on purpose, so a debugger holds the
# leader in it: gdb stops one of four inserting backends at
# MinimumActiveBackends (it holds WALWriteLock, reports no wait event),
# waits until the three others have arrived and queued behind it (the last
# arrival completes the group and signals it: the signal stays pending
# while it is stopped), lets it go (the handler runs before
# MinimumActiveBackends), and reads the argument of the pg_usleep that
# follows: 0 with the fix, the whole cap without.
# walpilot-test: alone (it stops a committing backend under load)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();
my $gdb = find_program('gdb');
plan skip_all => 'gdb not installed' unless defined $gdb;
plan skip_all => 'reads the argument register of x86-64'
  unless `uname -m` =~ /x86_64/;

my $node = emulated_node('presleep', 'hdd', q{
walpilot.mode = 'tune'
max_connections = 40
autovacuum = off
wal_writer_delay = '10s'
checkpoint_timeout = '1h'
max_wal_size = '4GB'
});

my $load = start_insert_load($node, 4, 600);
ok(poll_for($node,
		q{SELECT pilot_state = 'hold' AND pilot_setting LIKE 'gather%' FROM walpilot.status}, 240),
	'the pilot keeps gather for 4 inserting clients')
  or diag($node->safe_psql('postgres',
		q{SELECT string_agg(concat_ws(' | ', old_value, new_value, outcome), E'\n' ORDER BY decided_at) FROM walpilot.decisions}));
my $cap = $node->safe_psql('postgres',
	q{SELECT substring(pilot_setting FROM 'cap (\d+)') FROM walpilot.status});
diag("gather cap: $cap us");

my @pids = split /\n/, $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity
	   WHERE backend_type = 'client backend' AND query LIKE 'INSERT INTO t %'
	   ORDER BY pid});
is(scalar @pids, 4, 'four inserting backends');
my $x = $pids[0];
my $others = join(',', @pids[ 1 .. $#pids ]);

my ($in, $out, $err) = ('', '', '');
my $h = IPC::Run::start([ $gdb, '-q', '-nx', '-p', $x ],
	'<', \$in, '>', \$out, '2>', \$err, IPC::Run::timeout(120));

# feed gdb one command and wait for its output to match $re
sub gdb_cmd
{
	my ($cmd, $re) = @_;
	$out = '';
	$in .= "$cmd\n";
	$h->pump until $out =~ $re;
	return $out;
}

gdb_cmd("set pagination off\nset confirm off\necho READY\\n", qr/READY/);
for my $sig (qw(SIGUSR1 SIGUSR2 SIGALRM SIGINT SIGPIPE SIGURG SIGTERM))
{
	gdb_cmd("handle $sig nostop noprint pass\necho OK\\n", qr/OK/);
}

# Up to 5 tries: a try counts when the leader held at
# MinimumActiveBackends had its delay in force (it is about to sleep) and
# the three others then arrived and queued behind it, the last one
# completing the group.  Only the gather's handler sets a commit's
# commit_delay to 0 between there and pg_usleep.
my ($arg, $tries) = (undef, 0);
while (!defined $arg && $tries < 5)
{
	$tries++;
	gdb_cmd("break MinimumActiveBackends\ncontinue", qr/Breakpoint \d+, .*MinimumActiveBackends/);
	my $r = gdb_cmd(qq{printf "CD=%d\\n", *(int *) &CommitDelay}, qr/CD=-?\d+/);
	my ($cd) = $r =~ /CD=(-?\d+)/;
	# the three others arrive and queue on WALWriteLock behind it
	my $queued = WalpilotTest::poll_loop(20, sub {
		$node->safe_psql('postgres',
			qq{SELECT count(*) = 3 FROM pg_stat_activity
			    WHERE pid IN ($others) AND wait_event = 'WALWrite'}) eq 't';
	});
	gdb_cmd("delete\nbreak pg_usleep\ncontinue", qr/Breakpoint \d+, .*pg_usleep/);
	$r = gdb_cmd(qq{printf "ARG=%ld\\n", \$rdi}, qr/ARG=-?\d+/);
	my ($a) = $r =~ /ARG=(-?\d+)/;
	gdb_cmd("delete\necho OK\\n", qr/OK/);
	diag("try $tries: commit_delay at MinimumActiveBackends $cd, others queued "
		  . ($queued ? 'yes' : 'no') . ", pg_usleep($a)");
	$arg = $a if $queued && $cd > 0;
}
$in .= "detach\nquit\n";
$h->finish;

ok(defined $arg, "a leader was held before its sleep with the group complete (tries: $tries)");
is($arg, 0, 'the leader woken before its sleep does not sleep (pg_usleep(0))');

my $alive = $node->safe_psql('postgres', 'SELECT count(*) FROM t') > 0;
ok($alive, 'the server runs on');
$load->kill_kill;
$load->finish;
$node->stop;
done_testing();
