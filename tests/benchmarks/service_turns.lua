-- wrk's load for `make bench`, service (service_bench.py): user turns, POST /dm/v1/message.
--
--   wrk -t THREADS -c CONNECTIONS -d 5s --latency -s service_turns.lua \
--       http://127.0.0.1:PORT/dm/v1/message -- SESSIONS THREADS [TEXT]
--
-- The sessions b0 .. b(SESSIONS-1) exist already (service_bench.py creates them through the
-- API and walks them to general_conversation, where an `inform` turn without the end intent
-- stays for ever: no turn of this load completes a session, so 409 session_complete never
-- comes). Each wrk thread takes its own share of the sessions (thread k: bk, b(k+THREADS),
-- ...) and sends its turns round-robin over them, so with SESSIONS = CONNECTIONS every
-- session gets the same share of the load and two threads never share one. The bodies are
-- formatted once per thread in init(); request() only hands the next one out. Every body is
-- the same size as the floor's and the peers' (service_bench.py sends the same bytes).

local next_thread = 0

function setup(thread)
   thread:set("thread_index", next_thread)
   next_thread = next_thread + 1
end

function init(args)
   local sessions = tonumber(args[1]) or 1
   local threads = tonumber(args[2]) or 1
   local text = args[3] or "시장에 같이 가려고요"
   local headers = { ["Content-Type"] = "application/json" }
   requests = {}
   for s = thread_index, sessions - 1, threads do
      local body = string.format(
         '{"session_id":"b%d","text":"%s","nlu":{"dialogue_act":"inform"}}', s, text)
      requests[#requests + 1] = wrk.format("POST", "/dm/v1/message", headers, body)
   end
   if #requests == 0 then  -- more threads than sessions: share session b0
      requests[1] = wrk.format("POST", "/dm/v1/message", headers, string.format(
         '{"session_id":"b0","text":"%s","nlu":{"dialogue_act":"inform"}}', text))
   end
   sent = 0
end

function request()
   sent = sent % #requests + 1
   return requests[sent]
end
