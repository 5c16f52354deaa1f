--
-- setup: install walpilot into the regression database
--
CREATE EXTENSION walpilot;
SELECT extversion FROM pg_extension WHERE extname = 'walpilot';
-- every object lives in schema walpilot
SELECT n.nspname, c.relname, c.relkind
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'walpilot' ORDER BY c.relname;
