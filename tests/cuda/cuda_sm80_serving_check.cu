// Standalone check of the sm80 forward's serving layouts, below the library: FwdParams straight into sm80_fwd_launch.
// Paged KV caches (shuffled pages, page sizes 16/64/256, NaN in every slot no sequence owns and in unused pages, the
// append of k_new / v_new, empty sequences, more query rows than keys), packed varlen batches (lengths 1, 17, 300,
// 0), and decode shapes (Sq 1 and 16, Sk up to 8192) through the split-KV path; GQA 1/4/8, causal or not, against a
// host double reference. Hostile tables (entries and lengths out of range) must run without a fault.
// Built a second time as sm90_serving_check (FT_SERVING_SM90): the same cases through sm90_fwd_launch, those the sm90
// family refuses (paged K/V past decode shapes) skipped with its reason.
//   cuda_sm80_serving_check [--small] [--time]
//     --small: a few small cases plus the hostile ones, for compute-sanitizer
//     --time:  GB/s (K+V+Q+O bytes) of decode shapes, Sq 1, Hq 32, Hkv 8, d 128, bf16, dense and paged (64)
// Exit: 0 all passed, 1 a case failed, 2 a CUDA error, 77 no CUDA device (skipped).
#include "attn/fwd_params.hpp"
#include "sm80_check_util.cuh"
#include "tile/constants.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using flashtile::cuda::Layout;
using namespace ftcheck;

namespace {

// The kernel family under test: sm80, or sm90 where sm90_serving_check.cu defines FT_SERVING_SM90 (the family's
// object library is all it links against).
namespace fam {
#ifdef FT_SERVING_SM90
constexpr bool kSm90 = true;
inline std::string supports(const FwdParams& p) { return flashtile::cuda::sm90_fwd_supports(p); }
inline std::size_t workspace(const FwdParams& p) { return flashtile::cuda::sm90_fwd_workspace(p); }
inline void run(const FwdParams& p) { flashtile::cuda::sm90_fwd_launch(p); }
inline std::string name(const FwdParams& p) { return flashtile::cuda::sm90_fwd_name(p); }
#else
constexpr bool kSm90 = false;
inline std::string supports(const FwdParams& p) { return flashtile::cuda::sm80_fwd_supports(p); }
inline std::size_t workspace(const FwdParams& p) { return flashtile::cuda::sm80_fwd_workspace(p); }
inline void run(const FwdParams& p) { flashtile::cuda::sm80_fwd_launch(p); }
inline std::string name(const FwdParams& p) { return flashtile::cuda::sm80_fwd_name(p); }
#endif
}  // namespace fam

using Vec16 = std::vector<std::uint16_t>;

struct SCase {
  Layout layout;
  int b, sq, hq, hkv, d;
  ElemType dt;
  bool causal;
  int page_size = 0, s_new = 0;  // paged
  std::vector<int> lens;         // paged: keys in the cache before the call; varlen: query rows
  std::vector<int> lens_k;       // varlen: keys; dense: {Sk}
};

std::string describe(const SCase& c) {
  const char* lay = c.layout == Layout::Paged ? "paged" : c.layout == Layout::Varlen ? "varlen" : "dense";
  std::string s = std::string(lay) + " d=" + std::to_string(c.d) + (c.dt == ElemType::BF16 ? " bf16" : " f16") +
                  (c.causal ? " causal" : " full  ") + " B=" + std::to_string(c.b) + " Sq=" + std::to_string(c.sq) +
                  " H=" + std::to_string(c.hq) + "/" + std::to_string(c.hkv);
  if (c.layout == Layout::Paged) s += " page=" + std::to_string(c.page_size) + " new=" + std::to_string(c.s_new);
  s += " lens=";
  for (int x : c.lens) s += std::to_string(x) + ",";
  if (!c.lens_k.empty()) s += " k=";
  for (int x : c.lens_k) s += std::to_string(x) + ",";
  return s;
}

Vec16 random16(std::size_t n, ElemType t, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.f, 1.f);
  Vec16 v(n);
  for (auto& x : v) x = to16(nd(rng), t);
  return v;
}

