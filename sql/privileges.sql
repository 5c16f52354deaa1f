--
-- privileges: readers for pg_monitor, actions for superusers only
--
CREATE ROLE regress_wp_monitor LOGIN IN ROLE pg_monitor;
CREATE ROLE regress_wp_plain LOGIN;
SET ROLE regress_wp_monitor;
SELECT count(*) AS rows FROM walpilot.status;
SELECT walpilot.reset();
SET ROLE regress_wp_plain;
SELECT count(*) FROM walpilot.status;
SELECT walpilot.reset();
SELECT * FROM walpilot.status_data_0_2();
-- even with schema usage, the functions themselves are revoked
RESET ROLE;
GRANT USAGE ON SCHEMA walpilot TO regress_wp_plain;
SET ROLE regress_wp_plain;
SELECT count(*) FROM walpilot.status;
SELECT walpilot.reset();
SELECT * FROM walpilot.status_data_0_2();
RESET ROLE;
REVOKE USAGE ON SCHEMA walpilot FROM regress_wp_plain;
-- a superuser can act
SELECT walpilot.reset() IS NOT NULL AS reset_ok;
DROP ROLE regress_wp_monitor;
DROP ROLE regress_wp_plain;
--
-- the rules, over every object of the extension (so new objects are held
-- to them too): each view is readable by pg_monitor; each *_data function
-- and report() (which only reads the views) is executable by pg_monitor;
-- every other function acts and is for superusers only; nothing is granted
-- to PUBLIC.  Rows are violations.
--
CREATE ROLE regress_wp_monitor LOGIN IN ROLE pg_monitor;
CREATE ROLE regress_wp_plain LOGIN;
SELECT c.relname AS view_not_for_pg_monitor
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'walpilot' AND c.relkind = 'v'
   AND (NOT has_table_privilege('regress_wp_monitor', c.oid, 'SELECT')
        OR has_table_privilege('regress_wp_plain', c.oid, 'SELECT')
        OR has_table_privilege('regress_wp_monitor', c.oid, 'INSERT,UPDATE,DELETE,TRUNCATE'));
SELECT p.oid::regprocedure AS function_breaking_the_rule
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'walpilot'
   AND (has_function_privilege('regress_wp_plain', p.oid, 'EXECUTE')
        OR has_function_privilege('regress_wp_monitor', p.oid, 'EXECUTE')
           <> (p.proname ~ '_data(_[0-9_]+)?$' OR p.proname IN ('report', 'prediction')));
SELECT count(*) AS public_grants
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
       aclexplode(c.relacl) a
 WHERE n.nspname = 'walpilot' AND a.grantee = 0;
-- every view, read as a pg_monitor member.  The rows of decisions,
-- checkpoints, wait_profile and timeline depend on what the worker has seen
-- by now: those are permission checks (the query runs; it prints a
-- constant).  The others have known rows.
SET ROLE regress_wp_monitor;
SELECT count(*) AS rows FROM walpilot.status;
SELECT 'read' AS decisions FROM (SELECT count(*) FROM walpilot.decisions) s;
SELECT string_agg(name, ', ' ORDER BY name) AS settings FROM walpilot.settings;
SELECT count(*) AS flush_estimate_rows FROM walpilot.storage WHERE kind = 'flush_estimate';
SELECT 'read' AS checkpoints FROM (SELECT count(*) FROM walpilot.checkpoints) s;
SELECT 'read' AS wait_profile FROM (SELECT count(*) FROM walpilot.wait_profile) s;
SELECT count(*) AS buckets FROM walpilot.commit_latency;
SELECT 'read' AS timeline FROM (SELECT count(*) FROM walpilot.timeline) s;
-- the actions, refused to a pg_monitor member
SELECT * FROM walpilot.probe(0.1, ARRAY['fsync_writethrough']);
SELECT walpilot.revert();
SELECT walpilot.reset();
-- and no way around it: not through the schema, not by owning objects
CREATE FUNCTION walpilot.evil() RETURNS int LANGUAGE sql AS 'SELECT 1';
ALTER FUNCTION walpilot.reset() OWNER TO regress_wp_monitor;
GRANT EXECUTE ON FUNCTION walpilot.reset() TO regress_wp_monitor;
DROP VIEW walpilot.status;
RESET ROLE;
-- a monitor cannot change walpilot's settings either
SET ROLE regress_wp_monitor;
ALTER SYSTEM SET walpilot.mode = 'tune';
SET walpilot.mode = 'tune';
RESET ROLE;
--
-- the worker builds no SQL: it changes settings through the GUC machinery,
-- not by formatting statements, so no value it reads can inject one.  A
-- role and database name with quotes show up verbatim in what it reports.
--
CREATE ROLE "regress_wp_it's ""quoted""" LOGIN IN ROLE pg_monitor;
SET ROLE "regress_wp_it's ""quoted""";
SELECT current_user, count(*) AS settings_rows FROM walpilot.settings;
RESET ROLE;
DROP ROLE "regress_wp_it's ""quoted""";
--
-- the install script is safe against search_path tricks: an unprivileged
-- role that may create in public plants functions and operators shadowing
-- builtins with better-matching argument types, and a schema named like
-- the extension's.  The install neither calls them nor binds to them.
--
DROP EXTENSION walpilot;
CREATE ROLE regress_wp_attacker LOGIN;
GRANT CREATE ON SCHEMA public TO regress_wp_attacker;
DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO regress_wp_attacker', current_database()); END $$;
SET ROLE regress_wp_attacker;
CREATE TABLE public.wp_trap_calls (fn text);
GRANT INSERT ON public.wp_trap_calls TO PUBLIC;
CREATE FUNCTION public.wp_trap(fn text) RETURNS bool LANGUAGE sql
  AS $$ INSERT INTO public.wp_trap_calls VALUES (fn); SELECT true $$;
CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE sql
  AS $$ SELECT public.wp_trap('now'); SELECT 'epoch'::timestamptz $$;
CREATE FUNCTION public.current_setting(varchar) RETURNS text LANGUAGE sql
  AS $$ SELECT public.wp_trap('current_setting'); SELECT 'x'::text $$;
CREATE FUNCTION public.format(varchar) RETURNS text LANGUAGE sql
  AS $$ SELECT public.wp_trap('format'); SELECT 'x'::text $$;
CREATE FUNCTION public.jsonb_build_object(varchar, int) RETURNS jsonb LANGUAGE sql
  AS $$ SELECT public.wp_trap('jsonb_build_object'); SELECT '{}'::jsonb $$;
CREATE FUNCTION public.trap_eq(bigint, int) RETURNS bool LANGUAGE sql
  AS $$ SELECT public.wp_trap('='); SELECT $1 = $2::bigint $$;
CREATE OPERATOR public.= (LEFTARG = bigint, RIGHTARG = int, FUNCTION = public.trap_eq);
CREATE FUNCTION public.trap_lt(bigint, int) RETURNS bool LANGUAGE sql
  AS $$ SELECT public.wp_trap('<'); SELECT $1 < $2::bigint $$;
CREATE OPERATOR public.< (LEFTARG = bigint, RIGHTARG = int, FUNCTION = public.trap_lt);
-- a schema of the extension's name, squatted in advance
CREATE SCHEMA walpilot;
RESET ROLE;
-- the install refuses to adopt the squatted schema ...
SET search_path = public;
CREATE EXTENSION walpilot;
DROP SCHEMA walpilot;
-- ... and with only the traps in place it installs without touching them
CREATE EXTENSION walpilot;
SELECT count(*) AS trap_calls FROM public.wp_trap_calls;
-- the views run with the traps in place (the trap count below is the check)
SELECT 'ran' AS views FROM (SELECT count(*) FROM walpilot.status) s,
  (SELECT count(*) FROM walpilot.decisions) d;
SELECT count(*) AS trap_calls FROM public.wp_trap_calls;
-- no object of the extension depends on anything outside pg_catalog and
-- its own schema
WITH members AS (
    SELECT classid, objid FROM pg_depend
     WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
       AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'walpilot')),
objects AS (
    SELECT classid, objid FROM members
    UNION ALL
    SELECT 'pg_rewrite'::regclass, r.oid
      FROM pg_rewrite r JOIN members m
        ON m.classid = 'pg_class'::regclass AND r.ev_class = m.objid)
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS member,
       pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid) AS depends_on
  FROM objects o
  JOIN pg_depend d ON d.classid = o.classid AND d.objid = o.objid
 WHERE (pg_identify_object(d.refclassid, d.refobjid, 0)).schema
       NOT IN ('pg_catalog', 'walpilot');
-- every member belongs to the installing superuser, not to the attacker
SELECT count(*) AS members_owned_by_attacker
  FROM pg_depend e JOIN pg_proc p ON e.classid = 'pg_proc'::regclass AND p.oid = e.objid
 WHERE e.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'walpilot')
   AND p.proowner = 'regress_wp_attacker'::regrole;
RESET search_path;
DROP TABLE public.wp_trap_calls;
DROP OPERATOR public.= (bigint, int);
DROP OPERATOR public.< (bigint, int);
DROP FUNCTION public.trap_eq(bigint, int), public.trap_lt(bigint, int),
  public.now(), public.current_setting(varchar), public.format(varchar),
  public.jsonb_build_object(varchar, int), public.wp_trap(text);
REVOKE CREATE ON SCHEMA public FROM regress_wp_attacker;
DO $$ BEGIN EXECUTE format('REVOKE CREATE ON DATABASE %I FROM regress_wp_attacker', current_database()); END $$;
DROP ROLE regress_wp_attacker;
DROP ROLE regress_wp_monitor;
DROP ROLE regress_wp_plain;
