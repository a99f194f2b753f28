-- Drives `fixpoint serve` from Neovim 0.7's own LSP client (headless).
-- Env: FIXPOINT_BIN, E2E_ROOT, E2E_OUT (result file, one line per check).
local bin, root, outpath = os.getenv("FIXPOINT_BIN"), os.getenv("E2E_ROOT"), os.getenv("E2E_OUT")
local out = io.open(outpath, "w")
local function emit(k, v)
  out:write(k .. "\t" .. vim.fn.json_encode(v) .. "\n")
  out:flush()
end
local function finish()
  out:close()
  vim.cmd("qa!")
end
local function fail(msg)
  emit("error", msg)
  finish()
end

local ok, err = pcall(function()
  local client_id = vim.lsp.start_client({
    name = "fixpoint",
    cmd = { bin, "serve" },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = "ws" } },
  })
  if not client_id then return fail("start_client failed") end
  vim.cmd("edit " .. root .. "/test_calc.py")
  local testbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(testbuf, client_id)
  vim.cmd("edit " .. root .. "/calc.py")
  local calcbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(calcbuf, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  if not vim.wait(20000, function() return client.server_capabilities ~= nil and client.initialized end, 50) then
    return fail("not initialized")
  end
  local function text(buf) return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") end
  local function run_command(cmd)
    local done = false
    client.request("workspace/executeCommand", cmd, function(e, r) done = true; emit("command", { err = e, result = r }) end, calcbuf)
    vim.wait(20000, function() return done end, 20)
  end

  -- 1. Run tests: diagnostics appear at the failing assertion.
  run_command({ command = "fixpoint.runTests", arguments = { { uri = vim.uri_from_bufnr(testbuf) } } })
  if not vim.wait(180000, function() return #vim.diagnostic.get(testbuf) > 0 end, 100) then
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
  run_command(fix.command)
  if not vim.wait(240000, function() return text(calcbuf):find("a + b", 1, true) ~= nil end, 100) then
    return fail("calc.py buffer not changed; it is:\n" .. text(calcbuf))
  end
  emit("fixed", text(calcbuf))
  if not vim.wait(30000, function() return #vim.diagnostic.get(testbuf) == 0 end, 100) then
    return fail("diagnostics not cleared")
  end
  emit("cleared", true)

  -- 4. A goal comment solved end to end (the buffer is unsaved: the run sees it).
  vim.api.nvim_buf_set_lines(calcbuf, 0, 0, false, { "# fixpoint: add a mul function" })
  local ca = client.request_sync("textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(calcbuf) },
    range = { start = { line = 0, character = 3 }, ["end"] = { line = 0, character = 3 } },
    context = { diagnostics = {} },
  }, 10000, calcbuf)
  local solve = nil
  local goal_titles = {}
  for _, a in ipairs((ca and ca.result) or {}) do
    table.insert(goal_titles, a.title .. " [" .. (a.kind or "") .. "]")
    if a.title == "Solve goal: add a mul function" then solve = a end
  end
  emit("goal_titles", goal_titles)
  if not solve then return fail("no Solve goal action") end
  run_command(solve.command)
  if not vim.wait(240000, function() return text(calcbuf):find("def mul", 1, true) ~= nil end, 100) then
    return fail("goal not applied; calc.py is:\n" .. text(calcbuf))
  end
  emit("solved", text(calcbuf))
  finish()
end)
if not ok then fail(tostring(err)) end
