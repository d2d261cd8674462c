#version 450
// Test kernel: line 7 uses an undeclared identifier, so compiling it must fail
// with a message naming this file and line 7.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint outv[]; };
void main() {
    outv[gl_GlobalInvocationID.x] = undeclared_value;
}
