#version 450
// Feature test: does this glslang compile GL_NV_cooperative_matrix2 (workgroup scope, tensor layouts, reductions)?
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) buffer Buf { float16_t data[]; };
layout(set = 0, binding = 1) buffer Out { float outv[]; };
float maxf(const in float a, const in float b) { return max(a, b); }
void main() {
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  t = setTensorLayoutDimensionNV(t, 17, 64);
  coopmat<float16_t, gl_ScopeWorkgroup, 64, 64, gl_MatrixUseA> a;
  coopMatLoadTensorNV(a, data, 0, sliceTensorLayoutNV(t, 0, 64, 0, 64));
  coopmat<float, gl_ScopeWorkgroup, 64, 64, gl_MatrixUseAccumulator> c = coopmat<float, gl_ScopeWorkgroup, 64, 64, gl_MatrixUseAccumulator>(a);
  coopmat<float, gl_ScopeWorkgroup, 64, 1, gl_MatrixUseAccumulator> r;
  coopMatReduceNV(r, c, gl_CooperativeMatrixReduceRowNV, maxf);
  coopMatStoreTensorNV(c, outv, 0, sliceTensorLayoutNV(t, 0, 64, 0, 64));
}
