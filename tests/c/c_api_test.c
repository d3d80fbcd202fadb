/* The C API from C99: attention, its backward and the serving layouts (paged KV cache, varlen) on the CPU device
 * against naive double references, strided host views, bf16, and error paths (the right code, a message naming the
 * argument, and outputs left untouched). */
#include <flashtile/flashtile.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures = 0;

#define CHECK(cond, ...)                                         \
  do {                                                           \
    if (!(cond)) {                                               \
      ++g_failures;                                              \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                              \
      fprintf(stderr, "\n");                                     \
    }                                                            \
  } while (0)

#define CHECK_OK(expr)                                                                        \
  do {                                                                                        \
    ft_status s_ = (expr);                                                                    \
    if (s_ != FT_OK) {                                                                        \
      ++g_failures;                                                                           \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #expr, ft_status_name(s_), \
              ft_last_error());                                                               \
      return;                                                                                 \
    }                                                                                         \
  } while (0)

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static float rand_uniform(void) { /* xorshift64*, in [-1, 1) */
  g_rng ^= g_rng >> 12;
  g_rng ^= g_rng << 25;
  g_rng ^= g_rng >> 27;
  return (float)((double)((g_rng * 2685821657736338717ull) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static uint16_t to_bf16(float f) { /* round to nearest even; inputs here are finite */
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static float from_bf16(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

typedef struct {
  int64_t B, Sq, Sk, Hq, Hkv, D;
  int causal;
} Case;

/* Element (b, s, h, d) of a [B, S, H, D] tensor with the given element strides. */
static size_t at(const int64_t* st, int64_t b, int64_t s, int64_t h, int64_t d) {
  return (size_t)(b * st[0] + s * st[1] + h * st[2] + d * st[3]);
}

/* Naive attention in double. q/k/v are float copies addressed with their strides; out/lse contiguous. */
static void reference(const Case* c, double scale, const float* q, const int64_t* qs, const float* k,
                      const int64_t* ks, const float* v, const int64_t* vs, double* out, double* lse) {
  double* p = (double*)malloc(sizeof(double) * (size_t)c->Sk);
  int64_t group = c->Hq / c->Hkv;
  for (int64_t b = 0; b < c->B; ++b)
    for (int64_t h = 0; h < c->Hq; ++h)
      for (int64_t i = 0; i < c->Sq; ++i) {
        int64_t hk = h / group, last = c->causal ? i + c->Sk - c->Sq : c->Sk - 1;
        double m = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < c->Sk; ++j) {
          if (j > last) break;
          double dot = 0.0;
          for (int64_t d = 0; d < c->D; ++d) dot += (double)q[at(qs, b, i, h, d)] * (double)k[at(ks, b, j, hk, d)];
          p[j] = dot * scale;
          if (p[j] > m) m = p[j];
        }
        double* o = out + ((b * c->Sq + i) * c->Hq + h) * c->D;
        for (int64_t d = 0; d < c->D; ++d) o[d] = 0.0;
        if (last < 0) {
          lse[(b * c->Hq + h) * c->Sq + i] = -INFINITY;
          continue;
        }
        for (int64_t j = 0; j <= last && j < c->Sk; ++j) {
          double e = exp(p[j] - m);
          sum += e;
          for (int64_t d = 0; d < c->D; ++d) o[d] += e * (double)v[at(vs, b, j, hk, d)];
        }
        for (int64_t d = 0; d < c->D; ++d) o[d] /= sum;
        lse[(b * c->Hq + h) * c->Sq + i] = m + log(sum);
      }
  free(p);
}

static double rel_error(const double* ref, const float* got, size_t n) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (isnan(got[i])) return INFINITY;
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static double lse_error(const double* ref, const float* got, size_t n) {
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (isinf(ref[i])) {
      if (!(isinf(got[i]) && got[i] < 0)) return INFINITY;
      continue;
    }
    if (isnan(got[i])) return INFINITY;
    double e = fabs(got[i] - ref[i]) / (1.0 + fabs(ref[i]));
    if (e > worst) worst = e;
  }
  return worst;
}

static int find_cpu(ft_device** dev) {
  if (ft_device_open(FT_BACKEND_CPU, 0, dev) != FT_OK) {
    fprintf(stderr, "cannot open the CPU device: %s\n", ft_last_error());
    return 0;
  }
  return 1;
}

/* f32 (wrapped host memory with padded, non-contiguous strides for q) or bf16 (owned tensors, upload/download). */
static void run_case(ft_device* dev, const Case* c, int dtype) {
  int64_t qshape[4] = {c->B, c->Sq, c->Hq, c->D}, kshape[4] = {c->B, c->Sk, c->Hkv, c->D};
  int64_t lshape[3] = {c->B, c->Hq, c->Sq};
  /* q lives inside a buffer with 3 spare heads per row: strides [Sq*(Hq+3)*D, (Hq+3)*D, D, 1]. */
  int64_t qs[4] = {c->Sq * (c->Hq + 3) * c->D, (c->Hq + 3) * c->D, c->D, 1};
  int64_t ks[4] = {c->Sk * c->Hkv * c->D, c->Hkv * c->D, c->D, 1};
  int64_t os[4] = {c->Sq * c->Hq * c->D, c->Hq * c->D, c->D, 1};
  size_t nq = (size_t)(c->B * qs[0]), nk = (size_t)(c->B * ks[0]), no = (size_t)(c->B * os[0]);
  size_t nl = (size_t)(c->B * c->Hq * c->Sq);
  float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nk * 4), *out = malloc(no * 4), *lse = malloc(nl * 4);
  double *ref = malloc(no * sizeof(double)), *ref_lse = malloc(nl * sizeof(double));
  uint16_t *q16 = malloc(nq * 2), *k16 = malloc(nk * 2), *v16 = malloc(nk * 2), *o16 = malloc(no * 2);
  ft_tensor *tq = NULL, *tk = NULL, *tv = NULL, *to = NULL, *tl = NULL, *tqbase = NULL;
  ft_options opt = ft_options_default();
  ft_result res, pre;
  ft_device_info info;
  double scale = 1.0 / sqrt((double)c->D), err, lerr, tol = dtype == FT_DTYPE_F32 ? 1e-5 : 1e-2, lse_tol;
  size_t i;

  CHECK_OK(ft_device_info_get(dev, &info));
  lse_tol = info.backend == FT_BACKEND_CPU ? 1e-4 : 1e-3; /* GPU paths accumulate in f32 */

  for (i = 0; i < nq; ++i) q[i] = rand_uniform();
  for (i = 0; i < nk; ++i) k[i] = rand_uniform();
  for (i = 0; i < nk; ++i) v[i] = rand_uniform();
  for (i = 0; i < no; ++i) out[i] = NAN; /* poisoned: every element must be written */
  for (i = 0; i < nl; ++i) lse[i] = NAN;
  if (dtype == FT_DTYPE_BF16) { /* the reference sees the rounded inputs */
    for (i = 0; i < nq; ++i) q[i] = from_bf16(q16[i] = to_bf16(q[i]));
    for (i = 0; i < nk; ++i) k[i] = from_bf16(k16[i] = to_bf16(k[i]));
    for (i = 0; i < nk; ++i) v[i] = from_bf16(v16[i] = to_bf16(v[i]));
    for (i = 0; i < no; ++i) o16[i] = 0x7FC1; /* NaN */
  }
  reference(c, scale, q, qs, k, ks, v, ks, ref, ref_lse);
  CHECK(opt.allow_reduced_precision_accumulation == 0, "ft_options_default allows reduced precision");
  opt.causal = c->causal;

  if (dtype == FT_DTYPE_F32) {
    CHECK_OK(ft_tensor_wrap_host(dev, q, dtype, 4, qshape, qs, &tq));
    CHECK_OK(ft_tensor_wrap_host(dev, k, dtype, 4, kshape, NULL, &tk));
    CHECK_OK(ft_tensor_wrap_host(dev, v, dtype, 4, kshape, ks, &tv));
    CHECK_OK(ft_tensor_wrap_host(dev, out, dtype, 4, qshape, NULL, &to));
    CHECK_OK(ft_tensor_wrap_host(dev, lse, FT_DTYPE_F32, 3, lshape, NULL, &tl));
  } else {
    size_t bytes = 0;
    CHECK_OK(ft_tensor_create(dev, dtype, 4, qshape, &tq));
    CHECK_OK(ft_tensor_extent_bytes(tq, &bytes));
    CHECK(bytes == (size_t)(c->B * c->Sq * c->Hq * c->D) * 2, "extent_bytes %zu", bytes);
    ft_tensor_destroy(tq); /* owned tensors are contiguous: q goes in as a strided view instead */
    if (info.backend == FT_BACKEND_CPU) {
      CHECK_OK(ft_tensor_wrap_host(dev, q16, dtype, 4, qshape, qs, &tq));
    } else { /* a view of an owned [B, Sq, Hq + 3, D] tensor on the device */
      int64_t qpad[4] = {c->B, c->Sq, c->Hq + 3, c->D};
      CHECK_OK(ft_tensor_create(dev, dtype, 4, qpad, &tqbase));
      CHECK_OK(ft_tensor_upload(tqbase, q16, nq * 2));
      CHECK_OK(ft_tensor_view(tqbase, 4, qshape, qs, 0, &tq));
    }
    CHECK_OK(ft_tensor_create(dev, dtype, 4, kshape, &tk));
    CHECK_OK(ft_tensor_create(dev, dtype, 4, kshape, &tv));
    CHECK_OK(ft_tensor_create(dev, dtype, 4, qshape, &to));
    CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F32, 3, lshape, &tl));
    CHECK_OK(ft_tensor_upload(tk, k16, nk * 2));
    CHECK_OK(ft_tensor_upload(tv, v16, nk * 2));
    CHECK_OK(ft_tensor_upload(to, o16, no * 2));
    CHECK_OK(ft_tensor_upload(tl, lse, nl * 4));
  }

  CHECK_OK(ft_attention_prepare(tq, tk, tv, to, tl, &opt, &pre)); /* builds, runs nothing */
  CHECK_OK(ft_attention_forward(tq, tk, tv, to, tl, &opt, &res));
  CHECK(strcmp(ft_last_error(), "") == 0, "last error after success: %s", ft_last_error());
  CHECK(res.reduced_precision == 0, "reduced precision without the permission (%s)", res.kernel);
  CHECK(pre.path == res.path && strcmp(pre.kernel, res.kernel) == 0, "prepared %s, ran %s", pre.kernel, res.kernel);
  CHECK(res.backend == info.backend, "backend %d, device's %d", res.backend, info.backend);
  CHECK(info.backend != FT_BACKEND_CPU || res.path == FT_PATH_CPU_REFERENCE, "path %d", res.path);
  CHECK(strcmp(res.path_name, ft_path_name(res.path)) == 0, "path name %s", res.path_name);
  if (dtype == FT_DTYPE_BF16) {
    CHECK_OK(ft_tensor_download(to, o16, no * 2));
    CHECK_OK(ft_tensor_download(tl, lse, nl * 4));
    for (i = 0; i < no; ++i) out[i] = from_bf16(o16[i]);
  }
  err = rel_error(ref, out, no);
  lerr = lse_error(ref_lse, lse, nl);
  printf("%-6s %-5s B=%lld Sq=%lld Sk=%lld Hq=%lld Hkv=%lld D=%lld causal=%d: rel err %.3g, lse err %.3g (kernel %s)\n",
         ft_backend_name(info.backend), ft_dtype_name(dtype), (long long)c->B, (long long)c->Sq, (long long)c->Sk, (long long)c->Hq,
         (long long)c->Hkv, (long long)c->D, c->causal, err, lerr, res.kernel);
  CHECK(err <= tol, "output rel error %g > %g", err, tol);
  CHECK(lerr <= lse_tol, "lse error %g", lerr);

  ft_tensor_destroy(tq);
  ft_tensor_destroy(tk);
  ft_tensor_destroy(tv);
  ft_tensor_destroy(to);
  ft_tensor_destroy(tl);
  ft_tensor_destroy(tqbase);
  free(q), free(k), free(v), free(out), free(lse), free(ref), free(ref_lse);
  free(q16), free(k16), free(v16), free(o16);
}

