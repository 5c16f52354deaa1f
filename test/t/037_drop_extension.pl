# DROP EXTENSION walpilot acts when it commits: a DROP that rolls back
# (whole transaction or savepoint) changes nothing; a committed DROP, in
# any database, puts the configured values back and is on record with its
# database for the status; so does a DROP OWNED that drops the extension,
# run from a function.
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
is($node->safe_psql('db3',
		q{SELECT count(*) FROM pg_extension WHERE extname = 'walpilot'}), '0',
	'DROP OWNED dropped the extension');
is($node->safe_psql('postgres', $in_force), '0|5',
	'a DROP OWNED that drops the extension puts the configured values back');
is($node->safe_psql('postgres', 'SELECT last_drop_probe()'), 'db3',
	'that drop is on record with its database');

$node->stop;
done_testing();
