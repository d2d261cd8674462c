-- gpubench.cells: runs a table of cells -- preparation, arming, order,
-- rounds, progress, output.
--
-- Why: cera's wgpu_gemv_bench printed each cell as it ran, in one fixed
-- order, and its first kernel wore a positional penalty (docs/DESIGN.md) that
-- was published as a kernel defect. Here the whole table runs `rounds` times
-- (default 2) in the chosen order and only the last round reaches the
-- report; every cell is prepared (buffers, checks) and armed (its batches
-- built) before the first timed round, in table order, so no timed round
-- allocates; the order and the iteration scale are parameters, which is
-- what --validate (a reversed run at 5x the iterations) needs.
--
--   local tb <close> = cells.table {
--     cells = list, iters = opts.iters,
--     prepare = function(cell) return gemv_bench.prepare(...) end,
--     measure = function(p, ctx) local d = p:time(ctx.iters); return row end,
--     ready = function() bench.ready(dev) end,
--   }
--   local rows, ran = tb:run { order = opts.order, rounds = opts.rounds, sink = sink }
--   validate.run { table = tb, first = rows, ran = ran, key = "ms" }

local order = require "gpubench.order"
local progress = require "gpubench.progress"
local shard = require "gpubench.shard"

local cells = {}

-- label(cell, i): how a cell is named in messages and the validation table.
function cells.label(cell, i)
  if type(cell) == "table" then
    if cell.label ~= nil then return tostring(cell.label) end
    if cell.id ~= nil then return tostring(cell.id) end
  end
  return "cell " .. tostring(i)
end

local Table = {}
Table.__index = Table

-- table{cells =, measure =, prepare =, arm =, ready =, close =, iters =, timing =} -> table
-- prepare(cell) -> p: once per cell, in declaration order, before the first
--   timed round of the first run; p is what measure and arm receive and is
--   kept for every later run (--validate). Without prepare, p is the cell.
-- arm(p, cell, iters): builds what the timings at `iters` iterations submit;
--   the default calls p:arm(iters, timing) when p has an arm method and
--   iters is given. Every cell is armed, in declaration order, before each
--   run's first round.
-- ready(): once everything is armed, before the first timed round.
-- measure(p, ctx) returns the cell's row (a table); ctx = {cell =, round =,
--   last =, scale =, index =, iters = iters x scale (when iters is given)}.
-- close(p, cell): at table close; the default calls p:close() when present.
-- monitor: a device whose clocks are read around each cell (gpubench.clocks):
--   a cell that ran throttled is flagged "throttled".
function cells.table(o)
  if type(o) ~= "table" or type(o.cells) ~= "table" then
    error("cells.table: cells (a list) is required", 2)
  end
  if type(o.measure) ~= "function" then error("cells.table: measure must be a function", 2) end
  for _, hook in ipairs { "prepare", "arm", "ready", "close" } do
    if o[hook] ~= nil and type(o[hook]) ~= "function" then
      error(("cells.table: %s must be a function"):format(hook), 2)
    end
  end
  if o.iters ~= nil and (math.tointeger(o.iters) == nil or o.iters < 1) then
    error(("cells.table: iters must be a positive integer, got %s"):format(tostring(o.iters)), 2)
  end
  local watch = function(measure) return measure() end
  if o.monitor then watch = require("gpubench.clocks").monitor(o.monitor) end
  local positions = {}
  for i = 1, #o.cells do positions[i] = i end
  return setmetatable({ spec = o, cells = o.cells, prepared = nil, armed_scale = nil, watch = watch,
                        all_cells = o.cells, positions = positions }, Table)
end

-- shard(s): keeps only shard s ("I/N" or {index =, count =}) of the declared
-- cells (gpubench.shard: position p, 0-based, is in shard p mod N); nil keeps
-- them all. Before the first run only: prepared cells are never dropped.
-- Every row then carries `shard` ("I/N"); `cell_index` (the 1-based position
-- in the whole declared table) it carries either way.
function Table:shard(s)
  if s == nil then return end
  if self.prepared then error("cells: shard after the table was prepared", 2) end
  if self.shard_spec then error("cells: the table is sharded already", 2) end
  self.shard_spec = shard.of(s)
  self.cells, self.positions = shard.deal(self.all_cells, self.shard_spec)
end

