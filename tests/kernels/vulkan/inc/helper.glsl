// Included by uses_include.comp; includes nested.glsl next to itself.
#include "nested.glsl"
uint helper(uint x) { return x + NESTED_ADD; }
