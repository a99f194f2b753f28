-- Headless tests of the fixpoint.nvim plugin itself, against a fake server
-- (tests/fake_server.py) that records what it receives. The real server's
-- end-to-end Neovim test lives with the server.
--
-- Run from editors/nvim:
--   nvim --headless -u NONE -i NONE --cmd 'set rtp+=.' -c 'luafile tests/plugin_spec.lua'
-- Exits 0 when every test passes, 1 otherwise; prints one line per test.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local fake = here .. "/fake_server.py"
local log = vim.fn.tempname() .. "-fake.jsonl"
local project = vim.fn.tempname() .. "-project"
vim.fn.mkdir(project .. "/pkg", "p")
vim.fn.writefile({ "module example.com/p", "", "go 1.22" }, project .. "/go.mod")
vim.fn.writefile({ "package pkg", "", "func A() int { return 1 }", "" }, project .. "/pkg/a.go")

local fp = require("fixpoint")
local failures, results = 0, {}
local notified = {}
vim.notify = function(msg, level)
  table.insert(notified, { msg = msg, level = level })
end

local function out(s)
  io.stdout:write("\n" .. s .. "\n")
end

local function test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    out("ok   " .. name)
  else
    failures = failures + 1
    out("FAIL " .. name .. "\n" .. tostring(err))
  end
  table.insert(results, { name = name, ok = ok })
end

local function eq(got, want, what)
  if not vim.deep_equal(got, want) then
    error(string.format("%s = %s, want %s", what or "value", vim.inspect(got), vim.inspect(want)), 2)
  end
end

local function truthy(v, what)
  if not v then
    error((what or "condition") .. " is false", 2)
  end
end

-- Messages the fake server recorded.
local function received()
  local msgs = {}
  if vim.fn.filereadable(log) == 1 then
    for _, line in ipairs(vim.fn.readfile(log)) do
      table.insert(msgs, vim.fn.json_decode(line))
    end
  end
  return msgs
end

local function find(pred)
  for _, m in ipairs(received()) do
    if pred(m) then
      return m
    end
  end
  return nil
end

local function wait_for(what, pred, ms)
  local found
  vim.wait(ms or 5000, function()
    found = pred()
    return found ~= nil and found ~= false
  end, 20)
  if not found then
    error("timed out waiting for " .. what, 2)
  end
  return found
end

local function executed(command, pred)
  return function()
    return find(function(m)
      return m.method == "workspace/executeCommand" and m.params.command == command and (not pred or pred(m.params))
    end)
  end
end

local settings = { model = "scripted", maxIterations = 3, sandbox = "none" }

test("setup defines the user commands", function()
  fp.setup({ cmd = { "python3", fake, log }, settings = settings, progress = "echo" })
  for _, c in ipairs({ "FixpointSolve", "FixpointFix", "FixpointTest", "FixpointCancel" }) do
    eq(vim.fn.exists(":" .. c), 2, ":" .. c .. " exists")
  end
end)

test("find_root finds the nearest marker", function()
  eq(fp.find_root(project .. "/pkg/a.go"), project, "find_root(pkg/a.go)")
  eq(fp.find_root(project), project, "find_root(project)")
  local bare = vim.fn.tempname() .. "-bare"
  vim.fn.mkdir(bare, "p")
  eq(fp.find_root(bare .. "/x.txt", { "no-such-marker" }), nil, "find_root without markers")
end)

test("opening a file under a root starts the server with the settings", function()
  vim.cmd("edit " .. vim.fn.fnameescape(project .. "/pkg/a.go"))
  local init = wait_for("initialize", function()
    return find(function(m)
      return m.method == "initialize"
    end)
  end)
  eq(init.params.initializationOptions, settings, "initializationOptions")
  eq(init.params.rootUri, vim.uri_from_fname(project), "rootUri")
  local cfg = wait_for("workspace/configuration answer", function()
    return find(function(m)
      return m.configuration ~= nil
    end)
  end)
  eq(cfg.configuration, { settings }, "workspace/configuration result")
  wait_for("didOpen", function()
    return find(function(m)
      return m.method == "textDocument/didOpen"
    end)
  end)
  truthy(fp.client(0), "fp.client(0)")
  eq(vim.lsp.buf_is_attached(0, fp.client(0).id), true, "buffer attached")
end)

