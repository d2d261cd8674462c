#version 450
// Test kernel: the workgroup width is a specialization constant, so any block
// width is accepted; each thread writes the width it was specialized with.
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) writeonly buffer Out { uint outv[]; };
layout(push_constant) uniform Params { uint n; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < n)
        outv[i] = gl_WorkGroupSize.x;
}
