-- fixpoint.nvim: a thin client for `fixpoint serve`.
--
-- The plugin starts the server for each project root, attaches file
-- buffers to it, defines :FixpointSolve/:FixpointFix/:FixpointTest/
-- :FixpointCancel (each a workspace/executeCommand), and turns the server's
-- $/progress into messages and require("fixpoint").status() for
-- statuslines. All the logic lives in the server.
--
-- Works on Neovim 0.7 (vim.lsp.start_client + buf_attach_client) and 0.8+
-- (vim.lsp.start).
local M = {}

-- Root markers, nearest first wins.
local ROOT_MARKERS = { ".git", "go.mod", "package.json", "pyproject.toml" }

local defaults = {
  -- The server command.
  cmd = { "fixpoint", "serve" },
  -- The doctor command for :checkhealth; nil = cmd[1] .. " doctor --json".
  doctor_cmd = nil,
  -- Server settings (keys of the "fixpoint" section: model, baseUrl, sandbox,
  -- image, maxIterations, testCmd, dataDir, memory, runtime, allowTestEdits,
  -- temperature). Sent as initializationOptions and workspace/configuration.
  -- The API key is never a setting: export FIXPOINT_API_KEY.
  settings = {},
  -- Filetypes to attach to; nil = every buffer with a file under a root.
  filetypes = nil,
  -- Markers that make a directory a project root.
  root_markers = ROOT_MARKERS,
  -- How to show progress: "echo" (echo area), "notify" (vim.notify), false.
  progress = "echo",
  -- Extra on_attach(client, bufnr).
  on_attach = nil,
}

-- state is per setup() call; the plugin keeps it on the module so that
-- status() and the commands see the clients.
local state = {
  opts = nil,
  clients = {}, -- root -> client id (0.7 path)
  status = { kind = "idle", text = "" },
  titles = {}, -- progress token -> title
}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "fixpoint" })
end

--- Returns the nearest ancestor of path (a file or directory) that holds a
--- root marker, or nil.
function M.find_root(path, markers)
  markers = markers or ROOT_MARKERS
  if not path or path == "" then
    return nil
  end
  local dir = vim.fn.fnamemodify(path, ":p")
  if vim.fn.isdirectory(dir) == 0 then
    dir = vim.fn.fnamemodify(dir, ":h")
  end
  dir = dir:gsub("/+$", "")
  if dir == "" then
    dir = "/"
  end
  while true do
    for _, m in ipairs(markers) do
      if vim.loop.fs_stat(dir .. "/" .. m) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return nil
    end
    dir = parent
  end
end

local iteration_pat = "[Ii]teration%s+(%d+)%s*/%s*(%d+)"

--- Parses "Iteration 2/6 · running tests · 3 failed" into n, max, rest.
function M.parse_iteration(message)
  if type(message) ~= "string" then
    return nil
  end
  local n, max = message:match(iteration_pat)
  if not n then
    return nil
  end
  local rest = {}
  for part in (message .. "·"):gmatch("(.-)·") do
    part = vim.trim(part)
    if part ~= "" and not part:match(iteration_pat) then
      table.insert(rest, part)
    end
  end
  return tonumber(n), tonumber(max), table.concat(rest, " · ")
end

local function lower(s)
  return (s or ""):lower()
end

