# Commit timing counts as durable exactly the commits that wait for their
# flush: with synchronous_commit = off, a commit that drops a relation or
# whose command forces the flush (CREATE DATABASE) still flushes, and is
# timed; a plain insert is not.  Two-phase commit (PREPARE TRANSACTION,
# COMMIT PREPARED) flushes inside its statement and is not timed, as
# documented.
# walpilot-test: alone (it times commits)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = walpilot_node('timing', q{
walpilot.mode = 'observe'
autovacuum = off
max_prepared_transactions = 2
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION walpilot;
CREATE TABLE t (v int);
});

my $timed = q{SELECT commits_timed FROM walpilot.status};
sub timed_after
{
	my ($sql) = @_;
	my $before = $node->safe_psql('postgres', $timed);
	$node->safe_psql('postgres', $sql);
	return $node->safe_psql('postgres', $timed) - $before;
}

is(timed_after("SET synchronous_commit = off;\nINSERT INTO t VALUES (1)"), 0,
	'an asynchronous insert is not timed');
is(timed_after("INSERT INTO t VALUES (1)"), 1,
	'a synchronous insert is timed');
$node->safe_psql('postgres', 'CREATE TABLE gone (v int)');
is(timed_after("SET synchronous_commit = off;\nDROP TABLE gone"), 1,
	'a DROP TABLE with synchronous_commit = off flushes and is timed');
is(timed_after("SET synchronous_commit = off;\nCREATE DATABASE forced"), 1,
	'CREATE DATABASE (a forced synchronous commit) is timed');
is(timed_after("BEGIN;\nINSERT INTO t VALUES (2);\nPREPARE TRANSACTION 'p1';\nCOMMIT PREPARED 'p1'"), 0,
	'PREPARE TRANSACTION and COMMIT PREPARED are not timed');

$node->stop;
done_testing();
