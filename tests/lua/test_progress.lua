-- gpubench.progress: the text of the progress line and when it is drawn.
local t = dofile("tests/lua/harness.lua")
local progress = require "gpubench.progress"

local stream = t.text_sink

t.test("clock text", function()
  t.eq(progress.clock_text(0), "0:00")
  t.eq(progress.clock_text(7.4), "0:07")
  t.eq(progress.clock_text(725), "12:05")
  t.eq(progress.clock_text(3723), "1:02:03")
end)

t.test("line: done/total, elapsed, estimate from the average cell", function()
  t.eq(progress.format(0, 10, 0), "[0/10] 0:00 elapsed")
  -- 3 cells in 6 s: 2 s each, 7 left -> 14 s
  t.eq(progress.format(3, 10, 6, "q4 1024x1024"), "[3/10] 0:06 elapsed, ~0:14 left  q4 1024x1024")
  t.eq(progress.format(10, 10, 20), "[10/10] 0:20 elapsed")
end)

t.test("drawn with carriage returns and erased when enabled", function()
  local now = 0
  local s = stream()
  local bar = progress.new { total = 2, enabled = true, stream = s, clock = function() return now end }
  now = 4; bar:step("a")
  now = 8; bar:step("b")
  bar:finish()
  local l1, l2 = "[1/2] 0:04 elapsed, ~0:04 left  a", "[2/2] 0:08 elapsed  b"
  -- the shorter second line is padded over the first; finish blanks the line
  t.eq(s:text(), "\r" .. l1 .. "\r" .. l2 .. string.rep(" ", #l1 - #l2)
    .. "\r" .. string.rep(" ", #l2) .. "\r")
end)

t.test("silent when disabled; off by default without a terminal", function()
  local s = stream()
  local bar = progress.new { total = 1, enabled = false, stream = s }
  bar:step("x"); bar:finish()
  t.eq(s:text(), "")
  -- ctest and pipes never have a terminal on stderr, and without the gpu
  -- module there is no way to ask: both must mean "off".
  local auto = progress.new { total = 1, stream = s }
  if not (t.gpu and t.gpu.isatty and t.gpu.isatty(2)) then t.eq(auto.enabled, false) end
  t.errors(function() progress.new { total = -1 } end, "total must be an integer >= 0", true)
end)

t.run()
