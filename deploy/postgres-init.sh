#!/usr/bin/env bash
# Creates StudyStack's roles and databases. The postgres image runs it once, when its data
# volume is first initialised (deploy/compose.yaml); make test's platform run uses it too, with
# its own prefix. One role and one database per service, each role owning its database (the
# services apply their own migrations); no other role may connect. And <prefix>_query, the
# read-only login the response service runs participants' queries as (docs/response-api.md),
# which may connect to the response database only; it is a member (NOINHERIT: without its
# privileges) of <prefix>_query_researcher alone, a role without login that researchers' queries
# switch to, so that each has a row-level security policy of its own.
#
# Environment: METADATA_DB_PASSWORD, REGISTRATION_DB_PASSWORD, RESPONSE_DB_PASSWORD,
# QUERY_DB_PASSWORD; STUDYSTACK_DB_PREFIX (default studystack); POSTGRES_USER (default postgres)
# and the usual PGHOST/PGPORT for where the server is.
set -euo pipefail
prefix=${STUDYSTACK_DB_PREFIX:-studystack}
psql=(psql -X -q -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname postgres)

create_owner() { # name password
    "${psql[@]}" -v name="${prefix}_$1" -v pw="$2" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'name', :'pw') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'name', :'name') \gexec
SELECT format('REVOKE ALL ON DATABASE %I FROM PUBLIC', :'name') \gexec
SQL
}
create_owner metadata "${METADATA_DB_PASSWORD:?}"
create_owner registration "${REGISTRATION_DB_PASSWORD:?}"
create_owner response "${RESPONSE_DB_PASSWORD:?}"

"${psql[@]}" -v name="${prefix}_query" -v db="${prefix}_response" -v pw="${QUERY_DB_PASSWORD:?}" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN NOINHERIT PASSWORD %L', :'name', :'pw') \gexec
SELECT format('ALTER ROLE %I SET default_transaction_read_only = on', :'name') \gexec
SELECT format('ALTER ROLE %I SET statement_timeout = %L', :'name', '5s') \gexec
SELECT format('GRANT CONNECT ON DATABASE %I TO %I', :'db', :'name') \gexec
SELECT format('CREATE ROLE %I NOLOGIN', :'name' || '_researcher') \gexec
SELECT format('GRANT %I TO %I', :'name' || '_researcher', :'name') \gexec
SQL