// The reference's view of one call: per-sequence lengths and element accessors (b, row, head, e).
struct Problem {
  int B, Hq, Hkv, D;
  bool causal;
  double scale;
  std::function<int(int)> sq, sk;
  std::function<float(int, int, int, int)> q, k, v, out;
  std::function<float(int, int, int)> lse;  // the kernel's LSE of (b, h, i)
};

struct Outcome {
  double err_o = 0, err_lse = 0;
  bool nan = false;
  std::string skipped;  // the sm90 family refused the case: why
};

Outcome reference_check(const Problem& P) {
  const int G = P.Hq / P.Hkv, D = P.D, n = P.B * P.Hq;
  std::vector<double> num(n), den(n), lnum(n), lden(n);
  std::vector<char> bad(n, 0);
  parallel_for(n, [&](int bh) {
    const int b = bh / P.Hq, h = bh % P.Hq, hk = h / G, Sq = P.sq(b), Sk = P.sk(b);
    std::vector<double> K(std::size_t(Sk) * D), V(K.size()), s(Sk), acc(D);
    for (int j = 0; j < Sk; ++j)
      for (int e = 0; e < D; ++e) K[std::size_t(j) * D + e] = P.k(b, j, hk, e), V[std::size_t(j) * D + e] = P.v(b, j, hk, e);
    for (int i = 0; i < Sq; ++i) {
      const std::int64_t last = P.causal ? std::int64_t(i) + Sk - Sq : std::int64_t(Sk) - 1;
      std::vector<double> qrow(D);
      for (int e = 0; e < D; ++e) qrow[e] = P.q(b, i, h, e);
      double mx = -INFINITY, l = 0;
      for (int j = 0; j < Sk && j <= last; ++j) {
        double dot = 0;
        for (int e = 0; e < D; ++e) dot += qrow[e] * K[std::size_t(j) * D + e];
        s[j] = dot * P.scale;
        mx = std::max(mx, s[j]);
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int j = 0; j < Sk && j <= last; ++j) {
        const double w = std::exp(s[j] - mx);
        l += w;
        for (int e = 0; e < D; ++e) acc[e] += w * V[std::size_t(j) * D + e];
      }
      const double ref_lse = l > 0 ? mx + std::log(l) : -INFINITY;
      const float got_lse = P.lse(b, h, i);
      if (std::isnan(got_lse)) bad[bh] = 1;
      if (std::isinf(ref_lse)) {
        if (!(std::isinf(got_lse) && got_lse < 0)) lnum[bh] += 1e30;
      } else {
        lnum[bh] += (got_lse - ref_lse) * (got_lse - ref_lse);
        lden[bh] += ref_lse * ref_lse;
      }
      for (int e = 0; e < D; ++e) {
        const double ref = l > 0 ? acc[e] / l : 0.0;
        const float got = P.out(b, i, h, e);
        if (std::isnan(got)) bad[bh] = 1;
        num[bh] += (got - ref) * (got - ref);
        den[bh] += ref * ref;
      }
    }
  });
  Outcome r;
  double a = 0, d = 0, la = 0, ld = 0;
  for (int i = 0; i < n; ++i) a += num[i], d += den[i], la += lnum[i], ld += lden[i], r.nan = r.nan || bad[i];
  r.err_o = d > 0 ? std::sqrt(a / d) : std::sqrt(a);
  r.err_lse = ld > 0 ? std::sqrt(la / ld) : std::sqrt(la);
  return r;
}

FwdParams base_params(const SCase& c) {
  FwdParams p;
  p.layout = c.layout;
  p.batch = c.b, p.seqlen_q = c.sq, p.heads_q = c.hq, p.heads_kv = c.hkv, p.head_dim = c.d;
  p.dtype = c.dt;
  p.scale = 1.f / std::sqrt(float(c.d));
  p.scale_log2 = p.scale * flashtile::tile::kLog2e;
  p.causal = c.causal;
  set_device(p);
  return p;
}

// Runs p (with its workspace), synchronizes, returns ""; or the family's reason where it refuses p (sm80 takes every
// case: a refusal exits 3).
std::string launch(FwdParams& p) {
  const std::string why = fam::supports(p);
  if (!why.empty()) {
    if (fam::kSm90) return why;
    std::printf("unsupported: %s\n", why.c_str());
    std::exit(3);
  }
  dbuf ws(fam::workspace(p));
  p.workspace = ws.p;
  fam::run(p);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  return {};
}

