// Included by inc/helper.glsl, found relative to it.
#define NESTED_ADD 1000u
