#include "kernels/lt_gemm.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "kernels/w8a8_gemm.h"

namespace quantplan::kernels {

void check_cublas(cublasStatus_t status, const char* expression, const char* file, int line) {
    if (status == CUBLAS_STATUS_SUCCESS) return;
    throw KernelError(expression, file, line, std::string(cublasLtGetStatusName(status)) + ": " + cublasLtGetStatusString(status));
}

// Descriptors of one (kind, shape) problem, its heuristic results and the algorithm that ran.
struct LtGemm::Plan {
    Kind kind = Kind::Bf16;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    std::vector<cublasLtMatmulHeuristicResult_t> algos;
    std::size_t chosen = 0;

    Plan() = default;
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;
    ~Plan() {
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (d) cublasLtMatrixLayoutDestroy(d);
        if (desc) cublasLtMatmulDescDestroy(desc);
    }
};

namespace {

// Algorithms requested from the heuristic; the first that runs is remembered.
constexpr int kHeuristicAlgorithms = 8;

const char* kind_name(int kind) {
    static const char* names[] = {"fp16", "bf16", "int8", "fp8 (outer-vector scales)", "fp8 (fp32 out)"};
    return kind >= 0 && kind < 5 ? names[kind] : "?";
}

void check_problem(const char* op, const void* x, const void* w, const void* y, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t n_multiple,
                   std::int64_t k_multiple) {
    const std::string o(op);
    if (m < 1 || n < 1 || k < 1 || m > (std::int64_t{1} << 24) || n > (std::int64_t{1} << 24) || k > (std::int64_t{1} << 24))
        throw Error(o + ": m/n/k", "must be in 1..2^24, got " + std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k));
    if (n % n_multiple != 0) throw Error(o + ": n", "must be a multiple of " + std::to_string(n_multiple) + ", got " + std::to_string(n));
    if (k % k_multiple != 0) throw Error(o + ": k", "must be a multiple of " + std::to_string(k_multiple) + ", got " + std::to_string(k));
    if (!x || !is_aligned(x, 16)) throw Error(o + ": x", "must be a non-null, 16-byte aligned device pointer");
    if (!w || !is_aligned(w, 16)) throw Error(o + ": w", "must be a non-null, 16-byte aligned device pointer");
    if (!y || !is_aligned(y, 16)) throw Error(o + ": y", "must be a non-null, 16-byte aligned device pointer");
}

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
    QP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof value));
}

}  // namespace

LtGemm::LtGemm(std::uint64_t workspace_bytes) {
    QP_CUBLAS_CHECK(cublasLtCreate(&handle_));
    if (workspace_bytes == 0) workspace_bytes = current_compute_capability() >= 90 ? (32ull << 20) : (4ull << 20);
    try {
        workspace_ = DeviceBuffer(workspace_bytes);
    } catch (...) {
        cublasLtDestroy(handle_);
        throw;
    }
}

LtGemm::~LtGemm() {
    plans_.clear();
    if (handle_) cublasLtDestroy(handle_);
}

LtGemm::Plan& LtGemm::plan(Kind kind, std::int64_t m, std::int64_t n, std::int64_t k) {
    const Key key{static_cast<int>(kind), m, n, k};
    if (auto it = plans_.find(key); it != plans_.end()) return *it->second;

    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    cudaDataType_t scale_type = CUDA_R_32F, ab_type = CUDA_R_16BF, d_type = CUDA_R_16BF;
    switch (kind) {
        case Kind::Fp16: ab_type = d_type = CUDA_R_16F; break;
        case Kind::Bf16: ab_type = d_type = CUDA_R_16BF; break;
        case Kind::Int8:
            compute = CUBLAS_COMPUTE_32I;
            scale_type = CUDA_R_32I;
            ab_type = CUDA_R_8I;
            d_type = CUDA_R_32I;
            break;
        case Kind::Fp8OuterScaled: ab_type = CUDA_R_8F_E4M3; d_type = CUDA_R_16BF; break;
        case Kind::Fp8Fp32: ab_type = CUDA_R_8F_E4M3; d_type = CUDA_R_32F; break;
    }
    auto p = std::make_unique<Plan>();
    p->kind = kind;
    QP_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->desc, compute, scale_type));
    set_desc(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, cublasOperation_t{CUBLAS_OP_T});
    set_desc(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, cublasOperation_t{CUBLAS_OP_N});
    if (kind == Kind::Fp8OuterScaled) {
        const std::int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
        set_desc(p->desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode);
        set_desc(p->desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode);
    }
    // A = W stored [N][K] row-major = column-major K x N (ld K), transposed; B = X column-major K x M.
    const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    QP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->a, ab_type, u64(k), u64(n), k));
    QP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->b, ab_type, u64(k), u64(m), k));
    QP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->d, d_type, u64(n), u64(m), n));

    cublasLtMatmulPreference_t pref = nullptr;
    QP_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t ws = workspace_.bytes();
    const cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st != CUBLAS_STATUS_SUCCESS) {
        cublasLtMatmulPreferenceDestroy(pref);
        QP_CUBLAS_CHECK(st);
    }
    p->algos.resize(kHeuristicAlgorithms);
    int returned = 0;
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(handle_, p->desc, p->a, p->b, p->d, p->d, pref, kHeuristicAlgorithms, p->algos.data(),
                                                             &returned);
    cublasLtMatmulPreferenceDestroy(pref);
    if (hs != CUBLAS_STATUS_SUCCESS || returned == 0)
        throw KernelError("cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__,
                          std::string("no algorithm for ") + kind_name(static_cast<int>(kind)) + " " + std::to_string(m) + "x" + std::to_string(n) +
                              "x" + std::to_string(k) + (hs != CUBLAS_STATUS_SUCCESS ? std::string(": ") + cublasLtGetStatusString(hs) : ""));
    p->algos.resize(static_cast<std::size_t>(returned));
    return *plans_.emplace(key, std::move(p)).first->second;
}

