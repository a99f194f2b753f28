-- :checkhealth fixpoint — runs `fixpoint doctor --json` and reports each
-- check. Works with Neovim 0.7 (health#report_*) and 0.8+ (vim.health).
local M = {}

local function reporter()
  local h = vim.health
  if h and h.start then -- 0.10+
    return { start = h.start, ok = h.ok, warn = h.warn, error = h.error, info = h.info }
  elseif h and h.report_start then -- 0.8, 0.9
    return { start = h.report_start, ok = h.report_ok, warn = h.report_warn, error = h.report_error, info = h.report_info }
  end
  return { -- 0.7
    start = vim.fn["health#report_start"],
    ok = vim.fn["health#report_ok"],
    warn = vim.fn["health#report_warn"],
    error = function(msg, advice)
      vim.fn["health#report_error"](msg, advice or {})
    end,
    info = vim.fn["health#report_info"],
  }
end

--- Decodes doctor's JSON: {ok, checks = [{name, status, detail, fix}]}
--- (status ok|warn|fail|info|skip), or a bare array of checks; a check
--- with ok = true/false and no status reads as ok/fail.
function M.parse(out)
  local ok, v = pcall(vim.fn.json_decode, out)
  if not ok or type(v) ~= "table" then
    return nil
  end
  if v.checks then
    v = v.checks
  end
  if not vim.tbl_islist(v) then
    return nil
  end
  local statuses = { ok = true, warn = true, fail = true, info = true, skip = true }
  for _, c in ipairs(v) do
    if type(c) ~= "table" or type(c.name) ~= "string" then
      return nil
    end
    if not statuses[c.status] then
      c.status = c.ok == true and "ok" or "fail"
    end
  end
  return v
end

local function nonempty(s)
  return type(s) == "string" and s ~= "" and s or nil
end

function M.check()
  local r = reporter()
  local opts = require("fixpoint").options()
  r.start("fixpoint: binary")
  local bin = opts.cmd[1]
  local doctor = opts.doctor_cmd or { bin, "doctor", "--json" }
  if vim.fn.executable(doctor[1]) ~= 1 then
    r.error(
      "'" .. doctor[1] .. "' is not executable",
      { "install it: go install ./cmd/fixpoint in a fixpoint checkout (then $(go env GOPATH)/bin on PATH)", "or pass cmd = { '/path/to/fixpoint', 'serve' } to require('fixpoint').setup()" }
    )
    return
  end
  r.ok("found " .. vim.fn.exepath(doctor[1]))
  if vim.env.FIXPOINT_API_KEY == nil or vim.env.FIXPOINT_API_KEY == "" then
    r.info("FIXPOINT_API_KEY is not set (fine for local model servers such as Ollama)")
  end

  r.start("fixpoint: doctor")
  local out = vim.fn.system(doctor)
  local checks = M.parse(out)
  if not checks then
    r.error("`" .. table.concat(doctor, " ") .. "` printed no JSON (exit " .. vim.v.shell_error .. ")", { vim.trim(out):sub(1, 400) })
    return
  end
  for _, c in ipairs(checks) do
    local msg = c.name .. (nonempty(c.detail) and (": " .. c.detail) or "")
    local advice = nonempty(c.fix) and { c.fix } or {}
    if c.status == "ok" then
      r.ok(msg)
    elseif c.status == "warn" then
      r.warn(msg, advice)
    elseif c.status == "fail" then
      r.error(msg, advice)
    else
      r.info(msg .. (advice[1] and (" (" .. advice[1] .. ")") or ""))
    end
  end
end

return M
