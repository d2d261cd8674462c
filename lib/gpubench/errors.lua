-- gpubench.errors: the error object that ends a run with a chosen exit status.
--
-- A bad option value must stop the program with status 2 and a one-line
-- message naming the key and the value, before any device work (in cera's
-- wgpu_gemv_bench a mistyped ITERS=100O silently re-measured the default, so
-- an ITERS sweep came back looking ITERS-independent). cli/main.c prints only `message` for such
-- an object and exits with `gpubench_exit`; under a stock interpreter the
-- __tostring keeps the message readable.

local errors = {}

local mt = {
  __tostring = function(e) return e.message end,
}

-- An error object; `printed` marks one whose text was already written (--help).
function errors.exit_error(status, message, printed)
  return setmetatable({ gpubench_exit = status, message = message, printed = printed }, mt)
end

-- Raises a usage error (exit status 2).
function errors.usage(message)
  error(errors.exit_error(2, message), 0)
end

-- True when e is an exit-status error object.
function errors.is_exit(e)
  return type(e) == "table" and math.type(e.gpubench_exit) == "integer"
end

-- The text of any error value.
function errors.text(e)
  if type(e) == "table" and e.message ~= nil then return tostring(e.message) end
  return tostring(e)
end

return errors