test("a second buffer in the same root reuses the client", function()
  local first = fp.client(0).id
  vim.fn.writefile({ "package pkg" }, project .. "/pkg/b.go")
  vim.cmd("edit " .. vim.fn.fnameescape(project .. "/pkg/b.go"))
  wait_for("didOpen b.go", function()
    return find(function(m)
      return m.method == "textDocument/didOpen" and m.params.textDocument.uri:match("b%.go$")
    end)
  end)
  eq(fp.client(0).id, first, "client id")
  local n = 0
  for _, m in ipairs(received()) do
    if m.method == "initialize" then
      n = n + 1
    end
  end
  eq(n, 1, "initialize count")
  vim.cmd("edit " .. vim.fn.fnameescape(project .. "/pkg/a.go"))
end)

test(":FixpointSolve {goal} sends fixpoint.solveGoal with the buffer", function()
  vim.cmd("FixpointSolve add a --json flag")
  local m = wait_for("solveGoal", executed("fixpoint.solveGoal"))
  eq(m.params.arguments, { { goal = "add a --json flag", uri = vim.uri_from_fname(project .. "/pkg/a.go") } }, "arguments")
end)

test(":'<,'>FixpointSolve sends the range", function()
  vim.cmd("2,3FixpointSolve simplify A")
  local m = wait_for("solveGoal with range", executed("fixpoint.solveGoal", function(p)
    return p.arguments[1].goal == "simplify A"
  end))
  eq(m.params.arguments[1].range, { start = { line = 1, character = 0 }, ["end"] = { line = 3, character = 0 } }, "range")
end)

test(":FixpointSolve without a goal prompts with vim.ui.input", function()
  local prompted
  local orig = vim.ui.input
  vim.ui.input = function(opts, on_confirm)
    prompted = opts.prompt
    on_confirm("  from the prompt ")
  end
  vim.cmd("FixpointSolve")
  vim.ui.input = orig
  eq(prompted, "fixpoint goal: ", "prompt")
  wait_for("prompted goal", executed("fixpoint.solveGoal", function(p)
    return p.arguments[1].goal == "from the prompt"
  end))
end)

