-- wrk script for every single-request scenario of bench/run.sh.
--
-- Environment:
--   BENCH_PATH       path template; "{id}" is replaced by a poll id (default "/")
--   BENCH_IDS        file of poll ids, one a line; requests cycle through them,
--                    each wrk thread starting at a different place
--   BENCH_METHOD     GET (default) or POST
--   BENCH_BODY_FILE  request body for POST, sent as application/json
--   BENCH_XFF        if set, each request carries its own X-Forwarded-For
--                    address from 198.18.0.0/15 (RFC 2544's benchmarking
--                    range; only a header, no traffic goes there). polld
--                    believes it from a loopback peer, so creations spread
--                    over many clients, as they would in production, instead
--                    of one client with an ever longer history.
--
-- done() prints one machine-readable line:
--   RESULT rps=<req/s> p50_ms=<ms> p99_ms=<ms> requests=<n> errors=<n>
-- where errors counts socket errors, timeouts and HTTP statuses >= 400.

local paths = {}
local counter = 0
local method = os.getenv("BENCH_METHOD") or "GET"
local body = nil
local thread_no = 0

function setup(thread)
  thread_no = thread_no + 1
  thread:set("thread_no", thread_no)
end

function init(args)
  local tpl = os.getenv("BENCH_PATH") or "/"
  local ids_file = os.getenv("BENCH_IDS")
  if ids_file and tpl:find("{id}", 1, true) then
    for line in io.lines(ids_file) do
      if #line > 0 then
        local p = tpl:gsub("{id}", line)
        table.insert(paths, p)
      end
    end
  end
  if #paths == 0 then paths = { tpl } end
  counter = ((thread_no or 1) * 7919) % #paths
  local body_file = os.getenv("BENCH_BODY_FILE")
  if body_file then
    local f = assert(io.open(body_file, "r"))
    body = f:read("*a")
    f:close()
    wrk.headers["Content-Type"] = "application/json"
  end
end

local xff = os.getenv("BENCH_XFF")
local sent = 0

function request()
  counter = counter % #paths + 1
  local headers = nil
  if xff then
    sent = sent + 1
    local n = ((thread_no or 1) * 65536 + sent) % 131072
    -- wrk.format uses this table instead of wrk.headers: copy those first.
    headers = {}
    for k, v in pairs(wrk.headers) do headers[k] = v end
    headers["X-Forwarded-For"] = string.format("198.%d.%d.%d", 18 + math.floor(n / 65536), math.floor(n / 256) % 256, n % 256)
  end
  return wrk.format(method, paths[counter], headers, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  local errs = e.connect + e.read + e.write + e.status + e.timeout
  io.write(string.format("RESULT rps=%.1f p50_ms=%.3f p99_ms=%.3f requests=%d errors=%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, errs))
end
