-- Drives `fixpoint serve` through the shipped plugin (editors/nvim) in
-- headless Neovim 0.7, as a user would with :FixpointTest and
-- :FixpointSolve. Env: FIXPOINT_BIN, E2E_ROOT, E2E_OUT (one "key<TAB>json"
-- line per check), E2E_PLUGIN (editors/nvim).
--   1. :FixpointTest: every failing table case is a diagnostic on the same
--      line; the status ends "tests-failing".
--   2. :FixpointSolve: the verified edit is previewed (the confirm hook sees
--      the diff) and, accepted, lands: a new file (mean.go) and an edit.
-- Progress: every status change is recorded, and every echoed line must
-- fit the echo area (no hit-enter prompt).
local bin, root, outpath = os.getenv("FIXPOINT_BIN"), os.getenv("E2E_ROOT"), os.getenv("E2E_OUT")
vim.opt.runtimepath:prepend(os.getenv("E2E_PLUGIN"))
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

-- Headless Neovim answers window/showMessageRequest with inputlist(),
-- which blocks: record and dismiss.
vim.lsp.handlers["window/showMessageRequest"] = function(_, params)
  emit("message_request", params)
  return vim.NIL
end

local echoed, too_wide = {}, {}
local echo = vim.api.nvim_echo
vim.api.nvim_echo = function(chunks, history, opts)
  local text = chunks[1] and chunks[1][1] or ""
  table.insert(echoed, text)
  if text:find("\n") or vim.fn.strdisplaywidth(text) >= vim.v.echospace then
    table.insert(too_wide, { text = text, echospace = vim.v.echospace })
  end
  return echo(chunks, history, opts)
end

local fp = require("fixpoint")
local confirmed = nil
local statuses = {}
vim.api.nvim_create_autocmd("User", {
  pattern = "FixpointStatus",
  callback = function()
    local st = fp.status_table()
    local last = statuses[#statuses]
    if not last or last.text ~= st.text or last.state ~= st.state then
      table.insert(statuses, { state = st.state, text = st.text })
    end
  end,
})

local ok, err = pcall(function()
  fp.setup({
    cmd = { bin, "serve" },
    confirm = function(prompt, lines, on_choice)
      confirmed = { prompt = prompt, lines = lines }
      on_choice(true)
    end,
  })
  vim.cmd("edit " .. root .. "/stats_test.go")
  local testbuf = vim.api.nvim_get_current_buf()
  if not vim.wait(20000, function()
    local c = fp.client(testbuf)
    return c ~= nil and c.initialized
  end, 50) then
    return fail("the plugin did not start the server")
  end

  -- 1. Run the tests: each failing case is visible.
  vim.cmd("FixpointTest")
  if not vim.wait(180000, function() return #vim.diagnostic.get(testbuf) >= 2 end, 100) then
    return fail("fewer than 2 diagnostics after :FixpointTest: " .. vim.inspect(vim.diagnostic.get(testbuf))
      .. " status: " .. vim.inspect(fp.status_table()) .. " log:\n" .. table.concat(fp.log_lines(), "\n"))
  end
  local diags = {}
  for _, d in ipairs(vim.diagnostic.get(testbuf)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    table.insert(diags, { lnum = d.lnum, message = d.message, related = #(lsp.relatedInformation or {}) })
  end
  emit("diagnostics", diags)
  if not vim.wait(30000, function() return fp.status_table().state == "tests-failing" end, 50) then
    return fail("no tests-failing status: " .. vim.inspect(fp.status_table()))
  end
  emit("test_status", fp.status_table())

  -- 2. Solve a goal whose result creates a file; preview, accept, land.
  vim.cmd("FixpointSolve add Mean in mean.go")
  if not vim.wait(240000, function() return fp.status_table().state == "applied" end, 100) then
    return fail("the solve did not land: " .. vim.inspect(fp.status_table()) .. " log:\n" .. table.concat(fp.log_lines(), "\n"))
  end
  emit("confirmed", confirmed or vim.NIL)
  local mean = vim.fn.bufnr(root .. "/mean.go")
  emit("mean", mean ~= -1 and table.concat(vim.api.nvim_buf_get_lines(mean, 0, -1, false), "\n") or vim.NIL)
  local stats = vim.fn.bufnr(root .. "/stats.go")
  emit("stats", stats ~= -1 and table.concat(vim.api.nvim_buf_get_lines(stats, 0, -1, false), "\n") or vim.NIL)
  emit("final_status", fp.status_table())
  emit("statuses", statuses)
  emit("echoed", echoed)
  emit("too_wide", too_wide)
  finish()
end)
if not ok then fail(tostring(err)) end
