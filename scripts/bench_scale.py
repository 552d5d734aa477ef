"""make bench-scale: how every cost grows as a study grows (docs/operations.md, Capacity).

Brings BENCHSTUDY to each size in BENCH_SCALE_SIZES (participants; "10000 100000 1000000" unless set)
in turn through scripts/bench_seed.sh (the same rows every run, written in bulk), and at each size
measures, in the same run: what the phones wait on (sign-in, updateActivityState, the app's activity
states, processResponse), processing into tables, what a study team waits on in the console (the
participants pages, one participant's page, adherence and who is behind, the data pages) and through
the APIs (the data grid, the exports' first byte, the LabKey API), the two sweeps (standings recounted,
reminders decided) and the bytes each participant costs on disk. Then prints a table per measurement:
the sizes side by side and the growth exponent between each two (log of the cost ratio over log of
the size ratio): flat is 0, linear 1.

Each console page is measured twice: flat out (a team's connections, each asking again as soon as it
is answered) and at a person's pace (each waits about BENCH_PACE_MS between pages). The phones'
requests are each run twice in a row, the second measured (`warm`). Every wrk run also records the
CPU each of the stack's programs spent a request (`cpu_seconds`), which says where a request's time
went and how many a second the machine's cores can answer.

Called by scripts/bench_scale.sh with the stack started and BENCHSTUDY published; writes the figures
as JSON to the file named by its argument (the report is what it prints).

python3 scripts/bench_scale.py FIGURES.json
"""
import base64
import http.cookiejar
import json
import math
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SIZES = [int(size) for size in os.environ.get("BENCH_SCALE_SIZES", "10000 100000 1000000").split()]
RESPONSES_EACH = int(os.environ.get("BENCH_SCALE_RESPONSES", "3"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
PHONES = int(os.environ.get("BENCH_CONNECTIONS", "64"))
TEAM = 8
# The team at a person's pace: each of TEAM waits about PACE_MS between a page and their next
# (from half to one and a half times it), measured for PACE_SECONDS so that the p99 rests on some
# hundreds of pages.
PACE_MS = int(os.environ.get("BENCH_PACE_MS", "1000"))
PACE_SECONDS = int(os.environ.get("BENCH_PACE_SECONDS", str(3 * SECONDS)))
PACED = "@pace"
SWEEP_SECONDS = int(os.environ.get("BENCH_SWEEP_SECONDS", "120"))
REMINDERS = int(os.environ.get("BENCH_REMINDERS", "5000"))
SAMPLED = 500

CONSOLE = "http://127.0.0.1:8080"
METADATA = "http://127.0.0.1:8081"
REGISTRATION = "http://127.0.0.1:8082"
RESPONSE = "http://127.0.0.1:8083"
USERREG = f"{REGISTRATION}/fdahpUserRegWS"


def log(message):
    print(f"==> {message}", file=sys.stderr, flush=True)


def local_secrets():
    found = {}
    for line in open(".data/secrets.env"):
        if "=" in line and not line.startswith("#"):
            name, value = line.rstrip("\n").split("=", 1)
            found[name] = value
    return found


SECRETS = local_secrets()


def sql(database, statement):
    """One statement's result as text (rows by line, columns by |), as the benchmark's owner role."""
    # On its standard input: a statement naming thousands of participants is past what one
    # command-line argument may hold.
    return subprocess.run(
        ["psql", "-q", "-X", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "55432", "-U", "studystack",
         f"studystack_{database}"], input=statement,
        env=dict(os.environ, PGPASSWORD=SECRETS["STUDYSTACK_DB_PASSWORD"]), check=True, capture_output=True, text=True).stdout.strip()


def shell(script, **environment):
    """A bash snippet with scripts/lib.sh and the benchmark's stack functions loaded."""
    subprocess.run(["bash", "-c", f". scripts/lib.sh; . scripts/bench_stack.sh; {script}"], check=True,
                   env=dict(os.environ, **{name: str(value) for name, value in environment.items()}))


def request(method, url, body=None, headers=None, opener=None):
    prepared = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    with (opener or urllib.request.build_opener()).open(prepared, timeout=120) as reply:
        return reply.status, reply.read()


# --- wrk ------------------------------------------------------------------------------------------

def settle(seconds=600):
    """Until no query of the services runs: wrk stops sending at its end, but the requests it left
    in flight (a slow page's, above all) go on running, and the next measurement would share the
    machine with them."""
    deadline = time.monotonic() + seconds
    for database in ("registration", "response", "metadata"):
        while sql(database, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' "
                            "AND pid <> pg_backend_pid() AND datname = current_database()") != "0":
            if time.monotonic() > deadline:
                log(f"warning: queries of {database} still running {seconds} s after a measurement")
                return
            time.sleep(0.2)


PROCESSES = ("postgres", "study-metadata", "registration", "response", "console")


def cpu_seconds():
    """The CPU time (user and system, in seconds) each of the stack's programs has used so far,
    its processes summed (every PostgreSQL backend and background process under "postgres"), with
    what their ended children used (a backend or autovacuum worker that ends is counted in the
    postmaster's, so the sum only grows)."""
    tick = os.sysconf("SC_CLK_TCK")
    used = dict.fromkeys(PROCESSES, 0.0)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as command:
                program = os.path.basename(command.read().split(b"\0")[0].decode(errors="replace"))
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        program = "postgres" if program.startswith("postgres") else program
        if program in used:
            used[program] += sum(int(value) for value in fields[11:15]) / tick
    return used


def wrk(url, connections, headers=None, script=None, seconds=None):
    """requests/s, p50 and p99 in ms and the answers other than 2xx or 3xx of one wrk run, started
    once the previous run's requests have finished (`settle`), and the CPU each of the stack's
    programs spent a request meanwhile, in ms (`cpu`: where a request's time went; PostgreSQL's
    background work is in its share)."""
    settle()
    before = cpu_seconds()
    # A request waits up to 30 s (wrk's own limit, 2 s, would leave a slow page with no latencies).
    arguments = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{seconds or SECONDS}s", "--latency", "--timeout", "30s"]
    for name, value in (headers or {}).items():
        arguments += ["-H", f"{name}: {value}"]
    if script:
        arguments += ["-s", script]
    text = subprocess.run(arguments + [url], check=True, capture_output=True, text=True).stdout

    def ms(which):
        value, unit = re.search(rf"{which}%\s+([\d.]+)(us|ms|s)\b", text).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    after = cpu_seconds()
    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)), "p50": ms("50"), "p99": ms("99"),
            "failed": (int(failed.group(1)) if failed else 0) + (sum(map(int, socket.groups())) if socket else 0),
            "connections": connections, "requests": requests,
            "cpu": {name: 1000 * (after[name] - before[name]) / max(1, requests) for name in PROCESSES}}


