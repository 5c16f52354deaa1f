# The session settings applier: who owns the commit_delay/commit_siblings
# pair, and an apply that cannot happen is not marked done.
#
# A target is published directly through walpilot's own publishing step
# (wp_settings_publish, called from a small C module built here) with
# walpilot.mode = observe, so the controller never publishes anything
# itself and each case is deterministic.  Every case reads what a
# session's commits really run with (SHOW after a commit) and what
# walpilot.settings says about it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = new_node('owners', conf => q{
shared_preload_libraries = 'walpilot'
walpilot.mode = 'observe'
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION walpilot;
CREATE TABLE t (v int);
CREATE ROLE sib LOGIN SUPERUSER;
ALTER ROLE sib SET commit_siblings = 3;
});

my $probe = build_probe_module($node, 'publish_probe', <<'C');
#include "postgres.h"
#include <dlfcn.h>
#include "fmgr.h"
PG_MODULE_MAGIC;

typedef void (*publish_fn) (bool, const int32 *);

PG_FUNCTION_INFO_V1(publish_probe);
Datum
publish_probe(PG_FUNCTION_ARGS)
{
	publish_fn	f = (publish_fn) dlsym(RTLD_DEFAULT, "wp_settings_publish");
	int32		targets[2];

	if (f == NULL)
		elog(ERROR, "wp_settings_publish not found");
	targets[0] = PG_GETARG_INT32(1);
	targets[1] = PG_GETARG_INT32(2);
	f(PG_GETARG_BOOL(0), targets);
	PG_RETURN_VOID();
}
C
$node->safe_psql('postgres', qq{
CREATE FUNCTION publish_probe(bool, int, int) RETURNS void
  AS '$probe', 'publish_probe' LANGUAGE C STRICT;
});

# what a session's commits run with, after one commit
my $in_force = "INSERT INTO t VALUES (1);\n"
  . "SELECT current_setting('commit_delay') || '|' || current_setting('commit_siblings')";
my $view = q{SELECT string_agg(effective_value || '/' || managed_by, '|' ORDER BY name) FROM walpilot.settings WHERE name LIKE 'commit%'};

# the pilot's gather pair: delay 1000 (a cap), siblings 0
$node->safe_psql('postgres', 'SELECT publish_probe(true, 1000, 0)');
is($node->safe_psql('postgres', $in_force), '1000|0',
	'a session takes the published pair at its first commit');

#
# A session that sets commit_delay after it applied the pilot's pair owns
# the pair: its own delay, the configured siblings.
#
is($node->safe_psql('postgres',
		"$in_force \\g /dev/null\nSET commit_delay = 123;\n$in_force"),
	'123|5', 'SET commit_delay after connecting: the configured siblings, not the pilot\'s 0');
is($node->safe_psql('postgres',
		"$in_force \\g /dev/null\nSET commit_delay = 123;\n$view"),
	'123/dba|5/dba', 'walpilot.settings shows the pair as the DBA\'s');
is($node->safe_psql('postgres',
		"SET commit_delay = 123;\n$in_force \\g /dev/null\nRESET commit_delay;\n$in_force"),
	'1000|0', 'RESET gives the pair back to the pilot');

#
# ALTER ROLE ... SET commit_siblings: that role's sessions keep the pair.
#
is($node->safe_psql('postgres', $in_force, extra_params => [ '-U', 'sib' ]),
	'0|3', 'a role\'s commit_siblings keeps the pilot\'s delay out of its sessions');
is($node->safe_psql('postgres', $view, extra_params => [ '-U', 'sib' ]),
	'0/dba|3/dba', 'walpilot.settings says so for that role');

#
# Readers never apply: walpilot.settings in parallel mode neither warns
# nor keeps the session from applying at its next commit.
#
$node->safe_psql('postgres', 'SELECT publish_probe(true, 1500, 0)');
# force_parallel_mode is debug_parallel_query from 16 on
my $force_parallel = $node->safe_psql('postgres', q{
SELECT CASE WHEN current_setting('server_version_num')::int >= 160000
            THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END});
my ($ret, $out, $err) = $node->psql('postgres', qq{
SET $force_parallel = on;
SET max_parallel_workers = 0;
SET parallel_setup_cost = 0;
BEGIN;
SELECT publish_probe(true, 2000, 0) \\g /dev/null
SELECT count(*) FROM walpilot.settings WHERE name LIKE 'commit%';
COMMIT;
RESET $force_parallel;
$in_force});
is($out, "2\n2000|0", 'after reading walpilot.settings in parallel mode the next commit applies');
unlike($err, qr/cannot be set during a parallel operation/,
	'no parallel-mode warning from a reader');

#
# commit_siblings in the configuration (ALTER SYSTEM): the pair is the
# DBA's in every session.
#
$node->safe_psql('postgres', 'ALTER SYSTEM SET commit_siblings = 4');
$node->reload;
is($node->safe_psql('postgres', $in_force), '0|4',
	'commit_siblings set by ALTER SYSTEM keeps the pilot\'s delay out');
is($node->safe_psql('postgres', $view), '0/dba|4/dba',
	'walpilot.settings shows the configured pair as the DBA\'s');

$node->safe_psql('postgres', 'SELECT publish_probe(false, 0, 0)');
$node->stop;
done_testing();