/* Packed QKV: q, k, v as ft_tensor_view()s of one owned [B, S, 3H, D] tensor, out with padded rows. The result
 * must equal (bit for bit: same CPU reference) the same call on separate wrapped host copies. */
static void packed_views(ft_device* dev) {
  enum { B = 2, S = 19, H = 2, D = 64, PAD = 8 };
  int64_t packed_shape[4] = {B, S, 3 * H, D}, shape[4] = {B, S, H, D};
  int64_t st[4] = {S * 3 * H * D, 3 * H * D, D, 1}, ost[4] = {S * H * (D + PAD), H * (D + PAD), D + PAD, 1};
  int64_t padded_shape[4] = {B, S, H, D + PAD};
  static float packed[B * S * 3 * H * D], sep[3][B * S * H * D], out_ref[B * S * H * D];
  static float out_img[B * S * H * (D + PAD)];
  ft_tensor *base = NULL, *obase = NULL, *v[4] = {NULL, NULL, NULL, NULL}, *w[4] = {NULL, NULL, NULL, NULL};
  ft_options opt = ft_options_default();
  int64_t b, s, h, d, which;
  int same = 1, pad_ok = 1;
  size_t i;

  for (i = 0; i < sizeof(packed) / sizeof(packed[0]); ++i) packed[i] = rand_uniform();
  for (which = 0; which < 3; ++which)
    for (b = 0; b < B; ++b)
      for (s = 0; s < S; ++s)
        for (h = 0; h < H; ++h)
          for (d = 0; d < D; ++d)
            sep[which][((b * S + s) * H + h) * D + d] = packed[b * st[0] + s * st[1] + (which * H + h) * D + d];
  for (i = 0; i < sizeof(out_img) / sizeof(out_img[0]); ++i) out_img[i] = 12345.0f;
  opt.causal = 1;

  CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F32, 4, packed_shape, &base));
  CHECK_OK(ft_tensor_upload(base, packed, sizeof(packed)));
  CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F32, 4, padded_shape, &obase));
  CHECK_OK(ft_tensor_upload(obase, out_img, sizeof(out_img)));
  for (which = 0; which < 3; ++which) CHECK_OK(ft_tensor_view(base, 4, shape, st, which * H * D, &v[which]));
  CHECK_OK(ft_tensor_view(obase, 4, shape, ost, 0, &v[3]));
  CHECK_OK(ft_attention_forward(v[0], v[1], v[2], v[3], NULL, &opt, NULL));
  CHECK_OK(ft_tensor_download(obase, out_img, sizeof(out_img)));

  for (which = 0; which < 3; ++which) CHECK_OK(ft_tensor_wrap_host(dev, sep[which], FT_DTYPE_F32, 4, shape, NULL, &w[which]));
  CHECK_OK(ft_tensor_wrap_host(dev, out_ref, FT_DTYPE_F32, 4, shape, NULL, &w[3]));
  CHECK_OK(ft_attention_forward(w[0], w[1], w[2], w[3], NULL, &opt, NULL));
  for (b = 0; b < B; ++b)
    for (s = 0; s < S; ++s)
      for (h = 0; h < H; ++h)
        for (d = 0; d < D + PAD; ++d) {
          float got = out_img[b * ost[0] + s * ost[1] + h * ost[2] + d];
          if (d < D) same &= got == out_ref[((b * S + s) * H + h) * D + d];
          else pad_ok &= got == 12345.0f;
        }
  printf("packed QKV views + padded out: %s, padding %s\n", same ? "identical" : "DIFFERENT",
         pad_ok ? "untouched" : "WRITTEN");
  CHECK(same, "packed views gave a different result");
  CHECK(pad_ok, "the output's padding was written");
  /* A view past the end of its memory is refused. */
  {
    ft_tensor* bad = NULL;
    ft_status st2 = ft_tensor_view(base, 4, shape, st, 3 * H * D, &bad);
    CHECK(st2 != FT_OK && bad == NULL && ft_last_error()[0] != '\0', "out-of-range view: %s", ft_status_name(st2));
    ft_tensor_destroy(bad);
  }
  for (i = 0; i < 4; ++i) ft_tensor_destroy(v[i]), ft_tensor_destroy(w[i]);
  ft_tensor_destroy(base);
  ft_tensor_destroy(obase);
}

/* Bad calls: the right code, a message naming the argument, and nothing written. */
static void error_paths(ft_device* dev) {
  enum { B = 1, S = 8, H = 2, D = 100 };
  int64_t shape[4] = {B, S, H, D}, good[4] = {B, S, H, 64}, odd_heads[4] = {B, S, 3, 64};
  static float q[B * S * H * D], k[B * S * H * D], v[B * S * H * D], out[B * S * H * D];
  ft_tensor *tq = NULL, *tk = NULL, *tv = NULL, *to = NULL, *tk3 = NULL, *none = NULL;
  ft_status s;
  size_t i;
  int unchanged = 1, parsed = -1;

  for (i = 0; i < B * S * H * D; ++i) q[i] = k[i] = v[i] = rand_uniform();
  memset(out, 0xAB, sizeof(out));

  /* head_dim 100 is rejected before any work. */
  CHECK_OK(ft_tensor_wrap_host(dev, q, FT_DTYPE_F32, 4, shape, NULL, &tq));
  CHECK_OK(ft_tensor_wrap_host(dev, k, FT_DTYPE_F32, 4, shape, NULL, &tk));
  CHECK_OK(ft_tensor_wrap_host(dev, v, FT_DTYPE_F32, 4, shape, NULL, &tv));
  CHECK_OK(ft_tensor_wrap_host(dev, out, FT_DTYPE_F32, 4, shape, NULL, &to));
  s = ft_attention_forward(tq, tk, tv, to, NULL, NULL, NULL);
  printf("head_dim 100 -> %s: %s\n", ft_status_name(s), ft_last_error());
  CHECK(s == FT_ERROR_INVALID_ARGUMENT, "status %s", ft_status_name(s));
  CHECK(strstr(ft_last_error(), "head_dim") != NULL, "message: %s", ft_last_error());
  for (i = 0; i < sizeof(out); ++i) unchanged &= ((unsigned char*)out)[i] == 0xAB;
  CHECK(unchanged, "a rejected call wrote to out");
  s = ft_attention_prepare(tq, tk, tv, to, NULL, NULL, NULL);
  CHECK(s == FT_ERROR_INVALID_ARGUMENT && strstr(ft_last_error(), "head_dim") != NULL, "prepare: %s: %s",
        ft_status_name(s), ft_last_error());
  ft_tensor_destroy(tq), ft_tensor_destroy(tk), ft_tensor_destroy(tv), ft_tensor_destroy(to);

  /* Hq not a multiple of Hkv. */
  CHECK_OK(ft_tensor_wrap_host(dev, q, FT_DTYPE_F32, 4, odd_heads, NULL, &tq));
  CHECK_OK(ft_tensor_wrap_host(dev, k, FT_DTYPE_F32, 4, good, NULL, &tk3));
  CHECK_OK(ft_tensor_wrap_host(dev, out, FT_DTYPE_F32, 4, odd_heads, NULL, &to));
  s = ft_attention_forward(tq, tk3, tk3, to, NULL, NULL, NULL);
  printf("Hq 3, Hkv 2 -> %s: %s\n", ft_status_name(s), ft_last_error());
  CHECK(s != FT_OK && ft_last_error()[0] != '\0', "status %s", ft_status_name(s));
  unchanged = 1;
  for (i = 0; i < sizeof(out); ++i) unchanged &= ((unsigned char*)out)[i] == 0xAB;
  CHECK(unchanged, "a rejected call wrote to out");

  /* NULL arguments, a bad rank, a bad enum, a bad forced path: no crash, a code and a message. */
  s = ft_attention_forward(NULL, tk3, tk3, to, NULL, NULL, NULL);
  CHECK(s == FT_ERROR_INVALID_ARGUMENT && strstr(ft_last_error(), "q") != NULL, "NULL q: %s", ft_last_error());
  s = ft_tensor_create(dev, FT_DTYPE_F32, 0, good, &none);
  CHECK(s == FT_ERROR_INVALID_ARGUMENT && strstr(ft_last_error(), "rank") != NULL, "rank 0: %s", ft_last_error());
  s = ft_tensor_create(dev, 7, 4, good, &none);
  CHECK(s == FT_ERROR_INVALID_ARGUMENT && strstr(ft_last_error(), "dtype") != NULL, "dtype 7: %s", ft_last_error());
  s = ft_parse_path("no_such_path", &parsed);
  CHECK(s == FT_ERROR_INVALID_ARGUMENT && ft_last_error()[0] != '\0', "parse_path: %s", ft_last_error());
  CHECK_OK(ft_parse_path(ft_path_name(FT_PATH_CPU_REFERENCE), &parsed));
  CHECK(parsed == FT_PATH_CPU_REFERENCE, "parsed %d", parsed);
  ft_tensor_destroy(tq), ft_tensor_destroy(tk3), ft_tensor_destroy(to);
  CHECK(ft_device_open(FT_BACKEND_CPU, 99, NULL) == FT_ERROR_INVALID_ARGUMENT, "NULL out");
}

/* options.scale: has_scale 0 is 1/sqrt(head_dim), has_scale 1 any finite value (negative too); NaN and +-Inf are
 * rejected whatever has_scale says, and a scale set without has_scale is an error rather than silently ignored. */