def lua(path, text):
    with open(path, "w") as out:
        out.write(text)
    return path


def team_script(work, name, values, pause=None):
    """A wrk script that sends each request with header `name` set to one of `values`, a team's
    sessions: wrk's two threads take half of them each and go round their half request by request,
    so the requests in flight at once are mostly different people's. With `pause` (ms), each
    connection waits between its answer and its next request, uniformly from half to one and a half
    times that (wrk's latencies leave the wait out)."""
    quoted = ", ".join(json.dumps(value) for value in values)
    waits = f"""
function delay()
  return math.random({pause // 2}, {pause * 3 // 2})
end
""" if pause else ""
    return lua(os.path.join(work, f"team-{name.lower()}{'-paced' if pause else ''}.lua"), waits + f"""
local made = 0
function setup(thread)
  thread:set("id", made)
  made = made + 1
end
local values = {{{quoted}}}
local sent = 0
function request()
  local half = math.floor(#values / 2)
  sent = sent + 1
  return wrk.format(nil, nil, {{["{name}"] = values[(id or 0) * half + (sent % half) + 1]}})
end
""")


# --- the stack ------------------------------------------------------------------------------------

class Stack:
    def __init__(self):
        status, body = request("POST", f"{METADATA}/admin/v1/login", json.dumps(
            {"email": SECRETS["STUDYSTACK_ADMIN_EMAIL"], "password": SECRETS["STUDYSTACK_ADMIN_PASSWORD"]}).encode(),
            {"Content-Type": "application/json"})
        self.token = json.loads(body)["token"]
        self.bearer = {"Authorization": f"Bearer {self.token}"}
        self.console_cookie = None
        self.api_key = None
        self.team_tokens = []
        self.team_cookies = []

    def team_sessions(self):
        """A team of TEAM signed in each on their own, to the admin API and to the console: the pages
        and API calls at a team's concurrency send each request as the next of them (`team_script`).
        One session for every connection would let the services share its checks (a page's calls
        that arrive together are checked once) across people who in fact each have their own."""
        self.team_tokens, self.team_cookies = [], []
        for _ in range(TEAM):
            _, body = request("POST", f"{METADATA}/admin/v1/login", json.dumps(
                {"email": SECRETS["STUDYSTACK_ADMIN_EMAIL"], "password": SECRETS["STUDYSTACK_ADMIN_PASSWORD"]}).encode(),
                {"Content-Type": "application/json"})
            self.team_tokens.append(f"Bearer {json.loads(body)['token']}")
            self.team_cookies.append(self.console_session())

    def console_session(self):
        """The super-admin signed in to the console, as a browser is: the cookie it is given (also
        kept as `console_cookie`)."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        _, page = request("GET", f"{CONSOLE}/signin", opener=opener)
        csrf = re.search(rb'name="csrf" value="([^"]*)"', page).group(1).decode()
        form = urllib.parse.urlencode({"csrf": csrf, "email": SECRETS["STUDYSTACK_ADMIN_EMAIL"],
                                       "password": SECRETS["STUDYSTACK_ADMIN_PASSWORD"]}).encode()
        request("POST", f"{CONSOLE}/signin", form, {"Content-Type": "application/x-www-form-urlencoded"}, opener=opener)
        session = next(cookie for cookie in jar if cookie.name == "studystack_session")
        self.console_cookie = {"Cookie": f"studystack_session={session.value}"}
        return self.console_cookie["Cookie"]

    def labkey_key(self):
        _, body = request("POST", f"{METADATA}/admin/v1/api-keys", json.dumps({"name": "bench-scale", "expiresInDays": 1}).encode(),
                       dict(self.bearer, **{"Content-Type": "application/json"}))
        self.api_key = {"apikey": json.loads(body)["key"]}


def must_answer(url, headers):
    """The request a wrk run repeats answers 200 first: a run of errors measures nothing."""
    try:
        status, body = request("GET", url, headers=headers)
    except urllib.error.HTTPError as error:
        sys.exit(f"{url} answered {error.code}: {error.read()[:300]!r}")
    if status != 200:
        sys.exit(f"{url} answered {status}")
    return body


def wait_until(what, check, seconds):
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            sys.exit(f"{what} did not happen within {seconds} s")
        time.sleep(0.5)


def quiet():
    """Registration's sweeps and deliveries idle and the databases at rest: nothing counted, decided,
    delivered or vacuumed in the background of the next measurement."""
    # The count sweep idle: no ledger due, none counted in the last five seconds. A grown study's
    # ledgers come due with their templates' (a run opening for everyone), and those the count
    # sweep's measurement did not reach get back times that may have passed; counting them under
    # the next measurement made sign-in, which reads nothing of the study, twice as slow.
    wait_until("registration's count sweep idle", lambda: sql(
        "registration", "SELECT count(*) FROM participant_run_ledgers "
                        "WHERE recount_at <= now() OR counted_at > now() - interval '5 seconds'") == "0", 3600)
    settle()
    # A count of everyone sends everyone's weeks to the response service, a call each.
    wait_until("registration's deliveries to the response service", lambda: sql(
        "registration", "SELECT count(*) FROM internal_outbox WHERE delivered_at IS NULL AND gave_up_at IS NULL") == "0", 3600)
    # What a recount or a processing run rewrote is vacuumed now, not under the next measurement.
    shell("bench_quiesce")


def spread(size, count):
    """`count` seeded participants spread evenly over the `size` (their row numbers)."""
    return [1 + k * size // count for k in range(count)]


def seeded_user(i):
    """The account id bench_seed.sh gives seeded participant i (md5 of its name, as a uuid)."""
    import hashlib
    import uuid
    return str(uuid.UUID(hashlib.md5(f"bench-seed-participant-{i}".encode()).hexdigest()))


def number_of(i):
    """Seeded participant i's number in the study (the ParticipantId of its tables)."""
    return int(sql("response", "SELECT number FROM participants WHERE app_token_hash = "
                               f"encode(sha256(convert_to('bench-seed-token-{i}', 'UTF8')), 'hex')"))


