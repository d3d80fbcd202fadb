// Weak, empty cooperative-matrix variant tables: the build links before (or without) vk-coopmat's
// coopmat_paths.cpp, whose strong definitions replace these at link time. An empty table means the path is not
// listed, and plan() says "no shader variant built".
#include "kernels.hpp"

namespace flashtile::vk {

__attribute__((weak)) std::vector<ShaderVariant> coopmat_variants() { return {}; }
__attribute__((weak)) std::vector<ShaderVariant> coopmat2_variants() { return {}; }

}  // namespace flashtile::vk
