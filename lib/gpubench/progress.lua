-- gpubench.progress: a one-line "cells done / total, elapsed, estimate" on
-- stderr while a table runs.
--
-- Why: a table of cold-cache cells can run for minutes, and a run that looks
-- hung gets killed. The line is drawn only when stderr is a terminal
-- (gpu.isatty(2)), so logs, pipes and CSV captures never receive carriage
-- returns, and it goes to stderr so it never mixes with the table on stdout.

local progress = {}

local function isatty_stderr()
  local ok, gpu = pcall(require, "gpu")
  if not ok or type(gpu) ~= "table" or type(gpu.isatty) ~= "function" then return false end
  local ok2, tty = pcall(gpu.isatty, 2)
  return ok2 and tty == true
end

local function now()
  local ok, gpu = pcall(require, "gpu")
  if ok and type(gpu) == "table" and type(gpu.clock) == "function" then return gpu.clock() end
  return os.time() -- whole seconds: good enough for an estimate without the gpu module
end

-- clock_text(seconds) -> "0:07", "12:05", "1:02:03"
function progress.clock_text(s)
  s = math.max(0, math.floor(s + 0.5))
  local h, m, sec = s // 3600, (s // 60) % 60, s % 60
  if h > 0 then return ("%d:%02d:%02d"):format(h, m, sec) end
  return ("%d:%02d"):format(m, sec)
end

-- format(done, total, elapsed [, label]) -> the line's text. The estimate
-- assumes the remaining cells cost the average of the finished ones.
function progress.format(done, total, elapsed, label)
  local text = ("[%d/%d] %s elapsed"):format(done, total, progress.clock_text(elapsed))
  if done > 0 and done < total then
    text = text .. (", ~%s left"):format(progress.clock_text(elapsed / done * (total - done)))
  end
  if label and label ~= "" then text = text .. "  " .. label end
  return text
end

local Bar = {}
Bar.__index = Bar

-- new{total =, enabled = (default: stderr is a terminal), stream = io.stderr,
--     clock = function() -> seconds}
function progress.new(o)
  o = o or {}
  if math.tointeger(o.total) == nil or o.total < 0 then
    error(("progress.new: total must be an integer >= 0, got %s"):format(tostring(o.total)), 2)
  end
  local enabled = o.enabled
  if enabled == nil then enabled = isatty_stderr() end
  local clock = o.clock or now
  return setmetatable({
    total = o.total, done = 0, enabled = enabled, stream = o.stream or io.stderr,
    clock = clock, t0 = clock(), width = 0,
  }, Bar)
end

function Bar:draw(label)
  if not self.enabled then return end
  local text = progress.format(self.done, self.total, self.clock() - self.t0, label)
  -- Pad over the previous, possibly longer, line.
  local padded = text .. string.rep(" ", math.max(0, self.width - #text))
  self.width = #text
  self.stream:write("\r", padded)
  self.stream:flush()
end

-- step([label]): one more cell done; label names the next or finished cell.
function Bar:step(label)
  self.done = self.done + 1
  self:draw(label)
end

-- clear(): erases the line until the next step draws it again, so that
-- whatever is printed next (a table row on stdout, to the same terminal)
-- starts on a clean line instead of after the progress text.
function Bar:clear()
  if not self.enabled or self.width == 0 then return end
  self.stream:write("\r", string.rep(" ", self.width), "\r")
  self.stream:flush()
  self.width = 0
end

-- finish(): erases the line.
Bar.finish = Bar.clear

return progress
