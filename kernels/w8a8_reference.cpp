#include "kernels/w8a8_reference.h"

#include <cmath>

#include "core/base/error.h"

namespace quantplan::kernels {
namespace {

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

void check_matrix(const char* what, std::size_t size, std::int64_t rows, std::int64_t cols) {
    if (rows < 1 || cols < 1) throw Error(what, "extents must be positive");
    if (size != sz(rows * cols)) throw Error(what, "size does not match rows x cols");
}

float row_amax(const std::vector<std::uint16_t>& x, Half16 type, std::int64_t row, std::int64_t cols) {
    float amax = 0.0f;
    for (std::int64_t c = 0; c < cols; ++c) amax = std::fmax(amax, std::fabs(half16_to_float(x[sz(row * cols + c)], type)));
    return amax;
}

}  // namespace

Int8Rows quantize_rows_int8_reference(const std::vector<std::uint16_t>& x, Half16 type, std::int64_t rows, std::int64_t cols) {
    check_matrix("quantize_rows_int8: x", x.size(), rows, cols);
    Int8Rows r;
    r.rows = rows;
    r.cols = cols;
    r.q.resize(x.size());
    r.scales.resize(sz(rows));
    for (std::int64_t i = 0; i < rows; ++i) {
        const float scale = row_scale(row_amax(x, type, i, cols), kInt8Max);
        r.scales[sz(i)] = scale;
        for (std::int64_t c = 0; c < cols; ++c) r.q[sz(i * cols + c)] = quantize_int8(half16_to_float(x[sz(i * cols + c)], type), scale);
    }
    return r;
}

Fp8Rows quantize_rows_fp8_reference(const std::vector<std::uint16_t>& x, Half16 type, std::int64_t rows, std::int64_t cols) {
    check_matrix("quantize_rows_fp8: x", x.size(), rows, cols);
    Fp8Rows r;
    r.rows = rows;
    r.cols = cols;
    r.q.resize(x.size());
    r.scales.resize(sz(rows));
    for (std::int64_t i = 0; i < rows; ++i) {
        const float scale = row_scale(row_amax(x, type, i, cols), kFp8E4M3Max);
        r.scales[sz(i)] = scale;
        for (std::int64_t c = 0; c < cols; ++c)
            r.q[sz(i * cols + c)] = quantize_fp8_e4m3(half16_to_float(x[sz(i * cols + c)], type), scale);
    }
    return r;
}

std::vector<std::uint16_t> int8_gemm_reference(const Int8Rows& x, const Int8Rows& w) {
    check_matrix("int8_gemm_reference: x", x.q.size(), x.rows, x.cols);
    check_matrix("int8_gemm_reference: w", w.q.size(), w.rows, w.cols);
    if (x.cols != w.cols) throw Error("int8_gemm_reference", "x and w disagree on K");
    const std::int64_t m = x.rows, n = w.rows, k = x.cols;
    std::vector<std::uint16_t> y(sz(m * n));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            std::int64_t acc = 0;
            for (std::int64_t t = 0; t < k; ++t) acc += std::int64_t{x.q[sz(i * k + t)]} * std::int64_t{w.q[sz(j * k + t)]};
            const float v = (static_cast<float>(static_cast<std::int32_t>(acc)) * x.scales[sz(i)]) * w.scales[sz(j)];
            y[sz(i * n + j)] = float_to_bf16(v);
        }
    return y;
}

DenseResult fp8_gemm_reference(const Fp8Rows& x, const Fp8Rows& w) {
    check_matrix("fp8_gemm_reference: x", x.q.size(), x.rows, x.cols);
    check_matrix("fp8_gemm_reference: w", w.q.size(), w.rows, w.cols);
    if (x.cols != w.cols) throw Error("fp8_gemm_reference", "x and w disagree on K");
    std::vector<float> xf(x.q.size()), wf(w.q.size());
    for (std::size_t i = 0; i < xf.size(); ++i) xf[i] = fp8_e4m3_to_float(x.q[i]);
    for (std::size_t i = 0; i < wf.size(); ++i) wf[i] = fp8_e4m3_to_float(w.q[i]);
    DenseResult r = reference_matmul_nt(xf, wf, x.rows, w.rows, x.cols);
    for (std::int64_t i = 0; i < r.m; ++i)
        for (std::int64_t j = 0; j < r.n; ++j) {
            const double s = static_cast<double>(x.scales[sz(i)]) * static_cast<double>(w.scales[sz(j)]);
            r.value[sz(i * r.n + j)] *= s;
            r.magnitude[sz(i * r.n + j)] *= s;
        }
    return r;
}

Tolerance fp8_gemm_tolerance(std::int64_t k) {
    Tolerance t = dot_product_tolerance(k, kUnitRoundoffBf16, 0.0, "");
    t.magnitude_relative += 6.103515625e-5;  // 2^-14
    t.source = "fp32 accumulation over K, bf16 output, 2^-14 for Hopper FP8 MMA accumulation (DeepSeek-V3 report §3.3.2)";
    return t;
}

DenseResult bf16_gemm_reference(const std::vector<std::uint16_t>& x, const std::vector<std::uint16_t>& w, std::int64_t m, std::int64_t n,
                                std::int64_t k) {
    check_matrix("bf16_gemm_reference: x", x.size(), m, k);
    check_matrix("bf16_gemm_reference: w", w.size(), n, k);
    std::vector<float> xf(x.size()), wf(w.size());
    for (std::size_t i = 0; i < xf.size(); ++i) xf[i] = bf16_to_float(x[i]);
    for (std::size_t i = 0; i < wf.size(); ++i) wf[i] = bf16_to_float(w[i]);
    return reference_matmul_nt(xf, wf, m, n, k);
}

Tolerance bf16_gemm_tolerance(std::int64_t k) {
    return dot_product_tolerance(k, kUnitRoundoffBf16, 0.0, "fp32 accumulation over K (Higham gamma_K), bf16 output");
}

}  // namespace quantplan::kernels
