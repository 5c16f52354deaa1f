/* walpilot--0.1--0.2.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION walpilot UPDATE TO '0.2'" to load this file. \quit

-- A fresh CREATE EXTENSION runs walpilot--0.1.sql and then this script, so
-- an upgraded database and a new one have the same objects by construction.
-- Objects new in 0.2 are created here; a view whose columns change is
-- dropped and created again (CREATE OR REPLACE VIEW can only append).