# --- what the phones wait on ------------------------------------------------------------------------

def warm(name, url, script):
    """A phones' request measured twice in a row at the phones' concurrency: the second run is its
    figure, the first is kept as `name` + FIRST. The first reads from disk what the vacuum and
    checkpoint before it (`quiet`, `bench_quiesce`) pushed out of memory over a database larger than
    the machine's memory; a service in use keeps its recent rows and the indexes' upper pages in
    memory, as the second run finds them."""
    first = wrk(url, PHONES, script=script)
    return {name + FIRST: first, name: wrk(url, PHONES, script=script)}


FIRST = "@first"


def phones(size, work):
    """Sign-in (bcrypt-bound, 4 connections), then updateActivityState, the app's activity states and
    processResponse from SAMPLED seeded participants spread over the study, at the phones' concurrency."""
    figures = {}
    address = subprocess.run(["python3", "scripts/bench_participant.py", USERREG, "Bench-Passw0rd"], check=True,
                             capture_output=True, text=True).stdout.strip()
    login = lua(f"{work}/login.lua", f"""wrk.method = "POST"
wrk.body = '{{"emailId":"{address}","password":"Bench-Passw0rd"}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["applicationId"] = "BENCHAPP"
wrk.headers["orgId"] = "BENCHORG"
""")
    log(f"{size:,}: sign-in (4 connections)")
    figures["signin"] = wrk(f"{USERREG}/login.api", 4, script=login)

    # Sessions of seeded participants, each with a fresh auth key whose SHA-256 is what the service keeps.
    rows = spread(size, SAMPLED)
    keys = [secrets.token_urlsafe(32) for _ in rows]
    sessions = sql("registration", f"""
        INSERT INTO participant_sessions (id, user_id, auth_hash, auth_expires_at, refresh_hash, refresh_expires_at)
        SELECT gen_random_uuid(), md5('bench-seed-participant-' || i)::uuid, encode(sha256(convert_to(k, 'UTF8')), 'hex'),
               now() + interval '1 hour', encode(sha256(convert_to('r' || k, 'UTF8')), 'hex'), now() + interval '1 hour'
        FROM unnest(ARRAY[{','.join(map(str, rows))}]::int[], ARRAY[{','.join(f"'{k}'" for k in keys)}]::text[]) AS t(i, k)
        RETURNING id""").split()
    table = "local sessions = {" + ",".join(f'{{"{seeded_user(i)}", "{k}"}}' for i, k in zip(rows, keys)) + "}\n"
    headers = '{["applicationId"] = "BENCHAPP", ["orgId"] = "BENCHORG", ["userId"] = session[1], ["auth"] = session[2]'
    update = lua(f"{work}/update.lua", table + """local counter = 0
local body = '{"studyId":"BENCHSTUDY","activity":[{"activityId":"a1","activityRunId":"1","activityState":"inProgress","activityVersion":"1.0","activityRun":{"total":10,"completed":0,"missed":0}}]}'
request = function()
    counter = counter + 1
    local session = sessions[(counter % #sessions) + 1]
    return wrk.format("POST", nil, """ + headers + """, ["Content-Type"] = "application/json"}, body)
end
""")
    states = lua(f"{work}/states.lua", table + """local counter = 0
request = function()
    counter = counter + 1
    local session = sessions[(counter % #sessions) + 1]
    return wrk.format("GET", "/fdahpUserRegWS/activityState.api?studyId=BENCHSTUDY", """ + headers + """})
end
""")
    log(f"{size:,}: updateActivityState and activityState ({PHONES} connections), each run twice")
    figures.update(warm("updateActivityState", f"{USERREG}/updateActivityState.api", script=update))
    figures.update(warm("activityState", f"{USERREG}/activityState.api", script=states))
    ids = ",".join(f"'{session}'" for session in sessions)
    sql("registration", f"DELETE FROM participant_sessions WHERE id IN ({ids})")

    # processResponse with the app tokens of seeded participants (bench_seed.sh: bench-seed-token-N).
    answers = json.dumps(json.load(open("bench/response-30.json")), separators=(",", ":"))
    respond = lua(f"{work}/respond.lua", "local tokens = {" + ",".join(f'"bench-seed-token-{i}"' for i in rows) + "}\n"
                  + "local data = [[" + answers + "]]\n" + open("bench/respond.lua").read())
    log(f"{size:,}: processResponse ({PHONES} connections), run twice")
    figures.update(warm("processResponse", f"{RESPONSE}/mobileappstudy-processResponse.api", script=respond))

    # Processing into tables: one replica draining a backlog of the same responses (scripts/bench_processing.sh).
    log(f"{size:,}: processing, one replica")
    subprocess.run(["scripts/bench_processing.sh", f"{work}/run"], check=True,
                   env=dict(os.environ, BENCH_PROCESSING_RUNS="1", BENCH_PROCESSING_PGBENCH="0", BENCH_BACKLOG="60000"))
    stored, seconds, errors, _, _ = open(f"{work}/run.processing-1").read().split()
    figures["processing"] = {"rate": int(stored) / float(seconds), "errors": int(errors)}
    # The run's responses are the benchmark's, not the study's.
    sql("response", "DELETE FROM responses WHERE study_key = 'BENCHSTUDY' AND NOT starts_with(fingerprint, 'seed-')")
    return figures


