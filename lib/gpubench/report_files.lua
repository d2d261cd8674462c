-- gpubench.report_files: the files a report sink writes -- how each line
-- reaches the disk, and where a file lives until the run closes it.
--
-- Why: a long run that dies at cell 40 of 50 must not lose 39 cells, and a
-- rerun must not destroy the previous run's file before it has a better one.
-- So every line is written whole with one write(2) and flushed as its cell
-- finishes, into `<path>.partial` beside the target; the run's close (normal,
-- or after an error or Ctrl-C, marked "interrupted") renames it over the
-- target. A run killed outright leaves the previous file as it was and every
-- finished cell in the .partial file. "-" writes to standard output instead.

local files = {}

files.PARTIAL = ".partial"

-- Appends one whole line: a fresh append-mode handle whose buffer holds the
-- whole line, so the text reaches the file in a single write(2); a killed
-- run leaves either the whole line or none of it.
local function append_line(path, line)
  local f, err = io.open(path, "ab")
  if not f then error(("report: cannot open %s: %s"):format(path, err), 0) end
  f:setvbuf("full", #line + 64)
  local ok, werr = f:write(line)
  if not ok then f:close(); error(("report: cannot write %s: %s"):format(path, werr), 0) end
  local closed, cerr = f:close()
  if not closed then error(("report: cannot write %s: %s"):format(path, cerr), 0) end
end

-- Writes a whole file through a temporary name and a rename.
function files.write_atomic(path, text)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then error(("report: cannot create %s: %s"):format(tmp, err), 0) end
  local ok, werr = f:write(text)
  local closed, cerr = f:close()
  if not ok or not closed then
    os.remove(tmp)
    error(("report: cannot write %s: %s"):format(tmp, tostring(werr or cerr)), 0)
  end
  local renamed, rerr = os.rename(tmp, path)
  if not renamed then error(("report: cannot rename %s to %s: %s"):format(tmp, path, rerr), 0) end
end

local Writer = {}
Writer.__index = Writer

-- writer(path) -> a line writer: path "-" is standard output; any other path
-- is written as path.partial (emptied now) until finish renames it.
function files.writer(path)
  local self = setmetatable({ path = path, stdout = path == "-" }, Writer)
  if not self.stdout then
    self.side = path .. files.PARTIAL
    local f, err = io.open(self.side, "wb")
    if not f then error(("report: cannot create %s: %s"):format(self.side, err), 0) end
    f:close()
  end
  return self
end

function Writer:line(text)
  if self.finished then error(("report: %s written after close"):format(self.path), 2) end
  if self.stdout then
    io.stdout:write(text)
    io.stdout:flush()
  else
    append_line(self.side, text)
  end
end

-- finish(): the file takes its place (the rename); idempotent.
function Writer:finish()
  if self.finished then return end
  self.finished = true
  if self.stdout then return end
  local ok, err = os.rename(self.side, self.path)
  if not ok then error(("report: cannot rename %s to %s: %s"):format(self.side, self.path, err), 0) end
end

-- whole(path, text): a file written at once (Markdown): through a temporary
-- file and a rename, or to standard output for "-".
function files.whole(path, text)
  if path == "-" then
    io.stdout:write(text)
    io.stdout:flush()
  else
    files.write_atomic(path, text)
  end
end

return files