static void scale_options(ft_device* dev) {
  enum { D = 8 };
  int64_t qshape[4] = {1, 1, 1, D}, kshape[4] = {1, 2, 1, D};
  float q[D], k[2 * D], v[2 * D], out[D];
  ft_tensor *tq = NULL, *tk = NULL, *tv = NULL, *to = NULL;
  ft_options opt = ft_options_default();
  const float bad[3] = {NAN, INFINITY, -INFINITY};
  int i, has, unchanged;
  float by_default;
  ft_status s;

  /* Key 0 matches q (logit scale * D), key 1 is orthogonal (logit 0); v picks out key 0's weight. */
  for (i = 0; i < D; ++i) q[i] = 1.0f, k[i] = 1.0f, k[D + i] = 0.0f, v[i] = 1.0f, v[D + i] = 0.0f;
  CHECK_OK(ft_tensor_wrap_host(dev, q, FT_DTYPE_F32, 4, qshape, NULL, &tq));
  CHECK_OK(ft_tensor_wrap_host(dev, k, FT_DTYPE_F32, 4, kshape, NULL, &tk));
  CHECK_OK(ft_tensor_wrap_host(dev, v, FT_DTYPE_F32, 4, kshape, NULL, &tv));
  CHECK_OK(ft_tensor_wrap_host(dev, out, FT_DTYPE_F32, 4, qshape, NULL, &to));
  CHECK(opt.has_scale == 0 && opt.scale == 0.0f, "ft_options_default: has_scale %d, scale %g", opt.has_scale,
        (double)opt.scale);

  CHECK_OK(ft_attention_forward(tq, tk, tv, to, NULL, &opt, NULL));
  by_default = out[0];
  CHECK(fabs(by_default - 1.0 / (1.0 + exp(-D / sqrt((double)D)))) < 1e-6, "default scale: out %g", (double)by_default);
  opt.has_scale = 1;
  opt.scale = -0.5f;
  CHECK_OK(ft_attention_forward(tq, tk, tv, to, NULL, &opt, NULL));
  CHECK(fabs(out[0] - 1.0 / (1.0 + exp(0.5 * D))) < 1e-6, "scale -0.5: out %g", (double)out[0]);
  printf("scale default -> %.6f, scale -0.5 -> %.6f\n", (double)by_default, (double)out[0]);

  for (has = 0; has <= 1; ++has)
    for (i = 0; i < 3; ++i) {
      int j;
      opt.has_scale = has;
      opt.scale = bad[i];
      for (j = 0; j < D; ++j) out[j] = 12345.0f;
      s = ft_attention_forward(tq, tk, tv, to, NULL, &opt, NULL);
      CHECK(s == FT_ERROR_INVALID_ARGUMENT && strstr(ft_last_error(), "options.scale") != NULL,
            "has_scale %d, scale %g: %s: %s", has, (double)bad[i], ft_status_name(s), ft_last_error());
      unchanged = 1;
      for (j = 0; j < D; ++j) unchanged &= out[j] == 12345.0f;
      CHECK(unchanged, "a rejected scale wrote to out");
      s = ft_attention_plan(tq, tk, tv, to, NULL, &opt, NULL);
      CHECK(s == FT_ERROR_INVALID_ARGUMENT && strstr(ft_last_error(), "options.scale") != NULL, "plan: %s",
            ft_last_error());
    }
  opt.has_scale = 0;
  opt.scale = 0.5f; /* set, but has_scale forgotten */
  s = ft_attention_forward(tq, tk, tv, to, NULL, &opt, NULL);
  printf("scale 0.5 with has_scale 0 -> %s: %s\n", ft_status_name(s), ft_last_error());
  CHECK(s == FT_ERROR_INVALID_ARGUMENT && strstr(ft_last_error(), "has_scale") != NULL, "%s", ft_last_error());
  opt.has_scale = 2;
  s = ft_attention_forward(tq, tk, tv, to, NULL, &opt, NULL);
  CHECK(s == FT_ERROR_INVALID_ARGUMENT && strstr(ft_last_error(), "options.has_scale") != NULL, "%s", ft_last_error());
  ft_tensor_destroy(tq), ft_tensor_destroy(tk), ft_tensor_destroy(tv), ft_tensor_destroy(to);
}

/* Expects status `want` with a message containing `needle` and no tensor made; destroys one made by mistake. */
static void expect_status(ft_status got, ft_status want, const char* needle, ft_tensor** made, const char* what) {
  CHECK(got == want, "%s: status %s, want %s (%s)", what, ft_status_name(got), ft_status_name(want), ft_last_error());
  CHECK(strstr(ft_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", what, ft_last_error(), needle);
  if (made) {
    CHECK(*made == NULL, "%s: a tensor was made", what);
    ft_tensor_destroy(*made);
    *made = NULL;
  }
}

static int all_bytes(const void* p, size_t n, unsigned char value) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (((const unsigned char*)p)[i] != value) return 0;
  return 1;
}

/* Sizes, strides and offsets whose arithmetic would wrap: FT_ERROR_OVERFLOW (FT_ERROR_INVALID_ARGUMENT for dims < 1
 * or a bad rank) naming the argument, and nothing allocated or written. */
static void overflow_paths(ft_device* dev) {
  enum { B = 2, S = 5, H = 4, D = 64 };
  const int64_t kMax = INT64_MAX, half = (int64_t)1 << 61;
  int64_t finding[3] = {1, 1, 4611686018427387889LL}, view[4] = {2, 5, 4, 64};
  int64_t near_max[4] = {INT64_MAX, 2, 1, 8}, stride_wraps[4] = {1, INT64_MAX, INT64_MAX, 8};
  int64_t count_wraps[3] = {(int64_t)1 << 21, (int64_t)1 << 21, (int64_t)1 << 22};
  int64_t bytes_wrap[3] = {1, 1, (int64_t)1 << 62};
  int64_t negative[4] = {1, -5, 1, 8}, zero[4] = {1, 0, 1, 8}, minimal[3] = {1, 1, INT64_MIN};
  int64_t s4[4] = {2, 1, 1, 8}, huge_strides[4] = {INT64_MAX, 8, 8, 1}, s9[4] = {3, 3, 1, 8};
  int64_t sum_wraps[4] = {half, half, 8, 1}, shape[4] = {B, S, H, D}, long_seq[4] = {1, (int64_t)3 << 30, 1, 8};
  int64_t zero_strides[4] = {0, 0, 0, 1};
  static float out_img[B * S * H * D], small[16], q_img[8];
  ft_tensor *t = NULL, *v = NULL, *out = NULL, *base = NULL, *q = NULL, *big = NULL;
  size_t bytes = 0;
  ft_status st;

  /* The finding: create was OK with extent_bytes 2^64 - 60 over a 0-byte block; the view then passed its bounds
   * check and attention wrote out of bounds. */
  st = ft_tensor_create(dev, FT_DTYPE_F32, 3, finding, &t);
  printf("f32 [1, 1, 4611686018427387889] -> %s: %s\n", ft_status_name(st), ft_last_error());
  expect_status(st, FT_ERROR_OVERFLOW, "shape: a tensor of shape [1, 1, 4611686018427387889]", NULL, "finding: create");
  if (t != NULL) { /* a regression: replay the rest of the finding, so a sanitizer build reports the bad write */
    static float qkv[B * S * H * D];
    CHECK_OK(ft_tensor_wrap_host(dev, qkv, FT_DTYPE_F32, 4, view, NULL, &q));
    if (ft_tensor_view(t, 4, view, NULL, 0, &v) == FT_OK) ft_attention_forward(q, q, q, v, NULL, NULL, NULL);
    ft_tensor_destroy(v), ft_tensor_destroy(q), ft_tensor_destroy(t);
    v = q = t = NULL;
  }
  expect_status(ft_tensor_view(t, 4, view, NULL, 0, &v), FT_ERROR_INVALID_ARGUMENT, "base", &v, "finding: view");

  /* Dims near INT64_MAX, a contiguous stride that wraps, an element count and a byte count of exactly 2^64. */
  expect_status(ft_tensor_create(dev, FT_DTYPE_F16, 4, near_max, &t), FT_ERROR_OVERFLOW, "shape", &t, "near max");
  expect_status(ft_tensor_create(dev, FT_DTYPE_F16, 4, stride_wraps, &t), FT_ERROR_OVERFLOW,
                "shape: the contiguous stride", &t, "stride wraps");
  expect_status(ft_tensor_create(dev, FT_DTYPE_F16, 3, count_wraps, &t), FT_ERROR_OVERFLOW, "shape", &t,
                "2^64 elements");
  expect_status(ft_tensor_create(dev, FT_DTYPE_F32, 3, bytes_wrap, &t), FT_ERROR_OVERFLOW, "shape", &t, "2^64 bytes");
  expect_status(ft_tensor_wrap_host(dev, small, FT_DTYPE_F32, 4, near_max, NULL, &t), FT_ERROR_OVERFLOW, "shape", &t,
                "wrap near max");

  /* Negative, zero and minimal dims; ranks out of range. */
  expect_status(ft_tensor_create(dev, FT_DTYPE_F16, 4, negative, &t), FT_ERROR_INVALID_ARGUMENT,
                "shape: dimension 1 must be >= 1, got -5", &t, "negative dim");
  expect_status(ft_tensor_create(dev, FT_DTYPE_F16, 4, zero, &t), FT_ERROR_INVALID_ARGUMENT, "shape: dimension 1", &t,
                "zero dim");
  expect_status(ft_tensor_create(dev, FT_DTYPE_F16, 3, minimal, &t), FT_ERROR_INVALID_ARGUMENT, "shape: dimension 2",
                &t, "INT64_MIN dim");
  expect_status(ft_tensor_wrap_host(dev, small, FT_DTYPE_F16, 4, negative, NULL, &t), FT_ERROR_INVALID_ARGUMENT,
                "shape: dimension 1", &t, "wrap negative dim");
  expect_status(ft_tensor_create(dev, FT_DTYPE_F16, 5, s4, &t), FT_ERROR_INVALID_ARGUMENT, "rank", &t, "rank 5");
  expect_status(ft_tensor_create(dev, FT_DTYPE_F16, -1, s4, &t), FT_ERROR_INVALID_ARGUMENT, "rank", &t, "rank -1");

  /* Strides times shape beyond int64, and strides whose products' sum wraps. */
  expect_status(ft_tensor_wrap_host(dev, small, FT_DTYPE_F32, 4, s4, huge_strides, &t), FT_ERROR_OVERFLOW,
                "strides: a tensor of shape [2, 1, 1, 8] with strides [9223372036854775807", &t, "huge strides");
  expect_status(ft_tensor_wrap_host(dev, small, FT_DTYPE_F32, 4, s9, sum_wraps, &t), FT_ERROR_OVERFLOW, "strides", &t,
                "strides sum wraps");

  /* Views of a poisoned tensor: huge strides, offsets whose bytes or whose sum with the extent wrap. */
  memset(out_img, 0xA5, sizeof(out_img));
  CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F32, 4, shape, &out));
  CHECK_OK(ft_tensor_upload(out, out_img, sizeof(out_img)));
  expect_status(ft_tensor_view(out, 4, s4, huge_strides, 0, &v), FT_ERROR_OVERFLOW, "strides", &v, "view strides");
  expect_status(ft_tensor_view(out, 4, s9, sum_wraps, 0, &v), FT_ERROR_OVERFLOW, "strides", &v, "view strides sum");
  expect_status(ft_tensor_view(out, 4, s4, NULL, half, &v), FT_ERROR_OVERFLOW, "offset: 2305843009213693952 elements",
                &v, "view offset bytes wrap");
  expect_status(ft_tensor_view(out, 4, s4, NULL, half - 1, &v), FT_ERROR_OVERFLOW,
                "offset: 2305843009213693951 elements plus the view's 64 bytes exceed", &v,
                "view offset + extent wrap");
  expect_status(ft_tensor_view(out, 4, s4, NULL, kMax, &v), FT_ERROR_OVERFLOW, "offset", &v, "view offset INT64_MAX");
  expect_status(ft_tensor_view(out, 4, s4, NULL, -1, &v), FT_ERROR_INVALID_ARGUMENT, "offset", &v, "negative offset");
  /* The finding's view shape over memory too small for it, at an offset: refused, not wrapped. */
  expect_status(ft_tensor_view(out, 4, view, NULL, 1, &v), FT_ERROR_INVALID_ARGUMENT, "as_strided: the view needs",
                &v, "view past the end");

  /* Host memory whose byte range would wrap past the end of the address space. */
  expect_status(ft_tensor_wrap_host(dev, (void*)(~(uintptr_t)0 - 15), FT_DTYPE_F32, 4, s4, NULL, &t), FT_ERROR_OVERFLOW,
                "ptr", &t, "wrap at the top of the address space");

  /* Copies of the largest size. */
  expect_status(ft_tensor_upload(out, out_img, SIZE_MAX), FT_ERROR_INVALID_ARGUMENT, "bytes", NULL, "upload SIZE_MAX");
  expect_status(ft_tensor_download(out, out_img, SIZE_MAX), FT_ERROR_INVALID_ARGUMENT, "bytes", NULL,
                "download SIZE_MAX");
  CHECK(all_bytes(out_img, sizeof(out_img), 0xA5), "a refused download wrote to the host buffer");

  /* A rejected attention call writes nothing: seqlen 3 * 2^30 (beyond int32) through zero-stride views, out a view of
   * a poisoned tensor. */
  memset(q_img, 0, sizeof(q_img));
  CHECK_OK(ft_tensor_wrap_host(dev, q_img, FT_DTYPE_F32, 4, long_seq, zero_strides, &q));
  CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F32, 4, s4, &base));
  memset(small, 0xA5, sizeof(small));
  CHECK_OK(ft_tensor_upload(base, small, sizeof(small)));
  CHECK_OK(ft_tensor_view(base, 4, long_seq, zero_strides, 0, &big));
  expect_status(ft_attention_forward(q, q, q, big, NULL, NULL, NULL), FT_ERROR_OVERFLOW, "seqlen_q", NULL,
                "attention with seqlen past int32");
  memset(small, 0, sizeof(small));
  CHECK_OK(ft_tensor_download(base, small, sizeof(small)));
  CHECK(all_bytes(small, sizeof(small), 0xA5), "a rejected attention call wrote to out");
  CHECK_OK(ft_tensor_extent_bytes(out, &bytes));
  CHECK(bytes == sizeof(out_img), "extent_bytes %zu", bytes);
  memset(out_img, 0, sizeof(out_img));
  CHECK_OK(ft_tensor_download(out, out_img, sizeof(out_img)));
  CHECK(all_bytes(out_img, sizeof(out_img), 0xA5), "a refused view or copy wrote to its base tensor");
  ft_tensor_destroy(big), ft_tensor_destroy(base), ft_tensor_destroy(q), ft_tensor_destroy(out);
}