// [B, S, H, D] contiguous.
std::int64_t at4(int S, int H, int D, int b, int s, int h, int e) {
  return ((std::int64_t(b) * S + s) * H + h) * D + e;
}

// A paged cache: pages shuffled over the sequences, NaN in every slot no sequence owns (the appended slots too, until
// the append writes them) and in unused pages; table entries past a sequence's pages are junk no reader may use.
Outcome run_paged(const SCase& c, std::mt19937& rng, bool* append_ok) {
  const int B = c.b, ps = c.page_size, D = c.d, Hkv = c.hkv;
  std::vector<int> need(B);
  int pages_per_seq = 1, used = 0;
  for (int b = 0; b < B; ++b) {
    need[b] = (c.lens[b] + c.s_new + ps - 1) / ps;
    pages_per_seq = std::max(pages_per_seq, need[b] + 1);
    used += need[b];
  }
  const int num_pages = used + 3;
  std::vector<int> perm(num_pages);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<std::int32_t> table(std::size_t(B) * pages_per_seq, 0x3fffffff);
  for (int b = 0, next = 0; b < B; ++b)
    for (int j = 0; j < need[b]; ++j) table[std::size_t(b) * pages_per_seq + j] = perm[next++];
  const std::int64_t slot_st = std::int64_t(Hkv) * D, page_st = slot_st * ps, cache_n = page_st * num_pages;
  auto cache_at = [&](int b, int j, int hk, int e) {
    return std::int64_t(table[std::size_t(b) * pages_per_seq + j / ps]) * page_st + (j % ps) * slot_st + hk * D + e;
  };
  Vec16 kc(cache_n, kPoison16), vc(cache_n, kPoison16);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (int b = 0; b < B; ++b)
    for (int j = 0; j < c.lens[b]; ++j)
      for (int hk = 0; hk < Hkv; ++hk)
        for (int e = 0; e < D; ++e)
          kc[cache_at(b, j, hk, e)] = to16(nd(rng), c.dt), vc[cache_at(b, j, hk, e)] = to16(nd(rng), c.dt);
  const Vec16 hq = random16(std::size_t(B) * c.sq * c.hq * D, c.dt, rng);
  const Vec16 kn = random16(std::size_t(B) * c.s_new * Hkv * D, c.dt, rng);
  const Vec16 vn = random16(kn.size(), c.dt, rng);

  dbuf dq(hq), dk(kc), dv(vc), dkn(kn), dvn(vn), dout(hq.size() * 2), dlse(std::size_t(B) * c.hq * c.sq * 4);
  dbuf dtable(table.size() * 4), dlens(std::size_t(B) * 4);
  CK(cudaMemcpy(dtable.p, table.data(), table.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dlens.p, c.lens.data(), std::size_t(B) * 4, cudaMemcpyHostToDevice));
  dout.poison(), dlse.poison();

  FwdParams p = base_params(c);
  p.q = dq.p, p.k = dk.p, p.v = dv.p, p.o = dout.p, p.lse = static_cast<float*>(dlse.p);
  p.q_ss = p.o_ss = std::int64_t(c.hq) * D, p.q_sh = p.o_sh = D, p.q_sb = p.o_sb = p.q_ss * c.sq;
  p.k_sb = p.v_sb = page_st, p.k_ss = p.v_ss = slot_st, p.k_sh = p.v_sh = D;
  p.seqlen_k = pages_per_seq * ps;
  p.block_table = static_cast<const std::int32_t*>(dtable.p), p.block_table_sb = pages_per_seq;
  p.seqlens = static_cast<const std::int32_t*>(dlens.p);
  p.page_size = ps, p.num_pages = num_pages, p.pages_per_seq = pages_per_seq, p.seqlen_new = c.s_new;
  if (c.s_new > 0) {
    p.k_new = dkn.p, p.v_new = dvn.p;
    p.kn_ss = p.vn_ss = slot_st, p.kn_sh = p.vn_sh = D, p.kn_sb = p.vn_sb = slot_st * c.s_new;
  }
  if (std::string why = launch(p); !why.empty()) return {.skipped = why};
  const Vec16 out = dout.download16(), kc2 = dk.download16(), vc2 = dv.download16();
  std::vector<float> lse(std::size_t(B) * c.hq * c.sq);
  CK(cudaMemcpy(lse.data(), dlse.p, lse.size() * 4, cudaMemcpyDeviceToHost));

  // The append: exactly the new slots changed, to k_new / v_new.
  Vec16 kx = kc, vx = vc;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < c.s_new; ++t)
      for (int hk = 0; hk < Hkv; ++hk)
        for (int e = 0; e < D; ++e) {
          kx[cache_at(b, c.lens[b] + t, hk, e)] = kn[at4(c.s_new, Hkv, D, b, t, hk, e)];
          vx[cache_at(b, c.lens[b] + t, hk, e)] = vn[at4(c.s_new, Hkv, D, b, t, hk, e)];
        }
  *append_ok = kx == kc2 && vx == vc2;

  Problem P{B, c.hq, Hkv, D, c.causal, p.scale};
  P.sq = [&](int) { return c.sq; };
  P.sk = [&](int b) { return c.lens[b] + c.s_new; };
  P.q = [&](int b, int i, int h, int e) { return from16(hq[at4(c.sq, c.hq, D, b, i, h, e)], c.dt); };
  P.k = [&](int b, int j, int hk, int e) { return from16(kx[cache_at(b, j, hk, e)], c.dt); };
  P.v = [&](int b, int j, int hk, int e) { return from16(vx[cache_at(b, j, hk, e)], c.dt); };
  P.out = [&](int b, int i, int h, int e) { return from16(out[at4(c.sq, c.hq, D, b, i, h, e)], c.dt); };
  P.lse = [&](int b, int h, int i) { return lse[(std::size_t(b) * c.hq + h) * c.sq + i]; };
  return reference_check(P);
}

