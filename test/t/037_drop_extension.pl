# DROP EXTENSION walpilot acts when it commits: a DROP that rolls back
# (whole transaction or savepoint) changes nothing; a committed DROP, in
# any database, puts the configured values back and is on record with its
# database for the status; so does a DROP OWNED that drops the extension,
# run from a function, and a DROP SCHEMA ... CASCADE under
# session_replication_role = replica.  The drops are seen through the
# extension's event trigger (src/hub/drop_watch.c).
#
# As in 036, targets are published through wp_settings_publish from a
# small C module, in observe mode, so the controller publishes nothing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = new_node('drop', conf => q{
shared_preload_libraries = 'walpilot'
walpilot.mode = 'observe'
max_prepared_transactions = 2
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION walpilot;
CREATE TABLE t (v int);
CREATE DATABASE db2;
});
$node->safe_psql('db2', 'CREATE EXTENSION walpilot');

my $probe = build_probe_module($node, 'drop_probe', <<'C');
#include "postgres.h"
#include <dlfcn.h>
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
PG_MODULE_MAGIC;

typedef void (*publish_fn) (bool, const int32 *);
typedef bool (*last_drop_fn) (TimestampTz *, char *, size_t);

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

PG_FUNCTION_INFO_V1(last_drop_probe);
Datum
last_drop_probe(PG_FUNCTION_ARGS)
{
	last_drop_fn f = (last_drop_fn) dlsym(RTLD_DEFAULT, "wp_settings_last_drop");
	TimestampTz at;
	char		db[NAMEDATALEN];

	if (f == NULL || !f(&at, db, sizeof(db)))
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(db));
}
C
$node->safe_psql('postgres', qq{
CREATE FUNCTION publish_probe(bool, int, int) RETURNS void
  AS '$probe', 'publish_probe' LANGUAGE C STRICT;
CREATE FUNCTION last_drop_probe() RETURNS text
  AS '$probe', 'last_drop_probe' LANGUAGE C;
});

my $in_force = "INSERT INTO t VALUES (1);\n"
  . "SELECT current_setting('commit_delay') || '|' || current_setting('commit_siblings')";

# A DROP that removed the extension in $db ($how): gone there, the
# configured values back, and on record with that database.
sub dropped_and_reverted
{
	my ($db, $how) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is($node->safe_psql($db,
			q{SELECT count(*) FROM pg_extension WHERE extname = 'walpilot'}), '0',
		"$how dropped the extension");
	is($node->safe_psql('postgres', $in_force), '0|5',
		"$how puts the configured values back");
	is($node->safe_psql('postgres', 'SELECT last_drop_probe()'), $db,
		"$how is on record with its database");
}

$node->safe_psql('postgres', 'SELECT publish_probe(true, 1000, 0)');
is($node->safe_psql('postgres', $in_force), '1000|0', 'the published pair is in force');

$node->safe_psql('postgres', 'BEGIN; DROP EXTENSION walpilot; ROLLBACK;');
is($node->safe_psql('postgres', $in_force), '1000|0',
	'a DROP EXTENSION that rolls back reverts nothing');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_extension WHERE extname = 'walpilot'}), '1',
	'the extension is still there');

$node->safe_psql('postgres',
	'BEGIN; SAVEPOINT s; DROP EXTENSION walpilot; ROLLBACK TO s; COMMIT;');
is($node->safe_psql('postgres', $in_force), '1000|0',
	'a DROP rolled back to a savepoint reverts nothing');
is($node->safe_psql('postgres', 'SELECT last_drop_probe() IS NULL'), 't',
	'no drop on record');

$node->safe_psql('db2', 'BEGIN; DROP EXTENSION walpilot; COMMIT;');
is($node->safe_psql('postgres', $in_force), '0|5',
	'a committed DROP in another database puts the configured values back');
is($node->safe_psql('postgres', 'SELECT last_drop_probe()'), 'db2',
	'the drop is on record with its database');