/* ---- The backward. ------------------------------------------------------------------------------------------ */

enum { BB = 1, BSMAX = 5, BHQ = 2, BHKV = 1, BD = 8 }; /* the backward's tiny cases: GQA 2:1, head dim 8 */

/* Gradients of attention in double, from q, k, v (contiguous [B, S, H, D]) and dout alone, with out and lse of its
 * own: P = softmax(scale·q·kᵀ) per row (masked keys 0), O = P·v, dV = Pᵀ·dO, dP = dO·vᵀ, Delta = rowsum(dO∘O),
 * dS = P∘(dP - Delta), dQ = scale·dS·k, dK = scale·dSᵀ·q; dK and dV summed over the query heads of a kv head. Rows
 * with no visible key get zero gradients. */
static void reference_backward(const Case* c, double scale, const float* q, const float* k, const float* v,
                               const float* dout, double* dq, double* dk, double* dv) {
  int64_t group = c->Hq / c->Hkv, b, h, i, j, d;
  size_t nk = (size_t)(c->B * c->Sk * c->Hkv * c->D);
  double p[BSMAX], o[BD], dp[BSMAX];
  for (j = 0; j < (int64_t)nk; ++j) dk[j] = dv[j] = 0.0;
  for (b = 0; b < c->B; ++b)
    for (h = 0; h < c->Hq; ++h)
      for (i = 0; i < c->Sq; ++i) {
        int64_t hk = h / group, last = c->causal ? i + c->Sk - c->Sq : c->Sk - 1;
        const float* qr = q + ((b * c->Sq + i) * c->Hq + h) * c->D;
        const float* dor = dout + ((b * c->Sq + i) * c->Hq + h) * c->D;
        double* dqr = dq + ((b * c->Sq + i) * c->Hq + h) * c->D;
        double m = -INFINITY, sum = 0.0, delta = 0.0;
        for (d = 0; d < c->D; ++d) dqr[d] = 0.0, o[d] = 0.0;
        if (last < 0) continue;
        if (last > c->Sk - 1) last = c->Sk - 1;
        for (j = 0; j <= last; ++j) {
          double dot = 0.0;
          for (d = 0; d < c->D; ++d) dot += (double)qr[d] * k[((b * c->Sk + j) * c->Hkv + hk) * c->D + d];
          p[j] = dot * scale;
          if (p[j] > m) m = p[j];
        }
        for (j = 0; j <= last; ++j) sum += p[j] = exp(p[j] - m);
        for (j = 0; j <= last; ++j) {
          p[j] /= sum;
          for (d = 0; d < c->D; ++d) o[d] += p[j] * v[((b * c->Sk + j) * c->Hkv + hk) * c->D + d];
        }
        for (d = 0; d < c->D; ++d) delta += (double)dor[d] * o[d];
        for (j = 0; j <= last; ++j) {
          const float* kr = k + ((b * c->Sk + j) * c->Hkv + hk) * c->D;
          const float* vr = v + ((b * c->Sk + j) * c->Hkv + hk) * c->D;
          double ds;
          dp[j] = 0.0;
          for (d = 0; d < c->D; ++d) dp[j] += (double)dor[d] * vr[d];
          ds = p[j] * (dp[j] - delta);
          for (d = 0; d < c->D; ++d) {
            size_t kv_at = (size_t)(((b * c->Sk + j) * c->Hkv + hk) * c->D + d);
            dv[kv_at] += p[j] * dor[d];
            dk[kv_at] += scale * ds * qr[d];
            dqr[d] += scale * ds * kr[d];
          }
        }
      }
}

/* ft_attention_backward on the CPU device, f32, against reference_backward; ft_attention_backward_plan's path,
 * kernel and workspace_bytes. The gradients start as NaN, so every element must be written. */
static void backward_case(ft_device* dev, const Case* c) {
  int64_t qshape[4] = {c->B, c->Sq, c->Hq, c->D}, kshape[4] = {c->B, c->Sk, c->Hkv, c->D};
  int64_t lshape[3] = {c->B, c->Hq, c->Sq};
  float q[BB * BSMAX * BHQ * BD], k[BB * BSMAX * BHKV * BD], v[BB * BSMAX * BHKV * BD], out[BB * BSMAX * BHQ * BD];
  float lse[BB * BHQ * BSMAX], dout[BB * BSMAX * BHQ * BD];
  float dq[BB * BSMAX * BHQ * BD], dk[BB * BSMAX * BHKV * BD], dv[BB * BSMAX * BHKV * BD];
  double rdq[BB * BSMAX * BHQ * BD], rdk[BB * BSMAX * BHKV * BD], rdv[BB * BSMAX * BHKV * BD];
  ft_tensor *t[9] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  ft_options opt = ft_options_default();
  ft_result plan, res;
  size_t nq = (size_t)(c->B * c->Sq * c->Hq * c->D), nk = (size_t)(c->B * c->Sk * c->Hkv * c->D), i;
  double scale = 1.0 / sqrt((double)c->D), eq, ek, ev;
  int zero_rows_ok = 1;

  for (i = 0; i < nq; ++i) q[i] = rand_uniform(), dout[i] = rand_uniform(), dq[i] = NAN;
  for (i = 0; i < nk; ++i) k[i] = rand_uniform(), v[i] = rand_uniform(), dk[i] = dv[i] = NAN;
  opt.causal = c->causal;
  CHECK_OK(ft_tensor_wrap_host(dev, q, FT_DTYPE_F32, 4, qshape, NULL, &t[0]));
  CHECK_OK(ft_tensor_wrap_host(dev, k, FT_DTYPE_F32, 4, kshape, NULL, &t[1]));
  CHECK_OK(ft_tensor_wrap_host(dev, v, FT_DTYPE_F32, 4, kshape, NULL, &t[2]));
  CHECK_OK(ft_tensor_wrap_host(dev, out, FT_DTYPE_F32, 4, qshape, NULL, &t[3]));
  CHECK_OK(ft_tensor_wrap_host(dev, lse, FT_DTYPE_F32, 3, lshape, NULL, &t[4]));
  CHECK_OK(ft_tensor_wrap_host(dev, dout, FT_DTYPE_F32, 4, qshape, NULL, &t[5]));
  CHECK_OK(ft_tensor_wrap_host(dev, dq, FT_DTYPE_F32, 4, qshape, NULL, &t[6]));
  CHECK_OK(ft_tensor_wrap_host(dev, dk, FT_DTYPE_F32, 4, kshape, NULL, &t[7]));
  CHECK_OK(ft_tensor_wrap_host(dev, dv, FT_DTYPE_F32, 4, kshape, NULL, &t[8]));
  CHECK_OK(ft_attention_forward(t[0], t[1], t[2], t[3], t[4], &opt, NULL));

  memset(&plan, 0x5A, sizeof(plan));
  CHECK_OK(ft_attention_backward_plan(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], &opt, &plan));
  CHECK(plan.path == FT_PATH_CPU_REFERENCE && strcmp(plan.kernel, "cpu_reference_bwd<f32>") == 0, "plan: %s %s",
        plan.path_name, plan.kernel);
  CHECK(plan.workspace_bytes == 0, "the CPU reference needs no workspace, plan says %llu",
        (unsigned long long)plan.workspace_bytes);
  CHECK(isnan(dq[0]) && isnan(dk[0]) && isnan(dv[0]), "plan wrote the gradients");
  CHECK_OK(ft_attention_backward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], &opt, &res));
  CHECK(strcmp(ft_last_error(), "") == 0, "last error after success: %s", ft_last_error());
  CHECK(res.path == plan.path && strcmp(res.kernel, plan.kernel) == 0 && res.workspace_bytes == plan.workspace_bytes,
        "ran %s, planned %s", res.kernel, plan.kernel);

  reference_backward(c, scale, q, k, v, dout, rdq, rdk, rdv);
  eq = rel_error(rdq, dq, nq);
  ek = rel_error(rdk, dk, nk);
  ev = rel_error(rdv, dv, nk);
  for (i = 0; i < nq; ++i) /* rows that see no key: exactly zero */
    if (c->causal && (int64_t)(i / (size_t)(c->Hq * c->D)) % c->Sq + c->Sk - c->Sq < 0) zero_rows_ok &= dq[i] == 0.0f;
  printf("backward f32 B=%lld Sq=%lld Sk=%lld Hq=%lld Hkv=%lld D=%lld causal=%d: rel err dq %.3g, dk %.3g, dv %.3g "
         "(kernel %s, workspace %llu bytes)\n",
         (long long)c->B, (long long)c->Sq, (long long)c->Sk, (long long)c->Hq, (long long)c->Hkv, (long long)c->D,
         c->causal, eq, ek, ev, res.kernel, (unsigned long long)res.workspace_bytes);
  /* f32 gradients from the f32 out and lse the forward wrote: the reference's own double O and lse differ by f32
   * rounding only. */
  CHECK(eq <= 1e-5 && ek <= 1e-5 && ev <= 1e-5, "rel error dq %g, dk %g, dv %g", eq, ek, ev);
  CHECK(zero_rows_ok, "a row that sees no key has a nonzero dq");
  for (i = 0; i < 9; ++i) ft_tensor_destroy(t[i]);
}