// Varlen: q [total_q, Hq, D], k / v [total_k + 7, Hkv, D] with NaN rows past total_k; lse [Hq, total_q].
Outcome run_varlen(const SCase& c, std::mt19937& rng) {
  const int B = c.b, D = c.d;
  std::vector<std::int32_t> cq(B + 1, 0), ck(B + 1, 0);
  for (int b = 0; b < B; ++b) cq[b + 1] = cq[b] + c.lens[b], ck[b + 1] = ck[b] + c.lens_k[b];
  const int tq = cq[B], tk = ck[B];
  const Vec16 hq = random16(std::size_t(tq) * c.hq * D, c.dt, rng);
  Vec16 hk = random16(std::size_t(tk + 7) * c.hkv * D, c.dt, rng), hv = random16(hk.size(), c.dt, rng);
  std::fill(hk.begin() + std::int64_t(tk) * c.hkv * D, hk.end(), kPoison16);
  std::fill(hv.begin() + std::int64_t(tk) * c.hkv * D, hv.end(), kPoison16);
  dbuf dq(hq), dk(hk), dv(hv), dout(hq.size() * 2), dlse(std::size_t(c.hq) * tq * 4);
  dbuf dcq((B + 1) * 4), dck((B + 1) * 4);
  CK(cudaMemcpy(dcq.p, cq.data(), (B + 1) * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dck.p, ck.data(), (B + 1) * 4, cudaMemcpyHostToDevice));
  dout.poison(), dlse.poison();
  FwdParams p = base_params(c);
  p.q = dq.p, p.k = dk.p, p.v = dv.p, p.o = dout.p, p.lse = static_cast<float*>(dlse.p);
  p.q_ss = p.o_ss = std::int64_t(c.hq) * D, p.q_sh = p.o_sh = D, p.q_sb = p.o_sb = p.q_ss * tq;
  p.k_ss = p.v_ss = std::int64_t(c.hkv) * D, p.k_sh = p.v_sh = D, p.k_sb = p.v_sb = p.k_ss * tk;
  p.seqlen_q = *std::max_element(c.lens.begin(), c.lens.end());
  p.seqlen_k = *std::max_element(c.lens_k.begin(), c.lens_k.end());
  p.cu_seqlens_q = static_cast<const std::int32_t*>(dcq.p), p.cu_seqlens_k = static_cast<const std::int32_t*>(dck.p);
  p.total_q = tq, p.total_k = tk;
  if (std::string why = launch(p); !why.empty()) return {.skipped = why};
  const Vec16 out = dout.download16();
  std::vector<float> lse(std::size_t(c.hq) * tq);
  CK(cudaMemcpy(lse.data(), dlse.p, lse.size() * 4, cudaMemcpyDeviceToHost));
  Problem P{B, c.hq, c.hkv, D, c.causal, p.scale};
  P.sq = [&](int b) { return c.lens[b]; };
  P.sk = [&](int b) { return c.lens_k[b]; };
  P.q = [&](int b, int i, int h, int e) { return from16(hq[at4(1, c.hq, D, 0, cq[b] + i, h, e)], c.dt); };
  P.k = [&](int b, int j, int h, int e) { return from16(hk[at4(1, c.hkv, D, 0, ck[b] + j, h, e)], c.dt); };
  P.v = [&](int b, int j, int h, int e) { return from16(hv[at4(1, c.hkv, D, 0, ck[b] + j, h, e)], c.dt); };
  P.out = [&](int b, int i, int h, int e) { return from16(out[at4(1, c.hq, D, 0, cq[b] + i, h, e)], c.dt); };
  P.lse = [&](int b, int h, int i) { return lse[std::size_t(h) * tq + cq[b] + i]; };
  return reference_check(P);
}

