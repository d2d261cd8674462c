// idot_ops.glsl: SPV_KHR_integer_dot_product on packed 4x8-bit operands (last argument 0:
// PackedVectorFormat4x8Bit), for the integer-dot GEMV kernels (gemv_idot.glsl) and the MoE
// grouped shader's integer path (moe_q4k_grouped.comp). glslang 12 has no
// GL_EXT_integer_dot_product, so the three instructions are declared through
// GL_EXT_spirv_intrinsics: ids 4450 OpSDot, 4451 OpUDot, 4452 OpSUDot; capabilities 6019
// DotProduct, 6018 DotProductInput4x8BitPacked.
#ifndef IDOT_OPS_GLSL
#define IDOT_OPS_GLSL

#extension GL_EXT_spirv_intrinsics : require

spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int idot_ss(uint a, uint b, spirv_literal int fmt);  // both operands signed bytes
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4451)
uint idot_uu(uint a, uint b, spirv_literal int fmt); // both unsigned
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4452)
int idot_su(uint a, uint b, spirv_literal int fmt);  // a signed, b unsigned

#endif