/* A rejected backward: status, a message naming the argument, and no gradient written. */
static void expect_backward_error(ft_tensor* const* t, const ft_options* opt, const unsigned char* grads[3],
                                  const size_t grad_bytes[3], ft_status want, const char* needle, const char* what) {
  ft_status st = ft_attention_backward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], opt, NULL);
  int g;
  printf("backward %s -> %s: %s\n", what, ft_status_name(st), ft_last_error());
  expect_status(st, want, needle, NULL, what);
  for (g = 0; g < 3; ++g) CHECK(all_bytes(grads[g], grad_bytes[g], 0xAB), "%s: gradient %d was written", what, g);
  st = ft_attention_backward_plan(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], opt, NULL);
  expect_status(st, want, needle, NULL, what);
}

/* NULL arguments, bad shapes and a workspace over a gradient: refused, nothing written. */
static void backward_errors(ft_device* dev) {
  enum { S = 4, H = 2, D = 8 };
  int64_t shape[4] = {1, S, H, D}, longer[4] = {1, S + 1, H, D}, lshape[3] = {1, H, S}, wshape[3] = {1, 1, 16};
  static float in[6][S * H * D], lse[H * S], grads[3][S * H * D], other[(S + 1) * H * D];
  const unsigned char* g[3] = {(unsigned char*)grads[0], (unsigned char*)grads[1], (unsigned char*)grads[2]};
  const size_t gb[3] = {sizeof(grads[0]), sizeof(grads[1]), sizeof(grads[2])};
  const char* names[9] = {"q", "k", "v", "out", "lse", "dout", "dq", "dk", "dv"};
  ft_tensor *t[9], *call[9], *bad = NULL, *ws = NULL;
  ft_options opt = ft_options_default();
  char what[64];
  size_t i, j;

  for (i = 0; i < 6; ++i)
    for (j = 0; j < S * H * D; ++j) in[i][j] = rand_uniform();
  memset(grads, 0xAB, sizeof(grads));
  for (i = 0; i < 9; ++i) t[i] = NULL;
  for (i = 0; i < 4; ++i) CHECK_OK(ft_tensor_wrap_host(dev, in[i], FT_DTYPE_F32, 4, shape, NULL, &t[i]));
  CHECK_OK(ft_tensor_wrap_host(dev, lse, FT_DTYPE_F32, 3, lshape, NULL, &t[4]));
  CHECK_OK(ft_tensor_wrap_host(dev, in[5], FT_DTYPE_F32, 4, shape, NULL, &t[5]));
  for (i = 0; i < 3; ++i) CHECK_OK(ft_tensor_wrap_host(dev, grads[i], FT_DTYPE_F32, 4, shape, NULL, &t[6 + i]));
  CHECK_OK(ft_attention_forward(t[0], t[1], t[2], t[3], t[4], NULL, NULL));

  for (i = 0; i < 9; ++i) { /* each argument NULL in turn */
    memcpy(call, t, sizeof(call));
    call[i] = NULL;
    snprintf(what, sizeof(what), "NULL %s", names[i]);
    expect_backward_error(call, NULL, g, gb, FT_ERROR_INVALID_ARGUMENT, "must not be NULL", what);
    CHECK(strstr(ft_last_error(), names[i]) != NULL, "%s: message '%s'", what, ft_last_error());
  }
  /* A gradient (or dout) one row longer than q: the shape rule names it. */
  CHECK_OK(ft_tensor_wrap_host(dev, other, FT_DTYPE_F32, 4, longer, NULL, &bad));
  for (i = 5; i < 9; ++i) {
    memcpy(call, t, sizeof(call));
    call[i] = bad;
    snprintf(what, sizeof(what), "%s: shape [1, 5, 2, 8]", names[i]);
    expect_backward_error(call, NULL, g, gb, FT_ERROR_SHAPE_MISMATCH, what, what);
  }
  /* The workspace over dv's memory. */
  CHECK_OK(ft_tensor_view(t[8], 3, wshape, NULL, 0, &ws));
  opt.workspace = ws;
  expect_backward_error(t, &opt, g, gb, FT_ERROR_ALIASING, "options.workspace: overlaps dv's memory",
                        "workspace over dv");
  ft_tensor_destroy(ws), ft_tensor_destroy(bad);
  for (i = 0; i < 9; ++i) ft_tensor_destroy(t[i]);
}

/* ---- Serving layouts: a paged KV cache with an append, a packed variable-length batch. -------------------------- */

enum { SP = 16, SH = 2, SHKV = 1, SD = 8, SPAGES = 6, SPER = 2 }; /* page size, heads, head dim, pages */

/* One host view to make: wrap_each() makes each, contiguous, or reports the first failure. */
typedef struct {
  void* ptr;
  int dtype, rank;
  const int64_t* shape;
  ft_tensor** out;
} HostView;

static int wrap_each(ft_device* dev, const HostView* views, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (ft_tensor_wrap_host(dev, views[i].ptr, views[i].dtype, views[i].rank, views[i].shape, NULL, views[i].out) !=
        FT_OK) {
      ++g_failures;
      fprintf(stderr, "%s:%d: wrapping view %d: %s\n", __FILE__, __LINE__, (int)i, ft_last_error());
      return 0;
    }
  return 1;
}

/* Sequence b's keys and values from a paged cache, gathered into dense [n, Hkv, D] rows for reference(). */
static void gather_pages(const float* cache, const int32_t* table, int64_t b, int64_t n, float* dense) {
  int64_t j;
  for (j = 0; j < n; ++j)
    memcpy(dense + j * SHKV * SD, cache + ((int64_t)table[b * SPER + j / SP] * SP + j % SP) * SHKV * SD,
           sizeof(float) * SHKV * SD);
}

/* Two sequences holding 5 and 20 keys in shuffled pages, 2 query rows each, one new key each appended by the call:
 * out and lse against reference() over the gathered keys, and the new keys in their slots. */
static void paged_case(ft_device* dev, int causal) {
  enum { B = 2, SQ = 2, NEW = 1 };
  int64_t qshape[4] = {B, SQ, SH, SD}, cshape[4] = {SPAGES, SP, SHKV, SD}, tshape[2] = {B, SPER}, lshape[3] = {B, SH, SQ};
  int64_t nshape[4] = {B, NEW, SHKV, SD}, bshape[1] = {B};
  static float kc[SPAGES * SP * SHKV * SD], vc[SPAGES * SP * SHKV * SD], q[B * SQ * SH * SD], out[B * SQ * SH * SD];
  static float kn[B * NEW * SHKV * SD], vn[B * NEW * SHKV * SD], lse[B * SH * SQ];
  static float kd[SPER * SP * SHKV * SD], vd[SPER * SP * SHKV * SD];
  int32_t table[B * SPER] = {4, 1, 0, 3}, seqlens[B] = {5, 20};
  ft_tensor *tq = NULL, *tkc = NULL, *tvc = NULL, *tt = NULL, *ts = NULL, *to = NULL, *tl = NULL, *tkn = NULL,
            *tvn = NULL;
  const HostView views[] = {{q, FT_DTYPE_F32, 4, qshape, &tq},      {kc, FT_DTYPE_F32, 4, cshape, &tkc},
                            {vc, FT_DTYPE_F32, 4, cshape, &tvc},    {out, FT_DTYPE_F32, 4, qshape, &to},
                            {lse, FT_DTYPE_F32, 3, lshape, &tl},    {kn, FT_DTYPE_F32, 4, nshape, &tkn},
                            {vn, FT_DTYPE_F32, 4, nshape, &tvn}};
  ft_options opt = ft_options_default();
  ft_result res;
  double ref[SQ * SH * SD], ref_lse[SH * SQ];
  size_t i;
  int64_t b, j;

  for (i = 0; i < sizeof(kc) / sizeof(kc[0]); ++i) kc[i] = rand_uniform(), vc[i] = rand_uniform();
  for (i = 0; i < sizeof(q) / sizeof(q[0]); ++i) q[i] = rand_uniform(), out[i] = NAN;
  for (i = 0; i < sizeof(kn) / sizeof(kn[0]); ++i) kn[i] = rand_uniform(), vn[i] = rand_uniform();
  for (i = 0; i < sizeof(lse) / sizeof(lse[0]); ++i) lse[i] = NAN;
  if (!wrap_each(dev, views, sizeof(views) / sizeof(views[0]))) return;
  CHECK_OK(ft_tensor_create(dev, FT_DTYPE_I32, 2, tshape, &tt)); /* owned tables, filled by upload */
  CHECK_OK(ft_tensor_upload(tt, table, sizeof(table)));
  CHECK_OK(ft_tensor_create(dev, FT_DTYPE_I32, 1, bshape, &ts));
  CHECK_OK(ft_tensor_upload(ts, seqlens, sizeof(seqlens)));
  opt.causal = causal;

  CHECK_OK(ft_attention_with_kvcache_plan(tq, tkc, tvc, tt, ts, to, tl, tkn, tvn, &opt, &res));
  CHECK(res.path == FT_PATH_CPU_REFERENCE && isnan(out[0]), "plan: path %s, out[0] %g", res.path_name, (double)out[0]);
  CHECK_OK(ft_attention_with_kvcache(tq, tkc, tvc, tt, ts, to, tl, tkn, tvn, &opt, &res));
  printf("paged%s -> %s (%s)\n", causal ? " causal" : "", res.path_name, res.kernel);
  for (b = 0; b < B; ++b) {
    const int64_t n = seqlens[b] + NEW, ks[4] = {n * SHKV * SD, SHKV * SD, SD, 1}, qs[4] = {SQ * SH * SD, SH * SD, SD, 1};
    Case c;
    double err, lerr;
    c.B = 1, c.Sq = SQ, c.Sk = n, c.Hq = SH, c.Hkv = SHKV, c.D = SD, c.causal = causal;
    gather_pages(kc, table, b, n, kd);
    gather_pages(vc, table, b, n, vd);
    for (j = 0; j < SHKV * SD; ++j) { /* the appended key landed where sequence b's key n - 1 lives */
      CHECK(kd[(n - 1) * SHKV * SD + j] == kn[b * SHKV * SD + j], "k_new of sequence %d not in the cache", (int)b);
      CHECK(vd[(n - 1) * SHKV * SD + j] == vn[b * SHKV * SD + j], "v_new of sequence %d not in the cache", (int)b);
    }
    reference(&c, 1.0 / sqrt((double)SD), q + b * SQ * SH * SD, qs, kd, ks, vd, ks, ref, ref_lse);
    err = rel_error(ref, out + b * SQ * SH * SD, SQ * SH * SD);
    lerr = lse_error(ref_lse, lse + b * SH * SQ, SH * SQ);
    CHECK(err < 1e-5 && lerr < 1e-5, "paged sequence %d: rel error %g, lse error %g", (int)b, err, lerr);
  }
  ft_tensor_destroy(tq), ft_tensor_destroy(tkc), ft_tensor_destroy(tvc), ft_tensor_destroy(tt);
  ft_tensor_destroy(ts), ft_tensor_destroy(to), ft_tensor_destroy(tl), ft_tensor_destroy(tkn), ft_tensor_destroy(tvn);
}