// Dense decode shapes (the split-KV path): [B, S, H, D] contiguous.
Outcome run_dense(const SCase& c, std::mt19937& rng) {
  const int B = c.b, D = c.d, Sk = c.lens_k[0];
  const Vec16 hq = random16(std::size_t(B) * c.sq * c.hq * D, c.dt, rng);
  const Vec16 hk = random16(std::size_t(B) * Sk * c.hkv * D, c.dt, rng), hv = random16(hk.size(), c.dt, rng);
  dbuf dq(hq), dk(hk), dv(hv), dout(hq.size() * 2), dlse(std::size_t(B) * c.hq * c.sq * 4);
  dout.poison(), dlse.poison();
  FwdParams p = base_params(c);
  p.q = dq.p, p.k = dk.p, p.v = dv.p, p.o = dout.p, p.lse = static_cast<float*>(dlse.p);
  p.q_ss = p.o_ss = std::int64_t(c.hq) * D, p.q_sh = p.o_sh = D, p.q_sb = p.o_sb = p.q_ss * c.sq;
  p.k_ss = p.v_ss = std::int64_t(c.hkv) * D, p.k_sh = p.v_sh = D, p.k_sb = p.v_sb = p.k_ss * Sk;
  p.seqlen_k = Sk;
  if (std::string why = launch(p); !why.empty()) return {.skipped = why};
  const Vec16 out = dout.download16();
  std::vector<float> lse(std::size_t(B) * c.hq * c.sq);
  CK(cudaMemcpy(lse.data(), dlse.p, lse.size() * 4, cudaMemcpyDeviceToHost));
  Problem P{B, c.hq, c.hkv, D, c.causal, p.scale};
  P.sq = [&](int) { return c.sq; };
  P.sk = [&](int) { return Sk; };
  P.q = [&](int b, int i, int h, int e) { return from16(hq[at4(c.sq, c.hq, D, b, i, h, e)], c.dt); };
  P.k = [&](int b, int j, int h, int e) { return from16(hk[at4(Sk, c.hkv, D, b, j, h, e)], c.dt); };
  P.v = [&](int b, int j, int h, int e) { return from16(hv[at4(Sk, c.hkv, D, b, j, h, e)], c.dt); };
  P.out = [&](int b, int i, int h, int e) { return from16(out[at4(c.sq, c.hq, D, b, i, h, e)], c.dt); };
  P.lse = [&](int b, int h, int i) { return lse[(std::size_t(b) * c.hq + h) * c.sq + i]; };
  return reference_check(P);
}

