-- processResponse as the MyStudies apps send it: a SurveyResponse of daily30 with a new run id each
-- time, from participants taken in turn. The bench writes `tokens` (the participants' app tokens)
-- and `data` (bench/response-30.json, compact) above this, in the same file: scripts/bench.sh
-- and scripts/bench_scale.py.
local counter = 0
init = function(args) math.randomseed(os.time() * 1000 + math.floor(os.clock() * 1000000)) end
request = function()
    counter = counter + 1
    local run = string.format("%d-%d", math.random(1, 1000000000), counter)
    local body = '{"type":"SurveyResponse","participantId":"' .. tokens[(counter % #tokens) + 1] ..
        '","metadata":{"activityId":"daily30","version":"1.0","activityRunId":"' .. run .. '"},"data":' .. data .. '}'
    return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end