/* Three sequences of 1x4, 3x3 and 2x0 (query x key rows) packed, GQA 2:1; lse is [Hq, total_q]. */
static void varlen_case(ft_device* dev, int causal) {
  enum { TQ = 6, TK = 7, NB = 3 };
  int32_t cq[NB + 1] = {0, 1, 4, 6}, ck[NB + 1] = {0, 4, 7, 7};
  int64_t qshape[3] = {TQ, SH, SD}, kshape[3] = {TK, SHKV, SD}, lshape[2] = {SH, TQ}, cshape[1] = {NB + 1};
  float q[TQ * SH * SD], k[TK * SHKV * SD], v[TK * SHKV * SD], out[TQ * SH * SD], lse[SH * TQ];
  double ref[TQ * SH * SD], ref_lse[SH * TQ];
  ft_tensor *tq = NULL, *tk = NULL, *tv = NULL, *to = NULL, *tl = NULL, *tcq = NULL, *tck = NULL;
  const HostView views[] = {{q, FT_DTYPE_F32, 3, qshape, &tq},   {k, FT_DTYPE_F32, 3, kshape, &tk},
                            {v, FT_DTYPE_F32, 3, kshape, &tv},   {out, FT_DTYPE_F32, 3, qshape, &to},
                            {lse, FT_DTYPE_F32, 2, lshape, &tl}, {cq, FT_DTYPE_I32, 1, cshape, &tcq},
                            {ck, FT_DTYPE_I32, 1, cshape, &tck}};
  ft_options opt = ft_options_default();
  ft_result res;
  size_t i;
  int64_t b, h, r;

  for (i = 0; i < TQ * SH * SD; ++i) q[i] = rand_uniform(), out[i] = NAN;
  for (i = 0; i < TK * SHKV * SD; ++i) k[i] = rand_uniform(), v[i] = rand_uniform();
  for (i = 0; i < SH * TQ; ++i) lse[i] = NAN;
  if (!wrap_each(dev, views, sizeof(views) / sizeof(views[0]))) return;
  opt.causal = causal;
  CHECK_OK(ft_attention_varlen_plan(tq, tk, tv, to, tl, tcq, tck, 3, 4, &opt, &res));
  CHECK(res.path == FT_PATH_CPU_REFERENCE && isnan(out[0]), "plan: path %s", res.path_name);
  CHECK_OK(ft_attention_varlen(tq, tk, tv, to, tl, tcq, tck, 3, 4, &opt, &res));
  printf("varlen%s -> %s (%s)\n", causal ? " causal" : "", res.path_name, res.kernel);
  for (b = 0; b < NB; ++b) {
    const int64_t sq = cq[b + 1] - cq[b], sk = ck[b + 1] - ck[b];
    const int64_t qs[4] = {TQ * SH * SD, SH * SD, SD, 1}, ks[4] = {TK * SHKV * SD, SHKV * SD, SD, 1};
    double lse_b[SH * TQ];
    Case c;
    c.B = 1, c.Sq = sq, c.Sk = sk, c.Hq = SH, c.Hkv = SHKV, c.D = SD, c.causal = causal;
    reference(&c, 1.0 / sqrt((double)SD), q + cq[b] * SH * SD, qs, k + ck[b] * SHKV * SD, ks, v + ck[b] * SHKV * SD,
              ks, ref + cq[b] * SH * SD, lse_b);
    for (h = 0; h < SH; ++h) /* [1, Hq, sq] -> [Hq, total_q] */
      for (r = 0; r < sq; ++r) ref_lse[h * TQ + cq[b] + r] = lse_b[h * sq + r];
  }
  CHECK(rel_error(ref, out, TQ * SH * SD) < 1e-5, "varlen: rel error %g", rel_error(ref, out, TQ * SH * SD));
  CHECK(lse_error(ref_lse, lse, SH * TQ) < 1e-5, "varlen: lse error %g", lse_error(ref_lse, lse, SH * TQ));
  ft_tensor_destroy(tq), ft_tensor_destroy(tk), ft_tensor_destroy(tv), ft_tensor_destroy(to), ft_tensor_destroy(tl);
  ft_tensor_destroy(tcq), ft_tensor_destroy(tck);
}

/* NULL arguments, a block_table entry past the pages, a cu_seqlens that does not start at 0: the right code, a
 * message naming the argument, and out, lse and the caches (which k_new would have written) untouched. */
static void serving_errors(ft_device* dev) {
  enum { B = 1, SQ = 1 };
  int64_t qshape[4] = {B, SQ, SH, SD}, cshape[4] = {2, SP, SHKV, SD}, tshape[2] = {B, 1}, lshape[3] = {B, SH, SQ};
  int64_t nshape[4] = {B, 1, SHKV, SD}, bshape[1] = {B}, q3[3] = {SQ, SH, SD}, k3[3] = {2, SHKV, SD};
  int64_t cu_shape[1] = {2}, l2[2] = {SH, SQ};
  static float q[SQ * SH * SD], kc[2 * SP * SHKV * SD], vc[2 * SP * SHKV * SD], out[SQ * SH * SD], lse[SH * SQ];
  static float kn[SHKV * SD], vn[SHKV * SD];
  int32_t table[1] = {2 /* only pages 0 and 1 exist */}, seqlens[1] = {3}, cu_q[2] = {1, 1}, cu_k[2] = {0, 2};
  ft_tensor *tq = NULL, *tkc = NULL, *tvc = NULL, *tt = NULL, *ts = NULL, *to = NULL, *tl = NULL, *tkn = NULL,
            *tvn = NULL, *vq = NULL, *vk = NULL, *vo = NULL, *vl = NULL, *tcq = NULL, *tck = NULL;
  const HostView views[] = {{q, FT_DTYPE_F32, 4, qshape, &tq},          {kc, FT_DTYPE_F32, 4, cshape, &tkc},
                            {vc, FT_DTYPE_F32, 4, cshape, &tvc},        {table, FT_DTYPE_I32, 2, tshape, &tt},
                            {seqlens, FT_DTYPE_I32, 1, bshape, &ts},    {out, FT_DTYPE_F32, 4, qshape, &to},
                            {lse, FT_DTYPE_F32, 3, lshape, &tl},        {kn, FT_DTYPE_F32, 4, nshape, &tkn},
                            {vn, FT_DTYPE_F32, 4, nshape, &tvn}};
  const HostView packed[] = {{q, FT_DTYPE_F32, 3, q3, &vq},              {kc, FT_DTYPE_F32, 3, k3, &vk},
                             {out, FT_DTYPE_F32, 3, q3, &vo},            {lse, FT_DTYPE_F32, 2, l2, &vl},
                             {cu_q, FT_DTYPE_I32, 1, cu_shape, &tcq},    {cu_k, FT_DTYPE_I32, 1, cu_shape, &tck}};
  ft_result res;
  ft_status st;
  int pass;

  memset(q, 0, sizeof(q)), memset(kc, 0x11, sizeof(kc)), memset(vc, 0x22, sizeof(vc));
  memset(out, 0xAB, sizeof(out)), memset(lse, 0xAB, sizeof(lse)), memset(kn, 0, sizeof(kn)), memset(vn, 0, sizeof(vn));
  if (!wrap_each(dev, views, sizeof(views) / sizeof(views[0]))) return;

  st = ft_attention_with_kvcache(tq, tkc, tvc, NULL, ts, to, tl, NULL, NULL, NULL, NULL);
  expect_status(st, FT_ERROR_INVALID_ARGUMENT, "block_table", NULL, "kvcache NULL block_table");
  st = ft_attention_with_kvcache_plan(NULL, tkc, tvc, tt, ts, to, tl, NULL, NULL, NULL, NULL);
  expect_status(st, FT_ERROR_INVALID_ARGUMENT, "q", NULL, "kvcache plan NULL q");
  st = ft_attention_with_kvcache(tq, tkc, tvc, tt, ts, to, tl, tkn, NULL, NULL, NULL);
  expect_status(st, FT_ERROR_INVALID_ARGUMENT, "v_new", NULL, "k_new without v_new");
  for (pass = 0; pass < 2; ++pass) {
    memset(&res, 0x5A, sizeof(res));
    st = pass ? ft_attention_with_kvcache_plan(tq, tkc, tvc, tt, ts, to, tl, tkn, tvn, NULL, &res)
              : ft_attention_with_kvcache(tq, tkc, tvc, tt, ts, to, tl, tkn, tvn, NULL, &res);
    if (!pass) printf("block_table entry 2 of 2 pages -> %s: %s\n", ft_status_name(st), ft_last_error());
    expect_status(st, FT_ERROR_INVALID_ARGUMENT, "cache.block_table: entry [0, 0] = 2", NULL, "entry out of range");
    CHECK(all_bytes(out, sizeof(out), 0xAB) && all_bytes(lse, sizeof(lse), 0xAB), "a rejected call wrote out or lse");
    CHECK(all_bytes(kc, sizeof(kc), 0x11) && all_bytes(vc, sizeof(vc), 0x22), "a rejected call wrote the cache");
    CHECK(all_bytes(&res, sizeof(res), 0x5A), "a rejected call filled the result");
  }

  if (!wrap_each(dev, packed, sizeof(packed) / sizeof(packed[0]))) return;
  st = ft_attention_varlen(vq, vk, vk, vo, vl, NULL, tck, 1, 2, NULL, NULL);
  expect_status(st, FT_ERROR_INVALID_ARGUMENT, "cu_seqlens_q", NULL, "varlen NULL cu_seqlens_q");
  st = ft_attention_varlen(vq, vk, vk, vo, vl, tcq, tck, 1, 2, NULL, NULL);
  printf("cu_seqlens_q starting at 1 -> %s: %s\n", ft_status_name(st), ft_last_error());
  expect_status(st, FT_ERROR_INVALID_ARGUMENT, "lengths.cu_seqlens_q: must start at 0", NULL, "cu_seqlens_q at 1");
  st = ft_attention_varlen_plan(vq, vk, vk, vo, vl, tcq, tck, 1, -1, NULL, NULL);
  expect_status(st, FT_ERROR_INVALID_ARGUMENT, "lengths.max_seqlen_k", NULL, "negative max_seqlen_k");
  CHECK(all_bytes(out, sizeof(out), 0xAB) && all_bytes(lse, sizeof(lse), 0xAB), "a rejected varlen call wrote");
  ft_tensor_destroy(tq), ft_tensor_destroy(tkc), ft_tensor_destroy(tvc), ft_tensor_destroy(tt), ft_tensor_destroy(ts);
  ft_tensor_destroy(to), ft_tensor_destroy(tl), ft_tensor_destroy(tkn), ft_tensor_destroy(tvn);
  ft_tensor_destroy(vq), ft_tensor_destroy(vk), ft_tensor_destroy(vo), ft_tensor_destroy(vl);
  ft_tensor_destroy(tcq), ft_tensor_destroy(tck);
}

/* ---- Variants (since 0.5.0): window, softcap, ALiBi, sinks and the gradient of sinks. -------------------------- */

