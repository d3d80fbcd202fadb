/* flashtile C API (C99): exact attention on CUDA, Vulkan and the CPU through opaque handles.
 *
 * Every function that can fail returns an ft_status: 0 (FT_OK) on success, otherwise the value of the C++
 * flashtile::ErrorCode it corresponds to. ft_last_error() then gives the message of the failure, which names the
 * argument and the rule it broke. No C++ exception ever crosses this boundary. This header includes no CUDA or
 * Vulkan header: streams, command buffers and buffers travel as void* / uint64_t handles. */
#ifndef FLASHTILE_FLASHTILE_H
#define FLASHTILE_FLASHTILE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define FT_API __declspec(dllexport)
#elif defined(__GNUC__)
#define FT_API __attribute__((visibility("default")))
#else
#define FT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Enums: values equal the C++ enums' underlying values (checked in src/c_api.cpp). ---------------------------- */

typedef enum ft_backend { FT_BACKEND_AUTO = 0, FT_BACKEND_CPU = 1, FT_BACKEND_CUDA = 2, FT_BACKEND_VULKAN = 3 } ft_backend;

typedef enum ft_dtype { FT_DTYPE_F16 = 0, FT_DTYPE_BF16 = 1, FT_DTYPE_F32 = 2, FT_DTYPE_I32 = 3 /* index tensors */ } ft_dtype;

typedef enum ft_path {
  FT_PATH_DEFAULT = -1, /* let the device choose its fastest path that fits */
  FT_PATH_CPU_REFERENCE = 0,
  FT_PATH_CUDA_SM80 = 1,
  FT_PATH_CUDA_SM90 = 2,
  FT_PATH_VULKAN_PORTABLE = 3,
  FT_PATH_VULKAN_COOPMAT = 4,
  FT_PATH_VULKAN_COOPMAT2 = 5
} ft_path;

typedef enum ft_status {
  FT_OK = 0,
  FT_ERROR_INVALID_ARGUMENT = 1,
  FT_ERROR_SHAPE_MISMATCH = 2,
  FT_ERROR_DTYPE_MISMATCH = 3,
  FT_ERROR_BAD_STRIDE = 4,
  FT_ERROR_DEVICE_MISMATCH = 5,
  FT_ERROR_ALIASING = 6,
  FT_ERROR_OVERFLOW = 7,
  FT_ERROR_UNSUPPORTED = 8,
  FT_ERROR_BACKEND_UNAVAILABLE = 9,
  FT_ERROR_BACKEND_FAILURE = 10,
  FT_ERROR_OUT_OF_MEMORY = 11,
  FT_ERROR_INTERNAL = 100 /* an exception that is not a flashtile::Error (a bug: please report it) */
} ft_status;

/* ---- Opaque handles. ------------------------------------------------------------------------------------------ */

typedef struct ft_device ft_device;
typedef struct ft_tensor ft_tensor;

#define FT_MAX_PATHS 8

typedef struct ft_device_info {
  int backend; /* ft_backend */
  int index;
  int software; /* 1 for lavapipe, the CPU: correct but slow */
  int num_paths;
  int paths[FT_MAX_PATHS]; /* ft_path values this device can run, fastest first */
  char name[256];
} ft_device_info;

