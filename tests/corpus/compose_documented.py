# compose_documented.py — writes the doc-* corpus files (and the two composed
# around Codex/openai-node facts) from the event shapes the API references
# document; run once, its output is committed. Not run by the tests.
# usage: python3 tests/corpus/compose_documented.py
import json, os
R=os.path.dirname(os.path.abspath(__file__))
def sse(events, named=True, done=False, unterminated=False):
    out=[]
    for e in events:
        if isinstance(e,str): out.append(e); continue
        s=(f"event: {e['type']}\n" if named else "")+"data: "+json.dumps(e,separators=(",",":"))+"\n"
        out.append(s)
    txt="\n".join(out)+"\n"
    if done: txt+="data: [DONE]\n\n"
    return txt
def w(path, txt): open(os.path.join(R,path),"w").write(txt)

# ---------- Responses: composed from the API reference's streaming-event definitions
def resp(id, status="in_progress", output=None, usage=None, **kw):
    r={"id":id,"object":"response","created_at":1741290958,"status":status,"error":None,"incomplete_details":None,
       "model":"gpt-5-2025-08-07","output":output or [],"parallel_tool_calls":True,"usage":usage}
    r.update(kw); return r
def U(i,o,cached=0,reasoning=0):
    return {"input_tokens":i,"input_tokens_details":{"cached_tokens":cached},"output_tokens":o,
            "output_tokens_details":{"reasoning_tokens":reasoning},"total_tokens":i+o}
def msg(id,text,status="completed"):
    return {"id":id,"type":"message","status":status,"role":"assistant","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":text}]}
