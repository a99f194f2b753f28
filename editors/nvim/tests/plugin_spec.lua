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
  eq(n.msg, "fixpoint: a run is already in progress for this folder", "message")
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


test("the client announces resource operations and fixpointPreview", function()
  local init = find(function(m)
    return m.method == "initialize"
  end)
  local we = init.params.capabilities.workspace.workspaceEdit
  eq(we.documentChanges, true, "documentChanges")
  eq(we.resourceOperations, { "create", "rename", "delete" }, "resourceOperations")
  eq(init.params.capabilities.experimental.fixpointPreview, true, "experimental.fixpointPreview")
end)

test(":FixpointCancel with nothing running says so", function()
  local echoed = {}
  local orig = vim.api.nvim_echo
  vim.api.nvim_echo = function(chunks, ...)
    table.insert(echoed, chunks[1][1])
    return orig(chunks, ...)
  end
  vim.cmd("FixpointCancel")
  wait_for("cancel answer shown", function()
    return echoed[1]
  end)
  vim.api.nvim_echo = orig
  eq(echoed[1], "fixpoint: nothing to cancel: no fixpoint run is active", "echo")
end)

test("fit keeps messages on one line of the echo area", function()
  eq(fp.fit("short", 40), "short", "short message")
  local long = string.rep("é", 100)
  local fitted = fp.fit(long, 40)
  truthy(vim.fn.strdisplaywidth(fitted) <= 39, "fitted width " .. vim.fn.strdisplaywidth(fitted))
  eq(vim.fn.strcharpart(fitted, vim.fn.strchars(fitted) - 1), "…", "ellipsis")
  eq(fp.fit("line one\nline two", 40), "line one …", "first line only")
end)

local function preview_run(answer)
  local asked
  fp.setup({
    cmd = { "python3", fake, log },
    settings = settings,
    confirm = function(prompt, lines, on_choice)
      asked = { prompt = prompt, lines = lines }
      on_choice(answer)
    end,
  })
  local echoed = {}
  local orig = vim.api.nvim_echo
  vim.api.nvim_echo = function(chunks, ...)
    table.insert(echoed, chunks[1][1])
    return orig(chunks, ...)
  end
  vim.cmd("edit " .. vim.fn.fnameescape(project .. "/pkg/a.go"))
  fp.solve("preview")
  local n = #vim.tbl_filter(function(m)
    return m.applyResult ~= nil
  end, received())
  local result = wait_for("applyEdit answer", function()
    local all = vim.tbl_filter(function(m)
      return m.applyResult ~= nil
    end, received())
    return #all > n and all[#all] or nil
  end)
  local final = wait_for("final status", function()
    local st = fp.status_table()
    return st.state ~= "running" and st.state ~= nil and st or nil
  end)
  vim.api.nvim_echo = orig
  return asked, result.applyResult, final, echoed, n
end

test("a verified edit is previewed, and declining leaves the files alone", function()
  local asked, res, final, echoed = preview_run(false)
  echoed = vim.tbl_filter(function(e)
    return not e:find("nothing to cancel", 1, true) -- a late answer from an earlier test
  end, echoed)
  truthy(asked, "confirm was called")
  truthy(asked.prompt:find("new/dir/made.go (+1 −0)", 1, true), "prompt names the file: " .. asked.prompt)
  truthy(vim.tbl_contains(asked.lines, "+package dir"), "the diff is shown: " .. vim.inspect(asked.lines))
  eq(res, { applied = false, failureReason = "declined" }, "applyEdit answer")
  eq(vim.loop.fs_stat(project .. "/new/dir/made.go"), nil, "made.go after declining")
  eq(final.state, "verified-not-applied", "final state")
  eq(fp.status(), "fixpoint: verified, not applied", "status()")
  -- One line per change of the status, all fitting the echo area.
  eq(echoed, {
    "fixpoint 1/6 · planning (:FixpointCancel stops it)",
    "fixpoint 1/6 · running tests · 2 failed",
    "fixpoint: Verified, not applied: you declined the edit",
  }, "echoed")
end)

test("an accepted edit that creates a file in a new directory lands", function()
  local asked, res, final = preview_run(true)
  truthy(asked, "confirm was called")
  eq(res, { applied = true }, "applyEdit answer")
  local b = vim.fn.bufnr(project .. "/new/dir/made.go")
  truthy(b ~= -1, "a buffer for made.go")
  eq(vim.api.nvim_buf_get_lines(b, 0, -1, false), { "package dir" }, "made.go buffer (no extra blank line)")
  truthy(vim.loop.fs_stat(project .. "/new/dir"), "new/dir exists")
  eq(final.state, "applied", "final state")
  eq(fp.status(), "fixpoint: applied", "status()")
  truthy(vim.tbl_contains(fp.log_lines(), "+package dir"), "the diff is in :FixpointLog")
end)