enum { VSQ = 4, VSK = 6, VH = 2, VD = 8 }; /* B 1, MQA 2:1, Sq < Sk */
enum { V_WINDOW = 1, V_SOFTCAP = 2, V_ALIBI = 4, V_SINKS = 8 };
#define V_WL 2      /* window_left */
#define V_WR 1      /* window_right */
#define V_CAP 0.75f /* small enough to bend these scores */

/* Attention with the variants of `mask` in double, from their definitions (q [Sq, H, D], k and v [Sk, 1, D]). */
static void reference_variants(int mask, const float* q, const float* k, const float* v, const float* slopes,
                               const float* sinks, double* out, double* lse) {
  int64_t h, i, j, d;
  double scale = 1.0 / sqrt((double)VD);
  for (h = 0; h < VH; ++h)
    for (i = 0; i < VSQ; ++i) {
      const int64_t diag = i + VSK - VSQ;
      double s[VSK], m = (mask & V_SINKS) ? sinks[h] : -INFINITY, l, *o = out + (i * VH + h) * VD;
      int seen[VSK];
      for (j = 0; j < VSK; ++j) {
        double dot = 0.0;
        seen[j] = !(mask & V_WINDOW) || (j >= diag - V_WL && j <= diag + V_WR);
        for (d = 0; d < VD; ++d) dot += (double)q[(i * VH + h) * VD + d] * k[j * VD + d];
        s[j] = dot * scale;
        if (mask & V_SOFTCAP) s[j] = V_CAP * tanh(s[j] / V_CAP);
        if (mask & V_ALIBI) s[j] -= slopes[h] * fabs((double)(diag - j));
        if (seen[j] && s[j] > m) m = s[j];
      }
      l = (mask & V_SINKS) ? exp(sinks[h] - m) : 0.0;
      for (d = 0; d < VD; ++d) o[d] = 0.0;
      for (j = 0; j < VSK; ++j)
        if (seen[j]) {
          double p = exp(s[j] - m);
          l += p;
          for (d = 0; d < VD; ++d) o[d] += p * v[j * VD + d];
        }
      for (d = 0; d < VD; ++d) o[d] /= l;
      lse[h * VSQ + i] = m + log(l);
    }
}

/* Each ft_options variant field alone and all together, dense and varlen (one sequence: the same call), against
 * reference_variants; then the backward with sinks writes dsinks = -sum_i exp(sink - lse_i) * rowsum(dout * out). */
static void variants_case(ft_device* dev) {
  int64_t qshape[4] = {1, VSQ, VH, VD}, kshape[4] = {1, VSK, 1, VD}, lshape[3] = {1, VH, VSQ}, hshape[1] = {VH};
  int64_t vq[3] = {VSQ, VH, VD}, vk[3] = {VSK, 1, VD}, vl[2] = {VH, VSQ}, cshape[1] = {2};
  float q[VSQ * VH * VD], k[VSK * VD], v[VSK * VD], out[VSQ * VH * VD], lse[VH * VSQ], dout[VSQ * VH * VD];
  float vout[VSQ * VH * VD], vlse[VH * VSQ], dq[VSQ * VH * VD], dk[VSK * VD], dv[VSK * VD];
  float slopes[VH] = {0.5f, 0.25f}, sinks[VH] = {0.3f, -1.0f}, dsinks[VH] = {NAN, NAN};
  int32_t cq[2] = {0, VSQ}, ck[2] = {0, VSK};
  double ref[VSQ * VH * VD], ref_lse[VH * VSQ];
  ft_tensor *t[9] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}, *ts = NULL, *tk = NULL, *tds = NULL;
  ft_tensor *wq = NULL, *wk = NULL, *wv = NULL, *wo = NULL, *wl = NULL, *tcq = NULL, *tck = NULL;
  const HostView views[] = {
      {q, FT_DTYPE_F32, 4, qshape, &t[0]},    {k, FT_DTYPE_F32, 4, kshape, &t[1]},
      {v, FT_DTYPE_F32, 4, kshape, &t[2]},    {out, FT_DTYPE_F32, 4, qshape, &t[3]},
      {lse, FT_DTYPE_F32, 3, lshape, &t[4]},  {dout, FT_DTYPE_F32, 4, qshape, &t[5]},
      {dq, FT_DTYPE_F32, 4, qshape, &t[6]},   {dk, FT_DTYPE_F32, 4, kshape, &t[7]},
      {dv, FT_DTYPE_F32, 4, kshape, &t[8]},   {slopes, FT_DTYPE_F32, 1, hshape, &ts},
      {sinks, FT_DTYPE_F32, 1, hshape, &tk},  {dsinks, FT_DTYPE_F32, 1, hshape, &tds},
      {q, FT_DTYPE_F32, 3, vq, &wq},          {k, FT_DTYPE_F32, 3, vk, &wk},
      {v, FT_DTYPE_F32, 3, vk, &wv},          {vout, FT_DTYPE_F32, 3, vq, &wo},
      {vlse, FT_DTYPE_F32, 2, vl, &wl},       {cq, FT_DTYPE_I32, 1, cshape, &tcq},
      {ck, FT_DTYPE_I32, 1, cshape, &tck}};
  const int masks[] = {V_WINDOW, V_SOFTCAP, V_ALIBI, V_SINKS, V_WINDOW | V_SOFTCAP | V_ALIBI | V_SINKS};
  ft_options opt;
  ft_result res;
  size_t i, m;
  int64_t h, r, d;

  for (i = 0; i < VSQ * VH * VD; ++i) q[i] = rand_uniform() * 3.0f, dout[i] = rand_uniform();
  for (i = 0; i < VSK * VD; ++i) k[i] = rand_uniform() * 3.0f, v[i] = rand_uniform();
  if (!wrap_each(dev, views, sizeof(views) / sizeof(views[0]))) return;
  for (m = 0; m < sizeof(masks) / sizeof(masks[0]); ++m) {
    const int mask = masks[m];
    opt = ft_options_default();
    if (mask & V_WINDOW) opt.has_window = 1, opt.window_left = V_WL, opt.window_right = V_WR;
    if (mask & V_SOFTCAP) opt.softcap = V_CAP;
    if (mask & V_ALIBI) opt.alibi_slopes = ts;
    if (mask & V_SINKS) opt.sinks = tk;
    for (i = 0; i < VSQ * VH * VD; ++i) out[i] = vout[i] = NAN;
    CHECK_OK(ft_attention_forward(t[0], t[1], t[2], t[3], t[4], &opt, &res));
    CHECK_OK(ft_attention_varlen(wq, wk, wv, wo, wl, tcq, tck, VSQ, VSK, &opt, NULL));
    reference_variants(mask, q, k, v, slopes, sinks, ref, ref_lse);
    printf("variants %d -> %s: rel err %.3g, lse %.3g; varlen %.3g\n", mask, res.kernel,
           rel_error(ref, out, VSQ * VH * VD), lse_error(ref_lse, lse, VH * VSQ), rel_error(ref, vout, VSQ * VH * VD));
    CHECK(rel_error(ref, out, VSQ * VH * VD) < 1e-5, "variants %d: rel error %g", mask,
          rel_error(ref, out, VSQ * VH * VD));
    CHECK(lse_error(ref_lse, lse, VH * VSQ) < 1e-5, "variants %d: lse error %g", mask, lse_error(ref_lse, lse, VH * VSQ));
    CHECK(rel_error(ref, vout, VSQ * VH * VD) < 1e-5 && lse_error(ref_lse, vlse, VH * VSQ) < 1e-5,
          "variants %d through ft_attention_varlen", mask);
  }
  /* opt still holds every variant: the backward with sinks and dsinks. */
  opt.dsinks = tds;
  CHECK_OK(ft_attention_backward_plan(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], &opt, &res));
  CHECK(isnan(dsinks[0]), "plan wrote dsinks");
  CHECK_OK(ft_attention_backward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], &opt, &res));
  for (h = 0; h < VH; ++h) {
    double want = 0.0;
    for (r = 0; r < VSQ; ++r) {
      double delta = 0.0;
      for (d = 0; d < VD; ++d) delta += (double)dout[(r * VH + h) * VD + d] * out[(r * VH + h) * VD + d];
      want -= exp(sinks[h] - lse[h * VSQ + r]) * delta;
    }
    printf("dsinks[%d] = %.6g (want %.6g)\n", (int)h, (double)dsinks[h], want);
    CHECK(fabs(dsinks[h] - want) <= 1e-5 * (1.0 + fabs(want)), "dsinks[%d] = %g, want %g", (int)h, (double)dsinks[h],
          want);
  }
  for (i = 0; i < 9; ++i) ft_tensor_destroy(t[i]);
  ft_tensor_destroy(ts), ft_tensor_destroy(tk), ft_tensor_destroy(tds), ft_tensor_destroy(wq), ft_tensor_destroy(wk);
  ft_tensor_destroy(wv), ft_tensor_destroy(wo), ft_tensor_destroy(wl), ft_tensor_destroy(tcq), ft_tensor_destroy(tck);
}

/* Bad variant options through C: the right code, a message naming the field, nothing written. */
static void variant_errors(ft_device* dev) {
  enum { S = 3, H = 2, D = 8 };
  int64_t shape[4] = {1, S, H, D}, lshape[3] = {1, H, S}, hshape[1] = {H}, wrong[1] = {H + 1};
  static float in[4][S * H * D], lse[H * S], outs[4][S * H * D], heads[3][H + 1]; /* outs: out, dq, dk, dv */
  float* args[9] = {in[0], in[1], in[2], outs[0], lse, in[3], outs[1], outs[2], outs[3]};
  ft_tensor *t[9], *tk = NULL, *tw = NULL, *th = NULL, *tds = NULL;
  ft_options opt;
  ft_status st;
  size_t i;

  for (i = 0; i < S * H * D; ++i) in[0][i] = rand_uniform(), in[1][i] = rand_uniform(), in[2][i] = in[3][i] = 0.5f;
  for (i = 0; i < 9; ++i) t[i] = NULL;
  for (i = 0; i < 9; ++i)
    CHECK_OK(ft_tensor_wrap_host(dev, args[i], FT_DTYPE_F32, i == 4 ? 3 : 4, i == 4 ? lshape : shape, NULL, &t[i]));
  CHECK_OK(ft_tensor_wrap_host(dev, heads[0], FT_DTYPE_F32, 1, hshape, NULL, &tk));
  CHECK_OK(ft_tensor_wrap_host(dev, heads[1], FT_DTYPE_F32, 1, wrong, NULL, &tw));
  CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F16, 1, hshape, &th));
  CHECK_OK(ft_tensor_wrap_host(dev, heads[2], FT_DTYPE_F32, 1, hshape, NULL, &tds));
  CHECK_OK(ft_attention_forward(t[0], t[1], t[2], t[3], t[4], NULL, NULL));
  memset(outs, 0xAB, sizeof(outs)); /* every output must stay as it is */
  memset(lse, 0xAB, sizeof(lse));
  memset(heads[2], 0xAB, sizeof(heads[2]));