def text_events(seq,oi,id,parts):
    ev=[{"type":"response.output_item.added","sequence_number":seq,"output_index":oi,"item":{"id":id,"type":"message","status":"in_progress","role":"assistant","content":[]}},
        {"type":"response.content_part.added","sequence_number":seq+1,"item_id":id,"output_index":oi,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}]
    s=seq+2
    for p in parts:
        ev.append({"type":"response.output_text.delta","sequence_number":s,"item_id":id,"output_index":oi,"content_index":0,"delta":p,"logprobs":[]}); s+=1
    t="".join(parts)
    ev+= [{"type":"response.output_text.done","sequence_number":s,"item_id":id,"output_index":oi,"content_index":0,"text":t,"logprobs":[]},
          {"type":"response.content_part.done","sequence_number":s+1,"item_id":id,"output_index":oi,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":t}},
          {"type":"response.output_item.done","sequence_number":s+2,"output_index":oi,"item":msg(id,t)}]
    return ev, s+3
def fc_events(seq,oi,id,call,name,args_parts):
    a="".join(args_parts)
    ev=[{"type":"response.output_item.added","sequence_number":seq,"output_index":oi,"item":{"id":id,"type":"function_call","status":"in_progress","arguments":"","call_id":call,"name":name}}]
    s=seq+1
    for p in args_parts:
        ev.append({"type":"response.function_call_arguments.delta","sequence_number":s,"item_id":id,"output_index":oi,"delta":p}); s+=1
    item={"id":id,"type":"function_call","status":"completed","arguments":a,"call_id":call,"name":name}
    ev+=[{"type":"response.function_call_arguments.done","sequence_number":s,"item_id":id,"output_index":oi,"arguments":a},
         {"type":"response.output_item.done","sequence_number":s+1,"output_index":oi,"item":item}]
    return ev, s+2, item
def start(id): return [{"type":"response.created","sequence_number":0,"response":resp(id)},{"type":"response.in_progress","sequence_number":1,"response":resp(id)}]

# 1 basic text
ev,s=text_events(2,0,"msg_67c9fdcf37fc8190ba82116e33fb28c5","Hi there! How can I help you today?".split("x"))
ev2,s2=text_events(2,0,"msg_67c9fdcf37fc8190ba82116e33fb28c5",["Hi"," there","! How can I","  help you today?"])
t="".join(["Hi"," there","! How can I","  help you today?"])
w("responses/doc-text-deltas.sse", sse(start("resp_67c9fdcecf488190bdd9a0409de3a1ec")+ev2+[{"type":"response.completed","sequence_number":s2,"response":resp("resp_67c9fdcecf488190bdd9a0409de3a1ec","completed",[msg("msg_67c9fdcf37fc8190ba82116e33fb28c5",t)],U(37,11))}]))
# 2 text only in the output item, terminated (isolates the 'no output_text.delta' case from Codex's fixture)
w("responses/doc-text-in-item-only.sse", sse(start("resp_item_only")+[{"type":"response.output_item.done","sequence_number":2,"output_index":0,"item":msg("msg_item_only","fixture hello")},
   {"type":"response.completed","sequence_number":3,"response":resp("resp_item_only","completed",[msg("msg_item_only","fixture hello")],U(12,3))}]))
# 3 reasoning with summary + encrypted content, cache and reasoning usage
rid="rs_6876cf02e0bc8192b74af0fb64b715ff06fa2fcced15a5ac"
ritem={"id":rid,"type":"reasoning","summary":[{"type":"summary_text","text":"**Planning the answer**"}],"encrypted_content":"gAAAAABodus_encrypted_reasoning_payload=="}
ev=[{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":rid,"type":"reasoning","summary":[]}},
    {"type":"response.reasoning_summary_part.added","sequence_number":3,"item_id":rid,"output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}},
    {"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":rid,"output_index":0,"summary_index":0,"delta":"**Planning"},
    {"type":"response.reasoning_summary_text.delta","sequence_number":5,"item_id":rid,"output_index":0,"summary_index":0,"delta":" the answer**"},
    {"type":"response.reasoning_summary_text.done","sequence_number":6,"item_id":rid,"output_index":0,"summary_index":0,"text":"**Planning the answer**"},
    {"type":"response.reasoning_summary_part.done","sequence_number":7,"item_id":rid,"output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"**Planning the answer**"}},
    {"type":"response.output_item.done","sequence_number":8,"output_index":0,"item":ritem}]
tev,s=text_events(9,1,"msg_reasoned",["The answer"," is 42."])
w("responses/doc-reasoning-encrypted.sse", sse(start("resp_reasoned")+ev+tev+[{"type":"response.completed","sequence_number":s,"response":resp("resp_reasoned","completed",[ritem,msg("msg_reasoned","The answer is 42.")],U(2048,300,cached=1920,reasoning=256))}]))
# 4 function call
fev,s,item=fc_events(2,0,"fc_12345xyz","call_12345xyz","get_weather",["{\"location\":","\"Paris, France\"","}"])
w("responses/doc-function-call.sse", sse(start("resp_fc")+fev+[{"type":"response.completed","sequence_number":s,"response":resp("resp_fc","completed",[item],U(291,23))}]))
# 5 parallel function calls after text
tev,s=text_events(2,0,"msg_par",["Checking both cities."])
f1,s,i1=fc_events(s,1,"fc_a","call_a","get_weather",["{\"location\":\"Paris\"}"])
f2,s,i2=fc_events(s,2,"fc_b","call_b","get_weather",["{\"location\":","\"Bogot\u00e1\"}"])
w("responses/doc-parallel-function-calls.sse", sse(start("resp_par")+tev+f1+f2+[{"type":"response.completed","sequence_number":s,"response":resp("resp_par","completed",[msg("msg_par","Checking both cities."),i1,i2],U(310,61))}]))
# 6 response.failed
w("responses/doc-response-failed.sse", sse(start("resp_failed")+[{"type":"response.failed","sequence_number":2,"response":resp("resp_failed","failed",[],None,error={"code":"server_error","message":"The model failed to generate a response."})}]))
# 7 response.incomplete (max_output_tokens)
tev,s=text_events(2,0,"msg_inc",["Once upon"," a time"])
tev[-1]["item"]["status"]="incomplete"
w("responses/doc-incomplete.sse", sse(start("resp_inc")+tev+[{"type":"response.incomplete","sequence_number":s,"response":resp("resp_inc","incomplete",[msg("msg_inc","Once upon a time","incomplete")],U(15,16),incomplete_details={"reason":"max_output_tokens"})}]))
# 8 error event mid-stream
tev,s=text_events(2,0,"msg_err",["Partial"])
w("responses/doc-error-event.sse", sse(start("resp_err")+tev[:3]+[{"type":"error","sequence_number":5,"code":"server_error","message":"The server had an error while processing your request.","param":None}]))
# 9 refusal
rfid="msg_refusal"
ev=[{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":rfid,"type":"message","status":"in_progress","role":"assistant","content":[]}},
    {"type":"response.content_part.added","sequence_number":3,"item_id":rfid,"output_index":0,"content_index":0,"part":{"type":"refusal","refusal":""}},
    {"type":"response.refusal.delta","sequence_number":4,"item_id":rfid,"output_index":0,"content_index":0,"delta":"I'm sorry, I can't"},
    {"type":"response.refusal.delta","sequence_number":5,"item_id":rfid,"output_index":0,"content_index":0,"delta":" help with that."},
    {"type":"response.refusal.done","sequence_number":6,"item_id":rfid,"output_index":0,"content_index":0,"refusal":"I'm sorry, I can't help with that."},
    {"type":"response.content_part.done","sequence_number":7,"item_id":rfid,"output_index":0,"content_index":0,"part":{"type":"refusal","refusal":"I'm sorry, I can't help with that."}},
    {"type":"response.output_item.done","sequence_number":8,"output_index":0,"item":{"id":rfid,"type":"message","status":"completed","role":"assistant","content":[{"type":"refusal","refusal":"I'm sorry, I can't help with that."}]}}]
w("responses/doc-refusal.sse", sse(start("resp_ref")+ev+[{"type":"response.completed","sequence_number":9,"response":resp("resp_ref","completed",[ev[-1]["item"]],U(20,9))}]))
# 10 unknown events and SSE comments interleaved
tev,s=text_events(2,0,"msg_unk",["Still"," here."])
evs=start("resp_unk")+[": keep-alive\n",{"type":"response.some_future_event","sequence_number":2,"detail":{"x":1}}]+tev+[{"type":"response.output_text.annotation.added","sequence_number":90,"item_id":"msg_unk","output_index":0,"content_index":0,"annotation_index":0,"annotation":{"type":"url_citation","url":"https://example.com","title":"Example","start_index":0,"end_index":5}},
     {"type":"response.completed","sequence_number":s,"response":resp("resp_unk","completed",[msg("msg_unk","Still here.")],U(40,4))}]
w("responses/doc-unknown-events.sse", sse(evs))
# 11 usage with null details (the shape of Codex's completed_template.json)
tev,s=text_events(2,0,"msg_nd",["ok"])
w("responses/codex-usage-null-details.sse", sse(start("resp_nd")+tev+[{"type":"response.completed","sequence_number":s,"response":{"id":"resp_nd","usage":{"input_tokens":0,"input_tokens_details":None,"output_tokens":0,"output_tokens_details":None,"total_tokens":0},"output":[]}}]))
# 12 data-only events (no event: line) ending with [DONE], as openai-node's ResponseStream test serves them
tev,s=text_events(2,0,"msg_123",["Hello world"])
w("responses/node-data-only-done.sse", sse(start("resp_123")+tev+[{"type":"response.completed","sequence_number":s,"response":resp("resp_123","completed",[msg("msg_123","Hello world")],U(5,2))}], named=False, done=True))
# 13 non-streaming body
w("responses/doc-body-text.json", json.dumps(resp("resp_body","completed",[msg("msg_body","Body reply.")],U(30,5,cached=0,reasoning=0))))
# 14 non-streaming body with function call + reasoning
w("responses/doc-body-function-call.json", json.dumps(resp("resp_bfc","completed",[{"id":"rs_b","type":"reasoning","summary":[],"encrypted_content":"gAAAAB_body"},{"id":"fc_b","type":"function_call","status":"completed","arguments":"{\"location\":\"Boston, MA\"}","call_id":"call_body","name":"get_current_weather"}],U(80,40,cached=64,reasoning=24))))

# ---------- Anthropic: composed from the Messages streaming reference (docs.claude.com/en/docs/build-with-claude/streaming)
def ms(id,usage): return {"type":"message_start","message":{"id":id,"type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":None,"stop_sequence":None,"usage":usage}}
def blk(i,b): return {"type":"content_block_start","index":i,"content_block":b}
def d(i,dl): return {"type":"content_block_delta","index":i,"delta":dl}
def stop(i): return {"type":"content_block_stop","index":i}
def md(sr,usage): return {"type":"message_delta","delta":{"stop_reason":sr,"stop_sequence":None},"usage":usage}
END={"type":"message_stop"}
w("anthropic/doc-thinking-tool-use.sse", sse([ms("msg_doc_think",{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}),
  blk(0,{"type":"thinking","thinking":"","signature":""}), d(0,{"type":"thinking_delta","thinking":"I need the weather"}), d(0,{"type":"thinking_delta","thinking":" in Paris first."}),
  d(0,{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}), stop(0),
  blk(1,{"type":"tool_use","id":"toolu_doc_think_1","name":"get_weather","input":{}}), d(1,{"type":"input_json_delta","partial_json":"{\"location\": "}), d(1,{"type":"input_json_delta","partial_json":"\"Paris\"}"}), stop(1),
  md("tool_use",{"output_tokens":89}), END]))
w("anthropic/doc-redacted-thinking.sse", sse([ms("msg_doc_redacted",{"input_tokens":90,"output_tokens":1}),
  blk(0,{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"}), stop(0),
  blk(1,{"type":"tool_use","id":"toolu_doc_redacted_1","name":"lookup","input":{}}), d(1,{"type":"input_json_delta","partial_json":"{\"q\":\"x\"}"}), stop(1),
  md("tool_use",{"output_tokens":30}), END]))
w("anthropic/doc-error-midstream.sse", sse([ms("msg_doc_err",{"input_tokens":10,"output_tokens":1}), blk(0,{"type":"text","text":""}), d(0,{"type":"text_delta","text":"Hel"}),
  {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}]))
w("anthropic/doc-unknown-events.sse", sse([ms("msg_doc_unk",{"input_tokens":8,"output_tokens":1}), {"type":"ping"}, {"type":"some_future_event","data":{"x":1}},
  blk(0,{"type":"text","text":""}), d(0,{"type":"text_delta","text":"Fine"}), d(0,{"type":"some_future_delta","value":"ignored"}), d(0,{"type":"text_delta","text":" anyway."}), stop(0),
  {"type":"ping"}, md("end_turn",{"output_tokens":5}), END]))
w("anthropic/doc-citations-web-search.sse", sse([ms("msg_doc_cite",{"input_tokens":2679,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":3}),
  blk(0,{"type":"text","text":""}), d(0,{"type":"text_delta","text":"I'll search."}), stop(0),
  blk(1,{"type":"server_tool_use","id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB","name":"web_search","input":{}}), d(1,{"type":"input_json_delta","partial_json":"{\"query\": \"weather NYC today\"}"}), stop(1),
  blk(2,{"type":"web_search_tool_result","tool_use_id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB","content":[{"type":"web_search_result","title":"Weather in New York City","url":"https://weather.example.com/nyc","encrypted_content":"EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y","page_age":None}]}), stop(2),
  blk(3,{"type":"text","text":"","citations":[]}), d(3,{"type":"citations_delta","citation":{"type":"web_search_result_location","cited_text":"Partly cloudy, 68F.","url":"https://weather.example.com/nyc","title":"Weather in New York City","encrypted_index":"Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm"}}),
  d(3,{"type":"text_delta","text":"It is partly cloudy and 68F."}), stop(3),
  md("end_turn",{"input_tokens":10682,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":510,"server_tool_use":{"web_search_requests":1}}), END]))
w("anthropic/doc-null-usage-delta.sse", sse([ms("msg_doc_null",{"input_tokens":1200,"cache_creation_input_tokens":300,"cache_read_input_tokens":4000,"output_tokens":1}),
  blk(0,{"type":"text","text":""}), d(0,{"type":"text_delta","text":"Cached."}), stop(0),
  md("end_turn",{"input_tokens":None,"cache_creation_input_tokens":None,"cache_read_input_tokens":None,"output_tokens":12,"server_tool_use":None}), END]))
w("anthropic/doc-parallel-tool-use.sse", sse([ms("msg_doc_par",{"input_tokens":500,"output_tokens":1}),
  blk(0,{"type":"tool_use","id":"toolu_par_1","name":"get_weather","input":{}}), d(0,{"type":"input_json_delta","partial_json":"{\"location\": \"Paris\"}"}), stop(0),
  blk(1,{"type":"tool_use","id":"toolu_par_2","name":"get_time","input":{}}), d(1,{"type":"input_json_delta","partial_json":""}), stop(1),
  md("tool_use",{"output_tokens":70}), END]))

# ---------- Chat: composed from the Chat Completions streaming reference (platform.openai.com/docs/api-reference/chat-streaming)
def ch(delta,fr=None,usage=None,choices=True):
    c={"id":"chatcmpl-doc","object":"chat.completion.chunk","created":1727346180,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_doc","choices":[{"index":0,"delta":delta,"logprobs":None,"finish_reason":fr}] if choices else []}
    if usage is not None: c["usage"]=usage
    return c
w("chat/doc-parallel-tool-calls.sse", sse([ch({"role":"assistant","content":None,"tool_calls":[{"index":0,"id":"call_p1","type":"function","function":{"name":"get_weather","arguments":""}}]}),
  ch({"tool_calls":[{"index":0,"function":{"arguments":"{\"location\": \"Paris\"}"}}]}),
  ch({"tool_calls":[{"index":1,"id":"call_p2","type":"function","function":{"name":"get_weather","arguments":""}}]}),
  ch({"tool_calls":[{"index":1,"function":{"arguments":"{\"location\":"}}]}), ch({"tool_calls":[{"index":1,"function":{"arguments":" \"Tokyo\"}"}}]}),
  ch({},"tool_calls"), ch(None,usage={"prompt_tokens":80,"completion_tokens":40,"total_tokens":120},choices=False)], named=False, done=True))
w("chat/doc-usage-cache-reasoning.sse", sse([ch({"role":"assistant","content":""}), ch({"content":"Done thinking."}), ch({},"stop"),
  ch(None,usage={"prompt_tokens":1500,"completion_tokens":320,"total_tokens":1820,"prompt_tokens_details":{"cached_tokens":1280,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":256,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},choices=False)], named=False, done=True))
w("chat/doc-midstream-error.sse", sse([ch({"role":"assistant","content":""}), ch({"content":"Part"}), {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":None,"code":None}}], named=False))
w("chat/doc-body-tool-calls.json", json.dumps({"id":"chatcmpl-body","object":"chat.completion","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":None,"tool_calls":[{"id":"call_body_1","type":"function","function":{"name":"get_current_weather","arguments":"{\"location\": \"Boston, MA\"}"}}],"refusal":None,"annotations":[]},"logprobs":None,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default"}))
w("chat/doc-body-text.json", json.dumps({"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion","created":1741569952,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! How can I assist you today?","refusal":None,"annotations":[]},"logprobs":None,"finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default"}))
# 15 reasoning item (encrypted) then a function call: the next request must carry the reasoning back
ritem={"id":"rs_fc1","type":"reasoning","summary":[{"type":"summary_text","text":"Need the weather."}],"encrypted_content":"gAAAAABreasoning_before_call=="}
ev=[{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_fc1","type":"reasoning","summary":[]}},
    {"type":"response.reasoning_summary_text.delta","sequence_number":3,"item_id":"rs_fc1","output_index":0,"summary_index":0,"delta":"Need the weather."},
    {"type":"response.output_item.done","sequence_number":4,"output_index":0,"item":ritem}]
fev,s,item=fc_events(5,1,"fc_r1","call_r1","get_weather",["{\"location\":\"Oslo\"}"])
w("responses/doc-reasoning-function-call.sse", sse(start("resp_rfc")+ev+fev+[{"type":"response.completed","sequence_number":s,"response":resp("resp_rfc","completed",[ritem,item],U(500,120,cached=256,reasoning=96))}]))
