# The checkpoint_flush_after pilot in tune mode, on an emulated disk with
# slow data writes and short checkpoints: it runs a trial one checkpoint
# per window, the checkpointer really runs each window with the value the
# trial meant (applied in its own memory: nothing is reloaded, SHOW in a
# session keeps the configured value, walpilot.settings says what the
# checkpointer runs with), and the trial ends in a verdict with its
# evidence.  With walpilot.tune_checkpoint_flush = off it does nothing;
# turning it off puts the configured value back for the next checkpoint.
#
# checkpoint_completion_target = 0.95: the next checkpoint starts 1.5 s
# after one ends, sooner than that checkpoint's commit figures come in
# (2 s or more): each arm's value must reach the checkpointer before its
# checkpoint starts all the same.
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

my $node = walpilot_node('flushpilot', q{
log_checkpoints = on
checkpoint_timeout = 30s
checkpoint_completion_target = 0.95
max_wal_size = 1GB
shared_buffers = 64MB
walpilot.mode = 'tune'
walpilot.tune_commit_delay = off
walpilot.tune_checkpoint_flush = off
});
start_emulated($node, 'hdd,bw_mbps=10,wal_bw_mbps=150');
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
$node->command_ok([ 'pgbench', '-i', '-q', '-s', '5', $node->connstr('postgres') ],
	'pgbench -i');

my ($out, $err);
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-b', 'simple-update', '-c', '4', '-j', '2',
	  '-T', '600', '-R', '100', $node->connstr('postgres') ],
	'>', \$out, '2>', \$err);

# ---- off: two loaded checkpoints, no decision ----
ok($node->poll_query_until('postgres', q{
	SELECT count(*) >= 2 FROM walpilot.checkpoints
	 WHERE finished_at IS NOT NULL AND commits > 0}),
	'two checkpoints under load with tune_checkpoint_flush = off');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions WHERE setting = 'checkpoint_flush_after'}),
	'0', 'walpilot.tune_checkpoint_flush = off: no decision');

# ---- on: a trial, window by window ----
$node->append_conf('postgresql.conf', "walpilot.tune_checkpoint_flush = on\n");
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after'
	   AND reason LIKE 'trial: 512kB against 256kB%'}),
	'a trial starts with the next value up, a neighbour of the configured 256kB');
is($node->safe_psql('postgres', q{
	SELECT state || ' ' || candidate FROM walpilot.pilots
	 WHERE pilot = 'checkpoint_flush_after'}),
	'trial 512kB', 'walpilot.pilots shows the trial and its candidate');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND outcome IS NOT NULL}),
	'the trial ends in a verdict');
my ($began, $current, $candidate, $verdict) = split /\|/,
  $node->safe_psql('postgres', q{
	SELECT decided_at, old_value, new_value, outcome FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND outcome IS NOT NULL
	 ORDER BY decided_at LIMIT 1});
like($verdict, qr/^(kept|rejected): /, "verdict: $verdict");
is("$current $candidate", '256kB 512kB', 'the trial ran 512kB against 256kB');
is($node->safe_psql('postgres', q{
	SELECT count(*) > 0 FROM walpilot.checkpoints WHERE flush_after_kb = 512}),
	't', 'the checkpointer ran a candidate window with 512kB');

# The trial's windows, in the order they ran: one spread checkpoint each,
# the ones that completed between the trial's start and its verdict (a
# window closes 2 s after its checkpoint, before the next one completes),
# counted in the log.  ABBA: current, candidate, candidate, current; a
# window that did not run with its arm's value would be run again and
# break the order.
ok($node->wait_for_log(qr/walpilot trial on checkpoint_flush_after ended: /),
	'the verdict is logged');
my ($during) = slurp_file($node->logfile) =~
  /walpilot trial on checkpoint_flush_after starts: [^\n]*\n(.*?)walpilot trial on checkpoint_flush_after ended: /s;
