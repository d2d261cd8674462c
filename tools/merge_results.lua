-- tools/merge_results.lua: the shard files of one table, written on different
-- machines (a Slurm job array, say), merged into one JSON-lines file.
--
--   gpubench tools/merge_results.lua shard-0.jsonl shard-1.jsonl shard-2.jsonl -o merged.jsonl
--
-- Refused, with a one-line message and exit status 2 (gpubench.merge): a
-- file that is not a finished gpubench run, files of different experiments,
-- options (only --shard, --device, --devices, --devices-mode and the output
-- files may differ), backends, columns or tables, shards of different splits,
-- a shard twice, a missing shard, a file without every cell of its shard.
-- The merged file is the table as one run wrote it: its cells in table order,
-- each with its device columns (device, device_name, device_uuid), the
-- environment of the first file with `sources` naming where each shard came
-- from, and shard 0/1 (so merged files can be merged again with others).

local options = require "gpubench.options"
local merge = require "gpubench.merge"

local opts = options.parse({
  name = "merge_results",
  description = "Merge the JSON-lines files of a table's shards into one file.",
  options = {
    { "output", short = "-o", type = "path", output = true, help = "The merged JSON-lines file (- for standard output)." },
    { "csv", type = "path", output = true, help = "Also write the merged table as CSV (- for standard output)." },
    { "markdown", type = "path", output = true, help = "Also write it as Markdown (- for standard output)." },
  },
  arguments = { { "files", args = "+", argname = "<shard.jsonl>", help = "The shards' --json files, any order." } },
}, arg)
if not opts.output then options.fail("merge_results: -o FILE (the merged file) is required") end

local files = {}
for i, path in ipairs(opts.files) do files[i] = merge.load(path) end
merge.same_run(files)
merge.partition(files)
for _, f in ipairs(files) do merge.complete(f) end
local m = merge.combine(files)
local cmd = { arg[0] }
for _, a in ipairs(arg) do cmd[#cmd + 1] = a end
local env = merge.env(files, { merged = { command_line = cmd, date = os.date("!%Y-%m-%dT%H:%M:%SZ") } })
merge.write { json = opts.output, csv = opts.csv, markdown = opts.markdown, env = env, merged = m }
local to = (opts.output == "-" or opts.csv == "-" or opts.markdown == "-") and io.stderr or io.stdout
to:write(("merge_results: %d shard%s of %s, %d cells (%d rows) -> %s\n"):format(#files, #files == 1 and "" or "s",
  merge.experiment(files[1].env), env.shard.cells, #m.rows, opts.output))
