-- The schema app's survey POST as its WebView sends it (multipart/form-data), each request a new
-- task of one of 1,000 participants, so every one is stored rather than recognised as a replay.
-- The same script drives StudyStack's receiver and the schema project's demo_post.php.
-- With the argument `enrol` (wrk ... -- enrol), each request comes from a participant never seen
-- before: their first POST, which enrols them.
local boundary = "----WebKitFormBoundaryStudyStackBench"
local answers = '{"instruction-pvke1yey":"","text-71nnpqzi":"slept well","datetime-79ygddzl":"2026-11-26T09:50:12.345+11:00",'
    .. '"multi-q8bohlar":"banana","instruction-mof4ymv4":"","media-o3p069gi":"","slider-0yih1evt":7,"yesno-mv09ggb1":"Yes"}'
local counter = 0
-- Set in each thread by setup(); the threads count in the main state.
thread_id = 0
local threads = 0

-- A run's POSTs are new tasks, not replays of an earlier run's (each thread reads the clock on load).
local run = os.time()

local enrol = false

function init(args)
    enrol = args[1] == "enrol"
end

function setup(thread)
    thread:set("thread_id", threads)
    threads = threads + 1
end

local function field(name, value)
    return "--" .. boundary .. "\r\nContent-Disposition: form-data; name=\"" .. name .. "\"\r\n\r\n" .. value .. "\r\n"
end

function request()
    counter = counter + 1
    local n = counter * 8 + thread_id
    -- The two threads (wrk -t2) take the even and the odd participants.
    local user = string.format("U%07d", (counter * 2 + thread_id % 2) % 1000)
    if enrol then user = string.format("N%d-%d", run, n) end
    local alert = string.format("2026-11-26T09:%02d:%02d.%06d%d+11:00", math.floor(n / 60) % 60, n % 60, n, run)
    local body = field("data_type", "survey_response") .. field("user_id", user) .. field("study_id", "3ZDOGAH")
        .. field("module_index", "1") .. field("module_name", "Elements") .. field("responses", answers)
        .. field("response_time", "2026-11-26T10:52:00+11:00") .. field("response_time_in_ms", tostring(1795646520000 + n))
        .. field("alert_time", alert) .. field("platform", "iphone") .. "--" .. boundary .. "--\r\n"
    return wrk.format("POST", nil, {["Content-Type"] = "multipart/form-data; boundary=" .. boundary}, body)
end