// Hostile tables: page entries anywhere in int32, lengths negative or past the pages, cu_seqlens out of order and
// past the totals. Only "no fault, no CUDA error" is checked (compute-sanitizer checks the accesses).
void run_hostile(std::mt19937& rng, bool decode) {
  std::uniform_int_distribution<std::int32_t> any(-2000000000, 2000000000), small(-40, 400);
  const int B = 4, D = 64, Hkv = 2, Hq = 4, ps = 16, pages = 5, per = 4;
  const int sq = decode ? 3 : 40;
  const ElemType dt = ElemType::BF16;
  std::vector<std::int32_t> table(B * per), lens(B);
  for (auto& x : table) x = rng() % 3 ? any(rng) : std::int32_t(rng() % pages);
  for (auto& x : lens) x = rng() % 2 ? any(rng) : small(rng);
  dbuf dq(random16(std::size_t(B) * sq * Hq * D, dt, rng)), dk(random16(std::size_t(pages) * ps * Hkv * D, dt, rng));
  dbuf dv(random16(std::size_t(pages) * ps * Hkv * D, dt, rng)), dout(std::size_t(B) * sq * Hq * D * 2);
  dbuf dkn(random16(std::size_t(B) * 2 * Hkv * D, dt, rng)), dvn(random16(std::size_t(B) * 2 * Hkv * D, dt, rng));
  dbuf dlse(std::size_t(B) * Hq * sq * 4), dtable(table.size() * 4), dlens(lens.size() * 4);
  CK(cudaMemcpy(dtable.p, table.data(), table.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dlens.p, lens.data(), lens.size() * 4, cudaMemcpyHostToDevice));
  for (bool causal : {false, true}) {
    SCase c{Layout::Paged, B, sq, Hq, Hkv, D, dt, causal};
    FwdParams p = base_params(c);
    p.q = dq.p, p.k = dk.p, p.v = dv.p, p.o = dout.p, p.lse = static_cast<float*>(dlse.p);
    p.q_ss = p.o_ss = Hq * D, p.q_sh = p.o_sh = D, p.q_sb = p.o_sb = std::int64_t(sq) * Hq * D;
    p.k_sb = p.v_sb = std::int64_t(ps) * Hkv * D, p.k_ss = p.v_ss = Hkv * D, p.k_sh = p.v_sh = D;
    p.seqlen_k = per * ps;
    p.block_table = static_cast<const std::int32_t*>(dtable.p), p.block_table_sb = per;
    p.seqlens = static_cast<const std::int32_t*>(dlens.p);
    p.page_size = ps, p.num_pages = pages, p.pages_per_seq = per, p.seqlen_new = 2;
    p.k_new = dkn.p, p.v_new = dvn.p, p.kn_sb = p.vn_sb = 2 * Hkv * D, p.kn_ss = p.vn_ss = Hkv * D;
    p.kn_sh = p.vn_sh = D;
    launch(p);
  }
  // Varlen with cu_seqlens that decrease, start below 0 and end past the totals.
  const int tq = 50, tk = 60;
  std::vector<std::int32_t> cq(B + 1), ck(B + 1);
  for (auto& x : cq) x = rng() % 2 ? any(rng) : small(rng);
  for (auto& x : ck) x = rng() % 2 ? any(rng) : small(rng);
  dbuf vq(random16(std::size_t(tq) * Hq * D, dt, rng)), vk(random16(std::size_t(tk) * Hkv * D, dt, rng));
  dbuf vv(random16(std::size_t(tk) * Hkv * D, dt, rng)), vo(std::size_t(tq) * Hq * D * 2), vl(std::size_t(Hq) * tq * 4);
  dbuf dcq(cq.size() * 4), dck(ck.size() * 4);
  CK(cudaMemcpy(dcq.p, cq.data(), cq.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dck.p, ck.data(), ck.size() * 4, cudaMemcpyHostToDevice));
  for (bool causal : {false, true}) {
    SCase c{Layout::Varlen, B, 70, Hq, Hkv, D, dt, causal};
    FwdParams p = base_params(c);
    p.q = vq.p, p.k = vk.p, p.v = vv.p, p.o = vo.p, p.lse = static_cast<float*>(vl.p);
    p.q_ss = p.o_ss = Hq * D, p.q_sh = p.o_sh = D, p.q_sb = p.o_sb = std::int64_t(tq) * Hq * D;
    p.k_ss = p.v_ss = Hkv * D, p.k_sh = p.v_sh = D, p.k_sb = p.v_sb = std::int64_t(tk) * Hkv * D;
    p.seqlen_k = 80;
    p.cu_seqlens_q = static_cast<const std::int32_t*>(dcq.p), p.cu_seqlens_k = static_cast<const std::int32_t*>(dck.p);
    p.total_q = tq, p.total_k = tk;
    launch(p);
  }
}