/* Options of one attention call. Initialize with ft_options_default() (path -1, the rest 0). */
typedef struct ft_options {
  float scale;             /* used when has_scale is 1: any finite value (negative too); NaN and +-Inf are
                              FT_ERROR_INVALID_ARGUMENT. With has_scale 0 it must stay 0 */
  int causal;              /* bottom-right aligned when Sq != Sk: row i sees keys j <= i + Sk - Sq */
  int path;                /* an ft_path to force, or FT_PATH_DEFAULT (-1) */
  void* cuda_stream;       /* cudaStream_t: run asynchronously on this stream (CUDA devices). NULL: flashtile's own
                              stream, synchronously; for the legacy default stream pass cudaStreamLegacy ((void*)1) */
  void* vk_command_buffer; /* VkCommandBuffer in the recording state: record only, the caller submits */
  int allow_reduced_precision_accumulation; /* 1: paths may accumulate O in f16 where faster (Options in
                                                attention.hpp says which and how far); 0 (default): never */
  int has_scale; /* 1: use scale; 0 (default): 1/sqrt(head_dim). Since 0.3.0, when NaN stopped meaning "default" */
  /* Backward only (since 0.4.0). */
  int deterministic;          /* 1: dq, dk, dv bit-identical run to run on one device; 0 (default): fastest */
  const ft_tensor* workspace; /* scratch of at least ft_result.workspace_bytes (ft_attention_backward_plan), contiguous,
                                 256-byte aligned on CUDA; NULL (default): the device's stream-ordered pool */
  /* Variants (since 0.5.0), FlashAttention's semantics (C++ Options in attention.hpp); any combination, on every
   * layout. Zero-initialised means none. A path without kernels for a variant passes the call over with the reason. */
  int has_window;       /* 1: a sliding window of window_left/window_right; 0 (default): none, and both must stay 0 */
  int64_t window_left;  /* row i sees keys j with i + Sk - Sq - window_left <= j <= i + Sk - Sq + window_right; */
  int64_t window_right; /* -1 is unbounded on that side (causal is window_right 0) */
  float softcap;        /* > 0: each score (scale applied) becomes softcap * tanh(score / softcap); 0 (default): off */
  const ft_tensor* alibi_slopes; /* NULL or f32 [Hq] or [B, Hq]: score -= slope * |i + Sk - Sq - j| (after softcap) */
  const ft_tensor* sinks;        /* NULL or f32 [Hq]: a logit per head joining every row's softmax denominator (and
                                    its LSE), carrying no value */
  ft_tensor* dsinks; /* backward only: NULL (default) or f32 [Hq], contiguous, overwritten with dloss/dsinks; needs
                        sinks */
} ft_options;

typedef struct ft_result {
  int backend;      /* ft_backend that ran */
  int path;         /* ft_path that ran */
  int asynchronous; /* 1 when work was queued on the caller's stream or command buffer */
  char path_name[32];
  char kernel[128]; /* the kernel or shader variant, e.g. "sm90_fwd<d128,bf16,causal>" */
  char note[512];   /* why faster paths were passed over; empty when the fastest ran (truncated if longer) */
  int reduced_precision; /* 1 when the kernel accumulated O in f16 (allow_reduced_precision_accumulation) */
  uint64_t workspace_bytes; /* backward: the scratch the path needs (since 0.4.0) */
} ft_result;

/* ---- Library. ------------------------------------------------------------------------------------------------- */

/* "MAJOR.MINOR.PATCH". */
FT_API const char* ft_version(void);
/* The message of the most recent failed call on this thread, or "" when the most recent call succeeded. The pointer
 * stays valid until the next flashtile call on this thread. */
FT_API const char* ft_last_error(void);
/* Names as the C++ to_string gives them ("cuda", "bf16", "cuda_sm90", "invalid_argument"...); "?" when out of range. */
FT_API const char* ft_backend_name(int backend);
FT_API const char* ft_dtype_name(int dtype);
FT_API const char* ft_path_name(int path);
FT_API const char* ft_status_name(int status);
/* Parse those names. */
FT_API ft_status ft_parse_backend(const char* name, int* out);
FT_API ft_status ft_parse_dtype(const char* name, int* out);
FT_API ft_status ft_parse_path(const char* name, int* out);
/* Bytes of one element (0 for an unknown dtype). */
FT_API size_t ft_dtype_size(int dtype);
FT_API ft_options ft_options_default(void);

/* ---- Devices. ------------------------------------------------------------------------------------------------- */

/* All devices of all built backends, in the order FT_BACKEND_AUTO considers them. */
FT_API ft_status ft_device_count(int* count);
FT_API ft_status ft_device_list_info(int i, ft_device_info* info);
/* Why a backend has no device here; "" when it has one. The message is copied into buf (truncated, NUL-ended). */
FT_API ft_status ft_backend_unavailable_reason(int backend, char* buf, size_t buf_size);