--- Returns the status after a $/progress value (pure; prev is the last status).
function M.next_status(prev, value, title)
  prev = prev or { kind = "idle", text = "" }
  if value.kind == "end" then
    local msg = value.message or ""
    local l = lower(msg)
    if l:find("cancel") then
      return { kind = "idle", text = "", message = msg }
    elseif
      l:find("not verified")
      or l:find("fail")
      or l:find("error")
      or l:find("gave up")
      or l:find("budget")
      or l:find("exit code")
      or l:find("timed out")
      or l:find("out of memory")
    then
      return { kind = "failed", text = "fixpoint: failed", message = msg }
    elseif msg == "" or l:find("verified") or l:find("%f[%a]passed?%f[%A]") or l:find("applied") then
      return { kind = "verified", text = "fixpoint: verified", message = msg }
    end
    return { kind = "idle", text = "", message = msg }
  end
  local n, max, rest = M.parse_iteration(value.message)
  local iteration = n or prev.iteration
  local max_iter = max or prev.max
  local detail = n and rest or (value.message or "")
  local text = "fixpoint"
  if iteration and max_iter then
    text = text .. " " .. iteration .. "/" .. max_iter
  end
  if detail ~= "" then
    text = text .. " · " .. detail
  end
  return {
    kind = "running",
    text = text,
    iteration = iteration,
    max = max_iter,
    title = title or value.title or prev.title,
    message = value.message,
  }
end

--- The current status for statuslines: "" when idle, "fixpoint 2/6 ·
--- running tests · 3 failed" while running, "fixpoint: verified" or
--- "fixpoint: failed" after a run.
function M.status()
  return state.status.text
end

--- The current status as a table {kind, text, iteration, max, message}.
function M.status_table()
  return vim.deepcopy(state.status)
end

local function show_progress(value, status, title)
  local mode = state.opts and state.opts.progress
  if not mode then
    return
  end
  title = title and title:gsub("^fixpoint:%s*", "") or nil
  local msg
  if value.kind == "begin" then
    msg = "fixpoint: " .. (title or "running") .. (value.message and (" · " .. value.message) or "")
  elseif value.kind == "report" then
    msg = status.text
  else
    msg = "fixpoint: " .. (value.message ~= nil and value.message or status.kind)
  end
  if mode == "notify" or (value.kind == "end" and status.kind == "failed") then
    notify(msg, status.kind == "failed" and vim.log.levels.WARN or vim.log.levels.INFO)
  else
    vim.api.nvim_echo({ { msg } }, false, {})
  end
end

--- Handles $/progress from the fixpoint server (exposed for tests).
function M.on_progress(err, result, ctx, config)
  -- Keep Neovim's own bookkeeping (client.messages, LspProgressUpdate).
  local default = vim.lsp.handlers["$/progress"]
  if default and default ~= M.on_progress then
    pcall(default, err, result, ctx, config)
  end
  if err or type(result) ~= "table" or type(result.value) ~= "table" or not result.value.kind then
    return
  end
  local token, value = result.token, result.value
  if value.kind == "begin" and value.title then
    state.titles[token] = value.title
  end
  local title = state.titles[token]
  state.status = M.next_status(state.status, value, title)
  if value.kind == "end" then
    state.titles[token] = nil
  end
  show_progress(value, state.status, title)
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "FixpointStatus", modeline = false })
  pcall(vim.cmd, "redrawstatus")
end

local function client_config(root)
  local opts = state.opts
  -- An empty Lua table encodes as [] and the server wants an object.
  local settings = next(opts.settings) ~= nil and opts.settings or vim.empty_dict()
  return {
    name = "fixpoint",
    cmd = opts.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = settings,
    settings = { fixpoint = settings },
    handlers = { ["$/progress"] = M.on_progress },
    on_attach = opts.on_attach,
    on_exit = function()
      if state.clients[root] then
        state.clients[root] = nil
      end
    end,
  }
end

local function wants(bufnr)
  if vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local fts = state.opts.filetypes
  if fts then
    return vim.tbl_contains(fts, vim.bo[bufnr].filetype)
  end
  return true
end