test("a cancelled prompt sends nothing", function()
  local orig = vim.ui.input
  vim.ui.input = function(_, on_confirm)
    on_confirm(nil)
  end
  local before = #received()
  vim.cmd("FixpointSolve")
  vim.ui.input = orig
  vim.wait(200)
  eq(#received(), before, "messages after a cancelled prompt")
end)

test("a server error is shown with vim.notify", function()
  notified = {}
  vim.cmd("FixpointSolve busy")
  local n = wait_for("error notification", function()
    return notified[1]
  end)
  eq(n.msg, "a run is already in progress for this folder", "message")
  eq(n.level, vim.log.levels.ERROR, "level")
end)

test(":FixpointFix drives status() through the progress handler", function()
  local seen = {}
  vim.api.nvim_create_autocmd("User", {
    pattern = "FixpointStatus",
    callback = function()
      table.insert(seen, fp.status())
    end,
  })
  eq(fp.status(), "", "status() before a run")
  vim.cmd("FixpointFix")
  local m = wait_for("fixTests", executed("fixpoint.fixTests"))
  eq(m.params.arguments, { { uri = vim.uri_from_fname(project .. "/pkg/a.go") } }, "arguments")
  wait_for("verified status", function()
    return fp.status_table().kind == "verified"
  end)
  eq(seen, {
    "fixpoint · starting",
    "fixpoint 1/6 · planning",
    "fixpoint 2/6 · running tests · 3 failed",
    "fixpoint: verified",
  }, "statuses")
  eq(fp.status(), "fixpoint: verified", "status()")
  eq(fp.status_table().message, "Verified", "end message")
  -- The create request was answered (Neovim's own handler).
  truthy(find(function(m2)
    return m2.id == "prog-1" and m2.method == nil and m2.error == nil
  end), "window/workDoneProgress/create answered")
end)

test(":FixpointTest and :FixpointCancel", function()
  vim.cmd("FixpointTest")
  local t = wait_for("runTests", executed("fixpoint.runTests"))
  eq(t.params.arguments, { { uri = vim.uri_from_fname(project .. "/pkg/a.go") } }, "runTests arguments")
  vim.cmd("FixpointCancel")
  local c = wait_for("cancel", executed("fixpoint.cancel"))
  eq(c.params.arguments, {}, "cancel arguments")
end)

test("next_status", function()
  local cases = {
    -- What the server sends.
    { msg = "Verified", kind = "verified" },
    { msg = "Not verified: max iterations reached", kind = "failed" },
    { msg = "Cancelled", kind = "idle" },
    { msg = "Failed: no sandbox backend answers", kind = "failed" },
    { msg = "5 passed", kind = "verified" },
    { msg = "3 passed, 1 failed", kind = "failed" },
    { msg = "4 passed, exit code 2", kind = "failed" },
    { msg = "no test report", kind = "idle" },
    { msg = "Not verified after 6 iterations: 2 tests still fail", kind = "failed" },
    { msg = "token budget exhausted", kind = "failed" },
    { msg = "Verified in 3 iterations", kind = "verified" },
    { msg = nil, kind = "verified" },
    { msg = "Canceled", kind = "idle" },
    { msg = "something else", kind = "idle" },
  }
  for _, c in ipairs(cases) do
    eq(fp.next_status({ kind = "running" }, { kind = "end", message = c.msg }).kind, c.kind, "end " .. tostring(c.msg))
  end
  local s = fp.next_status(nil, { kind = "report", message = "Iteration 4/6 · reflecting" })
  eq(s.text, "fixpoint 4/6 · reflecting", "report text")
  eq(fp.next_status(s, { kind = "report", message = "applying edit" }).text, "fixpoint 4/6 · applying edit", "kept iteration")
end)

test(":checkhealth fixpoint reports doctor's checks", function()
  -- The shape `fixpoint doctor --json` prints.
  local json = '{"ok":false,"checks":[{"name":"docker","status":"ok","detail":"engine 20.10 answers"},'
    .. '{"name":"fixpoint-sandbox-node","status":"warn","detail":"missing","fix":"fixpoint sandbox images build --lang node"},'
    .. '{"name":"model endpoint","status":"fail","detail":"401 Unauthorized","fix":"export FIXPOINT_API_KEY=..."}]}'
  fp.setup({ cmd = { "python3", fake, log }, settings = settings, doctor_cmd = { "python3", "-c", "print('" .. json .. "')" } })
  vim.cmd("checkhealth fixpoint")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  truthy(text:find("OK:? docker: engine 20.10 answers"), "OK docker line in:\n" .. text)
  truthy(text:find("ERROR:? model endpoint: 401 Unauthorized"), "ERROR model line in:\n" .. text)
  truthy(text:find("export FIXPOINT_API_KEY=...", 1, true), "fix advice in:\n" .. text)
  truthy(text:find("WARNING:? fixpoint%-sandbox%-node: missing"), "WARNING line in:\n" .. text)
  truthy(text:find("fixpoint sandbox images build --lang node", 1, true), "warn advice in:\n" .. text)
  vim.cmd("bwipeout!")
end)

test(":checkhealth fixpoint names the fix when the binary is missing", function()
  fp.setup({ cmd = { "/nonexistent/fixpoint", "serve" }, settings = settings })
  vim.cmd("checkhealth fixpoint")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  truthy(text:find("ERROR:? '/nonexistent/fixpoint' is not executable"), "ERROR line in:\n" .. text)
  truthy(text:find("go install github.com/fixpoint-dev/fixpoint/cmd/fixpoint@latest", 1, true), "install advice in:\n" .. text)
  vim.cmd("bwipeout!")
end)

-- Shut the fake server down cleanly.
for _, c in ipairs(vim.lsp.get_active_clients()) do
  c.stop()
end
vim.wait(2000, function()
  return #vim.lsp.get_active_clients() == 0
end, 20)

out(string.format("%d tests, %d failed", #results, failures))
if failures > 0 then
  vim.cmd("cquit 1")
else
  vim.cmd("qall!")
end