# Dropped another way than by DROP EXTENSION: DROP OWNED of the role
# that created it, run from a function (SPI).
$node->safe_psql('postgres', 'SELECT publish_probe(true, 1000, 0)');
is($node->safe_psql('postgres', $in_force), '1000|0', 'published again');
$node->safe_psql('postgres', q{
CREATE ROLE wp_owner SUPERUSER;
CREATE DATABASE db3;
});
$node->safe_psql('db3',
	'SET ROLE wp_owner; CREATE EXTENSION walpilot; RESET ROLE;');
$node->safe_psql('db3', q{
CREATE FUNCTION drop_all() RETURNS void LANGUAGE plpgsql
  AS $$ BEGIN EXECUTE 'DROP OWNED BY wp_owner'; END $$;
SELECT drop_all();
});
dropped_and_reverted('db3', 'DROP OWNED from a function');

# Dropped with the schema it was created in, by a session that replicates
# (session_replication_role = replica silences ordinary event triggers;
# the extension's is ENABLE ALWAYS).
$node->safe_psql('postgres', 'SELECT publish_probe(true, 1000, 0)');
is($node->safe_psql('postgres', $in_force), '1000|0', 'published a third time');
$node->safe_psql('postgres', 'CREATE DATABASE db4');
$node->safe_psql('db4',
	'CREATE SCHEMA ext_home; CREATE EXTENSION walpilot SCHEMA ext_home;');
is($node->safe_psql('db4', q{
SELECT evtenabled::text || ' ' || array_to_string(evttags, ',')
  FROM pg_event_trigger WHERE evtname = 'walpilot_watch_drop'}),
	'A DROP EXTENSION,DROP SCHEMA,DROP OWNED',
	'the extension has its event trigger, ENABLE ALWAYS, for the three DROPs');
$node->safe_psql('db4', q{
SET session_replication_role = replica;
DROP SCHEMA ext_home CASCADE;
});
dropped_and_reverted('db4',
	'DROP SCHEMA CASCADE of its schema under session_replication_role = replica');

# The event trigger fires for every DROP SCHEMA and DROP OWNED in a
# database that has the extension, whoever runs them: a plain role needs
# no grant on its function, and a drop of something else is not one of
# the extension.
$node->safe_psql('postgres', 'SELECT publish_probe(true, 1000, 0)');
$node->safe_psql('postgres', q{
CREATE ROLE wp_plain LOGIN;
CREATE SCHEMA plain_s AUTHORIZATION wp_plain;
});
my ($ret, $out, $err) = $node->psql('postgres', q{
CREATE TABLE plain_s.t (v int);
DROP SCHEMA plain_s CASCADE;
DROP OWNED BY wp_plain;
SELECT 'dropped';}, extra_params => [ '-U', 'wp_plain' ]);
is($ret, 0, "a plain role's DROP SCHEMA and DROP OWNED run") or diag($err);
is($node->safe_psql('postgres', $in_force), '1000|0',
	'a DROP of something else reverts nothing');
($ret, $out, $err) = $node->psql('postgres', 'SELECT walpilot.watch_drop()');
like($err, qr/can only be called as an event trigger/,
	'walpilot.watch_drop() called directly is an error');

# A DROP in a transaction that is prepared is not acted on by the
# session's next commit (COMMIT PREPARED is not seen: documented).
$node->safe_psql('postgres', 'CREATE DATABASE db5');
$node->safe_psql('db5', 'CREATE EXTENSION walpilot; CREATE TABLE t (v int);');
$node->safe_psql('db5', q{
BEGIN; DROP EXTENSION walpilot; PREPARE TRANSACTION 'wp_drop';
INSERT INTO t VALUES (1);
});
is($node->safe_psql('postgres', $in_force), '1000|0',
	'a prepared DROP is not taken by the next commit of its session');
$node->safe_psql('db5', q{COMMIT PREPARED 'wp_drop'});
is($node->safe_psql('db5',
		q{SELECT count(*) FROM pg_extension WHERE extname = 'walpilot'}), '0',
	'COMMIT PREPARED dropped the extension');

$node->stop;
done_testing();
