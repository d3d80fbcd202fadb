// The serving check (cuda_sm80_serving_check.cu) on the sm90 family: varlen batches, decode shapes and hostile tables
// through sm90_fwd_launch against the same host double reference; cases the family refuses are skipped with its reason.
#define FT_SERVING_SM90 1
#include "cuda_sm80_serving_check.cu"