FT_API ft_status ft_device_open(int backend, int index, ft_device** out);
FT_API void ft_device_destroy(ft_device* device); /* NULL is fine; tensors keep their device alive */
FT_API ft_status ft_device_info_get(const ft_device* device, ft_device_info* info);
/* Wait for all work flashtile submitted on its own queue or stream. */
FT_API ft_status ft_device_sync(ft_device* device);

/* ---- Tensors. rank is 1 to 4 (attention's are 3 or 4, the serving tables' 1 or 2); shape has rank entries;
 * strides (in elements) may be NULL for contiguous. ------------------------------------------------------------ */

FT_API ft_status ft_tensor_create(ft_device* device, int dtype, int rank, const int64_t* shape, ft_tensor** out);
/* A view of CUDA device memory the caller owns (no copy); ptr is the device address of element 0. */
FT_API ft_status ft_tensor_wrap_cuda(ft_device* device, void* ptr, int dtype, int rank, const int64_t* shape,
                                     const int64_t* strides, ft_tensor** out);
/* A view of a VkBuffer the caller owns; element 0 lives at `offset` bytes; buffer_bytes is the buffer's size. */
FT_API ft_status ft_tensor_wrap_vulkan(ft_device* device, uint64_t buffer, uint64_t offset, uint64_t buffer_bytes,
                                       int dtype, int rank, const int64_t* shape, const int64_t* strides,
                                       ft_tensor** out);
/* A view of host memory on the CPU device (no copy). */
FT_API ft_status ft_tensor_wrap_host(ft_device* device, void* ptr, int dtype, int rank, const int64_t* shape,
                                     const int64_t* strides, ft_tensor** out);
/* A view of base's memory with another shape and strides (NULL: contiguous), starting `offset` elements past base's
 * element 0: q, k and v inside one packed QKV buffer, an output with padded rows. It must stay inside the memory. */
FT_API ft_status ft_tensor_view(const ft_tensor* base, int rank, const int64_t* shape, const int64_t* strides,
                                int64_t offset, ft_tensor** out);
FT_API void ft_tensor_destroy(ft_tensor* tensor); /* NULL is fine; wrapped memory is not freed */
/* Bytes from element 0 to one past the last addressed element: the size upload/download move. */
FT_API ft_status ft_tensor_extent_bytes(const ft_tensor* tensor, size_t* bytes);
FT_API ft_status ft_tensor_upload(ft_tensor* tensor, const void* host, size_t bytes);
FT_API ft_status ft_tensor_download(const ft_tensor* tensor, void* host, size_t bytes);

/* ---- Attention. --------------------------------------------------------------------------------------------- */

/* q: [B, Sq, Hq, D], k and v: [B, Sk, Hkv, D], out: [B, Sq, Hq, D] (dtype of q), lse (NULL or) f32 [B, Hq, Sq]
 * contiguous, natural log. options NULL: defaults. result may be NULL. A rejected call writes nothing. */
FT_API ft_status ft_attention_forward(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, ft_tensor* out,
                                      ft_tensor* lse, const ft_options* options, ft_result* result);
/* The path such a call would take, and why faster ones were passed over, without running anything. */
FT_API ft_status ft_attention_plan(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, const ft_tensor* out,
                                   const ft_tensor* lse, const ft_options* options, ft_result* result);
/* ft_attention_plan, then build what that path needs (Vulkan pipelines, else compiled by the first call of this
 * configuration), without running anything. */
FT_API ft_status ft_attention_prepare(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v,
                                      const ft_tensor* out, const ft_tensor* lse, const ft_options* options,
                                      ft_result* result);

/* The gradients of ft_attention_forward (C++ attention_backward): from q, k, v, the forward's out and lse (f32
 * [B, Hq, Sq], required) and dout = dloss/dout, write dq (like q), dk and dv (like k and v; with GQA summed over a
 * group's query heads). Rows that saw no key give zero gradients. A rejected call writes nothing. */