#define EXPECT_FWD(want, needle, what)                                                                     \
  do {                                                                                                     \
    st = ft_attention_forward(t[0], t[1], t[2], t[3], t[4], &opt, NULL);                                   \
    printf("variants %s -> %s: %s\n", what, ft_status_name(st), ft_last_error());                          \
    expect_status(st, want, needle, NULL, what);                                                           \
    CHECK(all_bytes(outs[0], sizeof(outs[0]), 0xAB) && all_bytes(lse, sizeof(lse), 0xAB), "%s: written", what); \
  } while (0)
  opt = ft_options_default();
  opt.window_left = 3; /* has_window forgotten */
  EXPECT_FWD(FT_ERROR_INVALID_ARGUMENT, "options.has_window is 0", "window without has_window");
  opt = ft_options_default();
  opt.has_window = 2;
  EXPECT_FWD(FT_ERROR_INVALID_ARGUMENT, "options.has_window: must be 0 or 1", "has_window 2");
  opt = ft_options_default();
  opt.has_window = 1, opt.window_left = -2, opt.window_right = 0;
  EXPECT_FWD(FT_ERROR_INVALID_ARGUMENT, "options.window_left: must be -1 (unbounded) or >= 0", "window_left -2");
  opt = ft_options_default();
  opt.softcap = -1.0f;
  EXPECT_FWD(FT_ERROR_INVALID_ARGUMENT, "options.softcap", "softcap -1");
  opt = ft_options_default();
  opt.alibi_slopes = tw;
  EXPECT_FWD(FT_ERROR_SHAPE_MISMATCH, "options.alibi_slopes: shape [3]", "alibi_slopes [Hq + 1]");
  opt = ft_options_default();
  opt.sinks = th;
  EXPECT_FWD(FT_ERROR_DTYPE_MISMATCH, "options.sinks: dtype must be f32", "sinks f16");
#undef EXPECT_FWD
  /* The backward's dsinks: needs sinks, f32 [Hq]; nothing written (dq, dk, dv, dsinks). */
  opt = ft_options_default();
  opt.dsinks = tds;
  st = ft_attention_backward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], &opt, NULL);
  printf("dsinks without sinks -> %s: %s\n", ft_status_name(st), ft_last_error());
  expect_status(st, FT_ERROR_INVALID_ARGUMENT, "options.dsinks: given without options.sinks", NULL, "dsinks alone");
  opt.sinks = tk, opt.dsinks = tw;
  st = ft_attention_backward_plan(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], &opt, NULL);
  expect_status(st, FT_ERROR_SHAPE_MISMATCH, "options.dsinks: shape [3]", NULL, "dsinks [Hq + 1]");
  opt.dsinks = tk;
  st = ft_attention_backward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], &opt, NULL);
  expect_status(st, FT_ERROR_ALIASING, "options.dsinks: overlaps options.sinks", NULL, "dsinks = sinks");
  CHECK(all_bytes(outs[1], 3 * sizeof(outs[1]), 0xAB) && all_bytes(heads[2], sizeof(heads[2]), 0xAB),
        "a rejected backward wrote a gradient");
  for (i = 0; i < 9; ++i) ft_tensor_destroy(t[i]);
  ft_tensor_destroy(tk), ft_tensor_destroy(tw), ft_tensor_destroy(th), ft_tensor_destroy(tds);
}

/* Every GPU device (lavapipe included) on the bf16 cases with a required head dim, through owned tensors. */
static void gpu_devices(const Case* cases, size_t n_cases) {
  int n = 0, i;
  size_t j;
  if (ft_device_count(&n) != FT_OK) return;
  for (i = 0; i < n; ++i) {
    ft_device_info info;
    ft_device* gpu = NULL;
    if (ft_device_list_info(i, &info) != FT_OK || info.backend == FT_BACKEND_CPU) continue;
    if (ft_device_open(info.backend, info.index, &gpu) != FT_OK) {
      ++g_failures;
      fprintf(stderr, "cannot open %s #%d: %s\n", ft_backend_name(info.backend), info.index, ft_last_error());
      continue;
    }
    for (j = 0; j < n_cases; ++j)
      if (cases[j].D == 64 || cases[j].D == 128 || cases[j].D == 256) run_case(gpu, &cases[j], FT_DTYPE_BF16);
    ft_device_destroy(gpu);
  }
}

static void devices(void) {
  int n = 0, i, j, has_cpu = 0;
  char why[256];
  CHECK_OK(ft_device_count(&n));
  CHECK(n >= 1, "no devices");
  for (i = 0; i < n; ++i) {
    ft_device_info info;
    CHECK_OK(ft_device_list_info(i, &info));
    printf("device %d: %s #%d \"%s\"%s, paths:", i, ft_backend_name(info.backend), info.index, info.name,
           info.software ? " (software)" : "");
    for (j = 0; j < info.num_paths; ++j) printf(" %s", ft_path_name(info.paths[j]));
    printf("\n");
    has_cpu |= info.backend == FT_BACKEND_CPU;
  }
  CHECK(has_cpu, "the CPU device is not listed");
  CHECK(ft_device_list_info(n, NULL) == FT_ERROR_INVALID_ARGUMENT, "NULL info");
  for (i = FT_BACKEND_CPU; i <= FT_BACKEND_VULKAN; ++i) {
    CHECK_OK(ft_backend_unavailable_reason(i, why, sizeof(why)));
    printf("%s: %s\n", ft_backend_name(i), why[0] ? why : "available");
  }
}

/* Ring attention through the C API: 3 simulated zigzag ranks on the CPU against ft_attention_forward of the whole
 * sequence (f32, causal), the positions helper, and the NCCL entry points refusing a NULL communicator. */
#define RING_N 3
#define RING_S 12 /* 2 * RING_N chunks of 2 */
#define RING_H 2
#define RING_D 8
static void ring_case(ft_device* dev) {
  const int64_t gshape[4] = {1, RING_S, RING_H, RING_D}, lshape[4] = {1, RING_S / RING_N, RING_H, RING_D};
  const int64_t lse_shape[3] = {1, RING_H, RING_S / RING_N};
  const size_t n = RING_S * RING_H * RING_D, nl = n / RING_N;
  float host[3][RING_S * RING_H * RING_D], want[RING_S * RING_H * RING_D], got[RING_S * RING_H * RING_D];
  double ref[RING_S * RING_H * RING_D];
  ft_tensor *g[3], *whole_out = NULL, *ring_out = NULL, *loc[4][RING_N], *lse[RING_N];
  int64_t pos[RING_S / RING_N];
  ft_options opt = ft_options_default();
  ft_result res;
  size_t i;
  int r, t;
  opt.causal = 1;
  CHECK_OK(ft_ring_positions(RING_N, 1, FT_SHARDING_ZIGZAG, RING_S / RING_N, pos));
  CHECK(pos[0] == 2 && pos[1] == 3 && pos[2] == 8 && pos[3] == 9, "zigzag positions %lld %lld %lld %lld",
        (long long)pos[0], (long long)pos[1], (long long)pos[2], (long long)pos[3]);
  CHECK(ft_ring_positions(RING_N, 0, FT_SHARDING_ZIGZAG, 3, pos) == FT_ERROR_INVALID_ARGUMENT, "odd zigzag length");
  for (t = 0; t < 3; ++t) {
    for (i = 0; i < n; ++i) host[t][i] = rand_uniform();
    CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F32, 4, gshape, &g[t]));
    CHECK_OK(ft_tensor_upload(g[t], host[t], n * sizeof(float)));
  }
  CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F32, 4, gshape, &whole_out));
  CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F32, 4, gshape, &ring_out));
  CHECK_OK(ft_attention_forward(g[0], g[1], g[2], whole_out, NULL, &opt, &res));
  CHECK_OK(ft_tensor_download(whole_out, want, n * sizeof(float)));
  for (r = 0; r < RING_N; ++r) {
    for (t = 0; t < 4; ++t) {
      CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F32, 4, lshape, &loc[t][r]));
      if (t < 3) CHECK_OK(ft_shard_sequence(loc[t][r], g[t], RING_N, r, FT_SHARDING_ZIGZAG));
    }
    CHECK_OK(ft_tensor_create(dev, FT_DTYPE_F32, 3, lse_shape, &lse[r]));
  }
  CHECK_OK(ft_ring_attention_forward_simulated(RING_N, FT_SHARDING_ZIGZAG, (const ft_tensor* const*)loc[0],
                                               (const ft_tensor* const*)loc[1], (const ft_tensor* const*)loc[2],
                                               loc[3], lse, &opt, &res));
  CHECK(strncmp(res.note, "ring: 3 ranks, zigzag", 21) == 0, "note %s", res.note);
  for (r = 0; r < RING_N; ++r) CHECK_OK(ft_unshard_sequence(ring_out, loc[3][r], RING_N, r, FT_SHARDING_ZIGZAG));
  CHECK_OK(ft_tensor_download(ring_out, got, n * sizeof(float)));
  for (i = 0; i < n; ++i) ref[i] = want[i];
  CHECK(rel_error(ref, got, n) <= 1e-5, "ring out rel error %g", rel_error(ref, got, n));
  CHECK(ft_ring_attention_forward(NULL, FT_SHARDING_ZIGZAG, loc[0][0], loc[1][0], loc[2][0], loc[3][0], NULL, &opt,
                                  &res) != FT_OK && ft_last_error()[0] != '\0',
        "a NULL communicator must be refused");
  printf("ring: 3 simulated zigzag ranks match the whole sequence (%zu local rows each)\n", nl / (RING_H * RING_D));
  for (r = 0; r < RING_N; ++r) {
    for (t = 0; t < 4; ++t) ft_tensor_destroy(loc[t][r]);
    ft_tensor_destroy(lse[r]);
  }
  for (t = 0; t < 3; ++t) ft_tensor_destroy(g[t]);
  ft_tensor_destroy(whole_out);
  ft_tensor_destroy(ring_out);
}

int main(void) {
  ft_device* dev = NULL;
  const Case cases[] = {
      {2, 37, 53, 4, 2, 64, 0}, {2, 37, 53, 4, 2, 64, 1}, /* GQA, Sq != Sk */
      {1, 64, 17, 2, 2, 32, 1},                           /* causal with Sq > Sk: rows that see no key */
      {1, 1, 257, 4, 1, 128, 0},                          /* MQA, one query row */
  };
  const Case backward_cases[] = {
      {BB, 3, 5, BHQ, BHKV, BD, 0}, {BB, 3, 5, BHQ, BHKV, BD, 1}, /* GQA 2:1, Sq < Sk */
      {BB, 5, 3, BHQ, BHKV, BD, 1},                               /* causal Sq > Sk: rows 0 and 1 see no key */
  };
  size_t i;
  printf("flashtile %s\n", ft_version());
  CHECK(ft_version()[0] != '\0', "empty version");
  devices();
  if (!find_cpu(&dev)) return 1;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    run_case(dev, &cases[i], FT_DTYPE_F32);
    run_case(dev, &cases[i], FT_DTYPE_BF16);
  }
  packed_views(dev);
  error_paths(dev);
  scale_options(dev);
  overflow_paths(dev);
  for (i = 0; i < sizeof(backward_cases) / sizeof(backward_cases[0]); ++i) backward_case(dev, &backward_cases[i]);
  backward_errors(dev);
  for (i = 0; i < 2; ++i) paged_case(dev, (int)i), varlen_case(dev, (int)i);
  serving_errors(dev);
  ring_case(dev);
  variants_case(dev);
  variant_errors(dev);
  ft_device_destroy(dev);
  gpu_devices(cases, sizeof(cases) / sizeof(cases[0]));
  ft_device_destroy(NULL);
  ft_tensor_destroy(NULL);
  if (g_failures) {
    fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  printf("all C API checks passed\n");
  return 0;
}
