--
-- cleanup: DROP EXTENSION removes everything, schema included
--
DROP EXTENSION walpilot;
SELECT count(*) AS walpilot_schemas FROM pg_namespace WHERE nspname = 'walpilot';