FT_API ft_status ft_attention_backward(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v,
                                       const ft_tensor* out, const ft_tensor* lse, const ft_tensor* dout,
                                       ft_tensor* dq, ft_tensor* dk, ft_tensor* dv, const ft_options* options,
                                       ft_result* result);
/* The path such a call would take, its workspace_bytes and why faster paths were passed over, running nothing. */
FT_API ft_status ft_attention_backward_plan(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v,
                                            const ft_tensor* out, const ft_tensor* lse, const ft_tensor* dout,
                                            const ft_tensor* dq, const ft_tensor* dk, const ft_tensor* dv,
                                            const ft_options* options, ft_result* result);

/* ---- Serving layouts (C++: include/flashtile/serving.hpp). -------------------------------------------------- */

/* Attention over a paged KV cache. k_cache and v_cache: [num_pages, page_size, Hkv, D] (dtype of q, head dim
 * contiguous, page_size a multiple of 16); key j of sequence b lives in page block_table[b, j / page_size], slot
 * j % page_size. block_table: i32 [B, pages_per_seq], contiguous; seqlens: i32 [B], contiguous, the keys each
 * sequence holds before this call. q: [B, Sq, Hq, D], out like q, lse (NULL or) f32 [B, Hq, Sq] contiguous.
 * k_new and v_new (both NULL, or both [B, S_new, Hkv, D]): first written into the cache at positions seqlens[b] ..
 * seqlens[b] + S_new - 1, then attended over with the rest; seqlens is not changed (the caller advances it). Causal
 * is bottom-right per sequence: row i sees keys j <= i + seqlens[b] + S_new - Sq. Tables on the CPU device are checked
 * before any work (FT_ERROR_INVALID_ARGUMENT naming cache.block_table or cache.seqlens); device-resident tables are
 * not read back. options NULL: defaults. result may be NULL. A rejected call writes nothing (out, lse, the caches). */
FT_API ft_status ft_attention_with_kvcache(const ft_tensor* q, ft_tensor* k_cache, ft_tensor* v_cache,
                                           const ft_tensor* block_table, const ft_tensor* seqlens, ft_tensor* out,
                                           ft_tensor* lse, const ft_tensor* k_new, const ft_tensor* v_new,
                                           const ft_options* options, ft_result* result);
/* The path such a call would take, and why faster ones were passed over, without running or writing anything. */
FT_API ft_status ft_attention_with_kvcache_plan(const ft_tensor* q, const ft_tensor* k_cache,
                                                const ft_tensor* v_cache, const ft_tensor* block_table,
                                                const ft_tensor* seqlens, const ft_tensor* out, const ft_tensor* lse,
                                                const ft_tensor* k_new, const ft_tensor* v_new,
                                                const ft_options* options, ft_result* result);

/* Attention over a packed batch of B variable-length sequences: sequence b's query rows are q[cu_seqlens_q[b] ..
 * cu_seqlens_q[b+1]), its keys k[cu_seqlens_k[b] .. cu_seqlens_k[b+1]). q: [total_q, Hq, D], k and v:
 * [total_k, Hkv, D], out like q, lse (NULL or) f32 [Hq, total_q] contiguous. cu_seqlens_q and cu_seqlens_k: i32
 * [B + 1], contiguous, starting at 0, non-decreasing, ending at total_q and total_k. max_seqlen_q and max_seqlen_k:
 * at least every sequence's length (kernels size their grids by them). Causal is bottom-right per sequence; a
 * sequence with no keys gives 0 and -inf. Tables are checked as ft_attention_with_kvcache's are. A rejected call
 * writes nothing. */
FT_API ft_status ft_attention_varlen(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v, ft_tensor* out,
                                     ft_tensor* lse, const ft_tensor* cu_seqlens_q, const ft_tensor* cu_seqlens_k,
                                     int64_t max_seqlen_q, int64_t max_seqlen_k, const ft_options* options,
                                     ft_result* result);