my $nwin = () = ($during // '') =~ /LOG:  checkpoint complete: /g;
my @windows = map { [ split /\|/ ] } split /\n/,
  $node->safe_psql('postgres', qq{
	SELECT flush_after_kb || 'kB', reason, stall_seconds,
	       extract(epoch FROM finished_at - started_at)
	  FROM walpilot.checkpoints
	 WHERE reason IN ('time', 'wal') AND finished_at > '$began'
	 ORDER BY started_at LIMIT $nwin});
cmp_ok($nwin, '>=', 2, 'the verdict came after at least one window per arm');
is(join(' ', map { $_->[0] } @windows),
	join(' ', map { ($current, $candidate, $candidate, $current)[ $_ % 4 ] }
		  0 .. $nwin - 1),
	"the trial's $nwin windows ran its arms in ABBA order, none skipped");
if ($verdict =~ /, (\d+) pairs\)/)
{
	my $pairs = $1;
	cmp_ok($pairs, '>=', 2,
		"a full verdict rests on at least 2 windows per arm ($verdict)");
	is($nwin, 2 * $pairs, 'a full verdict comes after all its windows');
}
else
{
	# An early stop: the guard, on a candidate window (the second or the
	# third), before the trial's end -- and that window's own figures
	# bear it out.
	like($verdict,
		qr/^rejected: (the checkpoint finished late|clearly worse)/,
		"an early verdict is the guard's ($verdict)");
	ok($nwin == 2 || $nwin == 3,
		"an early verdict comes at a candidate window before the last ($nwin windows)");
	my ($last, $first) = ($windows[-1] // [], $windows[0] // []);
	if ($verdict =~ /finished late/)
	{
		# 30 s x 0.95, with pilot_flush.c's slack
		ok(($last->[1] // '') eq 'time' && ($last->[3] // 0) > 30 * 0.95 * 1.2 + 5,
			"the window the guard stopped at ran late (" . ($last->[3] // '?') . ' s)');
	}
	else
	{
		ok(defined $last->[2] && defined $first->[2]
			  && $last->[2] ne '' && $first->[2] ne ''
			  && $last->[2] >= 2 * $first->[2] + 3,
			'the window the guard stopped at stalled clearly longer ('
			  . ($last->[2] // '?') . ' s against ' . ($first->[2] // '?') . ' s)');
	}
}
# Each arm's value is applied in the checkpointer's own memory: nothing
# is reloaded for it (a reload would put any unfinished edit of the DBA's
# configuration in force).
unlike($during // '', qr/received SIGHUP, reloading configuration files/,
	'no reload during the trial');
# walpilot.settings says what the checkpointer runs with: the value its
# newest checkpoint started with, walpilot's when that is not the
# configured 256kB; SHOW in a session keeps the configured value
ok($node->poll_query_until('postgres', q{
	SELECT w.effective_value = c.flush_after_kb || 'kB'
	   AND (w.managed_by = 'walpilot') = (c.flush_after_kb <> 256)
	   AND w.configured_value = '256kB'
	   AND current_setting('checkpoint_flush_after') = '256kB'
	  FROM walpilot.settings w,
	       (SELECT flush_after_kb FROM walpilot.checkpoints
	         ORDER BY started_at DESC LIMIT 1) c
	 WHERE w.name = 'checkpoint_flush_after'}),
	'walpilot.settings agrees with the newest checkpoint; SHOW says the configured 256kB');

# ---- tune_checkpoint_flush off again: the configured value comes back ----
$node->append_conf('postgresql.conf', "walpilot.tune_checkpoint_flush = off\n");
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT state = 'idle' AND reason LIKE 'walpilot.tune_checkpoint_flush = off%'
	  FROM walpilot.pilots WHERE pilot = 'checkpoint_flush_after'}),
	'walpilot.pilots says why the pilot is idle');
# the next checkpoint (one is requested) starts with the configured value
my $from = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$node->safe_psql('postgres', 'CHECKPOINT');
is($node->safe_psql('postgres', qq{
	SELECT coalesce(string_agg(DISTINCT flush_after_kb::text, ' '), 'none')
	  FROM walpilot.checkpoints
	 WHERE started_at >= '$from' AND started_at <= clock_timestamp()}),
	'256', 'turning the pilot off: the next checkpoint runs with the configured 256kB');
is($node->safe_psql('postgres', q{
	SELECT managed_by || ' ' || effective_value FROM walpilot.settings
	 WHERE name = 'checkpoint_flush_after'}),
	'default 256kB', 'turning the pilot off: walpilot.settings says the configured 256kB');

$load->kill_kill;
$node->stop;
done_testing();
