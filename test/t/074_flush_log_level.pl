# The checkpoint_flush_after pilot needs the checkpointer's "checkpoint
# starting" line (walpilot applies its value there), so it does not tune
# while log_min_messages hides LOG lines, and says why.  From 19
# log_min_messages is one level per process type: what counts is the
# checkpointer's level, not the worker's own (wp_log_min_messages_of).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = walpilot_node('flushlog', q{
log_checkpoints = on
checkpoint_timeout = 30s
walpilot.mode = 'tune'
walpilot.tune_commit_delay = off
walpilot.tune_interval = 10s
walpilot.checkpoint_flush_after_min = 256kB
walpilot.checkpoint_flush_after_max = 512kB
log_min_messages = fatal
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
my $v = $node->safe_psql('postgres', 'SHOW server_version_num');

sub pilot
{
	return $node->safe_psql('postgres', q{
		SELECT state || ': ' || reason FROM walpilot.pilots
		 WHERE pilot = 'checkpoint_flush_after'});
}

my $hidden = q{SELECT state = 'idle' AND reason LIKE 'log_min_messages hides LOG lines: %'
	FROM walpilot.pilots WHERE pilot = 'checkpoint_flush_after'};
my $shown = q{SELECT reason NOT LIKE 'log_min_messages hides LOG lines%'
	FROM walpilot.pilots WHERE pilot = 'checkpoint_flush_after'};

wait_until('log_min_messages = fatal: the pilot does not tune and says why',
	60, sub { $node->safe_psql('postgres', $hidden) eq 't' })
  or diag(pilot());

if ($v >= 190000)
{
	# the worker's own level hides LOG lines, the checkpointer's does not
	reload_worker($node, 'checkpointer:log',
		"log_min_messages = 'fatal, checkpointer:log'\n");
	wait_until('fatal, checkpointer:log: the checkpointer logs, the pilot may tune',
		60, sub { $node->safe_psql('postgres', $shown) eq 't' })
	  or diag(pilot());
	# and the other way round
	reload_worker($node, 'checkpointer:fatal',
		"log_min_messages = 'log, checkpointer:fatal'\n");
	wait_until('log, checkpointer:fatal: the checkpointer hides its lines, the pilot says why',
		60, sub { $node->safe_psql('postgres', $hidden) eq 't' })
	  or diag(pilot());
}
else
{
	reload_worker($node, 'log', "log_min_messages = log\n");
	wait_until('log_min_messages = log: the pilot may tune',
		60, sub { $node->safe_psql('postgres', $shown) eq 't' })
	  or diag(pilot());
}

$node->stop;
done_testing();