test("commands go to the server of the buffer's own project", function()
  local other = vim.fn.tempname() .. "-other"
  vim.fn.mkdir(other, "p")
  vim.fn.writefile({ "module example.com/o" }, other .. "/go.mod")
  vim.fn.writefile({ "package o" }, other .. "/o.go")
  local first = fp.client(vim.fn.bufnr(project .. "/pkg/a.go"))
  -- A buffer of the second project, not attached yet (as right after :edit
  -- before FileType fires): it must not borrow the first project's server.
  local b = vim.fn.bufadd(other .. "/o.go")
  eq(fp.client(b), nil, "client of an unattached buffer of another project")
  vim.cmd("edit " .. vim.fn.fnameescape(other .. "/o.go"))
  vim.cmd("FixpointTest")
  local c = fp.client(0)
  truthy(c and c.id ~= first.id, "a second client: " .. vim.inspect({ c and c.id, first.id, c and c.config.root_dir, fp.root(0) }))
  eq(c.config.root_dir, other, "its root")
end)

test("a missing binary is reported once", function()
  notified = {}
  fp.setup({ cmd = { "/nonexistent/fixpoint", "serve" }, settings = settings })
  for _, f in ipairs({ "a.go", "b.go" }) do
    vim.cmd("edit " .. vim.fn.fnameescape(project .. "/pkg/" .. f))
    fp.attach(0)
  end
  vim.cmd("FixpointFix")
  local n = 0
  for _, m in ipairs(notified) do
    if m.msg:find("/nonexistent/fixpoint", 1, true) then
      n = n + 1
    end
  end
  eq(n, 1, "messages about the missing binary: " .. vim.inspect(notified))
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
  truthy(text:find("go install ./cmd/fixpoint in a fixpoint checkout", 1, true), "install advice in:\n" .. text)
  vim.cmd("bwipeout!")
end)

test("the default preview is a split that scrolls, with buffer-local keys; a applies through fixpoint.answerEdit", function()
  fp.setup({ cmd = { "python3", fake, log }, settings = settings })
  local sent = {}
  local client = {
    offset_encoding = "utf-16",
    request = function(method, params, handler)
      table.insert(sent, { method = method, params = params })
      handler(nil, vim.NIL)
    end,
  }
  local orig = vim.lsp.get_client_by_id
  vim.lsp.get_client_by_id = function()
    return client
  end
  local diff = { "--- a/x.go", "+++ b/x.go" }
  for i = 1, 80 do
    table.insert(diff, "+line " .. i)
  end
  local before = vim.api.nvim_get_current_win()
  local function ask()
    return fp.on_apply_edit(nil, {
      edit = { changes = {} },
      fixpoint = { runId = "run-9", confirm = true, label = "Fix", description = "verified", files = { { path = "x.go", added = 80, removed = 0 } }, diff = table.concat(diff, "\n") },
    }, { client_id = 1 })
  end
  -- Not blocked: the handler answers at once, the preview stays open.
  eq(ask(), { applied = false, failureReason = "fixpoint: preview pending" }, "applyEdit answer")
  local p = fp.preview()
  truthy(p and vim.api.nvim_win_is_valid(p.win), "a preview window")
  eq(vim.api.nvim_get_current_win(), p.win, "the preview has the focus")
  truthy(vim.wo[p.win].statusline:find("a: Apply   q: Cancel", 1, true), "the keys in its statusline")
  local maps = {}
  for _, m in ipairs(vim.api.nvim_buf_get_keymap(p.buf, "n")) do
    maps[m.lhs] = true
  end
  truthy(maps["a"] and maps["q"], "buffer-local a and q: " .. vim.inspect(vim.tbl_keys(maps)))
  -- It scrolls like any buffer.
  vim.cmd("normal! G")
  truthy(vim.fn.line("w0") > 1, "scrolled: first visible line " .. vim.fn.line("w0"))
  eq(vim.api.nvim_buf_get_lines(p.buf, -2, -1, false)[1], "+line 80", "the diff's end")
  vim.api.nvim_feedkeys("a", "x", false)
  eq(fp.preview(), nil, "closed after a")
  eq(vim.api.nvim_get_current_win(), before, "focus back")
  eq(sent[#sent], { method = "workspace/executeCommand", params = { command = "fixpoint.answerEdit", arguments = { { runId = "run-9", accept = true } } } }, "answer sent")
  -- q cancels; so does the run ending while the preview is open.
  ask()
  vim.api.nvim_feedkeys("q", "x", false)
  eq(sent[#sent].params.arguments[1].accept, false, "q declines")
  ask()
  fp.on_status(nil, { runId = "run-9", kind = "fix", state = "cancelled", message = "Cancelled" }, {})
  eq(fp.preview(), nil, "closed when its run ended")
  vim.lsp.get_client_by_id = orig
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