-- shard_record() -> the environment record's `shard` (index, count, the
-- table's cells and the shard's; 0/1 when not sharded).
function Table:shard_record()
  return shard.record(self.shard_spec, #self.all_cells)
end

function Table:prepare_all()
  if self.prepared then return end
  local o = self.spec
  self.prepared = {}
  for i, cell in ipairs(self.cells) do
    self.prepared[i] = o.prepare and o.prepare(cell) or cell
  end
end

function Table:arm_all(scale)
  if self.armed_scale == scale then return end
  local o = self.spec
  local iters = o.iters and o.iters * scale
  for i, cell in ipairs(self.cells) do
    local p = self.prepared[i]
    if o.arm then
      o.arm(p, cell, iters)
    elseif iters and type(p) == "table" and type(p.arm) == "function" then
      p:arm(iters, o.timing)
    end
  end
  self.armed_scale = scale
  if o.ready then o.ready() end
end

-- run{order = "forward", seed = 1, rounds = 2, scale = 1, sink = report sink | nil,
--     progress = true | false | nil (auto), sequence = {indices}} -> rows, ran
-- Rows of the last round are added to the sink as each finishes. rows[i] is
-- the row of cells[i] (declaration order, whatever the run order); ran lists
-- the indices in the order the last round ran them. sequence: an explicit
-- list of indices to run, overriding order.
function Table:run(r)
  r = r or {}
  if self.closed then error("cells: table used after close", 2) end
  local o = self.spec
  local rounds = r.rounds or 2
  local scale = r.scale or 1
  if math.tointeger(scale) == nil or scale < 1 then
    error(("cells.run: scale must be a positive integer, got %s"):format(tostring(scale)), 2)
  end
  local idx = {}
  for i = 1, #self.cells do idx[i] = i end
  local seq = r.sequence or order.apply(r.order or "forward", idx, r.seed)
  self:prepare_all()
  self:arm_all(scale)
  local bar = progress.new { total = #seq * (math.tointeger(rounds) or 1), enabled = r.progress }
  local rows, ran
  local ok, err = pcall(order.rounds, rounds, function(round, last)
    rows, ran = {}, {}
    for _, i in ipairs(seq) do
      local cell = self.cells[i]
      local ctx = { cell = cell, round = round, last = last, scale = scale, index = i,
                    iters = o.iters and o.iters * scale }
      local row = self.watch(function() return o.measure(self.prepared[i], ctx) end)
      if type(row) ~= "table" then
        error(("cells.run: measure returned %s for %s, not a row table")
          :format(type(row), cells.label(cell, i)), 0)
      end
      if row.label == nil then row.label = cells.label(cell, self.positions[i]) end -- the name --profile takes
      row.cell_index = self.positions[i] -- merging shards (gpubench.merge) puts rows back by it
      if self.shard_spec then row.shard = shard.text(self.shard_spec) end
      rows[i] = row
      ran[#ran + 1] = i
      if last and r.sink then
        bar:clear() -- a row never shares a line with the progress text
        r.sink:add(row)
      end
      bar:step(cells.label(cell, self.positions[i]))
    end
  end)
  bar:finish() -- erase the progress line before any error message is printed
  if not ok then error(err, 0) end
  return rows, ran
end

-- special(opts [, out]) -> true when opts asked for something other than
-- the table, done. First --shard keeps the shard's cells (Table:shard), so
-- what follows sees only them; --list-cells prints every cell's name (no device work);
-- --profile NAME prepares that cell alone and runs one call of it between
-- profiler start and stop (bench Cell:profile; opts.flush the flush kind).
-- An unknown name is a usage error that says how to list the names.
function Table:special(o, out)
  out = out or io.stdout
  if o.devices ~= nil then
    -- the parent process of --devices runs no table: the experiment did not dispatch it
    error("cells: --devices is handled by gpubench.devices.dispatch(opts, meta), which this experiment "
      .. "does not call before opening its device", 0)
  end
  if o.shard ~= nil and not self.shard_spec then self:shard(o.shard) end
  if o.list_cells then
    for i, c in ipairs(self.cells) do out:write(cells.label(c, self.positions[i]), "\n") end
    return true
  end
  if not o.profile then return false end
  for i, c in ipairs(self.cells) do
    if cells.label(c, self.positions[i]) == o.profile then
      local p = self.spec.prepare and self.spec.prepare(c) or c
      local ok, err = pcall(function()
        if type(p) ~= "table" or type(p.profile) ~= "function" then
          error(("cells: %s cannot be profiled (%s)"):format(o.profile, type(p) == "table" and
            (p.skip or p.why or p.status or "it has no bench cell") or "not prepared"), 0)
        end
        p:profile(o.profile, { flush = o.flush })
      end)
      if p ~= c and type(p) == "table" and type(p.close) == "function" then p:close() end
      if not ok then error(err, 0) end
      out:write(("profiled one call of %s between profiler start and stop\n"):format(o.profile))
      return true
    end
  end
  require("gpubench.errors").usage(("--profile=%s names no cell of this table%s (--list-cells lists them)")
    :format(o.profile, self.shard_spec and (" in shard " .. shard.text(self.shard_spec)) or ""))
end

function Table:close()
  if self.closed then return end
  self.closed = true
  local o = self.spec
  local first_err
  for i, cell in ipairs(self.cells) do
    local p = self.prepared and self.prepared[i]
    if p ~= nil and p ~= cell then
      local ok, err = pcall(function()
        if o.close then o.close(p, cell)
        elseif type(p) == "table" and type(p.close) == "function" then p:close() end
      end)
      if not ok and first_err == nil then first_err = err end
    end
  end
  self.prepared = nil
  if first_err ~= nil then error(first_err, 0) end
end
Table.__close = Table.close

-- run{cells =, measure =, ... (as table), order =, rounds =, scale =, sink =,
--     shard = "I/N" | nil, ...} -> rows, ran: a table run once and closed.
function cells.run(o)
  if type(o) ~= "table" or type(o.cells) ~= "table" then
    error("cells.run: cells (a list) is required", 2)
  end
  if type(o.measure) ~= "function" then error("cells.run: measure must be a function", 2) end
  local tb <close> = cells.table(o)
  tb:shard(o.shard)
  return tb:run(o)
end

return cells
