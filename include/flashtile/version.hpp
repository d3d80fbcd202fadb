#pragma once

namespace flashtile {
inline constexpr int kVersionMajor = 0;
inline constexpr int kVersionMinor = 5;
inline constexpr int kVersionPatch = 0;
const char* version_string();
}  // namespace flashtile
