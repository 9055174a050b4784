#pragma once
// cuBLASLt GEMMs (kernels.md (b), (c)) and the paths built on them: the bf16/fp16 baseline, the
// generic W4A16 path (dequantize, then a 16-bit GEMM), W8A8 INT8 (int32 accumulate + scale
// epilogue) and W8A8 FP8 E4M3 (fp32 accumulate; outer-vector scales in cuBLASLt on sm_90, our own
// epilogue on sm_89). Host references: w8a8_reference.h, w4a16_reference.h.
//
// Every GEMM is Y[M][N] = X[M][K] W[N][K]^T with row-major X, W and Y, which is cuBLASLt's "TN"
// column-major problem C^T[N][M] = op(A) B with A = W (transposed), B = X: m = N, n = M, k = K,
// lda = ldb = K, ldc = N. Preconditions (checked, quantplan::Error naming the argument): device
// pointers 16-byte aligned; 16-bit: N and K multiples of 8; INT8: N % 4 == 0 and K % 16 == 0;
// FP8: N and K multiples of 16; FP8 needs sm_89 or newer. Heuristic results are cached per shape
// and type; up to 8 algorithms are kept and tried in order when one is refused.
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda_check.h"
#include "kernels/numeric.h"
#include "kernels/w4a16_gemm.h"

namespace quantplan::kernels {

// Throws KernelError when `status` is not CUBLAS_STATUS_SUCCESS.
void check_cublas(cublasStatus_t status, const char* expression, const char* file, int line);

// Checks a cuBLAS / cuBLASLt call.
#define QP_CUBLAS_CHECK(expr) ::quantplan::kernels::check_cublas((expr), #expr, __FILE__, __LINE__)

// A cuBLASLt handle, its workspace and the per-shape plans. One per device and thread.
class LtGemm {
public:
    // workspace_bytes 0: 32 MiB on sm_90 and newer, 4 MiB otherwise (kernels.md (b)).
    explicit LtGemm(std::uint64_t workspace_bytes = 0);
    ~LtGemm();
    LtGemm(const LtGemm&) = delete;
    LtGemm& operator=(const LtGemm&) = delete;

    // Y = X W^T, all 16-bit `type`, fp32 accumulate (CUBLAS_COMPUTE_32F).
    void gemm_16bit(Half16 type, const std::uint16_t* x, const std::uint16_t* w, std::uint16_t* y, std::int64_t m, std::int64_t n, std::int64_t k,
                    cudaStream_t stream);

    // acc = Xq Wq^T, int8 inputs, int32 accumulate and output (CUBLAS_COMPUTE_32I).
    void gemm_int8(const std::int8_t* xq, const std::int8_t* wq, std::int32_t* acc, std::int64_t m, std::int64_t n, std::int64_t k,
                   cudaStream_t stream);

    // y (bf16) = x_scales[m] w_scales[n] Xq Wq^T with E4M3 inputs, fp32 accumulate, cuBLASLt
    // outer-vector scales (CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F). sm_90 and newer.
    void gemm_fp8_outer_scaled(const std::uint8_t* xq, const float* x_scales, const std::uint8_t* wq, const float* w_scales, std::uint16_t* y,
                               std::int64_t m, std::int64_t n, std::int64_t k, cudaStream_t stream);

    // acc (fp32) = Xq Wq^T with E4M3 inputs and no scales (sm_89 path; the epilogue scales).
    void gemm_fp8_fp32(const std::uint8_t* xq, const std::uint8_t* wq, float* acc, std::int64_t m, std::int64_t n, std::int64_t k,
                       cudaStream_t stream);

    // Number of cached plans (one per kind and shape).
    std::size_t plan_count() const { return plans_.size(); }

private:
    struct Plan;
    enum class Kind : int { Fp16, Bf16, Int8, Fp8OuterScaled, Fp8Fp32 };
    using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t>;

    Plan& plan(Kind kind, std::int64_t m, std::int64_t n, std::int64_t k);
    void run(Plan& plan, const void* a, const void* b, void* d, cudaStream_t stream);

    cublasLtHandle_t handle_ = nullptr;
    DeviceBuffer workspace_;
    std::map<Key, std::unique_ptr<Plan>> plans_;
};

// Rows the W8A8 GEMMs run with for M activation rows: max(32, M rounded up to 16). cuBLASLt's
// INT8 and FP8 kernels refuse or slow down on few rows (PyTorch pads _int_mm below 32 rows,
// pytorch/pytorch#178469; cuBLASLt FP8 wants multiples of 16 and vLLM pads FP8 batches to 32,
// vllm-project/vllm#4691); the padding rows are zero and their outputs are dropped.
std::int64_t w8a8_padded_rows(std::int64_t m);

// Device scratch the composed W8A8 paths need, sized by w8a8_scratch_bytes().
struct W8A8Scratch {
    void* x_q = nullptr;        // [M_pad][K] int8 or E4M3 (M_pad = w8a8_padded_rows(M))
    float* x_scales = nullptr;  // [M_pad]
    void* acc = nullptr;        // [M_pad][N] int32 or fp32 accumulator; FP8 on sm_90 uses it as the bf16 output before the copy to y
};

// Bytes of each scratch buffer for M x N x K: {x_q, x_scales, acc}, with padded rows.
std::tuple<std::uint64_t, std::uint64_t, std::uint64_t> w8a8_scratch_bytes(std::int64_t m, std::int64_t n, std::int64_t k);

// Generic W4A16: w_scratch (device [N][K] 16-bit act_type) = dequantize(w), then y = x w_scratch^T
// through cuBLASLt. Same contract as w4a16_gemm.
void w4a16_generic_gemm(LtGemm& lt, const W4DeviceWeights& w, const std::uint16_t* x, std::int64_t m, Half16 act_type, std::uint16_t* y,
                        std::uint16_t* w_scratch, cudaStream_t stream);

// W8A8 INT8: per-token INT8 quantization of x (16-bit act_type [M][K]), cuBLASLt INT8 GEMM with
// weights wq int8 [N][K] and per-channel w_scales [N], scale epilogue to y bf16 [M][N].
void w8a8_int8_gemm(LtGemm& lt, const std::uint16_t* x, Half16 act_type, std::int64_t m, const std::int8_t* wq, const float* w_scales,
                    std::int64_t n, std::int64_t k, std::uint16_t* y, const W8A8Scratch& scratch, cudaStream_t stream);

// W8A8 FP8: per-token E4M3 quantization of x, cuBLASLt FP8 GEMM with weights wq E4M3 [N][K] and
// per-channel w_scales [N]; outer-vector scales in cuBLASLt on sm_90+, fp32 output plus the scale
// epilogue on sm_89. Throws quantplan::Error below sm_89.
void w8a8_fp8_gemm(LtGemm& lt, const std::uint16_t* x, Half16 act_type, std::int64_t m, const std::uint8_t* wq, const float* w_scales,
                   std::int64_t n, std::int64_t k, std::uint16_t* y, const W8A8Scratch& scratch, cudaStream_t stream);

// True when this device runs FP8 with cuBLASLt's outer-vector scales (sm_90 and newer).
bool fp8_uses_outer_vector_scales(int cc);

}  // namespace quantplan::kernels
