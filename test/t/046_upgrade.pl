# Upgrades and removal.  Install 0.1 with state and a DBA's grant present,
# ALTER EXTENSION walpilot UPDATE, and compare every object with a fresh
# install (which runs 0.1 and then 0.1--0.2 by design, so this guards that
# the update works in place and that ACLs survive).  Then DROP EXTENSION,
# and removing walpilot from shared_preload_libraries, both in the middle
# of a trial: postgresql.auto.conf is byte-for-byte what the DBA had.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

# on the emulated hdd where it is built (the removal needs its trials)
my $node = walpilot_node('upgrade', q{
walpilot.mode = 'tune'
max_connections = 40
});
start_emulated($node, 'hdd');

#
# upgrade 0.1 -> 0.2 against a fresh install
#
$node->safe_psql('postgres', 'CREATE DATABASE fresh; CREATE DATABASE upgraded;');
$node->safe_psql('postgres', 'CREATE ROLE regress_dashboard LOGIN');
$node->safe_psql('fresh', 'CREATE EXTENSION walpilot');
$node->safe_psql('upgraded', q{
	CREATE EXTENSION walpilot VERSION '0.1';
	GRANT USAGE ON SCHEMA walpilot TO regress_dashboard;
	GRANT SELECT ON walpilot.status TO regress_dashboard;
	GRANT EXECUTE ON FUNCTION walpilot.status_data() TO regress_dashboard;
	SELECT walpilot.reset();
	SELECT count(*) FROM walpilot.probe(0.2, ARRAY['fdatasync']);});
is($node->safe_psql('upgraded', q{SELECT extversion FROM pg_extension WHERE extname = 'walpilot'}),
	'0.1', 'installed at 0.1');
is($node->safe_psql('upgraded', q{SELECT count(*) FROM walpilot.storage WHERE kind = 'probe'}),
	'2', 'state present before the update');
$node->safe_psql('upgraded', 'ALTER EXTENSION walpilot UPDATE');
is($node->safe_psql('upgraded', q{SELECT extversion FROM pg_extension WHERE extname = 'walpilot'}),
	'0.2', 'updated to 0.2');
is($node->safe_psql('upgraded', q{SELECT count(*) FROM walpilot.storage WHERE kind = 'probe'}),
	'2', 'state kept across the update (shared memory, not the catalog)');

my %describe = (
	'members' => q{
		SELECT pg_describe_object(classid, objid, 0) FROM pg_depend
		 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
		   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'walpilot')
		 ORDER BY 1},
	'function signatures' => q{
		SELECT p.oid::regprocedure || ' -> ' || pg_get_function_result(p.oid)
		       || ' ' || p.provolatile::text || p.proisstrict::text || p.proparallel::text
		       || ' ' || p.prosrc || ' ' || coalesce(p.probin, '-')
		       || ' ' || coalesce(pg_get_function_arguments(p.oid), '')
		  FROM pg_proc p WHERE p.pronamespace = 'walpilot'::regnamespace ORDER BY 1},
	'view definitions' => q{
		SELECT c.relname || ': ' || pg_get_viewdef(c.oid)
		  FROM pg_class c WHERE c.relnamespace = 'walpilot'::regnamespace
		   AND c.relkind = 'v' ORDER BY 1},
	'columns' => q{
		SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
		  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
		 WHERE c.relnamespace = 'walpilot'::regnamespace AND a.attnum > 0
		   AND NOT a.attisdropped ORDER BY c.relname, a.attnum},
	'ACLs (the DBA\'s role left out)' => q{
		SELECT kind || ' ' || name || ' ' || coalesce(grantee, '?') || ' ' || privilege_type
		  FROM (
		    SELECT 'rel' AS kind, c.relname::text AS name, a.grantee, a.privilege_type
		      FROM pg_class c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
		     WHERE c.relnamespace = 'walpilot'::regnamespace
		    UNION ALL
		    SELECT 'func', p.oid::regprocedure::text, a.grantee, a.privilege_type
		      FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
		     WHERE p.pronamespace = 'walpilot'::regnamespace
		    UNION ALL
		    SELECT 'schema', n.nspname::text, a.grantee, a.privilege_type
		      FROM pg_namespace n, aclexplode(n.nspacl) a WHERE n.nspname = 'walpilot'
		  ) x(kind, name, grantee_oid, privilege_type)
		  LEFT JOIN LATERAL (SELECT CASE WHEN grantee_oid = 0 THEN 'PUBLIC'
		                                 ELSE grantee_oid::regrole::text END) g(grantee) ON true
		 WHERE grantee IS DISTINCT FROM 'regress_dashboard'
		 ORDER BY 1},
	'comments' => q{
		SELECT pg_describe_object(d.classoid, d.objoid, 0) || ': ' || d.description
		  FROM pg_description d JOIN pg_depend e ON e.classid = d.classoid AND e.objid = d.objoid
		 WHERE e.refclassid = 'pg_extension'::regclass AND e.deptype = 'e'
		   AND e.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'walpilot')
		 ORDER BY 1},
);
foreach my $what (sort keys %describe)
{
	my $fresh = $node->safe_psql('fresh', $describe{$what});
	my $upgraded = $node->safe_psql('upgraded', $describe{$what});
	isnt($fresh, '', "$what: listed");
	is($upgraded, $fresh, "$what: the updated install equals a fresh one");
}
is($node->safe_psql('upgraded', 'SELECT count(*) FROM walpilot.status',
		extra_params => [ '-U', 'regress_dashboard' ]),
	'1', "the DBA's own grant survived the update");
