// Host side shared by the sm80 forward and backward launch layers: runtime flags (head dim, dtype, causal, variants)
// to the template instantiations, and the list of head dims for messages.
#pragma once

#include "attn/fwd_params.hpp"
#include "attn/sm80_traits.hpp"

#include <string>

namespace flashtile::cuda::sm80 {

// Calls f.template operator()<D, E, Causal, Mods>() for the params' instantiation; false when none exists. A call with
// variants takes the Mods instantiation, causality folded into its window (Causal false there): one instantiation
// beside the two plain ones.
template <class F>
bool dispatch(const FwdParams& p, F&& f) {
  auto by_dtype = [&]<int D>() {
    auto by_flags = [&]<ElemType E>() {
      if (p.has_variant())
        f.template operator()<D, E, false, true>();
      else if (p.causal)
        f.template operator()<D, E, true, false>();
      else
        f.template operator()<D, E, false, false>();
    };
    if (p.dtype == ElemType::BF16)
      by_flags.template operator()<ElemType::BF16>();
    else
      by_flags.template operator()<ElemType::F16>();
  };
  switch (p.head_dim) {
    case 64: by_dtype.template operator()<64>(); return true;
    case 128: by_dtype.template operator()<128>(); return true;
    case 256: by_dtype.template operator()<256>(); return true;
    default: return false;
  }
}

// The forward's dispatch with the layout: f.template operator()<D, E, Causal, L, Mods>().
template <class F>
bool dispatch_layout(const FwdParams& p, F&& f) {
  return dispatch(p, [&]<int D, ElemType E, bool C, bool M>() {
    switch (p.layout) {
      case Layout::Paged: f.template operator()<D, E, C, Layout::Paged, M>(); break;
      case Layout::Varlen: f.template operator()<D, E, C, Layout::Varlen, M>(); break;
      default: f.template operator()<D, E, C, Layout::Dense, M>(); break;
    }
  });
}

// The split-KV decode's dispatch (dense or paged; causality is a runtime mask there): f.template operator()<D, E, L,
// Mods>().
template <class F>
bool dispatch_decode(const FwdParams& p, F&& f) {
  return dispatch(p, [&]<int D, ElemType E, bool, bool M>() {
    if (p.layout == Layout::Paged)
      f.template operator()<D, E, Layout::Paged, M>();
    else
      f.template operator()<D, E, Layout::Dense, M>();
  });
}

inline std::string head_dim_list() {
  std::string s;
  for (int d : kHeadDims) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

}  // namespace flashtile::cuda::sm80
