-- tests/lua/fake_device.lua: a device that records what is made, for the
-- launch builders' tests without a GPU (test_linear.lua, test_gemv_cuda_i8.lua):
--
--   local dev, made, freed = dofile("tests/lua/fake_device.lua")("cuda")
--
-- dev:buffer(n) returns {size = n} (kept in `made`, in order; :free() counts in
-- freed.n and marks it freed); dev:kernel(spec) returns {entry, defines}.
return function(backend)
  local made, freed = {}, { n = 0 }
  local dev = { backend = backend or "fake", name = "fake0", info = {} }
  function dev:buffer(n)
    local b = { size = n }
    function b:free() freed.n = freed.n + 1; self.freed = true end
    made[#made + 1] = b
    return b
  end
  function dev:kernel(spec) return { entry = spec.entry, defines = spec.defines, free = function() end } end
  return dev, made, freed
end
