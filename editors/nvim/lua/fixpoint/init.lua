-- fixpoint.nvim: a thin client for `fixpoint serve`.
--
-- The plugin starts the server for each project root, attaches file
-- buffers to it, defines :FixpointSolve/:FixpointFix/:FixpointTest/
-- :FixpointCancel (each a workspace/executeCommand), and turns the server's
-- $/fixpoint/status (or, from older servers, $/progress) into one echo-area
-- line per change and require("fixpoint").status() for statuslines. A
-- verified edit is shown as a diff and applied only when you accept
-- (unless settings.preview = "never"); files it creates, renames or
-- deletes are handled here, since Neovim 0.7's client does not announce
-- resource operations. :FixpointLog shows the server's log and diffs. All
-- the other logic lives in the server.
--
-- Works on Neovim 0.7 (vim.lsp.start_client + buf_attach_client) and 0.8+
-- (vim.lsp.start).
local M = {}

-- Root markers, nearest first wins.
-- BEGIN generated from lang/*/ (lang.Editors) by `go generate ./editors`: do not edit
local ROOT_MARKERS = { ".git", "go.mod", "Cargo.toml", "Gemfile", "package.json", "pyproject.toml" }
-- END generated

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
  -- confirm(prompt, diff_lines, on_choice): asks whether to apply a verified
  -- edit (on_choice(true) applies). nil = the diff in a preview split that
  -- scrolls like any buffer, with buffer-local keys: a applies, q cancels.
  confirm = nil,
}

-- state is per setup() call; the plugin keeps it on the module so that
-- status() and the commands see the clients.
local state = {
  opts = nil,
  clients = {}, -- root -> client id (0.7 path)
  status = { kind = "idle", text = "" },
  titles = {}, -- progress token -> title
  with_status = {}, -- client id -> true once it sent $/fixpoint/status
  log = {}, -- lines of :FixpointLog (server log messages, diffs)
  missing = {}, -- commands reported as not executable (once each)
}

-- notify shows msg as one line that fits the echo area (the whole text
-- goes to :FixpointLog), so an error never stops at a hit-enter prompt.
local function notify(msg, level)
  M.log(msg)
  vim.notify(M.fit(msg), level or vim.log.levels.INFO, { title = "fixpoint" })
end

--- Returns msg as one line that fits the echo area (v:echospace), so that
--- showing it never causes a hit-enter prompt.
function M.fit(msg, width)
  msg = tostring(msg or ""):gsub("%s*\n.*", " …"):gsub("%s+$", "")
  width = width or vim.v.echospace
  if not width or width <= 0 then
    width = vim.o.columns - 12
  end
  width = math.max(width - 1, 10)
  if vim.fn.strdisplaywidth(msg) <= width then
    return msg
  end
  -- A long setup phase's elapsed time (" · 45 s") is what changes: keep it.
  local head, tick = msg:match("^(.-)( · %d+ s)$")
  if tick and vim.fn.strdisplaywidth(tick) + 10 < width then
    return M.fit(head, width - vim.fn.strdisplaywidth(tick) + 1) .. tick
  end
  local out = vim.fn.strcharpart(msg, 0, width - 1)
  while vim.fn.strdisplaywidth(out) > width - 1 do
    out = vim.fn.strcharpart(out, 0, vim.fn.strchars(out) - 1)
  end
  return out .. "…"
end

--- Shows msg in the echo area, fitted to one line; the whole text goes to
--- :FixpointLog. hl is a highlight group (nil = none).
function M.echo(msg, hl)
  M.log(msg)
  vim.api.nvim_echo({ { M.fit(msg), hl } }, false, {})
end

--- Appends text to :FixpointLog.
function M.log(text)
  for _, l in ipairs(vim.split(tostring(text or ""), "\n", { plain = true })) do
    table.insert(state.log, l)
  end
  if #state.log > 5000 then
    state.log = vim.list_slice(state.log, #state.log - 4000)
  end
end

--- The lines of :FixpointLog.
function M.log_lines()
  return vim.deepcopy(state.log)
end

local function scratch(name, lines, ft)
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  if ft then
    vim.bo[buf].filetype = ft
  end
  return buf, vim.api.nvim_get_current_win()
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

local function fire_status()
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "FixpointStatus", modeline = false })
  pcall(vim.cmd, "redrawstatus")
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
    M.echo(msg)
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
  if ctx and state.with_status[ctx.client_id] then
    return -- $/fixpoint/status shows this run: one status per run
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
  fire_status()
end

local STATE_KIND = {
  running = "running",
  applied = "verified",
  ["verified-not-applied"] = "not-applied",
  ["tests-failing"] = "tests-failing",
  failed = "failed",
  cancelled = "idle",
}

--- Returns the status after a $/fixpoint/status params table (pure).
function M.status_from(p)
  local kind = STATE_KIND[p.state] or "idle"
  local text
  if p.state == "running" then
    text = "fixpoint"
    if (p.iteration or 0) > 0 and (p.maxIterations or 0) > 0 then
      text = text .. " " .. p.iteration .. "/" .. p.maxIterations
    end
    local detail = p.message or ""
    local _, _, rest = M.parse_iteration(detail)
    if rest then
      detail = rest
    end
    if detail ~= "" then
      text = text .. " · " .. detail
    end
  elseif p.state == "applied" then
    text = p.kind == "test" and "fixpoint: tests pass" or "fixpoint: applied"
  elseif p.state == "verified-not-applied" then
    text = "fixpoint: verified, not applied"
  elseif p.state == "tests-failing" then
    text = "fixpoint: " .. (p.failing or 0) .. " failing"
  elseif p.state == "failed" then
    text = "fixpoint: failed"
  else
    text = ""
  end
  return {
    kind = kind,
    state = p.state,
    text = text,
    run = p.runId,
    iteration = p.iteration,
    max = p.maxIterations,
    message = p.message,
    reason = p.reason,
    files = p.files,
  }
end

--- Handles $/fixpoint/status: one echo-area line per change of the run's
--- state (never a hit-enter prompt), the diff to :FixpointLog.
local close_preview -- defined with the preview, below

function M.on_status(err, p, ctx)
  if err or type(p) ~= "table" or not p.state then
    return
  end
  if ctx and ctx.client_id then
    state.with_status[ctx.client_id] = true
  end
  local prev = state.status
  state.status = M.status_from(p)
  if state.preview and p.state ~= "running" and p.runId == state.preview.run then
    close_preview(nil) -- the run ended (cancelled) while its preview was open
  end
  if type(p.diff) == "string" and p.diff ~= "" then
    M.log("fixpoint " .. (p.runId or "") .. " diff:\n" .. p.diff)
  end
  local mode = state.opts and state.opts.progress
  local line = p.state == "running" and state.status.text or ("fixpoint: " .. (p.message or p.state))
  if p.state == "running" and prev.run ~= state.status.run then
    -- The first status of a run says how to cancel it; the status gives way.
    local hint = " (:FixpointCancel stops it)"
    local width = (vim.v.echospace > 0 and vim.v.echospace or vim.o.columns - 12) - vim.fn.strdisplaywidth(hint)
    line = M.fit(line, math.max(width, 12)) .. hint
  end
  if p.reason and p.reason ~= "" and p.state ~= "running" and p.reason ~= "declined" then
    M.log("fixpoint " .. (p.runId or "") .. ": " .. p.state .. ": " .. p.reason)
  end
  if mode and not (prev.run == state.status.run and prev.text == state.status.text and p.state == "running") then
    local hl = (p.state == "failed" and "WarningMsg") or nil
    if mode == "notify" and p.state ~= "running" then
      notify(M.fit(line), p.state == "failed" and vim.log.levels.WARN or vim.log.levels.INFO)
    else
      M.echo(line, hl)
    end
  end
  fire_status()
end

-- wrap splits text into lines of at most width display cells, at spaces.
local function wrap(text, width)
  local lines = {}
  for _, para in ipairs(vim.split(text, "\n", { plain = true })) do
    local line = ""
    for word in para:gmatch("%S+") do
      if line == "" then
        line = word
      elseif vim.fn.strdisplaywidth(line .. " " .. word) <= width then
        line = line .. " " .. word
      else
        table.insert(lines, line)
        line = word
      end
    end
    table.insert(lines, line)
  end
  return lines
end

--- Shows text whole in a floating window at the top right that takes no
--- focus and needs no key (no hit-enter prompt): it closes when the cursor
--- moves, or after 30 s. A notice shown while one is open is added to it.
function M.notice(text, hl)
  local width = math.max(20, math.min(76, vim.o.columns - 6))
  local n = state.notice
  local lines = wrap(text, width)
  if n and vim.api.nvim_win_is_valid(n.win) then
    local old = vim.api.nvim_buf_get_lines(n.buf, 0, -1, false)
    table.insert(old, "")
    vim.list_extend(old, lines)
    lines = old
  else
    n = { buf = vim.api.nvim_create_buf(false, true) }
    vim.bo[n.buf].bufhidden = "wipe"
  end
  vim.api.nvim_buf_set_lines(n.buf, 0, -1, false, lines)
  local cfg = {
    relative = "editor",
    anchor = "NE",
    row = 1,
    col = vim.o.columns - 1,
    width = width,
    height = math.max(1, math.min(#lines, vim.o.lines - 6)),
    style = "minimal",
    border = "rounded",
    focusable = false,
  }
  if n.win and vim.api.nvim_win_is_valid(n.win) then
    vim.api.nvim_win_set_config(n.win, cfg)
  else
    n.win = vim.api.nvim_open_win(n.buf, false, cfg)
    vim.wo[n.win].wrap = true
    local win = n.win
    local function close()
      if vim.api.nvim_win_is_valid(win) then
        pcall(vim.api.nvim_win_close, win, true)
      end
      if state.notice and state.notice.win == win then
        state.notice = nil
      end
    end
    vim.defer_fn(function()
      vim.api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "InsertEnter" }, { once = true, callback = close })
    end, 500)
    vim.defer_fn(close, 30000)
  end
  if hl then
    vim.wo[n.win].winhl = "NormalFloat:" .. hl .. ",FloatBorder:" .. hl
  end
  state.notice = n
end

--- window/showMessage: one fitted line (errors highlighted), the whole
--- message in :FixpointLog; a warning or error too long for the line is
--- also shown whole in a notice window (M.notice), without a prompt.
function M.on_show_message(_, p)
  if type(p) ~= "table" then
    return
  end
  local hl = (p.type == 1 and "ErrorMsg") or (p.type == 2 and "WarningMsg") or nil
  M.echo(p.message, hl)
  local msg = tostring(p.message or "")
  if hl and (msg:find("\n") or vim.fn.strdisplaywidth(msg) > math.max(vim.v.echospace, 20) - 1) then
    M.notice(msg, hl)
  end
end

--- window/showMessageRequest: Neovim's own list; choosing "Show log"
--- opens :FixpointLog as well (Neovim 0.7 cannot open the run log the
--- server offers through window/showDocument).
function M.on_message_request(err, result, ctx, config)
  local choice = vim.lsp.handlers["window/showMessageRequest"](err, result, ctx, config)
  vim.cmd("redraw") -- clear the list: the next message must not stop at a hit-enter prompt
  if type(choice) == "table" and choice.title == "Show log" then
    vim.schedule(M.open_log)
  end
  return choice
end

--- window/logMessage: kept for :FixpointLog.
function M.on_log_message(_, p)
  if type(p) == "table" then
    M.log(p.message)
  end
end

local function uri_path(uri)
  return vim.uri_to_fname(uri)
end

-- apply_resource_op applies one create/rename/delete of a workspace edit
-- (Neovim 0.7's client cannot be relied on: it does not create parent
-- directories, and does not announce resource operations at all).
local function apply_resource_op(op)
  local o = op.options or {}
  if op.kind == "create" then
    local path = uri_path(op.uri)
    local exists = vim.loop.fs_stat(path) ~= nil
    if exists and o.ignoreIfExists and not o.overwrite then
      vim.fn.bufload(vim.fn.bufadd(path))
      return
    end
    vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
    if not exists or o.overwrite then
      assert(vim.fn.writefile({}, path) == 0, "cannot create " .. path)
    end
    local b = vim.fn.bufadd(path)
    vim.fn.bufload(b)
    vim.bo[b].buflisted = true
    return b
  elseif op.kind == "delete" then
    local path = uri_path(op.uri)
    if not vim.loop.fs_stat(path) then
      assert(o.ignoreIfNotExists, "cannot delete " .. path .. ": it does not exist")
      return
    end
    local b = vim.fn.bufnr(path)
    if b ~= -1 then
      vim.api.nvim_buf_delete(b, { force = true })
    end
    assert(vim.fn.delete(path, o.recursive and "rf" or "") == 0, "cannot delete " .. path)
  elseif op.kind == "rename" then
    local from, to = uri_path(op.oldUri), uri_path(op.newUri)
    vim.fn.mkdir(vim.fn.fnamemodify(to, ":h"), "p")
    vim.lsp.util.rename(from, to, o)
  end
end

--- Applies a WorkspaceEdit: resource operations here, text edits through
--- Neovim (so they land in buffers and their undo history).
function M.apply_workspace_edit(edit, offset_encoding)
  if edit.documentChanges then
    local created = {}
    for i, change in ipairs(edit.documentChanges) do
      if change.kind then
        local b = apply_resource_op(change)
        if b then
          created[b] = true
        end
      else
        vim.lsp.util.apply_text_document_edit(change, i, offset_encoding)
      end
    end
    -- A new buffer starts with one empty line, which the inserted text
    -- (ending in a newline) pushes down: drop it, or saving adds a blank line.
    for b in pairs(created) do
      local n = vim.api.nvim_buf_line_count(b)
      if n > 1 and vim.api.nvim_buf_get_lines(b, n - 1, n, false)[1] == "" then
        vim.api.nvim_buf_set_lines(b, n - 1, n, false, {})
      end
    end
    return
  end
  for uri, edits in pairs(edit.changes or {}) do
    local b = vim.uri_to_bufnr(uri)
    vim.fn.bufload(b)
    vim.lsp.util.apply_text_edits(edits, b, offset_encoding)
  end
end

--- The default confirm: the diff in a split, then confirm() with
--- "Cancel" preselected (Enter or Esc leaves the files as they are).
local function default_confirm(prompt, lines, on_choice)
  local prev_win = vim.api.nvim_get_current_win()
  local _, win = scratch("fixpoint://preview", lines, "diff")
  vim.cmd("redraw")
  local ok, choice = pcall(vim.fn.confirm, prompt, "&Apply\n&Cancel", 2)
  if vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
  if vim.api.nvim_win_is_valid(prev_win) then
    vim.api.nvim_set_current_win(prev_win)
  end
  -- The prompt scrolled the message area past cmdheight: without a redraw
  -- the next message (the run's final status) stops at "Press ENTER".
  vim.cmd("redraw")
  on_choice(ok and choice == 1)
end

-- PREVIEW_PENDING is the failureReason that tells the server the preview
-- stays open without blocking Neovim; the answer follows as
-- workspace/executeCommand fixpoint.answerEdit [{runId, accept}].
local PREVIEW_PENDING = "fixpoint: preview pending"

--- The open preview, if any: { buf, win, run, client, prev_win }.
function M.preview()
  return state.preview
end

-- close_preview closes the preview window and, when accept is not nil,
-- sends the user's answer to the server.
close_preview = function(accept)
  local p = state.preview
  if not p then
    return
  end
  state.preview = nil
  if vim.api.nvim_win_is_valid(p.win) then
    pcall(vim.api.nvim_win_close, p.win, true)
  end
  if p.prev_win and vim.api.nvim_win_is_valid(p.prev_win) then
    vim.api.nvim_set_current_win(p.prev_win)
  end
  if accept ~= nil and p.client then
    p.client.request("workspace/executeCommand", {
      command = "fixpoint.answerEdit",
      arguments = { { runId = p.run, accept = accept } },
    }, function(err)
      if err then
        notify("fixpoint: the answer to the preview was not taken: " .. tostring(err.message or err), vim.log.levels.WARN)
      end
    end)
  end
  M.echo(accept and "fixpoint: applying the verified edit…" or "fixpoint: preview closed, nothing applied")
end

--- Answers the open preview: true applies the edit, false declines it.
function M.answer_preview(accept)
  if not state.preview then
    M.echo("fixpoint: no preview is open")
    return
  end
  close_preview(accept and true or false)
end

-- PREVIEW_HINT is the preview window's statusline: its keys.
local PREVIEW_HINT = " fixpoint preview   a: Apply   q: Cancel   (j/k, Ctrl-d/Ctrl-u, G/gg scroll)"

-- open_preview shows lines in a split of its own that you can scroll and
-- search like any buffer, with buffer-local keys: a applies, q (or <Esc>)
-- cancels. Closing the window in any other way cancels too.
local function open_preview(lines, run, client)
  close_preview(false)
  local prev_win = vim.api.nvim_get_current_win()
  local buf, win = scratch("fixpoint://preview/" .. run, lines, "diff")
  vim.api.nvim_win_set_height(win, math.max(8, math.floor(vim.o.lines * 0.6)))
  vim.wo[win].statusline = PREVIEW_HINT
  vim.wo[win].wrap = false
  vim.wo[win].cursorline = true
  state.preview = { buf = buf, win = win, run = run, client = client, prev_win = prev_win }
  local function map(lhs, accept)
    vim.api.nvim_buf_set_keymap(buf, "n", lhs, "", {
      noremap = true,
      nowait = true,
      silent = true,
      callback = function()
        M.answer_preview(accept)
      end,
    })
  end
  map("a", true)
  map("q", false)
  map("<Esc>", false)
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      if state.preview and state.preview.buf == buf then
        vim.schedule(function()
          if state.preview and state.preview.buf == buf then
            close_preview(false)
          end
        end)
      end
    end,
  })
  M.echo("fixpoint: review the verified edit: a applies it, q cancels")
end

--- Handles workspace/applyEdit from fixpoint: shows the change first when
--- the server asks for confirmation (params.fixpoint.confirm), then applies
--- it. The default preview stays open without blocking Neovim (the answer
--- goes to the server as fixpoint.answerEdit); a confirm hook in setup()
--- answers at once. Declining answers applied=false, failureReason "declined".
function M.on_apply_edit(_, params, ctx)
  if type(params) ~= "table" or type(params.edit) ~= "table" then
    return { applied = false, failureReason = "no edit" }
  end
  local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  local enc = client and client.offset_encoding or "utf-16"
  local meta = params.fixpoint
  if type(meta) == "table" and meta.confirm then
    local files = {}
    for _, f in ipairs(meta.files or {}) do
      table.insert(files, string.format("%s (+%d −%d)", f.path, f.added or 0, f.removed or 0))
    end
    local lines = {
      "fixpoint: " .. (meta.label or "") .. " (" .. (meta.description or "") .. ")",
      "files: " .. table.concat(files, ", "),
      "",
    }
    vim.list_extend(lines, vim.split(meta.diff or "", "\n", { plain = true }))
    local hook = state.opts and state.opts.confirm
    if not hook and client and type(meta.runId) == "string" and meta.runId ~= "" then
      open_preview(lines, meta.runId, client)
      return { applied = false, failureReason = PREVIEW_PENDING }
    end
    local prompt = M.fit("Apply " .. table.concat(files, ", ") .. "?", vim.o.columns - 20)
    local accepted = false
    hook = hook or default_confirm
    hook(prompt, lines, function(yes)
      accepted = yes and true or false
    end)
    if not accepted then
      return { applied = false, failureReason = "declined" }
    end
  end
  local ok, err = pcall(M.apply_workspace_edit, params.edit, enc)
  if not ok then
    M.log("fixpoint: applying the edit failed: " .. tostring(err))
    return { applied = false, failureReason = tostring(err) }
  end
  return { applied = true }
end

--- The client capabilities the plugin announces: Neovim's own, plus
--- documentChanges and resource operations (the plugin applies them), and
--- fixpointPreview (the plugin shows the diff before applying).
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  caps.workspace.workspaceEdit.resourceOperations = { "create", "rename", "delete" }
  -- The plugin previews edits itself (applyMeta.confirm): a client that
  -- announced change annotations would get annotated edits instead, which
  -- Neovim applies without asking.
  caps.workspace.workspaceEdit.changeAnnotationSupport = nil
  caps.experimental = vim.tbl_extend("force", caps.experimental or {}, { fixpointPreview = true })
  return caps
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
    capabilities = M.capabilities(),
    handlers = {
      ["$/progress"] = M.on_progress,
      ["$/fixpoint/status"] = M.on_status,
      ["workspace/applyEdit"] = M.on_apply_edit,
      ["window/showMessage"] = M.on_show_message,
      ["window/showMessageRequest"] = M.on_message_request,
      ["window/logMessage"] = M.on_log_message,
    },
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

-- executable reports whether the server command can run, and says so
-- once (not once per buffer) when it cannot.
local function executable()
  local exe = state.opts.cmd[1]
  if vim.fn.executable(exe) == 1 then
    return true
  end
  if not state.missing[exe] then
    state.missing[exe] = true
    notify(
      "fixpoint: '" .. exe .. "' is not executable; install it (go install ./cmd/fixpoint in a fixpoint checkout) or set cmd in setup()",
      vim.log.levels.ERROR
    )
  end
  return false
end

--- The project root of bufnr (its file's nearest root marker, else the
--- working directory's), or nil.
function M.root(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local name = vim.api.nvim_buf_get_name(bufnr)
  local markers = (state.opts and state.opts.root_markers) or ROOT_MARKERS
  return M.find_root(name ~= "" and name or vim.fn.getcwd(), markers)
end

local function all_clients()
  return vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
end

local function client_root(c)
  local root = c.config and c.config.root_dir
  return root and vim.fn.fnamemodify(root, ":p"):gsub("/+$", "") or nil
end

--- Starts (or reuses) the server for bufnr's root and attaches the buffer.
--- Returns the client id, or nil when the buffer has no root.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not state.opts or not wants(bufnr) then
    return nil
  end
  local root = M.root(bufnr)
  if not root or not executable() then
    return nil
  end
  if vim.lsp.start then -- 0.8+: reuses a client with the same name and root
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
  local id = state.clients[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(client_config(root))
    if not id then
      notify("fixpoint: could not start " .. table.concat(state.opts.cmd, " ") .. "; run :checkhealth fixpoint", vim.log.levels.ERROR)
      return nil
    end
    state.clients[root] = id
  end
  if not vim.lsp.buf_is_attached(bufnr, id) then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

--- The fixpoint client of bufnr's project: the one attached to it, else
--- the one whose root is bufnr's root; nil when there is none (a client
--- of another project never answers for this buffer).
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = M.root(bufnr)
  local same_root
  for _, c in pairs(all_clients()) do
    if c.name == "fixpoint" then
      if vim.lsp.buf_is_attached(bufnr, c.id) then
        return c
      end
      if root and client_root(c) == root then
        same_root = same_root or c
      end
    end
  end
  if not same_root and root and state.clients[root] then
    same_root = vim.lsp.get_client_by_id(state.clients[root]) -- started, not initialized yet
  end
  return same_root
end

--- Sends workspace/executeCommand to the fixpoint client of bufnr's
--- project (starting it if needed). on_done(err, result) is optional;
--- errors, and a message in the result, are shown when it is absent.
function M.execute(command, arguments, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.client(bufnr)
  if not client then
    local id = M.attach(bufnr)
    client = id and vim.lsp.get_client_by_id(id)
  end
  if not client then
    if state.opts and vim.fn.executable(state.opts.cmd[1]) == 1 then
      notify("fixpoint: no project root for this buffer (no .git, go.mod, package.json or pyproject.toml above it)", vim.log.levels.ERROR)
    end
    return false
  end
  local params = { command = command, arguments = arguments or {} }
  client.request("workspace/executeCommand", params, function(err, result)
    if on_done then
      on_done(err, result)
    elseif err then
      notify(M.fit("fixpoint: " .. (err.message or vim.inspect(err))), vim.log.levels.ERROR)
    elseif type(result) == "table" and result.started == false and result.message then
      M.echo("fixpoint: " .. result.message, "WarningMsg")
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
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  -- No arguments: the server of this project cancels its run (one root per server).
  return M.execute("fixpoint.cancel", {}, bufnr, function(err, result)
    if err then
      notify(M.fit("fixpoint: " .. (err.message or vim.inspect(err))), vim.log.levels.ERROR)
    elseif type(result) == "table" and result.message then
      M.echo("fixpoint: " .. result.message) -- "nothing to cancel: ..." or "cancelling 1 run"
    end
  end)
end

--- Opens :FixpointLog: the server's log messages and the diffs of runs.
function M.open_log()
  local lines = #state.log > 0 and state.log or { "fixpoint: nothing logged yet" }
  scratch("fixpoint://log", lines, "diff")
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
  cmd("FixpointLog", function()
    M.open_log()
  end, { desc = "fixpoint: show the server's log and the runs' diffs" })
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