# --- what a study team waits on ---------------------------------------------------------------------

def grid_rows(size):
    """daily30's table cut or topped up to RESPONSES_EACH rows a participant (its newest kept), as
    processing would have written them; the grid's sort indexes an earlier size left are dropped."""
    schema = sql("response", "SELECT schema_name FROM study_schemas WHERE study_key = 'BENCHSTUDY'")
    table = f'"{schema}"."daily30"'
    target = size * RESPONSES_EACH
    sql("response", f"""INSERT INTO {table} ("ParticipantId", "Created", q0, q4, q5, q7)
        SELECT 1 + i % {size}, now() - (i || ' seconds')::interval, (i % 100) / 100.0, i % 2 = 0, i % 24, 'answer ' || (i % 997)
        FROM generate_series(1, greatest(0, {target} - (SELECT count(*) FROM {table}))) i""")
    sql("response", f"""DELETE FROM {table} WHERE "Key" < (SELECT "Key" FROM {table} ORDER BY "Key" DESC OFFSET {target - 1} LIMIT 1)""")
    sql("response", f"VACUUM ANALYZE {table}")
    for index in sql("response", f"""SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_index i
            JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = '{schema}' AND t.relname = 'daily30' AND starts_with(c.relname, 'grid_')""").split():
        sql("response", f"DROP INDEX {index}")
    return schema, table, target


