# The decision log never stores JSON it cut: evidence too long for a row
# is replaced by a note saying so, and walpilot.decisions stays readable.
# (The evidence is written through wp_decision_log from a small C module.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = new_node('decisions', conf => q{
shared_preload_libraries = 'walpilot'
walpilot.mode = 'observe'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');

my $probe = build_probe_module($node, 'log_probe', <<'C');
#include "postgres.h"
#include <dlfcn.h>
#include "fmgr.h"
#include "utils/builtins.h"
PG_MODULE_MAGIC;

typedef uint64 (*log_fn) (const char *, const char *, const char *,
						  const char *, const char *);

PG_FUNCTION_INFO_V1(log_probe);
Datum
log_probe(PG_FUNCTION_ARGS)
{
	log_fn		f = (log_fn) dlsym(RTLD_DEFAULT, "wp_decision_log");

	if (f == NULL)
		elog(ERROR, "wp_decision_log not found");
	f("commit_delay", "-", "-", "log probe",
	  text_to_cstring(PG_GETARG_TEXT_PP(0)));
	PG_RETURN_VOID();
}
C
$node->safe_psql('postgres', qq{
CREATE FUNCTION log_probe(text) RETURNS void
  AS '$probe', 'log_probe' LANGUAGE C STRICT;
});

# 30 keys: some 850 bytes of JSON text
$node->safe_psql('postgres', q{
SELECT log_probe(json_object_agg('key_number_' || i, i * 1000.5)::text)
  FROM generate_series(1, 30) i});
is($node->safe_psql('postgres',
		q{SELECT evidence ->> 'key_number_30' FROM walpilot.decisions WHERE reason = 'log probe'}),
	'30015.0', 'evidence of 850 bytes is kept whole');

$node->safe_psql('postgres', q{
SELECT log_probe(json_object_agg('key_number_' || i, i * 1000.5)::text)
  FROM generate_series(1, 200) i});
my ($ret, $out, $err) = $node->psql('postgres',
	q{SELECT count(*) FROM walpilot.decisions WHERE reason = 'log probe'});
is($ret, 0, 'walpilot.decisions stays readable after a longer evidence')
  or diag($err);
is($node->safe_psql('postgres',
		q{SELECT string_agg(evidence ->> 'evidence_truncated', ',') FROM walpilot.decisions WHERE reason = 'log probe'}),
	'true', 'the long evidence is replaced by a note saying so');

$node->stop;
done_testing();
