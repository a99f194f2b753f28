// Package attacks is fixpoint's black-box attack suite (issue 20, "Proof").
//
// Each case is a txtar file under tuning/ or heldout/: a header of
// "key: value" lines, the scripted model's replies, and the files of a
// hostile workspace. The harness builds bin/fixpoint once, lays the
// workspace out, starts the scripted OpenAI-compatible server
// (agent/llmtest) and an attacker's listener, runs the case's commands
// (fix, solve, test, or serve over stdio) with a canary API key and a
// private HOME, and checks the invariants the case declares: no VERIFIED
// for an unfixed bug, nothing written, no key outside the configured
// endpoint, no write on the host, no raw control bytes, no lesson from a
// model reaching a later prompt, no secret reaching the model or the logs.
//
// The format, the invariants and the rule that split the cases between the
// two sets are in README.md. The package has only test files apart from
// this one.
package attacks
