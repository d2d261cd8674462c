layout(local_size_x = 1) in;
// No #version line: glslang prints its built-ins when it cannot parse them.
void main() {}