// GB/s of one decode shape: K+V+Q+O bytes over the median time (append excluded: seqlen_new 0).
void time_decode(int B, int Sk, bool paged) {
  const int Hq = 32, Hkv = 8, D = 128, ps = 64;
  const ElemType dt = ElemType::BF16;
  const std::int64_t kv = std::int64_t(B) * Sk * Hkv * D, qo = std::int64_t(B) * Hq * D;
  std::mt19937 rng(5);
  dbuf dq(random16(qo, dt, rng)), dout(qo * 2), dk(kv * 2), dv(kv * 2), dlse(std::size_t(B) * Hq * 4);
  CK(cudaMemset(dk.p, 0x3c, kv * 2));  // finite values (0x3c3c); the bytes moved are what is timed
  CK(cudaMemset(dv.p, 0x3c, kv * 2));
  const int per = Sk / ps;
  std::vector<std::int32_t> table(std::size_t(B) * per), lens(B, Sk);
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), rng);
  dbuf dtable(table.size() * 4), dlens(lens.size() * 4);
  CK(cudaMemcpy(dtable.p, table.data(), table.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dlens.p, lens.data(), lens.size() * 4, cudaMemcpyHostToDevice));
  SCase c{paged ? Layout::Paged : Layout::Dense, B, 1, Hq, Hkv, D, dt, false};
  FwdParams p = base_params(c);
  p.q = dq.p, p.k = dk.p, p.v = dv.p, p.o = dout.p, p.lse = static_cast<float*>(dlse.p);
  p.q_ss = p.o_ss = Hq * D, p.q_sh = p.o_sh = D, p.q_sb = p.o_sb = Hq * D;
  p.k_sh = p.v_sh = D, p.k_ss = p.v_ss = Hkv * D, p.k_sb = p.v_sb = std::int64_t(paged ? ps : Sk) * Hkv * D;
  p.seqlen_k = Sk;
  if (paged) {
    p.block_table = static_cast<const std::int32_t*>(dtable.p), p.block_table_sb = per;
    p.seqlens = static_cast<const std::int32_t*>(dlens.p);
    p.page_size = ps, p.num_pages = B * per, p.pages_per_seq = per;
  }
  if (const std::string why = fam::supports(p); !why.empty()) {
    std::printf("time: skipped (%s)\n", why.c_str());
    return;
  }
  dbuf ws(fam::workspace(p));
  p.workspace = ws.p;
  const double ms = median_ms([&] { fam::run(p); });
  CK(cudaGetLastError());
  const double bytes = double(kv) * 2 * 2 + double(qo) * 2 * 2;
  std::printf("time %-5s B=%-3d Sk=%-5d Hq=%d Hkv=%d d=%d bf16 %s: %.4f ms, %.0f GB/s\n", paged ? "paged" : "dense", B,
              Sk, Hq, Hkv, D, fam::name(p).c_str(), ms, bytes / (ms * 1e-3) / 1e9);
}