is($node->safe_psql('upgraded', 'SELECT count(*) FROM walpilot.status'), '1',
	'the updated views work');

#
# removal: DROP EXTENSION and taking walpilot out of
# shared_preload_libraries, each in the middle of a trial
#
SKIP:
{
	skip 'storage emulator not built (make -C test/emulator): no trial to interrupt', 8
	  unless defined emulator_library();

	$node->safe_psql('postgres', q{ALTER SYSTEM SET work_mem = '5MB'});
	$node->safe_psql('postgres', q{ALTER SYSTEM SET checkpoint_completion_target = 0.8});
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	my $auto_conf = $node->data_dir . '/postgresql.auto.conf';
	my $auto_before = slurp_file($auto_conf);
	$node->safe_psql('postgres', 'CREATE EXTENSION walpilot; CREATE TABLE t (v int)');
	my $load = start_insert_load($node, 8, 120);
	my $in_trial = q{SELECT pilot_state IN ('trial', 're-check') FROM walpilot.status};
	my $show = "SELECT 1 \\g /dev/null\nSELECT current_setting('commit_delay') || '/' || current_setting('commit_siblings')";

	ok($node->poll_query_until('postgres', $in_trial), 'a trial runs');
	$node->safe_psql('postgres', 'DROP EXTENSION walpilot');
	ok($node->poll_query_until('postgres', $show, '0/5'),
		'after DROP EXTENSION mid-trial sessions run the DBA\'s settings');
	is(slurp_file($auto_conf), $auto_before,
		'DROP EXTENSION mid-trial: postgresql.auto.conf byte-for-byte as before');

	$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
	$node->append_conf('postgresql.conf', "walpilot.tune_interval = 10\n");
	$node->reload;
	ok($node->poll_query_until('postgres', $in_trial), 'a trial runs again');
	# the DBA takes walpilot out of the preload and restarts
	$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
	$node->stop('fast');
	$load->finish;
	start_emulated($node, 'hdd');
	is(slurp_file($auto_conf), $auto_before,
		'without the preload: postgresql.auto.conf byte-for-byte as before');
	is($node->safe_psql('postgres', $show), '0/5',
		'without the preload sessions run the DBA\'s settings');
	my ($ret, $o, $e) = $node->psql('postgres', 'SELECT * FROM walpilot.status');
	like($e, qr/walpilot must be loaded via "shared_preload_libraries"/,
		'the views say why they do not work');
	$node->safe_psql('postgres', 'DROP EXTENSION walpilot');
	is(slurp_file($auto_conf), $auto_before,
		'DROP EXTENSION without the preload: postgresql.auto.conf as before');
}

$node->stop;
done_testing();
