// Package llmtest is a scripted OpenAI-compatible HTTP server for tests and
// demos. No language model is reachable from CI; this stands in for one.
//
// A [Server] listens on a real loopback port and speaks
//
//   - POST /v1/chat/completions, streaming (SSE, usage on the last chunk
//     when stream_options.include_usage is set, tool calls as per-index
//     deltas) and non-streaming;
//   - GET /v1/models;
//   - POST /v1/embeddings, with deterministic unit vectors ([Embed]).
//
// What it answers is a [Script]: ordered [Reply] values, [Rule] values that
// match on the prompt (substring or regexp, optionally only one role or the
// last message, optionally bounded uses), and a default. Each reply can
// inject a [Fault]: 429 with Retry-After, 500 or any status, a hang, a
// truncated or reset stream, a garbage body, empty choices, or Ollama's
// {"error": "..."} shape. Every request is logged ([Server.Requests]) with
// its messages, model, tools, stream flags and raw body.
//
// In a Go test:
//
//	srv := llmtest.NewServer(llmtest.Replies("first answer", "second answer"))
//	defer srv.Close()
//	cfg.Model.BaseURL = srv.URL() // ends in /v1
//
// As a process (editor end-to-end tests): cmd/llmtest-server --script F
// prints its base URL as the first line of stdout and serves until killed
// or until its stdin closes.
//
// # Script file format
//
// LoadScript reads JSON; unknown keys are errors. Durations are strings
// such as "250ms" or "5s".
//
//	{
//	  "replies": [                          // used in order, one per request no rule answers
//	    {"fault": "429", "retry_after": "1"},
//	    {"content": "path/a.go\n<<<<<<< SEARCH\n...\n=======\n...\n>>>>>>> REPLACE\n"},
//	    {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": \"a.go\"}"}]}
//	  ],
//	  "rules": [                            // checked first, in order
//	    {"contains": "REFLECT", "role": "system", "reply": {"content": "the test expects 3"}},
//	    {"regexp": "(?i)plan", "last": true, "max_uses": 1, "reply": {"content": "1. edit a.go"}},
//	    {"contains": "retry me", "replies": [{"fault": "500"}, {"content": "ok"}]}
//	  ],
//	  "default": {"content": "I give up"}, // when nothing else answers; absent = 400 error
//	  "models": ["llmtest"],                // ids for /v1/models
//	  "embedding_dims": 64,                 // /v1/embeddings vector length
//	  "no_tools": false,                    // 400 on any request offering tools
//	  "no_stream_options": false            // 400 on any request with stream_options
//	}
//
// Reply fields: content, tool_calls [{id, name, arguments}], finish_reason,
// usage {prompt_tokens, completion_tokens} (absent = estimated at ~4
// characters per token), no_usage, chunk_size (bytes per streamed chunk,
// default 16), chunk_delay (pause after each content chunk), and the fault
// fields: fault (status|429|500|hang|truncate|reset|garbage|empty_choices|
// ollama_error), status, error (message), retry_after (seconds or an HTTP
// date; default "1"), hang (duration; absent = until the client gives up).
package llmtest