/* The path such a call would take, and why faster ones were passed over, without running anything. */
FT_API ft_status ft_attention_varlen_plan(const ft_tensor* q, const ft_tensor* k, const ft_tensor* v,
                                          const ft_tensor* out, const ft_tensor* lse, const ft_tensor* cu_seqlens_q,
                                          const ft_tensor* cu_seqlens_k, int64_t max_seqlen_q, int64_t max_seqlen_k,
                                          const ft_options* options, ft_result* result);

/* ---- Ring attention: context parallelism (C++: flashtile/ring.hpp, flashtile/ring_nccl.hpp). ------------------ */

/* How a sequence of S tokens is split over `world` ranks: contiguous (rank r holds [r*S/world, (r+1)*S/world); S
 * divisible by world), or zigzag (2*world chunks, rank r holds chunks r and 2*world-1-r; S divisible by 2*world). */
typedef enum ft_sharding { FT_SHARDING_CONTIGUOUS = 0, FT_SHARDING_ZIGZAG = 1 } ft_sharding;

/* Copy rank `rank`'s rows of a global [B, S, H, D] tensor into local [B, S/world, H, D], and back. */
FT_API ft_status ft_shard_sequence(ft_tensor* local, const ft_tensor* global, int world, int rank, int sharding);
FT_API ft_status ft_unshard_sequence(ft_tensor* global, const ft_tensor* local, int world, int rank, int sharding);
/* The global position of each of a rank's local_len rows, into positions[0 .. local_len). */
FT_API ft_status ft_ring_positions(int world, int rank, int sharding, int64_t local_len, int64_t* positions);

/* The ring on one device: `world` simulated ranks, rank r's tensors at index r of each array (equal shapes; q, k, v
 * and out [B, S/world, H, D], lse NULL or an array of f32 [B, Hq, S/world]). The same algorithm as over NCCL, with
 * device copies for messages. Devices without the ring's merge kernels refuse with the reason (FT_ERROR_UNSUPPORTED). */
FT_API ft_status ft_ring_attention_forward_simulated(int world, int sharding, const ft_tensor* const* q,
                                                     const ft_tensor* const* k, const ft_tensor* const* v,
                                                     ft_tensor* const* out, ft_tensor* const* lse,
                                                     const ft_options* options, ft_result* result);
FT_API ft_status ft_ring_attention_backward_simulated(int world, int sharding, const ft_tensor* const* q,
                                                      const ft_tensor* const* k, const ft_tensor* const* v,
                                                      const ft_tensor* const* out, const ft_tensor* const* lse,
                                                      const ft_tensor* const* dout, ft_tensor* const* dq,
                                                      ft_tensor* const* dk, ft_tensor* const* dv,
                                                      const ft_options* options, ft_result* result);

/* Over NCCL, one rank per GPU. nccl_comm is an ncclComm_t; every rank calls with the same shapes and options.
 * Builds without the NCCL transport, or machines without libnccl, return FT_ERROR_BACKEND_UNAVAILABLE with the
 * reason; ft_nccl_unavailable_reason() gives it up front ("" when available). */
#define FT_NCCL_UNIQUE_ID_BYTES 128
FT_API const char* ft_nccl_unavailable_reason(void);
FT_API ft_status ft_nccl_unique_id(char* id /* FT_NCCL_UNIQUE_ID_BYTES */);
FT_API ft_status ft_nccl_comm_init(int world, int rank, const char* id, const ft_device* device, void** comm);
FT_API ft_status ft_nccl_comm_destroy(void* comm);
FT_API ft_status ft_ring_attention_forward(void* nccl_comm, int sharding, const ft_tensor* q, const ft_tensor* k,
                                           const ft_tensor* v, ft_tensor* out, ft_tensor* lse,
                                           const ft_options* options, ft_result* result);
FT_API ft_status ft_ring_attention_backward(void* nccl_comm, int sharding, const ft_tensor* q, const ft_tensor* k,
                                            const ft_tensor* v, const ft_tensor* out, const ft_tensor* lse,
                                            const ft_tensor* dout, ft_tensor* dq, ft_tensor* dk, ft_tensor* dv,
                                            const ft_options* options, ft_result* result);

#ifdef __cplusplus
}
#endif

#endif /* FLASHTILE_FLASHTILE_H */