void LtGemm::run(Plan& p, const void* a, const void* b, void* d, cudaStream_t stream) {
    const float alpha_f = 1.0f, beta_f = 0.0f;
    const std::int32_t alpha_i = 1, beta_i = 0;
    const void* alpha = p.kind == Kind::Int8 ? static_cast<const void*>(&alpha_i) : static_cast<const void*>(&alpha_f);
    const void* beta = p.kind == Kind::Int8 ? static_cast<const void*>(&beta_i) : static_cast<const void*>(&beta_f);
    cublasStatus_t last = CUBLAS_STATUS_NOT_SUPPORTED;
    for (std::size_t i = p.chosen; i < p.algos.size(); ++i) {
        last = cublasLtMatmul(handle_, p.desc, alpha, a, p.a, b, p.b, beta, d, p.d, d, p.d, &p.algos[i].algo, workspace_.get(), workspace_.bytes(),
                              stream);
        if (last == CUBLAS_STATUS_SUCCESS) {
            p.chosen = i;
            return;
        }
        if (last != CUBLAS_STATUS_NOT_SUPPORTED && last != CUBLAS_STATUS_INVALID_VALUE) break;
    }
    QP_CUBLAS_CHECK(last);
}

void LtGemm::gemm_16bit(Half16 type, const std::uint16_t* x, const std::uint16_t* w, std::uint16_t* y, std::int64_t m, std::int64_t n, std::int64_t k,
                        cudaStream_t stream) {
    check_problem("gemm_16bit", x, w, y, m, n, k, 8, 8);
    run(plan(type == Half16::Bf16 ? Kind::Bf16 : Kind::Fp16, m, n, k), w, x, y, stream);
}

void LtGemm::gemm_int8(const std::int8_t* xq, const std::int8_t* wq, std::int32_t* acc, std::int64_t m, std::int64_t n, std::int64_t k,
                       cudaStream_t stream) {
    check_problem("gemm_int8", xq, wq, acc, m, n, k, 4, 16);
    run(plan(Kind::Int8, m, n, k), wq, xq, acc, stream);
}

void LtGemm::gemm_fp8_outer_scaled(const std::uint8_t* xq, const float* x_scales, const std::uint8_t* wq, const float* w_scales, std::uint16_t* y,
                                   std::int64_t m, std::int64_t n, std::int64_t k, cudaStream_t stream) {
    check_problem("gemm_fp8_outer_scaled", xq, wq, y, m, n, k, 16, 16);
    if (!x_scales || !w_scales) throw Error("gemm_fp8_outer_scaled: scales", "null device pointer");
    if (!fp8_uses_outer_vector_scales(current_compute_capability()))
        throw Error("gemm_fp8_outer_scaled", "cuBLASLt outer-vector scales need sm_90 or newer");
    Plan& p = plan(Kind::Fp8OuterScaled, m, n, k);
    // A (weights) scales have cuBLASLt's m = N entries, B (activations) scales n = M entries.
    set_desc(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(w_scales));
    set_desc(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(x_scales));
    run(p, wq, xq, y, stream);
}

void LtGemm::gemm_fp8_fp32(const std::uint8_t* xq, const std::uint8_t* wq, float* acc, std::int64_t m, std::int64_t n, std::int64_t k,
                           cudaStream_t stream) {
    check_problem("gemm_fp8_fp32", xq, wq, acc, m, n, k, 16, 16);
    if (current_compute_capability() < 89) throw Error("gemm_fp8_fp32", "FP8 tensor cores need sm_89 or newer");
    run(plan(Kind::Fp8Fp32, m, n, k), wq, xq, acc, stream);
}