def team(stack, size, work):
    """The console's pages and the admin, export and LabKey APIs under them, at a team's concurrency."""
    figures = {}
    schema, table, rows = grid_rows(size)
    middle, searched = number_of(size // 2), 7777
    deep = sql("registration", f"""SELECT pseudonym FROM participant_studies WHERE study_id = 'BENCHSTUDY'
        ORDER BY pseudonym OFFSET {size * 9 // 10} LIMIT 1""")
    study = f"{CONSOLE}/studies/BENCHSTUDY"
    pages = {
        "participants": f"{study}/participants",
        "participants-deep": f"{study}/participants?after={deep}",
        "participants-search": f"{study}/participants?q=seed-{searched:05d}",
        "participants-number": f"{study}/participants?q={number_of(searched)}",
        "participants-owed": f"{study}/participants?consent=owed",
        "participant": f"{study}/participants/{middle}",
        "adherence": f"{study}/adherence",
        "adherence-behind": f"{study}/adherence?activity=daily30&atLeast=2",
        "data": f"{study}/data",
        "grid-page": f"{study}/data/tables/daily30",
        "charts": f"{study}/charts",
        "invitations": f"{study}/invitations",
        "messages": f"{study}/messages",
    }
    for name, url in pages.items():
        must_answer(url, stack.console_cookie)
        log(f"{size:,}: console {name} ({TEAM} connections)")
        figures[name] = wrk(url, TEAM, script=team_script(work, "Cookie", stack.team_cookies))
        log(f"{size:,}: console {name} ({TEAM} people, a page each every {PACE_MS / 1000:g} s)")
        figures[name + PACED] = wrk(
            url, TEAM, script=team_script(work, "Cookie", stack.team_cookies, pause=PACE_MS), seconds=PACE_SECONDS)

    deep_key = sql("response", f'SELECT "Key" FROM {table} ORDER BY "Key" OFFSET {rows * 9 // 10} LIMIT 1')
    cursor = base64.urlsafe_b64encode(json.dumps(["Key", "asc", deep_key, deep_key]).encode()).decode().rstrip("=")
    grid = f"{RESPONSE}/admin/v1/studies/BENCHSTUDY/tables/daily30/rows?limit=50"
    apis = {
        "grid-first": grid,
        "grid-deep": f"{grid}&after={cursor}",
        "grid-participant": f"{grid}&participant={middle}",
        "grid-sorted": f"{grid}&sort=q5&order=desc",
    }
    for name, url in apis.items():
        must_answer(url, stack.bearer)
        if name == "grid-sorted":
            # The first sort by a question asks for its index; a researcher's next pages read it.
            wait_until("the grid's sort index", lambda: sql("response", f"""SELECT count(*) FROM pg_index i
                JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
                WHERE n.nspname = '{schema}' AND t.relname = 'daily30' AND starts_with(c.relname, 'grid_') AND i.indisvalid""") != "0", 600)
        log(f"{size:,}: {name} ({TEAM} connections)")
        figures[name] = wrk(url, TEAM, script=team_script(work, "Authorization", stack.team_tokens))

    for kind in ("zip", "jsonl"):
        settle()
        log(f"{size:,}: export.{kind}, its first byte ({TEAM} connections)")
        first = json.loads(subprocess.run(
            ["python3", "scripts/bench_first_byte.py", f"{RESPONSE}/admin/v1/studies/BENCHSTUDY/export.{kind}",
             "\n".join(f"Authorization: {token}" for token in stack.team_tokens), str(TEAM), str(SECONDS)], check=True, capture_output=True, text=True).stdout)
        figures[f"export-{kind}"] = {"rps": first["requestsPerSecond"], "p50": first["p50"], "p99": first["p99"],
                                     "failed": first["errors"], "connections": TEAM}

    labkey = f"{RESPONSE}/BENCHORG/BENCHAPP/BENCHSTUDY"
    aggregate = urllib.parse.quote("SELECT ParticipantId, count(*) AS answers, avg(q0) AS q0 FROM daily30 GROUP BY ParticipantId")
    filtered = f"{labkey}/query-getQuery.api?schemaName=lists&query.queryName=daily30&query.q5~gte=12&query.sort=-Key&query.maxRows=100"
    calls = {
        "labkey-getQuery": filtered,
        "labkey-getQuery-page": filtered + "&includeTotalCount=false",
        "labkey-executeSql": f"{labkey}/query-executeSql.api?schemaName=lists&sql={aggregate}",
    }
    for name, url in calls.items():
        # One admin runs two queries at once: the previous call's last ones may still hold the slots.
        deadline = time.monotonic() + 120
        while True:
            try:
                must_answer(url, stack.api_key)
                break
            except SystemExit:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        log(f"{size:,}: {name} (2 connections)")
        figures[name] = wrk(url, 2, stack.api_key)
    return figures


# --- the sweeps -------------------------------------------------------------------------------------

def count_sweep(size):
    """Every ledger of the study due at once (a study update, a run opening for everyone in a zone):
    the registration service's sweep recounts them, and the rate it holds over SWEEP_SECONDS (or until
    all are counted) gives the time to recount everyone. Ledgers not reached get their own time back."""
    quiet()
    sql("registration", "DROP TABLE IF EXISTS bench_recount_saved")
    sql("registration", "CREATE UNLOGGED TABLE bench_recount_saved AS SELECT user_id, recount_at FROM participant_run_ledgers "
                        "WHERE study_id = 'BENCHSTUDY'")
    started = sql("registration", "SELECT now()")
    due = int(sql("registration", "WITH due AS (UPDATE participant_run_ledgers SET recount_at = now() "
                                  "WHERE study_id = 'BENCHSTUDY' RETURNING 1) SELECT count(*) FROM due"))
    log(f"{size:,}: the count sweep, {due:,} ledgers due at once (at most {SWEEP_SECONDS} s)")
    counted = lambda: int(sql("registration", f"SELECT count(*) FROM participant_run_ledgers WHERE study_id = 'BENCHSTUDY' "
                                              f"AND counted_at >= '{started}'"))
    deadline = time.monotonic() + SWEEP_SECONDS
    while counted() < due and time.monotonic() < deadline:
        time.sleep(0.5)
    # From the first count to the last: the sweep polls every few seconds when idle, and the
    # wait for its next poll is not its rate.
    done, seconds = sql("registration", f"""SELECT count(*), extract(epoch FROM max(counted_at) - min(counted_at))
        FROM participant_run_ledgers WHERE study_id = 'BENCHSTUDY' AND counted_at >= '{started}'""").split("|")
    sql("registration", f"""UPDATE participant_run_ledgers l SET recount_at = s.recount_at FROM bench_recount_saved s
        WHERE l.study_id = 'BENCHSTUDY' AND l.user_id = s.user_id AND (l.counted_at IS NULL OR l.counted_at < '{started}')""")
    sql("registration", "DROP TABLE bench_recount_saved")
    rate = (int(done) - 1) / float(seconds)
    quiet()
    return {"ledgers": due, "counted": int(done), "seconds": float(seconds), "rate": rate, "everyone": due / rate,
            "measured_whole": int(done) == due}


def reminder_sweep(size):
    """REMINDERS reminders of daily30 due at once, among participants spread over the study (each for
    a run no reminder was decided for, so each is decided afresh): the rate the reminder sweep decides
    them at. Their decisions are the benchmark's and go afterwards."""
    quiet()
    users = ",".join(f"'{seeded_user(i)}'" for i in spread(size, REMINDERS))
    started = sql("registration", "SELECT now()")
    # Each for a run open now (between daily30's windows none is: the run is made due for the
    # measurement; the next count of the participant writes their standing again).
    due = int(sql("registration", f"""WITH due AS (
        UPDATE participant_activity_standings SET remind_at = now(), remind_run_id = 900000 + (random() * 99999)::int,
            due_since = coalesce(due_since, now() - interval '1 hour'), due_until = coalesce(due_until, now() + interval '1 hour')
        WHERE study_id = 'BENCHSTUDY' AND activity_id = 'daily30' AND user_id IN ({users})
        RETURNING 1) SELECT count(*) FROM due"""))
    if due == 0:
        sys.exit("no reminder could be made due: BENCHSTUDY's participants have no standing of daily30")
    log(f"{size:,}: the reminder sweep, {due:,} reminders due at once")
    pending = lambda: int(sql("registration", f"""SELECT count(*) FROM participant_activity_standings
        WHERE study_id = 'BENCHSTUDY' AND activity_id = 'daily30' AND remind_run_id >= 900000 AND user_id IN ({users})"""))
    wait_until("the reminders' decisions", lambda: pending() == 0, 900)
    # From the first decision to the last, as the count sweep's rate.
    decided, seconds = sql("registration", f"""SELECT count(*), extract(epoch FROM max(decided_at) - min(decided_at))
        FROM run_reminders WHERE study_id = 'BENCHSTUDY' AND run_id >= 900000 AND decided_at >= '{started}'""").split("|")
    sql("registration", "DELETE FROM run_reminders WHERE study_id = 'BENCHSTUDY' AND run_id >= 900000")
    return {"due": due, "decided": int(decided), "seconds": float(seconds), "rate": (int(decided) - 1) / float(seconds)}


# --- the bytes each participant costs -----------------------------------------------------------------

def disk(size):
    """Every table of the three databases (BENCHSTUDY's own tables by name), its heap and indexes."""
    tables = {}
    for database in ("registration", "response", "metadata"):
        for row in sql(database, """SELECT n.nspname, c.relname, pg_table_size(c.oid), pg_indexes_size(c.oid), c.reltuples::bigint
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')""").splitlines():
            schema, name, heap, indexes, rows = row.split("|")
            label = f"{database}.{name}" if schema == "public" else f"{database}.{{study}}.{name}"
            tables[label] = {"heap": int(heap), "indexes": int(indexes), "rows": max(0, int(rows))}
        tables[f"{database}.(whole database)"] = {
            "heap": int(sql(database, "SELECT pg_database_size(current_database())")), "indexes": 0, "rows": 0}
    return tables


# --- one size ---------------------------------------------------------------------------------------

def seed(size):
    log(f"seeding BENCHSTUDY to {size:,} participants ({RESPONSES_EACH} responses each)")
    started = time.monotonic()
    subprocess.run(["scripts/bench_seed.sh"], check=True,
                   env=dict(os.environ, BENCH_PARTICIPANTS=str(size), BENCH_RESPONSES_EACH=str(RESPONSES_EACH)))
    seconds = time.monotonic() - started
    # Growing stops the services: they start again as the benchmark runs them.
    shell("bench_run_stack")
    return seconds


def measure(size, work, keep):
    """One size's figures; `keep` is called with them as they grow, so a measurement that fails
    leaves the ones before it on disk."""
    seconds = seed(size)
    stack = Stack()
    stack.console_session()
    stack.team_sessions()
    stack.labkey_key()
    figures = {"size": size, "seedSeconds": seconds, "responsesEach": RESPONSES_EACH, "requestTimeout": 30, "settled": True,
               "cores": os.cpu_count()}
    figures["sweeps"] = {"count": count_sweep(size)}
    keep(figures)
    figures["requests"] = phones(size, work)
    keep(figures)
    quiet()
    figures["requests"].update(team(stack, size, work))
    keep(figures)
    figures["sweeps"]["reminders"] = reminder_sweep(size)
    figures["disk"] = disk(size)
    keep(figures)
    return figures


# --- the report -------------------------------------------------------------------------------------

REQUESTS = [
    ("signin", "sign-in (login.api, bcrypt)", "phones"),
    ("updateActivityState", "updateActivityState", "phones"),
    ("activityState", "the app's activity states (activityState.api)", "phones"),
    ("processResponse", "processResponse (30 answers)", "phones"),
    ("participants", "console: participants, first page", "team"),
    ("participants-deep", "console: participants, 90% in", "team"),
    ("participants-search", "console: participants, an e-mail searched", "team"),
    ("participants-number", "console: participants, a number searched", "team"),
    ("participants-owed", "console: participants who owe a signature", "team"),
    ("participant", "console: one participant's page and runs", "team"),
    ("adherence", "console: adherence and who is behind", "team"),
    ("adherence-behind", "console: who is behind in daily30, 2+ in a row", "team"),
    ("data", "console: the study's data", "team"),
    ("grid-page", "console: daily30's grid", "team"),
    ("charts", "console: charts (enrolment by day and site)", "team"),
    ("invitations", "console: invitations and sites, counted", "team"),
    ("messages", "console: messages, with the audience", "team"),
    ("grid-first", "grid API: first page", "team"),
    ("grid-deep", "grid API: 90% in, by cursor", "team"),
    ("grid-participant", "grid API: one participant's rows", "team"),
    ("grid-sorted", "grid API: sorted by a question", "team"),
    ("export-zip", "export.zip: first byte", "team"),
    ("export-jsonl", "export.jsonl: first byte", "team"),
    ("labkey-getQuery-page", "LabKey getQuery: 100 of a filter", "team"),
    ("labkey-getQuery", "LabKey getQuery: the same with its total", "team"),
    ("labkey-executeSql", "LabKey executeSql: GROUP BY, every row", "team"),
]
# Whole-table by what it asks: an aggregate over every row, and the total of a filter (LabKey's
# clients ask for it unless told not to), grow with the table whatever is done.
WHOLE_TABLE = {"labkey-executeSql", "labkey-getQuery"}


def exponent(sizes, costs):
    """The growth exponents between each two sizes: log(cost ratio) / log(size ratio)."""
    return [math.log(costs[k + 1] / costs[k]) / math.log(sizes[k + 1] / sizes[k]) if costs[k] > 0 and costs[k + 1] > 0 else None
            for k in range(len(sizes) - 1)]


def latencies(sizes, runs):
    """Each size's p99 of its run (None where every request timed out, which wrk reports as 0) and
    the growth exponents between each two (None beside a run with none)."""
    p99 = [run["p99"] if run["p99"] > 0 or not run["failed"] else None for run in runs]
    exps = [e if None not in (p99[k], p99[k + 1]) else None for k, e in enumerate(exponent(sizes, [v or 0 for v in p99]))]
    return p99, exps


def flat(exps):
    return all(e is not None and e < 0.1 for e in exps)


def within_goal(p99, exps, failed):
    """A per-request goal: flat, under 100 ms at p99 at the largest size, and nothing failed."""
    return p99[-1] is not None and p99[-1] < 100 and flat(exps) and not failed


def latency_cells(p99, exps):
    return ("  ".join(f"{v:>11.1f}" if v is not None else f"{'timed out':>11}" for v in p99)
            + "  ".join(f"{e:>13.2f}" if e is not None else f"{'-':>13}" for e in exps))


def report(results):
    sizes = [figures["size"] for figures in results]
    lines = []
    out = lines.append
    span = "  ".join(f"{size:>11,}" for size in sizes)
    steps = "  ".join(f"{'exp ' + short(sizes[k]) + '-' + short(sizes[k + 1]):>13}" for k in range(len(sizes) - 1))
    out("BENCHSTUDY at each size (scripts/bench_seed.sh; the same rows every run)")
    out(f"{'':<48}{span}")
    out(f"{'responses a participant':<48}" + "  ".join(f"{figures['responsesEach']:>11}" for figures in results))
    out(f"{'seeding, s (grown from the size before)':<48}" + "  ".join(f"{figures['seedSeconds']:>11.0f}" for figures in results))
    for database in ("registration", "response", "metadata"):
        out(f"{database + ' database, MB':<48}" + "  ".join(
            f"{figures['disk'][database + '.(whole database)']['heap'] / 1e6:>11,.0f}" for figures in results))

    out("")
    out(f"per request: p99 in ms at the connections shown (phones {PHONES}, a team {TEAM}, an admin's API key 2, sign-in 4),")
    out("and the growth exponent between each two sizes (goal: flat, under 0.1, and p99 < 100 ms at the largest)")
    out(f"{'request':<48}{'conns':>6}{span}{steps}  goal")
    missed = []
    for name, label, _ in REQUESTS:
        runs = [figures["requests"].get(name) for figures in results]
        if any(run is None for run in runs):
            continue
        p99, exps = latencies(sizes, runs)
        failed = sum(run["failed"] for run in runs)
        if name in WHOLE_TABLE:
            verdict = "whole table"
        elif name == "signin":
            verdict = "met" if flat(exps) else "NOT"
        else:
            verdict = "met" if within_goal(p99, exps, failed) else "NOT"
        if verdict == "NOT":
            missed.append(label)
        out(f"{label:<48}{runs[0]['connections']:>6}" + latency_cells(p99, exps) + f"  {verdict}"
            + (f" ({failed} failed)" if failed else ""))
    out("(sign-in is bounded by bcrypt's cost, not by the study: its goal is only to stay flat. An aggregate over every")
    # Figures kept by an earlier version of this script: wrk's own 2 s limit, and each run started
    # without waiting for the previous run's requests to finish.
    timeout = results[0].get("requestTimeout", 2)
    out(f" row, or the total of a filter, grows with the table by what it asks, whatever is done. A request waits up to {timeout} s"
        + ("." if all(figures.get("settled") for figures in results) else
           "; these runs started without waiting for the previous run's requests to end, so a page that timed out slowed the next ones.")
        + ")")
    paced = [name for name, _, group in REQUESTS if group == "team" and all(
        name + PACED in figures["requests"] for figures in results)]
    if paced:
        out("")
        out(f"the console's pages at a person's pace: {TEAM} people, each asking for a page about every {PACE_MS / 1000:g} s")
        out(f"(a pause of {PACE_MS // 2} to {PACE_MS * 3 // 2} ms after each answer), p99 in ms (goal: flat, under 0.1, and p99 < 100 ms at the largest)")
        out(f"{'page':<48}{'pages':>6}{span}{steps}  goal")
        for name, label, _ in REQUESTS:
            if name not in paced:
                continue
            runs = [figures["requests"][name + PACED] for figures in results]
            p99, exps = latencies(sizes, runs)
            failed = sum(run["failed"] for run in runs)
            verdict = "met" if within_goal(p99, exps, failed) else "NOT"
            if verdict == "NOT":
                missed.append(label + ", at a person's pace")
            out(f"{label:<48}{min(run['requests'] for run in runs):>6}" + latency_cells(p99, exps) + f"  {verdict}"
                + (f" ({failed} failed)" if failed else ""))
        out("(pages: the fewest any size's run measured; its p99 is the slowest of about the worst 1 in 100.)")

    first = [name for name, _, group in REQUESTS if group == "phones" and all(
        name + FIRST in figures["requests"] for figures in results)]
    if first:
        out("")
        out("the phones' requests above were each measured twice in a row; the first run's p99 in ms (it reads from disk")
        out("what the vacuum and checkpoint before it pushed out of memory, which a service in use keeps):")
        for name, label, _ in REQUESTS:
            if name in first:
                out(f"{label:<48}{PHONES:>6}" + "  ".join(f"{figures['requests'][name + FIRST]['p99']:>11.1f}" for figures in results))

    at_largest = results[-1]["requests"]
    cores = results[-1].get("cores", os.cpu_count())
    spent = [(name, label) for name, label, _ in REQUESTS if "cpu" in at_largest.get(name, {})]
    if spent:
        out("")
        out(f"where a request's time went at {sizes[-1]:,}: the CPU each program spent a request, in ms, flat out at the")
        out(f"connections above (PostgreSQL's background work in its share), and the requests a second {cores} cores")
        out("could answer at that cost")
        out(f"{'request':<48}" + "".join(f"{name:>15}" for name in PROCESSES) + f"{'all':>9}{'ceiling/s':>11}")
        lost = False
        for name, label in spent:
            cpu = at_largest[name]["cpu"]
            if any(value < 0 for value in cpu.values()):
                # A process that ended during the run and whose parent is not counted here (or,
                # in runs before `cpu_seconds` counted ended children, any) took its CPU with it.
                lost = True
                out(f"{label:<48}" + "".join(f"{cpu[program]:>15.2f}" if cpu[program] >= 0 else f"{'lost':>15}"
                                             for program in PROCESSES) + f"{'-':>9}{'-':>11}")
                continue
            total = sum(cpu.values())
            out(f"{label:<48}" + "".join(f"{cpu[program]:>15.2f}" for program in PROCESSES) + f"{total:>9.2f}"
                + f"{cores * 1000 / total if total else 0:>11,.0f}")
        if lost:
            out("(lost: a process of that program ended during the run, and this run's figures did not yet count the CPU")
            out(" of ended processes; the program's other figures may read low for the same reason)")

    out("")
    out(f"{'requests/s at the same connections':<48}{'':>6}{span}")
    for name, label, _ in REQUESTS:
        runs = [figures["requests"].get(name) for figures in results]
        if all(run is not None for run in runs):
            out(f"{label:<48}{runs[0]['connections']:>6}" + "  ".join(f"{run['rps']:>11,.1f}" for run in runs))
    processing = [figures["requests"]["processing"]["rate"] for figures in results]
    out(f"{'processing into tables, one replica, responses/s':<48}{'':>6}" + "  ".join(f"{rate:>11,.0f}" for rate in processing))

    out("")
    out("the sweeps (goal: linear or better, exponent at most 1.05, and everyone recounted well within the")
    out(" 30 minutes between daily30's runs opening and its first reminders)")
    counts = [figures["sweeps"]["count"] for figures in results]
    everyone = [count["everyone"] for count in counts]
    out(f"{'':<48}{span}{steps}  goal")
    out(f"{'count sweep: participants recounted a second':<48}" + "  ".join(f"{count['rate']:>11,.0f}" for count in counts))
    exps = exponent(sizes, everyone)
    verdict = "met" if all(e is not None and e <= 1.05 for e in exps) and everyone[-1] <= 900 else "NOT"
    if verdict == "NOT":
        missed.append("the count sweep")
    out(f"{'count sweep: everyone recounted, s':<48}" + "  ".join(f"{value:>11,.0f}" for value in everyone)
        + "  ".join(f"{e:>13.2f}" if e is not None else f"{'-':>13}" for e in exps) + f"  {verdict}")
    measured = [f"{short(count['ledgers'])}: " + ("all" if count["measured_whole"] else f"{count['counted']:,}")
                + f" counted in {count['seconds']:.0f} s" for count in counts]
    out("  (" + "; ".join(measured) + "; the rest at the rate held)")
    reminders = [figures["sweeps"]["reminders"] for figures in results]
    out(f"{'reminder sweep: reminders decided a second':<48}" + "  ".join(f"{r['rate']:>11,.0f}" for r in reminders))
    whole = [size / r["rate"] for size, r in zip(sizes, reminders)]
    exps = exponent(sizes, whole)
    verdict = "met" if all(e is not None and e <= 1.05 for e in exps) and whole[-1] <= 3600 else "NOT"
    if verdict == "NOT":
        missed.append("the reminder sweep")
    out(f"{'reminder sweep: everyone reminded, s':<48}" + "  ".join(f"{value:>11,.0f}" for value in whole)
        + "  ".join(f"{e:>13.2f}" if e is not None else f"{'-':>13}" for e in exps) + f"  {verdict}")
    due = ", ".join(f"{r['due']:,}" for r in reminders)
    out(f"  ({due} due at once; goal: everyone's reminder within the hour daily30 spreads them over)")

    out("")
    out("bytes a participant costs on disk (heap and TOAST, indexes), the tables over 100 bytes at the largest size")
    largest = results[-1]
    out(f"{'table':<58}" + "  ".join(f"{size:>11,}" for size in sizes) + f"{'heap':>10}{'indexes':>10}{'rows each':>11}")
    ranked = sorted(largest["disk"].items(), key=lambda item: -(item[1]["heap"] + item[1]["indexes"]))
    for name, table in ranked:
        each = (table["heap"] + table["indexes"]) / largest["size"]
        if each < 100:
            continue
        per = []
        for figures in results:
            other = figures["disk"].get(name)
            per.append((other["heap"] + other["indexes"]) / figures["size"] if other else 0)
        out(f"{name:<58}" + "  ".join(f"{value:>11,.0f}" for value in per)
            + f"{table['heap'] / largest['size']:>10,.0f}{table['indexes'] / largest['size']:>10,.0f}{table['rows'] / largest['size']:>11,.1f}")
    out("")
    out("missed: " + ("; ".join(missed) if missed else "nothing"))
    return "\n".join(lines)


def short(size):
    return f"{size // 1_000_000}M" if size >= 1_000_000 and size % 1_000_000 == 0 else f"{size // 1000}k"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        print(report(json.load(open(sys.argv[2]))))
        return
    figures_file = sys.argv[1]
    work = tempfile.mkdtemp(prefix="bench-scale-")
    results = []
    def keep(figures):
        # Kept as each size is measured: the report can be printed again from them (--report).
        with open(figures_file, "w") as out:
            json.dump(results + [figures], out, indent=1)
    for size in SIZES:
        results.append(measure(size, work, keep))
    print(report(results))


if __name__ == "__main__":
    main()