--- Starts (or reuses) the server for bufnr's root and attaches the buffer.
--- Returns the client id, or nil when the buffer has no root.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not state.opts or not wants(bufnr) then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local root = M.find_root(name ~= "" and name or vim.fn.getcwd(), state.opts.root_markers)
  if not root then
    return nil
  end
  if vim.lsp.start then -- 0.8+: reuses a client with the same name and root
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
  local id = state.clients[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(client_config(root))
    if not id then
      notify("could not start " .. table.concat(state.opts.cmd, " ") .. "; run :checkhealth fixpoint", vim.log.levels.ERROR)
      return nil
    end
    state.clients[root] = id
  end
  if not vim.lsp.buf_is_attached(bufnr, id) then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

--- The fixpoint client for bufnr (attached, or for its root), or nil.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  local any
  for _, c in pairs(all) do
    if c.name == "fixpoint" then
      if vim.lsp.buf_is_attached(bufnr, c.id) then
        return c
      end
      any = any or c
    end
  end
  return any
end

--- Sends workspace/executeCommand to the fixpoint client of bufnr.
--- on_done(err, result) is optional; errors are shown when it is absent.
function M.execute(command, arguments, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.client(bufnr)
  if not client then
    local id = M.attach(bufnr)
    client = id and vim.lsp.get_client_by_id(id)
  end
  if not client then
    notify("no fixpoint server for this buffer (no .git, go.mod, package.json or pyproject.toml above it?)", vim.log.levels.ERROR)
    return false
  end
  local params = { command = command, arguments = arguments or {} }
  client.request("workspace/executeCommand", params, function(err, result)
    if on_done then
      on_done(err, result)
    elseif err then
      notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
    end
  end, bufnr)
  return true
end

local function buf_uri(bufnr)
  if vim.api.nvim_buf_get_name(bufnr) == "" then
    return nil
  end
  return vim.uri_from_bufnr(bufnr)
end

--- Asks the server to solve goal. range is an optional {line1, line2}
--- (1-based, inclusive), sent as an LSP range covering those lines.
function M.solve(goal, range, bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local arg = { goal = goal, uri = buf_uri(bufnr) }
  if range then
    arg.range = {
      start = { line = range[1] - 1, character = 0 },
      ["end"] = { line = range[2], character = 0 },
    }
  end
  return M.execute("fixpoint.solveGoal", { arg }, bufnr)
end

function M.fix(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return M.execute("fixpoint.fixTests", { { uri = buf_uri(bufnr) } }, bufnr)
end

function M.test(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return M.execute("fixpoint.runTests", { { uri = buf_uri(bufnr) } }, bufnr)
end

function M.cancel(bufnr)
  return M.execute("fixpoint.cancel", {}, bufnr)
end

local function define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd("FixpointSolve", function(a)
    local range = a.range > 0 and { a.line1, a.line2 } or nil
    local bufnr = vim.api.nvim_get_current_buf()
    local goal = vim.trim(a.args or "")
    if goal ~= "" then
      M.solve(goal, range, bufnr)
      return
    end
    vim.ui.input({ prompt = "fixpoint goal: " }, function(input)
      if input and vim.trim(input) ~= "" then
        M.solve(vim.trim(input), range, bufnr)
      end
    end)
  end, { nargs = "?", range = true, desc = "fixpoint: solve a goal (prompts when none is given)" })
  cmd("FixpointFix", function()
    M.fix()
  end, { desc = "fixpoint: fix until the tests pass" })
  cmd("FixpointTest", function()
    M.test()
  end, { desc = "fixpoint: run the tests in the sandbox" })
  cmd("FixpointCancel", function()
    M.cancel()
  end, { desc = "fixpoint: cancel the run" })
end

--- Configures the plugin: defines the commands and attaches file buffers
--- under a project root to `fixpoint serve`. Calling it again replaces the
--- options (running servers keep theirs until restarted).
function M.setup(opts)
  opts = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  if type(opts.cmd) == "string" then
    opts.cmd = { opts.cmd }
  end
  state.opts = opts
  define_commands()
  local group = vim.api.nvim_create_augroup("fixpoint", { clear = true })
  vim.api.nvim_create_autocmd({ "FileType", "BufEnter" }, {
    group = group,
    callback = function(ev)
      M.attach(ev.buf)
    end,
  })
  -- Buffers already open when setup runs.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_name(b) ~= "" then
      M.attach(b)
    end
  end
end

--- The options in effect (after setup), for :checkhealth.
function M.options()
  return state.opts or vim.deepcopy(defaults)
end

return M
