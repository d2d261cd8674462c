#version 450
// Test kernel: buf[i] += 1 for i < n (batches count their launches with it).
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Buf { uint buf[]; };
layout(push_constant) uniform Params { uint n; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < n)
        buf[i] += 1u;
}
