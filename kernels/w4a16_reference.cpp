#include "kernels/w4a16_reference.h"

#include <string>

#include "core/base/error.h"

namespace quantplan::kernels {

DenseResult w4a16_gemm_reference(const W4Packed& w, const std::vector<std::uint16_t>& x, std::int64_t m, Half16 act_type) {
    if (m < 1) throw Error("w4a16_gemm_reference: m", "must be positive");
    if (x.size() != static_cast<std::size_t>(m * w.k)) throw Error("w4a16_gemm_reference: x", "size does not match M x K");
    const std::vector<float> dense = dequantize_w4(unpack_w4(w));
    std::vector<float> xf(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) xf[i] = half16_to_float(x[i], act_type);
    return reference_matmul_nt(xf, dense, m, w.n, w.k);
}

Tolerance w4a16_tolerance(std::int64_t k, Half16 act_type) {
    const double u = act_type == Half16::Bf16 ? kUnitRoundoffBf16 : kUnitRoundoffFp16;
    return dot_product_tolerance(k, u, u, "fp32 accumulation over K (Higham gamma_K), dequantized weight and output rounded to the 16-bit format");
}

std::vector<std::uint16_t> w4a16_dequantize_reference(const W4Packed& w, Half16 out_type) {
    const std::vector<float> dense = dequantize_w4(unpack_w4(w));
    std::vector<std::uint16_t> out(dense.size());
    for (std::size_t i = 0; i < dense.size(); ++i) out[i] = float_to_half16(dense[i], out_type);
    return out;
}

std::vector<std::uint16_t> w4a16_permute_reference(const std::vector<std::uint16_t>& x, const std::vector<std::int32_t>& k_perm,
                                                   std::int64_t m, std::int64_t k) {
    if (x.size() != static_cast<std::size_t>(m * k)) throw Error("w4a16_permute_reference: x", "size does not match M x K");
    if (k_perm.size() != static_cast<std::size_t>(k)) throw Error("w4a16_permute_reference: k_perm", "size does not match K");
    std::vector<std::uint16_t> out(x.size());
    for (std::int64_t r = 0; r < m; ++r)
        for (std::int64_t j = 0; j < k; ++j) {
            const std::int32_t src = k_perm[static_cast<std::size_t>(j)];
            if (src < 0 || src >= k) throw Error("w4a16_permute_reference: k_perm", "entry " + std::to_string(src) + " outside 0..K-1");
            out[static_cast<std::size_t>(r * k + j)] = x[static_cast<std::size_t>(r * k + src)];
        }
    return out;
}

}  // namespace quantplan::kernels
