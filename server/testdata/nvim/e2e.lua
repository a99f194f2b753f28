-- Drives `fixpoint serve` from Neovim 0.7's own LSP client (headless).
-- Env: FIXPOINT_BIN, E2E_ROOT, E2E_OUT (result file, one line per check),
-- E2E_CASE (JSON: the project's file names and the marks to wait for):
--   test_file, src_file   workspace-relative paths of the test and the code
--   fixed_mark            text in src_file once the fix is applied
--   goal_line, goal       a goal comment inserted at line 0; its goal text
--   solved_mark           text in src_file once the goal is solved
local bin, root, outpath = os.getenv("FIXPOINT_BIN"), os.getenv("E2E_ROOT"), os.getenv("E2E_OUT")
local case = vim.fn.json_decode(os.getenv("E2E_CASE"))
local out = io.open(outpath, "w")
local function emit(k, v)
  out:write(k .. "\t" .. vim.fn.json_encode(v) .. "\n")
  out:flush()
end
local function finish()
  out:close()
  vim.cmd("qa!")
end
local asked = nil -- the message of a window/showMessageRequest, if any
local function fail(msg)
  if asked then msg = msg .. " (the server asked: " .. asked .. ")" end
  emit("error", msg)
  finish()
end

-- Headless Neovim 0.7 answers window/showMessageRequest with inputlist(),
-- which blocks forever: record the request, dismiss it, and stop waiting.
-- Messages are recorded too (they explain a failed run).
vim.lsp.handlers["window/showMessageRequest"] = function(_, params)
  asked = params.message
  emit("message_request", params)
  return vim.NIL
end
vim.lsp.handlers["window/showMessage"] = function(_, params)
  emit("message", params)
end

-- wait_for waits until cond() holds; false on timeout or when the server
-- asked the user something (its message is then in `asked`).
local function wait_for(ms, cond)
  return vim.wait(ms, function() return asked ~= nil or cond() end, 100) and asked == nil
end

local ok, err = pcall(function()
  local client_id = vim.lsp.start_client({
    name = "fixpoint",
    cmd = { bin, "serve" },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = "ws" } },
  })
  if not client_id then return fail("start_client failed") end
  vim.cmd("edit " .. root .. "/" .. case.test_file)
  local testbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(testbuf, client_id)
  vim.cmd("edit " .. root .. "/" .. case.src_file)
  local srcbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(srcbuf, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  if not wait_for(20000, function() return client.server_capabilities ~= nil and client.initialized end) then
    return fail("not initialized")
  end
  local function text(buf) return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") end
  local function run_command(cmd)
    local done, result = false, nil
    client.request("workspace/executeCommand", cmd, function(e, r) done = true; result = r; emit("command", { err = e, result = r }) end, srcbuf)
    vim.wait(20000, function() return done end, 20)
    return result
  end
  -- start_run executes a run command, which must start at once: the
  -- previous run may still be finishing (its diagnostics and edit, which
  -- this script waits for, come just before it lets go of the workspace),
  -- and the server then queues the new run behind it instead of refusing.
  local function start_run(cmd)
    local r = run_command(cmd)
    if type(r) ~= "table" or not r.started then
      error("run did not start: " .. vim.inspect(cmd) .. " -> " .. vim.inspect(r))
    end
  end

  -- 1. Run tests: diagnostics appear at the failing assertion.
  start_run({ command = "fixpoint.runTests", arguments = { { uri = vim.uri_from_bufnr(testbuf) } } })
  if not wait_for(180000, function() return #vim.diagnostic.get(testbuf) > 0 end) then
    return fail("no diagnostics after runTests")
  end
  local d = vim.diagnostic.get(testbuf)[1]
  emit("diagnostic", { lnum = d.lnum, source = d.source, message = d.message })

  -- 2. Code actions at the failure.
  local lsp_diags = vim.lsp.diagnostic.get_line_diagnostics(testbuf, d.lnum)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(testbuf) },
    range = { start = { line = d.lnum, character = 0 }, ["end"] = { line = d.lnum, character = 0 } },
    context = { diagnostics = lsp_diags },
  }
  local resp = client.request_sync("textDocument/codeAction", params, 10000, testbuf)
  if not resp or resp.err then return fail("codeAction: " .. vim.inspect(resp)) end
  local titles, fix = {}, nil
  for _, a in ipairs(resp.result or {}) do
    table.insert(titles, a.title .. " [" .. (a.kind or "") .. "]")
    if a.title == "Fix until tests pass" and a.kind == "quickfix" then fix = a end
  end
  emit("titles", titles)
  if not fix then return fail("no quickfix action") end

  -- 3. Execute it; Neovim's own workspace/applyEdit handler changes the buffer.
  start_run(fix.command)
  if not wait_for(240000, function() return text(srcbuf):find(case.fixed_mark, 1, true) ~= nil end) then
    return fail(case.src_file .. " buffer not changed; it is:\n" .. text(srcbuf))
  end
  emit("fixed", text(srcbuf))
  if not wait_for(30000, function() return #vim.diagnostic.get(testbuf) == 0 end) then
    return fail("diagnostics not cleared")
  end
  emit("cleared", true)

  -- 4. A goal comment solved end to end (the buffer is unsaved: the run sees it).
  vim.api.nvim_buf_set_lines(srcbuf, 0, 0, false, { case.goal_line })
  local ca = client.request_sync("textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(srcbuf) },
    range = { start = { line = 0, character = 3 }, ["end"] = { line = 0, character = 3 } },
    context = { diagnostics = {} },
  }, 10000, srcbuf)
  local solve = nil
  local goal_titles = {}
  for _, a in ipairs((ca and ca.result) or {}) do
    table.insert(goal_titles, a.title .. " [" .. (a.kind or "") .. "]")
    if a.title == "Solve goal: " .. case.goal then solve = a end
  end
  emit("goal_titles", goal_titles)
  if not solve then return fail("no Solve goal action") end
  start_run(solve.command)
  if not wait_for(240000, function() return text(srcbuf):find(case.solved_mark, 1, true) ~= nil end) then
    return fail("goal not applied; " .. case.src_file .. " is:\n" .. text(srcbuf))
  end
  emit("solved", text(srcbuf))
  emit("solved_test", text(testbuf))
  finish()
end)
if not ok then fail(tostring(err)) end
