#version 450
// Feature test: does this glslang compile GL_KHR_cooperative_matrix?
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Buf { float16_t data[]; };
layout(set = 0, binding = 1) buffer Out { float outv[]; };
void main() {
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
  coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
  coopMatLoad(a, data, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, data, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
  c = coopMatMulAdd(a, b, c);
  coopMatStore(c, outv, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
