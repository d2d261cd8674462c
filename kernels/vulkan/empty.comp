#version 450
// The empty kernel: what a timer measures around a launch that does no work
// (gpubench.bench's fixed cost of a cold sample). One buffer, as real
// kernels have, so the launch binds a descriptor set.
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Out { uint out_[]; };
layout(push_constant) uniform Params { uint never; };
void main() {
    if (never == 0xffffffffu) out_[0] = 0u;
}