bool fp8_uses_outer_vector_scales(int cc) { return cc >= 90; }

std::int64_t w8a8_padded_rows(std::int64_t m) { return std::max<std::int64_t>(32, (m + 15) / 16 * 16); }

std::tuple<std::uint64_t, std::uint64_t, std::uint64_t> w8a8_scratch_bytes(std::int64_t m, std::int64_t n, std::int64_t k) {
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    const std::int64_t rows = w8a8_padded_rows(m);
    return {u(rows) * u(k), u(rows) * sizeof(float), u(rows) * u(n) * 4};
}

void w4a16_generic_gemm(LtGemm& lt, const W4DeviceWeights& w, const std::uint16_t* x, std::int64_t m, Half16 act_type, std::uint16_t* y,
                        std::uint16_t* w_scratch, cudaStream_t stream) {
    w4a16_dequantize(w, act_type, w_scratch, stream);
    lt.gemm_16bit(act_type, x, w_scratch, y, m, w.n, w.k, stream);
}

namespace {

void check_scratch(const char* op, const W8A8Scratch& s, const float* w_scales) {
    if (!s.x_q || !s.x_scales || !s.acc) throw Error(std::string(op) + ": scratch", "null device pointer (sizes: w8a8_scratch_bytes)");
    if (!w_scales) throw Error(std::string(op) + ": w_scales", "null device pointer");
}

}  // namespace

void w8a8_int8_gemm(LtGemm& lt, const std::uint16_t* x, Half16 act_type, std::int64_t m, const std::int8_t* wq, const float* w_scales,
                    std::int64_t n, std::int64_t k, std::uint16_t* y, const W8A8Scratch& s, cudaStream_t stream) {
    check_scratch("w8a8_int8_gemm", s, w_scales);
    // The padding rows [m, rows) are zeroed by the quantizer's launch (no memsets).
    const std::int64_t rows = w8a8_padded_rows(m);
    quantize_rows_int8_padded(x, act_type, m, rows, k, static_cast<std::int8_t*>(s.x_q), s.x_scales, stream);
    lt.gemm_int8(static_cast<const std::int8_t*>(s.x_q), wq, static_cast<std::int32_t*>(s.acc), rows, n, k, stream);
    scale_epilogue_int32(static_cast<const std::int32_t*>(s.acc), s.x_scales, w_scales, m, n, y, stream);
}

void w8a8_fp8_gemm(LtGemm& lt, const std::uint16_t* x, Half16 act_type, std::int64_t m, const std::uint8_t* wq, const float* w_scales,
                   std::int64_t n, std::int64_t k, std::uint16_t* y, const W8A8Scratch& s, cudaStream_t stream) {
    const int cc = current_compute_capability();
    if (cc < 89) throw Error("w8a8_fp8_gemm", "FP8 tensor cores need sm_89 or newer, this device is sm_" + std::to_string(cc));
    check_scratch("w8a8_fp8_gemm", s, w_scales);
    if (!y || !is_aligned(y, 16)) throw Error("w8a8_fp8_gemm: y", "must be a non-null, 16-byte aligned device pointer");
    const std::int64_t rows = w8a8_padded_rows(m);
    quantize_rows_fp8_padded(x, act_type, m, rows, k, static_cast<std::uint8_t*>(s.x_q), s.x_scales, stream);
    if (fp8_uses_outer_vector_scales(cc)) {
        if (rows == m) {  // no padding rows (M a multiple of 16, at least 32): straight into y
            lt.gemm_fp8_outer_scaled(static_cast<const std::uint8_t*>(s.x_q), s.x_scales, wq, w_scales, y, rows, n, k, stream);
            return;
        }
        // cuBLASLt writes all padded rows; the first M go to y.
        std::uint16_t* padded = static_cast<std::uint16_t*>(s.acc);
        lt.gemm_fp8_outer_scaled(static_cast<const std::uint8_t*>(s.x_q), s.x_scales, wq, w_scales, padded, rows, n, k, stream);
        QP_CUDA_CHECK(cudaMemcpyAsync(y, padded, static_cast<std::size_t>(m) * static_cast<std::size_t>(n) * sizeof(std::uint16_t),
                                      cudaMemcpyDeviceToDevice, stream));
        return;
    }
    lt.gemm_fp8_fp32(static_cast<const std::uint8_t*>(s.x_q), wq, static_cast<float*>(s.acc), rows, n, k, stream);
    scale_epilogue_fp32(static_cast<const float*>(s.acc), s.x_scales, w_scales, m, n, y, stream);
}

}  // namespace quantplan::kernels