std::vector<SCase> make_cases(bool small) {
  std::vector<SCase> cs;
  const ElemType dts[] = {ElemType::BF16, ElemType::F16};
  const int dims[] = {64, 128, 256};
  const int groups[] = {1, 4, 8};
  int k = 0;
  // Paged: Sq 1 / 16 take the split-KV decode, 77 / 300 the main kernel; sequences with 0 cache keys, Sq > keys.
  const std::vector<std::vector<int>> lens = {{0, 17, 300, 5}, {1000, 0, 64, 129}, {31, 256, 0, 2000}};
  for (int ps : {16, 64, 256})
    for (int sq : {1, 16, 77, 300})
      for (int s_new : {0, 3}) {
        const int g = groups[k % 3], hkv = 1 + (k % 2);
        cs.push_back({Layout::Paged, 4, sq, g * hkv, hkv, dims[k % 3], dts[k % 2], (k / 2) % 2 == 1, ps,
                      sq == 1 ? s_new / 3 : s_new, lens[k % 3]});
        ++k;
      }
  // Varlen: lengths {1, 17, 300, 0} against keys in several orders.
  const std::vector<std::vector<int>> kl = {{1, 17, 300, 0}, {17, 300, 0, 1}, {300, 0, 1, 17}, {0, 1, 17, 300}};
  for (int i = 0; i < 12; ++i, ++k)
    cs.push_back({Layout::Varlen, 4, 0, groups[k % 3] * 2, 2, dims[i % 3], dts[i % 2], i % 4 >= 2, 0, 0,
                  {1, 17, 300, 0}, kl[i % 4]});
  // Varlen batches of many tiles a sequence (sm90: persistent CTAs taking tiles of sequences of other lengths).
  for (bool causal : {false, true})
    cs.push_back({Layout::Varlen, 4, 0, 8, 2, 128, ElemType::BF16, causal, 0, 0, {1000, 3000, 17, 2100},
                  {1500, 3000, 0, 2100}});
  // Dense decode shapes through the split-KV path.
  for (int sq : {1, 16})
    for (int sk : {1, 100, 1000, 8192}) {
      cs.push_back({Layout::Dense, 1 + k % 3, sq, groups[k % 3] * 2, 2, dims[k % 3], dts[k % 2], k % 2 == 0, 0, 0, {},
                    {sk}});
      ++k;
    }
  if (small) {
    cs = {{Layout::Paged, 4, 1, 8, 2, 64, ElemType::BF16, false, 16, 1, {0, 17, 40, 5}},
          {Layout::Paged, 4, 16, 8, 1, 128, ElemType::F16, true, 64, 3, {31, 0, 100, 64}},
          {Layout::Paged, 4, 70, 4, 1, 64, ElemType::BF16, true, 16, 2, {0, 17, 90, 5}},
          {Layout::Varlen, 4, 0, 4, 2, 64, ElemType::BF16, true, 0, 0, {1, 17, 70, 0}, {17, 70, 0, 1}},
          {Layout::Dense, 2, 16, 4, 1, 128, ElemType::BF16, true, 0, 0, {}, {200}}};
  }
  return cs;
}

}  // namespace

int main(int argc, char** argv) {
  bool small = false, timing = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--small")) small = true;
    if (!std::strcmp(argv[i], "--time")) timing = true;
  }
  if (!device_or_skip()) return 77;
  std::mt19937 rng(4321);
  int fails = 0, skips = 0;
  const std::vector<SCase> cases = make_cases(small);
  for (const SCase& c : cases) {
    bool append_ok = true;
    const Outcome r = c.layout == Layout::Paged    ? run_paged(c, rng, &append_ok)
                      : c.layout == Layout::Varlen ? run_varlen(c, rng)
                                                   : run_dense(c, rng);
    if (!r.skipped.empty()) {
      ++skips;
      std::printf("SKIP %s  (%s)\n", describe(c).c_str(), r.skipped.c_str());
      continue;
    }
    const double tol = c.dt == ElemType::BF16 ? 1e-2 : 2e-3;
    const bool ok = !r.nan && append_ok && r.err_o <= tol && r.err_lse <= 1e-3;
    fails += !ok;
    std::printf("%s %s  err_o=%.2e err_lse=%.2e%s%s\n", ok ? "PASS" : "FAIL", describe(c).c_str(), r.err_o, r.err_lse,
                r.nan ? " NaN" : "", append_ok ? "" : " APPEND-WRONG");
  }
  for (bool decode : {true, false}) run_hostile(rng, decode);
  std::printf("hostile tables: ran without a fault\n");
  std::printf("correctness: %d/%zu cases passed, %d skipped\n", int(cases.size()) - fails - skips,
              cases.size() - skips, skips);
  if (timing)
    for (bool paged : {false, true})
      for (auto [b, sk] : {std::pair{1, 65536}, {16, 8192}, {64, 4096}, {128, 2048}}) time_decode(b, sk, paged);
  return fails == 0 ? 0 : 1;
}
