# Shared shell helpers for the Makefile's scripts. Sourced, not run.
# shellcheck shell=bash

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
    if is_root; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        die "need root to run: $* (install it yourself or use sudo)"; fi
}

# Installs Debian packages with apt-get, as root.
apt_install() {
    log "installing $*"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Installs the packages whose command is missing. Arguments: command:package pairs.
ensure_commands() {
    local missing=() pair
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair##*:}")
    done
    [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
}

# PostgreSQL's server programs (initdb, pg_ctl) live outside PATH on Debian.
ensure_postgres() {
    if [ -z "$(pg_bindir 2>/dev/null)" ]; then apt_install postgresql; fi
    ensure_commands psql:postgresql-client
}

pg_bindir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
    if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; fi
}

# C libraries the build links (headers from Debian's -dev packages): libqrencode for QR codes,
# libdeflate for reading ZIP archives (zlib for the tests' writer), OpenSSL's libcrypto for CMS
# envelopes, MariaDB Connector/C for reading a MyStudies deployment's MySQL databases.
ensure_build_libraries() {
    [ -f /usr/include/qrencode.h ] || apt_install libqrencode-dev pkg-config
    [ -f /usr/include/zlib.h ] || apt_install zlib1g-dev
    [ -f /usr/include/libdeflate.h ] || apt_install libdeflate-dev
    [ -f /usr/include/openssl/cms.h ] || apt_install libssl-dev
    [ -f /usr/include/mariadb/mysql.h ] || apt_install libmariadb-dev
}

ensure_swift() {
    command -v swift >/dev/null 2>&1 ||
        die "no Swift toolchain on PATH: install Swift 6.2 or later from swift.org (Debian does not package it), then run this again"
}

# PostgreSQL refuses to run as root: as root, run its programs as the postgres OS user.
as_pg() {
    if is_root; then
        id postgres >/dev/null 2>&1 || die "the postgres OS user does not exist (is the postgresql package installed?)"
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Gives the postgres OS user (when we are root) ownership of a directory it must write.
hand_to_pg() {
    if is_root; then chown -R postgres:postgres "$1"; fi
    chmod 700 "$1"
}

# A TCP port nothing listens on right now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Python tools the tests use, from PyPI, in a virtual environment under .build/ (kept with the
# build, never committed): openapi-spec-validator, aiosmtpd (a real SMTP server for tests),
# schemathesis (the fuzzing run) and selenium (the console's browser test).
tools_venv=.build/tools-venv
ensure_tools_venv() {
    ensure_commands python3:python3 openssl:openssl
    if ! "$tools_venv/bin/python" -c "import openapi_spec_validator, aiosmtpd, schemathesis, check_jsonschema, selenium, labkey, kubernetes_validate, yaml, fhir.resources, fhirpathpy, jwt, cryptography, fhirclient, fhirpy" >/dev/null 2>&1; then
        log "installing openapi-spec-validator, aiosmtpd, schemathesis, check-jsonschema, selenium, labkey, kubernetes-validate, fhir.resources, fhirpathpy, PyJWT, cryptography, fhirclient and fhirpy into $tools_venv"
        python3 -m venv "$tools_venv" >/dev/null 2>&1 || { apt_install python3-venv && python3 -m venv "$tools_venv"; }
        "$tools_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            "openapi-spec-validator>=0.7,<0.8" "aiosmtpd>=1.4,<2" "schemathesis>=4.3,<5" "check-jsonschema>=0.33,<1" \
            "selenium>=4.20,<5" "labkey>=3.4,<4" "kubernetes-validate>=1.30,<2" "PyYAML>=6,<7" \
            "fhir.resources>=8.3,<9" "fhirpathpy>=2.2,<3" "PyJWT>=2.10,<3" "cryptography>=44" \
            "fhirclient>=4.3,<5" "fhirpy>=2.3,<3"
    fi
    # axe-core 4.12.1 (MPL-2.0) for the browser test's accessibility checks: the package is only
    # its carrier (its playwright dependency is not wanted; the test runs axe through selenium).
    if ! "$tools_venv/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('axe_playwright_python') is None)" 2>/dev/null; then
        log "installing axe-core (from axe-playwright-python, without its dependencies) into $tools_venv"
        "$tools_venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "axe-playwright-python==0.1.8"
    fi
}

# Headless Chromium and its driver, from Debian, for the console's browser test.
ensure_browser() {
    ensure_commands chromium:chromium chromedriver:chromium-driver
}

# The roles and databases of one run of the platform on the test cluster, made by
# deploy/postgres-init.sh as the compose deployment makes them: one owner role per service
# database, CONNECT revoked from PUBLIC, and the query role, each name starting with $1. Sets
# hostport (the cluster's host:port) and db_password (metadata, registration, response, query).
create_run_databases() {
    local prefix=$1 cluster superuser
    cluster=${STUDYSTACK_TEST_DATABASE_URL%/*}
    hostport=${cluster#*@}
    superuser=${cluster#postgres://}
    superuser=${superuser%@*}
    declare -gA db_password=([metadata]=$(random_hex 12) [registration]=$(random_hex 12) [response]=$(random_hex 12)
                             [query]=$(random_hex 12))
    STUDYSTACK_DB_PREFIX=$prefix POSTGRES_USER=$superuser PGHOST=${hostport%:*} PGPORT=${hostport##*:} \
        METADATA_DB_PASSWORD=${db_password[metadata]} REGISTRATION_DB_PASSWORD=${db_password[registration]} \
        RESPONSE_DB_PASSWORD=${db_password[response]} QUERY_DB_PASSWORD=${db_password[query]} \
        deploy/postgres-init.sh
}

drop_run_databases() {
    local prefix=$1
    psql -X -q "$STUDYSTACK_TEST_DATABASE_URL" >/dev/null 2>&1 <<SQL || true
DROP DATABASE IF EXISTS ${prefix}_metadata WITH (FORCE);
DROP DATABASE IF EXISTS ${prefix}_registration WITH (FORCE);
DROP DATABASE IF EXISTS ${prefix}_response WITH (FORCE);
DROP ROLE IF EXISTS ${prefix}_query;
DROP ROLE IF EXISTS ${prefix}_query_researcher;
DROP ROLE IF EXISTS ${prefix}_metadata;
DROP ROLE IF EXISTS ${prefix}_registration;
DROP ROLE IF EXISTS ${prefix}_response;
SQL
}

# Polls URL's /readyz until it answers 200, for at most a minute; returns 1 if it never does.
wait_ready() {
    local _
    for _ in $(seq 1 300); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$1/readyz")" = 200 ] && return 0
        sleep 0.2
    done
    return 1
}

# $1 random bytes as hex.
random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
